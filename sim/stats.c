/* What the replay adds up to: busy time by class (compute, communication,
 * copies) as unions of intervals, exposed communication (communication not
 * overlapped by compute), idle time, MFU, memory; and per-op times.
 *
 * Unions cost O(m log m) for the m device ops of a rank in the window.
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <string.h>

#include "maya/common.h"

struct iv {
    uint64_t a, b;
};

static int by_start(const void *x, const void *y)
{
    const struct iv *p = x, *q = y;
    return (p->a > q->a) - (p->a < q->a);
}

/* Sort and merge in place; returns the number of disjoint intervals. */
static size_t merge(struct iv *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, by_start);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].a <= v[k].b) {
            if (v[i].b > v[k].b)
                v[k].b = v[i].b;
        } else {
            v[++k] = v[i];
        }
    }
    return k + 1;
}

static double total(const struct iv *v, size_t n)
{
    double t = 0;
    for (size_t i = 0; i < n; i++)
        t += (double)(v[i].b - v[i].a);
    return t;
}

/* Length of the intersection of two merged lists. */
static double overlap(const struct iv *x, size_t nx, const struct iv *y, size_t ny)
{
    double t = 0;
    size_t i = 0, k = 0;
    while (i < nx && k < ny) {
        uint64_t a = MAYA_MAX(x[i].a, y[k].a), b = MAYA_MIN(x[i].b, y[k].b);
        if (b > a)
            t += (double)(b - a);
        if (x[i].b < y[k].b)
            i++;
        else
            k++;
    }
    return t;
}

int sim_busy_in(const struct sim_job *j, const struct sim_rank *r, uint64_t t0, uint64_t t1, struct sim_busy *out)
{
    memset(out, 0, sizeof *out);
    struct iv *cls[3] = { NULL, NULL, NULL }; /* compute, comm, copy */
    size_t n[3] = { 0, 0, 0 }, cap = (size_t)r->nops;
    for (int c = 0; c < 3; c++)
        if (!(cls[c] = malloc(MAYA_MAX(cap, 1) * sizeof *cls[c]))) {
            for (int k = 0; k < c; k++)
                free(cls[k]);
            return maya_error("out of memory adding up busy time");
        }
    for (uint64_t i = 0; i < r->nops; i++) {
        const struct sim_op *o = &r->ops[i];
        const struct sim_time *t = &r->times[i];
        int c = sim_is_compute(o) ? 0 : sim_is_comm(o) ? 1 : o->kind == SK_COPY ? 2 : -1;
        if (c < 0 || t->dev_end <= t->dev_start)
            continue;
        uint64_t a = MAYA_MAX(t->dev_start, t0), b = MAYA_MIN(t->dev_end, t1);
        if (b > a)
            cls[c][n[c]++] = (struct iv){ a, b };
    }
    for (int c = 0; c < 3; c++)
        n[c] = merge(cls[c], n[c]);
    out->compute = total(cls[0], n[0]);
    out->comm = total(cls[1], n[1]);
    out->copy = total(cls[2], n[2]);
    out->exposed_comm = out->comm - overlap(cls[1], n[1], cls[0], n[0]);
    /* all busy time: the union of the three lists */
    struct iv *all = malloc(MAYA_MAX(n[0] + n[1] + n[2], 1) * sizeof *all);
    if (all) {
        memcpy(all, cls[0], n[0] * sizeof *all);
        memcpy(all + n[0], cls[1], n[1] * sizeof *all);
        memcpy(all + n[0] + n[1], cls[2], n[2] * sizeof *all);
        out->any = total(all, merge(all, n[0] + n[1] + n[2]));
        /* under compute or communication: compute + exposed communication */
        out->exposed_copy = MAYA_MAX(out->any - out->compute - out->exposed_comm, 0);
        free(all);
    }
    for (int c = 0; c < 3; c++)
        free(cls[c]);
    (void)j;
    return all ? 0 : maya_error("out of memory adding up busy time");
}

static double peak_flops(const struct maya_gpu_spec *g, int prec)
{
    const struct maya_gpu_perf *p = &g->perf;
    double tf;
    switch (prec) {
    case SP_FP64: tf = p->fp64_tensor_tflops > 0 ? p->fp64_tensor_tflops : p->fp64_tflops; break;
    case SP_FP32: tf = p->fp32_tflops; break;
    case SP_TF32: tf = p->tf32_tflops > 0 ? p->tf32_tflops : p->fp32_tflops; break;
    case SP_FP16: tf = p->fp16_tflops; break;
    case SP_BF16: tf = p->bf16_tflops > 0 ? p->bf16_tflops : p->fp16_tflops; break;
    case SP_FP8: tf = p->fp8_tflops > 0 ? p->fp8_tflops : (p->bf16_tflops > 0 ? p->bf16_tflops : p->fp16_tflops); break;
    case SP_INT8: tf = p->int8_tops; break;
    default: tf = 0;
    }
    return tf * 1e12;
}

int sim_steady_windows(const struct sim_job *j, struct sim_window *w, int max)
{
    int n = 0;
    for (int k = 0; k < j->niter; k++) {
        if (!sim_iteration_steady(j, k))
            continue;
        uint64_t from = k ? j->iter_end[k - 1] : j->iter_t0;
        if (n && w[n - 1].t1 == from && k && sim_iteration_steady(j, k - 1))
            w[n - 1].t1 = j->iter_end[k];
        else if (n < max)
            w[n++] = (struct sim_window){ from, j->iter_end[k] };
    }
    if (!n) { /* no steady iteration: the first, or the whole run */
        w[0] = (struct sim_window){ j->iter_t0, j->niter ? j->iter_end[0] : j->makespan };
        n = 1;
    }
    return n;
}

int sim_picture_window(const struct sim_job *j, uint64_t *w0, uint64_t *w1)
{
    int k = 0;
    while (k < j->niter && !sim_iteration_steady(j, k))
        k++;
    int which;
    if (k < j->niter) {
        *w0 = k ? j->iter_end[k - 1] : j->iter_t0;
        *w1 = j->iter_end[k];
        which = k + 1;
    } else {
        *w0 = j->iter_t0;
        *w1 = j->niter ? j->iter_end[0] : j->makespan;
        which = 1;
    }
    if (*w1 <= *w0)
        *w1 = *w0 + 1;
    return which;
}

/* The program's host work (gaps and call costs) in a rank's steady
 * iterations, ns. */
static double host_work(const struct sim_job *j, const struct sim_rank *r)
{
    double t = 0;
    int any = 0;
    for (int k = 0; k < j->niter && k < r->niter; k++) {
        if (!sim_iteration_steady(j, k))
            continue;
        any = 1;
        for (uint64_t i = r->iter_start[k]; i < r->iter_stop[k]; i++)
            t += (double)r->ops[i].gap_ns + (double)r->ops[i].host_ns;
    }
    if (!any && r->niter)
        for (uint64_t i = r->iter_start[0]; i < r->iter_stop[0]; i++)
            t += (double)r->ops[i].gap_ns + (double)r->ops[i].host_ns;
    return t;
}

void sim_summarize(const struct sim_job *j, struct sim_summary *out)
{
    memset(out, 0, sizeof *out);
    out->nranks = j->nranks;
    out->replayed_ranks = j->replayed_ranks;
    out->fold_note = j->fold_note;
    out->fold_gap_diff = j->fold_gap_diff;
    out->fold_host_calls = j->fold_host_calls;
    out->fold_gaps_only = j->fold_gaps_only;
    out->iterations = j->niter;
    out->iteration_s = sim_steady_iteration_s(j);
    out->first_iteration_s = j->niter ? j->iter_times_s[0] : 0;
    out->makespan_s = (double)j->makespan / 1e9;
    out->mfu = -1;
    out->extrapolated_ops = j->extrapolated;
    out->kernel_launches = j->kernel_launches;
    out->no_code_launches = j->no_code_launches;
    out->sass_unread_launches = j->sass_unread_launches;
    out->steady_iterations = sim_steady_count(j);
    out->warmup_ops = j->warmup_ops;
    out->warmup_emulation_s = j->warmup_emulation_s;
    struct sim_window w[SIM_MAX_WINDOWS];
    int nw = sim_steady_windows(j, w, SIM_MAX_WINDOWS);
    int iters = MAYA_MAX(out->steady_iterations, 1);
    double flops_time = 0, window = 0, counted = 0, devices_folded = 0;
    for (int k = 0; k < nw; k++)
        window += w[k].t1 > w[k].t0 ? (double)(w[k].t1 - w[k].t0) : 0;
    int known_flops = 0;
    double host = 0;
    struct maya_map devices = { 0 };
    /* a replayed rank counts for the ranks folded into it (weight) */
    for (int i = 0; i < j->nranks; i++) {
        const struct sim_rank *r = &j->ranks[i];
        out->peak_memory_bytes = MAYA_MAX(out->peak_memory_bytes, r->peak_bytes);
        out->oom |= r->oom;
        out->unsupported_calls += r->unsupported;
        out->values_not_computed += r->values_not_computed;
        out->ops += SIM_REPLAYED(j, r)->nops;
        out->replayed_ops += r->nops;
        if (r->fold >= 0)
            continue;
        double wt = r->weight ? r->weight : 1;
        uint64_t ndev = devices.count;
        for (uint64_t k = 0; k < r->nops; k++) {
            const struct sim_op *o = &r->ops[k];
            if (o->kind != SK_KERNEL)
                continue;
            maya_map_put(&devices, (uint64_t)i, (uint64_t)(uint16_t)o->device, NULL);
            const struct sim_time *t = &r->times[k];
            if (!o->arg2 || !o->sub || !j->gpu_spec)
                continue;
            int in = 0;
            for (int q = 0; q < nw && !in; q++)
                in = t->dev_start >= w[q].t0 && t->dev_start < w[q].t1;
            double peak = in ? peak_flops(j->gpu_spec, o->sub) : 0;
            if (peak > 0) {
                flops_time += wt * (double)o->arg2 / peak * 1e9;
                known_flops = 1;
            }
        }
        devices_folded += (double)(devices.count - ndev) * (wt - 1);
        if (!r->nops)
            continue;
        int ok = 1;
        for (int q = 0; q < nw && ok; q++) {
            struct sim_busy b;
            if (sim_busy_in(j, r, w[q].t0, w[q].t1, &b) < 0) {
                ok = 0;
                break;
            }
            out->compute_s += wt * b.compute;
            out->comm_s += wt * b.comm;
            out->exposed_comm_s += wt * b.exposed_comm;
            out->copy_s += wt * b.copy;
            out->exposed_copy_s += wt * b.exposed_copy;
            out->idle_s += wt * ((w[q].t1 > w[q].t0 ? (double)(w[q].t1 - w[q].t0) : 0) - b.any);
        }
        if (!ok)
            continue;
        counted += wt;
        host += wt * host_work(j, r);
    }
    double per = counted ? 1e9 * counted * iters : 1;
    out->compute_s /= per;
    out->comm_s /= per;
    out->exposed_comm_s /= per;
    out->copy_s /= per;
    out->exposed_copy_s /= per;
    out->idle_s /= per;
    out->host_work_s = host / per;
    out->breakdown_iteration_s = window / 1e9 / iters;
    /* the host sets the pace when its own work fills most of the iteration */
    out->host_bound = out->breakdown_iteration_s > 0 && out->host_work_s >= 0.8 * out->breakdown_iteration_s;
    if (known_flops && window > 0 && devices.count)
        out->mfu = flops_time / (window * ((double)devices.count + devices_folded));
    maya_map_free(&devices);
    out->events = j->events;
}

uint64_t sim_rank_ops(const struct sim_job *j, int rank)
{
    for (int i = 0; i < j->nranks; i++)
        if (j->ranks[i].rank == rank)
            return SIM_REPLAYED(j, &j->ranks[i])->nops;
    return 0;
}

int sim_op_times(const struct sim_job *j, int rank, uint64_t index, struct sim_op_times *out)
{
    for (int i = 0; i < j->nranks; i++) {
        if (j->ranks[i].rank != rank)
            continue;
        const struct sim_rank *r = SIM_REPLAYED(j, &j->ranks[i]);
        if (index >= r->nops)
            return -1;
        const struct sim_op *o = &r->ops[index];
        const struct sim_time *t = &r->times[index];
        out->host_end = t->host_end;
        out->host_start = t->host_end - o->host_ns;
        out->dev_start = t->dev_start;
        out->dev_end = t->dev_end;
        out->name = sim_name(j, o->name);
        out->stream = o->stream ? (int)j->streams[o->stream - 1].id : 0;
        return 0;
    }
    return -1;
}

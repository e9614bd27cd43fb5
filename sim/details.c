/* The report's details, per steady iteration: each rank's time split into
 * compute, exposed communication, copies alone and idle (exclusive, so the
 * four add up to the iteration); the time on each communicator; the ops
 * that take the most device time. report.json lists them, report.html
 * draws them.
 *
 * Cost: one pass over the ops of every replayed rank, plus the interval
 * unions of sim_busy_in (O(m log m) for a rank's m device ops), and per rank
 * O(its representative's (communicator, name) pairs): a folded rank's
 * figures are its representative's, on its own communicators; memory
 * O(ranks + communicators + distinct op names).
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <string.h>

#include "maya/common.h"
#include "maya/trace_format.h"

struct name_acc {
    double total_ns, max_ns, count;
    int max_rank;
    uint8_t kind;
    uint16_t rec_type;
};

struct comm_acc {
    double total_ns, count;
    int ranks;
    int last_rank;            /* the rank index that last counted in ranks */
    uint32_t top_name;
    double top_ns;
};


static int by_op_time(const void *a, const void *b)
{
    const struct sim_op_use *x = a, *y = b;
    return (x->time_s < y->time_s) - (x->time_s > y->time_s);
}

static int by_comm_time(const void *a, const void *b)
{
    const struct sim_comm_use *x = a, *y = b;
    if (x->time_s != y->time_s)
        return (x->time_s < y->time_s) - (x->time_s > y->time_s);
    return (x->comm > y->comm) - (x->comm < y->comm);
}

/* What one replayed rank's ops give the details, read once for it and the
 * ranks folded into it: its busy time in the windows, its ops' time by name
 * (added for all of them: weight), its transfers' time by communicator (its
 * own) and name, in order of first use. */
struct xfer_sum {
    uint32_t comm, name;
    uint64_t ns, count;
};

struct replayed {
    int done, ok;
    struct sim_busy b;
    struct xfer_sum *xfers;
    uint32_t nxfers;
};

static int read_replayed(const struct sim_job *j, const struct sim_rank *r, const struct sim_window *w, int nw,
                         struct name_acc *names, struct replayed *p)
{
    p->done = 1;
    p->ok = r->nops > 0;
    for (int q = 0; q < nw && p->ok; q++) {
        struct sim_busy one;
        p->ok = sim_busy_in(j, r, w[q].t0, w[q].t1, &one) == 0;
        p->b.compute += one.compute;
        p->b.exposed_comm += one.exposed_comm;
        p->b.any += one.any;
    }
    double weight = r->weight ? r->weight : 1;
    struct maya_map index = { 0 }; /* (comm, name) -> xfers[] index + 1 */
    uint64_t cap = 0;
    for (uint64_t k = 0; k < r->nops; k++) {
        const struct sim_op *o = &r->ops[k];
        const struct sim_time *t = &r->times[k];
        if (!sim_device_work(o) || t->dev_end <= t->dev_start)
            continue;
        int in = 0;
        for (int q = 0; q < nw && !in; q++)
            in = t->dev_start >= w[q].t0 && t->dev_start < w[q].t1;
        if (!in)
            continue;
        uint64_t ns = t->dev_end - t->dev_start;
        if (o->name && o->name <= j->nnames) {
            struct name_acc *a = &names[o->name];
            if (a->count == 0) {
                a->kind = o->kind;
                a->rec_type = o->rec_type;
            }
            a->total_ns += weight * (double)ns;
            a->count += weight;
            if ((double)ns > a->max_ns) { /* the lowest rank of those it stands for: itself */
                a->max_ns = (double)ns;
                a->max_rank = r->rank;
            }
        }
        if (o->kind != SK_COLL && o->kind != SK_P2P)
            continue;
        int created;
        uint64_t *v = maya_map_put(&index, o->arg, o->name, &created);
        if (!v || (created && SIM_GROW(p->xfers, cap, (uint64_t)p->nxfers + 1) < 0)) {
            maya_map_free(&index);
            return -1;
        }
        if (created) {
            p->xfers[p->nxfers] = (struct xfer_sum){ o->arg, o->name, 0, 0 };
            *v = ++p->nxfers;
        }
        p->xfers[*v - 1].ns += ns;
        p->xfers[*v - 1].count++;
    }
    maya_map_free(&index);
    return 0;
}

int sim_details_build(const struct sim_job *j, struct sim_details *out)
{
    memset(out, 0, sizeof *out);
    /* the steady iterations, as the summary takes them: runs of them,
     * partial iterations left out */
    struct sim_window w[SIM_MAX_WINDOWS];
    int nw = sim_steady_windows(j, w, SIM_MAX_WINDOWS);
    int iters = MAYA_MAX(sim_steady_count(j), 1);
    out->iters = iters;
    double window = 0;
    for (int q = 0; q < nw; q++)
        window += w[q].t1 > w[q].t0 ? (double)(w[q].t1 - w[q].t0) : 0;
    out->iteration_s = window / 1e9 / iters;
    out->split = calloc((size_t)MAYA_MAX(j->nranks, 1), sizeof *out->split);
    struct name_acc *names = calloc((size_t)j->nnames + 1, sizeof *names);
    struct comm_acc *comms = calloc((size_t)MAYA_MAX(j->ncomms, 1), sizeof *comms);
    /* the most expensive call on each communicator needs a sum per (comm,
     * name): a map keeps it O(calls) */
    struct maya_map by_comm_name = { 0 }; /* (comm, name) -> ns spent */
    if (!out->split || !names || !comms) {
        free(names);
        free(comms);
        sim_details_free(out);
        return maya_error("out of memory writing the report's details");
    }
    for (uint32_t c = 0; c < j->ncomms; c++)
        comms[c].last_rank = -1;
    /* each replayed rank's ops are read once: its split, its ops' time by
     * name (weighted by the ranks it stands for), and its transfers' time
     * by (communicator, name), which each rank it stands for adds on its
     * own communicators */
    struct replayed *rep = calloc((size_t)MAYA_MAX(j->nranks, 1), sizeof *rep);
    int counted = 0, rc = rep ? 0 : -1;
    for (int i = 0; i < j->nranks && rc == 0; i++) {
        /* a folded rank (a replica not replayed) has its representative's
         * ops and times, on its own communicators (comm_map) */
        const struct sim_rank *self = &j->ranks[i], *r = SIM_REPLAYED(j, self);
        struct replayed *p = &rep[r - j->ranks];
        if (!p->done && (rc = read_replayed(j, r, w, nw, names, p)) < 0)
            break;
        if (p->ok) {
            double per = 1e9 * iters;
            struct sim_rank_split *sp = &out->split[i];
            sp->compute_s = p->b.compute / per;
            sp->comm_s = p->b.exposed_comm / per;
            /* what the union holds beyond compute and exposed communication
             * is copies running alone */
            sp->copy_s = MAYA_MAX(p->b.any - p->b.compute - p->b.exposed_comm, 0.0) / per;
            sp->idle_s = MAYA_MAX(window - p->b.any, 0.0) / per;
            counted++;
        } else {
            out->split[i].idle_s = out->iteration_s;
        }
        for (uint32_t k = 0; k < p->nxfers; k++) {
            const struct xfer_sum *x = &p->xfers[k];
            uint32_t comm = x->comm;
            for (uint32_t q = 0; self != r && q < self->ncomm_map; q++)
                if (self->comm_map[q].theirs == x->comm) {
                    comm = self->comm_map[q].mine;
                    break;
                }
            if (comm >= j->ncomms)
                continue;
            struct comm_acc *c = &comms[comm];
            c->total_ns += x->ns;
            c->count += x->count;
            if (c->last_rank != i) {
                c->last_rank = i;
                c->ranks++;
            }
            uint64_t *v = maya_map_put(&by_comm_name, comm, x->name, NULL);
            if (!v) {
                rc = -1;
                break;
            }
            *v += x->ns;
            if ((double)*v > c->top_ns) {
                c->top_ns = (double)*v;
                c->top_name = x->name;
            }
        }
    }
    for (int i = 0; rep && i < j->nranks; i++)
        free(rep[i].xfers);
    free(rep);
    if (rc < 0) {
        free(names);
        free(comms);
        maya_map_free(&by_comm_name);
        sim_details_free(out);
        return maya_error("out of memory writing the report's details");
    }
    double per_rank = 1e9 * iters * MAYA_MAX(counted, 1);
    for (uint32_t n = 1; n <= j->nnames; n++) {
        const struct name_acc *a = &names[n];
        if (a->count == 0)
            continue;
        struct sim_op_use u = { n, a->kind, a->rec_type, a->count / ((double)iters * MAYA_MAX(counted, 1)),
                                a->total_ns / per_rank, a->max_ns / 1e9, a->max_rank };
        /* keep the SIM_TOP_OPS with the most time: insertion into a sorted
         * array of 20, O(names x 20) */
        if (out->nops < SIM_TOP_OPS)
            out->ops[out->nops++] = u;
        else if (u.time_s > out->ops[SIM_TOP_OPS - 1].time_s)
            out->ops[SIM_TOP_OPS - 1] = u;
        else
            continue;
        qsort(out->ops, (size_t)out->nops, sizeof *out->ops, by_op_time);
    }
    uint32_t nc = 0;
    for (uint32_t c = 0; c < j->ncomms; c++)
        nc += comms[c].count > 0;
    if (nc && !(out->comms = calloc(nc, sizeof *out->comms))) {
        free(names);
        free(comms);
        maya_map_free(&by_comm_name);
        sim_details_free(out);
        return maya_error("out of memory writing the report's details");
    }
    for (uint32_t c = 0; c < j->ncomms; c++) {
        const struct comm_acc *a = &comms[c];
        if (a->count == 0)
            continue;
        double per = (double)iters * a->ranks;
        out->comms[out->ncomms++] = (struct sim_comm_use){ c, a->ranks, a->count / per,
                                                            a->total_ns / 1e9 / per, a->top_name };
    }
    qsort(out->comms, out->ncomms, sizeof *out->comms, by_comm_time);
    free(names);
    free(comms);
    maya_map_free(&by_comm_name);
    return 0;
}

const char *sim_op_use_kind(const struct sim_op_use *u)
{
    int rec_type = u->rec_type;
    switch (u->kind) {
    case SK_KERNEL:
        return rec_type == MAYA_REC_GEMM ? "GEMM" : rec_type == MAYA_REC_DNN ? "cuDNN"
               : rec_type == MAYA_REC_MEMSET ? "memset" : rec_type == MAYA_REC_MEMCPY ? "copy on the device"
               : "kernel";
    case SK_COPY: return "copy";
    case SK_COLL: return "collective";
    case SK_P2P: return "send/recv";
    case SK_HOST_FUNC: return "host function";
    default: return "other";
    }
}

void sim_details_free(struct sim_details *d)
{
    free(d->split);
    free(d->comms);
    memset(d, 0, sizeof *d);
}

/* The GPUs the job drives: the distinct (rank, device) pairs whose streams
 * ran device work (O(ops)), and at least the largest communicator's members (one
 * process may drive several GPUs: nccl-tests -g 8, ncclCommInitAll). */
int sim_job_gpus(const struct sim_job *j)
{
    struct maya_map seen = { 0 };
    int most = 0;
    for (int i = 0; i < j->nranks; i++) {
        /* a folded rank drives the GPUs its representative does */
        const struct sim_rank *r = SIM_REPLAYED(j, &j->ranks[i]);
        for (uint64_t k = 0; k < r->nops; k++) {
            const struct sim_op *o = &r->ops[k];
            if (!o->stream || !sim_device_work(o))
                continue;
            const struct sim_stream *st = &j->streams[o->stream - 1];
            if (!maya_map_put(&seen, (uint64_t)i, (uint64_t)(uint32_t)st->device, NULL)) {
                maya_map_free(&seen);
                return maya_error("out of memory counting the job's GPUs");
            }
        }
    }
    most = (int)seen.count;
    maya_map_free(&seen);
    for (uint32_t c = 0; c < j->ncomms; c++)
        most = MAYA_MAX(most, j->comms[c].nranks);
    return most;
}

/* maya profile --compare PROFILE_DIR RUN_DIR: how good was maya's prediction
 * of a program (RUN_DIR, maya run on emulated GPUs) against a profile of the
 * same program on real GPUs (PROFILE_DIR, maya profile)?
 *
 * Three replays, each loading a job with a duration for every op:
 *   A  RUN_DIR with the run's own estimator: the prediction
 *   B  RUN_DIR with the profile's measured durations (oracle mode,
 *      est_config.profile_dir): op i of B is op i of A, so each predicted
 *      op meets its measured twin (matched by rank, name and occurrence);
 *      its iteration time separates the simulator's error from the
 *      estimator's
 *   C  PROFILE_DIR with its own durations: where its iterations are
 * The measured iteration time is read off the profile's real host clock:
 * iteration k of a rank ends when the last of its calls returned (a
 * training step that synchronises, loss.item() say, returns when its device
 * work is done); the job's iteration k lasts from the end of k-1 to the
 * end of k, the longest over the ranks; steady state is the median after
 * the first, as the report's.
 */
#define _GNU_SOURCE
#include "profile.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "pipeline.h"
#include "maya/collator.h"
#include "maya/common.h"
#include "maya/estimator.h"
#include "maya/hwspec.h"
#include "maya/json.h"
#include "maya/map.h"
#include "maya/sim.h"
#include "maya/trace_reader.h"

struct op {
    int rank;
    uint32_t name;               /* profile_names id */
    int family;                  /* enum est_family */
    int model;                   /* enum est_model that answered */
    int device;                  /* device work that ran (launch, copy, memset, GEMM, cuDNN, NCCL) */
    uint64_t dev_ns;
    uint64_t t_enter, t_exit;    /* the record's host times */
};

struct capture {
    struct estimator *est;
    struct profile_names *names;
    struct op *ops;
    size_t n, cap;
};

static int is_device(const struct maya_rec_hdr *h)
{
    switch (h->type) {
    case MAYA_REC_LAUNCH: case MAYA_REC_MEMCPY: case MAYA_REC_MEMSET: case MAYA_REC_GEMM: case MAYA_REC_DNN:
    case MAYA_REC_COLL:
        return maya_rec_call(h)->result == 0 && !(h->flags & (MAYA_F_CAPTURING | MAYA_F_UNSUPPORTED));
    default:
        return 0;
    }
}

/* The simulator's estimate callback: the estimator's answer, kept. */
static int capture(void *ctx, const struct est_op *op, struct est_result *out)
{
    struct capture *c = ctx;
    if (est_estimate(c->est, op, out) < 0)
        return -1;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4096;
        struct op *n = realloc(c->ops, cap * sizeof *n);
        if (!n)
            return maya_error("out of memory");
        c->ops = n;
        c->cap = cap;
    }
    const struct maya_call *call = maya_rec_call(op->rec);
    struct op *o = &c->ops[c->n];
    o->rank = op->rank;
    o->name = profile_name_id(c->names, op->kernel_name ? op->kernel_name : op->api ? op->api : "?");
    if (!o->name)
        return maya_error("out of memory");
    o->family = out->family;
    o->model = out->model;
    o->device = is_device(op->rec);
    o->dev_ns = out->device_ns;
    o->t_enter = call->t_enter_ns;
    o->t_exit = call->t_exit_ns;
    c->n++;
    return 0;
}

/* One replay of dir's job with the given models (profile: measured
 * durations from that profile directory). job_out: kept for the caller. */
static int replay(const char *dir, const struct maya_gpu_spec *gpu, const struct maya_cluster_spec *cluster,
                  const enum est_model model[EST_NFAMILIES], const char *oracle, const char *profile,
                  const char *marker, struct capture *c, struct sim_job **job_out)
{
    char job[PATH_MAX + 32];
    snprintf(job, sizeof job, "%s/job.mtrace", dir);
    struct est_config ec = { .gpu = gpu, .cluster = cluster, .oracle_path = oracle, .profile_dir = profile };
    memcpy(ec.model, model, sizeof ec.model);
    if (est_create(&ec, &c->est) < 0)
        return -1;
    struct sim_config sc = { .estimate = capture, .estimate_ctx = c, .iteration_marker = marker, .gpu = gpu, .flops = est_op_flops };
    struct sim_job *j = NULL;
    int rc = sim_load(job, &sc, &j);
    if (rc == 0)
        rc = sim_run(j);
    est_destroy(c->est);
    c->est = NULL;
    if (rc < 0) {
        sim_free(j);
        return -1;
    }
    *job_out = j;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of the iterations after the first (the first if it is alone). */
static double steady(const double *t, int n)
{
    if (n <= 0)
        return 0;
    if (n == 1)
        return t[0];
    double *v = malloc((size_t)(n - 1) * sizeof *v);
    if (!v)
        return t[1];
    memcpy(v, t + 1, (size_t)(n - 1) * sizeof *v);
    qsort(v, (size_t)(n - 1), sizeof *v, cmp_double);
    int m = n - 1;
    double r = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
    free(v);
    return r;
}

/* The profile's iterations on its real host clock (see the top). t[] gets
 * the job's iteration times in seconds; returns how many, or -1. */
static int measured_iterations(const struct sim_job *j, const struct capture *c, double **t)
{
    int niter;
    sim_iteration_times(j, &niter);
    *t = calloc((size_t)MAYA_MAX(niter, 1), sizeof **t);
    if (!*t)
        return maya_error("out of memory");
    /* ops of each rank are contiguous in the capture, in the rank's order */
    size_t start = 0;
    while (start < c->n) {
        int rank = c->ops[start].rank;
        size_t end = start;
        while (end < c->n && c->ops[end].rank == rank)
            end++;
        uint64_t prev = UINT64_MAX;
        for (int k = 0; k < niter; k++) {
            uint64_t first, stop, done = 0;
            if (sim_iteration_ops(j, rank, k, &first, &stop) < 0 || stop > end - start || first >= stop)
                break;
            for (uint64_t i = first; i < stop; i++)
                done = MAYA_MAX(done, c->ops[start + i].t_exit);
            if (prev == UINT64_MAX)
                prev = c->ops[start + first].t_enter;
            double s = done > prev ? (double)(done - prev) / 1e9 : 0;
            (*t)[k] = MAYA_MAX((*t)[k], s);
            prev = done;
        }
        start = end;
    }
    return niter;
}

/* ---- per-op comparison ---- */

struct fam {
    uint64_t n;
    double meas_ns, pred_ns, ape;  /* sums; ape: of |pred - meas| / meas */
};

struct by_name {
    uint32_t name;
    uint64_t n;
    double meas_ns, pred_ns;
};

static int by_measured(const void *a, const void *b)
{
    const struct by_name *x = a, *y = b;
    return x->meas_ns < y->meas_ns ? 1 : x->meas_ns > y->meas_ns ? -1 : (x->name > y->name) - (x->name < y->name);
}

static double pct(double pred, double meas)
{
    return meas > 0 ? 100.0 * (pred - meas) / meas : NAN;
}

struct result {
    const char *profile_dir, *run_dir, *run_gpu, *profile_gpu, *estimator;
    double meas_s, pred_s, pred_meas_s, replay_s;
    int meas_iters, pred_iters;
    uint64_t device_ops, matched;
    struct fam fam[EST_NFAMILIES];
    struct by_name *names;
    size_t nnames;
    const struct profile_names *table;
};

static void write_text(FILE *fp, const struct result *r, size_t top, size_t name_width)
{
    fprintf(fp, "maya profile --compare: the prediction %s against the profile %s\n", r->run_dir, r->profile_dir);
    fprintf(fp, "GPU: predicted for %s (estimator %s), measured on %s\n\n", r->run_gpu, r->estimator,
            r->profile_gpu);
    fprintf(fp, "iteration time (steady state: the median after the first)\n");
    fprintf(fp, "  measured on the GPU (host clock)          %12.3f ms  (%d iterations)\n", r->meas_s * 1e3,
            r->meas_iters);
    fprintf(fp, "  predicted                                 %12.3f ms  error %+.1f%%  (%d iterations)\n",
            r->pred_s * 1e3, pct(r->pred_s, r->meas_s), r->pred_iters);
    fprintf(fp, "  predicted with the measured op durations  %12.3f ms  error %+.1f%%\n\n", r->pred_meas_s * 1e3,
            pct(r->pred_meas_s, r->meas_s));
    fprintf(fp, "device time per op, each predicted op matched with the same op of the profile (by rank,\n"
                "name and occurrence): %" PRIu64 " of %" PRIu64 " device ops matched\n",
            r->matched, r->device_ops);
    fprintf(fp, "  %-14s %8s %14s %14s %9s %9s\n", "family", "ops", "measured_ms", "predicted_ms", "error_pct",
            "mape_pct");
    for (int f = 0; f < EST_NFAMILIES; f++) {
        const struct fam *x = &r->fam[f];
        if (!x->n)
            continue;
        fprintf(fp, "  %-14s %8" PRIu64 " %14.3f %14.3f %+9.1f %9.1f\n", est_family_name((enum est_family)f), x->n,
                x->meas_ns / 1e6, x->pred_ns / 1e6, pct(x->pred_ns, x->meas_ns), 100 * x->ape / (double)x->n);
    }
    fprintf(fp, "\nthe ops that took the most measured time\n");
    fprintf(fp, "  %8s %14s %14s %9s  %s\n", "count", "measured_us", "predicted_us", "error_pct", "name");
    for (size_t i = 0; i < r->nnames && i < top; i++) {
        const struct by_name *b = &r->names[i];
        fprintf(fp, "  %8" PRIu64 " %14.2f %14.2f %+9.1f  ", b->n, b->meas_ns / 1e3 / (double)b->n,
                b->pred_ns / 1e3 / (double)b->n, pct(b->pred_ns, b->meas_ns));
        profile_print_name(fp, profile_name(r->table, b->name), name_width);
    }
}

static void write_json(FILE *fp, const struct result *r)
{
    struct json j;
    json_begin(&j, fp, 1);
    json_obj(&j, NULL);
    json_str(&j, "profile_dir", r->profile_dir);
    json_str(&j, "run_dir", r->run_dir);
    json_str(&j, "run_gpu", r->run_gpu);
    json_str(&j, "profile_gpu", r->profile_gpu);
    json_str(&j, "estimator", r->estimator);
    json_num(&j, "measured_iteration_time_s", r->meas_s);
    json_int(&j, "measured_iterations", r->meas_iters);
    json_num(&j, "predicted_iteration_time_s", r->pred_s);
    json_int(&j, "predicted_iterations", r->pred_iters);
    json_num(&j, "iteration_time_error_pct", pct(r->pred_s, r->meas_s));
    json_num(&j, "predicted_with_measured_durations_s", r->pred_meas_s);
    json_num(&j, "replayed_profile_iteration_time_s", r->replay_s);
    json_uint(&j, "device_ops", r->device_ops);
    json_uint(&j, "matched_ops", r->matched);
    json_obj(&j, "families");
    for (int f = 0; f < EST_NFAMILIES; f++) {
        const struct fam *x = &r->fam[f];
        if (!x->n)
            continue;
        json_obj(&j, est_family_name((enum est_family)f));
        json_uint(&j, "ops", x->n);
        json_num(&j, "measured_s", x->meas_ns / 1e9);
        json_num(&j, "predicted_s", x->pred_ns / 1e9);
        json_num(&j, "mape_pct", 100 * x->ape / (double)x->n);
        json_end_obj(&j);
    }
    json_end_obj(&j);
    json_arr(&j, "ops");
    for (size_t i = 0; i < r->nnames; i++) {
        const struct by_name *b = &r->names[i];
        json_obj(&j, NULL);
        json_str(&j, "name", profile_name(r->table, b->name));
        json_uint(&j, "count", b->n);
        json_num(&j, "measured_s", b->meas_ns / 1e9);
        json_num(&j, "predicted_s", b->pred_ns / 1e9);
        json_end_obj(&j);
    }
    json_end_arr(&j);
    json_end_obj(&j);
}

/* Per family and per name, from the two replays of the run (A: predicted,
 * B: with measured durations; op i is the same op in both). */
static int tally(struct result *r, const struct capture *a, const struct capture *b)
{
    if (a->n != b->n)
        return maya_error("the two replays of %s saw %zu and %zu ops", r->run_dir, a->n, b->n);
    r->names = calloc(MAYA_MAX(a->names->n, 1), sizeof *r->names);
    if (!r->names)
        return maya_error("out of memory");
    for (size_t i = 0; i < a->n; i++) {
        const struct op *p = &a->ops[i], *m = &b->ops[i];
        if (!p->device)
            continue;
        r->device_ops++;
        if (m->model != EST_ORACLE || m->dev_ns == 0 || p->family < 0 || p->family >= EST_NFAMILIES)
            continue;
        r->matched++;
        struct fam *x = &r->fam[p->family];
        x->n++;
        x->meas_ns += (double)m->dev_ns;
        x->pred_ns += (double)p->dev_ns;
        x->ape += fabs((double)p->dev_ns - (double)m->dev_ns) / (double)m->dev_ns;
        struct by_name *bn = &r->names[p->name - 1];
        bn->name = p->name;
        bn->n++;
        bn->meas_ns += (double)m->dev_ns;
        bn->pred_ns += (double)p->dev_ns;
    }
    size_t k = 0;
    for (size_t i = 0; i < a->names->n; i++)
        if (r->names[i].n)
            r->names[k++] = r->names[i];
    r->nnames = k;
    qsort(r->names, k, sizeof *r->names, by_measured);
    return 0;
}

static int write_results(const struct result *r, int quiet)
{
    char path[PATH_MAX + 32];
    struct maya_atomic_file af;
    snprintf(path, sizeof path, "%s/compare.txt", r->run_dir);
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    write_text(af.fp, r, 30, 0);
    if (maya_atomic_commit(&af) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/compare.json", r->run_dir);
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    write_json(af.fp, r);
    if (maya_atomic_commit(&af) < 0)
        return -1;
    if (!quiet) {
        write_text(stderr, r, 8, PROFILE_NAME_WIDTH);
        fprintf(stderr, "maya profile: comparison in %s/compare.txt and compare.json\n", r->run_dir);
    }
    return 0;
}

static int read_desc(const char *dir, struct maya_run_desc *d)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, MAYA_RUN_DESC_FILE);
    return maya_run_desc_read(path, d);
}

static int collate(const char *dir)
{
    char traces[PATH_MAX + 32], job[PATH_MAX + 32];
    snprintf(traces, sizeof traces, "%s/traces", dir);
    snprintf(job, sizeof job, "%s/job.mtrace", dir);
    struct col_summary cs;
    return col_collate(traces, job, 1, &cs);
}

int profile_compare(const char *profile_dir, const char *run_dir, const char *marker, int quiet)
{
    struct maya_run_desc pd, rd;
    if (read_desc(profile_dir, &pd) < 0)
        return -1;
    if (read_desc(run_dir, &rd) < 0) {
        maya_run_desc_free(&pd);
        return -1;
    }
    struct maya_hwspecs hw;
    struct profile_names names = { 0 };
    struct capture a = { .names = &names }, b = { .names = &names }, c = { .names = &names };
    struct sim_job *ja = NULL, *jb = NULL, *jc = NULL;
    double *meas = NULL;
    int rc = -1, have_hw = 0;
    if (strcmp(pd.launcher, "maya-profile")) {
        maya_error("%s was made by %s, not by maya profile: expected a profile directory first", profile_dir,
                   pd.launcher);
        goto out;
    }
    if (cli_load_hwspecs(&hw) < 0)
        goto out;
    have_hw = 1;
    const struct maya_gpu_spec *gpu = maya_hwspecs_find_gpu(&hw, rd.gpu), *pgpu = maya_hwspecs_find_gpu(&hw, pd.gpu);
    struct maya_cluster_spec cl, pcl;
    if (!gpu || !pgpu) {
        maya_error("GPU \"%s\" is not known (maya hwspecs list)", gpu ? pd.gpu : rd.gpu);
        goto out;
    }
    if (strcmp(gpu->key, pgpu->key))
        maya_warn("the prediction is for %s, the profile was measured on %s: the comparison says little",
                  gpu->key, pgpu->key);
    if (pipeline_cluster(&hw, gpu, rd.gpu_count, rd.cluster, run_dir, &cl) < 0 ||
        pipeline_cluster(&hw, pgpu, pd.gpu_count, pd.cluster, profile_dir, &pcl) < 0)
        goto out;
    if (collate(profile_dir) < 0 || collate(run_dir) < 0)
        goto out;
    if (!marker && rd.iteration_marker[0])
        marker = rd.iteration_marker;
    enum est_model run_model[EST_NFAMILIES], oracle[EST_NFAMILIES];
    if (pipeline_models(rd.estimator, rd.oracle[0] != 0, run_model) < 0 || pipeline_models("oracle", 1, oracle) < 0)
        goto out;
    if (replay(run_dir, gpu, &cl, run_model, rd.oracle[0] ? rd.oracle : NULL, NULL, marker, &a, &ja) < 0 ||
        replay(run_dir, gpu, &cl, oracle, NULL, profile_dir, marker, &b, &jb) < 0 ||
        replay(profile_dir, pgpu, &pcl, oracle, NULL, profile_dir, marker, &c, &jc) < 0)
        goto out;
    struct result r = { .profile_dir = profile_dir, .run_dir = run_dir, .run_gpu = gpu->key,
                        .profile_gpu = pgpu->key, .estimator = rd.estimator[0] ? rd.estimator
                                                               : rd.oracle[0] ? "oracle" : "learned",
                        .table = &names };
    struct sim_summary sa, sb, sc;
    sim_summarize(ja, &sa);
    sim_summarize(jb, &sb);
    sim_summarize(jc, &sc);
    r.pred_s = sa.iteration_s;
    r.pred_iters = sa.iterations;
    r.pred_meas_s = sb.iteration_s;
    r.replay_s = sc.iteration_s;
    if ((r.meas_iters = measured_iterations(jc, &c, &meas)) < 0)
        goto out;
    r.meas_s = steady(meas, r.meas_iters);
    if (tally(&r, &a, &b) < 0)
        goto out;
    rc = write_results(&r, quiet);
    free(r.names);
out:
    free(meas);
    sim_free(ja);
    sim_free(jb);
    sim_free(jc);
    free(a.ops);
    free(b.ops);
    free(c.ops);
    profile_names_free(&names);
    if (have_hw)
        maya_hwspecs_free(&hw);
    maya_run_desc_free(&pd);
    maya_run_desc_free(&rd);
    return rc;
}

int profile_predict(const char *run_dir, struct profile_pred *out)
{
    memset(out, 0, sizeof *out);
    struct maya_run_desc rd;
    if (read_desc(run_dir, &rd) < 0)
        return -1;
    struct maya_hwspecs hw;
    struct capture a = { .names = &out->names };
    struct sim_job *ja = NULL;
    int rc = -1;
    if (cli_load_hwspecs(&hw) < 0) {
        maya_run_desc_free(&rd);
        return -1;
    }
    const struct maya_gpu_spec *gpu = maya_hwspecs_find_gpu(&hw, rd.gpu);
    struct maya_cluster_spec cl;
    enum est_model model[EST_NFAMILIES];
    if (!gpu)
        maya_error("GPU \"%s\" is not known (maya hwspecs list)", rd.gpu);
    else if (pipeline_cluster(&hw, gpu, rd.gpu_count, rd.cluster, run_dir, &cl) == 0 && collate(run_dir) == 0 &&
             pipeline_models(rd.estimator, rd.oracle[0] != 0, model) == 0 &&
             replay(run_dir, gpu, &cl, model, rd.oracle[0] ? rd.oracle : NULL, NULL,
                    rd.iteration_marker[0] ? rd.iteration_marker : NULL, &a, &ja) == 0)
        rc = 0;
    if (rc == 0 && !(out->ops = calloc(MAYA_MAX(a.n, 1), sizeof *out->ops)))
        rc = maya_error("out of memory");
    for (size_t i = 0; rc == 0 && i < a.n; i++)
        if (a.ops[i].device)
            out->ops[out->n++] = (struct profile_pred_op){ a.ops[i].rank, profile_name(&out->names, a.ops[i].name),
                                                           a.ops[i].family, a.ops[i].dev_ns };
    sim_free(ja);
    free(a.ops);
    maya_hwspecs_free(&hw);
    maya_run_desc_free(&rd);
    return rc;
}

void profile_pred_free(struct profile_pred *p)
{
    free(p->ops);
    profile_names_free(&p->names);
    memset(p, 0, sizeof *p);
}

/* Post-processing at scale: GPT-3-shaped jobs (bench/gpt_traces.h) of 1,024,
 * 4,096 and 16,384 ranks, from their rank traces to report.json, phase by
 * phase, on one core.
 *
 *   1k: TP8 PP8 DP16    4k: TP8 PP8 DP64    16k: GPT-3 175B, TP8 PP16 DP128
 *   (96 layers, 8 micro-batches, 1F1B, 6 data-parallel buckets per layer,
 *   one iteration, H100s in nodes of 8)
 *
 * Each phase runs in a child process of its own, timed in that child's CPU
 * time (user + system: what one core spent on it, whatever else the machine
 * is doing), its peak resident memory its own:
 *   scale_<N>_gen_s            writing the rank traces (the generator)
 *   scale_<N>_collate_s        maya's collator: rank traces into the job trace
 *   scale_<N>_collate_rss_bytes
 *   scale_<N>_load_s           reading the job trace, estimating every op
 *                              (the default learned models, as maya report)
 *   scale_<N>_replay_s         the replay
 *   scale_<N>_report_s         report.txt, report.json, timeline.json/svg
 *   scale_<N>_peak_rss_bytes   load + replay + report
 *   scale_<N>_total_s          collate + load + replay + report
 *   scale_<N>_reuse_check_s    what a later maya report spends instead of
 *                              collating: the check that the job trace's
 *                              traces are unchanged (src/job_reuse.c)
 *   scale_<N>_rereport_s       reuse check + load + replay + report
 * each with the replay folded (the default) and, as *_nofold_*, without
 * folding (1k and 4k only: unfolded, 16k replays every copy of the job), and
 *   scale_<N>_ranks, _ops (simulated ops), _replayed_ranks (after folding),
 *   _iteration_s (the prediction: folded and unfolded must agree).
 *
 * MAYA_SCALE_BENCH=1k,4k picks sizes (default all three);
 * MAYA_SCALE_BENCH_NOFOLD=1 replays 16k unfolded too (minutes, ~5 GB).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_child.h"
#include "gpt_traces.h"
#include "job_reuse.h"
#include "maya/collator.h"
#include "maya/common.h"
#include "maya/estimator.h"
#include "maya/hwspec.h"
#include "maya/sim.h"

struct phase {
    double cpu_s[4];            /* the child's phases, in its CPU time */
    long rss_kb;
    uint64_t ops;
    int replayed_ranks;
    double iteration_s;
};

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static long rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int estimate(void *ctx, const struct est_op *op, struct est_result *out)
{
    return est_estimate(ctx, op, out);
}

/* Load, replay and report the job trace in dir (fold or not). */
static int simulate(const char *dir, int ranks, int fold, struct phase *ph)
{
    struct maya_hwspecs hw = { 0 };
    const char *top = getenv("MAYA_TOP");
    char path[4200], models[4200];
    snprintf(path, sizeof path, "%s/hwspecs", top ? top : ".");
    snprintf(models, sizeof models, "%s/build/share/maya/models", top ? top : ".");
    if (maya_hwspecs_load_dir(path, &hw) < 0)
        return -1;
    const struct maya_gpu_spec *gpu = maya_hwspecs_find_gpu(&hw, "H100-SXM");
    const struct maya_cluster_spec *dgx = maya_hwspecs_find_cluster(&hw, "dgx-h100");
    if (!gpu || !dgx)
        return maya_error("no H100-SXM or dgx-h100 in %s/hwspecs", top ? top : ".");
    struct maya_cluster_spec cluster = *dgx;
    cluster.nodes = ranks / MAYA_MAX(cluster.gpus_per_node, 1);
    const struct maya_cluster_spec *cl = &cluster;
    struct est_config ec = { .gpu = gpu, .cluster = cl, .models_dir = models };
    for (int f = 0; f < EST_NFAMILIES; f++)
        ec.model[f] = EST_LEARNED;
    struct estimator *est;
    if (est_create(&ec, &est) < 0)
        return -1;
    struct sim_config sc = { .estimate = estimate, .estimate_ctx = est, .gpu = gpu, .flops = est_op_flops,
                             .iteration_marker = GPT_STEP_MARKER, .no_fold = !fold,
                             .estimate_by_content = 1, .cluster = cl };
    struct sim_job *j;
    snprintf(path, sizeof path, "%s/job.mtrace", dir);
    double t0 = cpu_s();
    if (sim_load(path, &sc, &j) < 0)
        return -1;
    double t1 = cpu_s();
    if (sim_run(j) < 0)
        return -1;
    double t2 = cpu_s();
    struct sim_report_info info = { .gpu = gpu, .cluster = cl, .estimator = "learned",
                                    .timeline = SIM_TIMELINE_BOUNDED };
    snprintf(path, sizeof path, "%s/out-%s", dir, fold ? "fold" : "nofold");
    if (mkdir(path, 0755) < 0 || sim_report(j, &info, path) < 0)
        return -1;
    double t3 = cpu_s();
    struct sim_summary s;
    sim_summarize(j, &s);
    ph->cpu_s[0] = t1 - t0;
    ph->cpu_s[1] = t2 - t1;
    ph->cpu_s[2] = t3 - t2;
    ph->ops = s.ops;
    ph->replayed_ranks = s.replayed_ranks;
    ph->iteration_s = s.iteration_s;
    sim_free(j);
    est_destroy(est);
    maya_hwspecs_free(&hw);
    return 0;
}

enum { P_GEN, P_COLLATE, P_REUSE, P_SIM_FOLD, P_SIM_NOFOLD };

struct phase_arg {
    int what;
    const struct gpt_shape *g;
    const char *dir;
};

/* One phase (in a child process: bench_in_child). */
static int phase_child(void *arg, void *out)
{
    const struct phase_arg *a = arg;
    struct phase *ph = out;
    char traces[4200], job[4200];
    snprintf(traces, sizeof traces, "%s/traces", a->dir);
    snprintf(job, sizeof job, "%s/job.mtrace", a->dir);
    int rc;
    double t0 = cpu_s();
    if (a->what == P_GEN) {
        rc = mkdir(traces, 0755) < 0 ? maya_error("cannot create %s: %m", traces) : gpt_write_traces(a->g, traces);
    } else if (a->what == P_COLLATE) {
        struct col_summary cs;
        rc = col_collate(traces, job, 0, &cs);
        if (rc == 0)
            rc = job_trace_stamp(a->dir, 0); /* as maya report does, untimed below */
    } else if (a->what == P_REUSE) {
        rc = job_trace_reusable(a->dir, 0) == 1 ? 0 : maya_error("the job trace of unchanged traces is not reusable");
    } else {
        rc = simulate(a->dir, a->g->tp * a->g->pp * a->g->dp, a->what == P_SIM_FOLD, ph);
    }
    if (a->what == P_GEN || a->what == P_COLLATE || a->what == P_REUSE)
        ph->cpu_s[0] = cpu_s() - t0;
    ph->rss_kb = rss_kb();
    return rc;
}

static int run_phase(int what, const struct gpt_shape *g, const char *dir, struct phase *out)
{
    struct phase_arg a = { what, g, dir };
    static const char *const names[] = { "scale_bench: generating the traces", "scale_bench: collating",
                                         "scale_bench: checking the traces for reuse",
                                         "scale_bench: the folded replay", "scale_bench: the unfolded replay" };
    return bench_in_child(phase_child, &a, out, sizeof *out, names[what]);
}

static int bench_size(const char *name, int tp, int pp, int dp, int nofold)
{
    struct gpt_shape g;
    gpt_shape_gpt3(&g, tp, pp, dp);
    char dir[] = "/tmp/maya-scale-bench.XXXXXX";
    if (!mkdtemp(dir))
        return maya_error("mkdtemp: %m");
    struct phase gen, col, reuse, fold, unfold;
    int rc = run_phase(P_GEN, &g, dir, &gen);
    if (rc == 0)
        rc = run_phase(P_COLLATE, &g, dir, &col);
    if (rc == 0)
        rc = run_phase(P_REUSE, &g, dir, &reuse);
    if (rc == 0)
        rc = run_phase(P_SIM_FOLD, &g, dir, &fold);
    if (rc == 0 && nofold)
        rc = run_phase(P_SIM_NOFOLD, &g, dir, &unfold);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        maya_warn("cannot remove %s", dir);
    if (rc < 0)
        return -1;
    printf("scale_%s_ranks=%d\n", name, tp * pp * dp);
    printf("scale_%s_ops=%" PRIu64 "\n", name, fold.ops);
    printf("scale_%s_gen_s=%.2f\n", name, gen.cpu_s[0]);
    printf("scale_%s_collate_s=%.2f\n", name, col.cpu_s[0]);
    printf("scale_%s_collate_rss_bytes=%ld\n", name, col.rss_kb * 1024);
    const struct phase *v[2] = { &fold, &unfold };
    for (int k = 0; k < 1 + nofold; k++) {
        const struct phase *p = v[k];
        const char *tag = k ? "_nofold" : "";
        printf("scale_%s%s_replayed_ranks=%d\n", name, tag, p->replayed_ranks);
        printf("scale_%s%s_load_s=%.2f\n", name, tag, p->cpu_s[0]);
        printf("scale_%s%s_replay_s=%.2f\n", name, tag, p->cpu_s[1]);
        printf("scale_%s%s_report_s=%.2f\n", name, tag, p->cpu_s[2]);
        printf("scale_%s%s_peak_rss_bytes=%ld\n", name, tag, p->rss_kb * 1024);
        printf("scale_%s%s_total_s=%.2f\n", name, tag, col.cpu_s[0] + p->cpu_s[0] + p->cpu_s[1] + p->cpu_s[2]);
        printf("scale_%s%s_iteration_s=%.6f\n", name, tag, p->iteration_s);
    }
    printf("scale_%s_reuse_check_s=%.3f\n", name, reuse.cpu_s[0]);
    printf("scale_%s_rereport_s=%.2f\n", name, reuse.cpu_s[0] + fold.cpu_s[0] + fold.cpu_s[1] + fold.cpu_s[2]);
    fflush(stdout);
    return 0;
}

int main(void)
{
    maya_set_error_prefix("scale_bench");
    const char *want = getenv("MAYA_SCALE_BENCH");
    if (!want || !*want)
        want = "1k,4k,16k";
    struct { const char *name; int tp, pp, dp, nofold; } sizes[] = {
        { "1k", 8, 8, 16, 1 }, { "4k", 8, 8, 64, 1 }, { "16k", 8, 16, 128, 0 },
    };
    int rc = 0;
    for (size_t i = 0; i < MAYA_ARRAY_LEN(sizes); i++) {
        char list[256];
        snprintf(list, sizeof list, ",%s,", want);
        char key[16];
        snprintf(key, sizeof key, ",%s,", sizes[i].name);
        if (!strstr(list, key))
            continue;
        const char *all = getenv("MAYA_SCALE_BENCH_NOFOLD");
        int nofold = sizes[i].nofold || (all && strcmp(all, "1") == 0);
        if (bench_size(sizes[i].name, sizes[i].tp, sizes[i].pp, sizes[i].dp, nofold) < 0)
            rc = 1;
    }
    return rc;
}

/* maya estimate launch TRACE KERNEL [key=value...]: for one kernel launch
 * of a trace, the work the estimator read from the kernel's code and the
 * time it gives, unit by unit (est_kernel_explain).
 *
 * TRACE is a rank trace (rank-N.mtrace), a trace directory (the first
 * rank-*.mtrace in it) or a run directory (its traces/). KERNEL is matched
 * against the demangled kernel names: a name that contains it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "maya/common.h"
#include "maya/estimator.h"
#include "maya/hwspec.h"
#include "maya/run_specs.h"
#include "maya/trace_reader.h"
#include "pipeline.h"

static void usage(FILE *fp)
{
    fprintf(fp,
        "usage: maya estimate launch TRACE KERNEL [nth=N] [gpu=NAME] [cluster=NAME] [model=MODEL] [models=DIR]\n"
        "\n"
        "For one kernel launch of a trace: the work read from the kernel's code (bytes,\n"
        "FLOPs by unit and precision, instructions, all threads of the launch), the time\n"
        "of each GPU unit for it, and the duration the estimator gives.\n"
        "  TRACE    rank trace (rank-N.mtrace), trace directory or run directory (traces/)\n"
        "  KERNEL   part of the kernel's demangled name (the first launch that matches)\n"
        "  nth=N    the Nth matching launch (default 1)\n"
        "  gpu=     the GPU to price it on, a name or a description file (default: the\n"
        "           description the run recorded, RUN/gpu.conf, when TRACE is in a run\n"
        "           directory; else the installed one of the trace's GPU)\n"
        "  cluster= the node, a name or a file (default: RUN/cluster.conf, else the GPU's own)\n"
        "  model=   analytical (default) or learned; models=DIR: trained models\n");
}

/* TRACE as a file: the argument, DIR/rank-*.mtrace or DIR/traces/rank-*.mtrace. */
static int trace_file(const char *arg, char *out, size_t size)
{
    struct stat st;
    if (stat(arg, &st) < 0)
        return maya_error("estimate launch: %s: %m", arg);
    if (!S_ISDIR(st.st_mode))
        return maya_snprintf(out, size, "%s", arg);
    char dir[4096];
    if (maya_snprintf(dir, sizeof dir, "%s/traces", arg) < 0)
        return -1;
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        snprintf(dir, sizeof dir, "%s", arg);
    DIR *d = opendir(dir);
    if (!d)
        return maya_error("estimate launch: %s: %m", dir);
    char best[256] = "";
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "rank-", 5) || n < 12 || strcmp(e->d_name + n - 7, ".mtrace"))
            continue;
        if (!best[0] || strcmp(e->d_name, best) < 0)
            snprintf(best, sizeof best, "%s", e->d_name);
    }
    closedir(d);
    if (!best[0])
        return maya_error("estimate launch: %s holds no rank-N.mtrace", dir);
    return maya_snprintf(out, size, "%s/%s", dir, best);
}

/* The run directory the trace at path (found from arg) lies in: arg
 * itself, arg's parent (arg = RUN/traces) or the trace's directory's parent
 * (RUN/traces/rank-N.mtrace), whichever holds the GPU description the run
 * recorded; "" when none does. */
static void run_dir_of(const char *arg, const char *path, char *out, size_t size)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    const char *cand[4][2] = { { arg, "" }, { arg, "/.." }, { dir, "" }, { dir, "/.." } };
    for (int i = 0; i < 4; i++) {
        char f[PATH_MAX + 64];
        struct stat st;
        snprintf(out, size, "%s%s", cand[i][0], cand[i][1]);
        snprintf(f, sizeof f, "%.*s/%s", PATH_MAX, out, MAYA_RUN_GPU_FILE);
        if (stat(f, &st) == 0 && S_ISREG(st.st_mode))
            return;
    }
    out[0] = 0;
}

int cmd_estimate_launch(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (argc < 3) {
        usage(stderr);
        return 2;
    }
    const char *want = argv[2], *gname = NULL, *cname = NULL, *mname = "analytical", *models = NULL;
    uint64_t nth = 1;
    for (int i = 3; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (!eq || !eq[1]) {
            maya_error("estimate launch: expected KEY=VALUE, found \"%s\"", argv[i]);
            return 2;
        }
        size_t kl = (size_t)(eq - argv[i]);
        const char *v = eq + 1;
        if (kl == 3 && !strncmp(argv[i], "nth", 3)) {
            if (maya_parse_u64(v, &nth) < 0 || nth == 0) {
                maya_error("estimate launch: nth is \"%s\"; expected a number from 1", v);
                return 2;
            }
        } else if (kl == 3 && !strncmp(argv[i], "gpu", 3)) {
            gname = v;
        } else if (kl == 7 && !strncmp(argv[i], "cluster", 7)) {
            cname = v;
        } else if (kl == 5 && !strncmp(argv[i], "model", 5)) {
            mname = v;
        } else if (kl == 6 && !strncmp(argv[i], "models", 6)) {
            models = v;
        } else {
            maya_error("estimate launch: unknown key \"%.*s\"; expected nth, gpu, cluster, model or models",
                       (int)kl, argv[i]);
            return 2;
        }
    }
    int m = est_model_parse(mname);
    if (m < 0 || m == EST_ORACLE) {
        maya_error("estimate launch: model is \"%s\"; expected analytical or learned", mname);
        return 2;
    }
    char path[4096];
    if (trace_file(argv[1], path, sizeof path) < 0)
        return 1;
    struct maya_trace_reader *r = NULL;
    struct maya_hwspecs hw, own;
    memset(&hw, 0, sizeof hw);
    memset(&own, 0, sizeof own);
    struct estimator *e = NULL;
    int rc = 1;
    if (maya_trace_open(path, &r) < 0)
        return 1;
    maya_trace_allow_truncated(r, 1);
    if (cli_load_hwspecs(&hw) < 0)
        goto out;
    const struct maya_trace_header *th = maya_trace_header(r);
    /* the GPU: gpu= (a file or a name), else the description the run
     * recorded, else the installed one of the trace's GPU (as maya report) */
    char run[PATH_MAX], file[PATH_MAX + 64];
    struct stat st;
    run_dir_of(argv[1], path, run, sizeof run);
    const struct maya_gpu_spec *gpu;
    if (gname && stat(gname, &st) == 0 && S_ISREG(st.st_mode)) {
        gpu = pipeline_gpu_from_file(gname, NULL, &own);
    } else if (!gname && run[0]) {
        snprintf(file, sizeof file, "%.*s/%s", PATH_MAX, run, MAYA_RUN_GPU_FILE);
        gpu = pipeline_gpu_from_file(file, th->gpu[0] ? th->gpu : NULL, &own);
    } else {
        const char *g = gname ? gname : th->gpu[0] ? th->gpu : "h100";
        if (!(gpu = maya_hwspecs_find_gpu(&hw, g))) {
            char names[2048];
            maya_hwspecs_gpu_names(&hw, names, sizeof names);
            maya_error("estimate launch: unknown GPU \"%s\"; known: %s", g, names);
        }
    }
    if (!gpu)
        goto out;
    struct maya_cluster_spec cl;
    snprintf(file, sizeof file, "%.*s/%s", PATH_MAX, run, MAYA_RUN_CLUSTER_FILE);
    if (cname) {
        if (pipeline_cluster_lookup(&hw, cname, NULL, &cl) < 0)
            goto out;
    } else if (run[0] && stat(file, &st) == 0) {
        if (pipeline_cluster_lookup(&hw, MAYA_RUN_CLUSTER_FILE, run, &cl) < 0)
            goto out;
    } else if (maya_default_cluster(&hw, gpu, 8, &cl) < 0) {
        goto out;
    }
    struct est_config cfg = { .gpu = gpu, .cluster = &cl, .models_dir = models };
    for (int f = 0; f < EST_NFAMILIES; f++)
        cfg.model[f] = (enum est_model)m;
    if (est_create(&cfg, &e) < 0)
        goto out;
    const struct maya_rec_hdr *h;
    uint64_t seen = 0;
    int got;
    while ((got = maya_trace_next(r, &h)) == 1) {
        if (h->type != MAYA_REC_LAUNCH || (h->flags & MAYA_F_CAPTURING))
            continue;
        const struct maya_rec_launch *l = (const void *)h;
        const struct maya_rec_kernel *k = maya_trace_kernel(r, l->kernel);
        const char *name = k ? maya_trace_string(r, k->name) : NULL;
        if (!name || !strstr(name, want) || ++seen < nth)
            continue;
        struct est_op op = { .rec = h, .api = maya_trace_string(r, l->call.api), .kernel_name = name,
                             .kernel = k, .rank = th->rank, .coll_nodes = 1, .coll_ranks_per_node = 1 };
        printf("trace=%s launch=%llu seq=%llu\n", path, (unsigned long long)seen,
               (unsigned long long)l->call.seq);
        rc = est_kernel_explain(e, &op, stdout) < 0 ? 1 : 0;
        goto out;
    }
    if (got == 1 || got == 0)
        maya_error("estimate launch: %s has %s launch of a kernel whose name contains \"%s\"%s", path,
                   seen ? "fewer than nth" : "no", want, seen ? "" : " (maya trace dump lists them)");
out:
    est_destroy(e);
    maya_hwspecs_free(&hw);
    maya_hwspecs_free(&own);
    maya_trace_close(r);
    return rc;
}

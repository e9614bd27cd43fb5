/* The report pipeline on a run directory (shared by maya run and maya report):
 * collate DIR/traces into DIR/job.mtrace, estimate every op, replay the job,
 * write the report. A stage that fails leaves a report saying why. */
#define _GNU_SOURCE
#include "pipeline.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "job_reuse.h"
#include "maya/collator.h"
#include "maya/common.h"
#include "maya/estimator.h"
#include "maya/hwspec.h"
#include "maya/run_specs.h"
#include "maya/progress.h"
#include "maya/sim.h"

/* --slow-rank R[:F],...: ranks whose kernels take F (default 1.2) times as long. */
static int parse_slow_ranks(struct pipeline_opts *o, const char *value)
{
    char buf[4096];
    if (!value || !*value || maya_snprintf(buf, sizeof buf, "%s", value) < 0)
        return maya_error("--slow-rank: expected RANK[:FACTOR],... (e.g. 5 or 5:1.5,9:2)");
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(t, ':'), *end = NULL;
        if (colon)
            *colon = 0;
        int64_t rank;
        double f = 1.2;
        if (colon) {
            f = strtod(colon + 1, &end);
            if (end == colon + 1 || *end)
                f = -1;
        }
        if (maya_parse_i64(t, &rank) < 0 || rank < 0 || rank > (1 << 24) || !(f > 0 && f < 1e6))
            return maya_error("--slow-rank \"%s\": expected RANK[:FACTOR],... with RANK >= 0 and FACTOR > 0 "
                              "(e.g. 5 or 5:1.5,9:2)", value);
        if (o->nslow >= PIPELINE_MAX_SLOW)
            return maya_error("--slow-rank: at most %d ranks", PIPELINE_MAX_SLOW);
        o->slow[o->nslow++] = (struct sim_slow_rank){ (int)rank, f };
    }
    return 1;
}

int pipeline_parse_option(struct pipeline_opts *o, const char *name, const char *value)
{
    if (!strcmp(name, "--iteration-marker")) {
        if (!value || !*value)
            return maya_error("--iteration-marker: expected the name or glob of an NVTX range, kernel, op or API");
        o->iteration_marker = value;
    } else if (!strcmp(name, "--iterations")) {
        int64_t n;
        if (!value || maya_parse_i64(value, &n) < 0 || n < 1 || n > 1000000)
            return maya_error("--iterations \"%s\": expected a whole number from 1 to 1000000",
                              value ? value : "");
        o->iterations = (int)n;
    } else if (!strcmp(name, "--estimator")) {
        if (!value || !*value)
            return maya_error("--estimator: expected MODEL or FAMILY=MODEL,...");
        o->estimator = value;
    } else if (!strcmp(name, "--oracle")) {
        if (!value || !*value)
            return maya_error("--oracle: expected a file of measured durations");
        o->oracle = value;
    } else if (!strcmp(name, "--oracle-profile")) {
        if (!value || !*value)
            return maya_error("--oracle-profile: expected a directory made by maya profile");
        o->oracle_profile = value;
    } else if (!strcmp(name, "--timeline")) {
        static const char *const modes[] = { "bounded", "full", "none" };
        int m = 0;
        while (m < 3 && (!value || strcmp(value, modes[m])))
            m++;
        if (m == 3)
            return maya_error("--timeline \"%s\": expected bounded, full or none", value ? value : "");
        o->timeline = m;
    } else if (!strcmp(name, "--fold")) {
        if (!value || (strcmp(value, "yes") && strcmp(value, "no") && strcmp(value, "similar")))
            return maya_error("--fold \"%s\": expected yes, similar or no", value ? value : "");
        o->no_fold = !strcmp(value, "no");
        o->fold_similar = !strcmp(value, "similar");
    } else if (!strcmp(name, "--slow-rank")) {
        return parse_slow_ranks(o, value);
    } else {
        return 0;
    }
    return 1;
}

int pipeline_parse_report_option(struct pipeline_opts *o, const char *name, const char *value)
{
    if (strcmp(name, "-g") && strcmp(name, "--gpu") && strcmp(name, "--cluster") && strcmp(name, "--hwspec-dir"))
        return pipeline_parse_option(o, name, value);
    if (!value || !*value)
        return maya_error("%s: expected a %s", name, !strcmp(name, "--hwspec-dir") ? "directory" : "name or a file");
    if (!strcmp(name, "--cluster"))
        o->cluster = value;
    else if (!strcmp(name, "--hwspec-dir"))
        o->hwspec_dir = value;
    else
        o->gpu = value;
    return 1;
}

/* Learned falls back to analytical where no model was trained. */
int pipeline_models(const char *spec, int oracle, enum est_model model[EST_NFAMILIES])
{
    for (int f = 0; f < EST_NFAMILIES; f++)
        model[f] = oracle && (!spec || !*spec) ? EST_ORACLE : EST_LEARNED;
    if (spec && *spec && est_models_parse(spec, model) < 0)
        return -1;
    return 0;
}

int pipeline_check_options(const struct pipeline_opts *o)
{
    if (o->oracle && access(o->oracle, R_OK) != 0)
        return maya_error("--oracle %s: cannot read it: %m", o->oracle);
    if (o->oracle && est_oracle_check(o->oracle) < 0) /* now, not after the run */
        return maya_error("--oracle %s: expected a durations file (docs/oracle-format.md)", o->oracle);
    char traces[4200];
    snprintf(traces, sizeof traces, "%s/traces", o->oracle_profile ? o->oracle_profile : "");
    if (o->oracle_profile && access(traces, R_OK | X_OK) != 0)
        return maya_error("--oracle-profile %s: no traces/ in it (%m): expected a directory made by maya profile",
                          o->oracle_profile);
    enum est_model model[EST_NFAMILIES];
    if (pipeline_models(o->estimator, o->oracle || o->oracle_profile, model) < 0)
        return -1;
    int any_oracle = 0;
    for (int f = 0; f < EST_NFAMILIES; f++)
        any_oracle |= model[f] == EST_ORACLE;
    if (any_oracle && !o->oracle && !o->oracle_profile)
        return maya_error("--estimator %s asks for the oracle model: give its durations with --oracle FILE "
                          "or --oracle-profile DIR", o->estimator);
    return 0;
}

void pipeline_opts_to_desc(const struct pipeline_opts *o, struct maya_run_desc *d)
{
    if (o->iteration_marker)
        snprintf(d->iteration_marker, sizeof d->iteration_marker, "%s", o->iteration_marker);
    if (o->iterations)
        d->iterations = o->iterations;
    if (o->estimator)
        snprintf(d->estimator, sizeof d->estimator, "%s", o->estimator);
    if (o->oracle && !realpath(o->oracle, d->oracle))
        snprintf(d->oracle, sizeof d->oracle, "%s", o->oracle);
}

int pipeline_cluster_lookup(const struct maya_hwspecs *hw, const char *cluster, const char *base_dir,
                            struct maya_cluster_spec *out)
{
    char path[PATH_MAX];
    struct stat st;
    if (cluster[0] != '/' && base_dir)
        snprintf(path, sizeof path, "%s/%s", base_dir, cluster);
    else
        snprintf(path, sizeof path, "%s", cluster);
    if (stat(path, &st) == 0) {
        struct maya_hwspecs own = { 0 };
        if (maya_hwspecs_load_file(path, &own) < 0) {
            maya_hwspecs_free(&own);
            return -1;
        }
        if (own.nclusters != 1) {
            maya_hwspecs_free(&own);
            return maya_error("cluster file %s: expected one cluster \"NAME\" { ... }, found %zu", path,
                              own.nclusters);
        }
        *out = own.clusters[0];
        maya_hwspecs_free(&own);
        return 0;
    }
    const struct maya_cluster_spec *c = maya_hwspecs_find_cluster(hw, cluster);
    if (!c) {
        char names[2048] = "";
        for (size_t i = 0; i < hw->nclusters; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     hw->clusters[i].key);
        return maya_error("cluster \"%s\": no such file and no known cluster of that name; known "
                          "clusters: %s", cluster, names[0] ? names : "(none installed)");
    }
    *out = *c;
    return 0;
}

int pipeline_cluster(const struct maya_hwspecs *hw, const struct maya_gpu_spec *gpu, int count,
                     const char *cluster, const char *base_dir, struct maya_cluster_spec *out)
{
    if (!cluster || !*cluster) {
        if (maya_default_cluster(hw, gpu, count, out) < 0)
            return -1;
        if (count > out->gpus_per_node && count % out->gpus_per_node)
            return maya_error("%d GPUs do not fill nodes of %d (%s): expected a multiple of %d, or a "
                              "cluster with other nodes (--cluster)", count, out->gpus_per_node, out->key,
                              out->gpus_per_node);
        return 0;
    }
    if (pipeline_cluster_lookup(hw, cluster, base_dir, out) < 0)
        return -1;
    snprintf(out->gpu, sizeof out->gpu, "%s", gpu->key);
    int gpn = out->gpus_per_node;
    if (count < gpn)
        out->gpus_per_node = count;
    else if (count % gpn)
        return maya_error("%d GPUs on nodes of %d (cluster %s): expected a multiple of %d", count, gpn,
                          out->key, gpn);
    out->nodes = (count + out->gpus_per_node - 1) / out->gpus_per_node;
    return 0;
}

const struct maya_gpu_spec *pipeline_gpu_from_file(const char *path, const char *want, struct maya_hwspecs *own)
{
    if (maya_hwspecs_load_file(path, own) < 0)
        return NULL;
    const struct maya_gpu_spec *g = want ? maya_hwspecs_find_gpu(own, want) : NULL;
    if (!g && own->ngpus == 1)
        g = &own->gpus[0];
    if (!g)
        maya_error("%s: expected one gpu \"NAME\" { ... }%s%s, found %zu GPU descriptions", path,
                   want ? " or one named " : "", want ? want : "", own->ngpus);
    return g;
}

/* The GPU to report for, and a sentence saying where its description came
 * from: -g, else the run's GPU in --hwspec-dir, else the description the
 * run recorded, else (a run directory from before they were recorded) the
 * installed one of that name. */
static const struct maya_gpu_spec *pick_gpu(const char *dir, const struct maya_run_desc *d,
                                            const struct pipeline_opts *o, const struct maya_hwspecs *hw,
                                            struct maya_hwspecs *own, char *how, size_t n)
{
    char path[PATH_MAX];
    struct stat st;
    const struct maya_gpu_spec *g = NULL;
    const char *where = o->hwspec_dir ? o->hwspec_dir : "the installed descriptions";
    if (o->gpu && stat(o->gpu, &st) == 0) {
        if ((g = pipeline_gpu_from_file(o->gpu, NULL, own)))
            snprintf(how, n, "GPU %s from %s (-g), not the description the run recorded", g->key, o->gpu);
    } else if (o->gpu) {
        if (!(g = maya_hwspecs_find_gpu(hw, o->gpu))) {
            char names[2048];
            maya_hwspecs_gpu_names(hw, names, sizeof names);
            maya_error("-g %s: no such file and no GPU of that name in %s; known: %s", o->gpu, where, names);
        } else {
            snprintf(how, n, "GPU %s from %s (-g), not the description the run recorded", g->key, where);
        }
    } else if (o->hwspec_dir) {
        if (!(g = maya_hwspecs_find_gpu(hw, d->gpu)))
            maya_error("--hwspec-dir %s has no GPU named \"%s\" (the run's GPU)", o->hwspec_dir, d->gpu);
        else
            snprintf(how, n, "GPU %s from --hwspec-dir %s, not the description the run recorded", g->key,
                     o->hwspec_dir);
    } else if (maya_snprintf(path, sizeof path, "%s/%s", dir, MAYA_RUN_GPU_FILE) == 0 && stat(path, &st) == 0) {
        if ((g = pipeline_gpu_from_file(path, d->gpu, own)))
            snprintf(how, n, "GPU %s as the run recorded it (%s)", g->key, MAYA_RUN_GPU_FILE);
    } else if (!(g = maya_hwspecs_find_gpu(hw, d->gpu))) {
        maya_error("%s/%s names GPU \"%s\", which is not known (maya hwspecs list), and the run directory "
                   "holds no %s", dir, MAYA_RUN_DESC_FILE, d->gpu, MAYA_RUN_GPU_FILE);
    } else {
        snprintf(how, n, "GPU %s from the installed descriptions (the run directory records none)", g->key);
    }
    return g;
}

/* The report options given that differ from what run.conf records, as
 * "--estimator analytical (run.conf: default)", appended to buf; how many. */
static int options_changed(const struct pipeline_opts *o, const struct maya_run_desc *d, char *buf, size_t n)
{
    int k = 0;
    size_t len = strlen(buf);
#define CHANGED(...) do { snprintf(buf + len, n - len, "%s", k++ ? ", " : ""); len = strlen(buf); \
                          snprintf(buf + len, n - len, __VA_ARGS__); len = strlen(buf); } while (0)
    if (o->iteration_marker && strcmp(o->iteration_marker, d->iteration_marker))
        CHANGED("--iteration-marker %s (run.conf: %s)", o->iteration_marker,
                d->iteration_marker[0] ? d->iteration_marker : "none, iterations found from the ops");
    if (o->iterations && o->iterations != d->iterations) {
        if (d->iterations)
            CHANGED("--iterations %d (run.conf: %d)", o->iterations, d->iterations);
        else
            CHANGED("--iterations %d (run.conf: all)", o->iterations);
    }
    if (o->estimator && strcmp(o->estimator, d->estimator))
        CHANGED("--estimator %s (run.conf: %s)", o->estimator, d->estimator[0] ? d->estimator : "default");
    if (o->oracle) {
        char abs[PATH_MAX];
        const char *a = realpath(o->oracle, abs) ? abs : o->oracle;
        if (strcmp(a, d->oracle))
            CHANGED("--oracle %.512s (run.conf: %.512s)", o->oracle, d->oracle[0] ? d->oracle : "none");
    }
#undef CHANGED
    return k;
}

/* Does dir hold a trace cut short (rank-N.mtrace.tmp without rank-N.mtrace)? */
static int cut_short_traces(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && !found && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        char whole[PATH_MAX + 300];
        if (len > 11 && !strcmp(e->d_name + len - 11, ".mtrace.tmp") &&
            snprintf(whole, sizeof whole, "%s/%.*s", dir, (int)(len - 4), e->d_name) > 0)
            found = access(whole, F_OK) != 0;
    }
    if (d)
        closedir(d);
    return found;
}

static int estimate_op(void *ctx, const struct est_op *op, struct est_result *out)
{
    return est_estimate(ctx, op, out);
}

/* Remember why a stage failed, for the report. */
static void note(char *buf, size_t size, const char *stage)
{
    snprintf(buf, size, "%s: %s", stage, maya_last_error());
}

static int pipeline_stages(const char *dir, const struct pipeline_opts *o);

/* Progress on a terminal; Ctrl-C and SIGTERM stop the stages at a safe
 * point, leaving no half-written file (every output is written atomically)
 * and no report. */
int pipeline_run(const char *dir, const struct pipeline_opts *o)
{
    maya_progress_enable(!o->quiet && isatty(2));
    maya_stop_catch();
    int rc = pipeline_stages(dir, o);
    maya_progress_done();
    maya_stop_release();
    if (maya_stopped())
        return maya_error("interrupted: the report in %s was not written", dir);
    return rc;
}

static int pipeline_stages(const char *dir, const struct pipeline_opts *o)
{
    struct maya_run_desc d;
    char path[PATH_MAX + 64], job_path[PATH_MAX + 64], error[2048] = "";
    snprintf(path, sizeof path, "%s/%s", dir, MAYA_RUN_DESC_FILE);
    if (maya_run_desc_read(path, &d) < 0)
        return -1;
    const char *marker = o->iteration_marker ? o->iteration_marker : d.iteration_marker;
    const char *spec = o->estimator ? o->estimator : d.estimator;
    const char *oracle = o->oracle ? o->oracle : d.oracle[0] ? d.oracle : NULL;
    int workload_ok = 1;
    for (int i = 0; i < d.nprocs; i++)
        workload_ok &= maya_run_proc_ok(&d.procs[i]);

    struct maya_hwspecs hw, own = { 0 };
    const struct maya_gpu_spec *gpu = NULL;
    struct maya_cluster_spec cluster;
    char hardware[1024] = "", gpu_how[512] = "";
    int have_cluster = 0, rc = 0;
    if ((o->hwspec_dir ? maya_hwspecs_load_dir(o->hwspec_dir, &hw) : cli_load_hwspecs(&hw)) < 0) {
        maya_run_desc_free(&d);
        return -1;
    }
    gpu = pick_gpu(dir, &d, o, &hw, &own, gpu_how, sizeof gpu_how);
    if (!gpu)
        rc = -1;
    else if (pipeline_cluster(&hw, gpu, d.gpu_count, o->cluster ? o->cluster : d.cluster, o->cluster ? NULL : dir,
                              &cluster) < 0)
        rc = -1;
    else
        have_cluster = 1;
    if (rc < 0)
        note(error, sizeof error, "configuration");
    char limits[256] = "";
    if (gpu)
        maya_gpu_limits_describe(gpu, limits, sizeof limits);
    if (have_cluster)
        snprintf(hardware, sizeof hardware, "%s%s%s; cluster %s %s", gpu_how, limits[0] ? ", " : "", limits,
                 cluster.key,
                 o->cluster ? "given with --cluster, not the one the run recorded"
                 : !strcmp(d.cluster, MAYA_RUN_CLUSTER_FILE) ? "as the run recorded it (" MAYA_RUN_CLUSTER_FILE ")"
                 : d.cluster[0] ? "by name, from the installed descriptions" : "(the GPU's default node)");

    /* collate: traces cut short are taken as far as they go when the
     * workload failed, or when a rank left one although it exited 0 (its
     * trace writes failed: a full disk) */
    struct col_summary cs;
    snprintf(path, sizeof path, "%s/traces", dir);
    snprintf(job_path, sizeof job_path, "%s/job.mtrace", dir);
    int incomplete = !workload_ok || cut_short_traces(path), reused = 0;
    if (rc == 0 && (reused = job_trace_reusable(dir, incomplete)) == 0) {
        if ((rc = col_collate(path, job_path, incomplete, &cs)) < 0)
            note(error, sizeof error, "collation");
        else
            job_trace_stamp(dir, incomplete); /* a failure is said; the next report collates again */
    }
    if (reused && !o->quiet)
        fprintf(stderr, "maya: %s/job.mtrace reused: its traces are as they were when it was collated\n", dir);

    /* estimate and simulate */
    struct estimator *est = NULL;
    struct sim_job *job = NULL;
    if (rc == 0) {
        struct est_config ec = { .gpu = gpu, .cluster = &cluster, .oracle_path = oracle,
                                 .profile_dir = o->oracle_profile };
        if (pipeline_models(spec, oracle || o->oracle_profile, ec.model) < 0 || est_create(&ec, &est) < 0) {
            rc = -1;
            note(error, sizeof error, "estimator");
        }
    }
    if (rc == 0) {
        struct sim_config sc = { .estimate = estimate_op, .estimate_ctx = est,
                                 .iteration_marker = marker && *marker ? marker : NULL, .gpu = gpu,
                                 .flops = est_op_flops, .host_speed = have_cluster ? cluster.host_speed : 1,
                                 .keep_iterations = o->iterations ? o->iterations : d.iterations,
                                 /* Chakra traces are one per rank, each on its own communicators:
                                  * every rank replayed */
                                 .keep_xfers = o->chakra_dir != NULL, .no_fold = o->no_fold || o->chakra_dir, .fold_similar = o->fold_similar, .slow = o->slow,
                                 .nslow = o->nslow, .workload_failed = !workload_ok, .cluster = &cluster };
        /* the oracle answers by rank and call number; the other models by content */
        enum est_model model[EST_NFAMILIES];
        sc.estimate_by_content = pipeline_models(spec, oracle || o->oracle_profile, model) == 0;
        for (int f = 0; f < EST_NFAMILIES; f++)
            sc.estimate_by_content &= model[f] != EST_ORACLE;
        if ((rc = sim_load(job_path, &sc, &job)) < 0)
            note(error, sizeof error, "loading the job");
    }
    if (rc == 0 && (rc = sim_run(job)) < 0)
        note(error, sizeof error, "simulation");

    if (o->chakra_dir) {
        /* an export, not a report: the report files stay as they were */
        if (rc == 0)
            rc = sim_export_chakra(job, o->chakra_dir, "et");
        else
            maya_error("%s", error);
        sim_free(job);
        est_destroy(est);
        maya_hwspecs_free(&own);
        maya_hwspecs_free(&hw);
        maya_run_desc_free(&d);
        return rc < 0 ? -1 : 0;
    }
    char models[1024] = "";
    est_models_describe(est, models, sizeof models);
    /* maya report keeps the options it was given in run.conf once they gave a
     * whole report (a marker that matches nothing is not kept), and the report
     * says which served */
    char options[2048] = "";
    int changed = o->keep_options ? options_changed(o, &d, options, sizeof options) : 0;
    if (changed && rc == 0) {
        struct maya_run_desc kept;
        snprintf(path, sizeof path, "%s/%s", dir, MAYA_RUN_DESC_FILE);
        if (maya_run_desc_read(path, &kept) == 0) {
            pipeline_opts_to_desc(o, &kept);
            if (maya_run_desc_write(path, &kept) == 0)
                snprintf(options + strlen(options), sizeof options - strlen(options),
                         "; given to maya report and kept in run.conf for later reports");
            else
                snprintf(options + strlen(options), sizeof options - strlen(options),
                         "; given to maya report (not kept: %s)", maya_last_error());
            maya_run_desc_free(&kept);
        }
    } else if (changed) {
        snprintf(options + strlen(options), sizeof options - strlen(options),
                 "; given to maya report, not kept in run.conf: the report did not finish");
    } else {
        snprintf(options, sizeof options, "as run.conf records them");
    }
    if (o->oracle_profile)
        snprintf(options + strlen(options), sizeof options - strlen(options),
                 "; --oracle-profile %s for this report only", o->oracle_profile);
    struct sim_report_info info = {
        .desc = &d, .gpu = gpu, .cluster = have_cluster ? &cluster : NULL,
        .estimator = spec && *spec ? spec : oracle || o->oracle_profile ? "oracle" : "learned",
        .error = error[0] ? error : NULL, .hardware = hardware[0] ? hardware : NULL,
        .gpu_overridden = o->gpu || o->hwspec_dir, .models = models[0] ? models : NULL,
        .options = options,
        .timeline = o->timeline,
    };
    int wrc = maya_stopped() ? -1 : sim_report(job, &info, dir);
    maya_progress_done();
    if (!o->quiet && !maya_stopped()) {
        sim_report_summary(job, &info, o->show_tails ? dir : NULL, stderr);
        if (wrc == 0)
            fprintf(stderr, "maya: report in %s/report.txt%s\n", dir,
                    rc == 0 && o->timeline != SIM_TIMELINE_NONE ? " (report.html for a browser, timeline.json for Perfetto, timeline.svg)" : "");
    }
    sim_free(job);
    est_destroy(est);
    maya_hwspecs_free(&own);
    maya_hwspecs_free(&hw);
    maya_run_desc_free(&d);
    return rc < 0 || wrc < 0 ? -1 : 0;
}

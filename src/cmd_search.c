/* maya search [OPTIONS] --param NAME=V1,V2,... [--param ...] -- CMD [ARGS...]
 *
 * Finds the fastest configuration of a workload for a fixed GPU budget: each
 * trial is CMD with its parameters' values substituted for {NAME}, run by
 * `maya run` in DIR/trials/<hash>/ and scored by the simulated steady-state
 * iteration time; a trial that ran out of memory or failed is invalid.
 * Trials with equal command lines run once; a trial whose directory holds a
 * complete report is not run again.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "pipeline.h"
#include "search.h"
#include "maya/common.h"
#include "maya/config.h"
#include "maya/hwspec.h"
#include "maya/map.h"

static void usage(FILE *fp)
{
    fprintf(fp,
        "usage: maya search [OPTIONS] --param NAME=V1,V2,... [--param ...] -- CMD [ARGS...]\n"
        "  Find the fastest configuration of CMD on a fixed set of emulated GPUs: each trial\n"
        "  replaces {NAME} in CMD ARGS by one value of parameter NAME, runs it with maya run\n"
        "  and is scored by its simulated steady-state iteration time; a trial that runs out\n"
        "  of GPU memory or fails is invalid. Prints a table, fastest first, and the best.\n"
        "  --param NAME=V1,V2,...   a parameter and its values (plain strings, no shell);\n"
        "                           every --param must appear as {NAME} in CMD ARGS, but for\n"
        "                           gpus (each trial's -g) and cluster (its --cluster)\n"
        "  --flag NAME=WORDS        a parameter of values off and on: {NAME}, a whole argument,\n"
        "                           is WORDS (split at spaces) when on, nothing when off\n"
        "  --prune NAME=RULE[,RULE] skip trials by a declared property of NAME's values, in\n"
        "                           the order listed: memory-up (each needs no less memory than\n"
        "                           the one before), memory-down (no more), prefer-earlier (when a\n"
        "                           value is valid, later ones are slower); a trial needing no\n"
        "                           less memory than one that ran out is oom, one a valid trial\n"
        "                           dominates is pruned, neither run, each row naming the rule\n"
        "  -g, --gpus GPUxCOUNT[,...] emulated GPUs of every trial (as maya run -g); several:\n"
        "                           a parameter gpus (a what-if over GPU types and counts)\n"
        "  --cluster FILE|NAME      cluster description (as maya run --cluster)\n"
        "  --price X                what one GPU-hour costs (default: the cluster's\n"
        "                           price_per_gpu_hour); adds GPU-hours and cost per 1,000\n"
        "                           iterations to the table\n"
        "  -n, --nproc N            processes per trial (as maya run -n)\n"
        "  --run-option OPT         one more option for every trial's maya run (repeatable)\n"
        "  --no-reuse               emulate every trial, even one whose ranks do the same as an\n"
        "                           earlier trial's (by default a trial that differs only in\n"
        "                           the GPU type, or in a cluster of the same node layout,\n"
        "                           re-reports that trace with maya report -g/--cluster)\n"
        "  -o, --output DIR         search directory: search.txt, search.json and trials/\n"
        "                           (default: maya-search); trials found there are reused\n"
        "  -j, --jobs N             trials run at once (default 1; --slurm: a job array's size,\n"
        "                           default every trial that is ready)\n"
        "  --slurm                  run the trials as Slurm job arrays (sbatch), one array task\n"
        "                           a trial; DIR must be on a file system the nodes share\n"
        "  --sbatch OPT             one more sbatch option for the arrays (repeatable)\n"
        "  --retries N              --slurm: submit a trial whose task never finished (preempted,\n"
        "                           cancelled, node failure) up to N more times (default 2)\n"
        "  --strategy grid|random|cmaes\n"
        "                           every combination (default), --trials N drawn at random,\n"
        "                           or a CMA-ES that samples the value indexes a generation at\n"
        "                           a time and moves toward the fastest (for large spaces)\n"
        "  --trials N               random, cmaes: at most N distinct trials (default: random\n"
        "                           all; cmaes 20 x parameters with 2 values or more + 20)\n"
        "  --seed S                 random, cmaes: the seed of the draws (default 1)\n"
        "  --patience N             stop after N finished trials without a faster one\n"
        "                           (default: never)\n"
        "  --timeout SECONDS        stop a trial's workload after this long (as maya run)\n"
        "%s"
        "  -q, --quiet              no progress lines on stderr\n"
        "With -j above 1 or --slurm the trials share CPUs, so their host gaps are measured on\n"
        "the cpu clock (MAYA_HOST_CLOCK=cpu) unless MAYA_HOST_CLOCK says otherwise.\n"
        "Exit status: 0 at least one trial was valid; 1 none was; 2 bad usage.\n",
        PIPELINE_OPTIONS_HELP);
}

enum { GRID, RANDOM, CMAES };
static const char *const strategy_name[] = { "grid", "random", "cmaes" };

/* The GPUs and cluster of some trials, resolved once: what identifies them
 * in a trial's key, what the ranks see of them (the trace key), one GPU's
 * memory and the price of a GPU-hour. */
struct target {
    const char *gpus, *cluster;         /* as given (NULL: none) */
    char gpu_key[MAYA_NAME_MAX];
    int count;
    double gpu_memory_bytes, price;
    struct maya_cluster_spec spec;
    char *key, *trace;                  /* descriptions (malloc'd) */
};

/* A trial's command line as a growing argv. */
struct argv_list {
    char **argv;
    int n;
};

struct search {
    struct search_space space;
    struct argv_list run_opts;          /* maya run's options for every trial */
    struct argv_list report_opts;       /* the report pipeline's (for maya report) */
    struct search_trial *trials;
    int ntrials;
    struct target *targets;
    int ntargets;
    struct maya_hwspecs hw;
    int duplicates, pruned, reused, resubmitted;
    int jobs, strategy, requested, patience, quiet, reuse, use_slurm;
    int planned;                /* trials at most: grid, random all planned; cmaes its budget */
    int population, generations; /* cmaes */
    char stop_reason[96];       /* why it ended before its planned trials, or "" */
    uint64_t seed;
    double price;               /* --price, or 0 */
    const char *gpus, *cluster;
    struct search_slurm slurm;
    char exe[PATH_MAX];
    char dir[PATH_MAX];
};

static volatile sig_atomic_t interrupted;

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void on_signal(int sig)
{
    interrupted = sig;
}

static int parse_count(const char *opt, const char *v, int min, int *out)
{
    int64_t n;
    if (maya_parse_i64(v, &n) < 0 || n < min || n > 1000000)
        return maya_error("%s \"%s\": expected a whole number from %d to 1000000", opt, v, min);
    *out = (int)n;
    return 0;
}

static int push_arg(struct argv_list *l, const char *a)
{
    char **grown = realloc(l->argv, (l->n + 2) * sizeof *grown);
    if (!grown)
        return maya_error("out of memory");
    l->argv = grown;
    if (!(l->argv[l->n] = strdup(a)))
        return maya_error("out of memory");
    l->argv[++l->n] = NULL;
    return 0;
}

static int push_all(struct argv_list *l, char *const *argv)
{
    for (int i = 0; argv && argv[i]; i++)
        if (push_arg(l, argv[i]) < 0)
            return -1;
    return 0;
}

/* A file the trial reads, named in its key by its size and modification
 * time (as make judges files): a rebuilt program, an edited script, hwspec,
 * oracle file or model makes the cached trial stale. Not a file: nothing. */
static void stamp_file(FILE *key, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        fprintf(key, "file %s %lld %lld.%09ld\n", path, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                st.st_mtim.tv_nsec);
}

/* A command's program: a path as given, else found along PATH. */
static void stamp_program(FILE *key, const char *prog)
{
    const char *path = getenv("PATH");
    if (strchr(prog, '/') || !path) {
        stamp_file(key, prog);
        return;
    }
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        char full[PATH_MAX];
        if (n && snprintf(full, sizeof full, "%.*s/%s", (int)n, p, prog) < (int)sizeof full &&
            access(full, X_OK) == 0) {
            stamp_file(key, full);
            return;
        }
        p += n + (p[n] == ':');
    }
}

/* The trained models the estimator reads (share/maya/models), stamped. */
static void stamp_models(FILE *key)
{
    char dir[PATH_MAX];
    if (maya_data_dir((const void *)stamp_models, dir, sizeof dir) < 0)
        return;
    struct dirent **names;
    char sub[PATH_MAX + 8];
    snprintf(sub, sizeof sub, "%s/models", dir);
    int n = scandir(sub, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        char path[sizeof sub + 256];
        snprintf(path, sizeof path, "%s/%s", sub, names[i]->d_name);
        stamp_file(key, path);
        free(names[i]);
    }
    if (n >= 0)
        free(names);
}

/* What makes two trials the same besides their command and target: maya's
 * version, the hwspec files and trained models, maya run's options (with
 * the files they name) and maya.conf's defaults for them. */
static void describe_setup(FILE *key, const struct search *s, const struct maya_conf *conf)
{
    fprintf(key, "maya search trial 2\nmaya %s\n", MAYA_VERSION);
    for (size_t i = 0; i < s->hw.ngpus; i++)
        stamp_file(key, s->hw.gpus[i].file);
    for (size_t i = 0; i < s->hw.nclusters; i++)
        stamp_file(key, s->hw.clusters[i].file);
    stamp_models(key);
    for (int i = 0; i < s->run_opts.n; i++) {
        fprintf(key, "%s\n", s->run_opts.argv[i]);
        stamp_file(key, s->run_opts.argv[i]);
    }
    fprintf(key, "conf estimator=%s oracle=%s marker=%s iterations=%d timeout=%g copy_threshold=%llu\n",
            conf->estimator, conf->oracle, conf->iteration_marker, conf->iterations, conf->timeout_s,
            (unsigned long long)conf->copy_threshold);
    if (conf->oracle[0])
        stamp_file(key, conf->oracle);
    const char *thr = getenv("MAYA_COPY_THRESHOLD");
    fprintf(key, "MAYA_COPY_THRESHOLD=%s\n", thr ? thr : "");
}

/* Resolve a target as maya run would: -g, else the cluster's GPU and size,
 * else one H100; the cluster fitted to the count. 0 or -1. */
static int resolve_target(struct search *s, struct target *tg)
{
    const struct maya_gpu_spec *gpu = NULL;
    if (tg->gpus || !tg->cluster) {
        if (maya_parse_gpu_count(&s->hw, tg->gpus ? tg->gpus : "h100x1", &gpu, &tg->count) < 0)
            return -1;
    } else {
        struct maya_cluster_spec c;
        if (pipeline_cluster_lookup(&s->hw, tg->cluster, NULL, &c) < 0)
            return -1;
        if (!(gpu = maya_hwspecs_find_gpu(&s->hw, c.gpu)))
            return maya_error("--cluster %s names GPU \"%s\", which is not known (maya hwspecs list)", tg->cluster,
                              c.gpu);
        tg->count = (c.nodes > 0 ? c.nodes : 1) * c.gpus_per_node;
    }
    if (pipeline_cluster(&s->hw, gpu, tg->count, tg->cluster, NULL, &tg->spec) < 0)
        return -1;
    snprintf(tg->gpu_key, sizeof tg->gpu_key, "%s", gpu->key);
    tg->gpu_memory_bytes = (double)gpu->prop.totalGlobalMem;
    tg->price = s->price > 0 ? s->price : tg->spec.price_per_gpu_hour;
    size_t len;
    FILE *fp = open_memstream(&tg->key, &len);
    if (!fp)
        return maya_error("out of memory");
    fprintf(fp, "gpus=%sx%d\n", gpu->key, tg->count);
    maya_cluster_spec_print(fp, &tg->spec);
    if (fclose(fp) != 0)
        return maya_error("out of memory");
    /* what the ranks see: how many GPUs, how they sit in nodes and how a
     * node's are linked (NVML topology); not the GPU type, bandwidths or
     * latencies, which only the estimator and simulator read */
    if (asprintf(&tg->trace, "ranks see %d GPUs, %d a node on %d nodes, intra %s\n", tg->count,
                 tg->spec.gpus_per_node, tg->spec.nodes, maya_intra_link_name(tg->spec.intra)) < 0) {
        tg->trace = NULL;
        return maya_error("out of memory");
    }
    return 0;
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* The index of the target for these -g and --cluster values, resolved the
 * first time; -1 on error. */
static int find_target(struct search *s, const char *gpus, const char *cluster)
{
    for (int i = 0; i < s->ntargets; i++)
        if (same_str(s->targets[i].gpus, gpus) && same_str(s->targets[i].cluster, cluster))
            return i;
    struct target *grown = realloc(s->targets, (s->ntargets + 1) * sizeof *grown);
    if (!grown)
        return maya_error("out of memory");
    s->targets = grown;
    struct target *tg = &s->targets[s->ntargets];
    memset(tg, 0, sizeof *tg);
    tg->gpus = gpus;
    tg->cluster = cluster;
    s->ntargets++;
    return resolve_target(s, tg) < 0 ? -1 : s->ntargets - 1;
}

static void free_trial(struct search_trial *t)
{
    free(t->choice);
    search_free_argv(t->argv);
    free(t->key);
    free(t->dir);
    memset(t, 0, sizeof *t);
}

/* Trial t for a choice of value indexes: its command, target, keys and
 * directory. 0 or -1. */
static int make_trial(struct search *s, struct search_trial *t, const int *choice, const char *setup,
                      size_t setup_len)
{
    t->gpus = s->gpus;
    t->cluster = s->cluster;
    for (int i = 0; i < s->space.nparams; i++) {
        const struct search_param *p = &s->space.params[i];
        if (p->target == SEARCH_TARGET_GPUS)
            t->gpus = p->values[choice[i]];
        else if (p->target == SEARCH_TARGET_CLUSTER)
            t->cluster = p->values[choice[i]];
    }
    if ((t->target = find_target(s, t->gpus, t->cluster)) < 0)
        return -1;
    const struct target *tg = &s->targets[t->target];
    t->ngpus = tg->count;
    t->gpu_memory_bytes = tg->gpu_memory_bytes;
    t->price_per_gpu_hour = tg->price;
    char *cmd = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&cmd, &len);
    t->choice = calloc(s->space.nparams, sizeof *t->choice);
    char why[256] = "";
    if (fp && t->choice) {
        memcpy(t->choice, choice, s->space.nparams * sizeof *choice);
        t->argv = search_space_command(&s->space, t->choice, why, sizeof why);
        if (!t->argv && why[0]) {
            /* no command for this choice: a trial failed as planned, named
             * by the template and its values */
            snprintf(t->reason, sizeof t->reason, "%s", why);
            t->invalid = 1;
            t->argv = calloc(s->space.ntmpl + 1, sizeof *t->argv);
            for (int a = 0; t->argv && a < s->space.ntmpl; a++)
                if (!(t->argv[a] = strdup(s->space.tmpl[a]))) {
                    search_free_argv(t->argv);
                    t->argv = NULL;
                }
            for (int i = 0; i < s->space.nparams; i++)
                fprintf(fp, "%s=%s%c", s->space.params[i].name, s->space.params[i].values[choice[i]], 0);
        }
    }
    if (fp) {
        for (int a = 0; t->argv && t->argv[a]; a++)
            fwrite(t->argv[a], 1, strlen(t->argv[a]) + 1, fp);
        /* the program and the files its arguments name (a script, a config) */
        for (int a = 0; t->argv && t->argv[a]; a++) {
            if (a == 0)
                stamp_program(fp, t->argv[0]);
            else
                stamp_file(fp, t->argv[a]);
        }
    }
    if (!fp || fclose(fp) != 0 || !t->argv) {
        free(cmd);
        return maya_error("out of memory");
    }
    /* key: setup, target, command; trace key: the same but for what only
     * the report reads of the target (NUL bytes separate the parts) */
    size_t klen = strlen(tg->key), tlen = strlen(tg->trace);
    t->keylen = setup_len + 1 + klen + 1 + len;
    char *trace = malloc(setup_len + 1 + tlen + 1 + len);
    if (!(t->key = malloc(t->keylen)) || !trace) {
        free(trace);
        free(cmd);
        return maya_error("out of memory");
    }
    memcpy(t->key, setup, setup_len);
    t->key[setup_len] = 0;
    memcpy(t->key + setup_len + 1, tg->key, klen + 1);
    memcpy(t->key + setup_len + klen + 2, cmd, len);
    memcpy(trace, setup, setup_len);
    trace[setup_len] = 0;
    memcpy(trace + setup_len + 1, tg->trace, tlen + 1);
    memcpy(trace + setup_len + tlen + 2, cmd, len);
    t->trace_k1 = search_hash(trace, setup_len + tlen + 2 + len, 0);
    t->trace_k2 = search_hash(trace, setup_len + tlen + 2 + len, 0x84222325cbf29ce4ULL);
    free(trace);
    free(cmd);
    search_hash_hex(t->key, t->keylen, t->id);
    if (asprintf(&t->dir, "%s/trials/%s", s->dir, t->id) < 0) {
        t->dir = NULL;
        return maya_error("out of memory");
    }
    return 0;
}

/* The trial for choice: an earlier trial's index when its command line was
 * seen before (seen maps keys to trial indexes), else, below s->planned
 * trials, a new one's, made at s->trials[s->ntrials]; -2 when over the
 * plan, -1 on error. */
static int add_trial(struct search *s, struct maya_map *seen, const int *choice, const char *setup,
                     size_t setup_len)
{
    struct search_trial t = { 0 };
    uint64_t k1 = 0, k2 = 0, *slot = NULL;
    int rc = make_trial(s, &t, choice, setup, setup_len);
    if (rc == 0) {
        k1 = search_hash(t.key, t.keylen, 0);
        k2 = search_hash(t.key, t.keylen, 0x84222325cbf29ce4ULL);
        slot = maya_map_get(seen, k1, k2);
    }
    if (rc == 0 && !slot && s->ntrials < s->planned) {
        int created;
        if (!(slot = maya_map_put(seen, k1, k2, &created))) {
            free_trial(&t);
            return maya_error("out of memory");
        }
        *slot = (uint64_t)s->ntrials;
        t.order = s->ntrials;
        s->trials[s->ntrials++] = t;
        return t.order;
    }
    /* the same command line as an earlier trial: it runs once */
    free_trial(&t);
    return rc < 0 ? -1 : slot ? (int)*slot : -2;
}

/* The trials in the strategy's order, equal command lines once. */
static int plan_trials(struct search *s, const char *setup, size_t setup_len)
{
    uint64_t n = s->space.combinations;
    s->planned = s->strategy == RANDOM && s->requested && (uint64_t)s->requested < n ? s->requested : (int)n;
    int rc = 0, *choice = calloc(s->space.nparams, sizeof *choice);
    uint64_t *order = search_order(&s->space, s->strategy == RANDOM, s->seed);
    struct maya_map seen = { 0 };
    s->trials = calloc(s->planned, sizeof *s->trials);
    if (!order || !s->trials || !choice)
        rc = maya_error("out of memory");
    for (uint64_t i = 0; i < n && s->ntrials < s->planned && rc == 0; i++) {
        int before = s->ntrials;
        search_space_choice(&s->space, order[i], choice);
        rc = add_trial(s, &seen, choice, setup, setup_len) == -1 ? -1 : 0;
        s->duplicates += rc == 0 && s->ntrials == before;
    }
    s->planned = s->ntrials;
    maya_map_free(&seen);
    free(order);
    free(choice);
    return rc;
}

static const char *status_word(const struct search_trial *t)
{
    static const char *const words[] = { "pending", "ok", "oom", "failed", "pruned" };
    return words[t->status];
}

static void show_done(const struct search *s, const struct search_trial *t, int done)
{
    if (s->quiet)
        return;
    fprintf(stderr, "maya search: [%d/%d]", done, s->planned);
    for (int i = 0; i < s->space.nparams; i++)
        fprintf(stderr, " %s=%s", s->space.params[i].name, s->space.params[i].values[t->choice[i]]);
    if (t->status == SEARCH_OK)
        fprintf(stderr, ": %.3f ms", t->iteration_s * 1e3);
    else
        fprintf(stderr, ": %s", status_word(t));
    fprintf(stderr, "%s%s%s\n", t->cached ? " (cached)" : "", t->pruned_by[0] ? " (pruned)" : "",
            t->reused[0] ? " (re-reported)" : "");
}

/* Where the search stands while trials run. */
struct progress {
    struct search_trial **done;
    int ndone;
    int since_best;             /* finished trials since the fastest so far */
    double best_s;              /* < 0: no valid trial yet */
    int stop;                   /* --patience reached: start no more */
    int run;                    /* trials started */
};

static void finish(struct search *s, struct progress *p, struct search_trial *t)
{
    if (t->start_s > 0 && !t->cached)
        search_trial_save_time(t, wall_now() - t->start_s);
    /* only a directory this trial's own command wrote says how long it took */
    t->wall_s = t->cached || t->start_s > 0 || t->attempts > 0 ? search_trial_load_time(t) : -1;
    t->phase = 2;
    p->done[p->ndone++] = t;
    s->pruned += t->pruned_by[0] != 0;
    s->reused += t->reused[0] != 0;
    show_done(s, t, p->ndone);
    if (t->status == SEARCH_OK && (p->best_s < 0 || t->iteration_s < p->best_s)) {
        p->best_s = t->iteration_s;
        p->since_best = 0;
    } else {
        p->since_best++;
    }
    if (s->patience && p->since_best >= s->patience)
        p->stop = 1;
}

/* What to do with a trial that has not started. */
enum { READY_DONE, READY_WAIT, READY_RUN, READY_REPORT };

/* Answer t without running it when the cache, a pruning rule or an earlier
 * trial's trace can (READY_DONE, t finished); READY_WAIT while a trial of
 * the same trace runs (its trace will serve); READY_REPORT with *origin a
 * trial whose trace t re-reports; else READY_RUN. */
static int ready(struct search *s, struct progress *p, struct search_trial *t, const struct search_trial **origin)
{
    if (t->invalid) {
        t->status = SEARCH_FAILED;
        t->iteration_s = t->peak_bytes = -1;
        return READY_DONE;
    }
    /* pruning first: what a search answers does not depend on what its
     * cache happens to hold */
    if (search_prune(&s->space, t, p->done, p->ndone))
        return READY_DONE;
    if (search_trial_done(t)) {
        t->cached = 1;
        search_trial_read(t, -1);
        return READY_DONE;
    }
    if (!s->reuse)
        return READY_RUN;
    for (int d = 0; d < p->ndone; d++) {
        const struct search_trial *o = p->done[d];
        if (o->trace_k1 != t->trace_k1 || o->trace_k2 != t->trace_k2 || o->reused[0] || o->pruned_by[0] ||
            (o->status != SEARCH_OK && o->status != SEARCH_OOM))
            continue;
        const double gib = 1024.0 * 1024.0 * 1024.0;
        if (o->status == SEARCH_OOM && t->gpu_memory_bytes > o->gpu_memory_bytes)
            continue; /* more memory than the one that ran out: emulate it */
        if (o->status == SEARCH_OOM || o->peak_bytes > t->gpu_memory_bytes) {
            /* the ranks allocate the same on either GPU */
            t->status = SEARCH_OOM;
            t->iteration_s = -1;
            t->peak_bytes = o->peak_bytes;
            snprintf(t->reused, sizeof t->reused, "%s", o->id);
            if (o->status == SEARCH_OOM)
                snprintf(t->reason, sizeof t->reason, "out of GPU memory: trials/%s, the same ranks, ran out on "
                         "%.2f GiB, this GPU has %.2f GiB", o->id, o->gpu_memory_bytes / gib,
                         t->gpu_memory_bytes / gib);
            else
                snprintf(t->reason, sizeof t->reason, "out of GPU memory: the same ranks (trials/%s) need %.2f GiB, "
                         "this GPU has %.2f GiB", o->id, o->peak_bytes / gib, t->gpu_memory_bytes / gib);
            return READY_DONE;
        }
        *origin = o;
        return READY_REPORT;
    }
    for (int i = 0; i < s->ntrials; i++)
        if (s->trials[i].phase == 1 && s->trials[i].trace_k1 == t->trace_k1 &&
            s->trials[i].trace_k2 == t->trace_k2 && !s->trials[i].reused[0])
            return READY_WAIT;
    return READY_RUN;
}

/* t's directory made ready and the command that produces its report
 * (malloc'd, search_free_argv): maya run, or maya report of origin's
 * trace for t's GPU and cluster. NULL with a message on error. */
static char **trial_command(struct search *s, struct search_trial *t, const struct search_trial *origin)
{
    struct argv_list l = { 0 };
    const struct target *tg = &s->targets[t->target];
    int rc = push_arg(&l, s->exe);
    if (origin) {
        /* the trial's cluster as resolved for its GPU, in its directory */
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/search-cluster.conf", t->dir);
        snprintf(t->reused, sizeof t->reused, "%s", origin->id);
        rc = rc < 0 || search_trial_prepare_reuse(t, origin->dir) < 0 ? -1 : 0;
        FILE *fp = rc == 0 ? fopen(path, "w") : NULL;
        if (fp) {
            maya_cluster_spec_print(fp, &tg->spec);
            rc = fclose(fp) != 0 ? maya_error("cannot write %s: %m", path) : 0;
        } else if (rc == 0) {
            rc = maya_error("cannot create %s: %m", path);
        }
        if (rc == 0)
            rc = push_arg(&l, "report") < 0 || push_arg(&l, "-q") < 0 || push_all(&l, s->report_opts.argv) < 0 ||
                 push_arg(&l, "-g") < 0 || push_arg(&l, tg->gpu_key) < 0 || push_arg(&l, "--cluster") < 0 ||
                 push_arg(&l, path) < 0 || push_arg(&l, t->dir) < 0 ? -1 : 0;
    } else {
        rc = rc < 0 || search_trial_prepare(t) < 0 || push_arg(&l, "run") < 0 || push_all(&l, s->run_opts.argv) < 0
                 ? -1 : 0;
        if (rc == 0 && t->gpus)
            rc = push_arg(&l, "-g") < 0 || push_arg(&l, t->gpus) < 0 ? -1 : 0;
        if (rc == 0 && t->cluster)
            rc = push_arg(&l, "--cluster") < 0 || push_arg(&l, t->cluster) < 0 ? -1 : 0;
        if (rc == 0)
            rc = push_arg(&l, "-o") < 0 || push_arg(&l, t->dir) < 0 || push_arg(&l, "--") < 0 ||
                 push_all(&l, t->argv) < 0 ? -1 : 0;
    }
    if (rc < 0) {
        search_free_argv(l.argv);
        return NULL;
    }
    return l.argv;
}

/* A trial that could not start is failed, with the reason. */
static void not_started(struct search *s, struct progress *p, struct search_trial *t)
{
    t->status = SEARCH_FAILED;
    snprintf(t->reason, sizeof t->reason, "%s", maya_last_error());
    finish(s, p, t);
}

/* Local: start trials first.. in order, up to s->jobs running; answered
 * ones finish at once. */
static void start_more(struct search *s, struct progress *p, int first, int *running)
{
    for (int i = first; i < s->ntrials && !p->stop && !interrupted && *running < s->jobs; i++) {
        struct search_trial *t = &s->trials[i];
        const struct search_trial *origin = NULL;
        if (t->phase != 0)
            continue;
        int what = ready(s, p, t, &origin);
        if (what == READY_DONE) {
            finish(s, p, t);
            continue;
        }
        if (what == READY_WAIT)
            continue;
        char **argv = trial_command(s, t, origin);
        if (argv && search_trial_spawn(t, argv) == 0) {
            t->start_s = wall_now();
            t->phase = 1;
            (*running)++;
            p->run += !origin;
        } else {
            not_started(s, p, t);
        }
        search_free_argv(argv);
    }
}

/* Local: run trials first.. of s->trials, at most s->jobs at once, until
 * all ran, --patience trials in a row were no faster, or a signal came.
 * Finished ones are added to p->done. */
static void run_local(struct search *s, struct progress *p, int first)
{
    int running = 0, killed = 0;
    for (;;) {
        start_more(s, p, first, &running);
        if (running == 0)
            break;
        if (interrupted && !killed) {
            for (int i = 0; i < s->ntrials; i++)
                if (s->trials[i].pid > 0)
                    kill(s->trials[i].pid, SIGTERM);
            killed = 1;
        }
        int ws;
        pid_t pid = waitpid(-1, &ws, WNOHANG);
        if (pid < 0 && errno == ECHILD)
            break;
        if (pid <= 0) {
            struct timespec ts = { 0, 20 * 1000 * 1000 };
            nanosleep(&ts, NULL);
            continue;
        }
        for (int i = 0; i < s->ntrials; i++) {
            struct search_trial *t = &s->trials[i];
            if (t->pid != pid)
                continue;
            t->pid = 0;
            running--;
            if (!interrupted) { /* a trial stopped by the signal is no result */
                search_trial_read(t, ws);
                finish(s, p, t);
            } else {
                t->phase = 0;
            }
            break;
        }
    }
}

/* --slurm: waves of trials first.. as job arrays, each every trial that is
 * ready (at most s->jobs), until none is left, --patience, or a signal. A
 * trial whose task never finished goes into the next wave, at most
 * --retries times more. 0 or -1. */
static int run_slurm(struct search *s, struct progress *p, int first)
{
    int cap = s->ntrials - first, rc = 0;
    struct search_trial **wave = calloc(cap + 1, sizeof *wave);
    char ***argvs = calloc(cap + 1, sizeof *argvs);
    if (!wave || !argvs)
        rc = maya_error("out of memory");
    while (rc == 0 && !p->stop && !interrupted) {
        int n = 0;
        for (int i = first; i < s->ntrials && n < s->jobs && !p->stop; i++) {
            struct search_trial *t = &s->trials[i];
            const struct search_trial *origin = NULL;
            if (t->phase != 0)
                continue;
            int what = ready(s, p, t, &origin);
            if (what == READY_DONE)
                finish(s, p, t);
            if (what == READY_DONE || what == READY_WAIT)
                continue;
            if (!(argvs[n] = trial_command(s, t, origin))) {
                not_started(s, p, t);
                continue;
            }
            t->phase = 1;
            t->attempts++;
            s->resubmitted += t->attempts > 1;
            p->run += !origin && t->attempts == 1;
            wave[n++] = t;
        }
        if (n == 0)
            break;
        if (!s->quiet)
            fprintf(stderr, "maya search: submitting %d trial%s as a job array\n", n, n == 1 ? "" : "s");
        rc = search_slurm_run(&s->slurm, wave, argvs, n, &interrupted);
        for (int k = 0; k < n; k++) {
            struct search_trial *t = wave[k];
            int code = rc == 0 ? search_trial_exit_status(t) : -1;
            search_free_argv(argvs[k]);
            argvs[k] = NULL;
            if (code >= 0) {
                search_trial_read(t, code << 8);
                finish(s, p, t);
            } else if (rc == 0 && !interrupted && t->attempts > s->slurm.retries) {
                t->status = SEARCH_FAILED;
                snprintf(t->reason, sizeof t->reason, "its Slurm array task never finished, %d submission%s (last: "
                         "job %s task %d, slurm/wave-%d/task-%d.out)", t->attempts, t->attempts == 1 ? "" : "s",
                         s->slurm.last_job, k, s->slurm.waves, k);
                finish(s, p, t);
            } else {
                t->phase = 0; /* preempted or lost: submitted again (or left for a resumed search) */
                t->reused[0] = 0;
            }
        }
    }
    free(argvs);
    free(wave);
    return rc;
}

static int run_trials(struct search *s, struct progress *p, int first)
{
    if (s->use_slurm)
        return run_slurm(s, p, first);
    run_local(s, p, first);
    return 0;
}

/* A CMA-ES stops when this many generations in a row drew no new trial. */
#define CMAES_STALL 20

/* --strategy cmaes: draw a generation of points (value indexes of the
 * parameters that have more than one value), run the new ones, score every
 * point (a point or command line seen before gets its trial's result
 * without counting against the budget; oom and failed rank last), update,
 * until s->planned distinct trials, --patience, or CMAES_STALL generations
 * without a new point. 0 or -1. */
static int cmaes_trials(struct search *s, struct progress *p, const char *setup, size_t setup_len)
{
    const struct search_space *sp = &s->space;
    int n = 0, *dims = calloc(sp->nparams, sizeof *dims), *nvalues = calloc(sp->nparams, sizeof *nvalues);
    int *choice = calloc(sp->nparams, sizeof *choice);
    for (int i = 0; dims && nvalues && i < sp->nparams; i++)
        if (sp->params[i].nvalues > 1) {
            dims[n] = i;
            nvalues[n++] = sp->params[i].nvalues;
        }
    struct search_cmaes *c = dims && nvalues && choice ? search_cmaes_new(n, nvalues, 0, s->seed) : NULL;
    int lambda = c ? search_cmaes_lambda(c) : 0;
    int *index = calloc(lambda * n + 1, sizeof *index), *which = calloc(lambda + 1, sizeof *which);
    double *score = calloc(lambda + 1, sizeof *score);
    struct maya_map seen = { 0 };
    int rc = c && index && which && score ? 0 : maya_error("out of memory");
    s->population = lambda;
    for (int stall = 0; rc == 0 && !p->stop && !interrupted && s->ntrials < s->planned;) {
        if (stall >= CMAES_STALL) {
            snprintf(s->stop_reason, sizeof s->stop_reason, "%d generations drew no new configuration",
                     CMAES_STALL);
            break;
        }
        int first = s->ntrials, missing = 0;
        search_cmaes_ask(c, index);
        s->generations++;
        for (int k = 0; k < lambda && rc == 0; k++) {
            for (int j = 0; j < n; j++)
                choice[dims[j]] = index[k * n + j];
            int before = s->ntrials;
            which[k] = add_trial(s, &seen, choice, setup, setup_len);
            rc = which[k] == -1 ? -1 : 0;
            s->duplicates += which[k] >= 0 && s->ntrials == before;
        }
        if (rc < 0)
            break;
        if ((rc = run_trials(s, p, first)) < 0)
            break;
        for (int k = 0; k < lambda; k++) {
            const struct search_trial *t = which[k] >= 0 ? &s->trials[which[k]] : NULL;
            missing += !t || t->status == SEARCH_PENDING;
            /* a dominated trial is slower than the valid one that pruned it */
            score[k] = t && t->status == SEARCH_OK ? t->iteration_s
                     : t && t->status == SEARCH_PRUNED ? t->bound_s * (1 + 1e-9) : INFINITY;
        }
        if (missing) /* stopped, or out of trials */
            break;
        search_cmaes_tell(c, score);
        stall = s->ntrials > first ? 0 : stall + 1;
    }
    maya_map_free(&seen);
    search_cmaes_free(c);
    free(score);
    free(which);
    free(index);
    free(choice);
    free(nvalues);
    free(dims);
    return rc;
}

/* The path of this maya binary, for the trials' `maya run`. */
static int self_exe(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n < 0 || (size_t)n >= size - 1)
        return maya_error("cannot find the maya binary (/proc/self/exe): %m");
    buf[n] = 0;
    return 0;
}

static int mkdir_one(const char *path)
{
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return maya_error("cannot create directory %s: %m", path);
    return 0;
}

static void free_search(struct search *s)
{
    for (int i = 0; i < s->ntrials; i++)
        free_trial(&s->trials[i]);
    free(s->trials);
    for (int i = 0; i < s->ntargets; i++) {
        free(s->targets[i].key);
        free(s->targets[i].trace);
    }
    free(s->targets);
    search_free_argv(s->run_opts.argv);
    search_free_argv(s->report_opts.argv);
    search_free_argv(s->slurm.sbatch);
    maya_hwspecs_free(&s->hw);
    search_space_free(&s->space);
}

/* Parse the options; run_opts and report_opts get what passes on to the
 * trials. 0, 1 (--help), or 2 on bad usage. */
static int parse_args(struct search *s, int argc, char **argv, const char **out, int *cmd_at)
{
    struct pipeline_opts popts = { 0 };
    struct argv_list sbatch = { 0 };
    int i, explicit_jobs = 0;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--"))
            break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            s->quiet = 1;
            continue;
        }
        if (!strcmp(a, "--no-reuse") || !strcmp(a, "--slurm")) {
            *(a[2] == 'n' ? &s->reuse : &s->use_slurm) = a[2] != 'n';
            continue;
        }
        if (a[0] != '-') {
            maya_error("\"%s\": expected an option, or -- before the command", a);
            return 2;
        }
        if (!v) {
            maya_error("%s: expected a value after it", a);
            return 2;
        }
        int rc = 0;
        i++;
        if (!strcmp(a, "--param"))
            rc = search_space_add_param(&s->space, v);
        else if (!strcmp(a, "--flag"))
            rc = search_space_add_flag(&s->space, v);
        else if (!strcmp(a, "--prune"))
            rc = search_prune_add(&s->space, v);
        else if (!strcmp(a, "-g") || !strcmp(a, "--gpus"))
            s->gpus = v;
        else if (!strcmp(a, "--cluster"))
            s->cluster = v;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            *out = v;
        else if (!strcmp(a, "--price")) {
            if (maya_parse_double(v, &s->price) < 0 || !(s->price > 0) || s->price > 1e9)
                rc = maya_error("--price \"%s\": expected the cost of one GPU-hour, a number above 0", v);
        } else if (!strcmp(a, "-n") || !strcmp(a, "--nproc") || !strcmp(a, "--timeout")) {
            /* maya run's: checked here, passed on to every trial */
            double secs;
            int nproc;
            if (strcmp(a, "--timeout"))
                rc = parse_count(a, v, 1, &nproc);
            else if (maya_parse_double(v, &secs) < 0 || secs <= 0)
                rc = maya_error("%s \"%s\": expected a number of seconds above 0", a, v);
            if (rc == 0)
                rc = push_arg(&s->run_opts, a) < 0 || push_arg(&s->run_opts, v) < 0 ? -1 : 0;
        } else if (!strcmp(a, "--run-option"))
            rc = push_arg(&s->run_opts, v);
        else if (!strcmp(a, "--sbatch"))
            rc = push_arg(&sbatch, v);
        else if (!strcmp(a, "--retries"))
            rc = parse_count(a, v, 0, &s->slurm.retries);
        else if (!strcmp(a, "-j") || !strcmp(a, "--jobs"))
            rc = parse_count(a, v, 1, &s->jobs), explicit_jobs = 1;
        else if (!strcmp(a, "--trials"))
            rc = parse_count(a, v, 1, &s->requested);
        else if (!strcmp(a, "--patience"))
            rc = parse_count(a, v, 1, &s->patience);
        else if (!strcmp(a, "--seed"))
            rc = maya_parse_u64(v, &s->seed) < 0 ? maya_error("--seed \"%s\": expected a whole number", v) : 0;
        else if (!strcmp(a, "--strategy")) {
            for (s->strategy = 0; s->strategy < 3 && strcmp(v, strategy_name[s->strategy]); s->strategy++)
                ;
            if (s->strategy == 3)
                rc = maya_error("--strategy \"%s\": expected grid, random or cmaes", v);
        } else if ((rc = pipeline_parse_option(&popts, a, v)) == 1) {
            /* the report pipeline's: checked below, passed on to every trial */
            rc = push_arg(&s->run_opts, a) < 0 || push_arg(&s->run_opts, v) < 0 || push_arg(&s->report_opts, a) < 0 ||
                 push_arg(&s->report_opts, v) < 0 ? -1 : 0;
        } else if (rc == 0) {
            rc = maya_error("unknown option \"%s\" (maya search --help lists them)", a);
        }
        if (rc < 0) {
            search_free_argv(sbatch.argv);
            return 2;
        }
    }
    s->slurm.sbatch = sbatch.argv;
    s->slurm.nsbatch = sbatch.n;
    if (i >= argc - 1) {
        maya_error("no command: expected maya search [OPTIONS] --param NAME=V1,... -- CMD [ARGS...]");
        return 2;
    }
    if (pipeline_check_options(&popts) < 0)
        return 2;
    if (s->requested && s->strategy == GRID) {
        maya_error("--trials %d: only --strategy random or cmaes runs a number of trials (grid runs every "
                   "combination)", s->requested);
        return 2;
    }
    if (sbatch.n && !s->use_slurm) {
        maya_error("--sbatch %s: sbatch options apply with --slurm only", sbatch.argv[0]);
        return 2;
    }
    for (int k = 0; k < s->space.nparams; k++)
        if (s->space.params[k].target == SEARCH_TARGET_GPUS ? s->gpus != NULL
            : s->space.params[k].target == SEARCH_TARGET_CLUSTER && s->cluster) {
            maya_error("--param %s and %s both give the trials' %s: expected one of them", s->space.params[k].name,
                       s->space.params[k].target == SEARCH_TARGET_GPUS ? "-g" : "--cluster",
                       s->space.params[k].name);
            return 2;
        }
    if (s->gpus && strchr(s->gpus, ',')) {
        /* several GPU sets: a parameter, varying fastest, so that a trial
         * that only changes the GPU type follows the one whose trace it
         * can re-report */
        char *spec = NULL;
        int bad = asprintf(&spec, "gpus=%s", s->gpus) < 0 || search_space_add_param(&s->space, spec) < 0;
        free(spec);
        if (bad)
            return 2;
        s->gpus = NULL;
    }
    if (s->use_slurm && !explicit_jobs)
        s->jobs = 1000000;
    *cmd_at = i + 1;
    return 0;
}

int cmd_search(int argc, char **argv)
{
    struct search s = { .jobs = 1, .seed = 1, .reuse = 1, .slurm = { .retries = 2 } };
    const char *out = "maya-search";
    int cmd_at = 0;
    double t0 = wall_now();
    if (self_exe(s.exe, sizeof s.exe) < 0) {
        free_search(&s);
        return 1;
    }
    int rc = parse_args(&s, argc, argv, &out, &cmd_at);
    if (rc == 0 && search_space_set_command(&s.space, argv + cmd_at, argc - cmd_at) < 0)
        rc = 2;
    if (rc != 0) {
        free_search(&s);
        return rc == 1 ? 0 : rc;
    }

    /* maya.conf's GPUs and cluster, as maya run would take them, so that
     * they are part of what identifies a trial */
    struct maya_conf conf;
    if (maya_conf_load((const void *)cmd_search, &conf) < 0 || cli_load_hwspecs(&s.hw) < 0) {
        free_search(&s);
        return 2;
    }
    int has_gpus = 0, has_cluster = 0;
    for (int i = 0; i < s.space.nparams; i++) {
        has_gpus |= s.space.params[i].target == SEARCH_TARGET_GPUS;
        has_cluster |= s.space.params[i].target == SEARCH_TARGET_CLUSTER;
    }
    if (!s.gpus && !has_gpus && conf.gpus[0])
        s.gpus = conf.gpus;
    if (!s.cluster && !has_cluster && conf.cluster[0])
        s.cluster = conf.cluster;
    char *setup = NULL;
    size_t setup_len = 0;
    FILE *key = open_memstream(&setup, &setup_len);
    if (key) {
        describe_setup(key, &s, &conf);
        fclose(key);
    }
    /* every target resolved now: a bad -g or --cluster value is bad usage */
    rc = key ? find_target(&s, s.gpus, s.cluster) : maya_error("out of memory");
    for (int i = 0; i < s.space.nparams && rc >= 0; i++)
        for (int k = 0; k < s.space.params[i].nvalues && rc >= 0; k++) {
            const struct search_param *p = &s.space.params[i];
            if (p->target)
                rc = find_target(&s, p->target == SEARCH_TARGET_GPUS ? p->values[k] : s.gpus,
                                 p->target == SEARCH_TARGET_CLUSTER ? p->values[k] : s.cluster);
        }
    if (rc < 0) {
        free(setup);
        free_search(&s);
        return 2;
    }
    int whatif = has_gpus || s.price > 0;
    for (int i = 0; i < s.ntargets; i++)
        whatif |= s.targets[i].price > 0;

    /* cmaes: at most --trials distinct trials, by default 20 per dimension
     * and 20 (on test_search_cmaes's 10 x 10 x 8 bowl, 80 found the minimum
     * for each of 200 seeds, 50 for 131); a space within that budget is run
     * whole, in grid order */
    int cmaes = 0;
    if (s.strategy == CMAES) {
        int dims = 0;
        for (int i = 0; i < s.space.nparams; i++)
            dims += s.space.params[i].nvalues > 1;
        uint64_t budget = s.requested ? (uint64_t)s.requested : 20 * (uint64_t)dims + 20;
        cmaes = budget < s.space.combinations;
        if (!cmaes && !s.quiet)
            fprintf(stderr, "maya search: --strategy cmaes: %llu combination%s, within %llu trials: running every "
                    "combination (grid)\n", (unsigned long long)s.space.combinations,
                    s.space.combinations == 1 ? "" : "s", (unsigned long long)budget);
        s.strategy = cmaes ? CMAES : GRID;
        s.planned = cmaes ? (int)budget : 0;
    }
    char trials_dir[PATH_MAX];
    if (maya_snprintf(trials_dir, sizeof trials_dir, "%s/trials", out) < 0 || mkdir_one(out) < 0 ||
        mkdir_one(trials_dir) < 0 || !realpath(out, s.dir) ||
        maya_snprintf(s.slurm.dir, sizeof s.slurm.dir, "%s/slurm", s.dir) < 0 ||
        (cmaes ? !(s.trials = calloc(s.planned, sizeof *s.trials)) : plan_trials(&s, setup, setup_len) < 0)) {
        maya_error("cannot prepare the search in %s", out);
        free(setup);
        free_search(&s);
        return 1;
    }

    /* trials side by side share the CPUs: time their host work on the cpu clock */
    const char *clock = getenv("MAYA_HOST_CLOCK");
    if ((s.jobs > 1 || s.use_slurm) && (!clock || !*clock || !strcmp(clock, "auto")))
        setenv("MAYA_HOST_CLOCK", "cpu", 1);

    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    char at_once[48];
    if (s.use_slurm && s.jobs >= 1000000)
        snprintf(at_once, sizeof at_once, "as Slurm job arrays");
    else
        snprintf(at_once, sizeof at_once, "%d at a time%s", s.jobs, s.use_slurm ? " (Slurm job arrays)" : "");
    if (!s.quiet && cmaes)
        fprintf(stderr, "maya search: cmaes, at most %d trials (%llu combinations), %s -> %s\n", s.planned,
                (unsigned long long)s.space.combinations, at_once, out);
    else if (!s.quiet)
        fprintf(stderr, "maya search: %d trial%s (%llu combination%s, %d duplicate%s), %s -> %s\n", s.ntrials,
                s.ntrials == 1 ? "" : "s", (unsigned long long)s.space.combinations,
                s.space.combinations == 1 ? "" : "s", s.duplicates, s.duplicates == 1 ? "" : "s", at_once, out);

    struct search_trial **done = calloc(s.planned ? s.planned : 1, sizeof *done);
    if (!done) {
        maya_error("out of memory");
        free(setup);
        free_search(&s);
        return 1;
    }
    struct progress p = { .done = done, .best_s = -1 };
    rc = s.use_slurm ? search_slurm_resume(&s.slurm, s.quiet, &interrupted) : 0;
    if (rc == 0 && cmaes)
        rc = cmaes_trials(&s, &p, setup, setup_len);
    else if (rc == 0)
        rc = run_trials(&s, &p, 0);
    if (rc < 0)
        fprintf(stderr, "maya: %s\n", maya_last_error());
    free(setup);
    if (p.stop && p.ndone < s.planned)
        snprintf(s.stop_reason, sizeof s.stop_reason, "--patience trials without a faster one");
    struct search_result res = {
        .space = &s.space, .trials = done, .ntrials = p.ndone, .gpus = s.gpus, .cluster = s.cluster,
        .strategy = strategy_name[s.strategy], .seed = s.seed, .requested = s.requested, .patience = s.patience,
        .duplicates = s.duplicates, .run = p.run, .stopped_early = s.stop_reason[0] != 0,
        .stop_reason = s.stop_reason[0] ? s.stop_reason : NULL, .planned = s.planned,
        .population = s.population, .generations = s.generations, .pruned = s.pruned, .reused = s.reused,
        .whatif = whatif, .resubmitted = s.resubmitted, .slurm = s.use_slurm ? &s.slurm : NULL,
    };
    for (int i = 0; i < res.ntrials; i++)
        res.cached += done[i]->cached;
    search_sort(&res);
    res.wall_s = wall_now() - t0;
    search_print_table(stdout, &res);
    fflush(stdout);
    int ok = res.ntrials > 0 && done[0]->status == SEARCH_OK;
    rc = rc < 0 || search_write_files(s.dir, &res) < 0 ? 1 : ok ? 0 : 1;
    if (!s.quiet && cmaes)
        fprintf(stderr, "maya search: %d generations of %d, %d point%s seen before\n", s.generations,
                s.population, s.duplicates, s.duplicates == 1 ? "" : "s");
    if (!s.quiet && s.use_slurm)
        fprintf(stderr, "maya search: %d job array%s of %d task%s in all (%d resubmitted), %.1f s from "
                "submission to the queue empty\n", s.slurm.waves, s.slurm.waves == 1 ? "" : "s", s.slurm.tasks,
                s.slurm.tasks == 1 ? "" : "s", s.resubmitted, s.slurm.array_s);
    if (!s.quiet) {
        char extra[64] = "";
        if (res.pruned || res.reused)
            snprintf(extra, sizeof extra, ", %d pruned, %d re-reported", res.pruned, res.reused);
        fprintf(stderr, "maya search: %d trial%s finished (%d run, %d from the cache%s)%s%s; %.1f s; %s/search.txt, "
                "search.json\n", res.ntrials, res.ntrials == 1 ? "" : "s", res.run, res.cached, extra,
                res.stop_reason ? ", stopped: " : "", res.stop_reason ? res.stop_reason : "", res.wall_s, out);
    }
    if (interrupted) {
        maya_error("interrupted; the trials that finished are in %s", out);
        rc = 130;
    }
    free(done);
    free_search(&s);
    return rc;
}

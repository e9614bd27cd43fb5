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
        "                           every --param must appear as {NAME} in CMD ARGS\n"
        "  -g, --gpus GPUxCOUNT     emulated GPUs of every trial (as maya run -g)\n"
        "  --cluster FILE|NAME      cluster description (as maya run --cluster)\n"
        "  -n, --nproc N            processes per trial (as maya run -n)\n"
        "  -o, --output DIR         search directory: search.txt, search.json and trials/\n"
        "                           (default: maya-search); trials found there are reused\n"
        "  -j, --jobs N             trials run at once (default 1)\n"
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
        "With -j above 1 the trials share this machine's CPUs, so their host gaps are measured\n"
        "on the cpu clock (MAYA_HOST_CLOCK=cpu) unless MAYA_HOST_CLOCK says otherwise.\n"
        "Exit status: 0 at least one trial was valid; 1 none was; 2 bad usage.\n",
        PIPELINE_OPTIONS_HELP);
}

enum { GRID, RANDOM, CMAES };
static const char *const strategy_name[] = { "grid", "random", "cmaes" };

struct search {
    struct search_space space;
    struct search_runner runner;
    struct search_trial *trials;
    int ntrials;
    int duplicates;
    int jobs, strategy, requested, patience, quiet;
    int planned;                /* trials at most: grid, random all planned; cmaes its budget */
    int population, generations; /* cmaes */
    char stop_reason[96];       /* why it ended before its planned trials, or "" */
    uint64_t seed;
    char dir[PATH_MAX];
};

static volatile sig_atomic_t interrupted;

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

static int push_arg(struct search_runner *r, const char *a)
{
    char **grown = realloc(r->run_argv, (r->nrun_argv + 2) * sizeof *grown);
    if (!grown || !(grown[r->nrun_argv] = strdup(a)))
        return maya_error("out of memory");
    r->run_argv = grown;
    r->run_argv[++r->nrun_argv] = NULL;
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

/* What makes two trials the same besides their command: maya's version, the
 * GPUs (resolved to the hwspec key), the hwspec files and trained models,
 * the cluster (a file's contents), maya run's options (with the files they
 * name) and maya.conf's defaults for them. */
static int describe_setup(FILE *key, const struct maya_conf *conf, const char *gpus, const char *cluster,
                          const char *const *opts, int nopts)
{
    fprintf(key, "maya search trial 1\nmaya %s\n", MAYA_VERSION);
    struct maya_hwspecs hw;
    if (cli_load_hwspecs(&hw) < 0)
        return -1;
    const struct maya_gpu_spec *gpu;
    int count, rc = gpus ? maya_parse_gpu_count(&hw, gpus, &gpu, &count) : 0;
    if (gpus && rc == 0)
        fprintf(key, "gpus=%sx%d\n", gpu->key, count);
    for (size_t i = 0; i < hw.ngpus; i++)
        stamp_file(key, hw.gpus[i].file);
    for (size_t i = 0; i < hw.nclusters; i++)
        stamp_file(key, hw.clusters[i].file);
    maya_hwspecs_free(&hw);
    if (rc < 0)
        return -1;
    stamp_models(key);
    struct stat st;
    if (cluster && stat(cluster, &st) == 0) {
        char *text;
        size_t len;
        if (maya_read_file(cluster, &text, &len) < 0)
            return -1;
        fprintf(key, "cluster file %zu\n", len);
        fwrite(text, 1, len, key);
        free(text);
    } else if (cluster) {
        fprintf(key, "cluster=%s\n", cluster);
    }
    for (int i = 0; i < nopts; i++) {
        fprintf(key, "%s\n", opts[i]);
        stamp_file(key, opts[i]);
    }
    fprintf(key, "conf estimator=%s oracle=%s marker=%s iterations=%d timeout=%g copy_threshold=%llu\n",
            conf->estimator, conf->oracle, conf->iteration_marker, conf->iterations, conf->timeout_s,
            (unsigned long long)conf->copy_threshold);
    if (conf->oracle[0])
        stamp_file(key, conf->oracle);
    const char *thr = getenv("MAYA_COPY_THRESHOLD");
    fprintf(key, "MAYA_COPY_THRESHOLD=%s\n", thr ? thr : "");
    return 0;
}

static void free_trial(struct search_trial *t)
{
    free(t->choice);
    search_free_argv(t->argv);
    free(t->key);
    free(t->dir);
    memset(t, 0, sizeof *t);
}

/* Trial t for a choice of value indexes: its command, key and directory.
 * 0 or -1. */
static int make_trial(const struct search *s, struct search_trial *t, const int *choice, const char *setup,
                      size_t setup_len)
{
    size_t len = 0;
    FILE *fp = open_memstream(&t->key, &len);
    t->choice = calloc(s->space.nparams, sizeof *t->choice);
    if (fp && t->choice) {
        memcpy(t->choice, choice, s->space.nparams * sizeof *choice);
        t->argv = search_space_command(&s->space, t->choice);
    }
    if (fp) {
        fwrite(setup, 1, setup_len, fp);
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
    if (!fp || fclose(fp) != 0 || !t->argv)
        return maya_error("out of memory");
    t->keylen = len;
    search_hash_hex(t->key, len, t->id);
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
    return t->status == SEARCH_OK ? "ok" : t->status == SEARCH_OOM ? "oom" : "failed";
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
    fprintf(stderr, "%s\n", t->cached ? " (cached)" : "");
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

static void finish(const struct search *s, struct progress *p, struct search_trial *t)
{
    p->done[p->ndone++] = t;
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

/* Start trials, up to s->jobs running; cached ones finish at once. */
static void start_more(struct search *s, struct progress *p, int *next, int *running)
{
    while (!p->stop && !interrupted && *running < s->jobs && *next < s->ntrials) {
        struct search_trial *t = &s->trials[(*next)++];
        if (search_trial_done(t)) {
            t->cached = 1;
            search_trial_read(t, -1);
        } else if (search_trial_start(&s->runner, t) == 0) {
            (*running)++;
            p->run++;
            continue;
        } else {
            t->status = SEARCH_FAILED;
            snprintf(t->reason, sizeof t->reason, "%s", maya_last_error());
        }
        finish(s, p, t);
    }
}

/* Run trials first.. of s->trials, at most s->jobs at once, in order, until
 * all ran, --patience trials in a row were no faster, or a signal came.
 * Finished ones are added to p->done. Returns the first trial not started. */
static int run_trials(struct search *s, struct progress *p, int first)
{
    int next = first, running = 0, killed = 0;
    for (;;) {
        start_more(s, p, &next, &running);
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
            }
            break;
        }
    }
    return next;
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
        run_trials(s, p, first);
        for (int k = 0; k < lambda; k++) {
            const struct search_trial *t = which[k] >= 0 ? &s->trials[which[k]] : NULL;
            missing += !t || t->status == SEARCH_PENDING;
            score[k] = t && t->status == SEARCH_OK ? t->iteration_s : INFINITY;
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
    search_free_argv(s->runner.run_argv);
    search_space_free(&s->space);
}

/* Parse the options; the runner gets maya run's. 0, or 2 on bad usage. */
static int parse_args(struct search *s, int argc, char **argv, const char **out, const char **gpus,
                      const char **cluster, int *cmd_at)
{
    struct pipeline_opts popts = { 0 };
    int i;
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
        else if (!strcmp(a, "-g") || !strcmp(a, "--gpus"))
            *gpus = v;
        else if (!strcmp(a, "--cluster"))
            *cluster = v;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            *out = v;
        else if (!strcmp(a, "-n") || !strcmp(a, "--nproc") || !strcmp(a, "--timeout")) {
            /* maya run's: checked here, passed on to every trial */
            double secs;
            int nproc;
            if (strcmp(a, "--timeout"))
                rc = parse_count(a, v, 1, &nproc);
            else if (maya_parse_double(v, &secs) < 0 || secs <= 0)
                rc = maya_error("%s \"%s\": expected a number of seconds above 0", a, v);
            if (rc == 0)
                rc = push_arg(&s->runner, a) < 0 || push_arg(&s->runner, v) < 0 ? -1 : 0;
        } else if (!strcmp(a, "-j") || !strcmp(a, "--jobs"))
            rc = parse_count(a, v, 1, &s->jobs);
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
            rc = push_arg(&s->runner, a) < 0 || push_arg(&s->runner, v) < 0 ? -1 : 0;
        } else if (rc == 0) {
            rc = maya_error("unknown option \"%s\" (maya search --help lists them)", a);
        }
        if (rc < 0)
            return 2;
    }
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
    *cmd_at = i + 1;
    return 0;
}

int cmd_search(int argc, char **argv)
{
    struct search s = { .jobs = 1, .seed = 1 };
    const char *out = "maya-search", *gpus = NULL, *cluster = NULL;
    int cmd_at = 0;
    char exe[PATH_MAX];
    /* maya run is the first of the runner's arguments: the options follow */
    if (self_exe(exe, sizeof exe) < 0 || push_arg(&s.runner, exe) < 0 || push_arg(&s.runner, "run") < 0) {
        free_search(&s);
        return 1;
    }
    int rc = parse_args(&s, argc, argv, &out, &gpus, &cluster, &cmd_at);
    if (rc == 0 && search_space_set_command(&s.space, argv + cmd_at, argc - cmd_at) < 0)
        rc = 2;
    if (rc != 0) {
        free_search(&s);
        return rc == 1 ? 0 : rc;
    }

    /* maya.conf's GPUs and cluster, as maya run would take them, so that
     * they are part of what identifies a trial */
    struct maya_conf conf;
    if (maya_conf_load((const void *)cmd_search, &conf) < 0) {
        free_search(&s);
        return 2;
    }
    if (!gpus && conf.gpus[0])
        gpus = conf.gpus;
    if (!cluster && conf.cluster[0])
        cluster = conf.cluster;
    char *setup = NULL;
    size_t setup_len = 0;
    FILE *key = open_memstream(&setup, &setup_len);
    rc = key ? describe_setup(key, &conf, gpus, cluster, (const char *const *)s.runner.run_argv + 2,
                              s.runner.nrun_argv - 2) : maya_error("out of memory");
    if (key)
        fclose(key);
    if (rc == 0 && gpus)
        rc = push_arg(&s.runner, "-g") < 0 || push_arg(&s.runner, gpus) < 0 ? -1 : 0;
    if (rc == 0 && cluster)
        rc = push_arg(&s.runner, "--cluster") < 0 || push_arg(&s.runner, cluster) < 0 ? -1 : 0;
    if (rc < 0) {
        free(setup);
        free_search(&s);
        return 2;
    }

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
        (cmaes ? !(s.trials = calloc(s.planned, sizeof *s.trials)) : plan_trials(&s, setup, setup_len) < 0)) {
        maya_error("cannot prepare the search in %s", out);
        free(setup);
        free_search(&s);
        return 1;
    }

    /* trials side by side share the CPUs: time their host work on the cpu clock */
    const char *clock = getenv("MAYA_HOST_CLOCK");
    if (s.jobs > 1 && (!clock || !*clock || !strcmp(clock, "auto")))
        setenv("MAYA_HOST_CLOCK", "cpu", 1);

    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (!s.quiet && cmaes)
        fprintf(stderr, "maya search: cmaes, at most %d trials (%llu combinations), %d at a time -> %s\n",
                s.planned, (unsigned long long)s.space.combinations, s.jobs, out);
    else if (!s.quiet)
        fprintf(stderr, "maya search: %d trial%s (%llu combination%s, %d duplicate%s), %d at a time -> %s\n",
                s.ntrials, s.ntrials == 1 ? "" : "s", (unsigned long long)s.space.combinations,
                s.space.combinations == 1 ? "" : "s", s.duplicates, s.duplicates == 1 ? "" : "s", s.jobs, out);

    struct search_trial **done = calloc(s.planned ? s.planned : 1, sizeof *done);
    if (!done) {
        maya_error("out of memory");
        free(setup);
        free_search(&s);
        return 1;
    }
    struct progress p = { .done = done, .best_s = -1 };
    if (cmaes)
        rc = cmaes_trials(&s, &p, setup, setup_len);
    else
        run_trials(&s, &p, 0);
    free(setup);
    if (p.stop && p.ndone < s.planned)
        snprintf(s.stop_reason, sizeof s.stop_reason, "--patience trials without a faster one");
    struct search_result res = {
        .space = &s.space, .trials = done, .ntrials = p.ndone, .gpus = gpus, .cluster = cluster,
        .strategy = strategy_name[s.strategy], .seed = s.seed, .requested = s.requested, .patience = s.patience,
        .duplicates = s.duplicates, .run = p.run, .stopped_early = s.stop_reason[0] != 0,
        .stop_reason = s.stop_reason[0] ? s.stop_reason : NULL, .planned = s.planned,
        .population = s.population, .generations = s.generations,
    };
    for (int i = 0; i < res.ntrials; i++)
        res.cached += done[i]->cached;
    search_sort(&res);
    search_print_table(stdout, &res);
    fflush(stdout);
    int ok = res.ntrials > 0 && done[0]->status == SEARCH_OK;
    rc = rc < 0 || search_write_files(s.dir, &res) < 0 ? 1 : ok ? 0 : 1;
    if (!s.quiet && cmaes)
        fprintf(stderr, "maya search: %d generations of %d, %d point%s seen before\n", s.generations,
                s.population, s.duplicates, s.duplicates == 1 ? "" : "s");
    if (!s.quiet)
        fprintf(stderr, "maya search: %d trial%s finished (%d run, %d from the cache)%s%s; %s/search.txt, "
                "search.json\n", res.ntrials, res.ntrials == 1 ? "" : "s", res.run, res.cached,
                res.stop_reason ? ", stopped: " : "", res.stop_reason ? res.stop_reason : "", out);
    if (interrupted) {
        maya_error("interrupted; the trials that finished are in %s", out);
        rc = 130;
    }
    free(done);
    free_search(&s);
    return rc;
}

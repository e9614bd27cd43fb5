/* maya search [OPTIONS] --param NAME=V1,V2,... [--param ...] -- CMD [ARGS...]
 *
 * Finds the fastest configuration of a workload for a fixed GPU budget: each
 * trial is CMD with its parameters' values substituted for {NAME}, run by
 * `maya run` in DIR/trials/<hash>/ and scored by the simulated steady-state
 * iteration time; a trial that ran out of memory or failed is invalid.
 * Trials with equal command lines run once; a trial whose directory holds a
 * complete report is not run again. This file is the command: its options,
 * the setup and targets every trial shares, and the summary; the search
 * itself is in search/ (search.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "pipeline.h"
#include "search.h"
#include "maya/common.h"
#include "maya/config.h"
#include "maya/hwspec.h"

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
        "  --require EXPR           only combinations where EXPR (as in {=EXPR}, with < <= > >=\n"
        "                           == !=, a --flag 0 or 1) is not 0 run: the others are failed\n"
        "                           without running and cost no trial, e.g. 'pp > vstage'\n"
        "  -g, --gpus GPUxCOUNT[,...] emulated GPUs of every trial (as maya run -g); several:\n"
        "                           a parameter gpus (a what-if over GPU types and counts)\n"
        "  --cluster FILE|NAME      cluster description (as maya run --cluster)\n"
        "  --price X                what one GPU-hour costs (default: the cluster's\n"
        "                           price_per_gpu_hour); adds GPU-hours and cost per 1,000\n"
        "                           iterations to the table\n"
        "  -n, --nproc N            processes per trial (as maya run -n)\n"
        "  --run-option OPT         one more option for every trial's maya run (repeatable);\n"
        "                           {NAME} and {=EXPR} in it take the trial's values\n"
        "  --replicas N:STRIDE[,...] maya run --replicas for every trial, with {NAME} and\n"
        "                           {=EXPR} taking the trial's values and entries whose N is 1\n"
        "                           left out, e.g. '{=32 / (tp * pp)}:{tp}'\n"
        "  --no-reuse               emulate every trial, even one whose ranks do the same as an\n"
        "                           earlier trial's (by default a trial that differs only in\n"
        "                           the GPU type, or in a cluster of the same node layout,\n"
        "                           re-reports that trace with maya report -g/--cluster)\n"
        "  -o, --output DIR         search directory: search.txt, search.json and trials/\n"
        "                           (default: maya-search); trials found there are reused\n"
        "  --replay DIR             run nothing: answer each trial from the earlier search in DIR\n"
        "                           of the same parameters (its search.txt and trials/), with\n"
        "                           its recorded time; to compare strategies on a measured space\n"
        "  -j, --jobs N             trials run at once (default 1; --slurm: a job array's size,\n"
        "                           default every trial that is ready)\n"
        "  --slurm                  run the trials as Slurm job arrays (sbatch), one array task\n"
        "                           a trial; DIR must be on a file system the nodes share\n"
        "  --sbatch OPT             one more sbatch option for the arrays (repeatable)\n"
        "  --retries N              --slurm: submit a trial whose task never finished (preempted,\n"
        "                           cancelled, node failure) up to N more times (default 2)\n"
        "  --srun-nodes N           --slurm: each array task is N nodes, and its trial's ranks are\n"
        "                           spread over them by srun --maya-emulate (maya-srun(1)) instead\n"
        "                           of one maya run on one node; no trial options, no reuse\n"
        "  --strategy grid|random|cmaes\n"
        "                           every combination (default), --trials N drawn at random,\n"
        "                           or a CMA-ES that samples the value indexes a generation at\n"
        "                           a time and moves toward the fastest (for large spaces)\n"
        "  --trials N               random, cmaes: at most N distinct trials run (default: random\n"
        "                           all; cmaes 20 x parameters with 2 values or more + 20); a\n"
        "                           trial a pruning rule answers, or an invalid one, is free\n"
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

static const char *const strategy_name[] = { "grid", "random", "cmaes" };

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

/* Parse the options; run_opts and report_opts get what passes on to the
 * trials. 0, 1 (--help), or 2 on bad usage. */
static int parse_args(struct search *s, int argc, char **argv, const char **out, const char **replay, int *cmd_at)
{
    struct pipeline_opts popts = { 0 };
    struct search_argv sbatch = { 0 };
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
        else if (!strcmp(a, "--replay"))
            *replay = v;
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
                rc = search_argv_push(&s->run_opts, a) < 0 || search_argv_push(&s->run_opts, v) < 0 ? -1 : 0;
        } else if (!strcmp(a, "--run-option"))
            rc = search_argv_push(&s->run_opts, v);
        else if (!strcmp(a, "--replicas"))
            s->replicas = v;
        else if (!strcmp(a, "--require"))
            rc = search_argv_push(&s->requires, v);
        else if (!strcmp(a, "--sbatch"))
            rc = search_argv_push(&sbatch, v);
        else if (!strcmp(a, "--retries"))
            rc = parse_count(a, v, 0, &s->slurm.retries);
        else if (!strcmp(a, "--srun-nodes"))
            rc = parse_count(a, v, 1, &s->slurm.srun_nodes);
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
            rc = search_argv_push(&s->run_opts, a) < 0 || search_argv_push(&s->run_opts, v) < 0 || search_argv_push(&s->report_opts, a) < 0 ||
                 search_argv_push(&s->report_opts, v) < 0 ? -1 : 0;
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
    if (s->requested && s->strategy == SEARCH_GRID) {
        maya_error("--trials %d: only --strategy random or cmaes runs a number of trials (grid runs every "
                   "combination)", s->requested);
        return 2;
    }
    if (s->slurm.srun_nodes && !s->use_slurm) {
        maya_error("--srun-nodes %d: spreading a trial's ranks over nodes needs --slurm", s->slurm.srun_nodes);
        return 2;
    }
    if (s->slurm.srun_nodes && (s->run_opts.n || s->replicas)) {
        maya_error("--srun-nodes: \"%s\" is a maya run option, which srun --maya-emulate does not take; expected "
                   "no trial options with --srun-nodes", s->run_opts.n ? s->run_opts.argv[0] : "--replicas");
        return 2;
    }
    if (s->slurm.srun_nodes)
        s->reuse = 0; /* the plugin keeps no run directory in the trial's to re-report */
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
    struct search s = { .jobs = 1, .seed = 1, .reuse = 1, .slurm = { .retries = 2 }, .stop = &interrupted };
    const char *out = "maya-search", *replay_dir = NULL;
    struct search_replay replay = { 0 };
    int cmd_at = 0;
    double t0 = search_now_s();
    if (self_exe(s.exe, sizeof s.exe) < 0) {
        search_free(&s);
        return 1;
    }
    int rc = parse_args(&s, argc, argv, &out, &replay_dir, &cmd_at);
    if (rc == 0 && search_space_set_command(&s.space, argv + cmd_at, argc - cmd_at) < 0)
        rc = 2;
    for (int i = 0; rc == 0 && i < s.run_opts.n; i++)
        if (strchr(s.run_opts.argv[i], '{') && search_space_check_option(&s.space, "--run-option", s.run_opts.argv[i]) < 0)
            rc = 2;
    if (rc == 0 && s.replicas && search_space_check_option(&s.space, "--replicas", s.replicas) < 0)
        rc = 2;
    for (int i = 0; rc == 0 && i < s.requires.n; i++)
        if (search_space_check_require(&s.space, s.requires.argv[i]) < 0)
            rc = 2;
    if (rc == 0 && replay_dir)
        rc = search_replay_load(&replay, replay_dir, &s.space) < 0 ? 2 : 0;
    s.replay = replay_dir ? &replay : NULL;
    if (rc != 0) {
        search_free(&s);
        return rc == 1 ? 0 : rc;
    }

    /* maya.conf's GPUs and cluster, as maya run would take them, so that
     * they are part of what identifies a trial */
    struct maya_conf conf;
    if (maya_conf_load((const void *)cmd_search, &conf) < 0 || cli_load_hwspecs(&s.hw) < 0) {
        search_free(&s);
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
        search_describe_setup(key, &s, &conf);
        fclose(key);
    }
    /* every target resolved now: a bad -g or --cluster value is bad usage */
    rc = key ? search_find_target(&s, s.gpus, s.cluster) : maya_error("out of memory");
    for (int i = 0; i < s.space.nparams && rc >= 0; i++)
        for (int k = 0; k < s.space.params[i].nvalues && rc >= 0; k++) {
            const struct search_param *p = &s.space.params[i];
            if (p->target)
                rc = search_find_target(&s, p->target == SEARCH_TARGET_GPUS ? p->values[k] : s.gpus,
                                 p->target == SEARCH_TARGET_CLUSTER ? p->values[k] : s.cluster);
        }
    if (rc < 0) {
        free(setup);
        search_free(&s);
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
    if (s.strategy == SEARCH_CMAES) {
        int dims = 0;
        for (int i = 0; i < s.space.nparams; i++)
            dims += s.space.params[i].nvalues > 1;
        uint64_t budget = s.requested ? (uint64_t)s.requested : 20 * (uint64_t)dims + 20;
        cmaes = budget < s.space.combinations;
        if (!cmaes && !s.quiet)
            fprintf(stderr, "maya search: --strategy cmaes: %llu combination%s, within %llu trials: running every "
                    "combination (grid)\n", (unsigned long long)s.space.combinations,
                    s.space.combinations == 1 ? "" : "s", (unsigned long long)budget);
        s.strategy = cmaes ? SEARCH_CMAES : SEARCH_GRID;
        /* room for every combination: a pruned or invalid one costs no
         * budget, so more trials than the budget may be made (the array is
         * touched only as far as trials are made) */
        s.budget = cmaes ? (int)budget : 0;
        s.planned = s.capacity = cmaes ? (int)s.space.combinations : 0;
    }
    char trials_dir[PATH_MAX];
    if (maya_snprintf(trials_dir, sizeof trials_dir, "%s/trials", out) < 0 || mkdir_one(out) < 0 ||
        mkdir_one(trials_dir) < 0 || !realpath(out, s.dir) ||
        maya_snprintf(s.slurm.dir, sizeof s.slurm.dir, "%s/slurm", s.dir) < 0 ||
        (cmaes ? !(s.trials = calloc(s.capacity, sizeof *s.trials)) : search_plan_trials(&s, setup, setup_len) < 0)) {
        maya_error("cannot prepare the search in %s", out);
        free(setup);
        search_free(&s);
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
        fprintf(stderr, "maya search: cmaes, at most %d trials run (%llu combinations), %s -> %s\n", s.budget,
                (unsigned long long)s.space.combinations, at_once, out);
    else if (!s.quiet)
        fprintf(stderr, "maya search: %d trial%s (%llu combination%s, %d duplicate%s), %s -> %s\n", s.ntrials,
                s.ntrials == 1 ? "" : "s", (unsigned long long)s.space.combinations,
                s.space.combinations == 1 ? "" : "s", s.duplicates, s.duplicates == 1 ? "" : "s", at_once, out);

    struct search_trial **done = calloc(s.planned ? s.planned : 1, sizeof *done);
    if (!done) {
        maya_error("out of memory");
        free(setup);
        search_free(&s);
        return 1;
    }
    struct search_progress p = { .done = done, .best_s = -1 };
    rc = s.use_slurm ? search_slurm_resume(&s.slurm, s.quiet, &interrupted) : 0;
    if (rc == 0 && cmaes)
        rc = search_cmaes_trials(&s, &p, setup, setup_len);
    else if (rc == 0)
        rc = search_run_trials(&s, &p, 0);
    if (rc < 0)
        fprintf(stderr, "maya: %s\n", maya_last_error());
    free(setup);
    if (p.stop && p.ndone < s.planned && (!s.budget || p.spent < s.budget))
        snprintf(s.stop_reason, sizeof s.stop_reason, "--patience trials without a faster one");
    struct search_result res = {
        .space = &s.space, .trials = done, .ntrials = p.ndone, .gpus = s.gpus, .cluster = s.cluster,
        .strategy = strategy_name[s.strategy], .seed = s.seed, .requested = s.requested, .patience = s.patience,
        .duplicates = s.duplicates, .run = p.run, .stopped_early = s.stop_reason[0] != 0,
        .stop_reason = s.stop_reason[0] ? s.stop_reason : NULL, .planned = s.budget ? s.budget : s.planned,
        .population = s.population, .generations = s.generations, .pruned = s.pruned, .reused = s.reused,
        .whatif = whatif, .resubmitted = s.resubmitted, .slurm = s.use_slurm ? &s.slurm : NULL,
    };
    for (int i = 0; i < res.ntrials; i++)
        res.cached += done[i]->cached;
    search_sort(&res);
    res.wall_s = search_now_s() - t0;
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
    search_free(&s);
    return rc;
}

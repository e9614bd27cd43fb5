/* maya search's subsystem (the command is src/cmd_search.c): the space of
 * configurations (space.c), pruning rules (prune.c), the CMA-ES (cmaes.c),
 * a search's targets and trials (plan.c), running them (run.c; one trial in
 * trial.c, Slurm job arrays in slurm.c) and the results table and files
 * (output.c). */
#ifndef MAYA_SEARCH_H
#define MAYA_SEARCH_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "maya/config.h"
#include "maya/hwspec.h"
#include "maya/map.h"

/* At most this many combinations: grid runs them all, random shuffles them. */
#define SEARCH_MAX_COMBINATIONS 100000

/* What a parameter's name reserves (search_space_add_param): "gpus" is
 * each trial's -g, "cluster" its --cluster; either may also appear in the
 * command. */
enum { SEARCH_TARGET_GPUS = 1, SEARCH_TARGET_CLUSTER = 2 };

struct search_param {
    char *name;
    char **values;
    int nvalues;
    char *flag;     /* --flag: values off,on; {NAME} stands for these words when on */
    int target;     /* SEARCH_TARGET_*, or 0 */
    int memory;     /* --prune memory-up: +1, memory-down: -1, else 0 */
    int prefer;     /* --prune prefer-earlier */
};

/* The parameters and the command template they fill in. */
struct search_space {
    struct search_param *params;
    int nparams;
    char **tmpl;        /* CMD ARGS with {NAME} in them */
    int ntmpl;
    uint64_t combinations;
};

/* --param NAME=V1,V2,...: 0, or -1 with a message. */
int search_space_add_param(struct search_space *s, const char *arg);
/* --flag NAME=WORDS: a parameter of values off and on; {NAME}, a whole
 * argument of the command, is WORDS (split at spaces) when on and nothing
 * when off. 0, or -1 with a message. */
int search_space_add_flag(struct search_space *s, const char *arg);
/* Forget the last parameter added. */
void search_space_drop_last(struct search_space *s);
/* The command template: every {NAME} in it must be a declared parameter and
 * every parameter must be used (gpus and cluster may be left out). Computes the number of combinations. 0 or -1. */
int search_space_set_command(struct search_space *s, char **argv, int argc);
/* Value index of each parameter in combination index (the last parameter
 * varies fastest, as nested loops in the order declared). */
void search_space_choice(const struct search_space *s, uint64_t index, int *choice);
/* The command with the choice's values substituted and its {=EXPR}
 * evaluated, NULL-terminated (malloc'd; search_free_argv). NULL with why
 * set when an expression has no whole value for this choice (the trial is
 * invalid), NULL with why "" on allocation failure. */
char **search_space_command(const struct search_space *s, const int *choice, char *why, size_t size);
/* One argument with the choice's {NAME} values substituted and its {=EXPR}
 * evaluated (malloc'd); NULL as search_space_command. */
char *search_space_substitute(const struct search_space *s, const int *choice, const char *arg, char *why,
                              size_t size);
/* A trial option's value (option: --run-option, --replicas) holding {NAME}
 * or {=EXPR}: every NAME a declared --param (not a --flag), every
 * expression well formed. 0, or -1 with a message. */
int search_space_check_option(const struct search_space *s, const char *option, const char *arg);
/* --require EXPR: EXPR as in {=EXPR} (a comparison, a --flag 0 or 1), its
 * names declared. 0, or -1 with a message. */
int search_space_check_require(const struct search_space *s, const char *text);
/* Does choice meet --require text? 1 yes; 0 no, why saying so; -1 when it
 * has no whole value, why saying why. */
int search_space_require(const struct search_space *s, const int *choice, const char *text, char *why, size_t size);
void search_free_argv(char **argv);
void search_space_free(struct search_space *s);

/* The order trials are tried in: combination indexes, n of them (malloc'd).
 * grid: all, in order; random: all, shuffled with seed (the caller keeps the
 * first --trials distinct ones). NULL on allocation failure. */
uint64_t *search_order(const struct search_space *s, int random, uint64_t seed);

/* The next 64 random bits of the generator whose state is *state (seeded
 * with any value; splitmix64). */
uint64_t search_random(uint64_t *state);

/* --strategy cmaes: a CMA-ES over value indexes (cmaes.c). n
 * coordinates, nvalues[i] >= 2 values each; lambda samples a generation (0:
 * 4 + floor(3 ln n)); seed: the draws. NULL when out of memory. */
struct search_cmaes;
struct search_cmaes *search_cmaes_new(int n, const int *nvalues, int lambda, uint64_t seed);
int search_cmaes_lambda(const struct search_cmaes *c);
/* Coordinate i's standard deviation, in value steps. */
double search_cmaes_std(const struct search_cmaes *c, int i);
/* Coordinate i of the mean, in [0, 1] (0 the first value, 1 the last). */
double search_cmaes_mean(const struct search_cmaes *c, int i);
/* The next generation: lambda samples, sample k's value indexes in
 * index[k * n .. k * n + n - 1]. */
void search_cmaes_ask(struct search_cmaes *c, int *index);
/* Move sample k of the last generation to the value indexes index[0..n)
 * (the point evaluated in its place); the update then uses that step, as
 * it uses a sample moved into the box. Coordinates whose value is
 * unchanged keep their draw. */
void search_cmaes_move(struct search_cmaes *c, int k, const int *index);
/* Their scores, in the same order, lower better; not finite: invalid, worse
 * than every valid one. Updates the distribution. */
void search_cmaes_tell(struct search_cmaes *c, const double *score);
/* The same with a tier per sample: samples rank by tier first (lower
 * better), then by score within it; so invalid points can be graded (an
 * out-of-memory point by how far over memory it was) yet rank after every
 * valid one. */
void search_cmaes_tell_tiers(struct search_cmaes *c, const double *score, const int *tier);
void search_cmaes_free(struct search_cmaes *c);

/* A 64-bit FNV-1a hash from basis (0: FNV's own), and 12 hex digits of it
 * (the trial's directory name). */
uint64_t search_hash(const char *data, size_t len, uint64_t basis);
void search_hash_hex(const char *data, size_t len, char out[13]);

enum search_status {
    SEARCH_PENDING = 0,
    SEARCH_OK,
    SEARCH_OOM,
    SEARCH_FAILED,
    SEARCH_PRUNED,      /* dominated by a valid trial (prefer-earlier), not run */
};

struct search_trial {
    int *choice;                /* value index per parameter */
    char **argv;                /* the command, substituted */
    char **run_opts;            /* maya run's options, substituted */
    char *key;                  /* what identifies it: GPUs, cluster, options, command */
    size_t keylen;              /* (NUL bytes separate the command's arguments) */
    char id[13];                /* hash of key: the directory trials/<id> */
    char *dir;                  /* DIR/trials/<id> (malloc'd) */
    int order;                  /* position in the strategy's sequence */
    int cached;                 /* its directory already held a complete report */
    pid_t pid;                  /* maya run, while it runs */
    int status;                 /* enum search_status */
    double iteration_s;         /* steady-state iteration time (ok) */
    double peak_bytes;          /* peak GPU memory over ranks, < 0 unknown */
    char reason[512];           /* oom/failed/pruned: why */
    char pruned_by[13];         /* the trial whose result pruned it, or "" */
    double bound_s;             /* pruned: the dominating trial's time (a lower bound) */
    /* the trial's own target: -g and --cluster values (NULL: none given) */
    const char *gpus, *cluster;
    int ngpus;                  /* GPUs of the trial, 0 unknown */
    double gpu_memory_bytes;    /* capacity of one of its GPUs */
    double price_per_gpu_hour;  /* 0: not stated */
    uint64_t trace_k1, trace_k2; /* what the ranks do: equal for trials one trace serves */
    char reused[13];            /* re-reported from this trial's trace, or "" */
    int attempts;               /* Slurm: submissions so far */
    double start_s;             /* local: when it started (monotonic), 0 not started here */
    double wall_s;              /* how long its maya run or report took (search-time), < 0 unknown */
    int invalid;                /* no command for its choice (reason says why): failed, not run */
    int phase;                  /* 0 not started, 1 running (or in a Slurm wave), 2 finished */
    int target;                 /* index of its GPUs and cluster in the search's targets */
    char replayed[13];          /* --replay: answered by this trial of the replayed search, or "" */
};

/* --prune NAME=RULE[,RULE] (prune.c): memory-up, memory-down,
 * prefer-earlier on a declared parameter. 0, or -1 with a message. */
int search_prune_add(struct search_space *s, const char *arg);
/* How many rules are declared. */
int search_prune_rules(const struct search_space *s);
/* Whether the finished trials done[0..ndone) prune t by the rules: 0 (run
 * it), or SEARCH_OOM / SEARCH_PRUNED with t's status, reason and pruned_by
 * set. */
int search_prune(const struct search_space *s, struct search_trial *t, struct search_trial *const *done,
                 int ndone);

/* Has dir a complete report.json (a run that finished)? */
int search_trial_done(const struct search_trial *t);
/* t's directory, emptied or made. 0, or -1 with a message. */
int search_trial_prepare(struct search_trial *t);
/* t's directory made ready for maya report over src's run: src's traces and
 * logs linked, its run.conf, gpu.conf and cluster.conf copied. 0 or -1. */
int search_trial_prepare_reuse(struct search_trial *t, const char *src);
/* Start argv (maya run or maya report) for t; its own output goes to
 * t->dir/search-trial.log; t->pid is set. 0, or -1 with a message. */
int search_trial_spawn(struct search_trial *t, char *const *argv);
/* t->dir/search-time: how long its command ran, in seconds (< 0 unknown). */
void search_trial_save_time(const struct search_trial *t, double secs);
double search_trial_load_time(const struct search_trial *t);
/* Fill status, times and reason from t->dir (after the run ended with
 * wait status ws; ws < 0: from the cache). */
void search_trial_read(struct search_trial *t, int ws);

/* --replay DIR (replay.c): trials answered from an earlier search of the
 * same space instead of run. */
struct search_replay_row {
    char **values;              /* a value per parameter, as search.txt shows it */
    char id[13];                /* its trial directory */
};
struct search_replay {
    char dir[PATH_MAX];         /* DIR/trials */
    struct search_replay_row *rows;
    int nrows, nparams, header;
};
/* Read DIR/search.txt, whose parameters must be sp's, in order. 0, or -1
 * with a message. */
int search_replay_load(struct search_replay *r, const char *dir, const struct search_space *sp);
/* t's result from the replayed search's trial of the same values (status,
 * times, peak; t->replayed set): 1; 0 when it has none (t failed). */
int search_replay_answer(const struct search_replay *r, const struct search_space *sp, struct search_trial *t);
void search_replay_free(struct search_replay *r);

/* --slurm (slurm.c): trials as job arrays. */
struct search_slurm {
    char **sbatch;              /* --sbatch options, as given */
    int nsbatch;
    int retries;                /* submissions of a trial that never finished, after its first */
    int srun_nodes;             /* --srun-nodes: each trial's ranks over this many nodes with
                                 * srun --maya-emulate (0: maya run on one node) */
    char dir[PATH_MAX];         /* DIR/slurm */
    int waves, tasks;           /* arrays and array tasks submitted */
    double submit_s, array_s;   /* seconds writing and submitting; from submission to the queue empty */
    char last_job[32];
};
/* A job an earlier search in this directory left (DIR/slurm/job): wait
 * until it leaves the queue (cancel it on *stop). 0 or -1. */
int search_slurm_resume(struct search_slurm *sl, int quiet, volatile sig_atomic_t *stop);
/* Run trials[0..n) as one job array, trial k's command argvs[k]; returns
 * when the job has left the queue (cancelled on *stop). Their directories
 * must exist. 0, or -1 with a message. */
int search_slurm_run(struct search_slurm *sl, struct search_trial *const *trials, char **const *argvs, int n,
                     volatile sig_atomic_t *stop);
/* The exit status a Slurm task recorded for t's command (search-exit), or
 * -1 when its task never finished. */
int search_trial_exit_status(const struct search_trial *t);

/* The table (rows sorted: valid fastest first, then oom, then failed, each
 * else in trial order) and the best line; trials[] is sorted in place. */
struct search_result {
    const struct search_space *space;
    struct search_trial **trials;   /* those that finished */
    int ntrials;
    const char *gpus, *cluster, *strategy;
    uint64_t seed;
    int requested, patience, duplicates, run, cached, stopped_early;
    const char *stop_reason;        /* why it stopped early, or NULL */
    int planned;                    /* trials planned; cmaes: at most */
    int population, generations;    /* cmaes */
    int pruned, reused;             /* trials not run: pruned by a rule; re-reported from a trace */
    int whatif;                     /* GPU-hours and cost columns */
    int resubmitted;                /* Slurm: tasks submitted again */
    double wall_s;                  /* the search's own wall time */
    const struct search_slurm *slurm; /* NULL: local */
};
/* GPU-hours of 1,000 iterations of a valid trial (its GPUs x its time), or -1. */
double search_gpu_hours_per_1k(const struct search_trial *t);
void search_sort(struct search_result *res);
void search_print_table(FILE *fp, const struct search_result *res);
/* dir/search.txt (the table) and dir/search.json, atomically. 0 or -1. */
int search_write_files(const char *dir, const struct search_result *res);

/* ---- running a search (plan.c, run.c) ---- */
enum { SEARCH_GRID, SEARCH_RANDOM, SEARCH_CMAES };

/* The GPUs and cluster of some trials, resolved once: what identifies them
 * in a trial's key, what the ranks see of them (the trace key), one GPU's
 * memory and the price of a GPU-hour. */
struct search_target {
    const char *gpus, *cluster;         /* as given (NULL: none) */
    char gpu_key[MAYA_NAME_MAX];
    int count;
    double gpu_memory_bytes, price;
    struct maya_cluster_spec spec;
    char *key, *trace;                  /* descriptions (malloc'd) */
};

/* A trial's command line as a growing argv. */
struct search_argv {
    char **argv;
    int n;
};

/* One search: its space, trials, targets and how they run (cmd_search.c
 * fills it from the options; plan.c makes the trials, run.c runs them). */
struct search {
    struct search_space space;
    struct search_argv run_opts;          /* maya run's options for every trial */
    const char *replicas;                 /* --replicas N:STRIDE[,...] with {NAME}, {=EXPR}, or NULL */
    struct search_argv requires;          /* --require EXPR: combinations the program accepts */
    struct search_argv report_opts;       /* the report pipeline's (for maya report) */
    struct search_trial *trials;
    int ntrials;
    struct search_target *targets;
    int ntargets;
    struct maya_hwspecs hw;
    int duplicates, pruned, reused, resubmitted;
    int jobs, strategy, requested, patience, quiet, reuse, use_slurm;
    int planned;                /* trials at most: grid, random all planned; cmaes its budget of
                                 * trials that run (pruned and invalid ones cost nothing) */
    int capacity;               /* trials[]'s size: grid, random planned; cmaes the combinations */
    int budget;                 /* random, cmaes: trials that run at most (0: every planned one);
                                 * a pruned or invalid trial runs nothing and costs nothing */
    int population, generations; /* cmaes */
    char stop_reason[96];       /* why it ended before its planned trials, or "" */
    uint64_t seed;
    double price;               /* --price, or 0 */
    const char *gpus, *cluster;
    struct search_slurm slurm;
    struct search_replay *replay;       /* --replay, or NULL */
    char exe[PATH_MAX];
    char dir[PATH_MAX];
    volatile sig_atomic_t *stop;        /* set by a signal: start no more, stop the running */
};

/* Where the search stands while trials run. */
struct search_progress {
    struct search_trial **done;
    int ndone;
    int since_best;             /* finished trials since the fastest so far */
    double best_s;              /* < 0: no valid trial yet */
    int stop;                   /* --patience reached: start no more */
    int run;                    /* trials started */
    int spent;                  /* trials counted against s->budget: finished, not pruned or invalid */
};

double search_now_s(void); /* monotonic seconds */
/* Append a copy of a (or of every argument of argv) to l. 0 or -1. */
int search_argv_push(struct search_argv *l, const char *a);
int search_argv_push_all(struct search_argv *l, char *const *argv);
/* What identifies a trial besides its command and target, into key. */
void search_describe_setup(FILE *key, const struct search *s, const struct maya_conf *conf);
/* The index of the target for these -g and --cluster values, resolved the
 * first time; -1 on error. */
int search_find_target(struct search *s, const char *gpus, const char *cluster);
/* The trial for a choice of value indexes: an earlier trial's index when its
 * command line was seen before, else, below s->capacity trials, a new one's;
 * -2 when over the plan, -1 on error. */
int search_add_trial(struct search *s, struct maya_map *seen, const int *choice, const char *setup, size_t setup_len);
/* Grid and random: every trial, in the strategy's order. 0 or -1. */
int search_plan_trials(struct search *s, const char *setup, size_t setup_len);
void search_free_trial(struct search_trial *t);
void search_free(struct search *s);
/* Run trials first.. (locally, -j at once, or as Slurm job arrays) until all
 * finished, --patience, or *s->stop; finished ones go to p->done. 0 or -1. */
int search_run_trials(struct search *s, struct search_progress *p, int first);
/* --strategy cmaes: generations until s->budget trials have run (pruned and
 * invalid ones are free), --patience or a stall. 0 or -1. */
int search_cmaes_trials(struct search *s, struct search_progress *p, const char *setup, size_t setup_len);
/* "ok", "oom", ... */
const char *search_status_name(int status);

#endif

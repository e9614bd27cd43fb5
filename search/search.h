/* maya search's subsystem (the command is src/cmd_search.c): the space of
 * configurations (space.c), the CMA-ES (cmaes.c), running and reading one
 * trial (trial.c) and the results table and files (output.c). */
#ifndef MAYA_SEARCH_H
#define MAYA_SEARCH_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* At most this many combinations: grid runs them all, random shuffles them. */
#define SEARCH_MAX_COMBINATIONS 100000

struct search_param {
    char *name;
    char **values;
    int nvalues;
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
/* The command template: every {NAME} in it must be a declared parameter and
 * every parameter must be used. Computes the number of combinations. 0 or -1. */
int search_space_set_command(struct search_space *s, char **argv, int argc);
/* Value index of each parameter in combination index (the last parameter
 * varies fastest, as nested loops in the order declared). */
void search_space_choice(const struct search_space *s, uint64_t index, int *choice);
/* The command with the choice's values substituted, NULL-terminated (malloc'd;
 * search_free_argv). NULL on allocation failure. */
char **search_space_command(const struct search_space *s, const int *choice);
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
/* The next generation: lambda samples, sample k's value indexes in
 * index[k * n .. k * n + n - 1]. */
void search_cmaes_ask(struct search_cmaes *c, int *index);
/* Their scores, in the same order, lower better; not finite: invalid, worse
 * than every valid one. Updates the distribution. */
void search_cmaes_tell(struct search_cmaes *c, const double *score);
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
};

struct search_trial {
    int *choice;                /* value index per parameter */
    char **argv;                /* the command, substituted */
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
    char reason[512];           /* oom/failed: why */
};

/* How each trial's `maya run` is started: its argv up to "-o" (the maya
 * binary, "run", the GPU/cluster/report options), NULL-terminated. */
struct search_runner {
    char **run_argv;
    int nrun_argv;
};

/* Has dir a complete report.json (a run that finished)? */
int search_trial_done(const struct search_trial *t);
/* Start maya run for t in t->dir (emptied first); its own output goes to
 * t->dir/search-trial.log. 0, or -1 with a message. */
int search_trial_start(const struct search_runner *r, struct search_trial *t);
/* Fill status, times and reason from t->dir (after the run ended with
 * wait status ws; ws < 0: from the cache). */
void search_trial_read(struct search_trial *t, int ws);

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
};
void search_sort(struct search_result *res);
void search_print_table(FILE *fp, const struct search_result *res);
/* dir/search.txt (the table) and dir/search.json, atomically. 0 or -1. */
int search_write_files(const char *dir, const struct search_result *res);

#endif

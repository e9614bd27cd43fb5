/* maya search: running a search's trials, locally (-j at once) or as Slurm
 * job arrays: each is answered without running when it can be (invalid, a
 * pruning rule, the cache, an earlier trial's trace to re-report), else
 * started; and the CMA-ES's generations over them. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "search.h"
#include "maya/common.h"

static void show_done(const struct search *s, const struct search_trial *t, int done)
{
    if (s->quiet)
        return;
    fprintf(stderr, "maya search: [%d/%d]", done, s->budget ? s->budget : s->planned);
    for (int i = 0; i < s->space.nparams; i++)
        fprintf(stderr, " %s=%s", s->space.params[i].name, s->space.params[i].values[t->choice[i]]);
    if (t->status == SEARCH_OK)
        fprintf(stderr, ": %.3f ms", t->iteration_s * 1e3);
    else
        fprintf(stderr, ": %s", search_status_name(t->status));
    fprintf(stderr, "%s%s%s\n", t->cached ? " (cached)" : "", t->pruned_by[0] ? " (pruned)" : "",
            t->reused[0] ? " (re-reported)" : "");
}


static void finish(struct search *s, struct search_progress *p, struct search_trial *t)
{
    if (t->start_s > 0 && !t->cached)
        search_trial_save_time(t, search_now_s() - t->start_s);
    /* only a directory this trial's own command wrote says how long it took
     * (a replayed trial's time is its replayed run's) */
    if (!t->replayed[0])
        t->wall_s = t->cached || t->start_s > 0 || t->attempts > 0 ? search_trial_load_time(t) : -1;
    t->phase = 2;
    p->done[p->ndone++] = t;
    p->spent += !t->pruned_by[0] && !t->invalid;
    s->pruned += t->pruned_by[0] != 0;
    s->reused += t->reused[0] != 0;
    show_done(s, t, s->budget ? p->spent : p->ndone); /* a pruned trial spends none of a budget */
    if (t->status == SEARCH_OK && (p->best_s < 0 || t->iteration_s < p->best_s)) {
        p->best_s = t->iteration_s;
        p->since_best = 0;
    } else {
        p->since_best++;
    }
    if (s->patience && p->since_best >= s->patience)
        p->stop = 1;
}

/* Has the budget been spent, counting the running trials as spent? (One
 * that finishes pruned or invalid does not spend it: the next is tried.) */
static int over_budget(const struct search *s, const struct search_progress *p, int running)
{
    return s->budget && p->spent + running >= s->budget;
}

/* What to do with a trial that has not started. */
enum { READY_DONE, READY_WAIT, READY_RUN, READY_REPORT };

/* Answer t without running it when the cache, a pruning rule or an earlier
 * trial's trace can (READY_DONE, t finished); READY_WAIT while a trial of
 * the same trace runs (its trace will serve); READY_REPORT with *origin a
 * trial whose trace t re-reports; else READY_RUN. */
static int ready(struct search *s, struct search_progress *p, struct search_trial *t, const struct search_trial **origin)
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
    if (s->replay) { /* as if it had run: it counts as run */
        search_replay_answer(s->replay, &s->space, t);
        p->run++;
        return READY_DONE;
    }
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
    struct search_argv l = { 0 };
    const struct search_target *tg = &s->targets[t->target];
    int srun = s->slurm.srun_nodes && !origin;
    int rc = search_argv_push(&l, srun ? "srun" : s->exe);
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
            rc = search_argv_push(&l, "report") < 0 || search_argv_push(&l, "-q") < 0 || search_argv_push_all(&l, s->report_opts.argv) < 0 ||
                 search_argv_push(&l, "-g") < 0 || search_argv_push(&l, tg->gpu_key) < 0 || search_argv_push(&l, "--cluster") < 0 ||
                 search_argv_push(&l, path) < 0 || search_argv_push(&l, t->dir) < 0 ? -1 : 0;
    } else if (srun) {
        /* the array task's nodes run the ranks, one task a node, each its
         * share of them; the plugin's report lands in the trial's
         * directory as maya run's would */
        char nodes[32], emulate[PATH_MAX * 2 + 128];
        snprintf(nodes, sizeof nodes, "--nodes=%d", s->slurm.srun_nodes);
        int m = snprintf(emulate, sizeof emulate, "--maya-emulate=%sx%d%s%s,report=%s/report", tg->gpu_key, tg->count,
                         t->cluster ? ",cluster=" : "", t->cluster ? t->cluster : "", t->dir);
        rc = rc < 0 || m >= (int)sizeof emulate || search_trial_prepare(t) < 0 || search_argv_push(&l, nodes) < 0 ||
             search_argv_push(&l, "--ntasks-per-node=1") < 0 || search_argv_push(&l, emulate) < 0 ||
             search_argv_push_all(&l, t->argv) < 0 ? -1 : 0;
        if (m >= (int)sizeof emulate)
            maya_error("trial %s: its --maya-emulate value is too long", t->id);
    } else {
        rc = rc < 0 || search_trial_prepare(t) < 0 || search_argv_push(&l, "run") < 0 || search_argv_push_all(&l, t->run_opts) < 0
                 ? -1 : 0;
        if (rc == 0 && t->gpus)
            rc = search_argv_push(&l, "-g") < 0 || search_argv_push(&l, t->gpus) < 0 ? -1 : 0;
        if (rc == 0 && t->cluster)
            rc = search_argv_push(&l, "--cluster") < 0 || search_argv_push(&l, t->cluster) < 0 ? -1 : 0;
        if (rc == 0)
            rc = search_argv_push(&l, "-o") < 0 || search_argv_push(&l, t->dir) < 0 || search_argv_push(&l, "--") < 0 ||
                 search_argv_push_all(&l, t->argv) < 0 ? -1 : 0;
    }
    if (rc < 0) {
        search_free_argv(l.argv);
        return NULL;
    }
    return l.argv;
}

/* A trial that could not start is failed, with the reason. */
static void not_started(struct search *s, struct search_progress *p, struct search_trial *t)
{
    t->status = SEARCH_FAILED;
    snprintf(t->reason, sizeof t->reason, "%s", maya_last_error());
    finish(s, p, t);
}

/* Local: start trials first.. in order, up to s->jobs running; answered
 * ones finish at once. */
static void start_more(struct search *s, struct search_progress *p, int first, int *running)
{
    for (int i = first; i < s->ntrials && !p->stop && !*s->stop && *running < s->jobs; i++) {
        struct search_trial *t = &s->trials[i];
        const struct search_trial *origin = NULL;
        if (t->phase != 0)
            continue;
        if (over_budget(s, p, *running))
            break;
        int what = ready(s, p, t, &origin);
        if (what == READY_DONE) {
            finish(s, p, t);
            continue;
        }
        if (what == READY_WAIT)
            continue;
        char **argv = trial_command(s, t, origin);
        if (argv && search_trial_spawn(t, argv) == 0) {
            t->start_s = search_now_s();
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
static void run_local(struct search *s, struct search_progress *p, int first)
{
    int running = 0, killed = 0;
    for (;;) {
        start_more(s, p, first, &running);
        if (running == 0)
            break;
        if (*s->stop && !killed) {
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
            if (!*s->stop) { /* a trial stopped by the signal is no result */
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
static int run_slurm(struct search *s, struct search_progress *p, int first)
{
    int cap = s->ntrials - first, rc = 0;
    struct search_trial **wave = calloc(cap + 1, sizeof *wave);
    char ***argvs = calloc(cap + 1, sizeof *argvs);
    if (!wave || !argvs)
        rc = maya_error("out of memory");
    while (rc == 0 && !p->stop && !*s->stop) {
        int n = 0;
        for (int i = first; i < s->ntrials && n < s->jobs && !p->stop; i++) {
            struct search_trial *t = &s->trials[i];
            const struct search_trial *origin = NULL;
            if (t->phase != 0)
                continue;
            if (over_budget(s, p, n))
                break;
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
        rc = search_slurm_run(&s->slurm, wave, argvs, n, s->stop);
        for (int k = 0; k < n; k++) {
            struct search_trial *t = wave[k];
            int code = rc == 0 ? search_trial_exit_status(t) : -1;
            search_free_argv(argvs[k]);
            argvs[k] = NULL;
            if (code >= 0) {
                search_trial_read(t, code << 8);
                finish(s, p, t);
            } else if (rc == 0 && !*s->stop && t->attempts > s->slurm.retries) {
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

int search_run_trials(struct search *s, struct search_progress *p, int first)
{
    if (s->use_slurm)
        return run_slurm(s, p, first);
    run_local(s, p, first);
    return 0;
}

/* A CMA-ES stops when this many generations in a row drew no new trial. */
#define CMAES_STALL 20
/* The population is kept small enough for this many generations to fit
 * the budget: one generation of the default population (4 + 3 ln n) is a
 * random draw around the middle of the box, and a small budget that holds
 * only one never moves the distribution. */
#define CMAES_GENERATIONS 3

static int cmaes_population(int n, int budget)
{
    int lambda = 4 + (int)floor(3 * log(n > 0 ? n : 1)), fit = budget / CMAES_GENERATIONS;
    return fit < lambda ? (fit > 4 ? fit : 4) : lambda;
}

/* Has a trial of choice finished invalid (oom or failed)? O(trials x
 * parameters). */
static int known_invalid(const struct search *s, const int *choice)
{
    for (int i = 0; i < s->ntrials; i++) {
        const struct search_trial *t = &s->trials[i];
        if (t->phase != 2 || (t->status != SEARCH_OOM && t->status != SEARCH_FAILED))
            continue;
        if (!memcmp(t->choice, choice, s->space.nparams * sizeof *choice))
            return 1;
    }
    return 0;
}

/* What a prefer-earlier rule says of a draw: its value of such a parameter
 * can only be the fastest if the earlier value (all else equal) is invalid,
 * so a draw at a later value takes the earlier one until that one is known
 * invalid. A later value is then tried only when it can win, and the budget
 * is not spent on a trial the rule would prune once its earlier value ran.
 * 1 when choice was changed. */
static int prefer_earlier(const struct search *s, int *choice)
{
    int moved = 0;
    for (int i = 0; i < s->space.nparams; i++) {
        if (!s->space.params[i].prefer)
            continue;
        while (choice[i] > 0) {
            choice[i]--;
            if (known_invalid(s, choice)) {
                choice[i]++;
                break;
            }
            moved = 1;
        }
    }
    return moved;
}

/* A trial's rank for the CMA-ES: tier 0 valid (its time; a dominated one
 * just slower than the valid trial that pruned it), 1 out of memory graded
 * by its peak over the GPU's memory (so the search moves toward what fits;
 * unknown peaks after known ones), 2 failed. */
static void cmaes_score(const struct search_trial *t, double *score, int *tier)
{
    *tier = 2;
    *score = INFINITY;
    if (t->status == SEARCH_OK) {
        *tier = 0;
        *score = t->iteration_s;
    } else if (t->status == SEARCH_PRUNED) {
        *tier = 0;
        *score = t->bound_s * (1 + 1e-9);
    } else if (t->status == SEARCH_OOM) {
        *tier = 1;
        if (t->peak_bytes > 0 && t->gpu_memory_bytes > 0)
            *score = t->peak_bytes / t->gpu_memory_bytes;
    }
}

/* The last trials of a CMA-ES's budget go to a local search around the
 * fastest trial. A CMA-ES over a few discrete values per knob spends its
 * trials on the region it favours, not on the one-knob changes of its best,
 * and a small budget ends with the best one knob away from a faster
 * configuration. POLISH_SHARE of the budget (at least one trial a knob
 * where the budget allows, never more than half of it) is kept for that. */
#define POLISH_SHARE 0.34

static int polish_reserve(int n, int budget)
{
    int r = (int)ceil(POLISH_SHARE * budget);
    if (r < n)
        r = n;
    return r > budget / 2 ? budget / 2 : r;
}

/* The finished trial of choice (any status), or NULL. O(trials x
 * parameters). */
static const struct search_trial *tried(const struct search *s, const int *choice)
{
    for (int i = 0; i < s->ntrials; i++)
        if (s->trials[i].phase == 2 && !memcmp(s->trials[i].choice, choice, s->space.nparams * sizeof *choice))
            return &s->trials[i];
    return NULL;
}

/* Is choice one of list[0..n) (np values each)? */
static int seen_in(const int *list, int n, const int *choice, int np)
{
    for (int i = 0; i < n; i++)
        if (!memcmp(list + i * np, choice, np * sizeof *choice))
            return 1;
    return 0;
}

/* The fastest valid trial so far, or NULL. */
static const struct search_trial *fastest(const struct search *s)
{
    const struct search_trial *best = NULL;
    for (int i = 0; i < s->ntrials; i++) {
        const struct search_trial *t = &s->trials[i];
        if (t->phase == 2 && t->status == SEARCH_OK && (!best || t->iteration_s < best->iteration_s))
            best = t;
    }
    return best;
}

/* One polish candidate: from's choice with dimension j a step d away, the
 * prefer-earlier rule applied, into x; its squared distance from the
 * CMA-ES's mean (in [0, 1] a coordinate), or -1 when out of range, already
 * tried or already taken (visited). */
static double neighbour(const struct search *s, const struct search_cmaes *c, const int *dims, int n, const int *from,
                        int j, int d, int *x, const int *visited, int nvisited)
{
    const struct search_space *sp = &s->space;
    int v = from[dims[j]] + d;
    if (v < 0 || v >= sp->params[dims[j]].nvalues)
        return -1;
    memcpy(x, from, sp->nparams * sizeof *x);
    x[dims[j]] = v;
    prefer_earlier(s, x);
    if (tried(s, x) || seen_in(visited, nvisited, x, sp->nparams))
        return -1;
    double dist = 0;
    for (int k = 0; k < n; k++) {
        double e = x[dims[k]] / (double)(sp->params[dims[k]].nvalues - 1) - search_cmaes_mean(c, k);
        dist += e * e;
    }
    return dist;
}

/* Local search after the CMA-ES's generations: the untried neighbours of
 * the fastest trial (one knob a value step up or down, the prefer-earlier
 * rule applied) one at a time, those nearest the CMA-ES's mean first (what
 * the distribution favours), moving to a faster one as soon as it is found.
 * A neighbour that failed (a combination the program refuses: sequence
 * parallelism without tensor parallelism, say) is stepped over: once the
 * direct neighbours have all run, the neighbours of the failed ones (another
 * knob changed too) are tried, as a faster configuration can lie beyond a
 * refused one. Until the budget is spent or there is no candidate left. One
 * at a time, so the same seed runs the same trials whatever -j is.
 * O(knobs^2 x trials x parameters) a step. 0 or -1. */
static int polish(struct search *s, struct search_progress *p, const struct search_cmaes *c, const int *dims, int n,
                  struct maya_map *seen, const char *setup, size_t setup_len, int *converged)
{
    *converged = 0;
    const struct search_space *sp = &s->space;
    int np = sp->nparams, rc = 0, nvisited = 0, cap_visited = 0;
    int *cand = calloc(3 * np + 1, sizeof *cand), *visited = NULL; /* the candidates taken, np each */
    if (!cand)
        rc = maya_error("out of memory");
    while (rc == 0 && !p->stop && !*s->stop && p->spent < s->budget && s->ntrials < s->capacity) {
        const struct search_trial *best = fastest(s);
        if (!best) { /* nothing valid to start from: the generations go on */
            *converged = 1;
            break;
        }
        int *x = cand, *y = cand + np, *pickx = cand + 2 * np, pick = -1;
        double pick_dist = 0;
        for (int hop = 0; hop < 2 && pick < 0; hop++)
            for (int j = 0; j < n; j++)
                for (int d = -1; d <= 1; d += 2) {
                    double e = -1;
                    if (hop == 0) {
                        e = neighbour(s, c, dims, n, best->choice, j, d, x, visited, nvisited);
                    } else {
                        int v = best->choice[dims[j]] + d;
                        if (v < 0 || v >= sp->params[dims[j]].nvalues)
                            continue;
                        memcpy(y, best->choice, np * sizeof *y);
                        y[dims[j]] = v;
                        prefer_earlier(s, y);
                        const struct search_trial *f = tried(s, y);
                        if (!f || f->status != SEARCH_FAILED)
                            continue;
                        for (int j2 = 0; j2 < n; j2++)
                            for (int d2 = -1; d2 <= 1; d2 += 2) {
                                double e2 = j2 == j ? -1 : neighbour(s, c, dims, n, y, j2, d2, x, visited, nvisited);
                                if (e2 >= 0 && (pick < 0 || e2 < pick_dist)) {
                                    pick = 1;
                                    pick_dist = e2;
                                    memcpy(pickx, x, np * sizeof *x);
                                }
                            }
                        continue;
                    }
                    if (e >= 0 && (pick < 0 || e < pick_dist)) {
                        pick = 1;
                        pick_dist = e;
                        memcpy(pickx, x, np * sizeof *x);
                    }
                }
        if (pick < 0) {
            *converged = 1;
            break;
        }
        int first = s->ntrials, before = s->ntrials;
        int k = search_add_trial(s, seen, pickx, setup, setup_len);
        if (k == -1) {
            rc = -1;
            break;
        }
        if (nvisited == cap_visited) {
            int *v = realloc(visited, (2 * cap_visited + 8) * np * sizeof *v);
            if (!v) {
                rc = maya_error("out of memory");
                break;
            }
            visited = v;
            cap_visited = 2 * cap_visited + 8;
        }
        memcpy(visited + nvisited++ * np, pickx, np * sizeof *visited);
        if (k >= 0 && s->ntrials == before) { /* another choice's command line: its trial answers */
            s->duplicates++;
            continue;
        }
        if (k < 0 || (rc = search_run_trials(s, p, first)) < 0)
            break;
    }
    free(visited);
    free(cand);
    return rc;
}

/* --strategy cmaes: draw a generation of points (value indexes of the
 * parameters that have more than one value), run the new ones, score every
 * point (a point or command line seen before gets its trial's result
 * without counting against the budget; oom and failed rank last), update,
 * until s->budget trials have run (pruned and invalid ones are free; oom
 * graded, cmaes_score), --patience, or CMAES_STALL generations
 * without a new point. 0 or -1. */
int search_cmaes_trials(struct search *s, struct search_progress *p, const char *setup, size_t setup_len)
{
    const struct search_space *sp = &s->space;
    int n = 0, *dims = calloc(sp->nparams, sizeof *dims), *nvalues = calloc(sp->nparams, sizeof *nvalues);
    int *choice = calloc(sp->nparams, sizeof *choice);
    for (int i = 0; dims && nvalues && i < sp->nparams; i++)
        if (sp->params[i].nvalues > 1) {
            dims[n] = i;
            nvalues[n++] = sp->params[i].nvalues;
        }
    struct search_cmaes *c = dims && nvalues && choice ? search_cmaes_new(n, nvalues, cmaes_population(n, s->budget),
                                                                          s->seed) : NULL;
    int lambda = c ? search_cmaes_lambda(c) : 0;
    int *index = calloc(lambda * n + 1, sizeof *index), *which = calloc(lambda + 1, sizeof *which);
    double *score = calloc(lambda + 1, sizeof *score);
    int *tier = calloc(lambda + 1, sizeof *tier);
    struct maya_map seen = { 0 };
    int rc = c && index && which && score && tier ? 0 : maya_error("out of memory");
    s->population = lambda;
    /* rounds: generations while one fits before the polish's reserve (were
     * all its points new; always until the round has drawn a new point),
     * then the polish; when that has run every neighbour of the fastest and
     * budget is left, the CMA-ES goes on from where it was, with a reserve
     * of what is left */
    int limit = s->budget - polish_reserve(n, s->budget), missing = 0, stalled = 0, converged = 0;
    while (rc == 0) {
        int at_start = s->ntrials;
        stalled = 0;
        for (int stall = 0; rc == 0 && !p->stop && !*s->stop && p->spent < s->budget &&
                            (s->ntrials == at_start || p->spent + lambda <= limit) && s->ntrials < s->capacity;) {
            if (stall >= CMAES_STALL) {
                stalled = 1;
                break;
            }
            int first = s->ntrials;
            search_cmaes_ask(c, index);
            s->generations++;
            for (int k = 0; k < lambda && rc == 0; k++) {
                for (int j = 0; j < n; j++)
                    choice[dims[j]] = index[k * n + j];
                if (prefer_earlier(s, choice)) {
                    for (int j = 0; j < n; j++)
                        index[k * n + j] = choice[dims[j]];
                    search_cmaes_move(c, k, index + k * n);
                }
                int before = s->ntrials;
                which[k] = search_add_trial(s, &seen, choice, setup, setup_len);
                rc = which[k] == -1 ? -1 : 0;
                s->duplicates += which[k] >= 0 && s->ntrials == before;
            }
            if (rc < 0 || (rc = search_run_trials(s, p, first)) < 0)
                break;
            for (int k = 0; k < lambda; k++) {
                const struct search_trial *t = which[k] >= 0 ? &s->trials[which[k]] : NULL;
                missing += !t || t->status == SEARCH_PENDING;
                if (t)
                    cmaes_score(t, &score[k], &tier[k]);
            }
            if (missing) /* stopped, or out of trials */
                break;
            search_cmaes_tell_tiers(c, score, tier);
            stall = s->ntrials > first ? 0 : stall + 1;
        }
        if (rc < 0 || missing || (rc = polish(s, p, c, dims, n, &seen, setup, setup_len, &converged)) < 0 ||
            !converged || p->stop || *s->stop || p->spent >= s->budget || s->ntrials == at_start)
            break;
        limit = s->budget - polish_reserve(n, s->budget - p->spent);
    }
    if (rc == 0 && !missing && converged && p->spent < s->budget)
        snprintf(s->stop_reason, sizeof s->stop_reason, stalled ? "%d generations drew no new configuration, "
                 "every neighbour of the fastest trial ran" : "every neighbour of the fastest trial ran, no room "
                 "left for a generation of %d", stalled ? CMAES_STALL : lambda);
    maya_map_free(&seen);
    search_cmaes_free(c);
    free(tier);
    free(score);
    free(which);
    free(index);
    free(choice);
    free(nvalues);
    free(dims);
    return rc;
}

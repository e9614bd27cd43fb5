/* What the timelines show (timeline.json, timeline.svg): by default the ranks
 * and iterations a person looks at, so that a job of thousands of ranks gets
 * files a browser opens; everything on request (--timeline full).
 *
 * Bounded: every rank of a job of at most SIM_VIEW_ALL_RANKS ranks; beyond,
 * rank 0, the other stages of rank 0's pipeline (the members of the
 * communicators on which it sends and receives) and the busiest rank of the
 * steady state (compute time: a straggler shows up here). Every iteration of
 * a run of at most SIM_VIEW_ALL_ITERS iterations; beyond, the first three
 * (the warm-up and two steady ones). At most SIM_VIEW_MAX_EVENTS events
 * (about 130 bytes each in timeline.json; a dozen pipeline stages of a
 * million ops an iteration hold ten times that): beyond, the first steady
 * iteration alone, then every k-th of the pipeline's other stages (and its
 * last), then that iteration's first part (fit_events). Costs O(ops of the
 * replayed ranks) to find the busiest, and O(ops of the ranks shown) per
 * fitting step.
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <string.h>

#include "maya/common.h"

#define SIM_VIEW_ALL_RANKS 16
#define SIM_VIEW_ALL_ITERS 4
#define SIM_VIEW_MAX_STAGES 128

static int add(struct sim_view *v, int index)
{
    for (int k = 0; k < v->nranks; k++)
        if (v->ranks[k] == index)
            return 0;
    v->ranks[v->nranks++] = index;
    return 1;
}

static int by_rank_index(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static uint64_t events_of(const struct sim_job *j, const struct sim_view *v, int index)
{
    return sim_timeline_events(SIM_REPLAYED(j, &j->ranks[index]), v->t0, v->t1);
}

static uint64_t events(const struct sim_job *j, const struct sim_view *v)
{
    uint64_t n = 0;
    for (int k = 0; k < v->nranks; k++)
        n += events_of(j, v, v->ranks[k]);
    return n;
}

/* Fit a bounded view into SIM_VIEW_MAX_EVENTS: the first steady iteration
 * alone; then, of the ranks after the first `fixed` ones of v->ranks (the
 * pipeline's other stages, in order), every k-th and the last; then the
 * iteration's first part. *every: the k kept (1: all). */
static void fit_events(const struct sim_job *j, struct sim_view *v, int fixed, int *every)
{
    *every = 1;
    uint64_t n = events(j, v);
    if (n > SIM_VIEW_MAX_EVENTS && v->iter_last > v->iter_first) {
        int k = j->niter >= 2 ? 2 : 1;
        v->iter_first = v->iter_last = k;
        v->t0 = k >= 2 ? j->iter_end[k - 2] : 0;
        v->t1 = j->iter_end[k - 1];
        n = events(j, v);
    }
    int stages = v->nranks - fixed;
    if (n > SIM_VIEW_MAX_EVENTS && stages > 2) {
        uint64_t *count = malloc((size_t)stages * sizeof *count), base = 0;
        if (count) {
            for (int k = 0; k < fixed; k++)
                base += events_of(j, v, v->ranks[k]);
            for (int s = 0; s < stages; s++)
                count[s] = events_of(j, v, v->ranks[fixed + s]);
            for (*every = 2; *every < stages - 1; (*every)++) {
                n = base;
                for (int s = 0; s < stages; s++)
                    n += s % *every == 0 || s == stages - 1 ? count[s] : 0;
                if (n <= SIM_VIEW_MAX_EVENTS)
                    break;
            }
            int w = fixed;
            for (int s = 0; s < stages; s++)
                if (s % *every == 0 || s == stages - 1)
                    v->ranks[w++] = v->ranks[fixed + s];
            v->nranks = w;
            free(count);
            n = events(j, v);
        }
    }
    while (n > SIM_VIEW_MAX_EVENTS && v->t1 - v->t0 > 1000) {
        uint64_t t1 = v->t0 + (uint64_t)((double)(v->t1 - v->t0) * 0.9 * SIM_VIEW_MAX_EVENTS / (double)n);
        v->t1 = MAYA_MAX(t1, v->t0 + 1000);
        n = events(j, v);
        v->cut = 1;
    }
}

int sim_view_pick(const struct sim_job *j, int full, struct sim_view *v)
{
    memset(v, 0, sizeof *v);
    v->full = full;
    int all = full || j->nranks <= SIM_VIEW_ALL_RANKS;
    v->ranks = malloc((size_t)MAYA_MAX(all ? j->nranks : SIM_VIEW_MAX_STAGES + 2, 1) * sizeof *v->ranks);
    if (!v->ranks)
        return maya_error("out of memory choosing the timeline's ranks");
    v->t0 = 0;
    v->t1 = UINT64_MAX;
    v->iter_first = 1;
    v->iter_last = MAYA_MAX(j->niter, 1);
    if (!full && j->niter > SIM_VIEW_ALL_ITERS) {
        v->iter_last = 3;
        v->t1 = j->iter_end[2];
    }
    int every = 1;
    if (all) {
        for (int i = 0; i < j->nranks; i++)
            v->ranks[v->nranks++] = i;
        if (!full)
            fit_events(j, v, v->nranks, &every);
        snprintf(v->what, sizeof v->what, "all %d ranks", j->nranks);
        return 0;
    }
    /* rank 0 (the lowest) */
    int first = 0;
    for (int i = 1; i < j->nranks; i++)
        if (j->ranks[i].rank < j->ranks[first].rank)
            first = i;
    add(v, first);
    /* the busiest in the steady state */
    uint64_t t0 = j->niter >= 2 ? j->iter_end[0] : j->iter_t0;
    uint64_t t1 = j->niter >= 2 ? j->iter_end[j->niter - 1] : j->makespan;
    int busiest = -1;
    double most = -1;
    for (int i = 0; i < j->nranks; i++) {
        const struct sim_rank *r = &j->ranks[i];
        struct sim_busy b;
        if (r->fold >= 0 || !r->nops || sim_busy_in(j, r, t0, t1, &b) < 0)
            continue;
        if (b.compute > most) {
            most = b.compute;
            busiest = i;
        }
    }
    if (busiest >= 0)
        add(v, busiest);
    int fixed = v->nranks;
    /* rank 0's pipeline: members of the send/recv communicators it belongs to */
    int stages = 0;
    for (uint32_t c = 0; c < j->ncomms && v->nranks < SIM_VIEW_MAX_STAGES + 1; c++) {
        const struct sim_comm *cm = &j->comms[c];
        int member = 0;
        for (int m = 0; m < cm->nranks && !member; m++)
            member = cm->member_rank[m] == j->ranks[first].rank;
        if (!cm->has_p2p || !member)
            continue;
        for (int m = 0; m < cm->nranks && v->nranks < SIM_VIEW_MAX_STAGES + 1; m++)
            for (int i = 0; i < j->nranks; i++)
                if (j->ranks[i].rank == cm->member_rank[m]) {
                    stages += add(v, i);
                    break;
                }
    }
    if (!full)
        fit_events(j, v, fixed, &every);
    int shown = v->nranks - fixed;
    qsort(v->ranks, (size_t)v->nranks, sizeof *v->ranks, by_rank_index);
    snprintf(v->what, sizeof v->what, "%d of %d ranks: rank %d", v->nranks, j->nranks, j->ranks[first].rank);
    if (stages && every > 1)
        snprintf(v->what + strlen(v->what), sizeof v->what - strlen(v->what),
                 ", %d of its pipeline's %d other stages (one in %d, and the last)", shown, stages, every);
    else if (stages)
        snprintf(v->what + strlen(v->what), sizeof v->what - strlen(v->what), ", its pipeline's other stages");
    if (busiest >= 0)
        snprintf(v->what + strlen(v->what), sizeof v->what - strlen(v->what), ", the busiest (rank %d)",
                 j->ranks[busiest].rank);
    return 0;
}

void sim_view_free(struct sim_view *v)
{
    free(v->ranks);
    v->ranks = NULL;
    v->nranks = 0;
}

/* Folding's symmetry checks, after the last rank is loaded: folded ranks
 * are unfolded, round after round, until every communicator's members see
 * it as the same one and every node's NICs carry what the corresponding
 * replayed node's carry (fold.c says why each check is needed). Costs
 * O(members of all communicators + ranks) per round.
 */
#define _GNU_SOURCE
#include "fold_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "maya/common.h"

/* ---- the symmetry checks ---- */

struct checker {
    struct sim_job *j;
    int32_t *index_of;          /* global rank -> ranks[] index, -1 none */
    int max_rank;
    uint8_t *to_unfold;         /* by ranks[] index */
    int unfolded;
    char why[256];              /* the first reason */
};

static int index_of(const struct checker *C, int rank)
{
    return rank >= 0 && rank <= C->max_rank ? C->index_of[rank] : -1;
}

/* The global rank replayed for the process of global rank g. */
static int replayed_for(const struct checker *C, int g)
{
    int i = index_of(C, g);
    if (i < 0)
        return g;
    const struct sim_rank *r = &C->j->ranks[i];
    return r->fold >= 0 ? C->j->ranks[r->fold].rank : g;
}

/* Unfold ranks[i] (if folded) in this round; the first reason is kept for
 * the report. */
static void mark(struct checker *C, int i, const char *why)
{
    if (i < 0 || C->j->ranks[i].fold < 0 || C->to_unfold[i])
        return;
    C->to_unfold[i] = 1;
    if (!C->why[0])
        snprintf(C->why, sizeof C->why, "%s", why);
}

/* Communicators whose members disagree about what they are. */
static int check_comms(struct checker *C)
{
    struct sim_job *j = C->j;
    for (uint32_t c = 0; c < j->ncomms; c++) {
        const struct sim_comm *cm = &j->comms[c];
        int64_t image = -2;
        int ok = 1, folded = 0;
        for (int m = 0; m < cm->nranks && ok; m++) {
            int i = index_of(C, cm->member_rank[m]);
            if (i < 0)
                continue;
            const struct sim_rank *r = &j->ranks[i];
            int64_t img = r->fold < 0 ? (int64_t)c : sim_fold_theirs(r, c);
            folded += r->fold >= 0;
            if (img < 0 || (image != -2 && img != image))
                ok = 0;
            image = img;
        }
        if (!folded)
            continue;
        if (ok && image != (int64_t)c) {
            const struct sim_comm *to = &j->comms[image];
            for (int m = 0; m < cm->nranks && ok; m++)
                ok = replayed_for(C, cm->member_rank[m]) ==
                     (j->fold_in_node ? replayed_for(C, to->member_rank[m]) : to->member_rank[m]);
        } else if (ok) {
            ok = !cm->has_p2p;
            struct maya_map members = { 0 };
            for (int m = 0; m < cm->nranks && ok; m++)
                if (!maya_map_put(&members, (uint64_t)(uint32_t)cm->member_rank[m], 0, NULL)) {
                    maya_map_free(&members);
                    return maya_error("out of memory folding the job");
                }
            for (int m = 0; m < cm->nranks && ok; m++)
                ok = maya_map_get(&members, (uint64_t)(uint32_t)replayed_for(C, cm->member_rank[m]), 0) != NULL;
            maya_map_free(&members);
        }
        if (ok)
            continue;
        char why[160];
        snprintf(why, sizeof why, "communicator 0x%llx of %d members is not the same work for all of them",
                 (unsigned long long)cm->id, cm->nranks);
        for (int m = 0; m < cm->nranks; m++)
            mark(C, index_of(C, cm->member_rank[m]), why);
    }
    return 0;
}

/* With a NIC per GPU: the nodes (bad[node] = 1) where a replayed and a
 * folded rank share a GPU, and so its NIC and ports (two ranks on one GPU),
 * among the nodes that use NICs (nic[node]). A folded rank's own NIC and
 * ports otherwise carry only its representative's image, as a folded
 * node's do. O(ranks + nodes x GPUs). */
static int gpu_nics_shared(const struct sim_job *j, const uint8_t *nic, uint8_t *bad)
{
    int n = MAYA_MAX(j->nodes, 1), gpn = MAYA_MAX(j->gpus_per_node, 1);
    uint8_t *use = calloc((size_t)n * (size_t)gpn, 1); /* 1 replayed, 2 folded ranks on that GPU */
    if (!use)
        return maya_error("out of memory folding the job");
    for (int i = 0; i < j->nranks; i++) {
        const struct sim_rank *r = &j->ranks[i];
        if (r->node >= 0 && r->node < n && r->local_rank >= 0)
            use[(size_t)r->node * (size_t)gpn + (size_t)(r->local_rank % gpn)] |= r->fold >= 0 ? 2 : 1;
    }
    for (size_t g = 0; g < (size_t)n * (size_t)gpn; g++)
        if (use[g] == 3 && nic[g / (size_t)gpn])
            bad[g / (size_t)gpn] = 1;
    free(use);
    return 0;
}

/* Nodes whose NICs would carry something else if their ranks were folded. */
static int check_nodes(struct checker *C)
{
    struct sim_job *j = C->j;
    int n = MAYA_MAX(j->nodes, 1);
    uint8_t *nic = calloc((size_t)n, 1), *replayed = calloc((size_t)n, 1), *bad = calloc((size_t)n, 1);
    int32_t *target = malloc((size_t)n * sizeof *target);
    if (!nic || !replayed || !bad || !target) {
        free(nic), free(replayed), free(bad), free(target);
        return maya_error("out of memory folding the job");
    }
    for (int k = 0; k < n; k++)
        target[k] = -1;
    for (uint32_t c = 0; c < j->ncomms; c++)
        if (j->comms[c].inter_used)
            for (int m = 0; m < j->comms[c].nranks; m++)
                if (j->comms[c].member_node[m] >= 0 && j->comms[c].member_node[m] < n)
                    nic[j->comms[c].member_node[m]] = 1;
    for (int i = 0; i < j->nranks; i++)
        if (j->ranks[i].fold < 0 && j->ranks[i].node >= 0 && j->ranks[i].node < n)
            replayed[j->ranks[i].node] = 1;
    for (int i = 0; i < j->nranks && !j->fold_in_node; i++) {
        const struct sim_rank *r = &j->ranks[i];
        if (r->fold < 0 || r->node < 0 || r->node >= n || !nic[r->node])
            continue;
        const struct sim_rank *a = &j->ranks[r->fold];
        if (replayed[r->node] || a->local_rank != r->local_rank ||
            (target[r->node] >= 0 && target[r->node] != a->node))
            bad[r->node] = 1;
        target[r->node] = a->node;
    }
    if (j->fold_in_node && gpu_nics_shared(j, nic, bad) < 0) {
        free(nic), free(replayed), free(bad), free(target);
        return -1;
    }
    for (int i = 0; i < j->nranks; i++) {
        const struct sim_rank *r = &j->ranks[i];
        if (r->fold >= 0 && r->node >= 0 && r->node < n && bad[r->node]) {
            char why[160];
            snprintf(why, sizeof why, "node %d's NICs would be shared by replicas and other ranks", r->node);
            mark(C, i, why);
        }
    }
    free(nic), free(replayed), free(bad), free(target);
    return 0;
}

/* Exact folding: how many ranks left to replay do the work of a rank on
 * another node but for their host work (gaps, host-only calls), within
 * SIM_FOLD_SIMILAR in total (measured gaps of emulated ranks differ a
 * little): what --fold similar would fold. O(ranks). */
static int gaps_only(const struct sim_job *j, int *count)
{
    struct maya_map first = { 0 }; /* loose hash -> ranks[] index + 1 of the first such rank */
    *count = 0;
    for (int i = 0; i < j->nranks && !j->fold_similar; i++) {
        const struct sim_rank *r = &j->ranks[i];
        if (r->fold >= 0)
            continue;
        int created;
        uint64_t *v = maya_map_put(&first, r->loose_hash, 0, &created);
        if (!v) {
            maya_map_free(&first);
            return maya_error("out of memory folding the job");
        }
        if (created) {
            *v = (uint64_t)i + 1;
            continue;
        }
        const struct sim_rank *a = &j->ranks[*v - 1];
        double ga = (double)a->gap_total, gb = (double)r->gap_total;
        *count += a->node != r->node && (ga > 0 ? fabs(gb - ga) / ga : gb > 0) <= SIM_FOLD_SIMILAR;
    }
    maya_map_free(&first);
    return 0;
}

int sim_fold_finish(struct sim_job *j)
{
    struct checker C = { .j = j, .max_rank = -1 };
    int rc = sim_fold_decide_pending(j), gap_only = 0;
    if (rc == 0)
        rc = gaps_only(j, &gap_only);
    for (int i = 0; i < j->nranks; i++)
        C.max_rank = MAYA_MAX(C.max_rank, j->ranks[i].rank);
    C.index_of = malloc((size_t)(C.max_rank + 1) * sizeof *C.index_of + 1);
    C.to_unfold = calloc((size_t)MAYA_MAX(j->nranks, 1), 1);
    if (!C.index_of || !C.to_unfold)
        rc = maya_error("out of memory folding the job");
    for (int g = 0; rc == 0 && g <= C.max_rank; g++)
        C.index_of[g] = -1;
    for (int i = 0; rc == 0 && i < j->nranks; i++)
        if (j->ranks[i].rank >= 0)
            C.index_of[j->ranks[i].rank] = i;
    int folded = 0;
    for (int i = 0; i < j->nranks; i++)
        folded += j->ranks[i].fold >= 0;
    while (rc == 0 && folded) {
        memset(C.to_unfold, 0, (size_t)j->nranks);
        if (check_comms(&C) < 0 || check_nodes(&C) < 0) {
            rc = -1;
            break;
        }
        int changed = 0;
        for (int i = 0; i < j->nranks && rc == 0; i++)
            if (C.to_unfold[i]) {
                rc = sim_unfold(j, (uint32_t)i);
                changed++;
                folded--;
            }
        C.unfolded += changed;
        if (!changed)
            break;
    }
    if (rc == 0) {
        /* what the replay waits for: members and creators that are replayed */
        for (uint32_t c = 0; c < j->ncomms; c++) {
            struct sim_comm *cm = &j->comms[c];
            cm->expected = cm->nranks;
            cm->joiners = 0;
            for (int m = 0; m < cm->nranks; m++) {
                int i = index_of(&C, cm->member_rank[m]);
                cm->expected -= i >= 0 && j->ranks[i].fold >= 0;
            }
        }
        j->replayed_ranks = 0;
        j->replayed_ops = 0;
        for (int i = 0; i < j->nranks; i++) {
            struct sim_rank *r = &j->ranks[i];
            if (r->fold >= 0) {
                j->ranks[r->fold].weight++;
                continue;
            }
            j->replayed_ranks++;
            j->replayed_ops += r->nops;
            for (uint32_t k = 0; k < r->nbars; k++)
                j->comms[r->bars[k].comm].joiners++;
        }
        if (C.unfolded)
            snprintf(j->fold_note, sizeof j->fold_note, "%d rank%s that could fold replayed on %s own, as "
                     "symmetry breaks: %s", C.unfolded, C.unfolded == 1 ? "" : "s", C.unfolded == 1 ? "its" : "their",
                     C.why);
        j->fold_gaps_only = gap_only;
    }
    free(C.index_of);
    free(C.to_unfold);
    return rc;
}

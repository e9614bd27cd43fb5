/* Folding: the replay runs one copy of each group of ranks that do the same
 * work (the data-parallel replicas of a job) and lets it stand for all.
 *
 * A rank can fold into an earlier one at the same local rank (GPU of its
 * node: replicas sit at the same place on other nodes; with NICs shared by
 * GPUs two ranks of one node never fold into each other, see below) when
 * their loaded work is the same op
 * for op (kind, durations, host gaps, names, streams, events, sequence
 * numbers, send/recv positions) with a one-to-one renaming of their
 * communicators: the replica's tensor-parallel group for the
 * representative's, the data-parallel group for itself. Work is hashed as
 * each rank is loaded (communicators by order of first use, so that the
 * renaming does not change the hash) and compared in full with the ranks
 * of the same hash. The ranks of a node are decided together once the node
 * is loaded: they fold into the ranks of one other node, each communicator
 * agreeing with the ranks loaded so far, or they are all replayed (so that
 * a replica that differs, rank 0's say, leaves the next ones to fold into
 * the next replica). Where every GPU of a node has a NIC of its own
 * (rail-optimised nodes) and no rank is slowed, a rank may fold into one
 * at another local rank, and a node that does not fold whole decides rank
 * by rank, its own ranks included (decide_ranks): a pipeline stage's
 * tensor-parallel ranks, on one node, fold into one. A folded rank's ops
 * are dropped then, so memory follows the distinct ranks plus one node,
 * not the world size.
 *
 * The whole job must then be symmetric, or the folded replay would not be
 * the replay of every copy. After the last rank, until nothing changes, a
 * folded rank is unfolded (its ops rebuilt from its representative's, with
 * its own communicators) when:
 *   - a communicator's members do not all see it as the same one: a member
 *     replayed on its own (a straggler, a --slow-rank, a replica whose work
 *     differs) keeps its group, and with it every rank it talks to;
 *   - a communicator renamed to another does not map member i to member i,
 *     or one kept (the data-parallel group) has a folded member whose
 *     representative is not a member too, or carries send/recv;
 *   - a node whose GPUs use NICs holds both replayed and folded ranks, or
 *     its folded ranks' representatives are not all on one node at the same
 *     local ranks: then NIC sharing would differ between the copies. With a
 *     NIC per GPU only a GPU holding a replayed and a folded rank is: a
 *     folded rank's NIC and ports carry its representative's image alone
 *     (a collective's speed is that of its busiest NIC, a replayed one).
 * With fold_similar, host work is left out of the hash and the comparison:
 * the gaps (a replica's measured gaps are noise around the same host work,
 * as duplicate-rank elimination assumes) and the calls that take host time
 * only (host_only: the ncclGetUniqueId that a communicator's rank 0 alone
 * makes, which in exact folding keeps it, and every rank its communicators
 * reach, replayed on its own). A rank whose total host work is within
 * SIM_FOLD_SIMILAR of its representative's folds and takes its gaps and
 * calls, an approximation the report quantifies; an unfolded rank takes
 * them too.
 * What remains is exact: by symmetry every folded rank reaches each
 * collective when its representative does, so a collective waits only for
 * the members that are replayed (sim_comm.expected), and every node's NICs
 * carry what the corresponding replayed node's carry.
 *
 * A reference the loader takes as a copy of another rank's work (load.c
 * take_copy) is a lazy rank: that rank (x) and a renaming of its
 * communicators and devices, no ops. Where the renaming is one to one, its
 * hash is x's and it does a's work exactly when x does (same_work(a, x),
 * made once per (x, a) and renamed: lazy_same_work); else, or when it is
 * to be replayed, its ops are made (materialise). A replica then costs
 * O(communicators + devices).
 *
 * This file hashes, compares and decides; fold_check.c makes the symmetry
 * checks and unfolds; fold_rebuild.c rebuilds unfolded and lazy ranks.
 *
 * Costs: O(ops) per rank for the hash and for the comparison; the checks
 * cost O(members of all communicators + ranks) per round, and a round
 * unfolds at least one rank (rounds follow the chain of groups a broken
 * symmetry spreads along: a straggler's replica, stage by stage).
 */
#define _GNU_SOURCE
#include "fold_internal.h"

#include <string.h>

#include "maya/common.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31);
}

/* A call that takes host time only (no stream, no wait, not a marker): with
 * fold_similar it counts as host work, like the gaps, not as work to match
 * op for op. The rank that makes a communicator's id (ncclGetUniqueId) is
 * then like the others of its group; in exact folding it differs. */
static inline int host_only(const struct sim_op *o)
{
    return o->kind == SK_HOST && !o->flags && !o->stream && o->rec_type != MAYA_REC_MARKER;
}

/* Does r's host wait at a communicator's creation (its barrier q) before op i? */
static inline int at_bar(const struct sim_rank *r, uint32_t q, uint64_t i)
{
    return q < r->nbars && r->bars[q].op == i;
}

static uint32_t lane_of(const struct sim_job *j, uint32_t stream_plus_1)
{
    return stream_plus_1 ? j->streams[stream_plus_1 - 1].lane + 1 : 0;
}

/* ---- the hash of a rank's work ---- */

/* A communicator's number in order of first use by the rank (from 1). */
static uint64_t ordinal(struct maya_map *seen, uint32_t comm, int *oom)
{
    int created;
    uint64_t *v = maya_map_put(seen, comm, 0, &created);
    if (!v) {
        *oom = 1;
        return 0;
    }
    if (created)
        *v = seen->count;
    return *v;
}

/* A device as the hash sees it: itself, or where a rank may fold into one
 * at another local rank (each process on its own GPU, cudaSetDevice(local
 * rank)), its number in order of first use (from 1), as communicators. */
static uint64_t device_key(const struct sim_job *j, struct maya_map *seen, int device, int *oom)
{
    if (!j->fold_in_node)
        return (uint64_t)(uint16_t)device;
    int created;
    uint64_t *v = maya_map_put(seen, (uint64_t)(uint16_t)device, 0, &created);
    if (!v) {
        *oom = 1;
        return 0;
    }
    if (created)
        *v = seen->count;
    return *v;
}

/* The hash of r's work without its host work (gaps and host-only calls:
 * *loose), with it (the return value), and the host work's total: one pass
 * over the ops. */
static uint64_t work_hash(const struct sim_job *j, struct sim_rank *r, uint64_t *loose, int *oom)
{
    struct maya_map seen = { 0 }, devices = { 0 };
    uint64_t h = mix(mix(0x6a09e667f3bcc908ull, r->nstreams), r->nevents);
    uint64_t g = mix(0x510e527fade682d1ull, r->nops), total = 0;
    h = mix(mix(h, r->nbars), (uint64_t)r->complete);
    if (!j->fold_in_node)
        h = mix(h, (uint64_t)(uint32_t)r->local_rank);
    for (uint32_t k = 0; k < r->nstreams; k++) {
        const struct sim_stream *s = &j->streams[r->streams[k]];
        h = mix(mix(h, s->id), device_key(j, &devices, s->device, oom) << 32 | s->flags);
    }
    uint64_t n = 0; /* ops that are not host work, as same_work counts them */
    uint32_t q = 0;
    for (uint64_t i = 0;; i++) {
        int bar = at_bar(r, q, i);
        for (; at_bar(r, q, i); q++)
            h = mix(mix(h, n), ordinal(&seen, r->bars[q].comm, oom));
        if (i >= r->nops)
            break;
        const struct sim_op *o = &r->ops[i];
        g = mix(g, o->gap_ns);
        total += o->gap_ns;
        if (host_only(o) && !bar) { /* host work: in the exact hash only */
            g = mix(mix(g, (uint64_t)o->host_ns << 32 | o->name), o->sig);
            total += o->host_ns;
            continue;
        }
        n++;
        uint64_t dk = device_matters(o) ? device_key(j, &devices, o->device, oom) : 0xffff;
        h = mix(h, o->kind | (uint64_t)o->flags << 8 | (uint64_t)o->sub << 16 | (uint64_t)o->rec_type << 32 | dk << 48);
        h = mix(mix(h, o->dev_ns), (uint64_t)o->host_ns << 32 | o->name);
        h = mix(mix(h, o->arg2), lane_of(j, o->stream));
        uint64_t a = is_xfer(o) ? ordinal(&seen, o->arg, oom) : names_stream(o) ? lane_of(j, o->arg)
                     : names_device(o) ? device_key(j, &devices, (int)o->arg, oom) : o->arg;
        h = mix(h, a);
        if (!is_xfer(o)) /* a collective's signature holds its communicator's id */
            h = mix(h, o->sig);
    }
    for (; q < r->nbars; q++) /* none expected: barriers past the last op */
        h = mix(mix(h, r->bars[q].op), ordinal(&seen, r->bars[q].comm, oom));
    maya_map_free(&seen);
    maya_map_free(&devices);
    r->gap_total = total;
    *loose = h;
    return mix(h, g);
}

/* ---- comparing two ranks' work ---- */

struct renaming {
    struct maya_map fwd, back;  /* b's comm -> a's, a's -> b's (one to one) */
    struct maya_map dfwd, dback; /* b's device -> a's, a's -> b's (with fold_in_node) */
    struct sim_comm_pair *v;
    uint32_t n, cap;
    struct sim_dev_pair *dv;     /* dfwd's pairs */
    uint32_t dn, dcap;
    uint64_t host_calls;         /* same_work's: how many more host-only calls one side made */
    int oom;
};

static int rename_ok(const struct sim_job *j, struct renaming *m, uint32_t bc, uint32_t ac)
{
    if (j->comms[bc].nranks != j->comms[ac].nranks)
        return 0;
    uint64_t *f = maya_map_get(&m->fwd, bc, 0);
    if (f)
        return *f == ac;
    if (maya_map_get(&m->back, ac, 0))
        return 0; /* two of b's communicators for one of a's */
    uint64_t *x = maya_map_put(&m->fwd, bc, 0, NULL), *y = x ? maya_map_put(&m->back, ac, 0, NULL) : NULL;
    if (!x || !y || SIM_GROW(m->v, m->cap, m->n + 1) < 0) {
        m->oom = 1;
        return 0;
    }
    *x = ac;
    *y = bc;
    m->v[m->n++] = (struct sim_comm_pair){ bc, ac };
    return 1;
}

/* Are b's device bd and a's ad the same one, as renamed so far (one to one,
 * where a rank may fold into one at another local rank)? */
static int device_ok(const struct sim_job *j, struct renaming *m, int bd, int ad)
{
    if (!j->fold_in_node)
        return bd == ad;
    uint64_t *f = maya_map_get(&m->dfwd, (uint64_t)(uint16_t)bd, 0);
    if (f)
        return *f == (uint64_t)(uint16_t)ad;
    if (maya_map_get(&m->dback, (uint64_t)(uint16_t)ad, 0))
        return 0;
    uint64_t *x = maya_map_put(&m->dfwd, (uint64_t)(uint16_t)bd, 0, NULL);
    uint64_t *y = x ? maya_map_put(&m->dback, (uint64_t)(uint16_t)ad, 0, NULL) : NULL;
    if (!x || !y || SIM_GROW(m->dv, m->dcap, m->dn + 1) < 0) {
        m->oom = 1;
        return 0;
    }
    *x = (uint64_t)(uint16_t)ad;
    *y = (uint64_t)(uint16_t)bd;
    m->dv[m->dn++] = (struct sim_dev_pair){ (int16_t)bd, (int16_t)ad };
    return 1;
}

/* Does b do a's work (communicators renamed one to one, in m)? With
 * fold_similar, their host work may differ: the gaps and host-only calls'
 * time within SIM_FOLD_SIMILAR in total (*gap_diff: by how much), and the
 * host-only calls themselves (m->host_calls: how many more one made). */
static int same_work(const struct sim_job *j, const struct sim_rank *a, const struct sim_rank *b, struct renaming *m,
                     double *gap_diff)
{
    int gaps = !j->fold_similar;
    double ga = 0, gb = 0;
    if ((gaps && a->nops != b->nops) || a->nstreams != b->nstreams || a->nevents != b->nevents ||
        a->nbars != b->nbars || a->complete != b->complete || (!j->fold_in_node && a->local_rank != b->local_rank))
        return 0;
    for (uint32_t k = 0; k < a->nstreams; k++) {
        const struct sim_stream *x = &j->streams[a->streams[k]], *y = &j->streams[b->streams[k]];
        if (x->id != y->id || !device_ok(j, m, y->device, x->device) || x->flags != y->flags)
            return 0;
    }
    /* a's op, b's op, their next communicator barriers; host-only calls passed over */
    uint64_t i = 0, k = 0, ca = 0, cb = 0;
    uint32_t qa = 0, qb = 0;
    for (;;) {
        for (; !gaps && i < a->nops && host_only(&a->ops[i]) && !at_bar(a, qa, i); i++, ca++)
            ga += (double)a->ops[i].gap_ns + a->ops[i].host_ns;
        for (; !gaps && k < b->nops && host_only(&b->ops[k]) && !at_bar(b, qb, k); k++, cb++)
            gb += (double)b->ops[k].gap_ns + b->ops[k].host_ns;
        if (i == a->nops || k == b->nops)
            break;
        for (; at_bar(a, qa, i) || at_bar(b, qb, k); qa++, qb++)
            if (!at_bar(a, qa, i) || !at_bar(b, qb, k) || !rename_ok(j, m, b->bars[qb].comm, a->bars[qa].comm))
                return 0;
        const struct sim_op *x = &a->ops[i++], *y = &b->ops[k++];
        if (x->kind != y->kind || x->flags != y->flags || x->sub != y->sub || x->rec_type != y->rec_type ||
            (device_matters(x) && !device_ok(j, m, y->device, x->device)) || (gaps && x->gap_ns != y->gap_ns) ||
            x->dev_ns != y->dev_ns || x->host_ns != y->host_ns || x->name != y->name || x->arg2 != y->arg2 ||
            lane_of(j, x->stream) != lane_of(j, y->stream))
            return 0;
        ga += (double)x->gap_ns;
        gb += (double)y->gap_ns;
        if (is_xfer(x)) {
            if (!rename_ok(j, m, y->arg, x->arg))
                return 0;
        } else if (x->sig != y->sig || (names_stream(x) ? lane_of(j, x->arg) != lane_of(j, y->arg)
                                        : names_device(x) ? !device_ok(j, m, (int)y->arg, (int)x->arg)
                                                          : x->arg != y->arg)) {
            return 0;
        }
    }
    if (i != a->nops || k != b->nops)
        return 0;
    for (; qa < a->nbars || qb < b->nbars; qa++, qb++) /* barriers after the last op */
        if (qa == a->nbars || qb == b->nbars || a->bars[qa].op != i || b->bars[qb].op != k ||
            !rename_ok(j, m, b->bars[qb].comm, a->bars[qa].comm))
            return 0;
    m->host_calls = ca > cb ? ca - cb : cb - ca;
    *gap_diff = ga > 0 ? (gb > ga ? gb - ga : ga - gb) / ga : gb > 0;
    return *gap_diff <= (gaps ? 0 : SIM_FOLD_SIMILAR);
}

static int compare(struct sim_job *j, uint32_t ai, uint32_t bi, struct renaming *m, double *gap_diff);

static void renaming_free(struct renaming *m)
{
    maya_map_free(&m->fwd);
    maya_map_free(&m->back);
    maya_map_free(&m->dfwd);
    maya_map_free(&m->dback);
    free(m->v);
    free(m->dv);
}

/* sim_rank.fold of a rank of the node being decided rank by rank, before
 * its turn (decide_ranks) */
#define SIM_FOLD_UNDECIDED (-2)
#define SIM_FOLD_UNKNOWN INT32_MIN

/* The global rank replayed for global rank g among the ranks loaded so far;
 * SIM_FOLD_UNKNOWN when g is not loaded or not decided yet. */
static int replayed_rank(const struct sim_job *j, int g)
{
    uint64_t *x = maya_map_get(&j->fold_index, (uint64_t)(uint32_t)g, 0);
    if (!x || j->ranks[*x - 1].fold == SIM_FOLD_UNDECIDED)
        return SIM_FOLD_UNKNOWN;
    const struct sim_rank *o = &j->ranks[*x - 1];
    return o->fold >= 0 ? j->ranks[o->fold].rank : o->rank;
}

/* Would folding rank ri as m renames its communicators agree with the ranks
 * loaded before it? For each communicator renamed to another, a member
 * already loaded must be folded into the member at its place in the other
 * (the checks of sim_fold_finish, early: a choice of representative that
 * they would undo is not made). Kept communicators (the data-parallel
 * group, the world) wait for sim_fold_finish. */
static int agrees(const struct sim_job *j, uint32_t ri, const struct renaming *m)
{
    /* both sides as replayed where the other communicator's members may be
     * folded too (into a rank of their own node) */
    for (uint32_t k = 0; k < m->n; k++) {
        if (m->v[k].mine == m->v[k].theirs)
            continue;
        const struct sim_comm *c = &j->comms[m->v[k].mine], *to = &j->comms[m->v[k].theirs];
        for (int i = 0; i < c->nranks; i++) {
            int mine = replayed_rank(j, c->member_rank[i]);
            int theirs = j->fold_in_node ? replayed_rank(j, to->member_rank[i]) : to->member_rank[i];
            if (c->member_rank[i] != j->ranks[ri].rank && mine != SIM_FOLD_UNKNOWN && theirs != SIM_FOLD_UNKNOWN &&
                mine != theirs)
                return 0;
        }
    }
    return 1;
}

/* Drop a folded rank's own copy of the work. Its streams are the last ones
 * loaded, so they are given back. */
static void release(struct sim_job *j, struct sim_rank *r)
{
    if (r->nstreams && r->streams[0] + r->nstreams == j->nstreams) {
        for (uint32_t k = 0; k < r->nstreams; k++)
            free(j->streams[r->streams[k]].q), free(j->streams[r->streams[k]].waiters);
        j->nstreams -= r->nstreams;
    }
    free(r->ops);
    free(r->streams);
    free(r->events);
    free(r->waits);
    free(r->bars);
    r->ops = NULL;
    r->streams = NULL;
    r->events = NULL;
    r->waits = NULL;
    r->bars = NULL;
    r->nops = r->capops = 0;
    r->nstreams = r->nevents = r->capevents = r->nbars = r->capbars = 0;
    r->nwaits = r->capwaits = 0;
    maya_map_free(&r->stream_ids);
    maya_map_free(&r->event_ids);
    maya_map_free(&r->comms_joined);
}

/* Make a replayed rank a candidate representative for the ranks after it. */
static int add_candidate(struct sim_job *j, uint32_t ri)
{
    if (j->ranks[ri].lazy && sim_materialise(j, ri) < 0) /* replayed: it needs its ops */
        return -1;
    struct sim_rank *r = &j->ranks[ri];
    for (uint64_t k = 0;; k++) {
        int created;
        uint64_t *v = maya_map_put(&j->fold_classes, r->fold_hash, k, &created);
        if (!v)
            return maya_error("out of memory folding the job");
        if (created) {
            *v = ri + 1;
            return 0;
        }
    }
}

/* A representative on node t for pending rank ri: the first candidate
 * there whose work is ri's (renaming in m). -1 if none. */
static int candidate_on(struct sim_job *j, uint32_t ri, int t, struct renaming *m, double *diff)
{
    const struct sim_rank *r = &j->ranks[ri];
    uint64_t hash = r->fold_hash;
    for (uint64_t k = 0;; k++) {
        uint64_t *v = maya_map_get(&j->fold_classes, hash, k);
        if (!v)
            return -1;
        if (j->ranks[*v - 1].node != t)
            continue;
        memset(m, 0, sizeof *m);
        int same = compare(j, *v - 1, ri, m, diff);
        if (same > 0)
            return (int)(*v - 1);
        renaming_free(m);
        if (same < 0 || m->oom)
            return -2;
    }
}

/* The ranks of a node that did not fold whole into another, where every
 * GPU has a NIC of its own: each folds into the first rank replayed so far,
 * on any node, of its own node too, whose work is its own and whose
 * communicators agree; the others are replayed. The tensor-parallel ranks
 * of a pipeline stage do the same work on one node: they fold into one.
 * Exact as folding into another node is: a folded rank's transfers are
 * its representative's, renamed, on NICs and ports that carry nothing
 * else (sim_fold_finish checks the communicators as for any fold). Memory
 * and replay then follow the distinct work, not the GPUs of a node. m[],
 * diff[]: n of each, zeroed, the caller's. */
static int decide_ranks(struct sim_job *j, const uint32_t *p, uint32_t n, struct renaming *m, double *diff)
{
    int rc = 0;
    for (uint32_t i = 0; i < n; i++)
        j->ranks[p[i]].fold = SIM_FOLD_UNDECIDED;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        struct sim_rank *r = &j->ranks[p[i]];
        r->fold = -1;
        for (uint64_t k = 0; r->fold < 0; k++) {
            uint64_t *v = maya_map_get(&j->fold_classes, r->fold_hash, k);
            if (!v)
                break;
            memset(&m[i], 0, sizeof m[i]);
            r->fold = (int)(*v - 1);
            int same = compare(j, (uint32_t)r->fold, p[i], &m[i], &diff[i]);
            if (same < 0)
                m[i].oom = 1;
            if (same <= 0 || !agrees(j, p[i], &m[i]))
                r->fold = -1;
            else {
                r->comm_map = m[i].v;
                r->ncomm_map = m[i].n;
                r->dev_map = m[i].dv;
                r->ndev_map = m[i].dn;
                m[i].v = NULL;
                m[i].dv = NULL;
                j->fold_gap_diff = MAYA_MAX(j->fold_gap_diff, diff[i]);
                j->fold_host_calls = MAYA_MAX(j->fold_host_calls, m[i].host_calls);
            }
            renaming_free(&m[i]);
            if (m[i].oom)
                rc = maya_error("out of memory folding the job");
            if (m[i].oom)
                break;
        }
        if (r->fold < 0) {
            j->fold_replays[r->node >= 0 && r->node < MAYA_MAX(j->nodes, 1) ? r->node : 0] = 1;
            rc = add_candidate(j, p[i]);
        }
    }
    for (uint32_t i = 0; i < n; i++)
        if (j->ranks[p[i]].fold == SIM_FOLD_UNDECIDED)
            j->ranks[p[i]].fold = -1;
    for (uint32_t i = n; i-- > 0;) /* streams are given back where they are the last ones */
        if (j->ranks[p[i]].fold >= 0)
            release(j, &j->ranks[p[i]]);
    return rc;
}

/* The ranks of one node, loaded: they fold together into the ranks of one
 * other node (each into a rank of the same local rank and work, every
 * communicator agreeing), or not at all: a node's NICs then carry what the
 * other node's carry, and a replica that differs (rank 0's, which may print
 * the loss) leaves the replicas after it to fold into the next one. */
int sim_fold_decide_pending(struct sim_job *j)
{
    uint32_t n = j->npending, *p = j->pending;
    j->npending = 0;
    if (!n)
        return 0;
    int nodes = MAYA_MAX(j->nodes, 1), node = j->ranks[p[0]].node;
    node = node >= 0 && node < nodes ? node : 0;
    struct renaming *m = calloc(n, sizeof *m);
    double *diff = calloc(n, sizeof *diff);
    int rc = !m || !diff ? maya_error("out of memory folding the job") : 0, done = 0;
    /* the nodes the first rank could fold into, in order of candidates */
    for (uint64_t k = 0; rc == 0 && !done && nodes > 1 && !j->fold_replays[node]; k++) {
        uint64_t *v = maya_map_get(&j->fold_classes, j->ranks[p[0]].fold_hash, k);
        if (!v)
            break;
        int t = j->ranks[*v - 1].node;
        if (t == node || (j->fold_target[node] >= 0 && t != j->fold_target[node]))
            continue;
        uint32_t got = 0;
        for (; got < n; got++) {
            int c = candidate_on(j, p[got], t, &m[got], &diff[got]);
            if (c == -2)
                rc = maya_error("out of memory folding the job");
            if (c < 0)
                break;
            j->ranks[p[got]].fold = c;
        }
        int ok = got == n;
        for (uint32_t i = 0; ok && i < n; i++)
            ok = agrees(j, p[i], &m[i]);
        if (ok) {
            for (uint32_t i = 0; i < n; i++) {
                struct sim_rank *r = &j->ranks[p[i]];
                r->comm_map = m[i].v;
                r->ncomm_map = m[i].n;
                r->dev_map = m[i].dv;
                r->ndev_map = m[i].dn;
                m[i].v = NULL;
                m[i].dv = NULL;
                j->fold_gap_diff = MAYA_MAX(j->fold_gap_diff, diff[i]);
                j->fold_host_calls = MAYA_MAX(j->fold_host_calls, m[i].host_calls);
            }
            for (uint32_t i = n; i-- > 0;) /* their streams are the last ones, in this order */
                release(j, &j->ranks[p[i]]);
            j->fold_target[node] = t;
            done = 1;
        }
        for (uint32_t i = 0; i < got; i++) {
            if (!done)
                j->ranks[p[i]].fold = -1;
            renaming_free(&m[i]);
        }
    }
    if (rc == 0 && !done && j->fold_in_node)
        rc = decide_ranks(j, p, n, m, diff);
    else if (rc == 0 && !done) {
        j->fold_replays[node] = 1;
        for (uint32_t i = 0; i < n && rc == 0; i++)
            rc = add_candidate(j, p[i]);
    }
    free(m);
    free(diff);
    return rc;
}

int sim_fold_next_node(struct sim_job *j, int node)
{
    if (j->npending && j->ranks[j->pending[0]].node != node)
        return sim_fold_decide_pending(j);
    return 0;
}

int sim_fold_setup(struct sim_job *j)
{
    if (j->fold_target)
        return 0;
    int nodes = MAYA_MAX(j->nodes, 1);
    j->fold_target = malloc((size_t)nodes * sizeof *j->fold_target);
    j->fold_replays = calloc((size_t)nodes, 1);
    if (!j->fold_target || !j->fold_replays)
        return maya_error("out of memory folding the job");
    for (int n = 0; n < nodes; n++)
        j->fold_target[n] = -1;
    /* every GPU of a node its own NIC (rail-optimised nodes); not with a
     * --slow-rank, whose tensor-parallel peers would then unfold their
     * whole column of the job instead of its replica alone */
    int gpn = MAYA_MAX(j->gpus_per_node, 1);
    j->fold_in_node = j->gpu_nic != NULL && !j->slowed;
    for (int a = 0; a < gpn && j->fold_in_node; a++)
        for (int b = a + 1; b < gpn && j->fold_in_node; b++)
            j->fold_in_node = j->gpu_nic[a] != j->gpu_nic[b];
    return 0;
}

int sim_fold_rank(struct sim_job *j, uint32_t ri)
{
    struct sim_rank *r = &j->ranks[ri];
    r->fold = -1;
    r->weight = 1;
    if (j->no_fold)
        return 0;
    if (sim_fold_setup(j) < 0)
        return -1;
    int oom = 0;
    if (r->lazy) { /* its work is that of the rank it copies, renamed: so is its hash */
        const struct sim_rank *x = &j->ranks[r->lazy->of];
        r->fold_hash = x->fold_hash;
        r->loose_hash = x->loose_hash;
        r->gap_total = x->gap_total;
    } else {
        uint64_t exact = work_hash(j, r, &r->loose_hash, &oom);
        r->fold_hash = j->fold_similar ? r->loose_hash : exact;
    }
    uint64_t *x = maya_map_put(&j->fold_index, (uint64_t)(uint32_t)r->rank, 0, NULL);
    if (oom || !x)
        return maya_error("out of memory folding the job");
    *x = ri + 1;
    if (SIM_GROW(j->pending, j->cappending, j->npending + 1) < 0)
        return maya_error("out of memory folding the job");
    j->pending[j->npending++] = ri;
    return 0;
}

/* Does lazy rank b do a's work (renaming in m, as same_work gives it)?
 * Its work is that of the rank it copies, x, renamed one to one: a's and
 * x's comparison (kept in x's uses for the next copy of x that meets a),
 * renamed. 1 yes, 0 no, -1 out of memory. */
static int lazy_same_work(struct sim_job *j, uint32_t ai, const struct sim_rank *b, struct renaming *m,
                          double *gap_diff)
{
    const struct sim_lazy *z = b->lazy;
    struct sim_uses *u = j->ranks[z->of].uses;
    const struct sim_rank *a = &j->ranks[ai], *x = &j->ranks[z->of];
    if (a->complete != b->complete || (!j->fold_in_node && a->local_rank != b->local_rank))
        return 0;
    if (ai != z->of && (!u->vs_valid || u->vs != ai)) {
        struct renaming ax;
        memset(&ax, 0, sizeof ax);
        free(u->vs_comms);
        free(u->vs_devs);
        u->vs_comms = NULL, u->vs_devs = NULL;
        u->vs = ai;
        u->vs_valid = 1;
        u->vs_same = same_work(j, a, x, &ax, &u->vs_diff);
        u->vs_host_calls = ax.host_calls;
        if (ax.oom) {
            renaming_free(&ax);
            u->vs_valid = 0;
            return -1;
        }
        u->vs_comms = ax.v, u->vs_ncomms = ax.n;
        u->vs_devs = ax.dv, u->vs_ndevs = ax.dn;
        ax.v = NULL, ax.dv = NULL;
        renaming_free(&ax);
    }
    if (ai != z->of && !u->vs_same)
        return 0;
    /* x's communicators and devices as a's (itself where a is x), b's for x's */
    if (ai == z->of) {
        for (uint32_t k = 0; k < u->ncomms; k++)
            if (!rename_ok(j, m, sim_lazy_comm(z, u->comms[k].comm), u->comms[k].comm))
                return m->oom ? -1 : 0;
        for (int d = 0; d < 64; d++)
            if ((u->devmask >> d & 1) && !device_ok(j, m, sim_lazy_device(z, (int16_t)d), (int16_t)d))
                return m->oom ? -1 : 0;
        *gap_diff = 0;
        m->host_calls = 0;
        return 1;
    }
    for (uint32_t k = 0; k < u->vs_ncomms; k++) /* ax's pairs: mine x's, theirs a's */
        if (!rename_ok(j, m, sim_lazy_comm(z, u->vs_comms[k].mine), u->vs_comms[k].theirs))
            return m->oom ? -1 : 0;
    if (j->fold_in_node) {
        for (uint32_t k = 0; k < u->vs_ndevs; k++)
            if (!device_ok(j, m, sim_lazy_device(z, u->vs_devs[k].mine), u->vs_devs[k].theirs))
                return m->oom ? -1 : 0;
    }
    *gap_diff = u->vs_diff;
    m->host_calls = u->vs_host_calls;
    return 1;
}

/* same_work for rank bi, lazy or not: a lazy rank whose copy cannot be
 * compared through the rank it copies is materialised first. 1 yes, 0 no,
 * -1 on error. */
static int compare(struct sim_job *j, uint32_t ai, uint32_t bi, struct renaming *m, double *gap_diff)
{
    struct sim_rank *b = &j->ranks[bi];
    if (b->lazy && b->lazy->exact && j->ranks[b->lazy->of].uses && j->ranks[ai].ops)
        return lazy_same_work(j, ai, b, m, gap_diff);
    if (b->lazy && sim_materialise(j, bi) < 0)
        return -1;
    return same_work(j, &j->ranks[ai], b, m, gap_diff);
}


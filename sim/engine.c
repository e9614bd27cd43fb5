/* The replay: a discrete-event simulation of every rank's host, streams,
 * copy engines, collectives and the nodes' NICs.
 *
 * Events (struct sim_heap_ev) are kept in a heap keyed by (time, sequence):
 *   EV_HOST        a rank's host finished its next call (gap + host cost):
 *                  the call takes effect (enqueues work, records an event,
 *                  starts waiting) and the host moves on unless it waits
 *   EV_STREAM_DONE the op running on a stream finished
 *   EV_XFER_DONE   a collective or send/recv finished its transfer
 * Everything else happens inside those: a stream starts its next entry the
 * moment it can; a wait that becomes satisfied wakes its waiter through a
 * work list (drained after each event, so nothing recurses deeply).
 *
 * Stream semantics (CUDA): entries of a stream run in order. An op on the
 * legacy default stream first waits for all work already issued to the
 * device's blocking streams, and an op on a blocking stream waits for work
 * already issued to the legacy stream; non-blocking streams do neither.
 * These waits, and cudaStreamWaitEvent, are queue entries that complete when
 * the target stream has completed a given number of entries; an event record
 * is such a position (stream, count), kept per event with its version.
 * Copies between host and device also need the device's copy engine for
 * their direction (one each way). A collective (or send/recv pair) starts
 * when its last member reaches the head of its stream; ops of one NCCL group
 * on a stream arrive together. A transfer between nodes uses the NICs of its
 * members' GPUs (the cluster's nic_of_gpu: GPU i on NIC i of a rail-
 * optimised node) and shares each with the other transfers on that NIC
 * (processor sharing, nic.c): with k flows on its busiest NIC a flow
 * progresses at 1/k of its rate; flows on other NICs do not slow it. A
 * send/recv inside a node shares the sender's port out and the receiver's
 * port in the same way (the sends of an all-to-all split the GPU's link).
 * A collective's NCCL kernel holds an SM per channel while it runs (the
 * estimator's coll_ctas: 16 to 32 on NVLink nodes); a kernel that starts
 * on one of its members' GPUs meanwhile has the other SMs only and takes
 * SMs / (SMs - held) as long (held at most half the SMs): the compute
 * slowdown measured when FSDP's and DDP's communication overlaps their
 * kernels (on average 19 %, Lee et al. 2025, arXiv 2507.03114; a GEMM
 * of one wave of 132 blocks beside a 24-CTA all-gather on an H100 took
 * nearly twice as long, its blocks spilling into a second wave). A kernel
 * already running when a collective starts keeps its time; one starting
 * the moment a collective starts or ends runs on all the SMs. Costs: a
 * lookup per kernel while some collective runs, and a walk of the few
 * collectives running on its GPU.
 *
 * Costs: O(log E) per event for the heap (E pending events, about one per
 * busy host, stream and transfer); waking waiters costs O(waiters on the
 * stream); a flow (a transfer between nodes, or a send/recv) starting or
 * ending costs O(the flows sharing one of its links, times the links each
 * uses, plus log F per flow whose rate changes) for F flows running: flows
 * elsewhere are not visited, and a flow's completion moves in place in the
 * flows' own heap (nic.c), so no stale events pile up.
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <math.h>
#include <string.h>

#include "maya/common.h"
#include "maya/progress.h"

enum { EV_HOST = 1, EV_STREAM_DONE = 2, EV_XFER_DONE = 3, EV_BARRIER = 4 };

/* the work list of waiters to wake (stream index, or rank | SIM_WAITER_HOST) */
struct wake {
    uint32_t *v;
    uint64_t n, cap, head;
    int draining;
};

struct engine {
    struct sim_job *j;
    struct wake wake;
    int failed;
};

static int oom(struct engine *E)
{
    E->failed = 1;
    return maya_error("out of memory in the simulator");
}

static int push(struct engine *E, uint64_t t, uint32_t type, uint32_t id, uint32_t version)
{
    return sim_heap_push(&E->j->heap, t, type, id, version) < 0 ? oom(E) : 0;
}

/* ---- hosts ---- */

/* The host of rank ri is free at t: schedule its next call (after the
 * communicator barriers in front of it, if any). */
static void host_next(struct engine *E, uint32_t ri, uint64_t t)
{
    struct sim_rank *r = &E->j->ranks[ri];
    r->free_at = t;
    if (r->done_at < t)
        r->done_at = t;
    if (r->next >= r->nops)
        return;
    const struct sim_op *o = &r->ops[r->next];
    int barrier = r->nextbar < r->nbars && r->bars[r->nextbar].op == r->next;
    push(E, t + o->gap_ns + (barrier ? 0 : o->host_ns), barrier ? EV_BARRIER : EV_HOST, ri, 0);
}

/* The host of rank ri reached its next call, in front of which are
 * communicator barriers: arrive at them; the call goes on when the last
 * process has arrived at each. */
static void barrier_arrive(struct engine *E, uint32_t ri)
{
    struct sim_job *j = E->j;
    struct sim_rank *r = &j->ranks[ri];
    while (r->nextbar < r->nbars && r->bars[r->nextbar].op == r->next) {
        struct sim_comm *c = &j->comms[r->bars[r->nextbar++].comm];
        if (++c->arrived < c->joiners) {
            if (SIM_GROW(c->waiting, c->capwaiting, c->nwaiting + 1) < 0) {
                oom(E);
                return;
            }
            c->waiting[c->nwaiting++] = ri;
            r->blocked = 1;
            return;
        }
        /* the last one: everyone waiting goes on */
        for (uint32_t k = 0; k < c->nwaiting; k++) {
            struct sim_rank *w = &j->ranks[c->waiting[k]];
            w->blocked = 0;
            barrier_arrive(E, c->waiting[k]);
        }
        c->nwaiting = 0;
    }
    if (!r->blocked && r->next < r->nops)
        push(E, j->now + r->ops[r->next].host_ns, EV_HOST, ri, 0);
}

static void wake_later(struct engine *E, uint32_t who)
{
    struct wake *w = &E->wake;
    if (w->head == w->n)
        w->head = w->n = 0;
    if (SIM_GROW(w->v, w->cap, w->n + 1) < 0) {
        oom(E);
        return;
    }
    w->v[w->n++] = who;
}

/* Make `who` wait until stream s has completed count entries. */
static void wait_on(struct engine *E, uint32_t s, uint64_t count, uint32_t who)
{
    struct sim_stream *st = &E->j->streams[s];
    if (SIM_GROW(st->waiters, st->capwaiters, st->nwaiters + 1) < 0) {
        oom(E);
        return;
    }
    st->waiters[st->nwaiters++] = (struct sim_waiter){ count, who };
}

/* Check a device synchronisation from the stream it got to; 1 if done. */
static int device_sync_step(struct engine *E, uint32_t ri)
{
    struct sim_job *j = E->j;
    struct sim_rank *r = &j->ranks[ri];
    for (; r->sync_pos < r->nstreams; r->sync_pos++) {
        uint32_t s = r->streams[r->sync_pos];
        struct sim_stream *st = &j->streams[s];
        if (st->device != r->sync_device || st->completed >= st->enqueued)
            continue;
        wait_on(E, s, st->enqueued, ri | SIM_WAITER_HOST);
        return 0;
    }
    r->sync_device = -1;
    return 1;
}

static void host_wait_stream(struct engine *E, uint32_t ri, uint32_t s, uint64_t count)
{
    struct sim_stream *st = &E->j->streams[s];
    if (st->completed >= count)
        return;
    E->j->ranks[ri].blocked = 1;
    wait_on(E, s, count, ri | SIM_WAITER_HOST);
}

static void host_wait_device(struct engine *E, uint32_t ri, int device)
{
    struct sim_rank *r = &E->j->ranks[ri];
    r->sync_device = device;
    r->sync_pos = 0;
    if (!device_sync_step(E, ri))
        r->blocked = 1;
}

/* A host waiter fired: go on with a device sync, or resume. */
static void host_wake(struct engine *E, uint32_t ri)
{
    struct sim_rank *r = &E->j->ranks[ri];
    if (r->sync_device >= 0 && !device_sync_step(E, ri))
        return;
    r->blocked = 0;
    host_next(E, ri, E->j->now);
}

/* ---- streams ---- */

/* Append to a ring buffer (a power-of-two capacity, doubled when full, so
 * an append costs O(1) amortised). 0, or -1 when out of memory. */
static int ring_push(struct engine *E, uint32_t **q, uint32_t *cap, uint32_t *head, uint32_t *len, uint32_t v)
{
    if (*len == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 16;
        uint32_t *n = malloc(ncap * sizeof *n);
        if (!n)
            return oom(E);
        for (uint32_t i = 0; i < *len; i++)
            n[i] = (*q)[(*head + i) & (*cap - 1)];
        free(*q);
        *q = n;
        *cap = ncap;
        *head = 0;
    }
    (*q)[(*head + (*len)++) & (*cap - 1)] = v;
    return 0;
}

static void q_push(struct engine *E, struct sim_stream *st, uint32_t entry)
{
    if (ring_push(E, &st->q, &st->qcap, &st->qhead, &st->qlen, entry) == 0)
        st->enqueued++;
}

static inline uint32_t q_at(const struct sim_stream *st, uint32_t i)
{
    return st->q[(st->qhead + i) & (st->qcap - 1)];
}

static void push_wait(struct engine *E, uint32_t s, uint32_t target, uint64_t count)
{
    struct sim_job *j = E->j;
    struct sim_stream *st = &j->streams[s];
    struct sim_rank *r = &j->ranks[st->rank];
    if (SIM_GROW(r->waits, r->capwaits, r->nwaits + 1) < 0) {
        oom(E);
        return;
    }
    r->waits[r->nwaits] = (struct sim_wait){ target, count };
    q_push(E, st, SIM_Q_WAIT | (uint32_t)r->nwaits++);
}

static void try_start(struct engine *E, uint32_t s);

/* The head entries of stream s (n of them) are done: pop them, wake whoever
 * waited for this many completions, and start what comes next. */
static void stream_complete(struct engine *E, uint32_t s, uint32_t n)
{
    struct sim_job *j = E->j;
    struct sim_stream *st = &j->streams[s];
    st->qhead = (st->qhead + n) & (st->qcap - 1);
    st->qlen -= n;
    st->completed += n;
    st->busy = 0;
    st->running = 0;
    struct sim_rank *r = &j->ranks[st->rank];
    if (r->done_at < j->now)
        r->done_at = j->now;
    uint32_t k = 0;
    for (uint32_t i = 0; i < st->nwaiters; i++) {
        if (st->waiters[i].count <= st->completed)
            wake_later(E, st->waiters[i].who);
        else
            st->waiters[k++] = st->waiters[i];
    }
    st->nwaiters = k;
    wake_later(E, s); /* start the next entry once the wakes are done */
}

static struct sim_engine_q *copy_engine(struct engine *E, const struct sim_stream *st, int dir)
{
    struct sim_job *j = E->j;
    int created;
    uint64_t *v = maya_map_put(&j->engine_ids, st->rank, (uint64_t)(uint32_t)st->device * 2 + (uint64_t)dir,
                               &created);
    if (!v) {
        oom(E);
        return NULL;
    }
    if (created) {
        if (SIM_GROW(j->engines, j->capengines, j->nengines + 1) < 0) {
            oom(E);
            return NULL;
        }
        memset(&j->engines[j->nengines], 0, sizeof j->engines[0]);
        *v = ++j->nengines;
    }
    return &j->engines[*v - 1];
}

/* The collectives holding SMs on a rank's device (engine.c's comment at
 * the top); NULL when out of memory. */
static struct sim_held *held_on(struct engine *E, uint32_t rank, int32_t device)
{
    struct sim_job *j = E->j;
    int created;
    uint64_t *v = maya_map_put(&j->held_ids, rank, (uint64_t)(uint32_t)device, &created);
    if (!v) {
        oom(E);
        return NULL;
    }
    if (created) {
        if (SIM_GROW(j->held, j->capheld, j->nheld + 1) < 0) {
            oom(E);
            return NULL;
        }
        memset(&j->held[j->nheld], 0, sizeof j->held[0]);
        *v = ++j->nheld;
    }
    return &j->held[*v - 1];
}

/* Collective xi's members' SMs taken (take 1) or given back (0). */
static void hold_sms(struct engine *E, uint32_t xi, int take)
{
    struct sim_job *j = E->j;
    const struct sim_xfer *x = &j->xfers[xi];
    for (int i = 0; i < x->arrived; i++) {
        uint32_t s = x->who[4 * i], ri = x->who[4 * i + 1];
        uint64_t op = x->who[4 * i + 2] | (uint64_t)x->who[4 * i + 3] << 32;
        uint32_t n = SIM_COLL_CTAS(&j->ranks[ri].ops[op]);
        struct sim_held *h = n ? held_on(E, ri, j->streams[s].device) : NULL;
        if (!h)
            continue;
        if (take) {
            if (SIM_GROW(h->v, h->cap, h->n + 1) < 0) {
                oom(E);
                return;
            }
            h->v[h->n++] = (struct sim_hold){ xi, n, s };
            j->held_total++;
            continue;
        }
        for (uint32_t k = 0; k < h->n; k++)
            if (h->v[k].xfer == xi) {
                h->v[k] = h->v[--h->n];
                j->held_total--;
                break;
            }
    }
}

/* Does hold k run now: started before now, ends after it? (At equal times
 * the order events are taken in must not matter: folding replays fewer
 * ranks, whose events number differently.) */
static int holds_now(const struct sim_job *j, const struct sim_hold *k)
{
    const struct sim_xfer *x = &j->xfers[k->xfer];
    uint64_t end = x->active ? x->due : x->start + x->dev_ns;
    return x->start < j->now && end > j->now;
}

/* The SMs held on a stream's device now, at most half the GPU's: on each
 * stream, the most any of its running collectives holds (a group of
 * collectives on one stream is one NCCL kernel, its channels shared out
 * among them; kernels on other streams add up). A device runs few
 * collectives at once: the walk is quadratic in them. */
static uint32_t held_now(const struct sim_job *j, const struct sim_stream *st, int sms)
{
    const uint64_t *v = maya_map_get(&j->held_ids, st->rank, (uint64_t)(uint32_t)st->device);
    if (!v)
        return 0;
    const struct sim_held *h = &j->held[*v - 1];
    uint64_t n = 0;
    for (uint32_t k = 0; k < h->n; k++) {
        if (!holds_now(j, &h->v[k]))
            continue;
        int first = 1; /* the first running hold of its stream counts that stream's most */
        uint32_t most = h->v[k].sms;
        for (uint32_t i = 0; i < h->n && first; i++)
            if (i != k && h->v[i].stream == h->v[k].stream && holds_now(j, &h->v[i])) {
                if (i < k)
                    first = 0;
                else
                    most = MAYA_MAX(most, h->v[i].sms);
            }
        if (first)
            n += most;
    }
    return (uint32_t)MAYA_MIN(n, (uint64_t)sms / 2);
}

/* Run the head op of stream s for its duration: a kernel beside a
 * collective on its GPU, on the SMs the collective leaves it. */
static void run_head(struct engine *E, uint32_t s, const struct sim_op *o, struct sim_time *t)
{
    struct sim_job *j = E->j;
    struct sim_stream *st = &j->streams[s];
    st->busy = 1;
    st->running = 1;
    t->dev_start = j->now;
    uint64_t dev = o->dev_ns;
    int sms = j->gpu_spec ? j->gpu_spec->prop.multiProcessorCount : 0;
    uint32_t held = j->held_total && o->kind == SK_KERNEL && sms > 1 ? held_now(j, st, sms) : 0;
    if (held)
        dev = (uint64_t)llround((double)dev * sms / (sms - held));
    push(E, j->now + dev, EV_STREAM_DONE, s, 0);
}

static void arrive(struct engine *E, uint32_t s, uint64_t op_index);

static void try_start(struct engine *E, uint32_t s)
{
    struct sim_job *j = E->j;
    struct sim_stream *st = &j->streams[s];
    struct sim_rank *r = &j->ranks[st->rank];
    while (!st->busy && st->qlen && !E->failed) {
        uint32_t e = q_at(st, 0);
        if (e & SIM_Q_WAIT) {
            const struct sim_wait *w = &r->waits[e & ~SIM_Q_WAIT];
            if (j->streams[w->target].completed >= w->count) {
                stream_complete(E, s, 1);
                continue;
            }
            st->busy = 1; /* blocked until the target gets there */
            wait_on(E, w->target, w->count, s);
            return;
        }
        const struct sim_op *o = &r->ops[e];
        struct sim_time *t = &r->times[e];
        switch (o->kind) {
        case SK_COPY: {
            struct sim_engine_q *eq = copy_engine(E, st, o->sub);
            if (!eq)
                return;
            st->busy = 1;
            if (eq->busy) {
                ring_push(E, &eq->q, &eq->qcap, &eq->qhead, &eq->qlen, s); /* waits for the engine */
                return;
            }
            eq->busy = 1;
            run_head(E, s, o, t);
            return;
        }
        case SK_COLL:
        case SK_P2P: {
            /* the head and the ops of its NCCL group right behind it arrive
             * together; NCCL launches a group at ncclGroupEnd, so a group
             * whose last op the host has not issued yet does not start */
            uint32_t n = 1;
            while (n < st->qlen && (r->ops[q_at(st, n - 1)].flags & SF_GROUP_NEXT) && !(q_at(st, n) & SIM_Q_WAIT))
                n++;
            if (n == st->qlen && (r->ops[q_at(st, n - 1)].flags & SF_GROUP_NEXT))
                return;
            st->busy = 1;
            st->running = n;
            st->pending = n;
            for (uint32_t i = 0; i < n && !E->failed; i++)
                arrive(E, s, q_at(st, i));
            return;
        }
        default: /* kernels, host functions, device copies */
            run_head(E, s, o, t);
            return;
        }
    }
}

/* Put an op on its stream, after the implicit waits legacy-stream semantics
 * ask for. */
static void enqueue(struct engine *E, uint32_t ri, uint64_t op_index)
{
    struct sim_job *j = E->j;
    struct sim_rank *r = &j->ranks[ri];
    const struct sim_op *o = &r->ops[op_index];
    uint32_t s = o->stream - 1;
    struct sim_stream *st = &j->streams[s];
    if (!(st->flags & MAYA_STREAM_NON_BLOCKING)) {
        int legacy = (st->flags & MAYA_STREAM_LEGACY) != 0;
        for (uint32_t i = 0; i < r->nstreams; i++) {
            uint32_t t = r->streams[i];
            struct sim_stream *ot = &j->streams[t];
            if (t == s || ot->device != st->device || (ot->flags & MAYA_STREAM_NON_BLOCKING))
                continue;
            int other_legacy = (ot->flags & MAYA_STREAM_LEGACY) != 0;
            /* legacy waits for blocking streams; blocking streams wait for legacy */
            if ((legacy || other_legacy) && ot->completed < ot->enqueued)
                push_wait(E, s, t, ot->enqueued);
        }
    }
    q_push(E, st, (uint32_t)op_index);
    if (!st->busy)
        try_start(E, s);
}

/* ---- transfers ---- */

static uint32_t xfer_new(struct engine *E)
{
    struct sim_job *j = E->j;
    uint32_t x;
    if (j->nfree_xfers) {
        x = j->free_xfers[--j->nfree_xfers];
    } else {
        if (SIM_GROW(j->xfers, j->capxfers, j->nxfers + 1) < 0) {
            oom(E);
            return UINT32_MAX;
        }
        x = j->nxfers++;
        memset(&j->xfers[x], 0, sizeof j->xfers[x]);
    }
    struct sim_xfer *xf = &j->xfers[x];
    uint32_t *who = xf->who, cap = xf->capwho, version = xf->version;
    uint32_t *slots = xf->slots, capslots = xf->capslots;
    memset(xf, 0, sizeof *xf);
    xf->who = who;
    xf->capwho = cap;
    xf->slots = slots;
    xf->capslots = capslots;
    xf->version = version + 1;
    return x;
}

static void xfer_start(struct engine *E, uint32_t xi)
{
    struct sim_job *j = E->j;
    struct sim_xfer *x = &j->xfers[xi];
    maya_map_del(&j->xfer_ids, x->key1, x->p2p ? x->pair_key : x->start);
    x->start = j->now;
    if (!x->p2p) /* a collective's kernel holds SMs until xfer_done */
        hold_sms(E, xi, 1);
    /* inside a node, or all latency: its estimate stands alone (a transfer
     * whose bytes need less than SIM_FLOW_MIN_NS of its links changes its
     * neighbours' times by no more than that, while sharing the NICs of
     * every member of a collective costs the replay time in the members:
     * PyTorch's start-up gathers objects with a group of one 8-byte
     * broadcast per rank, each across every node) */
    if ((!x->inter_node && !x->p2p) || x->dev_ns - MAYA_MIN(x->fixed_ns, x->dev_ns) < SIM_FLOW_MIN_NS) {
        push(E, j->now + x->dev_ns, EV_XFER_DONE, xi, x->version);
        return;
    }
    /* between nodes, or a send/recv: it shares its NICs or ports (nic.c),
     * which give it its end */
    x->active = 1;
    if (sim_nic_flow_start(j, xi) < 0)
        E->failed = 1;
}

static void xfer_done(struct engine *E, uint32_t xi, uint32_t version)
{
    struct sim_job *j = E->j;
    struct sim_xfer *x = &j->xfers[xi];
    if (version != x->version)
        return; /* not this transfer's (a stale id) */
    if (x->active) {
        x->active = 0;
        if (sim_nic_flow_end(j, xi) < 0) {
            E->failed = 1;
            return;
        }
    }
    x->version++;
    if (!x->p2p)
        hold_sms(E, xi, 0);
    for (int i = 0; i < x->arrived; i++) {
        uint32_t s = x->who[4 * i], ri = x->who[4 * i + 1];
        uint64_t op = x->who[4 * i + 2] | (uint64_t)x->who[4 * i + 3] << 32;
        j->ranks[ri].times[op].dev_end = j->now;
        struct sim_stream *st = &j->streams[s];
        if (--st->pending == 0)
            stream_complete(E, s, st->running);
    }
    if (SIM_GROW(j->free_xfers, j->capfree_xfers, j->nfree_xfers + 1) < 0) {
        oom(E);
        return;
    }
    j->free_xfers[j->nfree_xfers++] = xi;
}

/* A collective or send/recv op of stream s reaches the device. */
static void arrive(struct engine *E, uint32_t s, uint64_t op_index)
{
    struct sim_job *j = E->j;
    struct sim_stream *st = &j->streams[s];
    struct sim_rank *r = &j->ranks[st->rank];
    const struct sim_op *o = &r->ops[op_index];
    r->times[op_index].dev_start = j->now;
    uint64_t k1 = o->arg | (o->kind == SK_P2P ? 1ull << 32 : 0), k2 = o->arg2;
    int created;
    uint64_t *v = maya_map_put(&j->xfer_ids, k1, k2, &created);
    if (!v) {
        oom(E);
        return;
    }
    if (created) {
        uint32_t xi = xfer_new(E);
        if (xi == UINT32_MAX)
            return;
        v = maya_map_get(&j->xfer_ids, k1, k2);
        *v = xi + 1;
        struct sim_xfer *x = &j->xfers[xi];
        x->comm = o->arg;
        x->expected = o->kind == SK_P2P ? 2 : j->comms[o->arg].expected;
        x->inter_node = (o->flags & SF_INTER_NODE) != 0;
        x->key1 = k1;
        x->p2p = o->kind == SK_P2P;
        x->pair_key = o->kind == SK_P2P ? k2 : 0;
        x->start = k2; /* the key until it starts (xfer_start removes it) */
    }
    uint32_t xi = (uint32_t)(*v - 1);
    struct sim_xfer *x = &j->xfers[xi];
    if (SIM_GROW(x->who, x->capwho, 4 * (uint64_t)(x->arrived + 1)) < 0) {
        oom(E);
        return;
    }
    uint32_t *w = &x->who[4 * x->arrived++];
    w[0] = s;
    w[1] = st->rank;
    w[2] = (uint32_t)op_index;
    w[3] = (uint32_t)(op_index >> 32);
    if (o->dev_ns >= x->dev_ns) { /* the longest member's estimate, and its latency */
        x->dev_ns = o->dev_ns;
        x->fixed_ns = o->kind == SK_P2P ? (uint64_t)o->sub * 10 : SIM_COLL_FIXED_NS(o);
    }
    if (x->arrived == x->expected)
        xfer_start(E, xi);
}

/* ---- events ---- */

/* The record a wait for `version` means: that version if it is still known,
 * else the latest (the trace's versions say which; an older one that fell
 * out of the history is complete long ago in practice). NULL if never
 * recorded. */
static const struct sim_event_record *event_record(const struct sim_event_state *ev, uint32_t version)
{
    const struct sim_event_record *v = &ev->v[version % SIM_EVENT_VERSIONS];
    if (v->stream && v->version == version)
        return v;
    v = &ev->v[ev->latest % SIM_EVENT_VERSIONS];
    return v->stream ? v : NULL;
}

/* ---- the host's calls ---- */

static void host_call(struct engine *E, uint32_t ri)
{
    struct sim_job *j = E->j;
    struct sim_rank *r = &j->ranks[ri];
    uint64_t i = r->next++;
    const struct sim_op *o = &r->ops[i];
    r->times[i].host_end = j->now;
    switch (o->kind) {
    case SK_KERNEL:
    case SK_COPY:
    case SK_COLL:
    case SK_P2P:
    case SK_HOST_FUNC:
        enqueue(E, ri, i);
        if (o->flags & SF_HOST_WAITS)
            host_wait_stream(E, ri, o->stream - 1, j->streams[o->stream - 1].enqueued);
        break;
    case SK_EVENT_RECORD: {
        struct sim_event_state *ev = &r->events[o->arg];
        uint32_t version = (uint32_t)o->arg2;
        ev->v[version % SIM_EVENT_VERSIONS] =
            (struct sim_event_record){ version, o->stream, j->streams[o->stream - 1].enqueued };
        ev->latest = version;
        break;
    }
    case SK_STREAM_WAIT: {
        const struct sim_event_record *ev = event_record(&r->events[o->arg], (uint32_t)o->arg2);
        if (ev) {
            uint32_t s = o->stream - 1;
            struct sim_stream *st = &j->streams[s];
            if (j->streams[ev->stream - 1].completed < ev->count) {
                push_wait(E, s, ev->stream - 1, ev->count);
                if (!st->busy)
                    try_start(E, s);
            }
        }
        break;
    }
    case SK_SYNC:
        if (o->sub == MAYA_SYNC_STREAM) {
            host_wait_stream(E, ri, o->arg - 1, j->streams[o->arg - 1].enqueued);
        } else if (o->sub == MAYA_SYNC_EVENT) {
            const struct sim_event_record *ev = event_record(&r->events[o->arg], (uint32_t)o->arg2);
            if (ev)
                host_wait_stream(E, ri, ev->stream - 1, ev->count);
        } else {
            host_wait_device(E, ri, (int)o->arg);
        }
        break;
    default:
        break;
    }
    if ((o->flags & SF_DEVICE_SYNC) && !r->blocked)
        host_wait_device(E, ri, o->device);
    if (!r->blocked)
        host_next(E, ri, j->now);
}

/* ---- the loop ---- */

static void drain(struct engine *E)
{
    struct wake *w = &E->wake;
    while (w->head < w->n && !E->failed) {
        uint32_t who = w->v[w->head++];
        if (who & SIM_WAITER_HOST) {
            host_wake(E, who & ~SIM_WAITER_HOST);
        } else {
            struct sim_stream *st = &E->j->streams[who];
            /* a stream woken from a wait entry, or after finishing its head */
            if (st->busy && !st->running && st->qlen && (q_at(st, 0) & SIM_Q_WAIT))
                st->busy = 0;
            if (!st->busy)
                try_start(E, who);
        }
    }
}

static void stream_done(struct engine *E, uint32_t s)
{
    struct sim_job *j = E->j;
    struct sim_stream *st = &j->streams[s];
    struct sim_rank *r = &j->ranks[st->rank];
    uint32_t e = q_at(st, 0);
    const struct sim_op *o = &r->ops[e];
    r->times[e].dev_end = j->now;
    if (o->kind == SK_COPY) {
        struct sim_engine_q *eq = copy_engine(E, st, o->sub);
        if (!eq)
            return;
        eq->busy = 0;
        if (eq->qlen) {
            uint32_t next = eq->q[eq->qhead];
            eq->qhead = (eq->qhead + 1) & (eq->qcap - 1);
            eq->qlen--;
            struct sim_stream *ns = &j->streams[next];
            struct sim_rank *nr = &j->ranks[ns->rank];
            uint32_t ne = q_at(ns, 0);
            eq->busy = 1;
            run_head(E, next, &nr->ops[ne], &nr->times[ne]);
        }
    }
    stream_complete(E, s, 1);
}

/* The next event: the queue's first, or the NICs' first flow to finish
 * when that comes earlier (both ordered by time, then sequence). 1, or 0
 * when nothing is pending. */
static int next_event(struct sim_job *j, struct sim_heap_ev *ev)
{
    uint64_t t, seq;
    uint32_t xi;
    int flow = sim_nic_peek(j, &t, &seq, &xi);
    if (flow && (!j->heap.n || t < j->heap.v[0].t || (t == j->heap.v[0].t && seq < j->heap.v[0].seq))) {
        *ev = (struct sim_heap_ev){ t, seq, EV_XFER_DONE, xi, j->xfers[xi].version, 0 };
        return 1;
    }
    return sim_heap_pop(&j->heap, ev);
}

/* Name what is stuck when the events run out before the work does. */
static int report_deadlock(struct sim_job *j)
{
    char what[2048] = "";
    int shown = 0;
    for (uint32_t s = 0; s < j->nstreams && shown < 4; s++) {
        const struct sim_stream *st = &j->streams[s];
        if (!st->qlen)
            continue;
        const struct sim_rank *r = &j->ranks[st->rank];
        uint32_t e = q_at(st, 0);
        char one[256];
        if (e & SIM_Q_WAIT) {
            const struct sim_wait *w = &r->waits[e & ~SIM_Q_WAIT];
            snprintf(one, sizeof one, "rank %d stream %llu waits for stream %llu", r->rank,
                     (unsigned long long)st->id, (unsigned long long)j->streams[w->target].id);
        } else {
            const struct sim_op *o = &r->ops[e];
            snprintf(one, sizeof one, "rank %d stream %llu is stuck in %s (call %llu)%s", r->rank,
                     (unsigned long long)st->id, sim_name(j, o->name), (unsigned long long)e,
                     o->kind == SK_COLL || o->kind == SK_P2P ? ", waiting for its peers" : "");
        }
        snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", shown++ ? "; " : "", one);
    }
    for (int i = 0; i < j->nranks && shown < 6; i++) {
        const struct sim_rank *r = &j->ranks[i];
        if (!r->blocked)
            continue;
        char one[256];
        if (r->nextbar > 0 && r->bars[r->nextbar - 1].op == r->next) {
            const struct sim_comm *c = &j->comms[r->bars[r->nextbar - 1].comm];
            snprintf(one, sizeof one, "rank %d waits to create communicator 0x%llx (%d of %d processes there)",
                     r->rank, (unsigned long long)c->id, c->arrived, c->joiners);
            snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", shown++ ? "; " : "", one);
            continue;
        }
        snprintf(one, sizeof one, "rank %d's host waits in %s (call %llu)", r->rank,
                 sim_name(j, r->ops[r->next - 1].name), (unsigned long long)(r->next - 1));
        snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", shown++ ? "; " : "", one);
    }
    return maya_error("the job deadlocks: on GPUs it would hang. %s", what);
}

/* Every 65536 events: how far the replay is, and whether to stop. */
static int replay_progress(struct engine *E)
{
    struct sim_job *j = E->j;
    if (maya_check_stop("replaying the job") < 0) {
        E->failed = 1;
        return -1;
    }
    uint64_t issued = 0;
    for (int i = 0; i < j->nranks; i++)
        issued += j->ranks[i].next;
    maya_progress("replaying", issued, j->replayed_ops);
    return 0;
}

int sim_run(struct sim_job *j)
{
    if (j->ran)
        return maya_error("sim_run: this job was already replayed");
    j->ran = 1;
    struct engine E = { .j = j };
    for (int i = 0; i < j->nranks; i++) {
        j->ranks[i].sync_device = -1;
        host_next(&E, (uint32_t)i, 0);
    }
    struct sim_heap_ev ev;
    while (!E.failed && next_event(j, &ev)) {
        j->now = ev.t;
        if ((++j->events & 0xffff) == 0 && replay_progress(&E) < 0)
            break;
        switch (ev.type) {
        case EV_HOST:
            host_call(&E, ev.id);
            break;
        case EV_STREAM_DONE:
            stream_done(&E, ev.id);
            break;
        case EV_XFER_DONE:
            xfer_done(&E, ev.id, ev.version);
            break;
        case EV_BARRIER:
            barrier_arrive(&E, ev.id);
            break;
        }
        drain(&E);
    }
    free(E.wake.v);
    if (E.failed)
        return -1;
    for (int i = 0; i < j->nranks; i++)
        if (j->ranks[i].next < j->ranks[i].nops || j->ranks[i].blocked)
            return j->incomplete_ranks || j->workload_failed ? sim_cut_short(j) : report_deadlock(j);
    for (uint32_t s = 0; s < j->nstreams; s++)
        if (j->streams[s].qlen)
            return j->incomplete_ranks || j->workload_failed ? sim_cut_short(j) : report_deadlock(j);
    if (sim_find_iterations(j) < 0)
        return -1;
    j->run_ok = 1;
    return 0;
}

/* NCCL: communicators and their collective and point-to-point operations,
 * traced as the emulator's NCCL traces them (MAYA_REC_COMM at init,
 * MAYA_REC_COLL per operation with the communicator's id and the
 * operation's sequence number, the same in every member's trace).
 *
 * A communicator's id is derived from what every member passes in: the
 * hash of the ncclUniqueId (init), or the parent's id, which split of the
 * parent it is and the color (split). Its rank, size and device are asked of
 * the real NCCL once it is ready (the record is written then).
 *
 * An operation outside a group is measured between events on its stream
 * around the real call. Inside a group (per thread, nesting counted) it only
 * launches at the outermost ncclGroupEnd: its record is kept until then and
 * written, as the emulator writes it, when the group ends, measured between
 * events recorded on its stream just before and just after the real
 * ncclGroupEnd (every op of the group spans the group's work on its stream).
 */
#define _GNU_SOURCE
#include "prof.h"

#include <nccl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maya/common.h"
#include "maya/map.h"

#define REAL_OR_MISSING(NAME) PROF_REAL_OR(prof_nccl, NAME, ncclInternalError)
#define API EMU_API_ID(__func__)

/* ---- communicators ---- */

struct comm {
    uint64_t id, parent;
    int color, key;
    int defined;                 /* COMM record written: rank, nranks, device known */
    int rank, nranks, device;
    uint64_t coll_seq, splits;
    struct maya_map p2p;         /* (peer, 0 send / 1 recv) -> next seq */
};

static pthread_mutex_t comm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct maya_map comms;    /* ncclComm_t -> struct comm * */
static struct maya_map by_id;    /* (id, rank) -> struct comm *, once defined: graph replays */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h ? h : 1;
}

static struct comm *comm_get(ncclComm_t c)
{
    pthread_mutex_lock(&comm_lock);
    uint64_t *v = maya_map_get(&comms, (uint64_t)(uintptr_t)c, 0);
    struct comm *x = v ? (struct comm *)(uintptr_t)*v : NULL;
    pthread_mutex_unlock(&comm_lock);
    return x;
}

static struct comm *comm_new(ncclComm_t c, uint64_t id, uint64_t parent, int color, int key)
{
    struct comm *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->id = id ? id : 1;
    x->parent = parent;
    x->color = color;
    x->key = key;
    pthread_mutex_lock(&comm_lock);
    uint64_t *v = maya_map_put(&comms, (uint64_t)(uintptr_t)c, 0, NULL);
    if (v) {
        free((void *)(uintptr_t)*v); /* a handle reused after destroy */
        *v = (uint64_t)(uintptr_t)x;
    }
    pthread_mutex_unlock(&comm_lock);
    if (!v) {
        free(x);
        return NULL;
    }
    return x;
}

/* The communicator's record, once the real NCCL can say who we are in it
 * (a non-blocking init may still be running). NULL if not yet. */
static struct comm *comm_ready(ncclComm_t c)
{
    struct comm *x = comm_get(c);
    if (!x) /* made where we did not see it: an id of our own */
        x = comm_new(c, mix(hash_bytes(&c, sizeof c), (uint64_t)getpid()), 0, -1, -1);
    if (!x || x->defined)
        return x;
    ncclResult_t (*rank)(const ncclComm_t, int *) = PROF_REAL(prof_nccl, ncclCommUserRank);
    ncclResult_t (*count)(const ncclComm_t, int *) = PROF_REAL(prof_nccl, ncclCommCount);
    ncclResult_t (*dev)(const ncclComm_t, int *) = PROF_REAL(prof_nccl, ncclCommCuDevice);
    if (!rank || !count || !dev || rank(c, &x->rank) != ncclSuccess || count(c, &x->nranks) != ncclSuccess ||
        dev(c, &x->device) != ncclSuccess)
        return NULL;
    struct emu_device *d = emu_device(x->device);
    struct maya_rec_comm r;
    memset(&r, 0, sizeof r);
    r.h.type = MAYA_REC_COMM;
    r.h.bytes = sizeof r;
    r.comm = x->id;
    r.parent = x->parent;
    r.rank = x->rank;
    r.nranks = x->nranks;
    r.device = x->device;
    r.global_gpu = d ? d->global_index : -1;
    r.color = x->color;
    r.key = x->key;
    if (d)
        emu_device_touch(d);
    emu_trace_emit(&r);
    pthread_mutex_lock(&comm_lock);
    uint64_t *v = maya_map_put(&by_id, x->id, (uint64_t)(uint32_t)x->rank, NULL);
    if (v)
        *v = (uint64_t)(uintptr_t)x;
    x->defined = 1;
    pthread_mutex_unlock(&comm_lock);
    return x;
}

/* A communicator init: CALL is the real call, then its COMM record (when
 * it is ready) and its CALL record. */
#define INIT_BODY(CALL, NEWCOMM, ID, PARENT, COLOR, KEY) \
    PROF_BODY(ncclResult_t, CALL, ({ \
                  if ((r_ == ncclSuccess || r_ == ncclInProgress) && (NEWCOMM) && *(NEWCOMM) && \
                      comm_new(*(NEWCOMM), (ID), (PARENT), (COLOR), (KEY))) \
                      comm_ready(*(NEWCOMM)); \
                  emu_trace_call(API, op_.t0, r_, 0, 0); \
              }), )

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    REAL_OR_MISSING(ncclCommInitRank);
    INIT_BODY(real(comm, nranks, commId, rank), comm, hash_bytes(&commId, sizeof commId), 0, -1, -1);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t *config)
{
    REAL_OR_MISSING(ncclCommInitRankConfig);
    INIT_BODY(real(comm, nranks, commId, rank, config), comm, hash_bytes(&commId, sizeof commId), 0, -1, -1);
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                      ncclUniqueId *commIds, ncclConfig_t *config)
{
    REAL_OR_MISSING(ncclCommInitRankScalable);
    INIT_BODY(real(newcomm, nranks, myrank, nId, commIds, config), newcomm,
              nId > 0 && commIds ? hash_bytes(commIds, sizeof *commIds) : 0, 0, -1, -1);
}

ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
    REAL_OR_MISSING(ncclCommInitAll);
    struct prof_op op;
    if (!prof_begin(&op))
        return real(comm, ndev, devlist);
    prof_go(&op);
    ncclResult_t r = real(comm, ndev, devlist);
    prof_returned(&op, 0);
    /* Every member is in this process: any id unique to it will do. */
    static uint64_t n;
    uint64_t id = mix(mix((uint64_t)getpid(), emu_now()), __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED));
    for (int i = 0; r == ncclSuccess && comm && i < ndev; i++)
        if (comm_new(comm[i], id, 0, -1, -1))
            comm_ready(comm[i]);
    emu_trace_call(API, op.t0, r, 0, 0);
    prof_end(&op);
    return r;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
    REAL_OR_MISSING(ncclCommSplit);
    struct comm *parent = comm_get(comm);
    /* Every member of the parent calls this (in the same order): the n-th
     * split and the color name the new communicator alike everywhere. */
    uint64_t split = parent ? __atomic_add_fetch(&parent->splits, 1, __ATOMIC_RELAXED) : 0;
    uint64_t pid = parent ? parent->id : 0;
    INIT_BODY(real(comm, color, key, newcomm, config), newcomm, mix(mix(pid, split), (uint64_t)(uint32_t)color),
              pid, color, key);
}

static ncclResult_t forget(ncclResult_t (*real)(ncclComm_t), uint32_t api, ncclComm_t comm)
{
    struct prof_op op;
    if (!prof_begin(&op))
        return real(comm);
    prof_go(&op);
    ncclResult_t r = real(comm);
    prof_returned(&op, 0);
    pthread_mutex_lock(&comm_lock);
    uint64_t *v = maya_map_get(&comms, (uint64_t)(uintptr_t)comm, 0);
    if (v) {
        struct comm *x = (struct comm *)(uintptr_t)*v;
        uint64_t *w = x->defined ? maya_map_get(&by_id, x->id, (uint64_t)(uint32_t)x->rank) : NULL;
        if (w && *w == (uint64_t)(uintptr_t)x)
            maya_map_del(&by_id, x->id, (uint64_t)(uint32_t)x->rank);
        maya_map_free(&x->p2p);
        free(x);
        maya_map_del(&comms, (uint64_t)(uintptr_t)comm, 0);
    }
    pthread_mutex_unlock(&comm_lock);
    emu_trace_call(api, op.t0, r, 0, 0);
    prof_end(&op);
    return r;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    REAL_OR_MISSING(ncclCommDestroy);
    return forget(real, API, comm);
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    REAL_OR_MISSING(ncclCommAbort);
    return forget(real, API, comm);
}

/* ---- groups ---- */

struct held {
    struct maya_rec_coll rec;    /* seq taken at the group's end, unless it is captured */
    struct comm *comm;
    cudaStream_t stream;
    struct prof_op ev;           /* its events (start, end, device) */
};

static __thread struct {
    int depth;
    uint64_t id;
    struct held *ops;
    size_t n, cap;
} grp;
static uint64_t next_group;

static uint64_t next_seq_of(struct comm *x, uint32_t op, int peer);

static void hold(const struct maya_rec_coll *rec, struct comm *x, cudaStream_t stream)
{
    if (grp.n == grp.cap) {
        size_t cap = grp.cap ? grp.cap * 2 : 16;
        struct held *n = realloc(grp.ops, cap * sizeof *n);
        if (!n) {
            struct maya_rec_coll now = *rec;
            now.seq = next_seq_of(x, rec->op, rec->peer);
            emu_trace_emit(&now); /* unmeasured, but traced */
            return;
        }
        grp.ops = n;
        grp.cap = cap;
    }
    struct held *h = &grp.ops[grp.n++];
    memset(h, 0, sizeof *h);
    h->rec = *rec;
    h->comm = x;
    h->stream = stream;
    h->ev.device = rec->call.device;
}

ncclResult_t ncclGroupStart(void)
{
    REAL_OR_MISSING(ncclGroupStart);
    struct prof_op op;
    if (!prof_begin(&op))
        return real();
    prof_go(&op);
    ncclResult_t r = real();
    prof_returned(&op, 0);
    if (r == ncclSuccess && grp.depth++ == 0) {
        grp.id = __atomic_add_fetch(&next_group, 1, __ATOMIC_RELAXED);
        grp.n = 0;
    }
    emu_trace_call(API, op.t0, r, 0, 0);
    prof_end(&op);
    return r;
}

ncclResult_t ncclGroupEnd(void)
{
    REAL_OR_MISSING(ncclGroupEnd);
    struct prof_op op;
    if (!prof_begin(&op))
        return real();
    int outer = grp.depth == 1;
    size_t n = outer ? grp.n : 0;
    /* each held op: events on its stream around the real group end */
    for (size_t i = 0; i < n; i++)
        prof_device_begin(&grp.ops[i].ev, grp.ops[i].stream);
    prof_go(&op);
    ncclResult_t r = real();
    prof_returned(&op, 0);
    for (size_t i = 0; i < n; i++)
        prof_device_end(&grp.ops[i].ev, r == ncclSuccess);
    if (grp.depth > 0)
        grp.depth--;
    /* the held records, each with its events, then the call's own */
    if (n > 0)
        emu_coll_mark_both_ways(&grp.ops[0].rec, n, sizeof *grp.ops);
    for (size_t i = 0; i < n; i++) {
        struct held *h = &grp.ops[i];
        prof_building(&h->ev);
        if (!h->ev.capturing) /* captured: numbered at each launch of its graph */
            h->rec.seq = next_seq_of(h->comm, h->rec.op, h->rec.peer);
        emu_trace_emit(&h->rec);
        prof_op_release(&h->ev);
    }
    if (outer)
        grp.n = 0;
    prof_building(&op);
    emu_trace_call(API, op.t0, r, 0, 0);
    prof_end(&op);
    return r;
}

/* ---- operations ---- */

static int has_redop(uint32_t op)
{
    return op == MAYA_COLL_ALLREDUCE || op == MAYA_COLL_REDUCE || op == MAYA_COLL_REDUCESCATTER;
}

struct coll {
    uint32_t op;
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    ncclDataType_t dtype;
    int redop, peer;
    ncclComm_t comm;
    cudaStream_t stream;
};

/* The sequence number of the op on its communicator (collectives: the n-th;
 * send/recv: the n-th between the two ranks in that direction); comm_lock
 * held. */
static uint64_t next_seq_locked(struct comm *x, uint32_t op, int peer)
{
    if (op != MAYA_COLL_SEND && op != MAYA_COLL_RECV)
        return __atomic_fetch_add(&x->coll_seq, 1, __ATOMIC_RELAXED);
    uint64_t *v = maya_map_put(&x->p2p, (uint64_t)peer, op == MAYA_COLL_RECV, NULL);
    return v ? (*v)++ : 0;
}

static uint64_t next_seq_of(struct comm *x, uint32_t op, int peer)
{
    pthread_mutex_lock(&comm_lock);
    uint64_t s = next_seq_locked(x, op, peer);
    pthread_mutex_unlock(&comm_lock);
    return s;
}

/* Groups captured together share an id; each launch gives them a new one
 * (a small table per thread, reset when the launch changes). */
static __thread struct {
    uint64_t launch;
    int n;
    uint64_t from[32], to[32];
} launch_groups;

void prof_nccl_replay(struct maya_rec_coll *r, uint64_t launch)
{
    pthread_mutex_lock(&comm_lock);
    uint64_t *v = maya_map_get(&by_id, r->comm, (uint64_t)(uint32_t)r->rank);
    struct comm *x = v ? (struct comm *)(uintptr_t)*v : NULL;
    if (x) {
        r->seq = next_seq_locked(x, r->op, r->peer);
        r->call.device = x->device;
    } else {
        r->call.result = ncclInvalidUsage; /* its communicator was destroyed since the capture */
    }
    pthread_mutex_unlock(&comm_lock);
    if (!r->group)
        return;
    if (launch_groups.launch != launch) {
        launch_groups.launch = launch;
        launch_groups.n = 0;
    }
    for (int i = 0; i < launch_groups.n; i++)
        if (launch_groups.from[i] == r->group) {
            r->group = launch_groups.to[i];
            return;
        }
    uint64_t id = __atomic_add_fetch(&next_group, 1, __ATOMIC_RELAXED);
    if (launch_groups.n < 32) {
        launch_groups.from[launch_groups.n] = r->group;
        launch_groups.to[launch_groups.n++] = id;
    }
    r->group = id;
}

static void trace_coll(struct prof_op *op, uint32_t api, ncclResult_t r, const struct coll *c)
{
    struct comm *x = comm_ready(c->comm);
    struct emu_stream *s = prof_stream(c->stream, 0);
    if (r != ncclSuccess || c->count == 0 || !x) {
        emu_trace_call(api, op->t0, r, s ? s->id : 0, 0);
        return;
    }
    struct maya_rec_coll rec;
    memset(&rec, 0, sizeof rec);
    rec.h.type = MAYA_REC_COLL;
    rec.h.bytes = sizeof rec;
    rec.comm = x->id;
    /* grouped: numbered at the group's end; captured: at each launch of
       its graph (prof_divert keeps the record as a node of the capture) */
    rec.seq = grp.depth > 0 || op->capturing ? 0 : next_seq_of(x, c->op, c->peer);
    rec.group = grp.depth > 0 ? grp.id : 0;
    rec.count = c->count;
    rec.bytes = (uint64_t)c->count * (uint64_t)maya_coll_dtype_bytes(c->dtype);
    rec.sendbuf = (uint64_t)(uintptr_t)c->sendbuf;
    rec.recvbuf = (uint64_t)(uintptr_t)c->recvbuf;
    rec.op = c->op;
    rec.dtype = c->dtype;
    rec.redop = has_redop(c->op) ? c->redop : -1;
    rec.rank = x->rank;
    rec.nranks = x->nranks;
    rec.peer = c->peer;
    emu_call_fill(&rec.call, api, op->t0, r, s ? s->id : 0);
    rec.call.device = x->device;
    if (grp.depth > 0)
        hold(&rec, x, c->stream);
    else
        emu_trace_emit(&rec);
}

static ncclResult_t coll(ncclResult_t (*call)(const struct coll *, void *), void *real, uint32_t api,
                         const struct coll *c)
{
    struct prof_op op;
    if (!prof_begin(&op))
        return call(c, real);
    if (grp.depth == 0) {
        struct comm *x = comm_ready(c->comm);
        op.device = x ? x->device : -1;
        prof_device_begin(&op, c->stream);
    }
    prof_go(&op);
    ncclResult_t r = call(c, real);
    prof_returned(&op, r == ncclSuccess);
    trace_coll(&op, api, r, c);
    prof_end(&op);
    return r;
}

/* Each entry point: its real function's call from a struct coll. */
#define CALL_FN(NAME, ...) \
    static ncclResult_t call_##NAME(const struct coll *c, void *real) \
    { \
        return ((__typeof__(&NAME))real)(__VA_ARGS__); \
    }

CALL_FN(ncclAllReduce, c->sendbuf, c->recvbuf, c->count, c->dtype, c->redop, c->comm, c->stream)
CALL_FN(ncclBroadcast, c->sendbuf, c->recvbuf, c->count, c->dtype, c->peer, c->comm, c->stream)
CALL_FN(ncclBcast, c->recvbuf, c->count, c->dtype, c->peer, c->comm, c->stream)
CALL_FN(ncclReduce, c->sendbuf, c->recvbuf, c->count, c->dtype, c->redop, c->peer, c->comm, c->stream)
CALL_FN(ncclAllGather, c->sendbuf, c->recvbuf, c->count, c->dtype, c->comm, c->stream)
CALL_FN(ncclReduceScatter, c->sendbuf, c->recvbuf, c->count, c->dtype, c->redop, c->comm, c->stream)
CALL_FN(ncclAlltoAll, c->sendbuf, c->recvbuf, c->count, c->dtype, c->comm, c->stream)
CALL_FN(ncclGather, c->sendbuf, c->recvbuf, c->count, c->dtype, c->peer, c->comm, c->stream)
CALL_FN(ncclScatter, c->sendbuf, c->recvbuf, c->count, c->dtype, c->peer, c->comm, c->stream)
CALL_FN(ncclSend, c->sendbuf, c->count, c->dtype, c->peer, c->comm, c->stream)
CALL_FN(ncclRecv, c->recvbuf, c->count, c->dtype, c->peer, c->comm, c->stream)

#define COLL(NAME, ...) \
    do { \
        REAL_OR_MISSING(NAME); \
        struct coll c_ = { __VA_ARGS__ }; \
        return coll(call_##NAME, (void *)real, API, &c_); \
    } while (0)

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    COLL(ncclAllReduce, MAYA_COLL_ALLREDUCE, sendbuff, recvbuff, count, datatype, op, -1, comm, stream);
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream)
{
    COLL(ncclBroadcast, MAYA_COLL_BROADCAST, sendbuff, recvbuff, count, datatype, 0, root, comm, stream);
}

ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream)
{
    COLL(ncclBcast, MAYA_COLL_BROADCAST, buff, buff, count, datatype, 0, root, comm, stream);
}

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
    COLL(ncclReduce, MAYA_COLL_REDUCE, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream)
{
    COLL(ncclAllGather, MAYA_COLL_ALLGATHER, sendbuff, recvbuff, sendcount, datatype, 0, -1, comm, stream);
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    COLL(ncclReduceScatter, MAYA_COLL_REDUCESCATTER, sendbuff, recvbuff, recvcount, datatype, op, -1, comm,
         stream);
}

ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                          ncclComm_t comm, cudaStream_t stream)
{
    COLL(ncclAlltoAll, MAYA_COLL_ALLTOALL, sendbuff, recvbuff, count, datatype, 0, -1, comm, stream);
}

ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream)
{
    COLL(ncclGather, MAYA_COLL_GATHER, sendbuff, recvbuff, count, datatype, 0, root, comm, stream);
}

ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream)
{
    COLL(ncclScatter, MAYA_COLL_SCATTER, sendbuff, recvbuff, count, datatype, 0, root, comm, stream);
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream)
{
    COLL(ncclSend, MAYA_COLL_SEND, sendbuff, NULL, count, datatype, 0, peer, comm, stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream)
{
    COLL(ncclRecv, MAYA_COLL_RECV, NULL, recvbuff, count, datatype, 0, peer, comm, stream);
}

/* NCCL work captured into a CUDA graph.
 *
 * A collective or point-to-point op issued to a capturing stream moves
 * nothing and takes no sequence number: at its ncclGroupEnd (or at once,
 * outside a group) it becomes an OP node of the capture's graph holding
 * its trace record, and the call is traced as a CALL record flagged
 * MAYA_F_CAPTURING, as every captured op is. At each launch of the graph the core emits the
 * record again and calls replay() first, which makes it a new operation,
 * as real NCCL counts every graph launch: the communicator's next sequence
 * number (collectives; send/recv: the next of that peer pair), so that the
 * collator matches the n-th launch on every rank, and a fresh group id per
 * launch for ops that were captured in one group. Data never moves at a
 * replay, small or large: a program that reads back a small captured
 * collective's result sees what was in the buffer.
 *
 * A graph may outlive its communicator; replay() must then not touch it.
 * Live communicators are kept in a list (a linear scan per replayed op:
 * programs hold a handful of communicators).
 */
#include "nc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ncclComm **live;
static size_t nlive, live_cap;

void nc_capture_comm_live(struct ncclComm *c, int alive)
{
    pthread_mutex_lock(&live_lock);
    if (alive && nlive == live_cap) {
        size_t cap = live_cap ? live_cap * 2 : 16;
        struct ncclComm **p = realloc(live, cap * sizeof *p);
        if (p) {
            live = p;
            live_cap = cap;
        }
    }
    if (alive && nlive < live_cap) {
        live[nlive++] = c;
    } else if (!alive) {
        for (size_t i = 0; i < nlive; i++)
            if (live[i] == c) {
                live[i] = live[--nlive];
                break;
            }
    }
    pthread_mutex_unlock(&live_lock);
}

/* live_lock held */
static int is_live(const struct ncclComm *c)
{
    for (size_t i = 0; i < nlive; i++)
        if (live[i] == c)
            return 1;
    return 0;
}

/* Ops captured in one group share a group id; each launch gives them a
 * new one, so that two launches' groups never merge. A launch's groups are
 * few: a small table per thread, reset when the launch changes. */
static __thread struct {
    uint64_t launch;
    int n;
    uint64_t from[32], to[32];
} groups;

static uint64_t launch_group(uint64_t launch, uint64_t captured)
{
    if (groups.launch != launch) {
        groups.launch = launch;
        groups.n = 0;
    }
    for (int i = 0; i < groups.n; i++)
        if (groups.from[i] == captured)
            return groups.to[i];
    uint64_t id = nc_group_new_id();
    if (groups.n < (int)(sizeof groups.from / sizeof groups.from[0])) {
        groups.from[groups.n] = captured;
        groups.to[groups.n++] = id;
    }
    return id;
}

static void replay(void *rec, void *ctx, uint64_t launch)
{
    struct maya_rec_coll *r = rec;
    struct ncclComm *c = ctx;
    int ok;
    ncclResult_t failed = ncclSuccess;
    pthread_mutex_lock(&live_lock);
    ok = is_live(c) && c->magic == NC_COMM_MAGIC && c->state == NC_READY && !c->left;
    if (ok && c->error != ncclSuccess)
        failed = c->error; /* failed since the capture (and said so then) */
    else if (ok) {
        r->seq = nc_take_seq(c, r->op, r->peer);
        r->call.device = c->device;
    }
    pthread_mutex_unlock(&live_lock);
    if (failed != ncclSuccess) {
        r->call.result = failed;
    } else if (!ok) {
        /* Real NCCL would run a kernel on freed state; here the op fails. */
        r->call.result = ncclInvalidUsage;
        char op[160];
        nc_op_str(r->op, r->count, r->dtype, r->redop, r->peer, op, sizeof op);
        nc_fail(ncclInvalidUsage, "a CUDA graph launch replays %s on communicator 0x%" PRIx64 ", which was "
                "destroyed or finalized after the graph captured it", op, r->comm);
    }
    if (r->group)
        r->group = launch_group(launch, r->group);
    nc_elim_op(r, nc_elim_comm_index(r->comm)); /* the record is traced next: it counts now */
}

ncclResult_t nc_capture_task(struct nc_task *t)
{
    struct maya_rec_coll node = t->rec;
    node.h.flags = 0;
    node.seq = 0;
    node.call.result = ncclSuccess;
    struct emu_node_params p = { .type = EMU_NODE_OP, .api = t->rec.call.api, .op_rec = &node,
                                 .op_replay = replay, .op_ctx = t->comm };
    enum emu_err e = emu_capture_add(t->capture, &p, NULL);
    if (e != EMU_OK) {
        char op[160];
        nc_op_str(t->op, t->count, t->dtype, t->redop, t->peer, op, sizeof op);
        return nc_fail(ncclUnhandledCudaError, "%s cannot join the stream's capture: %s", op,
                       e == EMU_ERR_CAPTURE_INVALIDATED ? "it was invalidated" : "out of memory");
    }
    return ncclSuccess;
}

/* Communicators: making them (from a unique id, all in one process, by
 * split or shrink), leaving them, and what the program may ask of them.
 *
 * Communicator ids: a communicator made from a unique id takes the id's
 * random 64-bit number; ncclCommInitAll draws one; a split one is derived
 * from its parent's id, which split of the parent it was, and its color; a
 * shrunk one from the parent's id, which derivation it was and the excluded
 * ranks. Every member computes the same id, which names the communicator in
 * every member's trace (MAYA_REC_COMM, written once per member at init).
 */
#include "nc.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ncclComm *nc_comm_alloc(void)
{
    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->magic = NC_COMM_MAGIC;
    c->color = -1;
    c->key = -1;
    c->blocking = 1;
    c->device = emu_current_device();
    c->state = NC_PENDING;
    nc_capture_comm_live(c, 1);
    return c;
}

static void comm_free(struct ncclComm *c)
{
    nc_capture_comm_live(c, 0);
    nc_elim_comm_freed(c);
    c->magic = 0;
    free(c->gone);
    free(c->p2p_gone);
    for (int i = 0; c->root_last && i < c->nranks; i++)
        free(c->root_last[i]);
    free(c->root_last);
    free(c->peers);
    free(c->send_seq);
    free(c->recv_seq);
    free(c->p2p_peer);
    free(c->redops);
    free(c);
}

ncclResult_t nc_comm_setup(struct ncclComm *c, uint64_t id, uint64_t parent, int rank, int nranks,
                           const struct nc_peer *peers, int color, int key)
{
    c->id = id;
    c->parent = parent;
    c->rank = rank;
    c->nranks = nranks;
    c->color = color;
    c->key = key;
    c->peers = malloc((size_t)nranks * sizeof *c->peers);
    c->send_seq = calloc((size_t)nranks, sizeof *c->send_seq);
    c->recv_seq = calloc((size_t)nranks, sizeof *c->recv_seq);
    c->p2p_peer = calloc((size_t)nranks, 1);
    if (!c->peers || !c->send_seq || !c->recv_seq || !c->p2p_peer) {
        c->state = NC_FAILED;
        c->error = ncclSystemError;
        return nc_fail(ncclSystemError, "out of memory for a communicator of %d ranks", nranks);
    }
    memcpy(c->peers, peers, (size_t)nranks * sizeof *c->peers);
    struct maya_rec_comm r;
    memset(&r, 0, sizeof r);
    r.h.type = MAYA_REC_COMM;
    r.h.bytes = sizeof r;
    r.comm = id;
    r.parent = parent;
    r.rank = rank;
    r.nranks = nranks;
    r.device = c->device;
    r.global_gpu = peers[rank].global_gpu;
    r.color = color;
    r.key = key;
    emu_trace_emit(&r);
    nc_elim_comm_made(c);
    __atomic_store_n(&c->state, NC_READY, __ATOMIC_RELEASE);
    return ncclSuccess;
}

const char *nc_comm_str(const struct ncclComm *c, char *buf, size_t n)
{
    snprintf(buf, n, "communicator 0x%016llx%s%s%s rank %d of %d", (unsigned long long)c->id,
             c->name[0] ? " (" : "", c->name, c->name[0] ? ")" : "", c->rank, c->nranks);
    return buf;
}

static int valid(const struct ncclComm *c)
{
    return c && c->magic == NC_COMM_MAGIC;
}

/* Wait for a non-blocking init's thread. */
static void join_init(struct ncclComm *c)
{
    if (!c->has_init_thread)
        return;
    emu_wait_begin();
    pthread_join(c->init_thread, NULL);
    emu_wait_end();
    c->has_init_thread = 0;
}

ncclResult_t nc_comm_ready(struct ncclComm *c, const char *api)
{
    if (!valid(c))
        return nc_fail(ncclInvalidArgument, "%s: the communicator is NULL or was destroyed", api);
    join_init(c);
    if (c->state == NC_PENDING)
        return nc_fail(ncclInvalidUsage, "%s: the communicator is not made yet (its ncclGroupEnd has not run)", api);
    if (c->state == NC_FAILED || c->error != ncclSuccess)
        return c->error != ncclSuccess ? c->error : ncclInternalError;
    if (c->revoked)
        return nc_fail(ncclInvalidUsage, "%s: the communicator was revoked (ncclCommRevoke)", api);
    return ncclSuccess;
}

/* ncclConfig_t as the installed nccl.h lays it out; older programs pass a
 * smaller struct (its size field says how much of it is there). */
static ncclResult_t read_config(const ncclConfig_t *cfg, const char *api, int *blocking, char *name, size_t n)
{
    if (!cfg)
        return ncclSuccess;
    if (cfg->magic != 0xcafebeefu || cfg->size < offsetof(ncclConfig_t, blocking) + sizeof(int))
        return nc_fail(ncclInvalidArgument, "%s: the ncclConfig_t was not set up with NCCL_CONFIG_INITIALIZER "
                       "(magic 0x%x, size %zu)", api, cfg->magic, cfg->size);
    if (cfg->blocking != NCCL_CONFIG_UNDEF_INT) {
        if (cfg->blocking != 0 && cfg->blocking != 1)
            return nc_fail(ncclInvalidArgument, "%s: config blocking=%d, expected 0 or 1", api, cfg->blocking);
        *blocking = cfg->blocking;
    }
    if (cfg->size >= offsetof(ncclConfig_t, commName) + sizeof(cfg->commName) && cfg->commName)
        snprintf(name, n, "%s", cfg->commName);
    return ncclSuccess;
}

/* ---- making communicators ---- */

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
    NC_ENTER();
    nc_elim_replica_point();
    if (!uniqueId)
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL"));
    struct nc_uid u;
    if (nc_boot_create(&u) < 0)
        NC_RETURN(ncclSystemError);
    memset(uniqueId, 0, sizeof *uniqueId);
    memcpy(uniqueId->internal, &u, sizeof u);
    NC_RETURN(ncclSuccess);
}
NC_ALIAS(ncclGetUniqueId);

static ncclResult_t init_rank(const char *api, ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank,
                              ncclConfig_t *config)
{
    nc_elim_replica_point(); /* a replica that should not run leaves here */
    if (!out)
        return nc_fail(ncclInvalidArgument, "%s: comm is NULL", api);
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return nc_fail(ncclInvalidArgument, "%s: rank %d with nranks %d: expected 0 <= rank < nranks", api,
                       rank, nranks);
    struct nc_task t;
    memset(&t, 0, sizeof t);
    ncclResult_t r = nc_boot_check(id, &t.uid);
    int blocking = 1;
    char name[64] = "";
    if (r == ncclSuccess)
        r = read_config(config, api, &blocking, name, sizeof name);
    if (r != ncclSuccess)
        return r;
    struct ncclComm *c = nc_comm_alloc();
    if (!c)
        return nc_fail(ncclSystemError, "%s: out of memory", api);
    c->blocking = blocking;
    snprintf(c->name, sizeof c->name, "%s", name);
    emu_primary_ctx(c->device);
    t.type = NC_T_INIT;
    t.comm = c;
    t.peer = rank;
    t.count = (size_t)nranks;
    *out = c;
    if (nc_in_group())
        return nc_submit(&t);
    if (!blocking)
        return nc_run_detached(&t);
    return nc_run_tasks(&t, 1);
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    NC_ENTER();
    NC_RETURN(init_rank(__func__, comm, nranks, &commId, rank, NULL));
}
NC_ALIAS(ncclCommInitRank);

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t *config)
{
    NC_ENTER();
    NC_RETURN(init_rank(__func__, comm, nranks, &commId, rank, config));
}
NC_ALIAS(ncclCommInitRankConfig);

ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                      ncclUniqueId *commIds, ncclConfig_t *config)
{
    NC_ENTER();
    if (nId < 1 || !commIds)
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclCommInitRankScalable: nId=%d, commIds=%p: expected at "
                          "least one id", nId, (void *)commIds));
    /* Every id's creator runs a rendezvous; the first one serves all ranks. */
    NC_RETURN(init_rank(__func__, newcomm, nranks, &commIds[0], myrank, config));
}
NC_ALIAS(ncclCommInitRankScalable);

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
    NC_ENTER();
    nc_elim_replica_point();
    if (!comms || ndev < 1)
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclCommInitAll: comms=%p ndev=%d", (void *)comms, ndev));
    for (int i = 0; i < ndev; i++) {
        int d = devlist ? devlist[i] : i;
        if (!emu_device(d))
            NC_RETURN(nc_fail(ncclInvalidArgument, "ncclCommInitAll: device %d is not one of the %d devices "
                              "this process sees", d, emu_device_count()));
        for (int j = 0; j < i; j++)
            if ((devlist ? devlist[j] : j) == d)
                NC_RETURN(nc_fail(ncclInvalidUsage, "ncclCommInitAll: device %d is listed twice", d));
    }
    if (nc_net_start() < 0)
        NC_RETURN(ncclSystemError);
    struct nc_peer *peers = calloc((size_t)ndev, sizeof *peers);
    if (!peers)
        NC_RETURN(nc_fail(ncclSystemError, "out of memory"));
    for (int i = 0; i < ndev; i++) {
        peers[i] = *nc_net_self();
        peers[i].device = devlist ? devlist[i] : i;
        peers[i].global_gpu = emu_device(peers[i].device)->global_index;
    }
    /* All members are here: no rendezvous, a fresh id. */
    uint64_t id = nc_random64();
    ncclResult_t r = ncclSuccess;
    for (int i = 0; i < ndev; i++) {
        struct ncclComm *c = nc_comm_alloc();
        comms[i] = c;
        if (!c) {
            r = nc_fail(ncclSystemError, "out of memory");
            break;
        }
        c->device = peers[i].device;
        emu_primary_ctx(c->device);
        if ((r = nc_comm_setup(c, id, 0, i, ndev, peers, -1, -1)) != ncclSuccess)
            break;
    }
    free(peers);
    NC_RETURN(r);
}
NC_ALIAS(ncclCommInitAll);

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
    NC_ENTER();
    ncclResult_t r = nc_comm_ready(comm, __func__);
    if (r == ncclSuccess && !newcomm)
        r = nc_fail(ncclInvalidArgument, "ncclCommSplit: newcomm is NULL");
    if (r == ncclSuccess && color < 0 && color != NCCL_SPLIT_NOCOLOR)
        r = nc_fail(ncclInvalidArgument, "ncclCommSplit: color %d: expected >= 0 or NCCL_SPLIT_NOCOLOR", color);
    int blocking = r == ncclSuccess ? comm->blocking : 1;
    char name[64] = "";
    if (r == ncclSuccess)
        r = read_config(config, __func__, &blocking, name, sizeof name);
    if (r != ncclSuccess) {
        nc_group_fail(r);
        NC_RETURN(r);
    }
    struct nc_task t;
    memset(&t, 0, sizeof t);
    t.type = NC_T_SPLIT;
    t.comm = comm;
    t.color = color;
    t.key = key;
    t.peer = -1;
    *newcomm = NULL;
    if (color != NCCL_SPLIT_NOCOLOR) {
        t.made = nc_comm_alloc();
        if (!t.made)
            NC_RETURN(nc_fail(ncclSystemError, "ncclCommSplit: out of memory"));
        t.made->device = comm->device;
        t.made->blocking = blocking;
        snprintf(t.made->name, sizeof t.made->name, "%s", name);
        *newcomm = t.made;
    }
    /* A non-blocking split completes here, which NCCL allows. */
    NC_RETURN(nc_submit(&t));
}
NC_ALIAS(ncclCommSplit);

ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount, ncclComm_t *newcomm,
                            ncclConfig_t *config, int shrinkFlags)
{
    NC_ENTER();
    ncclResult_t r = nc_comm_ready(comm, __func__);
    if (r != ncclSuccess)
        NC_RETURN(r);
    if (!newcomm || excludeRanksCount < 0 || (excludeRanksCount > 0 && !excludeRanksList) ||
        (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT))
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclCommShrink: newcomm=%p, %d excluded ranks at %p, flags %d",
                          (void *)newcomm, excludeRanksCount, (void *)excludeRanksList, shrinkFlags));
    int blocking = comm->blocking;
    char name[64] = "";
    if ((r = read_config(config, __func__, &blocking, name, sizeof name)) != ncclSuccess)
        NC_RETURN(r);
    int n = comm->nranks;
    unsigned char *out = calloc((size_t)n, 1);
    struct nc_peer *peers = malloc((size_t)n * sizeof *peers);
    if (!out || !peers) {
        free(out);
        free(peers);
        NC_RETURN(nc_fail(ncclSystemError, "ncclCommShrink: out of memory"));
    }
    /* Every survivor passes the same set, maybe in another order: hash it
     * order-free into the new id. */
    uint64_t set_hash = 0;
    for (int i = 0; i < excludeRanksCount; i++) {
        int x = excludeRanksList[i];
        if (x < 0 || x >= n || out[x]) {
            free(out);
            free(peers);
            NC_RETURN(nc_fail(ncclInvalidArgument, "ncclCommShrink: excluded rank %d is %s", x,
                              x < 0 || x >= n ? "not a rank of the communicator" : "listed twice"));
        }
        out[x] = 1;
        uint64_t h = (uint64_t)(x + 1) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
        set_hash += h * 0xbf58476d1ce4e5b9ull;
    }
    if (out[comm->rank]) {
        free(out);
        free(peers);
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclCommShrink: rank %d is in excludeRanksList; an excluded "
                          "rank does not call ncclCommShrink", comm->rank));
    }
    int m = 0, me = 0;
    for (int i = 0; i < n; i++)
        if (!out[i]) {
            if (i == comm->rank)
                me = m;
            peers[m++] = comm->peers[i];
        }
    uint64_t id = comm->id ^ (0xd6e8feb86659fd93ull * ++comm->nderived) ^ set_hash;
    id ^= id >> 32;
    id *= 0x94d049bb133111ebull;
    id ^= id >> 29;
    struct ncclComm *c = nc_comm_alloc();
    if (!c) {
        r = nc_fail(ncclSystemError, "ncclCommShrink: out of memory");
    } else {
        c->device = comm->device;
        c->blocking = blocking;
        snprintf(c->name, sizeof c->name, "%s", name);
        r = nc_comm_setup(c, id ? id : 1, comm->id, me, m, peers, -1, -1);
    }
    *newcomm = c;
    free(out);
    free(peers);
    NC_RETURN(r);
}
NC_ALIAS(ncclCommShrink);

/* ---- leaving ---- */

/* Tell rank 0 and every point-to-point partner that this rank is gone (rank
 * 0 tells everyone), so that a peer waiting for it gets an error instead of
 * its timeout. */
static void leave(struct ncclComm *c)
{
    if (c->left)
        return;
    c->left = 1;
    if (c->state != NC_READY)
        return;
    for (int r = 0; r < c->nranks; r++) {
        if (r == c->rank || (r != 0 && c->rank != 0 && !c->p2p_peer[r]))
            continue;
        struct nc_msg_hdr h = { .type = NC_BYE, .chan = NC_CH_HUB, .comm = c->id, .src = c->rank, .dst = r,
                                .seq = c->coll_seq, .count = c->send_seq[r] };
        char why[256];
        nc_net_send(&c->peers[r], &h, NULL, why, sizeof why); /* a peer already gone needs no goodbye */
    }
    nc_mb_close(c);
}

ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    NC_ENTER();
    if (!valid(comm))
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclCommFinalize: the communicator is NULL or was destroyed"));
    join_init(comm);
    /* Nothing is in flight on an emulated device: finalizing is leaving. */
    leave(comm);
    NC_RETURN(ncclSuccess);
}
NC_ALIAS(ncclCommFinalize);

static ncclResult_t destroy(const char *api, ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess; /* as NCCL */
    if (!valid(comm))
        return nc_fail(ncclInvalidArgument, "%s: the communicator was destroyed already or is not one", api);
    join_init(comm);
    leave(comm);
    comm_free(comm);
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    NC_ENTER();
    NC_RETURN(destroy(__func__, comm));
}
NC_ALIAS(ncclCommDestroy);

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    NC_ENTER();
    NC_RETURN(destroy(__func__, comm));
}
NC_ALIAS(ncclCommAbort);

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags)
{
    NC_ENTER();
    ncclResult_t r = nc_comm_ready(comm, __func__);
    if (r == ncclSuccess && revokeFlags != NCCL_REVOKE_DEFAULT)
        r = nc_fail(ncclInvalidArgument, "ncclCommRevoke: revokeFlags=%d, expected NCCL_REVOKE_DEFAULT (0)",
                    revokeFlags);
    if (r == ncclSuccess)
        comm->revoked = 1;
    NC_RETURN(r);
}
NC_ALIAS(ncclCommRevoke);

/* ---- questions (not traced: watchdogs ask them in loops) ---- */

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    if (emu_enter() != EMU_OK)
        return ncclUnhandledCudaError;
    if (!valid(comm) || !asyncError)
        return nc_fail(ncclInvalidArgument, "ncclCommGetAsyncError: comm=%p asyncError=%p", (void *)comm,
                       (void *)asyncError);
    if (comm->has_init_thread && __atomic_load_n(&comm->state, __ATOMIC_ACQUIRE) != NC_PENDING)
        join_init(comm);
    int st = __atomic_load_n(&comm->state, __ATOMIC_ACQUIRE);
    *asyncError = st == NC_PENDING ? ncclInProgress : comm->error;
    return ncclSuccess;
}
NC_ALIAS(ncclCommGetAsyncError);

#define QUERY(fn, out, value) \
    ncclResult_t fn(const ncclComm_t comm, int *out) \
    { \
        if (emu_enter() != EMU_OK) \
            return ncclUnhandledCudaError; \
        if (!out) \
            return nc_fail(ncclInvalidArgument, #fn ": " #out " is NULL"); \
        ncclResult_t r = nc_comm_ready(comm, #fn); \
        if (r == ncclSuccess) \
            *out = (value); \
        return r; \
    } \
    NC_ALIAS(fn)

QUERY(ncclCommCount, count, comm->nranks);
QUERY(ncclCommCuDevice, device, comm->device);
QUERY(ncclCommUserRank, rank, comm->rank);

/* ---- teams (host side of the device API) ----
 * The "LSA" team is the ranks that share this rank's emulated node when
 * they are contiguous and of one size on every node; else this rank alone. */

struct nc_team {
    int nRanks, rank, stride;
};

static void lsa(const struct ncclComm *c, int *size, int *rank)
{
    int node = c->peers[c->rank].node, first = c->rank, last = c->rank;
    while (first > 0 && c->peers[first - 1].node == node)
        first--;
    while (last + 1 < c->nranks && c->peers[last + 1].node == node)
        last++;
    int s = last - first + 1;
    int ok = c->nranks % s == 0;
    for (int r = 0; ok && r < c->nranks; r++) {
        int head = r - r % s; /* blocks of s ranks, each on its own node */
        ok = c->peers[r].node == c->peers[head].node &&
             (head == 0 || c->peers[head].node != c->peers[head - 1].node);
    }
    *size = ok ? s : 1;
    *rank = ok ? c->rank - first : 0;
}

struct nc_team ncclTeamWorld(ncclComm_t comm)
{
    struct nc_team t = { 0, 0, 1 };
    if (valid(comm) && comm->state == NC_READY) {
        t.nRanks = comm->nranks;
        t.rank = comm->rank;
    }
    return t;
}
extern __typeof__(ncclTeamWorld) pncclTeamWorld __attribute__((alias("ncclTeamWorld")));

struct nc_team ncclTeamLsa(ncclComm_t comm)
{
    struct nc_team t = { 0, 0, 1 };
    if (valid(comm) && comm->state == NC_READY)
        lsa(comm, &t.nRanks, &t.rank);
    return t;
}
extern __typeof__(ncclTeamLsa) pncclTeamLsa __attribute__((alias("ncclTeamLsa")));

struct nc_team ncclTeamRail(ncclComm_t comm)
{
    struct nc_team t = { 0, 0, 1 };
    if (valid(comm) && comm->state == NC_READY) {
        int size, rank;
        lsa(comm, &size, &rank);
        t.nRanks = comm->nranks / size;
        t.rank = comm->rank / size;
        t.stride = size;
    }
    return t;
}
extern __typeof__(ncclTeamRail) pncclTeamRail __attribute__((alias("ncclTeamRail")));

int ncclTeamRankToWorld(ncclComm_t comm, struct nc_team team, int rank)
{
    return valid(comm) ? comm->rank + (rank - team.rank) * team.stride : -1;
}
extern __typeof__(ncclTeamRankToWorld) pncclTeamRankToWorld __attribute__((alias("ncclTeamRankToWorld")));

int ncclTeamRankToLsa(ncclComm_t comm, struct nc_team team, int rank)
{
    if (!valid(comm) || comm->state != NC_READY)
        return -1;
    int size, lrank;
    lsa(comm, &size, &lrank);
    return lrank + (rank - team.rank) * team.stride;
}
extern __typeof__(ncclTeamRankToLsa) pncclTeamRankToLsa __attribute__((alias("ncclTeamRankToLsa")));

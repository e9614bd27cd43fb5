/* Inside the simulator: the model loaded from a job trace, and the state of
 * the replay. load.c builds it, engine.c replays it, iterations.c finds the
 * iterations, report.c/timeline.c/svg.c write what it found.
 */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "maya/map.h"
#include "maya/sim.h"

/* What an op does in the replay. */
enum sim_kind {
    SK_HOST,          /* host only: the call's host cost, nothing on a device */
    SK_KERNEL,        /* runs on its stream: kernels, GEMMs, cuDNN ops, memsets, D2D copies */
    SK_COPY,          /* host<->device copy: its stream and the device's engine for that direction */
    SK_COLL,          /* collective: waits for every member, then transfers */
    SK_P2P,           /* send or recv: waits for its peer, then transfers */
    SK_HOST_FUNC,     /* host function run in stream order */
    SK_EVENT_RECORD,  /* the event completes when its stream reaches this point */
    SK_STREAM_WAIT,   /* the stream waits for an event */
    SK_SYNC,          /* the host waits: sub = enum maya_sync_kind */
};

/* sim_op.flags */
#define SF_HOST_WAITS  0x01  /* the host waits for this op (synchronous copy) */
#define SF_DEVICE_SYNC 0x02  /* the host waits for the whole device afterwards (cudaFree) */
#define SF_GROUP_NEXT  0x04  /* the next op on this stream belongs to the same NCCL group */
#define SF_EXTRAPOLATED 0x08 /* the estimator extrapolated */
#define SF_INTER_NODE  0x10  /* transfer crosses nodes: shares the nodes' NICs */

/* Precision classes for MFU (kernel ops keep theirs in sub). */
enum sim_prec { SP_NONE, SP_FP64, SP_FP32, SP_TF32, SP_FP16, SP_BF16, SP_FP8, SP_INT8, SP_N };

struct sim_op {
    uint64_t gap_ns;      /* host time before the call (the program's own work) */
    uint64_t dev_ns;      /* device time */
    uint64_t arg2;        /* KERNEL: FLOPs; COLL: sequence; P2P: (from, to, seq) key;
                             EVENT_RECORD/STREAM_WAIT/SYNC event: version */
    uint32_t host_ns;     /* host cost of the call itself */
    uint32_t name;        /* global string id (kernel or API name) */
    uint32_t stream;      /* global stream index + 1; 0 for none */
    uint32_t arg;         /* COLL/P2P: comm index; EVENT_*: rank event index; SYNC: target
                             stream index + 1 (stream) or device (device) or event index */
    uint32_t sig;         /* signature for finding iterations */
    uint32_t trace_ms;    /* when the call was made, in ms from the rank's first call on
                             the trace's host clock: what emulating up to it took here */
    int16_t device;       /* the calling thread's device */
    uint8_t kind;         /* enum sim_kind */
    uint8_t flags;        /* SF_* */
    uint16_t sub;         /* KERNEL: enum sim_prec; COPY: 0 h2d, 1 d2h; SYNC: kind;
                             P2P: latency part of dev_ns in 10 ns (not slowed by sharing);
                             COLL: the SMs its NCCL kernel holds while it runs (SIM_COLL_CTAS)
                             and the latency part of dev_ns (SIM_COLL_FIXED_NS) */
    uint16_t rec_type;    /* the trace record type */
};

/* A collective's sub: the SMs its kernel holds (low 6 bits; NCCL's channels,
 * 32 at most) and the share of its estimate that is latency, not bandwidth,
 * in 1023ths (high 10 bits: not slowed by sharing a NIC). */
#define SIM_COLL_SUB(ctas, fixed, dev) \
    ((uint16_t)(MAYA_MIN((ctas), 63u) | (uint32_t)((dev) ? llround(1023.0 * MAYA_MIN((fixed), (dev)) / (dev)) : 0) << 6))
#define SIM_COLL_CTAS(o) ((uint32_t)(o)->sub & 63u)
#define SIM_COLL_FIXED_NS(o) ((uint64_t)((double)(o)->dev_ns * ((o)->sub >> 6) / 1023.0))

/* A transfer between nodes whose bandwidth part (its estimate less its
 * latency) is shorter than this is not a flow on its NICs (sim/nic.c): its
 * estimate stands alone, as for one inside a node. */
#define SIM_FLOW_MIN_NS 1000

/* Times the replay found for an op. */
struct sim_time {
    uint64_t host_end;    /* the call returned (its host cost ends) */
    uint64_t dev_start, dev_end;
};

struct sim_waiter {
    uint64_t count;       /* fires when the stream has completed this many entries */
    uint32_t who;         /* stream index, or rank | SIM_WAITER_HOST */
};
#define SIM_WAITER_HOST 0x80000000u

/* A stream queue entry: an op index of the stream's rank, or (high bit) an
 * index into the rank's waits[] (implicit legacy-stream and event waits). */
#define SIM_Q_WAIT 0x80000000u

struct sim_stream {
    uint32_t rank;
    int32_t device;
    uint64_t id;          /* id in the rank's trace */
    uint32_t flags;       /* MAYA_STREAM_* */
    uint32_t lane;        /* index among the rank's streams (timeline tid - 1) */
    uint32_t *q;          /* ring buffer of entries */
    uint32_t qcap, qhead, qlen;
    uint64_t enqueued, completed;
    uint32_t running;     /* entries the current head holds (a group of collectives > 1) */
    uint32_t pending;     /* transfers of the head group still to finish */
    int busy;             /* the head is running or blocked */
    struct sim_waiter *waiters;
    uint32_t nwaiters, capwaiters;
    uint64_t busy_ns;
};

struct sim_wait {         /* a stream waits until target has completed count entries */
    uint32_t target;      /* stream index */
    uint64_t count;
};

/* The last records of an event, by version: an event handle is recorded
 * again and again, and a wait names the version it waits for (with several
 * host threads a wait may reach the replay after a newer record). */
#define SIM_EVENT_VERSIONS 4
struct sim_event_record {
    uint32_t version;
    uint32_t stream;      /* stream index + 1; 0 = never recorded */
    uint64_t count;       /* complete when the stream has completed this many entries */
};
struct sim_event_state {
    struct sim_event_record v[SIM_EVENT_VERSIONS]; /* by version % SIM_EVENT_VERSIONS */
    uint32_t latest;
};

/* A collective's or send/recv's particulars, kept only for exports
 * (sim_config.keep_xfers): 40 bytes per such op. */
struct sim_xfer_info {
    uint64_t op;          /* index in the rank's ops */
    uint64_t bytes;
    uint64_t seq;
    uint32_t coll_op;     /* enum maya_coll_op */
    int32_t comm_rank;    /* this rank's place in the communicator */
    int32_t peer;         /* send/recv: the peer's comm rank; root; -1 */
};

struct sim_rank {
    int rank, node, local_rank;
    int complete;
    struct sim_op *ops;
    struct sim_xfer_info *xinfo;  /* keep_xfers: in op order */
    uint64_t nxinfo, capxinfo;
    struct sim_time *times;
    uint64_t nops, capops;
    uint32_t *streams;    /* its stream indices */
    uint32_t nstreams;
    struct maya_map stream_ids;   /* trace stream id -> stream index + 1 */
    struct maya_map event_ids;    /* trace event id -> events[] index + 1 */
    struct sim_event_state *events;
    uint32_t nevents, capevents;
    struct sim_wait *waits;
    uint64_t nwaits, capwaits;
    uint64_t peak_bytes;          /* device memory, highest over its devices */
    uint64_t unsupported;
    uint64_t values_not_computed; /* host reads of device bytes not real (VALUE_READ records) */
    uint64_t values_declared;     /* of those, answered by a MAYA_VALUES declaration (not counted above) */
    int oom;
    /* replay */
    uint64_t next;                /* next op to issue */
    uint64_t free_at;             /* host free from */
    int blocked;                  /* waiting on a stream */
    int sync_device;              /* device being synchronised, -1 none */
    uint32_t sync_pos;            /* next stream to check in a device sync */
    uint64_t done_at;             /* last completion of anything of this rank */
    /* communicator creation is collective: before call bars[k].op the host
     * waits until every process joining communicator bars[k].comm got there */
    struct sim_barrier {
        uint64_t op;
        uint32_t comm;
    } *bars;
    uint32_t nbars, capbars, nextbar;
    struct maya_map comms_joined; /* comm index -> 1 */
    /* iterations: ops [iter_start[k], iter_stop[k]) are iteration k */
    uint64_t *iter_start, *iter_stop;
    int niter;
    /* folding (fold.c): a rank whose work and collectives are those of a
     * lower rank (a data-parallel replica) is not replayed: it has no ops
     * of its own and takes the times of the rank it is folded into */
    int fold;                     /* ranks[] index of the rank replayed for it; -1: replayed itself */
    uint32_t weight;              /* a replayed rank: the ranks it stands for (itself included) */
    uint64_t fold_hash;           /* of its work, with communicators by order of first use */
    /* to say when --fold similar would fold what exact folding cannot: */
    uint64_t loose_hash;          /* fold_hash without host gaps */
    uint64_t gap_total;           /* the host gaps' total, ns */
    struct sim_comm_pair {        /* a folded rank's communicators -> its representative's */
        uint32_t mine, theirs;
    } *comm_map;
    uint32_t ncomm_map;
    struct sim_dev_pair {         /* and its devices, where they were renamed (fold_in_node) */
        int16_t mine, theirs;
    } *dev_map;
    uint32_t ndev_map;
    /* a reference whose work is a copy of another rank's (load.c
     * take_copy): its ops and streams are made (fold_rebuild.c sim_materialise) only
     * when it is replayed; NULL for every other rank */
    struct sim_lazy *lazy;
    struct sim_uses *uses;        /* what its work uses (sim_rank_uses), once asked */
};

/* A reference's work as rank `of`'s, renamed: of's communicators to its
 * own, and its devices as the collator's exchange of devices makes them
 * (the source's first communicator's device for the reference's, undoing
 * first the device renaming of the template's fold). */
struct sim_lazy {
    uint32_t of;                  /* ranks[] index whose ops it copies */
    struct sim_comm_pair *comms;  /* theirs (of's) -> mine */
    uint32_t ncomms;
    struct sim_dev_pair *unmap;   /* the template's fold's device renaming (mine: the template's) */
    uint32_t nunmap;
    int32_t src_dev, tpl_dev, dev;
    int exact;                    /* same_work(of, it) holds by construction, its hash is of's */
};

/* What a rank's work uses: its devices (streams and ops whose device
 * matters), its communicators (transfers, creation barriers) in order of
 * first use with what crosses them, and whether it has legacy streams of
 * the loader's making (their ids follow the device). O(ops) once. */
struct sim_uses {
    uint64_t devmask;             /* devices 0..63 */
    int other_devices;            /* one outside 0..63 */
    int synthetic_legacy;
    struct sim_work_comm {
        uint32_t comm;
        uint8_t p2p, inter;
    } *comms;
    uint32_t ncomms;
    /* the last comparison of this rank's work with another's (vs), for the
     * lazy copies of it that meet that rank (fold.c lazy_same_work) */
    int vs_valid, vs_same;
    uint32_t vs;
    double vs_diff;
    uint64_t vs_host_calls;
    struct sim_comm_pair *vs_comms;
    uint32_t vs_ncomms;
    struct sim_dev_pair *vs_devs;
    uint32_t vs_ndevs;
};

/* Whether an op runs on a device (a kernel, a copy, a transfer, a host
 * function on a stream): what the replay gives a device time. */
static inline int sim_device_work(const struct sim_op *o)
{
    return o->kind == SK_KERNEL || o->kind == SK_COPY || o->kind == SK_COLL || o->kind == SK_P2P ||
           o->kind == SK_HOST_FUNC;
}

/* The id the loader gives a device's legacy stream where the trace defines
 * none (stream_of); it cannot clash with the trace's, which count from 1. */
static inline uint64_t sim_legacy_stream_id(int device)
{
    return UINT64_MAX - (uint64_t)(device < 0 ? 0 : device);
}

/* The rank whose replay stands for r (r itself unless r is folded). */
#define SIM_REPLAYED(j, r) ((r)->fold >= 0 ? &(j)->ranks[(r)->fold] : (r))

struct sim_comm {
    uint64_t id;
    int nranks;
    int nnodes;
    int max_per_node;
    int32_t *nodes;               /* distinct nodes */
    int32_t *member_node;         /* by comm rank */
    int32_t *member_rank;         /* process holding each member (global rank), by comm rank */
    int expected;                 /* members whose ops the replay sees arrive (nranks less the
                                     members of folded ranks) */
    int has_p2p;                  /* carries send/recv */
    int inter_used;               /* an op on it crosses nodes (uses NICs) */
    int32_t *member_nic;          /* by comm rank: the NIC its GPU sends through (job-wide index) */
    int32_t *member_gpu;          /* by comm rank: node * gpus_per_node + GPU on the node */
    int32_t *nics;                /* distinct NICs of its members (nnics of them) */
    int nnics;
    /* its creation barrier */
    int joiners;                  /* processes whose trace joins it */
    int arrived;
    uint32_t *waiting;            /* ranks (indices) waiting there */
    uint32_t nwaiting, capwaiting;
};

struct sim_engine_q {             /* a copy engine: one per (rank, device, direction) */
    int busy;
    uint32_t *q;                  /* streams waiting for it (FIFO ring) */
    uint32_t qcap, qhead, qlen;
};

/* A transfer in flight: a collective or a send/recv pair. */
struct sim_xfer {
    int expected, arrived;
    uint64_t dev_ns;              /* longest estimate among the members */
    uint64_t start;
    int inter_node;
    uint32_t comm;
    uint32_t *who;                /* (stream, rank, op-low, op-high) per member: 4 words */
    uint32_t capwho;
    /* NIC sharing (inter-node only; nic.c) */
    double remaining;             /* ns of work left at full rate */
    double rate;                  /* share of its full rate it gets now */
    uint64_t last;                /* when remaining was brought up to date */
    uint64_t due, due_seq;        /* completion time and its order among equal times */
    uint64_t fixed_until;         /* its latency (not shared) ends; sharing slows only the rest */
    uint64_t fixed_ns;            /* send/recv: the latency part of dev_ns (longest member's) */
    int p2p;                      /* a send/recv pair (else a collective) */
    uint32_t *slots;              /* (NIC, position in that NIC's list) per NIC it uses */
    uint32_t nslots, capslots;
    uint32_t hpos;                /* position + 1 in the flows' completion heap, 0 = not there */
    uint32_t mark;                /* visited in the current NIC change (epoch) */
    uint32_t version;
    int active;
    uint64_t pair_key, key1;      /* its key in the wait map */
};

/* A link flows share (a NIC, or one direction of a GPU's NVLink/PCIe
 * port): the flows using it, as (flow, slot in the flow's slots) pairs. */
struct sim_nic {
    uint32_t *ent;
    uint32_t n, cap;
};

struct sim_heap_ev {
    uint64_t t;
    uint64_t seq;                 /* insertion order: ties resolve first come, first served */
    uint32_t type;
    uint32_t id;
    uint32_t version;
    uint32_t pad;
};

struct sim_heap {
    struct sim_heap_ev *v;
    size_t n, cap;
    uint64_t seq;
};

int sim_heap_push(struct sim_heap *h, uint64_t t, uint32_t type, uint32_t id, uint32_t version);
int sim_heap_pop(struct sim_heap *h, struct sim_heap_ev *out);
void sim_heap_free(struct sim_heap *h);

struct sim_job {
    char gpu[64];
    int world_size, nodes, gpus_per_node;
    struct sim_rank *ranks;
    int nranks;
    struct sim_stream *streams;
    uint32_t nstreams, capstreams;
    struct sim_comm *comms;
    uint32_t ncomms;
    struct maya_map comm_ids;     /* comm id -> index + 1 */
    struct sim_engine_q *engines;
    uint32_t nengines, capengines;
    struct maya_map engine_ids;   /* (rank, device*2+dir) -> engine index + 1 */
    /* The collectives whose NCCL kernels hold SMs on a rank's device
     * (engine.c): (rank, device) -> index + 1 into held; held_total counts
     * them all, so that a kernel starts without a lookup while no
     * collective runs anywhere */
    struct sim_held {
        struct sim_hold {
            uint32_t xfer, sms, stream; /* a collective, the SMs it holds, the member's stream */
        } *v;
        uint32_t n, cap;
    } *held;
    uint32_t nheld, capheld;
    struct maya_map held_ids;
    uint64_t held_total;
    /* strings */
    char **names;                 /* by global id - 1 */
    uint32_t nnames, capnames;
    struct maya_map name_ids;     /* (hash, len) -> first id + 1; collisions chain by probing */
    /* unsupported calls by name */
    uint64_t *unsupported_by_name; /* by global id - 1 */
    /* host reads of values not computed, by what would have written them */
    uint64_t *unreal_by_name;     /* by global id - 1 */
    uint64_t *declared_by_name;   /* reads a declaration answered, by its text's global id - 1 */
    /* kernel launches, and those priced without their code (by name) */
    uint64_t kernel_launches, no_code_launches;
    uint64_t sass_unread_launches; /* of those, kernels with SASS only that nvdisasm was not there to read */
    uint64_t *no_code_by_name;    /* by global id - 1 */
    uint64_t extrapolated;
    uint64_t total_ops;
    int host_cpu_ranks;           /* ranks whose host times are CPU time (MAYA_TRACE_F_HOST_CPU) */
    int host_active_ranks;        /* ranks on the active clock (MAYA_TRACE_F_HOST_ACTIVE) */
    char marker[256];
    int keep_iterations;          /* report on the first N iterations; 0 = all */
    int keep_xfers;               /* sim_rank.xinfo is kept */
    int iterations_found;         /* before keep_iterations cut them */
    const struct maya_gpu_spec *gpu_spec; /* for MFU; may be NULL */
    /* folding (fold.c) */
    int no_fold;                  /* sim_config.no_fold: replay every rank */
    int fold_similar;             /* sim_config.fold_similar: host gaps may differ */
    double fold_gap_diff;         /* the largest relative difference of a folded rank's host gaps */
    uint64_t fold_host_calls;     /* the most host-only calls a folded rank made more or fewer */
    struct maya_map fold_classes; /* (work hash, k) -> ranks[] index + 1 of a replayed rank */
    int fold_in_node;             /* every GPU of a node has a NIC of its own and no rank is
                                     slowed: a rank may fold into one at another local rank, of
                                     its own node too */
    int slowed;                   /* sim_config.nslow: a what-if straggler */
    int32_t *fold_target;         /* by node: the node its ranks fold into (-1 none yet) */
    uint8_t *fold_replays;        /* by node: it holds a replayed rank */
    struct maya_map fold_index;   /* global rank -> ranks[] index + 1, of the ranks loaded so far */
    uint32_t *pending;            /* ranks of the node being loaded, not yet folded or not */
    uint32_t npending, cappending;
    int replayed_ranks;
    uint64_t replayed_ops;
    char fold_note[512];          /* why some replicas were replayed after all, for the report */
    uint32_t refs_read, refs_copied; /* rebuilt ranks that were references: work read from their
                                        source's section, or copied from another's loaded work */
    int fold_gaps_only;           /* exact folding: replayed ranks that do a replica's work but for
                                     measured host gaps within SIM_FOLD_SIMILAR (--fold similar's) */
    /* replay state */
    struct sim_heap heap;
    struct maya_map xfer_ids;     /* (comm | kind, seq/key) -> xfers index + 1 */
    struct sim_xfer *xfers;
    uint32_t nxfers, capxfers;
    uint32_t *free_xfers;
    uint32_t nfree_xfers, capfree_xfers;
    /* links flows share (nic.c): the NICs, nodes x nics_per_node, then two
     * ports per GPU (out, in: nnics + 2 * global GPU + direction) */
    int nics_per_node;
    int *gpu_nic;                 /* NIC on the node of GPU g (by GPU index on its node) */
    struct sim_nic *nics;         /* nlinks of them */
    uint32_t nnics, nlinks;
    uint32_t *fheap;              /* flows by completion (indexed min-heap of xfer indices) */
    uint32_t nfheap, capfheap;
    uint32_t *affected;           /* scratch: the flows one NIC change touches */
    uint32_t naffected, capaffected;
    uint32_t epoch;
    uint64_t now;
    uint64_t events;
    int ran;                      /* sim_run was called */
    int run_ok;                   /* and finished */
    /* results */
    double *iter_times_s;
    int niter;
    uint64_t iter_t0;             /* start of iteration 1 (ns) */
    uint64_t *iter_end;           /* job-wide end of each iteration (ns) */
    uint8_t *iter_partial;        /* 1: partial on some rank, left out of the steady state */
    uint64_t warmup_ops;          /* ops before the first iteration (most on any rank) */
    double warmup_emulation_s;    /* this machine's time before the first iteration (most on a rank) */
    uint64_t makespan;            /* last completion (ns) */
    int incomplete_ranks;         /* ranks whose trace was cut short (load.c) */
    int workload_failed;          /* sim_config's */
    int cut_short;                /* replayed up to where they end (cut_short.c) */
    uint64_t ops_not_replayed;
};

/* Grow array p (capacity cap, any unsigned type) to hold need elements:
 * doubling, so n appends cost O(n). 0, or -1 when out of memory. */
#define SIM_GROW(p, cap, need) ({                                               \
    int rc_ = 0;                                                                \
    if ((uint64_t)(need) > (uint64_t)(cap)) {                                   \
        uint64_t n_ = (cap) ? (uint64_t)(cap) * 2 : 16;                         \
        if (n_ < (uint64_t)(need))                                              \
            n_ = (uint64_t)(need);                                              \
        void *q_ = realloc((p), n_ * sizeof *(p));                              \
        if (!q_)                                                                \
            rc_ = -1;                                                           \
        else {                                                                  \
            (p) = q_;                                                           \
            (cap) = (__typeof__(cap))n_;                                        \
        }                                                                       \
    }                                                                           \
    rc_; })

/* nic.c: the nodes' NICs and the flows between nodes (costs in nic.c). */
int sim_nic_setup(struct sim_job *j, const struct maya_cluster_spec *c); /* after the JOB record */
int sim_nic_of_gpu(const struct sim_job *j, int global_gpu);              /* job-wide NIC index */
int sim_nic_flow_start(struct sim_job *j, uint32_t xi);  /* at j->now; 0 or -1 */
int sim_nic_flow_end(struct sim_job *j, uint32_t xi);
/* The flow finishing first: 1 with its time, sequence and index, 0 if none. */
int sim_nic_peek(const struct sim_job *j, uint64_t *t, uint64_t *seq, uint32_t *xi);
void sim_nic_free(struct sim_job *j);

/* load.c */
uint32_t sim_intern(struct sim_job *j, const char *s);
const char *sim_name(const struct sim_job *j, uint32_t id);

/* fold.c, fold_check.c: after each rank is loaded, fold it into an earlier rank of the
 * same work; after the last, undo folds that symmetry does not allow, and
 * count the members each collective waits for. 0, or -1 (out of memory). */
int sim_fold_rank(struct sim_job *j, uint32_t ri);
/* A rank of this node is about to be loaded: decide the ranks of the node
 * loaded before it (while their streams are the last ones). 0 or -1. */
int sim_fold_next_node(struct sim_job *j, int node);
int sim_fold_finish(struct sim_job *j);
/* r's ops, events and barriers made a's, on r's streams from index first
 * (a's lanes in order); communicators are left a's, for the caller to
 * rename. 0, or -1 with a message. */
int sim_copy_work(struct sim_job *j, struct sim_rank *r, const struct sim_rank *a, uint32_t first);
/* A folded rank's communicator (comms[] index) as its representative's, -1 if it has none. */
int64_t sim_fold_theirs(const struct sim_rank *r, uint32_t mine);
/* A folded rank's device for its representative's (itself where they were not renamed). */
int16_t sim_fold_my_device(const struct sim_rank *r, int16_t theirs);
/* References loaded as copies (load.c take_copy, fold_rebuild.c): what rank xi's
 * work uses (kept in it; NULL when out of memory); a lazy rank's device
 * for its source rank's device d; rank ri made lazy (z taken over) or, where
 * that cannot be exact, materialised at once (0, or -1 with a message). */
const struct sim_uses *sim_rank_uses(struct sim_job *j, uint32_t xi);
int16_t sim_lazy_device(const struct sim_lazy *z, int16_t d);
int sim_make_lazy(struct sim_job *j, uint32_t ri, struct sim_lazy *z);
void sim_lazy_free(struct sim_lazy *z);
void sim_uses_free(struct sim_uses *u);
/* The communicator paired with theirs in p[n], -1 if none. */
int64_t sim_comm_mine(const struct sim_comm_pair *p, uint32_t n, uint32_t theirs);

/* estimate_memo.c: ask the estimator (cfg->estimate, cfg->flops) about op,
 * or answer from an identical earlier question when the estimator answers
 * from content alone (cfg->estimate_by_content). *memo is created on first
 * use. kdigest: sim_memo_kernel_digest of op->kernel and op->kernel_name,
 * which the caller keeps per definition (NULL: taken here). 0, or -1 with a
 * message. */
struct sim_memo;
int sim_memo_estimate(struct sim_memo **memo, const struct sim_config *cfg, const struct est_op *op,
                      const uint64_t *kdigest, struct est_result *er, double *flops);
/* A kernel definition's 128-bit hash with its name's, as the memo's keys take it. */
void sim_memo_kernel_digest(const struct maya_rec_kernel *k, const char *name, uint64_t digest[2]);
void sim_memo_free(struct sim_memo *memo);

/* iterations.c */
int sim_find_iterations(struct sim_job *j);
/* cut_short.c: the replay ran out of events with ranks cut short: simulate
 * what was recorded (0), instead of calling it a deadlock. */
int sim_cut_short(struct sim_job *j);
double sim_steady_iteration_s(const struct sim_job *j);
/* Is iteration k (from 0) one of the steady state's: after the first (or
 * the only one), not partial. How many are. */
int sim_iteration_steady(const struct sim_job *j, int k);
int sim_steady_count(const struct sim_job *j);

/* The device work classes for the report. */
static inline int sim_is_compute(const struct sim_op *o)
{
    return o->kind == SK_KERNEL || o->kind == SK_HOST_FUNC;
}
static inline int sim_is_comm(const struct sim_op *o)
{
    return o->kind == SK_COLL || o->kind == SK_P2P;
}

/* stats.c: per-rank busy time by class within [t0, t1). exposed_copy:
 * copies under neither compute nor communication, so that compute +
 * exposed_comm + exposed_copy + idle (t1 - t0 - any) is the whole window. */
struct sim_busy {
    double compute, comm, exposed_comm, copy, exposed_copy, any;
};
int sim_busy_in(const struct sim_job *j, const struct sim_rank *r, uint64_t t0, uint64_t t1, struct sim_busy *out);
/* The window the pictures (timeline.svg, report.html) show: the first steady
 * iteration (usually the second found), else the first or the whole run;
 * which iteration it is (from 1). w1 > w0. */
int sim_picture_window(const struct sim_job *j, uint64_t *w0, uint64_t *w1);
/* The steady iterations' windows: runs of consecutive steady iterations
 * (usually one: 2..N), as [t0, t1) ns each, at most max; how many runs
 * (at least 1: without a steady iteration, the first or the whole run). */
struct sim_window {
    uint64_t t0, t1;
};
#define SIM_MAX_WINDOWS 64
int sim_steady_windows(const struct sim_job *j, struct sim_window *w, int max);

/* details.c: what report.json and report.html show beyond the summary, all
 * per steady iteration (the steady windows above divided by their iterations). */
struct sim_rank_split {       /* exclusive: the four add up to the iteration */
    double compute_s;         /* some compute running */
    double comm_s;            /* communication and no compute (exposed) */
    double copy_s;            /* only host<->device copies */
    double idle_s;            /* no device work at all */
};
struct sim_comm_use {
    uint32_t comm;            /* index in j->comms */
    int ranks;                /* traced ranks that called on it */
    double ops;               /* calls per iteration, per rank that called */
    double time_s;            /* device time per iteration, per rank that called
                                 (includes waiting for peers) */
    uint32_t top_name;        /* the call with the most time on it */
};
struct sim_op_use {
    uint32_t name;
    uint8_t kind;             /* enum sim_kind of its first call */
    uint16_t rec_type;        /* and its trace record type */
    double count;             /* calls per iteration, mean over ranks */
    double time_s;            /* device time per iteration, mean over ranks */
    double max_s;             /* its longest single call */
    int max_rank;
};
#define SIM_TOP_OPS 20
struct sim_details {
    int iters;
    double iteration_s;       /* the window's length per iteration */
    struct sim_rank_split *split; /* by j->ranks index */
    struct sim_comm_use *comms;   /* by time, most first */
    uint32_t ncomms;
    struct sim_op_use ops[SIM_TOP_OPS]; /* by time, most first */
    int nops;
};
int sim_details_build(const struct sim_job *j, struct sim_details *out);
void sim_details_free(struct sim_details *d);
/* What an op of the table is, in words: "GEMM", "collective", "kernel", ... */
const char *sim_op_use_kind(const struct sim_op_use *u);
/* The GPUs the job drives (several per process possible); -1 out of memory. */
int sim_job_gpus(const struct sim_job *j);

/* format.c: figures as the reports print them ("12.345 ms", "1.50 GiB"),
 * and text escaped for XML and HTML. */
void sim_fmt_time(char *buf, size_t size, double s);
void sim_fmt_bytes(char *buf, size_t size, uint64_t b);
void sim_xml_escape(FILE *fp, const char *s);

/* json.c: the JSON writer (include/maya/json.h). */
#include "maya/json.h"

/* timeline_view.c: the ranks and time the timelines show (bounded by
 * default, everything with full). */
struct sim_view {
    int *ranks;                   /* ranks[] indexes, ascending */
    int nranks;
    uint64_t t0, t1;              /* ops overlapping [t0, t1) (ns); t1 UINT64_MAX: to the end */
    int iter_first, iter_last;    /* the iterations that covers (from 1) */
    int full;
    int cut;                      /* [t0, t1) is the first part of iteration iter_first alone */
    char what[256];               /* which ranks, for people */
};
/* Most events a bounded timeline.json holds (about 130 bytes each): what a
 * browser tab opens (timeline_view.c). */
#define SIM_VIEW_MAX_EVENTS 2000000
int sim_view_pick(const struct sim_job *j, int full, struct sim_view *v);
/* The events timeline.json holds for replayed rank r in [t0, t1). */
uint64_t sim_timeline_events(const struct sim_rank *r, uint64_t t0, uint64_t t1);
void sim_view_free(struct sim_view *v);

/* timeline.c, svg.c */
int sim_write_timeline(const struct sim_job *j, const struct sim_view *v, const char *path);
int sim_write_svg(const struct sim_job *j, const struct sim_view *v, const char *path);

/* html.c: report.html, one self-contained page. */
struct sim_page {
    const struct sim_job *j;           /* NULL when nothing could be loaded */
    const struct sim_report_info *in;
    const struct sim_summary *s;
    const struct sim_details *d;       /* NULL when not replayed */
    int replayed;
    int failed;                        /* processes that failed on their own */
    int gpus;                          /* GPUs the job drives */
    uint64_t total_mem;                /* the GPU's memory, 0 unknown */
};
int sim_write_html(const struct sim_page *p, const char *path);

#endif

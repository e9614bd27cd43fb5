/* What the NCCL stand-in's files share.
 *
 * Layout of the library:
 *   net.c        this process's endpoint: a TCP listener, a progress thread
 *                that owns every socket, and message sending
 *   mailbox.c    queues of received messages and the waits on them (with a
 *                timeout, and noticing a peer that went away)
 *   bootstrap.c  unique ids and the rendezvous that turns them into a table
 *                of members
 *   comm.c       communicators: init, split, shrink, destroy, queries
 *   group.c      ncclGroupStart/End and the execution of queued operations
 *   exchange.c   the data exchange of small collectives through the
 *                communicator's rank 0, with its consistency checks
 *   reduce.c     element types and reductions
 *   coll.c       the collective and point-to-point entry points
 *   capture.c    ops captured into CUDA graphs, and their replay at launches
 *   misc.c       errors, version, memory, registration, custom reductions
 *   elim.c       duplicate-rank elimination: the rolling hash of each rank's
 *                NCCL operations, the comparison through the world
 *                communicator's rank 0, and stopping a duplicate
 *
 * Ranks are found and reached over TCP only (no shared memory), so members
 * of one communicator may live in one process or on different hosts.
 * Small operations (total bytes up to the copy threshold) move their data;
 * large ones are only traced.
 */
#ifndef MAYA_NC_H
#define MAYA_NC_H

#include <nccl.h>
#include <stdarg.h>

#include "emu.h"

struct nc_task;

/* Export the pnccl* profiling name of an implemented function. */
#define NC_ALIAS(name) extern __typeof__(name) p##name __attribute__((alias(#name)))

/* ---- entry of every API call ---- */

#define NC_ENTER() \
    if (emu_enter() != EMU_OK) \
        return ncclUnhandledCudaError; \
    uint64_t nc_t0 = emu_now()

#define NC_API() EMU_API_ID(__func__)

/* Trace a plain call and return its result. */
#define NC_RETURN(res) \
    do { \
        ncclResult_t nc_r_ = (res); \
        emu_trace_call(NC_API(), nc_t0, nc_r_, 0, 0); \
        return nc_r_; \
    } while (0)

/* ---- errors (misc.c) ---- */

/* Report an error on stderr ("maya-emu: nccl: ..."), keep it for
 * ncclGetLastError, and return code. */
ncclResult_t nc_fail(ncclResult_t code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
ncclResult_t nc_vfail(ncclResult_t code, const char *fmt, va_list ap);
/* Seconds any wait for peers may last (MAYA_NCCL_TIMEOUT, default 600). */
double nc_timeout_s(void);

/* ---- wire format (net.c, mailbox.c) ---- */

struct nc_addr {                /* an IPv4 or IPv6 address and port */
    uint16_t family;            /* AF_INET or AF_INET6 */
    uint16_t port;              /* host byte order */
    uint8_t ip[16];
};

struct nc_peer {                /* one member of a communicator, as all members know it */
    uint64_t ep;                /* endpoint id of its process */
    struct nc_addr addr;        /* where that endpoint listens */
    int32_t pid;
    int32_t device;             /* CUDA ordinal in its process */
    int32_t global_gpu;         /* node * gpus_per_node + index on the node */
    int32_t node;
    char host[64];
    int32_t rank;               /* global rank of its process (MAYA_RANK, RANK), -1 unknown */
};
_Static_assert(sizeof(struct nc_peer) == 112, "peer size");

#define NC_MSG_MAGIC 0x4c43434du /* "MCCL" */
#define NC_MAX_PAYLOAD (1u << 30)

enum nc_msg_type {
    NC_HELLO = 1,               /* first message on a connection: aux = endpoint id */
    NC_JOIN = 2,                /* to the rendezvous: comm = unique id, src = rank, count = nranks */
    NC_TABLE = 3,               /* from the rendezvous: nc_peer[nranks] */
    NC_CONTRIB = 4,             /* a rank's part of an exchange, to rank 0 */
    NC_RESULT = 5,              /* rank 0's answer to one rank */
    NC_ERROR = 6,               /* rank 0 (or the rendezvous) refuses: text payload, aux = ncclResult_t */
    NC_P2P = 7,                 /* a small ncclSend's data */
    NC_BYE = 8,                 /* a rank left the communicator: seq = its collectives so far */
    NC_STOP = 9,                /* an eliminated rank stopped (elim.c): to rank 0, seq = its collectives
                                   so far, aux = the member standing in for it; to a send/recv partner,
                                   count = the messages it sent there */
    NC_ELIM_REPORT = 10,        /* a rank's op hash, to the world communicator's rank 0 */
    NC_ELIM_VERDICT = 11,       /* from it: every rank's representative */
};

enum nc_chan {                  /* separate FIFO queues per (comm, dst, src) */
    NC_CH_BOOT = 0,             /* rendezvous replies (src = -1) */
    NC_CH_HUB = 1,              /* contributions arriving at rank 0 */
    NC_CH_RESULT = 2,           /* answers from rank 0 */
    NC_CH_P2P = 3,              /* point-to-point data */
    NC_NCHAN = 4,
};

/* Exchange kinds beyond enum maya_coll_op (which they follow). */
#define NC_KIND_SPLIT 100

struct nc_msg_hdr {
    uint32_t magic;
    uint16_t type;              /* enum nc_msg_type */
    uint16_t chan;              /* enum nc_chan */
    uint64_t comm;
    int32_t src, dst;           /* ranks on comm */
    uint64_t seq;
    uint32_t kind;              /* enum maya_coll_op or NC_KIND_* */
    int32_t dtype, redop, root;
    uint64_t count;
    uint64_t aux;
    uint32_t bytes;             /* payload that follows */
    uint32_t reserved;
};
_Static_assert(sizeof(struct nc_msg_hdr) == 72, "message header size");

struct nc_msg {
    struct nc_msg *next;
    struct nc_msg_hdr h;
    unsigned char data[];
};

struct nc_msg *nc_msg_new(const struct nc_msg_hdr *h, const void *payload);

/* ---- the endpoint (net.c) ---- */

/* Start this process's endpoint (idempotent). 0, or -1 with the error reported. */
int nc_net_start(void);
/* This process as a peer (device fields unset). */
const struct nc_peer *nc_net_self(void);
/* Send a message (h->bytes of payload). Messages from one thread to one
 * peer arrive in order. To this process: delivered at once. Never blocks
 * on the peer, except to connect. 0, or -1 with why filled. */
int nc_net_send(const struct nc_peer *to, struct nc_msg_hdr *h, const void *payload, char *why, size_t n);
/* Make sure a connection to the peer exists, so that its exit is noticed. */
void nc_net_watch(const struct nc_peer *p);
/* Has the process of endpoint ep gone away? why receives how. */
int nc_net_dead(uint64_t ep, char *why, size_t n);
/* Wait (at most timeout_s) until every queued byte is written. */
void nc_net_flush(double timeout_s);
uint64_t nc_random64(void);
/* "host:port" of an address. */
const char *nc_addr_str(const struct nc_addr *a, char *buf, size_t n);

/* ---- mailboxes (mailbox.c) ---- */

/* Take a message in (ownership passes): queue it, or answer it if it is
 * for a communicator this process has left. */
void nc_mb_deliver(struct nc_msg *m);
/* A peer's process went away (nc_net_dead says which): waits on it end. */
void nc_mb_peer_dead(void);

/* Is a contribution (NC_CONTRIB) from src to dst on comm waiting to be
 * served? O(1). */
int nc_mb_contrib_waiting(uint64_t comm, int dst, int src);

enum nc_wait_status { NC_WAIT_OK = 0, NC_WAIT_DEAD = 1, NC_WAIT_TIMEOUT = 2 };
/* Wait for the next message from src to dst on comm's channel chan, from
 * the process of peer from (NULL: not watched), at most patience times
 * MAYA_NCCL_TIMEOUT. why receives the reason of a failure. */
enum nc_wait_status nc_mb_wait(uint64_t comm, int dst, int src, int chan, const struct nc_peer *from,
                               double patience, struct nc_msg **out, char *why, size_t n);
/* Rank c->rank of c leaves this process: its queues are dropped, and so
 * are later messages to it, except contributions to a rank 0, which are
 * answered with an error (as are those it never served). */
void nc_mb_close(const struct ncclComm *c);

/* ---- bootstrap (bootstrap.c) ---- */

struct nc_uid {                 /* the content of an ncclUniqueId */
    char magic[8];              /* "MAYANCCL" */
    uint32_t version;
    uint32_t pid;               /* of the creator */
    uint64_t id;                /* rendezvous id, becomes the communicator id */
    uint64_t ep;                /* the creator's endpoint */
    struct nc_addr addr;        /* where it listens */
    char host[64];              /* the creator's host name, for messages */
};
_Static_assert(sizeof(struct nc_uid) <= NCCL_UNIQUE_ID_BYTES, "unique id size");

int nc_boot_create(struct nc_uid *u);
/* Check an id given to an init call; ncclSuccess or the error (reported). */
ncclResult_t nc_boot_check(const ncclUniqueId *id, struct nc_uid *u);
/* The creator of an id, as a peer to send to. */
void nc_boot_root_peer(const struct nc_uid *u, struct nc_peer *p);
/* A JOIN arrived (the rendezvous lives in the id's creator). */
void nc_boot_join(struct nc_msg *m);
/* The INIT task: t->comm is being made as rank t->peer of t->count ranks
 * from t->uid. post sends JOIN, finish waits for the member table. */
ncclResult_t nc_init_post(struct nc_task *t);
ncclResult_t nc_init_finish(struct nc_task *t);

/* ---- communicators (comm.c) ---- */

#define NC_COMM_MAGIC 0x6d6d6f63u

enum nc_comm_state { NC_READY = 0, NC_PENDING = 1, NC_FAILED = 2 };

struct nc_redop {               /* ncclRedOpCreatePreMulSum */
    int live;
    ncclDataType_t dtype;
    ncclScalarResidence_t residence;
    unsigned char scalar[8];    /* host-immediate value */
    const void *scalar_ptr;     /* device-resident scalar: read at each use */
};

struct nc_gone {                /* a member that elimination stopped (elim.c) */
    uint64_t from_seq;          /* its collectives before it stopped */
    int32_t stand_in;           /* the member whose contribution is taken for it */
    int32_t set;
};

struct ncclComm {
    uint32_t magic;
    uint64_t id, parent;
    int rank, nranks;
    int device;                 /* CUDA ordinal in this process */
    int color, key;             /* from ncclCommSplit, -1 otherwise */
    int blocking;
    char name[64];              /* config commName */
    struct nc_peer *peers;      /* [nranks] */
    uint64_t coll_seq;          /* collectives issued so far */
    uint64_t ctrl_seq;          /* splits (exchanges that are not collectives) */
    uint64_t nderived;          /* splits and shrinks so far: names the children */
    uint64_t *send_seq, *recv_seq; /* [nranks] point-to-point counts per peer */
    unsigned char *p2p_peer;    /* [nranks] had point-to-point traffic (told at exit) */
    volatile int state;         /* enum nc_comm_state */
    ncclResult_t error;         /* sticky: once an exchange failed */
    int left;                   /* finalized or aborted: peers were told */
    int revoked;
    pthread_t init_thread;      /* non-blocking init in the background */
    int has_init_thread;
    struct nc_redop *redops;    /* custom ops: redop = ncclNumOps + index */
    int nredops;
    /* duplicate-rank elimination (elim.c) */
    uint32_t index;             /* made as this process's index-th communicator */
    struct ncclComm *next_made; /* this process's communicators, by creation */
    struct nc_gone *gone;       /* rank 0: [nranks] members that stopped; NULL: none */
    uint64_t *p2p_gone;         /* [nranks] receives from that peer from which it is gone
                                   (UINT64_MAX: not gone); NULL: none */
    struct nc_msg **root_last;  /* rank 0, once a member is gone: [nranks] the data of the
                                   last small broadcast each member was the root of (a gone
                                   root's broadcast is its stand-in's own; exchange.c), at
                                   most one small message per member */
};

/* A communicator handle that is usable (waits for a pending non-blocking
 * init); ncclSuccess or the error to return (reported). */
ncclResult_t nc_comm_ready(struct ncclComm *c, const char *api);
struct ncclComm *nc_comm_alloc(void);
/* Fill a communicator from its member table and write its COMM record. */
ncclResult_t nc_comm_setup(struct ncclComm *c, uint64_t id, uint64_t parent, int rank, int nranks,
                           const struct nc_peer *peers, int color, int key);
/* Describe a communicator for messages: "comm 0x... (name) rank r/n". */
const char *nc_comm_str(const struct ncclComm *c, char *buf, size_t n);

/* ---- operations and groups (group.c) ---- */

enum nc_task_type { NC_T_COLL = 1, NC_T_SEND, NC_T_RECV, NC_T_INIT, NC_T_SPLIT };

struct nc_task {
    int type;
    struct ncclComm *comm;      /* the op's comm; INIT: the one being made; SPLIT: the parent */
    /* collectives and point-to-point */
    uint32_t op;                /* enum maya_coll_op */
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    ncclDataType_t dtype;
    ncclRedOp_t redop;
    int peer;                   /* root or peer, -1 if none */
    int small;                  /* moves data */
    struct emu_stream *capture; /* issued to this capturing stream: becomes a graph node at
                                   the group's end, takes no sequence number now */
    struct nc_redop premul;     /* a custom op as it was at the call (it may be
                                   destroyed before the group runs) */
    uint64_t seq;
    struct maya_rec_coll rec;   /* traced when the group runs */
    /* INIT */
    struct nc_uid uid;
    /* SPLIT */
    int color, key;
    struct ncclComm *made;      /* the new communicator; NULL for NCCL_SPLIT_NOCOLOR */
    ncclResult_t result;
};

/* Queue a task in the thread's open group, or run it now if none is open. */
ncclResult_t nc_submit(struct nc_task *t);
int nc_in_group(void);
/* Run tasks as one group: post, serve as rank 0, finish. Returns the first error. */
ncclResult_t nc_run_tasks(struct nc_task *t, int n);
/* A non-blocking init outside a group: post now, finish on a thread kept
 * in t->comm. Returns ncclInProgress or the error. */
ncclResult_t nc_run_detached(struct nc_task *t);
/* A call inside the thread's group failed: ncclGroupEnd returns r. */
void nc_group_fail(ncclResult_t r);
/* A new group id (nonzero, unique in the process). */
uint64_t nc_group_new_id(void);
/* The sequence number of c's next op of kind op (enum maya_coll_op;
 * send/recv: towards or from peer), counted. */
uint64_t nc_take_seq(struct ncclComm *c, uint32_t op, int peer);

/* ---- captured ops (capture.c) ---- */

/* c was made (alive 1) or is freed (0): graph replays check it. */
void nc_capture_comm_live(struct ncclComm *c, int alive);
/* Make t (t->capture set) a node of its stream's capture; ncclSuccess or
 * the error (reported). */
ncclResult_t nc_capture_task(struct nc_task *t);

/* ---- exchanges (exchange.c) ---- */

ncclResult_t nc_exchange_post(struct nc_task *t);
ncclResult_t nc_exchange_serve(struct nc_task *t);
ncclResult_t nc_exchange_finish(struct nc_task *t);
/* Rank 0 refuses an exchange: every rank's finish step gets the text. */
ncclResult_t nc_exchange_refuse(struct nc_task *t, ncclResult_t code, const char *text);
/* A rank whose communicator already failed tells rank 0 it cannot take
 * part, so that nobody waits for it; returns that failure. */
ncclResult_t nc_exchange_abstain(struct nc_task *t);
/* A small ncclRecv: wait for the sender's data and check it. */
ncclResult_t nc_p2p_finish(struct nc_task *t);
/* Total bytes an operation moves (decides small or large). */
uint64_t nc_total_bytes(uint32_t op, size_t count, ncclDataType_t dtype, int nranks);
/* "ncclAllReduce(count=4, float32, sum)" */
const char *nc_op_str(uint32_t kind, uint64_t count, int dtype, int redop, int root, char *buf, size_t n);
/* Mark comm failed and report on this rank. */
ncclResult_t nc_comm_fail(struct ncclComm *c, ncclResult_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- duplicate-rank elimination (elim.c, docs/dedup.md) ---- */

/* A communicator was made (nc_comm_setup) / is freed. */
void nc_elim_comm_made(struct ncclComm *c);
void nc_elim_comm_freed(struct ncclComm *c);
/* A COLL record is traced (a task posted outside a capture, or a graph
 * launch replaying a captured one): its part of the rank's hash. */
void nc_elim_op(const struct maya_rec_coll *r, uint32_t comm_index);
/* The index a communicator id was made with in this process (UINT32_MAX: none). */
uint32_t nc_elim_comm_index(uint64_t comm);
/* Before a list of tasks runs: a rank the verdict eliminated stops here
 * (never returns) when the tasks only move data. */
void nc_elim_point(const struct nc_task *t, int n);
/* NC_ELIM_REPORT / NC_ELIM_VERDICT, on the progress thread. */
void nc_elim_deliver(struct nc_msg *m);
/* Rank 0 of comm heard that member rank stopped (NC_STOP) or left (NC_BYE). */
void nc_elim_member_left(uint64_t comm, int rank);
/* Declared replicas (MAYA_REPLICAS; maya run --replicas): the layout, or
 * NULL; how many ranks of the world run; a member table entry for a rank
 * that never started (ep 0: nothing is sent to it); and, at a call that
 * makes a communicator, a replica's stop (never returns for one). */
struct maya_replicas;
const struct maya_replicas *nc_replicas(void);
int64_t nc_replicas_emulated(void);
void nc_replica_peer(struct nc_peer *p, int global_rank);
void nc_elim_replica_point(void);
/* The split of a parent with members that never started: their color
 * and key from the emulated ranks that show which dimensions each color
 * spans (ck[2 r], ck[2 r + 1]; absent ones filled). Keys become the parent
 * rank (members in parent order, checked against the keys given). 0, or -1
 * with why. */
int nc_replicas_split(const struct ncclComm *parent, int32_t *ck, char *why, size_t n);
/* Did the verdict stop the process of this global rank? */
int nc_elim_gone(int global_rank);

/* ---- element types and reductions (reduce.c) ---- */

size_t nc_type_size(ncclDataType_t t);
const char *nc_type_name(ncclDataType_t t);
const char *nc_redop_name(int op);
/* acc[i] = acc[i] op in[i] (op: ncclSum, ncclProd, ncclMax, ncclMin; ncclAvg sums). */
void nc_reduce(void *acc, const void *in, size_t count, ncclDataType_t t, int op);
/* buf[i] /= n (ncclAvg's last step). */
void nc_divide(void *buf, size_t count, ncclDataType_t t, int n);
/* buf[i] *= scalar (PreMulSum), scalar of type t. */
void nc_scale(void *buf, size_t count, ncclDataType_t t, const void *scalar);

#endif

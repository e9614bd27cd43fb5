/* Collating: rank traces into one job trace (include/maya/job_trace.h),
 * checking that the ranks agree on every collective and send/recv.
 *
 * One pass over each rank trace: its records are copied into a section of
 * a temporary file while its communicators and collectives are noted (the
 * compressed chunks themselves, but for the last, which holds END: records
 * are inflated once to be checked, never compressed again); then
 * the checks run, and the job trace is assembled as JOB, JOB_COMM records,
 * the sections' chunks copied as they are, and END.
 *
 * Matching costs O(1) per collective (a hash on (communicator, sequence));
 * an entry is dropped once every member has been seen, so memory follows the
 * skew between ranks, not the length of the job.
 */
#define _GNU_SOURCE
#include "maya/collator.h"
#include "maya/common.h"
#include "maya/job_trace.h"
#include "maya/map.h"
#include "maya/progress.h"
#include "maya/trace_reader.h"
#include "maya/replicas.h"
#include "rebuild.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rank_file {
    char path[PATH_MAX];
    int rank;
    int incomplete;           /* a .tmp trace, cut short */
};

struct member {
    int32_t rank;             /* process */
    int32_t global_gpu;
    uint64_t ncoll;           /* collectives it issued on the comm */
};

struct comm {
    uint64_t id, parent;
    int nranks;
    struct member *members;   /* by comm rank */
    uint64_t ncoll;           /* highest sequence + 1 seen */
};

/* One collective until all its members have been seen, or one send/recv
 * pair until both sides have. */
struct match {
    uint64_t count;
    int32_t dtype;
    /* collectives */
    uint32_t op;
    int32_t redop, root, nranks;
    int arrived;
    int first_rank, first_crank; /* process and comm rank of the first member seen */
    /* send/recv */
    int have_send, have_recv;
    int send_rank, recv_rank;    /* processes */
};

struct collator {
    struct map_of_comms {
        struct maya_map index;  /* comm id -> comms[] index + 1 */
        struct comm *v;
        size_t n, cap;
    } comms;
    struct maya_map colls;      /* (comm, seq) -> pool index + 1 */
    struct maya_map p2ps;       /* (comm, sender << 44 | receiver << 24 | seq) -> pool index + 1 */
    struct match *pool;         /* pending matches of both maps */
    size_t npool, pool_cap;
    size_t *free_slots;         /* freed pool slots */
    size_t nfree, free_cap;
    uint64_t collectives, pairs;
    int rebuilt;                /* ranks rebuilt from another's trace */
    struct kept_shape {         /* the shapes replicas were made from */
        int rank;
        struct col_shape *shape;
    } *shapes;
    size_t nshapes, shapes_cap;
    struct col_ref_source **sources; /* the sources of ranks rebuilt as references, read once each */
    size_t nsources, sources_cap;
    int copy_rebuilt;           /* MAYA_REBUILT_COPY=1: rebuilt sections as full copies */
    int allow_incomplete;
    int gpus_per_node;
    int world;                  /* the largest WORLD_SIZE of the traces read so far (bounds communicators) */
    int nfiles;                 /* rank traces in the job */
    uint64_t members_total;     /* members of all communicators */
};

static const char *dtype_name(int32_t t)
{
    static const char *names[] = { "int8", "uint8", "int32", "uint32", "int64", "uint64", "float16",
                                   "float32", "float64", "bfloat16", "fp8e4m3", "fp8e5m2" };
    return t >= 0 && t < (int32_t)MAYA_ARRAY_LEN(names) ? names[t] : "dtype?";
}

static int grow_array(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = MAYA_MAX(*cap * 2, MAYA_MAX(need, 16));
    void *p = realloc(*v, n * elem);
    if (!p)
        return maya_error("out of memory collating");
    *v = p;
    *cap = n;
    return 0;
}

/* ---- communicators ---- */

/* How big a communicator may be. Its size comes from the trace, so it is
 * checked before it sizes anything: a communicator has at most one member
 * per GPU of the job (world size x GPUs per node, for a process that drives
 * a whole node), and at most 2^20 (send/recv keys pack comm ranks into 20
 * bits). All communicators together hold at most COMM_MEMBERS_PER_GPU
 * members per GPU of the job (a rank in 256 communicators is far more than
 * any framework creates) and 2^24 in all, so a damaged trace cannot make
 * the collator allocate more than 4 KiB per GPU of the job it claims, nor
 * more than 256 MiB. */
#define MAX_COMM_MEMBERS (1 << 20)
#define COMM_MEMBERS_PER_GPU 256
#define MAX_MEMBERS_TOTAL (1u << 24)  /* 256 MiB of members, whatever the job */

static int comm_bound(const struct collator *c)
{
    return (int)MAYA_MIN((int64_t)MAYA_MAX(c->world, 1) * MAYA_MAX(c->gpus_per_node, 1), MAX_COMM_MEMBERS);
}

/* The communicator id with nranks members: the one known, or a new one.
 * NULL with a message when nranks is impossible or memory runs out. */
static struct comm *comm_get(struct collator *c, uint64_t id, int nranks, const char *path)
{
    uint64_t *known = maya_map_get(&c->comms.index, id, 0);
    if (known)
        return &c->comms.v[*known - 1];
    int bound = comm_bound(c);
    if (nranks < 1 || nranks > bound) {
        maya_error("%s: communicator 0x%llx of %d members: expected 1 to %d (the job's %d ranks x %d GPUs "
                   "per node)", path, (unsigned long long)id, nranks, bound, MAYA_MAX(c->world, 1),
                   MAYA_MAX(c->gpus_per_node, 1));
        return NULL;
    }
    uint64_t budget = MAYA_MIN((uint64_t)bound * COMM_MEMBERS_PER_GPU, MAX_MEMBERS_TOTAL);
    if (c->members_total + (uint64_t)nranks > budget) {
        maya_error("%s: communicator 0x%llx of %d members makes %llu members in %zu communicators, more "
                   "than %d per GPU of a %d-GPU job", path, (unsigned long long)id, nranks,
                   (unsigned long long)(c->members_total + (uint64_t)nranks), c->comms.n + 1,
                   COMM_MEMBERS_PER_GPU, bound);
        return NULL;
    }
    int created;
    uint64_t *slot = maya_map_put(&c->comms.index, id, 0, &created);
    if (!slot || grow_array((void **)&c->comms.v, &c->comms.cap, c->comms.n + 1, sizeof *c->comms.v) < 0) {
        maya_error("out of memory collating");
        return NULL;
    }
    struct comm *k = &c->comms.v[c->comms.n];
    memset(k, 0, sizeof *k);
    k->id = id;
    k->nranks = nranks;
    k->members = calloc((size_t)nranks, sizeof *k->members);
    if (!k->members) {
        maya_map_del(&c->comms.index, id, 0);
        maya_error("out of memory collating");
        return NULL;
    }
    for (int i = 0; i < nranks; i++)
        k->members[i].rank = k->members[i].global_gpu = -1;
    c->members_total += (uint64_t)nranks;
    *slot = ++c->comms.n;
    return k;
}

static int note_comm(struct collator *c, const struct maya_rec_comm *r, int rank, const char *path)
{
    if (r->nranks < 1 || r->rank < 0 || r->rank >= r->nranks)
        return maya_error("%s: communicator 0x%llx: member %d of %d is impossible", path,
                          (unsigned long long)r->comm, r->rank, r->nranks);
    struct comm *k = comm_get(c, r->comm, r->nranks, path);
    if (!k)
        return -1;
    if (k->nranks != r->nranks)
        return maya_error("communicator 0x%llx: rank %d joined it with %d members, rank %d with %d",
                          (unsigned long long)r->comm, rank, r->nranks,
                          k->members[0].rank >= 0 ? k->members[0].rank : -1, k->nranks);
    struct member *m = &k->members[r->rank];
    if (m->rank >= 0 && (m->rank != rank || m->global_gpu != r->global_gpu))
        return maya_error("communicator 0x%llx: comm rank %d is claimed by rank %d (GPU %d) and rank %d (GPU %d)",
                          (unsigned long long)r->comm, r->rank, m->rank, m->global_gpu, rank, r->global_gpu);
    m->rank = rank;
    m->global_gpu = r->global_gpu;
    k->parent = r->parent;
    return 0;
}

/* ---- collectives ---- */

/* The pending match for (k1, k2) in m: the one there, or a new zeroed one
 * (*created). NULL when out of memory. */
static struct match *match_get(struct collator *c, struct maya_map *m, uint64_t k1, uint64_t k2, int *created)
{
    uint64_t *slot = maya_map_put(m, k1, k2, created);
    if (!slot)
        return NULL;
    if (*created) {
        size_t i;
        if (c->nfree) {
            i = c->free_slots[--c->nfree];
        } else {
            if (grow_array((void **)&c->pool, &c->pool_cap, c->npool + 1, sizeof *c->pool) < 0)
                return NULL;
            i = c->npool++;
        }
        memset(&c->pool[i], 0, sizeof c->pool[i]);
        *slot = i + 1;
    }
    return &c->pool[*slot - 1];
}

/* A match is complete: forget it. 0 or -1. */
static int match_done(struct collator *c, struct maya_map *m, uint64_t k1, uint64_t k2, const struct match *e)
{
    maya_map_del(m, k1, k2);
    if (grow_array((void **)&c->free_slots, &c->free_cap, c->nfree + 1, sizeof *c->free_slots) < 0)
        return -1;
    c->free_slots[c->nfree++] = (size_t)(e - c->pool);
    return 0;
}

static int note_collective(struct collator *c, const struct maya_rec_coll *r, int rank, const char *path)
{
    struct comm *k = comm_get(c, r->comm, r->nranks, path);
    if (!k)
        return -1;
    const char *opn = maya_coll_op_name(r->op);
    if (r->rank < 0 || r->rank >= k->nranks || r->nranks != k->nranks)
        return maya_error("%s #%llu on communicator 0x%llx: rank %d calls it as member %d of %d, "
                          "but the communicator has %d members", opn, (unsigned long long)r->seq,
                          (unsigned long long)r->comm, rank, r->rank, r->nranks, k->nranks);
    struct member *m = &k->members[r->rank];
    if (m->rank < 0)
        m->rank = rank;
    m->ncoll++;
    k->ncoll = MAYA_MAX(k->ncoll, r->seq + 1);
    int root = r->op == MAYA_COLL_BROADCAST || r->op == MAYA_COLL_REDUCE || r->op == MAYA_COLL_GATHER ||
               r->op == MAYA_COLL_SCATTER ? r->peer : -1;
    int created;
    struct match *e = match_get(c, &c->colls, r->comm, r->seq, &created);
    if (!e)
        return maya_error("out of memory collating");
    if (created) {
        e->op = r->op;
        e->count = r->count;
        e->dtype = r->dtype;
        e->redop = r->redop;
        e->root = root;
        e->nranks = r->nranks;
        e->first_rank = rank;
        e->first_crank = r->rank;
    }
    if (e->op != r->op || e->count != r->count || e->dtype != r->dtype || e->root != root ||
        e->redop != r->redop)
        return maya_error("collective #%llu on communicator 0x%llx does not match: rank %d (comm rank %d) "
                          "calls %s of %llu %s (root %d, redop %d), rank %d (comm rank %d) calls %s of %llu %s "
                          "(root %d, redop %d); on GPUs this job would hang or compute garbage",
                          (unsigned long long)r->seq, (unsigned long long)r->comm, e->first_rank,
                          e->first_crank, maya_coll_op_name(e->op), (unsigned long long)e->count,
                          dtype_name(e->dtype), e->root, e->redop, rank, r->rank, opn,
                          (unsigned long long)r->count, dtype_name(r->dtype), root, r->redop);
    if (++e->arrived == e->nranks) {
        c->collectives++;
        return match_done(c, &c->colls, r->comm, r->seq, e);
    }
    return 0;
}

static int note_p2p(struct collator *c, const struct maya_rec_coll *r, int rank, const char *path)
{
    struct comm *k = comm_get(c, r->comm, r->nranks, path);
    if (!k)
        return -1;
    int send = r->op == MAYA_COLL_SEND;
    if (r->rank < 0 || r->rank >= k->nranks || r->peer < 0 || r->peer >= k->nranks)
        return maya_error("%s #%llu on communicator 0x%llx (%d members): rank %d is member %d, peer %d",
                          send ? "send" : "recv", (unsigned long long)r->seq, (unsigned long long)r->comm,
                          k->nranks, rank, r->rank, r->peer);
    uint64_t from = (uint64_t)(send ? r->rank : r->peer), to = (uint64_t)(send ? r->peer : r->rank);
    /* key: communicator, and (sender, receiver, seq) packed: 20 + 20 + 24 bits */
    if (from >= (1u << 20) || to >= (1u << 20) || r->seq >= (1ull << 24))
        return maya_error("send/recv #%llu between comm ranks %llu and %llu is beyond what maya tracks",
                          (unsigned long long)r->seq, (unsigned long long)from, (unsigned long long)to);
    uint64_t key = from << 44 | to << 24 | r->seq;
    int created;
    struct match *e = match_get(c, &c->p2ps, r->comm, key, &created);
    if (!e)
        return maya_error("out of memory collating");
    if (created) {
        e->count = r->count;
        e->dtype = r->dtype;
        e->send_rank = e->recv_rank = -1;
    }
    if (send ? e->have_send : e->have_recv)
        return maya_error("%s #%llu from comm rank %llu to %llu on communicator 0x%llx appears twice (rank %d)",
                          send ? "send" : "recv", (unsigned long long)r->seq, (unsigned long long)from,
                          (unsigned long long)to, (unsigned long long)r->comm, rank);
    if (send) {
        e->have_send = 1;
        e->send_rank = rank;
    } else {
        e->have_recv = 1;
        e->recv_rank = rank;
    }
    if (e->count != r->count || e->dtype != r->dtype) {
        int other = send ? e->recv_rank : e->send_rank;
        return maya_error("send #%llu from comm rank %llu to %llu on communicator 0x%llx does not match: "
                          "rank %d %s %llu %s, rank %d %s %llu %s", (unsigned long long)r->seq,
                          (unsigned long long)from, (unsigned long long)to, (unsigned long long)r->comm,
                          other, send ? "receives" : "sends", (unsigned long long)e->count,
                          dtype_name(e->dtype), rank, send ? "sends" : "receives",
                          (unsigned long long)r->count, dtype_name(r->dtype));
    }
    if (e->have_send && e->have_recv) {
        c->pairs++;
        return match_done(c, &c->p2ps, r->comm, key, e);
    }
    return 0;
}

/* After every rank: what is left unmatched is a job that would hang. */
static int check_leftovers(struct collator *c)
{
    /* the lowest-numbered incomplete collective, to name what hangs first */
    const struct maya_map_slot *worst = NULL;
    for (size_t i = 0; i < c->colls.cap; i++) {
        const struct maya_map_slot *s = &c->colls.slots[i];
        if (s->used && (!worst || s->k2 < worst->k2 || (s->k2 == worst->k2 && s->k1 < worst->k1)))
            worst = s;
    }
    if (worst) {
        const struct match *e = &c->pool[worst->value - 1];
        uint64_t *ki = maya_map_get(&c->comms.index, worst->k1, 0);
        const struct comm *k = &c->comms.v[*ki - 1];
        char missing[512] = "";
        int nmissing = 0;
        uint64_t most = 0;
        for (int i = 0; i < k->nranks; i++) {
            most = MAYA_MAX(most, k->members[i].ncoll);
            if (k->members[i].ncoll > worst->k2)
                continue;
            if (nmissing++ < 8) {
                char one[96];
                if (k->members[i].rank >= 0)
                    snprintf(one, sizeof one, "%srank %d (comm rank %d, %llu collectives)", nmissing > 1 ? ", " : "",
                             k->members[i].rank, i, (unsigned long long)k->members[i].ncoll);
                else
                    snprintf(one, sizeof one, "%scomm rank %d (no trace joined it)", nmissing > 1 ? ", " : "", i);
                snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s", one);
            }
        }
        return maya_error("%s #%llu on communicator 0x%llx (%d members, %llu %s) is called by %d of them; "
                          "missing: %s%s; others issue up to %llu collectives there. On GPUs this job would hang",
                          maya_coll_op_name(e->op), (unsigned long long)worst->k2, (unsigned long long)worst->k1,
                          e->nranks, (unsigned long long)e->count, dtype_name(e->dtype), e->arrived, missing,
                          nmissing > 8 ? ", ..." : "", (unsigned long long)most);
    }
    for (size_t i = 0; i < c->p2ps.cap; i++) {
        const struct maya_map_slot *s = &c->p2ps.slots[i];
        if (!s->used)
            continue;
        const struct match *e = &c->pool[s->value - 1];
        unsigned long long from = s->k2 >> 44, to = (s->k2 >> 24) & 0xfffff, seq = s->k2 & 0xffffff;
        if (e->have_send)
            return maya_error("rank %d (comm rank %llu) sends #%llu (%llu %s) to comm rank %llu on communicator "
                              "0x%llx, which never receives it. On GPUs this job would hang", e->send_rank, from,
                              seq, (unsigned long long)e->count, dtype_name(e->dtype), to,
                              (unsigned long long)s->k1);
        return maya_error("rank %d (comm rank %llu) waits to receive #%llu (%llu %s) from comm rank %llu on "
                          "communicator 0x%llx, which never sends it. On GPUs this job would hang", e->recv_rank,
                          to, seq, (unsigned long long)e->count, dtype_name(e->dtype), from,
                          (unsigned long long)s->k1);
    }
    return 0;
}

/* ---- finding the traces ---- */

static int by_rank(const void *a, const void *b)
{
    const struct rank_file *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int find_traces(const char *dir, int allow_incomplete, struct rank_file **out, int *n)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return maya_error("cannot read the trace directory %s: %m", dir);
    struct rank_file *v = NULL;
    size_t cap = 0;
    int count = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(dp)) && rc == 0) {
        const char *name = e->d_name;
        size_t len = strlen(name);
        int tmp = len > 11 && !strcmp(name + len - 11, ".mtrace.tmp");
        int whole = len > 7 && !strcmp(name + len - 7, ".mtrace");
        if (!whole && !(tmp && allow_incomplete))
            continue;
        int rank = -1;
        if (sscanf(name, "rank-%d.mtrace", &rank) != 1)
            rank = -1;
        if (tmp) {
            /* a whole trace of the same name wins over its unfinished copy */
            char final[PATH_MAX];
            snprintf(final, sizeof final, "%s/%.*s", dir, (int)(len - 4), name);
            if (access(final, F_OK) == 0)
                continue;
        }
        if (grow_array((void **)&v, &cap, (size_t)count + 1, sizeof *v) < 0) {
            rc = -1;
            break;
        }
        struct rank_file *f = &v[count++];
        snprintf(f->path, sizeof f->path, "%s/%s", dir, name);
        f->rank = rank;
        f->incomplete = tmp;
    }
    closedir(dp);
    if (rc < 0) {
        free(v);
        return -1;
    }
    *out = v;
    *n = count;
    return 0;
}

/* ---- the pass over one rank ---- */

struct rank_info {
    struct maya_trace_header hdr;
    int complete;
    int rebuilt;
    uint64_t records;
};

/* Taking one record into a rank's section: its communicators and
 * collectives are noted for the checks, then it is written. */
struct take {
    struct collator *c;
    struct col_writer *w;
    int rank;
    const char *path;
    uint64_t n, unsupported;
};

/* A rank's NCCL operation, for the checks. */
static int check_coll(struct take *t, const struct maya_rec_coll *k)
{
    if (k->h.flags & (MAYA_F_UNSUPPORTED | MAYA_F_CAPTURING) || k->call.result != 0)
        return 0;
    int p2p = k->op == MAYA_COLL_SEND || k->op == MAYA_COLL_RECV;
    return p2p ? note_p2p(t->c, k, t->rank, t->path) : note_collective(t->c, k, t->rank, t->path);
}

static int check_cb(void *ctx, const struct maya_rec_coll *k)
{
    return check_coll(ctx, k);
}

static int take_record(struct take *t, const struct maya_rec_hdr *rec)
{
    struct collator *c = t->c;
    if (rec->type == MAYA_REC_COMM && note_comm(c, (const void *)rec, t->rank, t->path) < 0)
        return -1;
    if (rec->type == MAYA_REC_COLL && check_coll(t, (const struct maya_rec_coll *)rec) < 0)
        return -1;
    if (rec->flags & MAYA_F_UNSUPPORTED)
        t->unsupported++;
    if (rec->type == MAYA_REC_RANK_REBUILT) {
        struct maya_rec_rank_rebuilt b;
        memcpy(&b, rec, sizeof b);
        b.own_records = t->n;
        c->rebuilt++;
        if (col_writer_emit(t->w, &b) < 0)
            return -1;
    } else if (col_writer_emit(t->w, rec) < 0) {
        return -1;
    }
    t->n++;
    return 0;
}

static int take_cb(void *ctx, const struct maya_rec_hdr *rec)
{
    return take_record(ctx, rec);
}

static const struct rank_file *find_rank(const struct rank_file *files, int n, int rank)
{
    for (int i = 0; i < n; i++)
        if (files[i].rank == rank)
            return &files[i];
    return NULL;
}

/* Does the launcher's note rank-N.eliminated lie next to the trace? */
static int elimination_note(const struct rank_file *f)
{
    size_t len = strlen(f->path);
    char note[PATH_MAX + 16];
    if (f->incomplete || len < 7 || strcmp(f->path + len - 7, ".mtrace"))
        return 0;
    snprintf(note, sizeof note, "%.*s.eliminated", (int)(len - 7), f->path);
    return access(note, F_OK) == 0;
}

/* The whole shape of a rank's trace (its communicators and their members),
 * read once and kept: replicas take theirs from it. */
static const struct col_shape *shape_of(struct collator *c, const struct rank_file *f)
{
    for (size_t i = 0; i < c->nshapes; i++)
        if (c->shapes[i].rank == f->rank)
            return c->shapes[i].shape;
    if (grow_array((void **)&c->shapes, &c->shapes_cap, c->nshapes + 1, sizeof *c->shapes) < 0)
        return NULL;
    struct maya_trace_reader *r;
    if (maya_trace_open(f->path, &r) < 0)
        return NULL;
    maya_trace_allow_truncated(r, 1);
    struct col_shape *s = col_shape_new();
    const struct maya_rec_hdr *rec;
    int rc = s ? 0 : maya_error("out of memory collating");
    while (rc == 0 && (rc = maya_trace_next(r, &rec)) > 0)
        rc = col_shape_note(s, rec);
    maya_trace_close(r);
    if (rc < 0) {
        col_shape_free(s);
        return NULL;
    }
    c->shapes[c->nshapes].rank = f->rank;
    c->shapes[c->nshapes++].shape = s;
    return s;
}

/* The rest of a rebuilt rank's section, from the trace of the rank that ran
 * for it (sf): a reference to that rank's section, which comes earlier in
 * the job trace (the simulator reads it there), or, for a source after the
 * rank or with MAYA_REBUILT_COPY=1, a full copy. */
static int rebuild_from(struct collator *c, const struct col_shape *own, int rank, const struct rank_file *sf,
                        struct take *t, struct maya_rec_rank_end *e)
{
    if (c->copy_rebuilt || sf->rank >= rank)
        return col_rebuild(own, rank, sf->path, sf->rank, take_cb, t, e, 64);
    struct col_ref_source *rs = NULL;
    for (size_t i = 0; i < c->nsources && !rs; i++)
        if (col_ref_source_rank(c->sources[i]) == sf->rank)
            rs = c->sources[i];
    if (!rs) {
        if (grow_array((void **)&c->sources, &c->sources_cap, c->nsources + 1, sizeof *c->sources) < 0 ||
            col_ref_source_load(sf->path, sf->rank, &rs) < 0)
            return -1;
        c->sources[c->nsources++] = rs;
    }
    /* a reference names a section that holds its work, never another reference */
    if (col_ref_source_stopped(rs))
        return col_rebuild(own, rank, sf->path, sf->rank, take_cb, t, e, 64);
    return col_rebuild_ref(own, rank, rs, take_cb, check_cb, t, e, 64);
}

/* A declared replica (maya run --replicas) that ran only up to its first
 * NCCL call: its communicators follow from its proxy's (its folded digits
 * above 1 made 1: a rank that ran and that shares its communicators where
 * the layout says), its work from its representative's (its folded digits
 * 0, or the next of rank 0's when that is rank 0), or from the rank that
 * was itself rebuilt from. */
static int rebuild_replica(struct collator *c, const struct rank_file *f, const struct rank_file *files, int nfiles,
                           struct col_shape *shape, int rank, const struct maya_trace_header *h, struct take *t,
                           struct maya_rec_rank_end *e)
{
    int world = h->world_size;
    char note[PATH_MAX + 16], line[512], spec[256] = "", err[256];
    size_t len = strlen(f->path);
    snprintf(note, sizeof note, "%.*s.eliminated", (int)(len - 7), f->path);
    FILE *fp = fopen(note, "r");
    while (fp && fgets(line, sizeof line, fp))
        if (!strncmp(line, "replicas=", 9))
            snprintf(spec, sizeof spec, "%.*s", (int)strcspn(line + 9, "\n"), line + 9);
    if (fp)
        fclose(fp);
    struct maya_replicas layout;
    if (maya_replicas_parse(spec, world, &layout, err, sizeof err) < 0)
        return maya_error("%s: the replicas layout: %s", note, err);
    int64_t proxy = rank, source = maya_replicas_representative(&layout, rank, world);
    for (int k = 0; k < layout.ndims; k++)
        if (maya_replicas_digit(&layout, k, rank) > 1)
            proxy = maya_replicas_with(&layout, k, proxy, 1);
    const struct rank_file *pf = find_rank(files, nfiles, (int)proxy), *sf = find_rank(files, nfiles, (int)source);
    if (!pf || !sf)
        return maya_error("rank %d, a replica, cannot be rebuilt: rank %lld left no trace", rank,
                          (long long)(pf ? source : proxy));
    const struct col_shape *ps = shape_of(c, pf), *ss = ps ? shape_of(c, sf) : NULL;
    if (!ps || !ss)
        return -1;
    /* the work: the source's, or the one it was itself rebuilt from */
    const struct maya_rec_eliminated *sel = col_shape_eliminated(ss);
    if (sel && sel->how == MAYA_ELIM_MATCHED)
        sf = find_rank(files, nfiles, sel->source);
    if (!sf || (sel && sel->how == MAYA_ELIM_DECLARED))
        return maya_error("rank %d, a replica, cannot be rebuilt: its source rank %lld did not run", rank,
                          (long long)source);
    int32_t device = h->local_rank >= 0 ? h->local_rank : 0;
    int32_t gpu = h->node * MAYA_MAX(h->gpus_per_node, 1) + device;
    if (col_shape_replica_comms(shape, rank, ps, (int)proxy, &layout, device, gpu) < 0)
        return -1;
    return rebuild_from(c, shape, rank, sf, t, e);
}

static int copy_rank(struct collator *c, const struct rank_file *f, const struct rank_file *files, int nfiles,
                     struct col_writer *w, struct rank_info *info)
{
    struct maya_trace_reader *r;
    if (maya_trace_open(f->path, &r) < 0)
        return -1;
    maya_trace_allow_truncated(r, f->incomplete);
    info->hdr = *maya_trace_header(r);
    const struct maya_trace_header *h = &info->hdr;
    /* the header's sizes bound the communicators (comm_bound): checked first */
    if (h->world_size > MAX_COMM_MEMBERS || h->gpus_per_node > 4096) {
        maya_trace_close(r);
        return maya_error("%s: offset 28: a job of %d ranks with %d GPUs per node: expected at most %d ranks "
                          "and 4096 GPUs per node", f->path, h->world_size, h->gpus_per_node, MAX_COMM_MEMBERS);
    }
    /* a node holds at least one rank: no node index reaches the rank count */
    int most_nodes = MAYA_MAX(MAYA_MAX(h->world_size, c->nfiles), 1);
    if (h->node < 0 || h->node >= most_nodes) {
        maya_trace_close(r);
        return maya_error("%s: offset 36: node %d: expected 0 to %d (the job has %d ranks)", f->path, h->node,
                          most_nodes - 1, most_nodes);
    }
    c->world = MAYA_MAX(c->world, h->world_size);
    if (!c->gpus_per_node)
        c->gpus_per_node = MAYA_MAX(h->gpus_per_node, 0);
    int rank = h->rank >= 0 ? h->rank : f->rank;
    if (f->rank >= 0 && h->rank != f->rank) {
        maya_trace_close(r);
        return maya_error("%s: the file is named for rank %d but its header says rank %d", f->path, f->rank,
                          h->rank);
    }
    info->hdr.rank = rank;
    struct maya_rec_rank_begin b;
    memset(&b, 0, sizeof b);
    b.h = (struct maya_rec_hdr){ MAYA_REC_RANK_BEGIN, 0, sizeof b };
    b.rank = rank;
    b.world_size = h->world_size;
    b.local_rank = h->local_rank;
    b.node = h->node;
    b.gpus_per_node = h->gpus_per_node;
    b.pid = h->pid;
    b.flags = h->flags;
    b.start_realtime_ns = h->start_realtime_ns;
    b.start_mono_ns = h->start_mono_ns;
    memcpy(b.gpu, h->gpu, sizeof b.gpu);
    /* complete is known only at the end: BEGIN says what END will confirm */
    b.complete = !f->incomplete;
    if (col_writer_emit(w, &b) < 0) {
        maya_trace_close(r);
        return -1;
    }
    const struct maya_rec_hdr *rec;
    int rc;
    /* a chunk of the rank's trace whose records all go to the job trace
     * unchanged (every chunk but the one holding END, of a rank that was not
     * eliminated) is copied as it is, not compressed again: the writer holds
     * just its records when it ends */
    uint64_t chunk = UINT64_MAX, in_chunk = 0;
    int verbatim = 0;
    unsigned char endbuf[sizeof(struct maya_rec_rank_end) + 64 * sizeof(struct maya_end_device)];
    memset(endbuf, 0, sizeof endbuf);
    struct maya_rec_rank_end *e = (void *)endbuf;
    e->h.type = MAYA_REC_RANK_END;
    e->h.bytes = sizeof *e;
    struct take t = { .c = c, .w = w, .rank = rank, .path = f->path };
    struct col_shape *shape = col_shape_new();
    if (!shape) {
        maya_trace_close(r);
        return maya_error("out of memory collating");
    }
    /* A rank that duplicate-rank elimination stopped (its launcher note,
     * rank-N.eliminated, says so): its section is its source's trace, made
     * its own (rebuild.c); its own records only tell what it had made. */
    int eliminated = elimination_note(f);
    while ((rc = maya_trace_next(r, &rec)) > 0) {
        if (maya_trace_offset(r) != chunk) {
            chunk = maya_trace_offset(r);
            in_chunk = 0;
            verbatim = 0;
            if (!eliminated) {
                if (col_writer_flush(w) < 0) {
                    rc = -1;
                    break;
                }
                verbatim = 1;
            }
        }
        in_chunk++;
        if ((rc = col_shape_note(shape, rec)) < 0)
            break;
        if (eliminated && rec->type != MAYA_REC_END)
            continue;
        if (rec->type == MAYA_REC_ELIMINATED) {
            rc = maya_error("%s: rank %d was stopped by duplicate-rank elimination, but the note next to its "
                            "trace (rank-%d.eliminated) is missing", f->path, rank, rank);
            break;
        }
        if (rec->type == MAYA_REC_END) {
            verbatim = 0;
            const struct maya_rec_end *end = (const void *)rec;
            uint32_t nd = MAYA_MIN(end->ndevices, 64);
            e->unsupported_calls = end->unsupported_calls;
            e->oom = end->oom;
            e->ndevices = nd;
            memcpy(e + 1, end + 1, nd * sizeof(struct maya_end_device));
            e->h.bytes = (uint32_t)(sizeof *e + nd * sizeof(struct maya_end_device));
            continue;
        }
        if (rec->type >= MAYA_REC_JOB && rec->type < 128) {
            rc = maya_error("%s: holds job records (type %u): is it a job trace?", f->path, rec->type);
            break;
        }
        if (rec->type == MAYA_REC_RANK_REBUILT)
            verbatim = 0; /* take_record rewrites it */
        if ((rc = take_record(&t, rec)) < 0)
            break;
        if (verbatim && maya_trace_chunk_done(r)) {
            struct maya_trace_chunk hdr;
            const void *z = maya_trace_chunk_bytes(r, &hdr);
            if ((rc = col_writer_swap_chunk(w, &hdr, z, in_chunk)) < 0)
                break;
        }
    }
    info->complete = maya_trace_complete(r);
    maya_trace_close(r);
    const struct maya_rec_eliminated *el = col_shape_eliminated(shape);
    if (rc == 0 && !info->complete)
        e->unsupported_calls = t.unsupported;
    if (rc == 0 && eliminated && !el)
        rc = maya_error("%s: rank-%d.eliminated says duplicate-rank elimination stopped rank %d, but its trace "
                        "has no ELIMINATED record", f->path, rank, rank);
    if (rc == 0 && el && el->how == MAYA_ELIM_DECLARED) {
        rc = rebuild_replica(c, f, files, nfiles, shape, rank, &info->hdr, &t, e);
        info->rebuilt = 1;
    } else if (rc == 0 && el) {
        /* eliminated: the rest of its run is its source's */
        const struct rank_file *src = find_rank(files, nfiles, el->source);
        if (!src || el->source == rank)
            rc = maya_error("%s: rank %d was eliminated as a duplicate of rank %d, which left no trace", f->path,
                            rank, el->source);
        else
            rc = rebuild_from(c, shape, rank, src, &t, e);
        info->rebuilt = 1;
    }
    col_shape_free(shape);
    if (rc < 0)
        return -1;
    e->records = t.n;
    info->records = t.n;
    return col_writer_emit(w, e);
}

/* ---- assembling the job trace ---- */

static int copy_file(FILE *from, FILE *to, const char *what)
{
    char buf[1 << 16];
    size_t got;
    rewind(from);
    while ((got = fread(buf, 1, sizeof buf, from)) > 0)
        if (fwrite(buf, 1, got, to) != got)
            return maya_error("cannot write %s: %m", what);
    if (ferror(from))
        return maya_error("cannot read back the sections of %s: %m", what);
    return 0;
}

static int emit_comm(struct collator *c, struct col_writer *w, const struct comm *k)
{
    size_t bytes = sizeof(struct maya_rec_job_comm) + (size_t)k->nranks * sizeof(struct maya_job_member);
    bytes = MAYA_REC_ALIGN(bytes);
    unsigned char *buf = calloc(1, bytes);
    if (!buf)
        return maya_error("out of memory");
    struct maya_rec_job_comm *r = (void *)buf;
    struct maya_job_member *m = (void *)(r + 1);
    r->h = (struct maya_rec_hdr){ MAYA_REC_JOB_COMM, 0, (uint32_t)bytes };
    r->comm = k->id;
    r->nranks = k->nranks;
    r->collectives = k->ncoll;
    int gpn = MAYA_MAX(c->gpus_per_node, 1);
    int nodes_seen[4096] = { 0 };
    int per_node[4096] = { 0 };
    for (int i = 0; i < k->nranks; i++) {
        m[i].rank = k->members[i].rank;
        m[i].global_gpu = k->members[i].global_gpu;
        int node = m[i].global_gpu >= 0 ? m[i].global_gpu / gpn : 0;
        if (node >= 4096)
            node = 4095;
        if (!nodes_seen[node]++)
            r->nodes++;
        per_node[node]++;
        r->max_per_node = MAYA_MAX(r->max_per_node, per_node[node]);
    }
    int rc = col_writer_emit(w, r);
    free(buf);
    return rc;
}

static void collator_free(struct collator *c)
{
    for (size_t i = 0; i < c->nshapes; i++)
        col_shape_free(c->shapes[i].shape);
    free(c->shapes);
    for (size_t i = 0; i < c->nsources; i++)
        col_ref_source_free(c->sources[i]);
    free(c->sources);
    for (size_t i = 0; i < c->comms.n; i++)
        free(c->comms.v[i].members);
    free(c->comms.v);
    maya_map_free(&c->comms.index);
    maya_map_free(&c->colls);
    maya_map_free(&c->p2ps);
    free(c->pool);
    free(c->free_slots);
}

int col_collate(const char *trace_dir, const char *job_path, int allow_incomplete, struct col_summary *out)
{
    struct collator c;
    memset(&c, 0, sizeof c);
    c.allow_incomplete = allow_incomplete;
    const char *copy = getenv("MAYA_REBUILT_COPY");
    c.copy_rebuilt = copy && !strcmp(copy, "1");
    memset(out, 0, sizeof *out);
    struct rank_file *files = NULL;
    int nfiles = 0;
    if (find_traces(trace_dir, allow_incomplete, &files, &nfiles) < 0)
        return -1;
    if (nfiles == 0) {
        free(files);
        return maya_error("%s holds no trace (rank-N.mtrace): did the workload use CUDA?", trace_dir);
    }
    /* A lone trace without a rank (pid-N.mtrace) is rank 0. */
    if (nfiles == 1 && files[0].rank < 0)
        files[0].rank = 0;
    for (int i = 0; i < nfiles; i++)
        if (files[i].rank < 0) {
            int rc = maya_error("%s: a trace without a rank among %d traces; give each process RANK "
                                "(maya run does)", files[i].path, nfiles);
            free(files);
            return rc;
        }
    qsort(files, (size_t)nfiles, sizeof *files, by_rank);
    c.nfiles = nfiles;
    for (int i = 1; i < nfiles; i++)
        if (files[i].rank == files[i - 1].rank) {
            int rc = maya_error("two traces for rank %d: %s and %s", files[i].rank, files[i - 1].path,
                                files[i].path);
            free(files);
            return rc;
        }

    char sections_prefix[PATH_MAX + 16], sections_path[PATH_MAX + 64];
    snprintf(sections_prefix, sizeof sections_prefix, "%s.sections", job_path);
    int sfd = maya_open_unique(sections_prefix, sections_path, sizeof sections_path, O_RDWR, 0600);
    FILE *sf = sfd >= 0 ? fdopen(sfd, "w+b") : NULL;
    if (!sf) {
        if (sfd >= 0) {
            maya_error("cannot open %s: %m", sections_path);
            close(sfd);
            unlink(sections_path);
        }
        free(files);
        return -1;
    }
    unlink(sections_path); /* anonymous from now on: nothing to clean up */
    struct col_writer *sw = NULL;
    int rc = col_writer_open(sf, job_path, &sw);
    struct maya_trace_header first;
    int world = 0, max_node = 0;
    uint64_t records = 0;
    for (int i = 0; rc == 0 && i < nfiles; i++) {
        struct rank_info info;
        maya_progress("collating the traces", (uint64_t)i, (uint64_t)nfiles);
        if ((rc = maya_check_stop("collating")) < 0)
            break;
        memset(&info, 0, sizeof info);
        rc = copy_rank(&c, &files[i], files, nfiles, sw, &info);
        if (rc < 0)
            break;
        const struct maya_trace_header *h = &info.hdr;
        if (i == 0) {
            first = *h;
            c.gpus_per_node = h->gpus_per_node;
        } else if (strcmp(h->gpu, first.gpu) || h->gpus_per_node != first.gpus_per_node) {
            rc = maya_error("rank %d emulated %d x %s per node, rank %d %d x %s: one job runs on one kind of node",
                            first.rank, first.gpus_per_node, first.gpu, h->rank, h->gpus_per_node, h->gpu);
            break;
        }
        world = MAYA_MAX(world, h->world_size);
        max_node = MAYA_MAX(max_node, h->node);
        out->incomplete += !info.complete;
        records += info.records + 2;
    }
    if (rc == 0)
        rc = col_writer_flush(sw);
    if (rc == 0 && !allow_incomplete) {
        int expect = MAYA_MAX(world, 1);
        for (int r = 0, i = 0; r < expect && rc == 0; r++) {
            while (i < nfiles && files[i].rank < r)
                i++;
            if (i >= nfiles || files[i].rank != r)
                rc = maya_error("rank %d left no trace in %s (WORLD_SIZE=%d): it never started CUDA, "
                                "or it crashed (see its log)", r, trace_dir, world);
        }
        if (rc == 0)
            rc = check_leftovers(&c);
    }
    struct maya_atomic_file af;
    if (rc == 0)
        rc = maya_atomic_open(&af, job_path);
    if (rc == 0) {
        struct maya_trace_header jh;
        col_header_init(&jh, MAYA_TRACE_JOB);
        jh.world_size = world > 0 ? world : nfiles;
        jh.node = -1;
        jh.gpus_per_node = first.gpus_per_node;
        jh.flags = first.flags;
        jh.start_realtime_ns = first.start_realtime_ns;
        memcpy(jh.gpu, first.gpu, sizeof jh.gpu);
        struct col_writer *jw = NULL;
        if (fwrite(&jh, sizeof jh, 1, af.fp) != 1)
            rc = maya_error("cannot write %s: %m", job_path);
        if (rc == 0)
            rc = col_writer_open(af.fp, job_path, &jw);
        struct maya_rec_job job;
        memset(&job, 0, sizeof job);
        job.h = (struct maya_rec_hdr){ MAYA_REC_JOB, 0, sizeof job };
        job.world_size = jh.world_size;
        job.nranks = nfiles;
        job.nodes = max_node + 1;
        job.gpus_per_node = first.gpus_per_node;
        job.ncomms = (uint32_t)c.comms.n;
        job.flags = (out->incomplete ? MAYA_JOB_F_INCOMPLETE : 0) | (c.rebuilt ? MAYA_JOB_F_REBUILT : 0);
        job.collectives = c.collectives;
        job.p2p_pairs = c.pairs;
        memcpy(job.gpu, first.gpu, sizeof job.gpu);
        if (rc == 0)
            rc = col_writer_emit(jw, &job);
        for (size_t i = 0; rc == 0 && i < c.comms.n; i++)
            rc = emit_comm(&c, jw, &c.comms.v[i]);
        if (rc == 0)
            rc = col_writer_flush(jw);
        if (rc == 0)
            rc = copy_file(sf, af.fp, job_path);
        if (rc == 0) {
            struct maya_rec_end end;
            memset(&end, 0, sizeof end);
            end.h = (struct maya_rec_hdr){ MAYA_REC_END, 0, sizeof end };
            end.records = col_writer_records(jw) + col_writer_records(sw);
            rc = col_writer_emit(jw, &end);
        }
        if (rc == 0)
            rc = col_writer_flush(jw);
        col_writer_free(jw);
        if (rc == 0)
            rc = maya_atomic_commit(&af);
        else
            maya_atomic_abort(&af);
    }
    col_writer_free(sw);
    fclose(sf);
    if (rc == 0) {
        out->nranks = nfiles;
        out->world_size = world > 0 ? world : nfiles;
        out->nodes = max_node + 1;
        out->records = records;
        out->collectives = c.collectives;
        out->p2p_pairs = c.pairs;
        out->ncomms = (uint32_t)c.comms.n;
        out->rebuilt = c.rebuilt;
    }
    collator_free(&c);
    free(files);
    return rc;
}

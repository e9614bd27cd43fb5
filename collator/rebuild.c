/* Rebuilding a rank that duplicate-rank elimination stopped from the trace
 * of the rank that ran on for it (its source; docs/dedup.md).
 *
 * A stopped rank's own trace holds what it did up to its stop_op-th NCCL
 * operation, and the hash of those operations (its ELIMINATED record); the
 * source's first stop_op operations must hash the same (checked here). The
 * rank's section is then its source's whole trace, made the rank's own:
 *   - communicators: the source's i-th COMM record (in trace order) becomes
 *     the rank's own i-th; COLL records take the rank's communicator id and
 *     rank in it, send/recv peers keep their offset from the caller
 *     ((peer - rank) mod nranks); sequence numbers stay (the two issued the
 *     same operations on corresponding communicators);
 *   - devices: the rank's DEVICE records, and the source's device ordinal
 *     (that of its first communicator) exchanged for the rank's;
 *   - host times, strings, kernels, streams, events: the source's.
 * Taking the source from the start, not only after the stop, keeps every
 * iteration of the rebuilt rank alike: a rank 0 that alone reads the loss
 * each step would otherwise make the rank's first iterations differ from
 * its later ones, and the iterations would be found at other places on it
 * than on the others. A communicator the source made after the rank
 * stopped cannot be the rank's and is refused. One pass over the source's
 * trace; memory: the rank's COMM and DEVICE records, a few words per
 * communicator.
 */
#define _GNU_SOURCE
#include "rebuild.h"

#include <stdlib.h>
#include <string.h>

#include "maya/collator.h"
#include "maya/common.h"
#include "maya/map.h"
#include "maya/replicas.h"
#include "maya/trace_reader.h"

#define MAX_DEVICES 64

struct shape_comm {
    uint64_t id;
    int32_t rank, nranks;
    uint64_t coll_next;         /* collectives issued on it (highest seq + 1) */
};

struct col_shape {
    struct maya_rec_comm *comm_recs; /* [ncomms] as they came */
    int32_t **members;          /* [ncomms] global ranks by comm rank (COMM_MEMBERS), or NULL */
    struct maya_rec_device devices_recs[MAX_DEVICES];
    struct shape_comm *comms;
    size_t ncomms, cap;
    struct maya_map comm_index; /* id -> index + 1 */
    struct maya_map p2p;        /* (comm index, dir << 32 | peer offset) -> messages */
    struct maya_map streams;    /* stream ids defined */
    uint64_t ncoll, hash;
    uint64_t max_group, max_exit, next_seq, unsupported;
    int32_t devices[MAX_DEVICES];
    int ndevices;
    int have_elim, have_end;
    struct maya_rec_eliminated elim;
    unsigned char end[sizeof(struct maya_rec_end) + MAX_DEVICES * sizeof(struct maya_end_device)];
};

struct col_shape *col_shape_new(void)
{
    return calloc(1, sizeof(struct col_shape));
}

void col_shape_free(struct col_shape *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->members && i < s->ncomms; i++)
        free(s->members[i]);
    free(s->members);
    free(s->comms);
    free(s->comm_recs);
    maya_map_free(&s->comm_index);
    maya_map_free(&s->p2p);
    maya_map_free(&s->streams);
    free(s);
}

void col_shape_ops(const struct col_shape *s, uint64_t *ops, uint64_t *hash)
{
    *ops = s->ncoll;
    *hash = s->hash;
}

const struct maya_rec_eliminated *col_shape_eliminated(const struct col_shape *s)
{
    return s->have_elim ? &s->elim : NULL;
}

static int is_p2p(uint32_t op)
{
    return op == MAYA_COLL_SEND || op == MAYA_COLL_RECV;
}

static uint32_t peer_offset(int32_t peer, int32_t rank, int32_t n)
{
    return n > 0 ? (uint32_t)((((int64_t)peer - rank) % n + n) % n) : 0;
}

int col_shape_note(struct col_shape *s, const struct maya_rec_hdr *rec)
{
    switch (rec->type) {
    case MAYA_REC_COMM: {
        const struct maya_rec_comm *c = (const void *)rec;
        int created;
        uint64_t *v = maya_map_put(&s->comm_index, c->comm, 0, &created);
        if (!v)
            return maya_error("out of memory collating");
        if (!created)
            return 0;
        if (s->ncomms == s->cap) {
            size_t n = s->cap ? s->cap * 2 : 8;
            struct shape_comm *p = realloc(s->comms, n * sizeof *p);
            struct maya_rec_comm *q = realloc(s->comm_recs, n * sizeof *q);
            int32_t **mm = realloc(s->members, n * sizeof *mm);
            if (p)
                s->comms = p;
            if (q)
                s->comm_recs = q;
            if (mm)
                s->members = mm;
            if (!p || !q || !mm)
                return maya_error("out of memory collating");
            s->cap = n;
        }
        s->comms[s->ncomms] = (struct shape_comm){ c->comm, c->rank, c->nranks, 0 };
        memcpy(&s->comm_recs[s->ncomms], c, sizeof *c);
        s->members[s->ncomms] = NULL;
        *v = ++s->ncomms;
        return 0;
    }
    case MAYA_REC_COLL: {
        const struct maya_rec_coll *k = (const void *)rec;
        uint64_t *v = maya_map_get(&s->comm_index, k->comm, 0);
        uint32_t idx = v ? (uint32_t)(*v - 1) : UINT32_MAX;
        s->hash = maya_coll_hash_next(s->hash, maya_coll_signature(k->op, k->count, k->dtype, k->redop, k->rank,
                                                                   k->nranks, k->peer, idx));
        s->ncoll++;
        s->max_group = MAYA_MAX(s->max_group, k->group);
        if (v && is_p2p(k->op)) {
            uint64_t key = (uint64_t)(k->op == MAYA_COLL_SEND) << 32 | peer_offset(k->peer, k->rank, k->nranks);
            uint64_t *m = maya_map_put(&s->p2p, idx, key, NULL);
            if (!m)
                return maya_error("out of memory collating");
            *m = MAYA_MAX(*m, k->seq + 1);
        } else if (v) {
            s->comms[idx].coll_next = MAYA_MAX(s->comms[idx].coll_next, k->seq + 1);
        }
        break;
    }
    case MAYA_REC_COMM_MEMBERS: {
        const struct maya_rec_comm_members *m = (const void *)rec;
        uint64_t *v = maya_map_get(&s->comm_index, m->comm, 0);
        if (!v || s->members[*v - 1] || m->nranks != s->comms[*v - 1].nranks ||
            rec->bytes < sizeof *m + (uint64_t)m->nranks * sizeof(int32_t))
            return 0; /* one list per communicator, as long as its COMM record says */
        int32_t *g = malloc((size_t)m->nranks * sizeof *g);
        if (!g)
            return maya_error("out of memory collating");
        memcpy(g, m + 1, (size_t)m->nranks * sizeof *g);
        s->members[*v - 1] = g;
        return 0;
    }
    case MAYA_REC_DEVICE:
        if (s->ndevices < MAX_DEVICES) {
            memcpy(&s->devices_recs[s->ndevices], rec, sizeof s->devices_recs[0]);
            s->devices[s->ndevices++] = ((const struct maya_rec_device *)rec)->ordinal;
        }
        return 0;
    case MAYA_REC_STREAM:
        if (!maya_map_put(&s->streams, ((const struct maya_rec_stream *)rec)->stream, 0, NULL))
            return maya_error("out of memory collating");
        return 0;
    case MAYA_REC_ELIMINATED:
        s->have_elim = 1;
        memcpy(&s->elim, rec, sizeof s->elim);
        return 0;
    case MAYA_REC_END:
        s->have_end = 1;
        memcpy(s->end, rec, MAYA_MIN(rec->bytes, (uint32_t)sizeof s->end));
        return 0;
    default:
        break;
    }
    if (maya_rec_is_call(rec->type)) {
        const struct maya_call *c = (const void *)(rec + 1);
        s->max_exit = MAYA_MAX(s->max_exit, c->t_exit_ns);
        s->next_seq = MAYA_MAX(s->next_seq, c->seq + 1);
        s->unsupported += (rec->flags & MAYA_F_UNSUPPORTED) != 0;
    }
    return 0;
}

/* ---- the communicators of a replica that never ran ---- */

static int64_t index_of(const int32_t *m, int n, int64_t rank)
{
    for (int i = 0; i < n; i++)
        if (m[i] == rank)
            return i;
    return -1;
}

int col_shape_replica_comms(struct col_shape *ghost, int rank, const struct col_shape *proxy, int proxy_rank,
                            const struct maya_replicas *layout, int32_t device, int32_t global_gpu)
{
    for (size_t i = 0; i < proxy->ncomms; i++) {
        const int32_t *m = proxy->members ? proxy->members[i] : NULL;
        int n = proxy->comms[i].nranks;
        if (!m)
            return maya_error("rank %d (a replica) cannot be rebuilt: rank %d's communicator 0x%llx has no member "
                              "list (COMM_MEMBERS)", rank, proxy_rank, (unsigned long long)proxy->comms[i].id);
        struct maya_rec_comm c = proxy->comm_recs[i];
        c.device = device;
        c.global_gpu = global_gpu;
        c.color = c.key = -1;
        int64_t at = index_of(m, n, rank);
        if (at < 0) {
            /* Not a member: its own communicator of that kind is this one
             * moved along the dimensions it does not span (its members all
             * have the proxy's digit there) to the replica's digits. */
            int64_t shift = 0;
            for (int k = 0; k < layout->ndims; k++) {
                int64_t dq = maya_replicas_digit(layout, k, proxy_rank), dx = maya_replicas_digit(layout, k, rank);
                int spans = dq != dx && index_of(m, n, maya_replicas_with(layout, k, proxy_rank, dx)) >= 0;
                if (dq != dx && !spans)
                    shift += (dx - dq) * layout->stride[k];
            }
            uint64_t h = 0x6a09e667f3bcc909ull ^ (uint64_t)i;
            for (int j = 0; j < n; j++) {
                h ^= (uint64_t)(m[j] + shift) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
                h *= 0xbf58476d1ce4e5b9ull;
                h ^= h >> 31;
            }
            c.comm = h | 1;
            c.parent = 0;
            at = index_of(m, n, rank - shift); /* its place: that of its image in the proxy's */
            if (at < 0)
                return maya_error("rank %d (a replica) cannot be rebuilt from rank %d: its communicator of kind "
                                  "#%zu does not follow from rank %d's by the --replicas layout", rank, proxy_rank,
                                  i + 1, proxy_rank);
        }
        c.rank = (int32_t)at;
        if (col_shape_note(ghost, &c.h) < 0)
            return -1;
    }
    return 0;
}

/* ---- the rebuild ---- */

struct joint {
    const struct col_shape *own, *src;
    int rank, source;
    int32_t dev_src, dev_own;   /* the device ordinals exchanged (-1: none) */
};

int32_t col_exchange_device(int32_t d, int32_t dev_src, int32_t dev_own)
{
    if (d < 0 || dev_src < 0 || dev_own < 0)
        return d;
    return d == dev_src ? dev_own : d == dev_own ? dev_src : d;
}

static int32_t map_device(const struct joint *j, int32_t d)
{
    return col_exchange_device(d, j->dev_src, j->dev_own);
}

static int map_coll(const struct joint *j, struct maya_rec_coll *k)
{
    const struct col_shape *src = j->src, *own = j->own;
    uint64_t *v = maya_map_get(&src->comm_index, k->comm, 0);
    if (!v)
        return maya_error("rank %d: %s on communicator 0x%llx, for which its trace has no COMM record",
                          j->source, maya_coll_op_name(k->op), (unsigned long long)k->comm);
    size_t i = *v - 1;
    const struct shape_comm *sc = &src->comms[i], *oc = &own->comms[i];
    if (k->nranks != sc->nranks)
        return maya_error("rank %d: %s on communicator 0x%llx of %d members as one of %d", j->source,
                          maya_coll_op_name(k->op), (unsigned long long)k->comm, sc->nranks, k->nranks);
    int32_t n = sc->nranks;
    k->comm = oc->id;
    if (is_p2p(k->op))
        k->peer = (int32_t)(((int64_t)oc->rank + peer_offset(k->peer, k->rank, n)) % n);
    k->rank = oc->rank;
    return 0;
}

/* The source's record made the rank's own, in place. 0 keep, 1 drop, -1 error. */
static int map_record(const struct joint *j, struct maya_rec_hdr *rec, const struct maya_rec_hdr **instead)
{
    *instead = NULL;
    switch (rec->type) {
    case MAYA_REC_COMM: {
        const struct maya_rec_comm *c = (const void *)rec;
        uint64_t *v = maya_map_get(&j->src->comm_index, c->comm, 0);
        size_t i = v ? *v - 1 : SIZE_MAX;
        if (i >= j->own->ncomms)
            return maya_error("rank %d cannot be rebuilt from rank %d: rank %d made communicator 0x%llx (its #%zu) "
                              "after rank %d was eliminated, which had made %zu; run without duplicate-rank "
                              "elimination", j->rank, j->source, j->source, (unsigned long long)c->comm,
                              i == SIZE_MAX ? 0 : i + 1, j->rank, j->own->ncomms);
        const struct shape_comm *sc = &j->src->comms[i], *oc = &j->own->comms[i];
        if (sc->nranks != oc->nranks)
            return maya_error("rank %d cannot be rebuilt from rank %d: their communicator #%zu has %d members on "
                              "rank %d and %d on rank %d", j->rank, j->source, i + 1, oc->nranks, j->rank,
                              sc->nranks, j->source);
        *instead = &j->own->comm_recs[i].h;
        return 0;
    }
    case MAYA_REC_STREAM: {
        struct maya_rec_stream *s = (void *)rec;
        s->device = map_device(j, s->device);
        return 0;
    }
    case MAYA_REC_DEVICE:
    case MAYA_REC_ELIMINATED:
        return 1;
    default:
        break;
    }
    if (!maya_rec_is_call(rec->type))
        return 0;
    struct maya_call *c = (void *)(rec + 1);
    c->device = map_device(j, c->device);
    switch (rec->type) {
    case MAYA_REC_COLL:
        return map_coll(j, (struct maya_rec_coll *)rec) < 0 ? -1 : 0;
    case MAYA_REC_MEMCPY: {
        struct maya_rec_memcpy *m = (void *)rec;
        m->src_device = map_device(j, m->src_device);
        m->dst_device = map_device(j, m->dst_device);
        return 0;
    }
    case MAYA_REC_ALLOC:
    case MAYA_REC_FREE: {
        struct maya_rec_alloc *a = (void *)rec;
        a->device = map_device(j, a->device);
        return 0;
    }
    case MAYA_REC_SYNC: {
        struct maya_rec_sync *s = (void *)rec;
        if (s->kind == MAYA_SYNC_DEVICE)
            s->target = (uint64_t)map_device(j, (int32_t)s->target);
        return 0;
    }
    default:
        return 0;
    }
}

static void fill_end(const struct joint *j, struct maya_rec_rank_end *end, uint32_t max_devices)
{
    const struct col_shape *from = j->src->have_end ? j->src : j->own;
    const struct maya_rec_end *e = (const void *)from->end;
    uint32_t nd = from->have_end ? MAYA_MIN(MAYA_MIN(e->ndevices, max_devices), MAX_DEVICES) : 0;
    const struct maya_end_device *d = (const void *)(e + 1);
    struct maya_end_device *out = (void *)(end + 1);
    for (uint32_t i = 0; i < nd; i++) {
        out[i] = d[i];
        out[i].device = from == j->src ? map_device(j, d[i].device) : d[i].device;
    }
    end->ndevices = nd;
    end->oom = from->have_end && e->oom;
    end->unsupported_calls = j->src->unsupported;
    end->h.bytes = (uint32_t)(sizeof *end + nd * sizeof(struct maya_end_device));
}

/* The device of a trace's first communicator: the one its NCCL work runs on. */
static int first_comm_device(const char *path, int32_t *dev)
{
    struct maya_trace_reader *r;
    if (maya_trace_open(path, &r) < 0)
        return -1;
    maya_trace_allow_truncated(r, 1);
    const struct maya_rec_hdr *rec;
    int rc = -1;
    while (maya_trace_next(r, &rec) > 0)
        if (rec->type == MAYA_REC_COMM) {
            *dev = ((const struct maya_rec_comm *)rec)->device;
            rc = 0;
            break;
        }
    maya_trace_close(r);
    return rc;
}

/* The checks both ways of rebuilding share: the rank's own trace is what
 * the emulator wrote. */
static int check_own(const struct col_shape *own, int rank)
{
    const struct maya_rec_eliminated *el = &own->elim;
    if (!own->have_elim)
        return maya_error("rank %d: no ELIMINATED record to rebuild it from", rank);
    if (own->ncoll != el->stop_op || own->hash != el->stop_hash)
        return maya_error("rank %d: its trace holds %llu NCCL operations (hash 0x%016llx), its ELIMINATED "
                          "record says %llu (0x%016llx): the trace is not what the emulator wrote", rank,
                          (unsigned long long)own->ncoll, (unsigned long long)own->hash,
                          (unsigned long long)el->stop_op, (unsigned long long)el->stop_hash);
    return 0;
}

int col_rebuild(const struct col_shape *own, int rank, const char *source_path, int source_rank,
                col_take_fn take, void *ctx, struct maya_rec_rank_end *end, uint32_t max_devices)
{
    const struct maya_rec_eliminated *el = &own->elim;
    if (check_own(own, rank) < 0)
        return -1;
    struct maya_trace_reader *r;
    if (maya_trace_open(source_path, &r) < 0)
        return -1;
    maya_trace_allow_truncated(r, 1);
    struct col_shape *src = col_shape_new();
    struct joint j = { .own = own, .src = src, .rank = rank, .source = source_rank, .dev_src = -1, .dev_own = -1 };
    if (own->ncomms > 0 && first_comm_device(source_path, &j.dev_src) == 0)
        j.dev_own = own->comm_recs[0].device;
    int rc = src ? 0 : maya_error("out of memory collating");
    struct maya_rec_rank_rebuilt b;
    memset(&b, 0, sizeof b);
    b.h = (struct maya_rec_hdr){ MAYA_REC_RANK_REBUILT, 0, sizeof b };
    b.rank = rank;
    b.source = source_rank;
    b.stop_op = el->stop_op;
    b.how = el->how;
    if (rc == 0)
        rc = take(ctx, &b.h);
    for (int i = 0; rc == 0 && i < own->ndevices; i++)
        rc = take(ctx, &own->devices_recs[i].h);
    unsigned char *buf = NULL;
    size_t bufcap = 0;
    int checked = el->stop_op == 0, got;
    const struct maya_rec_hdr *rec;
    while (rc == 0 && (got = maya_trace_next(r, &rec)) > 0) {
        if (!checked && (rec->type == MAYA_REC_COLL || rec->type == MAYA_REC_END) && src->ncoll == el->stop_op) {
            checked = 1;
            if (src->hash != el->stop_hash) {
                rc = maya_error("rank %d was eliminated as a duplicate of rank %d, but their first %llu NCCL "
                                "operations differ (hash 0x%016llx against 0x%016llx): the ranks are not alike; "
                                "run without duplicate-rank elimination", rank, source_rank,
                                (unsigned long long)el->stop_op, (unsigned long long)el->stop_hash,
                                (unsigned long long)src->hash);
                break;
            }
        }
        if ((rc = col_shape_note(src, rec)) < 0)
            break;
        if (rec->type == MAYA_REC_END)
            break;
        if (rec->bytes > bufcap) {
            unsigned char *p = realloc(buf, rec->bytes);
            if (!p) {
                rc = maya_error("out of memory collating");
                break;
            }
            buf = p;
            bufcap = rec->bytes;
        }
        memcpy(buf, rec, rec->bytes);
        const struct maya_rec_hdr *instead;
        int m = map_record(&j, (struct maya_rec_hdr *)buf, &instead);
        if (m < 0)
            rc = -1;
        else if (m == 0)
            rc = take(ctx, instead ? instead : (const struct maya_rec_hdr *)buf);
    }
    if (rc == 0 && got < 0)
        rc = -1;
    if (rc == 0 && !checked)
        rc = maya_error("rank %d cannot be rebuilt from rank %d: rank %d was eliminated after %llu NCCL operations, "
                        "but rank %d's trace holds only %llu", rank, source_rank, rank,
                        (unsigned long long)el->stop_op, source_rank, (unsigned long long)src->ncoll);
    if (rc == 0)
        fill_end(&j, end, max_devices);
    free(buf);
    col_shape_free(src);
    maya_trace_close(r);
    return rc;
}

/* ---- a rebuilt rank as a reference to its source's section ---- */

/* One NCCL operation of a source, as the collator's checks need it. 56 bytes. */
struct ref_coll {
    uint64_t comm, count, seq;
    uint32_t op;
    int32_t dtype, redop, peer, rank, nranks, result;
    uint32_t flags;
};

/* What references to one source need: its shape, its NCCL operations and
 * their prefix hashes (hash[i]: of the first i), its first communicator's
 * device. Read once per source; 64 bytes per NCCL operation. */
struct col_ref_source {
    struct col_shape *shape;
    struct ref_coll *colls;
    uint64_t *hash;             /* [ncoll + 1] */
    uint64_t ncoll, cap;
    int32_t first_dev;          /* -1: it made no communicator */
    int rank;
};

void col_ref_source_free(struct col_ref_source *s)
{
    if (!s)
        return;
    col_shape_free(s->shape);
    free(s->colls);
    free(s->hash);
    free(s);
}

int col_ref_source_rank(const struct col_ref_source *s)
{
    return s->rank;
}

int col_ref_source_stopped(const struct col_ref_source *s)
{
    return s->shape->have_elim;
}

int col_ref_source_load(const char *path, int rank, struct col_ref_source **out)
{
    struct col_ref_source *s = calloc(1, sizeof *s);
    struct maya_trace_reader *r = NULL;
    if (!s || !(s->shape = col_shape_new()) || !(s->hash = calloc(1, sizeof *s->hash))) {
        col_ref_source_free(s);
        return maya_error("out of memory collating");
    }
    s->rank = rank;
    s->first_dev = -1;
    if (maya_trace_open(path, &r) < 0) {
        col_ref_source_free(s);
        return -1;
    }
    maya_trace_allow_truncated(r, 1);
    const struct maya_rec_hdr *rec;
    int rc = 0, got;
    while (rc == 0 && (got = maya_trace_next(r, &rec)) > 0) {
        if (rec->type == MAYA_REC_COMM && s->first_dev < 0)
            s->first_dev = ((const struct maya_rec_comm *)rec)->device;
        if ((rc = col_shape_note(s->shape, rec)) < 0)
            break;
        if (rec->type != MAYA_REC_COLL)
            continue;
        if (s->ncoll == s->cap) {
            uint64_t n = s->cap ? s->cap * 2 : 256;
            struct ref_coll *p = realloc(s->colls, n * sizeof *p);
            uint64_t *q = realloc(s->hash, (n + 1) * sizeof *q);
            if (p)
                s->colls = p;
            if (q)
                s->hash = q;
            if (!p || !q) {
                rc = maya_error("out of memory collating");
                break;
            }
            s->cap = n;
        }
        const struct maya_rec_coll *k = (const void *)rec;
        s->colls[s->ncoll] = (struct ref_coll){ k->comm, k->count, k->seq, k->op, k->dtype, k->redop, k->peer,
                                                k->rank, k->nranks, k->call.result, rec->flags };
        s->hash[++s->ncoll] = s->shape->hash;
    }
    if (rc == 0 && got < 0)
        rc = -1;
    maya_trace_close(r);
    if (rc < 0) {
        col_ref_source_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int col_rebuild_ref(const struct col_shape *own, int rank, const struct col_ref_source *rs, col_take_fn take,
                    col_coll_fn note, void *ctx, struct maya_rec_rank_end *end, uint32_t max_devices)
{
    if (check_own(own, rank) < 0)
        return -1;
    const struct maya_rec_eliminated *el = &own->elim;
    const struct col_shape *src = rs->shape;
    int source = rs->rank;
    if (el->stop_op > rs->ncoll)
        return maya_error("rank %d cannot be rebuilt from rank %d: rank %d was eliminated after %llu NCCL "
                          "operations, but rank %d's trace holds only %llu", rank, source, rank,
                          (unsigned long long)el->stop_op, source, (unsigned long long)rs->ncoll);
    if (rs->hash[el->stop_op] != el->stop_hash)
        return maya_error("rank %d was eliminated as a duplicate of rank %d, but their first %llu NCCL "
                          "operations differ (hash 0x%016llx against 0x%016llx): the ranks are not alike; "
                          "run without duplicate-rank elimination", rank, source, (unsigned long long)el->stop_op,
                          (unsigned long long)el->stop_hash, (unsigned long long)rs->hash[el->stop_op]);
    for (size_t i = 0; i < src->ncomms; i++) {
        if (i >= own->ncomms)
            return maya_error("rank %d cannot be rebuilt from rank %d: rank %d made communicator 0x%llx (its #%zu) "
                              "after rank %d was eliminated, which had made %zu; run without duplicate-rank "
                              "elimination", rank, source, source, (unsigned long long)src->comms[i].id, i + 1,
                              rank, own->ncomms);
        if (src->comms[i].nranks != own->comms[i].nranks)
            return maya_error("rank %d cannot be rebuilt from rank %d: their communicator #%zu has %d members on "
                              "rank %d and %d on rank %d", rank, source, i + 1, own->comms[i].nranks, rank,
                              src->comms[i].nranks, source);
    }
    struct maya_rec_rank_rebuilt b;
    memset(&b, 0, sizeof b);
    b.h = (struct maya_rec_hdr){ MAYA_REC_RANK_REBUILT, 0, sizeof b };
    b.rank = rank;
    b.source = source;
    b.stop_op = el->stop_op;
    b.how = el->how;
    b.flags = MAYA_REBUILT_F_REF;
    int rc = take(ctx, &b.h);
    for (int i = 0; rc == 0 && i < own->ndevices; i++)
        rc = take(ctx, &own->devices_recs[i].h);
    for (size_t i = 0; rc == 0 && i < src->ncomms; i++)
        rc = take(ctx, &own->comm_recs[i].h);
    /* the checks see the operations the copy would hold, mapped as it maps them */
    struct joint j = { .own = own, .src = src, .rank = rank, .source = source, .dev_src = rs->first_dev,
                       .dev_own = own->ncomms > 0 && rs->first_dev >= 0 ? own->comm_recs[0].device : -1 };
    if (j.dev_own < 0)
        j.dev_src = -1;
    struct maya_rec_coll k;
    memset(&k, 0, sizeof k);
    k.h = (struct maya_rec_hdr){ MAYA_REC_COLL, 0, sizeof k };
    for (uint64_t i = 0; rc == 0 && i < rs->ncoll; i++) {
        const struct ref_coll *x = &rs->colls[i];
        k.h.flags = (uint16_t)x->flags;
        k.call.result = x->result;
        k.op = x->op;
        k.count = x->count;
        k.seq = x->seq;
        k.dtype = x->dtype;
        k.redop = x->redop;
        k.nranks = x->nranks;
        k.comm = x->comm;
        k.rank = x->rank;
        k.peer = x->peer;
        if ((rc = map_coll(&j, &k)) == 0)
            rc = note(ctx, &k);
    }
    if (rc == 0)
        fill_end(&j, end, max_devices);
    return rc;
}

/* ---- reading a reference: the source's records made the rank's own ---- */

struct col_ref_map {
    struct col_shape *own, *src;
    struct joint j;
    unsigned char *buf;
    size_t cap;
};

int col_ref_map_new(int rank, int source, int32_t dev_src, struct col_ref_map **out)
{
    struct col_ref_map *m = calloc(1, sizeof *m);
    if (!m || !(m->own = col_shape_new()) || !(m->src = col_shape_new())) {
        col_ref_map_free(m);
        return maya_error("out of memory reading rank %d's reference to rank %d", rank, source);
    }
    m->j = (struct joint){ .own = m->own, .src = m->src, .rank = rank, .source = source, .dev_src = dev_src,
                           .dev_own = -1 };
    *out = m;
    return 0;
}

int col_ref_map_comm(struct col_ref_map *m, const struct maya_rec_comm *own)
{
    if (m->own->ncomms == 0)
        m->j.dev_own = own->device;
    return col_shape_note(m->own, &own->h);
}

int col_ref_map_record(struct col_ref_map *m, const struct maya_rec_hdr *rec, const struct maya_rec_hdr **out)
{
    if (col_shape_note(m->src, rec) < 0)
        return -1;
    if (rec->bytes > m->cap) {
        unsigned char *p = realloc(m->buf, rec->bytes);
        if (!p)
            return maya_error("out of memory reading rank %d's reference", m->j.rank);
        m->buf = p;
        m->cap = rec->bytes;
    }
    memcpy(m->buf, rec, rec->bytes);
    const struct maya_rec_hdr *instead;
    int rc = map_record(&m->j, (struct maya_rec_hdr *)m->buf, &instead);
    if (rc < 0)
        return -1;
    *out = instead ? instead : (const struct maya_rec_hdr *)m->buf;
    return rc == 0;
}

void col_ref_map_free(struct col_ref_map *m)
{
    if (!m)
        return;
    col_shape_free(m->own);
    col_shape_free(m->src);
    free(m->buf);
    free(m);
}

/* Loading a job trace into the simulator's model: one compact op per call,
 * with its durations from the estimator, its stream, and what it waits for.
 *
 * One pass over the file; the estimator is asked about each call while its
 * record is at hand. Memory: about 80 bytes per call (struct sim_op and
 * struct sim_time), nothing per record otherwise.
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <math.h>
#include <string.h>

#include "maya/collator.h"
#include "maya/common.h"
#include "maya/job_trace.h"
#include "maya/progress.h"
#include "maya/trace_reader.h"

/* ---- strings ---- */

static uint64_t hash_str(const char *s, size_t *len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a, 64 bits */
    const char *p = s;
    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    *len = (size_t)(p - s);
    return h;
}

uint32_t sim_intern(struct sim_job *j, const char *s)
{
    size_t len;
    uint64_t h = hash_str(s ? s : "", &len);
    /* (hash, len) -> id; a different string with the same pair takes the
     * next hash value, so a lookup walks until it finds its text or a gap */
    for (uint64_t k = h;; k++) {
        int created;
        uint64_t *v = maya_map_put(&j->name_ids, k, len, &created);
        if (!v)
            return 0;
        if (!created) {
            if (!strcmp(j->names[*v - 1], s ? s : ""))
                return (uint32_t)*v;
            continue;
        }
        if (SIM_GROW(j->names, j->capnames, j->nnames + 1) < 0 ||
            !(j->names[j->nnames] = strdup(s ? s : ""))) {
            maya_map_del(&j->name_ids, k, len);
            return 0;
        }
        *v = ++j->nnames;
        return (uint32_t)*v;
    }
}

const char *sim_name(const struct sim_job *j, uint32_t id)
{
    return id && id <= j->nnames ? j->names[id - 1] : "?";
}

/* ---- loading state ---- */

struct loader {
    struct sim_job *j;
    const struct sim_config *cfg;
    struct maya_trace_reader *r;
    struct sim_rank *cur;
    uint64_t prev_exit;
    uint64_t first_call;           /* the rank's first call's entry time + 1 (0: none yet) */
    struct stream_load {           /* by stream index */
        uint64_t last_group;       /* NCCL group of the last op enqueued (0 none) */
        uint64_t last_op;          /* that op's index */
    } *sl;
    uint64_t capsl;
    uint64_t *unsup;               /* by name id - 1 */
    uint64_t capunsup;
    uint64_t *unreal;              /* reads of values not computed, by writer name id - 1 */
    uint64_t capunreal;
    uint64_t *declared;            /* reads answered by a declaration, by its text's name id - 1 */
    uint64_t capdeclared;
    double slow;                   /* the current rank's compute takes this many times as long */
    int folded;                    /* ranks handed to sim_fold_rank */
    struct sim_memo *memo;         /* estimates by content (estimate_memo.c) */
    uint64_t *nocode;              /* kernel launches priced without code, by name id - 1 */
    uint64_t capnocode;
    uint64_t capranks, capcomms;   /* room in j->ranks, j->comms */
    int ranks_announced;           /* the JOB record's nranks */
    uint32_t *node_seen, *nic_seen; /* placement: last communicator (stamp) that saw each */
    uint32_t stamp;
    /* rebuilt ranks that are references (MAYA_REBUILT_F_REF): where each
     * section begins, to read a source's again; 16 bytes per rank */
    struct section {
        uint64_t chunk;            /* its RANK_BEGIN: chunk offset and byte in it */
        uint32_t byte;
        int32_t first_dev;         /* device of its first communicator, -1 none */
        int is_ref;
        uint32_t *comms;           /* a section with work: its communicators, in the order it made them */
        uint32_t ncomms;
    } *sect;
    uint64_t capsect;
    struct maya_map sect_of;       /* global rank -> ranks[] index + 1 */
    struct col_ref_map *ref;       /* the current section is a reference to ... */
    int ref_source;                /* ... this ranks[] index */
    struct maya_trace_reader *r2;  /* the job trace again, for the sources */
    uint32_t *ref_comms;           /* the reference's communicators (comms[] index), in order */
    uint32_t nref_comms, capref_comms;
    int32_t ref_dev;               /* the device of its first communicator */
    /* references read from their source, whose work later references with
     * the same key take as a copy (take_copy) */
    struct ref_template {
        uint32_t rank;             /* ranks[] index */
        int32_t dev;               /* its ref_dev */
        uint64_t *key;             /* ref_key's words */
        uint32_t nkey;
        uint32_t *comms;           /* its k-th communicator */
        uint32_t ncomms;
        uint64_t extrapolated, kernel_launches, no_code_launches, sass_unread_launches;
        struct name_count {        /* what its loading added to the counts by name */
            uint32_t which, id;
            uint64_t n;
        } *names;
        uint32_t nnames;
    } *tpl;
    uint64_t ntpl, captpl;
    struct maya_map tpl_of;        /* hash of a key -> tpl[] index + 1, chained by k2 */
    /* the estimate memo's hash of each kernel definition the readers hold
     * (sim_memo_kernel_digest), by reader (0: r, 1: r2) and kernel id:
     * taken at its first launch, forgotten when a KERNEL record redefines
     * it or r2 moves to another section; 24 bytes a kernel */
    struct kernel_digest {
        uint64_t v[2];
        int known;
    } *kd[2];
    uint32_t nkd[2];
    /* the interned name (sim_intern) of each string the readers hold, by
     * reader and string id, 0 not yet: forgotten as the digests are; 4
     * bytes a string */
    uint32_t *nid[2];
    uint32_t nnid[2];
};

/* Add one to counts[id - 1], growing the array (new entries zero). */
static int count_by_name(uint64_t **counts, uint64_t *cap, uint32_t id)
{
    uint64_t old = *cap;
    if (SIM_GROW(*counts, *cap, id) < 0)
        return -1;
    memset(*counts + old, 0, (*cap - old) * sizeof **counts);
    (*counts)[id - 1]++;
    return 0;
}

/* A loader's counts by name id, as the job keeps them: one per name. */
static uint64_t *by_name(const struct sim_job *j, const uint64_t *counts, uint64_t n)
{
    uint64_t *out = calloc(MAYA_MAX(j->nnames, 1), sizeof *out);
    for (uint64_t i = 0; out && i < n && i < j->nnames; i++)
        out[i] = counts[i];
    return out;
}

/* A host read of device bytes the run did not compute (VALUE_READ): counted
 * by what would have had to write them, a kernel by its name. */
static int value_read(struct loader *L, const struct maya_rec_hdr *h)
{
    const struct maya_rec_value_read *v = (const void *)h;
    if (h->bytes < sizeof *v)
        return maya_error("rank %d: a VALUE_READ record of %u bytes; expected at least %zu", L->cur->rank,
                          h->bytes, sizeof *v);
    const char *name = NULL;
    if (v->writer_kind == MAYA_WRITER_KERNEL) {
        const struct maya_rec_kernel *k = maya_trace_kernel(L->r, v->writer);
        name = k ? maya_trace_string(L->r, k->name) : NULL;
    } else if (v->writer_kind == MAYA_WRITER_NONE) {
        name = "(never written)";
    } else {
        name = maya_trace_string(L->r, v->writer);
    }
    if (v->declared) {
        /* the program was given the declared value (MAYA_VALUES) */
        uint32_t id = sim_intern(L->j, maya_trace_string(L->r, v->declared));
        if (!id || count_by_name(&L->declared, &L->capdeclared, id) < 0)
            return maya_error("out of memory loading the job");
        L->cur->values_declared++;
        return 0;
    }
    uint32_t id = sim_intern(L->j, name ? name : "(unknown writer)");
    if (!id || count_by_name(&L->unreal, &L->capunreal, id) < 0)
        return maya_error("out of memory loading the job");
    L->cur->values_not_computed++;
    return 0;
}

/* Ranks loaded so far go to folding (fold.c). */
static int fold_loaded(struct loader *L)
{
    while (L->folded < L->j->nranks)
        if (sim_fold_rank(L->j, (uint32_t)L->folded++) < 0)
            return -1;
    return 0;
}

static int new_stream(struct loader *L, uint64_t id, int device, uint32_t flags)
{
    struct sim_job *j = L->j;
    struct sim_rank *r = L->cur;
    if (SIM_GROW(j->streams, j->capstreams, j->nstreams + 1) < 0 ||
        SIM_GROW(L->sl, L->capsl, j->nstreams + 1) < 0)
        return maya_error("out of memory loading the job");
    uint32_t *rs = realloc(r->streams, (r->nstreams + 1) * sizeof *rs);
    if (!rs)
        return maya_error("out of memory loading the job");
    r->streams = rs;
    uint32_t idx = j->nstreams++;
    struct sim_stream *s = &j->streams[idx];
    memset(s, 0, sizeof *s);
    s->rank = (uint32_t)(r - j->ranks);
    s->device = device;
    s->id = id;
    s->flags = flags;
    s->lane = r->nstreams;
    r->streams[r->nstreams++] = idx;
    L->sl[idx] = (struct stream_load){ 0, 0 };
    uint64_t *v = maya_map_put(&r->stream_ids, id, 0, NULL);
    if (!v)
        return maya_error("out of memory loading the job");
    *v = idx + 1;
    return (int)idx;
}

/* The stream index for a call's stream id: defined ones, else the device's
 * legacy stream (id 0 or an id the trace never defined). */
static int stream_of(struct loader *L, uint64_t id, int device)
{
    struct sim_rank *r = L->cur;
    uint64_t *v = id ? maya_map_get(&r->stream_ids, id, 0) : NULL;
    if (v)
        return (int)(*v - 1);
    for (uint32_t i = 0; i < r->nstreams; i++) {
        const struct sim_stream *s = &L->j->streams[r->streams[i]];
        if ((s->flags & MAYA_STREAM_LEGACY) && s->device == device)
            return (int)r->streams[i];
    }
    /* a synthetic legacy stream */
    return new_stream(L, sim_legacy_stream_id(device), device, MAYA_STREAM_LEGACY);
}

static int event_of(struct loader *L, uint64_t id)
{
    struct sim_rank *r = L->cur;
    int created;
    uint64_t *v = maya_map_put(&r->event_ids, id, 0, &created);
    if (!v)
        return maya_error("out of memory loading the job");
    if (created) {
        if (SIM_GROW(r->events, r->capevents, r->nevents + 1) < 0)
            return maya_error("out of memory loading the job");
        memset(&r->events[r->nevents], 0, sizeof r->events[0]);
        *v = ++r->nevents;
    }
    return (int)(*v - 1);
}

/* ---- precision of compute ops (the peak MFU divides by) ---- */

static int prec_cuda(int atype, int compute)
{
    switch (atype) {
    case 2: return SP_FP16;            /* CUDA_R_16F */
    case 14: return SP_BF16;           /* CUDA_R_16BF */
    case 28: case 29: return SP_FP8;   /* CUDA_R_8F_E4M3 / E5M2 */
    case 3: return SP_INT8;            /* CUDA_R_8I */
    case 1: return SP_FP64;            /* CUDA_R_64F */
    case 0:                            /* CUDA_R_32F: the compute type decides */
        if (compute == 77) return SP_TF32;  /* CUBLAS_COMPUTE_32F_FAST_TF32 */
        if (compute == 74) return SP_FP16;  /* CUBLAS_COMPUTE_32F_FAST_16F */
        if (compute == 75) return SP_BF16;  /* CUBLAS_COMPUTE_32F_FAST_16BF */
        return SP_FP32;
    default: return SP_NONE;
    }
}

/* A cuDNN op's precision, as the estimator prices it (estimator/describe.c):
 * float convolutions and matmuls run on TF32 tensor cores where the GPU has
 * them (cuDNN's default math; the peak falls back to FP32 where it has not),
 * the rest on CUDA cores. */
static int prec_cudnn(const struct maya_rec_dnn *d)
{
    int tensor_op = d->op == MAYA_DNN_CONV_FWD || d->op == MAYA_DNN_CONV_BWD_DATA ||
                    d->op == MAYA_DNN_CONV_BWD_FILTER || d->op == MAYA_DNN_MATMUL;
    switch (d->t[0].dtype) {
    case 0: return tensor_op && d->compute_type != 1 ? SP_TF32 : SP_FP32; /* CUDNN_DATA_FLOAT */
    case 1: return SP_FP64;
    case 2: return SP_FP16;
    case 3: return SP_INT8;
    case 9: return SP_BF16;
    case 12: case 13: return SP_FP8;
    default: return SP_NONE;
    }
}

static double prod(const struct maya_tensor *t, int from)
{
    double p = 1;
    for (int i = from; i < t->ndims && i < MAYA_TENSOR_MAX_DIMS; i++)
        p *= (double)t->dims[i];
    return t->ndims > from ? p : 0;
}

/* ---- kernel definitions' hashes for the estimate memo ---- */

static int reader_index(const struct loader *L)
{
    return L->r2 && L->r == L->r2;
}

/* A KERNEL or STRING record read through reader ri: its id's definition
 * changes. */
static void forget_definition(struct loader *L, int ri, const struct maya_rec_hdr *h)
{
    if (h->type == MAYA_REC_KERNEL) {
        uint32_t id = ((const struct maya_rec_kernel *)h)->id;
        if (id < L->nkd[ri])
            L->kd[ri][id].known = 0;
    } else if (h->type == MAYA_REC_STRING) {
        uint32_t id = ((const struct maya_rec_string *)h)->id;
        if (id < L->nnid[ri])
            L->nid[ri][id] = 0;
    }
}

/* The interned name of string sid of the current reader: hashed once per
 * definition, not once per op. 0 when out of memory. */
static uint32_t name_id(struct loader *L, uint32_t sid)
{
    int ri = reader_index(L);
    if (sid >= L->nnid[ri]) {
        uint32_t n = MAYA_MAX(sid + 1, 2 * L->nnid[ri]);
        uint32_t *v = realloc(L->nid[ri], (size_t)n * sizeof *v);
        if (!v)
            return sim_intern(L->j, maya_trace_string(L->r, sid));
        memset(v + L->nnid[ri], 0, (size_t)(n - L->nnid[ri]) * sizeof *v);
        L->nid[ri] = v;
        L->nnid[ri] = n;
    }
    uint32_t *v = &L->nid[ri][sid];
    if (!*v)
        *v = sim_intern(L->j, maya_trace_string(L->r, sid));
    return *v;
}

/* Kernel id's definition's hash with its name's (kdef: the current
 * reader's), NULL where there is no room to keep it (then the memo takes it
 * itself). */
static const uint64_t *kernel_digest(struct loader *L, uint32_t id, const struct maya_rec_kernel *kdef,
                                      const char *name)
{
    int ri = reader_index(L);
    if (id >= L->nkd[ri]) {
        uint32_t n = MAYA_MAX(id + 1, 2 * L->nkd[ri]);
        struct kernel_digest *k = realloc(L->kd[ri], (size_t)n * sizeof *k);
        if (!k)
            return NULL;
        memset(k + L->nkd[ri], 0, (size_t)(n - L->nkd[ri]) * sizeof *k);
        L->kd[ri] = k;
        L->nkd[ri] = n;
    }
    struct kernel_digest *d = &L->kd[ri][id];
    if (!d->known) {
        sim_memo_kernel_digest(kdef, name, d->v);
        d->known = 1;
    }
    return d->v;
}

/* ---- signatures: what stays the same from one iteration to the next ---- */

static uint32_t mix(uint32_t h, uint64_t v)
{
    uint64_t x = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x ^ (x >> 29) ^ (x >> 32));
}

static uint32_t signature(const struct maya_rec_hdr *h, const struct sim_op *o, uint32_t lane)
{
    uint32_t s = mix(mix(mix(0x2545f491u, h->type), o->name), lane);
    switch (h->type) {
    case MAYA_REC_GEMM: {
        const struct maya_rec_gemm *g = (const void *)h;
        return mix(mix(mix(mix(s, (uint64_t)g->m), (uint64_t)g->n), (uint64_t)g->k), (uint64_t)g->batch);
    }
    case MAYA_REC_LAUNCH: {
        const struct maya_rec_launch *l = (const void *)h;
        return mix(mix(s, l->grid[0] | (uint64_t)l->grid[1] << 32), l->block[0] | (uint64_t)l->grid[2] << 32);
    }
    case MAYA_REC_MEMCPY:
        return mix(s, ((const struct maya_rec_memcpy *)h)->bytes);
    case MAYA_REC_MEMSET:
        return mix(s, ((const struct maya_rec_memset *)h)->bytes);
    case MAYA_REC_COLL: {
        const struct maya_rec_coll *c = (const void *)h;
        return mix(mix(mix(s, c->count), c->comm), (uint64_t)(uint32_t)c->peer);
    }
    case MAYA_REC_DNN: {
        const struct maya_rec_dnn *d = (const void *)h;
        return mix(mix(s, d->op), (uint64_t)prod(&d->t[0], 0));
    }
    default:
        return s;
    }
}

/* ---- one call ---- */

static int add_call(struct loader *L, const struct maya_rec_hdr *h)
{
    struct sim_job *j = L->j;
    struct sim_rank *r = L->cur;
    const struct maya_call *c = maya_rec_call(h);
    if (SIM_GROW(r->ops, r->capops, r->nops + 1) < 0)
        return maya_error("out of memory loading the job (%llu ops)", (unsigned long long)r->nops);
    uint64_t idx = r->nops;
    struct sim_op *o = &r->ops[idx];
    memset(o, 0, sizeof *o);
    o->rec_type = h->type;
    o->device = (int16_t)c->device;
    o->kind = SK_HOST;
    int from_graph = (h->flags & MAYA_F_FROM_GRAPH) != 0;
    if (!from_graph) {
        o->gap_ns = c->t_enter_ns > L->prev_exit ? c->t_enter_ns - L->prev_exit : 0;
        if (L->cfg->host_speed > 0 && L->cfg->host_speed != 1)
            o->gap_ns = (uint64_t)((double)o->gap_ns / L->cfg->host_speed);
        L->prev_exit = MAYA_MAX(L->prev_exit, c->t_exit_ns);
    }
    if (!L->first_call)
        L->first_call = c->t_enter_ns + 1;
    uint64_t since_ns = c->t_enter_ns + 1 > L->first_call ? c->t_enter_ns + 1 - L->first_call : 0;
    o->trace_ms = (uint32_t)MAYA_MIN(since_ns / 1000000, UINT32_MAX);
    const char *api = maya_trace_string(L->r, c->api);
    const char *kname = NULL;
    const struct maya_rec_kernel *kdef = NULL;
    const uint64_t *kdigest = NULL;
    uint32_t name_sid = c->api;
    if (h->type == MAYA_REC_LAUNCH) {
        uint32_t kid = ((const struct maya_rec_launch *)h)->kernel;
        kdef = maya_trace_kernel(L->r, kid);
        kname = kdef ? maya_trace_string(L->r, kdef->name) : NULL;
        kdigest = kdef ? kernel_digest(L, kid, kdef, kname) : NULL;
        name_sid = kdef ? kdef->name : name_sid;
    }
    /* the name people know it by: the kernel's, an NVTX range's, else the API's */
    if (h->type == MAYA_REC_MARKER) {
        name_sid = ((const struct maya_rec_marker *)h)->name;
        kname = maya_trace_string(L->r, name_sid);
        o->sub = (uint16_t)((const struct maya_rec_marker *)h)->kind; /* push, pop, ...: iterations.c */
    }
    o->name = name_id(L, name_sid);
    if (!o->name)
        return maya_error("out of memory loading the job");
    if (h->flags & MAYA_F_UNSUPPORTED) {
        r->unsupported++;
        if (count_by_name(&L->unsup, &L->capunsup, o->name) < 0)
            return maya_error("out of memory loading the job");
    }
    int active = c->result == 0 && !(h->flags & (MAYA_F_UNSUPPORTED | MAYA_F_CAPTURING));
    int on_stream = 0;
    struct est_op eo = { .rec = h, .api = api, .kernel_name = h->type == MAYA_REC_LAUNCH ? kname : NULL,
                         .kernel = kdef, .rank = r->rank };
    if (active) {
        switch (h->type) {
        case MAYA_REC_LAUNCH:
        case MAYA_REC_MEMSET:
            o->kind = SK_KERNEL;
            break;
        case MAYA_REC_GEMM: {
            const struct maya_rec_gemm *g = (const void *)h;
            o->kind = SK_KERNEL;
            o->sub = (uint16_t)prec_cuda(g->atype, g->compute_type);
            break;
        }
        case MAYA_REC_DNN: {
            const struct maya_rec_dnn *d = (const void *)h;
            o->kind = SK_KERNEL;
            o->sub = (uint16_t)prec_cudnn(d);
            break;
        }
        case MAYA_REC_MEMCPY: {
            const struct maya_rec_memcpy *m = (const void *)h;
            if (m->kind == MAYA_COPY_H2D || m->kind == MAYA_COPY_D2H) {
                o->kind = SK_COPY;
                o->sub = m->kind == MAYA_COPY_D2H;
            } else if (m->kind == MAYA_COPY_D2D || m->kind == MAYA_COPY_PEER) {
                o->kind = SK_KERNEL;
            }
            break;
        }
        case MAYA_REC_HOST_FUNC:
            o->kind = SK_HOST_FUNC;
            break;
        case MAYA_REC_COLL: {
            const struct maya_rec_coll *k = (const void *)h;
            uint64_t *ci = maya_map_get(&j->comm_ids, k->comm, 0);
            if (!ci)
                return maya_error("rank %d: %s on communicator 0x%llx, which the job trace does not list",
                                  r->rank, api, (unsigned long long)k->comm);
            struct sim_comm *cm = &j->comms[*ci - 1];
            if (k->rank < 0 || k->rank >= cm->nranks || k->nranks != cm->nranks)
                return maya_error("rank %d: %s as member %d of %d on communicator 0x%llx of %d members",
                                  r->rank, api, k->rank, k->nranks, (unsigned long long)k->comm, cm->nranks);
            o->arg = (uint32_t)(*ci - 1);
            int p2p = k->op == MAYA_COLL_SEND || k->op == MAYA_COLL_RECV;
            if (j->keep_xfers) {
                if (SIM_GROW(r->xinfo, r->capxinfo, r->nxinfo + 1) < 0)
                    return maya_error("out of memory loading the job");
                r->xinfo[r->nxinfo++] = (struct sim_xfer_info){ idx, k->bytes, k->seq, k->op, k->rank, k->peer };
            }
            if (p2p) {
                if (k->peer < 0 || k->peer >= cm->nranks)
                    return maya_error("rank %d: %s to peer %d of %d", r->rank, api, k->peer, cm->nranks);
                uint64_t from = (uint64_t)(k->op == MAYA_COLL_SEND ? k->rank : k->peer);
                uint64_t to = (uint64_t)(k->op == MAYA_COLL_SEND ? k->peer : k->rank);
                o->kind = SK_P2P;
                o->arg2 = from << 44 | to << 24 | (k->seq & 0xffffff);
                int same = cm->member_node[k->rank] == cm->member_node[k->peer];
                eo.coll_nodes = same ? 1 : 2;
                eo.coll_ranks_per_node = same ? 2 : 1;
                if (!same)
                    o->flags |= SF_INTER_NODE;
                cm->has_p2p = 1;
            } else {
                o->kind = SK_COLL;
                o->arg2 = k->seq;
                eo.coll_nodes = cm->nnodes;
                eo.coll_ranks_per_node = cm->max_per_node;
                if (cm->nnodes > 1)
                    o->flags |= SF_INTER_NODE;
            }
            cm->inter_used |= (o->flags & SF_INTER_NODE) != 0;
            break;
        }
        case MAYA_REC_EVENT_RECORD:
        case MAYA_REC_STREAM_WAIT: {
            const struct maya_rec_event *e = (const void *)h;
            if (h->type == MAYA_REC_STREAM_WAIT && e->version == 0)
                break; /* waiting for an event never recorded: no-op */
            int ei = event_of(L, e->event);
            if (ei < 0)
                return -1;
            o->kind = h->type == MAYA_REC_EVENT_RECORD ? SK_EVENT_RECORD : SK_STREAM_WAIT;
            o->arg = (uint32_t)ei;
            o->arg2 = e->version;
            break;
        }
        case MAYA_REC_SYNC: {
            const struct maya_rec_sync *s = (const void *)h;
            o->kind = SK_SYNC;
            o->sub = (uint16_t)s->kind;
            if (s->kind == MAYA_SYNC_STREAM) {
                int si = stream_of(L, s->target, c->device);
                if (si < 0)
                    return -1;
                o->arg = (uint32_t)si + 1;
            } else if (s->kind == MAYA_SYNC_EVENT) {
                if (s->version == 0) {
                    o->kind = SK_HOST;
                    break;
                }
                int ei = event_of(L, s->target);
                if (ei < 0)
                    return -1;
                o->arg = (uint32_t)ei;
                o->arg2 = s->version;
            } else if (s->kind == MAYA_SYNC_DEVICE) {
                o->arg = (uint32_t)MAYA_MAX(c->device, 0);
            } else {
                o->kind = SK_HOST;
            }
            break;
        }
        default:
            break;
        }
        on_stream = o->kind == SK_KERNEL || o->kind == SK_COPY || o->kind == SK_COLL || o->kind == SK_P2P ||
                    o->kind == SK_HOST_FUNC || o->kind == SK_EVENT_RECORD || o->kind == SK_STREAM_WAIT;
        if (h->flags & MAYA_F_HOST_WAITS)
            o->flags |= SF_HOST_WAITS;
        if (h->flags & MAYA_F_DEVICE_SYNC)
            o->flags |= SF_DEVICE_SYNC;
    }
    uint32_t lane = 0;
    if (on_stream) {
        int si = stream_of(L, c->stream, c->device);
        if (si < 0)
            return -1;
        o = &r->ops[idx]; /* stream_of may not move ops, but keep it obviously right */
        o->stream = (uint32_t)si + 1;
        lane = j->streams[si].lane + 1;
        /* NCCL groups: consecutive collectives of one group on a stream start together */
        uint64_t group = h->type == MAYA_REC_COLL ? ((const struct maya_rec_coll *)h)->group : 0;
        int is_xfer = o->kind == SK_COLL || o->kind == SK_P2P;
        if (is_xfer && group && L->sl[si].last_group == group) {
            r->ops[L->sl[si].last_op].flags |= SF_GROUP_NEXT;
            eo.group_follower = 1; /* launched with the group's first op (estimator/host.c) */
        }
        if (o->kind != SK_EVENT_RECORD && o->kind != SK_STREAM_WAIT)
            L->sl[si] = (struct stream_load){ is_xfer ? group : 0, idx };
    }
    struct est_result er;
    memset(&er, 0, sizeof er);
    double flops = 0;
    if (sim_memo_estimate(&L->memo, L->cfg, &eo, kdigest, &er, &flops) < 0)
        return maya_error("rank %d: cannot estimate %s (call %llu)", r->rank, kname ? kname : api,
                          (unsigned long long)c->seq);
    if (o->kind == SK_KERNEL && o->sub && L->cfg->flops)
        o->arg2 = (uint64_t)flops; /* as the estimator counts them */
    o->dev_ns = sim_device_work(o) ? er.device_ns : 0;
    if (o->kind == SK_KERNEL && L->slow != 1.0)
        o->dev_ns = (uint64_t)llround((double)o->dev_ns * L->slow);
    if (o->kind == SK_P2P) /* its latency, in 10 ns (up to 655 us): sharing a link slows the rest */
        o->sub = (uint16_t)MAYA_MIN(MAYA_MIN(er.fixed_ns, o->dev_ns) / 10, UINT16_MAX);
    if (o->kind == SK_COLL) /* the SMs its NCCL kernel holds (engine.c: kernels beside it get fewer),
                               and its latency */
        o->sub = SIM_COLL_SUB((uint32_t)(er.coll_ctas > 0 ? er.coll_ctas : 0), er.fixed_ns, o->dev_ns);
    o->host_ns = from_graph ? 0 : (uint32_t)MAYA_MIN(er.host_ns, UINT32_MAX);
    if (L->cfg->host_speed > 0 && L->cfg->host_speed != 1)
        o->host_ns = (uint32_t)((double)o->host_ns / L->cfg->host_speed);
    if (er.extrapolated) {
        o->flags |= SF_EXTRAPOLATED;
        j->extrapolated++;
    }
    if (h->type == MAYA_REC_LAUNCH && er.family == EST_KERNEL) {
        /* kernels priced from their code, and those without (the fallback rule) */
        j->kernel_launches++;
        if (er.no_code) {
            uint64_t old = L->capnocode;
            if (SIM_GROW(L->nocode, L->capnocode, o->name) < 0)
                return maya_error("out of memory loading the job");
            memset(L->nocode + old, 0, (L->capnocode - old) * sizeof *L->nocode);
            L->nocode[o->name - 1]++;
            j->no_code_launches++;
            if (kdef && (kdef->h.flags & MAYA_F_SASS_UNREAD))
                j->sass_unread_launches++;
        }
    }
    o->sig = signature(h, o, lane);
    r->nops++;
    return 0;
}

/* A process joins a communicator (its COMM record comes just before the
 * ncclCommInit or ncclCommSplit call that created it): the first time, the
 * next call waits for every other process that joins it. */
static int join_comm(struct loader *L, const struct maya_rec_comm *c)
{
    struct sim_job *j = L->j;
    struct sim_rank *r = L->cur;
    uint64_t *ci = maya_map_get(&j->comm_ids, c->comm, 0);
    if (!ci)
        return maya_error("rank %d joins communicator 0x%llx, which the job trace does not list", r->rank,
                          (unsigned long long)c->comm);
    int created;
    if (!maya_map_put(&r->comms_joined, *ci, 0, &created) ||
        (created && SIM_GROW(r->bars, r->capbars, r->nbars + 1) < 0))
        return maya_error("out of memory loading the job");
    if (!created)
        return 0;
    r->bars[r->nbars++] = (struct sim_barrier){ r->nops, (uint32_t)(*ci - 1) };
    j->comms[*ci - 1].joiners++;
    return 0;
}

/* One record of a rank's section (not a job record). */
static int load_record(struct loader *L, const struct maya_rec_hdr *h)
{
    const char *path = maya_trace_path(L->r);
    if (h->type == MAYA_REC_STREAM) {
        const struct maya_rec_stream *s = (const void *)h;
        if (!L->cur)
            return maya_error("%s: a stream outside any rank section", path);
        if (maya_map_get(&L->cur->stream_ids, s->stream, 0))
            return maya_error("rank %d defines stream %llu twice", L->cur->rank, (unsigned long long)s->stream);
        return new_stream(L, s->stream, s->device, s->flags) < 0 ? -1 : 0;
    }
    if (h->type == MAYA_REC_COMM) {
        if (!L->cur)
            return maya_error("%s: a communicator outside any rank section", path);
        struct section *sc = &L->sect[L->cur - L->j->ranks];
        if (sc->first_dev < 0)
            sc->first_dev = ((const struct maya_rec_comm *)h)->device;
        return join_comm(L, (const struct maya_rec_comm *)h);
    }
    if (h->type == MAYA_REC_ALLOC || h->type == MAYA_REC_FREE) {
        if (!L->cur)
            return maya_error("%s: a call outside any rank section", path);
        L->cur->peak_bytes = MAYA_MAX(L->cur->peak_bytes, ((const struct maya_rec_alloc *)h)->device_peak_bytes);
        return add_call(L, h);
    }
    if (maya_rec_is_call(h->type))
        return L->cur ? add_call(L, h) : maya_error("%s: a call outside any rank section", path);
    if (h->type == MAYA_REC_VALUE_READ)
        return L->cur ? value_read(L, h) : maya_error("%s: a value read outside any rank section", path);
    return 0;
}

/* ---- rebuilt ranks that are references ---- */

/* RANK_REBUILT: a full copy follows (nothing to do), or the section is a
 * reference to an earlier rank's section, which must hold work of its own. */
static int rebuilt_record(struct loader *L, const struct maya_rec_rank_rebuilt *b)
{
    struct sim_rank *r = L->cur;
    const char *path = maya_trace_path(L->r);
    if (!r)
        return maya_error("%s: a rebuilt-rank record outside any rank section", path);
    if (!(b->flags & MAYA_REBUILT_F_REF))
        return 0;
    if (b->rank != r->rank)
        return maya_error("%s: rank %d's section says it rebuilds rank %d", path, r->rank, b->rank);
    if (L->ref || r->nops || r->nstreams || r->nbars)
        return maya_error("%s: rank %d's section is a reference to rank %d after records of its own; expected "
                          "RANK_REBUILT right after RANK_BEGIN", path, r->rank, b->source);
    if (b->source < 0 || b->source == b->rank || (L->j->world_size > 0 && b->source >= L->j->world_size))
        return maya_error("%s: rank %d is a reference to rank %d: expected another rank of the job's %d", path,
                          r->rank, b->source, L->j->world_size);
    uint64_t *si = maya_map_get(&L->sect_of, (uint64_t)(uint32_t)b->source, 0);
    if (!si)
        return maya_error("%s: rank %d is a reference to rank %d, whose section does not come before it", path,
                          r->rank, b->source);
    if (L->sect[*si - 1].is_ref)
        return maya_error("%s: rank %d is a reference to rank %d, itself a reference: expected a section with "
                          "work of its own", path, r->rank, b->source);
    L->sect[r - L->j->ranks].is_ref = 1;
    L->ref_source = (int)(*si - 1);
    return col_ref_map_new(r->rank, b->source, L->sect[*si - 1].first_dev, &L->ref);
}

/* A record of a reference section: only its DEVICE and COMM records. */
static int ref_record(struct loader *L, const struct maya_rec_hdr *h)
{
    if (h->type == MAYA_REC_COMM) {
        const struct maya_rec_comm *c = (const void *)h;
        uint64_t *ci = maya_map_get(&L->j->comm_ids, c->comm, 0);
        if (!ci)
            return maya_error("rank %d joins communicator 0x%llx, which the job trace does not list", L->cur->rank,
                              (unsigned long long)c->comm);
        if (SIM_GROW(L->ref_comms, L->capref_comms, L->nref_comms + 1) < 0)
            return maya_error("out of memory loading the job");
        if (!L->nref_comms)
            L->ref_dev = c->device;
        L->ref_comms[L->nref_comms++] = (uint32_t)(*ci - 1);
        return col_ref_map_comm(L->ref, c);
    }
    if (h->type == MAYA_REC_DEVICE || h->type == MAYA_REC_STRING)
        return 0;
    return maya_error("%s: rank %d's section is a reference, but holds a %s record", maya_trace_path(L->r),
                      L->cur ? L->cur->rank : -1, maya_rec_type_name(h->type));
}

/* At a reference's RANK_END: its work, read from its source's section and
 * made its own as the collator's full copy would be (col_ref_map). */
static int materialise(struct loader *L)
{
    struct col_ref_map *m = L->ref;
    const struct section *sc = &L->sect[L->ref_source];
    int source = L->j->ranks[L->ref_source].rank;
    L->ref = NULL;
    int rc = 0;
    if (!L->r2)
        rc = maya_trace_open(maya_trace_path(L->r), &L->r2);
    if (rc == 0)
        rc = maya_trace_seek(L->r2, sc->chunk, sc->byte);
    const struct maya_rec_hdr *h;
    if (rc == 0 && (maya_trace_next(L->r2, &h) <= 0 || h->type != MAYA_REC_RANK_BEGIN ||
                    ((const struct maya_rec_rank_begin *)h)->rank != source))
        rc = maya_error("%s: rank %d's section is not where it was read", maya_trace_path(L->r), source);
    struct maya_trace_reader *main_reader = L->r;
    L->r = L->r2; /* strings and kernels are the source section's */
    for (uint32_t k = 0; k < L->nkd[1]; k++) /* its definitions may differ from the last section's */
        L->kd[1][k].known = 0;
    if (L->nnid[1])
        memset(L->nid[1], 0, (size_t)L->nnid[1] * sizeof *L->nid[1]);
    int got = 0;
    while (rc == 0 && (got = maya_trace_next(L->r2, &h)) > 0 && h->type != MAYA_REC_RANK_END) {
        forget_definition(L, 1, h);
        if (h->type >= MAYA_REC_JOB && h->type < 128) {
            if (h->type != MAYA_REC_RANK_REBUILT)
                rc = maya_error("%s: rank %d's section holds a %s record", maya_trace_path(L->r), source,
                                maya_rec_type_name(h->type));
            continue;
        }
        const struct maya_rec_hdr *mine;
        int keep = col_ref_map_record(m, h, &mine);
        rc = keep < 0 ? -1 : keep ? load_record(L, mine) : 0;
    }
    L->r = main_reader;
    if (rc == 0 && got <= 0)
        rc = got < 0 ? -1 : maya_error("%s: rank %d's section has no end", maya_trace_path(L->r), source);
    col_ref_map_free(m);
    return rc;
}


/* ---- references that take a copy of another's loaded work ---- */

/* What a reference's loaded work depends on besides its source's records:
 * for each communicator its size and placement (a collective's price,
 * whether it crosses nodes), and where it carries send/recv (the source's
 * does) the rank's place in it and which members share its node (a
 * transfer's price). Two references to one source with equal keys load the
 * same ops but for their communicators' ids and their device (that of
 * their first communicator, which take_copy renames: the tensor-parallel
 * ranks of a node share one template). O(members of the send/recv
 * communicators). */
static int ref_key(struct loader *L, const struct section *src, uint64_t **out, uint32_t *n)
{
    struct sim_job *j = L->j;
    uint64_t *k = NULL, cap = 0;
    uint32_t len = 0;
#define PUT(v) do { if (SIM_GROW(k, cap, (uint64_t)len + 1) < 0) { free(k); \
                        return maya_error("out of memory loading the job"); } k[len++] = (uint64_t)(v); } while (0)
    PUT(L->ref_source);
    PUT(L->nref_comms);
    for (uint32_t i = 0; i < L->nref_comms; i++) {
        const struct sim_comm *c = &j->comms[L->ref_comms[i]];
        PUT((uint64_t)(uint32_t)c->nranks << 32 | (uint32_t)c->nnodes);
        PUT(c->max_per_node);
        int p2p = i < src->ncomms && j->comms[src->comms[i]].has_p2p;
        if (!p2p)
            continue;
        int me = -1;
        for (int m = 0; m < c->nranks && me < 0; m++)
            if (c->member_rank[m] == L->cur->rank)
                me = m;
        PUT((uint32_t)me);
        uint64_t w = 0;
        for (int d = 0; me >= 0 && d < c->nranks; d++) {
            w = w << 1 | (c->member_node[(me + d) % c->nranks] == c->member_node[me]);
            if (d % 64 == 63 || d == c->nranks - 1) {
                PUT(w);
                w = 0;
            }
        }
    }
#undef PUT
    *out = k;
    *n = len;
    return 0;
}

static uint64_t key_hash(const uint64_t *k, uint32_t n)
{
    uint64_t h = 0x243f6a8885a308d3ull;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 0x9e3779b97f4a7c15ull, h ^= h >> 29;
    return h;
}

static struct ref_template *find_template(struct loader *L, const uint64_t *k, uint32_t n)
{
    uint64_t h = key_hash(k, n);
    for (uint64_t c = 0;; c++) {
        uint64_t *v = maya_map_get(&L->tpl_of, h, c);
        if (!v)
            return NULL;
        struct ref_template *t = &L->tpl[*v - 1];
        if (t->nkey == n && !memcmp(t->key, k, n * sizeof *k))
            return t;
    }
}

/* The counts by name loading a rank adds (which: 0 unsupported, 1 no code,
 * 2 values not computed, 3 declared), as the arrays stood before and after. */
struct counts_before {
    uint64_t *v[4], n[4];
    uint64_t extrapolated, kernel_launches, no_code_launches, sass_unread_launches;
};

static uint64_t **counts_array(struct loader *L, int which, uint64_t **cap)
{
    switch (which) {
    case 0: *cap = &L->capunsup; return &L->unsup;
    case 1: *cap = &L->capnocode; return &L->nocode;
    case 2: *cap = &L->capunreal; return &L->unreal;
    default: *cap = &L->capdeclared; return &L->declared;
    }
}

static int counts_save(struct loader *L, struct counts_before *b)
{
    memset(b, 0, sizeof *b);
    for (int w = 0; w < 4; w++) {
        uint64_t *cap, **a = counts_array(L, w, &cap);
        b->n[w] = *cap;
        if (*cap && !(b->v[w] = malloc(*cap * sizeof **a)))
            return maya_error("out of memory loading the job");
        if (*cap)
            memcpy(b->v[w], *a, *cap * sizeof **a);
    }
    b->extrapolated = L->j->extrapolated;
    b->kernel_launches = L->j->kernel_launches;
    b->no_code_launches = L->j->no_code_launches;
    b->sass_unread_launches = L->j->sass_unread_launches;
    return 0;
}

static void counts_free(struct counts_before *b)
{
    for (int w = 0; w < 4; w++)
        free(b->v[w]);
}

/* Keep the reference just read from its source as a template. */
static int add_template(struct loader *L, uint64_t *key, uint32_t nkey, const struct counts_before *b)
{
    if (SIM_GROW(L->tpl, L->captpl, L->ntpl + 1) < 0)
        return maya_error("out of memory loading the job");
    struct ref_template *t = &L->tpl[L->ntpl];
    memset(t, 0, sizeof *t);
    t->rank = (uint32_t)(L->cur - L->j->ranks);
    t->dev = L->ref_dev;
    t->key = key;
    t->nkey = nkey;
    if (!(t->comms = malloc(MAYA_MAX(L->nref_comms, 1) * sizeof *t->comms)))
        return maya_error("out of memory loading the job");
    memcpy(t->comms, L->ref_comms, L->nref_comms * sizeof *t->comms);
    t->ncomms = L->nref_comms;
    t->extrapolated = L->j->extrapolated - b->extrapolated;
    t->kernel_launches = L->j->kernel_launches - b->kernel_launches;
    t->no_code_launches = L->j->no_code_launches - b->no_code_launches;
    t->sass_unread_launches = L->j->sass_unread_launches - b->sass_unread_launches;
    uint64_t cap = 0;
    for (int w = 0; w < 4; w++) {
        uint64_t *acap, **a = counts_array(L, w, &acap);
        for (uint64_t i = 0; i < *acap; i++) {
            uint64_t was = i < b->n[w] ? b->v[w][i] : 0;
            if ((*a)[i] == was)
                continue;
            if (SIM_GROW(t->names, cap, (uint64_t)t->nnames + 1) < 0)
                return maya_error("out of memory loading the job");
            t->names[t->nnames++] = (struct name_count){ (uint32_t)w, (uint32_t)i + 1, (*a)[i] - was };
        }
    }
    int created;
    uint64_t h = key_hash(key, nkey);
    for (uint64_t c = 0;; c++) {
        uint64_t *v = maya_map_put(&L->tpl_of, h, c, &created);
        if (!v)
            return maya_error("out of memory loading the job");
        if (created) {
            *v = ++L->ntpl;
            return 0;
        }
    }
}

/* The current reference's work as a copy of template t's loaded work (or of
 * the rank t folded into, whose work is t's but for its communicators and
 * devices), its communicators and device renamed to the reference's: what
 * reading its source again would load. Kept as that renaming (a lazy rank,
 * fold.c) until it is replayed: O(communicators) where its copy folds into
 * the rank it copies, or one that does the same work. 1 done, 0 not
 * possible (nothing changed), -1 on error. */
static int take_copy(struct loader *L, const struct ref_template *t)
{
    struct sim_job *j = L->j;
    uint32_t ri = (uint32_t)(L->cur - j->ranks);
    const struct sim_rank *T = &j->ranks[t->rank];
    uint32_t xi = T->fold >= 0 ? (uint32_t)T->fold : t->rank;
    const struct sim_rank *X = &j->ranks[xi];
    if (t->ncomms != L->nref_comms || X->fold >= 0 || X->lazy || (X->nops && !X->ops))
        return 0;
    const struct sim_uses *u = sim_rank_uses(j, xi);
    struct sim_lazy *z = calloc(1, sizeof *z);
    if (z)
        z->comms = malloc(MAYA_MAX(t->ncomms, 1) * sizeof *z->comms);
    if (z && T->fold >= 0 && T->ndev_map && (z->unmap = malloc(T->ndev_map * sizeof *z->unmap)))
        memcpy(z->unmap, T->dev_map, (z->nunmap = T->ndev_map) * sizeof *z->unmap);
    if (!u || !z || !z->comms || (T->fold >= 0 && T->ndev_map && !z->unmap)) {
        sim_lazy_free(z);
        return maya_error("out of memory loading the job");
    }
    z->of = xi;
    z->src_dev = L->sect[L->ref_source].first_dev;
    z->tpl_dev = t->dev;
    z->dev = L->ref_dev;
    int ok = 1;
    for (uint32_t k = 0; k < t->ncomms && ok; k++) {
        int64_t x = T->fold >= 0 ? sim_fold_theirs(T, t->comms[k]) : t->comms[k];
        if ((ok = x >= 0))
            z->comms[z->ncomms++] = (struct sim_comm_pair){ L->ref_comms[k], (uint32_t)x };
    }
    for (uint32_t k = 0; k < u->ncomms && ok; k++) /* every one its work uses is the reference's */
        ok = sim_comm_mine(z->comms, z->ncomms, u->comms[k].comm) >= 0;
    if (!ok) {
        sim_lazy_free(z);
        return 0;
    }
    /* what loading the template counted, counted again */
    struct sim_rank *r = L->cur;
    r->unsupported = T->unsupported;
    r->values_not_computed = T->values_not_computed;
    r->values_declared = T->values_declared;
    r->peak_bytes = MAYA_MAX(r->peak_bytes, T->peak_bytes);
    j->extrapolated += t->extrapolated;
    j->kernel_launches += t->kernel_launches;
    j->no_code_launches += t->no_code_launches;
    j->sass_unread_launches += t->sass_unread_launches;
    for (uint32_t i = 0; i < t->nnames; i++) {
        uint64_t *cap, **a = counts_array(L, (int)t->names[i].which, &cap), old = *cap;
        if (SIM_GROW(*a, *cap, t->names[i].id) < 0) {
            sim_lazy_free(z);
            return maya_error("out of memory loading the job");
        }
        memset(*a + old, 0, (*cap - old) * sizeof **a);
        (*a)[t->names[i].id - 1] += t->names[i].n;
    }
    return sim_make_lazy(j, ri, z) < 0 ? -1 : 1;
}

/* At a reference's RANK_END: its work, as a copy of a template's where
 * one has its key, else read from its source (and kept as a template).
 * Only where an op's estimate depends on its record alone (not the
 * oracle's ranks), no transfer's details are kept and no rank is slowed. */
static int take_ref(struct loader *L)
{
    const struct section *src = &L->sect[L->ref_source];
    int fast = L->cfg->estimate_by_content && !L->j->keep_xfers && L->slow == 1.0;
    uint64_t *key = NULL;
    uint32_t nkey = 0;
    if (fast && ref_key(L, src, &key, &nkey) < 0)
        return -1;
    const struct ref_template *t = fast ? find_template(L, key, nkey) : NULL;
    int rc = t ? take_copy(L, t) : 0;
    if (rc != 0) {
        L->j->refs_copied += rc > 0;
        free(key);
        col_ref_map_free(L->ref);
        L->ref = NULL;
        L->nref_comms = 0;
        return rc < 0 ? -1 : 0;
    }
    struct counts_before b;
    rc = fast && !t ? counts_save(L, &b) : 0;
    if (rc == 0)
        rc = materialise(L);
    L->j->refs_read += rc == 0;
    if (rc == 0 && fast && !t) {
        rc = add_template(L, key, nkey, &b);
        key = NULL;
    }
    if (fast && !t)
        counts_free(&b);
    free(key);
    L->nref_comms = 0;
    return rc;
}

/* ---- job records ---- */

/* Most members a communicator may have: a send/recv's comm ranks are packed
 * into 20 bits (engine.c), and maya run starts at most 2^20 processes. */
#define MAX_COMM_MEMBERS (1 << 20)

static int add_comm(struct loader *L, const struct maya_rec_job_comm *rc)
{
    struct sim_job *j = L->j;
    if (rc->nranks < 1 || rc->nranks > MAX_COMM_MEMBERS)
        return maya_error("%s: communicator 0x%llx of %d members: expected 1 to %d",
                          maya_trace_path(L->r), (unsigned long long)rc->comm, rc->nranks, MAX_COMM_MEMBERS);
    if (maya_map_get(&j->comm_ids, rc->comm, 0))
        return maya_error("%s: communicator 0x%llx is listed twice", maya_trace_path(L->r),
                          (unsigned long long)rc->comm);
    if (SIM_GROW(j->comms, L->capcomms, j->ncomms + 1) < 0)
        return maya_error("out of memory loading the job");
    struct sim_comm *c = &j->comms[j->ncomms];
    memset(c, 0, sizeof *c);
    const struct maya_job_member *m = (const void *)(rc + 1);
    if (rc->h.bytes < sizeof *rc + (uint64_t)rc->nranks * sizeof *m)
        return maya_error("%s: communicator 0x%llx of %d members in a record of %u bytes", maya_trace_path(L->r),
                          (unsigned long long)rc->comm, rc->nranks, rc->h.bytes);
    c->id = rc->comm;
    c->nranks = rc->nranks;
    c->member_node = calloc((size_t)rc->nranks, sizeof *c->member_node);
    c->member_nic = calloc((size_t)rc->nranks, sizeof *c->member_nic);
    c->member_gpu = calloc((size_t)rc->nranks, sizeof *c->member_gpu);
    c->nodes = calloc((size_t)rc->nranks, sizeof *c->nodes);
    c->nics = calloc((size_t)rc->nranks, sizeof *c->nics);
    c->member_rank = calloc((size_t)rc->nranks, sizeof *c->member_rank);
    if (!c->member_node || !c->member_nic || !c->member_gpu || !c->nodes || !c->nics || !c->member_rank)
        return maya_error("out of memory loading the job");
    /* distinct nodes and NICs, each seen once per communicator (stamps:
     * O(members) per communicator) */
    L->stamp++;
    int gpn = MAYA_MAX(j->gpus_per_node, 1);
    for (int i = 0; i < rc->nranks; i++) {
        int node = m[i].global_gpu >= 0 ? m[i].global_gpu / gpn : 0;
        if (node >= j->nodes)
            return maya_error("%s: communicator 0x%llx: member %d is GPU %d, on node %d, but the job has %d nodes",
                              maya_trace_path(L->r), (unsigned long long)rc->comm, i, m[i].global_gpu, node,
                              j->nodes);
        int nic = sim_nic_of_gpu(j, m[i].global_gpu);
        c->member_node[i] = node;
        c->member_rank[i] = m[i].rank;
        c->member_nic[i] = nic;
        /* its ports; a member no trace placed has none (it shares nothing) */
        c->member_gpu[i] = m[i].global_gpu >= 0 && m[i].global_gpu < (long)j->nodes * gpn ? m[i].global_gpu : -1;
        if (L->node_seen[node] != L->stamp) {
            L->node_seen[node] = L->stamp;
            c->nodes[c->nnodes++] = node;
        }
        if (L->nic_seen[nic] != L->stamp) {
            L->nic_seen[nic] = L->stamp;
            c->nics[c->nnics++] = nic;
        }
    }
    c->max_per_node = rc->max_per_node;
    uint64_t *v = maya_map_put(&j->comm_ids, rc->comm, 0, NULL);
    if (!v)
        return maya_error("out of memory loading the job");
    *v = ++j->ncomms;
    return 0;
}

static int job_record(struct loader *L, const struct maya_rec_hdr *h, uint32_t *ncomms_expected)
{
    struct sim_job *j = L->j;
    switch (h->type) {
    case MAYA_REC_JOB: {
        const struct maya_rec_job *jr = (const void *)h;
        if (j->ranks)
            return maya_error("%s: two job records", maya_trace_path(L->r));
        /* Every count sizes an allocation: each is checked against what a
         * job can hold before it is trusted (a damaged file must not make
         * maya allocate gigabytes or write past an array). */
        if (jr->nranks < 1 || jr->nranks > (1 << 24))
            return maya_error("%s: a job of %d ranks: expected 1 to %d", maya_trace_path(L->r), jr->nranks,
                              1 << 24);
        if (jr->world_size > (1 << 24))
            return maya_error("%s: a world size of %d: expected at most %d", maya_trace_path(L->r),
                              jr->world_size, 1 << 24);
        int most_nodes = MAYA_MAX(jr->world_size, jr->nranks);
        if (jr->nodes < 0 || jr->nodes > most_nodes)
            return maya_error("%s: a job of %d nodes for %d ranks (world size %d): expected 1 to %d",
                              maya_trace_path(L->r), jr->nodes, jr->nranks, jr->world_size, most_nodes);
        if (jr->gpus_per_node < 0 || jr->gpus_per_node > 4096)
            return maya_error("%s: %d GPUs per node: expected 0 to 4096", maya_trace_path(L->r),
                              jr->gpus_per_node);
        j->world_size = jr->world_size;
        L->ranks_announced = jr->nranks;
        j->nodes = MAYA_MAX(jr->nodes, 1);
        j->gpus_per_node = jr->gpus_per_node;
        memcpy(j->gpu, jr->gpu, sizeof j->gpu);
        j->gpu[sizeof j->gpu - 1] = 0;
        /* ranks and communicators grow as their records come (a count
         * alone allocates nothing): memory follows what the file holds */
        if (SIM_GROW(j->ranks, L->capranks, 1) < 0)
            return maya_error("out of memory loading the job");
        if (sim_nic_setup(j, L->cfg->cluster) < 0)
            return -1;
        L->node_seen = calloc((size_t)j->nodes, sizeof *L->node_seen);
        L->nic_seen = calloc(MAYA_MAX(j->nnics, 1), sizeof *L->nic_seen);
        if (!L->node_seen || !L->nic_seen)
            return maya_error("out of memory loading the job");
        *ncomms_expected = jr->ncomms;
        j->nranks = 0;
        return 0;
    }
    case MAYA_REC_JOB_COMM: {
        const struct maya_rec_job_comm *c = (const void *)h;
        if (!j->ranks || j->ncomms >= *ncomms_expected)
            return maya_error("%s: a communicator record where none was announced", maya_trace_path(L->r));
        return add_comm(L, c);
    }
    case MAYA_REC_RANK_BEGIN: {
        const struct maya_rec_rank_begin *b = (const void *)h;
        if (!j->ranks)
            return maya_error("%s: a rank section before the job record", maya_trace_path(L->r));
        maya_progress("loading the job", (uint64_t)j->nranks, (uint64_t)L->ranks_announced);
        if (maya_check_stop("loading the job") < 0)
            return -1;
        if (j->nranks >= L->ranks_announced)
            return maya_error("%s: more rank sections than the %d the job record announces",
                              maya_trace_path(L->r), L->ranks_announced);
        if (L->cur)
            return maya_error("%s: rank %d's section begins inside rank %d's", maya_trace_path(L->r), b->rank,
                              L->cur->rank);
        if (fold_loaded(L) < 0 || sim_fold_next_node(j, b->node) < 0)
            return -1;
        if (SIM_GROW(j->ranks, L->capranks, (uint64_t)j->nranks + 1) < 0)
            return maya_error("out of memory loading the job");
        if (SIM_GROW(L->sect, L->capsect, (uint64_t)j->nranks + 1) < 0)
            return maya_error("out of memory loading the job");
        struct section *sc = &L->sect[j->nranks];
        maya_trace_position(L->r, &sc->chunk, &sc->byte);
        sc->first_dev = -1;
        sc->is_ref = 0;
        sc->comms = NULL;
        sc->ncomms = 0;
        int created;
        uint64_t *si = maya_map_put(&L->sect_of, (uint64_t)(uint32_t)b->rank, 0, &created);
        if (!si)
            return maya_error("out of memory loading the job");
        if (!created)
            return maya_error("%s: two sections for rank %d", maya_trace_path(L->r), b->rank);
        *si = (uint64_t)j->nranks + 1;
        struct sim_rank *r = &j->ranks[j->nranks++];
        memset(r, 0, sizeof *r);
        r->rank = b->rank;
        r->node = b->node;
        r->local_rank = b->local_rank;
        r->complete = b->complete;
        j->incomplete_ranks += !b->complete;
        r->sync_device = -1;
        j->host_cpu_ranks += (b->flags & MAYA_TRACE_F_HOST_CPU) != 0;
        j->host_active_ranks += (b->flags & MAYA_TRACE_F_HOST_CPU) == 0 && (b->flags & MAYA_TRACE_F_HOST_ACTIVE) != 0;
        L->cur = r;
        L->prev_exit = 0;
        L->first_call = 0;
        L->slow = 1.0;
        for (int k = 0; k < L->cfg->nslow; k++)
            if (L->cfg->slow[k].rank == b->rank)
                L->slow = L->cfg->slow[k].factor;
        if (b->node < 0 || b->node >= j->nodes)
            return maya_error("rank %d is on node %d, but the job has %d nodes", b->rank, b->node, j->nodes);
        return 0;
    }
    case MAYA_REC_RANK_REBUILT:
        return rebuilt_record(L, (const struct maya_rec_rank_rebuilt *)h);
    case MAYA_REC_RANK_END: {
        const struct maya_rec_rank_end *e = (const void *)h;
        const struct maya_end_device *d = (const void *)(e + 1);
        struct sim_rank *r = L->cur;
        if (!r)
            return maya_error("%s: a rank end without its beginning", maya_trace_path(L->r));
        if (L->ref && take_ref(L) < 0)
            return -1;
        struct section *sc = &L->sect[r - j->ranks];
        if (!sc->is_ref && r->nbars) {
            /* its communicators, for the keys of references to it (ref_key) */
            if (!(sc->comms = malloc(r->nbars * sizeof *sc->comms)))
                return maya_error("out of memory loading the job");
            for (uint32_t k = 0; k < r->nbars; k++)
                sc->comms[k] = r->bars[k].comm;
            sc->ncomms = r->nbars;
        }
        for (uint32_t i = 0; i < e->ndevices; i++)
            r->peak_bytes = MAYA_MAX(r->peak_bytes, d[i].peak_bytes);
        r->oom |= e->oom != 0;
        L->cur = NULL;
        return fold_loaded(L);
    }
    default:
        return 0;
    }
}

int sim_load(const char *path, const struct sim_config *cfg, struct sim_job **out)
{
    struct sim_job *j = calloc(1, sizeof *j);
    if (!j)
        return maya_error("out of memory");
    struct loader L = { .j = j, .cfg = cfg };
    if (maya_trace_open(path, &L.r) < 0) {
        free(j);
        return -1;
    }
    int rc = 0;
    if (maya_trace_header(L.r)->kind != MAYA_TRACE_JOB)
        rc = maya_error("%s is a rank trace; the simulator reads job traces (maya report collates them)", path);
    if (cfg->iteration_marker)
        snprintf(j->marker, sizeof j->marker, "%s", cfg->iteration_marker);
    j->keep_iterations = cfg->keep_iterations;
    j->keep_xfers = cfg->keep_xfers;
    j->workload_failed = cfg->workload_failed;
    j->gpu_spec = cfg->gpu;
    j->no_fold = cfg->no_fold;
    j->fold_similar = cfg->fold_similar;
    j->slowed = cfg->nslow > 0;
    for (int k = 0; rc == 0 && k < cfg->nslow; k++)
        if (!(cfg->slow[k].factor > 0 && cfg->slow[k].factor < 1e6))
            rc = maya_error("slow rank %d: a factor of %g (expected more than 0)", cfg->slow[k].rank,
                            cfg->slow[k].factor);
    uint32_t ncomms = 0;
    const struct maya_rec_hdr *h;
    while (rc == 0 && (rc = maya_trace_next(L.r, &h)) > 0) {
        forget_definition(&L, 0, h);
        if (h->type >= MAYA_REC_JOB && h->type < 128)
            rc = job_record(&L, h, &ncomms);
        else if (L.ref)
            rc = ref_record(&L, h);
        else
            rc = load_record(&L, h);
    }
    maya_trace_close(L.r);
    maya_trace_close(L.r2);
    col_ref_map_free(L.ref);
    for (uint64_t i = 0; i < L.capsect && i < (uint64_t)j->nranks; i++)
        free(L.sect[i].comms);
    free(L.sect);
    maya_map_free(&L.sect_of);
    free(L.ref_comms);
    for (uint64_t i = 0; i < L.ntpl; i++)
        free(L.tpl[i].key), free(L.tpl[i].comms), free(L.tpl[i].names);
    free(L.tpl);
    maya_map_free(&L.tpl_of);
    sim_memo_free(L.memo);
    free(L.kd[0]);
    free(L.kd[1]);
    free(L.nid[0]);
    free(L.nid[1]);
    free(L.sl);
    free(L.node_seen);
    free(L.nic_seen);
    if (rc == 0 && !j->ranks)
        rc = maya_error("%s: no job record: not a collated job trace", path);
    if (rc == 0 && (!(j->unsupported_by_name = by_name(j, L.unsup, L.capunsup)) ||
                    !(j->no_code_by_name = by_name(j, L.nocode, L.capnocode)) ||
                    !(j->unreal_by_name = by_name(j, L.unreal, L.capunreal)) ||
                    !(j->declared_by_name = by_name(j, L.declared, L.capdeclared))))
        rc = maya_error("out of memory");
    free(L.unsup);
    free(L.nocode);
    free(L.unreal);
    free(L.declared);
    if (rc == 0)
        rc = fold_loaded(&L);
    if (rc == 0)
        rc = sim_fold_finish(j);
    for (int i = 0; rc == 0 && i < j->nranks; i++) {
        struct sim_rank *r = &j->ranks[i];
        j->total_ops += SIM_REPLAYED(j, r)->nops;
        if (r->fold >= 0)
            continue;
        r->times = calloc(MAYA_MAX(r->nops, 1), sizeof *r->times);
        if (!r->times)
            rc = maya_error("out of memory for the replay of rank %d (%llu ops)", r->rank,
                            (unsigned long long)r->nops);
    }
    if (rc < 0) {
        sim_free(j);
        return -1;
    }
    *out = j;
    return 0;
}

void sim_free(struct sim_job *j)
{
    if (!j)
        return;
    for (int i = 0; i < j->nranks; i++) {
        struct sim_rank *r = &j->ranks[i];
        free(r->ops);
        free(r->xinfo);
        free(r->times);
        free(r->streams);
        free(r->events);
        free(r->waits);
        free(r->bars);
        maya_map_free(&r->comms_joined);
        free(r->iter_start);
        free(r->iter_stop);
        free(r->comm_map);
        free(r->dev_map);
        sim_lazy_free(r->lazy);
        sim_uses_free(r->uses);
        maya_map_free(&r->stream_ids);
        maya_map_free(&r->event_ids);
    }
    free(j->ranks);
    for (uint32_t i = 0; i < j->nstreams; i++) {
        free(j->streams[i].q);
        free(j->streams[i].waiters);
    }
    free(j->streams);
    for (uint32_t i = 0; i < j->ncomms; i++) {
        free(j->comms[i].waiting);
        free(j->comms[i].nodes);
        free(j->comms[i].member_node);
        free(j->comms[i].member_rank);
        free(j->comms[i].member_nic);
        free(j->comms[i].member_gpu);
        free(j->comms[i].nics);
    }
    free(j->comms);
    for (uint32_t i = 0; i < j->nengines; i++)
        free(j->engines[i].q);
    free(j->engines);
    for (uint32_t i = 0; i < j->nnames; i++)
        free(j->names[i]);
    free(j->names);
    free(j->unsupported_by_name);
    free(j->unreal_by_name);
    free(j->declared_by_name);
    free(j->no_code_by_name);
    maya_map_free(&j->name_ids);
    maya_map_free(&j->comm_ids);
    maya_map_free(&j->engine_ids);
    maya_map_free(&j->held_ids);
    for (uint32_t i = 0; i < j->nheld; i++)
        free(j->held[i].v);
    free(j->held);
    maya_map_free(&j->xfer_ids);
    maya_map_free(&j->fold_classes);
    free(j->fold_target);
    maya_map_free(&j->fold_index);
    free(j->pending);
    free(j->fold_replays);
    for (uint32_t i = 0; i < j->capxfers && i < j->nxfers; i++) {
        free(j->xfers[i].who);
        free(j->xfers[i].slots);
    }
    free(j->xfers);
    free(j->free_xfers);
    sim_nic_free(j);
    free(j->iter_times_s);
    free(j->iter_end);
    free(j->iter_partial);
    sim_heap_free(&j->heap);
    free(j);
}

/* The emulated GPU's clock, so that CUDA events time what the chosen GPU
 * would take (cudaEventElapsedTime, torch.cuda.Event.elapsed_time, the
 * autotuners of Triton and cuDNN-benchmark mode).
 *
 * Every op the trace records (kernel launch, GEMM, cuDNN call, copy, memset,
 * collective) gets a device duration from the estimator's analytical model
 * (hwspecs only: the learned models would load XGBoost into every emulated
 * process). Each stream keeps a clock: an op starts when the stream's
 * previous op ends, or when the host issues it, whichever is later, and ends
 * its duration later. The host's clock here is an ideal host: it advances by
 * the estimated cost of each call (a launch costs microseconds), not by the
 * emulator's own much slower pace, and catches up with the device at every
 * synchronisation. Events take the time of the point where they are recorded;
 * a stream that waits on an event starts no earlier than it. The legacy
 * default stream waits for the device's blocking streams and they for it.
 *
 * This is a small online version of what sim/ replays exactly afterwards;
 * its only consumer is event timing. Cost: one hash lookup and one analytical
 * estimate (about 0.5 us) per traced op. */
#include "emu.h"
#include "maya/common.h"
#include "est_internal.h"
#include "maya/kwork.h"

#include <stddef.h>

#include <stdlib.h>
#include <string.h>

struct sclock {
    uint64_t id;                 /* stream id, 0 = free slot */
    uint64_t t_ns;               /* when its last op ends */
    int device;
    uint32_t flags;              /* MAYA_STREAM_* */
};

struct eclock {
    uint64_t id;                 /* event id, 0 = free slot */
    uint64_t t_ns;
    uint32_t version;
    uint64_t told;               /* threads (a bit each, by hash) told this version is pending */
};

struct kdef {
    struct maya_rec_kernel *rec; /* copy of the KERNEL record */
    const char *name;
    /* the parameter bytes its work summary reads (offset, bytes), for the
     * memo below; nrefs -1: none kept (no summary, or too many) */
    int nrefs;
    uint16_t ref_off[24];
    uint8_t ref_bytes[24];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int state;                /* 0 not set up, 1 running, -1 unavailable */
static struct maya_hwspecs hw;
static struct maya_cluster_spec cluster;
static const struct maya_gpu_spec *gpu;
static uint64_t host_ns;         /* the ideal host's clock */
static struct sclock *streams;   /* open addressing by id; O(1) expected */
static size_t nstreams, cap_streams;
static struct eclock *events;
static size_t nevents, cap_events;
static struct kdef *kernels;     /* by kernel id */
static size_t cap_kernels;
/* Per device, the latest end of any op on its legacy stream and on its
 * blocking streams: clocks only move forward, so these running maxima are
 * what the legacy stream's implicit waits need, in O(1) per op. */
static uint64_t legacy_end[64], blocking_end[64];
static const char **api_text;    /* api string id -> text, cached (strings live forever) */
static size_t cap_api_text;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return x ^ (x >> 33);
}

/* The slot of id in an open-addressed table of elem-byte entries whose first
 * field is the uint64_t id; grows at half full. NULL when out of memory. */
static void *slot(void **table, size_t *n, size_t *cap, size_t elem, uint64_t id)
{
    if (*n * 2 >= *cap) {
        size_t ncap = *cap ? *cap * 2 : 256;
        unsigned char *t = calloc(ncap, elem);
        if (!t)
            return NULL;
        for (size_t i = 0; i < *cap; i++) {
            unsigned char *e = (unsigned char *)*table + i * elem;
            uint64_t eid;
            memcpy(&eid, e, sizeof eid);
            if (!eid)
                continue;
            size_t j = mix(eid) & (ncap - 1);
            while (*(uint64_t *)(t + j * elem))
                j = (j + 1) & (ncap - 1);
            memcpy(t + j * elem, e, elem);
        }
        free(*table);
        *table = t;
        *cap = ncap;
    }
    size_t i = mix(id) & (*cap - 1);
    for (;;) {
        unsigned char *e = (unsigned char *)*table + i * elem;
        uint64_t eid = *(uint64_t *)e;
        if (eid == id)
            return e;
        if (!eid) {
            *(uint64_t *)e = id;
            ++*n;
            return e;
        }
        i = (i + 1) & (*cap - 1);
    }
}

static struct sclock *stream_of(uint64_t id)
{
    return slot((void **)&streams, &nstreams, &cap_streams, sizeof *streams, id);
}

static struct eclock *event_of(uint64_t id)
{
    return slot((void **)&events, &nevents, &cap_events, sizeof *events, id);
}

static int setup(void)
{
    const struct emu_config *cfg = emu_config();
    gpu = cfg ? cfg->gpu : NULL;
    if (!gpu || maya_hwspecs_load_default((const void *)setup, &hw) < 0 ||
        maya_default_cluster(&hw, gpu, cfg->gpus_per_node, &cluster) < 0)
        return -1;
    return 1;
}

/* When an op on stream s can start: after the stream's last op, after the
 * host issued it, and for the legacy default stream and the blocking
 * streams, after each other's work on the device. */
static uint64_t start_time(const struct sclock *s)
{
    uint64_t t = MAYA_MAX(s->t_ns, host_ns);
    if ((s->flags & MAYA_STREAM_NON_BLOCKING) || s->device < 0 || s->device >= 64)
        return t;
    if (s->flags & MAYA_STREAM_LEGACY)
        return MAYA_MAX(t, blocking_end[s->device]);
    return MAYA_MAX(t, legacy_end[s->device]);
}

/* The stream's last op now ends at t (clocks only move forward). */
static void advance(struct sclock *s, uint64_t t)
{
    s->t_ns = MAYA_MAX(s->t_ns, t);
    if ((s->flags & MAYA_STREAM_NON_BLOCKING) || s->device < 0 || s->device >= 64)
        return;
    uint64_t *end = (s->flags & MAYA_STREAM_LEGACY) ? &legacy_end[s->device] : &blocking_end[s->device];
    *end = MAYA_MAX(*end, s->t_ns);
}

static const char *api_name(uint32_t id)
{
    if (id >= cap_api_text) {
        size_t ncap = MAYA_MAX((size_t)id + 1, cap_api_text * 2);
        const char **n = realloc(api_text, ncap * sizeof *n);
        if (!n)
            return emu_string_text(id);
        memset(n + cap_api_text, 0, (ncap - cap_api_text) * sizeof *n);
        api_text = n;
        cap_api_text = ncap;
    }
    if (!api_text[id])
        api_text[id] = emu_string_text(id);
    return api_text[id];
}

static void sync_device(int device)
{
    for (size_t i = 0; i < cap_streams; i++)
        if (streams[i].id && streams[i].device == device)
            host_ns = MAYA_MAX(host_ns, streams[i].t_ns);
}

static void keep_kernel(const struct maya_rec_kernel *k)
{
    if (k->id >= 1u << 24)
        return;
    if (k->id >= cap_kernels) {
        size_t ncap = MAYA_MAX((size_t)k->id + 1, cap_kernels * 2);
        struct kdef *n = realloc(kernels, ncap * sizeof *n);
        if (!n)
            return;
        memset(n + cap_kernels, 0, (ncap - cap_kernels) * sizeof *n);
        kernels = n;
        cap_kernels = ncap;
    }
    struct maya_rec_kernel *copy = malloc(k->h.bytes);
    if (!copy)
        return;
    memcpy(copy, k, k->h.bytes);
    free(kernels[k->id].rec);
    struct kdef *kd = &kernels[k->id];
    kd->rec = copy;
    kd->name = emu_string_text(k->name);
    kd->nrefs = -1;
    const struct maya_kwork *w = maya_kernel_work(copy, NULL);
    if (w) {
        const struct maya_kexpr *x = maya_kwork_exprs(w);
        kd->nrefs = 0;
        for (uint32_t i = 0; i < w->nexprs && kd->nrefs >= 0; i++) {
            if (x[i].op == MAYA_KX_PARAM_AT) {
                kd->nrefs = -1; /* reads the parameters at offsets the launch decides */
                break;
            }
            if (x[i].op != MAYA_KX_PARAM)
                continue;
            if (kd->nrefs == (int)MAYA_ARRAY_LEN(kd->ref_off))
                kd->nrefs = -1;
            else {
                kd->ref_off[kd->nrefs] = x[i].a;
                kd->ref_bytes[kd->nrefs++] = (uint8_t)x[i].b;
            }
        }
    }
}

/* Launches of kernels priced from their code repeat (a training loop): the
 * device time of the last ones is kept, keyed by everything after the call
 * header (kernel, grid, block, parameter values, extents), so that a
 * repeated launch costs a hash and a compare instead of evaluating the
 * kernel's work summary again. Direct-mapped, 256 entries of at most 256
 * bytes of key (larger keys are evaluated each time). */
#define MEMO_SLOTS 256
#define MEMO_KEY_BYTES 256
struct memo {
    uint32_t bytes;              /* key length, 0 = empty */
    uint64_t dev_ns;
    unsigned char key[MEMO_KEY_BYTES];
};
static struct memo *memo;

static uint64_t key_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* The memo's key of a launch of a kernel with a work summary: what its
 * time depends on (kernel, grid, block, shared memory, the parameter bytes
 * the summary reads, the pointers' extents); 0 when it has none. */
static size_t launch_key(const struct maya_rec_launch *l, unsigned char *key)
{
    if (l->kernel >= cap_kernels || !kernels[l->kernel].rec || kernels[l->kernel].nrefs < 0)
        return 0;
    const struct kdef *kd = &kernels[l->kernel];
    size_t n = offsetof(struct maya_rec_launch, flags) - offsetof(struct maya_rec_launch, kernel);
    memcpy(key, &l->kernel, n);
    const unsigned char *params = (const unsigned char *)(l + 1);
    for (int i = 0; i < kd->nrefs; i++) {
        if ((uint32_t)kd->ref_off[i] + kd->ref_bytes[i] > l->param_bytes || n + 8 > MEMO_KEY_BYTES)
            return 0;
        memcpy(key + n, params + kd->ref_off[i], kd->ref_bytes[i]);
        n += kd->ref_bytes[i];
    }
    uint32_t ne;
    const struct maya_kextent *ext = maya_launch_extents(l, &ne);
    for (uint32_t i = 0; ext && i < ne; i++) {
        if (n + sizeof ext[i].bytes > MEMO_KEY_BYTES)
            return 0;
        memcpy(key + n, &ext[i].bytes, sizeof ext[i].bytes);
        n += sizeof ext[i].bytes;
    }
    return n;
}

/* Device and host time of one op, from the analytical model. */
static void estimate(const struct maya_rec_hdr *h, const struct maya_call *c, uint64_t *dev, uint64_t *host)
{
    struct est_op op = { .rec = h, .api = api_name(c->api), .rank = emu_config()->rank };
    struct memo *slot = NULL;
    unsigned char key[MEMO_KEY_BYTES];
    size_t key_bytes = h->type == MAYA_REC_LAUNCH ? launch_key((const struct maya_rec_launch *)h, key) : 0;
    if (key_bytes && (memo || (memo = calloc(MEMO_SLOTS, sizeof *memo)))) {
        slot = &memo[key_hash(key, key_bytes) & (MEMO_SLOTS - 1)];
        if (slot->bytes == key_bytes && !memcmp(slot->key, key, key_bytes)) {
            *dev = slot->dev_ns;
            double call_ns = est_host_ns(gpu, &op);
            *host = call_ns > 0 ? (uint64_t)call_ns : 0;
            return;
        }
    }
    if (h->type == MAYA_REC_LAUNCH) {
        uint32_t id = ((const struct maya_rec_launch *)h)->kernel;
        if (id < cap_kernels && kernels[id].rec) {
            op.kernel = kernels[id].rec;
            op.kernel_name = kernels[id].name;
        }
    }
    struct est_desc d;
    double dev_ns = 0;
    if (est_describe(&op, &d) == 0 && d.family != EST_HOST)
        dev_ns = est_analytical_ns(gpu, &cluster, &d);
    double call_ns = est_host_ns(gpu, &op);
    *dev = dev_ns > 0 ? (uint64_t)dev_ns : 0;
    *host = call_ns > 0 ? (uint64_t)call_ns : 0;
    if (slot) {
        slot->bytes = (uint32_t)key_bytes;
        slot->dev_ns = *dev;
        memcpy(slot->key, key, key_bytes);
    }
}

EMU_API void emu_clock_record(const void *rec)
{
    const struct maya_rec_hdr *h = rec;
    if (h->type != MAYA_REC_KERNEL && h->type != MAYA_REC_STREAM && !maya_rec_is_call(h->type))
        return;
    if (maya_rec_is_call(h->type) && (h->flags & MAYA_F_CAPTURING))
        return;                  /* joins a graph: runs when the graph is launched */
    pthread_mutex_lock(&lock);
    if (state == 0)
        state = setup();
    if (state < 0) {
        pthread_mutex_unlock(&lock);
        return;
    }
    if (h->type == MAYA_REC_KERNEL) {
        keep_kernel(rec);
    } else if (h->type == MAYA_REC_STREAM) {
        const struct maya_rec_stream *r = rec;
        struct sclock *s = stream_of(r->stream);
        if (s) {
            s->device = r->device;
            s->flags = r->flags;
        }
    } else {
        const struct maya_call *c = &((const struct maya_rec_call *)rec)->call;
        switch (h->type) {
        case MAYA_REC_EVENT_RECORD: {
            const struct maya_rec_event *r = rec;
            struct sclock *s = stream_of(c->stream);
            struct eclock *e = event_of(r->event);
            if (s && e) {
                e->t_ns = start_time(s);
                e->version = r->version;
                e->told = 0;
            }
            break;
        }
        case MAYA_REC_STREAM_WAIT: {
            const struct maya_rec_event *r = rec;
            struct sclock *s = stream_of(c->stream);
            struct eclock *e = r->version ? event_of(r->event) : NULL;
            if (s && e && e->version == r->version)
                advance(s, e->t_ns);
            break;
        }
        case MAYA_REC_SYNC: {
            const struct maya_rec_sync *r = rec;
            if (r->kind == MAYA_SYNC_DEVICE) {
                sync_device(c->device);
            } else if (r->kind == MAYA_SYNC_STREAM) {
                struct sclock *s = stream_of(r->target);
                if (s)
                    host_ns = MAYA_MAX(host_ns, start_time(s));
            } else if (r->kind == MAYA_SYNC_EVENT) {
                struct eclock *e = event_of(r->target);
                if (e)
                    host_ns = MAYA_MAX(host_ns, e->t_ns);
            }
            break;
        }
        case MAYA_REC_LAUNCH: case MAYA_REC_MEMCPY: case MAYA_REC_MEMSET: case MAYA_REC_GEMM:
        case MAYA_REC_DNN: case MAYA_REC_COLL: {
            uint64_t dev, host;
            estimate(h, c, &dev, &host);
            host_ns += host;
            struct sclock *s = c->stream ? stream_of(c->stream) : NULL;
            if (s)
                advance(s, start_time(s) + dev);
            /* A copy to or from pageable memory returns when it is done. */
            if (s && (h->flags & MAYA_F_HOST_WAITS))
                host_ns = MAYA_MAX(host_ns, s->t_ns);
            break;
        }
        default:
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* The clock of an event's record `version` (under lock), or NULL when it
 * is not known: no clock, never recorded, or recorded again since. */
static struct eclock *recorded(uint64_t event, uint32_t version)
{
    if (state <= 0 || !cap_events)
        return NULL;
    for (size_t i = mix(event) & (cap_events - 1); events[i].id; i = (i + 1) & (cap_events - 1))
        if (events[i].id == event)
            return events[i].version == version ? &events[i] : NULL;
    return NULL;
}

EMU_API int emu_clock_event_pending(uint64_t event, uint32_t version, uint64_t thread)
{
    int pending = 0;
    pthread_mutex_lock(&lock);
    struct eclock *e = recorded(event, version);
    uint64_t bit = 1ull << (mix(thread) & 63);
    if (e && e->t_ns > host_ns && !(e->told & bit)) {
        e->told |= bit;
        pending = 1;
    }
    pthread_mutex_unlock(&lock);
    return pending;
}

EMU_API int emu_clock_event_time(uint64_t event, uint32_t version, uint64_t *t_ns)
{
    pthread_mutex_lock(&lock);
    const struct eclock *e = recorded(event, version);
    if (e)
        *t_ns = e->t_ns;
    pthread_mutex_unlock(&lock);
    return e ? 0 : -1;
}

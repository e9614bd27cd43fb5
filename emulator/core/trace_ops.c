/* Tracing the operations every stand-in issues the same way whatever its API
 * (runtime or driver): allocations, copies, memsets, event records and waits,
 * synchronisations and host functions. Each library validates its own
 * arguments and maps its own error codes; what the trace says about the
 * operation, and whether small copies move bytes, is decided here once. */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"

#include <stdlib.h>
#include <string.h>

EMU_API void emu_trace_alloc(uint16_t type, uint32_t api, uint64_t t0, int result, uint64_t ptr,
                             uint64_t bytes, int kind, int device, uint64_t stream, uint16_t flags)
{
    if (!emu_tracing())
        return;
    /* Passthrough: the real libraries allocate; the table learns of their
     * device allocations here, so that launches record how far each pointer
     * reaches as an emulated run does. */
    if (emu_config()->passthrough && result == 0 && ptr && device >= 0 &&
        (kind == MAYA_ALLOC_DEVICE || kind == MAYA_ALLOC_ASYNC || kind == MAYA_ALLOC_MANAGED)) {
        if (type == MAYA_REC_ALLOC) {
            struct emu_alloc a = { .base = ptr, .bytes = bytes, .charged = bytes, .device = device, .kind = kind };
            emu_mem_table_add(&a);
        } else {
            emu_mem_table_forget(ptr);
        }
    }
    struct maya_rec_alloc r;
    memset(&r, 0, sizeof r);
    r.h.type = type;
    r.h.flags = flags;
    r.h.bytes = sizeof r;
    r.ptr = ptr;
    r.bytes = bytes;
    r.kind = (uint32_t)kind;
    r.device = device;
    if (device >= 0)
        emu_mem_usage(device, &r.device_used_bytes, &r.device_peak_bytes);
    emu_call_fill(&r.call, api, t0, result, stream);
    emu_trace_emit(&r);
}

EMU_API void emu_trace_sync(uint32_t api, uint64_t t0, int result, uint32_t kind, uint64_t target,
                            uint32_t version, uint64_t stream)
{
    if (!emu_tracing())
        return;
    struct maya_rec_sync r;
    memset(&r, 0, sizeof r);
    r.h.type = MAYA_REC_SYNC;
    r.h.bytes = sizeof r;
    r.kind = kind;
    r.target = target;
    r.version = version;
    emu_call_fill(&r.call, api, t0, result, stream);
    emu_trace_emit(&r);
}

EMU_API void emu_trace_event(uint16_t type, uint32_t api, uint64_t t0, int result,
                             const struct emu_event *e, uint32_t version, uint64_t stream)
{
    if (!emu_tracing())
        return;
    struct maya_rec_event r;
    memset(&r, 0, sizeof r);
    r.h.type = type;
    r.h.bytes = sizeof r;
    r.event = e->id;
    r.version = version;
    r.flags = e->flags;
    emu_call_fill(&r.call, api, t0, result, stream);
    emu_trace_emit(&r);
}

EMU_API void emu_event_record(struct emu_event *e, const struct emu_stream *s)
{
    e->version++;
    e->stream = s->id;
    e->device = s->device;
    /* The stand-in for a device clock (emu_event_elapsed): real time, which
     * always moves on. The host clock of the trace may stand still (the
     * wall clock while another thread waits inside the emulator, the cpu
     * clock while a thread's CPU time catches up with what it was
     * credited), and the work between two records would time 0. */
    e->t_ns = maya_mono_ns();
    /* Host functions run in queue order, so the event is complete once
     * every one queued before it has run. */
    e->hostfn_mark = emu_hostfn_mark();
}

EMU_API enum emu_err emu_event_elapsed(const struct emu_event *start, const struct emu_event *end, float *ms)
{
    /* Timing needs two recorded events made without DisableTiming
     * (cudaEventDisableTiming and CU_EVENT_DISABLE_TIMING are both 0x2). */
    if (!start || !end || ((start->flags | end->flags) & 0x2) || !start->version || !end->version)
        return EMU_ERR_INVALID_HANDLE;
    /* The emulated GPU's time between the two records (device_clock.c);
     * without a trace there is no clock, and the real time between them
     * (what the program spent issuing the work) stands in. */
    uint64_t a, b;
    if (emu_clock_event_time(start->id, start->version, &a) == 0 &&
        emu_clock_event_time(end->id, end->version, &b) == 0)
        *ms = (float)((double)(int64_t)(b - a) / 1e6);
    else
        *ms = (float)((double)(int64_t)(end->t_ns - start->t_ns) / 1e6);
    return EMU_OK;
}

/* Work issued to a capturing stream becomes a node of the capture's graph;
 * the call is traced as a CALL record flagged CAPTURING, not as an op. */
static enum emu_err capture(uint32_t api, uint64_t t0, int result, struct emu_stream *s,
                            const struct emu_node_params *p)
{
    enum emu_err e = emu_capture_add(s, p, NULL);
    emu_trace_call(api, t0, result, s->id, MAYA_F_CAPTURING);
    return e;
}

EMU_API enum emu_err emu_trace_host_func_on(uint32_t api, uint64_t t0, int result, void (*fn)(void *),
                                            void *user_data, struct emu_stream *s)
{
    if (result == 0 && emu_stream_capturing(s)) {
        struct emu_node_params p = { .type = EMU_NODE_HOST, .api = api, .host = { fn, user_data } };
        return capture(api, t0, result, s, &p);
    }
    emu_trace_host_func(api, t0, result, (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)user_data, s->id);
    return EMU_OK;
}

EMU_API enum emu_err emu_trace_op(uint32_t api, uint64_t t0, int result, struct emu_stream *s, void *rec)
{
    struct maya_rec_call *r = rec;
    if (result == 0 && r->h.type == MAYA_REC_GEMM && !emu_stream_capturing(s)) {
        /* the GEMM is not computed: its output holds no real values */
        const struct maya_rec_gemm *g = rec;
        emu_real_written(g->c, MAYA_WRITER_LIBRARY, api);
        emu_real_written(g->d, MAYA_WRITER_LIBRARY, api);
    }
    if (emu_stream_capturing(s)) {
        struct emu_node_params p = { .type = EMU_NODE_OP, .api = api, .op_rec = rec };
        enum emu_err e = emu_capture_add(s, &p, NULL);
        if (e == EMU_OK)
            emu_trace_call(api, t0, result, s->id, MAYA_F_CAPTURING);
        return e;
    }
    if (!emu_tracing())
        return EMU_OK;
    emu_call_fill(&r->call, api, t0, result, s->id);
    emu_trace_emit(r);
    return EMU_OK;
}

EMU_API void emu_trace_host_func(uint32_t api, uint64_t t0, int result, uint64_t fn, uint64_t user_data,
                                 uint64_t stream)
{
    if (!emu_tracing())
        return;
    struct maya_rec_host_func r;
    memset(&r, 0, sizeof r);
    r.h.type = MAYA_REC_HOST_FUNC;
    r.h.bytes = sizeof r;
    r.fn = fn;
    r.user_data = user_data;
    emu_call_fill(&r.call, api, t0, result, stream);
    emu_trace_emit(&r);
}

/* ---- copies ---- */

EMU_API void emu_copy_classify(struct emu_copy *c)
{
    int pin_d = 0, pin_s = 0;
    c->dst_device = emu_ptr_device((uint64_t)(uintptr_t)c->dst, &pin_d);
    c->src_device = emu_ptr_device((uint64_t)(uintptr_t)c->src, &pin_s);
    if (c->dst_device >= 0 && c->src_device >= 0) {
        c->pinned = 0;
        c->kind = c->dst_device == c->src_device ? MAYA_COPY_D2D : MAYA_COPY_PEER;
    } else if (c->dst_device >= 0) {
        c->pinned = pin_s;
        c->kind = MAYA_COPY_H2D;
    } else if (c->src_device >= 0) {
        c->pinned = pin_d;
        c->kind = MAYA_COPY_D2H;
    } else {
        c->pinned = pin_s && pin_d;
        c->kind = MAYA_COPY_H2H;
    }
}

static uint64_t copy_bytes(const struct emu_copy *c)
{
    return c->width * MAYA_MAX(c->height, 1) * MAYA_MAX(c->depth, 1);
}

/* Bytes from the first to the last a pitched copy's side touches. */
static uint64_t copy_extent(const struct emu_copy *c, uint64_t pitch, uint64_t slice)
{
    return (MAYA_MAX(c->depth, 1) - 1) * slice + (MAYA_MAX(c->height, 1) - 1) * pitch + c->width;
}

/* What a copy did to the real bytes (real_bytes.c): a performed one makes
 * its destination real where its source was (host memory always is); one
 * not performed leaves its device destination written by a copy that moved
 * nothing. A performed device-to-host copy of bytes that are not real is a
 * host read of values not computed: 1 and *vr filled to be traced. */
static int track_copy(uint32_t api, const struct emu_copy *c, int performed, struct maya_rec_value_read *vr)
{
    if (!emu_real_enabled() || c->kind == MAYA_COPY_H2H)
        return 0;
    uint64_t dst = (uint64_t)(uintptr_t)c->dst, src = (uint64_t)(uintptr_t)c->src;
    if (!performed) {
        if (c->dst_device >= 0)
            emu_real_spoil(dst, copy_extent(c, c->dpitch, c->dslice), MAYA_WRITER_COPY, api);
        return 0;
    }
    uint64_t height = MAYA_MAX(c->height, 1), depth = MAYA_MAX(c->depth, 1), unreal = 0;
    uint32_t kind = MAYA_WRITER_REAL, writer = 0;
    for (uint64_t z = 0; z < depth; z++)
        for (uint64_t y = 0; y < height; y++) {
            uint64_t d = dst + z * c->dslice + y * c->dpitch, s = src + z * c->sslice + y * c->spitch;
            if (c->kind == MAYA_COPY_H2D) {
                emu_real_mark(d, c->width);
            } else if (c->kind == MAYA_COPY_D2H) {
                uint32_t k, w;
                uint64_t n = emu_real_check(s, c->width, &k, &w);
                if (n && !unreal) {
                    kind = k;
                    writer = w;
                }
                unreal += n;
            } else {
                emu_real_copy(d, s, c->width);
            }
        }
    if (!unreal)
        return 0;
    /* what the user declared such a read gives (declared_values.c) */
    const char *wname = kind == MAYA_WRITER_KERNEL ? emu_kernel_name_by_id(writer)
                        : kind == MAYA_WRITER_NONE ? NULL
                                                   : emu_string_text(writer);
    uint32_t declared = depth == 1 && height == 1 ? emu_values_declare(wname, c->dst, c->width) : 0;
    memset(vr, 0, sizeof *vr);
    vr->declared = declared;
    vr->h.type = MAYA_REC_VALUE_READ;
    vr->h.bytes = sizeof *vr;
    vr->src = src;
    vr->bytes = copy_bytes(c);
    vr->unreal_bytes = unreal;
    vr->writer_kind = kind;
    vr->writer = writer;
    return 1;
}

EMU_API enum emu_err emu_copy_finish(uint32_t api, uint64_t t0, int result, const struct emu_copy *c)
{
    if (result == 0 && emu_stream_capturing(c->stream)) {
        struct emu_node_params p = { .type = EMU_NODE_MEMCPY, .api = api, .copy = *c };
        return capture(api, t0, result, c->stream, &p);
    }
    uint64_t bytes = copy_bytes(c);
    uint64_t height = MAYA_MAX(c->height, 1), depth = MAYA_MAX(c->depth, 1);
    uint32_t flags = 0;
    if (result == 0 && bytes && bytes <= emu_config()->copy_threshold) {
        int moved = 1;
        for (uint64_t z = 0; z < depth && moved; z++)
            for (uint64_t y = 0; y < height && moved; y++)
                moved = emu_copy_bytes((char *)c->dst + z * c->dslice + y * c->dpitch,
                                       (const char *)c->src + z * c->sslice + y * c->spitch, c->width);
        if (moved)
            flags |= MAYA_COPY_PERFORMED;
    }
    struct maya_rec_value_read vr;
    int read_unreal = result == 0 && track_copy(api, c, (flags & MAYA_COPY_PERFORMED) != 0, &vr);
    if (!emu_tracing())
        return EMU_OK;
    struct maya_rec_memcpy r;
    memset(&r, 0, sizeof r);
    r.h.type = MAYA_REC_MEMCPY;
    r.h.bytes = sizeof r;
    /* A synchronous copy returns when it is done; an async one from or to
     * pageable host memory is staged, so the host waits for it too (not so
     * for a copy of a graph launch: the host only issues the graph). */
    if (!c->async || (!c->pinned && (c->kind == MAYA_COPY_D2H || c->kind == MAYA_COPY_H2D) &&
                      !emu_graph_replaying()))
        r.h.flags = MAYA_F_HOST_WAITS;
    r.dst = (uint64_t)(uintptr_t)c->dst;
    r.src = (uint64_t)(uintptr_t)c->src;
    r.bytes = bytes;
    r.kind = c->kind;
    r.src_device = c->src_device;
    r.dst_device = c->dst_device;
    r.flags = flags | (c->async ? MAYA_COPY_ASYNC : 0) | (c->pinned ? MAYA_COPY_PINNED : 0);
    r.width = c->width;
    r.height = height;
    r.depth = depth;
    emu_call_fill(&r.call, api, t0, result, c->stream ? c->stream->id : 0);
    emu_trace_emit(&r);
    if (read_unreal)
        emu_trace_emit(&vr);
    return EMU_OK;
}

/* ---- memsets ---- */

EMU_API enum emu_err emu_memset_finish(uint32_t api, uint64_t t0, int result, void *dst, uint32_t value,
                                       unsigned elem_bytes, uint64_t width_elems, uint64_t height,
                                       uint64_t pitch, struct emu_stream *stream, int async)
{
    if (result == 0 && emu_stream_capturing(stream)) {
        struct emu_node_params p = { .type = EMU_NODE_MEMSET, .api = api,
                                     .memset = { dst, value, elem_bytes, width_elems, height, pitch } };
        return capture(api, t0, result, stream, &p);
    }
    height = MAYA_MAX(height, 1);
    uint64_t row_bytes = width_elems * elem_bytes, bytes = row_bytes * height;
    uint32_t flags = async ? MAYA_COPY_ASYNC : 0;
    if (result == 0 && bytes && bytes <= emu_config()->copy_threshold) {
        int done = 1;
        for (uint64_t y = 0; y < height && done; y++)
            done = emu_fill_bytes((char *)dst + y * pitch, &value, elem_bytes, width_elems);
        if (done)
            flags |= MAYA_COPY_PERFORMED;
    }
    if (result == 0 && bytes) {
        /* real_bytes.c: a performed memset makes its rows real */
        if (flags & MAYA_COPY_PERFORMED)
            for (uint64_t y = 0; y < height; y++)
                emu_real_mark((uint64_t)(uintptr_t)dst + y * pitch, row_bytes);
        else
            emu_real_spoil((uint64_t)(uintptr_t)dst, (height - 1) * pitch + row_bytes, MAYA_WRITER_MEMSET, api);
    }
    if (!emu_tracing())
        return EMU_OK;
    struct maya_rec_memset r;
    memset(&r, 0, sizeof r);
    r.h.type = MAYA_REC_MEMSET;
    r.h.bytes = sizeof r;
    r.dst = (uint64_t)(uintptr_t)dst;
    r.bytes = bytes;
    r.value = elem_bytes == 4 ? value : elem_bytes == 2 ? (value & 0xffff) : (value & 0xff);
    r.elem_bytes = elem_bytes;
    r.flags = flags;
    emu_call_fill(&r.call, api, t0, result, stream ? stream->id : 0);
    emu_trace_emit(&r);
    return EMU_OK;
}

EMU_API void emu_coll_mark_both_ways(struct maya_rec_coll *first, size_t n, size_t stride)
{
    struct way {
        uint64_t comm;
        int dirs; /* 1 sends, 2 receives */
    } local[8], *ways = local;
    size_t nways = 0, cap = MAYA_ARRAY_LEN(local);
#define REC(i) ((struct maya_rec_coll *)((char *)first + (i) * stride))
    for (size_t i = 0; i < n; i++) {
        const struct maya_rec_coll *r = REC(i);
        if (r->op != MAYA_COLL_SEND && r->op != MAYA_COLL_RECV)
            continue;
        size_t k = 0;
        while (k < nways && ways[k].comm != r->comm)
            k++;
        if (k == nways) {
            if (nways == cap) {
                struct way *w = malloc(cap * 2 * sizeof *w);
                if (!w)
                    goto out; /* none marked: each priced as one way */
                memcpy(w, ways, nways * sizeof *w);
                if (ways != local)
                    free(ways);
                ways = w;
                cap *= 2;
            }
            ways[nways++] = (struct way){ r->comm, 0 };
        }
        ways[k].dirs |= r->op == MAYA_COLL_SEND ? 1 : 2;
    }
    for (size_t i = 0; i < n; i++) {
        struct maya_rec_coll *r = REC(i);
        if (r->op != MAYA_COLL_SEND && r->op != MAYA_COLL_RECV)
            continue;
        for (size_t k = 0; k < nways; k++)
            if (ways[k].comm == r->comm && ways[k].dirs == 3)
                r->flags |= MAYA_COLL_BOTH_WAYS;
    }
#undef REC
out:
    if (ways != local)
        free(ways);
}

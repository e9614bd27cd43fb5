/* What the runtime and the driver do alike when a program orders work on a
 * stream: record an event or wait for one (part of the capture while the
 * stream captures), synchronise (the capture rules, host functions run,
 * pools trimmed), and allocate or free stream-ordered memory (a memory node
 * while the stream captures).
 *
 * Each function traces what it did when it succeeds. On failure it traces
 * nothing: the library traces the call with its own error code. */
#define _GNU_SOURCE
#include "emu.h"
#include "graph_int.h"

#define DEVICE_KINDS ((1 << MAYA_ALLOC_DEVICE) | (1 << MAYA_ALLOC_MANAGED) | (1 << MAYA_ALLOC_ASYNC))

EMU_API enum emu_err emu_stream_issue_sync(struct emu_stream *s)
{
    enum emu_err e = emu_stream_capturing(s) ? emu_capture_unsafe_call(s) : emu_stream_issue_check(s);
    if (e == EMU_OK)
        emu_hostfn_drain(s);
    return e;
}

EMU_API enum emu_err emu_event_record_issue(uint32_t api, uint64_t t0, struct emu_event *e, struct emu_stream *s,
                                            int external)
{
    int capturing = emu_stream_capturing(s);
    enum emu_err err = emu_event_record_on(e, s, external, api);
    if (err != EMU_OK)
        return err;
    if (capturing)
        emu_trace_call(api, t0, 0, s->id, MAYA_F_CAPTURING);
    else
        emu_trace_event(MAYA_REC_EVENT_RECORD, api, t0, 0, e, e->version, s->id);
    return EMU_OK;
}

EMU_API enum emu_err emu_stream_wait_issue(uint32_t api, uint64_t t0, struct emu_stream *s, struct emu_event *e)
{
    enum emu_err err = emu_stream_wait_on(s, e, api);
    if (err != EMU_OK)
        return err;
    if (emu_stream_capturing(s)) /* also when the wait made s join a capture */
        emu_trace_call(api, t0, 0, s->id, MAYA_F_CAPTURING);
    else
        emu_trace_event(MAYA_REC_STREAM_WAIT, api, t0, 0, e, e->version, s->id);
    return EMU_OK;
}

EMU_API enum emu_err emu_stream_sync(struct emu_stream *s, uint32_t api, uint64_t t0)
{
    enum emu_err e = emu_capture_unsafe_call(s);
    if (e == EMU_OK)
        e = emu_stream_issue_check(s);
    if (e != EMU_OK)
        return e;
    emu_hostfn_drain(s);
    emu_pool_release_idle(s->device, api, t0); /* pools shrink at synchronisation */
    emu_trace_sync(api, t0, 0, MAYA_SYNC_STREAM, s->id, 0, s->id);
    return EMU_OK;
}

EMU_API enum emu_err emu_device_sync(int device, uint32_t api, uint64_t t0)
{
    enum emu_err e = emu_capture_unsafe_call(NULL);
    if (e != EMU_OK)
        return e;
    emu_hostfn_drain(NULL);
    emu_pool_release_idle(device, api, t0);
    emu_trace_sync(api, t0, 0, MAYA_SYNC_DEVICE, (uint64_t)device, 0, 0);
    return EMU_OK;
}

EMU_API enum emu_err emu_event_sync(struct emu_event *e, uint32_t api, uint64_t t0)
{
    enum emu_err err = emu_capture_unsafe_call(NULL);
    if (err != EMU_OK)
        return err;
    emu_hostfn_wait(e->hostfn_mark);
    emu_pool_release_idle(e->device, api, t0);
    emu_trace_sync(api, t0, 0, MAYA_SYNC_EVENT, e->id, e->version, e->stream);
    return EMU_OK;
}

EMU_API enum emu_err emu_mem_alloc_async(uint32_t api, uint64_t t0, struct emu_pool *pool, uint64_t bytes,
                                         struct emu_stream *s, uint64_t *ptr)
{
    if (!pool)
        pool = emu_pool_current(s->device);
    if (!emu_pool_resolve(pool) || pool->destroyed || !ptr)
        return EMU_ERR_INVALID_VALUE;
    *ptr = 0;
    if (bytes && emu_stream_capturing(s)) {
        /* A memory node of the graph being captured: its memory is made
         * now and belongs to the graph (graph.c). */
        struct emu_node_params np = { .type = EMU_NODE_MEM_ALLOC, .api = api,
                                      .mem = { .device = pool->device, .bytes = bytes } };
        struct emu_graph_node *n = NULL;
        enum emu_err e = emu_capture_add(s, &np, &n);
        if (e != EMU_OK)
            return e;
        *ptr = n->p.mem.ptr;
        emu_trace_call(api, t0, 0, s->id, MAYA_F_CAPTURING);
        return EMU_OK;
    }
    if (bytes) {
        enum emu_err e = emu_pool_alloc(pool, bytes, ptr);
        if (e != EMU_OK)
            return e;
    }
    emu_trace_alloc(MAYA_REC_ALLOC, api, t0, 0, *ptr, bytes, MAYA_ALLOC_ASYNC, pool->device, s->id, 0);
    return EMU_OK;
}

EMU_API enum emu_err emu_mem_free_async(uint32_t api, uint64_t t0, uint64_t ptr, struct emu_stream *s)
{
    if (ptr && emu_stream_capturing(s)) {
        struct emu_node_params np = { .type = EMU_NODE_MEM_FREE, .api = api,
                                      .mem = { .device = s->device, .ptr = ptr } };
        enum emu_err e = emu_capture_add(s, &np, NULL);
        if (e == EMU_OK)
            emu_trace_call(api, t0, 0, s->id, MAYA_F_CAPTURING);
        return e;
    }
    if (!ptr) {
        emu_trace_call(api, t0, 0, s->id, 0);
        return EMU_OK;
    }
    struct emu_alloc a;
    if (emu_mem_free(ptr, DEVICE_KINDS, &a) != EMU_OK)
        return EMU_ERR_INVALID_VALUE;
    emu_trace_alloc(MAYA_REC_FREE, api, t0, 0, a.base, a.bytes, a.kind, a.device, s->id, 0);
    return EMU_OK;
}

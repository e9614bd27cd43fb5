/* Launching an executable graph: its ops are traced (and its host nodes
 * run, its small copies performed) as if the program had issued them one by
 * one, in topological order, between MAYA_REC_GRAPH begin and end records
 * and flagged MAYA_F_FROM_GRAPH. A library's op (OP node) is its captured
 * record emitted again, after the library's replay function, if any, has
 * made it this launch's (NCCL: the communicator's next sequence number).
 *
 * Concurrency is kept with the lanes instantiation computed (graph.c): a
 * lane other than 0 is an internal stream. It starts after a fork event
 * recorded on the launching stream; a dependency across lanes is an event
 * record after the first op and a wait before the second; every lane is
 * joined back into the launching stream before the end record. Internal
 * events get version N on the graph's N-th launch.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "graph_int.h"
#include "maya/common.h"

#include <stdlib.h>
#include <string.h>

/* Launches of every graph in the process so far: names each launch for
 * the OP nodes' replay functions. */
static uint64_t launches;

static struct emu_stream *lane_stream(struct emu_graph_exec *x, int lane, struct emu_stream *s)
{
    if (lane == 0)
        return s;
    if (!x->lanes || x->lane_device != s->device) {
        /* First launch, or a launch on another device: that device's lanes. */
        struct emu_stream **l = calloc((size_t)x->nlanes, sizeof *l);
        if (!l)
            return s; /* serialised on the launching stream: still a valid order */
        free(x->lanes);
        x->lanes = l;
        x->lane_device = s->device;
    }
    if (!x->lanes[lane])
        x->lanes[lane] = emu_stream_new_internal(s->device, MAYA_STREAM_GRAPH | MAYA_STREAM_NON_BLOCKING,
                                                 s->priority);
    return x->lanes[lane] ? x->lanes[lane] : s;
}

static void graph_record(uint32_t api, uint64_t t0, uint32_t phase, const struct emu_graph_exec *x,
                         const struct emu_stream *s)
{
    if (!emu_tracing())
        return;
    struct maya_rec_graph r;
    memset(&r, 0, sizeof r);
    r.h.type = MAYA_REC_GRAPH;
    r.h.bytes = sizeof r;
    r.graph_exec = x->id;
    r.phase = phase;
    r.nodes = (uint32_t)x->n;
    emu_call_fill(&r.call, api, t0, 0, s->id);
    emu_trace_emit(&r);
}

static void run_slot(const struct slot *sl, struct emu_stream *lane, struct emu_stream *s, uint64_t launch)
{
    const struct emu_node_params *p = &sl->p;
    uint64_t t = emu_now();
    switch (p->type) {
    case EMU_NODE_KERNEL: {
        struct emu_launch l = p->launch;
        l.stream = lane;
        emu_trace_launch(p->api, t, 0, &l, NULL, p->kparams, p->kparam_bytes, 0);
        break;
    }
    case EMU_NODE_MEMCPY: {
        struct emu_copy c = p->copy;
        c.stream = lane;
        c.async = 1;
        emu_copy_classify(&c); /* memory may have been freed or reused since the node was made */
        emu_copy_finish(p->api, t, 0, &c);
        break;
    }
    case EMU_NODE_MEMSET:
        emu_memset_finish(p->api, t, 0, p->memset.dst, p->memset.value, p->memset.elem_bytes,
                          p->memset.width, p->memset.height, p->memset.pitch, lane, 1);
        break;
    case EMU_NODE_HOST:
        /* Queued on the launching stream, whose synchronisation waits for it. */
        emu_hostfn_enqueue(s, p->host.fn, p->host.arg);
        emu_trace_host_func(p->api, t, 0, (uint64_t)(uintptr_t)p->host.fn, (uint64_t)(uintptr_t)p->host.arg,
                            lane->id);
        break;
    case EMU_NODE_EVENT_RECORD: {
        struct emu_event *e = emu_event_resolve(p->event);
        if (e) {
            emu_event_record(e, lane);
            emu_trace_event(MAYA_REC_EVENT_RECORD, p->api, t, 0, e, e->version, lane->id);
        }
        break;
    }
    case EMU_NODE_WAIT_EVENT: {
        struct emu_event *e = emu_event_resolve(p->event);
        if (e)
            emu_trace_event(MAYA_REC_STREAM_WAIT, p->api, t, 0, e, e->version, lane->id);
        break;
    }
    case EMU_NODE_OP: {
        uint32_t bytes = ((const struct maya_rec_hdr *)p->op_rec)->bytes;
        void *r = malloc(bytes);
        if (r) {
            memcpy(r, p->op_rec, bytes);
            emu_call_fill(&((struct maya_rec_call *)r)->call, p->api, t, 0, lane->id);
            /* even untraced: the library's counters advance as they would */
            if (p->op_replay)
                p->op_replay(r, p->op_ctx, launch);
            if (emu_tracing())
                emu_trace_emit(r);
        }
        free(r);
        break;
    }
    default:
        /* EMPTY, joins of child graphs, and memory nodes (graph memory stays
         * allocated from when the node was made) have no op. */
        break;
    }
}

EMU_API enum emu_err emu_graph_launch(struct emu_graph_exec *x, struct emu_stream *s, uint32_t api, uint64_t t0)
{
    if (!emu_graph_exec_resolve(x) || !s)
        return EMU_ERR_INVALID_VALUE;
    if (emu_stream_capturing(s)) {
        struct emu_node_params p = { .type = EMU_NODE_GRAPH, .api = api, .child = x->graph };
        enum emu_err e = emu_capture_add(s, &p, NULL);
        if (e == EMU_OK)
            emu_trace_call(api, t0, 0, s->id, MAYA_F_CAPTURING);
        return e;
    }
    /* Launches of one executable graph run one after another, as on a GPU. */
    pthread_mutex_lock(&x->lock);
    uint32_t v = ++x->launches;
    uint64_t launch = __atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
    graph_record(api, t0, 1, x, s);
    emu_trace_set_thread_flags(MAYA_F_FROM_GRAPH);
    if (x->need_fork)
        emu_trace_event(MAYA_REC_EVENT_RECORD, api, emu_now(), 0, &x->fork, v, s->id);
    for (int i = 0; i < x->n; i++) {
        const struct slot *sl = &x->slots[i];
        struct emu_stream *lane = lane_stream(x, sl->lane, s);
        if (sl->lane != 0 && sl->ndeps == 0)
            emu_trace_event(MAYA_REC_STREAM_WAIT, api, emu_now(), 0, &x->fork, v, lane->id);
        for (int j = 0; j < sl->ndeps; j++) {
            const struct slot *d = &x->slots[sl->deps[j]];
            if (d->lane != sl->lane)
                emu_trace_event(MAYA_REC_STREAM_WAIT, api, emu_now(), 0, &d->ev, v, lane->id);
        }
        if (sl->enabled)
            run_slot(sl, lane, s, launch);
        if (sl->has_event)
            emu_trace_event(MAYA_REC_EVENT_RECORD, api, emu_now(), 0, &sl->ev, v, lane->id);
    }
    for (int i = 0; i < x->n; i++)
        if (x->slots[i].join_at_end)
            emu_trace_event(MAYA_REC_STREAM_WAIT, api, emu_now(), 0, &x->slots[i].ev, v, s->id);
    emu_trace_set_thread_flags(0);
    graph_record(api, t0, 2, x, s);
    pthread_mutex_unlock(&x->lock);
    return EMU_OK;
}

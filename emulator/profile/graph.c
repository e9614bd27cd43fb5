/* CUDA graphs captured from streams: the records of the captured work are
 * kept per capture (measure.c hands them over), follow the graph through
 * cudaStreamEndCapture and cudaGraphInstantiate, and are written at each
 * cudaGraphLaunch between GRAPH begin and end records, as the emulator
 * writes a graph launch (prof.h). The launch is measured as a whole, on the
 * launching stream; a graph's nodes go to that stream in capture order.
 * Graphs built node by node (cudaGraphAdd*Node) are launched with no nodes
 * in the trace. A captured NCCL operation is numbered at each launch
 * (prof_nccl_replay), as the emulator numbers it. */
#include "prof.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "maya/map.h"

struct nodes {
    struct maya_rec_hdr **recs;  /* record copies, in capture order */
    size_t n, cap;
    uint64_t exec_id;            /* executable graphs: the id GRAPH records give */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct maya_map captures, graphs, execs; /* capture id / cudaGraph_t / cudaGraphExec_t -> nodes */
static uint64_t next_exec_id;
static uint64_t launches;        /* graph launches so far: names each for prof_nccl_replay */

static void nodes_free(struct nodes *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->n; i++)
        free(x->recs[i]);
    free(x->recs);
    free(x);
}

static struct nodes *get(struct maya_map *m, uint64_t key, int take)
{
    uint64_t *v = maya_map_get(m, key, 0);
    struct nodes *x = v ? (struct nodes *)(uintptr_t)*v : NULL;
    if (v && take)
        maya_map_del(m, key, 0);
    return x;
}

/* Keep x under key (replacing and freeing what was there). */
static void put(struct maya_map *m, uint64_t key, struct nodes *x)
{
    nodes_free(get(m, key, 1));
    uint64_t *v = x ? maya_map_put(m, key, 0, NULL) : NULL;
    if (v)
        *v = (uint64_t)(uintptr_t)x;
    else
        nodes_free(x);
}

static int append(struct nodes *x, const struct maya_rec_hdr *rec)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 16;
        struct maya_rec_hdr **n = realloc(x->recs, cap * sizeof *n);
        if (!n)
            return -1;
        x->recs = n;
        x->cap = cap;
    }
    struct maya_rec_hdr *copy = malloc(rec->bytes);
    if (!copy)
        return -1;
    memcpy(copy, rec, rec->bytes);
    x->recs[x->n++] = copy;
    return 0;
}

void prof_capture_add(unsigned long long capture, const void *rec)
{
    pthread_mutex_lock(&lock);
    struct nodes *x = get(&captures, capture, 0);
    if (!x && (x = calloc(1, sizeof *x))) {
        uint64_t *v = maya_map_put(&captures, capture, 0, NULL);
        if (v)
            *v = (uint64_t)(uintptr_t)x;
        else
            x = (free(x), NULL);
    }
    if (x)
        append(x, rec);
    pthread_mutex_unlock(&lock);
}

static struct nodes *copy_nodes(const struct nodes *x)
{
    struct nodes *c = calloc(1, sizeof *c);
    for (size_t i = 0; c && x && i < x->n; i++)
        if (append(c, x->recs[i]) < 0)
            c = (nodes_free(c), NULL);
    return c;
}

/* ---- capture and instantiation ---- */

static unsigned long long capture_id(cudaStream_t stream)
{
    cudaError_t (*info)(cudaStream_t, enum cudaStreamCaptureStatus *, unsigned long long *, cudaGraph_t *,
                        const cudaGraphNode_t **, const cudaGraphEdgeData **, size_t *) =
        PROF_REAL(prof_cudart, cudaStreamGetCaptureInfo);
    enum cudaStreamCaptureStatus st;
    unsigned long long id = 0;
    if (!info || info(stream, &st, &id, NULL, NULL, NULL, NULL) != cudaSuccess || st == cudaStreamCaptureStatusNone)
        return 0;
    return id;
}

static cudaError_t end_capture(cudaError_t (*real)(cudaStream_t, cudaGraph_t *), uint32_t api, cudaStream_t stream,
                               cudaGraph_t *graph, int per_thread)
{
    unsigned long long id = capture_id(!stream && per_thread ? cudaStreamPerThread : stream);
    PROF_BODY(cudaError_t, real(stream, graph), ({
                  pthread_mutex_lock(&lock);
                  struct nodes *x = get(&captures, id, 1);
                  if (r_ == cudaSuccess && graph && *graph)
                      put(&graphs, (uint64_t)(uintptr_t)*graph, x);
                  else
                      nodes_free(x);
                  pthread_mutex_unlock(&lock);
                  struct emu_stream *s = prof_stream(stream, per_thread);
                  emu_trace_call(api, op_.t0, r_, s ? s->id : 0, 0);
              }), );
}

cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t, cudaGraph_t *);

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    PROF_REAL_OR(prof_cudart, cudaStreamEndCapture, cudaErrorNotSupported);
    return end_capture(real, EMU_API_ID(__func__), stream, pGraph, 0);
}

cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
    PROF_REAL_OR(prof_cudart, cudaStreamEndCapture_ptsz, cudaErrorNotSupported);
    return end_capture(real, EMU_API_ID(__func__), stream, pGraph, 1);
}

/* An executable graph made from graph: its own copy of the nodes. */
static void instantiated(cudaError_t e, cudaGraphExec_t *exec, cudaGraph_t graph)
{
    if (e != cudaSuccess || !exec || !*exec)
        return;
    pthread_mutex_lock(&lock);
    struct nodes *x = copy_nodes(get(&graphs, (uint64_t)(uintptr_t)graph, 0));
    if (x)
        x->exec_id = ++next_exec_id;
    put(&execs, (uint64_t)(uintptr_t)*exec, x);
    pthread_mutex_unlock(&lock);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    PROF_REAL_OR(prof_cudart, cudaGraphInstantiate, cudaErrorNotSupported);
    cudaError_t e = real(pGraphExec, graph, flags);
    instantiated(e, pGraphExec, graph);
    return e;
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    PROF_REAL_OR(prof_cudart, cudaGraphInstantiateWithFlags, cudaErrorNotSupported);
    cudaError_t e = real(pGraphExec, graph, flags);
    instantiated(e, pGraphExec, graph);
    return e;
}

cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                           cudaGraphInstantiateParams *params)
{
    PROF_REAL_OR(prof_cudart, cudaGraphInstantiateWithParams, cudaErrorNotSupported);
    cudaError_t e = real(pGraphExec, graph, params);
    instantiated(e, pGraphExec, graph);
    return e;
}

static void forget(struct maya_map *m, const void *key)
{
    pthread_mutex_lock(&lock);
    nodes_free(get(m, (uint64_t)(uintptr_t)key, 1));
    pthread_mutex_unlock(&lock);
}

#define DESTROY(NAME, TYPE, MAP) \
    cudaError_t NAME(TYPE x) \
    { \
        PROF_REAL_OR(prof_cudart, NAME, cudaErrorNotSupported); \
        cudaError_t e = real(x); \
        if (e == cudaSuccess) \
            forget(&(MAP), x); \
        return e; \
    }

DESTROY(cudaGraphDestroy, cudaGraph_t, graphs)
DESTROY(cudaGraphExecDestroy, cudaGraphExec_t, execs)

/* ---- launches ---- */

static void graph_record(uint32_t api, uint64_t t0, cudaError_t e, uint64_t sid, uint64_t id, uint32_t phase,
                         uint32_t nodes)
{
    struct maya_rec_graph g;
    memset(&g, 0, sizeof g);
    g.h.type = MAYA_REC_GRAPH;
    g.h.bytes = sizeof g;
    g.graph_exec = id;
    g.phase = phase;
    g.nodes = nodes;
    emu_call_fill(&g.call, api, t0, e, sid);
    emu_trace_emit(&g);
}

/* GRAPH begin, the nodes, GRAPH end (which takes the launch's events). */
static void trace_graph_launch(struct prof_op *op, uint32_t api, cudaError_t e, cudaGraphExec_t exec,
                               uint64_t sid)
{
    if (e != cudaSuccess) {
        emu_trace_call(api, op->t0, e, sid, 0);
        return;
    }
    pthread_mutex_lock(&lock);
    const struct nodes *orig = get(&execs, (uint64_t)(uintptr_t)exec, 0);
    struct nodes *x = copy_nodes(orig);
    uint64_t id = orig ? orig->exec_id : 0;
    pthread_mutex_unlock(&lock);
    uint32_t n = x ? (uint32_t)x->n : 0;
    uint64_t launch = __atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
    prof_building(NULL);
    graph_record(api, op->t0, e, sid, id, 1, n);
    for (uint32_t i = 0; i < n; i++) {
        struct maya_rec_hdr *h = x->recs[i];
        struct maya_call *c = (struct maya_call *)(h + 1);
        /* a graph launch never makes the host wait for a node */
        h->flags = (uint16_t)((h->flags | MAYA_F_FROM_GRAPH) & ~(MAYA_F_MEASURED | MAYA_F_HOST_WAITS | MAYA_F_DEVICE_SYNC));
        emu_call_fill(c, c->api, op->t0, c->result, sid);
        if (h->type == MAYA_REC_COLL) /* a new operation at each launch, as NCCL counts it */
            prof_nccl_replay((struct maya_rec_coll *)h, launch);
        emu_trace_emit(h);
    }
    prof_building(op);
    graph_record(api, op->t0, e, sid, id, 2, n);
    nodes_free(x);
}

static cudaError_t graph_launch(cudaError_t (*real)(cudaGraphExec_t, cudaStream_t), uint32_t api,
                                cudaGraphExec_t exec, cudaStream_t stream, int per_thread)
{
    PROF_DEVICE_BODY(cudaError_t, cudaSuccess, !stream && per_thread ? cudaStreamPerThread : stream,
                     real(exec, stream), ({
                         struct emu_stream *s = prof_stream(stream, per_thread);
                         trace_graph_launch(&op_, api, r_, exec, s ? s->id : 0);
                     }), );
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t, cudaStream_t);

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    PROF_REAL_OR(prof_cudart, cudaGraphLaunch, cudaErrorNotSupported);
    return graph_launch(real, EMU_API_ID(__func__), graphExec, stream, 0);
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    PROF_REAL_OR(prof_cudart, cudaGraphLaunch_ptsz, cudaErrorNotSupported);
    return graph_launch(real, EMU_API_ID(__func__), graphExec, stream, 1);
}

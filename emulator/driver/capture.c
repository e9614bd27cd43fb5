/* Driver stream capture over the core's (capture.c), which the runtime's
 * cudaStream*Capture* share: work issued to a capturing stream
 * (cuLaunchKernel, cuMemcpyAsync, cuMemsetD*Async, cuLaunchHostFunc,
 * cuEventRecord, cuMemAllocAsync ...) becomes nodes of the capture's graph
 * in the core, and the call is traced flagged capturing. */
#include "drv.h"

#define G(h) emu_graph_resolve(h)
#define CNODES(p) ((struct emu_graph_node *const *)(p))

/* ---- stream capture ---- */

static CUresult begin_capture(uint32_t api, uint64_t t0, CUstream h, int pt, CUgraph graph,
                              const CUgraphNode *deps, size_t ndeps, CUstreamCaptureMode mode)
{
    struct emu_stream *s = drv_stream(h, pt);
    CUresult e;
    if (!s)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED || (graph && !G(graph)) || (ndeps && !deps))
        e = CUDA_ERROR_INVALID_VALUE;
    else
        e = drv_error(emu_capture_begin(s, (int)mode, G(graph), CNODES(deps), ndeps));
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return e;
}

/* cuStreamBeginCapture without a mode (the CUDA 10.0 ABI) captures in the
 * global mode, as cuda.h's macro for it does. */
CUresult cuStreamBeginCapture(CUstream hStream)
{
    DRV_ENTER();
    return begin_capture(DRV_API(), drv_t0, hStream, 0, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
    DRV_ENTER();
    return begin_capture(DRV_API(), drv_t0, hStream, 1, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    DRV_ENTER();
    return begin_capture(DRV_API(), drv_t0, hStream, 0, NULL, NULL, 0, mode);
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    DRV_ENTER();
    return begin_capture(DRV_API(), drv_t0, hStream, 1, NULL, NULL, 0, mode);
}

CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
                                     const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                     CUstreamCaptureMode mode)
{
    DRV_ENTER();
    if (!hGraph)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    return begin_capture(DRV_API(), drv_t0, hStream, 0, hGraph, dependencies, numDependencies, mode);
}

CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
                                          const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                          CUstreamCaptureMode mode)
{
    DRV_ENTER();
    if (!hGraph)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    return begin_capture(DRV_API(), drv_t0, hStream, 1, hGraph, dependencies, numDependencies, mode);
}

static CUresult end_capture(uint32_t api, uint64_t t0, CUstream h, int pt, CUgraph *phGraph)
{
    struct emu_stream *s = drv_stream(h, pt);
    CUresult e;
    if (!phGraph)
        e = CUDA_ERROR_INVALID_VALUE;
    else if (!s)
        e = CUDA_ERROR_INVALID_HANDLE;
    else {
        struct emu_graph *g = NULL;
        e = drv_error(emu_capture_end(s, &g));
        *phGraph = (CUgraph)g;
    }
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return e;
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    DRV_ENTER();
    return end_capture(DRV_API(), drv_t0, hStream, 0, phGraph);
}

CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    DRV_ENTER();
    return end_capture(DRV_API(), drv_t0, hStream, 1, phGraph);
}

/* What cuStreamIsCapturing and every cuStreamGetCaptureInfo form answer;
 * each output may be NULL but the status. */
struct capture_out {
    CUstreamCaptureStatus *status;
    cuuint64_t *id;
    CUgraph *graph;
    const CUgraphNode **deps;
    const CUgraphEdgeData **edges;
    size_t *ndeps;
};

static CUresult capture_info(uint32_t api, uint64_t t0, CUstream h, int pt, struct capture_out o)
{
    struct emu_stream *s = drv_stream(h, pt);
    CUresult e = CUDA_SUCCESS;
    if (!o.status)
        e = CUDA_ERROR_INVALID_VALUE;
    else if (!s)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if ((e = drv_error(emu_stream_issue_check(s))) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
        e = CUDA_SUCCESS; /* asking about an invalidated capture is fine: it says so */
    if (e == CUDA_SUCCESS) {
        uint64_t cid = 0;
        struct emu_graph *g = NULL;
        struct emu_graph_node *const *d = NULL;
        size_t nd = 0;
        *o.status = (CUstreamCaptureStatus)emu_capture_status(s, &cid, &g, &d, &nd);
        if (o.id)
            *o.id = cid;
        if (o.graph)
            *o.graph = (CUgraph)g;
        if (o.deps)
            *o.deps = (const CUgraphNode *)d;
        if (o.edges)
            *o.edges = NULL; /* every edge is a plain (default) edge */
        if (o.ndeps)
            *o.ndeps = nd;
    }
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return e;
}

#define CAPTURE_INFO(name, pt, params, ...) \
    CUresult name params \
    { \
        DRV_ENTER(); \
        return capture_info(DRV_API(), drv_t0, hStream, pt, (struct capture_out){ __VA_ARGS__ }); \
    }

CAPTURE_INFO(cuStreamIsCapturing, 0, (CUstream hStream, CUstreamCaptureStatus *captureStatus), .status = captureStatus)
CAPTURE_INFO(cuStreamIsCapturing_ptsz, 1, (CUstream hStream, CUstreamCaptureStatus *captureStatus), .status = captureStatus)
CAPTURE_INFO(cuStreamGetCaptureInfo, 0, (CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id),
             .status = status, .id = id)
CAPTURE_INFO(cuStreamGetCaptureInfo_ptsz, 1, (CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id),
             .status = status, .id = id)
CAPTURE_INFO(cuStreamGetCaptureInfo_v2, 0,
             (CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
              const CUgraphNode **deps, size_t *ndeps),
             .status = status, .id = id, .graph = graph, .deps = deps, .ndeps = ndeps)
CAPTURE_INFO(cuStreamGetCaptureInfo_v2_ptsz, 1,
             (CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
              const CUgraphNode **deps, size_t *ndeps),
             .status = status, .id = id, .graph = graph, .deps = deps, .ndeps = ndeps)
CAPTURE_INFO(cuStreamGetCaptureInfo_v3, 0,
             (CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
              const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps),
             .status = status, .id = id, .graph = graph, .deps = deps, .edges = edges, .ndeps = ndeps)
CAPTURE_INFO(cuStreamGetCaptureInfo_v3_ptsz, 1,
             (CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
              const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps),
             .status = status, .id = id, .graph = graph, .deps = deps, .edges = edges, .ndeps = ndeps)

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    DRV_ENTER();
    if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *mode = (CUstreamCaptureMode)emu_capture_exchange_mode((int)*mode);
    DRV_RETURN(CUDA_SUCCESS);
}


/* Add to (flags 0) or replace (1) the nodes the stream's next captured work
 * depends on; CUDA_ERROR_ILLEGAL_STATE when it is not capturing. Every edge
 * is a plain edge: the _v2 forms' edge data is not kept. */
static CUresult update_deps(uint32_t api, uint64_t t0, CUstream h, int pt, CUgraphNode *deps, size_t n,
                            unsigned flags)
{
    struct emu_stream *s = drv_stream(h, pt);
    CUresult e = s ? drv_error(emu_capture_update_deps(s, CNODES(deps), n, flags)) : CUDA_ERROR_INVALID_HANDLE;
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return e;
}

CUresult cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode *dependencies, size_t numDependencies,
                                           unsigned int flags)
{
    DRV_ENTER();
    return update_deps(DRV_API(), drv_t0, hStream, 0, dependencies, numDependencies, flags);
}

CUresult cuStreamUpdateCaptureDependencies_ptsz(CUstream hStream, CUgraphNode *dependencies,
                                                size_t numDependencies, unsigned int flags)
{
    DRV_ENTER();
    return update_deps(DRV_API(), drv_t0, hStream, 1, dependencies, numDependencies, flags);
}

CUresult cuStreamUpdateCaptureDependencies_v2(CUstream hStream, CUgraphNode *dependencies,
                                              const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                              unsigned int flags)
{
    DRV_ENTER();
    return update_deps(DRV_API(), drv_t0, hStream, 0, dependencies, numDependencies, flags);
}

CUresult cuStreamUpdateCaptureDependencies_v2_ptsz(CUstream hStream, CUgraphNode *dependencies,
                                                   const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                                   unsigned int flags)
{
    DRV_ENTER();
    return update_deps(DRV_API(), drv_t0, hStream, 1, dependencies, numDependencies, flags);
}

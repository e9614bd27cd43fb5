/* Runtime streams, events, host functions, synchronisation and stream
 * capture. Each entry point that takes a stream has a _ptsz twin (the
 * per-thread default stream build) calling the same code with
 * per_thread = 1. */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

cudaError_t rt_issue_stream(cudaStream_t stream, int per_thread, struct emu_stream **out)
{
    /* Work issued from a thread with no current context makes the current
     * device's primary context current, as the runtime does (PyTorch's
     * autograd threads then find it with cuCtxGetCurrent before cuBLAS). */
    if (emu_thread()->nctx == 0)
        emu_set_device(emu_current_device());
    struct emu_stream *s = rt_stream(stream, per_thread);
    if (!s)
        return cudaErrorInvalidResourceHandle;
    *out = s;
    return rt_error(emu_stream_issue_check(s));
}

void rt_drain(struct emu_stream *s)
{
    emu_hostfn_drain(s);
}

/* ---- streams ---- */

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
    RT_ENTER();
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        RT_RETURN(cudaErrorInvalidValue);
    /* Priorities are clamped to the device's range [-5, 0], as CUDA does. */
    if (priority < -5)
        priority = -5;
    if (priority > 0)
        priority = 0;
    struct emu_stream *s;
    enum emu_err e = emu_stream_create(rt_device(), flags & cudaStreamNonBlocking ? MAYA_STREAM_NON_BLOCKING : 0,
                                       priority, &s);
    if (e == EMU_OK)
        *pStream = (cudaStream_t)s;
    RT_RETURN_STREAM(rt_error(e), e == EMU_OK ? s->id : 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    return cudaStreamCreateWithPriority(pStream, flags, 0);
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithPriority(pStream, cudaStreamDefault, 0);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(stream, 0);
    if (!s || !stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    uint64_t id = s->id;
    RT_RETURN_STREAM(rt_error(emu_stream_destroy(s)), id);
}

static cudaError_t stream_get(uint32_t api, uint64_t t0, cudaStream_t h, int pt, int what, void *out)
{
    struct emu_stream *s = rt_stream(h, pt);
    cudaError_t e = cudaSuccess;
    if (!out)
        e = cudaErrorInvalidValue;
    else if (!s)
        e = cudaErrorInvalidResourceHandle;
    else if (what == 0)
        *(int *)out = s->priority;
    else if (what == 1)
        *(unsigned *)out = (s->flags & MAYA_STREAM_NON_BLOCKING) ? cudaStreamNonBlocking : cudaStreamDefault;
    else if (what == 2)
        *(int *)out = s->device;
    else
        *(unsigned long long *)out = s->id;
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

#define STREAM_GETTER(name, type, what) \
    cudaError_t name(cudaStream_t h, type *out) \
    { \
        RT_ENTER(); \
        return stream_get(RT_API(), rt_t0, h, 0, what, out); \
    } \
    cudaError_t name##_ptsz(cudaStream_t h, type *out) \
    { \
        RT_ENTER(); \
        return stream_get(RT_API(), rt_t0, h, 1, what, out); \
    }

STREAM_GETTER(cudaStreamGetPriority, int, 0)
STREAM_GETTER(cudaStreamGetFlags, unsigned int, 1)
STREAM_GETTER(cudaStreamGetDevice, int, 2)
STREAM_GETTER(cudaStreamGetId, unsigned long long, 3)

cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    RT_ENTER();
    if (leastPriority)
        *leastPriority = 0;
    if (greatestPriority)
        *greatestPriority = -5;
    RT_RETURN(cudaSuccess);
}

static cudaError_t stream_sync(uint32_t api, uint64_t t0, cudaStream_t stream, int pt)
{
    struct emu_stream *s = rt_stream(stream, pt);
    cudaError_t e = s ? rt_error(emu_stream_sync(s, api, t0)) : cudaErrorInvalidResourceHandle;
    if (e != cudaSuccess)
        emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    RT_ENTER();
    return stream_sync(RT_API(), rt_t0, stream, 0);
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    RT_ENTER();
    return stream_sync(RT_API(), rt_t0, stream, 1);
}

static cudaError_t stream_query(uint32_t api, uint64_t t0, cudaStream_t stream, int pt)
{
    struct emu_stream *s = rt_stream(stream, pt);
    cudaError_t e = s ? rt_error(emu_capture_unsafe_call(s)) : cudaErrorInvalidResourceHandle;
    /* Emulated device work is done as soon as it is issued; host functions
     * still queued or running are not. */
    if (e == cudaSuccess && emu_hostfn_pending(s))
        e = cudaErrorNotReady;
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return e == cudaErrorNotReady ? e : rt_note(e); /* not-ready is no error to remember */
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    RT_ENTER();
    return stream_query(RT_API(), rt_t0, stream, 0);
}

cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
    RT_ENTER();
    return stream_query(RT_API(), rt_t0, stream, 1);
}

cudaError_t cudaDeviceSynchronize(void)
{
    RT_ENTER();
    cudaError_t e = rt_error(emu_device_sync(rt_device(), RT_API(), rt_t0));
    if (e != cudaSuccess)
        RT_RETURN(e);
    return cudaSuccess;
}

/* cudaThreadSynchronize is the old name. */
cudaError_t cudaThreadSynchronize(void)
{
    return cudaDeviceSynchronize();
}

/* ---- host functions ---- */

struct callback {
    cudaStreamCallback_t fn;
    cudaStream_t stream;
    void *data;
};

static void run_callback(void *arg)
{
    struct callback c = *(struct callback *)arg;
    free(arg);
    c.fn(c.stream, cudaSuccess, c.data);
}

static cudaError_t host_func(uint32_t api, uint64_t t0, cudaStream_t stream, int pt, cudaHostFn_t fn, void *data)
{
    struct emu_stream *s = NULL;
    cudaError_t e = fn ? rt_issue_stream(stream, pt, &s) : cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = rt_error(emu_hostfn_enqueue(s, fn, data));
    if (e == cudaSuccess)
        e = rt_error(emu_trace_host_func_on(api, t0, cudaSuccess, fn, data, s));
    else
        emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    RT_ENTER();
    return host_func(RT_API(), rt_t0, stream, 0, fn, userData);
}

cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    RT_ENTER();
    return host_func(RT_API(), rt_t0, stream, 1, fn, userData);
}

static cudaError_t add_callback(uint32_t api, uint64_t t0, cudaStream_t stream, int pt,
                                cudaStreamCallback_t callback, void *userData, unsigned flags)
{
    struct emu_stream *s = NULL;
    cudaError_t e = !callback || flags ? cudaErrorInvalidValue : rt_issue_stream(stream, pt, &s);
    /* Not allowed in capture (cudaLaunchHostFunc is): it breaks the capture. */
    if (e == cudaSuccess && emu_stream_capturing(s))
        e = rt_error(emu_capture_unsafe_call(s));
    struct callback *c = NULL;
    if (e == cudaSuccess && !(c = malloc(sizeof *c)))
        e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess) {
        *c = (struct callback){ callback, stream, userData };
        e = rt_error(emu_hostfn_enqueue(s, run_callback, c));
        if (e != cudaSuccess)
            free(c);
    }
    if (e == cudaSuccess)
        emu_trace_host_func(api, t0, e, (uint64_t)(uintptr_t)callback, (uint64_t)(uintptr_t)userData, s->id);
    else
        emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                  unsigned int flags)
{
    RT_ENTER();
    return add_callback(RT_API(), rt_t0, stream, 0, callback, userData, flags);
}

cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                       unsigned int flags)
{
    RT_ENTER();
    return add_callback(RT_API(), rt_t0, stream, 1, callback, userData, flags);
}

/* ---- events ---- */

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    RT_ENTER();
    unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if (!event || (flags & ~known) ||
        ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        RT_RETURN(cudaErrorInvalidValue);
    struct emu_event *e;
    enum emu_err rc = emu_event_create(flags, &e);
    if (rc == EMU_OK)
        *event = (cudaEvent_t)e;
    RT_RETURN(rt_error(rc));
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_event_destroy(emu_event_resolve(event))));
}

static cudaError_t event_record(uint32_t api, uint64_t t0, cudaEvent_t event, cudaStream_t stream, int pt,
                                unsigned flags)
{
    struct emu_event *e = emu_event_resolve(event);
    struct emu_stream *s = NULL;
    cudaError_t err = cudaSuccess;
    if (flags & ~(unsigned)cudaEventRecordExternal)
        err = cudaErrorInvalidValue;
    else if (!e)
        err = cudaErrorInvalidResourceHandle;
    else
        err = rt_issue_stream(stream, pt, &s);
    if (err == cudaSuccess)
        err = rt_error(emu_event_record_issue(api, t0, e, s, (flags & cudaEventRecordExternal) != 0));
    if (err != cudaSuccess)
        emu_trace_call(api, t0, err, s ? s->id : 0, 0);
    return rt_note(err);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    RT_ENTER();
    return event_record(RT_API(), rt_t0, event, stream, 0, 0);
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
    RT_ENTER();
    return event_record(RT_API(), rt_t0, event, stream, 1, 0);
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    RT_ENTER();
    return event_record(RT_API(), rt_t0, event, stream, 0, flags);
}

cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    RT_ENTER();
    return event_record(RT_API(), rt_t0, event, stream, 1, flags);
}

static cudaError_t wait_event(uint32_t api, uint64_t t0, cudaStream_t stream, int pt, cudaEvent_t event,
                              unsigned flags)
{
    struct emu_event *e = emu_event_resolve(event);
    struct emu_stream *s = NULL;
    cudaError_t err = cudaSuccess;
    if (flags & ~(unsigned)cudaEventWaitExternal)
        err = cudaErrorInvalidValue;
    else if (!e)
        err = cudaErrorInvalidResourceHandle;
    else
        err = rt_issue_stream(stream, pt, &s);
    if (err == cudaSuccess)
        err = rt_error(emu_stream_wait_issue(api, t0, s, e));
    if (err != cudaSuccess)
        emu_trace_call(api, t0, err, s ? s->id : 0, 0);
    return rt_note(err);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    RT_ENTER();
    return wait_event(RT_API(), rt_t0, stream, 0, event, flags);
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    RT_ENTER();
    return wait_event(RT_API(), rt_t0, stream, 1, event, flags);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    RT_ENTER();
    struct emu_event *e = emu_event_resolve(event);
    if (!e)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    cudaError_t err = rt_error(emu_event_sync(e, RT_API(), rt_t0));
    if (err != cudaSuccess)
        RT_RETURN(err);
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    RT_ENTER();
    struct emu_event *e = emu_event_resolve(event);
    if (!e)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    cudaError_t err = rt_error(emu_capture_unsafe_call(NULL));
    if (err != cudaSuccess)
        RT_RETURN(err);
    err = emu_hostfn_done(e->hostfn_mark) &&
                  !emu_clock_event_pending(e->id, e->version, (uint64_t)pthread_self())
              ? cudaSuccess
              : cudaErrorNotReady;
    emu_trace_call(RT_API(), rt_t0, err, 0, 0);
    return err;
}

/* The emulated GPU's time between the two records (core device_clock.c:
 * the analytical estimate of the work between them; host time when no trace
 * is written). docs/trace-format.md says so too. */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    RT_ENTER();
    struct emu_event *a = emu_event_resolve(start), *b = emu_event_resolve(end);
    if (!ms)
        RT_RETURN(cudaErrorInvalidValue);
    if (a && b && (!emu_hostfn_done(a->hostfn_mark) || !emu_hostfn_done(b->hostfn_mark)))
        RT_RETURN(cudaErrorNotReady);
    RT_RETURN(rt_error(emu_event_elapsed(a, b, ms)));
}

/* ---- stream capture ---- */

static cudaError_t begin_capture(uint32_t api, uint64_t t0, cudaStream_t stream, int pt, cudaGraph_t graph,
                                 const cudaGraphNode_t *deps, size_t ndeps, enum cudaStreamCaptureMode mode)
{
    struct emu_stream *s = rt_stream(stream, pt);
    cudaError_t e = cudaSuccess;
    if (!s)
        e = cudaErrorInvalidResourceHandle;
    else if (graph && !emu_graph_resolve(graph))
        e = cudaErrorInvalidValue;
    else
        e = rt_error(emu_capture_begin(s, (int)mode, (struct emu_graph *)graph,
                                       (struct emu_graph_node *const *)deps, ndeps));
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    RT_ENTER();
    return begin_capture(RT_API(), rt_t0, stream, 0, NULL, NULL, 0, mode);
}

cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    RT_ENTER();
    return begin_capture(RT_API(), rt_t0, stream, 1, NULL, NULL, 0, mode);
}

cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                          const cudaGraphEdgeData *depData, size_t ndeps,
                                          enum cudaStreamCaptureMode mode)
{
    RT_ENTER();
    if (!graph)
        RT_RETURN(cudaErrorInvalidValue);
    return begin_capture(RT_API(), rt_t0, stream, 0, graph, deps, ndeps, mode);
}

cudaError_t cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph,
                                               const cudaGraphNode_t *deps, const cudaGraphEdgeData *depData,
                                               size_t ndeps, enum cudaStreamCaptureMode mode)
{
    RT_ENTER();
    if (!graph)
        RT_RETURN(cudaErrorInvalidValue);
    return begin_capture(RT_API(), rt_t0, stream, 1, graph, deps, ndeps, mode);
}

static cudaError_t end_capture(uint32_t api, uint64_t t0, cudaStream_t stream, int pt, cudaGraph_t *pGraph)
{
    struct emu_stream *s = rt_stream(stream, pt);
    cudaError_t e = cudaSuccess;
    if (!pGraph)
        e = cudaErrorInvalidValue;
    else if (!s)
        e = cudaErrorInvalidResourceHandle;
    else {
        struct emu_graph *g = NULL;
        e = rt_error(emu_capture_end(s, &g));
        *pGraph = (cudaGraph_t)g;
    }
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    RT_ENTER();
    return end_capture(RT_API(), rt_t0, stream, 0, pGraph);
}

cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
    RT_ENTER();
    return end_capture(RT_API(), rt_t0, stream, 1, pGraph);
}

static cudaError_t capture_info(uint32_t api, uint64_t t0, cudaStream_t stream, int pt,
                                enum cudaStreamCaptureStatus *status, unsigned long long *id, cudaGraph_t *graph,
                                const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges, size_t *ndeps)
{
    struct emu_stream *s = NULL;
    cudaError_t e = status ? rt_issue_stream(stream, pt, &s) : cudaErrorInvalidValue;
    if (e == cudaErrorStreamCaptureInvalidated)
        e = cudaSuccess; /* querying an invalidated capture is fine: it says so */
    if (e == cudaSuccess) {
        uint64_t cid;
        struct emu_graph *g;
        struct emu_graph_node *const *d;
        size_t nd;
        *status = (enum cudaStreamCaptureStatus)emu_capture_status(s, &cid, &g, &d, &nd);
        if (id)
            *id = cid;
        if (graph)
            *graph = (cudaGraph_t)g;
        if (deps)
            *deps = (const cudaGraphNode_t *)d;
        if (edges)
            *edges = NULL; /* every edge is a plain (default) edge */
        if (ndeps)
            *ndeps = nd;
    }
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
    RT_ENTER();
    return capture_info(RT_API(), rt_t0, stream, 0, status, NULL, NULL, NULL, NULL, NULL);
}

cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
    RT_ENTER();
    return capture_info(RT_API(), rt_t0, stream, 1, status, NULL, NULL, NULL, NULL, NULL);
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                     unsigned long long *id, cudaGraph_t *graph, const cudaGraphNode_t **deps,
                                     const cudaGraphEdgeData **edges, size_t *ndeps)
{
    RT_ENTER();
    return capture_info(RT_API(), rt_t0, stream, 0, status, id, graph, deps, edges, ndeps);
}

cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                          unsigned long long *id, cudaGraph_t *graph,
                                          const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                          size_t *ndeps)
{
    RT_ENTER();
    return capture_info(RT_API(), rt_t0, stream, 1, status, id, graph, deps, edges, ndeps);
}

static cudaError_t update_deps(uint32_t api, uint64_t t0, cudaStream_t stream, int pt, cudaGraphNode_t *deps,
                               size_t n, unsigned flags)
{
    struct emu_stream *s = rt_stream(stream, pt);
    cudaError_t e = s ? rt_error(emu_capture_update_deps(s, (struct emu_graph_node *const *)deps, n, flags))
                      : cudaErrorInvalidResourceHandle;
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *deps,
                                                const cudaGraphEdgeData *depData, size_t n, unsigned int flags)
{
    RT_ENTER();
    return update_deps(RT_API(), rt_t0, stream, 0, deps, n, flags);
}

cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream, cudaGraphNode_t *deps,
                                                     const cudaGraphEdgeData *depData, size_t n,
                                                     unsigned int flags)
{
    RT_ENTER();
    return update_deps(RT_API(), rt_t0, stream, 1, deps, n, flags);
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    RT_ENTER();
    if (!mode || (unsigned)*mode > cudaStreamCaptureModeRelaxed)
        RT_RETURN(cudaErrorInvalidValue);
    *mode = (enum cudaStreamCaptureMode)emu_capture_exchange_mode((int)*mode);
    RT_RETURN(cudaSuccess);
}

/* ---- stream attributes ----
 * Kept per stream (they change nothing the emulator does, but programs
 * read back what they set): access policy window, synchronisation policy,
 * priority (the stream's own), memory sync domain and its map. */

#define NATTR 11

struct stream_attrs {
    cudaLaunchAttributeValue v[NATTR];
};

static int stream_attr_ok(cudaLaunchAttributeID a)
{
    return a == cudaLaunchAttributeAccessPolicyWindow || a == cudaLaunchAttributeSynchronizationPolicy ||
           a == cudaLaunchAttributePriority || a == cudaLaunchAttributeMemSyncDomainMap ||
           a == cudaLaunchAttributeMemSyncDomain;
}

static void attr_get(const struct emu_stream *s, cudaLaunchAttributeID a, cudaLaunchAttributeValue *out)
{
    const struct stream_attrs *sa = s->rt_attrs;
    memset(out, 0, sizeof *out);
    if (a == cudaLaunchAttributePriority)
        out->priority = s->priority;
    else if (sa)
        *out = sa->v[a];
    else if (a == cudaLaunchAttributeSynchronizationPolicy)
        out->syncPolicy = cudaSyncPolicyAuto;
}

static cudaError_t attr_set(struct emu_stream *s, cudaLaunchAttributeID a, const cudaLaunchAttributeValue *v)
{
    if (a == cudaLaunchAttributePriority) {
        s->priority = v->priority < -5 ? -5 : v->priority > 0 ? 0 : v->priority;
        return cudaSuccess;
    }
    if (a == cudaLaunchAttributeAccessPolicyWindow &&
        (v->accessPolicyWindow.hitRatio < 0 || v->accessPolicyWindow.hitRatio > 1))
        return cudaErrorInvalidValue;
    if (!s->rt_attrs) {
        struct stream_attrs *sa = calloc(1, sizeof *sa);
        if (!sa)
            return cudaErrorMemoryAllocation;
        sa->v[cudaLaunchAttributeSynchronizationPolicy].syncPolicy = cudaSyncPolicyAuto;
        s->rt_attrs = sa;
    }
    ((struct stream_attrs *)s->rt_attrs)->v[a] = *v;
    return cudaSuccess;
}

static cudaError_t stream_attr(uint32_t api, uint64_t t0, cudaStream_t h, int pt, cudaLaunchAttributeID a,
                               cudaLaunchAttributeValue *get, const cudaLaunchAttributeValue *set)
{
    struct emu_stream *s = rt_stream(h, pt);
    cudaError_t e = cudaSuccess;
    if (!s)
        e = cudaErrorInvalidResourceHandle;
    else if (!stream_attr_ok(a) || (unsigned)a >= NATTR || (!get && !set))
        e = cudaErrorInvalidValue;
    else if (get)
        attr_get(s, a, get);
    else
        e = attr_set(s, a, set);
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaStreamGetAttribute(cudaStream_t hStream, cudaLaunchAttributeID attr,
                                   cudaLaunchAttributeValue *value_out)
{
    RT_ENTER();
    return stream_attr(RT_API(), rt_t0, hStream, 0, attr, value_out, NULL);
}

cudaError_t cudaStreamGetAttribute_ptsz(cudaStream_t hStream, cudaLaunchAttributeID attr,
                                        cudaLaunchAttributeValue *value_out)
{
    RT_ENTER();
    return stream_attr(RT_API(), rt_t0, hStream, 1, attr, value_out, NULL);
}

cudaError_t cudaStreamSetAttribute(cudaStream_t hStream, cudaLaunchAttributeID attr,
                                   const cudaLaunchAttributeValue *value)
{
    RT_ENTER();
    return stream_attr(RT_API(), rt_t0, hStream, 0, attr, NULL, value);
}

cudaError_t cudaStreamSetAttribute_ptsz(cudaStream_t hStream, cudaLaunchAttributeID attr,
                                        const cudaLaunchAttributeValue *value)
{
    RT_ENTER();
    return stream_attr(RT_API(), rt_t0, hStream, 1, attr, NULL, value);
}

static cudaError_t copy_attrs(uint32_t api, uint64_t t0, cudaStream_t dst, cudaStream_t src, int pt)
{
    struct emu_stream *d = rt_stream(dst, pt), *s = rt_stream(src, pt);
    cudaError_t e = d && s ? cudaSuccess : cudaErrorInvalidResourceHandle;
    for (int a = 0; a < NATTR && e == cudaSuccess; a++) {
        if (!stream_attr_ok((cudaLaunchAttributeID)a))
            continue;
        cudaLaunchAttributeValue v;
        attr_get(s, (cudaLaunchAttributeID)a, &v);
        e = attr_set(d, (cudaLaunchAttributeID)a, &v);
    }
    emu_trace_call(api, t0, e, d ? d->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src)
{
    RT_ENTER();
    return copy_attrs(RT_API(), rt_t0, dst, src, 0);
}

cudaError_t cudaStreamCopyAttributes_ptsz(cudaStream_t dst, cudaStream_t src)
{
    RT_ENTER();
    return copy_attrs(RT_API(), rt_t0, dst, src, 1);
}

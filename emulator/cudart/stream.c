/* Runtime streams, events, host functions and synchronisation. */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

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
    if (!s || !stream)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    uint64_t id = s->id;
    RT_RETURN_STREAM(rt_error(emu_stream_destroy(s)), id);
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(hStream, 0);
    if (!priority)
        RT_RETURN(cudaErrorInvalidValue);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    *priority = s->priority;
    RT_RETURN_STREAM(cudaSuccess, s->id);
}

cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(hStream, 0);
    if (!flags)
        RT_RETURN(cudaErrorInvalidValue);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    *flags = (s->flags & MAYA_STREAM_NON_BLOCKING) ? cudaStreamNonBlocking : cudaStreamDefault;
    RT_RETURN_STREAM(cudaSuccess, s->id);
}

cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int *device)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(hStream, 0);
    if (!device)
        RT_RETURN(cudaErrorInvalidValue);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    *device = s->device;
    RT_RETURN_STREAM(cudaSuccess, s->id);
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    RT_ENTER();
    if (leastPriority)
        *leastPriority = 0;
    if (greatestPriority)
        *greatestPriority = -5;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(stream, 0);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    emu_hostfn_drain(s);
    emu_trace_sync(RT_API(), rt_t0, cudaSuccess, MAYA_SYNC_STREAM, s->id, 0, s->id);
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(stream, 0);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    /* Emulated work completes at once; only pending host functions are not done. */
    emu_hostfn_drain(s);
    RT_RETURN_STREAM(cudaSuccess, s->id);
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

static cudaError_t enqueue_host_func(uint32_t api, uint64_t t0, struct emu_stream *s, void (*fn)(void *),
                                     void *arg, uint64_t user_fn, void *user_data)
{
    cudaError_t e = rt_error(emu_hostfn_enqueue(s, fn, arg));
    emu_trace_host_func(api, t0, e, user_fn, (uint64_t)(uintptr_t)user_data, s->id);
    return rt_note(e);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(stream, 0);
    if (!fn)
        RT_RETURN(cudaErrorInvalidValue);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    return enqueue_host_func(RT_API(), rt_t0, s, fn, userData, (uint64_t)(uintptr_t)fn, userData);
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                  unsigned int flags)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(stream, 0);
    if (!callback || flags != 0)
        RT_RETURN(cudaErrorInvalidValue);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    struct callback *c = malloc(sizeof *c);
    if (!c)
        RT_RETURN(cudaErrorMemoryAllocation);
    *c = (struct callback){ callback, stream, userData };
    return enqueue_host_func(RT_API(), rt_t0, s, run_callback, c, (uint64_t)(uintptr_t)callback, userData);
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

static cudaError_t event_record(uint32_t api, uint64_t t0, cudaEvent_t event, cudaStream_t stream)
{
    struct emu_event *e = emu_event_resolve(event);
    struct emu_stream *s = rt_stream(stream, 0);
    if (!e || !s) {
        emu_trace_call(api, t0, cudaErrorInvalidResourceHandle, 0, 0);
        return rt_note(cudaErrorInvalidResourceHandle);
    }
    emu_event_record(e, s);
    emu_trace_event(MAYA_REC_EVENT_RECORD, api, t0, cudaSuccess, e, e->version, s->id);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    RT_ENTER();
    return event_record(RT_API(), rt_t0, event, stream);
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    RT_ENTER();
    if (flags & ~(unsigned)cudaEventRecordExternal)
        RT_RETURN(cudaErrorInvalidValue);
    return event_record(RT_API(), rt_t0, event, stream);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    RT_ENTER();
    struct emu_event *e = emu_event_resolve(event);
    struct emu_stream *s = rt_stream(stream, 0);
    if (!e || !s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    emu_trace_event(MAYA_REC_STREAM_WAIT, RT_API(), rt_t0, cudaSuccess, e, e->version, s->id);
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    RT_ENTER();
    struct emu_event *e = emu_event_resolve(event);
    if (!e)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    emu_trace_sync(RT_API(), rt_t0, cudaSuccess, MAYA_SYNC_EVENT, e->id, e->version, e->stream);
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    RT_ENTER();
    struct emu_event *e = emu_event_resolve(event);
    RT_RETURN(e ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    RT_ENTER();
    struct emu_event *a = emu_event_resolve(start), *b = emu_event_resolve(end);
    if (!ms)
        RT_RETURN(cudaErrorInvalidValue);
    if (!a || !b)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    if ((a->flags | b->flags) & cudaEventDisableTiming)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    if (!a->version || !b->version)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    /* The host time between the two records: what the program spent
     * issuing the work between them. */
    *ms = (float)((double)((int64_t)(b->t_ns - a->t_ns)) / 1e6);
    RT_RETURN(cudaSuccess);
}

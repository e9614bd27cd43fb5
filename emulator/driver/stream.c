/* Driver streams, events and host functions, traced with the same records
 * as the runtime's (the core writes them). */
#include "drv.h"

#include <stdlib.h>

/* Each entry point comes in a legacy-default-stream and a per-thread (_ptsz)
 * form; IMPL_PAIR defines both around one static implementation. */
#define IMPL_PAIR(name, params, ...) \
    CUresult name params \
    { \
        DRV_ENTER(); \
        return name##_impl(DRV_API(), drv_t0, 0, __VA_ARGS__); \
    } \
    CUresult name##_ptsz params \
    { \
        DRV_ENTER(); \
        return name##_impl(DRV_API(), drv_t0, 1, __VA_ARGS__); \
    }

#define FAIL(api, t0, e, stream_id) \
    do { \
        emu_trace_call(api, t0, e, stream_id, 0); \
        return e; \
    } while (0)

/* ---- streams ---- */

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    DRV_ENTER();
    if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_NEED_CTX(dev);
    /* Priorities are clamped to the device's range [-5, 0], as CUDA does. */
    priority = priority < -5 ? -5 : priority > 0 ? 0 : priority;
    struct emu_stream *s;
    enum emu_err e = emu_stream_create(dev, flags & CU_STREAM_NON_BLOCKING ? MAYA_STREAM_NON_BLOCKING : 0,
                                       priority, &s);
    if (e == EMU_OK)
        *phStream = (CUstream)s;
    DRV_RETURN_STREAM(drv_error(e), e == EMU_OK ? s->id : 0);
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return cuStreamCreateWithPriority(phStream, Flags, 0);
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    DRV_ENTER();
    struct emu_stream *s = drv_stream(hStream, 0);
    if (!hStream || !s)
        DRV_RETURN(CUDA_ERROR_INVALID_HANDLE);
    uint64_t id = s->id;
    DRV_RETURN_STREAM(drv_error(emu_stream_destroy(s)), id);
}

CUresult cuStreamDestroy(CUstream hStream)
{
    return cuStreamDestroy_v2(hStream);
}

static CUresult cuStreamSynchronize_impl(uint32_t api, uint64_t t0, int pt, CUstream h)
{
    struct emu_stream *s = drv_stream(h, pt);
    if (!s)
        FAIL(api, t0, CUDA_ERROR_INVALID_HANDLE, 0);
    /* the capture rules, host functions, pools, the SYNC record (core) */
    CUresult e = drv_error(emu_stream_sync(s, api, t0));
    if (e != CUDA_SUCCESS)
        FAIL(api, t0, e, s->id);
    return CUDA_SUCCESS;
}
IMPL_PAIR(cuStreamSynchronize, (CUstream hStream), hStream)

static CUresult cuStreamQuery_impl(uint32_t api, uint64_t t0, int pt, CUstream h)
{
    struct emu_stream *s = drv_stream(h, pt);
    if (!s)
        FAIL(api, t0, CUDA_ERROR_INVALID_HANDLE, 0);
    CUresult e = drv_error(emu_capture_unsafe_call(s));
    if (e != CUDA_SUCCESS)
        FAIL(api, t0, e, s->id);
    /* Emulated work completes at once; only host functions take time. */
    emu_hostfn_drain(s);
    emu_trace_call(api, t0, CUDA_SUCCESS, s->id, 0);
    return CUDA_SUCCESS;
}
IMPL_PAIR(cuStreamQuery, (CUstream hStream), hStream)

struct wait_args {
    CUevent event;
    unsigned flags;
};

static CUresult cuStreamWaitEvent_impl(uint32_t api, uint64_t t0, int pt, CUstream h, struct wait_args w)
{
    struct emu_stream *s = drv_stream(h, pt);
    struct emu_event *e = emu_event_resolve(w.event);
    if (!s || !e)
        FAIL(api, t0, CUDA_ERROR_INVALID_HANDLE, s ? s->id : 0);
    if (w.flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        FAIL(api, t0, CUDA_ERROR_INVALID_VALUE, s->id);
    /* while capturing: a dependency of the capture, or s joins it (core) */
    CUresult err = drv_error(emu_stream_wait_issue(api, t0, s, e));
    if (err != CUDA_SUCCESS)
        FAIL(api, t0, err, s->id);
    return CUDA_SUCCESS;
}
IMPL_PAIR(cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags), hStream,
          ((struct wait_args){ hEvent, Flags }))

/* Stream property queries: the stream (or NULL on a bad handle) and an
 * output pointer, both checked the same way. */
#define STREAM_GETTER(name, type, expr) \
    static CUresult name##_impl(uint32_t api, uint64_t t0, int pt, CUstream h, type *out) \
    { \
        struct emu_stream *s = drv_stream(h, pt); \
        if (!out) \
            FAIL(api, t0, CUDA_ERROR_INVALID_VALUE, 0); \
        if (!s) \
            FAIL(api, t0, CUDA_ERROR_INVALID_HANDLE, 0); \
        *out = (expr); \
        emu_trace_call(api, t0, CUDA_SUCCESS, s->id, 0); \
        return CUDA_SUCCESS; \
    } \
    IMPL_PAIR(name, (CUstream hStream, type *out), hStream, out)

STREAM_GETTER(cuStreamGetPriority, int, s->priority)
STREAM_GETTER(cuStreamGetFlags, unsigned int,
              (s->flags & MAYA_STREAM_NON_BLOCKING) ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT)
STREAM_GETTER(cuStreamGetId, unsigned long long, s->id)
STREAM_GETTER(cuStreamGetDevice, CUdevice, s->device)
/* Streams remember their device, not the context that made them: the
 * current context if it is on that device, else the device's primary. */
STREAM_GETTER(cuStreamGetCtx, CUcontext,
              (CUcontext)(drv_ctx_device() == s->device ? emu_thread()->ctx[emu_thread()->nctx - 1]
                                                         : emu_primary_ctx(s->device)))

struct ctx2_args {
    CUcontext *ctx;
    CUgreenCtx *green;
};

static CUresult cuStreamGetCtx_v2_impl(uint32_t api, uint64_t t0, int pt, CUstream h, struct ctx2_args a)
{
    CUresult e = cuStreamGetCtx_impl(api, t0, pt, h, a.ctx);
    if (e == CUDA_SUCCESS && a.green)
        *a.green = NULL; /* green contexts are not emulated */
    return e;
}
IMPL_PAIR(cuStreamGetCtx_v2, (CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx), hStream,
          ((struct ctx2_args){ pCtx, pGreenCtx }))

/* ---- host functions ---- */

struct host_args {
    void (*run)(void *);
    void *arg;
    uint64_t user_fn;
    void *user_data;
};

static CUresult enqueue_host(uint32_t api, uint64_t t0, struct emu_stream *s, struct host_args a)
{
    CUresult e = drv_error(emu_hostfn_enqueue(s, a.run, a.arg));
    emu_trace_host_func(api, t0, e, a.user_fn, (uint64_t)(uintptr_t)a.user_data, s->id);
    return e;
}

static CUresult cuLaunchHostFunc_impl(uint32_t api, uint64_t t0, int pt, CUstream h, struct host_args a)
{
    struct emu_stream *s = drv_stream(h, pt);
    if (!a.run)
        FAIL(api, t0, CUDA_ERROR_INVALID_VALUE, 0);
    if (!s)
        FAIL(api, t0, CUDA_ERROR_INVALID_HANDLE, 0);
    return enqueue_host(api, t0, s, a);
}
IMPL_PAIR(cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *userData), hStream,
          ((struct host_args){ fn, userData, (uint64_t)(uintptr_t)fn, userData }))

struct callback {
    CUstreamCallback fn;
    CUstream stream;
    void *data;
};

static void run_callback(void *arg)
{
    struct callback c = *(struct callback *)arg;
    free(arg);
    c.fn(c.stream, CUDA_SUCCESS, c.data);
}

struct callback_args {
    CUstreamCallback fn;
    void *data;
    unsigned flags;
};

static CUresult cuStreamAddCallback_impl(uint32_t api, uint64_t t0, int pt, CUstream h, struct callback_args a)
{
    struct emu_stream *s = drv_stream(h, pt);
    if (!a.fn || a.flags != 0)
        FAIL(api, t0, CUDA_ERROR_INVALID_VALUE, 0);
    if (!s)
        FAIL(api, t0, CUDA_ERROR_INVALID_HANDLE, 0);
    struct callback *c = malloc(sizeof *c);
    if (!c)
        FAIL(api, t0, CUDA_ERROR_OUT_OF_MEMORY, s->id);
    *c = (struct callback){ a.fn, h, a.data };
    CUresult e = enqueue_host(api, t0, s, (struct host_args){ run_callback, c, (uint64_t)(uintptr_t)a.fn, a.data });
    if (e != CUDA_SUCCESS)
        free(c);
    return e;
}
IMPL_PAIR(cuStreamAddCallback, (CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags),
          hStream, ((struct callback_args){ callback, userData, flags }))

/* ---- events ---- */

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    DRV_ENTER();
    unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (!phEvent || (Flags & ~known) || ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)))
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (drv_ctx_device() < 0)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    struct emu_event *e;
    enum emu_err rc = emu_event_create(Flags, &e);
    if (rc == EMU_OK)
        *phEvent = (CUevent)e;
    DRV_RETURN(drv_error(rc));
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_event_destroy(emu_event_resolve(hEvent))));
}

CUresult cuEventDestroy(CUevent hEvent)
{
    return cuEventDestroy_v2(hEvent);
}

/* external: CU_EVENT_RECORD_EXTERNAL (an event-record node while capturing). */
static CUresult record(uint32_t api, uint64_t t0, CUevent hEvent, struct emu_stream *s, int external)
{
    struct emu_event *e = emu_event_resolve(hEvent);
    if (!e || !s)
        FAIL(api, t0, CUDA_ERROR_INVALID_HANDLE, s ? s->id : 0);
    CUresult err = drv_error(emu_event_record_issue(api, t0, e, s, external));
    if (err != CUDA_SUCCESS)
        FAIL(api, t0, err, s->id);
    return CUDA_SUCCESS;
}

static CUresult cuEventRecord_impl(uint32_t api, uint64_t t0, int pt, CUevent hEvent, CUstream h)
{
    return record(api, t0, hEvent, drv_stream(h, pt), 0);
}
IMPL_PAIR(cuEventRecord, (CUevent hEvent, CUstream hStream), hEvent, hStream)

struct record_args {
    CUstream stream;
    unsigned flags;
};

static CUresult cuEventRecordWithFlags_impl(uint32_t api, uint64_t t0, int pt, CUevent hEvent, struct record_args a)
{
    if (a.flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        FAIL(api, t0, CUDA_ERROR_INVALID_VALUE, 0);
    return record(api, t0, hEvent, drv_stream(a.stream, pt), (a.flags & CU_EVENT_RECORD_EXTERNAL) != 0);
}
IMPL_PAIR(cuEventRecordWithFlags, (CUevent hEvent, CUstream hStream, unsigned int flags), hEvent,
          ((struct record_args){ hStream, flags }))

CUresult cuEventSynchronize(CUevent hEvent)
{
    DRV_ENTER();
    struct emu_event *e = emu_event_resolve(hEvent);
    if (!e)
        DRV_RETURN(CUDA_ERROR_INVALID_HANDLE);
    CUresult err = drv_error(emu_event_sync(e, DRV_API(), drv_t0));
    if (err != CUDA_SUCCESS)
        DRV_RETURN(err);
    return CUDA_SUCCESS;
}

CUresult cuEventQuery(CUevent hEvent)
{
    DRV_ENTER();
    DRV_RETURN(emu_event_resolve(hEvent) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    DRV_ENTER();
    if (!pMilliseconds)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_RETURN(drv_error(emu_event_elapsed(emu_event_resolve(hStart), emu_event_resolve(hEnd), pMilliseconds)));
}

CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

/* Events on a whole context: the device's legacy stream stands for "all
 * work of the context" (it orders with every blocking stream). */
CUresult cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent)
{
    DRV_ENTER();
    struct emu_ctx *c = (struct emu_ctx *)hCtx;
    if (!emu_ctx_valid(c))
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    int dev = drv_ctx_device();
    if (dev != c->device)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    return record(DRV_API(), drv_t0, hEvent, drv_stream(CU_STREAM_LEGACY, 0), 0);
}

CUresult cuCtxWaitEvent(CUcontext hCtx, CUevent hEvent)
{
    DRV_ENTER();
    struct emu_ctx *c = (struct emu_ctx *)hCtx;
    if (!emu_ctx_valid(c) || drv_ctx_device() != c->device)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    return cuStreamWaitEvent_impl(DRV_API(), drv_t0, 0, CU_STREAM_LEGACY, (struct wait_args){ hEvent, 0 });
}

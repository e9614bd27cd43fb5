/* Runtime: devices, streams, events, synchronisation and host functions:
 * what orders device work, traced as the emulator traces it so that the
 * simulator can replay a profile. Synchronising calls let the measurements
 * of finished work be collected. */
#include "prof.h"

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t);
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t, cudaEvent_t, unsigned int);
cudaError_t cudaEventRecord_ptsz(cudaEvent_t, cudaStream_t);
cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t, cudaStream_t, unsigned int);
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t, cudaHostFn_t, void *);

#define BODY(CALL, TRACE, AFTER) PROF_BODY(cudaError_t, CALL, TRACE, AFTER)
#define REAL_OR_MISSING(NAME) PROF_REAL_OR(prof_cudart, NAME, cudaErrorNotSupported)

#define API EMU_API_ID(__func__)

static uint64_t stream_id(cudaStream_t s, int per_thread)
{
    struct emu_stream *es = prof_stream(s, per_thread);
    return es ? es->id : 0;
}

/* ---- devices ---- */

cudaError_t cudaSetDevice(int device)
{
    REAL_OR_MISSING(cudaSetDevice);
    BODY(real(device), (r_ == cudaSuccess ? (void)prof_device() : (void)0, emu_trace_call(API, op_.t0, r_, 0, 0)), );
}

cudaError_t cudaDeviceSynchronize(void)
{
    REAL_OR_MISSING(cudaDeviceSynchronize);
    BODY(real(), emu_trace_sync(API, op_.t0, r_, MAYA_SYNC_DEVICE, (uint64_t)emu_current_device(), 0, 0),
         prof_collect_now());
}

/* ---- streams ---- */

static cudaError_t stream_create(cudaError_t e, uint32_t api, uint64_t t0, cudaStream_t *s, unsigned flags,
                                 int priority)
{
    struct emu_stream *es = e == cudaSuccess && s ? prof_stream_new(*s, flags, priority) : NULL;
    emu_trace_call(api, t0, e, es ? es->id : 0, 0);
    return e;
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    REAL_OR_MISSING(cudaStreamCreate);
    BODY(real(pStream), stream_create(r_, API, op_.t0, pStream, 0, 0), );
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    REAL_OR_MISSING(cudaStreamCreateWithFlags);
    BODY(real(pStream, flags), stream_create(r_, API, op_.t0, pStream, flags, 0), );
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
    REAL_OR_MISSING(cudaStreamCreateWithPriority);
    BODY(real(pStream, flags, priority), stream_create(r_, API, op_.t0, pStream, flags, priority), );
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    REAL_OR_MISSING(cudaStreamDestroy);
    BODY(real(stream), (emu_trace_call(API, op_.t0, r_, stream_id(stream, 0), 0), prof_stream_forget(stream)), );
}

static cudaError_t stream_sync(cudaError_t (*real)(cudaStream_t), uint32_t api, cudaStream_t stream, int per_thread)
{
    BODY(real(stream), ({
             uint64_t sid = stream_id(stream, per_thread);
             emu_trace_sync(api, op_.t0, r_, MAYA_SYNC_STREAM, sid, 0, sid);
         }),
         prof_collect_now());
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    REAL_OR_MISSING(cudaStreamSynchronize);
    return stream_sync(real, API, stream, 0);
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    REAL_OR_MISSING(cudaStreamSynchronize_ptsz);
    return stream_sync(real, API, stream, 1);
}

static void trace_wait(struct prof_op *op, uint32_t api, cudaError_t e, cudaStream_t stream, cudaEvent_t event,
                       int per_thread)
{
    struct emu_event *ee = prof_event(event, 0, 0);
    uint64_t sid = stream_id(stream, per_thread);
    if (e != cudaSuccess || !ee)
        emu_trace_call(api, op->t0, e, sid, 0);
    else
        emu_trace_event(MAYA_REC_STREAM_WAIT, api, op->t0, e, ee, ee->version, sid);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    REAL_OR_MISSING(cudaStreamWaitEvent);
    BODY(real(stream, event, flags), trace_wait(&op_, API, r_, stream, event, 0), );
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    REAL_OR_MISSING(cudaStreamWaitEvent_ptsz);
    BODY(real(stream, event, flags), trace_wait(&op_, API, r_, stream, event, 1), );
}

/* ---- events ---- */

static void event_create(cudaError_t e, uint32_t api, uint64_t t0, cudaEvent_t *event, unsigned flags)
{
    if (e == cudaSuccess && event)
        prof_event(*event, flags, 1);
    emu_trace_call(api, t0, e, 0, 0);
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    REAL_OR_MISSING(cudaEventCreate);
    BODY(real(event), event_create(r_, API, op_.t0, event, 0), );
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    REAL_OR_MISSING(cudaEventCreateWithFlags);
    BODY(real(event, flags), event_create(r_, API, op_.t0, event, flags), );
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    REAL_OR_MISSING(cudaEventDestroy);
    BODY(real(event), (emu_trace_call(API, op_.t0, r_, 0, 0), prof_event_forget(event)), );
}

static void trace_record(struct prof_op *op, uint32_t api, cudaError_t e, cudaEvent_t event, cudaStream_t stream,
                         int per_thread)
{
    struct emu_stream *s = prof_stream(stream, per_thread);
    struct emu_event *ee = prof_event(event, 0, 0);
    if (e != cudaSuccess || !ee || !s) {
        emu_trace_call(api, op->t0, e, s ? s->id : 0, 0);
        return;
    }
    emu_event_record(ee, s);
    emu_trace_event(MAYA_REC_EVENT_RECORD, api, op->t0, e, ee, ee->version, s->id);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    REAL_OR_MISSING(cudaEventRecord);
    BODY(real(event, stream), trace_record(&op_, API, r_, event, stream, 0), );
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
    REAL_OR_MISSING(cudaEventRecord_ptsz);
    BODY(real(event, stream), trace_record(&op_, API, r_, event, stream, 1), );
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    REAL_OR_MISSING(cudaEventRecordWithFlags);
    BODY(real(event, stream, flags), trace_record(&op_, API, r_, event, stream, 0), );
}

cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    REAL_OR_MISSING(cudaEventRecordWithFlags_ptsz);
    BODY(real(event, stream, flags), trace_record(&op_, API, r_, event, stream, 1), );
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    REAL_OR_MISSING(cudaEventSynchronize);
    BODY(real(event), ({
             struct emu_event *ee = prof_event(event, 0, 0);
             if (ee)
                 emu_trace_sync(API, op_.t0, r_, MAYA_SYNC_EVENT, ee->id, ee->version, ee->stream);
             else
                 emu_trace_call(API, op_.t0, r_, 0, 0);
         }),
         prof_collect_now());
}

/* ---- host functions ---- */

static void trace_host_func(struct prof_op *op, uint32_t api, cudaError_t e, cudaStream_t stream, int per_thread,
                            void *fn, void *data)
{
    emu_trace_host_func(api, op->t0, e, (uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)data,
                        stream_id(stream, per_thread));
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    REAL_OR_MISSING(cudaLaunchHostFunc);
    BODY(real(stream, fn, userData), trace_host_func(&op_, API, r_, stream, 0, (void *)fn, userData), );
}

cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    REAL_OR_MISSING(cudaLaunchHostFunc_ptsz);
    BODY(real(stream, fn, userData), trace_host_func(&op_, API, r_, stream, 1, (void *)fn, userData), );
}

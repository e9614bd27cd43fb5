/* Runtime: allocations, copies and memsets. Allocations are traced with
 * the device's memory in use (the sum of what the program holds through
 * these calls); copies and memsets are device work, measured. */
#include "prof.h"


/* The per-thread-default-stream twins have no prototypes in the headers. */
cudaError_t cudaMemcpy_ptds(void *, const void *, size_t, enum cudaMemcpyKind);
cudaError_t cudaMemcpyAsync_ptsz(void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemcpy2D_ptds(void *, size_t, const void *, size_t, size_t, size_t, enum cudaMemcpyKind);
cudaError_t cudaMemcpy2DAsync_ptsz(void *, size_t, const void *, size_t, size_t, size_t, enum cudaMemcpyKind,
                                   cudaStream_t);
cudaError_t cudaMemset_ptds(void *, int, size_t);
cudaError_t cudaMemsetAsync_ptsz(void *, int, size_t, cudaStream_t);
cudaError_t cudaMemset2D_ptds(void *, size_t, int, size_t, size_t);
cudaError_t cudaMemset2DAsync_ptsz(void *, size_t, int, size_t, size_t, cudaStream_t);
cudaError_t cudaMallocAsync_ptsz(void **, size_t, cudaStream_t);
cudaError_t cudaFreeAsync_ptsz(void *, cudaStream_t);

/* ---- allocations ---- */

static uint64_t stream_id(cudaStream_t stream, int per_thread)
{
    struct emu_stream *s = prof_stream(stream, per_thread);
    return s ? s->id : 0;
}

static void trace_alloc(struct prof_op *op, uint32_t api, cudaError_t e, void *p, size_t bytes, int kind,
                        int device, uint64_t stream)
{
    if (e == cudaSuccess && p)
        prof_alloc_note((uint64_t)(uintptr_t)p, bytes, kind, device);
    else if (e == cudaErrorMemoryAllocation)
        emu_note_oom();
    emu_trace_alloc(MAYA_REC_ALLOC, api, op->t0, e, e == cudaSuccess ? (uint64_t)(uintptr_t)p : 0, bytes, kind,
                    device, stream, 0);
}

static void trace_free(struct prof_op *op, uint32_t api, cudaError_t e, void *p, uint64_t stream, uint16_t flags)
{
    uint64_t bytes;
    int kind, device;
    if (e != cudaSuccess || !p || !prof_alloc_take((uint64_t)(uintptr_t)p, &bytes, &kind, &device)) {
        emu_trace_call(api, op->t0, e, stream, flags);
        return;
    }
    emu_trace_alloc(MAYA_REC_FREE, api, op->t0, e, (uint64_t)(uintptr_t)p, bytes, kind, device, stream, flags);
}

static void *deref(void **p)
{
    return p ? *p : NULL;
}

/* One allocating call: CALL is the real call, P the pointer it set. */
#define ALLOC_BODY(CALL, P, BYTES, KIND, DEVICE, STREAM) \
    PROF_BODY(cudaError_t, CALL, \
              trace_alloc(&op_, EMU_API_ID(__func__), r_, r_ == cudaSuccess ? deref(P) : NULL, (BYTES), (KIND), \
                          (KIND) == MAYA_ALLOC_HOST || (KIND) == MAYA_ALLOC_HOST_REGISTER ? -1 : (DEVICE), \
                          (STREAM)), )

#define FREE_BODY(CALL, P, STREAM, FLAGS) \
    PROF_BODY(cudaError_t, CALL, trace_free(&op_, EMU_API_ID(__func__), r_, (P), (STREAM), (FLAGS)), )

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    PROF_REAL_OR(prof_cudart, cudaMalloc, cudaErrorNotSupported);
    ALLOC_BODY(real(devPtr, size), devPtr, size, MAYA_ALLOC_DEVICE, emu_current_device(), 0);
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    PROF_REAL_OR(prof_cudart, cudaMallocManaged, cudaErrorNotSupported);
    ALLOC_BODY(real(devPtr, size, flags), devPtr, size, MAYA_ALLOC_MANAGED, emu_current_device(), 0);
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    PROF_REAL_OR(prof_cudart, cudaMallocPitch, cudaErrorNotSupported);
    PROF_BODY(cudaError_t, real(devPtr, pitch, width, height),
              trace_alloc(&op_, EMU_API_ID(__func__), r_, r_ == cudaSuccess ? deref(devPtr) : NULL,
                          r_ == cudaSuccess && pitch ? *pitch * height : width * height, MAYA_ALLOC_DEVICE,
                          emu_current_device(), 0), );
}

static cudaError_t malloc_async(cudaError_t (*real)(void **, size_t, cudaStream_t), uint32_t api, void **p,
                                size_t size, cudaStream_t stream, int per_thread)
{
    PROF_BODY(cudaError_t, real(p, size, stream),
              trace_alloc(&op_, api, r_, r_ == cudaSuccess ? deref(p) : NULL, size, MAYA_ALLOC_ASYNC,
                          emu_current_device(), stream_id(stream, per_thread)), );
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    PROF_REAL_OR(prof_cudart, cudaMallocAsync, cudaErrorNotSupported);
    return malloc_async(real, EMU_API_ID(__func__), devPtr, size, hStream, 0);
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
    PROF_REAL_OR(prof_cudart, cudaMallocAsync_ptsz, cudaErrorNotSupported);
    return malloc_async(real, EMU_API_ID(__func__), devPtr, size, hStream, 1);
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    PROF_REAL_OR(prof_cudart, cudaHostAlloc, cudaErrorNotSupported);
    ALLOC_BODY(real(pHost, size, flags), pHost, size, MAYA_ALLOC_HOST, -1, 0);
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    PROF_REAL_OR(prof_cudart, cudaMallocHost, cudaErrorNotSupported);
    ALLOC_BODY(real(ptr, size), ptr, size, MAYA_ALLOC_HOST, -1, 0);
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    PROF_REAL_OR(prof_cudart, cudaHostRegister, cudaErrorNotSupported);
    void *p = ptr;
    ALLOC_BODY(real(ptr, size, flags), &p, size, MAYA_ALLOC_HOST_REGISTER, -1, 0);
}

/* cudaFree waits for the device; so does cudaFreeHost. */
cudaError_t cudaFree(void *devPtr)
{
    PROF_REAL_OR(prof_cudart, cudaFree, cudaErrorNotSupported);
    FREE_BODY(real(devPtr), devPtr, 0, MAYA_F_DEVICE_SYNC);
}

cudaError_t cudaFreeHost(void *ptr)
{
    PROF_REAL_OR(prof_cudart, cudaFreeHost, cudaErrorNotSupported);
    FREE_BODY(real(ptr), ptr, 0, MAYA_F_DEVICE_SYNC);
}

cudaError_t cudaHostUnregister(void *ptr)
{
    PROF_REAL_OR(prof_cudart, cudaHostUnregister, cudaErrorNotSupported);
    FREE_BODY(real(ptr), ptr, 0, 0);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    PROF_REAL_OR(prof_cudart, cudaFreeAsync, cudaErrorNotSupported);
    FREE_BODY(real(devPtr, hStream), devPtr, stream_id(hStream, 0), 0);
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
    PROF_REAL_OR(prof_cudart, cudaFreeAsync_ptsz, cudaErrorNotSupported);
    FREE_BODY(real(devPtr, hStream), devPtr, stream_id(hStream, 1), 0);
}

/* ---- copies ---- */

void prof_copy_classify(struct emu_copy *c)
{
    int pin_d, pin_s;
    c->dst_device = prof_ptr_device(c->dst, &pin_d);
    c->src_device = prof_ptr_device(c->src, &pin_s);
    if (c->dst_device >= 0 && c->src_device >= 0)
        c->kind = c->dst_device == c->src_device ? MAYA_COPY_D2D : MAYA_COPY_PEER;
    else if (c->dst_device >= 0)
        c->kind = MAYA_COPY_H2D, c->pinned = pin_s;
    else if (c->src_device >= 0)
        c->kind = MAYA_COPY_D2H, c->pinned = pin_d;
    else
        c->kind = MAYA_COPY_H2H, c->pinned = pin_s && pin_d;
}

void prof_trace_copy(struct prof_op *op, uint32_t api, int e, const struct prof_copy *cp)
{
    struct emu_stream *s = prof_stream(cp->stream, cp->per_thread);
    if (e != cudaSuccess) {
        emu_trace_call(api, op->t0, e, s ? s->id : 0, 0);
        return;
    }
    struct emu_copy c = {
        .dst = cp->dst, .src = cp->src, .width = cp->width, .height = cp->height, .depth = 1,
        .stream = s, .async = cp->async,
    };
    prof_copy_classify(&c);
    emu_copy_finish(api, op->t0, e, &c);
}

static cudaStream_t event_stream(cudaStream_t s, int per_thread)
{
    return !s && per_thread ? cudaStreamPerThread : s;
}

/* The frame of every copy and memset: events around the real call on its
 * stream, then TRACE (a statement using op_ and r_); a synchronous one lets
 * what finished be collected. */
#define DEVICE_BODY(STREAM, PER_THREAD, CALL, TRACE) \
    PROF_DEVICE_BODY(cudaError_t, cudaSuccess, event_stream((STREAM), (PER_THREAD)), CALL, TRACE, \
                     if (!async_) prof_collect_now())

#define COPY(NAME, DST, SRC, W, H, STREAM, PER_THREAD, ASYNC, CALL) \
    do { \
        PROF_REAL_OR(prof_cudart, NAME, cudaErrorNotSupported); \
        const int async_ = (ASYNC); \
        struct prof_copy c_ = { (DST), (SRC), (W), (H), (STREAM), (PER_THREAD), async_ }; \
        DEVICE_BODY(STREAM, PER_THREAD, CALL, prof_trace_copy(&op_, EMU_API_ID(#NAME), r_, &c_)); \
    } while (0)

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    COPY(cudaMemcpy, dst, src, count, 1, NULL, 0, 0, real(dst, src, count, kind));
}

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    COPY(cudaMemcpy_ptds, dst, src, count, 1, NULL, 1, 0, real(dst, src, count, kind));
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    COPY(cudaMemcpyAsync, dst, src, count, 1, stream, 0, 1, real(dst, src, count, kind, stream));
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream)
{
    COPY(cudaMemcpyAsync_ptsz, dst, src, count, 1, stream, 1, 1, real(dst, src, count, kind, stream));
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind)
{
    COPY(cudaMemcpy2D, dst, src, width, height, NULL, 0, 0, real(dst, dpitch, src, spitch, width, height, kind));
}

cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, enum cudaMemcpyKind kind)
{
    COPY(cudaMemcpy2D_ptds, dst, src, width, height, NULL, 1, 0,
         real(dst, dpitch, src, spitch, width, height, kind));
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    COPY(cudaMemcpy2DAsync, dst, src, width, height, stream, 0, 1,
         real(dst, dpitch, src, spitch, width, height, kind, stream));
}

cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                   size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    COPY(cudaMemcpy2DAsync_ptsz, dst, src, width, height, stream, 1, 1,
         real(dst, dpitch, src, spitch, width, height, kind, stream));
}

cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    COPY(cudaMemcpyPeer, dst, src, count, 1, NULL, 0, 0, real(dst, dstDevice, src, srcDevice, count));
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                cudaStream_t stream)
{
    COPY(cudaMemcpyPeerAsync, dst, src, count, 1, stream, 0, 1,
         real(dst, dstDevice, src, srcDevice, count, stream));
}

/* ---- memsets ---- */

static void trace_memset(struct prof_op *op, uint32_t api, cudaError_t e, void *dst, int value, size_t width,
                         size_t height, size_t pitch, cudaStream_t stream, int per_thread, int async)
{
    struct emu_stream *s = prof_stream(stream, per_thread);
    if (e != cudaSuccess) {
        emu_trace_call(api, op->t0, e, s ? s->id : 0, 0);
        return;
    }
    emu_memset_finish(api, op->t0, e, dst, (uint32_t)value, 1, width, height, pitch, s, async);
}

#define MEMSET(NAME, DST, VALUE, W, H, PITCH, STREAM, PER_THREAD, ASYNC, CALL) \
    do { \
        PROF_REAL_OR(prof_cudart, NAME, cudaErrorNotSupported); \
        const int async_ = (ASYNC); \
        DEVICE_BODY(STREAM, PER_THREAD, CALL, \
                    trace_memset(&op_, EMU_API_ID(#NAME), r_, (DST), (VALUE), (W), (H), (PITCH), (STREAM), \
                                 (PER_THREAD), async_)); \
    } while (0)

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    MEMSET(cudaMemset, devPtr, value, count, 1, count, NULL, 0, 0, real(devPtr, value, count));
}

cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    MEMSET(cudaMemset_ptds, devPtr, value, count, 1, count, NULL, 1, 0, real(devPtr, value, count));
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    MEMSET(cudaMemsetAsync, devPtr, value, count, 1, count, stream, 0, 1, real(devPtr, value, count, stream));
}

cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    MEMSET(cudaMemsetAsync_ptsz, devPtr, value, count, 1, count, stream, 1, 1,
           real(devPtr, value, count, stream));
}

cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    MEMSET(cudaMemset2D, devPtr, value, width, height, pitch, NULL, 0, 0, real(devPtr, pitch, value, width, height));
}

cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    MEMSET(cudaMemset2D_ptds, devPtr, value, width, height, pitch, NULL, 1, 0,
           real(devPtr, pitch, value, width, height));
}

cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream)
{
    MEMSET(cudaMemset2DAsync, devPtr, value, width, height, pitch, stream, 0, 1,
           real(devPtr, pitch, value, width, height, stream));
}

cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                   cudaStream_t stream)
{
    MEMSET(cudaMemset2DAsync_ptsz, devPtr, value, width, height, pitch, stream, 1, 1,
           real(devPtr, pitch, value, width, height, stream));
}

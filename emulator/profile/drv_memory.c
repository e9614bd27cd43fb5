/* The driver's copies and memsets, traced as the emulated driver traces
 * them (emulator/driver/memory.c): a MEMCPY or MEMSET record under the
 * call's API name without its ABI suffixes (cuMemcpyHtoD_v2_ptds is
 * cuMemcpyHtoD), also when the call failed (its result says so) unless it
 * named no valid stream (or, for a copy, context): a CALL record then; the
 * kind of a copy from where its pointers live; 2D and 3D copies with their
 * shape (the layout read as the emulated driver reads it, calls.h).
 * Measured between the driver's events on the call's stream, as launches
 * are. */
#include "prof.h"

#include "calls.h"

#define DEV_PTR(d) ((void *)(uintptr_t)(d))

/* c: what was copied (dst, src and layout set). */
static void trace_copy(struct prof_op *op, uint32_t api, CUresult e, struct emu_copy *c, CUstream h, int per_thread)
{
    struct emu_stream *s = prof_stream(h, per_thread);
    if (e == CUDA_ERROR_INVALID_HANDLE || e == CUDA_ERROR_INVALID_CONTEXT || !s) {
        emu_trace_call(api, op->t0, e, s ? s->id : 0, 0);
        return;
    }
    c->stream = s;
    prof_copy_classify(c);
    emu_copy_finish(api, op->t0, e, c);
}

/* The frame of every copy and memset: the driver's events around the real
 * call on its stream, then TRACE (a statement using op_ and r_); a
 * synchronous one lets what finished be collected. */
#define DEVICE_BODY(STREAM, PT, ASYNC, CALL, TRACE) \
    PROF_DEVICE_BODY(CUresult, CUDA_SUCCESS, prof_drv_events(&op_, (STREAM), (PT)), CALL, TRACE, \
                     if (!(ASYNC)) prof_collect_now())

/* ---- linear copies ---- */

/* Every linear copy entry point: its name and parameters, the real call's
 * arguments, and how they map (dst, src, bytes, stream, async, per_thread). */
#define COPY_FN(NAME, PARAMS, ARGS, DST, SRC, BYTES, STREAM, ASYNC, PT) \
    CUresult NAME PARAMS \
    { \
        PROF_REAL_OR(prof_cuda, NAME, CUDA_ERROR_NOT_SUPPORTED); \
        struct emu_copy c_ = { .dst = (DST), .src = (SRC), .width = (BYTES), .height = 1, .depth = 1, \
                               .dpitch = (BYTES), .spitch = (BYTES), .async = (ASYNC) }; \
        DEVICE_BODY(STREAM, PT, ASYNC, real ARGS, trace_copy(&op_, DRV_API(), r_, &c_, (STREAM), (PT))); \
    }

#define H2D (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
#define H2D_ASYNC (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
#define D2H (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
#define D2H_ASYNC (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
#define D2D (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
#define D2D_ASYNC (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)

COPY_FN(cuMemcpyHtoD_v2, H2D, (dstDevice, srcHost, ByteCount), DEV_PTR(dstDevice), srcHost, ByteCount, NULL, 0, 0)
COPY_FN(cuMemcpyHtoD_v2_ptds, H2D, (dstDevice, srcHost, ByteCount), DEV_PTR(dstDevice), srcHost, ByteCount, NULL,
        0, 1)
COPY_FN(cuMemcpyDtoH_v2, D2H, (dstHost, srcDevice, ByteCount), dstHost, DEV_PTR(srcDevice), ByteCount, NULL, 0, 0)
COPY_FN(cuMemcpyDtoH_v2_ptds, D2H, (dstHost, srcDevice, ByteCount), dstHost, DEV_PTR(srcDevice), ByteCount, NULL,
        0, 1)
COPY_FN(cuMemcpyDtoD_v2, D2D, (dstDevice, srcDevice, ByteCount), DEV_PTR(dstDevice), DEV_PTR(srcDevice),
        ByteCount, NULL, 0, 0)
COPY_FN(cuMemcpyDtoD_v2_ptds, D2D, (dstDevice, srcDevice, ByteCount), DEV_PTR(dstDevice), DEV_PTR(srcDevice),
        ByteCount, NULL, 0, 1)
COPY_FN(cuMemcpyHtoDAsync_v2, H2D_ASYNC, (dstDevice, srcHost, ByteCount, hStream), DEV_PTR(dstDevice), srcHost,
        ByteCount, hStream, 1, 0)
COPY_FN(cuMemcpyHtoDAsync_v2_ptsz, H2D_ASYNC, (dstDevice, srcHost, ByteCount, hStream), DEV_PTR(dstDevice),
        srcHost, ByteCount, hStream, 1, 1)
COPY_FN(cuMemcpyDtoHAsync_v2, D2H_ASYNC, (dstHost, srcDevice, ByteCount, hStream), dstHost, DEV_PTR(srcDevice),
        ByteCount, hStream, 1, 0)
COPY_FN(cuMemcpyDtoHAsync_v2_ptsz, D2H_ASYNC, (dstHost, srcDevice, ByteCount, hStream), dstHost,
        DEV_PTR(srcDevice), ByteCount, hStream, 1, 1)
COPY_FN(cuMemcpyDtoDAsync_v2, D2D_ASYNC, (dstDevice, srcDevice, ByteCount, hStream), DEV_PTR(dstDevice),
        DEV_PTR(srcDevice), ByteCount, hStream, 1, 0)
COPY_FN(cuMemcpyDtoDAsync_v2_ptsz, D2D_ASYNC, (dstDevice, srcDevice, ByteCount, hStream), DEV_PTR(dstDevice),
        DEV_PTR(srcDevice), ByteCount, hStream, 1, 1)
/* unified addressing: the pointers say where they live */
COPY_FN(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount), DEV_PTR(dst),
        DEV_PTR(src), ByteCount, NULL, 0, 0)
COPY_FN(cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount), DEV_PTR(dst),
        DEV_PTR(src), ByteCount, NULL, 0, 1)
COPY_FN(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
        (dst, src, ByteCount, hStream), DEV_PTR(dst), DEV_PTR(src), ByteCount, hStream, 1, 0)
COPY_FN(cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
        (dst, src, ByteCount, hStream), DEV_PTR(dst), DEV_PTR(src), ByteCount, hStream, 1, 1)

#define PEER (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, \
              size_t ByteCount)
#define PEER_ASYNC (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, \
                    size_t ByteCount, CUstream hStream)
COPY_FN(cuMemcpyPeer, PEER, (dstDevice, dstContext, srcDevice, srcContext, ByteCount), DEV_PTR(dstDevice),
        DEV_PTR(srcDevice), ByteCount, NULL, 0, 0)
COPY_FN(cuMemcpyPeer_ptds, PEER, (dstDevice, dstContext, srcDevice, srcContext, ByteCount), DEV_PTR(dstDevice),
        DEV_PTR(srcDevice), ByteCount, NULL, 0, 1)
COPY_FN(cuMemcpyPeerAsync, PEER_ASYNC, (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream),
        DEV_PTR(dstDevice), DEV_PTR(srcDevice), ByteCount, hStream, 1, 0)
COPY_FN(cuMemcpyPeerAsync_ptsz, PEER_ASYNC, (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream),
        DEV_PTR(dstDevice), DEV_PTR(srcDevice), ByteCount, hStream, 1, 1)

/* ---- 2D and 3D copies ---- */

/* NAME(const TYPE *pCopy [, CUstream hStream]): its ends (END: DRV_END2D
 * or DRV_END3D) and depth; a copy described by nothing is a CALL record. */
#define SHAPED_FN(NAME, TYPE, END, DEPTH, STREAM_PARAM, STREAM_ARG, STREAM, ASYNC, PT) \
    CUresult NAME(const TYPE *pCopy STREAM_PARAM) \
    { \
        PROF_REAL_OR(prof_cuda, NAME, CUDA_ERROR_NOT_SUPPORTED); \
        struct emu_copy c_ = { .async = (ASYNC) }; \
        if (pCopy) { \
            struct drv_copy_end d_ = END(pCopy, dst), s_ = END(pCopy, src); \
            drv_copy_layout(&c_, &d_, &s_, pCopy->WidthInBytes, pCopy->Height, DEPTH); \
        } \
        DEVICE_BODY(STREAM, PT, ASYNC, real(pCopy STREAM_ARG), \
                    if (pCopy) trace_copy(&op_, DRV_API(), r_, &c_, (STREAM), (PT)); \
                    else emu_trace_call(DRV_API(), op_.t0, r_, 0, 0)); \
    }
#define NO_STREAM
#define WITH_STREAM , CUstream hStream
#define STREAM_ARG , hStream

SHAPED_FN(cuMemcpy2D_v2, CUDA_MEMCPY2D, DRV_END2D, 1, NO_STREAM, NO_STREAM, NULL, 0, 0)
SHAPED_FN(cuMemcpy2D_v2_ptds, CUDA_MEMCPY2D, DRV_END2D, 1, NO_STREAM, NO_STREAM, NULL, 0, 1)
SHAPED_FN(cuMemcpy2DUnaligned_v2, CUDA_MEMCPY2D, DRV_END2D, 1, NO_STREAM, NO_STREAM, NULL, 0, 0)
SHAPED_FN(cuMemcpy2DUnaligned_v2_ptds, CUDA_MEMCPY2D, DRV_END2D, 1, NO_STREAM, NO_STREAM, NULL, 0, 1)
SHAPED_FN(cuMemcpy2DAsync_v2, CUDA_MEMCPY2D, DRV_END2D, 1, WITH_STREAM, STREAM_ARG, hStream, 1, 0)
SHAPED_FN(cuMemcpy2DAsync_v2_ptsz, CUDA_MEMCPY2D, DRV_END2D, 1, WITH_STREAM, STREAM_ARG, hStream, 1, 1)
SHAPED_FN(cuMemcpy3D_v2, CUDA_MEMCPY3D, DRV_END3D, pCopy->Depth, NO_STREAM, NO_STREAM, NULL, 0, 0)
SHAPED_FN(cuMemcpy3D_v2_ptds, CUDA_MEMCPY3D, DRV_END3D, pCopy->Depth, NO_STREAM, NO_STREAM, NULL, 0, 1)
SHAPED_FN(cuMemcpy3DAsync_v2, CUDA_MEMCPY3D, DRV_END3D, pCopy->Depth, WITH_STREAM, STREAM_ARG, hStream, 1, 0)
SHAPED_FN(cuMemcpy3DAsync_v2_ptsz, CUDA_MEMCPY3D, DRV_END3D, pCopy->Depth, WITH_STREAM, STREAM_ARG, hStream, 1, 1)
SHAPED_FN(cuMemcpy3DPeer, CUDA_MEMCPY3D_PEER, DRV_END3D, pCopy->Depth, NO_STREAM, NO_STREAM, NULL, 0, 0)
SHAPED_FN(cuMemcpy3DPeer_ptds, CUDA_MEMCPY3D_PEER, DRV_END3D, pCopy->Depth, NO_STREAM, NO_STREAM, NULL, 0, 1)
SHAPED_FN(cuMemcpy3DPeerAsync, CUDA_MEMCPY3D_PEER, DRV_END3D, pCopy->Depth, WITH_STREAM, STREAM_ARG, hStream, 1,
          0)
SHAPED_FN(cuMemcpy3DPeerAsync_ptsz, CUDA_MEMCPY3D_PEER, DRV_END3D, pCopy->Depth, WITH_STREAM, STREAM_ARG, hStream,
          1, 1)

/* ---- memsets ---- */

/* As the emulated driver records them: width elements of elem bytes per
 * row, height rows (0 counts as 1) pitch bytes apart (0: packed). */
static void trace_memset(struct prof_op *op, uint32_t api, CUresult e, CUdeviceptr dst, size_t pitch,
                         uint32_t value, unsigned elem, size_t width, size_t height, CUstream h, int async, int pt)
{
    struct emu_stream *s = prof_stream(h, pt);
    if (e == CUDA_ERROR_INVALID_HANDLE || !s) {
        emu_trace_call(api, op->t0, e, s ? s->id : 0, 0);
        return;
    }
    height = height ? height : 1;
    pitch = pitch ? pitch : width * elem;
    emu_memset_finish(api, op->t0, e, DEV_PTR(dst), value, elem, width, height, pitch, s, async);
}

/* NAME PARAMS: a memset of dstDevice, pitch PITCH, value v of ELEM bytes,
 * W x H elements, on STREAM. */
#define MEMSET_FN(NAME, PARAMS, ARGS, PITCH, ELEM, W, H, STREAM, ASYNC, PT) \
    CUresult NAME PARAMS \
    { \
        PROF_REAL_OR(prof_cuda, NAME, CUDA_ERROR_NOT_SUPPORTED); \
        DEVICE_BODY(STREAM, PT, ASYNC, real ARGS, \
                    trace_memset(&op_, DRV_API(), r_, dstDevice, (PITCH), v, (ELEM), (W), (H), (STREAM), (ASYNC), \
                                 (PT))); \
    }
#define MEMSET_1D(NAME, VTYPE, ELEM, PT) \
    MEMSET_FN(NAME, (CUdeviceptr dstDevice, VTYPE v, size_t N), (dstDevice, v, N), 0, ELEM, N, 1, NULL, 0, PT)
#define MEMSET_1D_ASYNC(NAME, VTYPE, ELEM, PT) \
    MEMSET_FN(NAME, (CUdeviceptr dstDevice, VTYPE v, size_t N, CUstream hStream), (dstDevice, v, N, hStream), 0, \
              ELEM, N, 1, hStream, 1, PT)
#define MEMSET_2D(NAME, VTYPE, ELEM, PT) \
    MEMSET_FN(NAME, (CUdeviceptr dstDevice, size_t dstPitch, VTYPE v, size_t Width, size_t Height), \
              (dstDevice, dstPitch, v, Width, Height), dstPitch, ELEM, Width, Height, NULL, 0, PT)
#define MEMSET_2D_ASYNC(NAME, VTYPE, ELEM, PT) \
    MEMSET_FN(NAME, \
              (CUdeviceptr dstDevice, size_t dstPitch, VTYPE v, size_t Width, size_t Height, CUstream hStream), \
              (dstDevice, dstPitch, v, Width, Height, hStream), dstPitch, ELEM, Width, Height, hStream, 1, PT)

MEMSET_1D(cuMemsetD8_v2, unsigned char, 1, 0)
MEMSET_1D(cuMemsetD8_v2_ptds, unsigned char, 1, 1)
MEMSET_1D(cuMemsetD16_v2, unsigned short, 2, 0)
MEMSET_1D(cuMemsetD16_v2_ptds, unsigned short, 2, 1)
MEMSET_1D(cuMemsetD32_v2, unsigned int, 4, 0)
MEMSET_1D(cuMemsetD32_v2_ptds, unsigned int, 4, 1)
MEMSET_1D_ASYNC(cuMemsetD8Async, unsigned char, 1, 0)
MEMSET_1D_ASYNC(cuMemsetD8Async_ptsz, unsigned char, 1, 1)
MEMSET_1D_ASYNC(cuMemsetD16Async, unsigned short, 2, 0)
MEMSET_1D_ASYNC(cuMemsetD16Async_ptsz, unsigned short, 2, 1)
MEMSET_1D_ASYNC(cuMemsetD32Async, unsigned int, 4, 0)
MEMSET_1D_ASYNC(cuMemsetD32Async_ptsz, unsigned int, 4, 1)
MEMSET_2D(cuMemsetD2D8_v2, unsigned char, 1, 0)
MEMSET_2D(cuMemsetD2D8_v2_ptds, unsigned char, 1, 1)
MEMSET_2D(cuMemsetD2D16_v2, unsigned short, 2, 0)
MEMSET_2D(cuMemsetD2D16_v2_ptds, unsigned short, 2, 1)
MEMSET_2D(cuMemsetD2D32_v2, unsigned int, 4, 0)
MEMSET_2D(cuMemsetD2D32_v2_ptds, unsigned int, 4, 1)
MEMSET_2D_ASYNC(cuMemsetD2D8Async, unsigned char, 1, 0)
MEMSET_2D_ASYNC(cuMemsetD2D8Async_ptsz, unsigned char, 1, 1)
MEMSET_2D_ASYNC(cuMemsetD2D16Async, unsigned short, 2, 0)
MEMSET_2D_ASYNC(cuMemsetD2D16Async_ptsz, unsigned short, 2, 1)
MEMSET_2D_ASYNC(cuMemsetD2D32Async, unsigned int, 4, 0)
MEMSET_2D_ASYNC(cuMemsetD2D32Async_ptsz, unsigned int, 4, 1)

/* Driver memory: allocation (device, host, managed, pitched, stream-ordered),
 * copies, memsets, address ranges and pointer attributes. Allocations,
 * copies and memsets are traced by the core exactly as the runtime's are
 * (small copies and memsets move real bytes). */
#include "drv.h"

#include <string.h>

#define DEVICE_KINDS ((1 << MAYA_ALLOC_DEVICE) | (1 << MAYA_ALLOC_MANAGED) | (1 << MAYA_ALLOC_ASYNC))
#define PITCH_ALIGN 512u

/* ---- allocation ---- */

static CUresult alloc_device(uint32_t api, uint64_t t0, CUdeviceptr *dptr, size_t bytes, int kind,
                             unsigned flags, struct emu_stream *stream)
{
    int dev = stream ? stream->device : drv_ctx_device();
    CUresult e = CUDA_SUCCESS;
    uint64_t p = 0;
    if (dev < 0)
        e = CUDA_ERROR_INVALID_CONTEXT;
    else if (!dptr || bytes == 0)
        e = CUDA_ERROR_INVALID_VALUE;
    else if ((e = drv_error(emu_mem_alloc(dev, bytes, kind, flags, &p))) == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)p;
    if (e == CUDA_ERROR_INVALID_CONTEXT || e == CUDA_ERROR_INVALID_VALUE)
        emu_trace_call(api, t0, e, stream ? stream->id : 0, 0);
    else
        emu_trace_alloc(MAYA_REC_ALLOC, api, t0, e, p, bytes, kind, dev, stream ? stream->id : 0, 0);
    return e;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    DRV_ENTER();
    return alloc_device(DRV_API(), drv_t0, dptr, bytesize, MAYA_ALLOC_DEVICE, 0, NULL);
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    DRV_ENTER();
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    return alloc_device(DRV_API(), drv_t0, dptr, bytesize, MAYA_ALLOC_MANAGED, flags, NULL);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes)
{
    DRV_ENTER();
    if (!pPitch || !WidthInBytes || !Height ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    size_t pitch = (WidthInBytes + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
    if (pitch < WidthInBytes || Height > SIZE_MAX / pitch)
        DRV_RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    CUresult e = alloc_device(DRV_API(), drv_t0, dptr, pitch * Height, MAYA_ALLOC_DEVICE, 0, NULL);
    if (e == CUDA_SUCCESS)
        *pPitch = pitch;
    return e;
}

static CUresult free_memory(uint32_t api, uint64_t t0, uint64_t ptr, int kinds, uint16_t flags,
                            struct emu_stream *stream)
{
    struct emu_alloc a;
    if (ptr == 0) {
        emu_trace_call(api, t0, CUDA_SUCCESS, 0, flags);
        return CUDA_SUCCESS;
    }
    if (emu_mem_free(ptr, kinds, &a) != EMU_OK) {
        emu_trace_call(api, t0, CUDA_ERROR_INVALID_VALUE, stream ? stream->id : 0, flags);
        return CUDA_ERROR_INVALID_VALUE;
    }
    emu_trace_alloc(MAYA_REC_FREE, api, t0, CUDA_SUCCESS, a.base, a.bytes, a.kind, a.device,
                    stream ? stream->id : 0, flags);
    return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    DRV_ENTER();
    if (drv_ctx_device() < 0)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    /* Like cudaFree, cuMemFree waits for the device. */
    return free_memory(DRV_API(), drv_t0, dptr, DEVICE_KINDS, MAYA_F_DEVICE_SYNC, NULL);
}

CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
    DRV_ENTER();
    if (!free || !total)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_NEED_CTX(dev);
    uint64_t f, t;
    emu_mem_info(dev, &f, &t);
    *free = f;
    *total = t;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuMemGetInfo(unsigned int *free, unsigned int *total)
{
    size_t f = 0, t = 0;
    CUresult e = cuMemGetInfo_v2(free ? &f : NULL, total ? &t : NULL);
    if (e == CUDA_SUCCESS) {
        *free = f > UINT32_MAX ? UINT32_MAX : (unsigned)f;
        *total = t > UINT32_MAX ? UINT32_MAX : (unsigned)t;
    }
    return e;
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    DRV_ENTER();
    unsigned known = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
    if (!pp || (Flags & ~known))
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (drv_ctx_device() < 0)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    void *p = NULL;
    CUresult e = drv_error(emu_mem_host_alloc(bytesize, Flags, &p));
    if (e == CUDA_SUCCESS)
        *pp = p;
    emu_trace_alloc(MAYA_REC_ALLOC, DRV_API(), drv_t0, e, (uint64_t)(uintptr_t)p, bytesize, MAYA_ALLOC_HOST,
                    -1, 0, 0);
    return e;
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

CUresult cuMemFreeHost(void *p)
{
    DRV_ENTER();
    if (!p)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    return free_memory(DRV_API(), drv_t0, (uint64_t)(uintptr_t)p, 1 << MAYA_ALLOC_HOST, MAYA_F_DEVICE_SYNC, NULL);
}

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    DRV_ENTER();
    unsigned known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_IOMEMORY |
                     CU_MEMHOSTREGISTER_READ_ONLY;
    if (!p || !bytesize || (Flags & ~known))
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (drv_ctx_device() < 0)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    enum emu_err r = emu_mem_host_register(p, bytesize, Flags);
    CUresult e = r == EMU_ERR_ALREADY_MAPPED ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED : drv_error(r);
    emu_trace_alloc(MAYA_REC_ALLOC, DRV_API(), drv_t0, e, (uint64_t)(uintptr_t)p, bytesize,
                    MAYA_ALLOC_HOST_REGISTER, -1, 0, 0);
    return e;
}

CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    return cuMemHostRegister_v2(p, bytesize, Flags);
}

CUresult cuMemHostUnregister(void *p)
{
    DRV_ENTER();
    struct emu_alloc a;
    if (!p)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (emu_mem_free((uint64_t)(uintptr_t)p, 1 << MAYA_ALLOC_HOST_REGISTER, &a) != EMU_OK)
        DRV_RETURN(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    emu_trace_alloc(MAYA_REC_FREE, DRV_API(), drv_t0, CUDA_SUCCESS, a.base, a.bytes, a.kind, -1, 0, 0);
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    DRV_ENTER();
    struct emu_alloc a;
    if (!pdptr || Flags != 0)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!emu_mem_lookup((uint64_t)(uintptr_t)p, &a) || a.device >= 0)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *pdptr = (CUdeviceptr)(uintptr_t)p; /* unified addressing: the same address */
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    DRV_ENTER();
    struct emu_alloc a;
    if (!pFlags || !emu_mem_lookup((uint64_t)(uintptr_t)p, &a) || a.device >= 0)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *pFlags = a.flags;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    DRV_ENTER();
    struct emu_alloc a;
    if (!emu_mem_lookup(dptr, &a) || a.device < 0)
        DRV_RETURN(CUDA_ERROR_NOT_FOUND);
    if (pbase)
        *pbase = a.base;
    if (psize)
        *psize = a.bytes;
    DRV_RETURN(CUDA_SUCCESS);
}

/* ---- copies ---- */

/* Is [p, p+bytes) inside one live device allocation (or mapping)? */
static int device_range(uint64_t p, uint64_t bytes)
{
    struct emu_alloc a;
    return emu_mem_lookup(p, &a) && a.device >= 0 && a.kind != MAYA_ALLOC_VMM_PHYSICAL &&
           bytes <= a.bytes && p - a.base <= a.bytes - bytes;
}

enum end_kind { END_ANY, END_HOST, END_DEVICE };

/* One linear copy. dst_kind/src_kind: what the entry point's name promises
 * (HtoD: host source, device destination); a device end must lie inside an
 * allocation, as the driver checks. */
static CUresult copy_linear(uint32_t api, uint64_t t0, void *dst, const void *src, size_t bytes,
                            enum end_kind dst_kind, enum end_kind src_kind, CUstream h, int async, int pt)
{
    struct emu_stream *s = drv_stream_checked(api, t0, h, pt);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    struct emu_copy c = { .dst = dst, .src = src, .width = bytes, .height = 1, .depth = 1, .dpitch = bytes,
                          .spitch = bytes, .stream = s, .async = async };
    CUresult e = CUDA_SUCCESS;
    if (drv_ctx_device() < 0) {
        emu_trace_call(api, t0, CUDA_ERROR_INVALID_CONTEXT, s->id, 0);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    emu_copy_classify(&c);
    if (bytes && (!dst || !src))
        e = CUDA_ERROR_INVALID_VALUE;
    else if (bytes && dst_kind == END_DEVICE && !device_range((uint64_t)(uintptr_t)dst, bytes))
        e = CUDA_ERROR_INVALID_VALUE;
    else if (bytes && src_kind == END_DEVICE && !device_range((uint64_t)(uintptr_t)src, bytes))
        e = CUDA_ERROR_INVALID_VALUE;
    if (!async)
        emu_hostfn_drain(s);
    emu_copy_finish(api, t0, e, &c);
    return e;
}

#define HOST_PTR(p) ((void *)(p))
#define DEV_PTR(d) ((void *)(uintptr_t)(d))

/* Every linear copy entry point: name, arguments, and how they map. */
#define COPY_FN(name, params, dst, src, bytes, dk, sk, stream, async, pt) \
    CUresult name params \
    { \
        DRV_ENTER(); \
        return copy_linear(DRV_API(), drv_t0, dst, src, bytes, dk, sk, stream, async, pt); \
    }

COPY_FN(cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),
        DEV_PTR(dstDevice), srcHost, ByteCount, END_DEVICE, END_HOST, NULL, 0, 0)
COPY_FN(cuMemcpyHtoD_v2_ptds, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),
        DEV_PTR(dstDevice), srcHost, ByteCount, END_DEVICE, END_HOST, NULL, 0, 1)
COPY_FN(cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),
        dstHost, DEV_PTR(srcDevice), ByteCount, END_HOST, END_DEVICE, NULL, 0, 0)
COPY_FN(cuMemcpyDtoH_v2_ptds, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),
        dstHost, DEV_PTR(srcDevice), ByteCount, END_HOST, END_DEVICE, NULL, 0, 1)
COPY_FN(cuMemcpyDtoD_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
        DEV_PTR(dstDevice), DEV_PTR(srcDevice), ByteCount, END_DEVICE, END_DEVICE, NULL, 0, 0)
COPY_FN(cuMemcpyDtoD_v2_ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
        DEV_PTR(dstDevice), DEV_PTR(srcDevice), ByteCount, END_DEVICE, END_DEVICE, NULL, 0, 1)
COPY_FN(cuMemcpyHtoDAsync_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream),
        DEV_PTR(dstDevice), srcHost, ByteCount, END_DEVICE, END_HOST, hStream, 1, 0)
COPY_FN(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream),
        DEV_PTR(dstDevice), srcHost, ByteCount, END_DEVICE, END_HOST, hStream, 1, 1)
COPY_FN(cuMemcpyDtoHAsync_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
        dstHost, DEV_PTR(srcDevice), ByteCount, END_HOST, END_DEVICE, hStream, 1, 0)
COPY_FN(cuMemcpyDtoHAsync_v2_ptsz, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
        dstHost, DEV_PTR(srcDevice), ByteCount, END_HOST, END_DEVICE, hStream, 1, 1)
COPY_FN(cuMemcpyDtoDAsync_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
        DEV_PTR(dstDevice), DEV_PTR(srcDevice), ByteCount, END_DEVICE, END_DEVICE, hStream, 1, 0)
COPY_FN(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
        DEV_PTR(dstDevice), DEV_PTR(srcDevice), ByteCount, END_DEVICE, END_DEVICE, hStream, 1, 1)
/* Unified addressing: the pointers say where they live. */
COPY_FN(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount),
        DEV_PTR(dst), DEV_PTR(src), ByteCount, END_ANY, END_ANY, NULL, 0, 0)
COPY_FN(cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount),
        DEV_PTR(dst), DEV_PTR(src), ByteCount, END_ANY, END_ANY, NULL, 0, 1)
COPY_FN(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
        DEV_PTR(dst), DEV_PTR(src), ByteCount, END_ANY, END_ANY, hStream, 1, 0)
COPY_FN(cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
        DEV_PTR(dst), DEV_PTR(src), ByteCount, END_ANY, END_ANY, hStream, 1, 1)

static CUresult copy_peer(uint32_t api, uint64_t t0, CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                          CUcontext sctx, size_t bytes, CUstream h, int async, int pt)
{
    if (!emu_ctx_valid((struct emu_ctx *)dctx) || !emu_ctx_valid((struct emu_ctx *)sctx)) {
        emu_trace_call(api, t0, CUDA_ERROR_INVALID_CONTEXT, 0, 0);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    return copy_linear(api, t0, DEV_PTR(dst), DEV_PTR(src), bytes, END_DEVICE, END_DEVICE, h, async, pt);
}

CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                      size_t ByteCount)
{
    DRV_ENTER();
    return copy_peer(DRV_API(), drv_t0, dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, 0, 0);
}

CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                           CUcontext srcContext, size_t ByteCount)
{
    DRV_ENTER();
    return copy_peer(DRV_API(), drv_t0, dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, 0, 1);
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                           CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
    DRV_ENTER();
    return copy_peer(DRV_API(), drv_t0, dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 1, 0);
}

CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
    DRV_ENTER();
    return copy_peer(DRV_API(), drv_t0, dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 1, 1);
}

/* The copy between two ends, checked as the driver checks it: both ends
 * addressable, device ends inside an allocation. c's stream and async are
 * left as they are. */
static CUresult shape_copy(struct emu_copy *c, const struct drv_copy_end *d, const struct drv_copy_end *s,
                           size_t width, size_t height, size_t depth)
{
    drv_copy_layout(c, d, s, width, height, depth);
    if (!c->dst || !c->src || !width)
        return CUDA_ERROR_INVALID_VALUE;
    if ((d->type == CU_MEMORYTYPE_DEVICE &&
         !device_range((uint64_t)(uintptr_t)c->dst, (c->depth - 1) * c->dslice + (c->height - 1) * c->dpitch + width)) ||
        (s->type == CU_MEMORYTYPE_DEVICE &&
         !device_range((uint64_t)(uintptr_t)c->src, (c->depth - 1) * c->sslice + (c->height - 1) * c->spitch + width)))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult copy_shaped(uint32_t api, uint64_t t0, const struct drv_copy_end *d, const struct drv_copy_end *s,
                            size_t width, size_t height, size_t depth, CUstream h, int async, int pt)
{
    struct emu_stream *st = drv_stream_checked(api, t0, h, pt);
    if (!st)
        return CUDA_ERROR_INVALID_HANDLE;
    struct emu_copy c = { .stream = st, .async = async };
    CUresult e = shape_copy(&c, d, s, width, height, depth);
    emu_copy_classify(&c);
    if (!async)
        emu_hostfn_drain(st);
    emu_copy_finish(api, t0, e, &c);
    return e;
}

static CUresult copy_2d(uint32_t api, uint64_t t0, const CUDA_MEMCPY2D *p, CUstream h, int async, int pt)
{
    if (!p) {
        emu_trace_call(api, t0, CUDA_ERROR_INVALID_VALUE, 0, 0);
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct drv_copy_end d = DRV_END2D(p, dst), s = DRV_END2D(p, src);
    return copy_shaped(api, t0, &d, &s, p->WidthInBytes, p->Height, 1, h, async, pt);
}

CUresult drv_copy_3d_params(const CUDA_MEMCPY3D *p, struct emu_copy *c)
{
    memset(c, 0, sizeof *c);
    if (!p || p->srcLOD || p->dstLOD || p->reserved0 || p->reserved1)
        return CUDA_ERROR_INVALID_VALUE;
    struct drv_copy_end d = DRV_END3D(p, dst), s = DRV_END3D(p, src);
    return shape_copy(c, &d, &s, p->WidthInBytes, p->Height, p->Depth);
}

static CUresult copy_3d(uint32_t api, uint64_t t0, const CUDA_MEMCPY3D *p, CUstream h, int async, int pt)
{
    if (!p || p->srcLOD || p->dstLOD || p->reserved0 || p->reserved1) {
        emu_trace_call(api, t0, CUDA_ERROR_INVALID_VALUE, 0, 0);
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct drv_copy_end d = DRV_END3D(p, dst), s = DRV_END3D(p, src);
    return copy_shaped(api, t0, &d, &s, p->WidthInBytes, p->Height, p->Depth, h, async, pt);
}

static CUresult copy_3d_peer(uint32_t api, uint64_t t0, const CUDA_MEMCPY3D_PEER *p, CUstream h, int async,
                             int pt)
{
    if (!p || p->srcLOD || p->dstLOD) {
        emu_trace_call(api, t0, CUDA_ERROR_INVALID_VALUE, 0, 0);
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct drv_copy_end d = DRV_END3D(p, dst), s = DRV_END3D(p, src);
    return copy_shaped(api, t0, &d, &s, p->WidthInBytes, p->Height, p->Depth, h, async, pt);
}

#define SHAPED_FN(name, type, fn, stream_param, stream, async, pt) \
    CUresult name(const type *pCopy stream_param) \
    { \
        DRV_ENTER(); \
        return fn(DRV_API(), drv_t0, pCopy, stream, async, pt); \
    }
#define NO_STREAM
#define WITH_STREAM , CUstream hStream

SHAPED_FN(cuMemcpy2D_v2, CUDA_MEMCPY2D, copy_2d, NO_STREAM, NULL, 0, 0)
SHAPED_FN(cuMemcpy2D_v2_ptds, CUDA_MEMCPY2D, copy_2d, NO_STREAM, NULL, 0, 1)
SHAPED_FN(cuMemcpy2DUnaligned_v2, CUDA_MEMCPY2D, copy_2d, NO_STREAM, NULL, 0, 0)
SHAPED_FN(cuMemcpy2DUnaligned_v2_ptds, CUDA_MEMCPY2D, copy_2d, NO_STREAM, NULL, 0, 1)
SHAPED_FN(cuMemcpy2DAsync_v2, CUDA_MEMCPY2D, copy_2d, WITH_STREAM, hStream, 1, 0)
SHAPED_FN(cuMemcpy2DAsync_v2_ptsz, CUDA_MEMCPY2D, copy_2d, WITH_STREAM, hStream, 1, 1)
SHAPED_FN(cuMemcpy3D_v2, CUDA_MEMCPY3D, copy_3d, NO_STREAM, NULL, 0, 0)
SHAPED_FN(cuMemcpy3D_v2_ptds, CUDA_MEMCPY3D, copy_3d, NO_STREAM, NULL, 0, 1)
SHAPED_FN(cuMemcpy3DAsync_v2, CUDA_MEMCPY3D, copy_3d, WITH_STREAM, hStream, 1, 0)
SHAPED_FN(cuMemcpy3DAsync_v2_ptsz, CUDA_MEMCPY3D, copy_3d, WITH_STREAM, hStream, 1, 1)
SHAPED_FN(cuMemcpy3DPeer, CUDA_MEMCPY3D_PEER, copy_3d_peer, NO_STREAM, NULL, 0, 0)
SHAPED_FN(cuMemcpy3DPeer_ptds, CUDA_MEMCPY3D_PEER, copy_3d_peer, NO_STREAM, NULL, 0, 1)
SHAPED_FN(cuMemcpy3DPeerAsync, CUDA_MEMCPY3D_PEER, copy_3d_peer, WITH_STREAM, hStream, 1, 0)
SHAPED_FN(cuMemcpy3DPeerAsync_ptsz, CUDA_MEMCPY3D_PEER, copy_3d_peer, WITH_STREAM, hStream, 1, 1)

/* ---- memsets ---- */

static CUresult memset_any(uint32_t api, uint64_t t0, CUdeviceptr dst, size_t pitch, uint32_t value,
                           unsigned elem, size_t width, size_t height, CUstream h, int async, int pt)
{
    struct emu_stream *s = drv_stream_checked(api, t0, h, pt);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    height = height ? height : 1;
    pitch = pitch ? pitch : width * elem;
    CUresult e = CUDA_SUCCESS;
    uint64_t extent = (height - 1) * pitch + width * elem;
    if (drv_ctx_device() < 0)
        e = CUDA_ERROR_INVALID_CONTEXT;
    else if (width && ((dst % elem) || (pitch % elem) || pitch < width * elem || !device_range(dst, extent)))
        e = CUDA_ERROR_INVALID_VALUE;
    if (!async)
        emu_hostfn_drain(s);
    emu_memset_finish(api, t0, e, DEV_PTR(dst), value, elem, width, height, pitch, s, async);
    return e;
}

#define MEMSET_FN(name, vtype, elem, pt) \
    CUresult name(CUdeviceptr dstDevice, vtype v, size_t N) \
    { \
        DRV_ENTER(); \
        return memset_any(DRV_API(), drv_t0, dstDevice, 0, v, elem, N, 1, NULL, 0, pt); \
    }
#define MEMSET_ASYNC_FN(name, vtype, elem, pt) \
    CUresult name(CUdeviceptr dstDevice, vtype v, size_t N, CUstream hStream) \
    { \
        DRV_ENTER(); \
        return memset_any(DRV_API(), drv_t0, dstDevice, 0, v, elem, N, 1, hStream, 1, pt); \
    }
#define MEMSET2D_FN(name, vtype, elem, pt) \
    CUresult name(CUdeviceptr dstDevice, size_t dstPitch, vtype v, size_t Width, size_t Height) \
    { \
        DRV_ENTER(); \
        return memset_any(DRV_API(), drv_t0, dstDevice, dstPitch, v, elem, Width, Height, NULL, 0, pt); \
    }
#define MEMSET2D_ASYNC_FN(name, vtype, elem, pt) \
    CUresult name(CUdeviceptr dstDevice, size_t dstPitch, vtype v, size_t Width, size_t Height, CUstream hStream) \
    { \
        DRV_ENTER(); \
        return memset_any(DRV_API(), drv_t0, dstDevice, dstPitch, v, elem, Width, Height, hStream, 1, pt); \
    }

MEMSET_FN(cuMemsetD8_v2, unsigned char, 1, 0)
MEMSET_FN(cuMemsetD8_v2_ptds, unsigned char, 1, 1)
MEMSET_FN(cuMemsetD16_v2, unsigned short, 2, 0)
MEMSET_FN(cuMemsetD16_v2_ptds, unsigned short, 2, 1)
MEMSET_FN(cuMemsetD32_v2, unsigned int, 4, 0)
MEMSET_FN(cuMemsetD32_v2_ptds, unsigned int, 4, 1)
MEMSET_ASYNC_FN(cuMemsetD8Async, unsigned char, 1, 0)
MEMSET_ASYNC_FN(cuMemsetD8Async_ptsz, unsigned char, 1, 1)
MEMSET_ASYNC_FN(cuMemsetD16Async, unsigned short, 2, 0)
MEMSET_ASYNC_FN(cuMemsetD16Async_ptsz, unsigned short, 2, 1)
MEMSET_ASYNC_FN(cuMemsetD32Async, unsigned int, 4, 0)
MEMSET_ASYNC_FN(cuMemsetD32Async_ptsz, unsigned int, 4, 1)
MEMSET2D_FN(cuMemsetD2D8_v2, unsigned char, 1, 0)
MEMSET2D_FN(cuMemsetD2D8_v2_ptds, unsigned char, 1, 1)
MEMSET2D_FN(cuMemsetD2D16_v2, unsigned short, 2, 0)
MEMSET2D_FN(cuMemsetD2D16_v2_ptds, unsigned short, 2, 1)
MEMSET2D_FN(cuMemsetD2D32_v2, unsigned int, 4, 0)
MEMSET2D_FN(cuMemsetD2D32_v2_ptds, unsigned int, 4, 1)
MEMSET2D_ASYNC_FN(cuMemsetD2D8Async, unsigned char, 1, 0)
MEMSET2D_ASYNC_FN(cuMemsetD2D8Async_ptsz, unsigned char, 1, 1)
MEMSET2D_ASYNC_FN(cuMemsetD2D16Async, unsigned short, 2, 0)
MEMSET2D_ASYNC_FN(cuMemsetD2D16Async_ptsz, unsigned short, 2, 1)
MEMSET2D_ASYNC_FN(cuMemsetD2D32Async, unsigned int, 4, 0)
MEMSET2D_ASYNC_FN(cuMemsetD2D32Async_ptsz, unsigned int, 4, 1)

/* ---- pointer attributes ---- */

static void put_bool(void *data, int v)
{
    /* Boolean attributes are C bools: one byte. */
    *(unsigned char *)data = (unsigned char)(v != 0);
}

/* One attribute of a known pointer (a describes its allocation). */
static CUresult pointer_attribute(void *data, CUpointer_attribute attr, CUdeviceptr ptr, const struct emu_alloc *a)
{
    int dev = a->device >= 0 ? a->device : drv_ctx_device();
    int host_side = a->device < 0 || a->kind == MAYA_ALLOC_MANAGED;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = (CUcontext)emu_primary_ctx(dev < 0 ? 0 : dev);
        break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = a->device < 0 ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = ptr; /* unified addressing: the same address */
        break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!host_side)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)(uintptr_t)ptr;
        break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: put_bool(data, 1); break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
        *(unsigned long long *)data = a->base; /* unique while the allocation lives */
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: put_bool(data, a->kind == MAYA_ALLOC_MANAGED); break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = dev; break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: put_bool(data, a->kind == MAYA_ALLOC_DEVICE); break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        *(void **)data = (void *)(uintptr_t)a->base;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
        *(size_t *)data = a->bytes;
        break;
    case CU_POINTER_ATTRIBUTE_MAPPED: put_bool(data, 1); break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data = a->kind == MAYA_ALLOC_VMM_MAP ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
                                                                      : CU_MEM_HANDLE_TYPE_NONE;
        break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: put_bool(data, a->device >= 0); break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        *(unsigned int *)data = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
        break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(void **)data = NULL; break;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: put_bool(data, 0); break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* Triton asks for DEVICE_POINTER of every tensor argument: it must succeed
 * for device (and registered/pinned host) memory and fail with
 * CUDA_ERROR_INVALID_VALUE for memory CUDA does not know. */
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    DRV_ENTER();
    struct emu_alloc a;
    if (!data || !ptr)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (attribute == CU_POINTER_ATTRIBUTE_P2P_TOKENS)
        DRV_RETURN(CUDA_ERROR_NOT_SUPPORTED);
    if (!emu_mem_lookup(ptr, &a) || a.kind == MAYA_ALLOC_VMM_PHYSICAL)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_RETURN(pointer_attribute(data, attribute, ptr, &a));
}

/* Unlike the single query, unknown pointers are not an error: every
 * attribute gets its "not CUDA memory" value. */
CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data,
                                CUdeviceptr ptr)
{
    DRV_ENTER();
    struct emu_alloc a;
    if (!numAttributes || !attributes || !data)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    int known = emu_mem_lookup(ptr, &a) && a.kind != MAYA_ALLOC_VMM_PHYSICAL;
    for (unsigned i = 0; i < numAttributes; i++) {
        if (!data[i])
            continue;
        CUresult e = known ? pointer_attribute(data[i], attributes[i], ptr, &a) : CUDA_ERROR_INVALID_VALUE;
        if (e == CUDA_SUCCESS)
            continue;
        switch (attributes[i]) {
        case CU_POINTER_ATTRIBUTE_CONTEXT:
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
            *(void **)data[i] = NULL;
            break;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
            *(unsigned int *)data[i] = 0;
            break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
            *(int *)data[i] = -2; /* what the driver reports for unknown memory */
            break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
        case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
            *(unsigned long long *)data[i] = 0;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
            *(size_t *)data[i] = 0;
            break;
        case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
            DRV_RETURN(CUDA_ERROR_NOT_SUPPORTED);
        default:
            if ((unsigned)attributes[i] > CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE)
                DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
            put_bool(data[i], 0);
            break;
        }
    }
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    DRV_ENTER();
    struct emu_alloc a;
    if (!value || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!emu_mem_lookup(ptr, &a) || a.device < 0)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    /* Every emulated memory operation is already synchronous in effect. */
    DRV_RETURN(CUDA_SUCCESS);
}

/* Runtime memory: allocation (device, host, managed), copies, memsets and
 * pointer attributes. Copies and memsets up to the copy threshold move bytes
 * for real; every one is traced with its direction and size. */
#include "rt.h"

#include <string.h>

#define DEVICE_KINDS ((1 << MAYA_ALLOC_DEVICE) | (1 << MAYA_ALLOC_MANAGED) | (1 << MAYA_ALLOC_ASYNC))
#define HOST_KINDS (1 << MAYA_ALLOC_HOST)

static cudaError_t alloc_device(uint32_t api, uint64_t t0, void **devPtr, size_t size, int kind,
                                unsigned flags, struct emu_stream *stream)
{
    int dev = stream ? stream->device : rt_device();
    if (!devPtr)
        return rt_note(cudaErrorInvalidValue);
    emu_primary_ctx(dev);
    uint64_t p = 0;
    cudaError_t e = cudaSuccess;
    if (size == 0)
        *devPtr = NULL;
    else if ((e = rt_error(emu_mem_alloc(dev, size, kind, flags, &p))) == cudaSuccess)
        *devPtr = (void *)(uintptr_t)p;
    emu_trace_alloc(MAYA_REC_ALLOC, api, t0, e, p, size, kind, dev, stream ? stream->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    RT_ENTER();
    return alloc_device(RT_API(), rt_t0, devPtr, size, MAYA_ALLOC_DEVICE, 0, NULL);
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    RT_ENTER();
    if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)
        RT_RETURN(cudaErrorInvalidValue);
    return alloc_device(RT_API(), rt_t0, devPtr, size, MAYA_ALLOC_MANAGED, flags, NULL);
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(hStream, 0);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    return alloc_device(RT_API(), rt_t0, devPtr, size, MAYA_ALLOC_ASYNC, 0, s);
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    RT_ENTER();
    if (!pitch)
        RT_RETURN(cudaErrorInvalidValue);
    size_t align = emu_device(rt_device())->prop.texturePitchAlignment * 16; /* 512 bytes */
    size_t p = (width + align - 1) / align * align;
    *pitch = p;
    return alloc_device(RT_API(), rt_t0, devPtr, p * height, MAYA_ALLOC_DEVICE, 0, NULL);
}

static cudaError_t free_memory(uint32_t api, uint64_t t0, void *ptr, int kinds, uint16_t flags,
                               struct emu_stream *stream)
{
    if (!ptr) {
        emu_trace_call(api, t0, cudaSuccess, 0, flags);
        return cudaSuccess;
    }
    struct emu_alloc a;
    cudaError_t e = rt_error(emu_mem_free((uint64_t)(uintptr_t)ptr, kinds, &a));
    if (e != cudaSuccess) {
        e = cudaErrorInvalidValue;
        emu_trace_call(api, t0, e, 0, flags);
        return rt_note(e);
    }
    emu_trace_alloc(MAYA_REC_FREE, api, t0, cudaSuccess, a.base, a.bytes, a.kind, a.device,
                stream ? stream->id : 0, flags);
    return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr)
{
    RT_ENTER();
    emu_primary_ctx(rt_device());
    /* cudaFree waits for the device, as on a GPU. */
    return free_memory(RT_API(), rt_t0, devPtr, DEVICE_KINDS, MAYA_F_DEVICE_SYNC, NULL);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(hStream, 0);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    return free_memory(RT_API(), rt_t0, devPtr, DEVICE_KINDS, 0, s);
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    RT_ENTER();
    if (!pHost)
        RT_RETURN(cudaErrorInvalidValue);
    void *p = NULL;
    cudaError_t e = rt_error(emu_mem_host_alloc(size, flags, &p));
    if (e == cudaSuccess)
        *pHost = p;
    emu_trace_alloc(MAYA_REC_ALLOC, RT_API(), rt_t0, e, (uint64_t)(uintptr_t)p, size, MAYA_ALLOC_HOST, -1, 0, 0);
    return rt_note(e);
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

cudaError_t cudaFreeHost(void *ptr)
{
    RT_ENTER();
    return free_memory(RT_API(), rt_t0, ptr, HOST_KINDS, MAYA_F_DEVICE_SYNC, NULL);
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    RT_ENTER();
    cudaError_t e = rt_error(emu_mem_host_register(ptr, size, flags));
    emu_trace_alloc(MAYA_REC_ALLOC, RT_API(), rt_t0, e, (uint64_t)(uintptr_t)ptr, size,
                MAYA_ALLOC_HOST_REGISTER, -1, 0, 0);
    return rt_note(e);
}

cudaError_t cudaHostUnregister(void *ptr)
{
    RT_ENTER();
    struct emu_alloc a;
    if (emu_mem_free((uint64_t)(uintptr_t)ptr, 1 << MAYA_ALLOC_HOST_REGISTER, &a) != EMU_OK)
        RT_RETURN(cudaErrorHostMemoryNotRegistered);
    emu_trace_alloc(MAYA_REC_FREE, RT_API(), rt_t0, cudaSuccess, a.base, a.bytes, a.kind, -1, 0, 0);
    return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    RT_ENTER();
    struct emu_alloc a;
    if (!pDevice || flags != 0)
        RT_RETURN(cudaErrorInvalidValue);
    if (!emu_mem_lookup((uint64_t)(uintptr_t)pHost, &a) || a.device >= 0)
        RT_RETURN(cudaErrorInvalidValue);
    *pDevice = pHost; /* unified addressing: the same address */
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    RT_ENTER();
    struct emu_alloc a;
    if (!pFlags || !emu_mem_lookup((uint64_t)(uintptr_t)pHost, &a) || a.device >= 0)
        RT_RETURN(cudaErrorInvalidValue);
    *pFlags = a.flags;
    RT_RETURN(cudaSuccess);
}

/* ---- copies ---- */

/* Does the copy kind the caller named agree with where the pointers are? */
static int kind_matches(enum cudaMemcpyKind kind, uint32_t actual)
{
    switch (kind) {
    case cudaMemcpyDefault: return 1;
    case cudaMemcpyHostToHost: return actual == MAYA_COPY_H2H;
    case cudaMemcpyHostToDevice: return actual == MAYA_COPY_H2D;
    case cudaMemcpyDeviceToHost: return actual == MAYA_COPY_D2H;
    case cudaMemcpyDeviceToDevice: return actual == MAYA_COPY_D2D || actual == MAYA_COPY_PEER;
    default: return 0;
    }
}

/* One copy: validate, move the bytes if small, trace. */
cudaError_t rt_copy(uint32_t api, uint64_t t0, void *dst, const void *src, size_t width,
                    size_t height, size_t dpitch, size_t spitch, enum cudaMemcpyKind kind,
                    struct emu_stream *stream, int async)
{
    struct emu_copy c = { .dst = dst, .src = src, .width = width, .height = height, .depth = 1,
                          .dpitch = dpitch, .spitch = spitch, .stream = stream, .async = async };
    size_t bytes = width * height;
    emu_copy_classify(&c);
    cudaError_t e = cudaSuccess;
    if ((int)kind < 0 || kind > cudaMemcpyDefault)
        e = cudaErrorInvalidMemcpyDirection;
    else if (bytes && (!dst || !src))
        e = cudaErrorInvalidValue;
    else if (bytes && !kind_matches(kind, c.kind))
        e = cudaErrorInvalidValue;
    emu_copy_finish(api, t0, e, &c);
    return rt_note(e);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(NULL, 0);
    emu_hostfn_drain(s);
    return rt_copy(RT_API(), rt_t0, dst, src, count, 1, count, count, kind, s, 0);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(stream, 0);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    return rt_copy(RT_API(), rt_t0, dst, src, count, 1, count, count, kind, s, 1);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    if (width > dpitch || width > spitch)
        RT_RETURN(cudaErrorInvalidPitchValue);
    return rt_copy(RT_API(), rt_t0, dst, src, width, height, dpitch, spitch, kind, rt_stream(NULL, 0), 0);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(stream, 0);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    if (width > dpitch || width > spitch)
        RT_RETURN(cudaErrorInvalidPitchValue);
    return rt_copy(RT_API(), rt_t0, dst, src, width, height, dpitch, spitch, kind, s, 1);
}

cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    RT_ENTER();
    if (!emu_device(dstDevice) || !emu_device(srcDevice))
        RT_RETURN(cudaErrorInvalidDevice);
    return rt_copy(RT_API(), rt_t0, dst, src, count, 1, count, count, cudaMemcpyDefault,
                   rt_stream(NULL, 0), 0);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                cudaStream_t stream)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(stream, 0);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    if (!emu_device(dstDevice) || !emu_device(srcDevice))
        RT_RETURN(cudaErrorInvalidDevice);
    return rt_copy(RT_API(), rt_t0, dst, src, count, 1, count, count, cudaMemcpyDefault, s, 1);
}

/* ---- memsets ---- */

cudaError_t rt_memset(uint32_t api, uint64_t t0, void *dst, int value, size_t width, size_t height,
                      size_t pitch, struct emu_stream *stream, int async)
{
    size_t bytes = width * height;
    int dev = emu_ptr_device((uint64_t)(uintptr_t)dst, NULL);
    cudaError_t e = cudaSuccess;
    if (bytes && (!dst || dev < 0))
        e = cudaErrorInvalidValue;
    emu_memset_finish(api, t0, e, dst, (uint32_t)value, 1, width, height, pitch, stream, async);
    return rt_note(e);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    RT_ENTER();
    return rt_memset(RT_API(), rt_t0, devPtr, value, count, 1, count, rt_stream(NULL, 0), 0);
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(stream, 0);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    return rt_memset(RT_API(), rt_t0, devPtr, value, count, 1, count, s, 1);
}

cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    RT_ENTER();
    if (width > pitch)
        RT_RETURN(cudaErrorInvalidPitchValue);
    return rt_memset(RT_API(), rt_t0, devPtr, value, width, height, pitch, rt_stream(NULL, 0), 0);
}

cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream)
{
    RT_ENTER();
    struct emu_stream *s = rt_stream(stream, 0);
    if (!s)
        RT_RETURN(cudaErrorInvalidResourceHandle);
    if (width > pitch)
        RT_RETURN(cudaErrorInvalidPitchValue);
    return rt_memset(RT_API(), rt_t0, devPtr, value, width, height, pitch, s, 1);
}

/* ---- pointer attributes ---- */

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr)
{
    RT_ENTER();
    if (!attr)
        RT_RETURN(cudaErrorInvalidValue);
    struct emu_alloc a;
    memset(attr, 0, sizeof *attr);
    attr->device = -1;
    if (!emu_mem_lookup((uint64_t)(uintptr_t)ptr, &a)) {
        /* Memory CUDA does not know: unregistered host memory, no error. */
        attr->type = cudaMemoryTypeUnregistered;
        RT_RETURN(cudaSuccess);
    }
    if (a.device >= 0) {
        attr->type = a.kind == MAYA_ALLOC_MANAGED ? cudaMemoryTypeManaged : cudaMemoryTypeDevice;
        attr->device = a.device;
        attr->devicePointer = (void *)ptr;
        attr->hostPointer = a.kind == MAYA_ALLOC_MANAGED ? (void *)ptr : NULL;
    } else {
        attr->type = cudaMemoryTypeHost;
        attr->device = rt_device();
        attr->devicePointer = (void *)ptr;
        attr->hostPointer = (void *)ptr;
    }
    RT_RETURN(cudaSuccess);
}

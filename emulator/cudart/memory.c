/* Runtime memory: allocation (device, pitched, async and pools, host,
 * managed), freeing, memory information and pointer attributes. Device
 * memory is reserved address space that costs no RAM until touched; its
 * capacity is the emulated GPU's (core memory.c, pool.c). */
#include "rt.h"

#include <string.h>

#define DEVICE_KINDS ((1 << MAYA_ALLOC_DEVICE) | (1 << MAYA_ALLOC_MANAGED) | (1 << MAYA_ALLOC_ASYNC))
#define HOST_KINDS (1 << MAYA_ALLOC_HOST)

/* cudaMalloc and friends are "potentially unsafe" during stream capture. */
static cudaError_t alloc_device(uint32_t api, uint64_t t0, void **devPtr, size_t size, int kind, unsigned flags)
{
    int dev = rt_device();
    cudaError_t e = devPtr ? rt_error(emu_capture_unsafe_call(NULL)) : cudaErrorInvalidValue;
    uint64_t p = 0;
    if (e == cudaSuccess) {
        emu_primary_ctx(dev);
        if (size == 0)
            *devPtr = NULL;
        else if ((e = rt_error(emu_mem_alloc(dev, size, kind, flags, &p))) == cudaSuccess)
            *devPtr = (void *)(uintptr_t)p;
    }
    emu_trace_alloc(MAYA_REC_ALLOC, api, t0, e, p, size, kind, dev, 0, 0);
    return rt_note(e);
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    RT_ENTER();
    return alloc_device(RT_API(), rt_t0, devPtr, size, MAYA_ALLOC_DEVICE, 0);
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    RT_ENTER();
    if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)
        RT_RETURN(cudaErrorInvalidValue);
    return alloc_device(RT_API(), rt_t0, devPtr, size, MAYA_ALLOC_MANAGED, flags);
}

/* Rows padded to 512 bytes, as the real allocator does. */
static size_t row_pitch(size_t width)
{
    size_t align = 512;
    return (width + align - 1) / align * align;
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    RT_ENTER();
    if (!pitch)
        RT_RETURN(cudaErrorInvalidValue);
    *pitch = row_pitch(width);
    return alloc_device(RT_API(), rt_t0, devPtr, *pitch * height, MAYA_ALLOC_DEVICE, 0);
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
    RT_ENTER();
    if (!pitchedDevPtr)
        RT_RETURN(cudaErrorInvalidValue);
    size_t pitch = row_pitch(extent.width);
    void *p = NULL;
    cudaError_t e = alloc_device(RT_API(), rt_t0, &p, pitch * extent.height * extent.depth, MAYA_ALLOC_DEVICE, 0);
    if (e == cudaSuccess)
        *pitchedDevPtr = (struct cudaPitchedPtr){ p, pitch, extent.width, extent.height };
    return e;
}

static cudaError_t free_memory(uint32_t api, uint64_t t0, void *ptr, int kinds, uint16_t flags,
                               struct emu_stream *stream)
{
    uint64_t sid = stream ? stream->id : 0;
    if (!ptr) {
        emu_trace_call(api, t0, cudaSuccess, sid, flags);
        return cudaSuccess;
    }
    struct emu_alloc a;
    if (emu_mem_free((uint64_t)(uintptr_t)ptr, kinds, &a) != EMU_OK) {
        emu_trace_call(api, t0, cudaErrorInvalidValue, sid, flags);
        return rt_note(cudaErrorInvalidValue);
    }
    emu_trace_alloc(MAYA_REC_FREE, api, t0, cudaSuccess, a.base, a.bytes, a.kind, a.device, sid, flags);
    return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr)
{
    RT_ENTER();
    cudaError_t e = rt_error(emu_capture_unsafe_call(NULL));
    if (e != cudaSuccess)
        RT_RETURN(e);
    int dev = rt_device();
    emu_primary_ctx(dev);
    /* cudaFree waits for the device, as on a GPU: a synchronisation point,
     * where pools give back their idle memory. */
    rt_drain(NULL);
    emu_pool_release_idle(dev, RT_API(), rt_t0);
    return free_memory(RT_API(), rt_t0, devPtr, DEVICE_KINDS, MAYA_F_DEVICE_SYNC, NULL);
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    RT_ENTER();
    unsigned known = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if (!pHost || (flags & ~known))
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = rt_error(emu_capture_unsafe_call(NULL));
    if (e != cudaSuccess)
        RT_RETURN(e);
    void *p = NULL;
    e = rt_error(emu_mem_host_alloc(size, flags, &p));
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
    cudaError_t e = rt_error(emu_capture_unsafe_call(NULL));
    if (e != cudaSuccess)
        RT_RETURN(e);
    rt_drain(NULL);
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

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    RT_ENTER();
    if (!free || !total)
        RT_RETURN(cudaErrorInvalidValue);
    uint64_t f, t;
    int dev = rt_device();
    emu_primary_ctx(dev);
    emu_mem_info(dev, &f, &t);
    *free = f;
    *total = t;
    RT_RETURN(cudaSuccess);
}

/* ---- stream-ordered allocation ---- */

static cudaError_t malloc_async(uint32_t api, uint64_t t0, void **devPtr, size_t size, struct emu_pool *pool,
                                cudaStream_t stream, int pt)
{
    struct emu_stream *s = NULL;
    cudaError_t e = devPtr ? rt_issue_stream(stream, pt, &s) : cudaErrorInvalidValue;
    uint64_t p = 0;
    if (e == cudaSuccess && (e = rt_error(emu_mem_alloc_async(api, t0, pool, size, s, &p))) == cudaSuccess) {
        *devPtr = (void *)(uintptr_t)p;
        return cudaSuccess;
    }
    emu_trace_alloc(MAYA_REC_ALLOC, api, t0, e, 0, size, MAYA_ALLOC_ASYNC, s ? s->device : rt_device(),
                    s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    RT_ENTER();
    return malloc_async(RT_API(), rt_t0, devPtr, size, NULL, hStream, 0);
}

cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
    RT_ENTER();
    return malloc_async(RT_API(), rt_t0, devPtr, size, NULL, hStream, 1);
}

cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
    RT_ENTER();
    struct emu_pool *p = emu_pool_resolve(memPool);
    if (!p)
        RT_RETURN(cudaErrorInvalidValue);
    return malloc_async(RT_API(), rt_t0, ptr, size, p, stream, 0);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
    RT_ENTER();
    struct emu_pool *p = emu_pool_resolve(memPool);
    if (!p)
        RT_RETURN(cudaErrorInvalidValue);
    return malloc_async(RT_API(), rt_t0, ptr, size, p, stream, 1);
}

static cudaError_t free_async(uint32_t api, uint64_t t0, void *ptr, cudaStream_t stream, int pt)
{
    struct emu_stream *s = NULL;
    cudaError_t e = rt_issue_stream(stream, pt, &s);
    if (e == cudaSuccess)
        e = rt_error(emu_mem_free_async(api, t0, (uint64_t)(uintptr_t)ptr, s));
    if (e != cudaSuccess)
        emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    RT_ENTER();
    return free_async(RT_API(), rt_t0, devPtr, hStream, 0);
}

cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
    RT_ENTER();
    return free_async(RT_API(), rt_t0, devPtr, hStream, 1);
}

/* ---- memory pools ---- */

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    RT_ENTER();
    if (!memPool)
        RT_RETURN(cudaErrorInvalidValue);
    struct emu_pool *p = emu_pool_default(device);
    if (!p)
        RT_RETURN(cudaErrorInvalidDevice);
    *memPool = (cudaMemPool_t)p;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
    RT_ENTER();
    if (!memPool)
        RT_RETURN(cudaErrorInvalidValue);
    struct emu_pool *p = emu_pool_current(device);
    if (!p)
        RT_RETURN(cudaErrorInvalidDevice);
    *memPool = (cudaMemPool_t)p;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_pool_set_current(device, emu_pool_resolve(memPool))));
}

/* CUDA 13's location-based forms: device locations only (host pools are
 * not emulated). */
static cudaError_t pool_location(const struct cudaMemLocation *loc, enum cudaMemAllocationType type, int *device)
{
    return loc ? rt_error(emu_pool_location((int)loc->type, loc->id, (int)type, device)) : cudaErrorInvalidValue;
}

static cudaError_t location_pool(uint32_t api, uint64_t t0, cudaMemPool_t *memPool, struct cudaMemLocation *location,
                                 enum cudaMemAllocationType type, int current)
{
    int dev = 0;
    cudaError_t e = memPool ? pool_location(location, type, &dev) : cudaErrorInvalidValue;
    if (e == cudaSuccess)
        *memPool = (cudaMemPool_t)(current ? emu_pool_current(dev) : emu_pool_default(dev));
    emu_trace_call(api, t0, e, 0, 0);
    return rt_note(e);
}

cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t *memPool, struct cudaMemLocation *location,
                                     enum cudaMemAllocationType type)
{
    RT_ENTER();
    return location_pool(RT_API(), rt_t0, memPool, location, type, 0);
}

cudaError_t cudaMemGetMemPool(cudaMemPool_t *memPool, struct cudaMemLocation *location,
                              enum cudaMemAllocationType type)
{
    RT_ENTER();
    return location_pool(RT_API(), rt_t0, memPool, location, type, 1);
}

cudaError_t cudaMemSetMemPool(struct cudaMemLocation *location, enum cudaMemAllocationType type,
                              cudaMemPool_t memPool)
{
    RT_ENTER();
    int dev = 0;
    cudaError_t e = pool_location(location, type, &dev);
    if (e == cudaSuccess)
        e = rt_error(emu_pool_set_current(dev, emu_pool_resolve(memPool)));
    RT_RETURN(e);
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *props)
{
    RT_ENTER();
    int dev = 0;
    cudaError_t e = memPool && props ? pool_location(&props->location, props->allocType, &dev)
                                     : cudaErrorInvalidValue;
    struct emu_pool *p = NULL;
    if (e == cudaSuccess && (e = rt_error(emu_pool_create(dev, props->maxSize, &p))) == cudaSuccess)
        *memPool = (cudaMemPool_t)p;
    RT_RETURN(e);
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_pool_destroy(emu_pool_resolve(memPool))));
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_pool_trim(emu_pool_resolve(memPool), minBytesToKeep, RT_API(), rt_t0)));
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_pool_attr(emu_pool_resolve(memPool), (int)attr, 1, value)));
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_pool_attr(emu_pool_resolve(memPool), (int)attr, 0, value)));
}

_Static_assert(sizeof(struct cudaMemAccessDesc) == 3 * sizeof(int), "the layout emu_pool_set_access reads");

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool, const struct cudaMemAccessDesc *descList, size_t count)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_pool_set_access(emu_pool_resolve(memPool), descList, count)));
}

cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t memPool,
                                 struct cudaMemLocation *location)
{
    RT_ENTER();
    struct emu_pool *p = emu_pool_resolve(memPool);
    if (!flags || !p || !location || location->type != cudaMemLocationTypeDevice)
        RT_RETURN(cudaErrorInvalidValue);
    int f = 0;
    cudaError_t e = rt_error(emu_pool_access(p, location->id, 0, &f));
    if (e == cudaSuccess)
        *flags = (enum cudaMemAccessFlags)f;
    RT_RETURN(e);
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

/* ---- managed memory hints: pages do not migrate under emulation; the
 * hints are checked (the range must be managed memory) and traced ---- */

static cudaError_t managed_range(const void *ptr, size_t count)
{
    struct emu_alloc a;
    uint64_t p = (uint64_t)(uintptr_t)ptr;
    if (!ptr || !count || !emu_mem_lookup(p, &a) || a.kind != MAYA_ALLOC_MANAGED || p + count > a.base + a.bytes)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

static int location_ok(struct cudaMemLocation loc)
{
    return loc.type == cudaMemLocationTypeHost || loc.type == cudaMemLocationTypeHostNuma ||
           loc.type == cudaMemLocationTypeHostNumaCurrent ||
           (loc.type == cudaMemLocationTypeDevice && emu_device(loc.id));
}

static cudaError_t prefetch(uint32_t api, uint64_t t0, const void *devPtr, size_t count,
                            struct cudaMemLocation location, unsigned flags, cudaStream_t stream, int pt)
{
    struct emu_stream *s = NULL;
    cudaError_t e = flags ? cudaErrorInvalidValue : managed_range(devPtr, count);
    if (e == cudaSuccess && !location_ok(location))
        e = cudaErrorInvalidDevice;
    if (e == cudaSuccess)
        e = rt_issue_stream(stream, pt, &s);
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, struct cudaMemLocation location,
                                 unsigned int flags, cudaStream_t stream)
{
    RT_ENTER();
    return prefetch(RT_API(), rt_t0, devPtr, count, location, flags, stream, 0);
}

cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count, struct cudaMemLocation location,
                                      unsigned int flags, cudaStream_t stream)
{
    RT_ENTER();
    return prefetch(RT_API(), rt_t0, devPtr, count, location, flags, stream, 1);
}

cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                          struct cudaMemLocation location)
{
    RT_ENTER();
    cudaError_t e = managed_range(devPtr, count);
    if (e == cudaSuccess && ((int)advice < cudaMemAdviseSetReadMostly || (int)advice > cudaMemAdviseUnsetAccessedBy))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && advice != cudaMemAdviseSetReadMostly && advice != cudaMemAdviseUnsetReadMostly &&
        advice != cudaMemAdviseUnsetPreferredLocation && !location_ok(location))
        e = cudaErrorInvalidDevice;
    RT_RETURN(e);
}

/* Nothing was advised or prefetched in a way the emulator keeps: the
 * answers are those of untouched managed memory. */
cudaError_t cudaMemRangeGetAttribute(void *data, size_t dataSize, enum cudaMemRangeAttribute attribute,
                                     const void *devPtr, size_t count)
{
    RT_ENTER();
    cudaError_t e = data && dataSize >= 4 ? managed_range(devPtr, count) : cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        switch (attribute) {
        case cudaMemRangeAttributeReadMostly:
            *(int *)data = 0;
            break;
        case cudaMemRangeAttributePreferredLocation:
        case cudaMemRangeAttributeLastPrefetchLocation:
        case cudaMemRangeAttributePreferredLocationId:
        case cudaMemRangeAttributeLastPrefetchLocationId:
            *(int *)data = cudaInvalidDeviceId;
            break;
        case cudaMemRangeAttributePreferredLocationType:
        case cudaMemRangeAttributeLastPrefetchLocationType:
            *(int *)data = cudaMemLocationTypeInvalid;
            break;
        case cudaMemRangeAttributeAccessedBy:
            memset(data, 0xff, dataSize / 4 * 4); /* no device: -1 each */
            break;
        default:
            e = cudaErrorInvalidValue;
        }
    }
    RT_RETURN(e);
}

cudaError_t cudaMemRangeGetAttributes(void **data, size_t *dataSizes, enum cudaMemRangeAttribute *attributes,
                                      size_t numAttributes, const void *devPtr, size_t count)
{
    if (!data || !dataSizes || !attributes) {
        RT_ENTER();
        RT_RETURN(cudaErrorInvalidValue);
    }
    for (size_t i = 0; i < numAttributes; i++) {
        cudaError_t e = cudaMemRangeGetAttribute(data[i], dataSizes[i], attributes[i], devPtr, count);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

static cudaError_t attach_mem(uint32_t api, uint64_t t0, cudaStream_t stream, void *devPtr, size_t length,
                              unsigned flags, int pt)
{
    struct emu_stream *s = NULL;
    struct emu_alloc a;
    cudaError_t e = rt_issue_stream(stream, pt, &s);
    if (e == cudaSuccess && (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost &&
                             flags != cudaMemAttachSingle))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && (!emu_mem_lookup((uint64_t)(uintptr_t)devPtr, &a) || a.kind != MAYA_ALLOC_MANAGED ||
                             (length && length != a.bytes)))
        e = cudaErrorInvalidValue;
    emu_trace_call(api, t0, e, s ? s->id : 0, 0);
    return rt_note(e);
}

cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void *devPtr, size_t length, unsigned int flags)
{
    RT_ENTER();
    return attach_mem(RT_API(), rt_t0, stream, devPtr, length, flags, 0);
}

cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void *devPtr, size_t length, unsigned int flags)
{
    RT_ENTER();
    return attach_mem(RT_API(), rt_t0, stream, devPtr, length, flags, 1);
}

/* Driver memory pools and stream-ordered allocation (cuMemAllocAsync,
 * cuMemAllocFromPoolAsync, cuMemFreeAsync) over the core's pools, which the
 * runtime's cudaMemPool* and cudaMallocAsync share: a CUmemoryPool is the
 * core's struct emu_pool, so a pool made by either API works in the other.
 * Allocations are traced as the runtime's are (ALLOC kind async); while the
 * stream captures they become memory nodes of the capture. */
#include "drv.h"

/* ---- stream-ordered allocation ---- */

/* The stream a stream-ordered call names, checked as work issued to it
 * (a capture it breaks); NULL after tracing the call as failed. */
static struct emu_stream *issue_stream(uint32_t api, uint64_t t0, CUstream h, int pt, CUresult *err)
{
    struct emu_stream *s = drv_stream(h, pt);
    *err = !s ? CUDA_ERROR_INVALID_HANDLE : drv_error(emu_stream_issue_check(s));
    if (*err == CUDA_SUCCESS)
        return s;
    emu_trace_call(api, t0, *err, s ? s->id : 0, 0);
    return NULL;
}

/* pool NULL: the current pool of the stream's device. */
static CUresult alloc_async(uint32_t api, uint64_t t0, CUdeviceptr *dptr, size_t bytes, struct emu_pool *pool,
                            CUstream h, int pt)
{
    CUresult e;
    struct emu_stream *s = issue_stream(api, t0, h, pt, &e);
    if (!s)
        return e;
    uint64_t p = 0;
    /* As cuMemAlloc, the driver refuses an allocation of no bytes. */
    e = !dptr || !bytes ? CUDA_ERROR_INVALID_VALUE : drv_error(emu_mem_alloc_async(api, t0, pool, bytes, s, &p));
    if (e == CUDA_SUCCESS) {
        *dptr = (CUdeviceptr)p;
        return e;
    }
    emu_trace_alloc(MAYA_REC_ALLOC, api, t0, e, 0, bytes, MAYA_ALLOC_ASYNC, s->device, s->id, 0);
    return e;
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    DRV_ENTER();
    return alloc_async(DRV_API(), drv_t0, dptr, bytesize, NULL, hStream, 0);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    DRV_ENTER();
    return alloc_async(DRV_API(), drv_t0, dptr, bytesize, NULL, hStream, 1);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    DRV_ENTER();
    struct emu_pool *p = emu_pool_resolve(pool);
    if (!p)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    return alloc_async(DRV_API(), drv_t0, dptr, bytesize, p, hStream, 0);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    DRV_ENTER();
    struct emu_pool *p = emu_pool_resolve(pool);
    if (!p)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    return alloc_async(DRV_API(), drv_t0, dptr, bytesize, p, hStream, 1);
}

static CUresult free_async(uint32_t api, uint64_t t0, CUdeviceptr dptr, CUstream h, int pt)
{
    CUresult e;
    struct emu_stream *s = issue_stream(api, t0, h, pt, &e);
    if (!s)
        return e;
    e = drv_error(emu_mem_free_async(api, t0, dptr, s));
    if (e != CUDA_SUCCESS)
        emu_trace_call(api, t0, e, s->id, 0);
    return e;
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    DRV_ENTER();
    return free_async(DRV_API(), drv_t0, dptr, hStream, 0);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    DRV_ENTER();
    return free_async(DRV_API(), drv_t0, dptr, hStream, 1);
}

/* ---- pools ---- */

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    DRV_ENTER();
    if (!pool_out)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    struct emu_pool *p = emu_pool_default(dev);
    if (!p)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    *pool_out = (CUmemoryPool)p;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    DRV_ENTER();
    if (!pool)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    struct emu_pool *p = emu_pool_current(dev);
    if (!p)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    *pool = (CUmemoryPool)p;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_pool_set_current(dev, emu_pool_resolve(pool))));
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    DRV_ENTER();
    if (!pool || !poolProps)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    int dev = 0;
    struct emu_pool *p = NULL;
    enum emu_err e = emu_pool_location((int)poolProps->location.type, poolProps->location.id,
                                       (int)poolProps->allocType, &dev);
    if (e == EMU_OK)
        e = emu_pool_create(dev, poolProps->maxSize, &p);
    if (e == EMU_OK)
        *pool = (CUmemoryPool)p;
    DRV_RETURN(drv_error(e));
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_pool_destroy(emu_pool_resolve(pool))));
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_pool_trim(emu_pool_resolve(pool), minBytesToKeep, DRV_API(), drv_t0)));
}

/* CUmemPool_attribute has cudaMemPoolAttr's numbers and value types. */
CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_pool_attr(emu_pool_resolve(pool), (int)attr, 1, value)));
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_pool_attr(emu_pool_resolve(pool), (int)attr, 0, value)));
}

_Static_assert(sizeof(CUmemAccessDesc) == 3 * sizeof(int), "the layout emu_pool_set_access reads");

CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
    DRV_ENTER();
    DRV_RETURN(drv_error(emu_pool_set_access(emu_pool_resolve(pool), map, count)));
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool, CUmemLocation *location)
{
    DRV_ENTER();
    struct emu_pool *p = emu_pool_resolve(memPool);
    if (!flags || !p || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    int f = 0;
    enum emu_err e = emu_pool_access(p, location->id, 0, &f);
    if (e == EMU_OK)
        *flags = (CUmemAccess_flags)f;
    DRV_RETURN(drv_error(e));
}

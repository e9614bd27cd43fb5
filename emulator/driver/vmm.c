/* The driver's virtual memory management: address reservations, physical
 * allocations and the mappings between them (what PyTorch's expandable
 * segments use: reserve 9/8 of the device's memory, then map 2 MiB / 20 MiB
 * physical segments into it as the caching allocator grows).
 *
 * Physical allocations count against the device's capacity (cuMemCreate
 * fails past it, as on the GPU); a reservation costs nothing; a mapped range
 * becomes read/write memory of the process (no RAM until touched) and is
 * entered in the core's allocation table, so pointer lookups, copies and
 * pointer attributes see it as device memory. Mappings do not share bytes
 * between two virtual ranges of one physical allocation (nothing reads them
 * but small copies).
 *
 * Handles are ids into a table, never pointers: a stale or made-up handle is
 * rejected, not dereferenced. Mappings are kept sorted by address, so a
 * lookup is O(log n) and an insert or removal an O(n) memmove (PyTorch maps
 * at most a few thousand segments). */
#define _GNU_SOURCE
#include "drv.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define GRANULE (2ull << 20)

struct phys {
    int device;
    uint64_t bytes;
    CUmemAllocationProp prop;
    int handle_refs;             /* cuMemCreate and cuMemRetainAllocationHandle; cuMemRelease drops one */
    int maps;                    /* mappings that use it */
};

struct mapping {
    uint64_t va, bytes, offset;
    uint64_t handle;
    uint64_t read_devices, rw_devices; /* cuMemSetAccess, one bit per device */
};

struct reservation {
    uint64_t va, bytes;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct phys **handles;    /* handle h is handles[h - 1]; NULL once freed */
static size_t nhandles, cap_handles;
static struct mapping *maps;     /* sorted by va */
static size_t nmaps, cap_maps;
static struct reservation *resv;
static size_t nresv, cap_resv;

static int grow(void **array, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 64;
    void *p = realloc(*array, ncap * elem);
    if (!p)
        return -1;
    *array = p;
    *cap = ncap;
    return 0;
}

static struct phys *phys_get(uint64_t h)
{
    return h >= 1 && h <= nhandles ? handles[h - 1] : NULL;
}

/* Give a physical allocation back once no handle or mapping holds it. */
static void phys_maybe_free(uint64_t h)
{
    struct phys *p = phys_get(h);
    if (p && p->handle_refs == 0 && p->maps == 0) {
        emu_mem_release(p->device, p->bytes);
        free(p);
        handles[h - 1] = NULL;
    }
}

/* Index of the first mapping ending after va. */
static size_t map_index(uint64_t va)
{
    size_t lo = 0, hi = nmaps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (maps[mid].va + maps[mid].bytes <= va)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static struct mapping *map_at(uint64_t va)
{
    size_t i = map_index(va);
    return i < nmaps && maps[i].va <= va ? &maps[i] : NULL;
}

static struct reservation *resv_containing(uint64_t va, uint64_t bytes)
{
    for (size_t i = 0; i < nresv; i++)
        if (va >= resv[i].va && bytes <= resv[i].bytes && va - resv[i].va <= resv[i].bytes - bytes)
            return &resv[i];
    return NULL;
}

/* Is [va, va+bytes) covered by mappings with no gap? */
static int fully_mapped(uint64_t va, uint64_t bytes)
{
    uint64_t end = va + bytes;
    for (size_t i = map_index(va); va < end; i++) {
        if (i >= nmaps || maps[i].va > va)
            return 0;
        va = maps[i].va + maps[i].bytes;
    }
    return 1;
}

static CUresult check_prop(const CUmemAllocationProp *prop)
{
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return prop->location.type >= CU_MEM_LOCATION_TYPE_HOST &&
                       prop->location.type <= CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT
                   ? CUDA_ERROR_NOT_SUPPORTED /* host-side VMM is not emulated */
                   : CUDA_ERROR_INVALID_VALUE;
    if (!emu_device(prop->location.id))
        return CUDA_ERROR_INVALID_DEVICE;
    return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                       CUmemAllocationGranularity_flags option)
{
    DRV_ENTER();
    if (!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    CUresult e = check_prop(prop);
    if (e == CUDA_SUCCESS)
        *granularity = GRANULE; /* minimum and recommended alike, as on Hopper */
    DRV_RETURN(e);
}

/* ---- address reservations ---- */

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags)
{
    DRV_ENTER();
    if (!ptr || !size || size % GRANULE || flags || (alignment & (alignment - 1)) || addr % GRANULE)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    uint64_t va = 0;
    pthread_mutex_lock(&lock);
    CUresult e = grow((void **)&resv, &cap_resv, nresv, sizeof *resv) < 0 ? CUDA_ERROR_OUT_OF_MEMORY
                 : drv_error(emu_va_reserve(size, MAYA_MAX(alignment, GRANULE), addr, &va));
    if (e == CUDA_SUCCESS) {
        resv[nresv++] = (struct reservation){ va, size };
        *ptr = va;
    }
    pthread_mutex_unlock(&lock);
    emu_trace_alloc(MAYA_REC_ALLOC, DRV_API(), drv_t0, e, va, size, MAYA_ALLOC_VMM_RESERVE, -1, 0, 0);
    return e;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    DRV_ENTER();
    CUresult e = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nresv; i++) {
        if (resv[i].va != ptr || resv[i].bytes != size)
            continue;
        /* Mappings must go first (cuMemUnmap), as the driver requires. */
        size_t m = map_index(ptr);
        if (m < nmaps && maps[m].va < ptr + size)
            break;
        if (emu_va_release(ptr, size) == EMU_OK) {
            resv[i] = resv[--nresv];
            e = CUDA_SUCCESS;
        }
        break;
    }
    pthread_mutex_unlock(&lock);
    if (e != CUDA_SUCCESS)
        DRV_RETURN(e);
    emu_trace_alloc(MAYA_REC_FREE, DRV_API(), drv_t0, e, ptr, size, MAYA_ALLOC_VMM_RESERVE, -1, 0, 0);
    return e;
}

/* ---- physical allocations ---- */

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    DRV_ENTER();
    if (!handle || !size || size % GRANULE || flags)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    CUresult e = check_prop(prop);
    if (e != CUDA_SUCCESS)
        DRV_RETURN(e);
    /* Fabric handles need IMEX, which this driver reports absent
     * (HANDLE_TYPE_FABRIC_SUPPORTED 0): refused as on a node without it,
     * so callers (PyTorch's expandable segments) fall back to fd handles. */
    if (prop->requestedHandleTypes & CU_MEM_HANDLE_TYPE_FABRIC)
        DRV_RETURN(CUDA_ERROR_NOT_PERMITTED);
    int dev = prop->location.id;
    emu_device_touch(emu_device(dev));
    struct phys *p = calloc(1, sizeof *p);
    uint64_t h = 0;
    if (!p)
        DRV_RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    e = drv_error(emu_mem_charge(dev, size));
    if (e == CUDA_SUCCESS) {
        pthread_mutex_lock(&lock);
        if (grow((void **)&handles, &cap_handles, nhandles, sizeof *handles) < 0) {
            e = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            *p = (struct phys){ dev, size, *prop, 1, 0 };
            handles[nhandles++] = p;
            h = nhandles;
        }
        pthread_mutex_unlock(&lock);
        if (e != CUDA_SUCCESS)
            emu_mem_release(dev, size);
    }
    if (e == CUDA_SUCCESS)
        *handle = h;
    else
        free(p);
    emu_trace_alloc(MAYA_REC_ALLOC, DRV_API(), drv_t0, e, h, size, MAYA_ALLOC_VMM_PHYSICAL, dev, 0, 0);
    return e;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    DRV_ENTER();
    pthread_mutex_lock(&lock);
    struct phys *p = phys_get(handle);
    int dev = p ? p->device : -1, last = 0;
    uint64_t bytes = p ? p->bytes : 0;
    if (p && p->handle_refs > 0) {
        last = --p->handle_refs == 0;
        phys_maybe_free(handle);
    } else {
        p = NULL;
    }
    pthread_mutex_unlock(&lock);
    if (!p)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    /* The last handle gone ends the allocation in the trace (its memory is
     * given back now, or when its last mapping goes); releasing a handle
     * cuMemRetainAllocationHandle added is just a call. */
    if (!last)
        DRV_RETURN(CUDA_SUCCESS);
    emu_trace_alloc(MAYA_REC_FREE, DRV_API(), drv_t0, CUDA_SUCCESS, handle, bytes, MAYA_ALLOC_VMM_PHYSICAL, dev, 0, 0);
    return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop, CUmemGenericAllocationHandle handle)
{
    DRV_ENTER();
    if (!prop)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    pthread_mutex_lock(&lock);
    struct phys *p = phys_get(handle);
    if (p)
        *prop = p->prop;
    pthread_mutex_unlock(&lock);
    DRV_RETURN(p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    DRV_ENTER();
    if (!handle)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    pthread_mutex_lock(&lock);
    struct mapping *m = map_at((uint64_t)(uintptr_t)addr);
    struct phys *p = m ? phys_get(m->handle) : NULL;
    if (p) {
        p->handle_refs++;
        *handle = m->handle;
    }
    pthread_mutex_unlock(&lock);
    DRV_RETURN(p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

/* ---- mappings ---- */

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    DRV_ENTER();
    if (!ptr || !size || ptr % GRANULE || size % GRANULE || offset % GRANULE || flags)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    CUresult e = CUDA_SUCCESS;
    int dev = -1;
    pthread_mutex_lock(&lock);
    struct phys *p = phys_get(handle);
    size_t i = map_index(ptr);
    if (!p || offset > p->bytes || size > p->bytes - offset)
        e = CUDA_ERROR_INVALID_VALUE;
    else if (!resv_containing(ptr, size))
        e = CUDA_ERROR_INVALID_VALUE; /* only reserved address space can be mapped */
    else if (i < nmaps && maps[i].va < ptr + size)
        e = CUDA_ERROR_ALREADY_MAPPED;
    else if (grow((void **)&maps, &cap_maps, nmaps, sizeof *maps) < 0)
        e = CUDA_ERROR_OUT_OF_MEMORY;
    if (e == CUDA_SUCCESS) {
        dev = p->device;
        struct emu_alloc a = { .base = ptr, .bytes = size, .device = dev, .kind = MAYA_ALLOC_VMM_MAP };
        /* The range becomes memory the emulator may write (small copies):
         * zero pages, no RAM until touched. */
        if (mprotect((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE) != 0 || emu_mem_table_add(&a) != EMU_OK) {
            mprotect((void *)(uintptr_t)ptr, size, PROT_NONE);
            e = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    if (e == CUDA_SUCCESS) {
        memmove(&maps[i + 1], &maps[i], (nmaps - i) * sizeof *maps);
        maps[i] = (struct mapping){ ptr, size, offset, handle, 0, 0 };
        nmaps++;
        p->maps++;
    }
    pthread_mutex_unlock(&lock);
    if (e != CUDA_SUCCESS)
        DRV_RETURN(e);
    emu_trace_alloc(MAYA_REC_ALLOC, DRV_API(), drv_t0, e, ptr, size, MAYA_ALLOC_VMM_MAP, dev, 0, 0);
    return e;
}

/* The range must be whole mappings: each is removed and traced. */
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    DRV_ENTER();
    if (!ptr || !size)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    pthread_mutex_lock(&lock);
    size_t first = map_index(ptr), last = first;
    uint64_t at = ptr;
    while (last < nmaps && maps[last].va == at && at < ptr + size)
        at = maps[last].va + maps[last].bytes, last++;
    if (first == last || at != ptr + size) {
        pthread_mutex_unlock(&lock);
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    }
    for (size_t i = first; i < last; i++) {
        struct mapping *m = &maps[i];
        struct phys *p = phys_get(m->handle);
        int dev = p ? p->device : -1;
        emu_mem_free(m->va, 1 << MAYA_ALLOC_VMM_MAP, NULL);
        madvise((void *)(uintptr_t)m->va, m->bytes, MADV_DONTNEED);
        mprotect((void *)(uintptr_t)m->va, m->bytes, PROT_NONE);
        if (p) {
            p->maps--;
            phys_maybe_free(m->handle);
        }
        emu_trace_alloc(MAYA_REC_FREE, DRV_API(), drv_t0, CUDA_SUCCESS, m->va, m->bytes, MAYA_ALLOC_VMM_MAP, dev,
                        0, 0);
    }
    memmove(&maps[first], &maps[last], (nmaps - last) * sizeof *maps);
    nmaps -= last - first;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    DRV_ENTER();
    if (!desc || !count || !size)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    for (size_t i = 0; i < count; i++) {
        CUmemAccess_flags f = desc[i].flags;
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || !emu_device(desc[i].location.id) ||
            desc[i].location.id >= 64 ||
            (f != CU_MEM_ACCESS_FLAGS_PROT_NONE && f != CU_MEM_ACCESS_FLAGS_PROT_READ &&
             f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
            DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    }
    pthread_mutex_lock(&lock);
    int ok = fully_mapped(ptr, size);
    for (size_t i = map_index(ptr); ok && i < nmaps && maps[i].va < ptr + size; i++)
        for (size_t j = 0; j < count; j++) {
            uint64_t bit = 1ull << desc[j].location.id;
            maps[i].read_devices &= ~bit;
            maps[i].rw_devices &= ~bit;
            if (desc[j].flags == CU_MEM_ACCESS_FLAGS_PROT_READ)
                maps[i].read_devices |= bit;
            else if (desc[j].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
                maps[i].rw_devices |= bit;
        }
    pthread_mutex_unlock(&lock);
    DRV_RETURN(ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location, CUdeviceptr ptr)
{
    DRV_ENTER();
    if (!flags || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE || !emu_device(location->id) ||
        location->id >= 64)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    pthread_mutex_lock(&lock);
    struct mapping *m = map_at(ptr);
    if (m) {
        uint64_t bit = 1ull << location->id;
        *flags = (m->rw_devices & bit) ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                 : (m->read_devices & bit) ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                           : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    }
    pthread_mutex_unlock(&lock);
    DRV_RETURN(m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

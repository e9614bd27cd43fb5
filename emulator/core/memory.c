/* Emulated device memory.
 *
 * Each device gets one region of address space as large as its memory,
 * mapped with MAP_NORESERVE: allocations are carved from it, cost no RAM
 * until something writes to them (small copies), and the pages of a freed
 * allocation are given back with MADV_DONTNEED. Capacity is the GPU's; an
 * allocation past it fails as on the GPU.
 *
 * Address space for the driver's virtual memory API (cuMemAddressReserve)
 * comes from a separate region, PROT_NONE until cuMemMap makes a range usable.
 *
 * Every allocation (device, host, mapped) is kept in one array sorted by
 * address so that any pointer can be looked up in O(log n). Inserting and
 * removing are O(n) memmoves: programs allocate rarely (caching allocators),
 * so this stays far below the cost of anything else they do.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DEV_ALIGN 512u                 /* cudaMalloc returns 512-byte aligned memory */
#define VMM_GRANULE (2u << 20)

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;

struct range {
    uint64_t start, len;
};

/* A first-fit allocator over one region: free ranges sorted by address. */
struct arena {
    uint64_t base, size;
    struct range *free;
    size_t nfree, cap;
};

static struct arena *dev_arenas;       /* one per device, made on first use */
static struct arena vmm_arena;

/* The lowest and highest address of device memory (every device's region
 * and the VMM region), read without the lock by real_bytes.c on launches to
 * tell device pointers from other parameter words. Only ever widened. */
static uint64_t va_lo = UINT64_MAX, va_hi;

static struct emu_alloc *allocs;       /* sorted by base */
static size_t nallocs, cap_allocs;

static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static int arena_init(struct arena *a, uint64_t size, int prot)
{
    void *p = mmap(NULL, size, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return maya_error("cannot reserve %llu bytes of address space for emulated memory: %m",
                          (unsigned long long)size);
    a->base = (uint64_t)(uintptr_t)p;
    a->size = size;
    if (a->base < __atomic_load_n(&va_lo, __ATOMIC_RELAXED))
        __atomic_store_n(&va_lo, a->base, __ATOMIC_RELAXED);
    if (a->base + size > __atomic_load_n(&va_hi, __ATOMIC_RELAXED))
        __atomic_store_n(&va_hi, a->base + size, __ATOMIC_RELAXED);
    a->cap = 64;
    a->free = malloc(a->cap * sizeof *a->free);
    if (!a->free)
        return maya_error("out of memory");
    a->free[0] = (struct range){ a->base, size };
    a->nfree = 1;
    return 0;
}

/* Take len bytes aligned to align (and at hint if that range is free). */
static int arena_take(struct arena *a, uint64_t len, uint64_t align, uint64_t hint, uint64_t *out)
{
    for (int pass = hint ? 0 : 1; pass < 2; pass++) {
        for (size_t i = 0; i < a->nfree; i++) {
            struct range *r = &a->free[i];
            uint64_t start = pass == 0 ? hint : round_up(r->start, align);
            if (start < r->start || start + len > r->start + r->len)
                continue;
            uint64_t before = start - r->start, after = r->start + r->len - (start + len);
            if (before && after) {
                if (a->nfree == a->cap) {
                    struct range *n = realloc(a->free, a->cap * 2 * sizeof *n);
                    if (!n)
                        return -1;
                    a->free = n;
                    a->cap *= 2;
                    r = &a->free[i];
                }
                memmove(&a->free[i + 2], &a->free[i + 1], (a->nfree - i - 1) * sizeof *r);
                a->free[i + 1] = (struct range){ start + len, after };
                r->len = before;
                a->nfree++;
            } else if (before) {
                r->len = before;
            } else if (after) {
                r->start = start + len;
                r->len = after;
            } else {
                memmove(&a->free[i], &a->free[i + 1], (a->nfree - i - 1) * sizeof *r);
                a->nfree--;
            }
            *out = start;
            return 0;
        }
    }
    return -1;
}

static int arena_give(struct arena *a, uint64_t start, uint64_t len)
{
    size_t i = 0;
    while (i < a->nfree && a->free[i].start < start)
        i++;
    int merge_prev = i > 0 && a->free[i - 1].start + a->free[i - 1].len == start;
    int merge_next = i < a->nfree && start + len == a->free[i].start;
    if (merge_prev && merge_next) {
        a->free[i - 1].len += len + a->free[i].len;
        memmove(&a->free[i], &a->free[i + 1], (a->nfree - i - 1) * sizeof *a->free);
        a->nfree--;
    } else if (merge_prev) {
        a->free[i - 1].len += len;
    } else if (merge_next) {
        a->free[i].start = start;
        a->free[i].len += len;
    } else {
        if (a->nfree == a->cap) {
            struct range *n = realloc(a->free, a->cap * 2 * sizeof *n);
            if (!n)
                return -1;
            a->free = n;
            a->cap *= 2;
        }
        memmove(&a->free[i + 1], &a->free[i], (a->nfree - i) * sizeof *a->free);
        a->free[i] = (struct range){ start, len };
        a->nfree++;
    }
    return 0;
}

/* Give the pages wholly inside [start, start+len) back to the kernel. */
static void drop_pages(uint64_t start, uint64_t len)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t a = round_up(start, page), b = (start + len) / page * page;
    if (b > a)
        madvise((void *)(uintptr_t)a, b - a, MADV_DONTNEED);
}

/* ---- the sorted table of allocations (mem_lock held) ---- */

static size_t table_find(uint64_t ptr)
{
    /* index of the first allocation with base > ptr */
    size_t lo = 0, hi = nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (allocs[mid].base <= ptr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int table_insert(const struct emu_alloc *a)
{
    if (nallocs == cap_allocs) {
        size_t n = cap_allocs ? cap_allocs * 2 : 256;
        struct emu_alloc *p = realloc(allocs, n * sizeof *p);
        if (!p)
            return -1;
        allocs = p;
        cap_allocs = n;
    }
    size_t i = table_find(a->base);
    memmove(&allocs[i + 1], &allocs[i], (nallocs - i) * sizeof *allocs);
    allocs[i] = *a;
    nallocs++;
    return 0;
}

static struct emu_alloc *table_lookup(uint64_t ptr)
{
    size_t i = table_find(ptr);
    if (i == 0)
        return NULL;
    struct emu_alloc *a = &allocs[i - 1];
    uint64_t extent = a->bytes ? a->bytes : 1;
    return ptr < a->base + extent ? a : NULL;
}

static void table_remove(struct emu_alloc *a)
{
    size_t i = (size_t)(a - allocs);
    memmove(&allocs[i], &allocs[i + 1], (nallocs - i - 1) * sizeof *allocs);
    nallocs--;
}

/* ---- device memory ---- */

static struct arena *device_arena(int device)
{
    if (!dev_arenas) {
        dev_arenas = calloc((size_t)MAYA_MAX(emu_device_count(), 1), sizeof *dev_arenas);
        if (!dev_arenas)
            return NULL;
    }
    struct arena *a = &dev_arenas[device];
    if (!a->base && arena_init(a, round_up(emu_device(device)->capacity, VMM_GRANULE) + VMM_GRANULE,
                               PROT_READ | PROT_WRITE) < 0)
        return NULL;
    return a;
}

static enum emu_err charge_locked(struct emu_device *d, uint64_t bytes)
{
    if (bytes > d->capacity - d->used) {
        emu_note_oom();
        return EMU_ERR_OUT_OF_MEMORY;
    }
    d->used += bytes;
    if (d->used > d->peak)
        d->peak = d->used;
    return EMU_OK;
}

/* Carve an allocation out of the device's region and enter it in the table
 * (mem_lock held); capacity is the caller's business. */
static enum emu_err place_locked(int device, uint64_t bytes, uint64_t charged, int kind, unsigned flags,
                                 uint64_t pool, uint64_t *ptr)
{
    struct arena *a = device_arena(device);
    uint64_t base = 0;
    if (!a || arena_take(a, charged, DEV_ALIGN, 0, &base) < 0) {
        emu_note_oom();
        return EMU_ERR_OUT_OF_MEMORY;
    }
    struct emu_alloc rec = { .base = base, .bytes = bytes, .charged = charged, .device = device,
                             .kind = kind, .flags = flags, .pool = pool };
    if (table_insert(&rec) < 0) {
        arena_give(a, base, charged);
        return EMU_ERR_OUT_OF_MEMORY;
    }
    *ptr = base;
    return EMU_OK;
}

EMU_API enum emu_err emu_mem_alloc(int device, uint64_t bytes, int kind, unsigned flags, uint64_t *ptr)
{
    struct emu_device *d = emu_device(device);
    if (!d)
        return EMU_ERR_INVALID_DEVICE;
    uint64_t charged = round_up(bytes ? bytes : 1, DEV_ALIGN);
    if (charged < bytes)
        return EMU_ERR_OUT_OF_MEMORY;
    pthread_mutex_lock(&mem_lock);
    enum emu_err rc = charge_locked(d, charged);
    if (rc == EMU_OK && (rc = place_locked(device, bytes, charged, kind, flags, 0, ptr)) != EMU_OK)
        d->used -= charged;
    pthread_mutex_unlock(&mem_lock);
    return rc;
}

EMU_API enum emu_err emu_mem_place(int device, uint64_t bytes, uint64_t charged, int kind, uint64_t pool,
                                   uint64_t *ptr)
{
    if (!emu_device(device))
        return EMU_ERR_INVALID_DEVICE;
    pthread_mutex_lock(&mem_lock);
    enum emu_err rc = place_locked(device, bytes, charged, kind, 0, pool, ptr);
    pthread_mutex_unlock(&mem_lock);
    return rc;
}

EMU_API enum emu_err emu_mem_host_alloc(uint64_t bytes, unsigned flags, void **ptr)
{
    uint64_t len = round_up(bytes ? bytes : 1, (uint64_t)sysconf(_SC_PAGESIZE));
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return EMU_ERR_OUT_OF_MEMORY;
    struct emu_alloc rec = { .base = (uint64_t)(uintptr_t)p, .bytes = bytes, .charged = len,
                             .device = -1, .kind = MAYA_ALLOC_HOST, .flags = flags };
    pthread_mutex_lock(&mem_lock);
    int rc = table_insert(&rec);
    pthread_mutex_unlock(&mem_lock);
    if (rc < 0) {
        munmap(p, len);
        return EMU_ERR_OUT_OF_MEMORY;
    }
    *ptr = p;
    return EMU_OK;
}

EMU_API enum emu_err emu_mem_host_register(void *ptr, uint64_t bytes, unsigned flags)
{
    if (!ptr || !bytes)
        return EMU_ERR_INVALID_VALUE;
    struct emu_alloc rec = { .base = (uint64_t)(uintptr_t)ptr, .bytes = bytes, .charged = 0,
                             .device = -1, .kind = MAYA_ALLOC_HOST_REGISTER, .flags = flags };
    enum emu_err rc = EMU_OK;
    pthread_mutex_lock(&mem_lock);
    struct emu_alloc *old = table_lookup(rec.base);
    if (!old)
        old = table_lookup(rec.base + bytes - 1);
    if (old)
        rc = EMU_ERR_ALREADY_MAPPED;
    else if (table_insert(&rec) < 0)
        rc = EMU_ERR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&mem_lock);
    return rc;
}

EMU_API enum emu_err emu_mem_free(uint64_t ptr, int kind_mask, struct emu_alloc *out)
{
    pthread_mutex_lock(&mem_lock);
    struct emu_alloc *a = table_lookup(ptr);
    if (!a || a->base != ptr || !(kind_mask & (1 << a->kind))) {
        pthread_mutex_unlock(&mem_lock);
        return EMU_ERR_INVALID_VALUE;
    }
    struct emu_alloc copy = *a;
    table_remove(a);
    if (copy.device >= 0 && copy.kind != MAYA_ALLOC_VMM_MAP) {
        struct emu_device *d = emu_device(copy.device);
        if (!copy.pool)
            d->used -= copy.charged; /* a pool keeps the capacity in its reserve */
        drop_pages(copy.base, copy.charged);
        arena_give(&dev_arenas[copy.device], copy.base, copy.charged);
    }
    pthread_mutex_unlock(&mem_lock);
    if (copy.device >= 0)
        emu_real_forget(copy.base, MAYA_MAX(copy.bytes, copy.charged)); /* no values live on there */
    if (copy.pool)
        emu_pool_freed(copy.pool, copy.charged);
    if (copy.kind == MAYA_ALLOC_HOST)
        munmap((void *)(uintptr_t)copy.base, copy.charged);
    if (out)
        *out = copy;
    return EMU_OK;
}

void emu_mem_device_va(uint64_t *lo, uint64_t *hi)
{
    *lo = __atomic_load_n(&va_lo, __ATOMIC_RELAXED);
    *hi = __atomic_load_n(&va_hi, __ATOMIC_RELAXED);
}

EMU_API int emu_mem_lookup(uint64_t ptr, struct emu_alloc *out)
{
    pthread_mutex_lock(&mem_lock);
    struct emu_alloc *a = table_lookup(ptr);
    if (a && out)
        *out = *a;
    pthread_mutex_unlock(&mem_lock);
    return a != NULL;
}

EMU_API enum emu_err emu_mem_charge(int device, uint64_t bytes)
{
    struct emu_device *d = emu_device(device);
    if (!d)
        return EMU_ERR_INVALID_DEVICE;
    pthread_mutex_lock(&mem_lock);
    enum emu_err rc = charge_locked(d, bytes);
    pthread_mutex_unlock(&mem_lock);
    return rc;
}

EMU_API void emu_mem_release(int device, uint64_t bytes)
{
    struct emu_device *d = emu_device(device);
    if (!d)
        return;
    pthread_mutex_lock(&mem_lock);
    d->used -= MAYA_MIN(bytes, d->used);
    pthread_mutex_unlock(&mem_lock);
}

EMU_API void emu_mem_info(int device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    struct emu_device *d = emu_device(device);
    pthread_mutex_lock(&mem_lock);
    if (free_bytes)
        *free_bytes = d ? d->capacity - d->used : 0;
    if (total_bytes)
        *total_bytes = d ? d->prop.totalGlobalMem : 0;
    pthread_mutex_unlock(&mem_lock);
}

EMU_API void emu_mem_usage(int device, uint64_t *used, uint64_t *peak)
{
    struct emu_device *d = emu_device(device);
    pthread_mutex_lock(&mem_lock);
    if (used)
        *used = d ? d->used : 0;
    if (peak)
        *peak = d ? d->peak : 0;
    pthread_mutex_unlock(&mem_lock);
}

/* ---- virtual address space (driver VMM) ---- */

EMU_API enum emu_err emu_va_reserve(uint64_t bytes, uint64_t align, uint64_t hint, uint64_t *ptr)
{
    if (!bytes || bytes % VMM_GRANULE)
        return EMU_ERR_INVALID_VALUE;
    if (!align)
        align = VMM_GRANULE;
    if (align % VMM_GRANULE)
        return EMU_ERR_INVALID_VALUE;
    pthread_mutex_lock(&mem_lock);
    enum emu_err rc = EMU_OK;
    if (!vmm_arena.base) {
        /* Room for every device's memory four times over: PyTorch reserves
         * 9/8 of a device's memory per expandable segment pool. */
        uint64_t size = 0;
        for (int i = 0; i < emu_device_count(); i++)
            size += round_up(emu_device(i)->capacity, VMM_GRANULE) * 4;
        if (size < (64ull << 30))
            size = 64ull << 30;
        if (arena_init(&vmm_arena, size, PROT_NONE) < 0)
            rc = EMU_ERR_OUT_OF_MEMORY;
    }
    uint64_t base = 0;
    if (rc == EMU_OK && arena_take(&vmm_arena, bytes, align, hint, &base) < 0)
        rc = EMU_ERR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&mem_lock);
    if (rc == EMU_OK)
        *ptr = base;
    return rc;
}

EMU_API enum emu_err emu_va_release(uint64_t ptr, uint64_t bytes)
{
    pthread_mutex_lock(&mem_lock);
    enum emu_err rc = EMU_OK;
    if (!vmm_arena.base || ptr < vmm_arena.base || ptr + bytes > vmm_arena.base + vmm_arena.size)
        rc = EMU_ERR_INVALID_VALUE;
    else
        arena_give(&vmm_arena, ptr, bytes);
    pthread_mutex_unlock(&mem_lock);
    return rc;
}

/* ---- pointers and small copies ---- */

EMU_API int emu_ptr_device(uint64_t ptr, int *pinned)
{
    int dev = -1, pin = 0;
    pthread_mutex_lock(&mem_lock);
    struct emu_alloc *a = table_lookup(ptr);
    if (a) {
        dev = a->device;
        pin = a->device < 0 || a->kind == MAYA_ALLOC_MANAGED;
    } else if (dev_arenas) {
        for (int i = 0; i < emu_device_count(); i++)
            if (dev_arenas[i].base && ptr >= dev_arenas[i].base &&
                ptr < dev_arenas[i].base + dev_arenas[i].size)
                dev = i;
    }
    pthread_mutex_unlock(&mem_lock);
    if (pinned)
        *pinned = pin;
    return dev;
}

/* Is [p, p+len) inside memory the process can touch? Device memory is only
 * touchable inside a live allocation (or a mapped VMM range). */
static int touchable(uint64_t p, uint64_t len)
{
    int ok = 1;
    pthread_mutex_lock(&mem_lock);
    struct emu_alloc *a = table_lookup(p);
    if (a) {
        if (a->kind == MAYA_ALLOC_VMM_PHYSICAL || a->kind == MAYA_ALLOC_VMM_RESERVE)
            ok = 0;
        else if (p + len > a->base + MAYA_MAX(a->bytes, a->charged))
            ok = 0;
    } else {
        /* Not ours: host memory of the program, unless it lies inside a
         * device region or the VMM region (unallocated device memory). */
        if (vmm_arena.base && p >= vmm_arena.base && p < vmm_arena.base + vmm_arena.size)
            ok = 0;
        for (int i = 0; dev_arenas && i < emu_device_count(); i++)
            if (dev_arenas[i].base && p >= dev_arenas[i].base && p < dev_arenas[i].base + dev_arenas[i].size)
                ok = 0;
    }
    pthread_mutex_unlock(&mem_lock);
    return ok;
}

EMU_API int emu_copy_bytes(void *dst, const void *src, uint64_t bytes)
{
    if (bytes == 0 || bytes > emu_config()->copy_threshold || !dst || !src)
        return 0;
    if (!touchable((uint64_t)(uintptr_t)dst, bytes) || !touchable((uint64_t)(uintptr_t)src, bytes))
        return 0;
    memmove(dst, src, bytes);
    return 1;
}

EMU_API int emu_set_bytes(void *dst, int value, uint64_t bytes)
{
    if (bytes == 0 || bytes > emu_config()->copy_threshold || !dst)
        return 0;
    if (!touchable((uint64_t)(uintptr_t)dst, bytes))
        return 0;
    memset(dst, value, bytes);
    return 1;
}

EMU_API int emu_fill_bytes(void *dst, const void *pattern, unsigned elem_bytes, uint64_t count)
{
    uint64_t bytes = count * elem_bytes;
    if (bytes == 0 || bytes > emu_config()->copy_threshold || !dst || !pattern ||
        (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4))
        return 0;
    if (!touchable((uint64_t)(uintptr_t)dst, bytes))
        return 0;
    unsigned char *d = dst;
    for (uint64_t i = 0; i < count; i++)
        memcpy(d + i * elem_bytes, pattern, elem_bytes);
    return 1;
}

/* Add a VMM mapping or physical handle to the table (used by the driver's
 * cuMemCreate/cuMemMap). Declared in driver code via emu.h extensions. */
EMU_API enum emu_err emu_mem_table_add(const struct emu_alloc *a)
{
    pthread_mutex_lock(&mem_lock);
    int rc = table_insert(a);
    pthread_mutex_unlock(&mem_lock);
    return rc < 0 ? EMU_ERR_OUT_OF_MEMORY : EMU_OK;
}

EMU_API void emu_mem_table_forget(uint64_t ptr)
{
    pthread_mutex_lock(&mem_lock);
    struct emu_alloc *a = table_lookup(ptr);
    if (a && a->base == ptr)
        table_remove(a);
    pthread_mutex_unlock(&mem_lock);
}

EMU_API uint64_t emu_mem_reset_device(int device)
{
    /* Free every device allocation of the device (cudaDeviceReset): one
     * pass collecting bases, then the ordinary free of each. */
    uint64_t freed = 0;
    for (;;) {
        uint64_t base = 0;
        pthread_mutex_lock(&mem_lock);
        for (size_t i = 0; i < nallocs && !base; i++)
            if (allocs[i].device == device &&
                (allocs[i].kind == MAYA_ALLOC_DEVICE || allocs[i].kind == MAYA_ALLOC_ASYNC ||
                 allocs[i].kind == MAYA_ALLOC_MANAGED))
                base = allocs[i].base;
        pthread_mutex_unlock(&mem_lock);
        struct emu_alloc a;
        if (!base || emu_mem_free(base, (1 << MAYA_ALLOC_DEVICE) | (1 << MAYA_ALLOC_ASYNC) |
                                            (1 << MAYA_ALLOC_MANAGED), &a) != EMU_OK)
            return freed;
        freed += a.charged;
    }
}

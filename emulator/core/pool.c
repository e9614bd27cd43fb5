/* Stream-ordered memory pools (cudaMallocAsync, cudaMemPool*, cuMemPool*).
 *
 * A pool reserves device memory in 2 MiB steps and keeps what its freed
 * allocations held: reserved bytes count against the device's capacity
 * (cudaMemGetInfo shows them as used) until the pool gives them back. It
 * gives back what exceeds its release threshold when the program
 * synchronises (stream, event or device), and on cudaMemPoolTrimTo, as
 * CUDA's pools do. Each device has a default pool; programs may make more.
 *
 * Pools are few; a list with a mutex is enough. Addresses come from the
 * device's region like any allocation (memory.c); only the accounting of
 * capacity differs.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"

#include <stdlib.h>
#include <string.h>

#define POOL_MAGIC 0x706f6f6cu
#define POOL_GRANULE (2ull << 20)

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_pool *pools;           /* every pool, newest first */
static struct emu_pool *defaults[64];    /* per device */
static struct emu_pool *current[64];     /* cudaDeviceSetMemPool */
static uint64_t next_pool_id = 1;

static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static struct emu_pool *pool_new(int device, uint64_t max_bytes, int is_default)
{
    struct emu_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->magic = POOL_MAGIC;
    p->device = device;
    p->max_bytes = max_bytes;
    p->is_default = is_default;
    p->reuse_follow_events = p->reuse_opportunistic = p->reuse_internal = 1;
    p->access[device] = 3; /* cudaMemAccessFlagsProtReadWrite on its own device */
    p->id = next_pool_id++;
    p->next = pools;
    pools = p;
    return p;
}

EMU_API struct emu_pool *emu_pool_resolve(const void *handle)
{
    const struct emu_pool *p = handle;
    return p && p->magic == POOL_MAGIC ? (struct emu_pool *)p : NULL;
}

EMU_API struct emu_pool *emu_pool_default(int device)
{
    if (!emu_device(device) || device >= 64)
        return NULL;
    pthread_mutex_lock(&pool_lock);
    if (!defaults[device])
        defaults[device] = pool_new(device, 0, 1);
    struct emu_pool *p = defaults[device];
    pthread_mutex_unlock(&pool_lock);
    return p;
}

EMU_API struct emu_pool *emu_pool_current(int device)
{
    if (!emu_device(device) || device >= 64)
        return NULL;
    pthread_mutex_lock(&pool_lock);
    struct emu_pool *p = current[device];
    pthread_mutex_unlock(&pool_lock);
    return p ? p : emu_pool_default(device);
}

EMU_API enum emu_err emu_pool_set_current(int device, struct emu_pool *p)
{
    if (!emu_device(device) || device >= 64)
        return EMU_ERR_INVALID_DEVICE;
    if (!emu_pool_resolve(p) || p->device != device)
        return EMU_ERR_INVALID_VALUE;
    pthread_mutex_lock(&pool_lock);
    current[device] = p;
    pthread_mutex_unlock(&pool_lock);
    return EMU_OK;
}

EMU_API enum emu_err emu_pool_create(int device, uint64_t max_bytes, struct emu_pool **out)
{
    if (!emu_device(device) || device >= 64)
        return EMU_ERR_INVALID_DEVICE;
    pthread_mutex_lock(&pool_lock);
    struct emu_pool *p = pool_new(device, max_bytes, 0);
    pthread_mutex_unlock(&pool_lock);
    if (!p)
        return EMU_ERR_OUT_OF_MEMORY;
    *out = p;
    return EMU_OK;
}

/* Give back idle reserve above keep bytes (pool_lock held); returns bytes released. */
static uint64_t trim_locked(struct emu_pool *p, uint64_t keep)
{
    uint64_t idle = p->reserved - p->used;
    if (idle <= keep)
        return 0;
    uint64_t give = (idle - keep) / POOL_GRANULE * POOL_GRANULE;
    if (p->used == 0 && keep == 0)
        give = idle; /* an empty pool gives back everything */
    if (!give)
        return 0;
    p->reserved -= give;
    emu_mem_release(p->device, give);
    return give;
}

EMU_API enum emu_err emu_pool_destroy(struct emu_pool *p)
{
    if (!emu_pool_resolve(p) || p->is_default)
        return EMU_ERR_INVALID_VALUE;
    pthread_mutex_lock(&pool_lock);
    /* Memory still allocated from it stays valid until freed; the idle
     * reserve goes back now. */
    trim_locked(p, 0);
    p->destroyed = 1;
    if (current[p->device] == p)
        current[p->device] = NULL;
    pthread_mutex_unlock(&pool_lock);
    return EMU_OK;
}

EMU_API enum emu_err emu_pool_alloc(struct emu_pool *p, uint64_t bytes, uint64_t *ptr)
{
    if (!emu_pool_resolve(p) || p->destroyed)
        return EMU_ERR_INVALID_VALUE;
    uint64_t charged = round_up(bytes ? bytes : 1, 512);
    pthread_mutex_lock(&pool_lock);
    enum emu_err e = EMU_OK;
    uint64_t idle = p->reserved - p->used, grow = 0;
    if (idle < charged) {
        grow = round_up(charged - idle, POOL_GRANULE);
        if (p->max_bytes && p->reserved + grow > p->max_bytes)
            grow = p->max_bytes > p->reserved ? p->max_bytes - p->reserved : 0;
        if (grow + idle < charged) {
            emu_note_oom();
            e = EMU_ERR_OUT_OF_MEMORY;
        } else {
            e = emu_mem_charge(p->device, grow);
            if (e != EMU_OK) {
                /* The device is full: what other pools keep idle goes back
                 * first, as the driver does before failing. */
                pthread_mutex_unlock(&pool_lock);
                emu_pool_release_idle(p->device, 0, 0);
                pthread_mutex_lock(&pool_lock);
                e = emu_mem_charge(p->device, grow);
            }
        }
    }
    if (e == EMU_OK) {
        p->reserved += grow;
        e = emu_mem_place(p->device, bytes, charged, MAYA_ALLOC_ASYNC, p->id, ptr);
        if (e == EMU_OK) {
            p->used += charged;
            p->used_high = MAYA_MAX(p->used_high, p->used);
            p->reserved_high = MAYA_MAX(p->reserved_high, p->reserved);
        } else {
            trim_locked(p, 0);
        }
    }
    pthread_mutex_unlock(&pool_lock);
    return e;
}

/* memory.c: an allocation of pool id was freed (its reserve stays). */
void emu_pool_freed(uint64_t id, uint64_t charged)
{
    pthread_mutex_lock(&pool_lock);
    for (struct emu_pool *p = pools; p; p = p->next)
        if (p->id == id) {
            p->used -= MAYA_MIN(charged, p->used);
            if (p->destroyed)
                trim_locked(p, 0);
            break;
        }
    pthread_mutex_unlock(&pool_lock);
}

EMU_API uint64_t emu_pool_release_idle(int device, uint32_t api, uint64_t t0)
{
    uint64_t released = 0;
    pthread_mutex_lock(&pool_lock);
    for (struct emu_pool *p = pools; p; p = p->next)
        if (device < 0 || p->device == device)
            released += trim_locked(p, p->release_threshold);
    pthread_mutex_unlock(&pool_lock);
    /* The trace hears of it as a FREE of pool memory with no address. */
    if (released && api && device >= 0)
        emu_trace_alloc(MAYA_REC_FREE, api, t0, 0, 0, released, MAYA_ALLOC_ASYNC, device, 0, 0);
    return released;
}

EMU_API enum emu_err emu_pool_trim(struct emu_pool *p, uint64_t keep, uint32_t api, uint64_t t0)
{
    if (!emu_pool_resolve(p))
        return EMU_ERR_INVALID_VALUE;
    pthread_mutex_lock(&pool_lock);
    uint64_t released = trim_locked(p, keep);
    pthread_mutex_unlock(&pool_lock);
    if (released && api)
        emu_trace_alloc(MAYA_REC_FREE, api, t0, 0, 0, released, MAYA_ALLOC_ASYNC, p->device, 0, 0);
    return EMU_OK;
}

/* One attribute as a 64-bit value (pool_lock held). */
static enum emu_err attr_locked(struct emu_pool *p, int attr, int set, uint64_t *value)
{
    switch (attr) {
    case 1: /* cudaMemPoolReuseFollowEventDependencies (int) */
    case 2: /* cudaMemPoolReuseAllowOpportunistic */
    case 3: /* cudaMemPoolReuseAllowInternalDependencies */ {
        int *f = attr == 1 ? &p->reuse_follow_events : attr == 2 ? &p->reuse_opportunistic : &p->reuse_internal;
        if (set)
            *f = *value != 0;
        else
            *value = (uint64_t)*f;
        return EMU_OK;
    }
    case 4: /* cudaMemPoolAttrReleaseThreshold */
        if (set)
            p->release_threshold = *value;
        else
            *value = p->release_threshold;
        return EMU_OK;
    case 5: /* ReservedMemCurrent (read-only) */
    case 7: /* UsedMemCurrent (read-only) */
        if (set)
            return EMU_ERR_INVALID_VALUE;
        *value = attr == 5 ? p->reserved : p->used;
        return EMU_OK;
    case 6: /* ReservedMemHigh: may only be reset to 0 */
    case 8: /* UsedMemHigh */ {
        uint64_t *h = attr == 6 ? &p->reserved_high : &p->used_high;
        if (set && *value != 0)
            return EMU_ERR_INVALID_VALUE;
        if (set)
            *h = attr == 6 ? p->reserved : p->used;
        else
            *value = *h;
        return EMU_OK;
    }
    }
    return EMU_ERR_INVALID_VALUE;
}

EMU_API enum emu_err emu_pool_attr(struct emu_pool *p, int attr, int set, void *value)
{
    if (!emu_pool_resolve(p) || !value)
        return EMU_ERR_INVALID_VALUE;
    /* The reuse flags are ints in the APIs, byte counts 64-bit. */
    int is_int = attr >= 1 && attr <= 3;
    uint64_t v = !set ? 0 : is_int ? (uint64_t)*(int *)value : *(uint64_t *)value;
    pthread_mutex_lock(&pool_lock);
    enum emu_err e = attr_locked(p, attr, set, &v);
    pthread_mutex_unlock(&pool_lock);
    if (e == EMU_OK && !set) {
        if (is_int)
            *(int *)value = (int)v;
        else
            *(uint64_t *)value = v;
    }
    return e;
}

EMU_API enum emu_err emu_pool_location(int loc_type, int id, int alloc_type, int *device)
{
    if (alloc_type != 1) /* pinned, the only kind pools have */
        return EMU_ERR_INVALID_VALUE;
    if (loc_type != 1) /* a device: host pools are not emulated */
        return EMU_ERR_NOT_SUPPORTED;
    if (!emu_device(id) || id >= 64)
        return EMU_ERR_INVALID_DEVICE;
    *device = id;
    return EMU_OK;
}

EMU_API enum emu_err emu_pool_access(struct emu_pool *p, int device, int set, int *flags)
{
    if (!emu_pool_resolve(p) || !flags)
        return EMU_ERR_INVALID_VALUE;
    if (!emu_device(device) || device >= 64)
        return EMU_ERR_INVALID_DEVICE;
    if (set && (*flags < 0 || *flags > 3 || *flags == 2))
        return EMU_ERR_INVALID_VALUE;
    pthread_mutex_lock(&pool_lock);
    enum emu_err e = EMU_OK;
    if (set && device == p->device && *flags != 3)
        e = EMU_ERR_INVALID_VALUE; /* its own device always has read-write access */
    else if (set)
        p->access[device] = (unsigned char)*flags;
    else
        *flags = p->access[device];
    pthread_mutex_unlock(&pool_lock);
    return e;
}

/* cudaMemAccessDesc and CUmemAccessDesc alike. */
struct access_desc {
    int loc_type;
    int id;
    int flags;
};

EMU_API enum emu_err emu_pool_set_access(struct emu_pool *p, const void *descs, size_t count)
{
    const struct access_desc *d = descs;
    if (!emu_pool_resolve(p) || (count && !d))
        return EMU_ERR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        int f = d[i].flags;
        enum emu_err e = d[i].loc_type != 1 ? EMU_ERR_INVALID_VALUE : emu_pool_access(p, d[i].id, 1, &f);
        if (e != EMU_OK)
            return e;
    }
    return EMU_OK;
}

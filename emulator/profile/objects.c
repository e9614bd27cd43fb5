/* The program's CUDA objects as the trace names them: streams, events,
 * kernels and allocations, each found from the real handle or pointer the
 * program holds. The core (private to this library) gives them their trace
 * ids and writes their definitions, as it does under emulation.
 *
 * Each table is a hash map under its own mutex: a lookup is O(1) and
 * costs a lock (about 20 ns uncontended).
 */
#define _GNU_SOURCE
#include "prof.h"

#include <pthread.h>
#include <stdlib.h>

#include "maya/map.h"

static struct prof_table streams = PROF_TABLE_INIT, events = PROF_TABLE_INIT, modules = PROF_TABLE_INIT,
                         kernels = PROF_TABLE_INIT, allocs = PROF_TABLE_INIT;

uint64_t prof_table_get(struct prof_table *t, const void *key)
{
    pthread_mutex_lock(&t->lock);
    uint64_t *v = maya_map_get(&t->map, (uint64_t)(uintptr_t)key, 0);
    uint64_t r = v ? *v : 0;
    pthread_mutex_unlock(&t->lock);
    return r;
}

void prof_table_put(struct prof_table *t, const void *key, uint64_t value)
{
    pthread_mutex_lock(&t->lock);
    uint64_t *v = maya_map_put(&t->map, (uint64_t)(uintptr_t)key, 0, NULL);
    if (v)
        *v = value;
    pthread_mutex_unlock(&t->lock);
}

uint64_t prof_table_take(struct prof_table *t, const void *key)
{
    pthread_mutex_lock(&t->lock);
    uint64_t *v = maya_map_get(&t->map, (uint64_t)(uintptr_t)key, 0);
    uint64_t r = v ? *v : 0;
    if (v)
        maya_map_del(&t->map, (uint64_t)(uintptr_t)key, 0);
    pthread_mutex_unlock(&t->lock);
    return r;
}

/* ---- streams ---- */

static struct emu_stream *define_stream(cudaStream_t s, int device, unsigned flags, int priority)
{
    struct emu_stream *es;
    if (emu_stream_create(device, flags & cudaStreamNonBlocking ? MAYA_STREAM_NON_BLOCKING : 0, priority, &es) !=
        EMU_OK)
        return NULL;
    prof_table_put(&streams, s, (uint64_t)(uintptr_t)es);
    return es;
}

struct emu_stream *prof_stream_new(cudaStream_t s, unsigned flags, int priority)
{
    return define_stream(s, emu_current_device(), flags, priority);
}

struct emu_stream *prof_stream(cudaStream_t s, int per_thread)
{
    uintptr_t h = (uintptr_t)s;
    if (h <= 2) /* NULL, cudaStreamLegacy, cudaStreamPerThread: the device's own */
        return emu_stream_resolve(s, per_thread);
    struct emu_stream *es = (struct emu_stream *)(uintptr_t)prof_table_get(&streams, s);
    if (es)
        return es;
    /* First sight of a stream the program made (or a library made for it):
     * ask the real runtime what it is. */
    cudaError_t (*get_dev)(cudaStream_t, int *) = PROF_REAL(prof_cudart, cudaStreamGetDevice);
    cudaError_t (*get_flags)(cudaStream_t, unsigned *) = PROF_REAL(prof_cudart, cudaStreamGetFlags);
    cudaError_t (*get_prio)(cudaStream_t, int *) = PROF_REAL(prof_cudart, cudaStreamGetPriority);
    int dev = emu_current_device(), prio = 0;
    unsigned flags = 0;
    if (get_dev)
        get_dev(s, &dev);
    if (get_flags)
        get_flags(s, &flags);
    if (get_prio)
        get_prio(s, &prio);
    es = define_stream(s, dev, flags, prio);
    return es ? es : emu_stream_resolve(NULL, per_thread);
}

void prof_stream_forget(cudaStream_t s)
{
    struct emu_stream *es = (struct emu_stream *)(uintptr_t)prof_table_take(&streams, s);
    if (es)
        emu_stream_destroy(es);
}

/* ---- events ---- */

struct emu_event *prof_event(cudaEvent_t e, unsigned flags, int create)
{
    struct emu_event *ee = (struct emu_event *)(uintptr_t)prof_table_get(&events, e);
    if (ee && !create)
        return ee;
    if (emu_event_create(flags, &ee) != EMU_OK)
        return NULL;
    prof_table_put(&events, e, (uint64_t)(uintptr_t)ee);
    return ee;
}

void prof_event_forget(cudaEvent_t e)
{
    struct emu_event *ee = (struct emu_event *)(uintptr_t)prof_table_take(&events, e);
    if (ee)
        emu_event_destroy(ee);
}

/* ---- kernels ---- */

void prof_module_register(void **real_handle, const void *image)
{
    struct emu_module *m = emu_module_new(image, 0, 0, MAYA_KSRC_FATBIN);
    if (m)
        prof_table_put(&modules, real_handle, (uint64_t)(uintptr_t)m);
}

void prof_kernel_register(void **real_handle, const void *host_fun, const char *mangled, int thread_limit)
{
    struct emu_module *m = (struct emu_module *)(uintptr_t)prof_table_get(&modules, real_handle);
    struct emu_kernel *k = emu_kernel_add(m, mangled, host_fun);
    if (k && thread_limit > 0)
        k->max_threads_per_block = thread_limit;
}

void prof_kernel_handle(const void *handle, const void *host_fun)
{
    struct emu_kernel *k = emu_kernel_by_host_fun(host_fun);
    if (k && handle)
        prof_table_put(&kernels, handle, (uint64_t)(uintptr_t)k);
}

struct emu_kernel *prof_kernel(const void *func)
{
    struct emu_kernel *k = emu_kernel_by_host_fun(func);
    if (k)
        return k;
    k = (struct emu_kernel *)(uintptr_t)prof_table_get(&kernels, func);
    if (k)
        return k;
    /* A kernel the registrations did not show (cudaLibraryGetKernel, a
     * handle from another library): named by the real runtime, its
     * parameters unknown. */
    cudaError_t (*get_name)(const char **, const void *) = PROF_REAL(prof_cudart, cudaFuncGetName);
    const char *name = NULL;
    if (!get_name || get_name(&name, func) != cudaSuccess || !name)
        name = "?";
    k = emu_kernel_add(NULL, name, NULL);
    if (k)
        prof_table_put(&kernels, func, (uint64_t)(uintptr_t)k);
    return k;
}

/* ---- modules and kernels of the driver ---- */

void prof_module_load(const void *real, const void *image, int source)
{
    size_t bytes = 0;
    if (!real || !image || emu_image_probe(image, 0, &bytes) == EMU_IMAGE_UNKNOWN)
        return;
    struct emu_module *m = emu_module_new(image, bytes, 1, source);
    if (!m)
        return;
    /* a module left behind by a handle the driver reuses goes */
    emu_module_free((struct emu_module *)(uintptr_t)prof_table_take(&modules, real));
    prof_table_put(&modules, real, (uint64_t)(uintptr_t)m);
}

void prof_module_unload(const void *real)
{
    emu_module_free((struct emu_module *)(uintptr_t)prof_table_take(&modules, real));
}

void prof_module_alias(const void *real, const void *known)
{
    uint64_t m = prof_table_get(&modules, known);
    if (real && m)
        prof_table_put(&modules, real, m);
}

struct emu_kernel *prof_module_kernel(const void *real_module, const char *name, const void *handle)
{
    struct emu_module *m = real_module ? (struct emu_module *)(uintptr_t)prof_table_get(&modules, real_module)
                                       : NULL;
    struct emu_kernel *k = m ? emu_kernel_by_name(m, name) : NULL;
    if (!k)
        k = emu_kernel_add(m, name, NULL);
    if (k && handle)
        prof_table_put(&kernels, handle, (uint64_t)(uintptr_t)k);
    return k;
}

void prof_kernel_alias(const void *handle, const void *known)
{
    uint64_t k = prof_table_get(&kernels, known);
    if (handle && k)
        prof_table_put(&kernels, handle, k);
}

struct emu_kernel *prof_kernel_known(const void *handle)
{
    return (struct emu_kernel *)(uintptr_t)prof_table_get(&kernels, handle);
}

/* ---- allocations ---- */

/* Packed as bytes (48 bits), kind (8), device + 1 (8). */
void prof_alloc_note(uint64_t ptr, uint64_t bytes, int kind, int device)
{
    uint64_t v = (bytes & ((1ull << 48) - 1)) | (uint64_t)(kind & 0xff) << 48 | (uint64_t)((device + 1) & 0xff) << 56;
    prof_table_put(&allocs, (const void *)(uintptr_t)ptr, v);
    if (device >= 0)
        emu_mem_charge(device, bytes);
}

int prof_alloc_take(uint64_t ptr, uint64_t *bytes, int *kind, int *device)
{
    pthread_mutex_lock(&allocs.lock);
    uint64_t *v = maya_map_get(&allocs.map, ptr, 0);
    uint64_t x = v ? *v : 0;
    if (v)
        maya_map_del(&allocs.map, ptr, 0);
    pthread_mutex_unlock(&allocs.lock);
    if (!v)
        return 0;
    *bytes = x & ((1ull << 48) - 1);
    *kind = (int)(x >> 48 & 0xff);
    *device = (int)(x >> 56) - 1;
    if (*device >= 0)
        emu_mem_release(*device, *bytes);
    return 1;
}

/* ---- pointers ---- */

int prof_ptr_device(const void *p, int *pinned)
{
    cudaError_t (*get)(struct cudaPointerAttributes *, const void *) = PROF_REAL(prof_cudart, cudaPointerGetAttributes);
    struct cudaPointerAttributes a = { 0 };
    *pinned = 0;
    if (!get || get(&a, p) != cudaSuccess) {
        cudaError_t (*clear)(void) = PROF_REAL(prof_cudart, cudaGetLastError);
        if (clear)
            clear(); /* our question must not become the program's error */
        return -1;
    }
    switch (a.type) {
    case cudaMemoryTypeDevice:
        return a.device;
    case cudaMemoryTypeManaged:
        *pinned = 1;
        return a.device;
    case cudaMemoryTypeHost:
        *pinned = 1;
        return -1;
    default:
        return -1;
    }
}

/* __device__, __constant__ and __managed__ variables: nvcc registers each
 * with the address of its host shadow; the program names it by that address
 * (cudaMemcpyToSymbol(var, ...), cudaGetSymbolAddress(&p, var)).
 *
 * A variable gets device memory on first use (registration happens before
 * main and must not start the emulator), counted against the device's
 * capacity like a module's globals. Its initial value is read from the
 * cubin when it is no larger than the copy threshold; larger ones start as
 * zeros (the memory is untouched, so costs nothing).
 *
 * Variables are few; a list searched linearly under a mutex is enough. */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

struct var {
    const void *host;            /* host shadow (or, managed: the host pointer variable) */
    struct emu_module *module;   /* the fat binary it was registered with */
    char *name;
    size_t bytes;
    int managed;
    void **managed_ptr;          /* managed: where the program reads the address */
    uint64_t dev;                /* 0 until first use */
    int device;
    struct var *next;
};

static pthread_mutex_t var_lock = PTHREAD_MUTEX_INITIALIZER;
static struct var *vars;

static void add_var(void **handle, const void *host, const char *name, size_t size, int managed,
                    void **managed_ptr)
{
    struct var *v = calloc(1, sizeof *v);
    if (!v)
        return;
    v->module = handle ? handle[0] : NULL;
    v->host = host;
    v->name = strdup(name ? name : "?");
    v->bytes = size;
    v->managed = managed;
    v->managed_ptr = managed_ptr;
    pthread_mutex_lock(&var_lock);
    v->next = vars;
    vars = v;
    pthread_mutex_unlock(&var_lock);
}

void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                       size_t size, int constant, int global)
{
    add_var(fatCubinHandle, hostVar, deviceName, size, 0, NULL);
}

void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant, int global)
{
    add_var(fatCubinHandle, hostVarPtrAddress, deviceName, size, 1, hostVarPtrAddress);
}

/* Memory for v (var_lock held, emulator started). */
static cudaError_t materialize(struct var *v)
{
    if (v->dev)
        return cudaSuccess;
    int dev = rt_device();
    uint64_t t0 = emu_now();
    int kind = v->managed ? MAYA_ALLOC_MANAGED : MAYA_ALLOC_DEVICE;
    uint64_t p = 0;
    cudaError_t e = rt_error(emu_mem_alloc(dev, v->bytes ? v->bytes : 1, kind, 0, &p));
    emu_trace_alloc(MAYA_REC_ALLOC, EMU_API_ID("__cudaRegisterVar"), t0, e, p, v->bytes, kind, dev, 0, 0);
    if (e != cudaSuccess)
        return e;
    v->dev = p;
    v->device = dev;
    if (v->managed)
        *v->managed_ptr = (void *)(uintptr_t)p;
    /* The initial value is in the cubin (.nv.global.init, .nv.constant3):
     * written when small enough to be worth the memory. */
    if (v->bytes <= emu_config()->copy_threshold && v->module)
        emu_image_global_init(v->module, v->name, (void *)(uintptr_t)p, v->bytes);
    return cudaSuccess;
}

cudaError_t rt_symbol(const void *symbol, void **dev, size_t *bytes)
{
    if (!symbol)
        return cudaErrorInvalidSymbol;
    pthread_mutex_lock(&var_lock);
    struct var *v = vars;
    while (v && v->host != symbol)
        v = v->next;
    cudaError_t e = v ? materialize(v) : cudaErrorInvalidSymbol;
    if (e == cudaSuccess) {
        *dev = (void *)(uintptr_t)v->dev;
        *bytes = v->bytes;
    }
    pthread_mutex_unlock(&var_lock);
    return e;
}

/* Host code touching a __managed__ variable first calls this (through
 * nvcc's generated accessors): the variables get their memory. */
char __cudaInitModule(void **fatCubinHandle)
{
    if (emu_enter() != EMU_OK)
        return 0;
    pthread_mutex_lock(&var_lock);
    for (struct var *v = vars; v; v = v->next)
        if (v->managed)
            materialize(v);
    pthread_mutex_unlock(&var_lock);
    return fatCubinHandle != NULL;
}

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    RT_ENTER();
    void *d;
    size_t n;
    if (!devPtr)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = rt_symbol(symbol, &d, &n);
    if (e == cudaSuccess)
        *devPtr = d;
    RT_RETURN(e);
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    RT_ENTER();
    void *d;
    size_t n;
    if (!size)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = rt_symbol(symbol, &d, &n);
    if (e == cudaSuccess)
        *size = n;
    RT_RETURN(e);
}

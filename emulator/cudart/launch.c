/* Kernel registration (what nvcc's generated code calls before main) and
 * kernel launches. Registration never starts the emulator: a program that
 * only registers kernels and never launches one leaves no trace. */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

#define FATBIN_WRAPPER_MAGIC 0x466243B1

struct fatbin_wrapper {
    int magic;
    int version;
    const void *data;
    void *filename_or_fatbins;
};

/* The handle nvcc keeps is a real allocation (its atexit code hands it back
 * to __cudaUnregisterFatBinary); slot 0 holds our module. */
void **__cudaRegisterFatBinary(void *fatCubin)
{
    void **handle = calloc(4, sizeof(void *));
    if (!handle)
        return NULL;
    const struct fatbin_wrapper *w = fatCubin;
    const void *image = w && w->magic == FATBIN_WRAPPER_MAGIC ? w->data : fatCubin;
    handle[0] = emu_module_new(image, 0, 0, MAYA_KSRC_FATBIN);
    return handle;
}

void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    (void)fatCubinHandle;
}

void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    /* Kernels stay known until exit (the trace may still name them); the
     * handle itself is released. */
    free(fatCubinHandle);
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize)
{
    struct emu_module *m = fatCubinHandle ? fatCubinHandle[0] : NULL;
    struct emu_kernel *k = emu_kernel_add(m, deviceName ? deviceName : deviceFun, hostFun);
    if (k && thread_limit > 0)
        k->max_threads_per_block = thread_limit;
}

char __cudaInitModule(void **fatCubinHandle)
{
    return fatCubinHandle != NULL;
}

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream)
{
    struct emu_thread *t = emu_thread();
    if (t->nlaunch_cfg >= (int)(sizeof t->launch_cfg / sizeof t->launch_cfg[0]))
        return 1;
    typeof(t->launch_cfg[0]) *c = &t->launch_cfg[t->nlaunch_cfg++];
    c->grid[0] = gridDim.x, c->grid[1] = gridDim.y, c->grid[2] = gridDim.z;
    c->block[0] = blockDim.x, c->block[1] = blockDim.y, c->block[2] = blockDim.z;
    c->smem = sharedMem;
    c->stream = stream;
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
    struct emu_thread *t = emu_thread();
    if (t->nlaunch_cfg <= 0)
        return cudaErrorMissingConfiguration;
    typeof(t->launch_cfg[0]) *c = &t->launch_cfg[--t->nlaunch_cfg];
    *gridDim = (dim3){ c->grid[0], c->grid[1], c->grid[2] };
    *blockDim = (dim3){ c->block[0], c->block[1], c->block[2] };
    *sharedMem = c->smem;
    *(cudaStream_t *)stream = (cudaStream_t)c->stream;
    return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *fun)
{
    struct emu_kernel *k = emu_kernel_by_host_fun(fun);
    if (!kernel)
        return cudaErrorInvalidValue;
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    *kernel = (cudaKernel_t)k;
    return cudaSuccess;
}

/* A kernel named by host stub, cudaKernel_t or cudaFunction_t. */
static struct emu_kernel *find_kernel(const void *func)
{
    struct emu_kernel *k = emu_kernel_by_host_fun(func);
    return k ? k : emu_kernel_resolve(func);
}

cudaError_t rt_launch(uint32_t api, uint64_t t0, struct emu_kernel *k, dim3 grid, dim3 block,
                      void **args, size_t smem, cudaStream_t stream, int per_thread,
                      const unsigned cluster[3], uint32_t flags)
{
    struct emu_stream *s = rt_stream(stream, per_thread);
    cudaError_t e = cudaSuccess;
    if (!k)
        e = cudaErrorInvalidDeviceFunction;
    else if (!s)
        e = cudaErrorInvalidResourceHandle;
    struct emu_launch l = {
        .kernel = k,
        .grid = { grid.x, grid.y, grid.z },
        .block = { block.x, block.y, block.z },
        .smem_bytes = (uint32_t)smem,
        .stream = s,
        .flags = flags,
    };
    if (cluster)
        memcpy(l.cluster, cluster, sizeof l.cluster);
    if (e == cudaSuccess)
        e = rt_error(emu_launch_check(&l));
    if (e != cudaSuccess) {
        emu_trace_call(api, t0, e, s ? s->id : 0, 0);
        return rt_note(e);
    }
    emu_trace_launch(api, t0, cudaSuccess, &l, args, NULL, 0, 0);
    return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                               size_t sharedMem, cudaStream_t stream)
{
    RT_ENTER();
    return rt_launch(RT_API(), rt_t0, emu_kernel_resolve(kernel), gridDim, blockDim, args, sharedMem,
                     stream, 0, NULL, 0);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream)
{
    RT_ENTER();
    return rt_launch(RT_API(), rt_t0, emu_kernel_resolve(kernel), gridDim, blockDim, args, sharedMem,
                     stream, 1, NULL, 0);
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                             size_t sharedMem, cudaStream_t stream)
{
    RT_ENTER();
    return rt_launch(RT_API(), rt_t0, find_kernel(func), gridDim, blockDim, args, sharedMem, stream, 0,
                     NULL, 0);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                  size_t sharedMem, cudaStream_t stream)
{
    RT_ENTER();
    return rt_launch(RT_API(), rt_t0, find_kernel(func), gridDim, blockDim, args, sharedMem, stream, 1,
                     NULL, 0);
}

static cudaError_t launch_ex(uint32_t api, uint64_t t0, const cudaLaunchConfig_t *config,
                             const void *func, void **args, int per_thread)
{
    if (!config)
        return rt_note(cudaErrorInvalidValue);
    unsigned cluster[3] = { 0, 0, 0 };
    uint32_t flags = 0;
    for (unsigned i = 0; i < config->numAttrs; i++) {
        const cudaLaunchAttribute *a = &config->attrs[i];
        if (a->id == cudaLaunchAttributeClusterDimension) {
            cluster[0] = a->val.clusterDim.x;
            cluster[1] = a->val.clusterDim.y;
            cluster[2] = a->val.clusterDim.z;
        } else if (a->id == cudaLaunchAttributeCooperative && a->val.cooperative) {
            flags |= MAYA_LAUNCH_COOPERATIVE;
        }
    }
    return rt_launch(api, t0, find_kernel(func), config->gridDim, config->blockDim, args,
                     config->dynamicSmemBytes, config->stream, per_thread, cluster, flags);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    RT_ENTER();
    return launch_ex(RT_API(), rt_t0, config, func, args, 0);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    RT_ENTER();
    return launch_ex(RT_API(), rt_t0, config, func, args, 1);
}

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                        size_t sharedMem, cudaStream_t stream)
{
    RT_ENTER();
    return rt_launch(RT_API(), rt_t0, find_kernel(func), gridDim, blockDim, args, sharedMem, stream, 0,
                     NULL, MAYA_LAUNCH_COOPERATIVE);
}

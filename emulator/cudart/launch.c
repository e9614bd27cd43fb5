/* Kernel registration (what nvcc's generated code calls before main),
 * kernel launches, function attributes and occupancy. Registration never
 * starts the emulator: a program that only registers kernels and never
 * calls CUDA leaves no trace. */
#include "rt.h"

#include <cuda.h>
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

struct emu_kernel *rt_find_kernel(const void *func)
{
    struct emu_kernel *k = emu_kernel_by_host_fun(func);
    return k ? k : emu_kernel_resolve(func);
}

/* ---- launches ---- */

cudaError_t rt_launch(uint32_t api, uint64_t t0, struct emu_kernel *k, dim3 grid, dim3 block,
                      void **args, size_t smem, cudaStream_t stream, int per_thread,
                      const unsigned cluster[3], uint32_t flags)
{
    struct emu_stream *s = NULL;
    cudaError_t e = rt_issue_stream(stream, per_thread, &s);
    if (!k && e == cudaSuccess)
        e = cudaErrorInvalidDeviceFunction;
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
    if (e == cudaSuccess) {
        emu_kernel_prepare(k); /* its limits (launch bounds, shared memory) are checked */
        e = rt_error(emu_launch_check(&l));
    }
    if (__builtin_expect(e != cudaSuccess, 0)) {
        emu_trace_call(api, t0, e, s ? s->id : 0, 0);
        return rt_note(e);
    }
    emu_trace_launch(api, t0, cudaSuccess, &l, args, NULL, 0, 0);
    if (__builtin_expect(emu_config()->fault_launch != 0, 0) && !emu_stream_capturing(s))
        rt_count_launch();
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
    return rt_launch(RT_API(), rt_t0, rt_find_kernel(func), gridDim, blockDim, args, sharedMem, stream, 0,
                     NULL, 0);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                  size_t sharedMem, cudaStream_t stream)
{
    RT_ENTER();
    return rt_launch(RT_API(), rt_t0, rt_find_kernel(func), gridDim, blockDim, args, sharedMem, stream, 1,
                     NULL, 0);
}

static cudaError_t launch_ex(uint32_t api, uint64_t t0, const cudaLaunchConfig_t *config,
                             const void *func, void **args, int per_thread)
{
    if (!config) {
        emu_trace_call(api, t0, cudaErrorInvalidValue, 0, 0);
        return rt_note(cudaErrorInvalidValue);
    }
    unsigned cluster[3] = { 0, 0, 0 };
    uint32_t flags = 0;
    for (unsigned i = 0; i < config->numAttrs && config->attrs; i++) {
        const cudaLaunchAttribute *a = &config->attrs[i];
        if (a->id == cudaLaunchAttributeClusterDimension) {
            cluster[0] = a->val.clusterDim.x;
            cluster[1] = a->val.clusterDim.y;
            cluster[2] = a->val.clusterDim.z;
        } else if (a->id == cudaLaunchAttributeCooperative && a->val.cooperative) {
            flags |= MAYA_LAUNCH_COOPERATIVE;
        }
    }
    return rt_launch(api, t0, rt_find_kernel(func), config->gridDim, config->blockDim, args,
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
    return rt_launch(RT_API(), rt_t0, rt_find_kernel(func), gridDim, blockDim, args, sharedMem, stream, 0,
                     NULL, MAYA_LAUNCH_COOPERATIVE);
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                             size_t sharedMem, cudaStream_t stream)
{
    RT_ENTER();
    return rt_launch(RT_API(), rt_t0, rt_find_kernel(func), gridDim, blockDim, args, sharedMem, stream, 1,
                     NULL, MAYA_LAUNCH_COOPERATIVE);
}

/* ---- functions: attributes and names ---- */

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    RT_ENTER();
    struct emu_kernel *k = rt_find_kernel(func);
    if (!attr)
        RT_RETURN(cudaErrorInvalidValue);
    if (!k)
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    static const int attrs[] = {
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_PTX_VERSION, CU_FUNC_ATTRIBUTE_BINARY_VERSION,
        CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET,
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
        CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
    };
    int v[sizeof attrs / sizeof attrs[0]];
    int dev = rt_device();
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        cudaError_t e = rt_error(emu_kernel_attribute(k, dev, attrs[i], &v[i]));
        if (e != cudaSuccess)
            RT_RETURN(e);
    }
    memset(attr, 0, sizeof *attr);
    attr->sharedSizeBytes = (size_t)v[0];
    attr->constSizeBytes = (size_t)v[1];
    attr->localSizeBytes = (size_t)v[2];
    attr->maxThreadsPerBlock = v[3];
    attr->numRegs = v[4];
    attr->ptxVersion = v[5];
    attr->binaryVersion = v[6];
    attr->cacheModeCA = v[7];
    attr->maxDynamicSharedSizeBytes = v[8];
    attr->preferredShmemCarveout = v[9];
    attr->clusterDimMustBeSet = v[10];
    attr->requiredClusterWidth = v[11];
    attr->requiredClusterHeight = v[12];
    attr->requiredClusterDepth = v[13];
    attr->clusterSchedulingPolicyPreference = v[14];
    attr->nonPortableClusterSizeAllowed = v[15];
    RT_RETURN(cudaSuccess);
}

/* cudaFuncAttribute numbers are CUfunction_attribute's from 8 on. */
static int func_attr(enum cudaFuncAttribute attr)
{
    switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize: return CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    case cudaFuncAttributePreferredSharedMemoryCarveout: return CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
    case cudaFuncAttributeClusterDimMustBeSet: return CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET;
    case cudaFuncAttributeRequiredClusterWidth: return CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH;
    case cudaFuncAttributeRequiredClusterHeight: return CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT;
    case cudaFuncAttributeRequiredClusterDepth: return CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH;
    case cudaFuncAttributeNonPortableClusterSizeAllowed: return CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED;
    case cudaFuncAttributeClusterSchedulingPolicyPreference:
        return CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
    default: return -1;
    }
}

static cudaError_t set_attribute(struct emu_kernel *k, enum cudaFuncAttribute attr, int value, int device)
{
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    int a = func_attr(attr);
    return a < 0 ? cudaErrorInvalidValue : rt_error(emu_kernel_set_attribute(k, device, a, value));
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    RT_ENTER();
    RT_RETURN(set_attribute(rt_find_kernel(func), attr, value, rt_device()));
}

cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel, enum cudaFuncAttribute attr, int value, int device)
{
    RT_ENTER();
    if (!emu_device(device))
        RT_RETURN(cudaErrorInvalidDevice);
    RT_RETURN(set_attribute(emu_kernel_resolve(kernel), attr, value, device));
}

/* The cache and shared-memory bank preferences do not change what an
 * emulated program does; they are accepted and checked. */
cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
    RT_ENTER();
    if (!rt_find_kernel(func))
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    RT_RETURN((unsigned)cacheConfig <= cudaFuncCachePreferEqual ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig config)
{
    RT_ENTER();
    if (!rt_find_kernel(func))
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    RT_RETURN((unsigned)config <= cudaSharedMemBankSizeEightByte ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache cacheConfig)
{
    RT_ENTER();
    RT_RETURN((unsigned)cacheConfig <= cudaFuncCachePreferEqual ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *pCacheConfig)
{
    RT_ENTER();
    if (!pCacheConfig)
        RT_RETURN(cudaErrorInvalidValue);
    *pCacheConfig = cudaFuncCachePreferNone;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    RT_ENTER();
    struct emu_kernel *k = rt_find_kernel(func);
    if (!name)
        RT_RETURN(cudaErrorInvalidValue);
    if (!k)
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    *name = k->mangled; /* the real runtime also returns the mangled name */
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaFuncGetParamInfo(const void *func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    RT_ENTER();
    struct emu_kernel *k = rt_find_kernel(func);
    if (!k)
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    emu_kernel_prepare(k);
    if (!k->layout_known || paramIndex >= k->nparams)
        RT_RETURN(cudaErrorInvalidValue);
    if (paramOffset)
        *paramOffset = k->params[paramIndex].offset;
    if (paramSize)
        *paramSize = k->params[paramIndex].bytes;
    RT_RETURN(cudaSuccess);
}

/* cudaKernel_t and cudaFunction_t are both the struct emu_kernel. */
static cudaError_t kernel_handle(const void *func, void **out)
{
    struct emu_kernel *k = rt_find_kernel(func);
    if (!out)
        return cudaErrorInvalidValue;
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    *out = k;
    return cudaSuccess;
}

cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
    RT_ENTER();
    RT_RETURN(kernel_handle(entryFuncAddr, (void **)kernelPtr));
}

cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
    RT_ENTER();
    RT_RETURN(kernel_handle(symbolPtr, (void **)functionPtr));
}

/* ---- occupancy ---- */

static cudaError_t occupancy(const void *func, int block, size_t smem, unsigned flags, int *out)
{
    struct emu_kernel *k = rt_find_kernel(func);
    if (!out || block <= 0 || (flags & ~(unsigned)cudaOccupancyDisableCachingOverride))
        return cudaErrorInvalidValue;
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    emu_kernel_prepare(k);
    *out = emu_occupancy_blocks(k, rt_device(), block, smem);
    return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                          size_t dynamicSMemSize)
{
    RT_ENTER();
    RT_RETURN(occupancy(func, blockSize, dynamicSMemSize, 0, numBlocks));
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags)
{
    RT_ENTER();
    RT_RETURN(occupancy(func, blockSize, dynamicSMemSize, flags, numBlocks));
}

/* The most dynamic shared memory a block can have with numBlocks blocks
 * resident per SM: the largest amount that still gives that occupancy. */
cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, const void *func, int numBlocks,
                                                      int blockSize)
{
    RT_ENTER();
    struct emu_kernel *k = rt_find_kernel(func);
    if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0)
        RT_RETURN(cudaErrorInvalidValue);
    if (!k)
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    emu_kernel_prepare(k);
    int dev = rt_device();
    const struct cudaDeviceProp *p = &emu_device(dev)->prop;
    size_t lo = 0, hi = p->sharedMemPerBlockOptin;
    if (emu_occupancy_blocks(k, dev, blockSize, 0) < numBlocks) {
        *dynamicSmemSize = 0;
        RT_RETURN(cudaSuccess);
    }
    while (lo < hi) { /* binary search in 128-byte steps is overkill; bytes are exact */
        size_t mid = lo + (hi - lo + 1) / 2;
        if (emu_occupancy_blocks(k, dev, blockSize, mid) >= numBlocks)
            lo = mid;
        else
            hi = mid - 1;
    }
    *dynamicSmemSize = lo;
    RT_RETURN(cudaSuccess);
}

static unsigned cluster_from_config(const cudaLaunchConfig_t *c)
{
    for (unsigned i = 0; c && i < c->numAttrs && c->attrs; i++)
        if (c->attrs[i].id == cudaLaunchAttributeClusterDimension)
            return c->attrs[i].val.clusterDim.x * c->attrs[i].val.clusterDim.y * c->attrs[i].val.clusterDim.z;
    return 0;
}

/* Portable cluster size is 8 blocks; 16 with the non-portable attribute on
 * GPUs that have clusters (compute capability 9.0 and later). */
cudaError_t cudaOccupancyMaxPotentialClusterSize(int *clusterSize, const void *func,
                                                 const cudaLaunchConfig_t *launchConfig)
{
    RT_ENTER();
    struct emu_kernel *k = rt_find_kernel(func);
    if (!clusterSize || !launchConfig)
        RT_RETURN(cudaErrorInvalidValue);
    if (!k)
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    const struct cudaDeviceProp *p = &emu_device(rt_device())->prop;
    *clusterSize = p->major < 9 ? 0 : k->non_portable_cluster ? 16 : 8;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaOccupancyMaxActiveClusters(int *numClusters, const void *func, const cudaLaunchConfig_t *launchConfig)
{
    RT_ENTER();
    struct emu_kernel *k = rt_find_kernel(func);
    if (!numClusters || !launchConfig)
        RT_RETURN(cudaErrorInvalidValue);
    if (!k)
        RT_RETURN(cudaErrorInvalidDeviceFunction);
    emu_kernel_prepare(k);
    int dev = rt_device();
    const struct cudaDeviceProp *p = &emu_device(dev)->prop;
    unsigned cluster = cluster_from_config(launchConfig);
    if (!cluster)
        cluster = (unsigned)MAYA_MAX(k->cluster_dims[0], 1) * (unsigned)MAYA_MAX(k->cluster_dims[1], 1) *
                  (unsigned)MAYA_MAX(k->cluster_dims[2], 1);
    int block = (int)(launchConfig->blockDim.x * launchConfig->blockDim.y * launchConfig->blockDim.z);
    int per_sm = emu_occupancy_blocks(k, dev, block, launchConfig->dynamicSmemBytes);
    if (p->major < 9 || cluster == 0 || per_sm <= 0) {
        *numClusters = 0;
        RT_RETURN(cluster > 1 && p->major < 9 ? cudaErrorInvalidClusterSize : cudaSuccess);
    }
    /* A cluster's blocks share a GPC: count whole clusters over the GPU. */
    *numClusters = (int)((uint64_t)per_sm * (uint64_t)p->multiProcessorCount / cluster);
    RT_RETURN(cudaSuccess);
}

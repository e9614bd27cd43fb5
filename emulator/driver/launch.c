/* Kernel launches (cuLaunchKernel with kernelParams or a packed parameter
 * buffer, cuLaunchKernelEx with its attributes, cooperative launches) and
 * the occupancy calculator. A launch is checked as the driver checks it and
 * traced as MAYA_REC_LAUNCH with MAYA_LAUNCH_DRIVER; nothing runs. */
#include "drv.h"

#include <string.h>

#define PORTABLE_CLUSTER_MAX 8
#define NON_PORTABLE_CLUSTER_MAX 16

/* Cluster dimensions as the hardware allows them. */
static CUresult check_cluster(const struct drv_launch_req *r, const struct emu_kernel *k, int dev)
{
    unsigned c[3];
    memcpy(c, r->cluster, sizeof c);
    if (!c[0] && k->cluster_dims[0])
        for (int i = 0; i < 3; i++)
            c[i] = (unsigned)k->cluster_dims[i];
    if (!c[0] && !c[1] && !c[2])
        return CUDA_SUCCESS;
    if (emu_device(dev)->prop.major < 9)
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    uint64_t size = 1;
    for (int i = 0; i < 3; i++) {
        if (!c[i] || r->grid[i] % c[i])
            return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        size *= c[i];
    }
    if (size > (k->non_portable_cluster ? NON_PORTABLE_CLUSTER_MAX : PORTABLE_CLUSTER_MAX))
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    return CUDA_SUCCESS;
}

static CUresult launch(uint32_t api, uint64_t t0, const struct drv_launch_req *r)
{
    struct emu_kernel *k = drv_kernel(r->f);
    struct emu_stream *s = drv_stream(r->stream, r->per_thread);
    int dev = drv_ctx_device();
    const void *buf = NULL;
    size_t buf_bytes = 0;
    CUresult e = CUDA_SUCCESS;
    if (dev < 0)
        e = CUDA_ERROR_INVALID_CONTEXT;
    else if (!k)
        e = CUDA_ERROR_INVALID_HANDLE;
    else if (!s)
        e = CUDA_ERROR_INVALID_HANDLE;
    else
        e = drv_error(emu_launch_args(k, r->params, r->extra, &buf, &buf_bytes));
    /* a launch that would break a capture (the legacy stream while a
     * blocking stream captures) is refused; on a capturing stream it
     * becomes a kernel node (emu_trace_launch) */
    if (e == CUDA_SUCCESS)
        e = drv_error(emu_stream_issue_check(s));
    struct emu_launch l;
    drv_launch_describe(r, k, s, &l);
    if (e == CUDA_SUCCESS)
        e = drv_error(emu_launch_check(&l));
    if (e == CUDA_SUCCESS)
        e = check_cluster(r, k, dev);
    if (e == CUDA_SUCCESS && (r->flags & MAYA_LAUNCH_COOPERATIVE)) {
        /* Every block of a cooperative grid must be resident at once. */
        uint64_t blocks = (uint64_t)r->grid[0] * r->grid[1] * r->grid[2];
        int per_sm = emu_occupancy_blocks(k, dev, (int)(r->block[0] * r->block[1] * r->block[2]), r->smem);
        if (blocks > (uint64_t)per_sm * (uint64_t)emu_device(dev)->prop.multiProcessorCount)
            e = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    }
    if (e != CUDA_SUCCESS) {
        emu_trace_call(api, t0, e, s ? s->id : 0, 0);
        return e;
    }
    emu_trace_launch(api, t0, CUDA_SUCCESS, &l, r->params, buf, buf_bytes, 0);
    return CUDA_SUCCESS;
}

#define LAUNCH_KERNEL(name, pt) \
    CUresult name(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, \
                  unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, \
                  unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) \
    { \
        DRV_ENTER(); \
        struct drv_launch_req r = { .f = f, .grid = { gridDimX, gridDimY, gridDimZ }, \
                                .block = { blockDimX, blockDimY, blockDimZ }, .smem = sharedMemBytes, \
                                .stream = hStream, .params = kernelParams, .extra = extra, .per_thread = pt }; \
        return launch(DRV_API(), drv_t0, &r); \
    }

LAUNCH_KERNEL(cuLaunchKernel, 0)
LAUNCH_KERNEL(cuLaunchKernel_ptsz, 1)

#define LAUNCH_COOPERATIVE(name, pt) \
    CUresult name(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, \
                  unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, \
                  unsigned int sharedMemBytes, CUstream hStream, void **kernelParams) \
    { \
        DRV_ENTER(); \
        struct drv_launch_req r = { .f = f, .grid = { gridDimX, gridDimY, gridDimZ }, \
                                .block = { blockDimX, blockDimY, blockDimZ }, .smem = sharedMemBytes, \
                                .stream = hStream, .params = kernelParams, \
                                .flags = MAYA_LAUNCH_COOPERATIVE, .per_thread = pt }; \
        return launch(DRV_API(), drv_t0, &r); \
    }

LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel, 0)
LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel_ptsz, 1)

#define LAUNCH_EX(name, pt) \
    CUresult name(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra) \
    { \
        DRV_ENTER(); \
        struct drv_launch_req r = { .f = f, .params = kernelParams, .extra = extra, .per_thread = pt }; \
        CUresult e = drv_launch_config(config, &r); \
        if (e != CUDA_SUCCESS) \
            DRV_RETURN(e); \
        return launch(DRV_API(), drv_t0, &r); \
    }

LAUNCH_EX(cuLaunchKernelEx, 0)
LAUNCH_EX(cuLaunchKernelEx_ptsz, 1)

/* ---- occupancy ---- */

/* What every occupancy query checks: its arguments (args_ok), a current
 * context and a kernel handle, whose layout is then read. */
static CUresult occupancy_kernel(int args_ok, CUfunction func, struct emu_kernel **k, int *dev)
{
    *k = drv_kernel(func);
    *dev = drv_ctx_device();
    if (!args_ok)
        return CUDA_ERROR_INVALID_VALUE;
    if (*dev < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!*k)
        return CUDA_ERROR_INVALID_HANDLE;
    emu_kernel_prepare(*k);
    return CUDA_SUCCESS;
}

static CUresult max_active_blocks(int *numBlocks, CUfunction func, int blockSize, size_t smem, unsigned flags)
{
    struct emu_kernel *k;
    int dev;
    CUresult e = occupancy_kernel(numBlocks && blockSize > 0 && !(flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE),
                                  func, &k, &dev);
    if (e == CUDA_SUCCESS)
        *numBlocks = emu_occupancy_blocks(k, dev, blockSize, smem);
    return e;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize)
{
    DRV_ENTER();
    DRV_RETURN(max_active_blocks(numBlocks, func, blockSize, dynamicSMemSize, 0));
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func, int blockSize,
                                                              size_t dynamicSMemSize, unsigned int flags)
{
    DRV_ENTER();
    DRV_RETURN(max_active_blocks(numBlocks, func, blockSize, dynamicSMemSize, flags));
}

/* The block size (a multiple of the warp size) that keeps the most threads
 * resident, the smallest such on ties, and the grid that fills the GPU. */
static CUresult potential_block_size(int *minGridSize, int *blockSize, CUfunction func,
                                     CUoccupancyB2DSize smemOf, size_t smem, int limit, unsigned flags)
{
    struct emu_kernel *k;
    int dev;
    CUresult e = occupancy_kernel(minGridSize && blockSize && limit >= 0 &&
                                      !(flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE),
                                  func, &k, &dev);
    if (e != CUDA_SUCCESS)
        return e;
    int max_threads = 0;
    emu_kernel_attribute(k, dev, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &max_threads);
    if (limit > 0 && limit < max_threads)
        max_threads = limit;
    const struct cudaDeviceProp *p = &emu_device(dev)->prop;
    int best = 0, best_blocks = 0;
    for (int b = max_threads / p->warpSize * p->warpSize; b > 0; b -= p->warpSize) {
        int blocks = emu_occupancy_blocks(k, dev, b, smemOf ? smemOf(b) : smem);
        if ((uint64_t)blocks * (uint64_t)b >= (uint64_t)best_blocks * (uint64_t)best && blocks > 0) {
            best = b;
            best_blocks = blocks;
        }
    }
    *blockSize = best;
    *minGridSize = best_blocks * p->multiProcessorCount;
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                          int blockSizeLimit)
{
    DRV_ENTER();
    DRV_RETURN(potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize,
                                    blockSizeLimit, 0));
}

CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, CUfunction func,
                                                   CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                   size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags)
{
    DRV_ENTER();
    DRV_RETURN(potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize,
                                    blockSizeLimit, flags));
}

CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func, int numBlocks,
                                                 int blockSize)
{
    DRV_ENTER();
    struct emu_kernel *k;
    int dev;
    CUresult e = occupancy_kernel(dynamicSmemSize && numBlocks > 0 && blockSize > 0, func, &k, &dev);
    if (e != CUDA_SUCCESS)
        DRV_RETURN(e);
    const struct cudaDeviceProp *p = &emu_device(dev)->prop;
    if (emu_occupancy_blocks(k, dev, blockSize, 0) < numBlocks) {
        *dynamicSmemSize = 0;
        DRV_RETURN(CUDA_SUCCESS);
    }
    /* Each block's share of the SM, less its static part and the reserve,
     * in the 128-byte units shared memory is allocated in. */
    uint64_t share = p->sharedMemPerMultiprocessor / (unsigned)numBlocks / 128 * 128;
    uint64_t fixed = (uint64_t)MAYA_MAX(k->static_smem, 0) + p->reservedSharedMemPerBlock;
    uint64_t avail = share > fixed ? share - fixed : 0;
    *dynamicSmemSize = MAYA_MIN(avail, p->sharedMemPerBlockOptin - MAYA_MIN((uint64_t)MAYA_MAX(k->static_smem, 0),
                                                                           p->sharedMemPerBlockOptin));
    DRV_RETURN(CUDA_SUCCESS);
}

/* Cluster size of a launch configuration (its attribute, else the
 * kernel's required one), or 0 when it names none. */
static unsigned config_cluster(const CUlaunchConfig *c, const struct emu_kernel *k)
{
    for (unsigned i = 0; i < c->numAttrs; i++)
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            return c->attrs[i].value.clusterDim.x * c->attrs[i].value.clusterDim.y * c->attrs[i].value.clusterDim.z;
    return (unsigned)(k->cluster_dims[0] * MAYA_MAX(k->cluster_dims[1], 1) * MAYA_MAX(k->cluster_dims[2], 1));
}

/* How many clusters fit on the GPU at once: the GPU's resident blocks,
 * counted per GPC (clusters never span GPCs), divided into clusters. */
CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const CUlaunchConfig *config)
{
    DRV_ENTER();
    struct emu_kernel *k;
    int dev;
    CUresult e = occupancy_kernel(numClusters && config && (!config->numAttrs || config->attrs), func, &k, &dev);
    if (e != CUDA_SUCCESS)
        DRV_RETURN(e);
    const struct cudaDeviceProp *p = &emu_device(dev)->prop;
    unsigned size = config_cluster(config, k);
    if (p->major < 9 || !size)
        DRV_RETURN(CUDA_ERROR_INVALID_CLUSTER_SIZE);
    if (size > (k->non_portable_cluster ? NON_PORTABLE_CLUSTER_MAX : PORTABLE_CLUSTER_MAX)) {
        *numClusters = 0;
        DRV_RETURN(CUDA_SUCCESS);
    }
    int per_sm = emu_occupancy_blocks(k, dev, (int)(config->blockDimX * config->blockDimY * config->blockDimZ),
                                      config->sharedMemBytes);
    /* Hopper and Blackwell have GPCs of up to 18 SMs (the last ones fewer). */
    int sms_per_gpc = 18, gpcs = (p->multiProcessorCount + sms_per_gpc - 1) / sms_per_gpc;
    int per_gpc = per_sm * (p->multiProcessorCount / gpcs);
    *numClusters = per_gpc / (int)size * gpcs;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func, const CUlaunchConfig *config)
{
    DRV_ENTER();
    struct emu_kernel *k;
    int dev;
    CUresult e = occupancy_kernel(clusterSize && config && (!config->numAttrs || config->attrs), func, &k, &dev);
    if (e != CUDA_SUCCESS)
        DRV_RETURN(e);
    if (emu_device(dev)->prop.major < 9) {
        *clusterSize = 0;
        DRV_RETURN(CUDA_SUCCESS);
    }
    int per_sm = emu_occupancy_blocks(k, dev, (int)(config->blockDimX * config->blockDimY * config->blockDimZ),
                                      config->sharedMemBytes);
    int max = k->non_portable_cluster ? NON_PORTABLE_CLUSTER_MAX : PORTABLE_CLUSTER_MAX;
    *clusterSize = per_sm > 0 ? max : 0;
    DRV_RETURN(CUDA_SUCCESS);
}

/* Device facts both APIs report the same way: attributes by number
 * (cudaDeviceAttr and CUdevice_attribute share their numbering, so one table
 * answers cudaDeviceGetAttribute and cuDeviceGetAttribute), limits, PCI bus
 * ids and occupancy. Values come from the device's cudaDeviceProp (from the
 * hwspec) or, for attributes the struct lacks, from its perf figures. */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"

#include <cuda.h>
#include <stdio.h>

EMU_API enum emu_err emu_device_attribute(int ordinal, int attr, int *value)
{
    struct emu_device *d = emu_device(ordinal);
    if (!d)
        return EMU_ERR_INVALID_DEVICE;
    const struct cudaDeviceProp *p = &d->prop;
    const struct maya_gpu_perf *f = &d->spec->perf;
    int v;
    switch (attr) {
    case 1: v = p->maxThreadsPerBlock; break;
    case 2: v = p->maxThreadsDim[0]; break;
    case 3: v = p->maxThreadsDim[1]; break;
    case 4: v = p->maxThreadsDim[2]; break;
    case 5: v = p->maxGridSize[0]; break;
    case 6: v = p->maxGridSize[1]; break;
    case 7: v = p->maxGridSize[2]; break;
    case 8: v = (int)p->sharedMemPerBlock; break;
    case 9: v = (int)p->totalConstMem; break;
    case 10: v = p->warpSize; break;
    case 11: v = (int)(p->memPitch > 0x7fffffff ? 0x7fffffff : p->memPitch); break;
    case 12: v = p->regsPerBlock; break;
    case 13: v = (int)(f->sm_clock_mhz * 1000); break;       /* kHz */
    case 14: v = (int)p->textureAlignment; break;
    case 15: v = p->asyncEngineCount > 0; break;             /* GPU overlap */
    case 16: v = p->multiProcessorCount; break;
    case 17: v = 0; break;                                   /* kernel exec timeout */
    case 18: v = p->integrated; break;
    case 19: v = p->canMapHostMemory; break;
    case 20: v = 0; break;                                   /* compute mode: default */
    case 21: v = p->maxTexture1D; break;
    case 22: v = p->maxTexture2D[0]; break;
    case 23: v = p->maxTexture2D[1]; break;
    case 24: v = p->maxTexture3D[0]; break;
    case 25: v = p->maxTexture3D[1]; break;
    case 26: v = p->maxTexture3D[2]; break;
    case 27: v = p->maxTexture2DLayered[0]; break;
    case 28: v = p->maxTexture2DLayered[1]; break;
    case 29: v = p->maxTexture2DLayered[2]; break;
    case 30: v = (int)p->surfaceAlignment; break;
    case 31: v = p->concurrentKernels; break;
    case 32: v = p->ECCEnabled; break;
    case 33: v = p->pciBusID; break;
    case 34: v = p->pciDeviceID; break;
    case 35: v = p->tccDriver; break;
    case 36: v = (int)(f->mem_clock_mhz * 1000); break;      /* kHz */
    case 37: v = p->memoryBusWidth; break;
    case 38: v = p->l2CacheSize; break;
    case 39: v = p->maxThreadsPerMultiProcessor; break;
    case 40: v = p->asyncEngineCount; break;
    case 41: v = p->unifiedAddressing; break;
    case 42: v = p->maxTexture1DLayered[0]; break;
    case 43: v = p->maxTexture1DLayered[1]; break;
    case 44: v = 0; break;                                   /* CAN_TEX2D_GATHER (deprecated) */
    case 45: v = p->maxTexture2DGather[0]; break;
    case 46: v = p->maxTexture2DGather[1]; break;
    case 47: v = p->maxTexture3DAlt[0]; break;
    case 48: v = p->maxTexture3DAlt[1]; break;
    case 49: v = p->maxTexture3DAlt[2]; break;
    case 50: v = p->pciDomainID; break;
    case 51: v = (int)p->texturePitchAlignment; break;
    case 52: v = p->maxTextureCubemap; break;
    case 53: v = p->maxTextureCubemapLayered[0]; break;
    case 54: v = p->maxTextureCubemapLayered[1]; break;
    case 55: v = p->maxSurface1D; break;
    case 56: v = p->maxSurface2D[0]; break;
    case 57: v = p->maxSurface2D[1]; break;
    case 58: v = p->maxSurface3D[0]; break;
    case 59: v = p->maxSurface3D[1]; break;
    case 60: v = p->maxSurface3D[2]; break;
    case 61: v = p->maxSurface1DLayered[0]; break;
    case 62: v = p->maxSurface1DLayered[1]; break;
    case 63: v = p->maxSurface2DLayered[0]; break;
    case 64: v = p->maxSurface2DLayered[1]; break;
    case 65: v = p->maxSurface2DLayered[2]; break;
    case 66: v = p->maxSurfaceCubemap; break;
    case 67: v = p->maxSurfaceCubemapLayered[0]; break;
    case 68: v = p->maxSurfaceCubemapLayered[1]; break;
    case 69: v = 268435456; break;                           /* 1D linear texture width */
    case 70: v = p->maxTexture2DLinear[0]; break;
    case 71: v = p->maxTexture2DLinear[1]; break;
    case 72: v = p->maxTexture2DLinear[2]; break;
    case 73: v = p->maxTexture2DMipmap[0]; break;
    case 74: v = p->maxTexture2DMipmap[1]; break;
    case 75: v = p->major; break;
    case 76: v = p->minor; break;
    case 77: v = p->maxTexture1DMipmap; break;
    case 78: v = p->streamPrioritiesSupported; break;
    case 79: v = p->globalL1CacheSupported; break;
    case 80: v = p->localL1CacheSupported; break;
    case 81: v = (int)p->sharedMemPerMultiprocessor; break;
    case 82: v = p->regsPerMultiprocessor; break;
    case 83: v = p->managedMemory; break;
    case 84: v = p->isMultiGpuBoard; break;
    case 85: v = p->multiGpuBoardGroupID; break;
    case 86: v = p->hostNativeAtomicSupported; break;
    case 87: v = f->fp64_tflops > 0 ? (int)(f->fp32_tflops / f->fp64_tflops + 0.5) : 64; break;
    case 88: v = p->pageableMemoryAccess; break;
    case 89: v = p->concurrentManagedAccess; break;
    case 90: v = p->computePreemptionSupported; break;
    case 91: v = p->canUseHostPointerForRegisteredMem; break;
    case 92: case 93: case 94: v = 1; break;                 /* stream mem ops (driver) */
    case 95: v = p->cooperativeLaunch; break;
    case 96: v = p->cooperativeLaunch; break;                /* multi-device cooperative */
    case 97: v = (int)p->sharedMemPerBlockOptin; break;
    case 98: v = 0; break;                                   /* can flush remote writes */
    case 99: v = p->hostRegisterSupported; break;
    case 100: v = p->pageableMemoryAccessUsesHostPageTables; break;
    case 101: v = p->directManagedMemAccessFromHost; break;
    case 102: v = 1; break;                                  /* VMM supported (driver) */
    case 103: case 104: case 105: v = 1; break;              /* handle types (driver) */
    case 106: v = p->maxBlocksPerMultiProcessor; break;
    case 107: v = 1; break;                                  /* generic compression (driver) */
    case 108: v = p->persistingL2CacheMaxSize; break;
    case 109: v = p->accessPolicyMaxWindowSize; break;
    case 110: v = p->gpuDirectRDMASupported; break;          /* driver: RDMA with VMM */
    case 111: v = (int)p->reservedSharedMemPerBlock; break;
    case 112: v = p->sparseCudaArraySupported; break;
    case 113: v = p->hostRegisterReadOnlySupported; break;
    case 114: v = p->timelineSemaphoreInteropSupported; break;
    case 115: v = p->memoryPoolsSupported; break;
    case 116: v = p->gpuDirectRDMASupported; break;
    case 117: v = (int)p->gpuDirectRDMAFlushWritesOptions; break;
    case 118: v = p->gpuDirectRDMAWritesOrdering; break;
    case 119: v = (int)p->memoryPoolSupportedHandleTypes; break;
    case 120: v = p->clusterLaunch; break;
    case 121: v = p->deferredMappingCudaArraySupported; break;
    case 122: case 123: v = 1; break;                        /* 64-bit stream mem ops / wait-value nor */
    case 124: v = 1; break;                                  /* DMA-BUF (driver) */
    case 125: v = p->ipcEventSupported; break;
    case 126: v = p->major >= 9 ? 4 : 1; break;              /* memory sync domains */
    case 127: v = p->major >= 9; break;                      /* tensor maps (TMA): Hopper and later */
    case 128: case 129: v = 0; break;                        /* fabric handles / unified fn ptrs */
    case 130: v = p->deviceNumaConfig; break;
    case 131: v = p->deviceNumaId; break;
    case 132: v = 0; break;                                  /* multicast (driver) */
    case 133: v = p->mpsEnabled; break;
    case 134: v = p->hostNumaId; break;
    case 135: case 136: case 137: case 138: v = 0; break;
    case 139: v = (int)p->gpuPciDeviceID; break;
    case 140: v = (int)p->gpuPciSubsystemID; break;
    case 141: v = 0; break;
    case 142: v = 0; break;
    case 143: v = p->hostNumaMultinodeIpcSupported; break;
    case 144: v = 0; break;
    case 145: case 146: case 147: v = 0; break;
    default:
        return EMU_ERR_INVALID_VALUE;
    }
    *value = v;
    return EMU_OK;
}

/* ---- limits (cudaLimit and CUlimit share their numbering) ---- */

static uint64_t default_limit(int limit)
{
    switch (limit) {
    case 0: return 1024;        /* stack size per thread */
    case 1: return 1 << 20;     /* printf FIFO */
    case 2: return 8 << 20;     /* malloc heap */
    case 3: return 2;           /* device runtime sync depth */
    case 4: return 2048;        /* device runtime pending launches */
    case 5: return 64;          /* max L2 fetch granularity */
    default: return 0;          /* persisting L2, CIG limits */
    }
}

EMU_API enum emu_err emu_limit_get(int device, int limit, uint64_t *value)
{
    struct emu_device *d = emu_device(device);
    if (!d)
        return EMU_ERR_INVALID_DEVICE;
    if (limit < 0 || limit > 9)
        return EMU_ERR_NOT_SUPPORTED;
    *value = d->limits[limit] ? d->limits[limit] : default_limit(limit);
    if (limit == 7) /* shared memory of a CIG context: the whole block's */
        *value = d->prop.sharedMemPerBlockOptin;
    return EMU_OK;
}

EMU_API enum emu_err emu_limit_set(int device, int limit, uint64_t value)
{
    struct emu_device *d = emu_device(device);
    if (!d)
        return EMU_ERR_INVALID_DEVICE;
    if (limit < 0 || limit > 9 || limit == 7 || limit == 8)
        return EMU_ERR_NOT_SUPPORTED; /* unknown, or query-only */
    if (limit == 5 && value > 128)
        return EMU_ERR_INVALID_VALUE;
    if (limit == 6 && value > (uint64_t)d->prop.persistingL2CacheMaxSize)
        value = (uint64_t)d->prop.persistingL2CacheMaxSize; /* clamped, as CUDA does */
    d->limits[limit] = value ? value : default_limit(limit);
    return EMU_OK;
}

/* ---- PCI bus ids ---- */

EMU_API void emu_pci_bus_id(const struct emu_device *d, char *buf, size_t len)
{
    snprintf(buf, len, "%08X:%02X:%02X.0", d->prop.pciDomainID, d->prop.pciBusID, d->prop.pciDeviceID);
}

EMU_API int emu_device_by_pci_bus_id(const char *id)
{
    unsigned dom = 0, bus = 0, dev = 0;
    if (!id)
        return -1;
    /* domain:bus:device.function or bus:device.function, hex */
    if (sscanf(id, "%x:%x:%x", &dom, &bus, &dev) != 3) {
        dom = 0;
        if (sscanf(id, "%x:%x", &bus, &dev) != 2)
            return -1;
    }
    for (int i = 0; i < emu_device_count(); i++) {
        const struct emu_device *d = emu_device(i);
        if ((unsigned)d->prop.pciBusID == bus && (unsigned)d->prop.pciDomainID == dom &&
            (unsigned)d->prop.pciDeviceID == dev)
            return i;
    }
    return -1;
}

/* ---- occupancy ----
 * The CUDA occupancy calculator's rules: resident blocks per SM are limited
 * by warps, by the block count, by registers (allocated per warp in units of
 * 256) and by shared memory (static + dynamic + the driver's reserve, in
 * units of 128 bytes). */

EMU_API int emu_occupancy_blocks(const struct emu_kernel *k, int device, int block_threads, uint64_t dyn_smem)
{
    const struct emu_device *d = emu_device(device);
    if (!d || block_threads <= 0)
        return 0;
    const struct cudaDeviceProp *p = &d->prop;
    int max_threads = k ? MAYA_MIN(k->max_threads_per_block, p->maxThreadsPerBlock) : p->maxThreadsPerBlock;
    if (block_threads > max_threads)
        return 0;
    int warp = p->warpSize > 0 ? p->warpSize : 32;
    int warps = (block_threads + warp - 1) / warp;
    int blocks = MAYA_MIN(p->maxBlocksPerMultiProcessor, p->maxThreadsPerMultiProcessor / warp / warps);
    int regs = k && k->num_regs > 0 ? k->num_regs : 0;
    if (regs) {
        int per_warp = (regs * warp + 255) / 256 * 256;
        int warps_by_regs = p->regsPerMultiprocessor / per_warp;
        blocks = MAYA_MIN(blocks, warps_by_regs / warps);
    }
    uint64_t smem = dyn_smem + (uint64_t)(k ? MAYA_MAX(k->static_smem, 0) : 0);
    if (smem > p->sharedMemPerBlockOptin)
        return 0;
    uint64_t per_block = (smem + p->reservedSharedMemPerBlock + 127) / 128 * 128;
    if (per_block)
        blocks = MAYA_MIN(blocks, (int)(p->sharedMemPerMultiprocessor / per_block));
    return MAYA_MAX(blocks, 0);
}

/* ---- function attributes (CUfunction_attribute numbers) ---- */

/* The device a function attribute is asked for, the kernel's layout read. */
static enum emu_err kernel_on(struct emu_kernel *k, int device, const struct cudaDeviceProp **p)
{
    const struct emu_device *d = emu_device(device);
    if (!k)
        return EMU_ERR_INVALID_HANDLE;
    if (!d)
        return EMU_ERR_INVALID_DEVICE;
    emu_kernel_prepare(k);
    *p = &d->prop;
    return EMU_OK;
}

EMU_API enum emu_err emu_kernel_attribute(struct emu_kernel *k, int device, int attr, int *value)
{
    const struct cudaDeviceProp *p;
    enum emu_err e = kernel_on(k, device, &p);
    if (e != EMU_OK)
        return e;
    int sm = k->binary_sm ? k->binary_sm : p->major * 10 + p->minor;
    int v;
    switch (attr) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: {
        /* launch bounds, else what the registers allow (256-register units per warp) */
        v = MAYA_MIN(k->max_threads_per_block, p->maxThreadsPerBlock);
        if (k->num_regs > 0) {
            int per_warp = (k->num_regs * p->warpSize + 255) / 256 * 256;
            v = MAYA_MIN(v, p->regsPerBlock / per_warp * p->warpSize);
        }
        break;
    }
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: v = k->static_smem; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: v = k->const_bytes; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: v = k->local_bytes; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: v = k->num_regs; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: v = sm; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: v = sm; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: v = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        v = k->max_dynamic_smem > 0 ? k->max_dynamic_smem
                                    : (int)p->sharedMemPerBlock - MAYA_MAX(k->static_smem, 0);
        break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: v = k->preferred_carveout; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: v = k->cluster_dims[0] > 0; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: v = k->cluster_dims[0]; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: v = k->cluster_dims[1]; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: v = k->cluster_dims[2]; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: v = k->non_portable_cluster; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: v = k->cluster_policy; break;
    default: return EMU_ERR_INVALID_VALUE;
    }
    *value = v;
    return EMU_OK;
}

EMU_API enum emu_err emu_kernel_set_attribute(struct emu_kernel *k, int device, int attr, int value)
{
    const struct cudaDeviceProp *p;
    enum emu_err e = kernel_on(k, device, &p);
    if (e != EMU_OK)
        return e;
    switch (attr) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if (value < 0 || (uint64_t)value + (uint64_t)MAYA_MAX(k->static_smem, 0) > p->sharedMemPerBlockOptin)
            return EMU_ERR_INVALID_VALUE;
        k->max_dynamic_smem = value;
        return EMU_OK;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if (value < -1 || value > 100)
            return EMU_ERR_INVALID_VALUE;
        k->preferred_carveout = value;
        return EMU_OK;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
        if (value < 0 || value > 16 || p->major < 9)
            return EMU_ERR_INVALID_VALUE;
        k->cluster_dims[attr - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] = value;
        return EMU_OK;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        if (value != 0 && value != 1)
            return EMU_ERR_INVALID_VALUE;
        k->non_portable_cluster = value;
        return EMU_OK;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        if (value < 0 || value > 2)
            return EMU_ERR_INVALID_VALUE;
        k->cluster_policy = value;
        return EMU_OK;
    default:
        return EMU_ERR_INVALID_VALUE; /* the others are read-only */
    }
}

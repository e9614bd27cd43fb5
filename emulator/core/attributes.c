/* Device attributes by number: cudaDeviceAttr and CUdevice_attribute share
 * their numbering, so one table answers both cudaDeviceGetAttribute and
 * cuDeviceGetAttribute. Values come from the device's cudaDeviceProp (from
 * the hwspec) or, for attributes the struct lacks, from its perf figures. */
#include "emu.h"

#include <cuda.h>

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
    case 122: case 123: v = 0; break;                        /* 64-bit stream mem ops / wait-value nor */
    case 124: v = 1; break;                                  /* DMA-BUF (driver) */
    case 125: v = p->ipcEventSupported; break;
    case 126: v = p->major >= 9 ? 4 : 1; break;              /* memory sync domains */
    case 127: case 128: case 129: v = 0; break;              /* tensor-map / unified fn ptrs (driver) */
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

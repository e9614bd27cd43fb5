/* Driver initialisation, versions, devices and errors. */
#include "drv.h"

#include <stdio.h>
#include <string.h>

struct err_name {
    const char *name;
    int value;
    const char *doc;
};

static const struct err_name names[] = {
#include "driver_errors.inc"
};

CUresult drv_error(enum emu_err e)
{
    switch (e) {
    case EMU_OK: return CUDA_SUCCESS;
    case EMU_ERR_INVALID_VALUE: return CUDA_ERROR_INVALID_VALUE;
    case EMU_ERR_OUT_OF_MEMORY: return CUDA_ERROR_OUT_OF_MEMORY;
    case EMU_ERR_INVALID_DEVICE: return CUDA_ERROR_INVALID_DEVICE;
    case EMU_ERR_NO_DEVICE: return CUDA_ERROR_NO_DEVICE;
    case EMU_ERR_INVALID_HANDLE: return CUDA_ERROR_INVALID_HANDLE;
    case EMU_ERR_INVALID_CONTEXT: return CUDA_ERROR_INVALID_CONTEXT;
    case EMU_ERR_NOT_READY: return CUDA_ERROR_NOT_READY;
    case EMU_ERR_NOT_SUPPORTED: return CUDA_ERROR_NOT_SUPPORTED;
    case EMU_ERR_INIT: return CUDA_ERROR_NOT_INITIALIZED;
    case EMU_ERR_NOT_INITIALIZED: return CUDA_ERROR_NOT_INITIALIZED;
    case EMU_ERR_INVALID_DEVICE_PTR: return CUDA_ERROR_INVALID_VALUE;
    case EMU_ERR_NOT_FOUND: return CUDA_ERROR_NOT_FOUND;
    case EMU_ERR_CAPTURE_UNSUPPORTED: return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    case EMU_ERR_CAPTURE_INVALIDATED: return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    case EMU_ERR_ILLEGAL_STATE: return CUDA_ERROR_ILLEGAL_STATE;
    case EMU_ERR_ALREADY_MAPPED: return CUDA_ERROR_ALREADY_MAPPED;
    case EMU_ERR_NOT_MAPPED: return CUDA_ERROR_NOT_MAPPED;
    case EMU_ERR_INVALID_CONFIG: return CUDA_ERROR_INVALID_VALUE;
    case EMU_ERR_INVALID_IMAGE: return CUDA_ERROR_INVALID_IMAGE;
    case EMU_ERR_PEER_ACCESS_ALREADY_ENABLED: return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    case EMU_ERR_PEER_ACCESS_NOT_ENABLED: return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    case EMU_ERR_CAPTURE_UNJOINED: return CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
    case EMU_ERR_CAPTURE_IMPLICIT: return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    case EMU_ERR_CAPTURE_ISOLATION: return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    case EMU_ERR_CAPTURE_UNMATCHED: return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    case EMU_ERR_CAPTURE_WRONG_THREAD: return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    case EMU_ERR_GRAPH_UPDATE: return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    return CUDA_ERROR_UNKNOWN;
}

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].value == (int)error) {
            *pStr = names[i].name;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].value == (int)error) {
            *pStr = names[i].doc;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuInit(unsigned int Flags)
{
    DRV_ENTER_NOINIT();
    if (Flags != 0)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    emu_driver_initialized = 1;
    DRV_RETURN(emu_device_count() ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE);
}

/* Works before cuInit, as on the real driver. */
CUresult cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = CUDA_VERSION;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    DRV_ENTER();
    if (!count)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *count = emu_device_count();
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    DRV_ENTER();
    if (!device)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!emu_device(ordinal))
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    *device = ordinal;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!name || len <= 0)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    snprintf(name, (size_t)len, "%s", d->prop.name);
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    DRV_ENTER();
    if (!pi)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_RETURN(drv_error(emu_device_attribute(dev, (int)attrib, pi)));
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!bytes)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    *bytes = d->prop.totalGlobalMem;
    DRV_RETURN(CUDA_SUCCESS);
}

/* The 32-bit original: sizes past 4 GiB do not fit, as on the real driver. */
CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    size_t b = 0;
    CUresult e = cuDeviceTotalMem_v2(bytes ? &b : NULL, dev);
    if (e == CUDA_SUCCESS)
        *bytes = b > UINT32_MAX ? UINT32_MAX : (unsigned int)b;
    return e;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!uuid)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    memcpy(uuid->bytes, d->prop.uuid.bytes, sizeof uuid->bytes);
    DRV_RETURN(CUDA_SUCCESS);
}

/* The first version differed only for MIG instances, which are not emulated. */
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    return cuDeviceGetUuid_v2(uuid, dev);
}

CUresult cuDeviceGetLuid(char *luid, unsigned int *deviceNodeMask, CUdevice dev)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!luid || !deviceNodeMask)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    /* What the device properties say (zeros off Windows). */
    memcpy(luid, d->prop.luid, sizeof d->prop.luid);
    *deviceNodeMask = d->prop.luidDeviceNodeMask;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!pciBusId || len <= 0)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    emu_pci_bus_id(d, pciBusId, (size_t)len);
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
    DRV_ENTER();
    if (!dev || !pciBusId)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    int d = emu_device_by_pci_bus_id(pciBusId);
    if (d < 0)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    *dev = d;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDeviceGetProperties(CUdevprop *prop, CUdevice dev)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!prop)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    const struct cudaDeviceProp *p = &d->prop;
    prop->maxThreadsPerBlock = p->maxThreadsPerBlock;
    memcpy(prop->maxThreadsDim, p->maxThreadsDim, sizeof prop->maxThreadsDim);
    memcpy(prop->maxGridSize, p->maxGridSize, sizeof prop->maxGridSize);
    prop->sharedMemPerBlock = (int)p->sharedMemPerBlock;
    prop->totalConstantMemory = (int)p->totalConstMem;
    prop->SIMDWidth = p->warpSize;
    prop->memPitch = (int)(p->memPitch > INT32_MAX ? INT32_MAX : p->memPitch);
    prop->regsPerBlock = p->regsPerBlock;
    emu_device_attribute(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &prop->clockRate);
    prop->textureAlign = (int)p->textureAlignment;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!major || !minor)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    *major = d->prop.major;
    *minor = d->prop.minor;
    DRV_RETURN(CUDA_SUCCESS);
}

/* Every pair of emulated GPUs on a node can reach each other (NVLink or
 * PCIe, as the hwspec's node describes). */
CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    DRV_ENTER();
    if (!canAccessPeer)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!emu_device(dev) || !emu_device(peerDev))
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    *canAccessPeer = dev != peerDev;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice, CUdevice dstDevice)
{
    DRV_ENTER();
    if (!value)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!emu_device(srcDevice) || !emu_device(dstDevice) || srcDevice == dstDevice)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = 1; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: *value = 0; break;
    default: DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    }
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDeviceGetExecAffinitySupport(int *pi, CUexecAffinityType type, CUdevice dev)
{
    DRV_ENTER();
    if (!pi || (unsigned)type >= CU_EXEC_AFFINITY_TYPE_MAX)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!emu_device(dev))
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    *pi = 0; /* SM partitioning needs MPS, which is not emulated */
    DRV_RETURN(CUDA_SUCCESS);
}

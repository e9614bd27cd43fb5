/* Driver initialisation, versions, devices and errors. */
#include "drv.h"

#include <string.h>

int drv_initialized;

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
    drv_initialized = 1;
    DRV_RETURN(emu_device_count() ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE);
}

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

/* cuda.h maps cuDeviceTotalMem to this _v2 name. */
CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev)
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

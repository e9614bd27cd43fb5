/* Runtime device management: count, selection, properties, attributes,
 * flags, limits, memory information, synchronisation. */
#include "rt.h"

#include <string.h>

int rt_device(void)
{
    return emu_current_device();
}

cudaError_t cudaGetDeviceCount(int *count)
{
    RT_ENTER();
    if (!count)
        RT_RETURN(cudaErrorInvalidValue);
    *count = emu_device_count();
    RT_RETURN(*count ? cudaSuccess : cudaErrorNoDevice);
}

cudaError_t cudaGetDevice(int *device)
{
    RT_ENTER();
    if (!device)
        RT_RETURN(cudaErrorInvalidValue);
    if (emu_device_count() == 0)
        RT_RETURN(cudaErrorNoDevice);
    *device = emu_current_device();
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaSetDevice(int device)
{
    RT_ENTER();
    RT_RETURN(rt_error(emu_set_device(device)));
}

cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{
    RT_ENTER();
    struct emu_device *d = emu_device(device);
    if (!d)
        RT_RETURN(cudaErrorInvalidDevice);
    emu_primary_ctx(device);
    d->primary_active = 1;
    d->device_flags = deviceFlags;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaSetValidDevices(int *device_arr, int len)
{
    RT_ENTER();
    if (len < 0 || (len > 0 && !device_arr))
        RT_RETURN(cudaErrorInvalidValue);
    for (int i = 0; i < len; i++)
        if (!emu_device(device_arr[i]))
            RT_RETURN(cudaErrorInvalidDevice);
    RT_RETURN(len > 0 ? rt_error(emu_set_device(device_arr[0])) : cudaSuccess);
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    RT_ENTER();
    struct emu_device *d = emu_device(device);
    if (!prop)
        RT_RETURN(cudaErrorInvalidValue);
    if (!d)
        RT_RETURN(cudaErrorInvalidDevice);
    emu_device_touch(d);
    *prop = d->prop;
    RT_RETURN(cudaSuccess);
}

/* Older headers #define cudaGetDeviceProperties to this name. */
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device)
{
    return cudaGetDeviceProperties(prop, device);
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    RT_ENTER();
    if (!value)
        RT_RETURN(cudaErrorInvalidValue);
    RT_RETURN(rt_error(emu_device_attribute(device, (int)attr, value)));
}

cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop)
{
    RT_ENTER();
    if (!device || !prop)
        RT_RETURN(cudaErrorInvalidValue);
    /* Every emulated device is alike: the first one matches best. */
    *device = 0;
    RT_RETURN(emu_device_count() ? cudaSuccess : cudaErrorNoDevice);
}

cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    RT_ENTER();
    struct emu_device *d = emu_device(device);
    if (!pciBusId || len <= 0)
        RT_RETURN(cudaErrorInvalidValue);
    if (!d)
        RT_RETURN(cudaErrorInvalidDevice);
    emu_pci_bus_id(d, pciBusId, (size_t)len);
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *pciBusId)
{
    RT_ENTER();
    if (!device || !pciBusId)
        RT_RETURN(cudaErrorInvalidValue);
    int d = emu_device_by_pci_bus_id(pciBusId);
    if (d < 0)
        RT_RETURN(cudaErrorInvalidDevice);
    *device = d;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    RT_ENTER();
    struct emu_device *d = emu_device(rt_device());
    if (!d)
        RT_RETURN(cudaErrorInvalidDevice);
    d->device_flags = flags & ~(unsigned)cudaDeviceMapHost; /* MapHost is always on */
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
    RT_ENTER();
    struct emu_device *d = emu_device(rt_device());
    if (!flags)
        RT_RETURN(cudaErrorInvalidValue);
    if (!d)
        RT_RETURN(cudaErrorInvalidDevice);
    *flags = d->device_flags | cudaDeviceMapHost;
    RT_RETURN(cudaSuccess);
}

/* Destroys the device's memory, as a real reset does (pools give back
 * their reserves). Streams, events and graphs stay valid handles: the
 * emulator keeps no device state in them. A sticky error stays: after a
 * fault the process must end. */
cudaError_t cudaDeviceReset(void)
{
    RT_ENTER();
    cudaError_t e = rt_error(emu_capture_unsafe_call(NULL));
    if (e != cudaSuccess)
        RT_RETURN(e);
    int dev = rt_device();
    if (!emu_device(dev))
        RT_RETURN(cudaErrorNoDevice);
    rt_drain(NULL);
    uint64_t freed = emu_mem_reset_device(dev);
    emu_device(dev)->primary_active = 0; /* the primary context is reset too */
    emu_pool_release_idle(dev, 0, 0);
    struct emu_pool *p = emu_pool_default(dev);
    if (p) {
        emu_pool_trim(p, 0, 0, 0);
        emu_pool_set_current(dev, p);
    }
    /* One FREE with no address says how much went. */
    emu_trace_alloc(MAYA_REC_FREE, RT_API(), rt_t0, cudaSuccess, 0, freed, MAYA_ALLOC_DEVICE, dev, 0,
                    MAYA_F_DEVICE_SYNC);
    return cudaSuccess;
}

/* ---- peer access: every pair of GPUs on an emulated node can reach each
 * other (NVLink or PCIe), as on the nodes maya models ---- */

cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    RT_ENTER();
    if (!canAccessPeer)
        RT_RETURN(cudaErrorInvalidValue);
    if (!emu_device(device) || !emu_device(peerDevice))
        RT_RETURN(cudaErrorInvalidDevice);
    *canAccessPeer = device != peerDevice;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    RT_ENTER();
    struct emu_device *d = emu_device(rt_device());
    if (flags)
        RT_RETURN(cudaErrorInvalidValue);
    if (!d || !emu_device(peerDevice) || peerDevice == d->ordinal || peerDevice >= 64)
        RT_RETURN(cudaErrorInvalidDevice);
    if (d->peer_enabled[peerDevice])
        RT_RETURN(cudaErrorPeerAccessAlreadyEnabled);
    d->peer_enabled[peerDevice] = 1;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceDisablePeerAccess(int peerDevice)
{
    RT_ENTER();
    struct emu_device *d = emu_device(rt_device());
    if (!d || !emu_device(peerDevice) || peerDevice == d->ordinal || peerDevice >= 64)
        RT_RETURN(cudaErrorInvalidDevice);
    if (!d->peer_enabled[peerDevice])
        RT_RETURN(cudaErrorPeerAccessNotEnabled);
    d->peer_enabled[peerDevice] = 0;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr, int srcDevice, int dstDevice)
{
    RT_ENTER();
    if (!value)
        RT_RETURN(cudaErrorInvalidValue);
    if (!emu_device(srcDevice) || !emu_device(dstDevice) || srcDevice == dstDevice)
        RT_RETURN(cudaErrorInvalidDevice);
    switch (attr) {
    case cudaDevP2PAttrPerformanceRank: *value = 0; break; /* all pairs alike */
    case cudaDevP2PAttrAccessSupported:
    case cudaDevP2PAttrNativeAtomicSupported:
    case cudaDevP2PAttrCudaArrayAccessSupported: *value = 1; break;
    case cudaDevP2PAttrOnlyPartialNativeAtomicSupported: *value = 0; break;
    default: RT_RETURN(cudaErrorInvalidValue);
    }
    RT_RETURN(cudaSuccess);
}

/* Profiler ranges mean nothing without a profiler; they are traced as calls. */
cudaError_t cudaProfilerStart(void)
{
    RT_ENTER();
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaProfilerStop(void)
{
    RT_ENTER();
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    RT_ENTER();
    enum emu_err e = emu_limit_set(rt_device(), (int)limit, value);
    RT_RETURN(e == EMU_ERR_NOT_SUPPORTED ? cudaErrorUnsupportedLimit : rt_error(e));
}

cudaError_t cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit)
{
    RT_ENTER();
    uint64_t v = 0;
    if (!pValue)
        RT_RETURN(cudaErrorInvalidValue);
    enum emu_err e = emu_limit_get(rt_device(), (int)limit, &v);
    if (e == EMU_OK)
        *pValue = v;
    RT_RETURN(e == EMU_ERR_NOT_SUPPORTED ? cudaErrorUnsupportedLimit : rt_error(e));
}

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    RT_ENTER();
    if (!driverVersion)
        RT_RETURN(cudaErrorInvalidValue);
    *driverVersion = CUDART_VERSION;
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    RT_ENTER();
    if (!runtimeVersion)
        RT_RETURN(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    RT_RETURN(cudaSuccess);
}

/* A plain constructor of the struct (header-inline in C++, exported for C). */
struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f)
{
    struct cudaChannelFormatDesc d = { x, y, z, w, f };
    return d;
}

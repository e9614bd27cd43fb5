/* NVML start-up and shutdown, error strings, system queries, and finding
 * the node's GPUs by index, UUID or PCI bus id. */
#define _GNU_SOURCE
#include "nvml_impl.h"
#include "maya/common.h"

#include <cuda.h> /* CUDA_VERSION: the driver's CUDA version, as cuDriverGetVersion says */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The Linux driver the CUDA 13.0 toolkit shipped with (its release notes'
 * toolkit/driver table); NVML's own version is the CUDA major version
 * followed by it. */
#define NVML_DRIVER_VERSION "580.65.06"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int refs;                 /* nvmlInit* calls not yet matched by nvmlShutdown */
static int ngpus;
static struct nvml_gpu gpus[64]; /* MAYA_GPUS_PER_NODE is at most 64 */

nvmlReturn_t nvml_check_init(void)
{
    return __atomic_load_n(&refs, __ATOMIC_ACQUIRE) > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

void nvml_trace(uint32_t api, uint64_t t0, nvmlReturn_t r)
{
    if (emu_started != 1)
        return;
    /* the trace clock starts with the emulator: a call that began before
     * CUDA started (in another thread) begins at its start */
    uint64_t now = emu_now();
    emu_trace_call(api, t0 < now ? t0 : now, (int)r, 0, 0);
}

/* Build the GPU table once (the emulator's configuration does not change).
 * NVML does not initialise CUDA: it reads the emulator's configuration
 * without starting it, so a child forked after NVML calls can still use
 * CUDA, and a child forked after CUDA started can still use NVML, as on a
 * real node. */
static nvmlReturn_t load_gpus(void)
{
    if (emu_configure() != EMU_OK)
        return NVML_ERROR_DRIVER_NOT_LOADED; /* the emulator said why on stderr */
    if (ngpus)
        return NVML_SUCCESS;
    const struct emu_config *cfg = emu_config();
    int n = MAYA_MIN(cfg->gpus_per_node, (int)MAYA_ARRAY_LEN(gpus));
    for (int i = 0; i < n; i++) {
        gpus[i].magic = NVML_GPU_MAGIC;
        gpus[i].index = i;
        gpus[i].spec = cfg->gpu;
        if (emu_node_gpu_prop(i, &gpus[i].prop) < 0)
            return NVML_ERROR_UNKNOWN;
    }
    ngpus = n;
    return NVML_SUCCESS;
}

/* nvmlInit* may be called many times; each needs its nvmlShutdown. The
 * call is traced once the emulator runs (it may start it). */
static nvmlReturn_t init(uint32_t *api, const char *name)
{
    pthread_mutex_lock(&lock);
    nvmlReturn_t r = load_gpus();
    if (r == NVML_SUCCESS)
        __atomic_add_fetch(&refs, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    if (emu_started == 1) {
        if (!*api)
            *api = emu_string(name);
        nvml_trace(*api, emu_now(), r);
    }
    return r;
}

nvmlReturn_t nvmlInit_v2(void)
{
    static uint32_t api;
    return init(&api, __func__);
}

nvmlReturn_t nvmlInit(void)
{
    static uint32_t api;
    return init(&api, __func__);
}

/* The emulated node always has GPUs, and attaching them costs nothing: the
 * flags change nothing. */
nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    static uint32_t api;
    (void)flags;
    return init(&api, __func__);
}

nvmlReturn_t nvmlShutdown(void)
{
    uint64_t t0 = emu_now();
    pthread_mutex_lock(&lock);
    nvmlReturn_t r = refs > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
    if (refs > 0)
        __atomic_sub_fetch(&refs, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    nvml_trace(EMU_API_ID(__func__), t0, r);
    return r;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_IRQ_ISSUE: return "Interrupt request issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM: return "The operating system has blocked the request";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_MEMORY: return "Insufficient Memory";
    case NVML_ERROR_NO_DATA: return "No data";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "Not supported when ECC is enabled";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient resources";
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return "Frequency not supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    case NVML_ERROR_DEPRECATED: return "Deprecated";
    case NVML_ERROR_NOT_READY: return "Not ready";
    case NVML_ERROR_GPU_NOT_FOUND: return "GPU not found";
    case NVML_ERROR_INVALID_STATE: return "Invalid state";
    case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED: return "Reset type not supported";
    case NVML_ERROR_UNKNOWN: return "Unknown Error";
    }
    return "Unknown Error";
}

/* ---- system ---- */

nvmlReturn_t nvml_put_string(char *dst, unsigned int length, const char *src)
{
    if (!dst)
        return NVML_ERROR_INVALID_ARGUMENT;
    size_t n = strlen(src);
    if (n + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, n + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    NVML_ENTER();
    NVML_RETURN(nvml_put_string(version, length, NVML_DRIVER_VERSION));
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    NVML_ENTER();
    char v[32];
    snprintf(v, sizeof v, "%d.%s", CUDA_VERSION / 1000, NVML_DRIVER_VERSION);
    NVML_RETURN(nvml_put_string(version, length, v));
}

/* Like cuDriverGetVersion, and also before nvmlInit (the real one loads the
 * CUDA driver for it). */
static nvmlReturn_t cuda_driver_version(int *v)
{
    if (!v)
        return NVML_ERROR_INVALID_ARGUMENT;
    *v = CUDA_VERSION;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
    return cuda_driver_version(cudaDriverVersion);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
    return cuda_driver_version(cudaDriverVersion);
}

/* ---- the node's GPUs ---- */

int nvml_gpu_count(void)
{
    return ngpus;
}

const struct nvml_gpu *nvml_gpu_at(int index)
{
    return index >= 0 && index < ngpus ? &gpus[index] : NULL;
}

const struct nvml_gpu *nvml_gpu(nvmlDevice_t handle)
{
    const struct nvml_gpu *g = (const struct nvml_gpu *)handle;
    /* only addresses inside the table: a stray pointer is not dereferenced */
    if ((uintptr_t)g < (uintptr_t)gpus || (uintptr_t)g >= (uintptr_t)(gpus + ngpus) ||
        ((uintptr_t)g - (uintptr_t)gpus) % sizeof *g)
        return NULL;
    return g->magic == NVML_GPU_MAGIC ? g : NULL;
}

int nvml_gpu_ordinal(const struct nvml_gpu *g)
{
    for (int i = 0; i < emu_device_count(); i++)
        if (emu_device(i)->index_on_node == g->index)
            return i;
    return -1;
}

static nvmlReturn_t count(unsigned int *deviceCount)
{
    if (!deviceCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    *deviceCount = (unsigned)ngpus;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    NVML_CALL(count(deviceCount));
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
    NVML_CALL(count(deviceCount));
}

static nvmlReturn_t handle_out(const struct nvml_gpu *g, nvmlDevice_t *device)
{
    if (!g)
        return NVML_ERROR_NOT_FOUND;
    *device = (nvmlDevice_t)(uintptr_t)g;
    return NVML_SUCCESS;
}

static nvmlReturn_t by_index(unsigned int index, nvmlDevice_t *device)
{
    if (!device || index >= (unsigned)ngpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    return handle_out(&gpus[index], device);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    NVML_CALL(by_index(index, device));
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    NVML_CALL(by_index(index, device));
}

void nvml_uuid_format(const struct nvml_gpu *g, char out[NVML_DEVICE_UUID_ASCII_LEN])
{
    const unsigned char *u = (const unsigned char *)g->prop.uuid.bytes;
    snprintf(out, NVML_DEVICE_UUID_ASCII_LEN,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    NVML_ENTER();
    if (!uuid || !device)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    const struct nvml_gpu *found = NULL;
    for (int i = 0; i < ngpus && !found; i++) {
        char s[NVML_DEVICE_UUID_ASCII_LEN];
        nvml_uuid_format(&gpus[i], s);
        if (strcasecmp(s, uuid) == 0)
            found = &gpus[i];
    }
    NVML_RETURN(handle_out(found, device));
}

/* "domain:bus:device.function" or "bus:device.function", hexadecimal. */
static int parse_bus_id(const char *s, unsigned *domain, unsigned *bus, unsigned *dev)
{
    unsigned v[3], fn;
    int n = 0;
    char end;
    while (isspace((unsigned char)*s))
        s++;
    if (sscanf(s, "%x:%x:%x.%x%c", &v[0], &v[1], &v[2], &fn, &end) == 4)
        n = 3;
    else if (sscanf(s, "%x:%x.%x%c", &v[1], &v[2], &fn, &end) == 3)
        n = 2, v[0] = 0;
    if (!n)
        return -1;
    *domain = v[0], *bus = v[1], *dev = v[2];
    return 0;
}

static nvmlReturn_t by_pci_bus_id(const char *pciBusId, nvmlDevice_t *device)
{
    unsigned domain, bus, dev;
    if (!pciBusId || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (parse_bus_id(pciBusId, &domain, &bus, &dev) < 0)
        return NVML_ERROR_NOT_FOUND;
    const struct nvml_gpu *found = NULL;
    for (int i = 0; i < ngpus && !found; i++) {
        const struct cudaDeviceProp *p = &gpus[i].prop;
        if ((unsigned)p->pciDomainID == domain && (unsigned)p->pciBusID == bus && (unsigned)p->pciDeviceID == dev)
            found = &gpus[i];
    }
    return handle_out(found, device);
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    NVML_CALL(by_pci_bus_id(pciBusId, device));
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
    NVML_CALL(by_pci_bus_id(pciBusId, device));
}

/* ---- PCI identity ---- */

void nvml_pci_format(nvmlPciInfo_t *pci)
{
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT, pci->domain & 0xffff,
             pci->bus, pci->device);
    snprintf(pci->busId, sizeof pci->busId, NVML_DEVICE_PCI_BUS_ID_FMT, pci->domain, pci->bus, pci->device);
}

void nvml_gpu_pci(const struct nvml_gpu *g, nvmlPciInfo_t *pci, int legacy)
{
    nvmlPciInfo_t p;
    memset(&p, 0, sizeof p);
    p.domain = (unsigned)g->prop.pciDomainID;
    p.bus = (unsigned)g->prop.pciBusID;
    p.device = (unsigned)g->prop.pciDeviceID;
    p.pciDeviceId = g->prop.gpuPciDeviceID;
    p.pciSubSystemId = g->prop.gpuPciSubsystemID;
    nvml_pci_format(&p);
    memcpy(pci, &p, legacy ? offsetof(nvmlPciInfo_t, busId) : sizeof p);
}

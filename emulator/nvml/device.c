/* What a GPU is: name, UUID, serial, PCI identity, architecture, and the
 * modes an administrator sets (persistence, compute mode, ECC, MIG, display),
 * as on a data-centre node: persistence on, default compute mode, ECC as the
 * hwspec says, MIG off, no display. */
#include "nvml_impl.h"

#include <stdio.h>
#include <string.h>

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    NVML_ENTER_GPU(device);
    NVML_RETURN(nvml_put_string(name, length, g->prop.name));
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    NVML_ENTER_GPU(device);
    char s[NVML_DEVICE_UUID_ASCII_LEN];
    nvml_uuid_format(g, s);
    NVML_RETURN(nvml_put_string(uuid, length, s));
}

/* Real boards carry a 13-digit serial number; the emulated GPU's is made
 * from its index in the job (node * gpus_per_node + index on the node), so
 * that it is unique and stable. */
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char *serial, unsigned int length)
{
    NVML_ENTER_GPU(device);
    const struct emu_config *cfg = emu_config();
    char s[32];
    snprintf(s, sizeof s, "1650%09d", cfg->node * cfg->gpus_per_node + g->index);
    NVML_RETURN(nvml_put_string(serial, length, s));
}

static nvmlReturn_t put_uint(unsigned int *out, unsigned int v)
{
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    *out = v;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    NVML_ENTER_GPU(device);
    NVML_RETURN(put_uint(index, (unsigned)g->index));
}

/* /dev/nvidiaN: N is the GPU's index on the node. */
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)
{
    NVML_ENTER_GPU(device);
    NVML_RETURN(put_uint(minorNumber, (unsigned)g->index));
}

/* One GPU per board: the board is named by its PCI location. */
nvmlReturn_t nvmlDeviceGetBoardId(nvmlDevice_t device, unsigned int *boardId)
{
    NVML_ENTER_GPU(device);
    const struct cudaDeviceProp *p = &g->prop;
    NVML_RETURN(put_uint(boardId, (unsigned)(p->pciDomainID << 16 | p->pciBusID << 8 | p->pciDeviceID)));
}

nvmlReturn_t nvmlDeviceGetMultiGpuBoard(nvmlDevice_t device, unsigned int *multiGpuBool)
{
    NVML_ENTER_GPU(device);
    NVML_RETURN(put_uint(multiGpuBool, g->prop.isMultiGpuBoard ? 1 : 0));
}

/* Data-centre GPUs report the NVIDIA brand since Ampere; Volta's were Teslas. */
nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t *type)
{
    NVML_ENTER_GPU(device);
    if (!type)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    *type = strncmp(g->prop.name, "Tesla", 5) == 0 ? NVML_BRAND_TESLA : NVML_BRAND_NVIDIA;
    NVML_RETURN(NVML_SUCCESS);
}

static unsigned architecture(const struct cudaDeviceProp *p)
{
    switch (p->major) {
    case 7: return p->minor >= 5 ? NVML_DEVICE_ARCH_TURING : NVML_DEVICE_ARCH_VOLTA;
    case 8: return p->minor == 9 ? NVML_DEVICE_ARCH_ADA : NVML_DEVICE_ARCH_AMPERE;
    case 9: return NVML_DEVICE_ARCH_HOPPER;
    case 10:
    case 12: return NVML_DEVICE_ARCH_BLACKWELL;
    }
    return NVML_DEVICE_ARCH_UNKNOWN;
}

nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t *arch)
{
    NVML_ENTER_GPU(device);
    NVML_RETURN(put_uint(arch, architecture(&g->prop)));
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    NVML_ENTER_GPU(device);
    if (!major || !minor)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    *major = g->prop.major;
    *minor = g->prop.minor;
    NVML_RETURN(NVML_SUCCESS);
}

/* CUDA cores: FP32 lanes per SM (64 on Volta and GA100, 128 on later
 * consumer-derived and Hopper/Blackwell SMs) times the SM count. */
nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int *numCores)
{
    NVML_ENTER_GPU(device);
    const struct cudaDeviceProp *p = &g->prop;
    unsigned per_sm = p->major < 8 || (p->major == 8 && p->minor == 0) ? 64 : 128;
    NVML_RETURN(put_uint(numCores, per_sm * (unsigned)p->multiProcessorCount));
}

static nvmlReturn_t pci_info(nvmlDevice_t device, nvmlPciInfo_t *pci, int legacy)
{
    const struct nvml_gpu *g = nvml_gpu(device);
    if (!g || !pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvml_gpu_pci(g, pci, legacy);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    NVML_CALL(pci_info(device, pci, 0));
}

/* The first two versions filled the older, shorter struct. */
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    NVML_CALL(pci_info(device, pci, 1));
}

nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    NVML_CALL(pci_info(device, pci, 1));
}

static nvmlReturn_t put_state(nvmlEnableState_t *out, nvmlEnableState_t v)
{
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    *out = v;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
    NVML_ENTER_GPU(device);
    NVML_RETURN(put_state(mode, NVML_FEATURE_ENABLED));
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode)
{
    NVML_ENTER_GPU(device);
    if (!mode)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    *mode = NVML_COMPUTEMODE_DEFAULT;
    NVML_RETURN(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current, nvmlEnableState_t *pending)
{
    NVML_ENTER_GPU(device);
    nvmlEnableState_t ecc = g->prop.ECCEnabled ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    if (!current || !pending)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    *current = *pending = ecc;
    NVML_RETURN(NVML_SUCCESS);
}

/* MIG exists on the A100, H100/H200 and B200 class (compute capability x.0
 * from 8.0 on); it is off. Other GPUs do not have it. */
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)
{
    NVML_ENTER_GPU(device);
    if (!currentMode || !pendingMode)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    if (g->prop.major < 8 || g->prop.minor != 0)
        NVML_RETURN(NVML_ERROR_NOT_SUPPORTED);
    *currentMode = *pendingMode = NVML_DEVICE_MIG_DISABLE;
    NVML_RETURN(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t *display)
{
    NVML_ENTER_GPU(device);
    NVML_RETURN(put_state(display, NVML_FEATURE_DISABLED));
}

nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t *isActive)
{
    NVML_ENTER_GPU(device);
    NVML_RETURN(put_state(isActive, NVML_FEATURE_DISABLED));
}

/* What the files of maya's NVML (libnvidia-ml.so.1) share: the node's GPUs
 * as NVML sees them, and the entry/exit of every implemented call.
 *
 * NVML sees every GPU of the emulated node (MAYA_GPUS_PER_NODE), whatever
 * CUDA_VISIBLE_DEVICES says, as on a real node: its index is the GPU's index
 * on the node and its handle (nvmlDevice_t) points at a struct nvml_gpu.
 * Calls work after nvmlInit* and until the matching nvmlShutdown. Loading the
 * library does nothing; NVML calls read the emulator's configuration but do
 * not start it (CUDA does), and are traced once it runs. */
#ifndef MAYA_NVML_IMPL_H
#define MAYA_NVML_IMPL_H

#include "emu.h"
#include "nvml_types.h"

#define NVML_GPU_MAGIC 0x6e766d6cu

struct nvml_gpu {
    uint32_t magic;
    int index;                   /* on the node: NVML's index and minor number */
    struct cudaDeviceProp prop;  /* the CUDA properties every process sees for it */
    const struct maya_gpu_spec *spec;
};

/* Start of every call but nvmlInit*, nvmlShutdown and nvmlErrorString:
 * NVML_ERROR_UNINITIALIZED when NVML is not initialised. */
nvmlReturn_t nvml_check_init(void);
/* Write the call's CALL record when the emulator runs (CUDA started in this
 * process; not in a child forked after that: the trace is the parent's). */
void nvml_trace(uint32_t api, uint64_t t0, nvmlReturn_t r);

#define NVML_ENTER() \
    nvmlReturn_t nvml_in_ = nvml_check_init(); \
    if (nvml_in_ != NVML_SUCCESS) \
        return nvml_in_; \
    uint64_t nvml_t0_ = emu_now()

#define NVML_RETURN(result) \
    do { \
        nvmlReturn_t nvml_r_ = (result); \
        nvml_trace(EMU_API_ID(__func__), nvml_t0_, nvml_r_); \
        return nvml_r_; \
    } while (0)

/* A call whose work is one expression giving its result. */
#define NVML_CALL(expr) \
    do { \
        NVML_ENTER(); \
        NVML_RETURN(expr); \
    } while (0)

/* Enter and resolve the device handle (INVALID_ARGUMENT if it is not one):
 * declares `const struct nvml_gpu *g`. */
#define NVML_ENTER_GPU(handle) \
    NVML_ENTER(); \
    const struct nvml_gpu *g = nvml_gpu(handle); \
    if (!g) \
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT)

/* The node's GPUs (valid while initialised). */
int nvml_gpu_count(void);
const struct nvml_gpu *nvml_gpu_at(int index);
/* A handle given out by this library, or NULL. */
const struct nvml_gpu *nvml_gpu(nvmlDevice_t handle);
/* The CUDA ordinal of the GPU in this process, -1 when it is not visible. */
int nvml_gpu_ordinal(const struct nvml_gpu *g);

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it. */
void nvml_uuid_format(const struct nvml_gpu *g, char out[NVML_DEVICE_UUID_ASCII_LEN]);

/* Copy a string into a caller's buffer of length bytes: INSUFFICIENT_SIZE
 * when it does not fit with its NUL, INVALID_ARGUMENT for NULL. */
nvmlReturn_t nvml_put_string(char *dst, unsigned int length, const char *src);

/* PCI identity of a GPU. legacy: only the fields of the old 36-byte prefix
 * (busIdLegacy .. pciSubSystemId) that nvmlDeviceGetPciInfo and _v2 callers
 * have room for. */
void nvml_gpu_pci(const struct nvml_gpu *g, nvmlPciInfo_t *pci, int legacy);
/* Fill pci from its fields: both bus id strings. */
void nvml_pci_format(nvmlPciInfo_t *pci);

#endif

/* Device memory and the processes using a GPU, from the emulator's memory
 * accounting: what cudaMemGetInfo says in this process. Other processes'
 * use of a GPU is not known here (each emulated rank is its own process):
 * a GPU this process does not use reads as unused. */
#include "nvml_impl.h"

#include <unistd.h>

/* Total and free as cudaMemGetInfo gives them; used is the rest. */
static void memory(const struct nvml_gpu *g, uint64_t *total, uint64_t *free_bytes)
{
    int ordinal = nvml_gpu_ordinal(g);
    *total = *free_bytes = g->prop.totalGlobalMem;
    if (ordinal >= 0)
        emu_mem_info(ordinal, free_bytes, total);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *m)
{
    NVML_ENTER_GPU(device);
    if (!m)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    uint64_t total, free_bytes;
    memory(g, &total, &free_bytes);
    m->total = total;
    m->free = free_bytes;
    m->used = total - free_bytes;
    NVML_RETURN(NVML_SUCCESS);
}

/* The driver keeps no memory of its own on an emulated GPU: reserved is 0. */
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *m)
{
    NVML_ENTER_GPU(device);
    if (!m)
        NVML_RETURN(NVML_ERROR_INVALID_ARGUMENT);
    if (m->version != nvmlMemory_v2)
        NVML_RETURN(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    uint64_t total, free_bytes;
    memory(g, &total, &free_bytes);
    m->total = total;
    m->reserved = 0;
    m->free = free_bytes;
    m->used = total - free_bytes;
    NVML_RETURN(NVML_SUCCESS);
}

/* This process, if it uses the GPU: its primary context is current
 * somewhere (cudaSetDevice makes it) or retained (cuDevicePrimaryCtxRetain),
 * or it holds memory there; with the memory it uses. In a child forked after
 * CUDA started, the CUDA state is the parent's: the child uses no GPU. */
static int this_process(const struct nvml_gpu *g, uint64_t *used)
{
    int ordinal = nvml_gpu_ordinal(g);
    if (ordinal < 0 || emu_started != 1)
        return 0;
    struct emu_device *d = emu_device(ordinal);
    uint64_t total, free_bytes;
    emu_mem_info(ordinal, &free_bytes, &total);
    *used = total - free_bytes;
    return __atomic_load_n(&d->primary_active, __ATOMIC_RELAXED) ||
           __atomic_load_n(&d->primary_refs, __ATOMIC_RELAXED) > 0 || *used > 0;
}

/* The list protocol: *infoCount holds the room in infos; too little room
 * gives INSUFFICIENT_SIZE with *infoCount set to what is needed. On success
 * *infoCount is the number of entries to write (this process or none). */
static nvmlReturn_t process_list(const struct nvml_gpu *g, unsigned int *infoCount, const void *infos,
                                 uint64_t *used)
{
    if (!infoCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned n = this_process(g, used) ? 1 : 0;
    if (*infoCount < n) {
        *infoCount = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (n && !infos)
        return NVML_ERROR_INVALID_ARGUMENT;
    *infoCount = n;
    return NVML_SUCCESS;
}

#define NO_MIG 0xFFFFFFFFu /* GPU and compute instance ids without MIG */

static nvmlReturn_t processes(nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v2_t *infos)
{
    const struct nvml_gpu *g = nvml_gpu(device);
    uint64_t used = 0;
    nvmlReturn_t r = g ? process_list(g, infoCount, infos, &used) : NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS && *infoCount)
        infos[0] = (nvmlProcessInfo_v2_t){ (unsigned)getpid(), used, NO_MIG, NO_MIG };
    return r;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
    NVML_CALL(processes(device, infoCount, infos));
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos)
{
    NVML_CALL(processes(device, infoCount, infos));
}

/* The first version's entries are {pid, usedGpuMemory} only. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos)
{
    NVML_ENTER_GPU(device);
    uint64_t used = 0;
    nvmlReturn_t r = process_list(g, infoCount, infos, &used);
    if (r == NVML_SUCCESS && *infoCount)
        infos[0] = (nvmlProcessInfo_v1_t){ (unsigned)getpid(), used };
    NVML_RETURN(r);
}

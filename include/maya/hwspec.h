/* GPU and cluster descriptions (hwspecs/ directory, libconfuse syntax).
 *
 * A GPU file holds every field of the CUDA 13 struct cudaDeviceProp (in a
 * `props` section, one key per field, same names) and the performance figures
 * the estimator needs (a `perf` section). A cluster file describes nodes: how
 * many GPUs each has, how they are linked, and the NICs between nodes.
 * See man/maya-hwspec.5 for the syntax, and hwspecs/gpus/h100-sxm.conf.
 */
#ifndef MAYA_HWSPEC_H
#define MAYA_HWSPEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <driver_types.h> /* struct cudaDeviceProp (CUDA 13 toolkit headers) */

/* Every field of struct cudaDeviceProp, in header order, with the shape of its
 * value in the file: STR (string), UUID (string "GPU-xxxxxxxx-..."), INT,
 * UINT, SIZE (bytes), INT2/INT3 (lists of 2 or 3 integers). `reserved` is not
 * listed. The parser, `maya hwspecs show` and the emulator all walk this list. */
#define MAYA_DEVICE_PROP_FIELDS(X) \
    X(STR, name) \
    X(UUID, uuid) \
    X(STR, luid) \
    X(UINT, luidDeviceNodeMask) \
    X(SIZE, totalGlobalMem) \
    X(SIZE, sharedMemPerBlock) \
    X(INT, regsPerBlock) \
    X(INT, warpSize) \
    X(SIZE, memPitch) \
    X(INT, maxThreadsPerBlock) \
    X(INT3, maxThreadsDim) \
    X(INT3, maxGridSize) \
    X(SIZE, totalConstMem) \
    X(INT, major) \
    X(INT, minor) \
    X(SIZE, textureAlignment) \
    X(SIZE, texturePitchAlignment) \
    X(INT, multiProcessorCount) \
    X(INT, integrated) \
    X(INT, canMapHostMemory) \
    X(INT, maxTexture1D) \
    X(INT, maxTexture1DMipmap) \
    X(INT2, maxTexture2D) \
    X(INT2, maxTexture2DMipmap) \
    X(INT3, maxTexture2DLinear) \
    X(INT2, maxTexture2DGather) \
    X(INT3, maxTexture3D) \
    X(INT3, maxTexture3DAlt) \
    X(INT, maxTextureCubemap) \
    X(INT2, maxTexture1DLayered) \
    X(INT3, maxTexture2DLayered) \
    X(INT2, maxTextureCubemapLayered) \
    X(INT, maxSurface1D) \
    X(INT2, maxSurface2D) \
    X(INT3, maxSurface3D) \
    X(INT2, maxSurface1DLayered) \
    X(INT3, maxSurface2DLayered) \
    X(INT, maxSurfaceCubemap) \
    X(INT2, maxSurfaceCubemapLayered) \
    X(SIZE, surfaceAlignment) \
    X(INT, concurrentKernels) \
    X(INT, ECCEnabled) \
    X(INT, pciBusID) \
    X(INT, pciDeviceID) \
    X(INT, pciDomainID) \
    X(INT, tccDriver) \
    X(INT, asyncEngineCount) \
    X(INT, unifiedAddressing) \
    X(INT, memoryBusWidth) \
    X(INT, l2CacheSize) \
    X(INT, persistingL2CacheMaxSize) \
    X(INT, maxThreadsPerMultiProcessor) \
    X(INT, streamPrioritiesSupported) \
    X(INT, globalL1CacheSupported) \
    X(INT, localL1CacheSupported) \
    X(SIZE, sharedMemPerMultiprocessor) \
    X(INT, regsPerMultiprocessor) \
    X(INT, managedMemory) \
    X(INT, isMultiGpuBoard) \
    X(INT, multiGpuBoardGroupID) \
    X(INT, hostNativeAtomicSupported) \
    X(INT, pageableMemoryAccess) \
    X(INT, concurrentManagedAccess) \
    X(INT, computePreemptionSupported) \
    X(INT, canUseHostPointerForRegisteredMem) \
    X(INT, cooperativeLaunch) \
    X(SIZE, sharedMemPerBlockOptin) \
    X(INT, pageableMemoryAccessUsesHostPageTables) \
    X(INT, directManagedMemAccessFromHost) \
    X(INT, maxBlocksPerMultiProcessor) \
    X(INT, accessPolicyMaxWindowSize) \
    X(SIZE, reservedSharedMemPerBlock) \
    X(INT, hostRegisterSupported) \
    X(INT, sparseCudaArraySupported) \
    X(INT, hostRegisterReadOnlySupported) \
    X(INT, timelineSemaphoreInteropSupported) \
    X(INT, memoryPoolsSupported) \
    X(INT, gpuDirectRDMASupported) \
    X(UINT, gpuDirectRDMAFlushWritesOptions) \
    X(INT, gpuDirectRDMAWritesOrdering) \
    X(UINT, memoryPoolSupportedHandleTypes) \
    X(INT, deferredMappingCudaArraySupported) \
    X(INT, ipcEventSupported) \
    X(INT, clusterLaunch) \
    X(INT, unifiedFunctionPointers) \
    X(INT, deviceNumaConfig) \
    X(INT, deviceNumaId) \
    X(INT, mpsEnabled) \
    X(INT, hostNumaId) \
    X(UINT, gpuPciDeviceID) \
    X(UINT, gpuPciSubsystemID) \
    X(INT, hostNumaMultinodeIpcSupported)

/* Performance figures (dense, no sparsity), from datasheets and measurements.
 * Units are in the names: tflops = 1e12 FLOP/s, gbps = 1e9 bytes/s. */
#define MAYA_GPU_PERF_FIELDS(X) \
    X(sm_clock_mhz)          /* boost clock the FLOP figures assume for CUDA cores */ \
    X(mem_clock_mhz)         /* memory clock (cudaDevAttrMemoryClockRate) */ \
    X(tensor_clock_mhz)      /* clock the tensor-core figures assume */ \
    X(fp64_tflops)           /* CUDA cores */ \
    X(fp64_tensor_tflops)    /* tensor cores (0 if none) */ \
    X(fp32_tflops) \
    X(tf32_tflops)           /* tensor cores, 0 if none */ \
    X(fp16_tflops)           /* tensor cores (V100: FP16 only) */ \
    X(bf16_tflops)           /* tensor cores, 0 if none */ \
    X(fp8_tflops)            /* tensor cores, 0 if none */ \
    X(int8_tops)             /* tensor cores */ \
    X(hbm_gbps)              /* datasheet memory bandwidth */ \
    X(hbm_measured_gbps)     /* achievable (STREAM-like copy); estimator uses this */ \
    X(l2_gbps)               /* L2 bandwidth, for small working sets */ \
    X(nvlink_gbps)           /* per GPU, per direction, all links together; 0 if none */ \
    X(nvlink_links) \
    X(pcie_gbps)             /* per direction, theoretical */ \
    X(pcie_h2d_gbps)         /* measured host-to-device (pinned) */ \
    X(pcie_d2h_gbps)         /* measured device-to-host (pinned) */ \
    X(launch_ns)             /* host cost of one kernel launch */ \
    X(kernel_floor_ns)       /* smallest device time of any kernel */ \
    X(tdp_watts)

/* Optional figures (absent: the default after the name): how the GPU is
 * run, for a description of a capped or clock-locked part (a 500 W H100).
 * maya_gpu_apply_limits turns them into the peaks the estimator uses. */
#define MAYA_GPU_PERF_LIMIT_FIELDS(X) \
    X(power_limit_watts, 0)     /* board power cap; 0 = tdp_watts (no cap) */ \
    X(sm_clock_limit_mhz, 0)    /* SM clock locked or capped at (nvidia-smi -lgc); 0 = none */ \
    X(static_power_share, 0.3)  /* share of tdp_watts that does not follow the SM clock */

struct maya_gpu_perf {
#define MAYA_X_PERF(name) double name;
    MAYA_GPU_PERF_FIELDS(MAYA_X_PERF)
#undef MAYA_X_PERF
#define MAYA_X_PERF_LIMIT(name, def) double name;
    MAYA_GPU_PERF_LIMIT_FIELDS(MAYA_X_PERF_LIMIT)
#undef MAYA_X_PERF_LIMIT
};

#define MAYA_NAME_MAX 64

struct maya_gpu_spec {
    char key[MAYA_NAME_MAX];           /* "H100-SXM": the title in gpu "..." {} */
    char aliases[8][MAYA_NAME_MAX];    /* lower-case short names: "h100" */
    int naliases;
    char description[256];
    char file[512];                    /* where it was read from */
    struct cudaDeviceProp prop;        /* every field set from the file */
    struct maya_gpu_perf perf;
};

/* Most GPUs a node may have (cluster files check gpus_per_node against it). */
#define MAYA_NODE_GPUS_MAX 1024

enum maya_intra_link {
    MAYA_LINK_NVSWITCH,  /* every GPU reaches every other at full NVLink bandwidth */
    MAYA_LINK_PAIRWISE,  /* NVLink bridges between pairs; others go over PCIe */
    MAYA_LINK_PCIE,      /* PCIe only */
};

/* The cluster file's intra_node names: "nvswitch", "pairwise", "pcie". */
const char *maya_intra_link_name(enum maya_intra_link l);
/* 0 with *out set, or -1 when s is none of those names. */
int maya_intra_link_parse(const char *s, enum maya_intra_link *out);

struct maya_cluster_spec {
    char key[MAYA_NAME_MAX];           /* "dgx-h100" */
    char description[256];
    char file[512];
    char gpu[MAYA_NAME_MAX];           /* default GPU key; may be replaced by -g */
    int gpus_per_node;
    int nodes;                         /* default node count (0 = as many as needed) */
    enum maya_intra_link intra;
    double nvlink_gbps;                /* per GPU per direction; 0 = the GPU's figure */
    double intra_latency_us;           /* one hop inside a node */
    int nics_per_node;
    double nic_gbps;                   /* per NIC per direction */
    double nic_latency_us;             /* one hop between nodes */
    int nvls;                          /* NVLink SHARP all-reduce available (1/0) */
    double price_per_gpu_hour;         /* what one GPU-hour costs the site; 0 = not stated */
    double host_speed;                 /* the hosts' CPU speed relative to the emulating machine (1) */
    /* The NIC each GPU of a node sends through (index 0..nics_per_node-1,
     * by GPU index on the node): GPU i uses NIC i on rail-optimised DGX
     * nodes, pairs of GPUs share one behind a PCIe switch on DGX-1V. From
     * the file's nic_of_gpu list, else spread evenly (i * nics / gpus). */
    uint16_t nic_of_gpu[MAYA_NODE_GPUS_MAX];
};

/* The NIC (0..nics_per_node-1) GPU `local` of a node uses; 0 when the node
 * has no NICs or local is out of range. */
int maya_cluster_nic_of(const struct maya_cluster_spec *c, int local);

struct maya_hwspecs {
    struct maya_gpu_spec *gpus;
    size_t ngpus;
    struct maya_cluster_spec *clusters;
    size_t nclusters;
};

/* Load every *.conf under dir/gpus and dir/clusters. A malformed file fails
 * with "file:line: ..." naming what was expected. */
int maya_hwspecs_load_dir(const char *dir, struct maya_hwspecs *out);

/* Load one file (GPU or cluster sections) and append to out. On failure
 * out may hold more than before (free it with maya_hwspecs_free). */
int maya_hwspecs_load_file(const char *path, struct maya_hwspecs *out);

/* Load from the installed data directory (share/maya/hwspecs, or
 * MAYA_HWSPEC_DIR), located relative to the object containing addr. */
int maya_hwspecs_load_default(const void *addr, struct maya_hwspecs *out);

void maya_hwspecs_free(struct maya_hwspecs *hw);

/* Find by key or alias, case-insensitively; NULL if absent. */
const struct maya_gpu_spec *maya_hwspecs_find_gpu(const struct maya_hwspecs *hw, const char *name);
const struct maya_cluster_spec *maya_hwspecs_find_cluster(const struct maya_hwspecs *hw, const char *name);

/* Comma-separated list of GPU keys and aliases, for error messages. */
void maya_hwspecs_gpu_names(const struct maya_hwspecs *hw, char *buf, size_t size);

/* Parse "<gpu>x<count>" (e.g. "h100x16", "A100-SXM4-80GBx8"): the GPU must be
 * known. On error, the message says what is allowed. */
int maya_parse_gpu_count(const struct maya_hwspecs *hw, const char *s,
                         const struct maya_gpu_spec **gpu, int *count);

/* The cluster to use for count GPUs of one kind when no cluster file is given:
 * the built-in default node of that GPU (a cluster named default-<key> if
 * present, else the first cluster whose gpu is this GPU, e.g. dgx-h100 for
 * H100-SXM, else 8 GPUs per node, NVSwitch, 8 NICs of 50 GB/s). */
int maya_default_cluster(const struct maya_hwspecs *hw, const struct maya_gpu_spec *gpu,
                         int count, struct maya_cluster_spec *out);

/* The clocks a GPU runs at under its description's limits (man
 * maya-hwspec(5), "Clocks and power"): the SM clock for CUDA-core work and
 * for tensor-core work, in MHz, each at most the clock its figures assume
 * (sm_clock_mhz, tensor_clock_mhz). Dynamic power follows C V^2 f with the
 * voltage roughly proportional to f in the boost range, so the part of the
 * board power that follows the clock goes as f^3: under a cap P the clock
 * is f0 * ((P/TDP - s) / (1 - s))^(1/3), s = static_power_share. Returns
 * 1 when a limit lowers a clock, else 0. */
int maya_gpu_clocks(const struct maya_gpu_spec *g, double *sm_mhz, double *tensor_mhz);
/* Scale g's compute peaks to the clocks its limits allow (memory, L2,
 * NVLink and PCIe figures stay: their clocks are their own) and clear the
 * limits, so that a second call changes nothing. */
void maya_gpu_apply_limits(struct maya_gpu_spec *g);
/* "SM clock 1661 MHz of 1980 ... (power limit 500 W of 700 W)" into buf,
 * or "" when no limit lowers a clock. */
void maya_gpu_limits_describe(const struct maya_gpu_spec *g, char *buf, size_t size);

/* Print a spec as the file syntax (for `maya hwspecs show`). */
void maya_gpu_spec_print(FILE *fp, const struct maya_gpu_spec *g);
void maya_cluster_spec_print(FILE *fp, const struct maya_cluster_spec *c);

#endif

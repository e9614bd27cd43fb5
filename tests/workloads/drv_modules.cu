// Driver-API module loading and launches, as Triton and hand-written
// driver code do them: load an image (cubin, fat binary or PTX, from the
// file named on the command line) with cuModuleLoadData, find kernels and a
// __device__ variable, read function attributes, and launch with
// kernelParams, with a packed parameter buffer (CU_LAUNCH_PARAM_BUFFER_*),
// with cuLaunchKernelEx and a cluster dimension, and cooperatively. Wrong
// uses must fail with the driver's error codes. Prints what it found.
//
// usage: drv_modules IMAGE_FILE
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_check.h"

struct Pair {
    int a;
    float b;
    double c;
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: drv_modules IMAGE_FILE\n");
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod = drv_setup(argv[1], &dev, &ctx);

    unsigned count = 0;
    CHECK(cuModuleGetFunctionCount(&count, mod));
    printf("functions=%u\n", count);
    CUfunction all[8] = { 0 };
    CHECK(cuModuleEnumerateFunctions(all, 1, mod)); // room for one: one is returned
    REQUIRE(all[0] != NULL && all[1] == NULL);
    CHECK(cuModuleEnumerateFunctions(all, count, mod));

    CUfunction scale, mixed, smem;
    CHECK(cuModuleGetFunction(&scale, mod, "scale"));
    CHECK(cuModuleGetFunction(&mixed, mod, "_Z5mixedidmc4PairPf"));
    CHECK(cuModuleGetFunction(&smem, mod, "_Z11smem_kernelPf"));
    CUfunction again;
    CHECK(cuModuleGetFunction(&again, mod, "scale"));
    if (again != scale) {
        fprintf(stderr, "cuModuleGetFunction gave two handles for one kernel\n");
        return 1;
    }
    int listed = 0;
    for (unsigned i = 0; i < count; i++)
        listed += all[i] == scale || all[i] == mixed || all[i] == smem;
    REQUIRE(listed == 3);
    EXPECT(cuModuleGetFunction(&again, mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
    const char *name = NULL;
    CHECK(cuFuncGetName(&name, mixed));
    printf("name=%s\n", name);

    int regs = -1, max_threads = -1, static_smem = -1, params = 0;
    size_t off = 0, size = 0;
    CHECK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, smem));
    CHECK(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, smem));
    CHECK(cuFuncGetAttribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, smem));
    while (cuFuncGetParamInfo(mixed, (size_t)params, &off, &size) == CUDA_SUCCESS)
        params++;
    CHECK(cuFuncGetParamInfo(mixed, 4, &off, &size)); // the struct
    printf("smem_kernel regs=%d max_threads=%d static_smem=%d\n", regs, max_threads, static_smem);
    printf("mixed params=%d p4_offset=%zu p4_size=%zu\n", params, off, size);
    CHECK(cuFuncSetAttribute(smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 << 10));
    EXPECT(cuFuncSetAttribute(smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 30),
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuFuncSetCacheConfig(scale, CU_FUNC_CACHE_PREFER_SHARED));
    int blocks = 0;
    CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, 256, 0));
    printf("occupancy scale@256=%d\n", blocks);

    CUdeviceptr counter;
    size_t counter_bytes = 0;
    CHECK(cuModuleGetGlobal(&counter, &counter_bytes, mod, "dev_counter"));
    int put[4] = { 7, 8, 9, 10 }, got[4] = { 0 };
    CHECK(cuMemcpyHtoD(counter, put, sizeof put));
    CHECK(cuMemcpyDtoH(got, counter, sizeof got));
    printf("global bytes=%zu roundtrip=%d,%d,%d,%d\n", counter_bytes, got[0], got[1], got[2], got[3]);

    CUdeviceptr x;
    CHECK(cuMemAlloc(&x, 1024 * sizeof(float)));
    CUstream stream;
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

    // kernelParams: an array of pointers to each argument
    float a = 2.5f;
    int n = 1000;
    void *scale_args[] = { &x, &a, &n };
    CHECK(cuLaunchKernel(scale, 4, 1, 1, 256, 1, 1, 0, stream, scale_args, NULL));

    // the packed parameter buffer, laid out as the kernel's parameters are
    struct {
        int i;
        int pad0;
        double d;
        size_t n;
        char c;
        char pad1[7];
        Pair p;
        float *out;
    } packed = { -3, 0, 0.125, (size_t)1 << 33, 'q', { 0 }, { 11, 1.5f, -2.25 }, (float *)x };
    size_t packed_bytes = sizeof packed;
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_bytes,
                      CU_LAUNCH_PARAM_END };
    CHECK(cuLaunchKernel(mixed, 1, 1, 1, 32, 1, 1, 0, stream, NULL, extra));

    // cuLaunchKernelEx with a cluster dimension
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = 2;
    attr.value.clusterDim.y = 1;
    attr.value.clusterDim.z = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = 8, cfg.gridDimY = 1, cfg.gridDimZ = 1;
    cfg.blockDimX = 128, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.sharedMemBytes = 4096;
    cfg.hStream = stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    void *smem_args[] = { &x };
    CHECK(cuLaunchKernelEx(&cfg, smem, smem_args, NULL));
    int clusters = 0;
    CHECK(cuOccupancyMaxActiveClusters(&clusters, smem, &cfg));
    printf("max active clusters=%d\n", clusters);

    // cooperative: a grid that fits on the GPU at once
    CHECK(cuLaunchCooperativeKernel(scale, 2, 1, 1, 128, 1, 1, 0, stream, scale_args));

    // wrong uses
    EXPECT(cuLaunchKernel(scale, 1, 1, 1, 2048, 1, 1, 0, stream, scale_args, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(scale, 1, 1, 1, 32, 1, 1, 0, stream, scale_args, extra), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(smem, 1, 1, 1, 256, 1, 1, 0, stream, smem_args, NULL), CUDA_ERROR_INVALID_VALUE);
    size_t short_bytes = 8;
    void *short_extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &short_bytes,
                            CU_LAUNCH_PARAM_END };
    EXPECT(cuLaunchKernel(mixed, 1, 1, 1, 32, 1, 1, 0, stream, NULL, short_extra), CUDA_ERROR_INVALID_VALUE);
    cfg.gridDimX = 7; // not a multiple of the cluster
    EXPECT(cuLaunchKernelEx(&cfg, smem, smem_args, NULL), CUDA_ERROR_INVALID_CLUSTER_SIZE);
    EXPECT(cuLaunchCooperativeKernel(scale, 1 << 20, 1, 1, 1024, 1, 1, 0, stream, scale_args),
           CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    CUmodule bad;
    const char garbage[] = "this is not a module image";
    EXPECT(cuModuleLoadData(&bad, garbage), CUDA_ERROR_INVALID_IMAGE);

    CHECK(cuStreamSynchronize(stream));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuMemFree(x));
    CHECK(cuModuleUnload(mod));
    EXPECT(cuModuleGetFunction(&again, mod, "scale"), CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("drv_modules: ok\n");
    return 0;
}

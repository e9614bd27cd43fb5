// Runtime errors as a program sees them.
//   errors            non-sticky errors: a failing call returns its error,
//                     cudaPeekAtLastError shows it without clearing,
//                     cudaGetLastError returns it once and clears it; a bad
//                     launch configuration is reported by cudaGetLastError;
//                     names and strings; an unsupported call returns
//                     cudaErrorNotSupported.
//   errors sticky     run with MAYA_INJECT_FAULT=2: the second launch faults;
//                     from then on every call returns cudaErrorIllegalAddress
//                     and cudaGetLastError cannot clear it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include "rt_check.h"

__global__ void touch(int *p)
{
    p[threadIdx.x] = threadIdx.x;
}

static int non_sticky()
{
    int n = 0;
    EXPECT(cudaGetDeviceCount(&n) == cudaSuccess && n > 0);
    EXPECT(cudaSetDevice(n + 5) == cudaErrorInvalidDevice);
    EXPECT(cudaPeekAtLastError() == cudaErrorInvalidDevice);
    EXPECT(cudaPeekAtLastError() == cudaErrorInvalidDevice); // peeking does not clear
    EXPECT(cudaGetLastError() == cudaErrorInvalidDevice);
    EXPECT(cudaGetLastError() == cudaSuccess); // reading does

    int *d;
    EXPECT(cudaMalloc(&d, 1024) == cudaSuccess);
    touch<<<1, 4096>>>(d); // more threads than a block may have
    EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration);
    EXPECT(cudaGetLastError() == cudaSuccess);
    touch<<<1, 256>>>(d);
    EXPECT(cudaGetLastError() == cudaSuccess);
    EXPECT(cudaDeviceSynchronize() == cudaSuccess);

    // The latest error wins.
    EXPECT(cudaFree((void *)0x1234) == cudaErrorInvalidValue);
    EXPECT(cudaMemcpy(d, d, 16, (cudaMemcpyKind)42) == cudaErrorInvalidMemcpyDirection);
    EXPECT(cudaGetLastError() == cudaErrorInvalidMemcpyDirection);

    EXPECT(strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);
    EXPECT(strcmp(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory") == 0);
    EXPECT(strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess") == 0);
    EXPECT(strcmp(cudaGetErrorString(cudaErrorIllegalAddress), "an illegal memory access was encountered") == 0);
    EXPECT(strcmp(cudaGetErrorName((cudaError_t)12345), "cudaErrorUnknown") == 0);

    // Exported but not emulated: a clear error, and the program goes on.
    cudaArray_t arr;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    EXPECT(cudaMallocArray(&arr, &desc, 16, 16, 0) == cudaErrorNotSupported);
    EXPECT(cudaMallocArray(&arr, &desc, 16, 16, 0) == cudaErrorNotSupported);
    EXPECT(cudaGetLastError() == cudaErrorNotSupported);
    EXPECT(cudaFree(d) == cudaSuccess);
    printf("errors: non-sticky: ok\n");
    return 0;
}

static int sticky()
{
    int *d;
    EXPECT(cudaMalloc(&d, 1024) == cudaSuccess);
    touch<<<1, 32>>>(d);
    EXPECT(cudaGetLastError() == cudaSuccess);
    touch<<<1, 32>>>(d); // faults (MAYA_INJECT_FAULT=2): reported afterwards
    EXPECT(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    EXPECT(cudaGetLastError() == cudaErrorIllegalAddress);
    EXPECT(cudaGetLastError() == cudaErrorIllegalAddress); // cannot be cleared
    EXPECT(cudaMalloc(&d, 16) == cudaErrorIllegalAddress);
    EXPECT(cudaPeekAtLastError() == cudaErrorIllegalAddress);
    printf("errors: sticky: ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    return argc > 1 && strcmp(argv[1], "sticky") == 0 ? sticky() : non_sticky();
}

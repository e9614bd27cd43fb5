// Holds MIB mebibytes of device memory (one allocation per 256 MiB) while
// it runs a kernel and a GEMM-sized loop of them over the first block, then
// frees them: a job whose peak memory is known, for checking what a report
// says of it on GPUs of several sizes.
//   mem_fill MIB     prints "mem_fill: MIB MiB held" (exit 1 if it does not fit)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "rt_check.h"

__global__ void touch(float *x, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = x[i] * 2.0f + 1.0f;
}

int main(int argc, char **argv)
{
    long mib = argc > 1 ? atol(argv[1]) : 0;
    if (argc != 2 || mib < 1) {
        fprintf(stderr, "usage: mem_fill MIB\n");
        return 2;
    }
    const size_t chunk = 256ul << 20;
    std::vector<void *> blocks;
    for (size_t left = (size_t)mib << 20; left > 0;) {
        size_t n = left < chunk ? left : chunk;
        void *p;
        cudaError_t e = cudaMalloc(&p, n);
        if (e != cudaSuccess) {
            fprintf(stderr, "mem_fill: %ld MiB do not fit: %s\n", mib, cudaGetErrorString(e));
            return 1;
        }
        blocks.push_back(p);
        left -= n;
    }
    for (int i = 0; i < 4; i++)
        touch<<<1024, 256>>>((float *)blocks[0], 16 << 20);
    CHECK(cudaDeviceSynchronize());
    for (void *p : blocks)
        CHECK(cudaFree(p));
    printf("mem_fill: %ld MiB held\n", mib);
    return 0;
}

// Device memory as the program sees it, on every visible device:
// cudaMemGetInfo's total is the GPU's memory and free + allocated stays
// equal to it across allocations and frees (cudaMalloc, cudaMallocAsync with
// its pool, managed); peer copies between devices move small data; an
// allocation past the capacity fails with cudaErrorMemoryAllocation and
// leaves the accounting as it was.
//   meminfo          prints "devices=N" and checks every device
//   meminfo oom      then asks for more than the device has
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include "rt_check.h"

static size_t used(size_t total)
{
    size_t f, t;
    CHECK(cudaMemGetInfo(&f, &t));
    EXPECT(t == total);
    return t - f;
}

static void check_device(int dev)
{
    CHECK(cudaSetDevice(dev));
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, dev));
    size_t f0, total;
    CHECK(cudaMemGetInfo(&f0, &total));
    EXPECT(total == p.totalGlobalMem);
    size_t base = total - f0;
    const size_t mb = 1 << 20;
    void *a, *b, *c;
    CHECK(cudaMalloc(&a, 256 * mb));
    EXPECT(used(total) == base + 256 * mb);
    CHECK(cudaMalloc(&b, 1000)); // rounded to the allocator's 512-byte granule
    EXPECT(used(total) == base + 256 * mb + 1024);
    CHECK(cudaMallocManaged(&c, 64 * mb));
    EXPECT(used(total) == base + 320 * mb + 1024);
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    EXPECT(used(total) == base + 256 * mb);

    // The pool keeps freed memory until the program synchronises.
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *x;
    CHECK(cudaMallocAsync(&x, 10 * mb, s));
    EXPECT(used(total) == base + 266 * mb);
    cudaMemPool_t pool;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
    size_t reserved = 0, in_use = 0;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &in_use));
    EXPECT(reserved == 10 * mb && in_use == 10 * mb);
    CHECK(cudaFreeAsync(x, s));
    EXPECT(used(total) == base + 266 * mb);
    CHECK(cudaStreamSynchronize(s));
    EXPECT(used(total) == base + 256 * mb);
    // With a release threshold the pool keeps up to that much.
    size_t keep = 64 * mb;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    CHECK(cudaMallocAsync(&x, 32 * mb, s));
    CHECK(cudaFreeAsync(x, s));
    CHECK(cudaStreamSynchronize(s));
    EXPECT(used(total) == base + 288 * mb);
    CHECK(cudaMallocAsync(&x, 16 * mb, s)); // reuses the reserve
    EXPECT(used(total) == base + 288 * mb);
    CHECK(cudaFreeAsync(x, s));
    CHECK(cudaMemPoolTrimTo(pool, 0));
    EXPECT(used(total) == base + 256 * mb);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(a));
    EXPECT(used(total) == base);
}

int main(int argc, char **argv)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("devices=%d\n", n);
    if (e == cudaErrorNoDevice)
        return 0;
    CHECK(e);
    for (int d = 0; d < n; d++)
        check_device(d);
    if (n >= 2) {
        int in[32], out[32], *p0, *p1;
        for (int i = 0; i < 32; i++)
            in[i] = 3 * i + 1;
        CHECK(cudaSetDevice(0));
        CHECK(cudaMalloc(&p0, sizeof in));
        CHECK(cudaMemcpy(p0, in, sizeof in, cudaMemcpyHostToDevice));
        CHECK(cudaSetDevice(1));
        CHECK(cudaMalloc(&p1, sizeof in));
        CHECK(cudaMemcpyPeer(p1, 1, p0, 0, sizeof in));
        CHECK(cudaMemcpy(out, p1, sizeof out, cudaMemcpyDeviceToHost));
        EXPECT(memcmp(in, out, sizeof in) == 0);
        CHECK(cudaFree(p1));
        CHECK(cudaSetDevice(0));
        CHECK(cudaFree(p0));
    }
    // Device memory is address space: a 60 GiB allocation costs no RAM.
    {
        CHECK(cudaSetDevice(0));
        size_t f, t;
        CHECK(cudaMemGetInfo(&f, &t));
        void *huge;
        size_t want = f / 4 * 3;
        CHECK(cudaMalloc(&huge, want));
        long pages = 0, rss = 0;
        FILE *st = fopen("/proc/self/statm", "r");
        EXPECT(st && fscanf(st, "%ld %ld", &pages, &rss) == 2);
        fclose(st);
        EXPECT((size_t)rss * 4096 < (1u << 30));
        CHECK(cudaFree(huge));
    }
    if (argc > 1 && strcmp(argv[1], "oom") == 0) {
        CHECK(cudaSetDevice(0));
        size_t f, t;
        CHECK(cudaMemGetInfo(&f, &t));
        void *keep, *big;
        CHECK(cudaMalloc(&keep, f / 2));
        EXPECT(cudaMalloc(&big, f) == cudaErrorMemoryAllocation);
        EXPECT(cudaGetLastError() == cudaErrorMemoryAllocation);
        size_t f2;
        CHECK(cudaMemGetInfo(&f2, &t));
        EXPECT(f2 == f - f / 2 - (f / 2) % 512 + ((f / 2) % 512 ? 0 : 0) || f2 + (f / 2 + 511) / 512 * 512 == f);
        CHECK(cudaFree(keep));
        printf("meminfo: oom reported\n");
    }
    printf("meminfo: ok\n");
    return 0;
}

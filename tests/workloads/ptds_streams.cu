// Built with --default-stream per-thread (tests/module.mk): the default
// stream of each host thread is its own per-thread stream, reached through
// the runtime's _ptsz/_ptds entry points. Two threads launch and copy on
// their default streams (one after the other); the legacy stream is still
// reachable explicitly.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <cuda_runtime.h>
#include "rt_check.h"

__global__ void inc(int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i]++;
}

static void work(int id)
{
    const int n = 1024;
    int *d, h[n];
    for (int i = 0; i < n; i++)
        h[i] = i * (id + 1);
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    inc<<<n / 256, 256>>>(d, n);
    CHECK(cudaGetLastError());
    int back[n];
    CHECK(cudaMemcpyAsync(back, d, sizeof back, cudaMemcpyDeviceToHost, 0));
    CHECK(cudaStreamSynchronize(0));
    // the launch is small and its input real: computed on the CPU, in
    // order on the thread's default stream before the copy back
    for (int i = 0; i < n; i++)
        if (back[i] != h[i] + 1) {
            fprintf(stderr, "thread %d: element %d is %d, a GPU gives %d\n", id, i, back[i], h[i] + 1);
            exit(1);
        }
    CHECK(cudaFree(d));
}

int main()
{
    // One thread after the other: each still has its own default stream, and
    // the trace's order is the same on every run (tests compare it).
    std::thread a(work, 0);
    a.join();
    std::thread b(work, 1);
    b.join();
    int *d;
    CHECK(cudaMalloc(&d, 4096));
    CHECK(cudaMemsetAsync(d, 0, 4096, cudaStreamLegacy));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(d));
    printf("ptds_streams: ok\n");
    return 0;
}

// CUDA events time what the emulated GPU would take (the emulator's device
// clock, core/device_clock.c): a 1 GiB host-to-device copy from pinned
// memory, a 1 GiB device-to-device copy, a run of kernels, and work on a
// second stream that waits for the first. Prints each elapsed time in ms,
// and what cudaEventQuery answers while the work runs and after.
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x) \
    do { \
        cudaError_t e_ = (x); \
        if (e_ != cudaSuccess) { \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            return 1; \
        } \
    } while (0)

__global__ void scale(float *x, size_t n, float a)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

int main()
{
    const size_t bytes = 1ull << 30, n = bytes / sizeof(float);
    float *host, *a, *b;
    CHECK(cudaMallocHost(&host, bytes));
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t e[6];
    for (int i = 0; i < 6; i++)
        CHECK(cudaEventCreate(&e[i]));
    float ms;

    CHECK(cudaEventRecord(e[0], s1));
    CHECK(cudaMemcpyAsync(a, host, bytes, cudaMemcpyHostToDevice, s1));
    CHECK(cudaEventRecord(e[1], s1));
    CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s1));
    CHECK(cudaEventRecord(e[2], s1));
    for (int i = 0; i < 10; i++)
        scale<<<(unsigned)((n + 255) / 256), 256, 0, s1>>>(a, n, 1.5f);
    CHECK(cudaEventRecord(e[3], s1));
    // s2 starts when s1's work so far is done, then copies back 1 GiB.
    CHECK(cudaStreamWaitEvent(s2, e[3], 0));
    CHECK(cudaEventRecord(e[4], s2));
    CHECK(cudaMemcpyAsync(host, b, bytes, cudaMemcpyDeviceToHost, s2));
    CHECK(cudaEventRecord(e[5], s2));
    // The copy back is still running when the host asks at once: not ready,
    // as on a GPU; a thread that asks again is answered done (it would have
    // polled until the GPU got there). Each thread is told once.
    printf("query_first=%d\n", (int)cudaEventQuery(e[5]));
    printf("query_again=%d\n", (int)cudaEventQuery(e[5]));
    CHECK(cudaEventRecord(e[5], s2));
    printf("query_rerecorded=%d\n", (int)cudaEventQuery(e[5]));
    CHECK(cudaEventSynchronize(e[5]));
    printf("query_synced=%d\n", (int)cudaEventQuery(e[5]));

    CHECK(cudaEventElapsedTime(&ms, e[0], e[1]));
    printf("h2d_ms=%.4f\n", ms);
    CHECK(cudaEventElapsedTime(&ms, e[1], e[2]));
    printf("d2d_ms=%.4f\n", ms);
    CHECK(cudaEventElapsedTime(&ms, e[2], e[3]));
    printf("kernels_ms=%.4f\n", ms);
    CHECK(cudaEventElapsedTime(&ms, e[3], e[4]));
    printf("wait_ms=%.4f\n", ms);
    CHECK(cudaEventElapsedTime(&ms, e[0], e[5]));
    printf("total_ms=%.4f\n", ms);
    return 0;
}

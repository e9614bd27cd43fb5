// Vector add: the smallest complete CUDA program. Copies two vectors to the
// device, launches a kernel, copies the result back, and checks what the host
// can check under emulation: a small probe buffer makes a round trip through
// device memory unchanged (small copies move real bytes), and every call
// succeeds. Kernels do
// not run under maya, so the sum itself is not checked there; on a real GPU
// (MAYA_CHECK_RESULT=1) it is.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t e_ = (call);                                                 \
        if (e_ != cudaSuccess) {                                                 \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,        \
                    cudaGetErrorString(e_));                                     \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    size_t bytes = n * sizeof(float);
    float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
    for (int i = 0; i < n; i++) {
        a[i] = i;
        b[i] = 2 * i;
    }
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, bytes));
    CHECK(cudaMalloc(&db, bytes));
    CHECK(cudaMalloc(&dc, bytes));
    CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
    int threads = 256, blocks = (n + threads - 1) / threads;
    vector_add<<<blocks, threads>>>(da, db, dc, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
    /* 1 KiB probe: under the emulator's copy threshold, so it really moves. */
    int probe[256], probe_back[256], *dprobe;
    for (int i = 0; i < 256; i++)
        probe[i] = i * 7 + 1;
    CHECK(cudaMalloc(&dprobe, sizeof probe));
    CHECK(cudaMemcpy(dprobe, probe, sizeof probe, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(probe_back, dprobe, sizeof probe, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(dprobe));
    int bad = 0;
    for (int i = 0; i < 256; i++)
        bad += probe_back[i] != probe[i];
    if (getenv("MAYA_CHECK_RESULT"))
        for (int i = 0; i < n; i++)
            bad += c[i] != a[i] + b[i];
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
    printf("vector_add n=%d blocks=%d threads=%d: %s\n", n, blocks, threads, bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}

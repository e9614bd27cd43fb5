// Kernels whose work is known by hand, for the kernel cost model (the work
// read from each kernel's own code): the test derives physical bounds on
// each predicted time from the sizes below (bytes / HBM bandwidth, FLOPs /
// tensor-core peak).
//   row_softmax      one block per row, three passes over the row (max, sum,
//                    write) in loops whose trip count is cols / blockDim
//   saxpy_grid       a grid-stride loop over n elements with a fixed grid
//   scale_guarded    one element per thread, guarded by i < n
//   wmma_gemm        a naive WMMA tensor-core GEMM (fp16 in, fp32 out),
//                    k-loop of K / 16 steps, timed with events (prints TFLOP/s)
//   adam_seeded      an optimizer step over n parameters whose largest integer
//                    argument is a seed, not a size
//   fma_chain        arithmetic-bound: iters dependent FMAs per element
// Sizes can be made smaller with argv[1] = scale divisor (default 1).
#include <cstdint>
#include <cuda_fp16.h>
#include <mma.h>

#include "rt_check.h"

using namespace nvcuda;

__global__ void row_softmax(const float *x, float *y, int cols)
{
    const float *row = x + (size_t)blockIdx.x * cols;
    float *out = y + (size_t)blockIdx.x * cols;
    __shared__ float red[32];
    float m = -1e30f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        m = fmaxf(m, row[c]);
    for (int o = 16; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = m;
    __syncthreads();
    m = red[0];
    for (int i = 1; i < (int)(blockDim.x >> 5); i++)
        m = fmaxf(m, red[i]);
    float s = 0;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += __expf(row[c] - m);
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = s;
    __syncthreads();
    s = 0;
    for (int i = 0; i < (int)(blockDim.x >> 5); i++)
        s += red[i];
    float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        out[c] = __expf(row[c] - m) * inv;
}

__global__ void saxpy_grid(float a, const float *x, float *y, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

__global__ void scale_guarded(const float *x, float *y, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = s * x[i];
}

// One warp per 16 x 16 output tile; A is M x K row-major, B is K x N
// column-major, C is M x N row-major.
__global__ void wmma_gemm(const half *a, const half *b, float *c, int m, int n, int k)
{
    int warp_m = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int warp_n = blockIdx.y * blockDim.y + threadIdx.y;
    if (warp_m * 16 >= m || warp_n * 16 >= n)
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < k; kk += 16) {
        wmma::load_matrix_sync(fa, a + (size_t)warp_m * 16 * k + kk, k);
        wmma::load_matrix_sync(fb, b + (size_t)warp_n * 16 * k + kk, k);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + (size_t)warp_m * 16 * n + warp_n * 16, acc, n, wmma::mem_row_major);
}

__global__ void adam_seeded(float *p, const float *g, float *m1, float *m2, float lr, float b1, float b2,
                            float eps, unsigned long long seed, int step, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float gi = g[i];
    float a = b1 * m1[i] + (1 - b1) * gi;
    float v = b2 * m2[i] + (1 - b2) * gi * gi;
    m1[i] = a;
    m2[i] = v;
    // stochastic rounding noise from the seed, as llm.c's AdamW does
    unsigned h = (unsigned)(seed ^ (unsigned long long)i) * 2654435761u;
    float noise = (h >> 8) * (1.0f / 16777216.0f) * 1e-7f;
    p[i] -= lr * (a / (sqrtf(v) + eps) + noise) * (float)step;
}

__global__ void fma_chain(float *x, int iters, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i], w = v * 0.5f;
    for (int t = 0; t < iters; t++) {
        v = fmaf(v, 1.0001f, w);
        w = fmaf(w, 0.9999f, v);
    }
    x[i] = v + w;
}

#ifndef KERNEL_WORK_KERNELS_ONLY /* bench/kwork_first_launch.cu times these kernels' first launches */
int main(int argc, char **argv)
{
    int div = argc > 1 ? atoi(argv[1]) : 1;
    if (div < 1)
        div = 1;
    // row softmax: 16384 rows x 8192 columns of fp32 (512 MiB each way)
    int rows = 16384 / div, cols = 8192;
    float *x, *y;
    CHECK(cudaMalloc(&x, (size_t)rows * cols * 4));
    CHECK(cudaMalloc(&y, (size_t)rows * cols * 4));
    row_softmax<<<rows, 256>>>(x, y, cols);
    CHECK(cudaGetLastError());

    // saxpy over 2^28 / div elements with 132 x 4 blocks of 256 threads
    long long n = (1ll << 28) / div;
    float *sx, *sy;
    CHECK(cudaMalloc(&sx, n * 4));
    CHECK(cudaMalloc(&sy, n * 4));
    saxpy_grid<<<528, 256>>>(2.0f, sx, sy, n);
    CHECK(cudaGetLastError());

    // guarded scale over the same arrays, one thread per element
    int ns = (int)n;
    scale_guarded<<<(ns + 255) / 256, 256>>>(sx, sy, 3.0f, ns);
    CHECK(cudaGetLastError());

    // WMMA GEMM: 4096^3 / div in M (fp16 in, fp32 out)
    int gm = 4096 / div, gn = 4096, gk = 4096;
    half *ga, *gb;
    float *gc;
    CHECK(cudaMalloc(&ga, (size_t)gm * gk * 2));
    CHECK(cudaMalloc(&gb, (size_t)gk * gn * 2));
    CHECK(cudaMalloc(&gc, (size_t)gm * gn * 4));
    dim3 gblock(128, 4), ggrid((gm / 16 + 3) / 4, (gn / 16 + 3) / 4);
    // timed with events, as GEMM samples report their TFLOP/s (under maya
    // the events time what the emulated GPU would take)
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    CHECK(cudaEventRecord(e0));
    wmma_gemm<<<ggrid, gblock>>>(ga, gb, gc, gm, gn, gk);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    printf("wmma_gemm: %.1f TFLOP/s\n", 2.0 * gm * gn * gk / (ms * 1e-3) / 1e12);

    // Adam over n parameters, with a seed far larger than n
    float *p, *g, *m1, *m2;
    CHECK(cudaMalloc(&p, n * 4));
    CHECK(cudaMalloc(&g, n * 4));
    CHECK(cudaMalloc(&m1, n * 4));
    CHECK(cudaMalloc(&m2, n * 4));
    adam_seeded<<<(unsigned)((n + 511) / 512), 512>>>(p, g, m1, m2, 1e-3f, 0.9f, 0.999f, 1e-8f,
                                                     0x9e3779b97f4a7c15ull, 7, n);
    CHECK(cudaGetLastError());

    // 1M elements x 4096 iterations x 2 FMAs: 2^33 FMAs, 17 GFLOP of fp32
    int nf = (1 << 20) / div;
    fma_chain<<<(nf + 255) / 256, 256>>>(sx, 4096, nf);
    CHECK(cudaGetLastError());

    CHECK(cudaDeviceSynchronize());
    printf("kernel_work: ok\n");
    return 0;
}
#endif

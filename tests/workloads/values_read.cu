// What the host reads back from the device, and whether it is right: a
// program that fills and reduces a small array on the GPU and checks what
// it copies back (exit code 1 if a value is wrong: small launches of
// real inputs are computed on the CPU from their PTX, docs/kernel-exec.md),
// with a warp-shuffle maximum and an atomic counter; then it reads values
// that are not computed (a launch larger than the bound, and a reduction
// of its output), which the report counts by what would have had to run.
//
//   values_read            small launches only: every read is right
//   values_read --large    also launches over 64 MiB (recorded only)
//   values_read --counts   also reads 8 "experts' token counts" that a launch
//                          over 64 MiB wrote (recorded only): what a router's
//                          counts are is for MAYA_VALUES to say
#include <cstring>
#include <vector>

#include "rt_check.h"

__global__ void fill_kernel(int *x, int n, int v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = v;
}

// Reads x (a pointer not declared const) and writes y.
__global__ void copy_kernel(int *x, int *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i];
}

__global__ void warp_max(const float *x, int n, float *out, unsigned *count)
{
    float v = threadIdx.x < n ? x[threadIdx.x] : -1e30f;
    for (int o = 16; o > 0; o /= 2)
        v = fmaxf(v, __shfl_down_sync(0xffffffff, v, o));
    if (threadIdx.x == 0)
        *out = v;
    atomicAdd(count, 1u);
}

__global__ void sum_kernel(const int *x, int n, int *out)
{
    __shared__ int part[256];
    int t = threadIdx.x, s = 0;
    for (int i = t; i < n; i += blockDim.x)
        s += x[i];
    part[t] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (t < w)
            part[t] += part[t + w];
        __syncthreads();
    }
    if (t == 0)
        *out = part[0];
}

int main(int argc, char **argv)
{
    int large = argc > 1 && strcmp(argv[1], "--large") == 0;
    int counts = argc > 1 && strcmp(argv[1], "--counts") == 0;
    const int n = 64;
    int host[n], back[n];
    for (int i = 0; i < n; i++)
        host[i] = 3 * i + 1;
    int *a, *b, *out;
    CHECK(cudaMalloc(&a, n * sizeof(int)));
    CHECK(cudaMalloc(&b, n * sizeof(int)));
    CHECK(cudaMalloc(&out, sizeof(int)));

    // real: a copy in, a copy on the device, a copy back
    CHECK(cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, a, sizeof host, cudaMemcpyDeviceToDevice));
    CHECK(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(back[i] == 3 * i + 1);
    // real: a memset read back
    CHECK(cudaMemset(out, 0x7f, sizeof(int)));
    int v = 0;
    CHECK(cudaMemcpy(&v, out, sizeof v, cudaMemcpyDeviceToHost));
    EXPECT(v == 0x7f7f7f7f);

    // computed: a fill and a sum of it (a barrier and shared memory)
    fill_kernel<<<1, n>>>(b, n, 5);
    sum_kernel<<<1, 256>>>(b, n, out);
    CHECK(cudaMemcpy(&v, out, sizeof v, cudaMemcpyDeviceToHost));
    printf("values_read: sum of the filled array: %d (a GPU gives %d)\n", v, 5 * n);
    EXPECT(v == 5 * n);
    CHECK(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(back[i] == 5);

    // computed: a warp's maximum by shuffles, and an atomic count
    float xs[20], best = 0;
    for (int i = 0; i < 20; i++)
        xs[i] = (float)((i * 7) % 20) - 3.5f;
    float *xd, *md;
    unsigned *cd, count = 0;
    CHECK(cudaMalloc(&xd, sizeof xs));
    CHECK(cudaMalloc(&md, sizeof(float)));
    CHECK(cudaMalloc(&cd, sizeof(unsigned)));
    CHECK(cudaMemcpy(xd, xs, sizeof xs, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(cd, 0, sizeof(unsigned)));
    warp_max<<<1, 32>>>(xd, 20, md, cd);
    CHECK(cudaMemcpy(&best, md, sizeof best, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&count, cd, sizeof count, cudaMemcpyDeviceToHost));
    printf("values_read: warp maximum %.1f, count %u (a GPU gives 15.5, 32)\n", best, count);
    EXPECT(best == 15.5f && count == 32);

    // made real again by a copy: its read is not counted
    CHECK(cudaMemcpy(b, host, sizeof host, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(back[i] == 3 * i + 1);

    if (large) {
        // A launch past the bound (MAYA_EXEC_THREADS): recorded, not
        // computed; its bytes read back are counted, and so is a small sum
        // of them (its input is not real, so it is not computed either).
        const int big = 16 << 20;
        int *c;
        CHECK(cudaMalloc(&c, big * sizeof(int)));
        fill_kernel<<<big / 256, 256>>>(c, big, 9);
        CHECK(cudaMemcpy(&v, c, sizeof v, cudaMemcpyDeviceToHost));
        printf("values_read: first of the large fill: %d (a GPU gives 9)\n", v);
        sum_kernel<<<1, 256>>>(c, n, out);
        CHECK(cudaMemcpy(&v, out, sizeof v, cudaMemcpyDeviceToHost));
        printf("values_read: sum of its first %d: %d (a GPU gives %d)\n", n, v, 9 * n);
        // A launch past the bound that only reads b: b stays real, its
        // read back is not counted.
        copy_kernel<<<big / 256, 256>>>(b, c, n);
        CHECK(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            EXPECT(back[i] == 3 * i + 1);
        CHECK(cudaFree(c));
    }
    if (counts) {
        const int big = 16 << 20;
        int *c, e[8], sum = 0;
        CHECK(cudaMalloc(&c, big * sizeof(int)));
        fill_kernel<<<big / 256, 256>>>(c, big, 1);
        CHECK(cudaMemcpy(e, c, sizeof e, cudaMemcpyDeviceToHost));
        printf("values_read: expert counts:");
        for (int i = 0; i < 8; i++) {
            printf(" %d", e[i]);
            sum += e[i];
        }
        printf(" (sum %d)\n", sum);
        CHECK(cudaFree(c));
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(out));
    CHECK(cudaFree(xd));
    CHECK(cudaFree(md));
    CHECK(cudaFree(cd));
    printf("values_read: ok\n");
    return 0;
}

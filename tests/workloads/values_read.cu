// What the host reads back from the device, and whether it is real: a
// program that checks values it copied back (exit code 1 if a value that
// only copies and memsets made is wrong), then reads values that kernels
// and a large copy would have computed (which the emulator does not
// compute: the report counts those reads by what would have had to run).
//
//   values_read            small copies, memsets, reads of kernel output
//   values_read --large    also one launch over 64 MiB (recorded only)
#include <cstring>
#include <vector>

#include "rt_check.h"

__global__ void fill_kernel(int *x, int n, int v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = v;
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

    // not computed: a fill and a sum, read back (each read is counted)
    fill_kernel<<<1, n>>>(b, n, 5);
    sum_kernel<<<1, 256>>>(b, n, out);
    CHECK(cudaMemcpy(&v, out, sizeof v, cudaMemcpyDeviceToHost));
    printf("values_read: sum of the filled array: %d (a GPU gives %d)\n", v, 5 * n);
    CHECK(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
    printf("values_read: filled array: %d %d ... (a GPU gives 5 5 ...)\n", back[0], back[1]);

    // made real again by a copy: its read is not counted
    CHECK(cudaMemcpy(b, host, sizeof host, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(back[i] == 3 * i + 1);

    if (large) {
        // A large launch: recorded, not computed, whatever the bound;
        // its first bytes read back are counted.
        const int big = 16 << 20;
        int *c;
        CHECK(cudaMalloc(&c, big * sizeof(int)));
        fill_kernel<<<big / 256, 256>>>(c, big, 9);
        CHECK(cudaMemcpy(&v, c, sizeof v, cudaMemcpyDeviceToHost));
        printf("values_read: first of the large fill: %d (a GPU gives 9)\n", v);
        CHECK(cudaFree(c));
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(out));
    printf("values_read: ok\n");
    return 0;
}

// What reading a kernel's work costs a rank at the kernel's first launch,
// timed in the process: each kernel of tests/workloads/kernel_work.cu is
// launched twice, and the first launch's host time less the second's is
// what the emulator spent reading the kernel (its layout, and its work
// from the SASS: through nvdisasm with an empty cache, from the cache
// once warm). Built with SASS only, as PyTorch's kernels come. Prints, for
// bench/kernel_work.sh to name:
//   first_launch_ms median=M max=X kernels=N
// (the median over the kernels of the difference; a warm-up kernel first
// takes the module's own first-use costs).
#define KERNEL_WORK_KERNELS_ONLY
#include "../tests/workloads/kernel_work.cu"

#include <algorithm>
#include <ctime>

__global__ void warm_up(float *x)
{
    x[threadIdx.x] = 0;
}

static double now_ms()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main()
{
    const int n = 4096;
    float *x, *y, *m1, *m2;
    half *a, *b;
    CHECK(cudaMalloc(&x, n * 4));
    CHECK(cudaMalloc(&y, n * 4));
    CHECK(cudaMalloc(&m1, n * 4));
    CHECK(cudaMalloc(&m2, n * 4));
    CHECK(cudaMalloc(&a, n * 2));
    CHECK(cudaMalloc(&b, n * 2));
    warm_up<<<1, 32>>>(x);
    CHECK(cudaDeviceSynchronize());
    double diff[6];
    for (int k = 0; k < 6; k++) {
        double t[3];
        for (int rep = 0; rep < 2; rep++) {
            double t0 = now_ms();
            switch (k) {
            case 0: row_softmax<<<4, 256>>>(x, y, 1024); break;
            case 1: saxpy_grid<<<4, 256>>>(2.0f, x, y, n); break;
            case 2: scale_guarded<<<16, 256>>>(x, y, 3.0f, n); break;
            case 3: wmma_gemm<<<dim3(1, 1), dim3(128, 4)>>>(a, b, y, 64, 64, 16); break;
            case 4: adam_seeded<<<8, 512>>>(x, y, m1, m2, 1e-3f, 0.9f, 0.999f, 1e-8f, 12345, 1, n); break;
            default: fma_chain<<<16, 256>>>(x, 16, n); break;
            }
            CHECK(cudaGetLastError());
            t[rep] = now_ms() - t0;
        }
        diff[k] = t[0] - t[1];
    }
    CHECK(cudaDeviceSynchronize());
    std::sort(diff, diff + 6);
    printf("first_launch_ms median=%.4f max=%.4f kernels=6\n", (diff[2] + diff[3]) / 2, diff[5]);
    return 0;
}

// Runs one of the hand-written GEMM kernels that fidelity/gemm_kernels.sh
// compiles from their own repository (waynehacking8/blackwell-tensorcore-
// kernels: src/gemm_naive.cu, gemm_tiled.cu, gemm_wmma.cu) on M = N = K =
// SIZE, as that repository's benchmark does: a first call (which also
// converts the inputs to fp16 once, for wmma), then timed calls, here each
// one between NVTX range_push("step") and range_pop, so that maya's report
// gives one call's time.
//
//   gemm_kernels_driver naive|tiled|wmma SIZE [STEPS]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

void launch_naive(const float *, const float *, float *, int, int, int);
void launch_tiled(const float *, const float *, float *, int, int, int);
void launch_wmma(const float *, const float *, float *, int, int, int);

int main(int argc, char **argv)
{
    typedef void (*gemm_fn)(const float *, const float *, float *, int, int, int);
    gemm_fn fn = NULL;
    if (argc >= 3 && !strcmp(argv[1], "naive"))
        fn = launch_naive;
    else if (argc >= 3 && !strcmp(argv[1], "tiled"))
        fn = launch_tiled;
    else if (argc >= 3 && !strcmp(argv[1], "wmma"))
        fn = launch_wmma;
    int n = argc >= 3 ? atoi(argv[2]) : 0, steps = argc >= 4 ? atoi(argv[3]) : 3;
    if (!fn || n <= 0 || n % 64 || steps <= 0) {
        fprintf(stderr, "usage: gemm_kernels_driver naive|tiled|wmma SIZE [STEPS] (SIZE a multiple of 64)\n");
        return 2;
    }
    size_t bytes = sizeof(float) * (size_t)n * n;
    float *a, *b, *c;
    if (cudaMalloc(&a, bytes) || cudaMalloc(&b, bytes) || cudaMalloc(&c, bytes) || cudaMemset(a, 0, bytes) ||
        cudaMemset(b, 0, bytes)) {
        fprintf(stderr, "gemm_kernels_driver: cannot allocate three %zu-byte matrices\n", bytes);
        return 1;
    }
    fn(a, b, c, n, n, n);
    for (int i = 0; i < steps; i++) {
        nvtxRangePushA("step");
        fn(a, b, c, n, n, n);
        nvtxRangePop();
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "gemm_kernels_driver: %s\n", cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

// cuBLAS GEMMs of several shapes and precisions, as a training step or a
// benchmark issues them: fp32 (Sgemm, with and without TF32 math), fp64,
// fp16 and bf16 through cublasGemmEx, strided-batched and pointer-array
// batched GEMMs, a GEMV, and a dot product the host reads back. Then
// arguments cuBLAS must refuse, each printed with the status it got.
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CHECK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CHECK_BLAS(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
    fprintf(stderr, "%s: %s\n", #x, cublasGetStatusName(s_)); exit(1); } } while (0)

static void *dev(size_t bytes)
{
    void *p;
    CHECK_CUDA(cudaMalloc(&p, bytes));
    return p;
}

int main()
{
    cublasHandle_t h;
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    CHECK_BLAS(cublasCreate(&h));
    CHECK_BLAS(cublasSetStream(h, stream));
    int version = 0;
    CHECK_BLAS(cublasGetVersion(h, &version));
    printf("cublas version %d\n", version);

    const float one = 1.0f, zero = 0.0f;
    const double oned = 1.0, zerod = 0.0;
    float *a = (float *)dev(1 << 22), *b = (float *)dev(1 << 22), *c = (float *)dev(1 << 22);

    // fp32: C[128x64] = A[128x32] B[32x64]
    CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 64, 32, &one, a, 128, b, 32, &zero, c, 128));
    // fp32 with A transposed, padded leading dimensions
    CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 96, 48, 200, &one, a, 256, b, 256, &zero, c, 128));
    // the same on TF32 tensor cores
    CHECK_BLAS(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 1024, 512, 256, &one, a, 1024, b, 512, &zero, c, 1024));
    CHECK_BLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    // fp64
    CHECK_BLAS(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &oned, (double *)a, 64, (double *)b, 64,
                           &zerod, (double *)c, 64));
    // fp16 in and out, fp32 accumulation (a linear layer's forward)
    CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 768, 512, 256, &one, a, CUDA_R_16F, 256, b, CUDA_R_16F,
                            256, &zero, c, CUDA_R_16F, 768, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    // bf16 in, fp32 out
    CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1024, 256, 128, &one, a, CUDA_R_16BF, 1024, b,
                            CUDA_R_16BF, 128, &zero, c, CUDA_R_32F, 1024, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT_TENSOR_OP));
    // attention scores: 16 batched [64 x 64] x [64 x 64] in fp16, strided
    CHECK_BLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 64, 64, 64, &one, a, CUDA_R_16F, 64,
                                          64 * 64, b, CUDA_R_16F, 64, 64 * 64, &zero, c, CUDA_R_16F, 64, 64 * 64,
                                          16, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CHECK_BLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 32, 32, 16, &one, a, 32, 32 * 16, b, 16,
                                         16 * 32, &zero, c, 32, 32 * 32, 4));
    // batched over arrays of pointers
    float *ha[3], *hb[3], *hc[3];
    for (int i = 0; i < 3; i++)
        ha[i] = a + i * 1024, hb[i] = b + i * 1024, hc[i] = c + i * 1024;
    float **da = (float **)dev(sizeof ha), **db = (float **)dev(sizeof hb), **dc = (float **)dev(sizeof hc);
    CHECK_CUDA(cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dc, hc, sizeof hc, cudaMemcpyHostToDevice));
    CHECK_BLAS(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 8, 4, &one, da, 16, db, 4, &zero, dc, 16, 3));
    // matrix-vector: y[300] = A[300x200] x[200]
    CHECK_BLAS(cublasSgemv(h, CUBLAS_OP_N, 300, 200, &one, a, 300, b, 1, &zero, c, 1));

    // a dot product the host reads: the vectors come from the host
    float x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, y[8] = { 1, 1, 1, 1, 2, 2, 2, 2 }, dot = -1;
    CHECK_BLAS(cublasSetVector(8, sizeof(float), x, 1, a, 1));
    CHECK_BLAS(cublasSetVector(8, sizeof(float), y, 1, b, 1));
    CHECK_BLAS(cublasSdot(h, 8, a, 1, b, 1, &dot));
    float back[8] = { 0 };
    CHECK_BLAS(cublasGetVector(8, sizeof(float), a, 1, back, 1));
    printf("dot %g back %g\n", dot, back[7]);

    // arguments cuBLAS refuses
    printf("status lda_too_small %d\n",
           cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 64, 32, &one, a, 100, b, 32, &zero, c, 128));
    printf("status negative_m %d\n",
           cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 64, 32, &one, a, 128, b, 32, &zero, c, 128));
    printf("status bad_trans %d\n",
           cublasSgemm(h, (cublasOperation_t)7, CUBLAS_OP_N, 8, 8, 8, &one, a, 8, b, 8, &zero, c, 8));
    printf("status null_handle %d\n",
           cublasSgemm(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, a, 8, b, 8, &zero, c, 8));
    printf("status null_alpha %d\n",
           cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, NULL, a, 8, b, 8, &zero, c, 8));
    printf("status ldc_too_small %d\n",
           cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a, CUDA_R_16F, 64, b, CUDA_R_16F, 64, &zero,
                        c, CUDA_R_16F, 32, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    printf("status mixed_types %d\n",
           cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a, CUDA_R_16F, 64, b, CUDA_R_16BF, 64, &zero,
                        c, CUDA_R_32F, 64, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    printf("status bad_compute %d\n",
           cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a, CUDA_R_32F, 64, b, CUDA_R_32F, 64, &zero,
                        c, CUDA_R_32F, 64, (cublasComputeType_t)1234, CUBLAS_GEMM_DEFAULT));
    printf("status negative_batch %d\n",
           cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, a, 8, 64, b, 8, 64, &zero, c, 8,
                                     64, -2));
    printf("status misaligned_workspace %d\n", cublasSetWorkspace(h, (char *)c + 8, 4096));
    printf("status bad_pointer_mode %d\n", cublasSetPointerMode(h, (cublasPointerMode_t)5));
    printf("status set_vector_inc0 %d\n", cublasSetVector(8, sizeof(float), x, 0, a, 1));
    // an empty problem is not an error: nothing runs
    printf("status empty %d\n",
           cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 8, 8, &one, a, 8, b, 8, &zero, c, 8));

    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_BLAS(cublasDestroy(h));
    printf("gemm_cublas: ok\n");
    return 0;
}

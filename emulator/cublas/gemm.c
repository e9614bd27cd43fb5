/* The cuBLAS GEMM family: typed (S/D/C/Z/H), Ex, batched (arrays of
 * pointers), strided batched, the _64 forms, and GEMV as a GEMM with n = 1.
 * Each is checked as cuBLAS checks it and traced as one MAYA_REC_GEMM. */
#include <string.h>

#include "blas.h"
#include "gemm_record.h"

/* cuBLAS's compute type once the handle's math mode is applied: what the
 * kernel really accumulates in and whether tensor cores may round the
 * inputs (cublasSetMathMode). */
static int effective_compute(cublasHandle_t h, int compute, int atype)
{
    int mode = h->math_mode & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    switch (compute) {
    case CUBLAS_COMPUTE_32F:
        if (mode == CUBLAS_PEDANTIC_MATH)
            return CUBLAS_COMPUTE_32F_PEDANTIC;
        if (atype != CUDA_R_32F && atype != CUDA_C_32F)
            return compute;
        if (mode == CUBLAS_TF32_TENSOR_OP_MATH)
            return CUBLAS_COMPUTE_32F_FAST_TF32;
        if (mode == CUBLAS_FP32_EMULATED_BF16X9_MATH)
            return CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
        if (mode == CUBLAS_TENSOR_OP_MATH)
            return CUBLAS_COMPUTE_32F_FAST_16F;
        return compute;
    case CUBLAS_COMPUTE_64F:
        if (mode == CUBLAS_PEDANTIC_MATH)
            return CUBLAS_COMPUTE_64F_PEDANTIC;
        if (mode == CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)
            return CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT;
        return compute;
    case CUBLAS_COMPUTE_16F:
        return mode == CUBLAS_PEDANTIC_MATH ? CUBLAS_COMPUTE_16F_PEDANTIC : compute;
    default:
        return compute;
    }
}

static int is_complex(int dtype)
{
    switch (dtype) {
    case CUDA_C_16F: case CUDA_C_16BF: case CUDA_C_32F: case CUDA_C_64F: case CUDA_C_8I: case CUDA_C_8U:
    case CUDA_C_32I: case CUDA_C_32U:
        return 1;
    default:
        return 0;
    }
}

/* cublasGemmEx's table of supported (compute, A, B, C) combinations
 * (cuBLAS documentation, cublasGemmEx): 0 supported, else the status; the
 * scale type (alpha, beta) it implies goes to *scale. */
static cublasStatus_t ex_types(int compute, int a, int b, int c, int *scale)
{
    int cplx = is_complex(a);
#define ABC(x, y, z) (a == (x) && b == (y) && c == (z))
    switch (compute) {
    case CUBLAS_COMPUTE_16F: case CUBLAS_COMPUTE_16F_PEDANTIC:
        *scale = CUDA_R_16F;
        return ABC(CUDA_R_16F, CUDA_R_16F, CUDA_R_16F) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    case CUBLAS_COMPUTE_32I: case CUBLAS_COMPUTE_32I_PEDANTIC:
        *scale = CUDA_R_32I;
        return ABC(CUDA_R_8I, CUDA_R_8I, CUDA_R_32I) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC:
        *scale = cplx ? CUDA_C_32F : CUDA_R_32F;
        return ABC(CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF) || ABC(CUDA_R_16F, CUDA_R_16F, CUDA_R_16F) ||
               ABC(CUDA_R_8I, CUDA_R_8I, CUDA_R_32F) || ABC(CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F) ||
               ABC(CUDA_R_16F, CUDA_R_16F, CUDA_R_32F) || ABC(CUDA_R_32F, CUDA_R_32F, CUDA_R_32F) ||
               ABC(CUDA_C_8I, CUDA_C_8I, CUDA_C_32F) || ABC(CUDA_C_32F, CUDA_C_32F, CUDA_C_32F)
                   ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    case CUBLAS_COMPUTE_32F_FAST_16F: case CUBLAS_COMPUTE_32F_FAST_16BF: case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
        *scale = cplx ? CUDA_C_32F : CUDA_R_32F;
        return ABC(CUDA_R_32F, CUDA_R_32F, CUDA_R_32F) || ABC(CUDA_C_32F, CUDA_C_32F, CUDA_C_32F)
                   ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC: case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
        *scale = cplx ? CUDA_C_64F : CUDA_R_64F;
        return ABC(CUDA_R_64F, CUDA_R_64F, CUDA_R_64F) || ABC(CUDA_C_64F, CUDA_C_64F, CUDA_C_64F)
                   ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    default:
        return CUBLAS_STATUS_INVALID_VALUE;
    }
#undef ABC
}

static int64_t max1(int64_t v)
{
    return v > 1 ? v : 1;
}

/* The argument checks every cuBLAS GEMM makes (cuBLAS documentation,
 * cublas<t>gemm "Error Values"). */
static cublasStatus_t check_gemm(const struct blas_gemm *g)
{
    if (!blas_op_ok(g->transa) || !blas_op_ok(g->transb))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (g->lda < max1(g->transa == CUBLAS_OP_N ? g->m : g->k))
        return CUBLAS_STATUS_INVALID_VALUE;
    /* GEMV: ldb and ldc are the vector increments, any but 0 */
    if (g->matvec ? g->ldb == 0 || g->ldc == 0
                  : g->ldb < max1(g->transb == CUBLAS_OP_N ? g->k : g->n) || g->ldc < max1(g->m))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!g->alpha || !g->beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t blas_gemm_issue(cublasHandle_t h, uint32_t api, uint64_t t0, const struct blas_gemm *g)
{
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    if (!blas_handle_ok(h))
        st = CUBLAS_STATUS_NOT_INITIALIZED;
    else
        st = check_gemm(g);
    struct emu_stream *s = st == CUBLAS_STATUS_SUCCESS ? blas_stream(h) : NULL;
    if (st == CUBLAS_STATUS_SUCCESS && !blas_issue_ok(s))
        st = CUBLAS_STATUS_EXECUTION_FAILED;
    /* Nothing to compute: cuBLAS returns at once without a launch. */
    if (st != CUBLAS_STATUS_SUCCESS || g->m == 0 || g->n == 0 || g->batch == 0) {
        emu_trace_call(api, t0, st, 0, 0);
        return st;
    }
    struct maya_rec_gemm r;
    blas_gemm_rec_init(&r, MAYA_GEMM_CUBLAS);
    r.flags = (g->pointer_arrays ? MAYA_GEMM_POINTER_ARRAYS : 0) | (g->matvec ? MAYA_GEMM_MATVEC : 0);
    r.transa = g->transa;
    r.transb = g->transb;
    r.m = g->m, r.n = g->n, r.k = g->k;
    r.batch = g->batch;
    r.lda = g->lda, r.ldb = g->ldb, r.ldc = g->ldc, r.ldd = g->ldc;
    r.stride_a = g->stride_a, r.stride_b = g->stride_b, r.stride_c = g->stride_c, r.stride_d = g->stride_c;
    r.atype = g->atype, r.btype = g->btype, r.ctype = g->ctype, r.dtype = g->ctype;
    r.compute_type = effective_compute(h, g->compute_type, g->atype);
    r.scale_type = g->scale_type;
    r.epilogue = 1; /* CUBLASLT_EPILOGUE_DEFAULT: C = alpha op(A) op(B) + beta C */
    r.algo = g->algo;
    r.a = (uint64_t)(uintptr_t)g->a, r.b = (uint64_t)(uintptr_t)g->b;
    r.c = r.d = (uint64_t)(uintptr_t)g->c;
    r.workspace_bytes = blas_workspace_bytes(h);
    return emu_trace_op(api, t0, st, s, &r) == EMU_OK ? st : CUBLAS_STATUS_EXECUTION_FAILED;
}

/* A typed GEMM entry point: NAME(handle, transa, transb, m, n, k, alpha, A,
 * lda, B, ldb, beta, C, ldc), with INT the integer type (int or int64_t) and
 * T the element type. */
#define TYPED_GEMM(NAME, INT, T, DTYPE, COMPUTE, SCALE) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const T *alpha, const T *A, INT lda, const T *B, INT ldb, const T *beta, T *C, \
                        INT ldc) \
    { \
        BLAS_ENTER(); \
        struct blas_gemm g = { .transa = transa, .transb = transb, .m = m, .n = n, .k = k, .lda = lda, \
                               .ldb = ldb, .ldc = ldc, .batch = 1, .atype = DTYPE, .btype = DTYPE, \
                               .ctype = DTYPE, .compute_type = COMPUTE, .scale_type = SCALE, \
                               .algo = CUBLAS_GEMM_DEFAULT, .alpha = alpha, .beta = beta, .a = A, .b = B, \
                               .c = C }; \
        return blas_gemm_issue(handle, EMU_API_ID(__func__), emu_call_t0_, &g); \
    }

/* __half is declared for C++ only: the half-precision entry points take
 * its 2-byte storage. */
typedef struct { unsigned short x; } blas_half;

TYPED_GEMM(cublasSgemm_v2, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_GEMM(cublasSgemm_v2_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_GEMM(cublasDgemm_v2, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)
TYPED_GEMM(cublasDgemm_v2_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)
TYPED_GEMM(cublasCgemm_v2, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_GEMM(cublasCgemm_v2_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_GEMM(cublasCgemm3m, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_GEMM(cublasCgemm3m_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_GEMM(cublasZgemm_v2, int, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F, CUDA_C_64F)
TYPED_GEMM(cublasZgemm_v2_64, int64_t, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F, CUDA_C_64F)
TYPED_GEMM(cublasZgemm3m, int, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F, CUDA_C_64F)
TYPED_GEMM(cublasZgemm3m_64, int64_t, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F, CUDA_C_64F)
TYPED_GEMM(cublasHgemm, int, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F, CUDA_R_16F)
TYPED_GEMM(cublasHgemm_64, int64_t, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F, CUDA_R_16F)

/* Typed strided-batched GEMMs. */
#define TYPED_STRIDED(NAME, INT, T, DTYPE, COMPUTE, SCALE) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const T *alpha, const T *A, INT lda, long long strideA, const T *B, INT ldb, \
                        long long strideB, const T *beta, T *C, INT ldc, long long strideC, INT batchCount) \
    { \
        BLAS_ENTER(); \
        struct blas_gemm g = { .transa = transa, .transb = transb, .m = m, .n = n, .k = k, .lda = lda, \
                               .ldb = ldb, .ldc = ldc, .stride_a = strideA, .stride_b = strideB, \
                               .stride_c = strideC, .batch = batchCount, .atype = DTYPE, .btype = DTYPE, \
                               .ctype = DTYPE, .compute_type = COMPUTE, .scale_type = SCALE, \
                               .algo = CUBLAS_GEMM_DEFAULT, .alpha = alpha, .beta = beta, .a = A, .b = B, \
                               .c = C }; \
        return blas_gemm_issue(handle, EMU_API_ID(__func__), emu_call_t0_, &g); \
    }

TYPED_STRIDED(cublasSgemmStridedBatched, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_STRIDED(cublasSgemmStridedBatched_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_STRIDED(cublasDgemmStridedBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)
TYPED_STRIDED(cublasDgemmStridedBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)
TYPED_STRIDED(cublasCgemmStridedBatched, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_STRIDED(cublasCgemmStridedBatched_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_STRIDED(cublasCgemm3mStridedBatched, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_STRIDED(cublasCgemm3mStridedBatched_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_STRIDED(cublasZgemmStridedBatched, int, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F, CUDA_C_64F)
TYPED_STRIDED(cublasZgemmStridedBatched_64, int64_t, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F, CUDA_C_64F)
TYPED_STRIDED(cublasHgemmStridedBatched, int, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F, CUDA_R_16F)
TYPED_STRIDED(cublasHgemmStridedBatched_64, int64_t, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F, CUDA_R_16F)

/* Typed batched GEMMs over arrays of pointers. */
#define TYPED_BATCHED(NAME, INT, T, DTYPE, COMPUTE, SCALE) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const T *alpha, const T *const Aarray[], INT lda, const T *const Barray[], \
                        INT ldb, const T *beta, T *const Carray[], INT ldc, INT batchCount) \
    { \
        BLAS_ENTER(); \
        struct blas_gemm g = { .transa = transa, .transb = transb, .m = m, .n = n, .k = k, .lda = lda, \
                               .ldb = ldb, .ldc = ldc, .batch = batchCount, .atype = DTYPE, .btype = DTYPE, \
                               .ctype = DTYPE, .compute_type = COMPUTE, .scale_type = SCALE, \
                               .algo = CUBLAS_GEMM_DEFAULT, .pointer_arrays = 1, .alpha = alpha, \
                               .beta = beta, .a = Aarray, .b = Barray, .c = Carray }; \
        return blas_gemm_issue(handle, EMU_API_ID(__func__), emu_call_t0_, &g); \
    }

TYPED_BATCHED(cublasSgemmBatched, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_BATCHED(cublasSgemmBatched_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_BATCHED(cublasDgemmBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)
TYPED_BATCHED(cublasDgemmBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)
TYPED_BATCHED(cublasCgemmBatched, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_BATCHED(cublasCgemmBatched_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_BATCHED(cublasCgemm3mBatched, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_BATCHED(cublasCgemm3mBatched_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_BATCHED(cublasZgemmBatched, int, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F, CUDA_C_64F)
TYPED_BATCHED(cublasZgemmBatched_64, int64_t, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F, CUDA_C_64F)
TYPED_BATCHED(cublasHgemmBatched, int, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F, CUDA_R_16F)
TYPED_BATCHED(cublasHgemmBatched_64, int64_t, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F, CUDA_R_16F)

/* cublasGemmEx and friends: types chosen by the caller, checked against
 * cuBLAS's table. */
static cublasStatus_t ex_issue(cublasHandle_t handle, uint32_t api, uint64_t t0, struct blas_gemm *g)
{
    if (blas_handle_ok(handle)) {
        cublasStatus_t st = check_gemm(g);
        if (st == CUBLAS_STATUS_SUCCESS)
            st = ex_types(g->compute_type, g->atype, g->btype, g->ctype, &g->scale_type);
        if (st != CUBLAS_STATUS_SUCCESS) {
            emu_trace_call(api, t0, st, 0, 0);
            return st;
        }
    }
    return blas_gemm_issue(handle, api, t0, g);
}

#define GEMM_EX(NAME, INT) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const void *alpha, const void *A, cudaDataType Atype, INT lda, const void *B, \
                        cudaDataType Btype, INT ldb, const void *beta, void *C, cudaDataType Ctype, INT ldc, \
                        cublasComputeType_t computeType, cublasGemmAlgo_t algo) \
    { \
        BLAS_ENTER(); \
        struct blas_gemm g = { .transa = transa, .transb = transb, .m = m, .n = n, .k = k, .lda = lda, \
                               .ldb = ldb, .ldc = ldc, .batch = 1, .atype = Atype, .btype = Btype, \
                               .ctype = Ctype, .compute_type = computeType, .algo = algo, .alpha = alpha, \
                               .beta = beta, .a = A, .b = B, .c = C }; \
        return ex_issue(handle, EMU_API_ID(__func__), emu_call_t0_, &g); \
    }

GEMM_EX(cublasGemmEx, int)
GEMM_EX(cublasGemmEx_64, int64_t)

#define GEMM_STRIDED_EX(NAME, INT) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const void *alpha, const void *A, cudaDataType Atype, INT lda, long long strideA, \
                        const void *B, cudaDataType Btype, INT ldb, long long strideB, const void *beta, void *C, \
                        cudaDataType Ctype, INT ldc, long long strideC, INT batchCount, \
                        cublasComputeType_t computeType, cublasGemmAlgo_t algo) \
    { \
        BLAS_ENTER(); \
        struct blas_gemm g = { .transa = transa, .transb = transb, .m = m, .n = n, .k = k, .lda = lda, \
                               .ldb = ldb, .ldc = ldc, .stride_a = strideA, .stride_b = strideB, \
                               .stride_c = strideC, .batch = batchCount, .atype = Atype, .btype = Btype, \
                               .ctype = Ctype, .compute_type = computeType, .algo = algo, .alpha = alpha, \
                               .beta = beta, .a = A, .b = B, .c = C }; \
        return ex_issue(handle, EMU_API_ID(__func__), emu_call_t0_, &g); \
    }

GEMM_STRIDED_EX(cublasGemmStridedBatchedEx, int)
GEMM_STRIDED_EX(cublasGemmStridedBatchedEx_64, int64_t)

#define GEMM_BATCHED_EX(NAME, INT) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const void *alpha, const void *const Aarray[], cudaDataType Atype, INT lda, \
                        const void *const Barray[], cudaDataType Btype, INT ldb, const void *beta, \
                        void *const Carray[], cudaDataType Ctype, INT ldc, INT batchCount, \
                        cublasComputeType_t computeType, cublasGemmAlgo_t algo) \
    { \
        BLAS_ENTER(); \
        struct blas_gemm g = { .transa = transa, .transb = transb, .m = m, .n = n, .k = k, .lda = lda, \
                               .ldb = ldb, .ldc = ldc, .batch = batchCount, .atype = Atype, .btype = Btype, \
                               .ctype = Ctype, .compute_type = computeType, .algo = algo, .pointer_arrays = 1, \
                               .alpha = alpha, .beta = beta, .a = Aarray, .b = Barray, .c = Carray }; \
        return ex_issue(handle, EMU_API_ID(__func__), emu_call_t0_, &g); \
    }

GEMM_BATCHED_EX(cublasGemmBatchedEx, int)
GEMM_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)

/* cublasSgemmEx / cublasCgemmEx: fp32 (complex fp32) accumulation and
 * scaling, input and output types chosen by the caller. */
#define SGEMM_EX(NAME, INT, T, COMPUTE_CHECK) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const T *alpha, const void *A, cudaDataType Atype, INT lda, const void *B, \
                        cudaDataType Btype, INT ldb, const T *beta, void *C, cudaDataType Ctype, INT ldc) \
    { \
        BLAS_ENTER(); \
        struct blas_gemm g = { .transa = transa, .transb = transb, .m = m, .n = n, .k = k, .lda = lda, \
                               .ldb = ldb, .ldc = ldc, .batch = 1, .atype = Atype, .btype = Btype, \
                               .ctype = Ctype, .compute_type = CUBLAS_COMPUTE_32F, \
                               .algo = CUBLAS_GEMM_DEFAULT, .alpha = alpha, .beta = beta, .a = A, .b = B, \
                               .c = C }; \
        if (COMPUTE_CHECK) \
            return ex_issue(handle, EMU_API_ID(__func__), emu_call_t0_, &g); \
        cublasStatus_t st = blas_handle_ok(handle) ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_NOT_INITIALIZED; \
        emu_trace_call(EMU_API_ID(__func__), emu_call_t0_, st, 0, 0); \
        return st; \
    }

SGEMM_EX(cublasSgemmEx, int, float, !is_complex(Atype))
SGEMM_EX(cublasSgemmEx_64, int64_t, float, !is_complex(Atype))
SGEMM_EX(cublasCgemmEx, int, cuComplex, is_complex(Atype))
SGEMM_EX(cublasCgemmEx_64, int64_t, cuComplex, is_complex(Atype))
SGEMM_EX(cublasCgemm3mEx, int, cuComplex, is_complex(Atype))
SGEMM_EX(cublasCgemm3mEx_64, int64_t, cuComplex, is_complex(Atype))

/* GEMV: y = alpha op(A) x + beta y, A m x n. As a GEMM: M = rows of op(A),
 * N = 1, K = columns of op(A); the vector increments stand where the
 * leading dimensions of B and C would. */
static cublasStatus_t gemv_issue(cublasHandle_t handle, uint32_t api, uint64_t t0, int trans, int64_t m,
                                 int64_t n, const void *alpha, const void *A, int64_t lda, const void *x,
                                 int64_t incx, const void *beta, const void *y, int64_t incy, int64_t batch,
                                 int64_t stride_a, int64_t stride_x, int64_t stride_y, int dtype, int compute,
                                 int scale, int pointer_arrays)
{
    int n_op = trans == CUBLAS_OP_N;
    struct blas_gemm g = { .transa = trans, .transb = CUBLAS_OP_N, .m = n_op ? m : n, .n = 1, .k = n_op ? n : m,
                           .lda = lda, .ldb = incx, .ldc = incy, .stride_a = stride_a, .stride_b = stride_x,
                           .stride_c = stride_y, .batch = batch, .atype = dtype, .btype = dtype, .ctype = dtype,
                           .compute_type = compute, .scale_type = scale, .algo = CUBLAS_GEMM_DEFAULT,
                           .pointer_arrays = pointer_arrays, .matvec = 1, .alpha = alpha, .beta = beta, .a = A,
                           .b = x, .c = y };
    return blas_gemm_issue(handle, api, t0, &g);
}

#define TYPED_GEMV(NAME, INT, T, DTYPE, COMPUTE, SCALE) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t trans, INT m, INT n, const T *alpha, const T *A, \
                        INT lda, const T *x, INT incx, const T *beta, T *y, INT incy) \
    { \
        BLAS_ENTER(); \
        return gemv_issue(handle, EMU_API_ID(__func__), emu_call_t0_, trans, m, n, alpha, A, lda, x, incx, beta, \
                          y, incy, 1, 0, 0, 0, DTYPE, COMPUTE, SCALE, 0); \
    }

TYPED_GEMV(cublasSgemv_v2, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_GEMV(cublasSgemv_v2_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_GEMV(cublasDgemv_v2, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)
TYPED_GEMV(cublasDgemv_v2_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)
TYPED_GEMV(cublasCgemv_v2, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_GEMV(cublasCgemv_v2_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F)
TYPED_GEMV(cublasZgemv_v2, int, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F, CUDA_C_64F)
TYPED_GEMV(cublasZgemv_v2_64, int64_t, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F, CUDA_C_64F)

#define TYPED_GEMV_STRIDED(NAME, INT, T, DTYPE, COMPUTE, SCALE) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t trans, INT m, INT n, const T *alpha, const T *A, \
                        INT lda, long long strideA, const T *x, INT incx, long long stridex, const T *beta, T *y, \
                        INT incy, long long stridey, INT batchCount) \
    { \
        BLAS_ENTER(); \
        return gemv_issue(handle, EMU_API_ID(__func__), emu_call_t0_, trans, m, n, alpha, A, lda, x, incx, beta, \
                          y, incy, batchCount, strideA, stridex, stridey, DTYPE, COMPUTE, SCALE, 0); \
    }

TYPED_GEMV_STRIDED(cublasSgemvStridedBatched, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_GEMV_STRIDED(cublasSgemvStridedBatched_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_GEMV_STRIDED(cublasDgemvStridedBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)
TYPED_GEMV_STRIDED(cublasDgemvStridedBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)

#define TYPED_GEMV_BATCHED(NAME, INT, T, DTYPE, COMPUTE, SCALE) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t trans, INT m, INT n, const T *alpha, \
                        const T *const Aarray[], INT lda, const T *const xarray[], INT incx, const T *beta, \
                        T *const yarray[], INT incy, INT batchCount) \
    { \
        BLAS_ENTER(); \
        return gemv_issue(handle, EMU_API_ID(__func__), emu_call_t0_, trans, m, n, alpha, Aarray, lda, xarray, \
                          incx, beta, yarray, incy, batchCount, 0, 0, 0, DTYPE, COMPUTE, SCALE, 1); \
    }

TYPED_GEMV_BATCHED(cublasSgemvBatched, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_GEMV_BATCHED(cublasSgemvBatched_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F)
TYPED_GEMV_BATCHED(cublasDgemvBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)
TYPED_GEMV_BATCHED(cublasDgemvBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F)

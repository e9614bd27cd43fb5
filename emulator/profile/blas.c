/* cuBLAS and cuBLASLt: every GEMM as one MAYA_REC_GEMM with the whole
 * problem (as the emulator's cuBLAS records it), measured on the handle's
 * stream. The stream, math mode and, for cuBLASLt, the shapes are asked of
 * the real library (its getters), not remembered. */
#include "prof.h"

#include <cublasLt.h>
#include <cublas_api.h>
#include <pthread.h>
#include <string.h>

#include "maya/map.h"


/* One GEMM (or a batch of same-shaped ones) as cuBLAS receives it. */
struct gemm {
    int lib;                     /* enum maya_gemm_lib */
    int transa, transb;
    int64_t m, n, k, batch;
    int64_t lda, ldb, ldc, ldd;
    int64_t stride_a, stride_b, stride_c, stride_d;
    int atype, btype, ctype, dtype, compute_type, scale_type, epilogue, algo;
    const void *a, *b, *c, *d;
    uint64_t workspace_bytes;
    uint32_t flags;              /* MAYA_GEMM_* */
    cudaStream_t stream;
};

/* cuBLAS's compute type once the handle's math mode applies (what the
 * kernel accumulates in; whether tensor cores may round the inputs). */
static int effective_compute(cublasHandle_t h, int compute, int atype)
{
    cublasStatus_t (*get)(cublasHandle_t, cublasMath_t *) = PROF_REAL(prof_cublas, cublasGetMathMode);
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    if (!get || get(h, &math) != CUBLAS_STATUS_SUCCESS)
        return compute;
    int mode = math & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    if (compute == CUBLAS_COMPUTE_32F && mode == CUBLAS_PEDANTIC_MATH)
        return CUBLAS_COMPUTE_32F_PEDANTIC;
    if (compute == CUBLAS_COMPUTE_32F && (atype == CUDA_R_32F || atype == CUDA_C_32F)) {
        if (mode == CUBLAS_TF32_TENSOR_OP_MATH)
            return CUBLAS_COMPUTE_32F_FAST_TF32;
        if (mode == CUBLAS_FP32_EMULATED_BF16X9_MATH)
            return CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
        if (mode == CUBLAS_TENSOR_OP_MATH)
            return CUBLAS_COMPUTE_32F_FAST_16F;
    }
    if (compute == CUBLAS_COMPUTE_64F && mode == CUBLAS_PEDANTIC_MATH)
        return CUBLAS_COMPUTE_64F_PEDANTIC;
    if (compute == CUBLAS_COMPUTE_16F && mode == CUBLAS_PEDANTIC_MATH)
        return CUBLAS_COMPUTE_16F_PEDANTIC;
    return compute;
}

static void trace_gemm(struct prof_op *op, uint32_t api, int status, const struct gemm *g)
{
    struct emu_stream *s = prof_stream(g->stream, 0);
    if (status != CUBLAS_STATUS_SUCCESS || g->m == 0 || g->n == 0 || g->batch == 0) {
        emu_trace_call(api, op->t0, status, status == 0 && s ? s->id : 0, 0);
        return;
    }
    struct maya_rec_gemm r;
    memset(&r, 0, sizeof r);
    r.h.type = MAYA_REC_GEMM;
    r.h.bytes = sizeof r;
    r.lib = (uint32_t)g->lib;
    r.flags = g->flags;
    r.transa = g->transa, r.transb = g->transb;
    r.m = g->m, r.n = g->n, r.k = g->k, r.batch = g->batch;
    r.lda = g->lda, r.ldb = g->ldb, r.ldc = g->ldc, r.ldd = g->ldd;
    r.stride_a = g->stride_a, r.stride_b = g->stride_b, r.stride_c = g->stride_c, r.stride_d = g->stride_d;
    r.atype = g->atype, r.btype = g->btype, r.ctype = g->ctype, r.dtype = g->dtype;
    r.compute_type = g->compute_type;
    r.scale_type = g->scale_type;
    r.epilogue = g->epilogue;
    r.algo = g->algo;
    r.a = (uint64_t)(uintptr_t)g->a, r.b = (uint64_t)(uintptr_t)g->b;
    r.c = (uint64_t)(uintptr_t)g->c, r.d = (uint64_t)(uintptr_t)g->d;
    r.workspace_bytes = g->workspace_bytes;
    emu_call_fill(&r.call, api, op->t0, status, s ? s->id : 0);
    emu_trace_emit(&r);
}

/* ---- handles: the workspace a GEMM may use ---- */

/* cublasSetWorkspace_v2's per handle (packed bytes + 1; cublasSetStream_v2
 * drops it, as cuBLAS does); else cuBLAS's default pool: 32 MiB on Hopper
 * and later, 4 MiB before (cuBLAS documentation, cublasSetWorkspace). */
static pthread_mutex_t ws_lock = PTHREAD_MUTEX_INITIALIZER;
static struct maya_map workspaces;

static void set_workspace(cublasHandle_t h, uint64_t bytes, int set)
{
    pthread_mutex_lock(&ws_lock);
    if (set) {
        uint64_t *v = maya_map_put(&workspaces, (uint64_t)(uintptr_t)h, 0, NULL);
        if (v)
            *v = bytes + 1;
    } else {
        maya_map_del(&workspaces, (uint64_t)(uintptr_t)h, 0);
    }
    pthread_mutex_unlock(&ws_lock);
}

static uint64_t workspace(cublasHandle_t h)
{
    pthread_mutex_lock(&ws_lock);
    uint64_t *v = maya_map_get(&workspaces, (uint64_t)(uintptr_t)h, 0);
    uint64_t bytes = v ? *v - 1 : UINT64_MAX;
    pthread_mutex_unlock(&ws_lock);
    if (bytes != UINT64_MAX)
        return bytes;
    const struct emu_device *d = emu_device(emu_current_device());
    return d && d->prop.major >= 9 ? 32u << 20 : 4u << 20;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *ws, size_t bytes)
{
    PROF_REAL_OR(prof_cublas, cublasSetWorkspace_v2, CUBLAS_STATUS_NOT_SUPPORTED);
    cublasStatus_t st = real(handle, ws, bytes);
    if (st == CUBLAS_STATUS_SUCCESS)
        set_workspace(handle, bytes, 1);
    return st;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    PROF_REAL_OR(prof_cublas, cublasSetStream_v2, CUBLAS_STATUS_NOT_SUPPORTED);
    cublasStatus_t st = real(handle, stream);
    if (st == CUBLAS_STATUS_SUCCESS)
        set_workspace(handle, 0, 0);
    return st;
}

/* The handle's stream, asked before the call (events go on it). */
static cudaStream_t handle_stream(cublasHandle_t h)
{
    cublasStatus_t (*get)(cublasHandle_t, cudaStream_t *) = PROF_REAL(prof_cublas, cublasGetStream_v2);
    cudaStream_t s = NULL;
    if (get)
        get(h, &s);
    return s;
}

/* The frame of a GEMM of handle H: G is a struct gemm being filled, CALL the
 * real call. The handle's stream, workspace and math mode are asked once the
 * call is known to be traced. */
#define GEMM_BODY(H, G, CALL) \
    PROF_DEVICE_BODY(cublasStatus_t, CUBLAS_STATUS_SUCCESS, ({ \
                         (G).stream = handle_stream(H); \
                         (G).workspace_bytes = workspace(H); \
                         (G).compute_type = effective_compute((H), (G).compute_type, (G).atype); \
                         (G).stream; \
                     }), CALL, trace_gemm(&op_, EMU_API_ID(__func__), r_, &(G)), )

#define SAME_TYPES(G, T) ((G).atype = (G).btype = (G).ctype = (G).dtype = (T))

/* Typed GEMMs: NAME(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
 * beta, C, ldc). */
#define TYPED_GEMM(NAME, INT, T, DTYPE, COMPUTE) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const T *alpha, const T *A, INT lda, const T *B, INT ldb, const T *beta, T *C, \
                        INT ldc) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        struct gemm g = { .lib = MAYA_GEMM_CUBLAS, .transa = transa, .transb = transb, .m = m, .n = n, .k = k, \
                          .batch = 1, .lda = lda, .ldb = ldb, .ldc = ldc, .ldd = ldc, .compute_type = COMPUTE, \
                          .scale_type = DTYPE, .epilogue = 1, .algo = CUBLAS_GEMM_DEFAULT, .a = A, .b = B, \
                          .c = C, .d = C }; \
        SAME_TYPES(g, DTYPE); \
        GEMM_BODY(handle, g, real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)); \
    }

/* __half is declared for C++ only: half-precision entry points take its
 * 2-byte storage. */
typedef struct { unsigned short x; } blas_half;

TYPED_GEMM(cublasSgemm_v2, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED_GEMM(cublasSgemm_v2_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED_GEMM(cublasDgemm_v2, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_GEMM(cublasDgemm_v2_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_GEMM(cublasHgemm, int, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)
TYPED_GEMM(cublasHgemm_64, int64_t, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)

/* Typed strided-batched GEMMs. */
#define TYPED_STRIDED(NAME, INT, T, DTYPE, COMPUTE) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const T *alpha, const T *A, INT lda, long long strideA, const T *B, INT ldb, \
                        long long strideB, const T *beta, T *C, INT ldc, long long strideC, INT batchCount) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        struct gemm g = { .lib = MAYA_GEMM_CUBLAS, .transa = transa, .transb = transb, .m = m, .n = n, .k = k, \
                          .batch = batchCount, .lda = lda, .ldb = ldb, .ldc = ldc, .ldd = ldc, \
                          .stride_a = strideA, .stride_b = strideB, .stride_c = strideC, .stride_d = strideC, \
                          .compute_type = COMPUTE, .scale_type = DTYPE, .epilogue = 1, \
                          .algo = CUBLAS_GEMM_DEFAULT, .a = A, .b = B, .c = C, .d = C }; \
        SAME_TYPES(g, DTYPE); \
        GEMM_BODY(handle, g, real(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, \
                                  C, ldc, strideC, batchCount)); \
    }

TYPED_STRIDED(cublasSgemmStridedBatched, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED_STRIDED(cublasSgemmStridedBatched_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED_STRIDED(cublasDgemmStridedBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_STRIDED(cublasDgemmStridedBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_STRIDED(cublasHgemmStridedBatched, int, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)
TYPED_STRIDED(cublasHgemmStridedBatched_64, int64_t, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)

/* Typed batched GEMMs over arrays of pointers. */
#define TYPED_BATCHED(NAME, INT, T, DTYPE, COMPUTE) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const T *alpha, const T *const Aarray[], INT lda, const T *const Barray[], \
                        INT ldb, const T *beta, T *const Carray[], INT ldc, INT batchCount) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        struct gemm g = { .lib = MAYA_GEMM_CUBLAS, .transa = transa, .transb = transb, .m = m, .n = n, .k = k, \
                          .batch = batchCount, .lda = lda, .ldb = ldb, .ldc = ldc, .ldd = ldc, \
                          .compute_type = COMPUTE, .scale_type = DTYPE, .epilogue = 1, \
                          .algo = CUBLAS_GEMM_DEFAULT, .a = Aarray, .b = Barray, .c = Carray, .d = Carray, \
                          .flags = MAYA_GEMM_POINTER_ARRAYS }; \
        SAME_TYPES(g, DTYPE); \
        GEMM_BODY(handle, g, real(handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, \
                                  ldc, batchCount)); \
    }

TYPED_BATCHED(cublasSgemmBatched, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED_BATCHED(cublasSgemmBatched_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED_BATCHED(cublasDgemmBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_BATCHED(cublasDgemmBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_BATCHED(cublasHgemmBatched, int, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)
TYPED_BATCHED(cublasHgemmBatched_64, int64_t, blas_half, CUDA_R_16F, CUBLAS_COMPUTE_16F)

/* GEMV as a GEMM with n = 1 (as the emulator records it): M = rows of
 * op(A), K = its columns, the vector increments where ldb and ldc stand. */
#define TYPED_GEMV(NAME, INT, T, DTYPE, COMPUTE) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t trans, INT m, INT n, const T *alpha, const T *A, \
                        INT lda, const T *x, INT incx, const T *beta, T *y, INT incy) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        int n_op_ = trans == CUBLAS_OP_N; \
        struct gemm g = { .lib = MAYA_GEMM_CUBLAS, .transa = trans, .transb = CUBLAS_OP_N, .m = n_op_ ? m : n, \
                          .n = 1, .k = n_op_ ? n : m, .batch = 1, .lda = lda, .ldb = incx, .ldc = incy, \
                          .ldd = incy, .compute_type = COMPUTE, .scale_type = DTYPE, .epilogue = 1, \
                          .algo = CUBLAS_GEMM_DEFAULT, .a = A, .b = x, .c = y, .d = y, .flags = MAYA_GEMM_MATVEC }; \
        SAME_TYPES(g, DTYPE); \
        GEMM_BODY(handle, g, real(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy)); \
    }

TYPED_GEMV(cublasSgemv_v2, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED_GEMV(cublasSgemv_v2_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED_GEMV(cublasDgemv_v2, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_GEMV(cublasDgemv_v2_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)

/* The scale type cublasGemmEx implies (alpha, beta) from the compute type. */
static int ex_scale(int compute, int atype)
{
    int cplx = atype == CUDA_C_32F || atype == CUDA_C_64F || atype == CUDA_C_8I;
    switch (compute) {
    case CUBLAS_COMPUTE_16F: case CUBLAS_COMPUTE_16F_PEDANTIC: return CUDA_R_16F;
    case CUBLAS_COMPUTE_32I: case CUBLAS_COMPUTE_32I_PEDANTIC: return CUDA_R_32I;
    case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC: case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
        return cplx ? CUDA_C_64F : CUDA_R_64F;
    default: return cplx ? CUDA_C_32F : CUDA_R_32F;
    }
}

#define EX_GEMM(NAME, INT) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const void *alpha, const void *A, cudaDataType Atype, INT lda, const void *B, \
                        cudaDataType Btype, INT ldb, const void *beta, void *C, cudaDataType Ctype, INT ldc, \
                        cublasComputeType_t computeType, cublasGemmAlgo_t algo) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        struct gemm g = { .lib = MAYA_GEMM_CUBLAS, .transa = transa, .transb = transb, .m = m, .n = n, .k = k, \
                          .batch = 1, .lda = lda, .ldb = ldb, .ldc = ldc, .ldd = ldc, .atype = Atype, \
                          .btype = Btype, .ctype = Ctype, .dtype = Ctype, .compute_type = computeType, \
                          .scale_type = ex_scale(computeType, Atype), .epilogue = 1, .algo = algo, .a = A, \
                          .b = B, .c = C, .d = C }; \
        GEMM_BODY(handle, g, real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, \
                                  Ctype, ldc, computeType, algo)); \
    }

EX_GEMM(cublasGemmEx, int)
EX_GEMM(cublasGemmEx_64, int64_t)

#define EX_STRIDED(NAME, INT) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const void *alpha, const void *A, cudaDataType Atype, INT lda, long long strideA, \
                        const void *B, cudaDataType Btype, INT ldb, long long strideB, const void *beta, void *C, \
                        cudaDataType Ctype, INT ldc, long long strideC, INT batchCount, \
                        cublasComputeType_t computeType, cublasGemmAlgo_t algo) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        struct gemm g = { .lib = MAYA_GEMM_CUBLAS, .transa = transa, .transb = transb, .m = m, .n = n, .k = k, \
                          .batch = batchCount, .lda = lda, .ldb = ldb, .ldc = ldc, .ldd = ldc, \
                          .stride_a = strideA, .stride_b = strideB, .stride_c = strideC, .stride_d = strideC, \
                          .atype = Atype, .btype = Btype, .ctype = Ctype, .dtype = Ctype, \
                          .compute_type = computeType, .scale_type = ex_scale(computeType, Atype), \
                          .epilogue = 1, .algo = algo, .a = A, .b = B, .c = C, .d = C }; \
        GEMM_BODY(handle, g, real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, \
                                  strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo)); \
    }

EX_STRIDED(cublasGemmStridedBatchedEx, int)
EX_STRIDED(cublasGemmStridedBatchedEx_64, int64_t)

#define EX_BATCHED(NAME, INT) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const void *alpha, const void *const Aarray[], cudaDataType Atype, INT lda, \
                        const void *const Barray[], cudaDataType Btype, INT ldb, const void *beta, \
                        void *const Carray[], cudaDataType Ctype, INT ldc, INT batchCount, \
                        cublasComputeType_t computeType, cublasGemmAlgo_t algo) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        struct gemm g = { .lib = MAYA_GEMM_CUBLAS, .transa = transa, .transb = transb, .m = m, .n = n, .k = k, \
                          .batch = batchCount, .lda = lda, .ldb = ldb, .ldc = ldc, .ldd = ldc, .atype = Atype, \
                          .btype = Btype, .ctype = Ctype, .dtype = Ctype, .compute_type = computeType, \
                          .scale_type = ex_scale(computeType, Atype), .epilogue = 1, .algo = algo, \
                          .a = Aarray, .b = Barray, .c = Carray, .d = Carray, .flags = MAYA_GEMM_POINTER_ARRAYS }; \
        GEMM_BODY(handle, g, real(handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, \
                                  beta, Carray, Ctype, ldc, batchCount, computeType, algo)); \
    }

EX_BATCHED(cublasGemmBatchedEx, int)
EX_BATCHED(cublasGemmBatchedEx_64, int64_t)

/* cublasSgemmEx: fp32 accumulation and scaling, storage types the caller's. */
#define SGEMM_EX(NAME, INT) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        INT k, const float *alpha, const void *A, cudaDataType Atype, INT lda, const void *B, \
                        cudaDataType Btype, INT ldb, const float *beta, void *C, cudaDataType Ctype, INT ldc) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        struct gemm g = { .lib = MAYA_GEMM_CUBLAS, .transa = transa, .transb = transb, .m = m, .n = n, .k = k, \
                          .batch = 1, .lda = lda, .ldb = ldb, .ldc = ldc, .ldd = ldc, .atype = Atype, \
                          .btype = Btype, .ctype = Ctype, .dtype = Ctype, .compute_type = CUBLAS_COMPUTE_32F, \
                          .scale_type = CUDA_R_32F, .epilogue = 1, .algo = CUBLAS_GEMM_DEFAULT, .a = A, .b = B, \
                          .c = C, .d = C }; \
        GEMM_BODY(handle, g, real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, \
                                  Ctype, ldc)); \
    }

SGEMM_EX(cublasSgemmEx, int)
SGEMM_EX(cublasSgemmEx_64, int64_t)

/* ---- host <-> device copies of vectors and matrices ---- */

/* rows of width bytes, spitch / dpitch bytes apart, as the emulator's
 * cuBLAS records them: one block when the rows follow one another. */
static cublasStatus_t blas_copy(uint32_t api, cublasStatus_t (*call)(void *), void *arg, void *dst,
                                const void *src, int64_t width, int64_t rows, int64_t dpitch, int64_t spitch,
                                cudaStream_t stream, int async)
{
    struct prof_copy c = { dst, src, (size_t)width, (size_t)rows, stream, 0, async };
    if (dpitch == width && spitch == width)
        c.width = (size_t)(width * rows), c.height = 1;
    PROF_DEVICE_BODY(cublasStatus_t, CUBLAS_STATUS_SUCCESS, stream, call(arg),
                     (r_ == CUBLAS_STATUS_SUCCESS && (width <= 0 || rows <= 0)
                          ? emu_trace_call(api, op_.t0, r_, 0, 0)
                          : prof_trace_copy(&op_, api, r_, &c)),
                     if (!async) prof_collect_now());
}

struct vcall {
    void *real;
    int64_t n, elem, incx, incy, rows, cols, lda, ldb;
    const void *x;
    void *y;
    cudaStream_t stream;
};

#define VECTOR(NAME, INT, ASYNC) \
    static cublasStatus_t call_##NAME(void *p) \
    { \
        struct vcall *v = p; \
        return ASYNC ? ((cublasStatus_t (*)(INT, INT, const void *, INT, void *, INT, cudaStream_t))v->real)( \
                           (INT)v->n, (INT)v->elem, v->x, (INT)v->incx, v->y, (INT)v->incy, v->stream) \
                     : ((cublasStatus_t (*)(INT, INT, const void *, INT, void *, INT))v->real)( \
                           (INT)v->n, (INT)v->elem, v->x, (INT)v->incx, v->y, (INT)v->incy); \
    }
#define VECTOR_FN(NAME, INT) \
    VECTOR(NAME, INT, 0) \
    cublasStatus_t NAME(INT n, INT elemSize, const void *x, INT incx, void *y, INT incy) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        struct vcall v = { .real = (void *)real, .n = n, .elem = elemSize, .incx = incx, \
                           .incy = incy, .x = x, .y = y }; \
        return blas_copy(EMU_API_ID(#NAME), call_##NAME, &v, y, x, elemSize, n, (int64_t)incy * elemSize, \
                         (int64_t)incx * elemSize, NULL, 0); \
    }
#define VECTOR_ASYNC_FN(NAME, INT) \
    VECTOR(NAME, INT, 1) \
    cublasStatus_t NAME(INT n, INT elemSize, const void *x, INT incx, void *y, INT incy, cudaStream_t stream) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        struct vcall v = { .real = (void *)real, .n = n, .elem = elemSize, .incx = incx, \
                           .incy = incy, .x = x, .y = y, .stream = stream }; \
        return blas_copy(EMU_API_ID(#NAME), call_##NAME, &v, y, x, elemSize, n, (int64_t)incy * elemSize, \
                         (int64_t)incx * elemSize, stream, 1); \
    }

VECTOR_FN(cublasSetVector, int)
VECTOR_FN(cublasSetVector_64, int64_t)
VECTOR_FN(cublasGetVector, int)
VECTOR_FN(cublasGetVector_64, int64_t)
VECTOR_ASYNC_FN(cublasSetVectorAsync, int)
VECTOR_ASYNC_FN(cublasSetVectorAsync_64, int64_t)
VECTOR_ASYNC_FN(cublasGetVectorAsync, int)
VECTOR_ASYNC_FN(cublasGetVectorAsync_64, int64_t)

#define MATRIX(NAME, INT, ASYNC) \
    static cublasStatus_t call_##NAME(void *p) \
    { \
        struct vcall *v = p; \
        return ASYNC ? ((cublasStatus_t (*)(INT, INT, INT, const void *, INT, void *, INT, cudaStream_t))v->real)( \
                           (INT)v->rows, (INT)v->cols, (INT)v->elem, v->x, (INT)v->lda, v->y, (INT)v->ldb, \
                           v->stream) \
                     : ((cublasStatus_t (*)(INT, INT, INT, const void *, INT, void *, INT))v->real)( \
                           (INT)v->rows, (INT)v->cols, (INT)v->elem, v->x, (INT)v->lda, v->y, (INT)v->ldb); \
    }
#define MATRIX_FN(NAME, INT) \
    MATRIX(NAME, INT, 0) \
    cublasStatus_t NAME(INT rows, INT cols, INT elemSize, const void *A, INT lda, void *B, INT ldb) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        struct vcall v = { .real = (void *)real, .rows = rows, .cols = cols, \
                           .elem = elemSize, .lda = lda, .ldb = ldb, .x = A, .y = B }; \
        return blas_copy(EMU_API_ID(#NAME), call_##NAME, &v, B, A, (int64_t)rows * elemSize, cols, \
                         (int64_t)ldb * elemSize, (int64_t)lda * elemSize, NULL, 0); \
    }
#define MATRIX_ASYNC_FN(NAME, INT) \
    MATRIX(NAME, INT, 1) \
    cublasStatus_t NAME(INT rows, INT cols, INT elemSize, const void *A, INT lda, void *B, INT ldb, \
                        cudaStream_t stream) \
    { \
        PROF_REAL_OR(prof_cublas, NAME, CUBLAS_STATUS_NOT_SUPPORTED); \
        struct vcall v = { .real = (void *)real, .rows = rows, .cols = cols, \
                           .elem = elemSize, .lda = lda, .ldb = ldb, .x = A, .y = B, .stream = stream }; \
        return blas_copy(EMU_API_ID(#NAME), call_##NAME, &v, B, A, (int64_t)rows * elemSize, cols, \
                         (int64_t)ldb * elemSize, (int64_t)lda * elemSize, stream, 1); \
    }

MATRIX_FN(cublasSetMatrix, int)
MATRIX_FN(cublasSetMatrix_64, int64_t)
MATRIX_FN(cublasGetMatrix, int)
MATRIX_FN(cublasGetMatrix_64, int64_t)
MATRIX_ASYNC_FN(cublasSetMatrixAsync, int)
MATRIX_ASYNC_FN(cublasSetMatrixAsync_64, int64_t)
MATRIX_ASYNC_FN(cublasGetMatrixAsync, int)
MATRIX_ASYNC_FN(cublasGetMatrixAsync_64, int64_t)

/* ---- cuBLASLt ---- */

static void lt_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, void *buf, size_t size)
{
    cublasStatus_t (*get)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void *, size_t, size_t *) =
        PROF_REAL(prof_cublaslt, cublasLtMatmulDescGetAttribute);
    size_t written;
    if (get)
        get(d, attr, buf, size, &written);
}

static int64_t lt_layout(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, int64_t def)
{
    cublasStatus_t (*get)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void *, size_t, size_t *) =
        PROF_REAL(prof_cublaslt, cublasLtMatrixLayoutGetAttribute);
    size_t written = 0;
    /* TYPE, ORDER, BATCH_COUNT are 32-bit; ROWS, COLS, LD, STRIDED_BATCH_OFFSET 64-bit */
    int wide = attr == CUBLASLT_MATRIX_LAYOUT_ROWS || attr == CUBLASLT_MATRIX_LAYOUT_COLS ||
               attr == CUBLASLT_MATRIX_LAYOUT_LD || attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET;
    if (!l || !get)
        return def;
    if (wide) {
        int64_t v = def;
        return get(l, attr, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS ? v : def;
    }
    int32_t v = (int32_t)def;
    return get(l, attr, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS ? v : def;
}

static void lt_describe(struct gemm *g, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A, cublasLtMatrixLayout_t B,
                        cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D, const cublasLtMatmulAlgo_t *algo)
{
    int32_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N, compute = CUBLAS_COMPUTE_32F, scale = CUDA_R_32F;
    uint32_t epi = CUBLASLT_EPILOGUE_DEFAULT;
    lt_desc(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    lt_desc(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    lt_desc(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, sizeof compute);
    lt_desc(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof scale);
    lt_desc(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    g->lib = MAYA_GEMM_CUBLASLT;
    g->transa = ta, g->transb = tb;
    g->compute_type = compute, g->scale_type = scale, g->epilogue = (int)epi;
    /* D is m x n; op(A) is m x k */
    g->m = lt_layout(D, CUBLASLT_MATRIX_LAYOUT_ROWS, 0);
    g->n = lt_layout(D, CUBLASLT_MATRIX_LAYOUT_COLS, 0);
    g->k = lt_layout(A, ta == CUBLAS_OP_N ? CUBLASLT_MATRIX_LAYOUT_COLS : CUBLASLT_MATRIX_LAYOUT_ROWS, 0);
    g->batch = lt_layout(D, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 1);
    g->lda = lt_layout(A, CUBLASLT_MATRIX_LAYOUT_LD, 0), g->ldb = lt_layout(B, CUBLASLT_MATRIX_LAYOUT_LD, 0);
    g->ldc = lt_layout(C, CUBLASLT_MATRIX_LAYOUT_LD, 0), g->ldd = lt_layout(D, CUBLASLT_MATRIX_LAYOUT_LD, 0);
    if (g->batch > 1) {
        g->stride_a = lt_layout(A, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 0);
        g->stride_b = lt_layout(B, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 0);
        g->stride_c = lt_layout(C, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 0);
        g->stride_d = lt_layout(D, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 0);
    }
    const cublasLtMatrixLayout_t ls[4] = { A, B, C, D };
    static const uint32_t rows[4] = { MAYA_GEMM_ROW_MAJOR_A, MAYA_GEMM_ROW_MAJOR_B, MAYA_GEMM_ROW_MAJOR_C,
                                      MAYA_GEMM_ROW_MAJOR_D };
    for (int i = 0; i < 4; i++)
        if (lt_layout(ls[i], CUBLASLT_MATRIX_LAYOUT_ORDER, CUBLASLT_ORDER_COL) == CUBLASLT_ORDER_ROW)
            g->flags |= rows[i];
    if (lt_layout(D, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, CUBLASLT_BATCH_MODE_STRIDED) ==
        CUBLASLT_BATCH_MODE_POINTER_ARRAY)
        g->flags |= MAYA_GEMM_POINTER_ARRAYS;
    g->atype = (int)lt_layout(A, CUBLASLT_MATRIX_LAYOUT_TYPE, -1);
    g->btype = (int)lt_layout(B, CUBLASLT_MATRIX_LAYOUT_TYPE, -1);
    g->ctype = (int)lt_layout(C, CUBLASLT_MATRIX_LAYOUT_TYPE, -1);
    g->dtype = (int)lt_layout(D, CUBLASLT_MATRIX_LAYOUT_TYPE, -1);
    g->algo = -1;
    if (algo) {
        cublasStatus_t (*get)(const cublasLtMatmulAlgo_t *, cublasLtMatmulAlgoConfigAttributes_t, void *, size_t,
                              size_t *) = PROF_REAL(prof_cublaslt, cublasLtMatmulAlgoConfigGetAttribute);
        int32_t id = -1;
        size_t written;
        if (get && get(algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &written) == CUBLAS_STATUS_SUCCESS)
            g->algo = id;
    }
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                              cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                              cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSizeInBytes,
                              cudaStream_t stream)
{
    PROF_REAL_OR(prof_cublaslt, cublasLtMatmul, CUBLAS_STATUS_NOT_SUPPORTED);
    struct gemm g = { .a = A, .b = B, .c = C, .d = D, .workspace_bytes = workspaceSizeInBytes, .stream = stream };
    PROF_DEVICE_BODY(cublasStatus_t, CUBLAS_STATUS_SUCCESS,
                     ({ lt_describe(&g, computeDesc, Adesc, Bdesc, Cdesc, Ddesc, algo); stream; }),
                     real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
                          workspace, workspaceSizeInBytes, stream),
                     trace_gemm(&op_, EMU_API_ID(__func__), r_, &g), );
}

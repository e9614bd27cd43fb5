/* The BLAS level-1 routines programs commonly call, and GEAM / GER / DGMM.
 *
 * Each is traced as a CALL record on the handle's stream (no problem
 * description: they are memory-bound and short). Kernels do not run, so
 * vectors are not changed; the reductions whose result the host reads (dot,
 * nrm2, asum, amax, amin) are computed from the vectors as device memory
 * holds them when they are small (no more than MAYA_COPY_THRESHOLD bytes,
 * the rule for copies), so that small host-visible checks behave; past it
 * the result is 0. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f)
        bits = sign | 0x7f800000u | (man << 13);
    else if (exp)
        bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (man) { /* subnormal */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    } else
        bits = sign;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static double complex elem(const unsigned char *p, int dtype)
{
    float f[2];
    double d[2];
    uint16_t s[2];
    switch (dtype) {
    case CUDA_R_32F: memcpy(f, p, 4); return f[0];
    case CUDA_R_64F: memcpy(d, p, 8); return d[0];
    case CUDA_C_32F: memcpy(f, p, 8); return CMPLX(f[0], f[1]);
    case CUDA_C_64F: memcpy(d, p, 16); return CMPLX(d[0], d[1]);
    case CUDA_R_16F: memcpy(s, p, 2); return half_to_float(s[0]);
    case CUDA_C_16F: memcpy(s, p, 4); return CMPLX(half_to_float(s[0]), half_to_float(s[1]));
    case CUDA_R_16BF: {
        memcpy(s, p, 2);
        uint32_t bits = (uint32_t)s[0] << 16;
        memcpy(f, &bits, 4);
        return f[0];
    }
    default: return 0;
    }
}

/* Elements 0..n-1 of x (inc apart; BLAS starts from the far end when inc <
 * 0) as complex doubles into a malloc'd array, if the span is small enough
 * to be read (emu_copy_bytes applies the copy threshold and checks the
 * memory is addressable). */
static double complex *load(const void *x, int dtype, int64_t n, int64_t inc)
{
    int eb = blas_dtype_bytes(dtype);
    int64_t ainc = inc < 0 ? -inc : inc;
    if (!x || eb == 0 || n <= 0 || ainc == 0 || n > (INT64_MAX / 16) / (ainc ? ainc : 1))
        return NULL;
    uint64_t span = (uint64_t)((n - 1) * ainc + 1) * (uint64_t)eb;
    unsigned char *raw = malloc(span);
    double complex *v = malloc((size_t)n * sizeof *v);
    if (!raw || !v || !emu_copy_bytes(raw, x, span)) {
        free(raw);
        free(v);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t at = inc >= 0 ? i * ainc : (n - 1 - i) * ainc;
        v[i] = elem(raw + at * eb, dtype);
    }
    free(raw);
    return v;
}

/* Write a result where the handle's pointer mode says it is. */
static cublasStatus_t store(cublasHandle_t h, void *dst, int dtype, double complex v)
{
    unsigned char buf[16];
    float f[2] = { (float)creal(v), (float)cimag(v) };
    double d[2] = { creal(v), cimag(v) };
    int32_t i32 = (int32_t)creal(v);
    int64_t i64 = (int64_t)creal(v);
    int eb = blas_dtype_bytes(dtype);
    switch (dtype) {
    case CUDA_R_32F: case CUDA_C_32F: memcpy(buf, f, (size_t)eb); break;
    case CUDA_R_64F: case CUDA_C_64F: memcpy(buf, d, (size_t)eb); break;
    case CUDA_R_32I: memcpy(buf, &i32, 4); break;
    case CUDA_R_64I: memcpy(buf, &i64, 8); break;
    case CUDA_R_16F: case CUDA_R_16BF: {
        /* round to nearest by way of float: enough for a value the host reads */
        uint32_t bits;
        memcpy(&bits, f, 4);
        uint16_t out;
        if (dtype == CUDA_R_16BF)
            out = (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
        else {
            int e = (int)((bits >> 23) & 0xff) - 112;
            uint32_t man = (bits >> 13) & 0x3ff;
            out = (uint16_t)(((bits >> 16) & 0x8000) | (e <= 0 ? 0 : e >= 31 ? 0x7c00 : ((uint32_t)e << 10) | man));
        }
        memcpy(buf, &out, 2);
        break;
    }
    default:
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (h->pointer_mode == CUBLAS_POINTER_MODE_HOST)
        memcpy(dst, buf, (size_t)eb);
    else if (!emu_copy_bytes(dst, buf, (uint64_t)eb))
        return CUBLAS_STATUS_MAPPING_ERROR;
    return CUBLAS_STATUS_SUCCESS;
}

enum reduction { R_DOT, R_DOTC, R_NRM2, R_ASUM, R_AMAX, R_AMIN };

/* |re| + |im|: what BLAS's asum and amax/amin compare for complex vectors. */
static double mag1(double complex v)
{
    return fabs(creal(v)) + fabs(cimag(v));
}

static double complex reduce_values(enum reduction kind, int64_t n, const double complex *x, const double complex *y)
{
    double complex acc = 0;
    double best = 0, sumsq = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        switch (kind) {
        case R_DOT: acc += x[i] * y[i]; break;
        case R_DOTC: acc += conj(x[i]) * y[i]; break;
        case R_NRM2: sumsq += creal(x[i] * conj(x[i])); break;
        case R_ASUM: acc += mag1(x[i]); break;
        case R_AMAX: if (i == 0 || mag1(x[i]) > best) best = mag1(x[i]), at = i; break;
        case R_AMIN: if (i == 0 || mag1(x[i]) < best) best = mag1(x[i]), at = i; break;
        }
    }
    if (kind == R_NRM2)
        return sqrt(sumsq);
    if (kind == R_AMAX || kind == R_AMIN)
        return n > 0 ? (double)(at + 1) : 0; /* 1-based, as BLAS */
    return acc;
}

static cublasStatus_t reduce(cublasHandle_t h, uint32_t api, uint64_t t0, enum reduction kind, int64_t n,
                             const void *x, int xtype, int64_t incx, const void *y, int ytype, int64_t incy,
                             void *result, int rtype)
{
    if (!blas_handle_ok(h))
        return blas_call_end(h, api, t0, CUBLAS_STATUS_NOT_INITIALIZED);
    if (!result)
        return blas_call_end(h, api, t0, CUBLAS_STATUS_INVALID_VALUE);
    if (!blas_stream(h))
        return blas_call_end(h, api, t0, CUBLAS_STATUS_EXECUTION_FAILED);
    double complex value = 0;
    /* BLAS: nothing to reduce for n <= 0, nor for a non-positive increment
     * of nrm2, asum, amax and amin. */
    int single = kind != R_DOT && kind != R_DOTC;
    if (n > 0 && !(single && incx <= 0)) {
        double complex *vx = load(x, xtype, n, incx);
        double complex *vy = single ? NULL : load(y, ytype, n, incy);
        if (vx && (single || vy))
            value = reduce_values(kind, n, vx, vy);
        free(vx);
        free(vy);
    }
    return blas_call_end(h, api, t0, store(h, result, rtype, value));
}

#define DOT(NAME, INT, T, R, DT, KIND) \
    cublasStatus_t NAME(cublasHandle_t handle, INT n, const T *x, INT incx, const T *y, INT incy, R *result) \
    { \
        BLAS_ENTER(); \
        return reduce(handle, EMU_API_ID(__func__), emu_call_t0_, KIND, n, x, DT, incx, y, DT, incy, result, DT); \
    }

DOT(cublasSdot_v2, int, float, float, CUDA_R_32F, R_DOT)
DOT(cublasSdot_v2_64, int64_t, float, float, CUDA_R_32F, R_DOT)
DOT(cublasDdot_v2, int, double, double, CUDA_R_64F, R_DOT)
DOT(cublasDdot_v2_64, int64_t, double, double, CUDA_R_64F, R_DOT)
DOT(cublasCdotu_v2, int, cuComplex, cuComplex, CUDA_C_32F, R_DOT)
DOT(cublasCdotu_v2_64, int64_t, cuComplex, cuComplex, CUDA_C_32F, R_DOT)
DOT(cublasCdotc_v2, int, cuComplex, cuComplex, CUDA_C_32F, R_DOTC)
DOT(cublasCdotc_v2_64, int64_t, cuComplex, cuComplex, CUDA_C_32F, R_DOTC)
DOT(cublasZdotu_v2, int, cuDoubleComplex, cuDoubleComplex, CUDA_C_64F, R_DOT)
DOT(cublasZdotu_v2_64, int64_t, cuDoubleComplex, cuDoubleComplex, CUDA_C_64F, R_DOT)
DOT(cublasZdotc_v2, int, cuDoubleComplex, cuDoubleComplex, CUDA_C_64F, R_DOTC)
DOT(cublasZdotc_v2_64, int64_t, cuDoubleComplex, cuDoubleComplex, CUDA_C_64F, R_DOTC)

#define DOT_EX(NAME, INT, KIND) \
    cublasStatus_t NAME(cublasHandle_t handle, INT n, const void *x, cudaDataType xType, INT incx, const void *y, \
                        cudaDataType yType, INT incy, void *result, cudaDataType resultType, \
                        cudaDataType executionType) \
    { \
        BLAS_ENTER(); \
        return reduce(handle, EMU_API_ID(__func__), emu_call_t0_, KIND, n, x, xType, incx, y, yType, incy, result, \
                      resultType); \
    }

DOT_EX(cublasDotEx, int, R_DOT)
DOT_EX(cublasDotEx_64, int64_t, R_DOT)
DOT_EX(cublasDotcEx, int, R_DOTC)
DOT_EX(cublasDotcEx_64, int64_t, R_DOTC)

/* nrm2, asum, amax, amin: one vector, result of type R (dtype RT). */
#define REDUCE1(NAME, INT, T, R, XT, RT, KIND) \
    cublasStatus_t NAME(cublasHandle_t handle, INT n, const T *x, INT incx, R *result) \
    { \
        BLAS_ENTER(); \
        return reduce(handle, EMU_API_ID(__func__), emu_call_t0_, KIND, n, x, XT, incx, NULL, 0, 0, result, RT); \
    }

REDUCE1(cublasSnrm2_v2, int, float, float, CUDA_R_32F, CUDA_R_32F, R_NRM2)
REDUCE1(cublasSnrm2_v2_64, int64_t, float, float, CUDA_R_32F, CUDA_R_32F, R_NRM2)
REDUCE1(cublasDnrm2_v2, int, double, double, CUDA_R_64F, CUDA_R_64F, R_NRM2)
REDUCE1(cublasDnrm2_v2_64, int64_t, double, double, CUDA_R_64F, CUDA_R_64F, R_NRM2)
REDUCE1(cublasScnrm2_v2, int, cuComplex, float, CUDA_C_32F, CUDA_R_32F, R_NRM2)
REDUCE1(cublasScnrm2_v2_64, int64_t, cuComplex, float, CUDA_C_32F, CUDA_R_32F, R_NRM2)
REDUCE1(cublasDznrm2_v2, int, cuDoubleComplex, double, CUDA_C_64F, CUDA_R_64F, R_NRM2)
REDUCE1(cublasDznrm2_v2_64, int64_t, cuDoubleComplex, double, CUDA_C_64F, CUDA_R_64F, R_NRM2)
REDUCE1(cublasSasum_v2, int, float, float, CUDA_R_32F, CUDA_R_32F, R_ASUM)
REDUCE1(cublasSasum_v2_64, int64_t, float, float, CUDA_R_32F, CUDA_R_32F, R_ASUM)
REDUCE1(cublasDasum_v2, int, double, double, CUDA_R_64F, CUDA_R_64F, R_ASUM)
REDUCE1(cublasDasum_v2_64, int64_t, double, double, CUDA_R_64F, CUDA_R_64F, R_ASUM)
REDUCE1(cublasScasum_v2, int, cuComplex, float, CUDA_C_32F, CUDA_R_32F, R_ASUM)
REDUCE1(cublasScasum_v2_64, int64_t, cuComplex, float, CUDA_C_32F, CUDA_R_32F, R_ASUM)
REDUCE1(cublasDzasum_v2, int, cuDoubleComplex, double, CUDA_C_64F, CUDA_R_64F, R_ASUM)
REDUCE1(cublasDzasum_v2_64, int64_t, cuDoubleComplex, double, CUDA_C_64F, CUDA_R_64F, R_ASUM)
REDUCE1(cublasIsamax_v2, int, float, int, CUDA_R_32F, CUDA_R_32I, R_AMAX)
REDUCE1(cublasIsamax_v2_64, int64_t, float, int64_t, CUDA_R_32F, CUDA_R_64I, R_AMAX)
REDUCE1(cublasIdamax_v2, int, double, int, CUDA_R_64F, CUDA_R_32I, R_AMAX)
REDUCE1(cublasIdamax_v2_64, int64_t, double, int64_t, CUDA_R_64F, CUDA_R_64I, R_AMAX)
REDUCE1(cublasIcamax_v2, int, cuComplex, int, CUDA_C_32F, CUDA_R_32I, R_AMAX)
REDUCE1(cublasIcamax_v2_64, int64_t, cuComplex, int64_t, CUDA_C_32F, CUDA_R_64I, R_AMAX)
REDUCE1(cublasIzamax_v2, int, cuDoubleComplex, int, CUDA_C_64F, CUDA_R_32I, R_AMAX)
REDUCE1(cublasIzamax_v2_64, int64_t, cuDoubleComplex, int64_t, CUDA_C_64F, CUDA_R_64I, R_AMAX)
REDUCE1(cublasIsamin_v2, int, float, int, CUDA_R_32F, CUDA_R_32I, R_AMIN)
REDUCE1(cublasIsamin_v2_64, int64_t, float, int64_t, CUDA_R_32F, CUDA_R_64I, R_AMIN)
REDUCE1(cublasIdamin_v2, int, double, int, CUDA_R_64F, CUDA_R_32I, R_AMIN)
REDUCE1(cublasIdamin_v2_64, int64_t, double, int64_t, CUDA_R_64F, CUDA_R_64I, R_AMIN)
REDUCE1(cublasIcamin_v2, int, cuComplex, int, CUDA_C_32F, CUDA_R_32I, R_AMIN)
REDUCE1(cublasIcamin_v2_64, int64_t, cuComplex, int64_t, CUDA_C_32F, CUDA_R_64I, R_AMIN)
REDUCE1(cublasIzamin_v2, int, cuDoubleComplex, int, CUDA_C_64F, CUDA_R_32I, R_AMIN)
REDUCE1(cublasIzamin_v2_64, int64_t, cuDoubleComplex, int64_t, CUDA_C_64F, CUDA_R_64I, R_AMIN)

#define NRM2_EX(NAME, INT) \
    cublasStatus_t NAME(cublasHandle_t handle, INT n, const void *x, cudaDataType xType, INT incx, void *result, \
                        cudaDataType resultType, cudaDataType executionType) \
    { \
        BLAS_ENTER(); \
        return reduce(handle, EMU_API_ID(__func__), emu_call_t0_, R_NRM2, n, x, xType, incx, NULL, 0, 0, result, \
                      resultType); \
    }

NRM2_EX(cublasNrm2Ex, int)
NRM2_EX(cublasNrm2Ex_64, int64_t)

/* Routines that change device data and give the host nothing back: the
 * handle is checked, scalars must be given, and the call is traced on the
 * handle's stream. */
static cublasStatus_t vector_op(cublasHandle_t h, uint32_t api, uint64_t t0, int ok)
{
    if (!blas_handle_ok(h))
        return blas_call_end(h, api, t0, CUBLAS_STATUS_NOT_INITIALIZED);
    if (!ok)
        return blas_call_end(h, api, t0, CUBLAS_STATUS_INVALID_VALUE);
    if (!blas_stream(h))
        return blas_call_end(h, api, t0, CUBLAS_STATUS_EXECUTION_FAILED);
    return blas_call_end(h, api, t0, CUBLAS_STATUS_SUCCESS);
}

#define AXPY(NAME, INT, T) \
    cublasStatus_t NAME(cublasHandle_t handle, INT n, const T *alpha, const T *x, INT incx, T *y, INT incy) \
    { \
        BLAS_ENTER(); \
        return vector_op(handle, EMU_API_ID(__func__), emu_call_t0_, alpha != NULL); \
    }

AXPY(cublasSaxpy_v2, int, float)
AXPY(cublasSaxpy_v2_64, int64_t, float)
AXPY(cublasDaxpy_v2, int, double)
AXPY(cublasDaxpy_v2_64, int64_t, double)
AXPY(cublasCaxpy_v2, int, cuComplex)
AXPY(cublasCaxpy_v2_64, int64_t, cuComplex)
AXPY(cublasZaxpy_v2, int, cuDoubleComplex)
AXPY(cublasZaxpy_v2_64, int64_t, cuDoubleComplex)

#define AXPY_EX(NAME, INT) \
    cublasStatus_t NAME(cublasHandle_t handle, INT n, const void *alpha, cudaDataType alphaType, const void *x, \
                        cudaDataType xType, INT incx, void *y, cudaDataType yType, INT incy, \
                        cudaDataType executiontype) \
    { \
        BLAS_ENTER(); \
        return vector_op(handle, EMU_API_ID(__func__), emu_call_t0_, alpha != NULL); \
    }

AXPY_EX(cublasAxpyEx, int)
AXPY_EX(cublasAxpyEx_64, int64_t)

#define SCAL(NAME, INT, S, T) \
    cublasStatus_t NAME(cublasHandle_t handle, INT n, const S *alpha, T *x, INT incx) \
    { \
        BLAS_ENTER(); \
        return vector_op(handle, EMU_API_ID(__func__), emu_call_t0_, alpha != NULL); \
    }

SCAL(cublasSscal_v2, int, float, float)
SCAL(cublasSscal_v2_64, int64_t, float, float)
SCAL(cublasDscal_v2, int, double, double)
SCAL(cublasDscal_v2_64, int64_t, double, double)
SCAL(cublasCscal_v2, int, cuComplex, cuComplex)
SCAL(cublasCscal_v2_64, int64_t, cuComplex, cuComplex)
SCAL(cublasCsscal_v2, int, float, cuComplex)
SCAL(cublasCsscal_v2_64, int64_t, float, cuComplex)
SCAL(cublasZscal_v2, int, cuDoubleComplex, cuDoubleComplex)
SCAL(cublasZscal_v2_64, int64_t, cuDoubleComplex, cuDoubleComplex)
SCAL(cublasZdscal_v2, int, double, cuDoubleComplex)
SCAL(cublasZdscal_v2_64, int64_t, double, cuDoubleComplex)

#define SCAL_EX(NAME, INT) \
    cublasStatus_t NAME(cublasHandle_t handle, INT n, const void *alpha, cudaDataType alphaType, void *x, \
                        cudaDataType xType, INT incx, cudaDataType executionType) \
    { \
        BLAS_ENTER(); \
        return vector_op(handle, EMU_API_ID(__func__), emu_call_t0_, alpha != NULL); \
    }

SCAL_EX(cublasScalEx, int)
SCAL_EX(cublasScalEx_64, int64_t)

/* copy and swap: two vectors, no scalar. */
#define COPY(NAME, INT, CT, T) \
    cublasStatus_t NAME(cublasHandle_t handle, INT n, CT *x, INT incx, T *y, INT incy) \
    { \
        BLAS_ENTER(); \
        return vector_op(handle, EMU_API_ID(__func__), emu_call_t0_, 1); \
    }

COPY(cublasScopy_v2, int, const float, float)
COPY(cublasScopy_v2_64, int64_t, const float, float)
COPY(cublasDcopy_v2, int, const double, double)
COPY(cublasDcopy_v2_64, int64_t, const double, double)
COPY(cublasCcopy_v2, int, const cuComplex, cuComplex)
COPY(cublasCcopy_v2_64, int64_t, const cuComplex, cuComplex)
COPY(cublasZcopy_v2, int, const cuDoubleComplex, cuDoubleComplex)
COPY(cublasZcopy_v2_64, int64_t, const cuDoubleComplex, cuDoubleComplex)
COPY(cublasSswap_v2, int, float, float)
COPY(cublasSswap_v2_64, int64_t, float, float)
COPY(cublasDswap_v2, int, double, double)
COPY(cublasDswap_v2_64, int64_t, double, double)
COPY(cublasCswap_v2, int, cuComplex, cuComplex)
COPY(cublasCswap_v2_64, int64_t, cuComplex, cuComplex)
COPY(cublasZswap_v2, int, cuDoubleComplex, cuDoubleComplex)
COPY(cublasZswap_v2_64, int64_t, cuDoubleComplex, cuDoubleComplex)

/* GEAM: C = alpha op(A) + beta op(B), m x n (transposes and matrix adds). */
#define GEAM(NAME, INT, T) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, INT m, INT n, \
                        const T *alpha, const T *A, INT lda, const T *beta, const T *B, INT ldb, T *C, INT ldc) \
    { \
        BLAS_ENTER(); \
        int ok = blas_op_ok(transa) && blas_op_ok(transb) && m >= 0 && n >= 0 && alpha && beta && \
                 lda >= (transa == CUBLAS_OP_N ? m : n) && lda >= 1 && \
                 ldb >= (transb == CUBLAS_OP_N ? m : n) && ldb >= 1 && ldc >= m && ldc >= 1; \
        return vector_op(handle, EMU_API_ID(__func__), emu_call_t0_, ok); \
    }

GEAM(cublasSgeam, int, float)
GEAM(cublasSgeam_64, int64_t, float)
GEAM(cublasDgeam, int, double)
GEAM(cublasDgeam_64, int64_t, double)
GEAM(cublasCgeam, int, cuComplex)
GEAM(cublasCgeam_64, int64_t, cuComplex)
GEAM(cublasZgeam, int, cuDoubleComplex)
GEAM(cublasZgeam_64, int64_t, cuDoubleComplex)

/* GER: A += alpha x y^T (rank-1 update, m x n). */
#define GER(NAME, INT, T) \
    cublasStatus_t NAME(cublasHandle_t handle, INT m, INT n, const T *alpha, const T *x, INT incx, const T *y, \
                        INT incy, T *A, INT lda) \
    { \
        BLAS_ENTER(); \
        int ok = m >= 0 && n >= 0 && incx != 0 && incy != 0 && lda >= m && lda >= 1 && alpha; \
        return vector_op(handle, EMU_API_ID(__func__), emu_call_t0_, ok); \
    }

GER(cublasSger_v2, int, float)
GER(cublasSger_v2_64, int64_t, float)
GER(cublasDger_v2, int, double)
GER(cublasDger_v2_64, int64_t, double)
GER(cublasCgeru_v2, int, cuComplex)
GER(cublasCgeru_v2_64, int64_t, cuComplex)
GER(cublasCgerc_v2, int, cuComplex)
GER(cublasCgerc_v2_64, int64_t, cuComplex)
GER(cublasZgeru_v2, int, cuDoubleComplex)
GER(cublasZgeru_v2_64, int64_t, cuDoubleComplex)
GER(cublasZgerc_v2, int, cuDoubleComplex)
GER(cublasZgerc_v2_64, int64_t, cuDoubleComplex)

/* DGMM: C = A diag(x) or diag(x) A. */
#define DGMM(NAME, INT, T) \
    cublasStatus_t NAME(cublasHandle_t handle, cublasSideMode_t mode, INT m, INT n, const T *A, INT lda, \
                        const T *x, INT incx, T *C, INT ldc) \
    { \
        BLAS_ENTER(); \
        int ok = (mode == CUBLAS_SIDE_LEFT || mode == CUBLAS_SIDE_RIGHT) && m >= 0 && n >= 0 && lda >= m && \
                 lda >= 1 && ldc >= m && ldc >= 1; \
        return vector_op(handle, EMU_API_ID(__func__), emu_call_t0_, ok); \
    }

DGMM(cublasSdgmm, int, float)
DGMM(cublasSdgmm_64, int64_t, float)
DGMM(cublasDdgmm, int, double)
DGMM(cublasDdgmm_64, int64_t, double)
DGMM(cublasCdgmm, int, cuComplex)
DGMM(cublasCdgmm_64, int64_t, cuComplex)
DGMM(cublasZdgmm, int, cuDoubleComplex)
DGMM(cublasZdgmm_64, int64_t, cuDoubleComplex)

/* cublasSetVector / GetVector / SetMatrix / GetMatrix (and the Async and
 * _64 forms): strided copies between host and device, traced as MEMCPY
 * records and performed when small, like cudaMemcpy2D. */
#include "blas.h"

/* rows of width bytes, spitch / dpitch bytes apart. */
static cublasStatus_t blas_copy(uint32_t api, uint64_t t0, void *dst, const void *src, uint64_t width,
                                uint64_t rows, uint64_t dpitch, uint64_t spitch, cudaStream_t stream, int async)
{
    struct emu_stream *s = emu_stream_resolve(stream, 0);
    if (!s) {
        emu_trace_call(api, t0, CUBLAS_STATUS_MAPPING_ERROR, 0, 0);
        return CUBLAS_STATUS_MAPPING_ERROR;
    }
    struct emu_copy c = { .dst = dst, .src = src, .width = width, .height = rows, .depth = 1,
                          .dpitch = dpitch, .spitch = spitch, .stream = s, .async = async };
    /* One contiguous block when the rows follow one another on both sides. */
    if (dpitch == width && spitch == width) {
        c.width = width * rows;
        c.height = 1;
        c.dpitch = c.spitch = c.width;
    }
    emu_copy_classify(&c);
    emu_copy_finish(api, t0, CUBLAS_STATUS_SUCCESS, &c);
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t vector(uint32_t api, uint64_t t0, int64_t n, int64_t elem, const void *x, int64_t incx,
                             void *y, int64_t incy, cudaStream_t stream, int async)
{
    if (n < 0 || elem <= 0 || incx <= 0 || incy <= 0 || (n > 0 && (!x || !y))) {
        emu_trace_call(api, t0, CUBLAS_STATUS_INVALID_VALUE, 0, 0);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (n == 0) {
        emu_trace_call(api, t0, CUBLAS_STATUS_SUCCESS, 0, 0);
        return CUBLAS_STATUS_SUCCESS;
    }
    return blas_copy(api, t0, y, x, (uint64_t)elem, (uint64_t)n, (uint64_t)(incy * elem), (uint64_t)(incx * elem),
                     stream, async);
}

static cublasStatus_t matrix(uint32_t api, uint64_t t0, int64_t rows, int64_t cols, int64_t elem, const void *a,
                             int64_t lda, void *b, int64_t ldb, cudaStream_t stream, int async)
{
    if (rows < 0 || cols < 0 || elem <= 0 || lda <= 0 || ldb <= 0 || lda < rows || ldb < rows ||
        (rows > 0 && cols > 0 && (!a || !b))) {
        emu_trace_call(api, t0, CUBLAS_STATUS_INVALID_VALUE, 0, 0);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (rows == 0 || cols == 0) {
        emu_trace_call(api, t0, CUBLAS_STATUS_SUCCESS, 0, 0);
        return CUBLAS_STATUS_SUCCESS;
    }
    return blas_copy(api, t0, b, a, (uint64_t)(rows * elem), (uint64_t)cols, (uint64_t)(ldb * elem),
                     (uint64_t)(lda * elem), stream, async);
}

#define VECTOR(NAME, INT, CT, T) \
    cublasStatus_t NAME(INT n, INT elemSize, CT *x, INT incx, T *y, INT incy) \
    { \
        BLAS_ENTER(); \
        return vector(EMU_API_ID(__func__), emu_call_t0_, n, elemSize, x, incx, y, incy, NULL, 0); \
    }
#define VECTOR_ASYNC(NAME, INT, CT, T) \
    cublasStatus_t NAME(INT n, INT elemSize, CT *x, INT incx, T *y, INT incy, cudaStream_t stream) \
    { \
        BLAS_ENTER(); \
        return vector(EMU_API_ID(__func__), emu_call_t0_, n, elemSize, x, incx, y, incy, stream, 1); \
    }
#define MATRIX(NAME, INT) \
    cublasStatus_t NAME(INT rows, INT cols, INT elemSize, const void *A, INT lda, void *B, INT ldb) \
    { \
        BLAS_ENTER(); \
        return matrix(EMU_API_ID(__func__), emu_call_t0_, rows, cols, elemSize, A, lda, B, ldb, NULL, 0); \
    }
#define MATRIX_ASYNC(NAME, INT) \
    cublasStatus_t NAME(INT rows, INT cols, INT elemSize, const void *A, INT lda, void *B, INT ldb, \
                        cudaStream_t stream) \
    { \
        BLAS_ENTER(); \
        return matrix(EMU_API_ID(__func__), emu_call_t0_, rows, cols, elemSize, A, lda, B, ldb, stream, 1); \
    }

VECTOR(cublasSetVector, int, const void, void)
VECTOR(cublasSetVector_64, int64_t, const void, void)
VECTOR(cublasGetVector, int, const void, void)
VECTOR(cublasGetVector_64, int64_t, const void, void)
VECTOR_ASYNC(cublasSetVectorAsync, int, const void, void)
VECTOR_ASYNC(cublasSetVectorAsync_64, int64_t, const void, void)
VECTOR_ASYNC(cublasGetVectorAsync, int, const void, void)
VECTOR_ASYNC(cublasGetVectorAsync_64, int64_t, const void, void)
MATRIX(cublasSetMatrix, int)
MATRIX(cublasSetMatrix_64, int64_t)
MATRIX(cublasGetMatrix, int)
MATRIX(cublasGetMatrix_64, int64_t)
MATRIX_ASYNC(cublasSetMatrixAsync, int)
MATRIX_ASYNC(cublasSetMatrixAsync_64, int64_t)
MATRIX_ASYNC(cublasGetMatrixAsync, int)
MATRIX_ASYNC(cublasGetMatrixAsync_64, int64_t)

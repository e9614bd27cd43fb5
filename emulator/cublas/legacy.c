/* The legacy cuBLAS API (cublas.h): cublasInit / cublasShutdown, one
 * implicit handle, scalars by value, characters for the operation, fill,
 * diagonal and side, results as return values and errors through
 * cublasGetError. Each routine is its v2 routine called on the implicit
 * handle, so it is checked and traced as that one (its record carries the
 * v2 name); a v2 routine maya does not implement makes the legacy one fail
 * with CUBLAS_STATUS_NOT_SUPPORTED, reported and counted under the v2 name. */
#include <stdio.h>
#include <string.h>

/* cublas.h declares the legacy names and, through cublas_api.h, the v2 ones. */
#include <cublas.h>

#include "blas.h"

static pthread_mutex_t legacy_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t legacy_h;
/* cublasGetError returns the last error and clears it (cublas.h). */
static __thread cublasStatus_t legacy_error;

cublasStatus_t cublasInit(void)
{
    BLAS_ENTER();
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    pthread_mutex_lock(&legacy_lock);
    if (!legacy_h)
        st = cublasCreate_v2(&legacy_h);
    pthread_mutex_unlock(&legacy_lock);
    EMU_CALL_RETURN(st);
}

cublasStatus_t cublasShutdown(void)
{
    BLAS_ENTER();
    pthread_mutex_lock(&legacy_lock);
    cublasHandle_t h = legacy_h;
    legacy_h = NULL;
    pthread_mutex_unlock(&legacy_lock);
    EMU_CALL_RETURN(h ? cublasDestroy_v2(h) : CUBLAS_STATUS_NOT_INITIALIZED);
}

cublasStatus_t cublasGetError(void)
{
    cublasStatus_t st = legacy_error;
    legacy_error = CUBLAS_STATUS_SUCCESS;
    return st;
}

cublasStatus_t cublasGetVersion(int *version)
{
    return cublasGetVersion_v2(NULL, version);
}

cublasStatus_t cublasSetKernelStream(cudaStream_t stream)
{
    BLAS_ENTER();
    cublasHandle_t h = __atomic_load_n(&legacy_h, __ATOMIC_ACQUIRE);
    EMU_CALL_RETURN(h ? cublasSetStream_v2(h, stream) : CUBLAS_STATUS_NOT_INITIALIZED);
}

/* Device memory for the legacy API: n elements of elemSize bytes. */
cublasStatus_t cublasAlloc(int n, int elemSize, void **devicePtr)
{
    BLAS_ENTER();
    if (!devicePtr || n <= 0 || elemSize <= 0)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    int device = emu_current_device();
    uint64_t bytes = (uint64_t)n * (uint64_t)elemSize, ptr = 0;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    if (emu_mem_alloc(device, bytes, MAYA_ALLOC_DEVICE, 0, &ptr) != EMU_OK) {
        emu_note_oom();
        st = CUBLAS_STATUS_ALLOC_FAILED;
    }
    emu_trace_alloc(MAYA_REC_ALLOC, EMU_API_ID(__func__), emu_call_t0_, st, ptr, bytes, MAYA_ALLOC_DEVICE, device,
                    0, 0);
    *devicePtr = (void *)(uintptr_t)ptr;
    return st;
}

cublasStatus_t cublasFree(void *devicePtr)
{
    BLAS_ENTER();
    struct emu_alloc a = { 0 };
    if (devicePtr && emu_mem_free((uint64_t)(uintptr_t)devicePtr, 1 << MAYA_ALLOC_DEVICE, &a) != EMU_OK)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    emu_trace_alloc(MAYA_REC_FREE, EMU_API_ID(__func__), emu_call_t0_, CUBLAS_STATUS_SUCCESS,
                    (uint64_t)(uintptr_t)devicePtr, a.bytes, MAYA_ALLOC_DEVICE, a.device, 0, 0);
    return CUBLAS_STATUS_SUCCESS;
}

/* BLAS's error handler: cuBLAS prints the routine and the argument. */
void cublasXerbla(const char *srName, int info)
{
    fprintf(stderr, " ** On entry to %s parameter number %d had an illegal value\n", srName ? srName : "?", info);
}

/* The implicit handle, or NULL (and the error set) before cublasInit. */
static cublasHandle_t legacy(void)
{
    if (emu_enter() != EMU_OK) {
        legacy_error = CUBLAS_STATUS_NOT_INITIALIZED;
        return NULL;
    }
    cublasHandle_t h = __atomic_load_n(&legacy_h, __ATOMIC_ACQUIRE);
    if (!h)
        legacy_error = CUBLAS_STATUS_NOT_INITIALIZED;
    return h;
}

static void set_error(cublasStatus_t st)
{
    if (st != CUBLAS_STATUS_SUCCESS)
        legacy_error = st;
}

/* 'N', 'T', 'C' (either case) and the like; anything else becomes a value
 * the v2 routine refuses with CUBLAS_STATUS_INVALID_VALUE. */
static cublasOperation_t op(char c)
{
    return c == 'N' || c == 'n' ? CUBLAS_OP_N : c == 'T' || c == 't' ? CUBLAS_OP_T
         : c == 'C' || c == 'c' ? CUBLAS_OP_C : (cublasOperation_t)-1;
}
static cublasFillMode_t fill(char c)
{
    return c == 'U' || c == 'u' ? CUBLAS_FILL_MODE_UPPER : c == 'L' || c == 'l' ? CUBLAS_FILL_MODE_LOWER
                                                                               : (cublasFillMode_t)-1;
}
static cublasDiagType_t diag(char c)
{
    return c == 'U' || c == 'u' ? CUBLAS_DIAG_UNIT : c == 'N' || c == 'n' ? CUBLAS_DIAG_NON_UNIT
                                                                         : (cublasDiagType_t)-1;
}
static cublasSideMode_t side(char c)
{
    return c == 'L' || c == 'l' ? CUBLAS_SIDE_LEFT : c == 'R' || c == 'r' ? CUBLAS_SIDE_RIGHT
                                                                         : (cublasSideMode_t)-1;
}

/* A legacy routine without a result: NAME PARAMS calls CALL with h. */
#define VOID_ROUTINE(NAME, PARAMS, CALL) \
    void NAME PARAMS \
    { \
        cublasHandle_t h = legacy(); \
        if (h) \
            set_error(CALL); \
    }

/* A legacy routine returning R: CALL writes it through &r. */
#define VALUE_ROUTINE(R, NAME, PARAMS, CALL) \
    R NAME PARAMS \
    { \
        R r; \
        memset(&r, 0, sizeof r); \
        cublasHandle_t h = legacy(); \
        if (h) \
            set_error(CALL); \
        return r; \
    }

typedef cuComplex C;
typedef cuDoubleComplex Z;

/* Level 1 */
VALUE_ROUTINE(float, cublasSnrm2, (int n, const float *x, int incx), cublasSnrm2_v2(h, n, x, incx, &r))
VALUE_ROUTINE(double, cublasDnrm2, (int n, const double *x, int incx), cublasDnrm2_v2(h, n, x, incx, &r))
VALUE_ROUTINE(float, cublasScnrm2, (int n, const C *x, int incx), cublasScnrm2_v2(h, n, x, incx, &r))
VALUE_ROUTINE(double, cublasDznrm2, (int n, const Z *x, int incx), cublasDznrm2_v2(h, n, x, incx, &r))
VALUE_ROUTINE(float, cublasSdot, (int n, const float *x, int incx, const float *y, int incy),
              cublasSdot_v2(h, n, x, incx, y, incy, &r))
VALUE_ROUTINE(double, cublasDdot, (int n, const double *x, int incx, const double *y, int incy),
              cublasDdot_v2(h, n, x, incx, y, incy, &r))
VALUE_ROUTINE(C, cublasCdotu, (int n, const C *x, int incx, const C *y, int incy),
              cublasCdotu_v2(h, n, x, incx, y, incy, &r))
VALUE_ROUTINE(C, cublasCdotc, (int n, const C *x, int incx, const C *y, int incy),
              cublasCdotc_v2(h, n, x, incx, y, incy, &r))
VALUE_ROUTINE(Z, cublasZdotu, (int n, const Z *x, int incx, const Z *y, int incy),
              cublasZdotu_v2(h, n, x, incx, y, incy, &r))
VALUE_ROUTINE(Z, cublasZdotc, (int n, const Z *x, int incx, const Z *y, int incy),
              cublasZdotc_v2(h, n, x, incx, y, incy, &r))
VOID_ROUTINE(cublasSscal, (int n, float alpha, float *x, int incx), cublasSscal_v2(h, n, &alpha, x, incx))
VOID_ROUTINE(cublasDscal, (int n, double alpha, double *x, int incx), cublasDscal_v2(h, n, &alpha, x, incx))
VOID_ROUTINE(cublasCscal, (int n, C alpha, C *x, int incx), cublasCscal_v2(h, n, &alpha, x, incx))
VOID_ROUTINE(cublasZscal, (int n, Z alpha, Z *x, int incx), cublasZscal_v2(h, n, &alpha, x, incx))
VOID_ROUTINE(cublasCsscal, (int n, float alpha, C *x, int incx), cublasCsscal_v2(h, n, &alpha, x, incx))
VOID_ROUTINE(cublasZdscal, (int n, double alpha, Z *x, int incx), cublasZdscal_v2(h, n, &alpha, x, incx))
VOID_ROUTINE(cublasSaxpy, (int n, float alpha, const float *x, int incx, float *y, int incy),
             cublasSaxpy_v2(h, n, &alpha, x, incx, y, incy))
VOID_ROUTINE(cublasDaxpy, (int n, double alpha, const double *x, int incx, double *y, int incy),
             cublasDaxpy_v2(h, n, &alpha, x, incx, y, incy))
VOID_ROUTINE(cublasCaxpy, (int n, C alpha, const C *x, int incx, C *y, int incy),
             cublasCaxpy_v2(h, n, &alpha, x, incx, y, incy))
VOID_ROUTINE(cublasZaxpy, (int n, Z alpha, const Z *x, int incx, Z *y, int incy),
             cublasZaxpy_v2(h, n, &alpha, x, incx, y, incy))
VOID_ROUTINE(cublasScopy, (int n, const float *x, int incx, float *y, int incy), cublasScopy_v2(h, n, x, incx, y, incy))
VOID_ROUTINE(cublasDcopy, (int n, const double *x, int incx, double *y, int incy),
             cublasDcopy_v2(h, n, x, incx, y, incy))
VOID_ROUTINE(cublasCcopy, (int n, const C *x, int incx, C *y, int incy), cublasCcopy_v2(h, n, x, incx, y, incy))
VOID_ROUTINE(cublasZcopy, (int n, const Z *x, int incx, Z *y, int incy), cublasZcopy_v2(h, n, x, incx, y, incy))
VOID_ROUTINE(cublasSswap, (int n, float *x, int incx, float *y, int incy), cublasSswap_v2(h, n, x, incx, y, incy))
VOID_ROUTINE(cublasDswap, (int n, double *x, int incx, double *y, int incy), cublasDswap_v2(h, n, x, incx, y, incy))
VOID_ROUTINE(cublasCswap, (int n, C *x, int incx, C *y, int incy), cublasCswap_v2(h, n, x, incx, y, incy))
VOID_ROUTINE(cublasZswap, (int n, Z *x, int incx, Z *y, int incy), cublasZswap_v2(h, n, x, incx, y, incy))
VALUE_ROUTINE(int, cublasIsamax, (int n, const float *x, int incx), cublasIsamax_v2(h, n, x, incx, &r))
VALUE_ROUTINE(int, cublasIdamax, (int n, const double *x, int incx), cublasIdamax_v2(h, n, x, incx, &r))
VALUE_ROUTINE(int, cublasIcamax, (int n, const C *x, int incx), cublasIcamax_v2(h, n, x, incx, &r))
VALUE_ROUTINE(int, cublasIzamax, (int n, const Z *x, int incx), cublasIzamax_v2(h, n, x, incx, &r))
VALUE_ROUTINE(int, cublasIsamin, (int n, const float *x, int incx), cublasIsamin_v2(h, n, x, incx, &r))
VALUE_ROUTINE(int, cublasIdamin, (int n, const double *x, int incx), cublasIdamin_v2(h, n, x, incx, &r))
VALUE_ROUTINE(int, cublasIcamin, (int n, const C *x, int incx), cublasIcamin_v2(h, n, x, incx, &r))
VALUE_ROUTINE(int, cublasIzamin, (int n, const Z *x, int incx), cublasIzamin_v2(h, n, x, incx, &r))
VALUE_ROUTINE(float, cublasSasum, (int n, const float *x, int incx), cublasSasum_v2(h, n, x, incx, &r))
VALUE_ROUTINE(double, cublasDasum, (int n, const double *x, int incx), cublasDasum_v2(h, n, x, incx, &r))
VALUE_ROUTINE(float, cublasScasum, (int n, const C *x, int incx), cublasScasum_v2(h, n, x, incx, &r))
VALUE_ROUTINE(double, cublasDzasum, (int n, const Z *x, int incx), cublasDzasum_v2(h, n, x, incx, &r))
VOID_ROUTINE(cublasSrot, (int n, float *x, int incx, float *y, int incy, float sc, float ss),
             cublasSrot_v2(h, n, x, incx, y, incy, &sc, &ss))
VOID_ROUTINE(cublasDrot, (int n, double *x, int incx, double *y, int incy, double sc, double ss),
             cublasDrot_v2(h, n, x, incx, y, incy, &sc, &ss))
VOID_ROUTINE(cublasCrot, (int n, C *x, int incx, C *y, int incy, float c, C s),
             cublasCrot_v2(h, n, x, incx, y, incy, &c, &s))
VOID_ROUTINE(cublasZrot, (int n, Z *x, int incx, Z *y, int incy, double sc, Z cs),
             cublasZrot_v2(h, n, x, incx, y, incy, &sc, &cs))
VOID_ROUTINE(cublasCsrot, (int n, C *x, int incx, C *y, int incy, float c, float s),
             cublasCsrot_v2(h, n, x, incx, y, incy, &c, &s))
VOID_ROUTINE(cublasZdrot, (int n, Z *x, int incx, Z *y, int incy, double c, double s),
             cublasZdrot_v2(h, n, x, incx, y, incy, &c, &s))
VOID_ROUTINE(cublasSrotg, (float *sa, float *sb, float *sc, float *ss), cublasSrotg_v2(h, sa, sb, sc, ss))
VOID_ROUTINE(cublasDrotg, (double *sa, double *sb, double *sc, double *ss), cublasDrotg_v2(h, sa, sb, sc, ss))
VOID_ROUTINE(cublasCrotg, (C *ca, C cb, float *sc, C *cs), cublasCrotg_v2(h, ca, &cb, sc, cs))
VOID_ROUTINE(cublasZrotg, (Z *ca, Z cb, double *sc, Z *cs), cublasZrotg_v2(h, ca, &cb, sc, cs))
VOID_ROUTINE(cublasSrotm, (int n, float *x, int incx, float *y, int incy, const float *sparam),
             cublasSrotm_v2(h, n, x, incx, y, incy, sparam))
VOID_ROUTINE(cublasDrotm, (int n, double *x, int incx, double *y, int incy, const double *sparam),
             cublasDrotm_v2(h, n, x, incx, y, incy, sparam))
VOID_ROUTINE(cublasSrotmg, (float *sd1, float *sd2, float *sx1, const float *sy1, float *sparam),
             cublasSrotmg_v2(h, sd1, sd2, sx1, sy1, sparam))
VOID_ROUTINE(cublasDrotmg, (double *sd1, double *sd2, double *sx1, const double *sy1, double *sparam),
             cublasDrotmg_v2(h, sd1, sd2, sx1, sy1, sparam))

/* Level 2: GEMV, banded, triangular, symmetric / Hermitian, rank updates */
#define GEMV(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char trans, int m, int n, T alpha, const T *A, int lda, const T *x, int incx, T beta, T *y, \
                        int incy), \
                 V2(h, op(trans), m, n, &alpha, A, lda, x, incx, &beta, y, incy))
GEMV(cublasSgemv, float, cublasSgemv_v2)
GEMV(cublasDgemv, double, cublasDgemv_v2)
GEMV(cublasCgemv, C, cublasCgemv_v2)
GEMV(cublasZgemv, Z, cublasZgemv_v2)
#define GBMV(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char trans, int m, int n, int kl, int ku, T alpha, const T *A, int lda, const T *x, \
                        int incx, T beta, T *y, int incy), \
                 V2(h, op(trans), m, n, kl, ku, &alpha, A, lda, x, incx, &beta, y, incy))
GBMV(cublasSgbmv, float, cublasSgbmv_v2)
GBMV(cublasDgbmv, double, cublasDgbmv_v2)
GBMV(cublasCgbmv, C, cublasCgbmv_v2)
GBMV(cublasZgbmv, Z, cublasZgbmv_v2)
#define TRMV(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, char trans, char dg, int n, const T *A, int lda, T *x, int incx), \
                 V2(h, fill(uplo), op(trans), diag(dg), n, A, lda, x, incx))
TRMV(cublasStrmv, float, cublasStrmv_v2)
TRMV(cublasDtrmv, double, cublasDtrmv_v2)
TRMV(cublasCtrmv, C, cublasCtrmv_v2)
TRMV(cublasZtrmv, Z, cublasZtrmv_v2)
TRMV(cublasStrsv, float, cublasStrsv_v2)
TRMV(cublasDtrsv, double, cublasDtrsv_v2)
TRMV(cublasCtrsv, C, cublasCtrsv_v2)
TRMV(cublasZtrsv, Z, cublasZtrsv_v2)
#define TBMV(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, char trans, char dg, int n, int k, const T *A, int lda, T *x, int incx), \
                 V2(h, fill(uplo), op(trans), diag(dg), n, k, A, lda, x, incx))
TBMV(cublasStbmv, float, cublasStbmv_v2)
TBMV(cublasDtbmv, double, cublasDtbmv_v2)
TBMV(cublasCtbmv, C, cublasCtbmv_v2)
TBMV(cublasZtbmv, Z, cublasZtbmv_v2)
TBMV(cublasStbsv, float, cublasStbsv_v2)
TBMV(cublasDtbsv, double, cublasDtbsv_v2)
TBMV(cublasCtbsv, C, cublasCtbsv_v2)
TBMV(cublasZtbsv, Z, cublasZtbsv_v2)
#define TPMV(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, char trans, char dg, int n, const T *AP, T *x, int incx), \
                 V2(h, fill(uplo), op(trans), diag(dg), n, AP, x, incx))
TPMV(cublasStpmv, float, cublasStpmv_v2)
TPMV(cublasDtpmv, double, cublasDtpmv_v2)
TPMV(cublasCtpmv, C, cublasCtpmv_v2)
TPMV(cublasZtpmv, Z, cublasZtpmv_v2)
TPMV(cublasStpsv, float, cublasStpsv_v2)
TPMV(cublasDtpsv, double, cublasDtpsv_v2)
TPMV(cublasCtpsv, C, cublasCtpsv_v2)
TPMV(cublasZtpsv, Z, cublasZtpsv_v2)
#define SYMV(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, int n, T alpha, const T *A, int lda, const T *x, int incx, T beta, T *y, \
                        int incy), \
                 V2(h, fill(uplo), n, &alpha, A, lda, x, incx, &beta, y, incy))
SYMV(cublasSsymv, float, cublasSsymv_v2)
SYMV(cublasDsymv, double, cublasDsymv_v2)
SYMV(cublasChemv, C, cublasChemv_v2)
SYMV(cublasZhemv, Z, cublasZhemv_v2)
#define SBMV(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, int n, int k, T alpha, const T *A, int lda, const T *x, int incx, T beta, T *y, \
                        int incy), \
                 V2(h, fill(uplo), n, k, &alpha, A, lda, x, incx, &beta, y, incy))
SBMV(cublasSsbmv, float, cublasSsbmv_v2)
SBMV(cublasDsbmv, double, cublasDsbmv_v2)
SBMV(cublasChbmv, C, cublasChbmv_v2)
SBMV(cublasZhbmv, Z, cublasZhbmv_v2)
#define SPMV(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, int n, T alpha, const T *AP, const T *x, int incx, T beta, T *y, int incy), \
                 V2(h, fill(uplo), n, &alpha, AP, x, incx, &beta, y, incy))
SPMV(cublasSspmv, float, cublasSspmv_v2)
SPMV(cublasDspmv, double, cublasDspmv_v2)
SPMV(cublasChpmv, C, cublasChpmv_v2)
SPMV(cublasZhpmv, Z, cublasZhpmv_v2)
#define GER(NAME, T, V2) \
    VOID_ROUTINE(NAME, (int m, int n, T alpha, const T *x, int incx, const T *y, int incy, T *A, int lda), \
                 V2(h, m, n, &alpha, x, incx, y, incy, A, lda))
GER(cublasSger, float, cublasSger_v2)
GER(cublasDger, double, cublasDger_v2)
GER(cublasCgeru, C, cublasCgeru_v2)
GER(cublasCgerc, C, cublasCgerc_v2)
GER(cublasZgeru, Z, cublasZgeru_v2)
GER(cublasZgerc, Z, cublasZgerc_v2)
#define SYR(NAME, S, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, int n, S alpha, const T *x, int incx, T *A, int lda), \
                 V2(h, fill(uplo), n, &alpha, x, incx, A, lda))
SYR(cublasSsyr, float, float, cublasSsyr_v2)
SYR(cublasDsyr, double, double, cublasDsyr_v2)
SYR(cublasCher, float, C, cublasCher_v2)
SYR(cublasZher, double, Z, cublasZher_v2)
#define SPR(NAME, S, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, int n, S alpha, const T *x, int incx, T *AP), \
                 V2(h, fill(uplo), n, &alpha, x, incx, AP))
SPR(cublasSspr, float, float, cublasSspr_v2)
SPR(cublasDspr, double, double, cublasDspr_v2)
SPR(cublasChpr, float, C, cublasChpr_v2)
SPR(cublasZhpr, double, Z, cublasZhpr_v2)
#define SYR2(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, int n, T alpha, const T *x, int incx, const T *y, int incy, T *A, int lda), \
                 V2(h, fill(uplo), n, &alpha, x, incx, y, incy, A, lda))
SYR2(cublasSsyr2, float, cublasSsyr2_v2)
SYR2(cublasDsyr2, double, cublasDsyr2_v2)
SYR2(cublasCher2, C, cublasCher2_v2)
SYR2(cublasZher2, Z, cublasZher2_v2)
#define SPR2(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, int n, T alpha, const T *x, int incx, const T *y, int incy, T *AP), \
                 V2(h, fill(uplo), n, &alpha, x, incx, y, incy, AP))
SPR2(cublasSspr2, float, cublasSspr2_v2)
SPR2(cublasDspr2, double, cublasDspr2_v2)
SPR2(cublasChpr2, C, cublasChpr2_v2)
SPR2(cublasZhpr2, Z, cublasZhpr2_v2)

/* Level 3 */
#define GEMM(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char transa, char transb, int m, int n, int k, T alpha, const T *A, int lda, const T *B, \
                        int ldb, T beta, T *C_, int ldc), \
                 V2(h, op(transa), op(transb), m, n, k, &alpha, A, lda, B, ldb, &beta, C_, ldc))
GEMM(cublasSgemm, float, cublasSgemm_v2)
GEMM(cublasDgemm, double, cublasDgemm_v2)
GEMM(cublasCgemm, C, cublasCgemm_v2)
GEMM(cublasZgemm, Z, cublasZgemm_v2)
#define SYRK(NAME, S, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, char trans, int n, int k, S alpha, const T *A, int lda, S beta, T *C_, int ldc), \
                 V2(h, fill(uplo), op(trans), n, k, &alpha, A, lda, &beta, C_, ldc))
SYRK(cublasSsyrk, float, float, cublasSsyrk_v2)
SYRK(cublasDsyrk, double, double, cublasDsyrk_v2)
SYRK(cublasCsyrk, C, C, cublasCsyrk_v2)
SYRK(cublasZsyrk, Z, Z, cublasZsyrk_v2)
SYRK(cublasCherk, float, C, cublasCherk_v2)
SYRK(cublasZherk, double, Z, cublasZherk_v2)
#define SYR2K(NAME, S, B_, T, V2) \
    VOID_ROUTINE(NAME, (char uplo, char trans, int n, int k, S alpha, const T *A, int lda, const T *B, int ldb, \
                        B_ beta, T *C_, int ldc), \
                 V2(h, fill(uplo), op(trans), n, k, &alpha, A, lda, B, ldb, &beta, C_, ldc))
SYR2K(cublasSsyr2k, float, float, float, cublasSsyr2k_v2)
SYR2K(cublasDsyr2k, double, double, double, cublasDsyr2k_v2)
SYR2K(cublasCsyr2k, C, C, C, cublasCsyr2k_v2)
SYR2K(cublasZsyr2k, Z, Z, Z, cublasZsyr2k_v2)
SYR2K(cublasCher2k, C, float, C, cublasCher2k_v2)
SYR2K(cublasZher2k, Z, double, Z, cublasZher2k_v2)
#define SYMM(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char sd, char uplo, int m, int n, T alpha, const T *A, int lda, const T *B, int ldb, \
                        T beta, T *C_, int ldc), \
                 V2(h, side(sd), fill(uplo), m, n, &alpha, A, lda, B, ldb, &beta, C_, ldc))
SYMM(cublasSsymm, float, cublasSsymm_v2)
SYMM(cublasDsymm, double, cublasDsymm_v2)
SYMM(cublasCsymm, C, cublasCsymm_v2)
SYMM(cublasZsymm, Z, cublasZsymm_v2)
SYMM(cublasChemm, C, cublasChemm_v2)
SYMM(cublasZhemm, Z, cublasZhemm_v2)
#define TRSM(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char sd, char uplo, char transa, char dg, int m, int n, T alpha, const T *A, int lda, \
                        T *B, int ldb), \
                 V2(h, side(sd), fill(uplo), op(transa), diag(dg), m, n, &alpha, A, lda, B, ldb))
TRSM(cublasStrsm, float, cublasStrsm_v2)
TRSM(cublasDtrsm, double, cublasDtrsm_v2)
TRSM(cublasCtrsm, C, cublasCtrsm_v2)
TRSM(cublasZtrsm, Z, cublasZtrsm_v2)
/* The v2 TRMM writes to a separate C: the legacy one works in place on B. */
#define TRMM(NAME, T, V2) \
    VOID_ROUTINE(NAME, (char sd, char uplo, char transa, char dg, int m, int n, T alpha, const T *A, int lda, \
                        T *B, int ldb), \
                 V2(h, side(sd), fill(uplo), op(transa), diag(dg), m, n, &alpha, A, lda, B, ldb, B, ldb))
TRMM(cublasStrmm, float, cublasStrmm_v2)
TRMM(cublasDtrmm, double, cublasDtrmm_v2)
TRMM(cublasCtrmm, C, cublasCtrmm_v2)
TRMM(cublasZtrmm, Z, cublasZtrmm_v2)

/* cuBLAS stand-in: what the files of emulator/cublas share.
 *
 * A handle remembers what cuBLAS's does (stream, workspace, modes); every
 * operation checks its arguments as cuBLAS does and is traced: GEMMs (and
 * GEMV, a GEMM with n = 1) as MAYA_REC_GEMM records with the whole problem,
 * the other routines as CALL records carrying the handle's stream. Nothing
 * is computed on device data, as kernels are not run (decoupling); only the
 * results the host reads back (dot, nrm2, ... in host pointer mode) are
 * computed from device memory when the vectors are small (see level1.c). */
#ifndef MAYA_EMU_BLAS_H
#define MAYA_EMU_BLAS_H

#include <cublas_api.h>

#include "emu_call.h"

#define BLAS_MAGIC 0x626c6173u

/* Its first two fields are those of cuBLASLt's struct cublasLtContext:
 * programs cast a cublasHandle_t to a cublasLtHandle_t (cuBLASLt allows it). */
struct cublasContext {
    struct emu_lib_handle h;     /* magic and stream (NULL: legacy default stream) */
    int device;                  /* the device current when the handle was made */
    cublasPointerMode_t pointer_mode;
    cublasAtomicsMode_t atomics_mode;
    cublasMath_t math_mode;
    int sm_count_target;
    int emulation_strategy;
    int emulation_special_values;
    int mantissa_control, max_mantissa_bits, mantissa_offset;
    int *mantissa_bits_ptr;
    int user_workspace;          /* cublasSetWorkspace gave the one below */
    uint64_t workspace, workspace_bytes;
    uint64_t own_workspace;      /* the default workspace allocated at create */
    uint64_t own_workspace_bytes;
};

/* Start a cuBLAS call: the emulator runs, the call is timed. */
#define BLAS_ENTER() EMU_CALL_ENTER(CUBLAS_STATUS_NOT_INITIALIZED)

static inline int blas_handle_ok(cublasHandle_t h)
{
    return emu_lib_handle_ok(h, BLAS_MAGIC);
}

/* The stream work of h goes to, or NULL when its handle no longer names a
 * stream (destroyed): the launch fails as cuBLAS's would. */
static inline struct emu_stream *blas_stream(cublasHandle_t h)
{
    return emu_stream_resolve(h->h.stream, 0);
}

/* Workspace a GEMM of h may use: the caller's, else cuBLAS's default. */
static inline uint64_t blas_workspace_bytes(cublasHandle_t h)
{
    return h->user_workspace ? h->workspace_bytes : h->own_workspace_bytes;
}

/* One GEMM (or a batch of same-shaped ones) as cuBLAS receives it. */
struct blas_gemm {
    int transa, transb;          /* cublasOperation_t */
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c; /* elements; 0 when not strided */
    int64_t batch;               /* 1 for a single GEMM */
    int atype, btype, ctype;     /* cudaDataType_t */
    int compute_type;            /* cublasComputeType_t, before the math mode */
    int scale_type;              /* cudaDataType_t of alpha and beta */
    int algo;                    /* cublasGemmAlgo_t */
    int pointer_arrays;          /* the batched form: a, b, c are arrays of pointers */
    int matvec;                  /* GEMV: n = 1, ldb and ldc are the increments of x and y */
    const void *alpha, *beta;
    const void *a, *b, *c;
};

/* Check g as cuBLAS does, then trace it (MAYA_REC_GEMM) on h's stream.
 * The result is what the call returns. */
cublasStatus_t blas_gemm_issue(cublasHandle_t h, uint32_t api, uint64_t t0, const struct blas_gemm *g);

/* End a non-GEMM routine of h: a CALL record on h's stream when it ran
 * (status SUCCESS), else with no stream. */
cublasStatus_t blas_call_end(cublasHandle_t h, uint32_t api, uint64_t t0, cublasStatus_t status);

/* cuBLAS's rules for an operation / fill / side / diag argument. */
static inline int blas_op_ok(int op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

/* Bytes of one element of a cudaDataType_t, 0 if unknown. */
int blas_dtype_bytes(int dtype);

#endif

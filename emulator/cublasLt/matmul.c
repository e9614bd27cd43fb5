/* cublasLtMatmul, its heuristics and algorithms, and cublasLtMatrixTransform.
 *
 * Algorithms: maya offers a small fixed set (ids 0..LT_NALGOS-1) described
 * by the same fields a real cublasLtMatmulAlgo_t configures (tile, split-K,
 * reduction scheme, stages, ...). The heuristic proposes, in order: a
 * 128x128 tile (64x64 for small problems) without workspace, a split-K
 * version when the preference allows its workspace, and the other tile;
 * results are deterministic, so a program that caches them sees the same
 * choice every time. */
#include <string.h>

#include "lt.h"
#include "../cublas/gemm_record.h"

#define LT_NALGOS 8

/* The GEMM a matmul descriptor and four layouts describe. */
struct lt_problem {
    int64_t m, n, k, batch;
};

/* Rows and columns of a layout after an operation (N keeps them, T and C swap). */
static void op_dims(const struct lt_layout *l, int op, int64_t *rows, int64_t *cols)
{
    *rows = (int64_t)(op == CUBLAS_OP_N ? l->rows : l->cols);
    *cols = (int64_t)(op == CUBLAS_OP_N ? l->cols : l->rows);
}

static int ld_ok(const struct lt_layout *l)
{
    if (l->order == CUBLASLT_ORDER_COL)
        return l->ld >= 1 && (uint64_t)l->ld >= l->rows;
    if (l->order == CUBLASLT_ORDER_ROW)
        return l->ld >= 1 && (uint64_t)l->ld >= l->cols;
    return 1; /* tiled orders (COL32, ...): ld follows the order's own rule */
}

static int op_ok(int op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static int compute_ok(int c)
{
    switch (c) {
    case CUBLAS_COMPUTE_16F: case CUBLAS_COMPUTE_16F_PEDANTIC: case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC: case CUBLAS_COMPUTE_32F_FAST_16F: case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32: case CUBLAS_COMPUTE_32F_EMULATED_16BFX9: case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC: case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT: case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC:
        return 1;
    default:
        return 0;
    }
}

/* Check what cuBLASLt checks before it looks for a kernel: the shapes of
 * op(A) [m x k], op(B) [k x n], C and D [m x n] agree, leading dimensions
 * hold a row / column, batch counts agree; then that the compute type is
 * one cuBLASLt has (else NOT_SUPPORTED). */
static cublasStatus_t lt_shape(const struct lt_matmul *op, const struct lt_layout *a, const struct lt_layout *b,
                               const struct lt_layout *c, const struct lt_layout *d, struct lt_problem *p)
{
    if (!op || !a || !b || !c || !d)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!op_ok(op->transa) || !op_ok(op->transb))
        return CUBLAS_STATUS_INVALID_VALUE;
    int64_t ar, ac, br, bc;
    op_dims(a, op->transa, &ar, &ac);
    op_dims(b, op->transb, &br, &bc);
    p->m = ar, p->k = ac, p->n = bc;
    if (br != p->k || (int64_t)d->rows != p->m || (int64_t)d->cols != p->n || c->rows != d->rows ||
        c->cols != d->cols)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!ld_ok(a) || !ld_ok(b) || !ld_ok(c) || !ld_ok(d))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (d->batch_count < 1 || a->batch_count != d->batch_count || b->batch_count != d->batch_count ||
        c->batch_count != d->batch_count)
        return CUBLAS_STATUS_INVALID_VALUE;
    p->batch = d->batch_count;
    if (!compute_ok(op->compute))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    return CUBLAS_STATUS_SUCCESS;
}

/* Workspace an algorithm needs for a problem: split-K with a separate
 * reduction keeps fp32 partial results of every slice. */
static uint64_t algo_workspace(const struct lt_algo *x, const struct lt_problem *p)
{
    if (x->splitk <= 1 || x->reduction == CUBLASLT_REDUCTION_SCHEME_INPLACE ||
        x->reduction == CUBLASLT_REDUCTION_SCHEME_NONE)
        return 0;
    return (uint64_t)p->m * (uint64_t)p->n * (uint64_t)p->batch * 4u * x->splitk;
}

/* Device utilisation of an algorithm: output tiles (times split-K slices)
 * per SM. */
static float algo_waves(const struct lt_algo *x, const struct lt_problem *p, int device)
{
    int64_t tm = x->tile == CUBLASLT_MATMUL_TILE_64x64 ? 64 : 128;
    int64_t tiles = (p->m + tm - 1) / tm * ((p->n + tm - 1) / tm) * p->batch * (x->splitk ? x->splitk : 1);
    const struct emu_device *dev = emu_device(device);
    int sms = dev && dev->prop.multiProcessorCount > 0 ? dev->prop.multiProcessorCount : 132;
    return (float)tiles / (float)sms;
}

static void algo_make(struct lt_algo *x, int id)
{
    memset(x, 0, sizeof *x);
    x->magic = LT_ALGO_MAGIC;
    x->id = id;
    x->tile = id % 2 ? CUBLASLT_MATMUL_TILE_64x64 : CUBLASLT_MATMUL_TILE_128x128;
    x->stages = id % 2 ? CUBLASLT_MATMUL_STAGES_64x3 : CUBLASLT_MATMUL_STAGES_64x4;
    x->splitk = 1;
    x->swizzle = 0;
}

static void result_fill(cublasLtMatmulHeuristicResult_t *r, const struct lt_algo *x, const struct lt_problem *p,
                        int device)
{
    memset(r, 0, sizeof *r);
    memcpy(&r->algo, x, sizeof *x);
    r->workspaceSize = algo_workspace(x, p);
    r->state = CUBLAS_STATUS_SUCCESS;
    r->wavesCount = algo_waves(x, p, device);
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t opDesc,
                                              cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                              cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                              cublasLtMatmulPreference_t preference, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int *returned)
{
    LT_ENTER();
    if (!lt_handle_ok(handle))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    const struct lt_pref *pref = lt_pref(preference);
    if (!pref || requested <= 0 || !results || !returned)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    struct lt_problem p;
    cublasStatus_t st = lt_shape(lt_matmul(opDesc), lt_layout(Adesc), lt_layout(Bdesc), lt_layout(Cdesc),
                                 lt_layout(Ddesc), &p);
    if (st != CUBLAS_STATUS_SUCCESS)
        EMU_CALL_RETURN(st);
    struct lt_algo cand[3];
    int n = 0;
    if (pref->search_mode == CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID) {
        /* the caller names the algorithm in results[0].algo (cublasLtMatmulAlgoInit) */
        const struct lt_algo *given = lt_algo(&results[0].algo);
        if (!given)
            EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
        cand[n++] = *given;
    } else {
        int small = p.m * p.n * p.batch < 256 * 256;
        algo_make(&cand[n++], small ? 1 : 0);
        struct lt_algo split;
        algo_make(&split, 2);
        split.splitk = 2;
        split.reduction = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
        if ((pref->reduction_mask & split.reduction) && algo_workspace(&split, &p) <= pref->max_workspace)
            cand[n++] = split;
        algo_make(&cand[n++], small ? 0 : 1);
    }
    int out = 0;
    for (int i = 0; i < n && out < requested; i++) {
        if (algo_workspace(&cand[i], &p) > pref->max_workspace)
            continue;
        result_fill(&results[out], &cand[i], &p, handle->device);
        if (pref->max_waves > 0 && results[out].wavesCount > pref->max_waves)
            continue;
        out++;
    }
    *returned = out;
    EMU_CALL_RETURN(out ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED);
}

cublasStatus_t cublasLtMatmulAlgoGetIds(cublasLtHandle_t handle, cublasComputeType_t compute, cudaDataType_t scale,
                                        cudaDataType_t Atype, cudaDataType_t Btype, cudaDataType_t Ctype,
                                        cudaDataType_t Dtype, int requested, int ids[], int *returned)
{
    LT_ENTER();
    if (!lt_handle_ok(handle))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    if (requested <= 0 || !ids || !returned)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    int n = 0;
    if (compute_ok(compute))
        for (; n < requested && n < LT_NALGOS; n++)
            ids[n] = n;
    *returned = n;
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t handle, cublasComputeType_t compute, cudaDataType_t scale,
                                      cudaDataType_t Atype, cudaDataType_t Btype, cudaDataType_t Ctype,
                                      cudaDataType_t Dtype, int id, cublasLtMatmulAlgo_t *algo)
{
    LT_ENTER();
    if (!lt_handle_ok(handle))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    if (!algo || id < 0 || id >= LT_NALGOS)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    if (!compute_ok(compute))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_SUPPORTED);
    algo_make((struct lt_algo *)algo, id);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtMatmulAlgoCheck(cublasLtHandle_t handle, cublasLtMatmulDesc_t opDesc,
                                       cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                       cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                       const cublasLtMatmulAlgo_t *algo, cublasLtMatmulHeuristicResult_t *result)
{
    LT_ENTER();
    if (!lt_handle_ok(handle))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    const struct lt_algo *x = lt_algo(algo);
    if (!x || !result)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    struct lt_problem p;
    cublasStatus_t st = lt_shape(lt_matmul(opDesc), lt_layout(Adesc), lt_layout(Bdesc), lt_layout(Cdesc),
                                 lt_layout(Ddesc), &p);
    if (st == CUBLAS_STATUS_SUCCESS)
        result_fill(result, x, &p, handle->device);
    EMU_CALL_RETURN(st);
}

#define A(id, field) { id, offsetof(struct lt_algo, field), sizeof(((struct lt_algo *)0)->field) }
static const struct lt_attr config_attrs[] = {
    A(CUBLASLT_ALGO_CONFIG_ID, id),
    A(CUBLASLT_ALGO_CONFIG_TILE_ID, tile),
    A(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, splitk),
    A(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, reduction),
    A(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, swizzle),
    A(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, custom),
    A(CUBLASLT_ALGO_CONFIG_STAGES_ID, stages),
    A(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, inner_shape),
    A(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, cluster_shape),
};
#undef A

cublasStatus_t cublasLtMatmulAlgoConfigSetAttribute(cublasLtMatmulAlgo_t *algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr, const void *buf,
                                                    size_t size)
{
    LT_ENTER();
    struct lt_algo *x = (struct lt_algo *)lt_algo(algo);
    /* the id is the algorithm's own: only AlgoInit sets it */
    if (!x || attr == CUBLASLT_ALGO_CONFIG_ID)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    EMU_CALL_RETURN(lt_attr_set(x, config_attrs, sizeof config_attrs / sizeof *config_attrs, attr, buf, size));
}

cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr, void *buf,
                                                    size_t size, size_t *written)
{
    LT_ENTER();
    const struct lt_algo *x = lt_algo(algo);
    if (!x)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    EMU_CALL_RETURN(lt_attr_get(x, config_attrs, sizeof config_attrs / sizeof *config_attrs, attr, buf, size,
                                written));
}

/* What maya's algorithms can do (cublasLtMatmulAlgoCapGetAttribute). */
cublasStatus_t cublasLtMatmulAlgoCapGetAttribute(const cublasLtMatmulAlgo_t *algo,
                                                 cublasLtMatmulAlgoCapAttributes_t attr, void *buf, size_t size,
                                                 size_t *written)
{
    LT_ENTER();
    if (!lt_algo(algo))
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    static const uint32_t tiles[] = { CUBLASLT_MATMUL_TILE_64x64, CUBLASLT_MATMUL_TILE_128x128 };
    static const uint32_t stages[] = { CUBLASLT_MATMUL_STAGES_64x3, CUBLASLT_MATMUL_STAGES_64x4 };
    uint64_t v = 0;
    size_t vsize = 4;
    const void *array = NULL;
    switch (attr) {
    case CUBLASLT_ALGO_CAP_SPLITK_SUPPORT: case CUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT:
    case CUBLASLT_ALGO_CAP_OUT_OF_PLACE_RESULT_SUPPORT: case CUBLASLT_ALGO_CAP_LD_NEGATIVE:
    case CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT:
        v = 1;
        break;
    case CUBLASLT_ALGO_CAP_UPLO_SUPPORT: case CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX:
    case CUBLASLT_ALGO_CAP_CUSTOM_MEMORY_ORDER: case CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT:
        v = 0;
        break;
    case CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK: v = CUBLASLT_REDUCTION_SCHEME_MASK; break;
    case CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT: v = 1; break;
    case CUBLASLT_ALGO_CAP_POINTER_MODE_MASK:
        v = CUBLASLT_POINTER_MODE_MASK_HOST | CUBLASLT_POINTER_MODE_MASK_DEVICE;
        break;
    case CUBLASLT_ALGO_CAP_EPILOGUE_MASK: v = 0xffffffffu; break;
    case CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS: v = UINT64_MAX, vsize = 8; break;
    case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES: case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES: case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES:
        v = 16;
        break;
    case CUBLASLT_ALGO_CAP_TILE_IDS: array = tiles, vsize = sizeof tiles; break;
    case CUBLASLT_ALGO_CAP_STAGES_IDS: array = stages, vsize = sizeof stages; break;
    default:
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    }
    /* size 0 asks for the size; arrays may be read into a larger buffer */
    if (size == 0) {
        if (!written)
            EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
        *written = vsize;
        EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
    }
    if (!buf || (array ? size < vsize : size != vsize))
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    if (array)
        memcpy(buf, array, vsize);
    else if (vsize == 8)
        memcpy(buf, &v, 8);
    else {
        uint32_t v32 = (uint32_t)v;
        memcpy(buf, &v32, 4);
    }
    if (written)
        *written = vsize;
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

static uint32_t layout_flag(const struct lt_layout *l, uint32_t flag)
{
    return l->order == CUBLASLT_ORDER_ROW ? flag : 0;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t opDesc, const void *alpha, const void *A,
                              cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
                              const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspace_bytes, cudaStream_t stream)
{
    LT_ENTER();
    if (!lt_handle_ok(handle))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    const struct lt_matmul *op = lt_matmul(opDesc);
    const struct lt_layout *a = lt_layout(Adesc), *b = lt_layout(Bdesc), *c = lt_layout(Cdesc),
                           *d = lt_layout(Ddesc);
    struct lt_problem p;
    cublasStatus_t st = lt_shape(op, a, b, c, d, &p);
    if (st != CUBLAS_STATUS_SUCCESS)
        EMU_CALL_RETURN(st);
    if (!alpha || !beta || (workspace_bytes && !workspace))
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    const struct lt_algo *x = NULL;
    if (algo) {
        x = lt_algo(algo);
        if (!x)
            EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
        if (algo_workspace(x, &p) > workspace_bytes)
            EMU_CALL_RETURN(CUBLAS_STATUS_NOT_SUPPORTED);
    }
    struct emu_stream *s = emu_stream_resolve(stream, 0);
    if (!blas_issue_ok(s))
        EMU_CALL_RETURN(CUBLAS_STATUS_EXECUTION_FAILED);
    /* Nothing to compute: no launch. */
    if (p.m == 0 || p.n == 0)
        EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
    struct maya_rec_gemm r;
    blas_gemm_rec_init(&r, MAYA_GEMM_CUBLASLT);
    r.flags = layout_flag(a, MAYA_GEMM_ROW_MAJOR_A) | layout_flag(b, MAYA_GEMM_ROW_MAJOR_B) |
              layout_flag(c, MAYA_GEMM_ROW_MAJOR_C) | layout_flag(d, MAYA_GEMM_ROW_MAJOR_D) |
              (d->batch_mode == CUBLASLT_BATCH_MODE_POINTER_ARRAY ? MAYA_GEMM_POINTER_ARRAYS : 0);
    r.transa = op->transa, r.transb = op->transb;
    r.m = p.m, r.n = p.n, r.k = p.k, r.batch = p.batch;
    r.lda = a->ld, r.ldb = b->ld, r.ldc = c->ld, r.ldd = d->ld;
    if (p.batch > 1)
        r.stride_a = a->stride, r.stride_b = b->stride, r.stride_c = c->stride, r.stride_d = d->stride;
    r.atype = (int32_t)a->type, r.btype = (int32_t)b->type, r.ctype = (int32_t)c->type, r.dtype = (int32_t)d->type;
    r.compute_type = op->compute;
    r.scale_type = op->scale;
    r.epilogue = (int32_t)op->epilogue;
    r.algo = x ? x->id : -1;
    r.a = (uint64_t)(uintptr_t)A, r.b = (uint64_t)(uintptr_t)B;
    r.c = (uint64_t)(uintptr_t)C, r.d = (uint64_t)(uintptr_t)D;
    r.workspace_bytes = workspace_bytes;
    return emu_trace_op(EMU_API_ID(__func__), emu_call_t0_, CUBLAS_STATUS_SUCCESS, s, &r) == EMU_OK
               ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

/* C = alpha op(A) + beta op(B): a copy, transpose or layout change; traced
 * as a call on its stream. */
cublasStatus_t cublasLtMatrixTransform(cublasLtHandle_t handle, cublasLtMatrixTransformDesc_t desc,
                                       const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                                       const void *beta, const void *B, cublasLtMatrixLayout_t Bdesc, void *C,
                                       cublasLtMatrixLayout_t Cdesc, cudaStream_t stream)
{
    LT_ENTER();
    if (!lt_handle_ok(handle))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    const struct lt_layout *c = lt_layout(Cdesc);
    if (!desc || !c || !alpha || (A && !lt_layout(Adesc)) || (B && !lt_layout(Bdesc)))
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    struct emu_stream *s = emu_stream_resolve(stream, 0);
    if (!s)
        EMU_CALL_RETURN(CUBLAS_STATUS_EXECUTION_FAILED);
    EMU_CALL_RETURN_STREAM(CUBLAS_STATUS_SUCCESS, s->id);
}

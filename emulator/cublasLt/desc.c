/* cuBLASLt descriptors: matmul, matrix layout, preference, transform and
 * emulation descriptors; create / init / destroy and their attributes. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lt.h"

cublasStatus_t lt_attr_set(void *obj, const struct lt_attr *tab, size_t n, int id, const void *buf, size_t size)
{
    for (size_t i = 0; i < n; i++) {
        if (tab[i].id != id)
            continue;
        if (!buf || size != tab[i].size)
            return CUBLAS_STATUS_INVALID_VALUE;
        memcpy((char *)obj + tab[i].offset, buf, size);
        return CUBLAS_STATUS_SUCCESS;
    }
    return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t lt_attr_get(const void *obj, const struct lt_attr *tab, size_t n, int id, void *buf, size_t size,
                           size_t *written)
{
    for (size_t i = 0; i < n; i++) {
        if (tab[i].id != id)
            continue;
        if (size == 0) { /* a size query */
            if (!written)
                return CUBLAS_STATUS_INVALID_VALUE;
            *written = tab[i].size;
            return CUBLAS_STATUS_SUCCESS;
        }
        if (!buf || size != tab[i].size)
            return CUBLAS_STATUS_INVALID_VALUE;
        memcpy(buf, (const char *)obj + tab[i].offset, size);
        if (written)
            *written = size;
        return CUBLAS_STATUS_SUCCESS;
    }
    return CUBLAS_STATUS_INVALID_VALUE;
}

#define A(id, type, field) { id, offsetof(type, field), sizeof(((type *)0)->field) }
#define ARRAY_LEN(a) (sizeof(a) / sizeof *(a))

/* ---- matmul descriptor ---- */

static const struct lt_attr matmul_attrs[] = {
    A(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, struct lt_matmul, compute),
    A(CUBLASLT_MATMUL_DESC_SCALE_TYPE, struct lt_matmul, scale),
    A(CUBLASLT_MATMUL_DESC_POINTER_MODE, struct lt_matmul, pointer_mode),
    A(CUBLASLT_MATMUL_DESC_TRANSA, struct lt_matmul, transa),
    A(CUBLASLT_MATMUL_DESC_TRANSB, struct lt_matmul, transb),
    A(CUBLASLT_MATMUL_DESC_TRANSC, struct lt_matmul, transc),
    A(CUBLASLT_MATMUL_DESC_FILL_MODE, struct lt_matmul, fill),
    A(CUBLASLT_MATMUL_DESC_EPILOGUE, struct lt_matmul, epilogue),
    A(CUBLASLT_MATMUL_DESC_BIAS_POINTER, struct lt_matmul, bias),
    A(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, struct lt_matmul, bias_stride),
    A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, struct lt_matmul, aux),
    A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, struct lt_matmul, aux_ld),
    A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, struct lt_matmul, aux_stride),
    A(CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, struct lt_matmul, alpha_stride),
    A(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, struct lt_matmul, sm_count),
    A(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, struct lt_matmul, a_scale),
    A(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, struct lt_matmul, b_scale),
    A(CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, struct lt_matmul, c_scale),
    A(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, struct lt_matmul, d_scale),
    A(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, struct lt_matmul, amax_d),
    A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, struct lt_matmul, aux_dtype),
    A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER, struct lt_matmul, aux_scale),
    A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER, struct lt_matmul, aux_amax),
    A(CUBLASLT_MATMUL_DESC_FAST_ACCUM, struct lt_matmul, fast_accum),
    A(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, struct lt_matmul, bias_dtype),
    A(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, struct lt_matmul, scale_mode[0]),
    A(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, struct lt_matmul, scale_mode[1]),
    A(CUBLASLT_MATMUL_DESC_C_SCALE_MODE, struct lt_matmul, scale_mode[2]),
    A(CUBLASLT_MATMUL_DESC_D_SCALE_MODE, struct lt_matmul, scale_mode[3]),
    A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE, struct lt_matmul, scale_mode[4]),
    A(CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, struct lt_matmul, d_out_scale),
    A(CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, struct lt_matmul, d_out_scale_mode),
    A(CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, struct lt_matmul, emulation),
};

/* Defaults as the real library reports them: scale type as given (cuBLASLt
 * takes any values here and refuses bad ones at matmul time), fill FULL,
 * epilogue DEFAULT, no bias / aux types (-1). */
static void matmul_init(struct lt_matmul *m, int compute, int scale, int heap)
{
    memset(m, 0, sizeof *m);
    m->magic = LT_MATMUL_MAGIC;
    m->heap = heap;
    m->compute = compute;
    m->scale = scale;
    m->fill = CUBLAS_FILL_MODE_FULL;
    m->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    m->aux_dtype = -1;
    m->bias_dtype = -1;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute,
                                        cudaDataType_t scale)
{
    LT_ENTER();
    if (!desc)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    struct lt_matmul *m = malloc(sizeof *m);
    if (!m)
        EMU_CALL_RETURN(CUBLAS_STATUS_ALLOC_FAILED);
    matmul_init(m, compute, scale, 1);
    *desc = (cublasLtMatmulDesc_t)m;
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t desc, size_t size, cublasComputeType_t compute,
                                               cudaDataType_t scale)
{
    LT_ENTER();
    if (!desc || size < sizeof(struct lt_matmul))
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    matmul_init((struct lt_matmul *)desc, compute, scale, 0);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
{
    LT_ENTER();
    struct lt_matmul *m = lt_matmul(desc);
    if (!m)
        EMU_CALL_RETURN(desc ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS);
    m->magic = 0;
    if (m->heap)
        free(m);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t size)
{
    LT_ENTER();
    struct lt_matmul *m = lt_matmul(desc);
    EMU_CALL_RETURN(m ? lt_attr_set(m, matmul_attrs, ARRAY_LEN(matmul_attrs), attr, buf, size)
                      : CUBLAS_STATUS_INVALID_VALUE);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              void *buf, size_t size, size_t *written)
{
    LT_ENTER();
    struct lt_matmul *m = lt_matmul(desc);
    EMU_CALL_RETURN(m ? lt_attr_get(m, matmul_attrs, ARRAY_LEN(matmul_attrs), attr, buf, size, written)
                      : CUBLAS_STATUS_INVALID_VALUE);
}

/* ---- matrix layout ---- */

static const struct lt_attr layout_attrs[] = {
    A(CUBLASLT_MATRIX_LAYOUT_TYPE, struct lt_layout, type),
    A(CUBLASLT_MATRIX_LAYOUT_ORDER, struct lt_layout, order),
    A(CUBLASLT_MATRIX_LAYOUT_ROWS, struct lt_layout, rows),
    A(CUBLASLT_MATRIX_LAYOUT_COLS, struct lt_layout, cols),
    A(CUBLASLT_MATRIX_LAYOUT_LD, struct lt_layout, ld),
    A(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, struct lt_layout, batch_count),
    A(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, struct lt_layout, stride),
    A(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, struct lt_layout, plane_offset),
    A(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, struct lt_layout, batch_mode),
};

/* cuBLASLt checks nothing here: bad shapes are refused by the operation. */
static void layout_init(struct lt_layout *l, int type, uint64_t rows, uint64_t cols, int64_t ld, int heap)
{
    memset(l, 0, sizeof *l);
    l->magic = LT_LAYOUT_MAGIC;
    l->type = (uint32_t)type;
    l->order = CUBLASLT_ORDER_COL;
    l->batch_count = 1;
    l->rows = rows, l->cols = cols, l->ld = ld;
    l->heap = (uint16_t)heap;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld)
{
    LT_ENTER();
    if (!layout)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    struct lt_layout *l = malloc(sizeof *l);
    if (!l)
        EMU_CALL_RETURN(CUBLAS_STATUS_ALLOC_FAILED);
    layout_init(l, type, rows, cols, ld, 1);
    *layout = (cublasLtMatrixLayout_t)l;
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t layout, size_t size, cudaDataType type,
                                                 uint64_t rows, uint64_t cols, int64_t ld)
{
    LT_ENTER();
    if (!layout || size < sizeof(struct lt_layout))
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    layout_init((struct lt_layout *)layout, type, rows, cols, ld, 0);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout)
{
    LT_ENTER();
    struct lt_layout *l = lt_layout(layout);
    if (!l)
        EMU_CALL_RETURN(layout ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS);
    l->magic = 0;
    if (l->heap)
        free(l);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t size)
{
    LT_ENTER();
    struct lt_layout *l = lt_layout(layout);
    EMU_CALL_RETURN(l ? lt_attr_set(l, layout_attrs, ARRAY_LEN(layout_attrs), attr, buf, size)
                      : CUBLAS_STATUS_INVALID_VALUE);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                void *buf, size_t size, size_t *written)
{
    LT_ENTER();
    struct lt_layout *l = lt_layout(layout);
    EMU_CALL_RETURN(l ? lt_attr_get(l, layout_attrs, ARRAY_LEN(layout_attrs), attr, buf, size, written)
                      : CUBLAS_STATUS_INVALID_VALUE);
}

/* ---- preference ---- */

static const struct lt_attr pref_attrs[] = {
    A(CUBLASLT_MATMUL_PREF_SEARCH_MODE, struct lt_pref, search_mode),
    A(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, struct lt_pref, max_workspace),
    A(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, struct lt_pref, reduction_mask),
    A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, struct lt_pref, align[0]),
    A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, struct lt_pref, align[1]),
    A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, struct lt_pref, align[2]),
    A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, struct lt_pref, align[3]),
    A(CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, struct lt_pref, max_waves),
    A(CUBLASLT_MATMUL_PREF_IMPL_MASK, struct lt_pref, impl_mask),
};

/* Defaults as the real library reports them: no workspace, every reduction
 * scheme, 256-byte alignment, every implementation. */
static void pref_init(struct lt_pref *p, int heap)
{
    memset(p, 0, sizeof *p);
    p->magic = LT_PREF_MAGIC;
    p->reduction_mask = CUBLASLT_REDUCTION_SCHEME_MASK;
    for (int i = 0; i < 4; i++)
        p->align[i] = 256;
    p->impl_mask = UINT64_MAX;
    p->heap = heap;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
    LT_ENTER();
    if (!pref)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    struct lt_pref *p = malloc(sizeof *p);
    if (!p)
        EMU_CALL_RETURN(CUBLAS_STATUS_ALLOC_FAILED);
    pref_init(p, 1);
    *pref = (cublasLtMatmulPreference_t)p;
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t pref, size_t size)
{
    LT_ENTER();
    if (!pref || size < sizeof(struct lt_pref))
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    pref_init((struct lt_pref *)pref, 0);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    LT_ENTER();
    struct lt_pref *p = lt_pref(pref);
    if (!p)
        EMU_CALL_RETURN(pref ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS);
    p->magic = 0;
    if (p->heap)
        free(p);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                                                    size_t size)
{
    LT_ENTER();
    struct lt_pref *p = lt_pref(pref);
    EMU_CALL_RETURN(p ? lt_attr_set(p, pref_attrs, ARRAY_LEN(pref_attrs), attr, buf, size)
                      : CUBLAS_STATUS_INVALID_VALUE);
}

cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, void *buf,
                                                    size_t size, size_t *written)
{
    LT_ENTER();
    struct lt_pref *p = lt_pref(pref);
    EMU_CALL_RETURN(p ? lt_attr_get(p, pref_attrs, ARRAY_LEN(pref_attrs), attr, buf, size, written)
                      : CUBLAS_STATUS_INVALID_VALUE);
}

/* ---- transform and emulation descriptors: small attribute bags ---- */

struct lt_bag {                  /* at most 64 bytes */
    uint32_t magic;
    int32_t v[6];
    int32_t heap;
    const void *ptr;             /* emulation: FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER */
};
_Static_assert(sizeof(struct lt_bag) <= sizeof(cublasLtMatrixTransformDescOpaque_t), "bag fits");
_Static_assert(sizeof(struct lt_bag) <= sizeof(cublasLtEmulationDescOpaque_t), "bag fits");

static const struct lt_attr transform_attrs[] = {
    A(CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, struct lt_bag, v[0]),
    A(CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE, struct lt_bag, v[1]),
    A(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, struct lt_bag, v[2]),
    A(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, struct lt_bag, v[3]),
};

static const struct lt_attr emulation_attrs[] = {
    A(CUBLASLT_EMULATION_DESC_STRATEGY, struct lt_bag, v[0]),
    A(CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT, struct lt_bag, v[1]),
    A(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_CONTROL, struct lt_bag, v[2]),
    A(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MAX_MANTISSA_BIT_COUNT, struct lt_bag, v[3]),
    A(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_OFFSET, struct lt_bag, v[4]),
    A(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER, struct lt_bag, ptr),
};

static struct lt_bag *bag(const void *d, uint32_t magic)
{
    struct lt_bag *b = (struct lt_bag *)d;
    return b && b->magic == magic ? b : NULL;
}

static cublasStatus_t bag_create(void **out, uint32_t magic, int v0, int v1)
{
    if (!out)
        return CUBLAS_STATUS_INVALID_VALUE;
    struct lt_bag *b = calloc(1, sizeof *b);
    if (!b)
        return CUBLAS_STATUS_ALLOC_FAILED;
    b->magic = magic, b->heap = 1, b->v[0] = v0, b->v[1] = v1;
    *out = b;
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t bag_init(void *d, size_t size, uint32_t magic, int v0, int v1)
{
    if (!d || size < sizeof(struct lt_bag))
        return CUBLAS_STATUS_INVALID_VALUE;
    struct lt_bag *b = d;
    memset(b, 0, sizeof *b);
    b->magic = magic, b->v[0] = v0, b->v[1] = v1;
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t bag_destroy(void *d, uint32_t magic)
{
    struct lt_bag *b = bag(d, magic);
    if (!b)
        return d ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;
    b->magic = 0;
    if (b->heap)
        free(b);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixTransformDescCreate(cublasLtMatrixTransformDesc_t *desc, cudaDataType scale)
{
    LT_ENTER();
    EMU_CALL_RETURN(bag_create((void **)desc, LT_TRANSFORM_MAGIC, scale, CUBLASLT_POINTER_MODE_HOST));
}

cublasStatus_t cublasLtMatrixTransformDescInit_internal(cublasLtMatrixTransformDesc_t desc, size_t size,
                                                        cudaDataType scale)
{
    LT_ENTER();
    EMU_CALL_RETURN(bag_init(desc, size, LT_TRANSFORM_MAGIC, scale, CUBLASLT_POINTER_MODE_HOST));
}

cublasStatus_t cublasLtMatrixTransformDescDestroy(cublasLtMatrixTransformDesc_t desc)
{
    LT_ENTER();
    EMU_CALL_RETURN(bag_destroy(desc, LT_TRANSFORM_MAGIC));
}

cublasStatus_t cublasLtMatrixTransformDescSetAttribute(cublasLtMatrixTransformDesc_t desc,
                                                       cublasLtMatrixTransformDescAttributes_t attr, const void *buf,
                                                       size_t size)
{
    LT_ENTER();
    struct lt_bag *b = bag(desc, LT_TRANSFORM_MAGIC);
    EMU_CALL_RETURN(b ? lt_attr_set(b, transform_attrs, ARRAY_LEN(transform_attrs), attr, buf, size)
                      : CUBLAS_STATUS_INVALID_VALUE);
}

cublasStatus_t cublasLtMatrixTransformDescGetAttribute(cublasLtMatrixTransformDesc_t desc,
                                                       cublasLtMatrixTransformDescAttributes_t attr, void *buf,
                                                       size_t size, size_t *written)
{
    LT_ENTER();
    struct lt_bag *b = bag(desc, LT_TRANSFORM_MAGIC);
    EMU_CALL_RETURN(b ? lt_attr_get(b, transform_attrs, ARRAY_LEN(transform_attrs), attr, buf, size, written)
                      : CUBLAS_STATUS_INVALID_VALUE);
}

/* Emulation descriptor defaults (real library): strategy 0, special values 0xFFFF. */
cublasStatus_t cublasLtEmulationDescCreate(cublasLtEmulationDesc_t *desc)
{
    LT_ENTER();
    EMU_CALL_RETURN(bag_create((void **)desc, LT_EMULATION_MAGIC, 0, 0xffff));
}

cublasStatus_t cublasLtEmulationDescInit_internal(cublasLtEmulationDesc_t desc, size_t size)
{
    LT_ENTER();
    EMU_CALL_RETURN(bag_init(desc, size, LT_EMULATION_MAGIC, 0, 0xffff));
}

cublasStatus_t cublasLtEmulationDescDestroy(cublasLtEmulationDesc_t desc)
{
    LT_ENTER();
    EMU_CALL_RETURN(bag_destroy(desc, LT_EMULATION_MAGIC));
}

cublasStatus_t cublasLtEmulationDescSetAttribute(cublasLtEmulationDesc_t desc, cublasLtEmulationDescAttributes_t attr,
                                                 const void *buf, size_t size)
{
    LT_ENTER();
    struct lt_bag *b = bag(desc, LT_EMULATION_MAGIC);
    EMU_CALL_RETURN(b ? lt_attr_set(b, emulation_attrs, ARRAY_LEN(emulation_attrs), attr, buf, size)
                      : CUBLAS_STATUS_INVALID_VALUE);
}

cublasStatus_t cublasLtEmulationDescGetAttribute(cublasLtEmulationDesc_t desc, cublasLtEmulationDescAttributes_t attr,
                                                 void *buf, size_t size, size_t *written)
{
    LT_ENTER();
    struct lt_bag *b = bag(desc, LT_EMULATION_MAGIC);
    EMU_CALL_RETURN(b ? lt_attr_get(b, emulation_attrs, ARRAY_LEN(emulation_attrs), attr, buf, size, written)
                      : CUBLAS_STATUS_INVALID_VALUE);
}

/* cuDNN backend graphs: what finalizing each descriptor checks and
 * computes (engine counts, heuristic results, workspace sizes), and
 * cudnnBackendExecute, which finds the operations of the plan's graph and
 * traces each it recognises as one MAYA_REC_DNN.
 *
 * Engines: every operation graph has ENGINES engines (global indices 0..2);
 * heuristics return [0, 1] (modes INSTANT and A), [0, 1, 2] (B) or [2]
 * (FALLBACK); engine i needs i MiB of workspace. maya supports every graph
 * (nothing runs), so no plan fails to build.
 *
 * Recognised operations: convolutions (forward, backward data and filter),
 * matmuls, normalizations, and scaled dot-product attention, either as
 * cuDNN's SDPA operations or as the graph cuDNN's frontend builds for it
 * (Q.K^T, scale, causal mask from index generation and comparison,
 * softmax from reductions and exponentials, optional dropout, .V): one
 * record with q, k, v, o, the causal flag and the scale. Pointwise and
 * reduction operations around a main operation are fused into it in cuDNN's
 * kernels and get no record of their own; a graph of only such operations
 * gets one record (op POINTWISE or REDUCTION). nops = operations in the
 * graph. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

#define ENGINES 3

/* ---- finalize ---- */

static int has(const struct be_desc *d, int name)
{
    return be_attr(d, name) != NULL;
}

/* What an attribute reads back when the program did not set it: count 0
 * (an empty list) or one element of value (INT64, INT32 or an enum, or
 * BOOLEAN). */
struct be_default {
    int name, type;
    int64_t count, value;
};

static cudnnStatus_t put_defaults(struct be_desc *d, const struct be_default *list, size_t n)
{
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    for (size_t i = 0; i < n && !st; i++) {
        int64_t v64 = list[i].value;
        int32_t v32 = (int32_t)list[i].value;
        unsigned char b = list[i].value != 0;
        const void *v = list[i].type == CUDNN_TYPE_INT64 ? (const void *)&v64
                      : list[i].type == CUDNN_TYPE_BOOLEAN ? (const void *)&b : (const void *)&v32;
        if (!has(d, list[i].name))
            st = be_put(d, list[i].name, list[i].type, list[i].count, list[i].count ? v : NULL);
    }
    return st;
}

/* The descriptor-valued attribute names[i] of d exist and are of type want (-1: any). */
static int refs_ok(const struct be_desc *d, const int *names, int n, int want)
{
    for (int i = 0; i < n; i++) {
        const struct be_desc *r = be_ref(d, names[i], 0);
        if (!r || (want >= 0 && r->type != want))
            return 0;
    }
    return 1;
}

static cudnnStatus_t finalize_tensor(struct be_desc *d)
{
    int64_t dims[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX];
    int nd = 0, ns = 0, dt;
    const struct be_attr *da = be_attr(d, CUDNN_ATTR_TENSOR_DIMENSIONS), *sa = be_attr(d, CUDNN_ATTR_TENSOR_STRIDES);
    if (!da || !sa || !be_enum(d, CUDNN_ATTR_TENSOR_DATA_TYPE, &dt) || !has(d, CUDNN_ATTR_TENSOR_UNIQUE_ID) ||
        !has(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "tensor: dimensions, strides, data type, unique id and byte "
                         "alignment are required");
    if (da->count != sa->count || da->count < 1 || da->count > CUDNN_DIM_MAX)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "tensor: %lld dimensions and %lld strides (1 to %d, as many)",
                         (long long)da->count, (long long)sa->count, CUDNN_DIM_MAX);
    be_int64s(d, CUDNN_ATTR_TENSOR_DIMENSIONS, dims, CUDNN_DIM_MAX, &nd);
    be_int64s(d, CUDNN_ATTR_TENSOR_STRIDES, strides, CUDNN_DIM_MAX, &ns);
    for (int i = 0; i < nd; i++)
        if (dims[i] <= 0 || strides[i] <= 0)
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "tensor dimension %d: size %lld stride %lld", i,
                             (long long)dims[i], (long long)strides[i]);
    static const struct be_default defaults[] = {
        { CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, 0 },
        { CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, 0 },
        { CUDNN_ATTR_TENSOR_VECTOR_COUNT, CUDNN_TYPE_INT64, 1, 1 },
        { CUDNN_ATTR_TENSOR_VECTORIZED_DIMENSION, CUDNN_TYPE_INT64, 1, -1 },
    };
    return put_defaults(d, defaults, sizeof defaults / sizeof *defaults);
}

static cudnnStatus_t finalize_conv(struct be_desc *d)
{
    static const int arrays[] = { CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                                  CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS };
    int64_t n;
    int mode, ct;
    if (!be_int64(d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, &n) || !be_enum(d, CUDNN_ATTR_CONVOLUTION_CONV_MODE, &mode) ||
        !be_enum(d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, &ct))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "convolution: spatial dims, mode and compute type are required");
    if (n < 1 || n > CUDNN_DIM_MAX - 2)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "convolution: %lld spatial dimensions", (long long)n);
    for (int i = 0; i < 4; i++) {
        const struct be_attr *a = be_attr(d, arrays[i]);
        if (!a || a->count != n)
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "convolution: attribute %d needs %lld values", arrays[i],
                             (long long)n);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Required descriptor-valued attributes of each operation, and the type
 * of the first: TENSOR for all but a convolution's CONV_DESC and the like. */
static cudnnStatus_t finalize_op(struct be_desc *d)
{
    static const struct {
        int type;
        int tensors[6], ntensors;
        int desc, desc_type;
    } ops[] = {
        { CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
          { CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y }, 3,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR },
        { CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
          { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY }, 3,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR },
        { CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
          { CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY }, 3,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR },
        { CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
          { CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_ATTR_OPERATION_MATMUL_CDESC }, 3,
          CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_BACKEND_MATMUL_DESCRIPTOR },
        { CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, { 0 }, 0,
          CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_BACKEND_POINTWISE_DESCRIPTOR },
        { CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
          { CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_ATTR_OPERATION_REDUCTION_YDESC }, 2,
          CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_BACKEND_REDUCTION_DESCRIPTOR },
        { CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR,
          { CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
            CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC }, 4, 0, 0 },
        { CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR,
          { CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC,
            CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC,
            CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC }, 6, 0, 0 },
        { CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR,
          { CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC }, 2, 0, 0 },
        { CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR,
          { CUDNN_ATTR_OPERATION_NORM_BWD_XDESC, CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC,
            CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC }, 3, 0, 0 },
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        if (ops[i].type != d->type)
            continue;
        if (!refs_ok(d, ops[i].tensors, ops[i].ntensors, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            (ops[i].desc && !refs_ok(d, &ops[i].desc, 1, ops[i].desc_type)))
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "operation of type %d lacks a tensor or its descriptor",
                             d->type);
        if (d->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR &&
            !be_ref(d, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, 0) && !be_ref(d, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, 0))
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "pointwise operation without an output");
    }
    return CUDNN_STATUS_SUCCESS;
}

static int is_operation(int type)
{
    switch (type) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: case CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: case CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: case CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR: case CUDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR: case CUDNN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR: case CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR: case CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_EXPAND_BAND_MATRIX_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONTRACT_BAND_MATRIX_DESCRIPTOR: case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR: case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR:
    case BE_OPERATION_DIAGONAL_BAND_MASK: case BE_OPERATION_SOFTMAX: case BE_OPERATION_TRANSPOSE:
    case BE_OPERATION_SLICE: case BE_OPERATION_MOE_GROUPED_MATMUL_BWD:
        return 1;
    default:
        return 0;
    }
}

static cudnnStatus_t finalize_graph(struct be_desc *d)
{
    const struct be_attr *h = be_attr(d, CUDNN_ATTR_OPERATIONGRAPH_HANDLE);
    const struct be_attr *ops = be_attr(d, CUDNN_ATTR_OPERATIONGRAPH_OPS);
    /* The handle is optional (deprecated in cuDNN 9: execution names it). */
    if (h && (h->count != 1 || !dnn_handle_ok(*(cudnnHandle_t *)h->data)))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "operation graph: the handle given is not a cuDNN handle");
    if (!ops || ops->count < 1)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "operation graph: no operations");
    for (int64_t i = 0; i < ops->count; i++) {
        const struct be_desc *op = be_ref(d, CUDNN_ATTR_OPERATIONGRAPH_OPS, i);
        if (!is_operation(op->type) || !op->finalized)
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "operation graph: element %lld is not a finalized operation",
                             (long long)i);
    }
    return be_put(d, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, &(int64_t){ ENGINES });
}

/* An engine of graph g with global index i, finalized. */
static struct be_desc *make_engine(const struct be_desc *g, int64_t i)
{
    struct be_desc *e = be_new(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    if (!e || be_put(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g) ||
        be_put(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &i) || be_finalize(e)) {
        be_free(e);
        return NULL;
    }
    e->finalized = 1;
    return e;
}

static cudnnStatus_t finalize_engine(struct be_desc *d)
{
    const struct be_desc *g = be_ref(d, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 0);
    int64_t i;
    if (!g || g->type != CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR || !g->finalized ||
        !be_int64(d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, &i))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "engine: a finalized operation graph and a global index are required");
    if (i < 0 || i >= ENGINES)
        return dnn_error(CUDNN_STATUS_NOT_SUPPORTED, "engine %lld does not exist (%d engines)", (long long)i, ENGINES);
    /* no notes, knobs or layout requirements */
    static const struct be_default defaults[] = {
        { CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, 0, 0 },
        { CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, 0, 0 },
        { CUDNN_ATTR_ENGINE_KNOB_INFO, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, 0 },
        { CUDNN_ATTR_ENGINE_LAYOUT_INFO, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, 0 },
    };
    return put_defaults(d, defaults, sizeof defaults / sizeof *defaults);
}

static int64_t engine_workspace(int64_t index)
{
    return index << 20;
}

static cudnnStatus_t finalize_cfg(struct be_desc *d)
{
    const struct be_desc *e = be_ref(d, CUDNN_ATTR_ENGINECFG_ENGINE, 0);
    int64_t i;
    if (!e || e->type != CUDNN_BACKEND_ENGINE_DESCRIPTOR || !e->finalized ||
        !be_int64(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, &i))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "engine config: a finalized engine is required");
    static const struct be_default defaults[] = {
        { CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, 0 },
        { CUDNN_ATTR_ENGINECFG_INTERMEDIATE_INFO, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, 0 },
        { CUDNN_ATTR_ENGINECFG_SHARED_MEMORY_USED, CUDNN_TYPE_INT32, 1, 0 },
    };
    cudnnStatus_t st = be_put(d, CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                              &(int64_t){ engine_workspace(i) });
    return st ? st : put_defaults(d, defaults, sizeof defaults / sizeof *defaults);
}

static cudnnStatus_t finalize_heur(struct be_desc *d)
{
    const struct be_desc *g = be_ref(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, 0);
    int mode;
    if (!g || g->type != CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR || !g->finalized ||
        !be_enum(d, CUDNN_ATTR_ENGINEHEUR_MODE, &mode))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "heuristics: a finalized operation graph and a mode are required");
    int64_t first = 0, last = 1;
    if (mode == CUDNN_HEUR_MODE_B)
        last = 2;
    else if (mode == CUDNN_HEUR_MODE_FALLBACK)
        first = last = 2;
    else if (mode != CUDNN_HEUR_MODE_INSTANT && mode != CUDNN_HEUR_MODE_A)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "heuristics: mode %d", mode);
    struct be_desc *cfgs[ENGINES];
    int n = 0;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    for (int64_t i = first; i <= last && !st; i++) {
        struct be_desc *e = make_engine(g, i), *c = be_new(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        if (!e || !c || be_put(c, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e) ||
            finalize_cfg(c))
            st = CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
        else
            c->finalized = 1, cfgs[n++] = c;
        be_free(e);
        if (st)
            be_free(c);
    }
    if (!st)
        st = be_put(d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, cfgs);
    for (int i = 0; i < n; i++)
        be_free(cfgs[i]);
    return st;
}

static cudnnStatus_t finalize_plan(struct be_desc *d)
{
    const struct be_attr *h = be_attr(d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE);
    const struct be_desc *c = be_ref(d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0);
    int64_t ws;
    if (h && (h->count != 1 || !dnn_handle_ok(*(cudnnHandle_t *)h->data)))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "execution plan: the handle given is not a cuDNN handle");
    if (!c || c->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR || !c->finalized ||
        !be_int64(c, CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, &ws))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "execution plan: a finalized engine config is required");
    static const char json[] = "{\"emulated\": \"maya\"}";
    cudnnStatus_t st = be_put(d, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &ws);
    if (!st)
        st = be_put(d, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, sizeof json, json);
    static const struct be_default uids = { CUDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS, CUDNN_TYPE_INT64,
                                            0, 0 };
    return st ? st : put_defaults(d, &uids, 1);
}

static cudnnStatus_t finalize_pack(struct be_desc *d)
{
    const struct be_attr *u = be_attr(d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
    const struct be_attr *p = be_attr(d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
    if (!u || !p || u->count != p->count)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "variant pack: as many unique ids as data pointers are required");
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t be_finalize(struct be_desc *d)
{
    switch (d->type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR: return finalize_tensor(d);
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR: return finalize_conv(d);
    case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
        return has(d, CUDNN_ATTR_POINTWISE_MODE) ? CUDNN_STATUS_SUCCESS
                                                 : dnn_error(CUDNN_STATUS_BAD_PARAM, "pointwise: a mode is required");
    case CUDNN_BACKEND_MATMUL_DESCRIPTOR:
        return has(d, CUDNN_ATTR_MATMUL_COMP_TYPE)
                   ? CUDNN_STATUS_SUCCESS
                   : dnn_error(CUDNN_STATUS_BAD_PARAM, "matmul: a compute type is required");
    case CUDNN_BACKEND_REDUCTION_DESCRIPTOR:
        return has(d, CUDNN_ATTR_REDUCTION_OPERATOR)
                   ? CUDNN_STATUS_SUCCESS
                   : dnn_error(CUDNN_STATUS_BAD_PARAM, "reduction: an operator is required");
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: return finalize_graph(d);
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: return finalize_heur(d);
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR: return finalize_engine(d);
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR: return finalize_cfg(d);
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: return finalize_plan(d);
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR: return finalize_pack(d);
    default: return is_operation(d->type) ? finalize_op(d) : CUDNN_STATUS_SUCCESS;
    }
}

/* ---- execution ---- */

/* What execution needs of the graph: its operations and the variant pack. */
struct exec {
    struct be_desc **ops;
    int64_t nops;
    const int64_t *uids;
    void *const *ptrs;
    int64_t nptrs;
};

static void *pack_pointer(const struct exec *x, int64_t uid)
{
    for (int64_t i = 0; i < x->nptrs; i++)
        if (x->uids[i] == uid)
            return x->ptrs[i];
    return NULL;
}

static int64_t uid_of(const struct be_desc *t)
{
    int64_t u = -1;
    if (t)
        be_int64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, &u);
    return u;
}

static void tensor_to_trace(struct maya_tensor *t, const struct be_desc *d)
{
    memset(t, 0, sizeof *t);
    if (!d)
        return;
    int64_t dims[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX];
    int nd = 0, ns = 0, dt = 0;
    be_int64s(d, CUDNN_ATTR_TENSOR_DIMENSIONS, dims, CUDNN_DIM_MAX, &nd);
    be_int64s(d, CUDNN_ATTR_TENSOR_STRIDES, strides, CUDNN_DIM_MAX, &ns);
    be_enum(d, CUDNN_ATTR_TENSOR_DATA_TYPE, &dt);
    t->dtype = dt;
    t->ndims = nd < MAYA_TENSOR_MAX_DIMS ? nd : MAYA_TENSOR_MAX_DIMS;
    for (int i = 0; i < t->ndims; i++)
        t->dims[i] = dims[i], t->strides[i] = i < ns ? strides[i] : 0;
}

/* The same tensor with its last two dimensions swapped (K from K^T). */
static void swap_last2(struct maya_tensor *t)
{
    int n = t->ndims;
    if (n < 2)
        return;
    int64_t d = t->dims[n - 1], s = t->strides[n - 1];
    t->dims[n - 1] = t->dims[n - 2], t->strides[n - 1] = t->strides[n - 2];
    t->dims[n - 2] = d, t->strides[n - 2] = s;
}

/* Inputs and output of an operation, by its attributes. */
static int op_inputs(const struct be_desc *op, const struct be_desc **in, int max)
{
    static const int names[] = {
        CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
        CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC,
        CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_ATTR_OPERATION_MATMUL_BDESC,
        BE_ATTR_SOFTMAX_XDESC, BE_ATTR_DIAGONAL_BAND_MASK_XDESC, CUDNN_ATTR_OPERATION_RESHAPE_XDESC,
    };
    int n = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names && n < max; i++) {
        const struct be_desc *t = be_ref(op, names[i], 0);
        if (t)
            in[n++] = t;
    }
    return n;
}

static const struct be_desc *op_output(const struct be_desc *op)
{
    static const int names[] = { CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC,
                                 CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_ATTR_OPERATION_MATMUL_CDESC,
                                 CUDNN_ATTR_OPERATION_RNG_YDESC, BE_ATTR_SOFTMAX_YDESC,
                                 BE_ATTR_DIAGONAL_BAND_MASK_YDESC, CUDNN_ATTR_OPERATION_RESHAPE_YDESC };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const struct be_desc *t = be_ref(op, names[i], 0);
        if (t)
            return t;
    }
    return NULL;
}

static int pw_mode(const struct be_desc *op);

/* Is d, or a descriptor it holds (depth levels down), a mask operation? */
static int has_mask(const struct be_desc *d, int depth)
{
    if (!d)
        return 0;
    if (d->type == CUDNN_BACKEND_OPERATION_EXPAND_BAND_MATRIX_DESCRIPTOR || d->type == BE_OPERATION_DIAGONAL_BAND_MASK ||
        pw_mode(d) == CUDNN_POINTWISE_GEN_INDEX)
        return 1;
    for (int i = 0; depth > 0 && i < d->nattrs; i++)
        if (d->attrs[i].type == CUDNN_TYPE_BACKEND_DESCRIPTOR)
            for (int64_t j = 0; j < d->attrs[i].count; j++)
                if (has_mask(((struct be_desc **)d->attrs[i].data)[j], depth - 1))
                    return 1;
    return 0;
}

static int pw_mode(const struct be_desc *op)
{
    int mode = -1;
    const struct be_desc *pw = be_ref(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, 0);
    if (pw)
        be_enum(pw, CUDNN_ATTR_POINTWISE_MODE, &mode);
    return mode;
}

/* The operation that produces uid, or -1. */
static int64_t producer(const struct exec *x, int64_t uid)
{
    for (int64_t i = 0; i < x->nops; i++)
        if (uid >= 0 && uid_of(op_output(x->ops[i])) == uid)
            return i;
    return -1;
}

/* What lies on the way from a matmul's output back to another matmul: */
struct chain {
    int64_t first;               /* the matmul found, -1 if none */
    int exp, mask, scale_found, dropout;
    float scale;
    char *seen;                  /* operations visited */
};

/* Read a by-value scalar from the variant pack (host memory). */
static int by_value(const struct exec *x, const struct be_desc *t, float *v)
{
    int bv = 0, dt = 0;
    if (!be_bool(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, &bv) || !bv)
        return 0;
    const void *p = pack_pointer(x, uid_of(t));
    if (!p)
        return 0;
    be_enum(t, CUDNN_ATTR_TENSOR_DATA_TYPE, &dt);
    if (dt == CUDNN_DATA_DOUBLE) {
        double d;
        memcpy(&d, p, sizeof d);
        *v = (float)d;
    } else if (dt == CUDNN_DATA_FLOAT) {
        memcpy(v, p, sizeof *v);
    } else {
        return 0;
    }
    return 1;
}

static void walk_back(const struct exec *x, int64_t op, int64_t from, struct chain *c)
{
    if (op < 0 || c->seen[op])
        return;
    c->seen[op] = 1;
    const struct be_desc *o = x->ops[op];
    if (o->type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR && op != from) {
        if (c->first < 0)
            c->first = op;
        return;
    }
    if (o->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR) {
        int mode = pw_mode(o);
        if (mode == CUDNN_POINTWISE_EXP)
            c->exp = 1;
        if (mode == CUDNN_POINTWISE_GEN_INDEX || mode == CUDNN_POINTWISE_BINARY_SELECT)
            c->mask = 1;
        if (mode == CUDNN_POINTWISE_MUL || mode == CUDNN_POINTWISE_DIV) {
            const struct be_desc *b = be_ref(o, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, 0);
            float v;
            if (b && by_value(x, b, &v) && !c->scale_found) {
                c->scale = mode == CUDNN_POINTWISE_DIV && v != 0 ? 1.0f / v : v;
                c->scale_found = 1;
            }
        }
    }
    if (o->type == CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR)
        c->dropout = 1;
    if (o->type == CUDNN_BACKEND_OPERATION_EXPAND_BAND_MATRIX_DESCRIPTOR || o->type == BE_OPERATION_DIAGONAL_BAND_MASK)
        c->mask = 1;
    if (o->type == BE_OPERATION_SOFTMAX)
        c->exp = 1;
    const struct be_desc *in[8];
    int n = op_inputs(o, in, 8);
    for (int i = 0; i < n; i++)
        walk_back(x, producer(x, uid_of(in[i])), from, c);
}

static float dropout_of(const struct exec *x);

/* Does the output of operation i flow, before any matmul, into an
 * exponential (a softmax)? seen: scratch, one byte per operation. */
static int reaches_exp(const struct exec *x, int64_t i, char *seen)
{
    int64_t out = uid_of(op_output(x->ops[i]));
    for (int64_t k = 0; k < x->nops && out >= 0; k++) {
        const struct be_desc *in[8];
        int n = op_inputs(x->ops[k], in, 8), uses = 0;
        for (int j = 0; j < n; j++)
            uses |= uid_of(in[j]) == out;
        if (!uses || seen[k] || x->ops[k]->type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)
            continue;
        seen[k] = 1;
        if (pw_mode(x->ops[k]) == CUDNN_POINTWISE_EXP || x->ops[k]->type == BE_OPERATION_SOFTMAX ||
            reaches_exp(x, k, seen))
            return 1;
    }
    return 0;
}

static int same_dims(const struct maya_tensor *a, const struct maya_tensor *b)
{
    if (a->ndims != b->ndims)
        return 0;
    for (int i = 0; i < a->ndims; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

/* The frontend's attention backward graph: four or more matmuls around a
 * softmax recomputed from Q.K^T (S), dP = dO.V^T beside it, then dV, dQ,
 * dK. One SDPA_BWD record: q and k from S, v and o (dO's shape) from dP.
 * Returns 1 if the graph is one. */
static int attention_backward(const struct exec *x, struct maya_rec_dnn *r, char *seen)
{
    int nmm = 0;
    int64_t s_op = -1, dp_op = -1;
    for (int64_t i = 0; i < x->nops; i++) {
        if (x->ops[i]->type != CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)
            continue;
        nmm++;
        memset(seen, 0, (size_t)x->nops);
        if (s_op < 0 && reaches_exp(x, i, seen))
            s_op = i;
    }
    if (nmm < 4 || s_op < 0)
        return 0;
    struct maya_tensor s_out, t;
    tensor_to_trace(&s_out, be_ref(x->ops[s_op], CUDNN_ATTR_OPERATION_MATMUL_CDESC, 0));
    for (int64_t i = 0; i < x->nops && dp_op < 0; i++) {
        if (i == s_op || x->ops[i]->type != CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)
            continue;
        tensor_to_trace(&t, be_ref(x->ops[i], CUDNN_ATTR_OPERATION_MATMUL_CDESC, 0));
        if (same_dims(&t, &s_out))
            dp_op = i;
    }
    const struct be_desc *s = x->ops[s_op];
    r->op = MAYA_DNN_SDPA_BWD;
    r->ntensors = 4;
    tensor_to_trace(&r->t[0], be_ref(s, CUDNN_ATTR_OPERATION_MATMUL_ADESC, 0));
    tensor_to_trace(&r->t[1], be_ref(s, CUDNN_ATTR_OPERATION_MATMUL_BDESC, 0));
    swap_last2(&r->t[1]);
    if (dp_op >= 0) {
        tensor_to_trace(&r->t[2], be_ref(x->ops[dp_op], CUDNN_ATTR_OPERATION_MATMUL_BDESC, 0));
        swap_last2(&r->t[2]); /* V^T -> V */
        tensor_to_trace(&r->t[3], be_ref(x->ops[dp_op], CUDNN_ATTR_OPERATION_MATMUL_ADESC, 0));
    }
    be_enum(be_ref(s, CUDNN_ATTR_OPERATION_MATMUL_DESC, 0), CUDNN_ATTR_MATMUL_COMP_TYPE, &r->compute_type);
    /* the scale: a multiplication of S by a by-value scalar; causal: a mask anywhere */
    r->attn_scale = 1.0f;
    int64_t s_uid = uid_of(be_ref(s, CUDNN_ATTR_OPERATION_MATMUL_CDESC, 0));
    for (int64_t i = 0; i < x->nops; i++) {
        const struct be_desc *o = x->ops[i];
        const struct be_desc *xin = be_ref(o, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, 0);
        const struct be_desc *b = be_ref(o, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, 0);
        int mode = pw_mode(o);
        float v;
        if ((mode == CUDNN_POINTWISE_MUL || mode == CUDNN_POINTWISE_DIV) && uid_of(xin) == s_uid && b &&
            by_value(x, b, &v))
            r->attn_scale = mode == CUDNN_POINTWISE_DIV && v != 0 ? 1.0f / v : v;
        r->causal |= has_mask(o, 0);
        if (o->type == CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR)
            r->dropout = dropout_of(x);
    }
    return 1;
}

/* Probability that the graph's RNG drops an element (1 - Bernoulli keep
 * probability), 0 if none. */
static float dropout_of(const struct exec *x)
{
    for (int64_t i = 0; i < x->nops; i++) {
        const struct be_desc *rng = be_ref(x->ops[i], CUDNN_ATTR_OPERATION_RNG_DESC, 0);
        double p;
        if (rng && be_real(rng, CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY, &p))
            return (float)(1.0 - p);
    }
    return 0;
}

/* Fill a convolution record from a conv operation's attributes. */
static void conv_record(struct maya_rec_dnn *r, const struct be_desc *op, int x_attr, int w_attr, int y_attr,
                        int conv_attr, uint32_t kind)
{
    r->op = kind;
    r->ntensors = 3;
    tensor_to_trace(&r->t[0], be_ref(op, x_attr, 0));
    tensor_to_trace(&r->t[1], be_ref(op, w_attr, 0));
    tensor_to_trace(&r->t[2], be_ref(op, y_attr, 0));
    const struct be_desc *c = be_ref(op, conv_attr, 0);
    int64_t n = 0, v[CUDNN_DIM_MAX];
    int k;
    be_int64(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, &n);
    r->conv_nspatial = (int32_t)n;
    be_enum(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, &r->conv_mode);
    be_enum(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, &r->compute_type);
    r->groups = 1;
    /* groups: input channels over the filter's */
    if (r->t[0].ndims > 1 && r->t[1].ndims > 1 && r->t[1].dims[1] > 0) {
        int64_t cin = kind == MAYA_DNN_CONV_BWD_DATA ? r->t[0].dims[1] : r->t[0].dims[1];
        r->groups = (int32_t)(cin / r->t[1].dims[1]);
    }
    static const int attrs[4] = { CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                                  CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_ATTR_CONVOLUTION_DILATIONS };
    int64_t *dst[4] = { r->pad_pre, r->pad_post, r->stride, r->dilation };
    for (int a = 0; a < 4; a++)
        if (be_int64s(c, attrs[a], v, CUDNN_DIM_MAX, &k))
            for (int i = 0; i < k && i < 3; i++)
                dst[a][i] = v[i];
}

/* Emit one record per recognised operation of the graph. */
static int trace_graph(cudnnHandle_t h, uint32_t api, uint64_t t0, const struct exec *x, const struct maya_rec_dnn *base)
{
    int emitted = 0;
    char *fused = calloc((size_t)x->nops, 1); /* Q.K^T matmuls of an attention */
    char *seen = calloc((size_t)x->nops, 1);
    struct chain *att = calloc((size_t)x->nops, sizeof *att); /* per P.V matmul: its Q.K^T */
    if (!fused || !seen || !att) {
        free(fused);
        free(seen);
        free(att);
        return -1;
    }
    /* First find the attentions: a matmul whose A input comes, through a
     * softmax (an exponential), from another matmul. */
    for (int64_t i = 0; i < x->nops; i++) {
        att[i].first = -1;
        if (x->ops[i]->type != CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)
            continue;
        struct chain c = { .first = -1, .scale = 1.0f, .seen = seen };
        memset(seen, 0, (size_t)x->nops);
        walk_back(x, producer(x, uid_of(be_ref(x->ops[i], CUDNN_ATTR_OPERATION_MATMUL_ADESC, 0))), i, &c);
        if (c.first >= 0 && c.exp && !fused[c.first] && !fused[i]) {
            att[i] = c;
            fused[c.first] = 1;
        }
    }
    struct maya_rec_dnn bwd = *base;
    if (attention_backward(x, &bwd, seen)) {
        free(fused);
        free(seen);
        free(att);
        return dnn_rec_finish(h, api, t0, CUDNN_STATUS_SUCCESS, &bwd) == CUDNN_STATUS_SUCCESS;
    }
    for (int64_t i = 0; i < x->nops; i++) {
        const struct be_desc *op = x->ops[i];
        struct maya_rec_dnn r = *base;
        switch (op->type) {
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
            conv_record(&r, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                        CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                        MAYA_DNN_CONV_FWD);
            break;
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
            conv_record(&r, op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
                        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, MAYA_DNN_CONV_BWD_DATA);
            break;
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
            conv_record(&r, op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
                        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
                        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, MAYA_DNN_CONV_BWD_FILTER);
            break;
        case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: {
            if (fused[i])
                continue;
            const struct be_desc *mmd = be_ref(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, 0);
            be_enum(mmd, CUDNN_ATTR_MATMUL_COMP_TYPE, &r.compute_type);
            if (att[i].first >= 0) {
                const struct be_desc *qk = x->ops[att[i].first];
                r.op = MAYA_DNN_SDPA_FWD;
                r.ntensors = 4;
                tensor_to_trace(&r.t[0], be_ref(qk, CUDNN_ATTR_OPERATION_MATMUL_ADESC, 0));
                tensor_to_trace(&r.t[1], be_ref(qk, CUDNN_ATTR_OPERATION_MATMUL_BDESC, 0));
                swap_last2(&r.t[1]); /* K^T [.., d, s_kv] -> K [.., s_kv, d] */
                tensor_to_trace(&r.t[2], be_ref(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, 0));
                tensor_to_trace(&r.t[3], be_ref(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, 0));
                r.causal = att[i].mask;
                r.attn_scale = att[i].scale;
                r.dropout = att[i].dropout ? dropout_of(x) : 0;
            } else {
                r.op = MAYA_DNN_MATMUL;
                r.ntensors = 3;
                tensor_to_trace(&r.t[0], be_ref(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, 0));
                tensor_to_trace(&r.t[1], be_ref(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, 0));
                tensor_to_trace(&r.t[2], be_ref(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, 0));
            }
            break;
        }
        case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR: case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR: {
            int fwd = op->type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR;
            r.op = fwd ? MAYA_DNN_SDPA_FWD : MAYA_DNN_SDPA_BWD;
            r.ntensors = 4;
            int base_attr = fwd ? CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC : CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC;
            for (int k = 0; k < 4; k++)
                tensor_to_trace(&r.t[k], be_ref(op, base_attr + k, 0));
            const struct be_desc *s = be_ref(op, fwd ? CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC
                                                     : CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, 0);
            float v;
            r.attn_scale = s && by_value(x, s, &v) ? v : 1.0f / sqrtf((float)(r.t[0].ndims ? r.t[0].dims[r.t[0].ndims - 1] : 1));
            r.compute_type = CUDNN_DATA_FLOAT;
            /* causal: a band or mask operation in the graph, or in the
             * subgraph the operation carries (cuDNN 9.21) */
            for (int64_t k = 0; k < x->nops; k++)
                r.causal |= has_mask(x->ops[k], 3);
            break;
        }
        case CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR:
            r.op = MAYA_DNN_NORM;
            r.ntensors = 3;
            tensor_to_trace(&r.t[0], be_ref(op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, 0));
            tensor_to_trace(&r.t[1], be_ref(op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, 0));
            tensor_to_trace(&r.t[2], be_ref(op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, 0));
            r.compute_type = r.t[0].dtype;
            break;
        case CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR:
            r.op = MAYA_DNN_NORM;
            r.ntensors = 3;
            tensor_to_trace(&r.t[0], be_ref(op, CUDNN_ATTR_OPERATION_NORM_BWD_XDESC, 0));
            tensor_to_trace(&r.t[1], be_ref(op, CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC, 0));
            tensor_to_trace(&r.t[2], be_ref(op, CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC, 0));
            r.compute_type = r.t[0].dtype;
            break;
        default:
            continue;
        }
        if (dnn_rec_finish(h, api, t0, CUDNN_STATUS_SUCCESS, &r) != CUDNN_STATUS_SUCCESS)
            break;
        /* the next operation's record begins where this one's ended */
        if (r.call.t_exit_ns)
            t0 = r.call.t_exit_ns;
        emitted++;
    }
    free(fused);
    free(seen);
    free(att);
    return emitted;
}

/* A graph of pointwise / reduction (and other fused) operations only: one
 * record, of the first such operation's kind, from the first input to the
 * last output. */
static cudnnStatus_t trace_fused(cudnnHandle_t h, uint32_t api, uint64_t t0, const struct exec *x,
                                 struct maya_rec_dnn *r)
{
    r->op = MAYA_DNN_OTHER;
    for (int64_t i = 0; i < x->nops; i++) {
        if (x->ops[i]->type == CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR) {
            r->op = MAYA_DNN_REDUCTION;
            break;
        }
        if (x->ops[i]->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
            r->op = MAYA_DNN_POINTWISE;
    }
    const struct be_desc *in[8];
    int n = op_inputs(x->ops[0], in, 8);
    r->ntensors = 2;
    tensor_to_trace(&r->t[0], n ? in[0] : NULL);
    tensor_to_trace(&r->t[1], op_output(x->ops[x->nops - 1]));
    r->compute_type = r->t[0].dtype;
    return dnn_rec_finish(h, api, t0, CUDNN_STATUS_SUCCESS, r);
}

cudnnStatus_t be_execute(cudnnHandle_t h, uint32_t api, uint64_t t0, struct be_desc *plan, struct be_desc *pack)
{
    if (!dnn_handle_ok(h))
        return dnn_call_end(api, t0, dnn_error(CUDNN_STATUS_BAD_PARAM, "cudnnBackendExecute: not a cuDNN handle"));
    if (!plan || plan->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || !plan->finalized || !pack ||
        pack->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR || !pack->finalized)
        return dnn_call_end(api, t0, dnn_error(CUDNN_STATUS_BAD_PARAM,
                                               "cudnnBackendExecute: a finalized plan and variant pack are required"));
    const struct be_desc *cfg = be_ref(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0);
    const struct be_desc *eng = be_ref(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, 0);
    const struct be_desc *g = be_ref(eng, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 0);
    const struct be_attr *ops = be_attr(g, CUDNN_ATTR_OPERATIONGRAPH_OPS);
    const struct be_attr *uids = be_attr(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
    const struct be_attr *ptrs = be_attr(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
    int64_t index = -1, ws = 0;
    be_int64(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, &index);
    be_int64(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, &ws);
    struct exec x = { .ops = (struct be_desc **)ops->data, .nops = ops->count, .uids = uids->data,
                      .ptrs = ptrs->data, .nptrs = uids->count };
    /* every tensor in memory needs its pointer, the plan its workspace */
    for (int64_t i = 0; i < x.nops; i++) {
        const struct be_desc *op = x.ops[i];
        for (int k = 0; k < op->nattrs; k++) {
            const struct be_attr *a = &op->attrs[k];
            if (a->type != CUDNN_TYPE_BACKEND_DESCRIPTOR)
                continue;
            for (int64_t j = 0; j < a->count; j++) {
                const struct be_desc *t = ((struct be_desc **)a->data)[j];
                int virt = 0;
                if (t->type != CUDNN_BACKEND_TENSOR_DESCRIPTOR)
                    continue;
                be_bool(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, &virt);
                if (!virt && !pack_pointer(&x, uid_of(t)))
                    return dnn_call_end(api, t0, dnn_error(CUDNN_STATUS_BAD_PARAM,
                                                           "cudnnBackendExecute: the variant pack has no pointer "
                                                           "for tensor %lld", (long long)uid_of(t)));
            }
        }
    }
    const struct be_attr *wsp = be_attr(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
    if (ws > 0 && (!wsp || wsp->count < 1 || !*(void **)wsp->data))
        return dnn_call_end(api, t0, dnn_error(CUDNN_STATUS_BAD_PARAM,
                                               "cudnnBackendExecute: the plan needs %lld bytes of workspace, the "
                                               "variant pack gives none", (long long)ws));
    struct maya_rec_dnn base;
    dnn_rec_init(&base, MAYA_DNN_OTHER);
    base.algo = (int32_t)index;
    base.workspace_bytes = (uint64_t)ws;
    base.nops = (uint32_t)x.nops;
    int n = trace_graph(h, api, t0, &x, &base);
    if (n < 0)
        return dnn_call_end(api, t0, CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED);
    if (n == 0)
        return trace_fused(h, api, t0, &x, &base);
    return CUDNN_STATUS_SUCCESS;
}

/* cuDNN backend graphs: what finalizing each descriptor checks and
 * computes (engine counts, heuristic results, workspace sizes), and
 * cudnnBackendExecute, which checks the plan and variant pack and traces
 * the operations of the plan's graph as be_trace.c recognises them.
 *
 * Engines: every operation graph has ENGINES engines (global indices 0..2);
 * heuristics return [0, 1] (modes INSTANT and A), [0, 1, 2] (B) or [2]
 * (FALLBACK); engine i needs i MiB of workspace. maya supports every graph
 * (nothing runs), so no plan fails to build. */
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

/* be_trace's writer: each record on the handle's stream (or into its
 * capture), the next one beginning where the last one ended. */
struct emit_state {
    cudnnHandle_t h;
    uint32_t api;
    uint64_t t0;
};

static int emit(struct maya_rec_dnn *r, void *arg)
{
    struct emit_state *e = arg;
    cudnnStatus_t st = dnn_rec_finish(e->h, e->api, e->t0, CUDNN_STATUS_SUCCESS, r);
    if (st == CUDNN_STATUS_SUCCESS && r->call.t_exit_ns)
        e->t0 = r->call.t_exit_ns;
    return (int)st;
}

cudnnStatus_t be_execute(cudnnHandle_t h, uint32_t api, uint64_t t0, struct be_desc *plan, struct be_desc *pack)
{
    if (!dnn_handle_ok(h))
        return dnn_call_end(api, t0, dnn_error(CUDNN_STATUS_BAD_PARAM, "cudnnBackendExecute: not a cuDNN handle"));
    struct be_exec x;
    struct maya_rec_dnn base;
    if (!plan || plan->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || !plan->finalized || !pack ||
        pack->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR || !pack->finalized || be_exec_init(&x, &base, plan, pack))
        return dnn_call_end(api, t0, dnn_error(CUDNN_STATUS_BAD_PARAM,
                                               "cudnnBackendExecute: a finalized plan and variant pack are required"));
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
                if (!virt && !be_pack_pointer(&x, be_uid_of(t)))
                    return dnn_call_end(api, t0, dnn_error(CUDNN_STATUS_BAD_PARAM,
                                                           "cudnnBackendExecute: the variant pack has no pointer "
                                                           "for tensor %lld", (long long)be_uid_of(t)));
            }
        }
    }
    const struct be_attr *wsp = be_attr(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
    if (base.workspace_bytes > 0 && (!wsp || wsp->count < 1 || !*(void **)wsp->data))
        return dnn_call_end(api, t0, dnn_error(CUDNN_STATUS_BAD_PARAM,
                                               "cudnnBackendExecute: the plan needs %lld bytes of workspace, the "
                                               "variant pack gives none", (long long)base.workspace_bytes));
    struct emit_state e = { h, api, t0 };
    int n = be_trace_graph(&x, &base, emit, &e);
    if (n < 0)
        return dnn_call_end(api, t0, CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED);
    if (n == 0)
        return (cudnnStatus_t)be_trace_fused(&x, &base, emit, &e);
    return CUDNN_STATUS_SUCCESS;
}

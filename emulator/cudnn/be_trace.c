/* What a cuDNN backend graph's execution is traced as (be_trace.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "be_trace.h"

int be_exec_init(struct be_exec *x, struct maya_rec_dnn *base, const struct be_desc *plan,
                 const struct be_desc *pack)
{
    const struct be_desc *cfg = be_ref(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0);
    const struct be_desc *eng = be_ref(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, 0);
    const struct be_desc *g = be_ref(eng, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 0);
    const struct be_attr *ops = be_attr(g, CUDNN_ATTR_OPERATIONGRAPH_OPS);
    const struct be_attr *uids = be_attr(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
    const struct be_attr *ptrs = be_attr(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
    memset(x, 0, sizeof *x);
    if (!ops || ops->type != CUDNN_TYPE_BACKEND_DESCRIPTOR || ops->count < 1)
        return -1;
    x->ops = (struct be_desc **)ops->data;
    x->nops = ops->count;
    if (uids && ptrs && uids->type == CUDNN_TYPE_INT64 && ptrs->type == CUDNN_TYPE_VOID_PTR) {
        x->uids = uids->data;
        x->ptrs = ptrs->data;
        x->nptrs = uids->count < ptrs->count ? uids->count : ptrs->count;
    }
    int64_t index = -1, ws = 0;
    be_int64(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, &index);
    be_int64(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, &ws);
    dnn_rec_init(base, MAYA_DNN_OTHER);
    base->algo = (int32_t)index;
    base->workspace_bytes = (uint64_t)ws;
    base->nops = (uint32_t)x->nops;
    return 0;
}

void dnn_rec_init(struct maya_rec_dnn *r, uint32_t op)
{
    memset(r, 0, sizeof *r);
    r->h.type = MAYA_REC_DNN;
    r->h.bytes = sizeof *r;
    r->op = op;
    r->algo = -1;
}

void *be_pack_pointer(const struct be_exec *x, int64_t uid)
{
    for (int64_t i = 0; i < x->nptrs; i++)
        if (x->uids[i] == uid)
            return x->ptrs[i];
    return NULL;
}

int64_t be_uid_of(const struct be_desc *t)
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
static int64_t producer(const struct be_exec *x, int64_t uid)
{
    for (int64_t i = 0; i < x->nops; i++)
        if (uid >= 0 && be_uid_of(op_output(x->ops[i])) == uid)
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
static int by_value(const struct be_exec *x, const struct be_desc *t, float *v)
{
    int bv = 0, dt = 0;
    if (!be_bool(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, &bv) || !bv)
        return 0;
    const void *p = be_pack_pointer(x, be_uid_of(t));
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

static void walk_back(const struct be_exec *x, int64_t op, int64_t from, struct chain *c)
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
        walk_back(x, producer(x, be_uid_of(in[i])), from, c);
}

static float dropout_of(const struct be_exec *x);

/* Does the output of operation i flow, before any matmul, into an
 * exponential (a softmax)? seen: scratch, one byte per operation. */
static int reaches_exp(const struct be_exec *x, int64_t i, char *seen)
{
    int64_t out = be_uid_of(op_output(x->ops[i]));
    for (int64_t k = 0; k < x->nops && out >= 0; k++) {
        const struct be_desc *in[8];
        int n = op_inputs(x->ops[k], in, 8), uses = 0;
        for (int j = 0; j < n; j++)
            uses |= be_uid_of(in[j]) == out;
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
static int attention_backward(const struct be_exec *x, struct maya_rec_dnn *r, char *seen)
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
    int64_t s_uid = be_uid_of(be_ref(s, CUDNN_ATTR_OPERATION_MATMUL_CDESC, 0));
    for (int64_t i = 0; i < x->nops; i++) {
        const struct be_desc *o = x->ops[i];
        const struct be_desc *xin = be_ref(o, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, 0);
        const struct be_desc *b = be_ref(o, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, 0);
        int mode = pw_mode(o);
        float v;
        if ((mode == CUDNN_POINTWISE_MUL || mode == CUDNN_POINTWISE_DIV) && be_uid_of(xin) == s_uid && b &&
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
static float dropout_of(const struct be_exec *x)
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

int be_trace_graph(const struct be_exec *x, const struct maya_rec_dnn *base, be_emit_fn emit, void *arg)
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
        walk_back(x, producer(x, be_uid_of(be_ref(x->ops[i], CUDNN_ATTR_OPERATION_MATMUL_ADESC, 0))), i, &c);
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
        return emit(&bwd, arg) == 0;
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
        if (emit(&r, arg) != 0)
            break;
        emitted++;
    }
    free(fused);
    free(seen);
    free(att);
    return emitted;
}

int be_trace_fused(const struct be_exec *x, struct maya_rec_dnn *r, be_emit_fn emit, void *arg)
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
    return emit(r, arg);
}

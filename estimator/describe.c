/* Describing an op: its family and the physics every model starts from. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "est_internal.h"
#include "maya/common.h"
#include "maya/kwork.h"

/* cudaDataType_t, cublasComputeType_t and cudnnDataType_t values (CUDA 13
 * library_types.h, cublas_api.h, cudnn_graph.h); the headers are not needed
 * beyond these numbers. */
enum {
    CUDA_R_32F_ = 0, CUDA_R_64F_ = 1, CUDA_R_16F_ = 2, CUDA_R_8I_ = 3, CUDA_R_16BF_ = 14,
    CUDA_R_8F_E4M3_ = 28, CUDA_R_8F_E5M2_ = 29,
    COMPUTE_16F = 64, COMPUTE_16F_PEDANTIC = 65, COMPUTE_32F = 68, COMPUTE_32F_PEDANTIC = 69,
    COMPUTE_64F = 70, COMPUTE_64F_PEDANTIC = 71, COMPUTE_32I = 72, COMPUTE_32I_PEDANTIC = 73,
    COMPUTE_32F_FAST_16F = 74, COMPUTE_32F_FAST_16BF = 75, COMPUTE_32F_FAST_TF32 = 77,
    DNN_FLOAT = 0, DNN_DOUBLE = 1, DNN_HALF = 2, DNN_INT8 = 3, DNN_BF16 = 9,
    DNN_FP8_E4M3 = 12, DNN_FP8_E5M2 = 13,
};

static const char *const prec_names[EST_NPREC] = {
    [EST_P_FP64] = "fp64", [EST_P_FP32] = "fp32", [EST_P_TF32] = "tf32", [EST_P_FP16] = "fp16",
    [EST_P_BF16] = "bf16", [EST_P_FP8] = "fp8", [EST_P_INT8] = "int8",
};

const char *est_prec_name(enum est_prec p)
{
    return p < EST_NPREC ? prec_names[p] : "?";
}

int est_prec_parse(const char *s)
{
    for (int i = 0; i < EST_NPREC; i++)
        if (!strcasecmp(s, prec_names[i]))
            return i;
    if (!strcasecmp(s, "half"))
        return EST_P_FP16;
    if (!strcasecmp(s, "float"))
        return EST_P_FP32;
    if (!strcasecmp(s, "double"))
        return EST_P_FP64;
    return -1;
}

int est_prec_bytes(enum est_prec p)
{
    switch (p) {
    case EST_P_FP64: return 8;
    case EST_P_FP32: case EST_P_TF32: return 4;
    case EST_P_FP16: case EST_P_BF16: return 2;
    default: return 1;
    }
}

enum est_prec est_prec_from_cuda(int atype, int compute_type)
{
    switch (atype) {
    case CUDA_R_64F_: return EST_P_FP64;
    case CUDA_R_16F_: return EST_P_FP16;
    case CUDA_R_16BF_: return EST_P_BF16;
    case CUDA_R_8F_E4M3_: case CUDA_R_8F_E5M2_: return EST_P_FP8;
    case CUDA_R_8I_: return EST_P_INT8;
    default: break;
    }
    /* fp32 inputs: the compute type says whether cuBLAS may use tensor cores. */
    switch (compute_type) {
    case COMPUTE_32F_FAST_TF32: return EST_P_TF32;
    case COMPUTE_32F_FAST_16F: return EST_P_FP16;
    case COMPUTE_32F_FAST_16BF: return EST_P_BF16;
    case COMPUTE_64F: case COMPUTE_64F_PEDANTIC: return EST_P_FP64;
    case COMPUTE_16F: case COMPUTE_16F_PEDANTIC: return EST_P_FP16;
    case COMPUTE_32I: case COMPUTE_32I_PEDANTIC: return EST_P_INT8;
    default: return EST_P_FP32;
    }
}

enum est_prec est_prec_from_cudnn(int dtype, int compute_type)
{
    switch (dtype) {
    case DNN_DOUBLE: return EST_P_FP64;
    case DNN_HALF: return EST_P_FP16;
    case DNN_BF16: return EST_P_BF16;
    case DNN_FP8_E4M3: case DNN_FP8_E5M2: return EST_P_FP8;
    case DNN_INT8: return EST_P_INT8;
    default:
        /* float data: cuDNN convolutions use TF32 tensor cores by default on
         * Ampere and later (CUDNN's default math, PyTorch's
         * backends.cudnn.allow_tf32 = True); est_peak_flops falls back to
         * FP32 where a GPU has no TF32. */
        return compute_type == DNN_DOUBLE ? EST_P_FP64 : EST_P_TF32;
    }
}

void est_desc_gemm(struct est_desc *d, double m, double n, double k, double batch, enum est_prec p)
{
    d->m = m, d->n = n, d->k = k, d->batch = batch;
    d->prec = p;
    d->elem_bytes = est_prec_bytes(p);
    d->flops = 2.0 * m * n * k * batch;
    /* A and B read once, C written once (beta is not traced; most training
     * GEMMs have beta = 0). Outputs of 8-bit GEMMs are wider: count 2 bytes. */
    double out_bytes = d->elem_bytes < 2 ? 2 : d->elem_bytes;
    d->bytes = batch * ((m * k + k * n) * d->elem_bytes + m * n * out_bytes);
}

static void describe_gemm(const struct maya_rec_gemm *g, struct est_desc *d)
{
    double batch = g->batch > 0 ? (double)g->batch : 1;
    d->family = batch > 1 ? EST_BATCHED_GEMM : EST_GEMM;
    est_desc_gemm(d, (double)(g->m > 0 ? g->m : 0), (double)(g->n > 0 ? g->n : 0),
                  (double)(g->k > 0 ? g->k : 0), batch, est_prec_from_cuda(g->atype, g->compute_type));
}

static double tensor_elems(const struct maya_tensor *t)
{
    if (t->ndims <= 0 || t->ndims > MAYA_TENSOR_MAX_DIMS)
        return 0;
    double n = 1;
    for (int i = 0; i < t->ndims; i++)
        n *= t->dims[i] > 0 ? (double)t->dims[i] : 0;
    return n;
}

/* A convolution as its implicit GEMM: M = N*P*Q (output pixels), N = K
 * (output channels), K = C*R*S/groups (the filter's dims[1] is already
 * C/groups). Backward data and filter passes do
 * the same FLOPs with the roles swapped. Tensors: x, w, y (NCHW dims). */
static void describe_conv(const struct maya_rec_dnn *r, struct est_desc *d)
{
    const struct maya_tensor *x = &r->t[0], *w = &r->t[1], *y = &r->t[2];
    enum est_prec p = est_prec_from_cudnn(x->dtype, r->compute_type);
    double out_pixels = 1, filter = 1;
    if (y->ndims >= 3 && w->ndims >= 3) {
        out_pixels = (double)y->dims[0];
        for (int i = 2; i < y->ndims; i++)
            out_pixels *= (double)y->dims[i];
        for (int i = 2; i < w->ndims; i++)
            filter *= (double)w->dims[i];
    }
    double kout = w->ndims >= 1 ? (double)w->dims[0] : 0;
    double cin = w->ndims >= 2 ? (double)w->dims[1] : 0; /* already C/groups */
    est_desc_gemm(d, out_pixels, kout, cin * filter, 1, p);
    d->family = EST_CONV;
    d->winograd = w->ndims == 4 && w->dims[2] == 3 && w->dims[3] == 3 && r->stride[0] <= 1 && r->stride[1] <= 1 &&
                  r->dilation[0] <= 1 && r->dilation[1] <= 1 && r->groups <= 1;
    d->bytes = (tensor_elems(x) + tensor_elems(w) + tensor_elems(y)) * d->elem_bytes;
}

void est_desc_attention(struct est_desc *d, double b, double heads, double kv_heads, double sq,
                        double skv, double hd, int causal, int backward, enum est_prec p)
{
    d->family = EST_ATTENTION;
    d->prec = p == EST_P_TF32 ? EST_P_FP32 : p; /* attention kernels run fp32 on CUDA cores */
    d->elem_bytes = est_prec_bytes(d->prec);
    d->batch = b, d->heads = heads, d->seq_q = sq, d->seq_kv = skv, d->head_dim = hd;
    d->causal = causal, d->backward = backward;
    /* as a batch of GEMMs (for the features): [sq x hd] x [hd x skv] per head */
    d->m = sq, d->n = skv, d->k = hd;
    /* Query/key pairs computed: all of them, or under a causal mask aligned
     * to the end of the keys (a chunk attends to the cache and to itself). */
    double pairs = sq * skv;
    if (causal && sq <= skv)
        pairs = sq * (skv - sq) + sq * (sq + 1) / 2;
    d->flops = 4.0 * b * heads * pairs * hd * (backward ? 2.5 : 1);
    double io = b * hd * (2 * heads * sq + 2 * (kv_heads > 0 ? kv_heads : heads) * skv); /* q, o, k, v */
    d->bytes = io * d->elem_bytes * (backward ? 2 : 1);
}

/* SDPA: q [b, h, s_q, d], k/v [b, h_kv, s_kv, d]. Forward: two GEMMs of
 * 2*s_q*s_kv*d FLOPs per head (about half under a causal mask); backward
 * does 2.5 times the forward's work (FlashAttention-2 paper's count). */
static void describe_sdpa(const struct maya_rec_dnn *r, struct est_desc *d)
{
    const struct maya_tensor *q = &r->t[0], *k = &r->t[1];
    enum est_prec p = est_prec_from_cudnn(q->dtype, r->compute_type);
    if (q->ndims == 4 && k->ndims == 4)
        est_desc_attention(d, (double)q->dims[0], (double)q->dims[1], (double)k->dims[1],
                           (double)q->dims[2], (double)k->dims[2], (double)q->dims[3], r->causal != 0,
                           r->op == MAYA_DNN_SDPA_BWD, p);
    else
        est_desc_attention(d, 0, 0, 0, 0, 0, 0, 0, 0, p);
}

static void describe_dnn(const struct maya_rec_dnn *r, struct est_desc *d)
{
    switch (r->op) {
    case MAYA_DNN_CONV_FWD: case MAYA_DNN_CONV_BWD_DATA: case MAYA_DNN_CONV_BWD_FILTER:
        describe_conv(r, d);
        return;
    case MAYA_DNN_SDPA_FWD: case MAYA_DNN_SDPA_BWD:
        describe_sdpa(r, d);
        return;
    case MAYA_DNN_MATMUL: {
        /* a [.., m, k] x b [.., k, n]; leading dims are the batch */
        const struct maya_tensor *a = &r->t[0], *b = &r->t[1];
        if (a->ndims >= 2 && b->ndims >= 2) {
            double batch = 1;
            for (int i = 0; i < a->ndims - 2; i++)
                batch *= (double)a->dims[i];
            est_desc_gemm(d, (double)a->dims[a->ndims - 2], (double)b->dims[b->ndims - 1],
                          (double)a->dims[a->ndims - 1], batch,
                          est_prec_from_cudnn(a->dtype, r->compute_type));
            d->family = batch > 1 ? EST_BATCHED_GEMM : EST_GEMM;
            return;
        }
        break;
    }
    default:
        break;
    }
    /* normalisation, softmax, pointwise, reduction: read inputs, write outputs */
    d->family = EST_KERNEL;
    switch (r->op) {
    case MAYA_DNN_BN_FWD_TRAIN: case MAYA_DNN_BN_FWD_INFER: case MAYA_DNN_BN_BWD: case MAYA_DNN_NORM:
        d->kclass = EST_KC_NORM;
        break;
    case MAYA_DNN_SOFTMAX_FWD: case MAYA_DNN_SOFTMAX_BWD: d->kclass = EST_KC_SOFTMAX; break;
    case MAYA_DNN_POINTWISE: d->kclass = EST_KC_ELEMENTWISE; break;
    case MAYA_DNN_REDUCTION: d->kclass = EST_KC_REDUCE; break;
    default: d->kclass = EST_KC_UNKNOWN; break;
    }
    enum est_prec p = est_prec_from_cudnn(r->t[0].dtype, r->compute_type);
    d->elem_bytes = est_prec_bytes(p == EST_P_TF32 ? EST_P_FP32 : p);
    double elems = 0;
    for (uint32_t i = 0; i < r->ntensors && i < 4; i++)
        elems += tensor_elems(&r->t[i]);
    d->bytes = elems * d->elem_bytes;
    d->bytes_known = elems > 0;
}

/* A kernel's class from words in its (demangled) name: PyTorch, vLLM,
 * Apex and Triton name their kernels after what they do. Order matters:
 * PyTorch's activations are vectorized_elementwise_kernel<..silu..>. */
enum est_kclass est_kclass_of_name(const char *name)
{
    static const struct { const char *word; enum est_kclass c; } words[] = {
        { "rotary", EST_KC_ROTARY }, { "rope", EST_KC_ROTARY },
        { "softmax", EST_KC_SOFTMAX },
        { "norm", EST_KC_NORM },
        { "silu", EST_KC_ACT }, { "gelu", EST_KC_ACT }, { "relu", EST_KC_ACT }, { "swiglu", EST_KC_ACT },
        { "act_and_mul", EST_KC_ACT }, { "sigmoid", EST_KC_ACT }, { "tanh", EST_KC_ACT },
        { "reduce", EST_KC_REDUCE }, { "reduction", EST_KC_REDUCE },
        { "elementwise", EST_KC_ELEMENTWISE }, { "add", EST_KC_ELEMENTWISE }, { "mul", EST_KC_ELEMENTWISE },
        { "copy", EST_KC_ELEMENTWISE }, { "fill", EST_KC_ELEMENTWISE },
    };
    if (!name)
        return EST_KC_UNKNOWN;
    char low[256];
    size_t n = 0;
    for (; name[n] && n < sizeof low - 1; n++)
        low[n] = (char)((name[n] >= 'A' && name[n] <= 'Z') ? name[n] + 32 : name[n]);
    low[n] = '\0';
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(low, words[i].word))
            return words[i].c;
    return EST_KC_UNKNOWN;
}

/* The element size a kernel works on, guessed from its name: templates and
 * PyTorch kernel names spell the type. */
static int kernel_elem_bytes(const char *name)
{
    if (!name)
        return 4;
    if (strstr(name, "half") || strstr(name, "Half") || strstr(name, "bf16") ||
        strstr(name, "bfloat16") || strstr(name, "BFloat16") || strstr(name, "__nv_bfloat"))
        return 2;
    if (strstr(name, "double"))
        return 8;
    return 4;
}

static uint64_t read_uint(const unsigned char *p, unsigned bytes)
{
    uint64_t v = 0;
    memcpy(&v, p, bytes > 8 ? 8 : bytes); /* little-endian, as the trace is */
    return v;
}

/* A kernel whose code the trace summarises: its work for this launch. */
static int describe_from_code(const struct est_op *op, const struct maya_rec_launch *l, struct est_desc *d)
{
    const struct maya_kwork *w = op->kernel ? maya_kernel_work(op->kernel, NULL) : NULL;
    if (!w || l->h.bytes < sizeof *l + l->param_bytes)
        return 0;
    struct est_kwork_ctx ctx = { NULL, 0 };
    ctx.extents = maya_launch_extents(l, &ctx.nextents);
    if (est_kwork_eval(w, l, &ctx, &d->work) < 0)
        return 0;
    d->work.regs = w->regs;
    d->work.smem_bytes = (int)MAYA_MIN((uint64_t)w->static_smem + l->smem_bytes, INT32_MAX);
    d->code = 1;
    d->bytes = d->work.dram_bytes;
    d->bytes_known = 1;
    const double *a = d->work.amount;
    d->flops = a[MAYA_KW_FLOP_FP64] + a[MAYA_KW_FLOP_FP32] + a[MAYA_KW_FLOP_FP16] + a[MAYA_KW_MMA_FP64] +
               a[MAYA_KW_MMA_TF32] + a[MAYA_KW_MMA_FP16] + a[MAYA_KW_MMA_FP8] + a[MAYA_KW_MMA_INT8];
    return 1;
}

/* A kernel with no code to read (the fallback, counted in the report): a
 * kernel of unknown purpose is assumed to stream its data once. The element
 * count is the largest integer parameter (an `n`), else one element per
 * thread; every pointer parameter is an array of that many elements (at
 * least two: in and out, when pointers hide inside structs). */
static void describe_kernel(const struct est_op *op, struct est_desc *d)
{
    const struct maya_rec_launch *l = (const struct maya_rec_launch *)op->rec;
    d->family = EST_KERNEL;
    d->kclass = est_kclass_of_name(op->kernel_name);
    d->threads = (double)l->grid[0] * l->grid[1] * l->grid[2] *
                 (double)l->block[0] * l->block[1] * l->block[2];
    d->elem_bytes = kernel_elem_bytes(op->kernel_name);
    if (describe_from_code(op, l, d))
        return;
    d->fallback = 1;
    double n = 0;
    int nptr = 0;
    const struct maya_rec_kernel *k = op->kernel;
    if (k && l->h.bytes >= sizeof *l + l->param_bytes &&
        k->h.bytes >= sizeof *k + k->nparams * sizeof(struct maya_kparam)) {
        const struct maya_kparam *kp = (const struct maya_kparam *)(k + 1);
        const unsigned char *params = (const unsigned char *)(l + 1);
        for (uint32_t i = 0; i < k->nparams; i++) {
            if ((uint32_t)kp[i].offset + kp[i].bytes > l->param_bytes)
                continue;
            switch (kp[i].kind) {
            case MAYA_KP_PTR:
                nptr++;
                break;
            case MAYA_KP_I32: case MAYA_KP_I64: {
                int64_t v = kp[i].bytes == 4 ? (int32_t)read_uint(params + kp[i].offset, 4)
                                             : (int64_t)read_uint(params + kp[i].offset, 8);
                if (v > n)
                    n = (double)v;
                break;
            }
            case MAYA_KP_U32: case MAYA_KP_U64: {
                uint64_t v = read_uint(params + kp[i].offset, kp[i].bytes);
                if ((double)v > n)
                    n = (double)v;
                break;
            }
            default:
                break;
            }
        }
    }
    /* An integer far larger than the launch covers is not an element count
     * (a seed, a flag word): 1024 elements per thread is already generous. */
    if (n > d->threads * 1024)
        n = 0;
    d->bytes_known = n > 0;
    if (n <= 0)
        n = d->threads;
    d->bytes = n * d->elem_bytes * (nptr >= 2 ? nptr : 2);
}

static void describe_coll(const struct est_op *op, struct est_desc *d)
{
    const struct maya_rec_coll *c = (const struct maya_rec_coll *)op->rec;
    d->coll_op = (int)c->op;
    switch (c->op) {
    case MAYA_COLL_ALLREDUCE: d->family = EST_ALLREDUCE; break;
    case MAYA_COLL_ALLGATHER: case MAYA_COLL_GATHER: d->family = EST_ALLGATHER; break;
    case MAYA_COLL_REDUCESCATTER: case MAYA_COLL_SCATTER: d->family = EST_REDUCESCATTER; break;
    case MAYA_COLL_BROADCAST: case MAYA_COLL_REDUCE: d->family = EST_BROADCAST; break;
    case MAYA_COLL_ALLTOALL: d->family = EST_ALLTOALL; break;
    default: d->family = EST_SENDRECV; break;
    }
    d->bytes = (double)c->bytes;
    d->nranks = c->nranks > 0 ? c->nranks : 1;
    d->comm_ranks = d->nranks;
    if (d->family == EST_SENDRECV) {
        d->nranks = 2;
        d->both_ways = (c->flags & MAYA_COLL_BOTH_WAYS) != 0;
    }
    d->nodes = op->coll_nodes > 0 ? op->coll_nodes : 1;
    d->ranks_per_node = op->coll_ranks_per_node > 0 ? op->coll_ranks_per_node
                                                    : (d->nranks + d->nodes - 1) / d->nodes;
}

int est_describe(const struct est_op *op, struct est_desc *d)
{
    memset(d, 0, sizeof *d);
    d->family = EST_HOST;
    d->batch = 1;
    d->nranks = d->nodes = d->ranks_per_node = 1;
    const struct maya_rec_hdr *h = op->rec;
    if (!h)
        return 0;
    switch (h->type) {
    case MAYA_REC_GEMM:
        if (h->bytes >= sizeof(struct maya_rec_gemm))
            describe_gemm((const struct maya_rec_gemm *)h, d);
        break;
    case MAYA_REC_DNN:
        if (h->bytes >= sizeof(struct maya_rec_dnn))
            describe_dnn((const struct maya_rec_dnn *)h, d);
        break;
    case MAYA_REC_LAUNCH:
        if (h->bytes >= sizeof(struct maya_rec_launch))
            describe_kernel(op, d);
        break;
    case MAYA_REC_MEMCPY:
        if (h->bytes >= sizeof(struct maya_rec_memcpy)) {
            const struct maya_rec_memcpy *m = (const struct maya_rec_memcpy *)h;
            d->family = EST_COPY;
            d->bytes = (double)m->bytes;
            d->copy_kind = (int)m->kind;
            d->pinned = (m->flags & MAYA_COPY_PINNED) != 0;
        }
        break;
    case MAYA_REC_MEMSET:
        if (h->bytes >= sizeof(struct maya_rec_memset)) {
            d->family = EST_MEMSET;
            d->bytes = (double)((const struct maya_rec_memset *)h)->bytes;
        }
        break;
    case MAYA_REC_COLL:
        if (h->bytes >= sizeof(struct maya_rec_coll))
            describe_coll(op, d);
        break;
    default:
        break;
    }
    if (!isfinite(d->flops) || d->flops < 0)
        d->flops = 0;
    if (!isfinite(d->bytes) || d->bytes < 0)
        d->bytes = 0;
    return 0;
}

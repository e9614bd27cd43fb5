/* maya estimate OP key=value...: the predicted duration of one op.
 *
 * The op is built as the trace record the emulator would write and goes
 * through est_estimate like any traced op, so what this prints is what the
 * simulator would use.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commands.h"
#include "maya/common.h"
#include "maya/estimator.h"
#include "maya/hwspec.h"

static void usage(FILE *fp)
{
    fprintf(fp,
        "usage: maya estimate OP [KEY=VALUE...]\n"
        "\n"
        "Print the predicted duration of one operation on a GPU, and which model\n"
        "answered. Sizes take K/M/G/T suffixes (powers of 1024): bytes=256M.\n"
        "\n"
        "ops and their keys (* = required):\n"
        "  gemm           m* n* k* dtype        (dtype: fp32 tf32 fp16 bf16 fp8 fp64 int8; default bf16)\n"
        "  batched_gemm   m* n* k* batch* dtype\n"
        "  conv           n* c* h* w* k* r* s* stride pad dtype pass   (pass: fwd bwd_data bwd_filter)\n"
        "  attention      batch* heads* seq* head_dim* kv_seq dtype causal pass  (pass: fwd bwd)\n"
        "  kernel         bytes* dtype class    (a memory-bound kernel moving that many bytes;\n"
        "                 class: elementwise (default), norm, act, rotary, softmax, reduce)\n"
        "  copy           bytes* kind pinned    (kind: h2d d2h d2d peer h2h; pinned: 1 or 0)\n"
        "  memset         bytes*\n"
        "  allreduce, allgather, reducescatter, broadcast, alltoall, sendrecv\n"
        "                 bytes* ranks nodes ranks_per_node   (bytes as NCCL's count gives them:\n"
        "                 allreduce, broadcast: the buffer; allgather: what each rank sends;\n"
        "                 reducescatter: what each rank receives; alltoall: what each rank\n"
        "                 sends to each peer; sendrecv: the message, ranks=2)\n"
        "                 sendrecv also both_ways=1: its rank receives in the same group too\n"
        "                 (a ring shift), so that each channel's warps are split; 0 (default): one way\n"
        "  launch TRACE KERNEL [nth=N]   one kernel launch of a trace: the work read from\n"
        "                 its code and the time of each GPU unit (maya estimate launch --help)\n"
        "\n"
        "keys every op takes:\n"
        "  gpu=NAME        GPU key or alias (maya hwspecs list); default h100\n"
        "  cluster=NAME    node description; default the GPU's own node\n"
        "  model=MODEL     analytical, learned (default) or oracle\n"
        "  oracle=FILE     durations file for model=oracle (docs/oracle-format.md)\n"
        "  models=DIR      trained models; default the installed ones\n"
        "  name=API        the API name oracle rules match (default: a typical one)\n"
        "\n"
        "Output: family=F gpu=G model=M device_us=T host_us=H extrapolated=0|1, then\n"
        "for compute ops the FLOPs and the throughput that implies (GEMMs and convolutions\n"
        "also units=tensor_cores|cuda_cores, and algo=winograd_f2x3 for a 3x3 stride-1\n"
        "convolution on CUDA cores), for collectives the\n"
        "algorithm and protocol NCCL would choose, the size nccl-tests reports for the op,\n"
        "its algbw and busbw (GB/s) at device_us and, for collectives that run NCCL's own\n"
        "kernel, ctas=N: the SMs it holds while it runs (kernels beside it get the rest).\n");
}

/* key=value arguments, each used at most once and all checked. */
struct kv {
    const char *key, *val;
    int used;
};

struct args {
    struct kv kv[32];
    int n;
    const char *op;
};

static const char *get(struct args *a, const char *key)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->kv[i].key, key)) {
            a->kv[i].used = 1;
            return a->kv[i].val;
        }
    return NULL;
}

static int get_int(struct args *a, const char *key, int required, int64_t min, int64_t dflt, int64_t *out)
{
    const char *v = get(a, key);
    *out = dflt;
    if (!v) {
        if (required)
            return maya_error("estimate %s: %s=... is required", a->op, key);
        return 0;
    }
    uint64_t u;
    if (maya_parse_size(v, &u) < 0 || u > (uint64_t)INT64_MAX || (int64_t)u < min)
        return maya_error("estimate %s: %s is \"%s\"; expected an integer >= %lld (K/M/G suffixes allowed)",
                          a->op, key, v, (long long)min);
    *out = (int64_t)u;
    return 0;
}

static const char *const common_keys[] = { "gpu", "cluster", "model", "oracle", "models", "name" };

struct opdef {
    const char *name;
    const char *keys;   /* space-separated op keys */
};

static const struct opdef ops[] = {
    { "gemm", "m n k dtype" },
    { "batched_gemm", "m n k batch dtype" },
    { "conv", "n c h w k r s stride pad dtype pass" },
    { "attention", "batch heads seq head_dim kv_seq dtype causal pass" },
    { "kernel", "bytes dtype class" },
    { "copy", "bytes kind pinned" },
    { "memset", "bytes" },
    { "allreduce", "bytes ranks nodes ranks_per_node" },
    { "allgather", "bytes ranks nodes ranks_per_node" },
    { "reducescatter", "bytes ranks nodes ranks_per_node" },
    { "broadcast", "bytes ranks nodes ranks_per_node" },
    { "alltoall", "bytes ranks nodes ranks_per_node" },
    { "sendrecv", "bytes ranks nodes ranks_per_node both_ways" },
};

static int key_allowed(const struct opdef *od, const char *key)
{
    for (size_t i = 0; i < MAYA_ARRAY_LEN(common_keys); i++)
        if (!strcmp(key, common_keys[i]))
            return 1;
    size_t l = strlen(key);
    for (const char *p = od->keys; (p = strstr(p, key)); p += l)
        if ((p == od->keys || p[-1] == ' ') && (p[l] == ' ' || p[l] == '\0'))
            return 1;
    return 0;
}

/* dtype names to the library enums the emulator records */
struct dtype {
    const char *name;
    int cuda, compute, cudnn, nccl, bytes;
};
static const struct dtype dtypes[] = {
    /* name  cudaDataType  cublasComputeType  cudnnDataType  ncclDataType  bytes */
    { "fp32", 0, 68, 0, 7, 4 },
    { "tf32", 0, 77, 0, 7, 4 },
    { "fp16", 2, 68, 2, 6, 2 },
    { "bf16", 14, 68, 9, 9, 2 },
    { "fp8", 28, 68, 12, 10, 1 },
    { "fp64", 1, 70, 1, 8, 8 },
    { "int8", 3, 72, 3, 0, 1 },
};

static int get_dtype(struct args *a, const struct dtype **out)
{
    const char *v = get(a, "dtype");
    if (!v)
        v = "bf16";
    for (size_t i = 0; i < MAYA_ARRAY_LEN(dtypes); i++)
        if (!strcasecmp(v, dtypes[i].name)) {
            *out = &dtypes[i];
            return 0;
        }
    return maya_error("estimate %s: dtype is \"%s\"; expected fp32, tf32, fp16, bf16, fp8, fp64 or int8",
                      a->op, v);
}

static int get_choice(struct args *a, const char *key, const char *const *names, int n, int dflt, int *out)
{
    const char *v = get(a, key);
    *out = dflt;
    if (!v)
        return 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) {
            *out = i;
            return 0;
        }
    char allowed[256] = "";
    for (int i = 0; i < n; i++) {
        strcat(allowed, i ? (i == n - 1 ? " or " : ", ") : "");
        strcat(allowed, names[i]);
    }
    return maya_error("estimate %s: %s is \"%s\"; expected %s", a->op, key, v, allowed);
}

static void set_tensor(struct maya_tensor *t, int dtype, int nd, const int64_t *dims)
{
    t->dtype = dtype;
    t->ndims = nd;
    int64_t stride = 1;
    for (int i = nd - 1; i >= 0; i--) {
        t->dims[i] = dims[i];
        t->strides[i] = stride;
        stride *= dims[i];
    }
}

/* Storage for the records an op is built from. */
union oprec {
    struct maya_rec_hdr h;
    struct maya_rec_gemm gemm;
    struct maya_rec_dnn dnn;
    struct maya_rec_memcpy copy;
    struct maya_rec_memset memset;
    struct maya_rec_coll coll;
    struct {
        struct maya_rec_launch l;
        uint64_t params[4];
    } launch;
};
struct kernel_def {
    struct maya_rec_kernel k;
    struct maya_kparam p[4];
};

static int build_compute(struct args *a, union oprec *r, struct est_op *op, double *flops)
{
    const struct dtype *dt;
    if (get_dtype(a, &dt) < 0)
        return -1;
    if (!strcmp(a->op, "gemm") || !strcmp(a->op, "batched_gemm")) {
        int64_t m, n, k, batch = 1;
        if (get_int(a, "m", 1, 1, 0, &m) < 0 || get_int(a, "n", 1, 1, 0, &n) < 0 ||
            get_int(a, "k", 1, 1, 0, &k) < 0)
            return -1;
        if (!strcmp(a->op, "batched_gemm") && get_int(a, "batch", 1, 1, 1, &batch) < 0)
            return -1;
        r->gemm.h = (struct maya_rec_hdr){ MAYA_REC_GEMM, 0, sizeof r->gemm };
        r->gemm.lib = MAYA_GEMM_CUBLAS;
        r->gemm.m = m, r->gemm.n = n, r->gemm.k = k, r->gemm.batch = batch;
        r->gemm.lda = m, r->gemm.ldb = k, r->gemm.ldc = r->gemm.ldd = m;
        r->gemm.atype = r->gemm.btype = dt->cuda;
        r->gemm.ctype = r->gemm.dtype = dt->bytes == 1 ? 14 : dt->cuda;
        r->gemm.compute_type = dt->compute;
        r->gemm.algo = -1;
        op->api = batch > 1 ? "cublasGemmStridedBatchedEx" : "cublasGemmEx";
        *flops = 2.0 * m * n * k * batch;
        return 0;
    }
    r->dnn.h = (struct maya_rec_hdr){ MAYA_REC_DNN, 0, sizeof r->dnn };
    r->dnn.compute_type = dt->cudnn == 2 || dt->cudnn == 9 ? 0 : dt->cudnn;
    r->dnn.algo = -1;
    op->api = "cudnnBackendExecute";
    if (!strcmp(a->op, "conv")) {
        int64_t n, c, h, w, k, rr, s, stride, pad;
        int pass;
        static const char *const passes[] = { "fwd", "bwd_data", "bwd_filter" };
        if (get_int(a, "n", 1, 1, 0, &n) < 0 || get_int(a, "c", 1, 1, 0, &c) < 0 ||
            get_int(a, "h", 1, 1, 0, &h) < 0 || get_int(a, "w", 1, 1, 0, &w) < 0 ||
            get_int(a, "k", 1, 1, 0, &k) < 0 || get_int(a, "r", 1, 1, 0, &rr) < 0 ||
            get_int(a, "s", 1, 1, 0, &s) < 0 || get_int(a, "stride", 0, 1, 1, &stride) < 0 ||
            get_int(a, "pad", 0, 0, 0, &pad) < 0 || get_choice(a, "pass", passes, 3, 0, &pass) < 0)
            return -1;
        int64_t p = (h + 2 * pad - rr) / stride + 1, q = (w + 2 * pad - s) / stride + 1;
        if (p < 1 || q < 1)
            return maya_error("estimate conv: the filter (%lldx%lld) is larger than the padded "
                              "input (%lldx%lld)", (long long)rr, (long long)s,
                              (long long)(h + 2 * pad), (long long)(w + 2 * pad));
        r->dnn.op = MAYA_DNN_CONV_FWD + pass;
        r->dnn.ntensors = 3;
        r->dnn.conv_nspatial = 2;
        r->dnn.groups = 1;
        for (int i = 0; i < 2; i++) {
            r->dnn.pad_pre[i] = r->dnn.pad_post[i] = pad;
            r->dnn.stride[i] = stride;
            r->dnn.dilation[i] = 1;
        }
        set_tensor(&r->dnn.t[0], dt->cudnn, 4, (int64_t[]){ n, c, h, w });
        set_tensor(&r->dnn.t[1], dt->cudnn, 4, (int64_t[]){ k, c, rr, s });
        set_tensor(&r->dnn.t[2], dt->cudnn, 4, (int64_t[]){ n, k, p, q });
        *flops = 2.0 * n * k * p * q * c * rr * s;
        return 0;
    }
    /* attention */
    int64_t b, heads, seq, hd, kv_seq;
    int causal, pass;
    static const char *const passes[] = { "fwd", "bwd" }, *const bools[] = { "0", "1" };
    if (get_int(a, "batch", 1, 1, 0, &b) < 0 || get_int(a, "heads", 1, 1, 0, &heads) < 0 ||
        get_int(a, "seq", 1, 1, 0, &seq) < 0 || get_int(a, "head_dim", 1, 1, 0, &hd) < 0 ||
        get_int(a, "kv_seq", 0, 1, seq, &kv_seq) < 0 ||
        get_choice(a, "causal", bools, 2, 0, &causal) < 0 || get_choice(a, "pass", passes, 2, 0, &pass) < 0)
        return -1;
    r->dnn.op = pass ? MAYA_DNN_SDPA_BWD : MAYA_DNN_SDPA_FWD;
    r->dnn.ntensors = 4;
    r->dnn.causal = causal;
    r->dnn.attn_scale = (float)(1.0 / sqrt((double)hd));
    set_tensor(&r->dnn.t[0], dt->cudnn, 4, (int64_t[]){ b, heads, seq, hd });
    set_tensor(&r->dnn.t[1], dt->cudnn, 4, (int64_t[]){ b, heads, kv_seq, hd });
    set_tensor(&r->dnn.t[2], dt->cudnn, 4, (int64_t[]){ b, heads, kv_seq, hd });
    set_tensor(&r->dnn.t[3], dt->cudnn, 4, (int64_t[]){ b, heads, seq, hd });
    *flops = 4.0 * b * heads * seq * kv_seq * hd * (causal ? 0.5 : 1) * (pass ? 2.5 : 1);
    return 0;
}

/* A memory-bound kernel: kernel(const T *in, T *out, long n), as many
 * threads as elements. */
static int build_kernel(struct args *a, union oprec *r, struct kernel_def *kd, struct est_op *op,
                        char *name, size_t name_size)
{
    static const char *const classes[] = { "elementwise", "norm", "act", "rotary", "softmax", "reduce" };
    /* kernel names the estimator's classifier reads as each class */
    static const char *const words[] = { "elementwise", "rms_norm", "silu_and_mul", "rotary_embedding",
                                         "softmax", "reduce" };
    const struct dtype *dt;
    int64_t bytes;
    int cls;
    if (get_int(a, "bytes", 1, 1, 0, &bytes) < 0 || get_dtype(a, &dt) < 0 ||
        get_choice(a, "class", classes, 6, 0, &cls) < 0)
        return -1;
    int64_t n = bytes / (2 * dt->bytes);
    if (n < 1)
        n = 1;
    kd->k.h = (struct maya_rec_hdr){ MAYA_REC_KERNEL, 0, sizeof *kd };
    kd->k.id = 1;
    kd->k.nparams = 3;
    kd->k.param_bytes = 24;
    kd->p[0] = (struct maya_kparam){ 0, 8, MAYA_KP_PTR, { 0 } };
    kd->p[1] = (struct maya_kparam){ 8, 8, MAYA_KP_PTR, { 0 } };
    kd->p[2] = (struct maya_kparam){ 16, 8, MAYA_KP_I64, { 0 } };
    struct maya_rec_launch *l = &r->launch.l;
    l->h = (struct maya_rec_hdr){ MAYA_REC_LAUNCH, 0, sizeof r->launch };
    l->kernel = 1;
    uint64_t blocks = ((uint64_t)n + 255) / 256;
    l->grid[0] = blocks > 0x7fffffff ? 0x7fffffff : (uint32_t)blocks;
    l->grid[1] = l->grid[2] = 1;
    l->block[0] = 256, l->block[1] = l->block[2] = 1;
    l->param_bytes = 24;
    r->launch.params[0] = 0x7f0000000000ull;
    r->launch.params[1] = 0x7f0100000000ull;
    memcpy(&r->launch.params[2], &n, 8);
    op->kernel = &kd->k;
    snprintf(name, name_size, "void %s_kernel<%s>(const %s *, %s *, long)", words[cls],
             dt->bytes == 2 ? "half" : dt->bytes == 8 ? "double" : "float",
             dt->bytes == 2 ? "half" : dt->bytes == 8 ? "double" : "float",
             dt->bytes == 2 ? "half" : dt->bytes == 8 ? "double" : "float");
    op->kernel_name = name;
    op->api = "cudaLaunchKernel";
    return 0;
}

static int build_transfer(struct args *a, union oprec *r, struct est_op *op)
{
    int64_t bytes;
    if (get_int(a, "bytes", 1, 0, 0, &bytes) < 0)
        return -1;
    if (!strcmp(a->op, "memset")) {
        r->memset.h = (struct maya_rec_hdr){ MAYA_REC_MEMSET, 0, sizeof r->memset };
        r->memset.bytes = (uint64_t)bytes;
        r->memset.elem_bytes = 1;
        op->api = "cudaMemsetAsync";
        return 0;
    }
    static const char *const kinds[] = { "h2d", "d2h", "d2d", "h2h", "peer" }, *const bools[] = { "0", "1" };
    int kind, pinned;
    if (get_choice(a, "kind", kinds, 5, 0, &kind) < 0 || get_choice(a, "pinned", bools, 2, 1, &pinned) < 0)
        return -1;
    r->copy.h = (struct maya_rec_hdr){ MAYA_REC_MEMCPY, 0, sizeof r->copy };
    r->copy.bytes = (uint64_t)bytes;
    r->copy.kind = (uint32_t)kind + 1; /* enum maya_copy_kind order */
    r->copy.flags = MAYA_COPY_ASYNC | (pinned ? MAYA_COPY_PINNED : 0);
    r->copy.src_device = kind == 0 || kind == 3 ? -1 : 0;
    r->copy.dst_device = kind == 1 || kind == 3 ? -1 : kind == 4 ? 1 : 0;
    r->copy.width = (uint64_t)bytes, r->copy.height = r->copy.depth = 1;
    op->api = "cudaMemcpyAsync";
    return 0;
}

static int build_coll(struct args *a, const struct maya_cluster_spec *cl, union oprec *r, struct est_op *op)
{
    static const struct { const char *name, *api; int op; } colls[] = {
        { "allreduce", "ncclAllReduce", MAYA_COLL_ALLREDUCE },
        { "allgather", "ncclAllGather", MAYA_COLL_ALLGATHER },
        { "reducescatter", "ncclReduceScatter", MAYA_COLL_REDUCESCATTER },
        { "broadcast", "ncclBroadcast", MAYA_COLL_BROADCAST },
        { "alltoall", "ncclAlltoAll", MAYA_COLL_ALLTOALL },
        { "sendrecv", "ncclSend", MAYA_COLL_SEND },
    };
    int64_t bytes, ranks, nodes, rpn;
    int sendrecv = !strcmp(a->op, "sendrecv");
    int gpn = cl->gpus_per_node > 0 ? cl->gpus_per_node : 8;
    if (get_int(a, "bytes", 1, 0, 0, &bytes) < 0 || get_int(a, "ranks", 0, 1, sendrecv ? 2 : gpn, &ranks) < 0)
        return -1;
    if (sendrecv && ranks != 2)
        return maya_error("estimate sendrecv: ranks is %lld; a send/recv pair has 2", (long long)ranks);
    if (get_int(a, "nodes", 0, 1, (ranks + gpn - 1) / gpn, &nodes) < 0)
        return -1;
    if (nodes > ranks)
        return maya_error("estimate %s: %lld nodes for %lld ranks; every node needs a rank",
                          a->op, (long long)nodes, (long long)ranks);
    if (get_int(a, "ranks_per_node", 0, 1, (ranks + nodes - 1) / nodes, &rpn) < 0)
        return -1;
    if (rpn * nodes < ranks || rpn > ranks)
        return maya_error("estimate %s: ranks_per_node=%lld on %lld nodes cannot hold %lld ranks",
                          a->op, (long long)rpn, (long long)nodes, (long long)ranks);
    if (rpn > gpn)
        return maya_error("estimate %s: %lld ranks per node, but a %s node has %d GPUs (give nodes=)",
                          a->op, (long long)rpn, cl->key, gpn);
    r->coll.h = (struct maya_rec_hdr){ MAYA_REC_COLL, 0, sizeof r->coll };
    for (size_t i = 0; i < MAYA_ARRAY_LEN(colls); i++)
        if (!strcmp(a->op, colls[i].name)) {
            r->coll.op = (uint32_t)colls[i].op;
            op->api = colls[i].api;
        }
    r->coll.bytes = (uint64_t)bytes;
    r->coll.count = (uint64_t)bytes / 2;
    r->coll.dtype = 9; /* ncclBfloat16 */
    r->coll.nranks = (int32_t)ranks;
    r->coll.peer = sendrecv ? 1 : -1;
    if (sendrecv) {
        static const char *const bools[] = { "0", "1" };
        int both;
        if (get_choice(a, "both_ways", bools, 2, 0, &both) < 0)
            return -1;
        r->coll.flags = both ? MAYA_COLL_BOTH_WAYS : 0;
    }
    r->coll.comm = 1;
    op->coll_nodes = (int)nodes;
    op->coll_ranks_per_node = (int)rpn;
    return 0;
}

int cmd_estimate(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "launch"))
        return cmd_estimate_launch(argc - 1, argv + 1);
    struct args a = { .op = argv[1] };
    const struct opdef *od = NULL;
    for (size_t i = 0; i < MAYA_ARRAY_LEN(ops); i++)
        if (!strcmp(a.op, ops[i].name))
            od = &ops[i];
    if (!od) {
        maya_error("estimate: unknown op \"%s\"; expected gemm, batched_gemm, conv, attention, kernel, "
                   "copy, memset, allreduce, allgather, reducescatter, broadcast, alltoall, sendrecv or "
                   "(maya estimate --help)", a.op);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq || eq == argv[i] || !eq[1]) {
            maya_error("estimate %s: expected KEY=VALUE, found \"%s\"", a.op, argv[i]);
            return 2;
        }
        *eq = '\0';
        if (!key_allowed(od, argv[i])) {
            maya_error("estimate %s: unknown key \"%s\"; %s takes %s (and gpu, cluster, model, oracle, "
                       "models, name)", a.op, argv[i], a.op, od->keys);
            return 2;
        }
        for (int j = 0; j < a.n; j++)
            if (!strcmp(a.kv[j].key, argv[i])) {
                maya_error("estimate %s: %s is given twice", a.op, argv[i]);
                return 2;
            }
        if (a.n == (int)MAYA_ARRAY_LEN(a.kv)) {
            maya_error("estimate: too many arguments");
            return 2;
        }
        a.kv[a.n++] = (struct kv){ argv[i], eq + 1, 0 };
    }

    struct maya_hwspecs hw;
    if (cli_load_hwspecs(&hw) < 0)
        return 1;
    int rc = 1;
    struct estimator *e = NULL;
    const char *gname = get(&a, "gpu"), *cname = get(&a, "cluster");
    const struct maya_gpu_spec *gpu = maya_hwspecs_find_gpu(&hw, gname ? gname : "h100");
    struct maya_cluster_spec cl;
    if (!gpu) {
        char names[2048];
        maya_hwspecs_gpu_names(&hw, names, sizeof names);
        maya_error("estimate: unknown GPU \"%s\"; known: %s", gname, names);
        goto out;
    }
    if (cname) {
        const struct maya_cluster_spec *c = maya_hwspecs_find_cluster(&hw, cname);
        if (!c) {
            maya_error("estimate: unknown cluster \"%s\" (maya hwspecs list shows them)", cname);
            goto out;
        }
        cl = *c;
    } else {
        maya_default_cluster(&hw, gpu, 8, &cl);
    }
    struct est_config cfg = { .gpu = gpu, .cluster = &cl };
    const char *mname = get(&a, "model");
    int m = est_model_parse(mname ? mname : "learned");
    if (m < 0) {
        maya_error("estimate: model is \"%s\"; expected analytical, learned or oracle", mname);
        goto out;
    }
    for (int f = 0; f < EST_NFAMILIES; f++)
        cfg.model[f] = (enum est_model)m;
    cfg.oracle_path = get(&a, "oracle");
    cfg.models_dir = get(&a, "models");
    if (cfg.oracle_path && m != EST_ORACLE) {
        maya_error("estimate: oracle=FILE is used only with model=oracle");
        goto out;
    }

    union oprec rec;
    struct kernel_def kd;
    memset(&rec, 0, sizeof rec);
    memset(&kd, 0, sizeof kd);
    struct est_op op = { .rec = &rec.h, .coll_nodes = 1, .coll_ranks_per_node = 1 };
    double flops = 0;
    int built;
    char kname[128];
    if (!strcmp(a.op, "kernel"))
        built = build_kernel(&a, &rec, &kd, &op, kname, sizeof kname);
    else if (!strcmp(a.op, "copy") || !strcmp(a.op, "memset"))
        built = build_transfer(&a, &rec, &op);
    else if (strstr(od->keys, "ranks"))
        built = build_coll(&a, &cl, &rec, &op);
    else
        built = build_compute(&a, &rec, &op, &flops);
    if (built < 0)
        goto out;
    const char *name = get(&a, "name");
    if (name)
        op.api = name;
    for (int i = 0; i < a.n; i++)
        if (!a.kv[i].used) {
            maya_error("estimate %s: %s= does not apply here", a.op, a.kv[i].key);
            goto out;
        }

    struct est_result res;
    if (est_create(&cfg, &e) < 0 || est_estimate(e, &op, &res) < 0)
        goto out;
    printf("family=%s gpu=%s model=%s device_us=%.3f host_us=%.3f extrapolated=%d\n",
           est_family_name(res.family), gpu->key, est_model_name(res.model), res.device_ns / 1e3,
           res.host_ns / 1e3, res.extrapolated);
    if (flops > 0 && res.device_ns > 0)
        printf("flops=%.4g tflops=%.1f%s%s%s%s\n", flops, flops / (double)res.device_ns / 1e3,
               res.compute_units ? " units=" : "", res.compute_units ? res.compute_units : "",
               res.compute_algo ? " algo=" : "", res.compute_algo ? res.compute_algo : "");
    if (res.coll_algo && res.device_ns > 0) {
        /* nccl-tests' figures: algbw = size / time; busbw scales it by what
         * each rank's links carry (all-reduce 2(n-1)/n, gathers (n-1)/n) */
        const struct maya_rec_coll *k = &rec.coll;
        double n = k->nranks > 1 ? k->nranks : 1, algbw = res.coll_bytes / (double)res.device_ns;
        double f = k->op == MAYA_COLL_ALLREDUCE ? 2 * (n - 1) / n
                 : k->op == MAYA_COLL_ALLGATHER || k->op == MAYA_COLL_REDUCESCATTER || k->op == MAYA_COLL_ALLTOALL
                 ? (n - 1) / n : 1;
        printf("algo=%s proto=%s size_bytes=%.0f algbw_gbps=%.2f busbw_gbps=%.2f", res.coll_algo,
               res.coll_proto, res.coll_bytes, algbw, algbw * f);
        if (res.coll_ctas > 0)
            printf(" ctas=%d", res.coll_ctas);
        printf("\n");
    }
    if (res.extrapolated)
        printf("note: no learned model covers this op on %s; the analytical model answered\n", gpu->key);
    rc = 0;
out:
    est_destroy(e);
    maya_hwspecs_free(&hw);
    return rc;
}

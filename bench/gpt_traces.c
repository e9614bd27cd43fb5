/* Rank traces of a GPT-shaped job: see gpt_traces.h. One pass per rank, each
 * record built in place and handed to the trace writer. */
#define _GNU_SOURCE
#include "gpt_traces.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maya/collator.h"
#include "maya/common.h"
#include "maya/trace_format.h"
#include "trace_calls.h"

/* string ids: API names, then kernel names (kernel id = string id - K_FIRST + 1) */
enum {
    S_LAUNCH = 1, S_GEMM, S_ALLREDUCE, S_SEND, S_RECV, S_RECORD, S_WAIT, S_SYNC, S_INIT, S_MALLOC,
    S_HOST, S_CMD, S_MARK_API, S_STEP, S_UNIQUE_ID,
    K_FIRST,
    K_LN_FWD = K_FIRST, K_FLASH_FWD, K_BDA_FWD, K_GELU_FWD, K_LN_BWD, K_FLASH_BWD, K_BDA_BWD, K_GELU_BWD,
    K_EMBED_FWD, K_EMBED_BWD, K_XENT_FWD, K_XENT_BWD, K_ADAM,
    S_END
};
static const char *const strings[S_END] = {
    [S_LAUNCH] = "cudaLaunchKernel", [S_GEMM] = "cublasGemmEx", [S_ALLREDUCE] = "ncclAllReduce",
    [S_SEND] = "ncclSend", [S_RECV] = "ncclRecv", [S_RECORD] = "cudaEventRecord",
    [S_WAIT] = "cudaStreamWaitEvent", [S_SYNC] = "cudaDeviceSynchronize", [S_INIT] = "ncclCommInitRank",
    [S_MALLOC] = "cudaMalloc", [S_HOST] = "generated", [S_CMD] = "gpt_traces", [S_MARK_API] = "nvtxRangePushA",
    [S_STEP] = GPT_STEP_MARKER, [S_UNIQUE_ID] = "ncclGetUniqueId",
    [K_LN_FWD] = "layer_norm_fwd", [K_FLASH_FWD] = "flash_attn_fwd", [K_BDA_FWD] = "bias_dropout_add_fwd",
    [K_GELU_FWD] = "gelu_fwd", [K_LN_BWD] = "layer_norm_bwd", [K_FLASH_BWD] = "flash_attn_bwd",
    [K_BDA_BWD] = "bias_dropout_add_bwd", [K_GELU_BWD] = "gelu_bwd", [K_EMBED_FWD] = "embedding_fwd",
    [K_EMBED_BWD] = "embedding_bwd", [K_XENT_FWD] = "cross_entropy_fwd", [K_XENT_BWD] = "cross_entropy_bwd",
    [K_ADAM] = "multi_tensor_adam",
};

enum { ST_COMPUTE = 1, ST_DP = 2, ST_PP = 3 };           /* stream ids */
enum { EV_TO_PP = 1, EV_FROM_PP, EV_TO_DP, EV_FROM_DP, EV_N }; /* event ids */

struct gen {
    const struct gpt_shape *g;
    struct col_writer *w;
    int rank, t, d, p;
    uint64_t tp_comm, dp_comm, pp_comm;
    struct trace_clock clock;   /* call sequence, host clock */
    uint64_t gap;               /* host gap before each call */
    uint64_t tp_seq, dp_seq;    /* collectives issued per communicator */
    uint64_t fsend, frecv, bsend, brecv; /* send/recv counts per direction */
    uint64_t group;
    uint32_t version[EV_N];
    int64_t tokens;
    int rc;
};

static void emit(struct gen *G, const void *rec)
{
    if (G->rc == 0)
        G->rc = col_writer_emit(G->w, rec);
}

static void call(struct gen *G, struct maya_call *c, uint32_t api, uint64_t stream)
{
    uint64_t gap = G->gap;
    if (G->g->gap_jitter > 0) {
        uint64_t x = ((uint64_t)G->rank << 32 | G->clock.seq) * 0x9e3779b97f4a7c15ull;
        x ^= x >> 29;
        double u = (double)(x % 2001) / 1000.0 - 1.0; /* -1 .. 1 */
        gap = (uint64_t)((double)gap * (1.0 + G->g->gap_jitter * u));
    }
    trace_call(&G->clock, c, gap, api, stream);
}

static void launch(struct gen *G, uint32_t kernel, uint32_t blocks)
{
    struct maya_rec_launch l;
    memset(&l, 0, sizeof l);
    l.h = (struct maya_rec_hdr){ MAYA_REC_LAUNCH, 0, sizeof l };
    call(G, &l.call, S_LAUNCH, ST_COMPUTE);
    l.kernel = kernel - K_FIRST + 1;
    l.grid[0] = blocks ? blocks : 1;
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = 256;
    l.block[1] = l.block[2] = 1;
    emit(G, &l);
}

/* C (m x n) = op(A) op(B) in bf16 with fp32 accumulation, as cuBLAS sees
 * Megatron's linear layers (column-major: m = output features). */
static void gemm(struct gen *G, int64_t m, int64_t n, int64_t k, int transa)
{
    struct maya_rec_gemm r;
    memset(&r, 0, sizeof r);
    r.h = (struct maya_rec_hdr){ MAYA_REC_GEMM, 0, sizeof r };
    call(G, &r.call, S_GEMM, ST_COMPUTE);
    r.lib = MAYA_GEMM_CUBLAS;
    r.transa = transa;
    r.m = m;
    r.n = n;
    r.k = k;
    r.batch = 1;
    r.lda = transa ? k : m;
    r.ldb = k;
    r.ldc = r.ldd = m;
    r.atype = r.btype = r.ctype = r.dtype = 14; /* CUDA_R_16BF */
    r.compute_type = 68;                          /* CUBLAS_COMPUTE_32F */
    r.scale_type = 0;
    r.epilogue = 1;
    r.algo = -1;
    emit(G, &r);
}

static void coll(struct gen *G, uint32_t op, uint64_t comm, uint64_t seq, int rank, int nranks, int peer,
                 uint64_t stream, uint64_t count, uint64_t group)
{
    struct maya_rec_coll c;
    trace_coll(&c, op, comm, seq, rank, nranks, peer, count);
    uint32_t api = op == MAYA_COLL_SEND ? S_SEND : op == MAYA_COLL_RECV ? S_RECV : S_ALLREDUCE;
    call(G, &c.call, api, stream);
    c.group = group;
    emit(G, &c);
}

static void event(struct gen *G, uint16_t type, uint32_t ev, uint64_t stream)
{
    struct maya_rec_event e;
    memset(&e, 0, sizeof e);
    e.h = (struct maya_rec_hdr){ type, 0, sizeof e };
    call(G, &e.call, type == MAYA_REC_EVENT_RECORD ? S_RECORD : S_WAIT, stream);
    e.event = ev;
    e.version = type == MAYA_REC_EVENT_RECORD ? ++G->version[ev] : G->version[ev];
    emit(G, &e);
}

/* Stream `to` waits for what `from` has issued so far. */
static void join(struct gen *G, uint32_t ev, uint64_t from, uint64_t to)
{
    event(G, MAYA_REC_EVENT_RECORD, ev, from);
    event(G, MAYA_REC_STREAM_WAIT, ev, to);
}

static void tp_allreduce(struct gen *G, uint64_t count)
{
    if (G->g->tp > 1)
        coll(G, MAYA_COLL_ALLREDUCE, G->tp_comm, G->tp_seq++, G->t, G->g->tp, -1, ST_COMPUTE, count, 0);
}

/* ---- one micro-batch through this stage's layers ---- */

static void forward(struct gen *G)
{
    const struct gpt_shape *g = G->g;
    int64_t h = g->hidden, n = G->tokens, t = g->tp;
    uint32_t rows = (uint32_t)(n > 0 ? n : 1);
    if (G->p == 0)
        launch(G, K_EMBED_FWD, rows);
    for (int l = 0; l < g->layers / g->pp; l++) {
        launch(G, K_LN_FWD, rows);
        gemm(G, 3 * h / t, n, h, 1);
        launch(G, K_FLASH_FWD, (uint32_t)(g->seq / 128 * g->micro_batch * 96 / t));
        gemm(G, h, n, h / t, 1);
        tp_allreduce(G, (uint64_t)(n * h));
        launch(G, K_BDA_FWD, rows);
        launch(G, K_LN_FWD, rows);
        gemm(G, 4 * h / t, n, h, 1);
        launch(G, K_GELU_FWD, rows * 4 / (uint32_t)t + 1);
        gemm(G, h, n, 4 * h / t, 1);
        tp_allreduce(G, (uint64_t)(n * h));
        launch(G, K_BDA_FWD, rows);
    }
    if (G->p == g->pp - 1) {
        launch(G, K_LN_FWD, rows);
        gemm(G, g->vocab / t, n, h, 1);
        launch(G, K_XENT_FWD, rows);
        tp_allreduce(G, (uint64_t)n);
    }
}

/* last: the iteration's last backward here, whose gradients are reduced
 * over the data-parallel group, bucket by bucket, as layers finish. */
static void backward(struct gen *G, int last)
{
    const struct gpt_shape *g = G->g;
    int64_t h = g->hidden, n = G->tokens, t = g->tp;
    uint32_t rows = (uint32_t)(n > 0 ? n : 1);
    if (G->p == g->pp - 1) {
        launch(G, K_XENT_BWD, rows);
        gemm(G, h, n, g->vocab / t, 0);
        gemm(G, h, g->vocab / t, n, 0);
        launch(G, K_LN_BWD, rows);
    }
    int per_stage = g->layers / g->pp;
    uint64_t layer_params = (uint64_t)(12 * h * h / t + 13 * h);
    for (int l = 0; l < per_stage; l++) {
        launch(G, K_BDA_BWD, rows);
        gemm(G, 4 * h / t, n, h, 0);
        gemm(G, 4 * h / t, h, n, 0);
        launch(G, K_GELU_BWD, rows * 4 / (uint32_t)t + 1);
        gemm(G, h, n, 4 * h / t, 0);
        gemm(G, h, 4 * h / t, n, 0);
        tp_allreduce(G, (uint64_t)(n * h));
        launch(G, K_LN_BWD, rows);
        launch(G, K_BDA_BWD, rows);
        gemm(G, h / t, n, h, 0);
        gemm(G, h / t, h, n, 0);
        launch(G, K_FLASH_BWD, (uint32_t)(g->seq / 128 * g->micro_batch * 96 / t));
        gemm(G, h, n, 3 * h / t, 0);
        gemm(G, h, 3 * h / t, n, 0);
        tp_allreduce(G, (uint64_t)(n * h));
        launch(G, K_LN_BWD, rows);
        if (last && g->dp > 1) {
            join(G, EV_TO_DP, ST_COMPUTE, ST_DP);
            for (int b = 0; b < g->buckets_per_layer; b++)
                coll(G, MAYA_COLL_ALLREDUCE, G->dp_comm, G->dp_seq++, G->d, g->dp, -1, ST_DP,
                     layer_params / (uint64_t)g->buckets_per_layer, 0);
        }
    }
    if (G->p == 0)
        launch(G, K_EMBED_BWD, rows);
}

/* ---- pipeline transfers (Megatron's p2p_communication, 1F1B) ---- */

/* Send and/or receive with the neighbouring stages, as one NCCL group on the
 * pipeline stream, fenced by events from and to the compute stream. */
static void p2p(struct gen *G, int send_fwd, int recv_bwd, int send_bwd, int recv_fwd)
{
    const struct gpt_shape *g = G->g;
    int n = send_fwd + recv_bwd + send_bwd + recv_fwd;
    if (!n)
        return;
    uint64_t count = (uint64_t)(G->tokens * g->hidden);
    uint64_t group = n > 1 ? ++G->group : 0;
    join(G, EV_TO_PP, ST_COMPUTE, ST_PP);
    if (send_fwd)
        coll(G, MAYA_COLL_SEND, G->pp_comm, G->fsend++, G->p, g->pp, G->p + 1, ST_PP, count, group);
    if (recv_bwd)
        coll(G, MAYA_COLL_RECV, G->pp_comm, G->brecv++, G->p, g->pp, G->p + 1, ST_PP, count, group);
    if (send_bwd)
        coll(G, MAYA_COLL_SEND, G->pp_comm, G->bsend++, G->p, g->pp, G->p - 1, ST_PP, count, group);
    if (recv_fwd)
        coll(G, MAYA_COLL_RECV, G->pp_comm, G->frecv++, G->p, g->pp, G->p - 1, ST_PP, count, group);
    join(G, EV_FROM_PP, ST_PP, ST_COMPUTE);
}

static void iteration(struct gen *G)
{
    const struct gpt_shape *g = G->g;
    int first = G->p == 0, lastst = G->p == g->pp - 1, M = g->microbatches;
    int warmup = MAYA_MIN(g->pp - G->p - 1, M), remaining = M - warmup;
    struct maya_rec_marker mk;
    memset(&mk, 0, sizeof mk);
    mk.h = (struct maya_rec_hdr){ MAYA_REC_MARKER, 0, sizeof mk };
    call(G, &mk.call, S_MARK_API, 0);
    mk.name = S_STEP;
    mk.kind = MAYA_MARK_POINT;
    emit(G, &mk);
    for (int i = 0; i < warmup; i++) {
        p2p(G, 0, 0, 0, !first);
        forward(G);
        p2p(G, !lastst, 0, 0, 0);
    }
    if (remaining > 0)
        p2p(G, 0, 0, 0, !first);
    for (int i = 0; i < remaining; i++) {
        forward(G);
        p2p(G, !lastst, !lastst, 0, 0);
        backward(G, warmup == 0 && i == remaining - 1);
        if (i == remaining - 1)
            p2p(G, 0, 0, !first, 0);
        else
            p2p(G, 0, 0, !first, !first);
    }
    for (int i = 0; i < warmup; i++) {
        p2p(G, 0, !lastst, 0, 0);
        backward(G, i == warmup - 1);
        p2p(G, 0, 0, !first, 0);
    }
    if (g->dp > 1)
        join(G, EV_FROM_DP, ST_DP, ST_COMPUTE);
    for (int k = 0; k < 4; k++)
        launch(G, K_ADAM, 1024);
    struct maya_rec_sync s;
    memset(&s, 0, sizeof s);
    s.h = (struct maya_rec_hdr){ MAYA_REC_SYNC, 0, sizeof s };
    call(G, &s.call, S_SYNC, 0);
    s.kind = MAYA_SYNC_DEVICE;
    emit(G, &s);
}

/* ---- set-up ---- */

static void define(struct gen *G)
{
    unsigned char buf[256];
    for (uint32_t id = 1; id < S_END; id++) {
        size_t len = strlen(strings[id]);
        struct maya_rec_string r = { .h = { MAYA_REC_STRING, 0, MAYA_REC_ALIGN((uint32_t)(sizeof r + len)) },
                                     .id = id, .len = (uint32_t)len };
        memset(buf, 0, sizeof buf);
        memcpy(buf, &r, sizeof r);
        memcpy(buf + sizeof r, strings[id], len);
        emit(G, buf);
    }
    struct maya_rec_process pr = { .h = { MAYA_REC_PROCESS, 0, sizeof pr }, .hostname = S_HOST, .cmdline = S_CMD,
                                   .mode = 1 };
    emit(G, &pr);
    for (uint32_t k = K_FIRST; k < S_END; k++) {
        struct maya_rec_kernel r = { .h = { MAYA_REC_KERNEL, 0, sizeof r }, .id = k - K_FIRST + 1, .mangled = k,
                                     .name = k, .source = MAYA_KSRC_FATBIN };
        emit(G, &r);
    }
    for (uint64_t s = ST_COMPUTE; s <= ST_PP; s++) {
        struct maya_rec_stream st = { .h = { MAYA_REC_STREAM, 0, sizeof st }, .stream = s, .device = 0,
                                      .flags = s == ST_COMPUTE ? 0 : MAYA_STREAM_NON_BLOCKING };
        emit(G, &st);
    }
}

static void join_comm(struct gen *G, uint64_t comm, int rank, int nranks)
{
    if (G->g->unique_ids && rank == 0) { /* the id it hands to the others */
        struct maya_rec_call u;
        memset(&u, 0, sizeof u);
        u.h = (struct maya_rec_hdr){ MAYA_REC_CALL, 0, sizeof u };
        call(G, &u.call, S_UNIQUE_ID, 0);
        emit(G, &u);
    }
    struct maya_rec_comm c = { .h = { MAYA_REC_COMM, 0, sizeof c }, .comm = comm, .rank = rank, .nranks = nranks,
                               .global_gpu = G->rank, .color = -1, .key = -1 };
    emit(G, &c);
    struct maya_rec_call r;
    memset(&r, 0, sizeof r);
    r.h = (struct maya_rec_hdr){ MAYA_REC_CALL, 0, sizeof r };
    call(G, &r.call, S_INIT, 0);
    emit(G, &r);
}

void gpt_shape_gpt3(struct gpt_shape *g, int tp, int pp, int dp)
{
    memset(g, 0, sizeof *g);
    g->tp = tp;
    g->pp = pp;
    g->dp = dp;
    g->gpus_per_node = 8;
    g->layers = 96;
    g->microbatches = 8;
    g->iterations = 1;
    g->hidden = 12288;
    g->seq = 2048;
    g->micro_batch = 1;
    g->vocab = 51200;
    g->buckets_per_layer = 6; /* Megatron's 40M-element buckets: 1.8B parameters per layer over 8 */
    g->gap_ns = 4000;
    g->slow_rank = -1;
    g->slow_factor = 1;
    snprintf(g->gpu, sizeof g->gpu, "H100-SXM");
}

static int check_shape(const struct gpt_shape *g)
{
    if (g->tp < 1 || g->pp < 1 || g->dp < 1 || g->gpus_per_node < 1 || g->layers < g->pp || g->layers % g->pp ||
        g->microbatches < 1 || g->iterations < 1 || g->hidden < g->tp || g->buckets_per_layer < 1 ||
        (int64_t)g->tp * g->pp * g->dp > (1 << 24))
        return maya_error("gpt_traces: a job of tp %d, pp %d, dp %d, %d layers, %d micro-batches, %d iterations "
                          "cannot be built (expected positive degrees and layers a multiple of pp)",
                          g->tp, g->pp, g->dp, g->layers, g->microbatches, g->iterations);
    return 0;
}

int gpt_write_rank(const struct gpt_shape *g, int rank, const char *path)
{
    if (check_shape(g) < 0)
        return -1;
    int world = g->tp * g->pp * g->dp;
    if (rank < 0 || rank >= world)
        return maya_error("gpt_traces: rank %d of a job of %d", rank, world);
    struct gen G;
    memset(&G, 0, sizeof G);
    FILE *fp;
    if (trace_open_rank(path, rank, world, g->gpus_per_node, g->gpu, &fp, &G.w) < 0)
        return -1;
    G.g = g;
    G.rank = rank;
    G.t = rank % g->tp;
    G.d = rank / g->tp % g->dp;
    G.p = rank / (g->tp * g->dp);
    G.tp_comm = 0x1000000ull + (uint64_t)(G.d + g->dp * G.p);
    G.dp_comm = 0x2000000ull + (uint64_t)(G.t + g->tp * G.p);
    G.pp_comm = 0x3000000ull + (uint64_t)(G.t + g->tp * G.d);
    G.tokens = g->seq * g->micro_batch;
    G.gap = rank == g->slow_rank ? (uint64_t)((double)g->gap_ns * g->slow_factor) : g->gap_ns;
    define(&G);
    if (g->tp > 1)
        join_comm(&G, G.tp_comm, G.t, g->tp);
    if (g->dp > 1)
        join_comm(&G, G.dp_comm, G.d, g->dp);
    if (g->pp > 1)
        join_comm(&G, G.pp_comm, G.p, g->pp);
    /* weights, gradients and Adam state (16 bytes a parameter), then activations */
    uint64_t params = (uint64_t)(12 * g->hidden * g->hidden / g->tp + 13 * g->hidden) * (uint64_t)(g->layers / g->pp);
    uint64_t bytes[2] = { 16 * params, (uint64_t)(G.tokens * g->hidden * 34 / g->tp) * (uint64_t)(g->layers / g->pp) *
                                           (uint64_t)MAYA_MIN(g->pp - G.p, g->microbatches) };
    uint64_t used = 0;
    for (int i = 0; i < 2; i++) {
        struct maya_rec_alloc a;
        memset(&a, 0, sizeof a);
        a.h = (struct maya_rec_hdr){ MAYA_REC_ALLOC, 0, sizeof a };
        call(&G, &a.call, S_MALLOC, 0);
        a.ptr = 0x7f0000000000ull + used;
        a.bytes = bytes[i];
        a.kind = MAYA_ALLOC_DEVICE;
        used += bytes[i];
        a.device_used_bytes = a.device_peak_bytes = used;
        emit(&G, &a);
    }
    for (int it = 0; it < g->iterations; it++)
        iteration(&G);
    unsigned char endbuf[sizeof(struct maya_rec_end) + sizeof(struct maya_end_device)];
    memset(endbuf, 0, sizeof endbuf);
    struct maya_rec_end *e = (void *)endbuf;
    struct maya_end_device *dev = (void *)(e + 1);
    e->h = (struct maya_rec_hdr){ MAYA_REC_END, 0, sizeof endbuf };
    e->ndevices = 1;
    dev->peak_bytes = used;
    dev->total_bytes = 80ull << 30;
    if (G.rc == 0) {
        e->records = col_writer_records(G.w);
        G.rc = col_writer_flush(G.w); /* END in a chunk of its own, as the emulator writes it */
        emit(&G, e);
    }
    if (G.rc == 0)
        G.rc = col_writer_flush(G.w);
    col_writer_free(G.w);
    if (fclose(fp) != 0 && G.rc == 0)
        G.rc = maya_error("cannot write %s: %m", path);
    return G.rc;
}

int gpt_write_traces(const struct gpt_shape *g, const char *dir)
{
    if (check_shape(g) < 0)
        return -1;
    int world = g->tp * g->pp * g->dp;
    char path[4096];
    for (int r = 0; r < world; r++) {
        if (maya_snprintf(path, sizeof path, "%s/rank-%d.mtrace", dir, r) < 0 || gpt_write_rank(g, r, path) < 0)
            return -1;
    }
    return 0;
}

// minigpt: training iterations of a small GPT with Megatron-style 3D
// parallelism, in plain CUDA C + cuBLASLt + NCCL.
//
//   tensor parallel (TP)   attention heads and MLP columns split over the TP
//                          group: column-parallel QKV/fc1, row-parallel
//                          out-proj/fc2 followed by an all-reduce; input
//                          gradients of the column-parallel layers all-reduced
//                          in the backward pass; vocab-parallel embedding and
//                          cross-entropy (all-reduces of max, sum and target)
//   pipeline parallel (PP) layers split into stages; micro-batches flow with
//                          the 1F1B schedule (warm-up forwards, steady
//                          one-forward-one-backward, cool-down backwards),
//                          activations and gradients sent with grouped
//                          ncclSend/ncclRecv
//   data parallel (DP)     each layer's gradient bucket is all-reduced (or,
//                          with --zero1, reduce-scattered and the parameters
//                          all-gathered after the sharded optimizer step) on
//                          its own stream as soon as the last micro-batch's
//                          backward has produced it, overlapping the rest of
//                          the backward pass; ordered with CUDA events
// Then gradient-norm clipping (an all-reduce over the model-parallel group)
// and Adam. Weights and activations are bfloat16, gradients and optimizer
// state float32; GEMMs are cuBLASLt matmuls (bf16 in, fp32 compute).
//
// One rank per process, as torchrun starts them: RANK, WORLD_SIZE,
// LOCAL_RANK (the device), MASTER_ADDR and MASTER_PORT (rank 0 hands out the
// NCCL unique id there). Under maya: maya run -g h100x8 minigpt --tp 2 --pp 2
#include <algorithm>
#include <cmath>
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <string>
#include <vector>

#include "nccl_boot.h"

typedef __nv_bfloat16 bf16;

#define LT_CHECK(call)                                                                \
    do {                                                                              \
        cublasStatus_t s_ = (call);                                                   \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                            \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, \
                    (int)s_);                                                         \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

// ---------------------------------------------------------------- options

struct Options {
    int tp = 1, pp = 1, dp = 0;  // dp 0: WORLD_SIZE / (tp * pp)
    int micro_batches = 4, mbs = 2, seq = 128;
    int hidden = 256, heads = 8, layers = 4, vocab = 4096;
    int iters = 3;
    int host_work = 0;  // thousands of hash rounds before each GEMM
    bool zero1 = false, own_gemm = false;
    float lr = 3e-4f, clip = 1.0f;
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: minigpt [OPTIONS]\n"
        "Trains a small GPT for a few iterations with tensor (TP), pipeline (PP) and data (DP)\n"
        "parallelism: Megatron-style TP all-reduces, a 1F1B pipeline schedule over micro-batches\n"
        "with NCCL send/recv, and DP gradient reduction overlapping the backward pass.\n"
        "Run one process per rank (torchrun conventions: RANK, WORLD_SIZE, LOCAL_RANK,\n"
        "MASTER_ADDR, MASTER_PORT); WORLD_SIZE = TP x PP x DP. Under maya:\n"
        "    maya run -g h100x8 minigpt --tp 2 --pp 2        (DP 2)\n"
        "Options (default):\n"
        "  --tp N                tensor-parallel degree (1); divides --heads and --vocab\n"
        "  --pp N                pipeline stages (1); divides --layers\n"
        "  --dp N                data-parallel degree (WORLD_SIZE / (TP x PP))\n"
        "  --micro-batches N     micro-batches per iteration and pipeline (4)\n"
        "  --micro-batch-size N  sequences per micro-batch (2)\n"
        "  --seq N               sequence length in tokens (128)\n"
        "  --hidden N            model width (256); --heads divides it\n"
        "  --heads N             attention heads (8)\n"
        "  --layers N            transformer layers (4)\n"
        "  --vocab N             vocabulary size (4096)\n"
        "  --iters N             training iterations (3)\n"
        "  --zero1               reduce-scatter gradients, shard the optimizer state over DP,\n"
        "                        all-gather the parameters (instead of all-reducing gradients)\n"
        "  --gemm cublaslt|kernel  matrix multiplies with cuBLASLt (default) or this program's\n"
        "                        own CUDA kernel\n"
        "  --host-work N         before each matrix multiply, N thousand rounds of an integer\n"
        "                        hash on the CPU (0): a framework's per-op host overhead, for\n"
        "                        host-bound runs (1000 rounds take about 1 us on a 4 GHz core)\n"
        "  --help                this text\n"
        "Every rank prints one line when done; the last stage's first rank prints the loss of\n"
        "each iteration (under maya kernels do not run, so the value is not meaningful).\n");
}

static int parse_int(const char *opt, const char *v)
{
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || x < 1 || x > (1 << 24)) {
        fprintf(stderr, "minigpt: %s expects a whole number from 1, got \"%s\"\n", opt, v ? v : "");
        exit(2);
    }
    return (int)x;
}

static Options parse(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a == "--help") {
            usage(stdout);
            exit(0);
        } else if (a == "--zero1") {
            o.zero1 = true;
            continue;
        } else if (a == "--gemm") {
            if (!v || (strcmp(v, "cublaslt") && strcmp(v, "kernel"))) {
                fprintf(stderr, "minigpt: --gemm expects cublaslt or kernel, got \"%s\"\n", v ? v : "");
                exit(2);
            }
            o.own_gemm = !strcmp(v, "kernel");
        } else if (a == "--tp") o.tp = parse_int(argv[i], v);
        else if (a == "--pp") o.pp = parse_int(argv[i], v);
        else if (a == "--dp") o.dp = parse_int(argv[i], v);
        else if (a == "--micro-batches") o.micro_batches = parse_int(argv[i], v);
        else if (a == "--micro-batch-size") o.mbs = parse_int(argv[i], v);
        else if (a == "--seq") o.seq = parse_int(argv[i], v);
        else if (a == "--hidden") o.hidden = parse_int(argv[i], v);
        else if (a == "--heads") o.heads = parse_int(argv[i], v);
        else if (a == "--layers") o.layers = parse_int(argv[i], v);
        else if (a == "--vocab") o.vocab = parse_int(argv[i], v);
        else if (a == "--iters") o.iters = parse_int(argv[i], v);
        else if (a == "--host-work") o.host_work = parse_int(argv[i], v);
        else {
            fprintf(stderr, "minigpt: unknown option \"%s\" (--help lists them)\n", argv[i]);
            exit(2);
        }
        i++;
    }
    return o;
}

// ---------------------------------------------------------------- kernels

__device__ float block_sum(float v)
{
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0)
        part[warp] = v;
    __syncthreads();
    float s = 0;
    for (int i = 0; i < (int)(blockDim.x + 31) / 32; i++)
        s += part[i];
    return s;
}

__device__ float block_max(float v)
{
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0)
        part[warp] = v;
    __syncthreads();
    float m = -INFINITY;
    for (int i = 0; i < (int)(blockDim.x + 31) / 32; i++)
        m = fmaxf(m, part[i]);
    return m;
}

__device__ __forceinline__ float f(bf16 x) { return __bfloat162float(x); }
__device__ __forceinline__ bf16 b(float x) { return __float2bfloat16(x); }

__device__ __forceinline__ uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// Parameters: uniform in [-scale, scale] from (seed, global index), so that
// every rank holding the same parameter gets the same value; into the fp32
// master copy and/or the bf16 weights (either may be NULL).
__global__ void init_params(float *master, bf16 *w, size_t n, size_t first, uint32_t seed, float scale)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t h = hash32(seed ^ hash32((uint32_t)(first + i)) ^ (uint32_t)((first + i) >> 32));
    float v = ((h >> 8) * (1.0f / 16777216.0f) * 2 - 1) * scale;
    if (master)
        master[i] = v;
    if (w)
        w[i] = b(v);
}

__global__ void fill(float *master, bf16 *w, size_t n, float v)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        if (master)
            master[i] = v;
        if (w)
            w[i] = b(v);
    }
}

// x[t] = wte[token - v0] (if this rank holds the token's row) + wpe[t % S]
// (on TP rank 0 only: the partial sums are all-reduced over TP).
__global__ void embed_fwd(const int *tokens, const bf16 *wte, const bf16 *wpe, bf16 *x, int S, int H, int v0,
                          int vl, int add_pos)
{
    int t = blockIdx.x, tok = tokens[t] - v0;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float v = tok >= 0 && tok < vl ? f(wte[(size_t)tok * H + i]) : 0.0f;
        if (add_pos)
            v += f(wpe[(size_t)(t % S) * H + i]);
        x[(size_t)t * H + i] = b(v);
    }
}

__global__ void embed_bwd(const int *tokens, const bf16 *dx, float *dwte, float *dwpe, int S, int H, int v0, int vl)
{
    int t = blockIdx.x, tok = tokens[t] - v0;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float g = f(dx[(size_t)t * H + i]);
        if (tok >= 0 && tok < vl)
            atomicAdd(&dwte[(size_t)tok * H + i], g);
        atomicAdd(&dwpe[(size_t)(t % S) * H + i], g);
    }
}

__global__ void layernorm_fwd(const bf16 *x, const bf16 *g, const bf16 *bta, bf16 *y, float *mean, float *rstd, int H)
{
    const bf16 *xr = x + (size_t)blockIdx.x * H;
    float s = 0, ss = 0;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float v = f(xr[i]);
        s += v;
        ss += v * v;
    }
    s = block_sum(s);
    ss = block_sum(ss);
    float m = s / H, r = rsqrtf(fmaxf(ss / H - m * m, 0.0f) + 1e-5f);
    for (int i = threadIdx.x; i < H; i += blockDim.x)
        y[(size_t)blockIdx.x * H + i] = b((f(xr[i]) - m) * r * f(g[i]) + f(bta[i]));
    if (threadIdx.x == 0) {
        mean[blockIdx.x] = m;
        rstd[blockIdx.x] = r;
    }
}

// dx = LN backward of dy, plus res (the residual path's gradient, may be
// NULL); dg, db accumulate (float32).
__global__ void layernorm_bwd(const bf16 *dy, const bf16 *x, const bf16 *g, const float *mean, const float *rstd,
                              const bf16 *res, bf16 *dx, float *dg, float *db, int H)
{
    size_t row = (size_t)blockIdx.x * H;
    float m = mean[blockIdx.x], r = rstd[blockIdx.x], s1 = 0, s2 = 0;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float xh = (f(x[row + i]) - m) * r, d = f(dy[row + i]) * f(g[i]);
        s1 += d;
        s2 += d * xh;
        atomicAdd(&dg[i], f(dy[row + i]) * xh);
        atomicAdd(&db[i], f(dy[row + i]));
    }
    s1 = block_sum(s1) / H;
    s2 = block_sum(s2) / H;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float xh = (f(x[row + i]) - m) * r, d = f(dy[row + i]) * f(g[i]);
        float v = r * (d - s1 - xh * s2) + (res ? f(res[row + i]) : 0.0f);
        dx[row + i] = b(v);
    }
}

// Tokens [B*S, ld] (columns col0.. of each row) <-> heads [B*hl, S, dh].
__global__ void permute_heads(const bf16 *src, bf16 *dst, int B, int S, int hl, int dh, int ld, int col0, int to_heads)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, n = (size_t)B * S * hl * dh;
    if (i >= n)
        return;
    int d = i % dh, h = (i / dh) % hl;
    size_t t = i / ((size_t)dh * hl);
    int bb = (int)(t / S), s = (int)(t % S);
    size_t tok = t * ld + col0 + (size_t)h * dh + d, head = (((size_t)bb * hl + h) * S + s) * dh + d;
    if (to_heads)
        dst[head] = src[tok];
    else
        dst[tok] = src[head];
}

// Causal softmax of each row of [rows, S] scores, in place, scaled.
__global__ void softmax_causal(bf16 *p, int S, float scale)
{
    size_t row = blockIdx.x;
    int q = (int)(row % S);
    bf16 *r = p + row * S;
    float mx = -INFINITY;
    for (int j = threadIdx.x; j <= q; j += blockDim.x)
        mx = fmaxf(mx, f(r[j]) * scale);
    mx = block_max(mx);
    float s = 0;
    for (int j = threadIdx.x; j <= q; j += blockDim.x)
        s += __expf(f(r[j]) * scale - mx);
    s = block_sum(s);
    for (int j = threadIdx.x; j < S; j += blockDim.x)
        r[j] = b(j <= q ? __expf(f(r[j]) * scale - mx) / s : 0.0f);
}

// dS = P * (dP - sum(P * dP)) * scale, in place in dp.
__global__ void softmax_bwd(const bf16 *p, bf16 *dp, int S, float scale)
{
    size_t row = (size_t)blockIdx.x * S;
    float s = 0;
    for (int j = threadIdx.x; j < S; j += blockDim.x)
        s += f(p[row + j]) * f(dp[row + j]);
    s = block_sum(s);
    for (int j = threadIdx.x; j < S; j += blockDim.x)
        dp[row + j] = b(f(p[row + j]) * (f(dp[row + j]) - s) * scale);
}

__device__ __forceinline__ float gelu(float x)
{
    return 0.5f * x * (1 + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__global__ void gelu_fwd(const bf16 *x, bf16 *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = b(gelu(f(x[i])));
}

__global__ void gelu_bwd(const bf16 *x, const bf16 *dy, bf16 *dx, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = f(x[i]), u = 0.7978845608f * (v + 0.044715f * v * v * v), th = tanhf(u);
    float d = 0.5f * (1 + th) + 0.5f * v * (1 - th * th) * 0.7978845608f * (1 + 3 * 0.044715f * v * v);
    dx[i] = b(f(dy[i]) * d);
}

__global__ void add(const bf16 *a, const bf16 *c, bf16 *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = b(f(a[i]) + f(c[i]));
}

// Vocab-parallel cross-entropy, in three steps around TP all-reduces.
__global__ void ce_max(const bf16 *logits, float *mx, int vl)
{
    const bf16 *r = logits + (size_t)blockIdx.x * vl;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < vl; j += blockDim.x)
        m = fmaxf(m, f(r[j]));
    m = block_max(m);
    if (threadIdx.x == 0)
        mx[blockIdx.x] = m;
}

// stats[t] = sum exp(logit - max), stats[T + t] = the target's logit (0 if
// another rank holds it).
__global__ void ce_stats(const bf16 *logits, const float *mx, const int *targets, float *stats, int T, int vl, int v0)
{
    int t = blockIdx.x;
    const bf16 *r = logits + (size_t)t * vl;
    float s = 0;
    for (int j = threadIdx.x; j < vl; j += blockDim.x)
        s += __expf(f(r[j]) - mx[t]);
    s = block_sum(s);
    if (threadIdx.x == 0) {
        int k = targets[t] - v0;
        stats[t] = s;
        stats[T + t] = k >= 0 && k < vl ? f(r[k]) : 0.0f;
    }
}

// loss += scale * (log sum + max - target); logits become dlogits * scale.
__global__ void ce_finish(bf16 *logits, const float *mx, const float *stats, const int *targets, float *loss, int T,
                          int vl, int v0, float scale)
{
    int t = blockIdx.x, k = targets[t] - v0;
    bf16 *r = logits + (size_t)t * vl;
    for (int j = threadIdx.x; j < vl; j += blockDim.x)
        r[j] = b((__expf(f(r[j]) - mx[t]) / stats[t] - (j == k ? 1.0f : 0.0f)) * scale);
    if (threadIdx.x == 0)
        atomicAdd(loss, scale * (logf(stats[t]) + mx[t] - stats[T + t]));
}

__global__ void sum_squares(const float *g, size_t n, float scale, float *out)
{
    float s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += g[i] * g[i] * scale * scale;
    s = block_sum(s);
    if (threadIdx.x == 0)
        atomicAdd(out, s);
}

// Adam with weight decay, gradients scaled (DP average) and clipped to a
// global norm whose square is *norm2.
__global__ void adam(float *master, const float *grad, float *m, float *v, bf16 *w, size_t n, float lr, int step,
                     float gscale, const float *norm2, float max_norm)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float nrm = sqrtf(*norm2), clip = nrm > max_norm ? max_norm / (nrm + 1e-6f) : 1.0f;
    float g = grad[i] * gscale * clip;
    m[i] = 0.9f * m[i] + 0.1f * g;
    v[i] = 0.95f * v[i] + 0.05f * g * g;
    float mh = m[i] / (1 - powf(0.9f, (float)step)), vh = v[i] / (1 - powf(0.95f, (float)step));
    master[i] -= lr * (mh / (sqrtf(vh) + 1e-8f) + 0.01f * master[i]);
    w[i] = b(master[i]);
}

// The fallback GEMM (--gemm kernel): Y[M,N] = op(X)[M,K] op(W)[K,N] (+ beta Y),
// row-major, batched; 16x16 tiles.
template <class TO>
__global__ void gemm_kernel(int tx, int tw, int M, int N, int K, const bf16 *X, const bf16 *W, TO *Y, float beta,
                            long long sx, long long sw, long long sy)
{
    __shared__ float xs[16][17], ws[16][17];
    X += blockIdx.z * sx;
    W += blockIdx.z * sw;
    Y += blockIdx.z * sy;
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0;
    for (int k0 = 0; k0 < K; k0 += 16) {
        int kx = k0 + threadIdx.x, kw = k0 + threadIdx.y;
        xs[threadIdx.y][threadIdx.x] = row < M && kx < K ? f(tx ? X[(size_t)kx * M + row] : X[(size_t)row * K + kx]) : 0;
        ws[threadIdx.y][threadIdx.x] = col < N && kw < K ? f(tw ? W[(size_t)col * K + kw] : W[(size_t)kw * N + col]) : 0;
        __syncthreads();
        for (int k = 0; k < 16; k++)
            acc += xs[threadIdx.y][k] * ws[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        size_t o = (size_t)row * N + col;
        float prev = beta != 0 ? (float)Y[o] : 0.0f;
        Y[o] = (TO)(acc + beta * prev);
    }
}

// ---------------------------------------------------------------- GEMM

static bool own_gemm;
static cublasLtHandle_t lt;
static void *lt_workspace;
static const size_t LT_WORKSPACE = 32u << 20;

static unsigned blocks(size_t n, unsigned per = 256) { return (unsigned)((n + per - 1) / per); }

// --host-work: a fixed amount of CPU work (a chain of dependent multiplies,
// so its time is the core's, not memory's), as a framework spends host time
// on every op it dispatches.
static int host_work_k;
static volatile uint32_t host_sink;
static void host_work()
{
    uint32_t x = host_sink;
    for (long i = 0; i < host_work_k * 1000L; i++)
        x = x * 2654435761u + (x >> 13);
    host_sink = x;
}

// Y[M,N] = op(X)[M,K] * op(W)[K,N] + beta * Y, row-major; tx/tw transpose
// the stored X [K,M] / W [N,K]; Y is float32 (gradient accumulation) or
// bf16; batch matrices strided by sx, sw, sy elements.
static void gemm(cudaStream_t st, bool tx, bool tw, int M, int N, int K, const bf16 *X, const bf16 *W, void *Y,
                 bool y_fp32, float beta, int batch = 1, long long sx = 0, long long sw = 0, long long sy = 0)
{
    host_work();
    if (own_gemm) {
        dim3 grid((N + 15) / 16, (M + 15) / 16, batch), block(16, 16);
        if (y_fp32)
            gemm_kernel<float><<<grid, block, 0, st>>>(tx, tw, M, N, K, X, W, (float *)Y, beta, sx, sw, sy);
        else
            gemm_kernel<bf16><<<grid, block, 0, st>>>(tx, tw, M, N, K, X, W, (bf16 *)Y, beta, sx, sw, sy);
        CUDA_CHECK(cudaGetLastError());
        return;
    }
    // Column-major view: Y^T [N,M] = op(W)^T [N,K] * op(X)^T [K,M].
    cublasLtMatmulDesc_t op;
    LT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = tw ? CUBLAS_OP_T : CUBLAS_OP_N, tb = tx ? CUBLAS_OP_T : CUBLAS_OP_N;
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    cublasLtMatrixLayout_t la, lb, lc;
    cudaDataType_t yt = y_fp32 ? CUDA_R_32F : CUDA_R_16BF;
    LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, tw ? K : N, tw ? N : K, tw ? K : N));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, tx ? M : K, tx ? K : M, tx ? M : K));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lc, yt, N, M, N));
    if (batch > 1) {
        cublasLtMatrixLayout_t ls[3] = { la, lb, lc };
        long long strides[3] = { sw, sx, sy };
        for (int i = 0; i < 3; i++) {
            LT_CHECK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
            LT_CHECK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                                      sizeof strides[i]));
        }
    }
    cublasLtMatmulPreference_t pref;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &LT_WORKSPACE,
                                                  sizeof LT_WORKSPACE));
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    LT_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &found));
    if (found == 0) {
        fprintf(stderr, "minigpt: cuBLASLt has no algorithm for a %dx%dx%d GEMM\n", M, N, K);
        exit(1);
    }
    float alpha = 1.0f;
    LT_CHECK(cublasLtMatmul(lt, op, &alpha, W, la, X, lb, &beta, Y, lc, Y, lc, &heur.algo, lt_workspace,
                            LT_WORKSPACE, st));
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
}

// ---------------------------------------------------------------- model state

// One gradient bucket: the parameters of a layer (or of the embedding, or of
// the head), reduced over DP as one NCCL call.
struct Bucket {
    size_t n = 0;           // elements (padded to a multiple of 64 * DP)
    size_t shard = 0;       // --zero1: elements this DP rank updates
    bf16 *w = nullptr;      // parameters (bf16)
    float *grad = nullptr;  // gradients (fp32, accumulated over micro-batches)
    float *master = nullptr, *m = nullptr, *v = nullptr;  // Adam state (the shard with --zero1)
    cudaEvent_t ready;      // its gradients are final
    size_t used = 0;        // carving position
    std::vector<std::pair<size_t, size_t>> ones;  // (offset, n) of LayerNorm gains: start at 1
};

struct LayerW {             // pointers into a layer's bucket
    bf16 *ln1_g, *ln1_b, *qkv, *o, *ln2_g, *ln2_b, *fc1, *fc2;
    float *d_ln1_g, *d_ln1_b, *d_qkv, *d_o, *d_ln2_g, *d_ln2_b, *d_fc1, *d_fc2;
};

struct Acts {               // what one layer keeps of one micro-batch for its backward
    bf16 *x_in, *ln1, *qkv, *q, *k, *v, *p, *ctx, *x_mid, *ln2, *h1, *h1g;
    float *mean1, *rstd1, *mean2, *rstd2;
};

static Options opt;
static int rank, world, tp_idx, pp_idx, dp_idx, dp;
static int T, H, Hl, hl, dh, Fl, Vl, S, B, L;  // tokens per micro-batch, sizes per TP rank, layers of this stage
static bool first_stage, last_stage;
static ncclComm_t world_comm, tp_comm, pp_comm, dp_comm, mp_comm;
static cudaStream_t s_comp, s_dp;
static cudaEvent_t ev_dp_done, ev_updated;

static std::vector<Bucket> buckets;  // [0]: embedding (first stage), layers, then head (last stage)
static std::vector<LayerW> lw;
static std::vector<std::vector<Acts>> acts;  // [slot][layer]
static int slots;
static Bucket *emb_bucket, *head_bucket;
static bf16 *wte, *wpe, *lnf_g, *lnf_b, *w_lm;
static float *d_wte, *d_wpe, *d_lnf_g, *d_lnf_b, *d_lm;
static std::vector<bf16 *> x_last;  // [slot] the stage's output (input of the final LN on the last stage)
static std::vector<bf16 *> lnf_out, logits;
static std::vector<float *> lnf_mean, lnf_rstd;
static std::vector<int *> tokens, targets;
static bf16 *gin, *gout, *w_ctxh, *w_attn, *w_dx1, *w_dx2, *w_dh, *w_dh2, *w_dqkv, *w_dq, *w_dk, *w_dv, *w_dp;
static float *ce_mx, *ce_sums, *loss, *norm2;

template <class T> static T *dalloc(size_t n)
{
    T *p;
    CUDA_CHECK(cudaMalloc(&p, (n ? n : 1) * sizeof(T)));
    return p;
}

// Reserve n elements of a bucket (before it is allocated: sizes only).
static size_t carve(Bucket &bk, size_t n)
{
    size_t off = bk.used;
    bk.used += (n + 7) / 8 * 8;
    return off;
}

static void bucket_alloc(Bucket &bk)
{
    size_t unit = 64 * (size_t)dp;
    bk.n = (bk.used + unit - 1) / unit * unit;
    bk.shard = opt.zero1 ? bk.n / dp : bk.n;
    bk.w = dalloc<bf16>(bk.n);
    bk.grad = dalloc<float>(bk.n);
    bk.master = dalloc<float>(bk.shard);
    bk.m = dalloc<float>(bk.shard);
    bk.v = dalloc<float>(bk.shard);
    CUDA_CHECK(cudaMemsetAsync(bk.m, 0, bk.shard * sizeof(float), s_comp));
    CUDA_CHECK(cudaMemsetAsync(bk.v, 0, bk.shard * sizeof(float), s_comp));
    CUDA_CHECK(cudaEventCreateWithFlags(&bk.ready, cudaEventDisableTiming));
}

// Same values on every rank that holds a parameter: seeded by the bucket's
// place in the whole model and the TP rank (TP shards differ). The bf16
// weights are whole on every rank; the master copy is this rank's shard.
static void bucket_init(Bucket &bk, uint32_t seed)
{
    size_t first = opt.zero1 ? bk.shard * dp_idx : 0;
    init_params<<<blocks(bk.n), 256, 0, s_comp>>>(nullptr, bk.w, bk.n, 0, seed, 0.02f);
    init_params<<<blocks(bk.shard), 256, 0, s_comp>>>(bk.master, nullptr, bk.shard, first, seed, 0.02f);
    for (auto &one : bk.ones) {  // LayerNorm gains start at 1
        fill<<<blocks(one.second), 256, 0, s_comp>>>(nullptr, bk.w + one.first, one.second, 1.0f);
        size_t lo = std::max(one.first, first), hi = std::min(one.first + one.second, first + bk.shard);
        if (lo < hi)
            fill<<<blocks(hi - lo), 256, 0, s_comp>>>(bk.master + (lo - first), nullptr, hi - lo, 1.0f);
    }
    CUDA_CHECK(cudaGetLastError());
}

static void build_model()
{
    int layer0 = pp_idx * L;
    buckets.resize((first_stage ? 1 : 0) + L + (last_stage ? 1 : 0));
    int bi = 0;
    size_t o_wte = 0, o_wpe = 0, o_lnf_g = 0, o_lnf_b = 0, o_lm = 0;
    std::vector<size_t> off(8 * L);
    if (first_stage) {
        emb_bucket = &buckets[bi++];
        o_wte = carve(*emb_bucket, (size_t)Vl * H);
        o_wpe = carve(*emb_bucket, (size_t)S * H);
    }
    for (int l = 0; l < L; l++) {
        Bucket &bk = buckets[bi + l];
        size_t *o = &off[8 * l];
        o[0] = carve(bk, H); o[1] = carve(bk, H);
        o[2] = carve(bk, (size_t)H * 3 * Hl); o[3] = carve(bk, (size_t)Hl * H);
        o[4] = carve(bk, H); o[5] = carve(bk, H);
        o[6] = carve(bk, (size_t)H * Fl); o[7] = carve(bk, (size_t)Fl * H);
        bk.ones = { { o[0], (size_t)H }, { o[4], (size_t)H } };
    }
    if (last_stage) {
        head_bucket = &buckets[bi + L];
        o_lnf_g = carve(*head_bucket, H);
        o_lnf_b = carve(*head_bucket, H);
        o_lm = carve(*head_bucket, (size_t)H * Vl);
        head_bucket->ones = { { o_lnf_g, (size_t)H } };
    }
    for (Bucket &bk : buckets)
        bucket_alloc(bk);
    // the seed names the bucket in the whole model, and the TP shard
    uint32_t seed = 1000u * (uint32_t)tp_idx;
    if (first_stage) {
        bucket_init(*emb_bucket, seed + 1);
        wte = emb_bucket->w + o_wte;
        wpe = emb_bucket->w + o_wpe;
        d_wte = emb_bucket->grad + o_wte;
        d_wpe = emb_bucket->grad + o_wpe;
    }
    lw.resize(L);
    for (int l = 0; l < L; l++) {
        Bucket &bk = buckets[bi + l];
        bucket_init(bk, seed + 2 + layer0 + l);
        size_t *o = &off[8 * l];
        bf16 **wp[8] = { &lw[l].ln1_g, &lw[l].ln1_b, &lw[l].qkv, &lw[l].o, &lw[l].ln2_g, &lw[l].ln2_b, &lw[l].fc1,
                         &lw[l].fc2 };
        float **gp[8] = { &lw[l].d_ln1_g, &lw[l].d_ln1_b, &lw[l].d_qkv, &lw[l].d_o, &lw[l].d_ln2_g, &lw[l].d_ln2_b,
                          &lw[l].d_fc1, &lw[l].d_fc2 };
        for (int i = 0; i < 8; i++) {
            *wp[i] = bk.w + o[i];
            *gp[i] = bk.grad + o[i];
        }
    }
    if (last_stage) {
        bucket_init(*head_bucket, seed + 999);
        lnf_g = head_bucket->w + o_lnf_g;
        lnf_b = head_bucket->w + o_lnf_b;
        w_lm = head_bucket->w + o_lm;
        d_lnf_g = head_bucket->grad + o_lnf_g;
        d_lnf_b = head_bucket->grad + o_lnf_b;
        d_lm = head_bucket->grad + o_lm;
    }

    // Activations: 1F1B keeps at most (stages after this one + 1) micro-batches.
    slots = std::min(opt.micro_batches, opt.pp - pp_idx);
    size_t th = (size_t)T * H, probs = (size_t)B * hl * S * S;
    acts.assign(slots, std::vector<Acts>(L));
    for (int s = 0; s < slots; s++) {
        for (int l = 0; l < L; l++) {
            Acts &a = acts[s][l];
            a.x_in = dalloc<bf16>(th);
            a.ln1 = dalloc<bf16>(th);
            a.qkv = dalloc<bf16>((size_t)T * 3 * Hl);
            a.q = dalloc<bf16>((size_t)T * Hl);
            a.k = dalloc<bf16>((size_t)T * Hl);
            a.v = dalloc<bf16>((size_t)T * Hl);
            a.p = dalloc<bf16>(probs);
            a.ctx = dalloc<bf16>((size_t)T * Hl);
            a.x_mid = dalloc<bf16>(th);
            a.ln2 = dalloc<bf16>(th);
            a.h1 = dalloc<bf16>((size_t)T * Fl);
            a.h1g = dalloc<bf16>((size_t)T * Fl);
            a.mean1 = dalloc<float>(T);
            a.rstd1 = dalloc<float>(T);
            a.mean2 = dalloc<float>(T);
            a.rstd2 = dalloc<float>(T);
        }
        x_last.push_back(dalloc<bf16>(th));
        tokens.push_back(dalloc<int>(T));
        targets.push_back(dalloc<int>(T));
        if (last_stage) {
            lnf_out.push_back(dalloc<bf16>(th));
            logits.push_back(dalloc<bf16>((size_t)T * Vl));
            lnf_mean.push_back(dalloc<float>(T));
            lnf_rstd.push_back(dalloc<float>(T));
        }
    }
    // Work buffers, reused by every layer (stream order keeps them apart).
    gin = dalloc<bf16>(th);
    gout = dalloc<bf16>(th);
    w_ctxh = dalloc<bf16>((size_t)T * Hl);
    w_attn = dalloc<bf16>(th);
    w_dx1 = dalloc<bf16>(th);
    w_dx2 = dalloc<bf16>(th);
    w_dh = dalloc<bf16>((size_t)T * Fl);
    w_dh2 = dalloc<bf16>((size_t)T * Fl);
    w_dqkv = dalloc<bf16>((size_t)T * 3 * Hl);
    w_dq = dalloc<bf16>((size_t)T * Hl);
    w_dk = dalloc<bf16>((size_t)T * Hl);
    w_dv = dalloc<bf16>((size_t)T * Hl);
    w_dp = dalloc<bf16>(probs);
    ce_mx = dalloc<float>(T);
    ce_sums = dalloc<float>(2 * (size_t)T);
    loss = dalloc<float>(1);
    norm2 = dalloc<float>(1);
}

// ---------------------------------------------------------------- communication

// Megatron: skip a collective over a group of one.
static void tp_allreduce(void *buf, size_t n, ncclDataType_t t, ncclRedOp_t op = ncclSum)
{
    if (opt.tp > 1)
        NCCL_CHECK(ncclAllReduce(buf, buf, n, t, op, tp_comm, s_comp));
}

// Pipeline transfers: each a group, as torch's batch_isend_irecv.
// A peer outside 0..pp-1 means none (first and last stage).
static void p2p(const bf16 *send, int to, bf16 *recv, int from)
{
    bool s = send && to >= 0 && to < opt.pp, r = recv && from >= 0 && from < opt.pp;
    if (!s && !r)
        return;
    NCCL_CHECK(ncclGroupStart());
    if (s)
        NCCL_CHECK(ncclSend(send, (size_t)T * H, ncclBfloat16, to, pp_comm, s_comp));
    if (r)
        NCCL_CHECK(ncclRecv(recv, (size_t)T * H, ncclBfloat16, from, pp_comm, s_comp));
    NCCL_CHECK(ncclGroupEnd());
}

// ---------------------------------------------------------------- forward and backward

static void layer_fwd(int l, Acts &a, bf16 *x_out)
{
    const LayerW &w = lw[l];
    size_t th = (size_t)T * H;
    float scale = 1.0f / sqrtf((float)dh);
    layernorm_fwd<<<T, 256, 0, s_comp>>>(a.x_in, w.ln1_g, w.ln1_b, a.ln1, a.mean1, a.rstd1, H);
    gemm(s_comp, false, false, T, 3 * Hl, H, a.ln1, w.qkv, a.qkv, false, 0);
    bf16 *qkv3[3] = { a.q, a.k, a.v };
    for (int i = 0; i < 3; i++)
        permute_heads<<<blocks((size_t)T * Hl), 256, 0, s_comp>>>(a.qkv, qkv3[i], B, S, hl, dh, 3 * Hl, i * Hl, 1);
    long long sq = (long long)S * dh, ss = (long long)S * S;
    gemm(s_comp, false, true, S, S, dh, a.q, a.k, a.p, false, 0, B * hl, sq, sq, ss);
    softmax_causal<<<B * hl * S, 128, 0, s_comp>>>(a.p, S, scale);
    gemm(s_comp, false, false, S, dh, S, a.p, a.v, w_ctxh, false, 0, B * hl, ss, sq, sq);
    permute_heads<<<blocks((size_t)T * Hl), 256, 0, s_comp>>>(w_ctxh, a.ctx, B, S, hl, dh, Hl, 0, 0);
    gemm(s_comp, false, false, T, H, Hl, a.ctx, w.o, w_attn, false, 0);
    tp_allreduce(w_attn, th, ncclBfloat16);
    add<<<blocks(th), 256, 0, s_comp>>>(a.x_in, w_attn, a.x_mid, th);
    layernorm_fwd<<<T, 256, 0, s_comp>>>(a.x_mid, w.ln2_g, w.ln2_b, a.ln2, a.mean2, a.rstd2, H);
    gemm(s_comp, false, false, T, Fl, H, a.ln2, w.fc1, a.h1, false, 0);
    gelu_fwd<<<blocks((size_t)T * Fl), 256, 0, s_comp>>>(a.h1, a.h1g, (size_t)T * Fl);
    gemm(s_comp, false, false, T, H, Fl, a.h1g, w.fc2, w_attn, false, 0);
    tp_allreduce(w_attn, th, ncclBfloat16);
    add<<<blocks(th), 256, 0, s_comp>>>(a.x_mid, w_attn, x_out, th);
    CUDA_CHECK(cudaGetLastError());
}

// dy: gradient of the layer's output; dx receives its input's gradient.
static void layer_bwd(int l, Acts &a, const bf16 *dy, bf16 *dx)
{
    const LayerW &w = lw[l];
    size_t th = (size_t)T * H, tf = (size_t)T * Fl;
    float scale = 1.0f / sqrtf((float)dh);
    // MLP
    gemm(s_comp, false, true, T, Fl, H, dy, w.fc2, w_dh, false, 0);
    gemm(s_comp, true, false, Fl, H, T, a.h1g, dy, w.d_fc2, true, 1);
    gelu_bwd<<<blocks(tf), 256, 0, s_comp>>>(a.h1, w_dh, w_dh2, tf);
    gemm(s_comp, false, true, T, H, Fl, w_dh2, w.fc1, w_dx1, false, 0);
    gemm(s_comp, true, false, H, Fl, T, a.ln2, w_dh2, w.d_fc1, true, 1);
    tp_allreduce(w_dx1, th, ncclBfloat16);
    layernorm_bwd<<<T, 256, 0, s_comp>>>(w_dx1, a.x_mid, w.ln2_g, a.mean2, a.rstd2, dy, w_dx2, w.d_ln2_g, w.d_ln2_b, H);
    // attention
    gemm(s_comp, false, true, T, Hl, H, w_dx2, w.o, w_ctxh, false, 0);
    gemm(s_comp, true, false, Hl, H, T, a.ctx, w_dx2, w.d_o, true, 1);
    permute_heads<<<blocks((size_t)T * Hl), 256, 0, s_comp>>>(w_ctxh, w_dq, B, S, hl, dh, Hl, 0, 1);  // dctx by head
    long long sq = (long long)S * dh, ss = (long long)S * S;
    gemm(s_comp, false, true, S, S, dh, w_dq, a.v, w_dp, false, 0, B * hl, sq, sq, ss);   // dP = dctx V^T
    gemm(s_comp, true, false, S, dh, S, a.p, w_dq, w_dv, false, 0, B * hl, ss, sq, sq);   // dV = P^T dctx
    softmax_bwd<<<B * hl * S, 128, 0, s_comp>>>(a.p, w_dp, S, scale);
    gemm(s_comp, false, false, S, dh, S, w_dp, a.k, w_dq, false, 0, B * hl, ss, sq, sq);  // dQ = dS K
    gemm(s_comp, true, false, S, dh, S, w_dp, a.q, w_dk, false, 0, B * hl, ss, sq, sq);   // dK = dS^T Q
    bf16 *dqkv3[3] = { w_dq, w_dk, w_dv };
    for (int i = 0; i < 3; i++)
        permute_heads<<<blocks((size_t)T * Hl), 256, 0, s_comp>>>(dqkv3[i], w_dqkv, B, S, hl, dh, 3 * Hl, i * Hl, 0);
    gemm(s_comp, false, true, T, H, 3 * Hl, w_dqkv, w.qkv, w_dx1, false, 0);
    gemm(s_comp, true, false, H, 3 * Hl, T, a.ln1, w_dqkv, w.d_qkv, true, 1);
    tp_allreduce(w_dx1, th, ncclBfloat16);
    layernorm_bwd<<<T, 256, 0, s_comp>>>(w_dx1, a.x_in, w.ln1_g, a.mean1, a.rstd1, w_dx2, dx, w.d_ln1_g, w.d_ln1_b, H);
    CUDA_CHECK(cudaGetLastError());
}

static uint32_t rng = 12345;
static uint32_t next_rand()
{
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

// The data of one micro-batch: the same on every rank of a DP replica (the
// first stage reads tokens, the last its targets).
static void load_batch(int iter, int mb, int slot)
{
    std::vector<int> tok(T + 1);
    rng = 7919u * (uint32_t)(iter * opt.micro_batches + mb) + 104729u * (uint32_t)dp_idx + 1;
    for (int &t : tok)
        t = (int)(next_rand() % (uint32_t)opt.vocab);
    if (first_stage)
        CUDA_CHECK(cudaMemcpyAsync(tokens[slot], tok.data(), T * sizeof(int), cudaMemcpyHostToDevice, s_comp));
    if (last_stage)
        CUDA_CHECK(cudaMemcpyAsync(targets[slot], tok.data() + 1, T * sizeof(int), cudaMemcpyHostToDevice, s_comp));
}

static void forward(int iter, int mb)
{
    int slot = mb % slots;
    load_batch(iter, mb, slot);
    Acts *a = acts[slot].data();
    if (first_stage) {
        embed_fwd<<<T, 256, 0, s_comp>>>(tokens[slot], wte, wpe, a[0].x_in, S, H, tp_idx * Vl, Vl, tp_idx == 0);
        tp_allreduce(a[0].x_in, (size_t)T * H, ncclBfloat16);
    }
    for (int l = 0; l < L; l++)
        layer_fwd(l, a[l], l + 1 < L ? a[l + 1].x_in : x_last[slot]);
    if (!last_stage)
        return;
    layernorm_fwd<<<T, 256, 0, s_comp>>>(x_last[slot], lnf_g, lnf_b, lnf_out[slot], lnf_mean[slot], lnf_rstd[slot], H);
    gemm(s_comp, false, false, T, Vl, H, lnf_out[slot], w_lm, logits[slot], false, 0);
    ce_max<<<T, 256, 0, s_comp>>>(logits[slot], ce_mx, Vl);
    tp_allreduce(ce_mx, T, ncclFloat32, ncclMax);
    ce_stats<<<T, 256, 0, s_comp>>>(logits[slot], ce_mx, targets[slot], ce_sums, T, Vl, tp_idx * Vl);
    tp_allreduce(ce_sums, 2 * (size_t)T, ncclFloat32);
    ce_finish<<<T, 256, 0, s_comp>>>(logits[slot], ce_mx, ce_sums, targets[slot], loss, T, Vl, tp_idx * Vl,
                                     1.0f / ((float)T * opt.micro_batches));
    CUDA_CHECK(cudaGetLastError());
}

// Reduce a bucket's gradients over DP on the DP stream once they are final.
static void reduce_bucket(Bucket &bk)
{
    if (dp == 1)
        return;
    CUDA_CHECK(cudaEventRecord(bk.ready, s_comp));
    CUDA_CHECK(cudaStreamWaitEvent(s_dp, bk.ready, 0));
    if (opt.zero1)
        NCCL_CHECK(ncclReduceScatter(bk.grad, bk.grad + bk.shard * dp_idx, bk.shard, ncclFloat32, ncclSum, dp_comm, s_dp));
    else
        NCCL_CHECK(ncclAllReduce(bk.grad, bk.grad, bk.n, ncclFloat32, ncclSum, dp_comm, s_dp));
}

// dy of the stage output arrives in gout (or comes from the loss); the
// stage input's gradient is left in gin.
static void backward(int mb, bool last_mb)
{
    int slot = mb % slots;
    Acts *a = acts[slot].data();
    size_t th = (size_t)T * H;
    int layer_bucket0 = first_stage ? 1 : 0;
    if (last_stage) {
        gemm(s_comp, false, true, T, H, Vl, logits[slot], w_lm, w_dx1, false, 0);
        gemm(s_comp, true, false, H, Vl, T, lnf_out[slot], logits[slot], d_lm, true, 1);
        tp_allreduce(w_dx1, th, ncclBfloat16);
        layernorm_bwd<<<T, 256, 0, s_comp>>>(w_dx1, x_last[slot], lnf_g, lnf_mean[slot], lnf_rstd[slot], nullptr,
                                             gout, d_lnf_g, d_lnf_b, H);
        if (last_mb)
            reduce_bucket(*head_bucket);
    }
    // layer l writes its input's gradient to gin (even l) or w_attn (odd),
    // so that layer 0's lands in gin and no layer reads what it writes
    const bf16 *dy = gout;
    for (int l = L - 1; l >= 0; l--) {
        bf16 *dx = l % 2 == 0 ? gin : w_attn;
        layer_bwd(l, a[l], dy, dx);
        if (last_mb)
            reduce_bucket(buckets[layer_bucket0 + l]);
        dy = dx;
    }
    if (first_stage) {
        embed_bwd<<<T, 256, 0, s_comp>>>(tokens[slot], gin, d_wte, d_wpe, S, H, tp_idx * Vl, Vl);
        CUDA_CHECK(cudaGetLastError());
        if (last_mb)
            reduce_bucket(*emb_bucket);
    }
}

// ---------------------------------------------------------------- the iteration

static void optimizer_step(int step)
{
    if (dp > 1) {  // the DP stream's reductions end before the update
        CUDA_CHECK(cudaEventRecord(ev_dp_done, s_dp));
        CUDA_CHECK(cudaStreamWaitEvent(s_comp, ev_dp_done, 0));
    }
    CUDA_CHECK(cudaMemsetAsync(norm2, 0, sizeof(float), s_comp));
    float gscale = 1.0f / dp;
    for (Bucket &bk : buckets) {
        float *g = bk.grad + (opt.zero1 ? bk.shard * dp_idx : 0);
        sum_squares<<<std::min<unsigned>(blocks(bk.shard), 1024), 256, 0, s_comp>>>(g, bk.shard, gscale, norm2);
    }
    // Global gradient norm: over the model-parallel group (or everything,
    // when the optimizer state is sharded over DP too).
    if (opt.zero1 && world > 1)
        NCCL_CHECK(ncclAllReduce(norm2, norm2, 1, ncclFloat32, ncclSum, world_comm, s_comp));
    else if (!opt.zero1 && opt.tp * opt.pp > 1)
        NCCL_CHECK(ncclAllReduce(norm2, norm2, 1, ncclFloat32, ncclSum, mp_comm, s_comp));
    for (Bucket &bk : buckets) {
        size_t first = opt.zero1 ? bk.shard * dp_idx : 0;
        adam<<<blocks(bk.shard), 256, 0, s_comp>>>(bk.master, bk.grad + first, bk.m, bk.v, bk.w + first, bk.shard,
                                                   opt.lr, step, gscale, norm2, opt.clip);
    }
    CUDA_CHECK(cudaGetLastError());
    if (opt.zero1 && dp > 1) {  // everyone needs every updated parameter
        CUDA_CHECK(cudaEventRecord(ev_updated, s_comp));
        CUDA_CHECK(cudaStreamWaitEvent(s_dp, ev_updated, 0));
        for (Bucket &bk : buckets)
            NCCL_CHECK(ncclAllGather(bk.w + bk.shard * dp_idx, bk.w, bk.shard, ncclBfloat16, dp_comm, s_dp));
        CUDA_CHECK(cudaEventRecord(ev_dp_done, s_dp));
        CUDA_CHECK(cudaStreamWaitEvent(s_comp, ev_dp_done, 0));
    }
}

static void train_iteration(int iter)
{
    int M = opt.micro_batches;
    for (Bucket &bk : buckets)
        CUDA_CHECK(cudaMemsetAsync(bk.grad, 0, bk.n * sizeof(float), s_comp));
    if (last_stage)
        CUDA_CHECK(cudaMemsetAsync(loss, 0, sizeof(float), s_comp));
    int prev = pp_idx - 1, next = pp_idx + 1;
    int warm = std::min(opt.pp - pp_idx - 1, M), steady = M - warm, fwd = 0, bwd = 0;
    // 1F1B: warm-up forwards
    for (int i = 0; i < warm; i++) {
        p2p(nullptr, next, acts[fwd % slots][0].x_in, prev);              // recv forward
        forward(iter, fwd);
        p2p(x_last[fwd % slots], next, nullptr, prev);                    // send forward
        fwd++;
    }
    if (steady > 0)
        p2p(nullptr, next, acts[fwd % slots][0].x_in, prev);              // recv forward
    // steady state: one forward, one backward
    for (int i = 0; i < steady; i++) {
        forward(iter, fwd);
        p2p(x_last[fwd % slots], next, gout, next);                       // send forward, recv backward
        fwd++;
        backward(bwd, bwd == M - 1);
        bwd++;
        p2p(gin, prev, i == steady - 1 ? nullptr : acts[fwd % slots][0].x_in, prev);  // send backward (recv forward)
    }
    // cool-down backwards
    for (int i = 0; i < warm; i++) {
        p2p(nullptr, prev, gout, next);                                   // recv backward
        backward(bwd, bwd == M - 1);
        bwd++;
        p2p(gin, prev, nullptr, next);                                    // send backward
    }
    optimizer_step(iter + 1);
    // the loss, as a training loop logs it: averaged over DP, read on the host
    if (last_stage) {
        if (dp > 1)
            NCCL_CHECK(ncclAllReduce(loss, loss, 1, ncclFloat32, ncclAvg, dp_comm, s_comp));
        float h = 0;
        CUDA_CHECK(cudaMemcpyAsync(&h, loss, sizeof h, cudaMemcpyDeviceToHost, s_comp));
        CUDA_CHECK(cudaStreamSynchronize(s_comp));
        if (tp_idx == 0 && dp_idx == 0)
            printf("minigpt iter %d: loss %.4f\n", iter, h);
    }
    CUDA_CHECK(cudaStreamSynchronize(s_comp));
}

// ---------------------------------------------------------------- set-up

static void check_config()
{
    const char *err = nullptr;
    if (opt.dp == 0)
        opt.dp = world / (opt.tp * opt.pp);
    if (opt.tp * opt.pp * opt.dp != world)
        err = "TP x PP x DP must equal WORLD_SIZE";
    else if (opt.heads % opt.tp)
        err = "--tp must divide --heads";
    else if (opt.hidden % opt.heads)
        err = "--heads must divide --hidden";
    else if (opt.layers % opt.pp)
        err = "--pp must divide --layers";
    else if (opt.vocab % opt.tp)
        err = "--tp must divide --vocab";
    if (err) {
        if (rank == 0)
            fprintf(stderr, "minigpt: %s (WORLD_SIZE %d, tp %d, pp %d, dp %d, heads %d, hidden %d, layers %d, vocab %d)\n",
                    err, world, opt.tp, opt.pp, opt.dp, opt.heads, opt.hidden, opt.layers, opt.vocab);
        exit(2);
    }
}

static ncclComm_t split(int color, int key)
{
    ncclComm_t c;
    NCCL_CHECK(ncclCommSplit(world_comm, color, key, &c, nullptr));
    return c;
}

int main(int argc, char **argv)
{
    opt = parse(argc, argv);
    rank = env_int("RANK", 0);
    world = env_int("WORLD_SIZE", 1);
    check_config();
    dp = opt.dp;
    own_gemm = opt.own_gemm;
    host_work_k = opt.host_work;
    // Ranks: TP fastest, then DP, then PP (a stage's ranks are neighbours).
    tp_idx = rank % opt.tp;
    dp_idx = rank / opt.tp % dp;
    pp_idx = rank / (opt.tp * dp);
    first_stage = pp_idx == 0;
    last_stage = pp_idx == opt.pp - 1;
    S = opt.seq;
    B = opt.mbs;
    T = B * S;
    H = opt.hidden;
    hl = opt.heads / opt.tp;
    dh = H / opt.heads;
    Hl = hl * dh;
    Fl = 4 * H / opt.tp;
    Vl = opt.vocab / opt.tp;
    L = opt.layers / opt.pp;

    int ndev = 0;
    CUDA_CHECK(cudaGetDeviceCount(&ndev));
    CUDA_CHECK(cudaSetDevice(env_int("LOCAL_RANK", 0) % ndev));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s_comp, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s_dp, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&ev_dp_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&ev_updated, cudaEventDisableTiming));
    if (!own_gemm) {
        LT_CHECK(cublasLtCreate(&lt));
        CUDA_CHECK(cudaMalloc(&lt_workspace, LT_WORKSPACE));
    }

    ncclUniqueId id;
    share_unique_id(&id, rank, world);
    NCCL_CHECK(ncclCommInitRank(&world_comm, world, id, rank));
    tp_comm = split(pp_idx * dp + dp_idx, tp_idx);
    dp_comm = split(pp_idx * opt.tp + tp_idx, dp_idx);
    pp_comm = split(dp_idx * opt.tp + tp_idx, pp_idx);
    mp_comm = split(dp_idx, pp_idx * opt.tp + tp_idx);

    build_model();
    // DP replicas start from the same parameters (as DDP does at start-up)
    if (dp > 1)
        for (Bucket &bk : buckets)
            NCCL_CHECK(ncclBroadcast(bk.w, bk.w, bk.n, ncclBfloat16, 0, dp_comm, s_comp));
    CUDA_CHECK(cudaStreamSynchronize(s_comp));

    for (int it = 0; it < opt.iters; it++)
        train_iteration(it);

    for (ncclComm_t c : { mp_comm, pp_comm, dp_comm, tp_comm, world_comm })
        NCCL_CHECK(ncclCommDestroy(c));
    size_t params = 0;
    for (Bucket &bk : buckets)
        params += bk.used;
    printf("minigpt rank %d (tp %d/%d pp %d/%d dp %d/%d): %d iterations of %d micro-batches done, %zu parameters here\n",
           rank, tp_idx, opt.tp, pp_idx, opt.pp, dp_idx, dp, opt.iters, opt.micro_batches, params);
    return 0;
}

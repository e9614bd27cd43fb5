// minigpt: training iterations of a GPT with Megatron-LM's 3D parallelism
// and its knobs, in plain CUDA C + cuBLASLt + NCCL, issuing the GPU work
// Megatron-LM issues for the same configuration (the same GEMMs, kernels,
// collectives and memory), so that published Megatron runs can be re-created.
//
//   tensor parallel (TP)   Megatron's column-parallel QKV/fc1 and row-parallel
//                          out-proj/fc2: an all-reduce of [s*b, h] after each
//                          row-parallel GEMM, and of the input gradient of
//                          each column-parallel one in the backward pass
//                          (after both of its GEMMs, as Megatron-LM 2021 did);
//                          vocab-parallel embedding and cross-entropy
//   sequence parallel      (--sequence-parallel) LayerNorm, dropout and the
//                          residual on s/TP tokens: an all-gather before each
//                          column-parallel GEMM and a reduce-scatter after each
//                          row-parallel one in place of the all-reduces; the
//                          backward re-gathers the input of each column-
//                          parallel GEMM and reduce-scatters its input
//                          gradient on a stream of its own, overlapped with
//                          the GEMMs (Megatron-core's linear layer); the
//                          LayerNorm (and row-parallel bias) gradients are
//                          all-reduced over TP after the backward; with
//                          --tp-comm-overlap the forward's all-gathers and
//                          reduce-scatters and the row-parallel GEMMs'
//                          backward all-gathers run inside the GEMMs as a ring
//                          exchange (Transformer Engine's userbuffers)
//   pipeline parallel (PP) 1F1B (warm-up forwards, one-forward-one-backward,
//                          cool-down backwards) or, with
//                          --layers-per-virtual-stage, Megatron's interleaved
//                          1F1B over virtual stages; activations and gradients
//                          sent with grouped ncclSend/ncclRecv in Megatron's
//                          order; --scatter-gather sends 1/TP of each and
//                          all-gathers it over TP on arrival
//   data parallel (DP)     gradients in buckets (one per layer, or
//                          --bucket-mb MiB each in backward order as torch DDP
//                          makes them), scaled by 1/DP and all-reduced (or,
//                          with --zero1, reduce-scattered, the optimizer state
//                          sharded, the parameters all-gathered after the step)
//                          on a stream of their own as soon as the last
//                          micro-batch's backward has produced them (--ddp
//                          torch), or all at once after the backward (--ddp
//                          local, Megatron's local DDP); --overlap-param-gather
//                          leaves the parameters' all-gathers to the next
//                          forward (Megatron-core's distributed optimizer)
// Layers as Megatron's GPT: pre-LayerNorm, fused QKV with bias in the GEMM,
// baddbmm/bmm attention on strided views of the [s, b, heads, 3 x dh] QKV
// tensor, a fused causal scaled softmax, attention dropout, one permute of
// the context, fused bias-dropout-add after each row-parallel GEMM and fused
// bias-GeLU after fc1 (--bias, --hidden-dropout, --attention-dropout), or
// one fused flash-attention kernel each way (--attention flash,
// flash_attention.cuh, as Transformer Engine's fused attention);
// activation recompute of whole layers (--recompute full: only each layer's
// input is kept and the layer's forward, collectives included, runs again in
// the backward) or of the core attention (--recompute selective). Tokens are
// ordered [s, b] as Megatron's tensors. The loss is Megatron's vocab-parallel
// cross-entropy, a kernel per PyTorch op of its unfused code (the logits'
// maximum, minus it, exp, sum, divide; the one-hot and scale in the
// backward). Then the optimizer as Megatron's mixed
// precision optimizer: fp16 gradients unscaled into fp32 with an overflow
// check read by the host (--fp16, --loss-scale), the gradient norm summed
// over the model-parallel group and read by the host to clip, Adam on fp32
// master weights. bf16 (the default) keeps
// gradients in fp32; fp16 keeps them in fp16 as Megatron-LM 2021 did.
//
// One rank per process, as torchrun starts them: RANK, WORLD_SIZE,
// LOCAL_RANK (the device), MASTER_ADDR and MASTER_PORT (rank 0 hands out the
// NCCL unique id there). Under maya: maya run -g h100x8 minigpt --tp 2 --pp 2
#include <algorithm>
#include <cmath>
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <deque>
#include <string>
#include <vector>

#include "flash_attention.cuh"
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

enum Recompute { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL };

struct Options {
    int tp = 1, pp = 1, dp = 0;  // dp 0: WORLD_SIZE / (tp * pp)
    int micro_batches = 4, mbs = 2, seq = 128;
    int hidden = 256, heads = 8, layers = 4, vocab = 4096;
    int iters = 3;
    int host_work = 0;           // thousands of hash rounds before each GEMM
    int layers_per_virtual = 0;  // 0: no interleaving
    int recompute = RECOMPUTE_NONE;
    bool zero1 = false, own_gemm = false, fp16 = false, bias = false, tie = false;
    bool seq_par = false, scatter_gather = false, ddp_local = false, fp32_ce = false;
    bool comm_init_rank = false;  // sub-communicators by ncclCommInitRank, not ncclCommSplit
    bool flash = false;          // --attention flash: fused attention, no s x s scores in memory
    bool tp_overlap = false;     // --tp-comm-overlap: SP's all-gathers and reduce-scatters inside the GEMMs
    bool param_gather_overlap = false;  // --overlap-param-gather: ZeRO-1's all-gathers in the next forward
    float hidden_dropout = 0, attn_dropout = 0, loss_scale = 8192;
    double bucket_mb = 0;        // 0: one bucket per layer
    float lr = 3e-4f, clip = 1.0f;
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: minigpt [OPTIONS]\n"
        "Trains a GPT for a few iterations as Megatron-LM does: tensor (TP), pipeline (PP) and\n"
        "data (DP) parallelism, sequence parallelism, 1F1B or interleaved pipeline schedules over\n"
        "micro-batches with NCCL send/recv, DP gradient reduction overlapping the backward pass\n"
        "or after it, the distributed optimizer, activation recompute, dropout, fused biases,\n"
        "bf16 or fp16 with loss scaling.\n"
        "Run one process per rank (torchrun conventions: RANK, WORLD_SIZE, LOCAL_RANK,\n"
        "MASTER_ADDR, MASTER_PORT); WORLD_SIZE = TP x PP x DP. Under maya:\n"
        "    maya run -g h100x8 minigpt --tp 2 --pp 2        (DP 2)\n"
        "Model and batch (default):\n"
        "  --micro-batches N     micro-batches per iteration and pipeline (4)\n"
        "  --micro-batch-size N  sequences per micro-batch (2)\n"
        "  --seq N               sequence length in tokens (128)\n"
        "  --hidden N            model width (256); --heads divides it\n"
        "  --heads N             attention heads (8)\n"
        "  --layers N            transformer layers (4)\n"
        "  --vocab N             vocabulary size (4096)\n"
        "  --iters N             training iterations (3)\n"
        "  --bias                biases in the linear layers: QKV's in its GEMM, fused bias-GeLU\n"
        "                        after fc1, fused bias-dropout-add after out-proj and fc2\n"
        "  --hidden-dropout P    dropout on the embedding and each residual branch (0)\n"
        "  --attention-dropout P dropout on the attention probabilities (0)\n"
        "  --fp32-cross-entropy  the logits cast to fp32 for the cross-entropy, which keeps them\n"
        "                        (Megatron's default, unless --fp16-lm-cross-entropy)\n"
        "  --tie-embeddings      the output layer uses the word embedding (Megatron's GPT); with\n"
        "                        PP the last stage keeps a copy whose gradient is all-reduced\n"
        "                        with the first stage's\n"
        "  --fp16                fp16 weights, activations and gradients, loss scaling (default:\n"
        "                        bf16 weights and activations, fp32 gradients)\n"
        "  --loss-scale X        fp16's static loss scale (8192)\n"
        "  --attention unfused|flash  core attention (unfused): unfused runs Q K^T and P V as\n"
        "                        batched GEMMs around a causal softmax over s x s scores;\n"
        "                        flash runs one fused kernel each way (FlashAttention-2's\n"
        "                        algorithm on tensor cores, as Transformer Engine's fused\n"
        "                        attention does) and keeps only the row log-sum-exp; needs a\n"
        "                        head dim (--hidden / --heads) of 64 or 128 and --seq a multiple\n"
        "                        of 128\n"
        "  --recompute none|full|selective  activation recompute (none): full keeps each\n"
        "                        layer's input and runs its forward again in the backward;\n"
        "                        selective recomputes the core attention (QK^T, softmax,\n"
        "                        dropout, attention over V)\n"
        "Parallelism:\n"
        "  --tp N                tensor-parallel degree (1); divides --heads and --vocab\n"
        "  --pp N                pipeline stages (1); divides --layers\n"
        "  --dp N                data-parallel degree (WORLD_SIZE / (TP x PP))\n"
        "  --sequence-parallel   LayerNorm and dropout on s/TP tokens, all-gathers and\n"
        "                        reduce-scatters over TP in place of all-reduces (TP > 1)\n"
        "  --layers-per-virtual-stage N  interleaved 1F1B: each stage holds layers/(PP x N)\n"
        "                        chunks of N layers (needs PP > 1, PP dividing\n"
        "                        --micro-batches)\n"
        "  --scatter-gather      pipeline sends carry 1/TP of the activation, all-gathered over\n"
        "                        TP on arrival (not with --sequence-parallel)\n"
        "  --ddp torch|local     DP gradient reduction (torch): torch overlaps bucketed\n"
        "                        reductions with the backward; local reduces everything after\n"
        "                        the backward (one all-reduce, or a reduce-scatter per bucket)\n"
        "  --bucket-mb X         DP buckets of X MiB of gradients in backward order (default:\n"
        "                        one bucket per layer, one for the embedding, one for the head)\n"
        "  --tp-comm-overlap     with --sequence-parallel and an even --tp, the TP all-gathers\n"
        "                        and reduce-scatters run inside the GEMMs as Transformer\n"
        "                        Engine's ring exchange does: TP GEMMs of one rank's slice each,\n"
        "                        the slices (or partial sums) passed around the TP ring by\n"
        "                        send/recv between neighbours meanwhile (all-gathers before the\n"
        "                        QKV and fc1 GEMMs and the out-proj and fc2 input gradients,\n"
        "                        reduce-scatters after the out-proj and fc2 GEMMs); the backward\n"
        "                        of QKV and fc1 overlaps as without it\n"
        "  --overlap-param-gather  with --zero1 and --ddp torch, the parameters' all-gathers\n"
        "                        after the optimizer step wait for the next forward pass, as\n"
        "                        Megatron-core's: each bucket's is issued as the forward reaches\n"
        "                        the bucket before it, and the forward waits for it at its\n"
        "                        first use\n"
        "  --zero1               distributed optimizer: reduce-scatter gradients, shard the\n"
        "                        optimizer state over DP, all-gather the parameters\n"
        "Program:\n"
        "  --comm-init split|init-rank  the TP, DP, PP and other communicators split from the\n"
        "                        world's (default), or each made with ncclCommInitRank from an id\n"
        "                        its rank 0 made and shared over the world, as PyTorch's new_group\n"
        "  --gemm cublaslt|kernel  matrix multiplies with cuBLASLt (default) or this program's\n"
        "                        own CUDA kernel\n"
        "  --host-work N         before each matrix multiply, N thousand rounds of an integer\n"
        "                        hash on the CPU (0): a framework's per-op host overhead, for\n"
        "                        host-bound runs (1000 rounds take about 1 us on a 4 GHz core)\n"
        "  --help                this text\n"
        "Every rank prints one line when done; the last stage's first rank prints the loss of\n"
        "each iteration (under maya kernels do not run, so the value is not meaningful).\n");
}

static void bad_value(const char *opt, const char *want, const char *v)
{
    fprintf(stderr, "minigpt: %s expects %s, got \"%s\"\n", opt, want, v ? v : "");
    exit(2);
}

static int parse_int(const char *opt, const char *v)
{
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || x < 1 || x > (1 << 24))
        bad_value(opt, "a whole number from 1", v);
    return (int)x;
}

// A number in [lo, hi) (hi_open) or (lo, hi].
static double parse_num(const char *opt, const char *v, double lo, double hi, bool lo_open, const char *want)
{
    char *end;
    double x = v ? strtod(v, &end) : 0;
    if (!v || !*v || *end || !std::isfinite(x) || (lo_open ? x <= lo : x < lo) || (lo_open ? x > hi : x >= hi))
        bad_value(opt, want, v);
    return x;
}

static Options parse(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool flag = true;
        if (a == "--help") {
            usage(stdout);
            exit(0);
        } else if (a == "--zero1")
            o.zero1 = true;
        else if (a == "--fp16")
            o.fp16 = true;
        else if (a == "--bias")
            o.bias = true;
        else if (a == "--tie-embeddings")
            o.tie = true;
        else if (a == "--sequence-parallel")
            o.seq_par = true;
        else if (a == "--scatter-gather")
            o.scatter_gather = true;
        else if (a == "--fp32-cross-entropy")
            o.fp32_ce = true;
        else if (a == "--tp-comm-overlap")
            o.tp_overlap = true;
        else if (a == "--overlap-param-gather")
            o.param_gather_overlap = true;
        else
            flag = false;
        if (flag)
            continue;
        if (a == "--gemm") {
            if (!v || (strcmp(v, "cublaslt") && strcmp(v, "kernel")))
                bad_value(argv[i], "cublaslt or kernel", v);
            o.own_gemm = !strcmp(v, "kernel");
        } else if (a == "--comm-init") {
            if (!v || (strcmp(v, "split") && strcmp(v, "init-rank")))
                bad_value(argv[i], "split or init-rank", v);
            o.comm_init_rank = !strcmp(v, "init-rank");
        } else if (a == "--ddp") {
            if (!v || (strcmp(v, "torch") && strcmp(v, "local")))
                bad_value(argv[i], "torch or local", v);
            o.ddp_local = !strcmp(v, "local");
        } else if (a == "--attention") {
            if (!v || (strcmp(v, "unfused") && strcmp(v, "flash")))
                bad_value(argv[i], "unfused or flash", v);
            o.flash = !strcmp(v, "flash");
        } else if (a == "--recompute") {
            if (v && !strcmp(v, "none"))
                o.recompute = RECOMPUTE_NONE;
            else if (v && !strcmp(v, "full"))
                o.recompute = RECOMPUTE_FULL;
            else if (v && !strcmp(v, "selective"))
                o.recompute = RECOMPUTE_SELECTIVE;
            else
                bad_value(argv[i], "none, full or selective", v);
        } else if (a == "--hidden-dropout")
            o.hidden_dropout = (float)parse_num(argv[i], v, 0, 1, false, "a probability from 0 to below 1");
        else if (a == "--attention-dropout")
            o.attn_dropout = (float)parse_num(argv[i], v, 0, 1, false, "a probability from 0 to below 1");
        else if (a == "--loss-scale")
            o.loss_scale = (float)parse_num(argv[i], v, 0, 1e30, true, "a number above 0");
        else if (a == "--bucket-mb")
            o.bucket_mb = parse_num(argv[i], v, 0, 1 << 20, true, "a size in MiB above 0");
        else if (a == "--tp") o.tp = parse_int(argv[i], v);
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
        else if (a == "--layers-per-virtual-stage") o.layers_per_virtual = parse_int(argv[i], v);
        else {
            fprintf(stderr, "minigpt: unknown option \"%s\" (--help lists them)\n", argv[i]);
            exit(2);
        }
        i++;
    }
    return o;
}

// ---------------------------------------------------------------- kernels

// The two precisions: activations/weights E, gradients G.
struct Bf16 { typedef bf16 E; typedef float G; };
struct Fp16 { typedef __half E; typedef __half G; };
struct F32 { typedef float E; typedef float G; };  // --fp32-cross-entropy's logits

__device__ __forceinline__ float f(bf16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float f(__half x) { return __half2float(x); }
__device__ __forceinline__ float f(float x) { return x; }
template <class T> __device__ __forceinline__ T to(float x);
template <> __device__ __forceinline__ bf16 to<bf16>(float x) { return __float2bfloat16(x); }
template <> __device__ __forceinline__ __half to<__half>(float x) { return __float2half(x); }
template <> __device__ __forceinline__ float to<float>(float x) { return x; }

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

__device__ __forceinline__ uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// Dropout's random keep decision for element i: a counter-based generator
// (seed, index), as Philox is in PyTorch, so that a recompute draws the
// same mask.
__device__ __forceinline__ bool keep(uint32_t seed, size_t i, float p)
{
    uint32_t h = hash32(seed ^ hash32((uint32_t)i) ^ hash32((uint32_t)(i >> 32) + 0x9e3779b9u));
    return (h >> 8) * (1.0f / 16777216.0f) >= p;
}

// Elements a thread loads before it uses the first, as the fused kernels
// Megatron and PyTorch run do (16-byte vectors, or loops unrolled 4 to 8
// deep): a loop of one 2-byte load at a time keeps too few bytes in flight
// to stream from DRAM (docs/kernel-cost.md, "Bytes in flight"). Row loops
// take AHEAD elements a pass, blockDim apart; elementwise kernels give each
// block AHEAD x blockDim elements, each of a warp's loads contiguous.
#define AHEAD 8

// Element k of this thread's AHEAD in an elementwise kernel (launched on
// ew_blocks(n) blocks of EW_THREADS).
__device__ __forceinline__ size_t ew_index(int k)
{
    return ((size_t)blockIdx.x * AHEAD + k) * blockDim.x + threadIdx.x;
}

// Loaded ahead, as floats: this thread's AHEAD elements of x (0 past n).
template <class E> __device__ __forceinline__ void ew_load(const E *x, size_t n, float (&v)[AHEAD])
{
#pragma unroll
    for (int k = 0; k < AHEAD; k++) {
        size_t i = ew_index(k);
        v[k] = i < n ? f(x[i]) : 0.0f;
    }
}

// v += bias[i mod N] for this thread's AHEAD elements i (bias [N] per row of
// N, may be NULL).
template <class E> __device__ __forceinline__ void ew_add_bias(const E *bias, size_t n, int N, float (&v)[AHEAD])
{
#pragma unroll
    for (int k = 0; k < AHEAD; k++) {
        size_t i = ew_index(k);
        if (bias && i < n)
            v[k] += f(bias[i % N]);
    }
}

// ... and of a row loop's pass from j0, blockDim apart (pad past n).
template <class E> __device__ __forceinline__ void row_load(const E *r, int j0, int n, float pad, float (&v)[AHEAD])
{
#pragma unroll
    for (int k = 0; k < AHEAD; k++) {
        int j = j0 + k * blockDim.x;
        v[k] = j < n ? f(r[j]) : pad;
    }
}

// Parameters: uniform in [-scale, scale] from (seed, index), so that every
// rank holding the same parameter gets the same value; into the fp32 master
// copy and/or the 16-bit weights (either may be NULL).
template <class P>
__global__ void init_params(float *master, void *w_, size_t n, size_t first, uint32_t seed, float scale)
{
    typedef typename P::E E;
    E *w = (E *)w_;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t h = hash32(seed ^ hash32((uint32_t)(first + i)) ^ (uint32_t)((first + i) >> 32));
    float v = ((h >> 8) * (1.0f / 16777216.0f) * 2 - 1) * scale;
    if (master)
        master[i] = v;
    if (w)
        w[i] = to<E>(v);
}

template <class P> __global__ void fill(float *master, void *w_, size_t n, float v)
{
    typedef typename P::E E;
    E *w = (E *)w_;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        if (master)
            master[i] = v;
        if (w)
            w[i] = to<E>(v);
    }
}

// Vocab-parallel embedding: x[t] = wte[token - v0] if this rank holds the
// token's row, else 0 (the partial rows are all-reduced over TP).
template <class P> __global__ void embed_fwd(const int *tokens, const void *wte_, void *x_, int H, int v0, int vl)
{
    typedef typename P::E E;
    const E *wte = (const E *)wte_;
    E *x = (E *)x_;
    int t = blockIdx.x, tok = tokens[t] - v0;
    for (int i = threadIdx.x; i < H; i += blockDim.x)
        x[(size_t)t * H + i] = to<E>(tok >= 0 && tok < vl ? f(wte[(size_t)tok * H + i]) : 0.0f);
}

// x[t] += wpe[t / B] (token t is position t / B of sequence t % B).
template <class P> __global__ void embed_pos(void *x_, const void *wpe_, int B, int H)
{
    typedef typename P::E E;
    E *x = (E *)x_;
    const E *wpe = (const E *)wpe_;
    int t = blockIdx.x;
    for (int i = threadIdx.x; i < H; i += blockDim.x)
        x[(size_t)t * H + i] = to<E>(f(x[(size_t)t * H + i]) + f(wpe[(size_t)(t / B) * H + i]));
}

template <class P>
__global__ void embed_bwd(const int *tokens, const void *dx_, void *dwte_, void *dwpe_, int B, int H, int v0, int vl)
{
    typedef typename P::E E;
    typedef typename P::G G;
    const E *dx = (const E *)dx_;
    G *dwte = (G *)dwte_, *dwpe = (G *)dwpe_;
    int t = blockIdx.x, tok = tokens[t] - v0;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float g = f(dx[(size_t)t * H + i]);
        if (tok >= 0 && tok < vl)
            atomicAdd(&dwte[(size_t)tok * H + i], to<G>(g));
        atomicAdd(&dwpe[(size_t)(t / B) * H + i], to<G>(g));
    }
}

template <class P>
__global__ void layernorm_fwd(const void *x_, const void *g_, const void *b_, void *y_, float *mean, float *rstd, int H)
{
    typedef typename P::E E;
    const E *xr = (const E *)x_ + (size_t)blockIdx.x * H, *g = (const E *)g_, *bta = (const E *)b_;
    E *y = (E *)y_ + (size_t)blockIdx.x * H;
    float s = 0, ss = 0;
    for (int i0 = threadIdx.x; i0 < H; i0 += AHEAD * blockDim.x) {
        float v[AHEAD];
        row_load(xr, i0, H, 0.0f, v);
#pragma unroll
        for (int k = 0; k < AHEAD; k++) {
            s += v[k];
            ss += v[k] * v[k];
        }
    }
    s = block_sum(s);
    ss = block_sum(ss);
    float m = s / H, r = rsqrtf(fmaxf(ss / H - m * m, 0.0f) + 1e-5f);
    for (int i0 = threadIdx.x; i0 < H; i0 += AHEAD * blockDim.x) {
        float v[AHEAD];
        row_load(xr, i0, H, 0.0f, v);
#pragma unroll
        for (int k = 0; k < AHEAD; k++) {
            int i = i0 + k * blockDim.x;
            if (i < H)
                y[i] = to<E>((v[k] - m) * r * f(g[i]) + f(bta[i]));
        }
    }
    if (threadIdx.x == 0) {
        mean[blockIdx.x] = m;
        rstd[blockIdx.x] = r;
    }
}

// dx = LN backward of dy, plus res (the residual path's gradient, may be
// NULL); dg, db accumulate.
template <class P>
__global__ void layernorm_bwd(const void *dy_, const void *x_, const void *g_, const float *mean, const float *rstd,
                              const void *res_, void *dx_, void *dg_, void *db_, int H)
{
    typedef typename P::E E;
    typedef typename P::G G;
    const E *dy = (const E *)dy_, *x = (const E *)x_, *g = (const E *)g_, *res = (const E *)res_;
    E *dx = (E *)dx_;
    G *dg = (G *)dg_, *db = (G *)db_;
    size_t row = (size_t)blockIdx.x * H;
    float m = mean[blockIdx.x], r = rstd[blockIdx.x], s1 = 0, s2 = 0;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float xh = (f(x[row + i]) - m) * r, d = f(dy[row + i]) * f(g[i]);
        s1 += d;
        s2 += d * xh;
        atomicAdd(&dg[i], to<G>(f(dy[row + i]) * xh));
        atomicAdd(&db[i], to<G>(f(dy[row + i])));
    }
    s1 = block_sum(s1) / H;
    s2 = block_sum(s2) / H;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float xh = (f(x[row + i]) - m) * r, d = f(dy[row + i]) * f(g[i]);
        float v = r * (d - s1 - xh * s2) + (res ? f(res[row + i]) : 0.0f);
        dx[row + i] = to<E>(v);
    }
}

// Heads [B*hl, S, dh] <-> tokens [S*B, hl*dh] (the context's permute, and its
// backward).
template <class P> __global__ void permute_ctx(const void *src_, void *dst_, int B, int S, int hl, int dh, int to_heads)
{
    typedef typename P::E E;
    const E *src = (const E *)src_;
    E *dst = (E *)dst_;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, n = (size_t)B * S * hl * dh;
    if (i >= n)
        return;
    int d = i % dh, h = (i / dh) % hl;
    size_t t = i / ((size_t)dh * hl);  // token s * B + b
    int s = (int)(t / B), bb = (int)(t % B);
    size_t head = (((size_t)bb * hl + h) * S + s) * dh + d;
    if (to_heads)
        dst[head] = src[i];
    else
        dst[i] = src[head];
}

// dqkv [S*B, hl, 3, dh] from dq, dk, dv [B*hl, S, dh]: the backward of
// splitting the fused QKV output into its three views.
template <class P>
__global__ void qkv_cat(const void *dq_, const void *dk_, const void *dv_, void *dqkv_, int B, int S, int hl, int dh)
{
    typedef typename P::E E;
    const E *src[3] = { (const E *)dq_, (const E *)dk_, (const E *)dv_ };
    E *dqkv = (E *)dqkv_;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, n = (size_t)B * S * hl * 3 * dh;
    if (i >= n)
        return;
    int d = i % dh, j = (i / dh) % 3, h = (i / (3 * (size_t)dh)) % hl;
    size_t t = i / (3 * (size_t)dh * hl);
    int s = (int)(t / B), bb = (int)(t % B);
    dqkv[i] = src[j][(((size_t)bb * hl + h) * S + s) * dh + d];
}

// Causal softmax of each row of [rows, S] scores, in place, scaled (row r is
// query position r % S).
template <class P> __global__ void softmax_causal(void *p_, int S, float scale)
{
    typedef typename P::E E;
    size_t row = blockIdx.x;
    int q = (int)(row % S);
    E *r = (E *)p_ + row * S;
    float mx = -INFINITY;
    for (int j0 = threadIdx.x; j0 <= q; j0 += AHEAD * blockDim.x) {
        float v[AHEAD];
        row_load(r, j0, q + 1, -INFINITY, v);
#pragma unroll
        for (int k = 0; k < AHEAD; k++)
            mx = fmaxf(mx, v[k] * scale);
    }
    mx = block_max(mx);
    float s = 0;
    for (int j0 = threadIdx.x; j0 <= q; j0 += AHEAD * blockDim.x) {
        float v[AHEAD];
        row_load(r, j0, q + 1, -INFINITY, v);
#pragma unroll
        for (int k = 0; k < AHEAD; k++)
            s += __expf(v[k] * scale - mx);
    }
    s = block_sum(s);
    for (int j0 = threadIdx.x; j0 < S; j0 += AHEAD * blockDim.x) {
        float v[AHEAD];
        row_load(r, j0, q + 1, 0.0f, v);
#pragma unroll
        for (int k = 0; k < AHEAD; k++) {
            int j = j0 + k * blockDim.x;
            if (j < S)
                r[j] = to<E>(j <= q ? __expf(v[k] * scale - mx) / s : 0.0f);
        }
    }
}

// dS = P * (dP - sum(P * dP)) * scale, in place in dp.
template <class P> __global__ void softmax_bwd(const void *p_, void *dp_, int S, float scale)
{
    typedef typename P::E E;
    const E *p = (const E *)p_;
    E *dp = (E *)dp_;
    size_t row = (size_t)blockIdx.x * S;
    float s = 0;
    for (int j0 = threadIdx.x; j0 < S; j0 += AHEAD * blockDim.x) {
        float a[AHEAD], b[AHEAD];
        row_load(p + row, j0, S, 0.0f, a);
        row_load(dp + row, j0, S, 0.0f, b);
#pragma unroll
        for (int k = 0; k < AHEAD; k++)
            s += a[k] * b[k];
    }
    s = block_sum(s);
    for (int j0 = threadIdx.x; j0 < S; j0 += AHEAD * blockDim.x) {
        float a[AHEAD], b[AHEAD];
        row_load(p + row, j0, S, 0.0f, a);
        row_load(dp + row, j0, S, 0.0f, b);
#pragma unroll
        for (int k = 0; k < AHEAD; k++) {
            int j = j0 + k * blockDim.x;
            if (j < S)
                dp[row + j] = to<E>(a[k] * (b[k] - s) * scale);
        }
    }
}

// y = dropout(x) with probability p; the kept elements scaled by 1/(1-p);
// the mask (one byte per element, as PyTorch keeps it) for the backward.
template <class P>
__global__ void dropout_fwd(const void *x_, void *y_, uint8_t *mask, size_t n, float p, uint32_t seed)
{
    typedef typename P::E E;
    const E *x = (const E *)x_;
    E *y = (E *)y_;
    float v[AHEAD];
    ew_load(x, n, v);
#pragma unroll
    for (int k = 0; k < AHEAD; k++) {
        size_t i = ew_index(k);
        if (i < n) {
            bool kp = keep(seed, i, p);
            mask[i] = kp;
            y[i] = to<E>(kp ? v[k] / (1 - p) : 0.0f);
        }
    }
}

// dx = dy * mask / (1-p) (may be in place).
template <class P> __global__ void dropout_bwd(const void *dy_, const uint8_t *mask, void *dx_, size_t n, float p)
{
    typedef typename P::E E;
    const E *dy = (const E *)dy_;
    E *dx = (E *)dx_;
    float v[AHEAD];
    uint8_t m[AHEAD];
    ew_load(dy, n, v);
#pragma unroll
    for (int k = 0; k < AHEAD; k++) {
        size_t i = ew_index(k);
        m[k] = i < n ? mask[i] : 0;
    }
#pragma unroll
    for (int k = 0; k < AHEAD; k++) {
        size_t i = ew_index(k);
        if (i < n)
            dx[i] = to<E>(m[k] ? v[k] / (1 - p) : 0.0f);
    }
}

// out = res + dropout(x + bias) (bias [N] per row of N, may be NULL; mask
// NULL when p is 0): Megatron's fused bias-dropout-add.
template <class P>
__global__ void bias_dropout_add(const void *x_, const void *bias_, const void *res_, void *out_, uint8_t *mask,
                                 size_t n, int N, float p, uint32_t seed)
{
    typedef typename P::E E;
    const E *x = (const E *)x_, *bias = (const E *)bias_, *res = (const E *)res_;
    E *out = (E *)out_;
    float v[AHEAD], rv[AHEAD];
    ew_load(x, n, v);
    ew_add_bias(bias, n, N, v);
    ew_load(res, n, rv);
#pragma unroll
    for (int k = 0; k < AHEAD; k++) {
        size_t i = ew_index(k);
        if (i >= n)
            continue;
        if (mask) {
            bool kp = keep(seed, i, p);
            mask[i] = kp;
            v[k] = kp ? v[k] / (1 - p) : 0.0f;
        }
        out[i] = to<E>(rv[k] + v[k]);
    }
}

template <class P> __global__ void add(const void *a_, const void *c_, void *out_, size_t n)
{
    typedef typename P::E E;
    const E *a = (const E *)a_, *c = (const E *)c_;
    E *out = (E *)out_;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = to<E>(f(a[i]) + f(c[i]));
}

__device__ __forceinline__ float gelu(float x)
{
    return 0.5f * x * (1 + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

// y = gelu(x + bias) (bias [N] per row of N, may be NULL): Megatron's fused
// bias-GeLU.
template <class P> __global__ void gelu_fwd(const void *x_, const void *bias_, void *y_, size_t n, int N)
{
    typedef typename P::E E;
    const E *x = (const E *)x_, *bias = (const E *)bias_;
    E *y = (E *)y_;
    float v[AHEAD];
    ew_load(x, n, v);
    ew_add_bias(bias, n, N, v);
#pragma unroll
    for (int k = 0; k < AHEAD; k++) {
        size_t i = ew_index(k);
        if (i < n)
            y[i] = to<E>(gelu(v[k]));
    }
}

template <class P>
__global__ void gelu_bwd(const void *x_, const void *bias_, const void *dy_, void *dx_, size_t n, int N)
{
    typedef typename P::E E;
    const E *x = (const E *)x_, *bias = (const E *)bias_, *dy = (const E *)dy_;
    E *dx = (E *)dx_;
    float xv[AHEAD], g[AHEAD];
    ew_load(x, n, xv);
    ew_add_bias(bias, n, N, xv);
    ew_load(dy, n, g);
#pragma unroll
    for (int k = 0; k < AHEAD; k++) {
        size_t i = ew_index(k);
        if (i >= n)
            continue;
        float v = xv[k], u = 0.7978845608f * (v + 0.044715f * v * v * v), th = tanhf(u);
        float d = 0.5f * (1 + th) + 0.5f * v * (1 - th * th) * 0.7978845608f * (1 + 3 * 0.044715f * v * v);
        dx[i] = to<E>(g[k] * d);
    }
}

// db[c] += sum over rows of dy[r, c] ([rows, N]): a bias's gradient, as
// PyTorch's column sum spreads it over the GPU: blocks of 32 columns x 8
// row lanes, BIAS_GRAD_SPLIT of them down the rows (gridDim.y, every
// 8 x BIAS_GRAD_SPLIT-th row each), each adding its part atomically. (One
// block per 32 columns left most SMs idle and each thread a loop of one
// load at a time: 48 blocks for 1,536 columns.)
#define BIAS_GRAD_SPLIT 32
template <class P> __global__ void bias_grad(const void *dy_, void *db_, int rows, int N)
{
    typedef typename P::E E;
    typedef typename P::G G;
    __shared__ float part[8][33];
    const E *dy = (const E *)dy_;
    G *db = (G *)db_;
    int c = blockIdx.x * 32 + threadIdx.x, stride = 8 * gridDim.y;
    float s = 0;
    if (c < N)
        for (int q = blockIdx.y * 8 + threadIdx.y; q < rows; q += AHEAD * stride) {
            float v[AHEAD];
#pragma unroll
            for (int k = 0; k < AHEAD; k++) {
                int r = q + k * stride;
                v[k] = r < rows ? f(dy[(size_t)r * N + c]) : 0.0f;
            }
#pragma unroll
            for (int k = 0; k < AHEAD; k++)
                s += v[k];
        }
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < N) {
        for (int k = 1; k < 8; k++)
            s += part[k][threadIdx.x];
        atomicAdd(&db[c], to<G>(s));
    }
}

// g *= s (the 1/DP average before a DP reduction).
template <class P> __global__ void scale_grads(void *g_, size_t n, float s)
{
    typedef typename P::G G;
    G *g = (G *)g_;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        g[i] = to<G>(f(g[i]) * s);
}

// dst = src, converted (--fp32-cross-entropy: the logits to fp32, their
// gradient back).
template <class A, class B> __global__ void convert(const A *src, B *dst, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = to<B>(f(src[i]));
}

// Vocab-parallel cross-entropy, in three steps around TP all-reduces.
template <class P> __global__ void ce_max(const void *logits_, float *mx, int vl)
{
    typedef typename P::E E;
    const E *r = (const E *)logits_ + (size_t)blockIdx.x * vl;
    float m = -INFINITY;
    for (int j0 = threadIdx.x; j0 < vl; j0 += AHEAD * blockDim.x) {
        float v[AHEAD];
        row_load(r, j0, vl, -INFINITY, v);
#pragma unroll
        for (int k = 0; k < AHEAD; k++)
            m = fmaxf(m, v[k]);
    }
    m = block_max(m);
    if (threadIdx.x == 0)
        mx[blockIdx.x] = m;
}

// The rest of Megatron's vocab-parallel cross-entropy, one pass over the
// logits per PyTorch op as its unfused code (tensor_parallel/cross_entropy.py)
// runs them, in place: subtract the row's maximum (and take the target's
// logit, 0 where another rank holds it, into stats[T + t]), exp, sum the row
// (stats[t]), divide by the sum (the loss from the sums); in the backward,
// the target's 1 off and the gradient's scale.
template <class P>
__global__ void ce_sub(void *logits_, const float *mx, const int *targets, float *stats, int T, int vl, int v0)
{
    typedef typename P::E E;
    int t = blockIdx.x, k = targets[t] - v0;
    E *r = (E *)logits_ + (size_t)t * vl;
    float m = mx[t];
    for (int j0 = threadIdx.x; j0 < vl; j0 += AHEAD * blockDim.x) {
        float v[AHEAD];
        row_load(r, j0, vl, 0.0f, v);
#pragma unroll
        for (int k = 0; k < AHEAD; k++) {
            int j = j0 + k * blockDim.x;
            if (j < vl)
                r[j] = to<E>(v[k] - m);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0)
        stats[T + t] = k >= 0 && k < vl ? f(r[k]) : 0.0f;
}

template <class P> __global__ void ce_exp(void *logits_, size_t n)
{
    typedef typename P::E E;
    E *r = (E *)logits_;
    float v[AHEAD];
    ew_load(r, n, v);
#pragma unroll
    for (int k = 0; k < AHEAD; k++) {
        size_t i = ew_index(k);
        if (i < n)
            r[i] = to<E>(__expf(v[k]));
    }
}

template <class P> __global__ void ce_sum(const void *logits_, float *stats, int vl)
{
    typedef typename P::E E;
    const E *r = (const E *)logits_ + (size_t)blockIdx.x * vl;
    float s = 0;
    for (int j0 = threadIdx.x; j0 < vl; j0 += AHEAD * blockDim.x) {
        float v[AHEAD];
        row_load(r, j0, vl, 0.0f, v);
#pragma unroll
        for (int k = 0; k < AHEAD; k++)
            s += v[k];
    }
    s = block_sum(s);
    if (threadIdx.x == 0)
        stats[blockIdx.x] = s;
}

// softmax = exp / sum; loss += lscale * (log sum - target's logit)
template <class P> __global__ void ce_div(void *logits_, const float *stats, float *loss, int T, int vl, float lscale)
{
    typedef typename P::E E;
    int t = blockIdx.x;
    E *r = (E *)logits_ + (size_t)t * vl;
    float sum = stats[t];
    for (int j0 = threadIdx.x; j0 < vl; j0 += AHEAD * blockDim.x) {
        float v[AHEAD];
        row_load(r, j0, vl, 0.0f, v);
#pragma unroll
        for (int k = 0; k < AHEAD; k++) {
            int j = j0 + k * blockDim.x;
            if (j < vl)
                r[j] = to<E>(v[k] / sum);
        }
    }
    if (threadIdx.x == 0)
        atomicAdd(loss, lscale * (logf(stats[t]) - stats[T + t]));
}

// dlogits = (softmax - one-hot(target)) * gscale (gscale carries fp16's loss scale)
template <class P> __global__ void ce_grad(void *logits_, const int *targets, int vl, int v0, float gscale)
{
    typedef typename P::E E;
    int t = blockIdx.x, k = targets[t] - v0;
    E *r = (E *)logits_ + (size_t)t * vl;
    for (int j0 = threadIdx.x; j0 < vl; j0 += AHEAD * blockDim.x) {
        float v[AHEAD];
        row_load(r, j0, vl, 0.0f, v);
#pragma unroll
        for (int a = 0; a < AHEAD; a++) {
            int j = j0 + a * blockDim.x;
            if (j < vl)
                r[j] = to<E>((v[a] - (j == k ? 1.0f : 0.0f)) * gscale);
        }
    }
}

// fp16: main = grad * inv_scale in fp32, flagging a non-finite value
// (Megatron copies the fp16 gradients to fp32 and unscales them, checking
// for overflow).
__global__ void unscale_grads(const __half *g, float *main, size_t n, float inv_scale, float *found_inf)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = __half2float(g[i]) * inv_scale;
    main[i] = v;
    if (!isfinite(v))
        *found_inf = 1.0f;
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

// Adam with weight decay, gradients scaled by gscale (the clipping
// coefficient); the updated fp32 master weight is copied into the 16-bit
// model weight.
template <class P>
__global__ void adam(float *master, const float *grad, float *m, float *v, void *w_, size_t n, float lr, int step,
                     float gscale)
{
    typedef typename P::E E;
    E *w = (E *)w_;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float g = grad[i] * gscale;
    m[i] = 0.9f * m[i] + 0.1f * g;
    v[i] = 0.95f * v[i] + 0.05f * g * g;
    float mh = m[i] / (1 - powf(0.9f, (float)step)), vh = v[i] / (1 - powf(0.95f, (float)step));
    master[i] -= lr * (mh / (sqrtf(vh) + 1e-8f) + 0.01f * master[i]);
    w[i] = to<E>(master[i]);
}

// The fallback GEMM (--gemm kernel): Y[M,N] = alpha op(X)[M,K] op(W)[K,N]
// (+ bias[N]) (+ beta Y), row-major with leading dimensions, batched;
// 16x16 tiles.
template <class TE, class TO>
__global__ void gemm_kernel(int tx, int tw, int M, int N, int K, const TE *X, int ldx, const TE *W, int ldw, TO *Y,
                            int ldy, float alpha, float beta, long long sx, long long sw, long long sy, const TO *bias)
{
    __shared__ float xs[16][17], ws[16][17];
    X += blockIdx.z * sx;
    W += blockIdx.z * sw;
    Y += blockIdx.z * sy;
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0;
    for (int k0 = 0; k0 < K; k0 += 16) {
        int kx = k0 + threadIdx.x, kw = k0 + threadIdx.y;
        xs[threadIdx.y][threadIdx.x] = row < M && kx < K ? f(tx ? X[(size_t)kx * ldx + row] : X[(size_t)row * ldx + kx]) : 0;
        ws[threadIdx.y][threadIdx.x] = col < N && kw < K ? f(tw ? W[(size_t)col * ldw + kw] : W[(size_t)kw * ldw + col]) : 0;
        __syncthreads();
        for (int k = 0; k < 16; k++)
            acc += xs[threadIdx.y][k] * ws[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        size_t o = (size_t)row * ldy + col;
        float prev = beta != 0 ? f(Y[o]) : 0.0f;
        Y[o] = to<TO>(alpha * acc + (bias ? f(bias[col]) : 0.0f) + beta * prev);
    }
}

// ---------------------------------------------------------------- state

static Options opt;
static int rank, world, tp_idx, pp_idx, dp_idx, dp;
static int T, Tl, H, Hl, hl, dh, Fl, Vl, S, B;  // tokens per micro-batch (Tl: this rank's, s/TP with SP), sizes per TP rank
static bool fp16, sp;
static size_t gsz;                    // bytes of a gradient element (4 with bf16, 2 with fp16)
static cudaDataType_t cu_e, cu_g;     // activations/weights, gradients
static ncclDataType_t nc_e, nc_g;
static ncclComm_t world_comm, tp_comm, pp_comm, dp_comm, mp_comm, emb_comm;
static ncclComm_t tp_prev_comm, tp_next_comm;  // --tp-comm-overlap: this rank and its previous, next TP rank
static int tp_prev_peer, tp_next_peer;         // ... the neighbour's rank there
static cudaStream_t s_comp, s_dp, s_tp;
static cudaEvent_t ev_dp_done, ev_updated, ev_to_tp, ev_from_tp;

// A kernel launch on the compute stream, for the run's precision.
#define LAUNCH(k, grid, block, ...)                                                       \
    do {                                                                                  \
        if (fp16)                                                                         \
            k<Fp16><<<(grid), (block), 0, s_comp>>>(__VA_ARGS__);                         \
        else                                                                              \
            k<Bf16><<<(grid), (block), 0, s_comp>>>(__VA_ARGS__);                         \
    } while (0)

// The cross-entropy's kernels, on the logits' type (fp32 with
// --fp32-cross-entropy).
#define LAUNCH_CE(k, grid, block, ...)                                                    \
    do {                                                                                  \
        if (opt.fp32_ce)                                                                  \
            k<F32><<<(grid), (block), 0, s_comp>>>(__VA_ARGS__);                          \
        else                                                                              \
            LAUNCH(k, grid, block, __VA_ARGS__);                                          \
    } while (0)

static unsigned blocks(size_t n, unsigned per = 256) { return (unsigned)((n + per - 1) / per); }

// Blocks of EW_THREADS for an elementwise kernel of n elements, AHEAD each
// thread (ew_index).
#define EW_THREADS 256
static unsigned ew_blocks(size_t n) { return blocks(n, EW_THREADS * AHEAD); }

template <class T> static T *dalloc(size_t n)
{
    T *p;
    CUDA_CHECK(cudaMalloc(&p, (n ? n : 1) * sizeof(T)));
    return p;
}

// 16-bit activations and weights (bf16 or fp16), gradients (fp32 or fp16).
static void *ealloc(size_t n) { return dalloc<uint16_t>(n); }
static void *eoff(const void *p, size_t n) { return (uint16_t *)p + n; }
static void *goff(const void *p, size_t n) { return (char *)p + n * gsz; }

// ---------------------------------------------------------------- GEMM

static bool own_gemm;
static cublasLtHandle_t lt;
static void *lt_workspace;
static const size_t LT_WORKSPACE = 32u << 20;

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

// One matrix multiply: Y[M,N] = alpha op(X)[M,K] op(W)[K,N] (+ bias) + beta Y,
// row-major with leading dimensions ldx, ldw, ldy; tx/tw: X stored [K,M],
// W stored [N,K]; batch matrices strided by sx, sw, sy elements.
struct Gemm {
    bool tx = false, tw = false;
    int M = 0, N = 0, K = 0;
    const void *X = nullptr, *W = nullptr;
    void *Y = nullptr;
    int ldx = 0, ldw = 0, ldy = 0;
    bool y_grad = false;  // Y holds gradients (fp32 with bf16), else activations
    float alpha = 1, beta = 0;
    int batch = 1;
    long long sx = 0, sw = 0, sy = 0;
    const void *bias = nullptr;  // [N], in Y's type (cuBLASLt's BIAS epilogue)
};

static void gemm_run(const Gemm &g)
{
    host_work();
    int ldx = g.ldx ? g.ldx : (g.tx ? g.M : g.K), ldw = g.ldw ? g.ldw : (g.tw ? g.K : g.N), ldy = g.ldy ? g.ldy : g.N;
    if (own_gemm) {
        dim3 grid((g.N + 15) / 16, (g.M + 15) / 16, g.batch), block(16, 16);
        if (fp16)
            gemm_kernel<__half, __half><<<grid, block, 0, s_comp>>>(g.tx, g.tw, g.M, g.N, g.K, (const __half *)g.X,
                ldx, (const __half *)g.W, ldw, (__half *)g.Y, ldy, g.alpha, g.beta, g.sx, g.sw, g.sy,
                (const __half *)g.bias);
        else if (g.y_grad)
            gemm_kernel<bf16, float><<<grid, block, 0, s_comp>>>(g.tx, g.tw, g.M, g.N, g.K, (const bf16 *)g.X, ldx,
                (const bf16 *)g.W, ldw, (float *)g.Y, ldy, g.alpha, g.beta, g.sx, g.sw, g.sy, (const float *)g.bias);
        else
            gemm_kernel<bf16, bf16><<<grid, block, 0, s_comp>>>(g.tx, g.tw, g.M, g.N, g.K, (const bf16 *)g.X, ldx,
                (const bf16 *)g.W, ldw, (bf16 *)g.Y, ldy, g.alpha, g.beta, g.sx, g.sw, g.sy, (const bf16 *)g.bias);
        CUDA_CHECK(cudaGetLastError());
        return;
    }
    // Column-major view: Y^T [N,M] = op(W)^T [N,K] * op(X)^T [K,M].
    cublasLtMatmulDesc_t op;
    LT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = g.tw ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.tx ? CUBLAS_OP_T : CUBLAS_OP_N;
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (g.bias) {
        cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
        LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
        LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof g.bias));
    }
    cublasLtMatrixLayout_t la, lb, lc;
    cudaDataType_t yt = g.y_grad ? cu_g : cu_e;
    LT_CHECK(cublasLtMatrixLayoutCreate(&la, cu_e, g.tw ? g.K : g.N, g.tw ? g.N : g.K, ldw));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lb, cu_e, g.tx ? g.M : g.K, g.tx ? g.K : g.M, ldx));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lc, yt, g.N, g.M, ldy));
    if (g.batch > 1) {
        cublasLtMatrixLayout_t ls[3] = { la, lb, lc };
        long long strides[3] = { g.sw, g.sx, g.sy };
        for (int i = 0; i < 3; i++) {
            LT_CHECK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &g.batch,
                                                      sizeof g.batch));
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
        fprintf(stderr, "minigpt: cuBLASLt has no algorithm for a %dx%dx%d GEMM\n", g.M, g.N, g.K);
        exit(1);
    }
    LT_CHECK(cublasLtMatmul(lt, op, &g.alpha, g.W, la, g.X, lb, &g.beta, g.Y, lc, g.Y, lc, &heur.algo, lt_workspace,
                            LT_WORKSPACE, s_comp));
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
}

// A dense multiply of contiguous matrices; y_grad: Y is a gradient,
// accumulated (beta 1).
static void mm(bool tx, bool tw, int M, int N, int K, const void *X, const void *W, void *Y, bool y_grad = false,
               const void *bias = nullptr)
{
    Gemm g;
    g.tx = tx, g.tw = tw, g.M = M, g.N = N, g.K = K, g.X = X, g.W = W, g.Y = Y;
    g.y_grad = y_grad, g.beta = y_grad ? 1.0f : 0.0f, g.bias = bias;
    gemm_run(g);
}

// ---------------------------------------------------------------- model state

// The parameters live in one flat buffer per rank (weights w, gradients g),
// grouped by chunk (virtual stage) and, inside a chunk, in the order the
// backward pass finishes them: head, layers last to first, embedding. A DP
// bucket is a range of it; its shard (the whole bucket without --zero1) has
// the optimizer state.
struct Bucket {
    size_t off = 0, n = 0;  // range in the flat buffers (elements; n a multiple of 64 x DP)
    size_t shard = 0;       // elements this DP rank updates
    size_t st = 0;          // offset of the shard in the optimizer state
    bool issued = false;    // reduction issued this iteration
    cudaEvent_t ready;
    cudaEvent_t gathered;   // --overlap-param-gather: its parameters' all-gather done
};

struct LayerW {             // weights; the gradient of each is at the same offset in g
    size_t ln1_g, ln1_b, ln2_g, ln2_b, b_o, b_fc2;  // replicated over TP (all-reduced under SP)
    size_t qkv, b_qkv, o, fc1, b_fc1, fc2;
    size_t repl, repl_n;    // the replicated ones as one span
};

struct Chunk {
    int vstage;             // virtual stage: chunk c of pipeline rank p is c * PP + p
    int layer0, nl;         // its layers
    bool first, last;       // holds the embedding / the head
    size_t off = 0, n = 0;  // range in the flat buffers
    std::vector<size_t> part_end;  // end of the head part, of each layer (last to first), of the embedding
    std::vector<LayerW> lw;        // [layer in chunk]
    size_t wte = 0, wpe = 0, lnf_g = 0, lnf_b = 0, w_lm = 0;
    std::vector<Bucket> buckets;
    std::vector<std::pair<size_t, size_t>> ones;  // LayerNorm gains (offset, n): start at 1
    int bwd_done = 0;       // backward passes this iteration
};

static void *w_all, *g_all;           // flat weights, gradients
static size_t n_all, n_state;         // elements of the flat buffers, of the optimizer state
static float *master, *adam_m, *adam_v, *main_grad;  // optimizer state (main_grad: fp16's fp32 gradients)
static std::vector<Chunk> chunks;
static size_t params_here;            // parameters (without padding)
static float *ce_mx, *ce_sums, *loss, *norm2, *found_inf;

static void *W(size_t off) { return eoff(w_all, off); }
static void *G(size_t off) { return goff(g_all, off); }

// What one layer keeps of one micro-batch for its backward; the fields that
// are not kept (recompute) point into the shared work set.
struct Acts {
    void *x_in, *ln1, *qkv, *p, *pd, *ctx, *x_mid, *ln2, *h1, *h1g;
    uint8_t *mask_p, *mask1, *mask2;
    float *mean1, *rstd1, *mean2, *rstd2;
    float *lse;             // --attention flash: each query's log-sum-exp [B*hl, S] (its only core tensor)
    uint32_t seed;          // dropout's, so that a recompute draws the same masks
};

// One micro-batch on one chunk.
struct MB {
    int chunk, mb = 0;
    std::vector<Acts> a;    // [layer in chunk]
    void *x_out;            // the chunk's output [Tl, H]
    int *tokens = nullptr, *targets = nullptr;
    void *emb = nullptr;    // first chunk: the embedding's [T, H] sum
    uint8_t *emb_mask = nullptr;
    void *lnf_out = nullptr, *logits = nullptr;  // logits: fp32 with --fp32-cross-entropy
    float *lnf_mean = nullptr, *lnf_rstd = nullptr;
};

static Acts wk;                              // the work set: one layer's temporaries
static void *wk_ln_full, *wk_g_full, *wk_out, *wk_out_s, *wk_ctx_h, *wk_xout, *wk_ctx;
static void *wk_logits;  // --fp32-cross-entropy: the 16-bit logits (forward) and their gradient (backward)
static void *wk_da, *wk_dh, *wk_dh2, *wk_dx_full, *wk_dx_s, *wk_dx2, *wk_dctx, *wk_dctx_h, *wk_dp, *wk_dq, *wk_dk,
    *wk_dv, *wk_dqkv, *wk_chain[2], *wk_head_dy, *wk_recv[2], *wk_repl;
static float *wk_dsum, *wk_dq_acc;  // --attention flash's backward: rowsum(dO * O), dQ in fp32
static void *wk_rs;                 // --tp-comm-overlap: gemm_rs's products and partial sums, [4, Tl, H]
static std::vector<std::vector<MB *>> mb_free;  // [chunk] sets no micro-batch holds
static std::vector<void *> gbuf_free;           // [Tl, H] gradient buffers for the pipeline


// A layer's tensors but its input, in two groups: the core attention's
// probabilities (and dropout's copy and mask of them), and the rest.
static void alloc_core(Acts &a)
{
    if (opt.flash) {
        a.lse = dalloc<float>((size_t)B * hl * S);
        return;
    }
    size_t probs = (size_t)B * hl * S * S;
    a.p = ealloc(probs);
    a.pd = opt.attn_dropout > 0 ? ealloc(probs) : a.p;
    a.mask_p = opt.attn_dropout > 0 ? dalloc<uint8_t>(probs) : nullptr;
}

static void alloc_rest(Acts &a)
{
    size_t tl = (size_t)Tl * H;
    a.ln1 = ealloc(tl);
    a.qkv = ealloc((size_t)T * 3 * Hl);
    a.ctx = ealloc((size_t)T * Hl);
    a.x_mid = ealloc(tl);
    a.ln2 = ealloc(tl);
    a.h1 = ealloc((size_t)T * Fl);
    a.h1g = ealloc((size_t)T * Fl);
    a.mask1 = opt.hidden_dropout > 0 ? dalloc<uint8_t>(tl) : nullptr;
    a.mask2 = opt.hidden_dropout > 0 ? dalloc<uint8_t>(tl) : nullptr;
    a.mean1 = dalloc<float>(Tl);
    a.rstd1 = dalloc<float>(Tl);
    a.mean2 = dalloc<float>(Tl);
    a.rstd2 = dalloc<float>(Tl);
}

// The work set holds what a layer's activations do not keep: with full
// recompute all but the input, with selective the core attention's
// probabilities, else nothing.
static void work_alloc(Acts &a)
{
    memset(&a, 0, sizeof a);
    if (opt.recompute != RECOMPUTE_NONE)
        alloc_core(a);
    if (opt.recompute == RECOMPUTE_FULL)
        alloc_rest(a);
}

// A layer's kept activations: everything, all but the core attention
// (selective recompute: its s x s probabilities are recomputed), or only the
// input (full recompute); what is not kept is the work set's. own_input: the
// input is a tensor of its own (not a slice of the embedding's sum).
static Acts acts_kept(bool own_input)
{
    Acts a = wk;
    a.x_in = own_input ? ealloc((size_t)Tl * H) : nullptr;
    if (opt.recompute == RECOMPUTE_NONE)
        alloc_core(a);
    if (opt.recompute != RECOMPUTE_FULL)
        alloc_rest(a);
    return a;
}

// The sets are taken when a micro-batch's input arrives and given back after
// its backward, so the memory held is the schedule's largest number of
// micro-batches in flight (as PyTorch's caching allocator holds it).
static MB *mb_get(int c)
{
    if (!mb_free[c].empty()) {
        MB *m = mb_free[c].back();
        mb_free[c].pop_back();
        return m;
    }
    const Chunk &ch = chunks[c];
    MB *m = new MB;
    m->chunk = c;
    bool emb_slice = ch.first && sp && opt.hidden_dropout == 0;
    for (int j = 0; j < ch.nl; j++)
        m->a.push_back(acts_kept(j > 0 || !emb_slice));
    size_t tl = (size_t)Tl * H;
    m->x_out = ealloc(tl);
    if (ch.first) {
        m->tokens = dalloc<int>(T);
        // the embedding's sum is the first layer's input, or (SP) holds it as
        // this rank's slice, unless dropout makes that a tensor of its own
        if (!sp && opt.hidden_dropout == 0) {
            m->emb = m->a[0].x_in;
        } else {
            m->emb = ealloc((size_t)T * H);
            if (opt.hidden_dropout > 0)
                m->emb_mask = dalloc<uint8_t>(tl);
            else
                m->a[0].x_in = eoff(m->emb, (size_t)tp_idx * tl);
        }
    }
    if (ch.last) {
        m->targets = dalloc<int>(T);
        m->lnf_out = ealloc(tl);
        m->logits = opt.fp32_ce ? (void *)dalloc<float>((size_t)T * Vl) : ealloc((size_t)T * Vl);
        m->lnf_mean = dalloc<float>(Tl);
        m->lnf_rstd = dalloc<float>(Tl);
    }
    return m;
}

static void mb_put(MB *m) { mb_free[m->chunk].push_back(m); }

// A pass of the schedule that only takes and gives back the sets (no GPU
// work): it allocates, before the first iteration, what every iteration
// needs, so that the iterations are alike.
static bool dry_run;

static void *gbuf_get()
{
    if (gbuf_free.empty())
        return ealloc((size_t)Tl * H);
    void *p = gbuf_free.back();
    gbuf_free.pop_back();
    return p;
}

static void gbuf_put(void *p)
{
    if (p)
        gbuf_free.push_back(p);
}

// Carve n elements (rounded to 8) from the end of the flat buffer.
static size_t carve(size_t n)
{
    size_t off = n_all;
    n_all += (n + 7) / 8 * 8;
    params_here += n;
    return off;
}

static void pad_to(size_t unit) { n_all = (n_all + unit - 1) / unit * unit; }

static void layout_chunk(Chunk &ch)
{
    size_t unit = 64 * (size_t)dp;
    pad_to(unit);
    ch.off = n_all;
    if (ch.last) {
        ch.lnf_g = carve(H);
        ch.lnf_b = carve(H);
        ch.ones.push_back({ ch.lnf_g, (size_t)H });
        // the output layer's weight [Vl, H]: the word embedding itself when this
        // chunk holds it too (tied), else a weight (or, tied, the copy) of its own
        if (!(opt.tie && ch.first))
            ch.w_lm = carve((size_t)Vl * H);
        pad_to(unit);
        ch.part_end.push_back(n_all);
    }
    ch.lw.resize(ch.nl);
    for (int j = ch.nl - 1; j >= 0; j--) {
        LayerW &w = ch.lw[j];
        w.repl = n_all;
        w.ln1_g = carve(H);
        w.ln1_b = carve(H);
        w.ln2_g = carve(H);
        w.ln2_b = carve(H);
        if (opt.bias) {
            w.b_o = carve(H);
            w.b_fc2 = carve(H);
        }
        w.repl_n = n_all - w.repl;
        w.qkv = carve((size_t)H * 3 * Hl);
        w.o = carve((size_t)Hl * H);
        w.fc1 = carve((size_t)H * Fl);
        w.fc2 = carve((size_t)Fl * H);
        if (opt.bias) {
            w.b_qkv = carve((size_t)3 * Hl);
            w.b_fc1 = carve(Fl);
        }
        ch.ones.push_back({ w.ln1_g, (size_t)H });
        ch.ones.push_back({ w.ln2_g, (size_t)H });
        pad_to(unit);
        ch.part_end.push_back(n_all);
    }
    if (ch.first) {
        ch.wte = carve((size_t)Vl * H);
        ch.wpe = carve((size_t)S * H);
        pad_to(unit);
        ch.part_end.push_back(n_all);
    }
    if (ch.last && opt.tie && ch.first)
        ch.w_lm = ch.wte;
    ch.n = n_all - ch.off;
    // buckets: one per part, or --bucket-mb of gradients each
    size_t per = opt.bucket_mb > 0 ? (size_t)(opt.bucket_mb * 1048576.0 / (double)gsz) : 0;
    per = std::max(unit, (per + unit - 1) / unit * unit);
    size_t start = ch.off;
    for (size_t end : ch.part_end) {
        if (opt.bucket_mb > 0 && end != ch.off + ch.n)
            continue;
        for (size_t a = start; a < end; a = opt.bucket_mb > 0 ? std::min(a + per, end) : end) {
            Bucket bk;
            bk.off = a;
            bk.n = opt.bucket_mb > 0 ? std::min(per, end - a) : end - a;
            ch.buckets.push_back(bk);
        }
        start = end;
    }
}

static void build_model()
{
    int V = opt.layers_per_virtual ? opt.layers / (opt.pp * opt.layers_per_virtual) : 1;
    int nl = opt.layers / (opt.pp * V);
    chunks.resize(V);
    for (int c = 0; c < V; c++) {
        Chunk &ch = chunks[c];
        ch.vstage = c * opt.pp + pp_idx;
        ch.layer0 = ch.vstage * nl;
        ch.nl = nl;
        ch.first = ch.vstage == 0;
        ch.last = ch.vstage == V * opt.pp - 1;
        layout_chunk(ch);
    }
    w_all = ealloc(n_all);
    g_all = gsz == 4 ? (void *)dalloc<float>(n_all) : ealloc(n_all);
    for (Chunk &ch : chunks)
        for (Bucket &bk : ch.buckets) {
            bk.shard = opt.zero1 ? bk.n / dp : bk.n;
            bk.st = n_state;
            n_state += bk.shard;
            CUDA_CHECK(cudaEventCreateWithFlags(&bk.ready, cudaEventDisableTiming));
            CUDA_CHECK(cudaEventCreateWithFlags(&bk.gathered, cudaEventDisableTiming));
        }
    master = dalloc<float>(n_state);
    adam_m = dalloc<float>(n_state);
    adam_v = dalloc<float>(n_state);
    main_grad = fp16 ? dalloc<float>(n_state) : nullptr;
    CUDA_CHECK(cudaMemsetAsync(adam_m, 0, n_state * sizeof(float), s_comp));
    CUDA_CHECK(cudaMemsetAsync(adam_v, 0, n_state * sizeof(float), s_comp));
    // Same values on every rank that holds a parameter: seeded by the chunk's
    // place in the whole model and the TP rank (TP shards differ).
    for (Chunk &ch : chunks) {
        uint32_t seed = 1000u * (uint32_t)tp_idx + 1 + (uint32_t)ch.vstage;
        LAUNCH(init_params, blocks(ch.n), 256, nullptr, W(ch.off), ch.n, 0, seed, 0.02f);
        for (auto &one : ch.ones)
            LAUNCH(fill, blocks(one.second), 256, nullptr, W(one.first), one.second, 1.0f);
        for (Bucket &bk : ch.buckets) {
            size_t first = bk.off + (opt.zero1 ? bk.shard * dp_idx : 0);
            LAUNCH(init_params, blocks(bk.shard), 256, master + bk.st, nullptr, bk.shard, first - ch.off, seed, 0.02f);
            for (auto &one : ch.ones) {
                size_t lo = std::max(one.first, first), hi = std::min(one.first + one.second, first + bk.shard);
                if (lo < hi)
                    LAUNCH(fill, blocks(hi - lo), 256, master + bk.st + (lo - first), nullptr, hi - lo, 1.0f);
            }
        }
    }
    CUDA_CHECK(cudaGetLastError());

    work_alloc(wk);
    size_t th = (size_t)T * H, tl = (size_t)Tl * H, probs = (size_t)B * hl * S * S;
    wk_ln_full = sp ? ealloc(th) : nullptr;
    wk_g_full = sp ? ealloc(th) : nullptr;
    wk_out = ealloc(th);
    wk_out_s = sp ? ealloc(tl) : wk_out;
    wk_rs = opt.tp_overlap ? ealloc(4 * tl) : nullptr;
    wk_ctx_h = opt.flash ? nullptr : ealloc((size_t)T * Hl);
    wk_xout = opt.recompute == RECOMPUTE_FULL ? ealloc(tl) : nullptr;
    wk_ctx = opt.recompute == RECOMPUTE_SELECTIVE ? ealloc((size_t)T * Hl) : nullptr;
    wk_da = ealloc(tl);
    wk_dh = ealloc((size_t)T * Fl);
    wk_dh2 = ealloc((size_t)T * Fl);
    wk_dx_full = ealloc(th);
    wk_dx_s = sp ? ealloc(tl) : wk_dx_full;
    wk_dx2 = ealloc(tl);
    wk_dctx = ealloc((size_t)T * Hl);
    if (opt.flash) {
        wk_dsum = dalloc<float>((size_t)B * hl * S);
        wk_dq_acc = dalloc<float>((size_t)T * Hl);
    } else {
        wk_dctx_h = ealloc((size_t)T * Hl);
        wk_dp = ealloc(probs);
        wk_dq = ealloc((size_t)T * Hl);
        wk_dk = ealloc((size_t)T * Hl);
        wk_dv = ealloc((size_t)T * Hl);
    }
    wk_dqkv = ealloc((size_t)T * 3 * Hl);
    wk_chain[0] = ealloc(tl);
    wk_chain[1] = ealloc(tl);
    wk_head_dy = ealloc(tl);
    wk_logits = opt.fp32_ce && chunks.back().last ? ealloc((size_t)T * Vl) : nullptr;
    if (opt.scatter_gather && opt.pp > 1) {
        wk_recv[0] = ealloc(tl / opt.tp);
        wk_recv[1] = ealloc(tl / opt.tp);
    }
    if (sp) {
        size_t repl = 0;
        for (Chunk &ch : chunks)
            for (LayerW &w : ch.lw)
                repl += w.repl_n;
        wk_repl = gsz == 4 ? (void *)dalloc<float>(repl + 2 * H) : ealloc(repl + 2 * H);
    }
    mb_free.assign(chunks.size(), {});
    ce_mx = dalloc<float>(T);
    ce_sums = dalloc<float>(2 * (size_t)T);
    loss = dalloc<float>(1);
    norm2 = dalloc<float>(1);
    found_inf = dalloc<float>(1);
}

// ---------------------------------------------------------------- communication

// Megatron: skip a collective over a group of one.
static void tp_allreduce(void *buf, size_t n, ncclDataType_t t, ncclRedOp_t op = ncclSum)
{
    if (opt.tp > 1)
        NCCL_CHECK(ncclAllReduce(buf, buf, n, t, op, tp_comm, s_comp));
}

// Sequence parallelism: [Tl, H] of each TP rank <-> [T, H].
static void tp_allgather(const void *src, void *dst, cudaStream_t st)
{
    NCCL_CHECK(ncclAllGather(src, dst, (size_t)Tl * H, nc_e, tp_comm, st));
}

static void tp_reducescatter(const void *src, void *dst, cudaStream_t st)
{
    NCCL_CHECK(ncclReduceScatter(src, dst, (size_t)Tl * H, nc_e, ncclSum, tp_comm, st));
}

// Work on the TP stream after what the compute stream has issued, and the
// compute stream waiting for it (torch's async collectives and handle.wait()).
static void tp_stream_begin()
{
    CUDA_CHECK(cudaEventRecord(ev_to_tp, s_comp));
    CUDA_CHECK(cudaStreamWaitEvent(s_tp, ev_to_tp, 0));
}

static void tp_stream_wait()
{
    CUDA_CHECK(cudaEventRecord(ev_from_tp, s_tp));
    CUDA_CHECK(cudaStreamWaitEvent(s_comp, ev_from_tp, 0));
}

// --tp-comm-overlap, as Transformer Engine's userbuffers overlap SP's
// collectives with the GEMMs beside them (Megatron-core's --tp-comm-overlap):
// a ring exchange. The TP ranks' slices travel the TP ring one hop a step,
// each hop a send to the previous TP rank and a receive from the next on the
// TP stream, while the compute stream multiplies the slice it holds. TE moves
// the slices with copy engines through CUDA IPC; here each hop is an NCCL
// send/recv on a communicator of the two neighbours (tp_prev_comm,
// tp_next_comm), which NCCL runs on a pair's full set of channels (a send
// in the whole TP communicator gets a few of them, a fraction of NVLink).

// One hop of the ring on the TP stream: n elements of send to the previous
// TP rank, n from the next into recv, as one group (the ranks' sends and
// receives pair up around the ring only when they progress together).
static void ring_hop(const void *send, void *recv, size_t n)
{
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(send, n, nc_e, tp_prev_peer, tp_prev_comm, s_tp));
    NCCL_CHECK(ncclRecv(recv, n, nc_e, tp_next_peer, tp_next_comm, s_tp));
    NCCL_CHECK(ncclGroupEnd());
}

// out [T, N] = gather(in) x w, where gather(in) [T, K] is the all-gather
// over TP of every rank's in [Tl, K]: TP GEMMs of Tl rows, the own slice's
// first, each next one as its slice arrives in full [T, K] (which holds the
// gathered input afterwards, for a weight gradient). w is [K, N], or [N, K]
// with tw.
static void ag_gemm(const void *in, void *full, bool tw, int N, int K, const void *w, void *out,
                    const void *bias = nullptr)
{
    int tp = opt.tp;
    size_t slice = (size_t)Tl * K;
    tp_stream_begin();
    CUDA_CHECK(cudaMemcpyAsync(eoff(full, tp_idx * slice), in, slice * 2, cudaMemcpyDeviceToDevice, s_tp));
    for (int i = 0; i < tp; i++) {
        int have = (tp_idx + i) % tp, coming = (tp_idx + i + 1) % tp;
        if (i + 1 < tp)  // pass the slice on, receive the next
            ring_hop(eoff(full, have * slice), eoff(full, coming * slice), slice);
        mm(false, tw, Tl, N, K, i == 0 ? in : eoff(full, have * slice), w, eoff(out, (size_t)have * Tl * N), false,
           bias);
        if (i + 1 < tp) {  // the next GEMM's slice has arrived
            CUDA_CHECK(cudaEventRecord(ev_from_tp, s_tp));
            CUDA_CHECK(cudaStreamWaitEvent(s_comp, ev_from_tp, 0));
        }
    }
}

// The reduce-scatter over TP of in [T, K] x w ([K, H]) into out [Tl, H],
// around the ring the other way: at step i this rank multiplies the rows of
// slice (rank + i + 1) mod TP while the partial sum of that slice arrives
// from the next TP rank, adds the two, and sends the sum on to the previous
// rank as it multiplies the next slice; the last step's slice is its own,
// complete in out. work: four [Tl, H] buffers, the products and the partial
// sums received alternating in two each. Returns out.
static void *gemm_rs(const void *in, int K, const void *w, void *work, void *out)
{
    int tp = opt.tp;
    size_t slice = (size_t)Tl * H;
    void *prod[2] = { work, eoff(work, slice) }, *got[2] = { eoff(work, 2 * slice), eoff(work, 3 * slice) };
    for (int i = 0; i < tp; i++) {
        void *y = i + 1 == tp ? out : prod[i % 2];
        mm(false, false, Tl, H, K, eoff(in, (size_t)(tp_idx + i + 1) % tp * Tl * K), w, y);
        if (i > 0) {  // the partial sum of the same slice, from the next rank
            CUDA_CHECK(cudaStreamWaitEvent(s_comp, ev_from_tp, 0));
            LAUNCH(add, blocks(slice), 256, y, got[i % 2], y, slice);
        }
        if (i + 1 < tp) {
            tp_stream_begin();
            ring_hop(y, got[(i + 1) % 2], slice);
            CUDA_CHECK(cudaEventRecord(ev_from_tp, s_tp));
        }
    }
    return out;
}

// One pipeline transfer as Megatron's _communicate (one NCCL group, as
// torch's batch_isend_irecv, in its order: send to the previous stage,
// receive from it, send to the next, receive from it). Peers are on a ring.
// --scatter-gather: each TP rank sends its 1/TP of the tensor and the
// received pieces are all-gathered over TP afterwards.
static void p2p(const void *send_prev, void *recv_prev, const void *send_next, void *recv_next)
{
    if (dry_run || (!send_prev && !recv_prev && !send_next && !recv_next))
        return;
    int prev = (pp_idx + opt.pp - 1) % opt.pp, next = (pp_idx + 1) % opt.pp;
    bool sg = opt.scatter_gather;
    size_t n = (size_t)Tl * H / (sg ? opt.tp : 1), piece = sg ? n * tp_idx : 0;
    void *in_prev = sg && recv_prev ? wk_recv[0] : recv_prev, *in_next = sg && recv_next ? wk_recv[1] : recv_next;
    NCCL_CHECK(ncclGroupStart());
    if (send_prev)
        NCCL_CHECK(ncclSend(eoff(send_prev, piece), n, nc_e, prev, pp_comm, s_comp));
    if (recv_prev)
        NCCL_CHECK(ncclRecv(in_prev, n, nc_e, prev, pp_comm, s_comp));
    if (send_next)
        NCCL_CHECK(ncclSend(eoff(send_next, piece), n, nc_e, next, pp_comm, s_comp));
    if (recv_next)
        NCCL_CHECK(ncclRecv(in_next, n, nc_e, next, pp_comm, s_comp));
    NCCL_CHECK(ncclGroupEnd());
    if (sg && recv_prev)
        NCCL_CHECK(ncclAllGather(in_prev, recv_prev, n, nc_e, tp_comm, s_comp));
    if (sg && recv_next)
        NCCL_CHECK(ncclAllGather(in_next, recv_next, n, nc_e, tp_comm, s_comp));
}

// ---------------------------------------------------------------- forward and backward

static uint32_t layer_seed(int iter, int mb, int layer)
{
    return 0x51ed270bu ^ (uint32_t)(iter * 7919 + mb * 104729 + layer * 1299709);
}

// --attention flash: the fused kernels (flash_attention.cuh) on the
// activations' type and the head dim. The forward writes the context
// [S*B, hl*dh] into ctx and each query's log-sum-exp into a.lse; the
// backward takes the context's gradient dctx and writes the gradient of the
// fused QKV into dqkv.
template <class E, int HD> static void flash_fwd_on(const Acts &a, void *ctx)
{
    static bool ready;
    size_t smem = flash::fwd_smem<HD>(sizeof(E));
    if (!ready) {
        CUDA_CHECK(cudaFuncSetAttribute(flash::fwd<E, HD>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        ready = true;
    }
    flash::fwd<E, HD><<<dim3(S / flash::FWD_BM, B * hl), flash::THREADS, smem, s_comp>>>(
        (const E *)a.qkv, (E *)ctx, a.lse, S, B, hl, 1.0f / sqrtf((float)HD), opt.attn_dropout, a.seed ^ 0xa77u);
}

template <class E, int HD> static void flash_bwd_on(const Acts &a, const void *dctx, void *dqkv)
{
    static bool ready;
    size_t smem = flash::bwd_smem<HD>(sizeof(E));
    if (!ready) {
        CUDA_CHECK(cudaFuncSetAttribute(flash::bwd<E, HD>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        ready = true;
    }
    size_t rows = (size_t)B * hl * S;
    flash::bwd_prep<E, HD><<<(unsigned)(rows / 4), 128, 0, s_comp>>>((const E *)a.ctx, (const E *)dctx, wk_dsum,
                                                                       wk_dq_acc, S, B, hl);
    flash::bwd<E, HD><<<dim3(S / flash::BN, B * hl), flash::THREADS, smem, s_comp>>>(
        (const E *)a.qkv, (const E *)dctx, a.lse, wk_dsum, wk_dq_acc, (E *)dqkv, S, B, hl, 1.0f / sqrtf((float)HD),
        opt.attn_dropout, a.seed ^ 0xa77u);
    flash::bwd_dq<E, HD><<<blocks(rows * HD), 256, 0, s_comp>>>(wk_dq_acc, (E *)dqkv, S, B, hl);
}

static void flash_attention_fwd(const Acts &a, void *ctx)
{
    if (fp16)
        dh == 64 ? flash_fwd_on<__half, 64>(a, ctx) : flash_fwd_on<__half, 128>(a, ctx);
    else
        dh == 64 ? flash_fwd_on<bf16, 64>(a, ctx) : flash_fwd_on<bf16, 128>(a, ctx);
}

static void flash_attention_bwd(const Acts &a, const void *dctx, void *dqkv)
{
    if (fp16)
        dh == 64 ? flash_bwd_on<__half, 64>(a, dctx, dqkv) : flash_bwd_on<__half, 128>(a, dctx, dqkv);
    else
        dh == 64 ? flash_bwd_on<bf16, 64>(a, dctx, dqkv) : flash_bwd_on<bf16, 128>(a, dctx, dqkv);
}

// Core attention on the fused QKV [S*B, hl, 3, dh]: scores = Q K^T / sqrt(dh)
// (baddbmm on strided views), the causal softmax, dropout, context = P V
// (bmm), permuted to [S*B, hl*dh] into ctx; or the fused kernel
// (--attention flash).
static void core_attention(Acts &a, void *ctx)
{
    if (opt.flash) {
        flash_attention_fwd(a, ctx);
        return;
    }
    long long ld = (long long)B * hl * 3 * dh, ss = (long long)S * S, sd = (long long)S * dh;
    Gemm g;
    g.tw = true, g.M = S, g.N = S, g.K = dh, g.X = a.qkv, g.W = eoff(a.qkv, dh), g.Y = a.p;
    g.ldx = (int)ld, g.ldw = (int)ld, g.ldy = S, g.alpha = 1.0f / sqrtf((float)dh);
    g.batch = B * hl, g.sx = 3 * dh, g.sw = 3 * dh, g.sy = ss;
    gemm_run(g);
    LAUNCH(softmax_causal, B * hl * S, 128, a.p, S, 1.0f);
    if (opt.attn_dropout > 0)
        LAUNCH(dropout_fwd, ew_blocks((size_t)B * hl * ss), EW_THREADS, a.p, a.pd, a.mask_p, (size_t)B * hl * ss,
               opt.attn_dropout, a.seed ^ 0xa77u);
    Gemm c;
    c.M = S, c.N = dh, c.K = S, c.X = a.pd, c.W = eoff(a.qkv, 2 * dh), c.Y = wk_ctx_h;
    c.ldx = S, c.ldw = (int)ld, c.ldy = dh, c.batch = B * hl, c.sx = ss, c.sw = 3 * dh, c.sy = sd;
    gemm_run(c);
    LAUNCH(permute_ctx, blocks((size_t)T * Hl), 256, wk_ctx_h, ctx, B, S, hl, dh, 0);
}

// A row-parallel GEMM's output [T, H] summed over TP: all-reduced, or (SP)
// reduce-scattered to [Tl, H]. Returns where the sum is.
static void *row_parallel_reduce(void *out)
{
    if (sp) {
        tp_reducescatter(out, wk_out_s, s_comp);
        return wk_out_s;
    }
    tp_allreduce(out, (size_t)T * H, nc_e);
    return out;
}

// A column-parallel GEMM's forward, out [T, N] = in x w (w [H, N]), in this
// rank's [Tl, H] under SP: all-gathered first, or inside the GEMMs
// (--tp-comm-overlap).
static void col_parallel_fwd(const void *in, int N, const void *w, void *out, const void *bias = nullptr)
{
    if (sp && opt.tp_overlap) {
        ag_gemm(in, wk_ln_full, false, N, H, w, out, bias);
        return;
    }
    if (sp) {
        tp_allgather(in, wk_ln_full, s_comp);
        in = wk_ln_full;
    }
    mm(false, false, T, N, H, in, w, out, false, bias);
}

// A row-parallel GEMM's forward, in [T, K] x w (w [K, H]), summed over TP
// (row_parallel_reduce), or reduce-scattered inside the GEMMs
// (--tp-comm-overlap). Returns where the sum is.
static void *row_parallel_fwd(const void *in, int K, const void *w)
{
    if (sp && opt.tp_overlap)
        return gemm_rs(in, K, w, wk_rs, wk_out_s);
    mm(false, false, T, H, K, in, w, wk_out);
    return row_parallel_reduce(wk_out);
}

// res + dropout(x + bias) into out, or the plain residual add.
static void residual(const void *x, const void *bias, const void *res, void *out, uint8_t *mask, uint32_t seed)
{
    size_t tl = (size_t)Tl * H;
    if (!bias && !mask)
        LAUNCH(add, blocks(tl), 256, res, x, out, tl);
    else
        LAUNCH(bias_dropout_add, ew_blocks(tl), EW_THREADS, x, bias, res, out, mask, tl, H, opt.hidden_dropout, seed);
}

static void layer_fwd(const LayerW &w, Acts &a, void *x_out)
{
    size_t tf = (size_t)T * Fl;
    const void *bq = opt.bias ? W(w.b_qkv) : nullptr;
    LAUNCH(layernorm_fwd, Tl, 256, a.x_in, W(w.ln1_g), W(w.ln1_b), a.ln1, a.mean1, a.rstd1, H);
    col_parallel_fwd(a.ln1, 3 * Hl, W(w.qkv), a.qkv, bq);
    core_attention(a, a.ctx);
    void *o = row_parallel_fwd(a.ctx, Hl, W(w.o));
    residual(o, opt.bias ? W(w.b_o) : nullptr, a.x_in, a.x_mid, a.mask1, a.seed ^ 1u);
    LAUNCH(layernorm_fwd, Tl, 256, a.x_mid, W(w.ln2_g), W(w.ln2_b), a.ln2, a.mean2, a.rstd2, H);
    col_parallel_fwd(a.ln2, Fl, W(w.fc1), a.h1);
    LAUNCH(gelu_fwd, ew_blocks(tf), EW_THREADS, a.h1, opt.bias ? W(w.b_fc1) : nullptr, a.h1g, tf, Fl);
    o = row_parallel_fwd(a.h1g, Fl, W(w.fc2));
    residual(o, opt.bias ? W(w.b_fc2) : nullptr, a.x_mid, x_out, a.mask2, a.seed ^ 2u);
    CUDA_CHECK(cudaGetLastError());
}

// The backward of a column-parallel GEMM out [T, N] = in [T, H] x weight:
// the input gradient (dgrad) and the weight's (wgrad, accumulated), the
// input gradient summed over TP: all-reduced after both GEMMs (Megatron-LM
// 2021), or (SP) the input re-gathered and the gradient reduce-scattered on
// the TP stream, each overlapping a GEMM (Megatron-core). out_in: the weight
// is stored [N, H] (the output layer's), else [H, N]. Returns the input's
// gradient ([Tl, H]).
static void *col_parallel_bwd(const void *in_kept, const void *dout, const void *w, void *dw, int N, bool out_in)
{
    const void *in = in_kept;
    if (sp) {
        tp_stream_begin();
        tp_allgather(in_kept, wk_ln_full, s_tp);
        in = wk_ln_full;
    }
    mm(false, !out_in, T, H, N, dout, w, wk_dx_full);
    if (sp) {
        tp_stream_wait();
        tp_stream_begin();
        tp_reducescatter(wk_dx_full, wk_dx_s, s_tp);
    }
    if (out_in)
        mm(true, false, N, H, T, dout, in, dw, true);
    else
        mm(true, false, H, N, T, in, dout, dw, true);
    if (sp) {
        tp_stream_wait();
        return wk_dx_s;
    }
    tp_allreduce(wk_dx_full, (size_t)T * H, nc_e);
    return wk_dx_full;
}

// The gradient of a residual branch's output (x + bias, dropped out) from
// the layer output's dy: through dropout's mask, the bias's gradient, and
// (SP) all-gathered to [T, H].
static const void *branch_bwd(const void *dy, const uint8_t *mask, size_t bias)
{
    size_t tl = (size_t)Tl * H;
    const void *g = dy;
    if (mask) {
        LAUNCH(dropout_bwd, ew_blocks(tl), EW_THREADS, dy, mask, wk_da, tl, opt.hidden_dropout);
        g = wk_da;
    }
    if (opt.bias)
        LAUNCH(bias_grad, dim3(blocks(H, 32), BIAS_GRAD_SPLIT), dim3(32, 8), g, G(bias), Tl, H);
    if (sp && !opt.tp_overlap) {
        tp_allgather(g, wk_g_full, s_comp);
        g = wk_g_full;
    }
    return g;
}

// A row-parallel GEMM's input gradient, dx [T, N] = g x w^T (w [N, H]),
// from the branch gradient branch_bwd returned: [T, H], or with
// --tp-comm-overlap this rank's [Tl, H], gathered into wk_g_full inside the
// GEMMs. Returns the gathered gradient, for the weight's.
static const void *row_parallel_dgrad(const void *g, const void *w, int N, void *dx)
{
    if (sp && opt.tp_overlap) {
        ag_gemm(g, wk_g_full, true, N, H, w, dx);
        return wk_g_full;
    }
    mm(false, true, T, N, H, g, w, dx);
    return g;
}

// The core attention's backward: from the context's gradient dctx
// [S*B, hl*dh] to the fused QKV's, dqkv [S*B, hl, 3, dh].
static void core_attention_bwd(const Acts &a, const void *dctx, void *dqkv)
{
    if (opt.flash) {
        flash_attention_bwd(a, dctx, dqkv);
        return;
    }
    long long ld = (long long)B * hl * 3 * dh, ss = (long long)S * S, sd = (long long)S * dh;
    LAUNCH(permute_ctx, blocks((size_t)T * Hl), 256, dctx, wk_dctx_h, B, S, hl, dh, 1);
    Gemm gp;  // dP = dctx V^T
    gp.tw = true, gp.M = S, gp.N = S, gp.K = dh, gp.X = wk_dctx_h, gp.W = eoff(a.qkv, 2 * dh), gp.Y = wk_dp;
    gp.ldx = dh, gp.ldw = (int)ld, gp.ldy = S, gp.batch = B * hl, gp.sx = sd, gp.sw = 3 * dh, gp.sy = ss;
    gemm_run(gp);
    Gemm gv;  // dV = P^T dctx
    gv.tx = true, gv.M = S, gv.N = dh, gv.K = S, gv.X = a.pd, gv.W = wk_dctx_h, gv.Y = wk_dv;
    gv.ldx = S, gv.ldw = dh, gv.ldy = dh, gv.batch = B * hl, gv.sx = ss, gv.sw = sd, gv.sy = sd;
    gemm_run(gv);
    if (opt.attn_dropout > 0)
        LAUNCH(dropout_bwd, ew_blocks((size_t)B * hl * ss), EW_THREADS, wk_dp, a.mask_p, wk_dp, (size_t)B * hl * ss,
               opt.attn_dropout);
    LAUNCH(softmax_bwd, B * hl * S, 128, a.p, wk_dp, S, 1.0f);
    float alpha = 1.0f / sqrtf((float)dh);
    Gemm gq;  // dQ = dS K / sqrt(dh)
    gq.M = S, gq.N = dh, gq.K = S, gq.X = wk_dp, gq.W = eoff(a.qkv, dh), gq.Y = wk_dq, gq.alpha = alpha;
    gq.ldx = S, gq.ldw = (int)ld, gq.ldy = dh, gq.batch = B * hl, gq.sx = ss, gq.sw = 3 * dh, gq.sy = sd;
    gemm_run(gq);
    Gemm gk;  // dK = dS^T Q / sqrt(dh)
    gk.tx = true, gk.M = S, gk.N = dh, gk.K = S, gk.X = wk_dp, gk.W = a.qkv, gk.Y = wk_dk, gk.alpha = alpha;
    gk.ldx = S, gk.ldw = (int)ld, gk.ldy = dh, gk.batch = B * hl, gk.sx = ss, gk.sw = 3 * dh, gk.sy = sd;
    gemm_run(gk);
    LAUNCH(qkv_cat, blocks((size_t)T * 3 * Hl), 256, wk_dq, wk_dk, wk_dv, dqkv, B, S, hl, dh);
}

// dy: gradient of the layer's output; dx receives its input's gradient.
static void layer_bwd(const LayerW &w, Acts &kept, const void *dy, void *dx)
{
    Acts a = kept;
    if (opt.recompute == RECOMPUTE_FULL) {  // the layer's forward again, from its kept input
        a = wk;
        a.x_in = kept.x_in;
        a.seed = kept.seed;
        layer_fwd(w, a, wk_xout);
    }
    size_t tf = (size_t)T * Fl;
    // MLP
    const void *g = row_parallel_dgrad(branch_bwd(dy, a.mask2, w.b_fc2), W(w.fc2), Fl, wk_dh);
    mm(true, false, Fl, H, T, a.h1g, g, G(w.fc2), true);
    LAUNCH(gelu_bwd, ew_blocks(tf), EW_THREADS, a.h1, opt.bias ? W(w.b_fc1) : nullptr, wk_dh, wk_dh2, tf, Fl);
    if (opt.bias)
        LAUNCH(bias_grad, dim3(blocks(Fl, 32), BIAS_GRAD_SPLIT), dim3(32, 8), wk_dh2, G(w.b_fc1), T, Fl);
    void *d = col_parallel_bwd(a.ln2, wk_dh2, W(w.fc1), G(w.fc1), Fl, false);
    LAUNCH(layernorm_bwd, Tl, 256, d, a.x_mid, W(w.ln2_g), a.mean2, a.rstd2, dy, wk_dx2, G(w.ln2_g), G(w.ln2_b), H);
    // attention
    g = row_parallel_dgrad(branch_bwd(wk_dx2, a.mask1, w.b_o), W(w.o), Hl, wk_dctx);
    mm(true, false, Hl, H, T, a.ctx, g, G(w.o), true);
    if (opt.recompute == RECOMPUTE_SELECTIVE)  // the core attention again
        core_attention(a, wk_ctx);
    core_attention_bwd(a, wk_dctx, wk_dqkv);
    if (opt.bias)
        LAUNCH(bias_grad, dim3(blocks(3 * Hl, 32), BIAS_GRAD_SPLIT), dim3(32, 8), wk_dqkv, G(w.b_qkv), T, 3 * Hl);
    d = col_parallel_bwd(a.ln1, wk_dqkv, W(w.qkv), G(w.qkv), 3 * Hl, false);
    LAUNCH(layernorm_bwd, Tl, 256, d, a.x_in, W(w.ln1_g), a.mean1, a.rstd1, wk_dx2, dx, G(w.ln1_g), G(w.ln1_b), H);
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
static void load_batch(int iter, MB *m)
{
    std::vector<int> tok(T + 1);
    rng = 7919u * (uint32_t)(iter * opt.micro_batches + m->mb) + 104729u * (uint32_t)dp_idx + 1;
    for (int &t : tok)
        t = (int)(next_rand() % (uint32_t)opt.vocab);
    if (m->tokens)
        CUDA_CHECK(cudaMemcpyAsync(m->tokens, tok.data(), T * sizeof(int), cudaMemcpyHostToDevice, s_comp));
    if (m->targets)
        CUDA_CHECK(cudaMemcpyAsync(m->targets, tok.data() + 1, T * sizeof(int), cudaMemcpyHostToDevice, s_comp));
}

static void embedding_fwd(const Chunk &ch, MB *m, int iter)
{
    size_t tl = (size_t)Tl * H;
    LAUNCH(embed_fwd, T, 256, m->tokens, W(ch.wte), m->emb, H, tp_idx * Vl, Vl);
    tp_allreduce(m->emb, (size_t)T * H, nc_e);
    LAUNCH(embed_pos, T, 256, m->emb, W(ch.wpe), B, H);
    if (opt.hidden_dropout > 0)  // on this rank's tokens (SP: its slice)
        LAUNCH(dropout_fwd, ew_blocks(tl), EW_THREADS, eoff(m->emb, sp ? tp_idx * tl : 0), m->a[0].x_in, m->emb_mask, tl,
               opt.hidden_dropout, layer_seed(iter, m->mb, -1));
}

static void embedding_bwd(const Chunk &ch, MB *m, void *dx)
{
    size_t tl = (size_t)Tl * H;
    const void *g = dx;
    if (opt.hidden_dropout > 0) {
        LAUNCH(dropout_bwd, ew_blocks(tl), EW_THREADS, dx, m->emb_mask, wk_da, tl, opt.hidden_dropout);
        g = wk_da;
    }
    if (sp) {
        tp_allgather(g, wk_g_full, s_comp);
        g = wk_g_full;
    }
    LAUNCH(embed_bwd, T, 256, m->tokens, g, G(ch.wte), G(ch.wpe), B, H, tp_idx * Vl, Vl);
    CUDA_CHECK(cudaGetLastError());
}

// A token's share of the iteration's loss: the mean over the micro-batch's
// tokens and the micro-batches.
static float per_token() { return 1.0f / ((float)T * opt.micro_batches); }

static void head_fwd(const Chunk &ch, MB *m)
{
    LAUNCH(layernorm_fwd, Tl, 256, m->x_out, W(ch.lnf_g), W(ch.lnf_b), m->lnf_out, m->lnf_mean, m->lnf_rstd, H);
    const void *in = m->lnf_out;
    if (sp) {
        tp_allgather(m->lnf_out, wk_ln_full, s_comp);
        in = wk_ln_full;
    }
    size_t tv = (size_t)T * Vl;
    if (opt.fp32_ce) {  // logits = x W^T, W [Vl, H], then cast: the fp32 copy is what the loss keeps
        mm(false, true, T, Vl, H, in, W(ch.w_lm), wk_logits);
        if (fp16)
            convert<<<blocks(tv), 256, 0, s_comp>>>((const __half *)wk_logits, (float *)m->logits, tv);
        else
            convert<<<blocks(tv), 256, 0, s_comp>>>((const bf16 *)wk_logits, (float *)m->logits, tv);
    } else {
        mm(false, true, T, Vl, H, in, W(ch.w_lm), m->logits);
    }
    LAUNCH_CE(ce_max, T, 256, m->logits, ce_mx, Vl);
    tp_allreduce(ce_mx, T, ncclFloat32, ncclMax);
    LAUNCH_CE(ce_sub, T, 256, m->logits, ce_mx, m->targets, ce_sums, T, Vl, tp_idx * Vl);
    LAUNCH_CE(ce_exp, ew_blocks(tv), EW_THREADS, m->logits, tv);
    LAUNCH_CE(ce_sum, T, 256, m->logits, ce_sums, Vl);
    tp_allreduce(ce_sums, 2 * (size_t)T, ncclFloat32);
    LAUNCH_CE(ce_div, T, 256, m->logits, ce_sums, loss, T, Vl, per_token());
    CUDA_CHECK(cudaGetLastError());
}

// The gradient of the chunk's output from the loss, into dy.
static void head_bwd(const Chunk &ch, MB *m, void *dy)
{
    const void *dlogits = m->logits;
    LAUNCH_CE(ce_grad, T, 256, m->logits, m->targets, Vl, tp_idx * Vl, per_token() * (fp16 ? opt.loss_scale : 1.0f));
    if (opt.fp32_ce) {  // the cast's backward: the gradient back in 16 bits
        size_t tv = (size_t)T * Vl;
        if (fp16)
            convert<<<blocks(tv), 256, 0, s_comp>>>((const float *)m->logits, (__half *)wk_logits, tv);
        else
            convert<<<blocks(tv), 256, 0, s_comp>>>((const float *)m->logits, (bf16 *)wk_logits, tv);
        dlogits = wk_logits;
    }
    void *d = col_parallel_bwd(m->lnf_out, dlogits, W(ch.w_lm), G(ch.w_lm), Vl, true);
    LAUNCH(layernorm_bwd, Tl, 256, d, m->x_out, W(ch.lnf_g), m->lnf_mean, m->lnf_rstd, nullptr, dy, G(ch.lnf_g),
           G(ch.lnf_b), H);
    CUDA_CHECK(cudaGetLastError());
}

// --overlap-param-gather: the optimizer step leaves its parameter
// all-gathers (one per bucket) to the next forward pass, as Megatron-core's
// distributed optimizer does: pg_order lists the buckets in the order the
// forward first uses them (chunk by chunk, each chunk's from its embedding
// end, the last of its flat range), the step issues the first bucket's, and
// the forward, where it first reaches a part of the parameters, issues the
// all-gathers up to one bucket past that part's and waits for that part's.
static std::vector<Bucket *> pg_order;
static size_t pg_issued, pg_waited = SIZE_MAX;  // SIZE_MAX: nothing pending (first iteration)

// --zero1: a bucket's updated parameters, every DP rank's shard, to all of
// them (on the DP stream).
static void gather_bucket(const Bucket &bk)
{
    NCCL_CHECK(ncclAllGather(W(bk.off + bk.shard * dp_idx), W(bk.off), bk.shard, nc_e, dp_comm, s_dp));
}

static void pg_issue(size_t upto)
{
    for (; pg_issued < upto && pg_issued < pg_order.size(); pg_issued++) {
        gather_bucket(*pg_order[pg_issued]);
        CUDA_CHECK(cudaEventRecord(pg_order[pg_issued]->gathered, s_dp));
    }
}

// Before the forward uses part p of chunk ch (part_end's order).
static void params_ready(const Chunk &ch, int p)
{
    size_t lo = p ? ch.part_end[p - 1] : ch.off, hi = ch.part_end[p];
    for (; pg_waited < pg_order.size(); pg_waited++) {
        const Bucket &bk = *pg_order[pg_waited];
        if (bk.off >= hi || bk.off + bk.n <= lo)  // a later part's
            break;
        pg_issue(pg_waited + 2);
        CUDA_CHECK(cudaStreamWaitEvent(s_comp, bk.gathered, 0));
    }
}

static void forward(int iter, MB *m)
{
    if (dry_run)
        return;
    const Chunk &ch = chunks[m->chunk];
    for (int j = 0; j < ch.nl; j++)
        m->a[j].seed = layer_seed(iter, m->mb, ch.layer0 + j);
    if (ch.first || ch.last)
        load_batch(iter, m);
    // the parts in part_end's order: the head, the layers last to first, the embedding
    int head = ch.last ? 1 : 0;
    if (ch.first) {
        params_ready(ch, head + ch.nl);
        embedding_fwd(ch, m, iter);
    }
    for (int j = 0; j < ch.nl; j++) {
        params_ready(ch, head + ch.nl - 1 - j);
        layer_fwd(ch.lw[j], m->a[j], j + 1 < ch.nl ? m->a[j + 1].x_in : m->x_out);
    }
    if (ch.last) {
        params_ready(ch, 0);
        head_fwd(ch, m);
    }
}

// ---------------------------------------------------------------- data-parallel gradients

// Reduce a bucket's gradients over DP once they are final: averaged on the
// compute stream, then reduced on the DP stream.
static void reduce_bucket(Bucket &bk, cudaStream_t st)
{
    LAUNCH(scale_grads, blocks(bk.n), 256, G(bk.off), bk.n, 1.0f / dp);
    if (st != s_comp) {
        CUDA_CHECK(cudaEventRecord(bk.ready, s_comp));
        CUDA_CHECK(cudaStreamWaitEvent(st, bk.ready, 0));
    }
    if (opt.zero1)
        NCCL_CHECK(ncclReduceScatter(G(bk.off), G(bk.off + bk.shard * dp_idx), bk.shard, nc_g, ncclSum, dp_comm, st));
    else
        NCCL_CHECK(ncclAllReduce(G(bk.off), G(bk.off), bk.n, nc_g, ncclSum, dp_comm, st));
    bk.issued = true;
}

// --ddp torch: in the chunk's last backward, the buckets whose gradients are
// final (the chunk's range up to `upto`) are reduced on the DP stream.
static void reduce_ready(Chunk &ch, size_t upto, bool last_mb)
{
    if (dp == 1 || opt.ddp_local || !last_mb)
        return;
    for (Bucket &bk : ch.buckets)
        if (!bk.issued && bk.off + bk.n <= upto)
            reduce_bucket(bk, s_dp);
}

// The backward of micro-batch m on its chunk: dy is the gradient of the
// chunk's output (NULL on the last chunk: from the loss); the input's
// gradient is left in dx (NULL on the first chunk).
static void backward(MB *m, const void *dy, void *dx)
{
    if (dry_run)
        return;
    Chunk &ch = chunks[m->chunk];
    bool last_mb = ++ch.bwd_done == opt.micro_batches;
    size_t part = 0;
    if (ch.last) {
        head_bwd(ch, m, wk_head_dy);
        dy = wk_head_dy;
        reduce_ready(ch, ch.part_end[part++], last_mb);
    }
    // layer j writes its input's gradient to a chain buffer other than the
    // one it reads, the first layer into dx (or, first chunk, chain 0)
    for (int j = ch.nl - 1; j >= 0; j--) {
        void *out = j == 0 ? (dx ? dx : wk_chain[0]) : wk_chain[j % 2];
        layer_bwd(ch.lw[j], m->a[j], dy, out);
        reduce_ready(ch, ch.part_end[part++], last_mb);
        dy = out;
    }
    if (ch.first) {
        embedding_bwd(ch, m, wk_chain[0]);
        reduce_ready(ch, ch.part_end[part++], last_mb);
    }
}

// ---------------------------------------------------------------- the pipeline schedules

// 1F1B (Megatron's forward_backward_pipelining_without_interleaving; with
// one stage, forward and backward of each micro-batch in turn).
static void schedule_1f1b(int iter)
{
    int M = opt.micro_batches, first = pp_idx == 0, last = pp_idx == opt.pp - 1;
    int warm = std::min(opt.pp - pp_idx - 1, M), steady = M - warm, fwd = 0;
    std::deque<MB *> inflight;
    auto take = [&](bool recv) {
        MB *m = mb_get(0);
        m->mb = fwd++;
        if (recv && !first)
            p2p(nullptr, m->a[0].x_in, nullptr, nullptr);  // recv forward
        return m;
    };
    for (int i = 0; i < warm; i++) {
        MB *m = take(true);
        forward(iter, m);
        p2p(nullptr, nullptr, m->x_out, nullptr);  // send forward
        inflight.push_back(m);
    }
    MB *next = steady > 0 ? take(true) : nullptr;
    for (int i = 0; i < steady; i++) {
        MB *m = next;
        forward(iter, m);
        inflight.push_back(m);
        void *dy = last ? nullptr : gbuf_get();
        if (!last)
            p2p(nullptr, nullptr, m->x_out, dy);  // send forward, recv backward
        MB *b = inflight.front();
        inflight.pop_front();
        void *dx = first ? nullptr : gbuf_get();
        backward(b, dy, dx);
        mb_put(b);
        gbuf_put(dy);
        next = i < steady - 1 ? take(false) : nullptr;
        if (!first)
            p2p(dx, next ? next->a[0].x_in : nullptr, nullptr, nullptr);  // send backward (recv forward)
        gbuf_put(dx);
    }
    for (int i = 0; i < warm; i++) {
        void *dy = gbuf_get();
        p2p(nullptr, nullptr, nullptr, dy);  // recv backward
        MB *b = inflight.front();
        inflight.pop_front();
        void *dx = first ? nullptr : gbuf_get();
        backward(b, dy, dx);
        mb_put(b);
        gbuf_put(dy);
        if (!first)
            p2p(dx, nullptr, nullptr, nullptr);  // send backward
        gbuf_put(dx);
    }
}

// Interleaved 1F1B over V chunks per stage (Megatron's
// forward_backward_pipelining_with_interleaving): the k-th forward of a rank
// runs chunk (k mod (PP x V)) / PP, the k-th backward the reverse; warm-up
// of (PP - rank - 1) x 2 + (V - 1) x PP forwards; a chunk's output goes to
// the next rank's next chunk around the ring.
static void schedule_interleaved(int iter)
{
    int V = (int)chunks.size(), P = opt.pp, M = opt.micro_batches, N = M * V;
    bool all_warm = M == P;
    int warm = all_warm ? N : std::min((P - pp_idx - 1) * 2 + (V - 1) * P, N), remaining = N - warm;
    bool first_rank = pp_idx == 0, last_rank = pp_idx == P - 1;
    auto chunk_of = [&](int k, bool fwd) {  // k may be negative: Python's modulo
        int c = ((k % (P * V) + P * V) % (P * V)) / P;
        return fwd ? c : V - 1 - c;
    };
    std::vector<std::deque<MB *>> pending(V), inflight(V);  // inputs received; forwarded, awaiting backward
    std::vector<std::deque<void *>> grads(V);               // output gradients received
    std::vector<int> next_mb(V, 0);
    auto recv_into = [&](int c) {  // a set for chunk c's next micro-batch, to receive its input
        MB *m = mb_get(c);
        m->mb = next_mb[c]++;
        pending[c].push_back(m);
        return m->a[0].x_in;
    };
    auto fwd_step = [&](int k) {
        int c = chunk_of(k, true);
        MB *m;
        if (first_rank && c == 0) {
            m = mb_get(0);
            m->mb = next_mb[0]++;
        } else {
            m = pending[c].front();
            pending[c].pop_front();
        }
        forward(iter, m);
        inflight[c].push_back(m);
        return (last_rank && c == V - 1) ? nullptr : m->x_out;  // what to send on
    };
    auto bwd_step = [&](int k) {
        int c = chunk_of(k, false);
        MB *m = inflight[c].front();
        inflight[c].pop_front();
        void *dy = nullptr;
        if (!(last_rank && c == V - 1)) {
            dy = grads[c].front();
            grads[c].pop_front();
        }
        void *dx = (first_rank && c == 0) ? nullptr : gbuf_get();
        backward(m, dy, dx);
        mb_put(m);
        gbuf_put(dy);
        return dx;  // what to send back (given back after the send)
    };
    auto grad_into = [&](int c) {
        void *g = gbuf_get();
        grads[c].push_back(g);
        return g;
    };
    if (!first_rank)
        p2p(nullptr, recv_into(0), nullptr, nullptr);
    for (int k = 0; k < warm; k++) {
        const void *out = fwd_step(k);
        int nc = chunk_of(k + 1, true);
        bool recv_prev = !(first_rank && nc == 0) && k != N - 1;
        if (k == warm - 1 && !all_warm) {
            bool recv_next = !last_rank;
            p2p(nullptr, recv_prev ? recv_into(nc) : nullptr, out, recv_next ? grad_into(V - 1) : nullptr);
        } else {
            p2p(nullptr, recv_prev ? recv_into(nc) : nullptr, out, nullptr);
        }
    }
    for (int k = 0; k < remaining; k++) {
        int fk = k + warm;
        const void *out = fwd_step(fk);
        void *dx = bwd_step(k);
        bool recv_prev = true, recv_next = true;
        int nfc, nbc;
        if (first_rank) {
            nfc = chunk_of(fk - (P - 1), true);
            if (nfc == V - 1)
                recv_prev = false;
            nfc++;
        } else {
            nfc = chunk_of(fk + 1, true);
        }
        if (last_rank) {
            nbc = chunk_of(k - (P - 1), false);
            if (nbc == 0)
                recv_next = false;
            nbc--;
        } else {
            nbc = chunk_of(k + 1, false);
        }
        if (k == remaining - 1)
            recv_prev = false;
        p2p(dx, recv_prev ? recv_into(nfc) : nullptr, out, recv_next ? grad_into(nbc) : nullptr);
        gbuf_put(dx);
    }
    if (all_warm && !last_rank)
        p2p(nullptr, nullptr, nullptr, grad_into(V - 1));
    for (int k = remaining; k < N; k++) {
        void *dx = bwd_step(k);
        int nbc = chunk_of(k + 1, false);
        bool recv_next = !(last_rank && nbc == V - 1) && k != N - 1;
        p2p(dx, nullptr, nullptr, recv_next ? grad_into(nbc) : nullptr);
        gbuf_put(dx);
    }
}

// ---------------------------------------------------------------- the iteration

// After the backward, before the optimizer (Megatron's finalize_model_grads):
// the DP reductions end (or, --ddp local, run now); under SP the LayerNorm
// and row-parallel bias gradients are summed over TP (flattened into one
// all-reduce); a tied embedding's two copies sum their gradients.
static void finish_grads()
{
    if (dp > 1 && opt.ddp_local) {
        if (opt.zero1) {
            for (Chunk &ch : chunks)
                for (Bucket &bk : ch.buckets)
                    reduce_bucket(bk, s_comp);
        } else {
            LAUNCH(scale_grads, blocks(n_all), 256, g_all, n_all, 1.0f / dp);
            NCCL_CHECK(ncclAllReduce(g_all, g_all, n_all, nc_g, ncclSum, dp_comm, s_comp));
        }
    } else if (dp > 1) {
        for (Chunk &ch : chunks)  // every bucket was issued: the DP stream's reductions end first
            for (Bucket &bk : ch.buckets)
                if (!bk.issued)
                    reduce_bucket(bk, s_dp);
        CUDA_CHECK(cudaEventRecord(ev_dp_done, s_dp));
        CUDA_CHECK(cudaStreamWaitEvent(s_comp, ev_dp_done, 0));
    }
    if (sp) {
        std::vector<std::pair<size_t, size_t>> spans;
        for (Chunk &ch : chunks) {
            if (ch.last)
                spans.push_back({ ch.lnf_g, 2 * (size_t)H });
            for (LayerW &w : ch.lw)
                spans.push_back({ w.repl, w.repl_n });
        }
        size_t at = 0;
        for (auto &s : spans) {
            CUDA_CHECK(cudaMemcpyAsync(goff(wk_repl, at), G(s.first), s.second * gsz, cudaMemcpyDeviceToDevice, s_comp));
            at += s.second;
        }
        NCCL_CHECK(ncclAllReduce(wk_repl, wk_repl, at, nc_g, ncclSum, tp_comm, s_comp));
        at = 0;
        for (auto &s : spans) {
            CUDA_CHECK(cudaMemcpyAsync(G(s.first), goff(wk_repl, at), s.second * gsz, cudaMemcpyDeviceToDevice, s_comp));
            at += s.second;
        }
    }
    if (emb_comm)
        for (Chunk &ch : chunks)
            if (ch.first || ch.last)
                NCCL_CHECK(ncclAllReduce(G(ch.first ? ch.wte : ch.w_lm), G(ch.first ? ch.wte : ch.w_lm),
                                         (size_t)Vl * H, nc_g, ncclSum, emb_comm, s_comp));
}

// The group over which the optimizer's scalars (gradient norm, overflow)
// are summed: the model-parallel group, or everything when the optimizer
// state is sharded over DP too. NULL: a group of one.
static ncclComm_t norm_comm()
{
    if (opt.zero1)
        return world > 1 ? world_comm : nullptr;
    return opt.tp * opt.pp > 1 ? mp_comm : nullptr;
}

static void optimizer_step(int step)
{
    finish_grads();
    ncclComm_t nc = norm_comm();
    // fp16: unscale into fp32, and skip the step on an overflow anywhere (the
    // host reads the flag, as Megatron's found_inf.item())
    if (fp16) {
        CUDA_CHECK(cudaMemsetAsync(found_inf, 0, sizeof(float), s_comp));
        for (Chunk &ch : chunks)
            for (Bucket &bk : ch.buckets) {
                size_t first = bk.off + (opt.zero1 ? bk.shard * dp_idx : 0);
                unscale_grads<<<blocks(bk.shard), 256, 0, s_comp>>>((const __half *)G(first), main_grad + bk.st,
                                                                     bk.shard, 1.0f / opt.loss_scale, found_inf);
            }
        if (nc)
            NCCL_CHECK(ncclAllReduce(found_inf, found_inf, 1, ncclFloat32, ncclMax, nc, s_comp));
        float h = 0;
        CUDA_CHECK(cudaMemcpyAsync(&h, found_inf, sizeof h, cudaMemcpyDeviceToHost, s_comp));
        CUDA_CHECK(cudaStreamSynchronize(s_comp));
        if (h != 0)  // kernels do not run under maya: the flag stays 0
            return;
    }
    CUDA_CHECK(cudaMemsetAsync(norm2, 0, sizeof(float), s_comp));
    for (Chunk &ch : chunks)
        for (Bucket &bk : ch.buckets) {
            const float *g = fp16 ? main_grad + bk.st : (const float *)G(bk.off + (opt.zero1 ? bk.shard * dp_idx : 0));
            sum_squares<<<std::min<unsigned>(blocks(bk.shard), 1024), 256, 0, s_comp>>>(g, bk.shard, 1.0f, norm2);
        }
    if (nc)
        NCCL_CHECK(ncclAllReduce(norm2, norm2, 1, ncclFloat32, ncclSum, nc, s_comp));
    // the host reads the norm and clips (Megatron's clip_grad_norm_fp32:
    // total_norm.item(), then the gradients scaled when it exceeds --clip)
    float h2 = 0;
    CUDA_CHECK(cudaMemcpyAsync(&h2, norm2, sizeof h2, cudaMemcpyDeviceToHost, s_comp));
    CUDA_CHECK(cudaStreamSynchronize(s_comp));
    float nrm = sqrtf(h2), coef = nrm > opt.clip ? opt.clip / (nrm + 1e-6f) : 1.0f;
    for (Chunk &ch : chunks)
        for (Bucket &bk : ch.buckets) {
            size_t first = bk.off + (opt.zero1 ? bk.shard * dp_idx : 0);
            const float *g = fp16 ? main_grad + bk.st : (const float *)G(first);
            LAUNCH(adam, blocks(bk.shard), 256, master + bk.st, g, adam_m + bk.st, adam_v + bk.st, W(first), bk.shard,
                   opt.lr, step, coef);
        }
    CUDA_CHECK(cudaGetLastError());
    if (opt.zero1 && dp > 1) {  // everyone needs every updated parameter
        CUDA_CHECK(cudaEventRecord(ev_updated, s_comp));
        CUDA_CHECK(cudaStreamWaitEvent(s_dp, ev_updated, 0));
        if (opt.param_gather_overlap) {  // in the next forward
            if (pg_order.empty())
                for (Chunk &ch : chunks)
                    for (size_t i = ch.buckets.size(); i-- > 0;)
                        pg_order.push_back(&ch.buckets[i]);
            pg_issued = pg_waited = 0;
            pg_issue(1);
            return;
        }
        for (Chunk &ch : chunks)
            for (Bucket &bk : ch.buckets)
                gather_bucket(bk);
        CUDA_CHECK(cudaEventRecord(ev_dp_done, s_dp));
        CUDA_CHECK(cudaStreamWaitEvent(s_comp, ev_dp_done, 0));
    }
}

static void run_schedule(int iter)
{
    if (chunks.size() > 1)
        schedule_interleaved(iter);
    else
        schedule_1f1b(iter);
}

static void train_iteration(int iter)
{
    CUDA_CHECK(cudaMemsetAsync(g_all, 0, n_all * gsz, s_comp));
    for (Chunk &ch : chunks) {
        ch.bwd_done = 0;
        for (Bucket &bk : ch.buckets)
            bk.issued = false;
    }
    bool last_stage = chunks.back().last;
    if (last_stage)
        CUDA_CHECK(cudaMemsetAsync(loss, 0, sizeof(float), s_comp));
    run_schedule(iter);
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
    int lpv = opt.layers_per_virtual;
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
    else if (opt.seq_par && opt.tp == 1)
        err = "--sequence-parallel needs --tp above 1";
    else if (opt.seq_par && opt.seq % opt.tp)
        err = "--tp must divide --seq with --sequence-parallel";
    else if (opt.seq_par && opt.scatter_gather)
        err = "--scatter-gather does not apply with --sequence-parallel (the activations are already split over TP)";
    else if (lpv && opt.pp == 1)
        err = "--layers-per-virtual-stage needs --pp above 1";
    else if (lpv && (opt.layers / opt.pp) % lpv)
        err = "--layers-per-virtual-stage must divide the layers per stage (--layers / --pp)";
    else if (lpv && lpv < opt.layers / opt.pp && opt.micro_batches % opt.pp)
        err = "--pp must divide --micro-batches with the interleaved schedule";
    else if (!opt.fp16 && opt.loss_scale != 8192)
        err = "--loss-scale applies to --fp16 only";
    else if (opt.tp_overlap && !opt.seq_par)
        err = "--tp-comm-overlap needs --sequence-parallel";
    else if (opt.tp_overlap && opt.tp % 2)
        err = "--tp-comm-overlap needs an even --tp (the TP ring's neighbours are pairs)";
    else if (opt.param_gather_overlap && (!opt.zero1 || opt.ddp_local))
        err = "--overlap-param-gather needs --zero1 and --ddp torch";
    else if (opt.flash && opt.hidden / opt.heads != 64 && opt.hidden / opt.heads != 128)
        err = "--attention flash needs a head dim (--hidden / --heads) of 64 or 128";
    else if (opt.flash && opt.seq % flash::FWD_BM)
        err = "--attention flash needs --seq a multiple of 128";
    if (err) {  // every rank says it: the launcher may stop the others before rank 0 gets to
        fprintf(stderr, "minigpt: %s (WORLD_SIZE %d, tp %d, pp %d, dp %d, heads %d, hidden %d, layers %d, vocab %d, "
                "seq %d, micro-batches %d)\n", err, world, opt.tp, opt.pp, opt.dp, opt.heads, opt.hidden, opt.layers,
                opt.vocab, opt.seq, opt.micro_batches);
        exit(2);
    }
    if (lpv == opt.layers / opt.pp)  // one chunk per stage: plain 1F1B
        opt.layers_per_virtual = 0;
}

// The communicators of the layout: TP fastest, then DP, then PP.
enum Group { G_TP, G_DP, G_PP, G_MP, G_EMB, G_PAIR_EVEN, G_PAIR_ODD };

// Global rank r's color and key in group g (as ncclCommSplit takes them).
static void group_of(Group g, int r, int *color, int *key)
{
    int t = r % opt.tp, d = r / opt.tp % dp, p = r / (opt.tp * dp);
    switch (g) {
    case G_TP: *color = p * dp + d, *key = t; break;
    // neighbours on the TP ring (even TP): pairs (0, 1), (2, 3) ..., and
    // (1, 2), (3, 4) ... (TP-1, 0)
    case G_PAIR_EVEN: *color = (p * dp + d) * opt.tp + t / 2, *key = t; break;
    case G_PAIR_ODD: *color = (p * dp + d) * opt.tp + (t + 1) % opt.tp / 2, *key = t; break;
    case G_DP: *color = p * opt.tp + t, *key = d; break;
    case G_PP: *color = d * opt.tp + t, *key = p; break;
    case G_MP: *color = d, *key = p * opt.tp + t; break;
    // a tied embedding split over stages: the first and last stage's ranks of
    // each (TP, DP) position sum the gradients of their two copies
    case G_EMB:
        *color = p == 0 || p == opt.pp - 1 ? d * opt.tp + t : NCCL_SPLIT_NOCOLOR, *key = p;
        break;
    }
}

// Group g's communicator for this rank: split from the world's, or (with
// --comm-init init-rank) made by ncclCommInitRank from the id of its rank 0
// (the member of the lowest key), which every rank shares over the world
// (an all-gather of each rank's id; zeros from a rank that is no group's
// rank 0). Members are in key order, as new_group orders them. NULL for a
// rank in no group (NOCOLOR).
static ncclComm_t make_comm(Group g)
{
    int color, key;
    group_of(g, rank, &color, &key);
    ncclComm_t c = nullptr;
    if (!opt.comm_init_rank) {
        NCCL_CHECK(ncclCommSplit(world_comm, color, key, &c, nullptr));
        return c;
    }
    int n = 0, me = 0, root = -1, root_key = 0;
    for (int r = 0; r < world; r++) {
        int cr, kr;
        group_of(g, r, &cr, &kr);
        if (color == NCCL_SPLIT_NOCOLOR || cr != color)
            continue;
        n++;
        me += kr < key;
        if (root < 0 || kr < root_key)
            root = r, root_key = kr;
    }
    ncclUniqueId mine = {}, *all = (ncclUniqueId *)calloc((size_t)world, sizeof(ncclUniqueId)), *d_ids;
    if (root == rank)
        NCCL_CHECK(ncclGetUniqueId(&mine));
    CUDA_CHECK(cudaMalloc(&d_ids, (size_t)world * sizeof(ncclUniqueId)));
    CUDA_CHECK(cudaMemcpy(d_ids + rank, &mine, sizeof mine, cudaMemcpyHostToDevice));
    NCCL_CHECK(ncclAllGather(d_ids + rank, d_ids, sizeof mine, ncclChar, world_comm, s_comp));
    CUDA_CHECK(cudaMemcpyAsync(all, d_ids, (size_t)world * sizeof(ncclUniqueId), cudaMemcpyDeviceToHost, s_comp));
    CUDA_CHECK(cudaStreamSynchronize(s_comp));
    if (color != NCCL_SPLIT_NOCOLOR)
        NCCL_CHECK(ncclCommInitRank(&c, n, all[root], me));
    CUDA_CHECK(cudaFree(d_ids));
    free(all);
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
    fp16 = opt.fp16;
    sp = opt.seq_par;
    gsz = fp16 ? 2 : 4;
    cu_e = fp16 ? CUDA_R_16F : CUDA_R_16BF;
    cu_g = fp16 ? CUDA_R_16F : CUDA_R_32F;
    nc_e = fp16 ? ncclFloat16 : ncclBfloat16;
    nc_g = fp16 ? ncclFloat16 : ncclFloat32;
    // Ranks: TP fastest, then DP, then PP (a stage's ranks are neighbours).
    tp_idx = rank % opt.tp;
    dp_idx = rank / opt.tp % dp;
    pp_idx = rank / (opt.tp * dp);
    S = opt.seq;
    B = opt.mbs;
    T = B * S;
    Tl = sp ? T / opt.tp : T;
    H = opt.hidden;
    hl = opt.heads / opt.tp;
    dh = H / opt.heads;
    Hl = hl * dh;
    Fl = 4 * H / opt.tp;
    Vl = opt.vocab / opt.tp;

    int ndev = 0;
    CUDA_CHECK(cudaGetDeviceCount(&ndev));
    CUDA_CHECK(cudaSetDevice(env_int("LOCAL_RANK", 0) % ndev));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s_comp, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s_dp, cudaStreamNonBlocking));
    if (sp)
        CUDA_CHECK(cudaStreamCreateWithFlags(&s_tp, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&ev_dp_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&ev_updated, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&ev_to_tp, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&ev_from_tp, cudaEventDisableTiming));
    if (!own_gemm) {
        LT_CHECK(cublasLtCreate(&lt));
        CUDA_CHECK(cudaMalloc(&lt_workspace, LT_WORKSPACE));
    }

    ncclUniqueId id;
    share_unique_id(&id, rank, world);
    NCCL_CHECK(ncclCommInitRank(&world_comm, world, id, rank));
    tp_comm = make_comm(G_TP);
    if (opt.tp_overlap) {  // an even rank's next neighbour is in its even pair, an odd rank's in its odd pair
        ncclComm_t even = make_comm(G_PAIR_EVEN), odd = make_comm(G_PAIR_ODD);
        tp_next_comm = tp_idx % 2 ? odd : even;
        tp_prev_comm = tp_idx % 2 ? even : odd;
        int me;  // a pair's other member
        NCCL_CHECK(ncclCommUserRank(tp_next_comm, &me));
        tp_next_peer = 1 - me;
        NCCL_CHECK(ncclCommUserRank(tp_prev_comm, &me));
        tp_prev_peer = 1 - me;
    }
    dp_comm = make_comm(G_DP);
    pp_comm = make_comm(G_PP);
    mp_comm = make_comm(G_MP);
    if (opt.tie && opt.pp > 1)
        emb_comm = make_comm(G_EMB);

    build_model();
    dry_run = true;
    run_schedule(0);
    dry_run = false;
    // DP replicas start from the same parameters (as DDP does at start-up);
    // the last stage's copy of a tied embedding starts from the first's
    if (dp > 1)
        for (Chunk &ch : chunks)
            for (Bucket &bk : ch.buckets)
                NCCL_CHECK(ncclBroadcast(W(bk.off), W(bk.off), bk.n, nc_e, 0, dp_comm, s_comp));
    if (emb_comm)
        for (Chunk &ch : chunks)
            if (ch.first || ch.last) {
                size_t w = ch.first ? ch.wte : ch.w_lm;
                if (!ch.first)
                    CUDA_CHECK(cudaMemsetAsync(W(w), 0, (size_t)Vl * H * 2, s_comp));
                NCCL_CHECK(ncclAllReduce(W(w), W(w), (size_t)Vl * H, nc_e, ncclSum, emb_comm, s_comp));
            }
    CUDA_CHECK(cudaStreamSynchronize(s_comp));

    for (int it = 0; it < opt.iters; it++)
        train_iteration(it);

    for (ncclComm_t c : { tp_prev_comm, tp_next_comm, emb_comm, mp_comm, pp_comm, dp_comm, tp_comm, world_comm })
        if (c)
            NCCL_CHECK(ncclCommDestroy(c));
    printf("minigpt rank %d (tp %d/%d pp %d/%d dp %d/%d): %d iterations of %d micro-batches done, %zu parameters here\n",
           rank, tp_idx, opt.tp, pp_idx, opt.pp, dp_idx, dp, opt.iters, opt.micro_batches, params_here);
    return 0;
}

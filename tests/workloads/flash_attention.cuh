// Causal flash attention (FlashAttention-2's algorithm and data layout)
// for minigpt's --attention flash: the scores never reach global memory.
// The forward pass walks each block of 128 queries over the key blocks at
// or before it, with the running row maximum and sum (online softmax) and
// the output accumulators in registers (each warp two 16-row tiles, the
// query fragments read from shared memory again at each key block, as
// FlashAttention-2 does on Hopper), and writes the output and each row's
// log-sum-exp; the backward pass walks each block of 64 keys over the query
// blocks at or after it, recomputing the probabilities from the
// log-sum-exp, with each warp's 16 keys of dK and dV accumulating in
// registers and dQ added into an fp32 buffer with atomics. Four warps a
// block; matrix products are warp-level tensor-core instructions
// (mma.sync m16n8k16, 16-bit inputs, fp32 accumulation) fed by ldmatrix
// from shared tiles; a product's accumulators become the next product's A
// operand in registers (the probabilities for P V). Attention dropout is
// drawn inside, from (seed, head, query, key), so the backward redraws it.
//
// Layouts are minigpt's: the fused QKV [S, B, heads, 3, dh] (tokens [s, b]),
// the output [S, B, heads * dh], the log-sum-exp [B * heads, S]. dh is a
// template parameter (64 or 128); S must be a multiple of 128.
//
// Shared memory (dh 128, 16-bit inputs): forward 68 KiB (Q, K, V tiles),
// backward 77.5 KiB (K, V, Q, dO tiles and dS): more than the default 48
// KiB, so the caller raises the kernels' cudaFuncAttributeMaxDynamicSharedMemorySize.
// Registers (dh 128): the forward keeps 128 output and 64 score values a
// thread, the backward 128 of dK and dV and 64 of S^T and dP^T.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace flash {

constexpr int FWD_BM = 128;  // queries per block of the forward (32 per warp)
constexpr int BM = 64;       // queries per block of the backward (and its dQ tiles)
constexpr int BN = 64;       // keys per block
constexpr int THREADS = 128; // four warps
// Row pitches of the shared tiles, in elements: padded by 16 bytes so that
// the eight 16-byte rows an ldmatrix reads at once fall on different banks
// (a pitch of 128 or 256 bytes would put them all on the same four).
#define FLASH_LDT(HD) ((HD) + 8) // [64, dh] tiles
constexpr int LDP = BN + 8;      // dS [64 keys, 64 queries]
constexpr float LOG2E = 1.4426950408889634f, LN2 = 0.6931471805599453f;

template <class E> __device__ __forceinline__ E fromf(float x);
template <> __device__ __forceinline__ __nv_bfloat16 fromf<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
template <> __device__ __forceinline__ __half fromf<__half>(float x) { return __float2half(x); }
__device__ __forceinline__ float tof(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float tof(__half x) { return __half2float(x); }

// Two values as one 32-bit register of two 16-bit elements (lo first).
template <class E> __device__ __forceinline__ uint32_t pack(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack<__nv_bfloat16>(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *(uint32_t *)&v;
}
template <> __device__ __forceinline__ uint32_t pack<__half>(float lo, float hi)
{
    __half2 v = __floats2half2_rn(lo, hi);
    return *(uint32_t *)&v;
}

// Four 8 x 8 matrices of 16-bit elements from shared memory, lanes 8m..8m+7
// giving the rows of matrix m (ldmatrix); trans: each transposed.
__device__ __forceinline__ void ldsm(uint32_t *r, const void *row)
{
    uint32_t a = (uint32_t)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
__device__ __forceinline__ void ldsm_t(uint32_t *r, const void *row)
{
    uint32_t a = (uint32_t)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}

// c[16 x 8] += a[16 x 16] b[16 x 8]. A lane (group g = lane / 4, t = lane %
// 4) holds c at rows g and g + 8, columns 2t and 2t + 1; a as c's layout
// over two 8-column halves; b at rows 2t, 2t + 1 (and + 8), column g.
template <class E> __device__ __forceinline__ void mma(float *c, const uint32_t *a, uint32_t b0, uint32_t b1);
template <> __device__ __forceinline__ void mma<__nv_bfloat16>(float *c, const uint32_t *a, uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <> __device__ __forceinline__ void mma<__half>(float *c, const uint32_t *a, uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// c[0] and c[1] (two 8-column tiles) += a times the two B fragments one
// ldmatrix x4 gave (f[0], f[1] the first tile's, f[2], f[3] the second's).
template <class E> __device__ __forceinline__ void mma2(float (*c)[4], const uint32_t *a, const uint32_t *f)
{
    mma<E>(c[0], a, f[0], f[1]);
    mma<E>(c[1], a, f[2], f[3]);
}

// The A fragment of k-step kk (16 columns) from a product's accumulators
// over those columns, c[2 kk] and c[2 kk + 1]: the same lanes hold the same
// rows and columns in both layouts.
template <class E> __device__ __forceinline__ void acc_to_a(uint32_t *a, const float (*c)[4], int kk)
{
    a[0] = pack<E>(c[2 * kk][0], c[2 * kk][1]);
    a[1] = pack<E>(c[2 * kk][2], c[2 * kk][3]);
    a[2] = pack<E>(c[2 * kk + 1][0], c[2 * kk + 1][1]);
    a[3] = pack<E>(c[2 * kk + 1][2], c[2 * kk + 1][3]);
}

// Where this lane points ldmatrix in a 16 x 16 block of a row-major tile:
// as an A operand (rows r..r+15 by columns; also B from a [k, n] tile with
// trans), matrices (rows +0, cols +0), (+8, +0), (+0, +8), (+8, +8) ...
__device__ __forceinline__ int a_row(int lane) { return (lane / 8 & 1) * 8 + lane % 8; }
__device__ __forceinline__ int a_col(int lane) { return lane / 16 * 8; }
// ... and as the B operand of two n-tiles from an [n, k] tile (K for Q K^T):
// (+0, +0), (+0, +8), (+8, +0), (+8, +8): b0, b1 of rows n..n+7, then of n+8..
__device__ __forceinline__ int b_row(int lane) { return lane / 16 * 8 + lane % 8; }
__device__ __forceinline__ int b_col(int lane) { return (lane / 8 & 1) * 8; }

// Dropout's multiplier for one probability: 0, or 1 / (1 - p) where kept.
__device__ __forceinline__ float drop(uint32_t seed, uint32_t bh, uint32_t q, uint32_t k, float p)
{
    if (p <= 0)
        return 1.0f;
    uint32_t x = seed ^ (bh * 0x9e3779b9u) ^ (q * 0x85ebca6bu) ^ (k * 0xc2b2ae35u);
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return (x >> 8) * (1.0f / 16777216.0f) >= p ? 1.0f / (1.0f - p) : 0.0f;
}

// Rows [row0, row0 + 64) of one head's dh columns, whose rows are `ld`
// elements apart, into a [64, dh] tile of pitch FLASH_LDT: 16 bytes a load.
template <class E, int HD> __device__ __forceinline__ void load_tile(E *dst, const E *src, size_t ld, int row0)
{
    constexpr int V = HD / 8; // 16-byte pieces per row
    #pragma unroll
    for (int i = threadIdx.x; i < 64 * V; i += THREADS) {
        int r = i / V, c = i % V;
        *(uint4 *)(dst + r * FLASH_LDT(HD) + c * 8) = *(const uint4 *)(src + (size_t)(row0 + r) * ld + c * 8);
    }
}

template <int HD> constexpr size_t fwd_smem(size_t esz) { return (FWD_BM + 2 * BN) * FLASH_LDT(HD) * esz; }
template <int HD> constexpr size_t bwd_smem(size_t esz)
{
    return (4 * BM * FLASH_LDT(HD) + BN * LDP) * esz + 2 * BM * sizeof(float);
}

// grid (S / 128, B * heads), 128 threads, fwd_smem<HD> bytes. As
// FlashAttention-2's forward on Hopper: blocks of 128 queries, each warp
// two 16-row tiles of them (rows 16w.. and 64 + 16w..), so that the K and V
// fragments a warp loads serve both; the query fragments are loaded again
// at each key block (registers hold the output and scores instead).
template <class E, int HD>
__global__ void __launch_bounds__(THREADS)
    fwd(const E *qkv, E *out, float *lse, int S, int B, int hl, float scale, float pdrop, uint32_t seed)
{
    constexpr int LT = FLASH_LDT(HD), KD = HD / 16, MT = FWD_BM / 64;
    extern __shared__ __align__(128) unsigned char smem[];
    E *sq = (E *)smem, *sk = sq + FWD_BM * LT, *sv = sk + BN * LT;
    const int qb = blockIdx.x, bh = blockIdx.y, b = bh / hl, h = bh % hl;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, t = lane % 4;
    const int ar = a_row(lane), ac = a_col(lane), br = b_row(lane), bc = b_col(lane);
    const size_t ld = (size_t)B * hl * 3 * HD;
    const E *q = qkv + ((size_t)b * hl + h) * 3 * HD, *k = q + HD, *v = q + 2 * HD;
    const float scale_log2 = scale * LOG2E;
    // this lane's rows: q0[i] and q0[i] + 8 of each of the warp's tiles
    int q0[MT];
    #pragma unroll
    for (int i = 0; i < MT; i++)
        q0[i] = qb * FWD_BM + i * 64 + warp * 16 + lane / 4;

    #pragma unroll
    for (int half = 0; half < FWD_BM / 64; half++)
        load_tile<E, HD>(sq + half * 64 * LT, q, ld, qb * FWD_BM + half * 64);
    float o[MT][HD / 8][4] = {}, m[MT][2], l[MT][2] = {};
    #pragma unroll
    for (int i = 0; i < MT; i++)
        m[i][0] = m[i][1] = -INFINITY;
    // the key blocks at or before the last query of the block
    for (int kb = 0; kb < (qb + 1) * FWD_BM / BN; kb++) {
        __syncthreads();
        load_tile<E, HD>(sk, k, ld, kb * BN);
        load_tile<E, HD>(sv, v, ld, kb * BN);
        __syncthreads();
        // scores: Q K^T, the warp's rows x 64 keys
        float s[MT][BN / 8][4] = {};
        #pragma unroll
        for (int kd = 0; kd < KD; kd++) {
            uint32_t qa[MT][4];
            #pragma unroll
            for (int i = 0; i < MT; i++)
                ldsm(qa[i], sq + (i * 64 + warp * 16 + ar) * LT + kd * 16 + ac);
            #pragma unroll
            for (int np = 0; np < BN / 16; np++) {
                uint32_t kf[4];
                ldsm(kf, sk + (np * 16 + br) * LT + kd * 16 + bc);
                #pragma unroll
                for (int i = 0; i < MT; i++)
                    mma2<E>(&s[i][2 * np], qa[i], kf);
            }
        }
        // online softmax in base 2 with the scale folded in (FlashAttention-
        // 2's exp2): the causal mask, on the key blocks that reach past a
        // tile's first row only; the rows' new maxima (over the four lanes of
        // a row); the probabilities; the correction of what the rows summed
        // and accumulated so far. Every row has a key in the first block, so
        // the maxima are finite from there on (exp2 of -inf is 0).
        #pragma unroll
        for (int i = 0; i < MT; i++) {
            const bool diagonal = kb * BN + BN - 1 > qb * FWD_BM + i * 64 + warp * 16;
            float mx[2] = { -INFINITY, -INFINITY };
            #pragma unroll
            for (int n = 0; n < BN / 8; n++)
                #pragma unroll
                for (int e = 0; e < 4; e++) {
                    s[i][n][e] *= scale_log2;
                    if (diagonal && kb * BN + n * 8 + 2 * t + (e & 1) > q0[i] + e / 2 * 8)
                        s[i][n][e] = -INFINITY;
                    mx[e / 2] = fmaxf(mx[e / 2], s[i][n][e]);
                }
            float corr[2];
            #pragma unroll
            for (int r = 0; r < 2; r++) {
                mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
                mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
                float mn = fmaxf(m[i][r], mx[r]);
                corr[r] = exp2f(m[i][r] - mn);
                m[i][r] = mn;
                l[i][r] *= corr[r];
            }
            #pragma unroll
            for (int n = 0; n < BN / 8; n++)
                #pragma unroll
                for (int e = 0; e < 4; e++) {
                    float p = exp2f(s[i][n][e] - m[i][e / 2]);
                    l[i][e / 2] += p;
                    s[i][n][e] = p * drop(seed, bh, q0[i] + e / 2 * 8, kb * BN + n * 8 + 2 * t + (e & 1), pdrop);
                }
            #pragma unroll
            for (int n = 0; n < HD / 8; n++)
                o[i][n][0] *= corr[0], o[i][n][1] *= corr[0], o[i][n][2] *= corr[1], o[i][n][3] *= corr[1];
        }
        // O += P V: the probabilities' accumulators are P's A fragments
        #pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) {
            uint32_t pa[MT][4];
            #pragma unroll
            for (int i = 0; i < MT; i++)
                acc_to_a<E>(pa[i], s[i], kk);
            #pragma unroll
            for (int dp = 0; dp < KD; dp++) {
                uint32_t vf[4];
                ldsm_t(vf, sv + (kk * 16 + ar) * LT + dp * 16 + ac);
                #pragma unroll
                for (int i = 0; i < MT; i++)
                    mma2<E>(&o[i][2 * dp], pa[i], vf);
            }
        }
    }
    const size_t ldg = (size_t)B * hl * HD;
    E *ob = out + ((size_t)b * hl + h) * HD;
    #pragma unroll
    for (int i = 0; i < MT; i++)
        #pragma unroll
        for (int r = 0; r < 2; r++) {
            float sum = l[i][r];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            size_t row = q0[i] + r * 8;
            #pragma unroll
            for (int n = 0; n < HD / 8; n++)
                *(uint32_t *)(ob + row * ldg + n * 8 + 2 * t) = pack<E>(o[i][n][2 * r] / sum, o[i][n][2 * r + 1] / sum);
            if (t == 0)  // in base e
                lse[(size_t)bh * S + row] = (m[i][r] + log2f(sum)) * LN2;
        }
}

// D = rowsum(dO * O) per (head, query), and dQ's fp32 accumulator zeroed:
// one warp a row. grid (B * heads * S / 4), 128 threads.
template <class E, int HD>
__global__ void bwd_prep(const E *out, const E *dout, float *dsum, float *dq_acc, int S, int B, int hl)
{
    size_t row = (size_t)blockIdx.x * 4 + threadIdx.x / 32; // bh * S + s
    int lane = threadIdx.x % 32, s = (int)(row % S), bh = (int)(row / S), b = bh / hl, h = bh % hl;
    size_t at = ((size_t)s * B + b) * hl * HD + (size_t)h * HD;
    float acc = 0;
    for (int c = lane; c < HD; c += 32) {
        acc += tof(out[at + c]) * tof(dout[at + c]);
        dq_acc[row * HD + c] = 0;
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0)
        dsum[row] = acc;
}

// grid (S / 64, B * heads), 128 threads, bwd_smem<HD> bytes. dK and dV go
// into dqkv's K and V places; dQ is added into dq_acc [B * heads, S, dh]
// (bwd_dq writes it out). Each warp owns 16 keys: their rows of S^T = K Q^T
// and dP^T = V dO^T over the query block, and their dK and dV.
template <class E, int HD>
__global__ void __launch_bounds__(THREADS)
    bwd(const E *qkv, const E *dout, const float *lse, const float *dsum, float *dq_acc, E *dqkv, int S, int B,
        int hl, float scale, float pdrop, uint32_t seed)
{
    constexpr int LT = FLASH_LDT(HD), KD = HD / 16;
    extern __shared__ __align__(128) unsigned char smem[];
    E *sk = (E *)smem, *sv = sk + BN * LT, *sq = sv + BN * LT, *sdo = sq + BM * LT, *sds = sdo + BM * LT;
    float *slse = (float *)(sds + BN * LDP), *sD = slse + BM;
    const int kb = blockIdx.x, bh = blockIdx.y, b = bh / hl, h = bh % hl, nq = S / BM;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, t = lane % 4;
    const int ar = a_row(lane), ac = a_col(lane), br = b_row(lane), bc = b_col(lane);
    const size_t ld = (size_t)B * hl * 3 * HD, ldg = (size_t)B * hl * HD;
    const E *q = qkv + ((size_t)b * hl + h) * 3 * HD, *k = q + HD, *v = q + 2 * HD;
    const E *dob = dout + ((size_t)b * hl + h) * HD;
    const int kl = warp * 16 + lane / 4, k0 = kb * BN + kl; // this lane's keys: k0 and k0 + 8
    const float scale_log2 = scale * LOG2E;

    load_tile<E, HD>(sk, k, ld, kb * BN);
    load_tile<E, HD>(sv, v, ld, kb * BN);
    float dk[HD / 8][4] = {}, dv[HD / 8][4] = {};
    for (int qb = kb; qb < nq; qb++) {
        __syncthreads();
        load_tile<E, HD>(sq, q, ld, qb * BM);
        load_tile<E, HD>(sdo, dob, ldg, qb * BM);
        if (threadIdx.x < BM) {  // the log-sum-exp in base 2
            slse[threadIdx.x] = lse[(size_t)bh * S + qb * BM + threadIdx.x] * LOG2E;
            sD[threadIdx.x] = dsum[(size_t)bh * S + qb * BM + threadIdx.x];
        }
        __syncthreads();
        // S^T = K Q^T and dP^T = V dO^T: the warp's 16 keys x 64 queries
        float st[BM / 8][4] = {}, dpt[BM / 8][4] = {};
        #pragma unroll
        for (int kd = 0; kd < KD; kd++) {
            uint32_t ka[4], va[4];
            ldsm(ka, sk + (warp * 16 + ar) * LT + kd * 16 + ac);
            ldsm(va, sv + (warp * 16 + ar) * LT + kd * 16 + ac);
            #pragma unroll
            for (int np = 0; np < BM / 16; np++) {
                uint32_t f[4];
                ldsm(f, sq + (np * 16 + br) * LT + kd * 16 + bc);
                mma2<E>(&st[2 * np], ka, f);
                ldsm(f, sdo + (np * 16 + br) * LT + kd * 16 + bc);
                mma2<E>(&dpt[2 * np], va, f);
            }
        }
        // P^T from the log-sum-exp (causal: queries at or after the key,
        // masked on the diagonal block only); st becomes the dropped-out P^T
        // (for dV), dpt becomes dS^T = P^T (dP^T Z - D)
        const bool diagonal = qb == kb;
        #pragma unroll
        for (int n = 0; n < BM / 8; n++)
            #pragma unroll
            for (int e = 0; e < 4; e++) {
                int ql = n * 8 + 2 * t + (e & 1), qi = qb * BM + ql, key = k0 + e / 2 * 8;
                float p = diagonal && key > qi ? 0.0f : exp2f(st[n][e] * scale_log2 - slse[ql]);
                float z = drop(seed, bh, qi, key, pdrop);
                st[n][e] = p * z;
                dpt[n][e] = p * (dpt[n][e] * z - sD[ql]);
            }
        // dV += (dropped P)^T dO and dK += dS^T Q, the accumulators as A
        #pragma unroll
        for (int kk = 0; kk < BM / 16; kk++) {
            uint32_t pa[4], sa[4];
            acc_to_a<E>(pa, st, kk);
            acc_to_a<E>(sa, dpt, kk);
            #pragma unroll
            for (int dp = 0; dp < KD; dp++) {
                uint32_t f[4];
                ldsm_t(f, sdo + (kk * 16 + ar) * LT + dp * 16 + ac);
                mma2<E>(&dv[2 * dp], pa, f);
                ldsm_t(f, sq + (kk * 16 + ar) * LT + dp * 16 + ac);
                mma2<E>(&dk[2 * dp], sa, f);
            }
        }
        // dS^T into shared memory [key, query], for dQ = dS K over all the
        // block's keys
        #pragma unroll
        for (int n = 0; n < BM / 8; n++)
            #pragma unroll
            for (int r = 0; r < 2; r++)
                *(uint32_t *)(sds + (kl + r * 8) * LDP + n * 8 + 2 * t) = pack<E>(dpt[n][2 * r], dpt[n][2 * r + 1]);
        __syncthreads();
        // the warp's 16 queries of dQ, half of dh at a time, added into the
        // fp32 accumulator (dS as A: transposed from its [key, query] tile)
        #pragma unroll
        for (int half = 0; half < 2; half++) {
            float dq[HD / 16][4] = {};
            #pragma unroll
            for (int kk = 0; kk < BN / 16; kk++) {
                uint32_t a[4];
                ldsm_t(a, sds + (kk * 16 + br) * LDP + warp * 16 + bc);
                #pragma unroll
                for (int dp = 0; dp < KD / 2; dp++) {
                    uint32_t f[4];
                    ldsm_t(f, sk + (kk * 16 + ar) * LT + half * HD / 2 + dp * 16 + ac);
                    mma2<E>(&dq[2 * dp], a, f);
                }
            }
            #pragma unroll
            for (int n = 0; n < HD / 16; n++)
                #pragma unroll
                for (int e = 0; e < 4; e++) {
                    size_t row = (size_t)bh * S + qb * BM + warp * 16 + lane / 4 + e / 2 * 8;
                    atomicAdd(dq_acc + row * HD + half * HD / 2 + n * 8 + 2 * t + (e & 1), dq[n][e] * scale);
                }
        }
    }
    // dK (scaled) and dV of this lane's keys into dqkv
    E *dkb = dqkv + ((size_t)b * hl + h) * 3 * HD + HD;
    #pragma unroll
    for (int r = 0; r < 2; r++) {
        size_t key = k0 + r * 8;
        #pragma unroll
        for (int n = 0; n < HD / 8; n++) {
            *(uint32_t *)(dkb + key * ld + n * 8 + 2 * t) = pack<E>(dk[n][2 * r] * scale, dk[n][2 * r + 1] * scale);
            *(uint32_t *)(dkb + key * ld + HD + n * 8 + 2 * t) = pack<E>(dv[n][2 * r], dv[n][2 * r + 1]);
        }
    }
}

// dQ from its fp32 accumulator into dqkv's Q place. grid over B*heads*S*dh.
template <class E, int HD> __global__ void bwd_dq(const float *dq_acc, E *dqkv, int S, int B, int hl)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x, n = (size_t)B * hl * S * HD;
    if (i >= n)
        return;
    int c = (int)(i % HD), s = (int)(i / HD % S), bh = (int)(i / ((size_t)HD * S)), b = bh / hl, h = bh % hl;
    dqkv[(((size_t)s * B + b) * hl + h) * 3 * HD + c] = fromf<E>(dq_acc[i]);
}

} // namespace flash

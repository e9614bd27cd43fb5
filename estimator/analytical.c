/* The analytical model: durations from the hwspec figures (peaks, bandwidths,
 * latencies) and the physics of each op. It answers for every GPU, and is
 * what the learned models fall back to outside their data.
 *
 * The calibrated constants (est_calib) were fitted by `maya-est-train
 * --calibrate` (estimator/train/maya_est_train.c) on the committed tables in
 * estimator/data/ (see estimator/data/SOURCE.md for where they come from);
 * rerun it after changing this file and paste what it prints.
 */
#include <math.h>

#include "est_internal.h"

/* ---- calibrated constants ---- */
struct est_calib est_calib = {
    /* GEMM: efficiency = gemm_eff_max * SM fill * small-tile penalty *
     * k/(k + gemm_k_half) (est_gemm_efficiency), plus a fixed
     * gemm_overhead_ns, at least perf.kernel_floor_ns. Fitted on
     * the XLA sm_90 b=1 grid (H100) and the vidur GEMMs (A100, H100, A40). The
     * overhead comes out ~0: vidur times are kernel durations from the
     * profiler, with no launch gaps, and the floor covers tiny GEMMs. */
    .gemm_eff_max = 0.8027,
    .gemm_k_half = 150,
    .gemm_overhead_ns = 0,
    .gemm_small_tile_exp = 0.8109,
    /* skinny GEMMs (few tokens) stream the weights: share of the measured
     * copy bandwidth they reach */
    .gemm_mem_eff = 0.8164,
    /* the same on CUDA cores (est_simt), fitted on DeepBench's V100 fp32
     * GEMMs (estimator/data/gemm_simt.csv) */
    .gemm_eff_max_simt = 0.9466,
    .gemm_k_half_simt = 151.3,
    .gemm_small_tile_exp_simt = 0.23,
    /* Fused attention forward: share of the tensor-core peak, as published
     * for training kernels (FlashAttention-2 on A100: 50-70%). Not the fitted
     * value: the only data (vidur A100) is vLLM's paged inference attention,
     * which fits 0.23; the learned A100 model covers that one. */
    .attn_eff_fwd = 0.5,
    /* Memory-bound kernels reach this fraction of the measured copy bandwidth
     * (fitted on the vidur normalisation/activation/add kernels, which are
     * small enough that launch tails matter). */
    .mem_eff = 0.6593,
    /* PCIe rings (collectives.c): share of PCIe bandwidth a ring reaches,
     * fitted on the vidur all-reduces of PCIe-linked nodes (pairwise A40
     * and A100 VMs, estimator/data); NVLink and NIC figures are published
     * ones (collectives.c). */
    .ring_eff_pcie = 0.7684,
};
#define GEMM_EFF_MAX     est_calib.gemm_eff_max
#define GEMM_K_HALF      est_calib.gemm_k_half
#define GEMM_OVERHEAD_NS est_calib.gemm_overhead_ns
#define MEM_EFF          est_calib.mem_eff
/* Pageable host memory is staged through a pinned buffer by the driver;
 * measured pageable copies run at roughly half the pinned rate. */
#define PAGEABLE_FACTOR  0.5
/* Host-to-host memcpy, one thread. */
#define HOST_MEMCPY_GBPS 10.0

double est_peak_flops(const struct maya_gpu_spec *g, enum est_prec p)
{
    const struct maya_gpu_perf *f = &g->perf;
    double tf = f->fp32_tflops;
    switch (p) {
    case EST_P_FP64: tf = f->fp64_tensor_tflops > 0 ? f->fp64_tensor_tflops : f->fp64_tflops; break;
    case EST_P_FP32: tf = f->fp32_tflops; break;
    case EST_P_TF32: tf = f->tf32_tflops > 0 ? f->tf32_tflops : f->fp32_tflops; break;
    case EST_P_FP16: tf = f->fp16_tflops > 0 ? f->fp16_tflops : f->fp32_tflops; break;
    case EST_P_BF16: tf = f->bf16_tflops > 0 ? f->bf16_tflops : f->fp32_tflops; break;
    case EST_P_FP8:  /* no FP8 units (A100, V100): runs as FP16 */
        tf = f->fp8_tflops > 0 ? f->fp8_tflops : f->fp16_tflops > 0 ? f->fp16_tflops : f->fp32_tflops;
        break;
    case EST_P_INT8: tf = f->int8_tops > 0 ? f->int8_tops : f->fp32_tflops; break;
    default: break;
    }
    if (tf <= 0)
        tf = 1; /* a GPU file without figures: answer something finite */
    return tf * 1e12;
}

static double mem_bw(const struct maya_gpu_spec *g)
{
    double gbps = g->perf.hbm_measured_gbps > 0 ? g->perf.hbm_measured_gbps : g->perf.hbm_gbps;
    return (gbps > 0 ? gbps : 100) * 1e9;
}

static double floor_ns(const struct maya_gpu_spec *g)
{
    return g->perf.kernel_floor_ns > 0 ? g->perf.kernel_floor_ns : 2000;
}

int est_simt(const struct maya_gpu_spec *g, enum est_prec p)
{
    const struct maya_gpu_perf *f = &g->perf;
    switch (p) {
    case EST_P_FP32: return 1;
    case EST_P_TF32: return f->tf32_tflops <= 0;         /* V100: float math stays fp32 */
    case EST_P_FP64: return f->fp64_tensor_tflops <= 0;
    case EST_P_FP16: return f->fp16_tflops <= 0;
    case EST_P_BF16: return f->bf16_tflops <= 0;         /* V100 has no bf16 tensor cores */
    default: return 0;                                   /* fp8, int8: on the fp16 units where missing */
    }
}

static double pow2ceil(double x)
{
    double p = 1;
    while (p < x)
        p *= 2;
    return p;
}

/* Share of the GPU's peak a GEMM reaches. Output tiles spread over the SMs
 * in waves, the last wave partly empty. cuBLAS's tiles: 128 x 128 (Ampere
 * and older, CUDA cores) or 128 x 256 (Hopper and later tensor cores) for
 * large problems, smaller ones (down to 16) for skinny problems, which run
 * less efficiently per SM (gemm_small_tile_exp); when the tiles do not fill
 * the SMs, split-k over chunks of at least 128 fills more. Short k leaves
 * the pipeline filling (k/(k + gemm_k_half) per split). */
double est_gemm_efficiency(const struct maya_gpu_spec *g, const struct est_desc *d)
{
    double sms = g->prop.multiProcessorCount > 0 ? g->prop.multiProcessorCount : 1;
    int simt = est_simt(g, d->prec);
    double tm_max = 128, tn_max = (g->prop.major >= 9 && !simt) ? 256 : 128;
    double m = d->m > 1 ? d->m : 1, n = d->n > 1 ? d->n : 1, k = d->k > 1 ? d->k : 1;
    double b = d->batch > 1 ? d->batch : 1;
    double tm = fmin(tm_max, fmax(16, pow2ceil(m))), tn = fmin(tn_max, fmax(16, pow2ceil(n)));
    double tiles = ceil(m / tm) * ceil(n / tn) * b;
    double split = 1;
    if (tiles < sms)
        split = fmax(1, fmin(floor(sms / tiles), floor(k / 128)));
    double units = tiles * split, waves = ceil(units / sms);
    double fill = (m * n * b) / (tiles * tm * tn) * units / (waves * sms);
    /* CUDA cores have constants of their own: their GEMMs need less reuse
     * of each operand than tensor cores (16 times less work per clock), so
     * small tiles and short k cost them less */
    double tile_eff = pow(tm * tn / (tm_max * tn_max),
                          simt ? est_calib.gemm_small_tile_exp_simt : est_calib.gemm_small_tile_exp);
    double kk = k / split;
    return (simt ? est_calib.gemm_eff_max_simt : GEMM_EFF_MAX) * fill * tile_eff * kk /
           (kk + (simt ? est_calib.gemm_k_half_simt : GEMM_K_HALF));
}

/* Winograd's F(2x2, 3x3) computes a 2x2 output tile of a 3x3 filter with
 * 16 multiplications instead of 36: cuDNN runs 3x3 stride-1 convolutions so
 * on CUDA cores (its WINOGRAD algorithms; on tensor cores it keeps the
 * implicit GEMM). */
#define WINOGRAD_F2X3_GAIN (36.0 / 16.0)

static double gemm_ns(const struct maya_gpu_spec *g, const struct est_desc *d)
{
    if (d->flops <= 0)
        return floor_ns(g);
    double flops = d->family == EST_CONV && d->winograd && est_simt(g, d->prec) ? d->flops / WINOGRAD_F2X3_GAIN
                                                                                  : d->flops;
    double t_c = flops / (est_peak_flops(g, d->prec) * est_gemm_efficiency(g, d));
    double t_m = d->bytes / (mem_bw(g) * est_calib.gemm_mem_eff);
    return fmax(floor_ns(g), fmax(t_c, t_m) * 1e9 + GEMM_OVERHEAD_NS);
}

/* Fused attention: a share of the tensor-core peak (attn_eff_fwd; the
 * backward pass runs at 0.8 of that, FlashAttention-2's ratio), or the
 * time to stream Q, K, V and O (decode). */
static double attention_ns(const struct maya_gpu_spec *g, const struct est_desc *d)
{
    double eff = est_calib.attn_eff_fwd * (d->backward ? 0.8 : 1);
    double t_c = d->flops / (est_peak_flops(g, d->prec) * eff);
    double t_m = d->bytes / (mem_bw(g) * est_calib.gemm_mem_eff);
    return fmax(floor_ns(g), fmax(t_c, t_m) * 1e9 + GEMM_OVERHEAD_NS);
}

static double mem_ns(const struct maya_gpu_spec *g, double bytes)
{
    return floor_ns(g) + bytes / (mem_bw(g) * MEM_EFF) * 1e9;
}

void est_links_get(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c,
                   struct est_links *l)
{
    double pcie = g->perf.pcie_gbps > 0 ? g->perf.pcie_gbps : 16;
    double nvlink = c && c->nvlink_gbps > 0 ? c->nvlink_gbps : g->perf.nvlink_gbps;
    l->intra = c ? c->intra : MAYA_LINK_NVSWITCH;
    if (nvlink <= 0)
        l->intra = MAYA_LINK_PCIE;
    l->intra_gbps = l->intra == MAYA_LINK_PCIE ? pcie : nvlink;
    l->intra_lat_us = c && c->intra_latency_us > 0 ? c->intra_latency_us : 1;
    int nics = c && c->nics_per_node > 0 ? c->nics_per_node : 8;
    double nic = c && c->nic_gbps > 0 ? c->nic_gbps : 50;
    int gpn = c && c->gpus_per_node > 0 ? c->gpus_per_node : 8;
    /* Each GPU has its share of the node's NICs (a rail each on DGX). */
    l->inter_gbps = nic * nics / gpn;
    if (l->inter_gbps > nic * nics)
        l->inter_gbps = nic * nics;
    l->inter_lat_us = c && c->nic_latency_us > 0 ? c->nic_latency_us : 5;
    l->nvls = c ? c->nvls : 0;
}

static double copy_ns(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c,
                      const struct est_desc *d)
{
    const struct maya_gpu_perf *f = &g->perf;
    double S = d->bytes, gbps;
    switch (d->copy_kind) {
    case MAYA_COPY_H2D:
        gbps = f->pcie_h2d_gbps > 0 ? f->pcie_h2d_gbps : f->pcie_gbps * 0.8;
        if (!d->pinned)
            gbps *= PAGEABLE_FACTOR;
        break;
    case MAYA_COPY_D2H:
        gbps = f->pcie_d2h_gbps > 0 ? f->pcie_d2h_gbps : f->pcie_gbps * 0.8;
        if (!d->pinned)
            gbps *= PAGEABLE_FACTOR;
        break;
    case MAYA_COPY_D2D: /* read and write the same memory */
        return floor_ns(g) + 2 * S / mem_bw(g) * 1e9;
    case MAYA_COPY_PEER: {
        struct est_links l;
        est_links_get(g, c, &l);
        gbps = est_peer_copy_gbps(g, c);
        return floor_ns(g) + l.intra_lat_us * 1e3 + S / (gbps * 1e9) * 1e9;
    }
    default: /* host to host */
        return 1000 + S / (HOST_MEMCPY_GBPS * 1e9) * 1e9;
    }
    if (gbps <= 0)
        gbps = 10;
    return floor_ns(g) + S / (gbps * 1e9) * 1e9;
}

double est_analytical_ns(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c,
                         const struct est_desc *d)
{
    switch (d->family) {
    case EST_GEMM: case EST_BATCHED_GEMM: case EST_CONV:
        return gemm_ns(g, d);
    case EST_ATTENTION:
        return attention_ns(g, d);
    case EST_KERNEL: /* the work its code does; without code, bytes guessed from its arguments */
        return d->code ? est_kwork_ns(g, &d->work) : mem_ns(g, d->bytes);
    case EST_MEMSET:
        return mem_ns(g, d->bytes);
    case EST_COPY:
        return copy_ns(g, c, d);
    case EST_ALLREDUCE: case EST_ALLGATHER: case EST_REDUCESCATTER: case EST_BROADCAST:
    case EST_ALLTOALL: case EST_SENDRECV:
        return est_coll_ns(g, c, d, NULL);
    default:
        return 0;
    }
}

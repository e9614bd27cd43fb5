/* Inside the estimator: what every model works from.
 *
 * An op is first described (describe.c): its family and the physics of it
 * (FLOPs, bytes, shapes, precision, participants, links). The analytical
 * model (analytical.c), the learned models (learned.c, features.c) and the
 * training tool all start from this description, so a model trained on
 * measured data sees exactly the numbers it is later asked about.
 */
#ifndef EST_INTERNAL_H
#define EST_INTERNAL_H

#include <stdint.h>

#include "maya/estimator.h"
#include "maya/hwspec.h"

/* Arithmetic a GEMM or convolution runs in: selects the peak. */
enum est_prec {
    EST_P_FP64, EST_P_FP32, EST_P_TF32, EST_P_FP16, EST_P_BF16, EST_P_FP8, EST_P_INT8,
    EST_NPREC
};

/* What a memory-bound kernel does, from its name or cuDNN op: kernels of one
 * class move their bytes alike. 0 = unknown. */
enum est_kclass {
    EST_KC_UNKNOWN, EST_KC_ELEMENTWISE, EST_KC_NORM, EST_KC_ACT, EST_KC_ROTARY, EST_KC_SOFTMAX,
    EST_KC_REDUCE,
};

/* A launch's work read from its kernel's code (kernel_cost.c): totals
 * over all its threads, by class (enum maya_kw_class). */
struct est_kwork {
    double amount[MAYA_KW_NCLASSES];
    double dram_bytes;       /* global bytes that reach DRAM (per pointer: at most its extent) */
    /* A block's later passes over its own slice of a pointer's allocation
     * (a softmax's sum, then its normalisation, of one row): the loads beyond
     * the extent that dram_bytes leaves to L2, and the bytes of the slices
     * one block streams between its passes (extent / blocks, over such
     * pointers). est_kwork_times decides how many L2 holds. */
    double reread_bytes, reread_slice;
    /* DRAM-bound loads (of dram_bytes, loads through pointers and bounded
     * by their extents), and the bytes a thread keeps in flight for them:
     * the loads that one pass of the loop body holding them issues (those of
     * its terms under the same loops), averaged over those bytes; 0 when
     * the kernel loads nothing from DRAM */
    double dram_load_bytes, load_in_flight;
    double threads, blocks, threads_per_block;
    int regs, smem_bytes;    /* per thread / per block (static + dynamic); 0 unknown */
    int source, flags;       /* enum maya_kw_source, MAYA_KW_F_* */
    int unresolved;          /* terms whose multiplier did not evaluate (counted once) */
    /* per class: the most work a block does over the mean block's (1:
     * blocks alike; over 16 sampled blocks, where work follows %ctaid) */
    double block_spread[MAYA_KW_NCLASSES];
};

/* What a launch tells about its pointers (from its LAUNCH record). */
struct est_kwork_ctx {
    const struct maya_kextent *extents;
    uint32_t nextents;
};

/* The time of each unit for a launch's work, and the one that bounds it. */
struct est_kwork_times {
    double dram_ns, l2_ns, fp_ns, mma_ns, sfu_ns, smem_ns, issue_ns;
    double staged_ns;        /* warp-level MMA kernels: shared memory and issue in series */
    double fill, mem_fill;   /* share of the compute units kept busy; of DRAM bandwidth reached */
    double blocks_per_sm, waves;
    double total_ns;         /* with the kernel floor */
    const char *bound;       /* "dram", "l2", "fp", "tensor", "sfu", "shared", "issue", "staging" */
};

struct est_desc {
    enum est_family family;
    /* compute: GEMM (m n k batch), convolution as its implicit GEMM, attention */
    enum est_prec prec;
    int elem_bytes;          /* size of one input element */
    double m, n, k, batch;
    double flops;
    double bytes;            /* bytes moved to and from device memory, at least */
    int bytes_known;         /* KERNEL: 0 when the parameters did not tell */
    double threads;          /* KERNEL: grid x block */
    enum est_kclass kclass;  /* KERNEL */
    int code;                /* KERNEL: work read from the kernel's code (work below) */
    int fallback;            /* KERNEL: no code: priced by the rule over its arguments */
    struct est_kwork work;
    /* attention */
    double heads, seq_q, seq_kv, head_dim;
    int causal, backward;
    /* convolutions: a 3x3 filter at stride 1 (no dilation, no groups), which
     * cuDNN can run as Winograd's F(2x2, 3x3) on CUDA cores */
    int winograd;
    /* copies */
    int copy_kind;           /* enum maya_copy_kind */
    int pinned;
    /* collectives */
    int coll_op;             /* enum maya_coll_op */
    int nranks, nodes, ranks_per_node;
    int comm_ranks;          /* the communicator's ranks (a send/recv's nranks is 2) */
    int both_ways;           /* send/recv: its rank also sends and receives in the group */
};

/* The links a collective or peer copy uses (from cluster and GPU). */
struct est_links {
    double intra_gbps;       /* per GPU per direction inside a node, at the link's rate */
    double intra_lat_us;
    enum maya_intra_link intra;
    double inter_gbps;       /* per GPU per direction across nodes */
    double inter_lat_us;
    int nvls;
};

struct est_oracle;
struct est_learned;
struct est_measured;

struct estimator {
    struct maya_gpu_spec gpu;
    struct maya_cluster_spec cluster;
    enum est_model model[EST_NFAMILIES];
    struct est_oracle *oracle;
    struct est_measured *measured;       /* est_config.profile_dir */
    struct est_learned *learned;
};

/* describe.c: place an op in a family and work out its physics. */
int est_describe(const struct est_op *op, struct est_desc *d);
enum est_prec est_prec_from_cuda(int atype, int compute_type);
enum est_prec est_prec_from_cudnn(int dtype, int compute_type);
int est_prec_parse(const char *s);          /* "bf16", "fp32", ...; -1 if none */
enum est_kclass est_kclass_of_name(const char *kernel_name);
const char *est_prec_name(enum est_prec p);
int est_prec_bytes(enum est_prec p);
/* Attention: batch, query heads, KV heads, query and key lengths, head dim. */
void est_desc_attention(struct est_desc *d, double b, double heads, double kv_heads, double sq,
                        double skv, double hd, int causal, int backward, enum est_prec p);
/* Fill the derived fields (flops, bytes) of a GEMM description from m n k batch. */
void est_desc_gemm(struct est_desc *d, double m, double n, double k, double batch, enum est_prec p);

/* analytical.c: calibrated constants (see analytical.c for their sources;
 * maya-est-train --calibrate refits them). */
struct est_calib {
    double gemm_eff_max, gemm_k_half, gemm_overhead_ns, gemm_small_tile_exp, gemm_mem_eff, mem_eff;
    /* the same for GEMMs on CUDA cores (fp32 math: est_simt) */
    double gemm_eff_max_simt, gemm_k_half_simt, gemm_small_tile_exp_simt;
    double attn_eff_fwd;
    double ring_eff_pcie;   /* share of PCIe a ring reaches (collectives.c) */
};
extern struct est_calib est_calib;

double est_peak_flops(const struct maya_gpu_spec *g, enum est_prec p);
/* Does this precision run on CUDA cores (SIMT) rather than tensor cores on
 * this GPU (fp32 math, and any precision the GPU has no tensor-core peak
 * for)? */
int est_simt(const struct maya_gpu_spec *g, enum est_prec p);
void est_links_get(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c,
                   struct est_links *l);
double est_gemm_efficiency(const struct maya_gpu_spec *g, const struct est_desc *d);
double est_analytical_ns(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c,
                         const struct est_desc *d);

/* kernel_cost.c: a launch's work from its kernel's summary, and its time. */
int est_kwork_eval(const struct maya_kwork *w, const struct maya_rec_launch *l, const struct est_kwork_ctx *ctx,
                   struct est_kwork *out);
void est_kwork_times(const struct maya_gpu_spec *g, const struct est_kwork *k, struct est_kwork_times *t);
double est_kwork_ns(const struct maya_gpu_spec *g, const struct est_kwork *k);

/* collectives.c: NCCL's choice of algorithm and protocol, and its time. */
struct est_coll_plan {
    const char *algo;        /* "ring", "tree", "nvls", "nvls_tree", "pat", "p2p", "local" */
    const char *proto;       /* "LL", "LL128", "Simple" */
    double lat_us;           /* the latency part of the time (kernel launch included); the
                                rest moves bytes */
    int narrowed;            /* the job's NCCL_ALGO / NCCL_PROTO changed NCCL's own choice */
    double bytes;            /* the operation's size as nccl-tests counts it: the buffer
                                (all-reduce, broadcast, reduce), n pieces (all-gather,
                                reduce-scatter, all-to-all, gather, scatter), the message */
    int ctas;                /* the SMs its kernel holds while it runs (collectives) */
};
/* Device time (ns) of a collective or send/recv described by d; plan (may
 * be NULL) says what NCCL would run. */
double est_coll_ns(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c, const struct est_desc *d,
                   struct est_coll_plan *plan);
/* nccl_env.c: the job's NCCL_ALGO / NCCL_PROTO. Algorithms are numbered
 * tree, ring, nvls, nvls_tree, pat; protocols LL, LL128, Simple. */
enum { EST_NCCL_ALGOS = 5, EST_NCCL_PROTOS = 3 };
int est_nccl_env_restricted(void);          /* 1: either variable is set */
int est_nccl_env_allows(int coll_op, int algo, int proto);

/* GB/s one copy between two GPUs of a node reaches (cudaMemcpyPeer). */
double est_peer_copy_gbps(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c);

/* host.c: host time an API call costs on a real system. */
double est_host_ns(const struct maya_gpu_spec *g, const struct est_op *op);

/* oracle.c */
int est_oracle_load(const char *path, struct est_oracle **out);
void est_oracle_free(struct est_oracle *o);
/* Set *dev_ns and *host_ns from the most specific rules giving each, or
 * to -1 where no rule does. Returns 0, or -1 on error. */
int est_oracle_lookup(struct est_oracle *o, const struct est_op *op, int64_t *dev_ns,
                      int64_t *host_ns);
/* 1 when the file says unmatched=error. */
int est_oracle_strict(const struct est_oracle *o);
const char *est_oracle_path(const struct est_oracle *o);

/* learned.c */
int est_learned_load(const char *dir, const struct maya_gpu_spec *g, struct est_learned **out);
void est_learned_free(struct est_learned *l);
/* Which model serves each family for g, and why (a sentence into buf). */
void est_learned_describe(const struct est_learned *l, const struct maya_gpu_spec *g, char *buf, size_t size);
/* 1 with *ns set, 0 when no model covers the op (no data for this GPU or
 * family, or the op lies outside what the model was trained on). */
int est_learned_predict(struct est_learned *l, const struct maya_gpu_spec *g,
                        const struct maya_cluster_spec *c, const struct est_desc *d, double *ns);

#endif

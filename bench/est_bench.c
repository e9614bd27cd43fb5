/* Estimator speed: nanoseconds per est_estimate call, for the models the
 * simulator calls once per op. Prints name=value lines (make bench). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "maya/common.h"
#include "maya/estimator.h"
#include "maya/hwspec.h"
#include "maya/trace_format.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static struct maya_rec_gemm gemm(uint64_t seq, int64_t m)
{
    struct maya_rec_gemm g;
    memset(&g, 0, sizeof g);
    g.h = (struct maya_rec_hdr){ MAYA_REC_GEMM, 0, sizeof g };
    g.call.seq = seq;
    g.m = m, g.n = 4096, g.k = 4096, g.batch = 1;
    g.atype = g.btype = g.ctype = g.dtype = 14; /* bf16 */
    g.compute_type = 68;
    return g;
}

/* ns per est_estimate of an all-reduce over n calls (sizes cycling over
 * 4 KiB .. 2 GiB, 8 ranks on one node): NCCL's algorithm and protocol are
 * chosen for every call */
static double run_coll(struct estimator *e, int n)
{
    struct est_result r;
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        struct maya_rec_coll c;
        memset(&c, 0, sizeof c);
        c.h = (struct maya_rec_hdr){ MAYA_REC_COLL, 0, sizeof c };
        c.call.seq = (uint64_t)i;
        c.op = MAYA_COLL_ALLREDUCE;
        c.bytes = 4096ull << (i % 20);
        c.count = c.bytes / 2;
        c.nranks = 8;
        c.peer = -1;
        struct est_op op = { .rec = &c.h, .api = "ncclAllReduce", .coll_nodes = 1, .coll_ranks_per_node = 8 };
        if (est_estimate(e, &op, &r) < 0)
            exit(1);
    }
    return (now_ns() - t0) / n;
}

/* ns per call over n calls; distinct = how many different shapes cycle */
static double run(struct estimator *e, int n, int distinct, const char *api)
{
    struct est_result r;
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        struct maya_rec_gemm g = gemm((uint64_t)i, 64 + (i % distinct));
        struct est_op op = { .rec = &g.h, .api = api };
        if (est_estimate(e, &op, &r) < 0)
            exit(1);
    }
    return (now_ns() - t0) / n;
}

/* A kernel with a work summary, as the emulator writes one for a
 * grid-stride loop y[i] = a * x[i] + y[i] (i < n): per launch the estimator
 * evaluates its expressions (est_analytical_kernel_code_ns_per_op). With
 * `joint`, the loop runs to i + n instead, a bound that varies over the
 * threads as its start does: the trip count is sampled over threads
 * (est_analytical_kernel_code_joint_ns_per_op). */
struct code_kernel {
    struct maya_rec_kernel k;
    struct maya_kwork w;
    struct maya_kexpr x[15];
    struct maya_kterm t[4];
};

static void code_kernel(struct code_kernel *c, int joint)
{
    memset(c, 0, sizeof *c);
    c->k.h = (struct maya_rec_hdr){ MAYA_REC_KERNEL, 0, sizeof *c };
    c->k.id = 1;
    c->k.param_bytes = 28;
    c->k.work_bytes = sizeof *c - sizeof c->k;
    c->w = (struct maya_kwork){ .source = MAYA_KW_PTX, .sm = 90, .nexprs = 15, .nterms = 4, .regs = 16 };
    struct maya_kexpr *x = c->x;
    x[0] = (struct maya_kexpr){ MAYA_KX_CONST, 0, 0, 0, 0, 1 };
    x[1] = (struct maya_kexpr){ MAYA_KX_PARAM, 1, 24, 4, 0, 0 };               /* n */
    x[2] = (struct maya_kexpr){ MAYA_KX_SREG, MAYA_SR_TID_X, 0, 0, 0, 0 };
    x[3] = (struct maya_kexpr){ MAYA_KX_SREG, MAYA_SR_NTID_X, 0, 0, 0, 0 };
    x[4] = (struct maya_kexpr){ MAYA_KX_SREG, MAYA_SR_CTAID_X, 0, 0, 0, 0 };
    x[5] = (struct maya_kexpr){ MAYA_KX_SREG, MAYA_SR_NCTAID_X, 0, 0, 0, 0 };
    x[6] = (struct maya_kexpr){ MAYA_KX_MUL, 0, 4, 3, 0, 0 };                  /* ctaid * ntid */
    x[7] = (struct maya_kexpr){ MAYA_KX_ADD, 0, 6, 2, 0, 0 };                  /* i */
    x[8] = (struct maya_kexpr){ MAYA_KX_MUL, 0, 3, 5, 0, 0 };                  /* stride */
    x[9] = (struct maya_kexpr){ MAYA_KX_CMP, MAYA_CMP_LT, 7, 1, 0, 0 };        /* i < n */
    x[10] = (struct maya_kexpr){ MAYA_KX_ADD, 0, 7, 1, 0, 0 };                 /* i + n */
    x[11] = (struct maya_kexpr){ MAYA_KX_TRIP, MAYA_CMP_LT, 7, joint ? 10 : 1, 8, 0 };
    x[12] = (struct maya_kexpr){ MAYA_KX_MUL, 0, 9, 11, 0, 0 };
    x[13] = (struct maya_kexpr){ MAYA_KX_CONST, 0, 0, 0, 0, 2 };
    x[14] = (struct maya_kexpr){ MAYA_KX_MUL, 0, 12, 13, 0, 0 };
    c->t[0] = (struct maya_kterm){ .mult = 12, .cls = MAYA_KW_LD_GLOBAL, .param = 8, .amount = 4 };
    c->t[1] = (struct maya_kterm){ .mult = 12, .cls = MAYA_KW_LD_GLOBAL, .param = 16, .amount = 4 };
    c->t[2] = (struct maya_kterm){ .mult = 12, .cls = MAYA_KW_ST_GLOBAL, .param = 16, .amount = 4 };
    c->t[3] = (struct maya_kterm){ .mult = 14, .cls = MAYA_KW_FLOP_FP32, .param = MAYA_KW_NO_PARAM, .amount = 1 };
}

static double run_code(struct estimator *e, int n, int joint)
{
    struct code_kernel c;
    code_kernel(&c, joint);
    struct {
        struct maya_rec_launch l;
        unsigned char params[32];
    } launch;
    memset(&launch, 0, sizeof launch);
    launch.l.h = (struct maya_rec_hdr){ MAYA_REC_LAUNCH, 0, sizeof launch };
    launch.l.kernel = 1;
    launch.l.grid[0] = 528, launch.l.grid[1] = launch.l.grid[2] = 1;
    launch.l.block[0] = 256, launch.l.block[1] = launch.l.block[2] = 1;
    launch.l.param_bytes = 28;
    struct est_result r;
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        int32_t elems = (1 << 20) + i; /* a different launch each time */
        memcpy(launch.params + 24, &elems, 4);
        struct est_op op = { .rec = &launch.l.h, .api = "cudaLaunchKernel", .kernel_name = "saxpy", .kernel = &c.k };
        if (est_estimate(e, &op, &r) < 0 || r.no_code)
            exit(1);
    }
    return (now_ns() - t0) / n;
}

int main(void)
{
    struct maya_hwspecs hw = { 0 };
    const char *top = getenv("MAYA_TOP");
    char dir[512], models[600], oracle[600];
    snprintf(dir, sizeof dir, "%s/hwspecs", top ? top : ".");
    snprintf(models, sizeof models, "%s/build/share/maya/models", top ? top : ".");
    if (maya_hwspecs_load_dir(dir, &hw) < 0)
        return 1;
    const struct maya_gpu_spec *gpu = maya_hwspecs_find_gpu(&hw, "h100");
    struct est_config cfg = { .gpu = gpu, .models_dir = models };
    struct estimator *e;
    if (!gpu || est_create(&cfg, &e) < 0)
        return 1;
    printf("est_analytical_gemm_ns_per_op=%.0f\n", run(e, 200000, 1000, "cublasGemmEx"));
    printf("est_analytical_kernel_code_ns_per_op=%.0f\n", run_code(e, 200000, 0));
    printf("est_analytical_kernel_code_joint_ns_per_op=%.0f\n", run_code(e, 50000, 1));
    printf("est_analytical_allreduce_ns_per_op=%.0f\n", run_coll(e, 200000));
    est_destroy(e);

    for (int f = 0; f < EST_NFAMILIES; f++)
        cfg.model[f] = EST_LEARNED;
    if (est_create(&cfg, &e) < 0)
        return 1;
    /* a training job repeats its shapes every iteration: memoised */
    printf("est_learned_gemm_repeated_ns_per_op=%.0f\n", run(e, 200000, 100, "cublasGemmEx"));
    est_destroy(e);
    if (est_create(&cfg, &e) < 0)
        return 1;
    printf("est_learned_gemm_new_shape_ns_per_op=%.0f\n", run(e, 5000, 5000, "cublasGemmEx"));
    printf("est_learned_allreduce_repeated_ns_per_op=%.0f\n", run_coll(e, 200000));
    est_destroy(e);
    /* a GPU without models of its own (H200): H100-SXM's serve, two
       analytical estimates per op (the source GPU's and its own) */
    cfg.gpu = maya_hwspecs_find_gpu(&hw, "h200");
    double c0 = now_ns();
    if (!cfg.gpu || est_create(&cfg, &e) < 0)
        return 1;
    printf("est_learned_create_ms=%.2f\n", (now_ns() - c0) / 1e6);
    printf("est_learned_borrowed_gemm_repeated_ns_per_op=%.0f\n", run(e, 200000, 100, "cublasGemmEx"));
    printf("est_learned_borrowed_gemm_new_shape_ns_per_op=%.0f\n", run(e, 5000, 5000, "cublasGemmEx"));
    est_destroy(e);
    cfg.gpu = gpu;

    /* oracle: 10000 rank/seq rules and 100 name rules */
    snprintf(oracle, sizeof oracle, "/tmp/maya-est-bench-%d.txt", (int)getpid());
    FILE *fp = fopen(oracle, "w");
    if (!fp)
        return 1;
    for (int i = 0; i < 10000; i++)
        fprintf(fp, "rank=0 seq=%d device=%dus\n", i * 2, i + 1);
    for (int i = 0; i < 100; i++)
        fprintf(fp, "name=kernel_%d device=5us\n", i);
    fclose(fp);
    cfg.oracle_path = oracle;
    for (int f = 0; f < EST_NFAMILIES; f++)
        cfg.model[f] = EST_ORACLE;
    double t0 = now_ns();
    if (est_create(&cfg, &e) < 0)
        return 1;
    printf("est_oracle_load_10100_rules_ms=%.2f\n", (now_ns() - t0) / 1e6);
    printf("est_oracle_ns_per_op=%.0f\n", run(e, 200000, 1000, "cublasGemmEx"));
    est_destroy(e);
    unlink(oracle);
    maya_hwspecs_free(&hw);
    return 0;
}

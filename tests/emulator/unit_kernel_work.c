/* Unit test of reading a kernel's work from PTX (emulator/core/ptx_parse.c,
 * kernel_work.c) and of evaluating it for a launch (estimator/
 * kernel_cost.c), on small hand-written kernels whose work is known:
 * a grid-stride loop, a row loop (one block per row), a guarded element
 * per thread, a tensor-core k-loop, Triton-style masked vector loads, a
 * loop whose trip count the code does not show. Then damaged input: every
 * truncation and random byte changes of the texts must parse or fail
 * cleanly, and a damaged summary must be refused by the trace's reader. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "est_internal.h"
#include "kernel_work.h"
#include "maya/kwork.h"
#include "ptx_parse.h"

#include "../unit_check.h"

#define EXPECT(cond) CHECK(cond, "expected %s", #cond)

#define NEAR(got, want, rel) \
    do { \
        double g_ = (got), w_ = (want); \
        CHECK(fabs(g_ - w_) <= (rel) * fabs(w_), "%s = %.6g, expected %.6g (within %g%%)", #got, g_, w_, \
              100.0 * (rel)); \
    } while (0)

/* y[i] = a * x[i] + y[i] for i = global thread index; i < n; i += all threads */
static const char grid_stride[] =
    ".version 8.7\n.target sm_90\n.address_size 64\n"
    ".visible .entry saxpy(\n"
    "\t.param .f32 saxpy_param_0,\n\t.param .u64 saxpy_param_1,\n\t.param .u64 saxpy_param_2,\n"
    "\t.param .u32 saxpy_param_3\n)\n{\n"
    "\t.reg .pred %p<3>;\n\t.reg .b32 %r<12>;\n\t.reg .f32 %f<5>;\n\t.reg .b64 %rd<10>;\n"
    "\tld.param.f32 %f1, [saxpy_param_0];\n"
    "\tld.param.u64 %rd3, [saxpy_param_1];\n"
    "\tld.param.u64 %rd4, [saxpy_param_2];\n"
    "\tld.param.u32 %r6, [saxpy_param_3];\n"
    "\tcvta.to.global.u64 %rd1, %rd3;\n\tcvta.to.global.u64 %rd2, %rd4;\n"
    "\tmov.u32 %r7, %ctaid.x;\n\tmov.u32 %r1, %ntid.x;\n\tmov.u32 %r8, %tid.x;\n"
    "\tmad.lo.s32 %r11, %r7, %r1, %r8;\n"
    "\tsetp.ge.s32 %p1, %r11, %r6;\n"
    "\t@%p1 bra $L__BB0_3;\n"
    "\tmov.u32 %r9, %nctaid.x;\n\tmul.lo.s32 %r3, %r1, %r9;\n"
    "$L__BB0_2:\n"
    "\tmul.wide.s32 %rd5, %r11, 4;\n"
    "\tadd.s64 %rd6, %rd1, %rd5;\n\tld.global.f32 %f2, [%rd6];\n"
    "\tadd.s64 %rd7, %rd2, %rd5;\n\tld.global.f32 %f3, [%rd7];\n"
    "\tfma.rn.f32 %f4, %f2, %f1, %f3;\n"
    "\tst.global.f32 [%rd7], %f4;\n"
    "\tadd.s32 %r11, %r11, %r3;\n"
    "\tsetp.lt.s32 %p2, %r11, %r6;\n"
    "\t@%p2 bra $L__BB0_2;\n"
    "$L__BB0_3:\n\tret;\n}\n";

/* out[row][c] = in[row][c] * 2 for c = tid; c < cols; c += ntid; row = ctaid.x */
static const char row_loop[] =
    ".visible .entry rows(\n"
    "\t.param .u64 .ptr .global .align 4 rows_param_0,\n\t.param .u64 rows_param_1,\n\t.param .u32 rows_param_2\n)\n"
    "{\n"
    "\tld.param.u64 %rd1, [rows_param_0];\n\tld.param.u64 %rd2, [rows_param_1];\n"
    "\tld.param.u32 %r1, [rows_param_2];\n"
    "\tmov.u32 %r2, %ctaid.x;\n\tmul.wide.u32 %rd3, %r2, %r1;\n"
    "\tmov.u32 %r3, %tid.x;\n\tmov.u32 %r4, %ntid.x;\n"
    "\tsetp.ge.u32 %p1, %r3, %r1;\n\t@%p1 bra $L__BB1_2;\n"
    "$L__BB1_1:\n"
    "\tcvt.u64.u32 %rd4, %r3;\n\tadd.s64 %rd5, %rd3, %rd4;\n\tshl.b64 %rd6, %rd5, 2;\n"
    "\tadd.s64 %rd7, %rd1, %rd6;\n\tld.global.nc.f32 %f1, [%rd7];\n"
    "\tadd.f32 %f2, %f1, %f1;\n\tex2.approx.f32 %f3, %f2;\n"
    "\tadd.s64 %rd8, %rd2, %rd6;\n\tst.global.f32 [%rd8], %f3;\n"
    "\tadd.s32 %r3, %r3, %r4;\n\tsetp.lt.u32 %p2, %r3, %r1;\n\t@%p2 bra $L__BB1_1;\n"
    "$L__BB1_2:\n\tret;\n}\n";

/* out[row][c] = in[row][c] * w[c] for c = tid; c < cols; c += ntid; row =
 * ctaid.x: w's address does not depend on the block (a LayerNorm's weights) */
static const char row_scale[] =
    ".visible .entry rowscale(\n"
    "\t.param .u64 rowscale_param_0,\n\t.param .u64 rowscale_param_1,\n\t.param .u64 rowscale_param_2,\n"
    "\t.param .u32 rowscale_param_3\n)\n"
    "{\n"
    "\tld.param.u64 %rd1, [rowscale_param_0];\n\tld.param.u64 %rd9, [rowscale_param_1];\n"
    "\tld.param.u64 %rd2, [rowscale_param_2];\n\tld.param.u32 %r1, [rowscale_param_3];\n"
    "\tmov.u32 %r2, %ctaid.x;\n\tmul.wide.u32 %rd3, %r2, %r1;\n"
    "\tmov.u32 %r3, %tid.x;\n\tmov.u32 %r4, %ntid.x;\n"
    "\tsetp.ge.u32 %p1, %r3, %r1;\n\t@%p1 bra $L__BB5_2;\n"
    "$L__BB5_1:\n"
    "\tcvt.u64.u32 %rd4, %r3;\n\tadd.s64 %rd5, %rd3, %rd4;\n\tshl.b64 %rd6, %rd5, 2;\n"
    "\tadd.s64 %rd7, %rd1, %rd6;\n\tld.global.nc.f32 %f1, [%rd7];\n"
    "\tshl.b64 %rd10, %rd4, 2;\n\tadd.s64 %rd11, %rd9, %rd10;\n\tld.global.nc.f32 %f2, [%rd11];\n"
    "\tmul.f32 %f3, %f1, %f2;\n"
    "\tadd.s64 %rd8, %rd2, %rd6;\n\tst.global.f32 [%rd8], %f3;\n"
    "\tadd.s32 %r3, %r3, %r4;\n\tsetp.lt.u32 %p2, %r3, %r1;\n\t@%p2 bra $L__BB5_1;\n"
    "$L__BB5_2:\n\tret;\n}\n";

/* A tensor-core k-loop: kk from 0 to K by 16, one mma.m16n8k16 (bf16) and
 * a 16-byte load per thread (from its own row) each step; extern "C" style, '\0' lines as in a
 * cubin's .nv_debug_ptx_txt. Built at run time from text with '\n'. */
static const char mma_loop[] =
    ".visible .entry mmak(\n\t.param .u64 mmak_param_0,\n\t.param .u32 mmak_param_1\n)\n{\n"
    "\tld.param.u64 %rd5, [mmak_param_0];\n\tld.param.u32 %r1, [mmak_param_1];\n"
    "\tmov.u32 %r3, %tid.x;\n\tmul.wide.u32 %rd4, %r3, 65536;\n\tadd.s64 %rd1, %rd5, %rd4;\n"
    "\tmov.u32 %r2, 0;\n"
    "$L__BB2_1:\n"
    "\tmul.wide.u32 %rd2, %r2, 16;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
    "\tld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd3+0];\n"
    "\tmma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r10, %r11, %r12, %r13}, "
    "{%r14, %r15}, {%f1, %f2, %f3, %f4};\n"
    "\tadd.s32 %r2, %r2, 16;\n\tsetp.lt.s32 %p1, %r2, %r1;\n\t@%p1 bra $L__BB2_1;\n"
    "\tret;\n}\n";

/* Triton style: offsets = pid * 1024 + tid * 4 (4 elements a thread),
 * loads and stores masked by offsets < n, no branches. */
static const char masked[] =
    ".visible .entry triton_poi(\n\t.param .u64 .ptr .global .align 1 triton_poi_param_0,\n"
    "\t.param .u64 .ptr .global .align 1 triton_poi_param_1,\n\t.param .u32 triton_poi_param_2\n)\n"
    ".reqntid 256, 1, 1\n{\n"
    "\t.reg .pred %p<2>;\n"
    "\tld.param.u64 %rd3, [triton_poi_param_0];\n\tld.param.u64 %rd4, [triton_poi_param_1];\n"
    "\tld.param.u32 %r9, [triton_poi_param_2];\n"
    "\tmov.u32 %r1, %ctaid.x;\n\tshl.b32 %r5, %r1, 10;\n\tmov.u32 %r6, %tid.x;\n\tshl.b32 %r7, %r6, 2;\n"
    "\tor.b32 %r8, %r5, %r7;\n\tadd.s32 %r10, %r5, %r7;\n\tsetp.lt.s32 %p1, %r10, %r9;\n"
    "\tmul.wide.s32 %rd5, %r10, 4;\n\tadd.s64 %rd1, %rd3, %rd5;\n"
    "\t// begin inline asm\n"
    "\tmov.u32 %r2, 0x0;\n\t@%p1 ld.global.v4.b32 { %r2, %r3, %r4, %r11 }, [ %rd1 + 0 ];\n"
    "\t// end inline asm\n"
    "\tadd.s64 %rd2, %rd4, %rd5;\n"
    "\t@%p1 st.global.v4.b32 [ %rd2 + 0 ], { %r2, %r3, %r4, %r11 };\n"
    "\t{ .reg .b16 %tmp; mov.b16 %tmp, 0; }\n"
    "\tret;\n}\n";

/* A loop over data: the trip count is not in the code (each thread walks
 * a list from its own head). */
static const char data_loop[] =
    ".visible .entry chase(\n\t.param .u64 chase_param_0\n)\n{\n"
    "\tld.param.u64 %rd2, [chase_param_0];\n"
    "\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd3, %r1, 8;\n\tadd.s64 %rd1, %rd2, %rd3;\n"
    "$L__BB4_1:\n\tld.global.u64 %rd1, [%rd1];\n\tsetp.ne.s64 %p1, %rd1, 0;\n\t@%p1 bra $L__BB4_1;\n"
    "\tret;\n}\n";

/* SASS as nvdisasm 13.5 prints it (sm_90) for
 *   for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
 *       y[i] = 2.0f * x[i];
 * parameters x, y, n at c[0x0][0x210], 0x218, 0x220; a dead self-loop after EXIT. */
static const char sass_gs[] =
    "//--------------------- .text._Z4gs32PKfPfi --------------------------\n"
    "\t.section\t.text._Z4gs32PKfPfi,\"ax\",@progbits\n"
    ".text._Z4gs32PKfPfi:\n"
    "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
    "        /*0010*/                   S2R R0, SR_CTAID.X ;\n"
    "        /*0020*/                   ULDC UR4, c[0x0][0x0] ;\n"
    "        /*0030*/                   ULDC UR8, c[0x0][0x220] ;\n"
    "        /*0040*/                   S2R R3, SR_TID.X ;\n"
    "        /*0050*/                   IMAD R0, R0, UR4, R3 ;\n"
    "        /*0060*/                   ISETP.GE.AND P0, PT, R0, UR8, PT ;\n"
    ".L_x_2:\n"
    "        /*0070*/               @P0 EXIT ;\n"
    "        /*0080*/                   LDC.64 R6, c[0x0][0x210] ;\n"
    "        /*0090*/                   ULDC UR5, c[0x0][0xc] ;\n"
    "        /*00a0*/                   ULDC.64 UR6, c[0x0][0x208] ;\n"
    "        /*00b0*/                   UIMAD UR4, UR4, UR5, URZ ;\n"
    "        /*00c0*/                   LDC.64 R8, c[0x0][0x218] ;\n"
    ".L_x_0:\n"
    "        /*00d0*/                   IMAD.WIDE R2, R0, 0x4, R6 ;\n"
    "        /*00e0*/                   LDG.E R2, desc[UR6][R2.64] ;\n"
    "        /*00f0*/                   IMAD.WIDE R4, R0.reuse, 0x4, R8 ;\n"
    "        /*0100*/                   IADD3 R0, R0, UR4, RZ ;\n"
    "        /*0110*/                   ISETP.GE.AND P0, PT, R0, UR8, PT ;\n"
    "        /*0120*/                   FADD R11, R2, R2 ;\n"
    "        /*0130*/                   STG.E desc[UR6][R4.64], R11 ;\n"
    "        /*0140*/              @!P0 BRA `(.L_x_0) ;\n"
    ".L_x_3:\n"
    "        /*0150*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*0160*/                   BRA `(.L_x_1);\n"
    "        /*0170*/                   NOP;\n"
    ".L_x_4:\n"
    "//--------------------- SYMBOLS --------------------------\n";

/* A launch record with its parameters after it. */
struct launch {
    struct maya_rec_launch l;
    unsigned char params[64];
};

static void launch(struct launch *b, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    memset(b, 0, sizeof *b);
    b->l.h = (struct maya_rec_hdr){ MAYA_REC_LAUNCH, 0, sizeof *b };
    b->l.grid[0] = gx, b->l.grid[1] = gy, b->l.grid[2] = 1;
    b->l.block[0] = bx, b->l.block[1] = by, b->l.block[2] = 1;
    b->l.param_bytes = sizeof b->params;
}

static void set(struct launch *b, unsigned off, const void *v, unsigned bytes)
{
    memcpy(b->params + off, v, bytes);
}

/* Summary *keep (bytes long) as a KERNEL record carries it, through the
 * reader's checks: the record in *keep (freed by the caller), its summary. */
static const struct maya_kwork *as_record(void **keep, size_t bytes)
{
    EXPECT(bytes % 8 == 0);
    struct maya_rec_kernel *k = calloc(1, sizeof *k + bytes);
    if (!k) {
        free(*keep);
        *keep = NULL;
        return NULL;
    }
    k->h = (struct maya_rec_hdr){ MAYA_REC_KERNEL, 0, (uint32_t)(sizeof *k + bytes) };
    k->work_bytes = (uint32_t)bytes;
    memcpy(k + 1, *keep, bytes);
    const char *why = NULL;
    const struct maya_kwork *w = maya_kernel_work(k, &why);
    EXPECT(w != NULL);
    if (why)
        fprintf(stderr, "  reader says: %s\n", why);
    free(*keep);
    *keep = k;
    return w;
}

static const struct maya_kwork *analyse(const char *text, size_t n, const char *entry, void **keep)
{
    size_t bytes;
    *keep = NULL;
    if (emu_kwork_ptx_text(text, n, entry, 90, keep, &bytes) < 0)
        return NULL;
    return as_record(keep, bytes);
}

/* The same for SASS text, parameters at c[0x0][0x210] (param_bytes of them,
 * laid out as layout says, or NULL). */
static const struct maya_kwork *analyse_sass(const char *text, size_t n, const char *entry, unsigned param_bytes,
                                             const struct maya_kparam *layout, unsigned nlayout, void **keep)
{
    struct emu_ptx_kernel k;
    size_t bytes = 0;
    *keep = NULL;
    EXPECT(emu_sass_parse(text, n, entry, 0x210, param_bytes, layout, nlayout, &k) == 0);
    int rc = emu_kwork_from_ptx(&k, 90, keep, &bytes);
    emu_ptx_kernel_free(&k);
    EXPECT(rc == 0);
    if (rc < 0 || !*keep)
        return NULL;
    return as_record(keep, bytes);
}

static void test_grid_stride(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(grid_stride, sizeof grid_stride - 1, "saxpy", &keep);
    if (!w)
        return;
    EXPECT(!(w->flags & MAYA_KW_F_LOOP_UNRESOLVED));
    int n = 1 << 24;
    struct launch b;
    launch(&b, 528, 1, 256, 1);
    set(&b, 24, &n, 4);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 8.0 * n, 0.001);
    NEAR(k.amount[MAYA_KW_ST_GLOBAL], 4.0 * n, 0.001);
    NEAR(k.amount[MAYA_KW_FLOP_FP32], 2.0 * n, 0.001);
    /* y is read and written: DRAM sees both, but each at most its extent */
    struct maya_kextent ext[2] = { { .param = 8, .bytes = 4ull * n }, { .param = 16, .bytes = 4ull * n } };
    struct est_kwork_ctx ctx = { ext, 2 };
    EXPECT(est_kwork_eval(w, &b.l, &ctx, &k) == 0);
    NEAR(k.dram_bytes, 12.0 * n, 0.001);
    /* fewer elements than threads: only n threads do one iteration */
    n = 1000;
    set(&b, 24, &n, 4);
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 8.0 * n, 0.05);
    /* n = 0: no work at all */
    n = 0;
    set(&b, 24, &n, 4);
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    EXPECT(k.amount[MAYA_KW_LD_GLOBAL] == 0);
    /* x (word 1) is only read, y (word 2) written: only y's buffer may
     * change under a launch that is not computed */
    uint64_t ro = emu_kwork_unstored_words(w, ((const struct maya_rec_kernel *)keep)->work_bytes);
    EXPECT((ro >> 1 & 1) && !(ro >> 2 & 1) && (ro & 1) && (ro >> 3 & 1));
    EXPECT(emu_kwork_unstored_words(w, sizeof *w) == 0); /* a summary cut short says nothing */
    free(keep);
}

static void test_row_loop(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(row_loop, sizeof row_loop - 1, "rows", &keep);
    if (!w)
        return;
    unsigned rows = 4096, cols = 5000; /* not a multiple of the block */
    struct launch b;
    launch(&b, rows, 1, 256, 1);
    set(&b, 16, &cols, 4);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 4.0 * rows * cols, 0.01);
    NEAR(k.amount[MAYA_KW_ST_GLOBAL], 4.0 * rows * cols, 0.01);
    NEAR(k.amount[MAYA_KW_SFU], 1.0 * rows * cols, 0.01);
    NEAR(k.amount[MAYA_KW_FLOP_FP32], 1.0 * rows * cols, 0.01);
    /* a row shorter than the block */
    cols = 100;
    set(&b, 16, &cols, 4);
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 4.0 * rows * cols, 0.05);
    free(keep);
}

/* A pointer every block reads at the same addresses (the weights of a row
 * normalisation) reaches DRAM once, not once per block, however large the
 * allocation it points into; the L2 still sees every load. */
static void test_block_shared(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(row_scale, sizeof row_scale - 1, "rowscale", &keep);
    if (!w)
        return;
    unsigned rows = 8192, cols = 8192;
    double bytes = 4.0 * rows * cols;
    struct launch b;
    launch(&b, rows, 1, 256, 1);
    set(&b, 24, &cols, 4);
    struct maya_kextent ext[3] = {
        { .param = 0, .bytes = (uint64_t)bytes }, { .param = 8, .bytes = 1ull << 30 },
        { .param = 16, .bytes = (uint64_t)bytes },
    };
    struct est_kwork_ctx ctx = { ext, 3 };
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, &ctx, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 2 * bytes, 0.01);
    NEAR(k.dram_bytes, 2 * bytes + 4.0 * cols, 0.01); /* in, out, w once */
    /* the rows' input depends on the block: read in full */
    struct maya_kextent big[3] = { { .param = 0, .bytes = 1ull << 34 }, ext[1], ext[2] };
    ctx.extents = big;
    EXPECT(est_kwork_eval(w, &b.l, &ctx, &k) == 0);
    NEAR(k.dram_bytes, 2 * bytes + 4.0 * cols, 0.01);
    free(keep);
}

static void test_mma(void)
{
    /* as a cubin's debug section holds it: lines end with '\0' */
    char text[sizeof mma_loop];
    memcpy(text, mma_loop, sizeof mma_loop);
    for (size_t i = 0; i < sizeof text - 1; i++)
        if (text[i] == '\n')
            text[i] = '\0';
    void *keep;
    const struct maya_kwork *w = analyse(text, sizeof text - 1, "mmak", &keep);
    if (!w)
        return;
    unsigned kdim = 4096;
    struct launch b;
    launch(&b, 1000, 1, 128, 1);
    set(&b, 8, &kdim, 4);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    double warps = 1000.0 * 128 / 32, steps = kdim / 16;
    NEAR(k.amount[MAYA_KW_MMA_FP16], warps * steps * 2.0 * 16 * 8 * 16, 0.001);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 1000.0 * 128 * steps * 16, 0.001);
    EXPECT(k.amount[MAYA_KW_FLOP_FP32] == 0);
    /* on an H100 the tensor cores bound it; never faster than their peak */
    struct maya_gpu_spec g;
    memset(&g, 0, sizeof g);
    g.prop.multiProcessorCount = 132;
    g.prop.maxThreadsPerMultiProcessor = 2048;
    g.prop.maxBlocksPerMultiProcessor = 32;
    g.perf.bf16_tflops = g.perf.fp16_tflops = 989.4;
    g.perf.fp32_tflops = 67;
    g.perf.hbm_measured_gbps = 2900;
    g.perf.l2_gbps = 10000;
    g.perf.sm_clock_mhz = 1980;
    g.perf.kernel_floor_ns = 1500;
    struct est_kwork_times t;
    est_kwork_times(&g, &k, &t);
    EXPECT(t.total_ns * 1e-9 > k.amount[MAYA_KW_MMA_FP16] / 989.4e12);
    /* mma.sync is warp-level: from sm_90 on it reaches 2/3 of the peak
     * (the warpgroup instructions' own); before, all of it */
    EXPECT((w->flags & MAYA_KW_F_WARP_MMA) && !(w->flags & MAYA_KW_F_GROUP_MMA));
    g.prop.major = 8;
    struct est_kwork_times t8;
    est_kwork_times(&g, &k, &t8);
    g.prop.major = 9;
    est_kwork_times(&g, &k, &t);
    NEAR(t.mma_ns, t8.mma_ns * 1.5, 0.001);
    /* a warp-level MMA kernel that stages its operands through shared
     * memory: the shared-memory pipe's time and the issue's add (times the
     * constant fitted on FlashAttention-2), on any GPU, and bound it when
     * their sum passes the tensor cores' time; the same work done by
     * warpgroup MMAs (their operands read from shared memory by the tensor
     * cores) is bound by its slowest unit alone (its global memory left
     * out here: the loop's loads bound it) */
    k.dram_bytes = k.amount[MAYA_KW_LD_GLOBAL] = k.amount[MAYA_KW_ST_GLOBAL] = 0;
    k.amount[MAYA_KW_LD_SHARED] = 0.7 * t.mma_ns * 1e-9 * 132 * 128 * 1980e6;
    k.amount[MAYA_KW_INSTS] = 0.5 * t.mma_ns * 1e-9 * 132 * 4 * 32 * 1980e6;
    for (int major = 8; major <= 9; major++) {
        g.prop.major = major;
        est_kwork_times(&g, &k, &t);
        NEAR(t.staged_ns, 1.08 * (t.smem_ns + t.issue_ns), 0.001);
        EXPECT(t.staged_ns > t.mma_ns && strcmp(t.bound, "staging") == 0);
        NEAR(t.total_ns, 1500 + t.staged_ns, 0.001);
    }
    k.flags |= MAYA_KW_F_GROUP_MMA;
    est_kwork_times(&g, &k, &t);
    EXPECT(t.staged_ns == 0 && t.smem_ns > t.mma_ns && strcmp(t.bound, "shared") == 0);
    NEAR(t.total_ns, 1500 + t.smem_ns, 0.001);
    free(keep);
}

static void test_masked(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(masked, sizeof masked - 1, "triton_poi", &keep);
    if (!w)
        return;
    unsigned n = 1000000; /* 977 blocks of 1024 elements, the last one partly masked */
    struct launch b;
    launch(&b, (n + 1023) / 1024, 1, 256, 1);
    set(&b, 16, &n, 4);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 4.0 * n, 0.01);
    NEAR(k.amount[MAYA_KW_ST_GLOBAL], 4.0 * n, 0.01);
    free(keep);
}

/* A store through a pointer read from memory: which buffer it writes is
 * not in the code. */
static const char indirect_store[] =
    ".visible .entry indirect(\n\t.param .u64 indirect_param_0,\n\t.param .u64 indirect_param_1\n)\n{\n"
    "\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<4>;\n"
    "\tld.param.u64 %rd1, [indirect_param_0];\n"
    "\tld.global.u64 %rd2, [%rd1];\n\tmov.u32 %r1, 1;\n\tst.global.u32 [%rd2], %r1;\n"
    "\tret;\n}\n";

/* A store at a 64-bit integer parameter plus a pointer parameter: either
 * could be the buffer's. */
static const char offset_store[] =
    ".visible .entry offset(\n\t.param .u64 offset_param_0,\n\t.param .u64 offset_param_1\n)\n{\n"
    "\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<4>;\n"
    "\tld.param.u64 %rd1, [offset_param_0];\n\tld.param.u64 %rd2, [offset_param_1];\n"
    "\tadd.s64 %rd3, %rd1, %rd2;\n\tmov.u32 %r1, 1;\n\tst.global.u32 [%rd3], %r1;\n"
    "\tret;\n}\n";

static void test_indirect_store(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(indirect_store, sizeof indirect_store - 1, "indirect", &keep);
    if (!w)
        return;
    EXPECT(emu_kwork_unstored_words(w, ((const struct maya_rec_kernel *)keep)->work_bytes) == 0);
    free(keep);
    w = analyse(offset_store, sizeof offset_store - 1, "offset", &keep);
    if (!w)
        return;
    EXPECT(w->flags & MAYA_KW_F_STORES_UNKNOWN);
    EXPECT(emu_kwork_unstored_words(w, ((const struct maya_rec_kernel *)keep)->work_bytes) == 0);
    free(keep);
}

/* A counter whose next value a join selects: i + 1 on one path, a value
 * past the bound on the other (taken when flag is 7), as the
 * memory-efficient attention's backward steps to its next query block or
 * moves to its next key block. The trip count is read from the path that
 * steps the counter: n iterations where flag is not 7. */
static const char sel_step[] =
    ".visible .entry selstep(\n\t.param .u64 selstep_param_0,\n\t.param .u32 selstep_param_1,\n"
    "\t.param .u32 selstep_param_2\n)\n{\n"
    "\tld.param.u64 %rd1, [selstep_param_0];\n\tld.param.u32 %r9, [selstep_param_1];\n"
    "\tld.param.u32 %r8, [selstep_param_2];\n"
    "\tmov.u32 %r4, %tid.x;\n\tmul.wide.u32 %rd2, %r4, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
    "\tmov.u32 %r1, 0;\n"
    "$L__BB0_1:\n\tst.global.u32 [%rd3], %r1;\n\tadd.s32 %r2, %r1, 1;\n"
    "\tsetp.eq.s32 %p1, %r8, 7;\n\t@%p1 bra $L__BB0_2;\n"
    "\tmov.u32 %r3, %r2;\n\tbra.uni $L__BB0_3;\n"
    "$L__BB0_2:\n\tadd.s32 %r3, %r9, 5;\n"
    "$L__BB0_3:\n\tsetp.lt.s32 %p2, %r3, %r9;\n\tmov.u32 %r1, %r3;\n\t@%p2 bra $L__BB0_1;\n"
    "\tret;\n}\n";

static void test_sel_step(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(sel_step, sizeof sel_step - 1, "selstep", &keep);
    if (!w)
        return;
    EXPECT(!(w->flags & MAYA_KW_F_LOOP_UNRESOLVED));
    struct launch b;
    launch(&b, 1, 1, 32, 1);
    int n = 50, flag = 3;
    set(&b, 8, &n, 4);
    set(&b, 12, &flag, 4);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_ST_GLOBAL], 32 * 4.0 * n, 0.001);
    free(keep);
}

/* A join whose share is a predicate two paths left differently (n > 5000
 * on one, n > 100 on the other, by a mode parameter), the value unknown on
 * one side (read from memory): a choice the launch makes, kept; a launch
 * that takes the known side gets its value, the loop bound n. */
static const char sel_pred[] =
    ".visible .entry selpred(\n\t.param .u64 selpred_param_0,\n\t.param .u64 selpred_param_1,\n"
    "\t.param .u32 selpred_param_2,\n\t.param .u32 selpred_param_3\n)\n{\n"
    "\tld.param.u64 %rd1, [selpred_param_0];\n\tld.param.u64 %rd2, [selpred_param_1];\n"
    "\tld.param.u32 %r1, [selpred_param_2];\n\tld.param.u32 %r2, [selpred_param_3];\n"
    "\tsetp.eq.s32 %p1, %r2, 1;\n\t@%p1 bra $L__A;\n\tsetp.gt.s32 %p2, %r1, 100;\n\tbra.uni $L__J;\n"
    "$L__A:\n\tsetp.gt.s32 %p2, %r1, 5000;\n"
    "$L__J:\n\t@%p2 bra $L__U;\n\tmov.u32 %r5, %r1;\n\tbra.uni $L__K;\n"
    "$L__U:\n\tld.global.u32 %r5, [%rd2];\n"
    "$L__K:\n\tmov.u32 %r6, %tid.x;\n\tmov.u32 %r7, %ntid.x;\n"
    "$L__B0_1:\n\tmul.wide.u32 %rd3, %r6, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n\tst.global.u32 [%rd4], %r6;\n"
    "\tadd.s32 %r6, %r6, %r7;\n\tsetp.lt.u32 %p3, %r6, %r5;\n\t@%p3 bra $L__B0_1;\n"
    "\tret;\n}\n";

static void test_sel_pred(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(sel_pred, sizeof sel_pred - 1, "selpred", &keep);
    if (!w)
        return;
    struct launch b;
    launch(&b, 1, 1, 32, 1);
    int n = 3200, mode = 1; /* mode 1: n > 5000 is false, the known side */
    set(&b, 16, &n, 4);
    set(&b, 20, &mode, 4);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    EXPECT(k.unresolved == 0);
    NEAR(k.amount[MAYA_KW_ST_GLOBAL], 4.0 * n, 0.001);
    free(keep);
}

/* A block count read as 16 bits (LDC.U16 of c[0x0][0xc], %nctaid.x: nvcc
 * where it knows the count fits): threads below it store. */
static const char sass_u16_grid[] =
    "//--------------------- .text._Z5gridsPf --------------------------\n"
    ".text._Z5gridsPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   LDC.U16 R5, c[0x0][0xc] ;\n"
    "        /*0020*/                   ULDC.64 UR4, c[0x0][0x208] ;\n"
    "        /*0030*/                   ISETP.GE.U32.AND P0, PT, R0, R5, PT ;\n"
    "        /*0040*/               @P0 EXIT ;\n"
    "        /*0050*/                   LDC.64 R2, c[0x0][0x210] ;\n"
    "        /*0060*/                   IMAD.WIDE.U32 R2, R0, 0x4, R2 ;\n"
    "        /*0070*/                   STG.E desc[UR4][R2.64], RZ ;\n"
    "        /*0080*/                   EXIT ;\n"
    ".L_x_0:\n";

static void test_sass_u16_grid(void)
{
    void *rk;
    static const struct maya_kparam one[] = { { 0, 8, MAYA_KP_PTR, { 0 } } };
    const struct maya_kwork *w = analyse_sass(sass_u16_grid, sizeof sass_u16_grid - 1, "_Z5gridsPf", 8, one, 1, &rk);
    EXPECT(w != NULL);
    if (w) {
        struct launch b;
        launch(&b, 4, 1, 256, 1);
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
        NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 4 * 4 * 4.0, 0.001); /* 4 threads of each of 4 blocks */
    }
    free(rk);
}

/* Loads whose address is the same for every thread of a block: a
 * block's entry of a table (table[blockIdx.x]) and a scalar (x[0]); and
 * one that is not (x[threadIdx.x]). */
static const char uniform_loads[] =
    ".visible .entry uni(\n\t.param .u64 uni_param_0,\n\t.param .u64 uni_param_1,\n\t.param .u64 uni_param_2\n)\n{\n"
    "\tld.param.u64 %rd1, [uni_param_0];\n\tld.param.u64 %rd2, [uni_param_1];\n\tld.param.u64 %rd3, [uni_param_2];\n"
    "\tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %tid.x;\n"
    "\tmul.wide.u32 %rd4, %r1, 8;\n\tadd.s64 %rd5, %rd1, %rd4;\n\tld.global.u64 %rd6, [%rd5];\n"
    "\tld.global.f32 %f1, [%rd2];\n"
    "\tmul.wide.u32 %rd7, %r2, 4;\n\tadd.s64 %rd8, %rd2, %rd7;\n\tld.global.f32 %f2, [%rd8];\n"
    "\tadd.s64 %rd9, %rd3, %rd7;\n\tst.global.f32 [%rd9], %f2;\n"
    "\tret;\n}\n";

static void test_uniform_loads(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(uniform_loads, sizeof uniform_loads - 1, "uni", &keep);
    if (!w)
        return;
    struct launch b;
    launch(&b, 4, 1, 256, 1);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    /* table[block] and x[0]: one 8- and one 4-byte request a warp (32 of
     * them); x[tid]: 4 bytes a thread */
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 32 * (8.0 + 4) + 1024 * 4.0, 0.001);
    NEAR(k.amount[MAYA_KW_ST_GLOBAL], 1024 * 4.0, 0.001);
    free(keep);
}

/* A naive GEMM's row load: A[row * K] with row = threadIdx.y (the same
 * along a row of the block: x picks the column), and B[threadIdx.x]. */
static const char row_loads[] =
    ".visible .entry rows(\n\t.param .u64 rows_param_0,\n\t.param .u64 rows_param_1,\n\t.param .u32 rows_param_2\n)\n{\n"
    "\tld.param.u64 %rd1, [rows_param_0];\n\tld.param.u64 %rd2, [rows_param_1];\n\tld.param.u32 %r3, [rows_param_2];\n"
    "\tmov.u32 %r1, %tid.y;\n\tmov.u32 %r2, %tid.x;\n"
    "\tmul.lo.s32 %r4, %r1, %r3;\n\tmul.wide.s32 %rd3, %r4, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n"
    "\tld.global.f32 %f1, [%rd4];\n"
    "\tmul.wide.u32 %rd5, %r2, 4;\n\tadd.s64 %rd6, %rd2, %rd5;\n\tld.global.f32 %f2, [%rd6];\n"
    "\tret;\n}\n";

static void test_row_loads(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(row_loads, sizeof row_loads - 1, "rows", &keep);
    if (!w)
        return;
    const struct maya_kterm *t = maya_kwork_terms(w);
    int row = 0, other = 0;
    for (uint32_t i = 0; i < w->nterms; i++)
        if (t[i].cls == MAYA_KW_LD_GLOBAL)
            *(t[i].flags & MAYA_KT_F_SAME_EACH_ROW ? &row : &other) += 1;
    EXPECT(row == 1 && other == 1);
    /* 16 x 16 blocks: a warp spans two rows, one request each for A;
     * 32 x 8: one row a warp */
    unsigned k = 1024;
    struct launch b;
    launch(&b, 4, 1, 16, 16);
    set(&b, 16, &k, 4);
    struct est_kwork kw;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
    NEAR(kw.amount[MAYA_KW_LD_GLOBAL], 1024 * 4.0 / 16 + 1024 * 4.0, 0.001);
    launch(&b, 4, 1, 32, 8);
    set(&b, 16, &k, 4);
    EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
    NEAR(kw.amount[MAYA_KW_LD_GLOBAL], 1024 * 4.0 / 32 + 1024 * 4.0, 0.001);
    free(keep);
}

/* Generic addresses into shared memory: two tile pointers kept in a local
 * array (As[stage], indexed at run time), a load through one of them, which
 * reads shared memory; a generic store through a parameter, which writes
 * global memory; and a store guarded by a literal predicate (-1: true). */
static const char window[] =
    ".visible .entry win(\n\t.param .u64 win_param_0\n)\n{\n"
    "\t.local .align 16 .b8 __local_depot0[16];\n\t.reg .b64 %SPL;\n\t.shared .align 16 .b8 tile[4096];\n"
    "\tmov.u64 %SPL, __local_depot0;\n\tadd.u64 %rd1, %SPL, 0;\n"
    "\tmov.u64 %rd2, tile;\n\tcvta.shared.u64 %rd3, %rd2;\n\tadd.s64 %rd4, %rd3, 2048;\n"
    "\tst.local.v2.u64 [%rd1], {%rd3, %rd4};\n"
    "\tmov.u32 %r1, %tid.x;\n\tand.b32 %r2, %r1, 1;\n\tmul.wide.u32 %rd5, %r2, 8;\n\tadd.s64 %rd6, %rd1, %rd5;\n"
    "\tld.local.u64 %rd7, [%rd6];\n\tmul.wide.u32 %rd8, %r1, 4;\n\tadd.s64 %rd9, %rd7, %rd8;\n"
    "\tld.f32 %f1, [%rd9];\n"
    "\tld.param.u64 %rd10, [win_param_0];\n\tcvta.to.global.u64 %rd11, %rd10;\n\tadd.s64 %rd12, %rd11, %rd8;\n"
    "\tst.f32 [%rd12], %f1;\n"
    "\tmov.pred %p1, -1;\n\t@%p1 st.global.f32 [%rd12], %f1;\n"
    "\tret;\n}\n";

static void test_shared_window(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(window, sizeof window - 1, "win", &keep);
    if (!w)
        return;
    struct launch b;
    launch(&b, 2, 1, 256, 1);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_SHARED], 512 * 4.0, 0.001);
    EXPECT(k.amount[MAYA_KW_LD_GLOBAL] == 0);
    NEAR(k.amount[MAYA_KW_ST_GLOBAL], 512 * 8.0, 0.001);
    free(keep);
}

/* Fragment loads from shared memory whose rows are 64, 80 and 256 bytes
 * apart (ldm 32, 40 and 128 halves): 4-way, no and 8-way bank conflicts. */
static const char fragments[] =
    ".visible .entry frag(\n\t.param .u32 frag_param_0\n)\n{\n"
    "\t.shared .align 16 .b8 tile[16384];\n\tmov.u32 %r1, tile;\n\tld.param.u32 %r2, [frag_param_0];\n"
    "\twmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%r10, %r11, %r12, %r13, %r14, %r15, %r16, %r17}, [%r1], 32;\n"
    "\tmov.u32 %r3, 40;\n"
    "\twmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%r10, %r11, %r12, %r13, %r14, %r15, %r16, %r17}, [%r1], %r3;\n"
    "\twmma.load.b.sync.aligned.row.m16n16k16.shared.f16 {%r10, %r11, %r12, %r13, %r14, %r15, %r16, %r17}, [%r1], 128;\n"
    "\twmma.load.b.sync.aligned.row.m16n16k16.shared.f16 {%r10, %r11, %r12, %r13, %r14, %r15, %r16, %r17}, [%r1], %r2;\n"
    "\tret;\n}\n";

static void test_fragment_conflicts(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(fragments, sizeof fragments - 1, "frag", &keep);
    if (!w)
        return;
    /* one warp; a fragment is 16 x 16 halves, 16 bytes a thread; the last
     * load's ldm is a parameter: no conflict counted */
    unsigned ldm = 128;
    struct launch b;
    launch(&b, 1, 1, 32, 1);
    set(&b, 0, &ldm, 4);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_SHARED], 32 * 16.0 * (4 + 1 + 8 + 1), 0.001);
    free(keep);
}

/* Block x loads x + 1 words: its work follows %ctaid (a causal
 * attention's query blocks); its spread over 64 blocks is near 2. */
static const char triangle[] =
    ".version 8.7\n.target sm_90\n.address_size 64\n"
    ".visible .entry tri(\n\t.param .u64 tri_param_0\n)\n{\n"
    "\t.reg .pred %p<3>;\n\t.reg .b32 %r<12>;\n\t.reg .f32 %f<5>;\n\t.reg .b64 %rd<10>;\n"
    "\tld.param.u64 %rd1, [tri_param_0];\n\tmov.u32 %r1, %ctaid.x;\n\tadd.s32 %r2, %r1, 1;\n\tmov.u32 %r3, 0;\n"
    "$L__BB0_1:\n\tmul.wide.s32 %rd2, %r3, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tld.global.f32 %f1, [%rd3];\n"
    "\tadd.s32 %r3, %r3, 1;\n\tsetp.lt.s32 %p1, %r3, %r2;\n\t@%p1 bra $L__BB0_1;\n\tret;\n}\n";

static void test_block_spread(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(triangle, sizeof triangle - 1, "tri", &keep);
    if (!w)
        return;
    struct launch b;
    launch(&b, 64, 1, 128, 1);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    /* x + 1 words a thread, 32.5 on average; the same address for all of
     * a block's threads: one request a warp */
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 64 * 128 * 32.5 * 4 / 32, 0.03);
    EXPECT(k.block_spread[MAYA_KW_LD_GLOBAL] > 1.6 && k.block_spread[MAYA_KW_LD_GLOBAL] <= 2.0);
    EXPECT(k.block_spread[MAYA_KW_FLOP_FP32] == 1);
    free(keep);
    /* the same loop over the threads (x: %tid.x) leaves blocks alike */
    w = analyse(uniform_loads, sizeof uniform_loads - 1, "uni", &keep);
    if (!w)
        return;
    launch(&b, 4, 1, 256, 1);
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    EXPECT(k.block_spread[MAYA_KW_LD_GLOBAL] == 1);
    free(keep);
}

/* Blocks of uneven work end after the balanced time: one wave with its
 * longest block, more waves by the longest block's excess over the mean;
 * blocks alike keep the waves' time. */
static void test_uneven_blocks(void)
{
    struct maya_gpu_spec g;
    memset(&g, 0, sizeof g);
    g.prop.multiProcessorCount = 100;
    g.prop.maxThreadsPerMultiProcessor = 2048;
    g.prop.maxBlocksPerMultiProcessor = 1; /* one slot an SM: 100 slots */
    g.perf.fp32_tflops = 50;
    g.perf.sm_clock_mhz = 1000;
    g.perf.kernel_floor_ns = 1000;
    struct est_kwork k;
    memset(&k, 0, sizeof k);
    k.threads_per_block = 256;
    k.amount[MAYA_KW_INSTS] = 1e9; /* issue-bound */
    for (int c = 0; c < MAYA_KW_NCLASSES; c++)
        k.block_spread[c] = 1;
    struct est_kwork_times t, alike;
    /* 250 blocks: 3 waves, the last half full */
    k.blocks = 250;
    k.threads = k.blocks * k.threads_per_block;
    est_kwork_times(&g, &k, &alike);
    EXPECT(strcmp(alike.bound, "issue") == 0 && alike.waves == 3);
    k.block_spread[MAYA_KW_INSTS] = 2;
    est_kwork_times(&g, &k, &t);
    double body = alike.total_ns - 1000, balanced = body * 250 / 300, mean_block = balanced * 100 / 250;
    NEAR(t.total_ns - 1000, fmax(body, balanced + mean_block), 0.001);
    EXPECT(t.total_ns > alike.total_ns);
    /* a spread in a class the bounding unit does not serve changes nothing */
    k.block_spread[MAYA_KW_INSTS] = 1;
    k.block_spread[MAYA_KW_SFU] = 4;
    est_kwork_times(&g, &k, &t);
    NEAR(t.total_ns, alike.total_ns, 0.001);
    /* one wave: the longest block */
    k.blocks = 80;
    k.threads = k.blocks * k.threads_per_block;
    k.block_spread[MAYA_KW_SFU] = 1;
    est_kwork_times(&g, &k, &alike);
    k.block_spread[MAYA_KW_INSTS] = 1.5;
    est_kwork_times(&g, &k, &t);
    NEAR(t.total_ns - 1000, (alike.total_ns - 1000) * 1.5, 0.001);
}

static void test_unresolved(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(data_loop, sizeof data_loop - 1, "chase", &keep);
    if (!w)
        return;
    EXPECT(w->flags & MAYA_KW_F_LOOP_UNRESOLVED);
    struct launch b;
    launch(&b, 1, 1, 32, 1);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 32.0 * 8, 0.001); /* counted once */
    /* no store at all: every word is only read through */
    EXPECT(emu_kwork_unstored_words(w, ((const struct maya_rec_kernel *)keep)->work_bytes) == UINT64_MAX);
    free(keep);
}

static void test_sass(void)
{
    struct emu_ptx_kernel k;
    EXPECT(emu_sass_parse(sass_gs, sizeof sass_gs - 1, "_Z4gs32PKfPfi", 0x210, 0x14, NULL, 0, &k) == 0);
    EXPECT(k.sass && k.ninsts == 24 && k.nlabels == 5);
    int bra = 0, ld = 0;
    for (uint32_t i = 0; i < k.ninsts; i++) {
        bra += emu_slice_is(k.insts[i].op, "bra") && emu_slice_is(k.insts[i].ops[0], ".L_x_0") && k.insts[i].guard_neg;
        ld += emu_slice_is(k.insts[i].op, "ld.global.b32") && emu_slice_is(k.insts[i].ops[1], "desc[UR6][R2.64]");
    }
    EXPECT(bra == 1 && ld == 1);
    emu_ptx_kernel_free(&k);
    void *rk;
    const struct maya_kwork *w = analyse_sass(sass_gs, sizeof sass_gs - 1, "_Z4gs32PKfPfi", 0x14, NULL, 0, &rk);
    EXPECT(w && w->source == MAYA_KW_SASS && !(w->flags & MAYA_KW_F_LOOP_UNRESOLVED));
    if (w) {
        int n = 1 << 22;
        struct launch b;
        launch(&b, 528, 1, 256, 1);
        set(&b, 16, &n, 4);
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
        NEAR(kw.amount[MAYA_KW_LD_GLOBAL], 4.0 * n, 0.001);
        NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 4.0 * n, 0.001);
        NEAR(kw.amount[MAYA_KW_FLOP_FP32], 1.0 * n, 0.001);
        /* addresses go through x and y: their extents are asked for */
        uint16_t off[4];
        EXPECT(emu_kwork_pointer_params(w, off, 4) == 2 && off[0] == 0 && off[1] == 8);
        /* stores go through y (c[0x0][0x218], word 1) only */
        uint64_t ro = emu_kwork_unstored_words(w, ((const struct maya_rec_kernel *)rk)->work_bytes);
        EXPECT((ro & 1) && !(ro >> 1 & 1));
    }
    EXPECT(emu_sass_parse(sass_gs, sizeof sass_gs - 1, "_Z5otherv", 0x210, 0x14, NULL, 0, &k) < 0);
    free(rk);
}

/* SASS of a row loop over n / 4 float4s whose bound is a signed division
 * (nvcc's USHF.R.S32.HI / ULEA.HI with URZ), and reciprocals' range checks
 * on a float's exponent bits before it and inside it (FADD, then integer
 * tests of its bits: on data; the slow path a call), after which the paths
 * join; the float parameter eps feeds the first:
 *   float r = 1 / eps;
 *   for (int i = threadIdx.x; i < n / 4; i += blockDim.x) y4[i] = f(x4[i], r); */
static const char sass_rows[] =
    "//--------------------- .text._Z4rowsPKfPfif --------------------------\n"
    ".text._Z4rowsPKfPfif:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0007*/                   ULDC UR12, c[0x0][0x224] ;\n"
    "        /*0008*/                   FADD R21, RZ, UR12 ;\n"
    "        /*0009*/                   IADD3 R22, R21, 0x1800000, RZ ;\n"
    "        /*000a*/                   LOP3.LUT R22, R22, 0x7f800000, RZ, 0xc0, !PT ;\n"
    "        /*000b*/                   ISETP.GT.U32.AND P3, PT, R22, 0x1ffffff, PT ;\n"
    "        /*000c*/               @P3 BRA `(.L_x_5) ;\n"
    "        /*000d*/                   MOV R8, 0x0e ;\n"
    "        /*000e*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm20_rcp_rn_f32_slowpath) ;\n"
    "        /*000f*/                   BRA `(.L_x_6) ;\n"
    ".L_x_5:\n"
    "        /*000f*/                   MUFU.RCP R8, R21 ;\n"
    ".L_x_6:\n"
    "        /*0010*/                   ULDC UR7, c[0x0][0x220] ;\n"
    "        /*0020*/                   ULDC UR9, c[0x0][0x0] ;\n"
    "        /*0030*/                   USHF.R.S32.HI UR6, URZ, 0x1f, UR7 ;\n"
    "        /*0040*/                   ULEA.HI UR6, UR6, UR7, URZ, 0x2 ;\n"
    "        /*0050*/                   USHF.R.S32.HI UR6, URZ, 0x2, UR6 ;\n"
    "        /*0060*/                   ISETP.GE.AND P2, PT, R0, UR6, PT ;\n"
    "        /*0070*/               @P2 EXIT ;\n"
    "        /*0080*/                   LDC.64 R6, c[0x0][0x210] ;\n"
    "        /*0090*/                   LDC.64 R14, c[0x0][0x218] ;\n"
    "        /*00a0*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    "        /*00b0*/                   MOV R20, RZ ;\n"
    ".L_x_0:\n"
    "        /*00c0*/                   IMAD.WIDE R8, R0, 0x10, R6 ;\n"
    "        /*00d0*/                   LDG.E.128 R8, desc[UR10][R8.64] ;\n"
    "        /*00e0*/                   FADD R20, R20, 1 ;\n"
    "        /*00f0*/                   IADD3 R11, R20, 0x1800000, RZ ;\n"
    "        /*0100*/                   LOP3.LUT R11, R11, 0x7f800000, RZ, 0xc0, !PT ;\n"
    "        /*0110*/                   ISETP.GT.U32.AND P0, PT, R11, 0x1ffffff, PT ;\n"
    "        /*0120*/               @P0 BRA `(.L_x_1) ;\n"
    "        /*0130*/                   MOV R8, 0x150 ;\n"
    "        /*0140*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm20_rcp_rn_f32_slowpath) ;\n"
    "        /*0150*/                   BRA `(.L_x_2) ;\n"
    ".L_x_1:\n"
    "        /*0160*/                   MUFU.RCP R8, R20 ;\n"
    ".L_x_2:\n"
    "        /*0160*/                   IMAD.WIDE R12, R0, 0x10, R14 ;\n"
    "        /*0170*/                   STG.E.128 desc[UR10][R12.64], R8 ;\n"
    "        /*0180*/                   IADD3 R0, R0, UR9, RZ ;\n"
    "        /*0190*/                   ISETP.GE.AND P1, PT, R0, UR6, PT ;\n"
    "        /*01a0*/              @!P1 BRA `(.L_x_0) ;\n"
    "        /*01b0*/                   EXIT ;\n"
    ".L_x_3:\n"
    "        /*01c0*/                   BRA `(.L_x_3);\n"
    ".L_x_4:\n";

static void test_sass_rows(void)
{
    void *rk;
    const struct maya_kwork *w = analyse_sass(sass_rows, sizeof sass_rows - 1, "_Z4rowsPKfPfif", 0x18, NULL, 0, &rk);
    EXPECT(w && !(w->flags & MAYA_KW_F_LOOP_UNRESOLVED));
    if (w) {
        int n = 1 << 22;
        struct launch b;
        launch(&b, 1, 1, 256, 1);
        float eps = 1e-5f;
        set(&b, 16, &n, 4);
        set(&b, 20, &eps, 4);
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
        /* every float of the row read and written once, whichever way
         * the range checks went */
        NEAR(kw.amount[MAYA_KW_LD_GLOBAL], 4.0 * n, 0.001);
        NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 4.0 * n, 0.001);
        /* a call: its stores are not in the terms, so no word is known
         * to be only read */
        EXPECT(w->flags & MAYA_KW_F_STORES_UNKNOWN);
        EXPECT(emu_kwork_unstored_words(w, ((const struct maya_rec_kernel *)rk)->work_bytes) == 0);
    }
    free(rk);
}

/* A loop counting down by 16 (blockReduce's unrolled walk over the warps'
 * partial sums), its step printed as nvdisasm prints VIADD's negative
 * immediates: 0xfffffff0, which a 32-bit add takes as -16:
 *   for (int i = n; i > 12; i -= 16) y[threadIdx.x] += 1; */
static const char sass_down[] =
    "//--------------------- .text._Z4downPfi --------------------------\n"
    ".text._Z4downPfi:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   LDC R29, c[0x0][0x218] ;\n"
    "        /*0020*/                   LDC.64 R2, c[0x0][0x210] ;\n"
    "        /*0030*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    "        /*0040*/                   ISETP.GT.AND P0, PT, R29, 0xc, PT ;\n"
    "        /*0050*/              @!P0 EXIT ;\n"
    "        /*0060*/                   IMAD.WIDE R2, R0, 0x4, R2 ;\n"
    ".L_x_0:\n"
    "        /*0070*/                   LDG.E R4, desc[UR10][R2.64] ;\n"
    "        /*0080*/                   FADD R4, R4, 1 ;\n"
    "        /*0090*/                   STG.E desc[UR10][R2.64], R4 ;\n"
    "        /*00a0*/                   VIADD R29, R29, 0xfffffff0 ;\n"
    "        /*00b0*/                   ISETP.GT.AND P0, PT, R29, 0xc, PT ;\n"
    "        /*00c0*/               @P0 BRA `(.L_x_0) ;\n"
    "        /*00d0*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*00e0*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

static void test_sass_negative_immediate(void)
{
    void *rk;
    const struct maya_kwork *w = analyse_sass(sass_down, sizeof sass_down - 1, "_Z4downPfi", 0xc, NULL, 0, &rk);
    EXPECT(w && !(w->flags & MAYA_KW_F_LOOP_UNRESOLVED));
    if (w) {
        int n = 1 << 10;
        struct launch b;
        launch(&b, 1, 1, 32, 1);
        set(&b, 8, &n, 4);
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
        /* 1024 down to 16 by 16: 64 trips of a 4-byte load and store per
         * thread (read as +4294967280, the step gave one trip, and the
         * register after the loop an unbounded value) */
        NEAR(kw.amount[MAYA_KW_LD_GLOBAL], 4.0 * 64 * 32, 0.02);
        NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 4.0 * 64 * 32, 0.02);
    }
    free(rk);
}

/* A count-down loop as register-starved kernels (flash attention's 255
 * registers) compile it: the counter lives on the stack (STL/LDL at
 * [R1+off]), a 64-bit spill beside it; the bound is a min (VIMNMX); the
 * next iteration's load sits out of line before the loop's header,
 * reached by a back branch and leaving by a jump into the body; the exit
 * test is a uniform predicate copied by PLOP3, and the loop closes with
 * "@P0 BRA exit; BRA head":
 *   for (int i = min(n, 1024) - 1; i >= 0; i--) y[tid] += 1; */
static const char sass_spill[] =
    "//--------------------- .text._Z5spillif --------------------------\n"
    ".text._Z5spillif:\n"
    "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
    "        /*0010*/                   S2R R0, SR_TID.X ;\n"
    "        /*0020*/                   LDC R5, c[0x0][0x210] ;\n"
    "        /*0030*/                   LDC.64 R2, c[0x0][0x218] ;\n"
    "        /*0040*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    "        /*0050*/                   VIMNMX R5, R5, 0x400, PT ;\n"
    "        /*0060*/                   VIADD R4, R5, 0xffffffff ;\n"
    "        /*0070*/                   ISETP.GE.AND P0, PT, R4, RZ, PT ;\n"
    "        /*0080*/              @!P0 EXIT ;\n"
    "        /*0090*/                   STL [R1+0x20], R4 (*\"SpillRefill\"*) ;\n"
    "        /*00a0*/                   IMAD.WIDE R2, R0, 0x4, R2 ;\n"
    "        /*00b0*/                   STL.64 [R1+0x28], R2 (*\"SpillRefill\"*) ;\n"
    "        /*00c0*/                   BRA `(.L_x_1) ;\n"
    ".L_x_0:\n"
    "        /*00d0*/                   LDG.E R7, desc[UR10][R2.64] ;\n"
    "        /*00e0*/                   BRA `(.L_x_2) ;\n"
    ".L_x_1:\n"
    "        /*00f0*/                   LDL R6, [R1+0x20] (*\"SpillRefill\"*) ;\n"
    "        /*0100*/                   LDL.64 R2, [R1+0x28] (*\"SpillRefill\"*) ;\n"
    "        /*0110*/                   ISETP.GT.AND P1, PT, R6, RZ, PT ;\n"
    "        /*0120*/               @P1 BRA `(.L_x_0) ;\n"
    ".L_x_2:\n"
    "        /*0130*/                   LDG.E R8, desc[UR10][R2.64] ;\n"
    "        /*0140*/                   FADD R8, R8, 1 ;\n"
    "        /*0150*/                   STG.E desc[UR10][R2.64], R8 ;\n"
    "        /*0160*/                   VIADD R6, R6, 0xffffffff ;\n"
    "        /*0170*/                   STL [R1+0x20], R6 (*\"SpillRefill\"*) ;\n"
    "        /*0180*/                   ISETP.LT.AND P2, PT, R6, RZ, PT ;\n"
    "        /*0190*/                   PLOP3.LUT P0, PT, PT, PT, P2, 0x80, 0x0 ;\n"
    "        /*01a0*/               @P0 BRA `(.L_x_3) ;\n"
    "        /*01b0*/                   BRA `(.L_x_1) ;\n"
    ".L_x_3:\n"
    "        /*01c0*/                   EXIT ;\n"
    ".L_x_4:\n"
    "        /*01d0*/                   BRA `(.L_x_4);\n"
    ".L_x_5:\n";

static void test_sass_spilled_loop(void)
{
    void *rk;
    const struct maya_kwork *w = analyse_sass(sass_spill, sizeof sass_spill - 1, "_Z5spillif", 0x10, NULL, 0, &rk);
    /* flagged: the out-of-line piece's load is not counted */
    EXPECT(w && (w->flags & MAYA_KW_F_LOOP_UNRESOLVED));
    if (w) {
        struct launch b;
        launch(&b, 1, 1, 32, 1);
        for (int n = 100; n <= 4000; n += 3900) {
            set(&b, 0, &n, 4);
            struct est_kwork kw;
            EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
            /* min(n, 1024) trips of a 4-byte load and store per thread */
            double trips = n < 1024 ? n : 1024;
            NEAR(kw.amount[MAYA_KW_LD_GLOBAL], 4.0 * trips * 32, 0.02);
            NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 4.0 * trips * 32, 0.02);
            EXPECT(kw.unresolved == 0);
        }
    }
    free(rk);
}

/* A bound read from memory where a pointer parameter is set, from a
 * parameter where it is null (varlen attention's sequence lengths): a
 * launch with the pointer null gets a trip count, one with it set does not.
 *   int n = lens ? *lens : n_param;
 *   for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = 0; */
static const char sass_lens[] =
    "//--------------------- .text._Z4lensiPiPf --------------------------\n"
    ".text._Z4lensiPiPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   LDC R5, c[0x0][0x210] ;\n"
    "        /*0020*/                   LDC.64 R2, c[0x0][0x218] ;\n"
    "        /*0030*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    "        /*0040*/                   ISETP.NE.U32.AND P0, PT, R2, RZ, PT ;\n"
    "        /*0050*/                   ISETP.NE.AND.EX P0, PT, R3, RZ, PT, P0 ;\n"
    "        /*0060*/               @P0 LDG.E R5, desc[UR10][R2.64] ;\n"
    "        /*0070*/                   ISETP.GE.AND P1, PT, R0, R5, PT ;\n"
    "        /*0080*/               @P1 EXIT ;\n"
    "        /*0090*/                   LDC.64 R6, c[0x0][0x220] ;\n"
    "        /*00a0*/                   ULDC UR4, c[0x0][0x0] ;\n"
    ".L_x_0:\n"
    "        /*00b0*/                   IMAD.WIDE R8, R0, 0x4, R6 ;\n"
    "        /*00c0*/                   STG.E desc[UR10][R8.64], RZ ;\n"
    "        /*00d0*/                   IADD3 R0, R0, UR4, RZ ;\n"
    "        /*00e0*/                   ISETP.GE.AND P1, PT, R0, R5, PT ;\n"
    "        /*00f0*/              @!P1 BRA `(.L_x_0) ;\n"
    "        /*0100*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*0110*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

static void test_sass_launch_decided(void)
{
    void *rk;
    static const struct maya_kparam three[] = { { 0, 4, MAYA_KP_I32, { 0 } }, { 8, 8, MAYA_KP_PTR, { 0 } },
                                                { 16, 8, MAYA_KP_PTR, { 0 } } };
    const struct maya_kwork *w = analyse_sass(sass_lens, sizeof sass_lens - 1, "_Z4lensiPiPf", 0x18, three, 3, &rk);
    EXPECT(w != NULL);
    if (w) {
        struct launch b;
        launch(&b, 1, 1, 256, 1);
        int n = 1 << 16;
        set(&b, 0, &n, 4);
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0); /* lens null: n from the parameter */
        NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 4.0 * n, 0.01);
        EXPECT(kw.unresolved == 0);
        uint64_t lens = 0x7f0000001000ull;
        set(&b, 8, &lens, 8);
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0); /* lens set: n is in memory */
        EXPECT(kw.unresolved > 0);
    }
    free(rk);
}

/* A loop bound that is an unsigned division by a register, as nvcc
 * compiles it (a float reciprocal turned into 2^32 / d, refined, then the
 * high half of a product):
 *   unsigned q = n / (4 * blockDim.x);
 *   for (unsigned i = threadIdx.x; i < q; i += blockDim.x) y[i] = 0; */
static const char sass_udiv[] =
    "//--------------------- .text._Z4udivjPf --------------------------\n"
    ".text._Z4udivjPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   LDC R19, c[0x0][0x210] ;\n"
    "        /*0020*/                   ULDC UR7, c[0x0][0x0] ;\n"
    "        /*0030*/                   USHF.L.U32 UR4, UR7, 0x2, URZ ;\n"
    "        /*0040*/                   IMAD R15, RZ, RZ, -UR4 ;\n"
    "        /*0050*/                   I2F.U32.RP R8, UR4 ;\n"
    "        /*0060*/                   MUFU.RCP R8, R8 ;\n"
    "        /*0070*/                   IADD3 R12, R8, 0xffffffe, RZ ;\n"
    "        /*0080*/                   IMAD.SHL.U32 R9, R0, 0x4, RZ ;\n"
    "        /*0090*/                   F2I.FTZ.U32.TRUNC.NTZ R13, R12 ;\n"
    "        /*00a0*/                   IMAD.MOV.U32 R12, RZ, RZ, RZ ;\n"
    "        /*00b0*/                   IMAD R15, R15, R13, RZ ;\n"
    "        /*00c0*/                   IMAD.HI.U32 R14, R13, R15, R12 ;\n"
    "        /*00d0*/                   IMAD.HI.U32 R14, R14, R19, RZ ;\n"
    "        /*00e0*/                   ISETP.GE.U32.AND P0, PT, R0, R14, PT ;\n"
    "        /*00f0*/               @P0 EXIT ;\n"
    "        /*0100*/                   LDC.64 R2, c[0x0][0x218] ;\n"
    "        /*0110*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    ".L_x_0:\n"
    "        /*0120*/                   IMAD.WIDE.U32 R4, R0, 0x4, R2 ;\n"
    "        /*0130*/                   STG.E desc[UR10][R4.64], RZ ;\n"
    "        /*0140*/                   IADD3 R0, R0, UR7, RZ ;\n"
    "        /*0150*/                   ISETP.GE.U32.AND P0, PT, R0, R14, PT ;\n"
    "        /*0160*/              @!P0 BRA `(.L_x_0) ;\n"
    "        /*0170*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*0180*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

/* The same bound by a constant: n / 3 as the high half of n * 0xaaaaaaab,
 * shifted right by one more. */
static const char sass_div3[] =
    "//--------------------- .text._Z4div3jPf --------------------------\n"
    ".text._Z4div3jPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   LDC R19, c[0x0][0x210] ;\n"
    "        /*0020*/                   ULDC UR7, c[0x0][0x0] ;\n"
    "        /*0030*/                   IMAD.HI.U32 R14, R19, -0x55555555, RZ ;\n"
    "        /*0040*/                   SHF.R.U32.HI R14, RZ, 0x1, R14 ;\n"
    "        /*0050*/                   ISETP.GE.U32.AND P0, PT, R0, R14, PT ;\n"
    "        /*0060*/               @P0 EXIT ;\n"
    "        /*0070*/                   LDC.64 R2, c[0x0][0x218] ;\n"
    "        /*0080*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    ".L_x_0:\n"
    "        /*0090*/                   IMAD.WIDE.U32 R4, R0, 0x4, R2 ;\n"
    "        /*00a0*/                   STG.E desc[UR10][R4.64], RZ ;\n"
    "        /*00b0*/                   IADD3 R0, R0, UR7, RZ ;\n"
    "        /*00c0*/                   ISETP.GE.U32.AND P0, PT, R0, R14, PT ;\n"
    "        /*00d0*/              @!P0 BRA `(.L_x_0) ;\n"
    "        /*00e0*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*00f0*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

/* One block of `threads` threads of SASS kernel `entry` (16 bytes of
 * parameters laid out as layout says, the first nvalues of them values):
 * the global bytes it stores, its loops all read; -1 if not analysed. */
static double sass_loop_stores(const char *text, size_t n, const char *entry, const struct maya_kparam *layout,
                               unsigned nlayout, unsigned threads, const void *values, unsigned nvalues)
{
    void *rk;
    const struct maya_kwork *w = analyse_sass(text, n, entry, 0x10, layout, nlayout, &rk);
    EXPECT(w && !(w->flags & MAYA_KW_F_LOOP_UNRESOLVED));
    double stored = -1;
    if (w) {
        struct launch b;
        launch(&b, 1, 1, threads, 1);
        set(&b, 0, values, nvalues);
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
        EXPECT(kw.unresolved == 0);
        stored = kw.amount[MAYA_KW_ST_GLOBAL];
    }
    free(rk);
    return stored;
}

/* A loop bound that is a signed division by a register, as nvcc compiles
 * it for sm_80: the magnitudes divided as above (IABS, I2F.RP, the error
 * term in two steps), the quotient corrected by the remainder, negated when
 * the signs differ ((n ^ d) < 0), ~d when d is 0:
 *   int q = n / d;
 *   for (int i = threadIdx.x; i < q; i += blockDim.x) y[i] = 0; */
static const char sass_sdiv[] =
    "//--------------------- .text._Z4sdiviiPf --------------------------\n"
    ".text._Z4sdiviiPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   IABS R4, c[0x0][0x214] ;\n"
    "        /*0020*/                   IABS R5, c[0x0][0x210] ;\n"
    "        /*0030*/                   I2F.RP R2, R4 ;\n"
    "        /*0040*/                   MUFU.RCP R2, R2 ;\n"
    "        /*0050*/                   IADD3 R6, R2, 0xffffffe, RZ ;\n"
    "        /*0060*/                   F2I.FTZ.U32.TRUNC.NTZ R7, R6 ;\n"
    "        /*0070*/                   IMAD.MOV.U32 R6, RZ, RZ, RZ ;\n"
    "        /*0080*/                   IMAD.MOV R3, RZ, RZ, -R7 ;\n"
    "        /*0090*/                   IMAD R3, R3, R4, RZ ;\n"
    "        /*00a0*/                   IMAD.HI.U32 R7, R7, R3, R6 ;\n"
    "        /*00b0*/                   IMAD.MOV.U32 R3, RZ, RZ, R5 ;\n"
    "        /*00c0*/                   IMAD.HI.U32 R8, R7, R3, RZ ;\n"
    "        /*00d0*/                   IMAD.MOV R9, RZ, RZ, -R8 ;\n"
    "        /*00e0*/                   IMAD R3, R4, R9, R3 ;\n"
    "        /*00f0*/                   ISETP.GT.U32.AND P1, PT, R4, R3, PT ;\n"
    "        /*0100*/              @!P1 IMAD.IADD R3, R3, 0x1, -R4 ;\n"
    "        /*0110*/              @!P1 IADD3 R8, R8, 0x1, RZ ;\n"
    "        /*0120*/                   ISETP.NE.AND P2, PT, RZ, c[0x0][0x214], PT ;\n"
    "        /*0130*/                   ISETP.GE.U32.AND P0, PT, R3, R4, PT ;\n"
    "        /*0140*/                   IMAD.MOV.U32 R10, RZ, RZ, c[0x0][0x210] ;\n"
    "        /*0150*/                   LOP3.LUT R10, R10, c[0x0][0x214], RZ, 0x3c, !PT ;\n"
    "        /*0160*/                   ISETP.GE.AND P3, PT, R10, RZ, PT ;\n"
    "        /*0170*/               @P0 IADD3 R8, R8, 0x1, RZ ;\n"
    "        /*0180*/              @!P3 IMAD.MOV R8, RZ, RZ, -R8 ;\n"
    "        /*0190*/              @!P2 LOP3.LUT R8, RZ, c[0x0][0x214], RZ, 0x33, !PT ;\n"
    "        /*01a0*/                   ISETP.GE.AND P0, PT, R0, R8, PT ;\n"
    "        /*01b0*/               @P0 EXIT ;\n"
    "        /*01c0*/                   LDC.64 R12, c[0x0][0x218] ;\n"
    "        /*01d0*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    "        /*01e0*/                   ULDC UR7, c[0x0][0x0] ;\n"
    ".L_x_0:\n"
    "        /*01f0*/                   IMAD.WIDE R14, R0, 0x4, R12 ;\n"
    "        /*0200*/                   STG.E desc[UR10][R14.64], RZ ;\n"
    "        /*0210*/                   IADD3 R0, R0, UR7, RZ ;\n"
    "        /*0220*/                   ISETP.GE.AND P0, PT, R0, R8, PT ;\n"
    "        /*0230*/              @!P0 BRA `(.L_x_0) ;\n"
    "        /*0240*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*0250*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

/* Bytes the signed-division kernel (or a variant of its text) stores for
 * one block of 256 threads with n and d. */
static double sdiv_stores(const char *text, size_t n_text, int n, int d)
{
    static const struct maya_kparam three[] = { { 0, 4, MAYA_KP_I32, { 0 } }, { 4, 4, MAYA_KP_I32, { 0 } },
                                                { 8, 8, MAYA_KP_PTR, { 0 } } };
    int nd[2] = { n, d };
    return sass_loop_stores(text, n_text, "_Z4sdiviiPf", three, 3, 256, nd, 8);
}

static void test_sass_sdiv(void)
{
    int n = 1 << 20;
    NEAR(sdiv_stores(sass_sdiv, sizeof sass_sdiv - 1, n, 3), 4.0 * (n / 3), 0.02);
    NEAR(sdiv_stores(sass_sdiv, sizeof sass_sdiv - 1, -n, -3), 4.0 * (n / 3), 0.02); /* the same sign */
    EXPECT(sdiv_stores(sass_sdiv, sizeof sass_sdiv - 1, -n, 3) == 0);               /* a negative count */
    /* the loop left by CALL.REL.NOINC to the code after it (a branch; the
     * back branch then unconditional), as the memory-efficient attention's
     * key loop is */
    char noinc[sizeof sass_sdiv + 64];
    const char *tail = strstr(sass_sdiv, "        /*0230*/");
    EXPECT(tail != NULL);
    if (tail) {
        int k = snprintf(noinc, sizeof noinc, "%.*s%s", (int)(tail - sass_sdiv), sass_sdiv,
                         "        /*0230*/               @P0 CALL.REL.NOINC `(.L_x_3) ;\n"
                         "        /*0240*/                   BRA `(.L_x_0) ;\n"
                         ".L_x_3:\n"
                         "        /*0250*/                   EXIT ;\n");
        EXPECT(k > 0 && (size_t)k < sizeof noinc);
        NEAR(sdiv_stores(noinc, strlen(noinc), n, 3), 4.0 * (n / 3), 0.02);
    }
}

/* A loop whose start and bound both follow the thread (a pooling window:
 * rows tid / 2 to tid / 2 + 2): two iterations each. Their ranges over the
 * threads taken apart would give 33; the threads are sampled together. */
static const char sass_window[] =
    "//--------------------- .text._Z3winPf --------------------------\n"
    ".text._Z3winPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   SHF.R.U32.HI R2, RZ, 0x1, R0 ;\n"
    "        /*0020*/                   IADD3 R3, R2, 0x2, RZ ;\n"
    "        /*0030*/                   LDC.64 R4, c[0x0][0x218] ;\n"
    "        /*0040*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    ".L_x_0:\n"
    "        /*0050*/                   IMAD.WIDE R6, R2, 0x4, R4 ;\n"
    "        /*0060*/                   STG.E desc[UR10][R6.64], RZ ;\n"
    "        /*0070*/                   IADD3 R2, R2, 0x1, RZ ;\n"
    "        /*0080*/                   ISETP.GE.AND P0, PT, R2, R3, PT ;\n"
    "        /*0090*/              @!P0 BRA `(.L_x_0) ;\n"
    "        /*00a0*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*00b0*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

/* A loop whose bound is read from memory where a pointer parameter is set
 * (as sass_lens), run by the first 32 of 256 threads: with the pointer set
 * the count is not known, and the body is counted once (flagged) for those
 * 32, not for all 256. */
static const char sass_unknown_trip[] =
    "//--------------------- .text._Z4someiPiPf --------------------------\n"
    ".text._Z4someiPiPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   ISETP.GE.AND P2, PT, R0, 0x20, PT ;\n"
    "        /*0020*/               @P2 EXIT ;\n"
    "        /*0030*/                   LDC R5, c[0x0][0x210] ;\n"
    "        /*0040*/                   LDC.64 R2, c[0x0][0x218] ;\n"
    "        /*0050*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    "        /*0060*/                   ISETP.NE.U32.AND P0, PT, R2, RZ, PT ;\n"
    "        /*0070*/                   ISETP.NE.AND.EX P0, PT, R3, RZ, PT, P0 ;\n"
    "        /*0080*/               @P0 LDG.E R5, desc[UR10][R2.64] ;\n"
    "        /*0090*/                   IMAD.MOV.U32 R4, RZ, RZ, RZ ;\n"
    "        /*00a0*/                   LDC.64 R6, c[0x0][0x220] ;\n"
    ".L_x_0:\n"
    "        /*00b0*/                   IMAD.WIDE R8, R4, 0x4, R6 ;\n"
    "        /*00c0*/                   STG.E desc[UR10][R8.64], RZ ;\n"
    "        /*00d0*/                   IADD3 R4, R4, 0x1, RZ ;\n"
    "        /*00e0*/                   ISETP.GE.AND P1, PT, R4, R5, PT ;\n"
    "        /*00f0*/              @!P1 BRA `(.L_x_0) ;\n"
    "        /*0100*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*0110*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

/* A tree reduction's halving loop, read as halvings (log2 of the start):
 *   for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) y[s] = 0; */
static const char sass_halving[] =
    "//--------------------- .text._Z4treePf --------------------------\n"
    ".text._Z4treePf:\n"
    "        /*0000*/                   ULDC UR4, c[0x0][0x0] ;\n"
    "        /*0010*/                   USHF.R.U32.HI UR4, URZ, 0x1, UR4 ;\n"
    "        /*0020*/                   ISETP.NE.AND P0, PT, RZ, UR4, PT ;\n"
    "        /*0030*/              @!P0 EXIT ;\n"
    "        /*0040*/                   IMAD.U32 R2, RZ, RZ, UR4 ;\n"
    "        /*0050*/                   LDC.64 R4, c[0x0][0x218] ;\n"
    "        /*0060*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    ".L_x_0:\n"
    "        /*0070*/                   IMAD.WIDE.U32 R6, R2, 0x4, R4 ;\n"
    "        /*0080*/                   STG.E desc[UR10][R6.64], RZ ;\n"
    "        /*0090*/                   SHF.R.U32.HI R2, RZ, 0x1, R2 ;\n"
    "        /*00a0*/                   ISETP.NE.AND P0, PT, R2, RZ, PT ;\n"
    "        /*00b0*/               @P0 BRA `(.L_x_0) ;\n"
    "        /*00c0*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*00d0*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

static void test_sass_halving(void)
{
    static const struct maya_kparam one[] = { { 8, 8, MAYA_KP_PTR, { 0 } } };
    /* 256 threads: s = 128, 64, ..., 1: 8 stores of 4 bytes each */
    NEAR(sass_loop_stores(sass_halving, sizeof sass_halving - 1, "_Z4treePf", one, 1, 256, NULL, 0), 4.0 * 256 * 8,
         0.001);
    NEAR(sass_loop_stores(sass_halving, sizeof sass_halving - 1, "_Z4treePf", one, 1, 96, NULL, 0), 4.0 * 96 * 6,
         0.001); /* 48, 24, 12, 6, 3, 1 */
}

/* A warp shuffle in a loop as nvcc lays it out: BRA.DIV leaves for a copy
 * of the shuffle for a diverged warp, placed after the kernel's EXIT, that
 * jumps back into the loop. The warps are taken as converged: that copy is
 * not reached, and its jump back closes no loop (before, it overlapped the
 * real loop, which was then counted once).
 *   for (int i = 0; i < 16; i++) y[i] = __shfl_down_sync(~0u, threadIdx.x, 1); */
static const char sass_div_copy[] =
    "//--------------------- .text._Z5shuflPf --------------------------\n"
    ".text._Z5shuflPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   LDC.64 R4, c[0x0][0x218] ;\n"
    "        /*0020*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    "        /*0030*/                   IMAD.MOV.U32 R2, RZ, RZ, RZ ;\n"
    ".L_x_0:\n"
    "        /*0040*/                   BRA.DIV UR4, `(.L_x_2) ;\n"
    "        /*0050*/                   SHFL.DOWN PT, R3, R0, 0x1, 0x1f ;\n"
    ".L_x_1:\n"
    "        /*0060*/                   IMAD.WIDE R6, R2, 0x4, R4 ;\n"
    "        /*0070*/                   STG.E desc[UR10][R6.64], R3 ;\n"
    "        /*0080*/                   IADD3 R2, R2, 0x1, RZ ;\n"
    "        /*0090*/                   ISETP.GE.AND P0, PT, R2, 0x10, PT ;\n"
    "        /*00a0*/              @!P0 BRA `(.L_x_0) ;\n"
    "        /*00b0*/                   EXIT ;\n"
    ".L_x_2:\n"
    "        /*00c0*/                   WARPSYNC 0xffffffff ;\n"
    "        /*00d0*/                   SHFL.DOWN PT, R3, R0, 0x1, 0x1f ;\n"
    "        /*00e0*/                   BRA `(.L_x_1) ;\n"
    ".L_x_3:\n"
    "        /*00f0*/                   BRA `(.L_x_3);\n"
    ".L_x_4:\n";

static void test_sass_div_copy(void)
{
    static const struct maya_kparam one[] = { { 8, 8, MAYA_KP_PTR, { 0 } } };
    NEAR(sass_loop_stores(sass_div_copy, sizeof sass_div_copy - 1, "_Z5shuflPf", one, 1, 256, NULL, 0),
         4.0 * 256 * 16, 0.001);
}

static void test_sass_joint_trip(void)
{
    static const struct maya_kparam one[] = { { 8, 8, MAYA_KP_PTR, { 0 } } };
    NEAR(sass_loop_stores(sass_window, sizeof sass_window - 1, "_Z3winPf", one, 1, 256, NULL, 0), 4.0 * 256 * 2,
         0.001);
    void *rk;
    static const struct maya_kparam three[] = { { 0, 4, MAYA_KP_I32, { 0 } }, { 8, 8, MAYA_KP_PTR, { 0 } },
                                                { 16, 8, MAYA_KP_PTR, { 0 } } };
    const struct maya_kwork *w = analyse_sass(sass_unknown_trip, sizeof sass_unknown_trip - 1, "_Z4someiPiPf", 0x18,
                                              three, 3, &rk);
    EXPECT(w != NULL);
    if (w) {
        struct launch b;
        launch(&b, 1, 1, 256, 1);
        int n = 100;
        set(&b, 0, &n, 4);
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0); /* lens null: n each */
        NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 4.0 * 32 * n, 0.01);
        EXPECT(kw.unresolved == 0);
        uint64_t lens = 0x7f0000001000ull;
        set(&b, 8, &lens, 8);
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0); /* lens set: once each */
        EXPECT(kw.unresolved > 0);
        NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 4.0 * 32, 0.01);
    }
    free(rk);
}

/* The same division on the uniform datapath, as nvcc writes it where the
 * operands are uniform (the memory-efficient attention's backward): the
 * reciprocal moved to a uniform register (R2UR), the high multiplies as the
 * high halves of 64-bit products (UIMAD.WIDE.U32 UR12, ...: the result in
 * UR13). */
static const char sass_udiv_uniform[] =
    "//--------------------- .text._Z4udivjPf --------------------------\n"
    ".text._Z4udivjPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   ULDC UR26, c[0x0][0x210] ;\n"
    "        /*0020*/                   ULDC UR7, c[0x0][0x0] ;\n"
    "        /*0030*/                   USHF.L.U32 UR14, UR7, 0x2, URZ ;\n"
    "        /*0040*/                   I2F.U32.RP R8, UR14 ;\n"
    "        /*0050*/                   UIADD3 UR4, URZ, -UR14, URZ ;\n"
    "        /*0060*/                   UMOV UR12, URZ ;\n"
    "        /*0070*/                   MUFU.RCP R8, R8 ;\n"
    "        /*0080*/                   IADD3 R12, R8, 0xffffffe, RZ ;\n"
    "        /*0090*/                   F2I.FTZ.U32.TRUNC.NTZ R13, R12 ;\n"
    "        /*00a0*/                   R2UR UR13, R13 ;\n"
    "        /*00b0*/                   UIMAD UR4, UR4, UR13, URZ ;\n"
    "        /*00c0*/                   UIMAD.WIDE.U32 UR12, UR13, UR4, UR12 ;\n"
    "        /*00d0*/                   UIMAD.WIDE.U32 UR12, UR13, UR26, URZ ;\n"
    "        /*00e0*/                   ISETP.GE.U32.AND P0, PT, R0, UR13, PT ;\n"
    "        /*00f0*/               @P0 EXIT ;\n"
    "        /*0100*/                   LDC.64 R2, c[0x0][0x218] ;\n"
    "        /*0110*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    ".L_x_0:\n"
    "        /*0120*/                   IMAD.WIDE.U32 R4, R0, 0x4, R2 ;\n"
    "        /*0130*/                   STG.E desc[UR10][R4.64], RZ ;\n"
    "        /*0140*/                   IADD3 R0, R0, UR7, RZ ;\n"
    "        /*0150*/                   ISETP.GE.U32.AND P0, PT, R0, UR13, PT ;\n"
    "        /*0160*/              @!P0 BRA `(.L_x_0) ;\n"
    "        /*0170*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*0180*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

static void udiv_stores(const char *text, size_t n_text)
{
    static const struct maya_kparam two[] = { { 0, 4, MAYA_KP_U32, { 0 } }, { 8, 8, MAYA_KP_PTR, { 0 } } };
    unsigned n = 1u << 20;
    NEAR(sass_loop_stores(text, n_text, "_Z4udivjPf", two, 2, 256, &n, 4), 4.0 * (n / (4 * 256)), 0.02); /* q elements, each once */
}

static void test_sass_udiv(void)
{
    udiv_stores(sass_udiv, sizeof sass_udiv - 1);
    udiv_stores(sass_udiv_uniform, sizeof sass_udiv_uniform - 1);
    /* newer nvcc adds the reciprocal's bias with VIADD */
    char viadd[sizeof sass_udiv];
    const char *from = "IADD3 R12, R8, 0xffffffe, RZ ;", *to = "VIADD R12, R8, 0xffffffe ;    ";
    const char *at = strstr(sass_udiv, from);
    EXPECT(at != NULL && strlen(from) == strlen(to));
    if (at) {
        memcpy(viadd, sass_udiv, sizeof sass_udiv);
        memcpy(viadd + (at - sass_udiv), to, strlen(to));
        udiv_stores(viadd, sizeof viadd - 1);
    }
    void *rk;
    static const struct maya_kparam two[] = { { 0, 4, MAYA_KP_U32, { 0 } }, { 8, 8, MAYA_KP_PTR, { 0 } } };
    const struct maya_kwork *w = analyse_sass(sass_div3, sizeof sass_div3 - 1, "_Z4div3jPf", 0x10, two, 2, &rk);
    EXPECT(w && !(w->flags & MAYA_KW_F_LOOP_UNRESOLVED));
    if (w) {
        struct launch b;
        launch(&b, 1, 1, 256, 1);
        unsigned n = 300000;
        set(&b, 0, &n, 4);
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
        NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 4.0 * (n / 3), 0.02);
    }
    free(rk);
}

/* A count computed as flash attention's kernels compute theirs: n / 64
 * rounded up with a signed division's bias (SHF.R.S32.HI, LEA.HI), then
 * shifted with LEA.HI.SX32, less a parameter added negated
 * (-c[0x0][0x214]); the loop counts it down:
 *   for (b = (n + 63) / 64 - 1 - m; b > 0; b--) y[0] = 0; */
static const char sass_blocks[] =
    "//--------------------- .text._Z6blocksiiPf --------------------------\n"
    ".text._Z6blocksiiPf:\n"
    "        /*0000*/                   LDC R2, c[0x0][0x210] ;\n"
    "        /*0010*/                   ULDC.64 UR4, c[0x0][0x208] ;\n"
    "        /*0020*/                   LDC.64 R6, c[0x0][0x218] ;\n"
    "        /*0030*/                   IADD3 R2, R2, 0x3f, RZ ;\n"
    "        /*0040*/                   SHF.R.S32.HI R3, RZ, 0x1f, R2 ;\n"
    "        /*0050*/                   LEA.HI R2, R3, R2, RZ, 0x6 ;\n"
    "        /*0060*/                   LEA.HI.SX32 R4, R2, 0xffffffff, 0x1a ;\n"
    "        /*0070*/                   IADD3 R4, R4, -c[0x0][0x214], RZ ;\n"
    ".L_x_0:\n"
    "        /*0080*/                   STG.E desc[UR4][R6.64], RZ ;\n"
    "        /*0090*/                   IADD3 R4, R4, -0x1, RZ ;\n"
    "        /*00a0*/                   ISETP.GT.AND P0, PT, R4, RZ, PT ;\n"
    "        /*00b0*/               @P0 BRA `(.L_x_0) ;\n"
    "        /*00c0*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*00d0*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

static void test_sass_signed_blocks(void)
{
    static const struct maya_kparam three[] = { { 0, 4, MAYA_KP_I32, { 0 } }, { 4, 4, MAYA_KP_I32, { 0 } },
                                                { 8, 8, MAYA_KP_PTR, { 0 } } };
    int nm[2] = { 4000, 3 };
    NEAR(sass_loop_stores(sass_blocks, sizeof sass_blocks - 1, "_Z6blocksiiPf", three, 3, 32, nm, sizeof nm),
         4.0 * 32 * ((4000 + 63) / 64 - 1 - 3), 0.001); /* 59 stores a thread */
}

/* A count nvcc keeps as a 16-bit value: a byte parameter moved into the
 * low half of a register whose high half is not known (PRMT 0x7610),
 * sign-extended from it (PRMT 0x9910), then min(k + 5, 9) (VIADDMNMX):
 *   for (b = min(k + 5, 9); b > 0; b--) y[0] = 0; */
static const char sass_prmt[] =
    "//--------------------- .text._Z4prmthPf --------------------------\n"
    ".text._Z4prmthPf:\n"
    "        /*0000*/                   LDC.U8 R0, c[0x0][0x210] ;\n"
    "        /*0010*/                   ULDC.64 UR4, c[0x0][0x208] ;\n"
    "        /*0020*/                   LDC.64 R2, c[0x0][0x218] ;\n"
    "        /*0030*/                   PRMT R6, R0, 0x7610, R6 ;\n"
    "        /*0040*/                   PRMT R4, R6, 0x9910, RZ ;\n"
    "        /*0050*/                   VIADDMNMX R4, R4, 0x5, 0x9, PT ;\n"
    ".L_x_0:\n"
    "        /*0060*/                   STG.E desc[UR4][R2.64], RZ ;\n"
    "        /*0070*/                   VIADD R4, R4, 0xffffffff ;\n"
    "        /*0080*/                   ISETP.GT.AND P0, PT, R4, RZ, PT ;\n"
    "        /*0090*/               @P0 BRA `(.L_x_0) ;\n"
    "        /*00a0*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*00b0*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

static void test_sass_prmt(void)
{
    static const struct maya_kparam two[] = { { 0, 1, MAYA_KP_U8, { 0 } }, { 8, 8, MAYA_KP_PTR, { 0 } } };
    for (unsigned char k = 2; k <= 7; k += 5)
        NEAR(sass_loop_stores(sass_prmt, sizeof sass_prmt - 1, "_Z4prmthPf", two, 2, 32, &k, 1),
             4.0 * 32 * (k + 5 < 9 ? k + 5 : 9), 0.001);
}

/* A table read at an index loaded from memory (an embedding's rows, FSDP2's
 * chunk_cat metadata): the table's bytes are the table parameter's, bounded
 * by its allocation, though the offset is not known:
 *   y[tid] = table[idx[tid]]; */
static const char sass_gather[] =
    "//--------------------- .text._Z6gatherPKiPKfPf --------------------------\n"
    ".text._Z6gatherPKiPKfPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   LDC.64 R2, c[0x0][0x210] ;\n"
    "        /*0020*/                   LDC.64 R4, c[0x0][0x218] ;\n"
    "        /*0030*/                   LDC.64 R6, c[0x0][0x220] ;\n"
    "        /*0040*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    "        /*0050*/                   IMAD.WIDE R2, R0, 0x4, R2 ;\n"
    "        /*0060*/                   LDG.E R8, desc[UR10][R2.64] ;\n"
    "        /*0070*/                   IMAD.WIDE R4, R8, 0x4, R4 ;\n"
    "        /*0080*/                   LDG.E R9, desc[UR10][R4.64] ;\n"
    "        /*0090*/                   IMAD.WIDE R6, R0, 0x4, R6 ;\n"
    "        /*00a0*/                   STG.E desc[UR10][R6.64], R9 ;\n"
    "        /*00b0*/                   EXIT ;\n"
    ".L_x_0:\n"
    "        /*00c0*/                   BRA `(.L_x_0);\n"
    ".L_x_1:\n";

static void test_sass_gather(void)
{
    void *rk;
    static const struct maya_kparam three[] = { { 0, 8, MAYA_KP_PTR, { 0 } }, { 8, 8, MAYA_KP_PTR, { 0 } },
                                                { 16, 8, MAYA_KP_PTR, { 0 } } };
    const struct maya_kwork *w = analyse_sass(sass_gather, sizeof sass_gather - 1, "_Z6gatherPKiPKfPf", 0x18, three, 3, &rk);
    EXPECT(w != NULL);
    if (w) {
        struct launch b;
        launch(&b, 1, 1, 1024, 1);
        /* a table of 100 rows of 4 bytes, read by 1,024 threads */
        struct maya_kextent ext[3] = { { .param = 0, .bytes = 4096 }, { .param = 8, .bytes = 400 },
                                       { .param = 16, .bytes = 4096 } };
        struct est_kwork_ctx ctx = { ext, 3 };
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, &ctx, &kw) == 0);
        NEAR(kw.amount[MAYA_KW_LD_GLOBAL], 8.0 * 1024, 0.001); /* every load, through L2 */
        NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 4.0 * 1024, 0.001);
        NEAR(kw.dram_bytes, 8.0 * 1024 + 400, 0.001);          /* the table once from DRAM */
    }
    free(rk);
}

/* PyTorch's multi-tensor kernels: each block reads its tensor and chunk
 * from arrays in the parameters (an indexed constant-bank read), then that
 * tensor's size and address, and takes the vectorised loop when both are
 * aligned (LOP3 with a predicate out, three inputs). Here 2 tensors of
 * 2,048 floats in chunks of 1,024: parameters addr[2] @0, size[2] @16,
 * block_to_tensor u8[4] @32, block_to_chunk i32[4] @36, scale @52. */
static const char sass_tensor_list[] =
    "//--------------------- .text._Z4mtal --------------------------\n"
    ".text._Z4mtal:\n"
    "        /*0000*/                   S2R R10, SR_CTAID.X ;\n"
    "        /*0010*/                   ULDC.64 UR4, c[0x0][0x208] ;\n"
    "        /*0020*/                   LDC.U8 R8, c[0x0][R10+0x230] ;\n"
    "        /*0030*/                   IMAD.SHL.U32 R12, R10, 0x4, RZ ;\n"
    "        /*0040*/                   LDC R11, c[0x0][R12+0x234] ;\n"
    "        /*0050*/                   IMAD.SHL.U32 R9, R8, 0x8, RZ ;\n"
    "        /*0060*/                   LDC.64 R6, c[0x0][R9+0x220] ;\n"
    "        /*0070*/                   IMAD.WIDE R4, R11, 0x400, RZ ;\n"
    "        /*0080*/                   LDC.64 R2, c[0x0][R9+0x210] ;\n"
    "        /*0090*/                   IADD3 R0, P1, -R4, R6, RZ ;\n"
    "        /*00a0*/                   IMAD.WIDE R2, R11, 0x1000, R2 ;\n"
    "        /*00b0*/                   LOP3.LUT R11, R0, 0x3, RZ, 0xc0, !PT ;\n"
    "        /*00c0*/                   LOP3.LUT P0, RZ, R11, 0xf, R2, 0xf8, !PT ;\n"
    "        /*00d0*/               @P0 EXIT ;\n"
    "        /*00e0*/                   S2R R13, SR_TID.X ;\n"
    "        /*00f0*/                   ULDC UR6, c[0x0][0x0] ;\n"
    "        /*0100*/                   ULDC UR7, c[0x0][0x244] ;\n"
    ".L_x_0:\n"
    "        /*0110*/                   LEA R6, P0, R13, R2, 0x4 ;\n"
    "        /*0120*/                   LEA.HI.X R7, R13, R3, RZ, 0x4, P0 ;\n"
    "        /*0130*/                   LDG.E.128 R16, desc[UR4][R6.64] ;\n"
    "        /*0140*/                   IADD3 R13, R13, UR6, RZ ;\n"
    "        /*0150*/                   ISETP.LT.U32.AND P1, PT, R13, 0x100, PT ;\n"
    "        /*0160*/                   IMAD.SHL.U32 R5, R13, 0x4, RZ ;\n"
    "        /*0170*/                   ISETP.GE.U32.AND P0, PT, R5, R0, PT ;\n"
    "        /*0180*/                   FMUL R16, R16, UR7 ;\n"
    "        /*0190*/                   STG.E.128 desc[UR4][R6.64], R16 ;\n"
    "        /*01a0*/              @!P0 BRA P1, `(.L_x_0) ;\n"
    "        /*01b0*/                   EXIT ;\n"
    ".L_x_1:\n"
    "        /*01c0*/                   BRA `(.L_x_1);\n"
    ".L_x_2:\n";

/* Global bytes loaded by a launch of 4 blocks of 64 threads over two
 * tensors: their second's address and both sizes, and each block's tensor
 * and chunk. */
static double tensor_list_loads(const struct maya_kwork *w, uint64_t addr1, const int64_t sizes[2],
                                const unsigned char b2t[4], const int32_t b2c[4])
{
    struct launch b;
    launch(&b, 4, 1, 64, 1);
    uint64_t addr[2] = { 0x7f0000000000ull, addr1 };
    float scale = 0.5f;
    set(&b, 0, addr, sizeof addr);
    set(&b, 16, sizes, 2 * sizeof *sizes);
    set(&b, 32, b2t, 4);
    set(&b, 36, b2c, 4 * sizeof *b2c);
    set(&b, 52, &scale, sizeof scale);
    b.l.param_bytes = 56;
    struct est_kwork kw;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
    return kw.amount[MAYA_KW_LD_GLOBAL];
}

static void test_sass_tensor_list(void)
{
    void *rk;
    static const struct maya_kparam layout[] = { { 0, 56, MAYA_KP_BYTES, { 0 } } };
    const struct maya_kwork *w = analyse_sass(sass_tensor_list, sizeof sass_tensor_list - 1, "_Z4mtal", 56, layout, 1, &rk);
    EXPECT(w != NULL);
    if (w) {
        /* two tensors of 2,048 floats, two chunks each */
        static const int64_t even[2] = { 2048, 2048 };
        static const unsigned char b2t[4] = { 0, 0, 1, 1 };
        static const int32_t b2c[4] = { 0, 1, 0, 1 };
        /* aligned: every block runs its chunk, 4 iterations of 16 bytes a
         * thread; the two tensors' 16 KiB */
        NEAR(tensor_list_loads(w, 0x7f0000002000ull, even, b2t, b2c), 16384, 0.001);
        /* the second tensor 4 bytes off: its blocks leave by the exit */
        EXPECT(tensor_list_loads(w, 0x7f0000002004ull, even, b2t, b2c) < 0.75 * 16384);
        /* Tensors of different sizes: tensor 0 of 3,072 floats (blocks
         * 0-2, a chunk each) and tensor 1 (block 3). A block's elements
         * left, its tensor's size less its chunk's start, come from two
         * arrays at the block's index: taken apart, a chunk of tensor 0
         * would meet the size of tensor 1 (1,024 - 2 x 1,024 < 0); the
         * blocks are sampled. Four whole chunks: 4 iterations of 16 bytes
         * for each of 256 threads; tensor 1 of 512 floats: its block's
         * threads run 2 iterations. */
        static const unsigned char b2t_mixed[4] = { 0, 0, 0, 1 };
        static const int32_t b2c_mixed[4] = { 0, 1, 2, 0 };
        static const int64_t whole[2] = { 3072, 1024 }, part[2] = { 3072, 512 };
        NEAR(tensor_list_loads(w, 0x7f0000100000ull, whole, b2t_mixed, b2c_mixed), 16384, 0.001);
        NEAR(tensor_list_loads(w, 0x7f0000100000ull, part, b2t_mixed, b2c_mixed), 3 * 4096 + 2048, 0.001);
    }
    free(rk);
}

/* A branch on a float parameter against a literal (PyTorch's multi-tensor
 * kernels test their scalar against 1; FSETP.NEU: not equal): the launch
 * decides it, where a float computed on the device is data (half). */
static const char sass_fsetp[] =
    "//--------------------- .text._Z5fsetpPff --------------------------\n"
    ".text._Z5fsetpPff:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   LDC R4, c[0x0][0x218] ;\n"
    "        /*0020*/                   ULDC.64 UR4, c[0x0][0x208] ;\n"
    "        /*0030*/                   FSETP.NEU.AND P0, PT, R4, 1, PT ;\n"
    "        /*0040*/              @!P0 EXIT ;\n"
    "        /*0050*/                   LDC.64 R2, c[0x0][0x210] ;\n"
    "        /*0060*/                   IMAD.WIDE R2, R0, 0x4, R2 ;\n"
    "        /*0070*/                   STG.E desc[UR4][R2.64], R4 ;\n"
    "        /*0080*/                   FADD R5, R4, R4 ;\n"
    "        /*0090*/                   FSETP.GT.AND P1, PT, R5, -0.5, PT ;\n"
    "        /*00a0*/              @!P1 EXIT ;\n"
    "        /*00b0*/                   STG.E desc[UR4][R2.64], R5 ;\n"
    "        /*00c0*/                   EXIT ;\n"
    ".L_x_0:\n";

static double fsetp_stores(const struct maya_kwork *w, float scale)
{
    struct launch b;
    launch(&b, 1, 1, 256, 1);
    uint64_t out = 0x7f0000000000ull;
    set(&b, 0, &out, sizeof out);
    set(&b, 8, &scale, sizeof scale);
    b.l.param_bytes = 12;
    struct est_kwork kw;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
    return kw.amount[MAYA_KW_ST_GLOBAL];
}

static void test_sass_fsetp(void)
{
    void *rk;
    static const struct maya_kparam two[] = { { 0, 8, MAYA_KP_PTR, { 0 } }, { 8, 4, MAYA_KP_F32, { 0 } } };
    const struct maya_kwork *w = analyse_sass(sass_fsetp, sizeof sass_fsetp - 1, "_Z5fsetpPff", 12, two, 2, &rk);
    EXPECT(w != NULL);
    if (w) {
        /* 0.5: every thread stores once, then half of them (on data) again */
        NEAR(fsetp_stores(w, 0.5f), 1.5 * 4 * 256, 0.001);
        /* 1: no thread goes past the test */
        NEAR(fsetp_stores(w, 1.0f), 0, 0.001);
    }
    free(rk);
}

/* A branch on a float's bits (a reciprocal's range check: FADD, then
 * integer tests of its exponent) is on data: half the threads take it,
 * whatever the float's value; the float is not read as an integer. */
static const char sass_fbits[] =
    "//--------------------- .text._Z3fbiPf --------------------------\n"
    ".text._Z3fbiPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   LDC.64 R2, c[0x0][0x210] ;\n"
    "        /*0020*/                   ULDC.64 UR4, c[0x0][0x208] ;\n"
    "        /*0030*/                   FADD R5, RZ, 1 ;\n"
    "        /*0040*/                   IADD3 R6, R5, 0x1800000, RZ ;\n"
    "        /*0050*/                   LOP3.LUT R6, R6, 0x7f800000, RZ, 0xc0, !PT ;\n"
    "        /*0060*/                   ISETP.GT.U32.AND P0, PT, R6, 0x1ffffff, PT ;\n"
    "        /*0070*/               @P0 EXIT ;\n"
    "        /*0080*/                   IMAD.WIDE R2, R0, 0x4, R2 ;\n"
    "        /*0090*/                   STG.E desc[UR4][R2.64], R5 ;\n"
    "        /*00a0*/                   EXIT ;\n"
    ".L_x_0:\n";

static void test_sass_float_bits(void)
{
    void *rk;
    const struct maya_kwork *w = analyse_sass(sass_fbits, sizeof sass_fbits - 1, "_Z3fbiPf", 0x8, NULL, 0, &rk);
    EXPECT(w != NULL);
    if (w) {
        struct launch b;
        launch(&b, 1, 1, 256, 1);
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
        NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 0.5 * 4 * 256, 0.001);
    }
    free(rk);
}

/* PyTorch's warp softmax: each thread loads elements tid + 32 k of its row
 * while below a limit chosen per row, the row length for rows in range,
 * else 0: the choice holds for every row, so every load counts. */
static const char sel_limit[] =
    ".visible .entry rowsel(\n\t.param .u64 .ptr .global .align 1 rowsel_param_0,\n"
    "\t.param .u32 rowsel_param_1,\n\t.param .u32 rowsel_param_2\n)\n{\n"
    "\tld.param.u64 %rd1, [rowsel_param_0];\n\tld.param.u32 %r1, [rowsel_param_1];\n"
    "\tld.param.u32 %r2, [rowsel_param_2];\n"
    "\tmov.u32 %r3, %ctaid.x;\n\tmov.u32 %r4, %tid.x;\n"
    "\tsub.s32 %r5, %r2, %r3;\n\tsetp.gt.s32 %p1, %r5, 0;\n\tselp.b32 %r6, %r1, 0, %p1;\n"
    "\tadd.s32 %r7, %r4, 1024;\n\tsetp.ge.s32 %p2, %r7, %r6;\n"
    "\tmul.wide.s32 %rd2, %r7, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
    "\t@!%p2 ld.global.f32 %f1, [%rd3];\n"
    "\tret;\n}\n";

static void test_sel_limit(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(sel_limit, sizeof sel_limit - 1, "rowsel", &keep);
    if (!w)
        return;
    unsigned cols = 2048, rows = 4096;
    struct launch b;
    launch(&b, rows, 1, 32, 1);
    set(&b, 8, &cols, 4);
    set(&b, 12, &rows, 4);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 4.0 * 32 * rows, 0.001);
    free(keep);
}

/* Two int parameters loaded at once (ULDC.64 UR4, c[0x0][0x210]: n in UR4,
 * m in UR5): with the parameters' layout, each register holds its own. */
static const char sass_pair[] =
    "//--------------------- .text._Z4pairiiPf --------------------------\n"
    ".text._Z4pairiiPf:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   ULDC.64 UR4, c[0x0][0x210] ;\n"
    "        /*0020*/                   ISETP.GE.AND P0, PT, R0, UR5, PT ;\n"
    "        /*0030*/               @P0 EXIT ;\n"
    "        /*0040*/                   LDC.64 R2, c[0x0][0x218] ;\n"
    "        /*0050*/                   ULDC.64 UR6, c[0x0][0x208] ;\n"
    "        /*0060*/                   IMAD.WIDE R2, R0, 0x4, R2 ;\n"
    "        /*0070*/                   STG.E desc[UR6][R2.64], RZ ;\n"
    "        /*0080*/                   EXIT ;\n"
    ".L_x_0:\n";

static void sass_pair_with(const struct maya_kparam *layout, unsigned n_layout)
{
    void *rk;
    const struct maya_kwork *w = analyse_sass(sass_pair, sizeof sass_pair - 1, "_Z4pairiiPf", 0x10, layout, n_layout, &rk);
    EXPECT(w != NULL);
    if (w) {
        int n = 1 << 20, m = 64;
        struct launch b;
        launch(&b, 1, 1, 256, 1);
        set(&b, 0, &n, 4);
        set(&b, 4, &m, 4);
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
        NEAR(kw.amount[MAYA_KW_ST_GLOBAL], 4.0 * m, 0.001); /* threads below m */
    }
    free(rk);
}

/* The same with n, m and y as three parameters, and as the fields of one
 * struct parameter (PyTorch's configurations). */
static void test_sass_pair(void)
{
    static const struct maya_kparam three[] = { { 0, 4, 0, { 0 } }, { 4, 4, 0, { 0 } }, { 8, 8, 0, { 0 } } };
    static const struct maya_kparam one[] = { { 0, 16, 0, { 0 } } };
    sass_pair_with(three, 3);
    sass_pair_with(one, 1);
}

/* A bool field of a struct parameter read with ULDC.U8 (PyTorch's
 * ReduceConfig): the three bytes after it are padding the host never set,
 * so only the byte itself may count. The same kernel with .S8 and a sign
 * test reads the byte sign-extended. */
static const char sass_flag_u8[] =
    "//--------------------- .text._Z4flag3Cfg --------------------------\n"
    ".text._Z4flag3Cfg:\n"
    "        /*0000*/                   S2R R0, SR_TID.X ;\n"
    "        /*0010*/                   ULDC.U8 UR4, c[0x0][0x214] ;\n"
    "        /*0020*/                   ISETP.NE.AND P0, PT, RZ, UR4, PT ;\n"
    "        /*0030*/               @P0 EXIT ;\n"
    "        /*0040*/                   ULDC UR5, c[0x0][0x210] ;\n"
    "        /*0050*/                   ISETP.GE.AND P1, PT, R0, UR5, PT ;\n"
    "        /*0060*/               @P1 EXIT ;\n"
    "        /*0070*/                   LDC.64 R2, c[0x0][0x218] ;\n"
    "        /*0080*/                   ULDC.64 UR6, c[0x0][0x208] ;\n"
    "        /*0090*/                   IMAD.WIDE R2, R0, 0x4, R2 ;\n"
    "        /*00a0*/                   STG.E desc[UR6][R2.64], RZ ;\n"
    "        /*00b0*/                   EXIT ;\n"
    ".L_x_0:\n";

static double flag_stores(const char *text, size_t n, unsigned char flag)
{
    static const struct maya_kparam one[] = { { 0, 16, 0, { 0 } } };
    void *rk;
    double st = -1;
    const struct maya_kwork *w = analyse_sass(text, n, "_Z4flag3Cfg", 0x10, one, 1, &rk);
    EXPECT(w != NULL);
    if (w) {
        int m = 64;
        unsigned char field[4] = { flag, 0xad, 0x40, 0xa5 }; /* the flag, then garbage */
        struct launch b;
        launch(&b, 1, 1, 256, 1);
        set(&b, 0, &m, 4);
        set(&b, 4, field, 4);
        struct est_kwork kw;
        EXPECT(est_kwork_eval(w, &b.l, NULL, &kw) == 0);
        st = kw.amount[MAYA_KW_ST_GLOBAL];
    }
    free(rk);
    return st;
}

static void test_sass_narrow_constant(void)
{
    NEAR(flag_stores(sass_flag_u8, sizeof sass_flag_u8 - 1, 0), 4.0 * 64, 0.001); /* false: every thread below m stores */
    EXPECT(flag_stores(sass_flag_u8, sizeof sass_flag_u8 - 1, 1) == 0);        /* true: all exit */
    char s8[sizeof sass_flag_u8];
    memcpy(s8, sass_flag_u8, sizeof s8);
    char *u = strstr(s8, "ULDC.U8"), *ne = strstr(s8, "ISETP.NE.AND P0, PT, RZ");
    memcpy(u, "ULDC.S8", 7);
    memcpy(ne, "ISETP.GT.AND P0, PT, RZ", 23); /* exit where 0 > flag */
    EXPECT(flag_stores(s8, sizeof s8 - 1, 0xff) == 0);              /* -1: all exit */
    NEAR(flag_stores(s8, sizeof s8 - 1, 0x7f), 4.0 * 64, 0.001);    /* 127: all below m store */
}

/* An unrolled strided loop whose test looks ahead of its step (PyTorch's
 * reductions): four loads at i, i + s, i + 2 s, i + 3 s, then i += 4 s,
 * continued while i + 3 s < n. */
static const char lookahead[] =
    ".visible .entry ahead(\n\t.param .u64 .ptr .global .align 1 ahead_param_0,\n"
    "\t.param .u32 ahead_param_1\n)\n{\n"
    "\tld.param.u64 %rd1, [ahead_param_0];\n\tld.param.u32 %r2, [ahead_param_1];\n"
    "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r3, %ntid.x;\n\tshl.b32 %r4, %r3, 2;\n\tmul.lo.s32 %r5, %r3, 3;\n"
    "$L__BB9_1:\n"
    "\tmul.wide.s32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tld.global.f32 %f1, [%rd3];\n"
    "\tadd.s32 %r6, %r1, %r3;\n\tmul.wide.s32 %rd4, %r6, 4;\n\tadd.s64 %rd5, %rd1, %rd4;\n\tld.global.f32 %f2, [%rd5];\n"
    "\tadd.s32 %r7, %r6, %r3;\n\tmul.wide.s32 %rd6, %r7, 4;\n\tadd.s64 %rd7, %rd1, %rd6;\n\tld.global.f32 %f3, [%rd7];\n"
    "\tadd.s32 %r8, %r7, %r3;\n\tmul.wide.s32 %rd8, %r8, 4;\n\tadd.s64 %rd9, %rd1, %rd8;\n\tld.global.f32 %f4, [%rd9];\n"
    "\tadd.s32 %r1, %r1, %r4;\n\tadd.s32 %r9, %r1, %r5;\n\tsetp.lt.s32 %p1, %r9, %r2;\n\t@%p1 bra $L__BB9_1;\n"
    "\tret;\n}\n";

static void test_lookahead(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(lookahead, sizeof lookahead - 1, "ahead", &keep);
    if (!w)
        return;
    EXPECT(!(w->flags & MAYA_KW_F_LOOP_UNRESOLVED));
    unsigned n = 1u << 20;
    struct launch b;
    launch(&b, 1, 1, 256, 1);
    set(&b, 8, &n, 4);
    struct est_kwork k;
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 4.0 * n, 0.01); /* every element once */
    free(keep);
}

static void test_parser(void)
{
    struct emu_ptx_kernel k;
    EXPECT(emu_ptx_parse(grid_stride, sizeof grid_stride - 1, "saxpy", &k) == 0);
    EXPECT(k.nparams == 4);
    EXPECT(k.nparams == 4 && k.params[3].offset == 24 && k.params[3].bytes == 4 && k.params[1].is_ptr);
    EXPECT(k.nlabels == 2);
    EXPECT(k.ninsts > 20);
    int found = 0;
    for (uint32_t i = 0; i < k.ninsts; i++)
        if (emu_slice_is(k.insts[i].op, "bra") && k.insts[i].guard.n) {
            found = 1;
            EXPECT(k.insts[i].nops == 1 && emu_slice_is(k.insts[i].ops[0], "$L__BB0_3"));
            EXPECT(emu_slice_is(k.insts[i].guard, "%p1"));
            break;
        }
    EXPECT(found);
    emu_ptx_kernel_free(&k);
    EXPECT(emu_ptx_parse(grid_stride, sizeof grid_stride - 1, "sax", &k) < 0);      /* a prefix is not a name */
    EXPECT(emu_ptx_parse(grid_stride, sizeof grid_stride - 1, "missing", &k) < 0);
    EXPECT(emu_ptx_parse(masked, sizeof masked - 1, "triton_poi", &k) == 0);
    int vec = 0;
    for (uint32_t i = 0; i < k.ninsts; i++)
        if (emu_slice_is(k.insts[i].op, "ld.global.v4.b32"))
            vec = k.insts[i].nops == 2 && k.insts[i].ops[0].p[0] == '{' && emu_slice_is(k.insts[i].guard, "%p1");
    EXPECT(vec);
    emu_ptx_kernel_free(&k);
}

/* Damaged text never crashes: every prefix, and random bytes changed. */
static void test_damage(void)
{
    const struct { const char *text; size_t n; const char *entry; } in[] = {
        { grid_stride, sizeof grid_stride - 1, "saxpy" }, { row_loop, sizeof row_loop - 1, "rows" },
        { mma_loop, sizeof mma_loop - 1, "mmak" }, { masked, sizeof masked - 1, "triton_poi" },
    };
    srand(7);
    for (size_t t = 0; t < sizeof in / sizeof *in; t++) {
        char *copy = malloc(in[t].n);
        if (!copy)
            return;
        for (size_t len = 0; len <= in[t].n; len++) {
            memcpy(copy, in[t].text, len);
            void *w = NULL;
            size_t bytes;
            if (emu_kwork_ptx_text(copy, len, in[t].entry, 90, &w, &bytes) == 0)
                EXPECT(bytes >= sizeof(struct maya_kwork));
            free(w);
        }
        for (int round = 0; round < 2000; round++) {
            memcpy(copy, in[t].text, in[t].n);
            for (int j = 0; j < 1 + rand() % 8; j++)
                copy[rand() % in[t].n] = (char)(rand() % 256);
            void *w = NULL;
            size_t bytes;
            emu_kwork_ptx_text(copy, in[t].n, in[t].entry, 90, &w, &bytes);
            free(w);
        }
        free(copy);
    }
    /* nvdisasm's text cut anywhere, or with bytes changed */
    size_t n = sizeof sass_gs - 1;
    char *copy = malloc(n);
    if (!copy)
        return;
    for (size_t len = 0; len <= n; len++) {
        struct emu_ptx_kernel k;
        memcpy(copy, sass_gs, len);
        if (emu_sass_parse(copy, len, "_Z4gs32PKfPfi", 0x210, 0x14, NULL, 0, &k) == 0) {
            void *w = NULL;
            size_t bytes;
            emu_kwork_from_ptx(&k, 90, &w, &bytes);
            free(w);
            emu_ptx_kernel_free(&k);
        }
    }
    for (int round = 0; round < 3000; round++) {
        struct emu_ptx_kernel k;
        memcpy(copy, sass_gs, n);
        for (int j = 0; j < 1 + rand() % 8; j++)
            copy[rand() % n] = (char)(rand() % 256);
        if (emu_sass_parse(copy, n, "_Z4gs32PKfPfi", 0x210, 0x14, NULL, 0, &k) == 0) {
            void *w = NULL;
            size_t bytes;
            emu_kwork_from_ptx(&k, 90, &w, &bytes);
            free(w);
            emu_ptx_kernel_free(&k);
        }
    }
    free(copy);
}

/* The reader refuses a summary whose indexes point outside it. */
static void test_bad_summary(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(grid_stride, sizeof grid_stride - 1, "saxpy", &keep);
    if (!w)
        return;
    struct maya_rec_kernel *k = keep;
    struct maya_kexpr *x = (struct maya_kexpr *)maya_kwork_exprs(w);
    struct maya_kterm *t = (struct maya_kterm *)maya_kwork_terms(w);
    uint16_t save = t[0].mult;
    t[0].mult = w->nexprs;
    EXPECT(maya_kernel_work(k, NULL) == NULL);
    t[0].mult = save;
    EXPECT(maya_kernel_work(k, NULL) != NULL);
    for (uint32_t i = 0; i < w->nexprs; i++)
        if (x[i].op == MAYA_KX_ADD) {
            uint16_t a = x[i].a;
            x[i].a = (uint16_t)i; /* an operand must come before */
            EXPECT(maya_kernel_work(k, NULL) == NULL);
            x[i].a = a;
            break;
        }
    k->work_bytes += 8; /* past the record */
    const char *why = NULL;
    EXPECT(maya_kernel_work(k, &why) == NULL && why != NULL);
    free(keep);
}

int main(void)
{
    test_parser();
    test_grid_stride();
    test_row_loop();
    test_block_shared();
    test_mma();
    test_masked();
    test_sel_limit();
    test_lookahead();
    test_unresolved();
    test_uniform_loads();
    test_row_loads();
    test_shared_window();
    test_fragment_conflicts();
    test_uneven_blocks();
    test_block_spread();
    test_sel_step();
    test_sel_pred();
    test_sass_u16_grid();
    test_indirect_store();
    test_sass();
    test_sass_rows();
    test_sass_negative_immediate();
    test_sass_spilled_loop();
    test_sass_launch_decided();
    test_sass_udiv();
    test_sass_sdiv();
    test_sass_joint_trip();
    test_sass_halving();
    test_sass_div_copy();
    test_sass_signed_blocks();
    test_sass_prmt();
    test_sass_gather();
    test_sass_tensor_list();
    test_sass_fsetp();
    test_sass_float_bits();
    test_sass_pair();
    test_sass_narrow_constant();
    test_damage();
    test_bad_summary();
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("kernel work: ok\n");
    return 0;
}

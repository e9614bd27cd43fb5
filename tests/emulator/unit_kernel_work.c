/* Unit test of reading a kernel's work from PTX (emulator/core/ptx_parse.c,
 * kernel_work.c) and of evaluating it for a launch (estimator/
 * kernel_cost.c), on small hand-written kernels whose work is known:
 * a grid-stride loop, a row loop (one block per row), a guarded element
 * per thread, a tensor-core k-loop, Triton-style masked vector loads, a
 * loop whose trip count the code does not show, blocks of uneven work,
 * the bytes a thread keeps in flight, a loop bound that is an address.
 * Then damaged input: every truncation and random byte changes of the
 * texts must parse or fail cleanly, and a damaged summary must be refused
 * by the trace's reader. The same from nvdisasm's SASS:
 * unit_kernel_work_sass.c. */
#include "kwork_fixture.h"

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

/* A row's two passes (a norm's sum, then its scaling), each a loop of one
 * 2-byte load with the same bounds, a block barrier between them: one pass
 * keeps 2 bytes a thread in flight, not the 4 of both passes. */
static const char two_pass[] =
    ".visible .entry twopass(\n\t.param .u64 .ptr .global .align 2 twopass_param_0,\n"
    "\t.param .u32 twopass_param_1\n)\n{\n"
    "\t.shared .align 4 .f32 acc;\n"
    "\tld.param.u64 %rd1, [twopass_param_0];\n\tld.param.u32 %r1, [twopass_param_1];\n"
    "\tmov.u32 %r2, %ctaid.x;\n\tmul.wide.u32 %rd2, %r2, %r1;\n"
    "\tmov.u32 %r4, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\tmov.f32 %f1, 0f00000000;\n"
    "\tsetp.ge.u32 %p1, %r3, %r1;\n\t@%p1 bra $L__BB7_2;\n"
    "$L__BB7_1:\n"
    "\tcvt.u64.u32 %rd3, %r3;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tshl.b64 %rd5, %rd4, 1;\n"
    "\tadd.s64 %rd6, %rd1, %rd5;\n\tld.global.u16 %rs1, [%rd6];\n\tcvt.rn.f32.u16 %f2, %rs1;\n"
    "\tadd.f32 %f1, %f1, %f2;\n"
    "\tadd.s32 %r3, %r3, %r4;\n\tsetp.lt.u32 %p2, %r3, %r1;\n\t@%p2 bra $L__BB7_1;\n"
    "$L__BB7_2:\n"
    "\tst.shared.f32 [acc], %f1;\n\tbar.sync 0;\n\tld.shared.f32 %f3, [acc];\n"
    "\tmov.u32 %r5, %tid.x;\n"
    "\tsetp.ge.u32 %p3, %r5, %r1;\n\t@%p3 bra $L__BB7_4;\n"
    "$L__BB7_3:\n"
    "\tcvt.u64.u32 %rd7, %r5;\n\tadd.s64 %rd8, %rd2, %rd7;\n\tshl.b64 %rd9, %rd8, 1;\n"
    "\tadd.s64 %rd10, %rd1, %rd9;\n\tld.global.u16 %rs2, [%rd10];\n\tcvt.rn.f32.u16 %f4, %rs2;\n"
    "\tmul.f32 %f5, %f4, %f3;\n\tcvt.rn.f16.f32 %rs3, %f5;\n\tst.global.u16 [%rd10], %rs3;\n"
    "\tadd.s32 %r5, %r5, %r4;\n\tsetp.lt.u32 %p4, %r5, %r1;\n\t@%p4 bra $L__BB7_3;\n"
    "$L__BB7_4:\n\tret;\n}\n";

/* One 16-byte load a thread, no loop. */
static const char vec_copy[] =
    ".visible .entry vcopy(\n\t.param .u64 .ptr .global .align 16 vcopy_param_0,\n"
    "\t.param .u64 .ptr .global .align 16 vcopy_param_1\n)\n{\n"
    "\tld.param.u64 %rd1, [vcopy_param_0];\n\tld.param.u64 %rd2, [vcopy_param_1];\n"
    "\tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n"
    "\tmad.lo.s32 %r4, %r1, %r2, %r3;\n\tmul.wide.s32 %rd3, %r4, 16;\n"
    "\tadd.s64 %rd4, %rd1, %rd3;\n\tld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];\n"
    "\tadd.s64 %rd5, %rd2, %rd3;\n\tst.global.v4.f32 [%rd5], {%f1, %f2, %f3, %f4};\n"
    "\tret;\n}\n";

/* Bytes a thread keeps in flight for its DRAM loads are those one pass of
 * its loop body loads (saxpy: x and y, 8; a row's two passes: 2 each; a
 * vector copy: 16), and a GPU whose resident threads keep fewer bytes in
 * flight than its bandwidth times its latency reaches that share of its
 * bandwidth for them: on an A100-like GPU (221,184 threads resident, 1.6
 * TB/s, 700 ns) 2 bytes reach 39.5 %; stores and 16 bytes run at full
 * rate. */
static void test_in_flight(void)
{
    struct launch b;
    struct est_kwork k;
    void *keep;
    const struct maya_kwork *w = analyse(grid_stride, sizeof grid_stride - 1, "saxpy", &keep);
    if (w) {
        int n = 1 << 24;
        launch(&b, 528, 1, 256, 1);
        set(&b, 24, &n, 4);
        EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
        NEAR(k.load_in_flight, 8, 1e-9);
        NEAR(k.dram_load_bytes, 8.0 * n, 0.001);
        free(keep);
    }
    w = analyse(two_pass, sizeof two_pass - 1, "twopass", &keep);
    if (w) {
        unsigned rows = 2048, cols = 4096;
        launch(&b, rows, 1, 256, 1);
        set(&b, 8, &cols, 4);
        EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
        NEAR(k.amount[MAYA_KW_LD_GLOBAL], 4.0 * rows * cols, 0.01);
        NEAR(k.load_in_flight, 2, 1e-9);
        free(keep);
    }
    w = analyse(vec_copy, sizeof vec_copy - 1, "vcopy", &keep);
    if (w) {
        launch(&b, 65536, 1, 256, 1);
        EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
        NEAR(k.load_in_flight, 16, 1e-9);
        free(keep);
    }
    struct maya_gpu_spec g;
    memset(&g, 0, sizeof g);
    g.prop.multiProcessorCount = 108;
    g.prop.maxThreadsPerMultiProcessor = 2048;
    g.prop.maxBlocksPerMultiProcessor = 32;
    g.perf.fp32_tflops = 19.5;
    g.perf.hbm_measured_gbps = 1600;
    g.perf.l2_gbps = 1e6; /* DRAM bounds it */
    g.perf.sm_clock_mhz = 1410;
    g.perf.kernel_floor_ns = 0;
    memset(&k, 0, sizeof k);
    k.threads_per_block = 256;
    k.blocks = 65536;
    k.threads = k.blocks * k.threads_per_block;
    k.dram_bytes = k.dram_load_bytes = 1e9;
    struct est_kwork_times t16, t2, tst;
    k.load_in_flight = 16;
    est_kwork_times(&g, &k, &t16);
    NEAR(t16.dram_ns, 1e9 / 1600e9 * 1e9, 1e-6);
    k.load_in_flight = 2;
    est_kwork_times(&g, &k, &t2);
    NEAR(t2.dram_ns, t16.dram_ns / (108 * 2048 * 2 / (1600e9 * 700e-9)), 1e-6);
    NEAR(t2.mem_fill, 108 * 2048 * 2 / (1600e9 * 700e-9), 1e-6);
    k.dram_load_bytes = 0; /* the same bytes stored */
    est_kwork_times(&g, &k, &tst);
    NEAR(tst.dram_ns, t16.dram_ns, 1e-6);
}

/* A loop bounded by a 64-bit parameter: a count, or an address (what the
 * summary offers for a bound the code loads from memory). More than 2^32
 * iterations a thread is no count: the loop runs once, flagged. */
static const char long_loop[] =
    ".visible .entry longloop(\n\t.param .u64 .ptr .global .align 4 longloop_param_0,\n"
    "\t.param .u64 longloop_param_1\n)\n{\n"
    "\tld.param.u64 %rd1, [longloop_param_0];\n\tld.param.u64 %rd2, [longloop_param_1];\n"
    "\tcvta.to.global.u64 %rd3, %rd1;\n\tmov.u64 %rd4, 0;\n"
    "$L__BB8_1:\n"
    "\tld.global.f32 %f1, [%rd3];\n"
    "\tadd.s64 %rd4, %rd4, 1;\n\tsetp.lt.u64 %p1, %rd4, %rd2;\n\t@%p1 bra $L__BB8_1;\n"
    "\tret;\n}\n";

static void test_trip_limit(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(long_loop, sizeof long_loop - 1, "longloop", &keep);
    if (!w)
        return;
    struct launch b;
    launch(&b, 1, 1, 32, 1);
    struct est_kwork k;
    uint64_t n = 1000;
    set(&b, 8, &n, 8);
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    /* every thread loads the same word: one request for the warp */
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 4.0 * 1000, 0.01);
    EXPECT(k.unresolved == 0);
    n = 0x7f3a12345600ull; /* an address */
    set(&b, 8, &n, 8);
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 4.0, 0.01);
    EXPECT(k.unresolved > 0);
    free(keep);
}

/* Column sums over a slice of rows a block: r0 = ctaid.y * per, r1 =
 * min(rows, r0 + per), for r in [r0, r1) load x[r * 256 + tid] (nvcc's
 * code with the loop kept whole). The test that enters the loop and the
 * loop's bounds all follow ctaid.y: taken apart, [r0 < r1] counted half
 * the blocks (ranges of both, 0 to 3,875 against 125 to 4,000). */
static const char slice_sum[] =
    ".visible .entry slice(\n\t.param .u64 slice_param_0,\n\t.param .u64 slice_param_1,\n"
    "\t.param .u32 slice_param_2,\n\t.param .u32 slice_param_3\n)\n{\n"
    "\tld.param.u64 %rd2, [slice_param_0];\n\tld.param.u64 %rd3, [slice_param_1];\n"
    "\tld.param.u32 %r9, [slice_param_2];\n\tld.param.u32 %r10, [slice_param_3];\n"
    "\tmov.u32 %r1, %ctaid.y;\n\tmul.lo.s32 %r18, %r1, %r10;\n\tadd.s32 %r11, %r18, %r10;\n"
    "\tmin.s32 %r3, %r11, %r9;\n\tsetp.lt.s32 %p1, %r18, %r3;\n\t@%p1 bra $L__BB0_2;\n\tbra.uni $L__BB0_1;\n"
    "$L__BB0_2:\n"
    "\tmov.u32 %r12, %tid.x;\n\tshl.b32 %r13, %r18, 8;\n\tadd.s32 %r17, %r12, %r13;\n"
    "\tcvta.to.global.u64 %rd1, %rd2;\n\tmov.f32 %f8, 0f00000000;\n"
    "$L__BB0_3:\n"
    "\tmul.wide.u32 %rd4, %r17, 4;\n\tadd.s64 %rd5, %rd1, %rd4;\n\tld.global.f32 %f6, [%rd5];\n"
    "\tadd.f32 %f8, %f8, %f6;\n\tadd.s32 %r17, %r17, 256;\n\tadd.s32 %r18, %r18, 1;\n"
    "\tsetp.lt.s32 %p2, %r18, %r3;\n\t@%p2 bra $L__BB0_3;\n\tbra.uni $L__BB0_4;\n"
    "$L__BB0_1:\n\tmov.f32 %f8, 0f00000000;\n"
    "$L__BB0_4:\n"
    "\tshl.b32 %r14, %r1, 8;\n\tmov.u32 %r15, %tid.x;\n\tadd.s32 %r16, %r14, %r15;\n"
    "\tcvta.to.global.u64 %rd6, %rd3;\n\tmul.wide.u32 %rd7, %r16, 4;\n\tadd.s64 %rd8, %rd6, %rd7;\n"
    "\tst.global.f32 [%rd8], %f8;\n\tret;\n}\n";

/* A chunk of the array a block, its threads striding through it: i from
 * ctaid.x * chunk + tid to min(n, (ctaid.x + 1) * chunk) by ntid (nvcc's
 * code, the loop kept whole). The test that enters the loop compares two
 * values of ctaid.x; taken apart it let half the threads in. */
static const char chunk_scale[] =
    ".visible .entry chunk(\n\t.param .u64 chunk_param_0,\n\t.param .u64 chunk_param_1,\n"
    "\t.param .u32 chunk_param_2,\n\t.param .u32 chunk_param_3\n)\n{\n"
    "\tld.param.u64 %rd3, [chunk_param_0];\n\tld.param.u64 %rd4, [chunk_param_1];\n"
    "\tld.param.u32 %r6, [chunk_param_2];\n\tld.param.u32 %r7, [chunk_param_3];\n"
    "\tmov.u32 %r8, %ctaid.x;\n\tadd.s32 %r9, %r8, 1;\n\tmul.lo.s32 %r10, %r9, %r7;\n"
    "\tmin.u32 %r1, %r10, %r6;\n\tmov.u32 %r11, %tid.x;\n\tmad.lo.s32 %r12, %r8, %r7, %r11;\n"
    "\tsetp.ge.s32 %p1, %r12, %r1;\n\t@%p1 bra $L__BB0_3;\n"
    "\tmov.u32 %r3, %ntid.x;\n\tcvta.to.global.u64 %rd1, %rd3;\n\tcvta.to.global.u64 %rd2, %rd4;\n"
    "$L__BB0_2:\n"
    "\tmul.wide.s32 %rd5, %r12, 4;\n\tadd.s64 %rd6, %rd1, %rd5;\n\tld.global.f32 %f1, [%rd6];\n"
    "\tadd.f32 %f2, %f1, %f1;\n\tadd.s64 %rd7, %rd2, %rd5;\n\tst.global.f32 [%rd7], %f2;\n"
    "\tadd.s32 %r12, %r12, %r3;\n\tsetp.lt.s32 %p2, %r12, %r1;\n\t@%p2 bra $L__BB0_2;\n"
    "$L__BB0_3:\n\tret;\n}\n";

static void test_correlated(void)
{
    void *keep;
    const struct maya_kwork *w = analyse(slice_sum, sizeof slice_sum - 1, "slice", &keep);
    if (!w)
        return;
    struct launch b;
    launch(&b, 1, 32, 256, 1);
    struct est_kwork k;
    int32_t rows = 4000, per = 125;
    set(&b, 16, &rows, 4);
    set(&b, 20, &per, 4);
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    /* every block sums its 125 rows: all 4,000 rows of 256 floats */
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 4.0 * 4000 * 256, 0.01);
    NEAR(k.amount[MAYA_KW_ST_GLOBAL], 4.0 * 32 * 256, 0.01);
    EXPECT(k.unresolved == 0);
    /* 150 rows a slice: slice 26 holds 100, the last 5 none; the same
     * rows, within the grain of the sampled blocks (2.5 % low) */
    per = 150;
    set(&b, 20, &per, 4);
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 4.0 * 4000 * 256, 0.05);
    free(keep);

    w = analyse(chunk_scale, sizeof chunk_scale - 1, "chunk", &keep);
    if (!w)
        return;
    launch(&b, 300, 1, 256, 1);
    int32_t n = 10000000, chunk = (n + 299) / 300;
    set(&b, 16, &n, 4);
    set(&b, 20, &chunk, 4);
    EXPECT(est_kwork_eval(w, &b.l, NULL, &k) == 0);
    /* every element read and written once */
    NEAR(k.amount[MAYA_KW_LD_GLOBAL], 4.0 * n, 0.01);
    NEAR(k.amount[MAYA_KW_ST_GLOBAL], 4.0 * n, 0.01);
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
    test_indirect_store();
    test_damage();
    test_bad_summary();
    test_in_flight();
    test_trip_limit();
    test_correlated();
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("kernel work: ok\n");
    return 0;
}

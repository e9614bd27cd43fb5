/* Unit test of reading a kernel's work from SASS as nvdisasm prints it
 * (emulator/core/sass_parse.c into kernel_work.c) and of evaluating it for
 * a launch (estimator/kernel_cost.c), on hand-written kernels in sm_90's
 * SASS whose work is known: grid-stride and row loops, divisions by
 * constants and by parameters, spilled loop counters, halving loops,
 * tensor lists, narrow and paired constants. Then nvdisasm's text cut
 * anywhere or with bytes changed must parse or fail cleanly. */
#include "kwork_fixture.h"

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
/* nvdisasm's text cut anywhere, or with bytes changed */
static void test_sass_damage(void)
{
    srand(7);
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

/* A 64-bit division as nvcc compiles it: when the operands' high words
 * are 0 (the test on the sum's high word, which carries this analysis does
 * not follow), the 32-bit idiom; otherwise a call to CUDA's helper:
 *   long q = (n + d - 1) / d;
 *   for (long i = 0; i < q; i++) y[0] = 0;
 * The common case is taken (kernel_work.c skips_helper): mixed half and
 * half with the helper's path, whose result this analysis does not follow
 * (the dividend), the loop ran 566 times where it runs 125. */
static const char sass_ceil64[] =
    "//--------------------- .text._Z5ceilqlPf --------------------------\n"
    ".text._Z5ceilqlPf:\n"
    "        /*0000*/                   ULDC.64 UR10, c[0x0][0x208] ;\n"
    "        /*0010*/                   MOV R2, c[0x0][0x210] ;\n"
    "        /*0020*/                   IADD3 R7, P0, R2, c[0x0][0x218], RZ ;\n"
    "        /*0030*/                   IADD3 R7, P1, R7, -0x1, RZ ;\n"
    "        /*0040*/                   IADD3.X R8, RZ, c[0x0][0x214], RZ, P0, !PT ;\n"
    "        /*0050*/                   IADD3.X R8, R8, -0x1, RZ, P1, !PT ;\n"
    "        /*0060*/                   ISETP.NE.U32.AND P0, PT, R8, RZ, PT ;\n"
    "        /*0070*/              @!P0 BRA `(.L_x_1) ;\n"
    "        /*0080*/                   MOV R0, 0xc0 ;\n"
    "        /*0090*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm20_div_s64) ;\n"
    "        /*00a0*/                   IMAD.MOV.U32 R9, RZ, RZ, R7 ;\n"
    "        /*00b0*/                   BRA `(.L_x_2) ;\n"
    ".L_x_1:\n"
    "        /*00c0*/                   I2F.U32.RP R0, c[0x0][0x218] ;\n"
    "        /*00d0*/                   ISETP.NE.U32.AND P2, PT, RZ, c[0x0][0x218], PT ;\n"
    "        /*00e0*/                   MUFU.RCP R0, R0 ;\n"
    "        /*00f0*/                   IADD3 R8, R0, 0xffffffe, RZ ;\n"
    "        /*0100*/                   F2I.FTZ.U32.TRUNC.NTZ R9, R8 ;\n"
    "        /*0110*/                   IMAD.MOV.U32 R8, RZ, RZ, RZ ;\n"
    "        /*0120*/                   IMAD.MOV R11, RZ, RZ, -R9 ;\n"
    "        /*0130*/                   IMAD R11, R11, c[0x0][0x218], RZ ;\n"
    "        /*0140*/                   IMAD.HI.U32 R10, R9, R11, R8 ;\n"
    "        /*0150*/                   IMAD.HI.U32 R9, R10, R7, RZ ;\n"
    "        /*0160*/                   IMAD.MOV R10, RZ, RZ, -R9 ;\n"
    "        /*0170*/                   IMAD R7, R10, c[0x0][0x218], R7 ;\n"
    "        /*0180*/                   ISETP.GE.U32.AND P0, PT, R7, c[0x0][0x218], PT ;\n"
    "        /*0190*/               @P0 IADD3 R7, R7, -c[0x0][0x218], RZ ;\n"
    "        /*01a0*/               @P0 IADD3 R9, R9, 0x1, RZ ;\n"
    "        /*01b0*/                   ISETP.GE.U32.AND P1, PT, R7, c[0x0][0x218], PT ;\n"
    "        /*01c0*/               @P1 IADD3 R9, R9, 0x1, RZ ;\n"
    "        /*01d0*/              @!P2 LOP3.LUT R9, RZ, c[0x0][0x218], RZ, 0x33, !PT ;\n"
    ".L_x_2:\n"
    "        /*01e0*/                   ISETP.GE.AND P0, PT, R9, 0x1, PT ;\n"
    "        /*01f0*/              @!P0 EXIT ;\n"
    "        /*0200*/                   LDC.64 R4, c[0x0][0x220] ;\n"
    "        /*0210*/                   IMAD.MOV.U32 R6, RZ, RZ, RZ ;\n"
    ".L_x_3:\n"
    "        /*0220*/                   STG.E desc[UR10][R4.64], RZ ;\n"
    "        /*0230*/                   IADD3 R6, R6, 0x1, RZ ;\n"
    "        /*0240*/                   ISETP.GE.U32.AND P0, PT, R6, R9, PT ;\n"
    "        /*0250*/              @!P0 BRA `(.L_x_3) ;\n"
    "        /*0260*/                   EXIT ;\n"
    ".L_x_4:\n"
    "        /*0270*/                   BRA `(.L_x_4);\n"
    ".L_x_5:\n";

static void test_sass_div64(void)
{
    static const struct maya_kparam three[] = { { 0, 8, MAYA_KP_I64, { 0 } }, { 8, 4, MAYA_KP_U32, { 0 } },
                                                { 16, 8, MAYA_KP_PTR, { 0 } } };
    int64_t nd[2] = { 1000, 8 };
    NEAR(sass_loop_stores(sass_ceil64, sizeof sass_ceil64 - 1, "_Z5ceilqlPf", three, 3, 256, nd, 12), 4.0 * 125 * 256,
         0.02);
}

int main(void)
{
    test_sass();
    test_sass_rows();
    test_sass_negative_immediate();
    test_sass_spilled_loop();
    test_sass_launch_decided();
    test_sass_sdiv();
    test_sass_halving();
    test_sass_div_copy();
    test_sass_joint_trip();
    test_sass_udiv();
    test_sass_signed_blocks();
    test_sass_prmt();
    test_sass_gather();
    test_sass_tensor_list();
    test_sass_fsetp();
    test_sass_float_bits();
    test_sass_pair();
    test_sass_narrow_constant();
    test_sass_u16_grid();
    test_sass_damage();
    test_sass_div64();
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("kernel work (SASS): ok\n");
    return 0;
}

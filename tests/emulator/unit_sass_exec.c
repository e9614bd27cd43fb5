/* Unit test of the SASS executor (emulator/core/sass_exec.c) on small
 * kernels written as nvdisasm prints them: parameters from constant bank 0,
 * 32- and 64-bit integer arithmetic with carries (IADD3/.X, IMAD.WIDE, LEA.HI),
 * 64-bit compares (ISETP .EX) and SEL, double arithmetic and compares
 * (DADD, DMUL, DFMA, DSETP), conversions (I2F, F2I, HADD2.F32 from f16,
 * F2FP to bf16 and f16 pairs; 64-bit I2F/F2I and F2F, with rounding ties,
 * overflow, saturation and NaN checked bit for bit), packed half arithmetic
 * (HADD2, HMUL2, HFMA2 on f16 and bf16 pairs), packed half min/max (HMNMX2),
 * rounding to integral values (FRND, f32 and f64), MUFU.RCP, BMOV,
 * predicated EXIT, shared memory and a
 * barrier, a warp shuffle, lanes that exchange values through shared memory
 * with no barrier (they run together), an indirect branch through a jump
 * table in constant bank 2; how runs stop (an instruction not covered when
 * reached, a loop past the step bound, bytes not real, a write outside
 * memory); and that damaged texts (cut, bytes changed) never crash it.
 * Exit 0 if all hold. */
#include "sass_exec.h"
#include "../unit_check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_mem.h"

/* nvdisasm's text of one kernel from its lines: instructions get their
 * addresses, lines starting with ".L" are labels. */
static char *text_of(const char *entry, const char *const *lines)
{
    size_t cap = 1 << 16, n = 0;
    char *t = malloc(cap);
    n += (size_t)snprintf(t + n, cap - n, "\t.section\t.text.%s,\"ax\",@progbits\n.text.%s:\n", entry, entry);
    unsigned addr = 0;
    for (size_t i = 0; lines[i]; i++) {
        if (lines[i][0] == '.')
            n += (size_t)snprintf(t + n, cap - n, "%s\n", lines[i]);
        else
            n += (size_t)snprintf(t + n, cap - n, "        /*%04x*/                   %s ;\n", addr, lines[i]), addr += 16;
    }
    snprintf(t + n, cap - n, "//--------------------- SYMBOLS --------------------------\n");
    return t;
}

static enum emu_ptx_result run(const char *entry, const char *const *lines, unsigned grid, unsigned block,
                               const void *params, uint32_t pbytes, const void *bank2, uint32_t nbank2, char *why,
                               size_t nwhy)
{
    char *t = text_of(entry, lines);
    struct emu_sass_prog *p = emu_sass_prog_new(t, strlen(t), entry, 0x210, 64, bank2, nbank2, why, nwhy);
    free(t);
    if (!p)
        return EMU_PTX_FAULT;
    struct emu_ptx_launch l = { { grid, 1, 1 }, { block, 1, 1 }, 0, params, pbytes, 1u << 20 };
    enum emu_ptx_result r = emu_sass_run(p, &l, &M, why, nwhy);
    emu_sass_prog_free(p);
    return r;
}

/* One thread of lines with the parameters x, y (pc): does the run stop,
 * not covered, at an instruction whose message names what? */
static int stops_at(const char *entry, const char *const *lines, const uint64_t pc[2], const char *what, char *why,
                    size_t nwhy)
{
    return run(entry, lines, 1, 1, pc, 2 * sizeof *pc, NULL, 0, why, nwhy) == EMU_PTX_UNSUPPORTED &&
           strstr(why, what) != NULL;
}

/* y[i] = i + 7 for i < n; params: y at 0x210, n at 0x218 */
static const char *const fill[] = {
    "LDC R1, c[0x0][0x28]",
    "S2R R0, SR_CTAID.X",
    "S2R R3, SR_TID.X",
    "ULDC UR4, c[0x0][0x0]",
    "IMAD R0, R0, UR4, R3",
    "ISETP.GE.AND P0, PT, R0, c[0x0][0x218], PT",
    "@P0 EXIT",
    "LDC.64 R2, c[0x0][0x210]",
    "ULDC.64 UR4, c[0x0][0x208]",
    "IMAD.WIDE R2, R0, 0x4, R2",
    "IADD3 R5, R0, 0x7, RZ",
    "STG.E desc[UR4][R2.64], R5",
    "EXIT",
    ".L_x_0:",
    "BRA `(.L_x_0)",
    NULL,
};

/* 64-bit arithmetic of one thread: x (0x210) holds a, b (u64); y (0x218)
 * gets a + b, a - b (IADD3 carries), max(a, b) signed (ISETP .EX + SEL),
 * a * 3 (IMAD.WIDE.U32 + IMAD), and y + 8*idx as LEA/LEA.HI.X computes it */
static const char *const wide[] = {
    "LDC.64 R2, c[0x0][0x210]",
    "LDG.E.64 R4, desc[UR4][R2.64]",
    "LDG.E.64 R6, desc[UR4][R2.64+0x8]",
    "LDC.64 R8, c[0x0][0x218]",
    "IADD3 R10, P0, R4, R6, RZ",
    "IADD3.X R11, R5, R7, RZ, P0, !PT",
    "STG.E.64 desc[UR4][R8.64], R10",
    "IADD3 R10, P0, R4, -R6, RZ",
    "IADD3.X R11, R5, ~R7, RZ, P0, !PT",
    "STG.E.64 desc[UR4][R8.64+0x8], R10",
    "ISETP.GT.U32.AND P0, PT, R4, R6, PT",
    "ISETP.GT.AND.EX P0, PT, R5, R7, PT, P0",
    "SEL R10, R4, R6, P0",
    "SEL R11, R5, R7, P0",
    "STG.E.64 desc[UR4][R8.64+0x10], R10",
    "IMAD.WIDE.U32 R10, R4, 0x3, RZ",
    "IMAD R11, R5, 0x3, R11",
    "STG.E.64 desc[UR4][R8.64+0x18], R10",
    "MOV R12, 0x5",
    "LEA R10, P0, R12, R8, 0x3",
    "LEA.HI.X R11, R12, R9, RZ, 0x3, P0",
    "STG.E.64 desc[UR4][R8.64+0x20], R10",
    "EXIT",
    NULL,
};

/* double arithmetic of one thread: x (0x210) holds a, b (f64), c at
 * 0x220; y (0x218) gets a + b, a * b, fma(a, b, c), max(a, b) (DSETP's
 * unordered compare and SELs), -|a| + 2.5 */
static const char *const dbl[] = {
    "LDC.64 R2, c[0x0][0x210]",
    "LDG.E.64 R4, desc[UR4][R2.64]",
    "LDG.E.64 R6, desc[UR4][R2.64+0x8]",
    "LDC.64 R8, c[0x0][0x218]",
    "DADD R10, R4, R6",
    "STG.E.64 desc[UR4][R8.64], R10",
    "DMUL R10, R4, R6",
    "STG.E.64 desc[UR4][R8.64+0x8], R10",
    "DFMA R10, R4, R6, c[0x0][0x220]",
    "STG.E.64 desc[UR4][R8.64+0x10], R10",
    "DSETP.GTU.AND P0, PT, R4, R6, PT",
    "SEL R10, R4, R6, P0",
    "SEL R11, R5, R7, P0",
    "STG.E.64 desc[UR4][R8.64+0x18], R10",
    "DADD R10, -|R4|, 2.5",
    "STG.E.64 desc[UR4][R8.64+0x20], R10",
    "EXIT",
    NULL,
};

/* conversions, a reciprocal and barrier moves of one thread: x (0x210)
 * holds 2^24 + 1, -3, 4.0f, 3.75f, -2.5f, NaN; y (0x218) gets I2F.U32.RP
 * and I2F.U32 (to nearest) of 2^24 + 1, I2F of -3, MUFU.RCP of 4, F2I.U32
 * truncated of 3.75 and of -2.5 (saturated to 0), F2I floored of -2.5,
 * F2I of NaN, and BMOV's round trip through B3 then its cleared value */
static const char *const conv[] = {
    "LDC.64 R2, c[0x0][0x210]",
    "LDG.E.128 R4, desc[UR4][R2.64]",
    "LDG.E.64 R12, desc[UR4][R2.64+0x10]",
    "LDC.64 R8, c[0x0][0x218]",
    "I2F.U32.RP R10, R4",
    "STG.E desc[UR4][R8.64], R10",
    "I2F.U32 R10, R4",
    "STG.E desc[UR4][R8.64+0x4], R10",
    "I2F R10, R5",
    "STG.E desc[UR4][R8.64+0x8], R10",
    "MUFU.RCP R10, R6",
    "STG.E desc[UR4][R8.64+0xc], R10",
    "F2I.FTZ.U32.TRUNC.NTZ R10, R7",
    "STG.E desc[UR4][R8.64+0x10], R10",
    "F2I.FTZ.U32.TRUNC.NTZ R10, R12",
    "STG.E desc[UR4][R8.64+0x14], R10",
    "F2I.FLOOR.NTZ R10, R12",
    "STG.E desc[UR4][R8.64+0x18], R10",
    "F2I.TRUNC.NTZ R10, R13",
    "STG.E desc[UR4][R8.64+0x1c], R10",
    "BMOV.32 B3, R5",
    "BMOV.32.CLEAR R10, B3",
    "STG.E desc[UR4][R8.64+0x20], R10",
    "BMOV.32.CLEAR R10, B3",
    "STG.E desc[UR4][R8.64+0x24], R10",
    "EXIT",
    NULL,
};

/* halves of one thread: x (0x210) holds the f16 pair (1.5 low, -2.25
 * high) and two f32s (1 + 2^-8, 65520); y (0x218) gets both halves as f32
 * (HADD2.F32), the f32s packed to bf16 (F2FP.BF16: 1 + 2^-8 ties to even,
 * 1.0; 65520 rounds up to 65536) and to f16 (F2FP.F16: 65520 ties to
 * infinity); a half select on an integer op stops the run */
static const char *const halves[] = {
    "LDC.64 R2, c[0x0][0x210]",
    "LDG.E R4, desc[UR4][R2.64]",
    "LDG.E.64 R6, desc[UR4][R2.64+0x8]",
    "LDC.64 R8, c[0x0][0x218]",
    "HADD2.F32 R10, -RZ, R4.H0_H0",
    "STG.E desc[UR4][R8.64], R10",
    "HADD2.F32 R10, -RZ, R4.reuse.H1_H1",
    "STG.E desc[UR4][R8.64+0x4], R10",
    "F2FP.BF16.F32.PACK_AB R10, R7, R6",
    "STG.E desc[UR4][R8.64+0x8], R10",
    "F2FP.F16.F32.PACK_AB R10, RZ, R7",
    "STG.E desc[UR4][R8.64+0xc], R10",
    "IADD3 R10, R4.H0_H0, 0x1, RZ",
    "EXIT",
    NULL,
};

/* packed half arithmetic of one thread: x (0x210) holds the f16 pairs
 * (high | low) A = 2048 | 1, B = 3 | 2^-11, C = 65504 | 2^-24 (subnormal),
 * D = -inf | +inf and the bf16 pairs E = 1 | 1, F = 3 * 2^-8 | 2^-8; y
 * (0x218) gets one word each (see main) */
static const char *const hops[] = {
    "LDC.64 R2, c[0x0][0x210]",
    "LDG.E.128 R4, desc[UR4][R2.64]",
    "LDG.E.64 R12, desc[UR4][R2.64+0x10]",
    "LDC.64 R8, c[0x0][0x218]",
    "HADD2 R10, R4, R5",
    "STG.E desc[UR4][R8.64], R10",
    "HMUL2 R10, R4.reuse, R6.H1_H1",
    "STG.E desc[UR4][R8.64+0x4], R10",
    "HADD2 R10, R7, R7.H0_H0",
    "STG.E desc[UR4][R8.64+0x8], R10",
    "HFMA2.MMA R10, R6.H0_H0, 3, 1.5, -RZ",
    "STG.E desc[UR4][R8.64+0xc], R10",
    "HFMA2.MMA.FTZ R10, R6.H0_H0, 3, 1.5, -RZ",
    "STG.E desc[UR4][R8.64+0x10], R10",
    "HADD2 R10, -|R5|, R4.H0_H0",
    "STG.E desc[UR4][R8.64+0x14], R10",
    "HFMA2 R10, R4, R5, R6",
    "STG.E desc[UR4][R8.64+0x18], R10",
    "HADD2.BF16_V2 R10, R12, R13",
    "STG.E desc[UR4][R8.64+0x1c], R10",
    "HMUL2.BF16_V2 R10, R12, 2, 32",
    "STG.E desc[UR4][R8.64+0x20], R10",
    "HADD2.F32 R10, R4.H1_H1, R5.H1_H1",
    "STG.E desc[UR4][R8.64+0x24], R10",
    "HFMA2.MMA R10, -RZ, RZ, 0, 4.76837158203125e-07",
    "STG.E desc[UR4][R8.64+0x28], R10",
    "HFMA2.MMA.RELU R10, R4, R5, R6",
    "EXIT",
    NULL,
};

/* packed half min/max and rounding to integral values of one thread: x
 * (0x210) holds the f16 pairs (high | low) A = 2 | -0, B = 1 | +0,
 * C = NaN | 1, D = 3 | NaN, the bf16 pairs E = 1.5 | -2, F = 0.5 | 4, the
 * f32s 2.5, -2.5, 3.5, -0.7, NaN, 1e-40 (subnormal) at 0x20 and the
 * doubles 2.5, -1.5 at 0x40; y (0x218) gets one word each (see main) */
static const char *const mnmx[] = {
    "LDC.64 R2, c[0x0][0x210]",
    "LDC.64 R8, c[0x0][0x218]",
    "LDG.E.128 R4, desc[UR4][R2.64]",
    "HMNMX2 R10, R4, R5, PT",
    "STG.E desc[UR4][R8.64], R10",
    "HMNMX2 R10, R4, R5, !PT",
    "STG.E desc[UR4][R8.64+0x4], R10",
    "HMNMX2 R10, R6, R7, PT",
    "STG.E desc[UR4][R8.64+0x8], R10",
    "HMNMX2.NAN R10, R6, R7, PT",
    "STG.E desc[UR4][R8.64+0xc], R10",
    "HMNMX2 R10, R4, R5.H1_H1, !PT",
    "STG.E desc[UR4][R8.64+0x10], R10",
    "LDG.E.64 R4, desc[UR4][R2.64+0x10]",
    "HMNMX2.BF16_V2 R10, R4, R5, !PT",
    "STG.E desc[UR4][R8.64+0x14], R10",
    "LDG.E.128 R4, desc[UR4][R2.64+0x20]",
    "FRND R10, R4",
    "STG.E desc[UR4][R8.64+0x18], R10",
    "FRND R10, R6",
    "STG.E desc[UR4][R8.64+0x1c], R10",
    "FRND.FLOOR R10, R7",
    "STG.E desc[UR4][R8.64+0x20], R10",
    "FRND.CEIL R10, R7",
    "STG.E desc[UR4][R8.64+0x24], R10",
    "FRND.TRUNC R10, R5",
    "STG.E desc[UR4][R8.64+0x28], R10",
    "LDG.E.64 R4, desc[UR4][R2.64+0x30]",
    "FRND R10, R4",
    "STG.E desc[UR4][R8.64+0x2c], R10",
    "FRND.CEIL R10, R5",
    "STG.E desc[UR4][R8.64+0x30], R10",
    "FRND.FTZ.CEIL R10, R5",
    "STG.E desc[UR4][R8.64+0x34], R10",
    "LDG.E.128 R4, desc[UR4][R2.64+0x40]",
    "FRND.F64 R10, R4",
    "STG.E.64 desc[UR4][R8.64+0x38], R10",
    "FRND.F64.FLOOR R10, R6",
    "STG.E.64 desc[UR4][R8.64+0x40], R10",
    "HMNMX2.XORSIGN R10, R4, R5, PT",
    "EXIT",
    NULL,
};

/* 64-bit and float-to-float conversions of one thread: x (0x210) holds
 * 64-bit words (see main); y (0x218) gets one 64-bit word each (32-bit
 * results in its low half) */
static const char *const conv64[] = {
    "LDC.64 R2, c[0x0][0x210]",
    "LDC.64 R8, c[0x0][0x218]",
    "LDG.E.128 R4, desc[UR4][R2.64]",
    "I2F.F64.S64 R10, R4",
    "STG.E.64 desc[UR4][R8.64], R10",
    "I2F.F64.U64 R10, R6",
    "STG.E.64 desc[UR4][R8.64+0x8], R10",
    "I2F.S64 R10, R6",
    "STG.E desc[UR4][R8.64+0x10], R10",
    "I2F.S64.RZ R10, R4",
    "STG.E desc[UR4][R8.64+0x18], R10",
    "LDG.E.128 R4, desc[UR4][R2.64+0x10]",
    "F2I.U64.F64.TRUNC R10, R4",
    "STG.E.64 desc[UR4][R8.64+0x20], R10",
    "F2I.S64.F64.TRUNC R10, R4",
    "STG.E.64 desc[UR4][R8.64+0x28], R10",
    "F2I.S64.F64 R10, R4",
    "STG.E.64 desc[UR4][R8.64+0x30], R10",
    "F2I.S64.F64.TRUNC R10, R6",
    "STG.E.64 desc[UR4][R8.64+0x38], R10",
    "LDG.E.128 R4, desc[UR4][R2.64+0x20]",
    "F2I.S64.F64.TRUNC R10, R4",
    "STG.E.64 desc[UR4][R8.64+0x40], R10",
    "F2I.U64.TRUNC R10, R6",
    "STG.E.64 desc[UR4][R8.64+0x48], R10",
    "LDG.E.128 R4, desc[UR4][R2.64+0x30]",
    "F2F.F32.F64 R10, R4",
    "STG.E desc[UR4][R8.64+0x50], R10",
    "F2F.F32.F64.RP R10, R4",
    "STG.E desc[UR4][R8.64+0x58], R10",
    "F2F.F16.F64 R10, R6",
    "STG.E desc[UR4][R8.64+0x60], R10",
    "F2F.F16.F64.RZ R10, R6",
    "STG.E desc[UR4][R8.64+0x68], R10",
    "LDG.E.128 R4, desc[UR4][R2.64+0x40]",
    "F2F.F64.F16 R10, R4.H1",
    "STG.E.64 desc[UR4][R8.64+0x70], R10",
    "F2F.F64.F16 R10, R4",
    "STG.E.64 desc[UR4][R8.64+0x78], R10",
    "F2I.F16.TRUNC.NTZ R10, R4.H1",
    "STG.E desc[UR4][R8.64+0x80], R10",
    "F2F.BF16.F32 R10, R5",
    "STG.E desc[UR4][R8.64+0x88], R10",
    "F2F.F16.F32.RM R10, R6",
    "STG.E desc[UR4][R8.64+0x90], R10",
    "F2F.F64.F32 R10, R5",
    "STG.E.64 desc[UR4][R8.64+0x98], R10",
    "I2F.F16 R10, R7",
    "STG.E desc[UR4][R8.64+0xa0], R10",
    "LDG.E R12, desc[UR4][R2.64+0x50]",
    "F2F.F64.F32 R10, R12",
    "EXIT",
    NULL,
};

/* block sum of 64 ints: a warp shuffle sum, each warp's sum through shared
 * memory, a barrier, thread 0 adds them; x at 0x210, y at 0x218 */
static const char *const reduce[] = {
    "S2R R0, SR_TID.X",
    "LDC.64 R2, c[0x0][0x210]",
    "IMAD.WIDE.U32 R2, R0, 0x4, R2",
    "LDG.E R4, desc[UR4][R2.64]",
    "SHFL.BFLY PT, R5, R4, 0x10, 0x1f",
    "IADD3 R4, R4, R5, RZ",
    "SHFL.BFLY PT, R5, R4, 0x8, 0x1f",
    "IADD3 R4, R4, R5, RZ",
    "SHFL.BFLY PT, R5, R4, 0x4, 0x1f",
    "IADD3 R4, R4, R5, RZ",
    "SHFL.BFLY PT, R5, R4, 0x2, 0x1f",
    "IADD3 R4, R4, R5, RZ",
    "SHFL.BFLY PT, R5, R4, 0x1, 0x1f",
    "IADD3 R4, R4, R5, RZ",
    "S2UR UR6, SR_CgaCtaId",
    "UMOV UR5, 0x400",
    "ULEA UR5, UR6, UR5, 0x18",
    "LOP3.LUT P0, RZ, R0, 0x1f, RZ, 0xc0, !PT",
    "SHF.R.U32.HI R6, RZ, 0x5, R0",
    "@!P0 STS [R6.X4+UR5], R4",
    "BAR.SYNC.DEFER_BLOCKING 0x0",
    "ISETP.NE.AND P0, PT, R0, RZ, PT",
    "@P0 EXIT",
    "LDS.64 R4, [UR5]",
    "IADD3 R4, R4, R5, RZ",
    "LDC.64 R2, c[0x0][0x218]",
    "STG.E desc[UR4][R2.64], R4",
    "EXIT",
    NULL,
};

/* the same block sum with the shared address computed (no .X4 form) */
static const char *const reduce2[] = {
    "S2R R0, SR_TID.X",
    "LDC.64 R2, c[0x0][0x210]",
    "IMAD.WIDE.U32 R2, R0, 0x4, R2",
    "LDG.E R4, desc[UR4][R2.64]",
    "SHFL.DOWN PT, R5, R4, 0x10, 0x1f",
    "IADD3 R4, R4, R5, RZ",
    "SHFL.DOWN PT, R5, R4, 0x8, 0x1f",
    "IADD3 R4, R4, R5, RZ",
    "SHFL.DOWN PT, R5, R4, 0x4, 0x1f",
    "IADD3 R4, R4, R5, RZ",
    "SHFL.DOWN PT, R5, R4, 0x2, 0x1f",
    "IADD3 R4, R4, R5, RZ",
    "SHFL.DOWN PT, R5, R4, 0x1, 0x1f",
    "IADD3 R4, R4, R5, RZ",
    "S2UR UR6, SR_CgaCtaId",
    "UMOV UR5, 0x400",
    "ULEA UR5, UR6, UR5, 0x18",
    "LOP3.LUT P0, RZ, R0, 0x1f, RZ, 0xc0, !PT",
    "SHF.R.U32.HI R6, RZ, 0x5, R0",
    "LEA R6, R6, UR5, 0x2",
    "@!P0 STS [R6], R4",
    "BAR.SYNC.DEFER_BLOCKING 0x0",
    "ISETP.NE.AND P0, PT, R0, RZ, PT",
    "@P0 EXIT",
    "LDS.64 R4, [UR5]",
    "IADD3 R4, R4, R5, RZ",
    "LDC.64 R2, c[0x0][0x218]",
    "STG.E desc[UR4][R2.64], R4",
    "EXIT",
    NULL,
};

/* a warp reverses 32 values through shared memory with no barrier: lane l
 * stores x[l] at l*4 and loads from (31-l)*4 (right only if the warp's
 * stores are all done before its loads, as on a GPU) */
static const char *const exchange[] = {
    "S2R R0, SR_TID.X",
    "LDC.64 R2, c[0x0][0x210]",
    "IMAD.WIDE.U32 R2, R0, 0x4, R2",
    "LDG.E R4, desc[UR4][R2.64]",
    "IMAD.SHL.U32 R6, R0, 0x4, RZ",
    "STS [R6], R4",
    "LOP3.LUT R7, RZ, R0, RZ, 0x33, !PT",
    "LOP3.LUT R7, R7, 0x1f, RZ, 0xc0, !PT",
    "IMAD.SHL.U32 R7, R7, 0x4, RZ",
    "LDS R5, [R7]",
    "LDC.64 R2, c[0x0][0x218]",
    "IMAD.WIDE.U32 R2, R0, 0x4, R2",
    "STG.E desc[UR4][R2.64], R5",
    "EXIT",
    NULL,
};

/* a switch through a jump table in constant bank 2: y = 10, 20 or 30 by
 * x's value (0, 1, 2); x at 0x210, y at 0x218 */
static const char *const jump[] = {
    "LDC.64 R2, c[0x0][0x210]",
    "LDG.E R4, desc[UR4][R2.64]",
    "IMAD.SHL.U32 R4, R4, 0x4, RZ",
    "LDC R6, c[0x2][R4]",
    "BRX R6 -0x50                               (*\"BRANCH_TARGETS .L_x_1,.L_x_2,.L_x_3\"*)",
    ".L_x_1:",
    "MOV R5, 0xa",
    "BRA `(.L_x_4)",
    ".L_x_2:",
    "MOV R5, 0x14",
    "BRA `(.L_x_4)",
    ".L_x_3:",
    "MOV R5, 0x1e",
    ".L_x_4:",
    "LDC.64 R2, c[0x0][0x218]",
    "STG.E desc[UR4][R2.64], R5",
    "EXIT",
    NULL,
};

/* an instruction not covered, on a path only x != 0 takes */
static const char *const uncovered[] = {
    "LDC.64 R2, c[0x0][0x210]",
    "LDG.E R4, desc[UR4][R2.64]",
    "ISETP.NE.AND P0, PT, R4, RZ, PT",
    "@P0 BRA `(.L_x_1)",
    "EXIT",
    ".L_x_1:",
    "HMMA.16816.F32 R8, R12, R16, R8",
    "EXIT",
    NULL,
};

static const char *const spin[] = {
    ".L_x_0:",
    "IADD3 R0, R0, 0x1, RZ",
    "BRA `(.L_x_0)",
    NULL,
};

int main(void)
{
    char why[256];
    uint64_t pp[2] = { (uint64_t)(uintptr_t)mem, 100 };
    memset(mem, 0, sizeof mem);
    CHECK(run("fill", fill, 2, 64, pp, sizeof pp, NULL, 0, why, sizeof why) == EMU_PTX_DONE, "fill: %s", why);
    int ok = 1;
    for (int i = 0; i < 128; i++)
        ok &= ((int32_t *)mem)[i] == (i < 100 ? i + 7 : 0);
    CHECK(ok, "fill: y[i] = i + 7 for i < 100, 0 after");

    /* 64-bit arithmetic */
    int64_t *x = (int64_t *)mem, *y = (int64_t *)(mem + 1024);
    x[0] = 0x1ffffffffll;
    x[1] = -5;
    uint64_t pw[2] = { (uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)y };
    CHECK(run("wide", wide, 1, 1, pw, sizeof pw, NULL, 0, why, sizeof why) == EMU_PTX_DONE, "wide: %s", why);
    CHECK(y[0] == 0x1ffffffffll - 5, "wide: a + b = %lld", (long long)y[0]);
    CHECK(y[1] == 0x1ffffffffll + 5, "wide: a - b = %lld", (long long)y[1]);
    CHECK(y[2] == 0x1ffffffffll, "wide: max = %lld", (long long)y[2]);
    CHECK(y[3] == 3 * 0x1ffffffffll, "wide: a * 3 = %lld", (long long)y[3]);
    CHECK((uint64_t)y[4] == pw[1] + 40, "wide: LEA = 0x%llx", (unsigned long long)y[4]);
    x[0] = -7;
    x[1] = 3;
    CHECK(run("wide", wide, 1, 1, pw, sizeof pw, NULL, 0, why, sizeof why) == EMU_PTX_DONE, "wide: %s", why);
    CHECK(y[2] == 3 && y[0] == -4 && y[1] == -10, "wide: signed max %lld, sum %lld, difference %lld", (long long)y[2],
          (long long)y[0], (long long)y[1]);

    /* double arithmetic */
    double *xd = (double *)mem, *yd = (double *)(mem + 1024);
    xd[0] = -1.25;
    xd[1] = 3.0 / 7;
    double c = 1e-3;
    uint64_t cbits;
    memcpy(&cbits, &c, sizeof c);
    uint64_t pdbl[3] = { (uint64_t)(uintptr_t)xd, (uint64_t)(uintptr_t)yd, cbits };
    CHECK(run("dbl", dbl, 1, 1, pdbl, sizeof pdbl, NULL, 0, why, sizeof why) == EMU_PTX_DONE, "dbl: %s", why);
    CHECK(yd[0] == -1.25 + 3.0 / 7 && yd[1] == -1.25 * (3.0 / 7), "dbl: a + b = %.17g, a * b = %.17g", yd[0], yd[1]);
    CHECK(yd[2] == fma(-1.25, 3.0 / 7, c), "dbl: fma = %.17g", yd[2]);
    CHECK(yd[3] == 3.0 / 7 && yd[4] == 1.25, "dbl: max = %.17g, -|a| + 2.5 = %.17g", yd[3], yd[4]);
    xd[1] = -2;
    CHECK(run("dbl", dbl, 1, 1, pdbl, sizeof pdbl, NULL, 0, why, sizeof why) == EMU_PTX_DONE, "dbl: %s", why);
    CHECK(yd[3] == -1.25, "dbl: max(-1.25, -2) = %.17g", yd[3]);

    /* conversions, reciprocal, barrier moves */
    uint32_t *xc = (uint32_t *)mem, *yc = (uint32_t *)(mem + 1024);
    float fin[4] = { 4.0f, 3.75f, -2.5f, NAN };
    xc[0] = (1u << 24) + 1;
    xc[1] = (uint32_t)-3;
    memcpy(xc + 2, fin, sizeof fin);
    memset(yc, 0xee, 40);
    uint64_t pc[2] = { (uint64_t)(uintptr_t)xc, (uint64_t)(uintptr_t)yc };
    CHECK(run("conv", conv, 1, 1, pc, sizeof pc, NULL, 0, why, sizeof why) == EMU_PTX_DONE, "conv: %s", why);
    float fo[4];
    memcpy(fo, yc, sizeof fo);
    CHECK(fo[0] == 16777218.0f && fo[1] == 16777216.0f && fo[2] == -3.0f && fo[3] == 0.25f,
          "conv: I2F.U32.RP %.1f, I2F.U32 %.1f, I2F %.1f, MUFU.RCP %g", fo[0], fo[1], fo[2], fo[3]);
    CHECK(yc[4] == 3 && yc[5] == 0 && (int32_t)yc[6] == -3 && yc[7] == 0,
          "conv: F2I.U32.TRUNC 3.75 = %u, -2.5 = %u, F2I.FLOOR -2.5 = %d, NaN = %u", yc[4], yc[5], (int32_t)yc[6],
          yc[7]);
    CHECK(yc[8] == (uint32_t)-3 && yc[9] == 0, "conv: BMOV round trip 0x%x, cleared 0x%x", yc[8], yc[9]);

    /* halves: conversions from f16, packs to bf16 and f16 */
    uint32_t *xh = (uint32_t *)mem, *yh = (uint32_t *)(mem + 1024);
    float hin[2] = { 1.0f + 1.0f / 256, 65520.0f };
    xh[0] = 0xc0803e00u; /* -2.25 : 1.5 */
    memcpy(xh + 2, hin, sizeof hin);
    CHECK(run("halves", halves, 1, 1, pc, sizeof pc, NULL, 0, why, sizeof why) == EMU_PTX_UNSUPPORTED,
          "halves: a half select on an integer op stops the run: %s", why);
    float ho[2];
    memcpy(ho, yh, sizeof ho);
    CHECK(ho[0] == 1.5f && ho[1] == -2.25f, "halves: HADD2.F32 %g %g", ho[0], ho[1]);
    CHECK(yh[2] == 0x47803f80u, "halves: F2FP.BF16 pack 0x%08x", yh[2]);
    CHECK(yh[3] == 0x00007c00u, "halves: F2FP.F16 pack 0x%08x", yh[3]);

    /* packed half arithmetic: exact bits */
    uint32_t hx[6] = { 0x68003c00u, 0x42001000u, 0x7bff0001u, 0xfc007c00u, 0x3f803f80u, 0x3c403b80u };
    memcpy(xh, hx, sizeof hx);
    memset(yh, 0xee, 48);
    CHECK(stops_at("hops", hops, pc, "RELU", why, sizeof why), "hops: HFMA2.RELU stops the run: %s", why);
    CHECK(yh[0] == 0x68023c00u, "HADD2: 2048 + 3 ties up to 2052, 1 + 2^-11 ties down to 1: 0x%08x", yh[0]);
    CHECK(yh[1] == 0x7c007bffu, "HMUL2 by 65504: 65504 | inf (overflow): 0x%08x", yh[1]);
    CHECK(yh[2] == 0x7fff7c00u, "HADD2: -inf + inf is the canonical NaN, inf + inf inf: 0x%08x", yh[2]);
    CHECK(yh[3] == 0x00030002u, "HFMA2 immediates on a subnormal: 3 * 2^-24 | 1.5 * 2^-24 ties to 2 * 2^-24: 0x%08x",
          yh[3]);
    CHECK(yh[4] == 0, "HFMA2.FTZ flushes the subnormal: 0x%08x", yh[4]);
    CHECK(yh[5] == 0xc0003bffu, "HADD2 -|B| + A.H0: -2 | 1 - 2^-11: 0x%08x", yh[5]);
    CHECK(yh[6] == 0x7c001000u, "HFMA2: 2048 * 3 + 65504 overflows, 2^-11 + 2^-24 rounds down: 0x%08x", yh[6]);
    CHECK(yh[7] == 0x3f823f80u, "HADD2.BF16_V2: 1 + 3 * 2^-8 ties up, 1 + 2^-8 ties down: 0x%08x", yh[7]);
    CHECK(yh[8] == 0x40004200u, "HMUL2.BF16_V2 by the immediates 2 | 32: 0x%08x", yh[8]);
    CHECK(yh[9] == 0x45003000u, "HADD2.F32 of the high halves: 2051.0f, not rounded to a half: 0x%08x", yh[9]);
    CHECK(yh[10] == 0x00000008u, "HFMA2 constant 0 | 8 * 2^-24: 0x%08x", yh[10]);

    /* packed half min/max, rounding to integral values: exact bits */
    {
        uint32_t *xm = (uint32_t *)mem, *ym = (uint32_t *)(mem + 1024);
        uint32_t hw[6] = { 0x40008000u, 0x3c000000u, 0x7e003c00u, 0x42007e00u, 0x3fc0c000u, 0x3f004080u };
        float fr[6] = { 2.5f, -2.5f, 3.5f, -0.7f, NAN, 1e-40f };
        double dr[2] = { 2.5, -1.5 };
        memcpy(xm, hw, sizeof hw);
        memcpy(xm + 8, fr, sizeof fr);
        memcpy(xm + 16, dr, sizeof dr);
        memset(ym, 0xee, 80);
        CHECK(stops_at("mnmx", mnmx, pc, "XORSIGN", why, sizeof why), "mnmx: HMNMX2.XORSIGN stops the run: %s", why);
        static const struct { uint32_t bits; const char *what; } want[] = {
            { 0x3c008000u, "HMNMX2 min: 1 | -0 (below +0)" },
            { 0x40000000u, "HMNMX2 max: 2 | +0" },
            { 0x42003c00u, "HMNMX2 min: a NaN loses, 3 | 1" },
            { 0x7fff7fffu, "HMNMX2.NAN: a NaN wins, canonical" },
            { 0x40003c00u, "HMNMX2 max with B.H1_H1 (1 | 1): 2 | 1" },
            { 0x3fc04080u, "HMNMX2.BF16_V2 max: 1.5 | 4" },
        };
        for (size_t k = 0; k < sizeof want / sizeof *want; k++)
            CHECK(ym[k] == want[k].bits, "%s: 0x%08x", want[k].what, ym[k]);
        float fo2[7];
        memcpy(fo2, ym + 6, sizeof fo2);
        CHECK(fo2[0] == 2.0f && fo2[1] == 4.0f, "FRND ties to even: 2.5 -> %g, 3.5 -> %g", fo2[0], fo2[1]);
        CHECK(fo2[2] == -1.0f && ym[9] == 0x80000000u, "FRND.FLOOR -0.7 -> %g, .CEIL -> -0 (0x%08x)", fo2[2], ym[9]);
        CHECK(fo2[4] == -2.0f, "FRND.TRUNC -2.5 -> %g", fo2[4]);
        CHECK(ym[11] == 0x7fffffffu, "FRND of a NaN: the canonical NaN 0x%08x", ym[11]);
        CHECK(fo2[6] == 1.0f && ym[13] == 0, "FRND.CEIL of a subnormal: %g; .FTZ.CEIL: 0x%08x", fo2[6], ym[13]);
        double dout[2];
        memcpy(dout, ym + 14, sizeof dout);
        CHECK(dout[0] == 2.0 && dout[1] == -2.0, "FRND.F64 2.5 -> %g, .FLOOR -1.5 -> %g", dout[0], dout[1]);
    }

    /* 64-bit and float-to-float conversions: exact bits */
    uint64_t *x64 = (uint64_t *)mem, *y64 = (uint64_t *)(mem + 1024);
    double dv[4] = { -3.7, NAN, 1e30, 1 + 0x1p-24 };
    float fv[2] = { 1e20f, 1 + 0x1p-8f + 0x1p-20f };
    float fneg = -1e-10f;
    uint32_t w32s[4];
    x64[0] = (1ull << 53) + 1;
    x64[1] = ~0ull;
    memcpy(&x64[2], &dv[0], 8);
    memcpy(&x64[3], &dv[1], 8);
    memcpy(&x64[4], &dv[2], 8);
    memcpy(&x64[5], &fv[0], 4);
    memcpy(&x64[6], &dv[3], 8);
    double d65520 = 65520;
    memcpy(&x64[7], &d65520, 8);
    w32s[0] = 0xc4000001u; /* f16 pair -4 | 2^-24 */
    memcpy(&w32s[1], &fv[1], 4);
    memcpy(&w32s[2], &fneg, 4);
    w32s[3] = 70000;
    memcpy(&x64[8], w32s, sizeof w32s);
    uint32_t fnan = 0x7fc00000u;
    memcpy(&x64[10], &fnan, 4);
    memset(y64, 0, 0xa8);
    pc[0] = (uint64_t)(uintptr_t)x64;
    pc[1] = (uint64_t)(uintptr_t)y64;
    CHECK(stops_at("conv64", conv64, pc, "NaN", why, sizeof why), "conv64: F2F of a NaN to f64 stops the run: %s", why);
    CHECK(y64[0] == 0x4340000000000000ull, "I2F.F64.S64 2^53 + 1 ties to 2^53: 0x%016llx", (unsigned long long)y64[0]);
    CHECK(y64[1] == 0x43f0000000000000ull, "I2F.F64.U64 2^64 - 1 rounds to 2^64: 0x%016llx",
          (unsigned long long)y64[1]);
    CHECK(y64[2] == 0xbf800000u, "I2F.S64 of -1: 0x%llx", (unsigned long long)y64[2]);
    CHECK(y64[3] == 0x5a000000u, "I2F.S64.RZ of 2^53 + 1: 2^53: 0x%llx", (unsigned long long)y64[3]);
    CHECK(y64[4] == 0, "F2I.U64.F64.TRUNC of -3.7 saturates to 0: 0x%llx", (unsigned long long)y64[4]);
    CHECK((int64_t)y64[5] == -3 && (int64_t)y64[6] == -4, "F2I.S64.F64 of -3.7: truncated %lld, nearest %lld",
          (long long)y64[5], (long long)y64[6]);
    CHECK(y64[7] == 0x8000000000000000ull, "F2I.S64.F64 of NaN: 0x%llx", (unsigned long long)y64[7]);
    CHECK(y64[8] == 0x7fffffffffffffffull, "F2I.S64.F64 of 1e30 saturates: 0x%llx", (unsigned long long)y64[8]);
    CHECK(y64[9] == ~0ull, "F2I.U64 of 1e20f saturates: 0x%llx", (unsigned long long)y64[9]);
    CHECK(y64[10] == 0x3f800000u && y64[11] == 0x3f800001u, "F2F.F32.F64 1 + 2^-24: ties to 0x%llx, .RP 0x%llx",
          (unsigned long long)y64[10], (unsigned long long)y64[11]);
    CHECK(y64[12] == 0x7c00 && y64[13] == 0x7bff, "F2F.F16.F64 65520: to inf 0x%llx, .RZ to the largest 0x%llx",
          (unsigned long long)y64[12], (unsigned long long)y64[13]);
    CHECK(y64[14] == 0xc010000000000000ull && y64[15] == 0x3e70000000000000ull,
          "F2F.F64.F16 of .H1 -4: 0x%llx, of the low subnormal 2^-24: 0x%llx", (unsigned long long)y64[14],
          (unsigned long long)y64[15]);
    CHECK((int32_t)y64[16] == -4, "F2I.F16.TRUNC of .H1: %d", (int32_t)y64[16]);
    CHECK(y64[17] == 0x3f81, "F2F.BF16.F32 rounds up past the tie: 0x%llx", (unsigned long long)y64[17]);
    CHECK(y64[18] == 0x8001, "F2F.F16.F32.RM of -1e-10: the smallest negative subnormal: 0x%llx",
          (unsigned long long)y64[18]);
    CHECK(y64[19] == 0x3ff0100100000000ull, "F2F.F64.F32 exact: 0x%llx", (unsigned long long)y64[19]);
    CHECK(y64[20] == 0x7c00, "I2F.F16 of 70000 overflows to inf: 0x%llx", (unsigned long long)y64[20]);

    /* block sums */
    int32_t *xi = (int32_t *)mem, *out = (int32_t *)(mem + 4096);
    for (int i = 0; i < 64; i++)
        xi[i] = i * i;
    uint64_t pr[2] = { (uint64_t)(uintptr_t)xi, (uint64_t)(uintptr_t)out };
    CHECK(run("reduce", reduce, 1, 64, pr, sizeof pr, NULL, 0, why, sizeof why) == EMU_PTX_DONE, "reduce: %s", why);
    CHECK(*out == 85344, "reduce: sum of squares below 64 = %d", *out);
    *out = 0;
    CHECK(run("reduce2", reduce2, 1, 64, pr, sizeof pr, NULL, 0, why, sizeof why) == EMU_PTX_DONE, "reduce2: %s", why);
    CHECK(*out == 85344, "reduce2: sum of squares below 64 = %d", *out);

    /* lanes exchange through shared memory */
    for (int i = 0; i < 32; i++)
        xi[i] = 100 + i;
    CHECK(run("exchange", exchange, 1, 32, pr, sizeof pr, NULL, 0, why, sizeof why) == EMU_PTX_DONE, "exchange: %s",
          why);
    ok = 1;
    for (int i = 0; i < 32; i++)
        ok &= out[i] == 100 + 31 - i;
    CHECK(ok, "exchange: lane l reads lane 31-l's value");

    /* a jump table: entries are the targets' addresses */
    uint32_t table[3] = { 0x50, 0x70, 0x90 };
    for (int v = 0; v < 3; v++) {
        xi[0] = v;
        CHECK(run("jump", jump, 1, 1, pr, sizeof pr, table, sizeof table, why, sizeof why) == EMU_PTX_DONE,
              "jump: %s", why);
        CHECK(*out == 10 * (v + 1), "jump %d: %d", v, *out);
    }
    uint32_t bad_table[3] = { 0x40, 0x70, 0x90 }; /* not a listed target */
    xi[0] = 0;
    CHECK(run("jump", jump, 1, 1, pr, sizeof pr, bad_table, sizeof bad_table, why, sizeof why) ==
              EMU_PTX_UNSUPPORTED, "jump to an unlisted target: %s", why);
    CHECK(run("jump", jump, 1, 1, pr, sizeof pr, NULL, 0, why, sizeof why) == EMU_PTX_UNSUPPORTED,
          "jump without bank 2: %s", why);

    /* not covered: only when reached */
    xi[0] = 0;
    CHECK(run("unc", uncovered, 1, 1, pr, sizeof pr, NULL, 0, why, sizeof why) == EMU_PTX_DONE, "untaken: %s", why);
    xi[0] = 1;
    CHECK(run("unc", uncovered, 1, 1, pr, sizeof pr, NULL, 0, why, sizeof why) == EMU_PTX_UNSUPPORTED, "taken");
    CHECK(strstr(why, "HMMA") != NULL, "why names the instruction: %s", why);
    CHECK(run("spin", spin, 1, 32, pr, sizeof pr, NULL, 0, why, sizeof why) == EMU_PTX_STEPS, "spin: %s", why);
    unreal_from = 0;
    CHECK(run("fill", fill, 1, 32, pp, sizeof pp, NULL, 0, why, sizeof why) == EMU_PTX_DONE, "fill only writes");
    CHECK(run("reduce2", reduce2, 1, 64, pr, sizeof pr, NULL, 0, why, sizeof why) == EMU_PTX_UNREAL, "unreal: %s",
          why);
    unreal_from = sizeof mem;
    uint64_t far[2] = { 16, 100 };
    CHECK(run("fill", fill, 1, 32, far, sizeof far, NULL, 0, why, sizeof why) == EMU_PTX_FAULT, "outside: %s", why);
    uint64_t shortp[1] = { 0 };
    CHECK(run("fill", fill, 1, 32, shortp, 4, NULL, 0, why, sizeof why) == EMU_PTX_UNSUPPORTED,
          "parameters past the buffer: %s", why);
    char *t = text_of("fill", fill);
    CHECK(emu_sass_prog_new(t, strlen(t), "other", 0x210, 0, NULL, 0, why, sizeof why) == NULL, "no such kernel");
    free(t);

    /* damaged texts: cut at every point and bytes changed; decode or refuse,
     * run or stop, never crash */
    const char *const *srcs[] = { fill, wide, reduce2, exchange, jump, dbl, conv, halves, hops, conv64, mnmx };
    const char *names[] = { "fill", "wide", "reduce2", "exchange", "jump", "dbl", "conv", "halves", "hops", "conv64",
                            "mnmx" };
    unsigned seed = 4321;
    int tried = 0, decoded = 0;
    for (int s = 0; s < (int)(sizeof srcs / sizeof *srcs); s++) {
        char *src = text_of(names[s], srcs[s]);
        size_t n = strlen(src);
        char *buf = malloc(n + 1);
        for (int trial = 0; trial < 1200; trial++) {
            memcpy(buf, src, n + 1);
            size_t len = n;
            if (trial < 300) {
                len = (size_t)trial * n / 300;
            } else {
                for (int k = 0; k < 1 + trial % 4; k++) {
                    seed = seed * 1103515245u + 12345u;
                    size_t at = (seed >> 8) % n;
                    seed = seed * 1103515245u + 12345u;
                    static const char alphabet[] = "RUPZT[]()`+-,;:.x0123456789 .L_\n\0cdesc!~|";
                    buf[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
                }
            }
            struct emu_sass_prog *p = emu_sass_prog_new(buf, len, names[s], 0x210, 64, table, sizeof table, why,
                                                        sizeof why);
            tried++;
            if (!p)
                continue;
            decoded++;
            memset(mem, 0, 16384);
            uint64_t pd[2] = { (uint64_t)(uintptr_t)mem, (uint64_t)(uintptr_t)(mem + 4096) };
            struct emu_ptx_launch l = { { 2, 1, 1 }, { 64, 1, 1 }, 0, pd, sizeof pd, 100000 };
            emu_sass_run(p, &l, &M, why, sizeof why);
            emu_sass_prog_free(p);
        }
        free(buf);
        free(src);
    }
    printf("sass_exec: damaged SASS: %d tried, %d decoded and run, none crashed\n", tried, decoded);
    CHECK(decoded > 0 && decoded < tried, "some damaged texts decode, some do not");
    if (failures)
        fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}

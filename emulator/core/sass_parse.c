/* Reading SASS, as nvdisasm prints it, into the instruction list the work
 * analysis reads (kernel_work.c): each SASS instruction becomes its PTX
 * equivalent, so that one analysis serves both.
 *
 * nvdisasm prints one instruction a line, "/\*0090*\/  @!P0 ISETP.GE.AND P0, PT,
 * R10, UR8, PT ;", labels as ".L_x_37:", branch targets as `(.L_x_37).
 * What is translated:
 *   integer arithmetic the trip counts and addresses come from: MOV,
 *   IMAD (MOV, SHL, IADD, WIDE: the low half; HI.U32 with no addend: the
 *   high half), IADD3, VIADD, VIMNMX/IMNMX
 *   (min and max), LEA, SHF,
 *   LOP3 (and, or, xor, not), SEL, ISETP (a 64-bit compare's .EX half
 *   takes its low half's result: values are read from their low 32 bits),
 *   FSETP (setp.f32, its immediate in PTX's 0f form),
 *   S2R/S2UR, LDC/ULDC, nvcc's unsigned division by a register (I2F.U32.RP,
 *   MUFU.RCP, F2I, IMAD.HI.U32: the quotient; a signed one's I2F.RP and
 *   IABS; on the uniform datapath R2UR and UIMAD.WIDE.U32's high half),
 *   (constant bank 0: block and grid sizes, the parameters), R2UR, and
 *   their uniform (U...) forms; the high halves (.X, .HI) are unknown;
 *   memory: LDG/STG/LD/ST (global, by width), LDS/STS, LDSM/STSM, LDGSTS
 *   (cp.async), ATOMG/ATOM/RED/ATOMS, TMA copies (size not known);
 *   arithmetic: FFMA/FADD/FMUL/FMNMX (and the packed f32x2 forms), HFMA2/
 *   HADD2/HMUL2/HMNMX2, DFMA/DADD/DMUL, MUFU, HMMA/IMMA/DMMA/QMMA by shape,
 *   HGMMA/QGMMA/IGMMA (warpgroup), UTC*MMA (tcgen05: shape not known);
 *   control: BRA (also .U, and BRA P, label: the predicate joins the
 *   guard; BRA.DIV, to the code for a diverged warp, never taken), EXIT,
 *   RET, BAR; CALL (call) and the surface stores SUST, SURED,
 *   SUATOM (sust, sured, suatom), for the stores the summary cannot see;
 *   a CALL to one of CUDA's helpers (__cuda_sm20_*: 64-bit division, float
 *   slow paths) is call.helper, its target kept.
 * Any other instruction writes an unknown value to its first operand.
 * Operands stay as SASS spells them; the analysis reads R/UR/P/UP
 * registers, RZ/URZ (0), PT/UPT (true), negations and c[0x0][offset].
 *
 * The text comes from a program (nvdisasm) run on code from outside: lines
 * are bounded, a line that is not an instruction is skipped.
 */
#define _GNU_SOURCE
#include "ptx_parse.h"
#include "maya/trace_format.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keep a made-up mnemonic for as long as the kernel. */
static struct emu_slice keep(struct emu_ptx_kernel *k, const char *text)
{
    size_t n = strlen(text);
    char **na = realloc(k->arena, (k->narena + 1) * sizeof *na);
    if (!na)
        return (struct emu_slice){ "unknown", 7 };
    k->arena = na;
    char *c = malloc(n + 1);
    if (!c)
        return (struct emu_slice){ "unknown", 7 };
    memcpy(c, text, n + 1);
    k->arena[k->narena++] = c;
    return (struct emu_slice){ c, (uint32_t)n };
}

static struct emu_slice lit(const char *s)
{
    return (struct emu_slice){ s, (uint32_t)strlen(s) };
}

/* Has dotted mnemonic m (as written, upper case) the part word? */
static int part(struct emu_slice m, const char *word)
{
    return emu_ptx_has_part(m, word);
}

/* The comparison of an FSETP (ordered or not: a parameter is never NaN
 * where the analysis reads it), or NULL. */
static const char *fsetp_cmp(struct emu_slice m)
{
    static const char *const c[][2] = {
        { "LT", "lt" }, { "LTU", "lt" }, { "LE", "le" }, { "LEU", "le" }, { "GT", "gt" }, { "GTU", "gt" },
        { "GE", "ge" }, { "GEU", "ge" }, { "EQ", "eq" }, { "EQU", "eq" }, { "NE", "ne" }, { "NEU", "ne" },
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        if (part(m, c[i][0]))
            return c[i][1];
    return NULL;
}

/* A float immediate as nvdisasm prints it (1, -0.5, 1.00000001e-10) in
 * PTX's form, 0f3F800000; anything else (a register, INF, NAN) as it is. */
static struct emu_slice float_literal(struct emu_ptx_kernel *k, struct emu_slice s)
{
    char text[64], *end;
    if (s.n == 0 || s.n >= sizeof text || !(isdigit((unsigned char)s.p[0]) || s.p[0] == '-' || s.p[0] == '+'))
        return s;
    memcpy(text, s.p, s.n);
    text[s.n] = 0;
    float f = strtof(text, &end);
    if (*end || !isfinite(f) || end == text)
        return s;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    snprintf(text, sizeof text, "0f%08X", bits);
    return keep(k, text);
}

/* Width in bytes a memory instruction names (.U8, .S16, .64, .128), else 4. */
static unsigned width(struct emu_slice m)
{
    if (part(m, "128"))
        return 16;
    if (part(m, "64"))
        return 8;
    if (part(m, "U16") || part(m, "S16"))
        return 2;
    if (part(m, "U8") || part(m, "S8"))
        return 1;
    return 4;
}

static const char *bits(unsigned bytes)
{
    switch (bytes) {
    case 16: return "b128";
    case 8: return "b64";
    case 2: return "b16";
    case 1: return "b8";
    default: return "b32";
    }
}

/* The input type of a tensor-core op from its mnemonic's parts. */
static const char *mma_type(struct emu_slice m)
{
    if (part(m, "BF16"))
        return "bf16";
    if (part(m, "TF32"))
        return "tf32";
    if (part(m, "E4M3") || part(m, "E5M2") || part(m, "E2M1"))
        return "e4m3";
    if (part(m, "S8") || part(m, "U8") || part(m, "S4") || part(m, "U4"))
        return "s8";
    if (part(m, "F64"))
        return "f64";
    return "f16";
}

/* HMMA.16816 -> m16n8k16; HGMMA.64x128x16 -> m64n128k16. 0 if none. */
static int mma_shape(struct emu_slice m, unsigned *M, unsigned *N, unsigned *K)
{
    for (uint32_t i = 0; i < m.n; i++) {
        if (m.p[i] != '.' || i + 1 >= m.n || !isdigit((unsigned char)m.p[i + 1]))
            continue;
        char d[24];
        uint32_t n = 0;
        for (uint32_t j = i + 1; j < m.n && m.p[j] != '.' && n + 1 < sizeof d; j++)
            d[n++] = m.p[j];
        d[n] = 0;
        if (strchr(d, 'x'))
            return sscanf(d, "%ux%ux%u", M, N, K) == 3;
        static const struct { const char *code; unsigned m, n, k; } shapes[] = {
            { "16816", 16, 8, 16 }, { "1688", 16, 8, 8 }, { "16832", 16, 8, 32 }, { "884", 8, 8, 4 },
            { "8816", 8, 8, 16 }, { "8832", 8, 8, 32 }, { "16864", 16, 8, 64 }, { "1684", 16, 8, 4 },
            { "16848", 16, 8, 48 },
        };
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            if (!strcmp(d, shapes[s].code)) {
                *M = shapes[s].m, *N = shapes[s].n, *K = shapes[s].k;
                return 1;
            }
    }
    return 0;
}

/* The label of a branch: `(.L_x_37) -> .L_x_37. */
static struct emu_slice target(const struct emu_ptx_inst *in)
{
    for (unsigned i = 0; i < in->nops; i++) {
        struct emu_slice o = in->ops[i];
        if (o.n >= 4 && o.p[0] == '`' && o.p[1] == '(' && o.p[o.n - 1] == ')')
            return (struct emu_slice){ o.p + 2, o.n - 3 };
    }
    return lit("?");
}

/* Drop ".reuse" from register operands. */
static struct emu_slice clean(struct emu_slice o)
{
    if (o.n > 6 && !memcmp(o.p + o.n - 6, ".reuse", 6))
        o.n -= 6;
    return o;
}

static int is_pred(struct emu_slice o)
{
    size_t i = o.p[0] == '!' ? 1 : 0;
    if (i < o.n && o.p[i] == 'U')
        i++;
    return i + 1 < o.n + 1 && i < o.n && o.p[i] == 'P' && (i + 1 == o.n || isdigit((unsigned char)o.p[i + 1]) ||
                                                           (i + 2 == o.n && o.p[i + 1] == 'T'));
}

/* The register after r in its file ("R9" after "R8", "UR13" after "UR12"):
 * the high half of a 64-bit pair whose low half r names; "" when r is not
 * a numbered register. */
static void next_reg(char *dst, struct emu_slice r)
{
    uint32_t j = r.n && r.p[0] == 'U' ? 1 : 0;
    dst[0] = 0;
    if (j + 1 >= r.n || r.p[j] != 'R' || r.n - j > 6)
        return;
    unsigned long v = 0;
    for (uint32_t i = j + 1; i < r.n; i++) {
        if (!isdigit((unsigned char)r.p[i]))
            return;
        v = v * 10 + (unsigned long)(r.p[i] - '0');
    }
    snprintf(dst, 16, "%sR%lu", j ? "U" : "", v + 1);
}

/* LDC.64 R4, c[0x0][off] where the parameter at off has 4 bytes or fewer
 * (nvcc loads two int parameters at once), or off is inside a struct
 * parameter: R4 and R5 each get their own, as "mov.pair.b32 R4,
 * c[0x0][off], R5, c[0x0][off + 4]". An 8-byte parameter (a pointer)
 * stays one 64-bit value. */
static void split_pair(struct emu_ptx_kernel *k, struct emu_ptx_inst *in)
{
    if (in->nops != 2 || !k->sass_params)
        return;
    struct emu_slice d = in->ops[0], c = in->ops[1];
    char buf[48];
    if (c.n >= sizeof buf || c.n < 9 || memcmp(c.p, "c[0x0][", 7) != 0 || c.p[c.n - 1] != ']')
        return;
    memcpy(buf, c.p + 7, c.n - 8);
    buf[c.n - 8] = 0;
    char *e;
    unsigned long off = strtoul(buf, &e, 16);
    if (*e || strncmp(buf, "0x", 2) != 0 || off < k->param_base)
        return;
    /* a parameter of 4 bytes or fewer there, or a field of a struct
     * parameter (PyTorch's configurations: mostly ints; a 64-bit field
     * keeps its low half, as 64-bit arithmetic does here) */
    int narrow = 0;
    for (uint32_t i = 0; i < k->sass_nparams; i++) {
        uint64_t at = k->sass_params[i].offset, b = k->sass_params[i].bytes;
        if (off - k->param_base >= at && off - k->param_base < at + b)
            narrow = b <= 4 || b > 8;
    }
    /* the next register's name */
    char hi[16], hic[32];
    next_reg(hi, d);
    if (!narrow || !hi[0])
        return;
    snprintf(hic, sizeof hic, "c[0x0][0x%lx]", off + 4);
    in->op = lit("mov.pair.b32");
    in->ops[2] = keep(k, hi);
    in->ops[3] = keep(k, hic);
    in->nops = 4;
}

/* Up to the first blank: nvdisasm follows a spill's operand with a comment,
 * "R18 (*\"SpillRefill\"*)". */
static struct emu_slice word(struct emu_slice o)
{
    for (uint32_t i = 0; i < o.n; i++)
        if (o.p[i] == ' ' || o.p[i] == '\t')
            return (struct emu_slice){ o.p, i };
    return o;
}

/* A stack slot's name, "%spill<offset>", for an address [R1] or [R1+0x20]
 * (R1 is the stack pointer); 0 for any other address. */
static int slot_name(struct emu_slice a, unsigned add, char *out, size_t size)
{
    char buf[32];
    a = word(a);
    if (a.n < 4 || a.n >= sizeof buf || memcmp(a.p, "[R1", 3) != 0 || a.p[a.n - 1] != ']')
        return 0;
    memcpy(buf, a.p + 3, a.n - 4);
    buf[a.n - 4] = 0;
    unsigned long off = 0;
    if (buf[0]) {
        char *end;
        if (buf[0] != '+' || strncmp(buf + 1, "0x", 2) != 0)
            return 0;
        off = strtoul(buf + 1, &end, 16);
        if (*end)
            return 0;
    }
    snprintf(out, size, "%%spill%lu", off + add);
    return 1;
}

/* Spills: a kernel short of registers (flash attention's 255) keeps values
 * on the stack, its loop counters too, and reads them back. A 4-byte STL
 * [R1+off], R becomes "mov.b32 %spill<off>, R" and LDL R, [R1+off] "mov.b32
 * R, %spill<off>", so that the value, a loop counter's step included, goes
 * through; a wider one moves each of its registers (STL.64 [R1+off], R2:
 * R2 and R3). Local memory traffic is not priced either way.
 * 1 when the instruction was translated so. */
static int spill(struct emu_ptx_kernel *k, struct emu_ptx_inst *in, int store)
{
    char a[40], b[40], list[200];
    unsigned bytes = width(in->op);
    if (in->nops != 2 || !slot_name(in->ops[store ? 0 : 1], 0, a, sizeof a))
        return 0;
    if (bytes == 4) {
        in->op = lit("mov.b32");
        if (store) {
            in->ops[1] = word(in->ops[1]);
            in->ops[0] = keep(k, a);
        } else {
            in->ops[1] = keep(k, a);
        }
        return 1;
    }
    /* STL.64 [R1+off], R2: slots off and off + 4 from R2 and R3 (LDL.64 the
     * other way), as "mov.vec.b32 {%spill<off>, %spill<off+4>}, {R2, R3}" */
    struct emu_slice r = word(in->ops[store ? 1 : 0]);
    char regs[160];
    unsigned long first;
    if (bytes != 8 && bytes != 16)
        return 0;
    if (r.n < 2 || r.n > 8 || r.p[0] != 'R' || !isdigit((unsigned char)r.p[1]))
        return 0;
    first = strtoul(r.p + 1, NULL, 10);
    snprintf(list, sizeof list, "{%s", a);
    snprintf(regs, sizeof regs, "{R%lu", first);
    for (unsigned off = 4; off < bytes; off += 4) {
        slot_name(in->ops[store ? 0 : 1], off, b, sizeof b);
        snprintf(list + strlen(list), sizeof list - strlen(list), ", %s", b);
        snprintf(regs + strlen(regs), sizeof regs - strlen(regs), ", R%lu", first + off / 4);
    }
    strcat(list, "}");
    strcat(regs, "}");
    in->op = lit("mov.vec.b32");
    in->ops[0] = keep(k, store ? list : regs);
    in->ops[1] = keep(k, store ? regs : list);
    in->nops = 2;
    return 1;
}

static int same(struct emu_slice s, const char *name)
{
    return name[0] && emu_slice_is(s, name);
}

static void name_of(char *dst, struct emu_slice s)
{
    if (s.n >= 16) {
        dst[0] = 0;
        return;
    }
    memcpy(dst, s.p, s.n);
    dst[s.n] = 0;
}

/* nvcc's unsigned division by a register d (no constant to multiply by):
 *   I2F.U32.RP f, d; MUFU.RCP r, f; IADD3 a, r, 0xffffffe, RZ (or VIADD);
 *   (a signed division divides the magnitudes, IABS d, with I2F.RP);
 *   F2I.FTZ.U32.TRUNC.NTZ v, a            (v: about 2^32 / d)
 *   IMAD e, -d, v, RZ (or IMAD.MOV e, -v; IMAD e, e, d, RZ);
 *   IMAD.HI.U32 v2, v, e, v_pair           (refined)
 *   IMAD.HI.U32 q, v2, n, RZ              (q = n / d, then corrected by one)
 * Followed instruction by instruction: at the last step, the dividend n (its
 * operand) is returned, and the caller writes "div.u32 q, n, d" in place of
 * the high multiply; otherwise an empty slice. A write to d ends it. */
static struct emu_slice udiv_track(struct emu_ptx_kernel *k, const struct emu_ptx_inst *in)
{
    struct emu_slice m = in->op, none = { in->op.p, 0 };
    /* the uniform datapath's forms (UIMAD, UIADD3) read as the others */
    if (m.n > 1 && m.p[0] == 'U')
        m = (struct emu_slice){ m.p + 1, m.n - 1 };
    const struct emu_slice *o = in->ops;
    unsigned n = in->nops;
    struct emu_slice found = none;
    int err_set = 0;
    if (n == 2 && !in->guard.n && (emu_slice_is(m, "I2F.U32.RP") || emu_slice_is(m, "I2F.RP"))) {
        memset(&k->udiv, 0, sizeof k->udiv);
        name_of(k->udiv.f, o[0]);
        name_of(k->udiv.x, o[1]);
        return none;
    }
    if (!k->udiv.x[0])
        return none;
    k->udiv.q[0] = 0;
    if (n == 2 && emu_slice_is(m, "MUFU.RCP") && same(o[1], k->udiv.f))
        name_of(k->udiv.rcp, o[0]);
    else if (n == 2 && (emu_slice_is(m, "R2UR") || emu_slice_is(m, "MOV")) && same(o[1], k->udiv.recip))
        name_of(k->udiv.recip, o[0]); /* the reciprocal moved to a uniform register */
    else if (((n == 4 && emu_slice_is(m, "IADD3")) || (n == 3 && emu_slice_is(m, "VIADD"))) && same(o[1], k->udiv.rcp) &&
             emu_slice_is(o[2], "0xffffffe"))
        name_of(k->udiv.add, o[0]);
    else if (n == 2 && emu_slice_is(emu_ptx_opcode(m), "F2I") && part(m, "U32") && part(m, "TRUNC") && same(o[1], k->udiv.add))
        name_of(k->udiv.recip, o[0]);
    else if (n == 4 && emu_slice_is(m, "IMAD") && (same(o[1], k->udiv.recip) || same(o[2], k->udiv.recip)))
        name_of(k->udiv.err, o[0]), err_set = 1;
    else if (n == 4 && emu_slice_is(m, "IMAD.MOV") && o[3].n > 1 && o[3].p[0] == '-' &&
             same((struct emu_slice){ o[3].p + 1, o[3].n - 1 }, k->udiv.recip))
        name_of(k->udiv.err, o[0]), err_set = 1; /* -v, then IMAD e, e, d, RZ (sm_80) */
    else if (n == 4 && emu_slice_is(m, "IMAD") && (same(o[1], k->udiv.err) || same(o[2], k->udiv.err)))
        name_of(k->udiv.err, o[0]), err_set = 1;
    else if (n == 4 && emu_slice_is(m, "IMAD.HI.U32") && (same(o[1], k->udiv.recip) || same(o[2], k->udiv.recip))) {
        struct emu_slice other = same(o[1], k->udiv.recip) ? o[2] : o[1];
        if (same(other, k->udiv.err)) {
            name_of(k->udiv.recip, o[0]); /* the refined reciprocal */
            k->udiv.err[0] = 0;
            err_set = 1;
        }
        else if (emu_slice_is(o[3], "RZ") && !in->guard.n)
            found = other;
    } else if (n == 4 && emu_slice_is(m, "IMAD.WIDE.U32") && (same(o[1], k->udiv.recip) || same(o[2], k->udiv.recip))) {
        /* the same high multiplies as the high half of a 64-bit product
         * (the uniform datapath's form): IMAD.WIDE.U32 d, v, e, d (d's pair
         * holding 0 and v: v + hi(v e)), then IMAD.WIDE.U32 d, v2, n, RZ;
         * each result in the register after d */
        struct emu_slice other = same(o[1], k->udiv.recip) ? o[2] : o[1];
        char hi[16];
        next_reg(hi, o[0]);
        if (hi[0] && same(other, k->udiv.err)) {
            memcpy(k->udiv.recip, hi, sizeof hi);
            k->udiv.err[0] = 0;
            err_set = 1;
        } else if (hi[0] && (emu_slice_is(o[3], "RZ") || emu_slice_is(o[3], "URZ")) && !in->guard.n) {
            memcpy(k->udiv.q, hi, sizeof hi);
            found = other;
        }
    }
    if (n >= 1 && same(o[0], k->udiv.x) && !found.n)
        memset(&k->udiv, 0, sizeof k->udiv); /* the divisor changed */
    else if (n >= 1 && same(o[0], k->udiv.err) && !err_set)
        k->udiv.err[0] = 0; /* its register reused (for the dividend) */
    return found;
}

/* Translate instruction s (mnemonic and operands as SASS has them) into
 * its PTX equivalent, in place. */
static void translate(struct emu_ptx_kernel *k, struct emu_ptx_inst *in)
{
    struct emu_slice m = in->op, opc = emu_ptx_opcode(m);
    for (unsigned i = 0; i < in->nops; i++)
        in->ops[i] = clean(in->ops[i]);
    char buf[96];
    unsigned M, N, K;
    struct emu_slice o = opc;
    if (o.n > 1 && o.p[0] == 'U' && !emu_slice_is(o, "UTCHMMA") && !emu_slice_is(o, "UTCQMMA") &&
        !emu_slice_is(o, "UTCIMMA") && !emu_slice_is(o, "UTCOMMA") && strncmp(o.p, "UTMA", 4) != 0 &&
        !emu_slice_is(o, "UBLKCP"))
        o = (struct emu_slice){ o.p + 1, o.n - 1 }; /* UIADD3 reads as IADD3 */
    struct emu_slice *ops = in->ops;
    unsigned n = in->nops;
#define IS(w) emu_slice_is(o, w)
#define SET(mn) (in->op = lit(mn))
    if (IS("MOV") || IS("S2R") || IS("S2UR") || IS("R2UR") || IS("CS2R")) {
        SET("mov.b32");
        in->nops = n >= 2 ? 2 : n;
        if (IS("CS2R") && n >= 2 && !emu_slice_is(ops[1], "SRZ"))
            SET("unknown");
    } else if (IS("LDC")) {
        /* LDC.U8 of a bool field reads one byte: the three after it are a
         * struct's padding, whatever the host left there */
        unsigned w = width(m);
        int sgn = part(m, "S8") || part(m, "S16");
        SET(w == 8 ? "mov.b64" : w == 2 ? (sgn ? "mov.s16" : "mov.u16") : w == 1 ? (sgn ? "mov.s8" : "mov.u8") : "mov.b32");
        if (w == 8)
            split_pair(k, in);
    } else if (IS("IMAD")) {
        if (part(m, "HI") && part(m, "U32") && !part(m, "X") && n == 4 && emu_slice_is(ops[3], "RZ")) {
            /* the high half of a product: division by a constant (n * magic >> 32) */
            SET("mul.hi.u32");
            in->nops = 3;
        } else if (part(m, "X") || part(m, "HI")) {
            SET("unknown");
        } else if (part(m, "MOV") && n == 4) {
            SET("mov.b32");
            ops[1] = ops[3];
            in->nops = 2;
        } else {
            SET("mad.lo.s32");
        }
    } else if (IS("IADD3")) {
        if (part(m, "X") || n < 4) {
            SET("unknown");
        } else { /* carries out (P0, P1) come before the three sources */
            SET("add3.s32");
            ops[1] = ops[n - 3], ops[2] = ops[n - 2], ops[3] = ops[n - 1];
            in->nops = 4;
        }
    } else if (IS("VIADD") || IS("IADD")) {
        SET("add.s32");
    } else if (IS("IABS")) {
        SET("abs.s32");
    } else if (IS("VIMNMX") || IS("IMNMX")) {
        /* VIMNMX d, a, b, PT: the smaller; !PT: the larger (a predicate
         * register chooses per thread: unknown); .RELU then clamps at 0 */
        if (n == 4 && (emu_slice_is(ops[3], "PT") || emu_slice_is(ops[3], "!PT"))) {
            int relu = part(m, "RELU");
            SET(emu_slice_is(ops[3], "PT") ? (part(m, "U32") ? "min.u32" : relu ? "minrelu.s32" : "min.s32")
                                           : (part(m, "U32") ? "max.u32" : relu ? "maxrelu.s32" : "max.s32"));
            in->nops = 3;
        } else {
            SET("unknown");
        }
    } else if (IS("VIADDMNMX")) {
        /* VIADDMNMX d, a, b, c, PT: min(a + b, c); !PT: max */
        if (n == 5 && (emu_slice_is(ops[4], "PT") || emu_slice_is(ops[4], "!PT")))
            SET(emu_slice_is(ops[4], "PT") ? (part(m, "U32") ? "addmin.u32" : "addmin.s32")
                                           : (part(m, "U32") ? "addmax.u32" : "addmax.s32"));
        else
            SET("unknown");
        in->nops = n == 5 ? 4 : n;
    } else if (IS("LEA")) {
        if (part(m, "HI") && !part(m, "X") && n == 5 && (emu_slice_is(ops[3], "RZ") || emu_slice_is(ops[3], "URZ"))) {
            /* LEA.HI d, a, b, RZ, s: the high word of a << s, plus b: (a >> (32 - s)) + b */
            SET("leahi.s32");
            ops[3] = ops[4];
            in->nops = 4;
        } else if (part(m, "HI") && part(m, "SX32") && !part(m, "X") && n == 4) {
            /* LEA.HI.SX32 d, a, b, s: a sign-extended, shifted left by s,
             * its high word plus b: (a >> (32 - s)) + b (a signed division
             * by 2^(32 - s) once a's rounding bias is added) */
            SET("leahi.s32");
        } else if (part(m, "HI") || n < 4) {
            SET("unknown");
        } else { /* d = (a << s) + b, a carry out may follow d */
            SET("lea.s32");
            ops[1] = ops[n - 3], ops[2] = ops[n - 2], ops[3] = ops[n - 1];
            in->nops = 4;
        }
    } else if (IS("SHF")) {
        /* SHF.L.U32 d, a, s, RZ: a << s; SHF.R.U32.HI d, RZ, s, a: a >> s;
         * SHF.R.U64 d, lo, s, hi: lo >> s (low half) */
        if (n == 4 && part(m, "L") && !part(m, "HI")) {
            SET("shl.b32");
            in->nops = 3;
        } else if (n == 4 && part(m, "R") && part(m, "HI")) {
            SET("shr.b32");
            ops[1] = ops[3];
            in->nops = 3;
        } else if (n == 4 && part(m, "R")) {
            SET("shr.b32");
            in->nops = 3;
        } else {
            SET("unknown");
        }
    } else if (IS("SHL") || IS("SHR")) {
        SET(IS("SHL") ? "shl.b32" : "shr.b32");
    } else if (IS("LOP3") && n == 7 && is_pred(ops[0]) && ops[0].p[0] != '!' &&
               (emu_slice_is(ops[1], "RZ") || emu_slice_is(ops[1], "URZ"))) {
        /* LOP3.LUT P0, RZ, a, b, c, lut, Pq: P0 = (lut(a, b, c) != 0) or Pq */
        SET("lop3.pred");
        for (unsigned i = 1; i < 6; i++)
            ops[i] = ops[i + 1];
        in->nops = 6;
    } else if (IS("LOP3")) {
        /* LOP3.LUT d, a, b, c, lut, !PT */
        unsigned long lut = n >= 5 ? strtoul(ops[4].p, NULL, 16) : 0;
        if (lut == 0xc0)
            SET("and.b32");
        else if (lut == 0xfc)
            SET("or.b32");
        else if (lut == 0x3c)
            SET("xor.b32");
        else if (lut == 0x33 || lut == 0x0f) {
            SET("not.b32");
            if (lut == 0x0f)
                ops[2] = ops[1];
            ops[1] = ops[2];
        } else if (n >= 5) {
            SET("lop3.b32"); /* three inputs: d, a, b, c, lut */
        } else {
            SET("unknown");
        }
        if (in->op.p[0] != 'u')
            in->nops = in->op.p[0] == 'n' ? 2 : in->op.p[0] == 'l' ? 5 : 3;
    } else if (IS("PRMT") && n == 4) {
        /* PRMT d, a, selector, b: bytes of a and b (kernel_work.c reads
         * the selectors that move or sign-extend halves and bytes) */
        struct emu_slice sel = ops[2];
        SET("prmt.b32");
        ops[2] = ops[3];
        ops[3] = sel;
    } else if (IS("SEL")) {
        SET("selp.b32");
    } else if (IS("ISETP")) {
        /* ISETP.GE.U32.AND P0, PT, a, b, Pc: P0 = (a >= b) and Pc. The .EX
         * form, ISETP.GE.AND.EX P0, PT, ahi, bhi, Pc, Plow, finishes a 64-bit
         * compare whose low half gave Plow: with values that fit in 32 bits,
         * P0 = Plow and Pc. */
        if (part(m, "EX") && n >= 6) {
            SET(part(m, "OR") ? "or.pred" : "and.pred");
            ops[1] = ops[5], ops[2] = ops[4];
            in->nops = 3;
        } else if (n < 5) {
            SET("unknown");
        } else {
            const char *c = part(m, "LT") ? "lt" : part(m, "LE") ? "le" : part(m, "GT") ? "gt"
                          : part(m, "GE") ? "ge" : part(m, "EQ") ? "eq" : part(m, "NE") ? "ne" : NULL;
            snprintf(buf, sizeof buf, "setp.%s.s32.%s", c ? c : "x", part(m, "OR") ? "or" : "and");
            in->op = c ? keep(k, buf) : lit("setp.x");
            ops[1] = ops[2], ops[2] = ops[3], ops[3] = ops[4];
            in->nops = 4;
        }
    } else if (IS("PLOP3") && n == 7 && strtoul(ops[5].p, NULL, 16) == 0x80 && emu_slice_is(ops[1], "PT") &&
               emu_slice_is(ops[2], "PT")) {
        /* PLOP3.LUT P0, PT, PT, a, b, 0x80, 0x0: P0 = a and b (true and a and
         * b: nvcc's copy of a uniform predicate, PT, PT, UP0) */
        SET("and.pred");
        ops[1] = ops[3], ops[2] = ops[4];
        in->nops = 3;
    } else if (IS("FSETP") && n == 5 && fsetp_cmp(m)) {
        /* FSETP.NEU.AND P0, PT, a, b, Pc: P0 = (a != b) and Pc, on floats.
         * Mostly on data; where a and b are a parameter and a literal
         * (PyTorch's scalar == 1 test) the launch decides it
         * (kernel_value.c). The literal, printed as a decimal float, is
         * kept as PTX writes one (0f3F800000) */
        snprintf(buf, sizeof buf, "setp.%s.f32.%s", fsetp_cmp(m), part(m, "OR") ? "or" : "and");
        in->op = keep(k, buf);
        ops[1] = ops[2], ops[2] = float_literal(k, ops[3]), ops[3] = ops[4];
        in->nops = 4;
    } else if (IS("FSETP") || IS("DSETP") || IS("HSETP2") || IS("PLOP3") || IS("VOTE") || IS("R2P")) {
        SET("unknown"); /* on data */
    } else if ((IS("LDL") || IS("STL")) && spill(k, in, IS("STL"))) {
        /* a register spilled to the stack and read back: a register of its own */
    } else if (IS("LDG") || IS("LD") || IS("LDS") || IS("LDL")) {
        snprintf(buf, sizeof buf, "ld%s.%s", IS("LDS") ? ".shared" : IS("LDL") ? ".local" : IS("LDG") ? ".global" : "",
                 bits(width(m)));
        in->op = keep(k, buf);
    } else if (IS("STG") || IS("ST") || IS("STS") || IS("STL")) {
        snprintf(buf, sizeof buf, "st%s.%s", IS("STS") ? ".shared" : IS("STL") ? ".local" : IS("STG") ? ".global" : "",
                 bits(width(m)));
        in->op = keep(k, buf);
    } else if (IS("LDSM") || IS("STSM")) {
        /* LDSM.16.M88.4: four 8x8 matrices of b16 */
        int x = m.n >= 2 && m.p[m.n - 2] == '.' ? m.p[m.n - 1] - '0' : 1;
        snprintf(buf, sizeof buf, "%s.x%d.shared.b16", IS("LDSM") ? "ldmatrix" : "stmatrix", x == 2 || x == 4 ? x : 1);
        in->op = keep(k, buf);
    } else if (IS("LDGSTS")) {
        SET("cp.async.ca.shared.global");
        unsigned w = width(m);
        if (n >= 2)
            ops[2] = lit(w == 16 ? "16" : w == 8 ? "8" : "4");
        in->nops = n >= 2 ? 3 : n;
    } else if (IS("ATOMG") || IS("ATOM") || IS("ATOMS") || IS("RED") || IS("REDG")) {
        snprintf(buf, sizeof buf, "%s.%s.%s", IS("RED") || IS("REDG") ? "red" : "atom",
                 IS("ATOMS") ? "shared" : "global", bits(width(m)));
        in->op = keep(k, buf);
    } else if (!strncmp(opc.p, "UTMA", 4) || emu_slice_is(opc, "UBLKCP")) {
        SET("cp.async.bulk.tensor");
    } else if (IS("FFMA") || IS("FFMA2")) {
        SET(IS("FFMA2") ? "fma.rn.f32x2" : "fma.rn.f32");
    } else if (IS("FADD") || IS("FMUL") || IS("FMNMX") || IS("FADD2") || IS("FMUL2") || IS("FSWZADD")) {
        int two = o.p[o.n - 1] == '2';
        snprintf(buf, sizeof buf, "%s.%s", IS("FMUL") || IS("FMUL2") ? "mul" : IS("FMNMX") ? "max" : "add",
                 two ? "f32x2" : "f32");
        in->op = keep(k, buf);
    } else if (IS("HFMA2")) {
        SET("fma.rn.f16x2");
    } else if (IS("HADD2") || IS("HMUL2") || IS("HMNMX2")) {
        SET("add.f16x2");
    } else if (IS("DFMA")) {
        SET("fma.rn.f64");
    } else if (IS("DADD") || IS("DMUL") || IS("DMNMX")) {
        SET("add.f64");
    } else if (IS("MUFU")) {
        SET(part(m, "RCP64H") || part(m, "RSQ64H") ? "ex2.approx.f64" : "ex2.approx.f32");
    } else if ((IS("HMMA") || IS("IMMA") || IS("DMMA") || IS("QMMA")) && mma_shape(m, &M, &N, &K)) {
        snprintf(buf, sizeof buf, "mma.sync.aligned.m%un%uk%u.%s", M, N, K, IS("DMMA") ? "f64" : mma_type(m));
        in->op = keep(k, buf);
    } else if ((IS("HGMMA") || IS("QGMMA") || IS("IGMMA") || IS("BGMMA")) && mma_shape(m, &M, &N, &K)) {
        snprintf(buf, sizeof buf, "wgmma.mma_async.m%un%uk%u.%s", M, N, K, IS("IGMMA") ? "s8" : mma_type(m));
        in->op = keep(k, buf);
    } else if (emu_slice_is(opc, "UTCHMMA") || emu_slice_is(opc, "UTCQMMA") || emu_slice_is(opc, "UTCIMMA") ||
               emu_slice_is(opc, "UTCOMMA")) {
        SET("tcgen05.mma");
    } else if (IS("BRA")) {
        /* BRA [P1,] `(label): a predicate operand joins the guard. BRA.DIV
         * leaves for nvcc's out-of-line copy of a warp-synchronous sequence
         * when the warp has diverged: the analysis takes its warps as
         * converged, so that branch is never taken (!PT) */
        struct emu_slice also = part(m, "DIV") ? lit("!PT") : n >= 2 && is_pred(ops[0]) ? ops[0] : lit("PT");
        SET("bra");
        ops[0] = target(in);
        ops[1] = also;
        in->nops = 2;
    } else if (IS("BRX") || IS("JMX") || IS("JMP")) {
        SET("bra");
        ops[0] = lit("?");
        in->nops = 1;
    } else if (IS("EXIT") || IS("RET")) {
        SET("exit");
        in->nops = 0;
    } else if (IS("CALL") && part(m, "NOINC") && target(in).n > 3 && !memcmp(target(in).p, ".L_", 3)) {
        /* CALL.REL.NOINC to a label of the kernel itself pushes no return
         * address: the compiler's way out of a divergent region (a loop's
         * exit, taken by the whole warp at once), a branch */
        SET("bra");
        ops[0] = target(in);
        ops[1] = lit("PT");
        in->nops = 2;
    } else if (IS("CALL") && target(in).n > 12 && memmem(target(in).p, target(in).n, "__cuda_sm20_", 12)) {
        /* CUDA's own helpers: 64-bit division and remainder, and the slow
         * paths of float reciprocal, division and square root, each behind
         * a test that sends the common case around it (kernel_work.c) */
        SET("call.helper");
        ops[0] = target(in);
        in->nops = 1;
    } else if (IS("CALL") || IS("SUST") || IS("SURED") || IS("SUATOM")) {
        /* a device function's or a surface's stores, which the summary
         * does not attribute (it flags them) */
        SET(IS("CALL") ? "call" : IS("SUST") ? "sust" : IS("SURED") ? "sured" : "suatom");
        in->nops = 0;
    } else if (IS("BAR")) {
        SET("bar.sync");
        in->nops = 0;
    } else if (IS("SHFL")) {
        /* SHFL.BFLY PT, R5, R0, 0x1, 0x1f: the value is the second operand */
        SET("unknown");
        if (n >= 2)
            ops[0] = ops[1];
        in->nops = 1;
    } else if (n >= 1 && !is_pred(ops[0]) && (ops[0].p[0] == 'R' || (ops[0].p[0] == 'U' && ops[0].n > 1 && ops[0].p[1] == 'R'))) {
        SET("unknown"); /* writes its first operand: a value not read */
    } else if (n >= 1 && is_pred(ops[0]) && ops[0].p[0] != '!') {
        SET("unknown");
    } else {
        SET("nop");
        in->nops = 0;
    }
#undef IS
#undef SET
}

/* One line: [/\*addr*\/] [@[!]P] MNEMONIC operands ; */
static int line(struct emu_ptx_kernel *k, const char *s, const char *e)
{
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    if (e - s >= 2 && s[0] == '/' && s[1] == '*') {
        const char *c = memmem(s, (size_t)(e - s), "*/", 2);
        if (!c)
            return 0;
        s = c + 2;
    } else {
        /* a label: ".L_x_37:" */
        const char *c = s;
        while (c < e && !isspace((unsigned char)*c))
            c++;
        if (c > s + 1 && c[-1] == ':' && s[0] == '.' && s[1] == 'L')
            return emu_ptx_add_label(k, s, (size_t)(c - s - 1));
        return 0;
    }
    /* the instruction ends at ';' (an encoding comment may follow) */
    const char *semi = memchr(s, ';', (size_t)(e - s));
    if (!semi)
        return 0;
    e = semi;
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    struct emu_ptx_inst in;
    memset(&in, 0, sizeof in);
    if (s < e && *s == '@') {
        s++;
        if (s < e && *s == '!') {
            in.guard_neg = 1;
            s++;
        }
        const char *g = s;
        while (s < e && !isspace((unsigned char)*s))
            s++;
        in.guard = (struct emu_slice){ g, (uint32_t)(s - g) };
        while (s < e && isspace((unsigned char)*s))
            s++;
    }
    const char *mn = s;
    while (s < e && !isspace((unsigned char)*s))
        s++;
    if (s == mn || !isupper((unsigned char)*mn))
        return 0;
    in.op = (struct emu_slice){ mn, (uint32_t)(s - mn) };
    int depth = 0;
    const char *start = s;
    for (const char *p = s; p <= e; p++) {
        if (p < e && (*p == '[' || *p == '('))
            depth++;
        else if (p < e && (*p == ']' || *p == ')'))
            depth--;
        if (p == e || (*p == ',' && depth <= 0)) {
            const char *a = start, *b = p;
            while (a < b && isspace((unsigned char)*a))
                a++;
            while (b > a && isspace((unsigned char)b[-1]))
                b--;
            if (b > a && in.nops < EMU_PTX_MAX_OPERANDS)
                in.ops[in.nops++] = (struct emu_slice){ a, (uint32_t)(b - a) };
            start = p + 1;
        }
    }
    if (!k->sass_raw) {
        struct emu_slice dividend = udiv_track(k, &in);
        translate(k, &in);
        if (dividend.n) { /* the quotient: "div.u32 q, n, d" */
            in.op = lit("div.u32");
            if (k->udiv.q[0]) /* in the high half of a wide product's pair */
                in.ops[0] = keep(k, k->udiv.q);
            in.ops[1] = dividend;
            in.ops[2] = keep(k, k->udiv.x);
            in.nops = 3;
        }
    }
    return emu_ptx_add_inst(k, &in);
}

static int parse(const char *text, size_t bytes, const char *entry, uint32_t param_base, uint32_t param_bytes,
                 const struct maya_kparam *params, unsigned nparams, int raw, struct emu_ptx_kernel *out)
{
    memset(out, 0, sizeof *out);
    if (!text || !entry || !*entry)
        return -1;
    out->sass_raw = raw;
    out->sass = 1;
    out->param_base = param_base;
    out->param_bytes = param_bytes;
    out->sass_params = params;
    out->sass_nparams = params ? nparams : 0;
    /* the function's section starts at ".text.<entry>:" */
    char head[4200];
    if (snprintf(head, sizeof head, ".text.%s:", entry) >= (int)sizeof head)
        return -1;
    size_t hl = strlen(head);
    const char *p = text, *end = text + bytes, *at = NULL;
    while (p < end && !at) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *s = p;
        while (s < le && (*s == ' ' || *s == '\t'))
            s++;
        if ((size_t)(le - s) >= hl && !memcmp(s, head, hl))
            at = le;
        p = nl ? nl + 1 : end;
    }
    if (!at)
        return -1;
    /* its instructions, to the next section */
    for (p = at; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *s = p;
        while (s < le && (*s == ' ' || *s == '\t'))
            s++;
        if ((le - s >= 5 && !memcmp(s, "//---", 5)) || (le - s >= 8 && !memcmp(s, ".section", 8)))
            break;
        if (line(out, s, le) < 0) {
            emu_ptx_kernel_free(out);
            return -1;
        }
        p = nl ? nl + 1 : end;
    }
    out->sass_params = NULL; /* the caller's, read only while parsing */
    out->sass_nparams = 0;
    return 0;
}

int emu_sass_parse(const char *text, size_t bytes, const char *entry, uint32_t param_base, uint32_t param_bytes,
                   const struct maya_kparam *params, unsigned nparams, struct emu_ptx_kernel *out)
{
    return parse(text, bytes, entry, param_base, param_bytes, params, nparams, 0, out);
}

int emu_sass_parse_raw(const char *text, size_t bytes, const char *entry, struct emu_ptx_kernel *out)
{
    return parse(text, bytes, entry, 0, 0, NULL, 0, 1, out);
}

/* Running a small kernel on the CPU from its SASS, as nvdisasm prints it
 * (PyTorch's CUDA wheels ship SASS only, no PTX).
 *
 * The text is read by sass_parse.c's tokenizer (emu_sass_parse_raw: each
 * line's guard, mnemonic and operands as printed) and decoded once here into
 * a compact program: every operand resolved to a register (R0-R254, RZ;
 * uniform UR0-UR62, URZ; predicates P0-P6, PT, UP0-UP6, UPT), an immediate,
 * a constant-bank word, an address, a special register or a branch target.
 * Each instruction is executed with its exact SASS semantics (32-bit
 * registers, 64-bit values in register pairs, carries in predicates); an
 * opcode or modifier the decoder does not know becomes an instruction that
 * stops the run when a thread reaches it, so a kernel whose uncovered code is
 * never taken (an assertion's call, a multi-block path) still runs, and one
 * that takes it is never given a guessed value. What is covered is listed in
 * docs/kernel-exec.md.
 *
 * Threads run as in ptx_exec.c: block by block, each thread until a barrier
 * (BAR.SYNC), a warp operation (SHFL, VOTE, VOTEU, WARPSYNC) or its end; a
 * warp operation is done for all live lanes at once, a barrier released when
 * every live thread has reached it. Uniform registers are kept per thread
 * (each lane computes the same value from uniform inputs).
 *
 * Constant bank 0 holds, as on sm_90 and sm_100: the block size at 0x0, the
 * grid size at 0xc, the stack's start at 0x28, the memory descriptor at
 * 0x208 (read, not used), and the parameters from param_base; a read of any
 * other constant stops the run as not covered.
 *
 * Shared memory is one buffer per block: the 1 KiB sm_90 reserves, the
 * static and the dynamic bytes; shared addresses are read modulo 2^24 (the
 * high bits name the CTA in its cluster, always 0 here).
 *
 * Costs: 1.3 KiB of registers per thread (256 + 64 words, 16 predicates),
 * one 40-byte decoded instruction per SASS line; a step is one switch.
 */
#define _GNU_SOURCE
#include "sass_exec.h"
#include "exec_common.h"
#include "ptx_parse.h"
#include "maya/common.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INSTS 65536u         /* kernels longer than this are not run */
#define MAX_SMEM ((228u << 10) + 1024u)
#define RESERVED_SMEM 1024u      /* sm_90's reserved shared bytes before the kernel's */
#define NR 256                   /* R0..R254, RZ = 255 */
#define NUR 64                   /* UR0..UR62, URZ = 63 */
#define RZ 255
#define URZ 63
#define PT 7                     /* P7 / UP7 read true */
#define STACK_TOP 0x10000u       /* c[0x0][0x28]: the stack pointer's start */

enum okind { O_NONE, O_R, O_UR, O_P, O_UP, O_IMM, O_CONST, O_MEM, O_SREG, O_LABEL, O_SRZ, O_FIMM, O_PR };

/* Special registers. */
enum sreg { S_TID_X, S_TID_Y, S_TID_Z, S_CTAID_X, S_CTAID_Y, S_CTAID_Z, S_LANEID, S_LTMASK, S_LEMASK, S_GTMASK,
            S_GEMASK, S_EQMASK, S_ZERO, S_NTID_X, S_NTID_Y, S_NTID_Z, S_NCTAID_X, S_NCTAID_Y, S_NCTAID_Z, S_WARPID };

struct sop {
    uint8_t kind;
    uint8_t neg, bnot, absv;     /* -x, ~x (or !P), |x| */
    uint8_t reg;                 /* R/UR/P/UP index, special register, constant bank */
    uint8_t wide;                /* R2.64 in an address */
    uint8_t ureg;                /* address: + UR (URZ if none); constant: index register kind */
    uint8_t ireg;                /* constant: R index register (RZ if none) */
    uint8_t scale;               /* address: the base register times 1 (0), 4, 8 or 16 (R6.X4) */
    int32_t imm;                 /* address/constant offset */
    uint64_t val;                /* immediate (integer bits, or a float's double bits for O_FIMM) */
};

enum op {
    X_BAD, X_NOP, X_MOV, X_IMAD, X_IADD3, X_VIADD, X_LEA, X_SHF, X_LOP3, X_PLOP3, X_SEL, X_ISETP, X_PRMT, X_POPC,
    X_FLO, X_S2R, X_CS2R, X_LDC, X_HFMA2, X_LD, X_ST, X_ATOM, X_RED, X_BAR, X_SHFL, X_VOTE, X_VOTEU, X_WARPSYNC,
    X_BRA, X_BRX, X_EXIT, X_FADD, X_FMUL, X_FFMA, X_FMNMX, X_FSETP, X_FSEL, X_P2R, X_R2P, X_IMNMX, X_BREV,
};

/* modifier bits */
enum {
    M_X = 1 << 0, M_HI = 1 << 1, M_WIDE = 1 << 2, M_U32 = 1 << 3, M_EX = 1 << 4, M_L = 1 << 5, M_R = 1 << 6,
    M_S = 1 << 7, M_64 = 1 << 8, M_SX32 = 1 << 9, M_OR = 1 << 10, M_XOR = 1 << 11, M_DIV = 1 << 12, M_SH = 1 << 13,
    M_U = 1 << 14, M_FTZ = 1 << 15,
};
enum space { SP_GLOBAL, SP_SHARED };
enum cmpk { C_F, C_LT, C_EQ, C_LE, C_GT, C_NE, C_GE, C_T, C_NUM, C_NAN, C_LTU, C_EQU, C_LEU, C_GTU, C_NEU, C_GEU };
enum atomk { A_ADD = 1, A_MIN, A_MAX, A_EXCH, A_CAS, A_AND, A_OR, A_XOR, A_INC, A_DEC };
enum shflk { SH_IDX = EMU_SHFL_IDX, SH_UP = EMU_SHFL_UP, SH_DOWN = EMU_SHFL_DOWN, SH_BFLY = EMU_SHFL_BFLY };
enum votek { V_ALL = 1, V_ANY, V_EQ };

struct sinst {
    uint8_t op, nops;
    uint8_t gkind, greg, gneg;   /* guard: O_P/O_UP (O_NONE: always), register, negated */
    uint8_t sub;                 /* compare, atomic, shuffle or vote kind; PRMT/float width */
    uint8_t bytes;               /* memory width: 1, 2, 4, 8, 16; 0x80 | bytes: sign-extended */
    uint8_t space;
    uint32_t mods;
    uint32_t target;             /* branch target */
    struct sop o[7];
    char name[24];               /* the mnemonic, for the message of a run that stops at it */
};

struct emu_sass_prog {
    struct sinst *x;
    uint32_t n;
    uint32_t param_base, static_smem;
    unsigned char *bank2;        /* constant bank 2 (jump tables), NULL if none */
    uint32_t bank2_bytes;
    /* BRX's possible targets, as nvdisasm lists them (BRANCH_TARGETS):
     * instruction indexes, for all BRX of the kernel */
    uint32_t *brx;
    uint32_t nbrx;
};

/* ---- decoding ---- */

struct dec {
    const struct emu_ptx_kernel *k;
    char *why;
    size_t nwhy;
    int bad;
    struct emu_sass_prog *g;
};

static int sl_eq(struct emu_slice s, const char *w)
{
    size_t n = strlen(w);
    return s.n == n && !memcmp(s.p, w, n);
}

/* Parse an integer immediate (0x.., decimal, leading '-'); 0 if it is not one. */
static int parse_imm(const char *p, size_t n, uint64_t *out)
{
    int neg = 0;
    if (n && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++, n--;
    }
    if (!n || n > 20)
        return 0;
    char b[24];
    memcpy(b, p, n);
    b[n] = 0;
    char *e;
    unsigned long long v;
    if (n > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X'))
        v = strtoull(b + 2, &e, 16);
    else if (isdigit((unsigned char)b[0]))
        v = strtoull(b, &e, 10);
    else
        return 0;
    if (*e)
        return 0;
    *out = neg ? (uint64_t)0 - v : v;
    return 1;
}

/* A float immediate as nvdisasm prints it: 1, -0.5, 5.96e-08, +INF, -INF, +QNAN. */
static int parse_fimm(const char *p, size_t n, double *out)
{
    char b[64];
    if (!n || n >= sizeof b)
        return 0;
    memcpy(b, p, n);
    b[n] = 0;
    const char *s = b[0] == '+' || b[0] == '-' ? b + 1 : b;
    if (!strcmp(s, "INF")) {
        *out = b[0] == '-' ? -INFINITY : INFINITY;
        return 1;
    }
    if (!strcmp(s, "QNAN") || !strcmp(s, "NAN")) {
        *out = NAN;
        return 1;
    }
    if (!isdigit((unsigned char)*s))
        return 0;
    char *e;
    *out = strtod(b, &e);
    return *e == 0;
}

/* Register name at p (R12, UR4, RZ, URZ, P0, PT, UP1, UPT): kind and index. */
static int parse_reg(const char *p, size_t n, uint8_t *kind, uint8_t *idx)
{
    int u = n > 1 && p[0] == 'U';
    const char *q = p + u;
    size_t m = n - (size_t)u;
    if (m < 2)
        return 0;
    if (q[0] == 'R' || q[0] == 'P') {
        *kind = q[0] == 'R' ? (u ? O_UR : O_R) : (u ? O_UP : O_P);
        if (m == 2 && q[1] == (q[0] == 'R' ? 'Z' : 'T')) {
            *idx = q[0] == 'R' ? (u ? URZ : RZ) : PT;
            return 1;
        }
        unsigned v = 0;
        for (size_t i = 1; i < m; i++) {
            if (!isdigit((unsigned char)q[i]) || i > 3)
                return 0;
            v = v * 10 + (unsigned)(q[i] - '0');
        }
        unsigned lim = q[0] == 'P' ? PT : u ? URZ : RZ;
        if (v >= lim)
            return 0;
        *idx = (uint8_t)v;
        return 1;
    }
    return 0;
}

static const struct { const char *name; uint8_t id; } sregs[] = {
    { "SR_TID.X", S_TID_X }, { "SR_TID.Y", S_TID_Y }, { "SR_TID.Z", S_TID_Z }, { "SR_CTAID.X", S_CTAID_X },
    { "SR_CTAID.Y", S_CTAID_Y }, { "SR_CTAID.Z", S_CTAID_Z }, { "SR_LANEID", S_LANEID }, { "SR_LTMASK", S_LTMASK },
    { "SR_LEMASK", S_LEMASK }, { "SR_GTMASK", S_GTMASK }, { "SR_GEMASK", S_GEMASK }, { "SR_EQMASK", S_EQMASK },
    { "SR_CgaCtaId", S_ZERO }, { "SR_VIRTUALSMID", S_ZERO }, { "SR_SM_ID", S_ZERO }, { "SR_VIRTID", S_WARPID },
};

/* Inside [...] of an address: terms joined by '+' (R2.64, UR4, 0x10, -0x8). */
static int parse_addr(const char *p, size_t n, struct sop *o)
{
    o->kind = O_MEM;
    o->reg = RZ;
    o->ureg = URZ;
    o->imm = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && p[j] != '+')
            j++;
        const char *t = p + i;
        size_t tn = j - i;
        if (*t == '+')
            t++, tn--;
        while (tn && *t == ' ')
            t++, tn--;
        while (tn && t[tn - 1] == ' ')
            tn--;
        uint64_t v;
        uint8_t kind, idx;
        if (parse_imm(t, tn, &v)) {
            o->imm += (int32_t)v;
        } else {
            int wide = tn > 3 && !memcmp(t + tn - 3, ".64", 3);
            if (wide)
                tn -= 3;
            uint8_t scale = 0;
            if (tn > 3 && !memcmp(t + tn - 3, ".X4", 3))
                scale = 4, tn -= 3;
            else if (tn > 3 && !memcmp(t + tn - 3, ".X8", 3))
                scale = 8, tn -= 3;
            else if (tn > 4 && !memcmp(t + tn - 4, ".X16", 4))
                scale = 16, tn -= 4;
            if (!parse_reg(t, tn, &kind, &idx))
                return 0;
            if (kind == O_R && o->reg == RZ && !(wide && scale)) {
                o->reg = idx;
                o->wide = (uint8_t)wide;
                o->scale = scale;
            } else if (scale) {
                return 0;
            } else if (kind == O_UR && o->ureg == URZ && !wide) {
                o->ureg = idx;
            } else if (kind == O_UR && o->reg == RZ && wide) {
                /* [UR4.64]: a 64-bit uniform base */
                o->ureg = idx;
                o->wide = 2;
            } else {
                return 0;
            }
        }
        i = j;
    }
    return 1;
}

static void dec_operand(struct dec *d, struct emu_slice s, struct sop *o, int fl)
{
    memset(o, 0, sizeof *o);
    const char *p = s.p;
    size_t n = s.n;
    if (n > 6 && !memcmp(p + n - 6, ".reuse", 6))
        n -= 6;
    while (n && (*p == '-' || *p == '~' || *p == '!' || *p == '|')) {
        if (*p == '-')
            o->neg = 1;
        else if (*p == '~' || *p == '!')
            o->bnot = 1;
        else
            o->absv = 1;
        p++, n--;
    }
    if (o->absv && n && p[n - 1] == '|')
        n--;
    if (!n) {
        d->bad = 1;
        return;
    }
    uint64_t v;
    double f;
    if (n >= 4 && p[0] == '`' && p[1] == '(' && p[n - 1] == ')') {
        int li = emu_ptx_label_find(d->k, (struct emu_slice){ p + 2, (uint32_t)(n - 3) });
        if (li < 0) {
            d->bad = 1;
            return;
        }
        o->kind = O_LABEL;
        o->val = d->k->labels[li].inst;
        return;
    }
    int hex = n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
    if ((!fl || hex) && parse_imm(p, n, &v)) {
        /* an integer, or a float's bits written in hex */
        o->kind = O_IMM;
        o->val = o->neg ? (uint64_t)0 - v : v;
        if (fl && o->neg)
            o->val = v ^ 0x80000000u;
        o->neg = 0;
        return;
    }
    if (fl && parse_fimm(p, n, &f)) {
        o->kind = O_FIMM;
        if (o->neg)
            f = -f;
        o->neg = 0;
        memcpy(&o->val, &f, sizeof f);
        return;
    }
    if ((n == 2 && !memcmp(p, "PR", 2)) || (n == 3 && !memcmp(p, "UPR", 3))) {
        o->kind = O_PR; /* the predicates as a bit set (P2R, R2P) */
        o->reg = n == 3;
        return;
    }
    if (n == 3 && !memcmp(p, "SRZ", 3)) {
        o->kind = O_SRZ;
        return;
    }
    if (n > 3 && !memcmp(p, "SR_", 3)) {
        for (size_t i = 0; i < sizeof sregs / sizeof *sregs; i++)
            if (strlen(sregs[i].name) == n && !memcmp(sregs[i].name, p, n)) {
                o->kind = O_SREG;
                o->reg = sregs[i].id;
                return;
            }
        d->bad = 2; /* a special register not covered */
        return;
    }
    if (n > 6 && p[0] == 'c' && p[1] == '[') {
        /* c[0xB][0xOFF] or c[0xB][R2+0xOFF] */
        const char *e = memchr(p, ']', n);
        uint64_t bank;
        if (!e || !parse_imm(p + 2, (size_t)(e - p - 2), &bank) || bank > 31 || e + 2 >= p + n || e[1] != '[' ||
            p[n - 1] != ']') {
            d->bad = 1;
            return;
        }
        struct sop a;
        memset(&a, 0, sizeof a);
        if (!parse_addr(e + 2, (size_t)(p + n - e - 3), &a) || a.wide) {
            d->bad = 1;
            return;
        }
        o->kind = O_CONST;
        o->reg = (uint8_t)bank;
        o->ireg = a.reg;
        o->ureg = a.ureg;
        o->imm = a.imm;
        return;
    }
    /* desc[URx][addr] or [addr] */
    if (n > 5 && !memcmp(p, "desc[", 5)) {
        const char *e = memchr(p, ']', n);
        if (!e) {
            d->bad = 1;
            return;
        }
        n -= (size_t)(e + 1 - p);
        p = e + 1;
    }
    if (n >= 2 && p[0] == '[' && p[n - 1] == ']') {
        if (!parse_addr(p + 1, n - 2, o))
            d->bad = 2; /* an address form not covered: the instruction stops a run */
        return;
    }
    uint8_t kind, idx;
    if (parse_reg(p, n, &kind, &idx)) {
        o->kind = kind;
        o->reg = idx;
        return;
    }
    d->bad = 2; /* e.g. R2.H1 half selects, R0.B2: not covered */
}

static int part(struct emu_slice m, const char *w)
{
    return emu_ptx_has_part(m, w);
}

static uint8_t mem_width(struct emu_slice m)
{
    if (part(m, "128"))
        return 16;
    if (part(m, "64"))
        return 8;
    if (part(m, "U16"))
        return 2;
    if (part(m, "S16"))
        return 0x80 | 2;
    if (part(m, "U8"))
        return 1;
    if (part(m, "S8"))
        return 0x80 | 1;
    return 4;
}

static uint8_t cmp_kind(struct emu_slice m)
{
    static const struct { const char *w; uint8_t c; } cs[] = {
        { "LT", C_LT }, { "EQ", C_EQ }, { "LE", C_LE }, { "GT", C_GT }, { "NE", C_NE }, { "GE", C_GE },
        { "F", C_F }, { "T", C_T }, { "NUM", C_NUM }, { "NAN", C_NAN }, { "LTU", C_LTU }, { "EQU", C_EQU },
        { "LEU", C_LEU }, { "GTU", C_GTU }, { "NEU", C_NEU }, { "GEU", C_GEU },
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++)
        if (part(m, cs[i].w))
            return (uint8_t)(cs[i].c + 1);
    return 0;
}

/* BRX R34 -0x690 (*"BRANCH_TARGETS .L_x_20,.L_x_21"*): an indirect branch
 * to R + offset + the next instruction's address, which must be one of the
 * targets nvdisasm lists (kept in g->brx). 0, or -1 if the form is another. */
static int dec_brx(struct dec *d, const struct emu_ptx_inst *in, struct sinst *x)
{
    if (in->nops != 1)
        return -1;
    const char *p = in->ops[0].p, *e = p + in->ops[0].n;
    const char *sp = memchr(p, ' ', (size_t)(e - p));
    uint8_t kind, idx;
    if (!sp || !parse_reg(p, (size_t)(sp - p), &kind, &idx) || kind != O_R)
        return -1;
    while (sp < e && *sp == ' ')
        sp++;
    const char *q = sp;
    while (q < e && *q != ' ')
        q++;
    uint64_t off;
    if (!parse_imm(sp, (size_t)(q - sp), &off))
        return -1;
    const char *t = memmem(q, (size_t)(e - q), "BRANCH_TARGETS ", 15);
    if (!t)
        return -1;
    t += 15;
    x->o[0].kind = O_R;
    x->o[0].reg = idx;
    x->o[1].kind = O_IMM;
    x->o[1].val = off;
    x->target = d->g->nbrx;
    uint32_t count = 0;
    while (t < e && *t != '"') {
        const char *c = t;
        while (c < e && *c != ',' && *c != '"')
            c++;
        int li = emu_ptx_label_find(d->k, (struct emu_slice){ t, (uint32_t)(c - t) });
        if (li < 0)
            return -1;
        uint32_t *nb = realloc(d->g->brx, (d->g->nbrx + 1) * sizeof *nb);
        if (!nb)
            return -1;
        d->g->brx = nb;
        nb[d->g->nbrx++] = d->k->labels[li].inst;
        count++;
        t = c < e && *c == ',' ? c + 1 : c;
    }
    x->o[2].val = count;
    x->nops = 2;
    return count ? 0 : -1;
}

/* Which opcode a mnemonic is, and its modifiers; X_BAD if not covered. */
static void dec_inst(struct dec *d, const struct emu_ptx_inst *in, struct sinst *x)
{
    memset(x, 0, sizeof *x);
    struct emu_slice m = in->op, opc = emu_ptx_opcode(m);
    struct emu_slice o = opc;
    if (o.n > 2 && o.p[0] == 'U')
        o = (struct emu_slice){ o.p + 1, o.n - 1 }; /* UIADD3 is IADD3 on uniform registers */
#define IS(w) sl_eq(o, w)
    static const struct { const char *w; uint32_t bit; } mods[] = {
        { "X", M_X }, { "HI", M_HI }, { "WIDE", M_WIDE }, { "U32", M_U32 }, { "EX", M_EX }, { "L", M_L },
        { "R", M_R }, { "S32", M_S }, { "S64", M_S | M_64 }, { "U64", M_64 }, { "SX32", M_SX32 }, { "OR", M_OR },
        { "XOR", M_XOR }, { "DIV", M_DIV }, { "SH", M_SH }, { "U", M_U }, { "FTZ", M_FTZ },
    };
    for (size_t i = 0; i < sizeof mods / sizeof *mods; i++)
        if (part(m, mods[i].w))
            x->mods |= mods[i].bit;
    int fl = 0;
    if (IS("NOP") || IS("BSSY") || IS("BSYNC") || IS("BREAK") || IS("MEMBAR") || IS("FENCE") || IS("ERRBAR") ||
        IS("CGAERRBAR") || IS("CCTL") || IS("DEPBAR") || IS("YIELD") || IS("NANOSLEEP"))
        x->op = X_NOP;
    else if (IS("MOV"))
        x->op = X_MOV;
    else if (IS("IMAD"))
        x->op = X_IMAD;
    else if (IS("IADD3"))
        x->op = X_IADD3;
    else if (IS("VIADD"))
        x->op = X_VIADD;
    else if (IS("LEA"))
        x->op = X_LEA;
    else if (IS("SHF"))
        x->op = X_SHF;
    else if (IS("LOP3") && part(m, "LUT"))
        x->op = X_LOP3;
    else if (IS("PLOP3") && part(m, "LUT"))
        x->op = X_PLOP3;
    else if (IS("SEL"))
        x->op = X_SEL;
    else if (IS("ISETP") && (x->sub = cmp_kind(m)) != 0)
        x->op = X_ISETP;
    else if (IS("PRMT") && emu_ptx_opcode(m).n == m.n)
        x->op = X_PRMT;
    else if (IS("VIMNMX") || IS("IMNMX"))
        x->op = X_IMNMX;
    else if (IS("BREV"))
        x->op = X_BREV;
    else if (IS("POPC"))
        x->op = X_POPC;
    else if (IS("FLO"))
        x->op = X_FLO;
    else if (IS("S2R") || IS("S2UR") || (IS("2UR") && opc.p[0] == 'S'))
        x->op = X_S2R;
    else if (sl_eq(opc, "R2UR"))
        x->op = X_MOV;
    else if (IS("CS2R") && !part(m, "32"))
        x->op = X_CS2R;
    else if (IS("LDC")) {
        x->op = X_LDC;
        x->bytes = mem_width(m);
    } else if (IS("HFMA2")) {
        x->op = X_HFMA2;
        fl = 1;
    } else if (IS("LDG") || IS("LDS") || IS("LD")) {
        x->op = X_LD;
        x->space = IS("LDS") ? SP_SHARED : SP_GLOBAL;
        x->bytes = mem_width(m);
        if (part(m, "256") || part(m, "U.128"))
            x->op = X_BAD;
    } else if (IS("STG") || IS("STS") || IS("ST")) {
        x->op = X_ST;
        x->space = IS("STS") ? SP_SHARED : SP_GLOBAL;
        x->bytes = mem_width(m);
        if (part(m, "256"))
            x->op = X_BAD;
    } else if (IS("ATOMG") || IS("ATOMS") || IS("ATOM") || IS("RED") || IS("REDG")) {
        x->op = IS("RED") || IS("REDG") ? X_RED : X_ATOM;
        x->space = IS("ATOMS") ? SP_SHARED : SP_GLOBAL;
        static const struct { const char *w; uint8_t a; } as[] = {
            { "ADD", A_ADD }, { "MIN", A_MIN }, { "MAX", A_MAX }, { "EXCH", A_EXCH }, { "CAS", A_CAS },
            { "AND", A_AND }, { "OR", A_OR }, { "XOR", A_XOR }, { "INC", A_INC }, { "DEC", A_DEC },
        };
        for (size_t i = 0; i < sizeof as / sizeof *as; i++)
            if (part(m, as[i].w))
                x->sub = as[i].a;
        x->bytes = part(m, "64") ? 8 : 4;
        if (part(m, "S32"))
            x->mods |= M_S;
        if (part(m, "F32") || part(m, "F64") || part(m, "F16x2") || part(m, "BF16x2") || part(m, "128") ||
            part(m, "S64") || !x->sub)
            x->op = X_BAD;
    } else if (IS("BAR") && part(m, "SYNC") && !part(m, "ARV") && !part(m, "RED") && in->nops <= 1)
        x->op = X_BAR; /* BAR.SYNC 0x0: the whole block; with a thread count it is not covered */
    else if (IS("SHFL")) {
        x->op = X_SHFL;
        x->sub = part(m, "IDX") ? SH_IDX : part(m, "UP") ? SH_UP : part(m, "DOWN") ? SH_DOWN : part(m, "BFLY") ? SH_BFLY : 0;
        if (!x->sub)
            x->op = X_BAD;
    } else if (IS("VOTE") || IS("VOTEU")) {
        x->op = opc.p[0] == 'U' || IS("VOTEU") ? X_VOTEU : X_VOTE;
        x->sub = part(m, "ALL") ? V_ALL : part(m, "ANY") ? V_ANY : part(m, "EQ") ? V_EQ : 0;
        if (!x->sub)
            x->op = X_BAD;
    } else if (IS("WARPSYNC"))
        x->op = X_WARPSYNC;
    else if (IS("BRA"))
        x->op = X_BRA;
    else if (IS("BRX") && emu_ptx_opcode(m).n == m.n) {
        snprintf(x->name, sizeof x->name, "BRX");
        x->op = dec_brx(d, in, x) == 0 ? X_BRX : X_BAD;
        if (x->op == X_BRX && in->guard.n) {
            uint8_t kind, idx;
            if (!parse_reg(in->guard.p, in->guard.n, &kind, &idx) || (kind != O_P && kind != O_UP))
                x->op = X_BAD;
            else
                x->gkind = kind, x->greg = idx, x->gneg = in->guard_neg;
        }
        return;
    }
    else if (IS("EXIT"))
        x->op = X_EXIT;
    else if (IS("FADD") || IS("FMUL") || IS("FFMA") || IS("FMNMX") || IS("FSEL") || (IS("FSETP") && (x->sub = cmp_kind(m)))) {
        x->op = IS("FADD") ? X_FADD : IS("FMUL") ? X_FMUL : IS("FFMA") ? X_FFMA : IS("FMNMX") ? X_FMNMX : IS("FSEL") ? X_FSEL : X_FSETP;
        fl = 1;
        /* rounding other than the default and saturation are not covered */
        if (part(m, "RZ") || part(m, "RM") || part(m, "RP") || part(m, "SAT"))
            x->op = X_BAD;
    } else if (IS("P2R") || IS("R2P")) {
        x->op = IS("P2R") ? X_P2R : X_R2P;
    }
    snprintf(x->name, sizeof x->name, "%.*s", (int)MAYA_MIN(m.n, sizeof x->name - 1), m.p);
    if (x->op == X_BAD || x->op == X_NOP)
        return; /* operands of hints (BSSY B0, ...) are not read */
    /* the guard */
    if (in->guard.n) {
        uint8_t kind, idx;
        if (!parse_reg(in->guard.p, in->guard.n, &kind, &idx) || (kind != O_P && kind != O_UP)) {
            d->bad = 1;
            return;
        }
        x->gkind = kind, x->greg = idx, x->gneg = in->guard_neg;
    }
    x->nops = in->nops > 7 ? 7 : in->nops;
    if (in->nops > 7) {
        x->op = X_BAD;
        return;
    }
    int sv = d->bad;
    d->bad = 0;
    for (unsigned i = 0; i < x->nops; i++) {
        /* an FSETP's/HFMA2's predicates and registers are not floats */
        dec_operand(d, in->ops[i], &x->o[i], fl);
        if (d->bad) {
            if (d->bad == 2)
                x->op = X_BAD; /* an operand form not covered: the instruction stops a run */
            d->bad = d->bad == 1 ? 1 : 0;
            break;
        }
    }
    if (!d->bad)
        d->bad = sv;
    if (x->op == X_BRA) {
        int found = 0;
        for (unsigned i = 0; i < x->nops; i++)
            if (x->o[i].kind == O_LABEL) {
                x->target = (uint32_t)x->o[i].val;
                found = 1;
            }
        if (!found)
            x->op = X_BAD; /* BRA to a register */
    }
#undef IS
}

struct emu_sass_prog *emu_sass_prog_new(const char *text, size_t bytes, const char *entry, uint32_t param_base,
                                        uint32_t static_smem, const void *bank2, uint32_t bank2_bytes, char *why,
                                        size_t nwhy)
{
    if (why && nwhy)
        why[0] = 0;
    struct emu_ptx_kernel k;
    if (emu_sass_parse_raw(text, bytes, entry, &k) < 0) {
        if (why && nwhy)
            snprintf(why, nwhy, "no SASS for %s", entry ? entry : "?");
        return NULL;
    }
    struct emu_sass_prog *g = NULL;
    if (k.truncated || k.ninsts == 0 || k.ninsts > MAX_INSTS || static_smem > MAX_SMEM - RESERVED_SMEM) {
        if (why && nwhy)
            snprintf(why, nwhy, "%u SASS instructions, %u static shared bytes", k.ninsts, static_smem);
        emu_ptx_kernel_free(&k);
        return NULL;
    }
    g = calloc(1, sizeof *g);
    if (g)
        g->x = calloc(k.ninsts, sizeof *g->x);
    if (!g || !g->x) {
        free(g);
        emu_ptx_kernel_free(&k);
        return NULL;
    }
    g->n = k.ninsts;
    if (bank2 && bank2_bytes && (g->bank2 = malloc(bank2_bytes)) != NULL) {
        memcpy(g->bank2, bank2, bank2_bytes);
        g->bank2_bytes = bank2_bytes;
    }
    g->param_base = param_base;
    g->static_smem = static_smem;
    struct dec d = { &k, why, nwhy, 0, g };
    for (uint32_t i = 0; i < k.ninsts && d.bad != 1; i++) {
        dec_inst(&d, &k.insts[i], &g->x[i]);
        if (g->x[i].op == X_BRA && g->x[i].target > g->n)
            d.bad = 1;
    }
    emu_ptx_kernel_free(&k);
    if (d.bad == 1) {
        if (why && nwhy)
            snprintf(why, nwhy, "damaged SASS text");
        emu_sass_prog_free(g);
        return NULL;
    }
    return g;
}

void emu_sass_prog_free(struct emu_sass_prog *g)
{
    if (!g)
        return;
    free(g->x);
    free(g->bank2);
    free(g->brx);
    free(g);
}

/* ---- running ---- */

enum tstate { TS_RUN, TS_BAR, TS_WARP, TS_EXIT };

struct thr {
    uint32_t r[NR];
    uint32_t ur[NUR];
    uint8_t p[8], up[8];
};

struct run {
    const struct emu_sass_prog *g;
    const struct emu_ptx_launch *l;
    const struct emu_ptx_mem *m;
    struct thr *t;
    uint32_t *pc;
    uint8_t *state;
    unsigned char *smem;
    uint32_t smem_bytes;
    uint32_t nthreads;
    uint32_t ctaid[3];
    uint64_t steps;
    char *why;
    size_t nwhy;
    enum emu_ptx_result res;
};

__attribute__((format(printf, 3, 4))) static int stop(struct run *r, enum emu_ptx_result res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emu_exec_vstop(&r->res, r->why, r->nwhy, res, fmt, ap);
    va_end(ap);
    return -1;
}

static uint32_t sreg(const struct run *r, uint32_t t, unsigned id)
{
    const struct emu_ptx_launch *l = r->l;
    uint32_t bx = l->block[0], by = l->block[1];
    uint32_t lane = t % 32;
    switch (id) {
    case S_TID_X: return t % bx;
    case S_TID_Y: return t / bx % by;
    case S_TID_Z: return t / (bx * by);
    case S_CTAID_X: return r->ctaid[0];
    case S_CTAID_Y: return r->ctaid[1];
    case S_CTAID_Z: return r->ctaid[2];
    case S_LANEID: return lane;
    case S_LTMASK: return (1u << lane) - 1;
    case S_LEMASK: return (uint32_t)((2ull << lane) - 1);
    case S_GTMASK: return ~(uint32_t)((2ull << lane) - 1);
    case S_GEMASK: return ~((1u << lane) - 1);
    case S_EQMASK: return 1u << lane;
    case S_WARPID: return t / 32;
    default: return 0;
    }
}

/* Constant bank 0 word at off (4 bytes, or fewer for LDC.U8/.U16). */
static int cbank(struct run *r, uint32_t bank, int64_t off, uint32_t bytes, uint64_t *out)
{
    const struct emu_ptx_launch *l = r->l;
    if (bank == 2 && off >= 0 && r->g->bank2 && (uint64_t)off + bytes <= r->g->bank2_bytes) {
        uint64_t v = 0;
        memcpy(&v, r->g->bank2 + off, bytes);
        *out = v;
        return 0;
    }
    if (bank != 0 || off < 0)
        return stop(r, EMU_PTX_UNSUPPORTED, "constant bank %u offset %lld not covered", bank, (long long)off);
    uint64_t o = (uint64_t)off;
    uint64_t v = 0;
    for (uint32_t i = 0; i < bytes; i++) {
        uint64_t a = o + i, b;
        if (a >= r->g->param_base && a - r->g->param_base < l->param_bytes) {
            b = ((const unsigned char *)l->params)[a - r->g->param_base];
        } else if (a < 0x18) {
            uint32_t w = a < 0xc ? l->block[a / 4] : l->grid[(a - 0xc) / 4];
            b = w >> (8 * (a % 4)) & 0xff;
        } else if (a >= 0x28 && a < 0x2c) {
            b = STACK_TOP >> (8 * (a - 0x28)) & 0xff;
        } else if (a >= 0x208 && a < 0x210) {
            b = 0; /* the memory descriptor global accesses name; unused here */
        } else {
            return stop(r, EMU_PTX_UNSUPPORTED, "constant bank 0 offset 0x%llx not covered", (unsigned long long)a);
        }
        v |= b << (8 * i);
    }
    *out = v;
    return 0;
}

static uint32_t rget(const struct thr *th, const struct sop *o)
{
    if (o->kind == O_R)
        return o->reg == RZ ? 0 : th->r[o->reg];
    return o->reg == URZ ? 0 : th->ur[o->reg];
}

static int pget(const struct thr *th, const struct sop *o)
{
    int v = o->kind == O_UP ? (o->reg == PT ? 1 : th->up[o->reg]) : (o->reg == PT ? 1 : th->p[o->reg]);
    return o->bnot ? !v : v;
}

/* A 32-bit source: register, immediate or constant; '-' negates, '~'
 * inverts, '|x|' takes the absolute value (integer ops). */
static int src(struct run *r, uint32_t t, const struct sop *o, uint32_t *out)
{
    const struct thr *th = &r->t[t];
    uint64_t v;
    switch (o->kind) {
    case O_R:
    case O_UR: v = rget(th, o); break;
    case O_IMM: v = (uint32_t)o->val; break;
    case O_CONST: {
        int64_t off = o->imm;
        if (o->ireg != RZ)
            off += (int32_t)th->r[o->ireg];
        if (o->ureg != URZ)
            off += (int32_t)th->ur[o->ureg];
        if (cbank(r, o->reg, off, 4, &v) < 0)
            return -1;
        break;
    }
    case O_P:
    case O_UP: v = (uint32_t)pget(th, o); break;
    default: return stop(r, EMU_PTX_UNSUPPORTED, "operand form not covered");
    }
    uint32_t w = (uint32_t)v;
    if (o->absv)
        w = (int32_t)w < 0 ? 0u - w : w;
    if (o->bnot && o->kind != O_P && o->kind != O_UP)
        w = ~w;
    if (o->neg)
        w = 0u - w;
    *out = w;
    return 0;
}

/* A 64-bit source: a register pair, an immediate (sign-extended), or two constant words. */
static int src64(struct run *r, uint32_t t, const struct sop *o, uint64_t *out)
{
    const struct thr *th = &r->t[t];
    if (o->kind == O_R || o->kind == O_UR) {
        uint32_t z = o->kind == O_R ? RZ : URZ;
        if (o->reg == z) {
            *out = 0;
        } else {
            if ((uint32_t)o->reg + 1 >= z)
                return stop(r, EMU_PTX_FAULT, "register pair past the last register");
            const uint32_t *f = o->kind == O_R ? th->r : th->ur;
            *out = (uint64_t)f[o->reg + 1] << 32 | f[o->reg];
        }
    } else if (o->kind == O_IMM) {
        *out = (uint64_t)(int64_t)(int32_t)o->val;
    } else if (o->kind == O_CONST) {
        int64_t off = o->imm;
        if (o->ireg != RZ)
            off += (int32_t)th->r[o->ireg];
        if (o->ureg != URZ)
            off += (int32_t)th->ur[o->ureg];
        if (cbank(r, o->reg, off, 8, out) < 0)
            return -1;
    } else {
        return stop(r, EMU_PTX_UNSUPPORTED, "64-bit operand form not covered");
    }
    if (o->neg)
        *out = 0 - *out;
    if (o->bnot)
        *out = ~*out;
    return 0;
}

static int dst(struct run *r, uint32_t t, const struct sop *o, uint32_t v)
{
    struct thr *th = &r->t[t];
    if (o->kind == O_R) {
        if (o->reg != RZ)
            th->r[o->reg] = v;
    } else if (o->kind == O_UR) {
        if (o->reg != URZ)
            th->ur[o->reg] = v;
    } else {
        return stop(r, EMU_PTX_FAULT, "destination is not a register");
    }
    return 0;
}

/* Write n consecutive registers from o (a pair for 64-bit, four for 128-bit). */
static int dstn(struct run *r, uint32_t t, const struct sop *o, const uint32_t *w, unsigned n)
{
    uint32_t z = o->kind == O_R ? RZ : URZ;
    if (o->kind != O_R && o->kind != O_UR)
        return stop(r, EMU_PTX_FAULT, "destination is not a register");
    if (o->reg == z)
        return 0;
    if (o->reg + n > z)
        return stop(r, EMU_PTX_FAULT, "register group past the last register");
    uint32_t *f = o->kind == O_R ? r->t[t].r : r->t[t].ur;
    for (unsigned i = 0; i < n; i++)
        f[o->reg + i] = w[i];
    return 0;
}

static int pset(struct run *r, uint32_t t, const struct sop *o, int v)
{
    if (o->kind != O_P && o->kind != O_UP)
        return stop(r, EMU_PTX_FAULT, "predicate destination is not a predicate");
    if (o->reg != PT) {
        if (o->kind == O_P)
            r->t[t].p[o->reg] = (uint8_t)(v != 0);
        else
            r->t[t].up[o->reg] = (uint8_t)(v != 0);
    }
    return 0;
}

static int is_pred(const struct sop *o)
{
    return o->kind == O_P || o->kind == O_UP;
}

/* An address: base register (32-bit, or a pair with .64), + UR, + offset. */
static int addr_of(struct run *r, uint32_t t, const struct sinst *x, const struct sop *o, uint64_t *out)
{
    const struct thr *th = &r->t[t];
    if (o->kind != O_MEM)
        return stop(r, EMU_PTX_FAULT, "memory operand expected");
    uint64_t a = 0;
    if (o->wide == 2) {
        if (o->ureg + 1 >= URZ)
            return stop(r, EMU_PTX_FAULT, "register pair past the last register");
        a = (uint64_t)th->ur[o->ureg + 1] << 32 | th->ur[o->ureg];
    } else {
        if (o->reg != RZ) {
            if (o->wide) {
                if (o->reg + 1 >= RZ)
                    return stop(r, EMU_PTX_FAULT, "register pair past the last register");
                a = (uint64_t)th->r[o->reg + 1] << 32 | th->r[o->reg];
            } else {
                a = (uint64_t)th->r[o->reg] * (o->scale ? o->scale : 1);
            }
        }
        if (o->ureg != URZ)
            a += (uint64_t)th->ur[o->ureg]; /* a 32-bit uniform offset */
    }
    a += (uint64_t)(int64_t)o->imm;
    if (x->space == SP_SHARED)
        a &= 0xffffff;
    *out = a;
    return 0;
}

static int mem_read(struct run *r, int space, uint64_t a, uint32_t bytes, void *out)
{
    if (space == SP_SHARED) {
        if (a + bytes > r->smem_bytes)
            return stop(r, EMU_PTX_FAULT, "shared memory read at 0x%llx past the block's %u bytes",
                        (unsigned long long)a, r->smem_bytes);
        memcpy(out, r->smem + a, bytes);
        return 0;
    }
    if (a % bytes)
        return stop(r, EMU_PTX_FAULT, "misaligned %u-byte read at 0x%llx", bytes, (unsigned long long)a);
    if (r->m->can_read(r->m->ctx, a, bytes) < 0)
        return stop(r, EMU_PTX_UNREAL, "read of %u bytes at 0x%llx: not real device bytes", bytes,
                    (unsigned long long)a);
    memcpy(out, (const void *)(uintptr_t)a, bytes);
    return 0;
}

static int mem_write(struct run *r, int space, uint64_t a, uint32_t bytes, const void *in)
{
    if (space == SP_SHARED) {
        if (a + bytes > r->smem_bytes)
            return stop(r, EMU_PTX_FAULT, "shared memory write at 0x%llx past the block's %u bytes",
                        (unsigned long long)a, r->smem_bytes);
        memcpy(r->smem + a, in, bytes);
        return 0;
    }
    if (a % bytes)
        return stop(r, EMU_PTX_FAULT, "misaligned %u-byte write at 0x%llx", bytes, (unsigned long long)a);
    if (r->m->can_write(r->m->ctx, a, bytes) < 0)
        return stop(r, EMU_PTX_FAULT, "write of %u bytes at 0x%llx: not in device memory", bytes,
                    (unsigned long long)a);
    memcpy((void *)(uintptr_t)a, in, bytes);
    return 0;
}

static uint32_t lut3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut)
{
    uint32_t v = 0;
    for (int i = 0; i < 8; i++)
        if (lut >> i & 1) {
            uint32_t ma = i & 4 ? a : ~a, mb = i & 2 ? b : ~b, mc = i & 1 ? c : ~c;
            v |= ma & mb & mc;
        }
    return v;
}

static int icmp(int c, int sign, uint32_t a, uint32_t b)
{
    int lt = sign ? (int32_t)a < (int32_t)b : a < b, eq = a == b;
    switch (c) {
    case C_LT: return lt;
    case C_EQ: return eq;
    case C_LE: return lt || eq;
    case C_GT: return !lt && !eq;
    case C_NE: return !eq;
    case C_GE: return !lt;
    case C_T: return 1;
    default: return 0;
    }
}

static float f32(uint32_t w)
{
    float f;
    memcpy(&f, &w, 4);
    return f;
}

static uint32_t w32(float f)
{
    uint32_t w;
    memcpy(&w, &f, 4);
    return w;
}

/* A float source: a register's bits, or an immediate; -x and |x|. */
static int fsrc(struct run *r, uint32_t t, const struct sop *o, float *out)
{
    float f;
    if (o->kind == O_FIMM) {
        double d;
        memcpy(&d, &o->val, sizeof d);
        f = (float)d;
    } else {
        struct sop p = *o;
        p.neg = p.absv = 0;
        uint32_t w;
        if (src(r, t, &p, &w) < 0)
            return -1;
        f = f32(w);
    }
    if (o->absv)
        f = fabsf(f);
    if (o->neg)
        f = -f;
    *out = f;
    return 0;
}

/* IEEE half bits of v (round to nearest even). */
static uint16_t half_bits(double v)
{
    uint32_t w = w32((float)v);
    uint32_t s = w >> 16 & 0x8000, e = w >> 23 & 0xff, mant = w & 0x7fffff;
    if (e == 0xff)
        return (uint16_t)(s | 0x7c00 | (mant ? 0x200 : 0));
    int ee = (int)e - 127 + 15;
    if (ee >= 31)
        return (uint16_t)(s | 0x7c00);
    if (ee <= 0) {
        if (ee < -10)
            return (uint16_t)s;
        mant |= 0x800000;
        int shift = 14 - ee;
        uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(s | h);
    }
    uint32_t h = (uint32_t)ee << 10 | mant >> 13, rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return (uint16_t)(s | h);
}

static int fcmp(int c, float a, float b)
{
    int un = isnan(a) || isnan(b);
    switch (c) {
    case C_F: return 0;
    case C_T: return 1;
    case C_LT: return !un && a < b;
    case C_EQ: return !un && a == b;
    case C_LE: return !un && a <= b;
    case C_GT: return !un && a > b;
    case C_NE: return !un && a != b;
    case C_GE: return !un && a >= b;
    case C_NUM: return !un;
    case C_NAN: return un;
    case C_LTU: return un || a < b;
    case C_EQU: return un || a == b;
    case C_LEU: return un || a <= b;
    case C_GTU: return un || a > b;
    case C_NEU: return un || a != b;
    case C_GEU: return un || a >= b;
    default: return 0;
    }
}

static int do_atom(struct run *r, uint32_t t, const struct sinst *x)
{
    /* ATOMG.E.ADD.STRONG.GPU Pd, Rd, [addr], Rsrc [, Rsrc2]; RED.E.ADD [addr], Rsrc */
    unsigned i = 0;
    if (x->op == X_ATOM && i < x->nops && is_pred(&x->o[i]))
        i++;
    const struct sop *d = x->op == X_ATOM ? &x->o[i++] : NULL;
    if (i + 2 > x->nops)
        return stop(r, EMU_PTX_FAULT, "atomic with %u operands", x->nops);
    uint64_t a, b = 0, c = 0, old = 0, nw;
    if (addr_of(r, t, x, &x->o[i], &a) < 0)
        return -1;
    int wide = x->bytes == 8;
    if ((wide ? src64(r, t, &x->o[i + 1], &b) : src(r, t, &x->o[i + 1], (uint32_t *)&b)) < 0)
        return -1;
    if (!wide)
        b = (uint32_t)b;
    if (x->sub == A_CAS) {
        if (i + 3 > x->nops)
            return stop(r, EMU_PTX_FAULT, "CAS without its new value");
        uint32_t c32 = 0;
        if ((wide ? src64(r, t, &x->o[i + 2], &c) : src(r, t, &x->o[i + 2], &c32)) < 0)
            return -1;
        if (!wide)
            c = c32;
    }
    if (mem_read(r, x->space, a, x->bytes, &old) < 0)
        return -1;
    int sign = (x->mods & M_S) != 0;
    int64_t so = wide ? (int64_t)old : (int64_t)(int32_t)old, sb = wide ? (int64_t)b : (int64_t)(int32_t)b;
    switch (x->sub) {
    case A_ADD: nw = old + b; break;
    case A_MIN: nw = sign ? (so < sb ? old : b) : (old < b ? old : b); break;
    case A_MAX: nw = sign ? (so > sb ? old : b) : (old > b ? old : b); break;
    case A_EXCH: nw = b; break;
    case A_CAS: nw = old == b ? c : old; break;
    case A_AND: nw = old & b; break;
    case A_OR: nw = old | b; break;
    case A_XOR: nw = old ^ b; break;
    case A_INC: nw = (uint32_t)old >= (uint32_t)b ? 0 : old + 1; break;
    case A_DEC: nw = old == 0 || (uint32_t)old > (uint32_t)b ? b : old - 1; break;
    default: return stop(r, EMU_PTX_UNSUPPORTED, "atomic kind not covered");
    }
    if (mem_write(r, x->space, a, x->bytes, &nw) < 0)
        return -1;
    if (d) {
        uint32_t w[2] = { (uint32_t)old, (uint32_t)(old >> 32) };
        return dstn(r, t, d, w, wide ? 2 : 1);
    }
    return 0;
}

/* One instruction of thread t (not a warp operation or barrier). */
static int exec1(struct run *r, uint32_t t, const struct sinst *x)
{
    struct thr *th = &r->t[t];
    const struct sop *o = x->o;
    unsigned n = x->nops;
    uint32_t a, b, c;
    uint64_t A, C;
    switch (x->op) {
    case X_NOP: return 0;
    case X_MOV:
        if (n < 2 || src(r, t, &o[1], &a) < 0)
            return n < 2 ? stop(r, EMU_PTX_FAULT, "MOV with %u operands", n) : -1;
        return dst(r, t, &o[0], a);
    case X_S2R:
        if (n != 2 || o[1].kind != O_SREG)
            return stop(r, EMU_PTX_FAULT, "S2R without a special register");
        return dst(r, t, &o[0], sreg(r, t, o[1].reg));
    case X_CS2R: {
        if (n != 2 || o[1].kind != O_SRZ)
            return stop(r, EMU_PTX_UNSUPPORTED, "CS2R of a special register not covered");
        uint32_t z[2] = { 0, 0 };
        return dstn(r, t, &o[0], z, 2);
    }
    case X_LDC: {
        if (n != 2 || o[1].kind != O_CONST)
            return stop(r, EMU_PTX_FAULT, "LDC without a constant");
        int64_t off = o[1].imm;
        if (o[1].ireg != RZ)
            off += (int32_t)th->r[o[1].ireg];
        if (o[1].ureg != URZ)
            off += (int32_t)th->ur[o[1].ureg];
        uint32_t by = x->bytes & 0x7f;
        if (by > 8)
            return stop(r, EMU_PTX_UNSUPPORTED, "LDC.128 not covered");
        if (cbank(r, o[1].reg, off, by, &A) < 0)
            return -1;
        if ((x->bytes & 0x80) && by < 4)
            A = (uint64_t)(uint32_t)(int32_t)((int64_t)(A << (64 - 8 * by)) >> (64 - 8 * by));
        uint32_t w[2] = { (uint32_t)A, (uint32_t)(A >> 32) };
        return dstn(r, t, &o[0], w, by == 8 ? 2 : 1);
    }
    case X_IMAD: {
        /* IMAD[.X] d, a, b, c[, Pin]; IMAD.WIDE[.U32] d, [Pout,] a, b, c; IMAD.HI[.U32] d, [Pout,] a, b, c[, Pin] */
        unsigned i = 1;
        const struct sop *pout = NULL;
        if (n > 1 && is_pred(&o[1]) && (x->mods & (M_WIDE | M_HI)))
            pout = &o[i++];
        if (i + 3 > n)
            return stop(r, EMU_PTX_FAULT, "IMAD with %u operands", n);
        if (src(r, t, &o[i], &a) < 0 || src(r, t, &o[i + 1], &b) < 0)
            return -1;
        uint32_t cin = 0;
        if (x->mods & M_X) {
            if (i + 4 > n || !is_pred(&o[i + 3]))
                return stop(r, EMU_PTX_FAULT, "IMAD.X without its carry");
            cin = (uint32_t)pget(th, &o[i + 3]);
        }
        int u = (x->mods & M_U32) != 0;
        if (x->mods & M_WIDE) {
            if (src64(r, t, &o[i + 2], &C) < 0)
                return -1;
            uint64_t prod = u ? (uint64_t)a * b : (uint64_t)((int64_t)(int32_t)a * (int64_t)(int32_t)b);
            uint64_t s = prod + C + cin;
            uint32_t w[2] = { (uint32_t)s, (uint32_t)(s >> 32) };
            if (pout && pset(r, t, pout, s < prod || (cin && s == prod)) < 0)
                return -1;
            return dstn(r, t, &o[0], w, 2);
        }
        if (src(r, t, &o[i + 2], &c) < 0)
            return -1;
        if (x->mods & M_HI) {
            uint64_t prod = u ? (uint64_t)a * b : (uint64_t)((int64_t)(int32_t)a * (int64_t)(int32_t)b);
            uint64_t s = (prod >> 32) + c + cin;
            if (pout && pset(r, t, pout, s >> 32 != 0) < 0)
                return -1;
            return dst(r, t, &o[0], (uint32_t)s);
        }
        return dst(r, t, &o[0], a * b + c + cin);
    }
    case X_IADD3: {
        /* IADD3 d, [P0, [P1,]] a, b, c; IADD3.X d, [P0, [P1,]] a, b, c, Pin0, Pin1 */
        unsigned i = 1, np = 0, trail = 0;
        const struct sop *po[2] = { NULL, NULL };
        while ((x->mods & M_X) && trail < 2 && trail < n && is_pred(&o[n - 1 - trail]))
            trail++;
        while (i < n && is_pred(&o[i]) && np < 2 && n - i - trail > 3)
            po[np++] = &o[i++];
        if (i + 3 > n)
            return stop(r, EMU_PTX_FAULT, "IADD3 with %u operands", n);
        uint64_t s = 0;
        for (unsigned j = 0; j < 3; j++) {
            const struct sop *q = &o[i + j];
            struct sop p = *q;
            p.neg = 0;
            uint32_t v;
            if (src(r, t, &p, &v) < 0)
                return -1;
            if (q->neg && !(x->mods & M_X))
                s += (uint64_t)(uint32_t)~v + 1; /* -v: ~v + 1, whose carry out is the borrow's complement */
            else if (q->neg)
                s += (uint32_t)~v;
            else
                s += v;
        }
        if (x->mods & M_X)
            for (unsigned j = i + 3; j < n && j < i + 5; j++) {
                if (!is_pred(&o[j]))
                    return stop(r, EMU_PTX_FAULT, "IADD3.X carry is not a predicate");
                s += (uint64_t)pget(th, &o[j]);
            }
        uint64_t carry = s >> 32;
        if (po[0] && pset(r, t, po[0], carry >= 1) < 0)
            return -1;
        if (po[1] && pset(r, t, po[1], carry >= 2) < 0)
            return -1;
        return dst(r, t, &o[0], (uint32_t)s);
    }
    case X_VIADD:
        if (n < 3 || src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &b) < 0)
            return n < 3 ? stop(r, EMU_PTX_FAULT, "VIADD with %u operands", n) : -1;
        return dst(r, t, &o[0], a + b);
    case X_LEA: {
        /* LEA d, [Pout,] a, b, s: (a << s) + b; LEA.HI[.X][.SX32] d, [Pout,] a, b, [c,] s[, Pin]:
         * b + the high word of ({c:a} << s) (+ carry) */
        unsigned i = 1;
        const struct sop *pout = NULL;
        if (n > 1 && is_pred(&o[1]))
            pout = &o[i++];
        unsigned need = (x->mods & M_HI) && !(x->mods & M_SX32) ? 4 : 3;
        if (i + need > n)
            return stop(r, EMU_PTX_FAULT, "LEA with %u operands", n);
        uint32_t s;
        if (src(r, t, &o[i], &a) < 0 || src(r, t, &o[i + 1], &b) < 0 || src(r, t, &o[i + need - 1], &s) < 0)
            return -1;
        s &= 31;
        uint32_t cin = 0;
        if (x->mods & M_X) {
            if (i + need >= n || !is_pred(&o[i + need]))
                return stop(r, EMU_PTX_FAULT, "LEA.X without its carry");
            cin = (uint32_t)pget(th, &o[i + need]);
        }
        uint32_t v;
        if (x->mods & M_HI) {
            if (x->mods & M_SX32)
                c = (int32_t)a < 0 ? 0xffffffffu : 0;
            else if (src(r, t, &o[i + 2], &c) < 0)
                return -1;
            v = (uint32_t)((((uint64_t)c << 32 | a) << s) >> 32);
        } else {
            v = a << s;
        }
        uint64_t sum = (uint64_t)v + b + cin;
        if (pout && pset(r, t, pout, sum >> 32 != 0) < 0)
            return -1;
        return dst(r, t, &o[0], (uint32_t)sum);
    }
    case X_SHF: {
        /* SHF.{L,R}.{U32,S32,U64,S64}[.HI] d, lo, s, hi */
        if (n != 4 || !(x->mods & (M_L | M_R)))
            return stop(r, EMU_PTX_FAULT, "SHF form not covered");
        uint32_t s;
        if (src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &s) < 0 || src(r, t, &o[3], &c) < 0)
            return -1;
        uint32_t lim = x->mods & M_64 ? 64 : 32;
        if (s > lim)
            s = lim;
        uint64_t v = (uint64_t)c << 32 | a;
        if (x->mods & M_L)
            v = s >= 64 ? 0 : v << s;
        else if (x->mods & M_S)
            v = (uint64_t)((int64_t)v >> (s >= 64 ? 63 : s));
        else
            v = s >= 64 ? 0 : v >> s;
        return dst(r, t, &o[0], x->mods & M_HI ? (uint32_t)(v >> 32) : (uint32_t)v);
    }
    case X_LOP3: {
        /* LOP3.LUT [Pd,] d, a, b, c, lut, Pin */
        unsigned i = 0;
        const struct sop *pd = NULL;
        if (n > 0 && is_pred(&o[0]))
            pd = &o[i++];
        if (i + 5 > n || o[i + 4].kind != O_IMM)
            return stop(r, EMU_PTX_FAULT, "LOP3 form not covered");
        if (src(r, t, &o[i + 1], &a) < 0 || src(r, t, &o[i + 2], &b) < 0 || src(r, t, &o[i + 3], &c) < 0)
            return -1;
        uint32_t v = lut3(a, b, c, (uint32_t)o[i + 4].val & 0xff);
        if (pd && pset(r, t, pd, v != 0) < 0)
            return -1;
        return dst(r, t, &o[i], v);
    }
    case X_PLOP3: {
        /* PLOP3.LUT Pd1, Pd2, a, b, c, lut1, lut2 */
        if (n != 7 || o[5].kind != O_IMM || o[6].kind != O_IMM || !is_pred(&o[2]) || !is_pred(&o[3]) || !is_pred(&o[4]))
            return stop(r, EMU_PTX_FAULT, "PLOP3 form not covered");
        uint32_t pa = pget(th, &o[2]) ? ~0u : 0, pb = pget(th, &o[3]) ? ~0u : 0, pc = pget(th, &o[4]) ? ~0u : 0;
        if (pset(r, t, &o[0], lut3(pa, pb, pc, (uint32_t)o[5].val & 0xff) & 1) < 0)
            return -1;
        return pset(r, t, &o[1], lut3(pa, pb, pc, (uint32_t)o[6].val & 0xff) & 1);
    }
    case X_SEL:
    case X_FSEL:
        if (n != 4 || !is_pred(&o[3]))
            return stop(r, EMU_PTX_FAULT, "SEL form not covered");
        if (x->op == X_FSEL) {
            float fa, fb;
            if (fsrc(r, t, &o[1], &fa) < 0 || fsrc(r, t, &o[2], &fb) < 0)
                return -1;
            return dst(r, t, &o[0], w32(pget(th, &o[3]) ? fa : fb));
        }
        if (src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &b) < 0)
            return -1;
        return dst(r, t, &o[0], pget(th, &o[3]) ? a : b);
    case X_ISETP:
    case X_FSETP: {
        /* ISETP.cmp[.U32].{AND,OR,XOR}[.EX] Pd1, Pd2, a, b, Pc[, Plow] */
        int ex = (x->mods & M_EX) != 0;
        if (n != (unsigned)(5 + ex) || !is_pred(&o[0]) || !is_pred(&o[1]) || !is_pred(&o[4]) || (ex && !is_pred(&o[5])))
            return stop(r, EMU_PTX_FAULT, "SETP form not covered");
        int cmp = x->sub - 1, v;
        if (x->op == X_FSETP) {
            float fa, fb;
            if (fsrc(r, t, &o[2], &fa) < 0 || fsrc(r, t, &o[3], &fb) < 0)
                return -1;
            v = fcmp(cmp, fa, fb);
        } else {
            if (src(r, t, &o[2], &a) < 0 || src(r, t, &o[3], &b) < 0)
                return -1;
            int sign = !(x->mods & M_U32);
            if (ex) {
                /* the high words of a 64-bit compare whose low words gave Plow */
                int low = pget(th, &o[5]), eq = a == b;
                if (cmp == C_EQ)
                    v = eq && low;
                else if (cmp == C_NE)
                    v = !eq || low;
                else if (cmp == C_T || cmp == C_F)
                    v = cmp == C_T;
                else
                    v = icmp(cmp == C_LE ? C_LT : cmp == C_GE ? C_GT : cmp, sign, a, b) || (eq && low);
            } else {
                v = icmp(cmp, sign, a, b);
            }
        }
        int pc = pget(th, &o[4]);
        int r1, r2;
        if (x->mods & M_OR)
            r1 = v || pc, r2 = !v || pc;
        else if (x->mods & M_XOR)
            r1 = v != pc, r2 = (!v) != pc;
        else
            r1 = v && pc, r2 = !v && pc;
        if (pset(r, t, &o[0], r1) < 0)
            return -1;
        return pset(r, t, &o[1], r2);
    }
    case X_PRMT: {
        /* PRMT d, a, sel, b: bytes of {b:a} picked by sel's nibbles (bit 3: replicate the sign) */
        if (n != 4 || src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &b) < 0 || src(r, t, &o[3], &c) < 0)
            return n != 4 ? stop(r, EMU_PTX_FAULT, "PRMT form not covered") : -1;
        uint64_t v = (uint64_t)c << 32 | a;
        uint32_t out = 0;
        for (int i = 0; i < 4; i++) {
            uint32_t s = b >> (4 * i) & 0xf;
            uint32_t byte = (uint32_t)(v >> (8 * (s & 7))) & 0xff;
            if (s & 8)
                byte = byte & 0x80 ? 0xff : 0;
            out |= byte << (8 * i);
        }
        return dst(r, t, &o[0], out);
    }
    case X_POPC:
        if (n != 2 || src(r, t, &o[1], &a) < 0)
            return n != 2 ? stop(r, EMU_PTX_FAULT, "POPC form not covered") : -1;
        return dst(r, t, &o[0], (uint32_t)__builtin_popcount(a));
    case X_FLO: {
        if (n != 2 || src(r, t, &o[1], &a) < 0)
            return n != 2 ? stop(r, EMU_PTX_FAULT, "FLO form not covered") : -1;
        if (!(x->mods & M_U32))
            a = (int32_t)a < 0 ? ~a : a; /* signed: the highest bit unlike the sign */
        uint32_t v = a ? 31u - (uint32_t)__builtin_clz(a) : 0xffffffffu;
        if (x->mods & M_SH)
            v = a ? (uint32_t)__builtin_clz(a) : 0xffffffffu;
        return dst(r, t, &o[0], v);
    }
    case X_HFMA2: {
        /* HFMA2[.MMA] d, -RZ, RZ, hi, lo: only the form that makes a constant
         * (nvdisasm prints the high half first: "0, 4.76837158203125e-07"
         * is 8, the cat kernel's offset into its parameters) */
        if (n != 5 || (o[1].kind != O_R && o[1].kind != O_UR) || rget(th, &o[1]) != 0 ||
            (o[2].kind != O_R && o[2].kind != O_UR) || rget(th, &o[2]) != 0 || o[3].kind != O_FIMM ||
            o[4].kind != O_FIMM || o[1].reg != RZ || o[2].reg != RZ)
            return stop(r, EMU_PTX_UNSUPPORTED, "HFMA2 other than a constant not covered");
        double lo, hi;
        memcpy(&hi, &o[3].val, sizeof hi);
        memcpy(&lo, &o[4].val, sizeof lo);
        /* -0 * 0 + c is c, and -0 + -0 keeps the sign: as the half adds */
        return dst(r, t, &o[0], (uint32_t)half_bits(hi) << 16 | half_bits(lo));
    }
    case X_LD: {
        if (n != 2)
            return stop(r, EMU_PTX_FAULT, "load with %u operands", n);
        uint64_t ad;
        if (addr_of(r, t, x, &o[1], &ad) < 0)
            return -1;
        uint32_t by = x->bytes & 0x7f, w[4] = { 0, 0, 0, 0 };
        if (mem_read(r, x->space, ad, by, w) < 0)
            return -1;
        if (x->bytes & 0x80)
            w[0] = by == 1 ? (uint32_t)(int32_t)(int8_t)w[0] : (uint32_t)(int32_t)(int16_t)w[0];
        return dstn(r, t, &o[0], w, by <= 4 ? 1 : by / 4);
    }
    case X_ST: {
        if (n != 2 || (o[1].kind != O_R && o[1].kind != O_UR))
            return stop(r, EMU_PTX_FAULT, "store form not covered");
        uint64_t ad;
        if (addr_of(r, t, x, &o[0], &ad) < 0)
            return -1;
        uint32_t by = x->bytes & 0x7f, w[4] = { 0, 0, 0, 0 }, z = o[1].kind == O_R ? RZ : URZ;
        unsigned nw = by <= 4 ? 1 : by / 4;
        const uint32_t *f = o[1].kind == O_R ? th->r : th->ur;
        if (o[1].reg != z) {
            if (o[1].reg + nw > z)
                return stop(r, EMU_PTX_FAULT, "register group past the last register");
            memcpy(w, f + o[1].reg, nw * 4);
        }
        return mem_write(r, x->space, ad, by, w);
    }
    case X_ATOM:
    case X_RED: return do_atom(r, t, x);
    case X_FADD:
    case X_FMUL:
    case X_FMNMX:
    case X_FFMA: {
        float fa, fb, fc = 0, v;
        if (n < 3 || fsrc(r, t, &o[1], &fa) < 0 || fsrc(r, t, &o[2], &fb) < 0)
            return n < 3 ? stop(r, EMU_PTX_FAULT, "float op with %u operands", n) : -1;
        if (x->op == X_FFMA) {
            if (n != 4 || fsrc(r, t, &o[3], &fc) < 0)
                return n != 4 ? stop(r, EMU_PTX_FAULT, "FFMA with %u operands", n) : -1;
            v = fmaf(fa, fb, fc);
        } else if (x->op == X_FADD) {
            v = fa + fb;
        } else if (x->op == X_FMUL) {
            v = fa * fb;
        } else {
            /* FMNMX d, a, b, Pmin: min if Pmin, else max; NaN loses */
            if (n != 4 || !is_pred(&o[3]))
                return stop(r, EMU_PTX_FAULT, "FMNMX form not covered");
            v = pget(th, &o[3]) ? fminf(fa, fb) : fmaxf(fa, fb);
        }
        if ((x->mods & M_FTZ) && fpclassify(v) == FP_SUBNORMAL)
            v = copysignf(0, v);
        return dst(r, t, &o[0], w32(v));
    }
    case X_IMNMX: {
        /* VIMNMX[.U32] d, a, b, Pmin: the minimum if Pmin, else the maximum */
        if (n != 4 || !is_pred(&o[3]) || src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &b) < 0)
            return n != 4 || !is_pred(&o[3]) ? stop(r, EMU_PTX_FAULT, "VIMNMX form not covered") : -1;
        int lt = x->mods & M_U32 ? a < b : (int32_t)a < (int32_t)b;
        return dst(r, t, &o[0], pget(th, &o[3]) == lt ? a : b);
    }
    case X_BREV: {
        if (n != 2 || src(r, t, &o[1], &a) < 0)
            return n != 2 ? stop(r, EMU_PTX_FAULT, "BREV form not covered") : -1;
        uint32_t v = 0;
        for (int i = 0; i < 32; i++)
            v |= (a >> i & 1) << (31 - i);
        return dst(r, t, &o[0], v);
    }
    case X_P2R: {
        /* P2R d, PR, b, mask: b with the bits of mask taken from P0..P6 */
        if (n != 4 || o[1].kind != O_PR || src(r, t, &o[2], &b) < 0 || src(r, t, &o[3], &c) < 0)
            return n != 4 || o[1].kind != O_PR ? stop(r, EMU_PTX_FAULT, "P2R form not covered") : -1;
        uint32_t pr = 0;
        for (int i = 0; i < 7; i++)
            pr |= (uint32_t)(o[1].reg ? th->up[i] : th->p[i]) << i;
        return dst(r, t, &o[0], (b & ~c) | (pr & c));
    }
    case X_R2P: {
        /* R2P PR, a, mask: P0..P6 from a's bits, where mask has them */
        if (n != 3 || o[0].kind != O_PR || src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &c) < 0)
            return n != 3 || o[0].kind != O_PR ? stop(r, EMU_PTX_FAULT, "R2P form not covered") : -1;
        for (int i = 0; i < 7; i++)
            if (c >> i & 1) {
                if (o[0].reg)
                    th->up[i] = (uint8_t)(a >> i & 1);
                else
                    th->p[i] = (uint8_t)(a >> i & 1);
            }
        return 0;
    }
    default: return stop(r, EMU_PTX_UNSUPPORTED, "SASS instruction not covered");
    }
}

static int guard_ok(const struct thr *th, const struct sinst *x)
{
    if (x->gkind == O_NONE)
        return 1;
    int v = x->greg == PT ? 1 : x->gkind == O_P ? th->p[x->greg] : th->up[x->greg];
    return x->gneg ? !v : v;
}

/* One instruction of thread t: 1 if it went on, 0 if it now waits at a
 * barrier or has exited, -1 if the run stops. Warp operations are done by
 * warp_op for all lanes at once. */
static int step(struct run *r, uint32_t t)
{
    const struct emu_sass_prog *g = r->g;
    struct thr *th = &r->t[t];
    uint32_t pc = r->pc[t];
    if (pc >= g->n) {
        r->state[t] = TS_EXIT; /* ran off the end: as EXIT */
        return 0;
    }
    if (++r->steps > r->l->max_steps)
        return stop(r, EMU_PTX_STEPS, "more than %llu instructions", (unsigned long long)r->l->max_steps);
    const struct sinst *x = &g->x[pc];
    if (!guard_ok(th, x)) {
        r->pc[t] = pc + 1;
        return 1;
    }
    switch (x->op) {
    case X_EXIT:
        /* EXIT [P]: a predicate operand must hold too */
        if (x->nops >= 1 && is_pred(&x->o[0]) && !pget(th, &x->o[0])) {
            r->pc[t] = pc + 1;
            return 1;
        }
        r->state[t] = TS_EXIT;
        return 0;
    case X_BRA: {
        /* BRA [P,] `(label); BRA.DIV: taken only for a diverged warp, never
         * here (the lanes of a warp run together, below) */
        int take = !(x->mods & M_DIV);
        if (x->nops >= 2 && is_pred(&x->o[0]))
            take = take && pget(th, &x->o[0]);
        r->pc[t] = take ? x->target : pc + 1;
        return 1;
    }
    case X_BRX: {
        uint64_t to = (uint64_t)(int64_t)(int32_t)th->r[x->o[0].reg == RZ ? 0 : x->o[0].reg] + x->o[1].val +
                      16ull * (pc + 1);
        if (x->o[0].reg == RZ)
            to = x->o[1].val + 16ull * (pc + 1);
        for (uint32_t i = 0; i < x->o[2].val && x->target + i < g->nbrx; i++)
            if (to % 16 == 0 && to / 16 == g->brx[x->target + i]) {
                r->pc[t] = (uint32_t)(to / 16);
                return 1;
            }
        return stop(r, EMU_PTX_UNSUPPORTED, "BRX to 0x%llx, not one of its listed targets", (unsigned long long)to);
    }
    case X_BAR: r->state[t] = TS_BAR; return 0;
    case X_BAD: return stop(r, EMU_PTX_UNSUPPORTED, "SASS %s (instruction %u) not covered", x->name, pc);
    default:
        if (exec1(r, t, x) < 0)
            return -1;
        r->pc[t] = pc + 1;
        return 1;
    }
}

static int is_warp_op(const struct sinst *x)
{
    return x->op == X_SHFL || x->op == X_VOTE || x->op == X_VOTEU || x->op == X_WARPSYNC;
}

/* The warp operation at pc for the lanes in `at` (those whose guard holds):
 * every live lane of the warp must be there. */
static int warp_op(struct run *r, uint32_t w0, uint32_t w1, uint32_t pc, uint32_t at)
{
    const struct sinst *x = &r->g->x[pc];
    const struct sop *o = x->o;
    uint32_t live = 0, vals[32] = { 0 }, ballot = 0;
    for (uint32_t t = w0; t < w1; t++)
        if (r->state[t] != TS_EXIT)
            live |= 1u << (t - w0);
    for (uint32_t t = w0; t < w1; t++) {
        uint32_t lane = t - w0;
        if (!(at >> lane & 1))
            continue;
        if (!guard_ok(&r->t[t], x)) {
            live &= ~(1u << lane);
            at &= ~(1u << lane);
            r->pc[t] = pc + 1;
            continue;
        }
    }
    if ((live & ~at) != 0) {
        /* a lane elsewhere: its mask would say whether it takes part */
        for (uint32_t t = w0; t < w1; t++)
            if ((live & ~at) >> (t - w0) & 1 && r->pc[t] != pc + 1)
                return stop(r, EMU_PTX_UNSUPPORTED, "lanes of a warp at different warp operations");
        live = at;
    }
    for (uint32_t t = w0; t < w1; t++) {
        uint32_t lane = t - w0;
        if (!(at >> lane & 1))
            continue;
        if (x->op == X_SHFL) {
            /* SHFL.mode Pout, d, a, b, c */
            if (x->nops != 5 || src(r, t, &o[2], &vals[lane]) < 0)
                return x->nops != 5 ? stop(r, EMU_PTX_FAULT, "SHFL with %u operands", x->nops) : -1;
        } else if (x->op == X_VOTE || x->op == X_VOTEU) {
            /* VOTE.mode [Rd,] Pd, Pin: the last operand is the vote */
            if (x->nops < 2 || !is_pred(&o[x->nops - 1]))
                return stop(r, EMU_PTX_FAULT, "VOTE form not covered");
            if (pget(&r->t[t], &o[x->nops - 1]))
                ballot |= 1u << lane;
        }
    }
    for (uint32_t t = w0; t < w1; t++) {
        uint32_t lane = t - w0;
        if (!(at >> lane & 1))
            continue;
        if (x->op == X_SHFL) {
            uint32_t b, c;
            if (src(r, t, &o[3], &b) < 0 || src(r, t, &o[4], &c) < 0)
                return -1;
            int ok;
            uint32_t j = emu_shfl_src(x->sub, lane, b, c, at, &ok);
            if (dst(r, t, &o[1], vals[j]) < 0 || pset(r, t, &o[0], ok) < 0)
                return -1;
        } else if (x->op == X_VOTE || x->op == X_VOTEU) {
            int v = x->sub == V_ALL ? ballot == at : x->sub == V_ANY ? ballot != 0 : (ballot == 0 || ballot == at);
            unsigned i = 0;
            if (o[0].kind == O_R || o[0].kind == O_UR) {
                if (dst(r, t, &o[0], ballot) < 0)
                    return -1;
                i = 1;
            }
            if (i + 1 < x->nops && pset(r, t, &o[i], v) < 0)
                return -1;
        }
        r->pc[t] = pc + 1;
    }
    return 0;
}

/* Run the lanes of a warp together until each waits at a barrier or has
 * exited: at every step the lanes at the lowest instruction address go one
 * instruction on, so lanes that branched apart meet again where their paths
 * join and a warp's stores are all done before its next loads (the exchange
 * through shared memory that code relying on converged warps does). */
static int run_warp(struct run *r, uint32_t w0, uint32_t w1)
{
    for (;;) {
        uint32_t pc = UINT32_MAX, at = 0;
        for (uint32_t t = w0; t < w1; t++)
            if (r->state[t] == TS_RUN && r->pc[t] < pc)
                pc = r->pc[t];
        if (pc == UINT32_MAX)
            return 0;
        for (uint32_t t = w0; t < w1; t++)
            if (r->state[t] == TS_RUN && r->pc[t] == pc)
                at |= 1u << (t - w0);
        if (pc < r->g->n && is_warp_op(&r->g->x[pc])) {
            if (++r->steps > r->l->max_steps)
                return stop(r, EMU_PTX_STEPS, "more than %llu instructions", (unsigned long long)r->l->max_steps);
            if (warp_op(r, w0, w1, pc, at) < 0)
                return -1;
            continue;
        }
        for (uint32_t t = w0; t < w1; t++)
            if (at >> (t - w0) & 1 && step(r, t) < 0)
                return -1;
    }
}

static int run_block(struct run *r)
{
    uint32_t n = r->nthreads;
    memset(r->t, 0, (size_t)n * sizeof *r->t);
    memset(r->pc, 0, n * sizeof *r->pc);
    memset(r->state, TS_RUN, n);
    memset(r->smem, 0, r->smem_bytes);
    for (;;) {
        for (uint32_t w0 = 0; w0 < n; w0 += 32)
            if (run_warp(r, w0, w0 + 32 < n ? w0 + 32 : n) < 0)
                return -1;
        /* every live thread waits at a barrier now: release them */
        int live = 0;
        for (uint32_t t = 0; t < n; t++)
            if (r->state[t] == TS_BAR) {
                r->state[t] = TS_RUN;
                r->pc[t]++;
                live = 1;
            }
        if (!live)
            return 0;
    }
}

enum emu_ptx_result emu_sass_run(const struct emu_sass_prog *g, const struct emu_ptx_launch *l,
                                 const struct emu_ptx_mem *m, char *why, size_t nwhy)
{
    struct run r = { .g = g, .l = l, .m = m, .why = why, .nwhy = nwhy };
    if (why && nwhy)
        why[0] = 0;
    uint64_t nt = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (!g || !nt || nt > 1024 || !l->grid[0] || !l->grid[1] || !l->grid[2]) {
        stop(&r, EMU_PTX_FAULT, "launch shape %ux%ux%u blocks of %ux%ux%u", l->grid[0], l->grid[1], l->grid[2],
             l->block[0], l->block[1], l->block[2]);
        return r.res;
    }
    r.nthreads = (uint32_t)nt;
    uint64_t smem = RESERVED_SMEM + (uint64_t)(g->static_smem + 15) / 16 * 16 + l->dyn_smem;
    if (smem > MAX_SMEM) {
        stop(&r, EMU_PTX_FAULT, "%llu bytes of shared memory", (unsigned long long)smem);
        return r.res;
    }
    r.smem_bytes = (uint32_t)smem;
    r.t = calloc(nt, sizeof *r.t);
    r.pc = calloc(nt, sizeof *r.pc);
    r.state = calloc(nt, 1);
    r.smem = calloc(smem, 1);
    if (!r.t || !r.pc || !r.state || !r.smem) {
        stop(&r, EMU_PTX_FAULT, "out of memory for %llu threads", (unsigned long long)nt);
    } else {
        for (uint32_t z = 0; z < l->grid[2] && r.res == EMU_PTX_DONE; z++)
            for (uint32_t y = 0; y < l->grid[1] && r.res == EMU_PTX_DONE; y++)
                for (uint32_t x = 0; x < l->grid[0] && r.res == EMU_PTX_DONE; x++) {
                    r.ctaid[0] = x;
                    r.ctaid[1] = y;
                    r.ctaid[2] = z;
                    run_block(&r);
                }
    }
    free(r.t);
    free(r.pc);
    free(r.state);
    free(r.smem);
    return r.res;
}

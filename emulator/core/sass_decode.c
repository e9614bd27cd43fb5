/* Decoding a kernel's SASS text, as nvdisasm prints it, into the program
 * the SASS executor runs (sass_prog.h).
 *
 * The text is read by sass_parse.c's tokenizer (emu_sass_parse_raw: each
 * line's guard, mnemonic and operands as printed) and decoded once here: every
 * operand resolved to a register (R0-R254, RZ; uniform UR0-UR62, URZ;
 * predicates P0-P6, PT, UP0-UP6, UPT), an immediate, a constant-bank word, an
 * address, a special register or a branch target. An opcode or modifier the
 * decoder does not know becomes X_BAD, an instruction that stops the run when
 * a thread reaches it (sass_exec.c), so a kernel whose uncovered code is never
 * taken still runs.
 */
#define _GNU_SOURCE
#include "sass_exec.h"
#include "sass_prog.h"
#include "ptx_parse.h"
#include "maya/common.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
    while (n && p[n - 1] == ' ')
        n--; /* "+QNAN , 1" */
    if (n > 6 && (!memcmp(p + n - 6, ".H0_H0", 6) || !memcmp(p + n - 6, ".H1_H1", 6))) {
        o->half = p[n - 4] == '0' ? 1 : 2; /* read by the half ops only: src() refuses it */
        n -= 6;
    } else if (n > 3 && (!memcmp(p + n - 3, ".H0", 3) || !memcmp(p + n - 3, ".H1", 3))) {
        o->half = p[n - 1] == '0' ? 1 : 2; /* F2F.F64.F16 R4, R5.H1: a conversion's source half */
        n -= 3;
    }
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
    if (n >= 2 && n <= 3 && p[0] == 'B' && isdigit((unsigned char)p[1]) && (n == 2 || isdigit((unsigned char)p[2]))) {
        unsigned b = (unsigned)(p[1] - '0');
        if (n == 3)
            b = b * 10 + (unsigned)(p[2] - '0');
        if (b >= NB) {
            d->bad = 2;
            return;
        }
        o->kind = O_B; /* a convergence barrier register (BMOV) */
        o->reg = (uint8_t)b;
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

/* The next part of mnemonic m after offset *i (at a '.'): 0 at the end. */
static int next_part(struct emu_slice m, size_t *i, struct emu_slice *w)
{
    if (*i >= m.n)
        return 0;
    size_t j = *i + 1;
    while (j < m.n && m.p[j] != '.')
        j++;
    *w = (struct emu_slice){ m.p + *i + 1, (uint32_t)(j - *i - 1) };
    *i = j;
    return 1;
}

/* The parts of mnemonic m after its opcode, each one of ok (NULL-ended); 0 if any other. */
static int parts_only(struct emu_slice m, const char *const *ok)
{
    size_t i = emu_ptx_opcode(m).n;
    struct emu_slice w;
    while (next_part(m, &i, &w)) {
        int found = 0;
        for (size_t k = 0; ok[k] && !found; k++)
            found = sl_eq(w, ok[k]);
        if (!found)
            return 0;
    }
    return 1;
}

/* A conversion's types from its mnemonic (F2F.F64.F32, I2F.F64.S64,
 * F2I.U64.F64.TRUNC): the float parts in order in fl[], the integer part in
 * *in; 0 if a type not covered (8- or 16-bit integers) is there. */
static int conv_types(struct emu_slice m, uint8_t fl[2], unsigned *nfl, uint8_t *in, unsigned *nin)
{
    static const struct { const char *w; uint8_t t; } ts[] = {
        { "F16", T_F16 }, { "BF16", T_BF16 }, { "F32", T_F32 }, { "F64", T_F64 },
        { "S32", T_S32 }, { "U32", T_U32 }, { "S64", T_S64 }, { "U64", T_U64 },
    };
    static const char *const narrow[] = { "S16", "U16", "S8", "U8", "E4M3", "E5M2", "TF32" };
    for (size_t i = 0; i < sizeof narrow / sizeof *narrow; i++)
        if (part(m, narrow[i]))
            return 0;
    *nfl = *nin = 0;
    size_t i = emu_ptx_opcode(m).n;
    struct emu_slice w;
    while (next_part(m, &i, &w)) {
        for (size_t k = 0; k < sizeof ts / sizeof *ts; k++)
            if (sl_eq(w, ts[k].w)) {
                if (ts[k].t <= T_F64 && *nfl < 2)
                    fl[(*nfl)++] = ts[k].t;
                else if (ts[k].t > T_F64 && *nin < 1)
                    *in = ts[k].t, (*nin)++;
                else
                    return 0;
            }
    }
    return 1;
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
    } else if (IS("HADD2") || IS("HMUL2") || IS("HFMA2")) {
        /* packed halves: f16x2, or bf16x2 (.BF16_V2); .F32 (HADD2 only): one
         * f32 result; .SAT and .RELU are not covered */
        static const char *const ok[] = { "MMA", "BF16_V2", "BF16", "FTZ", "F32", NULL };
        x->op = X_HOP;
        x->sub = IS("HADD2") ? H_ADD : IS("HMUL2") ? H_MUL : H_FMA;
        x->dt = part(m, "BF16_V2") || part(m, "BF16") ? T_BF16 : T_F16;
        x->st = part(m, "F32") ? T_F32 : T_NONE;
        if (!parts_only(m, ok) || (x->st == T_F32 && x->sub != H_ADD))
            x->op = X_BAD;
        fl = 1;
    } else if (IS("HMNMX2")) {
        /* HMNMX2[.BF16_V2][.FTZ][.NAN] d, a, b, Pmin: per lane min if Pmin,
         * else max; .XORSIGN is not covered */
        static const char *const ok[] = { "BF16_V2", "FTZ", "NAN", NULL };
        x->op = parts_only(m, ok) ? X_HMNMX2 : X_BAD;
        x->dt = part(m, "BF16_V2") ? T_BF16 : T_F16;
        x->sub = part(m, "NAN") != 0; /* a NaN wins */
        fl = 1;
    } else if (IS("FRND")) {
        /* FRND[.F64][.FTZ][.TRUNC|.FLOOR|.CEIL] d, a: to an integral value of
         * the same type, by default to nearest even */
        static const char *const ok[] = { "F64", "FTZ", "TRUNC", "FLOOR", "CEIL", NULL };
        x->op = parts_only(m, ok) ? X_FRND : X_BAD;
        x->dt = part(m, "F64") ? T_F64 : T_F32;
        x->sub = part(m, "TRUNC") ? R_RZ : part(m, "FLOOR") ? R_RM : part(m, "CEIL") ? R_RP : R_RN;
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
    } else if (IS("DADD") || IS("DMUL") || IS("DFMA") || (IS("DSETP") && (x->sub = cmp_kind(m)))) {
        x->op = IS("DADD") ? X_DADD : IS("DMUL") ? X_DMUL : IS("DFMA") ? X_DFMA : X_DSETP;
        fl = 1;
        if (part(m, "RZ") || part(m, "RM") || part(m, "RP") || part(m, "SAT"))
            x->op = X_BAD;
    } else if (IS("BMOV") && part(m, "32") && emu_ptx_opcode(m).n + 3 + (part(m, "CLEAR") ? 6 : 0) == m.n) {
        x->op = X_BMOV; /* BMOV.32[.CLEAR]: no other form */
        x->sub = part(m, "CLEAR") != 0;
    } else if (IS("I2F") || IS("F2I") || IS("F2F")) {
        /* I2F[.float][.int][.RZ|.RM|.RP]: an integer (default S32) to a
         * float (default f32); F2I[.FTZ][.int][.float][.TRUNC|.FLOOR|.CEIL][.NTZ]:
         * a float (default f32) to an integer (default S32); F2F[.FTZ].dst.src[.RZ|.RM|.RP] */
        static const char *const ok_i2f[] = { "F16", "BF16", "F32", "F64", "S32", "U32", "S64", "U64", "RN",
                                              "RZ", "RM", "RP", NULL };
        static const char *const ok_f2i[] = { "F16", "BF16", "F32", "F64", "S32", "U32", "S64", "U64", "FTZ",
                                              "TRUNC", "FLOOR", "CEIL", "NTZ", NULL };
        static const char *const ok_f2f[] = { "F16", "BF16", "F32", "F64", "FTZ", "RN", "RZ", "RM", "RP", NULL };
        int i2f = IS("I2F"), f2f = IS("F2F");
        x->op = i2f ? X_I2F : f2f ? X_F2F : X_F2I;
        x->sub = !i2f && !f2f ? (part(m, "TRUNC") ? R_RZ : part(m, "FLOOR") ? R_RM : part(m, "CEIL") ? R_RP : R_RN)
                              : (part(m, "RZ") ? R_RZ : part(m, "RM") ? R_RM : part(m, "RP") ? R_RP : R_RN);
        uint8_t ft[2] = { T_F32, T_F32 }, it = T_S32;
        unsigned nf = 0, ni = 0;
        int ok = parts_only(m, i2f ? ok_i2f : f2f ? ok_f2f : ok_f2i) && conv_types(m, ft, &nf, &it, &ni);
        if (f2f) {
            x->dt = ft[0], x->st = ft[1];
            ok = ok && nf == 2 && ni == 0 && x->dt != x->st;
        } else {
            x->dt = i2f ? (nf ? ft[0] : T_F32) : (ni ? it : T_S32);
            x->st = i2f ? (ni ? it : T_S32) : (nf ? ft[0] : T_F32);
            ok = ok && nf <= 1;
        }
        if (!ok)
            x->op = X_BAD;
        fl = !i2f;
    } else if (IS("MUFU") && part(m, "RCP") && !part(m, "64H")) {
        x->op = X_MUFU; /* the reciprocal only: the other functions are approximations of their own */
        fl = 1;
    } else if (sl_eq(m, "F2FP.BF16.F32.PACK_AB") || sl_eq(m, "F2FP.F16.F32.PACK_AB") ||
               sl_eq(m, "F2FP.BF16.F32.PACK_AB.RZ") || sl_eq(m, "F2FP.F16.F32.PACK_AB.RZ")) {
        x->op = X_F2FP; /* two f32 to a bf16 or f16 pair, to nearest or toward zero */
        x->dt = part(m, "BF16") ? T_BF16 : T_F16;
        x->sub = part(m, "RZ") ? R_RZ : R_RN;
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

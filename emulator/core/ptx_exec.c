/* Running a small kernel on the CPU from its PTX.
 *
 * The kernel's instruction list (ptx_parse.c) is decoded once into a compact
 * program: each operand resolved to a register slot, an immediate, a special
 * register, a parameter or shared-variable address, or a branch target.
 * Anything the decoder does not know makes the whole kernel not runnable
 * (the launch is then only recorded, as every launch was before): the
 * executor never guesses what an instruction does.
 *
 * A run goes block by block. The threads of a block run one after another,
 * each until it reaches a barrier (bar.sync), a warp operation (shfl, vote,
 * activemask) or its end; a warp operation is done for all lanes of the
 * warp at once when every live lane has reached it, a barrier is released
 * when every live thread of the block has. That order is one a GPU may
 * produce for race-free code; a kernel whose result depends on the order of
 * unsynchronised threads may give another of its possible results.
 *
 * Safety: every global access goes through the host's checks (live device
 * memory only; loads only of real bytes), shared, parameter and register
 * accesses are bounds-checked, and the instruction count is bounded; a
 * malformed program or operand stops the run with a message.
 *
 * Costs: registers are 8 bytes per slot per thread, shared memory one
 * buffer per block; each instruction costs one dispatch plus its operands.
 */
#define _GNU_SOURCE
#include "ptx_exec.h"
#include "exec_common.h"
#include "ptx_parse.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INSTS 65536u         /* kernels longer than this are not run */
#define MAX_REGS 8192u           /* distinct register names */
#define MAX_SMEM (228u << 10)    /* shared memory per block (sm_90's opt-in) */
#define MAX_VEC 4

enum ty { T_NONE, T_U8, T_U16, T_U32, T_U64, T_S8, T_S16, T_S32, T_S64, T_B8, T_B16, T_B32, T_B64, T_F32, T_F64,
          T_PRED };

enum opc {
    OP_MOV, OP_LD, OP_ST, OP_CVTA, OP_ADD, OP_SUB, OP_MUL, OP_MAD, OP_FMA, OP_DIV, OP_REM, OP_MIN, OP_MAX, OP_NEG,
    OP_ABS, OP_AND, OP_OR, OP_XOR, OP_NOT, OP_CNOT, OP_SHL, OP_SHR, OP_SETP, OP_SELP, OP_CVT, OP_BRA, OP_RET,
    OP_BAR, OP_NOP, OP_ATOM, OP_RED, OP_SHFL, OP_VOTE, OP_ACTIVEMASK, OP_POPC, OP_CLZ, OP_RCP, OP_SQRT, OP_RSQRT,
    OP_EX2, OP_LG2, OP_SIN, OP_COS,
};

enum okind { K_NONE, K_REG, K_IMM, K_SREG, K_MEM, K_SYM, K_LABEL, K_VEC };
enum space { S_GENERIC, S_GLOBAL, S_SHARED, S_PARAM, S_LOCAL, S_CONST };
enum sreg { SR_TID, SR_NTID = 3, SR_CTAID = 6, SR_NCTAID = 9, SR_LANEID = 12, SR_WARPID, SR_NWARPID, SR_ZERO };
enum memsym { MS_NONE, MS_PARAM, MS_SHARED };
enum mod { M_LO = 1, M_HI = 2, M_WIDE = 4, M_RN = 8, M_RZ = 16, M_RM = 32, M_RP = 64, M_INT = 128, M_SAT = 256 };

struct opnd {
    uint8_t kind;                /* enum okind */
    uint8_t sym;                 /* K_MEM, K_SYM: enum memsym of the name, MS_NONE: a register base */
    uint8_t nvec;
    uint16_t reg, reg2;          /* K_REG; reg2: the predicate of "%r|%p" (0xffff none) */
    uint16_t vec[MAX_VEC];
    int64_t imm;                 /* K_IMM bits; K_MEM offset; K_SYM / MS_*: the name's offset */
    uint32_t sreg;
};

struct xinst {
    uint8_t op, type, type2, space, cmp, sub; /* sub: atom/shfl/vote kind */
    uint16_t mods;
    int32_t guard;               /* register slot, -1 none */
    uint8_t guard_neg, nops;
    struct opnd o[6];
};

struct shvar {
    char *name;
    uint32_t offset, bytes, align;
    int dynamic;
};

struct emu_ptx_prog {
    char *text;
    struct emu_ptx_kernel k;
    struct xinst *x;
    uint32_t n;
    uint32_t nregs;
    struct shvar *sh;
    uint32_t nsh;
    uint32_t smem_static;
};

/* ---- decoding ---- */

struct dec {
    struct emu_ptx_prog *p;
    char **names;                /* register names, by slot */
    uint32_t nnames, cap;
    char *why;
    size_t nwhy;
    int failed;
};

__attribute__((format(printf, 2, 3))) static void dec_fail(struct dec *d, const char *fmt, ...)
{
    if (d->failed++)
        return;
    if (d->why && d->nwhy) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->why, d->nwhy, fmt, ap);
        va_end(ap);
    }
}

static int slice_eq(const char *p, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(p, w, n) == 0;
}

static int reg_slot(struct dec *d, const char *p, size_t n)
{
    for (uint32_t i = 0; i < d->nnames; i++)
        if (slice_eq(p, n, d->names[i]))
            return (int)i;
    if (d->nnames >= MAX_REGS || n > 64) {
        dec_fail(d, "too many registers");
        return 0;
    }
    if (d->nnames == d->cap) {
        uint32_t c = d->cap ? d->cap * 2 : 64;
        char **nn = realloc(d->names, c * sizeof *nn);
        if (!nn) {
            dec_fail(d, "out of memory");
            return 0;
        }
        d->names = nn;
        d->cap = c;
    }
    d->names[d->nnames] = strndup(p, n);
    if (!d->names[d->nnames]) {
        dec_fail(d, "out of memory");
        return 0;
    }
    return (int)d->nnames++;
}

static const struct { const char *name; uint8_t t; } type_names[] = {
    { "u8", T_U8 }, { "u16", T_U16 }, { "u32", T_U32 }, { "u64", T_U64 }, { "s8", T_S8 }, { "s16", T_S16 },
    { "s32", T_S32 }, { "s64", T_S64 }, { "b8", T_B8 }, { "b16", T_B16 }, { "b32", T_B32 }, { "b64", T_B64 },
    { "f32", T_F32 }, { "f64", T_F64 }, { "pred", T_PRED },
};

static int ty_bytes(int t)
{
    switch (t) {
    case T_U8: case T_S8: case T_B8: case T_PRED: return 1;
    case T_U16: case T_S16: case T_B16: return 2;
    case T_U32: case T_S32: case T_B32: case T_F32: return 4;
    case T_U64: case T_S64: case T_B64: case T_F64: return 8;
    default: return 0;
    }
}

static int ty_signed(int t)
{
    return t == T_S8 || t == T_S16 || t == T_S32 || t == T_S64;
}

static int ty_float(int t)
{
    return t == T_F32 || t == T_F64;
}

static int parse_int(const char *p, size_t n, int64_t *out)
{
    char buf[64];
    if (!n || n >= sizeof buf)
        return -1;
    memcpy(buf, p, n);
    buf[n] = 0;
    char *e;
    if (n > 2 && buf[0] == '0' && (buf[1] == 'f' || buf[1] == 'F' || buf[1] == 'd' || buf[1] == 'D')) {
        unsigned long long v = strtoull(buf + 2, &e, 16);
        if (*e)
            return -1;
        *out = (int64_t)v;
        return 0;
    }
    if (buf[0] == '-')
        *out = (int64_t)strtoll(buf, &e, 0);
    else
        *out = (int64_t)strtoull(buf, &e, 0);
    /* an unsigned suffix ("1U") is allowed */
    if (*e == 'U' || *e == 'u')
        e++;
    return *e ? -1 : 0;
}

static int find_param(const struct emu_ptx_kernel *k, const char *p, size_t n)
{
    for (uint32_t i = 0; i < k->nparams; i++)
        if (k->params[i].name.n == n && memcmp(k->params[i].name.p, p, n) == 0)
            return (int)i;
    return -1;
}

/* The shared variable named [p, p+n): declared ".shared ... name[SIZE]" (or
 * "name[]" with .extern: dynamic shared memory) somewhere in the text. */
static int find_shared(struct dec *d, const char *p, size_t n)
{
    struct emu_ptx_prog *g = d->p;
    for (uint32_t i = 0; i < g->nsh; i++)
        if (slice_eq(p, n, g->sh[i].name))
            return (int)i;
    const char *t = g->text, *end = t + strlen(t);
    for (const char *q = t; (q = memmem(q, (size_t)(end - q), p, n)); q += n) {
        if (q + n >= end || q[n] != '[' || (q > t && (q[-1] != ' ' && q[-1] != '\t')))
            continue;
        const char *ls = q;
        while (ls > t && ls[-1] != '\n')
            ls--;
        const char *sh = memmem(ls, (size_t)(q - ls), ".shared", 7);
        if (!sh)
            continue;
        struct shvar v = { .align = 4 };
        const char *al = memmem(ls, (size_t)(q - ls), ".align", 6);
        if (al)
            v.align = (uint32_t)strtoul(al + 6, NULL, 10);
        if (!v.align || v.align > 256 || (v.align & (v.align - 1)))
            v.align = 16;
        if (q[n + 1] == ']') {
            v.dynamic = 1;
        } else {
            char *e;
            unsigned long b = strtoul(q + n + 1, &e, 10);
            if (*e != ']' || b > MAX_SMEM)
                return -1;
            v.bytes = (uint32_t)b;
            v.offset = (g->smem_static + v.align - 1) / v.align * v.align;
            if (v.offset + v.bytes > MAX_SMEM)
                return -1;
            g->smem_static = v.offset + v.bytes;
        }
        v.name = strndup(p, n);
        struct shvar *ns = realloc(g->sh, (g->nsh + 1) * sizeof *ns);
        if (!v.name || !ns) {
            free(v.name);
            if (ns)
                g->sh = ns;
            return -1;
        }
        g->sh = ns;
        g->sh[g->nsh] = v;
        return (int)g->nsh++;
    }
    return -1;
}

static int is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           c == '.';
}

static void dec_sreg_or_reg(struct dec *d, const char *p, size_t n, struct opnd *o)
{
    static const struct { const char *name; uint32_t id; } sregs[] = {
        { "%tid.x", SR_TID }, { "%tid.y", SR_TID + 1 }, { "%tid.z", SR_TID + 2 },
        { "%ntid.x", SR_NTID }, { "%ntid.y", SR_NTID + 1 }, { "%ntid.z", SR_NTID + 2 },
        { "%ctaid.x", SR_CTAID }, { "%ctaid.y", SR_CTAID + 1 }, { "%ctaid.z", SR_CTAID + 2 },
        { "%nctaid.x", SR_NCTAID }, { "%nctaid.y", SR_NCTAID + 1 }, { "%nctaid.z", SR_NCTAID + 2 },
        { "%laneid", SR_LANEID }, { "%warpid", SR_WARPID }, { "%nwarpid", SR_NWARPID }, { "%smid", SR_ZERO },
    };
    for (size_t i = 0; i < sizeof sregs / sizeof *sregs; i++)
        if (slice_eq(p, n, sregs[i].name)) {
            o->kind = K_SREG;
            o->sreg = sregs[i].id;
            return;
        }
    if (n > 1 && p[1] != '%' && memchr(p + 1, '%', n - 1) == NULL && !memchr(p, '.', n)) {
        o->kind = K_REG;
        o->reg = (uint16_t)reg_slot(d, p, n);
        return;
    }
    dec_fail(d, "special register %.*s", (int)n, p);
}

static void dec_operand(struct dec *d, const struct emu_ptx_kernel *k, struct emu_slice s, struct opnd *o)
{
    memset(o, 0, sizeof *o);
    o->reg2 = 0xffff;
    const char *p = s.p;
    size_t n = s.n;
    if (!n) {
        dec_fail(d, "empty operand");
        return;
    }
    if (p[0] == '{') {
        /* a vector of registers: {%f1, %f2, ...} */
        o->kind = K_VEC;
        const char *e = p + n, *q = p + 1;
        while (q < e && *q != '}') {
            while (q < e && (*q == ' ' || *q == ','))
                q++;
            const char *r = q;
            while (q < e && *q != ',' && *q != '}' && *q != ' ')
                q++;
            if (q == r)
                break;
            if (o->nvec == MAX_VEC || *r != '%') {
                dec_fail(d, "vector operand %.*s", (int)n, p);
                return;
            }
            o->vec[o->nvec++] = (uint16_t)reg_slot(d, r, (size_t)(q - r));
        }
        if (!o->nvec)
            dec_fail(d, "empty vector operand");
        return;
    }
    if (p[0] == '[') {
        if (n < 3 || p[n - 1] != ']') {
            dec_fail(d, "address %.*s", (int)n, p);
            return;
        }
        o->kind = K_MEM;
        const char *a = p + 1, *e = p + n - 1, *q = a;
        while (q < e && *q != '+' && *q != '-')
            q++;
        /* base: a register or a name (parameter, shared variable) */
        const char *be = q;
        while (be > a && be[-1] == ' ')
            be--;
        if (q < e) {
            const char *num = q + 1;
            while (num < e && *num == ' ')
                num++;
            int64_t off;
            if (parse_int(num, (size_t)(e - num), &off) < 0) {
                dec_fail(d, "address offset %.*s", (int)n, p);
                return;
            }
            o->imm = *q == '-' ? -off : off;
        }
        if (a < be && *a == '%') {
            o->sym = MS_NONE;
            o->reg = (uint16_t)reg_slot(d, a, (size_t)(be - a));
            return;
        }
        int pi = find_param(k, a, (size_t)(be - a));
        if (pi >= 0) {
            o->sym = MS_PARAM;
            o->imm += k->params[pi].offset;
            return;
        }
        int si = find_shared(d, a, (size_t)(be - a));
        if (si >= 0 && !d->p->sh[si].dynamic) {
            o->sym = MS_SHARED;
            o->imm += d->p->sh[si].offset;
            return;
        }
        if (si >= 0) {
            o->sym = MS_SHARED;
            o->sreg = 1; /* dynamic: offset from the end of static shared memory */
            return;
        }
        dec_fail(d, "address %.*s (not a register, parameter or shared variable)", (int)n, p);
        return;
    }
    if (p[0] == '%') {
        const char *bar = memchr(p, '|', n);
        if (bar) {
            dec_sreg_or_reg(d, p, (size_t)(bar - p), o);
            struct opnd o2;
            memset(&o2, 0, sizeof o2);
            dec_sreg_or_reg(d, bar + 1, (size_t)(p + n - bar - 1), &o2);
            if (o->kind != K_REG || o2.kind != K_REG)
                dec_fail(d, "operand %.*s", (int)n, p);
            o->reg2 = o2.reg;
            return;
        }
        dec_sreg_or_reg(d, p, n, o);
        return;
    }
    if ((p[0] >= '0' && p[0] <= '9') || p[0] == '-') {
        o->kind = K_IMM;
        if (parse_int(p, n, &o->imm) < 0)
            dec_fail(d, "immediate %.*s", (int)n, p);
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (!is_ident(p[i])) {
            dec_fail(d, "operand %.*s", (int)n, p);
            return;
        }
    int li = emu_ptx_label_find(k, s);
    if (li >= 0) {
        o->kind = K_LABEL;
        o->imm = k->labels[li].inst;
        return;
    }
    int pi = find_param(k, p, n);
    if (pi >= 0) {
        o->kind = K_SYM;
        o->sym = MS_PARAM;
        o->imm = k->params[pi].offset;
        return;
    }
    int si = find_shared(d, p, n);
    if (si >= 0) {
        o->kind = K_SYM;
        o->sym = MS_SHARED;
        o->imm = d->p->sh[si].offset;
        o->sreg = d->p->sh[si].dynamic;
        return;
    }
    dec_fail(d, "symbol %.*s", (int)n, p);
}

static const struct { const char *name; uint8_t op; } opcodes[] = {
    { "mov", OP_MOV }, { "ld", OP_LD }, { "ldu", OP_LD }, { "st", OP_ST }, { "cvta", OP_CVTA }, { "add", OP_ADD },
    { "sub", OP_SUB }, { "mul", OP_MUL }, { "mad", OP_MAD }, { "fma", OP_FMA }, { "div", OP_DIV },
    { "rem", OP_REM }, { "min", OP_MIN }, { "max", OP_MAX }, { "neg", OP_NEG }, { "abs", OP_ABS },
    { "and", OP_AND }, { "or", OP_OR }, { "xor", OP_XOR }, { "not", OP_NOT }, { "cnot", OP_CNOT },
    { "shl", OP_SHL }, { "shr", OP_SHR }, { "setp", OP_SETP }, { "selp", OP_SELP }, { "cvt", OP_CVT },
    { "bra", OP_BRA }, { "ret", OP_RET }, { "exit", OP_RET }, { "bar", OP_BAR }, { "barrier", OP_BAR },
    { "membar", OP_NOP }, { "fence", OP_NOP }, { "atom", OP_ATOM }, { "red", OP_RED }, { "shfl", OP_SHFL },
    { "vote", OP_VOTE }, { "activemask", OP_ACTIVEMASK }, { "popc", OP_POPC }, { "clz", OP_CLZ },
    { "rcp", OP_RCP }, { "sqrt", OP_SQRT }, { "rsqrt", OP_RSQRT }, { "ex2", OP_EX2 }, { "lg2", OP_LG2 },
    { "sin", OP_SIN }, { "cos", OP_COS }, { "prefetch", OP_NOP }, { "prefetchu", OP_NOP },
};

enum cmp { C_EQ = 1, C_NE, C_LT, C_LE, C_GT, C_GE, C_LO, C_LS, C_HI, C_HS, C_NUM, C_NAN };
enum sub { A_ADD = 1, A_MIN, A_MAX, A_EXCH, A_CAS, A_AND, A_OR, A_XOR, A_INC, A_DEC,
           SH_UP, SH_DOWN, SH_BFLY, SH_IDX, V_ALL, V_ANY, V_UNI, V_BALLOT };

/* The parts after the opcode: types, comparison, space, modifiers. */
static void dec_parts(struct dec *d, struct emu_slice op, struct xinst *x)
{
    static const struct { const char *name; uint8_t v; } cmps[] = {
        { "eq", C_EQ }, { "ne", C_NE }, { "lt", C_LT }, { "le", C_LE }, { "gt", C_GT }, { "ge", C_GE },
        { "lo", C_LO }, { "ls", C_LS }, { "hi", C_HI }, { "hs", C_HS }, { "equ", C_EQ }, { "neu", C_NE },
        { "ltu", C_LT }, { "leu", C_LE }, { "gtu", C_GT }, { "geu", C_GE }, { "num", C_NUM }, { "nan", C_NAN },
    };
    static const struct { const char *name; uint8_t v; } subs[] = {
        { "add", A_ADD }, { "min", A_MIN }, { "max", A_MAX }, { "exch", A_EXCH }, { "cas", A_CAS },
        { "and", A_AND }, { "or", A_OR }, { "xor", A_XOR }, { "inc", A_INC }, { "dec", A_DEC },
        { "up", SH_UP }, { "down", SH_DOWN }, { "bfly", SH_BFLY }, { "idx", SH_IDX }, { "all", V_ALL },
        { "any", V_ANY }, { "uni", V_UNI }, { "ballot", V_BALLOT },
    };
    static const struct { const char *name; uint8_t v; } spaces[] = {
        { "global", S_GLOBAL }, { "shared", S_SHARED }, { "param", S_PARAM }, { "local", S_LOCAL },
        { "const", S_CONST },
    };
    static const struct { const char *name; uint16_t v; } mods[] = {
        { "lo", M_LO }, { "hi", M_HI }, { "wide", M_WIDE }, { "rn", M_RN }, { "rz", M_RZ }, { "rm", M_RM },
        { "rp", M_RP }, { "rni", M_RN | M_INT }, { "rzi", M_RZ | M_INT }, { "rmi", M_RM | M_INT },
        { "rpi", M_RP | M_INT }, { "sat", M_SAT },
    };
    /* modifiers that do not change the result here */
    static const char *const ignored[] = {
        "approx", "ftz", "full", "to", "sync", "aligned", "nc", "ca", "cg", "cs", "lu", "cv", "volatile", "relaxed",
        "acquire", "release", "acq_rel", "gpu", "sys", "cta", "uni", "weak", "L1::evict_last", "L1::no_allocate",
        "L2::cache_hint", "L1::evict_first", "L2::128B", "L2::256B", "L2::64B", "noftz", "mmio", "sc",
    };
    const char *p = op.p, *e = op.p + op.n;
    while (p < e && *p != '.')
        p++;
    int ntypes = 0;
    while (p < e) {
        const char *q = ++p;
        while (p < e && *p != '.')
            p++;
        size_t n = (size_t)(p - q);
        int known = 0;
        for (size_t i = 0; !known && i < sizeof type_names / sizeof *type_names; i++)
            if (slice_eq(q, n, type_names[i].name)) {
                if (ntypes++ == 0)
                    x->type = type_names[i].t;
                else
                    x->type2 = type_names[i].t;
                known = 1;
            }
        if (!known && x->op == OP_SETP)
            for (size_t i = 0; !known && i < sizeof cmps / sizeof *cmps; i++)
                if (slice_eq(q, n, cmps[i].name)) {
                    x->cmp = cmps[i].v;
                    known = 1;
                }
        if (!known && (x->op == OP_ATOM || x->op == OP_RED || x->op == OP_SHFL || x->op == OP_VOTE))
            for (size_t i = 0; !known && i < sizeof subs / sizeof *subs; i++)
                if (slice_eq(q, n, subs[i].name)) {
                    x->sub = subs[i].v;
                    known = 1;
                }
        for (size_t i = 0; !known && i < sizeof spaces / sizeof *spaces; i++)
            if (slice_eq(q, n, spaces[i].name)) {
                x->space = spaces[i].v;
                known = 1;
            }
        for (size_t i = 0; !known && i < sizeof mods / sizeof *mods; i++)
            if (slice_eq(q, n, mods[i].name)) {
                x->mods |= mods[i].v;
                known = 1;
            }
        for (size_t i = 0; !known && i < sizeof ignored / sizeof *ignored; i++)
            known = slice_eq(q, n, ignored[i]);
        if (!known && n == 2 && q[0] == 'v' && (q[1] == '2' || q[1] == '4'))
            known = 1; /* vector width: the operand says how many */
        if (!known && x->op == OP_BAR && n > 0)
            known = 1; /* bar.sync, bar.arrive, barrier.sync.aligned, bar.warp.sync */
        if (!known)
            dec_fail(d, "%.*s (modifier .%.*s)", (int)op.n, op.p, (int)n, q);
    }
}

static void decode(struct dec *d)
{
    struct emu_ptx_prog *g = d->p;
    const struct emu_ptx_kernel *k = &g->k;
    if (k->ninsts > MAX_INSTS || k->truncated) {
        dec_fail(d, "kernel too long to run (%u instructions)", k->ninsts);
        return;
    }
    g->x = calloc(k->ninsts ? k->ninsts : 1, sizeof *g->x);
    if (!g->x) {
        dec_fail(d, "out of memory");
        return;
    }
    g->n = k->ninsts;
    for (uint32_t i = 0; i < k->ninsts && !d->failed; i++) {
        const struct emu_ptx_inst *in = &k->insts[i];
        struct xinst *x = &g->x[i];
        struct emu_slice opc = emu_ptx_opcode(in->op);
        int found = 0;
        for (size_t j = 0; j < sizeof opcodes / sizeof *opcodes; j++)
            if (emu_slice_is(opc, opcodes[j].name)) {
                x->op = opcodes[j].op;
                found = 1;
                break;
            }
        if (!found) {
            dec_fail(d, "instruction %.*s", (int)in->op.n, in->op.p);
            return;
        }
        if (x->op == OP_BAR && emu_ptx_has_part(in->op, "warp"))
            x->op = OP_NOP; /* bar.warp.sync: lanes of a warp already run together at warp operations */
        dec_parts(d, in->op, x);
        if (x->op == OP_BAR && (emu_ptx_has_part(in->op, "arrive") || emu_ptx_has_part(in->op, "red")))
            dec_fail(d, "%.*s", (int)in->op.n, in->op.p);
        x->guard = -1;
        if (in->guard.n) {
            x->guard = reg_slot(d, in->guard.p, in->guard.n);
            x->guard_neg = in->guard_neg;
        }
        if (in->nops > 6) {
            dec_fail(d, "%.*s: %u operands", (int)in->op.n, in->op.p, in->nops);
            return;
        }
        x->nops = in->nops;
        for (uint32_t j = 0; j < in->nops; j++)
            dec_operand(d, k, in->ops[j], &x->o[j]);
        if (x->op == OP_BAR && x->nops > 1)
            dec_fail(d, "bar.sync with a thread count");
        if ((x->op == OP_LD || x->op == OP_ST || x->op == OP_ATOM || x->op == OP_RED) &&
            (x->space == S_LOCAL || x->space == S_CONST))
            dec_fail(d, "%.*s (local and constant memory are not covered)", (int)in->op.n, in->op.p);
    }
}

struct emu_ptx_prog *emu_ptx_prog_new(const char *text, size_t bytes, const char *entry, char *why, size_t nwhy)
{
    if (why && nwhy)
        why[0] = 0;
    struct emu_ptx_prog *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->text = malloc(bytes + 1);
    if (!g->text) {
        free(g);
        return NULL;
    }
    memcpy(g->text, text, bytes);
    g->text[bytes] = 0;
    /* a NUL inside the text (a cubin's .nv_debug_ptx_txt ends lines so)
     * would end the shared-variable search: make it a line end */
    for (size_t i = 0; i < bytes; i++)
        if (!g->text[i])
            g->text[i] = '\n';
    struct dec d = { .p = g, .why = why, .nwhy = nwhy };
    if (emu_ptx_parse(g->text, bytes, entry, &g->k) < 0) {
        dec_fail(&d, "no PTX entry %s", entry);
    } else {
        decode(&d);
    }
    g->nregs = d.nnames;
    for (uint32_t i = 0; i < d.nnames; i++)
        free(d.names[i]);
    free(d.names);
    if (d.failed) {
        emu_ptx_prog_free(g);
        return NULL;
    }
    return g;
}

void emu_ptx_prog_free(struct emu_ptx_prog *g)
{
    if (!g)
        return;
    emu_ptx_kernel_free(&g->k);
    for (uint32_t i = 0; i < g->nsh; i++)
        free(g->sh[i].name);
    free(g->sh);
    free(g->x);
    free(g->text);
    free(g);
}

/* ---- running ---- */

enum tstate { TS_RUN, TS_BAR, TS_WARP, TS_EXIT };

struct run {
    const struct emu_ptx_prog *g;
    const struct emu_ptx_launch *l;
    const struct emu_ptx_mem *m;
    uint64_t *regs;              /* nthreads x nregs */
    uint32_t *pc;
    uint8_t *state;
    unsigned char *smem;
    uint32_t smem_bytes, dyn_base;
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

static uint64_t mask_to(int t, uint64_t v)
{
    int b = ty_bytes(t);
    return b >= 8 || b == 0 ? v : v & ((1ull << (8 * b)) - 1);
}

static int64_t sext(int t, uint64_t v)
{
    int b = ty_bytes(t);
    if (b >= 8 || b == 0)
        return (int64_t)v;
    int s = 64 - 8 * b;
    return (int64_t)(v << s) >> s;
}

static float f32_of(uint64_t v)
{
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double f64_of(uint64_t v)
{
    double f;
    memcpy(&f, &v, 8);
    return f;
}

static uint64_t bits_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint64_t bits_f64(double f)
{
    uint64_t u;
    memcpy(&u, &f, 8);
    return u;
}

static double fval(int t, uint64_t v)
{
    return t == T_F64 ? f64_of(v) : (double)f32_of(v);
}

static uint64_t fbits(int t, double v)
{
    return t == T_F64 ? bits_f64(v) : bits_f32((float)v);
}

static uint32_t sreg_val(const struct run *r, uint32_t t, uint32_t id)
{
    const uint32_t *b = r->l->block;
    uint32_t tid[3] = { t % b[0], t / b[0] % b[1], t / (b[0] * b[1]) };
    if (id < 3)
        return tid[id];
    if (id < 6)
        return b[id - 3];
    if (id < 9)
        return r->ctaid[id - 6];
    if (id < 12)
        return r->l->grid[id - 9];
    if (id == SR_LANEID)
        return t % 32;
    if (id == SR_WARPID)
        return t / 32;
    if (id == SR_NWARPID)
        return (r->nthreads + 31) / 32;
    return 0;
}

/* An operand's value (immediates of float instructions are their bits). */
static uint64_t val(const struct run *r, uint32_t t, const struct opnd *o, int type)
{
    switch (o->kind) {
    case K_REG: return r->regs[(uint64_t)t * r->g->nregs + o->reg];
    case K_IMM: return mask_to(type, (uint64_t)o->imm); /* float immediates ("0f...", "0d...") are bits */
    case K_SREG: return sreg_val(r, t, o->sreg);
    case K_SYM: return o->sym == MS_SHARED ? (uint64_t)(o->sreg ? r->dyn_base + (uint32_t)o->imm : (uint32_t)o->imm)
                                            : (uint64_t)o->imm;
    default: return 0;
    }
}

static void set(struct run *r, uint32_t t, uint16_t reg, int type, uint64_t v)
{
    r->regs[(uint64_t)t * r->g->nregs + reg] = type == T_PRED ? (v != 0) : mask_to(type, v);
}

/* Where a memory operand points: its space and address (global: the
 * device address; shared: the offset in the block's shared memory; param:
 * the offset in the parameter buffer). */
static int address(const struct run *r, uint32_t t, const struct xinst *x, const struct opnd *o, int *space,
                   uint64_t *addr)
{
    *space = x->space;
    if (o->sym == MS_PARAM) {
        *space = S_PARAM;
        *addr = (uint64_t)o->imm;
    } else if (o->sym == MS_SHARED) {
        *space = S_SHARED;
        *addr = (uint64_t)o->imm + (o->sreg ? r->dyn_base : 0);
    } else {
        *addr = r->regs[(uint64_t)t * r->g->nregs + o->reg] + (uint64_t)o->imm;
    }
    if (*space == S_GENERIC) {
        uint64_t base = (uint64_t)(uintptr_t)r->smem;
        if (r->smem && *addr >= base && *addr < base + r->smem_bytes) {
            *space = S_SHARED;
            *addr -= base;
        } else {
            *space = S_GLOBAL;
        }
    }
    return 0;
}

static int mem_read(struct run *r, int space, uint64_t addr, uint32_t bytes, void *out)
{
    switch (space) {
    case S_PARAM:
        if (addr + bytes > r->l->param_bytes || addr + bytes < addr)
            return stop(r, EMU_PTX_FAULT, "parameter read at %llu past the %u parameter bytes",
                        (unsigned long long)addr, r->l->param_bytes);
        memcpy(out, (const char *)r->l->params + addr, bytes);
        return 0;
    case S_SHARED:
        if (addr + bytes > r->smem_bytes || addr + bytes < addr)
            return stop(r, EMU_PTX_FAULT, "shared memory read at %llu past the block's %u bytes",
                        (unsigned long long)addr, r->smem_bytes);
        memcpy(out, r->smem + addr, bytes);
        return 0;
    case S_GLOBAL:
        if (r->m->can_read(r->m->ctx, addr, bytes) < 0)
            return stop(r, EMU_PTX_UNREAL, "read of %u bytes at 0x%llx: not real device bytes", bytes,
                        (unsigned long long)addr);
        memcpy(out, (const void *)(uintptr_t)addr, bytes);
        return 0;
    default: return stop(r, EMU_PTX_UNSUPPORTED, "read from an address space not covered");
    }
}

static int mem_write(struct run *r, int space, uint64_t addr, uint32_t bytes, const void *in)
{
    switch (space) {
    case S_SHARED:
        if (addr + bytes > r->smem_bytes || addr + bytes < addr)
            return stop(r, EMU_PTX_FAULT, "shared memory write at %llu past the block's %u bytes",
                        (unsigned long long)addr, r->smem_bytes);
        memcpy(r->smem + addr, in, bytes);
        return 0;
    case S_GLOBAL:
        if (r->m->can_write(r->m->ctx, addr, bytes) < 0)
            return stop(r, EMU_PTX_FAULT, "write of %u bytes at 0x%llx: not in device memory", bytes,
                        (unsigned long long)addr);
        memcpy((void *)(uintptr_t)addr, in, bytes);
        return 0;
    default: return stop(r, EMU_PTX_FAULT, "write to an address space not writable");
    }
}

static int compare(int cmp, int type, uint64_t a, uint64_t b)
{
    if (ty_float(type)) {
        double x = fval(type, a), y = fval(type, b);
        switch (cmp) {
        case C_EQ: return x == y;
        case C_NE: return x != y;
        case C_LT: case C_LO: return x < y;
        case C_LE: case C_LS: return x <= y;
        case C_GT: case C_HI: return x > y;
        case C_GE: case C_HS: return x >= y;
        case C_NUM: return !isnan(x) && !isnan(y);
        case C_NAN: return isnan(x) || isnan(y);
        default: return 0;
        }
    }
    int sgn = ty_signed(type) && cmp != C_LO && cmp != C_LS && cmp != C_HI && cmp != C_HS;
    int64_t sx = sext(type, a), sy = sext(type, b);
    uint64_t ux = mask_to(type, a), uy = mask_to(type, b);
    switch (cmp) {
    case C_EQ: return ux == uy;
    case C_NE: return ux != uy;
    case C_LT: case C_LO: return sgn ? sx < sy : ux < uy;
    case C_LE: case C_LS: return sgn ? sx <= sy : ux <= uy;
    case C_GT: case C_HI: return sgn ? sx > sy : ux > uy;
    case C_GE: case C_HS: return sgn ? sx >= sy : ux >= uy;
    default: return 0;
    }
}

/* Integer and float arithmetic of two or three operands. */
static int arith(struct run *r, const struct xinst *x, uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
    int t = x->type, bits = 8 * ty_bytes(t);
    if (ty_float(t)) {
        double p = fval(t, a), q = fval(t, b), s = fval(t, c), v;
        switch (x->op) {
        case OP_ADD: v = p + q; break;
        case OP_SUB: v = p - q; break;
        case OP_MUL: v = p * q; break;
        case OP_MAD: case OP_FMA: v = t == T_F64 ? fma(p, q, s) : (double)fmaf((float)p, (float)q, (float)s); break;
        case OP_DIV: v = p / q; break;
        case OP_MIN: v = isnan(p) ? q : isnan(q) ? p : (p < q ? p : q); break;
        case OP_MAX: v = isnan(p) ? q : isnan(q) ? p : (p > q ? p : q); break;
        case OP_NEG: v = -p; break;
        case OP_ABS: v = fabs(p); break;
        case OP_RCP: v = 1.0 / p; break;
        case OP_SQRT: v = sqrt(p); break;
        case OP_RSQRT: v = 1.0 / sqrt(p); break;
        case OP_EX2: v = exp2(p); break;
        case OP_LG2: v = log2(p); break;
        case OP_SIN: v = sin(p); break;
        case OP_COS: v = cos(p); break;
        default: return stop(r, EMU_PTX_UNSUPPORTED, "float operation not covered");
        }
        if (x->mods & M_SAT)
            v = v < 0 ? 0 : v > 1 ? 1 : v;
        *out = fbits(t, v);
        return 0;
    }
    if (!bits)
        return stop(r, EMU_PTX_UNSUPPORTED, "integer operation without a type");
    int sgn = ty_signed(t);
    int64_t sa = sext(t, a), sb = sext(t, b);
    uint64_t ua = mask_to(t, a), ub = mask_to(t, b), v;
    switch (x->op) {
    case OP_ADD: v = ua + ub; break;
    case OP_SUB: v = ua - ub; break;
    case OP_MUL:
    case OP_MAD: {
        __int128 p = sgn ? (__int128)sa * sb : (__int128)((unsigned __int128)ua * ub);
        if (x->mods & M_WIDE)
            v = (uint64_t)p; /* 2n bits of an n-bit product: the result type is twice as wide */
        else if (x->mods & M_HI)
            v = (uint64_t)(p >> bits);
        else
            v = (uint64_t)p;
        if (x->op == OP_MAD)
            v += (x->mods & M_WIDE) ? c : mask_to(t, c);
        if (x->mods & M_WIDE) {
            *out = bits >= 32 ? v : v & ((1ull << (2 * bits)) - 1);
            return 0;
        }
        break;
    }
    case OP_DIV:
        if (!ub)
            v = ~0ull; /* what the GPU gives is unspecified; no trap */
        else if (sgn)
            v = (sa == INT64_MIN && sb == -1) ? (uint64_t)sa : (uint64_t)(sa / sb);
        else
            v = ua / ub;
        break;
    case OP_REM:
        if (!ub)
            v = ua;
        else if (sgn)
            v = (sb == -1) ? 0 : (uint64_t)(sa % sb);
        else
            v = ua % ub;
        break;
    case OP_MIN: v = sgn ? (uint64_t)(sa < sb ? sa : sb) : (ua < ub ? ua : ub); break;
    case OP_MAX: v = sgn ? (uint64_t)(sa > sb ? sa : sb) : (ua > ub ? ua : ub); break;
    case OP_NEG: v = (uint64_t)(-(uint64_t)sa); break;
    case OP_ABS: v = (uint64_t)(sa < 0 ? -(uint64_t)sa : (uint64_t)sa); break;
    case OP_AND: v = ua & ub; break;
    case OP_OR: v = ua | ub; break;
    case OP_XOR: v = ua ^ ub; break;
    case OP_NOT: v = t == T_PRED ? !ua : ~ua; break;
    case OP_CNOT: v = ua == 0; break;
    case OP_SHL: v = ub >= (uint64_t)bits ? 0 : ua << ub; break;
    case OP_SHR:
        if (sgn)
            v = (uint64_t)(ub >= (uint64_t)bits ? (sa < 0 ? -1 : 0) : sa >> ub);
        else
            v = ub >= (uint64_t)bits ? 0 : ua >> ub;
        break;
    case OP_POPC: v = (uint64_t)__builtin_popcountll(ua); break;
    case OP_CLZ: v = ua ? (uint64_t)(__builtin_clzll(ua) - (64 - bits)) : (uint64_t)bits; break;
    default: return stop(r, EMU_PTX_UNSUPPORTED, "integer operation not covered");
    }
    *out = mask_to(t, v);
    return 0;
}

static uint64_t convert(const struct xinst *x, uint64_t v)
{
    int dt = x->type, st = x->type2;
    if (ty_float(st) && ty_float(dt)) {
        double f = fval(st, v);
        if (x->mods & M_INT)
            f = (x->mods & M_RZ) ? trunc(f) : (x->mods & M_RM) ? floor(f) : (x->mods & M_RP) ? ceil(f) : nearbyint(f);
        return fbits(dt, f);
    }
    if (ty_float(st)) {
        /* float to integer: rounded as the modifier says, saturated, NaN 0 */
        double f = fval(st, v);
        f = (x->mods & M_RN) ? nearbyint(f) : (x->mods & M_RM) ? floor(f) : (x->mods & M_RP) ? ceil(f) : trunc(f);
        if (isnan(f))
            return 0;
        int b = 8 * ty_bytes(dt);
        if (ty_signed(dt)) {
            double lo = -ldexp(1, b - 1), hi = ldexp(1, b - 1) - 1;
            int64_t i = f <= lo ? (int64_t)lo : f >= hi ? (b == 64 ? INT64_MAX : (int64_t)hi) : (int64_t)f;
            return mask_to(dt, (uint64_t)i);
        }
        double hi = ldexp(1, b) - 1;
        uint64_t u = f <= 0 ? 0 : f >= hi ? (b == 64 ? UINT64_MAX : (uint64_t)hi) : (uint64_t)f;
        return mask_to(dt, u);
    }
    if (ty_float(dt))
        return fbits(dt, ty_signed(st) ? (double)sext(st, v) : (double)mask_to(st, v));
    uint64_t w = ty_signed(st) ? (uint64_t)sext(st, v) : mask_to(st, v);
    return mask_to(dt, w);
}

static int do_atom(struct run *r, uint32_t t, const struct xinst *x)
{
    int has_dst = x->op == OP_ATOM;
    const struct opnd *mo = &x->o[has_dst ? 1 : 0];
    if (mo->kind != K_MEM)
        return stop(r, EMU_PTX_FAULT, "atomic without an address");
    int space;
    uint64_t addr;
    address(r, t, x, mo, &space, &addr);
    int ty = x->type, nb = ty_bytes(ty);
    if (!nb)
        return stop(r, EMU_PTX_UNSUPPORTED, "atomic of a type not covered");
    uint64_t old = 0, b = val(r, t, &x->o[has_dst ? 2 : 1], ty), nv;
    if (mem_read(r, space, addr, (uint32_t)nb, &old) < 0)
        return -1;
    old = mask_to(ty, old);
    struct xinst ax = *x;
    switch (x->sub) {
    case A_ADD: ax.op = OP_ADD; break;
    case A_MIN: ax.op = OP_MIN; break;
    case A_MAX: ax.op = OP_MAX; break;
    case A_AND: ax.op = OP_AND; break;
    case A_OR: ax.op = OP_OR; break;
    case A_XOR: ax.op = OP_XOR; break;
    default: ax.op = OP_NOP; break;
    }
    if (x->sub == A_EXCH)
        nv = b;
    else if (x->sub == A_CAS)
        nv = old == mask_to(ty, b) ? val(r, t, &x->o[3], ty) : old;
    else if (x->sub == A_INC)
        nv = old >= mask_to(ty, b) ? 0 : old + 1;
    else if (x->sub == A_DEC)
        nv = (old == 0 || old > mask_to(ty, b)) ? mask_to(ty, b) : old - 1;
    else if (ax.op == OP_NOP)
        return stop(r, EMU_PTX_UNSUPPORTED, "atomic operation not covered");
    else if (arith(r, &ax, old, b, 0, &nv) < 0)
        return -1;
    if (mem_write(r, space, addr, (uint32_t)nb, &nv) < 0)
        return -1;
    if (has_dst && x->o[0].kind == K_REG)
        set(r, t, x->o[0].reg, ty, old);
    return 0;
}

/* Run thread t until it blocks (barrier, warp operation) or ends. */
static int run_thread(struct run *r, uint32_t t)
{
    const struct emu_ptx_prog *g = r->g;
    uint64_t *R = r->regs + (uint64_t)t * g->nregs;
    for (;;) {
        uint32_t pc = r->pc[t];
        if (pc >= g->n) {
            r->state[t] = TS_EXIT;
            return 0;
        }
        if (++r->steps > r->l->max_steps)
            return stop(r, EMU_PTX_STEPS, "more than %llu instructions", (unsigned long long)r->l->max_steps);
        const struct xinst *x = &g->x[pc];
        if (x->guard >= 0 && (!R[x->guard]) != x->guard_neg) {
            r->pc[t] = pc + 1;
            continue;
        }
        const struct opnd *o = x->o;
        int ty = x->type;
        switch (x->op) {
        case OP_NOP: break;
        case OP_RET: r->state[t] = TS_EXIT; return 0;
        case OP_BAR: r->state[t] = TS_BAR; return 0;
        case OP_SHFL: case OP_VOTE: case OP_ACTIVEMASK: r->state[t] = TS_WARP; return 0;
        case OP_BRA:
            if (x->nops < 1 || o[0].kind != K_LABEL)
                return stop(r, EMU_PTX_FAULT, "branch without a label");
            r->pc[t] = (uint32_t)o[0].imm;
            continue;
        case OP_MOV:
        case OP_CVTA:
            if (x->nops < 2 || o[0].kind != K_REG)
                return stop(r, EMU_PTX_UNSUPPORTED, "mov of this form is not covered");
            {
                uint64_t v = val(r, t, &o[1], ty);
                if (x->op == OP_CVTA && x->space == S_SHARED) {
                    /* generic <-> shared window: cvta.to.shared takes the
                     * generic address, cvta.shared makes one */
                    uint64_t base = (uint64_t)(uintptr_t)r->smem;
                    v = emu_ptx_has_part(g->k.insts[pc].op, "to") ? v - base : v + base;
                }
                set(r, t, o[0].reg, ty == T_NONE ? T_B64 : ty, v);
            }
            break;
        case OP_LD: {
            if (x->nops != 2 || o[1].kind != K_MEM)
                return stop(r, EMU_PTX_FAULT, "load of this form");
            int space, nb = ty_bytes(ty);
            uint64_t addr;
            address(r, t, x, &o[1], &space, &addr);
            int nv = o[0].kind == K_VEC ? o[0].nvec : 1;
            for (int i = 0; i < nv; i++) {
                uint64_t v = 0;
                if (!nb || mem_read(r, space, addr + (uint64_t)i * (uint64_t)nb, (uint32_t)nb, &v) < 0)
                    return nb ? -1 : stop(r, EMU_PTX_UNSUPPORTED, "load without a type");
                set(r, t, o[0].kind == K_VEC ? o[0].vec[i] : o[0].reg, ty, ty_signed(ty) ? (uint64_t)sext(ty, v) : v);
            }
            break;
        }
        case OP_ST: {
            if (x->nops != 2 || o[0].kind != K_MEM)
                return stop(r, EMU_PTX_FAULT, "store of this form");
            int space, nb = ty_bytes(ty);
            uint64_t addr;
            address(r, t, x, &o[0], &space, &addr);
            int nv = o[1].kind == K_VEC ? o[1].nvec : 1;
            for (int i = 0; i < nv; i++) {
                uint64_t v = o[1].kind == K_VEC ? R[o[1].vec[i]] : val(r, t, &o[1], ty);
                if (!nb || mem_write(r, space, addr + (uint64_t)i * (uint64_t)nb, (uint32_t)nb, &v) < 0)
                    return nb ? -1 : stop(r, EMU_PTX_UNSUPPORTED, "store without a type");
            }
            break;
        }
        case OP_ATOM:
        case OP_RED:
            if (do_atom(r, t, x) < 0)
                return -1;
            break;
        case OP_SETP: {
            if (x->nops != 3 || o[0].kind != K_REG)
                return stop(r, EMU_PTX_UNSUPPORTED, "setp of this form is not covered");
            int c = compare(x->cmp, ty, val(r, t, &o[1], ty), val(r, t, &o[2], ty));
            set(r, t, o[0].reg, T_PRED, (uint64_t)c);
            if (o[0].reg2 != 0xffff)
                set(r, t, o[0].reg2, T_PRED, (uint64_t)!c);
            break;
        }
        case OP_SELP:
            if (x->nops != 4 || o[0].kind != K_REG)
                return stop(r, EMU_PTX_FAULT, "selp of this form");
            set(r, t, o[0].reg, ty, val(r, t, &o[3], T_PRED) ? val(r, t, &o[1], ty) : val(r, t, &o[2], ty));
            break;
        case OP_CVT:
            if (x->nops != 2 || o[0].kind != K_REG || !x->type2)
                return stop(r, EMU_PTX_UNSUPPORTED, "cvt of this form is not covered");
            set(r, t, o[0].reg, ty, convert(x, val(r, t, &o[1], x->type2)));
            break;
        default: {
            /* arithmetic: d, a [, b [, c]] */
            if (x->nops < 2 || o[0].kind != K_REG)
                return stop(r, EMU_PTX_FAULT, "operation without a destination");
            uint64_t a = val(r, t, &o[1], ty), b = x->nops > 2 ? val(r, t, &o[2], ty) : 0;
            uint64_t c = 0;
            if (x->nops > 3)
                c = val(r, t, &o[3], (x->mods & M_WIDE) ? (ty_signed(ty) ? T_S64 : T_U64) : ty);
            uint64_t v;
            if (arith(r, x, a, b, c, &v) < 0)
                return -1;
            if (x->mods & M_WIDE) {
                int wt = ty_bytes(ty) == 4 ? (ty_signed(ty) ? T_S64 : T_U64) : (ty_signed(ty) ? T_S32 : T_U32);
                set(r, t, o[0].reg, wt, v);
            } else {
                set(r, t, o[0].reg, ty == T_PRED ? T_PRED : ty, v);
            }
            break;
        }
        }
        r->pc[t] = pc + 1;
    }
}

/* The lanes [w0, w1) of a warp all at the same warp operation: do it. */
static int warp_op(struct run *r, uint32_t w0, uint32_t w1)
{
    const struct emu_ptx_prog *g = r->g;
    uint32_t pc = UINT32_MAX, live = 0;
    for (uint32_t t = w0; t < w1; t++) {
        if (r->state[t] == TS_EXIT)
            continue;
        if (r->state[t] != TS_WARP || (pc != UINT32_MAX && r->pc[t] != pc))
            return stop(r, EMU_PTX_UNSUPPORTED, "lanes of a warp at different warp operations or barriers");
        pc = r->pc[t];
        live |= 1u << (t - w0);
    }
    if (pc == UINT32_MAX)
        return 0;
    const struct xinst *x = &g->x[pc];
    uint64_t vals[32] = { 0 };
    for (uint32_t t = w0; t < w1; t++)
        if (live >> (t - w0) & 1) {
            if (x->op == OP_SHFL)
                vals[t - w0] = x->nops > 1 ? val(r, t, &x->o[1], T_B32) : 0;
            else if (x->op == OP_VOTE)
                vals[t - w0] = x->nops > 1 ? val(r, t, &x->o[1], T_PRED) : 0;
        }
    for (uint32_t t = w0; t < w1; t++) {
        if (!(live >> (t - w0) & 1))
            continue;
        uint32_t lane = t - w0;
        const struct opnd *o = x->o;
        if (x->nops < 1 || o[0].kind != K_REG)
            return stop(r, EMU_PTX_FAULT, "warp operation without a destination");
        if (x->op == OP_ACTIVEMASK) {
            set(r, t, o[0].reg, T_B32, live);
        } else if (x->op == OP_VOTE) {
            uint32_t ballot = 0;
            for (uint32_t i = 0; i < 32; i++)
                if ((live >> i & 1) && vals[i])
                    ballot |= 1u << i;
            uint64_t v = x->sub == V_BALLOT ? ballot
                         : x->sub == V_ALL  ? ballot == live
                         : x->sub == V_ANY  ? ballot != 0
                         : x->sub == V_UNI  ? (ballot == 0 || ballot == live)
                                            : 0;
            if (!x->sub)
                return stop(r, EMU_PTX_UNSUPPORTED, "vote of this kind is not covered");
            set(r, t, o[0].reg, x->sub == V_BALLOT ? T_B32 : T_PRED, v);
        } else {
            if (x->nops < 4)
                return stop(r, EMU_PTX_FAULT, "shfl with %u operands", x->nops);
            uint32_t b = (uint32_t)val(r, t, &o[2], T_U32), c = (uint32_t)val(r, t, &o[3], T_U32);
            static const int modes[] = { [SH_UP - SH_UP] = EMU_SHFL_UP, [SH_DOWN - SH_UP] = EMU_SHFL_DOWN,
                                         [SH_BFLY - SH_UP] = EMU_SHFL_BFLY, [SH_IDX - SH_UP] = EMU_SHFL_IDX };
            if (x->sub < SH_UP || x->sub > SH_IDX)
                return stop(r, EMU_PTX_UNSUPPORTED, "shfl of this kind is not covered");
            int ok;
            uint32_t j = emu_shfl_src(modes[x->sub - SH_UP], lane, b, c, live, &ok);
            set(r, t, o[0].reg, T_B32, vals[j]);
            if (o[0].reg2 != 0xffff)
                set(r, t, o[0].reg2, T_PRED, ok);
        }
        r->state[t] = TS_RUN;
        r->pc[t] = pc + 1;
    }
    return 0;
}

static int run_block(struct run *r)
{
    uint32_t n = r->nthreads;
    memset(r->regs, 0, (size_t)n * r->g->nregs * sizeof *r->regs);
    memset(r->pc, 0, n * sizeof *r->pc);
    memset(r->state, TS_RUN, n);
    memset(r->smem, 0, r->smem_bytes);
    for (;;) {
        int any_run = 0;
        for (uint32_t w0 = 0; w0 < n; w0 += 32) {
            uint32_t w1 = w0 + 32 < n ? w0 + 32 : n;
            for (;;) {
                for (uint32_t t = w0; t < w1; t++)
                    if (r->state[t] == TS_RUN && run_thread(r, t) < 0)
                        return -1;
                int at_warp = 0, at_bar = 0;
                for (uint32_t t = w0; t < w1; t++) {
                    at_warp += r->state[t] == TS_WARP;
                    at_bar += r->state[t] == TS_BAR;
                }
                if (!at_warp)
                    break;
                if (at_bar)
                    return stop(r, EMU_PTX_UNSUPPORTED, "lanes of a warp at a barrier and a warp operation");
                if (warp_op(r, w0, w1) < 0)
                    return -1;
                any_run = 1;
            }
        }
        int live = 0, at_bar = 0;
        for (uint32_t t = 0; t < n; t++) {
            live += r->state[t] != TS_EXIT;
            at_bar += r->state[t] == TS_BAR;
        }
        if (!live)
            return 0;
        if (at_bar == live) {
            for (uint32_t t = 0; t < n; t++)
                if (r->state[t] == TS_BAR) {
                    r->state[t] = TS_RUN;
                    r->pc[t]++;
                }
            continue;
        }
        if (!any_run)
            return stop(r, EMU_PTX_UNSUPPORTED, "threads wait at a barrier others never reach");
    }
}

enum emu_ptx_result emu_ptx_run(const struct emu_ptx_prog *g, const struct emu_ptx_launch *l,
                                const struct emu_ptx_mem *m, char *why, size_t nwhy)
{
    struct run r = { .g = g, .l = l, .m = m, .why = why, .nwhy = nwhy };
    if (why && nwhy)
        why[0] = 0;
    uint64_t nt = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (!nt || nt > 1024 || !l->grid[0] || !l->grid[1] || !l->grid[2]) {
        stop(&r, EMU_PTX_FAULT, "launch shape %ux%ux%u blocks of %ux%ux%u", l->grid[0], l->grid[1], l->grid[2],
             l->block[0], l->block[1], l->block[2]);
        return r.res;
    }
    r.nthreads = (uint32_t)nt;
    r.dyn_base = (g->smem_static + 15) / 16 * 16;
    uint64_t smem = (uint64_t)r.dyn_base + l->dyn_smem;
    if (smem > MAX_SMEM) {
        stop(&r, EMU_PTX_FAULT, "%llu bytes of shared memory", (unsigned long long)smem);
        return r.res;
    }
    r.smem_bytes = (uint32_t)smem;
    r.regs = calloc(nt * (g->nregs ? g->nregs : 1), sizeof *r.regs);
    r.pc = calloc(nt, sizeof *r.pc);
    r.state = calloc(nt, 1);
    r.smem = calloc(smem ? smem : 1, 1);
    if (!r.regs || !r.pc || !r.state || !r.smem) {
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
    free(r.regs);
    free(r.pc);
    free(r.state);
    free(r.smem);
    return r.res;
}

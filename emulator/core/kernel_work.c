/* Reading a kernel's work from its PTX: what one thread loads, stores and
 * computes, each multiplied by how often the thread gets there.
 *
 * One pass over the instructions interprets the integer arithmetic
 * symbolically (the value each instruction writes: kernel_value.c): every
 * register holds an expression (struct maya_kexpr) over
 * the parameters, the special registers (%tid, %ntid, %ctaid, %nctaid) and
 * constants, or "unknown" once it depends on memory. Branches give the
 * share of threads that take them (a comparison of known expressions,
 * resolved per launch; an unknown one counts half); a label joins what
 * reaches it (values that differ become their weighted mix). The loops are
 * found before that pass (kernel_loops.c). A backward
 * branch closes a loop: the register the test compares, written in the
 * body as "itself plus a step that does not change in the loop", gives the
 * trip count from its value on entry, the bound and the step (MAYA_KX_TRIP).
 * Values a loop changes are loop-carried (MAYA_KX_PHI) inside it and, after
 * it, their entry value plus trip count times step.
 *
 * Each instruction's amounts (bytes by memory space, FLOPs by precision and
 * unit, special-function ops, issued instructions) go into terms keyed by
 * (how often, innermost loop, class, pointer parameter); each term's
 * multiplier is then its block's frequency times the trip counts of its
 * loops. What the multipliers come to for a launch is the estimator's job
 * (estimator/kernel_work.c).
 *
 * Costs: one pass, O(instructions x registers joined at labels); the
 * expressions are hash-consed (kernel_expr.c: equal expressions are one node), so that
 * joins of equal values stay equal. Everything is bounded (expressions,
 * terms, pending joins); past a bound the summary is flagged truncated.
 */
#define _GNU_SOURCE
#include "maya/kwork.h"
#include "kernel_work.h"
#include "kernel_work_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_parse.h"

/* ---- registers ---- */

static uint32_t shash(struct emu_slice s)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < s.n; i++)
        h = (h ^ (unsigned char)s.p[i]) * 16777619u;
    return h;
}

static int reg_grow(struct kw *w)
{
    uint32_t ncap = w->capregs ? w->capregs * 2 : 512;
    struct emu_slice *nn = realloc(w->rname, ncap * sizeof *nn);
    if (!nn)
        return -1;
    w->rname = nn;
    int32_t *ne = realloc(w->env, ncap * sizeof *ne);
    if (!ne)
        return -1;
    w->env = ne;
    uint32_t bits = 1;
    while ((1u << bits) < ncap * 2)
        bits++;
    uint32_t *nh = calloc((size_t)1 << bits, sizeof *nh);
    if (!nh)
        return -1;
    for (uint32_t i = 0; i < w->nregs; i++) {
        uint32_t s = shash(w->rname[i]) & ((1u << bits) - 1);
        while (nh[s])
            s = (s + 1) & ((1u << bits) - 1);
        nh[s] = i + 1;
    }
    free(w->rhash);
    w->rhash = nh;
    w->rbits = bits;
    w->capregs = ncap;
    /* joins pending at labels hold an env of the old size */
    for (uint32_t i = 0; w->pend && i < w->k->nlabels; i++)
        if (w->pend[i].env) {
            int32_t *pe = realloc(w->pend[i].env, ncap * sizeof *pe);
            if (!pe)
                return -1;
            for (uint32_t j = w->nregs; j < ncap; j++)
                pe[j] = X_UNKNOWN;
            w->pend[i].env = pe;
        }
    return 0;
}

/* The id of register s, made on first sight; -1 if out of memory. */
static int32_t reg_id(struct kw *w, struct emu_slice s)
{
    if (w->nregs == w->capregs && reg_grow(w) < 0) {
        w->oom = 1;
        return -1;
    }
    uint32_t mask = (1u << w->rbits) - 1, h = shash(s) & mask;
    for (; w->rhash[h]; h = (h + 1) & mask) {
        struct emu_slice *n = &w->rname[w->rhash[h] - 1];
        if (n->n == s.n && memcmp(n->p, s.p, s.n) == 0)
            return (int32_t)(w->rhash[h] - 1);
    }
    w->rname[w->nregs] = s;
    w->env[w->nregs] = X_UNKNOWN;
    w->rhash[h] = w->nregs + 1;
    return (int32_t)w->nregs++;
}

int32_t kw_reg_id(struct kw *w, struct emu_slice s)
{
    return reg_id(w, s);
}

static int sreg_of(struct emu_slice s)
{
    static const char *const names[MAYA_SR_NSREGS] = {
        "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z",
        "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid", "%warpid",
    };
    for (int i = 0; i < MAYA_SR_NSREGS; i++)
        if (emu_slice_is(s, names[i]))
            return i;
    return -1;
}

/* A SASS register: R12, UR4, P0, UP1 (RZ, URZ, PT, UPT are constants). */
static int sass_reg(struct emu_slice s)
{
    uint32_t i = s.n && s.p[0] == 'U' ? 1 : 0;
    if (i >= s.n || (s.p[i] != 'R' && s.p[i] != 'P') || i + 1 >= s.n)
        return 0;
    for (uint32_t j = i + 1; j < s.n; j++)
        if (!isdigit((unsigned char)s.p[j]))
            return 0;
    return 1;
}

int kw_is_reg(struct emu_slice s)
{
    if (sass_reg(s))
        return 1;
    if (s.n < 2 || s.p[0] != '%')
        return 0;
    for (uint32_t i = 1; i < s.n; i++)
        if (!isalnum((unsigned char)s.p[i]) && s.p[i] != '_' && s.p[i] != '$')
            return 0;
    return 1;
}

/* A numeric literal: decimal, 0x hex, 0f / 0d IEEE hex; 1 if s is one. */
int kw_literal(struct emu_slice s, double *v)
{
    char buf[64];
    if (s.n == 0 || s.n >= sizeof buf)
        return 0;
    memcpy(buf, s.p, s.n);
    buf[s.n] = 0;
    char *p = buf;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if ((p[0] == '0') && (p[1] == 'f' || p[1] == 'F') && strlen(p) == 10) {
        uint32_t bits = (uint32_t)strtoul(p + 2, NULL, 16);
        float f;
        memcpy(&f, &bits, sizeof f);
        *v = neg ? -(double)f : (double)f;
        return isfinite(*v);
    }
    if ((p[0] == '0') && (p[1] == 'd' || p[1] == 'D') && strlen(p) == 18) {
        uint64_t bits = strtoull(p + 2, NULL, 16);
        double d;
        memcpy(&d, &bits, sizeof d);
        *v = neg ? -d : d;
        return isfinite(*v);
    }
    if (!isdigit((unsigned char)*p))
        return 0;
    char *end;
    unsigned long long u = strtoull(p, &end, 0);
    if (*end == 'U' || *end == 'u')
        end++;
    if (*end)
        return 0;
    *v = neg ? -(double)u : (double)u;
    return 1;
}

/* A constant-bank operand of SASS, c[0x0][0x210]: the block and grid sizes
 * (offsets 0x0..0x14) or a parameter (from param_base on), `bytes` wide,
 * sign-extended when `sgn` (LDC.S8, LDC.S16). An indexed read,
 * c[0x0][R8+0x210], is an element of an array in the parameters at the
 * offset the register gives (PyTorch's tensor lists: a block's tensor,
 * its chunk, the tensor's size and address). */
uint32_t kw_cbank(struct kw *w, struct emu_slice s, unsigned bytes, int sgn)
{
    char buf[48];
    if (s.n >= sizeof buf || s.n < 9 || memcmp(s.p, "c[0x0][", 7) != 0 || s.p[s.n - 1] != ']')
        return X_UNKNOWN;
    memcpy(buf, s.p + 7, s.n - 8);
    buf[s.n - 8] = 0;
    const struct emu_ptx_kernel *k = w->k;
    unsigned long off;
    if (!strcmp(buf, "RZ"))
        off = 0;
    else if (buf[0] == 'R' || buf[0] == 'U') {
        char *plus = strchr(buf, '+'), *end = NULL;
        unsigned long add = plus ? strtoul(plus + 1, &end, 16) : 0;
        if (plus && (*end || strncmp(plus + 1, "0x", 2) != 0))
            return X_UNKNOWN;
        /* the register's name in the instruction's text, which outlives
         * this buffer (the register table keeps names) */
        uint32_t r = kw_operand(w, (struct emu_slice){ s.p + 7, plus ? (uint32_t)(plus - buf) : (uint32_t)strlen(buf) });
        if (r == X_UNKNOWN)
            return X_UNKNOWN;
        uint32_t at = kx_bin(w, MAYA_KX_ADD, r, kx_const(w, (double)add - k->param_base));
        return at == X_UNKNOWN ? X_UNKNOWN : kx_node(w, MAYA_KX_PARAM_AT, sgn ? 1 : 0, at, 0, 0, bytes);
    } else {
        char *end;
        off = strtoul(buf, &end, 16);
        if (*end || strncmp(buf, "0x", 2) != 0)
            return X_UNKNOWN;
    }
    if (off < 0x18 && bytes <= 4 && off % 4 == 0) { /* %ntid.x y z, then %nctaid.x y z */
        uint32_t size = kx_node(w, MAYA_KX_SREG,
                                (uint8_t)(off < 0xc ? MAYA_SR_NTID_X + off / 4 : MAYA_SR_NCTAID_X + (off - 0xc) / 4), 0, 0, 0, 0);
        /* LDC.U16 of one (a block count nvcc knows fits): its low bits */
        return bytes == 4 ? size : kx_bin(w, MAYA_KX_AND, size, kx_const(w, bytes == 2 ? 65535 : 255));
    }
    if (off >= k->param_base && off + bytes <= (uint64_t)k->param_base + k->param_bytes)
        return kx_node(w, MAYA_KX_PARAM, sgn ? 1 : 0, (uint32_t)(off - k->param_base), bytes, 0, 0);
    return X_UNKNOWN;
}


/* SASS spellings: constants, negations, special registers, the constant bank. */
static uint32_t sass_operand(struct kw *w, struct emu_slice s, int *done)
{
    static const struct { const char *name; int sreg; } srs[] = {
        { "SR_TID.X", MAYA_SR_TID_X }, { "SR_TID.Y", MAYA_SR_TID_Y }, { "SR_TID.Z", MAYA_SR_TID_Z },
        { "SR_CTAID.X", MAYA_SR_CTAID_X }, { "SR_CTAID.Y", MAYA_SR_CTAID_Y }, { "SR_CTAID.Z", MAYA_SR_CTAID_Z },
        { "SR_LANEID", MAYA_SR_LANEID },
    };
    *done = 1;
    if (emu_slice_is(s, "RZ") || emu_slice_is(s, "URZ") || emu_slice_is(s, "!PT") || emu_slice_is(s, "!UPT"))
        return X_ZERO;
    if (emu_slice_is(s, "PT") || emu_slice_is(s, "UPT"))
        return X_ONE;
    for (size_t i = 0; i < sizeof srs / sizeof *srs; i++)
        if (emu_slice_is(s, srs[i].name))
            return kx_node(w, MAYA_KX_SREG, (uint8_t)srs[i].sreg, 0, 0, 0, 0);
    if (s.n > 1 && s.p[0] == '!' && sass_reg((struct emu_slice){ s.p + 1, s.n - 1 }))
        return kx_not(w, kw_operand(w, (struct emu_slice){ s.p + 1, s.n - 1 }));
    if (s.n > 1 && s.p[0] == '-' && sass_reg((struct emu_slice){ s.p + 1, s.n - 1 }))
        return kx_bin(w, MAYA_KX_SUB, X_ZERO, kw_operand(w, (struct emu_slice){ s.p + 1, s.n - 1 }));
    if (s.n > 2 && s.p[0] == 'c' && s.p[1] == '[')
        return kw_cbank(w, s, 4, 0);
    if (s.n > 3 && s.p[0] == '-' && s.p[1] == 'c' && s.p[2] == '[') /* IADD3 R0, R112, -c[0x0][0x214], R0 */
        return kx_bin(w, MAYA_KX_SUB, X_ZERO, kw_cbank(w, (struct emu_slice){ s.p + 1, s.n - 1 }, 4, 0));
    *done = 0;
    return X_UNKNOWN;
}

/* The expression an operand reads. */
uint32_t kw_operand(struct kw *w, struct emu_slice s)
{
    double v;
    if (w->k->sass) {
        int done;
        uint32_t e = sass_operand(w, s, &done);
        if (done)
            return e;
    }
    int sr = sreg_of(s);
    if (sr >= 0)
        return kx_node(w, MAYA_KX_SREG, (uint8_t)sr, 0, 0, 0, 0);
    if (kw_literal(s, &v))
        return kx_const(w, v);
    if (kw_is_reg(s)) {
        int32_t r = reg_id(w, s);
        return r < 0 ? X_UNKNOWN : (uint32_t)w->env[r];
    }
    return X_UNKNOWN;
}

static void set_reg(struct kw *w, struct emu_slice s, uint32_t e)
{
    /* "%r1|%p2" (shfl, setp with two results) and "{%r1, %r2}" */
    if (s.n && s.p[0] == '{') {
        const char *p = s.p + 1, *end = s.p + s.n;
        while (p < end) {
            while (p < end && (*p == ' ' || *p == '\t' || *p == ',' || *p == '}'))
                p++;
            const char *q = p;
            while (q < end && *q != ',' && *q != '}' && *q != ' ' && *q != '\t')
                q++;
            if (q > p) {
                int32_t r = reg_id(w, (struct emu_slice){ p, (uint32_t)(q - p) });
                if (r >= 0)
                    w->env[r] = X_UNKNOWN;
            }
            p = q;
        }
        return;
    }
    for (uint32_t i = 0; i < s.n; i++)
        if (s.p[i] == '|') {
            set_reg(w, (struct emu_slice){ s.p, i }, e);
            set_reg(w, (struct emu_slice){ s.p + i + 1, s.n - i - 1 }, X_UNKNOWN);
            return;
        }
    if (!kw_is_reg(s))
        return;
    int32_t r = reg_id(w, s);
    if (r >= 0)
        w->env[r] = (int32_t)e;
}

/* ---- mnemonics ---- */

static int op_is(struct emu_slice op, const char *word)
{
    return emu_slice_is(emu_ptx_opcode(op), word);
}

/* Size of the last scalar type named in the mnemonic (".f32", ".b128", ...). */
unsigned kw_type_of(struct emu_slice op, char *kind)
{
    static const struct { const char *name; unsigned bytes; char kind; } types[] = {
        { "f16x2", 4, 'h' }, { "bf16x2", 4, 'h' }, { "f32x2", 8, 'F' }, { "f16", 2, 'h' }, { "bf16", 2, 'h' },
        { "f32", 4, 'f' }, { "f64", 8, 'd' }, { "b128", 16, 'b' }, { "u64", 8, 'u' }, { "s64", 8, 's' },
        { "b64", 8, 'b' }, { "u32", 4, 'u' }, { "s32", 4, 's' }, { "b32", 4, 'b' }, { "u16", 2, 'u' },
        { "s16", 2, 's' }, { "b16", 2, 'b' }, { "u8", 1, 'u' }, { "s8", 1, 's' }, { "b8", 1, 'b' },
        { "pred", 1, 'p' }, { "tf32", 4, 't' }, { "e4m3", 1, '8' }, { "e5m2", 1, '8' },
    };
    unsigned best = 0;
    uint32_t at = 0;
    char k = 0;
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        size_t w = strlen(types[i].name);
        for (uint32_t j = 0; j + 1 + w <= op.n; j++)
            if (op.p[j] == '.' && memcmp(op.p + j + 1, types[i].name, w) == 0 &&
                (j + 1 + w == op.n || op.p[j + 1 + w] == '.') && (!best || j >= at)) {
                best = types[i].bytes;
                at = j;
                k = types[i].kind;
            }
    }
    if (kind)
        *kind = k;
    return best;
}

unsigned kw_vec_of(struct emu_slice op)
{
    return emu_ptx_has_part(op, "v8") ? 8 : emu_ptx_has_part(op, "v4") ? 4 : emu_ptx_has_part(op, "v2") ? 2 : 1;
}

/* "m16n8k16" in a mnemonic: m, n, k. */
static int shape_of(struct emu_slice op, unsigned *m, unsigned *n, unsigned *k)
{
    for (uint32_t i = 0; i + 1 < op.n; i++) {
        if (op.p[i] != '.' || op.p[i + 1] != 'm')
            continue;
        unsigned v[3] = { 0, 0, 0 };
        const char *p = op.p + i + 1, *end = op.p + op.n;
        const char want[3] = { 'm', 'n', 'k' };
        int ok = 1;
        for (int d = 0; d < 3 && ok; d++) {
            if (p >= end || *p != want[d]) {
                ok = 0;
                break;
            }
            p++;
            while (p < end && isdigit((unsigned char)*p) && v[d] < 100000)
                v[d] = v[d] * 10 + (unsigned)(*p++ - '0');
            ok = v[d] > 0;
        }
        if (ok) {
            *m = v[0], *n = v[1], *k = v[2];
            return 1;
        }
    }
    return 0;
}

/* Tensor-core class from the input types named in a mnemonic. */
static uint8_t mma_class(struct emu_slice op)
{
    if (emu_ptx_has_part(op, "tf32"))
        return MAYA_KW_MMA_TF32;
    if (emu_ptx_has_part(op, "e4m3") || emu_ptx_has_part(op, "e5m2") || emu_ptx_has_part(op, "e2m1") ||
        emu_ptx_has_part(op, "e3m2") || emu_ptx_has_part(op, "e2m3"))
        return MAYA_KW_MMA_FP8;
    if (emu_ptx_has_part(op, "s8") || emu_ptx_has_part(op, "u8") || emu_ptx_has_part(op, "s4") ||
        emu_ptx_has_part(op, "u4") || emu_ptx_has_part(op, "b1"))
        return MAYA_KW_MMA_INT8;
    if (emu_ptx_has_part(op, "f64"))
        return MAYA_KW_MMA_FP64;
    return MAYA_KW_MMA_FP16;
}

/* Byte offset of the pointer parameter an address expression starts from. */
uint16_t kw_base_param(const struct kw *w, uint32_t e, int depth)
{
    const struct maya_kexpr *x = &w->x[e];
    if (depth > MAX_WALK)
        return MAYA_KW_NO_PARAM;
    switch (x->op) {
    case MAYA_KX_PARAM:
        /* a pointer: 8 bytes, or in SASS the low half of one */
        return x->b == 8 || (w->k->sass && x->b == 4 && x->a % 8 == 0) ? x->a : MAYA_KW_NO_PARAM;
    case MAYA_KX_ADD: {
        uint16_t p = kw_base_param(w, x->a, depth + 1);
        return p != MAYA_KW_NO_PARAM ? p : kw_base_param(w, x->b, depth + 1);
    }
    case MAYA_KX_SUB: case MAYA_KX_PHI:
        return kw_base_param(w, x->a, depth + 1);
    case MAYA_KX_SEL: {
        uint16_t p = kw_base_param(w, x->a, depth + 1);
        return p != MAYA_KW_NO_PARAM ? p : kw_base_param(w, x->b, depth + 1);
    }
    default:
        return MAYA_KW_NO_PARAM;
    }
}

/* How many parameters (at most 2) base_param could have chosen from:
 * pointer-sized ones along the sums, differences and selects of e. */
static unsigned param_leaves(const struct kw *w, uint32_t e, int depth)
{
    const struct maya_kexpr *x = &w->x[e];
    if (depth > MAX_WALK)
        return 2; /* too deep to tell: as if two */
    switch (x->op) {
    case MAYA_KX_PARAM:
        return kw_base_param(w, e, depth) != MAYA_KW_NO_PARAM;
    case MAYA_KX_ADD: case MAYA_KX_SEL: {
        unsigned n = param_leaves(w, x->a, depth + 1);
        n += param_leaves(w, x->b, depth + 1);
        return n > 2 ? 2 : n;
    }
    case MAYA_KX_SUB: case MAYA_KX_PHI:
        return param_leaves(w, x->a, depth + 1);
    default:
        return 0;
    }
}

/* The parameter a store's address starts from (base_param); an address
 * that could start from either of two (a pointer plus a 64-bit integer
 * parameter) does not say which buffer it writes: flagged. */
static uint16_t stored_param(struct kw *w, uint32_t a)
{
    if (param_leaves(w, a, 0) > 1)
        w->flags |= MAYA_KW_F_STORES_UNKNOWN;
    return kw_base_param(w, a, 0);
}

/* The special registers that differ between blocks, and between the
 * threads of a block (bits by MAYA_SR_*). */
#define SR_BIT(r) (1u << (r))
#define SREGS_OF_BLOCK (SR_BIT(MAYA_SR_CTAID_X) | SR_BIT(MAYA_SR_CTAID_Y) | SR_BIT(MAYA_SR_CTAID_Z))
#define SREGS_OF_THREAD (SR_BIT(MAYA_SR_TID_X) | SR_BIT(MAYA_SR_TID_Y) | SR_BIT(MAYA_SR_TID_Z) | \
                         SR_BIT(MAYA_SR_LANEID) | SR_BIT(MAYA_SR_WARPID))
/* ... and between the threads of one row of a block (a warp covers 32 /
 * blockDim.x rows when the rows are shorter than a warp) */
#define SREGS_OF_ROW (SR_BIT(MAYA_SR_TID_X) | SR_BIT(MAYA_SR_LANEID))

/* Does the value of e differ where the special registers of `sregs` do (or
 * does it come from memory)? A load whose address does not differ between
 * blocks (SREGS_OF_BLOCK) reads the same bytes in every block; one that
 * does not differ between a block's threads (SREGS_OF_THREAD) is one
 * request for a warp's 32 threads. */
static int varies(const struct kw *w, uint32_t e, unsigned sregs, int depth)
{
    const struct maya_kexpr *x = &w->x[e];
    switch (x->op) {
    case MAYA_KX_UNKNOWN: return 1;
    case MAYA_KX_CONST: case MAYA_KX_PARAM: return 0;
    case MAYA_KX_SREG: return x->arg < 32 && (sregs & SR_BIT(x->arg)) != 0;
    default: break;
    }
    if (depth > MAX_WALK)
        return 1;
    /* over the operands (a loop-carried value: its entry; an element of a
     * parameter array: its index) */
    unsigned ops = maya_kx_operands(x->op);
    return ((ops & 1) && varies(w, x->a, sregs, depth + 1)) || ((ops & 2) && varies(w, x->b, sregs, depth + 1)) ||
           ((ops & 4) && varies(w, x->c, sregs, depth + 1));
}

/* The register an address operand names: "[%rd4+16]" (or "[%rd4]") and
 * SASS's desc[UR4][R8.64+0x10], [R2.64], [R3+UR4+0x100]: the last
 * bracket's first register (a 64-bit pair is named by its low half); an
 * empty slice where there is no bracket. */
struct emu_slice kw_address_name(const struct kw *w, struct emu_slice s)
{
    const char *lb = NULL;
    for (uint32_t i = 0; i < s.n; i++)
        if (s.p[i] == '[')
            lb = s.p + i;
    if (!lb)
        return (struct emu_slice){ s.p, 0 };
    const char *p = lb + 1, *end = s.p + s.n;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    const char *q = p;
    while (q < end && *q != '+' && *q != '-' && *q != ']' && *q != ' ' && *q != '\t' && (*q != '.' || !w->k->sass))
        q++;
    return (struct emu_slice){ p, (uint32_t)(q - p) };
}

/* The value of the register an address operand names; X_UNKNOWN for a symbol. */
static uint32_t address(struct kw *w, struct emu_slice s)
{
    struct emu_slice name = kw_address_name(w, s);
    return name.n ? kw_operand(w, name) : X_UNKNOWN;
}

/* ---- terms ---- */

static void add_term_flags(struct kw *w, uint32_t freq, uint32_t loop, uint8_t cls, uint16_t param, double amount,
                           uint8_t tflags)
{
    if (freq == X_ZERO || !(amount > 0))
        return;
    for (uint32_t i = w->nterms; i-- > 0 && i + 64 >= w->nterms;) {
        struct term *t = &w->terms[i];
        if (t->key.freq == freq && t->key.loop == loop && t->key.cls == cls && t->key.param == param &&
            t->key.tflags == tflags) {
            t->amount += amount;
            return;
        }
    }
    if (w->nterms == w->capterms) {
        uint32_t ncap = w->capterms ? w->capterms * 2 : 256;
        struct term *nt = realloc(w->terms, ncap * sizeof *nt);
        if (!nt) {
            w->oom = 1;
            return;
        }
        w->terms = nt;
        w->capterms = ncap;
    }
    w->terms[w->nterms++] = (struct term){ { freq, loop, param, cls, tflags }, amount };
}

static void add_term(struct kw *w, uint32_t freq, uint32_t loop, uint8_t cls, uint16_t param, double amount)
{
    add_term_flags(w, freq, loop, cls, param, amount, 0);
}

/* The amounts one execution of an instruction adds. */
static void count(struct kw *w, const struct emu_ptx_inst *in, uint32_t freq, uint32_t loop)
{
    struct emu_slice op = in->op, opc = emu_ptx_opcode(op);
    add_term(w, freq, loop, MAYA_KW_INSTS, MAYA_KW_NO_PARAM, 1);
    /* global stores the terms below do not see: a called function's, a
     * surface's, a multimem or tensor-map write (sass_parse.c translates
     * SASS's CALL and surface stores to these) */
    static const char *const hidden_stores[] = { "call", "sust", "sured", "suatom", "multimem", "tensormap" };
    for (size_t i = 0; i < sizeof hidden_stores / sizeof *hidden_stores; i++)
        if (emu_slice_is(opc, hidden_stores[i]))
            w->flags |= MAYA_KW_F_STORES_UNKNOWN;
    char kind = 0;
    unsigned tb = kw_type_of(op, &kind);
    int global = !emu_ptx_has_part(op, "shared") && !emu_ptx_has_part(op, "param") &&
                 !emu_ptx_has_part(op, "local") && !emu_ptx_has_part(op, "const");
    unsigned m, n, k;
    /* no state space named: generic, and shared memory where the address
     * is a generic address into it (kernel_shared.c) */
    int generic = global && !emu_ptx_has_part(op, "global");
    if (emu_slice_is(opc, "ld") || emu_slice_is(opc, "ldu") || emu_slice_is(opc, "st")) {
        int load = opc.p[0] == 'l';
        uint32_t bytes = tb * kw_vec_of(op);
        if (emu_ptx_has_part(op, "shared") ||
            (generic && in->nops >= 2 && kw_in_shared_window(w, in->ops[load ? 1 : 0])))
            add_term(w, freq, loop, load ? MAYA_KW_LD_SHARED : MAYA_KW_ST_SHARED, MAYA_KW_NO_PARAM, bytes);
        else if (global && in->nops >= 2) {
            uint32_t a = address(w, in->ops[load ? 1 : 0]);
            uint8_t tf = load && a != X_UNKNOWN && !varies(w, a, SREGS_OF_BLOCK, 0) ? MAYA_KT_F_SAME_EACH_BLOCK : 0;
            if (load && a != X_UNKNOWN && !varies(w, a, SREGS_OF_THREAD, 0))
                tf |= MAYA_KT_F_SAME_EACH_THREAD;
            else if (load && a != X_UNKNOWN && !varies(w, a, SREGS_OF_ROW, 0))
                tf |= MAYA_KT_F_SAME_EACH_ROW;
            add_term_flags(w, freq, loop, load ? MAYA_KW_LD_GLOBAL : MAYA_KW_ST_GLOBAL,
                           load ? kw_base_param(w, a, 0) : stored_param(w, a), bytes, tf);
        }
    } else if (emu_slice_is(opc, "atom") || emu_slice_is(opc, "red")) {
        uint32_t bytes = tb * kw_vec_of(op);
        if (emu_ptx_has_part(op, "shared")) {
            add_term(w, freq, loop, MAYA_KW_LD_SHARED, MAYA_KW_NO_PARAM, bytes);
            add_term(w, freq, loop, MAYA_KW_ST_SHARED, MAYA_KW_NO_PARAM, bytes);
        } else if (in->nops >= 2) {
            uint32_t a = address(w, in->ops[opc.p[0] == 'a' ? 1 : 0]);
            uint16_t p = stored_param(w, a);
            /* every block updating the same addresses: resolved in L2 */
            uint8_t tf = a != X_UNKNOWN && !varies(w, a, SREGS_OF_BLOCK, 0) ? MAYA_KT_F_SAME_EACH_BLOCK : 0;
            add_term(w, freq, loop, MAYA_KW_ATOMIC, MAYA_KW_NO_PARAM, 1);
            add_term_flags(w, freq, loop, MAYA_KW_LD_GLOBAL, p, bytes, tf);
            add_term_flags(w, freq, loop, MAYA_KW_ST_GLOBAL, p, bytes, tf);
        }
    } else if (emu_slice_is(opc, "cp")) {
        if (emu_ptx_has_part(op, "tensor")) {
            w->flags |= MAYA_KW_F_BYTES_UNKNOWN;
        } else if (emu_ptx_has_part(op, "async") && in->nops >= 3) {
            /* cp.async[.bulk].shared.global [dst], [src], size: the size is
             * a literal (4, 8, 16) or, for bulk copies, a register */
            uint32_t size = kw_operand(w, in->ops[2]);
            uint32_t f = kx_mul(w, freq, size);
            /* the destination's space is named first */
            const char *g = memmem(op.p, op.n, ".global", 7), *sh = memmem(op.p, op.n, ".shared", 7);
            if (size == X_UNKNOWN) {
                w->flags |= MAYA_KW_F_BYTES_UNKNOWN;
            } else if (g && sh && g < sh) {
                add_term(w, f, loop, MAYA_KW_LD_SHARED, MAYA_KW_NO_PARAM, 1);
                add_term(w, f, loop, MAYA_KW_ST_GLOBAL, stored_param(w, address(w, in->ops[0])), 1);
            } else {
                add_term(w, f, loop, MAYA_KW_LD_GLOBAL, kw_base_param(w, address(w, in->ops[1]), 0), 1);
                add_term(w, f, loop, MAYA_KW_ST_SHARED, MAYA_KW_NO_PARAM, 1);
            }
        }
    } else if (emu_slice_is(opc, "ldmatrix") || emu_slice_is(opc, "stmatrix")) {
        unsigned x = emu_ptx_has_part(op, "x4") ? 4 : emu_ptx_has_part(op, "x2") ? 2 : 1;
        add_term(w, freq, loop, opc.p[0] == 'l' ? MAYA_KW_LD_SHARED : MAYA_KW_ST_SHARED, MAYA_KW_NO_PARAM, 4.0 * x);
    } else if (emu_slice_is(opc, "wmma") && shape_of(op, &m, &n, &k)) {
        /* warp-level: each of the 32 threads carries 1/32 of the fragment */
        unsigned elem = tb ? tb : 2;
        if (emu_ptx_has_part(op, "mma")) {
            add_term(w, freq, loop, mma_class(op), MAYA_KW_NO_PARAM, 2.0 * m * n * k / 32);
            w->flags |= MAYA_KW_F_WARP_MMA;
        } else if (in->nops >= 2) {
            int load = emu_ptx_has_part(op, "load");
            double cells = emu_ptx_has_part(op, "a") ? m * k : emu_ptx_has_part(op, "b") ? k * n : m * n;
            double bytes = cells * elem / 32;
            uint32_t a = address(w, in->ops[load ? 1 : 0]);
            if (emu_ptx_has_part(op, "shared") || (generic && kw_in_shared_window(w, in->ops[load ? 1 : 0])))
                add_term(w, freq, loop, load ? MAYA_KW_LD_SHARED : MAYA_KW_ST_SHARED, MAYA_KW_NO_PARAM,
                         bytes * kw_fragment_conflicts(w, in, elem));
            else
                add_term(w, freq, loop, load ? MAYA_KW_LD_GLOBAL : MAYA_KW_ST_GLOBAL,
                         load ? kw_base_param(w, a, 0) : stored_param(w, a), bytes);
        }
    } else if (emu_slice_is(opc, "mma") && shape_of(op, &m, &n, &k)) {
        add_term(w, freq, loop, mma_class(op), MAYA_KW_NO_PARAM, 2.0 * m * n * k / 32);
        w->flags |= MAYA_KW_F_WARP_MMA;
    } else if (emu_slice_is(opc, "wgmma") && emu_ptx_has_part(op, "mma_async") && shape_of(op, &m, &n, &k)) {
        add_term(w, freq, loop, mma_class(op), MAYA_KW_NO_PARAM, 2.0 * m * n * k / 128); /* a warpgroup */
        w->flags |= MAYA_KW_F_GROUP_MMA;
    } else if (emu_slice_is(opc, "tcgen05") && emu_ptx_has_part(op, "mma")) {
        w->flags |= MAYA_KW_F_BYTES_UNKNOWN | MAYA_KW_F_GROUP_MMA; /* shape in a run-time descriptor */
    } else if (kind == 'f' || kind == 'd' || kind == 'h' || kind == 'F') {
        uint8_t cls = kind == 'd' ? MAYA_KW_FLOP_FP64 : kind == 'h' ? MAYA_KW_FLOP_FP16 : MAYA_KW_FLOP_FP32;
        double lanes = (tb == 4 && kind == 'h') || kind == 'F' ? 2 : 1;
        int approx = emu_ptx_has_part(op, "approx");
        if (emu_slice_is(opc, "fma") || emu_slice_is(opc, "mad"))
            add_term(w, freq, loop, cls, MAYA_KW_NO_PARAM, 2 * lanes);
        else if (emu_slice_is(opc, "add") || emu_slice_is(opc, "sub") || emu_slice_is(opc, "mul") ||
                 emu_slice_is(opc, "min") || emu_slice_is(opc, "max") || emu_slice_is(opc, "neg") ||
                 emu_slice_is(opc, "abs"))
            add_term(w, freq, loop, cls, MAYA_KW_NO_PARAM, lanes);
        else if (emu_slice_is(opc, "ex2") || emu_slice_is(opc, "lg2") || emu_slice_is(opc, "sin") ||
                 emu_slice_is(opc, "cos") || emu_slice_is(opc, "tanh") || emu_slice_is(opc, "rsqrt") ||
                 ((emu_slice_is(opc, "rcp") || emu_slice_is(opc, "sqrt") || emu_slice_is(opc, "div")) && approx))
            add_term(w, freq, loop, kind == 'd' ? MAYA_KW_FLOP_FP64 : MAYA_KW_SFU, MAYA_KW_NO_PARAM,
                     kind == 'd' ? 2 : lanes);
        else if (emu_slice_is(opc, "rcp") || emu_slice_is(opc, "sqrt") || emu_slice_is(opc, "div")) {
            /* IEEE-rounded: an approximation refined by Newton steps */
            if (kind == 'd') {
                add_term(w, freq, loop, MAYA_KW_FLOP_FP64, MAYA_KW_NO_PARAM, 20);
            } else {
                add_term(w, freq, loop, MAYA_KW_SFU, MAYA_KW_NO_PARAM, 1);
                add_term(w, freq, loop, cls, MAYA_KW_NO_PARAM, 8);
            }
        }
    }
}

/* ---- pass 1 ---- */

/* Add what reaches a label by a branch taken with frequency f. */
static int pend_add(struct kw *w, uint32_t label, uint32_t f)
{
    struct pending *pd = &w->pend[label];
    if (f == X_ZERO && pd->env)
        return 0;
    if (!pd->env) {
        pd->env = malloc((size_t)(w->capregs ? w->capregs : 1) * sizeof *pd->env);
        if (!pd->env)
            return -1;
        memcpy(pd->env, w->env, w->nregs * sizeof *pd->env);
        for (uint32_t r = w->nregs; r < w->capregs; r++)
            pd->env[r] = X_UNKNOWN;
        pd->freq = f;
        return 0;
    }
    uint32_t tot = kx_add(w, pd->freq, f);
    for (uint32_t r = 0; r < w->nregs; r++)
        if (pd->env[r] != w->env[r])
            pd->env[r] = (int32_t)kx_sel(w, kx_bin(w, MAYA_KX_DIV, pd->freq, tot), (uint32_t)pd->env[r],
                                      (uint32_t)w->env[r]);
    pd->freq = tot;
    return 0;
}

/* At a label: join the fall-through (if live) with what branches brought. */
static void join(struct kw *w, uint32_t label, int *live, uint32_t *freq)
{
    struct pending *pd = &w->pend[label];
    if (!pd->env)
        return;
    if (*live && *freq != X_ZERO && pd->freq == X_ZERO) {
        /* only dead code reaches it (a piece placed out of line, before
         * the loop that jumps to it): its registers mix nothing in */
        free(pd->env);
        pd->env = NULL;
        return;
    }
    if (!*live || *freq == X_ZERO) {
        memcpy(w->env, pd->env, w->nregs * sizeof *w->env);
        *freq = pd->freq;
    } else {
        uint32_t tot = kx_add(w, *freq, pd->freq);
        for (uint32_t r = 0; r < w->nregs; r++)
            if (pd->env[r] != w->env[r])
                w->env[r] = (int32_t)kx_sel(w, kx_bin(w, MAYA_KX_DIV, *freq, tot), (uint32_t)w->env[r],
                                         (uint32_t)pd->env[r]);
        *freq = tot;
    }
    *live = 1;
    free(pd->env);
    pd->env = NULL;
}

/* Write e as phi + off, phi a value loop l carries and off an expression
 * the loop does not change (sums and differences of invariants on top of
 * the carried value: an unrolled body adds its step several times). */
static int split_phi(struct kw *w, uint32_t e, uint32_t l, uint32_t *phi, uint32_t *off, int depth)
{
    const struct maya_kexpr *x = &w->x[e];
    if (x->op == MAYA_KX_PHI && x->b == l) {
        *phi = e;
        *off = X_ZERO;
        return 1;
    }
    if (depth > MAX_WALK || (x->op != MAYA_KX_ADD && x->op != MAYA_KX_SUB))
        return 0;
    uint32_t a = x->a, b = x->b;
    int da = kx_depends(w, a, l, 0), db = kx_depends(w, b, l, 0);
    if (da == db)
        return 0;
    if (da && split_phi(w, a, l, phi, off, depth + 1)) {
        *off = kx_bin(w, x->op, *off, b);
        return 1;
    }
    if (db && x->op == MAYA_KX_ADD && split_phi(w, b, l, phi, off, depth + 1)) {
        *off = kx_bin(w, MAYA_KX_ADD, *off, a);
        return 1;
    }
    return 0;
}

/* Is e loop l's counter shifted right by a constant each iteration, e =
 * phi >> k (tested after the shift), or phi itself with its register
 * written phi >> k in the body (before)? *phi, *shift (a constant). */
static int halving(struct kw *w, uint32_t e, uint32_t l, uint32_t *phi, uint32_t *shift, int *before)
{
    double k;
    const struct maya_kexpr *x = &w->x[e];
    if (x->op == MAYA_KX_SHR && w->x[x->a].op == MAYA_KX_PHI && w->x[x->a].b == l && kx_is_const(w, x->b, &k) &&
        k >= 1 && k < 32) {
        *phi = x->a, *shift = x->b, *before = 0;
        return 1;
    }
    if (x->op != MAYA_KX_PHI || x->b != l || x->c >= w->nregs)
        return 0;
    uint32_t v = (uint32_t)w->env[x->c];
    const struct maya_kexpr *y = &w->x[v];
    if (y->op == MAYA_KX_SHR && y->a == e && kx_is_const(w, y->b, &k) && k >= 1 && k < 32) {
        *phi = e, *shift = y->b, *before = 1;
        return 1;
    }
    return 0;
}

/* A back branch continues loop l while predicate p holds: its trip count.
 * A conjunction (i < chunk and i < n) continues no longer than either
 * part: the smaller of the trip counts of the parts that give one. */
static void resolve_trip(struct kw *w, uint32_t l, uint32_t p, int depth)
{
    struct loop *L = &w->loops[l];
    const struct maya_kexpr *x = &w->x[p];
    if (x->op == MAYA_KX_MUL && depth < 8) {
        uint32_t a = x->a, b = x->b, first;
        resolve_trip(w, l, a, depth + 1);
        first = L->resolved ? L->trip : X_UNKNOWN;
        L->resolved = 0;
        resolve_trip(w, l, b, depth + 1);
        if (L->resolved && first != X_UNKNOWN)
            L->trip = kx_bin(w, MAYA_KX_MIN, first, L->trip);
        else if (first != X_UNKNOWN)
            L->trip = first, L->resolved = 1;
        return;
    }
    /* a test that is a selection (the predicate written on one path and
     * kept on another, e.g. a join with code placed out of line) is
     * resolved from the comparison it selects */
    if (x->op == MAYA_KX_SEL && depth < 8) {
        uint32_t a = x->a, b = x->b;
        resolve_trip(w, l, a, depth + 1);
        if (!L->resolved)
            resolve_trip(w, l, b, depth + 1);
        return;
    }
    if (x->op != MAYA_KX_CMP)
        return;
    uint32_t lhs = x->a, rhs = x->b;
    int c = x->arg;
    static const uint8_t mirror[MAYA_CMP_NCMPS] = { MAYA_CMP_GT, MAYA_CMP_GE, MAYA_CMP_LT, MAYA_CMP_LE,
                                                    MAYA_CMP_EQ, MAYA_CMP_NE };
    if (!kx_depends(w, lhs, l, 0)) {
        uint32_t t = lhs;
        lhs = rhs;
        rhs = t;
        c = mirror[c];
    }
    if (!kx_depends(w, lhs, l, 0) || kx_depends(w, rhs, l, 0))
        return;
    /* a counter whose next value a join selects (xformers' attention
     * backward steps to the next query block on one path and, on the
     * other, moves to the next key block, where a second test leaves the
     * loop): resolved from the value of a path that steps it */
    if (w->x[lhs].op == MAYA_KX_SEL && depth < 8) {
        uint32_t a = w->x[lhs].a, b = w->x[lhs].b;
        resolve_trip(w, l, kx_cmp(w, c, a, rhs), depth + 1);
        if (!L->resolved)
            resolve_trip(w, l, kx_cmp(w, c, b, rhs), depth + 1);
        return;
    }
    /* a counter tested scaled (i * 4 < n: a vectorised loop counting
     * vectors against a bound in elements) steps and starts scaled */
    uint32_t scale = X_ONE;
    const struct maya_kexpr *y = &w->x[lhs];
    double k;
    if (y->op == MAYA_KX_MUL && kx_is_const(w, y->b, &k) && k > 0)
        scale = y->b, lhs = y->a;
    else if (y->op == MAYA_KX_MUL && kx_is_const(w, y->a, &k) && k > 0)
        scale = y->a, lhs = y->b;
    else if (y->op == MAYA_KX_SHL && kx_is_const(w, y->b, &k) && k >= 0 && k < 31)
        scale = kx_const(w, ldexp(1, (int)k)), lhs = y->a;
    /* a counter halved each time (s >>= 1: a tree reduction), tested
     * after the shift or before it */
    uint32_t phi, step;
    int before = 0;
    if (scale == X_ONE && halving(w, lhs, l, &phi, &step, &before)) {
        if (w->x[phi].a == X_UNKNOWN)
            return;
        L->trip = kx_node(w, MAYA_KX_TRIP, (uint8_t)(c | MAYA_KX_TRIP_HALVES | (before ? MAYA_KX_TRIP_BEFORE : 0)),
                          w->x[phi].a, rhs, step, 0);
        L->resolved = L->trip != X_UNKNOWN;
        return;
    }
    /* lhs = phi + step (tested after the step), or phi itself (tested
     * before it: the step is what the body adds to its register) */
    if (!split_phi(w, lhs, l, &phi, &step, 0))
        return;
    if (step == X_ZERO) {
        uint32_t reg = w->x[phi].c, p2, s2;
        if (reg >= w->nregs || !split_phi(w, (uint32_t)w->env[reg], l, &p2, &s2, 0) || p2 != phi)
            return;
        step = s2;
        before = 1;
    } else {
        /* a test that looks ahead of the register's step (an unrolled
         * body: i + 3 * stride < n after i += 4 * stride) compares the
         * stepped register with the bound less the look-ahead */
        uint32_t reg = w->x[phi].c, p2, s2;
        if (reg < w->nregs && split_phi(w, (uint32_t)w->env[reg], l, &p2, &s2, 0) && p2 == phi && s2 != step &&
            s2 != X_ZERO && s2 != X_UNKNOWN) {
            rhs = kx_bin(w, MAYA_KX_SUB, rhs, kx_mul(w, kx_bin(w, MAYA_KX_SUB, step, s2), scale));
            step = s2;
        }
    }
    if (step == X_UNKNOWN || step == X_ZERO || w->x[phi].a == X_UNKNOWN)
        return;
    L->trip = kx_node(w, MAYA_KX_TRIP, (uint8_t)(c | (before ? MAYA_KX_TRIP_BEFORE : 0)), kx_mul(w, w->x[phi].a, scale), rhs,
                      kx_mul(w, step, scale), 0);
    L->resolved = L->trip != X_UNKNOWN;
}

/* Leaving loop l: what its carried values are after it (entry value plus
 * trip count times step, for those that step). */
static void leave_loop(struct kw *w, uint32_t l)
{
    struct loop *L = &w->loops[l];
    for (uint32_t i = 0; i < L->nregs; i++) {
        uint32_t r = L->regs[i], phi, step, out = X_UNKNOWN;
        uint32_t v = (uint32_t)w->env[r];
        if (!kx_depends(w, v, l, 0))
            out = v;
        else if (L->resolved && split_phi(w, v, l, &phi, &step, 0))
            out = kx_bin(w, MAYA_KX_ADD, w->x[phi].a, kx_bin(w, MAYA_KX_MUL, L->trip, step));
        w->env[r] = (int32_t)out;
    }
}

/* The n-th register of a list "{R2, R3}" (n from 0); 0 length past its end. */
struct emu_slice kw_list_item(struct emu_slice s, unsigned n)
{
    const char *p = s.p, *end = s.p + s.n;
    for (unsigned i = 0;; i++) {
        while (p < end && (*p == '{' || *p == ',' || *p == ' '))
            p++;
        const char *q = p;
        while (q < end && *q != ',' && *q != '}' && *q != ' ')
            q++;
        if (p == q)
            return (struct emu_slice){ p, 0 };
        if (i == n)
            return (struct emu_slice){ p, (uint32_t)(q - p) };
        p = q;
    }
}

/* sass_parse.c's wide spill or reload, "mov.vec.b32 {d0, d1}, {s0, s1}":
 * each register its own move, guarded as a scalar write is. */
static void move_list(struct kw *w, const struct emu_ptx_inst *in, uint32_t g)
{
    uint32_t vals[4];
    unsigned n = 0;
    for (; n < 4; n++) { /* read every source before writing: a list may overlap itself */
        struct emu_slice src = kw_list_item(in->ops[1], n);
        if (!src.n)
            break;
        vals[n] = kw_operand(w, src);
    }
    for (unsigned i = 0; i < n; i++) {
        struct emu_slice d = kw_list_item(in->ops[0], i);
        int32_t r = d.n && kw_is_reg(d) ? reg_id(w, d) : -1;
        if (r < 0)
            continue;
        w->env[r] = (int32_t)(in->guard.n && g != X_ONE ? kx_sel(w, g, vals[i], (uint32_t)w->env[r]) : vals[i]);
    }
}

/* Does the way from instruction i (a forward branch) to t, the code the
 * branch jumps over, call one of CUDA's helpers (sass_parse.c's
 * call.helper)? nvcc puts each behind a test that sends the common case
 * around it: a 64-bit division's high words both 0 (the operands below
 * 2^32, as this analysis reads 64-bit values by their low halves), a
 * float reciprocal's or square root's operand neither tiny, huge nor
 * special. Where that test is not decided here, the branch is taken: half
 * of each such path counted, a 64-bit division's result was half the
 * quotient and half the dividend (the helper's result is not followed):
 * PyTorch's NHWC max-pooling backward, whose rows a block takes are
 * (height + gridDim.z - 1) / gridDim.z (2 of 112 for ResNet-50's), mixed
 * 2 with 167, and came out 0.41 ms on an A100 where its loops resolved
 * give 1.26. */
static int skips_helper(const struct emu_ptx_kernel *k, uint32_t i, uint32_t t)
{
    for (uint32_t j = i + 1; j < t && j < k->ninsts; j++)
        if (emu_slice_is(emu_ptx_opcode(k->insts[j].op), "call") && emu_ptx_has_part(k->insts[j].op, "helper"))
            return 1;
    return 0;
}

static int interpret(struct kw *w)
{
    const struct emu_ptx_kernel *k = w->k;
    uint32_t freq = X_ONE;
    int live = 1;
    uint32_t exit_test = X_UNKNOWN, exit_at = UINT32_MAX - 1; /* the last guarded forward branch */
    for (uint32_t i = 0; i < k->ninsts && !w->oom; i++) {
        /* labels at i */
        for (uint32_t lb = w->lab_first[i]; lb != UINT32_MAX && lb < k->nlabels && k->labels[lb].inst == i; lb++)
            join(w, lb, &live, &freq);
        if (!live)
            freq = X_ZERO;
        uint32_t l = w->loop_at_head[i];
        if (l != NO_LOOP)
            for (uint32_t j = 0; j < w->loops[l].nregs; j++) {
                uint32_t r = w->loops[l].regs[j];
                w->env[r] = (int32_t)kx_node(w, MAYA_KX_PHI, 0, (uint32_t)w->env[r], l, r, 0);
            }
        const struct emu_ptx_inst *in = &k->insts[i];
        uint32_t g = X_ONE;
        if (in->guard.n) {
            g = kw_operand(w, in->guard);
            if (g == X_UNKNOWN)
                g = X_HALF;
            if (in->guard_neg)
                g = kx_not(w, g);
        }
        int guarded = in->guard.n != 0;
        if (w->k->sass && kw_is_branch(in) && in->nops >= 2 && !emu_slice_is(in->ops[1], "PT")) {
            /* SASS's BRA P1, label: taken when the guard and P1 both hold */
            uint32_t also = kw_operand(w, in->ops[1]);
            g = kx_mul(w, g, also == X_UNKNOWN ? X_HALF : also);
            guarded = 1;
        }
        if (kw_is_branch(in)) {
            add_term(w, freq, w->inner[i], MAYA_KW_INSTS, MAYA_KW_NO_PARAM, 1);
            int lb = emu_ptx_label_find(k, in->ops[0]);
            if (lb < 0) {
                live = in->guard.n != 0;
                continue;
            }
            uint32_t t = k->labels[lb].inst;
            if (t > i) {
                if (g == X_HALF && skips_helper(k, i, t))
                    g = X_ONE;
                if (pend_add(w, (uint32_t)lb, kx_mul(w, freq, g)) < 0)
                    return -1;
                freq = kx_mul(w, freq, kx_not(w, g));
                live = guarded;
                exit_test = guarded ? g : X_UNKNOWN, exit_at = i;
            } else {
                uint32_t ll = w->loop_at_head[t];
                if (ll != NO_LOOP && w->loops[ll].end == i) {
                    if (guarded)
                        resolve_trip(w, ll, g, 0);
                    else if (exit_at + 1 == i && exit_test != X_UNKNOWN)
                        /* "@P0 BRA exit; BRA head": the loop goes on while
                         * the exit test fails */
                        resolve_trip(w, ll, kx_not(w, exit_test), 0);
                    else
                        live = 0; /* left by a forward branch: trip unknown */
                    leave_loop(w, ll);
                }
            }
            continue;
        }
        uint32_t fmult = in->guard.n ? kx_mul(w, freq, g) : freq;
        count(w, in, fmult, w->inner[i]);
        if (kw_is_exit(in)) {
            if (!in->guard.n)
                live = 0;
            else
                freq = kx_mul(w, freq, kx_not(w, g));
            continue;
        }
        if (emu_slice_is(in->op, "mov.vec.b32") && in->nops == 2) {
            move_list(w, in, g);
            continue;
        }
        if (kw_writes_reg(in)) {
            uint32_t v = kw_value(w, in);
            if (in->guard.n && g != X_ONE) {
                /* a guarded write keeps the old value for the other threads */
                int32_t r = kw_is_reg(in->ops[0]) ? reg_id(w, in->ops[0]) : -1;
                v = r >= 0 ? kx_sel(w, g, v, (uint32_t)w->env[r]) : X_UNKNOWN;
            }
            set_reg(w, in->ops[0], v);
            if (w->k->sass && kw_is_pair(in) && kw_is_reg(in->ops[2])) {
                int32_t r = reg_id(w, in->ops[2]);
                uint32_t hi = kw_cbank(w, in->ops[3], 4, 0);
                if (r >= 0)
                    w->env[r] = (int32_t)(in->guard.n && g != X_ONE ? kx_sel(w, g, hi, (uint32_t)w->env[r]) : hi);
            }
            /* setp's second result is the negation */
            if (op_is(in->op, "setp") && in->ops[0].n) {
                for (uint32_t c = 0; c < in->ops[0].n; c++)
                    if (in->ops[0].p[c] == '|') {
                        int32_t r = reg_id(w, (struct emu_slice){ in->ops[0].p + c + 1, in->ops[0].n - c - 1 });
                        if (r >= 0)
                            w->env[r] = (int32_t)kx_not(w, v);
                    }
            }
        }
    }
    return w->oom ? -1 : 0;
}

/* ---- output ---- */

/* Executions per thread of a term: its frequency times its loops' trips. */
static uint32_t term_mult(struct kw *w, const struct term *t)
{
    uint32_t m = t->key.freq;
    for (uint32_t l = t->key.loop; l != NO_LOOP; l = w->loops[l].parent) {
        if (!w->loops[l].resolved)
            w->flags |= MAYA_KW_F_LOOP_UNRESOLVED;
        m = kx_mul(w, m, w->loops[l].trip);
    }
    return m;
}

/* Mark what the marked expressions reach: operands come before the
 * expressions that use them, so one sweep down the indexes does it (no
 * recursion, however deep the chains). */
static void mark_reached(const struct kw *w, uint32_t *keep)
{
    for (uint32_t i = w->nx; i-- > 0;) {
        const struct maya_kexpr *x = &w->x[i];
        unsigned ops = maya_kx_operands(x->op);
        if (!keep[i])
            continue;
        if (ops & 1)
            keep[x->a] = 1;
        if (ops & 2)
            keep[x->b] = 1;
        if (ops & 4)
            keep[x->c] = 1;
    }
}

static int emit(struct kw *w, int sm, void **out, size_t *bytes)
{
    uint32_t nt = w->nterms;
    uint32_t *mult = malloc((size_t)(nt ? nt : 1) * sizeof *mult);
    if (!mult)
        return -1;
    for (uint32_t i = 0; i < nt; i++)
        mult[i] = term_mult(w, &w->terms[i]);
    /* terms with the same multiplier, class and pointer merge, inside one
     * loop (two loops' loads are two passes, each with its own bytes in
     * flight, however alike their counts) */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < nt; i++) {
        uint32_t j = 0;
        for (; j < kept; j++)
            if (mult[j] == mult[i] && w->terms[j].key.cls == w->terms[i].key.cls &&
                w->terms[j].key.param == w->terms[i].key.param && w->terms[j].key.tflags == w->terms[i].key.tflags &&
                w->terms[j].key.loop == w->terms[i].key.loop)
                break;
        if (j < kept) {
            w->terms[j].amount += w->terms[i].amount;
            continue;
        }
        if (kept == EMU_KW_MAX_TERMS) {
            w->flags |= MAYA_KW_F_TRUNCATED;
            continue;
        }
        w->terms[kept] = w->terms[i];
        mult[kept++] = mult[i];
    }
    /* reachable expressions, renumbered in order */
    uint32_t *keep = calloc(w->nx, sizeof *keep);
    if (!keep) {
        free(mult);
        return -1;
    }
    for (uint32_t i = 0; i < kept; i++)
        keep[mult[i]] = 1;
    mark_reached(w, keep);
    uint32_t nx = 0;
    for (uint32_t i = 0; i < w->nx; i++)
        keep[i] = keep[i] ? ++nx : 0; /* new index + 1 */
    uint32_t nterms = kept;
    if (nx > EMU_KW_MAX_EXPRS) {
        /* too large to carry: keep the terms whose multipliers fit */
        w->flags |= MAYA_KW_F_TRUNCATED;
        nterms = 0;
        for (uint32_t i = 0; i < kept; i++)
            if (keep[mult[i]] && keep[mult[i]] <= EMU_KW_MAX_EXPRS) {
                /* whole subtree fits when the root does: operands come first */
                w->terms[nterms] = w->terms[i];
                mult[nterms++] = mult[i];
            }
        nx = EMU_KW_MAX_EXPRS;
    }
    size_t size = sizeof(struct maya_kwork) + (size_t)nx * sizeof(struct maya_kexpr) +
                  (size_t)nterms * sizeof(struct maya_kterm);
    unsigned char *buf = calloc(1, size);
    if (!buf) {
        free(keep);
        free(mult);
        return -1;
    }
    struct maya_kwork *h = (void *)buf;
    struct maya_kexpr *xo = (void *)(h + 1);
    struct maya_kterm *to = (void *)(xo + nx);
    h->source = w->k->sass ? MAYA_KW_SASS : MAYA_KW_PTX;
    h->flags = w->flags | (w->k->truncated ? MAYA_KW_F_TRUNCATED : 0);
    h->sm = (uint16_t)(sm > 0 && sm < 65536 ? sm : 0);
    h->nexprs = (uint16_t)nx;
    h->nterms = (uint16_t)nterms;
    for (uint32_t i = 0; i < w->nx; i++) {
        if (!keep[i] || keep[i] > nx)
            continue;
        struct maya_kexpr e = w->x[i];
        unsigned ops = maya_kx_operands(e.op);
        if (ops) {
            e.a = ops & 1 ? (uint16_t)(keep[e.a] - 1) : 0;
            e.b = ops & 2 ? (uint16_t)(keep[e.b] - 1) : 0;
            e.c = ops & 4 ? (uint16_t)(keep[e.c] - 1) : 0;
        }
        xo[keep[i] - 1] = e;
    }
    for (uint32_t i = 0; i < nterms; i++) {
        float amount = (float)w->terms[i].amount;
        uint32_t loop = w->terms[i].key.loop;
        to[i] = (struct maya_kterm){ .mult = (uint16_t)(keep[mult[i]] - 1), .cls = w->terms[i].key.cls,
                                     .flags = w->terms[i].key.tflags, .param = w->terms[i].key.param,
                                     .body = (uint16_t)(loop == NO_LOOP ? 0 : (loop < 0xffffu ? loop + 1 : 0xffffu)),
                                     .amount = amount };
    }
    free(keep);
    free(mult);
    *out = buf;
    *bytes = size;
    return 0;
}

static void kw_free(struct kw *w)
{
    free(w->x);
    free(w->xhash);
    free(w->xshare);
    free(w->rname);
    free(w->rhash);
    free(w->env);
    free(w->shwin);
    free(w->label_inst);
    free(w->lab_first);
    for (uint32_t i = 0; w->pend && i < w->k->nlabels; i++)
        free(w->pend[i].env);
    free(w->pend);
    for (uint32_t i = 0; w->loops && i < w->nloops; i++)
        free(w->loops[i].regs);
    free(w->loops);
    free(w->inner);
    free(w->loop_at_head);
    free(w->terms);
}

int emu_kwork_from_ptx(const struct emu_ptx_kernel *k, int sm, void **out, size_t *bytes)
{
    *out = NULL;
    *bytes = 0;
    if (!k)
        return -1;
    struct kw w;
    memset(&w, 0, sizeof w);
    w.k = k;
    int rc = -1;
    if (kx_init(&w) < 0 || reg_grow(&w) < 0)
        goto done;
    if (kw_find_loops(&w) < 0)
        goto done;
    /* every register's id, so that loops know what their bodies write */
    if (kw_loop_regs(&w) < 0)
        goto done;
    if (kw_find_shared_window(&w) < 0)
        goto done;
    for (uint32_t i = 0; i < w.nregs; i++)
        w.env[i] = X_UNKNOWN;
    if (interpret(&w) < 0)
        goto done;
    rc = emit(&w, sm, out, bytes);
done:
    kw_free(&w);
    return rc;
}

int emu_kwork_ptx_text(const char *text, size_t bytes, const char *entry, int sm, void **out, size_t *out_bytes)
{
    struct emu_ptx_kernel k;
    *out = NULL;
    *out_bytes = 0;
    if (emu_ptx_parse(text, bytes, entry, &k) < 0)
        return -1;
    int rc = emu_kwork_from_ptx(&k, sm, out, out_bytes);
    emu_ptx_kernel_free(&k);
    return rc;
}

unsigned emu_kwork_pointer_params(const struct maya_kwork *w, uint16_t *offsets, unsigned max)
{
    const struct maya_kterm *t = maya_kwork_terms(w);
    unsigned n = 0;
    for (uint32_t i = 0; i < w->nterms; i++) {
        if (t[i].param == MAYA_KW_NO_PARAM || (t[i].cls != MAYA_KW_LD_GLOBAL && t[i].cls != MAYA_KW_ST_GLOBAL))
            continue;
        unsigned j = 0;
        while (j < n && offsets[j] < t[i].param)
            j++;
        if (j < n && offsets[j] == t[i].param)
            continue;
        if (n == max)
            break;
        memmove(offsets + j + 1, offsets + j, (n - j) * sizeof *offsets);
        offsets[j] = t[i].param;
        n++;
    }
    return n;
}

uint64_t emu_kwork_unstored_words(const struct maya_kwork *w, size_t bytes)
{
    if (!w || bytes < sizeof *w || bytes < maya_kwork_bytes(w))
        return 0;
    if ((w->flags & (MAYA_KW_F_TRUNCATED | MAYA_KW_F_BYTES_UNKNOWN | MAYA_KW_F_STORES_UNKNOWN)))
        return 0;
    const struct maya_kterm *t = maya_kwork_terms(w);
    uint64_t stored = 0;
    for (uint32_t i = 0; i < w->nterms; i++) {
        if (t[i].cls != MAYA_KW_ST_GLOBAL)
            continue; /* atomics count as stores too (count() adds both) */
        if (t[i].param == MAYA_KW_NO_PARAM || t[i].param % 8 || t[i].param / 8 >= 64)
            return 0; /* a store through an address not known: any pointer may be its */
        stored |= 1ull << (t[i].param / 8);
    }
    return ~stored;
}

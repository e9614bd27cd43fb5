/* The integer value an instruction writes to its destination register,
 * as an expression (kernel_expr.c) over the parameters, the special
 * registers, constants and loop-carried values: PTX's integer arithmetic
 * and comparisons, and SASS's as sass_parse.c translates it (IADD3, LEA,
 * LOP3's truth tables, PRMT's byte moves, nvcc's divisions, a signed
 * division's sign test). kernel_work.c's pass calls it for every
 * instruction that writes a register; floating-point results and values
 * read from memory are unknown.
 *
 * Costs: a few expression nodes per instruction (hash-consed). */
#define _GNU_SOURCE
#include "maya/kwork.h"
#include "kernel_work_int.h"

#include <math.h>
#include <string.h>

#include "ptx_parse.h"

static int cmp_of(struct emu_slice op)
{
    static const struct { const char *w; int c; } c[] = {
        { "lt", MAYA_CMP_LT }, { "lo", MAYA_CMP_LT }, { "ltu", MAYA_CMP_LT }, { "le", MAYA_CMP_LE },
        { "ls", MAYA_CMP_LE }, { "leu", MAYA_CMP_LE }, { "gt", MAYA_CMP_GT }, { "hi", MAYA_CMP_GT },
        { "gtu", MAYA_CMP_GT }, { "ge", MAYA_CMP_GE }, { "hs", MAYA_CMP_GE }, { "geu", MAYA_CMP_GE },
        { "eq", MAYA_CMP_EQ }, { "equ", MAYA_CMP_EQ }, { "ne", MAYA_CMP_NE }, { "neu", MAYA_CMP_NE },
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        if (emu_ptx_has_part(op, c[i].w))
            return c[i].c;
    return -1;
}

/* A 32-bit constant as an addend: 0xfffffff0 in a 32-bit add is -16, the
 * sum being taken modulo 2^32 (SASS's VIADD prints its negative immediates
 * so; a step read as +4294967280 would make a loop that counts down by 16
 * run for ever). */
static uint32_t addend32(struct kw *w, uint32_t e)
{
    double v;
    if (kx_is_const(w, e, &v) && v >= 2147483648.0 && v < 4294967296.0)
        return kx_const(w, v - 4294967296.0);
    return e;
}

/* A negative 32-bit constant as the unsigned number of the same bits. */
static uint32_t unsigned32(struct kw *w, uint32_t e)
{
    double v;
    if (kx_is_const(w, e, &v) && v < 0 && v >= -2147483648.0)
        return kx_const(w, v + 4294967296.0);
    return e;
}

/* An address that adds an offset read from memory to a pointer parameter
 * (a table indexed by a loaded index: FSDP2's chunk_cat, embeddings): the
 * parameter plus an opaque offset, so that the bytes loaded through it are
 * still that parameter's, bounded by its allocation. X_UNKNOWN when the
 * instruction is no such sum (or its value is known). The opaque offset is
 * never a number: anything computed from it stays unknown. */
static uint32_t based_sum(struct kw *w, const struct emu_ptx_inst *in, uint32_t a, uint32_t b, uint32_t c)
{
    struct emu_slice opc = emu_ptx_opcode(in->op);
    uint32_t known, unknown_part;
    if (emu_slice_is(opc, "add") && in->nops == 3)
        known = a == X_UNKNOWN ? b : a, unknown_part = a == X_UNKNOWN ? a : b;
    else if (emu_slice_is(opc, "mad") && in->nops == 4 && !emu_ptx_has_part(in->op, "hi"))
        known = c, unknown_part = kx_bin(w, MAYA_KX_MUL, a, b);
    else if (emu_slice_is(opc, "lea") && in->nops == 4)
        known = b, unknown_part = kx_bin(w, MAYA_KX_SHL, a, c);
    else if (emu_slice_is(opc, "add3") && in->nops == 4 && (a == X_UNKNOWN) + (b == X_UNKNOWN) + (c == X_UNKNOWN) == 1)
        known = a == X_UNKNOWN ? kx_bin(w, MAYA_KX_ADD, b, c) : b == X_UNKNOWN ? kx_bin(w, MAYA_KX_ADD, a, c)
                                                                : kx_bin(w, MAYA_KX_ADD, a, b),
        unknown_part = X_UNKNOWN;
    else
        return X_UNKNOWN;
    if (unknown_part != X_UNKNOWN || known == X_UNKNOWN || kw_base_param(w, known, 0) == MAYA_KW_NO_PARAM)
        return X_UNKNOWN;
    return kx_bin(w, MAYA_KX_ADD, known, kx_node(w, MAYA_KX_UNKNOWN, 1, 0, 0, 0, 0));
}

/* SASS LOP3's function of a, b and c from its truth table (a's column
 * 0xf0, b's 0xcc, c's 0xaa): the and/or/xor shapes nvcc emits; X_UNKNOWN
 * for the others. */
static uint32_t lut3(struct kw *w, unsigned lut, uint32_t a, uint32_t b, uint32_t c)
{
    static const struct { uint8_t lut, outer, inner; char x, y, z; } shapes[] = {
        /* x outer (y inner z) */
        { 0xf8, MAYA_KX_OR, MAYA_KX_AND, 'a', 'b', 'c' }, { 0xea, MAYA_KX_OR, MAYA_KX_AND, 'c', 'a', 'b' },
        { 0xec, MAYA_KX_OR, MAYA_KX_AND, 'b', 'a', 'c' }, { 0xe0, MAYA_KX_AND, MAYA_KX_OR, 'a', 'b', 'c' },
        { 0xa8, MAYA_KX_AND, MAYA_KX_OR, 'c', 'a', 'b' }, { 0xc8, MAYA_KX_AND, MAYA_KX_OR, 'b', 'a', 'c' },
        { 0xfe, MAYA_KX_OR, MAYA_KX_OR, 'a', 'b', 'c' }, { 0x80, MAYA_KX_AND, MAYA_KX_AND, 'a', 'b', 'c' },
        { 0x96, MAYA_KX_XOR, MAYA_KX_XOR, 'a', 'b', 'c' },
        /* two of the three */
        { 0xc0, MAYA_KX_AND, 0, 'a', 'b', 0 }, { 0xa0, MAYA_KX_AND, 0, 'a', 'c', 0 },
        { 0x88, MAYA_KX_AND, 0, 'b', 'c', 0 }, { 0xfc, MAYA_KX_OR, 0, 'a', 'b', 0 },
        { 0xfa, MAYA_KX_OR, 0, 'a', 'c', 0 }, { 0xee, MAYA_KX_OR, 0, 'b', 'c', 0 },
        { 0x3c, MAYA_KX_XOR, 0, 'a', 'b', 0 }, { 0x5a, MAYA_KX_XOR, 0, 'a', 'c', 0 },
        { 0x66, MAYA_KX_XOR, 0, 'b', 'c', 0 },
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        if (shapes[i].lut != lut)
            continue;
        uint32_t x = shapes[i].x == 'a' ? a : shapes[i].x == 'b' ? b : c;
        uint32_t y = shapes[i].y == 'a' ? a : shapes[i].y == 'b' ? b : c;
        if (!shapes[i].inner)
            return kx_bin(w, shapes[i].outer, x, y);
        uint32_t z = shapes[i].z == 'a' ? a : shapes[i].z == 'b' ? b : c;
        return kx_bin(w, shapes[i].outer, x, kx_bin(w, shapes[i].inner, y, z));
    }
    return X_UNKNOWN;
}

/* The low `bits` of a as a signed number: ((a + h) & (2h - 1)) - h, h = 2^(bits - 1). */
static uint32_t sign_extend(struct kw *w, uint32_t a, int bits)
{
    uint32_t h = kx_const(w, ldexp(1, bits - 1));
    return kx_bin(w, MAYA_KX_SUB,
                  kx_bin(w, MAYA_KX_AND, kx_bin(w, MAYA_KX_ADD, a, h), kx_const(w, ldexp(1, bits) - 1)), h);
}

/* e read as a signed integer: a 32-bit parameter (SASS reads the constant
 * bank unsigned) read with its sign; anything else as it is. */
static uint32_t as_signed(struct kw *w, uint32_t e)
{
    const struct maya_kexpr *x = &w->x[e];
    if (x->op == MAYA_KX_PARAM && x->arg == 0 && x->b == 4)
        return kx_node(w, MAYA_KX_PARAM, 1, x->a, x->b, 0, 0);
    return e;
}

/* A signed division's sign, (n ^ d) >= 0 (< 0): n and d have the same
 * sign (opposite signs), as the share of threads for which the two
 * comparisons with 0 agree; X_UNKNOWN for any other comparison. */
static uint32_t sign_test(struct kw *w, int cc, uint32_t a, uint32_t b)
{
    double zero;
    if ((cc != MAYA_CMP_GE && cc != MAYA_CMP_LT) || !kx_is_const(w, b, &zero) || zero != 0 || a == X_UNKNOWN ||
        w->x[a].op != MAYA_KX_XOR)
        return X_UNKNOWN;
    uint32_t n = kx_cmp(w, MAYA_CMP_GE, as_signed(w, w->x[a].a), X_ZERO);
    uint32_t d = kx_cmp(w, MAYA_CMP_GE, as_signed(w, w->x[a].b), X_ZERO);
    uint32_t same = kx_add(w, kx_mul(w, n, d), kx_mul(w, kx_not(w, n), kx_not(w, d)));
    return cc == MAYA_CMP_GE ? same : kx_not(w, same);
}

/* A float operand of a comparison whose value the launch gives: a literal
 * (0f3F800000), or a parameter, which reads as a float (SASS's LDC and a
 * constant-bank operand give its bits as an integer parameter); else
 * X_UNKNOWN. kind: 'f' (f32) or 'd' (f64). */
static uint32_t float_of(struct kw *w, struct emu_slice s, uint32_t v, char kind)
{
    double lit;
    if (kw_literal(s, &lit))
        return v;
    unsigned bytes = kind == 'd' ? 8 : 4;
    if (v == X_UNKNOWN || w->x[v].op != MAYA_KX_PARAM || w->x[v].b != bytes || kind == 'h')
        return X_UNKNOWN;
    return kx_node(w, MAYA_KX_PARAM, kind == 'd' ? 3 : 2, w->x[v].a, bytes, 0, 0);
}

/* The value an instruction gives its destination register. */
uint32_t kw_value(struct kw *w, const struct emu_ptx_inst *in)
{
    struct emu_slice op = in->op, opc = emu_ptx_opcode(op);
    uint32_t a = in->nops > 1 ? kw_operand(w, in->ops[1]) : X_UNKNOWN;
    uint32_t b = in->nops > 2 ? kw_operand(w, in->ops[2]) : X_UNKNOWN;
    uint32_t c = in->nops > 3 ? kw_operand(w, in->ops[3]) : X_UNKNOWN;
    char kind = 0;
    if (kw_type_of(op, &kind) == 4 && (kind == 's' || kind == 'u' || kind == 'b') &&
        (emu_slice_is(opc, "add") || emu_slice_is(opc, "add3") || emu_slice_is(opc, "sub") ||
         emu_slice_is(opc, "mad") || emu_slice_is(opc, "lea") || emu_slice_is(opc, "leahi"))) {
        /* the addends (mad's and lea's: the third and second operand) */
        int mad = emu_slice_is(opc, "mad"), lea = emu_slice_is(opc, "lea") || emu_slice_is(opc, "leahi");
        if (!mad && !lea)
            a = addend32(w, a);
        if (!mad)
            b = addend32(w, b);
        if (!lea)
            c = addend32(w, c);
    }
    int pred = kind == 'p';
    uint32_t based = kind == 's' || kind == 'u' || kind == 'b' ? based_sum(w, in, a, b, c) : X_UNKNOWN;
    if (based != X_UNKNOWN)
        return based;
    /* floating-point arithmetic is on data: its bits are not an integer
     * the analysis can follow (SASS's registers are untyped, and its
     * division and reciprocal range checks test a float's exponent bits) */
    if ((kind == 'f' || kind == 'd' || kind == 'h') && !emu_slice_is(opc, "ld") && !emu_slice_is(opc, "mov") &&
        !emu_slice_is(opc, "setp") && !emu_slice_is(opc, "cvt"))
        return X_UNKNOWN;
    if (emu_slice_is(opc, "ld")) {
        if (!emu_ptx_has_part(op, "param") || in->nops < 2 || in->ops[1].p[0] != '[' || kw_vec_of(op) > 1)
            return X_UNKNOWN;
        /* [name] or [name+off] */
        const char *p = in->ops[1].p + 1, *end = in->ops[1].p + in->ops[1].n;
        const char *q = p;
        while (q < end && *q != '+' && *q != ']')
            q++;
        double off = 0;
        if (q < end && *q == '+') {
            const char *r = q + 1;
            while (r < end && *r != ']')
                r++;
            if (!kw_literal((struct emu_slice){ q + 1, (uint32_t)(r - q - 1) }, &off))
                return X_UNKNOWN;
        }
        struct emu_slice name = { p, (uint32_t)(q - p) };
        for (uint32_t i = 0; i < w->k->nparams; i++)
            if (w->k->params[i].name.n == name.n && memcmp(w->k->params[i].name.p, name.p, name.n) == 0) {
                unsigned bytes = kw_type_of(op, NULL);
                double at = w->k->params[i].offset + off;
                if (!bytes || at + bytes > w->k->params[i].offset + w->k->params[i].bytes)
                    return X_UNKNOWN;
                uint8_t arg = kind == 's' ? 1 : kind == 'f' ? 2 : kind == 'd' ? 3 : 0;
                return kx_node(w, MAYA_KX_PARAM, arg, (uint32_t)at, bytes, 0, 0);
            }
        return X_UNKNOWN;
    }
    if (w->k->sass && emu_slice_is(op, "mov.b64") && in->nops == 2)
        return kw_cbank(w, in->ops[1], 8, 0); /* LDC.64: a 64-bit parameter (a pointer) */
    if (w->k->sass && kw_is_pair(in))
        return kw_cbank(w, in->ops[1], 4, 0); /* the pair's low register (the high: interpret) */
    if (w->k->sass && in->nops == 2 && (emu_slice_is(op, "mov.u8") || emu_slice_is(op, "mov.s8") ||
                                        emu_slice_is(op, "mov.u16") || emu_slice_is(op, "mov.s16")))
        return kw_cbank(w, in->ops[1], op.p[op.n - 1] == '8' ? 1 : 2, op.p[4] == 's'); /* LDC.U8 .S16 ... */
    if (pred && emu_slice_is(opc, "mov") && in->nops == 2) {
        /* mov.pred %p, 0 / -1 (or 1): a literal predicate is false when
         * it is 0 and true otherwise; nvcc sets all bits for true */
        double lit;
        if (kw_literal(in->ops[1], &lit))
            return lit != 0 ? X_ONE : X_ZERO;
        return a;
    }
    if (emu_slice_is(opc, "mov") || emu_slice_is(opc, "cvt") || emu_slice_is(opc, "cvta"))
        return in->nops == 2 ? a : X_UNKNOWN;
    if (emu_slice_is(opc, "add3")) /* SASS IADD3 */
        return kx_bin(w, MAYA_KX_ADD, kx_bin(w, MAYA_KX_ADD, a, b), c);
    if (emu_slice_is(opc, "lea")) /* SASS LEA d, a, b, s: (a << s) + b */
        return kx_bin(w, MAYA_KX_ADD, kx_bin(w, MAYA_KX_SHL, a, c), b);
    if (emu_slice_is(opc, "leahi")) /* SASS LEA.HI d, a, b, RZ, s: (a >> (32 - s)) + b */
        return kx_bin(w, MAYA_KX_ADD, kx_bin(w, MAYA_KX_SHR, a, kx_bin(w, MAYA_KX_SUB, kx_const(w, 32), c)), b);
    if (emu_slice_is(opc, "add"))
        return pred ? X_UNKNOWN : kx_bin(w, MAYA_KX_ADD, a, b);
    if (emu_slice_is(opc, "sub"))
        return kx_bin(w, MAYA_KX_SUB, a, b);
    if (emu_slice_is(opc, "mul") && emu_ptx_has_part(op, "hi") && emu_ptx_has_part(op, "u32"))
        /* the high half of a 32-bit product (division by a constant: n *
         * magic >> 32; nvdisasm prints a magic above 2^31 as negative) */
        return kx_bin(w, MAYA_KX_SHR, kx_bin(w, MAYA_KX_MUL, unsigned32(w, a), unsigned32(w, b)), kx_const(w, 32));
    if (emu_slice_is(opc, "mul") || emu_slice_is(opc, "mul24"))
        return emu_ptx_has_part(op, "hi") ? X_UNKNOWN : kx_bin(w, MAYA_KX_MUL, a, b);
    if (emu_slice_is(opc, "mad") || emu_slice_is(opc, "mad24"))
        return emu_ptx_has_part(op, "hi") ? X_UNKNOWN : kx_bin(w, MAYA_KX_ADD, kx_bin(w, MAYA_KX_MUL, a, b), c);
    if (emu_slice_is(opc, "div"))
        return kx_bin(w, MAYA_KX_DIV, a, b);
    if (emu_slice_is(opc, "rem"))
        return kx_bin(w, MAYA_KX_REM, a, b);
    if (emu_slice_is(opc, "shl"))
        return kx_bin(w, MAYA_KX_SHL, a, b);
    if (emu_slice_is(opc, "shr"))
        return kx_bin(w, MAYA_KX_SHR, a, b);
    if (emu_slice_is(opc, "min"))
        return kx_bin(w, MAYA_KX_MIN, a, b);
    if (emu_slice_is(opc, "max"))
        return kx_bin(w, MAYA_KX_MAX, a, b);
    if (emu_slice_is(opc, "minrelu") || emu_slice_is(opc, "maxrelu")) /* SASS VIMNMX.RELU */
        return kx_bin(w, MAYA_KX_MAX, kx_bin(w, opc.p[1] == 'i' ? MAYA_KX_MIN : MAYA_KX_MAX, a, b), X_ZERO);
    if (emu_slice_is(opc, "addmin") || emu_slice_is(opc, "addmax")) /* SASS VIADDMNMX */
        return kx_bin(w, opc.p[4] == 'i' ? MAYA_KX_MIN : MAYA_KX_MAX, kx_bin(w, MAYA_KX_ADD, a, b), c);
    if (emu_slice_is(opc, "neg"))
        return kx_bin(w, MAYA_KX_SUB, X_ZERO, a);
    if (emu_slice_is(opc, "abs") && !pred) {
        a = as_signed(w, a);
        return kx_bin(w, MAYA_KX_MAX, a, kx_bin(w, MAYA_KX_SUB, X_ZERO, a));
    }
    if (emu_slice_is(opc, "and"))
        return pred ? kx_mul(w, a, b) : kx_bin(w, MAYA_KX_AND, a, b);
    if (emu_slice_is(opc, "or"))
        return pred ? kx_por(w, a, b) : kx_bin(w, MAYA_KX_OR, a, b);
    if (emu_slice_is(opc, "xor"))
        return pred ? X_HALF : kx_bin(w, MAYA_KX_XOR, a, b);
    if (emu_slice_is(opc, "not"))
        return pred ? kx_not(w, a) : kx_bin(w, MAYA_KX_SUB, kx_const(w, -1), a);
    if (emu_slice_is(opc, "selp"))
        return kx_sel(w, c, a, b);
    if (emu_slice_is(opc, "prmt") && in->nops == 4) {
        /* SASS PRMT d, a, b, selector: a byte of a (0-3) or b (4-7) per
         * nibble; 8 + n replicates byte n's sign. The forms nvcc uses for
         * 16- and 8-bit values; a high half that is not known is an
         * unknown multiple of 2^16, which the low bits do not see. */
        double sel;
        if (!kw_literal(in->ops[3], &sel))
            return X_UNKNOWN;
        uint32_t k16 = kx_const(w, 65536), lo16 = kx_const(w, 0xffff);
        uint32_t b_hi = b != X_UNKNOWN ? kx_bin(w, MAYA_KX_AND, b, kx_const(w, 0xffff0000))
                                       : kx_bin(w, MAYA_KX_MUL, kx_node(w, MAYA_KX_UNKNOWN, 2, 0, 0, 0, 0), k16);
        switch ((unsigned)sel) {
        case 0x3210: return a;
        case 0x7610: return kx_bin(w, MAYA_KX_ADD, kx_bin(w, MAYA_KX_AND, a, lo16), b_hi);
        case 0x5410: return kx_bin(w, MAYA_KX_ADD, kx_bin(w, MAYA_KX_AND, a, lo16),
                                   kx_bin(w, MAYA_KX_MUL, kx_bin(w, MAYA_KX_AND, b, lo16), k16));
        case 0x9910: return sign_extend(w, a, 16); /* the low half */
        case 0x8880: return sign_extend(w, a, 8);  /* the low byte */
        default: return X_UNKNOWN;
        }
    }
    if (emu_slice_is(opc, "lop3") && in->nops >= 5) {
        /* SASS LOP3.LUT: a value, or a predicate (the value is not 0, or
         * the predicate operand) */
        double lut;
        uint32_t v = kw_literal(in->ops[4], &lut) ? lut3(w, (unsigned)lut, a, b, c) : X_UNKNOWN;
        if (!pred)
            return v;
        uint32_t p = kx_cmp(w, MAYA_CMP_NE, v, X_ZERO);
        return in->nops > 5 ? kx_por(w, p, kw_operand(w, in->ops[5])) : p;
    }
    if (emu_slice_is(opc, "setp")) {
        int cc = cmp_of(op);
        if (cc < 0)
            return X_HALF;
        uint32_t p;
        if (kind == 'f' || kind == 'd' || kind == 'h') {
            /* on data, but for a parameter against a literal or another
             * parameter (a scalar that is 1, a beta that is 0): the
             * launch decides it */
            uint32_t fa = float_of(w, in->ops[1], a, kind), fb = float_of(w, in->ops[2], b, kind);
            if (fa == X_UNKNOWN || fb == X_UNKNOWN)
                return X_HALF;
            p = kx_cmp(w, cc, fa, fb);
        } else {
            p = sign_test(w, cc, a, b);
            if (p == X_UNKNOWN)
                p = kx_cmp(w, cc, a, b);
        }
        if (in->nops > 3) { /* setp.CMP.and / .or with a third predicate */
            if (emu_ptx_has_part(op, "and"))
                p = kx_mul(w, p, c);
            else if (emu_ptx_has_part(op, "or"))
                p = kx_por(w, p, c);
        }
        return p;
    }
    return X_UNKNOWN;
}

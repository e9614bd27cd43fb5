/* Checking and reading kernel work summaries in trace records. A trace
 * comes from outside: every index a summary holds is checked before a
 * reader follows it. */
#include "maya/kwork.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *const class_names[MAYA_KW_NCLASSES] = {
    [MAYA_KW_LD_GLOBAL] = "ld_global", [MAYA_KW_ST_GLOBAL] = "st_global",
    [MAYA_KW_LD_SHARED] = "ld_shared", [MAYA_KW_ST_SHARED] = "st_shared",
    [MAYA_KW_FLOP_FP64] = "flop_fp64", [MAYA_KW_FLOP_FP32] = "flop_fp32", [MAYA_KW_FLOP_FP16] = "flop_fp16",
    [MAYA_KW_MMA_FP64] = "mma_fp64", [MAYA_KW_MMA_TF32] = "mma_tf32", [MAYA_KW_MMA_FP16] = "mma_fp16",
    [MAYA_KW_MMA_FP8] = "mma_fp8", [MAYA_KW_MMA_INT8] = "mma_int8", [MAYA_KW_SFU] = "sfu",
    [MAYA_KW_INSTS] = "insts", [MAYA_KW_ATOMIC] = "atomic",
};

static const char *const op_names[MAYA_KX_NOPS] = {
    "unknown", "const", "param", "sreg", "add", "sub", "mul", "div", "rem", "shl", "shr", "and", "or", "xor",
    "min", "max", "cmp", "not", "por", "sel", "phi", "trip", "param_at",
};

const char *maya_kw_class_name(unsigned cls)
{
    return cls < MAYA_KW_NCLASSES ? class_names[cls] : "?";
}

const char *maya_kx_op_name(unsigned op)
{
    return op < MAYA_KX_NOPS ? op_names[op] : "?";
}

const struct maya_kexpr *maya_kwork_exprs(const struct maya_kwork *w)
{
    return (const struct maya_kexpr *)(w + 1);
}

const struct maya_kterm *maya_kwork_terms(const struct maya_kwork *w)
{
    return (const struct maya_kterm *)(maya_kwork_exprs(w) + w->nexprs);
}

uint64_t maya_kwork_bytes(const struct maya_kwork *w)
{
    return sizeof *w + (uint64_t)w->nexprs * sizeof(struct maya_kexpr) +
           (uint64_t)w->nterms * sizeof(struct maya_kterm);
}

unsigned maya_kx_operands(unsigned op)
{
    if (op <= MAYA_KX_SREG || op >= MAYA_KX_NOPS)
        return 0;
    if (op == MAYA_KX_NOT || op == MAYA_KX_PHI || op == MAYA_KX_PARAM_AT)
        return 1;
    if (op == MAYA_KX_SEL || op == MAYA_KX_TRIP)
        return 7;
    return 3;
}

int maya_kx_compare(int c, double a, double b)
{
    switch (c) {
    case MAYA_CMP_LT: return a < b;
    case MAYA_CMP_LE: return a <= b;
    case MAYA_CMP_GT: return a > b;
    case MAYA_CMP_GE: return a >= b;
    case MAYA_CMP_EQ: return a == b;
    default: return a != b;
    }
}

const struct maya_kwork *maya_kernel_work(const struct maya_rec_kernel *k, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    *why = NULL;
    if (!k || !k->work_bytes)
        return NULL;
    uint64_t at = sizeof *k + (uint64_t)k->nparams * sizeof(struct maya_kparam) +
                  (uint64_t)k->nfeatures * sizeof(struct maya_kfeature);
    if (at + k->work_bytes > k->h.bytes || k->work_bytes < sizeof(struct maya_kwork)) {
        *why = "work summary does not fit in the record";
        return NULL;
    }
    const struct maya_kwork *w = (const void *)((const unsigned char *)k + at);
    if (maya_kwork_bytes(w) > k->work_bytes) {
        *why = "work summary: expressions and terms overrun it";
        return NULL;
    }
    if (w->source != MAYA_KW_PTX && w->source != MAYA_KW_SASS) {
        *why = "work summary: unknown code source";
        return NULL;
    }
    const struct maya_kexpr *x = maya_kwork_exprs(w);
    for (uint32_t i = 0; i < w->nexprs; i++) {
        unsigned ops = maya_kx_operands(x[i].op);
        if (x[i].op >= MAYA_KX_NOPS || ((ops & 1) && x[i].a >= i) || ((ops & 2) && x[i].b >= i) ||
            ((ops & 4) && x[i].c >= i) || !isfinite(x[i].imm) ||
            (x[i].op == MAYA_KX_SREG && x[i].arg >= MAYA_SR_NSREGS) ||
            (x[i].op == MAYA_KX_CMP && (x[i].arg & 0x7f) >= MAYA_CMP_NCMPS) ||
            (x[i].op == MAYA_KX_TRIP && (x[i].arg & MAYA_KX_TRIP_CMP) >= MAYA_CMP_NCMPS) ||
            (x[i].op == MAYA_KX_PARAM && (x[i].b == 0 || x[i].b > 8)) ||
            (x[i].op == MAYA_KX_PARAM_AT && x[i].imm != 1 && x[i].imm != 2 && x[i].imm != 4 && x[i].imm != 8)) {
            *why = "work summary: an expression with a bad op or operand";
            return NULL;
        }
    }
    const struct maya_kterm *t = maya_kwork_terms(w);
    for (uint32_t i = 0; i < w->nterms; i++)
        if (t[i].mult >= w->nexprs || t[i].cls >= MAYA_KW_NCLASSES || !isfinite(t[i].amount) ||
            t[i].amount < 0) {
            *why = "work summary: a term with a bad multiplier, class or amount";
            return NULL;
        }
    return w;
}

const struct maya_kextent *maya_launch_extents(const struct maya_rec_launch *l, uint32_t *n)
{
    *n = 0;
    if (!l || !l->nextents)
        return NULL;
    uint64_t at = sizeof *l + MAYA_REC_ALIGN((uint64_t)l->param_bytes);
    if (at + (uint64_t)l->nextents * sizeof(struct maya_kextent) > l->h.bytes)
        return NULL;
    *n = l->nextents;
    return (const struct maya_kextent *)((const unsigned char *)l + at);
}

/* ---- text ---- */

struct out {
    char *p;
    size_t left;
    int cut;
};

static void put(struct out *o, const char *s)
{
    size_t n = strlen(s);
    if (n >= o->left) {
        o->cut = 1;
        n = o->left ? o->left - 1 : 0;
    }
    memcpy(o->p, s, n);
    o->p += n;
    o->left -= n;
    if (o->left)
        *o->p = '\0';
}

static void expr_text(const struct maya_kexpr *x, uint32_t i, struct out *o, int depth)
{
    static const char *const sregs[MAYA_SR_NSREGS] = {
        "tid.x", "tid.y", "tid.z", "ntid.x", "ntid.y", "ntid.z", "ctaid.x", "ctaid.y", "ctaid.z",
        "nctaid.x", "nctaid.y", "nctaid.z", "laneid", "warpid",
    };
    static const char *const cmps[MAYA_CMP_NCMPS] = { "<", "<=", ">", ">=", "==", "!=" };
    static const char *const infix[MAYA_KX_NOPS] = {
        [MAYA_KX_ADD] = "+", [MAYA_KX_SUB] = "-", [MAYA_KX_MUL] = "*", [MAYA_KX_DIV] = "/",
        [MAYA_KX_REM] = "%", [MAYA_KX_SHL] = "<<", [MAYA_KX_SHR] = ">>", [MAYA_KX_AND] = "&",
        [MAYA_KX_OR] = "|", [MAYA_KX_XOR] = "^",
    };
    char buf[64];
    const struct maya_kexpr *e = &x[i];
    if (o->cut)
        return;
    if (depth > 12) {
        put(o, "...");
        return;
    }
    switch (e->op) {
    case MAYA_KX_UNKNOWN: put(o, "?"); return;
    case MAYA_KX_CONST: snprintf(buf, sizeof buf, "%.6g", e->imm); put(o, buf); return;
    case MAYA_KX_PARAM: snprintf(buf, sizeof buf, "param@%u", e->a); put(o, buf); return;
    case MAYA_KX_SREG: put(o, e->arg < MAYA_SR_NSREGS ? sregs[e->arg] : "?"); return;
    case MAYA_KX_PHI: expr_text(x, e->a, o, depth + 1); return;
    case MAYA_KX_NOT: put(o, "!"); expr_text(x, e->a, o, depth + 1); return;
    case MAYA_KX_PARAM_AT: put(o, "param@["); expr_text(x, e->a, o, depth + 1); put(o, "]"); return;
    case MAYA_KX_MIN: case MAYA_KX_MAX: case MAYA_KX_POR:
        put(o, e->op == MAYA_KX_MIN ? "min(" : e->op == MAYA_KX_MAX ? "max(" : "either(");
        expr_text(x, e->a, o, depth + 1);
        put(o, ", ");
        expr_text(x, e->b, o, depth + 1);
        put(o, ")");
        return;
    case MAYA_KX_SEL:
        put(o, "(");
        expr_text(x, e->c, o, depth + 1);
        put(o, " ? ");
        expr_text(x, e->a, o, depth + 1);
        put(o, " : ");
        expr_text(x, e->b, o, depth + 1);
        put(o, ")");
        return;
    case MAYA_KX_CMP:
        put(o, "[");
        expr_text(x, e->a, o, depth + 1);
        put(o, cmps[e->arg % MAYA_CMP_NCMPS]);
        expr_text(x, e->b, o, depth + 1);
        put(o, "]");
        return;
    case MAYA_KX_TRIP:
        put(o, "trip(");
        expr_text(x, e->a, o, depth + 1);
        put(o, cmps[(e->arg & MAYA_KX_TRIP_CMP) % MAYA_CMP_NCMPS]);
        expr_text(x, e->b, o, depth + 1);
        put(o, e->arg & MAYA_KX_TRIP_HALVES ? " shift " : " step ");
        expr_text(x, e->c, o, depth + 1);
        put(o, ")");
        return;
    default:
        put(o, "(");
        expr_text(x, e->a, o, depth + 1);
        put(o, infix[e->op] ? infix[e->op] : "?");
        expr_text(x, e->b, o, depth + 1);
        put(o, ")");
        return;
    }
}

int maya_kwork_expr_text(const struct maya_kwork *w, uint32_t i, char *buf, size_t size)
{
    if (!size)
        return -1;
    buf[0] = '\0';
    if (i >= w->nexprs)
        return -1;
    struct out o = { buf, size, 0 };
    expr_text(maya_kwork_exprs(w), i, &o, 0);
    return o.cut ? -1 : 0;
}

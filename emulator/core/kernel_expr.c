/* The expressions the analysis of a kernel's code builds (kernel_work.c):
 * integer values and shares of threads over the launch's parameters and
 * special registers, hash-consed in the analysis state so that equal
 * expressions are one node. Costs: a node is a hash lookup (open
 * addressing, the table kept under half full); the table doubles as nodes
 * are added, up to MAX_NODES. */
#include "kernel_work_int.h"
#include "maya/kwork.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t xhash_of(const struct maya_kexpr *e)
{
    uint64_t bits;
    memcpy(&bits, &e->imm, sizeof bits);
    uint64_t h = ((uint64_t)e->op << 56) ^ ((uint64_t)e->arg << 48) ^ ((uint64_t)e->a << 32) ^
                 ((uint64_t)e->b << 16) ^ e->c ^ (bits * 0x9e3779b97f4a7c15ull);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (uint32_t)h;
}

static int xsame(const struct maya_kexpr *p, const struct maya_kexpr *q)
{
    return p->op == q->op && p->arg == q->arg && p->a == q->a && p->b == q->b && p->c == q->c &&
           memcmp(&p->imm, &q->imm, sizeof p->imm) == 0;
}

static int xgrow(struct kw *w)
{
    uint32_t ncap = w->capx ? w->capx * 2 : 1024;
    struct maya_kexpr *nx = realloc(w->x, ncap * sizeof *nx);
    if (!nx)
        return -1;
    w->x = nx;
    uint8_t *ns = realloc(w->xshare, ncap);
    if (!ns)
        return -1;
    memset(ns + w->capx, 0, ncap - w->capx);
    w->xshare = ns;
    w->capx = ncap;
    uint32_t bits = w->xbits;
    while ((1u << bits) < ncap * 2)
        bits++;
    uint32_t *nh = calloc((size_t)1 << bits, sizeof *nh);
    if (!nh)
        return -1;
    free(w->xhash);
    w->xhash = nh;
    w->xbits = bits;
    for (uint32_t i = 0; i < w->nx; i++) {
        uint32_t s = xhash_of(&w->x[i]) & ((1u << bits) - 1);
        while (nh[s])
            s = (s + 1) & ((1u << bits) - 1);
        nh[s] = i + 1;
    }
    return 0;
}

uint32_t kx_node(struct kw *w, uint8_t op, uint8_t arg, uint32_t a, uint32_t b, uint32_t c, double imm)
{
    struct maya_kexpr e = { op, arg, (uint16_t)a, (uint16_t)b, (uint16_t)c, imm };
    if (w->nx == w->capx && (w->nx >= MAX_NODES || xgrow(w) < 0)) {
        w->flags |= MAYA_KW_F_TRUNCATED;
        return X_UNKNOWN;
    }
    uint32_t mask = (1u << w->xbits) - 1, s = xhash_of(&e) & mask;
    for (; w->xhash[s]; s = (s + 1) & mask)
        if (xsame(&w->x[w->xhash[s] - 1], &e))
            return w->xhash[s] - 1;
    w->x[w->nx] = e;
    w->xhash[s] = w->nx + 1;
    return w->nx++;
}

int kx_init(struct kw *w)
{
    if (xgrow(w) < 0)
        return -1;
    kx_node(w, MAYA_KX_UNKNOWN, 0, 0, 0, 0, 0); /* X_UNKNOWN */
    kx_const(w, 0);                             /* X_ZERO */
    kx_const(w, 1);                             /* X_ONE */
    kx_const(w, 0.5);                           /* X_HALF */
    return 0;
}

uint32_t kx_const(struct kw *w, double v)
{
    if (!isfinite(v))
        return X_UNKNOWN;
    return kx_node(w, MAYA_KX_CONST, 0, 0, 0, 0, v);
}

int kx_is_const(const struct kw *w, uint32_t a, double *v)
{
    if (w->x[a].op != MAYA_KX_CONST)
        return 0;
    *v = w->x[a].imm;
    return 1;
}

/* An exact integer operation on two constants, where it is well defined. */
static int fold(uint8_t op, double a, double b, double *out)
{
    if (fabs(a) > 9e15 || fabs(b) > 9e15)
        return 0;
    int64_t x = (int64_t)a, y = (int64_t)b;
    int ints = (double)x == a && (double)y == b;
    switch (op) {
    case MAYA_KX_ADD: *out = a + b; return 1;
    case MAYA_KX_SUB: *out = a - b; return 1;
    case MAYA_KX_MUL: *out = a * b; return 1;
    case MAYA_KX_MIN: *out = a < b ? a : b; return 1;
    case MAYA_KX_MAX: *out = a > b ? a : b; return 1;
    case MAYA_KX_DIV: if (!ints || y == 0) return 0; *out = (double)(x / y); return 1;
    case MAYA_KX_REM: if (!ints || y == 0) return 0; *out = (double)(x % y); return 1;
    case MAYA_KX_SHL: if (!ints || y < 0 || y > 62) return 0; *out = a * (double)(1ull << y); return 1;
    case MAYA_KX_SHR: if (!ints || y < 0 || y > 62) return 0; *out = (double)(x >> y); return 1;
    case MAYA_KX_AND: if (!ints) return 0; *out = (double)(x & y); return 1;
    case MAYA_KX_OR: if (!ints) return 0; *out = (double)(x | y); return 1;
    case MAYA_KX_XOR: if (!ints) return 0; *out = (double)(x ^ y); return 1;
    default: return 0;
    }
}

/* Is e a multiple of m (a power of two) whatever its unknowns are: a
 * constant, or a product or shift by one? */
static int multiple_of(const struct kw *w, uint32_t e, double m)
{
    const struct maya_kexpr *x = &w->x[e];
    double v;
    if (kx_is_const(w, e, &v))
        return fabs(v) < 9e15 && fmod(v, m) == 0;
    if (x->op == MAYA_KX_MUL)
        return (kx_is_const(w, x->b, &v) && fmod(v, m) == 0) || (kx_is_const(w, x->a, &v) && fmod(v, m) == 0);
    if (x->op == MAYA_KX_SHL)
        return kx_is_const(w, x->b, &v) && v >= 0 && v < 63 && ldexp(1, (int)v) >= m;
    return 0;
}

/* The low bits of e below m (a power of two): e with the addends that are
 * multiples of m dropped (e & (m - 1) is that of what is left). */
static uint32_t low_part(struct kw *w, uint32_t e, double m, int depth)
{
    const struct maya_kexpr *x = &w->x[e];
    if (multiple_of(w, e, m))
        return X_ZERO;
    if (x->op != MAYA_KX_ADD || depth > 8)
        return e;
    uint32_t p = x->a, q = x->b;
    uint32_t lp = low_part(w, p, m, depth + 1), lq = low_part(w, q, m, depth + 1);
    return lp == p && lq == q ? e : kx_bin(w, MAYA_KX_ADD, lp, lq);
}

/* Is e the quotient n / d (DIV)? */
static int quotient_of(const struct kw *w, uint32_t e, uint32_t n, uint32_t d)
{
    return w->x[e].op == MAYA_KX_DIV && w->x[e].a == n && w->x[e].b == d;
}

/* n - d * (n / d), as nvcc's division leaves it to correct its quotient
 * (n + d * (0 - q) or n - d * q): the remainder n % d, whose range the
 * evaluator knows (the product's and the difference's ranges, taken
 * apart, would spread over the dividend's). X_UNKNOWN if t is not d * q. */
static uint32_t remainder_of(struct kw *w, uint32_t n, uint32_t t, int negated)
{
    const struct maya_kexpr *m = &w->x[t];
    if (m->op != MAYA_KX_MUL)
        return X_UNKNOWN;
    for (int s = 0; s < 2; s++) {
        uint32_t d = s ? m->b : m->a, q = s ? m->a : m->b;
        if (negated) {
            if (w->x[q].op != MAYA_KX_SUB || w->x[q].a != X_ZERO)
                continue;
            q = w->x[q].b;
        }
        if (quotient_of(w, q, n, d))
            return kx_node(w, MAYA_KX_REM, 0, n, d, 0, 0);
    }
    return X_UNKNOWN;
}

uint32_t kx_bin(struct kw *w, uint8_t op, uint32_t a, uint32_t b)
{
    if (a == X_UNKNOWN || b == X_UNKNOWN)
        return X_UNKNOWN;
    double u = 0, v = 0, r;
    int ca = kx_is_const(w, a, &u), cb = kx_is_const(w, b, &v);
    if (ca && cb && fold(op, u, v, &r))
        return kx_const(w, r);
    switch (op) {
    case MAYA_KX_ADD: {
        if (ca && u == 0) return b;
        if (cb && v == 0) return a;
        uint32_t rem = remainder_of(w, a, b, 1);
        if (rem == X_UNKNOWN)
            rem = remainder_of(w, b, a, 1);
        if (rem != X_UNKNOWN)
            return rem;
        break;
    }
    case MAYA_KX_SUB: {
        if (cb && v == 0) return a;
        uint32_t rem = remainder_of(w, a, b, 0);
        if (rem != X_UNKNOWN)
            return rem;
        break;
    }
    case MAYA_KX_SHL: case MAYA_KX_SHR:
        if (cb && v == 0) return a;
        break;
    case MAYA_KX_MUL:
        if ((ca && u == 0) || (cb && v == 0)) return X_ZERO;
        if (ca && u == 1) return b;
        if (cb && v == 1) return a;
        break;
    case MAYA_KX_DIV:
        if (cb && v == 1) return a;
        break;
    case MAYA_KX_AND:
        /* a low-bit mask does not see addends that are multiples of the
         * power of two above it (PRMT's unknown high half) */
        if (cb && v > 0 && v < 4294967296.0) {
            double m = 1;
            while (m <= v)
                m *= 2;
            uint32_t l = low_part(w, a, m, 0);
            if (l != a)
                return kx_bin(w, MAYA_KX_AND, l, b);
        }
        break;
    default:
        break;
    }
    return kx_node(w, op, 0, a, b, 0, 0);
}

uint32_t kx_cmp(struct kw *w, int c, uint32_t a, uint32_t b)
{
    if (a == X_UNKNOWN || b == X_UNKNOWN)
        return X_HALF;
    if (a == b) /* a value against itself (a 64-bit compare's halves, both read as the low one) */
        return c == MAYA_CMP_EQ || c == MAYA_CMP_LE || c == MAYA_CMP_GE ? X_ONE : X_ZERO;
    double u, v;
    if (kx_is_const(w, a, &u) && kx_is_const(w, b, &v)) {
        return maya_kx_compare(c, u, v) ? X_ONE : X_ZERO;
    }
    return kx_node(w, MAYA_KX_CMP, (uint8_t)c, a, b, 0, 0);
}

uint32_t kx_not(struct kw *w, uint32_t p)
{
    if (p == X_ONE) return X_ZERO;
    if (p == X_ZERO) return X_ONE;
    if (p == X_HALF) return X_HALF;
    if (w->x[p].op == MAYA_KX_NOT)
        return w->x[p].a;
    if (w->x[p].op == MAYA_KX_CMP) {
        static const uint8_t inv[MAYA_CMP_NCMPS] = { MAYA_CMP_GE, MAYA_CMP_GT, MAYA_CMP_LE, MAYA_CMP_LT,
                                                     MAYA_CMP_NE, MAYA_CMP_EQ };
        return kx_node(w, MAYA_KX_CMP, inv[w->x[p].arg], w->x[p].a, w->x[p].b, 0, 0);
    }
    return kx_node(w, MAYA_KX_NOT, 0, p, 0, 0, 0);
}

/* Products and sums of shares and frequencies. */
uint32_t kx_mul(struct kw *w, uint32_t a, uint32_t b)
{
    if (a == X_ZERO || b == X_ZERO) return X_ZERO;
    if (a == X_ONE) return b;
    if (b == X_ONE) return a;
    return kx_bin(w, MAYA_KX_MUL, a, b);
}


/* Are shares p and q complements (q = not p)? */
static int complements(struct kw *w, uint32_t p, uint32_t q)
{
    const struct maya_kexpr *x = &w->x[p];
    if (x->op != MAYA_KX_CMP && x->op != MAYA_KX_NOT && w->x[q].op != MAYA_KX_NOT)
        return 0;
    return kx_not(w, p) == q;
}

uint32_t kx_add(struct kw *w, uint32_t a, uint32_t b)
{
    if (a == X_ZERO) return b;
    if (b == X_ZERO) return a;
    /* the two sides of a branch join again: f*p + f*(not p) = f */
    if (complements(w, a, b))
        return X_ONE;
    const struct maya_kexpr *x = &w->x[a], *y = &w->x[b];
    if (a == b && x->op == MAYA_KX_MUL && (x->a == X_HALF || x->b == X_HALF))
        return x->a == X_HALF ? x->b : x->a; /* both sides of a branch on data */
    if (x->op == MAYA_KX_MUL && y->op == MAYA_KX_MUL) {
        if (x->a == y->a && complements(w, x->b, y->b))
            return x->a;
        if (x->b == y->b && complements(w, x->a, y->a))
            return x->b;
    }
    return kx_bin(w, MAYA_KX_ADD, a, b);
}

uint32_t kx_por(struct kw *w, uint32_t a, uint32_t b)
{
    if (a == X_ONE || b == X_ONE) return X_ONE;
    if (a == X_ZERO) return b;
    if (b == X_ZERO) return a;
    return kx_node(w, MAYA_KX_POR, 0, a, b, 0, 0);
}

/* Is share c a condition the launch decides (comparisons of parameters,
 * block and grid sizes, indices), not one on data (a constant half)? A
 * join's share of one path, its frequency over the sum of both, is one
 * when the frequencies are products, sums and selections of such
 * comparisons and constants (a path that also passed an exit on data:
 * half of it), with at least one comparison among them. The answers are
 * kept per expression (expressions never change, so each is walked once,
 * w->xshare): not yet known, a share with a comparison in it, one of
 * constants only, not a share the launch decides; and a walk cut short by
 * its depth (not kept: read as not decided). */
enum { SHARE_UNSEEN, SHARE_CMP, SHARE_CONST, SHARE_NO, SHARE_CUT };

static int launch_share(struct kw *w, uint32_t c, int depth)
{
    if (w->xshare[c] != SHARE_UNSEEN)
        return w->xshare[c];
    const struct maya_kexpr *x = &w->x[c];
    if (depth > 1024) /* the stack a rank's thread can spare */
        return SHARE_CUT;
    int r = SHARE_NO, ra, rb, rc;
    switch (x->op) {
    case MAYA_KX_CMP: r = SHARE_CMP; break;
    case MAYA_KX_CONST: r = SHARE_CONST; break;
    case MAYA_KX_NOT: r = launch_share(w, x->a, depth + 1); break;
    case MAYA_KX_MUL:
    case MAYA_KX_POR:
    case MAYA_KX_ADD:
    case MAYA_KX_DIV:
        ra = launch_share(w, x->a, depth + 1);
        rb = ra >= SHARE_NO ? ra : launch_share(w, x->b, depth + 1);
        r = ra >= SHARE_NO ? ra : rb >= SHARE_NO ? rb : ra == SHARE_CMP || rb == SHARE_CMP ? SHARE_CMP : SHARE_CONST;
        break;
    case MAYA_KX_SEL:
        /* a predicate two paths left differently (one of them, where the
         * launch chooses, maybe unknown) */
        rc = launch_share(w, x->c, depth + 1);
        ra = rc >= SHARE_NO ? rc : x->a == X_UNKNOWN ? SHARE_CONST : launch_share(w, x->a, depth + 1);
        rb = ra >= SHARE_NO ? ra : x->b == X_UNKNOWN ? SHARE_CONST : launch_share(w, x->b, depth + 1);
        r = rc >= SHARE_NO ? rc : ra >= SHARE_NO ? ra : rb >= SHARE_NO ? rb
          : rc == SHARE_CMP || ra == SHARE_CMP || rb == SHARE_CMP ? SHARE_CMP : SHARE_CONST;
        break;
    default: break;
    }
    if (r != SHARE_CUT)
        w->xshare[c] = (uint8_t)r;
    return r;
}

static int launch_cond(struct kw *w, uint32_t c)
{
    return launch_share(w, c, 0) == SHARE_CMP;
}

uint32_t kx_sel(struct kw *w, uint32_t c, uint32_t a, uint32_t b)
{
    if (a == b) return a;
    if (c == X_ONE) return a;
    if (c == X_ZERO) return b;
    /* a value unknown on one side only stays a choice when the launch
     * decides it (varlen attention's sequence lengths read from memory
     * where its cu_seqlens pointer is set, from a parameter where it is
     * null): a launch that takes the known side gets its value */
    if ((a == X_UNKNOWN) != (b == X_UNKNOWN) && launch_cond(w, c))
        return kx_node(w, MAYA_KX_SEL, 0, a, b, c, 0);
    if (a == X_UNKNOWN || b == X_UNKNOWN)
        return X_UNKNOWN;
    return kx_node(w, MAYA_KX_SEL, 0, a, b, c, 0);
}

/* Does expression e depend on loop l's carried values? */
int kx_depends(const struct kw *w, uint32_t e, uint32_t l, int depth)
{
    const struct maya_kexpr *x = &w->x[e];
    if (x->op == MAYA_KX_PHI)
        return x->b == l;
    if (depth > MAX_WALK)
        return 0;
    unsigned ops = maya_kx_operands(x->op);
    return ((ops & 1) && kx_depends(w, x->a, l, depth + 1)) || ((ops & 2) && kx_depends(w, x->b, l, depth + 1)) ||
           ((ops & 4) && kx_depends(w, x->c, l, depth + 1));
}


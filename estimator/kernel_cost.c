/* A kernel's cost from the work its code does (the summary the emulator
 * read from its PTX or SASS, include/maya/trace_format.h):
 *
 * 1. est_kwork_eval: the summary's expressions for one launch. Every
 *    expression is evaluated as a range over the launch's threads, [lo, hi],
 *    with the mean over threads: parameters are the launch's values, %ntid
 *    and %nctaid its block and grid, %tid and %ctaid range over them (the
 *    mean assumes threads spread evenly). A comparison gives the share of
 *    threads for which it holds (a value spread evenly over its range); a
 *    loop's trip count is averaged over the threads that enter it (32
 *    sample starts over the start's range; where the bound varies over
 *    the threads too, 16 sampled threads, joint_trip). A term whose
 *    multiplier this launch leaves unknown counts its unknown loops once,
 *    at the share of threads that reach it. Each term's amount times its
 *    multiplier's mean times the launch's threads is the launch's total of
 *    its class. Global bytes that go through one pointer parameter reach
 *    DRAM at most once per byte of the allocation it points into (loads and
 *    stores apart): re-reads of a buffer are served by the caches; what
 *    every block reads at the same addresses reaches it for one block.
 *
 * 2. est_kwork_ns: a roofline over the GPU's units, each at its peak from
 *    the hwspec: DRAM bytes against HBM bandwidth (scaled down when too few
 *    threads are resident to keep enough bytes in flight; a load keeps
 *    those of one pass of its loop's body, the loads under the same loops),
 *    all global bytes
 *    against L2 bandwidth, CUDA-core FLOPs by precision, tensor-core FLOPs
 *    by precision (at the share of peak cuBLAS reaches), special-function
 *    ops (16 per SM per clock), shared-memory bytes (128 per SM per clock)
 *    and issued instructions (4 warps per SM per clock). The slowest unit
 *    sets the time; compute units are scaled by how full the SMs are (the
 *    last wave's empty slots, from blocks per SM that registers, shared
 *    memory and threads allow, and too few warps per SM to hide latency).
 *    The kernel floor (launch and drain) comes on top.
 *
 * Cost: one pass over the summary's expressions (at most 4096) and terms
 * per launch, about 1-5 us for a large summary; 16 more where a loop's
 * start and bound both vary over the threads, one more where a term's
 * multiplier is not known (the emulator's device clock keeps the times of
 * recent launches: a training loop pays this once per kernel and shape).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "est_internal.h"
#include "maya/kwork.h"

/* The most bytes a thread keeps in flight to DRAM (a few vector loads
 * issued before their first use; what the loads of one pass of a kernel's
 * loop add up to, when less, est_kwork.load_in_flight) and the DRAM
 * latency: with fewer resident threads than bandwidth x latency / bytes in
 * flight, memory runs latency-bound. */
#define BYTES_IN_FLIGHT 64.0
#define DRAM_LATENCY_NS 700.0
/* Units per SM per clock (Volta and later): special-function results,
 * shared-memory bytes, warp instructions issued. */
#define SFU_PER_SM_CLK 16.0
#define SMEM_BYTES_PER_SM_CLK 128.0
#define ISSUE_PER_SM_CLK (4.0 * 32)
/* Warps per SM that keep the arithmetic pipes busy (two per scheduler). */
#define WARPS_TO_FILL 8.0
/* The share of the tensor-core peak warp-level mma.sync reaches from sm_90
 * on, where the peak is the warpgroup instructions' (est_kwork_times). */
#define WARP_MMA_SHARE_SM90 (2.0 / 3)
/* Warp-level MMA kernels: their shared-memory and issue times add, times
 * this (est_kwork_times says why; fitted on one measured FlashAttention-2
 * kernel, docs/kernel-cost.md). */
#define WARP_MMA_STAGING_K 1.08

/* A value over the launch's threads: its range and mean, and the low bits
 * every one of them has clear (tz: a pointer's alignment, a multiple of a
 * row's length), so that an alignment test on a spread value can still be
 * decided: (base + 4 * n * row) & 15 is 0 for every row when n is even. */
struct val {
    double lo, avg, hi;
    int known;
    int tz;
};

/* Low zero bits of an integer v (64 for 0; 0 for a fraction or a value
 * too large to be exact). */
static int zeros_of(double v)
{
    if (v != floor(v) || fabs(v) >= 9e15)
        return 0;
    if (v == 0)
        return 64;
    return __builtin_ctzll((unsigned long long)(int64_t)v);
}

static struct val exact(double v)
{
    return (struct val){ v, v, v, 1, zeros_of(v) };
}

static const struct val unknown = { 0, 0, 0, 0, 0 };

static double clamp01(double x)
{
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

static double read_param(const unsigned char *params, uint32_t param_bytes, const struct maya_kexpr *x, int *ok)
{
    *ok = 0;
    if ((uint32_t)x->a + x->b > param_bytes)
        return 0;
    uint64_t u = 0;
    memcpy(&u, params + x->a, x->b); /* little-endian, as the trace is */
    *ok = 1;
    if (x->arg == 2 && x->b == 4) {
        float f;
        memcpy(&f, &u, sizeof f);
        return isfinite(f) ? f : (*ok = 0);
    }
    if (x->arg == 3 && x->b == 8) {
        double d;
        memcpy(&d, &u, sizeof d);
        return isfinite(d) ? d : (*ok = 0);
    }
    if (x->arg == 1 && x->b < 8 && (u >> (x->b * 8 - 1)) & 1)
        u |= ~0ull << (x->b * 8); /* sign-extend */
    return x->arg == 1 ? (double)(int64_t)u : (double)u;
}

/* The range and mean of a special register over the launch's threads. */
static struct val sreg(const struct maya_rec_launch *l, int which)
{
    double b[3] = { l->block[0], l->block[1], l->block[2] }, g[3] = { l->grid[0], l->grid[1], l->grid[2] };
    double tpb = b[0] * b[1] * b[2];
    switch (which) {
    case MAYA_SR_TID_X: case MAYA_SR_TID_Y: case MAYA_SR_TID_Z: {
        double n = b[which - MAYA_SR_TID_X];
        return (struct val){ 0, (n - 1) / 2, n - 1, 1, 0 };
    }
    case MAYA_SR_NTID_X: case MAYA_SR_NTID_Y: case MAYA_SR_NTID_Z:
        return exact(b[which - MAYA_SR_NTID_X]);
    case MAYA_SR_CTAID_X: case MAYA_SR_CTAID_Y: case MAYA_SR_CTAID_Z: {
        double n = g[which - MAYA_SR_CTAID_X];
        return (struct val){ 0, (n - 1) / 2, n - 1, 1, 0 };
    }
    case MAYA_SR_NCTAID_X: case MAYA_SR_NCTAID_Y: case MAYA_SR_NCTAID_Z:
        return exact(g[which - MAYA_SR_NCTAID_X]);
    case MAYA_SR_LANEID: {
        double n = fmin(32, tpb);
        return (struct val){ 0, (n - 1) / 2, n - 1, 1, 0 };
    }
    case MAYA_SR_WARPID: {
        double n = ceil(tpb / 32);
        return (struct val){ 0, (n - 1) / 2, n - 1, 1, 0 };
    }
    default:
        return unknown;
    }
}

static int is_exact(struct val v)
{
    return v.known && v.lo == v.hi;
}

static struct val range(double lo, double avg, double hi)
{
    if (!isfinite(lo) || !isfinite(hi) || !isfinite(avg))
        return unknown;
    if (lo > hi) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    return (struct val){ lo, fmin(fmax(avg, lo), hi), hi, 1, lo == hi ? zeros_of(lo) : 0 };
}

static struct val with_tz(struct val v, int tz)
{
    if (v.known && !(v.lo == v.hi))
        v.tz = tz < 0 ? 0 : tz > 64 ? 64 : tz;
    return v;
}

/* The most parameter-array elements a spread index reads: beyond it, that
 * many evenly spaced ones stand for all. */
#define PARAM_AT_SAMPLES 1024

/* An element of an array in the parameters at byte offset o, `bytes` wide:
 * one value where o is exact; where it spreads over the threads, the
 * elements from o.lo to o.hi at o's alignment (an index times the element
 * size), each as many times as the others: their range, mean and common
 * low zero bits. */
static struct val param_at(const struct maya_kexpr *x, struct val o, const unsigned char *params,
                           uint32_t param_bytes)
{
    unsigned bytes = (unsigned)x->imm;
    if (!o.known || o.lo < 0 || o.hi + bytes > param_bytes || o.lo != floor(o.lo))
        return unknown;
    double stride = ldexp(1, o.tz < 12 ? o.tz : 12);
    double n = floor((o.hi - o.lo) / stride) + 1, every = n > PARAM_AT_SAMPLES ? ceil(n / PARAM_AT_SAMPLES) : 1;
    struct maya_kexpr e = { MAYA_KX_PARAM, (uint8_t)(x->arg == 1), 0, (uint16_t)bytes, 0, 0 };
    double lo = INFINITY, hi = -INFINITY, sum = 0, count = 0;
    int tz = 64;
    for (double i = 0; i < n; i += every) {
        int ok;
        e.a = (uint16_t)(o.lo + i * stride);
        double v = read_param(params, param_bytes, &e, &ok);
        if (!ok)
            return unknown;
        lo = fmin(lo, v), hi = fmax(hi, v), sum += v, count++;
        int z = zeros_of(v);
        tz = z < tz ? z : tz;
    }
    if (lo == hi)
        return exact(lo);
    return with_tz(range(lo, sum / count, hi), tz);
}

static double min4(double a, double b, double c, double d)
{
    return fmin(fmin(a, b), fmin(c, d));
}

static double max4(double a, double b, double c, double d)
{
    return fmax(fmax(a, b), fmax(c, d));
}

/* Share of an evenly spread integer d in [lo, hi] for which (d cmp 0). */
static double share(int c, struct val d)
{
    double n = d.hi - d.lo + 1;
    double lt = clamp01((fmin(d.hi, -1) - d.lo + 1) / n), le = clamp01((fmin(d.hi, 0) - d.lo + 1) / n);
    double eq = d.lo <= 0 && d.hi >= 0 ? 1 / n : 0;
    switch (c) {
    case MAYA_CMP_LT: return lt;
    case MAYA_CMP_LE: return le;
    case MAYA_CMP_GT: return 1 - le;
    case MAYA_CMP_GE: return 1 - lt;
    case MAYA_CMP_EQ: return eq;
    default: return 1 - eq;
    }
}

/* Iterations of a loop entered at s, while (x cmp bound) with x stepping
 * by step (tested after each step; +1 when tested before). 0 when a thread
 * starting at s would not run it at all, -1 when it would not end. */
static double trip_from(double s, double bound, double step, int c, int before)
{
    double d = bound - s, n;
    if (step == 0)
        return -1;
    switch (c) {
    case MAYA_CMP_LT: n = d > 0 ? ceil(d / step) : 0; break;
    case MAYA_CMP_LE: n = d >= 0 ? floor(d / step) + 1 : 0; break;
    case MAYA_CMP_GT: n = d < 0 ? ceil(d / step) : 0; break;
    case MAYA_CMP_GE: n = d <= 0 ? floor(d / step) + 1 : 0; break;
    case MAYA_CMP_NE: n = d / step >= 0 ? d / step : -1; break; /* steps onto the bound */
    default: n = 1; break; /* continue while equal: once */
    }
    if (n < 0 || !isfinite(n))
        return -1;
    return n + (before ? 1 : 0);
}

/* Iterations of a loop entered at s whose counter halves, shifted right
 * by `shift` bits each step (a tree reduction's s >>= 1), while (x cmp
 * bound): the values from s on that pass the test, one after the other
 * (+1 when tested before the step); 0 when s itself does not. At most 64. */
static double halvings_from(double s, double bound, double shift, int c, int before)
{
    if (!(shift >= 1 && shift < 64) || !(s >= 0 && s < 9e15))
        return -1;
    int64_t v = (int64_t)s;
    int k = (int)shift, n = 0;
    for (; n < 64; n++, v >>= k) {
        if (!maya_kx_compare(c, (double)v, bound))
            break;
        if (v == 0 && n > 0)
            return -1; /* stays at 0 and goes on */
    }
    return n + (before ? 1 : 0);
}

/* Trip counts of sampled threads, kept for the ones that enter the loop
 * (a count of 0: the thread does not reach it). */
struct entered {
    double sum, lo, hi;
    int n;
};

static void entered_add(struct entered *e, double t)
{
    if (t < 1)
        return;
    if (!e->n || t < e->lo)
        e->lo = t;
    if (!e->n || t > e->hi)
        e->hi = t;
    e->sum += t;
    e->n++;
}

/* Their mean and range; one iteration where none enters. */
static struct val entered_mean(const struct entered *e)
{
    return e->n ? range(e->lo, e->sum / e->n, e->hi) : exact(1);
}

/* The same over the threads that enter, for a start spread over [lo, hi]:
 * the mean over 16 starts spread evenly. */
static struct val halvings(struct val s, double bound, double shift, int c, int before)
{
    struct entered e = { 0 };
    for (int k = 0; k < 16; k++) {
        double t = halvings_from(floor(s.lo + (s.hi - s.lo) * (k + 0.5) / 16), bound, shift, c, before);
        if (t < 0)
            return unknown;
        entered_add(&e, t);
    }
    return entered_mean(&e);
}

/* A loop's iterations from its start s, its counter tested with c against
 * the bound (tested before the step: one more), stepping by step or (a
 * halving counter) shifted right by it. */
static double steps_from(double s, double bound, double step, int arg)
{
    int c = arg & MAYA_KX_TRIP_CMP, before = (arg & MAYA_KX_TRIP_BEFORE) != 0;
    return arg & MAYA_KX_TRIP_HALVES ? halvings_from(s, bound, step, c, before) : trip_from(s, bound, step, c, before);
}

/* The mean trip count over the threads that enter the loop (at least one
 * iteration each: the code reaches the loop only for them). With a start
 * spread evenly over [lo, hi], the threads that enter start below the bound
 * (for an upward loop); each runs ceil((bound - start) / step) times, about
 * (bound - start) / step + 1/2 on average over starts: the mean over them
 * is that at their mean start. */
static struct val trip_count(const struct maya_kexpr *x, struct val s, struct val b, struct val st)
{
    if (!s.known || !b.known || !st.known)
        return unknown;
    int c = x->arg & MAYA_KX_TRIP_CMP, before = (x->arg & MAYA_KX_TRIP_BEFORE) != 0;
    double step = st.avg, bound = b.avg;
    if (is_exact(s)) {
        double t = steps_from(s.lo, bound, step, x->arg);
        return t < 0 ? unknown : exact(t >= 1 ? t : 1);
    }
    if (x->arg & MAYA_KX_TRIP_HALVES)
        return halvings(s, bound, step, c, before);
    int up = step > 0;
    /* the starts of the threads that enter */
    double lo = s.lo, hi = s.hi;
    if (c == MAYA_CMP_LT || c == MAYA_CMP_LE || (c == MAYA_CMP_NE && up))
        hi = fmin(hi, bound);
    else
        lo = fmax(lo, bound);
    if (hi < lo)
        return exact(1);
    double t_lo = trip_from(lo, bound, step, c, before), t_hi = trip_from(hi, bound, step, c, before);
    if (t_lo < 0 || t_hi < 0)
        return unknown;
    double mean = fabs(bound - (lo + hi) / 2) / fabs(step) + (c == MAYA_CMP_NE ? 0 : 0.5) + (before ? 1 : 0);
    if (c == MAYA_CMP_LE || c == MAYA_CMP_GE)
        mean += 0.5; /* floor + 1 */
    return range(fmax(1, fmin(t_lo, t_hi)), fmax(1, mean), fmax(1, fmax(t_lo, t_hi)));
}

/* More iterations a thread than any kernel runs (2^32: seconds of one
 * thread's time): the bound is no count, but an address or a value the code
 * read from memory (PyTorch's embedding backward loops between offsets it
 * loads, and the summary can only offer a pointer parameter for them). Such
 * a loop is unknown, so it counts once, flagged, as other unknown loops do;
 * taken as counted it made a 3 us kernel take 157 million seconds. */
#define MAX_TRIP 4294967296.0

static struct val trip(const struct maya_kexpr *x, struct val s, struct val b, struct val st)
{
    struct val t = trip_count(x, s, b, st);
    return t.known && !(t.hi <= MAX_TRIP) ? unknown : t;
}

static struct val eval1(const struct maya_kexpr *x, const struct val *v, const struct maya_rec_launch *l,
                        const unsigned char *params, const double *pin)
{
    unsigned ops = maya_kx_operands(x->op);
    struct val a = ops & 1 ? v[x->a] : unknown, b = ops & 2 ? v[x->b] : unknown;
    int ok;
    switch (x->op) {
    case MAYA_KX_CONST: return exact(x->imm);
    case MAYA_KX_PARAM: {
        double p = read_param(params, l->param_bytes, x, &ok);
        return ok ? exact(p) : unknown;
    }
    case MAYA_KX_PARAM_AT: return param_at(x, a, params, l->param_bytes);
    case MAYA_KX_SREG: {
        struct val r = sreg(l, x->arg);
        return pin && !isnan(pin[x->arg]) && r.known && !is_exact(r) ? exact(pin[x->arg]) : r;
    }
    case MAYA_KX_PHI: return a;
    case MAYA_KX_NOT: return a.known ? exact(1 - a.avg) : exact(0.5);
    case MAYA_KX_POR:
        if (!a.known || !b.known)
            return exact(0.5);
        return exact(a.avg + b.avg - a.avg * b.avg);
    case MAYA_KX_SEL: {
        struct val c = v[x->c];
        if (!c.known)
            return unknown;
        double p = clamp01(c.avg);
        /* a choice every thread makes the same way is that value, spread
         * as it is (a limit that is n for every row in range, or 0); the
         * side not taken may be unknown */
        if (p >= 1)
            return a;
        if (p <= 0)
            return b;
        /* unknown for a few threads only (the last row block's bounds
         * check): the others' value stands for all */
        if (a.known && !b.known && p >= 0.9)
            return a;
        if (b.known && !a.known && p <= 0.1)
            return b;
        if (!a.known || !b.known)
            return unknown;
        return with_tz(range(fmin(a.lo, b.lo), p * a.avg + (1 - p) * b.avg, fmax(a.hi, b.hi)),
                       a.tz < b.tz ? a.tz : b.tz);
    }
    case MAYA_KX_CMP: {
        if (!a.known || !b.known)
            return exact(0.5);
        struct val d = { a.lo - b.hi, a.avg - b.avg, a.hi - b.lo, 1, 0 };
        if (is_exact(a) && is_exact(b))
            d.lo = d.hi = d.avg = a.lo - b.lo;
        return exact(share(x->arg, d));
    }
    case MAYA_KX_TRIP: return trip(x, a, b, v[x->c]);
    default: break;
    }
    if (!a.known || !b.known)
        return unknown;
    if (is_exact(a) && is_exact(b)) {
        double p = a.lo, q = b.lo;
        int64_t i = (int64_t)p, j = (int64_t)q;
        int ints = fabs(p) < 9e15 && fabs(q) < 9e15 && (double)i == p && (double)j == q;
        switch (x->op) {
        case MAYA_KX_ADD: return exact(p + q);
        case MAYA_KX_SUB: return exact(p - q);
        case MAYA_KX_MUL: return exact(p * q);
        case MAYA_KX_DIV: return q != 0 ? exact(ints ? (double)(i / j) : p / q) : unknown;
        case MAYA_KX_REM: return ints && j != 0 ? exact((double)(i % j)) : unknown;
        case MAYA_KX_SHL: return q >= 0 && q < 63 ? exact(p * ldexp(1, (int)q)) : unknown;
        case MAYA_KX_SHR: return ints && j >= 0 && j < 63 ? exact((double)(i >> j)) : unknown;
        case MAYA_KX_AND: return ints ? exact((double)(i & j)) : unknown;
        case MAYA_KX_OR: return ints ? exact((double)(i | j)) : unknown;
        case MAYA_KX_XOR: return ints ? exact((double)(i ^ j)) : unknown;
        case MAYA_KX_MIN: return exact(fmin(p, q));
        case MAYA_KX_MAX: return exact(fmax(p, q));
        default: return unknown;
        }
    }
    int tz_min = a.tz < b.tz ? a.tz : b.tz, tz_max = a.tz > b.tz ? a.tz : b.tz;
    switch (x->op) {
    case MAYA_KX_ADD: return with_tz(range(a.lo + b.lo, a.avg + b.avg, a.hi + b.hi), tz_min);
    case MAYA_KX_SUB: return with_tz(range(a.lo - b.hi, a.avg - b.avg, a.hi - b.lo), tz_min);
    case MAYA_KX_MUL:
        return with_tz(range(min4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi), a.avg * b.avg,
                             max4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi)),
                       a.tz + b.tz);
    case MAYA_KX_DIV:
        if (b.lo <= 0 && b.hi >= 0)
            return unknown;
        return range(min4(a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi), a.avg / b.avg,
                     max4(a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi));
    case MAYA_KX_REM:
        if (b.lo <= 0)
            return unknown;
        if (a.lo >= 0 && a.hi < b.lo)
            return a;
        /* by a power of two: the low bits, clear where a's are */
        if (is_exact(b) && b.tz < 63 && b.lo == ldexp(1, b.tz) && a.lo >= 0) {
            if (a.tz >= b.tz)
                return exact(0);
            return with_tz(range(0, fmin(a.avg, (b.hi - 1) / 2), b.hi - 1), a.tz);
        }
        return range(0, fmin(a.avg, (b.hi - 1) / 2), b.hi - 1);
    case MAYA_KX_SHL:
        if (!is_exact(b) || b.lo < 0 || b.lo > 62)
            return unknown;
        return with_tz(range(a.lo * ldexp(1, (int)b.lo), a.avg * ldexp(1, (int)b.lo), a.hi * ldexp(1, (int)b.lo)),
                       a.tz + (int)b.lo);
    case MAYA_KX_SHR:
        if (!is_exact(b) || b.lo < 0 || b.lo > 62)
            return unknown;
        return with_tz(range(floor(a.lo / ldexp(1, (int)b.lo)), a.avg / ldexp(1, (int)b.lo),
                             floor(a.hi / ldexp(1, (int)b.lo))),
                       a.tz - (int)b.lo);
    case MAYA_KX_AND: {
        /* with a mask: at most the mask; a low-bit mask (2^k - 1) is a
         * remainder, spread over its range; none of the mask's bits below
         * the value's clear low bits survive */
        struct val m = is_exact(b) ? b : is_exact(a) ? a : unknown, o = is_exact(b) ? a : b;
        if (!m.known || m.lo < 0 || !o.known)
            return unknown;
        if (o.tz >= 63 || m.lo < ldexp(1, o.tz))
            return exact(0);
        if (o.lo < 0) /* a negative value's low bits: anything up to the mask */
            return with_tz(range(0, m.lo / 2, m.lo), tz_max);
        double hi = fmin(o.hi, m.lo);
        return with_tz(range(0, o.hi <= m.lo ? o.avg : hi / 2, hi), tz_max);
    }
    case MAYA_KX_XOR:
    case MAYA_KX_OR: {
        /* with a small constant (a double buffer's index, i ^ 1): the value
         * moves by at most the constant, its mean about stays (or, for or,
         * gains half of it) */
        struct val k = is_exact(b) ? b : is_exact(a) ? a : unknown, o = is_exact(b) ? a : b;
        /* of two spread values (addresses or-ed together to test their
         * common alignment, as multi-tensor kernels do): only the low
         * bits both have clear stay clear, and the result lies between
         * the larger and the sum */
        if (!k.known && a.known && b.known && a.lo >= 0 && b.lo >= 0) {
            double lo = fmax(a.lo, b.lo), hi = a.hi + b.hi;
            if (x->op == MAYA_KX_XOR)
                lo = 0;
            return with_tz(range(lo, fmax(a.avg, b.avg), hi), tz_min);
        }
        if (!k.known || k.lo < 0 || k.lo > 1024 || !o.known || o.lo < 0)
            return unknown;
        if (x->op == MAYA_KX_OR)
            return with_tz(range(o.lo, o.avg + k.lo / 2, o.hi + k.lo), tz_min);
        return with_tz(range(fmax(0, o.lo - k.lo), o.avg, o.hi + k.lo), tz_min);
    }
    case MAYA_KX_MIN: return with_tz(range(fmin(a.lo, b.lo), fmin(a.avg, b.avg), fmin(a.hi, b.hi)), tz_min);
    case MAYA_KX_MAX: return with_tz(range(fmax(a.lo, b.lo), fmax(a.avg, b.avg), fmax(a.hi, b.hi)), tz_min);
    default: return unknown;
    }
}

/* Sample threads for loops whose start and bound both vary over the
 * threads: every expression evaluated again with each thread index (tid,
 * ctaid, lane, warp) pinned to one value, JOINT_SAMPLES times. Sample
 * blocks alike (blocks_only: ctaid pinned, the thread indices still
 * spread) for tests on what a block reads from the parameters' arrays. */
#define JOINT_SAMPLES 16
struct joint {
    struct val *v;              /* JOINT_SAMPLES rows of nexprs values */
    uint32_t done;              /* expressions evaluated in every row */
    int blocks_only;            /* pin the block indices only */
    double pin[JOINT_SAMPLES][MAYA_SR_NSREGS]; /* each row's thread; NaN: not pinned */
};

/* Row k's pins: each index at its own low-discrepancy point of its range
 * (the golden ratio's steps keep the indices from moving together). */
static void joint_pins(const struct maya_rec_launch *l, int k, int blocks_only, double *pin)
{
    for (int j = 0; j < MAYA_SR_NSREGS; j++) {
        struct val r = sreg(l, j);
        double q = fmod((k + 0.5) / JOINT_SAMPLES + j * 0.6180339887, 1.0);
        pin[j] = r.known ? fmin(r.hi, floor(r.lo + q * (r.hi - r.lo + 1))) : 0;
        if (blocks_only && (j < MAYA_SR_CTAID_X || j > MAYA_SR_CTAID_Z))
            pin[j] = NAN;
    }
}

/* J's rows evaluated up to expression `upto` (not included); 0 when the
 * rows cannot be had. */
static int joint_rows(const struct maya_kwork *w, uint32_t upto, const struct maya_rec_launch *l,
                      const unsigned char *params, struct joint *J)
{
    const struct maya_kexpr *x = maya_kwork_exprs(w);
    if (!J->v) {
        J->v = malloc((size_t)JOINT_SAMPLES * w->nexprs * sizeof *J->v);
        if (!J->v)
            return 0;
        for (int k = 0; k < JOINT_SAMPLES; k++)
            joint_pins(l, k, J->blocks_only, J->pin[k]);
    }
    for (int k = 0; k < JOINT_SAMPLES && J->done < upto; k++) {
        struct val *row = J->v + (size_t)k * w->nexprs;
        for (uint32_t e = J->done; e < upto; e++)
            row[e] = eval1(&x[e], row, l, params, J->pin[k]);
    }
    if (J->done < upto)
        J->done = upto;
    return 1;
}

/* Expression i over J's rows (evaluated up to it): *s the samples' least
 * and greatest values, their mean and the low zero bits all have; 0 where
 * the rows cannot be had or a sample is not known. */
static int sampled(const struct maya_kwork *w, uint32_t i, const struct maya_rec_launch *l,
                   const unsigned char *params, struct joint *J, struct val *s)
{
    if (!joint_rows(w, i + 1, l, params, J))
        return 0;
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    int tz = 64;
    for (int k = 0; k < JOINT_SAMPLES; k++) {
        struct val r = J->v[(size_t)k * w->nexprs + i];
        if (!r.known)
            return 0;
        sum += r.avg, lo = fmin(lo, r.lo), hi = fmax(hi, r.hi), tz = r.tz < tz ? r.tz : tz;
    }
    *s = with_tz(range(lo, sum / JOINT_SAMPLES, hi), tz);
    return s->known;
}

/* A value that follows what each block reads from the parameters at its
 * own index (PyTorch's tensor lists: the elements left in the block's
 * chunk of its tensor, its addresses' alignment), and the comparisons,
 * trip counts and minima made of it: the block's index and the value move
 * together, and their ranges taken apart lose that (a chunk index from
 * one tensor against the size of another). Its mean over sampled blocks,
 * the threads within each still spread; a comparison's share is that
 * mean, other values keep the range and low zero bits v had (16 blocks
 * may miss the extremes), widened to what the samples saw. Falls back to
 * v where a sample is not known. */
static struct val block_mean(const struct maya_kwork *w, uint32_t i, const struct maya_rec_launch *l,
                             const unsigned char *params, struct joint *B, struct val v)
{
    struct val s;
    if (!sampled(w, i, l, params, B, &s))
        return v;
    if (maya_kwork_exprs(w)[i].op == MAYA_KX_CMP)
        return exact(s.avg);
    double lo = fmin(v.lo, s.lo), hi = fmax(v.hi, s.hi);
    if (lo == hi)
        return v;
    return with_tz(range(lo, s.avg, hi), v.tz);
}

/* A value made of one block index reached by two paths (a slice's end,
 * min(rows, start + per), against its start, both following %ctaid.y):
 * ranges taken apart lose that the two move together (the slice's length,
 * the same in every block, spreads over minus to plus the whole rows, and a
 * test that every thread passes counts half of them). Over sampled blocks
 * (B: block indices pinned, the threads within still spread), so that the
 * two move together: a comparison's share is the samples' mean, another
 * value is exact where the samples agree (a slice's length), and is
 * otherwise left as its ranges give it: 16 blocks' pins miss the range's
 * ends and their mean is off by up to a sixteenth of it, which moved a
 * causal attention's key-block loops by 5 % where the ranges' midpoints
 * were right (its mean, by linearity, already is). Falls back
 * to v where a sample is not known. Thread indices so joined are not
 * sampled: 16 threads of a block fall on every eighth of 128, and a
 * thread's index modulo 8 came out 4 in every one. Not for
 * products and trip counts (est_kwork_eval): a term's multiplier is the
 * share of threads that reach it times the mean trips of those that enter
 * its loops, whose product of means is its mean by construction (taken
 * over samples instead, a causal attention backward's query loop came out
 * 24.5 trips a block where it runs 1 to 32, and its FLOPs 3.6 times its
 * forward's where they are 2.5: tests/torch/test_attention_kernels.sh). */
static struct val joint_value(const struct maya_kwork *w, uint32_t i, const struct maya_rec_launch *l,
                              const unsigned char *params, struct joint *J, struct val v)
{
    struct val s;
    if (!sampled(w, i, l, params, J, &s))
        return v;
    if (maya_kwork_exprs(w)[i].op == MAYA_KX_CMP)
        return exact(s.avg);
    return s.lo == s.hi ? s : v;
}

/* A loop's trip count whose start and bound both vary (a pooling window's
 * first and last rows, each following the thread's row): over sampled
 * threads, so that the two move together; the mean over the threads that
 * enter it. Falls back to trip() where a sample is not known. */
static struct val joint_trip(const struct maya_kwork *w, uint32_t i, const struct maya_rec_launch *l,
                             const unsigned char *params, struct joint *J, struct val fallback)
{
    const struct maya_kexpr *x = maya_kwork_exprs(w);
    if (!joint_rows(w, i, l, params, J))
        return fallback;
    struct entered e = { 0 };
    for (int k = 0; k < JOINT_SAMPLES; k++) {
        const struct val *row = J->v + (size_t)k * w->nexprs;
        struct val s = row[x[i].a], b = row[x[i].b], st = row[x[i].c];
        if (!s.known || !b.known || !st.known)
            return fallback;
        /* a value a sampled thread still has spread (a choice on data)
         * counts at its mean */
        double t = steps_from(s.avg, b.avg, st.avg, x[i].arg);
        if (t < 0)
            return fallback;
        entered_add(&e, t);
    }
    return entered_mean(&e);
}

/* est_kwork_eval's bits per expression */
#define GATHERED 1  /* a parameter array's element at an index spread over the launch */
#define PER_BLOCK 2 /* follows the block: %ctaid, or GATHERED */
#define CTAID_X 4   /* follows %ctaid.x where the grid spreads it (CTAID_X << 1: .y, << 2: .z) */
#define CTAIDS (CTAID_X | CTAID_X << 1 | CTAID_X << 2)

/* One block's work per class (added to sums): its indices pinned (pin),
 * its threads spread; an expression that does not follow the block
 * (bits: PER_BLOCK) has the launch's value (v). 0 where a multiplier is not
 * known in the block. */
static int block_work(const struct maya_kwork *w, const struct maya_rec_launch *l, const unsigned char *params,
                      const struct val *v, const uint8_t *bits, uint32_t upto, const double *pin, struct val *row,
                      double *sums)
{
    const struct maya_kexpr *x = maya_kwork_exprs(w);
    const struct maya_kterm *t = maya_kwork_terms(w);
    for (uint32_t e = 0; e < upto; e++)
        row[e] = bits[e] & PER_BLOCK ? eval1(&x[e], row, l, params, pin) : v[e];
    for (uint32_t i = 0; i < w->nterms; i++) {
        struct val r = v[t[i].mult];
        if (!r.known)
            continue;
        if (bits[t[i].mult] & PER_BLOCK)
            r = row[t[i].mult];
        if (!r.known)
            return 0;
        sums[t[i].cls] += (double)t[i].amount * (r.avg > 0 ? fmin(r.avg, 1e15) : 0);
    }
    return 1;
}

/* Blocks of uneven work (a causal attention's query blocks see 1 to all
 * key blocks; tensor lists' chunks): each class's work in 16 sampled
 * blocks (block indices pinned, threads spread), the largest over the
 * mean, for the terms whose multiplier follows %ctaid or a block's entry
 * of a parameter array (bits: PER_BLOCK). Blocks alike (no such term, or samples
 * not known) leave 1. Costs two blocks' evaluation for kernels with such
 * terms, 16 more where the first and last blocks differ. */
static void block_spreads(const struct maya_kwork *w, const struct maya_rec_launch *l, const unsigned char *params,
                          const struct val *v, const uint8_t *bits, struct est_kwork *out)
{
    for (int c = 0; c < MAYA_KW_NCLASSES; c++)
        out->block_spread[c] = 1;
    double blocks = (double)l->grid[0] * l->grid[1] * l->grid[2];
    if (blocks < 2 || w->nexprs == 0)
        return;
    const struct maya_kterm *t = maya_kwork_terms(w);
    uint32_t upto = 0;
    for (uint32_t i = 0; i < w->nterms; i++)
        if ((bits[t[i].mult] & PER_BLOCK) && v[t[i].mult].known && (uint32_t)t[i].mult + 1 > upto)
            upto = (uint32_t)t[i].mult + 1;
    /* the first and the last block first: where they do the same work
     * (within 5 % in every class: a grid-stride loop), blocks are alike;
     * otherwise 16 sampled blocks */
    struct val *row = upto ? malloc(upto * sizeof *row) : NULL;
    double ends[2][MAYA_KW_NCLASSES], sum[JOINT_SAMPLES][MAYA_KW_NCLASSES];
    memset(ends, 0, sizeof ends);
    memset(sum, 0, sizeof sum);
    int ok = row != NULL, differ = 0;
    for (int end = 0; end < 2 && ok; end++) {
        double pin[MAYA_SR_NSREGS];
        for (int j = 0; j < MAYA_SR_NSREGS; j++) {
            struct val r = sreg(l, j);
            pin[j] = j < MAYA_SR_CTAID_X || j > MAYA_SR_CTAID_Z ? NAN : !r.known ? 0 : end ? r.hi : r.lo;
        }
        ok = block_work(w, l, params, v, bits, upto, pin, row, ends[end]);
    }
    for (int c = 0; c < MAYA_KW_NCLASSES && ok; c++)
        differ |= fabs(ends[0][c] - ends[1][c]) > 0.05 * fmax(ends[0][c], ends[1][c]);
    for (int k = 0; k < JOINT_SAMPLES && ok && differ; k++) {
        double pin[MAYA_SR_NSREGS];
        joint_pins(l, k, 1, pin);
        ok = block_work(w, l, params, v, bits, upto, pin, row, sum[k]);
    }
    for (int c = 0; c < MAYA_KW_NCLASSES && ok && differ; c++) {
        double mean = 0, most = 0;
        for (int k = 0; k < JOINT_SAMPLES; k++)
            mean += sum[k][c] / JOINT_SAMPLES, most = fmax(most, sum[k][c]);
        if (mean > 0)
            out->block_spread[c] = fmax(1, most / mean);
    }
    free(row);
}

int est_kwork_eval(const struct maya_kwork *w, const struct maya_rec_launch *l, const struct est_kwork_ctx *ctx,
                   struct est_kwork *out)
{
    memset(out, 0, sizeof *out);
    out->source = w->source;
    out->flags = w->flags;
    out->threads_per_block = (double)l->block[0] * l->block[1] * l->block[2];
    out->blocks = (double)l->grid[0] * l->grid[1] * l->grid[2];
    out->threads = out->threads_per_block * out->blocks;
    const struct maya_kexpr *x = maya_kwork_exprs(w);
    const struct maya_kterm *t = maya_kwork_terms(w);
    struct val small[256], *v = w->nexprs <= 256 ? small : malloc(w->nexprs * sizeof *v);
    if (!v)
        return -1;
    const unsigned char *params = (const unsigned char *)(l + 1);
    struct joint J = { .v = NULL }, B = { .v = NULL, .blocks_only = 1 };
    /* per expression (v[i].known is the only other per-expression state:
     * bits here, not copies of the values): GATHERED, it depends on a
     * parameter array's element at an index that spreads over the launch;
     * PER_BLOCK, it follows the block (%ctaid, or GATHERED); CTAIDS, the
     * block indices it follows: an operation whose operands follow the
     * same one is evaluated over sampled blocks (joint_value) */
    uint8_t gsmall[256], *gathered = w->nexprs <= 256 ? gsmall : calloc(w->nexprs, 1);
    if (!gathered) {
        if (v != small)
            free(v);
        return -1;
    }
    for (uint32_t i = 0; i < w->nexprs; i++) {
        unsigned ops = maya_kx_operands(x[i].op);
        uint8_t ga = (ops & 1) ? gathered[x[i].a] : 0, gb = (ops & 2) ? gathered[x[i].b] : 0,
                gc = (ops & 4) ? gathered[x[i].c] : 0;
        int ctaid = x[i].op == MAYA_KX_SREG && x[i].arg >= MAYA_SR_CTAID_X && x[i].arg <= MAYA_SR_CTAID_Z;
        gathered[i] = ga | gb | gc | (x[i].op == MAYA_KX_PARAM_AT && !is_exact(v[x[i].a]) ? GATHERED : 0);
        if (gathered[i] & GATHERED || ctaid)
            gathered[i] |= PER_BLOCK;
        v[i] = eval1(&x[i], v, l, params, NULL);
        if (ctaid && v[i].known && !is_exact(v[i]))
            gathered[i] |= CTAID_X << (x[i].arg - MAYA_SR_CTAID_X);
        if (x[i].op == MAYA_KX_TRIP && v[x[i].a].known && !is_exact(v[x[i].a]) && v[x[i].b].known &&
            !is_exact(v[x[i].b]))
            v[i] = joint_trip(w, i, l, params, &J, v[i]);
        else if ((gathered[i] & GATHERED) && v[i].known)
            v[i] = block_mean(w, i, l, params, &B, v[i]);
        else if (((ga & gb) | (ga & gc) | (gb & gc)) & CTAIDS && x[i].op != MAYA_KX_MUL &&
                 x[i].op != MAYA_KX_TRIP && v[i].known && (x[i].op == MAYA_KX_CMP || !is_exact(v[i])))
            v[i] = joint_value(w, i, l, params, &B, v[i]);
    }
    free(J.v);
    block_spreads(w, l, params, v, gathered, out);
    free(B.v);
    if (gathered != gsmall)
        free(gathered);
    /* a term whose loops' counts are not all known: those loops run once
     * (flagged), the share of threads that reach them still applies */
    struct val *once = NULL;
    for (uint32_t i = 0; i < w->nterms && !once; i++)
        if (!v[t[i].mult].known && (once = malloc(w->nexprs * sizeof *once)) != NULL)
            for (uint32_t e = 0; e < w->nexprs; e++)
                once[e] = x[e].op != MAYA_KX_TRIP ? eval1(&x[e], once, l, params, NULL) : v[e].known ? v[e] : exact(1);
    /* the loops each expression counts (a bit per loop: TRIP expressions
     * hashed into 64 bits). Terms come in the code's order: a run of terms
     * in the same loop body (maya_kterm.body; in older traces, under the
     * same loops) is one body, whose loads one pass issues together,
     * whatever predicates they carry (an unrolled body's bounds checks);
     * two loops with the same bounds, one after the other, are two bodies
     * (a norm's passes over its row) */
    uint64_t lsmall[256], *loops = w->nexprs <= 256 ? lsmall : malloc(w->nexprs * sizeof *loops);
    if (!loops) {
        free(once);
        if (v != small)
            free(v);
        return -1;
    }
    for (uint32_t i = 0; i < w->nexprs; i++) {
        unsigned ops = maya_kx_operands(x[i].op);
        loops[i] = ((ops & 1) ? loops[x[i].a] : 0) | ((ops & 2) ? loops[x[i].b] : 0) | ((ops & 4) ? loops[x[i].c] : 0);
        if (x[i].op == MAYA_KX_TRIP)
            loops[i] |= 1ull << (i * 0x9E3779B1u >> 26);
    }
    struct { double pass, bytes; } pass[64];
    int npass = 0, run = 0, pass_run = -1; /* the run of terms, and that of the last pass */
    /* global bytes per pointer parameter, loads and stores apart */
    struct { uint16_t param; double ld, st, ld_term_max; } per[32];
    int nper = 0;
    for (uint32_t i = 0; i < w->nterms; i++) {
        run += i > 0 && (loops[t[i].mult] != loops[t[i - 1].mult] || t[i].body != t[i - 1].body);
        struct val m = v[t[i].mult];
        if (!m.known)
            out->unresolved++;
        if (!m.known && once)
            m = once[t[i].mult];
        double mult = m.known ? m.avg : 1;
        if (!(mult >= 0) || !isfinite(mult))
            mult = 0;
        double amount = (double)t[i].amount * fmin(mult, 1e15) * out->threads;
        /* the same address for every thread of a warp (a block's entry
         * of a table of offsets, a scalar): one request a warp */
        if ((t[i].flags & MAYA_KT_F_SAME_EACH_THREAD) && t[i].cls == MAYA_KW_LD_GLOBAL)
            amount /= fmax(1, fmin(32, out->threads_per_block));
        /* the same address along a row of the block (A[row][k] of a GEMM
         * whose threads' x picks the column): one request for each row a
         * warp covers */
        else if ((t[i].flags & MAYA_KT_F_SAME_EACH_ROW) && t[i].cls == MAYA_KW_LD_GLOBAL)
            amount /= fmax(1, fmin(32, fmin(out->threads_per_block, (double)l->block[0])));
        out->amount[t[i].cls] += amount;
        if (t[i].cls != MAYA_KW_LD_GLOBAL && t[i].cls != MAYA_KW_ST_GLOBAL)
            continue;
        /* what every block loads (a LayerNorm's weights) or updates
         * atomically (their gradients) at the same addresses reaches DRAM
         * for one block; the others are served by L2 */
        if ((t[i].flags & MAYA_KT_F_SAME_EACH_BLOCK) && out->blocks > 1)
            amount /= out->blocks;
        /* a load each thread streams from DRAM (not one the block, the warp
         * or the row shares: those are served by the caches), in the pass
         * of its run of terms */
        if (t[i].cls == MAYA_KW_LD_GLOBAL && amount > 0 &&
            !(t[i].flags & (MAYA_KT_F_SAME_EACH_BLOCK | MAYA_KT_F_SAME_EACH_THREAD | MAYA_KT_F_SAME_EACH_ROW))) {
            if (npass == 0 || (run != pass_run && npass < (int)(sizeof pass / sizeof *pass)))
                pass[npass++] = (typeof(pass[0])){ 0, 0 };
            pass[npass - 1].pass += t[i].amount;
            pass[npass - 1].bytes += amount;
            pass_run = run;
        }
        int j = 0;
        while (j < nper && per[j].param != t[i].param)
            j++;
        if (j == nper) {
            if (nper == (int)(sizeof per / sizeof *per) || t[i].param == MAYA_KW_NO_PARAM) {
                out->dram_bytes += amount; /* no extent to bound it */
                if (t[i].cls == MAYA_KW_LD_GLOBAL)
                    out->dram_load_bytes += amount;
                continue;
            }
            per[nper++] = (typeof(per[0])){ t[i].param, 0, 0, 0 };
        }
        if (t[i].cls == MAYA_KW_LD_GLOBAL) {
            per[j].ld += amount;
            per[j].ld_term_max = fmax(per[j].ld_term_max, amount);
        } else
            per[j].st += amount;
    }
    for (int j = 0; j < nper; j++) {
        double extent = INFINITY;
        for (uint32_t e = 0; ctx && e < ctx->nextents; e++)
            if (ctx->extents[e].param == per[j].param && ctx->extents[e].bytes > 0)
                extent = (double)ctx->extents[e].bytes;
        out->dram_bytes += fmin(per[j].ld, extent) + fmin(per[j].st, extent);
        out->dram_load_bytes += fmin(per[j].ld, extent);
        /* loads beyond the extent from several terms, none of which reads
         * more than the extent alone: passes of each block over its own
         * slice, whose later reads hit L2 only if the resident blocks'
         * slices fit there. (One term reading beyond the extent is data
         * shared between blocks, a GEMM's operand panel, read at about the
         * same time by the blocks that share it: L2 serves it.) */
        if (per[j].ld > extent * 1.01 && per[j].ld_term_max <= extent * 1.01 && out->blocks > 1) {
            out->reread_bytes += per[j].ld - extent;
            out->reread_slice += extent / out->blocks;
        }
    }
    double streamed = 0;
    for (int g = 0; g < npass; g++) {
        out->load_in_flight += pass[g].pass * pass[g].bytes;
        streamed += pass[g].bytes;
    }
    out->load_in_flight = streamed > 0 ? out->load_in_flight / streamed : 0;
    free(once);
    if (loops != lsmall)
        free(loops);
    if (v != small)
        free(v);
    return 0;
}

/* The share of DRAM's bandwidth that `threads` resident threads reach
 * keeping `in_flight` bytes each in flight, where DRAM needs `need` (its
 * bandwidth times its latency); never 0. */
static double dram_share(double threads, double in_flight, double need)
{
    double f = fmin(1, threads * in_flight / need);
    return f > 0 ? f : 1e-3;
}

/* Blocks of this kernel one SM holds at once. */
static double blocks_per_sm(const struct maya_gpu_spec *g, const struct est_kwork *k)
{
    const struct cudaDeviceProp *p = &g->prop;
    double tpb = k->threads_per_block > 0 ? k->threads_per_block : 1;
    double n = p->maxBlocksPerMultiProcessor > 0 ? p->maxBlocksPerMultiProcessor : 16;
    if (p->maxThreadsPerMultiProcessor > 0)
        n = fmin(n, floor(p->maxThreadsPerMultiProcessor / tpb));
    if (k->regs > 0 && p->regsPerMultiprocessor > 0) {
        /* registers are given out per warp, in units of 256 */
        double per_warp = ceil(k->regs * 32.0 / 256) * 256;
        n = fmin(n, floor(p->regsPerMultiprocessor / (per_warp * ceil(tpb / 32))));
    }
    if (k->smem_bytes > 0 && p->sharedMemPerMultiprocessor > 0)
        n = fmin(n, floor((double)p->sharedMemPerMultiprocessor /
                          (k->smem_bytes + (double)p->reservedSharedMemPerBlock)));
    return n >= 1 ? n : 1;
}

/* The spread of block work (est_kwork.block_spread) over a unit's classes
 * (a mask of 1 << MAYA_KW_*). */
static double unit_spread(const struct est_kwork *k, unsigned classes)
{
    double r = 1;
    for (int c = 0; c < MAYA_KW_NCLASSES; c++)
        if (classes >> c & 1)
            r = fmax(r, k->block_spread[c]);
    return isfinite(r) ? r : 1;
}

/* Blocks of uneven work: the GPU hands a block to an SM as one frees up,
 * so a launch ends with its last blocks, not at the balanced time. One
 * wave (every block resident at once) ends with its longest block: the
 * mean block's time times the spread. More waves end about the longest
 * block's excess over the mean after the balanced time (greedy dispatch of
 * a causal attention's 2,048 blocks of 2 to 128 units on 264 slots: 576
 * to 586 units where the balanced time is 504 and this gives 567). Blocks
 * alike (spread 1) keep the waves' time. */
static double uneven_blocks(const struct est_kwork *k, unsigned classes, double body, double blocks, double slots,
                            double waves)
{
    double r = unit_spread(k, classes);
    if (!(r > 1) || blocks < 2 || !(body > 0) || !isfinite(body))
        return body;
    if (blocks <= slots)
        return body * r;
    double balanced = body * blocks / (waves * slots), mean_block = balanced * slots / blocks;
    return fmax(body, balanced + (r - 1) * mean_block);
}

void est_kwork_times(const struct maya_gpu_spec *g, const struct est_kwork *k, struct est_kwork_times *t)
{
    memset(t, 0, sizeof *t);
    const struct maya_gpu_perf *f = &g->perf;
    double sms = g->prop.multiProcessorCount > 0 ? g->prop.multiProcessorCount : 1;
    double clk = (f->sm_clock_mhz > 0 ? f->sm_clock_mhz : 1500) * 1e6;
    double hbm = (f->hbm_measured_gbps > 0 ? f->hbm_measured_gbps : f->hbm_gbps > 0 ? f->hbm_gbps : 100) * 1e9;
    double l2 = (f->l2_gbps > 0 ? f->l2_gbps : hbm / 1e9 * 3) * 1e9;
    double fp32 = est_peak_flops(g, EST_P_FP32);
    double fp64 = f->fp64_tflops > 0 ? f->fp64_tflops * 1e12 : fp32 / 32;
    const double *a = k->amount;

    /* occupancy and waves */
    double bpsm = blocks_per_sm(g, k), slots = sms * bpsm;
    double blocks = k->blocks > 0 ? k->blocks : 1;
    double waves = ceil(blocks / slots);
    double resident_blocks = fmin(blocks, slots);
    t->blocks_per_sm = bpsm;
    t->waves = waves;
    /* one partial wave: the SMs that get a block, with the warps they get;
     * more waves: the share of slots the last one leaves empty */
    double wpb = ceil(k->threads_per_block / 32);
    if (blocks < slots)
        t->fill = fmin(blocks, sms) / sms * fmin(1, ceil(blocks / sms) * wpb / WARPS_TO_FILL);
    else
        t->fill = blocks / (waves * slots) * fmin(1, bpsm * wpb / WARPS_TO_FILL);
    if (t->fill <= 0)
        t->fill = 1 / slots;
    double resident_threads = resident_blocks * k->threads_per_block;
    double in_flight_need = hbm * DRAM_LATENCY_NS * 1e-9; /* bytes that keep DRAM busy */
    /* stores do not wait; loads keep what one pass of their loop issues in
     * flight (at most BYTES_IN_FLIGHT a thread): a loop of one 2-byte load
     * a pass reaches a fraction of the bandwidth that 16-byte loads reach */
    double store_fill = dram_share(resident_threads, BYTES_IN_FLIGHT, in_flight_need);
    double load_fill = k->load_in_flight > 0
                           ? dram_share(resident_threads, fmin(k->load_in_flight, BYTES_IN_FLIGHT), in_flight_need)
                           : store_fill;

    /* later passes over each block's slice (reread_bytes): what the
     * resident blocks' slices overflow L2 by reaches DRAM again (a
     * log-softmax over 128,256 fp32 words: rows of 501 KiB, 264 resident on
     * an H100, 132 MB against its 50 MB L2: most of the second pass misses) */
    double l2_bytes = g->prop.l2CacheSize > 0 ? (double)g->prop.l2CacheSize : 0;
    double footprint = resident_blocks * k->reread_slice;
    double reread_miss = footprint > l2_bytes ? 1 - l2_bytes / footprint : 0;
    double loads = fmin(k->dram_load_bytes, k->dram_bytes) + k->reread_bytes * reread_miss;
    double others = k->dram_bytes - fmin(k->dram_load_bytes, k->dram_bytes);
    t->dram_ns = (loads / load_fill + others / store_fill) / hbm * 1e9;
    t->mem_fill = t->dram_ns > 0 ? (loads + others) / (hbm * t->dram_ns * 1e-9) : store_fill;
    t->l2_ns = (a[MAYA_KW_LD_GLOBAL] + a[MAYA_KW_ST_GLOBAL]) / l2 * 1e9;
    double fp16 = fp32 * 2; /* packed half arithmetic on CUDA cores */
    t->fp_ns = fmax(fmax(a[MAYA_KW_FLOP_FP32] / fp32, a[MAYA_KW_FLOP_FP64] / fp64), a[MAYA_KW_FLOP_FP16] / fp16) *
               1e9 / t->fill;
    /* tensor cores: at the share of peak a tuned GEMM reaches */
    double eff = est_calib.gemm_eff_max > 0 ? est_calib.gemm_eff_max : 0.8;
    t->mma_ns = (a[MAYA_KW_MMA_FP16] / est_peak_flops(g, EST_P_FP16) + a[MAYA_KW_MMA_TF32] / est_peak_flops(g, EST_P_TF32) +
                 a[MAYA_KW_MMA_FP8] / est_peak_flops(g, EST_P_FP8) + a[MAYA_KW_MMA_INT8] / est_peak_flops(g, EST_P_INT8) +
                 a[MAYA_KW_MMA_FP64] / est_peak_flops(g, EST_P_FP64)) * 1e9 / (eff * t->fill);
    /* Hopper's and later GPUs' tensor-core peak is that of their warpgroup
     * instructions (wgmma, tcgen05); the warp-level mma.sync of earlier
     * GPUs reaches about 2/3 of it there (FlashAttention-3, Shah et al.
     * 2024, on H100; assumed for Blackwell, unmeasured) */
    if ((k->flags & MAYA_KW_F_WARP_MMA) && !(k->flags & MAYA_KW_F_GROUP_MMA) && g->prop.major >= 9)
        t->mma_ns /= WARP_MMA_SHARE_SM90;
    t->sfu_ns = a[MAYA_KW_SFU] / (sms * SFU_PER_SM_CLK * clk) * 1e9 / t->fill;
    t->smem_ns = (a[MAYA_KW_LD_SHARED] + a[MAYA_KW_ST_SHARED]) / (sms * SMEM_BYTES_PER_SM_CLK * clk) * 1e9 / t->fill;
    t->issue_ns = a[MAYA_KW_INSTS] / (sms * ISSUE_PER_SM_CLK * clk) * 1e9 / t->fill;
    /* A warp-level MMA kernel keeps its tiles in registers, so few warps
     * share a scheduler (FlashAttention-2: two), and the warps that multiply
     * also stage their operands through shared memory and run the work
     * between the MMAs (a softmax, an epilogue): with nothing else to issue
     * while a warp waits for its shared memory, its shared-memory time and
     * its instruction issue add instead of overlapping. On A100 the tensor
     * cores still bound FlashAttention-2's forward; on H100, whose warp-level
     * MMA is faster per SM and clock while shared memory and issue are not,
     * this bounds it, which is why it runs only as much faster as SMs and
     * clocks are (1.7x A100, where the tensor peak is 3.2x). */
    t->staged_ns = (k->flags & MAYA_KW_F_WARP_MMA) && !(k->flags & MAYA_KW_F_GROUP_MMA)
                       ? WARP_MMA_STAGING_K * (t->smem_ns + t->issue_ns)
                       : 0;
    double body = fmax(fmax(fmax(t->dram_ns, t->l2_ns), fmax(t->fp_ns, t->mma_ns)),
                       fmax(fmax(t->sfu_ns, t->smem_ns), fmax(t->issue_ns, t->staged_ns)));
    /* the bounding unit, and the classes of work it serves */
#define CLS(c) (1u << MAYA_KW_##c)
    const unsigned global = CLS(LD_GLOBAL) | CLS(ST_GLOBAL), shared = CLS(LD_SHARED) | CLS(ST_SHARED);
    const struct { const char *name; double ns; unsigned classes; } units[] = {
        { "dram", t->dram_ns, global },
        { "l2", t->l2_ns, global },
        { "fp", t->fp_ns, CLS(FLOP_FP64) | CLS(FLOP_FP32) | CLS(FLOP_FP16) },
        { "tensor", t->mma_ns, CLS(MMA_FP64) | CLS(MMA_TF32) | CLS(MMA_FP16) | CLS(MMA_FP8) | CLS(MMA_INT8) },
        { "sfu", t->sfu_ns, CLS(SFU) },
        { "shared", t->smem_ns, shared },
        { "issue", t->issue_ns, CLS(INSTS) },
        { "staging", t->staged_ns, shared | CLS(INSTS) },
    };
#undef CLS
    size_t b = 0;
    for (size_t i = 1; i < sizeof units / sizeof *units; i++)
        if (units[i].ns > units[b].ns)
            b = i;
    t->bound = units[b].name;
    body = uneven_blocks(k, units[b].classes, body, blocks, slots, waves);
    double floor_ns = f->kernel_floor_ns > 0 ? f->kernel_floor_ns : 2000;
    t->total_ns = floor_ns + (isfinite(body) ? body : 0);
}

double est_kwork_ns(const struct maya_gpu_spec *g, const struct est_kwork *k)
{
    struct est_kwork_times t;
    est_kwork_times(g, k, &t);
    return t.total_ns;
}

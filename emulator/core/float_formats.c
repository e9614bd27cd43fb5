/* The GPU's float formats as bits and rounding into them (float_formats.h).
 *
 * Rounding works on a long double: every f16, bf16, f32 and f64 value, and
 * every 64-bit integer, is exact in it (x86's 64-bit significand or a wider
 * one), so a conversion is one rounding, as on the GPU, never two. Costs: a
 * few dozen float operations a value.
 */
#include "float_formats.h"

#include <math.h>
#include <string.h>

static const struct {
    int mant, emin, emax;
    uint64_t nan;
} fmt[] = {
    [FP_F16] = { 10, -14, 15, 0x7fff },
    [FP_BF16] = { 7, -126, 127, 0x7fff },
    [FP_F32] = { 23, -126, 127, 0x7fffffffu },
    [FP_F64] = { 52, -1022, 1023, 0x7fffffffffffffffull },
};

static int ebits(int f)
{
    return f == FP_F16 ? 5 : f == FP_F64 ? 11 : 8;
}

long double emu_fp_value(uint64_t bits, int f)
{
    int m = fmt[f].mant, eb = ebits(f);
    uint64_t mant = bits & ((1ull << m) - 1), e = bits >> m & ((1u << eb) - 1);
    int neg = (int)(bits >> (m + eb) & 1);
    long double v;
    if (e == (1u << eb) - 1)
        v = mant ? NAN : INFINITY;
    else if (e == 0)
        v = ldexpl((long double)mant, fmt[f].emin - m);
    else
        v = ldexpl((long double)(mant | 1ull << m), (int)e - (1 << (eb - 1)) + 1 - m);
    return neg ? -v : v;
}

int emu_fp_subnormal(uint64_t bits, int f)
{
    int m = fmt[f].mant, eb = ebits(f);
    return (bits >> m & ((1u << eb) - 1)) == 0 && (bits & ((1ull << m) - 1)) != 0;
}

uint64_t emu_fp_bits(long double v, int f, int rd, int ftz)
{
    int m = fmt[f].mant, eb = ebits(f), emin = fmt[f].emin, emax = fmt[f].emax;
    uint64_t sign = (uint64_t)(signbit(v) != 0) << (m + eb), inf = ((1ull << eb) - 1) << m;
    if (isnan(v))
        return fmt[f].nan;
    if (isinf(v))
        return sign | inf;
    if (v == 0)
        return sign;
    long double a = fabsl(v);
    int e = ilogbl(a);
    if (e < emin)
        e = emin;
    /* a in units of the last place: its integer part is kept, the fraction rounded */
    long double u = ldexpl(a, m - e), k = floorl(u), frac = u - k;
    int up;
    switch (rd) {
    case RD_RZ: up = 0; break;
    case RD_RP: up = frac > 0 && !sign; break;
    case RD_RM: up = frac > 0 && sign; break;
    default: up = frac > 0.5L || (frac == 0.5L && fmodl(k, 2) != 0); break;
    }
    uint64_t q = (uint64_t)k + (uint64_t)up;
    if (q >> (m + 1)) {
        q >>= 1; /* rounded up to the next power of two */
        e++;
    }
    if (e > emax) {
        /* overflow: to nearest, and away from zero in the directed modes, is infinity */
        int to_inf = rd == RD_RN || (rd == RD_RP && !sign) || (rd == RD_RM && sign);
        return sign | (to_inf ? inf : inf - 1);
    }
    if (!(q >> m)) {
        /* subnormal (or rounded to zero) */
        return ftz ? sign : sign | q;
    }
    return sign | (uint64_t)(e - emin + 1) << m | (q & ((1ull << m) - 1));
}

double emu_fp_fma_odd(double a, double b, double c)
{
    double p = a * b, s = p + c;
    if (!isfinite(s) || s == 0)
        return s;
    /* the error of s (Knuth's two-sum): s is exact when it is 0 */
    double bb = s - p, err = (p - (s - bb)) + (c - bb);
    uint64_t w;
    memcpy(&w, &s, sizeof w);
    if (err != 0 && !(w & 1))
        s = nextafter(s, err > 0 ? INFINITY : -INFINITY);
    return s;
}

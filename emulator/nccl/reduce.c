/* NCCL's element types and the reductions small collectives perform.
 *
 * Integers reduce in their own type (wrapping as on a GPU). Floating types
 * narrower than float (half, bfloat16, the two fp8 formats) are widened to
 * float, reduced and rounded back to nearest-even, one peer at a time, which
 * is what NCCL's ring does up to the order of the additions.
 */
#include "nc.h"

#include <math.h>
#include <string.h>

/* The trace format's table of element sizes is NCCL's: one per type. */
_Static_assert(ncclNumTypes == 12, "maya_coll_dtype_bytes covers NCCL's types");

size_t nc_type_size(ncclDataType_t t)
{
    return (size_t)maya_coll_dtype_bytes(t);
}

const char *nc_type_name(ncclDataType_t t)
{
    static const char *names[] = { "int8", "uint8", "int32", "uint32", "int64", "uint64", "float16",
                                   "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2" };
    return t >= 0 && t < ncclNumTypes ? names[t] : "?";
}

const char *nc_redop_name(int op)
{
    static const char *names[] = { "sum", "prod", "max", "min", "avg" };
    return op >= 0 && op < ncclNumOps ? names[op] : "premulsum";
}

/* ---- small floating formats ---- */

/* A binary format with e exponent bits, m mantissa bits and the given bias.
 * ieee: the top exponent means inf/NaN (half, e5m2); otherwise only
 * all-ones is NaN (e4m3, whose largest value is 448). */
struct minifloat {
    int e, m, bias, ieee;
};

static const struct minifloat HALF = { 5, 10, 15, 1 };
static const struct minifloat E4M3 = { 4, 3, 7, 0 };
static const struct minifloat E5M2 = { 5, 2, 15, 1 };

static float mf_decode(uint32_t bits, struct minifloat f)
{
    uint32_t sign = bits >> (f.e + f.m) & 1;
    uint32_t ex = bits >> f.m & ((1u << f.e) - 1);
    uint32_t man = bits & ((1u << f.m) - 1);
    uint32_t exmax = (1u << f.e) - 1;
    float v;
    if (f.ieee && ex == exmax)
        v = man ? NAN : INFINITY;
    else if (!f.ieee && ex == exmax && man == (1u << f.m) - 1)
        v = NAN;
    else if (ex == 0)
        v = ldexpf((float)man, 1 - f.bias - f.m);
    else
        v = ldexpf((float)(man | 1u << f.m), (int)ex - f.bias - f.m);
    return sign ? -v : v;
}

static uint32_t mf_encode(float x, struct minifloat f)
{
    uint32_t sign = signbit(x) ? 1u << (f.e + f.m) : 0;
    uint32_t exmax = (1u << f.e) - 1;
    uint32_t nan = f.ieee ? exmax << f.m | 1u << (f.m - 1) : exmax << f.m | ((1u << f.m) - 1);
    /* Largest finite: ieee formats stop one exponent below the top; e4m3
     * keeps the top exponent but not its all-ones mantissa. */
    uint32_t maxbits = f.ieee ? (exmax - 1) << f.m | ((1u << f.m) - 1) : exmax << f.m | ((1u << f.m) - 2);
    if (isnan(x))
        return sign | nan;
    float a = fabsf(x);
    if (isinf(a))
        return sign | (f.ieee ? exmax << f.m : maxbits);
    if (a == 0)
        return sign;
    int ex;
    frexpf(a, &ex);
    int u = ex - 1; /* a = 1.x * 2^u */
    uint32_t bits;
    if (u < 1 - f.bias) {
        bits = (uint32_t)rintf(ldexpf(a, f.bias - 1 + f.m)); /* subnormal; may round up to the first normal */
    } else {
        uint32_t q = (uint32_t)rintf(ldexpf(a, f.m - u));
        if (q == 2u << f.m) {
            q >>= 1;
            u++;
        }
        bits = (uint32_t)(u + f.bias) << f.m | (q - (1u << f.m));
    }
    if (bits > maxbits)
        bits = f.ieee ? exmax << f.m : maxbits; /* overflow: inf, or saturate for e4m3 */
    return sign | bits;
}

static float bf16_decode(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t bf16_encode(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if (isnan(f))
        return (uint16_t)(u >> 16 | 0x40);
    u += 0x7fff + (u >> 16 & 1); /* round to nearest even */
    return (uint16_t)(u >> 16);
}

static float load_small(const unsigned char *p, ncclDataType_t t)
{
    switch (t) {
    case ncclFloat16: { uint16_t v; memcpy(&v, p, 2); return mf_decode(v, HALF); }
    case ncclBfloat16: { uint16_t v; memcpy(&v, p, 2); return bf16_decode(v); }
    case ncclFloat8e4m3: return mf_decode(*p, E4M3);
    default: return mf_decode(*p, E5M2);
    }
}

static void store_small(unsigned char *p, ncclDataType_t t, float x)
{
    uint16_t v;
    switch (t) {
    case ncclFloat16: v = (uint16_t)mf_encode(x, HALF); memcpy(p, &v, 2); break;
    case ncclBfloat16: v = bf16_encode(x); memcpy(p, &v, 2); break;
    case ncclFloat8e4m3: *p = (unsigned char)mf_encode(x, E4M3); break;
    default: *p = (unsigned char)mf_encode(x, E5M2); break;
    }
}

/* ---- reductions ---- */

#define APPLY(a, b, op) \
    ((op) == ncclProd ? (a) * (b) : (op) == ncclMax ? ((a) > (b) ? (a) : (b)) \
                                  : (op) == ncclMin ? ((a) < (b) ? (a) : (b)) : (a) + (b))

/* Integer sums and products wrap, as on a GPU: compute them unsigned. */
#define REDUCE_INT(T, U) \
    do { \
        T *x = acc; \
        const T *y = in; \
        for (size_t i = 0; i < count; i++) { \
            if (op == ncclMax || op == ncclMin) \
                x[i] = APPLY(x[i], y[i], op); \
            else \
                x[i] = (T)(op == ncclProd ? (U)x[i] * (U)y[i] : (U)x[i] + (U)y[i]); \
        } \
    } while (0)

#define REDUCE_FLOAT(T) \
    do { \
        T *x = acc; \
        const T *y = in; \
        for (size_t i = 0; i < count; i++) \
            x[i] = APPLY(x[i], y[i], op); \
    } while (0)

void nc_reduce(void *acc, const void *in, size_t count, ncclDataType_t t, int op)
{
    if (op >= ncclAvg)
        op = ncclSum; /* avg divides afterwards; PreMulSum scaled before */
    switch (t) {
    case ncclInt8: REDUCE_INT(int8_t, uint8_t); break;
    case ncclUint8: REDUCE_INT(uint8_t, uint8_t); break;
    case ncclInt32: REDUCE_INT(int32_t, uint32_t); break;
    case ncclUint32: REDUCE_INT(uint32_t, uint32_t); break;
    case ncclInt64: REDUCE_INT(int64_t, uint64_t); break;
    case ncclUint64: REDUCE_INT(uint64_t, uint64_t); break;
    case ncclFloat32: REDUCE_FLOAT(float); break;
    case ncclFloat64: REDUCE_FLOAT(double); break;
    default: {
        size_t sz = nc_type_size(t);
        unsigned char *x = acc;
        const unsigned char *y = in;
        for (size_t i = 0; i < count; i++) {
            float a = load_small(x + i * sz, t), b = load_small(y + i * sz, t);
            store_small(x + i * sz, t, APPLY(a, b, op));
        }
        break;
    }
    }
}

#define DIVIDE(T) \
    do { \
        T *x = buf; \
        for (size_t i = 0; i < count; i++) \
            x[i] = (T)(x[i] / (T)n); \
    } while (0)

void nc_divide(void *buf, size_t count, ncclDataType_t t, int n)
{
    switch (t) {
    case ncclInt8: DIVIDE(int8_t); break;
    case ncclUint8: DIVIDE(uint8_t); break;
    case ncclInt32: DIVIDE(int32_t); break;
    case ncclUint32: DIVIDE(uint32_t); break;
    case ncclInt64: DIVIDE(int64_t); break;
    case ncclUint64: DIVIDE(uint64_t); break;
    case ncclFloat32: DIVIDE(float); break;
    case ncclFloat64: DIVIDE(double); break;
    default: {
        size_t sz = nc_type_size(t);
        unsigned char *x = buf;
        for (size_t i = 0; i < count; i++)
            store_small(x + i * sz, t, load_small(x + i * sz, t) / (float)n);
        break;
    }
    }
}

#define SCALE(T) \
    do { \
        T *x = buf, s; \
        memcpy(&s, scalar, sizeof s); \
        for (size_t i = 0; i < count; i++) \
            x[i] = (T)(x[i] * s); \
    } while (0)

void nc_scale(void *buf, size_t count, ncclDataType_t t, const void *scalar)
{
    switch (t) {
    case ncclInt8: SCALE(int8_t); break;
    case ncclUint8: SCALE(uint8_t); break;
    case ncclInt32: SCALE(int32_t); break;
    case ncclUint32: SCALE(uint32_t); break;
    case ncclInt64: SCALE(int64_t); break;
    case ncclUint64: SCALE(uint64_t); break;
    case ncclFloat32: SCALE(float); break;
    case ncclFloat64: SCALE(double); break;
    default: {
        size_t sz = nc_type_size(t);
        float s = load_small(scalar, t);
        unsigned char *x = buf;
        for (size_t i = 0; i < count; i++)
            store_small(x + i * sz, t, load_small(x + i * sz, t) * s);
        break;
    }
    }
}

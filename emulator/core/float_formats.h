/* The GPU's float formats (f16, bf16, f32, f64) as bits, and rounding into
 * them in the four IEEE modes, for the SASS executor's conversions and half
 * arithmetic (sass_exec.c). */
#ifndef MAYA_FLOAT_FORMATS_H
#define MAYA_FLOAT_FORMATS_H

#include <stdint.h>

enum emu_fp { FP_F16, FP_BF16, FP_F32, FP_F64 };
enum emu_round { RD_RN, RD_RZ, RD_RM, RD_RP };

/* The value of bits of format f, exactly (a NaN keeps its sign, as a NaN). */
long double emu_fp_value(uint64_t bits, int f);

/* 1 if bits of format f are a subnormal number. */
int emu_fp_subnormal(uint64_t bits, int f);

/* v rounded to format f in mode rd: an overflow is infinity or the largest
 * finite number as the mode says, subnormals are kept unless ftz (then a
 * sign-kept zero), a NaN is the GPU's canonical one (0x7fff, 0x7fffffff;
 * for f64 0x7fffffffffffffff, which callers do not rely on). v must be exact, or rounded to odd with at
 * least two bits more than f keeps (emu_fp_fma_odd). */
uint64_t emu_fp_bits(long double v, int f, int rd, int ftz);

/* a * b + c for halves (f16 or bf16 values, whose product a double holds
 * exactly), as a double rounded to odd: rounding it to f16 or bf16 then
 * gives the correctly rounded fused result. */
double emu_fp_fma_odd(double a, double b, double c);

#endif

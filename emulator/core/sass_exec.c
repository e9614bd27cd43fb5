/* Running a small kernel on the CPU from its SASS, as nvdisasm prints it
 * (PyTorch's CUDA wheels ship SASS only, no PTX), from the program
 * sass_decode.c made of it (sass_prog.h).
 *
 * Each instruction is executed with its exact SASS semantics (32-bit
 * registers, 64-bit values in register pairs, carries in predicates); an
 * instruction the decoder did not know (X_BAD) stops the run when a thread
 * reaches it, so a kernel whose uncovered code is never taken (an
 * assertion's call, a multi-block path) still runs, and one that takes it is
 * never given a guessed value. What is covered is listed in
 * docs/kernel-exec.md.
 *
 * Threads run as in ptx_exec.c: block by block, each thread until a barrier
 * (BAR.SYNC), a warp operation (SHFL, VOTE, VOTEU, WARPSYNC) or its end; a
 * warp operation is done for all live lanes at once, a barrier released when
 * every live thread has reached it. Uniform registers are kept per thread
 * (each lane computes the same value from uniform inputs).
 *
 * Constant bank 0 holds, as on sm_90 and sm_100: the block size at 0x0, the
 * grid size at 0xc, the stack's start at 0x28, the memory descriptor at
 * 0x208 (read, not used), and the parameters from param_base; a read of any
 * other constant stops the run as not covered.
 *
 * Shared memory is one buffer per block: the 1 KiB sm_90 reserves, the
 * static and the dynamic bytes; shared addresses are read modulo 2^24 (the
 * high bits name the CTA in its cluster, always 0 here).
 *
 * Costs: 1.4 KiB of registers per thread (256 + 64 + 16 words, 16
 * predicates);
 * a step is one switch.
 */
#define _GNU_SOURCE
#include "sass_exec.h"
#include "exec_common.h"
#include "sass_prog.h"
#include "float_formats.h"
#include "ptx_parse.h"
#include "maya/common.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- running ---- */

enum tstate { TS_RUN, TS_BAR, TS_WARP, TS_EXIT };

struct thr {
    uint32_t r[NR];
    uint32_t ur[NUR];
    uint32_t b[NB];              /* convergence barriers: only BMOV reads and writes them here */
    uint8_t p[8], up[8];
};

struct run {
    const struct emu_sass_prog *g;
    const struct emu_ptx_launch *l;
    const struct emu_ptx_mem *m;
    struct thr *t;
    uint32_t *pc;
    uint8_t *state;
    unsigned char *smem;
    uint32_t smem_bytes;
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

static uint32_t sreg(const struct run *r, uint32_t t, unsigned id)
{
    const struct emu_ptx_launch *l = r->l;
    uint32_t bx = l->block[0], by = l->block[1];
    uint32_t lane = t % 32;
    switch (id) {
    case S_TID_X: return t % bx;
    case S_TID_Y: return t / bx % by;
    case S_TID_Z: return t / (bx * by);
    case S_CTAID_X: return r->ctaid[0];
    case S_CTAID_Y: return r->ctaid[1];
    case S_CTAID_Z: return r->ctaid[2];
    case S_LANEID: return lane;
    case S_LTMASK: return (1u << lane) - 1;
    case S_LEMASK: return (uint32_t)((2ull << lane) - 1);
    case S_GTMASK: return ~(uint32_t)((2ull << lane) - 1);
    case S_GEMASK: return ~((1u << lane) - 1);
    case S_EQMASK: return 1u << lane;
    case S_WARPID: return t / 32;
    default: return 0;
    }
}

/* Constant bank 0 word at off (4 bytes, or fewer for LDC.U8/.U16). */
static int cbank(struct run *r, uint32_t bank, int64_t off, uint32_t bytes, uint64_t *out)
{
    const struct emu_ptx_launch *l = r->l;
    if (bank == 2 && off >= 0 && r->g->bank2 && (uint64_t)off + bytes <= r->g->bank2_bytes) {
        uint64_t v = 0;
        memcpy(&v, r->g->bank2 + off, bytes);
        *out = v;
        return 0;
    }
    if (bank != 0 || off < 0)
        return stop(r, EMU_PTX_UNSUPPORTED, "constant bank %u offset %lld not covered", bank, (long long)off);
    uint64_t o = (uint64_t)off;
    uint64_t v = 0;
    for (uint32_t i = 0; i < bytes; i++) {
        uint64_t a = o + i, b;
        if (a >= r->g->param_base && a - r->g->param_base < l->param_bytes) {
            b = ((const unsigned char *)l->params)[a - r->g->param_base];
        } else if (a < 0x18) {
            uint32_t w = a < 0xc ? l->block[a / 4] : l->grid[(a - 0xc) / 4];
            b = w >> (8 * (a % 4)) & 0xff;
        } else if (a >= 0x28 && a < 0x2c) {
            b = STACK_TOP >> (8 * (a - 0x28)) & 0xff;
        } else if (a >= 0x208 && a < 0x210) {
            b = 0; /* the memory descriptor global accesses name; unused here */
        } else {
            return stop(r, EMU_PTX_UNSUPPORTED, "constant bank 0 offset 0x%llx not covered", (unsigned long long)a);
        }
        v |= b << (8 * i);
    }
    *out = v;
    return 0;
}

static uint32_t rget(const struct thr *th, const struct sop *o)
{
    if (o->kind == O_R)
        return o->reg == RZ ? 0 : th->r[o->reg];
    return o->reg == URZ ? 0 : th->ur[o->reg];
}

static int pget(const struct thr *th, const struct sop *o)
{
    int v = o->kind == O_UP ? (o->reg == PT ? 1 : th->up[o->reg]) : (o->reg == PT ? 1 : th->p[o->reg]);
    return o->bnot ? !v : v;
}

/* A 32-bit source: register, immediate or constant; '-' negates, '~'
 * inverts, '|x|' takes the absolute value (integer ops). */
static int src(struct run *r, uint32_t t, const struct sop *o, uint32_t *out)
{
    const struct thr *th = &r->t[t];
    uint64_t v;
    switch (o->kind) {
    case O_R:
    case O_UR: v = rget(th, o); break;
    case O_IMM: v = (uint32_t)o->val; break;
    case O_CONST: {
        int64_t off = o->imm;
        if (o->ireg != RZ)
            off += (int32_t)th->r[o->ireg];
        if (o->ureg != URZ)
            off += (int32_t)th->ur[o->ureg];
        if (cbank(r, o->reg, off, 4, &v) < 0)
            return -1;
        break;
    }
    case O_P:
    case O_UP: v = (uint32_t)pget(th, o); break;
    default: return stop(r, EMU_PTX_UNSUPPORTED, "operand form not covered");
    }
    if (o->half)
        return stop(r, EMU_PTX_UNSUPPORTED, "half select of a register not covered here");
    uint32_t w = (uint32_t)v;
    if (o->absv)
        w = (int32_t)w < 0 ? 0u - w : w;
    if (o->bnot && o->kind != O_P && o->kind != O_UP)
        w = ~w;
    if (o->neg)
        w = 0u - w;
    *out = w;
    return 0;
}

/* A 64-bit source: a register pair, an immediate (sign-extended), or two constant words. */
static int src64(struct run *r, uint32_t t, const struct sop *o, uint64_t *out)
{
    const struct thr *th = &r->t[t];
    if (o->kind == O_R || o->kind == O_UR) {
        uint32_t z = o->kind == O_R ? RZ : URZ;
        if (o->reg == z) {
            *out = 0;
        } else {
            if ((uint32_t)o->reg + 1 >= z)
                return stop(r, EMU_PTX_FAULT, "register pair past the last register");
            const uint32_t *f = o->kind == O_R ? th->r : th->ur;
            *out = (uint64_t)f[o->reg + 1] << 32 | f[o->reg];
        }
    } else if (o->kind == O_IMM) {
        *out = (uint64_t)(int64_t)(int32_t)o->val;
    } else if (o->kind == O_CONST) {
        int64_t off = o->imm;
        if (o->ireg != RZ)
            off += (int32_t)th->r[o->ireg];
        if (o->ureg != URZ)
            off += (int32_t)th->ur[o->ureg];
        if (cbank(r, o->reg, off, 8, out) < 0)
            return -1;
    } else {
        return stop(r, EMU_PTX_UNSUPPORTED, "64-bit operand form not covered");
    }
    if (o->neg)
        *out = 0 - *out;
    if (o->bnot)
        *out = ~*out;
    return 0;
}

static int dst(struct run *r, uint32_t t, const struct sop *o, uint32_t v)
{
    struct thr *th = &r->t[t];
    if (o->half)
        return stop(r, EMU_PTX_UNSUPPORTED, "half select of a destination not covered");
    if (o->kind == O_R) {
        if (o->reg != RZ)
            th->r[o->reg] = v;
    } else if (o->kind == O_UR) {
        if (o->reg != URZ)
            th->ur[o->reg] = v;
    } else {
        return stop(r, EMU_PTX_FAULT, "destination is not a register");
    }
    return 0;
}

/* Write n consecutive registers from o (a pair for 64-bit, four for 128-bit). */
static int dstn(struct run *r, uint32_t t, const struct sop *o, const uint32_t *w, unsigned n)
{
    uint32_t z = o->kind == O_R ? RZ : URZ;
    if (o->kind != O_R && o->kind != O_UR)
        return stop(r, EMU_PTX_FAULT, "destination is not a register");
    if (o->reg == z)
        return 0;
    if (o->reg + n > z)
        return stop(r, EMU_PTX_FAULT, "register group past the last register");
    uint32_t *f = o->kind == O_R ? r->t[t].r : r->t[t].ur;
    for (unsigned i = 0; i < n; i++)
        f[o->reg + i] = w[i];
    return 0;
}

static int pset(struct run *r, uint32_t t, const struct sop *o, int v)
{
    if (o->kind != O_P && o->kind != O_UP)
        return stop(r, EMU_PTX_FAULT, "predicate destination is not a predicate");
    if (o->reg != PT) {
        if (o->kind == O_P)
            r->t[t].p[o->reg] = (uint8_t)(v != 0);
        else
            r->t[t].up[o->reg] = (uint8_t)(v != 0);
    }
    return 0;
}

static int is_pred(const struct sop *o)
{
    return o->kind == O_P || o->kind == O_UP;
}

/* An address: base register (32-bit, or a pair with .64), + UR, + offset. */
static int addr_of(struct run *r, uint32_t t, const struct sinst *x, const struct sop *o, uint64_t *out)
{
    const struct thr *th = &r->t[t];
    if (o->kind != O_MEM)
        return stop(r, EMU_PTX_FAULT, "memory operand expected");
    uint64_t a = 0;
    if (o->wide == 2) {
        if (o->ureg + 1 >= URZ)
            return stop(r, EMU_PTX_FAULT, "register pair past the last register");
        a = (uint64_t)th->ur[o->ureg + 1] << 32 | th->ur[o->ureg];
    } else {
        if (o->reg != RZ) {
            if (o->wide) {
                if (o->reg + 1 >= RZ)
                    return stop(r, EMU_PTX_FAULT, "register pair past the last register");
                a = (uint64_t)th->r[o->reg + 1] << 32 | th->r[o->reg];
            } else {
                a = (uint64_t)th->r[o->reg] * (o->scale ? o->scale : 1);
            }
        }
        if (o->ureg != URZ)
            a += (uint64_t)th->ur[o->ureg]; /* a 32-bit uniform offset */
    }
    a += (uint64_t)(int64_t)o->imm;
    if (x->space == SP_SHARED)
        a &= 0xffffff;
    *out = a;
    return 0;
}

static int mem_read(struct run *r, int space, uint64_t a, uint32_t bytes, void *out)
{
    if (space == SP_SHARED) {
        if (a + bytes > r->smem_bytes)
            return stop(r, EMU_PTX_FAULT, "shared memory read at 0x%llx past the block's %u bytes",
                        (unsigned long long)a, r->smem_bytes);
        memcpy(out, r->smem + a, bytes);
        return 0;
    }
    if (a % bytes)
        return stop(r, EMU_PTX_FAULT, "misaligned %u-byte read at 0x%llx", bytes, (unsigned long long)a);
    if (r->m->can_read(r->m->ctx, a, bytes) < 0)
        return stop(r, EMU_PTX_UNREAL, "read of %u bytes at 0x%llx: not real device bytes", bytes,
                    (unsigned long long)a);
    memcpy(out, (const void *)(uintptr_t)a, bytes);
    return 0;
}

static int mem_write(struct run *r, int space, uint64_t a, uint32_t bytes, const void *in)
{
    if (space == SP_SHARED) {
        if (a + bytes > r->smem_bytes)
            return stop(r, EMU_PTX_FAULT, "shared memory write at 0x%llx past the block's %u bytes",
                        (unsigned long long)a, r->smem_bytes);
        memcpy(r->smem + a, in, bytes);
        return 0;
    }
    if (a % bytes)
        return stop(r, EMU_PTX_FAULT, "misaligned %u-byte write at 0x%llx", bytes, (unsigned long long)a);
    if (r->m->can_write(r->m->ctx, a, bytes) < 0)
        return stop(r, EMU_PTX_FAULT, "write of %u bytes at 0x%llx: not in device memory", bytes,
                    (unsigned long long)a);
    memcpy((void *)(uintptr_t)a, in, bytes);
    return 0;
}

static uint32_t lut3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut)
{
    uint32_t v = 0;
    for (int i = 0; i < 8; i++)
        if (lut >> i & 1) {
            uint32_t ma = i & 4 ? a : ~a, mb = i & 2 ? b : ~b, mc = i & 1 ? c : ~c;
            v |= ma & mb & mc;
        }
    return v;
}

static int icmp(int c, int sign, uint32_t a, uint32_t b)
{
    int lt = sign ? (int32_t)a < (int32_t)b : a < b, eq = a == b;
    switch (c) {
    case C_LT: return lt;
    case C_EQ: return eq;
    case C_LE: return lt || eq;
    case C_GT: return !lt && !eq;
    case C_NE: return !eq;
    case C_GE: return !lt;
    case C_T: return 1;
    default: return 0;
    }
}

static float f32(uint32_t w)
{
    float f;
    memcpy(&f, &w, 4);
    return f;
}

static uint32_t w32(float f)
{
    uint32_t w;
    memcpy(&w, &f, 4);
    return w;
}

/* A float source: a register's bits, or an immediate; -x and |x|. */
static int fsrc(struct run *r, uint32_t t, const struct sop *o, float *out)
{
    float f;
    if (o->kind == O_FIMM) {
        double d;
        memcpy(&d, &o->val, sizeof d);
        f = (float)d;
    } else {
        struct sop p = *o;
        p.neg = p.absv = 0;
        uint32_t w;
        if (src(r, t, &p, &w) < 0)
            return -1;
        f = f32(w);
    }
    if (o->absv)
        f = fabsf(f);
    if (o->neg)
        f = -f;
    *out = f;
    return 0;
}

/* A double source: a register pair's bits, two constant words, or an
 * immediate (nvdisasm prints a double's); -x and |x|. */
static int dsrc(struct run *r, uint32_t t, const struct sop *o, double *out)
{
    double d;
    if (o->kind == O_FIMM) {
        memcpy(&d, &o->val, sizeof d);
    } else {
        struct sop p = *o;
        p.neg = p.absv = p.bnot = 0;
        uint64_t w;
        if (o->kind == O_IMM || src64(r, t, &p, &w) < 0)
            return o->kind == O_IMM ? stop(r, EMU_PTX_UNSUPPORTED, "integer operand of a double op") : -1;
        memcpy(&d, &w, sizeof d);
    }
    if (o->absv)
        d = fabs(d);
    if (o->neg)
        d = -d;
    *out = d;
    return 0;
}

/* A float or double compare (floats compare exactly as doubles). */
static int fcmp(int c, double a, double b)
{
    int un = isnan(a) || isnan(b);
    switch (c) {
    case C_F: return 0;
    case C_T: return 1;
    case C_LT: return !un && a < b;
    case C_EQ: return !un && a == b;
    case C_LE: return !un && a <= b;
    case C_GT: return !un && a > b;
    case C_NE: return !un && a != b;
    case C_GE: return !un && a >= b;
    case C_NUM: return !un;
    case C_NAN: return un;
    case C_LTU: return un || a < b;
    case C_EQU: return un || a == b;
    case C_LEU: return un || a <= b;
    case C_GTU: return un || a > b;
    case C_NEU: return un || a != b;
    case C_GEU: return un || a >= b;
    default: return 0;
    }
}

static int fp_of(int t)
{
    return t == T_F16 ? FP_F16 : t == T_BF16 ? FP_BF16 : t == T_F64 ? FP_F64 : FP_F32;
}

/* 1 if v, a value of type ty, is a subnormal one (below the smallest
 * normal: exponent field 1, mantissa 0). */
static int subnormal_of(long double v, int ty)
{
    uint64_t min_normal = ty == T_F64 ? 1ull << 52 : ty == T_F32 ? 1u << 23 : ty == T_BF16 ? 1u << 7 : 1u << 10;
    return isfinite(v) && v != 0 && fabsl(v) < emu_fp_value(min_normal, fp_of(ty));
}

/* A conversion's float source of type ty: f16/bf16 from a register's half
 * (.H1 the high one, else the low), f32 or f64 (fsrc, dsrc); -x, |x|. */
static int conv_src(struct run *r, uint32_t t, const struct sop *o, int ty, long double *out)
{
    if (ty == T_F64) {
        double d;
        if (dsrc(r, t, o, &d) < 0)
            return -1;
        *out = d;
        return 0;
    }
    if (ty == T_F32) {
        float f;
        if (fsrc(r, t, o, &f) < 0)
            return -1;
        *out = f;
        return 0;
    }
    struct sop p = *o;
    p.half = p.neg = p.absv = 0;
    uint32_t w;
    if (o->kind == O_FIMM || src(r, t, &p, &w) < 0)
        return o->kind == O_FIMM ? stop(r, EMU_PTX_UNSUPPORTED, "half immediate of a conversion not covered") : -1;
    long double v = emu_fp_value(o->half == 2 ? w >> 16 : w & 0xffff, fp_of(ty));
    if (o->absv)
        v = fabsl(v);
    *out = o->neg ? -v : v;
    return 0;
}

/* Write the bits of a float result of type ty: a register (an f16 or bf16
 * in its low half, the high half 0), or a pair for f64. */
static int conv_dst(struct run *r, uint32_t t, const struct sop *o, int ty, uint64_t bits)
{
    if (ty == T_F64 || ty == T_S64 || ty == T_U64) {
        uint32_t w[2] = { (uint32_t)bits, (uint32_t)(bits >> 32) };
        return dstn(r, t, o, w, 2);
    }
    return dst(r, t, o, (uint32_t)bits);
}

/* The two halves (low, high) a half op reads from o[*i]: a register or
 * constant (.H0_H0 / .H1_H1: one half for both lanes), or the immediate pair
 * o[*i], o[*i + 1] (nvdisasm prints the high half first); -x and |x| act on
 * each half's sign. *i moves past what was read. */
static int hpair(struct run *r, uint32_t t, const struct sinst *x, unsigned *i, uint16_t h[2])
{
    const struct sop *o = &x->o[*i];
    int f = fp_of(x->dt);
    if (o->kind == O_FIMM) {
        double hi, lo;
        if (*i + 1 >= x->nops || o[1].kind != O_FIMM)
            return stop(r, EMU_PTX_UNSUPPORTED, "half immediate without its pair");
        memcpy(&hi, &o->val, sizeof hi);
        memcpy(&lo, &o[1].val, sizeof lo);
        if (isnan(hi) || isnan(lo))
            return stop(r, EMU_PTX_UNSUPPORTED, "NaN half immediate (its bits are not printed) not covered");
        h[0] = (uint16_t)emu_fp_bits(lo, f, RD_RN, 0);
        h[1] = (uint16_t)emu_fp_bits(hi, f, RD_RN, 0);
        *i += 2;
        return 0;
    }
    struct sop p = *o;
    p.half = p.neg = p.absv = 0;
    uint32_t w;
    if (src(r, t, &p, &w) < 0)
        return -1;
    h[0] = (uint16_t)(o->half == 2 ? w >> 16 : w);
    h[1] = (uint16_t)(o->half == 1 ? w : w >> 16);
    for (int k = 0; k < 2; k++) {
        if (o->absv)
            h[k] &= 0x7fff;
        if (o->neg)
            h[k] ^= 0x8000;
    }
    *i += 1;
    return 0;
}

/* HADD2 d, a, b; HMUL2 d, a, b; HFMA2 d, a, b, c (.MMA alike): each lane
 * fused and rounded once to nearest even, subnormals kept (.FTZ: flushed,
 * in and out), a NaN the canonical 0x7fff; .BF16_V2 on bf16 pairs.
 * HADD2.F32 d, a.Hn, b.Hn: one sum of the selected halves as f32. */
static int do_hop(struct run *r, uint32_t t, const struct sinst *x)
{
    int f = fp_of(x->dt), ftz = (x->mods & M_FTZ) != 0;
    unsigned need = x->sub == H_FMA ? 3 : 2, i = 1;
    uint16_t h[3][2] = { { 0, 0 }, { 0, 0 }, { 0, 0 } };
    if (x->nops < 2 || x->o[0].kind != O_R)
        return stop(r, EMU_PTX_FAULT, "half op form not covered");
    for (unsigned k = 0; k < need; k++) {
        if (i >= x->nops)
            return stop(r, EMU_PTX_FAULT, "half op with %u operands", x->nops);
        if (x->st == T_F32 && (x->o[i].kind == O_FIMM || (!x->o[i].half && x->o[i].reg != RZ)))
            return stop(r, EMU_PTX_UNSUPPORTED, "HADD2.F32 of a half pair (not one half) not covered");
        if (hpair(r, t, x, &i, h[k]) < 0)
            return -1;
    }
    if (i != x->nops)
        return stop(r, EMU_PTX_FAULT, "half op with %u operands", x->nops);
    uint16_t out[2];
    for (int lane = 0; lane < 2; lane++) {
        double v[3];
        for (unsigned k = 0; k < 3; k++) {
            v[k] = (double)emu_fp_value(h[k][lane], f);
            if (ftz && emu_fp_subnormal(h[k][lane], f))
                v[k] = copysign(0, v[k]);
        }
        double e = x->sub == H_ADD ? emu_fp_fma_odd(v[0], 1, v[1])
                 : x->sub == H_MUL ? emu_fp_fma_odd(v[0], v[1], -0.0) : emu_fp_fma_odd(v[0], v[1], v[2]);
        if (x->st == T_F32)
            return dst(r, t, &x->o[0], (uint32_t)emu_fp_bits(e, FP_F32, RD_RN, ftz));
        out[lane] = (uint16_t)emu_fp_bits(e, f, RD_RN, ftz);
    }
    return dst(r, t, &x->o[0], (uint32_t)out[1] << 16 | out[0]);
}

/* HMNMX2 d, a, b, Pmin: each lane the min of a and b if Pmin, else the
 * max, as its input's bits; a NaN loses to a number (.NAN: wins, as the
 * canonical 0x7fff), two NaNs give 0x7fff; -0 is below +0; .FTZ flushes
 * subnormal inputs (the result is one of them). */
static int do_hmnmx2(struct run *r, uint32_t t, const struct sinst *x)
{
    int f = fp_of(x->dt), ftz = (x->mods & M_FTZ) != 0;
    unsigned i = 1;
    uint16_t h[2][2];
    if (x->nops < 4 || x->o[0].kind != O_R)
        return stop(r, EMU_PTX_FAULT, "HMNMX2 form not covered");
    for (int k = 0; k < 2; k++) {
        if (i >= x->nops)
            return stop(r, EMU_PTX_FAULT, "HMNMX2 form not covered");
        if (hpair(r, t, x, &i, h[k]) < 0)
            return -1;
    }
    if (i + 1 != x->nops || !is_pred(&x->o[i]))
        return stop(r, EMU_PTX_FAULT, "HMNMX2 form not covered");
    int want_min = pget(&r->t[t], &x->o[i]), nan_wins = x->sub;
    uint16_t out[2];
    for (int lane = 0; lane < 2; lane++) {
        uint16_t a = h[0][lane], b = h[1][lane];
        if (ftz) {
            a = emu_fp_subnormal(a, f) ? a & 0x8000 : a;
            b = emu_fp_subnormal(b, f) ? b & 0x8000 : b;
        }
        double va = (double)emu_fp_value(a, f), vb = (double)emu_fp_value(b, f);
        if (isnan(va) || isnan(vb)) {
            out[lane] = (isnan(va) && isnan(vb)) || nan_wins ? 0x7fff : isnan(va) ? b : a;
            continue;
        }
        int a_first = va < vb || (va == vb && (a & 0x8000)); /* a is the lower (-0 below +0) */
        out[lane] = want_min == a_first ? a : b;
    }
    return dst(r, t, &x->o[0], (uint32_t)out[1] << 16 | out[0]);
}

/* FRND d, a (.F64: register pairs): to an integral value of the same type,
 * to nearest even or as .TRUNC, .FLOOR, .CEIL say; a NaN gives the
 * canonical NaN; .FTZ flushes a subnormal input (to a signed 0). */
static int do_frnd(struct run *r, uint32_t t, const struct sinst *x)
{
    if (x->nops != 2)
        return stop(r, EMU_PTX_FAULT, "FRND form not covered");
    double v;
    if (x->dt == T_F64) {
        if (dsrc(r, t, &x->o[1], &v) < 0)
            return -1;
    } else {
        float f;
        if (fsrc(r, t, &x->o[1], &f) < 0)
            return -1;
        if ((x->mods & M_FTZ) && fpclassify(f) == FP_SUBNORMAL)
            f = copysignf(0, f);
        v = f;
    }
    v = x->sub == R_RZ ? trunc(v) : x->sub == R_RM ? floor(v) : x->sub == R_RP ? ceil(v) : nearbyint(v);
    if (x->dt == T_F64) {
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        if (isnan(v))
            bits = 0x7fffffffffffffffull;
        uint32_t w[2] = { (uint32_t)bits, (uint32_t)(bits >> 32) };
        return dstn(r, t, &x->o[0], w, 2);
    }
    return dst(r, t, &x->o[0], isnan(v) ? 0x7fffffffu : w32((float)v));
}

/* I2F: an integer (32 or 64 bits) to a float, rounded as the mode says. */
static int do_i2f(struct run *r, uint32_t t, const struct sinst *x)
{
    const struct sop *o = x->o;
    if (x->nops != 2)
        return stop(r, EMU_PTX_FAULT, "I2F form not covered");
    long double v;
    if (x->st == T_S64 || x->st == T_U64) {
        uint64_t w;
        if (src64(r, t, &o[1], &w) < 0)
            return -1;
        v = x->st == T_S64 ? (long double)(int64_t)w : (long double)w;
    } else {
        uint32_t w;
        if (src(r, t, &o[1], &w) < 0)
            return -1;
        v = x->st == T_S32 ? (long double)(int32_t)w : (long double)w;
    }
    return conv_dst(r, t, &o[0], x->dt, emu_fp_bits(v, fp_of(x->dt), x->sub, 0));
}

/* F2I: a float to an integer, rounded as the mode says, saturating; NaN
 * gives 0 (32 bits) or 0x8000000000000000 (64 bits, as CUDA's
 * __half2ll_rz and __half2ull_rz document). */
static int do_f2i(struct run *r, uint32_t t, const struct sinst *x)
{
    long double f;
    if (x->nops != 2 || conv_src(r, t, &x->o[1], x->st, &f) < 0)
        return x->nops != 2 ? stop(r, EMU_PTX_FAULT, "F2I form not covered") : -1;
    if ((x->mods & M_FTZ) && subnormal_of(f, x->st))
        f = 0; /* .FTZ: a subnormal source reads as zero */
    long double v = x->sub == R_RZ ? truncl(f) : x->sub == R_RM ? floorl(f) : x->sub == R_RP ? ceill(f) : nearbyintl(f);
    uint64_t w;
    if (x->dt == T_S64 || x->dt == T_U64) {
        if (isnan(v))
            w = 0x8000000000000000ull;
        else if (x->dt == T_U64)
            w = v <= 0 ? 0 : v >= 0x1p64L ? UINT64_MAX : (uint64_t)v;
        else
            w = v < -0x1p63L ? (uint64_t)INT64_MIN : v >= 0x1p63L ? (uint64_t)INT64_MAX : (uint64_t)(int64_t)v;
    } else if (isnan(v)) {
        w = 0;
    } else if (x->dt == T_U32) {
        w = v <= 0 ? 0 : v >= 4294967295.0L ? 0xffffffffu : (uint32_t)v;
    } else {
        w = v <= -2147483648.0L ? 0x80000000u : v >= 2147483647.0L ? 0x7fffffffu : (uint32_t)(int32_t)v;
    }
    return conv_dst(r, t, &x->o[0], x->dt, w);
}

/* F2F.dst.src: between f16, bf16, f32 and f64, rounded as the mode says
 * (widening is exact); .FTZ flushes subnormal sources and results. An f64
 * NaN result stops the run: which NaN the GPU makes is not known here. */
static int do_f2f(struct run *r, uint32_t t, const struct sinst *x)
{
    long double v;
    if (x->nops != 2 || conv_src(r, t, &x->o[1], x->st, &v) < 0)
        return x->nops != 2 ? stop(r, EMU_PTX_FAULT, "F2F form not covered") : -1;
    int ftz = (x->mods & M_FTZ) != 0;
    if (ftz && subnormal_of(v, x->st))
        v = copysignl(0, v);
    if (isnan(v) && x->dt == T_F64)
        return stop(r, EMU_PTX_UNSUPPORTED, "F2F of a NaN to f64 not covered");
    return conv_dst(r, t, &x->o[0], x->dt, emu_fp_bits(v, fp_of(x->dt), x->sub, ftz));
}

static int do_atom(struct run *r, uint32_t t, const struct sinst *x)
{
    /* ATOMG.E.ADD.STRONG.GPU Pd, Rd, [addr], Rsrc [, Rsrc2]; RED.E.ADD [addr], Rsrc */
    unsigned i = 0;
    if (x->op == X_ATOM && i < x->nops && is_pred(&x->o[i]))
        i++;
    const struct sop *d = x->op == X_ATOM ? &x->o[i++] : NULL;
    if (i + 2 > x->nops)
        return stop(r, EMU_PTX_FAULT, "atomic with %u operands", x->nops);
    uint64_t a, b = 0, c = 0, old = 0, nw;
    if (addr_of(r, t, x, &x->o[i], &a) < 0)
        return -1;
    int wide = x->bytes == 8;
    if ((wide ? src64(r, t, &x->o[i + 1], &b) : src(r, t, &x->o[i + 1], (uint32_t *)&b)) < 0)
        return -1;
    if (!wide)
        b = (uint32_t)b;
    if (x->sub == A_CAS) {
        if (i + 3 > x->nops)
            return stop(r, EMU_PTX_FAULT, "CAS without its new value");
        uint32_t c32 = 0;
        if ((wide ? src64(r, t, &x->o[i + 2], &c) : src(r, t, &x->o[i + 2], &c32)) < 0)
            return -1;
        if (!wide)
            c = c32;
    }
    if (mem_read(r, x->space, a, x->bytes, &old) < 0)
        return -1;
    int sign = (x->mods & M_S) != 0;
    int64_t so = wide ? (int64_t)old : (int64_t)(int32_t)old, sb = wide ? (int64_t)b : (int64_t)(int32_t)b;
    switch (x->sub) {
    case A_ADD: nw = old + b; break;
    case A_MIN: nw = sign ? (so < sb ? old : b) : (old < b ? old : b); break;
    case A_MAX: nw = sign ? (so > sb ? old : b) : (old > b ? old : b); break;
    case A_EXCH: nw = b; break;
    case A_CAS: nw = old == b ? c : old; break;
    case A_AND: nw = old & b; break;
    case A_OR: nw = old | b; break;
    case A_XOR: nw = old ^ b; break;
    case A_INC: nw = (uint32_t)old >= (uint32_t)b ? 0 : old + 1; break;
    case A_DEC: nw = old == 0 || (uint32_t)old > (uint32_t)b ? b : old - 1; break;
    default: return stop(r, EMU_PTX_UNSUPPORTED, "atomic kind not covered");
    }
    if (mem_write(r, x->space, a, x->bytes, &nw) < 0)
        return -1;
    if (d) {
        uint32_t w[2] = { (uint32_t)old, (uint32_t)(old >> 32) };
        return dstn(r, t, d, w, wide ? 2 : 1);
    }
    return 0;
}

/* One instruction of thread t (not a warp operation or barrier). */
static int exec1(struct run *r, uint32_t t, const struct sinst *x)
{
    struct thr *th = &r->t[t];
    const struct sop *o = x->o;
    unsigned n = x->nops;
    uint32_t a, b, c;
    uint64_t A, C;
    switch (x->op) {
    case X_NOP: return 0;
    case X_MOV:
        if (n < 2 || src(r, t, &o[1], &a) < 0)
            return n < 2 ? stop(r, EMU_PTX_FAULT, "MOV with %u operands", n) : -1;
        return dst(r, t, &o[0], a);
    case X_BMOV:
        /* BMOV.32 Bd, src, or BMOV.32[.CLEAR] Rd, Bs (then Bs is 0). BSSY,
         * BSYNC and BREAK have no effect here (a warp's lanes run together
         * to where their paths join), so a barrier holds only what BMOV put
         * there: the spill and reload around nested regions round-trips. */
        if (n == 2 && o[0].kind == O_B && !x->sub) {
            if (src(r, t, &o[1], &a) < 0)
                return -1;
            th->b[o[0].reg] = a;
            return 0;
        }
        if (n != 2 || o[1].kind != O_B)
            return stop(r, EMU_PTX_FAULT, "BMOV form not covered");
        a = th->b[o[1].reg];
        if (x->sub)
            th->b[o[1].reg] = 0;
        return dst(r, t, &o[0], a);
    case X_I2F: return do_i2f(r, t, x);
    case X_F2I: return do_f2i(r, t, x);
    case X_F2F: return do_f2f(r, t, x);
    case X_HOP: return do_hop(r, t, x);
    case X_HMNMX2: return do_hmnmx2(r, t, x);
    case X_FRND: return do_frnd(r, t, x);
    case X_MUFU: {
        /* MUFU.RCP d, a: 1 / a, rounded to nearest (the GPU's is within an
         * ulp; the code that uses it, a division, corrects the estimate) */
        float f;
        if (n != 2 || fsrc(r, t, &o[1], &f) < 0)
            return n != 2 ? stop(r, EMU_PTX_FAULT, "MUFU form not covered") : -1;
        return dst(r, t, &o[0], w32(1.0f / f));
    }
    case X_F2FP: {
        /* F2FP.{BF16,F16}.F32.PACK_AB[.RZ] d, a, b: a in the high half, b in the low */
        float fa, fb;
        if (n != 3 || fsrc(r, t, &o[1], &fa) < 0 || fsrc(r, t, &o[2], &fb) < 0)
            return n != 3 ? stop(r, EMU_PTX_FAULT, "F2FP form not covered") : -1;
        int f = fp_of(x->dt);
        uint64_t ha = emu_fp_bits(fa, f, x->sub, 0), hb = emu_fp_bits(fb, f, x->sub, 0);
        return dst(r, t, &o[0], (uint32_t)(ha << 16 | hb));
    }
    case X_S2R:
        if (n != 2 || o[1].kind != O_SREG)
            return stop(r, EMU_PTX_FAULT, "S2R without a special register");
        return dst(r, t, &o[0], sreg(r, t, o[1].reg));
    case X_CS2R: {
        if (n != 2 || o[1].kind != O_SRZ)
            return stop(r, EMU_PTX_UNSUPPORTED, "CS2R of a special register not covered");
        uint32_t z[2] = { 0, 0 };
        return dstn(r, t, &o[0], z, 2);
    }
    case X_LDC: {
        if (n != 2 || o[1].kind != O_CONST)
            return stop(r, EMU_PTX_FAULT, "LDC without a constant");
        int64_t off = o[1].imm;
        if (o[1].ireg != RZ)
            off += (int32_t)th->r[o[1].ireg];
        if (o[1].ureg != URZ)
            off += (int32_t)th->ur[o[1].ureg];
        uint32_t by = x->bytes & 0x7f;
        if (by > 8)
            return stop(r, EMU_PTX_UNSUPPORTED, "LDC.128 not covered");
        if (cbank(r, o[1].reg, off, by, &A) < 0)
            return -1;
        if ((x->bytes & 0x80) && by < 4)
            A = (uint64_t)(uint32_t)(int32_t)((int64_t)(A << (64 - 8 * by)) >> (64 - 8 * by));
        uint32_t w[2] = { (uint32_t)A, (uint32_t)(A >> 32) };
        return dstn(r, t, &o[0], w, by == 8 ? 2 : 1);
    }
    case X_IMAD: {
        /* IMAD[.X] d, a, b, c[, Pin]; IMAD.WIDE[.U32] d, [Pout,] a, b, c; IMAD.HI[.U32] d, [Pout,] a, b, c[, Pin] */
        unsigned i = 1;
        const struct sop *pout = NULL;
        if (n > 1 && is_pred(&o[1]) && (x->mods & (M_WIDE | M_HI)))
            pout = &o[i++];
        if (i + 3 > n)
            return stop(r, EMU_PTX_FAULT, "IMAD with %u operands", n);
        if (src(r, t, &o[i], &a) < 0 || src(r, t, &o[i + 1], &b) < 0)
            return -1;
        uint32_t cin = 0;
        if (x->mods & M_X) {
            if (i + 4 > n || !is_pred(&o[i + 3]))
                return stop(r, EMU_PTX_FAULT, "IMAD.X without its carry");
            cin = (uint32_t)pget(th, &o[i + 3]);
        }
        int u = (x->mods & M_U32) != 0;
        if (x->mods & M_WIDE) {
            if (src64(r, t, &o[i + 2], &C) < 0)
                return -1;
            uint64_t prod = u ? (uint64_t)a * b : (uint64_t)((int64_t)(int32_t)a * (int64_t)(int32_t)b);
            uint64_t s = prod + C + cin;
            uint32_t w[2] = { (uint32_t)s, (uint32_t)(s >> 32) };
            if (pout && pset(r, t, pout, s < prod || (cin && s == prod)) < 0)
                return -1;
            return dstn(r, t, &o[0], w, 2);
        }
        if (src(r, t, &o[i + 2], &c) < 0)
            return -1;
        if (x->mods & M_HI) {
            uint64_t prod = u ? (uint64_t)a * b : (uint64_t)((int64_t)(int32_t)a * (int64_t)(int32_t)b);
            uint64_t s = (prod >> 32) + c + cin;
            if (pout && pset(r, t, pout, s >> 32 != 0) < 0)
                return -1;
            return dst(r, t, &o[0], (uint32_t)s);
        }
        return dst(r, t, &o[0], a * b + c + cin);
    }
    case X_IADD3: {
        /* IADD3 d, [P0, [P1,]] a, b, c; IADD3.X d, [P0, [P1,]] a, b, c, Pin0, Pin1 */
        unsigned i = 1, np = 0, trail = 0;
        const struct sop *po[2] = { NULL, NULL };
        while ((x->mods & M_X) && trail < 2 && trail < n && is_pred(&o[n - 1 - trail]))
            trail++;
        while (i < n && is_pred(&o[i]) && np < 2 && n - i - trail > 3)
            po[np++] = &o[i++];
        if (i + 3 > n)
            return stop(r, EMU_PTX_FAULT, "IADD3 with %u operands", n);
        uint64_t s = 0;
        for (unsigned j = 0; j < 3; j++) {
            const struct sop *q = &o[i + j];
            struct sop p = *q;
            p.neg = 0;
            uint32_t v;
            if (src(r, t, &p, &v) < 0)
                return -1;
            if (q->neg && !(x->mods & M_X))
                s += (uint64_t)(uint32_t)~v + 1; /* -v: ~v + 1, whose carry out is the borrow's complement */
            else if (q->neg)
                s += (uint32_t)~v;
            else
                s += v;
        }
        if (x->mods & M_X)
            for (unsigned j = i + 3; j < n && j < i + 5; j++) {
                if (!is_pred(&o[j]))
                    return stop(r, EMU_PTX_FAULT, "IADD3.X carry is not a predicate");
                s += (uint64_t)pget(th, &o[j]);
            }
        uint64_t carry = s >> 32;
        if (po[0] && pset(r, t, po[0], carry >= 1) < 0)
            return -1;
        if (po[1] && pset(r, t, po[1], carry >= 2) < 0)
            return -1;
        return dst(r, t, &o[0], (uint32_t)s);
    }
    case X_VIADD:
        if (n < 3 || src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &b) < 0)
            return n < 3 ? stop(r, EMU_PTX_FAULT, "VIADD with %u operands", n) : -1;
        return dst(r, t, &o[0], a + b);
    case X_LEA: {
        /* LEA d, [Pout,] a, b, s: (a << s) + b; LEA.HI[.X][.SX32] d, [Pout,] a, b, [c,] s[, Pin]:
         * b + the high word of ({c:a} << s) (+ carry) */
        unsigned i = 1;
        const struct sop *pout = NULL;
        if (n > 1 && is_pred(&o[1]))
            pout = &o[i++];
        unsigned need = (x->mods & M_HI) && !(x->mods & M_SX32) ? 4 : 3;
        if (i + need > n)
            return stop(r, EMU_PTX_FAULT, "LEA with %u operands", n);
        uint32_t s;
        if (src(r, t, &o[i], &a) < 0 || src(r, t, &o[i + 1], &b) < 0 || src(r, t, &o[i + need - 1], &s) < 0)
            return -1;
        s &= 31;
        uint32_t cin = 0;
        if (x->mods & M_X) {
            if (i + need >= n || !is_pred(&o[i + need]))
                return stop(r, EMU_PTX_FAULT, "LEA.X without its carry");
            cin = (uint32_t)pget(th, &o[i + need]);
        }
        uint32_t v;
        if (x->mods & M_HI) {
            if (x->mods & M_SX32)
                c = (int32_t)a < 0 ? 0xffffffffu : 0;
            else if (src(r, t, &o[i + 2], &c) < 0)
                return -1;
            v = (uint32_t)((((uint64_t)c << 32 | a) << s) >> 32);
        } else {
            v = a << s;
        }
        uint64_t sum = (uint64_t)v + b + cin;
        if (pout && pset(r, t, pout, sum >> 32 != 0) < 0)
            return -1;
        return dst(r, t, &o[0], (uint32_t)sum);
    }
    case X_SHF: {
        /* SHF.{L,R}.{U32,S32,U64,S64}[.HI] d, lo, s, hi */
        if (n != 4 || !(x->mods & (M_L | M_R)))
            return stop(r, EMU_PTX_FAULT, "SHF form not covered");
        uint32_t s;
        if (src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &s) < 0 || src(r, t, &o[3], &c) < 0)
            return -1;
        uint32_t lim = x->mods & M_64 ? 64 : 32;
        if (s > lim)
            s = lim;
        uint64_t v = (uint64_t)c << 32 | a;
        if (x->mods & M_L)
            v = s >= 64 ? 0 : v << s;
        else if (x->mods & M_S)
            v = (uint64_t)((int64_t)v >> (s >= 64 ? 63 : s));
        else
            v = s >= 64 ? 0 : v >> s;
        return dst(r, t, &o[0], x->mods & M_HI ? (uint32_t)(v >> 32) : (uint32_t)v);
    }
    case X_LOP3: {
        /* LOP3.LUT [Pd,] d, a, b, c, lut, Pin */
        unsigned i = 0;
        const struct sop *pd = NULL;
        if (n > 0 && is_pred(&o[0]))
            pd = &o[i++];
        if (i + 5 > n || o[i + 4].kind != O_IMM)
            return stop(r, EMU_PTX_FAULT, "LOP3 form not covered");
        if (src(r, t, &o[i + 1], &a) < 0 || src(r, t, &o[i + 2], &b) < 0 || src(r, t, &o[i + 3], &c) < 0)
            return -1;
        uint32_t v = lut3(a, b, c, (uint32_t)o[i + 4].val & 0xff);
        if (pd && pset(r, t, pd, v != 0) < 0)
            return -1;
        return dst(r, t, &o[i], v);
    }
    case X_PLOP3: {
        /* PLOP3.LUT Pd1, Pd2, a, b, c, lut1, lut2 */
        if (n != 7 || o[5].kind != O_IMM || o[6].kind != O_IMM || !is_pred(&o[2]) || !is_pred(&o[3]) || !is_pred(&o[4]))
            return stop(r, EMU_PTX_FAULT, "PLOP3 form not covered");
        uint32_t pa = pget(th, &o[2]) ? ~0u : 0, pb = pget(th, &o[3]) ? ~0u : 0, pc = pget(th, &o[4]) ? ~0u : 0;
        if (pset(r, t, &o[0], lut3(pa, pb, pc, (uint32_t)o[5].val & 0xff) & 1) < 0)
            return -1;
        return pset(r, t, &o[1], lut3(pa, pb, pc, (uint32_t)o[6].val & 0xff) & 1);
    }
    case X_SEL:
    case X_FSEL:
        if (n != 4 || !is_pred(&o[3]))
            return stop(r, EMU_PTX_FAULT, "SEL form not covered");
        if (x->op == X_FSEL) {
            float fa, fb;
            if (fsrc(r, t, &o[1], &fa) < 0 || fsrc(r, t, &o[2], &fb) < 0)
                return -1;
            return dst(r, t, &o[0], w32(pget(th, &o[3]) ? fa : fb));
        }
        if (src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &b) < 0)
            return -1;
        return dst(r, t, &o[0], pget(th, &o[3]) ? a : b);
    case X_ISETP:
    case X_DSETP:
    case X_FSETP: {
        /* ISETP.cmp[.U32].{AND,OR,XOR}[.EX] Pd1, Pd2, a, b, Pc[, Plow] */
        int ex = (x->mods & M_EX) != 0;
        if (n != (unsigned)(5 + ex) || !is_pred(&o[0]) || !is_pred(&o[1]) || !is_pred(&o[4]) || (ex && !is_pred(&o[5])))
            return stop(r, EMU_PTX_FAULT, "SETP form not covered");
        int cmp = x->sub - 1, v;
        if (x->op == X_FSETP) {
            float fa, fb;
            if (fsrc(r, t, &o[2], &fa) < 0 || fsrc(r, t, &o[3], &fb) < 0)
                return -1;
            v = fcmp(cmp, fa, fb);
        } else if (x->op == X_DSETP) {
            double da, db;
            if (dsrc(r, t, &o[2], &da) < 0 || dsrc(r, t, &o[3], &db) < 0)
                return -1;
            v = fcmp(cmp, da, db);
        } else {
            if (src(r, t, &o[2], &a) < 0 || src(r, t, &o[3], &b) < 0)
                return -1;
            int sign = !(x->mods & M_U32);
            if (ex) {
                /* the high words of a 64-bit compare whose low words gave Plow */
                int low = pget(th, &o[5]), eq = a == b;
                if (cmp == C_EQ)
                    v = eq && low;
                else if (cmp == C_NE)
                    v = !eq || low;
                else if (cmp == C_T || cmp == C_F)
                    v = cmp == C_T;
                else
                    v = icmp(cmp == C_LE ? C_LT : cmp == C_GE ? C_GT : cmp, sign, a, b) || (eq && low);
            } else {
                v = icmp(cmp, sign, a, b);
            }
        }
        int pc = pget(th, &o[4]);
        int r1, r2;
        if (x->mods & M_OR)
            r1 = v || pc, r2 = !v || pc;
        else if (x->mods & M_XOR)
            r1 = v != pc, r2 = (!v) != pc;
        else
            r1 = v && pc, r2 = !v && pc;
        if (pset(r, t, &o[0], r1) < 0)
            return -1;
        return pset(r, t, &o[1], r2);
    }
    case X_PRMT: {
        /* PRMT d, a, sel, b: bytes of {b:a} picked by sel's nibbles (bit 3: replicate the sign) */
        if (n != 4 || src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &b) < 0 || src(r, t, &o[3], &c) < 0)
            return n != 4 ? stop(r, EMU_PTX_FAULT, "PRMT form not covered") : -1;
        uint64_t v = (uint64_t)c << 32 | a;
        uint32_t out = 0;
        for (int i = 0; i < 4; i++) {
            uint32_t s = b >> (4 * i) & 0xf;
            uint32_t byte = (uint32_t)(v >> (8 * (s & 7))) & 0xff;
            if (s & 8)
                byte = byte & 0x80 ? 0xff : 0;
            out |= byte << (8 * i);
        }
        return dst(r, t, &o[0], out);
    }
    case X_POPC:
        if (n != 2 || src(r, t, &o[1], &a) < 0)
            return n != 2 ? stop(r, EMU_PTX_FAULT, "POPC form not covered") : -1;
        return dst(r, t, &o[0], (uint32_t)__builtin_popcount(a));
    case X_FLO: {
        if (n != 2 || src(r, t, &o[1], &a) < 0)
            return n != 2 ? stop(r, EMU_PTX_FAULT, "FLO form not covered") : -1;
        if (!(x->mods & M_U32))
            a = (int32_t)a < 0 ? ~a : a; /* signed: the highest bit unlike the sign */
        uint32_t v = a ? 31u - (uint32_t)__builtin_clz(a) : 0xffffffffu;
        if (x->mods & M_SH)
            v = a ? (uint32_t)__builtin_clz(a) : 0xffffffffu;
        return dst(r, t, &o[0], v);
    }
    case X_LD: {
        if (n != 2)
            return stop(r, EMU_PTX_FAULT, "load with %u operands", n);
        uint64_t ad;
        if (addr_of(r, t, x, &o[1], &ad) < 0)
            return -1;
        uint32_t by = x->bytes & 0x7f, w[4] = { 0, 0, 0, 0 };
        if (mem_read(r, x->space, ad, by, w) < 0)
            return -1;
        if (x->bytes & 0x80)
            w[0] = by == 1 ? (uint32_t)(int32_t)(int8_t)w[0] : (uint32_t)(int32_t)(int16_t)w[0];
        return dstn(r, t, &o[0], w, by <= 4 ? 1 : by / 4);
    }
    case X_ST: {
        if (n != 2 || (o[1].kind != O_R && o[1].kind != O_UR))
            return stop(r, EMU_PTX_FAULT, "store form not covered");
        uint64_t ad;
        if (addr_of(r, t, x, &o[0], &ad) < 0)
            return -1;
        uint32_t by = x->bytes & 0x7f, w[4] = { 0, 0, 0, 0 }, z = o[1].kind == O_R ? RZ : URZ;
        unsigned nw = by <= 4 ? 1 : by / 4;
        const uint32_t *f = o[1].kind == O_R ? th->r : th->ur;
        if (o[1].reg != z) {
            if (o[1].reg + nw > z)
                return stop(r, EMU_PTX_FAULT, "register group past the last register");
            memcpy(w, f + o[1].reg, nw * 4);
        }
        return mem_write(r, x->space, ad, by, w);
    }
    case X_ATOM:
    case X_RED: return do_atom(r, t, x);
    case X_FADD:
    case X_FMUL:
    case X_FMNMX:
    case X_FFMA: {
        float fa, fb, fc = 0, v;
        if (n < 3 || fsrc(r, t, &o[1], &fa) < 0 || fsrc(r, t, &o[2], &fb) < 0)
            return n < 3 ? stop(r, EMU_PTX_FAULT, "float op with %u operands", n) : -1;
        if (x->op == X_FFMA) {
            if (n != 4 || fsrc(r, t, &o[3], &fc) < 0)
                return n != 4 ? stop(r, EMU_PTX_FAULT, "FFMA with %u operands", n) : -1;
            v = fmaf(fa, fb, fc);
        } else if (x->op == X_FADD) {
            v = fa + fb;
        } else if (x->op == X_FMUL) {
            v = fa * fb;
        } else {
            /* FMNMX d, a, b, Pmin: min if Pmin, else max; NaN loses */
            if (n != 4 || !is_pred(&o[3]))
                return stop(r, EMU_PTX_FAULT, "FMNMX form not covered");
            v = pget(th, &o[3]) ? fminf(fa, fb) : fmaxf(fa, fb);
        }
        if ((x->mods & M_FTZ) && fpclassify(v) == FP_SUBNORMAL)
            v = copysignf(0, v);
        return dst(r, t, &o[0], w32(v));
    }
    case X_DADD:
    case X_DMUL:
    case X_DFMA: {
        /* D{ADD,MUL} d, a, b; DFMA d, a, b, c: register pairs, round to nearest */
        double da, db, dc = 0, v;
        if (n != (x->op == X_DFMA ? 4u : 3u))
            return stop(r, EMU_PTX_FAULT, "double op with %u operands", n);
        if (dsrc(r, t, &o[1], &da) < 0 || dsrc(r, t, &o[2], &db) < 0 || (n == 4 && dsrc(r, t, &o[3], &dc) < 0))
            return -1;
        v = x->op == X_DADD ? da + db : x->op == X_DMUL ? da * db : fma(da, db, dc);
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        uint32_t w[2] = { (uint32_t)bits, (uint32_t)(bits >> 32) };
        return dstn(r, t, &o[0], w, 2);
    }
    case X_IMNMX: {
        /* VIMNMX[.U32] d, a, b, Pmin: the minimum if Pmin, else the maximum */
        if (n != 4 || !is_pred(&o[3]) || src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &b) < 0)
            return n != 4 || !is_pred(&o[3]) ? stop(r, EMU_PTX_FAULT, "VIMNMX form not covered") : -1;
        int lt = x->mods & M_U32 ? a < b : (int32_t)a < (int32_t)b;
        return dst(r, t, &o[0], pget(th, &o[3]) == lt ? a : b);
    }
    case X_BREV: {
        if (n != 2 || src(r, t, &o[1], &a) < 0)
            return n != 2 ? stop(r, EMU_PTX_FAULT, "BREV form not covered") : -1;
        uint32_t v = 0;
        for (int i = 0; i < 32; i++)
            v |= (a >> i & 1) << (31 - i);
        return dst(r, t, &o[0], v);
    }
    case X_P2R: {
        /* P2R d, PR, b, mask: b with the bits of mask taken from P0..P6 */
        if (n != 4 || o[1].kind != O_PR || src(r, t, &o[2], &b) < 0 || src(r, t, &o[3], &c) < 0)
            return n != 4 || o[1].kind != O_PR ? stop(r, EMU_PTX_FAULT, "P2R form not covered") : -1;
        uint32_t pr = 0;
        for (int i = 0; i < 7; i++)
            pr |= (uint32_t)(o[1].reg ? th->up[i] : th->p[i]) << i;
        return dst(r, t, &o[0], (b & ~c) | (pr & c));
    }
    case X_R2P: {
        /* R2P PR, a, mask: P0..P6 from a's bits, where mask has them */
        if (n != 3 || o[0].kind != O_PR || src(r, t, &o[1], &a) < 0 || src(r, t, &o[2], &c) < 0)
            return n != 3 || o[0].kind != O_PR ? stop(r, EMU_PTX_FAULT, "R2P form not covered") : -1;
        for (int i = 0; i < 7; i++)
            if (c >> i & 1) {
                if (o[0].reg)
                    th->up[i] = (uint8_t)(a >> i & 1);
                else
                    th->p[i] = (uint8_t)(a >> i & 1);
            }
        return 0;
    }
    default: return stop(r, EMU_PTX_UNSUPPORTED, "SASS instruction not covered");
    }
}

static int guard_ok(const struct thr *th, const struct sinst *x)
{
    if (x->gkind == O_NONE)
        return 1;
    int v = x->greg == PT ? 1 : x->gkind == O_P ? th->p[x->greg] : th->up[x->greg];
    return x->gneg ? !v : v;
}

/* One instruction of thread t: 1 if it went on, 0 if it now waits at a
 * barrier or has exited, -1 if the run stops. Warp operations are done by
 * warp_op for all lanes at once. */
static int step(struct run *r, uint32_t t)
{
    const struct emu_sass_prog *g = r->g;
    struct thr *th = &r->t[t];
    uint32_t pc = r->pc[t];
    if (pc >= g->n) {
        r->state[t] = TS_EXIT; /* ran off the end: as EXIT */
        return 0;
    }
    if (++r->steps > r->l->max_steps)
        return stop(r, EMU_PTX_STEPS, "more than %llu instructions", (unsigned long long)r->l->max_steps);
    const struct sinst *x = &g->x[pc];
    if (!guard_ok(th, x)) {
        r->pc[t] = pc + 1;
        return 1;
    }
    switch (x->op) {
    case X_EXIT:
        /* EXIT [P]: a predicate operand must hold too */
        if (x->nops >= 1 && is_pred(&x->o[0]) && !pget(th, &x->o[0])) {
            r->pc[t] = pc + 1;
            return 1;
        }
        r->state[t] = TS_EXIT;
        return 0;
    case X_BRA: {
        /* BRA [P,] `(label); BRA.DIV: taken only for a diverged warp, never
         * here (the lanes of a warp run together, below) */
        int take = !(x->mods & M_DIV);
        if (x->nops >= 2 && is_pred(&x->o[0]))
            take = take && pget(th, &x->o[0]);
        r->pc[t] = take ? x->target : pc + 1;
        return 1;
    }
    case X_BRX: {
        uint64_t to = (uint64_t)(int64_t)(int32_t)th->r[x->o[0].reg == RZ ? 0 : x->o[0].reg] + x->o[1].val +
                      16ull * (pc + 1);
        if (x->o[0].reg == RZ)
            to = x->o[1].val + 16ull * (pc + 1);
        for (uint32_t i = 0; i < x->o[2].val && x->target + i < g->nbrx; i++)
            if (to % 16 == 0 && to / 16 == g->brx[x->target + i]) {
                r->pc[t] = (uint32_t)(to / 16);
                return 1;
            }
        return stop(r, EMU_PTX_UNSUPPORTED, "BRX to 0x%llx, not one of its listed targets", (unsigned long long)to);
    }
    case X_BAR: r->state[t] = TS_BAR; return 0;
    case X_BAD: return stop(r, EMU_PTX_UNSUPPORTED, "SASS %s (instruction %u) not covered", x->name, pc);
    default:
        if (exec1(r, t, x) < 0)
            return -1;
        r->pc[t] = pc + 1;
        return 1;
    }
}

static int is_warp_op(const struct sinst *x)
{
    return x->op == X_SHFL || x->op == X_VOTE || x->op == X_VOTEU || x->op == X_WARPSYNC;
}

/* The warp operation at pc for the lanes in `at` (those whose guard holds):
 * every live lane of the warp must be there. */
static int warp_op(struct run *r, uint32_t w0, uint32_t w1, uint32_t pc, uint32_t at)
{
    const struct sinst *x = &r->g->x[pc];
    const struct sop *o = x->o;
    uint32_t live = 0, vals[32] = { 0 }, ballot = 0;
    for (uint32_t t = w0; t < w1; t++)
        if (r->state[t] != TS_EXIT)
            live |= 1u << (t - w0);
    for (uint32_t t = w0; t < w1; t++) {
        uint32_t lane = t - w0;
        if (!(at >> lane & 1))
            continue;
        if (!guard_ok(&r->t[t], x)) {
            live &= ~(1u << lane);
            at &= ~(1u << lane);
            r->pc[t] = pc + 1;
            continue;
        }
    }
    if ((live & ~at) != 0) {
        /* a lane elsewhere: its mask would say whether it takes part */
        for (uint32_t t = w0; t < w1; t++)
            if ((live & ~at) >> (t - w0) & 1 && r->pc[t] != pc + 1)
                return stop(r, EMU_PTX_UNSUPPORTED, "lanes of a warp at different warp operations");
        live = at;
    }
    for (uint32_t t = w0; t < w1; t++) {
        uint32_t lane = t - w0;
        if (!(at >> lane & 1))
            continue;
        if (x->op == X_SHFL) {
            /* SHFL.mode Pout, d, a, b, c */
            if (x->nops != 5 || src(r, t, &o[2], &vals[lane]) < 0)
                return x->nops != 5 ? stop(r, EMU_PTX_FAULT, "SHFL with %u operands", x->nops) : -1;
        } else if (x->op == X_VOTE || x->op == X_VOTEU) {
            /* VOTE.mode [Rd,] Pd, Pin: the last operand is the vote */
            if (x->nops < 2 || !is_pred(&o[x->nops - 1]))
                return stop(r, EMU_PTX_FAULT, "VOTE form not covered");
            if (pget(&r->t[t], &o[x->nops - 1]))
                ballot |= 1u << lane;
        }
    }
    for (uint32_t t = w0; t < w1; t++) {
        uint32_t lane = t - w0;
        if (!(at >> lane & 1))
            continue;
        if (x->op == X_SHFL) {
            uint32_t b, c;
            if (src(r, t, &o[3], &b) < 0 || src(r, t, &o[4], &c) < 0)
                return -1;
            int ok;
            uint32_t j = emu_shfl_src(x->sub, lane, b, c, at, &ok);
            if (dst(r, t, &o[1], vals[j]) < 0 || pset(r, t, &o[0], ok) < 0)
                return -1;
        } else if (x->op == X_VOTE || x->op == X_VOTEU) {
            int v = x->sub == V_ALL ? ballot == at : x->sub == V_ANY ? ballot != 0 : (ballot == 0 || ballot == at);
            unsigned i = 0;
            if (o[0].kind == O_R || o[0].kind == O_UR) {
                if (dst(r, t, &o[0], ballot) < 0)
                    return -1;
                i = 1;
            }
            if (i + 1 < x->nops && pset(r, t, &o[i], v) < 0)
                return -1;
        }
        r->pc[t] = pc + 1;
    }
    return 0;
}

/* Run the lanes of a warp together until each waits at a barrier or has
 * exited: at every step the lanes at the lowest instruction address go one
 * instruction on, so lanes that branched apart meet again where their paths
 * join and a warp's stores are all done before its next loads (the exchange
 * through shared memory that code relying on converged warps does). */
static int run_warp(struct run *r, uint32_t w0, uint32_t w1)
{
    for (;;) {
        uint32_t pc = UINT32_MAX, at = 0;
        for (uint32_t t = w0; t < w1; t++)
            if (r->state[t] == TS_RUN && r->pc[t] < pc)
                pc = r->pc[t];
        if (pc == UINT32_MAX)
            return 0;
        for (uint32_t t = w0; t < w1; t++)
            if (r->state[t] == TS_RUN && r->pc[t] == pc)
                at |= 1u << (t - w0);
        if (pc < r->g->n && is_warp_op(&r->g->x[pc])) {
            if (++r->steps > r->l->max_steps)
                return stop(r, EMU_PTX_STEPS, "more than %llu instructions", (unsigned long long)r->l->max_steps);
            if (warp_op(r, w0, w1, pc, at) < 0)
                return -1;
            continue;
        }
        for (uint32_t t = w0; t < w1; t++)
            if (at >> (t - w0) & 1 && step(r, t) < 0)
                return -1;
    }
}

static int run_block(struct run *r)
{
    uint32_t n = r->nthreads;
    memset(r->t, 0, (size_t)n * sizeof *r->t);
    memset(r->pc, 0, n * sizeof *r->pc);
    memset(r->state, TS_RUN, n);
    memset(r->smem, 0, r->smem_bytes);
    for (;;) {
        for (uint32_t w0 = 0; w0 < n; w0 += 32)
            if (run_warp(r, w0, w0 + 32 < n ? w0 + 32 : n) < 0)
                return -1;
        /* every live thread waits at a barrier now: release them */
        int live = 0;
        for (uint32_t t = 0; t < n; t++)
            if (r->state[t] == TS_BAR) {
                r->state[t] = TS_RUN;
                r->pc[t]++;
                live = 1;
            }
        if (!live)
            return 0;
    }
}

enum emu_ptx_result emu_sass_run(const struct emu_sass_prog *g, const struct emu_ptx_launch *l,
                                 const struct emu_ptx_mem *m, char *why, size_t nwhy)
{
    struct run r = { .g = g, .l = l, .m = m, .why = why, .nwhy = nwhy };
    if (why && nwhy)
        why[0] = 0;
    uint64_t nt = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (!g || !nt || nt > 1024 || !l->grid[0] || !l->grid[1] || !l->grid[2]) {
        stop(&r, EMU_PTX_FAULT, "launch shape %ux%ux%u blocks of %ux%ux%u", l->grid[0], l->grid[1], l->grid[2],
             l->block[0], l->block[1], l->block[2]);
        return r.res;
    }
    r.nthreads = (uint32_t)nt;
    uint64_t smem = RESERVED_SMEM + (uint64_t)(g->static_smem + 15) / 16 * 16 + l->dyn_smem;
    if (smem > MAX_SMEM) {
        stop(&r, EMU_PTX_FAULT, "%llu bytes of shared memory", (unsigned long long)smem);
        return r.res;
    }
    r.smem_bytes = (uint32_t)smem;
    r.t = calloc(nt, sizeof *r.t);
    r.pc = calloc(nt, sizeof *r.pc);
    r.state = calloc(nt, 1);
    r.smem = calloc(smem, 1);
    if (!r.t || !r.pc || !r.state || !r.smem) {
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
    free(r.t);
    free(r.pc);
    free(r.state);
    free(r.smem);
    return r.res;
}

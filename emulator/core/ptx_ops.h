/* Static counts of PTX instruction classes in a kernel (ptx_ops.c). */
#ifndef MAYA_PTX_OPS_H
#define MAYA_PTX_OPS_H

#include <stddef.h>
#include <stdint.h>

struct emu_ptx_ops {
    uint32_t insts;              /* every instruction of the body */
    uint32_t mma;                /* mma / wgmma / tcgen05.mma (tensor cores) */
    uint32_t ld_global, st_global; /* and generic (no state space) */
    uint32_t ld_shared, st_shared; /* including ldmatrix / stmatrix */
    uint32_t cp_async;           /* cp.async global -> shared */
    uint32_t tma;                /* cp.async.bulk.tensor */
    uint32_t ex2;                /* exponentials (softmax) */
    uint32_t fma;
    uint32_t shfl;               /* warp shuffles (reductions) */
    uint32_t bar;                /* barriers */
    uint32_t atom;               /* atomics and reductions to memory */
};

/* The feature names the counts are traced under ("ptx.<class>"), in the
 * order of struct emu_ptx_ops's fields. */
#define EMU_PTX_OP_FIELDS(X) \
    X(insts) X(mma) X(ld_global) X(st_global) X(ld_shared) X(st_shared) \
    X(cp_async) X(tma) X(ex2) X(fma) X(shfl) X(bar) X(atom)

/* Count the instructions of kernel `entry` in PTX text (a .ptx file or a
 * cubin's .nv_debug_ptx_txt section: lines end with '\n' or '\0').
 * Returns 0, or -1 when the text has no such entry (out is zeroed). */
int emu_ptx_op_counts(const char *text, size_t bytes, const char *entry, struct emu_ptx_ops *out);

#endif

/* Reading a kernel's work summary and a launch's pointer extents out of
 * trace records (common/kwork.c); the layout is in trace_format.h. */
#ifndef MAYA_KWORK_H
#define MAYA_KWORK_H

#include <stddef.h>

#include "maya/trace_format.h"

/* The work summary of a KERNEL record, or NULL when it has none. A summary
 * that is not well formed (sizes, operand indexes, ops, classes) gives
 * NULL too, with *why (if given) saying what is wrong. */
const struct maya_kwork *maya_kernel_work(const struct maya_rec_kernel *k, const char **why);
const struct maya_kexpr *maya_kwork_exprs(const struct maya_kwork *w);
const struct maya_kterm *maya_kwork_terms(const struct maya_kwork *w);
/* The bytes a summary's header says it holds: itself, its expressions, its terms. */
uint64_t maya_kwork_bytes(const struct maya_kwork *w);

/* The extents a LAUNCH record carries after its parameters (*n of them),
 * or NULL when it has none or they do not fit in the record. */
const struct maya_kextent *maya_launch_extents(const struct maya_rec_launch *l, uint32_t *n);

/* Which operands an expression op reads: bit 0 a, bit 1 b, bit 2 c (the
 * others are not expressions: 0 for an op that is not one). */
unsigned maya_kx_operands(unsigned op);
/* Whether a (enum maya_kx_cmp c) b holds. */
int maya_kx_compare(int c, double a, double b);

/* Name of a term class ("ld_global", "mma_fp16", ...), of an expression op. */
const char *maya_kw_class_name(unsigned cls);
const char *maya_kx_op_name(unsigned op);

/* Expression i of a summary as text ("trip(tid.x<param@16 step ntid.x)"),
 * cut with "..." when deep; -1 if it did not fit in buf (still terminated). */
int maya_kwork_expr_text(const struct maya_kwork *w, uint32_t i, char *buf, size_t size);

#endif

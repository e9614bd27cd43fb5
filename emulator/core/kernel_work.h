/* The work a kernel does, read from its PTX (kernel_work.c): the summary
 * the trace's KERNEL record carries (struct maya_kwork and what follows it,
 * include/maya/trace_format.h). */
#ifndef MAYA_KERNEL_WORK_H
#define MAYA_KERNEL_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "maya/trace_format.h"

struct emu_ptx_kernel;

/* The version of the analysis (kernel_work.c, sass_parse.c): part of the
 * SASS cache's keys, so that summaries an older analysis wrote are not
 * read. Raise it with any change to what the analysis reads. */
#define EMU_KWORK_ANALYSIS 38

/* The summary's most expressions and terms (a larger one is cut and
 * flagged MAYA_KW_F_TRUNCATED). */
#define EMU_KW_MAX_EXPRS 4096u
#define EMU_KW_MAX_TERMS 1024u

/* Analyse a parsed kernel. On success *out is a malloc'd summary of
 * *bytes bytes (a multiple of 8): struct maya_kwork, its expressions, its
 * terms. 0, or -1 (out of memory, or nothing to read). */
int emu_kwork_from_ptx(const struct emu_ptx_kernel *k, int sm, void **out, size_t *bytes);

/* Parse PTX text and analyse kernel `entry` of it: the two steps above. */
int emu_kwork_ptx_text(const char *text, size_t bytes, const char *entry, int sm, void **out, size_t *out_bytes);

/* Byte offsets of the pointer parameters the terms of summary w attribute
 * global memory traffic to (at most max, each once, ascending); their count. */
unsigned emu_kwork_pointer_params(const struct maya_kwork *w, uint16_t *offsets, unsigned max);

/* The parameter words (bit i: bytes 8i..8i+7) no global store or atomic of
 * summary w (`bytes` long) goes through: a launch only reads what those point at. 0 when
 * the summary cannot tell (a store whose address is not known to start
 * from a parameter, stores it does not show, a summary cut short). */
uint64_t emu_kwork_unstored_words(const struct maya_kwork *w, size_t bytes);

#endif

/* What the two small-kernel executors share (ptx_exec.c, sass_exec.c):
 * how a run's first stop is kept, and the source lane of a warp shuffle.
 * Both are a few instructions; kept in one place so that PTX's shfl.sync and
 * SASS's SHFL mean the same. */
#ifndef MAYA_EXEC_COMMON_H
#define MAYA_EXEC_COMMON_H

#include "ptx_exec.h"

#include <stdarg.h>
#include <stdint.h>

/* Keep the first reason a run stops: *res and why get r and the message
 * only while *res is EMU_PTX_DONE. Returns -1 (what the executors' steps
 * return when they stop). */
int emu_exec_vstop(enum emu_ptx_result *res, char *why, size_t nwhy, enum emu_ptx_result r, const char *fmt,
                   va_list ap);

enum emu_shfl_mode { EMU_SHFL_IDX = 1, EMU_SHFL_UP, EMU_SHFL_DOWN, EMU_SHFL_BFLY };

/* The lane whose value lane `lane` receives from a shuffle of `mode` with
 * operand b and c (c packs the clamp, bits 0-4, and the segment mask, bits
 * 8-12), and in *ok whether it is in range; a lane out of range, or not in
 * `live`, gives the lane its own value. */
uint32_t emu_shfl_src(int mode, uint32_t lane, uint32_t b, uint32_t c, uint32_t live, int *ok);

#endif

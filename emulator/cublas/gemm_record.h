/* The start of a MAYA_REC_GEMM record, shared by cuBLAS and cuBLASLt: a
 * zeroed record of lib on stream s (flagged when s is capturing). */
#ifndef MAYA_EMU_BLAS_GEMM_RECORD_H
#define MAYA_EMU_BLAS_GEMM_RECORD_H

#include <string.h>

#include "emu.h"

static inline void blas_gemm_rec_init(struct maya_rec_gemm *r, uint32_t lib, const struct emu_stream *s)
{
    memset(r, 0, sizeof *r);
    r->h.type = MAYA_REC_GEMM;
    r->h.bytes = sizeof *r;
    r->h.flags = s->capture_mode ? MAYA_F_CAPTURING : 0;
    r->lib = lib;
}

#endif

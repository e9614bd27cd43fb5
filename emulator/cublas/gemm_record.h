/* What cuBLAS and cuBLASLt share about GEMM records: starting one, and
 * issuing it to a stream (emu_trace_op: traced, or captured into a CUDA
 * graph when the stream is capturing). */
#ifndef MAYA_EMU_BLAS_GEMM_RECORD_H
#define MAYA_EMU_BLAS_GEMM_RECORD_H

#include <string.h>

#include "emu.h"

static inline void blas_gemm_rec_init(struct maya_rec_gemm *r, uint32_t lib)
{
    memset(r, 0, sizeof *r);
    r->h.type = MAYA_REC_GEMM;
    r->h.bytes = sizeof *r;
    r->lib = lib;
}

/* Before work is issued to s: whether it may be (a capture the stream takes
 * part in may have been invalidated). */
static inline int blas_issue_ok(struct emu_stream *s)
{
    return s && emu_stream_issue_check(s) == EMU_OK;
}

#endif

/* What the PTX and SASS executors share (exec_common.h). */
#include "exec_common.h"

#include <stdio.h>

int emu_exec_vstop(enum emu_ptx_result *res, char *why, size_t nwhy, enum emu_ptx_result r, const char *fmt,
                   va_list ap)
{
    if (*res == EMU_PTX_DONE) {
        *res = r;
        if (why && nwhy)
            vsnprintf(why, nwhy, fmt, ap);
    }
    return -1;
}

uint32_t emu_shfl_src(int mode, uint32_t lane, uint32_t b, uint32_t c, uint32_t live, int *ok)
{
    uint32_t clamp = c & 0x1f, segmask = (c >> 8) & 0x1f;
    uint32_t maxl = (lane & segmask) | (clamp & ~segmask), minl = lane & segmask, j;
    switch (mode) {
    case EMU_SHFL_UP: j = lane - b; *ok = (int32_t)j >= (int32_t)maxl; break;
    case EMU_SHFL_DOWN: j = lane + b; *ok = j <= maxl; break;
    case EMU_SHFL_BFLY: j = lane ^ b; *ok = j <= maxl; break;
    default: j = minl | (b & ~segmask); *ok = j <= maxl; break;
    }
    if (!*ok || j >= 32 || !(live >> j & 1))
        j = lane;
    return j;
}

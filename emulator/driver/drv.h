/* What the driver API's files share: CUresult mapping and call entry/exit. */
#ifndef MAYA_DRV_H
#define MAYA_DRV_H

#include <cuda.h>

#include "emu.h"

CUresult drv_error(enum emu_err e);

/* Driver calls fail with CUDA_ERROR_NOT_INITIALIZED until cuInit. */
extern int drv_initialized;

#define DRV_ENTER_NOINIT() \
    enum emu_err drv_init_ = emu_enter(); \
    if (drv_init_ != EMU_OK) \
        return drv_error(drv_init_); \
    uint64_t drv_t0 = emu_now()

#define DRV_ENTER() \
    DRV_ENTER_NOINIT(); \
    if (!drv_initialized) \
        DRV_RETURN(CUDA_ERROR_NOT_INITIALIZED)

#define DRV_API() EMU_API_ID(__func__)

#define DRV_RETURN_STREAM(err, stream_id) \
    do { \
        CUresult drv_e_ = (err); \
        emu_trace_call(DRV_API(), drv_t0, drv_e_, (stream_id), 0); \
        return drv_e_; \
    } while (0)

#define DRV_RETURN(err) DRV_RETURN_STREAM(err, 0)

#endif

/* What driver-API calls ask for, read from their arguments as the driver
 * reads them: the API name a call is traced under, what a launch asks for
 * (the packed parameter buffer of `extra`, the attributes of a
 * CUlaunchConfig, the launch the core traces), the layout of a 2D/3D copy.
 *
 * Shared by the emulated driver and the passthrough profiler
 * (emulator/profile/drv_*.c), which trace the same call with the same
 * record. Includers define __CUDA_API_VERSION_INTERNAL before cuda.h
 * (drv.h, prof.h). */
#ifndef MAYA_EMU_DRV_CALLS_H
#define MAYA_EMU_DRV_CALLS_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "emu.h"

/* The string id of an entry point's API name: the function's name without
 * its ABI suffixes (_v2, _ptsz, _ptds), so that cuMemAlloc_v2 and
 * cuMemcpyHtoD_v2_ptds are traced as cuMemAlloc and cuMemcpyHtoD. Interned
 * once per call site. */
uint32_t drv_api_id(const char *func);
#define DRV_API() \
    ({ static uint32_t drv_api_id_; \
       if (__builtin_expect(!drv_api_id_, 0)) drv_api_id_ = drv_api_id(__func__); \
       drv_api_id_; })

/* ---- launches ---- */

struct drv_launch_req {
    CUfunction f;
    unsigned grid[3], block[3], cluster[3];
    unsigned smem;
    CUstream stream;
    void **params, **extra;
    uint32_t flags;              /* MAYA_LAUNCH_* */
    int per_thread;
};

/* The packed buffer of an `extra` list:
 * { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END }.
 * CUDA_ERROR_INVALID_VALUE if it is not one. */
CUresult drv_launch_extra(void **extra, const void **buf, size_t *bytes);

/* A CUlaunchConfig as a request (attributes: cluster dimensions and the
 * cooperative flag change the launch; the others are scheduling hints). */
CUresult drv_launch_config(const CUlaunchConfig *c, struct drv_launch_req *r);

/* The launch as the core checks and traces it, of kernel k on stream s:
 * flagged MAYA_LAUNCH_DRIVER. */
void drv_launch_describe(const struct drv_launch_req *r, struct emu_kernel *k, struct emu_stream *s,
                         struct emu_launch *l);

/* ---- 2D and 3D copies ---- */

/* One end of a copy, from the fields CUDA_MEMCPY2D/3D/3D_PEER share. */
struct drv_copy_end {
    CUmemorytype type;
    const void *host;
    CUdeviceptr device;
    CUarray array;
    size_t x, y, z, pitch, height;
};

#define DRV_END2D(p, side) \
    { (p)->side##MemoryType, (p)->side##Host, (p)->side##Device, (p)->side##Array, (p)->side##XInBytes, \
      (p)->side##Y, 0, (p)->side##Pitch, 0 }
#define DRV_END3D(p, side) \
    { (p)->side##MemoryType, (p)->side##Host, (p)->side##Device, (p)->side##Array, (p)->side##XInBytes, \
      (p)->side##Y, (p)->side##Z, (p)->side##Pitch, (p)->side##Height }

/* The copy's addresses and layout, from its ends and its width (bytes) x
 * height x depth (0 counts as 1): c->dst, src, width, height, depth,
 * pitches and slices. c->dst / src are NULL for an end that cannot be
 * addressed (arrays are not emulated: no cuArrayCreate ever succeeds). */
void drv_copy_layout(struct emu_copy *c, const struct drv_copy_end *d, const struct drv_copy_end *s, size_t width,
                     size_t height, size_t depth);

#endif

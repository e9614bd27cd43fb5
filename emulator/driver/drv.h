/* What the driver API's files share: CUresult mapping, call entry/exit, the
 * current context, streams and kernel handles. */
#ifndef MAYA_DRV_H
#define MAYA_DRV_H

/* As the real driver is built: cuda.h then declares every exported function
 * under its own name (cuMemAlloc is the legacy 32-bit one, cuMemAlloc_v2 the
 * current one, cuMemcpyHtoD_v2_ptds the per-thread-stream one) instead of
 * #defining the unversioned names to the newest versions. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "calls.h" /* drv_api_id, DRV_API */
#include "emu.h"
#include "maya/common.h"

CUresult drv_error(enum emu_err e);

/* Driver calls fail with CUDA_ERROR_NOT_INITIALIZED until cuInit (or until
 * the runtime has initialised the driver: emu_driver_initialized). */

#define DRV_ENTER_NOINIT() \
    enum emu_err drv_init_ = emu_enter(); \
    if (drv_init_ != EMU_OK) \
        return drv_error(drv_init_); \
    uint64_t drv_t0 = emu_now()

#define DRV_ENTER() \
    DRV_ENTER_NOINIT(); \
    if (!emu_driver_initialized) \
        DRV_RETURN(CUDA_ERROR_NOT_INITIALIZED)

#define DRV_RETURN_STREAM(err, stream_id) \
    do { \
        CUresult drv_e_ = (err); \
        emu_trace_call(DRV_API(), drv_t0, drv_e_, (stream_id), 0); \
        return drv_e_; \
    } while (0)

#define DRV_RETURN(err) DRV_RETURN_STREAM(err, 0)

/* The device of the calling thread's current context, -1 if it has none. */
static inline int drv_ctx_device(void)
{
    struct emu_thread *t = emu_thread();
    return t->nctx > 0 ? t->ctx[t->nctx - 1]->device : -1;
}

/* Declare `dev`, the current context's device; CUDA_ERROR_INVALID_CONTEXT
 * without one (most driver calls need a current context). */
#define DRV_NEED_CTX(dev) \
    int dev = drv_ctx_device(); \
    if (dev < 0) \
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT)

/* A CUstream: NULL is the legacy default stream, or the per-thread one for
 * the _ptsz/_ptds entry points (per_thread = 1); NULL on a bad handle. */
static inline struct emu_stream *drv_stream(CUstream s, int per_thread)
{
    return emu_stream_resolve(s, per_thread);
}

/* The stream a call names, or NULL after tracing the call as failed with
 * CUDA_ERROR_INVALID_HANDLE (the caller returns that). */
static inline struct emu_stream *drv_stream_checked(uint32_t api, uint64_t t0, CUstream s, int per_thread)
{
    struct emu_stream *st = drv_stream(s, per_thread);
    if (!st)
        emu_trace_call(api, t0, CUDA_ERROR_INVALID_HANDLE, 0, 0);
    return st;
}

/* A CUfunction / CUkernel: the struct emu_kernel itself. */
static inline struct emu_kernel *drv_kernel(const void *f)
{
    return emu_kernel_resolve(f);
}

/* A CUmodule / CUlibrary: the struct emu_module itself. */
static inline struct emu_module *drv_module(const void *m)
{
    struct emu_module *mod = (struct emu_module *)m;
    return mod && mod->magic == EMU_MODULE_MAGIC ? mod : NULL;
}

/* A CUDA_MEMCPY3D as a copy (memory.c), checked as cuMemcpy3D checks it;
 * c's stream and async are left to the caller (graph memcpy nodes). */
CUresult drv_copy_3d_params(const CUDA_MEMCPY3D *p, struct emu_copy *c);

#endif

/* What the runtime API's files share: error mapping and the entry/exit of
 * every call (start the emulator, trace the call, remember a failure for
 * cudaGetLastError). */
#ifndef MAYA_RT_H
#define MAYA_RT_H

#include <cuda_runtime_api.h>

#include "emu.h"

cudaError_t rt_error(enum emu_err e);

/* The runtime's per-thread last error: set by any failing call, cleared by
 * cudaGetLastError. (Sticky errors come only from faults on a real device;
 * an emulated kernel never faults.) */
static inline cudaError_t rt_note(cudaError_t e)
{
    if (e != cudaSuccess)
        emu_thread()->runtime_error = e;
    return e;
}

/* Every runtime entry point starts with RT_ENTER() and leaves through
 * RT_RETURN(err) (plain calls) or emits its own record and RT_NOTE(err). */
#define RT_ENTER() \
    enum emu_err rt_init_ = emu_enter(); \
    if (rt_init_ != EMU_OK) \
        return rt_note(rt_error(rt_init_)); \
    uint64_t rt_t0 = emu_now()

#define RT_API() EMU_API_ID(__func__)

#define RT_RETURN_STREAM(err, stream_id) \
    do { \
        cudaError_t rt_e_ = (err); \
        emu_trace_call(RT_API(), rt_t0, rt_e_, (stream_id), 0); \
        return rt_note(rt_e_); \
    } while (0)

#define RT_RETURN(err) RT_RETURN_STREAM(err, 0)

/* The stream a runtime call names: NULL means the legacy default stream
 * unless the program was built with per-thread default streams (the _ptsz /
 * _ptds entry points pass per_thread = 1). */
static inline struct emu_stream *rt_stream(cudaStream_t s, int per_thread)
{
    return emu_stream_resolve(s, per_thread);
}

/* Current device, its record written. */
int rt_device(void);

/* A copy (width bytes x height rows) or memset, validated, performed when
 * small, and traced (memory.c). */
cudaError_t rt_copy(uint32_t api, uint64_t t0, void *dst, const void *src, size_t width,
                    size_t height, size_t dpitch, size_t spitch, enum cudaMemcpyKind kind,
                    struct emu_stream *stream, int async);
cudaError_t rt_memset(uint32_t api, uint64_t t0, void *dst, int value, size_t width, size_t height,
                      size_t pitch, struct emu_stream *stream, int async);

/* Validate and trace one launch (launch.c). */
cudaError_t rt_launch(uint32_t api, uint64_t t0, struct emu_kernel *k, dim3 grid, dim3 block,
                      void **args, size_t smem, cudaStream_t stream, int per_thread,
                      const unsigned cluster[3], uint32_t flags);

#endif

/* What the runtime API's files share: error mapping and the entry/exit of
 * every call (start the emulator, trace the call, remember a failure for
 * cudaGetLastError). */
#ifndef MAYA_RT_H
#define MAYA_RT_H

/* The per-thread-default-stream entry points (cudaMemcpy_ptds,
 * cudaMemcpyAsync_ptsz, ...) have no prototypes in the headers (they
 * appear only as what the plain names are #defined to when a program is
 * built with --default-stream per-thread); each is defined next to its
 * plain twin with the same parameters. */
#include <cuda_runtime_api.h>

#include "emu.h"
#include "maya/common.h"

cudaError_t rt_error(enum emu_err e);

/* A sticky error (a device fault: cudaErrorIllegalAddress, ...): once set,
 * every call of the process returns it and cudaGetLastError cannot clear
 * it, as after a real fault. 0 while none happened. An emulated kernel
 * never faults; MAYA_INJECT_FAULT makes the N-th launch fault so that a
 * program's handling of faults can be tried (error.c). */
extern int rt_sticky;
cudaError_t rt_sticky_call(uint32_t api);
void rt_count_launch(void);

/* The runtime's per-thread last error: set by any failing call, cleared by
 * cudaGetLastError. */
static inline cudaError_t rt_note(cudaError_t e)
{
    if (__builtin_expect(e != cudaSuccess, 0))
        emu_thread()->runtime_error = e;
    return e;
}

#define RT_API() EMU_API_ID(__func__)

/* Every runtime entry point starts with RT_ENTER() and leaves through
 * RT_RETURN(err) (plain calls) or emits its own record and rt_note(err). */
#define RT_ENTER() \
    enum emu_err rt_init_ = emu_enter(); \
    if (__builtin_expect(rt_init_ != EMU_OK, 0)) \
        return rt_note(rt_error(rt_init_)); \
    if (__builtin_expect(rt_sticky != 0, 0)) \
        return rt_sticky_call(RT_API()); \
    uint64_t rt_t0 = emu_now()

#define RT_RETURN_STREAM(err, stream_id) \
    do { \
        cudaError_t rt_e_ = (err); \
        emu_trace_call(RT_API(), rt_t0, rt_e_, (stream_id), 0); \
        return rt_note(rt_e_); \
    } while (0)

#define RT_RETURN(err) RT_RETURN_STREAM(err, 0)

/* Leave with err after a failed check (traced as a plain call). */
#define RT_FAIL(err) RT_RETURN(err)

/* The stream a runtime call names: NULL means the legacy default stream
 * unless the program was built with per-thread default streams (the _ptsz /
 * _ptds entry points pass per_thread = 1). NULL for a bad handle. */
static inline struct emu_stream *rt_stream(cudaStream_t s, int per_thread)
{
    return emu_stream_resolve(s, per_thread);
}

/* A stream work is issued to, checked: *out set, or the error to return
 * (bad handle, an invalidated capture, the legacy stream used during a
 * capture). */
cudaError_t rt_issue_stream(cudaStream_t s, int per_thread, struct emu_stream **out);

/* Current device, its record written. */
int rt_device(void);

/* Host-side wait for a stream (or with s NULL the device): host functions
 * queued before have run when it returns. */
void rt_drain(struct emu_stream *s);

/* A copy of width bytes x height rows x depth slices, or a memset,
 * validated, performed when small, and traced (copy.c). */
cudaError_t rt_copy(uint32_t api, uint64_t t0, struct emu_copy *c, enum cudaMemcpyKind kind);
/* Classify a copy and check it against the kind the caller named. */
cudaError_t rt_copy_check(struct emu_copy *c, enum cudaMemcpyKind kind);
/* A copy described by cudaMemcpy3DParms (pitched memory only). */
cudaError_t rt_copy_from_parms(const struct cudaMemcpy3DParms *p, struct emu_copy *c);
cudaError_t rt_memset(uint32_t api, uint64_t t0, void *dst, int value, size_t width, size_t height,
                      size_t pitch, struct emu_stream *stream, int async);

/* Validate and trace one launch (launch.c). */
cudaError_t rt_launch(uint32_t api, uint64_t t0, struct emu_kernel *k, dim3 grid, dim3 block,
                      void **args, size_t smem, cudaStream_t stream, int per_thread,
                      const unsigned cluster[3], uint32_t flags);
/* A kernel named by host stub, cudaKernel_t or cudaFunction_t. */
struct emu_kernel *rt_find_kernel(const void *func);

/* A __device__ / __constant__ variable by its host shadow's address or
 * name: its device address (allocated on first use) and size (launch.c). */
cudaError_t rt_symbol(const void *symbol, void **dev, size_t *bytes);

/* The device's memory pool in use for cudaMallocAsync (pool.c). */
struct emu_pool *rt_current_pool(int device);

#endif

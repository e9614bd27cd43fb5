/* libmaya-profile.so: passthrough profiling (maya profile).
 *
 * LD_PRELOADed into a program that runs on real GPUs. It defines the traced
 * entry points of libcudart, the driver (module loads and launches, copies,
 * memsets: what Triton and torch.compile use), cuBLAS, cuBLASLt, cuDNN and
 * NCCL, each under the real library's version node (profile.map) so that
 * the program's versioned references bind here, and hands the driver's out
 * to programs that ask for them by name (drv_procaddr.c); forwards every call to the real function
 * (looked up once, prof_sym); and writes the trace records the emulator
 * writes, with a private copy of the emulator's core started in passthrough
 * mode (emu_init_passthrough): the same record builders, kernel names and
 * parameter layouts from the same fat-binary reader. Device work is
 * bracketed by two CUDA events on its stream; its record is held until the
 * events have completed, then written with call.measured_ns and
 * MAYA_F_MEASURED (measure.c).
 *
 * The profiler's own work (event records and queries, building records) is
 * taken off the trace's host clock (emu_wait_begin/end: the clock stands
 * still meanwhile), so host gaps are the program's own and a call's
 * t_exit is when the real call returned.
 *
 * A call made while another traced call of the same thread is in progress
 * (cuBLAS calling cuBLASLt through its PLT, say) is forwarded without a
 * record: the trace holds what the program asked for, once.
 *
 * Environment, read once (maya profile sets it):
 *   MAYA_PROFILE_TRACE_DIR  where the trace goes (rank-N.mtrace); unset:
 *                           every call is only forwarded
 *   MAYA_PROFILE_GPU        hwspec key of the real GPU, for the header
 */
#ifndef MAYA_PROF_H
#define MAYA_PROF_H

/* The driver's entry points under their own names (cuLaunchKernel_ptsz,
 * cuEventElapsedTime beside _v2), as the driver is built: cuda.h then
 * #defines none of them to a newer one. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "emu.h"
#include "maya/map.h"

/* ---- the real libraries (init.c) ---- */

struct prof_lib {
    const char *soname;          /* "libcudart.so.13" */
    const char *version;         /* version node of its symbols; NULL: unversioned */
    void *handle;                /* the loaded library, when RTLD_NEXT did not find a symbol */
};

extern struct prof_lib prof_cuda, prof_cudart, prof_cublas, prof_cublaslt, prof_cudnn, prof_nccl;

/* The real definition of name (NULL if the library is not loaded or lacks
 * it; a note is printed once). */
void *prof_sym(struct prof_lib *lib, const char *name);

/* libc's dlsym: the profiler's own dlsym (drv_procaddr.c) stands before it
 * for the whole process, and hands out the profiler's functions. */
void *prof_libc_dlsym(void *handle, const char *name);

/* The real fn of lib, looked up on first use (a miss is looked up again next
 * time: a library may be loaded later). Type-checked against fn's prototype. */
#define PROF_REAL(lib, fn) \
    ({ \
        static __typeof__(&fn) prof_real_; \
        __typeof__(&fn) prof_r_ = __atomic_load_n(&prof_real_, __ATOMIC_RELAXED); \
        if (__builtin_expect(!prof_r_, 0)) { \
            prof_r_ = (__typeof__(&fn))prof_sym(&lib, #fn); \
            __atomic_store_n(&prof_real_, prof_r_, __ATOMIC_RELAXED); \
        } \
        prof_r_; \
    })

/* ---- one traced call (init.c, measure.c) ---- */

struct prof_op {
    int on;                      /* this call is traced */
    uint64_t t0;                 /* host time when the real call began */
    /* measured device work: events recorded around the real call on stream */
    cudaStream_t stream;
    cudaEvent_t start, end;
    int device;                  /* the events' device (their pool) */
    int drv;                     /* driver-API work: the driver's events, of ctx (none if NULL) */
    void *ctx;                   /* the thread's current context then */
    int consumed;                /* the events went with the record */
    int capturing;               /* the stream is capturing a graph: nothing runs now */
    unsigned long long capture;  /* then: the capture's id (its records become the graph's nodes) */
};

/* Begin a call: 1 when it is traced (the profiler runs and no other traced
 * call of this thread is in progress), else 0 and the caller only forwards.
 * The thread's current device is brought into the core. */
int prof_begin(struct prof_op *op);
/* Device work on stream: record the start event (off the host clock), or
 * note that the stream is capturing a CUDA graph (no events then: they would
 * become nodes of the program's graph). The events are the runtime's, of
 * op->device when set (>= 0), else of the thread's current device; or,
 * for driver-API work (op->drv), the driver's, of the context op->ctx
 * (none when it is NULL). */
void prof_device_begin(struct prof_op *op, cudaStream_t stream);
/* The clock runs again and op->t0 is now: call the real function next. */
void prof_go(struct prof_op *op);
/* The real call returned: the host clock stops (until prof_end); for device
 * work that succeeded, the end event is recorded. Then build the record. */
void prof_returned(struct prof_op *op, int ok);
/* Record op's end event (its start was recorded), the clock already
 * stopped: for ops that share one real call (an NCCL group). */
void prof_device_end(struct prof_op *op, int ok);
/* The call's record is out: release what it did not take, maybe collect
 * finished measurements, restart the host clock. */
void prof_end(struct prof_op *op);
/* Collect finished measurements once many are held (blocking: all of
 * them, waiting); prof_collect_now: whatever has finished (after a
 * synchronising call). */
void prof_collect(int blocking);
void prof_collect_now(void);

/* The frames of the wrappers. PROF_REAL_OR declares `real`, the real
 * function, or returns ERR (after a note) when the library lacks it.
 * PROF_BODY runs a traced call with no device work: CALL is the real call
 * (of type T), then TRACE (a statement using op_ and r_, its result) builds
 * the record, then AFTER runs once the clock runs again; returns r_.
 * PROF_DEVICE_BODY does the same for device work on STREAM (an expression
 * evaluated once the call is known to be traced), measured when r_ == OK. */
#define PROF_REAL_OR(LIB, NAME, ERR) \
    __typeof__(&NAME) real = PROF_REAL(LIB, NAME); \
    if (!real) \
        return (prof_missing((LIB).soname, #NAME), (ERR))

#define PROF_DEVICE_BODY(T, OK, STREAM, CALL, TRACE, AFTER) \
    do { \
        struct prof_op op_; \
        if (!prof_begin(&op_)) \
            return CALL; \
        prof_device_begin(&op_, (STREAM)); \
        prof_go(&op_); \
        T r_ = CALL; \
        prof_returned(&op_, r_ == (OK)); \
        TRACE; \
        prof_end(&op_); \
        AFTER; \
        return r_; \
    } while (0)

#define PROF_BODY(T, CALL, TRACE, AFTER) \
    do { \
        struct prof_op op_; \
        if (!prof_begin(&op_)) \
            return CALL; \
        prof_go(&op_); \
        T r_ = CALL; \
        prof_returned(&op_, 0); \
        TRACE; \
        prof_end(&op_); \
        AFTER; \
        return r_; \
    } while (0)

/* A real function is missing: a note once; the wrapper returns its
 * library's not-supported code. */
void prof_missing(const char *lib, const char *name);

/* ---- the held records (measure.c) ---- */

/* emu_trace_divert's hook: queue the record with the events of the op
 * this thread is building a record for (prof_building). */
void prof_divert(void *rec);
void prof_building(struct prof_op *op);
/* Events of a pool: a device's runtime events (ctx NULL; made on that
 * device when the pool is empty), or a driver context's (made in ctx, which
 * is then current). */
cudaEvent_t prof_event_get(int device, void *ctx);
void prof_event_put(int device, void *ctx, cudaEvent_t e);
/* Back to their pool: op's events, unless its record took them. */
void prof_op_release(struct prof_op *op);

/* ---- cuDNN (dnn.c) ---- */

struct cudnnContext;
/* The stream of a cuDNN handle (the real cudnnGetStream). */
cudaStream_t prof_dnn_stream(struct cudnnContext *h);
/* Write r (kind, tensors and the rest filled) for a call of handle h that
 * returned st (a cudnnStatus_t), on the handle's stream, begun at op->t0:
 * a CALL record if it failed. */
void prof_dnn_emit(struct prof_op *op, uint32_t api, int st, struct cudnnContext *h, struct maya_rec_dnn *r);

/* ---- CUDA graphs captured from streams (graph.c) ----
 * Work issued to a capturing stream runs when the graph does: its record
 * (built as if it ran) is kept as a node of the capture, and a CALL record
 * flagged MAYA_F_CAPTURING stands in the trace, as under emulation. A graph
 * launch writes a GRAPH begin record, its nodes' records (flagged
 * MAYA_F_FROM_GRAPH, on the launching stream), and a GRAPH end record
 * carrying the launch's measured time (the nodes are not timed one by one). */
void prof_capture_add(unsigned long long capture, const void *rec);
/* nccl.c: a captured NCCL operation's record (seq 0) made this launch's:
 * its communicator's next sequence number, a group id new to the launch
 * (launch: unique per graph launch in the process). A communicator gone
 * since the capture: call.result ncclInvalidUsage. */
struct maya_rec_coll;
void prof_nccl_replay(struct maya_rec_coll *r, uint64_t launch);

/* ---- the program's objects (objects.c) ---- */

/* A table from a real handle or pointer to a value (0: none), under its
 * own mutex: O(1) per lookup and a lock (about 20 ns uncontended). */
struct prof_table {
    pthread_mutex_t lock;
    struct maya_map map;
};
#define PROF_TABLE_INIT { PTHREAD_MUTEX_INITIALIZER, { 0 } }
uint64_t prof_table_get(struct prof_table *t, const void *key);
void prof_table_put(struct prof_table *t, const void *key, uint64_t value);
/* Remove key; its value, or 0. */
uint64_t prof_table_take(struct prof_table *t, const void *key);

/* Streams: the core's stream for a real handle (NULL, cudaStreamLegacy and
 * cudaStreamPerThread are the device's own; a stream made by the program is
 * defined on first sight). per_thread: the _ptsz/_ptds entry points. */
struct emu_stream *prof_stream(cudaStream_t s, int per_thread);
/* A stream the program just made: defined now with what it was made with. */
struct emu_stream *prof_stream_new(cudaStream_t s, unsigned flags, int priority);
void prof_stream_forget(cudaStream_t s);
struct emu_event *prof_event(cudaEvent_t e, unsigned flags, int create);
void prof_event_forget(cudaEvent_t e);

/* Kernels: by nvcc host stub or by a handle the real runtime gave out
 * (__cudaGetKernel, cudaLibraryGetKernel); unknown handles are named by the
 * real cudaFuncGetName. */
void prof_module_register(void **real_handle, const void *image);
void prof_kernel_register(void **real_handle, const void *host_fun, const char *mangled, int thread_limit);
void prof_kernel_handle(const void *handle, const void *host_fun);
struct emu_kernel *prof_kernel(const void *func);

/* The driver's modules and libraries (real: the program's CUmodule or
 * CUlibrary), each with a copy of its image, as the emulated driver keeps
 * them (source MAYA_KSRC_MODULE / LIBRARY); an image of no known kind is
 * not kept. */
void prof_module_load(const void *real, const void *image, int source);
void prof_module_unload(const void *real);
/* real names the module known already (cuLibraryGetModule). */
void prof_module_alias(const void *real, const void *known);
/* The kernel name of a module (NULL or unknown: a kernel of no module,
 * its parameters unknown), known from now on by handle (a CUfunction or
 * CUkernel). */
struct emu_kernel *prof_module_kernel(const void *real_module, const char *name, const void *handle);
/* handle names the kernel known already (cuKernelGetFunction). */
void prof_kernel_alias(const void *handle, const void *known);
/* The kernel a handle was registered for, or NULL. */
struct emu_kernel *prof_kernel_known(const void *handle);
/* The kernel of a driver launch's CUfunction: known, else named (and its
 * module found) by the real driver (drv_module.c). */
struct emu_kernel *prof_drv_kernel(CUfunction f);

/* Allocations: remembered for their frees and the device's usage. */
void prof_alloc_note(uint64_t ptr, uint64_t bytes, int kind, int device);
/* The allocation starting at ptr, removed: 1 found (bytes, kind, device
 * set), 0 not. */
int prof_alloc_take(uint64_t ptr, uint64_t *bytes, int *kind, int *device);

/* A copy of height rows of width bytes (1 row: linear), traced as the
 * emulator's MEMCPY record (or a CALL when it failed or was captured). */
struct prof_copy {
    void *dst;
    const void *src;
    size_t width, height;
    cudaStream_t stream;
    int per_thread, async;
};
void prof_trace_copy(struct prof_op *op, uint32_t api, int result, const struct prof_copy *c);
/* As the emulator's emu_copy_classify: the kind of c (and each end's
 * device, pinned) from where its pointers live, asked of the real runtime,
 * not from what the program said. */
void prof_copy_classify(struct emu_copy *c);

/* Where a pointer lives (real cudaPointerGetAttributes): device ordinal or
 * -1 for host; *pinned for page-locked host memory. */
int prof_ptr_device(const void *p, int *pinned);

/* Driver-API work on stream (a _ptsz / _ptds entry point: per_thread):
 * op's events become the driver's, of the thread's current context (none
 * without one: the call fails, and the runtime must not make one by making
 * an event); returns the stream the events go to (the per-thread default
 * stream for such an entry point's NULL). For PROF_DEVICE_BODY's STREAM. */
cudaStream_t prof_drv_events(struct prof_op *op, CUstream stream, int per_thread);

/* The thread's current device (real cudaGetDevice), kept in the core. */
int prof_device(void);

#endif

/* The profiler's start, the real libraries it forwards to, and the frame of
 * every traced call (prof_begin .. prof_end). */
#define _GNU_SOURCE
#include "prof.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maya/common.h"

struct prof_lib prof_cuda = { "libcuda.so.1", NULL, NULL };
struct prof_lib prof_cudart = { "libcudart.so.13", "libcudart.so.13", NULL };
struct prof_lib prof_cublas = { "libcublas.so.13", "libcublas.so.13", NULL };
struct prof_lib prof_cublaslt = { "libcublasLt.so.13", "libcublasLt.so.13", NULL };
struct prof_lib prof_cudnn = { "libcudnn.so.9", "libcudnn.so.9", NULL };
struct prof_lib prof_nccl = { "libnccl.so.2", NULL, NULL };

void *prof_sym(struct prof_lib *lib, const char *name)
{
    /* The definition after ours in the search order: the real library as
     * the program would have bound to it. A library loaded with
     * RTLD_LOCAL (a Python extension's dependency) is not in that order:
     * then ask the loaded library itself. */
    void *p = lib->version ? dlvsym(RTLD_NEXT, name, lib->version) : NULL;
    if (!p)
        p = prof_libc_dlsym(RTLD_NEXT, name);
    if (p)
        return p;
    void *h = __atomic_load_n(&lib->handle, __ATOMIC_ACQUIRE);
    if (!h) {
        h = dlopen(lib->soname, RTLD_LAZY | RTLD_NOLOAD);
        if (h)
            __atomic_store_n(&lib->handle, h, __ATOMIC_RELEASE);
    }
    if (h) {
        p = lib->version ? dlvsym(h, name, lib->version) : NULL;
        if (!p)
            p = prof_libc_dlsym(h, name);
    }
    return p;
}

void prof_missing(const char *lib, const char *name)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static const char *seen[64];
    static int nseen;
    int first = 1;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nseen; i++)
        first &= strcmp(seen[i], name) != 0;
    if (first && nseen < (int)MAYA_ARRAY_LEN(seen))
        seen[nseen++] = name;
    pthread_mutex_unlock(&lock);
    if (first)
        fprintf(stderr, "maya-profile: %s has no %s to forward to (is the real library loaded?); "
                "the call failed\n", lib, name);
}

/* ---- start ---- */

static int state;                /* 0 not started, 1 tracing, -1 forwarding only */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void start(void)
{
    const char *dir = getenv("MAYA_PROFILE_TRACE_DIR");
    if (!dir || !*dir) {
        state = -1;
        return;
    }
    emu_trace_divert(prof_divert);
    if (emu_init_passthrough(dir, getenv("MAYA_PROFILE_GPU")) != EMU_OK) {
        fprintf(stderr, "maya-profile: cannot start the trace (see above); the program runs without it\n");
        state = -1;
        return;
    }
    maya_set_error_prefix("maya-profile");
    __atomic_store_n(&state, 1, __ATOMIC_RELEASE);
}

static __thread int depth;       /* traced calls in progress on this thread */

int prof_begin(struct prof_op *op)
{
    memset(op, 0, sizeof *op);
    op->device = -1;
    if (depth)
        return 0;
    if (__builtin_expect(__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 0, 0))
        pthread_once(&once, start);
    /* emu_started: -2 in a child forked after the trace began (it must not
     * write into its parent's trace). */
    if (state != 1 || emu_started != 1)
        return 0;
    depth = 1;
    op->on = 1;
    emu_wait_begin();
    prof_device();
    return 1;
}

/* Is stream capturing a graph (and which capture: *id)? The runtime's
 * answer (for driver streams too: they are the same objects), else the
 * driver's for a program without the runtime. */
static int capturing(cudaStream_t stream, unsigned long long *id)
{
    cudaError_t (*is)(cudaStream_t, enum cudaStreamCaptureStatus *) = PROF_REAL(prof_cudart, cudaStreamIsCapturing);
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    *id = 0;
    if (is) {
        if (is(stream, &cs) != cudaSuccess || cs == cudaStreamCaptureStatusNone)
            return 0;
        cudaError_t (*info)(cudaStream_t, enum cudaStreamCaptureStatus *, unsigned long long *, cudaGraph_t *,
                            const cudaGraphNode_t **, const cudaGraphEdgeData **, size_t *) =
            PROF_REAL(prof_cudart, cudaStreamGetCaptureInfo);
        if (!info || info(stream, &cs, id, NULL, NULL, NULL, NULL) != cudaSuccess)
            *id = 0;
        return 1;
    }
    CUresult (*cu_info)(CUstream, CUstreamCaptureStatus *, cuuint64_t *) = PROF_REAL(prof_cuda, cuStreamGetCaptureInfo);
    CUstreamCaptureStatus ccs = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t cid = 0;
    if (!cu_info || cu_info(stream, &ccs, &cid) != CUDA_SUCCESS || ccs == CU_STREAM_CAPTURE_STATUS_NONE)
        return 0;
    *id = cid;
    return 1;
}

/* Record e on stream: the runtime's cudaEventRecord, or for driver events
 * (ctx) the driver's cuEventRecord; 1 done. */
static int event_record(void *ctx, cudaEvent_t e, cudaStream_t stream)
{
    if (ctx) {
        CUresult (*rec)(CUevent, CUstream) = PROF_REAL(prof_cuda, cuEventRecord);
        return rec && rec(e, stream) == CUDA_SUCCESS;
    }
    cudaError_t (*rec)(cudaEvent_t, cudaStream_t) = PROF_REAL(prof_cudart, cudaEventRecord);
    return rec && rec(e, stream) == cudaSuccess;
}

void prof_device_begin(struct prof_op *op, cudaStream_t stream)
{
    if (op->drv && !op->ctx)
        return;
    if (capturing(stream, &op->capture)) {
        op->capturing = 1;
        return;
    }
    int dev = op->device >= 0 || op->ctx ? op->device : emu_current_device();
    cudaEvent_t e = prof_event_get(dev, op->ctx);
    if (!e)
        return;
    if (!event_record(op->ctx, e, stream)) {
        /* a driver event that cannot be recorded may belong to a context
         * gone since (its pool's address reused): not put back */
        if (!op->ctx)
            prof_event_put(dev, NULL, e);
        return;
    }
    op->start = e;
    op->stream = stream;
    op->device = dev;
}

cudaStream_t prof_drv_events(struct prof_op *op, CUstream stream, int per_thread)
{
    CUresult (*current)(CUcontext *) = PROF_REAL(prof_cuda, cuCtxGetCurrent);
    CUcontext ctx = NULL;
    op->drv = 1;
    if (current && current(&ctx) == CUDA_SUCCESS)
        op->ctx = ctx;
    return !stream && per_thread ? CU_STREAM_PER_THREAD : stream;
}

void prof_go(struct prof_op *op)
{
    emu_wait_end();
    op->t0 = emu_now();
}

void prof_device_end(struct prof_op *op, int ok)
{
    if (!op->start)
        return;
    cudaEvent_t e = ok ? prof_event_get(op->device, op->ctx) : NULL;
    if (e && event_record(op->ctx, e, op->stream)) {
        op->end = e;
        return;
    }
    prof_event_put(op->device, op->ctx, e);
    prof_event_put(op->device, op->ctx, op->start);
    op->start = NULL;
}

void prof_returned(struct prof_op *op, int ok)
{
    emu_wait_begin();
    prof_building(op);
    prof_device_end(op, ok);
}

void prof_end(struct prof_op *op)
{
    prof_op_release(op);
    prof_building(NULL);
    prof_collect(0);
    emu_wait_end();
    depth = 0;
}

int prof_device(void)
{
    static __thread int synced; /* this thread's device is in the core */
    cudaError_t (*get)(int *) = PROF_REAL(prof_cudart, cudaGetDevice);
    int d = emu_current_device();
    int real = d;
    if (get && get(&real) == cudaSuccess && (real != d || !synced) && emu_set_device(real) == EMU_OK) {
        d = real;
        synced = 1;
    }
    return d;
}

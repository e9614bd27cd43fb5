/* Runtime: kernel registration (to know kernels by name and parameter
 * layout, from the same fat binaries the emulator reads) and launches. */
#include "prof.h"

#include <string.h>


struct fatbin_wrapper {
    int magic;                   /* 0x466243B1 */
    int version;
    const void *data;
    void *filename_or_fatbins;
};

void **__cudaRegisterFatBinary(void *fatCubin)
{
    void **(*real)(void *) = PROF_REAL(prof_cudart, __cudaRegisterFatBinary);
    if (!real) {
        prof_missing(prof_cudart.soname, "__cudaRegisterFatBinary");
        return NULL;
    }
    void **h = real(fatCubin);
    const struct fatbin_wrapper *w = fatCubin;
    if (h)
        prof_module_register(h, w && w->magic == 0x466243B1 ? w->data : fatCubin);
    return h;
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    __typeof__(&__cudaRegisterFunction) real = PROF_REAL(prof_cudart, __cudaRegisterFunction);
    if (!real) {
        prof_missing(prof_cudart.soname, "__cudaRegisterFunction");
        return;
    }
    real(fatCubinHandle, hostFun, deviceFun, deviceName, thread_limit, tid, bid, bDim, gDim, wSize);
    prof_kernel_register(fatCubinHandle, hostFun, deviceName ? deviceName : deviceFun, thread_limit);
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *fun)
{
    PROF_REAL_OR(prof_cudart, __cudaGetKernel, cudaErrorNotSupported);
    cudaError_t e = real(kernel, fun);
    if (e == cudaSuccess && kernel)
        prof_kernel_handle(*kernel, fun);
    return e;
}

/* ---- launches ---- */

struct launch {
    const void *func;            /* host stub, cudaKernel_t or cudaFunction_t */
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;
    int per_thread;              /* the _ptsz entry points: NULL is the per-thread stream */
    void **args;
    unsigned cluster[3];
    uint32_t flags;              /* MAYA_LAUNCH_* */
};

/* The stream events go to: the per-thread default stream when the entry
 * point says NULL means it. */
static cudaStream_t event_stream(cudaStream_t s, int per_thread)
{
    return !s && per_thread ? cudaStreamPerThread : s;
}

static void trace_launch(struct prof_op *op, uint32_t api, cudaError_t e, const struct launch *l)
{
    struct emu_stream *s = prof_stream(l->stream, l->per_thread);
    struct emu_kernel *k = e == cudaSuccess ? prof_kernel(l->func) : NULL;
    if (!k) {
        emu_trace_call(api, op->t0, e, s ? s->id : 0, 0);
        return;
    }
    struct emu_launch el = {
        .kernel = k,
        .grid = { l->grid.x, l->grid.y, l->grid.z },
        .block = { l->block.x, l->block.y, l->block.z },
        .smem_bytes = (uint32_t)l->smem,
        .stream = s,
        .flags = l->flags,
    };
    memcpy(el.cluster, l->cluster, sizeof el.cluster);
    emu_trace_launch(api, op->t0, e, &el, l->args, NULL, 0, 0);
}

/* The frame of every launch: events around the real call, then the record. */
#define LAUNCH_BODY(NAME, L, CALL) \
    PROF_DEVICE_BODY(cudaError_t, cudaSuccess, event_stream((L)->stream, (L)->per_thread), CALL, \
                     trace_launch(&op_, EMU_API_ID(NAME), r_, (L)), )

/* An entry point and its per-thread-default-stream twin (NAME##_ptsz), whose
 * first parameter (the kernel) is of type FTYPE. */
#define LAUNCH_PAIR(NAME, FTYPE) \
    static cudaError_t NAME##_any(cudaError_t (*real)(FTYPE, dim3, dim3, void **, size_t, cudaStream_t), \
                                  uint32_t api, int per_thread, FTYPE func, dim3 grid, dim3 block, void **args, \
                                  size_t smem, cudaStream_t stream) \
    { \
        struct launch l = { func, grid, block, smem, stream, per_thread, args, { 0, 0, 0 }, 0 }; \
        PROF_DEVICE_BODY(cudaError_t, cudaSuccess, event_stream(stream, per_thread), \
                         real(func, grid, block, args, smem, stream), trace_launch(&op_, api, r_, &l), ); \
    } \
    cudaError_t NAME(FTYPE func, dim3 grid, dim3 block, void **args, size_t smem, cudaStream_t stream) \
    { \
        PROF_REAL_OR(prof_cudart, NAME, cudaErrorNotSupported); \
        return NAME##_any(real, EMU_API_ID(#NAME), 0, func, grid, block, args, smem, stream); \
    } \
    cudaError_t NAME##_ptsz(FTYPE func, dim3 grid, dim3 block, void **args, size_t smem, cudaStream_t stream) \
    { \
        PROF_REAL_OR(prof_cudart, NAME##_ptsz, cudaErrorNotSupported); \
        return NAME##_any(real, EMU_API_ID(#NAME "_ptsz"), 1, func, grid, block, args, smem, stream); \
    }

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t cudaLaunchKernel_ptsz(const void *, dim3, dim3, void **, size_t, cudaStream_t);
LAUNCH_PAIR(__cudaLaunchKernel, cudaKernel_t)
LAUNCH_PAIR(cudaLaunchKernel, const void *)

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                        size_t sharedMem, cudaStream_t stream)
{
    PROF_REAL_OR(prof_cudart, cudaLaunchCooperativeKernel, cudaErrorNotSupported);
    struct launch l = { func, gridDim, blockDim, sharedMem, stream, 0, args, { 0, 0, 0 }, MAYA_LAUNCH_COOPERATIVE };
    LAUNCH_BODY(__func__, &l, real(func, gridDim, blockDim, args, sharedMem, stream));
}

/* cudaLaunchKernelExC: cluster dimensions and cooperation from the
 * attributes. */
static void launch_ex(struct launch *l, const cudaLaunchConfig_t *config, const void *func, void **args,
                      int per_thread)
{
    memset(l, 0, sizeof *l);
    l->func = func;
    l->args = args;
    l->per_thread = per_thread;
    if (!config)
        return;
    l->grid = config->gridDim;
    l->block = config->blockDim;
    l->smem = config->dynamicSmemBytes;
    l->stream = config->stream;
    for (unsigned i = 0; i < config->numAttrs; i++) {
        const cudaLaunchAttribute *a = &config->attrs[i];
        if (a->id == cudaLaunchAttributeClusterDimension) {
            l->cluster[0] = a->val.clusterDim.x;
            l->cluster[1] = a->val.clusterDim.y;
            l->cluster[2] = a->val.clusterDim.z;
        } else if (a->id == cudaLaunchAttributeCooperative && a->val.cooperative) {
            l->flags |= MAYA_LAUNCH_COOPERATIVE;
        }
    }
}

#define LAUNCH_EX(NAME, PER_THREAD) \
    cudaError_t NAME(const cudaLaunchConfig_t *config, const void *func, void **args) \
    { \
        PROF_REAL_OR(prof_cudart, NAME, cudaErrorNotSupported); \
        struct launch l; \
        launch_ex(&l, config, func, args, PER_THREAD); \
        LAUNCH_BODY(#NAME, &l, real(config, func, args)); \
    }

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *, const void *, void **);
LAUNCH_EX(cudaLaunchKernelExC, 0)
LAUNCH_EX(cudaLaunchKernelExC_ptsz, 1)

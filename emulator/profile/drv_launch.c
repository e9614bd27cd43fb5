/* Driver-API launches (cuLaunchKernel with kernelParams or a packed
 * parameter buffer, cuLaunchKernelEx with its attributes, cooperative
 * launches; what Triton and torch.compile use), traced as the emulated
 * driver traces them (MAYA_LAUNCH_DRIVER, the kernel's argument values by
 * its layout) and measured between two of the driver's events recorded on
 * the launch's stream in the thread's current context (a program of the
 * driver alone may have no runtime; a context it made itself is not the
 * runtime's). A _ptsz entry point is traced under its API name, as the
 * emulated driver does. */
#include "prof.h"

#include "calls.h"

static void trace_launch(struct prof_op *op, uint32_t api, CUresult e, const struct drv_launch_req *r)
{
    struct emu_stream *s = prof_stream(r->stream, r->per_thread);
    struct emu_kernel *k = e == CUDA_SUCCESS ? prof_drv_kernel(r->f) : NULL;
    const void *buf = NULL;
    size_t bytes = 0;
    if (k && r->extra && drv_launch_extra(r->extra, &buf, &bytes) != CUDA_SUCCESS)
        k = NULL;
    if (!k) {
        emu_trace_call(api, op->t0, e, s ? s->id : 0, 0);
        return;
    }
    struct emu_launch l;
    drv_launch_describe(r, k, s, &l);
    emu_trace_launch(api, op->t0, CUDA_SUCCESS, &l, r->params, buf, bytes, 0);
}

/* The frame of every launch: the driver's events around the real call,
 * then the record. */
#define LAUNCH_BODY(API, R, CALL) \
    PROF_DEVICE_BODY(CUresult, CUDA_SUCCESS, prof_drv_events(&op_, (R)->stream, (R)->per_thread), CALL, trace_launch(&op_, (API), r_, (R)), )

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);
typedef CUresult (*cooperative_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, CUstream, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);

static CUresult launch(launch_fn real, const struct drv_launch_req *r)
{
    LAUNCH_BODY(EMU_API_ID("cuLaunchKernel"), r,
                real(r->f, r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2], r->smem,
                     r->stream, r->params, r->extra));
}

static CUresult launch_cooperative(cooperative_fn real, const struct drv_launch_req *r)
{
    LAUNCH_BODY(EMU_API_ID("cuLaunchCooperativeKernel"), r,
                real(r->f, r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2], r->smem,
                     r->stream, r->params));
}

static CUresult launch_ex(launch_ex_fn real, const CUlaunchConfig *config, struct drv_launch_req *r)
{
    /* a configuration the driver refuses: the call fails, nothing to measure */
    if (drv_launch_config(config, r) != CUDA_SUCCESS)
        return real(config, r->f, r->params, r->extra);
    LAUNCH_BODY(EMU_API_ID("cuLaunchKernelEx"), r, real(config, r->f, r->params, r->extra));
}

#define LAUNCH_KERNEL(NAME, PT) \
    CUresult NAME(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, \
                  unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, \
                  unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) \
    { \
        PROF_REAL_OR(prof_cuda, NAME, CUDA_ERROR_NOT_SUPPORTED); \
        struct drv_launch_req r = { .f = f, .grid = { gridDimX, gridDimY, gridDimZ }, \
                                    .block = { blockDimX, blockDimY, blockDimZ }, .smem = sharedMemBytes, \
                                    .stream = hStream, .params = kernelParams, .extra = extra, .per_thread = PT }; \
        return launch(real, &r); \
    }

LAUNCH_KERNEL(cuLaunchKernel, 0)
LAUNCH_KERNEL(cuLaunchKernel_ptsz, 1)

#define LAUNCH_COOPERATIVE(NAME, PT) \
    CUresult NAME(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, \
                  unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, \
                  unsigned int sharedMemBytes, CUstream hStream, void **kernelParams) \
    { \
        PROF_REAL_OR(prof_cuda, NAME, CUDA_ERROR_NOT_SUPPORTED); \
        struct drv_launch_req r = { .f = f, .grid = { gridDimX, gridDimY, gridDimZ }, \
                                    .block = { blockDimX, blockDimY, blockDimZ }, .smem = sharedMemBytes, \
                                    .stream = hStream, .params = kernelParams, \
                                    .flags = MAYA_LAUNCH_COOPERATIVE, .per_thread = PT }; \
        return launch_cooperative(real, &r); \
    }

LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel, 0)
LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel_ptsz, 1)

#define LAUNCH_EX(NAME, PT) \
    CUresult NAME(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra) \
    { \
        PROF_REAL_OR(prof_cuda, NAME, CUDA_ERROR_NOT_SUPPORTED); \
        struct drv_launch_req r = { .f = f, .params = kernelParams, .extra = extra, .per_thread = PT }; \
        return launch_ex(real, config, &r); \
    }

LAUNCH_EX(cuLaunchKernelEx, 0)
LAUNCH_EX(cuLaunchKernelEx_ptsz, 1)

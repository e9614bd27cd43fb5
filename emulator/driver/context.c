/* Contexts: the per-thread context stack, primary contexts, context flags,
 * limits and synchronisation. A CUcontext is the core's struct emu_ctx; the
 * runtime's cudaSetDevice makes a device's primary context current on the
 * same stack, so programs that mix the two APIs see one current context. */
#include "drv.h"

#include <string.h>

#define CTX_STACK_MAX ((int)(sizeof emu_thread()->ctx / sizeof emu_thread()->ctx[0]))

/* The context a call names: ctx, or the current one when ctx is NULL. */
static struct emu_ctx *ctx_or_current(CUcontext ctx)
{
    if (ctx)
        return emu_ctx_valid((struct emu_ctx *)ctx) ? (struct emu_ctx *)ctx : NULL;
    struct emu_thread *t = emu_thread();
    return t->nctx > 0 ? t->ctx[t->nctx - 1] : NULL;
}

static int flags_valid(unsigned flags)
{
    unsigned sched = flags & CU_CTX_SCHED_MASK;
    return !(flags & ~(unsigned)CU_CTX_FLAGS_MASK) &&
           (sched == CU_CTX_SCHED_AUTO || sched == CU_CTX_SCHED_SPIN || sched == CU_CTX_SCHED_YIELD ||
            sched == CU_CTX_SCHED_BLOCKING_SYNC);
}

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    if (!pctx || !flags_valid(flags))
        return CUDA_ERROR_INVALID_VALUE;
    if (!emu_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    struct emu_thread *t = emu_thread();
    if (t->nctx >= CTX_STACK_MAX)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct emu_ctx *c = emu_ctx_create(dev, flags);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* A new context becomes current: it is pushed on the thread's stack. */
    t->ctx[t->nctx++] = c;
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)
{
    DRV_ENTER();
    /* Execution affinity (SM partitions) and CIG need MPS or graphics
     * interop, neither of which is emulated. */
    if (ctxCreateParams && (ctxCreateParams->numExecAffinityParams > 0 || ctxCreateParams->cigParams))
        DRV_RETURN(CUDA_ERROR_NOT_SUPPORTED);
    DRV_RETURN(ctx_create(pctx, flags, dev));
}

CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
                        CUdevice dev)
{
    DRV_ENTER();
    if (numParams < 0 || (numParams > 0 && !paramsArray))
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (numParams > 0)
        DRV_RETURN(CUDA_ERROR_NOT_SUPPORTED);
    DRV_RETURN(ctx_create(pctx, flags, dev));
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    DRV_ENTER();
    DRV_RETURN(ctx_create(pctx, flags, dev));
}

CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    DRV_ENTER();
    if (!ctx)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_RETURN(drv_error(emu_ctx_destroy((struct emu_ctx *)ctx)));
}

CUresult cuCtxDestroy(CUcontext ctx)
{
    return cuCtxDestroy_v2(ctx);
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    DRV_ENTER();
    struct emu_thread *t = emu_thread();
    if (!ctx || !emu_ctx_valid((struct emu_ctx *)ctx))
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    if (t->nctx >= CTX_STACK_MAX)
        DRV_RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    t->ctx[t->nctx++] = (struct emu_ctx *)ctx;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxPushCurrent(CUcontext ctx)
{
    return cuCtxPushCurrent_v2(ctx);
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    DRV_ENTER();
    struct emu_thread *t = emu_thread();
    if (t->nctx == 0)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    struct emu_ctx *c = t->ctx[--t->nctx];
    if (pctx)
        *pctx = (CUcontext)c;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxPopCurrent(CUcontext *pctx)
{
    return cuCtxPopCurrent_v2(pctx);
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    DRV_ENTER();
    struct emu_thread *t = emu_thread();
    if (!ctx) {
        /* Unbind: the top of the stack goes. */
        if (t->nctx > 0)
            t->nctx--;
        DRV_RETURN(CUDA_SUCCESS);
    }
    if (!emu_ctx_valid((struct emu_ctx *)ctx))
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    if (t->nctx == 0)
        t->nctx = 1;
    t->ctx[t->nctx - 1] = (struct emu_ctx *)ctx;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    DRV_ENTER();
    if (!pctx)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *pctx = (CUcontext)ctx_or_current(NULL);
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    DRV_ENTER();
    if (!device)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_NEED_CTX(dev);
    *device = dev;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    DRV_ENTER();
    struct emu_ctx *c = ctx_or_current(ctx);
    if (!device)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!c)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    *device = c->device;
    DRV_RETURN(CUDA_SUCCESS);
}

/* A context's flags: a primary context's live on its device. */
static unsigned *ctx_flags(struct emu_ctx *c)
{
    return c->primary ? &emu_device(c->device)->primary_flags : &c->flags;
}

CUresult cuCtxGetFlags(unsigned int *flags)
{
    DRV_ENTER();
    struct emu_ctx *c = ctx_or_current(NULL);
    if (!flags)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!c)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    *flags = *ctx_flags(c);
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxSetFlags(unsigned int flags)
{
    DRV_ENTER();
    struct emu_ctx *c = ctx_or_current(NULL);
    if (!c)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    if (!flags_valid(flags))
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *ctx_flags(c) = flags;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    DRV_ENTER();
    struct emu_ctx *c = ctx_or_current(ctx);
    if (!ctxId)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!c)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    *ctxId = c->id;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    DRV_ENTER();
    struct emu_ctx *c = ctx_or_current(ctx);
    if (!version)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!c)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    *version = 3020; /* what every context made since CUDA 3.2 reports */
    DRV_RETURN(CUDA_SUCCESS);
}

static CUresult ctx_synchronize(uint32_t api, uint64_t t0, struct emu_ctx *c)
{
    if (!c) {
        emu_trace_call(api, t0, CUDA_ERROR_INVALID_CONTEXT, 0, 0);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    /* Everything emulated is done at once but host functions, which run
     * for real; the trace tells the simulator the host waits. Refused while
     * the thread's capture mode forbids it, as cudaDeviceSynchronize. */
    CUresult e = drv_error(emu_device_sync(c->device, api, t0));
    if (e != CUDA_SUCCESS)
        emu_trace_call(api, t0, e, 0, 0);
    return e;
}

CUresult cuCtxSynchronize(void)
{
    DRV_ENTER();
    return ctx_synchronize(DRV_API(), drv_t0, ctx_or_current(NULL));
}

CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    DRV_ENTER();
    return ctx_synchronize(DRV_API(), drv_t0, ctx_or_current(ctx));
}

CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    DRV_ENTER();
    DRV_NEED_CTX(dev);
    enum emu_err e = emu_limit_set(dev, (int)limit, value);
    DRV_RETURN(e == EMU_ERR_NOT_SUPPORTED ? CUDA_ERROR_UNSUPPORTED_LIMIT : drv_error(e));
}

CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    DRV_ENTER();
    if (!pvalue)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_NEED_CTX(dev);
    uint64_t v = 0;
    enum emu_err e = emu_limit_get(dev, (int)limit, &v);
    if (e == EMU_OK)
        *pvalue = v;
    DRV_RETURN(e == EMU_ERR_NOT_SUPPORTED ? CUDA_ERROR_UNSUPPORTED_LIMIT : drv_error(e));
}

CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    DRV_ENTER();
    DRV_NEED_CTX(dev);
    (void)dev;
    if (leastPriority)
        *leastPriority = 0;
    if (greatestPriority)
        *greatestPriority = -5;
    DRV_RETURN(CUDA_SUCCESS);
}

/* Cache and bank preferences are hints a GPU may ignore; remembered per
 * thread's context for the Get calls. */
static __thread CUfunc_cache cache_config = CU_FUNC_CACHE_PREFER_NONE;

CUresult cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
    DRV_ENTER();
    if (!pconfig)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_NEED_CTX(dev);
    (void)dev;
    *pconfig = cache_config;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxSetCacheConfig(CUfunc_cache config)
{
    DRV_ENTER();
    if ((unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_NEED_CTX(dev);
    (void)dev;
    cache_config = config;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxGetSharedMemConfig(CUsharedconfig *pConfig)
{
    DRV_ENTER();
    if (!pConfig)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *pConfig = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxSetSharedMemConfig(CUsharedconfig config)
{
    DRV_ENTER();
    DRV_RETURN((unsigned)config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE ? CUDA_ERROR_INVALID_VALUE
                                                                           : CUDA_SUCCESS);
}

CUresult cuCtxResetPersistingL2Cache(void)
{
    DRV_ENTER();
    DRV_NEED_CTX(dev);
    (void)dev;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxGetExecAffinity(CUexecAffinityParam *pExecAffinity, CUexecAffinityType type)
{
    DRV_ENTER();
    if (!pExecAffinity || type != CU_EXEC_AFFINITY_TYPE_SM_COUNT)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_NEED_CTX(dev);
    pExecAffinity->type = type;
    pExecAffinity->param.smCount.val = (unsigned)emu_device(dev)->prop.multiProcessorCount;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
    DRV_ENTER();
    struct emu_ctx *peer = ctx_or_current(peerContext);
    if (!peerContext || !peer)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    if (Flags != 0)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_NEED_CTX(dev);
    if (peer->device == dev)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    struct emu_device *d = emu_device(dev);
    if (d->peer_enabled[peer->device])
        DRV_RETURN(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    d->peer_enabled[peer->device] = 1;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuCtxDisablePeerAccess(CUcontext peerContext)
{
    DRV_ENTER();
    struct emu_ctx *peer = ctx_or_current(peerContext);
    if (!peerContext || !peer)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    DRV_NEED_CTX(dev);
    struct emu_device *d = emu_device(dev);
    if (!d->peer_enabled[peer->device])
        DRV_RETURN(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    d->peer_enabled[peer->device] = 0;
    DRV_RETURN(CUDA_SUCCESS);
}

/* ---- primary contexts ---- */

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!pctx)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    struct emu_ctx *c = emu_primary_ctx(dev);
    if (!c)
        DRV_RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    __atomic_add_fetch(&d->primary_refs, 1, __ATOMIC_RELAXED);
    d->primary_active = 1;
    *pctx = (CUcontext)c;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    if (d->primary_refs <= 0)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    /* The last release deactivates the context; its memory is kept (the
     * runtime may still hold it, and freeing would only move the peak). */
    if (__atomic_sub_fetch(&d->primary_refs, 1, __ATOMIC_RELAXED) == 0)
        d->primary_active = 0;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return cuDevicePrimaryCtxRelease_v2(dev);
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    if (!flags_valid(flags))
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    d->primary_flags = flags;
    DRV_RETURN(CUDA_SUCCESS);
}

/* The first version refused to change an active context's flags. */
CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    struct emu_device *d = emu_enter() == EMU_OK && emu_driver_initialized ? emu_device(dev) : NULL;
    if (d && d->primary_active)
        return CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE;
    return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!flags || !active)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    *flags = d->primary_flags;
    *active = d->primary_active;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    DRV_ENTER();
    struct emu_device *d = emu_device(dev);
    if (!d)
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    /* Pending host work finishes first, as a reset waits for the device. */
    emu_hostfn_drain(NULL);
    d->primary_active = 0;
    d->primary_flags = 0;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
    return cuDevicePrimaryCtxReset_v2(dev);
}

/* Errors and version, NCCL's memory and registration calls, and custom
 * reduction operators. */
#define _GNU_SOURCE
#include "nc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ---- */

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_error[1024];

ncclResult_t nc_vfail(ncclResult_t code, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    pthread_mutex_lock(&err_lock);
    snprintf(last_error, sizeof last_error, "%s", msg);
    pthread_mutex_unlock(&err_lock);
    fprintf(stderr, "maya-emu: nccl: %s\n", msg);
    return code;
}

ncclResult_t nc_fail(ncclResult_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nc_vfail(code, fmt, ap);
    va_end(ap);
    return code;
}

double nc_timeout_s(void)
{
    static double timeout;
    if (timeout > 0)
        return timeout;
    double t = 600;
    const char *s = getenv("MAYA_NCCL_TIMEOUT");
    if (s && *s) {
        char *end;
        double v = strtod(s, &end);
        if (*end || !(v > 0) || v > 1e7)
            fprintf(stderr, "maya-emu: nccl: MAYA_NCCL_TIMEOUT=\"%s\": expected seconds (a number above 0); "
                    "using %g\n", s, t);
        else
            t = v;
    }
    timeout = t;
    return t;
}

const char *ncclGetErrorString(ncclResult_t result)
{
    /* NCCL's own wording: programs print it. */
    switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}
NC_ALIAS(ncclGetErrorString);

const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm; /* NCCL keeps one last error per process too */
    return last_error;
}
NC_ALIAS(ncclGetLastError);

ncclResult_t ncclGetVersion(int *version)
{
    if (!version)
        return nc_fail(ncclInvalidArgument, "ncclGetVersion: version is NULL");
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}
NC_ALIAS(ncclGetVersion);

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void ncclResetDebugInit(void)
{
    /* NCCL_DEBUG is not read: the emulator reports on its own. */
}
NC_ALIAS(ncclResetDebugInit);
#pragma GCC diagnostic pop

/* ---- memory ---- */

ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
    NC_ENTER();
    if (!ptr)
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclMemAlloc: ptr is NULL"));
    *ptr = NULL;
    if (size == 0)
        NC_RETURN(ncclSuccess);
    int dev = emu_current_device();
    emu_primary_ctx(dev);
    uint64_t p = 0;
    enum emu_err e = emu_mem_alloc(dev, size, MAYA_ALLOC_DEVICE, 0, &p);
    ncclResult_t r = ncclSuccess;
    if (e != EMU_OK)
        r = nc_fail(ncclUnhandledCudaError, "ncclMemAlloc of %zu bytes on device %d failed: %s", size, dev,
                    e == EMU_ERR_OUT_OF_MEMORY ? "out of memory" : "invalid device");
    else
        *ptr = (void *)(uintptr_t)p;
    emu_trace_alloc(MAYA_REC_ALLOC, NC_API(), nc_t0, r, p, size, MAYA_ALLOC_DEVICE, dev, 0, 0);
    return r;
}
NC_ALIAS(ncclMemAlloc);

ncclResult_t ncclMemFree(void *ptr)
{
    NC_ENTER();
    if (!ptr)
        NC_RETURN(ncclSuccess);
    struct emu_alloc a;
    if (emu_mem_free((uint64_t)(uintptr_t)ptr, 1 << MAYA_ALLOC_DEVICE, &a) != EMU_OK)
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclMemFree: %p was not allocated by ncclMemAlloc", ptr));
    emu_trace_alloc(MAYA_REC_FREE, NC_API(), nc_t0, ncclSuccess, a.base, a.bytes, a.kind, a.device, 0, 0);
    return ncclSuccess;
}
NC_ALIAS(ncclMemFree);

/* ---- registration: nothing to set up on an emulated device ---- */

#define REG_MAGIC 0x72656721u

struct nc_reg {
    uint32_t magic;
    struct ncclComm *comm;
    void *buff;
    size_t size;
};

static ncclResult_t reg_new(struct ncclComm *comm, void *buff, size_t size, void **out, const char *api)
{
    ncclResult_t r = nc_comm_ready(comm, api);
    if (r != ncclSuccess)
        return r;
    if (!out)
        return nc_fail(ncclInvalidArgument, "%s: the handle pointer is NULL", api);
    struct nc_reg *g = calloc(1, sizeof *g);
    if (!g)
        return nc_fail(ncclSystemError, "%s: out of memory", api);
    *g = (struct nc_reg){ REG_MAGIC, comm, buff, size };
    *out = g;
    return ncclSuccess;
}

static ncclResult_t reg_free(struct ncclComm *comm, void *handle, const char *api)
{
    ncclResult_t r = nc_comm_ready(comm, api);
    if (r != ncclSuccess)
        return r;
    struct nc_reg *g = handle;
    if (!g || g->magic != REG_MAGIC || g->comm != comm)
        return nc_fail(ncclInvalidArgument, "%s: the handle was not registered on this communicator", api);
    g->magic = 0;
    free(g);
    return ncclSuccess;
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    NC_ENTER();
    NC_RETURN(reg_new(comm, buff, size, handle, __func__));
}
NC_ALIAS(ncclCommRegister);

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
    NC_ENTER();
    NC_RETURN(reg_free(comm, handle, __func__));
}
NC_ALIAS(ncclCommDeregister);

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags)
{
    NC_ENTER();
    if (winFlags & ~NCCL_WIN_COLL_SYMMETRIC)
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclCommWindowRegister: winFlags 0x%x", winFlags));
    NC_RETURN(reg_new(comm, buff, size, (void **)win, __func__));
}
NC_ALIAS(ncclCommWindowRegister);

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
    NC_ENTER();
    NC_RETURN(reg_free(comm, win, __func__));
}
NC_ALIAS(ncclCommWindowDeregister);

/* ---- custom reductions ---- */

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm)
{
    NC_ENTER();
    ncclResult_t r = nc_comm_ready(comm, __func__);
    if (r != ncclSuccess)
        NC_RETURN(r);
    if (!op || !scalar || nc_type_size(datatype) == 0 ||
        (residence != ncclScalarDevice && residence != ncclScalarHostImmediate))
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclRedOpCreatePreMulSum: op=%p scalar=%p datatype=%d "
                          "residence=%d", (void *)op, scalar, (int)datatype, (int)residence));
    int i = 0;
    while (i < comm->nredops && comm->redops[i].live)
        i++;
    if (i == comm->nredops) {
        struct nc_redop *p = realloc(comm->redops, (size_t)(i + 1) * sizeof *p);
        if (!p)
            NC_RETURN(nc_fail(ncclSystemError, "ncclRedOpCreatePreMulSum: out of memory"));
        comm->redops = p;
        comm->nredops = i + 1;
    }
    struct nc_redop *o = &comm->redops[i];
    memset(o, 0, sizeof *o);
    o->live = 1;
    o->dtype = datatype;
    o->residence = residence;
    if (residence == ncclScalarHostImmediate)
        memcpy(o->scalar, scalar, nc_type_size(datatype));
    else
        o->scalar_ptr = scalar;
    *op = (ncclRedOp_t)(ncclNumOps + i);
    NC_RETURN(ncclSuccess);
}
NC_ALIAS(ncclRedOpCreatePreMulSum);

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
    NC_ENTER();
    ncclResult_t r = nc_comm_ready(comm, __func__);
    if (r != ncclSuccess)
        NC_RETURN(r);
    int i = (int)op - ncclNumOps;
    if ((int)op < ncclNumOps || i >= comm->nredops || !comm->redops[i].live)
        NC_RETURN(nc_fail(ncclInvalidArgument, "ncclRedOpDestroy: %d is not a reduction made by "
                          "ncclRedOpCreatePreMulSum on this communicator", (int)op));
    comm->redops[i].live = 0;
    NC_RETURN(ncclSuccess);
}
NC_ALIAS(ncclRedOpDestroy);

/* Device-API sizing: not modelled (the device API's kernels need a GPU). */
int ncclLLA2ACalcSlots(int maxElts, int maxEltSize)
{
    (void)maxElts;
    (void)maxEltSize;
    emu_enter();
    emu_unsupported("ncclLLA2ACalcSlots", 0);
    return 0;
}
extern __typeof__(ncclLLA2ACalcSlots) pncclLLA2ACalcSlots __attribute__((alias("ncclLLA2ACalcSlots")));

/* Runtime errors: the last error, and names and descriptions of codes. */
#include "rt.h"

#include <stddef.h>
#include <stdio.h>

struct err_name {
    const char *name;
    int value;
    const char *doc;
};

/* Every cudaError_t the installed headers define (generated at build time). */
static const struct err_name names[] = {
#include "cudart_errors.inc"
};

/* The short strings the real runtime returns for the codes programs meet
 * most; others fall back to the header's description. */
static const struct { int value; const char *text; } short_strings[] = {
    { cudaSuccess, "no error" },
    { cudaErrorInvalidValue, "invalid argument" },
    { cudaErrorMemoryAllocation, "out of memory" },
    { cudaErrorInitializationError, "initialization error" },
    { cudaErrorInvalidConfiguration, "invalid configuration argument" },
    { cudaErrorInvalidDevice, "invalid device ordinal" },
    { cudaErrorInvalidDevicePointer, "invalid device pointer" },
    { cudaErrorInvalidResourceHandle, "invalid resource handle" },
    { cudaErrorNotReady, "device not ready" },
    { cudaErrorNoDevice, "no CUDA-capable device is detected" },
    { cudaErrorNotSupported, "operation not supported" },
    { cudaErrorInvalidDeviceFunction, "invalid device function" },
    { cudaErrorSymbolNotFound, "named symbol not found" },
    { cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing" },
    { cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture" },
    { cudaErrorIllegalState, "the operation cannot be performed in the present state" },
    { cudaErrorPeerAccessAlreadyEnabled, "peer access is already enabled" },
    { cudaErrorPeerAccessNotEnabled, "peer access has not been enabled" },
    { cudaErrorInvalidKernelImage, "device kernel image is invalid" },
    { cudaErrorIllegalAddress, "an illegal memory access was encountered" },
    { cudaErrorLaunchFailure, "unspecified launch failure" },
    { cudaErrorMissingConfiguration, "__global__ function call is not configured" },
    { cudaErrorInvalidSymbol, "invalid device symbol" },
    { cudaErrorInvalidPitchValue, "invalid pitch argument" },
    { cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy" },
    { cudaErrorUnsupportedLimit, "unsupported limit" },
    { cudaErrorStreamCaptureUnjoined, "capture sequence contains a fork that was not joined to the primary stream" },
    { cudaErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream" },
    { cudaErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream" },
    { cudaErrorStreamCaptureUnmatched, "capture sequence was not initiated in this stream" },
    { cudaErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread" },
    { cudaErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped" },
    { cudaErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region" },
};

cudaError_t rt_error(enum emu_err e)
{
    switch (e) {
    case EMU_OK: return cudaSuccess;
    case EMU_ERR_INVALID_VALUE: return cudaErrorInvalidValue;
    case EMU_ERR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case EMU_ERR_INVALID_DEVICE: return emu_device_count() ? cudaErrorInvalidDevice : cudaErrorNoDevice;
    case EMU_ERR_NO_DEVICE: return cudaErrorNoDevice;
    case EMU_ERR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
    case EMU_ERR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
    case EMU_ERR_NOT_READY: return cudaErrorNotReady;
    case EMU_ERR_NOT_SUPPORTED: return cudaErrorNotSupported;
    case EMU_ERR_INIT: return cudaErrorInitializationError;
    case EMU_ERR_NOT_INITIALIZED: return cudaErrorInitializationError;
    case EMU_ERR_INVALID_DEVICE_PTR: return cudaErrorInvalidDevicePointer;
    case EMU_ERR_NOT_FOUND: return cudaErrorSymbolNotFound;
    case EMU_ERR_CAPTURE_UNSUPPORTED: return cudaErrorStreamCaptureUnsupported;
    case EMU_ERR_CAPTURE_INVALIDATED: return cudaErrorStreamCaptureInvalidated;
    case EMU_ERR_ILLEGAL_STATE: return cudaErrorIllegalState;
    case EMU_ERR_ALREADY_MAPPED: return cudaErrorHostMemoryAlreadyRegistered;
    case EMU_ERR_NOT_MAPPED: return cudaErrorHostMemoryNotRegistered;
    case EMU_ERR_INVALID_CONFIG: return cudaErrorInvalidConfiguration;
    case EMU_ERR_INVALID_IMAGE: return cudaErrorInvalidKernelImage;
    case EMU_ERR_PEER_ACCESS_ALREADY_ENABLED: return cudaErrorPeerAccessAlreadyEnabled;
    case EMU_ERR_PEER_ACCESS_NOT_ENABLED: return cudaErrorPeerAccessNotEnabled;
    case EMU_ERR_CAPTURE_UNJOINED: return cudaErrorStreamCaptureUnjoined;
    case EMU_ERR_CAPTURE_IMPLICIT: return cudaErrorStreamCaptureImplicit;
    case EMU_ERR_CAPTURE_ISOLATION: return cudaErrorStreamCaptureIsolation;
    case EMU_ERR_CAPTURE_UNMATCHED: return cudaErrorStreamCaptureUnmatched;
    case EMU_ERR_CAPTURE_WRONG_THREAD: return cudaErrorStreamCaptureWrongThread;
    case EMU_ERR_GRAPH_UPDATE: return cudaErrorGraphExecUpdateFailure;
    }
    return cudaErrorUnknown;
}

int rt_sticky;

cudaError_t rt_sticky_call(uint32_t api)
{
    cudaError_t e = (cudaError_t)rt_sticky;
    emu_trace_call(api, emu_now(), e, 0, 0);
    return rt_note(e);
}

/* MAYA_INJECT_FAULT=N: the N-th launch faults. The launch itself returns
 * success (a kernel's fault is reported later, asynchronously); every call
 * after it returns cudaErrorIllegalAddress. */
void rt_count_launch(void)
{
    static uint64_t launches;
    uint64_t n = __atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
    if (n == emu_config()->fault_launch) {
        __atomic_store_n(&rt_sticky, cudaErrorIllegalAddress, __ATOMIC_RELEASE);
        if (!emu_config()->quiet)
            fprintf(stderr, "maya-emu: launch %llu faults (MAYA_INJECT_FAULT): the process now has the "
                    "sticky error cudaErrorIllegalAddress\n", (unsigned long long)n);
    }
}

/* The last error: a sticky error stays; any other is cleared by reading. */
cudaError_t cudaGetLastError(void)
{
    enum emu_err rc = emu_enter();
    if (rc != EMU_OK)
        return rt_error(rc);
    uint64_t t0 = emu_now();
    struct emu_thread *t = emu_thread();
    cudaError_t e = rt_sticky ? (cudaError_t)rt_sticky : (cudaError_t)t->runtime_error;
    t->runtime_error = cudaSuccess;
    emu_trace_call(RT_API(), t0, e, 0, 0);
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    enum emu_err rc = emu_enter();
    if (rc != EMU_OK)
        return rt_error(rc);
    uint64_t t0 = emu_now();
    cudaError_t e = rt_sticky ? (cudaError_t)rt_sticky : (cudaError_t)emu_thread()->runtime_error;
    emu_trace_call(RT_API(), t0, e, 0, 0);
    return e;
}

/* Name and string lookups work before and without the emulator starting
 * (programs call them on init failures), and are not traced. */
const char *cudaGetErrorName(cudaError_t error)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].value == (int)error)
            return names[i].name;
    return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t error)
{
    for (size_t i = 0; i < sizeof short_strings / sizeof short_strings[0]; i++)
        if (short_strings[i].value == (int)error)
            return short_strings[i].text;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].value == (int)error)
            return names[i].doc;
    return "unrecognized error code";
}

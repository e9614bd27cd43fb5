/* Runtime errors: the last error, and names and descriptions of codes. */
#include "rt.h"

#include <stddef.h>

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
};

cudaError_t rt_error(enum emu_err e)
{
    switch (e) {
    case EMU_OK: return cudaSuccess;
    case EMU_ERR_INVALID_VALUE: return cudaErrorInvalidValue;
    case EMU_ERR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case EMU_ERR_INVALID_DEVICE: return cudaErrorInvalidDevice;
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

cudaError_t cudaGetLastError(void)
{
    RT_ENTER();
    struct emu_thread *t = emu_thread();
    cudaError_t e = (cudaError_t)t->runtime_error;
    t->runtime_error = cudaSuccess;
    /* The call itself succeeds; what it returns is the old error. */
    emu_trace_call(RT_API(), rt_t0, e, 0, 0);
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    RT_ENTER();
    cudaError_t e = (cudaError_t)emu_thread()->runtime_error;
    emu_trace_call(RT_API(), rt_t0, e, 0, 0);
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

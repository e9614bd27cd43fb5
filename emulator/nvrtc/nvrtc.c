/* NVRTC stand-in: version and architecture queries, error strings.
 *
 * Run-time compilation itself (nvrtcCreateProgram, nvrtcCompileProgram, ...)
 * is not emulated: those entry points are the generated "not supported"
 * stubs, which return NVRTC_ERROR_INTERNAL_ERROR and are counted. PyTorch
 * loads NVRTC for its jiterator and fused kernels, which the workloads do
 * not use; it asks for nvrtcVersion when it opens the library. */
#include <cuda.h>
#include <nvrtc.h>

#include "emu_call.h"

/* The architectures NVRTC 13.0 compiles for, as the real library lists them. */
static const int supported_archs[] = { 75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121 };

nvrtcResult nvrtcVersion(int *major, int *minor)
{
    EMU_CALL_ENTER(NVRTC_ERROR_INTERNAL_ERROR);
    if (!major || !minor)
        EMU_CALL_RETURN(NVRTC_ERROR_INVALID_INPUT);
    *major = CUDA_VERSION / 1000;
    *minor = CUDA_VERSION % 1000 / 10;
    EMU_CALL_RETURN(NVRTC_SUCCESS);
}

nvrtcResult nvrtcGetNumSupportedArchs(int *count)
{
    EMU_CALL_ENTER(NVRTC_ERROR_INTERNAL_ERROR);
    if (!count)
        EMU_CALL_RETURN(NVRTC_ERROR_INVALID_INPUT);
    *count = (int)MAYA_ARRAY_LEN(supported_archs);
    EMU_CALL_RETURN(NVRTC_SUCCESS);
}

nvrtcResult nvrtcGetSupportedArchs(int *archs)
{
    EMU_CALL_ENTER(NVRTC_ERROR_INTERNAL_ERROR);
    if (!archs)
        EMU_CALL_RETURN(NVRTC_ERROR_INVALID_INPUT);
    for (size_t i = 0; i < MAYA_ARRAY_LEN(supported_archs); i++)
        archs[i] = supported_archs[i];
    EMU_CALL_RETURN(NVRTC_SUCCESS);
}

/* The real library returns the enumerator's name. */
const char *nvrtcGetErrorString(nvrtcResult result)
{
    static const char *const names[] = {
        "NVRTC_SUCCESS",
        "NVRTC_ERROR_OUT_OF_MEMORY",
        "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
        "NVRTC_ERROR_INVALID_INPUT",
        "NVRTC_ERROR_INVALID_PROGRAM",
        "NVRTC_ERROR_INVALID_OPTION",
        "NVRTC_ERROR_COMPILATION",
        "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
        "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
        "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
        "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
        "NVRTC_ERROR_INTERNAL_ERROR",
        "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
        "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
        "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED",
        "NVRTC_ERROR_PCH_CREATE",
        "NVRTC_ERROR_CANCELLED",
        "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
    };
    if ((unsigned)result < MAYA_ARRAY_LEN(names))
        return names[result];
    return "NVRTC_ERROR unknown";
}

/* cuSOLVER stand-in: version queries and dense-solver handles (created by
 * PyTorch's linear algebra before any factorisation). The factorisations
 * themselves are not emulated: the generated stubs return
 * CUSOLVER_STATUS_NOT_SUPPORTED and are counted. */
#include <cusolverDn.h>

#include "emu_call.h"

#define SOLVER_MAGIC 0x736f6c76u

struct cusolverDnContext {
    struct emu_lib_handle h;
};

cusolverStatus_t cusolverGetVersion(int *version)
{
    EMU_CALL_ENTER(CUSOLVER_STATUS_NOT_INITIALIZED);
    if (!version)
        EMU_CALL_RETURN(CUSOLVER_STATUS_INVALID_VALUE);
    *version = CUSOLVER_VERSION;
    EMU_CALL_RETURN(CUSOLVER_STATUS_SUCCESS);
}

cusolverStatus_t cusolverGetProperty(libraryPropertyType type, int *value)
{
    EMU_CALL_ENTER(CUSOLVER_STATUS_NOT_INITIALIZED);
    if (emu_library_property(type, CUSOLVER_VER_MAJOR, CUSOLVER_VER_MINOR, CUSOLVER_VER_PATCH, value))
        EMU_CALL_RETURN(CUSOLVER_STATUS_INVALID_VALUE);
    EMU_CALL_RETURN(CUSOLVER_STATUS_SUCCESS);
}

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *handle)
{
    EMU_CALL_ENTER(CUSOLVER_STATUS_NOT_INITIALIZED);
    if (!handle)
        EMU_CALL_RETURN(CUSOLVER_STATUS_INVALID_VALUE);
    *handle = emu_lib_handle_new(sizeof **handle, SOLVER_MAGIC);
    EMU_CALL_RETURN(*handle ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_ALLOC_FAILED);
}

cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle)
{
    EMU_CALL_ENTER(CUSOLVER_STATUS_NOT_INITIALIZED);
    if (!emu_lib_handle_ok(handle, SOLVER_MAGIC))
        EMU_CALL_RETURN(CUSOLVER_STATUS_NOT_INITIALIZED);
    emu_lib_handle_free(handle);
    EMU_CALL_RETURN(CUSOLVER_STATUS_SUCCESS);
}

cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream)
{
    EMU_CALL_ENTER(CUSOLVER_STATUS_NOT_INITIALIZED);
    if (!emu_lib_handle_ok(handle, SOLVER_MAGIC))
        EMU_CALL_RETURN(CUSOLVER_STATUS_NOT_INITIALIZED);
    if (!emu_stream_resolve(stream, 0))
        EMU_CALL_RETURN(CUSOLVER_STATUS_INVALID_VALUE);
    handle->h.stream = stream;
    EMU_CALL_RETURN_STREAM(CUSOLVER_STATUS_SUCCESS, emu_stream_id(stream));
}

cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t handle, cudaStream_t *stream)
{
    EMU_CALL_ENTER(CUSOLVER_STATUS_NOT_INITIALIZED);
    if (!emu_lib_handle_ok(handle, SOLVER_MAGIC))
        EMU_CALL_RETURN(CUSOLVER_STATUS_NOT_INITIALIZED);
    if (!stream)
        EMU_CALL_RETURN(CUSOLVER_STATUS_INVALID_VALUE);
    *stream = (cudaStream_t)handle->h.stream;
    EMU_CALL_RETURN(CUSOLVER_STATUS_SUCCESS);
}

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

static cusolverStatus_t status_of(enum emu_err e)
{
    return e == EMU_OK ? CUSOLVER_STATUS_SUCCESS
         : e == EMU_ERR_INVALID_HANDLE ? CUSOLVER_STATUS_NOT_INITIALIZED
         : e == EMU_ERR_OUT_OF_MEMORY ? CUSOLVER_STATUS_ALLOC_FAILED
         : CUSOLVER_STATUS_INVALID_VALUE;
}

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *handle)
{
    EMU_CALL_ENTER(CUSOLVER_STATUS_NOT_INITIALIZED);
    EMU_CALL_RETURN(status_of(emu_lib_create((void **)handle, sizeof **handle, SOLVER_MAGIC)));
}

cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle)
{
    EMU_CALL_ENTER(CUSOLVER_STATUS_NOT_INITIALIZED);
    EMU_CALL_RETURN(status_of(emu_lib_destroy(handle, SOLVER_MAGIC)));
}

cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream)
{
    EMU_CALL_ENTER(CUSOLVER_STATUS_NOT_INITIALIZED);
    EMU_CALL_RETURN_STREAM(status_of(emu_lib_set_stream(handle, SOLVER_MAGIC, stream)), emu_stream_id(stream));
}

cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t handle, cudaStream_t *stream)
{
    EMU_CALL_ENTER(CUSOLVER_STATUS_NOT_INITIALIZED);
    EMU_CALL_RETURN(status_of(emu_lib_get_stream(handle, SOLVER_MAGIC, (void **)stream)));
}

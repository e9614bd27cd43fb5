/* cuSPARSE stand-in: handles, streams, version queries and error strings.
 * Sparse kernels are not emulated: the generated stubs return
 * CUSPARSE_STATUS_NOT_SUPPORTED and are counted. */
/* The header marks old types deprecated; this file only names the handle. */
#define DISABLE_CUSPARSE_DEPRECATED
#include <cusparse.h>

#include "emu_call.h"
#include "status_names.h"

#define SPARSE_MAGIC 0x73707273u

struct cusparseContext {
    struct emu_lib_handle h;
    cusparsePointerMode_t pointer_mode;
};

static cusparseStatus_t status_of(enum emu_err e)
{
    return e == EMU_OK ? CUSPARSE_STATUS_SUCCESS
         : e == EMU_ERR_INVALID_HANDLE ? CUSPARSE_STATUS_NOT_INITIALIZED
         : e == EMU_ERR_OUT_OF_MEMORY ? CUSPARSE_STATUS_ALLOC_FAILED
         : CUSPARSE_STATUS_INVALID_VALUE;
}

cusparseStatus_t cusparseCreate(cusparseHandle_t *handle)
{
    EMU_CALL_ENTER(CUSPARSE_STATUS_NOT_INITIALIZED);
    EMU_CALL_RETURN(status_of(emu_lib_create((void **)handle, sizeof **handle, SPARSE_MAGIC)));
}

cusparseStatus_t cusparseDestroy(cusparseHandle_t handle)
{
    EMU_CALL_ENTER(CUSPARSE_STATUS_NOT_INITIALIZED);
    EMU_CALL_RETURN(status_of(emu_lib_destroy(handle, SPARSE_MAGIC)));
}

cusparseStatus_t cusparseSetStream(cusparseHandle_t handle, cudaStream_t stream)
{
    EMU_CALL_ENTER(CUSPARSE_STATUS_NOT_INITIALIZED);
    EMU_CALL_RETURN_STREAM(status_of(emu_lib_set_stream(handle, SPARSE_MAGIC, stream)), emu_stream_id(stream));
}

cusparseStatus_t cusparseGetStream(cusparseHandle_t handle, cudaStream_t *stream)
{
    EMU_CALL_ENTER(CUSPARSE_STATUS_NOT_INITIALIZED);
    EMU_CALL_RETURN(status_of(emu_lib_get_stream(handle, SPARSE_MAGIC, (void **)stream)));
}

cusparseStatus_t cusparseSetPointerMode(cusparseHandle_t handle, cusparsePointerMode_t mode)
{
    EMU_CALL_ENTER(CUSPARSE_STATUS_NOT_INITIALIZED);
    if (!emu_lib_handle_ok(handle, SPARSE_MAGIC))
        EMU_CALL_RETURN(CUSPARSE_STATUS_NOT_INITIALIZED);
    if (mode != CUSPARSE_POINTER_MODE_HOST && mode != CUSPARSE_POINTER_MODE_DEVICE)
        EMU_CALL_RETURN(CUSPARSE_STATUS_INVALID_VALUE);
    handle->pointer_mode = mode;
    EMU_CALL_RETURN(CUSPARSE_STATUS_SUCCESS);
}

cusparseStatus_t cusparseGetPointerMode(cusparseHandle_t handle, cusparsePointerMode_t *mode)
{
    EMU_CALL_ENTER(CUSPARSE_STATUS_NOT_INITIALIZED);
    if (!emu_lib_handle_ok(handle, SPARSE_MAGIC))
        EMU_CALL_RETURN(CUSPARSE_STATUS_NOT_INITIALIZED);
    if (!mode)
        EMU_CALL_RETURN(CUSPARSE_STATUS_INVALID_VALUE);
    *mode = handle->pointer_mode;
    EMU_CALL_RETURN(CUSPARSE_STATUS_SUCCESS);
}

cusparseStatus_t cusparseGetVersion(cusparseHandle_t handle, int *version)
{
    EMU_CALL_ENTER(CUSPARSE_STATUS_NOT_INITIALIZED);
    if (!emu_lib_handle_ok(handle, SPARSE_MAGIC))
        EMU_CALL_RETURN(CUSPARSE_STATUS_NOT_INITIALIZED);
    if (!version)
        EMU_CALL_RETURN(CUSPARSE_STATUS_INVALID_VALUE);
    *version = CUSPARSE_VERSION;
    EMU_CALL_RETURN(CUSPARSE_STATUS_SUCCESS);
}

cusparseStatus_t cusparseGetProperty(libraryPropertyType type, int *value)
{
    EMU_CALL_ENTER(CUSPARSE_STATUS_NOT_INITIALIZED);
    if (emu_library_property(type, CUSPARSE_VER_MAJOR, CUSPARSE_VER_MINOR, CUSPARSE_VER_PATCH, value))
        EMU_CALL_RETURN(CUSPARSE_STATUS_INVALID_VALUE);
    EMU_CALL_RETURN(CUSPARSE_STATUS_SUCCESS);
}

const char *cusparseGetErrorName(cusparseStatus_t status)
{
    return cusparse_status_name(status, 0);
}

const char *cusparseGetErrorString(cusparseStatus_t status)
{
    return cusparse_status_name(status, 1);
}

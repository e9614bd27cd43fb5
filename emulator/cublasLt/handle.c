/* cuBLASLt handles, versions, status names, the logger and the heuristics
 * cache settings. */
#include <stdlib.h>

#include "lt.h"
#include "../cublas/status_names.h"

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle)
{
    LT_ENTER();
    if (!handle)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    int device = emu_current_device();
    if (!emu_device(device))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    cublasLtHandle_t h = emu_lib_handle_new(sizeof *h, LT_HANDLE_MAGIC);
    if (!h)
        EMU_CALL_RETURN(CUBLAS_STATUS_ALLOC_FAILED);
    h->device = device;
    *handle = h;
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
{
    LT_ENTER();
    if (!emu_lib_handle_ok(handle, LT_HANDLE_MAGIC)) /* a cuBLAS handle is cuBLAS's to destroy */
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    emu_lib_handle_free(handle);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

const char *cublasLtGetStatusName(cublasStatus_t status)
{
    return blas_status_name(status);
}

const char *cublasLtGetStatusString(cublasStatus_t status)
{
    return blas_status_string(status);
}

/* cuBLASLt 13.1.0, built with CUDA 13.0 (what the real library says). */
size_t cublasLtGetVersion(void)
{
    return CUBLAS_VERSION;
}

size_t cublasLtGetCudartVersion(void)
{
    return 13000;
}

cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int *value)
{
    LT_ENTER();
    if (emu_library_property(type, CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH, value))
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

/* The heuristics cache: maya's heuristics are computed, not cached, but
 * the capacity reads back as set (default 8192 entries, as the real one). */
static size_t cache_capacity = 8192;

cublasStatus_t cublasLtHeuristicsCacheGetCapacity(size_t *capacity)
{
    LT_ENTER();
    if (!capacity)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    *capacity = __atomic_load_n(&cache_capacity, __ATOMIC_RELAXED);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtHeuristicsCacheSetCapacity(size_t capacity)
{
    LT_ENTER();
    __atomic_store_n(&cache_capacity, capacity, __ATOMIC_RELAXED);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

/* cuBLASLt's API log is not reproduced (the trace records every call): the
 * logger settings are accepted as the real library accepts them. */
cublasStatus_t cublasLtLoggerSetCallback(cublasLtLoggerCallback_t callback)
{
    LT_ENTER();
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtLoggerSetFile(FILE *file)
{
    LT_ENTER();
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasLtLoggerOpenFile(const char *file)
{
    LT_ENTER();
    EMU_CALL_RETURN(file ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE);
}

/* Levels 0 (off) to 5 (API trace). */
cublasStatus_t cublasLtLoggerSetLevel(int level)
{
    LT_ENTER();
    EMU_CALL_RETURN(level >= 0 && level <= 5 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE);
}

cublasStatus_t cublasLtLoggerSetMask(int mask)
{
    LT_ENTER();
    EMU_CALL_RETURN(mask >= 0 && mask <= 31 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE);
}

cublasStatus_t cublasLtLoggerForceDisable(void)
{
    LT_ENTER();
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

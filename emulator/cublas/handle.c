/* cuBLAS handles: creation, version queries, the stream, the workspace and
 * the modes a handle carries, status names, the logger. */
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "status_names.h"

/* cuBLAS allocates a default workspace pool when it makes a context, 32 MiB
 * on Hopper and later and 4 MiB before (cuBLAS documentation,
 * cublasSetWorkspace): it counts against the device's memory. */
static uint64_t default_workspace_bytes(int device)
{
    const struct emu_device *d = emu_device(device);
    return d && d->prop.major >= 9 ? 32u << 20 : 4u << 20;
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    BLAS_ENTER();
    uint32_t api = EMU_API_ID(__func__);
    if (!handle)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    int device = emu_current_device();
    if (!emu_device(device))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    cublasHandle_t h = emu_lib_handle_new(sizeof *h, BLAS_MAGIC);
    if (!h)
        EMU_CALL_RETURN(CUBLAS_STATUS_ALLOC_FAILED);
    h->device = device;
    h->pointer_mode = CUBLAS_POINTER_MODE_HOST;
    h->atomics_mode = CUBLAS_ATOMICS_NOT_ALLOWED;
    h->math_mode = CUBLAS_DEFAULT_MATH;
    h->own_workspace_bytes = default_workspace_bytes(device);
    /* The call's record is the allocation of the default workspace. */
    if (emu_mem_alloc(device, h->own_workspace_bytes, MAYA_ALLOC_DEVICE, 0, &h->own_workspace) != EMU_OK) {
        emu_note_oom();
        emu_trace_alloc(MAYA_REC_ALLOC, api, emu_call_t0_, CUBLAS_STATUS_ALLOC_FAILED, 0,
                        h->own_workspace_bytes, MAYA_ALLOC_DEVICE, device, 0, 0);
        emu_lib_handle_free(h);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    emu_trace_alloc(MAYA_REC_ALLOC, api, emu_call_t0_, CUBLAS_STATUS_SUCCESS, h->own_workspace,
                    h->own_workspace_bytes, MAYA_ALLOC_DEVICE, device, 0, 0);
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    BLAS_ENTER();
    if (!blas_handle_ok(handle))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    struct emu_alloc freed = { 0 };
    emu_mem_free(handle->own_workspace, 1 << MAYA_ALLOC_DEVICE, &freed);
    emu_trace_alloc(MAYA_REC_FREE, EMU_API_ID(__func__), emu_call_t0_, CUBLAS_STATUS_SUCCESS,
                    handle->own_workspace, freed.bytes, MAYA_ALLOC_DEVICE, handle->device, 0, 0);
    emu_lib_handle_free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    BLAS_ENTER();
    if (!version)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    *version = CUBLAS_VERSION;
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
    BLAS_ENTER();
    if (emu_library_property(type, CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH, value))
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

/* The CUDA runtime version cuBLAS 13.1 was built with (the real one says so). */
size_t cublasGetCudartVersion(void)
{
    return 13000;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t bytes)
{
    BLAS_ENTER();
    if (!blas_handle_ok(handle))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    /* The workspace must be 256-byte aligned (cublasSetWorkspace); size 0
     * means no workspace at all, not the default pool. */
    if ((uintptr_t)workspace % 256)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    handle->user_workspace = 1;
    handle->workspace = (uint64_t)(uintptr_t)workspace;
    handle->workspace_bytes = bytes;
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    BLAS_ENTER();
    if (!blas_handle_ok(handle))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    /* cuBLAS takes any stream here; a bad one fails the next launch. Setting a
     * stream also drops a workspace set by the user (cuBLAS documentation). */
    handle->h.stream = stream;
    handle->user_workspace = 0;
    EMU_CALL_RETURN_STREAM(CUBLAS_STATUS_SUCCESS, emu_stream_id(stream));
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream)
{
    BLAS_ENTER();
    if (!blas_handle_ok(handle))
        EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED);
    if (!stream)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    *stream = (cudaStream_t)handle->h.stream;
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

/* A get/set pair of one int-sized field of the handle, with the values
 * allowed on set. */
#define HANDLE_FIELD(getter, setter, type, field, valid) \
    cublasStatus_t getter(cublasHandle_t handle, type *value) \
    { \
        BLAS_ENTER(); \
        if (!blas_handle_ok(handle)) \
            EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED); \
        if (!value) \
            EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE); \
        *value = (type)handle->field; \
        EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS); \
    } \
    cublasStatus_t setter(cublasHandle_t handle, type value) \
    { \
        BLAS_ENTER(); \
        if (!blas_handle_ok(handle)) \
            EMU_CALL_RETURN(CUBLAS_STATUS_NOT_INITIALIZED); \
        if (!(valid)) \
            EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE); \
        handle->field = value; \
        EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS); \
    }

HANDLE_FIELD(cublasGetPointerMode_v2, cublasSetPointerMode_v2, cublasPointerMode_t, pointer_mode,
             value == CUBLAS_POINTER_MODE_HOST || value == CUBLAS_POINTER_MODE_DEVICE)
HANDLE_FIELD(cublasGetAtomicsMode, cublasSetAtomicsMode, cublasAtomicsMode_t, atomics_mode,
             value == CUBLAS_ATOMICS_NOT_ALLOWED || value == CUBLAS_ATOMICS_ALLOWED)
/* One base mode (0..4 or 8) plus the DISALLOW_REDUCED_PRECISION_REDUCTION flag. */
HANDLE_FIELD(cublasGetMathMode, cublasSetMathMode, cublasMath_t, math_mode,
             ((value & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) <= CUBLAS_FP32_EMULATED_BF16X9_MATH ||
              (value & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) == CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH))
HANDLE_FIELD(cublasGetSmCountTarget, cublasSetSmCountTarget, int, sm_count_target, value >= 0)
HANDLE_FIELD(cublasGetEmulationStrategy, cublasSetEmulationStrategy, cublasEmulationStrategy_t,
             emulation_strategy, value >= CUBLAS_EMULATION_STRATEGY_DEFAULT && value <= CUBLAS_EMULATION_STRATEGY_EAGER)
HANDLE_FIELD(cublasGetEmulationSpecialValuesSupport, cublasSetEmulationSpecialValuesSupport,
             cudaEmulationSpecialValuesSupport, emulation_special_values, (int)value >= 0)
HANDLE_FIELD(cublasGetFixedPointEmulationMantissaControl, cublasSetFixedPointEmulationMantissaControl,
             cudaEmulationMantissaControl, mantissa_control, (int)value >= 0)
HANDLE_FIELD(cublasGetFixedPointEmulationMaxMantissaBitCount, cublasSetFixedPointEmulationMaxMantissaBitCount,
             int, max_mantissa_bits, value >= 0)
HANDLE_FIELD(cublasGetFixedPointEmulationMantissaBitOffset, cublasSetFixedPointEmulationMantissaBitOffset,
             int, mantissa_offset, 1)
HANDLE_FIELD(cublasGetFixedPointEmulationMantissaBitCountPointer, cublasSetFixedPointEmulationMantissaBitCountPointer,
             int *, mantissa_bits_ptr, 1)

const char *cublasGetStatusName(cublasStatus_t status)
{
    return blas_status_name(status);
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    return blas_status_string(status);
}

/* cuBLAS's API log is not reproduced (the trace records every call); the
 * settings are kept so that programs read back what they set. */
static cublasLogCallback log_callback;

cublasStatus_t cublasLoggerConfigure(int on, int to_stdout, int to_stderr, const char *file)
{
    BLAS_ENTER();
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasSetLoggerCallback(cublasLogCallback cb)
{
    BLAS_ENTER();
    __atomic_store_n(&log_callback, cb, __ATOMIC_RELAXED);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t cublasGetLoggerCallback(cublasLogCallback *cb)
{
    BLAS_ENTER();
    if (!cb)
        EMU_CALL_RETURN(CUBLAS_STATUS_INVALID_VALUE);
    *cb = __atomic_load_n(&log_callback, __ATOMIC_RELAXED);
    EMU_CALL_RETURN(CUBLAS_STATUS_SUCCESS);
}

cublasStatus_t blas_call_end(cublasHandle_t h, uint32_t api, uint64_t t0, cublasStatus_t status)
{
    uint64_t stream = 0;
    uint16_t flags = 0;
    if (status == CUBLAS_STATUS_SUCCESS) {
        struct emu_stream *s = blas_stream(h);
        stream = s ? s->id : 0;
        if (emu_stream_capturing(s))
            flags |= MAYA_F_CAPTURING;
    }
    emu_trace_call(api, t0, status, stream, flags);
    return status;
}

int blas_dtype_bytes(int dtype)
{
    switch (dtype) {
    case CUDA_R_8I: case CUDA_R_8U: case CUDA_R_8F_E4M3: case CUDA_R_8F_E5M2: return 1;
    case CUDA_R_16F: case CUDA_R_16BF: case CUDA_C_8I: case CUDA_C_8U: return 2;
    case CUDA_R_32F: case CUDA_R_32I: case CUDA_R_32U: case CUDA_C_16F: case CUDA_C_16BF: return 4;
    case CUDA_R_64F: case CUDA_C_32F: case CUDA_C_32I: case CUDA_R_64I: return 8;
    case CUDA_C_64F: return 16;
    default: return 0;
    }
}

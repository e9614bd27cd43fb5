/* cuDNN handles, streams, versions, error strings, callbacks, and the
 * record helpers the operations share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnn.h"

/* The last error message, for cudnnGetLastErrorString (per thread: the
 * real one is too). */
static __thread char last_error[256];

cudnnStatus_t dnn_error(cudnnStatus_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

void cudnnGetLastErrorString(char *message, size_t max_size)
{
    if (!message || max_size == 0)
        return;
    snprintf(message, max_size, "%s", last_error);
    last_error[0] = '\0';
}

int dnn_dtype_bytes(int dtype)
{
    switch (dtype) {
    case CUDNN_DATA_DOUBLE: case CUDNN_DATA_INT64: case CUDNN_DATA_COMPLEX_FP32: return 8;
    case CUDNN_DATA_COMPLEX_FP64: return 16;
    case CUDNN_DATA_FLOAT: case CUDNN_DATA_INT32: case CUDNN_DATA_INT8x4: case CUDNN_DATA_UINT8x4:
    case CUDNN_DATA_UINT32: case CUDNN_DATA_FAST_FLOAT_FOR_FP8:
        return 4;
    case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 2;
    case CUDNN_DATA_INT8x32: return 32;
    case CUDNN_DATA_INT8: case CUDNN_DATA_UINT8: case CUDNN_DATA_BOOLEAN: case CUDNN_DATA_FP8_E4M3:
    case CUDNN_DATA_FP8_E5M2: case CUDNN_DATA_FP8_E8M0: case CUDNN_DATA_FP4_E2M1: case CUDNN_DATA_INT4:
    case CUDNN_DATA_UINT4:
        return 1;
    default: return 0;
    }
}

/* The cuDNN version maya says it is. The stand-in implements the API of
 * the toolkit's headers (9.19); later 9.x minors keep it, and programs
 * refuse an older minor than they were built with (PyTorch 2.15's CUDA 13
 * wheels are built with 9.26 and check), so the default is 9.26.0;
 * MAYA_CUDNN_VERSION=MAJOR.MINOR.PATCH (major 9) says otherwise. */
static struct {
    pthread_once_t once;
    int major, minor, patch;
    int bad;                     /* MAYA_CUDNN_VERSION was set to something else */
} version = { PTHREAD_ONCE_INIT, 9, 26, 0, 0 };

static void version_read(void)
{
    const char *v = getenv("MAYA_CUDNN_VERSION");
    int ma, mi, pa, end = 0;
    if (!v || !*v)
        return;
    if (sscanf(v, "%d.%d.%d%n", &ma, &mi, &pa, &end) == 3 && v[end] == '\0' && ma == CUDNN_MAJOR && mi >= 0 &&
        mi < 100 && pa >= 0 && pa < 100) {
        version.major = ma, version.minor = mi, version.patch = pa;
        return;
    }
    version.bad = 1;
    fprintf(stderr, "maya-emu: MAYA_CUDNN_VERSION=%s: expected MAJOR.MINOR.PATCH with major %d (e.g. 9.26.0); "
            "cuDNN handles cannot be created\n", v, CUDNN_MAJOR);
}

static void version_get(void)
{
    pthread_once(&version.once, version_read);
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    DNN_ENTER();
    if (!handle)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "cudnnCreate: handle is NULL"));
    int device = emu_current_device();
    if (!emu_device(device))
        DNN_RETURN(dnn_error(CUDNN_STATUS_NOT_INITIALIZED, "cudnnCreate: no CUDA device"));
    version_get();
    if (version.bad)
        DNN_RETURN(dnn_error(CUDNN_STATUS_NOT_INITIALIZED, "cudnnCreate: MAYA_CUDNN_VERSION is not MAJOR.MINOR.PATCH "
                             "with major %d", CUDNN_MAJOR));
    cudnnHandle_t h = emu_lib_handle_new(sizeof *h, DNN_HANDLE_MAGIC);
    if (!h)
        DNN_RETURN(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED);
    h->device = device;
    *handle = h;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle))
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "cudnnDestroy: not a cuDNN handle"));
    emu_lib_handle_free(handle);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle))
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: not a cuDNN handle"));
    if (!emu_stream_resolve(stream, 0))
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: %p is not a stream", (void *)stream));
    handle->h.stream = stream;
    emu_trace_call(EMU_API_ID(__func__), emu_call_t0_, CUDNN_STATUS_SUCCESS, emu_stream_id(stream), 0);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t *stream)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle) || !stream)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "cudnnGetStream: bad handle or NULL stream pointer"));
    *stream = (cudaStream_t)handle->h.stream;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* Built with CUDA 13.1, for devices up to compute 12.1 (what the real
 * library reports). */
size_t cudnnGetVersion(void)
{
    version_get();
    return (size_t)(version.major * 10000 + version.minor * 100 + version.patch);
}

size_t cudnnGetCudartVersion(void)
{
    return 13010;
}

size_t cudnnGetMaxDeviceVersion(void)
{
    return 1210;
}

cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int *value)
{
    DNN_ENTER();
    version_get();
    if (emu_library_property(type, version.major, version.minor, version.patch, value))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

static const struct {
    const char *name;
    int value;
} status_names[] = {
#include "cudnn_status.inc"
};

const char *cudnnGetErrorString(cudnnStatus_t status)
{
    for (size_t i = 0; i < sizeof status_names / sizeof *status_names; i++)
        if (status_names[i].value == (int)status)
            return status_names[i].name;
    return "CUDNN_UNKNOWN_STATUS";
}

/* Kernels do not run, so nothing fails asynchronously. */
cudnnStatus_t cudnnQueryRuntimeError(cudnnHandle_t handle, cudnnStatus_t *rstatus, cudnnErrQueryMode_t mode,
                                     cudnnRuntimeTag_t *tag)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle) || !rstatus)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *rstatus = CUDNN_STATUS_SUCCESS;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* cuDNN's log callback: kept so that programs read back what they set; the
 * emulator's trace replaces the log. */
static struct {
    unsigned mask;
    void *udata;
    cudnnCallback_t fn;
} callback;
static pthread_mutex_t callback_lock = PTHREAD_MUTEX_INITIALIZER;

cudnnStatus_t cudnnSetCallback(unsigned mask, void *udata, cudnnCallback_t fptr)
{
    DNN_ENTER();
    pthread_mutex_lock(&callback_lock);
    callback.mask = mask, callback.udata = udata, callback.fn = fptr;
    pthread_mutex_unlock(&callback_lock);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetCallback(unsigned *mask, void **udata, cudnnCallback_t *fptr)
{
    DNN_ENTER();
    if (!mask || !udata || !fptr)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    pthread_mutex_lock(&callback_lock);
    *mask = callback.mask, *udata = callback.udata, *fptr = callback.fn;
    pthread_mutex_unlock(&callback_lock);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* The sub-libraries are all this one: their versions agree. */
cudnnStatus_t cudnnGraphVersionCheck(void)
{
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnOpsVersionCheck(void)
{
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCnnVersionCheck(void)
{
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnAdvVersionCheck(void)
{
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t dnn_rec_finish(cudnnHandle_t h, uint32_t api, uint64_t t0, cudnnStatus_t st, struct maya_rec_dnn *r)
{
    struct emu_stream *s = NULL;
    if (st == CUDNN_STATUS_SUCCESS) {
        s = emu_stream_resolve(h->h.stream, 0);
        if (!s || emu_stream_issue_check(s) != EMU_OK)
            st = dnn_error(CUDNN_STATUS_EXECUTION_FAILED_CUDART,
                           "the handle's stream no longer exists, or its capture was invalidated");
    }
    if (st != CUDNN_STATUS_SUCCESS)
        return dnn_call_end(api, t0, st);
    /* traced, or captured when the stream is capturing */
    if (emu_trace_op(api, t0, st, s, r) != EMU_OK)
        return dnn_error(CUDNN_STATUS_EXECUTION_FAILED_CUDART, "cannot add the operation to the stream's capture");
    return st;
}

void dnn_tensor_to_trace(struct maya_tensor *t, const struct cudnnTensorStruct *d)
{
    memset(t, 0, sizeof *t);
    if (!d)
        return;
    t->dtype = d->dtype;
    t->ndims = d->nd;
    for (int i = 0; i < d->nd && i < MAYA_TENSOR_MAX_DIMS; i++)
        t->dims[i] = d->dims[i], t->strides[i] = d->strides[i];
}

void dnn_filter_to_trace(struct maya_tensor *t, const struct cudnnFilterStruct *f)
{
    memset(t, 0, sizeof *t);
    if (!f)
        return;
    t->dtype = f->dtype;
    t->ndims = f->nd;
    int64_t s = 1;
    if (f->format == CUDNN_TENSOR_NHWC) { /* C innermost, then spatial from last, then K */
        t->strides[1] = 1;
        s = f->dims[1];
        for (int i = f->nd - 1; i >= 2; i--)
            t->strides[i] = s, s *= f->dims[i];
        t->strides[0] = s;
    } else {
        for (int i = f->nd - 1; i >= 0; i--)
            t->strides[i] = s, s *= f->dims[i];
    }
    for (int i = 0; i < f->nd; i++)
        t->dims[i] = f->dims[i];
}

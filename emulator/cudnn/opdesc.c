/* The legacy API's small descriptors: activation, pooling, op-tensor,
 * reduce-tensor and dropout. */
#include <stdlib.h>
#include <string.h>

#include "dnn.h"

struct cudnnActivationStruct {
    uint32_t magic;
    int mode, nan;
    double coef, swish_beta;
};

struct cudnnPoolingStruct {
    uint32_t magic;
    int set, mode, nan, nd;
    int window[CUDNN_DIM_MAX], pad[CUDNN_DIM_MAX], stride[CUDNN_DIM_MAX];
};

struct cudnnOpTensorStruct {
    uint32_t magic;
    int op, compute, nan;
};

struct cudnnReduceTensorStruct {
    uint32_t magic;
    int op, compute, nan, indices, indices_type;
};

struct cudnnDropoutStruct {
    uint32_t magic;
    float dropout;
    void *states;
    unsigned long long seed;
};

DNN_CREATE_DESTROY(cudnnActivationDescriptor_t, cudnnActivationStruct, DNN_ACT_MAGIC, , cudnnCreateActivationDescriptor,
               cudnnDestroyActivationDescriptor)
DNN_CREATE_DESTROY(cudnnPoolingDescriptor_t, cudnnPoolingStruct, DNN_POOL_MAGIC, , cudnnCreatePoolingDescriptor,
               cudnnDestroyPoolingDescriptor)
DNN_CREATE_DESTROY(cudnnOpTensorDescriptor_t, cudnnOpTensorStruct, DNN_OPT_MAGIC, , cudnnCreateOpTensorDescriptor,
               cudnnDestroyOpTensorDescriptor)
DNN_CREATE_DESTROY(cudnnReduceTensorDescriptor_t, cudnnReduceTensorStruct, DNN_RED_MAGIC, ,
               cudnnCreateReduceTensorDescriptor, cudnnDestroyReduceTensorDescriptor)
DNN_CREATE_DESTROY(cudnnDropoutDescriptor_t, cudnnDropoutStruct, DNN_DROP_MAGIC, , cudnnCreateDropoutDescriptor,
               cudnnDestroyDropoutDescriptor)

static int nan_ok(int n)
{
    return n == CUDNN_NOT_PROPAGATE_NAN || n == CUDNN_PROPAGATE_NAN;
}

/* ---- activation ---- */

cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, cudnnActivationMode_t mode,
                                           cudnnNanPropagation_t nan, double coef)
{
    DNN_ENTER();
    if (!d || d->magic != DNN_ACT_MAGIC || mode < CUDNN_ACTIVATION_SIGMOID || mode > CUDNN_ACTIVATION_SWISH ||
        !nan_ok(nan))
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "activation mode %d, NaN option %d", (int)mode, (int)nan));
    d->mode = mode, d->nan = nan, d->coef = coef;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetActivationDescriptor(const cudnnActivationDescriptor_t d, cudnnActivationMode_t *mode,
                                           cudnnNanPropagation_t *nan, double *coef)
{
    DNN_ENTER();
    if (!d || d->magic != DNN_ACT_MAGIC || !mode || !nan || !coef)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *mode = d->mode, *nan = d->nan, *coef = d->coef;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnSetActivationDescriptorSwishBeta(cudnnActivationDescriptor_t d, double beta)
{
    DNN_ENTER();
    if (!d || d->magic != DNN_ACT_MAGIC)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    d->swish_beta = beta;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetActivationDescriptorSwishBeta(cudnnActivationDescriptor_t d, double *beta)
{
    DNN_ENTER();
    if (!d || d->magic != DNN_ACT_MAGIC || !beta)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *beta = d->swish_beta;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* ---- pooling ---- */

cudnnStatus_t cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t d, const cudnnPoolingMode_t mode,
                                          const cudnnNanPropagation_t nan, int nd, const int window[],
                                          const int pad[], const int stride[])
{
    DNN_ENTER();
    if (!d || d->magic != DNN_POOL_MAGIC || !window || !pad || !stride || nd < 1 || nd > CUDNN_DIM_MAX - 2 ||
        mode < CUDNN_POOLING_MAX || mode > CUDNN_POOLING_MAX_DETERMINISTIC || !nan_ok(nan))
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "pooling: %d dimensions, mode %d", nd, (int)mode));
    for (int i = 0; i < nd; i++)
        if (window[i] <= 0 || pad[i] < 0 || stride[i] <= 0)
            DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "pooling dimension %d: window %d pad %d stride %d", i,
                                 window[i], pad[i], stride[i]));
    d->set = 1, d->mode = mode, d->nan = nan, d->nd = nd;
    memcpy(d->window, window, (size_t)nd * sizeof *window);
    memcpy(d->pad, pad, (size_t)nd * sizeof *pad);
    memcpy(d->stride, stride, (size_t)nd * sizeof *stride);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t d, cudnnPoolingMode_t mode,
                                          cudnnNanPropagation_t nan, int wh, int ww, int ph, int pw, int sh, int sw)
{
    int window[2] = { wh, ww }, pad[2] = { ph, pw }, stride[2] = { sh, sw };
    return cudnnSetPoolingNdDescriptor(d, mode, nan, 2, window, pad, stride);
}

cudnnStatus_t cudnnGetPoolingNdDescriptor(const cudnnPoolingDescriptor_t d, int requested, cudnnPoolingMode_t *mode,
                                          cudnnNanPropagation_t *nan, int *nd, int window[], int pad[], int stride[])
{
    DNN_ENTER();
    if (!d || d->magic != DNN_POOL_MAGIC || !d->set || !mode || !nan || !nd || requested < 0 ||
        (requested > 0 && (!window || !pad || !stride)))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *mode = d->mode, *nan = d->nan, *nd = d->nd;
    for (int i = 0; i < requested && i < d->nd; i++)
        window[i] = d->window[i], pad[i] = d->pad[i], stride[i] = d->stride[i];
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetPooling2dDescriptor(const cudnnPoolingDescriptor_t d, cudnnPoolingMode_t *mode,
                                          cudnnNanPropagation_t *nan, int *wh, int *ww, int *ph, int *pw, int *sh,
                                          int *sw)
{
    DNN_ENTER();
    if (!d || d->magic != DNN_POOL_MAGIC || !d->set || d->nd != 2 || !mode || !nan || !wh || !ww || !ph || !pw ||
        !sh || !sw)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *mode = d->mode, *nan = d->nan;
    *wh = d->window[0], *ww = d->window[1], *ph = d->pad[0], *pw = d->pad[1], *sh = d->stride[0], *sw = d->stride[1];
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* Pooled dims: N, C, then 1 + (in + 2 pad - window) / stride. */
int dnn_pool_out(const void *pool, const struct cudnnTensorStruct *x, int *out)
{
    const struct cudnnPoolingStruct *p = pool;
    if (!p || p->magic != DNN_POOL_MAGIC || !p->set || !x || x->nd != p->nd + 2)
        return -1;
    out[0] = x->dims[0], out[1] = x->dims[1];
    for (int i = 0; i < p->nd; i++) {
        int span = x->dims[i + 2] + 2 * p->pad[i] - p->window[i];
        if (span < 0)
            return -1;
        out[i + 2] = span / p->stride[i] + 1;
    }
    return 0;
}

cudnnStatus_t cudnnGetPoolingNdForwardOutputDim(const cudnnPoolingDescriptor_t d, const cudnnTensorDescriptor_t xDesc,
                                                int nd, int out[])
{
    DNN_ENTER();
    int dims[CUDNN_DIM_MAX];
    const struct cudnnTensorStruct *x = dnn_tensor(xDesc);
    if (!out || !x || nd != x->nd || dnn_pool_out(d, x, dims))
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "pooling window larger than the padded input, or bad descriptors"));
    memcpy(out, dims, (size_t)nd * sizeof *out);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetPooling2dForwardOutputDim(const cudnnPoolingDescriptor_t d, const cudnnTensorDescriptor_t xDesc,
                                                int *n, int *c, int *h, int *w)
{
    DNN_ENTER();
    int dims[CUDNN_DIM_MAX];
    const struct cudnnTensorStruct *x = dnn_tensor(xDesc);
    if (!n || !c || !h || !w || !x || x->nd != 4 || dnn_pool_out(d, x, dims))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *n = dims[0], *c = dims[1], *h = dims[2], *w = dims[3];
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* ---- op-tensor and reduce-tensor ---- */

cudnnStatus_t cudnnSetOpTensorDescriptor(cudnnOpTensorDescriptor_t d, cudnnOpTensorOp_t op, cudnnDataType_t compute,
                                         cudnnNanPropagation_t nan)
{
    DNN_ENTER();
    if (!d || d->magic != DNN_OPT_MAGIC || op < CUDNN_OP_TENSOR_ADD || op > CUDNN_OP_TENSOR_NOT ||
        !dnn_dtype_bytes(compute) || !nan_ok(nan))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    d->op = op, d->compute = compute, d->nan = nan;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetOpTensorDescriptor(const cudnnOpTensorDescriptor_t d, cudnnOpTensorOp_t *op,
                                         cudnnDataType_t *compute, cudnnNanPropagation_t *nan)
{
    DNN_ENTER();
    if (!d || d->magic != DNN_OPT_MAGIC || !op || !compute || !nan)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *op = d->op, *compute = d->compute, *nan = d->nan;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

int dnn_optensor_ok(const void *d)
{
    const struct cudnnOpTensorStruct *o = d;
    return o && o->magic == DNN_OPT_MAGIC;
}

cudnnStatus_t cudnnSetReduceTensorDescriptor(cudnnReduceTensorDescriptor_t d, cudnnReduceTensorOp_t op,
                                             cudnnDataType_t compute, cudnnNanPropagation_t nan,
                                             cudnnReduceTensorIndices_t indices, cudnnIndicesType_t indices_type)
{
    DNN_ENTER();
    if (!d || d->magic != DNN_RED_MAGIC || op < CUDNN_REDUCE_TENSOR_ADD || op > CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS ||
        !dnn_dtype_bytes(compute) || !nan_ok(nan))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    d->op = op, d->compute = compute, d->nan = nan, d->indices = indices, d->indices_type = indices_type;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetReduceTensorDescriptor(const cudnnReduceTensorDescriptor_t d, cudnnReduceTensorOp_t *op,
                                             cudnnDataType_t *compute, cudnnNanPropagation_t *nan,
                                             cudnnReduceTensorIndices_t *indices, cudnnIndicesType_t *indices_type)
{
    DNN_ENTER();
    if (!d || d->magic != DNN_RED_MAGIC || !op || !compute || !nan || !indices || !indices_type)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *op = d->op, *compute = d->compute, *nan = d->nan, *indices = d->indices, *indices_type = d->indices_type;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* Bytes of indices a reduction writes (one 32-bit index per output
 * element when indices are asked for). */
int dnn_reduce_indices(const void *d, const struct cudnnTensorStruct *c, size_t *bytes)
{
    const struct cudnnReduceTensorStruct *r = d;
    if (!r || r->magic != DNN_RED_MAGIC || !c)
        return -1;
    size_t n = 1;
    for (int i = 0; i < c->nd; i++)
        n *= (size_t)c->dims[i];
    *bytes = r->indices == CUDNN_REDUCE_TENSOR_NO_INDICES ? 0 : n * 4;
    return 0;
}

/* ---- dropout ---- */

/* Random-number generator states: one per thread of a 512-thread block on
 * every SM, 48 bytes each (cuRAND XORWOW). */
cudnnStatus_t cudnnDropoutGetStatesSize(cudnnHandle_t handle, size_t *bytes)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle) || !bytes)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    const struct emu_device *dev = emu_device(handle->device);
    int sms = dev ? dev->prop.multiProcessorCount : 132;
    *bytes = (size_t)sms * 512 * 48;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* One bit per element (the mask), rounded to 16 bytes. */
cudnnStatus_t cudnnDropoutGetReserveSpaceSize(cudnnTensorDescriptor_t xDesc, size_t *bytes)
{
    DNN_ENTER();
    const struct cudnnTensorStruct *x = dnn_tensor(xDesc);
    if (!x || !bytes)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    size_t n = 1;
    for (int i = 0; i < x->nd; i++)
        n *= (size_t)x->dims[i];
    *bytes = (n + 127) / 128 * 16;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

static cudnnStatus_t dropout_set(cudnnDropoutDescriptor_t d, cudnnHandle_t h, float dropout, void *states,
                                 unsigned long long seed)
{
    if (!d || d->magic != DNN_DROP_MAGIC || !dnn_handle_ok(h) || dropout < 0 || dropout > 1)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "dropout %g, or bad descriptor or handle", dropout);
    d->dropout = dropout, d->states = states, d->seed = seed;
    return CUDNN_STATUS_SUCCESS;
}

/* Setting a dropout descriptor initialises the generator states with a
 * kernel on the handle's stream. */
cudnnStatus_t cudnnSetDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t handle, float dropout,
                                        void *states, size_t state_bytes, unsigned long long seed)
{
    DNN_ENTER();
    cudnnStatus_t st = dropout_set(d, handle, dropout, states, seed);
    uint64_t stream = st == CUDNN_STATUS_SUCCESS && states ? emu_stream_id(handle->h.stream) : 0;
    emu_trace_call(EMU_API_ID(__func__), emu_call_t0_, st, stream, 0);
    return st;
}

cudnnStatus_t cudnnRestoreDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t handle, float dropout,
                                            void *states, size_t state_bytes, unsigned long long seed)
{
    DNN_ENTER();
    DNN_RETURN(dropout_set(d, handle, dropout, states, seed));
}

cudnnStatus_t cudnnGetDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t handle, float *dropout,
                                        void **states, unsigned long long *seed)
{
    DNN_ENTER();
    if (!d || d->magic != DNN_DROP_MAGIC || !dnn_handle_ok(handle) || !dropout || !states || !seed)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *dropout = d->dropout, *states = d->states, *seed = d->seed;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

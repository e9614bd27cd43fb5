/* cuDNN's legacy API (convolutions, pointwise, softmax, pooling, batch
 * norm), as the emulator's cuDNN records it: one MAYA_REC_DNN per call with
 * its tensors (and a convolution's filter and geometry), read back from the
 * real descriptors with cuDNN's getters, measured on the handle's stream.
 * Graphs of the backend API: dnn_graph.c. */
#include "prof.h"

#include <cudnn.h>
#include <string.h>

#define DNN_REAL(NAME) PROF_REAL(prof_cudnn, NAME)

static void tensor(struct maya_tensor *t, cudnnTensorDescriptor_t d)
{
    cudnnStatus_t (*get)(const cudnnTensorDescriptor_t, int, cudnnDataType_t *, int *, int[], int[]) =
        DNN_REAL(cudnnGetTensorNdDescriptor);
    int dims[MAYA_TENSOR_MAX_DIMS], strides[MAYA_TENSOR_MAX_DIMS], nd = 0;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    memset(t, 0, sizeof *t);
    if (!get || get(d, MAYA_TENSOR_MAX_DIMS, &dt, &nd, dims, strides) != CUDNN_STATUS_SUCCESS)
        return;
    t->dtype = dt;
    t->ndims = nd < MAYA_TENSOR_MAX_DIMS ? nd : MAYA_TENSOR_MAX_DIMS;
    for (int i = 0; i < t->ndims; i++)
        t->dims[i] = dims[i], t->strides[i] = strides[i];
}

/* A filter is packed: its strides follow from its dimensions and format. */
static void filter(struct maya_tensor *t, cudnnFilterDescriptor_t d)
{
    cudnnStatus_t (*get)(const cudnnFilterDescriptor_t, int, cudnnDataType_t *, cudnnTensorFormat_t *, int *, int[]) =
        DNN_REAL(cudnnGetFilterNdDescriptor);
    int dims[MAYA_TENSOR_MAX_DIMS], nd = 0;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
    memset(t, 0, sizeof *t);
    if (!get || get(d, MAYA_TENSOR_MAX_DIMS, &dt, &format, &nd, dims) != CUDNN_STATUS_SUCCESS || nd < 1)
        return;
    t->dtype = dt;
    t->ndims = nd < MAYA_TENSOR_MAX_DIMS ? nd : MAYA_TENSOR_MAX_DIMS;
    int64_t s = 1;
    if (format == CUDNN_TENSOR_NHWC && t->ndims > 1) { /* C innermost, then spatial from last, then K */
        t->strides[1] = 1;
        s = dims[1];
        for (int i = t->ndims - 1; i >= 2; i--)
            t->strides[i] = s, s *= dims[i];
        t->strides[0] = s;
    } else {
        for (int i = t->ndims - 1; i >= 0; i--)
            t->strides[i] = s, s *= dims[i];
    }
    for (int i = 0; i < t->ndims; i++)
        t->dims[i] = dims[i];
}

static void geometry(struct maya_rec_dnn *r, cudnnConvolutionDescriptor_t c)
{
    cudnnStatus_t (*get)(const cudnnConvolutionDescriptor_t, int, int *, int[], int[], int[], cudnnConvolutionMode_t *,
                         cudnnDataType_t *) = DNN_REAL(cudnnGetConvolutionNdDescriptor);
    cudnnStatus_t (*groups)(cudnnConvolutionDescriptor_t, int *) = DNN_REAL(cudnnGetConvolutionGroupCount);
    int n = 0, pad[3] = { 0 }, stride[3] = { 0 }, dil[3] = { 0 };
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    if (!get || get(c, 3, &n, pad, stride, dil, &mode, &compute) != CUDNN_STATUS_SUCCESS)
        return;
    r->conv_nspatial = n;
    r->conv_mode = mode;
    r->compute_type = compute;
    r->groups = 1;
    if (groups)
        groups(c, &r->groups);
    for (int i = 0; i < n && i < 3; i++) {
        r->pad_pre[i] = r->pad_post[i] = pad[i];
        r->stride[i] = stride[i];
        r->dilation[i] = dil[i];
    }
}

cudaStream_t prof_dnn_stream(cudnnHandle_t h)
{
    cudnnStatus_t (*get)(cudnnHandle_t, cudaStream_t *) = DNN_REAL(cudnnGetStream);
    cudaStream_t s = NULL;
    if (get)
        get(h, &s);
    return s;
}

void prof_dnn_emit(struct prof_op *op, uint32_t api, int st, cudnnHandle_t h, struct maya_rec_dnn *r)
{
    struct emu_stream *s = prof_stream(prof_dnn_stream(h), 0);
    if (st != CUDNN_STATUS_SUCCESS) {
        emu_trace_call(api, op->t0, st, 0, 0);
        return;
    }
    r->h.type = MAYA_REC_DNN;
    r->h.bytes = sizeof *r;
    emu_call_fill(&r->call, api, op->t0, st, s ? s->id : 0);
    emu_trace_emit(r);
}

/* The record of a convolution: x, w, y as the forward pass names them. */
static void trace_conv(struct prof_op *op, uint32_t api, cudnnStatus_t st, uint32_t kind, cudnnHandle_t h,
                       cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                       cudnnTensorDescriptor_t y, int algo, size_t ws_bytes)
{
    struct maya_rec_dnn r;
    memset(&r, 0, sizeof r);
    if (st == CUDNN_STATUS_SUCCESS) {
        r.op = kind;
        r.ntensors = 3;
        tensor(&r.t[0], x);
        filter(&r.t[1], w);
        tensor(&r.t[2], y);
        geometry(&r, c);
        r.algo = algo;
        r.workspace_bytes = ws_bytes;
    }
    prof_dnn_emit(op, api, st, h, &r);
}

#define CONV_BODY(KIND, X, W, Y, CALL) \
    PROF_DEVICE_BODY(cudnnStatus_t, CUDNN_STATUS_SUCCESS, prof_dnn_stream(handle), CALL, \
                     trace_conv(&op_, EMU_API_ID(__func__), r_, (KIND), handle, convDesc, (X), (W), (Y), (int)algo, \
                                ws_bytes), )

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                      const void *x, const cudnnFilterDescriptor_t wDesc, const void *w,
                                      const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
                                      void *ws, size_t ws_bytes, const void *beta,
                                      const cudnnTensorDescriptor_t yDesc, void *y)
{
    PROF_REAL_OR(prof_cudnn, cudnnConvolutionForward, CUDNN_STATUS_NOT_SUPPORTED);
    CONV_BODY(MAYA_DNN_CONV_FWD, xDesc, wDesc, yDesc,
              real(handle, alpha, xDesc, x, wDesc, w, convDesc, algo, ws, ws_bytes, beta, yDesc, y));
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha, const cudnnFilterDescriptor_t wDesc,
                                           const void *w, const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                           const cudnnConvolutionDescriptor_t convDesc,
                                           cudnnConvolutionBwdDataAlgo_t algo, void *ws, size_t ws_bytes,
                                           const void *beta, const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    PROF_REAL_OR(prof_cudnn, cudnnConvolutionBackwardData, CUDNN_STATUS_NOT_SUPPORTED);
    CONV_BODY(MAYA_DNN_CONV_BWD_DATA, dxDesc, wDesc, dyDesc,
              real(handle, alpha, wDesc, w, dyDesc, dy, convDesc, algo, ws, ws_bytes, beta, dxDesc, dx));
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void *x,
                                             const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t ws_bytes,
                                             const void *beta, const cudnnFilterDescriptor_t dwDesc, void *dw)
{
    PROF_REAL_OR(prof_cudnn, cudnnConvolutionBackwardFilter, CUDNN_STATUS_NOT_SUPPORTED);
    CONV_BODY(MAYA_DNN_CONV_BWD_FILTER, xDesc, dwDesc, dyDesc,
              real(handle, alpha, xDesc, x, dyDesc, dy, convDesc, algo, ws, ws_bytes, beta, dwDesc, dw));
}

/* ---- operations on tensors (pointwise, softmax, pooling, batch norm) ----
 * One record with up to four tensors, the first one's type as the compute
 * type, as the emulator's cuDNN writes them. */

static void trace_tensors(struct prof_op *op, uint32_t api, cudnnStatus_t st, uint32_t kind, cudnnHandle_t h,
                          int n, const cudnnTensorDescriptor_t *d, uint64_t ws_bytes, int typed)
{
    struct maya_rec_dnn r;
    memset(&r, 0, sizeof r);
    if (st == CUDNN_STATUS_SUCCESS) {
        r.op = kind;
        r.algo = -1;
        r.ntensors = (uint32_t)(n < 4 ? n : 4);
        for (uint32_t i = 0; i < r.ntensors; i++)
            tensor(&r.t[i], d[i]);
        r.compute_type = typed ? r.t[0].dtype : 0;
        r.workspace_bytes = ws_bytes;
    }
    prof_dnn_emit(op, api, st, h, &r);
}

/* NAME(PARAMS) forwards ARGS; KIND with the tensors TENSORS (an array
 * initializer), WS bytes of workspace. */
#define TENSOR_OP(NAME, PARAMS, ARGS, KIND, WS, TYPED, ...) \
    cudnnStatus_t NAME PARAMS \
    { \
        PROF_REAL_OR(prof_cudnn, NAME, CUDNN_STATUS_NOT_SUPPORTED); \
        const cudnnTensorDescriptor_t d_[] = { __VA_ARGS__ }; \
        PROF_DEVICE_BODY(cudnnStatus_t, CUDNN_STATUS_SUCCESS, prof_dnn_stream(handle), real ARGS, \
                         trace_tensors(&op_, EMU_API_ID(#NAME), r_, (KIND), handle, \
                                       (int)(sizeof d_ / sizeof d_[0]), d_, (WS), (TYPED)), ); \
    }

TENSOR_OP(cudnnSoftmaxForward,
          (cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, const void *alpha,
           const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta, const cudnnTensorDescriptor_t yDesc,
           void *y),
          (handle, algo, mode, alpha, xDesc, x, beta, yDesc, y), MAYA_DNN_SOFTMAX_FWD, 0, 1, xDesc, yDesc)
TENSOR_OP(cudnnSoftmaxBackward,
          (cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, const void *alpha,
           const cudnnTensorDescriptor_t yDesc, const void *y, const cudnnTensorDescriptor_t dyDesc, const void *dy,
           const void *beta, const cudnnTensorDescriptor_t dxDesc, void *dx),
          (handle, algo, mode, alpha, yDesc, y, dyDesc, dy, beta, dxDesc, dx), MAYA_DNN_SOFTMAX_BWD, 0, 1, yDesc,
          dyDesc, dxDesc)
TENSOR_OP(cudnnActivationForward,
          (cudnnHandle_t handle, cudnnActivationDescriptor_t act, const void *alpha, const cudnnTensorDescriptor_t xDesc,
           const void *x, const void *beta, const cudnnTensorDescriptor_t yDesc, void *y),
          (handle, act, alpha, xDesc, x, beta, yDesc, y), MAYA_DNN_POINTWISE, 0, 1, xDesc, yDesc)
TENSOR_OP(cudnnActivationBackward,
          (cudnnHandle_t handle, cudnnActivationDescriptor_t act, const void *alpha, const cudnnTensorDescriptor_t yDesc,
           const void *y, const cudnnTensorDescriptor_t dyDesc, const void *dy, const cudnnTensorDescriptor_t xDesc,
           const void *x, const void *beta, const cudnnTensorDescriptor_t dxDesc, void *dx),
          (handle, act, alpha, yDesc, y, dyDesc, dy, xDesc, x, beta, dxDesc, dx), MAYA_DNN_POINTWISE, 0, 1, yDesc,
          dyDesc, xDesc, dxDesc)
TENSOR_OP(cudnnAddTensor,
          (cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t aDesc, const void *A, const void *beta,
           const cudnnTensorDescriptor_t cDesc, void *C),
          (handle, alpha, aDesc, A, beta, cDesc, C), MAYA_DNN_POINTWISE, 0, 1, cDesc, aDesc)
TENSOR_OP(cudnnOpTensor,
          (cudnnHandle_t handle, const cudnnOpTensorDescriptor_t opDesc, const void *alpha1,
           const cudnnTensorDescriptor_t aDesc, const void *A, const void *alpha2, const cudnnTensorDescriptor_t bDesc,
           const void *B, const void *beta, const cudnnTensorDescriptor_t cDesc, void *C),
          (handle, opDesc, alpha1, aDesc, A, alpha2, bDesc, B, beta, cDesc, C), MAYA_DNN_POINTWISE, 0, 1, cDesc, aDesc,
          bDesc)
TENSOR_OP(cudnnScaleTensor, (cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y, const void *alpha),
          (handle, yDesc, y, alpha), MAYA_DNN_POINTWISE, 0, 1, yDesc)
TENSOR_OP(cudnnSetTensor, (cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y, const void *value),
          (handle, yDesc, y, value), MAYA_DNN_POINTWISE, 0, 1, yDesc)
TENSOR_OP(cudnnTransformTensor,
          (cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
           const void *beta, const cudnnTensorDescriptor_t yDesc, void *y),
          (handle, alpha, xDesc, x, beta, yDesc, y), MAYA_DNN_POINTWISE, 0, 1, xDesc, yDesc)
TENSOR_OP(cudnnPoolingForward,
          (cudnnHandle_t handle, const cudnnPoolingDescriptor_t pool, const void *alpha,
           const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta, const cudnnTensorDescriptor_t yDesc,
           void *y),
          (handle, pool, alpha, xDesc, x, beta, yDesc, y), MAYA_DNN_OTHER, 0, 1, xDesc, yDesc)
TENSOR_OP(cudnnPoolingBackward,
          (cudnnHandle_t handle, const cudnnPoolingDescriptor_t pool, const void *alpha,
           const cudnnTensorDescriptor_t yDesc, const void *y, const cudnnTensorDescriptor_t dyDesc, const void *dy,
           const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta, const cudnnTensorDescriptor_t dxDesc,
           void *dx),
          (handle, pool, alpha, yDesc, y, dyDesc, dy, xDesc, x, beta, dxDesc, dx), MAYA_DNN_OTHER, 0, 1, xDesc, dxDesc,
          yDesc, dyDesc)
TENSOR_OP(cudnnConvolutionBackwardBias,
          (cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t dyDesc, const void *dy,
           const void *beta, const cudnnTensorDescriptor_t dbDesc, void *db),
          (handle, alpha, dyDesc, dy, beta, dbDesc, db), MAYA_DNN_REDUCTION, 0, 0, dyDesc, dbDesc)
TENSOR_OP(cudnnBatchNormalizationForwardTraining,
          (cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
           const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc, void *y,
           const cudnnTensorDescriptor_t pDesc, const void *scale, const void *bias, double factor,
           void *running_mean, void *running_var, double eps, void *save_mean, void *save_inv_var),
          (handle, mode, alpha, beta, xDesc, x, yDesc, y, pDesc, scale, bias, factor, running_mean, running_var, eps,
           save_mean, save_inv_var),
          MAYA_DNN_BN_FWD_TRAIN, 0, 1, xDesc, yDesc, pDesc)
TENSOR_OP(cudnnBatchNormalizationForwardTrainingEx,
          (cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void *alpha,
           const void *beta, const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t zDesc,
           const void *z, const cudnnTensorDescriptor_t yDesc, void *y, const cudnnTensorDescriptor_t pDesc,
           const void *scale, const void *bias, double factor, void *running_mean, void *running_var, double eps,
           void *save_mean, void *save_inv_var, cudnnActivationDescriptor_t act, void *ws, size_t ws_bytes,
           void *reserve, size_t reserve_bytes),
          (handle, mode, ops, alpha, beta, xDesc, x, zDesc, z, yDesc, y, pDesc, scale, bias, factor, running_mean,
           running_var, eps, save_mean, save_inv_var, act, ws, ws_bytes, reserve, reserve_bytes),
          MAYA_DNN_BN_FWD_TRAIN, ws_bytes, 1, xDesc, yDesc, pDesc)
TENSOR_OP(cudnnBatchNormalizationForwardInference,
          (cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
           const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc, void *y,
           const cudnnTensorDescriptor_t pDesc, const void *scale, const void *bias, const void *mean,
           const void *var, double eps),
          (handle, mode, alpha, beta, xDesc, x, yDesc, y, pDesc, scale, bias, mean, var, eps), MAYA_DNN_BN_FWD_INFER,
          0, 1, xDesc, yDesc, pDesc)
TENSOR_OP(cudnnBatchNormalizationBackward,
          (cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha_data, const void *beta_data,
           const void *alpha_param, const void *beta_param, const cudnnTensorDescriptor_t xDesc, const void *x,
           const cudnnTensorDescriptor_t dyDesc, const void *dy, const cudnnTensorDescriptor_t dxDesc, void *dx,
           const cudnnTensorDescriptor_t pDesc, const void *scale, void *dscale, void *dbias, double eps,
           const void *save_mean, const void *save_inv_var),
          (handle, mode, alpha_data, beta_data, alpha_param, beta_param, xDesc, x, dyDesc, dy, dxDesc, dx, pDesc,
           scale, dscale, dbias, eps, save_mean, save_inv_var),
          MAYA_DNN_BN_BWD, 0, 1, xDesc, dyDesc, dxDesc, pDesc)
TENSOR_OP(cudnnBatchNormalizationBackwardEx,
          (cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void *alpha_data,
           const void *beta_data, const void *alpha_param, const void *beta_param, const cudnnTensorDescriptor_t xDesc,
           const void *x, const cudnnTensorDescriptor_t yDesc, const void *y, const cudnnTensorDescriptor_t dyDesc,
           const void *dy, const cudnnTensorDescriptor_t dzDesc, void *dz, const cudnnTensorDescriptor_t dxDesc,
           void *dx, const cudnnTensorDescriptor_t pDesc, const void *scale, const void *bias, void *dscale,
           void *dbias, double eps, const void *save_mean, const void *save_inv_var, cudnnActivationDescriptor_t act,
           void *ws, size_t ws_bytes, void *reserve, size_t reserve_bytes),
          (handle, mode, ops, alpha_data, beta_data, alpha_param, beta_param, xDesc, x, yDesc, y, dyDesc, dy, dzDesc,
           dz, dxDesc, dx, pDesc, scale, bias, dscale, dbias, eps, save_mean, save_inv_var, act, ws, ws_bytes,
           reserve, reserve_bytes),
          MAYA_DNN_BN_BWD, ws_bytes, 1, xDesc, dyDesc, dxDesc, pDesc)

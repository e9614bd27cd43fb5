/* Legacy operations besides convolution: softmax, activation, tensor
 * arithmetic (add, op-tensor, scale, set, transform), pooling, reductions,
 * batch normalization and dropout. Each checks its descriptors and shapes
 * and is traced as one MAYA_REC_DNN with its tensors. */
#include <string.h>

#include "dnn.h"

/* Tensors an operation names; `same` marks (bit i) those that must have
 * tensor 0's dims, `bcast` those that must broadcast to it (each dim 1 or
 * equal). */
struct op_tensors {
    int n;
    const void *d[5];
    unsigned same, bcast;
};

static cudnnStatus_t check_tensors(const struct op_tensors *o)
{
    const struct cudnnTensorStruct *t0 = dnn_tensor(o->d[0]);
    for (int i = 0; i < o->n; i++) {
        const struct cudnnTensorStruct *t = dnn_tensor(o->d[i]);
        if (!t)
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "tensor descriptor %d missing or not set", i);
        if (!((o->same | o->bcast) >> i & 1))
            continue;
        if (t->nd != t0->nd)
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "tensor %d has %d dimensions, tensor 0 %d", i, t->nd, t0->nd);
        for (int k = 0; k < t->nd; k++)
            if (t->dims[k] != t0->dims[k] && !((o->bcast >> i & 1) && t->dims[k] == 1))
                return dnn_error(CUDNN_STATUS_BAD_PARAM, "tensor %d dimension %d is %d, tensor 0's %d", i, k,
                                 t->dims[k], t0->dims[k]);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Check and trace an operation: op, its tensors (up to 4 traced), whether
 * scaling factors were given, a workspace. */
static cudnnStatus_t run_op(cudnnHandle_t h, uint32_t api, uint64_t t0, uint32_t op, const struct op_tensors *o,
                            int scales_ok, uint64_t ws_bytes)
{
    struct maya_rec_dnn r;
    dnn_rec_init(&r, op);
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    if (!dnn_handle_ok(h))
        st = dnn_error(CUDNN_STATUS_BAD_PARAM, "not a cuDNN handle");
    else if (!scales_ok)
        st = dnn_error(CUDNN_STATUS_BAD_PARAM, "a scaling factor (alpha, beta) is NULL");
    else
        st = check_tensors(o);
    if (st == CUDNN_STATUS_SUCCESS) {
        r.ntensors = (uint32_t)(o->n < 4 ? o->n : 4);
        for (uint32_t i = 0; i < r.ntensors; i++)
            dnn_tensor_to_trace(&r.t[i], dnn_tensor(o->d[i]));
        r.compute_type = r.t[0].dtype;
        r.workspace_bytes = ws_bytes;
    }
    return dnn_rec_finish(h, api, t0, st, &r);
}

#define RUN(OP, SCALES, WS, ...) \
    return run_op(handle, EMU_API_ID(__func__), emu_call_t0_, OP, &(struct op_tensors){ __VA_ARGS__ }, SCALES, WS)

/* ---- softmax and activation ---- */

cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
                                  const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
                                  const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    DNN_ENTER();
    if (algo < CUDNN_SOFTMAX_FAST || algo > CUDNN_SOFTMAX_LOG || mode < CUDNN_SOFTMAX_MODE_INSTANCE ||
        mode > CUDNN_SOFTMAX_MODE_CHANNEL)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "softmax algorithm %d mode %d", (int)algo, (int)mode));
    RUN(MAYA_DNN_SOFTMAX_FWD, alpha && beta, 0, .n = 2, .d = { xDesc, yDesc }, .same = 2);
}

cudnnStatus_t cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
                                   const void *alpha, const cudnnTensorDescriptor_t yDesc, const void *y,
                                   const cudnnTensorDescriptor_t dyDesc, const void *dy, const void *beta,
                                   const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    DNN_ENTER();
    if (algo < CUDNN_SOFTMAX_FAST || algo > CUDNN_SOFTMAX_LOG || mode < CUDNN_SOFTMAX_MODE_INSTANCE ||
        mode > CUDNN_SOFTMAX_MODE_CHANNEL)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "softmax algorithm %d mode %d", (int)algo, (int)mode));
    RUN(MAYA_DNN_SOFTMAX_BWD, alpha && beta, 0, .n = 3, .d = { yDesc, dyDesc, dxDesc }, .same = 6);
}

cudnnStatus_t cudnnActivationForward(cudnnHandle_t handle, cudnnActivationDescriptor_t act, const void *alpha,
                                     const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                     const cudnnTensorDescriptor_t yDesc, void *y)
{
    DNN_ENTER();
    RUN(MAYA_DNN_POINTWISE, alpha && beta && act, 0, .n = 2, .d = { xDesc, yDesc }, .same = 2);
}

cudnnStatus_t cudnnActivationBackward(cudnnHandle_t handle, cudnnActivationDescriptor_t act, const void *alpha,
                                      const cudnnTensorDescriptor_t yDesc, const void *y,
                                      const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                      const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                      const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    DNN_ENTER();
    RUN(MAYA_DNN_POINTWISE, alpha && beta && act, 0, .n = 4, .d = { yDesc, dyDesc, xDesc, dxDesc }, .same = 14);
}

/* ---- tensor arithmetic ---- */

/* C = alpha A + beta C, A broadcast over C. */
cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t aDesc,
                             const void *A, const void *beta, const cudnnTensorDescriptor_t cDesc, void *C)
{
    DNN_ENTER();
    RUN(MAYA_DNN_POINTWISE, alpha && beta, 0, .n = 2, .d = { cDesc, aDesc }, .bcast = 2);
}

cudnnStatus_t cudnnOpTensor(cudnnHandle_t handle, const cudnnOpTensorDescriptor_t opDesc, const void *alpha1,
                            const cudnnTensorDescriptor_t aDesc, const void *A, const void *alpha2,
                            const cudnnTensorDescriptor_t bDesc, const void *B, const void *beta,
                            const cudnnTensorDescriptor_t cDesc, void *C)
{
    DNN_ENTER();
    RUN(MAYA_DNN_POINTWISE, alpha1 && alpha2 && beta && dnn_optensor_ok(opDesc), 0, .n = 3,
        .d = { cDesc, aDesc, bDesc }, .same = 2, .bcast = 4);
}

cudnnStatus_t cudnnScaleTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y, const void *alpha)
{
    DNN_ENTER();
    RUN(MAYA_DNN_POINTWISE, alpha != NULL, 0, .n = 1, .d = { yDesc });
}

cudnnStatus_t cudnnSetTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y, const void *value)
{
    DNN_ENTER();
    RUN(MAYA_DNN_POINTWISE, value != NULL, 0, .n = 1, .d = { yDesc });
}

/* A copy between layouts (NCHW <-> NHWC, ...). */
cudnnStatus_t cudnnTransformTensor(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                   const void *x, const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    DNN_ENTER();
    RUN(MAYA_DNN_POINTWISE, alpha && beta, 0, .n = 2, .d = { xDesc, yDesc }, .same = 2);
}

/* ---- pooling ---- */

static cudnnStatus_t pool_check(const void *pool, const void *xd, const void *yd)
{
    int dims[CUDNN_DIM_MAX];
    const struct cudnnTensorStruct *x = dnn_tensor(xd), *y = dnn_tensor(yd);
    if (!x || !y || dnn_pool_out(pool, x, dims) || y->nd != x->nd)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "pooling, input or output descriptor missing or inconsistent");
    for (int i = 0; i < y->nd; i++)
        if (y->dims[i] != dims[i])
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "pooled dimension %d is %d, the pooling gives %d", i,
                             y->dims[i], dims[i]);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t pool, const void *alpha,
                                  const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                  const cudnnTensorDescriptor_t yDesc, void *y)
{
    DNN_ENTER();
    if (dnn_handle_ok(handle) && pool_check(pool, xDesc, yDesc) != CUDNN_STATUS_SUCCESS)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    RUN(MAYA_DNN_OTHER, alpha && beta, 0, .n = 2, .d = { xDesc, yDesc });
}

cudnnStatus_t cudnnPoolingBackward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t pool, const void *alpha,
                                   const cudnnTensorDescriptor_t yDesc, const void *y,
                                   const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                   const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                   const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    DNN_ENTER();
    if (dnn_handle_ok(handle) && pool_check(pool, xDesc, yDesc) != CUDNN_STATUS_SUCCESS)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    RUN(MAYA_DNN_OTHER, alpha && beta, 0, .n = 4, .d = { xDesc, dxDesc, yDesc, dyDesc }, .same = 2);
}

/* ---- reductions ---- */

cudnnStatus_t cudnnGetReductionIndicesSize(cudnnHandle_t handle, const cudnnReduceTensorDescriptor_t red,
                                           const cudnnTensorDescriptor_t aDesc, const cudnnTensorDescriptor_t cDesc,
                                           size_t *bytes)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle) || !bytes || !dnn_tensor(aDesc) || dnn_reduce_indices(red, dnn_tensor(cDesc), bytes))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* Partial results of a two-pass reduction: one fp32 value per output
 * element and block of 1024 inputs reduced. */
cudnnStatus_t cudnnGetReductionWorkspaceSize(cudnnHandle_t handle, const cudnnReduceTensorDescriptor_t red,
                                             const cudnnTensorDescriptor_t aDesc, const cudnnTensorDescriptor_t cDesc,
                                             size_t *bytes)
{
    DNN_ENTER();
    const struct cudnnTensorStruct *a = dnn_tensor(aDesc), *c = dnn_tensor(cDesc);
    size_t idx;
    if (!dnn_handle_ok(handle) || !bytes || !a || dnn_reduce_indices(red, c, &idx))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    size_t in = 1, out = 1;
    for (int i = 0; i < a->nd; i++)
        in *= (size_t)a->dims[i];
    for (int i = 0; i < c->nd; i++)
        out *= (size_t)c->dims[i];
    size_t per_out = in / (out ? out : 1);
    *bytes = per_out > 1024 ? out * ((per_out + 1023) / 1024) * 4 : 0;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnReduceTensor(cudnnHandle_t handle, const cudnnReduceTensorDescriptor_t red, void *indices,
                                size_t indices_bytes, void *ws, size_t ws_bytes, const void *alpha,
                                const cudnnTensorDescriptor_t aDesc, const void *A, const void *beta,
                                const cudnnTensorDescriptor_t cDesc, void *C)
{
    DNN_ENTER();
    size_t need;
    if (dnn_handle_ok(handle) && (dnn_reduce_indices(red, dnn_tensor(cDesc), &need) || need > indices_bytes))
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "reduce descriptor missing or indices buffer too small"));
    RUN(MAYA_DNN_REDUCTION, alpha && beta, ws_bytes, .n = 2, .d = { aDesc, cDesc }, .bcast = 2);
}

/* ---- batch normalization ---- */

static int bn_mode_ok(int mode)
{
    return mode >= CUDNN_BATCHNORM_PER_ACTIVATION && mode <= CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
}

/* The scale / bias / mean / variance tensor fits x in mode. */
static int bn_param_ok(int mode, const void *xd, const void *pd)
{
    const struct cudnnTensorStruct *x = dnn_tensor(xd), *p = dnn_tensor(pd);
    if (!x || !p || p->nd != x->nd || p->dims[0] != 1 || p->dims[1] != x->dims[1])
        return 0;
    for (int i = 2; i < x->nd; i++)
        if (p->dims[i] != (mode == CUDNN_BATCHNORM_PER_ACTIVATION ? x->dims[i] : 1))
            return 0;
    return 1;
}

static size_t elems(const void *d)
{
    const struct cudnnTensorStruct *t = dnn_tensor(d);
    size_t n = t ? 1 : 0;
    for (int i = 0; t && i < t->nd; i++)
        n *= (size_t)t->dims[i];
    return n;
}

#define BN_CHECK(MODE, X, P) \
    do { \
        if (dnn_handle_ok(handle) && (!bn_mode_ok(MODE) || !bn_param_ok(MODE, X, P))) \
            DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "batch norm mode %d or parameter tensor shape", \
                                 (int)(MODE))); \
    } while (0)

cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc, void *y,
    const cudnnTensorDescriptor_t pDesc, const void *scale, const void *bias, double factor, void *running_mean,
    void *running_var, double eps, void *save_mean, void *save_inv_var)
{
    DNN_ENTER();
    BN_CHECK(mode, xDesc, pDesc);
    RUN(MAYA_DNN_BN_FWD_TRAIN, alpha && beta && scale && bias && eps >= CUDNN_BN_MIN_EPSILON, 0, .n = 3,
        .d = { xDesc, yDesc, pDesc }, .same = 2);
}

cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t zDesc, const void *z,
    const cudnnTensorDescriptor_t yDesc, void *y, const cudnnTensorDescriptor_t pDesc, const void *scale,
    const void *bias, double factor, void *running_mean, void *running_var, double eps, void *save_mean,
    void *save_inv_var, cudnnActivationDescriptor_t act, void *ws, size_t ws_bytes, void *reserve,
    size_t reserve_bytes)
{
    DNN_ENTER();
    BN_CHECK(mode, xDesc, pDesc);
    RUN(MAYA_DNN_BN_FWD_TRAIN, alpha && beta && scale && bias && eps >= CUDNN_BN_MIN_EPSILON, ws_bytes, .n = 3,
        .d = { xDesc, yDesc, pDesc }, .same = 2);
}

cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc, void *y,
    const cudnnTensorDescriptor_t pDesc, const void *scale, const void *bias, const void *mean, const void *var,
    double eps)
{
    DNN_ENTER();
    BN_CHECK(mode, xDesc, pDesc);
    RUN(MAYA_DNN_BN_FWD_INFER, alpha && beta && scale && bias && mean && var && eps >= CUDNN_BN_MIN_EPSILON, 0,
        .n = 3, .d = { xDesc, yDesc, pDesc }, .same = 2);
}

cudnnStatus_t cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha_data, const void *beta_data,
    const void *alpha_param, const void *beta_param, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t dyDesc, const void *dy, const cudnnTensorDescriptor_t dxDesc, void *dx,
    const cudnnTensorDescriptor_t pDesc, const void *scale, void *dscale, void *dbias, double eps,
    const void *save_mean, const void *save_inv_var)
{
    DNN_ENTER();
    BN_CHECK(mode, xDesc, pDesc);
    RUN(MAYA_DNN_BN_BWD, alpha_data && beta_data && alpha_param && beta_param && eps >= CUDNN_BN_MIN_EPSILON, 0,
        .n = 4, .d = { xDesc, dyDesc, dxDesc, pDesc }, .same = 6);
}

cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void *alpha_data,
    const void *beta_data, const void *alpha_param, const void *beta_param, const cudnnTensorDescriptor_t xDesc,
    const void *x, const cudnnTensorDescriptor_t yDesc, const void *y, const cudnnTensorDescriptor_t dyDesc,
    const void *dy, const cudnnTensorDescriptor_t dzDesc, void *dz, const cudnnTensorDescriptor_t dxDesc, void *dx,
    const cudnnTensorDescriptor_t pDesc, const void *scale, const void *bias, void *dscale, void *dbias, double eps,
    const void *save_mean, const void *save_inv_var, cudnnActivationDescriptor_t act, void *ws, size_t ws_bytes,
    void *reserve, size_t reserve_bytes)
{
    DNN_ENTER();
    BN_CHECK(mode, xDesc, pDesc);
    RUN(MAYA_DNN_BN_BWD, alpha_data && beta_data && alpha_param && beta_param && eps >= CUDNN_BN_MIN_EPSILON,
        ws_bytes, .n = 4, .d = { xDesc, dyDesc, dxDesc, pDesc }, .same = 6);
}

/* Workspace of the Ex forms: per-channel fp32 partial sums of 256-element
 * blocks (mean and variance). */
static size_t bn_workspace(const void *xd)
{
    const struct cudnnTensorStruct *x = dnn_tensor(xd);
    if (!x)
        return 0;
    size_t per_channel = elems(xd) / (size_t)x->dims[1];
    return (size_t)x->dims[1] * ((per_channel + 255) / 256) * 2 * sizeof(float);
}

cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t zDesc, const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t pDesc,
    const cudnnActivationDescriptor_t act, size_t *bytes)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle) || !bytes || !bn_mode_ok(mode) || !bn_param_ok(mode, xDesc, pDesc))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *bytes = bn_workspace(xDesc);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t dyDesc, const cudnnTensorDescriptor_t dzDesc,
    const cudnnTensorDescriptor_t dxDesc, const cudnnTensorDescriptor_t pDesc, const cudnnActivationDescriptor_t act,
    size_t *bytes)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle) || !bytes || !bn_mode_ok(mode) || !bn_param_ok(mode, xDesc, pDesc))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *bytes = bn_workspace(xDesc);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* With an activation the forward pass keeps a bit per element for the
 * backward pass. */
cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(cudnnHandle_t handle, cudnnBatchNormMode_t mode,
                                                                   cudnnBatchNormOps_t ops,
                                                                   const cudnnActivationDescriptor_t act,
                                                                   const cudnnTensorDescriptor_t xDesc, size_t *bytes)
{
    DNN_ENTER();
    if (!dnn_handle_ok(handle) || !bytes || !bn_mode_ok(mode) || !dnn_tensor(xDesc))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *bytes = ops == CUDNN_BATCHNORM_OPS_BN ? 0 : (elems(xDesc) + 127) / 128 * 16;
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* ---- dropout ---- */

cudnnStatus_t cudnnDropoutForward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t drop,
                                  const cudnnTensorDescriptor_t xDesc, const void *x,
                                  const cudnnTensorDescriptor_t yDesc, void *y, void *reserve, size_t reserve_bytes)
{
    DNN_ENTER();
    RUN(MAYA_DNN_POINTWISE, drop && reserve, 0, .n = 2, .d = { xDesc, yDesc }, .same = 2);
}

cudnnStatus_t cudnnDropoutBackward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t drop,
                                   const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                   const cudnnTensorDescriptor_t dxDesc, void *dx, void *reserve,
                                   size_t reserve_bytes)
{
    DNN_ENTER();
    RUN(MAYA_DNN_POINTWISE, drop && reserve, 0, .n = 2, .d = { dyDesc, dxDesc }, .same = 2);
}

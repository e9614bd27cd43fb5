/* Legacy tensor and filter descriptors, with cuDNN's checks (measured on
 * the real library: non-positive sizes and unknown formats or types are
 * CUDNN_STATUS_BAD_PARAM, more than CUDNN_DIM_MAX dimensions
 * CUDNN_STATUS_NOT_SUPPORTED). */
#include <stdlib.h>
#include <string.h>

#include "dnn.h"

static int format_ok(int f)
{
    return f == CUDNN_TENSOR_NCHW || f == CUDNN_TENSOR_NHWC || f == CUDNN_TENSOR_NCHW_VECT_C;
}

static int dtype_ok(int t)
{
    return dnn_dtype_bytes(t) > 0;
}

/* Packed strides of dims in a format: NCHW row-major, NHWC channels last. */
static void packed_strides(int format, int nd, const int *dims, int *strides)
{
    int s = 1;
    if (format == CUDNN_TENSOR_NHWC && nd >= 3) {
        strides[1] = 1;
        s = dims[1];
        for (int i = nd - 1; i >= 2; i--)
            strides[i] = s, s *= dims[i];
        strides[0] = s;
        return;
    }
    for (int i = nd - 1; i >= 0; i--)
        strides[i] = s, s *= dims[i];
}

DNN_CREATE_DESTROY(cudnnTensorDescriptor_t, cudnnTensorStruct, DNN_TENSOR_MAGIC, , cudnnCreateTensorDescriptor,
                   cudnnDestroyTensorDescriptor)

/* Give t its shape after the checks; strides NULL: packed in format. */
static cudnnStatus_t tensor_set(cudnnTensorDescriptor_t t, int format, int dtype, int nd, const int *dims,
                                const int *strides)
{
    if (!t || t->magic != DNN_TENSOR_MAGIC || !dims)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "tensor descriptor or dimensions missing");
    if (nd > CUDNN_DIM_MAX)
        return dnn_error(CUDNN_STATUS_NOT_SUPPORTED, "%d dimensions: at most %d are supported", nd, CUDNN_DIM_MAX);
    if (nd <= 0 || !format_ok(format) || !dtype_ok(dtype))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "bad dimension count %d, format %d or data type %d", nd, format,
                         dtype);
    for (int i = 0; i < nd; i++)
        if (dims[i] <= 0 || (strides && strides[i] <= 0))
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "dimension %d: size %d stride %d, both must be positive", i,
                             dims[i], strides ? strides[i] : 1);
    t->set = 1;
    t->format = format;
    t->dtype = dtype;
    t->nd = nd;
    memcpy(t->dims, dims, (size_t)nd * sizeof *dims);
    if (strides)
        memcpy(t->strides, strides, (size_t)nd * sizeof *strides);
    else
        packed_strides(format, nd, dims, t->strides);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t desc, cudnnTensorFormat_t format,
                                         cudnnDataType_t dtype, int n, int c, int h, int w)
{
    DNN_ENTER();
    int dims[4] = { n, c, h, w };
    DNN_RETURN(tensor_set(desc, format, dtype, 4, dims, NULL));
}

cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t desc, cudnnDataType_t dtype, int n, int c, int h,
                                           int w, int ns, int cs, int hs, int ws)
{
    DNN_ENTER();
    int dims[4] = { n, c, h, w }, strides[4] = { ns, cs, hs, ws };
    DNN_RETURN(tensor_set(desc, CUDNN_TENSOR_NCHW, dtype, 4, dims, strides));
}

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t dtype, int nd,
                                         const int dims[], const int strides[])
{
    DNN_ENTER();
    if (!strides)
        DNN_RETURN(dnn_error(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensorNdDescriptor: strides missing"));
    DNN_RETURN(tensor_set(desc, CUDNN_TENSOR_NCHW, dtype, nd, dims, strides));
}

cudnnStatus_t cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t desc, cudnnTensorFormat_t format,
                                           cudnnDataType_t dtype, int nd, const int dims[])
{
    DNN_ENTER();
    DNN_RETURN(tensor_set(desc, format, dtype, nd, dims, NULL));
}

cudnnStatus_t cudnnGetTensor4dDescriptor(const cudnnTensorDescriptor_t desc, cudnnDataType_t *dtype, int *n, int *c,
                                         int *h, int *w, int *ns, int *cs, int *hs, int *ws)
{
    DNN_ENTER();
    const struct cudnnTensorStruct *t = dnn_tensor(desc);
    if (!t || !dtype || !n || !c || !h || !w || !ns || !cs || !hs || !ws)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    int d[4] = { 1, 1, 1, 1 }, s[4] = { 1, 1, 1, 1 };
    for (int i = 0; i < 4 && i < t->nd; i++)
        d[i] = t->dims[i], s[i] = t->strides[i];
    *dtype = t->dtype;
    *n = d[0], *c = d[1], *h = d[2], *w = d[3];
    *ns = s[0], *cs = s[1], *hs = s[2], *ws = s[3];
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t desc, int requested, cudnnDataType_t *dtype,
                                         int *nd, int dims[], int strides[])
{
    DNN_ENTER();
    const struct cudnnTensorStruct *t = dnn_tensor(desc);
    if (!t || !dtype || !nd || requested < 0 || (requested > 0 && (!dims || !strides)))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *dtype = t->dtype;
    *nd = t->nd;
    for (int i = 0; i < requested && i < t->nd; i++)
        dims[i] = t->dims[i], strides[i] = t->strides[i];
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* Bytes from the first element to the last one the strides reach. */
static size_t span_bytes(int nd, const int *dims, const int *strides, int dtype)
{
    size_t last = 0;
    for (int i = 0; i < nd; i++)
        last += (size_t)(dims[i] - 1) * (size_t)strides[i];
    return (last + 1) * (size_t)dnn_dtype_bytes(dtype);
}

cudnnStatus_t cudnnGetTensorSizeInBytes(const cudnnTensorDescriptor_t desc, size_t *size)
{
    DNN_ENTER();
    const struct cudnnTensorStruct *t = dnn_tensor(desc);
    if (!t || !size)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *size = span_bytes(t->nd, t->dims, t->strides, t->dtype);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* ---- filters ---- */

DNN_CREATE_DESTROY(cudnnFilterDescriptor_t, cudnnFilterStruct, DNN_FILTER_MAGIC, , cudnnCreateFilterDescriptor,
                   cudnnDestroyFilterDescriptor)

static cudnnStatus_t filter_set(cudnnFilterDescriptor_t f, int dtype, int format, int nd, const int *dims)
{
    if (!f || f->magic != DNN_FILTER_MAGIC || !dims)
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "filter descriptor or dimensions missing");
    if (nd > CUDNN_DIM_MAX)
        return dnn_error(CUDNN_STATUS_NOT_SUPPORTED, "%d filter dimensions: at most %d", nd, CUDNN_DIM_MAX);
    if (nd < 3 || !format_ok(format) || !dtype_ok(dtype))
        return dnn_error(CUDNN_STATUS_BAD_PARAM, "bad filter dimension count %d, format %d or type %d", nd, format,
                         dtype);
    for (int i = 0; i < nd; i++)
        if (dims[i] <= 0)
            return dnn_error(CUDNN_STATUS_BAD_PARAM, "filter dimension %d is %d", i, dims[i]);
    f->set = 1;
    f->dtype = dtype, f->format = format, f->nd = nd;
    memcpy(f->dims, dims, (size_t)nd * sizeof *dims);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t desc, cudnnDataType_t dtype,
                                         cudnnTensorFormat_t format, int k, int c, int h, int w)
{
    DNN_ENTER();
    int dims[4] = { k, c, h, w };
    DNN_RETURN(filter_set(desc, dtype, format, 4, dims));
}

cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t desc, cudnnDataType_t dtype,
                                         cudnnTensorFormat_t format, int nd, const int dims[])
{
    DNN_ENTER();
    DNN_RETURN(filter_set(desc, dtype, format, nd, dims));
}

cudnnStatus_t cudnnGetFilter4dDescriptor(const cudnnFilterDescriptor_t desc, cudnnDataType_t *dtype,
                                         cudnnTensorFormat_t *format, int *k, int *c, int *h, int *w)
{
    DNN_ENTER();
    const struct cudnnFilterStruct *f = dnn_filter(desc);
    if (!f || f->nd != 4 || !dtype || !format || !k || !c || !h || !w)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *dtype = f->dtype, *format = f->format;
    *k = f->dims[0], *c = f->dims[1], *h = f->dims[2], *w = f->dims[3];
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t desc, int requested, cudnnDataType_t *dtype,
                                         cudnnTensorFormat_t *format, int *nd, int dims[])
{
    DNN_ENTER();
    const struct cudnnFilterStruct *f = dnn_filter(desc);
    if (!f || !dtype || !format || !nd || requested < 0 || (requested > 0 && !dims))
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    *dtype = f->dtype, *format = f->format, *nd = f->nd;
    for (int i = 0; i < requested && i < f->nd; i++)
        dims[i] = f->dims[i];
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

cudnnStatus_t cudnnGetFilterSizeInBytes(const cudnnFilterDescriptor_t desc, size_t *size)
{
    DNN_ENTER();
    const struct cudnnFilterStruct *f = dnn_filter(desc);
    if (!f || !size)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    size_t n = 1;
    for (int i = 0; i < f->nd; i++)
        n *= (size_t)f->dims[i];
    *size = n * (size_t)dnn_dtype_bytes(f->dtype);
    DNN_RETURN(CUDNN_STATUS_SUCCESS);
}

/* cudnnDeriveBNTensorDescriptor: the shape of batch norm's scale, bias,
 * mean and variance: 1 x C x 1 x 1 (SPATIAL) or 1 x C x H x W (PER_ACTIVATION),
 * in float unless the data is double. */
cudnnStatus_t cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derived, const cudnnTensorDescriptor_t xDesc,
                                            cudnnBatchNormMode_t mode)
{
    DNN_ENTER();
    const struct cudnnTensorStruct *x = dnn_tensor(xDesc);
    if (!x || !derived || derived->magic != DNN_TENSOR_MAGIC || mode < CUDNN_BATCHNORM_PER_ACTIVATION ||
        mode > CUDNN_BATCHNORM_SPATIAL_PERSISTENT)
        DNN_RETURN(CUDNN_STATUS_BAD_PARAM);
    int dims[CUDNN_DIM_MAX];
    for (int i = 0; i < x->nd; i++)
        dims[i] = i == 1 || (i >= 2 && mode == CUDNN_BATCHNORM_PER_ACTIVATION) ? x->dims[i] : 1;
    int dtype = x->dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    DNN_RETURN(tensor_set(derived, CUDNN_TENSOR_NCHW, dtype, x->nd, dims, NULL));
}

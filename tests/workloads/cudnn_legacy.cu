// A small CNN training step through cuDNN's legacy API, as frameworks
// before the graph API issued it: a 3x3 convolution (algorithm from
// cudnnGetConvolutionForwardAlgorithm_v7, workspace from its query), bias
// add, ReLU, 2x2 max pooling, batch norm, softmax, then the backward
// convolutions with algorithms from cudnnFind*. Then arguments cuDNN must
// refuse, each printed with the status it got.
#include <cstdio>
#include <cstdlib>
#include <cudnn.h>
#include <cuda_runtime.h>

#define CHECK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CHECK_DNN(x) do { cudnnStatus_t s_ = (x); if (s_ != CUDNN_STATUS_SUCCESS) { \
    char msg_[256]; cudnnGetLastErrorString(msg_, sizeof msg_); \
    fprintf(stderr, "line %d: %s: %s (%s)\n", __LINE__, #x, cudnnGetErrorString(s_), msg_); exit(1); } } while (0)

static cudnnTensorDescriptor_t tensor(int n, int c, int h, int w, cudnnDataType_t t = CUDNN_DATA_HALF)
{
    cudnnTensorDescriptor_t d;
    CHECK_DNN(cudnnCreateTensorDescriptor(&d));
    CHECK_DNN(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, t, n, c, h, w));
    return d;
}

int main()
{
    printf("cudnn version %zu\n", cudnnGetVersion());
    cudnnHandle_t h;
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    CHECK_DNN(cudnnCreate(&h));
    CHECK_DNN(cudnnSetStream(h, stream));
    void *buf[8];
    for (int i = 0; i < 8; i++)
        CHECK_CUDA(cudaMalloc(&buf[i], 64 << 20));
    const float one = 1, zero = 0;

    // conv: x [32, 64, 56, 56] * w [128, 64, 3, 3], pad 1, stride 1 -> y [32, 128, 56, 56]
    cudnnTensorDescriptor_t x = tensor(32, 64, 56, 56);
    cudnnFilterDescriptor_t w;
    CHECK_DNN(cudnnCreateFilterDescriptor(&w));
    CHECK_DNN(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 128, 64, 3, 3));
    cudnnConvolutionDescriptor_t conv;
    CHECK_DNN(cudnnCreateConvolutionDescriptor(&conv));
    CHECK_DNN(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_DNN(cudnnSetConvolutionMathType(conv, CUDNN_TENSOR_OP_MATH));
    int n, c, hh, ww;
    CHECK_DNN(cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &hh, &ww));
    printf("conv output %d %d %d %d\n", n, c, hh, ww);
    cudnnTensorDescriptor_t y = tensor(n, c, hh, ww);
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int got = 0;
    CHECK_DNN(cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, conv, y, 8, &got, perf));
    size_t ws = 0;
    CHECK_DNN(cudnnGetConvolutionForwardWorkspaceSize(h, x, w, conv, y, perf[0].algo, &ws));
    printf("fwd algos %d, best %d (status %d), workspace %zu\n", got, perf[0].algo, perf[0].status, ws);
    CHECK_DNN(cudnnConvolutionForward(h, &one, x, buf[0], w, buf[1], conv, perf[0].algo, buf[7], ws, &zero, y,
                                      buf[2]));
    // bias and ReLU
    cudnnTensorDescriptor_t bias = tensor(1, 128, 1, 1);
    CHECK_DNN(cudnnAddTensor(h, &one, bias, buf[3], &one, y, buf[2]));
    cudnnActivationDescriptor_t relu;
    CHECK_DNN(cudnnCreateActivationDescriptor(&relu));
    CHECK_DNN(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
    CHECK_DNN(cudnnActivationForward(h, relu, &one, y, buf[2], &zero, y, buf[2]));
    // 2x2 max pooling -> [32, 128, 28, 28]
    cudnnPoolingDescriptor_t pool;
    CHECK_DNN(cudnnCreatePoolingDescriptor(&pool));
    CHECK_DNN(cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2));
    CHECK_DNN(cudnnGetPooling2dForwardOutputDim(pool, y, &n, &c, &hh, &ww));
    cudnnTensorDescriptor_t p = tensor(n, c, hh, ww);
    CHECK_DNN(cudnnPoolingForward(h, pool, &one, y, buf[2], &zero, p, buf[4]));
    // batch norm (spatial) in training
    cudnnTensorDescriptor_t bn;
    CHECK_DNN(cudnnCreateTensorDescriptor(&bn));
    CHECK_DNN(cudnnDeriveBNTensorDescriptor(bn, p, CUDNN_BATCHNORM_SPATIAL));
    CHECK_DNN(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, p, buf[4], p, buf[5],
                                                     bn, buf[6], buf[6], 0.1, buf[6], buf[6], 1e-5, buf[6], buf[6]));
    // softmax over a [32, 10] logits tensor
    cudnnTensorDescriptor_t logits = tensor(32, 10, 1, 1, CUDNN_DATA_FLOAT);
    CHECK_DNN(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, logits, buf[0], &zero,
                                  logits, buf[1]));

    // backward: data and filter gradients with algorithms cudnnFind* picked
    cudnnConvolutionBwdDataAlgoPerf_t bd[8];
    CHECK_DNN(cudnnFindConvolutionBackwardDataAlgorithm(h, w, y, conv, x, 8, &got, bd));
    CHECK_DNN(cudnnGetConvolutionBackwardDataWorkspaceSize(h, w, y, conv, x, bd[0].algo, &ws));
    CHECK_DNN(cudnnConvolutionBackwardData(h, &one, w, buf[1], y, buf[2], conv, bd[0].algo, buf[7], ws, &zero, x,
                                           buf[0]));
    cudnnConvolutionBwdFilterAlgoPerf_t bf[8];
    CHECK_DNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, x, buf[0], y, buf[2], conv, w, buf[1], 8, &got, bf,
                                                            buf[7], 64 << 20));
    CHECK_DNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x, y, conv, w, bf[0].algo, &ws));
    printf("bwd filter algos %d, best %d deterministic %d\n", got, bf[0].algo, bf[0].determinism);
    CHECK_DNN(cudnnConvolutionBackwardFilter(h, &one, x, buf[0], y, buf[2], conv, bf[0].algo, buf[7], ws, &zero, w,
                                             buf[1]));
    CHECK_DNN(cudnnConvolutionBackwardBias(h, &one, y, buf[2], &zero, bias, buf[3]));

    // a strided 1x1 convolution with groups and dilation, Nd form: x [8, 32, 20, 20], 4 groups
    cudnnTensorDescriptor_t gx = tensor(8, 32, 20, 20, CUDNN_DATA_FLOAT);
    cudnnFilterDescriptor_t gw;
    CHECK_DNN(cudnnCreateFilterDescriptor(&gw));
    int wdims[4] = { 64, 8, 3, 3 };
    CHECK_DNN(cudnnSetFilterNdDescriptor(gw, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, wdims));
    cudnnConvolutionDescriptor_t gconv;
    CHECK_DNN(cudnnCreateConvolutionDescriptor(&gconv));
    int pad[2] = { 2, 2 }, stride[2] = { 2, 2 }, dil[2] = { 2, 2 };
    CHECK_DNN(cudnnSetConvolutionNdDescriptor(gconv, 2, pad, stride, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_DNN(cudnnSetConvolutionGroupCount(gconv, 4));
    int gy_dims[4];
    CHECK_DNN(cudnnGetConvolutionNdForwardOutputDim(gconv, gx, gw, 4, gy_dims));
    cudnnTensorDescriptor_t gy = tensor(gy_dims[0], gy_dims[1], gy_dims[2], gy_dims[3], CUDNN_DATA_FLOAT);
    CHECK_DNN(cudnnConvolutionForward(h, &one, gx, buf[0], gw, buf[1], gconv,
                                      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &zero, gy, buf[2]));
    printf("grouped output %d %d %d %d\n", gy_dims[0], gy_dims[1], gy_dims[2], gy_dims[3]);

    // arguments cuDNN refuses
    cudnnTensorDescriptor_t wrong = tensor(32, 128, 55, 55);
    printf("status output_shape %d\n", cudnnConvolutionForward(h, &one, x, buf[0], w, buf[1], conv,
                                                               perf[0].algo, buf[7], 64 << 20, &zero, wrong, buf[2]));
    printf("status winograd_5x5 %d\n",
           cudnnConvolutionForward(h, &one, gx, buf[0], gw, buf[1], gconv, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,
                                   buf[7], 64 << 20, &zero, gy, buf[2]));
    printf("status no_workspace %d\n", cudnnConvolutionForward(h, &one, x, buf[0], w, buf[1], conv,
                                                               CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 0, &zero, y,
                                                               buf[2]));
    cudnnTensorDescriptor_t bad;
    CHECK_DNN(cudnnCreateTensorDescriptor(&bad));
    printf("status negative_dim %d\n", cudnnSetTensor4dDescriptor(bad, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 8, 8));
    int dims9[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    printf("status nine_dims %d\n", cudnnSetTensorNdDescriptor(bad, CUDNN_DATA_FLOAT, 9, dims9, dims9));
    printf("status negative_pad %d\n",
           cudnnSetConvolution2dDescriptor(conv, -1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    printf("status null_handle %d\n", cudnnConvolutionForward(NULL, &one, x, buf[0], w, buf[1], conv,
                                                              perf[0].algo, buf[7], 64 << 20, &zero, y, buf[2]));
    cudnnFilterDescriptor_t w3;
    CHECK_DNN(cudnnCreateFilterDescriptor(&w3));
    CHECK_DNN(cudnnSetFilter4dDescriptor(w3, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 128, 3, 3, 3));
    printf("status channel_mismatch %d\n", cudnnGetConvolution2dForwardOutputDim(conv, x, w3, &n, &c, &hh, &ww));
    printf("error string %s\n", cudnnGetErrorString(CUDNN_STATUS_NOT_SUPPORTED));

    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_DNN(cudnnDestroy(h));
    printf("cudnn_legacy: ok\n");
    return 0;
}

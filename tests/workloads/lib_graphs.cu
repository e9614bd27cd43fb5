// cuBLAS, cuBLASLt and cuDNN work captured into a CUDA graph, as PyTorch's
// CUDA graphs capture a training step: a GEMM, a cuBLASLt matmul and a
// convolution captured once, the graph launched twice.
#include <cstdio>
#include <cstdlib>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <cuda_runtime.h>

#define CHECK(x) do { if ((x) != 0) { fprintf(stderr, "line %d: %s failed\n", __LINE__, #x); exit(1); } } while (0)

int main()
{
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    cublasHandle_t blas;
    CHECK(cublasCreate(&blas));
    CHECK(cublasSetStream(blas, stream));
    cublasLtHandle_t lt;
    CHECK(cublasLtCreate(&lt));
    cudnnHandle_t dnn;
    CHECK(cudnnCreate(&dnn));
    CHECK(cudnnSetStream(dnn, stream));
    void *a, *b, *c;
    CHECK(cudaMalloc(&a, 16 << 20));
    CHECK(cudaMalloc(&b, 16 << 20));
    CHECK(cudaMalloc(&c, 16 << 20));
    const float one = 1, zero = 0;

    // descriptors are made before the capture, as frameworks do
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16F, 256, 128, 256));
    CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16F, 128, 64, 128));
    CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16F, 256, 64, 256));
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    CHECK(cudnnCreateTensorDescriptor(&x));
    CHECK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 4, 8, 16, 16));
    CHECK(cudnnCreateTensorDescriptor(&y));
    CHECK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 4, 16, 16, 16));
    CHECK(cudnnCreateFilterDescriptor(&w));
    CHECK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 16, 8, 3, 3));
    CHECK(cudnnCreateConvolutionDescriptor(&conv));
    CHECK(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));

    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    CHECK(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, 512, 384, 256, &one, (float *)a, 512, (float *)b, 256, &zero,
                      (float *)c, 512));
    CHECK(cublasLtMatmul(lt, op, &one, a, la, b, lb, &zero, c, lc, c, lc, NULL, NULL, 0, stream));
    CHECK(cudnnConvolutionForward(dnn, &one, x, a, w, b, conv, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                                  &zero, y, c));
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(graph, NULL, &nodes));
    for (int i = 0; i < 2; i++)
        CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    printf("lib_graphs: ok, %zu nodes\n", nodes);
    return 0;
}

// A training step captured into a CUDA graph, communication included, as
// frameworks capture forward and backward: a kernel and a cuBLAS GEMM, a
// large all-reduce, an all-gather, a reduce-scatter on a second stream
// joined back, a ring of send/recv in one NCCL group, and a small
// all-reduce. The graph is launched N times between two eager all-reduces,
// so every rank issues 2 + 4N collectives and N sends and receives.
//
// One rank per process: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
// MASTER_PORT (nccl_boot.h). Options: --launches N (default 4);
// --late-launch: launch the graph once more after the communicator is
// destroyed (a bug: on a GPU its NCCL kernels would use freed state).
// Prints "nccl_graph rank R/N: L launches of K nodes".
#include <cublas_v2.h>

#include "nccl_boot.h"

__global__ void scale(float *x, size_t n, float a)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] *= a;
}

int main(int argc, char **argv)
{
    int launches = 4;
    bool late = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--launches") && i + 1 < argc) {
            launches = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--late-launch")) {
            late = true;
        } else {
            fprintf(stderr, "usage: nccl_graph [--launches N] [--late-launch]\n");
            return 2;
        }
    }
    if (launches < 1) {
        fprintf(stderr, "nccl_graph: --launches must be at least 1\n");
        return 2;
    }
    int nranks = env_int("WORLD_SIZE", 1), rank = env_int("RANK", 0), ndev = 0;
    CUDA_CHECK(cudaGetDeviceCount(&ndev));
    CUDA_CHECK(cudaSetDevice(env_int("LOCAL_RANK", 0) % ndev));
    ncclUniqueId id;
    share_unique_id(&id, rank, nranks);
    ncclComm_t comm;
    NCCL_CHECK(ncclCommInitRank(&comm, nranks, id, rank));

    const size_t big = 8u << 20, part = 1u << 20, ring = 2u << 20, small = 16;
    float *grad, *gathered, *shard, *ring_send, *ring_recv, *tiny, *a, *b, *c;
    CUDA_CHECK(cudaMalloc(&grad, big * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&gathered, part * nranks * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&shard, part * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&ring_send, ring * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&ring_recv, ring * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&tiny, small * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&a, 1024 * 1024 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b, 1024 * 1024 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&c, 1024 * 1024 * sizeof(float)));
    cudaStream_t s, side;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t fork, join;
    CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    cublasHandle_t blas;
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS || cublasSetStream(blas, s) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "rank %d: cublas setup failed\n", rank);
        return 1;
    }
    const float one = 1, zero = 0;

    NCCL_CHECK(ncclAllReduce(grad, grad, big, ncclFloat, ncclSum, comm, s)); // eager, before

    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    scale<<<256, 256, 0, s>>>(grad, big, 0.5f);
    if (cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, 1024, 1024, 1024, &one, a, 1024, b, 1024, &zero, c, 1024) !=
        CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "rank %d: cublasSgemm in the capture failed\n", rank);
        return 1;
    }
    NCCL_CHECK(ncclAllReduce(grad, grad, big, ncclFloat, ncclSum, comm, s));
    NCCL_CHECK(ncclAllGather(shard, gathered, part, ncclFloat, comm, s));
    CUDA_CHECK(cudaEventRecord(fork, s));
    CUDA_CHECK(cudaStreamWaitEvent(side, fork, 0));
    NCCL_CHECK(ncclReduceScatter(gathered, shard, part, ncclFloat, ncclSum, comm, side));
    CUDA_CHECK(cudaEventRecord(join, side));
    CUDA_CHECK(cudaStreamWaitEvent(s, join, 0));
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(ring_send, ring, ncclFloat, (rank + 1) % nranks, comm, s));
    NCCL_CHECK(ncclRecv(ring_recv, ring, ncclFloat, (rank + nranks - 1) % nranks, comm, s));
    NCCL_CHECK(ncclGroupEnd());
    NCCL_CHECK(ncclAllReduce(tiny, tiny, small, ncclFloat, ncclMax, comm, s));
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    size_t nodes = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, NULL, &nodes));

    for (int i = 0; i < launches; i++)
        CUDA_CHECK(cudaGraphLaunch(exec, s));
    NCCL_CHECK(ncclAllReduce(grad, grad, big, ncclFloat, ncclSum, comm, s)); // eager, after
    CUDA_CHECK(cudaStreamSynchronize(s));

    NCCL_CHECK(ncclCommFinalize(comm));
    NCCL_CHECK(ncclCommDestroy(comm));
    if (late) {
        CUDA_CHECK(cudaGraphLaunch(exec, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    cublasDestroy(blas);
    printf("nccl_graph rank %d/%d: %d launches of %zu nodes\n", rank, nranks, launches, nodes);
    return 0;
}

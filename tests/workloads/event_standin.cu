// Events around work while another thread is blocked in a collective: one
// process drives two GPUs (ncclCommInitAll); a second thread starts an
// all-reduce on GPU 1 and waits for GPU 0's part, while the main thread
// times a kernel on GPU 0 between two events, then joins the all-reduce.
// Prints the kernel's elapsed time in ms. On a GPU it is the kernel's time;
// under the emulator without a trace (no device clock) it is the time
// between the records, and never 0: work took place between them.
#include <cstdio>
#include <pthread.h>
#include <unistd.h>

#include "nccl_boot.h"

__global__ void scale(float *x, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

static ncclComm_t comms[2];
static float *bufs[2];
static cudaStream_t streams[2];
static const int n = 1 << 20;
static const int count = 16; // a few values: the ranks exchange them

static void *peer(void *)
{
    CUDA_CHECK(cudaSetDevice(1));
    NCCL_CHECK(ncclAllReduce(bufs[1], bufs[1], count, ncclFloat, ncclSum, comms[1], streams[1]));
    CUDA_CHECK(cudaStreamSynchronize(streams[1]));
    return NULL;
}

int main()
{
    int devs[2] = { 0, 1 };
    NCCL_CHECK(ncclCommInitAll(comms, 2, devs));
    for (int d = 0; d < 2; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaMalloc(&bufs[d], n * sizeof(float)));
        CUDA_CHECK(cudaStreamCreate(&streams[d]));
    }
    CUDA_CHECK(cudaSetDevice(0));
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    pthread_t t;
    if (pthread_create(&t, NULL, peer, NULL) != 0)
        return 1;
    usleep(200 * 1000); // the peer is waiting for GPU 0 by now
    CUDA_CHECK(cudaEventRecord(a, streams[0]));
    scale<<<(n + 255) / 256, 256, 0, streams[0]>>>(bufs[0], n, 2.0f);
    CUDA_CHECK(cudaEventRecord(b, streams[0]));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = -1;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    NCCL_CHECK(ncclAllReduce(bufs[0], bufs[0], count, ncclFloat, ncclSum, comms[0], streams[0]));
    CUDA_CHECK(cudaStreamSynchronize(streams[0]));
    pthread_join(t, NULL);
    printf("kernel_ms=%.6f\n", ms);
    for (int d = 0; d < 2; d++)
        NCCL_CHECK(ncclCommDestroy(comms[d]));
    return 0;
}

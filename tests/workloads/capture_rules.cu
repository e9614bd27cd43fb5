// The rules of stream capture that break a capture, as CUDA enforces them:
// a fork not joined back (cudaErrorStreamCaptureUnjoined); the legacy stream
// used while a blocking stream captures (cudaErrorStreamCaptureImplicit);
// capturing the legacy stream; synchronising a capturing stream; ending a
// capture on another stream; and capture modes across threads: another
// thread's cudaMalloc breaks a global-mode capture, not a thread-local one,
// and never when that thread has relaxed its mode.
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <cuda_runtime.h>
#include "rt_check.h"

__global__ void k(float *x)
{
    x[threadIdx.x] = 1.0f;
}

static cudaError_t malloc_in_thread(bool relaxed)
{
    cudaError_t r;
    std::thread t([&] {
        if (relaxed) {
            cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
            CHECK(cudaThreadExchangeStreamCaptureMode(&m));
        }
        void *p = NULL;
        r = cudaMalloc(&p, 256);
        if (r == cudaSuccess)
            CHECK(cudaFree(p));
    });
    t.join();
    return r;
}

int main()
{
    float *x;
    CHECK(cudaMalloc(&x, 4096));
    cudaStream_t s1, s2, blocking;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK(cudaStreamCreate(&blocking));
    cudaEvent_t e;
    CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    cudaGraph_t g;

    // a fork that is never joined
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaEventRecord(e, s1));
    CHECK(cudaStreamWaitEvent(s2, e, 0));
    k<<<1, 32, 0, s2>>>(x);
    EXPECT(cudaStreamEndCapture(s2, &g) == cudaErrorStreamCaptureUnmatched); // s2 did not begin it
    EXPECT(cudaStreamEndCapture(s1, &g) == cudaErrorStreamCaptureUnjoined && g == NULL);
    cudaStreamCaptureStatus st;
    CHECK(cudaStreamIsCapturing(s2, &st));
    EXPECT(st == cudaStreamCaptureStatusNone); // the whole capture ended
    cudaGetLastError();

    // the legacy stream while a blocking stream captures
    CHECK(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeGlobal));
    EXPECT(cudaMemsetAsync(x, 0, 64, 0) == cudaErrorStreamCaptureImplicit);
    CHECK(cudaStreamIsCapturing(blocking, &st));
    EXPECT(st == cudaStreamCaptureStatusInvalidated);
    EXPECT(cudaMemsetAsync(x, 0, 64, blocking) == cudaErrorStreamCaptureInvalidated);
    EXPECT(cudaStreamEndCapture(blocking, &g) == cudaErrorStreamCaptureInvalidated);
    // ... while a non-blocking one captures: allowed
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemsetAsync(x, 0, 64, 0));
    k<<<1, 32, 0, s1>>>(x);
    EXPECT(cudaStreamSynchronize(s1) == cudaErrorStreamCaptureUnsupported);
    EXPECT(cudaStreamEndCapture(s1, &g) == cudaErrorStreamCaptureInvalidated);
    EXPECT(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
    cudaGetLastError();

    // capture modes across threads
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    k<<<1, 32, 0, s1>>>(x);
    EXPECT(malloc_in_thread(true) == cudaSuccess); // relaxed thread: fine
    CHECK(cudaStreamIsCapturing(s1, &st));
    EXPECT(st == cudaStreamCaptureStatusActive);
    EXPECT(malloc_in_thread(false) == cudaErrorStreamCaptureUnsupported); // breaks the global capture
    CHECK(cudaStreamIsCapturing(s1, &st));
    EXPECT(st == cudaStreamCaptureStatusInvalidated);
    EXPECT(cudaStreamEndCapture(s1, &g) == cudaErrorStreamCaptureInvalidated);
    cudaGetLastError();

    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
    k<<<1, 32, 0, s1>>>(x);
    EXPECT(malloc_in_thread(false) == cudaSuccess); // another thread: not its capture
    void *p;
    EXPECT(cudaMalloc(&p, 256) == cudaErrorStreamCaptureUnsupported); // this thread's capture
    EXPECT(cudaStreamEndCapture(s1, &g) == cudaErrorStreamCaptureInvalidated);
    cudaGetLastError();

    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
    k<<<1, 32, 0, s1>>>(x);
    CHECK(cudaStreamEndCapture(s1, &g));
    size_t n = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &n));
    EXPECT(n == 1);
    CHECK(cudaGraphDestroy(g));

    // Graph memory: allocated and freed inside the graph, it is the graph's
    // until the graph and its executable copies are gone; allocated without
    // being freed, it is the program's.
    size_t f0, f1, t;
    CHECK(cudaMemGetInfo(&f0, &t));
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    float *ws, *kept;
    CHECK(cudaMallocAsync(&ws, 4 << 20, s1));
    CHECK(cudaMallocAsync(&kept, 2 << 20, s1));
    k<<<1, 32, 0, s1>>>(ws);
    CHECK(cudaFreeAsync(ws, s1));
    CHECK(cudaStreamEndCapture(s1, &g));
    CHECK(cudaMemGetInfo(&f1, &t));
    EXPECT(f0 - f1 == (6u << 20));
    cudaGraphExec_t gx;
    CHECK(cudaGraphInstantiate(&gx, g, 0));
    CHECK(cudaGraphLaunch(gx, s1));
    CHECK(cudaGraphLaunch(gx, s1));
    CHECK(cudaStreamSynchronize(s1));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaMemGetInfo(&f1, &t));
    EXPECT(f0 - f1 == (6u << 20)); // the executable graph still holds it
    CHECK(cudaGraphExecDestroy(gx));
    CHECK(cudaMemGetInfo(&f1, &t));
    EXPECT(f0 - f1 == (2u << 20)); // what the graph did not free stays
    CHECK(cudaFree(kept));
    CHECK(cudaMemGetInfo(&f1, &t));
    EXPECT(f1 == f0);

    CHECK(cudaFree(x));
    printf("capture_rules: ok\n");
    return 0;
}

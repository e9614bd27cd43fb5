// Several streams with events and host callbacks. Checks what the host can
// see: host functions run in the order they were issued per stream, each
// has run by the time a synchronisation of its stream (or the device)
// returns, cudaStreamQuery/cudaEventQuery report unfinished host work, and
// cross-stream waits keep a later callback after an earlier one. Streams
// have flags and priorities that read back as set.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <unistd.h>
#include <cuda_runtime.h>
#include "rt_check.h"

__global__ void scale(float *x, float f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= f;
}

static std::atomic<int> order[64];
static std::atomic<int> next_slot;

struct tag {
    int stream, seq;
    int sleep_ms;
};

static void CUDART_CB host_fn(void *arg)
{
    tag *t = (tag *)arg;
    if (t->sleep_ms)
        usleep(t->sleep_ms * 1000);
    order[next_slot++] = t->stream * 100 + t->seq;
}

static void CUDART_CB callback(cudaStream_t, cudaError_t status, void *arg)
{
    if (status != cudaSuccess)
        abort();
    host_fn(arg);
}

int main()
{
    const int n = 1 << 16, ns = 3;
    cudaStream_t s[ns];
    CHECK(cudaStreamCreate(&s[0]));
    CHECK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
    int lo, hi;
    CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CHECK(cudaStreamCreateWithPriority(&s[2], cudaStreamNonBlocking, hi));
    unsigned flags;
    int prio;
    CHECK(cudaStreamGetFlags(s[1], &flags));
    EXPECT(flags == cudaStreamNonBlocking);
    CHECK(cudaStreamGetPriority(s[2], &prio));
    EXPECT(prio == hi && hi < lo);

    float *d[ns];
    for (int i = 0; i < ns; i++)
        CHECK(cudaMalloc(&d[i], n * sizeof(float)));

    // Per stream: kernel, callback, kernel, host function. Stream 0's first
    // host function sleeps, so a query right after sees it unfinished.
    static tag tags[ns][2];
    for (int i = 0; i < ns; i++) {
        tags[i][0] = { i, 0, i == 0 ? 200 : 0 };
        tags[i][1] = { i, 1, 0 };
        scale<<<n / 256, 256, 0, s[i]>>>(d[i], 2.0f, n);
        CHECK(cudaStreamAddCallback(s[i], callback, &tags[i][0], 0));
        scale<<<n / 256, 256, 0, s[i]>>>(d[i], 0.5f, n);
        CHECK(cudaLaunchHostFunc(s[i], host_fn, &tags[i][1]));
    }
    cudaError_t q = cudaStreamQuery(s[0]);
    EXPECT(q == cudaErrorNotReady);
    EXPECT(cudaGetLastError() == cudaSuccess); // not-ready is not an error

    // Stream 1 waits for stream 0's work (an event after its host
    // function), then runs a callback: it must come after stream 0's.
    cudaEvent_t e0, start, stop;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync));
    CHECK(cudaEventRecord(start, s[1]));
    CHECK(cudaEventRecord(e0, s[0]));
    CHECK(cudaStreamWaitEvent(s[1], e0, 0));
    static tag after = { 1, 2, 0 };
    CHECK(cudaLaunchHostFunc(s[1], host_fn, &after));
    CHECK(cudaEventRecord(stop, s[1]));

    // Synchronising stream 0 returns only after its host functions ran.
    CHECK(cudaStreamSynchronize(s[0]));
    int seen0 = 0;
    for (int i = 0; i < next_slot; i++)
        seen0 += order[i] / 100 == 0;
    EXPECT(seen0 == 2);
    CHECK(cudaEventSynchronize(stop));
    EXPECT(cudaEventQuery(stop) == cudaSuccess);
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    EXPECT(ms >= 0);
    CHECK(cudaDeviceSynchronize());
    EXPECT(next_slot == 2 * ns + 1);

    // Per stream the order is as issued; stream 1's last callback comes
    // after both of stream 0's.
    int last[ns] = { -1, -1, -1 }, pos_after = -1, pos_s0 = -1;
    for (int i = 0; i < next_slot; i++) {
        int st = order[i] / 100, seq = order[i] % 100;
        EXPECT(seq > last[st]);
        last[st] = seq;
        if (order[i] == 102)
            pos_after = i;
        if (order[i] == 1)
            pos_s0 = i;
    }
    EXPECT(pos_after > pos_s0);

    for (int i = 0; i < ns; i++) {
        CHECK(cudaFree(d[i]));
        CHECK(cudaStreamDestroy(s[i]));
    }
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    printf("streams_events: %d host functions in order: ok\n", (int)next_slot);
    return 0;
}

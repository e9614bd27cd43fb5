// Host cost of calls under the emulator, as a program sees it (built with
// nvcc -cudart shared, run by bench/emu_bench with the emulator's libraries
// and tracing on). Each figure is the median over rounds of the time per
// call in a round of BATCH calls, timed with CLOCK_MONOTONIC around the
// round (the clock reads cost nothing per call).
//
// Prints name=value lines:
//   <prefix>launch_ns_median      kernel<<<grid, block, 0, stream>>>(3 args)
//   <prefix>launch_ns_p90
//   <prefix>launch_real_ns_median    the same after a small copy made bytes at its
//                                    pointer real (docs/values.md: the lookup it costs)
//   <prefix>launch_legacy_ns_median  the same on the legacy default stream
//   <prefix>memcpy_async_ns_median  cudaMemcpyAsync of 256 bytes host to device
//   <prefix>event_record_ns_median  cudaEventRecord
//   <prefix>graph_launch_ns_median  cudaGraphLaunch of a captured graph of 10 kernels
// The prefix is argv[1] (e.g. "emu_" or "emu_notrace_").
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
#include <cuda_runtime.h>

#include "../tests/workloads/rt_check.h"

__global__ void step(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = a * x[i] + 1.0f;
}

static double now_ns()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

template <typename F> static std::vector<double> rounds(int nrounds, int batch, F f)
{
    std::vector<double> per_call;
    for (int r = 0; r < nrounds; r++) {
        double t0 = now_ns();
        for (int i = 0; i < batch; i++)
            f(i);
        per_call.push_back((now_ns() - t0) / batch);
    }
    std::sort(per_call.begin(), per_call.end());
    return per_call;
}

static void print(const char *prefix, const char *name, double v)
{
    printf("%s%s=%.0f\n", prefix, name, v);
}

int main(int argc, char **argv)
{
    const char *prefix = argc > 1 ? argv[1] : "emu_";
    const int n = 1 << 20, batch = 1000, nrounds = 200;
    float *x;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    // warm up: the kernel's first launch parses its fat binary entry
    step<<<n / 256, 256, 0, s>>>(x, 1.0f, n);
    CHECK(cudaStreamSynchronize(s));

    auto l = rounds(nrounds, batch, [&](int i) { step<<<n / 256, 256, 0, s>>>(x, 1.0f + i, n); });
    CHECK(cudaGetLastError());
    print(prefix, "launch_ns_median", l[l.size() / 2]);
    print(prefix, "launch_ns_p90", l[l.size() * 9 / 10]);
    // the same with real bytes where the kernel's pointer points (a small
    // copy made them real): each launch looks its pointer up among them
    static char real_src[256];
    CHECK(cudaMemcpy(x, real_src, sizeof real_src, cudaMemcpyHostToDevice));
    auto lr = rounds(nrounds, batch, [&](int i) { step<<<n / 256, 256, 0, s>>>(x, 1.0f + i, n); });
    print(prefix, "launch_real_ns_median", lr[lr.size() / 2]);
    auto ll = rounds(nrounds / 4, batch, [&](int i) { step<<<n / 256, 256>>>(x, 1.0f + i, n); });
    print(prefix, "launch_legacy_ns_median", ll[ll.size() / 2]);

    static char host[256];
    auto m = rounds(nrounds / 4, batch, [&](int) { cudaMemcpyAsync(x, host, sizeof host, cudaMemcpyHostToDevice, s); });
    print(prefix, "memcpy_async_ns_median", m[m.size() / 2]);

    cudaEvent_t e;
    CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    auto er = rounds(nrounds / 4, batch, [&](int) { cudaEventRecord(e, s); });
    print(prefix, "event_record_ns_median", er[er.size() / 2]);

    cudaGraph_t g;
    cudaGraphExec_t gx;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < 10; k++)
        step<<<n / 256, 256, 0, s>>>(x, 0.5f, n);
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&gx, g, 0));
    auto gl = rounds(nrounds / 4, batch / 10, [&](int) { cudaGraphLaunch(gx, s); });
    print(prefix, "graph_launch_ns_median", gl[gl.size() / 2]);

    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGetLastError());
    CHECK(cudaFree(x));
    return 0;
}

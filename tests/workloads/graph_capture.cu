// CUDA graphs: a stream capture that forks into a second stream and joins
// back (kernels, a small copy, a memset, a host function) is instantiated
// and launched twice; a graph built with the graph API (kernel, memcpy,
// memset, host, event record/wait, empty and child-graph nodes) is launched,
// updated with cudaGraphExecUpdate and launched again. Checks what the host
// can see: captured work does not run at capture time (the host function
// runs once per launch, the copy's bytes move at launch), capture status
// and info, errors of illegal calls during capture, and update results.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include "rt_check.h"

__global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += a * x[i];
}

__global__ void fill(float *x, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = v;
}

static int host_calls;
static void CUDART_CB count_host(void *arg)
{
    host_calls += *(int *)arg;
}

static int destroyed;
static void CUDART_CB destroy_object(void *arg)
{
    destroyed += *(int *)arg;
}

int main()
{
    const int n = 1 << 20;
    float *x, *y, *z;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    CHECK(cudaMalloc(&z, n * sizeof(float)));
    int probe_in[64], probe_out[64], *dprobe;
    for (int i = 0; i < 64; i++)
        probe_in[i] = 1000 + i;
    memset(probe_out, 0, sizeof probe_out);
    CHECK(cudaMalloc(&dprobe, sizeof probe_in));

    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t fork, join;
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

    // ---- capture ----
    static int one = 1;
    cudaStreamCaptureStatus st;
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaStreamIsCapturing(s1, &st));
    EXPECT(st == cudaStreamCaptureStatusActive);
    CHECK(cudaMemcpyAsync(dprobe, probe_in, sizeof probe_in, cudaMemcpyHostToDevice, s1));
    fill<<<n / 256, 256, 0, s1>>>(x, 1.0f, n);
    CHECK(cudaEventRecord(fork, s1));
    CHECK(cudaStreamWaitEvent(s2, fork, 0)); // s2 joins the capture
    CHECK(cudaStreamIsCapturing(s2, &st));
    EXPECT(st == cudaStreamCaptureStatusActive);
    fill<<<n / 256, 256, 0, s2>>>(z, 3.0f, n);
    CHECK(cudaMemsetAsync(y, 0, n * sizeof(float), s2));
    CHECK(cudaEventRecord(join, s2));
    CHECK(cudaStreamWaitEvent(s1, join, 0)); // joined back
    axpy<<<n / 256, 256, 0, s1>>>(2.0f, x, y, n);
    CHECK(cudaLaunchHostFunc(s1, count_host, &one));
    CHECK(cudaMemcpyAsync(probe_out, dprobe, sizeof probe_out, cudaMemcpyDeviceToHost, s1));
    unsigned long long id;
    size_t ndeps;
    cudaGraph_t g_info;
    const cudaGraphNode_t *deps;
    CHECK(cudaStreamGetCaptureInfo(s1, &st, &id, &g_info, &deps, NULL, &ndeps));
    EXPECT(st == cudaStreamCaptureStatusActive && id != 0 && g_info && ndeps == 1);
    // A synchronous allocation is not allowed while a global-mode capture runs
    // in this thread, and it breaks the capture.
    void *tmp;
    EXPECT(cudaMalloc(&tmp, 16) == cudaErrorStreamCaptureUnsupported);
    EXPECT(cudaGetLastError() == cudaErrorStreamCaptureUnsupported);
    cudaGraph_t broken;
    EXPECT(cudaStreamEndCapture(s1, &broken) == cudaErrorStreamCaptureInvalidated && broken == NULL);
    EXPECT(cudaGetLastError() == cudaErrorStreamCaptureInvalidated);
    CHECK(cudaStreamIsCapturing(s1, &st));
    EXPECT(st == cudaStreamCaptureStatusNone);

    // The same again, relaxed about allocations, ending properly.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    EXPECT(mode == cudaStreamCaptureModeGlobal);
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemcpyAsync(dprobe, probe_in, sizeof probe_in, cudaMemcpyHostToDevice, s1));
    CHECK(cudaEventRecord(fork, s1));
    CHECK(cudaStreamWaitEvent(s2, fork, 0)); // s2's work runs beside s1's
    fill<<<n / 256, 256, 0, s1>>>(x, 1.0f, n);
    fill<<<n / 256, 256, 0, s2>>>(z, 3.0f, n);
    CHECK(cudaMemsetAsync(y, 0, n * sizeof(float), s2));
    CHECK(cudaEventRecord(join, s2));
    CHECK(cudaStreamWaitEvent(s1, join, 0));
    axpy<<<n / 256, 256, 0, s1>>>(2.0f, x, y, n);
    CHECK(cudaLaunchHostFunc(s1, count_host, &one));
    CHECK(cudaMemcpyAsync(probe_out, dprobe, sizeof probe_out, cudaMemcpyDeviceToHost, s1));
    CHECK(cudaMalloc(&tmp, 16)); // allowed in relaxed mode
    CHECK(cudaFree(tmp));
    cudaGraph_t graph;
    CHECK(cudaStreamEndCapture(s1, &graph));
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    EXPECT(host_calls == 0 && probe_out[5] == 0); // nothing ran during capture
    size_t nnodes = 0;
    CHECK(cudaGraphGetNodes(graph, NULL, &nnodes));
    EXPECT(nnodes == 7);

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < 2; rep++)
        CHECK(cudaGraphLaunch(exec, s1));
    CHECK(cudaStreamSynchronize(s1));
    EXPECT(host_calls == 2);
    EXPECT(memcmp(probe_in, probe_out, sizeof probe_in) == 0);

    // ---- graph built by API ----
    cudaGraph_t g, child;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphCreate(&child, 0));
    cudaGraphNode_t k1, cp, ms, hn, er, ew, em, ch, ck;
    void *args[] = { &z, NULL, NULL };
    float v = 7.0f;
    int nn = n;
    args[1] = &v;
    args[2] = &nn;
    cudaKernelNodeParams kp = {};
    kp.func = (void *)fill;
    kp.gridDim = dim3(n / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&k1, g, NULL, 0, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&cp, g, &k1, 1, y, z, n * sizeof(float), cudaMemcpyDeviceToDevice));
    cudaMemsetParams mp = {};
    mp.dst = x;
    mp.elementSize = 4;
    mp.width = n;
    mp.height = 1;
    mp.value = 0x3f800000; // 1.0f
    CHECK(cudaGraphAddMemsetNode(&ms, g, NULL, 0, &mp));
    cudaHostNodeParams hp = { count_host, &one };
    cudaGraphNode_t hdeps[] = { cp, ms };
    CHECK(cudaGraphAddHostNode(&hn, g, hdeps, 2, &hp));
    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev));
    CHECK(cudaGraphAddEventRecordNode(&er, g, &hn, 1, ev));
    CHECK(cudaGraphAddEventWaitNode(&ew, g, &er, 1, ev));
    CHECK(cudaGraphAddEmptyNode(&em, g, &ew, 1));
    void *cargs[] = { &x, &v, &nn };
    kp.kernelParams = cargs;
    CHECK(cudaGraphAddKernelNode(&ck, child, NULL, 0, &kp));
    CHECK(cudaGraphAddChildGraphNode(&ch, g, &em, 1, child));
    cudaGraphNodeType t;
    CHECK(cudaGraphNodeGetType(ch, &t));
    EXPECT(t == cudaGraphNodeTypeGraph);
    size_t nd = 0;
    CHECK(cudaGraphNodeGetDependencies(hn, NULL, NULL, &nd));
    EXPECT(nd == 2);
    cudaKernelNodeParams back;
    CHECK(cudaGraphKernelNodeGetParams(k1, &back));
    EXPECT(back.func == (void *)fill && back.gridDim.x == (unsigned)n / 256 && *(float *)back.kernelParams[1] == 7.0f);

    cudaGraphExec_t gx;
    CHECK(cudaGraphInstantiate(&gx, g, 0));
    CHECK(cudaGraphLaunch(gx, s2));
    // Update: same topology, new kernel value and grid -> success.
    cudaGraph_t g2;
    CHECK(cudaGraphClone(&g2, g));
    cudaGraphNode_t k1c;
    CHECK(cudaGraphNodeFindInClone(&k1c, k1, g2));
    float v2 = 9.0f;
    void *args2[] = { &z, &v2, &nn };
    kp.kernelParams = args2;
    kp.gridDim = dim3(n / 512);
    kp.blockDim = dim3(512);
    CHECK(cudaGraphKernelNodeSetParams(k1c, &kp));
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(gx, g2, &info));
    EXPECT(info.result == cudaGraphExecUpdateSuccess);
    CHECK(cudaGraphLaunch(gx, s2));
    // Changed topology -> refused.
    cudaGraphNode_t extra;
    CHECK(cudaGraphAddEmptyNode(&extra, g2, NULL, 0));
    EXPECT(cudaGraphExecUpdate(gx, g2, &info) == cudaErrorGraphExecUpdateFailure);
    EXPECT(info.result == cudaGraphExecUpdateErrorTopologyChanged);
    cudaGetLastError();
    CHECK(cudaStreamSynchronize(s2));
    EXPECT(host_calls == 4);

    // A user object the graph keeps alive: its destructor runs once the
    // graph and the executable graph made from it are gone.
    cudaUserObject_t obj;
    CHECK(cudaUserObjectCreate(&obj, &one, destroy_object, 1, cudaUserObjectNoDestructorSync));
    CHECK(cudaGraphRetainUserObject(graph, obj, 1, cudaGraphUserObjectMove));
    cudaGraphExec_t held;
    CHECK(cudaGraphInstantiate(&held, graph, 0));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaDeviceSynchronize());
    EXPECT(destroyed == 0);
    CHECK(cudaGraphExecDestroy(held));
    CHECK(cudaDeviceSynchronize());
    EXPECT(destroyed == 1);

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphExecDestroy(gx));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphDestroy(child));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(z));
    CHECK(cudaFree(dprobe));
    printf("graph_capture: %zu captured nodes, %d host calls: ok\n", nnodes, host_calls);
    return 0;
}

// CUDA graphs and memory pools through the driver API alone, as a program
// that records its work with cuStreamBeginCapture or builds graphs with
// cuGraphAdd*Node does: the kernel comes from a module (the file named
// first on the command line), a captured graph is launched LAUNCHES times,
// a graph built with the API runs its nodes in dependency order (its host
// nodes say in which order they ran, its copy brings back what its memset
// wrote), an executable graph changed node by node, disabled in part and
// updated from its graph runs what it was changed to, event nodes order two
// graphs on two streams, memory nodes allocate and free graph memory,
// cuGraphAddNode makes nodes of each kind, memory pools account for
// stream-ordered allocations, and misuse fails with the driver's codes. The second argument is where
// cuGraphDebugDotPrint writes the built graph.
// Prints what it measured; exits non-zero on any unexpected result.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_check.h"

#define LAUNCHES 5
#define N 256 // floats: small enough that copies and memsets move real bytes

static unsigned float_bits(float f)
{
    unsigned u;
    memcpy(&u, &f, sizeof u);
    return u;
}

// Host nodes append their tag here, so the order they ran in can be read.
static char order[16];
static int norder;
static void CUDA_CB tag(void *arg)
{
    if (norder < (int)sizeof order - 1)
        order[norder++] = *(const char *)arg;
}

// Capture a memset, a kernel and a copy back on a stream, launch the graph
// LAUNCHES times: the copy's bytes arrive at each launch, not at capture.
static void captured(CUfunction scale, CUdeviceptr d, CUstream s)
{
    static float host[N];
    float a = 3.0f;
    int n = N;
    void *args[] = { &d, &a, &n };

    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus st;
    CHECK(cuStreamIsCapturing(s, &st));
    REQUIRE(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    cuuint64_t id = 0;
    CUgraph in_capture = NULL;
    const CUgraphNode *deps = NULL;
    const CUgraphEdgeData *edges = NULL;
    size_t ndeps = 99;
    CHECK(cuStreamGetCaptureInfo(s, &st, &id, &in_capture, &deps, &edges, &ndeps));
    REQUIRE(st == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && in_capture != NULL && ndeps == 0);

    CHECK(cuMemsetD32Async(d, float_bits(2.0f), N, s));
    CHECK(cuLaunchKernel(scale, 1, 1, 1, N, 1, 1, 0, s, args, NULL));
    CHECK(cuMemcpyDtoHAsync(host, d, sizeof host, s));
    CHECK(cuStreamGetCaptureInfo(s, &st, &id, &in_capture, &deps, &edges, &ndeps));
    REQUIRE(ndeps == 1); // the copy, last captured
    // synchronising a capturing stream is refused (and breaks the capture
    // on a real GPU too); checked below on a capture of its own
    CUgraph g;
    CHECK(cuStreamEndCapture(s, &g));
    CHECK(cuStreamIsCapturing(s, &st));
    REQUIRE(st == CU_STREAM_CAPTURE_STATUS_NONE);
    REQUIRE(host[0] == 0.0f); // nothing ran while capturing

    size_t count = 0;
    CHECK(cuGraphGetNodes(g, NULL, &count));
    REQUIRE(count == 3);
    CUgraphExec x;
    CHECK(cuGraphInstantiate(&x, g, 0));
    for (int i = 0; i < LAUNCHES; i++)
        CHECK(cuGraphLaunch(x, s));
    CHECK(cuStreamSynchronize(s));
    // the memset moved real bytes and the copy brought them back (the
    // kernel does not run under emulation: its metadata is what counts)
    REQUIRE(host[0] == 2.0f && host[N - 1] == 2.0f);
    printf("captured nodes=%zu launches=%d value=%g\n", count, LAUNCHES, host[0]);
    CHECK(cuGraphExecDestroy(x));
    CHECK(cuGraphDestroy(g));

    // capture rules: a capturing stream cannot be synchronised, and the
    // capture it broke ends invalidated
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuMemsetD32Async(d, 0, N, s));
    EXPECT(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(cuStreamIsCapturing(s, &st));
    REQUIRE(st == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    EXPECT(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT(cuStreamEndCapture(s, &g), CUDA_ERROR_ILLEGAL_STATE); // not capturing
}

// A graph built with the API, nodes added in the reverse of the order
// their dependencies give them: memset -> kernel -> host "1" -> copy ->
// host "2". A launch runs them in dependency order.
static void built(CUfunction scale, CUdeviceptr d, CUstream s, CUcontext ctx, const char *dot_path)
{
    static float host[N];
    static const char one = '1', two = '2';
    float a = 0.5f;
    int n = N;
    void *args[] = { &d, &a, &n };
    CUgraph g;
    CHECK(cuGraphCreate(&g, 0));
    CUgraphNode host2, copy, kernel, memset_node, host1, empty;

    CUDA_HOST_NODE_PARAMS hp2 = { tag, (void *)&two };
    CHECK(cuGraphAddHostNode(&host2, g, NULL, 0, &hp2));

    CUDA_MEMCPY3D cp;
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = CU_MEMORYTYPE_DEVICE, cp.srcDevice = d;
    cp.dstMemoryType = CU_MEMORYTYPE_HOST, cp.dstHost = host;
    cp.WidthInBytes = sizeof host, cp.Height = 1, cp.Depth = 1;
    CHECK(cuGraphAddMemcpyNode(&copy, g, NULL, 0, &cp, ctx));

    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = scale, kp.gridDimX = 2, kp.gridDimY = 1, kp.gridDimZ = 1;
    kp.blockDimX = 128, kp.blockDimY = 1, kp.blockDimZ = 1, kp.kernelParams = args;
    CHECK(cuGraphAddKernelNode(&kernel, g, NULL, 0, &kp));

    CUDA_MEMSET_NODE_PARAMS mp;
    memset(&mp, 0, sizeof mp);
    mp.dst = d, mp.value = float_bits(7.0f), mp.elementSize = 4, mp.width = N, mp.height = 1;
    CHECK(cuGraphAddMemsetNode(&memset_node, g, NULL, 0, &mp, ctx));

    CUDA_HOST_NODE_PARAMS hp1 = { tag, (void *)&one };
    CHECK(cuGraphAddHostNode(&host1, g, NULL, 0, &hp1));
    CHECK(cuGraphAddEmptyNode(&empty, g, &host2, 1)); // a join point after everything

    CUgraphNode from[] = { memset_node, kernel, host1, copy };
    CUgraphNode to[] = { kernel, host1, copy, host2 };
    CHECK(cuGraphAddDependencies(g, from, to, NULL, 4));
    size_t roots = 0, edges = 0;
    CHECK(cuGraphGetRootNodes(g, NULL, &roots));
    CHECK(cuGraphGetEdges(g, NULL, NULL, NULL, &edges));
    REQUIRE(roots == 1 && edges == 5);
    CUgraphNodeType type;
    CHECK(cuGraphNodeGetType(kernel, &type));
    REQUIRE(type == CU_GRAPH_NODE_TYPE_KERNEL);
    CHECK(cuGraphDebugDotPrint(g, dot_path, 0));

    CUgraphExec x;
    CHECK(cuGraphInstantiateWithFlags(&x, g, 0));
    CHECK(cuGraphLaunch(x, s));
    CHECK(cuStreamSynchronize(s));
    REQUIRE(host[0] == 7.0f && host[N - 1] == 7.0f);
    printf("built order=%s value=%g roots=%zu edges=%zu\n", order, host[0], roots, edges);

    // misuse
    CUgraph other;
    CHECK(cuGraphCreate(&other, 0));
    CUgraphNode stranger;
    CHECK(cuGraphAddEmptyNode(&stranger, other, NULL, 0));
    EXPECT(cuGraphAddDependencies(g, &stranger, &kernel, NULL, 1), CUDA_ERROR_INVALID_VALUE); // another graph's node
    kp.gridDimX = 0;
    EXPECT(cuGraphAddKernelNode(&kernel, g, NULL, 0, &kp), CUDA_ERROR_INVALID_VALUE); // empty grid
    mp.elementSize = 3;
    EXPECT(cuGraphAddMemsetNode(&memset_node, g, NULL, 0, &mp, ctx), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphAddHostNode(&host1, g, NULL, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphCreate(&other, 1), CUDA_ERROR_INVALID_VALUE); // flags must be 0
    EXPECT(cuGraphInstantiate(&x, NULL, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphLaunch(NULL, s), CUDA_ERROR_INVALID_VALUE);
    int not_a_stream = 0;
    EXPECT(cuGraphLaunch(x, (CUstream)&not_a_stream), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuStreamBeginCapture((CUstream)&not_a_stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuStreamBeginCapture(s, (CUstreamCaptureMode)7), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphDestroy(NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGraphDestroy(other));
    CHECK(cuGraphExecDestroy(x));
    CHECK(cuGraphDestroy(g));
}

// Change an executable graph and its graph: memset -> kernel -> copy back.
// The kernel node's parameters changed in the executable graph show in the
// next launch (grid 4, a=1.5) but not in the graph; a disabled memset is
// left out of the next launch; cuGraphExecUpdate takes the graph's new
// parameters (grid 8, value 9); a clone maps its nodes back; a graph of
// another shape is refused with the reason.
static void updated(CUfunction scale, CUdeviceptr d, CUstream s, CUcontext ctx)
{
    static float host[N], other[N];
    float a = 0.5f, a2 = 1.5f;
    int n = N;
    void *args[] = { &d, &a, &n };
    void *args2[] = { &d, &a2, &n };
    CUgraph g;
    CHECK(cuGraphCreate(&g, 0));
    CUgraphNode set, kernel, copy;
    CUDA_MEMSET_NODE_PARAMS mp;
    memset(&mp, 0, sizeof mp);
    mp.dst = d, mp.value = float_bits(4.0f), mp.elementSize = 4, mp.width = N, mp.height = 1;
    CHECK(cuGraphAddMemsetNode(&set, g, NULL, 0, &mp, ctx));
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = scale, kp.gridDimX = 2, kp.gridDimY = 1, kp.gridDimZ = 1;
    kp.blockDimX = 128, kp.blockDimY = 1, kp.blockDimZ = 1, kp.kernelParams = args;
    CHECK(cuGraphAddKernelNode(&kernel, g, &set, 1, &kp));
    CUDA_MEMCPY3D cp;
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = CU_MEMORYTYPE_DEVICE, cp.srcDevice = d;
    cp.dstMemoryType = CU_MEMORYTYPE_HOST, cp.dstHost = host;
    cp.WidthInBytes = sizeof host, cp.Height = 1, cp.Depth = 1;
    CHECK(cuGraphAddMemcpyNode(&copy, g, &kernel, 1, &cp, ctx));

    // what the nodes say they do
    CUDA_KERNEL_NODE_PARAMS got;
    CHECK(cuGraphKernelNodeGetParams(kernel, &got));
    REQUIRE(got.func == scale && got.gridDimX == 2 && got.blockDimX == 128 && got.kernelParams &&
            *(float *)got.kernelParams[1] == 0.5f && *(int *)got.kernelParams[2] == N);
    CUDA_MEMSET_NODE_PARAMS mgot;
    CHECK(cuGraphMemsetNodeGetParams(set, &mgot));
    REQUIRE(mgot.dst == d && mgot.value == float_bits(4.0f) && mgot.elementSize == 4 && mgot.width == N);
    CUDA_MEMCPY3D cgot;
    CHECK(cuGraphMemcpyNodeGetParams(copy, &cgot));
    REQUIRE(cgot.srcMemoryType == CU_MEMORYTYPE_DEVICE && cgot.srcDevice == d &&
            cgot.dstMemoryType == CU_MEMORYTYPE_HOST && cgot.dstHost == host && cgot.WidthInBytes == sizeof host);
    CUgraphNode deps[2];
    size_t ndeps = 2, ndependents = 2;
    CHECK(cuGraphNodeGetDependencies(kernel, deps, NULL, &ndeps));
    REQUIRE(ndeps == 1 && deps[0] == set);
    CHECK(cuGraphNodeGetDependentNodes(kernel, deps, NULL, &ndependents));
    REQUIRE(ndependents == 1 && deps[0] == copy);

    CUgraphExec x;
    CHECK(cuGraphInstantiate(&x, g, 0));
    CHECK(cuGraphLaunch(x, s)); // launch 1: as built
    // launch 2: the kernel changed in the executable graph only
    kp.gridDimX = 4, kp.kernelParams = args2;
    CHECK(cuGraphExecKernelNodeSetParams(x, kernel, &kp));
    CHECK(cuGraphLaunch(x, s));
    CHECK(cuGraphKernelNodeGetParams(kernel, &got));
    REQUIRE(got.gridDimX == 2 && *(float *)got.kernelParams[1] == 0.5f);
    // launch 3: the memset disabled
    unsigned enabled = 9;
    CHECK(cuGraphNodeSetEnabled(x, set, 0));
    CHECK(cuGraphNodeGetEnabled(x, set, &enabled));
    REQUIRE(enabled == 0);
    CHECK(cuGraphLaunch(x, s));
    // launch 4: enabled again, the graph's kernel and memset changed and
    // the executable graph updated from it
    CHECK(cuGraphNodeSetEnabled(x, set, 1));
    kp.gridDimX = 8;
    CHECK(cuGraphKernelNodeSetParams(kernel, &kp));
    mp.value = float_bits(9.0f);
    CHECK(cuGraphMemsetNodeSetParams(set, &mp));
    CUgraphExecUpdateResultInfo info;
    memset(&info, 0xff, sizeof info);
    CHECK(cuGraphExecUpdate(x, g, &info));
    REQUIRE(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS && info.errorNode == NULL);
    CHECK(cuGraphLaunch(x, s));
    CHECK(cuStreamSynchronize(s));
    REQUIRE(host[0] == 9.0f);
    // launch 5: the copy sent to another buffer and the memset's value
    // changed in the executable graph
    cp.dstHost = other;
    CHECK(cuGraphExecMemcpyNodeSetParams(x, copy, &cp, ctx));
    mp.value = float_bits(5.0f);
    CHECK(cuGraphExecMemsetNodeSetParams(x, set, &mp, ctx));
    CHECK(cuGraphLaunch(x, s));
    CHECK(cuStreamSynchronize(s));
    REQUIRE(host[0] == 9.0f && other[0] == 5.0f && other[N - 1] == 5.0f);

    // a clone's nodes map back to the graph's
    CUgraph c;
    CHECK(cuGraphClone(&c, g));
    CUgraphNode in_clone;
    CHECK(cuGraphNodeFindInClone(&in_clone, kernel, c));
    REQUIRE(in_clone != kernel);
    CHECK(cuGraphKernelNodeGetParams(in_clone, &got));
    REQUIRE(got.gridDimX == 8);
    EXPECT(cuGraphNodeFindInClone(&in_clone, kernel, g), CUDA_ERROR_INVALID_VALUE); // g is not a clone
    // an update from a graph of another shape is refused, saying why
    CUgraphNode extra;
    CHECK(cuGraphAddEmptyNode(&extra, c, &in_clone, 1));
    EXPECT(cuGraphExecUpdate(x, c, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    REQUIRE(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    printf("updated value=%g other=%g clone_grid=%u\n", host[0], other[0], got.gridDimX);

    // misuse
    CUDA_HOST_NODE_PARAMS hp = { tag, NULL };
    EXPECT(cuGraphHostNodeSetParams(kernel, &hp), CUDA_ERROR_INVALID_VALUE);     // not a host node
    EXPECT(cuGraphKernelNodeGetParams(set, &got), CUDA_ERROR_INVALID_VALUE);     // not a kernel node
    EXPECT(cuGraphExecKernelNodeSetParams(x, extra, &kp), CUDA_ERROR_INVALID_VALUE); // not in x
    EXPECT(cuGraphNodeSetEnabled(x, extra, 0), CUDA_ERROR_INVALID_VALUE);
    kp.gridDimX = 0;
    EXPECT(cuGraphExecKernelNodeSetParams(x, kernel, &kp), CUDA_ERROR_INVALID_VALUE); // empty grid
    EXPECT(cuGraphNodeGetEnabled(x, set, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphExecUpdate(NULL, g, &info), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGraphDestroy(c));
    CHECK(cuGraphExecDestroy(x));
    CHECK(cuGraphDestroy(g));
}

// Event nodes order two graphs on two streams: one records an event after
// its kernel, the other waits for it before its memset. Memory nodes
// allocate when made and free in the graph; cuGraphAddNode makes any node
// the driver emulates; a capture's dependencies can be replaced.
static void event_and_memory_nodes(CUfunction scale, CUdeviceptr d, CUstream s, CUcontext ctx, CUdevice dev)
{
    float a = 2.0f;
    int n = N;
    void *args[] = { &d, &a, &n };
    CUstream s2;
    CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CUevent ev, ev_got;
    CHECK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));

    CUgraph producer, consumer;
    CHECK(cuGraphCreate(&producer, 0));
    CHECK(cuGraphCreate(&consumer, 0));
    CUgraphNode kernel, record, wait, set;
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = scale, kp.gridDimX = 1, kp.gridDimY = 1, kp.gridDimZ = 1;
    kp.blockDimX = N, kp.blockDimY = 1, kp.blockDimZ = 1, kp.kernelParams = args;
    CHECK(cuGraphAddKernelNode(&kernel, producer, NULL, 0, &kp));
    CHECK(cuGraphAddEventRecordNode(&record, producer, &kernel, 1, ev));
    CHECK(cuGraphAddEventWaitNode(&wait, consumer, NULL, 0, ev));
    CUDA_MEMSET_NODE_PARAMS mp;
    memset(&mp, 0, sizeof mp);
    mp.dst = d, mp.value = 0, mp.elementSize = 4, mp.width = N, mp.height = 1;
    CHECK(cuGraphAddMemsetNode(&set, consumer, &wait, 1, &mp, ctx));
    CHECK(cuGraphEventRecordNodeGetEvent(record, &ev_got));
    REQUIRE(ev_got == ev);
    CHECK(cuGraphEventWaitNodeGetEvent(wait, &ev_got));
    REQUIRE(ev_got == ev);
    CUgraphExec px, cx;
    CHECK(cuGraphInstantiate(&px, producer, 0));
    CHECK(cuGraphInstantiate(&cx, consumer, 0));
    CHECK(cuGraphLaunch(px, s));
    CHECK(cuGraphLaunch(cx, s2));
    CHECK(cuCtxSynchronize());

    // memory nodes: allocated as the node is made, freed by the graph
    CUgraph mg;
    CHECK(cuGraphCreate(&mg, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ap.poolProps.location.id = dev;
    ap.bytesize = 1 << 20;
    CUgraphNode alloc, use, free_node;
    CHECK(cuGraphAddMemAllocNode(&alloc, mg, NULL, 0, &ap));
    REQUIRE(ap.dptr != 0);
    mp.dst = ap.dptr;
    CHECK(cuGraphAddMemsetNode(&use, mg, &alloc, 1, &mp, ctx));
    CHECK(cuGraphAddMemFreeNode(&free_node, mg, &use, 1, ap.dptr));
    CUDA_MEM_ALLOC_NODE_PARAMS agot;
    CHECK(cuGraphMemAllocNodeGetParams(alloc, &agot));
    CUdeviceptr freed = 0;
    CHECK(cuGraphMemFreeNodeGetParams(free_node, &freed));
    REQUIRE(agot.bytesize == 1 << 20 && agot.dptr == ap.dptr && agot.poolProps.location.id == dev &&
            freed == ap.dptr);
    CUgraphExec mx;
    CHECK(cuGraphInstantiate(&mx, mg, 0));
    CHECK(cuGraphLaunch(mx, s));
    CHECK(cuStreamSynchronize(s));

    // cuGraphAddNode: a host node, a kernel node
    static const char three = '3';
    CUgraph gg;
    CHECK(cuGraphCreate(&gg, 0));
    CUgraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = CU_GRAPH_NODE_TYPE_HOST;
    np.host.fn = tag, np.host.userData = (void *)&three;
    CUgraphNode gh, gk;
    CHECK(cuGraphAddNode(&gh, gg, NULL, NULL, 0, &np));
    memset(&np, 0, sizeof np);
    np.type = CU_GRAPH_NODE_TYPE_KERNEL;
    np.kernel.func = scale, np.kernel.gridDimX = 3, np.kernel.gridDimY = 1, np.kernel.gridDimZ = 1;
    np.kernel.blockDimX = 32, np.kernel.blockDimY = 1, np.kernel.blockDimZ = 1, np.kernel.kernelParams = args;
    CHECK(cuGraphAddNode(&gk, gg, &gh, NULL, 1, &np));
    CUgraphNodeType type;
    CHECK(cuGraphNodeGetType(gk, &type));
    REQUIRE(type == CU_GRAPH_NODE_TYPE_KERNEL);
    CUDA_HOST_NODE_PARAMS hgot;
    CHECK(cuGraphHostNodeGetParams(gh, &hgot));
    REQUIRE(hgot.fn == tag && hgot.userData == &three);
    CUgraphExec gx;
    CUDA_GRAPH_INSTANTIATE_PARAMS ip;
    memset(&ip, 0, sizeof ip);
    ip.result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
    CHECK(cuGraphInstantiateWithParams(&gx, gg, &ip));
    REQUIRE(ip.result_out == CUDA_GRAPH_INSTANTIATE_SUCCESS);
    CHECK(cuGraphLaunch(gx, s));
    CHECK(cuStreamSynchronize(s));

    // a capture whose dependencies are replaced: the kernel after the
    // memset becomes a second root
    CUgraph cap;
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuMemsetD32Async(d, 0, N, s));
    CHECK(cuStreamUpdateCaptureDependencies(s, NULL, NULL, 0, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
    CHECK(cuLaunchKernel(scale, 1, 1, 1, N, 1, 1, 0, s, args, NULL));
    CHECK(cuStreamEndCapture(s, &cap));
    size_t roots = 0;
    CHECK(cuGraphGetRootNodes(cap, NULL, &roots));
    printf("events order=%s alloc=%zu roots=%zu\n", order, (size_t)agot.bytesize, roots);
    REQUIRE(roots == 2);

    // misuse
    int not_an_event = 0;
    CUgraphNode bad;
    EXPECT(cuGraphAddEventRecordNode(&bad, producer, NULL, 0, (CUevent)&not_an_event), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuGraphEventWaitNodeSetEvent(record, ev), CUDA_ERROR_INVALID_VALUE); // a record node
    EXPECT(cuGraphAddMemFreeNode(&bad, mg, NULL, 0, 0x1234), CUDA_ERROR_INVALID_VALUE); // not an allocation
    ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_HOST;
    EXPECT(cuGraphAddMemAllocNode(&bad, mg, NULL, 0, &ap), CUDA_ERROR_INVALID_VALUE);
    memset(&np, 0, sizeof np);
    np.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
    np.free.dptr = ap.dptr;
    EXPECT(cuGraphNodeSetParams(free_node, &np), CUDA_ERROR_NOT_SUPPORTED); // memory nodes stay
    np.type = CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL;
    EXPECT(cuGraphAddNode(&bad, gg, NULL, NULL, 0, &np), CUDA_ERROR_NOT_SUPPORTED);
    np.type = CU_GRAPH_NODE_TYPE_EMPTY;
    np.reserved0[1] = 1;
    EXPECT(cuGraphAddNode(&bad, gg, NULL, NULL, 0, &np), CUDA_ERROR_INVALID_VALUE); // reserved must be 0
    EXPECT(cuStreamUpdateCaptureDependencies(s, NULL, NULL, 0, CU_STREAM_ADD_CAPTURE_DEPENDENCIES),
           CUDA_ERROR_ILLEGAL_STATE); // not capturing
    CUgraphNode cycle_to[] = { gh, gk };
    CUgraphNode cycle_from[] = { gk };
    CHECK(cuGraphAddDependencies(gg, cycle_from, cycle_to, NULL, 1)); // kernel -> host -> kernel
    EXPECT(cuGraphInstantiateWithParams(&gx, gg, &ip), CUDA_ERROR_INVALID_VALUE);
    REQUIRE(ip.result_out == CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE);

    CHECK(cuGraphDestroy(cap));
    CHECK(cuGraphExecDestroy(gx));
    CHECK(cuGraphDestroy(gg));
    CHECK(cuGraphExecDestroy(mx));
    CHECK(cuGraphDestroy(mg));
    CHECK(cuGraphExecDestroy(px));
    CHECK(cuGraphExecDestroy(cx));
    CHECK(cuGraphDestroy(producer));
    CHECK(cuGraphDestroy(consumer));
    CHECK(cuEventDestroy(ev));
    CHECK(cuStreamDestroy(s2));
}

static size_t pool_attr(CUmemoryPool p, CUmemPool_attribute attr)
{
    cuuint64_t v = 0;
    CHECK(cuMemPoolGetAttribute(p, attr, &v));
    return (size_t)v;
}

// Memory pools: what the pool reserves (2 MiB steps) and what its
// allocations use, through allocation, free and synchronisation.
static void pools(CUdevice dev, CUstream s)
{
    CUmemoryPool def, cur;
    CHECK(cuDeviceGetDefaultMemPool(&def, dev));
    CHECK(cuDeviceGetMemPool(&cur, dev));
    REQUIRE(def == cur);

    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = dev;
    CUmemoryPool pool;
    CHECK(cuMemPoolCreate(&pool, &props));
    REQUIRE(pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);

    CUdeviceptr p;
    CHECK(cuMemAllocFromPoolAsync(&p, 1 << 20, pool, s));
    size_t used = pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
    size_t reserved = pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    CHECK(cuMemFreeAsync(p, s));
    size_t used_freed = pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
    size_t reserved_freed = pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    CHECK(cuStreamSynchronize(s)); // release threshold 0: the reserve goes back
    size_t reserved_synced = pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    printf("pool used=%zu reserved=%zu freed_used=%zu freed_reserved=%zu synced_reserved=%zu\n", used, reserved,
           used_freed, reserved_freed, reserved_synced);
    REQUIRE(used == 1 << 20 && reserved == 2 << 20 && used_freed == 0 && reserved_freed == reserved &&
            reserved_synced == 0);

    // a threshold keeps the reserve past synchronisation; trimming gives it back
    cuuint64_t keep = ~0ull;
    CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
    // the device's current pool serves cuMemAllocAsync
    CHECK(cuDeviceSetMemPool(dev, pool));
    CHECK(cuMemAllocAsync(&p, 3 << 20, s));
    REQUIRE(pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 3u << 20);
    CHECK(cuMemFreeAsync(p, s));
    CHECK(cuStreamSynchronize(s));
    size_t kept = pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    CHECK(cuMemPoolTrimTo(pool, 0));
    size_t trimmed = pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    size_t high = pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH);
    printf("pool kept=%zu trimmed=%zu used_high=%zu\n", kept, trimmed, high);
    REQUIRE(kept == 4u << 20 && trimmed == 0 && high == 3u << 20);
    CHECK(cuDeviceSetMemPool(dev, def));

    // misuse
    cuuint64_t v = 1;
    EXPECT(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v), CUDA_ERROR_INVALID_VALUE); // read-only
    EXPECT(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v), CUDA_ERROR_INVALID_VALUE); // reset to 0 only
    EXPECT(cuMemPoolGetAttribute(NULL, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemAllocFromPoolAsync(&p, 4096, NULL, s), CUDA_ERROR_INVALID_VALUE);
    int not_a_stream = 0;
    EXPECT(cuMemAllocAsync(&p, 4096, (CUstream)&not_a_stream), CUDA_ERROR_INVALID_HANDLE);
    EXPECT(cuMemFreeAsync(0x1234, s), CUDA_ERROR_INVALID_VALUE); // not an allocation
    EXPECT(cuDeviceGetDefaultMemPool(&cur, 99), CUDA_ERROR_INVALID_DEVICE);
    EXPECT(cuMemPoolDestroy(def), CUDA_ERROR_INVALID_VALUE); // the default pool stays
    props.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
    EXPECT(cuMemPoolCreate(&cur, &props), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemPoolDestroy(pool));
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: drv_graphs MODULE_FILE DOT_FILE\n");
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod = drv_setup(argv[1], &dev, &ctx);
    CUfunction scale;
    CHECK(cuModuleGetFunction(&scale, mod, "scale"));

    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, N * sizeof(float)));
    captured(scale, d, s);
    built(scale, d, s, ctx, argv[2]);
    updated(scale, d, s, ctx);
    event_and_memory_nodes(scale, d, s, ctx, dev);
    pools(dev, s);
    CHECK(cuMemFree(d));
    CHECK(cuStreamDestroy(s));
    CHECK(cuModuleUnload(mod));
    printf("drv_graphs: ok\n");
    return 0;
}

// CUDA graphs and memory pools through the driver API alone, as a program
// that records its work with cuStreamBeginCapture or builds graphs with
// cuGraphAdd*Node does: the kernel comes from a module (the file named
// first on the command line), a captured graph is launched LAUNCHES times,
// a graph built with the API runs its nodes in dependency order (its host
// nodes say in which order they ran, its copy brings back what its memset
// wrote), memory pools account for stream-ordered allocations, and misuse
// fails with the driver's codes. The second argument is where
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
    pools(dev, s);
    CHECK(cuMemFree(d));
    CHECK(cuStreamDestroy(s));
    CHECK(cuModuleUnload(mod));
    printf("drv_graphs: ok\n");
    return 0;
}

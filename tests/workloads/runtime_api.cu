// The runtime API beyond streams and graphs, as a program uses it:
// __device__/__constant__ variables (initial values, copies to and from
// symbols, addresses and sizes), function attributes and occupancy, driver
// entry points, a library loaded from a cubin and its kernel launched,
// peer access, stream attributes, managed-memory hints, pitched 2D/3D
// copies and memsets that move real bytes, cluster launches, pointer
// attributes and cudaDeviceReset giving the device's memory back.
//   runtime_api CUBIN     (the cubin of tests/workloads/modules/drv_kernels.cu)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include "rt_check.h"

__device__ int counter = 42;
__constant__ float coeffs[4] = { 1.0f, 2.0f, 3.0f, 4.0f };
__device__ float big[1 << 20];

__global__ void __launch_bounds__(256) tiled(float *out, int n)
{
    __shared__ float tile[256];
    extern __shared__ float dyn[];
    tile[threadIdx.x] = coeffs[threadIdx.x % 4] + counter;
    dyn[threadIdx.x] = tile[threadIdx.x];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = dyn[threadIdx.x] + big[i % (1 << 20)];
}

int main(int argc, char **argv)
{
    EXPECT(argc > 1);
    int ndev = 0;
    CHECK(cudaGetDeviceCount(&ndev));
    EXPECT(ndev >= 2);

    // ---- device variables ----
    int c = 0;
    CHECK(cudaMemcpyFromSymbol(&c, counter, sizeof c));
    EXPECT(c == 42); // the initial value
    float k[4] = { 5, 6, 7, 8 }, kb[4] = {};
    CHECK(cudaMemcpyToSymbol(coeffs, k, sizeof k));
    CHECK(cudaMemcpyFromSymbol(kb, coeffs, sizeof kb));
    EXPECT(memcmp(k, kb, sizeof k) == 0);
    CHECK(cudaMemcpyFromSymbol(&kb[0], coeffs, sizeof(float), 2 * sizeof(float)));
    EXPECT(kb[0] == 7);
    EXPECT(cudaMemcpyToSymbol(coeffs, k, sizeof k, 4) == cudaErrorInvalidValue); // past its end
    size_t bytes = 0;
    CHECK(cudaGetSymbolSize(&bytes, big));
    EXPECT(bytes == (4u << 20));
    void *addr = NULL;
    CHECK(cudaGetSymbolAddress(&addr, big));
    cudaPointerAttributes pa;
    CHECK(cudaPointerGetAttributes(&pa, addr));
    EXPECT(pa.type == cudaMemoryTypeDevice && pa.device == 0);
    EXPECT(cudaGetSymbolAddress(&addr, (const void *)&ndev) == cudaErrorInvalidSymbol);
    cudaGetLastError();

    // ---- function attributes and occupancy ----
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, tiled));
    EXPECT(fa.maxThreadsPerBlock <= 256 && fa.maxThreadsPerBlock > 0);
    EXPECT(fa.sharedSizeBytes == 256 * sizeof(float) && fa.numRegs > 0);
    EXPECT(fa.ptxVersion == 90 && fa.binaryVersion == 90);
    float *out;
    const int n = 1 << 16;
    CHECK(cudaMalloc(&out, n * sizeof(float)));
    tiled<<<n / 256, 256, 100 << 10>>>(out, n); // over the 48K default
    EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaFuncSetAttribute(tiled, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 << 10));
    tiled<<<n / 256, 256, 100 << 10>>>(out, n);
    CHECK(cudaGetLastError());
    EXPECT(cudaFuncSetAttribute(tiled, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 << 10) ==
           cudaErrorInvalidValue);
    cudaGetLastError();
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, tiled, 256, 0));
    EXPECT(blocks >= 1 && blocks <= 8);
    int min_grid = 0, block = 0;
    CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, tiled, 0, 0));
    EXPECT(block > 0 && block <= 256 && min_grid > 0);
    const char *name = NULL;
    CHECK(cudaFuncGetName(&name, tiled));
    EXPECT(strcmp(name, "_Z5tiledPfi") == 0);

    // ---- cluster launch ----
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = 2;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(n / 256);
    cfg.blockDim = dim3(256);
    cfg.attrs = at;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, tiled, out, n));

    // ---- driver entry points ----
    typedef CUresult (*get_fn)(CUdevice *, int);
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion("cuDeviceGet", &fn, 12000, cudaEnableDefault, &q));
    EXPECT(q == cudaDriverEntryPointSuccess && fn);
    CUdevice d = -1;
    EXPECT(((get_fn)fn)(&d, 1) == CUDA_SUCCESS && d == 1);
    CHECK(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &fn, 12000, cudaEnableDefault, &q));
    EXPECT(q == cudaDriverEntryPointSymbolNotFound && fn == NULL);

    // ---- a library from a cubin ----
    cudaLibrary_t lib;
    CHECK(cudaLibraryLoadFromFile(&lib, argv[1], NULL, NULL, 0, NULL, NULL, 0));
    unsigned nk = 0;
    CHECK(cudaLibraryGetKernelCount(&nk, lib));
    EXPECT(nk == 3);
    cudaKernel_t scale;
    CHECK(cudaLibraryGetKernel(&scale, lib, "scale"));
    float a = 2.5f;
    int nn = n;
    void *args[] = { &out, &a, &nn };
    CHECK(cudaLaunchKernel((const void *)scale, dim3(n / 128), dim3(128), args, 0, 0));
    EXPECT(cudaLibraryGetKernel(&scale, lib, "no_such_kernel") == cudaErrorSymbolNotFound);
    cudaGetLastError();
    CHECK(cudaLibraryUnload(lib));

    // ---- peer access ----
    int can = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
    EXPECT(can == 1);
    CHECK(cudaDeviceCanAccessPeer(&can, 1, 1));
    EXPECT(can == 0);
    CHECK(cudaDeviceEnablePeerAccess(1, 0));
    EXPECT(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessAlreadyEnabled);
    cudaGetLastError();
    CHECK(cudaDeviceDisablePeerAccess(1));
    int rank = -1;
    CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrAccessSupported, 0, 1));
    EXPECT(rank == 1);

    // ---- stream attributes ----
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaLaunchAttributeValue v = {}, back = {};
    v.accessPolicyWindow.base_ptr = out;
    v.accessPolicyWindow.num_bytes = 4096;
    v.accessPolicyWindow.hitRatio = 0.6f;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CHECK(cudaStreamSetAttribute(s, cudaLaunchAttributeAccessPolicyWindow, &v));
    CHECK(cudaStreamGetAttribute(s, cudaLaunchAttributeAccessPolicyWindow, &back));
    EXPECT(back.accessPolicyWindow.base_ptr == out && back.accessPolicyWindow.hitRatio == 0.6f);
    v.priority = -3;
    CHECK(cudaStreamSetAttribute(s, cudaLaunchAttributePriority, &v));
    int prio = 0;
    CHECK(cudaStreamGetPriority(s, &prio));
    EXPECT(prio == -3);

    // ---- managed memory hints ----
    float *m;
    CHECK(cudaMallocManaged(&m, 1 << 20));
    cudaMemLocation loc = { cudaMemLocationTypeDevice, 0 };
    CHECK(cudaMemAdvise(m, 1 << 20, cudaMemAdviseSetPreferredLocation, loc));
    CHECK(cudaMemPrefetchAsync(m, 1 << 20, loc, 0, s));
    EXPECT(cudaMemPrefetchAsync(out, 1024, loc, 0, s) == cudaErrorInvalidValue); // not managed
    cudaGetLastError();
    CHECK(cudaStreamSynchronize(s));
    m[0] = 3.0f; // managed memory is host-addressable
    EXPECT(m[0] == 3.0f);

    // ---- pitched 2D and 3D ----
    char h2[16][100], b2[16][100];
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 100; x++)
            h2[y][x] = (char)(y * 7 + x);
    char *p2;
    size_t pitch;
    CHECK(cudaMallocPitch((void **)&p2, &pitch, 100, 16));
    EXPECT(pitch == 512);
    CHECK(cudaMemcpy2D(p2, pitch, h2, 100, 100, 16, cudaMemcpyHostToDevice));
    memset(b2, 0, sizeof b2);
    CHECK(cudaMemcpy2D(b2, 100, p2, pitch, 100, 16, cudaMemcpyDeviceToHost));
    EXPECT(memcmp(h2, b2, sizeof h2) == 0);
    CHECK(cudaMemset2D(p2, pitch, 0x5a, 50, 16));
    CHECK(cudaMemcpy2D(b2, 100, p2, pitch, 100, 16, cudaMemcpyDeviceToHost));
    EXPECT(b2[3][49] == 0x5a && b2[3][50] == h2[3][50]);
    cudaExtent ext = make_cudaExtent(64, 8, 4);
    cudaPitchedPtr p3;
    CHECK(cudaMalloc3D(&p3, ext));
    static char h3[4][8][64], b3[4][8][64];
    for (int i = 0; i < (int)sizeof h3; i++)
        ((char *)h3)[i] = (char)(i * 13);
    cudaMemcpy3DParms cp = {};
    cp.srcPtr = make_cudaPitchedPtr(h3, 64, 64, 8);
    cp.dstPtr = p3;
    cp.extent = ext;
    cp.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&cp));
    cp.srcPtr = p3;
    cp.dstPtr = make_cudaPitchedPtr(b3, 64, 64, 8);
    cp.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&cp));
    EXPECT(memcmp(h3, b3, sizeof h3) == 0);

    // ---- pointer attributes ----
    void *pinned;
    CHECK(cudaMallocHost(&pinned, 4096));
    CHECK(cudaPointerGetAttributes(&pa, pinned));
    EXPECT(pa.type == cudaMemoryTypeHost && pa.hostPointer == pinned);
    int local = 0;
    CHECK(cudaPointerGetAttributes(&pa, &local));
    EXPECT(pa.type == cudaMemoryTypeUnregistered);
    CHECK(cudaPointerGetAttributes(&pa, m));
    EXPECT(pa.type == cudaMemoryTypeManaged);
    CHECK(cudaFreeHost(pinned));

    // ---- a graph that writes a device variable: the bytes move at launch ----
    cudaGraph_t g;
    cudaGraphNode_t cn;
    CHECK(cudaGraphCreate(&g, 0));
    static int seventy = 70;
    CHECK(cudaGraphAddMemcpyNodeToSymbol(&cn, g, NULL, 0, counter, &seventy, sizeof(int), 0, cudaMemcpyHostToDevice));
    cudaGraphExec_t gx;
    CHECK(cudaGraphInstantiate(&gx, g, 0));
    seventy = 77; // the node copies from this address when the graph runs
    CHECK(cudaGraphLaunch(gx, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpyFromSymbol(&c, counter, sizeof c));
    EXPECT(c == 77);
    static int eighty = 80;
    CHECK(cudaGraphExecMemcpyNodeSetParamsToSymbol(gx, cn, counter, &eighty, sizeof(int), 0, cudaMemcpyHostToDevice));
    CHECK(cudaGraphLaunch(gx, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpyFromSymbol(&c, counter, sizeof c));
    EXPECT(c == 80);
    CHECK(cudaGraphExecDestroy(gx));
    CHECK(cudaGraphDestroy(g));

    // ---- reset: the device's memory is gone ----
    CHECK(cudaStreamSynchronize(s));
    size_t f, t;
    CHECK(cudaMemGetInfo(&f, &t));
    EXPECT(f < t);
    CHECK(cudaDeviceReset());
    CHECK(cudaMemGetInfo(&f, &t));
    EXPECT(f == t);
    printf("runtime_api: ok\n");
    return 0;
}

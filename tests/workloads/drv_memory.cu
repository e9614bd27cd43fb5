// Driver-API memory as PyTorch and Triton use it: allocations, small copies
// and memsets whose bytes really move (checked by reading them back),
// pointer attributes of device, pinned and plain host memory, streams,
// events and host functions, and the virtual memory API the caching
// allocator's expandable segments use (reserve 9/8 of the device memory,
// map 2 MiB and 20 MiB physical segments, run out of memory at capacity).
// Prints what it measured; exits non-zero on any unexpected result.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_check.h"

static int host_fn_runs;
static void CUDA_CB host_fn(void *arg)
{
    host_fn_runs += *(int *)arg;
}

static void memory_and_copies(void)
{
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, 4096));
    EXPECT(cuMemAlloc(&d, 0), CUDA_ERROR_INVALID_VALUE);
    unsigned char in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = (unsigned char)(i * 7);
    CHECK(cuMemcpyHtoD(d, in, sizeof in));
    CHECK(cuMemcpyDtoD(d + 1024, d, sizeof in));
    CHECK(cuMemcpyDtoH(out, d + 1024, sizeof out));
    REQUIRE(memcmp(in, out, sizeof in) == 0);
    EXPECT(cuMemcpyHtoD(d + 4000, in, sizeof in), CUDA_ERROR_INVALID_VALUE); // past the allocation

    CHECK(cuMemsetD8(d, 0xab, 16));
    CHECK(cuMemsetD16(d + 16, 0x1234, 8));
    CHECK(cuMemsetD32(d + 32, 0xdeadbeef, 4));
    EXPECT(cuMemsetD32(d + 2, 1, 4), CUDA_ERROR_INVALID_VALUE); // misaligned
    unsigned char b[48];
    CHECK(cuMemcpyDtoH(b, d, sizeof b));
    unsigned short s;
    unsigned int w;
    memcpy(&s, b + 20, 2);
    memcpy(&w, b + 40, 4);
    printf("memset d8=%02x d16=%04x d32=%08x\n", b[5], s, w);

    // 2D: a 4x3 block out of rows 64 bytes apart
    CHECK(cuMemsetD2D8(d + 2048, 64, 0x5a, 4, 3));
    CUDA_MEMCPY2D c2;
    memset(&c2, 0, sizeof c2);
    unsigned char grid[3][4];
    c2.srcMemoryType = CU_MEMORYTYPE_DEVICE, c2.srcDevice = d + 2048, c2.srcPitch = 64;
    c2.dstMemoryType = CU_MEMORYTYPE_HOST, c2.dstHost = grid, c2.dstPitch = 4;
    c2.WidthInBytes = 4, c2.Height = 3;
    CHECK(cuMemcpy2D(&c2));
    printf("memcpy2d corner=%02x last=%02x\n", grid[0][0], grid[2][3]);

    // 3D: two slices of 2 rows of 8 bytes, host -> device -> host
    unsigned char vol[2][2][8], back[2][2][8];
    for (int i = 0; i < 32; i++)
        ((unsigned char *)vol)[i] = (unsigned char)(100 + i);
    CUDA_MEMCPY3D c3;
    memset(&c3, 0, sizeof c3);
    c3.srcMemoryType = CU_MEMORYTYPE_HOST, c3.srcHost = vol, c3.srcPitch = 8, c3.srcHeight = 2;
    c3.dstMemoryType = CU_MEMORYTYPE_DEVICE, c3.dstDevice = d + 3072, c3.dstPitch = 16, c3.dstHeight = 4;
    c3.WidthInBytes = 8, c3.Height = 2, c3.Depth = 2;
    CHECK(cuMemcpy3D(&c3));
    memset(&c3, 0, sizeof c3);
    c3.srcMemoryType = CU_MEMORYTYPE_DEVICE, c3.srcDevice = d + 3072, c3.srcPitch = 16, c3.srcHeight = 4;
    c3.dstMemoryType = CU_MEMORYTYPE_HOST, c3.dstHost = back, c3.dstPitch = 8, c3.dstHeight = 2;
    c3.WidthInBytes = 8, c3.Height = 2, c3.Depth = 2;
    CHECK(cuMemcpy3D(&c3));
    REQUIRE(memcmp(vol, back, sizeof vol) == 0);

    CUdeviceptr base;
    size_t bytes;
    CHECK(cuMemGetAddressRange(&base, &bytes, d + 100));
    REQUIRE(base == d && bytes == 4096);
    CHECK(cuMemFree(d));
    EXPECT(cuMemFree(d), CUDA_ERROR_INVALID_VALUE);
    printf("copies: ok\n");
}

static void pointer_attributes(void)
{
    CUdeviceptr d;
    void *pinned;
    CHECK(cuMemAlloc(&d, 1 << 20));
    CHECK(cuMemAllocHost(&pinned, 4096));
    char *host = (char *)malloc(4096);

    CUdeviceptr got = 0;
    CHECK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, d + 64));
    REQUIRE(got == d + 64);
    unsigned int type = 0;
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d));
    REQUIRE(type == CU_MEMORYTYPE_DEVICE);
    int ordinal = -1;
    CHECK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d));
    REQUIRE(ordinal == 0);
    size_t range = 0;
    CHECK(cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, d + 5));
    REQUIRE(range == 1 << 20);
    // Triton's check: a device pointer must exist for every tensor argument
    EXPECT(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, (CUdeviceptr)(uintptr_t)host),
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, (CUdeviceptr)(uintptr_t)pinned));
    REQUIRE(got == (CUdeviceptr)(uintptr_t)pinned);
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)pinned));
    REQUIRE(type == CU_MEMORYTYPE_HOST);
    // the plural form does not fail on unknown memory: it reports nothing known
    CUpointer_attribute attrs[2] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL };
    unsigned int t2 = 99;
    int o2 = 99;
    void *data[2] = { &t2, &o2 };
    CHECK(cuPointerGetAttributes(2, attrs, data, (CUdeviceptr)(uintptr_t)host));
    REQUIRE(t2 == 0 && o2 == -2);
    printf("pointer attributes: ok\n");
    CHECK(cuMemFreeHost(pinned));
    CHECK(cuMemFree(d));
    free(host);
}

static void streams_and_events(void)
{
    CUstream s1, s2;
    CUevent start, stop;
    CHECK(cuStreamCreateWithPriority(&s1, CU_STREAM_NON_BLOCKING, -3));
    CHECK(cuStreamCreate(&s2, CU_STREAM_DEFAULT));
    int prio = 0;
    unsigned long long id = 0;
    CHECK(cuStreamGetPriority(s1, &prio));
    CHECK(cuStreamGetId(s1, &id));
    CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
    CHECK(cuEventRecord(start, s1));
    int one = 1;
    CHECK(cuLaunchHostFunc(s1, host_fn, &one));
    CHECK(cuEventRecord(stop, s1));
    CHECK(cuStreamWaitEvent(s2, stop, 0));
    CHECK(cuStreamSynchronize(s1));
    REQUIRE(host_fn_runs == 1);
    CHECK(cuEventSynchronize(stop));
    float ms = -1;
    CHECK(cuEventElapsedTime(&ms, start, stop));
    REQUIRE(ms >= 0);
    CHECK(cuStreamQuery(s2));
    CHECK(cuCtxSynchronize());
    CHECK(cuEventDestroy(start));
    CHECK(cuEventDestroy(stop));
    CHECK(cuStreamDestroy(s1));
    CHECK(cuStreamDestroy(s2));
    EXPECT(cuStreamSynchronize(s1), CUDA_ERROR_INVALID_HANDLE);
    printf("streams priority=%d id_nonzero=%d\n", prio, id != 0);
}

static void virtual_memory(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t gran = 0;
    CHECK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    REQUIRE(gran > 0 && (2u << 20) % gran == 0);

    size_t total = 0, free0 = 0, free1 = 0;
    CHECK(cuMemGetInfo(&free0, &total));
    size_t reserve = (total * 9 / 8 + gran - 1) / gran * gran; // PyTorch's expandable segment
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, reserve, 0, 0, 0));
    CHECK(cuMemGetInfo(&free1, &total));
    REQUIRE(free1 == free0); // address space costs no memory

    CUmemGenericAllocationHandle small, large;
    // Fabric handles need IMEX, which the emulated driver reports absent
    // (HANDLE_TYPE_FABRIC_SUPPORTED 0): refused as on a node without it.
    int fabric = -1;
    CHECK(cuDeviceGetAttribute(&fabric, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0));
    REQUIRE(fabric == 0);
    CUmemAllocationProp fprop = prop;
    fprop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    EXPECT(cuMemCreate(&small, 2u << 20, &fprop, 0), CUDA_ERROR_NOT_PERMITTED);
    CHECK(cuMemCreate(&small, 2u << 20, &prop, 0));
    CHECK(cuMemCreate(&large, 20u << 20, &prop, 0));
    CHECK(cuMemGetInfo(&free1, &total));
    printf("vmm charged=%zu\n", free0 - free1);
    CHECK(cuMemMap(va, 2u << 20, 0, small, 0));
    CHECK(cuMemMap(va + (2u << 20), 20u << 20, 0, large, 0));
    EXPECT(cuMemMap(va, 2u << 20, 0, small, 0), CUDA_ERROR_ALREADY_MAPPED);
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK(cuMemSetAccess(va, 22u << 20, &access, 1));
    unsigned long long flags = 0;
    CHECK(cuMemGetAccess(&flags, &access.location, va + (21u << 20)));
    REQUIRE(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

    // the mapped range is device memory: copies into it move bytes, pointer
    // queries find it
    int put[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, got[8] = { 0 };
    CHECK(cuMemcpyHtoD(va + (3u << 20), put, sizeof put));
    CHECK(cuMemcpyDtoH(got, va + (3u << 20), sizeof got));
    REQUIRE(memcmp(put, got, sizeof put) == 0);
    CUdeviceptr dp = 0;
    CHECK(cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, va + 100));
    REQUIRE(dp == va + 100);
    CUmemGenericAllocationHandle again;
    CHECK(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(va + (5u << 20))));
    REQUIRE(again == large);
    CHECK(cuMemRelease(again));
    CUmemAllocationProp back;
    CHECK(cuMemGetAllocationPropertiesFromHandle(&back, large));
    REQUIRE(back.location.id == 0 && back.type == CU_MEM_ALLOCATION_TYPE_PINNED);

    // physical memory runs out at the device's capacity, as on the GPU
    CUmemGenericAllocationHandle hog;
    size_t hog_bytes = (free1 / gran + 1) * gran;
    EXPECT(cuMemCreate(&hog, hog_bytes, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(cuMemCreate(&hog, free1 / gran * gran, &prop, 0));
    CUdeviceptr plain;
    EXPECT(cuMemAlloc(&plain, gran), CUDA_ERROR_OUT_OF_MEMORY); // less than a granule is left
    CHECK(cuMemRelease(hog));

    // an address range with mappings cannot be freed; unmapped, it can
    EXPECT(cuMemAddressFree(va, reserve), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemUnmap(va, 2u << 20));
    CHECK(cuMemUnmap(va + (2u << 20), 20u << 20));
    CHECK(cuMemRelease(small));
    CHECK(cuMemRelease(large));
    EXPECT(cuMemRelease(large), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemAddressFree(va, reserve));
    CHECK(cuMemGetInfo(&free1, &total));
    REQUIRE(free1 == free0);
    printf("vmm: ok\n");
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr early;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    EXPECT(cuMemAlloc(&early, 16), CUDA_ERROR_INVALID_CONTEXT); // no context yet
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    CUcontext cur = NULL;
    CHECK(cuCtxGetCurrent(&cur));
    REQUIRE(cur == ctx);
    size_t stack = 0;
    CHECK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096));
    CHECK(cuCtxGetLimit(&stack, CU_LIMIT_STACK_SIZE));
    REQUIRE(stack == 4096);
    EXPECT(cuCtxSetLimit(CU_LIMIT_SHMEM_SIZE, 1), CUDA_ERROR_UNSUPPORTED_LIMIT);

    memory_and_copies();
    pointer_attributes();
    streams_and_events();
    virtual_memory();

    CUcontext popped;
    CHECK(cuCtxPopCurrent(&popped));
    REQUIRE(popped == ctx);
    EXPECT(cuCtxGetDevice(&dev), CUDA_ERROR_INVALID_CONTEXT);
    CHECK(cuCtxDestroy(ctx));
    printf("drv_memory: ok\n");
    return 0;
}

// Driver-API devices, contexts and tensor maps as frameworks query them:
// attributes (including the driver-only ones), UUID, PCI bus id round trip,
// properties, total memory, primary-context state and flags, the context
// stack, and cuTensorMapEncodeTiled (Triton's TMA descriptors): checked
// arguments, the same bytes for the same arguments. Prints what it found;
// exits non-zero on any unexpected result.
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#include "drv_check.h"

static void devices(void)
{
    int count = 0, major = 0, minor = 0, sms = 0, vmm = 0, tma = 0, clusters = 0, pools = 0;
    CHECK(cuDeviceGetCount(&count));
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, count - 1));
    EXPECT(cuDeviceGet(&dev, count), CUDA_ERROR_INVALID_DEVICE);
    CHECK(cuDeviceGet(&dev, 0));
    char name[128];
    CHECK(cuDeviceGetName(name, sizeof name, dev));
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CHECK(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
    CHECK(cuDeviceGetAttribute(&tma, CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED, dev));
    CHECK(cuDeviceGetAttribute(&clusters, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, dev));
    CHECK(cuDeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev));
    EXPECT(cuDeviceGetAttribute(&pools, (CUdevice_attribute)100000, dev), CUDA_ERROR_INVALID_VALUE);
    printf("device count=%d name=\"%s\" cc=%d.%d sms=%d vmm=%d tma=%d clusters=%d pools=%d\n", count, name, major,
           minor, sms, vmm, tma, clusters, pools);

    size_t total = 0;
    CHECK(cuDeviceTotalMem(&total, dev));
    CUdevprop prop;
    CHECK(cuDeviceGetProperties(&prop, dev));
    REQUIRE(prop.SIMDWidth == 32 && prop.maxThreadsPerBlock == 1024);
    CUuuid u0, u1;
    CUdevice dev1;
    CHECK(cuDeviceGetUuid(&u0, dev));
    CHECK(cuDeviceGet(&dev1, count - 1));
    CHECK(cuDeviceGetUuid(&u1, dev1));
    REQUIRE(count == 1 || memcmp(u0.bytes, u1.bytes, 16) != 0); // every GPU its own UUID
    char bus[32];
    CUdevice back = -1;
    CHECK(cuDeviceGetPCIBusId(bus, sizeof bus, dev1));
    CHECK(cuDeviceGetByPCIBusId(&back, bus));
    REQUIRE(back == dev1);
    int peer = 0;
    CHECK(cuDeviceCanAccessPeer(&peer, dev, dev1));
    printf("total_mem=%zu pci_roundtrip=ok can_access_peer=%d\n", total, peer);
}

static void contexts(void)
{
    CUdevice dev;
    CUcontext primary, made, cur;
    unsigned flags = 99;
    int active = -1;
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    REQUIRE(flags == 0 && active == 0);
    CHECK(cuDevicePrimaryCtxSetFlags(dev, CU_CTX_SCHED_BLOCKING_SYNC));
    EXPECT(cuDevicePrimaryCtxSetFlags(dev, 0x7), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    REQUIRE(flags == CU_CTX_SCHED_BLOCKING_SYNC && active == 1);

    CHECK(cuCtxGetCurrent(&cur));
    REQUIRE(cur == NULL); // retaining does not make it current
    CHECK(cuCtxPushCurrent(primary));
    CHECK(cuCtxCreate(&made, NULL, CU_CTX_SCHED_SPIN, dev)); // pushed on top
    CHECK(cuCtxGetCurrent(&cur));
    REQUIRE(cur == made);
    CHECK(cuCtxGetFlags(&flags));
    REQUIRE(flags == CU_CTX_SCHED_SPIN);
    unsigned long long id_made = 0, id_primary = 0;
    CHECK(cuCtxGetId(made, &id_made));
    CHECK(cuCtxGetId(primary, &id_primary));
    REQUIRE(id_made != id_primary);
    int least = 1, greatest = 1;
    CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
    CHECK(cuCtxDestroy(made)); // pops it
    CHECK(cuCtxGetCurrent(&cur));
    REQUIRE(cur == primary);
    EXPECT(cuCtxDestroy(primary), CUDA_ERROR_INVALID_CONTEXT); // primaries are released, not destroyed
    CHECK(cuCtxPopCurrent(&cur));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    EXPECT(cuDevicePrimaryCtxRelease(dev), CUDA_ERROR_INVALID_CONTEXT);
    CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    printf("contexts: priorities=%d..%d active_after_release=%d\n", least, greatest, active);
}

static void tensor_maps(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr buf;
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuMemAlloc(&buf, 1 << 20));
    cuuint64_t dims[2] = { 256, 512 }, strides[1] = { 256 * 2 };
    cuuint32_t box[2] = { 64, 32 }, estr[2] = { 1, 1 };
    CUtensorMap a, b;
    memset(&a, 0x11, sizeof a);
    memset(&b, 0x22, sizeof b);
    CHECK(cuTensorMapEncodeTiled(&a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)buf, dims, strides, box, estr,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    CHECK(cuTensorMapEncodeTiled(&b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)buf, dims, strides, box, estr,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    REQUIRE(memcmp(&a, &b, sizeof a) == 0);
    CHECK(cuTensorMapReplaceAddress(&b, (void *)(buf + 4096)));
    REQUIRE(memcmp(&a, &b, sizeof a) != 0);
    // misaligned address, a box wider than the swizzle span, a stride not a multiple of 16
    EXPECT(cuTensorMapEncodeTiled(&a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)(buf + 8), dims, strides, box,
                                  estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
           CUDA_ERROR_INVALID_VALUE);
    cuuint32_t wide[2] = { 128, 32 };
    EXPECT(cuTensorMapEncodeTiled(&a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)buf, dims, strides, wide, estr,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
           CUDA_ERROR_INVALID_VALUE);
    cuuint64_t odd[1] = { 500 };
    EXPECT(cuTensorMapEncodeTiled(&a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)buf, dims, odd, box, estr,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemFree(buf));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("tensor maps: ok\n");
}

int main(void)
{
    int version = 0;
    CHECK(cuDriverGetVersion(&version)); // works before cuInit
    CUdevice dev;
    EXPECT(cuDeviceGet(&dev, 0), CUDA_ERROR_NOT_INITIALIZED);
    CHECK(cuInit(0));
    printf("driver version=%d\n", version);
    devices();
    contexts();
    tensor_maps();
    printf("drv_device: ok\n");
    return 0;
}

/* Prints the size and member offsets of every NVML struct maya's
 * libnvidia-ml.so.1 reads or writes, and the values of the constants it
 * uses: built once with maya's emulator/nvml/nvml_types.h and once with a
 * real nvml.h (-DREAL_NVML_H), the two outputs must be the same
 * (tests/nvml/test_abi.sh). */
#include <stddef.h>
#include <stdio.h>

#ifdef REAL_NVML_H
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>
#else
#include "nvml_types.h"
#endif

#define SIZE(t) printf("sizeof(%s) = %zu\n", #t, sizeof(t))
#define OFF(t, m) printf("offsetof(%s, %s) = %zu\n", #t, #m, offsetof(t, m))
#define VALUE(c) printf("%s = %lld\n", #c, (long long)(c))

int main(void)
{
    SIZE(nvmlPciInfo_t);
    OFF(nvmlPciInfo_t, domain);
    OFF(nvmlPciInfo_t, bus);
    OFF(nvmlPciInfo_t, device);
    OFF(nvmlPciInfo_t, pciDeviceId);
    OFF(nvmlPciInfo_t, pciSubSystemId);
    OFF(nvmlPciInfo_t, busId);
    SIZE(nvmlMemory_t);
    OFF(nvmlMemory_t, free);
    OFF(nvmlMemory_t, used);
    SIZE(nvmlMemory_v2_t);
    OFF(nvmlMemory_v2_t, total);
    OFF(nvmlMemory_v2_t, reserved);
    OFF(nvmlMemory_v2_t, free);
    OFF(nvmlMemory_v2_t, used);
    VALUE(nvmlMemory_v2);
    SIZE(nvmlProcessInfo_v1_t);
    OFF(nvmlProcessInfo_v1_t, usedGpuMemory);
    SIZE(nvmlProcessInfo_v2_t);
    SIZE(nvmlProcessInfo_t);
    OFF(nvmlProcessInfo_t, usedGpuMemory);
    OFF(nvmlProcessInfo_t, gpuInstanceId);
    OFF(nvmlProcessInfo_t, computeInstanceId);
    SIZE(nvmlUtilization_t);
    OFF(nvmlUtilization_t, memory);
    SIZE(nvmlTemperature_v1_t);
    OFF(nvmlTemperature_v1_t, sensorType);
    OFF(nvmlTemperature_v1_t, temperature);
    VALUE(nvmlTemperature_v1);
    SIZE(nvmlGpuFabricInfo_t);
    OFF(nvmlGpuFabricInfo_t, status);
    OFF(nvmlGpuFabricInfo_t, cliqueId);
    OFF(nvmlGpuFabricInfo_t, state);
    SIZE(nvmlGpuFabricInfo_v2_t);
    OFF(nvmlGpuFabricInfo_v2_t, clusterUuid);
    OFF(nvmlGpuFabricInfo_v2_t, status);
    OFF(nvmlGpuFabricInfo_v2_t, cliqueId);
    OFF(nvmlGpuFabricInfo_v2_t, state);
    OFF(nvmlGpuFabricInfo_v2_t, healthMask);
    VALUE(nvmlGpuFabricInfo_v2);
#if defined(nvmlGpuFabricInfo_v3) && !defined(NO_FABRIC_V3) /* CUDA 13's nvml.h on */
    SIZE(nvmlGpuFabricInfo_v3_t);
    OFF(nvmlGpuFabricInfo_v3_t, healthMask);
    OFF(nvmlGpuFabricInfo_v3_t, healthSummary);
    VALUE(nvmlGpuFabricInfo_v3);
    VALUE(NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY);
#endif
    SIZE(nvmlDevice_t);
    SIZE(nvmlReturn_t);
    SIZE(nvmlEnableState_t);
    SIZE(nvmlBrandType_t);
    SIZE(nvmlClockType_t);
    SIZE(nvmlComputeMode_t);
    SIZE(nvmlTemperatureSensors_t);
    SIZE(nvmlNvLinkCapability_t);
    SIZE(nvmlIntNvLinkDeviceType_t);
    SIZE(nvmlGpuP2PStatus_t);
    SIZE(nvmlGpuP2PCapsIndex_t);
    SIZE(nvmlGpuTopologyLevel_t);
    SIZE(nvmlAffinityScope_t);
    SIZE(nvmlDeviceArchitecture_t);
    SIZE(nvmlGpuFabricState_t);

    VALUE(NVML_SUCCESS);
    VALUE(NVML_ERROR_UNINITIALIZED);
    VALUE(NVML_ERROR_INVALID_ARGUMENT);
    VALUE(NVML_ERROR_NOT_SUPPORTED);
    VALUE(NVML_ERROR_NOT_FOUND);
    VALUE(NVML_ERROR_INSUFFICIENT_SIZE);
    VALUE(NVML_ERROR_DRIVER_NOT_LOADED);
    VALUE(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    VALUE(NVML_ERROR_INVALID_STATE);
    VALUE(NVML_ERROR_UNKNOWN);
    VALUE(NVML_VALUE_NOT_AVAILABLE);
    VALUE(NVML_INIT_FLAG_NO_GPUS);
    VALUE(NVML_INIT_FLAG_NO_ATTACH);
    VALUE(NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE);
    VALUE(NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE);
    printf("%s %s\n", NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT, NVML_DEVICE_PCI_BUS_ID_FMT);
    VALUE(NVML_DEVICE_UUID_ASCII_LEN);
    VALUE(NVML_DEVICE_UUID_BUFFER_SIZE);
    VALUE(NVML_DEVICE_UUID_V2_BUFFER_SIZE);
    VALUE(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
    VALUE(NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE);
    VALUE(NVML_DEVICE_NAME_BUFFER_SIZE);
    VALUE(NVML_DEVICE_NAME_V2_BUFFER_SIZE);
    VALUE(NVML_DEVICE_SERIAL_BUFFER_SIZE);
    VALUE(NVML_GPU_FABRIC_UUID_LEN);
    VALUE(NVML_GPU_FABRIC_STATE_NOT_SUPPORTED);
    VALUE(NVML_GPU_FABRIC_STATE_COMPLETED);
    VALUE(NVML_FEATURE_ENABLED);
    VALUE(NVML_BRAND_TESLA);
    VALUE(NVML_BRAND_NVIDIA);
    VALUE(NVML_CLOCK_GRAPHICS);
    VALUE(NVML_CLOCK_SM);
    VALUE(NVML_CLOCK_MEM);
    VALUE(NVML_CLOCK_VIDEO);
    VALUE(NVML_CLOCK_COUNT);
    VALUE(NVML_TEMPERATURE_GPU);
    VALUE(NVML_COMPUTEMODE_DEFAULT);
    VALUE(NVML_NVLINK_CAP_P2P_SUPPORTED);
    VALUE(NVML_NVLINK_CAP_P2P_ATOMICS);
    VALUE(NVML_NVLINK_CAP_VALID);
    VALUE(NVML_NVLINK_CAP_COUNT);
    VALUE(NVML_NVLINK_DEVICE_TYPE_GPU);
    VALUE(NVML_NVLINK_DEVICE_TYPE_SWITCH);
    VALUE(NVML_NVLINK_DEVICE_TYPE_UNKNOWN);
    VALUE(NVML_P2P_STATUS_OK);
    VALUE(NVML_P2P_STATUS_NOT_SUPPORTED);
    VALUE(NVML_P2P_CAPS_INDEX_NVLINK);
    VALUE(NVML_P2P_CAPS_INDEX_PCI);
    VALUE(NVML_P2P_CAPS_INDEX_UNKNOWN);
    VALUE(NVML_TOPOLOGY_INTERNAL);
    VALUE(NVML_TOPOLOGY_SINGLE);
    VALUE(NVML_TOPOLOGY_NODE);
    VALUE(NVML_TOPOLOGY_SYSTEM);
    VALUE(NVML_AFFINITY_SCOPE_NODE);
    VALUE(NVML_AFFINITY_SCOPE_SOCKET);
    VALUE(NVML_DEVICE_ARCH_VOLTA);
    VALUE(NVML_DEVICE_ARCH_TURING);
    VALUE(NVML_DEVICE_ARCH_AMPERE);
    VALUE(NVML_DEVICE_ARCH_ADA);
    VALUE(NVML_DEVICE_ARCH_HOPPER);
    VALUE(NVML_DEVICE_ARCH_BLACKWELL);
    VALUE(NVML_DEVICE_ARCH_UNKNOWN);
    VALUE(NVML_DEVICE_MIG_DISABLE);
    return 0;
}

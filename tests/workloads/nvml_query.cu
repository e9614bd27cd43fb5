// NVML as PyTorch and monitoring tools use it: dlopen("libnvidia-ml.so.1"),
// look every function up by name, then query the node's GPUs and check that
// NVML and the CUDA runtime agree on them: the CUDA devices are found by the
// PCI bus id torch formats from cudaDeviceProp, with the same name, UUID and
// bus id, and the memory NVML reports is what cudaMemGetInfo says, before
// and after an allocation, with this process listed as using it. Prints
// what it found (one line per GPU) for the test to compare with the hwspec;
// exits non-zero on any unexpected result.
//
//   nvml_query SYMBOLS    every name in SYMBOLS (one a line, # comments)
//                         must resolve; then the checks
//   nvml_query load       only dlopen the library, call nothing
//   nvml_query nvml-only  NVML calls without CUDA, then a forked child uses
//                         CUDA (NVML does not initialise CUDA: that works)
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvml_types.h"

#define REQUIRE(cond) require((cond), #cond, __LINE__)
#define CHECK(call) expect((call), NVML_SUCCESS, #call, __LINE__)
#define EXPECT(call, want) expect((call), (want), #call, __LINE__)
#define CUDA(call) cuda_check((call), #call, __LINE__)

static void require(int ok, const char *what, int line)
{
    if (!ok) {
        fprintf(stderr, "line %d: expected %s\n", line, what);
        exit(1);
    }
}

static void expect(nvmlReturn_t r, nvmlReturn_t want, const char *what, int line)
{
    if (r != want) {
        fprintf(stderr, "line %d: %s returned %d, expected %d\n", line, what, (int)r, (int)want);
        exit(1);
    }
}

static void cuda_check(cudaError_t e, const char *what, int line)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "line %d: %s failed: %s\n", line, what, cudaGetErrorString(e));
        exit(1);
    }
}

static void *lib;

// Look a function up as torch does (dlsym by name), typed like the API's.
#define NVML(name) ((decltype(&name))sym(#name))
static void *sym(const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "libnvidia-ml.so.1 has no %s: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

static int check_symbols(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        sym(line);
        n++;
    }
    fclose(f);
    return n;
}

static void uuid_string(const cudaUUID_t *u, char *out)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    sprintf(out, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
            b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

// NVML's view of CUDA device d must match the runtime's; returns its handle.
static nvmlDevice_t match_cuda_device(int d)
{
    cudaDeviceProp prop;
    CUDA(cudaGetDeviceProperties(&prop, d));
    char bus[64], cuda_bus[64];
    snprintf(bus, sizeof bus, NVML_DEVICE_PCI_BUS_ID_FMT, prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    nvmlDevice_t dev, again;
    CHECK(NVML(nvmlDeviceGetHandleByPciBusId_v2)(bus, &dev));

    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], want[64];
    CHECK(NVML(nvmlDeviceGetName)(dev, name, sizeof name));
    REQUIRE(strcmp(name, prop.name) == 0);
    EXPECT(NVML(nvmlDeviceGetName)(dev, name, 4), NVML_ERROR_INSUFFICIENT_SIZE);
    CHECK(NVML(nvmlDeviceGetUUID)(dev, uuid, sizeof uuid));
    uuid_string(&prop.uuid, want);
    REQUIRE(strcmp(uuid, want) == 0);
    CHECK(NVML(nvmlDeviceGetHandleByUUID)(uuid, &again));
    REQUIRE(again == dev);

    nvmlPciInfo_t pci;
    CHECK(NVML(nvmlDeviceGetPciInfo_v3)(dev, &pci));
    REQUIRE(strcmp(pci.busId, bus) == 0);
    CUDA(cudaDeviceGetPCIBusId(cuda_bus, sizeof cuda_bus, d));
    unsigned dom, b, dv;
    REQUIRE(sscanf(cuda_bus, "%x:%x:%x", &dom, &b, &dv) == 3);
    REQUIRE(dom == pci.domain && b == pci.bus && dv == pci.device);
    CHECK(NVML(nvmlDeviceGetHandleByPciBusId_v2)(cuda_bus, &again));
    REQUIRE(again == dev);

    int major, minor;
    CHECK(NVML(nvmlDeviceGetCudaComputeCapability)(dev, &major, &minor));
    REQUIRE(major == prop.major && minor == prop.minor);
    return dev;
}

// Memory as cudaMemGetInfo says, before and after a 1 GiB allocation, and
// this process among the GPU's users with what it uses.
static void check_memory(int d, nvmlDevice_t dev)
{
    CUDA(cudaSetDevice(d));
    void *p;
    CUDA(cudaMalloc(&p, 1ull << 30));
    size_t free_b, total_b;
    CUDA(cudaMemGetInfo(&free_b, &total_b));
    nvmlMemory_t m;
    CHECK(NVML(nvmlDeviceGetMemoryInfo)(dev, &m));
    REQUIRE(m.total == total_b && m.free == free_b && m.used == total_b - free_b);
    REQUIRE(m.used >= (1ull << 30));
    nvmlMemory_v2_t m2;
    m2.version = 0;
    EXPECT(NVML(nvmlDeviceGetMemoryInfo_v2)(dev, &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    m2.version = nvmlMemory_v2;
    CHECK(NVML(nvmlDeviceGetMemoryInfo_v2)(dev, &m2));
    REQUIRE(m2.total == total_b && m2.free == free_b && m2.used + m2.reserved == total_b - free_b);

    unsigned n = 0;
    EXPECT(NVML(nvmlDeviceGetComputeRunningProcesses_v3)(dev, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    REQUIRE(n == 1);
    nvmlProcessInfo_t procs[4];
    n = 4;
    CHECK(NVML(nvmlDeviceGetComputeRunningProcesses_v3)(dev, &n, procs));
    REQUIRE(n == 1 && procs[0].pid == (unsigned)getpid() && procs[0].usedGpuMemory == m.used);
    REQUIRE(procs[0].gpuInstanceId == 0xFFFFFFFFu);
    nvmlProcessInfo_v1_t old[2];
    n = 2;
    CHECK(NVML(nvmlDeviceGetComputeRunningProcesses)(dev, &n, old));
    REQUIRE(n == 1 && old[0].pid == (unsigned)getpid() && old[0].usedGpuMemory == m.used);
    CUDA(cudaFree(p));
    CHECK(NVML(nvmlDeviceGetMemoryInfo)(dev, &m));
    CUDA(cudaMemGetInfo(&free_b, &total_b));
    REQUIRE(m.free == free_b);
}

static const char *link_kind(nvmlDevice_t dev, unsigned *links, char *peer, size_t peer_len)
{
    nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN, t;
    nvmlReturn_t r;
    *links = 0;
    snprintf(peer, peer_len, "none");
    // as torch's NVLink detector: count links until the query fails
    while ((r = NVML(nvmlDeviceGetNvLinkRemoteDeviceType)(dev, *links, &t)) == NVML_SUCCESS) {
        REQUIRE(*links == 0 || t == type); // every link reaches the same kind of device
        type = t;
        nvmlPciInfo_t pci;
        CHECK(NVML(nvmlDeviceGetNvLinkRemotePciInfo_v2)(dev, *links, &pci));
        snprintf(peer, peer_len, "%s", pci.busId);
        nvmlEnableState_t on;
        CHECK(NVML(nvmlDeviceGetNvLinkState)(dev, *links, &on));
        REQUIRE(on == NVML_FEATURE_ENABLED);
        (*links)++;
    }
    if (*links)
        return type == NVML_NVLINK_DEVICE_TYPE_SWITCH ? "switch" : type == NVML_NVLINK_DEVICE_TYPE_GPU ? "gpu" : "?";
    nvmlEnableState_t on;
    r = NVML(nvmlDeviceGetNvLinkState)(dev, 0, &on);
    if (r == NVML_ERROR_NOT_SUPPORTED)
        return "none";
    CHECK(r);
    REQUIRE(on == NVML_FEATURE_DISABLED);
    return "down";
}

// One line of facts per GPU of the node.
static void describe(unsigned index)
{
    nvmlDevice_t dev;
    CHECK(NVML(nvmlDeviceGetHandleByIndex_v2)(index, &dev));
    unsigned idx, minor, limit, enforced, power, sm, mem, gen, width, temp, cores;
    CHECK(NVML(nvmlDeviceGetIndex)(dev, &idx));
    CHECK(NVML(nvmlDeviceGetMinorNumber)(dev, &minor));
    REQUIRE(idx == index && minor == index);
    char name[96], serial[NVML_DEVICE_SERIAL_BUFFER_SIZE], peer[64];
    CHECK(NVML(nvmlDeviceGetName)(dev, name, sizeof name));
    CHECK(NVML(nvmlDeviceGetSerial)(dev, serial, sizeof serial));
    nvmlPciInfo_t pci;
    CHECK(NVML(nvmlDeviceGetPciInfo_v3)(dev, &pci));
    CHECK(NVML(nvmlDeviceGetPowerManagementLimit)(dev, &limit));
    CHECK(NVML(nvmlDeviceGetEnforcedPowerLimit)(dev, &enforced));
    CHECK(NVML(nvmlDeviceGetPowerUsage)(dev, &power));
    REQUIRE(enforced == limit && power < limit);
    CHECK(NVML(nvmlDeviceGetMaxClockInfo)(dev, NVML_CLOCK_SM, &sm));
    CHECK(NVML(nvmlDeviceGetMaxClockInfo)(dev, NVML_CLOCK_MEM, &mem));
    CHECK(NVML(nvmlDeviceGetCurrPcieLinkGeneration)(dev, &gen));
    CHECK(NVML(nvmlDeviceGetCurrPcieLinkWidth)(dev, &width));
    CHECK(NVML(nvmlDeviceGetTemperature)(dev, NVML_TEMPERATURE_GPU, &temp));
    CHECK(NVML(nvmlDeviceGetNumGpuCores)(dev, &cores));
    nvmlUtilization_t util;
    CHECK(NVML(nvmlDeviceGetUtilizationRates)(dev, &util));
    nvmlDeviceArchitecture_t arch;
    CHECK(NVML(nvmlDeviceGetArchitecture)(dev, &arch));
    unsigned links;
    const char *kind = link_kind(dev, &links, peer, sizeof peer);

    // the fabric, as torch asks (v3 first, then v2); "unsupported" when the
    // GPU does not have the query
    nvmlGpuFabricInfoV_t fabric;
    memset(&fabric, 0, sizeof fabric);
    fabric.version = nvmlGpuFabricInfo_v3;
    nvmlReturn_t r = NVML(nvmlDeviceGetGpuFabricInfoV)(dev, &fabric);
    char fabric_s[32] = "unsupported";
    if (r == NVML_SUCCESS) {
        nvmlGpuFabricInfo_v2_t v2;
        memset(&v2, 0xff, sizeof v2);
        v2.version = nvmlGpuFabricInfo_v2;
        CHECK(NVML(nvmlDeviceGetGpuFabricInfoV)(dev, (nvmlGpuFabricInfoV_t *)&v2));
        REQUIRE(v2.state == fabric.state && v2.cliqueId == 0 && v2.status == NVML_SUCCESS);
        snprintf(fabric_s, sizeof fabric_s, "%s", fabric.state == NVML_GPU_FABRIC_STATE_COMPLETED ? "completed"
                                                  : fabric.state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED
                                                      ? "not_supported"
                                                      : "other");
    } else {
        EXPECT(r, NVML_ERROR_NOT_SUPPORTED);
    }
    printf("gpu %u name=\"%s\" bus=%s serial=%s arch=%u cores=%u power_limit_mw=%u power_mw=%u sm_mhz=%u "
           "mem_mhz=%u pcie=gen%u.x%u temp_c=%u util=%u nvlinks=%u nvlink_remote=%s nvlink_peer=%s fabric=%s\n",
           index, name, pci.busId, serial, arch, cores, limit, power, sm, mem, gen, width, temp, util.gpu, links,
           kind, peer, fabric_s);
}

static int nvml_only(void)
{
    unsigned count = 0;
    CHECK(NVML(nvmlInit_v2)());
    CHECK(NVML(nvmlDeviceGetCount_v2)(&count));
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) { // exit, not _exit: the child's trace is finished at exit
        int n = 0;
        void *p = NULL;
        exit(cudaGetDeviceCount(&n) == cudaSuccess && n > 0 && cudaMalloc(&p, 1 << 20) == cudaSuccess ? 0 : 1);
    }
    int status = 0;
    REQUIRE(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(NVML(nvmlShutdown)());
    printf("nvml_gpus=%u child_cuda=ok\n", count);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SYMBOLS | load | nvml-only\n", argv[0]);
        return 2;
    }
    lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY);
    if (!lib) {
        fprintf(stderr, "dlopen libnvidia-ml.so.1: %s\n", dlerror());
        return 1;
    }
    if (strcmp(argv[1], "load") == 0) {
        printf("loaded\n");
        return 0;
    }
    if (strcmp(argv[1], "nvml-only") == 0)
        return nvml_only();
    int nsyms = check_symbols(argv[1]);

    unsigned count = 0;
    EXPECT(NVML(nvmlDeviceGetCount_v2)(&count), NVML_ERROR_UNINITIALIZED);
    REQUIRE(strcmp(NVML(nvmlErrorString)(NVML_ERROR_UNINITIALIZED), "Uninitialized") == 0);
    CHECK(NVML(nvmlInit_v2)());
    CHECK(NVML(nvmlInit)()); // reference-counted: two inits, two shutdowns
    CHECK(NVML(nvmlDeviceGetCount_v2)(&count));
    int cuda_count = 0, cuda_driver = 0, nvml_cuda = 0;
    CUDA(cudaGetDeviceCount(&cuda_count));
    CUDA(cudaDriverGetVersion(&cuda_driver));
    CHECK(NVML(nvmlSystemGetCudaDriverVersion_v2)(&nvml_cuda));
    REQUIRE(nvml_cuda == cuda_driver);
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE], version[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
    CHECK(NVML(nvmlSystemGetDriverVersion)(driver, sizeof driver));
    CHECK(NVML(nvmlSystemGetNVMLVersion)(version, sizeof version));
    printf("symbols=%d nvml_gpus=%u cuda_gpus=%d driver=%s nvml=%s cuda=%d\n", nsyms, count, cuda_count, driver,
           version, nvml_cuda);

    nvmlDevice_t dev;
    EXPECT(NVML(nvmlDeviceGetHandleByIndex_v2)(count, &dev), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT(NVML(nvmlDeviceGetHandleByPciBusId_v2)("0000:FF:1F.0", &dev), NVML_ERROR_NOT_FOUND);
    EXPECT(NVML(nvmlDeviceGetHandleByUUID)("GPU-00000000-0000-0000-0000-000000000000", &dev), NVML_ERROR_NOT_FOUND);
    unsigned idx;
    EXPECT(NVML(nvmlDeviceGetIndex)((nvmlDevice_t)&count, &idx), NVML_ERROR_INVALID_ARGUMENT);

    for (int d = 0; d < cuda_count; d++) {
        nvmlDevice_t nd = match_cuda_device(d);
        CHECK(NVML(nvmlDeviceGetIndex)(nd, &idx));
        printf("cuda %d = nvml %u\n", d, idx);
    }
    check_memory(0, match_cuda_device(0));
    for (unsigned i = 0; i < count; i++)
        describe(i);

    // a GPU this process does not use: no process on it
    for (unsigned i = 0; i < count; i++) {
        CHECK(NVML(nvmlDeviceGetHandleByIndex_v2)(i, &dev));
        int used_here = 0;
        for (int d = 0; d < cuda_count; d++)
            used_here |= match_cuda_device(d) == dev && d == 0;
        unsigned n = 4;
        nvmlProcessInfo_t procs[4];
        CHECK(NVML(nvmlDeviceGetComputeRunningProcesses_v3)(dev, &n, procs));
        REQUIRE(n == (used_here ? 1u : 0u));
    }

    // a child forked after CUDA started can still ask NVML
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        unsigned c = 0;
        _exit(NVML(nvmlInit_v2)() == NVML_SUCCESS && NVML(nvmlDeviceGetCount_v2)(&c) == NVML_SUCCESS && c == count
                  ? 0
                  : 1);
    }
    int status = 0;
    REQUIRE(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);

    // a function maya does not implement: not supported, counted
    typedef nvmlReturn_t (*fan_fn)(nvmlDevice_t, unsigned *);
    unsigned speed;
    EXPECT(((fan_fn)sym("nvmlDeviceGetFanSpeed"))(dev, &speed), NVML_ERROR_NOT_SUPPORTED);

    CHECK(NVML(nvmlShutdown)());
    CHECK(NVML(nvmlDeviceGetCount_v2)(&count)); // one init is left
    CHECK(NVML(nvmlShutdown)());
    EXPECT(NVML(nvmlDeviceGetCount_v2)(&count), NVML_ERROR_UNINITIALIZED);
    EXPECT(NVML(nvmlShutdown)(), NVML_ERROR_UNINITIALIZED);
    printf("nvml ok\n");
    return 0;
}

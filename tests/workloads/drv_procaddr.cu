// cuGetProcAddress as cudart and PyTorch use it: entry points by API name,
// CUDA version (12000, 12030, 12080, ...) and default-stream flavour. The
// functions it returns must be the driver's own exported ones (compared
// with dlsym) and must work when called. Every API name of the driver's
// symbol list (argv[1]) must resolve at the current version to a function
// of that name. An unimplemented entry point returns
// CUDA_ERROR_NOT_SUPPORTED. Prints one line per check.
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_check.h"

static int failures;

// The exported symbol cuGetProcAddress(name, version, flags) gives.
static const char *resolve(const char *name, int version, cuuint64_t flags, CUdriverProcAddressQueryResult *st,
                           CUresult *rc)
{
    void *fn = NULL;
    Dl_info info;
    *rc = cuGetProcAddress(name, &fn, version, flags, st);
    if (*rc != CUDA_SUCCESS || !fn)
        return NULL;
    if (!dladdr(fn, &info) || !info.dli_sname)
        return "?";
    return info.dli_sname;
}

static void expect_symbol(const char *name, int version, cuuint64_t flags, const char *want)
{
    CUdriverProcAddressQueryResult st;
    CUresult rc;
    const char *got = resolve(name, version, flags, &st, &rc);
    printf("%s@%d%s -> %s\n", name, version, flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM ? "/ptds" : "",
           got ? got : "(none)");
    if (!got || strcmp(got, want) != 0) {
        fprintf(stderr, "%s at %d: got %s, expected %s\n", name, version, got ? got : "nothing", want);
        failures++;
    }
}

static int is_variant(const char *s)
{
    const char *u = strrchr(s, '_');
    if (!u)
        return 0;
    if (strcmp(u, "_ptsz") == 0 || strcmp(u, "_ptds") == 0)
        return 1;
    return u[1] == 'v' && u[2] >= '0' && u[2] <= '9';
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: drv_procaddr DRIVER_SYMBOLS_FILE\n");
        return 2;
    }
    // Looked up before cuInit, as the runtime does.
    expect_symbol("cuInit", 12000, CU_GET_PROC_ADDRESS_DEFAULT, "cuInit");
    CHECK(cuInit(0));

    expect_symbol("cuGetProcAddress", 12000, CU_GET_PROC_ADDRESS_DEFAULT, "cuGetProcAddress_v2");
    expect_symbol("cuGetProcAddress", 11030, CU_GET_PROC_ADDRESS_DEFAULT, "cuGetProcAddress");
    expect_symbol("cuCtxCreate", 3020, CU_GET_PROC_ADDRESS_DEFAULT, "cuCtxCreate_v2");
    expect_symbol("cuCtxCreate", 12000, CU_GET_PROC_ADDRESS_DEFAULT, "cuCtxCreate_v3");
    expect_symbol("cuCtxCreate", 12080, CU_GET_PROC_ADDRESS_DEFAULT, "cuCtxCreate_v4");
    expect_symbol("cuMemAlloc", 12000, CU_GET_PROC_ADDRESS_DEFAULT, "cuMemAlloc_v2");
    expect_symbol("cuMemcpyHtoD", 12030, CU_GET_PROC_ADDRESS_DEFAULT, "cuMemcpyHtoD_v2");
    expect_symbol("cuMemcpyHtoD", 12030, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyHtoD_v2_ptds");
    expect_symbol("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernel_ptsz");
    expect_symbol("cuStreamBeginCapture", 10000, CU_GET_PROC_ADDRESS_DEFAULT, "cuStreamBeginCapture");
    expect_symbol("cuStreamBeginCapture", 12000, CU_GET_PROC_ADDRESS_DEFAULT, "cuStreamBeginCapture_v2");
    expect_symbol("cuMemCreate", 12000, CU_GET_PROC_ADDRESS_DEFAULT, "cuMemCreate");
    expect_symbol("cuDevicePrimaryCtxRelease", 12000, CU_GET_PROC_ADDRESS_DEFAULT, "cuDevicePrimaryCtxRelease_v2");
    expect_symbol("cuTensorMapEncodeTiled", 12000, CU_GET_PROC_ADDRESS_DEFAULT, "cuTensorMapEncodeTiled");

    CUdriverProcAddressQueryResult st;
    CUresult rc;
    if (resolve("cuNoSuchFunction", 12000, 0, &st, &rc) || rc != CUDA_ERROR_NOT_FOUND ||
        st != CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND) {
        fprintf(stderr, "an unknown name resolved (rc %d status %d)\n", (int)rc, (int)st);
        failures++;
    }
    if (resolve("cuMemCreate", 10000, 0, &st, &rc) || rc != CUDA_ERROR_NOT_FOUND ||
        st != CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT) {
        fprintf(stderr, "cuMemCreate resolved for CUDA 10.0 (rc %d status %d)\n", (int)rc, (int)st);
        failures++;
    }
    void *fn;
    if (cuGetProcAddress("cuInit", &fn, 12000, 0x100, &st) != CUDA_ERROR_INVALID_VALUE) {
        fprintf(stderr, "unknown flags accepted\n");
        failures++;
    }

    // What it returns works: cuGetProcAddress itself, then allocate and copy.
    typedef CUresult (*get_proc_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    typedef CUresult (*retain_t)(CUcontext *, CUdevice);
    typedef CUresult (*set_current_t)(CUcontext);
    typedef CUresult (*alloc_t)(CUdeviceptr *, size_t);
    typedef CUresult (*htod_t)(CUdeviceptr, const void *, size_t);
    typedef CUresult (*dtoh_t)(void *, CUdeviceptr, size_t);
    get_proc_t get_proc;
    retain_t retain;
    set_current_t set_current;
    alloc_t alloc;
    htod_t htod;
    dtoh_t dtoh;
    CHECK(cuGetProcAddress("cuGetProcAddress", (void **)&get_proc, 12000, 0, &st));
    CHECK(get_proc("cuDevicePrimaryCtxRetain", (void **)&retain, 12000, 0, &st));
    CHECK(get_proc("cuCtxSetCurrent", (void **)&set_current, 12000, 0, &st));
    CHECK(get_proc("cuMemAlloc", (void **)&alloc, 12000, 0, &st));
    CHECK(get_proc("cuMemcpyHtoD", (void **)&htod, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    CHECK(get_proc("cuMemcpyDtoH", (void **)&dtoh, 12000, 0, &st));
    CUcontext ctx;
    CUdeviceptr d;
    CHECK(retain(&ctx, 0));
    CHECK(set_current(ctx));
    CHECK(alloc(&d, 64));
    long put = 0x1234567890L, got = 0;
    CHECK(htod(d, &put, sizeof put));
    CHECK(dtoh(&got, d, sizeof got));
    printf("calls through cuGetProcAddress: %s\n", got == put ? "ok" : "WRONG");
    if (got != put)
        failures++;

    // Every API name of the list resolves to a function of that name.
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    char line[256];
    int names = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0] || line[0] == '#' || is_variant(line))
            continue;
        const char *sym = resolve(line, 13000, 0, &st, &rc);
        if (!sym || strncmp(sym, line, strlen(line)) != 0) {
            fprintf(stderr, "%s resolved to %s (rc %d)\n", line, sym ? sym : "nothing", (int)rc);
            failures++;
        }
        names++;
    }
    fclose(f);
    printf("api names resolved: %d\n", names);

    // An entry point the emulator does not implement.
    CUarray array;
    CUDA_ARRAY_DESCRIPTOR desc;
    memset(&desc, 0, sizeof desc);
    rc = cuArrayCreate(&array, &desc);
    CUresult rc2 = cuArrayCreate(&array, &desc);
    printf("unimplemented: %d %d\n", (int)rc, (int)rc2);
    if (rc != CUDA_ERROR_NOT_SUPPORTED || rc2 != CUDA_ERROR_NOT_SUPPORTED)
        failures++;

    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("drv_procaddr: ok\n");
    return 0;
}

// Checks (and a module-file reader) the driver-API workloads share: a call
// must succeed, or return a given error, or a condition must hold; otherwise
// the program says what and where, and exits non-zero.
#ifndef DRV_CHECK_H
#define DRV_CHECK_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call) drv_check((call), #call, __LINE__)
#define EXPECT(call, want) drv_expect((call), (want), #call, __LINE__)
#define REQUIRE(cond) drv_require((cond), #cond, __LINE__)

static inline void drv_check(CUresult e, const char *what, int line)
{
    if (e != CUDA_SUCCESS) {
        const char *name = "?";
        cuGetErrorName(e, &name);
        fprintf(stderr, "line %d: %s failed: %s (%d)\n", line, what, name, (int)e);
        exit(1);
    }
}

static inline void drv_expect(CUresult e, CUresult want, const char *what, int line)
{
    if (e != want) {
        fprintf(stderr, "line %d: %s returned %d, expected %d\n", line, what, (int)e, (int)want);
        exit(1);
    }
}

static inline void drv_require(int ok, const char *what, int line)
{
    if (!ok) {
        fprintf(stderr, "line %d: expected %s\n", line, what);
        exit(1);
    }
}

// A whole file (a module image), NUL-terminated as PTX text must be.
static inline void *drv_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = (char *)calloc(1, (size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    return buf;
}

// The start of a driver-API program: cuInit, device 0's primary context
// made current, and the module in the image file at path loaded.
static inline CUmodule drv_setup(const char *path, CUdevice *dev, CUcontext *ctx)
{
    CUmodule mod;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(ctx, *dev));
    CHECK(cuCtxSetCurrent(*ctx));
    void *image = drv_read_file(path);
    CHECK(cuModuleLoadData(&mod, image));
    free(image); // the driver keeps its own copy
    return mod;
}

#endif

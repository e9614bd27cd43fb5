// Checks the driver-API workloads share: a call must succeed, or return a
// given error, or a condition must hold; otherwise the program says what
// and where, and exits non-zero.
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

#endif

// What the runtime workloads share: CHECK(call) ends the program with the
// call's error name and text unless it returns cudaSuccess; EXPECT(cond)
// ends it naming the condition that does not hold.
#ifndef MAYA_RT_CHECK_H
#define MAYA_RT_CHECK_H

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                              \
    do {                                                                                         \
        cudaError_t e_ = (call);                                                                 \
        if (e_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,                   \
                    cudaGetErrorString(e_), cudaGetErrorName(e_));                               \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#endif

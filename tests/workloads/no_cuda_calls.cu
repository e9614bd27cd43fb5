// A CUDA program that registers a kernel (nvcc's start-up code does, before
// main) but never calls CUDA: under the emulator it must leave no trace.
#include <cstdio>

__global__ void unused(int *p)
{
    *p = 1;
}

int main()
{
    printf("no_cuda_calls: done\n");
    return 0;
}

// Device code loaded at run time by drv_modules (tests/workloads/drv_modules.cu):
// built as a cubin, a fat binary (default and compressed) and PTX by
// tests/module.mk. One extern "C" kernel, one C++ kernel with a struct
// parameter, one with launch bounds and static shared memory, and a
// __device__ variable.
struct Pair {
    int a;
    float b;
    double c;
};

__device__ int dev_counter[4];

extern "C" __global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

__global__ void mixed(int i, double d, size_t n, char c, Pair p, float *out)
{
    if (threadIdx.x == 0 && out)
        out[0] = i + d + n + c + p.a + p.b + p.c;
}

__global__ void __launch_bounds__(128) smem_kernel(float *out)
{
    __shared__ float buf[256];
    buf[threadIdx.x] = out[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = buf[(threadIdx.x + 1) % 128] + dev_counter[0];
}

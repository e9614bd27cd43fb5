// Kernel parameters the emulator must decode from the fat binary: scalars
// of every common type, a struct passed by value, a pointer, an extern "C"
// kernel (typed from PTX), a template instance and a parameter larger than
// 16 KiB (CUDA 12.1's 32 KiB parameter space, which PyTorch's multi-tensor
// kernels use: its cubin describes it by another attribute). The values are
// distinctive so that the test can find each one in `maya trace dump`.
// Built three times: default nvcc flags (cubin + Zstd PTX), with
// -Xfatbin -compress-all (Zstd) and with -compress-mode=speed (LZ4).
#include <cuda_fp16.h>
#include <cstdio>
#include <cstdlib>

struct Triple {
    int a;
    float b;
    double c;
};

__global__ void all_types(int i, float f, double d, size_t n, char c, Triple t, const float *p, bool flag,
                          unsigned short us, long long ll, __half h)
{
    if (i == 123456789 && p)
        printf("%f %f %llu %c %d %d %u %lld %f\n", f, d, (unsigned long long)n, c, t.a, flag, us, ll,
               __half2float(h));
}

extern "C" __global__ void plain_c(int a, double b, float *out)
{
    if (a == 99 && out)
        out[0] = (float)b;
}

template <typename T> __global__ void scaled(T *x, T factor, int n)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n)
        x[k] *= factor;
}

/* a tensor list as PyTorch passes it: addresses, sizes and the tensor each
 * block works on, 19,392 bytes */
struct BigList {
    float *addr[1024];
    long long size[1024];
    unsigned char block_to_tensor[3008];
};

__global__ void big_list(BigList l, float scale)
{
    int t = l.block_to_tensor[blockIdx.x];
    if (threadIdx.x < l.size[t])
        l.addr[t][threadIdx.x] *= scale;
}

#define CHECK(call) \
    do { \
        cudaError_t e_ = (call); \
        if (e_ != cudaSuccess) { \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1); \
        } \
    } while (0)

int main()
{
    float *buf;
    CHECK(cudaMalloc(&buf, 4096 * sizeof(float)));
    Triple t = { -42, 2.5f, 6.125 };
    all_types<<<3, 64>>>(-7, 1.5f, 2.75, (size_t)1 << 40, 'x', t, buf, true, 65000, -5000000000LL,
                         __float2half(0.5f));
    plain_c<<<1, 32>>>(31, 0.25, buf);
    scaled<double><<<8, 128>>>((double *)buf, 3.5, 1024);
    static BigList list; /* zeros: no tensor has elements */
    list.addr[0] = buf;
    big_list<<<2, 32>>>(list, 0.75f);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(buf));
    printf("kernel_params: ok\n");
    return 0;
}

/* Force-included (nvcc -include) when fidelity/llmc.sh builds llm.c against
 * CUDA 13, whose cudaMemAdvise takes a cudaMemLocation where CUDA 12's took
 * a device number (cudaCpuDeviceId for the host): the overload llm.c's
 * calls resolve to. */
#include <cuda_runtime.h>

#if defined(__cplusplus) && CUDART_VERSION >= 13000
static inline cudaError_t cudaMemAdvise(const void *ptr, size_t bytes, cudaMemoryAdvise advice, int device)
{
    cudaMemLocation where = {};
    where.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    where.id = device == cudaCpuDeviceId ? 0 : device;
    return cudaMemAdvise(ptr, bytes, advice, where);
}
#endif

/* Driver entry points handed out by name: cuGetProcAddress, the runtime's
 * cudaGetDriverEntryPoint[ByVersion] (how the runtime, PyTorch and cuDNN's
 * frontend reach the driver), and dlsym on libcuda.so.1 opened by the
 * program itself (Triton's launcher, PyTorch's lazily bound driver calls:
 * Inductor's static launcher). The program gets the real answer, except
 * that a function the profiler traces comes back as the profiler's own:
 * the entry given is compared with the real driver's definitions of that
 * name (each ABI version, its _ptsz twin), so that a request for an ABI
 * version the profiler does not trace keeps the real one. */
#define _GNU_SOURCE
#include "prof.h"

#include <dlfcn.h>

#include <string.h>

#include "maya/common.h"

/* The functions traced: by API name, each ABI version of the real driver
 * (its own name) and the profiler's function for it. */
#define ROW(API, FN) { #API, #FN, (void *)FN }
static const struct {
    const char *api, *real;
    void *fn;
} traced[] = {
    ROW(cuGetProcAddress, cuGetProcAddress),
    ROW(cuGetProcAddress, cuGetProcAddress_v2),
    ROW(cuKernelGetFunction, cuKernelGetFunction),
    ROW(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel),
    ROW(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz),
    ROW(cuLaunchKernel, cuLaunchKernel),
    ROW(cuLaunchKernel, cuLaunchKernel_ptsz),
    ROW(cuLaunchKernelEx, cuLaunchKernelEx),
    ROW(cuLaunchKernelEx, cuLaunchKernelEx_ptsz),
    ROW(cuLibraryGetKernel, cuLibraryGetKernel),
    ROW(cuLibraryGetModule, cuLibraryGetModule),
    ROW(cuLibraryLoadData, cuLibraryLoadData),
    ROW(cuLibraryLoadFromFile, cuLibraryLoadFromFile),
    ROW(cuLibraryUnload, cuLibraryUnload),
    ROW(cuModuleGetFunction, cuModuleGetFunction),
    ROW(cuModuleLoad, cuModuleLoad),
    ROW(cuModuleLoadData, cuModuleLoadData),
    ROW(cuModuleLoadDataEx, cuModuleLoadDataEx),
    ROW(cuModuleLoadFatBinary, cuModuleLoadFatBinary),
    ROW(cuModuleUnload, cuModuleUnload),
    ROW(cuMemcpyHtoD, cuMemcpyHtoD_v2),
    ROW(cuMemcpyHtoD, cuMemcpyHtoD_v2_ptds),
    ROW(cuMemcpyDtoH, cuMemcpyDtoH_v2),
    ROW(cuMemcpyDtoH, cuMemcpyDtoH_v2_ptds),
    ROW(cuMemcpyDtoD, cuMemcpyDtoD_v2),
    ROW(cuMemcpyDtoD, cuMemcpyDtoD_v2_ptds),
    ROW(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2),
    ROW(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2_ptsz),
    ROW(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2),
    ROW(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2_ptsz),
    ROW(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2),
    ROW(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2_ptsz),
    ROW(cuMemcpy, cuMemcpy),
    ROW(cuMemcpy, cuMemcpy_ptds),
    ROW(cuMemcpyAsync, cuMemcpyAsync),
    ROW(cuMemcpyAsync, cuMemcpyAsync_ptsz),
    ROW(cuMemcpyPeer, cuMemcpyPeer),
    ROW(cuMemcpyPeer, cuMemcpyPeer_ptds),
    ROW(cuMemcpyPeerAsync, cuMemcpyPeerAsync),
    ROW(cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz),
    ROW(cuMemcpy2D, cuMemcpy2D_v2),
    ROW(cuMemcpy2D, cuMemcpy2D_v2_ptds),
    ROW(cuMemcpy2DUnaligned, cuMemcpy2DUnaligned_v2),
    ROW(cuMemcpy2DUnaligned, cuMemcpy2DUnaligned_v2_ptds),
    ROW(cuMemcpy2DAsync, cuMemcpy2DAsync_v2),
    ROW(cuMemcpy2DAsync, cuMemcpy2DAsync_v2_ptsz),
    ROW(cuMemcpy3D, cuMemcpy3D_v2),
    ROW(cuMemcpy3D, cuMemcpy3D_v2_ptds),
    ROW(cuMemcpy3DAsync, cuMemcpy3DAsync_v2),
    ROW(cuMemcpy3DAsync, cuMemcpy3DAsync_v2_ptsz),
    ROW(cuMemcpy3DPeer, cuMemcpy3DPeer),
    ROW(cuMemcpy3DPeer, cuMemcpy3DPeer_ptds),
    ROW(cuMemcpy3DPeerAsync, cuMemcpy3DPeerAsync),
    ROW(cuMemcpy3DPeerAsync, cuMemcpy3DPeerAsync_ptsz),
    ROW(cuMemsetD8, cuMemsetD8_v2),
    ROW(cuMemsetD8, cuMemsetD8_v2_ptds),
    ROW(cuMemsetD16, cuMemsetD16_v2),
    ROW(cuMemsetD16, cuMemsetD16_v2_ptds),
    ROW(cuMemsetD32, cuMemsetD32_v2),
    ROW(cuMemsetD32, cuMemsetD32_v2_ptds),
    ROW(cuMemsetD8Async, cuMemsetD8Async),
    ROW(cuMemsetD8Async, cuMemsetD8Async_ptsz),
    ROW(cuMemsetD16Async, cuMemsetD16Async),
    ROW(cuMemsetD16Async, cuMemsetD16Async_ptsz),
    ROW(cuMemsetD32Async, cuMemsetD32Async),
    ROW(cuMemsetD32Async, cuMemsetD32Async_ptsz),
    ROW(cuMemsetD2D8, cuMemsetD2D8_v2),
    ROW(cuMemsetD2D8, cuMemsetD2D8_v2_ptds),
    ROW(cuMemsetD2D16, cuMemsetD2D16_v2),
    ROW(cuMemsetD2D16, cuMemsetD2D16_v2_ptds),
    ROW(cuMemsetD2D32, cuMemsetD2D32_v2),
    ROW(cuMemsetD2D32, cuMemsetD2D32_v2_ptds),
    ROW(cuMemsetD2D8Async, cuMemsetD2D8Async),
    ROW(cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz),
    ROW(cuMemsetD2D16Async, cuMemsetD2D16Async),
    ROW(cuMemsetD2D16Async, cuMemsetD2D16Async_ptsz),
    ROW(cuMemsetD2D32Async, cuMemsetD2D32Async),
    ROW(cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz),
};

/* The profiler's function for the entry fn the real driver gave for name
 * (an API name; with exported: the name of one ABI version), or fn itself. */
static void *substitute(const char *name, void *fn, int exported)
{
    for (size_t i = 0; name && fn && i < MAYA_ARRAY_LEN(traced); i++)
        if (strcmp(name, exported ? traced[i].real : traced[i].api) == 0 && fn == prof_sym(&prof_cuda, traced[i].real))
            return traced[i].fn;
    return fn;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    PROF_REAL_OR(prof_cuda, cuGetProcAddress_v2, CUDA_ERROR_NOT_SUPPORTED);
    CUresult r = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    if (r == CUDA_SUCCESS && pfn)
        *pfn = substitute(symbol, *pfn, 0);
    return r;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    PROF_REAL_OR(prof_cuda, cuGetProcAddress, CUDA_ERROR_NOT_SUPPORTED);
    CUresult r = real(symbol, pfn, cudaVersion, flags);
    if (r == CUDA_SUCCESS && pfn)
        *pfn = substitute(symbol, *pfn, 0);
    return r;
}

/* The runtime's, in its four forms (the _ptsz ones answer for per-thread
 * default stream programs). cudaGetDriverEntryPoint is deprecated, and
 * still exported and used: the real one is looked up all the same. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#define ENTRY_POINT(NAME, PARAMS, ARGS) \
    cudaError_t NAME PARAMS \
    { \
        PROF_REAL_OR(prof_cudart, NAME, cudaErrorNotSupported); \
        cudaError_t r = real ARGS; \
        if (r == cudaSuccess && funcPtr) \
            *funcPtr = substitute(symbol, *funcPtr, 0); \
        return r; \
    }

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *, void **, unsigned long long,
                                         enum cudaDriverEntryPointQueryResult *);
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *, void **, unsigned int, unsigned long long,
                                                  enum cudaDriverEntryPointQueryResult *);
ENTRY_POINT(cudaGetDriverEntryPoint,
            (const char *symbol, void **funcPtr, unsigned long long flags,
             enum cudaDriverEntryPointQueryResult *driverStatus),
            (symbol, funcPtr, flags, driverStatus))
ENTRY_POINT(cudaGetDriverEntryPoint_ptsz,
            (const char *symbol, void **funcPtr, unsigned long long flags,
             enum cudaDriverEntryPointQueryResult *driverStatus),
            (symbol, funcPtr, flags, driverStatus))
ENTRY_POINT(cudaGetDriverEntryPointByVersion,
            (const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
             enum cudaDriverEntryPointQueryResult *driverStatus),
            (symbol, funcPtr, cudaVersion, flags, driverStatus))
ENTRY_POINT(cudaGetDriverEntryPointByVersion_ptsz,
            (const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
             enum cudaDriverEntryPointQueryResult *driverStatus),
            (symbol, funcPtr, cudaVersion, flags, driverStatus))

/* ---- dlsym ----
 * The profiler's dlsym stands before libc's for the whole program, under
 * both of libc's versions (GLIBC_2.34, and GLIBC_2.2.5 of binaries built
 * before it: PyTorch's wheels; on x86-64, whose base version that is).
 * A lookup by handle gets libc's answer, substituted; one through
 * RTLD_DEFAULT or RTLD_NEXT is libc's own, reached by a tail call (a jump:
 * libc finds what is "next" from its caller's return address, which must
 * stay the program's) and never needs substituting (the profiler's
 * definitions come first in the global scope). */

static void *(*real_dlsym)(void *, const char *);

static void *(*libc_dlsym(void))(void *, const char *)
{
    void *(*f)(void *, const char *) = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!f)
        f = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    __atomic_store_n(&real_dlsym, f, __ATOMIC_RELEASE);
    return f;
}

void *prof_libc_dlsym(void *handle, const char *name)
{
    void *(*real)(void *, const char *) = __atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE);
    if (__builtin_expect(!real, 0) && !(real = libc_dlsym()))
        return NULL;
    return real(handle, name);
}

__attribute__((optimize("optimize-sibling-calls"))) void *prof_dlsym(void *handle, const char *name)
{
    void *(*real)(void *, const char *) = __atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE);
    if (__builtin_expect(!real, 0) && !(real = libc_dlsym()))
        return NULL;
    if (handle == RTLD_DEFAULT || handle == RTLD_NEXT)
        return real(handle, name);
    void *p = real(handle, name);
    /* only names of the driver's (cu...) can be the profiler's */
    return p && name && name[0] == 'c' && name[1] == 'u' ? substitute(name, p, 1) : p;
}

__asm__(".symver prof_dlsym, dlsym@@GLIBC_2.34");
#if defined(__x86_64__)
void *prof_dlsym_2_2_5(void *handle, const char *name) __attribute__((alias("prof_dlsym")));
__asm__(".symver prof_dlsym_2_2_5, dlsym@GLIBC_2.2.5");
#endif

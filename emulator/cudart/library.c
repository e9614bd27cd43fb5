/* What the runtime asks of the driver: driver entry points
 * (cudaGetDriverEntryPoint[ByVersion]) and libraries (cudaLibrary*), which
 * are the driver's cuLibrary* under runtime names, as in the real runtime.
 * The driver calls made for a runtime call are not traced themselves. */
#include "rt.h"

#include <cuda.h>

/* The emulator's driver function of that name (loaded on first use). */
static void *driver_fn(const char *name)
{
    void *fn = NULL;
    int status = 0;
    return emu_proc_address(name, CUDART_VERSION, 0, &fn, &status) == EMU_OK ? fn : NULL;
}

/* CUresult -> cudaError_t: most codes share their numbers. */
static cudaError_t from_driver(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
    case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
    case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
    default: return (cudaError_t)r;
    }
}

#define CALL_DRIVER(type, name, ...) \
    ({ \
        static type fn_; \
        if (!fn_) \
            fn_ = (type)driver_fn(#name); \
        CUresult r_ = CUDA_ERROR_NOT_SUPPORTED; \
        if (fn_) { \
            emu_trace_nest(1); \
            r_ = fn_(__VA_ARGS__); \
            emu_trace_nest(-1); \
        } \
        from_driver(r_); \
    })

/* ---- driver entry points ---- */

static cudaError_t entry_point(uint32_t api, uint64_t t0, const char *symbol, void **funcPtr, unsigned version,
                               unsigned long long flags, enum cudaDriverEntryPointQueryResult *status, int pt)
{
    cudaError_t e = cudaSuccess;
    if (!symbol || !funcPtr ||
        (flags & ~(unsigned long long)(cudaEnableLegacyStream | cudaEnablePerThreadDefaultStream)))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        /* The default follows how the caller was built: per-thread for the
         * _ptsz entry point. */
        if (flags == cudaEnableDefault)
            flags = pt ? cudaEnablePerThreadDefaultStream : cudaEnableLegacyStream;
        void *fn = NULL;
        int st = 0;
        enum emu_err r = emu_proc_address(symbol, (int)version, flags, &fn, &st);
        /* Not found is no error: the pointer is NULL and the status says why. */
        *funcPtr = r == EMU_OK ? fn : NULL;
        if (status)
            *status = r == EMU_OK ? cudaDriverEntryPointSuccess
                      : st == 2   ? cudaDriverEntryPointVersionNotSufficent
                                  : cudaDriverEntryPointSymbolNotFound;
        if (r != EMU_OK && r != EMU_ERR_NOT_FOUND)
            e = rt_error(r);
    }
    emu_trace_call(api, t0, e, 0, 0);
    return rt_note(e);
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    RT_ENTER();
    return entry_point(RT_API(), rt_t0, symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 0);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult *driverStatus)
{
    RT_ENTER();
    return entry_point(RT_API(), rt_t0, symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 1);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *driverStatus)
{
    RT_ENTER();
    return entry_point(RT_API(), rt_t0, symbol, funcPtr, cudaVersion, flags, driverStatus, 0);
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                  unsigned long long flags,
                                                  enum cudaDriverEntryPointQueryResult *driverStatus)
{
    RT_ENTER();
    return entry_point(RT_API(), rt_t0, symbol, funcPtr, cudaVersion, flags, driverStatus, 1);
}

/* ---- libraries ---- */

typedef CUresult (*load_data_fn)(CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *,
                                 void **, unsigned);
typedef CUresult (*load_file_fn)(CUlibrary *, const char *, CUjit_option *, void **, unsigned, CUlibraryOption *,
                                 void **, unsigned);
typedef CUresult (*unload_fn)(CUlibrary);
typedef CUresult (*get_kernel_fn)(CUkernel *, CUlibrary, const char *);
typedef CUresult (*count_fn)(unsigned *, CUlibrary);
typedef CUresult (*enum_fn)(CUkernel *, unsigned, CUlibrary);
typedef CUresult (*global_fn)(CUdeviceptr *, size_t *, CUlibrary, const char *);
typedef CUresult (*unified_fn)(void **, CUlibrary, const char *);

cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code, enum cudaJitOption *jitOptions,
                                void **jitOptionsValues, unsigned int numJitOptions,
                                enum cudaLibraryOption *libraryOptions, void **libraryOptionValues,
                                unsigned int numLibraryOptions)
{
    RT_ENTER();
    RT_RETURN(CALL_DRIVER(load_data_fn, cuLibraryLoadData, (CUlibrary *)library, code, (CUjit_option *)jitOptions,
                          jitOptionsValues, numJitOptions, (CUlibraryOption *)libraryOptions, libraryOptionValues,
                          numLibraryOptions));
}

cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t *library, const char *fileName, enum cudaJitOption *jitOptions,
                                    void **jitOptionsValues, unsigned int numJitOptions,
                                    enum cudaLibraryOption *libraryOptions, void **libraryOptionValues,
                                    unsigned int numLibraryOptions)
{
    RT_ENTER();
    RT_RETURN(CALL_DRIVER(load_file_fn, cuLibraryLoadFromFile, (CUlibrary *)library, fileName,
                          (CUjit_option *)jitOptions, jitOptionsValues, numJitOptions,
                          (CUlibraryOption *)libraryOptions, libraryOptionValues, numLibraryOptions));
}

cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
    RT_ENTER();
    RT_RETURN(CALL_DRIVER(unload_fn, cuLibraryUnload, (CUlibrary)library));
}

cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library, const char *name)
{
    RT_ENTER();
    RT_RETURN(CALL_DRIVER(get_kernel_fn, cuLibraryGetKernel, (CUkernel *)pKernel, (CUlibrary)library, name));
}

cudaError_t cudaLibraryGetKernelCount(unsigned int *count, cudaLibrary_t lib)
{
    RT_ENTER();
    RT_RETURN(CALL_DRIVER(count_fn, cuLibraryGetKernelCount, count, (CUlibrary)lib));
}

cudaError_t cudaLibraryEnumerateKernels(cudaKernel_t *kernels, unsigned int numKernels, cudaLibrary_t lib)
{
    RT_ENTER();
    RT_RETURN(CALL_DRIVER(enum_fn, cuLibraryEnumerateKernels, (CUkernel *)kernels, numKernels, (CUlibrary)lib));
}

cudaError_t cudaLibraryGetGlobal(void **dptr, size_t *bytes, cudaLibrary_t library, const char *name)
{
    RT_ENTER();
    RT_RETURN(CALL_DRIVER(global_fn, cuLibraryGetGlobal, (CUdeviceptr *)dptr, bytes, (CUlibrary)library, name));
}

cudaError_t cudaLibraryGetManaged(void **dptr, size_t *bytes, cudaLibrary_t library, const char *name)
{
    RT_ENTER();
    RT_RETURN(CALL_DRIVER(global_fn, cuLibraryGetManaged, (CUdeviceptr *)dptr, bytes, (CUlibrary)library, name));
}

cudaError_t cudaLibraryGetUnifiedFunction(void **fptr, cudaLibrary_t library, const char *symbol)
{
    RT_ENTER();
    RT_RETURN(CALL_DRIVER(unified_fn, cuLibraryGetUnifiedFunction, fptr, (CUlibrary)library, symbol));
}

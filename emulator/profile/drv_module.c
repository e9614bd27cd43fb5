/* The driver's modules and libraries: what the program loads (cubins, fat
 * binaries, PTX: Triton's, torch.compile's, hand-written driver code) is
 * read as the emulated driver reads it (a copy of the image, kernels by
 * name with their parameter layouts from the core's fat-binary reader), so
 * that driver launches are traced with their kernel's name and argument
 * values. These calls leave no record of their own (as cudaGetDevice
 * does not): what the program was told is the real driver's. */
#define _GNU_SOURCE
#include "prof.h"

#include <stdlib.h>

#include "maya/common.h"

#define DRV_REAL_OR(NAME) PROF_REAL_OR(prof_cuda, NAME, CUDA_ERROR_NOT_SUPPORTED)
/* The frame of a driver call that is only followed: AFTER_OK (statements)
 * runs once the real call CALL succeeded, off the host clock. */
#define FOLLOW(CALL, AFTER_OK) PROF_BODY(CUresult, CALL, if (r_ == CUDA_SUCCESS) { AFTER_OK; }, )

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    DRV_REAL_OR(cuModuleLoadData);
    FOLLOW(real(module, image), prof_module_load(*module, image, MAYA_KSRC_MODULE));
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
                            void **optionValues)
{
    DRV_REAL_OR(cuModuleLoadDataEx);
    FOLLOW(real(module, image, numOptions, options, optionValues),
           prof_module_load(*module, image, MAYA_KSRC_MODULE));
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    DRV_REAL_OR(cuModuleLoadFatBinary);
    FOLLOW(real(module, fatCubin), prof_module_load(*module, fatCubin, MAYA_KSRC_MODULE));
}

/* An image from a file (PTX is text: the file is read NUL-terminated). */
static void load_file(const void *real, const char *path, int source)
{
    char *data = NULL;
    size_t len = 0;
    if (path && maya_read_file(path, &data, &len) == 0 && len)
        prof_module_load(real, data, source);
    free(data);
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    DRV_REAL_OR(cuModuleLoad);
    FOLLOW(real(module, fname), load_file(*module, fname, MAYA_KSRC_MODULE));
}

CUresult cuModuleUnload(CUmodule hmod)
{
    DRV_REAL_OR(cuModuleUnload);
    FOLLOW(real(hmod), prof_module_unload(hmod));
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    DRV_REAL_OR(cuModuleGetFunction);
    FOLLOW(real(hfunc, hmod, name), prof_module_kernel(hmod, name, *hfunc));
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                           unsigned int numLibraryOptions)
{
    DRV_REAL_OR(cuLibraryLoadData);
    FOLLOW(real(library, code, jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
                numLibraryOptions),
           prof_module_load(*library, code, MAYA_KSRC_LIBRARY));
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                               void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                               void **libraryOptionValues, unsigned int numLibraryOptions)
{
    DRV_REAL_OR(cuLibraryLoadFromFile);
    FOLLOW(real(library, fileName, jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
                numLibraryOptions),
           load_file(*library, fileName, MAYA_KSRC_LIBRARY));
}

CUresult cuLibraryUnload(CUlibrary library)
{
    DRV_REAL_OR(cuLibraryUnload);
    FOLLOW(real(library), prof_module_unload(library));
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    DRV_REAL_OR(cuLibraryGetKernel);
    FOLLOW(real(pKernel, library, name), prof_module_kernel(library, name, *pKernel));
}

CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    DRV_REAL_OR(cuLibraryGetModule);
    FOLLOW(real(pMod, library), prof_module_alias(*pMod, library));
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    DRV_REAL_OR(cuKernelGetFunction);
    FOLLOW(real(pFunc, kernel), prof_kernel_alias(*pFunc, kernel));
}

struct emu_kernel *prof_drv_kernel(CUfunction f)
{
    struct emu_kernel *k = prof_kernel_known(f);
    if (k)
        return k;
    /* A handle the calls above did not show (cuModuleEnumerateFunctions, a
     * kernel loaded before the profiler ran): the real driver names it and
     * its module. A CUkernel may stand for a CUfunction. */
    CUresult (*func_name)(const char **, CUfunction) = PROF_REAL(prof_cuda, cuFuncGetName);
    CUresult (*func_module)(CUmodule *, CUfunction) = PROF_REAL(prof_cuda, cuFuncGetModule);
    CUresult (*kernel_name)(const char **, CUkernel) = PROF_REAL(prof_cuda, cuKernelGetName);
    CUresult (*kernel_library)(CUlibrary *, CUkernel) = PROF_REAL(prof_cuda, cuKernelGetLibrary);
    const char *name = NULL;
    void *module = NULL;
    if (func_name && func_name(&name, f) == CUDA_SUCCESS && name) {
        if (!func_module || func_module((CUmodule *)&module, f) != CUDA_SUCCESS)
            module = NULL;
    } else if (kernel_name && kernel_name(&name, (CUkernel)f) == CUDA_SUCCESS && name) {
        if (!kernel_library || kernel_library((CUlibrary *)&module, (CUkernel)f) != CUDA_SUCCESS)
            module = NULL;
    } else {
        name = "?";
    }
    return prof_module_kernel(module, name, f);
}

/* Modules and libraries: loading fat binaries, cubins and PTX (no code is
 * compiled or run: the image is kept for its kernels' metadata), looking up
 * kernels and globals, and function attributes.
 *
 * A CUmodule and a CUlibrary are both the core's struct emu_module (source
 * MAYA_KSRC_MODULE / MAYA_KSRC_LIBRARY); a CUfunction and a CUkernel are
 * both its struct emu_kernel, so cuKernelGetFunction and cuLibraryGetModule
 * hand back the same object. */
#define _GNU_SOURCE
#include "drv.h"
#include "maya/common.h"

#include <stdlib.h>
#include <string.h>

/* ---- loading ---- */

/* JIT options the caller reads back: the log sizes (nothing was logged)
 * and the wall time (nothing was compiled). */
static CUresult jit_options(unsigned n, const CUjit_option *options, void **values)
{
    if (n && (!options || !values))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++) {
        if ((unsigned)options[i] >= CU_JIT_NUM_OPTIONS)
            return CUDA_ERROR_INVALID_VALUE;
        switch (options[i]) {
        case CU_JIT_WALL_TIME: {
            float zero = 0;
            memcpy(&values[i], &zero, sizeof zero);
            break;
        }
        case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
            values[i] = (void *)(uintptr_t)0;
            break;
        case CU_JIT_INFO_LOG_BUFFER:
        case CU_JIT_ERROR_LOG_BUFFER:
            if (values[i])
                *(char *)values[i] = 0;
            break;
        default:
            break;
        }
    }
    return CUDA_SUCCESS;
}

/* Load an image of any kind (the size is read from it), keeping a copy:
 * the caller may free its buffer once the call returns. A module belongs
 * to the current context; a library to none (it is checked against the
 * current device, else device 0). */
static CUresult load_image(const void *image, int source, int want_fatbin, struct emu_module **out)
{
    size_t size = 0;
    if (!image || !out)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = drv_ctx_device();
    if (dev < 0 && source == MAYA_KSRC_MODULE)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (dev < 0 && !emu_device(dev = 0))
        return CUDA_ERROR_NO_DEVICE;
    int kind = emu_image_probe(image, 0, &size);
    if (kind == EMU_IMAGE_UNKNOWN || (want_fatbin && kind != EMU_IMAGE_FATBIN))
        return CUDA_ERROR_INVALID_IMAGE;
    struct emu_module *m = emu_module_new(image, size, 1, source);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    const struct cudaDeviceProp *p = &emu_device(dev)->prop;
    int ok = emu_image_runnable(m, p->major * 10 + p->minor);
    if (ok <= 0) {
        emu_module_free(m);
        return ok == 0 ? CUDA_ERROR_NO_BINARY_FOR_GPU
                       : kind == EMU_IMAGE_PTX ? CUDA_ERROR_INVALID_PTX : CUDA_ERROR_INVALID_IMAGE;
    }
    *out = m;
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    DRV_ENTER();
    DRV_RETURN(load_image(image, MAYA_KSRC_MODULE, 0, (struct emu_module **)module));
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
                            void **optionValues)
{
    DRV_ENTER();
    CUresult e = jit_options(numOptions, options, optionValues);
    DRV_RETURN(e != CUDA_SUCCESS ? e : load_image(image, MAYA_KSRC_MODULE, 0, (struct emu_module **)module));
}

CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    DRV_ENTER();
    DRV_RETURN(load_image(fatCubin, MAYA_KSRC_MODULE, 1, (struct emu_module **)module));
}

/* A file's contents, NUL-terminated (PTX files are text). */
static CUresult load_file(const char *path, int source, struct emu_module **out)
{
    char *data = NULL;
    size_t len = 0;
    if (!path || !out)
        return CUDA_ERROR_INVALID_VALUE;
    if (maya_read_file(path, &data, &len) < 0)
        return CUDA_ERROR_FILE_NOT_FOUND;
    CUresult e = len ? load_image(data, source, 0, out) : CUDA_ERROR_INVALID_IMAGE;
    free(data);
    return e;
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    DRV_ENTER();
    DRV_RETURN(load_file(fname, MAYA_KSRC_MODULE, (struct emu_module **)module));
}

/* __device__ variables of loaded modules, given device memory on first
 * lookup (counted against the device's capacity, as loading does). */
struct global {
    struct emu_module *module;
    char *name;
    uint64_t ptr, bytes;
    struct global *next;
};
static struct global *globals;
static pthread_mutex_t globals_lock = PTHREAD_MUTEX_INITIALIZER;

static void free_globals(struct emu_module *m)
{
    pthread_mutex_lock(&globals_lock);
    for (struct global **g = &globals; *g;) {
        struct global *x = *g;
        if (x->module != m) {
            g = &x->next;
            continue;
        }
        *g = x->next;
        emu_mem_free(x->ptr, 1 << MAYA_ALLOC_DEVICE, NULL);
        free(x->name);
        free(x);
    }
    pthread_mutex_unlock(&globals_lock);
}

static CUresult unload(struct emu_module *m, int source)
{
    if (!m || m->source != source)
        return CUDA_ERROR_INVALID_HANDLE;
    free_globals(m);
    emu_module_free(m);
    return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod)
{
    DRV_ENTER();
    DRV_RETURN(unload(drv_module(hmod), MAYA_KSRC_MODULE));
}

CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
    DRV_ENTER();
    if (!mode)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    *mode = CU_MODULE_LAZY_LOADING; /* CUDA 12.2 and later load lazily by default */
    DRV_RETURN(CUDA_SUCCESS);
}

/* ---- kernels of a module ---- */

struct name_match {
    const char *want;
    int found;
};

static void match_name(const char *name, void *arg)
{
    struct name_match *m = arg;
    m->found |= strcmp(name, m->want) == 0;
}

/* The module's kernel of that name (one object per name), or NULL. */
static struct emu_kernel *module_kernel(struct emu_module *m, const char *name)
{
    struct emu_kernel *k = emu_kernel_by_name(m, name);
    if (k)
        return k;
    struct name_match nm = { name, 0 };
    emu_image_kernels(m, match_name, &nm);
    return nm.found ? emu_kernel_add(m, name, NULL) : NULL;
}

static CUresult get_kernel(struct emu_module *m, const char *name, void **out)
{
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    struct emu_kernel *k = module_kernel(m, name);
    if (!k)
        return CUDA_ERROR_NOT_FOUND;
    *out = k;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    DRV_ENTER();
    DRV_RETURN(get_kernel(drv_module(hmod), name, (void **)hfunc));
}

struct enum_state {
    struct emu_module *m;
    void **out;
    unsigned cap, n;
};

static void collect(const char *name, void *arg)
{
    struct enum_state *s = arg;
    if (s->n < s->cap) {
        struct emu_kernel *k = module_kernel(s->m, name);
        if (k)
            s->out[s->n++] = k;
    }
}

static CUresult count_kernels(struct emu_module *m, unsigned *count)
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    int n = emu_image_kernels(m, NULL, NULL);
    *count = n > 0 ? (unsigned)n : 0;
    return CUDA_SUCCESS;
}

static CUresult enumerate_kernels(struct emu_module *m, void **out, unsigned n)
{
    if (!out && n)
        return CUDA_ERROR_INVALID_VALUE;
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    /* n is the most the caller has room for: fewer kernels are fine */
    struct enum_state s = { m, out, n, 0 };
    return emu_image_kernels(m, collect, &s) >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
}

CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
    DRV_ENTER();
    DRV_RETURN(count_kernels(drv_module(mod), count));
}

CUresult cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions, CUmodule mod)
{
    DRV_ENTER();
    DRV_RETURN(enumerate_kernels(drv_module(mod), (void **)functions, numFunctions));
}

static CUresult get_global(struct emu_module *m, const char *name, CUdeviceptr *dptr, size_t *bytes)
{
    uint64_t size = 0, ptr = 0;
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    int dev = drv_ctx_device();
    if (dev < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&globals_lock);
    struct global *g = globals;
    while (g && !(g->module == m && strcmp(g->name, name) == 0))
        g = g->next;
    CUresult e = CUDA_SUCCESS;
    if (!g) {
        if (emu_image_global(m, name, &size) < 0)
            e = CUDA_ERROR_NOT_FOUND;
        else if ((e = drv_error(emu_mem_alloc(dev, size ? size : 1, MAYA_ALLOC_DEVICE, 0, &ptr))) == CUDA_SUCCESS) {
            g = calloc(1, sizeof *g);
            char *copy = strdup(name);
            if (!g || !copy) {
                free(g);
                free(copy);
                emu_mem_free(ptr, 1 << MAYA_ALLOC_DEVICE, NULL);
                e = CUDA_ERROR_OUT_OF_MEMORY;
            } else {
                *g = (struct global){ m, copy, ptr, size, globals };
                globals = g;
            }
        }
    }
    if (e == CUDA_SUCCESS) {
        if (dptr)
            *dptr = g->ptr;
        if (bytes)
            *bytes = g->bytes;
    }
    pthread_mutex_unlock(&globals_lock);
    return e;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
    DRV_ENTER();
    DRV_RETURN(get_global(drv_module(hmod), name, dptr, bytes));
}

/* ---- libraries ---- */

static CUresult library_options(unsigned n, const CUlibraryOption *options)
{
    if (n && !options)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++)
        if ((unsigned)options[i] >= CU_LIBRARY_NUM_OPTIONS)
            return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                           void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                           void **libraryOptionValues, unsigned int numLibraryOptions)
{
    DRV_ENTER();
    CUresult e = jit_options(numJitOptions, jitOptions, jitOptionsValues);
    if (e == CUDA_SUCCESS)
        e = library_options(numLibraryOptions, libraryOptions);
    DRV_RETURN(e != CUDA_SUCCESS ? e : load_image(code, MAYA_KSRC_LIBRARY, 0, (struct emu_module **)library));
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                               void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                               void **libraryOptionValues, unsigned int numLibraryOptions)
{
    DRV_ENTER();
    CUresult e = jit_options(numJitOptions, jitOptions, jitOptionsValues);
    if (e == CUDA_SUCCESS)
        e = library_options(numLibraryOptions, libraryOptions);
    DRV_RETURN(e != CUDA_SUCCESS ? e : load_file(fileName, MAYA_KSRC_LIBRARY, (struct emu_module **)library));
}

static struct emu_module *drv_library(CUlibrary lib)
{
    struct emu_module *m = drv_module(lib);
    return m && m->source == MAYA_KSRC_LIBRARY ? m : NULL;
}

CUresult cuLibraryUnload(CUlibrary library)
{
    DRV_ENTER();
    DRV_RETURN(unload(drv_library(library), MAYA_KSRC_LIBRARY));
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    DRV_ENTER();
    DRV_RETURN(get_kernel(drv_library(library), name, (void **)pKernel));
}

CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
    DRV_ENTER();
    DRV_RETURN(count_kernels(drv_library(lib), count));
}

CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels, CUlibrary lib)
{
    DRV_ENTER();
    DRV_RETURN(enumerate_kernels(drv_library(lib), (void **)kernels, numKernels));
}

CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    DRV_ENTER();
    struct emu_module *m = drv_library(library);
    if (!pMod)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!m)
        DRV_RETURN(CUDA_ERROR_INVALID_HANDLE);
    *pMod = (CUmodule)m;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{
    DRV_ENTER();
    DRV_RETURN(get_global(drv_library(library), name, dptr, bytes));
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    DRV_ENTER();
    struct emu_kernel *k = drv_kernel(kernel);
    if (!pFunc)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!k)
        DRV_RETURN(CUDA_ERROR_INVALID_HANDLE);
    if (drv_ctx_device() < 0)
        DRV_RETURN(CUDA_ERROR_INVALID_CONTEXT);
    *pFunc = (CUfunction)k;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
    DRV_ENTER();
    struct emu_kernel *k = drv_kernel(kernel);
    if (!pLib)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!k || !k->module || k->module->source != MAYA_KSRC_LIBRARY)
        DRV_RETURN(CUDA_ERROR_INVALID_HANDLE);
    *pLib = (CUlibrary)k->module;
    DRV_RETURN(CUDA_SUCCESS);
}

/* ---- function attributes ---- */

static CUresult kernel_attr_error(enum emu_err e)
{
    return e == EMU_ERR_INVALID_HANDLE ? CUDA_ERROR_INVALID_HANDLE : drv_error(e);
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    DRV_ENTER();
    if (!pi)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_NEED_CTX(dev);
    DRV_RETURN(kernel_attr_error(emu_kernel_attribute(drv_kernel(hfunc), dev, (int)attrib, pi)));
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    DRV_ENTER();
    DRV_NEED_CTX(dev);
    DRV_RETURN(kernel_attr_error(emu_kernel_set_attribute(drv_kernel(hfunc), dev, (int)attrib, value)));
}

CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{
    DRV_ENTER();
    if (!pi)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    DRV_RETURN(kernel_attr_error(emu_kernel_attribute(drv_kernel(kernel), dev, (int)attrib, pi)));
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{
    DRV_ENTER();
    DRV_RETURN(kernel_attr_error(emu_kernel_set_attribute(drv_kernel(kernel), dev, (int)attrib, val)));
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    DRV_ENTER();
    if (!drv_kernel(hfunc))
        DRV_RETURN(CUDA_ERROR_INVALID_HANDLE);
    /* A preference a GPU may ignore; nothing to remember for the trace. */
    DRV_RETURN((unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
}

CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev)
{
    DRV_ENTER();
    if (!drv_kernel(kernel))
        DRV_RETURN(CUDA_ERROR_INVALID_HANDLE);
    if (!emu_device(dev))
        DRV_RETURN(CUDA_ERROR_INVALID_DEVICE);
    DRV_RETURN((unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
}

CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{
    DRV_ENTER();
    if (!drv_kernel(hfunc))
        DRV_RETURN(CUDA_ERROR_INVALID_HANDLE);
    DRV_RETURN((unsigned)config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE ? CUDA_ERROR_INVALID_VALUE
                                                                           : CUDA_SUCCESS);
}

static CUresult kernel_name(const char **name, const void *f)
{
    struct emu_kernel *k = drv_kernel(f);
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!k)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = k->mangled;
    return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    DRV_ENTER();
    DRV_RETURN(kernel_name(name, hfunc));
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
    DRV_ENTER();
    DRV_RETURN(kernel_name(name, hfunc));
}

CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
    DRV_ENTER();
    struct emu_kernel *k = drv_kernel(hfunc);
    if (!hmod)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!k || !k->module)
        DRV_RETURN(CUDA_ERROR_INVALID_HANDLE);
    *hmod = (CUmodule)k->module;
    DRV_RETURN(CUDA_SUCCESS);
}

static CUresult param_info(const void *f, size_t index, size_t *offset, size_t *size)
{
    struct emu_kernel *k = drv_kernel(f);
    if (!k)
        return CUDA_ERROR_INVALID_HANDLE;
    emu_kernel_prepare(k);
    if (!k->layout_known || index >= k->nparams)
        return CUDA_ERROR_INVALID_VALUE;
    if (offset)
        *offset = k->params[index].offset;
    if (size)
        *size = k->params[index].bytes;
    return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    DRV_ENTER();
    DRV_RETURN(param_info(func, paramIndex, paramOffset, paramSize));
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    DRV_ENTER();
    DRV_RETURN(param_info(kernel, paramIndex, paramOffset, paramSize));
}

CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction function)
{
    DRV_ENTER();
    if (!state)
        DRV_RETURN(CUDA_ERROR_INVALID_VALUE);
    if (!drv_kernel(function))
        DRV_RETURN(CUDA_ERROR_INVALID_HANDLE);
    *state = CU_FUNCTION_LOADING_STATE_LOADED;
    DRV_RETURN(CUDA_SUCCESS);
}

CUresult cuFuncLoad(CUfunction function)
{
    DRV_ENTER();
    DRV_RETURN(drv_kernel(function) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

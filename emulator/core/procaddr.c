/* Driver entry points for the runtime (cudaGetDriverEntryPoint): the table
 * lives in the driver stand-in, generated from its symbol list; the core only
 * finds it. Loading our own libcuda.so.1 by path (next to libmaya-core.so)
 * makes sure a runtime-only program gets the emulator's driver and never a
 * real one found on the library path. */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"

#include <dlfcn.h>
#include <limits.h>

static emu_proc_resolver resolver;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

EMU_API void emu_proc_address_register(emu_proc_resolver r)
{
    __atomic_store_n(&resolver, r, __ATOMIC_RELEASE);
}

static void load_driver(void)
{
    char dir[PATH_MAX], path[PATH_MAX];
    if (maya_self_dir((const void *)load_driver, dir, sizeof dir) < 0 ||
        maya_snprintf(path, sizeof path, "%s/libcuda.so.1", dir) < 0)
        return;
    /* Stays loaded for the life of the process, as the runtime's driver does. */
    if (!dlopen(path, RTLD_NOW | RTLD_GLOBAL))
        maya_warn("cannot load the emulator's driver %s: %s", path, dlerror());
}

EMU_API enum emu_err emu_proc_address(const char *name, int version, uint64_t flags, void **fn,
                                      int *status)
{
    emu_proc_resolver r = __atomic_load_n(&resolver, __ATOMIC_ACQUIRE);
    /* The runtime initialises the driver before it hands out its functions. */
    emu_driver_initialized = 1;
    if (!r) {
        pthread_mutex_lock(&load_lock);
        if (!resolver)
            load_driver();
        pthread_mutex_unlock(&load_lock);
        r = __atomic_load_n(&resolver, __ATOMIC_ACQUIRE);
    }
    if (!r) {
        if (status)
            *status = 1;
        return EMU_ERR_NOT_FOUND;
    }
    return r(name, version, flags, fn, status);
}

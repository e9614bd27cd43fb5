/* cuGetProcAddress: the driver's functions by API name and CUDA version.
 *
 * The table (driver_procaddr.c in the build) is generated from driver.symbols and the
 * toolkit's versioned typedefs by gen_procaddr.sh: for each API name, the
 * ABI versions of the function with the CUDA version each appeared in, and
 * the per-thread-default-stream variant where there is one. A request for
 * version V gets the newest version not newer than V.
 *
 * This file does not include cuda.h, which #defines cuGetProcAddress to its
 * _v2 name: both are defined here under their own names. */
#define _GNU_SOURCE
#include "emu.h"
#include "procaddr.h"

#include <stdlib.h>
#include <string.h>

/* CUresult and enum values from cuda.h (not included, see above). */
#define CU_SUCCESS 0
#define CU_ERROR_INVALID_VALUE 1
#define CU_ERROR_NOT_INITIALIZED 3
#define CU_ERROR_NOT_FOUND 500
#define CU_PROC_LEGACY_STREAM 1
#define CU_PROC_PER_THREAD_STREAM 2
#define CU_PROC_STATUS_NOT_FOUND 1
#define CU_PROC_STATUS_VERSION 2


static int entry_cmp(const void *key, const void *e)
{
    return strcmp(key, ((const struct proc_entry *)e)->name);
}

static enum emu_err resolve(const char *name, int version, uint64_t flags, void **fn, int *status)
{
    int st = CU_PROC_STATUS_NOT_FOUND;
    void *f = NULL;
    const struct proc_entry *e = NULL;
    if (!name || !fn)
        return EMU_ERR_INVALID_VALUE;
    if (flags & ~(uint64_t)(CU_PROC_LEGACY_STREAM | CU_PROC_PER_THREAD_STREAM))
        return EMU_ERR_INVALID_VALUE;
    e = bsearch(name, proc_entries, (size_t)proc_nentries, sizeof proc_entries[0], entry_cmp);
    if (e) {
        const struct proc_version *v = NULL;
        for (int i = e->count - 1; i >= 0 && !v; i--)
            if (proc_versions[e->first + i].version <= version)
                v = &proc_versions[e->first + i];
        if (!v) {
            st = CU_PROC_STATUS_VERSION;
        } else {
            /* CU_GET_PROC_ADDRESS_DEFAULT means the legacy default stream
             * for the driver: only the program's own compile flags could say
             * otherwise, and the runtime passes those as the flag. */
            int per_thread = (flags & CU_PROC_PER_THREAD_STREAM) && !(flags & CU_PROC_LEGACY_STREAM);
            f = per_thread && v->fn_per_thread ? v->fn_per_thread : v->fn;
            st = 0;
        }
    }
    *fn = f;
    if (status)
        *status = st;
    return f ? EMU_OK : EMU_ERR_NOT_FOUND;
}

static int proc_result(enum emu_err e)
{
    return e == EMU_OK ? CU_SUCCESS : e == EMU_ERR_NOT_FOUND ? CU_ERROR_NOT_FOUND : CU_ERROR_INVALID_VALUE;
}

/* Works before cuInit: the runtime and PyTorch look up cuInit itself here. */
int cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, uint64_t flags, int *symbolStatus)
{
    if (emu_enter() != EMU_OK)
        return CU_ERROR_NOT_INITIALIZED;
    uint64_t t0 = emu_now();
    int rc = proc_result(resolve(symbol, cudaVersion, flags, pfn, symbolStatus));
    emu_trace_call(EMU_API_ID("cuGetProcAddress_v2"), t0, rc, 0, 0);
    return rc;
}

int cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, uint64_t flags)
{
    if (emu_enter() != EMU_OK)
        return CU_ERROR_NOT_INITIALIZED;
    uint64_t t0 = emu_now();
    int rc = proc_result(resolve(symbol, cudaVersion, flags, pfn, NULL));
    emu_trace_call(EMU_API_ID("cuGetProcAddress"), t0, rc, 0, 0);
    return rc;
}

/* The core finds the table through this (cudaGetDriverEntryPoint). */
__attribute__((constructor)) static void register_resolver(void)
{
    emu_proc_address_register(resolve);
}

/* cuGetProcAddress: the driver's functions by API name and CUDA version.
 *
 * The table (driver_procaddr.c in the build) is generated from driver.symbols and the
 * toolkit's versioned typedefs by gen_procaddr.sh: for each API name, the
 * ABI versions of the function with the CUDA version each appeared in, and
 * the per-thread-default-stream variant where there is one. A request for
 * version V gets the newest version not newer than V.
 */
#define _GNU_SOURCE
#include "drv.h"
#include "procaddr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int entry_cmp(const void *key, const void *e)
{
    return strcmp(key, ((const struct proc_entry *)e)->name);
}

static enum emu_err resolve(const char *name, int version, uint64_t flags, void **fn, int *status)
{
    int st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    void *f = NULL;
    const struct proc_entry *e = NULL;
    if (!name || !fn)
        return EMU_ERR_INVALID_VALUE;
    if (flags & ~(uint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return EMU_ERR_INVALID_VALUE;
    e = bsearch(name, proc_entries, (size_t)proc_nentries, sizeof proc_entries[0], entry_cmp);
    if (e) {
        const struct proc_version *v = NULL;
        for (int i = e->count - 1; i >= 0 && !v; i--)
            if (proc_versions[e->first + i].version <= version)
                v = &proc_versions[e->first + i];
        if (!v) {
            st = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        } else {
            /* CU_GET_PROC_ADDRESS_DEFAULT means the legacy default stream
             * for the driver: only the program's own compile flags could say
             * otherwise, and the runtime passes those as the flag. */
            int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
                             !(flags & CU_GET_PROC_ADDRESS_LEGACY_STREAM);
            f = per_thread && v->fn_per_thread ? v->fn_per_thread : v->fn;
            st = CU_GET_PROC_ADDRESS_SUCCESS;
        }
    }
    *fn = f;
    if (status)
        *status = st;
    return f ? EMU_OK : EMU_ERR_NOT_FOUND;
}

static CUresult proc_result(enum emu_err e)
{
    return e == EMU_OK ? CUDA_SUCCESS : e == EMU_ERR_NOT_FOUND ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_VALUE;
}

/* Works before cuInit: the runtime and PyTorch look up cuInit itself here. */
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    DRV_ENTER_NOINIT();
    int st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult e = proc_result(resolve(symbol, cudaVersion, flags, pfn, &st));
    if (symbolStatus)
        *symbolStatus = (CUdriverProcAddressQueryResult)st;
    DRV_RETURN(e);
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    DRV_ENTER_NOINIT();
    DRV_RETURN(proc_result(resolve(symbol, cudaVersion, flags, pfn, NULL)));
}

/* The core finds the table through this (cudaGetDriverEntryPoint). */
__attribute__((constructor)) static void register_resolver(void)
{
    emu_proc_address_register(resolve);
}

/* The driver's private tables, which only a statically linked CUDA runtime
 * asks for (nvcc's default, -cudart static; the shared runtime is maya's
 * own and never does). Their layout is NVIDIA's and undocumented: maya
 * does not emulate it, and without it that runtime fails every call with
 * "operation not supported". Say so, and how to build the program so that
 * it runs. */
CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    (void)pExportTableId;
    emu_enter();
    static int told;
    if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "maya-emu: this program links the CUDA runtime statically (nvcc's default, "
                        "-cudart static), which needs the driver's private export tables; maya emulates the "
                        "shared runtime: build the program with nvcc -cudart shared (or link -lcudart instead "
                        "of -lcudart_static) and run it again\n");
    if (ppExportTable)
        *ppExportTable = NULL;
    emu_unsupported("cuGetExportTable", CUDA_ERROR_NOT_SUPPORTED);
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* Fuzzing the device-code decoders through their public functions
 * (emulator/core/fatbin.c, kernel_layout.c, module_symbols.c, ptx_ops.c):
 * the input is a module image (fat binary, cubin, or PTX, as
 * cuModuleLoadData or __cudaRegisterFatBinary hand it over). Its kind and size are probed; the kernels it lists are
 * laid out (parameters, attributes, PTX instruction counts); a global is
 * looked up; runnability asked. Every layout must be self-consistent.
 * Seeds: the nvcc-built modules of tests/workloads/modules. */
#include "fuzz.h"
#include "emu.h"
#include "ptx_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What fatbin.c takes from the rest of the core: no device (the SM
 * preference then takes the newest code), no trace (string ids are 1). */
struct emu_device *emu_device(int ordinal)
{
    (void)ordinal;
    return NULL;
}

uint32_t emu_string(const char *s)
{
    (void)s;
    return 1;
}

/* Kernels' work is not read from their code here: the SASS half runs
 * nvdisasm and caches what it says under the user's home, one process
 * and file per input (the work analysis would need a harness of its own,
 * through ptx_parse.c and sass_parse.c). */
const struct emu_config *emu_config(void)
{
    static const struct emu_config c = { .no_kernel_work = 1 };
    return &c;
}

#define MAX_NAMES 8

struct names {
    char *v[MAX_NAMES];
    int n;
};

static void keep_name(const char *name, void *arg)
{
    struct names *ns = arg;
    if (ns->n < MAX_NAMES)
        ns->v[ns->n++] = strdup(name);
}

static void check_layout(struct emu_module *m, const uint8_t *image, size_t size, const char *mangled)
{
    struct emu_kernel k;
    memset(&k, 0, sizeof k);
    k.magic = EMU_KERNEL_MAGIC;
    k.mangled = (char *)mangled;
    k.name = emu_demangle(mangled);
    k.module = m;
    if (emu_fatbin_kernel_layout(image, size, &k) == 0) {
        if (k.param_bytes > 32764)
            abort();
        for (uint32_t i = 0; i < k.nparams; i++)
            if ((uint32_t)k.params[i].offset + k.params[i].bytes > k.param_bytes)
                abort();
    }
    free(k.params);
    free(k.features);
    free(k.name);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0; /* 0 means "size unknown" to the decoders: they would read past the input */
    /* an exact-size copy: a read past the end is ASan's to see */
    uint8_t *image = malloc(size);
    if (!image)
        return 0;
    memcpy(image, data, size);
    size_t span = 0;
    if (emu_image_probe(image, size, &span) > 0 && span > size)
        abort();
    struct emu_module m;
    memset(&m, 0, sizeof m);
    m.magic = EMU_MODULE_MAGIC;
    m.image = image;
    m.image_bytes = size;
    m.source = MAYA_KSRC_MODULE;
    struct names ns = { .n = 0 };
    emu_image_kernels(&m, keep_name, &ns);
    for (int i = 0; i < ns.n; i++) {
        check_layout(&m, image, size, ns.v[i]);
        free(ns.v[i]);
    }
    check_layout(&m, image, size, "_Z5mixedidmc4PairPf");
    uint64_t bytes;
    emu_image_global(&m, "dev_counter", &bytes);
    emu_image_runnable(&m, 90);
    emu_image_index_free(m.index);
    struct emu_ptx_ops ops;
    emu_ptx_op_counts((const char *)image, size, "scale", &ops);
    free(image);
    return 0;
}

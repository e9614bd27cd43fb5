/* Reading kernel facts out of fat binaries and cubins, without a GPU.
 * (First version: names only; parameter layouts come in a later change.) */
#define _GNU_SOURCE
#include "emu.h"

#include <stdlib.h>
#include <string.h>

/* From the C++ runtime every CUDA program links (libstdc++). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *emu_demangle(const char *mangled)
{
    if (mangled && strncmp(mangled, "_Z", 2) == 0) {
        int status = 0;
        char *d = __cxa_demangle(mangled, NULL, NULL, &status);
        if (d && status == 0)
            return d;
        free(d);
    }
    return strdup(mangled ? mangled : "?");
}

int emu_fatbin_kernel_layout(const void *image, size_t image_bytes, struct emu_kernel *k)
{
    (void)image;
    (void)image_bytes;
    (void)k;
    return -1;
}

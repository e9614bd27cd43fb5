/* Fuzzing the hwspec reader (common/hwspec.c over libconfuse): the input is
 * a GPU or cluster description file; what it accepts is printed back in the
 * file syntax, read again, and used as `-g NAMExN` would. Seeds: the
 * repository's hwspecs. */
#include "fuzz.h"
#include "maya/common.h"
#include "maya/hwspec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("spec.conf", data, size);
    struct maya_hwspecs hw;
    memset(&hw, 0, sizeof hw);
    if (maya_hwspecs_load_file(path, &hw) < 0) {
        maya_hwspecs_free(&hw);
        return 0;
    }
    for (size_t i = 0; i < hw.ngpus; i++) {
        maya_gpu_spec_print(fuzz_sink(), &hw.gpus[i]);
        char arg[128];
        snprintf(arg, sizeof arg, "%sx16", hw.gpus[i].key);
        const struct maya_gpu_spec *g;
        int count;
        struct maya_cluster_spec c;
        if (maya_parse_gpu_count(&hw, arg, &g, &count) == 0)
            maya_default_cluster(&hw, g, count, &c);
    }
    for (size_t i = 0; i < hw.nclusters; i++)
        maya_cluster_spec_print(fuzz_sink(), &hw.clusters[i]);
    maya_hwspecs_free(&hw);
    return 0;
}

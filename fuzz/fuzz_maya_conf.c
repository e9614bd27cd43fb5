/* Fuzzing the maya.conf reader (common/config.c over libconfuse). Seeds:
 * the examples of maya.conf(5). */
#include "fuzz.h"
#include "maya/config.h"

#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("maya.conf", data, size);
    struct maya_conf c;
    memset(&c, 0, sizeof c);
    maya_conf_load_file(path, &c);
    return 0;
}

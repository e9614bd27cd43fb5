/* Fuzzing the --maya-emulate value (spank_plugin/spank_option.c): the full
 * check srun and slurmstepd make against the hwspecs (a relative
 * cluster=FILE is looked up in a scratch folder holding one valid cluster
 * file, c.conf), and the text-only reading of report= the epilog makes as
 * root. A value the full check accepts must give a consistent job. */
#include "fuzz.h"
#include "maya/common.h"
#include "maya/hwspec.h"
#include "spank_maya.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* spank_maya.c's message capture, which the parser uses to repeat a
 * message with the option's name: here, the last message is kept. */
void spank_capture_begin(void)
{
}

const char *spank_capture_end(void)
{
    return maya_last_error();
}

static char base[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    char src[512], *text;
    size_t len;
    snprintf(src, sizeof src, "%s/clusters/dgx-h100.conf", fuzz_hwspecs_dir());
    if (maya_read_file(src, &text, &len) < 0)
        abort();
    fuzz_write("c.conf", text, len);
    free(text);
    snprintf(base, sizeof base, "%s", fuzz_path(""));
    base[strlen(base) - 1] = 0; /* the folder, without its trailing slash */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char value[8192];
    if (size >= sizeof value)
        return 0;
    memcpy(value, data, size);
    value[size] = 0;
    struct spank_emulate e;
    if (spank_emulate_parse(fuzz_hwspecs(), value, base, &e) == 0) {
        if (e.count < 1 || e.gpus_per_node < 1 || e.nodes < 1 || !e.gpu[0] ||
            (int64_t)e.gpus_per_node * e.nodes < e.count)
            abort();
    }
    char report[4096];
    spank_emulate_report(value, report, sizeof report);
    return 0;
}

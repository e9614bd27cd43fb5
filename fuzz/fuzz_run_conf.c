/* Fuzzing the run description reader (common/run_desc.c: DIR/run.conf, also
 * written by the Slurm plugin's launchers). What it accepts must survive a
 * round trip: written and read again, it gives the same description. */
#include "fuzz.h"
#include "maya/run_desc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same(const struct maya_run_desc *a, const struct maya_run_desc *b)
{
    if (a->nprocs != b->nprocs || a->gpu_count != b->gpu_count || a->nodes != b->nodes ||
        strcmp(a->gpu, b->gpu) || strcmp(a->command, b->command) || strcmp(a->cluster, b->cluster))
        return 0;
    for (int i = 0; i < a->nprocs; i++)
        if (a->procs[i].end != b->procs[i].end || a->procs[i].code != b->procs[i].code ||
            a->procs[i].pid != b->procs[i].pid || strcmp(a->procs[i].note, b->procs[i].note))
            return 0;
    return 1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("run.conf", data, size);
    struct maya_run_desc d, again;
    if (maya_run_desc_read(path, &d) < 0)
        return 0;
    const char *copy = fuzz_path("again.conf");
    if (maya_run_desc_write(copy, &d) < 0 || maya_run_desc_read(copy, &again) < 0) {
        fprintf(stderr, "a run.conf that was read could not be written and read again\n");
        abort();
    }
    if (!same(&d, &again)) {
        fprintf(stderr, "a run.conf changed on its way through maya_run_desc_write\n");
        abort();
    }
    maya_run_desc_free(&d);
    maya_run_desc_free(&again);
    return 0;
}

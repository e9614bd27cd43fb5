/* Fuzzing the trace reader through `maya trace dump`: every record of a rank
 * (or job) trace decoded and printed, whole and with --partial (the reader's
 * recovery of a cut-short trace). Seeds: traces the emulator wrote. */
#include "fuzz.h"
#include "maya/trace_dump.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("in.mtrace", data, size);
    maya_trace_dump(path, fuzz_sink(), 0);
    maya_trace_dump(path, fuzz_sink(), 1);
    return 0;
}

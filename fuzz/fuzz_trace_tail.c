/* Fuzzing the reader's recovery of a cut-short trace from its tail file
 * (collator/trace_reader.c, trace_format.h): the input is a tail file
 * (slots of raw records, then the status block); the .tmp beside it is a
 * header alone, as a rank killed before its first chunk was compressed
 * leaves it. Read through maya_trace_dump --partial. Seeds: tails made of a
 * real rank's records (fuzz/make_corpus.py, with small slots). */
#include "fuzz.h"
#include "maya/collator.h"
#include "maya/trace_dump.h"
#include "maya/trace_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmp_path[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    struct maya_trace_header h;
    col_header_init(&h, MAYA_TRACE_RANK);
    h.rank = 0;
    h.world_size = 1;
    h.gpus_per_node = 8;
    snprintf(h.gpu, sizeof h.gpu, "H100-SXM");
    snprintf(tmp_path, sizeof tmp_path, "%s", fuzz_write("rank-0.mtrace.tmp", &h, sizeof h));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_write("rank-0.mtrace.tail", data, size);
    maya_trace_dump(tmp_path, fuzz_sink(), 1);
    return 0;
}

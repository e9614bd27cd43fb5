/* What maya's libFuzzer harnesses share (fuzz/README.md).
 *
 * Every parser under test reads files, so each input is written to a file
 * in a private scratch directory (under /dev/shm when there is one: the
 * write costs a memcpy, not a disk) and the parser is given its path.
 * Messages of refused inputs are counted, not printed: printing them would
 * cost more than the parsing.
 */
#ifndef MAYA_FUZZ_H
#define MAYA_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Once, from LLVMFuzzerInitialize: make the scratch directory, silence
 * maya_error (unless MAYA_FUZZ_VERBOSE is set). */
void fuzz_init(void);

/* /dev/null opened for writing, for what a harness prints (aborts if it
 * cannot be opened). */
#include <stdio.h>
FILE *fuzz_sink(void);

/* The scratch path for a file name ("in.mtrace"). */
const char *fuzz_path(const char *name);

/* Write data to fuzz_path(name) and return that path (aborts on failure:
 * a harness that cannot write its input tests nothing). */
const char *fuzz_write(const char *name, const void *data, size_t size);

/* The repository's hwspecs (the GPU and cluster descriptions): loaded once. */
struct maya_hwspecs;
const struct maya_hwspecs *fuzz_hwspecs(void);
const char *fuzz_hwspecs_dir(void);

#endif

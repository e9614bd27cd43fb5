/* Launchers and duplicate-rank elimination (run_elim.c, docs/dedup.md). */
#ifndef MAYA_RUN_ELIM_H
#define MAYA_RUN_ELIM_H

#include <stddef.h>

/* Did elimination stop `rank`? Its note (rank-N.eliminated in the trace
 * directory) names the rank it is rebuilt from (*source). 1 or 0. */
int run_elim_read(const char *trace_dir, int rank, int *source);
/* The same, and whether it was a declared replica (--replicas) that never ran. */
int run_elim_read_how(const char *trace_dir, int rank, int *source, int *declared);
/* The run.conf note of a stopped rank ("eliminated, rebuilt from rank 3"):
 * 1 and note filled, or 0 if elimination did not stop it. */
int run_elim_note(const char *trace_dir, int rank, char *note, size_t n);

#endif

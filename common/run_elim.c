/* The launcher's side of duplicate-rank elimination (docs/dedup.md), shared
 * by maya run and the Slurm plugin: what a rank the emulated NCCL stopped
 * left next to its trace, and how that reads in run.conf. */
#define _GNU_SOURCE
#include "maya/run_elim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maya/common.h"

int run_elim_read(const char *trace_dir, int rank, int *source)
{
    int declared;
    return run_elim_read_how(trace_dir, rank, source, &declared);
}

int run_elim_read_how(const char *trace_dir, int rank, int *source, int *declared)
{
    *declared = 0;
    char path[4200];
    if (maya_snprintf(path, sizeof path, "%s/rank-%d.eliminated", trace_dir, rank) < 0)
        return 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    char line[128];
    int found = 0;
    while (fgets(line, sizeof line, fp)) {
        if (sscanf(line, "source=%d", source) == 1 && *source >= 0 && *source != rank)
            found = 1;
        if (!strncmp(line, "how=declared", 12))
            *declared = 1;
    }
    fclose(fp);
    return found;
}

int run_elim_note(const char *trace_dir, int rank, char *note, size_t n)
{
    int source, declared;
    if (!run_elim_read_how(trace_dir, rank, &source, &declared))
        return 0;
    if (declared)
        snprintf(note, n, "a replica, not emulated (--replicas), rebuilt from rank %d", source);
    else
        snprintf(note, n, "eliminated, rebuilt from rank %d", source);
    return 1;
}

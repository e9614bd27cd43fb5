/* maya run --replicas auto: the layout of a job's replicas from smaller
 * runs of the same program (replicas_auto.c, docs/dedup.md). */
#ifndef MAYA_REPLICAS_AUTO_H
#define MAYA_REPLICAS_AUTO_H

#include <signal.h>

#include "maya/replicas.h"

struct replicas_auto_job {
    const char *dir;            /* the run directory: probes go to DIR/probes/N */
    const char *gpu;            /* the GPU's key, for -g KEYxN */
    const char *cluster;        /* --cluster as given, or NULL */
    double hang_s;              /* --hang-timeout as given, or 0 */
    int world;                  /* the job's ranks */
    int cpus;                   /* CPUs maya may use (the probes' sizing) */
    char *const *cmd;           /* the program and its arguments */
    int quiet;
    volatile sig_atomic_t *interrupted; /* set by maya run's signal handler */
};

/* Run the program on fewer ranks, with --dedup, until two runs of a and
 * b = a x p ranks (p the smallest prime factor of world / a, b below world)
 * show layouts of which b's has one dimension that grew from a's: that is
 * the data-parallel one, grown to world (run_elim_layout_step). Each probe
 * is stopped once its classes are written. 0 with out and text (N:S,...)
 * set, or -1 with a message naming each probe and what it showed. */
/* Could smaller runs show a layout for world ranks (world has a divisor
 * a with a x p below world)? 0, or -1 with a message saying why not. */
int replicas_auto_check(int world);

int replicas_auto(const struct replicas_auto_job *job, struct maya_replicas *out, char *text, size_t size);

#endif

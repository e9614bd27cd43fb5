/* Launchers and duplicate-rank elimination (run_elim.c, docs/dedup.md). */
#ifndef MAYA_RUN_ELIM_H
#define MAYA_RUN_ELIM_H

#include <stddef.h>
#include <stdint.h>

#include "maya/replicas.h"

/* Written next to the traces by the world's rank 0 once elimination has
 * compared every rank: each rank's class (the lowest rank that issued the
 * same NCCL operations), for `maya run --replicas-like`. */
#define MAYA_ELIM_CLASSES_FILE "dedup-classes"

/* Did elimination stop `rank`? Its note (rank-N.eliminated in the trace
 * directory) names the rank it is rebuilt from (*source). 1 or 0. */
int run_elim_read(const char *trace_dir, int rank, int *source);
/* The same, and whether it was a declared replica (--replicas) that never ran. */
int run_elim_read_how(const char *trace_dir, int rank, int *source, int *declared);
/* The run.conf note of a stopped rank ("eliminated, rebuilt from rank 3"):
 * 1 and note filled, or 0 if elimination did not stop it. */
int run_elim_note(const char *trace_dir, int rank, char *note, size_t n);

/* What a run's elimination found (MAYA_ELIM_CLASSES_FILE). */
struct run_elim_classes {
    int world;
    int32_t *cls;               /* [world]: each rank's class, its lowest rank */
    int ncomms;
    int32_t *members;           /* communicator c's global ranks, by communicator rank, */
    int *comm_off;              /* are members[comm_off[c] .. comm_off[c + 1]) */
    char replicas[256];         /* the layout that run declared (--replicas), "" if none */
};

/* Read trace_dir's classes: 1, 0 when there are none (no --dedup, or the
 * ranks never all reached their check), -1 with a message naming the file
 * and line when it is malformed. Free with run_elim_classes_free. */
int run_elim_classes_read(const char *trace_dir, struct run_elim_classes *c);
void run_elim_classes_free(struct run_elim_classes *c);

/* The replicas layout the classes show (the declared one when the run
 * declared one): dimensions N:S of the rank number along which every rank
 * is in the class it is in with that digit 0, and which every communicator
 * either spans (all N digits of each member's other digits) or keeps
 * constant, coarsest first from the lowest stride (docs/dedup.md). How
 * many dimensions: 0 for none. */
int run_elim_layout(const struct run_elim_classes *c, struct maya_replicas *out);

/* The layout trace_dir's classes show (run_elim_classes_read, then
 * run_elim_layout; *world: their world): 1 with out filled (out->ndims 0
 * when they show none), 0 when there are no classes, -1 when the file is
 * malformed (said, naming it). */
int run_elim_layout_read(const char *trace_dir, struct maya_replicas *out, int *world);

/* The layout for a run of world ranks of the program whose run of
 * c_world ranks showed small: the same, with its outermost dimension (the
 * data-parallel one: TP, then DP, then PP) grown by world / c_world. 0, or
 * -1 with why in err. */
int run_elim_layout_grow(const struct maya_replicas *small, int64_t small_world, int64_t world,
                         struct maya_replicas *out, char *err, size_t errn);

/* The data-parallel dimension from two smaller runs of the program (maya
 * run --replicas auto): a, of a_world ranks, and b, of b_world (a whole
 * multiple of a_world). The dimension that grows with the world is the one
 * of b that, shrunk by b_world / a_world (gone where that leaves 1), with
 * the strides above it shrunk alike, leaves a; out is b with it (and the
 * strides above) grown by world / b_world. 0 with *dim its index in out,
 * or -1 with why in err (no dimension or more than one explains the two). */
int run_elim_layout_step(const struct maya_replicas *a, int64_t a_world, const struct maya_replicas *b,
                         int64_t b_world, int64_t world, struct maya_replicas *out, int *dim, char *err,
                         size_t errn);

#endif

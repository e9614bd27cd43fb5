/* maya profile (src/cmd_profile.c; these parts in profile/) and what it is made of: the GPU probe,
 * the summary of what a profile measured, the comparison of a prediction
 * with a profile. A profile directory is a run directory (docs/run-dir.md)
 * whose traces were recorded on real GPUs (launcher=maya-profile). */
#ifndef MAYA_CLI_PROFILE_H
#define MAYA_CLI_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include "maya/map.h"

/* probe.c: the real CUDA runtime's answer, from a child process. */
struct profile_probe {
    int count;                  /* devices; 0 when there is no usable GPU */
    char name[256];             /* device 0's product name */
    uint64_t total_mem;
    int major, minor;
    char lib[4096];             /* the libcudart that answered */
    char why[5120];             /* count == 0: what failed */
};
/* Ask the libcudart.so.13 of real_libdir (NULL: the one the dynamic
 * linker finds). 0 (see out->count), or -1 when the probe itself failed. */
int profile_probe(const char *real_libdir, struct profile_probe *out);

/* summary.c: op names, interned: ids from 1, 0 when out of memory. */
struct profile_names {
    char **names;
    size_t n, cap;
    struct maya_map index;      /* (name hash, probe) -> id */
};
uint32_t profile_name_id(struct profile_names *t, const char *name);
const char *profile_name(const struct profile_names *t, uint32_t id);
void profile_names_free(struct profile_names *t);
/* A name and a newline, cut to max characters ("..." at the end; 0: whole):
 * the terminal gets C++ kernel names of a sensible length. */
#define PROFILE_NAME_WIDTH 100
void profile_print_name(FILE *fp, const char *name, size_t max);

/* summary.c: what DIR/traces measured, per op name: DIR/profile.txt,
 * and the top lines on fp (NULL: none). 0 or -1. */
int profile_summary(const char *dir, FILE *fp);

/* compare.c: maya's prediction of run_dir against profile_dir (the
 * same program measured): per-op error by family, iteration times
 * measured, predicted, and predicted with the measured durations;
 * run_dir/compare.txt and compare.json. marker: iteration marker or NULL. */
int profile_compare(const char *profile_dir, const char *run_dir, const char *marker, int quiet);

/* compare.c: the prediction of run_dir (its GPU, cluster and estimator),
 * its device ops in trace order, rank by rank. */
struct profile_pred_op {
    int rank;
    const char *name;           /* kernel or API name (in names) */
    int family;                 /* enum est_family */
    uint64_t dev_ns;
};
struct profile_pred {
    struct profile_pred_op *ops;
    size_t n;
    struct profile_names names;
};
int profile_predict(const char *run_dir, struct profile_pred *out);
void profile_pred_free(struct profile_pred *p);

/* kineto.c: maya's prediction of run_dir against PyTorch profiler
 * (Kineto) traces of the same program, one per rank: per-family error,
 * stragglers and the ops that differ most; run_dir/compare.txt and .json. */
int profile_compare_kineto(const char *const *traces, int ntraces, const char *run_dir, int quiet);

#endif

/* A maya profile's measured ops as the training tables of estimator/data
 * (their columns are described in estimator/data/SOURCE.md), so that
 * maya-est-train --data OUT learns from them. Each op is described by the
 * estimator's own est_describe, as maya-est-train describes table rows:
 *   gemm.csv       GEMMs of batch 1 (m, n, k, precision)
 *   kernel.csv     kernels whose class is known from their name and whose
 *                  bytes moved the parameters tell (op = the class's word)
 *   allreduce.csv  all-reduces, sendrecv.csv send/recv: on one node of the
 *                  GPU's default kind (setup dgx), as maya profile runs
 * Other ops (batched GEMMs, convolutions, attention, copies) have no table
 * yet and are counted as skipped. Rows group by shape or size (the unit
 * maya-est-train --accuracy holds out). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "est_internal.h"
#include "est_profile.h"
#include "maya/common.h"

enum { T_GEMM, T_KERNEL, T_ALLREDUCE, T_SENDRECV, NTABLES };

static const char *const table_names[NTABLES] = { "gemm", "kernel", "allreduce", "sendrecv" };
static const char *const table_headers[NTABLES] = {
    "gpu,source,group,m,n,k,prec,time_us",
    "gpu,source,group,op,bytes,time_us",
    "gpu,source,setup,group,ranks,nodes,ranks_per_node,bytes,time_us",
    "gpu,source,setup,group,ranks,nodes,ranks_per_node,bytes,time_us",
};

/* A word est_kclass_of_name maps back to the class. */
static const char *class_word(enum est_kclass c)
{
    switch (c) {
    case EST_KC_ELEMENTWISE: return "elementwise";
    case EST_KC_NORM: return "norm";
    case EST_KC_ACT: return "gelu";
    case EST_KC_ROTARY: return "rotary";
    case EST_KC_SOFTMAX: return "softmax";
    case EST_KC_REDUCE: return "reduce";
    default: return NULL;
    }
}

struct export {
    struct maya_atomic_file f[NTABLES];
    const char *gpu;
    struct est_export_counts *counts;
};

static int row(const struct est_profile_op *p, void *arg)
{
    struct export *x = arg;
    if (!p->measured)
        return 0;
    x->counts->measured++;
    struct est_desc d;
    est_describe(&p->op, &d);
    double us = (double)p->device_ns / 1e3;
    FILE *fp;
    switch (d.family) {
    case EST_GEMM:
        fp = x->f[T_GEMM].fp;
        fprintf(fp, "%s,maya-profile,m%.0fn%.0fk%.0f,%.0f,%.0f,%.0f,%s,%.3f\n", x->gpu, d.m, d.n, d.k, d.m, d.n,
                d.k, est_prec_name(d.prec), us);
        x->counts->rows[T_GEMM]++;
        return 0;
    case EST_KERNEL:
        if (!d.bytes_known || !class_word(d.kclass) || d.bytes <= 0)
            break;
        fp = x->f[T_KERNEL].fp;
        fprintf(fp, "%s,maya-profile,%s-b%.0f,%s,%.0f,%.3f\n", x->gpu, class_word(d.kclass), d.bytes,
                class_word(d.kclass), d.bytes, us);
        x->counts->rows[T_KERNEL]++;
        return 0;
    case EST_ALLREDUCE:
    case EST_SENDRECV: {
        int t = d.family == EST_ALLREDUCE ? T_ALLREDUCE : T_SENDRECV;
        fprintf(x->f[t].fp, "%s,maya-profile,dgx,b%.0f,%d,%d,%d,%.0f,%.3f\n", x->gpu, d.bytes, d.nranks, d.nodes,
                d.ranks_per_node, d.bytes, us);
        x->counts->rows[t]++;
        return 0;
    }
    default:
        break;
    }
    x->counts->skipped++;
    return 0;
}

int est_profile_export(const char *profile_dir, const char *out_dir, struct est_export_counts *counts)
{
    memset(counts, 0, sizeof *counts);
    /* the GPU first: every row names it */
    char gpu[64];
    struct est_export_counts dummy;
    struct export x = { .gpu = gpu, .counts = &dummy };
    if (est_profile_walk(profile_dir, NULL, NULL, gpu, sizeof gpu) < 0)
        return -1;
    if (mkdir(out_dir, 0755) < 0 && errno != EEXIST)
        return maya_error("cannot create %s: %m", out_dir);
    int rc = 0, opened = 0;
    for (; opened < NTABLES && rc == 0; opened++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s.csv", out_dir, table_names[opened]);
        if (maya_atomic_open(&x.f[opened], path) < 0)
            rc = -1;
        else
            fprintf(x.f[opened].fp, "%s\n", table_headers[opened]);
    }
    if (rc < 0)
        opened--;
    x.counts = counts;
    if (rc == 0)
        rc = est_profile_walk(profile_dir, row, &x, NULL, 0);
    for (int t = 0; t < opened; t++) {
        if (rc == 0)
            rc = maya_atomic_commit(&x.f[t]);
        else
            maya_atomic_abort(&x.f[t]);
    }
    return rc;
}

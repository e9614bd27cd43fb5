/* The GPU and cluster descriptions a run used, kept in its run directory
 * (docs/run-dir.md) so that maya report uses them whatever the installed
 * descriptions or MAYA_HWSPEC_DIR say later. */
#ifndef MAYA_RUN_SPECS_H
#define MAYA_RUN_SPECS_H

#include "maya/hwspec.h"
#include "maya/run_desc.h"

#define MAYA_RUN_GPU_FILE "gpu.conf"         /* one gpu "KEY" { ... } (maya-hwspec(5)) */
#define MAYA_RUN_CLUSTER_FILE "cluster.conf" /* one cluster "KEY" { ... } */

/* Write dir/gpu.conf and, unless d->cluster already names a file kept
 * there (a --cluster file copied as it was given), dir/cluster.conf from
 * cluster, setting d->cluster to it. Files are written atomically. 0 or
 * -1 with a message. */
int maya_run_record_specs(struct maya_run_desc *d, const char *dir, const struct maya_gpu_spec *gpu,
                          const struct maya_cluster_spec *cluster);

#endif

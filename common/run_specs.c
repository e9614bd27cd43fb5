/* Recording the GPU and cluster descriptions of a run (run_specs.h), in
 * the files' own syntax so that they read back as any hwspec file does. */
#define _GNU_SOURCE
#include "maya/run_specs.h"
#include "maya/common.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static int record(const char *dir, const char *name, const char *what, const struct maya_gpu_spec *gpu,
                  const struct maya_cluster_spec *cluster)
{
    char path[PATH_MAX];
    struct maya_atomic_file af;
    if (maya_snprintf(path, sizeof path, "%s/%s", dir, name) < 0 || maya_atomic_open(&af, path) < 0)
        return -1;
    fprintf(af.fp, "# The %s this run used: maya report uses it (maya-hwspec(5))\n", what);
    if (gpu)
        maya_gpu_spec_print(af.fp, gpu);
    else
        maya_cluster_spec_print(af.fp, cluster);
    return maya_atomic_commit(&af);
}

int maya_run_record_specs(struct maya_run_desc *d, const char *dir, const struct maya_gpu_spec *gpu,
                          const struct maya_cluster_spec *cluster)
{
    if (record(dir, MAYA_RUN_GPU_FILE, "GPU description", gpu, NULL) < 0)
        return -1;
    if (!strcmp(d->cluster, MAYA_RUN_CLUSTER_FILE))
        return 0;
    if (record(dir, MAYA_RUN_CLUSTER_FILE, "cluster", NULL, cluster) < 0)
        return -1;
    snprintf(d->cluster, sizeof d->cluster, "%s", MAYA_RUN_CLUSTER_FILE);
    return 0;
}

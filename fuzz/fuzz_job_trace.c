/* Fuzzing the simulator's loader (sim/load.c) and the replay of what it
 * accepts: the input is a job trace, every op priced by the analytical
 * estimator for an H100, then replayed and summarised, on nodes with one
 * NIC per GPU, a DGX-1V's (two GPUs a NIC) or a PCIe server's (one NIC):
 * which one is chosen by the input's size, so that every input replays
 * the same way. Seeds: job traces the collator wrote. */
#include "fuzz.h"
#include "maya/estimator.h"
#include "maya/hwspec.h"
#include "maya/sim.h"
#include "sim_internal.h" /* total_ops */

#include <stdio.h>
#include <stdlib.h>

/* replays past this many ops are not run: the loader is what is fuzzed,
 * and a long replay would only slow the search */
#define MAX_REPLAY_OPS 20000

static struct estimator *est;

static int estimate(void *ctx, const struct est_op *op, struct est_result *out)
{
    return est_estimate(ctx, op, out);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    struct est_config cfg = { .gpu = maya_hwspecs_find_gpu(fuzz_hwspecs(), "h100") };
    for (int f = 0; f < EST_NFAMILIES; f++)
        cfg.model[f] = EST_ANALYTICAL;
    if (!cfg.gpu || est_create(&cfg, &est) < 0)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("job.mtrace", data, size);
    static const char *const clusters[] = { NULL, "dgx-1v", "a40-pcie" };
    const char *cluster = clusters[size % 3];
    struct sim_config cfg = { .estimate = estimate, .estimate_ctx = est, .flops = est_op_flops,
                              .gpu = maya_hwspecs_find_gpu(fuzz_hwspecs(), "h100"),
                              .cluster = cluster ? maya_hwspecs_find_cluster(fuzz_hwspecs(), cluster) : NULL };
    if (cluster && !cfg.cluster)
        abort(); /* the repository's hwspecs lack it */
    struct sim_job *job;
    if (sim_load(path, &cfg, &job) < 0)
        return 0;
    struct sim_summary s;
    if (job->total_ops <= MAX_REPLAY_OPS && sim_run(job) == 0)
        sim_summarize(job, &s);
    sim_free(job);
    return 0;
}

/* Fuzzing the collator (collator/collate.c) and, on what it accepts, the
 * simulator's loader: the input is one or two rank traces, collated into a
 * job trace that is then loaded and replayed.
 *
 * Input: byte 0 says how (bit 0: a second rank; bit 1: allow cut-short
 * traces, as maya report of a failed run does); with a second rank, bytes
 * 1..4 are the little-endian length of the first trace; the traces follow.
 * Seeds: the traces of a two-rank NCCL run, packed so. */
#include "fuzz.h"
#include "maya/collator.h"
#include "maya/common.h"
#include "maya/estimator.h"
#include "maya/hwspec.h"
#include "maya/sim.h"
#include "sim_internal.h" /* total_ops */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_REPLAY_OPS 20000

static char dir[512], rank0[600], rank1[600], job[600];

static int estimate(void *ctx, const struct est_op *op, struct est_result *out)
{
    (void)ctx;
    (void)op;
    memset(out, 0, sizeof *out);
    out->device_ns = 1000; /* durations do not matter here: the collator's output does */
    out->host_ns = 100;
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init();
    snprintf(dir, sizeof dir, "%s", fuzz_path("traces"));
    if (mkdir(dir, 0700) < 0)
        abort();
    snprintf(rank0, sizeof rank0, "%s/rank-0.mtrace", dir);
    snprintf(rank1, sizeof rank1, "%s/rank-1.mtrace", dir);
    snprintf(job, sizeof job, "%s", fuzz_path("job.mtrace"));
    return 0;
}

static void put(const char *path, const uint8_t *data, size_t size)
{
    FILE *fp = fopen(path, "wb");
    if (!fp || (size && fwrite(data, 1, size, fp) != size) || fclose(fp) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int two = data[0] & 1, allow_incomplete = (data[0] >> 1) & 1;
    const uint8_t *p = data + 1;
    size_t left = size - 1;
    unlink(rank1);
    if (two) {
        if (left < 4)
            return 0;
        uint32_t n;
        memcpy(&n, p, 4);
        p += 4;
        left -= 4;
        if (n > left)
            n = (uint32_t)left;
        put(rank0, p, n);
        put(rank1, p + n, left - n);
    } else {
        put(rank0, p, left);
    }
    struct col_summary sum;
    unlink(job);
    if (col_collate(dir, job, allow_incomplete, &sum) < 0)
        return 0;
    struct sim_config cfg = { .estimate = estimate };
    struct sim_job *j;
    if (sim_load(job, &cfg, &j) < 0)
        abort(); /* the collator wrote a job trace the simulator cannot read */
    if (j->total_ops <= MAX_REPLAY_OPS)
        sim_run(j);
    sim_free(j);
    return 0;
}

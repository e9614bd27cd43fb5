/* Kernels beside a collective on their GPU run on the SMs its NCCL kernel
 * leaves them (engine.c). Hand-computed, replayed exactly.
 *
 * Two ranks on one node of GPUs with 100 SMs. Each rank's stream 1 runs an
 * all-gather from 0 to 10 ms whose kernel holds 20 SMs; stream 2 runs
 * kernels of 4 ms alone, the first launched 1 ms in, the others at once:
 *   "during" starts at 1 ms beside the all-gather: 4 x 100 / 80 = 5 ms, to 6
 *   "after" starts at 6 ms, still beside it: 5 ms, to 11 (the rate it
 *           started with: the all-gather's end at 10 ms does not speed it up)
 *   "alone" starts at 11 ms, the all-gather over: 4 ms, to 15
 * A collective holding more than half the SMs takes half (60 SMs held:
 * 4 x 100 / 50 = 8 ms, to 9), and one holding none slows nothing. A kernel
 * launched the moment the all-gather starts (at 0, no host time between
 * them) runs on all the SMs, whichever of the two the replay takes first:
 * 0 to 4 ms, then 5 ms beside it to 9, then 5 ms to 14 (it starts at 9,
 * before the all-gather ends).
 * Two all-gathers of one NCCL group on stream 1 are one kernel: 20 SMs
 * held, "during" still 5 ms. Two on different streams (a second
 * communicator on stream 3) are two kernels: 40 SMs held, "during" takes
 * 4 x 100 / 60 = 6.667 ms, to 7.667.
 */
#include "sim/simtest.h"

#include "maya/estimator.h"
#include "maya/hwspec.h"

static int ctas;

/* the all-gather: 10 ms holding ctas SMs; every kernel 4 ms */
static int estimate(void *ctx, const struct est_op *op, struct est_result *out)
{
    (void)ctx;
    memset(out, 0, sizeof *out);
    if (op->api && !strcmp(op->api, "agAllGather")) {
        out->device_ns = 10 * MS;
        out->coll_ctas = ctas;
    } else if (op->kernel_name) {
        out->device_ns = 4 * MS;
    }
    return 0;
}

enum { ONE, GROUPED, TWO_STREAMS }; /* a second all-gather: none, in a group with the first, beside it */

static struct sim_job *run(const char *name, int held, int gap_ms, int second)
{
    static char t[2][2048];
    const char *ranks[2];
    for (int r = 0; r < 2; r++) {
        int n = snprintf(t[r], sizeof t[r],
                         "header rank=%d world_size=2 local_rank=%d node=0 gpus_per_node=2\n"
                         "stream id=1 dev=0\n"
                         "stream id=2 dev=0\n"
                         "stream id=3 dev=0\n"
                         "comm id=0x40 rank=%d nranks=2 gpu=%d\n"
                         "comm id=0x41 rank=%d nranks=2 gpu=%d\n"
                         "coll stream=1 api=agAllGather op=allgather comm=0x40 rank=%d nranks=2 cseq=0 count=1M "
                         "group=%d t=0..0\n",
                         r, r, r, r, r, r, r, second == GROUPED ? 7 : 0);
        if (second != ONE)
            n += snprintf(t[r] + n, sizeof t[r] - (size_t)n,
                          "coll stream=%d api=agAllGather op=allgather comm=%s rank=%d nranks=2 cseq=%d count=1M "
                          "group=%d t=0..0\n",
                          second == GROUPED ? 1 : 3, second == GROUPED ? "0x40" : "0x41", r,
                          second == GROUPED ? 1 : 0, second == GROUPED ? 7 : 0);
        snprintf(t[r] + n, sizeof t[r] - (size_t)n,
                 "launch stream=2 kernel=during t=%dms..%dms\n"
                 "launch stream=2 kernel=after t=%dms..%dms\n"
                 "launch stream=2 kernel=alone t=%dms..%dms\n",
                 gap_ms, gap_ms, gap_ms, gap_ms, gap_ms, gap_ms);
        ranks[r] = t[r];
    }
    struct maya_gpu_spec gpu;
    memset(&gpu, 0, sizeof gpu);
    gpu.prop.multiProcessorCount = 100;
    ctas = held;
    struct sim_config cfg = { .estimate = estimate, .gpu = &gpu };
    return replay_with(name, ranks, 2, &cfg);
}

int main(void)
{
    struct sim_job *j = run("overlap", 20, 1, ONE);
    for (int r = 0; r < 2 && j; r++) {
        EXPECT_U64(op(j, r, 0).dev_end, 10 * MS, "the all-gather keeps its time");
        EXPECT_U64(op(j, r, 1).dev_end, 6 * MS, "a kernel beside it: 4 ms on 80 of 100 SMs, from 1 ms");
        EXPECT_U64(op(j, r, 2).dev_end, 11 * MS, "the next, started beside it");
        EXPECT_U64(op(j, r, 3).dev_end, 15 * MS, "after it: its own 4 ms");
    }
    sim_free(j);
    j = run("most SMs", 60, 1, ONE);
    for (int r = 0; r < 2 && j; r++)
        EXPECT_U64(op(j, r, 1).dev_end, 9 * MS, "a collective takes half the SMs at most");
    sim_free(j);
    j = run("none", 0, 1, ONE);
    for (int r = 0; r < 2 && j; r++) {
        EXPECT_U64(op(j, r, 1).dev_end, 5 * MS, "no SMs held: no slowdown");
        EXPECT_U64(op(j, r, 3).dev_end, 13 * MS, "no SMs held: 4 ms each");
    }
    sim_free(j);
    j = run("together", 20, 0, ONE);
    for (int r = 0; r < 2 && j; r++) {
        EXPECT_U64(op(j, r, 1).dev_end, 4 * MS, "launched the moment the all-gather starts: all the SMs");
        EXPECT_U64(op(j, r, 2).dev_end, 9 * MS, "the next, beside it");
        EXPECT_U64(op(j, r, 3).dev_end, 14 * MS, "the last, started at 9 ms, beside it");
    }
    sim_free(j);
    j = run("grouped", 20, 1, GROUPED);
    for (int r = 0; r < 2 && j; r++)
        EXPECT_U64(op(j, r, 2).dev_end, 6 * MS, "two all-gathers of one group: one kernel, 20 SMs");
    sim_free(j);
    j = run("two streams", 20, 1, TWO_STREAMS);
    for (int r = 0; r < 2 && j; r++)
        EXPECT_U64(op(j, r, 2).dev_end, 7666667, "two all-gathers on two streams: 40 SMs held");
    sim_free(j);
    return finish("test_sim_overlap");
}

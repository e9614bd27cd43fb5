/* The reference case of DESIGN.md ("Simulator"): one host dispatches Sgemm
 * (14 ms) on stream 0, AllReduce (20 ms) on stream 1, records event E on
 * stream 1, makes stream 0 wait on E, then Sgemm (10 ms) on stream 0 and
 * AllReduce (16 ms) on stream 1, with host gaps of 2 ms between calls and a
 * host cost of 1 ms per call. "Stream 0" and "stream 1" are created streams
 * (trace ids 1 and 2), so no legacy-stream synchronisation is involved.
 *
 * By hand (ms). A call ends at: previous end + gap + 1 (host cost).
 *   call 0 Sgemm     host 0..1    enqueued at 1 on s0: runs 1..15
 *   call 1 AllReduce host 3..4    enqueued at 4 on s1 (one member): runs 4..24
 *   call 2 record E  host 6..7    E = "s1 after the AllReduce": complete at 24
 *   call 3 wait E    host 9..10   s0 waits for E behind Sgemm 1
 *   call 4 Sgemm     host 12..13  queued on s0 behind the wait: s0 is idle
 *                                 15..24 (the stall), Sgemm runs 24..34
 *   call 5 AllReduce host 15..16  queued on s1 behind AllReduce 1: runs 24..40
 * The host is done at 16 while the devices work until 40: dispatch overlaps
 * device work. The job takes 40 ms.
 */
#include "sim/simtest.h"

static const char *const fig6[] = {
    "header rank=0 world_size=1\n"
    "stream id=1 dev=0\n"
    "stream id=2 dev=0\n"
    "comm id=0x66 rank=0 nranks=1\n"
    "gemm      t=0ms..0.5ms     stream=1 api=cublasSgemm_v2 m=4096 n=4096 k=4096\n"
    "coll      t=2.5ms..3ms     stream=2 op=allreduce comm=0x66 cseq=0 rank=0 nranks=1 count=64M\n"
    "event_record t=5ms..5.5ms  stream=2 event=7 version=1\n"
    "stream_wait  t=7.5ms..8ms  stream=1 event=7 version=1\n"
    "gemm      t=10ms..10.5ms   stream=1 api=cublasSgemm_v2 m=4096 n=4096 k=2048\n"
    "coll      t=12.5ms..13ms   stream=2 op=allreduce comm=0x66 cseq=1 rank=0 nranks=1 count=32M\n",
};

/* Durations by call: the two Sgemms and AllReduces differ, so name them by
 * position through an estimator that counts. */
static int fig6_estimate(void *ctx, const struct est_op *op, struct est_result *out)
{
    static const uint64_t dev[] = { 14 * MS, 20 * MS, 0, 0, 10 * MS, 16 * MS };
    int *calls = ctx;
    memset(out, 0, sizeof *out);
    out->host_ns = 1 * MS;
    if (*calls < 6)
        out->device_ns = dev[*calls];
    ++*calls;
    return 0;
}

int main(void)
{
    const char *job = make_job("fig6", fig6, 1);
    if (!job)
        return 1;
    int calls = 0;
    struct sim_config cfg = { .estimate = fig6_estimate, .estimate_ctx = &calls };
    struct sim_job *j;
    if (sim_load(job, &cfg, &j) < 0 || sim_run(j) < 0)
        return 1;
    EXPECT(calls == 6, "the estimator was asked about %d calls, expected 6", calls);
    struct sim_op_times t[6];
    for (int i = 0; i < 6; i++)
        t[i] = op(j, 0, (uint64_t)i);

    EXPECT_U64(t[0].host_start, 0 * MS, "Sgemm 1 host start");
    EXPECT_U64(t[0].host_end, 1 * MS, "Sgemm 1 host end");
    EXPECT_U64(t[0].dev_start, 1 * MS, "Sgemm 1 start");
    EXPECT_U64(t[0].dev_end, 15 * MS, "Sgemm 1 end");
    EXPECT_U64(t[1].host_end, 4 * MS, "AllReduce 1 host end");
    EXPECT_U64(t[1].dev_start, 4 * MS, "AllReduce 1 start (overlaps Sgemm 1)");
    EXPECT_U64(t[1].dev_end, 24 * MS, "AllReduce 1 end");
    EXPECT_U64(t[2].host_end, 7 * MS, "event record host end");
    EXPECT_U64(t[3].host_end, 10 * MS, "stream wait host end");
    EXPECT_U64(t[4].host_end, 13 * MS, "Sgemm 2 host end");
    EXPECT_U64(t[4].dev_start, 24 * MS, "Sgemm 2 start: only when AllReduce 1 ends");
    EXPECT_U64(t[4].dev_end, 34 * MS, "Sgemm 2 end");
    EXPECT_U64(t[5].host_end, 16 * MS, "AllReduce 2 host end");
    EXPECT_U64(t[5].dev_start, 24 * MS, "AllReduce 2 start (behind AllReduce 1)");
    EXPECT_U64(t[5].dev_end, 40 * MS, "AllReduce 2 end");
    EXPECT(!strcmp(t[0].name, "cublasSgemm_v2") && !strcmp(t[1].name, "ncclAllReduce"),
           "op names: %s, %s", t[0].name, t[1].name);
    EXPECT(t[0].stream == 1 && t[1].stream == 2, "streams %d %d", t[0].stream, t[1].stream);
    /* stream 0 stalls from 15 to 24: idle between the two Sgemms */
    EXPECT_U64(t[4].dev_start - t[0].dev_end, 9 * MS, "stall of stream 0");
    /* the host finished long before the devices */
    EXPECT(t[5].host_end < t[1].dev_end, "host dispatch overlaps device work");

    struct sim_summary s;
    sim_summarize(j, &s);
    EXPECT_NEAR(s.makespan_s, 0.040, 1e-12, "job time");
    EXPECT(s.iterations == 1, "iterations: %d", s.iterations);
    EXPECT_NEAR(s.iteration_s, 0.040, 1e-12, "iteration time (one iteration: the whole run)");
    /* compute 1..15 and 24..34 = 24 ms; communication 4..40 = 36 ms, of which
     * 4..15 and 24..34 overlap compute (21 ms): 15 ms exposed; busy 1..40:
     * idle 0..1 = 1 ms */
    EXPECT_NEAR(s.compute_s, 0.024, 1e-12, "compute time");
    EXPECT_NEAR(s.comm_s, 0.036, 1e-12, "communication time");
    EXPECT_NEAR(s.exposed_comm_s, 0.015, 1e-12, "exposed communication");
    EXPECT_NEAR(s.idle_s, 0.001, 1e-12, "idle time");
    sim_free(j);
    return finish("fig6");
}

/* Finding iterations: a training loop of 5 identical iterations between a
 * set-up (allocations, a synchronous upload) and a tear-down (frees), with
 * 0.1 ms of host cost per call and no gaps.
 *
 * One iteration: fwd (3 ms), bwd (5 ms), a one-member all-reduce (2 ms) on
 * one stream, then cudaDeviceSynchronize. From the moment the host resumes
 * (D): fwd enqueued at D+0.1 runs to D+3.1, bwd to D+8.1, the all-reduce to
 * D+10.1; the sync call ends at D+0.4 and waits until D+10.1. So every
 * iteration takes 10.1 ms, the first too (it starts with its first call,
 * at D, and ends at D+10.1).
 *
 * Found automatically (the period of the op sequence), and with a marker
 * (an NVTX point "step" before each iteration, free of host cost), 5
 * iterations of 10.1 ms; with the marker the last one also holds the
 * tear-down (3 frees, 0.3 ms), which the steady state (median of iterations
 * 2..5) ignores.
 */
#include "sim/simtest.h"

static char text[8192];

static const char *loop(int marker)
{
    size_t n = 0;
    n += (size_t)snprintf(text + n, sizeof text - n,
                          "stream id=1 dev=0\n"
                          "comm id=0x1 rank=0 nranks=1\n"
                          "alloc bytes=1G\nalloc bytes=1G\nalloc bytes=2G\n"
                          "memcpy stream=1 api=cudaMemcpy kind=h2d bytes=1G host_waits\n");
    for (int i = 0; i < 5; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "%s"
                              "launch stream=1 kernel=fwd grid=128\n"
                              "launch stream=1 kernel=bwd grid=256\n"
                              "coll stream=1 op=allreduce comm=0x1 rank=0 nranks=1 cseq=%d count=16M\n"
                              "sync sync=device\n", marker ? "marker name=step\n" : "", i);
    snprintf(text + n, sizeof text - n, "free bytes=1G\nfree bytes=1G\nfree bytes=2G\n");
    return text;
}

static const struct dur durs[] = {
    { "fwd", 3 * MS, UINT64_MAX }, { "bwd", 5 * MS, UINT64_MAX }, { "ncclAllReduce", 2 * MS, UINT64_MAX },
    { "cudaMemcpy", 7 * MS, UINT64_MAX }, { "nvtxMarkA", 0, 0 }, { NULL, 0, 0 },
};

static void check(int marker)
{
    const char *ranks[] = { loop(marker) };
    struct sim_job *j = replay(marker ? "marker" : "auto", ranks, 1, durs, MS / 10, marker ? "step" : NULL);
    if (!j)
        return;
    int n;
    const double *t = sim_iteration_times(j, &n);
    EXPECT(n == 5, "%s: %d iterations found, expected 5", marker ? "marker" : "auto", n);
    for (int k = 0; k < n && k < 4; k++)
        EXPECT_NEAR(t[k], 0.0101, 1e-12, "iteration time");
    if (n == 5)
        EXPECT_NEAR(t[4], marker ? 0.0104 : 0.0101, 1e-12, "last iteration");
    struct sim_summary s;
    sim_summarize(j, &s);
    EXPECT_NEAR(s.iteration_s, 0.0101, 1e-12, "steady iteration time");
    /* per steady iteration: compute 8 ms, all-reduce 2 ms (not overlapped),
     * idle 0.1 ms (from the sync's return to the next fwd); with the marker
     * the window also holds the tear-down: (4 x 0.1 + 0.3) / 4 ms idle */
    EXPECT_NEAR(s.compute_s, 0.008, 1e-12, "compute per iteration");
    EXPECT_NEAR(s.comm_s, 0.002, 1e-12, "communication per iteration");
    EXPECT_NEAR(s.exposed_comm_s, 0.002, 1e-12, "exposed communication per iteration");
    EXPECT_NEAR(s.idle_s, marker ? 0.000175 : 0.0001, 1e-12, "idle per iteration");
    EXPECT(s.peak_memory_bytes == 4ull << 30, "peak memory %llu", (unsigned long long)s.peak_memory_bytes);
    sim_free(j);
}

int main(void)
{
    check(0);
    check(1);
    /* a marker that names nothing is an error, not a silent single iteration */
    const char *ranks[] = { loop(0) };
    const char *job = make_job("nomarker", ranks, 1);
    struct durations d = { durs, MS / 10 };
    struct sim_config cfg = { .estimate = fixed_estimate, .estimate_ctx = &d, .iteration_marker = "no_such_op" };
    struct sim_job *j = NULL;
    EXPECT(job && sim_load(job, &cfg, &j) == 0, "load");
    EXPECT(j && sim_run(j) < 0 && strstr(maya_last_error(), "\"no_such_op\" matches no op"),
           "unknown marker: %s", maya_last_error());
    sim_free(j);
    return finish("iterations");
}

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
 * iterations of 10.1 ms; with the marker the last one does not hold the
 * tear-down (3 frees) after it: its ops begin as the one before's, which
 * it is cut to.
 *
 * Then what real programs do: upload a table of a different size each
 * step (llm.c), autotune before the loop (torch.compile: more repeated
 * kernels than the loop has ops), mark steps with NVTX ranges numbered per
 * step ("Train step 3", found by a glob), name a kernel by its short name,
 * stop in the middle of the last step (left out of the steady state); and
 * the breakdown adds up to the iteration it describes; send/recv priced
 * differently at every call (a profile's measured durations) do not hide
 * the loop.
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
        EXPECT_NEAR(t[4], 0.0101, 1e-12, "last iteration");
    struct sim_summary s;
    sim_summarize(j, &s);
    EXPECT_NEAR(s.iteration_s, 0.0101, 1e-12, "steady iteration time");
    /* per steady iteration: compute 8 ms, all-reduce 2 ms (not overlapped),
     * idle 0.1 ms (from the sync's return to the next fwd) */
    EXPECT_NEAR(s.compute_s, 0.008, 1e-12, "compute per iteration");
    EXPECT_NEAR(s.comm_s, 0.002, 1e-12, "communication per iteration");
    EXPECT_NEAR(s.exposed_comm_s, 0.002, 1e-12, "exposed communication per iteration");
    EXPECT_NEAR(s.idle_s, 0.0001, 1e-12, "idle per iteration");
    EXPECT(s.steady_iterations == 4, "%d steady iterations, expected 4 (2..5)", s.steady_iterations);
    EXPECT_NEAR(s.breakdown_iteration_s, 0.0101, 1e-12, "the breakdown's iteration");
    EXPECT(s.peak_memory_bytes == 4ull << 30, "peak memory %llu", (unsigned long long)s.peak_memory_bytes);
    sim_free(j);
}

/* A loop of STEPS steps after a set-up, each: an upload (STEP_BYTES),
 * fwd, bwd, an all-reduce, a device sync; with extras before or inside. */
struct loop_opts {
    int steps;
    int vary;          /* the upload grows by 4 KiB a step */
    int autotune;      /* kernels benchmarked before the loop: N x 25 x (memset, bench kernel) */
    int nvtx;          /* each step an NVTX range "Train step N" with a nested "backward" */
    int cut;           /* the last step stops after fwd (a trace that ended early) */
    int eval;          /* after the loop, an evaluation's upload and forward */
    const char *fwd;   /* the fwd kernel's name */
};

static char big[1 << 20];

static const char *real_loop(const struct loop_opts *o)
{
    size_t n = 0;
#define ADD(...) (n += (size_t)snprintf(big + n, sizeof big - n, __VA_ARGS__))
    ADD("stream id=1 dev=0\ncomm id=0x1 rank=0 nranks=1\nalloc bytes=1G\n");
    for (int c = 0; c < o->autotune; c++)
        for (int r = 0; r < 25; r++)
            ADD("memset stream=1 bytes=256M async\nlaunch stream=1 kernel=bench_%d grid=64\n", c);
    for (int i = 0; i < o->steps; i++) {
        int last = i == o->steps - 1;
        if (o->nvtx)
            ADD("marker name=\"Train step %d\" kind=push\n", i + 1);
        ADD("memcpy stream=1 api=cudaMemcpyAsync kind=h2d bytes=%d async\n", 1 << 20 | (o->vary ? i * 4096 : 0));
        ADD("launch stream=1 kernel=\"%s\" grid=128\n", o->fwd ? o->fwd : "fwd");
        if (last && o->cut)
            break;
        if (o->nvtx)
            ADD("marker name=backward kind=push\n");
        ADD("launch stream=1 kernel=bwd grid=256\n");
        if (o->nvtx)
            ADD("marker name=backward kind=pop\n");
        ADD("coll stream=1 op=allreduce comm=0x1 rank=0 nranks=1 cseq=%d count=16M\nsync sync=device\n", i);
        if (o->nvtx)
            ADD("marker name=\"Train step %d\" kind=pop\n", i + 1);
    }
    if (o->eval)
        ADD("memcpy stream=1 api=cudaMemcpyAsync kind=h2d bytes=1M async\n"
            "launch stream=1 kernel=\"%s\" grid=128\nsync sync=device\n", o->fwd ? o->fwd : "fwd");
    if (!o->cut)
        ADD("free bytes=1G\n");
#undef ADD
    return big;
}

static const struct dur real_durs[] = {
    { "fwd", 3 * MS, UINT64_MAX }, { "void ns::fwd_kernel<float, 4>(float*, int)", 3 * MS, UINT64_MAX },
    { "bwd", 5 * MS, UINT64_MAX }, { "ncclAllReduce", 2 * MS, UINT64_MAX },
    { "cudaMemcpyAsync", MS, UINT64_MAX }, { "cudaMemsetAsync", MS / 10, UINT64_MAX },
    { "nvtxRangePushA", 0, 0 }, { "nvtxRangePop", 0, 0 }, { NULL, 0, 0 },
};

static void check_real(const char *what, const struct loop_opts *o, const char *marker, int want, int want_steady)
{
    const char *ranks[] = { real_loop(o) };
    struct sim_job *j = replay(what, ranks, 1, real_durs, MS / 10, marker);
    if (!j)
        return;
    int n;
    sim_iteration_times(j, &n);
    EXPECT(n == want, "%s: %d iterations found, expected %d", what, n, want);
    struct sim_summary s;
    sim_summarize(j, &s);
    EXPECT(s.steady_iterations == want_steady, "%s: %d steady iterations, expected %d", what, s.steady_iterations,
           want_steady);
    /* upload 1 ms, fwd 3, bwd 5, all-reduce 2, on one stream: 11.1 ms a step
     * with the host's 0.1 ms after the sync */
    EXPECT_NEAR(s.iteration_s, 0.0111, 2e-4, what);
    double sum = s.compute_s + s.exposed_comm_s + s.exposed_copy_s + s.idle_s;
    EXPECT_NEAR(sum, s.breakdown_iteration_s, 1e-9, "the breakdown adds up to its iteration");
    EXPECT_NEAR(s.compute_s, 0.008, 1e-9, "compute per step");
    EXPECT_NEAR(s.exposed_copy_s, 0.001, 1e-9, "the upload, exposed");
    if (o->autotune)
        EXPECT(s.warmup_ops >= (uint64_t)o->autotune * 50, "%s: %llu ops of warm-up", what,
               (unsigned long long)s.warmup_ops);
    if (o->eval) /* the steps begin with their uploads: the set-up's allocation before them */
        EXPECT(s.warmup_ops == 1, "%s: %llu ops of warm-up, expected 1", what, (unsigned long long)s.warmup_ops);
    sim_free(j);
}

/* What torch.compile does before training, as torchtitan's trace shows it:
 * Inductor autotunes a kernel template by benchmarking CHOICES candidates,
 * each loaded (cuModuleLoad), launched REPS times under the template's one
 * name between two recorded events after a cache-clearing memset, then
 * timed (cudaEventElapsedTime per launch); an eager first step (compiled
 * graphs running for the first time: other kernels); then STEPS steps of
 * zero_grad's memsets, the batch's upload, 20 kernels of forward and
 * backward, the optimizer's, and a host read of the gradient norm that
 * waits. Between the step's ops the host makes a few cudaGetDevice calls,
 * one to three (a framework's caches decide: torchtitan's steps differ so).
 * The benchmark loop holds far more ops than the training loop, but one
 * kind of kernel: the steps are the iterations, all of them whole, and the
 * autotuning is warm-up, whose emulation took the 2.5 s of the trace's clock
 * before the first step (the host's time, not predicted time). */
static void check_autotune_steps(void)
{
    enum { CHOICES = 12, REPS = 100, STEPS = 5 };
    size_t n = 0;
#define ADD(...) (n += (size_t)snprintf(big + n, sizeof big - n, __VA_ARGS__))
    ADD("stream id=1 dev=0\nalloc bytes=1G\n");
    for (int c = 0; c < CHOICES; c++) {
        ADD("call api=cuModuleLoad\ncall api=cuModuleGetFunction\n");
        for (int k = 0; k < REPS; k++)
            ADD("memset stream=1 bytes=256M async\nevent_record stream=1 event=%d version=1\n"
                "launch stream=1 kernel=triton_flex_attention_backward grid=64\n"
                "event_record stream=1 event=%d version=1\n", 2 * k + 1, 2 * k + 2);
        ADD("sync sync=device\n");
        for (int k = 0; k < REPS; k++)
            ADD("call api=cudaEventQuery\ncall api=cudaEventElapsedTime\n");
    }
    for (int e = 0; e < 6; e++)
        ADD("launch stream=1 kernel=eager_%d grid=32\n", e);
    ADD("memcpy stream=1 api=cudaMemcpyAsync kind=d2h bytes=4 host_waits\n");
    for (int i = 0; i < STEPS; i++) {
        ADD("memset stream=1 bytes=1M async%s\nmemset stream=1 bytes=1M async\n", i ? "" : " t=2500ms");
        ADD("memcpy stream=1 api=cudaMemcpyAsync kind=h2d bytes=64K async\n");
        for (int k = 0; k < 20; k++) {
            ADD("launch stream=1 kernel=%s_%d grid=128\n", k < 10 ? "fwd" : "bwd", k % 10);
            for (int g = 0; g < 1 + (i * 7 + k) % 3 * (k % 4 == 0); g++)
                ADD("call api=cudaGetDevice\n");
        }
        ADD("launch stream=1 kernel=adamw grid=64\n"
            "memcpy stream=1 api=cudaMemcpyAsync kind=d2h bytes=4 host_waits\n");
    }
    ADD("sync sync=device\nfree bytes=1G\n");
#undef ADD
    static const struct dur d[] = {
        { "cudaLaunchKernel", MS, UINT64_MAX }, { "cudaMemsetAsync", MS / 10, UINT64_MAX },
        { "cudaMemcpyAsync", MS / 10, UINT64_MAX }, { NULL, 0, 0 },
    };
    const char *ranks[] = { big };
    struct sim_job *j = replay("autotuning, then steps", ranks, 1, d, 0, NULL);
    if (!j)
        return;
    int k;
    sim_iteration_times(j, &k);
    EXPECT(k == STEPS, "autotuning, then steps: %d iterations found, expected the %d steps", k, STEPS);
    struct sim_summary s;
    sim_summarize(j, &s);
    EXPECT(s.steady_iterations == STEPS - 1, "autotuning, then steps: %d steady iterations, expected %d",
           s.steady_iterations, STEPS - 1);
    /* a step on one stream: 2 memsets, the upload and the gradient norm's
     * read (0.1 ms each), 21 kernels (1 ms each) */
    EXPECT_NEAR(s.iteration_s, 0.0214, 1e-9, "autotuning, then steps: the step");
    /* every op before the first step's is warm-up: the benchmarks' 4 a
     * launch and their sync, the eager step's 7 */
    EXPECT(s.warmup_ops >= (uint64_t)CHOICES * (REPS * 4 + 1) + 7, "autotuning, then steps: %llu ops of warm-up",
           (unsigned long long)s.warmup_ops);
    EXPECT_NEAR(s.warmup_emulation_s, 2.5, 1e-9, "autotuning, then steps: the warm-up's emulation time");
    sim_free(j);
}

/* Steps of micro-batches where no op occurs once per step: each step runs
 * 4 x (upload, fwd, bwd), then the optimizer's kernel for 2 parameter
 * tensors, with no sync. The step is the period, not the micro-batch
 * (which repeats 4 times in a row and then breaks). */
static void check_micro(int steps)
{
    size_t n = 0;
#define ADD(...) (n += (size_t)snprintf(big + n, sizeof big - n, __VA_ARGS__))
    ADD("stream id=1 dev=0\nalloc bytes=1G\n");
    for (int i = 0; i < steps; i++) {
        for (int m = 0; m < 4; m++)
            ADD("memcpy stream=1 api=cudaMemcpyAsync kind=h2d bytes=1M async\n"
                "launch stream=1 kernel=fwd grid=128\nlaunch stream=1 kernel=bwd grid=256\n");
        ADD("launch stream=1 kernel=opt grid=64\nlaunch stream=1 kernel=opt grid=64\n");
    }
    ADD("sync sync=device\nfree bytes=1G\n");
#undef ADD
    static const struct dur d[] = {
        { "fwd", 3 * MS, UINT64_MAX }, { "bwd", 5 * MS, UINT64_MAX }, { "opt", MS, UINT64_MAX },
        { "cudaMemcpyAsync", MS, UINT64_MAX }, { NULL, 0, 0 },
    };
    const char *ranks[] = { big };
    char what[64];
    snprintf(what, sizeof what, "micro-batches, %d steps", steps);
    struct sim_job *j = replay(what, ranks, 1, d, MS / 10, NULL);
    if (!j)
        return;
    int k;
    sim_iteration_times(j, &k);
    EXPECT(k == steps, "%s: %d iterations found, expected %d", what, k, steps);
    struct sim_summary s;
    sim_summarize(j, &s);
    /* 4 x (1 + 3 + 5) + 2 x 1 ms of device work a step, on one stream */
    EXPECT_NEAR(s.iteration_s, 0.038, 1e-3, what);
    sim_free(j);
}

/* A pipeline's send/recv each step, priced as a profile prices it (each
 * call its own measured time, so its latency differs every step): the loop
 * is found on both ranks, its steps whole. */
static uint64_t p2p_calls;

static int varying_p2p(void *ctx, const struct est_op *op, struct est_result *out)
{
    fixed_estimate(ctx, op, out);
    if (op->api && (!strcmp(op->api, "ncclSend") || !strcmp(op->api, "ncclRecv"))) {
        out->fixed_ns = 5000 + 730 * (p2p_calls++ % 7);
        out->device_ns = 2 * out->fixed_ns;
    }
    return 0;
}

static void check_p2p(void)
{
    static char r0[8192], r1[8192];
    size_t n0 = 0, n1 = 0;
#define HEAD "header rank=%d world_size=2\nstream id=1 dev=0\ncomm id=0x5 rank=%d nranks=2\nalloc bytes=1G\n"
    n0 += (size_t)snprintf(r0 + n0, sizeof r0 - n0, HEAD, 0, 0);
    n1 += (size_t)snprintf(r1 + n1, sizeof r1 - n1, HEAD, 1, 1);
#undef HEAD
    for (int i = 0; i < 6; i++) {
        n0 += (size_t)snprintf(r0 + n0, sizeof r0 - n0,
                               "launch stream=1 kernel=fwd grid=128\n"
                               "coll stream=1 api=ncclSend op=send comm=0x5 rank=0 nranks=2 peer=1 cseq=%d count=1M\n"
                               "launch stream=1 kernel=bwd grid=256\nsync sync=device\n", i);
        n1 += (size_t)snprintf(r1 + n1, sizeof r1 - n1,
                               "coll stream=1 api=ncclRecv op=recv comm=0x5 rank=1 nranks=2 peer=0 cseq=%d count=1M\n"
                               "launch stream=1 kernel=fwd grid=128\n"
                               "launch stream=1 kernel=bwd grid=256\nsync sync=device\n", i);
    }
    const char *ranks[] = { r0, r1 };
    const char *job = make_job("p2p", ranks, 2);
    struct durations d = { durs, MS / 10 };
    struct sim_config cfg = { .estimate = varying_p2p, .estimate_ctx = &d };
    struct sim_job *j = NULL;
    EXPECT(job && sim_load(job, &cfg, &j) == 0 && sim_run(j) == 0, "p2p: load and run: %s", maya_last_error());
    if (j) {
        int n;
        sim_iteration_times(j, &n);
        EXPECT(n == 6, "p2p with varying latencies: %d iterations found, expected 6", n);
    }
    sim_free(j);
}

int main(void)
{
    check_p2p();
    check_autotune_steps();
    check_micro(3);
    check_micro(6);
    check_micro(9);
    check(0);
    check(1);
    struct loop_opts o = { .steps = 6, .vary = 1 };
    check_real("sizes vary", &o, NULL, 6, 5);
    o = (struct loop_opts){ .steps = 6, .autotune = 12 };
    check_real("autotuning first", &o, NULL, 6, 5);
    o = (struct loop_opts){ .steps = 6, .vary = 1, .nvtx = 1 };
    check_real("nvtx, automatic", &o, NULL, 6, 5);
    check_real("nvtx ranges by glob", &o, "Train step*", 6, 5);
    /* from one fwd to the next, the last iteration lacks the upload that
     * would follow it: partial, left out */
    o = (struct loop_opts){ .steps = 6, .fwd = "void ns::fwd_kernel<float, 4>(float*, int)" };
    check_real("kernel short name", &o, "fwd_kernel", 6, 4);
    check_real("kernel qualified short name", &o, "ns::fwd_kernel", 6, 4);
    check_real("kernel glob", &o, "fwd_k*", 6, 4);
    o = (struct loop_opts){ .steps = 6, .cut = 1 };
    check_real("cut short, marker", &o, "fwd", 6, 4);
    /* an evaluation's forward after the loop begins as a step does: the
     * steps stay cut after their syncs, the forward in none */
    o = (struct loop_opts){ .steps = 6, .eval = 1 };
    check_real("evaluation after the loop", &o, NULL, 6, 5);
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

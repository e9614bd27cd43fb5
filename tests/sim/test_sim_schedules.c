/* Hand-computed schedules the simulator must reproduce exactly: a 1F1B
 * pipeline, a straggler delaying an all-reduce, NIC sharing between nodes,
 * legacy/blocking/non-blocking streams, copy engines, host synchronisation.
 * Each case states its arithmetic next to its expectations.
 */
#include "sim/simtest.h"

/* ---- 2-stage pipeline, 4 micro-batches, 1F1B (Megatron's schedule) ----
 * F = 2 ms, B = 4 ms per micro-batch and stage; transfers take no time;
 * hosts issue everything at once (no host cost). Send/recv pairs that
 * Megatron groups (send_forward_recv_backward, send_backward_recv_forward)
 * are NCCL groups here too. Everything of a rank runs on one stream.
 *
 *   stage 0: F1 0-2 | F2 2-4 | waits 4-8 for g1 | B1 8-12 | F3 12-14 | B2 14-18
 *            | F4 18-20 | B3 20-24 | waits 24-26 for g4 | B4 26-30
 *   stage 1: waits 0-2 for a1 | F1 2-4 | B1 4-8 | F2 8-10 | B2 10-14 | F3 14-16
 *            | B3 16-20 | F4 20-22 | B4 22-26
 * The iteration takes (m + p - 1)(F + B) = 5 x 6 = 30 ms; each stage is busy
 * m (F + B) = 24 ms and waits (p - 1)(F + B) = 6 ms: the bubble.
 * The trace holds one iteration, whose micro-batches repeat: a marker names
 * the iteration (found automatically, the micro-batch would be the period). */
static const char *const pipeline[] = {
    "header rank=0 world_size=2\n"
    "stream id=1 dev=0\n"
    "comm id=0x99 rank=0 nranks=2 gpu=0\n"
    "marker name=step\n"
    "launch stream=1 kernel=fwd\n"
    "coll stream=1 op=send comm=0x99 rank=0 nranks=2 peer=1 cseq=0 count=1M\n"
    "launch stream=1 kernel=fwd\n"
    "coll stream=1 op=send comm=0x99 rank=0 nranks=2 peer=1 cseq=1 count=1M group=1\n"
    "coll stream=1 op=recv comm=0x99 rank=0 nranks=2 peer=1 cseq=0 count=1M group=1\n"
    "launch stream=1 kernel=bwd\n"
    "launch stream=1 kernel=fwd\n"
    "coll stream=1 op=send comm=0x99 rank=0 nranks=2 peer=1 cseq=2 count=1M group=2\n"
    "coll stream=1 op=recv comm=0x99 rank=0 nranks=2 peer=1 cseq=1 count=1M group=2\n"
    "launch stream=1 kernel=bwd\n"
    "launch stream=1 kernel=fwd\n"
    "coll stream=1 op=send comm=0x99 rank=0 nranks=2 peer=1 cseq=3 count=1M group=3\n"
    "coll stream=1 op=recv comm=0x99 rank=0 nranks=2 peer=1 cseq=2 count=1M group=3\n"
    "launch stream=1 kernel=bwd\n"
    "coll stream=1 op=recv comm=0x99 rank=0 nranks=2 peer=1 cseq=3 count=1M\n"
    "launch stream=1 kernel=bwd\n",

    "header rank=1 world_size=2 local_rank=1\n"
    "stream id=1 dev=0\n"
    "comm id=0x99 rank=1 nranks=2 gpu=1\n"
    "marker name=step\n"
    "coll stream=1 op=recv comm=0x99 rank=1 nranks=2 peer=0 cseq=0 count=1M\n"
    "launch stream=1 kernel=fwd\n"
    "launch stream=1 kernel=bwd\n"
    "coll stream=1 op=send comm=0x99 rank=1 nranks=2 peer=0 cseq=0 count=1M group=11\n"
    "coll stream=1 op=recv comm=0x99 rank=1 nranks=2 peer=0 cseq=1 count=1M group=11\n"
    "launch stream=1 kernel=fwd\n"
    "launch stream=1 kernel=bwd\n"
    "coll stream=1 op=send comm=0x99 rank=1 nranks=2 peer=0 cseq=1 count=1M group=12\n"
    "coll stream=1 op=recv comm=0x99 rank=1 nranks=2 peer=0 cseq=2 count=1M group=12\n"
    "launch stream=1 kernel=fwd\n"
    "launch stream=1 kernel=bwd\n"
    "coll stream=1 op=send comm=0x99 rank=1 nranks=2 peer=0 cseq=2 count=1M group=13\n"
    "coll stream=1 op=recv comm=0x99 rank=1 nranks=2 peer=0 cseq=3 count=1M group=13\n"
    "launch stream=1 kernel=fwd\n"
    "launch stream=1 kernel=bwd\n"
    "coll stream=1 op=send comm=0x99 rank=1 nranks=2 peer=0 cseq=3 count=1M\n",
};

static const struct dur pipeline_durs[] = {
    { "fwd", 2 * MS, 0 }, { "bwd", 4 * MS, 0 }, { NULL, 0, 0 },
};

static void test_pipeline(void)
{
    struct sim_job *j = replay("pipeline", pipeline, 2, pipeline_durs, 0, "step");
    if (!j)
        return;
    /* stage 0: the marker is op 0, F1 op 1, B1 op 6, B4 op 16 */
    EXPECT_U64(op(j, 0, 1).dev_end, 2 * MS, "stage 0 F1 end");
    EXPECT_U64(op(j, 0, 6).dev_start, 8 * MS, "stage 0 B1 start (after g1)");
    EXPECT_U64(op(j, 0, 16).dev_start, 26 * MS, "stage 0 B4 start (after g4)");
    EXPECT_U64(op(j, 0, 16).dev_end, 30 * MS, "stage 0 B4 end");
    /* stage 1: F1 op 2, B4 op 15 */
    EXPECT_U64(op(j, 1, 2).dev_start, 2 * MS, "stage 1 F1 start (after a1)");
    EXPECT_U64(op(j, 1, 15).dev_end, 26 * MS, "stage 1 B4 end");
    struct sim_summary s;
    sim_summarize(j, &s);
    EXPECT_NEAR(s.iteration_s, 0.030, 1e-12, "1F1B iteration: (m + p - 1)(F + B)");
    EXPECT_NEAR(s.compute_s, 0.024, 1e-12, "busy per stage: m (F + B)");
    /* the bubble: waiting inside NCCL (exposed communication) or idle */
    EXPECT_NEAR(s.exposed_comm_s + s.idle_s, 0.006, 1e-12, "bubble per stage: (p - 1)(F + B)");
    sim_free(j);
}

/* Without the groups, stage 0's send of a2 waits for stage 1's recv of a2,
 * which comes after stage 1's send of g1, which waits for stage 0's recv of
 * g1, queued behind the send of a2: the job hangs on GPUs, and must be
 * reported as a deadlock here. */
static void test_pipeline_deadlock(void)
{
    char *r0 = strdup(pipeline[0]), *r1 = strdup(pipeline[1]);
    for (char *p = r0; (p = strstr(p, " group=")); )
        memset(p, ' ', 8);
    for (char *p = r1; (p = strstr(p, " group=")); )
        memset(p, ' ', 9);
    const char *const ranks[] = { r0, r1 };
    const char *job = make_job("deadlock", ranks, 2);
    EXPECT(job != NULL, "the ungrouped pipeline collates (its pairs match)");
    if (job) {
        struct durations d = { pipeline_durs, 0 };
        struct sim_config cfg = { .estimate = fixed_estimate, .estimate_ctx = &d };
        struct sim_job *j;
        EXPECT(sim_load(job, &cfg, &j) == 0, "load");
        EXPECT(sim_run(j) < 0, "an ungrouped 1F1B exchange deadlocks");
        EXPECT(strstr(maya_last_error(), "deadlocks") && strstr(maya_last_error(), "rank 0"),
               "the message names the deadlock: %s", maya_last_error());
        sim_free(j);
    }
    free(r0);
    free(r1);
}

/* The loader tells the estimator which ops of an NCCL group follow the
 * group's first on their stream (launched with it at ncclGroupEnd, so their
 * host cost is not a launch's): here such an op costs 7 ns of host time,
 * every other call 1 us. Rank 1's op 4 (send, group 11) leads, op 5 (recv,
 * group 11) follows; op 1 (a recv outside any group) leads. */
static int group_estimate(void *ctx, const struct est_op *op, struct est_result *out)
{
    fixed_estimate(ctx, op, out);
    if (op->group_follower)
        out->host_ns = 7;
    return 0;
}

static void test_group_host(void)
{
    const char *job = make_job("group_host", pipeline, 2);
    EXPECT(job != NULL, "the pipeline collates");
    if (!job)
        return;
    struct durations d = { pipeline_durs, 1000 };
    struct sim_config cfg = { .estimate = group_estimate, .estimate_ctx = &d, .iteration_marker = "step" };
    struct sim_job *j;
    EXPECT(sim_load(job, &cfg, &j) == 0, "load");
    if (!j)
        return;
    EXPECT(sim_run(j) == 0, "run");
    struct sim_op_times t1 = op(j, 1, 1), t4 = op(j, 1, 4), t5 = op(j, 1, 5);
    EXPECT_U64(t4.host_end - t4.host_start, 1000, "the group's first op pays a launch");
    EXPECT_U64(t5.host_end - t5.host_start, 7, "the group's second op on the stream is enqueued");
    EXPECT_U64(t1.host_end - t1.host_start, 1000, "a recv outside a group pays a launch");
    sim_free(j);
}

/* ---- a straggler ----
 * Four ranks: compute 10 ms, all-reduce 5 ms, device sync; 1 ms of host
 * cost per call. The communicator is created first (a barrier for all four,
 * free of host cost); then rank 2's host spends 20 ms before its compute.
 *   ranks 0 1 3: compute 1-11; all-reduce enqueued at 2, reaches the device at 11
 *   rank 2:      compute 21-31; all-reduce reaches the device at 31
 * The all-reduce starts when the last member arrives (31) and ends at 36 on
 * every rank; the others wait 20 ms inside it. */
static char straggler_text[4][512];

static void test_straggler(void)
{
    const char *ranks[4];
    for (int r = 0; r < 4; r++) {
        snprintf(straggler_text[r], sizeof straggler_text[r],
                 "header rank=%d world_size=4 local_rank=%d\n"
                 "stream id=1 dev=0\n"
                 "comm id=0x44 rank=%d nranks=4 gpu=%d\n"
                 "call api=ncclCommInitRank\n"
                 "launch t=%s stream=1 kernel=compute\n"
                 "coll stream=1 op=allreduce comm=0x44 rank=%d nranks=4 cseq=0 count=1M\n"
                 "sync sync=device\n", r, r, r, r, r == 2 ? "20ms" : "0", r);
        ranks[r] = straggler_text[r];
    }
    static const struct dur d[] = { { "compute", 10 * MS, UINT64_MAX }, { "ncclAllReduce", 5 * MS, UINT64_MAX },
                                    { "ncclCommInitRank", 0, 0 }, { NULL, 0, 0 } };
    struct sim_job *j = replay("straggler", ranks, 4, d, 1 * MS, NULL);
    if (!j)
        return;
    for (int r = 0; r < 4; r++) {
        EXPECT_U64(op(j, r, 2).dev_end, 36 * MS, "all-reduce end on every rank");
        EXPECT_U64(op(j, r, 2).dev_start, (r == 2 ? 31 : 11) * MS, "all-reduce arrival");
    }
    EXPECT_U64(op(j, 2, 1).dev_start, 21 * MS, "the straggler's compute starts late");
    struct sim_summary s;
    sim_summarize(j, &s);
    EXPECT_NEAR(s.makespan_s, 0.036, 1e-12, "job time");
    sim_free(j);
}

/* ---- creating a communicator is collective ----
 * Rank 1 starts 50 ms late (its program's start-up). Both create the
 * communicator (the call returns on both when the last one arrives: 50),
 * then compute 10 ms and all-reduce 5 ms: kernels 51-61 on both, the
 * all-reduce 61-66 on both: the late start is absorbed by the creation, not
 * by the first collective. (Host cost 1 ms per call, none for the init.) */
static void test_comm_barrier(void)
{
    char text[2][512];
    const char *ranks[2];
    for (int r = 0; r < 2; r++) {
        snprintf(text[r], sizeof text[r],
                 "header rank=%d world_size=2 local_rank=%d\n"
                 "stream id=1 dev=0\n"
                 "comm id=0x22 rank=%d nranks=2 gpu=%d\n"
                 "call t=%s api=ncclCommInitRank\n"
                 "launch stream=1 kernel=compute\n"
                 "coll stream=1 op=allreduce comm=0x22 rank=%d nranks=2 cseq=0 count=1M\n",
                 r, r, r, r, r ? "50ms" : "0", r);
        ranks[r] = text[r];
    }
    static const struct dur d[] = { { "compute", 10 * MS, UINT64_MAX }, { "ncclAllReduce", 5 * MS, UINT64_MAX },
                                    { "ncclCommInitRank", 0, 0 }, { NULL, 0, 0 } };
    struct sim_job *j = replay("barrier", ranks, 2, d, 1 * MS, NULL);
    if (!j)
        return;
    for (int r = 0; r < 2; r++) {
        EXPECT_U64(op(j, r, 0).host_end, 50 * MS, "communicator created when the last rank arrives");
        EXPECT_U64(op(j, r, 1).dev_start, 51 * MS, "compute after the creation");
        EXPECT_U64(op(j, r, 2).dev_start, 61 * MS, "all-reduce: nobody waits for a late starter");
        EXPECT_U64(op(j, r, 2).dev_end, 66 * MS, "all-reduce end");
    }
    sim_free(j);
}

/* ---- NIC sharing ----
 * Two ranks on two nodes (one GPU each); two all-reduces on different
 * communicators start together, 10 ms and 4 ms at full NIC rate. Sharing the
 * nodes' NICs, each progresses at half rate: the short one needs 8 ms; then
 * the long one has 10 - 4 = 6 ms of work left at full rate: it ends at 14.
 * On one node the same two run side by side in 10 and 4 ms. */
static void test_nic(int nodes)
{
    char text[2][1024];
    const char *ranks[2];
    for (int r = 0; r < 2; r++) {
        snprintf(text[r], sizeof text[r],
                 "header rank=%d world_size=2 local_rank=%d node=%d gpus_per_node=%d\n"
                 "stream id=1 dev=0\n"
                 "stream id=2 dev=0\n"
                 "comm id=0xa rank=%d nranks=2 gpu=%d\n"
                 "comm id=0xb rank=%d nranks=2 gpu=%d\n"
                 "coll stream=1 api=arLong op=allreduce comm=0xa rank=%d nranks=2 cseq=0 count=1M\n"
                 "coll stream=2 api=arShort op=allreduce comm=0xb rank=%d nranks=2 cseq=0 count=1M\n",
                 r, nodes == 2 ? 0 : r, nodes == 2 ? r : 0, nodes == 2 ? 1 : 2, r, r, r, r, r, r);
        ranks[r] = text[r];
    }
    static const struct dur d[] = { { "arLong", 10 * MS, 0 }, { "arShort", 4 * MS, 0 }, { NULL, 0, 0 } };
    struct sim_job *j = replay(nodes == 2 ? "nic2" : "nic1", ranks, 2, d, 0, NULL);
    if (!j)
        return;
    for (int r = 0; r < 2; r++) {
        EXPECT_U64(op(j, r, 0).dev_end, (nodes == 2 ? 14 : 10) * MS, "long all-reduce end");
        EXPECT_U64(op(j, r, 1).dev_end, (nodes == 2 ? 8 : 4) * MS, "short all-reduce end");
    }
    sim_free(j);
}

/* ---- stream semantics ----
 * k1 10 ms on a blocking stream (2); k2 5 ms on the legacy stream (1) waits
 * for it: 10-15; k3 3 ms on a non-blocking stream (3) waits for nothing: 0-3;
 * k4 2 ms on stream 2 waits for the legacy stream's k2: 15-17. No host cost. */
static const char *const streams[] = {
    "stream id=1 dev=0 legacy\n"
    "stream id=2 dev=0\n"
    "stream id=3 dev=0 non_blocking\n"
    "launch stream=2 kernel=k1\n"
    "launch stream=1 kernel=k2\n"
    "launch stream=3 kernel=k3\n"
    "launch stream=2 kernel=k4\n",
};

static void test_streams(void)
{
    static const struct dur d[] = { { "k1", 10 * MS, 0 }, { "k2", 5 * MS, 0 }, { "k3", 3 * MS, 0 },
                                    { "k4", 2 * MS, 0 }, { NULL, 0, 0 } };
    struct sim_job *j = replay("streams", streams, 1, d, 0, NULL);
    if (!j)
        return;
    EXPECT_U64(op(j, 0, 1).dev_start, 10 * MS, "legacy-stream kernel waits for the blocking stream");
    EXPECT_U64(op(j, 0, 2).dev_start, 0, "non-blocking stream waits for nothing");
    EXPECT_U64(op(j, 0, 3).dev_start, 15 * MS, "blocking stream waits for the legacy stream");
    EXPECT_U64(op(j, 0, 3).dev_end, 17 * MS, "k4 end");
    sim_free(j);
}

/* ---- event versions ----
 * One event handle recorded twice on stream 1: after k1 (10 ms) as version
 * 1 and after k2 (5 ms more) as version 2. A wait for version 1 (as a second
 * host thread may issue after the second record) lets k3 on stream 2 start
 * at 10; a wait for version 2 lets k4 on stream 3 start at 15; a wait for
 * version 0 (never recorded) waits for nothing: k5 on stream 4 starts at 0. */
static const char *const versions[] = {
    "stream id=1 dev=0 non_blocking\n"
    "stream id=2 dev=0 non_blocking\n"
    "stream id=3 dev=0 non_blocking\n"
    "stream id=4 dev=0 non_blocking\n"
    "launch stream=1 kernel=k1\n"
    "event_record stream=1 event=3 version=1\n"
    "launch stream=1 kernel=k2\n"
    "event_record stream=1 event=3 version=2\n"
    "stream_wait stream=2 event=3 version=1\n"
    "launch stream=2 kernel=k3\n"
    "stream_wait stream=3 event=3 version=2\n"
    "launch stream=3 kernel=k4\n"
    "stream_wait stream=4 event=9 version=0\n"
    "launch stream=4 kernel=k5\n",
};

static void test_event_versions(void)
{
    static const struct dur d[] = { { "k1", 10 * MS, 0 }, { "k2", 5 * MS, 0 }, { "k3", 1 * MS, 0 },
                                    { "k4", 1 * MS, 0 }, { "k5", 1 * MS, 0 }, { NULL, 0, 0 } };
    struct sim_job *j = replay("versions", versions, 1, d, 0, NULL);
    if (!j)
        return;
    EXPECT_U64(op(j, 0, 5).dev_start, 10 * MS, "wait for version 1");
    EXPECT_U64(op(j, 0, 7).dev_start, 15 * MS, "wait for version 2");
    EXPECT_U64(op(j, 0, 9).dev_start, 0, "wait for a version never recorded");
    sim_free(j);
}

/* ---- copy engines ----
 * Two host-to-device copies of 4 ms on different streams share the H2D
 * engine: 0-4 and 4-8; a device-to-host copy on a third stream uses the
 * other engine: 0-4. A device-to-device copy runs on its stream: 0-4. */
static const char *const copies[] = {
    "stream id=1 dev=0 non_blocking\n"
    "stream id=2 dev=0 non_blocking\n"
    "stream id=3 dev=0 non_blocking\n"
    "stream id=4 dev=0 non_blocking\n"
    "memcpy stream=1 api=h2dA kind=h2d bytes=1G async pinned\n"
    "memcpy stream=2 api=h2dB kind=h2d bytes=1G async pinned\n"
    "memcpy stream=3 api=d2hC kind=d2h bytes=1G async pinned\n"
    "memcpy stream=4 api=d2dD kind=d2d bytes=1G async\n",
};

static void test_copies(void)
{
    static const struct dur d[] = { { "h2dA", 4 * MS, 0 }, { "h2dB", 4 * MS, 0 }, { "d2hC", 4 * MS, 0 },
                                    { "d2dD", 4 * MS, 0 }, { NULL, 0, 0 } };
    struct sim_job *j = replay("copies", copies, 1, d, 0, NULL);
    if (!j)
        return;
    EXPECT_U64(op(j, 0, 0).dev_end, 4 * MS, "first H2D");
    EXPECT_U64(op(j, 0, 1).dev_start, 4 * MS, "second H2D waits for the engine");
    EXPECT_U64(op(j, 0, 1).dev_end, 8 * MS, "second H2D end");
    EXPECT_U64(op(j, 0, 2).dev_start, 0, "D2H uses the other engine");
    EXPECT_U64(op(j, 0, 3).dev_start, 0, "D2D runs on its stream");
    sim_free(j);
}

/* ---- host synchronisation (1 ms host cost per call, no gaps) ----
 *   0 kernel A 10 ms on s1: host 0-1, runs 1-11
 *   1 cudaStreamSynchronize(s1): host 1-2, waits until 11
 *   2 a host-only call: 11-12
 *   3 cudaMemcpy D2H 2 ms (the host waits): host 12-13, copy 13-15
 *   4 a host-only call: 15-16
 *   5 kernel B 5 ms on s2: host 16-17, runs 17-22
 *   6 cudaFree (waits for the device): host 17-18, waits until 22
 *   7 kernel C 3 ms on s1: host 22-23, runs 23-26
 *   8 record event 9 on s1: host 23-24 (complete at 26)
 *   9 cudaEventSynchronize: host 24-25, waits until 26
 *  10 a host-only call: 26-27
 *  11 host function 2 ms on s2: host 27-28, runs 28-30
 *  12 cudaDeviceSynchronize: host 28-29, waits until 30
 *  13 a host-only call: 30-31 */
static const char *const syncs[] = {
    "stream id=1 dev=0 non_blocking\n"
    "stream id=2 dev=0 non_blocking\n"
    "launch stream=1 kernel=A\n"
    "sync sync=stream target=1\n"
    "call api=cudaGetLastError\n"
    "memcpy stream=1 api=cudaMemcpy kind=d2h bytes=1M host_waits\n"
    "call api=cudaGetLastError\n"
    "launch stream=2 kernel=B\n"
    "free bytes=1M device_sync\n"
    "launch stream=1 kernel=C\n"
    "event_record stream=1 event=9 version=1\n"
    "sync sync=event target=9 version=1\n"
    "call api=cudaGetLastError\n"
    "host_func stream=2 api=hostfn\n"
    "sync sync=device\n"
    "call api=cudaGetLastError\n",
};

static void test_syncs(void)
{
    static const struct dur d[] = { { "A", 10 * MS, UINT64_MAX }, { "cudaMemcpy", 2 * MS, UINT64_MAX },
                                    { "B", 5 * MS, UINT64_MAX }, { "C", 3 * MS, UINT64_MAX },
                                    { "hostfn", 2 * MS, UINT64_MAX }, { NULL, 0, 0 } };
    struct sim_job *j = replay("syncs", syncs, 1, d, 1 * MS, NULL);
    if (!j)
        return;
    EXPECT_U64(op(j, 0, 2).host_end, 12 * MS, "after cudaStreamSynchronize");
    EXPECT_U64(op(j, 0, 3).dev_start, 13 * MS, "synchronous copy start");
    EXPECT_U64(op(j, 0, 4).host_end, 16 * MS, "after the synchronous copy");
    EXPECT_U64(op(j, 0, 7).host_end, 23 * MS, "after cudaFree waited for the device");
    EXPECT_U64(op(j, 0, 10).host_end, 27 * MS, "after cudaEventSynchronize");
    EXPECT_U64(op(j, 0, 11).dev_start, 28 * MS, "host function start");
    EXPECT_U64(op(j, 0, 13).host_end, 31 * MS, "after cudaDeviceSynchronize");
    sim_free(j);
}

/* ---- estimates remembered by content follow each rank's kernels ----
 * Each rank's section numbers its kernels in the order it first launched
 * them: kernel 1 is "fast" (1 ms) on rank 0 and "slow" (5 ms) on rank 1. With
 * estimates remembered by content (sim/estimate_memo.c, keyed by each
 * definition's hash, which the loader keeps per definition), rank 1's first
 * kernel still takes 5 ms. */
static void test_memo_kernels(void)
{
    static const char *const ranks[] = {
        "header rank=0 world_size=2\nstream id=1 dev=0\n"
        "launch stream=1 kernel=fast\nlaunch stream=1 kernel=slow\n",
        "header rank=1 world_size=2 local_rank=1\nstream id=1 dev=1\n"
        "launch stream=1 kernel=slow\nlaunch stream=1 kernel=fast\n",
    };
    static const struct dur durs[] = { { "fast", 1 * MS, 0 }, { "slow", 5 * MS, 0 }, { NULL, 0, 0 } };
    const char *job = make_job("memo-kernels", ranks, 2);
    EXPECT(job, "memo-kernels: could not build the job");
    if (!job)
        return;
    struct durations d = { durs, 0 };
    struct sim_config cfg = { .estimate = fixed_estimate, .estimate_ctx = &d, .estimate_by_content = 1 };
    struct sim_job *j = NULL;
    EXPECT(sim_load(job, &cfg, &j) == 0 && sim_run(j) == 0, "memo-kernels: replay failed: %s", maya_last_error());
    if (!j)
        return;
    for (int r = 0; r < 2; r++)
        for (uint64_t i = 0; i < 2; i++) {
            struct sim_op_times t = op(j, r, i);
            uint64_t want = (r == 0) == (i == 0) ? 1 * MS : 5 * MS;
            EXPECT_U64(t.dev_end - t.dev_start, want, "memo-kernels: a kernel's time");
        }
    sim_free(j);
}

int main(void)
{
    test_pipeline();
    test_pipeline_deadlock();
    test_group_host();
    test_straggler();
    test_comm_barrier();
    test_nic(2);
    test_nic(1);
    test_streams();
    test_event_versions();
    test_copies();
    test_syncs();
    test_memo_kernels();
    return finish("schedules");
}

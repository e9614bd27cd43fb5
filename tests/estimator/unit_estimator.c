/* Unit tests of the estimator API: model-choice parsing, durations, oracle
 * matching by rank/seq/nth/name, strict oracle files, family placement.
 * Built as build/tests/unit/test_estimator; tests/run runs it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maya/common.h"
#include "maya/estimator.h"
#include "maya/hwspec.h"

#include "../unit_check.h"

static char tmpdir[] = "/tmp/maya-est-unit.XXXXXX";

static const char *write_tmp(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *fp = fopen(path, "w");
    if (!fp) {
        perror(path);
        exit(2);
    }
    fputs(text, fp);
    fclose(fp);
    return path;
}

static void test_parse(void)
{
    uint64_t ns = 0;
    CHECK(est_parse_duration("14ms", &ns) == 0 && ns == 14000000, "14ms -> %llu", (unsigned long long)ns);
    CHECK(est_parse_duration("2.5us", &ns) == 0 && ns == 2500, "2.5us -> %llu", (unsigned long long)ns);
    CHECK(est_parse_duration("1s", &ns) == 0 && ns == 1000000000ull, "1s");
    CHECK(est_parse_duration("100ns", &ns) == 0 && ns == 100, "100ns");
    CHECK(est_parse_duration("14", &ns) < 0, "a number without unit must fail");
    CHECK(est_parse_duration("-1ms", &ns) < 0, "negative must fail");
    CHECK(est_parse_duration("1msec", &ns) < 0, "unknown unit must fail");
    CHECK(est_parse_duration("", &ns) < 0, "empty must fail");

    enum est_model m[EST_NFAMILIES] = { 0 };
    CHECK(est_models_parse("learned", m) == 0 && m[EST_GEMM] == EST_LEARNED && m[EST_HOST] == EST_LEARNED,
          "learned for all");
    CHECK(est_models_parse("analytical,gemm=learned,allreduce=oracle", m) == 0 && m[EST_GEMM] == EST_LEARNED &&
          m[EST_ALLREDUCE] == EST_ORACLE && m[EST_CONV] == EST_ANALYTICAL, "mixed spec");
    CHECK(est_models_parse("gemm=fancy", m) < 0 && strstr(maya_last_error(), "analytical, learned or oracle"),
          "bad model: %s", maya_last_error());
    CHECK(est_models_parse("gemmm=learned", m) < 0 && strstr(maya_last_error(), "batched_gemm"),
          "bad family: %s", maya_last_error());
    CHECK(m[EST_GEMM] == EST_LEARNED, "a failed parse leaves the choice alone");
    CHECK(est_family_parse("sendrecv") == EST_SENDRECV && est_family_parse("nope") == -1, "family parse");
    CHECK(!strcmp(est_family_name(EST_REDUCESCATTER), "reducescatter"), "family name");
}

/* A call record of a given type with a sequence number. */
static struct maya_rec_gemm gemm_rec(uint64_t seq, int64_t m)
{
    struct maya_rec_gemm g;
    memset(&g, 0, sizeof g);
    g.h = (struct maya_rec_hdr){ MAYA_REC_GEMM, 0, sizeof g };
    g.call.seq = seq;
    g.m = g.n = g.k = m;
    g.batch = 1;
    g.atype = g.btype = g.ctype = g.dtype = 0;
    g.compute_type = 68;
    return g;
}

/* An estimator with every family in oracle mode on the rules of path;
 * NULL (the failure counted) if it cannot be made. */
static struct estimator *oracle_estimator(const struct maya_gpu_spec *gpu, const char *path)
{
    struct est_config cfg = { .gpu = gpu, .oracle_path = path };
    for (int f = 0; f < EST_NFAMILIES; f++)
        cfg.model[f] = EST_ORACLE;
    struct estimator *e = NULL;
    CHECK(est_create(&cfg, &e) == 0, "est_create: %s", maya_last_error());
    return e;
}

static void test_oracle(const struct maya_gpu_spec *gpu)
{
    const char *path = write_tmp("ref.txt",
        "# the DESIGN.md reference case\n"
        "name=cublasSgemm_v2 nth=1 device=14ms\n"
        "name=cublasSgemm_v2 nth=2 device=10ms   # second one\n"
        "name=ncclAllReduce device=20ms host=7us\n"
        "rank=1 seq=5 device=3ms\n"
        "name=\"void k<float>(int)\" device=42us\n"
        "name=* host=5us\n");
    struct est_config cfg = { .gpu = gpu, .oracle_path = path };
    for (int f = 0; f < EST_NFAMILIES; f++)
        cfg.model[f] = EST_ORACLE;
    struct estimator *e = oracle_estimator(gpu, path);
    if (!e)
        return;
    struct est_result r;
    struct maya_rec_gemm g1 = gemm_rec(3, 64), g2 = gemm_rec(9, 64);
    struct est_op op = { .rec = &g1.h, .api = "cublasSgemm_v2", .rank = 0 };
    CHECK(est_estimate(e, &op, &r) == 0 && r.device_ns == 14000000 && r.model == EST_ORACLE &&
          r.host_ns == 5000 && r.family == EST_GEMM, "first Sgemm: %llu ns host %llu",
          (unsigned long long)r.device_ns, (unsigned long long)r.host_ns);
    CHECK(est_estimate(e, &op, &r) == 0 && r.device_ns == 14000000, "asking twice keeps nth");
    op.rec = &g2.h;
    CHECK(est_estimate(e, &op, &r) == 0 && r.device_ns == 10000000, "second Sgemm: %llu",
          (unsigned long long)r.device_ns);
    /* rank 1 counts its own Sgemms; seq 5 there has a rank/seq rule */
    struct maya_rec_gemm g3 = gemm_rec(5, 64);
    op.rec = &g3.h;
    op.rank = 1;
    CHECK(est_estimate(e, &op, &r) == 0 && r.device_ns == 3000000, "rank 1 seq 5: %llu",
          (unsigned long long)r.device_ns);
    /* a third Sgemm on rank 0 matches no device rule: analytical */
    struct maya_rec_gemm g4 = gemm_rec(20, 64);
    op.rec = &g4.h;
    op.rank = 0;
    CHECK(est_estimate(e, &op, &r) == 0 && r.model == EST_ANALYTICAL && r.device_ns > 0 &&
          r.device_ns < 1000000 && r.host_ns == 5000, "unmatched falls back: %llu %s",
          (unsigned long long)r.device_ns, est_model_name(r.model));

    struct maya_rec_coll c;
    memset(&c, 0, sizeof c);
    c.h = (struct maya_rec_hdr){ MAYA_REC_COLL, 0, sizeof c };
    c.op = MAYA_COLL_ALLREDUCE;
    c.bytes = 1 << 20;
    c.nranks = 8;
    struct est_op cop = { .rec = &c.h, .api = "ncclAllReduce", .coll_nodes = 1, .coll_ranks_per_node = 8 };
    CHECK(est_estimate(e, &cop, &r) == 0 && r.device_ns == 20000000 && r.host_ns == 7000 &&
          r.family == EST_ALLREDUCE, "allreduce by name");

    struct maya_rec_call call;
    memset(&call, 0, sizeof call);
    call.h = (struct maya_rec_hdr){ MAYA_REC_CALL, 0, sizeof call };
    struct est_op hop = { .rec = &call.h, .api = "cudaGetDevice" };
    CHECK(est_estimate(e, &hop, &r) == 0 && r.device_ns == 0 && r.host_ns == 5000 && r.family == EST_HOST &&
          r.model == EST_ORACLE, "host call by pattern");

    struct {
        struct maya_rec_launch l;
        uint64_t p;
    } launch;
    memset(&launch, 0, sizeof launch);
    launch.l.h = (struct maya_rec_hdr){ MAYA_REC_LAUNCH, 0, sizeof launch };
    launch.l.grid[0] = launch.l.grid[1] = launch.l.grid[2] = 1;
    launch.l.block[0] = launch.l.block[1] = launch.l.block[2] = 1;
    struct est_op kop = { .rec = &launch.l.h, .api = "cudaLaunchKernel", .kernel_name = "void k<float>(int)" };
    CHECK(est_estimate(e, &kop, &r) == 0 && r.device_ns == 42000 && r.family == EST_KERNEL,
          "kernel by quoted name: %llu", (unsigned long long)r.device_ns);
    est_destroy(e);

    /* unmatched=error */
    cfg.oracle_path = write_tmp("strict.txt", "unmatched=error\nname=cublasSgemm_v2 device=1ms host=1us\n");
    CHECK(est_create(&cfg, &e) == 0, "strict create: %s", maya_last_error());
    if (e) {
        op.rec = &g1.h;
        CHECK(est_estimate(e, &op, &r) == 0 && r.device_ns == 1000000, "strict match");
        CHECK(est_estimate(e, &cop, &r) < 0 && strstr(maya_last_error(), "unmatched=error") &&
              strstr(maya_last_error(), "ncclAllReduce"), "strict miss: %s", maya_last_error());
        est_destroy(e);
    }

    /* parse errors name file:line and what was expected */
    static const struct { const char *text, *want; } bad[] = {
        { "name=x device=14\n", "bad.txt:1: device duration is \"14\"; expected a number >= 0 with a unit" },
        { "\n# c\nname=x dev=1ms\n", "bad.txt:3: unknown key \"dev\"" },
        { "seq=4 device=1ms\n", "bad.txt:1: seq counts calls within one process: give rank= too" },
        { "name=x\n", "bad.txt:1: a rule needs a duration" },
        { "device=1ms\n", "bad.txt:1: a rule needs something to match" },
        { "nth=2 device=1ms rank=0\n", "bad.txt:1: nth counts ops of one name" },
        { "name=x device=1ms device=2ms\n", "bad.txt:1: device is given twice" },
        { "name=\"x device=1ms\n", "bad.txt:1: unterminated" },
        { "rank=-1 name=x device=1ms\n", "bad.txt:1: rank is \"-1\"" },
        { "unmatched=maybe\n", "bad.txt:1: unmatched is \"maybe\"; expected error or analytical" },
        { "name=x host=1 ms\n", "bad.txt:1: host duration is \"1\"" },
        { "name x device=1ms\n", "bad.txt:1: expected key=value, found \"name\"" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cfg.oracle_path = write_tmp("bad.txt", bad[i].text);
        e = NULL;
        int rc = est_create(&cfg, &e);
        CHECK(rc < 0 && strstr(maya_last_error(), bad[i].want), "bad file %zu: got \"%s\", want \"%s\"", i,
              rc < 0 ? maya_last_error() : "(accepted)", bad[i].want);
        est_destroy(e);
    }
    cfg.oracle_path = NULL;
    CHECK(est_create(&cfg, &e) < 0 && strstr(maya_last_error(), "oracle mode needs"), "oracle without file");
}

/* Every record type lands in its family with a finite, positive estimate. */
static void test_families(const struct maya_gpu_spec *gpu)
{
    struct est_config cfg = { .gpu = gpu };
    struct estimator *e;
    CHECK(est_create(&cfg, &e) == 0, "analytical create");
    struct est_result r;
    struct maya_rec_gemm g = gemm_rec(0, 1024);
    g.batch = 8;
    struct est_op op = { .rec = &g.h, .api = "cublasSgemmStridedBatched" };
    CHECK(est_estimate(e, &op, &r) == 0 && r.family == EST_BATCHED_GEMM && r.device_ns > 0, "batched");
    CHECK(est_op_flops(&op) == 2.0 * 1024 * 1024 * 1024 * 8, "flops of a batched GEMM: %g", est_op_flops(&op));
    struct maya_rec_memset ms;
    memset(&ms, 0, sizeof ms);
    ms.h = (struct maya_rec_hdr){ MAYA_REC_MEMSET, 0, sizeof ms };
    ms.bytes = 1 << 30;
    op = (struct est_op){ .rec = &ms.h, .api = "cudaMemsetAsync" };
    CHECK(est_estimate(e, &op, &r) == 0 && r.family == EST_MEMSET && r.device_ns > 100000, "memset");
    CHECK(est_op_flops(&op) == 0, "a memset has no FLOPs");
    struct maya_rec_coll c;
    memset(&c, 0, sizeof c);
    c.h = (struct maya_rec_hdr){ MAYA_REC_COLL, 0, sizeof c };
    static const struct { int op; enum est_family f; } colls[] = {
        { MAYA_COLL_ALLREDUCE, EST_ALLREDUCE }, { MAYA_COLL_ALLGATHER, EST_ALLGATHER },
        { MAYA_COLL_REDUCESCATTER, EST_REDUCESCATTER }, { MAYA_COLL_BROADCAST, EST_BROADCAST },
        { MAYA_COLL_REDUCE, EST_BROADCAST }, { MAYA_COLL_ALLTOALL, EST_ALLTOALL },
        { MAYA_COLL_SEND, EST_SENDRECV }, { MAYA_COLL_RECV, EST_SENDRECV },
    };
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        c.op = (uint32_t)colls[i].op;
        c.bytes = 64 << 20;
        c.nranks = 16;
        op = (struct est_op){ .rec = &c.h, .api = "nccl", .coll_nodes = 2, .coll_ranks_per_node = 8 };
        CHECK(est_estimate(e, &op, &r) == 0 && r.family == colls[i].f && r.device_ns > 1000 &&
              r.host_ns > 0, "coll %d", colls[i].op);
        /* inside a group, an op after the first on its stream is enqueued and
           launched with that one: its host cost is not a launch's; the device
           time is the op's either way */
        uint64_t first_host = r.host_ns, first_dev = r.device_ns;
        op.group_follower = 1;
        CHECK(est_estimate(e, &op, &r) == 0 && r.host_ns > 0 && r.host_ns * 4 < first_host &&
              r.device_ns == first_dev, "coll %d in a group: host %llu ns, first %llu ns", colls[i].op,
              (unsigned long long)r.host_ns, (unsigned long long)first_host);
    }
    /* more nodes never make an all-reduce faster at a fixed per-node share */
    c.op = MAYA_COLL_ALLREDUCE;
    c.nranks = 8;
    op = (struct est_op){ .rec = &c.h, .coll_nodes = 1, .coll_ranks_per_node = 8 };
    est_estimate(e, &op, &r);
    uint64_t one = r.device_ns;
    c.nranks = 16;
    op.coll_nodes = 2;
    est_estimate(e, &op, &r);
    CHECK(r.device_ns > one, "2 nodes (%llu) slower than 1 (%llu)", (unsigned long long)r.device_ns,
          (unsigned long long)one);
    est_destroy(e);
}

/* Name globs: `*` and `?`, and a rule that once backtracked exponentially
 * (`*a*a*a*a*a*a*a*a*b` against a 60-character name took 112 s per op)
 * answers at once: an alarm ends the test if the matching takes seconds
 * (it takes microseconds; the old matcher took minutes). */
static void test_oracle_glob(const struct maya_gpu_spec *gpu)
{
    alarm(20);
    const char *path = write_tmp("glob.txt",
        "name=*a*a*a*a*a*a*a*a*b host=1ms\n"
        "name=void?k<*>(*) host=2ms\n"
        "name=*gemm*_nn* host=3ms\n");
    struct estimator *e = oracle_estimator(gpu, path);
    if (!e)
        return;
    static const struct { const char *name; int64_t want_ns; } cases[] = {
        { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0 },
        { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", 1000000 },
        { "xaxaxaxaxaxaxaxaxb", 1000000 },
        { "void k<float>(int)", 2000000 },
        { "void  k<float>(int)", 0 },
        { "sm90_xmma_gemm_f16_nn_kernel", 3000000 },
        { "sm90_xmma_gemm_f16_tn_kernel", 0 },
    };
    struct maya_rec_call call;
    memset(&call, 0, sizeof call);
    call.h = (struct maya_rec_hdr){ MAYA_REC_CALL, 0, sizeof call };
    for (size_t i = 0; i < MAYA_ARRAY_LEN(cases); i++) {
        struct est_op op = { .rec = &call.h, .api = cases[i].name };
        struct est_result r;
        int rc = est_estimate(e, &op, &r);
        int matched = rc == 0 && r.model == EST_ORACLE;
        CHECK(rc == 0 && matched == (cases[i].want_ns != 0) && (!matched || (int64_t)r.host_ns == cases[i].want_ns),
              "glob against \"%s\": rc %d model %s host %llu ns", cases[i].name, rc,
              est_model_name(r.model), (unsigned long long)r.host_ns);
    }
    est_destroy(e);
    alarm(0);
}

/* A send/recv inside an 8-GPU B200 node, as NCCL splits it into channels
 * (estimator/collectives.c, p2p_nvlink_channels). Its rank sending and
 * receiving in the group (a ring shift, as nccl-tests runs it): 4 channels
 * of half an NVLink's 40.1 GB/s each from 256 KiB to 64 MiB (80 GB/s), then
 * twice the channels at each doubling: 128 MiB takes as long as 64 MiB (the
 * plateau the B200 curve of fidelity/data shows), 512 MiB moves at 0.65 of
 * the link (585 GB/s); a pair alone (2 ranks) starts on 16 channels. One
 * way (a send alone in its group): each channel at the whole 40.1 GB/s, 160
 * GB/s on 4, and up to 0.77 of the link (693 GB/s); on H100, a pair's 16
 * channels move 16 x 20.6 = 330 GB/s, what vidur measured (337 at 31 MiB). */
static void test_p2p_channels(const struct maya_hwspecs *hw)
{
    const struct maya_gpu_spec *gpu = maya_hwspecs_find_gpu(hw, "b200");
    struct maya_cluster_spec cl;
    CHECK(gpu && maya_default_cluster(hw, gpu, 8, &cl) == 0, "B200 and its default node");
    if (!gpu)
        return;
    struct est_config cfg = { .gpu = gpu, .cluster = &cl };
    struct estimator *e;
    CHECK(est_create(&cfg, &e) == 0, "analytical create");
    struct maya_rec_coll c;
    memset(&c, 0, sizeof c);
    c.h = (struct maya_rec_hdr){ MAYA_REC_COLL, 0, sizeof c };
    c.op = MAYA_COLL_SEND;
    c.nranks = 8;
    c.flags = MAYA_COLL_BOTH_WAYS;
    struct est_op op = { .rec = &c.h, .api = "ncclSend", .coll_nodes = 1, .coll_ranks_per_node = 2 };
    struct est_result r;
    double us[4];
    static const double mib[4] = { 16, 64, 128, 512 };
    for (int i = 0; i < 4; i++) {
        c.bytes = (uint64_t)(mib[i] * (1 << 20));
        CHECK(est_estimate(e, &op, &r) == 0 && r.family == EST_SENDRECV, "send of %g MiB", mib[i]);
        us[i] = r.device_ns / 1e3;
    }
    double gbps16 = 16 * 1048576 / us[0] / 1e3, gbps512 = 512 * 1048576 / us[3] / 1e3;
    CHECK(gbps16 > 70 && gbps16 < 82, "16 MiB on 4 channels: %.1f GB/s, expected ~80", gbps16);
    CHECK(us[2] > 0.95 * us[1] && us[2] < 1.05 * us[1], "128 MiB (%.0f us) as long as 64 MiB (%.0f us)",
          us[2], us[1]);
    CHECK(gbps512 > 570 && gbps512 < 586, "512 MiB on 32 channels: %.1f GB/s, expected ~585", gbps512);
    c.nranks = 2;
    c.bytes = 16 << 20;
    CHECK(est_estimate(e, &op, &r) == 0, "send of 16 MiB, 2 ranks");
    double pair = 16 * 1048576 / (r.device_ns / 1e3) / 1e3;
    CHECK(pair > 250 && pair < 321, "16 MiB between 2 ranks on 16 channels: %.1f GB/s, expected ~320", pair);

    /* one way */
    c.flags = 0;
    c.nranks = 8;
    c.bytes = 16 << 20;
    CHECK(est_estimate(e, &op, &r) == 0, "one-way send of 16 MiB");
    double one16 = 16 * 1048576 / (r.device_ns / 1e3) / 1e3;
    CHECK(one16 > 140 && one16 < 161, "one way, 16 MiB on 4 channels: %.1f GB/s, expected ~160", one16);
    c.bytes = 512u << 20;
    CHECK(est_estimate(e, &op, &r) == 0, "one-way send of 512 MiB");
    double one512 = 512 * 1048576 / (r.device_ns / 1e3) / 1e3;
    CHECK(one512 > 670 && one512 < 694, "one way, 512 MiB: %.1f GB/s, expected ~693 (0.77 of 900)", one512);
    est_destroy(e);

    const struct maya_gpu_spec *h100 = maya_hwspecs_find_gpu(hw, "h100");
    CHECK(h100 && maya_default_cluster(hw, h100, 8, &cl) == 0, "H100 and its default node");
    if (!h100)
        return;
    cfg.gpu = h100;
    CHECK(est_create(&cfg, &e) == 0, "analytical create (H100)");
    c.nranks = 2;
    c.bytes = 32u << 20;
    CHECK(est_estimate(e, &op, &r) == 0, "one-way send of 32 MiB, 2 H100s");
    double h_one = 32 * 1048576 / (r.device_ns / 1e3) / 1e3;
    c.flags = MAYA_COLL_BOTH_WAYS;
    CHECK(est_estimate(e, &op, &r) == 0, "send of 32 MiB both ways, 2 H100s");
    double h_both = 32 * 1048576 / (r.device_ns / 1e3) / 1e3;
    CHECK(h_one > 280 && h_one < 331, "one way, 32 MiB between 2 H100s: %.1f GB/s, expected ~330", h_one);
    CHECK(h_both > 140 && h_both < 166, "both ways, 32 MiB between 2 H100s: %.1f GB/s, expected ~165", h_both);
    est_destroy(e);
}

/* One float convolution of n x c x hw x hw into k channels, filter f x f,
 * on gpu: its time (analytical) in us. */
static double conv_us(const struct maya_gpu_spec *gpu, int n, int c, int hw, int k, int f, int stride)
{
    struct est_config cfg = { .gpu = gpu };
    struct estimator *e;
    if (est_create(&cfg, &e) != 0)
        return -1;
    struct maya_rec_dnn d;
    memset(&d, 0, sizeof d);
    d.h = (struct maya_rec_hdr){ MAYA_REC_DNN, 0, sizeof d };
    d.op = MAYA_DNN_CONV_FWD;
    d.ntensors = 3;
    d.conv_nspatial = 2;
    d.groups = 1;
    int out = (hw + 2 * (f / 2) - f) / stride + 1;
    int64_t x[4] = { n, c, hw, hw }, w[4] = { k, c, f, f }, y[4] = { n, k, out, out };
    for (int i = 0; i < 4; i++) {
        d.t[0].dims[i] = x[i], d.t[1].dims[i] = w[i], d.t[2].dims[i] = y[i];
        d.t[0].ndims = d.t[1].ndims = d.t[2].ndims = 4;
    }
    for (int i = 0; i < 2; i++)
        d.stride[i] = stride, d.dilation[i] = 1, d.pad_pre[i] = d.pad_post[i] = f / 2;
    struct est_op op = { .rec = &d.h, .api = "cudnnConvolutionForward" };
    struct est_result r;
    int rc = est_estimate(e, &op, &r);
    est_destroy(e);
    return rc == 0 && r.family == EST_CONV ? r.device_ns / 1e3 : -1;
}

/* Float convolutions on CUDA cores (V100: no TF32) take the SIMT GEMM
 * constants, and a 3x3 stride-1 one Winograd's F(2x2, 3x3): 16 of its 36
 * multiplications. On an A100 (TF32 tensor cores) neither applies. */
static void test_simt_conv(const struct maya_hwspecs *hw)
{
    const struct maya_gpu_spec *v100 = maya_hwspecs_find_gpu(hw, "v100"), *a100 = maya_hwspecs_find_gpu(hw, "a100");
    CHECK(v100 && a100, "V100 and A100 specs");
    if (!v100 || !a100)
        return;
    /* 16 x 128 x 56 x 56 into 256: DeepBench's V100 forward takes 900 us */
    double v3 = conv_us(v100, 16, 128, 56, 256, 3, 1), a3 = conv_us(a100, 16, 128, 56, 256, 3, 1);
    double flops = 2.0 * 16 * 56 * 56 * 256 * 128 * 9;
    double rate = flops / (v3 * 1e-6) / (v100->perf.fp32_tflops * 1e12);
    CHECK(v3 > 700 && v3 < 1100, "V100 fp32 3x3 conv: %.0f us, expected ~900", v3);
    CHECK(rate > 1.6 && rate < 2.25, "V100 fp32 3x3 conv at %.2f x the fp32 peak (Winograd: 2.25 x the GEMM's "
          "share of it)", rate);
    /* the same FLOPs as a 1x1 convolution of 9 times the channels: no Winograd */
    double v1 = conv_us(v100, 16, 128 * 9, 56, 256, 1, 1);
    CHECK(v1 > 2.0 * v3, "V100 fp32 1x1 conv of the same FLOPs: %.0f us against %.0f", v1, v3);
    double a1 = conv_us(a100, 16, 128 * 9, 56, 256, 1, 1);
    CHECK(a3 > 0.8 * a1 && a3 < 1.25 * a1, "A100 TF32: 3x3 (%.0f us) and 1x1 (%.0f us) alike", a3, a1);
}

int main(void)
{
    maya_set_error_prefix("test");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    struct maya_hwspecs hw = { 0 };
    const char *top = getenv("MAYA_TOP");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/hwspecs", top ? top : ".");
    if (maya_hwspecs_load_dir(dir, &hw) < 0)
        return 2;
    const struct maya_gpu_spec *gpu = maya_hwspecs_find_gpu(&hw, "h100");
    if (!gpu) {
        fprintf(stderr, "no h100 in %s\n", dir);
        return 2;
    }
    test_parse();
    test_oracle(gpu);
    test_oracle_glob(gpu);
    test_families(gpu);
    test_p2p_channels(&hw);
    test_simt_conv(&hw);
    maya_hwspecs_free(&hw);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    printf("%s\n", failures ? "FAILED" : "all estimator unit checks passed");
    return failures ? 1 : 0;
}

/* Simulator throughput on a large synthetic job, on one core.
 *
 * The job: 64 ranks on 8 nodes of 8 GPUs, each running ITERS iterations of a
 * tensor- and data-parallel step: per layer, 4 kernels on a compute stream,
 * an all-reduce over the node's 8 ranks (tensor parallel), an event from the
 * compute stream to a communication stream and an all-reduce over the 8
 * nodes (data parallel, between nodes: it shares the NICs); a device
 * synchronisation ends the iteration. A wide job (2048 ranks on 256 nodes,
 * data-parallel groups of 16 nodes: 128 all-reduces between nodes at a time,
 * each on its own rail) shows what transfers between nodes cost the replay
 * at scale. Traces are written, collated and
 * loaded; only sim_run is timed, in CPU time of the thread that runs it (the
 * replay is single-threaded: this is its speed on one core, whatever else
 * the machine is doing).
 *
 * Prints:
 *   sim_events_per_s        events the replay processes per second
 *   sim_ops_per_s           ops replayed per second
 *   sim_peak_rss_bytes      peak resident memory of the whole pipeline (big job)
 *   sim_rss_bytes_per_op    growth of that peak from a job half the size, per op:
 *                           memory is linear in the ops when this stays flat
 *   collate_records_per_s   the collator's speed on the same traces
 *   sim_wide_2048ranks_run_s  CPU seconds to replay the wide job
 *   sim_wide_events_per_s   events per second there
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_child.h"
#include "maya/collator.h"
#include "maya/common.h"
#include "maya/sim.h"
#include "maya/trace_format.h"
#include "trace_calls.h"

#define GPN 8
#define LAYERS 24

/* The job's size: RANKS ranks, data-parallel groups of DP_NODES nodes (GPU
 * g of every node of a group). main() runs the 64-rank job, then a wide one. */
static int RANKS = 64, DP_NODES = 8;

struct gen {
    struct col_writer *w;
    struct trace_clock clock;
};

static int emit_string(struct gen *g, uint32_t id, const char *s)
{
    unsigned char buf[256] = { 0 };
    size_t len = strlen(s);
    struct maya_rec_string r = { .h = { MAYA_REC_STRING, 0, MAYA_REC_ALIGN((uint32_t)(sizeof r + len)) },
                                 .id = id, .len = (uint32_t)len };
    memcpy(buf, &r, sizeof r);
    memcpy(buf + sizeof r, s, len);
    return col_writer_emit(g->w, buf);
}

/* 3 us of host work before each call */
static void call(struct gen *g, struct maya_call *c, uint32_t api, uint64_t stream)
{
    trace_call(&g->clock, c, 3000, api, stream);
}

enum { S_LAUNCH = 1, S_AR, S_REC, S_WAIT, S_SYNC, S_KNAME };

static int coll(struct gen *g, uint64_t comm, uint64_t seq, int rank, int nranks, uint64_t stream, uint64_t count)
{
    struct maya_rec_coll c;
    trace_coll(&c, MAYA_COLL_ALLREDUCE, comm, seq, rank, nranks, -1, count);
    call(g, &c.call, S_AR, stream);
    return col_writer_emit(g->w, &c);
}

static int write_rank(const char *dir, int rank, int iters)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/rank-%d.mtrace", dir, rank);
    struct gen g = { 0 };
    FILE *fp;
    if (trace_open_rank(path, rank, RANKS, GPN, "H100-SXM", &fp, &g.w) < 0)
        return -1;
    int rc = 0;
    const char *names[] = { NULL, "cudaLaunchKernel", "ncclAllReduce", "cudaEventRecord", "cudaStreamWaitEvent",
                            "cudaDeviceSynchronize", "ampere_bf16_gemm" };
    for (uint32_t i = 1; rc == 0 && i <= S_KNAME; i++)
        rc = emit_string(&g, i, names[i]);
    struct maya_rec_kernel k = { .h = { MAYA_REC_KERNEL, 0, sizeof k }, .id = 1, .mangled = S_KNAME,
                                 .name = S_KNAME, .source = MAYA_KSRC_FATBIN };
    if (rc == 0)
        rc = col_writer_emit(g.w, &k);
    for (uint64_t s = 1; rc == 0 && s <= 2; s++) {
        struct maya_rec_stream st = { .h = { MAYA_REC_STREAM, 0, sizeof st }, .stream = s, .device = 0,
                                      .flags = s == 2 ? MAYA_STREAM_NON_BLOCKING : 0 };
        rc = col_writer_emit(g.w, &st);
    }
    /* tensor-parallel group: the node; data-parallel group: same local rank on every node */
    int node = rank / GPN;
    uint64_t tp = 0x100000 + (uint64_t)node, dp = 0x200000 + (uint64_t)(node / DP_NODES * GPN + rank % GPN);
    struct maya_rec_comm c1 = { .h = { MAYA_REC_COMM, 0, sizeof c1 }, .comm = tp, .rank = rank % GPN,
                                .nranks = GPN, .global_gpu = rank, .color = -1, .key = -1 };
    struct maya_rec_comm c2 = { .h = { MAYA_REC_COMM, 0, sizeof c2 }, .comm = dp, .rank = node % DP_NODES,
                                .nranks = DP_NODES, .global_gpu = rank, .color = -1, .key = -1 };
    if (rc == 0)
        rc = col_writer_emit(g.w, &c1);
    if (rc == 0)
        rc = col_writer_emit(g.w, &c2);
    uint64_t tseq = 0, dseq = 0;
    uint32_t ev_version = 0;
    for (int it = 0; rc == 0 && it < iters; it++) {
        for (int l = 0; rc == 0 && l < LAYERS; l++) {
            for (int kk = 0; rc == 0 && kk < 4; kk++) {
                struct { struct maya_rec_launch l; } r;
                memset(&r, 0, sizeof r);
                r.l.h = (struct maya_rec_hdr){ MAYA_REC_LAUNCH, 0, sizeof r.l };
                call(&g, &r.l.call, S_LAUNCH, 1);
                r.l.kernel = 1;
                r.l.grid[0] = 132 * (uint32_t)(kk + 1);
                r.l.grid[1] = r.l.grid[2] = r.l.block[1] = r.l.block[2] = 1;
                r.l.block[0] = 256;
                rc = col_writer_emit(g.w, &r);
            }
            if (rc == 0)
                rc = coll(&g, tp, tseq++, rank % GPN, GPN, 1, 1 << 20);
            struct maya_rec_event e;
            memset(&e, 0, sizeof e);
            e.h = (struct maya_rec_hdr){ MAYA_REC_EVENT_RECORD, 0, sizeof e };
            call(&g, &e.call, S_REC, 1);
            e.event = 1;
            e.version = ++ev_version;
            if (rc == 0)
                rc = col_writer_emit(g.w, &e);
            e.h.type = MAYA_REC_STREAM_WAIT;
            call(&g, &e.call, S_WAIT, 2);
            if (rc == 0)
                rc = col_writer_emit(g.w, &e);
            if (rc == 0)
                rc = coll(&g, dp, dseq++, node % DP_NODES, DP_NODES, 2, 4 << 20);
        }
        struct maya_rec_sync s;
        memset(&s, 0, sizeof s);
        s.h = (struct maya_rec_hdr){ MAYA_REC_SYNC, 0, sizeof s };
        call(&g, &s.call, S_SYNC, 0);
        s.kind = MAYA_SYNC_DEVICE;
        if (rc == 0)
            rc = col_writer_emit(g.w, &s);
    }
    struct maya_rec_end end;
    memset(&end, 0, sizeof end);
    end.h = (struct maya_rec_hdr){ MAYA_REC_END, 0, sizeof end };
    if (rc == 0) {
        end.records = col_writer_records(g.w);
        rc = col_writer_emit(g.w, &end);
    }
    if (rc == 0)
        rc = col_writer_flush(g.w);
    col_writer_free(g.w);
    if (fclose(fp) != 0 && rc == 0)
        rc = maya_error("cannot write %s: %m", path);
    return rc;
}

/* Fixed durations, cheap to compute: the simulator is what is measured. */
static int estimate(void *ctx, const struct est_op *op, struct est_result *out)
{
    (void)ctx;
    memset(out, 0, sizeof *out);
    out->host_ns = 2000;
    switch (op->rec->type) {
    case MAYA_REC_LAUNCH: out->device_ns = 40000 + 10000 * ((const struct maya_rec_launch *)op->rec)->grid[0] / 132; break;
    case MAYA_REC_COLL: out->device_ns = op->coll_nodes > 1 ? 300000 : 60000; break;
    default: break;
    }
    return 0;
}

/* CPU time of this thread: what one core spent, not what the clock saw. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct result {
    double run_s, collate_s;
    uint64_t ops, events, records;
    long rss_kb;
};

struct job_arg {
    const char *base;
    int iters;
};

/* Generate, collate, load and replay a job of iters iterations (in a child
 * process: bench_in_child). Every rank is replayed (no folding): the
 * engine's speed is what is measured. */
static int measure_job(void *arg, void *out)
{
    const struct job_arg *a = arg;
    struct result *r = out;
    char dir[512], job[600];
    snprintf(dir, sizeof dir, "%s/traces-%d", a->base, a->iters);
    snprintf(job, sizeof job, "%s/job-%d.mtrace", a->base, a->iters);
    if (mkdir(dir, 0755) < 0)
        return maya_error("cannot create %s: %m", dir);
    for (int i = 0; i < RANKS; i++)
        if (write_rank(dir, i, a->iters) < 0)
            return -1;
    struct col_summary cs;
    double t0 = now_s();
    if (col_collate(dir, job, 0, &cs) < 0)
        return -1;
    r->collate_s = now_s() - t0;
    r->records = cs.records;
    struct sim_config cfg = { .estimate = estimate, .no_fold = 1 };
    struct sim_job *j;
    if (sim_load(job, &cfg, &j) < 0)
        return -1;
    t0 = now_s();
    if (sim_run(j) < 0)
        return -1;
    r->run_s = now_s() - t0;
    struct sim_summary s;
    sim_summarize(j, &s);
    r->ops = s.ops;
    r->events = s.events;
    if (s.iterations != a->iters)
        return maya_error("found %d iterations, expected %d", s.iterations, a->iters);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    r->rss_kb = ru.ru_maxrss;
    sim_free(j);
    return 0;
}

static int measure(const char *base, int iters, struct result *res)
{
    struct job_arg a = { base, iters };
    char what[64];
    snprintf(what, sizeof what, "sim_bench: the job of %d iterations", iters);
    return bench_in_child(measure_job, &a, res, sizeof *res, what);
}

int main(void)
{
    maya_set_error_prefix("sim_bench");
    char base[] = "/tmp/maya-sim-bench.XXXXXX";
    if (!mkdtemp(base))
        return maya_error("mkdtemp: %m") ? 1 : 1;
    struct result small, big, wide;
    int rc = measure(base, 40, &small);
    if (rc == 0)
        rc = measure(base, 80, &big);
    RANKS = 2048;
    DP_NODES = 16;
    if (rc == 0)
        rc = measure(base, 3, &wide);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        maya_warn("cannot remove %s", base);
    if (rc < 0)
        return 1;
    printf("sim_events_per_s=%.0f\n", big.events / big.run_s);
    printf("sim_ops_per_s=%.0f\n", big.ops / big.run_s);
    printf("sim_job_ops=%" PRIu64 "\n", big.ops);
    printf("sim_peak_rss_bytes=%ld\n", big.rss_kb * 1024);
    printf("sim_rss_bytes_per_op=%.0f\n", (double)(big.rss_kb - small.rss_kb) * 1024 / (double)(big.ops - small.ops));
    printf("collate_records_per_s=%.0f\n", big.records / big.collate_s);
    printf("sim_wide_2048ranks_run_s=%.3f\n", wide.run_s);
    printf("sim_wide_events_per_s=%.0f\n", wide.events / wide.run_s);
    return 0;
}

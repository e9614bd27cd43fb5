/* Folding (sim/fold.c): a job of data-parallel replicas replayed folded
 * gives the times, per-rank figures and report of the same job replayed
 * rank by rank; where a replica differs (a straggler, --slow-rank, NICs
 * shared across replicas) it is replayed on its own and the result is still
 * the unfolded one. Jobs from bench/gpt_traces.c (Megatron's layout, 1F1B). */
#include "simtest.h"
#include "../bench/gpt_traces.h"

#include <sys/stat.h>

/* Durations from the records: cheap, deterministic, shape-dependent. */
static int shape_estimate(void *ctx, const struct est_op *op, struct est_result *out)
{
    (void)ctx;
    memset(out, 0, sizeof *out);
    out->host_ns = 1500;
    switch (op->rec->type) {
    case MAYA_REC_GEMM: {
        const struct maya_rec_gemm *g = (const void *)op->rec;
        out->device_ns = (uint64_t)(2.0 * g->m * g->n * g->k / 400e3) + 5000;
        break;
    }
    case MAYA_REC_LAUNCH:
        out->device_ns = 3000 + ((const struct maya_rec_launch *)op->rec)->grid[0] / 4;
        break;
    case MAYA_REC_COLL: {
        const struct maya_rec_coll *c = (const void *)op->rec;
        double bw = op->coll_nodes > 1 ? 20 : 200; /* bytes per ns */
        out->device_ns = 10000 + (uint64_t)(c->bytes / bw);
        break;
    }
    default:
        break;
    }
    return 0;
}

static const char *build(const char *name, const struct gpt_shape *g)
{
    static char job[600];
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", scratch(), name);
    char traces[560];
    snprintf(traces, sizeof traces, "%s/traces", dir);
    if (mkdir(dir, 0755) < 0 || mkdir(traces, 0755) < 0 || gpt_write_traces(g, traces) < 0)
        return NULL;
    snprintf(job, sizeof job, "%s/job.mtrace", dir);
    struct col_summary cs;
    return col_collate(traces, job, 0, &cs) < 0 ? NULL : job;
}

/* The nodes' NICs (sim/nic.c) for the replays; NULL: one per GPU. */
static const struct maya_cluster_spec *cluster;

static struct sim_job *load_run(const char *job, int fold, const struct sim_slow_rank *slow, int nslow)
{
    /* folded replays remember estimates by content, unfolded ones ask for
     * every op: the comparisons check that too */
    struct sim_config cfg = { .estimate = shape_estimate, .no_fold = !fold, .fold_similar = fold == 2, .slow = slow,
                              .nslow = nslow, .estimate_by_content = fold != 0, .cluster = cluster };
    struct sim_job *j;
    if (sim_load(job, &cfg, &j) < 0)
        return NULL;
    if (sim_run(j) < 0) {
        sim_free(j);
        return NULL;
    }
    return j;
}

/* Everything a reader of the replay can see must be the same. */
static void same_replay(const char *what, const struct sim_job *a, const struct sim_job *b, int nranks)
{
    struct sim_summary x, y;
    sim_summarize(a, &x);
    sim_summarize(b, &y);
    EXPECT(x.iterations == y.iterations, "%s: %d iterations folded, %d not", what, x.iterations, y.iterations);
    EXPECT(x.iteration_s == y.iteration_s, "%s: iteration %.9f s folded, %.9f s not", what, x.iteration_s, y.iteration_s);
    EXPECT(x.makespan_s == y.makespan_s, "%s: makespan %.9f folded, %.9f not", what, x.makespan_s, y.makespan_s);
    EXPECT_NEAR(x.compute_s, y.compute_s, 1e-12, "compute");
    EXPECT_NEAR(x.comm_s, y.comm_s, 1e-12, "communication");
    EXPECT_NEAR(x.exposed_comm_s, y.exposed_comm_s, 1e-12, "exposed communication");
    EXPECT_NEAR(x.idle_s, y.idle_s, 1e-12, "idle");
    EXPECT(x.ops == y.ops, "%s: %" PRIu64 " ops folded, %" PRIu64 " not", what, x.ops, y.ops);
    EXPECT(x.peak_memory_bytes == y.peak_memory_bytes, "%s: peak memory", what);
    for (int r = 0; r < nranks; r++) {
        uint64_t n = sim_rank_ops(a, r);
        EXPECT(n == sim_rank_ops(b, r), "%s: rank %d has %" PRIu64 " ops folded, %" PRIu64 " not", what, r, n,
               sim_rank_ops(b, r));
        int bad = 0;
        for (uint64_t i = 0; i < n && !bad; i++) {
            struct sim_op_times p = op(a, r, i), q = op(b, r, i);
            if (p.host_start != q.host_start || p.host_end != q.host_end || p.dev_start != q.dev_start ||
                p.dev_end != q.dev_end || strcmp(p.name, q.name) || p.stream != q.stream) {
                bad = 1;
                EXPECT(0, "%s: rank %d op %" PRIu64 " (%s): folded %" PRIu64 "..%" PRIu64 " on the device, "
                       "unfolded %" PRIu64 "..%" PRIu64, what, r, i, p.name, p.dev_start, p.dev_end, q.dev_start,
                       q.dev_end);
            }
        }
        uint64_t f1, e1, f2, e2;
        for (int k = 0; k < x.iterations; k++) {
            int ra = sim_iteration_ops(a, r, k, &f1, &e1), rb = sim_iteration_ops(b, r, k, &f2, &e2);
            EXPECT(ra == rb && (ra < 0 || (f1 == f2 && e1 == e2)), "%s: rank %d iteration %d bounds", what, r, k);
        }
    }
}

static void check(const char *name, const struct gpt_shape *g, int want_replayed, const struct sim_slow_rank *slow,
                  int nslow)
{
    const char *job = build(name, g);
    EXPECT(job, "%s: could not build the job: %s", name, maya_last_error());
    if (!job)
        return;
    struct sim_job *a = load_run(job, 1, slow, nslow), *b = load_run(job, 0, slow, nslow);
    EXPECT(a && b, "%s: replay failed: %s", name, maya_last_error());
    if (a && b) {
        int n = g->tp * g->pp * g->dp;
        struct sim_summary s;
        sim_summarize(a, &s);
        EXPECT(s.replayed_ranks == want_replayed, "%s: %d of %d ranks replayed folded, expected %d (%s)", name,
               s.replayed_ranks, n, want_replayed, s.fold_note);
        EXPECT(s.iterations == g->iterations, "%s: %d iterations found, expected %d", name, s.iterations,
               g->iterations);
        sim_summarize(b, &s);
        EXPECT(s.replayed_ranks == n, "%s: %d of %d ranks replayed unfolded", name, s.replayed_ranks, n);
        same_replay(name, a, b, n);
    }
    sim_free(a);
    sim_free(b);
}

int main(void)
{
    struct gpt_shape g;
    gpt_shape_gpt3(&g, 2, 2, 4);
    g.gpus_per_node = 2; /* a node per tensor-parallel group: replicas on nodes of their own */
    g.layers = 4;
    g.microbatches = 4;
    g.iterations = 3;
    g.hidden = 1024;
    g.seq = 512;
    g.vocab = 4096;
    g.buckets_per_layer = 2;
    /* symmetric: every GPU has a NIC of its own, so the replicas and the
     * tensor-parallel ranks of a stage (on one node) fold into one rank per
     * stage */
    check("symmetric", &g, 2, NULL, 0);

    /* a straggler in the trace (rank 5: tensor-parallel rank 1 of replica
     * 2): the tensor-parallel rank 1s no longer do rank 0s' work (their
     * data-parallel all-reduces wait for it), and unfolding them spreads
     * along every communicator: all replayed, with the same result */
    struct gpt_shape s = g;
    s.slow_rank = 5;
    s.slow_factor = 3;
    check("straggler", &s, 16, NULL, 0);

    /* --slow-rank: ranks fold only into ranks of the same local rank, as
     * with NICs shared: its replica is replayed on its own, the others fold
     * into replica 0 (tp x pp ranks) */
    struct sim_slow_rank slow = { 6, 1.5 };
    check("slow-rank", &g, 8, &slow, 1);

    /* replicas sharing a node, each GPU with a NIC of its own: folded into
     * each other, one rank per stage */
    struct gpt_shape shared = g;
    shared.dp = 2;
    shared.gpus_per_node = 4;
    check("shared-node", &shared, 2, NULL, 0);

    /* two replicas a node: the first node folds into itself, the others
     * into it, whole */
    struct gpt_shape two = g;
    two.gpus_per_node = 4;
    check("two-a-node", &two, 2, NULL, 0);

    /* NICs shared by GPUs (a DGX-1V's pairs, a PCIe server's one for all):
     * the data-parallel all-reduces of a node's GPUs meet on its NICs; a
     * rank folds only into one of the same local rank on another node, and
     * the folded replay still gives every copy's times */
    struct maya_cluster_spec c;
    memset(&c, 0, sizeof c);
    c.gpus_per_node = 4;
    c.nics_per_node = 2;
    c.nic_of_gpu[0] = c.nic_of_gpu[1] = 0;
    c.nic_of_gpu[2] = c.nic_of_gpu[3] = 1;
    cluster = &c;
    check("two-a-node-nic-pairs", &two, 8, NULL, 0);
    c.nics_per_node = 1;
    c.nic_of_gpu[2] = c.nic_of_gpu[3] = 0;
    check("two-a-node-one-nic", &two, 8, NULL, 0);
    /* and a straggler on them (stage 1, replica 0): the replicas of stage 1
     * beside it no longer fold into its node, nor their stage-0 peers into
     * stage 0's: everything is replayed, with the same result */
    struct gpt_shape two_slow = two;
    two_slow.slow_rank = 9;
    two_slow.slow_factor = 2;
    two_slow.gap_ns = 20000;
    check("one-nic-straggler", &two_slow, 16, NULL, 0);
    c.gpus_per_node = 2;
    c.nics_per_node = 1;
    check("one-nic-a-tp-group", &g, 4, NULL, 0);
    cluster = NULL;

    /* each communicator's rank 0 makes its NCCL id (ncclGetUniqueId, a
     * call that takes host time only): exact folding replays the ranks
     * that make ids on their own, with the ranks their groups reach (8 of
     * 16); --fold similar takes the call as host work and folds as without
     * it */
    struct gpt_shape ids = g;
    ids.unique_ids = 1;
    const char *job = build("unique-ids", &ids);
    EXPECT(job, "unique-ids: could not build the job: %s", maya_last_error());
    struct sim_job *exact = job ? load_run(job, 1, NULL, 0) : NULL, *similar = job ? load_run(job, 2, NULL, 0) : NULL;
    struct sim_job *all = job ? load_run(job, 0, NULL, 0) : NULL;
    EXPECT(exact && similar && all, "unique-ids: replay failed: %s", maya_last_error());
    if (exact && similar && all) {
        struct sim_summary e, sm, a;
        sim_summarize(exact, &e);
        sim_summarize(similar, &sm);
        sim_summarize(all, &a);
        EXPECT(e.replayed_ranks == 8, "unique-ids: %d ranks replayed exactly folded, expected 8",
               e.replayed_ranks);
        same_replay("unique-ids", exact, all, 16);
        EXPECT(sm.replayed_ranks == 2, "unique-ids: %d ranks replayed with similar folding, expected 2 (%s)",
               sm.replayed_ranks, sm.fold_note);
        EXPECT(sm.fold_host_calls >= 1 && sm.fold_host_calls <= 3, "unique-ids: folded ranks made up to %llu "
               "host-only calls more or fewer, expected 1 to 3 (a rank makes the ids of up to three groups)",
               (unsigned long long)sm.fold_host_calls);
        EXPECT_NEAR(sm.iteration_s, a.iteration_s, 0.001 * a.iteration_s, "unique-ids: similar folding's iteration");
    }
    sim_free(exact);
    sim_free(similar);
    sim_free(all);

    /* measured host gaps differ a little between replicas: nothing folds
     * exactly; --fold similar folds them (they take the representative's
     * gaps) and the prediction stays within the gaps' share; a replica whose
     * gaps are twice as long stays on its own */
    struct gpt_shape noisy = g;
    noisy.gap_ns = 20000;
    noisy.gap_jitter = 0.2;
    job = build("noisy", &noisy);
    EXPECT(job, "noisy: could not build the job: %s", maya_last_error());
    exact = job ? load_run(job, 1, NULL, 0) : NULL;
    similar = job ? load_run(job, 2, NULL, 0) : NULL;
    all = job ? load_run(job, 0, NULL, 0) : NULL;
    EXPECT(exact && similar && all, "noisy: replay failed: %s", maya_last_error());
    if (exact && similar && all) {
        struct sim_summary e, sm, a;
        sim_summarize(exact, &e);
        sim_summarize(similar, &sm);
        sim_summarize(all, &a);
        EXPECT(e.replayed_ranks == 16, "noisy: %d ranks replayed exactly folded, expected all 16", e.replayed_ranks);
        EXPECT(e.fold_gaps_only == 12, "noisy: exact folding counts %d ranks --fold similar can fold, expected 12",
               e.fold_gaps_only);
        EXPECT(sm.replayed_ranks == 2, "noisy: %d ranks replayed with similar folding, expected 2 (%s)",
               sm.replayed_ranks, sm.fold_note);
        EXPECT(sm.fold_gap_diff > 0 && sm.fold_gap_diff < 0.05, "noisy: host gaps differ by %.4f in total",
               sm.fold_gap_diff);
        EXPECT(e.iteration_s == a.iteration_s, "noisy: exact folding changed the iteration");
        EXPECT_NEAR(sm.iteration_s, a.iteration_s, 0.02 * a.iteration_s, "noisy: similar folding's iteration");
    }
    sim_free(exact);
    sim_free(similar);
    sim_free(all);
    noisy.slow_rank = 5;
    noisy.slow_factor = 2;
    job = build("noisy-slow", &noisy);
    similar = job ? load_run(job, 2, NULL, 0) : NULL;
    EXPECT(similar, "noisy-slow: replay failed: %s", maya_last_error());
    if (similar) {
        struct sim_summary sm;
        sim_summarize(similar, &sm);
        /* as for the straggler above: all replayed */
        EXPECT(sm.replayed_ranks == 16, "noisy-slow: %d ranks replayed with similar folding, expected 16 (%s)",
               sm.replayed_ranks, sm.fold_note);
    }
    sim_free(similar);
    /* exact folding counts the replicas --fold similar could fold: not the
     * straggler, whose gaps are twice as long */
    exact = job ? load_run(job, 1, NULL, 0) : NULL;
    EXPECT(exact, "noisy-slow: replay failed: %s", maya_last_error());
    if (exact) {
        struct sim_summary e;
        sim_summarize(exact, &e);
        EXPECT(e.fold_gaps_only == 11, "noisy-slow: exact folding counts %d ranks --fold similar can fold, "
               "expected 11", e.fold_gaps_only);
    }
    sim_free(exact);
    return finish("test_sim_fold");
}

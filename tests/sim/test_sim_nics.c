/* NICs as clusters wire them: transfers between nodes slow each other down
 * only when they meet on a NIC. Hand-computed, replayed exactly.
 *
 * The job: 2 nodes of 4 GPUs, tensor parallel inside a node (ranks 0-3 on
 * node 0, 4-7 on node 1), data parallel across: GPU g of node 0 and GPU g of
 * node 1 form data-parallel communicator g, whose all-reduce takes 10 ms
 * alone. All four start together at 0.
 *   rails (GPU g on NIC g):       no two share a NIC: all end at 10 ms
 *   pairs (GPUs 0-1 on NIC 0, 2-3 on NIC 1): two flows per NIC, each at half
 *                                 rate: all end at 20 ms
 *   one NIC per node:             four flows on it: 40 ms (what one NIC per
 *                                 node gave every job before)
 * Then a pipeline send from rank 0 to rank 4 (4 ms alone) beside them, on
 * rails: it meets only data-parallel group 0 on NIC 0: both at half rate;
 * the send ends at 8 ms, group 0 has 10 - 4 = 6 ms left at full rate: 14 ms;
 * groups 1-3 still end at 10 ms.
 *
 * Inside a node, a send/recv uses the sender's port out and the receiver's
 * port in. An all-to-all of grouped send/recv over 4 GPUs: each GPU sends
 * to 3 peers and receives from 3, each pair 0.9 ms alone of which 0.3 ms is
 * latency (not shared): 3 flows on every port, so after the 0.3 ms the
 * 0.6 ms left run at a third: all end at 0.3 + 1.8 = 2.1 ms. A pipeline
 * (0 -> 1 -> 2 -> 3, one send per GPU) uses each port once: 0.9 ms.
 *
 * A collective's latency is not shared either: on one NIC per node, the
 * four all-reduces of 10 ms of which 6 ms is latency end at 6 + 4 x 4 =
 * 22 ms; of which all but 0.5 us is latency (its bytes need less than
 * SIM_FLOW_MIN_NS), each alone at 10 ms: such a transfer is no flow.
 */
#include "sim/simtest.h"

#include "maya/hwspec.h"

static char texts[8][1024];

static void build(int with_send)
{
    for (int r = 0; r < 8; r++) {
        int node = r / 4, g = r % 4;
        int n = snprintf(texts[r], sizeof texts[r],
                         "header rank=%d world_size=8 local_rank=%d node=%d gpus_per_node=4\n"
                         "stream id=1 dev=0\n"
                         "stream id=2 dev=0\n"
                         "comm id=0x%x rank=%d nranks=2 gpu=%d\n",
                         r, g, node, 0x10 + g, node, r);
        if (with_send && g == 0)
            n += snprintf(texts[r] + n, sizeof texts[r] - (size_t)n, "comm id=0x20 rank=%d nranks=2 gpu=%d\n",
                          node, r);
        n += snprintf(texts[r] + n, sizeof texts[r] - (size_t)n,
                      "coll stream=1 api=dpAllReduce op=allreduce comm=0x%x rank=%d nranks=2 cseq=0 count=1M\n",
                      0x10 + g, node);
        if (with_send && g == 0)
            snprintf(texts[r] + n, sizeof texts[r] - (size_t)n,
                     "coll stream=2 api=ppSend op=%s comm=0x20 rank=%d nranks=2 peer=%d cseq=0 count=1M\n",
                     node == 0 ? "send" : "recv", node, 1 - node);
    }
}

/* Estimates with a latency part (fixed_estimate's durations have none):
 * the ops whose API name starts with `api` take dev_ns, fixed_ns of it
 * latency. */
struct lat_dur {
    const char *api;
    uint64_t dev_ns, fixed_ns;
};

static int lat_estimate(void *ctx, const struct est_op *op, struct est_result *out)
{
    memset(out, 0, sizeof *out);
    for (const struct lat_dur *x = ctx; x->api; x++)
        if (op->api && !strncmp(op->api, x->api, strlen(x->api))) {
            out->device_ns = x->dev_ns;
            out->fixed_ns = x->fixed_ns;
            break;
        }
    return 0;
}

/* 0.9 ms per send/recv, 0.3 of it latency */
static const struct lat_dur p2p_durs[] = { { "p2p", 9 * MS / 10, 3 * MS / 10 }, { NULL, 0, 0 } };

/* 4 ranks on one node; all-to-all (every pair, one group per rank) or a
 * pipeline (rank r sends to r + 1) */
static struct sim_job *run_p2p(const char *name, int all)
{
    static char t[4][2048];
    const char *ranks[4];
    for (int r = 0; r < 4; r++) {
        int n = snprintf(t[r], sizeof t[r],
                         "header rank=%d world_size=4 local_rank=%d node=0 gpus_per_node=4\n"
                         "stream id=1 dev=0\n"
                         "comm id=0x30 rank=%d nranks=4 gpu=%d\n", r, r, r, r);
        for (int p = 0; p < 4; p++) {
            if (p == r || (!all && p != r + 1 && p != r - 1))
                continue;
            if (all || p == r + 1)
                n += snprintf(t[r] + n, sizeof t[r] - (size_t)n,
                              "coll stream=1 api=p2pSend op=send comm=0x30 rank=%d nranks=4 peer=%d cseq=0 count=1M group=%d\n",
                              r, p, 100 + r);
            if (all || p == r - 1)
                n += snprintf(t[r] + n, sizeof t[r] - (size_t)n,
                              "coll stream=1 api=p2pRecv op=recv comm=0x30 rank=%d nranks=4 peer=%d cseq=0 count=1M group=%d\n",
                              r, p, 100 + r);
        }
        ranks[r] = t[r];
    }
    struct sim_config cfg = { .estimate = lat_estimate, .estimate_ctx = (void *)p2p_durs };
    return replay_with(name, ranks, 4, &cfg);
}

static const struct dur durs[] = { { "dpAllReduce", 10 * MS, 0 }, { "ppSend", 4 * MS, 0 }, { NULL, 0, 0 } };

/* Replay texts[] on nodes whose GPUs use the NICs in nic_of_gpu (nics of
 * them per node); NULL cluster = the simulator's default. The estimates:
 * durs[], or lat's where given. */
static struct sim_job *run_lat(const char *name, const int *nic_of_gpu, int nics, const struct lat_dur *lat)
{
    const char *ranks[8];
    for (int r = 0; r < 8; r++)
        ranks[r] = texts[r];
    struct maya_cluster_spec c;
    memset(&c, 0, sizeof c);
    c.gpus_per_node = 4;
    c.nics_per_node = nics;
    for (int g = 0; g < 4 && nic_of_gpu; g++)
        c.nic_of_gpu[g] = (uint16_t)nic_of_gpu[g];
    struct durations d = { durs, 0 };
    struct sim_config cfg = { .estimate = lat ? lat_estimate : fixed_estimate,
                              .estimate_ctx = lat ? (void *)lat : (void *)&d, .cluster = nic_of_gpu ? &c : NULL };
    return replay_with(name, ranks, 8, &cfg);
}

static struct sim_job *run(const char *name, const int *nic_of_gpu, int nics)
{
    return run_lat(name, nic_of_gpu, nics, NULL);
}

static void expect_dp_ends(struct sim_job *j, const uint64_t want[4], const char *what)
{
    for (int r = 0; r < 8 && j; r++) {
        char label[128];
        snprintf(label, sizeof label, "%s: rank %d's data-parallel all-reduce end", what, r);
        EXPECT_U64(op(j, r, 0).dev_end, want[r % 4], label);
    }
}

/* The same within 10 us: a collective's latency share is kept in 1023ths
 * of its estimate (SIM_COLL_SUB), 10 us of a 10 ms all-reduce. */
static void expect_dp_ends_near(struct sim_job *j, uint64_t want, const char *what)
{
    for (int r = 0; r < 8 && j; r++) {
        char label[128];
        snprintf(label, sizeof label, "%s: rank %d's data-parallel all-reduce end (within 10 us)", what, r);
        EXPECT_NEAR((double)op(j, r, 0).dev_end, (double)want, 10000.0, label);
    }
}

int main(void)
{
    static const int rails[4] = { 0, 1, 2, 3 }, pairs[4] = { 0, 0, 1, 1 }, one[4] = { 0, 0, 0, 0 };
    build(0);
    struct sim_job *j = run("rails", rails, 4);
    expect_dp_ends(j, (const uint64_t[]){ 10 * MS, 10 * MS, 10 * MS, 10 * MS }, "rails");
    sim_free(j);
    j = run("default", NULL, 0);
    expect_dp_ends(j, (const uint64_t[]){ 10 * MS, 10 * MS, 10 * MS, 10 * MS }, "default (a NIC per GPU)");
    sim_free(j);
    j = run("pairs", pairs, 2);
    expect_dp_ends(j, (const uint64_t[]){ 20 * MS, 20 * MS, 20 * MS, 20 * MS }, "two GPUs per NIC");
    sim_free(j);
    j = run("one", one, 1);
    expect_dp_ends(j, (const uint64_t[]){ 40 * MS, 40 * MS, 40 * MS, 40 * MS }, "one NIC per node");
    sim_free(j);
    j = run_lat("one_lat", one, 1, (const struct lat_dur[]){ { "dpAllReduce", 10 * MS, 6 * MS }, { NULL, 0, 0 } });
    expect_dp_ends_near(j, 22 * MS, "one NIC, 6 ms of latency each");
    sim_free(j);
    j = run_lat("one_all_lat", one, 1,
                (const struct lat_dur[]){ { "dpAllReduce", 10 * MS, 10 * MS - 500 }, { NULL, 0, 0 } });
    expect_dp_ends(j, (const uint64_t[]){ 10 * MS, 10 * MS, 10 * MS, 10 * MS }, "one NIC, all but 0.5 us latency");
    sim_free(j);

    build(1);
    j = run("send", rails, 4);
    expect_dp_ends(j, (const uint64_t[]){ 14 * MS, 10 * MS, 10 * MS, 10 * MS }, "rails with a send on rail 0");
    if (j) {
        EXPECT_U64(op(j, 0, 1).dev_end, 8 * MS, "the send shares rail 0 with group 0: 8 ms");
        EXPECT_U64(op(j, 4, 1).dev_end, 8 * MS, "the recv ends with it");
    }
    sim_free(j);

    j = run_p2p("alltoall", 1);
    for (int r = 0; r < 4 && j; r++)
        for (uint64_t i = 0; i < 6; i++)
            EXPECT_U64(op(j, r, i).dev_end, 21 * MS / 10, "all-to-all of grouped send/recv: 3 flows per port");
    sim_free(j);
    j = run_p2p("pipeline", 0);
    for (int r = 0; r < 3 && j; r++)
        EXPECT_U64(op(j, r, r == 0 ? 0 : 1).dev_end, 9 * MS / 10, "pipeline send: one flow per port");
    sim_free(j);
    return finish("test_sim_nics");
}

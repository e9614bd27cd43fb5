/* NCCL's collectives and send/recv: which algorithm and protocol NCCL picks
 * for a size and topology, and how long that takes.
 *
 * The structure follows NCCL's own tuning model (src/graph/tuning.cc,
 * NCCL 2.19-2.28, read for its rules; the code here is ours): for every
 * enabled algorithm (ring, tree, NVLS, NVLS tree, PAT) and protocol (LL,
 * LL128, Simple), time = latency + bytes / algorithm bandwidth, and NCCL
 * runs the fastest. Latency = a base per (algorithm, protocol) plus one hop
 * per step, the hop depending on the link (NVLink, PCIe, network); the bus
 * bandwidth a ring reaches is the slowest link's, and each protocol keeps a
 * share of it (LL moves 8 bytes of flags per 8 of data: at most half, and a
 * per-GPU-generation cap; LL128 120 of 128 bytes). Bus bandwidth becomes
 * algorithm bandwidth by the ring's steps (n / (2(n-1)) for all-reduce).
 *
 * Where the figures come from (two constants are fitted, each on one
 * curve; the other nccl-tests curves the fidelity suite judges are held
 * out, fidelity/collectives.sh):
 *   - base and per-hop latencies, LL bandwidth caps, NVLS efficiency per
 *     GPU generation, the tree's size correction: NCCL's tuning constants,
 *     with which the algorithm and protocol are chosen, as NCCL chooses.
 *   - one LL step of a ring or tree inside an NVLink node, as the chosen
 *     pair is priced: 1.0 us (LL_STEP_NVLINK_US), fitted on the 8 x B200
 *     all-gather's smallest size.
 *   - the share of NVLink line rate a Simple ring reaches: NCCL's own
 *     NVLink figure per link and generation (ring_eff_nvlink): 20.6 GB/s x
 *     18 = 370 of 450 on SM90 (NCCL's maintainer: "ring busbw ~370 GB/s",
 *     nccl-tests #212), 20 x 12 = 240 of 300 on SM80, 40.1 x 18 = 722 of
 *     900 on SM100.
 *   - a NIC reaches 0.92 of its line rate (NDR 400 Gb/s: 46 of 50 GB/s,
 *     nccl-tests #290).
 *   - one send/recv reaches 0.65 of NVLink line rate: 195 of 300 GB/s on
 *     8 A100 (sendrecv_perf, li-plus/playground cuda/nccl.md); below that,
 *     the channels NCCL splits it over (p2p_nvlink_channels: NCCL's rule).
 *   - every operation is a kernel and pays the GPU's launch latency
 *     (perf.launch_ns, hwspecs/gpus: published per GPU).
 *   - the pipeline fill (PIPELINE_FILL_US): fitted on the 8 x A100
 *     all-reduce curve, see there; inside a node its bytes scale with the
 *     NVLink count (hwspecs), not the rate (ring_window). NVLS below the
 *     bytes in flight moves at half its rate (nvls_fill: a structural
 *     assumption, chosen after seeing that a ring's fill put forced-NVLS
 *     H100/H200 runs 60-77 % low at 64 KiB-16 MiB; no constant fitted).
 * The job's NCCL_ALGO / NCCL_PROTO narrow the choice (nccl_env.c).
 * Costs: a few hundred ns per estimate (15 algorithm/protocol pairs, no
 * allocation; est_bench est_analytical_allreduce_ns_per_op).
 *
 * Byte volumes follow NCCL's counts: all-reduce, broadcast and reduce move a
 * buffer of `bytes`; all-gather's count is what each rank sends (the output
 * is n times that), reduce-scatter's what each receives (the input is n
 * times that); all-to-all's count is per peer (each rank sends n-1 such
 * pieces away); gather and scatter move n-1 pieces through the root; a
 * send/recv moves its message.
 */
#include <math.h>
#include <string.h>

#include "est_internal.h"

/* the order nccl_env.c numbers them in */
enum { A_TREE, A_RING, A_NVLS, A_NVLS_TREE, A_PAT, A_N };
enum { P_LL, P_LL128, P_SIMPLE, P_N };
enum { HW_NVLINK, HW_PCI, HW_NET };
enum { G_VOLTA, G_AMPERE, G_HOPPER, G_BLACKWELL };

static const char *const algo_names[A_N] = { "tree", "ring", "nvls", "nvls_tree", "pat" };
static const char *const proto_names[P_N] = { "LL", "LL128", "Simple" };

/* Base latency per (algorithm, protocol), us (NCCL's baseLatencies). */
static const double base_lat[A_N][P_N] = {
    { 6.8, 14.0, 8.4 }, { 6.6, 14.0, 8.4 }, { 0, 0, 0 }, { 0, 0, 0 }, { 8.0, 8.0, 8.0 },
};
/* Latency of one step over each kind of link, us (NCCL's hwLatencies). */
static const double hw_lat[3][A_N][P_N] = {
    { { .6, 1.25, 4.0 }, { .6, 1.9, 3.4 }, { 0, 0, 25 }, { 0, 0, 25 }, { 0, 0, 4.0 } },   /* NVLink */
    { { 1.0, 1.9, 4.0 }, { 1.0, 2.5, 5.7 }, { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 4.0 } },     /* PCIe */
    { { 5.0, 8.5, 14 }, { 2.7, 4.0, 14.0 }, { 0, 0, 18 }, { 0, 0, 14 }, { 0, 0, 14 } },    /* network */
};
/* One step of an LL ring or tree inside an NVLink node, us: the data and
 * its flags stored into the next GPU's buffer, seen there by its polling
 * warps, reduced or copied and stored onward. NCCL's tuning table has 0.6
 * (hw_lat above), a figure for ranking algorithms; measured, one step takes
 * 1.0: an all-gather of 128 bytes on 8 B200s (NVSwitch, one process a GPU)
 * took 16.12 us, which is NCCL's base latency (6.6) and a launch (2.5) and
 * 7 steps of 1.0 (fitted there, on that curve's smallest size alone; the
 * all-reduce and reduce-scatter curves and the two-node one judge it,
 * fidelity/collectives.sh). A single send/recv is one store and a poll, no
 * step of a ring: it keeps NCCL's figure (8 bytes in 10 us on the same
 * GPUs: 6.6 + 0.6 + 2.5). */
#define LL_STEP_NVLINK_US 1.0
/* Most bus bandwidth LL reaches, GB/s, by generation (one node; NCCL's llMaxBws). */
static const double ll_max_bw[4] = { 39.0, 87.7, 141.0, 282.0 };
/* ... and between nodes (NCCL's figures for Intel hosts, 2 and more nodes). */
static const double ll_max_bw_net[2] = { 39.0, 20.4 };
/* Share of the link NVLink SHARP reaches, by generation (NCCL's nvlsEfficiency). */
static const double nvls_eff[4] = { 0, 0, 0.85, 0.74 };
/* Channels NVLS spreads over (one is the head's): (n-1)/n of it carries data. */
#define NVLS_CHANNELS 16

/* The bandwidth per NVLink NCCL assumes, by generation (src/graph/topo.h
 * SM70/80/86/90/100_NVLINK_BW: 20, 20, 12, 20.6, 40.1 GB/s). */
static double nvlink_bw(int gen, int major, int minor)
{
    if (major == 8 && minor >= 6)
        return 12.0;
    static const double bw[4] = { 20.0, 20.0, 20.6, 40.1 };
    return bw[gen];
}

/* Share of NVLink's line rate a Simple ring reaches: nvlink_bw over the
 * link's rate per direction (NVLink 2/3/4: 25 GB/s, NVLink 5: 50; A40's
 * bridge: 4 links, 56.25 GB/s). */
static double ring_eff_nvlink(int gen, int major, int minor)
{
    static const double rate[4] = { 25, 25, 25, 50 };
    double link = major == 8 && minor >= 6 ? 56.25 / 4 : rate[gen];
    return nvlink_bw(gen, major, minor) / link;
}

/* Share of line rate: a NIC; one send/recv over NVLink, its rank sending
 * and receiving at once (both ways) or only one of the two (see
 * p2p_nvlink_channels). */
#define NIC_EFF 0.92
#define P2P_EFF_NVLINK 0.65
#define P2P_EFF_NVLINK_ONE_WAY 0.77
/* PCIe rings: as the estimator's calibration found for PCIe nodes (vidur's
 * pairwise A40/A100 VMs, estimator/data). */
#define RING_EFF_PCIE est_calib.ring_eff_pcie

/* Filling the pipeline: a Simple ring (or NVLS) moves data through
 * NCCL_STEPS slots of one chunk per channel, each step waiting for the
 * previous hop; until an operation is several times the bytes in flight
 * (channels x steps x chunk) it runs below its rate: bandwidth
 * S / (S + W) of the peak for a window of W bytes (LL128 alike). Fitted on
 * the 8 x A100 all-reduce curve alone (Azure ND A100 v4, sizes of 4 MiB and
 * more, where rings run LL128 and Simple): W = PIPELINE_FILL_US at A100's
 * ring rate, 68 us x 240 GB/s = 16 MiB over its 12 NVLinks (24 rings of
 * 8 steps x 85 KiB).
 * Inside a node NCCL opens its rings by NVLink (two per link, up to its
 * channel limit) and each carries chunks of a fixed size, so the window
 * follows the node's NVLinks, not their rate: FILL_BYTES_PER_NVLINK each
 * (ring_window). H100 (18 links at 20.6 GB/s) fills it in about the same
 * 68 us as A100; B200 has the same 18 links at twice the rate and fills it
 * in half the time (34 us). Between nodes, and on PCIe, the window is still
 * PIPELINE_FILL_US at the ring's rate (nothing measured says otherwise).
 * H100, H200, B200 and the other collectives judge it
 * (fidelity/collectives.sh). */
#define PIPELINE_FILL_US 68.0
#define FILL_BYTES_PER_NVLINK (PIPELINE_FILL_US * 240e3 / 12)

/* Sends below this size use LL (NCCL_P2P_LL_THRESHOLD; per channel from
 * NCCL 2.23). */
#define P2P_LL_THRESHOLD 16384

/* Send/recv over NVLink inside a node, as NCCL 2.23-2.28 splits it
 * (src/enqueue.cc addP2pToPlan, src/graph/paths.cc): a peer gets
 * pow2(2 x NVLinks) channels at most (32 on A100, H100 and B200), capped by
 * the P2P_CHANNELS the communicator has, and each send of a communicator of
 * n ranks starts on the largest power of two with n of them fitting
 * (4 of 32 for 8 ranks, 16 for 2). A send is cut into parts of at least
 * a chunk / 8, one per channel, and the channels double while a part is
 * over 32 chunks. Where the rank both sends and receives in the group
 * (MAYA_COLL_BOTH_WAYS: a ring shift, a pipeline's send-forward-receive-
 * backward) a round's send and receive share its channels and each
 * channel's warps are split between them: one channel moves half of NCCL's
 * figure for one NVLink, 20 GB/s on B200, and no more than P2P_EFF_NVLINK
 * of the link in all.
 * So an 8-rank send/recv of 8 to 64 MiB moves at 80 GB/s on B200 and
 * doubles from there to 585 GB/s (0.65 of 900) at 512 MiB, as measured (the
 * B200 curve, fidelity/data, is held out: nothing here was fitted to it).
 * The same rule on 8 A100s (4 channels of 10 GB/s) gives 80, 160, 195 and
 * 195 GB/s at 128 MiB to 1 GiB against 111, 189, 193 and 195 measured
 * (sendrecv_perf -g 8, li-plus/playground cuda/nccl.md, whose 1 GiB figure
 * set P2P_EFF_NVLINK).
 * A send or a receive alone has all of a channel's warps: NCCL's whole
 * figure per channel (16 channels of 20.6 GB/s, 330 GB/s, for a 2-rank
 * communicator of H100s), and at most P2P_EFF_NVLINK_ONE_WAY of the link:
 * vidur's one-way send/recv between 2 GPUs of a DGX (estimator/data/
 * sendrecv.csv, the learned model's training data) levels off at 228 GB/s
 * on A100 and 345 on H100 at 61 MiB, 0.76 and 0.77 of the line rate, which
 * set the share; H100's 337 GB/s at 31 MiB, below that level, checks the
 * per-channel figure (the half figure gave 154).
 * P2P_CHANNELS: the "32 p2p channels" NCCL reports on DGX A100 and H100
 * nodes (its MAXCHANNELS up to 2.21). */
#define P2P_CHANNELS 32
#define P2P_NVL_CHUNK (512.0 * 1024) /* NCCL_P2P_NVL_CHUNKSIZE */

/* The tree's bandwidth correction for medium sizes, by log2(bytes / 64)
 * (NCCL's treeCorrectionFactor: trees fall below the model there). */
static const double tree_corr[P_N][23] = {
    { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0 },
    { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0 },
    { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9 },
};

/* What the communicator runs on. */
struct topo {
    int n, nodes, ppn;          /* ranks, nodes, most ranks on a node */
    int gen;                    /* G_* */
    int intra_hw;               /* HW_NVLINK or HW_PCI */
    int nvls;                   /* NVLink SHARP usable on the node */
    double intra_bus;           /* GB/s a Simple ring reaches inside a node (per GPU, per direction) */
    double inter_bus;           /* GB/s a ring reaches between nodes: the node's NICs the members use */
    double ring_bus;            /* the slower of the two that the ring crosses */
    double p2p_intra, p2p_inter; /* GB/s of one send/recv inside a node, across */
    double p2p_intra_one_way;   /* ... inside a node, its rank not also receiving (sending) */
    double nvl_bw;              /* NCCL's figure for one NVLink, GB/s (0: no NVLink ring) */
    int comm_n;                 /* ranks of the communicator (a send/recv's too) */
    double net_lat;             /* one network hop of the cluster, us */
};

static int log2i(double x)
{
    int l = 0;
    while (x >= 2) {
        x /= 2;
        l++;
    }
    return l;
}

static void topo_get(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c, const struct est_desc *d,
                     struct topo *t)
{
    struct est_links l;
    est_links_get(g, c, &l);
    memset(t, 0, sizeof *t);
    t->n = d->nranks > 1 ? d->nranks : 1;
    t->nodes = d->nodes > 1 ? d->nodes : 1;
    t->ppn = d->ranks_per_node > 0 ? d->ranks_per_node : (t->n + t->nodes - 1) / t->nodes;
    int major = g->prop.major;
    t->gen = major >= 10 ? G_BLACKWELL : major == 9 ? G_HOPPER : major == 8 ? G_AMPERE : G_VOLTA;
    double pcie = g->perf.pcie_gbps > 0 ? g->perf.pcie_gbps : 16;
    /* NVLink carries the ring when every GPU reaches its neighbours over
     * it: a switch, or a bridged pair */
    int nvlink = l.intra == MAYA_LINK_NVSWITCH || (l.intra == MAYA_LINK_PAIRWISE && t->ppn <= 2);
    t->intra_hw = nvlink ? HW_NVLINK : HW_PCI;
    t->intra_bus = nvlink ? l.intra_gbps * ring_eff_nvlink(t->gen, major, g->prop.minor) : pcie * RING_EFF_PCIE;
    t->p2p_intra = nvlink ? l.intra_gbps * P2P_EFF_NVLINK : pcie * RING_EFF_PCIE;
    t->p2p_intra_one_way = nvlink ? l.intra_gbps * P2P_EFF_NVLINK_ONE_WAY : t->p2p_intra;
    t->nvl_bw = nvlink ? nvlink_bw(t->gen, major, g->prop.minor) : 0;
    t->comm_n = d->comm_ranks > t->n ? d->comm_ranks : t->n;
    t->nvls = l.nvls && l.intra == MAYA_LINK_NVSWITCH && t->gen >= G_HOPPER && t->ppn >= 2;
    /* between nodes: the NICs the node's members send through (rails: one
     * each; a DGX-1V's pairs share one) */
    int nics = 1;
    double nic = c && c->nic_gbps > 0 ? c->nic_gbps : 50;
    if (c && c->nics_per_node > 0) {
        unsigned char seen[MAYA_NODE_GPUS_MAX] = { 0 };
        nics = 0;
        for (int i = 0; i < t->ppn && i < MAYA_NODE_GPUS_MAX; i++) {
            int k = maya_cluster_nic_of(c, i % (c->gpus_per_node > 0 ? c->gpus_per_node : 1));
            if (!seen[k]) {
                seen[k] = 1;
                nics++;
            }
        }
    }
    t->inter_bus = nics * nic * NIC_EFF;
    t->p2p_inter = nic * NIC_EFF;
    t->net_lat = l.inter_lat_us;
    t->ring_bus = t->nodes > 1 ? (t->ppn > 1 ? fmin(t->intra_bus, t->inter_bus) : t->inter_bus) : t->intra_bus;
}

static int pow2_up(int x)
{
    int p = 1;
    while (p < x)
        p *= 2;
    return p;
}

static int p2p_nvlink_channels(const struct topo *t, double bytes)
{
    int links = (int)(t->intra_bus / t->nvl_bw + 0.5);
    int per_peer = pow2_up(2 * (links > 1 ? links : 1));
    if (per_peer > P2P_CHANNELS)
        per_peer = P2P_CHANNELS;
    int first = per_peer;
    while (first * t->comm_n > P2P_CHANNELS && first > 1)
        first /= 2;
    double min_part = P2P_NVL_CHUNK / 8, max_part = P2P_NVL_CHUNK * 32;
    int nch = (int)fmin(first, fmax(1, ceil(bytes / min_part)));
    double part = fmax(min_part, ceil(bytes / nch));
    while (part > max_part && nch <= per_peer / 2) {
        nch *= 2;
        part = ceil(bytes / nch);
    }
    return nch;
}

/* The share of its peak a Simple or LL128 operation of `bytes` reaches
 * with `window` bytes in flight (LL moves 8-byte lines with their flags:
 * no deep pipeline). */
static double channel_fill(double bytes, double window)
{
    return bytes / (bytes + window);
}

/* The window that takes PIPELINE_FILL_US to move at `bus_gbps` (the
 * fitted form, for links whose rings are not counted by NVLink). */
static double time_window(double bus_gbps)
{
    return PIPELINE_FILL_US * bus_gbps * 1e3;
}

/* The bytes a ring or tree keeps in flight: inside an NVLink node, its
 * NVLinks' worth (PIPELINE_FILL_US above); elsewhere the time-based window
 * at the ring's rate. */
static double ring_window(const struct topo *t)
{
    if (t->nodes == 1 && t->intra_hw == HW_NVLINK && t->nvl_bw > 0)
        return FILL_BYTES_PER_NVLINK * (int)(t->intra_bus / t->nvl_bw + 0.5);
    return time_window(t->ring_bus);
}

/* The same for NVLS. There is no ring of hops to fill: each chunk is
 * reduced through the switch (multimem loads) and multicast back (stores),
 * two transfers one after the other (one node: NVLS; NVLS tree adds a tree
 * between nodes, which fills as a ring does). A message smaller than the bytes in
 * flight is all in flight at once and moves at half the peak (its chunks'
 * two halves do not overlap); beyond that it fills as the time-based window
 * PIPELINE_FILL_US at its rate says (NVLS has its own 16 channels and chunk
 * size: the rings' NVLink count does not apply). (NCCL's
 * own model has no fill for NVLS: 25 us plus the bytes at full rate.)
 * Without this, a job that forces NVLS (NCCL_ALGO=NVLS) pays a ring's fill
 * of ~100 us on every small message: 60-77 % below the measured H100/H200
 * curves from 64 KiB to 16 MiB. */
static double nvls_fill(double bytes, double bus_gbps)
{
    return bytes / (bytes + fmin(bytes, time_window(bus_gbps)));
}

/* Bus bandwidth of a ring-like algorithm at protocol p, GB/s. */
static double proto_bus(const struct topo *t, double bus, int p)
{
    double llmax = t->nodes == 1 ? ll_max_bw[t->gen] : ll_max_bw_net[t->nodes > 2];
    if (p == P_LL)
        return fmin(llmax, bus * 0.5);
    if (p == P_LL128)
        return bus * 0.92;
    return bus;
}

/* LL128 needs NVLink inside the node (NCCL enables it up to NVLink paths). */
static int proto_ok(const struct topo *t, int p)
{
    return p != P_LL128 || t->intra_hw == HW_NVLINK;
}

/* One (algorithm, protocol) for an all-reduce, all-gather, reduce-scatter,
 * broadcast or reduce of `bytes` (NCCL's nBytes: the whole buffer): its
 * time in us, or -1 when NCCL would not use it; *lat_us: the part of it
 * that is latency, not bytes. `measured`: an LL step inside an NVLink node
 * takes the measured LL_STEP_NVLINK_US; 0: NCCL's own figure, with which
 * NCCL chooses. */
static double algo_time(const struct topo *t, int coll, int a, int p, double bytes, int measured, double *lat_us)
{
    int n = t->n, N = t->nodes, ar = coll == MAYA_COLL_ALLREDUCE;
    int agrs = coll == MAYA_COLL_ALLGATHER || coll == MAYA_COLL_REDUCESCATTER;
    int nsteps = ar ? 2 * (n - 1) : agrs ? n - 1 : n;
    if (!proto_ok(t, p))
        return -1;
    double lat = base_lat[a][p], bus, algbw;
    double intra_lat = measured && t->intra_hw == HW_NVLINK && p == P_LL && (a == A_RING || a == A_TREE)
                           ? LL_STEP_NVLINK_US : hw_lat[t->intra_hw][a][p];
    /* with one GPU per node every step crosses the network at the tree's cost */
    double inter_lat = hw_lat[HW_NET][t->ppn == 1 ? A_TREE : a][p] + t->net_lat * (p == P_SIMPLE ? 2 : 1);
    switch (a) {
    case A_RING: {
        if (N > 1)
            intra_lat = fmax(intra_lat, p == P_SIMPLE ? 3.0 : 1.0); /* network post overhead per step */
        int ninter = N == 1 ? 0 : ar ? 2 * (N - 1) : N - 1;
        if (coll == MAYA_COLL_BROADCAST || coll == MAYA_COLL_REDUCE)
            lat += (n - 1) * (N > 1 ? inter_lat : intra_lat); /* a pipelined chain */
        else
            lat += (nsteps - ninter) * intra_lat + ninter * inter_lat;
        bus = proto_bus(t, t->ring_bus, p);
        if (p != P_LL)
            bus *= channel_fill(bytes, ring_window(t));
        algbw = bus * n / nsteps;
        if (ar && p == P_SIMPLE && N > 1)
            lat *= t->gen >= G_AMPERE ? 1.4 : 1.9; /* the ring's plateau between nodes (NCCL) */
        break;
    }
    case A_TREE: {
        if (!ar)
            return -1;
        lat += 2 * ((t->ppn - 1) * intra_lat + log2i(N) * inter_lat);
        bus = t->ring_bus * 0.92;
        if (p == P_LL)
            bus = fmin(bus / 3.8, t->nodes == 1 ? ll_max_bw[t->gen] : ll_max_bw_net[N > 2]);
        else if (p == P_LL128)
            bus *= (N == 1 ? 7.0 / 9.0 : 120.0 / 128.0) * channel_fill(bytes, ring_window(t));
        else
            bus *= channel_fill(bytes, ring_window(t));
        int ls = log2i(bytes / 64);
        if (ls < 23)
            bus *= tree_corr[p][ls];
        algbw = bus * 0.5;
        break;
    }
    case A_NVLS: case A_NVLS_TREE: {
        if (!t->nvls || p != P_SIMPLE || (!ar && !agrs) || (a == A_NVLS) != (N == 1) || (a == A_NVLS_TREE && !ar))
            return -1;
        /* the switch reduces (multimem loads) and multicasts (stores): an
         * all-reduce moves its buffer once each way per GPU instead of
         * 2(n-1)/n times; all-gather/reduce-scatter gain nothing over a ring */
        double link = t->intra_bus * nvls_eff[t->gen] * (NVLS_CHANNELS - 1) / NVLS_CHANNELS;
        algbw = ar ? link : link * (t->ppn - 1) / t->ppn * n / nsteps;
        if (a == A_NVLS_TREE) /* the tree between nodes runs on the NICs */
            algbw = fmin(algbw, t->inter_bus * (N <= 2 ? 2 : 1) * n / nsteps);
        /* NVLS tree also pipelines chunks through a tree of NICs between
         * nodes: it fills as a ring does */
        algbw *= a == A_NVLS ? nvls_fill(bytes, t->intra_bus) : channel_fill(bytes, time_window(t->intra_bus));
        lat = intra_lat + (a == A_NVLS_TREE ? 2 * log2i(N) * inter_lat : 0);
        break;
    }
    case A_PAT: {
        /* all-gather/reduce-scatter with one GPU per node */
        if (!agrs || p != P_SIMPLE || N == 1 || t->ppn != 1)
            return -1;
        lat += log2i(N) * (inter_lat / 3.5) + n * 2.8;
        algbw = t->ring_bus * 0.75 * channel_fill(bytes, ring_window(t)) * n / nsteps;
        break;
    }
    default:
        return -1;
    }
    if (!(algbw > 0))
        return -1;
    *lat_us = lat;
    return lat + bytes / (algbw * 1e3);
}

/* A send/recv-based operation (send/recv, all-to-all, gather, scatter):
 * one latency, then the busiest GPU's traffic: `intra` bytes to peers on its
 * node over NVLink (or PCIe), `inter` bytes to other nodes at one NIC's
 * rate, both at once; `largest` is the biggest single message (LL below
 * NCCL's threshold). */
static double p2p_time(const struct topo *t, double intra, double inter, double largest, int channels,
                       int one_way, struct est_coll_plan *plan)
{
    int p = largest <= P2P_LL_THRESHOLD * (channels > 0 ? channels : 1) ? P_LL : P_SIMPLE;
    int net = inter > 0;
    double lat = base_lat[A_RING][p] + (net ? hw_lat[HW_NET][A_RING][p] + t->net_lat : hw_lat[t->intra_hw][A_RING][p]);
    double bw_intra = t->p2p_intra, bw_inter = t->p2p_inter;
    if (channels > 0) /* one send over NVLink on `channels` channels, at most P2P_EFF_NVLINK(_ONE_WAY) */
        bw_intra = one_way ? fmin(channels * t->nvl_bw, t->p2p_intra_one_way)
                           : fmin(channels * t->nvl_bw / 2, t->p2p_intra);
    if (p == P_LL) {
        bw_intra = fmin(bw_intra * 0.5, ll_max_bw[t->gen]);
        bw_inter = fmin(bw_inter * 0.5, ll_max_bw_net[0]);
    }
    double us = lat + fmax(intra / (bw_intra * 1e3), inter / (bw_inter * 1e3));
    if (plan) {
        plan->algo = "p2p";
        plan->proto = proto_names[p];
        plan->lat_us = lat;
    }
    return us;
}

/* The CTAs an all-reduce, all-gather, reduce-scatter, broadcast or reduce
 * of nbytes (NCCL's nBytes) runs on algorithm a and protocol p, one per
 * channel (src/enqueue.cc, topoGetAlgoInfo): NVLS its own channels (16 on
 * Hopper; on Blackwell 24 inside a node, 32 across nodes:
 * src/transport/nvls.cc); a ring or tree the communicator's, two per
 * NVLink up to NCCL's 32 (24 on an A100's 12 links; 2 per NIC without
 * NVLink), fewer while the bytes are under channels x threads x
 * threadThreshold (512 threads; 64 bytes each for Simple, 8 x ranks for a
 * ring's LL; 640 threads of 8 bytes for LL128). Each CTA's 512-640
 * threads take most of an SM's registers, so no other kernel's block
 * shares its SM while it runs. */
static int coll_ctas(const struct topo *t, int a, int p, double nbytes)
{
    if (a == A_NVLS || a == A_NVLS_TREE)
        return t->gen < G_BLACKWELL ? 16 : t->nodes > 1 ? 32 : 24;
    int links = t->nvl_bw > 0 ? (int)(t->intra_bus / t->nvl_bw + 0.5) : 0;
    int nc = links > 0 ? (2 * links < 32 ? 2 * links : 32) : 2;
    double per = p == P_LL128 ? 640.0 * 8 : p == P_LL ? 512.0 * 8 * (a == A_RING ? t->n : 1) : 512.0 * 64;
    while (nc > 1 && nbytes < nc * per)
        nc--;
    return nc;
}

double est_coll_ns(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c, const struct est_desc *d,
                   struct est_coll_plan *plan)
{
    struct topo t;
    topo_get(g, c, d, &t);
    struct est_coll_plan dummy;
    if (!plan)
        plan = &dummy;
    memset(plan, 0, sizeof *plan);
    double s = d->bytes, floor_us = (g->perf.kernel_floor_ns > 0 ? g->perf.kernel_floor_ns : 2000) / 1e3;
    /* NCCL's latencies are those of the algorithm's steps; every operation
     * is also a kernel, which starts a launch latency after its stream gets
     * to it (perf.launch_ns, published per GPU), on every member */
    double launch_us = (g->perf.launch_ns > 0 ? g->perf.launch_ns : 2500) / 1e3;
    int n = t.n, op = d->coll_op;
    if (d->family == EST_SENDRECV) {
        int across = t.nodes > 1;
        int channels = !across && t.nvl_bw > 0 ? p2p_nvlink_channels(&t, s) : 0;
        double us = p2p_time(&t, across ? 0 : s, across ? s : 0, s, channels, !d->both_ways, plan) + launch_us;
        plan->bytes = s;
        plan->lat_us += launch_us;
        return fmax(us, floor_us) * 1e3;
    }
    if (n <= 1) {
        plan->algo = "local";
        plan->proto = "-";
        return floor_us * 1e3; /* one member: a local copy at most */
    }
    /* peers of one rank: on its node, on others */
    double local_peers = t.ppn - 1, remote_peers = n - t.ppn;
    if (op == MAYA_COLL_ALLTOALL || op == MAYA_COLL_GATHER || op == MAYA_COLL_SCATTER) {
        /* all-to-all: every rank sends a piece to each peer at once, its
         * node's NICs shared by the node's members; gather/scatter: the
         * root receives or sends them all, through its own NIC */
        double nic = t.p2p_inter;
        if (op == MAYA_COLL_ALLTOALL && t.nodes > 1)
            nic = fmin(nic, t.inter_bus / t.ppn);
        double inter = remote_peers * s * (nic > 0 ? t.p2p_inter / nic : 1);
        double us = p2p_time(&t, local_peers * s, inter, s, 0, 0, plan) + launch_us;
        plan->bytes = n * s;
        plan->lat_us += launch_us;
        return fmax(us, floor_us) * 1e3;
    }
    /* NCCL's nBytes: the whole buffer */
    double nbytes = op == MAYA_COLL_ALLGATHER || op == MAYA_COLL_REDUCESCATTER ? s * n : s;
    /* the job's NCCL_ALGO / NCCL_PROTO narrow the choice, as in NCCL; when
     * they leave nothing this op can use, NCCL's own choice stands (an
     * NCCL_ALGO=NVLS benchmark on A100s ran ring and tree). The choice is
     * made with NCCL's latencies, the time is what the chosen pair takes */
    double best = -1, free_best = -1, lat = 0, best_lat = 0, free_lat = 0;
    int ba = A_RING, bp = P_SIMPLE, fa = A_RING, fp = P_SIMPLE; /* the pairs that gave them */
    for (int a = 0; a < A_N; a++)
        for (int p = 0; p < P_N; p++) {
            double us = algo_time(&t, op, a, p, nbytes, 0, &lat);
            if (us < 0)
                continue;
            if (free_best < 0 || us < free_best)
                free_best = us, fa = a, fp = p, free_lat = lat;
            if (est_nccl_env_allows(op, a, p) && (best < 0 || us < best))
                best = us, ba = a, bp = p, best_lat = lat;
        }
    if (best < 0 && free_best >= 0) /* the variables leave nothing: NCCL's own choice */
        best = free_best, ba = fa, bp = fp, best_lat = free_lat;
    plan->narrowed = best > free_best;
    if (best < 0) /* nothing applies (an op NCCL does not have): a Simple ring, ba and bp as set */
        best = algo_time(&t, MAYA_COLL_ALLREDUCE, A_RING, P_SIMPLE, nbytes, 1, &best_lat);
    else
        best = algo_time(&t, op, ba, bp, nbytes, 1, &best_lat);
    plan->algo = algo_names[ba];
    plan->proto = proto_names[bp];
    plan->ctas = coll_ctas(&t, ba, bp, nbytes);
    plan->bytes = nbytes;
    double us = fmax(best + launch_us, floor_us);
    plan->lat_us = fmin(best_lat + launch_us, us);
    return us * 1e3;
}

double est_peer_copy_gbps(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c)
{
    struct est_desc d = { .family = EST_SENDRECV, .nranks = 2, .nodes = 1, .ranks_per_node = 2 };
    struct topo t;
    topo_get(g, c, &d, &t);
    return t.p2p_intra;
}

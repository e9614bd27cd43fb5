/* The nodes' NICs and the GPUs' ports, and the transfers that share them.
 *
 * Every node has nics_per_node NICs; GPU g of a node sends through NIC
 * nic_of_gpu[g] (the cluster file's list: one per GPU on rail-optimised
 * DGX nodes, shared in pairs on a DGX-1V, one for all on a PCIe server). A
 * transfer between nodes (a flow) uses the NICs of its members' GPUs: a
 * send/recv the sender's and the receiver's, a collective every member's.
 * A flow's estimate (dev_ns) is its time alone on those NICs; flows meeting
 * on a NIC share it (processor sharing): a flow progresses at 1/k of its
 * rate, k being the most flows on any NIC it uses. Flows on other NICs do
 * not slow it: the data-parallel all-reduces of GPUs 0..7 of a DGX run on
 * rails 0..7 side by side, while two flows of one GPU (or of the two GPUs
 * of a DGX-1V's NIC) share theirs.
 *
 * A send/recv inside a node is a flow too, on the sender's port out and the
 * receiver's port in (NVLink or PCIe, one each way per GPU): the sends of an
 * all-to-all made of grouped send/recv (PyTorch's all_to_all) share each
 * GPU's link, while a pipeline stage sending forward and receiving from
 * behind uses two directions and is not slowed. Only the bandwidth part of
 * a send/recv is shared; its latency (the estimator's fixed_ns) is not.
 * Collectives inside a node are not flows: their estimate stands alone.
 *
 * State: per NIC the flows on it (pairs flow, slot), per flow the NICs it
 * uses (pairs NIC, position in that NIC's list), so that a flow joins or
 * leaves a NIC in O(1). Completion times of the flows live in their own
 * indexed min-heap (position kept in the flow), keyed like the event queue
 * by (time, sequence) with the event queue's sequence counter: a flow whose
 * rate changes moves in place, so no stale completion events accumulate.
 *
 * Costs: a flow starting or ending touches the flows that share one of its
 * NICs (the affected set A) and, for each of them, the NICs it uses:
 * O(sum over A of its NICs + |A| log F) for F flows running; flows on other
 * NICs are not visited. Memory: 8 bytes per (flow, NIC) pair and per NIC.
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <math.h>
#include <string.h>

#include "maya/common.h"

#define SIM_MAX_LINKS (1 << 24)

/* ---- the flows' completion heap ---- */

static inline int flow_before(const struct sim_xfer *a, const struct sim_xfer *b)
{
    return a->due < b->due || (a->due == b->due && a->due_seq < b->due_seq);
}

static void fheap_set(struct sim_job *j, uint32_t pos, uint32_t xi)
{
    j->fheap[pos] = xi;
    j->xfers[xi].hpos = pos + 1;
}

static void fheap_up(struct sim_job *j, uint32_t pos)
{
    uint32_t xi = j->fheap[pos];
    while (pos > 0) {
        uint32_t parent = (pos - 1) / 2;
        if (!flow_before(&j->xfers[xi], &j->xfers[j->fheap[parent]]))
            break;
        fheap_set(j, pos, j->fheap[parent]);
        pos = parent;
    }
    fheap_set(j, pos, xi);
}

static void fheap_down(struct sim_job *j, uint32_t pos)
{
    uint32_t xi = j->fheap[pos], n = j->nfheap;
    for (;;) {
        uint32_t c = 2 * pos + 1;
        if (c >= n)
            break;
        if (c + 1 < n && flow_before(&j->xfers[j->fheap[c + 1]], &j->xfers[j->fheap[c]]))
            c++;
        if (!flow_before(&j->xfers[j->fheap[c]], &j->xfers[xi]))
            break;
        fheap_set(j, pos, j->fheap[c]);
        pos = c;
    }
    fheap_set(j, pos, xi);
}

/* Put flow xi in the heap at its (due, due_seq), or move it there. */
static int fheap_update(struct sim_job *j, uint32_t xi)
{
    struct sim_xfer *x = &j->xfers[xi];
    if (!x->hpos) {
        if (SIM_GROW(j->fheap, j->capfheap, j->nfheap + 1) < 0)
            return -1;
        fheap_set(j, j->nfheap++, xi);
    }
    uint32_t pos = x->hpos - 1;
    fheap_up(j, pos);
    fheap_down(j, j->xfers[xi].hpos - 1);
    return 0;
}

static void fheap_remove(struct sim_job *j, uint32_t xi)
{
    struct sim_xfer *x = &j->xfers[xi];
    if (!x->hpos)
        return;
    uint32_t pos = x->hpos - 1, last = j->fheap[--j->nfheap];
    x->hpos = 0;
    if (last == xi)
        return;
    fheap_set(j, pos, last);
    fheap_up(j, pos);
    fheap_down(j, j->xfers[last].hpos - 1);
}

int sim_nic_peek(const struct sim_job *j, uint64_t *t, uint64_t *seq, uint32_t *xi)
{
    if (!j->nfheap)
        return 0;
    const struct sim_xfer *x = &j->xfers[j->fheap[0]];
    *t = x->due;
    *seq = x->due_seq;
    *xi = j->fheap[0];
    return 1;
}

/* ---- NICs ---- */

int sim_nic_setup(struct sim_job *j, const struct maya_cluster_spec *c)
{
    int gpn = j->gpus_per_node > 0 ? j->gpus_per_node : 1;
    /* The cluster's NICs when it describes these nodes; else one per GPU. */
    int same = c && c->nics_per_node > 0 && c->gpus_per_node == gpn;
    j->nics_per_node = same ? c->nics_per_node : c && c->nics_per_node > 0 ? c->nics_per_node : gpn;
    /* counts from a job trace: the links are checked before they size
     * anything (16 bytes each, 2^24 of them at most: 256 MiB) */
    uint64_t links = (uint64_t)MAYA_MAX(j->nodes, 0) * ((uint64_t)j->nics_per_node + 2 * (uint64_t)gpn);
    if (links > SIM_MAX_LINKS)
        return maya_error("a job of %d nodes of %d GPUs and %d NICs has %llu NICs and GPU ports: "
                          "expected at most %d", j->nodes, gpn, j->nics_per_node, (unsigned long long)links,
                          SIM_MAX_LINKS);
    j->gpu_nic = calloc((size_t)gpn, sizeof *j->gpu_nic);
    j->nnics = (uint32_t)j->nodes * (uint32_t)j->nics_per_node;
    j->nlinks = j->nnics + 2 * (uint32_t)j->nodes * (uint32_t)gpn;
    j->nics = calloc(j->nlinks ? j->nlinks : 1, sizeof *j->nics);
    if (!j->gpu_nic || !j->nics)
        return maya_error("out of memory for the nodes' NICs");
    for (int g = 0; g < gpn; g++)
        j->gpu_nic[g] = same ? maya_cluster_nic_of(c, g) : (int)((long)g * j->nics_per_node / gpn);
    return 0;
}

int sim_nic_of_gpu(const struct sim_job *j, int global_gpu)
{
    int gpn = j->gpus_per_node > 0 ? j->gpus_per_node : 1;
    if (global_gpu < 0)
        global_gpu = 0;
    int node = global_gpu / gpn;
    if (node >= j->nodes)
        node = j->nodes - 1;
    return node * j->nics_per_node + j->gpu_nic[global_gpu % gpn];
}

void sim_nic_free(struct sim_job *j)
{
    for (uint32_t i = 0; i < j->nlinks; i++)
        free(j->nics[i].ent);
    free(j->nics);
    free(j->gpu_nic);
    free(j->fheap);
    free(j->affected);
}

/* The links flow xi uses: a collective's communicator's NICs; a pair's two
 * NICs between nodes, or inside a node the sender's port out and the
 * receiver's port in. */
static int flow_nics(const struct sim_job *j, const struct sim_xfer *x, const int32_t **nics, int32_t pair[2])
{
    const struct sim_comm *c = &j->comms[x->comm];
    if (x->p2p) {
        uint64_t from = x->pair_key >> 44, to = (x->pair_key >> 24) & 0xfffff;
        if (c->member_node[from] != c->member_node[to]) {
            pair[0] = c->member_nic[from];
            pair[1] = c->member_nic[to];
        } else { /* -1 (no port) for a member no trace placed */
            pair[0] = c->member_gpu[from] < 0 ? -1 : (int32_t)(j->nnics + 2 * (uint32_t)c->member_gpu[from]);
            pair[1] = c->member_gpu[to] < 0 ? -1 : (int32_t)(j->nnics + 2 * (uint32_t)c->member_gpu[to] + 1);
        }
        *nics = pair;
        return pair[0] == pair[1] ? 1 : 2;
    }
    *nics = c->nics;
    return c->nnics;
}

/* 1 / the most flows on any NIC flow x uses. */
static double flow_rate(const struct sim_job *j, const struct sim_xfer *x)
{
    uint32_t most = 1;
    for (uint32_t k = 0; k < x->nslots; k++) {
        uint32_t n = j->nics[x->slots[2 * k]].n;
        if (n > most)
            most = n;
    }
    return 1.0 / most;
}

/* Gather the flows on flow xi's NICs (each once) into j->affected. */
static int collect(struct sim_job *j, uint32_t xi)
{
    struct sim_xfer *x = &j->xfers[xi];
    j->naffected = 0;
    j->epoch++;
    for (uint32_t k = 0; k < x->nslots; k++) {
        const struct sim_nic *nic = &j->nics[x->slots[2 * k]];
        for (uint32_t e = 0; e < nic->n; e++) {
            uint32_t f = nic->ent[2 * e];
            if (f == xi || j->xfers[f].mark == j->epoch)
                continue;
            j->xfers[f].mark = j->epoch;
            if (SIM_GROW(j->affected, j->capaffected, j->naffected + 1) < 0)
                return -1;
            j->affected[j->naffected++] = f;
        }
    }
    return 0;
}

/* Bring flow f's progress up to now at its old rate (none during its
 * latency); give it its new rate and, when that changed (or it is new), a
 * new completion time. */
static int reschedule(struct sim_job *j, uint32_t f, int fresh)
{
    struct sim_xfer *x = &j->xfers[f];
    uint64_t from = MAYA_MAX(x->last, x->fixed_until);
    if (!fresh && j->now > from) {
        x->remaining -= (double)(j->now - from) * x->rate;
        if (x->remaining < 0)
            x->remaining = 0;
    }
    x->last = j->now;
    double rate = flow_rate(j, x);
    if (!fresh && rate == x->rate)
        return 0;
    x->rate = rate;
    x->due = MAYA_MAX(j->now, x->fixed_until) + (uint64_t)ceil(x->remaining / rate);
    x->due_seq = j->heap.seq++;
    return fheap_update(j, f);
}

int sim_nic_flow_start(struct sim_job *j, uint32_t xi)
{
    struct sim_xfer *x = &j->xfers[xi];
    const int32_t *nics;
    int32_t pair[2];
    int n = flow_nics(j, x, &nics, pair);
    if (SIM_GROW(x->slots, x->capslots, 2 * (uint64_t)n) < 0)
        return maya_error("out of memory in the simulator");
    x->nslots = 0;
    for (int k = 0; k < n; k++) {
        if (nics[k] < 0 || (uint32_t)nics[k] >= j->nlinks)
            continue;
        struct sim_nic *nic = &j->nics[nics[k]];
        if (SIM_GROW(nic->ent, nic->cap, 2 * (uint64_t)(nic->n + 1)) < 0)
            return maya_error("out of memory in the simulator");
        nic->ent[2 * nic->n] = xi;
        nic->ent[2 * nic->n + 1] = x->nslots;
        x->slots[2 * x->nslots] = (uint32_t)nics[k];
        x->slots[2 * x->nslots + 1] = nic->n++;
        x->nslots++;
    }
    uint64_t fixed = MAYA_MIN(x->fixed_ns, x->dev_ns);
    x->fixed_until = j->now + fixed;
    x->remaining = (double)(x->dev_ns - fixed);
    x->rate = 1;
    if (collect(j, xi) < 0 || reschedule(j, xi, 1) < 0)
        return maya_error("out of memory in the simulator");
    for (uint32_t i = 0; i < j->naffected; i++)
        if (reschedule(j, j->affected[i], 0) < 0)
            return maya_error("out of memory in the simulator");
    return 0;
}

int sim_nic_flow_end(struct sim_job *j, uint32_t xi)
{
    struct sim_xfer *x = &j->xfers[xi];
    fheap_remove(j, xi);
    if (collect(j, xi) < 0)
        return maya_error("out of memory in the simulator");
    /* leave every NIC: the last entry of its list takes this one's place */
    for (uint32_t k = 0; k < x->nslots; k++) {
        struct sim_nic *nic = &j->nics[x->slots[2 * k]];
        uint32_t pos = x->slots[2 * k + 1], last = --nic->n;
        if (pos != last) {
            uint32_t f = nic->ent[2 * last], fslot = nic->ent[2 * last + 1];
            nic->ent[2 * pos] = f;
            nic->ent[2 * pos + 1] = fslot;
            j->xfers[f].slots[2 * fslot + 1] = pos;
        }
    }
    x->nslots = 0;
    for (uint32_t i = 0; i < j->naffected; i++)
        if (reschedule(j, j->affected[i], 0) < 0)
            return maya_error("out of memory in the simulator");
    return 0;
}

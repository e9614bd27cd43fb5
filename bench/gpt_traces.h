/* Rank traces of a GPT-shaped training job (Megatron-LM's layout and
 * schedule), written directly as binary records: what the emulator would
 * record for TP x PP x DP ranks running one or more iterations, at a cost of
 * one record copy per call plus the trace's compression, so that jobs of
 * tens of thousands of ranks can be built in seconds for the simulator's
 * benchmarks and tests.
 *
 * The job: rank = t + tp * (d + dp * p) (tensor fastest, then data, then
 * pipeline, as Megatron orders them), gpus_per_node GPUs per node. Each
 * micro-batch runs layers/pp transformer layers per stage (per layer forward:
 * layer norm, QKV GEMM, flash attention, projection GEMM, TP all-reduce,
 * bias-dropout-add, layer norm, FC1 GEMM, GeLU, FC2 GEMM, TP all-reduce,
 * bias-dropout-add; backward: the GEMMs' data and weight gradients, the
 * kernels' backward, two TP all-reduces), the first stage adds the
 * embedding, the last the logits GEMM and the cross entropy. Stages talk by
 * send/recv on their pipeline communicator in the 1F1B order (warm-up
 * forwards, then one forward and one backward, grouped as Megatron's
 * send_forward_recv_backward, then the cool-down backwards), on a stream of
 * their own behind events. The last backward of an iteration all-reduces the
 * gradients over the data-parallel group in buckets (buckets_per_layer per
 * layer, on a third stream, overlapping the backward), then the optimizer
 * runs and the host synchronises the device.
 *
 * Each iteration starts with an NVTX point named GPT_STEP_MARKER (for
 * --iteration-marker). Host gaps are gap_ns before each call (give or take
 * gap_jitter) and 1 us inside it; a straggler (slow_rank) has its gaps
 * multiplied by slow_factor.
 */
#ifndef MAYA_BENCH_GPT_TRACES_H
#define MAYA_BENCH_GPT_TRACES_H

#include <stdint.h>

#define GPT_STEP_MARKER "train_step"

struct gpt_shape {
    int tp, pp, dp;             /* parallel degrees: tp * pp * dp ranks */
    int gpus_per_node;
    int layers;                 /* transformer layers of the model (a multiple of pp) */
    int microbatches;           /* per iteration */
    int iterations;
    int64_t hidden, seq, micro_batch, vocab;
    int buckets_per_layer;      /* data-parallel all-reduces per layer's gradients */
    uint64_t gap_ns;            /* host work before each call */
    int slow_rank;              /* -1: none */
    double slow_factor;         /* its host gaps are this many times longer */
    double gap_jitter;          /* each gap varies by up to this fraction, per rank and call (as
                                   measured gaps do; deterministic) */
    int unique_ids;             /* each communicator's rank 0 calls ncclGetUniqueId before
                                   joining it, as NCCL programs do (0: nobody does) */
    char gpu[64];               /* hwspec key */
};

/* GPT-3 175B (96 layers, hidden 12288, sequence 2048, micro-batch 1) on
 * tp x pp x dp H100s, 8 micro-batches, one iteration. */
void gpt_shape_gpt3(struct gpt_shape *g, int tp, int pp, int dp);

/* Write rank-N.mtrace for every rank into dir (which must exist). 0, or -1
 * with a message. */
int gpt_write_traces(const struct gpt_shape *g, const char *dir);
/* One rank's trace. */
int gpt_write_rank(const struct gpt_shape *g, int rank, const char *path);

#endif

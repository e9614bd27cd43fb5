/* What a cuDNN backend graph's execution is traced as: the operations of
 * the plan's graph, each recognised one as a MAYA_REC_DNN.
 *
 * Recognised operations: convolutions (forward, backward data and filter),
 * matmuls, normalizations, and scaled dot-product attention, either as
 * cuDNN's SDPA operations or as the graph cuDNN's frontend builds for it
 * (Q.K^T, scale, causal mask from index generation and comparison,
 * softmax from reductions and exponentials, optional dropout, .V): one
 * record with q, k, v, o, the causal flag and the scale. Pointwise and
 * reduction operations around a main operation are fused into it in cuDNN's
 * kernels and get no record of their own; a graph of only such operations
 * gets one record (op POINTWISE or REDUCTION). nops = operations in the
 * graph.
 *
 * Shared by the emulated cuDNN (cudnnBackendExecute, graph.c) and the
 * passthrough profiler (emulator/profile/dnn_graph.c), which runs it on the
 * descriptors it followed: both write the same records for the same graph.
 * The caller writes each record (be_emit_fn): the call part, the stream. */
#ifndef MAYA_EMU_DNN_BE_TRACE_H
#define MAYA_EMU_DNN_BE_TRACE_H

#include "be_store.h"
#include "maya/trace_format.h"

/* What execution needs of the graph: its operations and the variant pack. */
struct be_exec {
    struct be_desc **ops;
    int64_t nops;
    const int64_t *uids;
    void *const *ptrs;
    int64_t nptrs;
};

/* The graph a plan runs (plan -> engine config -> engine -> operation
 * graph) and the pack's pointers: 0, or -1 when the plan leads to no
 * operations. base: the record every operation starts from (engine index
 * as algo, the plan's workspace, the graph's operation count). */
int be_exec_init(struct be_exec *x, struct maya_rec_dnn *base, const struct be_desc *plan,
                 const struct be_desc *pack);

/* The pointer the variant pack gives a tensor's unique id, or NULL. */
void *be_pack_pointer(const struct be_exec *x, int64_t uid);
/* A tensor descriptor's unique id, -1 if none. */
int64_t be_uid_of(const struct be_desc *t);

/* Start a DNN record for an operation: type, size, op, algo -1. */
void dnn_rec_init(struct maya_rec_dnn *r, uint32_t op);

/* Write one record (its operation and tensors filled): 0 when written,
 * else non-zero, which stops the graph's tracing. */
typedef int (*be_emit_fn)(struct maya_rec_dnn *r, void *arg);

/* One record per recognised operation of x, each a copy of base filled
 * in: returns how many were written, or -1 when out of memory. */
int be_trace_graph(const struct be_exec *x, const struct maya_rec_dnn *base, be_emit_fn emit, void *arg);
/* A graph with no recognised operation (pointwise / reduction and other
 * fused operations only): one record in r (base), of the first such
 * operation's kind, from the first input to the last output. Returns
 * what emit returned. */
int be_trace_fused(const struct be_exec *x, struct maya_rec_dnn *r, be_emit_fn emit, void *arg);

#endif

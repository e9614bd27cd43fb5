/* cuDNN backend (graph) API of the emulated cuDNN: descriptors are
 * be_store.h's. Values cuDNN computes (engine counts, heuristic results,
 * workspace sizes) are stored as attributes when the descriptor is
 * finalized, and cudnnBackendGetAttribute reads any attribute the same way;
 * a descriptor-valued one is copied into the descriptors the caller made
 * (as for engine configs from heuristics). What an execution is traced as
 * is be_trace.h's. */
#ifndef MAYA_EMU_DNN_BACKEND_H
#define MAYA_EMU_DNN_BACKEND_H

#include "be_store.h"
#include "be_trace.h"
#include "dnn.h"

/* graph.c: what finalizing each type checks and computes; and execution. */
cudnnStatus_t be_finalize(struct be_desc *d);
cudnnStatus_t be_execute(cudnnHandle_t h, uint32_t api, uint64_t t0, struct be_desc *plan, struct be_desc *pack);

#endif

/* Declared replicas (maya run --replicas) that never start: maya run
 * stands in for them at PyTorch's start-up rendezvous and, once the job has
 * ended, writes the trace each would have left (replica_stand_in.c,
 * docs/dedup.md). */
#ifndef MAYA_REPLICA_STAND_IN_H
#define MAYA_REPLICA_STAND_IN_H

#include <stddef.h>
#include <sys/types.h>

#include "maya/replicas.h"

/* Has process pid loaded PyTorch (its maps name libtorch)? 1 or 0. */
int stand_in_is_pytorch(pid_t pid);

/* Join the PyTorch TCP store on 127.0.0.1:port for count ranks of a job of
 * world ranks, as each rank's store client does when it connects (it adds 1
 * to the key the store's rank 0 counts its workers by). 0 once the store
 * has answered with a count that can be its own; -2 when nothing listens
 * (yet); -1 when what listens is not a PyTorch store (it did not answer so
 * within timeout_s). why says which. */
int stand_in_join_store(int port, int count, int world, double timeout_s, char *why, size_t n);

/* What a stand-in's trace is made from: the trace of the rank it is
 * rebuilt from (its representative), read once per representative. */
struct stand_in_source;

/* Read the representative's trace (trace_dir/rank-R.mtrace): its header,
 * process and devices. NULL with a message when it is missing or cut short. */
struct stand_in_source *stand_in_source_read(const char *trace_dir, int rank);
int stand_in_source_rank(const struct stand_in_source *s);
void stand_in_source_free(struct stand_in_source *s);

/* Write trace_dir/rank-N.mtrace and rank-N.eliminated for replica `rank`
 * (on `node`, device `local_rank` of gpus_per_node), as the emulator writes
 * them for a declared replica that stops at its first NCCL call: the
 * representative's header, process and devices made the rank's own, an
 * ELIMINATED record (declared, no NCCL operation) and END. spec is the
 * layout as --replicas gave it. 0, or -1 with a message. */
int stand_in_write(const char *trace_dir, const struct stand_in_source *s, int rank, int node, int local_rank,
                   const char *spec);

#endif

/* The API-call part of generated trace records, for the benchmarks'
 * generators (gpt_traces.c, sim_bench.c): one host clock and call counter
 * per rank, each call gap_ns after the previous one's exit and 1 us long. */
#ifndef MAYA_BENCH_TRACE_CALLS_H
#define MAYA_BENCH_TRACE_CALLS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "maya/collator.h"
#include "maya/common.h"
#include "maya/trace_format.h"

/* Create path as the trace of rank `rank` of world (gpn GPUs a node, GPU
 * key gpu) and open its record writer after the header. 0, or -1 with a
 * message (nothing left open). */
static inline int trace_open_rank(const char *path, int rank, int world, int gpn, const char *gpu, FILE **fp,
                                  struct col_writer **w)
{
    *w = NULL;
    *fp = fopen(path, "wb");
    if (!*fp)
        return maya_error("cannot create %s: %m", path);
    struct maya_trace_header h;
    col_header_init(&h, MAYA_TRACE_RANK);
    h.rank = rank;
    h.world_size = world;
    h.local_rank = rank % gpn;
    h.node = rank / gpn;
    h.gpus_per_node = gpn;
    h.pid = (uint32_t)(1000 + rank);
    snprintf(h.gpu, sizeof h.gpu, "%s", gpu);
    int rc = fwrite(&h, sizeof h, 1, *fp) == 1 ? col_writer_open(*fp, path, w) : maya_error("cannot write %s: %m", path);
    if (rc < 0) {
        fclose(*fp);
        *fp = NULL;
    }
    return rc;
}

struct trace_clock {
    uint64_t seq;               /* the next call's number */
    uint64_t now;               /* host time, ns */
};

static inline void trace_call(struct trace_clock *k, struct maya_call *c, uint64_t gap_ns, uint32_t api,
                              uint64_t stream)
{
    k->now += gap_ns;
    c->seq = k->seq++;
    c->t_enter_ns = k->now;
    k->now += 1000;
    c->t_exit_ns = k->now;
    c->stream = stream;
    c->api = api;
    c->device = 0;
}

/* A collective or send/recv of count bf16 elements on communicator comm
 * (its seq-th), the call part left to trace_call. */
static inline void trace_coll(struct maya_rec_coll *c, uint32_t op, uint64_t comm, uint64_t seq, int rank, int nranks,
                              int peer, uint64_t count)
{
    memset(c, 0, sizeof *c);
    c->h = (struct maya_rec_hdr){ MAYA_REC_COLL, 0, sizeof *c };
    c->comm = comm;
    c->seq = seq;
    c->count = count;
    c->bytes = count * 2;
    c->op = op;
    c->dtype = 9; /* ncclBfloat16 */
    c->rank = rank;
    c->nranks = nranks;
    c->peer = peer;
}

#endif

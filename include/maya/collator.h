/* The collator: rank traces in, one checked job trace out
 * (include/maya/job_trace.h), plus the small tools that write traces.
 */
#ifndef MAYA_COLLATOR_H
#define MAYA_COLLATOR_H

#include <stdint.h>
#include <stdio.h>

/* ---- writing traces: records into compressed chunks (include/maya/trace_format.h) ---- */

struct col_writer;

/* Records go to fp (positioned after the header, which the caller writes);
 * path is only for messages. */
int col_writer_open(FILE *fp, const char *path, struct col_writer **out);
/* Append one record (h.bytes set, a multiple of 8). 0 or -1 with a message. */
int col_writer_emit(struct col_writer *w, const void *rec);
/* Write out the chunk being filled. */
int col_writer_flush(struct col_writer *w);
uint64_t col_writer_records(const struct col_writer *w);
/* The records since the last flush are exactly those of chunk c (as read
 * from a trace, z its compressed bytes): write c as it is instead of
 * compressing them again. 1 done, 0 not the same bytes (nothing written),
 * -1 on a write error. */
struct maya_trace_chunk;
int col_writer_swap_chunk(struct col_writer *w, const struct maya_trace_chunk *c, const void *z, uint64_t records);
void col_writer_free(struct col_writer *w);

/* Fill a trace header (magic, version, sizes) of the given kind. */
struct maya_trace_header;
void col_header_init(struct maya_trace_header *h, uint32_t kind);

/* ---- building a rank trace from text (maya trace build; tests, examples) ---- */

/* One line per record, `TYPE key=value ...` (the format `maya trace build
 * --help` prints). 0, or -1 with "FILE:LINE: ..." */
int col_trace_build(const char *text_path, const char *out_path);
extern const char col_trace_build_help[];

/* ---- collating ---- */

struct col_summary {
    int nranks;                 /* rank traces collated */
    int world_size;
    int nodes;
    int incomplete;             /* traces cut short (their ranks crashed) */
    uint64_t records;
    uint64_t collectives;       /* matched across their communicators */
    uint64_t p2p_pairs;         /* send/recv pairs matched */
    uint32_t ncomms;
    int rebuilt;                /* ranks duplicate-rank elimination stopped, rebuilt from their source */
};

/* Merge every rank-N.mtrace (and pid-N.mtrace) under trace_dir into the job
 * trace job_path, checking that the ranks agree on every collective and
 * point-to-point transfer: a job that would hang or compute garbage on GPUs
 * (an op, count, type or root that differs between members, a rank missing
 * from a collective, a send nobody receives) is refused with a message naming
 * the ranks, the op and its sequence number. With allow_incomplete, traces
 * cut short (rank-N.mtrace.tmp) are taken as far as they go and the checks
 * only report what their ranks did issue. 0, or -1 with a message. */
int col_collate(const char *trace_dir, const char *job_path, int allow_incomplete, struct col_summary *out);

/* ---- reading a rebuilt rank that is a reference (MAYA_REBUILT_F_REF) ---- */

/* The records of a reference's source section made the rank's own, as the
 * collator makes a full copy (docs/trace-format.md, "Rebuilt ranks"): give
 * the reference's COMM records in order, then each record of the source's
 * section. dev_src: the device of the source's first communicator (-1 none).
 * Costs the two ranks' communicators and one record's copy. */
struct col_ref_map;
struct maya_rec_comm;
struct maya_rec_hdr;
int col_ref_map_new(int rank, int source, int32_t dev_src, struct col_ref_map **out);
int col_ref_map_comm(struct col_ref_map *m, const struct maya_rec_comm *own);
/* 1 with *out (the record made the rank's own, valid until the next call),
 * 0 when the copy leaves it out, -1 with a message. */
int col_ref_map_record(struct col_ref_map *m, const struct maya_rec_hdr *rec, const struct maya_rec_hdr **out);
void col_ref_map_free(struct col_ref_map *m);
/* A device ordinal of the source's as the rebuilt rank's: the source's
 * first communicator's device (dev_src) and the rank's own (dev_own)
 * exchanged, any other unchanged (none where either is -1). */
int32_t col_exchange_device(int32_t d, int32_t dev_src, int32_t dev_own);

#endif

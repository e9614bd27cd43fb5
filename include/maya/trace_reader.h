/* Reading maya traces (rank or job), one record at a time.
 *
 * Everything in a trace is checked before it is handed out: the header, each
 * chunk's sizes and checksum, each record's size against its type, string and
 * kernel ids. A problem is reported as "FILE: offset N: what was expected,
 * what was found" and reading stops; nothing in a bad file can crash a reader.
 */
#ifndef MAYA_TRACE_READER_H
#define MAYA_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>
#include "maya/trace_format.h"

struct maya_trace_reader;

/* Open and check the header. */
int maya_trace_open(const char *path, struct maya_trace_reader **out);
void maya_trace_close(struct maya_trace_reader *r);

/* Next record: returns 1 and sets *rec (valid until the next call), 0 after
 * the END record, -1 on a damaged or truncated trace (message printed).
 * With allow_truncated set (see below), a trace cut short ends with 0 and
 * maya_trace_complete() says false. */
int maya_trace_next(struct maya_trace_reader *r, const struct maya_rec_hdr **rec);

/* Accept a trace without an END record (a rank that crashed): reading stops
 * cleanly at the last whole chunk. */
void maya_trace_allow_truncated(struct maya_trace_reader *r, int allow);
int maya_trace_complete(const struct maya_trace_reader *r);

const struct maya_trace_header *maya_trace_header(const struct maya_trace_reader *r);
const char *maya_trace_path(const struct maya_trace_reader *r);

/* Where the record just read begins: its chunk's file offset and its byte
 * in the inflated chunk; maya_trace_seek goes back there (the next record
 * read is that one). Strings and kernels stay those read so far. 0, or -1
 * with a message. */
void maya_trace_position(const struct maya_trace_reader *r, uint64_t *chunk, uint32_t *byte);
int maya_trace_seek(struct maya_trace_reader *r, uint64_t chunk, uint32_t byte);

/* File offset of the chunk holding the current record. */
uint64_t maya_trace_offset(const struct maya_trace_reader *r);

/* Was the record just read the last of its chunk? Then the chunk as it is
 * in the file (header and compressed bytes, valid until the next read) can
 * be copied into another trace without compressing its records again. */
int maya_trace_chunk_done(const struct maya_trace_reader *r);
const void *maya_trace_chunk_bytes(const struct maya_trace_reader *r, struct maya_trace_chunk *hdr);

/* Text of a string id seen so far ("" for 0, "?" for an unknown id). */
const char *maya_trace_string(const struct maya_trace_reader *r, uint32_t id);

/* Kernel definition seen so far, or NULL. The parameter and feature arrays
 * follow the struct in memory (see struct maya_rec_kernel). */
const struct maya_rec_kernel *maya_trace_kernel(const struct maya_trace_reader *r, uint32_t id);
const struct maya_kparam *maya_kernel_params(const struct maya_rec_kernel *k);
const struct maya_kfeature *maya_kernel_features(const struct maya_rec_kernel *k);

/* The smallest valid size of a record of this type (0 for unknown types). */
uint32_t maya_rec_min_bytes(uint16_t type);

/* Names for printing. */
const char *maya_rec_type_name(uint16_t type);
const char *maya_coll_op_name(uint32_t op);
const char *maya_copy_kind_name(uint32_t kind);
const char *maya_alloc_kind_name(uint32_t kind);
const char *maya_dnn_op_name(uint32_t op);

static inline const struct maya_call *maya_rec_call(const struct maya_rec_hdr *h)
{
    return (const struct maya_call *)(h + 1);
}

#endif

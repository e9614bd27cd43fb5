/* Writing trace records into compressed chunks (the container of
 * trace_format.h).
 *
 * Records are appended to a 4 MiB buffer; a full buffer becomes one chunk
 * (Zstandard level 1, as the emulator writes: common/chunk_codec.c). Cost
 * per record: one memcpy; per chunk: one compression, or none when
 * the chunk is one read from another trace, record for record
 * (col_writer_swap_chunk: the collator copies ranks' chunks as they are).
 */
#define _GNU_SOURCE
#include "maya/chunk_codec.h"
#include "maya/collator.h"
#include "maya/common.h"
#include "maya/trace_format.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CHUNK_BYTES (4u << 20)

struct col_writer {
    FILE *fp;
    char path[4096];
    unsigned char *buf, *z;
    uint32_t used;
    size_t zcap;
    struct maya_chunk_codec *codec;
    uint64_t records;
    uint64_t pending;            /* records in buf */
};

void col_header_init(struct maya_trace_header *h, uint32_t kind)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, MAYA_TRACE_MAGIC, 8);
    h->version = MAYA_TRACE_VERSION;
    h->header_bytes = sizeof *h;
    h->kind = kind;
    h->rank = h->world_size = h->local_rank = -1;
}

int col_writer_open(FILE *fp, const char *path, struct col_writer **out)
{
    struct col_writer *w = calloc(1, sizeof *w);
    if (!w)
        return maya_error("out of memory");
    w->fp = fp;
    snprintf(w->path, sizeof w->path, "%s", path);
    w->zcap = maya_chunk_bound(CHUNK_BYTES);
    w->buf = malloc(CHUNK_BYTES);
    w->z = malloc(w->zcap);
    w->codec = maya_chunk_codec_new();
    if (!w->buf || !w->z || !w->codec) {
        col_writer_free(w);
        return maya_error("out of memory for a trace buffer");
    }
    *out = w;
    return 0;
}

int col_writer_flush(struct col_writer *w)
{
    if (w->used == 0)
        return 0;
    uint32_t magic;
    size_t zlen = maya_chunk_compress(w->codec, w->z, w->zcap, w->buf, w->used, &magic);
    if (!zlen)
        return maya_error("%s: cannot compress a chunk", w->path);
    struct maya_trace_chunk c = {
        .magic = magic,
        .raw_bytes = w->used,
        .zbytes = (uint32_t)zlen,
        .crc32 = (uint32_t)crc32(0, w->buf, w->used),
    };
    if (fwrite(&c, sizeof c, 1, w->fp) != 1 || fwrite(w->z, 1, zlen, w->fp) != zlen)
        return maya_error("cannot write %s: %m", w->path);
    w->used = 0;
    w->pending = 0;
    return 0;
}

int col_writer_swap_chunk(struct col_writer *w, const struct maya_trace_chunk *c, const void *z, uint64_t records)
{
    if (w->used != c->raw_bytes || w->pending != records)
        return 0;
    if (fwrite(c, sizeof *c, 1, w->fp) != 1 || fwrite(z, 1, c->zbytes, w->fp) != c->zbytes)
        return maya_error("cannot write %s: %m", w->path);
    w->used = 0;
    w->pending = 0;
    return 1;
}

int col_writer_emit(struct col_writer *w, const void *rec)
{
    const struct maya_rec_hdr *h = rec;
    if (h->bytes < sizeof *h || h->bytes % 8 || h->bytes > CHUNK_BYTES)
        return maya_error("%s: record of type %u has %u bytes (expected a multiple of 8 up to %u)",
                          w->path, h->type, h->bytes, CHUNK_BYTES);
    if (w->used + h->bytes > CHUNK_BYTES && col_writer_flush(w) < 0)
        return -1;
    memcpy(w->buf + w->used, rec, h->bytes);
    w->used += h->bytes;
    w->records++;
    w->pending++;
    return 0;
}

uint64_t col_writer_records(const struct col_writer *w)
{
    return w->records;
}

void col_writer_free(struct col_writer *w)
{
    if (!w)
        return;
    free(w->buf);
    free(w->z);
    maya_chunk_codec_free(w->codec);
    free(w);
}

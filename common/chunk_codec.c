/* Trace chunks' compression. Zstandard at level 1 is what every writer
 * uses: on a minigpt job trace (906 MB of records) it compresses at 700
 * MB/s and inflates at 1.8 GB/s, to 13 % of the size, where zlib at level
 * 1 (the format's first codec) took 194 MB/s and 456 MB/s, to 20 %. Both
 * are read: a chunk's magic says which (trace_format.h). The contexts are
 * kept per codec object, so that a chunk costs no allocation.
 */
#include "maya/chunk_codec.h"
#include "maya/trace_format.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define ZSTD_LEVEL 1

struct maya_chunk_codec {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
    z_stream zs;        /* raw inflate of zlib chunks */
    int zs_ready;
};

struct maya_chunk_codec *maya_chunk_codec_new(void)
{
    return calloc(1, sizeof(struct maya_chunk_codec));
}

void maya_chunk_codec_free(struct maya_chunk_codec *c)
{
    if (!c)
        return;
    ZSTD_freeCCtx(c->cctx);
    ZSTD_freeDCtx(c->dctx);
    if (c->zs_ready)
        inflateEnd(&c->zs);
    free(c);
}

size_t maya_chunk_bound(size_t raw_bytes)
{
    size_t a = ZSTD_compressBound(raw_bytes), b = compressBound((uLong)raw_bytes);
    return a > b ? a : b;
}

int maya_chunk_magic_known(uint32_t magic)
{
    return magic == MAYA_TRACE_CHUNK_MAGIC_ZSTD || magic == MAYA_TRACE_CHUNK_MAGIC;
}

size_t maya_chunk_compress(struct maya_chunk_codec *c, void *dst, size_t cap, const void *src, size_t n,
                           uint32_t *magic)
{
    if (!c->cctx && !(c->cctx = ZSTD_createCCtx()))
        return 0;
    size_t z = ZSTD_compressCCtx(c->cctx, dst, cap, src, n, ZSTD_LEVEL);
    if (ZSTD_isError(z))
        return 0;
    *magic = MAYA_TRACE_CHUNK_MAGIC_ZSTD;
    return z;
}

/* A zlib (RFC 1950) stream: its Adler-32 is not computed, the chunk's
 * CRC-32, which the caller checks, covers the same bytes. */
static int inflate_zlib(struct maya_chunk_codec *c, const unsigned char *z, size_t zbytes, void *raw,
                        size_t raw_bytes, const char **why)
{
    /* header: deflate, no preset dictionary, checked; 4-byte trailer */
    if (zbytes < 6 || (z[0] & 0x0f) != 8 || (z[0] >> 4) > 7 || ((unsigned)z[0] << 8 | z[1]) % 31 || (z[1] & 0x20)) {
        *why = "zlib data error";
        return -1;
    }
    if (!c->zs_ready) {
        memset(&c->zs, 0, sizeof c->zs);
        if (inflateInit2(&c->zs, -MAX_WBITS) != Z_OK) {
            *why = "out of memory";
            return -1;
        }
        c->zs_ready = 1;
    } else if (inflateReset(&c->zs) != Z_OK) {
        *why = "zlib stream error";
        return -1;
    }
    c->zs.next_in = (unsigned char *)z + 2;
    c->zs.avail_in = (uInt)(zbytes - 6);
    c->zs.next_out = raw;
    c->zs.avail_out = (uInt)raw_bytes;
    int zrc = inflate(&c->zs, Z_FINISH);
    if (zrc != Z_STREAM_END || c->zs.total_out != raw_bytes) {
        *why = zrc == Z_MEM_ERROR ? "out of memory" : "zlib data error";
        return -1;
    }
    return 0;
}

int maya_chunk_inflate(struct maya_chunk_codec *c, uint32_t magic, const void *z, size_t zbytes, void *raw,
                       size_t raw_bytes, const char **why)
{
    if (magic == MAYA_TRACE_CHUNK_MAGIC)
        return inflate_zlib(c, z, zbytes, raw, raw_bytes, why);
    if (magic != MAYA_TRACE_CHUNK_MAGIC_ZSTD) {
        *why = "unknown chunk magic";
        return -1;
    }
    if (!c->dctx && !(c->dctx = ZSTD_createDCtx())) {
        *why = "out of memory";
        return -1;
    }
    /* the frame must say its size, and say raw_bytes */
    unsigned long long size = ZSTD_getFrameContentSize(z, zbytes);
    if (size != raw_bytes || ZSTD_findFrameCompressedSize(z, zbytes) != zbytes) {
        *why = "zstd frame of another size";
        return -1;
    }
    size_t got = ZSTD_decompressDCtx(c->dctx, raw, raw_bytes, z, zbytes);
    if (ZSTD_isError(got) || got != raw_bytes) {
        *why = ZSTD_isError(got) ? "zstd data error" : "zstd frame of another size";
        return -1;
    }
    return 0;
}

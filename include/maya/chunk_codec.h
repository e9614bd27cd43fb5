/* Compressing and inflating the chunks of a trace (trace_format.h): every
 * writer (the emulator's, the collator's) writes Zstandard chunks, and
 * every reader takes Zstandard and zlib chunks alike (traces written
 * before Zstandard). common/chunk_codec.c. */
#ifndef MAYA_CHUNK_CODEC_H
#define MAYA_CHUNK_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* Contexts kept from one chunk to the next (one thread at a time). */
struct maya_chunk_codec;
struct maya_chunk_codec *maya_chunk_codec_new(void);
void maya_chunk_codec_free(struct maya_chunk_codec *c);

/* The most compressed bytes a chunk of raw_bytes takes, in either codec. */
size_t maya_chunk_bound(size_t raw_bytes);
/* Whether magic names a chunk this maya reads. */
int maya_chunk_magic_known(uint32_t magic);

/* Compress n bytes of src into dst (cap bytes, maya_chunk_bound(n) will
 * do): the compressed size, with *magic the chunk's magic; 0 on failure. */
size_t maya_chunk_compress(struct maya_chunk_codec *c, void *dst, size_t cap, const void *src, size_t n,
                           uint32_t *magic);
/* Inflate a chunk of this magic (zbytes at z) into exactly raw_bytes at
 * raw: 0, or -1 with *why saying what was wrong (static text). The
 * chunk's CRC-32 is the caller's to check. */
int maya_chunk_inflate(struct maya_chunk_codec *c, uint32_t magic, const void *z, size_t zbytes, void *raw,
                       size_t raw_bytes, const char **why);

#endif

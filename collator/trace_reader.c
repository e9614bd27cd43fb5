/* Reading maya traces: header, compressed chunks, records, all validated.
 *
 * Cost: one pass over the file; each chunk is inflated once into a buffer
 * that is reused. Strings and kernel definitions are kept in arrays indexed
 * by id (ids are small and dense), so lookups are O(1). Writers give ids in
 * order from 1, so an id is refused when it lies far beyond the definitions
 * read so far (dense_id): the tables stay within twice the definitions the
 * file holds, whatever its ids say.
 */
#define _GNU_SOURCE
#include "maya/trace_reader.h"
#include "maya/chunk_codec.h"
#include "maya/common.h"
#include "maya/job_trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_IDS (1u << 24)
/* ids a writer may have given out before its first definition record
 * (strings interned before the trace began) */
#define ID_SLACK 4096u

struct maya_trace_reader {
    FILE *fp;
    char path[4096];
    struct maya_trace_header hdr;
    uint64_t file_bytes;
    uint64_t chunk_offset;      /* file offset of the current chunk header */
    uint64_t next_offset;       /* file offset of the next chunk header */
    unsigned char *zbuf, *raw;
    size_t zcap, rawcap;
    struct maya_trace_chunk chunk; /* the current chunk's header (zbuf holds its bytes) */
    struct maya_chunk_codec *codec; /* inflate contexts, reused chunk after chunk (made at the first) */
    uint32_t raw_len, raw_pos;
    uint32_t rec_pos;           /* byte of the chunk where the last record handed out begins */
    int ended, complete, allow_truncated, failed;
    uint64_t records;
    uint64_t chunks;            /* whole chunks read from the file */
    /* the tail file of a cut-short trace (trace_format.h), read after the
     * file's last whole chunk: its slots in chunk order */
    char tail_path[4096];
    FILE *tail;
    uint64_t tail_off[MAYA_TRACE_TAIL_SLOTS];
    struct maya_trace_tail tail_hdr[MAYA_TRACE_TAIL_SLOTS];
    int tail_n, tail_next;
    int from_tail;              /* records come from the tail */
    char **strings;             /* by id */
    uint32_t nstrings;          /* room in strings[] */
    uint32_t strings_defined;   /* STRING records read */
    struct maya_rec_kernel **kernels; /* by id; each a copy of its record */
    uint32_t nkernels;          /* room in kernels[] */
    uint32_t kernels_defined;   /* KERNEL records read */
};

static int fail(struct maya_trace_reader *r, uint64_t off, const char *fmt, ...) MAYA_PRINTF(3, 4);
static int fail(struct maya_trace_reader *r, uint64_t off, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->failed = 1;
    return maya_error("%s: offset %llu: %s", r->path, (unsigned long long)off, msg);
}

int maya_trace_open(const char *path, struct maya_trace_reader **out)
{
    struct maya_trace_reader *r = calloc(1, sizeof *r);
    if (!r)
        return maya_error("out of memory");
    snprintf(r->path, sizeof r->path, "%s", path);
    r->fp = fopen(path, "rb");
    if (!r->fp) {
        int rc = maya_error("cannot open trace %s: %m", path);
        free(r);
        return rc;
    }
    if (fseeko(r->fp, 0, SEEK_END) == 0) {
        off_t end = ftello(r->fp);
        r->file_bytes = end > 0 ? (uint64_t)end : 0;
        rewind(r->fp);
    }
    size_t got = fread(&r->hdr, 1, sizeof r->hdr, r->fp);
    int rc = 0;
    if (got < 8 || memcmp(r->hdr.magic, MAYA_TRACE_MAGIC, 8) != 0)
        rc = fail(r, 0, "not a maya trace: expected magic \"%s\", found %s", MAYA_TRACE_MAGIC,
                  got < 8 ? "a shorter file" : "other bytes");
    else if (got < sizeof r->hdr)
        rc = fail(r, got, "truncated header: expected %zu bytes, found %zu", sizeof r->hdr, got);
    else if (r->hdr.version != MAYA_TRACE_VERSION)
        rc = fail(r, 8, "trace version %u; this maya reads version %u", r->hdr.version,
                  MAYA_TRACE_VERSION);
    else if (r->hdr.header_bytes != sizeof r->hdr)
        rc = fail(r, 12, "header size %u, expected %zu", r->hdr.header_bytes, sizeof r->hdr);
    else if (r->hdr.kind != MAYA_TRACE_RANK && r->hdr.kind != MAYA_TRACE_JOB)
        rc = fail(r, 16, "trace kind %u, expected 1 (rank) or 2 (job)", r->hdr.kind);
    if (rc < 0) {
        maya_trace_close(r);
        return -1;
    }
    r->hdr.gpu[sizeof r->hdr.gpu - 1] = 0;
    r->next_offset = sizeof r->hdr;
    *out = r;
    return 0;
}

void maya_trace_close(struct maya_trace_reader *r)
{
    if (!r)
        return;
    if (r->fp)
        fclose(r->fp);
    if (r->tail)
        fclose(r->tail);
    for (uint32_t i = 0; i < r->nstrings; i++)
        free(r->strings[i]);
    for (uint32_t i = 0; i < r->nkernels; i++)
        free(r->kernels[i]);
    free(r->strings);
    free(r->kernels);
    free(r->zbuf);
    free(r->raw);
    maya_chunk_codec_free(r->codec);
    free(r);
}

void maya_trace_allow_truncated(struct maya_trace_reader *r, int allow)
{
    r->allow_truncated = allow;
}

int maya_trace_complete(const struct maya_trace_reader *r)
{
    return r->complete;
}

const struct maya_trace_header *maya_trace_header(const struct maya_trace_reader *r)
{
    return &r->hdr;
}

const char *maya_trace_path(const struct maya_trace_reader *r)
{
    return r->path;
}

static int load_chunk(struct maya_trace_reader *r);

void maya_trace_position(const struct maya_trace_reader *r, uint64_t *chunk, uint32_t *byte)
{
    *chunk = r->chunk_offset;
    *byte = r->rec_pos;
}

int maya_trace_seek(struct maya_trace_reader *r, uint64_t chunk, uint32_t byte)
{
    if (r->from_tail)
        return fail(r, chunk, "cannot seek in a trace read from its tail file");
    if (chunk < sizeof r->hdr || (r->file_bytes && chunk >= r->file_bytes))
        return fail(r, chunk, "seek to offset %llu: expected a chunk of the file (%llu to %llu)",
                    (unsigned long long)chunk, (unsigned long long)sizeof r->hdr,
                    (unsigned long long)r->file_bytes);
    r->failed = r->ended = r->complete = 0;
    r->next_offset = chunk;
    r->raw_len = r->raw_pos = 0;
    int rc = load_chunk(r);
    if (rc <= 0)
        return rc < 0 ? -1 : fail(r, chunk, "seek to offset %llu: no chunk there", (unsigned long long)chunk);
    if (byte % 8 || byte >= r->raw_len)
        return fail(r, chunk, "seek to byte %u of a chunk of %u bytes", byte, r->raw_len);
    r->raw_pos = byte;
    return 0;
}

uint64_t maya_trace_offset(const struct maya_trace_reader *r)
{
    return r->chunk_offset;
}

static int grow(void **buf, size_t *cap, size_t want)
{
    if (*cap >= want)
        return 0;
    void *p = realloc(*buf, want);
    if (!p)
        return -1;
    *buf = p;
    *cap = want;
    return 0;
}

/* The slots of the tail file that hold chunks the file lacks, from chunk
 * r->chunks on, consecutive. 1 when there is at least one, else 0. */
static int tail_find(struct maya_trace_reader *r)
{
    size_t len = strlen(r->path);
    if (len < 5 || strcmp(r->path + len - 4, ".tmp") != 0)
        return 0; /* only a trace still being written (or cut short) has one */
    snprintf(r->tail_path, sizeof r->tail_path, "%.*s.tail", (int)(len - 4), r->path);
    r->tail = fopen(r->tail_path, "rb");
    if (!r->tail)
        return 0;
    struct { struct maya_trace_tail h; uint64_t off; } s[MAYA_TRACE_TAIL_SLOTS];
    int n = 0;
    uint64_t off = 0;
    for (int i = 0; i < MAYA_TRACE_TAIL_SLOTS; i++) {
        struct maya_trace_tail h;
        if (fseeko(r->tail, (off_t)off, SEEK_SET) != 0 || fread(&h, sizeof h, 1, r->tail) != 1 ||
            h.magic != MAYA_TRACE_TAIL_MAGIC || h.slot_bytes > MAYA_TRACE_MAX_CHUNK || h.used > h.slot_bytes ||
            h.used % 8)
            break; /* a damaged tail gives nothing, not garbage */
        if (h.chunk != MAYA_TRACE_TAIL_EMPTY && h.chunk >= r->chunks && h.used) {
            s[n].h = h;
            s[n].off = off + sizeof h;
            n++;
        }
        off += sizeof h + h.slot_bytes;
    }
    /* in chunk order, starting right after the file's chunks, no gap */
    if (n == 2 && s[1].h.chunk < s[0].h.chunk) {
        struct maya_trace_tail t = s[0].h;
        uint64_t o = s[0].off;
        s[0] = s[1];
        s[1].h = t;
        s[1].off = o;
    }
    r->tail_n = 0;
    for (int i = 0; i < n && s[i].h.chunk == r->chunks + (uint64_t)i; i++) {
        r->tail_hdr[r->tail_n] = s[i].h;
        r->tail_off[r->tail_n++] = s[i].off;
    }
    return r->tail_n > 0;
}

/* The next slot of the tail as the current chunk: 1, 0 when none is left,
 * -1 on a read error. */
static int tail_chunk(struct maya_trace_reader *r)
{
    if (r->tail_next >= r->tail_n)
        return 0;
    const struct maya_trace_tail *h = &r->tail_hdr[r->tail_next];
    if (grow((void **)&r->raw, &r->rawcap, h->used) < 0)
        return fail(r, r->tail_off[r->tail_next], "out of memory");
    if (fseeko(r->tail, (off_t)r->tail_off[r->tail_next], SEEK_SET) != 0 ||
        fread(r->raw, 1, h->used, r->tail) != h->used)
        return fail(r, r->tail_off[r->tail_next], "%s: cannot read the %u bytes its slot holds", r->tail_path,
                    h->used);
    r->chunk_offset = r->tail_off[r->tail_next];
    r->raw_len = h->used;
    r->raw_pos = 0;
    r->tail_next++;
    r->chunks++;
    return 1;
}

/* End of the data: clean after END, otherwise a truncated trace (whose
 * tail, if it left one, comes next). */
static int at_eof(struct maya_trace_reader *r, uint64_t off, const char *what)
{
    if (r->allow_truncated) {
        if (!r->from_tail && tail_find(r)) {
            r->from_tail = 1;
            return tail_chunk(r);
        }
        r->ended = 1;
        return 0;
    }
    return fail(r, off, "trace ends without an end record (%s): the process was cut short "
                "or the file is truncated", what);
}

static int load_chunk(struct maya_trace_reader *r)
{
    if (r->from_tail) {
        int rc = tail_chunk(r);
        if (rc == 0)
            r->ended = 1;
        return rc;
    }
    struct maya_trace_chunk c;
    uint64_t off = r->next_offset;
    if (fseeko(r->fp, (off_t)off, SEEK_SET) != 0)
        return fail(r, off, "cannot seek: %s", strerror(errno));
    size_t got = fread(&c, 1, sizeof c, r->fp);
    if (got == 0)
        return at_eof(r, off, "no more chunks");
    if (got < sizeof c)
        return r->allow_truncated ? at_eof(r, off, "")
             : fail(r, off, "truncated chunk header: expected %zu bytes, found %zu", sizeof c, got);
    if (!maya_chunk_magic_known(c.magic))
        return fail(r, off, "expected chunk magic 0x%08x (or 0x%08x, zlib), found 0x%08x",
                    MAYA_TRACE_CHUNK_MAGIC_ZSTD, MAYA_TRACE_CHUNK_MAGIC, c.magic);
    if (c.raw_bytes < sizeof(struct maya_rec_hdr) || c.raw_bytes > MAYA_TRACE_MAX_CHUNK ||
        c.raw_bytes % 8)
        return fail(r, off, "chunk of %u bytes: expected a multiple of 8 from 8 to %u",
                    c.raw_bytes, MAYA_TRACE_MAX_CHUNK);
    if (c.zbytes == 0 || c.zbytes > maya_chunk_bound(c.raw_bytes))
        return fail(r, off, "chunk compressed size %u is impossible for %u bytes", c.zbytes, c.raw_bytes);
    if (r->file_bytes && off + sizeof c + c.zbytes > r->file_bytes) {
        if (r->allow_truncated)
            return at_eof(r, off, "");
        return fail(r, off, "truncated chunk: expected %u compressed bytes, the file has %llu",
                    c.zbytes, (unsigned long long)(r->file_bytes - off - sizeof c));
    }
    if (grow((void **)&r->zbuf, &r->zcap, c.zbytes) < 0 ||
        grow((void **)&r->raw, &r->rawcap, c.raw_bytes) < 0)
        return fail(r, off, "out of memory");
    if (fread(r->zbuf, 1, c.zbytes, r->fp) != c.zbytes)
        return fail(r, off, "truncated chunk: could not read %u compressed bytes", c.zbytes);
    const char *why = NULL;
    if (!r->codec && !(r->codec = maya_chunk_codec_new()))
        return fail(r, off, "out of memory");
    if (maya_chunk_inflate(r->codec, c.magic, r->zbuf, c.zbytes, r->raw, c.raw_bytes, &why) < 0)
        return fail(r, off, "corrupt chunk: %s (expected %u bytes from %u)", why, c.raw_bytes, c.zbytes);
    uint32_t crc = (uint32_t)crc32(0, r->raw, c.raw_bytes);
    if (crc != c.crc32)
        return fail(r, off, "corrupt chunk: checksum 0x%08x, expected 0x%08x", crc, c.crc32);
    r->chunk = c;
    r->chunk_offset = off;
    r->next_offset = off + sizeof c + c.zbytes;
    r->raw_len = c.raw_bytes;
    r->raw_pos = 0;
    r->chunks++;
    return 1;
}

uint32_t maya_rec_min_bytes(uint16_t type)
{
    switch (type) {
    case MAYA_REC_STRING: return sizeof(struct maya_rec_string);
    case MAYA_REC_PROCESS: return sizeof(struct maya_rec_process);
    case MAYA_REC_DEVICE: return sizeof(struct maya_rec_device);
    case MAYA_REC_STREAM: return sizeof(struct maya_rec_stream);
    case MAYA_REC_KERNEL: return sizeof(struct maya_rec_kernel);
    case MAYA_REC_COMM: return sizeof(struct maya_rec_comm);
    case MAYA_REC_CALL: return sizeof(struct maya_rec_call);
    case MAYA_REC_LAUNCH: return sizeof(struct maya_rec_launch);
    case MAYA_REC_MEMCPY: return sizeof(struct maya_rec_memcpy);
    case MAYA_REC_MEMSET: return sizeof(struct maya_rec_memset);
    case MAYA_REC_ALLOC:
    case MAYA_REC_FREE: return sizeof(struct maya_rec_alloc);
    case MAYA_REC_EVENT_RECORD:
    case MAYA_REC_STREAM_WAIT: return sizeof(struct maya_rec_event);
    case MAYA_REC_SYNC: return sizeof(struct maya_rec_sync);
    case MAYA_REC_HOST_FUNC: return sizeof(struct maya_rec_host_func);
    case MAYA_REC_GEMM: return sizeof(struct maya_rec_gemm);
    case MAYA_REC_DNN: return sizeof(struct maya_rec_dnn);
    case MAYA_REC_COLL: return sizeof(struct maya_rec_coll);
    case MAYA_REC_GRAPH: return sizeof(struct maya_rec_graph);
    case MAYA_REC_MARKER: return sizeof(struct maya_rec_marker);
    case MAYA_REC_VALUE_READ: return sizeof(struct maya_rec_value_read);
    case MAYA_REC_END: return sizeof(struct maya_rec_end);
    case MAYA_REC_JOB: return sizeof(struct maya_rec_job);
    case MAYA_REC_JOB_COMM: return sizeof(struct maya_rec_job_comm);
    case MAYA_REC_RANK_BEGIN: return sizeof(struct maya_rec_rank_begin);
    case MAYA_REC_RANK_END: return sizeof(struct maya_rec_rank_end);
    case MAYA_REC_ELIMINATED: return sizeof(struct maya_rec_eliminated);
    case MAYA_REC_COMM_MEMBERS: return sizeof(struct maya_rec_comm_members);
    case MAYA_REC_RANK_REBUILT: return sizeof(struct maya_rec_rank_rebuilt);
    default: return 0;
    }
}

/* Is id plausible after `defined` definitions of its kind? (see the top) */
static int dense_id(uint32_t id, uint32_t defined)
{
    return id != 0 && id < MAX_IDS && (uint64_t)id <= 2ull * defined + ID_SLACK;
}

static int define_string(struct maya_trace_reader *r, const struct maya_rec_string *s, uint64_t off)
{
    if (!dense_id(s->id, r->strings_defined))
        return fail(r, off, "string id %u: expected 1 to %u after %u strings (ids count from 1)", s->id,
                    (uint32_t)MAYA_MIN(2ull * r->strings_defined + ID_SLACK, MAX_IDS - 1), r->strings_defined);
    if (s->len > s->h.bytes - sizeof *s)
        return fail(r, off, "string of %u bytes in a record of %u", s->len, s->h.bytes);
    if (s->id >= r->nstrings) {
        uint32_t n = MAYA_MAX(s->id + 1, r->nstrings * 2);
        char **p = realloc(r->strings, n * sizeof *p);
        if (!p)
            return fail(r, off, "out of memory");
        memset(p + r->nstrings, 0, (n - r->nstrings) * sizeof *p);
        r->strings = p;
        r->nstrings = n;
    }
    char *text = malloc(s->len + 1);
    if (!text)
        return fail(r, off, "out of memory");
    memcpy(text, s + 1, s->len);
    text[s->len] = 0;
    free(r->strings[s->id]);
    r->strings[s->id] = text;
    r->strings_defined++;
    return 0;
}

static int define_kernel(struct maya_trace_reader *r, const struct maya_rec_kernel *k, uint64_t off)
{
    uint64_t need = sizeof *k + (uint64_t)k->nparams * sizeof(struct maya_kparam) +
                    (uint64_t)k->nfeatures * sizeof(struct maya_kfeature);
    if (!dense_id(k->id, r->kernels_defined))
        return fail(r, off, "kernel id %u: expected 1 to %u after %u kernels (ids count from 1)", k->id,
                    (uint32_t)MAYA_MIN(2ull * r->kernels_defined + ID_SLACK, MAX_IDS - 1), r->kernels_defined);
    if (need > k->h.bytes)
        return fail(r, off, "kernel %u: %u parameters and %u features need %llu bytes, record has %u",
                    k->id, k->nparams, k->nfeatures, (unsigned long long)need, k->h.bytes);
    if (k->param_bytes > 32764)
        return fail(r, off, "kernel %u: parameter buffer of %u bytes (at most 32764)", k->id,
                    k->param_bytes);
    const struct maya_kparam *p = maya_kernel_params(k);
    for (uint32_t i = 0; i < k->nparams; i++)
        if ((uint32_t)p[i].offset + p[i].bytes > k->param_bytes)
            return fail(r, off, "kernel %u: parameter %u at %u+%u lies outside its %u-byte buffer",
                        k->id, i, p[i].offset, p[i].bytes, k->param_bytes);
    if (k->id >= r->nkernels) {
        uint32_t n = MAYA_MAX(k->id + 1, r->nkernels * 2);
        struct maya_rec_kernel **q = realloc(r->kernels, n * sizeof *q);
        if (!q)
            return fail(r, off, "out of memory");
        memset(q + r->nkernels, 0, (n - r->nkernels) * sizeof *q);
        r->kernels = q;
        r->nkernels = n;
    }
    struct maya_rec_kernel *copy = malloc(k->h.bytes);
    if (!copy)
        return fail(r, off, "out of memory");
    memcpy(copy, k, k->h.bytes);
    free(r->kernels[k->id]);
    r->kernels[k->id] = copy;
    r->kernels_defined++;
    return 0;
}

/* Checks beyond the minimum size, for records with variable parts. */
static int check_record(struct maya_trace_reader *r, const struct maya_rec_hdr *h, uint64_t off)
{
    switch (h->type) {
    case MAYA_REC_STRING:
        return define_string(r, (const struct maya_rec_string *)h, off);
    case MAYA_REC_KERNEL:
        return define_kernel(r, (const struct maya_rec_kernel *)h, off);
    case MAYA_REC_LAUNCH: {
        const struct maya_rec_launch *l = (const void *)h;
        if (sizeof *l + (uint64_t)l->param_bytes > h->bytes)
            return fail(r, off, "launch with %u parameter bytes in a record of %u", l->param_bytes,
                        h->bytes);
        if (!maya_trace_kernel(r, l->kernel))
            return fail(r, off, "launch of kernel %u, which was never defined", l->kernel);
        return 0;
    }
    case MAYA_REC_END: {
        const struct maya_rec_end *e = (const void *)h;
        if (sizeof *e + (uint64_t)e->ndevices * sizeof(struct maya_end_device) > h->bytes)
            return fail(r, off, "end record lists %u devices in %u bytes", e->ndevices, h->bytes);
        return 0;
    }
    case MAYA_REC_RANK_END: {
        const struct maya_rec_rank_end *e = (const void *)h;
        if (sizeof *e + (uint64_t)e->ndevices * sizeof(struct maya_end_device) > h->bytes)
            return fail(r, off, "rank end record lists %u devices in %u bytes", e->ndevices, h->bytes);
        return 0;
    }
    case MAYA_REC_JOB_COMM: {
        const struct maya_rec_job_comm *c = (const void *)h;
        if (c->nranks < 1 || sizeof *c + (uint64_t)c->nranks * sizeof(struct maya_job_member) > h->bytes)
            return fail(r, off, "communicator record lists %d members in %u bytes", c->nranks, h->bytes);
        return 0;
    }
    default:
        return 0;
    }
}

int maya_trace_next(struct maya_trace_reader *r, const struct maya_rec_hdr **rec)
{
    if (r->failed)
        return -1;
    if (r->ended)
        return 0;
    while (r->raw_pos >= r->raw_len) {
        int rc = load_chunk(r);
        if (rc <= 0)
            return rc;
    }
    const struct maya_rec_hdr *h = (const void *)(r->raw + r->raw_pos);
    uint32_t left = r->raw_len - r->raw_pos;
    uint64_t off = r->chunk_offset;
    if (left < sizeof *h || h->bytes < sizeof *h || h->bytes % 8 || h->bytes > left)
        return fail(r, off, "record %llu (byte %u of the chunk): size %u does not fit the %u bytes left",
                    (unsigned long long)r->records, r->raw_pos, left < sizeof *h ? 0 : h->bytes, left);
    uint32_t min = maya_rec_min_bytes(h->type);
    if (min && h->bytes < min)
        return fail(r, off, "record %llu: %s record of %u bytes, expected at least %u",
                    (unsigned long long)r->records, maya_rec_type_name(h->type), h->bytes, min);
    if (check_record(r, h, off) < 0)
        return -1;
    r->rec_pos = r->raw_pos;
    r->raw_pos += h->bytes;
    r->records++;
    if (h->type == MAYA_REC_END) {
        const struct maya_rec_end *e = (const void *)h;
        if (e->records != r->records - 1)
            return fail(r, off, "end record counts %llu records, the trace holds %llu",
                        (unsigned long long)e->records, (unsigned long long)(r->records - 1));
        if (r->raw_pos != r->raw_len)
            return fail(r, off, "data after the end record");
        r->ended = 1;
        r->complete = 1;
    }
    *rec = h;
    return 1;
}

int maya_trace_chunk_done(const struct maya_trace_reader *r)
{
    return r->raw_len && r->raw_pos >= r->raw_len;
}

const void *maya_trace_chunk_bytes(const struct maya_trace_reader *r, struct maya_trace_chunk *hdr)
{
    *hdr = r->chunk;
    return r->zbuf;
}

const char *maya_trace_string(const struct maya_trace_reader *r, uint32_t id)
{
    if (id == 0)
        return "";
    if (id < r->nstrings && r->strings[id])
        return r->strings[id];
    return "?";
}

const struct maya_rec_kernel *maya_trace_kernel(const struct maya_trace_reader *r, uint32_t id)
{
    return id < r->nkernels ? r->kernels[id] : NULL;
}

const struct maya_kparam *maya_kernel_params(const struct maya_rec_kernel *k)
{
    return (const struct maya_kparam *)(k + 1);
}

const struct maya_kfeature *maya_kernel_features(const struct maya_rec_kernel *k)
{
    return (const struct maya_kfeature *)(maya_kernel_params(k) + k->nparams);
}

const char *maya_rec_type_name(uint16_t type)
{
    switch (type) {
    case MAYA_REC_STRING: return "string";
    case MAYA_REC_PROCESS: return "process";
    case MAYA_REC_DEVICE: return "device";
    case MAYA_REC_STREAM: return "stream";
    case MAYA_REC_KERNEL: return "kernel";
    case MAYA_REC_COMM: return "comm";
    case MAYA_REC_CALL: return "call";
    case MAYA_REC_LAUNCH: return "launch";
    case MAYA_REC_MEMCPY: return "memcpy";
    case MAYA_REC_MEMSET: return "memset";
    case MAYA_REC_ALLOC: return "alloc";
    case MAYA_REC_FREE: return "free";
    case MAYA_REC_EVENT_RECORD: return "event_record";
    case MAYA_REC_STREAM_WAIT: return "stream_wait";
    case MAYA_REC_SYNC: return "sync";
    case MAYA_REC_HOST_FUNC: return "host_func";
    case MAYA_REC_GEMM: return "gemm";
    case MAYA_REC_DNN: return "dnn";
    case MAYA_REC_COLL: return "coll";
    case MAYA_REC_GRAPH: return "graph";
    case MAYA_REC_MARKER: return "marker";
    case MAYA_REC_VALUE_READ: return "value_read";
    case MAYA_REC_END: return "end";
    case MAYA_REC_JOB: return "job";
    case MAYA_REC_JOB_COMM: return "job_comm";
    case MAYA_REC_RANK_BEGIN: return "rank_begin";
    case MAYA_REC_RANK_END: return "rank_end";
    case MAYA_REC_ELIMINATED: return "eliminated";
    case MAYA_REC_COMM_MEMBERS: return "comm_members";
    case MAYA_REC_RANK_REBUILT: return "rank_rebuilt";
    default: return "unknown";
    }
}

const char *maya_coll_op_name(uint32_t op)
{
    static const char *names[] = { "?", "allreduce", "broadcast", "reduce", "allgather",
                                   "reducescatter", "send", "recv", "alltoall", "gather", "scatter" };
    return op < MAYA_ARRAY_LEN(names) ? names[op] : "?";
}

const char *maya_copy_kind_name(uint32_t kind)
{
    static const char *names[] = { "?", "h2d", "d2h", "d2d", "h2h", "peer" };
    return kind < MAYA_ARRAY_LEN(names) ? names[kind] : "?";
}

const char *maya_alloc_kind_name(uint32_t kind)
{
    static const char *names[] = { "?", "device", "async", "managed", "host", "host_register",
                                   "vmm_physical", "vmm_reserve", "vmm_map" };
    return kind < MAYA_ARRAY_LEN(names) ? names[kind] : "?";
}

const char *maya_dnn_op_name(uint32_t op)
{
    static const char *names[] = { "?", "conv_fwd", "conv_bwd_data", "conv_bwd_filter", "matmul",
                                   "sdpa_fwd", "sdpa_bwd", "bn_fwd_train", "bn_fwd_infer", "bn_bwd",
                                   "softmax_fwd", "softmax_bwd", "pointwise", "reduction", "norm",
                                   "other" };
    return op < MAYA_ARRAY_LEN(names) ? names[op] : "?";
}

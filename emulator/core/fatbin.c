/* Reading kernel facts out of fat binaries, cubins and PTX, without a GPU.
 *
 * A module image is one of:
 *   - a fat binary: header {u32 magic 0xBA55ED50, u16 version, u16 header
 *     size, u64 bytes that follow}, then entries, each with its own header
 *     (kind 1 PTX / 2 ELF, header size, payload size, compressed and
 *     uncompressed sizes, SM version, flags: 0x2000 LZ4 block, 0x8000 Zstd);
 *   - a bare cubin (64-bit little-endian ELF);
 *   - PTX text.
 * From a cubin, a kernel's section ".nv.info.<mangled>" gives its parameters
 * (EIATTR_KPARAM_INFO: ordinal, offset, size) and their total size
 * (EIATTR_CBANK_PARAM_SIZE); the module's ".nv.info" gives registers and
 * stack frame per function symbol; ".nv.shared.<mangled>" the static shared
 * memory. Without a cubin for the kernel, PTX's ".entry <mangled>(...)" list
 * gives the same layout. Types come from the demangled C++ signature, or for
 * extern "C" kernels from the PTX parameter types.
 *
 * Everything read here comes from outside: every offset is bounds-checked,
 * decompressed sizes are checked against what the header promised, and a
 * damaged image gives "layout unknown", never a crash.
 *
 * The parsed index of a module (its entries, decompressed on first use) is
 * kept on the module, so each image is decompressed at most once.
 */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"
#include "ptx_ops.h"
#include "kernel_work.h"
#include "ptx_parse.h"

#include <ctype.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define FATBIN_MAGIC 0xBA55ED50u
#define ENTRY_PTX 1
#define ENTRY_ELF 2
#define ENTRY_FLAG_LZ4 0x2000u
#define ENTRY_FLAG_ZSTD 0x8000u
#define MAX_IMAGE_BYTES (1ull << 31)   /* no code image is this large */
#define MAX_PARAM_BYTES 32764u         /* CUDA's limit on a kernel's parameters */
#define MAX_PARAMS 4096u
#define RESERVED_SMEM 1024             /* shared memory the driver keeps per block (sm_90+) */

#define EIATTR_MAX_THREADS 0x05
#define EIATTR_PARAM_CBANK 0x0a
#define EIATTR_FRAME_SIZE 0x11
#define EIATTR_KPARAM_INFO 0x17
#define EIATTR_CBANK_PARAM_SIZE 0x19
#define EIATTR_REGCOUNT 0x2f
#define EIFMT_SVAL 4                   /* u16 length + payload; other formats are 4 bytes */

#define SHT_NOBITS 8
#define STT_FUNC 2
#define STT_OBJECT 1

/* From the C++ runtime every CUDA program links (libstdc++). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *emu_demangle(const char *mangled)
{
    if (mangled && strncmp(mangled, "_Z", 2) == 0) {
        int status = 0;
        char *d = __cxa_demangle(mangled, NULL, NULL, &status);
        if (d && status == 0)
            return d;
        free(d);
    }
    return strdup(mangled ? mangled : "?");
}

/* ---- bounded little-endian reads ---- */

struct blob {
    const unsigned char *p;
    size_t n;
};

static int in_bounds(const struct blob *b, uint64_t off, uint64_t len)
{
    return off <= b->n && len <= b->n - off;
}

static uint16_t get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
    return get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ---- image kinds and sizes ---- */

static int is_elf(const unsigned char *p, size_t n)
{
    return n >= 64 && memcmp(p, "\177ELF", 4) == 0;
}

/* Text that could be PTX: printable bytes up to the first NUL (or the end). */
static int is_ptx_text(const unsigned char *p, size_t n)
{
    size_t i = 0;
    for (; i < n && p[i]; i++)
        if (!isprint(p[i]) && !isspace(p[i]))
            return 0;
    return i > 0 && (memmem(p, i, ".version", 8) || memmem(p, i, ".target", 7) || memmem(p, i, ".entry", 6));
}

/* Size of a cubin from its own headers (the caller did not say). */
static uint64_t elf_extent(const unsigned char *p)
{
    uint64_t shoff = get64(p + 0x28), phoff = get64(p + 0x20);
    uint64_t end = MAYA_MAX(shoff + (uint64_t)get16(p + 0x3a) * get16(p + 0x3c),
                            phoff + (uint64_t)get16(p + 0x36) * get16(p + 0x38));
    if (shoff >= MAX_IMAGE_BYTES || phoff >= MAX_IMAGE_BYTES || get16(p + 0x3c) > 4096)
        return 0;
    for (unsigned i = 0; i < get16(p + 0x3c) && get16(p + 0x3a) >= 64; i++) {
        const unsigned char *s = p + shoff + (uint64_t)i * get16(p + 0x3a);
        if (get32(s + 4) != SHT_NOBITS && get64(s + 0x18) + get64(s + 0x20) > end)
            end = get64(s + 0x18) + get64(s + 0x20);
    }
    return end < MAX_IMAGE_BYTES ? end : 0;
}

EMU_API int emu_image_probe(const void *image, size_t bytes, size_t *size_out)
{
    const unsigned char *p = image;
    size_t size = 0;
    int kind = EMU_IMAGE_UNKNOWN;
    if (!p)
        return EMU_IMAGE_UNKNOWN;
    /* With the size unknown, only the first header may be read before it
     * says how large the image is. */
    size_t avail = bytes ? bytes : 64;
    if (avail >= 16 && get32(p) == FATBIN_MAGIC) {
        uint64_t total = (uint64_t)get16(p + 6) + get64(p + 8);
        if (get16(p + 6) >= 16 && total <= MAX_IMAGE_BYTES && (!bytes || total <= bytes)) {
            kind = EMU_IMAGE_FATBIN;
            size = (size_t)total;
        }
    } else if (is_elf(p, avail)) {
        if (p[4] == 2 && p[5] == 1) { /* 64-bit, little-endian */
            uint64_t ext = bytes ? bytes : elf_extent(p);
            if (ext >= 64) {
                kind = EMU_IMAGE_CUBIN;
                size = (size_t)ext;
            }
        }
    } else {
        size_t n = bytes ? bytes : strnlen((const char *)p, MAX_IMAGE_BYTES);
        if (is_ptx_text(p, n)) {
            kind = EMU_IMAGE_PTX;
            size = bytes ? bytes : n + 1;
        }
    }
    if (size_out)
        *size_out = size;
    return kind;
}

/* ---- the index of an image: its code entries ---- */

struct code {
    int kind;                    /* ENTRY_PTX / ENTRY_ELF */
    int sm;                      /* e.g. 90; 0 unknown */
    struct blob raw;             /* payload as stored */
    uint64_t flags;
    uint64_t csize, usize;       /* compressed / uncompressed bytes (0: not compressed) */
    int state;                   /* 0 not decoded yet, 1 ready, -1 unusable */
    struct blob data;            /* decoded payload */
    unsigned char *owned;        /* decompressed copy, freed with the index */
    uint64_t hash;               /* of the decoded payload, 0 until needed (SASS work cache) */
};

struct emu_image_index {
    int ncodes;
    struct code *codes;
};

static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;

static int cubin_sm(const struct blob *b)
{
    if (!is_elf(b->p, b->n))
        return 0;
    uint32_t flags = get32(b->p + 0x30);
    return b->p[8] >= 8 ? (int)((flags >> 8) & 0xff) : (int)(flags & 0xff);
}

/* The SM version PTX text targets (".target sm_90a" -> 90), 0 if unknown. */
static int ptx_sm(const struct blob *b)
{
    const char *t = memmem(b->p, b->n, ".target", 7);
    if (!t)
        return 0;
    const char *end = (const char *)b->p + b->n;
    t += 7;
    while (t < end && (*t == ' ' || *t == '\t'))
        t++;
    int sm = 0;
    if (end - t > 3 && memcmp(t, "sm_", 3) == 0)
        for (t += 3; t < end && *t >= '0' && *t <= '9' && sm < 10000; t++)
            sm = sm * 10 + (*t - '0');
    return sm;
}

static int add_code(struct emu_image_index *x, const struct code *c)
{
    struct code *n = realloc(x->codes, (size_t)(x->ncodes + 1) * sizeof *n);
    if (!n)
        return -1;
    x->codes = n;
    x->codes[x->ncodes++] = *c;
    return 0;
}

/* Walk a fat binary's entries; -1 if its structure is damaged (the entries
 * read so far are kept: a truncated image still gives what it has). */
static int index_fatbin(struct emu_image_index *x, const struct blob *img)
{
    uint64_t off = 0;
    /* nvcc places several fat binaries back to back in one section; a
     * module image is one, but accept a run of them. */
    while (in_bounds(img, off, 16) && get32(img->p + off) == FATBIN_MAGIC) {
        uint64_t hs = get16(img->p + off + 6), body = get64(img->p + off + 8);
        if (hs < 16 || !in_bounds(img, off, hs) || !in_bounds(img, off + hs, body))
            return -1;
        uint64_t e = off + hs, end = off + hs + body;
        while (e < end) {
            struct blob fb = { img->p, end };
            if (!in_bounds(&fb, e, 16))
                return -1;
            const unsigned char *h = img->p + e;
            uint64_t ehs = get32(h + 4), payload = get64(h + 8);
            if (ehs < 16 || !in_bounds(&fb, e, ehs) || !in_bounds(&fb, e + ehs, payload))
                return -1;
            struct code c = { .kind = get16(h), .raw = { img->p + e + ehs, (size_t)payload } };
            if (ehs >= 64) {
                c.csize = get32(h + 16);
                c.sm = (int)get32(h + 28);
                c.flags = get64(h + 40);
                c.usize = get64(h + 56);
            }
            if ((c.kind == ENTRY_PTX || c.kind == ENTRY_ELF) && add_code(x, &c) < 0)
                return -1;
            e += ehs + payload;
        }
        off = end;
    }
    return 0;
}

static struct emu_image_index *index_new(const void *image, size_t bytes)
{
    struct emu_image_index *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    size_t size = 0;
    int kind = emu_image_probe(image, bytes, &size);
    struct blob img = { image, size };
    if (kind == EMU_IMAGE_FATBIN) {
        index_fatbin(x, &img);
    } else if (kind == EMU_IMAGE_CUBIN || kind == EMU_IMAGE_PTX) {
        struct code c = { .kind = kind == EMU_IMAGE_CUBIN ? ENTRY_ELF : ENTRY_PTX, .raw = img };
        c.sm = kind == EMU_IMAGE_CUBIN ? cubin_sm(&img) : ptx_sm(&img);
        add_code(x, &c);
    }
    return x;
}

/* Decompressed entries are kept while they fit in a budget and dropped
 * least recently used first (a later use decompresses again): a program
 * such as PyTorch launches kernels from hundreds of fat binaries, and their
 * decompressed cubins would otherwise stay in memory for good. The list is
 * a small array in use order; index_lock guards it. */
static uint64_t decoded_budget = 128ull << 20;
static struct code **decoded;
static size_t ndecoded, cap_decoded;
static uint64_t decoded_bytes;

static void decoded_remove(size_t i)
{
    decoded_bytes -= decoded[i]->data.n;
    memmove(&decoded[i], &decoded[i + 1], (ndecoded - i - 1) * sizeof *decoded);
    ndecoded--;
}

static void decoded_drop(struct code *c)
{
    for (size_t i = 0; i < ndecoded; i++)
        if (decoded[i] == c) {
            decoded_remove(i);
            break;
        }
    free(c->owned);
    c->owned = NULL;
    c->data = (struct blob){ NULL, 0 };
    c->state = 0;
}

/* c was just used: it goes to the end; then the oldest others go while the
 * total is over budget. */
static void decoded_use(struct code *c)
{
    size_t i = 0;
    while (i < ndecoded && decoded[i] != c)
        i++;
    if (i < ndecoded) {
        memmove(&decoded[i], &decoded[i + 1], (ndecoded - i - 1) * sizeof *decoded);
        ndecoded--;
    } else {
        decoded_bytes += c->data.n;
    }
    if (ndecoded == cap_decoded) {
        size_t ncap = cap_decoded ? cap_decoded * 2 : 64;
        struct code **n = realloc(decoded, ncap * sizeof *n);
        if (!n) {
            decoded_bytes -= c->data.n;
            return; /* not tracked: kept until its index goes */
        }
        decoded = n;
        cap_decoded = ncap;
    }
    decoded[ndecoded++] = c;
    while (decoded_bytes > decoded_budget && ndecoded > 1)
        decoded_drop(decoded[0]);
}

EMU_API void emu_image_cache_budget(uint64_t bytes)
{
    pthread_mutex_lock(&index_lock);
    decoded_budget = bytes;
    while (decoded_bytes > decoded_budget && ndecoded > 0)
        decoded_drop(decoded[0]);
    pthread_mutex_unlock(&index_lock);
}

static void index_free_locked(struct emu_image_index *x)
{
    if (!x)
        return;
    for (int i = 0; i < x->ncodes; i++)
        if (x->codes[i].owned)
            decoded_drop(&x->codes[i]);
    free(x->codes);
    free(x);
}

EMU_API void emu_image_index_free(struct emu_image_index *x)
{
    pthread_mutex_lock(&index_lock);
    index_free_locked(x);
    pthread_mutex_unlock(&index_lock);
}

/* Zstd into a buffer that grows with what the frame really produces (the
 * entry's uncompressed size comes from the image and may lie: sizing the
 * buffer by it let a damaged image allocate gigabytes up front). The bytes
 * decoded, or 0 on any error or past want bytes; *out is malloc'd (want+1). */
static size_t zstd_decode(const void *src, size_t n, uint64_t want, unsigned char **out)
{
    *out = NULL;
    ZSTD_DStream *z = ZSTD_createDStream();
    if (!z)
        return 0;
    size_t cap = (size_t)MAYA_MIN(want + 1, (uint64_t)1 << 20), got = 0;
    unsigned char *buf = malloc(cap);
    ZSTD_inBuffer in = { src, n, 0 };
    size_t rc = buf ? ZSTD_initDStream(z) : 1;
    while (buf && !ZSTD_isError(rc)) {
        if (got == cap) {
            if (cap > want) { /* more than the entry says: damaged */
                got = 0;
                break;
            }
            size_t ncap = (size_t)MAYA_MIN((uint64_t)cap * 2, want + 1);
            unsigned char *nb = realloc(buf, ncap);
            if (!nb) {
                got = 0;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ZSTD_outBuffer o = { buf, cap, got };
        rc = ZSTD_decompressStream(z, &o, &in);
        got = o.pos;
        if (rc == 0)
            break; /* the frame is whole */
        if (!ZSTD_isError(rc) && in.pos == in.size && got < cap) {
            got = 0; /* the input ran out mid-frame */
            break;
        }
    }
    ZSTD_freeDStream(z);
    if (!buf || ZSTD_isError(rc) || got != want) {
        free(buf);
        return 0;
    }
    *out = buf;
    return got;
}

/* Decode an entry's payload (once while it stays cached): decompress, and
 * check it is what it claims to be. */
static int code_ready(struct code *c)
{
    if (c->state == 1 && c->owned)
        decoded_use(c);
    if (c->state)
        return c->state;
    c->state = -1;
    if (c->flags & (ENTRY_FLAG_LZ4 | ENTRY_FLAG_ZSTD)) {
        if (!c->usize || c->usize > MAX_IMAGE_BYTES || !c->csize || c->csize > c->raw.n)
            return -1;
        unsigned char *out = NULL;
        size_t got = 0;
        if (c->flags & ENTRY_FLAG_ZSTD) {
            got = zstd_decode(c->raw.p, (size_t)c->csize, c->usize, &out);
        } else if (c->csize <= INT32_MAX && c->usize <= INT32_MAX &&
                   c->usize <= c->csize * 255 + 16) { /* LZ4 expands at most 255-fold */
            out = malloc((size_t)c->usize + 1);
            int r = out ? LZ4_decompress_safe((const char *)c->raw.p, (char *)out, (int)c->csize, (int)c->usize) : 0;
            got = r > 0 ? (size_t)r : 0;
        }
        if (!out || got != c->usize) {
            free(out);
            return -1;
        }
        out[got] = 0;
        c->owned = out;
        c->data = (struct blob){ out, got };
        decoded_use(c);
    } else {
        c->data = c->raw;
    }
    if (c->kind == ENTRY_ELF) {
        if (!is_elf(c->data.p, c->data.n)) {
            if (c->owned)
                decoded_drop(c);
            c->state = -1;
            return -1;
        }
        if (!c->sm)
            c->sm = cubin_sm(&c->data);
    }
    c->state = 1;
    return 1;
}

/* ---- ELF (cubin) ---- */

struct elf {
    struct blob b;
    uint64_t shoff;
    unsigned shnum, shentsize, shstrndx;
};

struct shdr {
    uint32_t name, type;
    uint64_t off, size;
    uint32_t link, info;
    uint64_t entsize;
};

static int elf_open(struct elf *e, const struct blob *b)
{
    if (!is_elf(b->p, b->n) || b->p[4] != 2 || b->p[5] != 1)
        return -1;
    e->b = *b;
    e->shoff = get64(b->p + 0x28);
    e->shentsize = get16(b->p + 0x3a);
    e->shnum = get16(b->p + 0x3c);
    e->shstrndx = get16(b->p + 0x3e);
    if (e->shentsize < 64 || e->shstrndx >= e->shnum ||
        !in_bounds(b, e->shoff, (uint64_t)e->shnum * e->shentsize))
        return -1;
    return 0;
}

static int elf_shdr(const struct elf *e, unsigned i, struct shdr *s)
{
    if (i >= e->shnum)
        return -1;
    const unsigned char *p = e->b.p + e->shoff + (uint64_t)i * e->shentsize;
    s->name = get32(p);
    s->type = get32(p + 4);
    s->off = get64(p + 0x18);
    s->size = get64(p + 0x20);
    s->link = get32(p + 0x28);
    s->info = get32(p + 0x2c);
    s->entsize = get64(p + 0x38);
    if (s->type != SHT_NOBITS && !in_bounds(&e->b, s->off, s->size))
        return -1;
    return 0;
}

/* A NUL-terminated string at off in string-table section strsec, or NULL. */
static const char *elf_str(const struct elf *e, unsigned strsec, uint32_t off)
{
    struct shdr s;
    if (elf_shdr(e, strsec, &s) < 0 || s.type == SHT_NOBITS || off >= s.size)
        return NULL;
    const char *p = (const char *)e->b.p + s.off + off;
    return memchr(p, 0, s.size - off) ? p : NULL;
}

/* Section named prefix + suffix (suffix may be NULL); -1 if none. */
static int elf_find(const struct elf *e, const char *prefix, const char *suffix, struct shdr *out)
{
    size_t plen = strlen(prefix);
    for (unsigned i = 0; i < e->shnum; i++) {
        struct shdr s;
        if (elf_shdr(e, i, &s) < 0)
            continue;
        const char *n = elf_str(e, e->shstrndx, s.name);
        if (n && strncmp(n, prefix, plen) == 0 && strcmp(n + plen, suffix ? suffix : "") == 0) {
            *out = s;
            return (int)i;
        }
    }
    return -1;
}

struct sym {
    const char *name;
    unsigned char type, other;
    uint64_t size;
    uint16_t shndx;              /* section the symbol is in */
    uint64_t value;              /* its offset there (relocatable cubin) */
};

/* Visit the symbol table; fn returns nonzero to stop (that value is returned). */
static int elf_symbols(const struct elf *e, int (*fn)(uint32_t index, const struct sym *s, void *arg),
                       void *arg)
{
    struct shdr st;
    if (elf_find(e, ".symtab", NULL, &st) < 0 || st.type == SHT_NOBITS)
        return 0;
    for (uint64_t i = 0; (i + 1) * 24 <= st.size; i++) {
        const unsigned char *p = e->b.p + st.off + i * 24;
        struct sym s = { elf_str(e, st.link, get32(p)), (unsigned char)(p[4] & 0xf), p[5], get64(p + 16),
                         (uint16_t)(p[6] | p[7] << 8), get64(p + 8) };
        if (!s.name)
            continue;
        int r = fn((uint32_t)i, &s, arg);
        if (r)
            return r;
    }
    return 0;
}

struct sym_query {
    const char *name;
    int type;
    uint32_t index;
    uint64_t size;
    uint16_t shndx;
    uint64_t value;
};

static int match_sym(uint32_t index, const struct sym *s, void *arg)
{
    struct sym_query *q = arg;
    if (s->type != q->type || strcmp(s->name, q->name) != 0)
        return 0;
    q->index = index;
    q->size = s->size;
    return 1;
}

/* Visit the records of an .nv.info section: fn(attr, payload, len). */
static void nv_info_each(const struct elf *e, const struct shdr *s,
                         void (*fn)(int attr, const unsigned char *v, unsigned len, void *arg), void *arg)
{
    if (s->type == SHT_NOBITS)
        return;
    const unsigned char *p = e->b.p + s->off;
    uint64_t off = 0;
    while (off + 4 <= s->size) {
        unsigned fmt = p[off], attr = p[off + 1], len = get16(p + off + 2);
        if (fmt == EIFMT_SVAL) {
            if (off + 4 + len > s->size)
                return;
            fn((int)attr, p + off + 4, len, arg);
            off += 4 + len;
        } else {
            fn((int)attr, p + off + 2, 2, arg);
            off += 4;
        }
    }
}

struct kinfo {
    struct maya_kparam params[MAX_PARAMS];
    uint16_t ordinal[MAX_PARAMS];
    unsigned n;
    int overflow;
    int64_t param_bytes;         /* -1 unknown */
    uint32_t max_threads;
    uint32_t sym;                /* kernel's symbol index, for .nv.info */
    int regs, frame;
    int cbank_off, cbank_size;   /* where the parameters sit in constant bank 0, -1 unknown */
};

static void kernel_attr(int attr, const unsigned char *v, unsigned len, void *arg)
{
    struct kinfo *ki = arg;
    if (attr == EIATTR_KPARAM_INFO && len >= 12) {
        if (ki->n >= MAYA_ARRAY_LEN(ki->params)) {
            ki->overflow = 1;
            return;
        }
        uint32_t flags = get32(v + 8);
        ki->ordinal[ki->n] = get16(v + 4);
        ki->params[ki->n] = (struct maya_kparam){ .offset = get16(v + 6), .bytes = (uint16_t)(flags >> 18),
                                                  .kind = MAYA_KP_BYTES };
        ki->n++;
    } else if (attr == EIATTR_CBANK_PARAM_SIZE && len >= 2) {
        ki->param_bytes = get16(v);
    } else if (attr == EIATTR_PARAM_CBANK && len >= 8) {
        ki->cbank_off = get16(v + 4);
        ki->cbank_size = get16(v + 6);
    } else if (attr == EIATTR_MAX_THREADS && len >= 12) {
        uint64_t t = (uint64_t)get32(v) * get32(v + 4) * get32(v + 8);
        ki->max_threads = t > 0 && t <= 1024 ? (uint32_t)t : 0;
    }
}

static void module_attr(int attr, const unsigned char *v, unsigned len, void *arg)
{
    struct kinfo *ki = arg;
    if (len < 8 || get32(v) != ki->sym)
        return;
    if (attr == EIATTR_REGCOUNT && get32(v + 4) <= 255)
        ki->regs = (int)get32(v + 4);
    else if (attr == EIATTR_FRAME_SIZE && get32(v + 4) < (1u << 24))
        ki->frame = (int)get32(v + 4);
}

/* Put parameters in ordinal order and check they make a layout: ordinals
 * 0..n-1, each inside the parameter buffer. */
static int params_check(struct maya_kparam *p, uint16_t *ord, unsigned n, uint32_t *total)
{
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = i; j > 0 && ord[j - 1] > ord[j]; j--) {
            uint16_t t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t;
            struct maya_kparam q = p[j]; p[j] = p[j - 1]; p[j - 1] = q;
        }
    uint32_t end = 0;
    for (unsigned i = 0; i < n; i++) {
        if (ord[i] != i || p[i].bytes == 0 || (uint32_t)p[i].offset + p[i].bytes > MAX_PARAM_BYTES)
            return -1;
        end = MAYA_MAX(end, (uint32_t)p[i].offset + p[i].bytes);
    }
    if (*total == UINT32_MAX)
        *total = end;
    return *total >= end && *total <= MAX_PARAM_BYTES ? 0 : -1;
}

/* Parsed facts of one kernel, before they go into struct emu_kernel. */
struct layout {
    unsigned n;
    uint32_t param_bytes;
    struct maya_kparam *params;  /* malloc'd */
    int from_cubin;
    int regs, static_smem, local_bytes, max_threads, const_bytes;
    int sm;                      /* of the cubin or PTX it came from */
    int code;                    /* index of the cubin in the image's index, -1 if from PTX */
    uint32_t sym;                /* the kernel's symbol index in that cubin */
    int cbank_off, cbank_size;   /* its parameters in constant bank 0, -1 unknown */
};

static int cubin_layout(const struct blob *b, const char *mangled, struct layout *out)
{
    struct elf e;
    struct shdr info;
    if (elf_open(&e, b) < 0 || elf_find(&e, ".nv.info.", mangled, &info) < 0)
        return -1;
    struct kinfo *ki = calloc(1, sizeof *ki);
    if (!ki)
        return -1;
    ki->param_bytes = -1;
    ki->regs = ki->frame = -1;
    ki->cbank_off = ki->cbank_size = -1;
    nv_info_each(&e, &info, kernel_attr, ki);
    uint32_t total = ki->param_bytes < 0 ? UINT32_MAX : (uint32_t)ki->param_bytes;
    int rc = -1;
    if (!ki->overflow && params_check(ki->params, ki->ordinal, ki->n, &total) == 0) {
        out->n = ki->n;
        out->param_bytes = total;
        out->params = malloc(MAYA_MAX(ki->n, 1) * sizeof *out->params);
        if (out->params) {
            memcpy(out->params, ki->params, ki->n * sizeof *out->params);
            rc = 0;
        }
    }
    if (rc == 0) {
        out->from_cubin = 1;
        out->max_threads = (int)ki->max_threads;
        struct sym_query q = { .name = mangled, .type = STT_FUNC };
        struct shdr s;
        if (elf_symbols(&e, match_sym, &q)) {
            ki->sym = q.index;
            if (elf_find(&e, ".nv.info", NULL, &s) >= 0)
                nv_info_each(&e, &s, module_attr, ki);
        }
        out->regs = ki->regs;
        out->local_bytes = ki->frame;
        out->sym = ki->sym;
        out->cbank_off = ki->cbank_off;
        out->cbank_size = ki->cbank_size;
        out->static_smem = elf_find(&e, ".nv.shared.", mangled, &s) >= 0 && s.size < (1u << 24) ? (int)s.size : 0;
        /* Cubins for sm_90 and later place a kernel's shared variables after
         * the 1 KiB the driver reserves per block (they name its offset,
         * .nv.reservedSmem.offset0) and count it in the section; the
         * kernel's own share (what ptxas reports) is the rest. */
        struct sym_query r = { .name = ".nv.reservedSmem.offset0", .type = STT_OBJECT };
        if (out->static_smem >= RESERVED_SMEM && elf_symbols(&e, match_sym, &r))
            out->static_smem -= RESERVED_SMEM;
        out->const_bytes = elf_find(&e, ".nv.constant3", NULL, &s) >= 0 && s.size < (1u << 24) ? (int)s.size : 0;
    }
    free(ki);
    return rc;
}

/* ---- PTX ---- */

struct ptx_cursor {
    const char *p, *end;
};

static void ptx_skip(struct ptx_cursor *c)
{
    c->p = emu_ptx_skip(c->p, c->end);
}

static int ptx_ident_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_' || ch == '$' || ch == '.' || ch == '%';
}

/* Next token: an identifier/directive, a number, or one punctuation char. */
static size_t ptx_token(struct ptx_cursor *c, const char **tok)
{
    ptx_skip(c);
    *tok = c->p;
    if (c->p >= c->end)
        return 0;
    if (ptx_ident_char(*c->p)) {
        while (c->p < c->end && ptx_ident_char(*c->p))
            c->p++;
    } else {
        c->p++;
    }
    return (size_t)(c->p - *tok);
}

static int tok_is(const char *t, size_t n, const char *s)
{
    return n == strlen(s) && memcmp(t, s, n) == 0;
}

static uint64_t tok_num(const char *t, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n && isdigit((unsigned char)t[i]); i++)
        v = v * 10 + (uint64_t)(t[i] - '0');
    return v;
}

/* A PTX scalar type: its size and the parameter kind it stands for. */
static int ptx_type(const char *t, size_t n, unsigned *bytes, uint8_t *kind)
{
    static const struct { const char *name; unsigned bytes; uint8_t kind; } types[] = {
        { ".u8", 1, MAYA_KP_U8 }, { ".s8", 1, MAYA_KP_I8 }, { ".b8", 1, MAYA_KP_U8 },
        { ".u16", 2, MAYA_KP_U16 }, { ".s16", 2, MAYA_KP_I16 }, { ".b16", 2, MAYA_KP_U16 },
        { ".f16", 2, MAYA_KP_F16 }, { ".bf16", 2, MAYA_KP_BF16 },
        { ".u32", 4, MAYA_KP_U32 }, { ".s32", 4, MAYA_KP_I32 }, { ".b32", 4, MAYA_KP_U32 },
        { ".f32", 4, MAYA_KP_F32 }, { ".f16x2", 4, MAYA_KP_BYTES }, { ".bf16x2", 4, MAYA_KP_BYTES },
        { ".u64", 8, MAYA_KP_U64 }, { ".s64", 8, MAYA_KP_I64 }, { ".b64", 8, MAYA_KP_U64 },
        { ".f64", 8, MAYA_KP_F64 }, { ".b128", 16, MAYA_KP_BYTES },
    };
    for (size_t i = 0; i < MAYA_ARRAY_LEN(types); i++)
        if (tok_is(t, n, types[i].name)) {
            *bytes = types[i].bytes;
            *kind = types[i].kind;
            return 0;
        }
    return -1;
}

/* Parse "( .param ... name[N], ... )" after ".entry <name>". */
static int ptx_params(struct ptx_cursor *c, struct layout *out)
{
    const char *t;
    size_t n = ptx_token(c, &t);
    struct maya_kparam *p = calloc(MAX_PARAMS, sizeof *p);
    if (!p)
        return -1;
    unsigned np = 0;
    uint32_t off = 0;
    if (!tok_is(t, n, "(")) {
        /* ".entry name {" : no parameter list */
        out->params = p;
        out->n = 0;
        out->param_bytes = 0;
        return 0;
    }
    for (;;) {
        n = ptx_token(c, &t);
        if (tok_is(t, n, ")"))
            break;
        if (!tok_is(t, n, ".param") || np >= MAX_PARAMS)
            goto bad;
        unsigned elem = 0, align = 0, ptr = 0;
        uint8_t kind = MAYA_KP_BYTES;
        uint64_t count = 1;
        int named = 0;
        for (;;) {
            n = ptx_token(c, &t);
            if (n == 0)
                goto bad;
            if (tok_is(t, n, ",") || tok_is(t, n, ")"))
                break;
            if (tok_is(t, n, ".align")) {
                /* after .ptr it is the alignment of what the pointer
                 * points to, not of the parameter */
                n = ptx_token(c, &t);
                if (!ptr)
                    align = (unsigned)tok_num(t, n);
            } else if (tok_is(t, n, ".ptr")) {
                ptr = 1;
            } else if (tok_is(t, n, "[")) {
                n = ptx_token(c, &t);
                count = tok_num(t, n);
                n = ptx_token(c, &t);
                if (!tok_is(t, n, "]") || count == 0 || count > MAX_PARAM_BYTES)
                    goto bad;
            } else if (t[0] == '.' && ptx_type(t, n, &elem, &kind) == 0) {
                /* the type */
            } else if (t[0] == '.') {
                /* state space of a .ptr (.global, .const, ...) */
            } else {
                named = 1;
            }
        }
        if (!elem || !named)
            goto bad;
        if (!align)
            align = elem;
        if (align & (align - 1) || align > 256)
            goto bad;
        uint64_t bytes = elem * count;
        off = (off + align - 1) / align * align;
        if (off + bytes > MAX_PARAM_BYTES)
            goto bad;
        p[np++] = (struct maya_kparam){ .offset = (uint16_t)off, .bytes = (uint16_t)bytes,
                                        .kind = count > 1 ? MAYA_KP_BYTES : ptr ? MAYA_KP_PTR : kind };
        off += (uint32_t)bytes;
        if (tok_is(t, n, ")"))
            break;
    }
    /* keep only what the kernel has (the parse used room for the most) */
    struct maya_kparam *fit = realloc(p, MAYA_MAX(np, 1) * sizeof *p);
    out->params = fit ? fit : p;
    out->n = np;
    out->param_bytes = off;
    return 0;
bad:
    free(p);
    return -1;
}

/* The size of a ".shared [.align N] .type name[count]" declaration whose
 * ".shared" token was just read; 0 if it is not one (e.g. ld.shared). */
static uint64_t ptx_shared_decl(struct ptx_cursor *c, unsigned *align)
{
    const char *t;
    size_t n;
    unsigned elem = 0;
    uint8_t kind;
    uint64_t count = 1;
    *align = 0;
    while ((n = ptx_token(c, &t)) > 0 && t[0] == '.') {
        if (tok_is(t, n, ".align")) {
            n = ptx_token(c, &t);
            *align = (unsigned)tok_num(t, n);
        } else if (ptx_type(t, n, &elem, &kind) < 0) {
            return 0;
        }
    }
    if (!elem || n == 0)
        return 0;
    n = ptx_token(c, &t);
    if (tok_is(t, n, "[")) {
        n = ptx_token(c, &t);
        count = tok_num(t, n);
    }
    if (!*align)
        *align = elem;
    return count <= (1u << 24) ? elem * count : 0;
}

/* After an entry's parameters: launch bounds (.maxntid / .reqntid) before
 * its body, and the static shared memory its body declares. */
static void ptx_directives(struct ptx_cursor *c, struct layout *out)
{
    const char *t;
    size_t n;
    while ((n = ptx_token(c, &t)) > 0 && !tok_is(t, n, "{") && !tok_is(t, n, ";")) {
        if (tok_is(t, n, ".maxntid") || tok_is(t, n, ".reqntid")) {
            uint64_t threads = 1;
            for (int i = 0; i < 3; i++) {
                n = ptx_token(c, &t);
                threads *= tok_num(t, n);
                const char *save = c->p;
                n = ptx_token(c, &t);
                if (!tok_is(t, n, ",")) {
                    c->p = save;
                    break;
                }
            }
            out->max_threads = threads > 0 && threads <= 1024 ? (int)threads : 0;
        }
    }
    if (!tok_is(t, n, "{"))
        return;
    uint64_t smem = 0;
    for (int depth = 1; depth > 0 && (n = ptx_token(c, &t)) > 0;) {
        if (tok_is(t, n, "{"))
            depth++;
        else if (tok_is(t, n, "}"))
            depth--;
        else if (tok_is(t, n, ".shared")) {
            unsigned align;
            uint64_t bytes = ptx_shared_decl(c, &align);
            if (bytes && align && !(align & (align - 1)))
                smem = (smem + align - 1) / align * align + bytes;
        }
    }
    out->static_smem = smem < (1u << 24) ? (int)smem : 0;
}

static int ptx_layout(const struct blob *b, const char *mangled, struct layout *out)
{
    struct ptx_cursor c = { (const char *)b->p, (const char *)b->p + b->n };
    size_t mlen = strlen(mangled);
    while (c.p < c.end) {
        const char *hit = memmem(c.p, (size_t)(c.end - c.p), ".entry", 6);
        if (!hit)
            return -1;
        c.p = hit + 6;
        if (hit > (const char *)b->p && ptx_ident_char(hit[-1]))
            continue;
        const char *t;
        size_t n = ptx_token(&c, &t);
        if (n == mlen && memcmp(t, mangled, n) == 0) {
            if (ptx_params(&c, out) < 0)
                return -1;
            ptx_directives(&c, out);
            return 0;
        }
    }
    return -1;
}

/* ---- parameter types from a demangled C++ signature ---- */

static const struct {
    const char *name;
    uint8_t kind;
    uint8_t bytes;
} cxx_types[] = {
    { "int", MAYA_KP_I32, 4 }, { "unsigned int", MAYA_KP_U32, 4 },
    { "short", MAYA_KP_I16, 2 }, { "unsigned short", MAYA_KP_U16, 2 },
    { "long", MAYA_KP_I64, 8 }, { "unsigned long", MAYA_KP_U64, 8 },
    { "long long", MAYA_KP_I64, 8 }, { "unsigned long long", MAYA_KP_U64, 8 },
    { "char", MAYA_KP_CHAR, 1 }, { "signed char", MAYA_KP_I8, 1 }, { "unsigned char", MAYA_KP_U8, 1 },
    { "bool", MAYA_KP_BOOL, 1 }, { "float", MAYA_KP_F32, 4 }, { "double", MAYA_KP_F64, 8 },
    { "__half", MAYA_KP_F16, 2 }, { "half", MAYA_KP_F16, 2 }, { "c10::Half", MAYA_KP_F16, 2 },
    { "__nv_bfloat16", MAYA_KP_BF16, 2 }, { "c10::BFloat16", MAYA_KP_BF16, 2 },
    { "char16_t", MAYA_KP_U16, 2 }, { "char32_t", MAYA_KP_U32, 4 }, { "wchar_t", MAYA_KP_I32, 4 },
};

/* The kind of one parameter type as the demangler spells it, checked
 * against the size the layout gives it; MAYA_KP_BYTES if unsure. */
static uint8_t cxx_kind(const char *t, size_t n, unsigned bytes)
{
    while (n && isspace((unsigned char)t[0]))
        t++, n--;
    while (n && isspace((unsigned char)t[n - 1]))
        n--;
    if (n && (t[n - 1] == '*' || memmem(t, n, "(*)", 3)))
        return bytes == 8 ? MAYA_KP_PTR : MAYA_KP_BYTES;
    /* by-value parameters: drop cv-qualifiers */
    for (int again = 1; again;) {
        again = 0;
        if (n > 6 && memcmp(t, "const ", 6) == 0)
            t += 6, n -= 6, again = 1;
        if (n > 6 && memcmp(t + n - 6, " const", 6) == 0)
            n -= 6, again = 1;
        if (n > 9 && memcmp(t, "volatile ", 9) == 0)
            t += 9, n -= 9, again = 1;
    }
    for (size_t i = 0; i < MAYA_ARRAY_LEN(cxx_types); i++)
        if (n == strlen(cxx_types[i].name) && memcmp(t, cxx_types[i].name, n) == 0)
            return cxx_types[i].bytes == bytes ? cxx_types[i].kind : MAYA_KP_BYTES;
    return MAYA_KP_BYTES;
}

/* Give params kinds from "name(T1, T2, ...)"; 0 if the signature's
 * parameter count matches the layout. */
static int cxx_kinds(const char *demangled, struct maya_kparam *p, unsigned np)
{
    size_t len = strlen(demangled);
    if (!len || demangled[len - 1] != ')')
        return -1;
    /* the parameter list is the last balanced (...) */
    int depth = 0;
    size_t open = len;
    for (size_t i = len; i-- > 0;) {
        if (demangled[i] == ')')
            depth++;
        else if (demangled[i] == '(' && --depth == 0) {
            open = i;
            break;
        }
    }
    if (open == len)
        return -1;
    const char *s = demangled + open + 1, *end = demangled + len - 1;
    uint8_t kinds[MAX_PARAMS];
    unsigned count = 0;
    if (s == end)
        return np == 0 ? 0 : -1;
    depth = 0;
    const char *start = s;
    for (const char *q = s; q <= end; q++) {
        if (q < end && (*q == '(' || *q == '<' || *q == '[' || *q == '{'))
            depth++;
        else if (q < end && (*q == ')' || *q == '>' || *q == ']' || *q == '}'))
            depth--;
        else if (q == end || (*q == ',' && depth == 0)) {
            if (count >= np || count >= MAYA_ARRAY_LEN(kinds))
                return -1;
            kinds[count] = cxx_kind(start, (size_t)(q - start), p[count].bytes);
            count++;
            start = q + 1;
        }
    }
    if (count != np)
        return -1;
    for (unsigned i = 0; i < np; i++)
        p[i].kind = kinds[i];
    return 0;
}

/* ---- putting it together ---- */

static int device_sm(void)
{
    struct emu_device *d = emu_device(0);
    return d ? d->prop.major * 10 + d->prop.minor : 0;
}

/* Preference of a cubin for the emulated GPU: the exact SM, else the newest
 * one of the same major not newer than it, else the newest. */
static int cubin_rank(int sm, int want)
{
    if (!want)
        return sm;
    if (sm == want)
        return 3000;
    if (sm / 10 == want / 10 && sm < want)
        return 2000 + sm;
    return sm;
}

static struct emu_image_index *module_index(struct emu_module *m, const void *image, size_t bytes, int *temp)
{
    *temp = 0;
    if (m && m->image == image) {
        if (!m->index)
            m->index = index_new(image, bytes);
        return m->index;
    }
    *temp = 1;
    return index_new(image, bytes);
}

/* The cubins of an index, best first by the SM their entry headers name
 * (at most 64); none is decoded here: callers decode (code_ready) the ones
 * they read, in this order. */
static int cubins_by_rank(struct emu_image_index *x, int *order)
{
    int n = 0, want = device_sm();
    for (int i = 0; i < x->ncodes && n < 64; i++) {
        if (x->codes[i].kind != ENTRY_ELF || x->codes[i].state < 0)
            continue;
        int j = n++;
        while (j > 0 && cubin_rank(x->codes[order[j - 1]].sm, want) < cubin_rank(x->codes[i].sm, want)) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    return n;
}

static int find_layout(struct emu_image_index *x, const char *mangled, struct layout *l)
{
    int order[64], n = cubins_by_rank(x, order);
    for (int i = 0; i < n; i++)
        if (code_ready(&x->codes[order[i]]) == 1 && cubin_layout(&x->codes[order[i]].data, mangled, l) == 0) {
            l->sm = x->codes[order[i]].sm;
            l->code = order[i];
            return 0;
        }
    for (int i = 0; i < x->ncodes; i++)
        if (x->codes[i].kind == ENTRY_PTX && code_ready(&x->codes[i]) == 1 &&
            ptx_layout(&x->codes[i].data, mangled, l) == 0) {
            l->sm = x->codes[i].sm;
            return 0;
        }
    return -1;
}

/* Copy PTX's parameter kinds into a cubin's layout if the PTX entry lays
 * the parameters out the same way; 1 if it did. */
static int kinds_from(const struct blob *ptx, const char *mangled, struct layout *l)
{
    struct layout pl = { 0 };
    if (ptx_layout(ptx, mangled, &pl) != 0)
        return 0;
    int same = pl.n == l->n;
    for (unsigned j = 0; same && j < l->n; j++)
        same = pl.params[j].offset == l->params[j].offset && pl.params[j].bytes == l->params[j].bytes;
    for (unsigned j = 0; same && j < l->n; j++)
        l->params[j].kind = pl.params[j].kind;
    free(pl.params);
    return same;
}

/* Call fn on each PTX text of the image until it returns nonzero: the PTX
 * entries, then the PTX a cubin may carry in .nv_debug_ptx_txt (Triton's
 * cubins do). Returns fn's nonzero result, or 0. */
static int each_ptx_text(struct emu_image_index *x, int (*fn)(const struct blob *, void *), void *arg)
{
    int r;
    for (int i = 0; i < x->ncodes; i++)
        if (x->codes[i].kind == ENTRY_PTX && code_ready(&x->codes[i]) == 1 && (r = fn(&x->codes[i].data, arg)))
            return r;
    for (int i = 0; i < x->ncodes; i++) {
        struct elf e;
        struct shdr s;
        if (x->codes[i].kind != ENTRY_ELF || code_ready(&x->codes[i]) != 1 || elf_open(&e, &x->codes[i].data) < 0 ||
            elf_find(&e, ".nv_debug_ptx_txt", NULL, &s) < 0 || s.type == SHT_NOBITS)
            continue;
        struct blob text = { e.b.p + s.off, (size_t)s.size };
        if ((r = fn(&text, arg)))
            return r;
    }
    return 0;
}

struct kinds_arg {
    const char *mangled;
    struct layout *l;
};

static int kinds_visit(const struct blob *ptx, void *arg)
{
    struct kinds_arg *a = arg;
    return kinds_from(ptx, a->mangled, a->l);
}

/* Kinds for an extern "C" kernel laid out by a cubin, from the image's PTX. */
static void ptx_kinds(struct emu_image_index *x, const char *mangled, struct layout *l)
{
    struct kinds_arg a = { mangled, l };
    each_ptx_text(x, kinds_visit, &a);
}

struct work_arg {
    const char *mangled;
    int sm;
    void *work;
    size_t bytes;
};

static int work_visit(const struct blob *ptx, void *arg)
{
    struct work_arg *a = arg;
    return emu_kwork_ptx_text((const char *)ptx->p, ptx->n, a->mangled, ptx_sm(ptx), &a->work, &a->bytes) == 0;
}

/* The work summary of a kernel from the image's PTX: 1 if found. */
static int ptx_work(struct emu_image_index *x, const char *mangled, struct work_arg *a)
{
    a->mangled = mangled;
    return each_ptx_text(x, work_visit, a);
}

struct ops_arg {
    const char *mangled;
    struct emu_ptx_ops *ops;
};

static int ops_visit(const struct blob *ptx, void *arg)
{
    struct ops_arg *a = arg;
    return emu_ptx_op_counts((const char *)ptx->p, ptx->n, a->mangled, a->ops) == 0;
}

/* Instruction-class counts of a kernel from the image's PTX: 1 if found. */
static int ptx_ops(struct emu_image_index *x, const char *mangled, struct emu_ptx_ops *ops)
{
    struct ops_arg a = { mangled, ops };
    return each_ptx_text(x, ops_visit, &a);
}

struct ptx_copy_arg {
    const char *mangled;
    char *text;
    size_t bytes;
};

static int ptx_copy_visit(const struct blob *ptx, void *arg)
{
    struct ptx_copy_arg *a = arg;
    struct emu_ptx_ops ops;
    if (emu_ptx_op_counts((const char *)ptx->p, ptx->n, a->mangled, &ops) != 0)
        return 0; /* no such entry in this text */
    a->text = malloc(ptx->n ? ptx->n : 1);
    if (!a->text)
        return -1;
    memcpy(a->text, ptx->p, ptx->n);
    a->bytes = ptx->n;
    return 1;
}

EMU_API int emu_fatbin_kernel_ptx(struct emu_kernel *k, char **text, size_t *bytes)
{
    *text = NULL;
    *bytes = 0;
    if (!k || !k->mangled || !k->module || !k->module->image)
        return -1;
    int temp;
    pthread_mutex_lock(&index_lock);
    struct emu_image_index *x = module_index(k->module, k->module->image, k->module->image_bytes, &temp);
    struct ptx_copy_arg a = { k->mangled, NULL, 0 };
    int rc = x ? each_ptx_text(x, ptx_copy_visit, &a) : 0;
    if (temp)
        index_free_locked(x);
    pthread_mutex_unlock(&index_lock);
    if (rc != 1)
        return -1;
    *text = a.text;
    *bytes = a.bytes;
    return 0;
}

/* The SASS text of a kernel that has no PTX, for the executor (sass_exec.c):
 * the cubin the kernel runs from is copied out under the index lock and
 * disassembled without it (sass_work.c caches the text on disk). */
EMU_API int emu_fatbin_kernel_sass(struct emu_kernel *k, char **text, size_t *bytes, unsigned *param_base, int *sm,
                                   void **bank2, size_t *bank2_bytes)
{
    *text = NULL;
    *bytes = 0;
    *bank2 = NULL;
    *bank2_bytes = 0;
    if (!k || !k->mangled || !k->module || !k->module->image)
        return -1;
    int temp;
    pthread_mutex_lock(&index_lock);
    struct emu_image_index *x = module_index(k->module, k->module->image, k->module->image_bytes, &temp);
    struct layout l = { .regs = -1, .local_bytes = -1, .code = -1, .cbank_off = -1, .cbank_size = -1 };
    unsigned char *copy = NULL;
    size_t n = 0;
    uint64_t hash = 0;
    if (x && find_layout(x, k->mangled, &l) == 0 && l.code >= 0 && l.cbank_off >= 0) {
        struct code *c = &x->codes[l.code];
        if (code_ready(c) == 1) {
            if (!c->hash)
                c->hash = emu_hash_bytes(c->data.p, c->data.n, 0) | 1;
            hash = c->hash;
            copy = malloc(c->data.n ? c->data.n : 1);
            n = copy ? c->data.n : 0;
            if (copy)
                memcpy(copy, c->data.p, n);
        }
    }
    if (temp && x)
        index_free_locked(x);
    pthread_mutex_unlock(&index_lock);
    free(l.params);
    if (!copy)
        return -1;
    int rc = emu_sass_text(copy, n, hash, k->mangled, l.sym, text, bytes);
    /* the kernel's constant bank 2 (jump tables of switches, BRX) */
    struct blob b = { copy, n };
    struct elf e;
    struct shdr s;
    if (rc == 0 && elf_open(&e, &b) == 0 && (elf_find(&e, ".nv.constant2.", k->mangled, &s) >= 0 || elf_find(&e, ".nv.constant2", NULL, &s) >= 0) && s.size &&
        s.size <= (64u << 10) && in_bounds(&b, s.off, s.size) && (*bank2 = malloc(s.size)) != NULL) {
        memcpy(*bank2, copy + s.off, s.size);
        *bank2_bytes = s.size;
    }
    free(copy);
    *param_base = (unsigned)l.cbank_off;
    *sm = l.sm;
    return rc;
}

static void add_feature(struct maya_kfeature *f, uint32_t *n, const char *name, int value)
{
    if (value >= 0)
        f[(*n)++] = (struct maya_kfeature){ emu_string(name), (uint32_t)value };
}

EMU_API int emu_fatbin_kernel_layout(const void *image, size_t image_bytes, struct emu_kernel *k)
{
    if (!image || !k || !k->mangled)
        return -1;
    int temp;
    pthread_mutex_lock(&index_lock);
    struct emu_image_index *x = module_index(k->module, image, image_bytes, &temp);
    struct layout l = { .regs = -1, .local_bytes = -1, .code = -1, .cbank_off = -1, .cbank_size = -1 };
    int rc = x ? find_layout(x, k->mangled, &l) : -1;
    if (rc == 0 && cxx_kinds(k->name ? k->name : "", l.params, l.n) != 0 && l.from_cubin)
        ptx_kinds(x, k->mangled, &l);
    /* Code loaded at run time (Triton's, under torch.compile) is named by
     * its generator: its instruction mix tells the estimator what it does. */
    struct emu_ptx_ops ops;
    int have_ops = rc == 0 && k->module &&
                   (k->module->source == MAYA_KSRC_MODULE || k->module->source == MAYA_KSRC_LIBRARY) &&
                   ptx_ops(x, k->mangled, &ops);
    /* The work its code does, for the estimator (once per kernel): from
     * PTX, else from the cubin's SASS (sass_work.c, cached on disk). */
    struct work_arg wa = { NULL, 0, NULL, 0 };
    int sass = 0;
    uint64_t hash = 0;
    if (rc == 0 && !emu_kwork_disabled() && !ptx_work(x, k->mangled, &wa) && l.code >= 0 && l.cbank_off >= 0 &&
        !temp) {
        struct code *c = &x->codes[l.code];
        if (!c->hash && code_ready(c) == 1)
            c->hash = emu_hash_bytes(c->data.p, c->data.n, 0) | 1;
        hash = c->hash;
        sass = hash != 0;
    }
    pthread_mutex_unlock(&index_lock);
    if (sass && emu_sass_work(NULL, 0, hash, k->mangled, l.sym, l.sm, (unsigned)l.cbank_off, (unsigned)l.cbank_size,
                              l.params, l.n, &wa.work, &wa.bytes) == 1) {
        /* not cached: nvdisasm reads a copy of the cubin, without the lock */
        pthread_mutex_lock(&index_lock);
        struct code *c = &x->codes[l.code];
        void *copy = code_ready(c) == 1 ? malloc(c->data.n ? c->data.n : 1) : NULL;
        size_t n = copy ? c->data.n : 0;
        if (copy)
            memcpy(copy, c->data.p, n);
        pthread_mutex_unlock(&index_lock);
        if (copy)
            emu_sass_work(copy, n, hash, k->mangled, l.sym, l.sm, (unsigned)l.cbank_off, (unsigned)l.cbank_size,
                          l.params, l.n, &wa.work, &wa.bytes);
        else
            emu_sass_unlock(hash, k->mangled, l.sym);
        free(copy);
    }
    if (sass && !wa.work && !emu_nvdisasm()) {
        k->sass_unread = 1;
        emu_warn_sass_unread(k->name ? k->name : k->mangled);
    }
    if (temp) {
        pthread_mutex_lock(&index_lock);
        index_free_locked(x);
        pthread_mutex_unlock(&index_lock);
    }
    if (rc != 0)
        return -1;
    if (wa.work) {
        struct maya_kwork *w = wa.work;
        w->regs = (uint16_t)(l.regs > 0 ? l.regs : 0);
        w->static_smem = (uint32_t)MAYA_MAX(l.static_smem, 0);
        free(k->work);
        k->work = wa.work;
        k->work_bytes = (uint32_t)wa.bytes;
        k->nextent_params = emu_kwork_pointer_params(w, k->extent_params, EMU_MAX_EXTENTS);
    }

#define PTX_OP_COUNT(name) +1
    struct maya_kfeature *f = calloc(4 EMU_PTX_OP_FIELDS(PTX_OP_COUNT), sizeof *f);
    if (!f) {
        free(l.params);
        return -1;
    }
    uint32_t nf = 0;
    if (!l.from_cubin) {
        /* PTX knows launch bounds and shared memory, not registers. */
        add_feature(f, &nf, "static_smem", l.static_smem);
        add_feature(f, &nf, "launch_bounds", l.max_threads ? l.max_threads : -1);
        k->static_smem = l.static_smem;
        if (l.max_threads)
            k->max_threads_per_block = MAYA_MIN(k->max_threads_per_block, l.max_threads);
    } else {
        add_feature(f, &nf, "regs", l.regs);
        add_feature(f, &nf, "static_smem", l.static_smem);
        add_feature(f, &nf, "local_bytes", l.local_bytes);
        add_feature(f, &nf, "launch_bounds", l.max_threads ? l.max_threads : -1);
        if (l.regs >= 0)
            k->num_regs = l.regs;
        k->static_smem = l.static_smem;
        k->local_bytes = MAYA_MAX(l.local_bytes, 0);
        k->const_bytes = l.const_bytes;
        if (l.max_threads)
            k->max_threads_per_block = MAYA_MIN(k->max_threads_per_block, l.max_threads);
    }
    if (have_ops) {
#define PTX_OP_FEATURE(name) add_feature(f, &nf, "ptx." #name, (int)MAYA_MIN(ops.name, (uint32_t)INT32_MAX));
        EMU_PTX_OP_FIELDS(PTX_OP_FEATURE)
    }
    k->binary_sm = l.sm;
    free(k->params);
    free(k->features);
    k->params = l.params;
    k->nparams = l.n;
    k->param_bytes = l.param_bytes;
    k->features = f;
    k->nfeatures = nf;
    return 0;
}

/* ---- what a module holds (driver: cuModuleGetFunction, GetGlobal, ...) ---- */

struct name_visit {
    int count;
    /* names already reported (a kernel appears in each cubin and the PTX) */
    char **seen;
    int nseen, cap;
};

static int visit_once(struct name_visit *v, const char *name, size_t len)
{
    for (int i = 0; i < v->nseen; i++)
        if (strlen(v->seen[i]) == len && memcmp(v->seen[i], name, len) == 0)
            return 0;
    if (v->nseen == v->cap) {
        int ncap = v->cap ? v->cap * 2 : 64;
        char **n = realloc(v->seen, (size_t)ncap * sizeof *n);
        if (!n)
            return -1;
        v->seen = n;
        v->cap = ncap;
    }
    char *copy = strndup(name, len);
    if (!copy)
        return -1;
    v->seen[v->nseen++] = copy;
    v->count++;
    return 0;
}

/* STO_CUDA_ENTRY: the symbol is a kernel. */
static int visit_entry(uint32_t index, const struct sym *s, void *arg)
{
    if (s->type == STT_FUNC && (s->other & 0x10))
        visit_once(arg, s->name, strlen(s->name));
    return 0;
}

static void visit_ptx_entries(const struct blob *b, struct name_visit *v)
{
    struct ptx_cursor c = { (const char *)b->p, (const char *)b->p + b->n };
    while (c.p < c.end) {
        const char *hit = memmem(c.p, (size_t)(c.end - c.p), ".entry", 6);
        if (!hit)
            return;
        c.p = hit + 6;
        if (hit > (const char *)b->p && ptx_ident_char(hit[-1]))
            continue;
        const char *t;
        size_t n = ptx_token(&c, &t);
        if (n && n < 4096 && (isalpha((unsigned char)t[0]) || t[0] == '_' || t[0] == '$'))
            visit_once(v, t, n);
    }
}

EMU_API int emu_image_kernels(struct emu_module *m, void (*fn)(const char *name, void *arg), void *arg)
{
    if (!m || !m->image)
        return -1;
    struct name_visit v = { 0, NULL, 0, 0 };
    int temp;
    pthread_mutex_lock(&index_lock);
    struct emu_image_index *x = module_index(m, m->image, m->image_bytes, &temp);
    int order[64], n = x ? cubins_by_rank(x, order) : 0, best = -1;
    for (int i = 0; i < n && best < 0; i++)
        if (code_ready(&x->codes[order[i]]) == 1)
            best = order[i];
    if (best >= 0) {
        /* the cubin the kernels would run from */
        struct elf e;
        if (elf_open(&e, &x->codes[best].data) == 0)
            elf_symbols(&e, visit_entry, &v);
    } else {
        for (int i = 0; x && i < x->ncodes; i++)
            if (x->codes[i].kind == ENTRY_PTX && code_ready(&x->codes[i]) == 1)
                visit_ptx_entries(&x->codes[i].data, &v);
    }
    if (temp)
        index_free_locked(x);
    pthread_mutex_unlock(&index_lock);
    /* The caller's function runs without the lock: it may look the module
     * up again (the driver's cuModuleEnumerateFunctions does). */
    for (int i = 0; i < v.nseen; i++) {
        if (fn)
            fn(v.seen[i], arg);
        free(v.seen[i]);
    }
    free(v.seen);
    return x ? v.count : -1;
}

/* Size of "<space> .align N .b8 name[K]" / ".u32 name" declarations in PTX. */
static int ptx_global(const struct blob *b, const char *name, uint64_t *bytes)
{
    struct ptx_cursor c = { (const char *)b->p, (const char *)b->p + b->n };
    size_t nlen = strlen(name);
    while (c.p < c.end) {
        const char *hit = memmem(c.p, (size_t)(c.end - c.p), name, nlen);
        if (!hit)
            return -1;
        c.p = hit + nlen;
        if ((hit > (const char *)b->p && ptx_ident_char(hit[-1])) || (c.p < c.end && ptx_ident_char(*c.p)))
            continue;
        /* walk back to the start of the declaration's line */
        const char *line = hit;
        while (line > (const char *)b->p && line[-1] != '\n' && line[-1] != ';')
            line--;
        if (!memmem(line, (size_t)(hit - line), ".global", 7) && !memmem(line, (size_t)(hit - line), ".const", 6))
            continue;
        unsigned elem = 0;
        uint8_t kind;
        struct ptx_cursor d = { line, hit };
        const char *t;
        size_t n;
        while ((n = ptx_token(&d, &t)) > 0)
            if (t[0] == '.')
                ptx_type(t, n, &elem, &kind);
        if (!elem)
            continue;
        uint64_t count = 1;
        n = ptx_token(&c, &t);
        if (tok_is(t, n, "[")) {
            n = ptx_token(&c, &t);
            count = tok_num(t, n);
        }
        *bytes = elem * count;
        return 0;
    }
    return -1;
}

static int sym_object(uint32_t index, const struct sym *s, void *arg)
{
    struct sym_query *q = arg;
    if (s->type != STT_OBJECT || strcmp(s->name, q->name) != 0)
        return 0;
    q->size = s->size;
    q->shndx = s->shndx;
    q->value = s->value;
    return 1;
}

EMU_API int emu_image_global_init(struct emu_module *m, const char *name, void *buf, uint64_t bytes)
{
    if (!m || !m->image || !name || !buf)
        return -1;
    int temp, rc = -1;
    pthread_mutex_lock(&index_lock);
    struct emu_image_index *x = module_index(m, m->image, m->image_bytes, &temp);
    int order[64], n = x ? cubins_by_rank(x, order) : 0;
    for (int i = 0; i < n && rc < 0; i++) {
        struct elf e;
        struct sym_query q = { .name = name };
        struct shdr sh;
        if (code_ready(&x->codes[order[i]]) != 1 || elf_open(&e, &x->codes[order[i]].data) != 0 ||
            !elf_symbols(&e, sym_object, &q) || elf_shdr(&e, q.shndx, &sh) < 0)
            continue;
        uint64_t len = MAYA_MIN(bytes, q.size);
        if (sh.type == SHT_NOBITS) {
            memset(buf, 0, len); /* .nv.global: zero-initialised */
            rc = 1;
        } else if (q.value <= sh.size && len <= sh.size - q.value) {
            memcpy(buf, e.b.p + sh.off + q.value, len); /* .nv.global.init, .nv.constant3 */
            rc = 0;
        }
    }
    if (temp)
        index_free_locked(x);
    pthread_mutex_unlock(&index_lock);
    return rc;
}

EMU_API int emu_image_global(struct emu_module *m, const char *name, uint64_t *bytes)
{
    if (!m || !m->image || !name || !bytes)
        return -1;
    int temp, rc = -1;
    pthread_mutex_lock(&index_lock);
    struct emu_image_index *x = module_index(m, m->image, m->image_bytes, &temp);
    int order[64], n = x ? cubins_by_rank(x, order) : 0;
    for (int i = 0; i < n && rc < 0; i++) {
        struct elf e;
        struct sym_query q = { .name = name };
        if (code_ready(&x->codes[order[i]]) == 1 && elf_open(&e, &x->codes[order[i]].data) == 0 &&
            elf_symbols(&e, sym_object, &q)) {
            *bytes = q.size;
            rc = 0;
        }
    }
    for (int i = 0; x && rc < 0 && i < x->ncodes; i++)
        if (x->codes[i].kind == ENTRY_PTX && code_ready(&x->codes[i]) == 1)
            rc = ptx_global(&x->codes[i].data, name, bytes);
    if (temp)
        index_free_locked(x);
    pthread_mutex_unlock(&index_lock);
    return rc;
}

EMU_API int emu_image_runnable(struct emu_module *m, int sm)
{
    if (!m || !m->image)
        return -1;
    int temp, ok = 0, usable = 0;
    pthread_mutex_lock(&index_lock);
    struct emu_image_index *x = module_index(m, m->image, m->image_bytes, &temp);
    for (int i = 0; x && i < x->ncodes && !ok; i++) {
        struct code *c = &x->codes[i];
        if (code_ready(c) != 1)
            continue;
        usable = 1;
        /* A cubin runs on its major architecture at the same or a newer
         * minor; PTX is compiled for any GPU at least as new as its target. */
        if (c->kind == ENTRY_ELF)
            ok = !c->sm || !sm || (c->sm / 10 == sm / 10 && c->sm <= sm);
        else
            ok = !c->sm || !sm || c->sm <= sm;
    }
    if (temp)
        index_free_locked(x);
    pthread_mutex_unlock(&index_lock);
    return ok ? 1 : usable ? 0 : -1;
}

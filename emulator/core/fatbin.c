/* Reading module images without a GPU: fat binaries, cubins and PTX.
 *
 * A module image is one of:
 *   - a fat binary: header {u32 magic 0xBA55ED50, u16 version, u16 header
 *     size, u64 bytes that follow}, then entries, each with its own header
 *     (kind 1 PTX / 2 ELF, header size, payload size, compressed and
 *     uncompressed sizes, SM version, flags: 0x2000 LZ4 block, 0x8000 Zstd);
 *   - a bare cubin (64-bit little-endian ELF);
 *   - PTX text.
 * This file finds an image's code entries (its index), decompresses them on
 * first use (keeping them within a budget), picks the cubin for the
 * emulated GPU, and reads what the others need of ELF (sections, symbols,
 * .nv.info records) and of PTX (tokens, types): fatbin.h. What a kernel's
 * parameters and code are is kernel_layout.c's; what a module holds,
 * module_symbols.c's.
 *
 * Everything read here comes from outside: every offset is bounds-checked,
 * decompressed sizes are checked against what the header promised, and a
 * damaged image gives "unknown", never a crash.
 *
 * The parsed index of a module (its entries, decompressed on first use) is
 * kept on the module, so each image is decompressed at most once while it
 * stays in the budget.
 */
#define _GNU_SOURCE
#include "fatbin.h"
#include "maya/common.h"
#include "ptx_parse.h"

#include <ctype.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define FATBIN_MAGIC 0xBA55ED50u
#define ENTRY_FLAG_LZ4 0x2000u
#define ENTRY_FLAG_ZSTD 0x8000u
#define MAX_IMAGE_BYTES (1ull << 31)   /* no code image is this large */
#define EIFMT_SVAL 4                   /* u16 length + payload; other formats are 4 bytes */

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



pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;

static int cubin_sm(const struct blob *b)
{
    if (!is_elf(b->p, b->n))
        return 0;
    uint32_t flags = get32(b->p + 0x30);
    return b->p[8] >= 8 ? (int)((flags >> 8) & 0xff) : (int)(flags & 0xff);
}

/* The SM version PTX text targets (".target sm_90a" -> 90), 0 if unknown. */
int ptx_sm(const struct blob *b)
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

void index_free_locked(struct emu_image_index *x)
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
int code_ready(struct code *c)
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



int elf_open(struct elf *e, const struct blob *b)
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

int elf_shdr(const struct elf *e, unsigned i, struct shdr *s)
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
int elf_find(const struct elf *e, const char *prefix, const char *suffix, struct shdr *out)
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


/* Visit the symbol table; fn returns nonzero to stop (that value is returned). */
int elf_symbols(const struct elf *e, int (*fn)(uint32_t index, const struct sym *s, void *arg), void *arg)
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


int match_sym(uint32_t index, const struct sym *s, void *arg)
{
    struct sym_query *q = arg;
    if (s->type != q->type || strcmp(s->name, q->name) != 0)
        return 0;
    q->index = index;
    q->size = s->size;
    return 1;
}

/* Visit the records of an .nv.info section: fn(attr, payload, len). */
void nv_info_each(const struct elf *e, const struct shdr *s,
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

/* ---- PTX ---- */


static void ptx_skip(struct ptx_cursor *c)
{
    c->p = emu_ptx_skip(c->p, c->end);
}

int ptx_ident_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_' || ch == '$' || ch == '.' || ch == '%';
}

/* Next token: an identifier/directive, a number, or one punctuation char. */
size_t ptx_token(struct ptx_cursor *c, const char **tok)
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

int tok_is(const char *t, size_t n, const char *s)
{
    return n == strlen(s) && memcmp(t, s, n) == 0;
}

uint64_t tok_num(const char *t, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n && isdigit((unsigned char)t[i]); i++)
        v = v * 10 + (uint64_t)(t[i] - '0');
    return v;
}

/* A PTX scalar type: its size and the parameter kind it stands for. */
int ptx_type(const char *t, size_t n, unsigned *bytes, uint8_t *kind)
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
/* ---- the cubin for the emulated GPU ---- */

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

struct emu_image_index *module_index(struct emu_module *m, const void *image, size_t bytes, int *temp)
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
int cubins_by_rank(struct emu_image_index *x, int *order)
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

/* A kernel's parameters and the work of its code, from its module image
 * (fatbin.h reads the image).
 *
 * From a cubin, a kernel's section ".nv.info.<mangled>" gives its parameters
 * (EIATTR_KPARAM_INFO, or its _V2 for large ones: ordinal, offset, size) and their total size
 * (EIATTR_CBANK_PARAM_SIZE); the module's ".nv.info" gives registers and
 * stack frame per function symbol; ".nv.shared.<mangled>" the static shared
 * memory. Without a cubin for the kernel, PTX's ".entry <mangled>(...)" list
 * gives the same layout. Types come from the demangled C++ signature, or for
 * extern "C" kernels from the PTX parameter types. The work the code does
 * comes from its PTX (kernel_work.c), else from the cubin's SASS
 * (sass_work.c); the executor gets the SASS text of a kernel without PTX.
 */
#define _GNU_SOURCE
#include "fatbin.h"
#include "maya/common.h"
#include "ptx_ops.h"
#include "kernel_work.h"
#include "ptx_parse.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAM_BYTES 32764u         /* CUDA's limit on a kernel's parameters */
#define MAX_PARAMS 4096u
#define RESERVED_SMEM 1024             /* shared memory the driver keeps per block (sm_90+) */

#define EIATTR_MAX_THREADS 0x05
#define EIATTR_PARAM_CBANK 0x0a
#define EIATTR_FRAME_SIZE 0x11
#define EIATTR_KPARAM_INFO 0x17
#define EIATTR_CBANK_PARAM_SIZE 0x19
#define EIATTR_REGCOUNT 0x2f
#define EIATTR_KPARAM_INFO_V2 0x45

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

/* ---- a cubin's layout: .nv.info records ---- */

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
    if ((attr == EIATTR_KPARAM_INFO || attr == EIATTR_KPARAM_INFO_V2) && len >= 12) {
        if (ki->n >= MAYA_ARRAY_LEN(ki->params)) {
            ki->overflow = 1;
            return;
        }
        /* the first form packs the size in the last word's top 14 bits;
         * the second, for parameters past 16 KiB (CUDA 12.1's 32 KiB
         * parameter space: PyTorch's tensor lists), gives the whole word */
        uint32_t size = attr == EIATTR_KPARAM_INFO ? get32(v + 8) >> 18 : get32(v + 8);
        if (size > MAX_PARAM_BYTES) {
            ki->overflow = 1;
            return;
        }
        ki->ordinal[ki->n] = get16(v + 4);
        ki->params[ki->n] = (struct maya_kparam){ .offset = get16(v + 6), .bytes = (uint16_t)size,
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


/* ---- a PTX entry's layout ---- */

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

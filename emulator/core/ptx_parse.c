/* Parsing one PTX kernel into instructions, labels and parameters.
 *
 * PTX text comes from outside (a fat binary, a cubin's debug section,
 * Triton): every read is bounded by the text's end, an unterminated comment
 * or statement ends the body, and a statement that is not an instruction is
 * skipped. Costs: one pass over the kernel's text; the instruction array
 * grows by doubling (about 150 bytes per instruction).
 */
#define _GNU_SOURCE /* memmem */
#include "ptx_parse.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\0';
}

int emu_slice_is(struct emu_slice s, const char *word)
{
    size_t w = strlen(word);
    return s.n == w && memcmp(s.p, word, w) == 0;
}

int emu_ptx_has_part(struct emu_slice op, const char *word)
{
    size_t w = strlen(word);
    for (uint32_t i = 0; i < op.n; i++)
        if (op.p[i] == '.' && i + 1 + w <= op.n && memcmp(op.p + i + 1, word, w) == 0 &&
            (i + 1 + w == op.n || op.p[i + 1 + w] == '.'))
            return 1;
    return 0;
}

struct emu_slice emu_ptx_opcode(struct emu_slice op)
{
    uint32_t n = 0;
    while (n < op.n && op.p[n] != '.')
        n++;
    return (struct emu_slice){ op.p, n };
}

int emu_ptx_label_find(const struct emu_ptx_kernel *k, struct emu_slice s)
{
    for (uint32_t i = 0; i < k->nlabels; i++)
        if (k->labels[i].name.n == s.n && memcmp(k->labels[i].name.p, s.p, s.n) == 0)
            return (int)i;
    return -1;
}

void emu_ptx_kernel_free(struct emu_ptx_kernel *k)
{
    if (!k)
        return;
    free(k->insts);
    free(k->labels);
    free(k->params);
    for (uint32_t i = 0; i < k->narena; i++)
        free(k->arena[i]);
    free(k->arena);
    memset(k, 0, sizeof *k);
}

/* ---- the entry and its parameters ---- */

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.' || c == '%';
}

struct cursor {
    const char *p, *end;
};

const char *emu_ptx_skip(const char *p, const char *end)
{
    for (;;) {
        while (p < end && (is_space(*p) || *p == '\v' || *p == '\f'))
            p++;
        if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
            while (p < end && *p != '\n' && *p != '\0')
                p++;
        } else if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
            const char *q = memmem(p + 2, (size_t)(end - p - 2), "*/", 2);
            p = q ? q + 2 : end;
        } else {
            return p;
        }
    }
}

/* Skip blanks and comments. */
static void skip(struct cursor *c)
{
    c->p = emu_ptx_skip(c->p, c->end);
}

static struct emu_slice token(struct cursor *c)
{
    skip(c);
    struct emu_slice t = { c->p, 0 };
    if (c->p >= c->end)
        return t;
    if (ident_char(*c->p))
        while (c->p < c->end && ident_char(*c->p))
            c->p++;
    else
        c->p++;
    t.n = (uint32_t)(c->p - t.p);
    return t;
}

static uint64_t slice_num(struct emu_slice t)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < t.n && isdigit((unsigned char)t.p[i]) && v < (1ull << 40); i++)
        v = v * 10 + (uint64_t)(t.p[i] - '0');
    return v;
}

static unsigned type_bytes(struct emu_slice t)
{
    static const struct { const char *name; unsigned bytes; } types[] = {
        { ".u8", 1 }, { ".s8", 1 }, { ".b8", 1 }, { ".u16", 2 }, { ".s16", 2 }, { ".b16", 2 },
        { ".f16", 2 }, { ".bf16", 2 }, { ".u32", 4 }, { ".s32", 4 }, { ".b32", 4 }, { ".f32", 4 },
        { ".f16x2", 4 }, { ".bf16x2", 4 }, { ".u64", 8 }, { ".s64", 8 }, { ".b64", 8 }, { ".f64", 8 },
        { ".b128", 16 },
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (emu_slice_is(t, types[i].name))
            return types[i].bytes;
    return 0;
}

/* Is the line [l, l+n) the start of ".entry NAME"? */
static int entry_line(const char *l, size_t n, const char *entry)
{
    const char *e = memmem(l, n, ".entry", 6);
    if (!e)
        return 0;
    const char *p = e + 6, *end = l + n;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    size_t w = strlen(entry);
    if ((size_t)(end - p) < w || memcmp(p, entry, w) != 0)
        return 0;
    p += w;
    return p == end || *p == '(' || *p == ' ' || *p == '\t' || *p == '\r';
}

/* "( .param .u64 .ptr .align 8 name, .param .align 4 .b8 name[12] )" */
static int parse_params(struct cursor *c, struct emu_ptx_kernel *k)
{
    const char *save = c->p;
    struct emu_slice t = token(c);
    if (!emu_slice_is(t, "(")) {
        c->p = save;
        return 0;
    }
    uint32_t cap = 0, off = 0;
    for (;;) {
        t = token(c);
        if (emu_slice_is(t, ")"))
            return 0;
        if (!emu_slice_is(t, ".param"))
            return -1;
        unsigned elem = 0, align = 0, ptr = 0;
        uint64_t count = 1;
        struct emu_slice name = { NULL, 0 };
        for (;;) {
            t = token(c);
            if (t.n == 0)
                return -1;
            if (emu_slice_is(t, ",") || emu_slice_is(t, ")"))
                break;
            if (emu_slice_is(t, ".align")) {
                struct emu_slice a = token(c);
                if (!ptr)
                    align = (unsigned)slice_num(a);
            } else if (emu_slice_is(t, ".ptr")) {
                ptr = 1;
            } else if (emu_slice_is(t, "[")) {
                count = slice_num(token(c));
                if (!emu_slice_is(token(c), "]") || count == 0 || count > 32764)
                    return -1;
            } else if (t.p[0] == '.') {
                unsigned b = type_bytes(t);
                if (b)
                    elem = b;
            } else {
                name = t;
            }
        }
        if (!elem || !name.n)
            return -1;
        if (!align)
            align = elem;
        if ((align & (align - 1)) || align > 256)
            return -1;
        uint64_t bytes = elem * count;
        off = (off + align - 1) / align * align;
        if (off + bytes > 32764)
            return -1;
        if (k->nparams == cap) {
            cap = cap ? cap * 2 : 16;
            struct emu_ptx_param *np = realloc(k->params, cap * sizeof *np);
            if (!np)
                return -1;
            k->params = np;
        }
        k->params[k->nparams++] = (struct emu_ptx_param){ name, off, (uint32_t)bytes,
                                                          (uint8_t)(ptr || (count == 1 && elem == 8)) };
        off += (uint32_t)bytes;
        if (emu_slice_is(t, ")"))
            return 0;
    }
}

/* ---- the body ---- */

int emu_ptx_add_label(struct emu_ptx_kernel *k, const char *name, size_t len)
{
    if (k->nlabels == k->cap_labels) {
        uint32_t ncap = k->cap_labels ? k->cap_labels * 2 : 64;
        struct emu_ptx_label *nl = realloc(k->labels, ncap * sizeof *nl);
        if (!nl)
            return -1;
        k->labels = nl;
        k->cap_labels = ncap;
    }
    k->labels[k->nlabels++] = (struct emu_ptx_label){ { name, (uint32_t)len }, k->ninsts };
    return 0;
}

int emu_ptx_add_inst(struct emu_ptx_kernel *k, const struct emu_ptx_inst *in)
{
    if (k->ninsts >= EMU_PTX_MAX_INSTS) {
        k->truncated = 1;
        return 0;
    }
    if (k->ninsts == k->cap_insts) {
        uint32_t ncap = k->cap_insts ? k->cap_insts * 2 : 256;
        struct emu_ptx_inst *ni = realloc(k->insts, ncap * sizeof *ni);
        if (!ni)
            return -1;
        k->insts = ni;
        k->cap_insts = ncap;
    }
    k->insts[k->ninsts++] = *in;
    return 0;
}

struct builder {
    struct emu_ptx_kernel *k;
    int oom;
};

static void add_label(struct builder *b, const char *p, size_t n)
{
    if (emu_ptx_add_label(b->k, p, n) < 0)
        b->oom = 1;
}

static struct emu_slice trim(const char *p, const char *e)
{
    while (p < e && is_space(*p))
        p++;
    while (e > p && is_space(e[-1]))
        e--;
    return (struct emu_slice){ p, (uint32_t)(e - p) };
}

/* One statement without its ';': [labels:] [@guard] mnemonic operands. */
static void statement(struct builder *b, const char *s, const char *e)
{
    for (;;) {
        while (s < e && is_space(*s))
            s++;
        if (s >= e || *s == '.' || *s == '{' || *s == '}')
            return; /* a directive (.reg, .pragma, ...) or a stray brace */
        const char *w = s;
        while (w < e && !is_space(*w) && *w != ':' && *w != ',')
            w++;
        if (w < e && *w == ':' && (w + 1 >= e || w[1] != ':') && w > s && *s != '@') {
            add_label(b, s, (size_t)(w - s)); /* a label before the instruction */
            s = w + 1;
            continue;
        }
        break;
    }
    struct emu_ptx_inst in;
    memset(&in, 0, sizeof in);
    if (*s == '@') {
        s++;
        if (s < e && *s == '!') {
            in.guard_neg = 1;
            s++;
        }
        const char *g = s;
        while (s < e && !is_space(*s))
            s++;
        in.guard = (struct emu_slice){ g, (uint32_t)(s - g) };
        while (s < e && is_space(*s))
            s++;
    }
    const char *m = s;
    while (s < e && !is_space(*s))
        s++;
    if (s == m || !(isalpha((unsigned char)*m) || *m == '_'))
        return;
    in.op = (struct emu_slice){ m, (uint32_t)(s - m) };
    /* operands split at top-level commas: braces and brackets group */
    int depth = 0;
    const char *start = s;
    for (const char *p = s; p <= e; p++) {
        if (p < e && (*p == '{' || *p == '['))
            depth++;
        else if (p < e && (*p == '}' || *p == ']'))
            depth--;
        if (p == e || (*p == ',' && depth <= 0)) {
            struct emu_slice o = trim(start, p);
            if (o.n && in.nops < EMU_PTX_MAX_OPERANDS)
                in.ops[in.nops++] = o;
            start = p + 1;
        }
    }
    if (emu_ptx_add_inst(b->k, &in) < 0)
        b->oom = 1;
}

int emu_ptx_parse(const char *text, size_t bytes, const char *entry, struct emu_ptx_kernel *out)
{
    memset(out, 0, sizeof *out);
    if (!text || !entry || !*entry)
        return -1;
    const char *p = text, *end = text + bytes;
    for (;;) {
        if (p >= end)
            return -1;
        const char *nl = p;
        while (nl < end && *nl != '\n' && *nl != '\0')
            nl++;
        if (entry_line(p, (size_t)(nl - p), entry))
            break;
        p = nl + 1;
    }
    struct cursor c = { memmem(p, (size_t)(end - p), ".entry", 6) + 6, end };
    token(&c); /* the name */
    if (parse_params(&c, out) < 0) {
        emu_ptx_kernel_free(out);
        return -1;
    }
    /* directives up to the body's brace (.maxntid, .reqntid, ...) */
    while (c.p < end && *c.p != '{' && *c.p != ';')
        c.p++;
    if (c.p >= end || *c.p != '{') {
        emu_ptx_kernel_free(out);
        return -1;
    }
    struct builder b = { out, 0 };
    /* Statements end with ';'; braces where a statement would begin open or
     * close scopes (inside one they group vector operands); labels end with
     * ':'; directives without ';' (.loc, .file) end at their line. */
    int depth = 0;
    const char *stmt = NULL;
    for (p = c.p; p < end && !b.oom; p++) {
        char ch = *p;
        if (ch == '/' && p + 1 < end && (p[1] == '/' || p[1] == '*')) {
            const char *q = p + 2;
            if (p[1] == '/') {
                while (q < end && *q != '\n' && *q != '\0')
                    q++;
                p = q - 1;
            } else {
                while (q + 1 < end && !(q[0] == '*' && q[1] == '/'))
                    q++;
                p = q + 1;
            }
            continue;
        }
        if (!stmt) {
            if (is_space(ch))
                continue;
            if (ch == '{') {
                depth++;
                continue;
            }
            if (ch == '}') {
                if (--depth <= 0)
                    break;
                continue;
            }
            stmt = p;
        }
        if (ch == ';') {
            statement(&b, stmt, p);
            stmt = NULL;
        } else if ((ch == '\n' || ch == '\0') && *stmt == '.') {
            stmt = NULL;
        } else if (ch == ':' && *stmt != '@' && p + 1 < end && p[1] != ':' && p > stmt && p[-1] != ':' &&
                   !memchr(stmt, ' ', (size_t)(p - stmt)) && !memchr(stmt, '\t', (size_t)(p - stmt))) {
            add_label(&b, stmt, (size_t)(p - stmt));
            stmt = NULL;
        }
    }
    if (b.oom) {
        emu_ptx_kernel_free(out);
        return -1;
    }
    return 0;
}

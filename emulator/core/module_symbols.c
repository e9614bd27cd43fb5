/* What a module holds, for the driver (cuModuleGetFunction, cuModuleGetGlobal,
 * cuModuleEnumerateFunctions, ...): its kernels' and globals' names and
 * sizes, from its cubins' symbol tables and its PTX (fatbin.h reads the
 * image). */
#define _GNU_SOURCE
#include "fatbin.h"
#include "maya/common.h"
#include "ptx_parse.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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

/* A global of a module's image: its size (*size), and with buf its first
 * bytes bytes copied there. From the first cubin that defines it (best for
 * the emulated GPU first) whose section holds it; for the size only, else
 * from the PTX. 0, 1 when a .nv.global (zero-initialised) filled buf, or -1. */
static int lookup_global(struct emu_module *m, const char *name, void *buf, uint64_t bytes, uint64_t *size)
{
    if (!m || !m->image || !name)
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
            !elf_symbols(&e, sym_object, &q))
            continue;
        *size = q.size;
        uint64_t len = MAYA_MIN(bytes, q.size);
        if (!buf) {
            rc = 0;
        } else if (elf_shdr(&e, q.shndx, &sh) < 0) {
            continue;
        } else if (sh.type == SHT_NOBITS) {
            memset(buf, 0, len); /* .nv.global: zero-initialised */
            rc = 1;
        } else if (q.value <= sh.size && len <= sh.size - q.value) {
            memcpy(buf, e.b.p + sh.off + q.value, len); /* .nv.global.init, .nv.constant3 */
            rc = 0;
        }
    }
    for (int i = 0; !buf && x && rc < 0 && i < x->ncodes; i++)
        if (x->codes[i].kind == ENTRY_PTX && code_ready(&x->codes[i]) == 1)
            rc = ptx_global(&x->codes[i].data, name, size);
    if (temp)
        index_free_locked(x);
    pthread_mutex_unlock(&index_lock);
    return rc;
}

EMU_API int emu_image_global_init(struct emu_module *m, const char *name, void *buf, uint64_t bytes)
{
    uint64_t size;
    return buf ? lookup_global(m, name, buf, bytes, &size) : -1;
}

EMU_API int emu_image_global(struct emu_module *m, const char *name, uint64_t *bytes)
{
    return bytes ? lookup_global(m, name, NULL, 0, bytes) : -1;
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

/* What fatbin.c reads out of module images, shared with the files that
 * use it: kernel_layout.c (a kernel's parameters, its code's work, its
 * SASS) and module_symbols.c (what a module holds). Private to
 * emulator/core. Everything here reads images that come from outside:
 * offsets are bounds-checked, a damaged image gives "unknown". */
#ifndef MAYA_EMU_FATBIN_H
#define MAYA_EMU_FATBIN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "emu.h"

#define ENTRY_PTX 1
#define ENTRY_ELF 2

#define SHT_NOBITS 8
#define STT_FUNC 2
#define STT_OBJECT 1

/* ---- bounded little-endian reads ---- */

struct blob {
    const unsigned char *p;
    size_t n;
};

static inline int in_bounds(const struct blob *b, uint64_t off, uint64_t len)
{
    return off <= b->n && len <= b->n - off;
}

static inline uint16_t get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const unsigned char *p)
{
    return get32(p) | (uint64_t)get32(p + 4) << 32;
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

/* Guards every index and the cache of decoded entries. */
extern pthread_mutex_t index_lock;

/* The index of module m's image (kept on the module), or of an image that
 * is no module's (*temp: the caller frees it with index_free_locked). */
struct emu_image_index *module_index(struct emu_module *m, const void *image, size_t bytes, int *temp);
void index_free_locked(struct emu_image_index *x);
/* Decode an entry's payload (decompressed once while it stays cached):
 * 1 ready, -1 unusable. */
int code_ready(struct code *c);
/* The cubins of an index, best first for the emulated GPU (at most 64). */
int cubins_by_rank(struct emu_image_index *x, int *order);
/* The SM a PTX text targets (.target sm_NN), 0 unknown. */
int ptx_sm(const struct blob *b);

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

struct sym {
    const char *name;
    unsigned char type, other;
    uint64_t size;
    uint16_t shndx;              /* section the symbol is in */
    uint64_t value;              /* its offset there (relocatable cubin) */
};

struct sym_query {
    const char *name;
    int type;
    uint32_t index;
    uint64_t size;
    uint16_t shndx;
    uint64_t value;
};

int elf_open(struct elf *e, const struct blob *b);
int elf_shdr(const struct elf *e, unsigned i, struct shdr *s);
int elf_find(const struct elf *e, const char *prefix, const char *suffix, struct shdr *out);
/* Visit the symbol table; fn returns nonzero to stop (that value is returned). */
int elf_symbols(const struct elf *e, int (*fn)(uint32_t index, const struct sym *s, void *arg), void *arg);
/* elf_symbols' fn for a sym_query: the symbol of its name and type. */
int match_sym(uint32_t index, const struct sym *s, void *arg);
/* Visit the records of an .nv.info section: fn(attr, payload, len). */
void nv_info_each(const struct elf *e, const struct shdr *s,
                  void (*fn)(int attr, const unsigned char *v, unsigned len, void *arg), void *arg);

/* ---- PTX tokens ---- */

struct ptx_cursor {
    const char *p, *end;
};

int ptx_ident_char(char ch);
/* Next token: an identifier/directive, a number, or one punctuation char. */
size_t ptx_token(struct ptx_cursor *c, const char **tok);
int tok_is(const char *t, size_t n, const char *s);
uint64_t tok_num(const char *t, size_t n);
/* A PTX scalar type: its size and the parameter kind it stands for. */
int ptx_type(const char *t, size_t n, unsigned *bytes, uint8_t *kind);

#endif

/* Unit test of emulator/core/fatbin.c (with kernel_layout.c and
 * module_symbols.c) on real nvcc output: kernel layouts,
 * kernel lists, globals and runnability from a cubin, PTX and fat binaries
 * (nvcc's default entries, all Zstd, all LZ4), and from the fat binaries an
 * nvcc-built program embeds (read with their size unknown, as
 * __cudaRegisterFatBinary gives them); then every truncation and thousands
 * of random corruptions of each image, which must never crash or read out
 * of bounds (run it under `make SAN=1` to have ASan check the reads).
 *
 * Images come from the build: $MAYA_BUILD/tests/workloads (tests/module.mk). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"

static int failures;

#define EXPECT(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            failures++; \
        } \
    } while (0)

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s (build the workloads first)\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
        exit(1);
    buf[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* The .nv_fatbin section of an executable (nvcc's embedded fat binaries). */
static const unsigned char *elf_section(const unsigned char *elf, size_t len, const char *want, size_t *size)
{
    uint64_t shoff;
    uint16_t shentsize, shnum, shstrndx;
    memcpy(&shoff, elf + 0x28, 8);
    memcpy(&shentsize, elf + 0x3a, 2);
    memcpy(&shnum, elf + 0x3c, 2);
    memcpy(&shstrndx, elf + 0x3e, 2);
    uint64_t stroff;
    memcpy(&stroff, elf + shoff + (uint64_t)shstrndx * shentsize + 0x18, 8);
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *s = elf + shoff + (uint64_t)i * shentsize;
        uint32_t name;
        uint64_t off;
        memcpy(&name, s, 4);
        memcpy(&off, s + 0x18, 8);
        memcpy(size, s + 0x20, 8);
        if (strcmp((const char *)elf + stroff + name, want) == 0 && off + *size <= len)
            return elf + off;
    }
    return NULL;
}

static void count_name(const char *name, void *arg)
{
    (void)name;
    ++*(int *)arg;
}

struct expect_param {
    unsigned offset, bytes, kind;
};

static void check_layout(const void *image, size_t bytes, const char *mangled, unsigned n,
                         const struct expect_param *want, const char *what)
{
    struct emu_module *m = emu_module_new(image, bytes, 0, MAYA_KSRC_MODULE);
    struct emu_kernel *k = emu_kernel_add(m, mangled, NULL);
    int rc = emu_fatbin_kernel_layout(image, bytes, k);
    if (rc != 0 || k->nparams != n) {
        fprintf(stderr, "%s: %s: layout rc=%d nparams=%u, expected %u\n", what, mangled, rc, k->nparams, n);
        failures++;
    } else {
        for (unsigned i = 0; i < n; i++)
            if (k->params[i].offset != want[i].offset || k->params[i].bytes != want[i].bytes ||
                k->params[i].kind != want[i].kind) {
                fprintf(stderr, "%s: %s p%u: %u@%u:%u, expected %u@%u:%u\n", what, mangled, i, k->params[i].kind,
                        k->params[i].offset, k->params[i].bytes, want[i].kind, want[i].offset, want[i].bytes);
                failures++;
            }
    }
    emu_module_free(m);
}

/* Facts every complete copy of drv_kernels.cu has. */
static void check_module(const void *image, size_t bytes, int typed_c, const char *what)
{
    static const struct expect_param mixed[] = {
        { 0, 4, MAYA_KP_I32 }, { 8, 8, MAYA_KP_F64 }, { 16, 8, MAYA_KP_U64 },
        { 24, 1, MAYA_KP_CHAR }, { 32, 16, MAYA_KP_BYTES }, { 48, 8, MAYA_KP_PTR },
    };
    struct expect_param scale[] = { { 0, 8, MAYA_KP_U64 }, { 8, 4, MAYA_KP_F32 }, { 12, 4, MAYA_KP_U32 } };
    if (!typed_c)
        for (int i = 0; i < 3; i++)
            scale[i].kind = MAYA_KP_BYTES;
    check_layout(image, bytes, "_Z5mixedidmc4PairPf", 6, mixed, what);
    check_layout(image, bytes, "scale", 3, scale, what);

    struct emu_module *m = emu_module_new(image, bytes, 0, MAYA_KSRC_MODULE);
    int names = 0;
    EXPECT(emu_image_kernels(m, count_name, &names) == 3);
    EXPECT(names == 3);
    uint64_t gbytes = 0;
    EXPECT(emu_image_global(m, "dev_counter", &gbytes) == 0 && gbytes == 16);
    EXPECT(emu_image_global(m, "no_such_variable", &gbytes) == -1);
    EXPECT(emu_image_runnable(m, 90) == 1);
    EXPECT(emu_image_runnable(m, 80) == 0); /* sm_90 code does not run on an A100 */
    struct emu_kernel *k = emu_kernel_add(m, "_Z11smem_kernelPf", NULL);
    EXPECT(emu_fatbin_kernel_layout(image, bytes, k) == 0);
    EXPECT(k->static_smem == 1024);
    EXPECT(k->max_threads_per_block == 128);
    struct emu_kernel *none = emu_kernel_add(m, "_Z7missingv", NULL);
    EXPECT(emu_fatbin_kernel_layout(image, bytes, none) == -1);
    emu_module_free(m);
}

/* Parse everything a damaged image offers; only not crashing matters (and
 * any answer must be self-consistent). */
static void exercise(const unsigned char *image, size_t bytes)
{
    size_t size = 0;
    emu_image_probe(image, bytes, &size);
    EXPECT(size <= bytes);
    struct emu_module *m = emu_module_new(image, bytes, 0, MAYA_KSRC_MODULE);
    const char *names[] = { "_Z5mixedidmc4PairPf", "scale", "_Z11smem_kernelPf" };
    for (int i = 0; i < 3; i++) {
        struct emu_kernel *k = emu_kernel_add(m, names[i], NULL);
        if (emu_fatbin_kernel_layout(image, bytes, k) == 0) {
            EXPECT(k->param_bytes <= 32764);
            for (unsigned j = 0; j < k->nparams; j++)
                EXPECT((unsigned)k->params[j].offset + k->params[j].bytes <= k->param_bytes);
        }
    }
    emu_image_kernels(m, NULL, NULL);
    uint64_t g;
    emu_image_global(m, "dev_counter", &g);
    emu_image_runnable(m, 90);
    emu_module_free(m);
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void fuzz(const unsigned char *image, size_t bytes, int rounds, const char *what)
{
    /* exact-size copies, so that ASan sees any read past the end */
    size_t step = bytes > 4096 ? bytes / 4096 : 1;
    for (size_t n = 1; n < bytes; n += step) { /* (0 would mean "size unknown") */
        unsigned char *cut = malloc(n);
        memcpy(cut, image, n);
        exercise(cut, n);
        free(cut);
    }
    unsigned char *copy = malloc(bytes);
    for (int r = 0; r < rounds; r++) {
        memcpy(copy, image, bytes);
        int flips = 1 + (int)(next_random() % 8);
        for (int i = 0; i < flips; i++) {
            /* headers are where damage matters most: hit the first 256 bytes half the time */
            size_t at = (next_random() & 1) ? next_random() % (bytes < 256 ? bytes : 256) : next_random() % bytes;
            copy[at] = (unsigned char)next_random();
        }
        exercise(copy, bytes);
    }
    free(copy);
    fprintf(stderr, "%s: %zu bytes, truncated every %zu, %d corruptions: no crash\n", what, bytes, step, rounds);
}

int main(void)
{
    /* layouts and kernel lists are what is tested: with nvdisasm named in
     * the environment, each of the thousands of corrupted images would
     * cost a disassembly (minutes) */
    setenv("MAYA_NVDISASM", "0", 1);
    const char *build = getenv("MAYA_BUILD");
    char path[4096];
    static const struct {
        const char *file;
        int typed_c;             /* PTX in the image types the extern "C" kernel */
    } images[] = {
        { "drv_kernels.cubin", 0 }, { "drv_kernels.fatbin", 1 }, { "drv_kernels.zstd.fatbin", 1 },
        { "drv_kernels.lz4.fatbin", 1 }, { "drv_kernels.ptx", 1 },
    };
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++) {
        size_t len;
        snprintf(path, sizeof path, "%s/tests/workloads/%s", build ? build : "build", images[i].file);
        unsigned char *img = read_file(path, &len);
        size_t size = 0;
        int kind = emu_image_probe(img, 0, &size);
        EXPECT(kind != EMU_IMAGE_UNKNOWN);
        EXPECT(kind == EMU_IMAGE_PTX ? size == len + 1 : size <= len);
        check_module(img, len, images[i].typed_c, images[i].file);
        check_module(img, 0, images[i].typed_c, images[i].file); /* size read from the image */
        /* with no room to keep decompressed code, every use decompresses
         * again and the answers are the same */
        emu_image_cache_budget(1);
        check_module(img, len, images[i].typed_c, images[i].file);
        emu_image_cache_budget(128ull << 20);
        fuzz(img, len, 3000, images[i].file);
        free(img);
    }

    /* The fat binaries nvcc embeds in a program, back to back in .nv_fatbin:
     * each one's size comes from its own header. */
    static const char *programs[] = { "kernel_params", "kernel_params_zstd", "kernel_params_lz4" };
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++) {
        size_t len, sec_len = 0;
        snprintf(path, sizeof path, "%s/tests/workloads/%s", build ? build : "build", programs[i]);
        unsigned char *exe = read_file(path, &len);
        const unsigned char *sec = elf_section(exe, len, ".nv_fatbin", &sec_len);
        EXPECT(sec != NULL);
        if (!sec)
            continue;
        int found = 0;
        for (size_t off = 0; off + 16 <= sec_len; off += 8) {
            size_t size = 0;
            if (emu_image_probe(sec + off, 0, &size) != EMU_IMAGE_FATBIN)
                continue;
            struct emu_module *m = emu_module_new(sec + off, 0, 0, MAYA_KSRC_FATBIN);
            struct emu_kernel *k = emu_kernel_add(m, "_Z9all_typesifdmc6TriplePKfbtx6__half", NULL);
            if (emu_fatbin_kernel_layout(sec + off, 0, k) == 0) {
                found = 1;
                EXPECT(k->nparams == 11 && k->param_bytes == 74);
                EXPECT(k->params[10].kind == MAYA_KP_F16 && k->params[10].offset == 72);
                EXPECT(k->nfeatures >= 1 && k->num_regs > 0);
            }
            emu_module_free(m);
            off += size - 8;
        }
        EXPECT(found);
        fuzz(sec, sec_len, 1000, programs[i]);
        free(exe);
    }

    /* Triton's PTX: ".ptr .global .align 1" aligns what a pointer points
     * to; the parameter itself stays 8-aligned. */
    static const char triton_ptx[] =
        ".version 8.7\n.target sm_90a\n.address_size 64\n\n"
        ".visible .entry tk(\n"
        "\t.param .u64 .ptr .global .align 1 tk_param_0,\n"
        "\t.param .u32 tk_param_1,\n"
        "\t.param .u64 .ptr .global .align 1 tk_param_2\n"
        ")\n.reqntid 128\n{\n\t.shared .align 16 .b8 tk_smem[4096];\n\tret;\n}\n";
    static const struct expect_param tk[] = {
        { 0, 8, MAYA_KP_PTR }, { 8, 4, MAYA_KP_U32 }, { 16, 8, MAYA_KP_PTR },
    };
    check_layout(triton_ptx, sizeof triton_ptx, "tk", 3, tk, "triton ptx");
    {
        struct emu_module *m = emu_module_new(triton_ptx, 0, 0, MAYA_KSRC_MODULE);
        struct emu_kernel *k = emu_kernel_add(m, "tk", NULL);
        EXPECT(emu_fatbin_kernel_layout(triton_ptx, 0, k) == 0);
        EXPECT(k->max_threads_per_block == 128 && k->static_smem == 4096);
        EXPECT(emu_image_runnable(m, 90) == 1 && emu_image_runnable(m, 80) == 0);
        emu_module_free(m);
    }

    /* Not images at all. */
    EXPECT(emu_image_probe("hello world", 0, NULL) == EMU_IMAGE_UNKNOWN);
    EXPECT(emu_image_probe(NULL, 0, NULL) == EMU_IMAGE_UNKNOWN);
    EXPECT(emu_image_probe("\x50\xed\x55\xba\x01\x00\x10\x00\xff\xff\xff\xff\xff\xff\xff\x7f", 16, NULL) ==
           EMU_IMAGE_UNKNOWN); /* a fat binary claiming more bytes than there are */

    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}

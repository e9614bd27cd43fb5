/* What reading a kernel's work from its PTX costs, measured in the
 * process: the parse and the analysis (emulator/core/kernel_work.c) of
 * each kernel of tests/workloads/kernel_work.cu, whose PTX the build puts
 * beside this program (kernel_work.ptx). A rank pays it once per kernel,
 * at the kernel's first launch. Prints
 *   kwork_ptx_analysis_ms_per_kernel   median over the kernels of the best of 5 runs
 *   kwork_ptx_analysis_ms_max          the costliest kernel's best of 5
 * (bench/kernel_work.sh times whole runs: SASS through nvdisasm, cold and
 * warm.) */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel_work.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (len + 65536 > cap) {
            char *nb = realloc(buf, cap = cap * 2 + 65536);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[len] = 0;
    *n = len;
    return buf;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    char self[PATH_MAX], path[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        puts("kwork_ptx_analysis_bench=skipped (cannot find this program's directory)");
        return 0;
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    snprintf(path, sizeof path, "%s/kernel_work.ptx", self);
    size_t bytes;
    char *text = slurp(path, &bytes);
    if (!text) {
        printf("kwork_ptx_analysis_bench=skipped (no %s)\n", path);
        return 0;
    }
    double ms[64];
    int kernels = 0;
    /* every ".entry NAME(" of the module */
    for (const char *p = strstr(text, ".entry "); p && kernels < 64; p = strstr(p + 1, ".entry ")) {
        const char *name = p + 7, *end = name;
        while (*end && *end != '(' && *end != ' ' && *end != '\n')
            end++;
        char entry[512];
        if (end - name <= 0 || end - name >= (long)sizeof entry)
            continue;
        memcpy(entry, name, (size_t)(end - name));
        entry[end - name] = 0;
        double best = 1e30;
        for (int r = 0; r < 5; r++) {
            void *out = NULL;
            size_t out_bytes = 0;
            double t0 = now_ms();
            int rc = emu_kwork_ptx_text(text, bytes, entry, 90, &out, &out_bytes);
            double t = now_ms() - t0;
            free(out);
            if (rc < 0) {
                fprintf(stderr, "kwork_bench: %s: no summary\n", entry);
                free(text);
                return 1;
            }
            best = t < best ? t : best;
        }
        ms[kernels++] = best;
    }
    free(text);
    if (!kernels) {
        fprintf(stderr, "kwork_bench: %s holds no .entry\n", path);
        return 1;
    }
    qsort(ms, (size_t)kernels, sizeof *ms, by_value);
    printf("kwork_ptx_analysis_ms_per_kernel=%.3f\n", ms[kernels / 2]);
    printf("kwork_ptx_analysis_ms_max=%.3f\n", ms[kernels - 1]);
    return 0;
}

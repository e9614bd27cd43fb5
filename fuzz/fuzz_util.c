/* Scratch files and quiet errors for the harnesses (fuzz.h). */
#define _GNU_SOURCE
#include "fuzz.h"
#include "maya/common.h"
#include "maya/hwspec.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FUZZ_HWSPECS
#error "FUZZ_HWSPECS (the repository's hwspecs folder) is set by fuzz/module.mk"
#endif

static char scratch[256];

static void quiet(const char *kind, const char *msg)
{
    (void)kind;
    (void)msg;
}

/* Remove the scratch directory and what the harness left in it (one level
 * of subfolders: the collate harness's trace folder). */
static void remove_tree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (depth < 2 && lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p, depth + 1);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static void cleanup(void)
{
    if (scratch[0])
        remove_tree(scratch, 0);
}

void fuzz_init(void)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(scratch, sizeof scratch, "%s/maya-fuzz.XXXXXX", base);
    if (!mkdtemp(scratch)) {
        perror("maya fuzz: cannot make a scratch directory");
        abort();
    }
    atexit(cleanup);
    if (!getenv("MAYA_FUZZ_VERBOSE"))
        maya_set_error_handler(quiet);
}

const char *fuzz_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    return path;
}

const char *fuzz_write(const char *name, const void *data, size_t size)
{
    const char *path = fuzz_path(name);
    FILE *fp = fopen(path, "wb");
    if (!fp || (size && fwrite(data, 1, size, fp) != size) || fclose(fp) != 0) {
        perror(path);
        abort();
    }
    return path;
}

const struct maya_hwspecs *fuzz_hwspecs(void)
{
    static struct maya_hwspecs hw;
    static int loaded;
    if (!loaded) {
        if (maya_hwspecs_load_dir(FUZZ_HWSPECS, &hw) < 0) {
            fprintf(stderr, "maya fuzz: cannot load %s: %s\n", FUZZ_HWSPECS, maya_last_error());
            abort();
        }
        loaded = 1;
    }
    return &hw;
}

const char *fuzz_hwspecs_dir(void)
{
    return FUZZ_HWSPECS;
}

FILE *fuzz_sink(void)
{
    static FILE *sink;
    if (!sink && !(sink = fopen("/dev/null", "w")))
        abort();
    return sink;
}

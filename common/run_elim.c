/* The launcher's side of duplicate-rank elimination (docs/dedup.md), shared
 * by maya run and the Slurm plugin: what a rank the emulated NCCL stopped
 * left next to its trace, and how that reads in run.conf. */
#define _GNU_SOURCE
#include "maya/run_elim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maya/common.h"

int run_elim_read(const char *trace_dir, int rank, int *source)
{
    int declared;
    return run_elim_read_how(trace_dir, rank, source, &declared);
}

int run_elim_read_how(const char *trace_dir, int rank, int *source, int *declared)
{
    *declared = 0;
    char path[4200];
    if (maya_snprintf(path, sizeof path, "%s/rank-%d.eliminated", trace_dir, rank) < 0)
        return 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    char line[128];
    int found = 0;
    while (fgets(line, sizeof line, fp)) {
        if (sscanf(line, "source=%d", source) == 1 && *source >= 0 && *source != rank)
            found = 1;
        if (!strncmp(line, "how=declared", 12))
            *declared = 1;
    }
    fclose(fp);
    return found;
}

int run_elim_note(const char *trace_dir, int rank, char *note, size_t n)
{
    int source, declared;
    if (!run_elim_read_how(trace_dir, rank, &source, &declared))
        return 0;
    if (declared)
        snprintf(note, n, "a replica, not emulated (--replicas), rebuilt from rank %d", source);
    else
        snprintf(note, n, "eliminated, rebuilt from rank %d", source);
    return 1;
}

/* ---- the classes, for maya run --replicas-like ---- */

void run_elim_classes_free(struct run_elim_classes *c)
{
    free(c->cls);
    free(c->members);
    free(c->comm_off);
    memset(c, 0, sizeof *c);
}

/* The whole numbers of a line into *v (grown), each in [0, world). */
static int read_ranks(const char *text, int world, int32_t **v, size_t *n, size_t *cap, const char *path, int line)
{
    for (const char *p = text; *p && *p != '\n';) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < 0 || x >= world)
            return maya_error("%s:%d: expected ranks from 0 to %d, found \"%.20s\"", path, line, world - 1, p);
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 64;
            int32_t *g = realloc(*v, nc * sizeof *g);
            if (!g)
                return maya_error("out of memory reading %s", path);
            *v = g;
            *cap = nc;
        }
        (*v)[(*n)++] = (int32_t)x;
        p = end;
        while (*p == ' ')
            p++;
    }
    return 0;
}

int run_elim_classes_read(const char *trace_dir, struct run_elim_classes *c)
{
    memset(c, 0, sizeof *c);
    char path[4200];
    if (maya_snprintf(path, sizeof path, "%s/%s", trace_dir, MAYA_ELIM_CLASSES_FILE) < 0)
        return -1;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    char *text = NULL;
    size_t textcap = 0, ncls = 0, clscap = 0, nmem = 0, memcap = 0;
    int rc = 0, line = 0, have_cls = 0, offcap = 0;
    while (rc == 0 && getline(&text, &textcap, fp) > 0) {
        line++;
        text[strcspn(text, "\n")] = 0;
        if (text[0] == '#' || !text[0])
            continue;
        if (!strncmp(text, "world=", 6)) {
            char *end;
            long w = strtol(text + 6, &end, 10);
            if (end == text + 6 || *end || w < 1 || w > (1 << 24) || c->world)
                rc = maya_error("%s:%d: expected world=RANKS once, found \"%s\"", path, line, text);
            c->world = (int)w;
        } else if (!strncmp(text, "replicas=", 9)) {
            if (maya_snprintf(c->replicas, sizeof c->replicas, "%s", text + 9) < 0)
                rc = -1;
        } else if (!c->world) {
            rc = maya_error("%s:%d: expected world=RANKS before \"%.20s\"", path, line, text);
        } else if (!strncmp(text, "classes=", 8) && !have_cls) {
            have_cls = 1;
            rc = read_ranks(text + 8, c->world, &c->cls, &ncls, &clscap, path, line);
            if (rc == 0 && ncls != (size_t)c->world)
                rc = maya_error("%s:%d: expected %d classes (world=%d), found %zu", path, line, c->world, c->world,
                                ncls);
            for (int i = 0; rc == 0 && i < c->world; i++)
                if (c->cls[i] > i || c->cls[c->cls[i]] != c->cls[i])
                    rc = maya_error("%s:%d: rank %d's class %d is not the lowest rank of a class", path, line, i,
                                    c->cls[i]);
        } else if (!strncmp(text, "comm=", 5)) {
            if (c->ncomms + 2 > offcap) {
                offcap = offcap ? offcap * 2 : 16;
                int *g = realloc(c->comm_off, (size_t)offcap * sizeof *g);
                if (!g) {
                    rc = maya_error("out of memory reading %s", path);
                    break;
                }
                c->comm_off = g;
            }
            c->comm_off[c->ncomms] = (int)nmem;
            rc = read_ranks(text + 5, c->world, &c->members, &nmem, &memcap, path, line);
            c->comm_off[++c->ncomms] = (int)nmem;
        } else {
            rc = maya_error("%s:%d: expected world=, replicas=, classes= or comm=, found \"%.40s\"", path, line, text);
        }
    }
    if (rc == 0 && !have_cls)
        rc = maya_error("%s: expected a classes= line, found none (a cut-short file?)", path);
    free(text);
    fclose(fp);
    if (rc < 0) {
        run_elim_classes_free(c);
        return -1;
    }
    return 1;
}

/* Does dimension n:s agree with the classes (every rank in the class of
 * itself with that digit 0) and with every communicator (spanning it or
 * constant along it)? at: world bytes of zeros, left so. O(world + members). */
static int dim_holds(const struct run_elim_classes *c, int64_t n, int64_t s, unsigned char *at)
{
    struct maya_replicas d = { .ndims = 1, .n = { n }, .stride = { s } };
    for (int r = 0; r < c->world; r++)
        if (c->cls[r] != c->cls[maya_replicas_with(&d, 0, r, 0)])
            return 0;
    int ok = 1;
    for (int k = 0; ok && k < c->ncomms; k++) {
        const int32_t *m = c->members + c->comm_off[k];
        int size = c->comm_off[k + 1] - c->comm_off[k], constant = 1, zeros = 0;
        for (int i = 0; i < size; i++) {
            at[m[i]] = 1;
            constant &= maya_replicas_digit(&d, 0, m[i]) == maya_replicas_digit(&d, 0, m[0]);
            zeros += maya_replicas_digit(&d, 0, m[i]) == 0;
        }
        /* spanning: each member's digit-0 form is a member, and there are n
         * members for each of those (so every digit of each is there) */
        int spans = (int64_t)zeros * n == size;
        for (int i = 0; spans && i < size; i++)
            spans = at[maya_replicas_with(&d, 0, m[i], 0)];
        ok = constant || spans;
        for (int i = 0; i < size; i++)
            at[m[i]] = 0;
    }
    return ok;
}

int run_elim_layout(const struct run_elim_classes *c, struct maya_replicas *out)
{
    memset(out, 0, sizeof *out);
    char err[256];
    if (c->replicas[0])
        return maya_replicas_parse(c->replicas, c->world, out, err, sizeof err) < 0 ? 0 : out->ndims;
    unsigned char *at = calloc((size_t)c->world, 1);
    if (!at)
        return 0;
    /* From the lowest stride up: the largest N that holds there, then on
     * from above it. Strides and sizes divide the world. */
    for (int64_t s = 1; s < c->world && out->ndims < MAYA_REPLICAS_MAX_DIMS; s++) {
        if (c->world % s)
            continue;
        int64_t best = 0;
        for (int64_t n = c->world / s; n >= 2 && !best; n--)
            if ((c->world / s) % n == 0 && dim_holds(c, n, s, at))
                best = n;
        if (best) {
            out->n[out->ndims] = best;
            out->stride[out->ndims++] = s;
            s = s * best - 1;
        }
    }
    free(at);
    return out->ndims;
}

int run_elim_layout_read(const char *trace_dir, struct maya_replicas *out, int *world)
{
    struct run_elim_classes c;
    memset(out, 0, sizeof *out);
    int got = run_elim_classes_read(trace_dir, &c);
    if (got <= 0)
        return got;
    run_elim_layout(&c, out);
    *world = c.world;
    run_elim_classes_free(&c);
    return 1;
}

/* Is a layout made here one --replicas would take for world ranks? 0, or
 * -1 with why in err (the parser's checks, on its text form). */
static int layout_fits(const struct maya_replicas *l, int64_t world, char *err, size_t errn)
{
    char text[256];
    maya_replicas_format(l, text, sizeof text);
    struct maya_replicas check;
    return maya_replicas_parse(text, world, &check, err, errn);
}

int run_elim_layout_grow(const struct maya_replicas *small, int64_t small_world, int64_t world,
                         struct maya_replicas *out, char *err, size_t errn)
{
    *out = *small;
    if (small->ndims < 1 || small_world < 1) {
        snprintf(err, errn, "no layout to grow");
        return -1;
    }
    int k = small->ndims - 1;
    if ((small->n[k] * world) % small_world || small->n[k] * world / small_world < 2) {
        snprintf(err, errn, "its outermost dimension %lld:%lld of %lld ranks does not grow to %lld ranks: %lld x "
                 "%lld / %lld is not a whole number of 2 or more", (long long)small->n[k], (long long)small->stride[k],
                 (long long)small_world, (long long)world, (long long)small->n[k], (long long)world,
                 (long long)small_world);
        return -1;
    }
    out->n[k] = small->n[k] * world / small_world;
    return layout_fits(out, world, err, errn);
}

/* b with dimension k and the strides above it scaled by num / den; 0, or -1
 * where they do not divide. A dimension scaled to 1 is dropped. */
static int scale_dim(const struct maya_replicas *b, int k, int64_t num, int64_t den, struct maya_replicas *out)
{
    memset(out, 0, sizeof *out);
    for (int j = 0; j < b->ndims; j++) {
        int64_t n = b->n[j], s = b->stride[j];
        if (j == k) {
            if ((n * num) % den)
                return -1;
            n = n * num / den;
        } else if (j > k) {
            if ((s * num) % den)
                return -1;
            s = s * num / den;
        }
        if (n < 2)
            continue;
        out->n[out->ndims] = n;
        out->stride[out->ndims++] = s;
    }
    return 0;
}

static int same_layout(const struct maya_replicas *x, const struct maya_replicas *y)
{
    if (x->ndims != y->ndims)
        return 0;
    for (int j = 0; j < x->ndims; j++)
        if (x->n[j] != y->n[j] || x->stride[j] != y->stride[j])
            return 0;
    return 1;
}

int run_elim_layout_step(const struct maya_replicas *a, int64_t a_world, const struct maya_replicas *b,
                         int64_t b_world, int64_t world, struct maya_replicas *out, int *dim, char *err,
                         size_t errn)
{
    char ta[256], tb[256];
    maya_replicas_format(a, ta, sizeof ta);
    maya_replicas_format(b, tb, sizeof tb);
    if (a_world < 1 || b_world <= a_world || b_world % a_world || world % b_world) {
        snprintf(err, errn, "runs of %lld and %lld ranks do not step up to %lld ranks by whole factors",
                 (long long)a_world, (long long)b_world, (long long)world);
        return -1;
    }
    /* the outermost that explains them: TP2 at DP 1 and 2 shows 2:1 and
     * 2:1,2:2, which TP growing from 1 would explain as well */
    int found = -1;
    struct maya_replicas shrunk;
    for (int k = b->ndims - 1; k >= 0 && found < 0; k--)
        if (scale_dim(b, k, a_world, b_world, &shrunk) == 0 && same_layout(&shrunk, a))
            found = k;
    if (found < 0) {
        snprintf(err, errn, "%lld ranks showed --replicas %s and %lld showed %s: no one dimension grew with the "
                 "world", (long long)a_world, a->ndims ? ta : "none", (long long)b_world, b->ndims ? tb : "none");
        return -1;
    }
    if (scale_dim(b, found, world, b_world, out) < 0) {
        snprintf(err, errn, "%s does not grow from %lld to %lld ranks", tb, (long long)b_world, (long long)world);
        return -1;
    }
    *dim = found;
    return layout_fits(out, world, err, errn);
}

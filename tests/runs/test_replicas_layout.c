/* The replicas layout from the classes of duplicate-rank elimination
 * (common/run_elim.c, docs/dedup.md "The layout from a smaller run"), on
 * the classes and communicators of Megatron-shaped jobs built here: TP
 * fastest, then DP, then PP, with the TP, DP, PP, model-parallel
 * (TP x PP) and embedding (first and last stage) groups and the world.
 * The ranks of a stage are one class (TP and DP ranks do the same work),
 * so classes alone would allow one dimension of TP x DP; the communicators
 * must split it. Then the layout grows to a larger job, is refused where it
 * cannot, and the file is read back (and refused when malformed, naming the
 * line). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit_check.h"
#include "maya/common.h"
#include "maya/run_elim.h"

struct job {
    struct run_elim_classes c;
    size_t nmem, memcap;
};

static void add_comm(struct job *j, const int *ranks, int n)
{
    struct run_elim_classes *c = &j->c;
    c->comm_off = realloc(c->comm_off, (size_t)(c->ncomms + 2) * sizeof *c->comm_off);
    if (j->nmem + (size_t)n > j->memcap) {
        j->memcap = (j->nmem + (size_t)n) * 2;
        c->members = realloc(c->members, j->memcap * sizeof *c->members);
    }
    c->comm_off[c->ncomms] = (int)j->nmem;
    for (int i = 0; i < n; i++)
        c->members[j->nmem++] = ranks[i];
    c->comm_off[++c->ncomms] = (int)j->nmem;
}

/* TP x DP x PP ranks, rank = tp + TP * (dp + DP * pp); every stage one class
 * (stage_classes) or every rank its own. */
static void megatron(struct job *j, int tp, int dp, int pp, int stage_classes)
{
    memset(j, 0, sizeof *j);
    int w = tp * dp * pp, g[4096];
    j->c.world = w;
    j->c.cls = malloc((size_t)w * sizeof *j->c.cls);
    for (int r = 0; r < w; r++)
        j->c.cls[r] = stage_classes ? r / (tp * dp) * (tp * dp) : r;
    for (int r = 0; r < w; r++)
        g[r] = r;
    add_comm(j, g, w);
    for (int p = 0; p < pp; p++)
        for (int d = 0; d < dp; d++) { /* TP groups */
            for (int t = 0; t < tp; t++)
                g[t] = t + tp * (d + dp * p);
            add_comm(j, g, tp);
        }
    for (int p = 0; p < pp; p++)
        for (int t = 0; t < tp; t++) { /* DP groups */
            for (int d = 0; d < dp; d++)
                g[d] = t + tp * (d + dp * p);
            add_comm(j, g, dp);
        }
    for (int d = 0; d < dp; d++)
        for (int t = 0; t < tp; t++) { /* PP groups, embedding groups */
            for (int p = 0; p < pp; p++)
                g[p] = t + tp * (d + dp * p);
            add_comm(j, g, pp);
            if (pp > 1) {
                g[1] = g[pp - 1];
                add_comm(j, g, 2);
            }
        }
    for (int d = 0; d < dp; d++) { /* model-parallel groups: TP x PP */
        int n = 0;
        for (int p = 0; p < pp; p++)
            for (int t = 0; t < tp; t++)
                g[n++] = t + tp * (d + dp * p);
        add_comm(j, g, n);
    }
}

static void layout_is(struct job *j, const char *want, const char *what)
{
    struct maya_replicas r;
    char got[256] = "";
    if (run_elim_layout(&j->c, &r) > 0)
        maya_replicas_format(&r, got, sizeof got);
    CHECK(!strcmp(got, want), "%s: layout \"%s\", expected \"%s\"", what, got, want);
}

static void grows_to(const char *small_text, int64_t small_world, int64_t world, const char *want)
{
    struct maya_replicas small, big;
    char err[512], got[256] = "";
    CHECK(maya_replicas_parse(small_text, small_world, &small, err, sizeof err) == 0, "%s: %s", small_text, err);
    int rc = run_elim_layout_grow(&small, small_world, world, &big, err, sizeof err);
    if (rc == 0)
        maya_replicas_format(&big, got, sizeof got);
    if (want)
        CHECK(rc == 0 && !strcmp(got, want), "%s of %lld grown to %lld: \"%s\" (%s), expected \"%s\"", small_text,
              (long long)small_world, (long long)world, got, rc ? err : "ok", want);
    else
        CHECK(rc < 0 && strstr(err, "does not grow"), "%s of %lld to %lld: expected a refusal, got \"%s\" (%s)",
              small_text, (long long)small_world, (long long)world, got, err);
}

/* The layouts of two smaller runs, stepped up to world ranks (--replicas
 * auto): want, or NULL for a refusal whose reason contains says. */
static void steps_to(const char *a_text, int64_t a_world, const char *b_text, int64_t b_world, int64_t world,
                     const char *want, const char *says)
{
    struct maya_replicas a, b, big;
    char err[512] = "", got[256] = "";
    CHECK(maya_replicas_parse(a_text, a_world, &a, err, sizeof err) == 0, "%s: %s", a_text, err);
    CHECK(maya_replicas_parse(b_text, b_world, &b, err, sizeof err) == 0, "%s: %s", b_text, err);
    int dim = -1, rc = run_elim_layout_step(&a, a_world, &b, b_world, world, &big, &dim, err, sizeof err);
    if (rc == 0)
        maya_replicas_format(&big, got, sizeof got);
    if (want)
        CHECK(rc == 0 && !strcmp(got, want) && dim >= 0, "\"%s\" of %lld, \"%s\" of %lld to %lld: \"%s\" (%s), "
              "expected \"%s\"", a_text, (long long)a_world, b_text, (long long)b_world, (long long)world, got,
              rc ? err : "ok", want);
    else
        CHECK(rc < 0 && strstr(err, says), "\"%s\" of %lld, \"%s\" of %lld to %lld: expected a refusal saying "
              "\"%s\", got \"%s\" (%s)", a_text, (long long)a_world, b_text, (long long)b_world, (long long)world,
              says, got, err);
}

/* The layout of a Megatron-shaped job of tp x dp x pp ranks. */
static void layout_of(int tp, int dp, int pp, struct maya_replicas *r)
{
    struct job j;
    megatron(&j, tp, dp, pp, 1);
    run_elim_layout(&j.c, r);
    run_elim_classes_free(&j.c);
}

static int read_text(const char *text, struct run_elim_classes *c)
{
    char dir[] = "/tmp/maya-layout-XXXXXX", path[256];
    if (!mkdtemp(dir))
        return -2;
    snprintf(path, sizeof path, "%s/%s", dir, MAYA_ELIM_CLASSES_FILE);
    FILE *fp = fopen(path, "w");
    fputs(text, fp);
    fclose(fp);
    int rc = run_elim_classes_read(dir, c);
    unlink(path);
    rmdir(dir);
    return rc;
}

int main(void)
{
    maya_set_error_prefix("test_replicas_layout");
    struct job j;
    megatron(&j, 2, 2, 2, 1); /* minigpt TP2 PP2 DP2 */
    layout_is(&j, "2:1,2:2", "TP2 DP2 PP2");
    run_elim_classes_free(&j.c);
    megatron(&j, 8, 2, 8, 1); /* Megatron's 145.6B shape with DP 2 */
    layout_is(&j, "8:1,2:8", "TP8 DP2 PP8");
    run_elim_classes_free(&j.c);
    megatron(&j, 1, 4, 1, 1); /* DDP */
    layout_is(&j, "4:1", "DDP on 4");
    run_elim_classes_free(&j.c);
    megatron(&j, 2, 4, 2, 0); /* every rank its own work: nothing folds */
    layout_is(&j, "", "distinct ranks");
    run_elim_classes_free(&j.c);
    megatron(&j, 4, 2, 2, 1); /* stage 1's TP ranks differ: only DP folds */
    for (int r = 8; r < 16; r++)
        j.c.cls[r] = 8 + r % 4;
    layout_is(&j, "2:4", "stage 1's TP ranks differ");
    j.c.cls[12] = 12, j.c.cls[13] = 13, j.c.cls[14] = 14, j.c.cls[15] = 15;
    layout_is(&j, "", "no DP replica in stage 1");
    run_elim_classes_free(&j.c);

    /* sizes whose products overflow are refused, not wrapped */
    {
        struct maya_replicas r;
        char e[512] = "";
        CHECK(maya_replicas_parse("4:9223372036854775807", 8, &r, e, sizeof e) < 0 && strstr(e, "does not divide"),
              "a stride of INT64_MAX: \"%s\"", e);
        CHECK(maya_replicas_parse("2:4611686018427387904,2:9223372036854775807", 8, &r, e, sizeof e) < 0,
              "a size times stride past INT64_MAX was accepted");
    }

    grows_to("2:1,2:2", 8, 16, "2:1,4:2");
    grows_to("8:1,2:8", 128, 1536, "8:1,24:8");
    grows_to("4:1", 4, 4, "4:1");
    grows_to("8:1,2:8", 128, 192, "8:1,3:8");
    grows_to("8:1,2:8", 128, 100, NULL);
    grows_to("2:1,2:2", 8, 4, NULL);

    /* --replicas auto: the dimension that grew between two runs is the
     * data-parallel one, whatever the others are */
    struct maya_replicas a, b, big;
    char ta[256], tb[256], err[512];
    int dim;
    layout_of(8, 1, 8, &a); /* 145.6B's shape at DP 1 and 2 */
    layout_of(8, 2, 8, &b);
    maya_replicas_format(&a, ta, sizeof ta);
    maya_replicas_format(&b, tb, sizeof tb);
    CHECK(!strcmp(ta, "8:1") && !strcmp(tb, "8:1,2:8"), "TP8 PP8 at DP 1 and 2: \"%s\", \"%s\"", ta, tb);
    CHECK(run_elim_layout_step(&a, 64, &b, 128, 1536, &big, &dim, err, sizeof err) == 0 && dim == 1 &&
              big.ndims == 2 && big.n[1] == 24 && big.stride[1] == 8,
          "TP8 PP8 stepped to 1,536 ranks: %s", err);
    steps_to("2:1", 4, "2:1,2:2", 8, 16, "2:1,4:2", NULL);      /* minigpt TP2 PP2 */
    steps_to("2:1", 4, "2:1,2:2", 8, 48, "2:1,12:2", NULL);
    steps_to("2:1,2:2", 8, "2:1,4:2", 16, 64, "2:1,16:2", NULL); /* from DP 2 and 4 */
    steps_to("2:1", 2, "2:1", 4, 8, NULL, "no one dimension");   /* a dimension that did not grow */
    steps_to("2:2", 4, "2:1,2:2", 8, 16, NULL, "no one dimension");
    steps_to("2:1", 2, "2:1,2:2", 4, 8, "2:1,4:2", NULL);       /* TP or DP grew: the outer one */
    steps_to("2:1", 4, "2:1,2:2", 8, 12, NULL, "whole factors");
    steps_to("2:1,3:2", 6, "2:1,6:2", 12, 36, "2:1,18:2", NULL); /* DP 3, 6, 18 */
    struct maya_replicas none = { 0 };
    layout_of(1, 2, 1, &b); /* DDP: nothing on 1 rank, 2:1 on 2 */
    CHECK(run_elim_layout_step(&none, 1, &b, 2, 8, &big, &dim, err, sizeof err) == 0 && big.ndims == 1 &&
              big.n[0] == 8 && big.stride[0] == 1, "DDP from 1 and 2 ranks to 8: %s", err);

    struct run_elim_classes c;
    CHECK(read_text("# a comment\nworld=4\nclasses=0 0 2 2\ncomm=0 1 2 3\ncomm=0 2\ncomm=1 3\n", &c) == 1 &&
              c.world == 4 && c.ncomms == 3 && c.cls[3] == 2 && c.comm_off[3] == 8 && c.members[7] == 3,
          "a good file: world %d, %d communicators", c.world, c.ncomms);
    run_elim_classes_free(&c);
    CHECK(read_text("world=4\nreplicas=2:2\nclasses=0 1 0 1\n", &c) == 1 && !strcmp(c.replicas, "2:2"),
          "a file of declared replicas");
    struct maya_replicas r;
    CHECK(run_elim_layout(&c, &r) == 1 && r.n[0] == 2 && r.stride[0] == 2, "its declared layout");
    run_elim_classes_free(&c);
    static const struct { const char *text, *says; } bad[] = {
        { "world=4\nclasses=0 0 2\n", "expected 4 classes" },
        { "world=4\nclasses=0 0 1 2\n", "not the lowest rank" },
        { "world=4\nclasses=0 0 0 0\ncomm=0 4\n", "expected ranks from 0 to 3" },
        { "classes=0\n", "expected world=RANKS before" },
        { "world=4\n", "expected a classes= line" },
        { "world=4\nclasses=0 0 0 0\nfoo=1\n", "found \"foo=1\"" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = read_text(bad[i].text, &c);
        CHECK(rc == -1 && strstr(maya_last_error(), bad[i].says), "bad file %zu: %d, \"%s\"", i, rc,
              maya_last_error());
    }
    CHECK(run_elim_classes_read("/nonexistent", &c) == 0, "no file: none");
    if (failures == 0)
        printf("replicas layouts: ok\n");
    return failures != 0;
}

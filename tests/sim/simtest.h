/* Helpers for the simulator's C unit tests: build rank traces from text
 * (the `maya trace build` format), collate them, replay them with fixed
 * durations, and compare times. Each test is one C file including this. */
#ifndef SIMTEST_H
#define SIMTEST_H

#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maya/collator.h"
#include "maya/common.h"
#include "maya/sim.h"

#define MS 1000000ull /* ns */

static int failures;

#define EXPECT(cond, ...) do { if (!(cond)) { failures++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

#define EXPECT_U64(got, want, what) do { uint64_t g_ = (got), w_ = (want); \
    EXPECT(g_ == w_, "%s: expected %" PRIu64 " (%.3f ms), got %" PRIu64 " (%.3f ms)", what, w_, \
           w_ / 1e6, g_, g_ / 1e6); } while (0)

#define EXPECT_NEAR(got, want, tol, what) do { double g_ = (got), w_ = (want); \
    EXPECT(g_ >= w_ - (tol) && g_ <= w_ + (tol), "%s: expected %.9g, got %.9g", what, w_, g_); } while (0)

/* Fixed durations by API or kernel name; host_ns applies to every call not listed. */
struct dur {
    const char *name;
    uint64_t dev_ns, host_ns;
};

struct durations {
    const struct dur *v;
    uint64_t default_host_ns;
};

static inline int fixed_estimate(void *ctx, const struct est_op *op, struct est_result *out)
{
    const struct durations *d = ctx;
    memset(out, 0, sizeof *out);
    out->host_ns = d->default_host_ns;
    for (const struct dur *x = d->v; x && x->name; x++)
        if ((op->kernel_name && !strcmp(x->name, op->kernel_name)) || (op->api && !strcmp(x->name, op->api))) {
            out->device_ns = x->dev_ns;
            if (x->host_ns != UINT64_MAX)
                out->host_ns = x->host_ns;
            return 0;
        }
    return 0;
}

static char test_dir[256];

static inline void cleanup(void)
{
    if (test_dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", test_dir);
    }
}

static inline const char *scratch(void)
{
    if (!test_dir[0]) {
        snprintf(test_dir, sizeof test_dir, "%s/maya-simtest.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(test_dir)) {
            perror("mkdtemp");
            exit(2);
        }
        atexit(cleanup);
    }
    return test_dir;
}

/* Write the texts as rank traces into a fresh directory and collate them;
 * returns the job trace's path (static) or NULL (message printed). */
static inline const char *make_job(const char *name, const char *const *ranks, int n)
{
    static char job[512];
    char dir[400], path[512];
    snprintf(dir, sizeof dir, "%s/%s", scratch(), name);
    snprintf(path, sizeof path, "mkdir -p '%s/traces'", dir);
    if (system(path) != 0)
        return NULL;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/rank-%d.txt", dir, i);
        if (maya_write_file_atomic(path, ranks[i], strlen(ranks[i])) < 0)
            return NULL;
        char out[512];
        snprintf(out, sizeof out, "%s/traces/rank-%d.mtrace", dir, i);
        if (col_trace_build(path, out) < 0)
            return NULL;
    }
    snprintf(job, sizeof job, "%s/job.mtrace", dir);
    snprintf(path, sizeof path, "%s/traces", dir);
    struct col_summary s;
    if (col_collate(path, job, 0, &s) < 0)
        return NULL;
    return job;
}

/* Build, collate, load with cfg and replay; NULL (message printed) on
 * failure. */
static inline struct sim_job *replay_with(const char *name, const char *const *ranks, int n,
                                          const struct sim_config *cfg)
{
    const char *job = make_job(name, ranks, n);
    if (!job) {
        failures++;
        fprintf(stderr, "FAIL %s: could not build the job\n", name);
        return NULL;
    }
    struct sim_job *j;
    if (sim_load(job, cfg, &j) < 0) {
        failures++;
        fprintf(stderr, "FAIL %s: sim_load: %s\n", name, maya_last_error());
        return NULL;
    }
    if (sim_run(j) < 0) {
        failures++;
        fprintf(stderr, "FAIL %s: sim_run: %s\n", name, maya_last_error());
        sim_free(j);
        return NULL;
    }
    return j;
}

/* The same with fixed durations by name. */
static inline struct sim_job *replay(const char *name, const char *const *ranks, int n, const struct dur *durs,
                              uint64_t default_host_ns, const char *marker)
{
    static struct durations d;
    d.v = durs;
    d.default_host_ns = default_host_ns;
    struct sim_config cfg = { .estimate = fixed_estimate, .estimate_ctx = &d, .iteration_marker = marker };
    return replay_with(name, ranks, n, &cfg);
}

static inline struct sim_op_times op(const struct sim_job *j, int rank, uint64_t i)
{
    struct sim_op_times t;
    memset(&t, 0, sizeof t);
    if (sim_op_times(j, rank, i, &t) < 0) {
        failures++;
        fprintf(stderr, "FAIL: rank %d has no op %" PRIu64 "\n", rank, i);
    }
    return t;
}

static inline int finish(const char *what)
{
    if (failures) {
        fprintf(stderr, "%s: %d failure(s)\n", what, failures);
        return 1;
    }
    printf("%s: ok\n", what);
    return 0;
}

#endif

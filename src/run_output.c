/* maya run's terminal output of the program: the ranks write their standard
 * output and error to DIR/logs/rank-N.out/.err (the files stay the whole
 * record); while they run, maya run follows the files of the ranks --tee
 * names and copies each complete line to its own stdout or stderr, prefixed
 * "[rank N] " when there are several processes, as torchrun --tee does.
 *
 * Following the files, rather than putting pipes between the ranks and
 * their logs, leaves the ranks' set-up untouched and loses nothing if maya
 * run dies: the files are written by the ranks themselves. Cost: two read()
 * calls per shown rank each time run_output_poll is called (every 10 ms
 * while the ranks run), and a line buffer of RUN_OUTPUT_LINE bytes per
 * stream; a longer line is printed in pieces.
 */
#define _GNU_SOURCE
#include "run_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maya/common.h"

struct run_stream {
    int fd;                     /* the log, opened for reading; -1 none */
    int to;                     /* 1 stdout, 2 stderr */
    int rank;
    size_t len;                 /* bytes of a line not yet printed */
    char buf[RUN_OUTPUT_LINE];
};

int run_output_parse(struct run_output *o, const char *spec)
{
    o->all = o->none = 0;
    o->nlist = 0;
    o->given = 1;
    if (!strcmp(spec, "all")) {
        o->all = 1;
        return 0;
    }
    if (!strcmp(spec, "none")) {
        o->none = 1;
        return 0;
    }
    const char *p = spec;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0 || v > 1000000 || (*end && *end != ','))
            return maya_error("--tee \"%s\": expected all, none, or ranks as N[,N...]", spec);
        if (o->nlist >= RUN_OUTPUT_MAX_LIST)
            return maya_error("--tee \"%s\": at most %d ranks by number (or all)", spec, RUN_OUTPUT_MAX_LIST);
        o->list[o->nlist++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (!o->nlist)
        return maya_error("--tee \"\": expected all, none, or ranks as N[,N...]");
    return 0;
}

static int shown(const struct run_output *o, int rank)
{
    if (o->all)
        return 1;
    for (int i = 0; i < o->nlist; i++)
        if (o->list[i] == rank)
            return 1;
    return 0;
}

int run_output_start(struct run_output *o, const char *dir, int nprocs)
{
    o->streams = NULL;
    o->nstreams = 0;
    o->prefix = nprocs > 1;
    o->noted = 0;
    if (o->none)
        return 0;
    for (int i = 0; i < o->nlist; i++)
        if (o->list[i] >= nprocs)
            return maya_error("--tee %d: the job has ranks 0..%d", o->list[i], nprocs - 1);
    int n = 0;
    for (int r = 0; r < nprocs; r++)
        n += shown(o, r) * 2;
    if (!n)
        return 0;
    if (!(o->streams = calloc((size_t)n, sizeof *o->streams)))
        return maya_error("out of memory following the ranks' output");
    /* Create (empty) the logs now and open them for reading: a rank opens
     * its own with O_TRUNC before it writes anything, so nothing left from
     * before can be read as this run's. */
    for (int r = 0; r < nprocs; r++) {
        if (!shown(o, r))
            continue;
        for (int k = 0; k < 2; k++) {
            char path[4200];
            snprintf(path, sizeof path, "%s/logs/rank-%d.%s", dir, r, k ? "err" : "out");
            int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd < 0) {
                run_output_finish(o);
                return maya_error("cannot create %s: %m", path);
            }
            struct run_stream *s = &o->streams[o->nstreams++];
            s->fd = fd;
            s->to = k ? 2 : 1;
            s->rank = r;
        }
    }
    /* Python buffers its output in blocks when it goes to a file: lines
     * would reach the terminal only kilobytes at a time */
    setenv("PYTHONUNBUFFERED", "1", 0);
    return 0;
}

static void emit(struct run_output *o, const struct run_stream *s, const char *line, size_t n)
{
    /* A user reading "loss 0.0000" would think the run broken: say why,
     * once, before the program's first line. */
    if (!o->noted) {
        fputs("maya run: the emulated GPUs compute only copies and small kernels of real inputs: what "
              "the program prints from other GPU results (a loss) is not real (docs/values.md)\n", stderr);
        o->noted = 1;
    }
    char pre[32];
    int np = o->prefix ? snprintf(pre, sizeof pre, "[rank %d] ", s->rank) : 0;
    FILE *fp = s->to == 1 ? stdout : stderr;
    if (np > 0)
        fwrite(pre, 1, (size_t)np, fp);
    fwrite(line, 1, n, fp);
    if (!n || line[n - 1] != '\n')
        fputc('\n', fp);
    fflush(fp);
}

static void pump(struct run_output *o, struct run_stream *s, int final)
{
    for (;;) {
        ssize_t got = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);
        if (got <= 0)
            break;
        s->len += (size_t)got;
        size_t start = 0;
        for (size_t i = 0; i < s->len; i++)
            if (s->buf[i] == '\n') {
                emit(o, s, s->buf + start, i + 1 - start);
                start = i + 1;
            }
        memmove(s->buf, s->buf + start, s->len - start);
        s->len -= start;
        if (s->len == sizeof s->buf) { /* a line longer than the buffer: in pieces */
            emit(o, s, s->buf, s->len);
            s->len = 0;
        }
    }
    if (final && s->len) {
        emit(o, s, s->buf, s->len);
        s->len = 0;
    }
}

void run_output_poll(struct run_output *o)
{
    for (int i = 0; i < o->nstreams; i++)
        pump(o, &o->streams[i], 0);
}

void run_output_finish(struct run_output *o)
{
    for (int i = 0; i < o->nstreams; i++) {
        pump(o, &o->streams[i], 1);
        close(o->streams[i].fd);
    }
    free(o->streams);
    o->streams = NULL;
    o->nstreams = 0;
}

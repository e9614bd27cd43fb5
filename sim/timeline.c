/* timeline.json: the replay in Chrome's trace event format (complete "X"
 * events, ts/dur in microseconds), which ui.perfetto.dev and chrome://tracing
 * open. One process per rank; thread 0 is its host, thread k its k-th
 * stream. A host call lasts from its start until the host is free again, so
 * a synchronising call shows its wait. The ranks and iterations are those of
 * the view (timeline_view.c): bounded by default. A folded rank shows the
 * replay of the rank it was folded into (the same times).
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <string.h>

#include "maya/common.h"
#include "maya/progress.h"

static const char *category(const struct sim_op *o)
{
    switch (o->kind) {
    case SK_KERNEL: return "compute";
    case SK_COPY: return "copy";
    case SK_COLL:
    case SK_P2P: return "communication";
    case SK_HOST_FUNC: return "host_function";
    default: return "other";
    }
}

static void event(FILE *fp, int *first, const char *name, const char *cat, int pid, uint32_t tid, uint64_t start,
                  uint64_t end)
{
    fputs(*first ? "\n" : ",\n", fp);
    *first = 0;
    fputs("{\"ph\":\"X\",\"name\":", fp);
    json_escape(fp, name);
    fprintf(fp, ",\"cat\":\"%s\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f}", cat, pid, tid, start / 1e3,
            (end > start ? end - start : 0) / 1e3);
}

static void meta(FILE *fp, int *first, const char *what, int pid, int64_t tid, const char *key, const char *sval,
                 int64_t ival)
{
    fputs(*first ? "\n" : ",\n", fp);
    *first = 0;
    fprintf(fp, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,", what, pid);
    if (tid >= 0)
        fprintf(fp, "\"tid\":%lld,", (long long)tid);
    fprintf(fp, "\"args\":{\"%s\":", key);
    if (sval)
        json_escape(fp, sval);
    else
        fprintf(fp, "%lld", (long long)ival);
    fputs("}}", fp);
}

/* When the host of r is free again after call i. */
static uint64_t host_free(const struct sim_rank *r, uint64_t i)
{
    if (i + 1 < r->nops) {
        const struct sim_op *n = &r->ops[i + 1];
        return r->times[i + 1].host_end - n->host_ns - n->gap_ns;
    }
    return MAYA_MAX(r->free_at, r->times[i].host_end);
}

/* Whether an op shows on its stream's lane too (else on the host's alone). */
static int on_device_lane(const struct sim_op *o)
{
    return o->stream && sim_device_work(o);
}

uint64_t sim_timeline_events(const struct sim_rank *r, uint64_t t0, uint64_t t1)
{
    uint64_t n = 0;
    for (uint64_t k = 0; k < r->nops; k++) {
        const struct sim_time *t = &r->times[k];
        n += host_free(r, k) > t0 && t->host_end - r->ops[k].host_ns < t1;
        n += on_device_lane(&r->ops[k]) && t->dev_end > t0 && t->dev_start < t1;
    }
    return n;
}

int sim_write_timeline(const struct sim_job *j, const struct sim_view *v, const char *path)
{
    uint64_t t0 = v->t0, t1 = v->t1;
    struct maya_atomic_file af;
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    FILE *fp = af.fp;
    fprintf(fp, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"maya %s\",\"gpu\":", MAYA_VERSION);
    json_escape(fp, j->gpu);
    fprintf(fp, ",\"window_ns\":[%llu,%llu],\"ranks_shown\":%d,\"ranks\":%d,\"iterations_shown\":[%d,%d],"
                "\"view\":\"%s\"},\"traceEvents\":[",
            (unsigned long long)t0, (unsigned long long)(t1 == UINT64_MAX ? j->makespan : t1), v->nranks, j->nranks,
            v->iter_first, v->iter_last, v->full ? "full" : "bounded");
    int first = 1;
    char name[128];
    for (int n = 0; n < v->nranks; n++) {
        if ((n & 63) == 0 && maya_check_stop("writing timeline.json") < 0) {
            maya_atomic_abort(&af);
            return -1;
        }
        maya_progress("writing timeline.json", (uint64_t)n, (uint64_t)v->nranks);
        const struct sim_rank *me = &j->ranks[v->ranks[n]], *r = SIM_REPLAYED(j, me);
        snprintf(name, sizeof name, "rank %d (node %d)", me->rank, me->node);
        meta(fp, &first, "process_name", me->rank, -1, "name", name, 0);
        meta(fp, &first, "process_sort_index", me->rank, -1, "sort_index", NULL, me->rank);
        meta(fp, &first, "thread_name", me->rank, 0, "name", "host", 0);
        for (uint32_t k = 0; k < r->nstreams; k++) {
            const struct sim_stream *st = &j->streams[r->streams[k]];
            if (st->id >= UINT64_MAX - 64)
                snprintf(name, sizeof name, "legacy stream (device %d)", st->device);
            else
                snprintf(name, sizeof name, "stream %llu (device %d)%s%s", (unsigned long long)st->id, st->device,
                         st->flags & MAYA_STREAM_LEGACY ? " legacy" : "",
                         st->flags & MAYA_STREAM_NON_BLOCKING ? " non-blocking" : "");
            meta(fp, &first, "thread_name", me->rank, st->lane + 1, "name", name, 0);
            meta(fp, &first, "thread_sort_index", me->rank, st->lane + 1, "sort_index", NULL, st->lane + 1);
        }
        for (uint64_t k = 0; k < r->nops; k++) {
            const struct sim_op *o = &r->ops[k];
            const struct sim_time *t = &r->times[k];
            const char *nm = sim_name(j, o->name);
            uint64_t hs = t->host_end - o->host_ns, he = host_free(r, k);
            if (he > t0 && hs < t1)
                event(fp, &first, nm, "host", me->rank, 0, hs, he);
            if (on_device_lane(o) && t->dev_end > t0 && t->dev_start < t1)
                event(fp, &first, nm, category(o), me->rank, j->streams[o->stream - 1].lane + 1, t->dev_start,
                      t->dev_end);
        }
    }
    fputs("\n]}\n", fp);
    return maya_atomic_commit(&af);
}

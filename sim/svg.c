/* timeline.svg: a picture of the first steady iteration (the second one
 * found, or the only one) of the view's ranks (timeline_view.c: bounded by
 * default), one lane per stream per rank, ops coloured by
 * what they are (compute, communication, copies, host functions), with a
 * time axis. Ops closer than half a pixel merge into one bar so that large
 * jobs stay small; each bar's tooltip names what it holds.
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <math.h>
#include <string.h>

#include "maya/common.h"

#define WIDTH 1280.0
#define LEFT 200.0
#define RIGHT 24.0
#define TOP 64.0

enum { C_COMPUTE, C_COMM, C_COPY, C_HOSTFN, C_N };
static const char *const colors[C_N] = { "#4c78a8", "#f58518", "#54a24b", "#b279a2" };
static const char *const labels[C_N] = { "compute", "communication (incl. waiting for peers)",
                                         "host-device copies", "host functions" };

static int class_of(const struct sim_op *o)
{
    switch (o->kind) {
    case SK_KERNEL: return C_COMPUTE;
    case SK_COLL:
    case SK_P2P: return C_COMM;
    case SK_COPY: return C_COPY;
    case SK_HOST_FUNC: return C_HOSTFN;
    default: return -1;
    }
}

static void fmt_ms(char *buf, size_t size, double ns)
{
    if (ns >= 1e9)
        snprintf(buf, size, "%.3g s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, size, "%.3g ms", ns / 1e6);
    else
        snprintf(buf, size, "%.3g us", ns / 1e3);
}

/* A bar being drawn in a lane: ops merged while they touch. */
struct run {
    double x0, x1;
    int cls, count;
    uint32_t name;
    double busy_ns;
};

static void flush(FILE *fp, const struct sim_job *j, struct run *r, double y, double h)
{
    if (r->count == 0)
        return;
    char d[32];
    fmt_ms(d, sizeof d, r->busy_ns);
    double w = MAYA_MAX(r->x1 - r->x0, 0.5);
    fprintf(fp, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"%s><title>", r->x0, y, w, h,
            colors[r->cls], w >= 3 ? " stroke=\"white\" stroke-width=\"0.5\"" : "");
    if (r->count == 1) {
        sim_xml_escape(fp, sim_name(j, r->name));
        fprintf(fp, ": %s", d);
    } else {
        fprintf(fp, "%d ops, %s busy; first: ", r->count, d);
        sim_xml_escape(fp, sim_name(j, r->name));
    }
    fputs("</title></rect>\n", fp);
    /* a name inside bars wide enough to hold some of it */
    int chars = (int)(w / 6.5) - 1;
    if (r->count == 1 && chars >= 6 && h >= 12) {
        const char *nm = sim_name(j, r->name);
        char buf[256];
        int n = (int)strlen(nm);
        if (chars > (int)sizeof buf - 4)
            chars = (int)sizeof buf - 4;
        snprintf(buf, sizeof buf, "%.*s%s", n > chars ? chars - 1 : n, nm, n > chars ? "~" : "");
        fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\" fill=\"white\" pointer-events=\"none\">", r->x0 + 3,
                y + h / 2 + 4);
        sim_xml_escape(fp, buf);
        fputs("</text>\n", fp);
    }
    r->count = 0;
}

int sim_write_svg(const struct sim_job *j, const struct sim_view *v, const char *path)
{
    uint64_t w0, w1;
    int which = sim_picture_window(j, &w0, &w1);
    /* lanes: streams that ever ran device work, rank by rank */
    uint32_t *lane_of = calloc(MAYA_MAX(j->nstreams, 1), sizeof *lane_of); /* lane + 1, 0 = none */
    if (!lane_of)
        return maya_error("out of memory drawing the timeline");
    /* a folded rank draws its representative's streams: lanes by (view
     * position, stream lane), first_lane[n] the first of view rank n's */
    uint32_t lanes = 0;
    uint32_t *first_lane = calloc((size_t)MAYA_MAX(v->nranks, 1), sizeof *first_lane);
    if (!first_lane) {
        free(lane_of);
        return maya_error("out of memory drawing the timeline");
    }
    for (int n = 0; n < v->nranks; n++) {
        const struct sim_rank *r = SIM_REPLAYED(j, &j->ranks[v->ranks[n]]);
        for (uint32_t k = 0; k < r->nstreams; k++)
            lane_of[r->streams[k]] = 0;
        for (uint64_t k = 0; k < r->nops; k++)
            if (r->ops[k].stream && class_of(&r->ops[k]) >= 0)
                lane_of[r->ops[k].stream - 1] = 1;
        first_lane[n] = lanes;
        for (uint32_t k = 0; k < r->nstreams; k++)
            if (lane_of[r->streams[k]])
                lane_of[r->streams[k]] = ++lanes - first_lane[n];
    }
    double lane_h = lanes <= 48 ? 18 : MAYA_MAX(2.0, floor(1400.0 / lanes));
    double bar_h = lane_h >= 8 ? lane_h - 4 : lane_h;
    double height = TOP + lanes * lane_h + 56;
    double span = (double)(w1 - w0), plot = WIDTH - LEFT - RIGHT;
    struct run *runs = calloc(MAYA_MAX(lanes, 1), sizeof *runs);
    if (!runs) {
        free(lane_of);
        return maya_error("out of memory drawing the timeline");
    }
    struct maya_atomic_file af;
    if (maya_atomic_open(&af, path) < 0) {
        free(lane_of);
        free(first_lane);
        free(runs);
        return -1;
    }
    FILE *fp = af.fp;
    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
            WIDTH, height, WIDTH, height);
    fprintf(fp, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    char d[32];
    fmt_ms(d, sizeof d, span);
    fprintf(fp, "<text x=\"%.0f\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", LEFT);
    sim_xml_escape(fp, j->gpu);
    fprintf(fp, " x %d: iteration %d of %d, %s%s; ", j->nranks, which, MAYA_MAX(j->niter, 1), d,
            which == 2 ? " (the first steady one)" : "");
    sim_xml_escape(fp, v->what);
    fputs("</text>\n", fp);
    /* time axis: at most ten ticks, 1, 2 or 5 x 10^k apart */
    double raw = span / 10, mag = pow(10, floor(log10(raw))), step = mag;
    if (raw / mag > 5)
        step = 10 * mag;
    else if (raw / mag > 2)
        step = 5 * mag;
    else if (raw / mag > 1)
        step = 2 * mag;
    for (double t = 0; t <= span + 1e-9; t += step) {
        double x = LEFT + plot * t / span;
        fmt_ms(d, sizeof d, t);
        fprintf(fp, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" stroke=\"#ddd\"/>"
                    "<text x=\"%.2f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#555\">%s</text>\n",
                x, TOP - 8, x, TOP + lanes * lane_h, x, TOP - 12, t == 0 ? "0" : d);
    }
    /* lane labels and backgrounds */
    for (int n = 0; n < v->nranks; n++) {
        const struct sim_rank *me = &j->ranks[v->ranks[n]], *r = SIM_REPLAYED(j, me);
        for (uint32_t k = 0; k < r->nstreams; k++) {
            uint32_t l = lane_of[r->streams[k]];
            if (!l)
                continue;
            l += first_lane[n];
            double y = TOP + (l - 1) * lane_h;
            if (n % 2 == 0)
                fprintf(fp, "<rect x=\"0\" y=\"%.2f\" width=\"%.0f\" height=\"%.2f\" fill=\"#f4f4f4\"/>\n", y,
                        WIDTH, lane_h);
            if (lane_h >= 9) {
                const struct sim_stream *st = &j->streams[r->streams[k]];
                fprintf(fp, "<text x=\"%.0f\" y=\"%.2f\" text-anchor=\"end\" fill=\"#333\">rank %d ", LEFT - 8,
                        y + lane_h / 2 + 4, me->rank);
                if (st->id >= UINT64_MAX - 64 || (st->flags & MAYA_STREAM_LEGACY))
                    fprintf(fp, "default stream");
                else
                    fprintf(fp, "stream %llu", (unsigned long long)st->id);
                fprintf(fp, " (dev %d)</text>\n", st->device);
            }
        }
    }
    /* bars */
    for (int n = 0; n < v->nranks; n++) {
        const struct sim_rank *r = SIM_REPLAYED(j, &j->ranks[v->ranks[n]]);
        for (uint64_t k = 0; k < r->nops; k++) {
            const struct sim_op *o = &r->ops[k];
            const struct sim_time *t = &r->times[k];
            int cls = class_of(o);
            if (cls < 0 || !o->stream || t->dev_end <= w0 || t->dev_start >= w1)
                continue;
            uint32_t l = lane_of[o->stream - 1] - 1 + first_lane[n];
            double a = (double)(MAYA_MAX(t->dev_start, w0) - w0), b = (double)(MAYA_MIN(t->dev_end, w1) - w0);
            double x0 = LEFT + plot * a / span, x1 = LEFT + plot * b / span;
            struct run *ru = &runs[l];
            double y = TOP + l * lane_h + (lane_h - bar_h) / 2;
            /* merge only what is too thin to see alone */
            int thin = x1 - x0 < 2 || ru->x1 - ru->x0 < 2;
            if (ru->count && (cls != ru->cls || x0 > ru->x1 + 0.5 || !thin))
                flush(fp, j, ru, y, bar_h);
            if (!ru->count) {
                *ru = (struct run){ x0, x1, cls, 0, o->name, 0 };
            }
            ru->x1 = MAYA_MAX(ru->x1, x1);
            ru->count++;
            ru->busy_ns += b - a;
        }
        /* the next rank may be drawn from the same representative's streams */
        for (uint32_t l = first_lane[n]; l < (n + 1 < v->nranks ? first_lane[n + 1] : lanes); l++)
            flush(fp, j, &runs[l], TOP + l * lane_h + (lane_h - bar_h) / 2, bar_h);
    }
    /* legend */
    double ly = TOP + lanes * lane_h + 28, lx = LEFT;
    for (int c = 0; c < C_N; c++) {
        fprintf(fp, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                    "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", lx, ly - 10, colors[c], lx + 16, ly, labels[c]);
        lx += 40 + 6.2 * (double)strlen(labels[c]);
    }
    fputs("</svg>\n", fp);
    free(lane_of);
    free(first_lane);
    free(runs);
    return maya_atomic_commit(&af);
}

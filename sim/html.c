/* report.html: the report as one self-contained page (inline CSS, SVG and a
 * little JavaScript; nothing is fetched, so it opens offline): the headline,
 * the key figures, each rank's iteration split into compute, exposed
 * communication, copies and idle as a stacked bar, peak memory per rank
 * against the GPU's capacity, time per communicator, the ops with the most
 * device time, and a zoomable timeline of the first steady iteration for the
 * ranks that matter.
 *
 * Every figure shown is one report.json holds (the same numbers, from the
 * same sim_details), and carries it in a data- attribute so that a program
 * (tests/runs/test_report_html.sh) can check the page against the file.
 *
 * Size: bounded whatever the job's size. Up to HTML_BARS ranks get a bar
 * each; more are grouped into HTML_BARS bars of consecutive ranks (the mean
 * split, the highest peak), and two ranks get bars of
 * their own (most and least compute and copies: the one the others wait
 * for, and the one that waits most). The
 * communicator table shows the HTML_COMMS with the most time, the timeline
 * at most TL_RANKS ranks and TL_LANES streams, each lane's ops merged below
 * 1/TL_UNITS of the iteration (a tenth of a pixel at the initial zoom): its
 * rects are at most TL_UNITS per lane.
 */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <inttypes.h>
#include <string.h>

#include "maya/common.h"
#include "maya/hwspec.h"

#define HTML_BARS 64
#define HTML_COMMS 24
#define TL_RANKS 4
#define TL_LANES 32
#define TL_UNITS 10000.0   /* the timeline's virtual width: one iteration */
#define TL_LEFT 190.0
#define TL_PLOT 800.0
#define TL_LANE_H 14.0

static const char *const class_colors[4] = { "#4c78a8", "#f58518", "#54a24b", "#d9d9d9" };
static const char *const split_names[4] = { "compute", "communication (exposed)", "copies alone", "idle" };

static void esc(FILE *fp, const char *s)
{
    sim_xml_escape(fp, s);
}

static void time_cell(FILE *fp, double s)
{
    char t[32];
    sim_fmt_time(t, sizeof t, s);
    fprintf(fp, "<td class=\"num\" data-value=\"%.9g\">%s</td>", s, t);
}

/* A row of the figures table: data-key is report.json's key. */
static void figure_time(FILE *fp, const char *key, const char *label, double s, double of)
{
    char t[32];
    sim_fmt_time(t, sizeof t, s);
    fprintf(fp, "<tr data-key=\"%s\" data-value=\"%.9g\"><th>%s</th><td class=\"num\">%s</td>", key, s, label, t);
    if (of > 0)
        fprintf(fp, "<td class=\"num\">%.1f%%</td>", 100 * s / of);
    else
        fputs("<td></td>", fp);
    fputs("</tr>\n", fp);
}

static void write_head(FILE *fp)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>maya report</title>\n<style>\n"
          "body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1040px;color:#222;padding:0 12px}\n"
          "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}\n"
          ".sub{color:#555;margin:2px 0;font-size:14px}\n"
          "#headline{font-size:20px;padding:12px 16px;border-radius:6px;margin:16px 0;background:#eef4fb}\n"
          "#headline.failed,#headline.not-simulated{background:#fdecea;color:#8a1c12}\n"
          "#headline b{font-size:26px}\n"
          "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;text-align:left;"
          "border-bottom:1px solid #eee}th{font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
          "td.name{max-width:460px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-family:monospace}\n"
          ".note{color:#666;font-size:12px;margin:4px 0}\n"
          ".legend span{display:inline-block;width:11px;height:11px;margin:0 4px 0 12px;vertical-align:-1px}\n"
          "svg text{font-size:11px;fill:#333}\n"
          "#tl-controls button{margin-right:6px}\n"
          "pre{background:#f6f6f6;padding:8px;font-size:12px;overflow-x:auto}\n"
          "</style></head><body>\n", fp);
}

static int failed_procs(const struct maya_run_desc *d, int *first)
{
    int n = 0;
    *first = -1;
    for (int i = 0; d && i < d->nprocs; i++)
        if (!maya_run_proc_ok(&d->procs[i]) && !d->procs[i].note[0]) {
            if (*first < 0)
                *first = i;
            n++;
        }
    return n;
}

static void write_headline(FILE *fp, const struct sim_page *p)
{
    const struct sim_report_info *in = p->in;
    const struct maya_run_desc *d = in->desc;
    const char *gpu = in->gpu ? in->gpu->key : p->j ? p->j->gpu : d ? d->gpu : "?";
    char t[32];
    int first;
    int failed = failed_procs(d, &first);
    if (failed) {
        char st[96];
        maya_run_proc_status(&d->procs[first], st, sizeof st);
        fprintf(fp, "<div id=\"headline\" class=\"failed\" data-failed=\"%d\">FAILED: %d of %d process%s failed; "
                    "rank %d: ", failed, failed, d->nprocs, d->nprocs == 1 ? "" : "es", first);
        esc(fp, st);
        fputs(p->replayed ? "<br><small>The figures below cover only what the ranks did before.</small>" : "", fp);
        fputs("</div>\n", fp);
        return;
    }
    if (!p->replayed) {
        fputs("<div id=\"headline\" class=\"not-simulated\">NOT SIMULATED: ", fp);
        esc(fp, in->error ? in->error : "the job could not be replayed");
        fputs("</div>\n", fp);
        return;
    }
    sim_fmt_time(t, sizeof t, p->s->iteration_s);
    fprintf(fp, "<div id=\"headline\" class=\"ok\" data-iteration-time-s=\"%.9g\"><b>%s</b> per iteration on %d x ",
            p->s->iteration_s, t, p->gpus);
    esc(fp, gpu);
    if (p->s->mfu >= 0)
        fprintf(fp, ", MFU %.1f%%", 100 * p->s->mfu);
    fputs("</div>\n", fp);
}

static void write_figures(FILE *fp, const struct sim_page *p)
{
    const struct sim_summary *s = p->s;
    fputs("<h2>Figures</h2>\n<table id=\"figures\">\n", fp);
    fprintf(fp, "<tr data-key=\"gpu_count\" data-value=\"%d\"><th>GPUs</th><td class=\"num\">%d</td><td></td></tr>\n",
            p->gpus, p->gpus);
    if (p->replayed) {
        figure_time(fp, "iteration_time_s", "iteration (steady state)", s->iteration_s, 0);
        figure_time(fp, "first_iteration_time_s", "first iteration", s->first_iteration_s, 0);
        figure_time(fp, "compute_time_s", "compute, mean over ranks", s->compute_s, s->iteration_s);
        figure_time(fp, "communication_time_s", "communication", s->comm_s, s->iteration_s);
        figure_time(fp, "exposed_communication_time_s", "&nbsp;&nbsp;exposed (not overlapped)", s->exposed_comm_s,
                    s->iteration_s);
        figure_time(fp, "copy_time_s", "host&lt;-&gt;device copies", s->copy_s, s->iteration_s);
        figure_time(fp, "idle_time_s", "idle", s->idle_s, s->iteration_s);
        if (s->mfu >= 0)
            fprintf(fp, "<tr data-key=\"mfu\" data-value=\"%.9g\"><th>MFU</th><td class=\"num\">%.1f%%</td>"
                        "<td></td></tr>\n", s->mfu, 100 * s->mfu);
    }
    if (p->j) {
        char b[32];
        sim_fmt_bytes(b, sizeof b, s->peak_memory_bytes);
        fprintf(fp, "<tr data-key=\"peak_memory_bytes\" data-value=\"%" PRIu64 "\"><th>peak memory</th>"
                    "<td class=\"num\">%s</td><td></td></tr>\n", s->peak_memory_bytes, b);
    }
    fputs("</table>\n", fp);
    if (p->replayed)
        fprintf(fp, "<p class=\"note\">Steady state: the median of iterations 2..%d (%d found); the breakdown "
                    "is per iteration over the steady iterations. Details in report.txt and report.json.</p>\n",
                p->s->iterations, p->s->iterations);
}

/* The bars: either one per rank, or HTML_BARS groups of consecutive ranks. */
struct group {
    int a, b;                  /* j->ranks indexes [a, b) */
    const char *why;           /* a rank shown on its own, or NULL */
};

/* The ranks that matter beyond the first and last: the one with the most
 * device work of its own (compute and copies; the others wait for it) and
 * the one with the least. */
static void extremes(const struct sim_job *j, const struct sim_details *d, int *least, int *most)
{
    *least = *most = 0;
    for (int i = 1; i < j->nranks; i++) {
        double w = d->split[i].compute_s + d->split[i].copy_s;
        if (w < d->split[*least].compute_s + d->split[*least].copy_s)
            *least = i;
        if (w > d->split[*most].compute_s + d->split[*most].copy_s)
            *most = i;
    }
}

static int make_groups(const struct sim_job *j, const struct sim_details *d, struct group *g)
{
    int n = j->nranks, ng = MAYA_MIN(n, HTML_BARS);
    for (int k = 0; k < ng; k++)
        g[k] = (struct group){ (int)((int64_t)k * n / ng), (int)((int64_t)(k + 1) * n / ng), NULL };
    if (n > HTML_BARS && d) {
        int lo, hi;
        extremes(j, d, &lo, &hi);
        g[ng++] = (struct group){ hi, hi + 1, "most work" };
        if (lo != hi)
            g[ng++] = (struct group){ lo, lo + 1, "least work" };
    }
    return ng;
}

static void group_label(FILE *fp, const struct sim_job *j, const struct group *g)
{
    if (g->b - g->a == 1)
        fprintf(fp, "rank %d", j->ranks[g->a].rank);
    else
        fprintf(fp, "ranks %d-%d", j->ranks[g->a].rank, j->ranks[g->b - 1].rank);
    if (g->why)
        fprintf(fp, " (%s)", g->why);
}

static void write_breakdown(FILE *fp, const struct sim_page *p, const struct group *g, int ng)
{
    const struct sim_job *j = p->j;
    const struct sim_details *d = p->d;
    double of = d->iteration_s > 0 ? d->iteration_s : 1;
    fputs("<h2>Iteration breakdown per rank</h2>\n<div class=\"legend\">", fp);
    for (int c = 0; c < 4; c++)
        fprintf(fp, "<span style=\"background:%s\"></span>%s", class_colors[c], split_names[c]);
    fputs("</div>\n", fp);
    double row = 16, left = 190, width = 800, h = ng * row + 24;
    fprintf(fp, "<svg id=\"breakdown\" width=\"%.0f\" height=\"%.0f\" data-iteration-s=\"%.9g\">\n", left + width + 40,
            h, d->iteration_s);
    for (int k = 0; k < ng; k++) {
        double v[4] = { 0, 0, 0, 0 };
        for (int i = g[k].a; i < g[k].b; i++) {
            const struct sim_rank_split *sp = &d->split[i];
            v[0] += sp->compute_s;
            v[1] += sp->comm_s;
            v[2] += sp->copy_s;
            v[3] += sp->idle_s;
        }
        for (int c = 0; c < 4; c++)
            v[c] /= g[k].b - g[k].a;
        double y = k * row;
        fprintf(fp, "<g class=\"bar\" data-first=\"%d\" data-last=\"%d\" data-compute-s=\"%.9g\" data-comm-s=\"%.9g\" "
                    "data-copy-s=\"%.9g\" data-idle-s=\"%.9g\"><title>", j->ranks[g[k].a].rank,
                j->ranks[g[k].b - 1].rank, v[0], v[1], v[2], v[3]);
        group_label(fp, j, &g[k]);
        if (g[k].b - g[k].a > 1)
            fputs(" (mean)", fp);
        for (int c = 0; c < 4; c++) {
            char t[32];
            sim_fmt_time(t, sizeof t, v[c]);
            fprintf(fp, "; %s %s (%.1f%%)", split_names[c], t, 100 * v[c] / of);
        }
        fprintf(fp, "</title><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", left - 8, y + row - 4);
        group_label(fp, j, &g[k]);
        fputs("</text>", fp);
        double x = left;
        for (int c = 0; c < 4; c++) {
            double w = width * v[c] / of;
            if (w > 0)
                fprintf(fp, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"/>", x, y + 2, w,
                        row - 3, class_colors[c]);
            x += w;
        }
        fputs("</g>\n", fp);
    }
    char t[32];
    sim_fmt_time(t, sizeof t, d->iteration_s);
    fprintf(fp, "<text x=\"%.0f\" y=\"%.0f\">0</text><text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n",
            left, h - 6, left + width, h - 6, t);
    fputs("</svg>\n", fp);
    if (j->nranks > HTML_BARS)
        fprintf(fp, "<p class=\"note\">%d ranks in %d bars of consecutive ranks (each the mean of its ranks); the "
                    "ranks with the most and the least device work of their own (compute, copies) are shown alone. Every rank's figures are in report.json.</p>\n",
                j->nranks, HTML_BARS);
    fputs("<p class=\"note\">Each bar is one steady iteration: compute whenever a kernel runs, communication "
          "when only collectives or send/recv run (incl. waiting for peers), copies when only host&lt;-&gt;device "
          "copies run, idle otherwise; the four add up to the iteration.</p>\n", fp);
}

static void write_memory(FILE *fp, const struct sim_page *p, const struct group *g, int ng)
{
    const struct sim_job *j = p->j;
    uint64_t top = p->total_mem;
    for (int i = 0; i < j->nranks; i++)
        top = MAYA_MAX(top, j->ranks[i].peak_bytes);
    if (!top)
        top = 1;
    char b[32];
    sim_fmt_bytes(b, sizeof b, p->total_mem);
    fprintf(fp, "<h2>Memory per rank</h2>\n<p class=\"note\">Peak device memory%s%s.</p>\n",
            p->total_mem ? " against the GPU's " : "", p->total_mem ? b : "");
    double row = 16, left = 190, width = 800, h = ng * row + 24;
    fprintf(fp, "<svg id=\"memory\" width=\"%.0f\" height=\"%.0f\" data-capacity-bytes=\"%" PRIu64 "\">\n",
            left + width + 40, h, p->total_mem);
    for (int k = 0; k < ng; k++) {
        uint64_t peak = 0;
        int oom = 0;
        for (int i = g[k].a; i < g[k].b; i++) {
            peak = MAYA_MAX(peak, j->ranks[i].peak_bytes);
            oom |= j->ranks[i].oom;
        }
        double y = k * row, w = width * (double)peak / (double)top;
        int over = oom || (p->total_mem && peak > p->total_mem);
        sim_fmt_bytes(b, sizeof b, peak);
        fprintf(fp, "<g class=\"mem\" data-first=\"%d\" data-last=\"%d\" data-peak-bytes=\"%" PRIu64 "\"><title>",
                j->ranks[g[k].a].rank, j->ranks[g[k].b - 1].rank, peak);
        group_label(fp, j, &g[k]);
        fprintf(fp, ": peak %s%s%s</title><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", b,
                g[k].b - g[k].a > 1 ? " (the highest)" : "", oom ? ", OUT OF MEMORY" : "", left - 8, y + row - 4);
        group_label(fp, j, &g[k]);
        fprintf(fp, "</text><rect x=\"%.0f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"/>"
                    "<text x=\"%.2f\" y=\"%.1f\">%s</text></g>\n",
                left, y + 2, w, row - 3, over ? "#d62728" : "#72b7b2", left + w + 4, y + row - 4, b);
    }
    if (p->total_mem) {
        double x = left + width * (double)p->total_mem / (double)top;
        sim_fmt_bytes(b, sizeof b, p->total_mem);
        fprintf(fp, "<line x1=\"%.2f\" y1=\"0\" x2=\"%.2f\" y2=\"%.0f\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"/>"
                    "<text x=\"%.2f\" y=\"%.0f\" text-anchor=\"end\" style=\"fill:#d62728\">capacity %s</text>\n",
                x, x, h - 18, x, h - 6, b);
    }
    fputs("</svg>\n", fp);
}

static void write_comms(FILE *fp, const struct sim_page *p)
{
    const struct sim_job *j = p->j;
    const struct sim_details *d = p->d;
    fputs("<h2>Communication per communicator</h2>\n", fp);
    if (!d->ncomms) {
        fputs("<p class=\"note\">No collective or send/recv in the steady iterations.</p>\n", fp);
        return;
    }
    fputs("<table id=\"comms\"><tr><th>communicator</th><th>size</th><th>nodes</th><th>calls / iteration</th>"
          "<th>time / iteration</th><th>of the iteration</th><th>most time in</th></tr>\n", fp);
    for (uint32_t k = 0; k < d->ncomms && k < HTML_COMMS; k++) {
        const struct sim_comm_use *c = &d->comms[k];
        const struct sim_comm *cm = &j->comms[c->comm];
        fprintf(fp, "<tr data-comm=\"0x%" PRIx64 "\" data-time-s=\"%.9g\"><td>0x%" PRIx64 "</td><td class=\"num\">%d</td>"
                    "<td class=\"num\">%d</td><td class=\"num\">%.1f</td>", cm->id, c->time_s, cm->id, cm->nranks,
                cm->nnodes, c->ops);
        time_cell(fp, c->time_s);
        fprintf(fp, "<td class=\"num\">%.1f%%</td><td class=\"name\">", d->iteration_s > 0 ? 100 * c->time_s / d->iteration_s : 0);
        esc(fp, sim_name(j, c->top_name));
        fputs("</td></tr>\n", fp);
    }
    fputs("</table>\n", fp);
    if (d->ncomms > HTML_COMMS)
        fprintf(fp, "<p class=\"note\">The %d communicators with the most time; %u more in report.json.</p>\n",
                HTML_COMMS, d->ncomms - HTML_COMMS);
    fputs("<p class=\"note\">Time per iteration is the mean over the ranks that call on the communicator, "
          "waiting for peers included.</p>\n", fp);
}

static void write_ops(FILE *fp, const struct sim_page *p)
{
    const struct sim_job *j = p->j;
    const struct sim_details *d = p->d;
    fputs("<h2>Slowest ops</h2>\n<table id=\"ops\"><tr><th>op</th><th>kind</th><th>calls / iteration</th>"
          "<th>time / iteration</th><th>of the iteration</th><th>longest call</th><th>on rank</th></tr>\n", fp);
    for (int k = 0; k < d->nops; k++) {
        const struct sim_op_use *o = &d->ops[k];
        fprintf(fp, "<tr data-time-s=\"%.9g\"><td class=\"name\" title=\"", o->time_s);
        esc(fp, sim_name(j, o->name));
        fputs("\">", fp);
        esc(fp, sim_name(j, o->name));
        fprintf(fp, "</td><td>%s</td><td class=\"num\">%.1f</td>", sim_op_use_kind(o), o->count);
        time_cell(fp, o->time_s);
        fprintf(fp, "<td class=\"num\">%.1f%%</td>", d->iteration_s > 0 ? 100 * o->time_s / d->iteration_s : 0);
        time_cell(fp, o->max_s);
        fprintf(fp, "<td class=\"num\">%d</td></tr>\n", o->max_rank);
    }
    fputs("</table>\n<p class=\"note\">Device time per iteration, the mean over ranks.</p>\n", fp);
}

static int tl_class(const struct sim_op *o)
{
    switch (o->kind) {
    case SK_KERNEL:
    case SK_HOST_FUNC: return 0;
    case SK_COLL:
    case SK_P2P: return 1;
    case SK_COPY: return 2;
    default: return -1;
    }
}

/* A bar being drawn in a lane: ops merged while they are too thin to see. */
struct tl_run {
    double x0, x1, busy_ns;
    int cls, count;
    uint32_t name;
};

static void tl_flush(FILE *fp, const struct sim_job *j, struct tl_run *r, double y)
{
    if (!r->count)
        return;
    char t[32];
    sim_fmt_time(t, sizeof t, r->busy_ns / 1e9);
    fprintf(fp, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\"><title>",
            r->x0, y + 2, MAYA_MAX(r->x1 - r->x0, 0.5), TL_LANE_H - 4, class_colors[r->cls]);
    if (r->count > 1)
        fprintf(fp, "%d ops, %s busy; first: ", r->count, t);
    esc(fp, sim_name(j, r->name));
    if (r->count == 1)
        fprintf(fp, ": %s", t);
    fputs("</title></rect>\n", fp);
    r->count = 0;
}

static int pick_ranks(const struct sim_job *j, const struct sim_details *d, int *pick)
{
    int n = 0;
    if (j->nranks <= TL_RANKS) {
        for (int i = 0; i < j->nranks; i++)
            pick[n++] = i;
        return n;
    }
    int lo, hi;
    extremes(j, d, &lo, &hi);
    int want[TL_RANKS] = { 0, hi, lo, j->nranks - 1 };
    for (int k = 0; k < TL_RANKS; k++) {
        int dup = 0;
        for (int m = 0; m < n; m++)
            dup |= pick[m] == want[k];
        if (!dup)
            pick[n++] = want[k];
    }
    return n;
}

static int write_timeline(FILE *fp, const struct sim_page *p)
{
    const struct sim_job *j = p->j;
    uint64_t w0, w1;
    int which = sim_picture_window(j, &w0, &w1);
    double span = (double)(w1 - w0);
    int pick[TL_RANKS];
    int np = pick_ranks(j, p->d, pick);
    /* lanes: the picked ranks' streams with device work in the window */
    uint32_t lane_stream[TL_LANES];
    int lane_rank[TL_LANES];
    uint32_t nl = 0;
    uint32_t *lane_of = calloc(MAYA_MAX(j->nstreams, 1), sizeof *lane_of); /* lane + 1 */
    if (!lane_of)
        return maya_error("out of memory drawing the timeline");
    for (int k = 0; k < np; k++) {
        const struct sim_rank *r = &j->ranks[pick[k]];
        for (uint64_t i = 0; i < r->nops; i++) {
            const struct sim_op *o = &r->ops[i];
            const struct sim_time *t = &r->times[i];
            if (o->stream && tl_class(o) >= 0 && t->dev_end > w0 && t->dev_start < w1)
                lane_of[o->stream - 1] = UINT32_MAX;
        }
        for (uint32_t s = 0; s < r->nstreams; s++)
            if (lane_of[r->streams[s]] == UINT32_MAX) {
                if (nl < TL_LANES) {
                    lane_stream[nl] = r->streams[s];
                    lane_rank[nl] = pick[k];
                    lane_of[r->streams[s]] = ++nl;
                } else {
                    lane_of[r->streams[s]] = 0;
                }
            }
    }
    char t[32];
    sim_fmt_time(t, sizeof t, span / 1e9);
    fprintf(fp, "<h2>Timeline</h2>\n<p class=\"note\">Iteration %d of %d (%s)%s, ", which, MAYA_MAX(j->niter, 1), t,
            which == 2 ? ", the first steady one" : "");
    if (np < j->nranks) {
        fputs("ranks ", fp);
        for (int k = 0; k < np; k++)
            fprintf(fp, "%s%d", k ? ", " : "", j->ranks[pick[k]].rank);
        fprintf(fp, " of %d (the first, the one with the most device work, the one with the least, the last)", j->nranks);
    } else {
        fputs("every rank", fp);
    }
    fputs(". Scroll to zoom, drag to pan, double-click to reset; hover a bar for its op. "
          "timeline.json holds every op (open it in ui.perfetto.dev).</p>\n", fp);
    fputs("<div id=\"tl-controls\"><button id=\"tl-in\">zoom in</button><button id=\"tl-out\">zoom out</button>"
          "<button id=\"tl-reset\">reset</button></div>\n", fp);
    double top = 24, h = nl * TL_LANE_H;
    fprintf(fp, "<svg id=\"timeline\" width=\"%.0f\" height=\"%.0f\" data-span-ns=\"%.0f\" data-lanes=\"%u\">\n",
            TL_LEFT + TL_PLOT + 20, top + h + 8, span, nl);
    for (uint32_t l = 0; l < nl; l++) {
        const struct sim_stream *st = &j->streams[lane_stream[l]];
        double y = top + l * TL_LANE_H;
        if (lane_rank[l] % 2 == 0)
            fprintf(fp, "<rect x=\"0\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#f4f4f4\"/>", y,
                    TL_LEFT + TL_PLOT, TL_LANE_H);
        fprintf(fp, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">rank %d ", TL_LEFT - 8, y + TL_LANE_H - 3,
                j->ranks[lane_rank[l]].rank);
        if (st->id >= UINT64_MAX - 64 || (st->flags & MAYA_STREAM_LEGACY))
            fputs("default stream", fp);
        else
            fprintf(fp, "stream %llu", (unsigned long long)st->id);
        fprintf(fp, " (dev %d)</text>\n", st->device);
    }
    fputs("<g id=\"tl-ticks\"></g>\n", fp);
    fprintf(fp, "<svg id=\"tl-plot\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                "preserveAspectRatio=\"none\">\n", TL_LEFT, top, TL_PLOT, MAYA_MAX(h, 1), TL_UNITS, MAYA_MAX(h, 1));
    struct tl_run runs[TL_LANES];
    memset(runs, 0, sizeof runs);
    for (int k = 0; k < np; k++) {
        const struct sim_rank *r = &j->ranks[pick[k]];
        for (uint64_t i = 0; i < r->nops; i++) {
            const struct sim_op *o = &r->ops[i];
            const struct sim_time *tm = &r->times[i];
            int cls = tl_class(o);
            if (cls < 0 || !o->stream || tm->dev_end <= w0 || tm->dev_start >= w1 || !lane_of[o->stream - 1])
                continue;
            uint32_t l = lane_of[o->stream - 1] - 1;
            double a = (double)(MAYA_MAX(tm->dev_start, w0) - w0), b = (double)(MAYA_MIN(tm->dev_end, w1) - w0);
            double x0 = TL_UNITS * a / span, x1 = TL_UNITS * b / span;
            struct tl_run *ru = &runs[l];
            int thin = x1 - x0 < 1 || ru->x1 - ru->x0 < 1;
            if (ru->count && (cls != ru->cls || x0 > ru->x1 + 0.5 || !thin))
                tl_flush(fp, j, ru, l * TL_LANE_H);
            if (!ru->count)
                *ru = (struct tl_run){ x0, x1, 0, cls, 0, o->name };
            ru->x1 = MAYA_MAX(ru->x1, x1);
            ru->count++;
            ru->busy_ns += b - a;
        }
    }
    for (uint32_t l = 0; l < nl; l++)
        tl_flush(fp, j, &runs[l], l * TL_LANE_H);
    fputs("</svg>\n</svg>\n<div class=\"legend\">", fp);
    for (int c = 0; c < 3; c++)
        fprintf(fp, "<span style=\"background:%s\"></span>%s", class_colors[c],
                c == 0 ? "compute" : c == 1 ? "communication" : "copies");
    fputs("</div>\n", fp);
    free(lane_of);
    return 0;
}

/* Zoom and pan by the inner SVG's viewBox (x only), and time ticks redrawn
 * for what is in view. */
static const char tl_script[] =
    "<script>\n(function(){\n"
    "var s=document.getElementById('tl-plot');if(!s)return;\n"
    "var W=10000,H=s.viewBox.baseVal.height,span=+document.getElementById('timeline').dataset.spanNs,vx=0,vw=W;\n"
    "var NS='http://www.w3.org/2000/svg',L=190,P=800;\n"
    "function fmt(ns){return ns>=1e9?(ns/1e9).toPrecision(3)+' s':ns>=1e6?(ns/1e6).toPrecision(3)+' ms':"
    "(ns/1e3).toPrecision(3)+' us';}\n"
    "function ticks(){var g=document.getElementById('tl-ticks');while(g.firstChild)g.removeChild(g.firstChild);\n"
    " var t0=vx/W*span,t1=(vx+vw)/W*span,raw=(t1-t0)/8,m=Math.pow(10,Math.floor(Math.log10(raw))),st=m;\n"
    " if(raw/m>5)st=10*m;else if(raw/m>2)st=5*m;else if(raw/m>1)st=2*m;\n"
    " for(var t=Math.ceil(t0/st)*st;t<=t1;t+=st){var x=L+P*(t/span*W-vx)/vw;\n"
    "  var ln=document.createElementNS(NS,'line');ln.setAttribute('x1',x);ln.setAttribute('x2',x);"
    "ln.setAttribute('y1',18);ln.setAttribute('y2',24+H);ln.setAttribute('stroke','#ccc');g.appendChild(ln);\n"
    "  var tx=document.createElementNS(NS,'text');tx.setAttribute('x',x);tx.setAttribute('y',14);"
    "tx.setAttribute('text-anchor','middle');tx.textContent=t==0?'0':fmt(t);g.appendChild(tx);}}\n"
    "function set(){vw=Math.min(W,Math.max(W/5000,vw));vx=Math.min(W-vw,Math.max(0,vx));"
    "s.setAttribute('viewBox',vx+' 0 '+vw+' '+H);ticks();}\n"
    "function zoom(f,k){var c=vx+f*vw;vw*=k;vw=Math.min(W,Math.max(W/5000,vw));vx=c-f*vw;set();}\n"
    "s.addEventListener('wheel',function(e){e.preventDefault();var r=s.getBoundingClientRect();"
    "zoom((e.clientX-r.left)/r.width,e.deltaY<0?0.8:1.25);},{passive:false});\n"
    "var drag=null;s.addEventListener('mousedown',function(e){drag={x:e.clientX,vx:vx};});\n"
    "window.addEventListener('mouseup',function(){drag=null;});\n"
    "window.addEventListener('mousemove',function(e){if(!drag)return;var r=s.getBoundingClientRect();"
    "vx=drag.vx-(e.clientX-drag.x)/r.width*vw;set();});\n"
    "s.addEventListener('dblclick',function(){vx=0;vw=W;set();});\n"
    "document.getElementById('tl-in').onclick=function(){zoom(0.5,0.5);};\n"
    "document.getElementById('tl-out').onclick=function(){zoom(0.5,2);};\n"
    "document.getElementById('tl-reset').onclick=function(){vx=0;vw=W;set();};\n"
    "set();})();\n</script>\n";

int sim_write_html(const struct sim_page *p, const char *path)
{
    const struct sim_report_info *in = p->in;
    const struct maya_run_desc *d = in->desc;
    struct maya_atomic_file af;
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    FILE *fp = af.fp;
    write_head(fp);
    fputs("<h1>maya report</h1>\n", fp);
    if (d) {
        fputs("<p class=\"sub\">workload <code>", fp);
        esc(fp, d->command[0] ? d->command : "(unknown)");
        fprintf(fp, "</code>, launched by %s: %d process%s</p>\n", d->launcher[0] ? d->launcher : "?", d->nprocs,
                d->nprocs == 1 ? "" : "es");
    }
    fprintf(fp, "<p class=\"sub\">target %d x ", p->gpus);
    esc(fp, in->gpu ? in->gpu->key : p->j ? p->j->gpu : d ? d->gpu : "?");
    if (in->gpu) {
        fputs(" (", fp);
        esc(fp, in->gpu->prop.name);
        fputs(")", fp);
    }
    if (in->cluster) {
        fprintf(fp, " on %d node%s of %d, cluster ", MAYA_MAX(in->cluster->nodes, 1), in->cluster->nodes == 1 ? "" : "s",
                in->cluster->gpus_per_node);
        esc(fp, in->cluster->key);
    }
    fputs("</p>\n", fp);
    write_headline(fp, p);
    write_figures(fp, p);
    int rc = 0;
    if (p->j && p->j->nranks > 0) {
        struct group g[HTML_BARS + 2];
        int ng = make_groups(p->j, p->d, g);
        if (p->replayed && p->d)
            write_breakdown(fp, p, g, ng);
        write_memory(fp, p, g, ng);
        if (p->replayed && p->d) {
            write_comms(fp, p);
            write_ops(fp, p);
            rc = write_timeline(fp, p);
            fputs(tl_script, fp);
        }
    }
    fprintf(fp, "<p class=\"note\">maya %s. The same figures: report.txt, report.json.</p>\n</body></html>\n",
            MAYA_VERSION);
    if (rc < 0) {
        maya_atomic_abort(&af);
        return -1;
    }
    return maya_atomic_commit(&af);
}

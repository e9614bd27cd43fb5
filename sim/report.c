/* The report: report.txt for people, report.json for programs (fields in
 * docs/run-dir.md), and the timelines (timeline.c, svg.c). */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maya/common.h"
#include "maya/hwspec.h"
#include "maya/progress.h"
#include "maya/run_elim.h"

/* ---- what the report is made of ---- */

struct rank_row {
    int rank;
    int node;
    int in_job;                 /* the job trace has it */
    uint64_t peak;
    int oom;
    const struct maya_run_proc *proc;  /* the process that ran it, or NULL */
    int proc_index;
    int job_index;              /* index in j->ranks, or -1 */
};

struct facts {
    const struct sim_job *j;
    struct sim_view view;       /* what the timelines show (when written) */
    int timelines;              /* written */
    uint64_t timeline_bytes, svg_bytes;
    const struct sim_report_info *in;
    int replayed;
    struct sim_summary s;
    struct rank_row *rows;
    int nrows;
    int failed;                 /* processes that failed on their own, or hung */
    int not_ok;                 /* processes that did not exit 0, for whatever reason */
    char headline[1024];        /* the first cause of the run's end; "" if it ended well */
    uint64_t total_mem;         /* the GPU's memory */
    int gpus;                   /* GPUs the job drives (a process may drive several) */
    struct sim_details det;     /* when replayed */
    char layout[256];           /* the replicas layout --dedup's classes show; "" none */
};

/* The clock the ranks' host gaps were measured on (MAYA_HOST_CLOCK). */
static const char *host_clock_name(const struct sim_job *j)
{
    if (j->host_cpu_ranks == j->nranks)
        return "cpu";
    if (j->host_active_ranks == j->nranks)
        return "active";
    return j->host_cpu_ranks == 0 && j->host_active_ranks == 0 ? "wall" : "mixed";
}

static const struct maya_run_proc *proc_of(const struct maya_run_desc *d, int rank, int *index)
{
    if (!d || d->nprocs <= 0)
        return NULL;
    /* one process for the whole node (maya run -n 1): its status is every rank's */
    int i = d->nprocs == 1 ? 0 : rank;
    if (i < 0 || i >= d->nprocs)
        return NULL;
    *index = i;
    return &d->procs[i];
}

static int gather(struct facts *f, const struct sim_job *j, const struct sim_report_info *in)
{
    memset(f, 0, sizeof *f);
    f->j = j;
    f->in = in;
    f->replayed = j && j->run_ok;
    if (j)
        sim_summarize(j, &f->s);
    const struct maya_run_desc *d = in->desc;
    int n = j ? j->nranks : 0;
    int maxrank = -1;
    for (int i = 0; j && i < j->nranks; i++)
        maxrank = MAYA_MAX(maxrank, j->ranks[i].rank);
    if (d && d->nprocs > 1)
        maxrank = MAYA_MAX(maxrank, d->nprocs - 1);
    else if (d && d->nprocs == 1 && maxrank < 0)
        maxrank = 0;
    f->rows = calloc((size_t)MAYA_MAX(maxrank + 1, 1), sizeof *f->rows);
    if (!f->rows)
        return maya_error("out of memory writing the report");
    f->nrows = maxrank + 1;
    for (int r = 0; r < f->nrows; r++) {
        f->rows[r].rank = r;
        f->rows[r].node = -1;
        f->rows[r].job_index = -1;
        f->rows[r].proc = proc_of(d, r, &f->rows[r].proc_index);
        if (f->rows[r].proc && f->rows[r].proc->node >= 0)
            f->rows[r].node = f->rows[r].proc->node;
    }
    for (int i = 0; i < n; i++) {
        const struct sim_rank *r = &j->ranks[i];
        if (r->rank < 0 || r->rank >= f->nrows)
            continue;
        struct rank_row *row = &f->rows[r->rank];
        row->in_job = 1;
        row->job_index = i;
        row->node = r->node;
        row->peak = r->peak_bytes;
        row->oom = r->oom;
    }
    for (int i = 0; d && i < d->nprocs; i++) {
        const struct maya_run_proc *p = &d->procs[i];
        f->not_ok += !maya_run_proc_ok(p);
        f->failed += !maya_run_proc_ok(p) && p->end != MAYA_RUN_UNKNOWN &&
                     (!p->note[0] || !strncmp(p->note, "hung:", 5));
    }
    if (in->gpu)
        f->total_mem = in->gpu->prop.totalGlobalMem;
    f->gpus = j ? sim_job_gpus(j) : 0;
    if (f->gpus <= 0)
        f->gpus = d ? d->gpu_count : j ? j->nranks : 0;
    if (f->replayed && sim_details_build(j, &f->det) < 0) {
        free(f->rows);
        return -1;
    }
    return 0;
}

static void facts_free(struct facts *f)
{
    free(f->rows);
    sim_details_free(&f->det);
}

/* The last lines of a file (at most max_bytes), malloc'd; NULL if none. */
static char *file_tail(const char *path, size_t max_bytes, int max_lines)
{
    char *data;
    size_t len;
    if (access(path, R_OK) != 0 || maya_read_file(path, &data, &len) < 0)
        return NULL;
    while (len && data[len - 1] == '\n')
        data[--len] = 0;
    size_t start = len > max_bytes ? len - max_bytes : 0;
    int lines = 0;
    for (size_t i = len; i > start; i--)
        if (data[i - 1] == '\n' && ++lines >= max_lines) {
            start = i;
            break;
        }
    memmove(data, data + start, len - start + 1);
    if (!data[0]) {
        free(data);
        return NULL;
    }
    return data;
}

static char *stderr_tail(const char *dir, int proc)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/logs/rank-%d.err", dir, proc);
    return file_tail(path, 2048, 12);
}

/* ---- report.txt ---- */

static void line_time(FILE *fp, const char *what, double s, double of)
{
    char t[32];
    sim_fmt_time(t, sizeof t, s);
    if (of > 0)
        fprintf(fp, "  %-26s %12s  %5.1f%%\n", what, t, 100 * s / of);
    else
        fprintf(fp, "  %-26s %12s\n", what, t);
}

/* The last line of a failed process's stderr that says something (a
 * Python traceback ends with the exception: "ValueError: ..."). */
static void last_words(const char *dir, int proc, char *buf, size_t size)
{
    buf[0] = 0;
    char *tail = dir ? stderr_tail(dir, proc) : NULL;
    if (!tail)
        return;
    for (char *l = strtok(tail, "\n"); l; l = strtok(NULL, "\n")) {
        while (*l == ' ' || *l == '\t')
            l++;
        if (*l && strncmp(l, "maya-emu:", 9) != 0)
            snprintf(buf, size, "%s", l);
    }
    free(tail);
}

/* What ended the run first: the launcher's cause (run.conf), else the first
 * process that failed on its own, with the last words of its stderr. */
static void headline(struct facts *f, const char *dir)
{
    const struct maya_run_desc *d = f->in->desc;
    f->headline[0] = 0;
    if (!d || (!f->not_ok && strcmp(d->state, "running")))
        return;
    int first = -1;
    for (int i = 0; i < d->nprocs && first < 0; i++)
        if (!maya_run_proc_ok(&d->procs[i]) && d->procs[i].end != MAYA_RUN_UNKNOWN && !d->procs[i].note[0])
            first = i;
    char cause[600] = "", words[300] = "";
    if (d->cause[0])
        snprintf(cause, sizeof cause, "%s", d->cause);
    else if (!strcmp(d->state, "running")) {
        int unknown = 0;
        for (int i = 0; i < d->nprocs; i++)
            unknown += d->procs[i].end == MAYA_RUN_UNKNOWN;
        int elsewhere = d->launcher_host[0] && maya_run_desc_live(d) < 0;
        snprintf(cause, sizeof cause, "the launcher (%s, pid %ld%s%s) %s: "
                 "how %d of %d processes ended is not known; their traces are replayed as far as they go",
                 d->launcher[0] ? d->launcher : "?", d->launcher_pid, elsewhere ? " on " : "",
                 elsewhere ? d->launcher_host : "",
                 elsewhere ? "has not recorded the run's end (it was killed, or still runs there)"
                           : "ended before the ranks did (it was killed?)",
                 unknown, d->nprocs);
    } else if (first >= 0) {
        char st[96];
        maya_run_proc_status(&d->procs[first], st, sizeof st);
        snprintf(cause, sizeof cause, "rank %d ended with %s", first, st);
    }
    if (first >= 0)
        last_words(dir, first, words, sizeof words);
    snprintf(f->headline, sizeof f->headline, "%s%s%s", cause, words[0] ? ": " : "", words);
}

/* The replicas layout the classes of duplicate-rank elimination show
 * (DIR/traces/dedup-classes), for a larger run (maya run --replicas-like). */
static void find_layout(struct facts *f, const char *dir)
{
    char traces[PATH_MAX];
    struct maya_replicas r;
    int world;
    f->layout[0] = 0;
    if (dir && maya_snprintf(traces, sizeof traces, "%s/traces", dir) == 0 &&
        run_elim_layout_read(traces, &r, &world) > 0 && r.ndims > 0)
        maya_replicas_format(&r, f->layout, sizeof f->layout);
}

static void write_status(FILE *fp, const struct facts *f, const char *dir, int with_tails)
{
    const struct maya_run_desc *d = f->in->desc;
    if (!d) {
        fprintf(fp, "status     (no run description: exit statuses unknown)\n");
        return;
    }
    if (!f->not_ok && strcmp(d->state, "running")) {
        if (f->j && f->j->incomplete_ranks) {
            fprintf(fp, "status     INCOMPLETE: all %d process%s exited 0, but %d rank trace%s cut short: %s\n",
                    d->nprocs, d->nprocs == 1 ? "" : "es", f->j->incomplete_ranks,
                    f->j->incomplete_ranks == 1 ? " was" : "s were",
                    d->cause[0] ? d->cause : "their writes failed (see logs/rank-N.err)");
            return;
        }
        int elim = 0, repl = 0;
        for (int i = 0; i < d->nprocs; i++) {
            elim += !strncmp(d->procs[i].note, "eliminated", 10);
            repl += !strncmp(d->procs[i].note, "a replica", 9);
        }
        fprintf(fp, "status     all %d process%s exited 0", d->nprocs, d->nprocs == 1 ? "" : "es");
        if (elim)
            fprintf(fp, "; %d of them eliminated as duplicates", elim);
        if (repl)
            fprintf(fp, "%s %d replicas not emulated (--replicas)", elim ? " and" : ";", repl);
        if (elim || repl)
            fprintf(fp, ", rebuilt from the others (docs/dedup.md)");
        fputc('\n', fp);
        return;
    }
    if (!strcmp(d->state, "running"))
        fprintf(fp, "status     CUT SHORT: %s\n", f->headline);
    else if (f->failed)
        fprintf(fp, "status     FAILED: %d of %d process%s failed; first: %s\n", f->failed, d->nprocs,
                d->nprocs == 1 ? "" : "es", f->headline);
    else
        fprintf(fp, "status     STOPPED: %s\n", f->headline[0] ? f->headline : "the ranks were stopped");
    for (int i = 0; i < d->nprocs; i++) {
        const struct maya_run_proc *p = &d->procs[i];
        char st[96];
        maya_run_proc_status(p, st, sizeof st);
        if (maya_run_proc_ok(p))
            continue;
        if (p->end == MAYA_RUN_UNKNOWN) {
            fprintf(fp, "           rank %d: how it ended was not recorded\n", i);
            continue;
        }
        if (p->note[0]) {
            fprintf(fp, "           rank %d: %s (%s)\n", i, st, p->note);
            continue;
        }
        fprintf(fp, "           rank %d failed: %s\n", i, st);
        char *tail = with_tails ? stderr_tail(dir, i) : NULL;
        if (tail) {
            fprintf(fp, "           its stderr (logs/rank-%d.err) ends with:\n", i);
            for (char *l = strtok(tail, "\n"); l; l = strtok(NULL, "\n"))
                fprintf(fp, "             | %s\n", l);
            free(tail);
        }
    }
}

/* Small host reads (device-to-host copies, .item()) of device bytes that
 * were never made real: what the program saw there is not what a GPU would
 * have computed, so a check on it can fail here and not on the GPU. Named
 * by what would have had to run (kernels by name), most reads first. */
static void print_values_not_computed(FILE *fp, const struct sim_job *j, const struct sim_summary *s)
{
    fprintf(fp, "values not computed: ");
    if (!s->values_not_computed) {
        fprintf(fp, "none (every small read by the host saw real values)\n");
        return;
    }
    fprintf(fp, "%" PRIu64 " small read%s by the host saw device bytes that were never computed; "
                "a check on them can fail here and not on a GPU.\n  what would have had to run: ",
            s->values_not_computed, s->values_not_computed == 1 ? "" : "s");
    /* most reads first (ties by name id), at most 10 names: O(10 names) */
    uint64_t last = UINT64_MAX;
    uint32_t last_id = 0;
    int shown = 0, more = 0;
    for (;;) {
        uint32_t best = 0;
        for (uint32_t i = 0; i < j->nnames; i++) {
            uint64_t c = j->unreal_by_name[i];
            if (!c || c > last || (c == last && i + 1 <= last_id))
                continue;
            if (!best || c > j->unreal_by_name[best - 1])
                best = i + 1;
        }
        if (!best)
            break;
        if (shown == 10) {
            for (uint32_t i = 0; i < j->nnames; i++) {
                uint64_t c = j->unreal_by_name[i];
                more += c && (c < last || (c == last && i + 1 > last_id));
            }
            break;
        }
        fprintf(fp, "%s%s x %" PRIu64, shown++ ? ", " : "", j->names[best - 1], j->unreal_by_name[best - 1]);
        last = j->unreal_by_name[best - 1];
        last_id = best;
    }
    if (more)
        fprintf(fp, " and %d more (report.json lists all)", more);
    fprintf(fp, "\n");
}

/* The MAYA_VALUES declarations that answered reads, with how many. */
static void print_declared(FILE *fp, const struct sim_job *j)
{
    int any = 0;
    for (uint32_t i = 0; i < j->nnames; i++)
        if (j->declared_by_name[i])
            fprintf(fp, "%s%s (%" PRIu64 " read%s)", any++ ? ", " : "declared   values (MAYA_VALUES): ",
                    j->names[i], j->declared_by_name[i], j->declared_by_name[i] == 1 ? "" : "s");
    if (any)
        fprintf(fp, "; the host was given these instead of values not computed\n");
}

/* The kernels priced by the fallback rule, most launched first: the first
 * NO_CODE_SHOWN of them, each name cut to NO_CODE_NAME characters (a
 * PyTorch kernel's demangled name runs to thousands); report.json has them
 * all, whole. Costs NO_CODE_SHOWN passes over the names. */
enum { NO_CODE_SHOWN = 10, NO_CODE_NAME = 100 };

static void write_no_code_kernels(FILE *fp, const struct sim_job *j)
{
    uint32_t shown[NO_CODE_SHOWN];
    int nshown = 0, kinds = 0;
    for (uint32_t i = 0; i < j->nnames; i++)
        kinds += j->no_code_by_name[i] != 0;
    while (nshown < NO_CODE_SHOWN && nshown < kinds) {
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < j->nnames; i++) {
            if (!j->no_code_by_name[i])
                continue;
            int taken = 0;
            for (int k = 0; k < nshown && !taken; k++)
                taken = shown[k] == i;
            if (!taken && (best == UINT32_MAX || j->no_code_by_name[i] > j->no_code_by_name[best]))
                best = i;
        }
        shown[nshown++] = best;
    }
    for (int k = 0; k < nshown; k++) {
        const char *name = j->names[shown[k]];
        fprintf(fp, "%s%.*s%s x %" PRIu64, k ? ", " : " ", NO_CODE_NAME, name,
                strlen(name) > NO_CODE_NAME ? "..." : "", j->no_code_by_name[shown[k]]);
    }
    if (kinds > nshown)
        fprintf(fp, ", and %d more kernels (report.json: kernels.without_code_by_name)", kinds - nshown);
}

static void write_txt(FILE *fp, const struct facts *f, const char *dir)
{
    const struct sim_job *j = f->j;
    const struct sim_report_info *in = f->in;
    const struct maya_run_desc *d = in->desc;
    const struct sim_summary *s = &f->s;
    char a[64], b[64];
    fprintf(fp, "maya report: %s\n\n", dir);
    if (d) {
        fprintf(fp, "workload   %s\n", d->command[0] ? d->command : "(unknown)");
        int never = 0; /* replicas maya run stood in for (--replicas, docs/dedup.md) */
        for (int i = 0; i < d->nprocs; i++)
            never += strstr(d->procs[i].note, "never started") != NULL;
        fprintf(fp, "launched   by %s: %d process%s", d->launcher[0] ? d->launcher : "?", d->nprocs,
                d->nprocs == 1 ? "" : "es");
        if (never)
            fprintf(fp, " (%d of them replicas never started)", never);
        fprintf(fp, ", %s .. %s (%.1f s on the CPUs)\n", d->start_time, d->end_time, d->wall_s);
    }
    const char *gpu_key = in->gpu ? in->gpu->key : j ? j->gpu : d ? d->gpu : "?";
    fprintf(fp, "target     %d x %s", f->gpus, gpu_key);
    if (in->gpu)
        fprintf(fp, " (%s)", in->gpu->prop.name);
    if (in->cluster)
        fprintf(fp, " on %d node%s of %d, cluster %s", MAYA_MAX(in->cluster->nodes, 1),
                in->cluster->nodes == 1 ? "" : "s", in->cluster->gpus_per_node, in->cluster->key);
    if (in->hardware)
        fprintf(fp, "\nhardware   %s", in->hardware);
    fprintf(fp, "\nranks      %d in the job trace", j ? j->nranks : 0);
    if (j && j->nranks)
        fprintf(fp, ", host gaps measured on the %s clock", host_clock_name(j));
    fprintf(fp, "\n");
    if (f->replayed && j->replayed_ranks < j->nranks)
        fprintf(fp, "replayed   %d of them: the other %d are replicas doing the same work, folded into those\n",
                j->replayed_ranks, j->nranks - j->replayed_ranks);
    if (f->replayed && j->fold_similar && j->replayed_ranks < j->nranks) {
        fprintf(fp, "           (--fold similar: they take their representatives' host gaps, whose totals "
                    "differed by up to %.1f%%", 100 * j->fold_gap_diff);
        if (j->fold_host_calls)
            fprintf(fp, ",\n            and host-only calls, up to %llu more or fewer", (unsigned long long)j->fold_host_calls);
        fprintf(fp, ")\n");
    }
    if (f->replayed && j->fold_note[0])
        fprintf(fp, "           (%s)\n", j->fold_note);
    if (f->layout[0])
        fprintf(fp, "same work  layout --replicas %s (the ranks --dedup found doing the same work); for a larger "
                "run of this program: maya run --replicas-like %s\n", f->layout, dir);
    if (f->replayed && j->fold_gaps_only)
        fprintf(fp, "           (%d rank%s the work of a rank on another node but for their host work, within "
                "%.0f%% in total: --fold similar can fold %s)\n", j->fold_gaps_only,
                j->fold_gaps_only == 1 ? " does" : "s do", 100 * SIM_FOLD_SIMILAR, j->fold_gaps_only == 1 ? "it" : "them");
    write_status(fp, f, dir, 1);
    if (in->error)
        fprintf(fp, "\nNOT SIMULATED: %s\n", in->error);
    else if ((f->not_ok || !strcmp(d ? d->state : "", "running")) && f->replayed)
        fprintf(fp, "\nThe workload %s: the figures below cover only what its ranks did before%s.\n",
                f->failed ? "failed" : "was stopped", j->cut_short ? " (the simulation stops where the first "
                "rank's trace ends)" : "");
    if (f->replayed) {
        int n;
        const double *it = sim_iteration_times(j, &n);
        sim_fmt_time(a, sizeof a, s->iteration_s);
        fprintf(fp, "\niteration  %s", a);
        if (n >= 2 && s->steady_iterations > 0) {
            sim_fmt_time(b, sizeof b, s->first_iteration_s);
            fprintf(fp, " (steady state: median of %d iteration%s; the first took %s)\n", s->steady_iterations,
                    s->steady_iterations == 1 ? "" : "s", b);
        } else if (n >= 2) {
            fprintf(fp, " (the first: every later one is partial)\n");
        } else {
            fprintf(fp, " (the whole run: no repeating iteration was found)\n");
        }
        if (j->marker[0])
            fprintf(fp, "found      %d iteration%s starting at each op or NVTX range matching \"%s\" "
                    "(a range's iteration ends with it)\n", n, n == 1 ? "" : "s", j->marker);
        else if (n >= 2)
            fprintf(fp, "found      %d iterations from the repeating sequence of ops (their sizes may vary)\n", n);
        else
            fprintf(fp, "found      no repeating sequence of ops (--iteration-marker names an op, kernel or "
                    "NVTX range)\n");
        if (n >= 2 && s->warmup_ops) {
            sim_fmt_time(b, sizeof b, s->warmup_emulation_s);
            fprintf(fp, "warm-up    %" PRIu64 " ops before the first iteration (set-up, compilation, autotuning), "
                    "in no iteration (the most on any rank):\n           %s of emulation on this machine "
                    "(%s clock), not predicted time\n", s->warmup_ops, b, host_clock_name(j));
        }
        if (n >= 2) {
            fprintf(fp, "left out   iteration 1 (warm-up: first allocations, copies, lazy compilation)");
            for (int k = 1; k < n; k++)
                if (!sim_iteration_steady(j, k))
                    fprintf(fp, ", %d (partial: fewer device ops than the others, or its trace ended early)", k + 1);
            fprintf(fp, "\n");
        }
        if (j->iterations_found > n)
            fprintf(fp, "kept       the first %d of %d iterations (--iterations)\n", n, j->iterations_found);
        for (int k = 0; k < n && k < 20; k++) {
            sim_fmt_time(a, sizeof a, it[k]);
            fprintf(fp, "  iteration %-4d %12s%s\n", k + 1, a, sim_iteration_steady(j, k) ? "" : "  (left out)");
        }
        if (n > 20)
            fprintf(fp, "  ... (%d more in report.json)\n", n - 20);
        sim_fmt_time(a, sizeof a, s->breakdown_iteration_s);
        fprintf(fp, "\nper iteration: %s, the mean of the %s over the ranks, spent as\n", a,
                n >= 2 && s->steady_iterations ? "steady iterations" : "iteration");
        double of = s->breakdown_iteration_s;
        line_time(fp, "compute", s->compute_s, of);
        line_time(fp, "communication, exposed", s->exposed_comm_s, of);
        line_time(fp, "copies, exposed", s->exposed_copy_s, of);
        line_time(fp, "idle", s->idle_s, of);
        sim_fmt_time(a, sizeof a, s->comm_s);
        sim_fmt_time(b, sizeof b, s->copy_s);
        fprintf(fp, "  (each where none above it runs: they add up; all communication %s, all host<->device\n"
                "  copies %s, overlapped or not)\n", a, b);
        sim_fmt_time(a, sizeof a, s->host_work_s);
        fprintf(fp, "host       %s of host work per iteration (%.0f%%), measured on this machine's CPUs (%s clock)",
                a, of > 0 ? 100 * s->host_work_s / of : 0, host_clock_name(j));
        if (in->cluster && in->cluster->host_speed > 0 && in->cluster->host_speed != 1)
            fprintf(fp, ", divided by the cluster's host_speed %g", in->cluster->host_speed);
        if (s->host_bound)
            fprintf(fp, ":\n           host-bound: the host, not the GPUs, sets the iteration time; a faster or "
                    "slower host changes it\n");
        else
            fprintf(fp, "\n");
        if (s->mfu >= 0)
            fprintf(fp, "MFU        %.1f%% (FLOPs of GEMMs, convolutions and attention over the GPUs' dense peak)\n",
                    100 * s->mfu);
        else
            fprintf(fp, "MFU        unknown (no GEMM, convolution or attention FLOPs were recorded)\n");
    }
    if (j) {
        int worst = -1;
        uint64_t peak = 0;
        int oom = 0;
        for (int r = 0; r < f->nrows; r++) {
            if (f->rows[r].in_job && f->rows[r].peak >= peak) {
                peak = f->rows[r].peak;
                worst = r;
            }
            oom |= f->rows[r].oom;
        }
        sim_fmt_bytes(a, sizeof a, peak);
        sim_fmt_bytes(b, sizeof b, f->total_mem);
        fprintf(fp, "\nmemory     peak %s", a);
        if (f->total_mem)
            fprintf(fp, " of %s (%.0f%%)", b, 100.0 * (double)peak / (double)f->total_mem);
        if (worst >= 0)
            fprintf(fp, " on rank %d", worst);
        if (!oom && f->total_mem && peak > f->total_mem)
            fprintf(fp, "; MORE THAN THIS GPU HOLDS: it would run out of memory (the run, emulated on a "
                        "GPU with more, did not)\n");
        else
            fprintf(fp, "; %s\n", !oom ? "no rank ran out of memory"
                                   : in->gpu_overridden ? "OUT OF MEMORY on some rank (on the GPU the run emulated)"
                                   : "OUT OF MEMORY on some rank");
        for (int r = 0; r < f->nrows && f->nrows <= 64; r++) {
            if (!f->rows[r].in_job)
                continue;
            sim_fmt_bytes(a, sizeof a, f->rows[r].peak);
            fprintf(fp, "  rank %-5d %12s%s\n", r, a, f->rows[r].oom ? "  OUT OF MEMORY" : "");
        }
        fprintf(fp, "\nunsupported calls: ");
        int any = 0;
        for (uint32_t i = 0; i < j->nnames; i++)
            if (j->unsupported_by_name[i]) {
                fprintf(fp, "%s%s x %" PRIu64, any++ ? ", " : "", j->names[i], j->unsupported_by_name[i]);
            }
        fprintf(fp, "%s\n", any ? " (they returned not-supported errors)" : "none");
        print_values_not_computed(fp, j, s);
        print_declared(fp, j);
        fprintf(fp, "kernels    %" PRIu64 " launches priced from their code", s->kernel_launches - s->no_code_launches);
        if (s->no_code_launches) {
            fprintf(fp, "; %" PRIu64 " without code, priced by the fallback rule (docs/kernel-cost.md):",
                    s->no_code_launches);
            write_no_code_kernels(fp, j);
            if (s->sass_unread_launches)
                fprintf(fp, "; %" PRIu64 " of them have SASS only and nvdisasm was not found when the job ran: "
                        MAYA_NVDISASM_REMEDY ", and run the job again to price them from their code",
                        s->sass_unread_launches);
        }
        fprintf(fp, "\n");
        fprintf(fp, "estimator  %s", in->estimator && in->estimator[0] ? in->estimator : "default");
        if (s->extrapolated_ops)
            fprintf(fp, "; %" PRIu64 " ops outside the learned models' data (analytical fallback)", s->extrapolated_ops);
        fprintf(fp, "\n");
        if (in->models)
            fprintf(fp, "models     %s\n", in->models);
        if (in->options)
            fprintf(fp, "options    %s\n", in->options);
        if (f->replayed && s->replayed_ops < s->ops)
            fprintf(fp, "simulated  %" PRIu64 " ops, %" PRIu64 " of them replayed (%d ranks), %" PRIu64 " events\n",
                    s->ops, s->replayed_ops, s->replayed_ranks, s->events);
        else if (f->replayed)
            fprintf(fp, "simulated  %" PRIu64 " ops, %" PRIu64 " events\n", s->ops, s->events);
        if (f->replayed && j->cut_short && j->incomplete_ranks)
            fprintf(fp, "cut short  %d rank trace%s ended early; the replay stops where they do: %" PRIu64
                    " recorded ops after that point were not replayed\n", j->incomplete_ranks,
                    j->incomplete_ranks == 1 ? "" : "s", j->ops_not_replayed);
        else if (f->replayed && j->cut_short)
            fprintf(fp, "cut short  the failed ranks stopped before the others' collectives: the replay stops "
                    "there; %" PRIu64 " recorded ops after that point were not replayed\n", j->ops_not_replayed);
    }
    if (f->timelines) {
        char a2[32];
        sim_fmt_bytes(a, sizeof a, f->timeline_bytes);
        sim_fmt_bytes(a2, sizeof a2, f->svg_bytes);
        fprintf(fp, "\nfiles      report.html (open in a browser), report.json, timeline.json (%s; open in ui.perfetto.dev), timeline.svg (%s)\n", a, a2);
        fprintf(fp, "timeline   %s; iterations %d..%d of %d", f->view.what, f->view.iter_first, f->view.iter_last,
                MAYA_MAX(j->niter, 1));
        if (f->view.cut) /* timeline.json; the picture shows the whole iteration */
            fprintf(fp, ", timeline.json its first %.3f ms (%d events at most)",
                    (double)(f->view.t1 - f->view.t0) / 1e6, SIM_VIEW_MAX_EVENTS);
        fprintf(fp, "%s\n", f->view.full ? "" : " (--timeline full: every rank and iteration)");
    } else {
        fprintf(fp, "\nfiles      report.html (open in a browser), report.json%s\n", f->replayed ? " (no timeline: --timeline none)" : "");
    }
}

/* ---- report.json ---- */

/* The details (details.c): per communicator and the slowest ops, per
 * steady iteration; report.html shows the same. */
static void write_json_details(struct json *w, const struct facts *f)
{
    const struct sim_details *d = &f->det;
    json_arr(w, "communicators");
    for (uint32_t k = 0; f->replayed && k < d->ncomms; k++) {
        const struct sim_comm_use *c = &d->comms[k];
        const struct sim_comm *cm = &f->j->comms[c->comm];
        char id[24];
        snprintf(id, sizeof id, "0x%" PRIx64, cm->id);
        json_obj(w, NULL);
        json_str(w, "id", id);
        json_int(w, "size", cm->nranks);
        json_int(w, "nodes", cm->nnodes);
        json_int(w, "ranks_calling", c->ranks);
        json_num(w, "calls_per_iteration", c->ops);
        json_num(w, "time_per_iteration_s", c->time_s);
        json_str(w, "most_time_in", sim_name(f->j, c->top_name));
        json_end_obj(w);
    }
    json_end_arr(w);
    json_arr(w, "slowest_ops");
    for (int k = 0; f->replayed && k < d->nops; k++) {
        const struct sim_op_use *o = &d->ops[k];
        json_obj(w, NULL);
        json_str(w, "name", sim_name(f->j, o->name));
        json_str(w, "kind", sim_op_use_kind(o));
        json_num(w, "calls_per_iteration", o->count);
        json_num(w, "time_per_iteration_s", o->time_s);
        json_num(w, "longest_call_s", o->max_s);
        json_int(w, "longest_call_rank", o->max_rank);
        json_end_obj(w);
    }
    json_end_arr(w);
}


static void write_json(FILE *fp, const struct facts *f)
{
    const struct sim_job *j = f->j;
    const struct sim_report_info *in = f->in;
    const struct maya_run_desc *d = in->desc;
    const struct sim_summary *s = &f->s;
    struct json w;
    json_begin(&w, fp, 1);
    json_obj(&w, NULL);
    json_str(&w, "maya_version", MAYA_VERSION);
    json_str(&w, "gpu", in->gpu ? in->gpu->key : j ? j->gpu : d ? d->gpu : NULL);
    json_str(&w, "gpu_name", in->gpu ? in->gpu->prop.name : NULL);
    json_int(&w, "gpu_count", d ? d->gpu_count : j ? j->nranks : 0);
    json_int(&w, "gpus_used", f->gpus);
    json_int(&w, "world_size", j ? (j->world_size > 0 ? j->world_size : j->nranks) : d ? d->nprocs : 0);
    json_int(&w, "nodes", in->cluster ? MAYA_MAX(in->cluster->nodes, 1) : j ? j->nodes : d ? d->nodes : 1);
    json_int(&w, "gpus_per_node", in->cluster ? in->cluster->gpus_per_node : d ? d->gpus_per_node : 0);
    json_str(&w, "cluster", in->cluster ? in->cluster->key : NULL);
    json_str(&w, "command", d ? d->command : NULL);
    json_str(&w, "launcher", d ? d->launcher : NULL);
    json_bool(&w, "workload_ok", d ? f->not_ok == 0 && strcmp(d->state, "running") : 1);
    json_str(&w, "status", !d ? NULL : !strcmp(d->state, "running") ? "cut_short" : f->failed ? "failed" :
                           f->not_ok ? "stopped" : j && j->incomplete_ranks ? "incomplete" : "ok");
    json_str(&w, "cause", f->headline[0] ? f->headline : NULL);
    json_str(&w, "replicas_layout", f->layout[0] ? f->layout : NULL);
    json_arr(&w, "hung_ranks");
    for (int i = 0; d && i < d->nprocs; i++)
        if (!strncmp(d->procs[i].note, "hung:", 5))
            json_int(&w, NULL, i);
    json_end_arr(&w);
    json_bool(&w, "cut_short", j && j->cut_short);
    json_bool(&w, "simulated", f->replayed);
    json_str(&w, "error", in->error);
    if (f->replayed) {
        json_num(&w, "iteration_time_s", s->iteration_s);
        json_num(&w, "first_iteration_time_s", s->first_iteration_s);
    } else {
        json_null(&w, "iteration_time_s");
        json_null(&w, "first_iteration_time_s");
    }
    json_arr(&w, "iterations");
    if (f->replayed) {
        int n;
        const double *it = sim_iteration_times(j, &n);
        for (int k = 0; k < n; k++) {
            json_obj(&w, NULL);
            json_int(&w, "index", k + 1);
            json_num(&w, "time_s", it[k]);
            json_num(&w, "end_s", (double)j->iter_end[k] / 1e9);
            int steady = sim_iteration_steady(j, k);
            json_bool(&w, "steady", steady);
            if (steady)
                json_null(&w, "left_out");
            else
                json_str(&w, "left_out", k == 0 ? "warm-up" : "partial");
            json_end_obj(&w);
        }
    }
    json_end_arr(&w);
    json_str(&w, "iteration_marker", j && j->marker[0] ? j->marker : NULL);
    json_int(&w, "iterations_found", j ? j->iterations_found : 0);
    json_int(&w, "steady_iterations", f->replayed ? s->steady_iterations : 0);
    json_uint(&w, "warmup_ops", f->replayed ? s->warmup_ops : 0);
#define TIME(key, v) do { if (f->replayed) json_num(&w, key, v); else json_null(&w, key); } while (0)
    TIME("makespan_s", s->makespan_s);
    TIME("warmup_emulation_s", s->warmup_emulation_s);
    TIME("compute_time_s", s->compute_s);
    TIME("communication_time_s", s->comm_s);
    TIME("exposed_communication_time_s", s->exposed_comm_s);
    TIME("copy_time_s", s->copy_s);
    TIME("idle_time_s", s->idle_s);
    TIME("host_work_s", s->host_work_s);
#undef TIME
    if (f->replayed) {
        json_bool(&w, "host_bound", s->host_bound);
        json_obj(&w, "breakdown");
        json_num(&w, "iteration_s", s->breakdown_iteration_s);
        json_num(&w, "compute_s", s->compute_s);
        json_num(&w, "exposed_communication_s", s->exposed_comm_s);
        json_num(&w, "exposed_copy_s", s->exposed_copy_s);
        json_num(&w, "idle_s", s->idle_s);
        json_int(&w, "iterations", MAYA_MAX(s->steady_iterations, 1));
        json_str(&w, "formed", "mean over the steady iterations and the ranks; compute, then communication "
                 "where no compute runs, then copies where neither runs, then idle: they add up to iteration_s");
        json_end_obj(&w);
    } else {
        json_null(&w, "host_bound");
        json_null(&w, "breakdown");
    }
    if (j)
        json_uint(&w, "peak_memory_bytes", s->peak_memory_bytes);
    else
        json_null(&w, "peak_memory_bytes");
    if (f->total_mem)
        json_uint(&w, "gpu_memory_bytes", f->total_mem);
    json_bool(&w, "oom", s->oom);
    json_bool(&w, "fits_memory", !s->oom && !(f->total_mem && s->peak_memory_bytes > f->total_mem));
    json_str(&w, "hardware", in->hardware);
    json_bool(&w, "gpu_overridden", in->gpu_overridden);
    json_arr(&w, "ranks");
    for (int r = 0; r < f->nrows; r++) {
        const struct rank_row *row = &f->rows[r];
        json_obj(&w, NULL);
        json_int(&w, "rank", r);
        if (row->node >= 0)
            json_int(&w, "node", row->node);
        else
            json_null(&w, "node");
        if (row->in_job)
            json_uint(&w, "peak_memory_bytes", row->peak);
        else
            json_null(&w, "peak_memory_bytes");
        json_bool(&w, "oom", row->oom);
        const struct maya_run_proc *p = row->proc;
        if (p && p->end == MAYA_RUN_EXITED)
            json_int(&w, "exit_status", p->code);
        else
            json_null(&w, "exit_status");
        if (p && p->end == MAYA_RUN_SIGNALED)
            json_int(&w, "signal", p->code);
        else
            json_null(&w, "signal");
        json_bool(&w, "traced", row->in_job);
        const struct sim_rank_split *sp = row->job_index >= 0 && f->det.split ? &f->det.split[row->job_index] : NULL;
        if (sp) {
            json_obj(&w, "iteration_split");
            json_num(&w, "compute_s", sp->compute_s);
            json_num(&w, "communication_s", sp->comm_s);
            json_num(&w, "copy_s", sp->copy_s);
            json_num(&w, "idle_s", sp->idle_s);
            json_end_obj(&w);
        } else {
            json_null(&w, "iteration_split");
        }
        if (p && p->note[0])
            json_str(&w, "note", p->note);
        json_end_obj(&w);
    }
    json_end_arr(&w);
    write_json_details(&w, f);
    json_obj(&w, "unsupported_calls");
    for (uint32_t i = 0; j && i < j->nnames; i++)
        if (j->unsupported_by_name[i])
            json_uint(&w, j->names[i], j->unsupported_by_name[i]);
    json_end_obj(&w);
    json_obj(&w, "values_not_computed");
    json_uint(&w, "reads", j ? s->values_not_computed : 0);
    json_obj(&w, "by_writer");
    for (uint32_t i = 0; j && i < j->nnames; i++)
        if (j->unreal_by_name[i])
            json_uint(&w, j->names[i], j->unreal_by_name[i]);
    json_end_obj(&w);
    json_end_obj(&w);
    json_obj(&w, "declared_values");
    for (uint32_t i = 0; j && i < j->nnames; i++)
        if (j->declared_by_name[i])
            json_uint(&w, j->names[i], j->declared_by_name[i]);
    json_end_obj(&w);
    if (f->replayed && s->mfu >= 0)
        json_num(&w, "mfu", s->mfu);
    else
        json_null(&w, "mfu");
    json_uint(&w, "extrapolated_ops", j ? s->extrapolated_ops : 0);
    json_obj(&w, "kernels");
    json_uint(&w, "launches", j ? s->kernel_launches : 0);
    json_uint(&w, "priced_from_code", j ? s->kernel_launches - s->no_code_launches : 0);
    json_uint(&w, "without_code", j ? s->no_code_launches : 0);
    json_uint(&w, "without_code_sass_unread", j ? s->sass_unread_launches : 0);
    json_obj(&w, "without_code_by_name");
    for (uint32_t i = 0; j && i < j->nnames; i++)
        if (j->no_code_by_name[i])
            json_uint(&w, j->names[i], j->no_code_by_name[i]);
    json_end_obj(&w);
    json_end_obj(&w);
    json_str(&w, "estimator", in->estimator && in->estimator[0] ? in->estimator : "default");
    json_str(&w, "learned_models", in->models);
    json_str(&w, "options", in->options);
    json_str(&w, "host_clock", j && j->nranks ? host_clock_name(j) : NULL);
    json_obj(&w, "simulator");
    json_uint(&w, "ops", j ? j->total_ops : 0);
    json_uint(&w, "events", j ? j->events : 0);
    json_int(&w, "replayed_ranks", j ? j->replayed_ranks : 0);
    json_uint(&w, "replayed_ops", j ? j->replayed_ops : 0);
    json_int(&w, "references_read", j ? (int)j->refs_read : 0);
    json_int(&w, "references_copied", j ? (int)j->refs_copied : 0);
    json_str(&w, "fold_note", j && j->fold_note[0] ? j->fold_note : NULL);
    json_str(&w, "fold", !j ? NULL : j->no_fold ? "no" : j->fold_similar ? "similar" : "yes");
    if (j && !j->no_fold && !j->fold_similar)
        json_int(&w, "fold_gaps_only", j->fold_gaps_only);
    if (j && j->fold_similar)
        json_num(&w, "fold_host_gap_difference", j->fold_gap_diff);
    if (j && j->fold_similar)
        json_int(&w, "fold_host_calls_difference", (int64_t)j->fold_host_calls);
    json_end_obj(&w);
    json_obj(&w, "timeline");
    json_str(&w, "view", !f->timelines ? "none" : f->view.full ? "full" : "bounded");
    if (f->timelines) {
        json_arr(&w, "ranks");
        for (int k = 0; k < f->view.nranks; k++)
            json_int(&w, NULL, j->ranks[f->view.ranks[k]].rank);
        json_end_arr(&w);
        json_int(&w, "first_iteration", f->view.iter_first);
        json_int(&w, "last_iteration", f->view.iter_last);
        json_uint(&w, "json_ns", f->view.cut ? f->view.t1 - f->view.t0 : 0);
        json_uint(&w, "json_bytes", f->timeline_bytes);
        json_uint(&w, "svg_bytes", f->svg_bytes);
    }
    json_end_obj(&w);
    json_end_obj(&w);
}

static int write_file(const char *dir, const char *name, void (*fn)(FILE *, const struct facts *, const char *),
                      const struct facts *f)
{
    char path[PATH_MAX];
    if (maya_snprintf(path, sizeof path, "%s/%s", dir, name) < 0)
        return -1;
    struct maya_atomic_file af;
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    fn(af.fp, f, dir);
    return maya_atomic_commit(&af);
}

static void json_fn(FILE *fp, const struct facts *f, const char *dir)
{
    (void)dir;
    write_json(fp, f);
}

static uint64_t file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* The timelines first, so that the report can say what they hold. */
static int write_timelines(struct facts *f, const char *dir)
{
    const struct sim_job *j = f->j;
    char path[PATH_MAX];
    if (!f->replayed || f->in->timeline == SIM_TIMELINE_NONE)
        return 0;
    if (sim_view_pick(j, f->in->timeline == SIM_TIMELINE_FULL, &f->view) < 0)
        return -1;
    if (maya_snprintf(path, sizeof path, "%s/timeline.json", dir) < 0 || sim_write_timeline(j, &f->view, path) < 0)
        return -1;
    f->timeline_bytes = file_bytes(path);
    if (maya_check_stop("writing the report") < 0 || maya_snprintf(path, sizeof path, "%s/timeline.svg", dir) < 0 ||
        sim_write_svg(j, &f->view, path) < 0)
        return -1;
    f->svg_bytes = file_bytes(path);
    f->timelines = 1;
    return 0;
}

int sim_report(const struct sim_job *j, const struct sim_report_info *in, const char *dir)
{
    struct facts f;
    if (gather(&f, j, in) < 0)
        return -1;
    headline(&f, dir);
    find_layout(&f, dir);
    int rc = write_timelines(&f, dir);
    if (rc == 0)
        rc = maya_check_stop("writing the report");
    if (rc == 0)
        rc = write_file(dir, "report.txt", write_txt, &f);
    if (rc == 0)
        rc = write_file(dir, "report.json", json_fn, &f);
    if (rc == 0) {
        char path[PATH_MAX];
        struct sim_page page = { j, in, &f.s, f.replayed ? &f.det : NULL, f.replayed, f.failed, f.gpus, f.total_mem };
        if (maya_snprintf(path, sizeof path, "%s/report.html", dir) < 0)
            rc = -1;
        else
            rc = sim_write_html(&page, path);
    }
    maya_progress_done();
    sim_view_free(&f.view);
    facts_free(&f);
    return rc;
}

void sim_report_summary(const struct sim_job *j, const struct sim_report_info *in, const char *dir, FILE *fp)
{
    struct facts f;
    if (gather(&f, j, in) < 0)
        return;
    headline(&f, dir);
    write_status(fp, &f, dir, dir != NULL);
    if (f.replayed) {
        char a[32], b[32];
        sim_fmt_time(a, sizeof a, f.s.iteration_s);
        sim_fmt_bytes(b, sizeof b, f.s.peak_memory_bytes);
        fprintf(fp, "iteration  %s on %d x %s (%d iteration%s found)\n", a, f.gpus,
                in->gpu ? in->gpu->key : j->gpu, f.s.iterations, f.s.iterations == 1 ? "" : "s");
        fprintf(fp, "memory     peak %s per GPU%s\n", b, f.s.oom ? ": OUT OF MEMORY" : "");
    }
    facts_free(&f);
}

/* maya search: the results table (stdout and DIR/search.txt) and
 * DIR/search.json. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "maya/common.h"
#include "maya/json.h"

static const char *status_name[] = { "pending", "ok", "oom", "failed", "pruned" };

const char *search_status_name(int status)
{
    return status >= 0 && status < (int)MAYA_ARRAY_LEN(status_name) ? status_name[status] : "?";
}

/* Valid fastest first, then oom, then failed; the strategy's order within. */
static int by_result(const void *a, const void *b)
{
    const struct search_trial *x = *(struct search_trial *const *)a, *y = *(struct search_trial *const *)b;
    if (x->status != y->status)
        return x->status - y->status;
    if (x->status == SEARCH_OK && x->iteration_s != y->iteration_s)
        return x->iteration_s < y->iteration_s ? -1 : 1;
    return x->order - y->order;
}

void search_sort(struct search_result *res)
{
    qsort(res->trials, res->ntrials, sizeof *res->trials, by_result);
}

static const struct search_trial *best(const struct search_result *res)
{
    return res->ntrials && res->trials[0]->status == SEARCH_OK ? res->trials[0] : NULL;
}

static void fmt_time(char *buf, size_t size, const struct search_trial *t)
{
    if (t->status == SEARCH_OK)
        snprintf(buf, size, "%.3f ms", t->iteration_s * 1e3);
    else
        snprintf(buf, size, "-");
}

static void fmt_mem(char *buf, size_t size, const struct search_trial *t)
{
    if (t->peak_bytes >= 0)
        snprintf(buf, size, "%.2f GiB", t->peak_bytes / (1024.0 * 1024.0 * 1024.0));
    else
        snprintf(buf, size, "-");
}

double search_gpu_hours_per_1k(const struct search_trial *t)
{
    return t->status == SEARCH_OK && t->ngpus > 0 ? t->iteration_s * 1000.0 * t->ngpus / 3600.0 : -1;
}

static void fmt_hours(char *buf, size_t size, const struct search_trial *t)
{
    double h = search_gpu_hours_per_1k(t);
    if (h >= 0)
        snprintf(buf, size, "%.3f", h);
    else
        snprintf(buf, size, "-");
}

static void fmt_cost(char *buf, size_t size, const struct search_trial *t)
{
    double h = search_gpu_hours_per_1k(t);
    if (h >= 0 && t->price_per_gpu_hour > 0)
        snprintf(buf, size, "%.2f", h * t->price_per_gpu_hour);
    else
        snprintf(buf, size, "-");
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

void search_print_table(FILE *fp, const struct search_result *res)
{
    const struct search_space *s = res->space;
    int *w = calloc(s->nparams, sizeof *w), wt = 9, wm = 11, wh = 13, wc = 12;
    char buf[64];
    if (!w)
        return;
    for (int i = 0; i < s->nparams; i++) {
        w[i] = (int)strlen(s->params[i].name);
        for (int k = 0; k < s->params[i].nvalues; k++)
            w[i] = max_int(w[i], (int)strlen(s->params[i].values[k]));
    }
    for (int r = 0; r < res->ntrials; r++) {
        fmt_time(buf, sizeof buf, res->trials[r]);
        wt = max_int(wt, (int)strlen(buf));
        fmt_mem(buf, sizeof buf, res->trials[r]);
        wm = max_int(wm, (int)strlen(buf));
    }
    char whatif_h[] = "GPU-h/1k it", whatif_c[] = "cost/1k it";
    wh = (int)strlen(whatif_h);
    wc = (int)strlen(whatif_c);
    fprintf(fp, "%4s", "#");
    for (int i = 0; i < s->nparams; i++)
        fprintf(fp, "  %-*s", w[i], s->params[i].name);
    fprintf(fp, "  %*s  %*s", wt, "iteration", wm, "peak memory");
    if (res->whatif)
        fprintf(fp, "  %*s  %*s", wh, whatif_h, wc, whatif_c);
    fprintf(fp, "  %-12s  %s\n", "trial", "status");
    for (int r = 0; r < res->ntrials; r++) {
        const struct search_trial *t = res->trials[r];
        fprintf(fp, "%4d", r + 1);
        for (int i = 0; i < s->nparams; i++)
            fprintf(fp, "  %-*s", w[i], s->params[i].values[t->choice[i]]);
        fmt_time(buf, sizeof buf, t);
        fprintf(fp, "  %*s", wt, buf);
        fmt_mem(buf, sizeof buf, t);
        fprintf(fp, "  %*s", wm, buf);
        if (res->whatif) {
            fmt_hours(buf, sizeof buf, t);
            fprintf(fp, "  %*s", wh, buf);
            fmt_cost(buf, sizeof buf, t);
            fprintf(fp, "  %*s", wc, buf);
        }
        fprintf(fp, "  %-12s  %s%s%s%s%s\n", t->id, status_name[t->status], t->reason[0] ? ": " : "", t->reason,
                t->reused[0] ? t->reason[0] ? " " : ": " : "", t->reused[0] ? "(re-reported from its trace)" : "");
    }
    free(w);
    const struct search_trial *b = best(res);
    if (!b) {
        fprintf(fp, "best: none of the %d trial%s was valid\n", res->ntrials, res->ntrials == 1 ? "" : "s");
        return;
    }
    fprintf(fp, "best:");
    for (int i = 0; i < s->nparams; i++)
        fprintf(fp, " %s=%s", s->params[i].name, s->params[i].values[b->choice[i]]);
    fmt_time(buf, sizeof buf, b);
    fprintf(fp, " (%s per iteration", buf);
    fmt_mem(buf, sizeof buf, b);
    fprintf(fp, ", %s peak", buf);
    if (res->whatif && search_gpu_hours_per_1k(b) >= 0) {
        fmt_hours(buf, sizeof buf, b);
        fprintf(fp, ", %s GPU-hours", buf);
        if (b->price_per_gpu_hour > 0) {
            fmt_cost(buf, sizeof buf, b);
            fprintf(fp, " costing %s", buf);
        }
        fprintf(fp, " per 1,000 iterations");
    }
    fprintf(fp, "; trials/%s)\n", b->id);
    if (res->pruned)
        fprintf(fp, "pruned: %d trial%s not run (the rules named in their rows)\n", res->pruned,
                res->pruned == 1 ? "" : "s");
}

static void write_trial(struct json *j, const char *key, const struct search_space *s, const struct search_trial *t)
{
    json_obj(j, key);
    json_int(j, "order", t->order + 1);
    json_obj(j, "params");
    for (int i = 0; i < s->nparams; i++)
        json_str(j, s->params[i].name, s->params[i].values[t->choice[i]]);
    json_end_obj(j);
    json_str(j, "status", status_name[t->status]);
    json_str(j, "reason", t->reason[0] ? t->reason : NULL);
    json_num(j, "iteration_time_s", t->status == SEARCH_OK ? t->iteration_s : NAN);
    if (t->peak_bytes >= 0)
        json_uint(j, "peak_memory_bytes", (uint64_t)t->peak_bytes);
    else
        json_null(j, "peak_memory_bytes");
    char dir[32];
    snprintf(dir, sizeof dir, "trials/%s", t->id);
    json_str(j, "dir", dir);
    json_bool(j, "cached", t->cached);
    json_num(j, "trial_wall_s", t->wall_s >= 0 ? t->wall_s : NAN);
    json_str(j, "pruned_by", t->pruned_by[0] ? t->pruned_by : NULL);
    json_str(j, "reused_trace_of", t->reused[0] ? t->reused : NULL);
    json_str(j, "gpus", t->gpus);
    json_str(j, "cluster", t->cluster);
    if (t->ngpus > 0)
        json_int(j, "gpu_count", t->ngpus);
    else
        json_null(j, "gpu_count");
    json_num(j, "gpu_hours_per_1k_iterations", search_gpu_hours_per_1k(t) >= 0 ? search_gpu_hours_per_1k(t) : NAN);
    json_num(j, "price_per_gpu_hour", t->price_per_gpu_hour > 0 ? t->price_per_gpu_hour : NAN);
    json_num(j, "cost_per_1k_iterations", search_gpu_hours_per_1k(t) >= 0 && t->price_per_gpu_hour > 0
                                              ? search_gpu_hours_per_1k(t) * t->price_per_gpu_hour : NAN);
    json_arr(j, "command");
    for (int i = 0; t->argv[i]; i++)
        json_str(j, NULL, t->argv[i]);
    json_end_arr(j);
    json_end_obj(j);
}

static void write_json(FILE *fp, const struct search_result *res)
{
    const struct search_space *s = res->space;
    struct json j;
    json_begin(&j, fp, 1);
    json_obj(&j, NULL);
    json_str(&j, "gpus", res->gpus);
    json_str(&j, "cluster", res->cluster);
    json_str(&j, "strategy", res->strategy);
    json_uint(&j, "seed", res->seed);
    if (res->requested)
        json_int(&j, "trials_requested", res->requested);
    else
        json_null(&j, "trials_requested");
    json_int(&j, "patience", res->patience);
    if (!strcmp(res->strategy, "cmaes")) {
        json_int(&j, "trials_budget", res->planned);
        json_int(&j, "population", res->population);
        json_int(&j, "generations", res->generations);
    }
    json_obj(&j, "params");
    for (int i = 0; i < s->nparams; i++) {
        json_arr(&j, s->params[i].name);
        for (int k = 0; k < s->params[i].nvalues; k++)
            json_str(&j, NULL, s->params[i].values[k]);
        json_end_arr(&j);
    }
    json_end_obj(&j);
    json_uint(&j, "combinations", s->combinations);
    json_int(&j, "duplicates", res->duplicates);
    json_int(&j, "trials_run", res->run);
    json_int(&j, "trials_cached", res->cached);
    json_int(&j, "trials_pruned", res->pruned);
    json_int(&j, "trials_reused", res->reused);
    json_num(&j, "wall_time_s", res->wall_s);
    double sum = 0;
    for (int r = 0; r < res->ntrials; r++)
        sum += res->trials[r]->wall_s > 0 ? res->trials[r]->wall_s : 0;
    json_num(&j, "trials_wall_s", sum);
    if (res->slurm) {
        json_obj(&j, "slurm");
        json_int(&j, "arrays", res->slurm->waves);
        json_int(&j, "array_tasks", res->slurm->tasks);
        json_int(&j, "resubmitted", res->resubmitted);
        json_num(&j, "submit_s", res->slurm->submit_s);
        json_num(&j, "array_s", res->slurm->array_s);
        json_end_obj(&j);
    }
    json_bool(&j, "stopped_early", res->stopped_early);
    json_str(&j, "stop_reason", res->stop_reason);
    if (best(res))
        write_trial(&j, "best", s, best(res));
    else
        json_null(&j, "best");
    json_arr(&j, "trials");
    for (int r = 0; r < res->ntrials; r++)
        write_trial(&j, NULL, s, res->trials[r]);
    json_end_arr(&j);
    json_end_obj(&j);
}

int search_write_files(const char *dir, const struct search_result *res)
{
    struct maya_atomic_file af;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/search.txt", dir);
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    search_print_table(af.fp, res);
    if (maya_atomic_commit(&af) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/search.json", dir);
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    write_json(af.fp, res);
    return maya_atomic_commit(&af);
}

/* maya search: a search's targets (each set of GPUs and cluster resolved
 * once) and its trials: each one's command, key (what makes two trials the
 * same: setup, target, command and the files it names) and trace key (the
 * same but for what only the report reads), and the plan of a grid or
 * random search. */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pipeline.h"
#include "search.h"
#include "maya/common.h"

double search_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int search_argv_push(struct search_argv *l, const char *a)
{
    char **grown = realloc(l->argv, (l->n + 2) * sizeof *grown);
    if (!grown)
        return maya_error("out of memory");
    l->argv = grown;
    if (!(l->argv[l->n] = strdup(a)))
        return maya_error("out of memory");
    l->argv[++l->n] = NULL;
    return 0;
}

int search_argv_push_all(struct search_argv *l, char *const *argv)
{
    for (int i = 0; argv && argv[i]; i++)
        if (search_argv_push(l, argv[i]) < 0)
            return -1;
    return 0;
}

/* A file the trial reads, named in its key by its size and modification
 * time (as make judges files): a rebuilt program, an edited script, hwspec,
 * oracle file or model makes the cached trial stale. Not a file: nothing. */
static void stamp_file(FILE *key, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        fprintf(key, "file %s %lld %lld.%09ld\n", path, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                st.st_mtim.tv_nsec);
}

/* A command's program: a path as given, else found along PATH. */
static void stamp_program(FILE *key, const char *prog)
{
    const char *path = getenv("PATH");
    if (strchr(prog, '/') || !path) {
        stamp_file(key, prog);
        return;
    }
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        char full[PATH_MAX];
        if (n && snprintf(full, sizeof full, "%.*s/%s", (int)n, p, prog) < (int)sizeof full &&
            access(full, X_OK) == 0) {
            stamp_file(key, full);
            return;
        }
        p += n + (p[n] == ':');
    }
}

/* The trained models the estimator reads (share/maya/models), stamped. */
static void stamp_models(FILE *key)
{
    char dir[PATH_MAX];
    if (maya_data_dir((const void *)stamp_models, dir, sizeof dir) < 0)
        return;
    struct dirent **names;
    char sub[PATH_MAX + 8];
    snprintf(sub, sizeof sub, "%s/models", dir);
    int n = scandir(sub, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        char path[sizeof sub + 256];
        snprintf(path, sizeof path, "%s/%s", sub, names[i]->d_name);
        stamp_file(key, path);
        free(names[i]);
    }
    if (n >= 0)
        free(names);
}

/* What makes two trials the same besides their command and target: maya's
 * version, the hwspec files and trained models, maya run's options (with
 * the files they name) and maya.conf's defaults for them. */
void search_describe_setup(FILE *key, const struct search *s, const struct maya_conf *conf)
{
    fprintf(key, "maya search trial 2\nmaya %s\n", MAYA_VERSION);
    for (size_t i = 0; i < s->hw.ngpus; i++)
        stamp_file(key, s->hw.gpus[i].file);
    for (size_t i = 0; i < s->hw.nclusters; i++)
        stamp_file(key, s->hw.clusters[i].file);
    stamp_models(key);
    for (int i = 0; i < s->run_opts.n; i++) {
        fprintf(key, "%s\n", s->run_opts.argv[i]);
        stamp_file(key, s->run_opts.argv[i]);
    }
    fprintf(key, "conf estimator=%s oracle=%s marker=%s iterations=%d timeout=%g copy_threshold=%llu\n",
            conf->estimator, conf->oracle, conf->iteration_marker, conf->iterations, conf->timeout_s,
            (unsigned long long)conf->copy_threshold);
    if (conf->oracle[0])
        stamp_file(key, conf->oracle);
    const char *thr = getenv("MAYA_COPY_THRESHOLD");
    fprintf(key, "MAYA_COPY_THRESHOLD=%s\n", thr ? thr : "");
}

/* Resolve a target as maya run would: -g, else the cluster's GPU and size,
 * else one H100; the cluster fitted to the count. 0 or -1. */
static int resolve_target(struct search *s, struct search_target *tg)
{
    const struct maya_gpu_spec *gpu = NULL;
    if (tg->gpus || !tg->cluster) {
        if (maya_parse_gpu_count(&s->hw, tg->gpus ? tg->gpus : "h100x1", &gpu, &tg->count) < 0)
            return -1;
    } else {
        struct maya_cluster_spec c;
        if (pipeline_cluster_lookup(&s->hw, tg->cluster, NULL, &c) < 0)
            return -1;
        if (!(gpu = maya_hwspecs_find_gpu(&s->hw, c.gpu)))
            return maya_error("--cluster %s names GPU \"%s\", which is not known (maya hwspecs list)", tg->cluster,
                              c.gpu);
        tg->count = (c.nodes > 0 ? c.nodes : 1) * c.gpus_per_node;
    }
    if (pipeline_cluster(&s->hw, gpu, tg->count, tg->cluster, NULL, &tg->spec) < 0)
        return -1;
    snprintf(tg->gpu_key, sizeof tg->gpu_key, "%s", gpu->key);
    tg->gpu_memory_bytes = (double)gpu->prop.totalGlobalMem;
    tg->price = s->price > 0 ? s->price : tg->spec.price_per_gpu_hour;
    size_t len;
    FILE *fp = open_memstream(&tg->key, &len);
    if (!fp)
        return maya_error("out of memory");
    fprintf(fp, "gpus=%sx%d\n", gpu->key, tg->count);
    maya_cluster_spec_print(fp, &tg->spec);
    if (fclose(fp) != 0)
        return maya_error("out of memory");
    /* what the ranks see: how many GPUs, how they sit in nodes and how a
     * node's are linked (NVML topology); not the GPU type, bandwidths or
     * latencies, which only the estimator and simulator read */
    if (asprintf(&tg->trace, "ranks see %d GPUs, %d a node on %d nodes, intra %s\n", tg->count,
                 tg->spec.gpus_per_node, tg->spec.nodes, maya_intra_link_name(tg->spec.intra)) < 0) {
        tg->trace = NULL;
        return maya_error("out of memory");
    }
    return 0;
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* The index of the target for these -g and --cluster values, resolved the
 * first time; -1 on error. */
int search_find_target(struct search *s, const char *gpus, const char *cluster)
{
    for (int i = 0; i < s->ntargets; i++)
        if (same_str(s->targets[i].gpus, gpus) && same_str(s->targets[i].cluster, cluster))
            return i;
    struct search_target *grown = realloc(s->targets, (s->ntargets + 1) * sizeof *grown);
    if (!grown)
        return maya_error("out of memory");
    s->targets = grown;
    struct search_target *tg = &s->targets[s->ntargets];
    memset(tg, 0, sizeof *tg);
    tg->gpus = gpus;
    tg->cluster = cluster;
    s->ntargets++;
    return resolve_target(s, tg) < 0 ? -1 : s->ntargets - 1;
}

void search_free_trial(struct search_trial *t)
{
    free(t->choice);
    search_free_argv(t->argv);
    search_free_argv(t->run_opts);
    free(t->key);
    free(t->dir);
    memset(t, 0, sizeof *t);
}

/* A --replicas value with its entries of degree 1 left out (maya run
 * takes N of 2 or more; a trial whose data-parallel degree is 1 has no
 * replicas); an entry that does not read N:STRIDE is kept, for maya run to
 * refuse by name. Written over spec, which may end "". */
static void drop_single_replicas(char *spec)
{
    char *out = spec;
    for (char *p = spec; *p;) {
        size_t len = strcspn(p, ",");
        char *end;
        long n = strtol(p, &end, 10);
        if (!(end > p && *end == ':' && n == 1)) {
            if (out != spec)
                *out++ = ',';
            memmove(out, p, len);
            out += len;
        }
        p += len + (p[len] == ',');
    }
    *out = 0;
}

/* t's maya run options, the choice's values substituted into those that
 * name knobs ({NAME}, {=EXPR}), and its --replicas; those are also written
 * to the trial's key (the others are in the setup's, as written). 0, or -1 with why set when an
 * expression has no whole value, why "" when out of memory. */
static int trial_options(const struct search *s, struct search_trial *t, FILE *key, char *why, size_t size)
{
    why[0] = 0;
    if (!(t->run_opts = calloc(s->run_opts.n + 1, sizeof *t->run_opts)))
        return -1;
    for (int i = 0; i < s->run_opts.n; i++) {
        const char *o = s->run_opts.argv[i];
        t->run_opts[i] = strchr(o, '{') ? search_space_substitute(&s->space, t->choice, o, why, size) : strdup(o);
        if (!t->run_opts[i] && why[0]) /* failed as planned: its key says by what */
            fprintf(key, "--run-option%c%s%c", 0, o, 0);
        if (!t->run_opts[i]) {
            search_free_argv(t->run_opts);
            t->run_opts = NULL;
            return -1;
        }
        if (strchr(o, '{'))
            fprintf(key, "--run-option%c%s%c", 0, t->run_opts[i], 0);
    }
    if (!s->replicas)
        return 0;
    char *spec = search_space_substitute(&s->space, t->choice, s->replicas, why, size);
    if (spec)
        drop_single_replicas(spec);
    if (spec && spec[0]) {
        int n = s->run_opts.n;
        char **grown = realloc(t->run_opts, (n + 3) * sizeof *grown);
        if (grown) {
            t->run_opts = grown;
            grown[n] = strdup("--replicas");
            grown[n + 1] = spec;
            grown[n + 2] = NULL;
            spec = NULL;
        }
        if (!grown || !grown[n]) {
            free(spec);
            search_free_argv(t->run_opts);
            t->run_opts = NULL;
            return -1;
        }
        fprintf(key, "--replicas%c%s%c", 0, grown[n + 1], 0);
    } else if (!spec) {
        if (why[0])
            fprintf(key, "--replicas%c%s%c", 0, s->replicas, 0);
        search_free_argv(t->run_opts);
        t->run_opts = NULL;
        return -1;
    }
    free(spec);
    return 0;
}

/* Trial t for a choice of value indexes: its command, target, keys and
 * directory. 0 or -1. */
static int make_trial(struct search *s, struct search_trial *t, const int *choice, const char *setup,
                      size_t setup_len)
{
    t->gpus = s->gpus;
    t->cluster = s->cluster;
    for (int i = 0; i < s->space.nparams; i++) {
        const struct search_param *p = &s->space.params[i];
        if (p->target == SEARCH_TARGET_GPUS)
            t->gpus = p->values[choice[i]];
        else if (p->target == SEARCH_TARGET_CLUSTER)
            t->cluster = p->values[choice[i]];
    }
    if ((t->target = search_find_target(s, t->gpus, t->cluster)) < 0)
        return -1;
    const struct search_target *tg = &s->targets[t->target];
    t->ngpus = tg->count;
    t->gpu_memory_bytes = tg->gpu_memory_bytes;
    t->price_per_gpu_hour = tg->price;
    char *cmd = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&cmd, &len);
    t->choice = calloc(s->space.nparams, sizeof *t->choice);
    char why[256] = "";
    if (fp && t->choice) {
        memcpy(t->choice, choice, s->space.nparams * sizeof *choice);
        t->argv = search_space_command(&s->space, t->choice, why, sizeof why);
        if (!t->argv && why[0]) {
            /* no command for this choice: a trial failed as planned, named
             * by the template and its values */
            snprintf(t->reason, sizeof t->reason, "%s", why);
            t->invalid = 1;
            t->argv = calloc(s->space.ntmpl + 1, sizeof *t->argv);
            for (int a = 0; t->argv && a < s->space.ntmpl; a++)
                if (!(t->argv[a] = strdup(s->space.tmpl[a]))) {
                    search_free_argv(t->argv);
                    t->argv = NULL;
                }
            for (int i = 0; i < s->space.nparams; i++)
                fprintf(fp, "%s=%s%c", s->space.params[i].name, s->space.params[i].values[choice[i]], 0);
        }
    }
    for (int r = 0; fp && t->argv && !t->invalid && r < s->requires.n; r++)
        if (search_space_require(&s->space, t->choice, s->requires.argv[r], why, sizeof why) <= 0) {
            /* a combination the program would refuse: failed unrun, and
             * its key says by which rule */
            snprintf(t->reason, sizeof t->reason, "%s", why);
            t->invalid = 1;
            fprintf(fp, "--require%c%s%c", 0, s->requires.argv[r], 0);
        }
    if (fp && t->argv && !t->invalid && trial_options(s, t, fp, why, sizeof why) < 0 && why[0]) {
        /* an option's expression has no whole value for this choice */
        snprintf(t->reason, sizeof t->reason, "%s", why);
        t->invalid = 1;
    }
    if (fp) {
        for (int a = 0; t->argv && t->argv[a]; a++)
            fwrite(t->argv[a], 1, strlen(t->argv[a]) + 1, fp);
        /* the program and the files its arguments name (a script, a config) */
        for (int a = 0; t->argv && t->argv[a]; a++) {
            if (a == 0)
                stamp_program(fp, t->argv[0]);
            else
                stamp_file(fp, t->argv[a]);
        }
    }
    if (!fp || fclose(fp) != 0 || !t->argv || (!t->run_opts && !t->invalid)) {
        free(cmd);
        return maya_error("out of memory");
    }
    /* key: setup, target, command; trace key: the same but for what only
     * the report reads of the target (NUL bytes separate the parts) */
    size_t klen = strlen(tg->key), tlen = strlen(tg->trace);
    t->keylen = setup_len + 1 + klen + 1 + len;
    char *trace = malloc(setup_len + 1 + tlen + 1 + len);
    if (!(t->key = malloc(t->keylen)) || !trace) {
        free(trace);
        free(cmd);
        return maya_error("out of memory");
    }
    memcpy(t->key, setup, setup_len);
    t->key[setup_len] = 0;
    memcpy(t->key + setup_len + 1, tg->key, klen + 1);
    memcpy(t->key + setup_len + klen + 2, cmd, len);
    memcpy(trace, setup, setup_len);
    trace[setup_len] = 0;
    memcpy(trace + setup_len + 1, tg->trace, tlen + 1);
    memcpy(trace + setup_len + tlen + 2, cmd, len);
    t->trace_k1 = search_hash(trace, setup_len + tlen + 2 + len, 0);
    t->trace_k2 = search_hash(trace, setup_len + tlen + 2 + len, 0x84222325cbf29ce4ULL);
    free(trace);
    free(cmd);
    search_hash_hex(t->key, t->keylen, t->id);
    if (asprintf(&t->dir, "%s/trials/%s", s->dir, t->id) < 0) {
        t->dir = NULL;
        return maya_error("out of memory");
    }
    return 0;
}

/* The trial for choice: an earlier trial's index when its command line was
 * seen before (seen maps keys to trial indexes), else, below s->capacity
 * trials, a new one's, made at s->trials[s->ntrials]; -2 when over the
 * plan, -1 on error. */
int search_add_trial(struct search *s, struct maya_map *seen, const int *choice, const char *setup,
                     size_t setup_len)
{
    struct search_trial t = { 0 };
    uint64_t k1 = 0, k2 = 0, *slot = NULL;
    int rc = make_trial(s, &t, choice, setup, setup_len);
    if (rc == 0) {
        k1 = search_hash(t.key, t.keylen, 0);
        k2 = search_hash(t.key, t.keylen, 0x84222325cbf29ce4ULL);
        slot = maya_map_get(seen, k1, k2);
    }
    if (rc == 0 && !slot && s->ntrials < s->capacity) {
        int created;
        if (!(slot = maya_map_put(seen, k1, k2, &created))) {
            search_free_trial(&t);
            return maya_error("out of memory");
        }
        *slot = (uint64_t)s->ntrials;
        t.order = s->ntrials;
        s->trials[s->ntrials++] = t;
        return t.order;
    }
    /* the same command line as an earlier trial: it runs once */
    search_free_trial(&t);
    return rc < 0 ? -1 : slot ? (int)*slot : -2;
}

/* The trials in the strategy's order, equal command lines once. */
int search_plan_trials(struct search *s, const char *setup, size_t setup_len)
{
    uint64_t n = s->space.combinations;
    /* random: every combination shuffled, run until --trials have run (the
     * pruned and invalid ones drawn on the way cost nothing) */
    s->planned = (int)n;
    s->budget = s->strategy == SEARCH_RANDOM && s->requested && (uint64_t)s->requested < n ? s->requested : 0;
    int rc = 0, *choice = calloc(s->space.nparams, sizeof *choice);
    uint64_t *order = search_order(&s->space, s->strategy == SEARCH_RANDOM, s->seed);
    struct maya_map seen = { 0 };
    s->capacity = s->planned;
    s->trials = calloc(s->capacity, sizeof *s->trials);
    if (!order || !s->trials || !choice)
        rc = maya_error("out of memory");
    for (uint64_t i = 0; i < n && s->ntrials < s->planned && rc == 0; i++) {
        int before = s->ntrials;
        search_space_choice(&s->space, order[i], choice);
        rc = search_add_trial(s, &seen, choice, setup, setup_len) == -1 ? -1 : 0;
        s->duplicates += rc == 0 && s->ntrials == before;
    }
    s->planned = s->ntrials;
    maya_map_free(&seen);
    free(order);
    free(choice);
    return rc;
}

void search_free(struct search *s)
{
    for (int i = 0; i < s->ntrials; i++)
        search_free_trial(&s->trials[i]);
    free(s->trials);
    for (int i = 0; i < s->ntargets; i++) {
        free(s->targets[i].key);
        free(s->targets[i].trace);
    }
    free(s->targets);
    if (s->replay)
        search_replay_free(s->replay);
    search_free_argv(s->run_opts.argv);
    search_free_argv(s->requires.argv);
    search_free_argv(s->report_opts.argv);
    search_free_argv(s->slurm.sbatch);
    maya_hwspecs_free(&s->hw);
    search_space_free(&s->space);
}

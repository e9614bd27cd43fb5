/* The --maya-emulate value: <gpu>x<count>[,key=value...].
 *
 * Checked against the installed hwspecs wherever Slurm hands it to the plugin
 * (srun, sbatch and salloc at submission, slurmstepd at launch), so that a
 * bad value fails before the job is queued, with a message saying what is
 * allowed.
 */
#define _GNU_SOURCE
#include "spank_maya.h"
#include "maya/common.h"
#include "maya/replicas.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define KEYS "cluster=NAME|FILE, marker=NAME, iters=N, report=PATH, dedup=yes|no, replicas=N:S[,N:S...]"

static int pick_cluster(const struct maya_hwspecs *hw, const char *arg, const char *base_dir,
                        struct spank_emulate *e, struct maya_cluster_spec *out)
{
    char path[PATH_MAX];
    struct stat st;
    int looks_like_file = strchr(arg, '/') || strstr(arg, ".conf");
    if (arg[0] == '/' || !base_dir)
        snprintf(path, sizeof path, "%s", arg);
    else if (maya_snprintf(path, sizeof path, "%s/%s", base_dir, arg) < 0)
        return -1;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        struct maya_hwspecs own = { 0 };
        spank_capture_begin();
        int rc = maya_hwspecs_load_file(path, &own);
        const char *why = spank_capture_end();
        if (rc < 0) {
            maya_hwspecs_free(&own); /* what the file added before it failed */
            return maya_error("--maya-emulate: cluster=%s: %s", arg, why);
        }
        if (own.nclusters != 1 || own.ngpus != 0) {
            maya_hwspecs_free(&own);
            return maya_error("--maya-emulate: cluster=%s: expected a file with one cluster \"NAME\" { ... } "
                              "and nothing else", arg);
        }
        *out = own.clusters[0];
        maya_hwspecs_free(&own);
        e->cluster_is_file = 1;
        char real[PATH_MAX];
        if (!realpath(path, real))
            return maya_error("--maya-emulate: cluster=%s: %m", arg);
        return maya_snprintf(e->cluster, sizeof e->cluster, "%s", real);
    }
    const struct maya_cluster_spec *c = looks_like_file ? NULL : maya_hwspecs_find_cluster(hw, arg);
    if (!c) {
        char names[2048] = "";
        size_t used = 0;
        for (size_t i = 0; i < hw->nclusters && used < sizeof names; i++) {
            int n = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", hw->clusters[i].key);
            if (n < 0)
                break;
            used += (size_t)n;
        }
        return maya_error("--maya-emulate: cluster=%s: no such file and no known cluster of that name; "
                          "known clusters: %s", arg, names[0] ? names : "(none installed)");
    }
    *out = *c;
    return maya_snprintf(e->cluster, sizeof e->cluster, "%s", c->key);
}

int spank_emulate_parse(const struct maya_hwspecs *hw, const char *value, const char *base_dir,
                        struct spank_emulate *e)
{
    char buf[4096];
    memset(e, 0, sizeof *e);
    if (!value || !*value)
        return maya_error("--maya-emulate needs a value: <gpu>x<count>[," KEYS "], e.g. h100x8");
    if (strlen(value) >= sizeof buf)
        return maya_error("--maya-emulate: value too long (%zu characters)", strlen(value));
    strcpy(buf, value);

    char *save = NULL;
    char *first = strtok_r(buf, ",", &save);
    const struct maya_gpu_spec *gpu = NULL;
    if (!first)
        return maya_error("--maya-emulate=%s: nothing before the first comma; the value is "
                          "<gpu>x<count>[," KEYS "]", value);
    spank_capture_begin(); /* its message is repeated below, with the option's name */
    int rc = maya_parse_gpu_count(hw, first, &gpu, &e->count);
    const char *msg = spank_capture_end();
    /* the return code decides; the captured text only explains */
    if (rc < 0 || !gpu)
        return maya_error("--maya-emulate=%s: %s; the value is <gpu>x<count>[," KEYS "]", value,
                          msg && msg[0] ? msg : "not a GPU and a count");
    snprintf(e->gpu, sizeof e->gpu, "%s", gpu->key);

    const char *cluster_arg = NULL;
    for (char *kv = strtok_r(NULL, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        /* replicas=24:8,8:1: the dimensions after the first come as items of
         * their own */
        if (!eq && e->replicas[0] && strchr(kv, ':') && strspn(kv, "0123456789:") == strlen(kv)) {
            size_t len = strlen(e->replicas);
            if (maya_snprintf(e->replicas + len, sizeof e->replicas - len, ",%s", kv) < 0)
                return -1;
            continue;
        }
        if (!eq || !eq[1])
            return maya_error("--maya-emulate=%s: \"%s\" is not key=value; allowed keys: " KEYS, value, kv);
        *eq = 0;
        const char *val = eq + 1;
        if (!strcmp(kv, "cluster")) {
            cluster_arg = val;
        } else if (!strcmp(kv, "marker")) {
            if (maya_snprintf(e->marker, sizeof e->marker, "%s", val) < 0)
                return -1;
        } else if (!strcmp(kv, "iters")) {
            int64_t n;
            if (maya_parse_i64(val, &n) < 0 || n < 1 || n > 1000000)
                return maya_error("--maya-emulate=%s: iters=\"%s\": expected the number of iterations to "
                                  "keep in the report, 1 to 1000000", value, val);
            e->iterations = (int)n;
        } else if (!strcmp(kv, "dedup")) {
            if (strcmp(val, "yes") && strcmp(val, "no"))
                return maya_error("--maya-emulate=%s: dedup=\"%s\": expected yes or no (duplicate-rank "
                                  "elimination, docs/dedup.md)", value, val);
            e->dedup = !strcmp(val, "yes");
        } else if (!strcmp(kv, "replicas")) {
            if (maya_snprintf(e->replicas, sizeof e->replicas, "%s", val) < 0)
                return -1;
        } else if (!strcmp(kv, "report")) {
            if (maya_snprintf(e->report, sizeof e->report, "%s", val) < 0)
                return -1;
        } else {
            return maya_error("--maya-emulate=%s: unknown key \"%s\"; allowed keys: " KEYS, value, kv);
        }
    }

    char err[768];
    struct maya_replicas layout;
    if (!strcmp(e->replicas, "auto"))
        return maya_error("--maya-emulate=%s: replicas=auto is maya run's (it runs the program on fewer ranks "
                          "first, which a Slurm job's tasks cannot); give the layout it found, replicas=N:S[,N:S...] "
                          "(maya run --replicas auto prints it; so does the \"same work\" line of a --dedup run's "
                          "report)", value);
    if (e->replicas[0] && maya_replicas_parse(e->replicas, e->count, &layout, err, sizeof err) < 0)
        return maya_error("--maya-emulate=%s: replicas=%s", value, err);

    struct maya_cluster_spec c;
    if (cluster_arg) {
        if (pick_cluster(hw, cluster_arg, base_dir, e, &c) < 0)
            return -1;
    } else if (maya_default_cluster(hw, gpu, e->count, &c) < 0) {
        return -1;
    }
    /* As maya run: whole nodes, or part of one. */
    int gpn = c.gpus_per_node;
    if (e->count > gpn && e->count % gpn)
        return maya_error("--maya-emulate=%s: %d GPUs on nodes of %d (cluster %s): expected a multiple of %d, "
                          "or at most %d", value, e->count, gpn, c.key, gpn, gpn);
    e->gpus_per_node = e->count < gpn ? e->count : gpn;
    e->nodes = (e->count + e->gpus_per_node - 1) / e->gpus_per_node;
    e->intra = c.intra;
    return 0;
}

int spank_emulate_load(const struct spank_conf *conf, const char *value, const char *base_dir,
                       struct spank_emulate *e)
{
    struct maya_hwspecs hw;
    if (maya_hwspecs_load_dir(conf->hwspecs, &hw) < 0)
        return maya_error("cannot check --maya-emulate: no GPU descriptions in %s", conf->hwspecs);
    int rc = spank_emulate_parse(&hw, value, base_dir, e);
    maya_hwspecs_free(&hw);
    return rc;
}

int spank_emulate_report(const char *value, char *report, size_t size)
{
    char buf[4096];
    report[0] = 0;
    if (!value || maya_snprintf(buf, sizeof buf, "%s", value) < 0)
        return -1;
    char *save = NULL;
    strtok_r(buf, ",", &save); /* <gpu>x<count>: not looked at */
    for (char *kv = strtok_r(NULL, ",", &save); kv; kv = strtok_r(NULL, ",", &save))
        if (!strncmp(kv, "report=", 7) && kv[7] && maya_snprintf(report, size, "%s", kv + 7) < 0)
            return -1;
    return 0;
}

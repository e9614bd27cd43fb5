/* Reading GPU and cluster descriptions (libconfuse files).
 *
 * The `props` schema is generated from MAYA_DEVICE_PROP_FIELDS, so adding a
 * field to cudaDeviceProp means adding one line to that list. Every field is
 * required: a file that lacks one fails at the end of its section, naming the
 * field, rather than handing a program a silent zero.
 */
#define _GNU_SOURCE
#include "maya/hwspec.h"
#include "maya/common.h"
#include "confuse_parse.h"

#include <confuse.h>
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- schema ---- */

#define PROP_OPT_STR(n)  CFG_STR(#n, NULL, CFGF_NODEFAULT),
#define PROP_OPT_UUID(n) CFG_STR(#n, NULL, CFGF_NODEFAULT),
#define PROP_OPT_INT(n)  CFG_INT(#n, 0, CFGF_NODEFAULT),
#define PROP_OPT_UINT(n) CFG_INT(#n, 0, CFGF_NODEFAULT),
#define PROP_OPT_SIZE(n) CFG_INT(#n, 0, CFGF_NODEFAULT),
#define PROP_OPT_INT2(n) CFG_INT_LIST(#n, NULL, CFGF_NODEFAULT),
#define PROP_OPT_INT3(n) CFG_INT_LIST(#n, NULL, CFGF_NODEFAULT),
#define PROP_OPT(kind, n) PROP_OPT_##kind(n)

static cfg_opt_t props_opts[] = {
    MAYA_DEVICE_PROP_FIELDS(PROP_OPT)
    CFG_END()
};

#define PERF_OPT(n) CFG_FLOAT(#n, 0, CFGF_NODEFAULT),
#define PERF_LIMIT_OPT(n, def) CFG_FLOAT(#n, def, CFGF_NONE),
static cfg_opt_t perf_opts[] = {
    MAYA_GPU_PERF_FIELDS(PERF_OPT)
    MAYA_GPU_PERF_LIMIT_FIELDS(PERF_LIMIT_OPT)
    CFG_END()
};

static cfg_opt_t gpu_opts[] = {
    CFG_STR_LIST("aliases", "{}", CFGF_NONE),
    CFG_STR("description", "", CFGF_NONE),
    CFG_SEC("props", props_opts, CFGF_NODEFAULT),
    CFG_SEC("perf", perf_opts, CFGF_NODEFAULT),
    CFG_END()
};

static cfg_opt_t cluster_opts[] = {
    CFG_STR("description", "", CFGF_NONE),
    CFG_STR("gpu", NULL, CFGF_NODEFAULT),
    CFG_INT("gpus_per_node", 0, CFGF_NODEFAULT),
    CFG_INT("nodes", 0, CFGF_NONE),
    CFG_STR("intra_node", "nvswitch", CFGF_NONE),
    CFG_FLOAT("nvlink_gbps", 0, CFGF_NONE),
    CFG_FLOAT("intra_latency_us", 0, CFGF_NODEFAULT),
    CFG_INT("nics_per_node", 0, CFGF_NODEFAULT),
    CFG_FLOAT("nic_gbps", 0, CFGF_NODEFAULT),
    CFG_FLOAT("nic_latency_us", 0, CFGF_NODEFAULT),
    CFG_BOOL("nvls", cfg_false, CFGF_NONE),
    CFG_FLOAT("price_per_gpu_hour", 0, CFGF_NONE),
    CFG_FLOAT("host_speed", 1, CFGF_NONE),
    CFG_INT_LIST("nic_of_gpu", NULL, CFGF_NODEFAULT),
    CFG_END()
};

static cfg_opt_t top_opts[] = {
    CFG_SEC("gpu", gpu_opts, CFGF_MULTI | CFGF_TITLE | CFGF_NO_TITLE_DUPES),
    CFG_SEC("cluster", cluster_opts, CFGF_MULTI | CFGF_TITLE | CFGF_NO_TITLE_DUPES),
    CFG_END()
};

/* ---- validation, run by libconfuse as each section closes so that errors
 * carry the file and line ---- */

static int list_len_ok(cfg_t *cfg, const char *sec, const char *name, unsigned want)
{
    if (cfg_size(cfg, name) != want) {
        cfg_error(cfg, "%s: %s needs %u integers, found %u", sec, name, want, cfg_size(cfg, name));
        return 0;
    }
    return 1;
}

/* libconfuse takes "nan" and "inf" as floats: a rate or a latency must be
 * a real number, or every op priced from it is silently wrong */
static int finite_nonneg(double v)
{
    return v >= 0 && isfinite(v);
}

static int validate_props(cfg_t *props, const char *gpu)
{
    int ok = 1;
#define CHECK_PRESENT(kind, n) \
    if (cfg_size(props, #n) == 0) { \
        cfg_error(props, "gpu \"%s\": props lacks %s (every cudaDeviceProp field is required)", gpu, #n); \
        ok = 0; \
    }
    MAYA_DEVICE_PROP_FIELDS(CHECK_PRESENT)
#undef CHECK_PRESENT
    if (!ok)
        return 0;
#define CHECK_LEN_STR(n) \
    if (strlen(cfg_getstr(props, #n)) >= sizeof(((struct cudaDeviceProp *)0)->n)) { \
        cfg_error(props, "gpu \"%s\": %s is longer than %zu bytes", gpu, #n, \
                  sizeof(((struct cudaDeviceProp *)0)->n) - 1); ok = 0; }
#define CHECK_LEN_UUID(n)
#define CHECK_LEN_INT(n)
#define CHECK_LEN_UINT(n)
#define CHECK_LEN_SIZE(n)
#define CHECK_LEN_INT2(n) ok &= list_len_ok(props, gpu, #n, 2);
#define CHECK_LEN_INT3(n) ok &= list_len_ok(props, gpu, #n, 3);
#define CHECK_LEN(kind, n) CHECK_LEN_##kind(n)
    MAYA_DEVICE_PROP_FIELDS(CHECK_LEN)
    if (cfg_getint(props, "totalGlobalMem") <= 0 || cfg_getint(props, "multiProcessorCount") <= 0) {
        cfg_error(props, "gpu \"%s\": totalGlobalMem and multiProcessorCount must be positive", gpu);
        ok = 0;
    }
    return ok;
}

static int validate_gpu(cfg_t *parent, cfg_opt_t *opt)
{
    cfg_t *gpu = cfg_opt_getnsec(opt, cfg_opt_size(opt) - 1);
    const char *title = cfg_title(gpu);
    if (cfg_size(gpu, "props") == 0) {
        cfg_error(gpu, "gpu \"%s\": expected a props { ... } section", title);
        return -1;
    }
    if (cfg_size(gpu, "perf") == 0) {
        cfg_error(gpu, "gpu \"%s\": expected a perf { ... } section", title);
        return -1;
    }
    if (!validate_props(cfg_getsec(gpu, "props"), title))
        return -1;
    cfg_t *perf = cfg_getsec(gpu, "perf");
#define CHECK_PERF(n) \
    if (cfg_size(perf, #n) == 0) { \
        cfg_error(perf, "gpu \"%s\": perf lacks %s", title, #n); return -1; } \
    if (!finite_nonneg(cfg_getfloat(perf, #n))) { \
        cfg_error(perf, "gpu \"%s\": perf %s must not be negative (nor nan or inf)", title, #n); return -1; }
    MAYA_GPU_PERF_FIELDS(CHECK_PERF)
#undef CHECK_PERF
    double share = cfg_getfloat(perf, "static_power_share"), cap = cfg_getfloat(perf, "power_limit_watts");
    double tdp = cfg_getfloat(perf, "tdp_watts"), lim = cfg_getfloat(perf, "sm_clock_limit_mhz");
    if (share < 0 || share > 0.9) {
        cfg_error(perf, "gpu \"%s\": perf static_power_share is %g; expected 0 to 0.9", title, share);
        return -1;
    }
    if (cap < 0 || lim < 0) {
        cfg_error(perf, "gpu \"%s\": perf power_limit_watts and sm_clock_limit_mhz must not be negative", title);
        return -1;
    }
    if (cap > 0 && (tdp <= 0 || cap <= share * tdp)) {
        cfg_error(perf, "gpu \"%s\": perf power_limit_watts = %g: expected more than the power that does not "
                  "follow the clock (static_power_share x tdp_watts = %g W)%s", title, cap, share * tdp,
                  tdp <= 0 ? ", and tdp_watts above 0" : "");
        return -1;
    }
    if (lim > 0 && cfg_getfloat(perf, "sm_clock_mhz") <= 0) {
        cfg_error(perf, "gpu \"%s\": perf sm_clock_limit_mhz needs sm_clock_mhz (the clock the figures assume)",
                  title);
        return -1;
    }
    if (cfg_size(gpu, "aliases") > 8) {
        cfg_error(gpu, "gpu \"%s\": at most 8 aliases", title);
        return -1;
    }
    return 0;
}

static int validate_cluster(cfg_t *parent, cfg_opt_t *opt)
{
    cfg_t *c = cfg_opt_getnsec(opt, cfg_opt_size(opt) - 1);
    const char *title = cfg_title(c);
    static const char *required[] = { "gpu", "gpus_per_node", "intra_latency_us",
                                      "nics_per_node", "nic_gbps", "nic_latency_us" };
    for (size_t i = 0; i < MAYA_ARRAY_LEN(required); i++) {
        if (cfg_size(c, required[i]) == 0) {
            cfg_error(c, "cluster \"%s\": expected %s = ...", title, required[i]);
            return -1;
        }
    }
    const char *intra = cfg_getstr(c, "intra_node");
    if (strcmp(intra, "nvswitch") && strcmp(intra, "pairwise") && strcmp(intra, "pcie")) {
        cfg_error(c, "cluster \"%s\": intra_node is \"%s\"; expected nvswitch, pairwise or pcie",
                  title, intra);
        return -1;
    }
    if (cfg_getint(c, "gpus_per_node") < 1 || cfg_getint(c, "gpus_per_node") > MAYA_NODE_GPUS_MAX) {
        cfg_error(c, "cluster \"%s\": gpus_per_node must be 1..%d", title, MAYA_NODE_GPUS_MAX);
        return -1;
    }
    long gpn = cfg_getint(c, "gpus_per_node"), nics = cfg_getint(c, "nics_per_node");
    if (nics > MAYA_NODE_GPUS_MAX) {
        cfg_error(c, "cluster \"%s\": nics_per_node is %ld; expected 0..%d", title, nics, MAYA_NODE_GPUS_MAX);
        return -1;
    }
    unsigned nmap = cfg_size(c, "nic_of_gpu");
    if (nmap && (long)nmap != gpn) {
        cfg_error(c, "cluster \"%s\": nic_of_gpu lists %u NICs; expected one per GPU (%ld)", title, nmap, gpn);
        return -1;
    }
    for (unsigned i = 0; i < nmap; i++) {
        long v = cfg_getnint(c, "nic_of_gpu", i);
        if (v < 0 || v >= nics) {
            cfg_error(c, "cluster \"%s\": nic_of_gpu[%u] is %ld; expected a NIC index 0..%ld", title, i, v,
                      nics - 1);
            return -1;
        }
    }
    if (cfg_getint(c, "nodes") < 0 || cfg_getint(c, "nics_per_node") < 0 ||
        !finite_nonneg(cfg_getfloat(c, "nic_gbps")) || !finite_nonneg(cfg_getfloat(c, "nic_latency_us")) ||
        !finite_nonneg(cfg_getfloat(c, "intra_latency_us")) || !finite_nonneg(cfg_getfloat(c, "nvlink_gbps")) ||
        !finite_nonneg(cfg_getfloat(c, "price_per_gpu_hour"))) {
        cfg_error(c, "cluster \"%s\": counts, bandwidths, latencies and prices must not be negative (nor nan or inf)",
                  title);
        return -1;
    }
    double hs = cfg_getfloat(c, "host_speed");
    if (!(hs >= 0.01 && hs <= 100)) {
        cfg_error(c, "cluster \"%s\": host_speed is %g; expected 0.01 to 100 (the hosts' CPU speed "
                  "relative to the machine maya runs on)", title, hs);
        return -1;
    }
    return 0;
}

/* ---- conversion into structs ---- */

static const char *const intra_link_names[] = { "nvswitch", "pairwise", "pcie" };

const char *maya_intra_link_name(enum maya_intra_link l)
{
    return (unsigned)l < MAYA_ARRAY_LEN(intra_link_names) ? intra_link_names[l] : "unknown";
}

int maya_intra_link_parse(const char *s, enum maya_intra_link *out)
{
    for (size_t i = 0; s && i < MAYA_ARRAY_LEN(intra_link_names); i++)
        if (strcmp(s, intra_link_names[i]) == 0) {
            *out = (enum maya_intra_link)i;
            return 0;
        }
    return -1;
}

static int parse_uuid(const char *s, unsigned char out[16])
{
    /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as nvidia-smi prints it */
    if (strncmp(s, "GPU-", 4) == 0)
        s += 4;
    int n = 0;
    for (; *s && n < 32; s++) {
        if (*s == '-')
            continue;
        if (!isxdigit((unsigned char)*s))
            return -1;
        int v = isdigit((unsigned char)*s) ? *s - '0' : (tolower((unsigned char)*s) - 'a' + 10);
        if (n % 2 == 0)
            out[n / 2] = (unsigned char)(v << 4);
        else
            out[n / 2] |= (unsigned char)v;
        n++;
    }
    return (n == 32 && *s == 0) ? 0 : -1;
}

static int fill_gpu(cfg_t *gpu, const char *path, struct maya_gpu_spec *g)
{
    memset(g, 0, sizeof *g);
    snprintf(g->key, sizeof g->key, "%s", cfg_title(gpu));
    snprintf(g->file, sizeof g->file, "%s", path);
    snprintf(g->description, sizeof g->description, "%s", cfg_getstr(gpu, "description"));
    g->naliases = (int)cfg_size(gpu, "aliases");
    for (int i = 0; i < g->naliases; i++)
        snprintf(g->aliases[i], sizeof g->aliases[i], "%s", cfg_getnstr(gpu, "aliases", i));

    cfg_t *p = cfg_getsec(gpu, "props");
    struct cudaDeviceProp *d = &g->prop;
#define FILL_STR(n)  snprintf(d->n, sizeof d->n, "%s", cfg_getstr(p, #n));
#define FILL_UUID(n) \
    if (parse_uuid(cfg_getstr(p, #n), (unsigned char *)d->n.bytes) < 0) \
        return maya_error("%s: gpu \"%s\": uuid \"%s\" is not GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", \
                          path, g->key, cfg_getstr(p, #n));
#define FILL_INT(n)  d->n = (int)cfg_getint(p, #n);
#define FILL_UINT(n) d->n = (unsigned)cfg_getint(p, #n);
#define FILL_SIZE(n) d->n = (size_t)cfg_getint(p, #n);
#define FILL_INT2(n) for (int i = 0; i < 2; i++) d->n[i] = (int)cfg_getnint(p, #n, i);
#define FILL_INT3(n) for (int i = 0; i < 3; i++) d->n[i] = (int)cfg_getnint(p, #n, i);
#define FILL(kind, n) FILL_##kind(n)
    MAYA_DEVICE_PROP_FIELDS(FILL)
#undef FILL

    cfg_t *perf = cfg_getsec(gpu, "perf");
#define FILL_PERF(n) g->perf.n = cfg_getfloat(perf, #n);
#define FILL_PERF_LIMIT(n, def) FILL_PERF(n)
    MAYA_GPU_PERF_FIELDS(FILL_PERF)
    MAYA_GPU_PERF_LIMIT_FIELDS(FILL_PERF_LIMIT)
#undef FILL_PERF_LIMIT
#undef FILL_PERF
    return 0;
}

static void fill_cluster(cfg_t *c, const char *path, struct maya_cluster_spec *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->key, sizeof s->key, "%s", cfg_title(c));
    snprintf(s->file, sizeof s->file, "%s", path);
    snprintf(s->description, sizeof s->description, "%s", cfg_getstr(c, "description"));
    snprintf(s->gpu, sizeof s->gpu, "%s", cfg_getstr(c, "gpu"));
    s->gpus_per_node = (int)cfg_getint(c, "gpus_per_node");
    s->nodes = (int)cfg_getint(c, "nodes");
    const char *intra = cfg_getstr(c, "intra_node");
    s->intra = !strcmp(intra, "pairwise") ? MAYA_LINK_PAIRWISE
             : !strcmp(intra, "pcie") ? MAYA_LINK_PCIE : MAYA_LINK_NVSWITCH;
    s->nvlink_gbps = cfg_getfloat(c, "nvlink_gbps");
    s->intra_latency_us = cfg_getfloat(c, "intra_latency_us");
    s->nics_per_node = (int)cfg_getint(c, "nics_per_node");
    s->nic_gbps = cfg_getfloat(c, "nic_gbps");
    s->nic_latency_us = cfg_getfloat(c, "nic_latency_us");
    s->nvls = cfg_getbool(c, "nvls") ? 1 : 0;
    s->price_per_gpu_hour = cfg_getfloat(c, "price_per_gpu_hour");
    s->host_speed = cfg_getfloat(c, "host_speed");
    unsigned nmap = cfg_size(c, "nic_of_gpu");
    for (int i = 0; i < s->gpus_per_node && i < MAYA_NODE_GPUS_MAX; i++)
        s->nic_of_gpu[i] = nmap ? (uint16_t)cfg_getnint(c, "nic_of_gpu", (unsigned)i)
                                : (uint16_t)(s->nics_per_node > 0 ? (long)i * s->nics_per_node / s->gpus_per_node : 0);
}

int maya_cluster_nic_of(const struct maya_cluster_spec *c, int local)
{
    if (!c || c->nics_per_node <= 0 || local < 0 || local >= c->gpus_per_node || local >= MAYA_NODE_GPUS_MAX)
        return 0;
    int n = c->nic_of_gpu[local];
    return n < c->nics_per_node ? n : 0;
}

int maya_hwspecs_load_file(const char *path, struct maya_hwspecs *out)
{
    cfg_t *cfg = cfg_init(top_opts, CFGF_NONE);
    if (!cfg)
        return maya_error("out of memory");
    cfg_set_validate_func(cfg, "gpu", validate_gpu);
    cfg_set_validate_func(cfg, "cluster", validate_cluster);
    if (maya_cfg_parse(cfg, path, "hwspec file (see maya-hwspec(5))") < 0)
        return -1;

    unsigned ng = cfg_size(cfg, "gpu"), nc = cfg_size(cfg, "cluster");
    if (ng + nc == 0) {
        cfg_free(cfg);
        return maya_error("%s: expected gpu \"NAME\" { ... } or cluster \"NAME\" { ... }, found neither", path);
    }
    /* Grow only what this file adds to: realloc(p, 0) would free p. */
    if (ng) {
        struct maya_gpu_spec *gpus = realloc(out->gpus, (out->ngpus + ng) * sizeof *gpus);
        if (!gpus) {
            cfg_free(cfg);
            return maya_error("out of memory");
        }
        out->gpus = gpus;
    }
    if (nc) {
        struct maya_cluster_spec *cl = realloc(out->clusters, (out->nclusters + nc) * sizeof *cl);
        if (!cl) {
            cfg_free(cfg);
            return maya_error("out of memory");
        }
        out->clusters = cl;
    }

    for (unsigned i = 0; i < ng; i++) {
        cfg_t *sec = cfg_getnsec(cfg, "gpu", i);
        if (maya_hwspecs_find_gpu(out, cfg_title(sec))) {
            cfg_free(cfg);
            return maya_error("%s: gpu \"%s\" is already defined", path, cfg_title(sec));
        }
        if (fill_gpu(sec, path, &out->gpus[out->ngpus]) < 0) {
            cfg_free(cfg);
            return -1;
        }
        out->ngpus++;
    }
    for (unsigned i = 0; i < nc; i++) {
        cfg_t *sec = cfg_getnsec(cfg, "cluster", i);
        if (maya_hwspecs_find_cluster(out, cfg_title(sec))) {
            cfg_free(cfg);
            return maya_error("%s: cluster \"%s\" is already defined", path, cfg_title(sec));
        }
        fill_cluster(sec, path, &out->clusters[out->nclusters++]);
    }
    cfg_free(cfg);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Load the *.conf files of one directory in name order (so that duplicate
 * definitions are reported the same way every time). */
static int load_conf_dir(const char *dir, struct maya_hwspecs *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* an absent subdirectory simply holds nothing */
    char *names[1024];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAYA_ARRAY_LEN(names)) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".conf") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        if (rc == 0 && maya_snprintf(path, sizeof path, "%s/%s", dir, names[i]) == 0)
            rc = maya_hwspecs_load_file(path, out);
        free(names[i]);
    }
    return rc;
}

int maya_hwspecs_load_dir(const char *dir, struct maya_hwspecs *out)
{
    char sub[PATH_MAX];
    memset(out, 0, sizeof *out);
    if (maya_snprintf(sub, sizeof sub, "%s/gpus", dir) < 0 || load_conf_dir(sub, out) < 0 ||
        maya_snprintf(sub, sizeof sub, "%s/clusters", dir) < 0 || load_conf_dir(sub, out) < 0) {
        maya_hwspecs_free(out);
        return -1;
    }
    if (out->ngpus == 0) {
        maya_hwspecs_free(out);
        return maya_error("no GPU descriptions in %s/gpus", dir);
    }
    return 0;
}

int maya_hwspecs_load_default(const void *addr, struct maya_hwspecs *out)
{
    const char *env = getenv("MAYA_HWSPEC_DIR");
    if (env && *env)
        return maya_hwspecs_load_dir(env, out);
    char data[PATH_MAX], dir[PATH_MAX + 16];
    if (maya_data_dir(addr, data, sizeof data) < 0)
        return -1;
    snprintf(dir, sizeof dir, "%s/hwspecs", data);
    return maya_hwspecs_load_dir(dir, out);
}

void maya_hwspecs_free(struct maya_hwspecs *hw)
{
    free(hw->gpus);
    free(hw->clusters);
    memset(hw, 0, sizeof *hw);
}

const struct maya_gpu_spec *maya_hwspecs_find_gpu(const struct maya_hwspecs *hw, const char *name)
{
    for (size_t i = 0; i < hw->ngpus; i++) {
        const struct maya_gpu_spec *g = &hw->gpus[i];
        if (strcasecmp(g->key, name) == 0)
            return g;
        for (int a = 0; a < g->naliases; a++)
            if (strcasecmp(g->aliases[a], name) == 0)
                return g;
    }
    return NULL;
}

const struct maya_cluster_spec *maya_hwspecs_find_cluster(const struct maya_hwspecs *hw, const char *name)
{
    for (size_t i = 0; i < hw->nclusters; i++)
        if (strcasecmp(hw->clusters[i].key, name) == 0)
            return &hw->clusters[i];
    return NULL;
}

void maya_hwspecs_gpu_names(const struct maya_hwspecs *hw, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < hw->ngpus && used < size; i++) {
        const struct maya_gpu_spec *g = &hw->gpus[i];
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", g->key);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
        for (int a = 0; a < g->naliases && used < size; a++) {
            n = snprintf(buf + used, size - used, "%s%s", a ? "|" : " (", g->aliases[a]);
            if (n < 0 || (size_t)n >= size - used)
                return;
            used += (size_t)n;
            if (a == g->naliases - 1 && used + 1 < size) {
                buf[used++] = ')';
                buf[used] = 0;
            }
        }
    }
}

int maya_parse_gpu_count(const struct maya_hwspecs *hw, const char *s,
                         const struct maya_gpu_spec **gpu, int *count)
{
    char names[2048];
    const char *x = s ? strrchr(s, 'x') : NULL;
    if (!x || x == s || !x[1]) {
        maya_hwspecs_gpu_names(hw, names, sizeof names);
        return maya_error("\"%s\": expected <gpu>x<count>, e.g. h100x8; GPUs: %s", s ? s : "", names);
    }
    char name[MAYA_NAME_MAX];
    size_t len = (size_t)(x - s);
    if (len >= sizeof name)
        return maya_error("\"%s\": GPU name too long", s);
    memcpy(name, s, len);
    name[len] = 0;
    int64_t n;
    if (maya_parse_i64(x + 1, &n) < 0 || n < 1 || n > 1000000)
        return maya_error("\"%s\": count \"%s\" is not a number from 1 to 1000000", s, x + 1);
    const struct maya_gpu_spec *g = maya_hwspecs_find_gpu(hw, name);
    if (!g) {
        maya_hwspecs_gpu_names(hw, names, sizeof names);
        return maya_error("unknown GPU \"%s\"; known: %s", name, names);
    }
    *gpu = g;
    *count = (int)n;
    return 0;
}

int maya_default_cluster(const struct maya_hwspecs *hw, const struct maya_gpu_spec *gpu,
                         int count, struct maya_cluster_spec *out)
{
    char key[MAYA_NAME_MAX + 16];
    snprintf(key, sizeof key, "default-%s", gpu->key);
    const struct maya_cluster_spec *c = maya_hwspecs_find_cluster(hw, key);
    /* else the first cluster file built around this GPU (dgx-h100 for H100) */
    for (size_t i = 0; !c && i < hw->nclusters; i++)
        if (strcasecmp(hw->clusters[i].gpu, gpu->key) == 0)
            c = &hw->clusters[i];
    if (c) {
        *out = *c;
    } else {
        memset(out, 0, sizeof *out);
        snprintf(out->key, sizeof out->key, "%.*s", (int)sizeof out->key - 1, key);
        snprintf(out->description, sizeof out->description,
                 "built-in: 8 GPUs per node on NVSwitch, 8 NICs of 50 GB/s");
        out->gpus_per_node = 8;
        out->intra = MAYA_LINK_NVSWITCH;
        out->intra_latency_us = 3;
        out->nics_per_node = 8;
        out->nic_gbps = 50;
        out->nic_latency_us = 5;
        for (int i = 0; i < 8; i++)
            out->nic_of_gpu[i] = (uint16_t)i;
    }
    snprintf(out->gpu, sizeof out->gpu, "%s", gpu->key);
    if (count < out->gpus_per_node)
        out->gpus_per_node = count;
    out->nodes = (count + out->gpus_per_node - 1) / out->gpus_per_node;
    return 0;
}

/* ---- clocks under power and clock limits ---- */

int maya_gpu_clocks(const struct maya_gpu_spec *g, double *sm_mhz, double *tensor_mhz)
{
    const struct maya_gpu_perf *p = &g->perf;
    double sm = p->sm_clock_mhz, tc = p->tensor_clock_mhz > 0 ? p->tensor_clock_mhz : sm;
    double r = 1;
    if (p->power_limit_watts > 0 && p->tdp_watts > 0 && p->power_limit_watts < p->tdp_watts) {
        double s = p->static_power_share;
        double x = (p->power_limit_watts / p->tdp_watts - s) / (1 - s);
        r = x > 0 ? cbrt(x) : 0;
    }
    double lim = p->sm_clock_limit_mhz > 0 ? p->sm_clock_limit_mhz : INFINITY;
    double f_sm = fmin(sm * r, lim), f_tc = fmin(tc * r, lim);
    *sm_mhz = fmin(f_sm, sm);
    *tensor_mhz = fmin(f_tc, tc);
    return *sm_mhz < sm || *tensor_mhz < tc;
}

void maya_gpu_apply_limits(struct maya_gpu_spec *g)
{
    double f_sm, f_tc;
    struct maya_gpu_perf *p = &g->perf;
    if (maya_gpu_clocks(g, &f_sm, &f_tc)) {
        double kc = p->sm_clock_mhz > 0 ? f_sm / p->sm_clock_mhz : 1;
        double tc = p->tensor_clock_mhz > 0 ? p->tensor_clock_mhz : p->sm_clock_mhz;
        double kt = tc > 0 ? f_tc / tc : 1;
        p->fp64_tflops *= kc;
        p->fp32_tflops *= kc;
        p->fp64_tensor_tflops *= kt;
        p->tf32_tflops *= kt;
        p->fp16_tflops *= kt;
        p->bf16_tflops *= kt;
        p->fp8_tflops *= kt;
        p->int8_tops *= kt;
        p->sm_clock_mhz = f_sm;
        if (p->tensor_clock_mhz > 0)
            p->tensor_clock_mhz = f_tc;
    }
    p->power_limit_watts = 0;
    p->sm_clock_limit_mhz = 0;
}

void maya_gpu_limits_describe(const struct maya_gpu_spec *g, char *buf, size_t size)
{
    double f_sm, f_tc;
    const struct maya_gpu_perf *p = &g->perf;
    buf[0] = 0;
    if (!maya_gpu_clocks(g, &f_sm, &f_tc))
        return;
    char why[128] = "";
    if (p->power_limit_watts > 0 && p->power_limit_watts < p->tdp_watts)
        snprintf(why, sizeof why, "power limit %g W of %g W", p->power_limit_watts, p->tdp_watts);
    if (p->sm_clock_limit_mhz > 0)
        snprintf(why + strlen(why), sizeof why - strlen(why), "%sSM clock limit %g MHz", why[0] ? ", " : "",
                 p->sm_clock_limit_mhz);
    snprintf(buf, size, "SM clock %.0f MHz of %g (CUDA cores), %.0f MHz of %g (tensor cores) under its %s",
             f_sm, p->sm_clock_mhz, f_tc, p->tensor_clock_mhz > 0 ? p->tensor_clock_mhz : p->sm_clock_mhz, why);
}

/* ---- printing in the file's own syntax ---- */

static void print_uuid(FILE *fp, const unsigned char *u)
{
    fprintf(fp, "\"GPU-");
    for (int i = 0; i < 16; i++) {
        fprintf(fp, "%02x", u[i]);
        if (i == 3 || i == 5 || i == 7 || i == 9)
            fputc('-', fp);
    }
    fputc('"', fp);
}

void maya_gpu_spec_print(FILE *fp, const struct maya_gpu_spec *g)
{
    const struct cudaDeviceProp *d = &g->prop;
    fprintf(fp, "# from %s\ngpu \"%s\" {\n", g->file, g->key);
    fprintf(fp, "    description = \"%s\"\n    aliases = {", g->description);
    for (int i = 0; i < g->naliases; i++)
        fprintf(fp, "%s\"%s\"", i ? ", " : "", g->aliases[i]);
    fprintf(fp, "}\n    props {\n");
#define PR_STR(n)  fprintf(fp, "        %s = \"%s\"\n", #n, d->n);
#define PR_UUID(n) fprintf(fp, "        %s = ", #n); print_uuid(fp, (const unsigned char *)d->n.bytes); fputc('\n', fp);
#define PR_INT(n)  fprintf(fp, "        %s = %d\n", #n, d->n);
#define PR_UINT(n) fprintf(fp, "        %s = %u\n", #n, d->n);
#define PR_SIZE(n) fprintf(fp, "        %s = %zu\n", #n, d->n);
#define PR_INT2(n) fprintf(fp, "        %s = {%d, %d}\n", #n, d->n[0], d->n[1]);
#define PR_INT3(n) fprintf(fp, "        %s = {%d, %d, %d}\n", #n, d->n[0], d->n[1], d->n[2]);
#define PR(kind, n) PR_##kind(n)
    MAYA_DEVICE_PROP_FIELDS(PR)
#undef PR
    fprintf(fp, "    }\n    perf {\n");
#define PR_PERF(n) fprintf(fp, "        %s = %.10g\n", #n, g->perf.n);
#define PR_PERF_LIMIT(n, def) PR_PERF(n)
    MAYA_GPU_PERF_FIELDS(PR_PERF)
    MAYA_GPU_PERF_LIMIT_FIELDS(PR_PERF_LIMIT)
#undef PR_PERF_LIMIT
#undef PR_PERF
    fprintf(fp, "    }\n}\n");
}

void maya_cluster_spec_print(FILE *fp, const struct maya_cluster_spec *c)
{
    static const char *intra[] = { "nvswitch", "pairwise", "pcie" };
    fprintf(fp, "# from %s\ncluster \"%s\" {\n", c->file[0] ? c->file : "(built in)", c->key);
    fprintf(fp, "    description = \"%s\"\n", c->description);
    fprintf(fp, "    gpu = \"%s\"\n    gpus_per_node = %d\n    nodes = %d\n", c->gpu,
            c->gpus_per_node, c->nodes);
    fprintf(fp, "    intra_node = \"%s\"\n    nvlink_gbps = %g\n    intra_latency_us = %g\n",
            intra[c->intra], c->nvlink_gbps, c->intra_latency_us);
    fprintf(fp, "    nics_per_node = %d\n    nic_gbps = %g\n    nic_latency_us = %g\n",
            c->nics_per_node, c->nic_gbps, c->nic_latency_us);
    fprintf(fp, "    nvls = %s\n", c->nvls ? "true" : "false");
    if (c->price_per_gpu_hour > 0)
        fprintf(fp, "    price_per_gpu_hour = %g\n", c->price_per_gpu_hour);
    fprintf(fp, "    nic_of_gpu = {");
    for (int i = 0; i < c->gpus_per_node && i < MAYA_NODE_GPUS_MAX; i++)
        fprintf(fp, "%s%d", i ? ", " : "", maya_cluster_nic_of(c, i));
    fprintf(fp, "}\n");
    fprintf(fp, "    host_speed = %g\n}\n", c->host_speed > 0 ? c->host_speed : 1);
}

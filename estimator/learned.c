/* Learned models: XGBoost boosted trees, one per (family, GPU), trained by
 * maya-est-train on measured durations (estimator/data/, user profiles).
 *
 * A model predicts log(measured / analytical); the estimate is the
 * analytical one times exp(prediction). A model answers only inside the
 * domain it was fitted on (feature ranges stored in the file, see
 * est_range_rules); elsewhere the caller falls back to the analytical model.
 *
 * Models follow a GPU's architecture and figures, not its name. Each model
 * is of a source GPU, the one it was measured on (its file's key, described
 * in the installed hwspecs). For a target GPU, a family's model is its own
 * key's when that GPU has the target's compute capability, else one of a
 * GPU of the same compute capability (the closest in peak FLOP/s and
 * memory bandwidth): the same SM design; none otherwise. Measured on
 * estimator/data (maya-est-train --transfer): within one compute
 * capability H100-SXM's all-reduce model prices H200's rows at 6.5 % MAPE
 * against 12.1 % analytically; across compute capabilities a borrowed
 * model is mostly worse than the analytical one (A40 GEMMs with A100's
 * model 11.8 % against 10.2 %, A100's with A40's 10.7 % against 10.0 %,
 * A100's with H100's 16.6 % against 10.0 %). The model sees the op as on
 * its source GPU (features from the source's figures) and its correction
 * applies to the target's
 * own analytical time, so a GPU under a new name, or with other clocks,
 * memory or a power limit, keeps the measured efficiency of its
 * architecture while its own peaks set the scale.
 *
 * Predictions are memoised on the feature vector: a training job repeats
 * the same ops every iteration, and one XGBoost call costs tens of us.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xgboost/c_api.h>

#include "est_features.h"
#include "maya/common.h"

#define CACHE_SIZE 8192 /* entries, power of 2 */

struct model {
    BoosterHandle booster;
    float min[EST_NFEAT], max[EST_NFEAT];
    struct maya_gpu_spec src;   /* the GPU it was measured on (its figures make the features) */
    int own;                    /* src is the target's own key */
    int same;                   /* and has the target's figures: one analytical time serves */
};

struct cache_entry {
    int used;
    enum est_family family;
    float x[EST_NFEAT];
    float y;
};

struct est_learned {
    struct model m[EST_NFAMILIES];
    struct cache_entry *cache;
};

static int parse_floats(const char *s, float *out, int n)
{
    for (int i = 0; i < n; i++) {
        char *end;
        out[i] = strtof(s, &end);
        if (end == s)
            return -1;
        s = end;
        if (*s == ',')
            s++;
    }
    return *s ? -1 : 0;
}

static int load_model(const char *path, struct model *m)
{
    if (XGBoosterCreate(NULL, 0, &m->booster) != 0)
        return maya_error("%s: XGBoost: %s", path, XGBGetLastError());
    if (XGBoosterLoadModel(m->booster, path) != 0) {
        int rc = maya_error("%s: not a model XGBoost can read: %s", path, XGBGetLastError());
        XGBoosterFree(m->booster);
        m->booster = NULL;
        return rc;
    }
    /* one row at a time: OpenMP threads would only spin */
    XGBoosterSetParam(m->booster, "nthread", "1");
    const char *ver = NULL, *mn = NULL, *mx = NULL;
    int ok1, ok2, ok3;
    XGBoosterGetAttr(m->booster, "maya_features", &ver, &ok1);
    if (!ok1 || strcmp(ver, EST_FEATURES_VERSION)) {
        maya_error("%s: fitted on features version %s, this estimator computes version %s; "
                   "retrain (make models)", path, ok1 ? ver : "(none)", EST_FEATURES_VERSION);
        goto bad;
    }
    XGBoosterGetAttr(m->booster, "maya_min", &mn, &ok2);
    if (!ok2 || parse_floats(mn, m->min, EST_NFEAT) < 0) {
        maya_error("%s: attribute maya_min is missing or malformed", path);
        goto bad;
    }
    XGBoosterGetAttr(m->booster, "maya_max", &mx, &ok3);
    if (!ok3 || parse_floats(mx, m->max, EST_NFEAT) < 0) {
        maya_error("%s: attribute maya_max is missing or malformed", path);
        goto bad;
    }
    return 0;
bad:
    XGBoosterFree(m->booster);
    m->booster = NULL;
    return -1;
}

/* How close a candidate source GPU is to the target: lower is closer;
 * -1 when its model must not serve (another architecture). */
static double distance(const struct maya_gpu_spec *src, const struct maya_gpu_spec *g)
{
    if (src->prop.major != g->prop.major || src->prop.minor != g->prop.minor)
        return -1;
    double d = 0;
    double a = src->perf.bf16_tflops > 0 ? src->perf.bf16_tflops : src->perf.fp16_tflops;
    double b = g->perf.bf16_tflops > 0 ? g->perf.bf16_tflops : g->perf.fp16_tflops;
    if (a > 0 && b > 0)
        d += fabs(log(a / b));
    if (src->perf.hbm_gbps > 0 && g->perf.hbm_gbps > 0)
        d += fabs(log(src->perf.hbm_gbps / g->perf.hbm_gbps));
    return d;
}

/* The model file of family f to use for g, and its source GPU: the scan
 * reads the models directory once per family (a few dozen names). */
static int pick_model(const char *dir, enum est_family f, const struct maya_gpu_spec *g,
                      const struct maya_hwspecs *installed, char *path, size_t size, struct model *m)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s-", est_family_name(f));
    size_t plen = strlen(prefix);
    DIR *dh = opendir(dir);
    if (!dh)
        return 0;
    double best = -1;
    char best_key[MAYA_NAME_MAX] = "";
    struct dirent *e;
    while ((e = readdir(dh))) {
        size_t len = strlen(e->d_name);
        if (len <= plen + 5 || strncmp(e->d_name, prefix, plen) || strcmp(e->d_name + len - 5, ".json"))
            continue;
        char key[MAYA_NAME_MAX];
        if (len - plen - 5 >= sizeof key)
            continue;
        memcpy(key, e->d_name + plen, len - plen - 5);
        key[len - plen - 5] = 0;
        const struct maya_gpu_spec *src = maya_hwspecs_find_gpu(installed, key);
        int own = !strcmp(key, g->key);
        if (!src && own)
            src = g; /* a GPU only the user describes, with models of its own */
        if (!src)
            continue;
        double d = distance(src, g);
        if (d < 0)
            continue;
        if (own)
            d = -0.5; /* its own, same architecture: always first */
        if (best_key[0] == 0 || d < best || (d == best && strcmp(key, best_key) < 0)) {
            best = d;
            snprintf(best_key, sizeof best_key, "%s", key);
            m->src = *src;
            m->own = own;
        }
    }
    closedir(dh);
    if (!best_key[0])
        return 0;
    return est_model_path(path, size, dir, f, best_key) < 0 ? 0 : 1;
}

int est_learned_load(const char *dir, const struct maya_gpu_spec *g, struct est_learned **out)
{
    char def[4096], path[4600];
    struct stat st;
    if (dir && stat(dir, &st) < 0)
        return maya_error("models directory %s: %m", dir);
    if (dir && !S_ISDIR(st.st_mode))
        return maya_error("models directory %s: not a directory", dir);
    if (!dir) {
        if (maya_data_dir((const void *)est_learned_load, def, sizeof def) < 0 ||
            maya_snprintf(def + strlen(def), sizeof def - strlen(def), "/models") < 0)
            return -1;
        dir = def;
    }
    struct est_learned *l = calloc(1, sizeof *l);
    if (!l)
        return maya_error("out of memory");
    XGBSetGlobalConfig("{\"verbosity\": 0}");
    /* The GPUs the installed models were measured on: the installed
     * descriptions, not MAYA_HWSPEC_DIR's (which describes targets). */
    struct maya_hwspecs installed = { 0 };
    char data[4096], hwdir[4200];
    if (maya_data_dir((const void *)est_learned_load, data, sizeof data) == 0 &&
        maya_snprintf(hwdir, sizeof hwdir, "%s/hwspecs", data) == 0 && maya_hwspecs_load_dir(hwdir, &installed) < 0)
        memset(&installed, 0, sizeof installed); /* none: only a target's own models serve */
    for (int f = 0; f < EST_NFAMILIES; f++) {
        if (est_feature_kind((enum est_family)f) == EST_FK_NONE)
            continue;
        if (!pick_model(dir, (enum est_family)f, g, &installed, path, sizeof path, &l->m[f]))
            continue; /* no data for this family on this architecture */
        if (access(path, R_OK) != 0)
            continue;
        struct model *m = &l->m[f];
        m->same = m->own && !memcmp(&m->src.prop, &g->prop, sizeof g->prop) &&
                  !memcmp(&m->src.perf, &g->perf, sizeof g->perf);
        if (load_model(path, m) < 0) {
            maya_hwspecs_free(&installed);
            est_learned_free(l);
            return -1;
        }
    }
    maya_hwspecs_free(&installed);
    *out = l;
    return 0;
}

void est_learned_describe(const struct est_learned *l, const struct maya_gpu_spec *g, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (int f = 0; l && f < EST_NFAMILIES; f++) {
        const struct model *m = &l->m[f];
        if (!m->booster)
            continue;
        int n = m->own ? snprintf(buf + used, size - used, "%s%s %s's own", used ? "; " : "",
                                  est_family_name((enum est_family)f), m->src.key)
                       : snprintf(buf + used, size - used, "%s%s from %s (same compute capability %d.%d)",
                                  used ? "; " : "", est_family_name((enum est_family)f), m->src.key,
                                  m->src.prop.major, m->src.prop.minor);
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
    if (!used)
        snprintf(buf, size, "no learned model for compute capability %d.%d: analytical everywhere",
                 g->prop.major, g->prop.minor);
}

void est_learned_free(struct est_learned *l)
{
    if (!l)
        return;
    for (int f = 0; f < EST_NFAMILIES; f++)
        if (l->m[f].booster)
            XGBoosterFree(l->m[f].booster);
    free(l->cache);
    free(l);
}

static size_t cache_slot(enum est_family f, const float *x)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)f;
    const unsigned char *p = (const unsigned char *)x;
    for (size_t i = 0; i < EST_NFEAT * sizeof *x; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return (size_t)(h & (CACHE_SIZE - 1));
}

int est_learned_booster_predict(void *booster, const float *x, size_t nrows, float *out)
{
    DMatrixHandle dm;
    if (XGDMatrixCreateFromMat(x, nrows, EST_NFEAT, NAN, &dm) != 0)
        return maya_error("XGBoost: %s", XGBGetLastError());
    bst_ulong len = 0;
    const float *y = NULL;
    int rc = XGBoosterPredict((BoosterHandle)booster, dm, 0, 0, 0, &len, &y);
    if (rc != 0 || len != nrows)
        rc = maya_error("XGBoost prediction: %s", rc ? XGBGetLastError() : "wrong number of outputs");
    else
        memcpy(out, y, nrows * sizeof *out);
    XGDMatrixFree(dm);
    return rc;
}

int est_learned_predict(struct est_learned *l, const struct maya_gpu_spec *g,
                        const struct maya_cluster_spec *c, const struct est_desc *d, double *ns)
{
    if (!l || !l->m[d->family].booster)
        return 0;
    const struct model *m = &l->m[d->family];
    /* Models learn the ratio of measured time to the analytical model of
     * their training data, which describes kernels by their bytes (no
     * code): the same here, with bytes read from the code where it was. */
    struct est_desc plain = *d;
    plain.code = 0;
    /* the op as on the model's source GPU; its correction scales the target's time */
    double an_src = est_analytical_ns(&m->src, c, &plain);
    double an = m->same ? an_src : est_analytical_ns(g, c, &plain);
    float x[EST_NFEAT];
    est_features(&m->src, c, &plain, an_src, x);
    if (!est_in_domain(d->family, x, m->min, m->max))
        return 0;
    if (!l->cache && !(l->cache = calloc(CACHE_SIZE, sizeof *l->cache)))
        return 0;
    struct cache_entry *ce = &l->cache[cache_slot(d->family, x)];
    float y;
    if (ce->used && ce->family == d->family && !memcmp(ce->x, x, sizeof x)) {
        y = ce->y;
    } else {
        if (est_learned_booster_predict(m->booster, x, 1, &y) < 0)
            return 0;
        *ce = (struct cache_entry){ 1, d->family, { 0 }, y };
        memcpy(ce->x, x, sizeof x);
    }
    *ns = an * exp(y);
    return 1;
}

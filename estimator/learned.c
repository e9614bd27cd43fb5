/* Learned models: XGBoost boosted trees, one per (family, GPU), trained by
 * maya-est-train on measured durations (estimator/data/, user profiles).
 *
 * A model predicts log(measured / analytical); the estimate is the
 * analytical one times exp(prediction). A model answers only inside the
 * domain it was fitted on (feature ranges stored in the file, see
 * est_range_rules); elsewhere the caller falls back to the analytical model.
 *
 * Predictions are memoised on the feature vector: a training job repeats
 * the same ops every iteration, and one XGBoost call costs tens of us.
 */
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
    for (int f = 0; f < EST_NFAMILIES; f++) {
        if (est_feature_kind((enum est_family)f) == EST_FK_NONE)
            continue;
        if (est_model_path(path, sizeof path, dir, (enum est_family)f, g->key) < 0)
            continue;
        if (access(path, R_OK) != 0)
            continue; /* no data for this family on this GPU */
        if (load_model(path, &l->m[f]) < 0) {
            est_learned_free(l);
            return -1;
        }
    }
    *out = l;
    return 0;
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
    double an = est_analytical_ns(g, c, d);
    float x[EST_NFEAT];
    est_features(g, c, d, an, x);
    const struct model *m = &l->m[d->family];
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

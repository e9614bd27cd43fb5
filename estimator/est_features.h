/* Features for the learned models (features.c) and the model files that
 * hold them (learned.c, train.c). */
#ifndef EST_FEATURES_H
#define EST_FEATURES_H

#include "est_internal.h"

#define EST_NFEAT 16
/* Bumped whenever est_features changes meaning: a model file fitted on
 * other features is refused rather than misread. */
#define EST_FEATURES_VERSION "2"

enum est_feature_kind { EST_FK_NONE, EST_FK_COMPUTE, EST_FK_MEMORY, EST_FK_COLL };

enum est_feature_kind est_feature_kind(enum est_family f);
void est_features(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c,
                  const struct est_desc *d, double analytical_ns, float x[EST_NFEAT]);

struct est_range_rule {
    int feature;
    double margin;     /* how far past the trained min/max a query may go */
};
const struct est_range_rule *est_range_rules(enum est_feature_kind k, int *n);
/* Is x inside the domain a model was fitted on (its per-feature min/max)? */
int est_in_domain(enum est_family f, const float *x, const float *fmin, const float *fmax);

/* Predict nrows rows of EST_NFEAT features with an XGBoost booster. */
int est_learned_booster_predict(void *booster, const float *x, size_t nrows, float *out);

/* "<dir>/<family>-<gpu key>.json" */
int est_model_path(char *buf, size_t size, const char *dir, enum est_family f, const char *gpu_key);

#endif

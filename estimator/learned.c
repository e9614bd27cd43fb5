/* Learned models: not trained yet. Every learned request falls back to the
 * analytical model and is marked extrapolated. */
#include <stdlib.h>

#include "est_internal.h"

struct est_learned {
    int unused;
};

int est_learned_load(const char *dir, const struct maya_gpu_spec *g, struct est_learned **out)
{
    (void)dir, (void)g;
    *out = NULL;
    return 0;
}

void est_learned_free(struct est_learned *l)
{
    free(l);
}

int est_learned_predict(struct est_learned *l, const struct maya_gpu_spec *g,
                        const struct maya_cluster_spec *c, const struct est_desc *d, double *ns)
{
    (void)l, (void)g, (void)c, (void)d, (void)ns;
    return 0;
}

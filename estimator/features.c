/* Features of an op for the learned models: the physics (FLOPs, bytes,
 * arithmetic intensity, tile waste, participants, links) rather than ids, so
 * that a tree fitted on some shapes carries over to others. The training
 * tool and the estimator both call est_features, so a model sees at run time
 * exactly what it was fitted on.
 *
 * What a model learns is the ratio of the measured time to the analytical
 * estimate (log), so that it corrects a model that already scales the right
 * way rather than memorising durations.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "est_features.h"

static float lg(double x)
{
    return (float)log2(x > 1 ? x : 1);
}

/* Arithmetic classes that share a peak: fp16 and bf16 tensor cores run at
 * one rate, so a model fitted on fp16 answers for bf16. */
static int prec_class(enum est_prec p)
{
    switch (p) {
    case EST_P_FP16: case EST_P_BF16: return 1;
    case EST_P_TF32: return 2;
    case EST_P_FP32: return 3;
    case EST_P_FP8: return 4;
    case EST_P_INT8: return 5;
    default: return 6;
    }
}

enum est_feature_kind est_feature_kind(enum est_family f)
{
    switch (f) {
    case EST_GEMM: case EST_BATCHED_GEMM: case EST_CONV: case EST_ATTENTION:
        return EST_FK_COMPUTE;
    case EST_KERNEL: case EST_COPY: case EST_MEMSET:
        return EST_FK_MEMORY;
    case EST_HOST:
        return EST_FK_NONE;
    default:
        return EST_FK_COLL;
    }
}

void est_features(const struct maya_gpu_spec *g, const struct maya_cluster_spec *c,
                  const struct est_desc *d, double analytical_ns, float x[EST_NFEAT])
{
    memset(x, 0, EST_NFEAT * sizeof *x);
    double bw = (g->perf.hbm_measured_gbps > 0 ? g->perf.hbm_measured_gbps : g->perf.hbm_gbps) * 1e9;
    switch (est_feature_kind(d->family)) {
    case EST_FK_COMPUTE: {
        double tm = 128, tn = g->prop.major >= 9 ? 256 : 128;
        double m = d->m > 1 ? d->m : 1, n = d->n > 1 ? d->n : 1;
        x[0] = lg(d->m);
        x[1] = lg(d->n);
        x[2] = lg(d->k);
        x[3] = lg(d->batch);
        x[4] = lg(d->flops);
        x[5] = lg(d->bytes);
        x[6] = (float)log2(d->bytes > 0 && d->flops > 0 ? d->flops / d->bytes : 1);
        x[7] = (float)est_gemm_efficiency(g, d);
        x[8] = (float)(1 - m / (ceil(m / tm) * tm)); /* share of the last tile row wasted */
        x[9] = (float)(1 - n / (ceil(n / tn) * tn));
        x[10] = (float)prec_class(d->prec);
        x[11] = lg(analytical_ns);
        x[12] = lg(d->flops / est_peak_flops(g, d->prec) * 1e9); /* ns at peak */
        x[13] = lg(d->bytes / bw * 1e9);                           /* ns at bandwidth */
        x[14] = (float)(d->family == EST_ATTENTION ? 1 + d->backward + 2 * d->causal : 0);
        break;
    }
    case EST_FK_MEMORY:
        x[0] = lg(d->bytes);
        x[1] = lg(d->threads);
        x[2] = (float)d->elem_bytes;
        x[3] = lg(analytical_ns);
        x[4] = lg(d->bytes / bw * 1e9);
        x[5] = (float)d->copy_kind;
        x[6] = (float)d->kclass;
        break;
    case EST_FK_COLL: {
        struct est_links l;
        est_links_get(g, c, &l);
        x[0] = lg(d->bytes);
        x[1] = (float)d->nranks;
        x[2] = (float)d->nodes;
        x[3] = (float)d->ranks_per_node;
        x[4] = (float)l.intra;
        x[5] = (float)(l.nvls && l.intra == MAYA_LINK_NVSWITCH);
        x[6] = lg(analytical_ns);
        x[7] = lg(d->bytes / (d->nodes > 1 ? l.inter_gbps : l.intra_gbps)); /* ns on one link */
        break;
    }
    default:
        break;
    }
}

/* Which features bound a model's domain, and by how much a query may exceed
 * what training saw (log2 units for sizes: 1.0 = twice as large). Counts of
 * ranks and nodes, link kinds, precision and kernel classes must lie within
 * what was seen (kernel class 0, unknown, never is). */
const struct est_range_rule *est_range_rules(enum est_feature_kind k, int *n)
{
    static const struct est_range_rule compute[] = {
        { 0, 1.0 }, { 1, 1.0 }, { 2, 1.0 }, { 3, 0.0 }, { 4, 1.0 }, { 10, 0.0 }, { 14, 0.0 },
    };
    static const struct est_range_rule memory[] = { { 0, 1.0 }, { 5, 0.0 }, { 6, 0.0 } };
    static const struct est_range_rule coll[] = {
        { 0, 1.0 }, { 1, 0.0 }, { 2, 0.0 }, { 3, 0.0 }, { 4, 0.0 }, { 5, 0.0 },
    };
    switch (k) {
    case EST_FK_COMPUTE: *n = (int)(sizeof compute / sizeof *compute); return compute;
    case EST_FK_MEMORY: *n = (int)(sizeof memory / sizeof *memory); return memory;
    case EST_FK_COLL: *n = (int)(sizeof coll / sizeof *coll); return coll;
    default: *n = 0; return NULL;
    }
}

int est_model_path(char *buf, size_t size, const char *dir, enum est_family f, const char *gpu_key)
{
    int n = snprintf(buf, size, "%s/%s-%s.json", dir, est_family_name(f), gpu_key);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

int est_in_domain(enum est_family f, const float *x, const float *fmin, const float *fmax)
{
    int n;
    const struct est_range_rule *r = est_range_rules(est_feature_kind(f), &n);
    for (int i = 0; i < n; i++) {
        int j = r[i].feature;
        if (x[j] < fmin[j] - r[i].margin - 1e-6 || x[j] > fmax[j] + r[i].margin + 1e-6)
            return 0;
    }
    return 1;
}

/* maya-est-train: fit the estimator's learned models on measured durations,
 * measure their accuracy on held-out data, refit the analytical constants.
 *
 *   maya-est-train [--data DIR]... [--hwspecs DIR] --out DIR    train, write models
 *   maya-est-train [--data DIR]... [--hwspecs DIR] --accuracy   held-out MAPE
 *   maya-est-train [--data DIR]... [--hwspecs DIR] --calibrate  fit analytical constants
 *   maya-est-train [--data DIR]... [--hwspecs DIR] --transfer   one GPU's model on another's rows
 *
 * Tables (estimator/data/SOURCE.md describes them; a user's own profile in the
 * same format can be added with another --data): gemm.csv, kernel.csv,
 * attention.csv, allreduce.csv, sendrecv.csv, gemm_simt.csv (GEMMs on
 * CUDA cores, for --calibrate only: no model is trained on them) and
 * gemm_deepbench.csv (GEMMs on tensor cores that train a model but are
 * left out of --calibrate: the analytical tensor-core constants stay those
 * fitted on gemm.csv). Every row becomes the same est_desc the
 * estimator builds from a trace record, so features and the analytical
 * baseline are computed by the estimator's own code.
 *
 * Reproducible: XGBoost runs single-threaded with a fixed seed, rows are
 * read in file order.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xgboost/c_api.h>

#include "../est_features.h"
#include "maya/common.h"

#define ROUNDS 400
#define MAX_CLUSTERS 32

struct row {
    struct est_desc d;
    int gpu;                 /* index in hw.gpus */
    int cluster;             /* index in clusters[] */
    double meas_ns;
    char group[48];
    int calib_only;          /* gemm_simt.csv: fits the analytical SIMT constants, trains no model */
    int model_only;          /* gemm_deepbench.csv: trains a model, fits no analytical constant */
};

static struct maya_hwspecs hw;
static struct maya_cluster_spec clusters[MAX_CLUSTERS];
static char cluster_ids[MAX_CLUSTERS][64];
static int nclusters;
static struct row *rows;
static size_t nrows, caprows;

/* The node a table's `setup` names for a GPU: "dgx" = the GPU's own node
 * file (dgx-a100, dgx-h100, hgx-h200); "dgx-100g" = that node with one
 * 100 Gb/s link per GPU between nodes; "pairwise" = NVLink bridges between
 * pairs only, 4 GPUs (vidur's Azure VMs) or 8 (A40). */
static int cluster_for(int gpu, const char *setup)
{
    char id[64];
    snprintf(id, sizeof id, "%d/%s", gpu, setup);
    for (int i = 0; i < nclusters; i++)
        if (!strcmp(cluster_ids[i], id))
            return i;
    if (nclusters == MAX_CLUSTERS)
        return maya_error("too many node setups");
    struct maya_cluster_spec *c = &clusters[nclusters];
    maya_default_cluster(&hw, &hw.gpus[gpu], 8, c);
    if (!strcmp(setup, "pairwise")) {
        c->intra = MAYA_LINK_PAIRWISE;
        c->gpus_per_node = strcmp(hw.gpus[gpu].key, "A40") ? 4 : 8;
        c->nvls = 0;
    } else if (!strcmp(setup, "dgx-100g")) {
        c->nics_per_node = c->gpus_per_node;
        c->nic_gbps = 12.5;
    } else if (strcmp(setup, "dgx")) {
        return maya_error("setup \"%s\"; expected dgx, dgx-100g or pairwise", setup);
    }
    snprintf(cluster_ids[nclusters], sizeof cluster_ids[0], "%s", id);
    return nclusters++;
}

static struct row *new_row(void)
{
    if (nrows == caprows) {
        caprows = caprows ? caprows * 2 : 4096;
        rows = realloc(rows, caprows * sizeof *rows);
        if (!rows) {
            fprintf(stderr, "maya-est-train: out of memory\n");
            exit(1);
        }
    }
    memset(&rows[nrows], 0, sizeof *rows);
    return &rows[nrows++];
}

/* ---- reading tables ---- */

#define MAX_COLS 16

static int split_csv(char *line, char **cols)
{
    int n = 0;
    for (char *p = line; n < MAX_COLS;) {
        cols[n++] = p;
        p = strchr(p, ',');
        if (!p)
            break;
        *p++ = '\0';
    }
    return n;
}

static int col_index(char **hdr, int nh, const char *name, const char *path)
{
    for (int i = 0; i < nh; i++)
        if (!strcmp(hdr[i], name))
            return i;
    return maya_error("%s: no column \"%s\"", path, name);
}

static int num(const char *path, int line, const char *what, const char *s, double *out)
{
    if (maya_parse_double(s, out) < 0 || !(*out >= 0))
        return maya_error("%s:%d: %s is \"%s\"; expected a number >= 0", path, line, what, s);
    return 0;
}

/* One table: the columns every table has, then per-table ones. */
static int read_table(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.csv", dir, name);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return errno == ENOENT ? 0 : maya_error("cannot open %s: %m", path);
    char line[1024], hline[1024];
    char *hdr[MAX_COLS], *c[MAX_COLS];
    int rc = 0, lineno = 1;
    if (!fgets(hline, sizeof hline, fp)) {
        fclose(fp);
        return maya_error("%s: empty", path);
    }
    hline[strcspn(hline, "\r\n")] = '\0';
    int nh = split_csv(hline, hdr);
    int igpu = col_index(hdr, nh, "gpu", path), igroup = col_index(hdr, nh, "group", path),
        itime = col_index(hdr, nh, "time_us", path);
    if (igpu < 0 || igroup < 0 || itime < 0) {
        fclose(fp);
        return -1;
    }
    int simt_table = !strcmp(name, "gemm_simt"), model_table = !strcmp(name, "gemm_deepbench");
    int is_gemm = !strcmp(name, "gemm") || simt_table || model_table, is_kernel = !strcmp(name, "kernel"), is_attn = !strcmp(name, "attention");
    static const char *const attn_cols[] = { "batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "causal" };
    int ia[7];
    int iop = -1, im = -1, in = -1, ik = -1, iprec = -1, ibytes = -1, isetup = -1, iranks = -1, inodes = -1, irpn = -1;
    if (is_attn) {
        for (int i = 0; i < 7; i++)
            if ((ia[i] = col_index(hdr, nh, attn_cols[i], path)) < 0)
                rc = -1;
    } else if (is_gemm) {
        im = col_index(hdr, nh, "m", path), in = col_index(hdr, nh, "n", path);
        ik = col_index(hdr, nh, "k", path), iprec = col_index(hdr, nh, "prec", path);
        if (im < 0 || in < 0 || ik < 0 || iprec < 0)
            rc = -1;
    } else {
        ibytes = col_index(hdr, nh, "bytes", path);
        if (ibytes < 0 || (is_kernel && (iop = col_index(hdr, nh, "op", path)) < 0))
            rc = -1;
        if (!is_kernel) {
            isetup = col_index(hdr, nh, "setup", path), iranks = col_index(hdr, nh, "ranks", path);
            inodes = col_index(hdr, nh, "nodes", path), irpn = col_index(hdr, nh, "ranks_per_node", path);
            if (isetup < 0 || iranks < 0 || inodes < 0 || irpn < 0)
                rc = -1;
        }
    }
    while (rc == 0 && fgets(line, sizeof line, fp)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        if (split_csv(line, c) != nh) {
            rc = maya_error("%s:%d: expected %d columns", path, lineno, nh);
            break;
        }
        const struct maya_gpu_spec *g = maya_hwspecs_find_gpu(&hw, c[igpu]);
        if (!g) {
            rc = maya_error("%s:%d: unknown GPU \"%s\"", path, lineno, c[igpu]);
            break;
        }
        struct row *r = new_row();
        r->gpu = (int)(g - hw.gpus);
        r->calib_only = simt_table;
        r->model_only = model_table;
        snprintf(r->group, sizeof r->group, "%s", c[igroup]);
        double t;
        if (num(path, lineno, "time_us", c[itime], &t) < 0) {
            rc = -1;
            break;
        }
        r->meas_ns = t * 1e3;
        r->d.batch = 1;
        r->d.nranks = r->d.nodes = r->d.ranks_per_node = 1;
        r->cluster = cluster_for(r->gpu, "dgx");
        if (is_attn) {
            double v[7];
            for (int i = 0; i < 7 && rc == 0; i++)
                rc = num(path, lineno, attn_cols[i], c[ia[i]], &v[i]);
            if (rc < 0)
                break;
            est_desc_attention(&r->d, v[0], v[1], v[2], v[3], v[4], v[5], v[6] != 0, 0, EST_P_FP16);
        } else if (is_gemm) {
            double m, n, k;
            int p = est_prec_parse(c[iprec]);
            if (num(path, lineno, "m", c[im], &m) < 0 || num(path, lineno, "n", c[in], &n) < 0 ||
                num(path, lineno, "k", c[ik], &k) < 0) {
                rc = -1;
                break;
            }
            if (p < 0) {
                rc = maya_error("%s:%d: prec \"%s\" unknown", path, lineno, c[iprec]);
                break;
            }
            est_desc_gemm(&r->d, m, n, k, 1, (enum est_prec)p);
            r->d.family = EST_GEMM;
        } else {
            double bytes;
            if (num(path, lineno, "bytes", c[ibytes], &bytes) < 0) {
                rc = -1;
                break;
            }
            r->d.bytes = bytes;
            if (is_kernel) {
                r->d.family = EST_KERNEL;
                r->d.kclass = est_kclass_of_name(c[iop]);
                if (r->d.kclass == EST_KC_UNKNOWN) {
                    rc = maya_error("%s:%d: op \"%s\" names no kernel class (norm, add, act, rope, ...)",
                                    path, lineno, c[iop]);
                    break;
                }
                r->d.bytes_known = 1;
                r->d.elem_bytes = 2;
            } else {
                double ranks, nodes, rpn;
                if (num(path, lineno, "ranks", c[iranks], &ranks) < 0 ||
                    num(path, lineno, "nodes", c[inodes], &nodes) < 0 ||
                    num(path, lineno, "ranks_per_node", c[irpn], &rpn) < 0) {
                    rc = -1;
                    break;
                }
                r->d.family = !strcmp(name, "allreduce") ? EST_ALLREDUCE : EST_SENDRECV;
                r->d.coll_op = r->d.family == EST_ALLREDUCE ? MAYA_COLL_ALLREDUCE : MAYA_COLL_SEND;
                r->d.nranks = (int)ranks, r->d.nodes = (int)nodes, r->d.ranks_per_node = (int)rpn;
                if ((r->cluster = cluster_for(r->gpu, c[isetup])) < 0) {
                    rc = maya_error("%s:%d: bad setup", path, lineno);
                    break;
                }
            }
        }
    }
    fclose(fp);
    return rc;
}

/* ---- fitting ---- */

static double analytical(const struct row *r)
{
    return est_analytical_ns(&hw.gpus[r->gpu], &clusters[r->cluster], &r->d);
}

static void row_features(const struct row *r, float *x)
{
    est_features(&hw.gpus[r->gpu], &clusters[r->cluster], &r->d, analytical(r), x);
}

#define XGB(call) do { \
    if ((call) != 0) { \
        maya_error("XGBoost: %s", XGBGetLastError()); \
        goto fail; \
    } \
} while (0)

/* Fit one model on rows idx[0..n); fills the domain (min/max per feature). */
static BoosterHandle fit(const size_t *idx, size_t n, float *fmin, float *fmax)
{
    float *x = malloc(n * EST_NFEAT * sizeof *x), *y = malloc(n * sizeof *y);
    DMatrixHandle dm = NULL;
    BoosterHandle b = NULL;
    if (!x || !y)
        goto fail;
    for (int j = 0; j < EST_NFEAT; j++)
        fmin[j] = INFINITY, fmax[j] = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[idx[i]];
        row_features(r, x + i * EST_NFEAT);
        y[i] = (float)log(r->meas_ns / analytical(r));
        for (int j = 0; j < EST_NFEAT; j++) {
            fmin[j] = fminf(fmin[j], x[i * EST_NFEAT + j]);
            fmax[j] = fmaxf(fmax[j], x[i * EST_NFEAT + j]);
        }
    }
    XGB(XGDMatrixCreateFromMat(x, n, EST_NFEAT, NAN, &dm));
    XGB(XGDMatrixSetFloatInfo(dm, "label", y, n));
    XGB(XGBoosterCreate(&dm, 1, &b));
    static const char *const params[][2] = {
        { "booster", "gbtree" }, { "objective", "reg:squarederror" }, { "tree_method", "hist" },
        { "eta", "0.05" }, { "max_depth", "7" }, { "min_child_weight", "2" },
        { "subsample", "0.8" }, { "lambda", "1" }, { "seed", "7" }, { "nthread", "1" },
        { "verbosity", "0" },
    };
    for (size_t i = 0; i < MAYA_ARRAY_LEN(params); i++)
        XGB(XGBoosterSetParam(b, params[i][0], params[i][1]));
    for (int it = 0; it < ROUNDS; it++)
        XGB(XGBoosterUpdateOneIter(b, it, dm));
    XGDMatrixFree(dm);
    free(x);
    free(y);
    return b;
fail:
    if (b)
        XGBoosterFree(b);
    if (dm)
        XGDMatrixFree(dm);
    free(x);
    free(y);
    return NULL;
}

/* Rows of one family on one GPU. */
static size_t select_rows(enum est_family f, int gpu, size_t *idx)
{
    size_t n = 0;
    for (size_t i = 0; i < nrows; i++)
        if (rows[i].d.family == f && rows[i].gpu == gpu && !rows[i].calib_only)
            idx[n++] = i;
    return n;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Held out: every 4th group (sorted by name, starting with the 2nd), so
 * whole architectures / GEMM shapes / message sizes are unseen in training. */
static int held_out(const char *group, char **groups, size_t ng)
{
    char **hit = bsearch(&group, groups, ng, sizeof *groups, cmp_str);
    return hit && (hit - groups) % 4 == 1;
}

static size_t sorted_groups(const size_t *idx, size_t n, char **groups)
{
    for (size_t i = 0; i < n; i++)
        groups[i] = rows[idx[i]].group;
    qsort(groups, n, sizeof *groups, cmp_str);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++)
        if (!ng || strcmp(groups[ng - 1], groups[i]))
            groups[ng++] = groups[i];
    return ng;
}

static void fmt_floats(char *buf, size_t size, const float *v)
{
    size_t o = 0;
    for (int j = 0; j < EST_NFEAT && o < size; j++)
        o += (size_t)snprintf(buf + o, size - o, "%s%.9g", j ? "," : "", isfinite(v[j]) ? v[j] : 0.0f);
}

/* Call fn for every family and GPU with enough rows to fit a model on
 * (idx: their indexes in rows[]); stops at the first failure. */
static int each_model(int (*fn)(enum est_family f, int gpu, const size_t *idx, size_t n, void *ctx), void *ctx)
{
    size_t *idx = malloc((nrows ? nrows : 1) * sizeof *idx);
    if (!idx)
        return maya_error("out of memory");
    int rc = 0;
    for (int f = 0; f < EST_NFAMILIES && rc == 0; f++)
        for (size_t g = 0; g < hw.ngpus && rc == 0; g++) {
            size_t n = select_rows((enum est_family)f, (int)g, idx);
            if (n >= 20)
                rc = fn((enum est_family)f, (int)g, idx, n, ctx);
        }
    free(idx);
    return rc;
}

static int train_one(enum est_family f, int g, const size_t *idx, size_t n, void *ctx)
{
    const char *out = ctx;
    float fmin[EST_NFEAT], fmax[EST_NFEAT];
    BoosterHandle b = fit(idx, n, fmin, fmax);
    if (!b)
        return -1;
    char path[4200], tmp[4300], buf[1024];
    int rc = 0;
    est_model_path(path, sizeof path, out, f, hw.gpus[g].key);
    snprintf(tmp, sizeof tmp, "%s.tmp.json", path);
    XGBoosterSetAttr(b, "maya_features", EST_FEATURES_VERSION);
    fmt_floats(buf, sizeof buf, fmin);
    XGBoosterSetAttr(b, "maya_min", buf);
    fmt_floats(buf, sizeof buf, fmax);
    XGBoosterSetAttr(b, "maya_max", buf);
    snprintf(buf, sizeof buf, "%zu", n);
    XGBoosterSetAttr(b, "maya_rows", buf);
    if (XGBoosterSaveModel(b, tmp) != 0 || rename(tmp, path) != 0)
        rc = maya_error("cannot write %s: %s", path, XGBGetLastError());
    else
        printf("%s: %zu rows\n", path, n);
    XGBoosterFree(b);
    return rc;
}

static int train_all(const char *out)
{
    if (mkdir(out, 0755) < 0 && errno != EEXIST)
        return maya_error("cannot create %s: %m", out);
    return each_model(train_one, (void *)out);
}

/* Fit on the rows outside the held-out groups, print MAPE on the others. */
static int accuracy_one(enum est_family f, int g, const size_t *idx, size_t n, void *ctx)
{
    (void)ctx;
    size_t *tr = malloc(n * sizeof *tr), *te = malloc(n * sizeof *te);
    char **groups = malloc(n * sizeof *groups);
    float *x = malloc(n * EST_NFEAT * sizeof *x), *y = malloc(n * sizeof *y);
    int rc = 0;
    if (!tr || !te || !groups || !x || !y) {
        rc = maya_error("out of memory");
        goto out;
    }
    size_t ng = sorted_groups(idx, n, groups), ntr = 0, nte = 0;
    for (size_t i = 0; i < n; i++) {
        if (held_out(rows[idx[i]].group, groups, ng))
            te[nte++] = idx[i];
        else
            tr[ntr++] = idx[i];
    }
    if (!nte || !ntr)
        goto out;
    float fmin[EST_NFEAT], fmax[EST_NFEAT];
    BoosterHandle b = fit(tr, ntr, fmin, fmax);
    if (!b) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < nte; i++)
        row_features(&rows[te[i]], x + i * EST_NFEAT);
    rc = est_learned_booster_predict(b, x, nte, y);
    XGBoosterFree(b);
    if (rc < 0)
        goto out;
    double err_a = 0, err_l = 0;
    for (size_t i = 0; i < nte; i++) {
        const struct row *r = &rows[te[i]];
        double an = analytical(r);
        double ln = est_in_domain(f, x + i * EST_NFEAT, fmin, fmax) ? an * exp(y[i]) : an;
        err_a += fabs(an - r->meas_ns) / r->meas_ns;
        err_l += fabs(ln - r->meas_ns) / r->meas_ns;
    }
    const char *fam = est_family_name(f), *gk = hw.gpus[g].key;
    printf("family=%s gpu=%s model=analytical mape_pct=%.2f n_train=%zu n_test=%zu\n", fam, gk,
           100 * err_a / nte, ntr, nte);
    printf("family=%s gpu=%s model=learned mape_pct=%.2f n_train=%zu n_test=%zu\n", fam, gk,
           100 * err_l / nte, ntr, nte);
out:
    free(tr), free(te), free(groups), free(x), free(y);
    return rc;
}

static int accuracy(void)
{
    printf("# held-out accuracy: for each family and GPU, whole groups of rows are held out (every 4th\n"
           "# group sorted by name: transformer architectures for GEMMs and kernels, GEMM shapes for the\n"
           "# XLA grid, prefill chunk / KV-cache lengths for attention, message sizes for collectives);\n"
           "# models are fitted on the rest. mape_pct is the mean absolute percentage error on the\n"
           "# held-out rows; the learned model falls back to the analytical one for rows outside its\n"
           "# trained domain, as the estimator does. The analytical model's few constants (est_calib,\n"
           "# maya-est-train --calibrate) were fitted on all rows.\n");
    return each_model(accuracy_one, NULL);
}

/* ---- transfer: one GPU's model serving another (learned.c borrows) ----
 * For each family and each pair of GPUs with rows, fit on every row of
 * the source (as the installed model is), and price the target's rows as
 * the estimator does with a borrowed model: features from the source's
 * figures, the correction applied to the target's own analytical time. */

struct transfer {
    int src;
    BoosterHandle b;
    float fmin[EST_NFEAT], fmax[EST_NFEAT];
    size_t n_src;
};

static int transfer_to(enum est_family f, int g, const size_t *idx, size_t n, void *ctx)
{
    struct transfer *t = ctx;
    if (g == t->src)
        return 0;
    const struct maya_gpu_spec *src = &hw.gpus[t->src], *dst = &hw.gpus[g];
    double err_a = 0, err_t = 0;
    size_t in = 0;
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[idx[i]];
        float x[EST_NFEAT], y;
        double an_src = est_analytical_ns(src, &clusters[r->cluster], &r->d), an = analytical(r);
        est_features(src, &clusters[r->cluster], &r->d, an_src, x);
        double ns = an;
        if (est_in_domain(f, x, t->fmin, t->fmax) && est_learned_booster_predict(t->b, x, 1, &y) == 0) {
            ns = an * exp(y);
            in++;
        }
        err_a += fabs(an - r->meas_ns) / r->meas_ns;
        err_t += fabs(ns - r->meas_ns) / r->meas_ns;
    }
    printf("family=%s from=%s to=%s same_cc=%d analytical_mape_pct=%.2f transfer_mape_pct=%.2f "
           "n_train=%zu n_test=%zu in_domain=%zu\n", est_family_name(f), src->key, dst->key,
           src->prop.major == dst->prop.major && src->prop.minor == dst->prop.minor, 100 * err_a / n,
           100 * err_t / n, t->n_src, n, in);
    return 0;
}

static int transfer_from(enum est_family f, int g, const size_t *idx, size_t n, void *ctx)
{
    (void)ctx;
    struct transfer t = { .src = g, .n_src = n };
    if (!(t.b = fit(idx, n, t.fmin, t.fmax)))
        return -1;
    size_t *other = malloc((nrows ? nrows : 1) * sizeof *other);
    int rc = other ? 0 : maya_error("out of memory");
    for (size_t d = 0; rc == 0 && d < hw.ngpus; d++) {
        size_t m = select_rows(f, (int)d, other);
        if (m >= 20)
            rc = transfer_to(f, (int)d, other, m, &t);
    }
    free(other);
    XGBoosterFree(t.b);
    return rc;
}

static int transfer(void)
{
    printf("# transfer: each GPU's model (fitted on all its rows) pricing another GPU's rows as a\n"
           "# borrowed model does (features from the source's figures, the correction applied to the\n"
           "# target's analytical time; outside the source's domain the analytical time stands);\n"
           "# same_cc: the two have one compute capability, the only case the estimator borrows.\n");
    return each_model(transfer_from, NULL);
}

/* ---- calibrating the analytical model ---- */

/* Which GEMM rows the fit at hand uses: -1 all, 0 those on tensor cores,
 * 1 those on CUDA cores (est_simt). */
static int fit_simt = -1;

/* Mean |log(analytical / measured)| over the rows of the given families
 * (collectives: single-node rows only; see calibrate). */
static double log_error(const enum est_family *fams, int nf)
{
    double s = 0;
    size_t n = 0;
    for (size_t i = 0; i < nrows; i++) {
        int keep = 0;
        for (int j = 0; j < nf; j++)
            keep |= rows[i].d.family == fams[j];
        if (!keep || rows[i].d.nodes > 1 || rows[i].model_only)
            continue;
        if (fit_simt >= 0 && rows[i].d.family == EST_GEMM && est_simt(&hw.gpus[rows[i].gpu], rows[i].d.prec) != fit_simt)
            continue;
        s += fabs(log(analytical(&rows[i]) / rows[i].meas_ns));
        n++;
    }
    return n ? s / n : 0;
}

/* Coordinate descent over a few constants, each on a multiplicative grid. */
static void descend(double **knobs, const char *const *names, int nk, const enum est_family *fams, int nf)
{
    for (int pass = 0; pass < 6; pass++) {
        for (int k = 0; k < nk; k++) {
            double best = *knobs[k], best_err = log_error(fams, nf);
            for (double s = 0.5; s <= 2.0; s *= 1.05) {
                double save = *knobs[k];
                *knobs[k] = save * s;
                double e = log_error(fams, nf);
                if (e < best_err - 1e-9)
                    best_err = e, best = *knobs[k];
                *knobs[k] = save;
            }
            *knobs[k] = best;
        }
    }
    for (int k = 0; k < nk; k++)
        printf("    .%s = %.4g,\n", names[k], *knobs[k]);
    printf("    (mean |log error| %.4f)\n", log_error(fams, nf));
}

static void calibrate(void)
{
    static const enum est_family gemm[] = { EST_GEMM }, mem[] = { EST_KERNEL }, ar[] = { EST_ALLREDUCE },
                                 p2p[] = { EST_SENDRECV }, attn[] = { EST_ATTENTION };
    fit_simt = 0;
    printf("# GEMM on tensor cores (mean |log error| before: %.4f)\n", log_error(gemm, 1));
    double *gk[] = { &est_calib.gemm_eff_max, &est_calib.gemm_k_half, &est_calib.gemm_small_tile_exp,
                     &est_calib.gemm_mem_eff };
    static const char *const gn[] = { "gemm_eff_max", "gemm_k_half", "gemm_small_tile_exp", "gemm_mem_eff" };
    descend(gk, gn, 4, gemm, 1);
    fit_simt = 1;
    printf("# GEMM on CUDA cores (mean |log error| before: %.4f)\n", log_error(gemm, 1));
    double *sk[] = { &est_calib.gemm_eff_max_simt, &est_calib.gemm_k_half_simt, &est_calib.gemm_small_tile_exp_simt };
    static const char *const sn[] = { "gemm_eff_max_simt", "gemm_k_half_simt", "gemm_small_tile_exp_simt" };
    descend(sk, sn, 3, gemm, 1);
    fit_simt = -1;
    /* printed for reference; analytical.c keeps the published figure */
    printf("# attention, vLLM paged inference kernels only (before: %.4f)\n", log_error(attn, 1));
    double *ak[] = { &est_calib.attn_eff_fwd };
    static const char *const an[] = { "attn_eff_fwd" };
    descend(ak, an, 1, attn, 1);
    printf("# memory-bound kernels (before: %.4f)\n", log_error(mem, 1));
    double *mk[] = { &est_calib.mem_eff };
    static const char *const mn[] = { "mem_eff" };
    descend(mk, mn, 1, mem, 1);
    /* Collectives follow NCCL's tuning model with published figures
     * (collectives.c); only the PCIe ring share is fitted, on the
     * all-reduces of PCIe-linked nodes. Send/recv is reported, not fitted. */
    printf("# all-reduce (before: %.4f)\n", log_error(ar, 1));
    double *ck[] = { &est_calib.ring_eff_pcie };
    static const char *const cn[] = { "ring_eff_pcie" };
    descend(ck, cn, 1, ar, 1);
    printf("# send/recv (mean |log error| %.4f, not fitted)\n", log_error(p2p, 1));
}

static void usage(FILE *fp)
{
    fprintf(fp, "usage: maya-est-train [--data DIR]... [--hwspecs DIR] (--out DIR | --accuracy | --calibrate |\n"
                "       --transfer)\n"
                "  --data DIR     tables gemm.csv kernel.csv attention.csv allreduce.csv sendrecv.csv\n"
                "                 gemm_simt.csv (--calibrate only) gemm_deepbench.csv (models only)\n"
                "                 (default estimator/data; give it again to add a profile of your own)\n"
                "  --hwspecs DIR  GPU and cluster files (default hwspecs)\n"
                "  --out DIR      fit on every row, write <family>-<gpu>.json models there\n"
                "  --accuracy     fit on part of the data, print MAPE on the held-out rest\n"
                "  --calibrate    fit the analytical model's constants, print them\n"
                "  --transfer     MAPE of each GPU's model on every other GPU's rows\n");
}

int main(int argc, char **argv)
{
    maya_set_error_prefix("maya-est-train");
    const char *data[8], *hwdir = "hwspecs", *out = NULL;
    int ndata = 0, mode = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--data") && i + 1 < argc && ndata < 8) {
            data[ndata++] = argv[++i];
        } else if (!strcmp(a, "--hwspecs") && i + 1 < argc) {
            hwdir = argv[++i];
        } else if (!strcmp(a, "--out") && i + 1 < argc) {
            out = argv[++i];
            mode = 1;
        } else if (!strcmp(a, "--accuracy")) {
            mode = 2;
        } else if (!strcmp(a, "--calibrate")) {
            mode = 3;
        } else if (!strcmp(a, "--transfer")) {
            mode = 4;
        } else {
            maya_error("unknown or incomplete argument \"%s\"", a);
            usage(stderr);
            return 2;
        }
    }
    if (!mode) {
        usage(stderr);
        return 2;
    }
    if (!ndata)
        data[ndata++] = "estimator/data";
    if (maya_hwspecs_load_dir(hwdir, &hw) < 0)
        return 1;
    XGBSetGlobalConfig("{\"verbosity\": 0}");
    static const char *const tables[] = { "gemm", "gemm_simt", "gemm_deepbench", "kernel", "attention", "allreduce",
                                          "sendrecv" };
    for (int d = 0; d < ndata; d++)
        for (size_t t = 0; t < MAYA_ARRAY_LEN(tables); t++)
            if (read_table(data[d], tables[t]) < 0)
                return 1;
    if (!nrows) {
        maya_error("no rows in %s", data[0]);
        return 1;
    }
    int rc = 0;
    if (mode == 1)
        rc = train_all(out);
    else if (mode == 2)
        rc = accuracy();
    else if (mode == 4)
        rc = transfer();
    else
        calibrate();
    free(rows);
    maya_hwspecs_free(&hw);
    return rc < 0 ? 1 : 0;
}

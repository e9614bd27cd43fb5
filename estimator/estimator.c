/* The estimator's API: per-family model choice over one op description. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "est_internal.h"
#include "est_profile.h"
#include "maya/common.h"

static const char *const family_names[EST_NFAMILIES] = {
    [EST_GEMM] = "gemm", [EST_BATCHED_GEMM] = "batched_gemm", [EST_ATTENTION] = "attention",
    [EST_CONV] = "conv", [EST_KERNEL] = "kernel", [EST_COPY] = "copy", [EST_MEMSET] = "memset",
    [EST_ALLREDUCE] = "allreduce", [EST_ALLGATHER] = "allgather",
    [EST_REDUCESCATTER] = "reducescatter", [EST_BROADCAST] = "broadcast",
    [EST_ALLTOALL] = "alltoall", [EST_SENDRECV] = "sendrecv", [EST_HOST] = "host",
};

static const char *const model_names[] = {
    [EST_ANALYTICAL] = "analytical", [EST_LEARNED] = "learned", [EST_ORACLE] = "oracle",
};

const char *est_family_name(enum est_family f)
{
    return (unsigned)f < EST_NFAMILIES ? family_names[f] : "?";
}

const char *est_model_name(enum est_model m)
{
    return (unsigned)m < MAYA_ARRAY_LEN(model_names) ? model_names[m] : "?";
}

int est_model_parse(const char *s)
{
    for (size_t i = 0; i < MAYA_ARRAY_LEN(model_names); i++)
        if (s && !strcasecmp(s, model_names[i]))
            return (int)i;
    return -1;
}

int est_family_parse(const char *s)
{
    for (int i = 0; i < EST_NFAMILIES; i++)
        if (s && !strcasecmp(s, family_names[i]))
            return i;
    return -1;
}

int est_models_parse(const char *spec, enum est_model model[EST_NFAMILIES])
{
    char buf[512];
    if (!spec || !*spec)
        return maya_error("empty estimator choice; expected analytical, learned, oracle or "
                          "FAMILY=MODEL,...");
    if (maya_snprintf(buf, sizeof buf, "%s", spec) < 0)
        return -1;
    enum est_model out[EST_NFAMILIES];
    memcpy(out, model, sizeof out);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        const char *mname = eq ? eq + 1 : item;
        int m = est_model_parse(mname);
        if (m < 0)
            return maya_error("unknown estimator model \"%s\" in \"%s\"; expected analytical, "
                              "learned or oracle", mname, spec);
        if (!eq) {
            for (int f = 0; f < EST_NFAMILIES; f++)
                out[f] = (enum est_model)m;
            continue;
        }
        *eq = '\0';
        int f = est_family_parse(item);
        if (f < 0) {
            char names[256] = "";
            for (int i = 0; i < EST_NFAMILIES; i++) {
                strcat(names, i ? ", " : "");
                strcat(names, family_names[i]);
            }
            return maya_error("unknown op family \"%s\" in \"%s\"; expected one of %s",
                              item, spec, names);
        }
        out[f] = (enum est_model)m;
    }
    memcpy(model, out, sizeof out);
    return 0;
}

int est_create(const struct est_config *cfg, struct estimator **out)
{
    if (!cfg || !cfg->gpu)
        return maya_error("estimator: no GPU given");
    struct estimator *e = calloc(1, sizeof *e);
    if (!e)
        return maya_error("out of memory");
    e->gpu = *cfg->gpu;
    maya_gpu_apply_limits(&e->gpu); /* the peaks its clock and power limits allow */
    if (cfg->cluster)
        e->cluster = *cfg->cluster;
    else
        maya_default_cluster(&(struct maya_hwspecs){ .gpus = &e->gpu, .ngpus = 1 }, &e->gpu, 8,
                             &e->cluster);
    int need_oracle = 0, need_learned = 0;
    for (int f = 0; f < EST_NFAMILIES; f++) {
        if ((unsigned)cfg->model[f] > EST_ORACLE) {
            free(e);
            return maya_error("estimator: family %s has model %d; expected analytical, learned "
                              "or oracle", family_names[f], (int)cfg->model[f]);
        }
        e->model[f] = cfg->model[f];
        need_oracle |= e->model[f] == EST_ORACLE;
        need_learned |= e->model[f] == EST_LEARNED;
    }
    if (need_oracle) {
        if (!cfg->oracle_path && !cfg->profile_dir) {
            free(e);
            return maya_error("estimator: oracle mode needs a durations file (--oracle FILE) or a "
                              "profile (--oracle-profile DIR)");
        }
        if ((cfg->oracle_path && est_oracle_load(cfg->oracle_path, &e->oracle) < 0) ||
            (cfg->profile_dir && est_measured_load(cfg->profile_dir, &e->measured) < 0)) {
            est_destroy(e);
            return -1;
        }
    }
    if (need_learned && est_learned_load(cfg->models_dir, &e->gpu, &e->learned) < 0) {
        est_destroy(e);
        return -1;
    }
    *out = e;
    return 0;
}

void est_models_describe(const struct estimator *e, char *buf, size_t size)
{
    if (size)
        buf[0] = 0;
    if (e && e->learned && size)
        est_learned_describe(e->learned, &e->gpu, buf, size);
}

void est_destroy(struct estimator *e)
{
    if (!e)
        return;
    est_oracle_free(e->oracle);
    est_measured_free(e->measured);
    est_learned_free(e->learned);
    free(e);
}

#define EST_MAX_OP_NS 1e15 /* 11.6 days */

static uint64_t to_ns(double ns)
{
    if (!(ns > 0))
        return 0;
    if (ns > 1.8e19)
        return UINT64_MAX;
    return (uint64_t)(ns + 0.5);
}

int est_estimate(struct estimator *e, const struct est_op *op, struct est_result *out)
{
    memset(out, 0, sizeof *out);
    if (!e || !op)
        return maya_error("estimator: no op");
    struct est_desc d;
    est_describe(op, &d);
    out->family = d.family;
    out->no_code = d.family == EST_KERNEL && d.fallback;
    enum est_model want = e->model[d.family];
    double dev, fixed_us = 0;
    /* the learned collective models were trained on NCCL's own choice of
     * algorithm: where the job's NCCL_ALGO / NCCL_PROTO change it, the
     * analytical model, which honours them, answers */
    int narrowed = 0;
    if (d.family >= EST_ALLREDUCE && d.family <= EST_SENDRECV) {
        /* what est_analytical_ns answers, with NCCL's choice kept */
        struct est_coll_plan plan;
        dev = est_coll_ns(&e->gpu, &e->cluster, &d, &plan);
        out->coll_algo = plan.algo;
        out->coll_proto = plan.proto;
        out->coll_bytes = plan.bytes;
        fixed_us = plan.lat_us;
        narrowed = plan.narrowed;
        out->coll_ctas = plan.ctas;
    } else {
        dev = d.family == EST_HOST ? 0 : est_analytical_ns(&e->gpu, &e->cluster, &d);
        if (d.family == EST_GEMM || d.family == EST_BATCHED_GEMM || d.family == EST_CONV) {
            int simt = est_simt(&e->gpu, d.prec);
            out->compute_units = simt ? "cuda_cores" : "tensor_cores";
            out->compute_algo = simt && d.family == EST_CONV && d.winograd ? "winograd_f2x3" : NULL;
        }
    }
    double host = est_host_ns(&e->gpu, op);
    out->model = EST_ANALYTICAL;

    /* the learned send/recv models were trained on one-way sends (vidur's:
     * rank 0 sends, rank 1 receives): a rank that both sends and receives
     * in a group is outside what they saw */
    int both_ways = d.family == EST_SENDRECV && d.both_ways;
    /* a kernel priced from its own code keeps that price: the learned
     * kernel models were fitted on other kernels' times (vLLM's, by class
     * and bytes), whose efficiency is their code's; they refine the kernels
     * that have no code to read (cuDNN's, the fallback rule's) */
    int own_code = d.family == EST_KERNEL && d.code;
    if (want == EST_LEARNED && d.family != EST_HOST && !narrowed && !own_code) {
        double ns;
        if (!both_ways && est_learned_predict(e->learned, &e->gpu, &e->cluster, &d, &ns) == 1) {
            dev = ns;
            out->model = EST_LEARNED;
        } else {
            out->extrapolated = 1;
        }
    }
    /* The oracle answers for device time when the op's family is in oracle
     * mode, and for host time when the host family is: a file's rule first,
     * then a profile's measurement, then what the op's own record measured
     * (a trace recorded by maya profile). */
    int dev_oracle = want == EST_ORACLE, host_oracle = e->model[EST_HOST] == EST_ORACLE;
    if ((dev_oracle || host_oracle) && (e->oracle || e->measured)) {
        int64_t odev = -1, ohost = -1, pdev, phost;
        if (e->oracle && est_oracle_lookup(e->oracle, op, &odev, &ohost) < 0)
            return -1;
        if (e->measured) {
            if (est_measured_lookup(e->measured, op, &pdev, &phost) < 0)
                return -1;
            if (odev < 0)
                odev = pdev;
            if (ohost < 0)
                ohost = phost;
        }
        if (odev < 0 && op->rec && maya_rec_is_call(op->rec->type) && (op->rec->flags & MAYA_F_MEASURED))
            odev = (int64_t)((const struct maya_rec_call *)op->rec)->call.measured_ns;
        int need_dev = dev_oracle && d.family != EST_HOST;
        if (e->oracle && est_oracle_strict(e->oracle) && ((need_dev && odev < 0) || (host_oracle && ohost < 0))) {
            const struct maya_rec_call *c = (const struct maya_rec_call *)op->rec;
            return maya_error("%s: no rule gives the %s duration of rank %d seq %llu (%s%s%s), and "
                              "the file says unmatched=error", est_oracle_path(e->oracle),
                              need_dev && odev < 0 ? "device" : "host", op->rank,
                              op->rec && maya_rec_is_call(op->rec->type) ? (unsigned long long)c->call.seq : 0ull,
                              op->api ? op->api : "?", op->kernel_name ? " " : "",
                              op->kernel_name ? op->kernel_name : "");
        }
        if (need_dev && odev >= 0) {
            dev = (double)odev;
            out->model = EST_ORACLE;
        }
        if (host_oracle && ohost >= 0) {
            host = (double)ohost;
            if (d.family == EST_HOST)
                out->model = EST_ORACLE;
        }
    }
    /* No real op takes days: a duration past this comes from sizes no GPU
     * job has (m=n=k=1T) or a damaged trace, and would saturate or wrap the
     * simulator's clock. It is refused, never printed as a result. */
    if (dev > EST_MAX_OP_NS || host > EST_MAX_OP_NS) {
        const struct maya_rec_call *c = (const struct maya_rec_call *)op->rec;
        return maya_error("rank %d call %llu (%s%s%s): the %s estimate is %.3g s, more than an op can take "
                          "(%.0f days): its sizes are beyond any GPU job", op->rank,
                          op->rec && maya_rec_is_call(op->rec->type) ? (unsigned long long)c->call.seq : 0ull,
                          op->api ? op->api : est_family_name(d.family), op->kernel_name ? " " : "",
                          op->kernel_name ? op->kernel_name : "", dev > EST_MAX_OP_NS ? "device" : "host",
                          (dev > EST_MAX_OP_NS ? dev : host) / 1e9, EST_MAX_OP_NS / 86400e9);
    }
    out->device_ns = to_ns(dev);
    out->host_ns = to_ns(host);
    if (d.family >= EST_ALLREDUCE && d.family <= EST_SENDRECV)
        out->fixed_ns = MAYA_MIN(to_ns(fixed_us * 1e3), out->device_ns);
    return 0;
}

double est_op_flops(const struct est_op *op)
{
    /* only library calls (GEMMs, cuDNN's convolutions, matmuls and
     * attention) are compute families; a kernel launch never is, and
     * describing one again (its code's work evaluated) would double the
     * cost of every estimate the loader makes */
    if (!op || !op->rec || (op->rec->type != MAYA_REC_GEMM && op->rec->type != MAYA_REC_DNN))
        return 0;
    struct est_desc d;
    if (est_describe(op, &d) < 0)
        return 0;
    switch (d.family) {
    case EST_GEMM: case EST_BATCHED_GEMM: case EST_CONV: case EST_ATTENTION:
        return d.flops;
    default:
        return 0;
    }
}

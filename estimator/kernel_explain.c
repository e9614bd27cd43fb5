/* maya estimate launch: what the estimator read from one launch's code and
 * what each unit of the GPU takes for it, as key=value lines. */
#include <stdio.h>

#include "est_internal.h"
#include "maya/common.h"
#include "maya/kwork.h"

static void put_amount(FILE *fp, const char *name, double v, const char *unit)
{
    if (v > 0)
        fprintf(fp, " %s=%.4g%s", name, v, unit);
}

int est_kernel_explain(struct estimator *e, const struct est_op *op, FILE *fp)
{
    struct est_desc d;
    struct est_result res;
    if (!e || !op || !op->rec || op->rec->type != MAYA_REC_LAUNCH)
        return maya_error("estimate launch: not a kernel launch");
    if (est_describe(op, &d) < 0 || est_estimate(e, op, &res) < 0)
        return -1;
    const struct maya_rec_launch *l = (const void *)op->rec;
    fprintf(fp, "kernel=\"%s\" grid=%u,%u,%u block=%u,%u,%u smem=%u\n", op->kernel_name ? op->kernel_name : "?",
            l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->smem_bytes);
    if (!d.code) {
        fprintf(fp, "code=none priced_by=fallback bytes=%.4g (largest integer argument x pointer "
                "parameters, docs/kernel-cost.md)\n", d.bytes);
    } else {
        const struct maya_kwork *w = maya_kernel_work(op->kernel, NULL);
        const struct est_kwork *k = &d.work;
        fprintf(fp, "code=%s sm=%u exprs=%u terms=%u regs=%d smem_bytes=%d%s%s%s\n",
                k->source == MAYA_KW_SASS ? "sass" : "ptx", w ? w->sm : 0, w ? w->nexprs : 0, w ? w->nterms : 0,
                k->regs, k->smem_bytes, k->flags & MAYA_KW_F_LOOP_UNRESOLVED ? " loop_unresolved" : "",
                k->flags & MAYA_KW_F_TRUNCATED ? " truncated" : "",
                k->flags & MAYA_KW_F_BYTES_UNKNOWN ? " bytes_unknown" : "");
        fprintf(fp, "work threads=%.0f", k->threads);
        for (int c = 0; c < MAYA_KW_NCLASSES; c++)
            put_amount(fp, maya_kw_class_name((unsigned)c), k->amount[c], "");
        fprintf(fp, " dram_bytes=%.4g dram_load_bytes=%.4g load_in_flight=%.3g flops=%.4g", k->dram_bytes,
                k->dram_load_bytes, k->load_in_flight, d.flops);
        if (k->reread_bytes > 0)
            fprintf(fp, " reread_bytes=%.4g reread_slice=%.4g", k->reread_bytes, k->reread_slice);
        if (k->unresolved)
            fprintf(fp, " unresolved_terms=%d", k->unresolved);
        fprintf(fp, "\n");
        struct est_kwork_times t;
        est_kwork_times(&e->gpu, k, &t);
        fprintf(fp, "units_us dram=%.3f l2=%.3f fp=%.3f tensor=%.3f sfu=%.3f shared=%.3f issue=%.3f "
                "staging=%.3f bound=%s blocks_per_sm=%.0f waves=%.0f fill=%.3f mem_fill=%.3f code_us=%.3f\n",
                t.dram_ns / 1e3, t.l2_ns / 1e3, t.fp_ns / 1e3, t.mma_ns / 1e3, t.sfu_ns / 1e3, t.smem_ns / 1e3,
                t.issue_ns / 1e3, t.staged_ns / 1e3, t.bound, t.blocks_per_sm, t.waves, t.fill, t.mem_fill, t.total_ns / 1e3);
    }
    double secs = res.device_ns / 1e9;
    fprintf(fp, "family=%s gpu=%s model=%s device_us=%.3f", est_family_name(res.family), e->gpu.key,
            est_model_name(res.model), res.device_ns / 1e3);
    if (d.flops > 0 && secs > 0)
        fprintf(fp, " tflops=%.2f", d.flops / secs / 1e12);
    if (d.bytes > 0 && secs > 0)
        fprintf(fp, " dram_gbps=%.1f", d.bytes / secs / 1e9);
    fprintf(fp, "\n");
    return 0;
}

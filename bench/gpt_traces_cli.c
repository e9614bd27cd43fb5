/* gpt_traces DIR TP PP DP [KEY=VALUE...]: write the rank traces of a
 * GPT-shaped job (gpt_traces.h) into DIR, for tests and experiments.
 * Keys: layers, micro (micro-batches), iters, gpn (GPUs per node), hidden,
 * seq, vocab, buckets, gap_ns, slow (RANK:FACTOR: that rank's host gaps). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpt_traces.h"
#include "maya/common.h"

static int num(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    return maya_parse_i64(s, out) == 0 && *out >= lo && *out <= hi ? 0 : -1;
}

int main(int argc, char **argv)
{
    maya_set_error_prefix("gpt_traces");
    int64_t tp, pp, dp;
    if (argc < 5 || num(argv[2], 1, 1 << 16, &tp) || num(argv[3], 1, 1 << 16, &pp) || num(argv[4], 1, 1 << 20, &dp)) {
        fprintf(stderr, "usage: gpt_traces DIR TP PP DP [layers=N micro=N iters=N gpn=N hidden=N seq=N vocab=N "
                        "buckets=N gap_ns=N slow=RANK:FACTOR]\n");
        return 2;
    }
    struct gpt_shape g;
    gpt_shape_gpt3(&g, (int)tp, (int)pp, (int)dp);
    for (int i = 5; i < argc; i++) {
        char key[32];
        const char *eq = strchr(argv[i], '=');
        int64_t v = 0;
        if (!eq || (size_t)(eq - argv[i]) >= sizeof key) {
            maya_error("\"%s\": expected KEY=VALUE", argv[i]);
            return 2;
        }
        snprintf(key, sizeof key, "%.*s", (int)(eq - argv[i]), argv[i]);
        const char *val = eq + 1;
        if (!strcmp(key, "slow")) {
            char *colon;
            g.slow_rank = (int)strtol(val, &colon, 10);
            g.slow_factor = *colon == ':' ? strtod(colon + 1, NULL) : 0;
            if (colon == val || g.slow_factor <= 0) {
                maya_error("slow=\"%s\": expected RANK:FACTOR", val);
                return 2;
            }
            continue;
        }
        if (num(val, 1, INT64_MAX / 4, &v) < 0) {
            maya_error("%s=\"%s\": expected a positive whole number", key, val);
            return 2;
        }
        if (!strcmp(key, "layers")) g.layers = (int)v;
        else if (!strcmp(key, "micro")) g.microbatches = (int)v;
        else if (!strcmp(key, "iters")) g.iterations = (int)v;
        else if (!strcmp(key, "gpn")) g.gpus_per_node = (int)v;
        else if (!strcmp(key, "hidden")) g.hidden = v;
        else if (!strcmp(key, "seq")) g.seq = v;
        else if (!strcmp(key, "vocab")) g.vocab = v;
        else if (!strcmp(key, "buckets")) g.buckets_per_layer = (int)v;
        else if (!strcmp(key, "gap_ns")) g.gap_ns = (uint64_t)v;
        else {
            maya_error("unknown key \"%s\" (layers, micro, iters, gpn, hidden, seq, vocab, buckets, gap_ns, slow)", key);
            return 2;
        }
    }
    return gpt_write_traces(&g, argv[1]) < 0 ? 1 : 0;
}

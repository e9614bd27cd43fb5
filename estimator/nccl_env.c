/* NCCL_ALGO and NCCL_PROTO, as NCCL reads them: which algorithms and
 * protocols a job lets NCCL choose from. maya's estimator runs in the
 * process the job was started from (maya run, maya report), so the job's
 * environment is its environment; a benchmark run with NCCL_ALGO=NVLS (as
 * Azure's nccl-tests results were) is priced as NVLS.
 *
 * Syntax (NCCL 2.24, src/graph/tuning.cc parseList; read for its rules):
 * a comma-separated list of names, case-insensitive; a leading '^' enables
 * everything but the names. Lists may be given per collective,
 * "ring,tree;allreduce:nvls", semicolon-separated: the first list without a
 * prefix applies to every collective, then "func:" lists replace it for
 * that collective. Names NCCL has and maya does not model (collnetdirect,
 * collnetchain) are accepted and select nothing maya prices. A name NCCL
 * does not have is ignored, as NCCL ignores it.
 *
 * Parsed once per process (the environment does not change under a run);
 * costs one pthread_once check per estimate.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "est_internal.h"

/* the collectives NCCL's lists can name, in enum maya_coll_op order where
 * the op is one NCCL tunes */
static const struct {
    const char *name;
    int op;
} funcs[] = {
    { "broadcast", MAYA_COLL_BROADCAST }, { "reduce", MAYA_COLL_REDUCE },
    { "allgather", MAYA_COLL_ALLGATHER }, { "reducescatter", MAYA_COLL_REDUCESCATTER },
    { "allreduce", MAYA_COLL_ALLREDUCE },
};
#define NFUNCS (sizeof funcs / sizeof funcs[0])

static const char *const algo_names[EST_NCCL_ALGOS] = { "tree", "ring", "nvls", "nvlstree", "pat" };
static const char *const proto_names[EST_NCCL_PROTOS] = { "ll", "ll128", "simple" };

static struct {
    unsigned algo[NFUNCS], proto[NFUNCS]; /* enabled bits per function */
    int restricted;                       /* either variable set */
} env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/* One list ("^ring,tree") into a bit mask over names[0..n). */
static unsigned parse_list(const char *s, size_t len, const char *const *names, int n)
{
    int neg = len > 0 && s[0] == '^';
    if (neg) {
        s++;
        len--;
    }
    unsigned set = 0;
    while (len > 0) {
        size_t w = 0;
        while (w < len && s[w] != ',')
            w++;
        size_t a = 0, b = w;
        while (a < b && isspace((unsigned char)s[a]))
            a++;
        while (b > a && isspace((unsigned char)s[b - 1]))
            b--;
        for (int i = 0; i < n; i++)
            if (strlen(names[i]) == b - a && strncasecmp(s + a, names[i], b - a) == 0)
                set |= 1u << i;
        s += w < len ? w + 1 : w;
        len -= w < len ? w + 1 : w;
    }
    unsigned all = (1u << n) - 1;
    return neg ? all & ~set : set;
}

/* A whole variable ("ring;allreduce:nvls") into per-function masks. */
static void parse_var(const char *v, const char *const *names, int n, unsigned *mask)
{
    unsigned all = (1u << n) - 1;
    for (size_t f = 0; f < NFUNCS; f++)
        mask[f] = all;
    if (!v)
        return;
    int have_default = 0;
    while (*v) {
        size_t len = strcspn(v, ";");
        const char *colon = memchr(v, ':', len);
        if (colon) {
            size_t plen = (size_t)(colon - v);
            unsigned m = parse_list(colon + 1, len - plen - 1, names, n);
            for (size_t f = 0; f < NFUNCS; f++)
                if (strlen(funcs[f].name) == plen && strncasecmp(v, funcs[f].name, plen) == 0)
                    mask[f] = m;
        } else if (!have_default) {
            unsigned m = parse_list(v, len, names, n);
            for (size_t f = 0; f < NFUNCS; f++)
                mask[f] = m;
            have_default = 1;
        }
        v += len;
        if (*v == ';')
            v++;
    }
}

static void env_read(void)
{
    const char *a = getenv("NCCL_ALGO"), *p = getenv("NCCL_PROTO");
    parse_var(a && *a ? a : NULL, algo_names, EST_NCCL_ALGOS, env.algo);
    parse_var(p && *p ? p : NULL, proto_names, EST_NCCL_PROTOS, env.proto);
    env.restricted = (a && *a) || (p && *p);
}

int est_nccl_env_restricted(void)
{
    pthread_once(&env_once, env_read);
    return env.restricted;
}

int est_nccl_env_allows(int coll_op, int algo, int proto)
{
    pthread_once(&env_once, env_read);
    if (!env.restricted)
        return 1;
    for (size_t f = 0; f < NFUNCS; f++)
        if (funcs[f].op == coll_op)
            return (env.algo[f] >> algo & 1) && (env.proto[f] >> proto & 1);
    return 1;
}

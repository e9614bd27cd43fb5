/* maya search: parameters, the command template they fill in, the order
 * strategies try combinations in, and the hash naming a trial's directory. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "maya/common.h"

static int is_name_char(int c, int first)
{
    return isalpha(c) || c == '_' || (!first && (isdigit(c) || c == '-'));
}

/* Length of a parameter name at s (0: not a name). */
static size_t name_len(const char *s)
{
    size_t n = 0;
    while (s[n] && is_name_char((unsigned char)s[n], n == 0))
        n++;
    return n;
}

static int find_param(const struct search_space *s, const char *name, size_t len)
{
    for (int i = 0; i < s->nparams; i++)
        if (strlen(s->params[i].name) == len && !strncmp(s->params[i].name, name, len))
            return i;
    return -1;
}

/* The target a parameter's name reserves: its value is the trial's -g or
 * --cluster rather than (or as well as) a word of the command. */
static int target_of(const char *name)
{
    return !strcmp(name, "gpus") ? SEARCH_TARGET_GPUS : !strcmp(name, "cluster") ? SEARCH_TARGET_CLUSTER : 0;
}

int search_space_add_flag(struct search_space *s, const char *arg)
{
    const char *eq = strchr(arg, '=');
    size_t n = name_len(arg);
    if (!eq || n == 0 || arg + n != eq || !eq[1] || strspn(eq + 1, " ") == strlen(eq + 1))
        return maya_error("--flag \"%s\": expected NAME=WORDS (the words {NAME} stands for when on) with NAME of "
                          "letters, digits, '_' and '-'", arg);
    char spec[64 + 8];
    if (n > 64)
        return maya_error("--flag %.*s: a name of at most 64 characters expected", (int)n, arg);
    snprintf(spec, sizeof spec, "%.*s=off,on", (int)n, arg);
    if (search_space_add_param(s, spec) < 0)
        return -1;
    struct search_param *p = &s->params[s->nparams - 1];
    if (p->target || !(p->flag = strdup(eq + 1))) {
        int target = p->target;
        search_space_drop_last(s);
        return target ? maya_error("--flag %s: gpus and cluster name the trial's GPUs and cluster, not a flag",
                                   spec) : maya_error("out of memory");
    }
    return 0;
}

void search_space_drop_last(struct search_space *s)
{
    struct search_param *p = &s->params[--s->nparams];
    for (int k = 0; k < p->nvalues; k++)
        free(p->values[k]);
    free(p->values);
    free(p->name);
    free(p->flag);
    memset(p, 0, sizeof *p);
}

int search_space_add_param(struct search_space *s, const char *arg)
{
    const char *eq = strchr(arg, '=');
    size_t n = name_len(arg);
    if (!eq || n == 0 || arg + n != eq)
        return maya_error("--param \"%s\": expected NAME=V1,V2,... with NAME of letters, digits, "
                          "'_' and '-' (not starting with a digit or '-')", arg);
    if (find_param(s, arg, n) >= 0)
        return maya_error("--param %.*s is declared twice", (int)n, arg);
    struct search_param p = { .name = strndup(arg, n) };
    char *list = strdup(eq + 1);
    if (!p.name || !list)
        goto oom;
    /* strsep keeps empty fields, so "1,,2" and a trailing comma are caught */
    for (char *rest = list, *v; (v = strsep(&rest, ",")) != NULL;) {
        if (!*v) {
            maya_error("--param %s: an empty value in \"%s\"; expected values separated by commas", p.name, eq + 1);
            goto fail;
        }
        for (int i = 0; i < p.nvalues; i++)
            if (!strcmp(p.values[i], v)) {
                maya_error("--param %s: value \"%s\" is listed twice", p.name, v);
                goto fail;
            }
        char **nv = realloc(p.values, (p.nvalues + 1) * sizeof *nv);
        if (!nv)
            goto oom;
        p.values = nv;
        if (!(p.values[p.nvalues] = strdup(v)))
            goto oom;
        p.nvalues++;
    }
    struct search_param *np = realloc(s->params, (s->nparams + 1) * sizeof *np);
    if (!np)
        goto oom;
    s->params = np;
    p.target = target_of(p.name);
    s->params[s->nparams++] = p;
    free(list);
    return 0;
oom:
    maya_error("out of memory");
fail:
    free(list);
    free(p.name);
    for (int i = 0; i < p.nvalues; i++)
        free(p.values[i]);
    free(p.values);
    return -1;
}

static int expr_eval(const struct search_space *s, const int *choice, const char *text, long long *v, size_t *len,
                     int *used, char *why, size_t size);

/* Call fn for every {NAME} in arg (name and its length); stop at -1. */
static int each_ref(const char *arg, int (*fn)(void *ctx, const char *name, size_t len), void *ctx)
{
    for (const char *p = strchr(arg, '{'); p; p = strchr(p + 1, '{')) {
        size_t n = name_len(p + 1);
        if (n && p[1 + n] == '}' && fn(ctx, p + 1, n) < 0)
            return -1;
    }
    return 0;
}

struct ref_check {
    const struct search_space *s;
    int *used;
    const char *arg;
};

/* The flag parameter an argument is exactly {NAME} of, or -1. */
static int whole_flag(const struct search_space *s, const char *arg)
{
    size_t n = arg[0] == '{' ? name_len(arg + 1) : 0;
    int i = n && arg[1 + n] == '}' && !arg[2 + n] ? find_param(s, arg + 1, n) : -1;
    return i >= 0 && s->params[i].flag ? i : -1;
}

static int check_ref(void *ctx, const char *name, size_t len)
{
    struct ref_check *c = ctx;
    int i = find_param(c->s, name, len);
    if (i < 0)
        return maya_error("{%.*s} in \"%s\" is not a declared parameter; expected --param %.*s=V1,V2,... "
                          "before --", (int)len, name, c->arg, (int)len, name);
    if (c->s->params[i].flag && whole_flag(c->s, c->arg) != i)
        return maya_error("{%.*s} in \"%s\": a --flag stands for whole arguments; expected \"{%.*s}\" alone",
                          (int)len, name, c->arg, (int)len, name);
    c->used[i] = 1;
    return 0;
}

int search_space_set_command(struct search_space *s, char **argv, int argc)
{
    if (s->nparams == 0)
        return maya_error("no --param: expected at least one --param NAME=V1,V2,...");
    int *used = calloc(s->nparams, sizeof *used);
    if (!used)
        return maya_error("out of memory");
    struct ref_check c = { s, used, NULL };
    int rc = 0;
    for (int i = 0; i < argc && rc == 0; i++) {
        c.arg = argv[i];
        rc = each_ref(argv[i], check_ref, &c);
        for (const char *p = strstr(argv[i], "{="); p && rc == 0; p = strstr(p + 2, "{=")) {
            long long v;
            size_t len;
            char why[256];
            if (expr_eval(s, NULL, p + 2, &v, &len, used, why, sizeof why) < 0)
                rc = maya_error("\"%s\": %s", argv[i], why);
        }
    }
    for (int i = 0; i < s->nparams && rc == 0; i++)
        if (!used[i] && !s->params[i].target)
            rc = maya_error("--param %s is not used: expected {%s} somewhere in the command after --",
                            s->params[i].name, s->params[i].name);
    free(used);
    if (rc < 0)
        return -1;
    s->combinations = 1;
    for (int i = 0; i < s->nparams; i++) {
        s->combinations *= (uint64_t)s->params[i].nvalues;
        if (s->combinations > SEARCH_MAX_COMBINATIONS)
            return maya_error("the parameters make more than %d combinations; expected fewer values",
                              SEARCH_MAX_COMBINATIONS);
    }
    s->tmpl = argv;
    s->ntmpl = argc;
    return 0;
}

int search_space_check_option(const struct search_space *s, const char *option, const char *arg)
{
    int *used = calloc(s->nparams ? s->nparams : 1, sizeof *used);
    if (!used)
        return maya_error("out of memory");
    struct ref_check c = { s, used, arg };
    int rc = each_ref(arg, check_ref, &c);
    for (int i = 0; i < s->nparams && rc == 0; i++)
        if (used[i] && s->params[i].flag)
            rc = maya_error("%s \"%s\": {%s} is a --flag, which stands for words of the command only; "
                            "expected a --param", option, arg, s->params[i].name);
    for (const char *p = strstr(arg, "{="); p && rc == 0; p = strstr(p + 2, "{=")) {
        long long v;
        size_t len;
        char why[256];
        if (expr_eval(s, NULL, p + 2, &v, &len, used, why, sizeof why) < 0)
            rc = maya_error("%s \"%s\": %s", option, arg, why);
    }
    free(used);
    return rc;
}

/* EXPR of --require evaluated for choice (NULL: checked only), as {=EXPR}. */
static int require_eval(const struct search_space *s, const int *choice, const char *text, long long *v, char *why,
                        size_t size)
{
    char *braced;
    if (asprintf(&braced, "%s}", text) < 0) {
        snprintf(why, size, "out of memory");
        return -1;
    }
    size_t len;
    int rc = expr_eval(s, choice, braced, v, &len, NULL, why, size);
    if (rc == 0 && braced[len]) {
        snprintf(why, size, "unexpected \"}\" in \"%s\"", text);
        rc = -1;
    }
    free(braced);
    return rc;
}

int search_space_check_require(const struct search_space *s, const char *text)
{
    long long v;
    char why[256];
    if (require_eval(s, NULL, text, &v, why, sizeof why) < 0)
        return maya_error("--require \"%s\": %s", text, why);
    return 0;
}

int search_space_require(const struct search_space *s, const int *choice, const char *text, char *why, size_t size)
{
    long long v;
    if (require_eval(s, choice, text, &v, why, size) < 0)
        return -1;
    if (!v)
        snprintf(why, size, "refused by --require \"%s\"", text);
    return v ? 1 : 0;
}

void search_space_choice(const struct search_space *s, uint64_t index, int *choice)
{
    for (int i = s->nparams - 1; i >= 0; i--) {
        choice[i] = (int)(index % (uint64_t)s->params[i].nvalues);
        index /= (uint64_t)s->params[i].nvalues;
    }
}

/* ---- {=EXPR}: whole-number arithmetic over parameters ----
 * EXPR is + - * / % and parentheses over whole numbers and parameter names
 * (whose values must then be whole numbers; a --flag is 0 off, 1 on); / must
 * divide exactly, so that a derived count (micro-batches for a fixed global
 * batch) is never rounded silently. One comparison (< <= > >= == !=, 1 true
 * and 0 false) may join two sums, for --require. Recursive descent,
 * O(length). */
struct expr {
    const struct search_space *s;
    const int *choice;      /* NULL: check the syntax and names only */
    const char *p;
    char *why;              /* the first error */
    size_t size;
    int *used;              /* parameters named, or NULL */
};

__attribute__((format(printf, 2, 3))) static int expr_fail(struct expr *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!e->why[0])
        vsnprintf(e->why, e->size, fmt, ap);
    va_end(ap);
    return -1;
}

static int expr_sum(struct expr *e, long long *v);

static int expr_atom(struct expr *e, long long *v)
{
    while (*e->p == ' ')
        e->p++;
    if (*e->p == '(') {
        e->p++;
        if (expr_sum(e, v) < 0)
            return -1;
        while (*e->p == ' ')
            e->p++;
        if (*e->p != ')')
            return expr_fail(e, "expected ) in {=%s}", e->p);
        e->p++;
        return 0;
    }
    if (*e->p == '-') {
        e->p++;
        if (expr_atom(e, v) < 0)
            return -1;
        *v = -*v;
        return 0;
    }
    if (isdigit((unsigned char)*e->p)) {
        char *end;
        *v = strtoll(e->p, &end, 10);
        e->p = end;
        return 0;
    }
    size_t n = name_len(e->p);
    int i = n ? find_param(e->s, e->p, n) : -1;
    if (i < 0)
        return expr_fail(e, "expected a number or a declared parameter at \"%s\"", e->p);
    if (e->used)
        e->used[i] = 1;
    e->p += n;
    if (!e->choice) {
        *v = 1;
        return 0;
    }
    if (e->s->params[i].flag) {
        *v = e->choice[i];
        return 0;
    }
    const char *val = e->s->params[i].values[e->choice[i]];
    char *end;
    *v = strtoll(val, &end, 10);
    if (!*val || *end)
        return expr_fail(e, "{=...}: parameter value \"%s\" is not a whole number", val);
    return 0;
}

static int expr_product(struct expr *e, long long *v)
{
    if (expr_atom(e, v) < 0)
        return -1;
    for (;;) {
        while (*e->p == ' ')
            e->p++;
        char op = *e->p;
        if (op != '*' && op != '/' && op != '%')
            return 0;
        e->p++;
        long long r;
        if (expr_atom(e, &r) < 0)
            return -1;
        if (op != '*' && e->choice && r == 0)
            return expr_fail(e, "{=...}: division by zero");
        if (op == '/' && e->choice && *v % r)
            return expr_fail(e, "{=...}: %lld / %lld is not a whole number", *v, r);
        *v = op == '*' ? *v * r : !e->choice ? 1 : op == '/' ? *v / r : *v % r;
    }
}

static int expr_sum(struct expr *e, long long *v)
{
    if (expr_product(e, v) < 0)
        return -1;
    for (;;) {
        while (*e->p == ' ')
            e->p++;
        char op = *e->p;
        if (op != '+' && op != '-')
            return 0;
        e->p++;
        long long r;
        if (expr_product(e, &r) < 0)
            return -1;
        *v = op == '+' ? *v + r : *v - r;
    }
}

/* A sum, or two compared: 1 when the comparison holds, else 0. */
static int expr_compare(struct expr *e, long long *v)
{
    if (expr_sum(e, v) < 0)
        return -1;
    while (*e->p == ' ')
        e->p++;
    static const char *const ops[] = { "<=", ">=", "==", "!=", "<", ">" };
    int k = 0;
    while (k < 6 && strncmp(e->p, ops[k], strlen(ops[k])))
        k++;
    if (k == 6)
        return 0;
    e->p += strlen(ops[k]);
    long long r;
    if (expr_sum(e, &r) < 0)
        return -1;
    long long l = *v;
    *v = k == 0 ? l <= r : k == 1 ? l >= r : k == 2 ? l == r : k == 3 ? l != r : k == 4 ? l < r : l > r;
    return 0;
}

/* Evaluate the expression at text (just after "{="): its value, the
 * length up to and including the closing }, or -1 with why set. */
static int expr_eval(const struct search_space *s, const int *choice, const char *text, long long *v, size_t *len,
                     int *used, char *why, size_t size)
{
    struct expr e = { s, choice, text, why, size, used };
    why[0] = 0;
    if (expr_compare(&e, v) < 0)
        return -1;
    while (*e.p == ' ')
        e.p++;
    if (*e.p != '}')
        return expr_fail(&e, "expected } to end {=%s", text);
    *len = (size_t)(e.p + 1 - text);
    return 0;
}

/* arg with every {NAME} replaced by the choice's value (malloc'd). */
char *search_space_substitute(const struct search_space *s, const int *choice, const char *arg, char *why, size_t size)
{
    size_t cap = strlen(arg) + 1, len = 0;
    char *out = malloc(cap), num[32];
    for (const char *p = arg; out && *p;) {
        size_t n = *p == '{' ? name_len(p + 1) : 0, elen = 0;
        int i = n && p[1 + n] == '}' ? find_param(s, p + 1, n) : -1;
        const char *piece = i >= 0 ? s->params[i].values[choice[i]] : p;
        size_t plen = i >= 0 ? strlen(piece) : 1;
        if (p[0] == '{' && p[1] == '=') {
            long long v;
            if (expr_eval(s, choice, p + 2, &v, &elen, NULL, why, size) < 0) {
                free(out);
                return NULL;
            }
            snprintf(num, sizeof num, "%lld", v);
            piece = num;
            plen = strlen(num);
            n = elen; /* p advances past {= and the expression */
            i = 0;
        }
        if (len + plen + 1 > cap) {
            cap = 2 * (len + plen + 1);
            char *grown = realloc(out, cap);
            if (!grown) {
                free(out);
                return NULL;
            }
            out = grown;
        }
        memcpy(out + len, piece, plen);
        len += plen;
        p += i >= 0 ? n + 2 : 1;
    }
    if (out)
        out[len] = 0;
    return out;
}

/* Append the words of a flag (split at spaces) to argv at *n. 0 or -1. */
static int push_words(char **argv, int *n, const char *words)
{
    for (const char *p = words; *p;) {
        size_t len = strcspn(p, " ");
        if (len && !(argv[(*n)++] = strndup(p, len)))
            return -1;
        p += len + (p[len] == ' ');
    }
    return 0;
}

char **search_space_command(const struct search_space *s, const int *choice, char *why, size_t size)
{
    why[0] = 0;
    int cap = s->ntmpl + 1, n = 0;
    for (int i = 0; i < s->ntmpl; i++) {
        int f = whole_flag(s, s->tmpl[i]);
        cap += f >= 0 ? (int)strlen(s->params[f].flag) : 0; /* at most a word a character */
    }
    char **argv = calloc(cap, sizeof *argv);
    for (int i = 0; argv && i < s->ntmpl; i++) {
        int f = whole_flag(s, s->tmpl[i]), rc = 0;
        if (f >= 0 && choice[f]) /* on: its words; off: nothing */
            rc = push_words(argv, &n, s->params[f].flag);
        else if (f < 0)
            rc = (argv[n++] = search_space_substitute(s, choice, s->tmpl[i], why, size)) ? 0 : -1;
        if (rc < 0) {
            search_free_argv(argv);
            return NULL;
        }
    }
    return argv;
}

void search_free_argv(char **argv)
{
    for (int i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

void search_space_free(struct search_space *s)
{
    for (int i = 0; i < s->nparams; i++) {
        for (int k = 0; k < s->params[i].nvalues; k++)
            free(s->params[i].values[k]);
        free(s->params[i].values);
        free(s->params[i].name);
        free(s->params[i].flag);
    }
    free(s->params);
    memset(s, 0, sizeof *s);
}

/* splitmix64: a small, well-mixed generator; the same seed gives the same
 * draws on every machine. */
uint64_t search_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t *search_order(const struct search_space *s, int random, uint64_t seed)
{
    uint64_t n = s->combinations, state = seed;
    uint64_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (uint64_t i = 0; i < n; i++)
        order[i] = i;
    /* Fisher-Yates; the modulo bias is below 1e-12 for n <= 1e6 */
    for (uint64_t i = n; random && i > 1; i--) {
        uint64_t k = search_random(&state) % i, t = order[i - 1];
        order[i - 1] = order[k];
        order[k] = t;
    }
    return order;
}

uint64_t search_hash(const char *data, size_t len, uint64_t basis)
{
    uint64_t h = basis ? basis : 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)data[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

void search_hash_hex(const char *data, size_t len, char out[13])
{
    snprintf(out, 13, "%012llx", (unsigned long long)(search_hash(data, len, 0) >> 16));
}

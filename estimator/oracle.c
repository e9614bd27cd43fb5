/* Oracle mode: durations from a file instead of a model (docs/oracle-format.md).
 *
 * One rule per line, `key=value` words: matchers (rank, seq, nth, name) and
 * durations (device, host) with units. The most specific matching rule wins
 * (seq > nth > rank > exact name > name pattern; ties: the earlier line),
 * separately for the device and the host duration.
 * Rules with a seq are found through a hash on (rank, seq); the others are
 * scanned, so a lookup costs O(1) + O(rules without seq).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "est_internal.h"
#include "maya/common.h"

struct nth_seen {            /* seqs of ops this rule's name matched, per rank */
    int rank;
    uint64_t *seqs;          /* ascending */
    size_t n, cap;
};

struct rule {
    int line;
    int has_rank, has_seq, has_nth, has_name, name_glob;
    int rank;
    uint64_t seq;
    uint64_t nth;
    char *name;
    int64_t device_ns, host_ns; /* -1: not given */
    struct nth_seen *seen;
    size_t nseen;
};

struct est_oracle {
    char path[512];
    struct rule *rules;
    size_t nrules;
    size_t *seq_hash;        /* open addressing: rule index + 1, 0 = empty */
    size_t hash_size;
    size_t *scan;            /* indexes of the rules without seq, scanned per op */
    size_t nscan;
    int unmatched_error;
};

int est_parse_duration(const char *s, uint64_t *ns)
{
    static const struct { const char *unit; double scale; } units[] = {
        { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
    };
    if (!s || !*s || isspace((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v < 0)
        return -1;
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < MAYA_ARRAY_LEN(units); i++) {
        if (!strcmp(end, units[i].unit)) {
            double x = v * units[i].scale;
            if (x >= 1.8e19)
                return -1;
            *ns = (uint64_t)llround(x);
            return 0;
        }
    }
    return -1;
}

/* `*` matches any run of characters, `?` any one; nothing else is special
 * (C++ names are full of brackets). Only the last `*` seen is ever retried:
 * a later star can absorb whatever an earlier one would have, so on a
 * mismatch the text resumes one character past where that star last
 * began. Cost: O(len(p) x len(s)) at worst, never exponential (a rule such
 * as *a*a*a*a*b against a long kernel name stays linear in practice). */
static int glob_match(const char *p, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*p == '*') {
            while (*p == '*')
                p++;
            if (!*p)
                return 1;
            star = p;
            resume = s;
        } else if (*p == '?' || *p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

static size_t hash_key(int rank, uint64_t seq)
{
    uint64_t h = seq * 0x9e3779b97f4a7c15ull ^ ((uint64_t)(uint32_t)rank * 0xc2b2ae3d27d4eb4full);
    return (size_t)(h ^ (h >> 29));
}

static int build_hash(struct est_oracle *o)
{
    size_t n = 0;
    o->scan = malloc((o->nrules ? o->nrules : 1) * sizeof *o->scan);
    if (!o->scan)
        return maya_error("out of memory");
    for (size_t i = 0; i < o->nrules; i++) {
        n += o->rules[i].has_seq;
        if (!o->rules[i].has_seq)
            o->scan[o->nscan++] = i;
    }
    if (!n)
        return 0;
    o->hash_size = 16;
    while (o->hash_size < n * 2)
        o->hash_size *= 2;
    o->seq_hash = calloc(o->hash_size, sizeof *o->seq_hash);
    if (!o->seq_hash)
        return maya_error("out of memory");
    for (size_t i = 0; i < o->nrules; i++) {
        const struct rule *r = &o->rules[i];
        if (!r->has_seq)
            continue;
        size_t h = hash_key(r->rank, r->seq) & (o->hash_size - 1);
        while (o->seq_hash[h])
            h = (h + 1) & (o->hash_size - 1);
        o->seq_hash[h] = i + 1;
    }
    return 0;
}

/* Split one line into words; a value may be "double quoted" with \" and \\.
 * A # at the start of a word begins a comment.
 * Returns the number of words, or -1 with msg set. Words point into line. */
static int split_words(char *line, char **words, int max, const char **msg)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            return n;
        if (n == max) {
            *msg = "too many words on one line";
            return -1;
        }
        words[n++] = p;
        char *out = p;
        int quoted = 0;
        while (*p && (quoted || (*p != ' ' && *p != '\t'))) {
            if (*p == '"') {
                quoted = !quoted;
                p++;
            } else if (quoted && *p == '\\' && (p[1] == '"' || p[1] == '\\')) {
                *out++ = p[1];
                p += 2;
            } else {
                *out++ = *p++;
            }
        }
        if (quoted) {
            *msg = "unterminated \"quoted\" value";
            return -1;
        }
        int at_end = !*p;
        *out = '\0'; /* out <= p: may overwrite the separator, checked above */
        if (at_end)
            return n;
        p++;
    }
}

static int parse_rule(struct est_oracle *o, char *line, int lineno, struct rule *r)
{
    const char *f = o->path;
    char *words[16];
    const char *msg = NULL;
    /* r first: the caller frees r->name whatever went wrong */
    memset(r, 0, sizeof *r);
    r->line = lineno;
    r->device_ns = r->host_ns = -1;
    int n = split_words(line, words, 16, &msg);
    if (n < 0)
        return maya_error("%s:%d: %s", f, lineno, msg);
    if (n == 0)
        return 0;
    if (n == 1 && !strncmp(words[0], "unmatched=", 10)) {
        const char *v = words[0] + 10;
        if (!strcmp(v, "error"))
            o->unmatched_error = 1;
        else if (!strcmp(v, "analytical"))
            o->unmatched_error = 0;
        else
            return maya_error("%s:%d: unmatched is \"%s\"; expected error or analytical", f, lineno, v);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        char *eq = strchr(words[i], '=');
        if (!eq)
            return maya_error("%s:%d: expected key=value, found \"%s\"", f, lineno, words[i]);
        *eq = '\0';
        const char *key = words[i], *val = eq + 1;
        if (!*val)
            return maya_error("%s:%d: %s has no value", f, lineno, key);
        int64_t iv;
        uint64_t uv;
        if (!strcmp(key, "rank")) {
            if (r->has_rank++)
                goto dup;
            if (maya_parse_i64(val, &iv) < 0 || iv < 0 || iv > 1 << 30)
                return maya_error("%s:%d: rank is \"%s\"; expected an integer >= 0", f, lineno, val);
            r->rank = (int)iv;
        } else if (!strcmp(key, "seq")) {
            if (r->has_seq++)
                goto dup;
            if (maya_parse_u64(val, &uv) < 0)
                return maya_error("%s:%d: seq is \"%s\"; expected an integer >= 0", f, lineno, val);
            r->seq = uv;
        } else if (!strcmp(key, "nth")) {
            if (r->has_nth++)
                goto dup;
            if (maya_parse_u64(val, &uv) < 0 || uv < 1)
                return maya_error("%s:%d: nth is \"%s\"; expected an integer >= 1", f, lineno, val);
            r->nth = uv;
        } else if (!strcmp(key, "name")) {
            if (r->has_name++)
                goto dup;
            r->name = strdup(val);
            if (!r->name)
                return maya_error("out of memory");
            r->name_glob = strpbrk(val, "*?") != NULL;
        } else if (!strcmp(key, "device") || !strcmp(key, "host")) {
            int64_t *dst = key[0] == 'd' ? &r->device_ns : &r->host_ns;
            if (*dst >= 0)
                goto dup;
            if (est_parse_duration(val, &uv) < 0 || uv > INT64_MAX)
                return maya_error("%s:%d: %s duration is \"%s\"; expected a number >= 0 with a unit "
                                  "(ns, us, ms or s), e.g. 14ms", f, lineno, key, val);
            *dst = (int64_t)uv;
        } else {
            return maya_error("%s:%d: unknown key \"%s\"; expected rank, seq, nth, name, device or host "
                              "(or a line unmatched=error|analytical)", f, lineno, key);
        }
        continue;
    dup:
        return maya_error("%s:%d: %s is given twice", f, lineno, key);
    }
    if (r->device_ns < 0 && r->host_ns < 0)
        return maya_error("%s:%d: a rule needs a duration: device=... and/or host=...", f, lineno);
    if (!r->has_rank && !r->has_seq && !r->has_name)
        return maya_error("%s:%d: a rule needs something to match: name=..., rank=... seq=... "
                          "(name=* matches every op)", f, lineno);
    if (r->has_seq && !r->has_rank)
        return maya_error("%s:%d: seq counts calls within one process: give rank= too", f, lineno);
    if (r->has_nth && !r->has_name)
        return maya_error("%s:%d: nth counts ops of one name: give name= too", f, lineno);
    if (r->has_nth && r->has_seq)
        return maya_error("%s:%d: give seq or nth, not both", f, lineno);
    return 1;
}

int est_oracle_load(const char *path, struct est_oracle **out)
{
    char *text;
    size_t len;
    if (maya_read_file(path, &text, &len) < 0)
        return -1;
    struct est_oracle *o = calloc(1, sizeof *o);
    if (!o) {
        free(text);
        return maya_error("out of memory");
    }
    snprintf(o->path, sizeof o->path, "%s", path);
    size_t cap = 0;
    int lineno = 0, rc = 0;
    if (memchr(text, '\0', len)) {
        rc = maya_error("%s: not a text file (holds a NUL byte)", path);
        goto done;
    }
    for (char *line = text, *next; line && *line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[l - 1] = '\0';
        struct rule r;
        int got = parse_rule(o, line, lineno, &r);
        if (got < 0) {
            free(r.name);
            rc = -1;
            goto done;
        }
        if (!got)
            continue;
        if (o->nrules == cap) {
            cap = cap ? cap * 2 : 64;
            struct rule *nr = realloc(o->rules, cap * sizeof *nr);
            if (!nr) {
                free(r.name);
                rc = maya_error("out of memory");
                goto done;
            }
            o->rules = nr;
        }
        o->rules[o->nrules++] = r;
    }
    rc = build_hash(o);
done:
    free(text);
    if (rc < 0) {
        est_oracle_free(o);
        return -1;
    }
    *out = o;
    return 0;
}

void est_oracle_free(struct est_oracle *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->nrules; i++) {
        free(o->rules[i].name);
        for (size_t j = 0; j < o->rules[i].nseen; j++)
            free(o->rules[i].seen[j].seqs);
        free(o->rules[i].seen);
    }
    free(o->rules);
    free(o->seq_hash);
    free(o->scan);
    free(o);
}

static int name_matches(const struct rule *r, const struct est_op *op)
{
    if (!r->has_name)
        return 1;
    if (r->name_glob)
        return (op->api && glob_match(r->name, op->api)) ||
               (op->kernel_name && glob_match(r->name, op->kernel_name));
    return (op->api && !strcmp(r->name, op->api)) ||
           (op->kernel_name && !strcmp(r->name, op->kernel_name));
}

/* The position (1-based) of seq among the ops of this rank that the rule's
 * name matched so far, recording it. Ops must be presented in trace order
 * per rank (the simulator does); asking twice about one op is harmless. */
static int nth_position(struct rule *r, int rank, uint64_t seq, uint64_t *pos)
{
    struct nth_seen *s = NULL;
    for (size_t i = 0; i < r->nseen; i++)
        if (r->seen[i].rank == rank)
            s = &r->seen[i];
    if (!s) {
        struct nth_seen *ns = realloc(r->seen, (r->nseen + 1) * sizeof *ns);
        if (!ns)
            return maya_error("out of memory");
        r->seen = ns;
        s = &r->seen[r->nseen++];
        memset(s, 0, sizeof *s);
        s->rank = rank;
    }
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->seqs[mid] < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == s->n || s->seqs[lo] != seq) {
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 16;
            uint64_t *nq = realloc(s->seqs, cap * sizeof *nq);
            if (!nq)
                return maya_error("out of memory");
            s->seqs = nq;
            s->cap = cap;
        }
        memmove(s->seqs + lo + 1, s->seqs + lo, (s->n - lo) * sizeof *s->seqs);
        s->seqs[lo] = seq;
        s->n++;
    }
    *pos = lo + 1;
    return 0;
}

static int specificity(const struct rule *r)
{
    return r->has_seq * 16 + r->has_nth * 8 + r->has_rank * 4 +
           (r->has_name ? (r->name_glob ? 1 : 2) : 0);
}

int est_oracle_check(const char *path)
{
    struct est_oracle *o;
    if (est_oracle_load(path, &o) < 0)
        return -1;
    est_oracle_free(o);
    return 0;
}

int est_oracle_strict(const struct est_oracle *o)
{
    return o->unmatched_error;
}

const char *est_oracle_path(const struct est_oracle *o)
{
    return o->path;
}

/* Keep r as the best rule so far for one duration if it is more specific
 * (equal: the earlier line). */
static void consider(const struct rule *r, int64_t val, const struct rule **best)
{
    if (val < 0)
        return;
    if (!*best || specificity(r) > specificity(*best) ||
        (specificity(r) == specificity(*best) && r->line < (*best)->line))
        *best = r;
}

int est_oracle_lookup(struct est_oracle *o, const struct est_op *op, int64_t *dev_ns, int64_t *host_ns)
{
    *dev_ns = *host_ns = -1;
    int has_seq = op->rec && maya_rec_is_call(op->rec->type);
    uint64_t seq = has_seq ? ((const struct maya_rec_call *)op->rec)->call.seq : 0;
    const struct rule *bdev = NULL, *bhost = NULL;
    if (has_seq && o->seq_hash) {
        size_t h = hash_key(op->rank, seq) & (o->hash_size - 1);
        for (; o->seq_hash[h]; h = (h + 1) & (o->hash_size - 1)) {
            const struct rule *r = &o->rules[o->seq_hash[h] - 1];
            if (r->rank == op->rank && r->seq == seq && name_matches(r, op)) {
                consider(r, r->device_ns, &bdev);
                consider(r, r->host_ns, &bhost);
            }
        }
    }
    for (size_t i = 0; i < o->nscan; i++) {
        struct rule *r = &o->rules[o->scan[i]];
        if ((r->has_rank && r->rank != op->rank) || !name_matches(r, op))
            continue;
        if (r->has_nth) {
            uint64_t pos = 0;
            if (!has_seq)
                continue;
            if (nth_position(r, op->rank, seq, &pos) < 0)
                return -1;
            if (pos != r->nth)
                continue;
        }
        consider(r, r->device_ns, &bdev);
        consider(r, r->host_ns, &bhost);
    }
    if (bdev)
        *dev_ns = bdev->device_ns;
    if (bhost)
        *host_ns = bhost->host_ns;
    return 0;
}

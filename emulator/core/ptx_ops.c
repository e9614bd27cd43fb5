/* Static counts of PTX instruction classes in one kernel's PTX text: tensor
 * core MMAs, global and shared loads and stores, asynchronous and TMA copies,
 * exponentials, FMAs, shuffles, barriers, atomics. The estimator takes them
 * as features of compiler-generated kernels (Triton's), whose names say
 * little about their work.
 *
 * The text is either a PTX file (lines end with '\n') or the PTX a cubin
 * keeps in its .nv_debug_ptx_txt section when built with line information
 * (lines end with '\0', comments stripped); both are read the same way.
 * Counts are static: an instruction inside a loop counts once. */
#define _GNU_SOURCE /* memmem */
#include "ptx_ops.h"

#include <string.h>

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Does mnemonic m (dot-separated, ends at len) have a part starting with word? */
static int has_part(const char *m, size_t len, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= len; i++)
        if ((i == 0 || m[i - 1] == '.') && memcmp(m + i, word, w) == 0 &&
            (i + w == len || m[i + w] == '.' || m[i + w] == ':'))
            return 1;
    return 0;
}

static int starts(const char *m, size_t len, const char *word)
{
    size_t w = strlen(word);
    return len >= w && memcmp(m, word, w) == 0 && (len == w || m[w] == '.');
}

static void classify(const char *m, size_t len, struct emu_ptx_ops *o)
{
    o->insts++;
    if (starts(m, len, "mma") || starts(m, len, "wgmma") || (starts(m, len, "tcgen05") && has_part(m, len, "mma")))
        o->mma++;
    else if (starts(m, len, "ldmatrix"))
        o->ld_shared++;
    else if (starts(m, len, "stmatrix"))
        o->st_shared++;
    else if (starts(m, len, "ld") || starts(m, len, "st")) {
        /* Generic addressing (no state space) is counted as global: that is
         * where it almost always points. Parameters, locals and constants
         * are not memory traffic of interest. */
        int load = m[0] == 'l';
        if (has_part(m, len, "shared"))
            load ? o->ld_shared++ : o->st_shared++;
        else if (!has_part(m, len, "param") && !has_part(m, len, "local") && !has_part(m, len, "const"))
            load ? o->ld_global++ : o->st_global++;
    } else if (starts(m, len, "cp")) {
        if (has_part(m, len, "tensor"))
            o->tma++;
        else if (has_part(m, len, "async"))
            o->cp_async++;
    } else if (starts(m, len, "ex2"))
        o->ex2++;
    else if (starts(m, len, "fma"))
        o->fma++;
    else if (starts(m, len, "shfl"))
        o->shfl++;
    else if (starts(m, len, "bar") || starts(m, len, "barrier"))
        o->bar++;
    else if (starts(m, len, "atom") || starts(m, len, "red"))
        o->atom++;
}

/* Is this line the start of ".entry NAME" (possibly ".visible .entry NAME(")? */
static int entry_line(const char *l, size_t n, const char *entry)
{
    const char *e = memmem(l, n, ".entry", 6);
    if (!e)
        return 0;
    const char *p = e + 6, *end = l + n;
    while (p < end && is_space(*p))
        p++;
    size_t w = strlen(entry);
    if ((size_t)(end - p) < w || memcmp(p, entry, w) != 0)
        return 0;
    p += w;
    return p == end || *p == '(' || is_space(*p);
}

/* One statement of the body: skip labels, directives, guards; count. */
static void statement(const char *s, size_t n, struct emu_ptx_ops *o)
{
    for (;;) {
        while (n && (is_space(*s) || *s == '\n' || *s == '\0'))
            s++, n--;
        if (n && *s == '@') {                   /* predicate guard: @%p1 or @!%p1 */
            while (n && !is_space(*s))
                s++, n--;
            continue;
        }
        if (!n || *s == '.')                    /* directive (.reg, .pragma, ...) */
            return;
        size_t m = 0;
        while (m < n && !is_space(s[m]) && s[m] != '\n' && s[m] != '\0' && s[m] != ',')
            m++;
        if (m == 0)                             /* not an instruction (damaged text) */
            return;
        if (s[m - 1] != ':')
            break;
        s += m, n -= m;                         /* a label before the instruction */
    }
    size_t m = 0;
    while (m < n && !is_space(s[m]) && s[m] != '\n' && s[m] != '\0')
        m++;
    classify(s, m, o);
}

int emu_ptx_op_counts(const char *text, size_t bytes, const char *entry, struct emu_ptx_ops *out)
{
    memset(out, 0, sizeof *out);
    if (!text || !entry || !*entry)
        return -1;
    const char *p = text, *end = text + bytes;
    /* The line that declares the entry. */
    for (;;) {
        if (p >= end)
            return -1;
        const char *nl = p;
        while (nl < end && *nl != '\n' && *nl != '\0')
            nl++;
        if (entry_line(p, (size_t)(nl - p), entry))
            break;
        p = nl + 1;
    }
    /* Its body, after the parameter list (which has no braces): statements
     * end with ';'. A brace where a statement would begin opens or closes a
     * block; inside a statement it groups vector operands. Comments (// and
     * C style) are skipped. */
    while (p < end && *p != '{')
        p++;
    int depth = 0, body = 0;
    const char *stmt = NULL;                    /* start of the current statement */
    for (; p < end; p++) {
        char c = *p;
        if (c == '/' && p + 1 < end && (p[1] == '/' || p[1] == '*')) {
            const char *q = p + 2;
            if (p[1] == '/')
                while (q < end && *q != '\n' && *q != '\0')
                    q++;
            else
                while (q + 1 < end && !(q[0] == '*' && q[1] == '/'))
                    q++;
            p = p[1] == '/' ? q - 1 : q + 1;     /* a line comment leaves its line end */
            continue;
        }
        if (!stmt) {
            if (is_space(c) || c == '\n' || c == '\0')
                continue;
            if (c == '{') {
                depth++, body = 1;
                continue;
            }
            if (c == '}') {
                if (--depth <= 0 && body)
                    return 0;
                continue;
            }
            stmt = p;
        }
        if (c == ';') {
            if (body)
                statement(stmt, (size_t)(p - stmt), out);
            stmt = NULL;
        } else if ((c == '\n' || c == '\0') && *stmt == '.') {
            stmt = NULL;                        /* a directive without ';' (.loc, .file) */
        } else if (c == ':' && p + 1 < end && p[1] != ':' && p[-1] != ':' && !memchr(stmt, ' ', (size_t)(p - stmt)) &&
                   !memchr(stmt, '\t', (size_t)(p - stmt))) {
            stmt = NULL;                        /* a label */
        }
    }
    return body ? 0 : -1;
}

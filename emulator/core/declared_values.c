/* Declared values: what a small read by the host of bytes that cannot be
 * real should give (MAYA_VALUES, docs/values.md). A program whose control
 * flow depends on values of large computed tensors (a loss scaler's
 * overflow flag, a grad-norm check) reads garbage under emulation; the
 * user says instead what the values are on the real run ("no overflow":
 * the flag reads 0), and the report lists each declaration with the reads
 * it answered.
 *
 *   MAYA_VALUES="NAME=TYPE:VALUE[;NAME=TYPE:VALUE...]"
 *
 * NAME is matched as a substring of the name of what last wrote the bytes
 * (a kernel's demangled name, or an API such as ncclAllReduce); TYPE is one
 * of i8 i16 i32 i64 u8 u16 u32 u64 f32 f64. VALUE is what each element of a
 * matching read is given: a constant; a list V1,V2,...,Vk (up to 64), the
 * i-th element getting V(i mod k) (a router's uneven counts per expert);
 * or even(SUM), SUM split over the read's elements as evenly as the type
 * allows (whole numbers: the first SUM mod n get one more), a balanced
 * router's counts whatever the number of experts. The first matching
 * declaration wins. At most 16. */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DECLS 16
#define MAX_LIST 64

enum decl_kind { D_LIST, D_EVEN };

static struct decl {
    char name[128];
    char text[192];              /* as written, for the trace and the report */
    int kind;                    /* enum decl_kind; a constant is a list of one */
    unsigned char value[MAX_LIST][8];
    unsigned nvalues, elem_bytes;
    int is_float;
    double sum;                  /* D_EVEN: of a float type */
    uint64_t isum;               /* D_EVEN: of a whole-number type (not below 0) */
} decls[MAX_DECLS];
static int ndecls;

/* One element of type type (elem_bytes and is_float set) from v. */
static int parse_one(const char *type, const char *v, struct decl *d, unsigned char out[8])
{
    char *e;
    errno = 0;
    d->is_float = !strcmp(type, "f32") || !strcmp(type, "f64");
    if (d->is_float) {
        double x = strtod(v, &e);
        if (e == v || *e || errno)
            return -1;
        if (type[1] == '3') {
            float f = (float)x;
            memcpy(out, &f, 4);
            d->elem_bytes = 4;
        } else {
            memcpy(out, &x, 8);
            d->elem_bytes = 8;
        }
        return 0;
    }
    int sgn = type[0] == 'i';
    if ((type[0] != 'i' && type[0] != 'u') || !type[1])
        return -1;
    unsigned bits = (unsigned)strtoul(type + 1, &e, 10);
    if (*e || (bits != 8 && bits != 16 && bits != 32 && bits != 64))
        return -1;
    uint64_t u;
    if (sgn) {
        long long s = strtoll(v, &e, 0);
        if (e == v || *e || errno || (bits < 64 && (s < -(1ll << (bits - 1)) || s >= (1ll << (bits - 1)))))
            return -1;
        u = (uint64_t)s;
    } else {
        if (*v == '-')
            return -1;
        unsigned long long x = strtoull(v, &e, 0);
        if (e == v || *e || errno || (bits < 64 && x >> bits))
            return -1;
        u = x;
    }
    memcpy(out, &u, bits / 8); /* little-endian: the low bytes */
    d->elem_bytes = bits / 8;
    return 0;
}

/* VALUE: a constant, a list V1,...,Vk, or even(SUM). */
static int parse_value(const char *type, char *v, struct decl *d)
{
    size_t n = strlen(v);
    if (!strncmp(v, "even(", 5) && n > 6 && v[n - 1] == ')') {
        v[n - 1] = 0;
        unsigned char one[8];
        if (parse_one(type, v + 5, d, one) < 0)
            return -1;
        d->kind = D_EVEN;
        if (d->is_float) {
            d->sum = strtod(v + 5, NULL);
            return 0;
        }
        if (v[5] == '-')
            return -1;
        d->isum = strtoull(v + 5, NULL, 0); /* in the type's range: parse_one checked it */
        return 0;
    }
    d->kind = D_LIST;
    char *save = NULL;
    for (char *item = strtok_r(v, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (d->nvalues == MAX_LIST || parse_one(type, item, d, d->value[d->nvalues]) < 0)
            return -1;
        d->nvalues++;
    }
    return d->nvalues ? 0 : -1;
}

/* Element i of n of an even(SUM) declaration, in the declared type. */
static void even_element(const struct decl *d, uint64_t i, uint64_t n, unsigned char out[8])
{
    if (d->is_float) {
        double x = d->sum / (double)n;
        float f = (float)x;
        memcpy(out, d->elem_bytes == 4 ? (void *)&f : (void *)&x, d->elem_bytes);
        return;
    }
    uint64_t v = d->isum / n + (i < d->isum % n);
    memcpy(out, &v, d->elem_bytes); /* little-endian: the low bytes */
}

int emu_values_configure(void)
{
    const char *env = getenv("MAYA_VALUES");
    ndecls = 0;
    if (!env || !*env)
        return 0;
    char *copy = strdup(env);
    if (!copy)
        return maya_error("out of memory");
    int rc = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ";", &save); item && rc == 0; item = strtok_r(NULL, ";", &save)) {
        char *eq = strrchr(item, '='), *colon = eq ? strchr(eq, ':') : NULL;
        struct decl d;
        memset(&d, 0, sizeof d);
        if (ndecls == MAX_DECLS)
            rc = maya_error("MAYA_VALUES: more than %d declarations", MAX_DECLS);
        else if (!eq || eq == item || !colon || (size_t)(eq - item) >= sizeof d.name ||
                 strlen(item) >= sizeof d.text)
            rc = maya_error("MAYA_VALUES: \"%s\": expected NAME=TYPE:VALUE (e.g. non_finite_check=f32:0, "
                            "kernelHistogram1D=f32:even(16384))", item);
        else {
            snprintf(d.text, sizeof d.text, "%s", item);
            memcpy(d.name, item, (size_t)(eq - item));
            *colon = 0;
            if (parse_value(eq + 1, colon + 1, &d) < 0)
                rc = maya_error("MAYA_VALUES: \"%s\": expected TYPE:VALUE with TYPE one of i8 i16 i32 i64 u8 u16 "
                                "u32 u64 f32 f64 and a VALUE of that type: a constant, a list V1,V2,... (at most "
                                "%d), or even(SUM) of a sum not below 0", d.text, MAX_LIST);
            else
                decls[ndecls++] = d;
        }
    }
    free(copy);
    return rc;
}

EMU_API uint32_t emu_values_declare(const char *writer, void *dst, uint64_t bytes)
{
    if (!ndecls || !writer)
        return 0;
    for (int i = 0; i < ndecls; i++) {
        if (!strstr(writer, decls[i].name))
            continue;
        const struct decl *d = &decls[i];
        unsigned char *p = dst, one[8];
        uint64_t n = bytes / d->elem_bytes;
        for (uint64_t k = 0; k < n; k++) {
            if (d->kind == D_EVEN)
                even_element(d, k, n, one);
            memcpy(p + k * d->elem_bytes, d->kind == D_EVEN ? one : d->value[k % d->nvalues], d->elem_bytes);
        }
        return emu_string(d->text);
    }
    return 0;
}

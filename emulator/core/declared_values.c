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
 * of i8 i16 i32 i64 u8 u16 u32 u64 f32 f64; every element of a matching read
 * is given VALUE. The first matching declaration wins. At most 16. */
#define _GNU_SOURCE
#include "emu.h"
#include "maya/common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DECLS 16

static struct decl {
    char name[128];
    char text[192];              /* as written, for the trace and the report */
    unsigned char value[8];
    unsigned elem_bytes;
} decls[MAX_DECLS];
static int ndecls;

static int parse_value(const char *type, const char *v, struct decl *d)
{
    char *e;
    errno = 0;
    if (!strcmp(type, "f32") || !strcmp(type, "f64")) {
        double x = strtod(v, &e);
        if (e == v || *e || errno)
            return -1;
        if (type[1] == '3') {
            float f = (float)x;
            memcpy(d->value, &f, 4);
            d->elem_bytes = 4;
        } else {
            memcpy(d->value, &x, 8);
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
    memcpy(d->value, &u, bits / 8); /* little-endian: the low bytes */
    d->elem_bytes = bits / 8;
    return 0;
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
            rc = maya_error("MAYA_VALUES: \"%s\": expected NAME=TYPE:VALUE (e.g. non_finite_check=f32:0)", item);
        else {
            snprintf(d.text, sizeof d.text, "%s", item);
            memcpy(d.name, item, (size_t)(eq - item));
            *colon = 0;
            if (parse_value(eq + 1, colon + 1, &d) < 0)
                rc = maya_error("MAYA_VALUES: \"%s\": expected TYPE:VALUE with TYPE one of i8 i16 i32 i64 u8 u16 "
                                "u32 u64 f32 f64 and a VALUE of that type, found \"%s:%s\"", d.text, eq + 1,
                                colon + 1);
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
        unsigned char *p = dst;
        unsigned eb = decls[i].elem_bytes;
        for (uint64_t off = 0; off + eb <= bytes; off += eb)
            memcpy(p + off, decls[i].value, eb);
        return emu_string(decls[i].text);
    }
    return 0;
}

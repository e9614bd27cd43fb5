/* key=value files (kvfile.h). */
#define _GNU_SOURCE
#include "kvfile.h"
#include "maya/common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void kv_write(FILE *fp, const char *key, const char *value)
{
    fprintf(fp, "%s=", key);
    for (const char *p = value; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", fp);
        else if (*p == '\n')
            fputs("\\n", fp);
        else
            fputc(*p, fp);
    }
    fputc('\n', fp);
}

void kv_writef(FILE *fp, const char *key, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    kv_write(fp, key, buf);
}

static int unescape(char *s)
{
    char *out = s;
    for (char *p = s; *p; p++) {
        if (*p != '\\') {
            *out++ = *p;
            continue;
        }
        p++;
        if (*p == '\\')
            *out++ = '\\';
        else if (*p == 'n')
            *out++ = '\n';
        else
            return -1;
    }
    *out = 0;
    return 0;
}

int kv_read(const char *path, int (*fn)(void *ctx, const char *key, const char *value, int line),
            void *ctx)
{
    char *data;
    if (maya_read_file(path, &data, NULL) < 0)
        return -1;
    int rc = 0, line = 0;
    for (char *l = data, *next; l && *l && rc == 0; l = next) {
        next = strchr(l, '\n');
        if (next)
            *next++ = 0;
        line++;
        if (l[0] == '#' || l[0] == 0)
            continue;
        char *eq = strchr(l, '=');
        if (!eq || eq == l) {
            rc = maya_error("%s:%d: expected key=value, found \"%s\"", path, line, l);
            break;
        }
        *eq = 0;
        if (unescape(eq + 1) < 0) {
            rc = maya_error("%s:%d: %s: a backslash must be followed by \\ or n", path, line, l);
            break;
        }
        rc = fn(ctx, l, eq + 1, line);
    }
    free(data);
    return rc;
}

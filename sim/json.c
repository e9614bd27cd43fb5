/* A small streaming JSON writer: objects, arrays, strings escaped per RFC
 * 8259 (quote, backslash and control characters; bytes >= 0x80 pass through,
 * so UTF-8 stays UTF-8), numbers (non-finite ones as null). */
#include "sim_internal.h"

#include <inttypes.h>
#include <math.h>

void json_escape(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", fp); break;
        case '\\': fputs("\\\\", fp); break;
        case '\n': fputs("\\n", fp); break;
        case '\r': fputs("\\r", fp); break;
        case '\t': fputs("\\t", fp); break;
        case '\b': fputs("\\b", fp); break;
        case '\f': fputs("\\f", fp); break;
        default:
            if (*p < 0x20)
                fprintf(fp, "\\u%04x", *p);
            else
                fputc(*p, fp);
        }
    }
    fputc('"', fp);
}

void json_begin(struct json *j, FILE *fp, int pretty)
{
    j->fp = fp;
    j->depth = 0;
    j->first[0] = 1;
    j->pretty = pretty;
}

static void indent(struct json *j)
{
    if (!j->pretty)
        return;
    fputc('\n', j->fp);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->fp);
}

/* Separator and key before a value. */
static void item(struct json *j, const char *key)
{
    if (j->depth > 0) {
        if (!j->first[j->depth])
            fputc(',', j->fp);
        indent(j);
    }
    j->first[j->depth] = 0;
    if (key) {
        json_escape(j->fp, key);
        fputs(j->pretty ? ": " : ":", j->fp);
    }
}

static void open(struct json *j, const char *key, char c)
{
    item(j, key);
    fputc(c, j->fp);
    if (j->depth < 31)
        j->depth++;
    j->first[j->depth] = 1;
}

static void close_(struct json *j, char c)
{
    int empty = j->first[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (!empty)
        indent(j);
    fputc(c, j->fp);
    if (j->depth == 0 && j->pretty)
        fputc('\n', j->fp);
}

void json_obj(struct json *j, const char *key)
{
    open(j, key, '{');
}

void json_arr(struct json *j, const char *key)
{
    open(j, key, '[');
}

void json_end_obj(struct json *j)
{
    close_(j, '}');
}

void json_end_arr(struct json *j)
{
    close_(j, ']');
}

void json_str(struct json *j, const char *key, const char *v)
{
    item(j, key);
    if (v)
        json_escape(j->fp, v);
    else
        fputs("null", j->fp);
}

void json_num(struct json *j, const char *key, double v)
{
    item(j, key);
    if (isfinite(v))
        fprintf(j->fp, "%.9g", v);
    else
        fputs("null", j->fp);
}

void json_int(struct json *j, const char *key, int64_t v)
{
    item(j, key);
    fprintf(j->fp, "%" PRId64, v);
}

void json_uint(struct json *j, const char *key, uint64_t v)
{
    item(j, key);
    fprintf(j->fp, "%" PRIu64, v);
}

void json_bool(struct json *j, const char *key, int v)
{
    item(j, key);
    fputs(v ? "true" : "false", j->fp);
}

void json_null(struct json *j, const char *key)
{
    item(j, key);
    fputs("null", j->fp);
}

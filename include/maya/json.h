/* A small streaming JSON writer with proper string escapes (RFC 8259),
 * for report.json and other files written for programs. Implemented in
 * sim/json.c (libmaya-sim.a, which the maya command links). */
#ifndef MAYA_JSON_H
#define MAYA_JSON_H

#include <stdint.h>
#include <stdio.h>

struct json {
    FILE *fp;
    int depth;
    int first[32];
    int pretty;
};
void json_begin(struct json *j, FILE *fp, int pretty);
void json_obj(struct json *j, const char *key);   /* key NULL inside arrays */
void json_arr(struct json *j, const char *key);
void json_end_obj(struct json *j);
void json_end_arr(struct json *j);
void json_str(struct json *j, const char *key, const char *v);
void json_num(struct json *j, const char *key, double v);   /* NaN/inf written as null */
void json_int(struct json *j, const char *key, int64_t v);
void json_uint(struct json *j, const char *key, uint64_t v);
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);
void json_escape(FILE *fp, const char *s);

#endif

/* CHECK for the C unit tests: count a failure and say where and why, then
 * go on (main ends with 1 when failures is not 0). */
#ifndef MAYA_TESTS_UNIT_CHECK_H
#define MAYA_TESTS_UNIT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...) do { \
    if (!(cond)) { \
        failures++; \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr); \
    } \
} while (0)

#endif

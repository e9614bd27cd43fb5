/* "Device memory" for the executors' unit tests (unit_ptx_exec.c,
 * unit_sass_exec.c): one host buffer; reads of the bytes from unreal_from on
 * are refused as not real, accesses outside it as not device memory. */
#ifndef MAYA_TESTS_EXEC_MEM_H
#define MAYA_TESTS_EXEC_MEM_H

#include "ptx_exec.h"

#include <stdint.h>

static unsigned char mem[1 << 16] __attribute__((aligned(16)));
static uint64_t unreal_from = sizeof mem;

static int in_mem(uint64_t a, uint32_t n)
{
    uint64_t b = (uint64_t)(uintptr_t)mem;
    return a >= b && a + n <= b + sizeof mem && a + n >= a;
}
static int can_read(void *ctx, uint64_t a, uint32_t n)
{
    (void)ctx;
    return in_mem(a, n) && a + n <= (uint64_t)(uintptr_t)mem + unreal_from ? 0 : -1;
}
static int can_write(void *ctx, uint64_t a, uint32_t n)
{
    (void)ctx;
    return in_mem(a, n) ? 0 : -1;
}
static const struct emu_ptx_mem M = { can_read, can_write, NULL };

#endif

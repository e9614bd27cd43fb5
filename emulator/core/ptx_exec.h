/* Running a small kernel on the CPU from its PTX (ptx_exec.c): what it
 * covers is docs/kernel-exec.md. */
#ifndef MAYA_PTX_EXEC_H
#define MAYA_PTX_EXEC_H

#include <stddef.h>
#include <stdint.h>

struct emu_ptx_prog;             /* one kernel decoded for execution */

/* Decode kernel `entry` of PTX text (copied: the text may go). NULL if the
 * text has no such entry, or uses what the executor does not cover (why,
 * if not NULL, receives the first such instruction). */
struct emu_ptx_prog *emu_ptx_prog_new(const char *text, size_t bytes, const char *entry, char *why, size_t nwhy);
void emu_ptx_prog_free(struct emu_ptx_prog *p);

/* How device memory is read and written by a run: the host supplies access
 * checks, so that the executor never touches memory outside live
 * allocations and knows which bytes the launch read and wrote. */
struct emu_ptx_mem {
    /* 0 if [addr, addr+bytes) may be read (live device memory holding real
     * values), else -1: the run stops there. */
    int (*can_read)(void *ctx, uint64_t addr, uint32_t bytes);
    /* 0 if it may be written, else -1; the bytes are written then. */
    int (*can_write)(void *ctx, uint64_t addr, uint32_t bytes);
    void *ctx;
};

struct emu_ptx_launch {
    uint32_t grid[3], block[3];
    uint32_t dyn_smem;           /* dynamic shared memory bytes */
    const void *params;          /* packed parameter buffer */
    uint32_t param_bytes;
    uint64_t max_steps;          /* instructions over all threads, at most */
};

enum emu_ptx_result {
    EMU_PTX_DONE = 0,            /* ran to the end: its stores are done */
    EMU_PTX_UNREAL = 1,          /* read bytes can_read refused: stopped */
    EMU_PTX_FAULT = 2,           /* out-of-range access, bad operand: stopped */
    EMU_PTX_STEPS = 3,           /* past max_steps: stopped */
    EMU_PTX_UNSUPPORTED = 4,     /* reached what the executor does not cover */
};

/* Run every block of the launch in order, the threads of a block until
 * each barrier (bar.sync) and the lanes of a warp together at each warp
 * operation (shfl, vote). why receives a message when it stops early. */
enum emu_ptx_result emu_ptx_run(const struct emu_ptx_prog *p, const struct emu_ptx_launch *l,
                                const struct emu_ptx_mem *m, char *why, size_t nwhy);

#endif

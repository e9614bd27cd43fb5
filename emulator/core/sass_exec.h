/* Running a small kernel on the CPU from its SASS (sass_exec.c), for
 * kernels that carry no PTX (PyTorch's CUDA wheels). It takes the same
 * launch, memory checks and results as the PTX executor (ptx_exec.h); what
 * it covers is docs/kernel-exec.md. */
#ifndef MAYA_SASS_EXEC_H
#define MAYA_SASS_EXEC_H

#include "ptx_exec.h"

struct emu_sass_prog;            /* one kernel decoded for execution */

/* Decode kernel `entry` of nvdisasm's text (`nvdisasm -c -fun N`; the text
 * is not kept). param_base: where the parameters start in constant bank 0
 * (the cubin's EIATTR_PARAM_CBANK); static_smem: the kernel's static shared
 * bytes; bank2: the kernel's constant bank 2 (.nv.constant2.<entry>, the
 * jump tables BRX reads; copied), NULL if none. NULL when the text has no such kernel or is damaged (why, if not
 * NULL, says so). An instruction the executor does not cover does not
 * refuse the kernel: a run that reaches it stops as EMU_PTX_UNSUPPORTED. */
struct emu_sass_prog *emu_sass_prog_new(const char *text, size_t bytes, const char *entry, uint32_t param_base,
                                        uint32_t static_smem, const void *bank2, uint32_t bank2_bytes, char *why,
                                        size_t nwhy);
void emu_sass_prog_free(struct emu_sass_prog *p);

/* Run every block of the launch, as emu_ptx_run does. */
enum emu_ptx_result emu_sass_run(const struct emu_sass_prog *p, const struct emu_ptx_launch *l,
                                 const struct emu_ptx_mem *m, char *why, size_t nwhy);

#endif

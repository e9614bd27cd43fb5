/* maya run's control of its run: claiming the run directory, keeping
 * run.conf current, checking that a job fits this machine before anything
 * is started (run_control.c), and the watchdog that names hung ranks
 * (run_watchdog.c). Kept out of cmd_run.c, which starts and waits for the
 * ranks. */
#ifndef MAYA_RUN_CONTROL_H
#define MAYA_RUN_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "maya/run_desc.h"

/* Claim the run directory out (made with its parents if missing): its
 * run.conf is created with O_EXCL, so of two runs started into one
 * directory exactly one gets it; the other is refused with a message naming
 * the first (its launcher, pid and start). real: out's absolute path. */
int run_claim_dir(const char *out, char *real, size_t size);

/* Write d as DIR/run.conf (atomically): before the ranks start, as each
 * ends, and at the end, so that every run directory can be reported. */
int run_desc_save(const char *dir, const struct maya_run_desc *d);

/* The program cmd[0] can be executed (found on PATH when it has no slash):
 * 0, or -1 with a message saying why not. */
int run_check_command(char *const *cmd);

/* MemAvailable of /proc/meminfo, in bytes; 0 if unknown. */
uint64_t run_mem_available(void);

/* Process pid's CPU time so far (user + system, all its threads, in clock
 * ticks) and resident memory (/proc/PID/stat): 0, or -1 if it is gone. */
int run_proc_usage(pid_t pid, uint64_t *ticks, uint64_t *rss_bytes);

/* Would nprocs processes fit this machine (memory, the process limit, the
 * CPUs maya may use)? 0, or -1 with a message saying how many would. */
int run_check_size(int nprocs, int cpus);

/* Ranks whose trace writes failed (a full disk: their own warning may be
 * lost with it), read from their tail files' status: each is warned about
 * on stderr; why: the first, for the run's cause. How many there were. */
int run_trace_errors(const char *dir, int nprocs, char *why, size_t size);

#include "maya/run_watchdog.h"

#endif

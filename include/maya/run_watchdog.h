/* The watchdog that names hung ranks, for maya run and the Slurm launcher
 * (common/run_watchdog.c describes how it decides).
 */
#ifndef MAYA_RUN_WATCHDOG_H
#define MAYA_RUN_WATCHDOG_H

#include <stddef.h>
#include <sys/types.h>

#define RUN_HANG_TIMEOUT_S 15.0 /* default --hang-timeout */

struct run_watchdog;

/* Watch ranks 0..n-1 of a job whose traces go to trace_dir; hang_s: how
 * long no rank may make a call while some wait in a collective. */
struct run_watchdog *run_watchdog_new(const char *trace_dir, int n, double hang_s);
void run_watchdog_free(struct run_watchdog *w);

/* Look again (cheap: call it as often as convenient; it reads the ranks'
 * state at most every 0.25 s). pids[i]: rank i's pid when this process
 * started it, 0 once it ended, -1 for a rank started elsewhere (another
 * node's launcher: it counts as ended once its trace is renamed into place).
 * Returns 1 when the job is hung: why says who hangs where (for the run's
 * cause), and hung[i] is set for each rank found hung. */
int run_watchdog_check(struct run_watchdog *w, const pid_t *pids, int *hung, char *why, size_t size);

#endif

/* Long phases (collating, loading, replaying, writing the report) say how
 * far they are on a terminal and stop cleanly when the user asks. */
#ifndef MAYA_PROGRESS_H
#define MAYA_PROGRESS_H

#include <stdint.h>

/* Show progress on stderr from now on (the command enables it when stderr
 * is a terminal); off by default. */
void maya_progress_enable(int on);
/* Phase `phase` has done `done` of `total` (0: unknown) units; rate-limited,
 * so it may be called often. */
void maya_progress(const char *phase, uint64_t done, uint64_t total);
/* Clear the progress line (before other output, and at the end). */
void maya_progress_done(void);

/* Catch SIGINT and SIGTERM (until maya_stop_release) so that phases can
 * stop at a safe point: no half-written output is left behind. */
void maya_stop_catch(void);
void maya_stop_release(void);
/* The signal that asked to stop, 0 if none. */
int maya_stopped(void);
/* 0, or -1 with "WHAT: interrupted (...)" once a stop was asked for. */
int maya_check_stop(const char *what);

#endif

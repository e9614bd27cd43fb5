/* Progress of the long post-processing phases on a terminal, and stopping
 * them cleanly on Ctrl-C or SIGTERM (include/maya/progress.h).
 *
 * Progress is one line on stderr, rewritten in place at most five times a
 * second (a call between costs one clock read) and at once when a new phase
 * starts (a phase shorter than the interval still shows), only when enabled
 * (the command enables it when stderr is a terminal). Stopping is a flag
 * that the handlers set; the phases poll it and fail with "interrupted".
 */
#define _GNU_SOURCE
#include "maya/progress.h"
#include "maya/common.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int shown;
static int line_open;
static uint64_t last_ns;
static char last_phase[64];     /* the phase the line shows */
static volatile sig_atomic_t stop_signal;
static struct sigaction old_int, old_term;
static int installed;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void maya_progress_enable(int on)
{
    shown = on;
    last_ns = 0;
    last_phase[0] = 0;
}

void maya_progress(const char *phase, uint64_t done, uint64_t total)
{
    if (!shown)
        return;
    uint64_t now = mono_ns();
    int same = strncmp(phase, last_phase, sizeof last_phase - 1) == 0;
    if (last_ns && now - last_ns < 200000000ull && same)
        return;
    last_ns = now;
    if (!same)
        snprintf(last_phase, sizeof last_phase, "%s", phase);
    if (total)
        fprintf(stderr, "\r\033[Kmaya: %s %3.0f%% (%llu of %llu)", phase, 100.0 * (double)done / (double)total,
                (unsigned long long)done, (unsigned long long)total);
    else
        fprintf(stderr, "\r\033[Kmaya: %s", phase);
    line_open = 1;
}

void maya_progress_done(void)
{
    if (shown && line_open)
        fputs("\r\033[K", stderr);
    line_open = 0;
    last_ns = 0;
    last_phase[0] = 0;
}

static void on_stop(int sig)
{
    stop_signal = sig;
}

void maya_stop_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    stop_signal = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    installed = 1;
}

void maya_stop_release(void)
{
    if (!installed)
        return;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    installed = 0;
}

int maya_stopped(void)
{
    return stop_signal;
}

int maya_check_stop(const char *what)
{
    int sig = stop_signal;
    if (!sig)
        return 0;
    maya_progress_done();
    return maya_error("%s: interrupted (%s)", what, sig == SIGINT ? "Ctrl-C" : strsignal(sig));
}

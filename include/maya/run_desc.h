/* The run description: DIR/run.conf of a run directory (docs/run-dir.md).
 *
 * `maya run` and the Slurm plugin write it when the workload ends; `maya
 * report DIR` reads it to know the configuration that ran and how each
 * process ended. The file is plain `key=value` lines, so a shell script can
 * write one too; the reader is strict (an unknown key or a bad value is an
 * error naming the line).
 */
#ifndef MAYA_RUN_DESC_H
#define MAYA_RUN_DESC_H

#include <stddef.h>
#include <stdint.h>

#define MAYA_RUN_DESC_FILE "run.conf"
#define MAYA_RUN_DESC_VERSION 1
/* Most processes a description holds (256 ranks per CPU of a 1024-CPU
 * machine, maya run's sizing limit): each costs ~300 bytes, so a file
 * cannot make a reader allocate more than ~75 MiB whatever it says. */
#define MAYA_RUN_MAX_PROCS (1 << 18)

/* How a process ended. */
enum maya_run_end {
    MAYA_RUN_UNKNOWN = 0,   /* not recorded (still running, or never started) */
    MAYA_RUN_EXITED = 1,    /* exit status in code */
    MAYA_RUN_SIGNALED = 2,  /* killed by signal code */
};

struct maya_run_proc {
    int end;                /* enum maya_run_end */
    int code;               /* exit status or signal number */
    int node;               /* emulated node, -1 unknown */
    int local_rank;         /* -1 unknown */
    long pid;               /* 0 unknown */
    char note[256];         /* why it ended, if maya ended it ("terminated: rank 3 failed") */
};

struct maya_run_desc {
    int version;
    char launcher[32];          /* "maya-run", "slurm" */
    char gpu[64];               /* hwspec key of the emulated GPU */
    int gpu_count;              /* GPUs of the emulated job */
    char cluster[4096];         /* cluster key, or a file name relative to DIR; "" = default */
    int gpus_per_node;
    int nodes;
    int nprocs;                 /* processes started (procs[0..nprocs-1]) */
    char command[8192];         /* the workload's command line, for people */
    char workdir[4096];
    char start_time[32];        /* UTC, ISO 8601 */
    char end_time[32];
    double wall_s;              /* how long the emulated run took on the CPUs */
    char iteration_marker[256]; /* "" = detect iterations */
    int iterations;             /* report on the first N iterations; 0 = all */
    char estimator[1024];       /* as `--estimator`; "" = default models */
    char oracle[4096];          /* as `--oracle`; "" = none */
    char state[16];             /* "running" while the launcher waits for the ranks, "ended"
                                   after; "" = not said (older files, scripts) */
    long launcher_pid;          /* the launcher (maya run), 0 unknown */
    char launcher_host[256];    /* the host launcher_pid is on; "" unknown */
    char cause[512];            /* what ended the run first, as the launcher saw it ("rank 1
                                   was killed by signal 9", "rank 2 hung: ..."); "" = nothing */
    struct maya_run_proc *procs;
};

/* Whether the run is still going: 1 when its state is running and its
 * launcher is alive on this host, 0 when it is not running (ended, or its
 * launcher is gone), -1 when it cannot be told (state running, launcher on
 * another host or not recorded). */
int maya_run_desc_live(const struct maya_run_desc *d);

/* Zeroed description with defaults (version, nodes 1, ...). */
void maya_run_desc_init(struct maya_run_desc *d);
/* Room for n processes (their fields unknown); 0 or -1. */
int maya_run_desc_set_nprocs(struct maya_run_desc *d, int n);
void maya_run_desc_free(struct maya_run_desc *d);

/* Write atomically; 0 or -1 with a message. */
int maya_run_desc_write(const char *path, const struct maya_run_desc *d);
/* Read and check; 0 or -1 with a message "FILE:LINE: ...". */
int maya_run_desc_read(const char *path, struct maya_run_desc *d);

/* "exit 0", "exit 3", "signal 9 (Killed)", "unknown" into buf. */
void maya_run_proc_status(const struct maya_run_proc *p, char *buf, size_t size);
/* Did the process end with exit status 0? */
int maya_run_proc_ok(const struct maya_run_proc *p);

/* The current UTC time as ISO 8601 ("2025-01-31T12:00:00Z"). */
void maya_utc_now(char *buf, size_t size);

#endif

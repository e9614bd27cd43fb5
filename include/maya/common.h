/* Helpers every stage shares: error reporting, bounded strings, atomic files.
 *
 * Errors follow one convention: a function that fails reports why with
 * maya_error() (which returns -1) and returns that, so callers write
 *     if (fd < 0) return maya_error("cannot open %s: %m", path);
 * Libraries never exit(); only the CLI decides the exit status.
 */
#ifndef MAYA_COMMON_H
#define MAYA_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MAYA_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define MAYA_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MAYA_MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAYA_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Where error messages go and what prefixes them ("maya: ", "maya-emu: ").
 * The default is stderr with prefix "maya". */
void maya_set_error_prefix(const char *prefix);

/* Send messages to handler instead of stderr (kind is "" or "warning: "):
 * a program with its own log, e.g. the Slurm plugin inside slurmd, routes
 * them there. NULL restores stderr. */
void maya_set_error_handler(void (*handler)(const char *kind, const char *msg));

/* Print "prefix: message" on stderr; %m expands to strerror(errno).
 * Always returns -1 so it can end a failing function. */
int maya_error(const char *fmt, ...) MAYA_PRINTF(1, 2);
void maya_warn(const char *fmt, ...) MAYA_PRINTF(1, 2);

/* The last error message maya_error() produced in this thread (for tests and
 * for callers that pass the message on, e.g. into a report). */
const char *maya_last_error(void);

/* snprintf that reports truncation: returns 0, or -1 with an error message. */
int maya_snprintf(char *buf, size_t size, const char *fmt, ...) MAYA_PRINTF(3, 4);

/* Strict number parsing: the whole string must be a number in range.
 * Return 0 or -1 (with no message: the caller knows what the value was for). */
int maya_parse_i64(const char *s, int64_t *out);
int maya_parse_u64(const char *s, uint64_t *out);
int maya_parse_double(const char *s, double *out);

/* Sizes with an optional binary suffix: "64K", "2MiB", "80G" (powers of 1024). */
int maya_parse_size(const char *s, uint64_t *out);

/* Create a new file "<prefix>.<16 random hex digits>" (name in path) with
 * O_CREAT|O_EXCL|O_NOFOLLOW: never an existing file or a planted symbolic
 * link, and a name nobody can guess ahead. The fd, or -1 with a message. */
int maya_open_unique(const char *prefix, char *path, size_t size, int flags, unsigned mode);

/* Control characters (and backslash) of in as \xNN (\\): text a user gave,
 * made safe for a log line. Truncated to size. */
void maya_escape_controls(const char *in, char *out, size_t size);

/* Write a whole file atomically: data goes to "<path>.tmp.<random>" (made
 * by maya_open_unique), is fsynced, then renamed over path. On failure the
 * old file is left untouched. */
int maya_write_file_atomic(const char *path, const void *data, size_t len);

/* Atomic writes through stdio: open a temp file next to path, write with
 * fprintf, then commit (flush, fsync, rename) or abort (unlink). */
struct maya_atomic_file {
    FILE *fp;
    char path[4096];
    char tmp[4096 + 32];
};
int maya_atomic_open(struct maya_atomic_file *af, const char *path);
int maya_atomic_commit(struct maya_atomic_file *af);
void maya_atomic_abort(struct maya_atomic_file *af);

/* Read a whole file into a malloc'd, NUL-terminated buffer. */
int maya_read_file(const char *path, char **data, size_t *len);

/* The directory holding the running executable or shared object that contains
 * addr (dladdr), e.g. to find ../share/maya relative to an install. */
int maya_self_dir(const void *addr, char *buf, size_t size);

/* The installed data directory (share/maya), found from MAYA_DATA_DIR or
 * relative to the object containing addr: <dir>/../share/maya for bin/,
 * <dir>/../../share/maya for lib/maya/. */
int maya_data_dir(const void *addr, char *buf, size_t size);

/* Monotonic clock in nanoseconds. */
uint64_t maya_mono_ns(void);

/* common/schedstat.c: a thread's schedstat file (open it once, read it
 * often): its time on a CPU and its time ready to run but waiting for one
 * (run-queue delay), both in ns. 0, or -1 if it cannot be read as that. */
int maya_schedstat_read(int fd, uint64_t *run_ns, uint64_t *delay_ns);
/* 1 if this kernel reports the calling thread's run-queue delay. */
int maya_schedstat_readable(void);
/* Reads a /proc/PID/stat file (path) into buf and returns where its fields
 * after "pid (comm" start: the last ')' (a command name may hold one), or
 * NULL when the process is gone. */
const char *maya_proc_stat_fields(const char *path, char *buf, size_t size);

#endif

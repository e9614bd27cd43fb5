/* key=value files in the syntax of run.conf (docs/run-dir.md): one pair a
 * line, '#' starts a comment line, a backslash or newline inside a value is
 * written \\ or \n. The plugin's fragments (slurm/step.conf written at
 * launch, slurm/task-N.conf by each maya-launch) use it and are merged into
 * run.conf after the job.
 */
#ifndef SPANK_KVFILE_H
#define SPANK_KVFILE_H

#include <stdio.h>

/* Write key=value with the value escaped. */
void kv_write(FILE *fp, const char *key, const char *value);
void kv_writef(FILE *fp, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Call fn for each pair of a file (value unescaped). fn returns 0 to go on,
 * -1 to stop with an error. 0, or -1 with a message naming file and line. */
int kv_read(const char *path, int (*fn)(void *ctx, const char *key, const char *value, int line),
            void *ctx);

#endif

/* Reusing DIR/job.mtrace. Collation reads every rank's trace and writes the
 * job trace: minutes and gigabytes for thousands of ranks (3 min of the
 * report of a 3,072-GPU run). A later maya report on the same traces, to
 * try another iteration marker, estimator or GPU, needs the same job trace.
 *
 * DIR/job.mtrace.inputs records what the job trace was made from: the maya
 * binary (path, size, modification time, inode), the collation's mode,
 * the MAYA_REBUILT_COPY setting, every file under traces/ (name, size,
 * modification and change times, inode) and the job trace itself. While
 * all of it is as recorded, the job trace is reused. A trace rewritten,
 * added or removed, another maya binary, or a job trace written by
 * anything else changes it, and the traces are collated again. The change
 * time cannot be set back by a program (touch -d sets the modification
 * time only), so a trace edited in place is always seen.
 * Costs one stat per file under traces/ and a read of the record.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job_reuse.h"
#include "maya/common.h"

/* One line of the record: what, its name (NULL none), and its file's
 * size, modification and change times and inode. */
static void put_file(FILE *fp, const char *what, const char *name, const struct stat *st)
{
    fprintf(fp, "%s%s%s %lld %lld.%09ld %lld.%09ld %llu\n", what, name ? " " : "", name ? name : "",
            (long long)st->st_size, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
            (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec, (unsigned long long)st->st_ino);
}

/* What DIR/job.mtrace is made from now, as the record's text (malloc'd
 * into *text); -1 when something cannot be read (then nothing is reused). */
static int describe_inputs(const char *dir, int allow_incomplete, char **text)
{
    char path[4200];
    struct stat st;
    size_t len;
    FILE *fp = open_memstream(text, &len);
    if (!fp)
        return -1;
    int rc = 0;
    fprintf(fp, "# what job.mtrace was collated from: maya report reuses it while all of this holds\n");
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || stat("/proc/self/exe", &st) < 0) {
        rc = -1;
    } else {
        exe[n] = 0;
        put_file(fp, "maya", exe, &st);
    }
    const char *copy = getenv("MAYA_REBUILT_COPY");
    fprintf(fp, "mode allow_incomplete=%d rebuilt_copy=%s\n", allow_incomplete ? 1 : 0,
            copy && *copy ? copy : "-");
    snprintf(path, sizeof path, "%s/job.mtrace", dir);
    if (rc == 0 && stat(path, &st) == 0)
        put_file(fp, "job", NULL, &st);
    else
        rc = -1;
    snprintf(path, sizeof path, "%s/traces", dir);
    struct dirent **names = NULL;
    int count = rc == 0 ? scandir(path, &names, NULL, alphasort) : -1;
    if (count < 0)
        rc = -1;
    for (int i = 0; i < count; i++) {
        const char *name = names[i]->d_name;
        snprintf(path, sizeof path, "%s/traces/%s", dir, name);
        if (rc == 0 && name[0] != '.') {
            if (lstat(path, &st) < 0)
                rc = -1; /* gone while listed */
            else if (S_ISREG(st.st_mode))
                put_file(fp, "trace", name, &st);
        }
        free(names[i]);
    }
    free(names);
    if (fclose(fp) != 0)
        rc = -1;
    if (rc < 0) {
        free(*text);
        *text = NULL;
    }
    return rc;
}

int job_trace_reusable(const char *dir, int allow_incomplete)
{
    char path[4200], *now = NULL, *then = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/%s", dir, JOB_INPUTS_FILE);
    if (access(path, F_OK) != 0 || describe_inputs(dir, allow_incomplete, &now) < 0)
        return 0;
    int same = maya_read_file(path, &then, &len) == 0 && !strcmp(now, then);
    free(now);
    free(then);
    return same;
}

int job_trace_stamp(const char *dir, int allow_incomplete)
{
    char path[4200], *text = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, JOB_INPUTS_FILE);
    if (describe_inputs(dir, allow_incomplete, &text) < 0)
        return maya_error("%s: cannot describe the traces job.mtrace was collated from; the next report "
                          "collates them again", path);
    int rc = maya_write_file_atomic(path, text, strlen(text));
    free(text);
    return rc;
}

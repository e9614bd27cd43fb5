/* maya run --replicas auto: which ranks of a job are replicas, found by
 * running the same program on fewer ranks first (docs/dedup.md, "The
 * layout from smaller runs, automatically").
 *
 * A program's data-parallel degree follows its world (WORLD_SIZE over its
 * model-parallel degrees, which its arguments fix), so on fewer ranks the
 * same program runs with fewer replicas. Each probe is `maya run --dedup
 * --no-report` of the program on N ranks, into DIR/probes/N; once every
 * rank has repeated its first iteration, its rank 0 writes the classes
 * (traces/dedup-classes), and the probe is stopped there. One probe is not
 * enough: with a data-parallel degree of 1 the layout shows the tensor-
 * parallel dimension alone, which would grow wrongly. Two probes, of a and
 * a x p ranks, show which dimension grows with the world
 * (run_elim_layout_step), and that one grows to the job's size.
 *
 * Probes go up the divisors of the world from 1: those the program refuses
 * (a world its model-parallel degrees do not divide) end at once. Cost:
 * the probes' start-ups and two iterations of the two that run; at most
 * MAX_PROBES of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "replicas_auto.h"
#include "maya/common.h"
#include "maya/run_elim.h"

#define MAX_PROBES 24
#define POLL_NS 100000000L /* how often a probe's classes are looked for */

struct probe {
    int ranks;
    int ran;                    /* 1: it showed a layout (maybe of no dimension) */
    struct maya_replicas layout;
    char said[200];             /* what it showed, or why it did not run */
};

/* The last non-empty line of a file, for why a probe failed. */
static void last_line(const char *path, char *buf, size_t size)
{
    snprintf(buf, size, "no output");
    FILE *fp = fopen(path, "r");
    if (!fp)
        return;
    char line[512];
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = 0;
        size_t k = strnlen(line, size - 1);
        if (k) {
            memcpy(buf, line, k);
            buf[k] = 0;
        }
    }
    fclose(fp);
}

/* The run's cause= in its run.conf ("rank 1 exited 2"), if it has one. */
static void run_cause(const char *dir, char *buf, size_t size)
{
    char path[PATH_MAX + 64], line[512];
    snprintf(path, sizeof path, "%s/run.conf", dir);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return;
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, "cause=", 6)) {
            line[strcspn(line, "\n")] = 0;
            size_t k = strnlen(line + 6, size - 1);
            if (k) {
                memcpy(buf, line + 6, k);
                buf[k] = 0;
            }
        }
    fclose(fp);
}

static void child(const struct replicas_auto_job *job, const char *exe, const char *dir, const char *log,
                  int ranks)
{
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || in < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || dup2(in, 0) < 0)
        _exit(127);
    char gpus[128], hang[32];
    snprintf(gpus, sizeof gpus, "%sx%d", job->gpu, ranks);
    snprintf(hang, sizeof hang, "%g", job->hang_s);
    int n = 0;
    while (job->cmd[n])
        n++;
    const char **argv = calloc((size_t)n + 20, sizeof *argv);
    if (!argv)
        _exit(127);
    int k = 0;
    argv[k++] = "maya";
    argv[k++] = "run";
    argv[k++] = "-q";
    argv[k++] = "--no-report";
    argv[k++] = "--dedup";
    argv[k++] = "-g";
    argv[k++] = gpus;
    if (job->cluster) {
        argv[k++] = "--cluster";
        argv[k++] = job->cluster;
    }
    if (job->hang_s > 0) {
        argv[k++] = "--hang-timeout";
        argv[k++] = hang;
    }
    argv[k++] = "-o";
    argv[k++] = dir;
    argv[k++] = "--";
    for (int i = 0; i < n; i++)
        argv[k++] = job->cmd[i];
    execv(exe, (char *const *)argv);
    fprintf(stderr, "cannot run %s: %s\n", exe, strerror(errno));
    _exit(127);
}

/* Run the program on `ranks` ranks, filling p: p (p->ran says whether it
 * showed a layout), or NULL when maya run was interrupted or cannot go on
 * (said). */
static struct probe *run_probe(const struct replicas_auto_job *job, const char *exe, struct probe *p, int ranks)
{
    memset(p, 0, sizeof *p);
    p->ranks = ranks;
    char probes[PATH_MAX], dir[PATH_MAX + 32], log[PATH_MAX + 40], classes[PATH_MAX + 64], traces[PATH_MAX + 40];
    if (maya_snprintf(probes, sizeof probes, "%s/probes", job->dir) < 0)
        return NULL;
    if (mkdir(probes, 0755) < 0 && errno != EEXIST) {
        maya_error("--replicas auto: cannot make %s: %m", probes);
        return NULL;
    }
    /* DIR/probes/N, or N.2, N.3, ... where an earlier attempt in this
     * directory left one (maya run claims none twice) */
    snprintf(dir, sizeof dir, "%s/%d", probes, p->ranks);
    for (int again = 2; access(dir, F_OK) == 0 && again < 1000; again++)
        snprintf(dir, sizeof dir, "%s/%d.%d", probes, p->ranks, again);
    snprintf(log, sizeof log, "%s.log", dir);
    snprintf(traces, sizeof traces, "%s/traces", dir);
    snprintf(classes, sizeof classes, "%s/%s", traces, MAYA_ELIM_CLASSES_FILE);
    if (!job->quiet)
        fprintf(stderr, "maya run: --replicas auto: the program on %d rank%s (%s) ...\n", p->ranks,
                p->ranks == 1 ? "" : "s", dir);
    pid_t pid = fork();
    if (pid < 0) {
        maya_error("--replicas auto: cannot start a probe: %m");
        return NULL;
    }
    if (pid == 0)
        child(job, exe, dir, log, p->ranks);
    int status = 0, signalled = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        if (!signalled && (*job->interrupted || access(classes, F_OK) == 0)) {
            kill(pid, SIGTERM); /* it stops its ranks and ends */
            signalled = 1;
        }
        struct timespec ts = { 0, POLL_NS };
        nanosleep(&ts, NULL);
    }
    if (*job->interrupted) {
        maya_error("--replicas auto: interrupted while running the program on %d ranks", p->ranks);
        return NULL;
    }
    if (signalled) { /* its log ends with maya run's "interrupted": say by whom */
        FILE *lf = fopen(log, "a");
        if (lf) {
            fprintf(lf, "maya run --replicas auto stopped this run once its classes were written (%s)\n", classes);
            fclose(lf);
        }
    }
    int world = 0, got = run_elim_layout_read(traces, &p->layout, &world);
    if (got < 0)
        return NULL; /* said, naming the file */
    if (got > 0 && world != p->ranks) {
        maya_error("--replicas auto: %s holds the classes of %d ranks, expected %d", classes, world, p->ranks);
        return NULL;
    }
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (got > 0 || ok) {
        p->ran = 1;
        char text[160] = "";
        maya_replicas_format(&p->layout, text, sizeof text);
        snprintf(p->said, sizeof p->said, "%s", p->layout.ndims ? text : "no replicas");
    } else {
        /* what rank 0 said (the program's own reason), else run.conf's
         * cause ("rank 1 exited 2"), else maya run's message (an option it
         * refused, so that no rank ran) */
        char why[160], err0[PATH_MAX + 64];
        snprintf(err0, sizeof err0, "%s/logs/rank-0.err", dir);
        last_line(err0, why, sizeof why);
        if (!strcmp(why, "no output"))
            run_cause(dir, why, sizeof why);
        if (!strcmp(why, "no output"))
            last_line(log, why, sizeof why);
        snprintf(p->said, sizeof p->said, "did not run (%s)", why);
    }
    if (!job->quiet)
        fprintf(stderr, "maya run: --replicas auto: %d rank%s: %s\n", p->ranks, p->ranks == 1 ? "" : "s", p->said);
    return p;
}

static int smallest_prime_factor(int n)
{
    for (int p = 2; (long)p * p <= n; p++)
        if (n % p == 0)
            return p;
    return n;
}

int replicas_auto_check(int world)
{
    if (world < 4 || smallest_prime_factor(world) == world)
        return maya_error("--replicas auto: %d rank%s: no smaller run of the program would show more replicas "
                          "than one (a prime number of ranks, or fewer than 4); declare them with --replicas "
                          "N:STRIDE[,...]", world, world == 1 ? "" : "s");
    return 0;
}

int replicas_auto(const struct replicas_auto_job *job, struct maya_replicas *out, char *text, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return maya_error("--replicas auto: cannot find maya's own program (/proc/self/exe): %m");
    exe[n] = 0;
    struct probe probes[MAX_PROBES];
    int np = 0, a = -1;
    char err[512] = "";
    /* the smallest world the program runs on */
    for (int d = 1; d < job->world && np < MAX_PROBES && a < 0; d++) {
        if (job->world % d || d * smallest_prime_factor(job->world / d) >= job->world)
            continue;
        struct probe *p = run_probe(job, exe, &probes[np++], d);
        if (!p)
            return -1;
        if (p->ran)
            a = np - 1;
    }
    /* then up by the smallest factor until one dimension grows (a size it
     * does not run on is passed over) */
    int ranks = a >= 0 ? probes[a].ranks : job->world;
    while (np < MAX_PROBES) {
        ranks *= smallest_prime_factor(job->world / ranks);
        if (ranks >= job->world)
            break;
        struct probe *p = run_probe(job, exe, &probes[np++], ranks);
        if (!p)
            return -1;
        if (!p->ran)
            continue;
        int dim;
        if (run_elim_layout_step(&probes[a].layout, probes[a].ranks, &p->layout, p->ranks, job->world, out, &dim,
                                 err, sizeof err) == 0) {
            maya_replicas_format(out, text, size);
            if (!job->quiet)
                fprintf(stderr, "maya run: --replicas auto: --replicas %s (%d rank%s showed %s, %d showed %s: "
                        "dimension %lld:%lld grows with the world)\n", text, probes[a].ranks,
                        probes[a].ranks == 1 ? "" : "s", probes[a].said,
                        p->ranks, p->said, (long long)p->layout.n[dim], (long long)p->layout.stride[dim]);
            return 0;
        }
        a = np - 1;
    }
    char seen[2048] = "";
    for (int i = 0; i < np; i++)
        snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s%d rank%s: %s", i ? "; " : "",
                 probes[i].ranks, probes[i].ranks == 1 ? "" : "s", probes[i].said);
    return maya_error("--replicas auto: no two smaller runs of the program showed which ranks of %d are replicas "
                      "(%s%s%s); declare them with --replicas N:STRIDE[,...], or run every rank with --dedup "
                      "(probes in %s/probes)", job->world, np ? seen : "no world below it to try",
                      err[0] ? "; " : "", err, job->dir);
}

/* Unit tests of the Slurm plugin's security points and the helpers they
 * use (no Slurm cluster needed): the epilog, which runs as root, reads only
 * report= from --maya-emulate and opens nothing the job names; the option
 * parser decides from return codes, not from captured message text; temp
 * files are new files with unpredictable names (a symbolic link planted at
 * the old predictable name is not written through); user text is escaped
 * for slurmd's log. Built as build/tests/unit/test_spank_security. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maya/common.h"
#include "maya/hwspec.h"
#include "../../spank_plugin/spank_maya.h"

#include "../unit_check.h"

/* spank_maya.c's capture, as a plugin whose capture lost the message: the
 * parser must still see the failure (it used to decide from the text). */
void spank_capture_begin(void)
{
}

const char *spank_capture_end(void)
{
    return "";
}

static void test_report_only(const char *dir)
{
    /* a FIFO as the cluster file: opening it would block, and the alarm
     * would end the test */
    char fifo[512], value[1024], report[4096];
    snprintf(fifo, sizeof fifo, "%s/stall.conf", dir);
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo: %s", strerror(errno));
    snprintf(value, sizeof value, "h100x8,cluster=%s,iters=3,report=out/r,marker=step", fifo);
    alarm(10);
    CHECK(spank_emulate_report(value, report, sizeof report) == 0 && !strcmp(report, "out/r"),
          "report= from the text: \"%s\"", report);
    CHECK(spank_emulate_report("h100x8,cluster=/etc/shadow", report, sizeof report) == 0 && !report[0],
          "no report=: empty, \"%s\"", report);
    CHECK(spank_emulate_report("a100x2,report=x,report=y", report, sizeof report) == 0 && !strcmp(report, "y"),
          "the last report= wins: \"%s\"", report);
    alarm(0);
}

static void test_return_codes(const char *hwdir)
{
    struct maya_hwspecs hw;
    CHECK(maya_hwspecs_load_dir(hwdir, &hw) == 0, "hwspecs: %s", maya_last_error());
    struct spank_emulate e;
    CHECK(spank_emulate_parse(&hw, "nosuchx8", NULL, &e) < 0, "an unknown GPU accepted with no captured message");
    CHECK(strstr(maya_last_error(), "--maya-emulate=nosuchx8") != NULL, "message: %s", maya_last_error());
    CHECK(spank_emulate_parse(&hw, "h100x0", NULL, &e) < 0, "a count of 0 accepted");
    CHECK(spank_emulate_parse(&hw, ",report=x", NULL, &e) < 0, "nothing before the comma accepted");
    CHECK(spank_emulate_parse(&hw, "h100x8,iters=2", NULL, &e) == 0 && e.count == 8 && e.iterations == 2,
          "a good value refused: %s", maya_last_error());
    maya_hwspecs_free(&hw);
}

static void test_temp_files(const char *dir)
{
    char target[512], victim[512], planted[600];
    snprintf(target, sizeof target, "%s/report.txt", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *fp = fopen(victim, "w");
    fputs("untouched\n", fp);
    fclose(fp);
    /* the name maya used to write through: <path>.tmp.<pid> */
    snprintf(planted, sizeof planted, "%s.tmp.%d", target, (int)getpid());
    CHECK(symlink(victim, planted) == 0, "symlink: %s", strerror(errno));
    CHECK(maya_write_file_atomic(target, "report\n", 7) == 0, "atomic write: %s", maya_last_error());
    char *data;
    CHECK(maya_read_file(victim, &data, NULL) == 0 && !strcmp(data, "untouched\n"), "the planted link was followed");
    free(data);
    CHECK(maya_read_file(target, &data, NULL) == 0 && !strcmp(data, "report\n"), "the file was not written");
    free(data);
    /* two temp names differ, end in 16 hex digits, and exist only once */
    char prefix[600], a[700], b[700];
    snprintf(prefix, sizeof prefix, "%s/x.tmp", dir);
    int fa = maya_open_unique(prefix, a, sizeof a, O_WRONLY, 0600);
    int fb = maya_open_unique(prefix, b, sizeof b, O_WRONLY, 0600);
    CHECK(fa >= 0 && fb >= 0 && strcmp(a, b) != 0, "two unique names: %s %s", a, b);
    size_t n = strlen(prefix);
    CHECK(strlen(a) == n + 17 && a[n] == '.' && strspn(a + n + 1, "0123456789abcdef") == 16, "name %s", a);
    struct stat st;
    CHECK(fa >= 0 && fstat(fa, &st) == 0 && (st.st_mode & 0777) == 0600, "mode");
    close(fa);
    close(fb);
    /* a symbolic link at a name is never opened through */
    char link[700];
    snprintf(link, sizeof link, "%s.0123456789abcdef", prefix);
    CHECK(symlink(victim, link) == 0, "symlink");
    int fd = open(link, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    CHECK(fd < 0 && errno == EEXIST, "O_EXCL|O_NOFOLLOW on a planted link must fail");
}

static void test_escape(void)
{
    char out[64];
    maya_escape_controls("h100x8,report=a\nmaya: forged\x1b[31m\\", out, sizeof out);
    CHECK(!strcmp(out, "h100x8,report=a\\x0amaya: forged\\x1b[31m\\\\"), "escaped: %s", out);
    maya_escape_controls("abcdefghij\n", out, 12);
    CHECK(strlen(out) < 12 && strchr(out, '\n') == NULL, "truncated without a raw control: %s", out);
}

int main(void)
{
    char dir[] = "/tmp/maya-spank-unit.XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    const char *top = getenv("MAYA_TOP");
    char hw[4096];
    snprintf(hw, sizeof hw, "%s/hwspecs", top ? top : ".");
    maya_set_error_prefix("test");
    test_report_only(dir);
    test_return_codes(hw);
    test_temp_files(dir);
    test_escape();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    if (failures) {
        fprintf(stderr, "%d check(s) FAILED\n", failures);
        return 1;
    }
    fprintf(stderr, "all spank security checks passed\n");
    return 0;
}

/* libconfuse parsing with maya's errors (confuse_parse.h). */
#include "confuse_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>

#include "maya/common.h"

static void report_error(cfg_t *cfg, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (cfg && cfg->filename)
        maya_error("%s:%d: %s", cfg->filename, cfg->line, msg);
    else
        maya_error("%s", msg);
}

void maya_cfg_report_errors(cfg_t *cfg)
{
    cfg_set_error_function(cfg, report_error);
}

/* The file is opened here, not by libconfuse: anything but a regular file
 * (a directory, a FIFO that would block, a device other than /dev/null)
 * is refused with a message naming it, where libconfuse's scanner would say only "input in
 * flex scanner failed" or wait forever. */
int maya_cfg_parse(cfg_t *cfg, const char *path, const char *what)
{
    maya_cfg_report_errors(cfg);
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        cfg_free(cfg);
        errno = err;
        return maya_error("cannot read %s: %m", path);
    }
    struct stat null;
    int is_null = S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 && null.st_rdev == st.st_rdev;
    if (!S_ISREG(st.st_mode) && !is_null) { /* /dev/null: an empty file ("no settings") */
        close(fd);
        cfg_free(cfg);
        return maya_error("%s is %s: expected a %s", path, S_ISDIR(st.st_mode) ? "a directory" : "not a regular file",
                          what);
    }
    FILE *fp = fdopen(fd, "r");
    char *name = strdup(path);
    if (!fp || !name) {
        if (fp)
            fclose(fp);
        else
            close(fd);
        free(name);
        cfg_free(cfg);
        return maya_error("out of memory reading %s", path);
    }
    /* as cfg_parse does: messages name the file (cfg_free frees it) */
    free(cfg->filename);
    cfg->filename = name;
    int rc = cfg_parse_fp(cfg, fp);
    int err = errno; /* cfg_free may change it */
    fclose(fp);
    if (rc == CFG_SUCCESS)
        return 0;
    cfg_free(cfg);
    errno = err;
    if (rc == CFG_FILE_ERROR)
        return maya_error("cannot read %s: %m", path);
    return maya_error("%s: not a valid %s", path, what);
}

/* libconfuse parsing with maya's errors (confuse_parse.h). */
#include "confuse_parse.h"

#include <errno.h>
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

int maya_cfg_parse(cfg_t *cfg, const char *path, const char *what)
{
    maya_cfg_report_errors(cfg);
    int rc = cfg_parse(cfg, path);
    if (rc == CFG_SUCCESS)
        return 0;
    int err = errno; /* cfg_free may change it */
    cfg_free(cfg);
    errno = err;
    if (rc == CFG_FILE_ERROR)
        return maya_error("cannot read %s: %m", path);
    return maya_error("%s: not a valid %s", path, what);
}

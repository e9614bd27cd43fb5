/* What common/'s libconfuse readers (hwspec.c, config.c) share: errors
 * reported as "file:line: message", and one parse that says what a file that
 * is not valid was expected to be. Private to common/. */
#ifndef MAYA_COMMON_CONFUSE_PARSE_H
#define MAYA_COMMON_CONFUSE_PARSE_H

#include <confuse.h>

/* Set cfg's error function to maya_error with file:line. */
void maya_cfg_report_errors(cfg_t *cfg);

/* Parse path into cfg (whose error function is set here). 0, or -1 after an
 * error: cannot read, or "PATH: not a valid WHAT" (after libconfuse's own
 * file:line message); cfg is freed on failure. */
int maya_cfg_parse(cfg_t *cfg, const char *path, const char *what);

#endif

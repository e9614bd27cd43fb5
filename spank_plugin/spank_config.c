/* The plugin's plugstack.conf arguments, e.g.
 *
 *   required /opt/maya/lib/slurm/spank_maya.so trace_root=/shared/maya time_limit=600
 *
 * Parsed strictly in every context that reads them (slurm_spank_init, and the
 * epilog, before which Slurm calls no init): a typo fails loudly rather than
 * leaving a default in place.
 */
#define _GNU_SOURCE
#include "spank_maya.h"
#include "maya/common.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define ALLOWED "prefix=DIR, trace_root=DIR, time_limit=SECONDS, pin=yes|no, hwspecs=DIR"

/* The install prefix from where this plugin was loaded: P/lib/slurm/spank_maya.so. */
static int default_prefix(char *buf, size_t size)
{
    char dir[PATH_MAX];
    if (maya_self_dir((const void *)default_prefix, dir, sizeof dir) < 0)
        return -1;
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return maya_error("plugstack.conf: the plugin is not in PREFIX/lib/slurm; give prefix=DIR");
        *slash = 0;
    }
    return maya_snprintf(buf, size, "%s", dir);
}

static int parse_path(const char *key, const char *val, char *out, size_t size)
{
    if (val[0] != '/')
        return maya_error("plugstack.conf: %s=\"%s\": expected an absolute path", key, val);
    return maya_snprintf(out, size, "%s", val);
}

static int parse_bool(const char *key, const char *val, int *out)
{
    if (!strcasecmp(val, "yes") || !strcasecmp(val, "true") || !strcmp(val, "1")) {
        *out = 1;
        return 0;
    }
    if (!strcasecmp(val, "no") || !strcasecmp(val, "false") || !strcmp(val, "0")) {
        *out = 0;
        return 0;
    }
    return maya_error("plugstack.conf: %s=\"%s\": expected yes or no", key, val);
}

int spank_conf_parse(int argc, char **argv, struct spank_conf *conf)
{
    memset(conf, 0, sizeof *conf);
    conf->time_limit_s = 600;
    conf->pin = 1;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg)
            return maya_error("plugstack.conf: argument \"%s\" is not key=value; allowed: " ALLOWED, arg);
        size_t klen = (size_t)(eq - arg);
        const char *val = eq + 1;
        char key[32];
        if (klen >= sizeof key)
            klen = sizeof key - 1;
        memcpy(key, arg, klen);
        key[klen] = 0;
        if (!*val)
            return maya_error("plugstack.conf: %s= has no value; allowed: " ALLOWED, key);
        int rc;
        if (!strcmp(key, "prefix")) {
            rc = parse_path(key, val, conf->prefix, sizeof conf->prefix);
        } else if (!strcmp(key, "trace_root")) {
            rc = parse_path(key, val, conf->trace_root, sizeof conf->trace_root);
        } else if (!strcmp(key, "hwspecs")) {
            rc = parse_path(key, val, conf->hwspecs, sizeof conf->hwspecs);
        } else if (!strcmp(key, "pin")) {
            rc = parse_bool(key, val, &conf->pin);
        } else if (!strcmp(key, "time_limit")) {
            int64_t v;
            rc = 0;
            if (maya_parse_i64(val, &v) < 0 || v < 1 || v > 86400)
                rc = maya_error("plugstack.conf: time_limit=\"%s\": expected seconds from 1 to 86400", val);
            else
                conf->time_limit_s = (int)v;
        } else {
            return maya_error("plugstack.conf: unknown argument \"%s\"; allowed: " ALLOWED, arg);
        }
        if (rc < 0)
            return -1;
    }
    if (!conf->trace_root[0])
        return maya_error("plugstack.conf: trace_root=DIR is required: a directory on storage every "
                          "node can read, where users may create folders (like /tmp, mode 1777)");
    if (!conf->prefix[0] && default_prefix(conf->prefix, sizeof conf->prefix) < 0)
        return -1;
    if (!conf->hwspecs[0] &&
        maya_snprintf(conf->hwspecs, sizeof conf->hwspecs, "%s/share/maya/hwspecs", conf->prefix) < 0)
        return -1;
    return 0;
}

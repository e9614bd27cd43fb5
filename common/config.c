/* Reading maya.conf (libconfuse): strict keys, values checked as the command
 * line checks them, errors with file:line. */
#define _GNU_SOURCE
#include "maya/config.h"
#include "maya/common.h"
#include "confuse_parse.h"

#include <confuse.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static cfg_opt_t opts[] = {
    CFG_STR("gpus", NULL, CFGF_NODEFAULT),
    CFG_STR("cluster", NULL, CFGF_NODEFAULT),
    CFG_STR("estimator", NULL, CFGF_NODEFAULT),
    CFG_STR("oracle", NULL, CFGF_NODEFAULT),
    CFG_STR("iteration_marker", NULL, CFGF_NODEFAULT),
    CFG_INT("iterations", 0, CFGF_NODEFAULT),
    CFG_FLOAT("timeout", 0, CFGF_NODEFAULT),
    CFG_FLOAT("hang_timeout", 0, CFGF_NODEFAULT),
    CFG_STR("copy_threshold", NULL, CFGF_NODEFAULT),
    CFG_END()
};

static int check_iterations(cfg_t *cfg, cfg_opt_t *opt)
{
    long v = cfg_opt_getnint(opt, 0);
    if (v < 1 || v > 1000000) {
        cfg_error(cfg, "iterations = %ld: expected a whole number from 1 to 1000000", v);
        return -1;
    }
    return 0;
}

static int check_timeout(cfg_t *cfg, cfg_opt_t *opt)
{
    double v = cfg_opt_getnfloat(opt, 0);
    if (!(v > 0)) {
        cfg_error(cfg, "%s = %g: expected seconds above 0", opt->name, v);
        return -1;
    }
    return 0;
}

static int check_threshold(cfg_t *cfg, cfg_opt_t *opt)
{
    uint64_t v;
    const char *s = cfg_opt_getnstr(opt, 0);
    if (maya_parse_size(s, &v) < 0) {
        cfg_error(cfg, "copy_threshold = \"%s\": expected a size in bytes (65536, 64K, 1M)", s);
        return -1;
    }
    return 0;
}

static int copy_str(cfg_t *cfg, const char *key, char *dst, size_t size, const char *path)
{
    if (cfg_size(cfg, key) == 0)
        return 0;
    const char *v = cfg_getstr(cfg, key);
    if (!v || !*v)
        return maya_error("%s: %s is empty (leave it out for the default)", path, key);
    if (strlen(v) >= size)
        return maya_error("%s: %s is longer than %zu bytes", path, key, size - 1);
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

int maya_conf_load_file(const char *path, struct maya_conf *c)
{
    cfg_t *cfg = cfg_init(opts, CFGF_NONE);
    if (!cfg)
        return maya_error("out of memory");
    cfg_set_validate_func(cfg, "iterations", check_iterations);
    cfg_set_validate_func(cfg, "timeout", check_timeout);
    cfg_set_validate_func(cfg, "hang_timeout", check_timeout);
    cfg_set_validate_func(cfg, "copy_threshold", check_threshold);
    if (maya_cfg_parse(cfg, path, "maya.conf (keys: gpus, cluster, estimator, oracle, iteration_marker, "
                                  "iterations, timeout, hang_timeout, copy_threshold; see maya.conf(5))") < 0)
        return -1;
    int rc = 0;
    if (copy_str(cfg, "gpus", c->gpus, sizeof c->gpus, path) < 0 ||
        copy_str(cfg, "cluster", c->cluster, sizeof c->cluster, path) < 0 ||
        copy_str(cfg, "estimator", c->estimator, sizeof c->estimator, path) < 0 ||
        copy_str(cfg, "oracle", c->oracle, sizeof c->oracle, path) < 0 ||
        copy_str(cfg, "iteration_marker", c->iteration_marker, sizeof c->iteration_marker, path) < 0)
        rc = -1;
    if (rc == 0 && cfg_size(cfg, "iterations"))
        c->iterations = (int)cfg_getint(cfg, "iterations");
    if (rc == 0 && cfg_size(cfg, "timeout"))
        c->timeout_s = cfg_getfloat(cfg, "timeout");
    if (rc == 0 && cfg_size(cfg, "hang_timeout"))
        c->hang_timeout_s = cfg_getfloat(cfg, "hang_timeout");
    if (rc == 0 && cfg_size(cfg, "copy_threshold"))
        maya_parse_size(cfg_getstr(cfg, "copy_threshold"), &c->copy_threshold);
    cfg_free(cfg);
    return rc;
}

/* Read path into c if it exists; note it in c->files[slot]. */
static int load_if_present(const char *path, struct maya_conf *c, int slot)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (maya_conf_load_file(path, c) < 0)
        return -1;
    snprintf(c->files[slot], sizeof c->files[slot], "%s", path);
    return 0;
}

int maya_conf_load(const void *addr, struct maya_conf *c)
{
    memset(c, 0, sizeof *c);
    const char *env = getenv("MAYA_CONF");
    if (env && *env) {
        if (maya_conf_load_file(env, c) < 0)
            return -1;
        snprintf(c->files[0], sizeof c->files[0], "%s", env);
        return 0;
    }
    char data[PATH_MAX], path[PATH_MAX + 64];
    /* <prefix>/share/maya -> <prefix>/etc/maya.conf */
    if (maya_data_dir(addr, data, sizeof data) == 0) {
        snprintf(path, sizeof path, "%s/../../etc/maya.conf", data);
        if (load_if_present(path, c, 0) < 0)
            return -1;
    }
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(path, sizeof path, "%s/maya/maya.conf", xdg);
    else if (home && *home)
        snprintf(path, sizeof path, "%s/.config/maya/maya.conf", home);
    else
        return 0;
    return load_if_present(path, c, 1);
}

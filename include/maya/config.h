/* maya.conf: defaults for `maya run` (and what it passes to the emulator and
 * the report pipeline), so that a site or a user need not repeat options.
 * Command-line options win over the file; see man/maya.conf.5.
 *
 * Files read, later ones overriding earlier ones key by key:
 *   <prefix>/etc/maya.conf                 the installation's (site) defaults
 *   $XDG_CONFIG_HOME/maya/maya.conf        the user's (~/.config/maya/maya.conf)
 * or, when MAYA_CONF is set, that file alone (MAYA_CONF=/dev/null: none).
 */
#ifndef MAYA_CONFIG_H
#define MAYA_CONFIG_H

#include <stdint.h>

struct maya_conf {
    char gpus[128];             /* GPUxCOUNT for -g, "" = none */
    char cluster[4096];         /* --cluster, "" = none */
    char estimator[1024];       /* --estimator, "" = none */
    char oracle[4096];          /* --oracle, "" = none */
    char iteration_marker[256]; /* --iteration-marker, "" = none */
    int iterations;             /* --iterations, 0 = none */
    double timeout_s;           /* --timeout, 0 = none */
    double hang_timeout_s;      /* --hang-timeout, 0 = none (the default) */
    uint64_t copy_threshold;    /* MAYA_COPY_THRESHOLD for the ranks, 0 = none */
    char files[2][4200];        /* the files that were read, "" if absent */
};

/* Read the files above (addr locates the installation, as maya_data_dir
 * does). A missing file is no error, except the one MAYA_CONF names; a
 * malformed one fails with file:line and what was expected. 0 or -1. */
int maya_conf_load(const void *addr, struct maya_conf *c);

/* Read one file on top of c (0 or -1). */
int maya_conf_load_file(const char *path, struct maya_conf *c);

#endif

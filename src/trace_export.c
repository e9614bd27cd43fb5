/* maya trace export --chakra OUT [OPTIONS] DIR: the run directory's job
 * replayed as maya reports it (same GPU, cluster, estimator and options as
 * maya report DIR would use), written as Chakra execution traces for the
 * tools of the Chakra ecosystem (ASTRA-sim, SimAI): OUT/et.<rank>.et and
 * OUT/et.comm_group.json (sim/chakra.c says what the graph holds). The
 * report files in DIR are left as they were. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "pipeline.h"
#include "maya/common.h"

static void usage(FILE *fp)
{
    fprintf(fp,
        "usage: maya trace export --chakra OUT [OPTIONS] DIR\n"
        "  Replay the run directory DIR (as maya report DIR would: its GPU, cluster and\n"
        "  options from run.conf unless given) and write its ops as Chakra execution traces\n"
        "  (MLCommons Chakra's protobuf schema): OUT/et.<rank>.et per rank and\n"
        "  OUT/et.comm_group.json, the ranks of each communicator (pg_name in the traces).\n"
        "  For ASTRA-sim: --workload-configuration=OUT/et\n"
        "  --comm-group-configuration=OUT/et.comm_group.json (make astra-check).\n"
        "%s"
        "  -g, --gpu NAME|FILE, --cluster NAME|FILE, --hwspec-dir DIR   as for maya report\n"
        "Exit status: 0 written; 2 bad usage; 3 the job could not be replayed or written.\n",
        PIPELINE_OPTIONS_HELP);
}

int trace_export(int argc, char **argv)
{
    struct pipeline_opts o = { .quiet = 1 };
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (a[0] != '-') {
            if (dir) {
                maya_error("one run directory at a time: \"%s\" and \"%s\"", dir, a);
                return 2;
            }
            dir = a;
            continue;
        }
        if (i + 1 >= argc || !argv[i + 1][0]) {
            maya_error("%s: expected a value after it", a);
            return 2;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--chakra"))
            o.chakra_dir = v;
        else {
            int rc = pipeline_parse_report_option(&o, a, v);
            if (rc < 0)
                return 2;
            if (rc == 0) {
                maya_error("unknown option \"%s\" (maya trace export --help lists them)", a);
                return 2;
            }
        }
    }
    if (!o.chakra_dir || !dir) {
        if (!o.chakra_dir && dir)
            maya_error("expected --chakra OUT: the only export format is Chakra's");
        usage(stderr);
        return 2;
    }
    if (pipeline_check_options(&o) < 0)
        return 2;
    if (mkdir(o.chakra_dir, 0777) < 0 && errno != EEXIST) {
        maya_error("cannot create %s: %m", o.chakra_dir);
        return 3;
    }
    if (pipeline_run(dir, &o) < 0)
        return 3;
    fprintf(stderr, "maya: Chakra traces of %s in %s/et.<rank>.et, communicators in %s/et.comm_group.json\n", dir,
            o.chakra_dir, o.chakra_dir);
    return 0;
}

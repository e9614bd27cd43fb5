/* maya report [OPTIONS] DIR: collate, estimate, simulate and report again on
 * a run directory (docs/run-dir.md), as `maya run` does after its workload;
 * for runs made by the Slurm plugin, or to try other estimator models or an
 * iteration marker without running the workload again. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "pipeline.h"
#include "maya/common.h"
#include "maya/progress.h"
#include "maya/run_desc.h"

static void usage(FILE *fp)
{
    fprintf(fp,
        "usage: maya report [OPTIONS] DIR\n"
        "  Collate DIR/traces, estimate every op, replay the job and write DIR/report.txt,\n"
        "  report.json, report.html, timeline.json and timeline.svg (docs/run-dir.md). Options\n"
        "  default to what DIR/run.conf recorded, and the GPU and cluster to the descriptions\n"
        "  the run used (DIR/gpu.conf, DIR/cluster.conf); the report says which served.\n"
        "  DIR/job.mtrace is reused while its traces and this maya are as they were when it\n"
        "  was collated (DIR/job.mtrace.inputs).\n"
        "  --iteration-marker, --iterations, --estimator and --oracle given here are kept in\n"
        "  run.conf once the report is complete, so that a later plain maya report DIR uses\n"
        "  them; -g, --cluster, --hwspec-dir and --oracle-profile serve this report only.\n"
        "%s"
        "  -g, --gpu NAME|FILE      report for this GPU description instead: a GPU file, or\n"
        "                           a name (maya hwspecs list, or in --hwspec-dir)\n"
        "  --cluster NAME|FILE      this cluster instead of the one the run used\n"
        "  --hwspec-dir DIR         descriptions from DIR (gpus/, clusters/): the run's GPU by\n"
        "                           its name there, and the names -g and --cluster give\n"
        "  -q, --quiet              no summary\n"
        "Progress shows on a terminal; Ctrl-C or SIGTERM stops it, leaving the directory's files as\n"
        "they were.\n"
        "Exit status: 0 the workload had succeeded and the report is complete; 1 the workload\n"
        "had failed (the report names the failing rank); 3 the pipeline failed (the report says\n"
        "why); 2 bad usage; 130 / 143 stopped by Ctrl-C / SIGTERM.\n", PIPELINE_OPTIONS_HELP);
}

int cmd_report(int argc, char **argv)
{
    struct pipeline_opts o = { .keep_options = 1 };
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o.quiet = 1;
            continue;
        }
        if (a[0] == '-') {
            if (i + 1 >= argc) {
                maya_error("%s: expected a value after it", a);
                return 2;
            }
            const char *v = argv[i + 1];
            int rc = pipeline_parse_report_option(&o, a, v);
            if (rc < 0)
                return 2;
            if (rc == 0) {
                maya_error("unknown option \"%s\" (maya report --help lists them)", a);
                return 2;
            }
            i++;
            continue;
        }
        if (dir) {
            maya_error("one run directory at a time: \"%s\" and \"%s\"", dir, a);
            return 2;
        }
        dir = a;
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    if (pipeline_check_options(&o) < 0)
        return 2;
    struct maya_run_desc d;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, MAYA_RUN_DESC_FILE);
    if (maya_run_desc_read(path, &d) < 0)
        return 3;
    if (maya_run_desc_live(&d) == 1) {
        /* its ranks are still writing their traces, and its launcher
         * writes the report when they end */
        maya_error("%s is still running: %s pid %ld, started %s (%s); its report is written when it ends "
                   "(stop it with kill -INT %ld to have what it recorded reported)", dir,
                   d.launcher[0] ? d.launcher : "its launcher", d.launcher_pid,
                   d.start_time[0] ? d.start_time : "at an unknown time", d.command, d.launcher_pid);
        maya_run_desc_free(&d);
        return 3;
    }
    int workload_ok = 1;
    for (int i = 0; i < d.nprocs; i++)
        workload_ok &= maya_run_proc_ok(&d.procs[i]);
    maya_run_desc_free(&d);
    int rc = pipeline_run(dir, &o);
    if (maya_stopped())
        return 128 + maya_stopped();
    if (!workload_ok)
        return 1;
    return rc < 0 ? 3 : 0;
}

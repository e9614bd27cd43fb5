/* The maya CLI's commands: one line each, one file each (src/cmd_<name>.c,
 * defining int cmd_<name>(int argc, char **argv) with argv[0] = the name). */
#ifndef MAYA_COMMANDS_H
#define MAYA_COMMANDS_H

#define MAYA_COMMANDS(X) \
    X(hwspecs, "list GPU and cluster descriptions, or show one") \
    X(estimate, "predict the duration of one op on a GPU (maya estimate --help)") \
    X(trace,   "inspect, build and export traces (maya trace dump FILE, maya trace export --chakra)") \
    X(run,     "run a workload on emulated GPUs and report what it would cost") \
    X(report,  "collate, estimate, simulate and report again on a run directory") \
    X(search,  "find the fastest parallel configuration of a workload (maya search --help)") \
    X(profile, "run a workload on this machine's real GPUs, measuring every op (maya profile --help)")

#define MAYA_DECLARE_CMD(name, help) int cmd_##name(int argc, char **argv);
MAYA_COMMANDS(MAYA_DECLARE_CMD)
#undef MAYA_DECLARE_CMD

/* maya profile runs its workload with maya run's launcher, on real GPUs
 * (src/cmd_run.c): each rank gets libmaya-profile.so preloaded and real_libdir
 * (if set) first in LD_LIBRARY_PATH; no pipeline runs after. */
struct run_passthrough {
    const char *gpu_key;         /* hwspec key of this machine's GPUs */
    int gpus;                    /* how many the machine has */
    const char *real_libdir;     /* MAYA_PROFILE_REAL_LIBDIR, or NULL */
    char dir[4096];              /* set: the run directory made */
};
int cmd_run_passthrough(int argc, char **argv, struct run_passthrough *pt);

/* maya trace export (src/trace_export.c), argv[0] = "export". */
int trace_export(int argc, char **argv);

/* Shared by commands: load hwspecs from the install (or MAYA_HWSPEC_DIR). */
struct maya_hwspecs;
int cli_load_hwspecs(struct maya_hwspecs *hw);
/* maya estimate launch (estimate_launch.c): argv[0] is "launch". */
int cmd_estimate_launch(int argc, char **argv);

#endif

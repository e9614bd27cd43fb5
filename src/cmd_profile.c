/* maya profile [OPTIONS] [--] CMD [ARGS...]   measure a workload on real GPUs
 * maya profile --export DIR [--out OUT]     its measurements as training tables
 * maya profile --compare DIR RUN_DIR        a prediction against it
 *
 * Profiling runs CMD with maya run's launcher (ranks, identity, logs,
 * run.conf) but on this machine's GPUs: each process gets libmaya-profile.so
 * preloaded (emulator/profile/prof.h), which forwards every call to the real
 * CUDA libraries and records the trace the emulator would, with the
 * measured device time of every op. Without a GPU nothing is run.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "profile.h"
#include "maya/common.h"
#include "maya/estimator.h"
#include "maya/hwspec.h"

#define EXIT_NO_GPU 4

static void usage(FILE *fp)
{
    fprintf(fp,
        "usage: maya profile [OPTIONS] [--] CMD [ARGS...]\n"
        "       maya profile --export DIR [--out OUT]\n"
        "       maya profile --compare DIR RUN_DIR [--iteration-marker NAME]\n"
        "       maya profile --compare TRACE.json[,TRACE.json...]|TRACE_DIR RUN_DIR\n"
        "  Run CMD on this machine's GPUs through the real CUDA libraries, recording the trace\n"
        "  maya's emulator records plus the measured device time of every kernel, copy, memset,\n"
        "  GEMM and collective, into DIR (a run directory: docs/run-dir.md).\n"
        "  -n, --nproc N          processes (ranks) to start (default 1), as maya run starts them\n"
        "  -o, --output DIR       profile directory (default: maya-profile-YYYYmmdd-HHMMSS)\n"
        "  --gpu KEY              the hwspec key of this machine's GPU, when maya does not know its\n"
        "                         name (maya hwspecs list)\n"
        "  --timeout SECONDS      stop the workload after this long\n"
        "  -q, --quiet            no progress line and no summary\n"
        "  --export DIR           write DIR's measured ops as the estimator's training tables\n"
        "                         (gemm.csv, kernel.csv, allreduce.csv, sendrecv.csv) into OUT\n"
        "                         (default DIR/tables), for maya-est-train --data OUT\n"
        "  --compare DIR RUN_DIR  compare maya's prediction of the same program (RUN_DIR, made by\n"
        "                         maya run) with profile DIR: per-op error by op family and the\n"
        "                         iteration time, into RUN_DIR/compare.txt and compare.json\n"
        "  --compare TRACES RUN_DIR  the same against PyTorch profiler (Kineto) traces of a GPU\n"
        "                         run, one JSON file per rank, gzip'd or not (comma-separated, or\n"
        "                         every *.json and *.json.gz of TRACE_DIR): kernels and collectives\n"
        "                         matched op by op; error per family, the ranks (stragglers) and\n"
        "                         ops that differ most\n"
        "Environment: MAYA_PROFILE_REAL_LIBDIR  where the real CUDA libraries are (default: where\n"
        "the dynamic linker finds them for the program).\n"
        "Exit status: 0 the workload succeeded and was measured; 1 the workload failed; 2 bad\n"
        "usage; 3 a profile could not be read or compared; 4 no usable GPU (nothing was run).\n");
}

/* The hwspec key of the probed GPU: by product name, or --gpu. */
static int gpu_key(const struct profile_probe *p, const char *want, char *key, size_t size)
{
    struct maya_hwspecs hw;
    if (cli_load_hwspecs(&hw) < 0)
        return -1;
    int rc = 0;
    const struct maya_gpu_spec *g = NULL;
    if (want) {
        g = maya_hwspecs_find_gpu(&hw, want);
        if (!g) {
            char names[2048];
            maya_hwspecs_gpu_names(&hw, names, sizeof names);
            rc = maya_error("--gpu %s: not a known GPU; known: %s", want, names);
        } else if (strcmp(g->prop.name, p->name)) {
            maya_warn("--gpu %s is \"%s\"; this machine's GPU says it is \"%s\"", g->key, g->prop.name, p->name);
        }
    } else {
        for (size_t i = 0; i < hw.ngpus && !g; i++)
            if (!strcmp(hw.gpus[i].prop.name, p->name))
                g = &hw.gpus[i];
        if (!g)
            rc = maya_error("this machine's GPU is \"%s\", which no GPU description names (maya hwspecs "
                            "list); give the closest with --gpu KEY, or describe it (maya-hwspec(5))", p->name);
    }
    if (g)
        snprintf(key, size, "%s", g->key);
    maya_hwspecs_free(&hw);
    return rc;
}

/* Did any rank leave a trace (rank-N.mtrace, or .tmp when it crashed)? */
static int any_trace(const char *dir)
{
    char path[4096 + 16];
    snprintf(path, sizeof path, "%s/traces", dir);
    DIR *d = opendir(path);
    int found = 0;
    for (struct dirent *de; d && !found && (de = readdir(d));)
        found = strstr(de->d_name, ".mtrace") != NULL;
    if (d)
        closedir(d);
    return found;
}

static int run_profile(int argc, char **argv)
{
    /* --gpu is ours; everything else is maya run's */
    const char *want = NULL;
    int quiet = 0;
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args)
        return maya_error("out of memory"), 1;
    int n = 0, have_cmd = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && !strcmp(argv[i], "--")) {
            have_cmd = i + 1 < argc;
            while (i < argc)
                args[n++] = argv[i++];
            break;
        }
        if (i > 0 && !strcmp(argv[i], "--gpu")) {
            if (i + 1 >= argc) {
                free(args);
                maya_error("--gpu: expected a GPU's hwspec key after it");
                return 2;
            }
            want = argv[++i];
            continue;
        }
        if (i > 0 && argv[i][0] != '-' && (!strcmp(argv[i - 1], "-n") || !strcmp(argv[i - 1], "--nproc") ||
                                           !strcmp(argv[i - 1], "-o") || !strcmp(argv[i - 1], "--output") ||
                                           !strcmp(argv[i - 1], "--timeout"))) {
            args[n++] = argv[i];
            continue;
        }
        if (i > 0 && argv[i][0] != '-') { /* the command: the rest is its own */
            have_cmd = 1;
            while (i < argc)
                args[n++] = argv[i++];
            break;
        }
        quiet |= !strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet");
        args[n++] = argv[i];
    }

    if (!have_cmd) {
        free(args);
        maya_error("no command to profile: expected maya profile [OPTIONS] -- CMD [ARGS...]");
        return 2;
    }
    const char *real = getenv("MAYA_PROFILE_REAL_LIBDIR");
    struct profile_probe p;
    if (profile_probe(real, &p) < 0) {
        free(args);
        return EXIT_NO_GPU;
    }
    if (p.count <= 0) {
        struct stat st;
        maya_error("no GPU to profile on: %s%s. maya profile measures a program on real NVIDIA GPUs; "
                   "to predict what it would cost without one, use maya run", p.why,
                   stat("/dev/nvidiactl", &st) ? " (and /dev/nvidiactl is missing: no NVIDIA driver is loaded)"
                                               : "");
        free(args);
        return EXIT_NO_GPU;
    }
    struct run_passthrough pt = { .gpus = p.count, .real_libdir = real };
    char key[64];
    if (gpu_key(&p, want, key, sizeof key) < 0) {
        free(args);
        return 2;
    }
    pt.gpu_key = key;
    if (!quiet)
        fprintf(stderr, "maya profile: %d x %s (%s, %s)\n", p.count, p.name, key, p.lib);
    int rc = cmd_run_passthrough(n, args, &pt);
    free(args);
    if ((rc != 0 && rc != 1) || !pt.dir[0])
        return rc;
    if (!any_trace(pt.dir)) {
        if (!quiet)
            fprintf(stderr, "maya profile: the workload made no CUDA call the profiler traces: nothing was "
                            "measured\n");
        return rc;
    }
    if (profile_summary(pt.dir, quiet ? NULL : stderr) < 0 && rc == 0)
        rc = 3;
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --compare TRACES RUN_DIR with PyTorch profiler traces: a directory of
 * them (every *.json and *.json.gz, in name order) or a comma-separated list. */
static int compare_kineto(const char *spec, const char *run_dir, int quiet)
{
    char *list[4096];
    int n = 0, rc = 3;
    struct stat st;
    if (stat(spec, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(spec);
        struct dirent *e;
        while (d && (e = readdir(d)) && n < 4096) {
            size_t len = strlen(e->d_name);
            int json = (len > 5 && !strcmp(e->d_name + len - 5, ".json")) ||
                       (len > 8 && !strcmp(e->d_name + len - 8, ".json.gz"));
            if (json && asprintf(&list[n], "%s/%s", spec, e->d_name) > 0)
                n++;
        }
        if (d)
            closedir(d);
        if (!n)
            maya_error("%s holds no run.conf and no *.json or *.json.gz: expected a profile directory or PyTorch profiler traces",
                       spec);
        qsort(list, (size_t)n, sizeof *list, by_name);
    } else {
        for (const char *p = spec; *p && n < 4096;) {
            const char *c = strchr(p, ',');
            size_t len = c ? (size_t)(c - p) : strlen(p);
            if (len && (list[n] = strndup(p, len)))
                n++;
            p += len + (c != NULL);
        }
    }
    if (n && profile_compare_kineto((const char *const *)list, n, run_dir, quiet) == 0)
        rc = 0;
    for (int i = 0; i < n; i++)
        free(list[i]);
    return rc;
}

static int export_tables(const char *dir, const char *out)
{
    char def[4096 + 16];
    if (!out) {
        snprintf(def, sizeof def, "%s/tables", dir);
        out = def;
    }
    struct est_export_counts c;
    if (est_profile_export(dir, out, &c) < 0)
        return 3;
    fprintf(stderr, "maya profile: %s: %llu rows (gemm %llu, kernel %llu, allreduce %llu, sendrecv %llu) from "
                    "%llu measured ops; %llu ops fit no table\n", out,
            (unsigned long long)(c.rows[0] + c.rows[1] + c.rows[2] + c.rows[3]), (unsigned long long)c.rows[0],
            (unsigned long long)c.rows[1], (unsigned long long)c.rows[2], (unsigned long long)c.rows[3],
            (unsigned long long)c.measured, (unsigned long long)c.skipped);
    fprintf(stderr, "maya profile: train with maya-est-train --data estimator/data --data %s --out MODELS\n", out);
    return 0;
}

int cmd_profile(int argc, char **argv)
{
    const char *export_dir = NULL, *out = NULL, *marker = NULL;
    const char *cmp[2] = { NULL, NULL };
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--") || (a[0] != '-' && !export_dir && !cmp[0]))
            break;
        if (!strcmp(a, "--export") || !strcmp(a, "--out") || !strcmp(a, "--iteration-marker")) {
            if (i + 1 >= argc) {
                maya_error("%s: expected a value after it", a);
                return 2;
            }
            *(!strcmp(a, "--export") ? &export_dir : !strcmp(a, "--out") ? &out : &marker) = argv[++i];
        } else if (!strcmp(a, "--compare")) {
            if (i + 2 >= argc) {
                maya_error("--compare: expected a profile directory and a run directory after it");
                return 2;
            }
            cmp[0] = argv[++i];
            cmp[1] = argv[++i];
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (export_dir || cmp[0]) {
            maya_error("unknown option \"%s\" (maya profile --help lists them)", a);
            return 2;
        }
    }
    if (export_dir && cmp[0]) {
        maya_error("--export and --compare: one at a time");
        return 2;
    }
    if (export_dir)
        return export_tables(export_dir, out);
    if (cmp[0]) {
        char conf[4200];
        struct stat st;
        snprintf(conf, sizeof conf, "%s/run.conf", cmp[0]);
        if (stat(conf, &st) != 0) /* not a profile directory: PyTorch profiler traces */
            return compare_kineto(cmp[0], cmp[1], quiet);
        return profile_compare(cmp[0], cmp[1], marker, quiet) < 0 ? 3 : 0;
    }
    if (out || marker) {
        maya_error("%s goes with %s", out ? "--out" : "--iteration-marker", out ? "--export" : "--compare");
        return 2;
    }
    return run_profile(argc, argv);
}

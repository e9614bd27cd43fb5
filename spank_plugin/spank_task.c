/* slurmstepd: a step's tasks become emulated ranks.
 *
 * SPANK (Slurm 22.05) cannot add processes to a step, and a step may have
 * fewer tasks than the job emulates GPUs (`srun -n1 --maya-emulate=h100x8`).
 * So each task becomes maya-launch: task_init replaces the task's program
 * (argv[0], which slurmstepd executes right after task_init returns) with
 * lib/maya/maya-launch and passes the real program in MAYA_LAUNCH_EXE; the
 * launcher starts the task's share of ranks (a contiguous block), each a
 * process of the real program with its own rank identity, pins them to
 * cores, and records how each ended. With one task per GPU each task runs
 * one rank the same way, so there is one code path.
 *
 * The batch script's step is not a rank: its shell (and srun, and anything
 * else that never calls CUDA) runs unchanged; it only gets the emulator on
 * LD_LIBRARY_PATH and the emulated GPU, so a CUDA program started directly
 * from the script runs on an emulated device (its trace goes to step-batch).
 *
 * user_init runs once per node, as the user, before the tasks are forked:
 * it makes the run directory and works out MASTER_ADDR; task_init runs in
 * each task's process (also as the user), just before exec.
 */
#define _GNU_SOURCE
#include "spank_maya.h"
#include "maya/run_desc.h"
#include "maya/run_specs.h"
#include "maya/common.h"

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <slurm/slurm.h>

/* What user_init found, inherited by each task's forked process. */
static struct spank_emulate em;
static char run_dir[PATH_MAX];
static char master_addr[256];
static int prepared;

static int get_u32(spank_t sp, spank_item_t item, uint32_t *out, const char *what)
{
    if (spank_get_item(sp, item, out) != ESPANK_SUCCESS)
        return maya_error("cannot get the %s from Slurm", what);
    return 0;
}

/* MASTER_ADDR: the first node of the step, as torchrun under Slurm has it;
 * by its NodeAddr when its name does not resolve (nodes named apart from
 * their hosts, as in a test cluster). */
static void find_master_addr(spank_t sp)
{
    char list[8192];
    master_addr[0] = 0;
    if (spank_getenv(sp, "SLURM_STEP_NODELIST", list, sizeof list) != ESPANK_SUCCESS &&
        spank_getenv(sp, "SLURM_JOB_NODELIST", list, sizeof list) != ESPANK_SUCCESS)
        return;
    hostlist_t hl = slurm_hostlist_create(list);
    char *first = hl ? slurm_hostlist_shift(hl) : NULL;
    if (hl)
        slurm_hostlist_destroy(hl);
    if (!first)
        return;
    snprintf(master_addr, sizeof master_addr, "%s", first);
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
    if (getaddrinfo(first, NULL, &hints, &res) == 0) {
        freeaddrinfo(res);
    } else {
        node_info_msg_t *nodes = NULL;
        if (slurm_load_node_single(&nodes, first, SHOW_ALL) == 0 && nodes && nodes->record_count == 1 &&
            nodes->node_array[0].node_addr)
            snprintf(master_addr, sizeof master_addr, "%s", nodes->node_array[0].node_addr);
        if (nodes)
            slurm_free_node_info_msg(nodes);
    }
    free(first);
}

static void join_argv(spank_t sp, char *buf, size_t size)
{
    int argc = 0;
    char **argv = NULL;
    size_t used = 0;
    buf[0] = 0;
    if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS)
        return;
    for (int i = 0; i < argc && used + 1 < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? " " : "", argv[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* gpu.conf and cluster.conf: the descriptions the run uses, kept as maya
 * run keeps them (a cluster file is copied by copy_cluster_file). */
static int record_specs(const struct spank_conf *conf, struct maya_run_desc *d)
{
    struct maya_hwspecs hw;
    if (maya_hwspecs_load_dir(conf->hwspecs, &hw) < 0)
        return -1;
    const struct maya_gpu_spec *g = maya_hwspecs_find_gpu(&hw, em.gpu);
    const struct maya_cluster_spec *named =
        em.cluster[0] && !em.cluster_is_file ? maya_hwspecs_find_cluster(&hw, em.cluster) : NULL;
    struct maya_cluster_spec c;
    memset(&c, 0, sizeof c);
    int rc = g ? 0 : maya_error("GPU \"%s\" is not in %s", em.gpu, conf->hwspecs);
    if (rc == 0 && named)
        c = *named;
    else if (rc == 0 && !em.cluster_is_file)
        rc = maya_default_cluster(&hw, g, em.count, &c);
    if (rc == 0) {
        snprintf(c.gpu, sizeof c.gpu, "%s", g->key);
        c.gpus_per_node = em.gpus_per_node;
        c.nodes = em.nodes;
        rc = maya_run_record_specs(d, run_dir, g, &c);
    }
    maya_hwspecs_free(&hw);
    return rc;
}

/* slurm/step.conf: the run's description as launch time knows it (a run.conf
 * without process states); the post-processing adds how each process ended,
 * from the launchers' slurm/task-N.conf. */
static int write_step_conf(spank_t sp, uint32_t step, const struct spank_conf *conf)
{
    char path[PATH_MAX];
    struct maya_run_desc d;
    maya_run_desc_init(&d);
    snprintf(d.launcher, sizeof d.launcher, "slurm");
    snprintf(d.gpu, sizeof d.gpu, "%s", em.gpu);
    d.gpu_count = em.count;
    snprintf(d.cluster, sizeof d.cluster, "%s", em.cluster_is_file ? "cluster.conf" : em.cluster);
    d.gpus_per_node = em.gpus_per_node;
    d.nodes = em.nodes;
    snprintf(d.iteration_marker, sizeof d.iteration_marker, "%s", em.marker);
    d.iterations = em.iterations;
    join_argv(sp, d.command, sizeof d.command);
    if (!getcwd(d.workdir, sizeof d.workdir))
        d.workdir[0] = 0;
    maya_utc_now(d.start_time, sizeof d.start_time);
    /* The batch script is one process standing for whatever it starts. */
    int rc = record_specs(conf, &d);
    if (rc == 0)
        rc = maya_run_desc_set_nprocs(&d, step == SPANK_STEP_BATCH ? 1 : em.count);
    if (rc == 0 && maya_snprintf(path, sizeof path, "%s/slurm/step.conf", run_dir) == 0)
        rc = maya_run_desc_write(path, &d);
    else
        rc = -1;
    maya_run_desc_free(&d);
    return rc;
}

static int copy_cluster_file(void)
{
    char *data, dest[PATH_MAX];
    size_t len;
    if (!em.cluster_is_file)
        return 0;
    if (maya_read_file(em.cluster, &data, &len) < 0)
        return -1;
    int rc = maya_snprintf(dest, sizeof dest, "%s/cluster.conf", run_dir) < 0
                 ? -1 : maya_write_file_atomic(dest, data, len);
    free(data);
    return rc;
}

int spank_task_user_init(spank_t sp, const struct spank_conf *conf, const char *value)
{
    uint32_t job, step, nodeid = 0;
    uid_t uid;
    char cwd[PATH_MAX], user[256];
    if (get_u32(sp, S_JOB_ID, &job, "job id") < 0 || get_u32(sp, S_JOB_STEPID, &step, "step id") < 0 ||
        spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
        return -1;
    if (step == SPANK_STEP_EXTERN)
        return 0;
    spank_get_item(sp, S_JOB_NODEID, &nodeid);
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = 0;
    if (spank_emulate_load(conf, value, cwd[0] ? cwd : NULL, &em) < 0)
        return -1;
    spank_user_name(uid, user, sizeof user);
    if (step == SPANK_STEP_BATCH && spank_retire_job_dir(conf, user, job) < 0)
        return -1;
    if (spank_run_dir(conf, user, job, step, run_dir, sizeof run_dir) < 0 ||
        spank_make_run_dir(conf, user, uid, run_dir) < 0)
        return -1;
    if (nodeid == 0 && (write_step_conf(sp, step, conf) < 0 || copy_cluster_file() < 0))
        return -1;
    if (step != SPANK_STEP_BATCH && step != SPANK_STEP_INTERACTIVE)
        find_master_addr(sp);
    prepared = 1;
    return 0;
}

static int set_env(spank_t sp, const char *name, const char *value, int overwrite)
{
    spank_err_t rc = spank_setenv(sp, name, value, overwrite);
    if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS)
        return maya_error("cannot set %s for the task: %s", name, spank_strerror(rc));
    return 0;
}

static int set_envf(spank_t sp, const char *name, int overwrite, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int set_envf(spank_t sp, const char *name, int overwrite, const char *fmt, ...)
{
    char buf[PATH_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf)
        return maya_error("value of %s too long", name);
    return set_env(sp, name, buf, overwrite);
}

/* The emulator's libraries first on LD_LIBRARY_PATH, once (a batch script's
 * srun passes its own environment on). */
static int set_library_path(spank_t sp, const char *lib)
{
    char cur[16384];
    if (spank_getenv(sp, "LD_LIBRARY_PATH", cur, sizeof cur) != ESPANK_SUCCESS || !cur[0])
        return set_env(sp, "LD_LIBRARY_PATH", lib, 1);
    size_t n = strlen(lib);
    if (!strncmp(cur, lib, n) && (cur[n] == ':' || cur[n] == 0))
        return 0;
    return set_envf(sp, "LD_LIBRARY_PATH", 1, "%s:%s", lib, cur);
}

/* Environment every process of the step shares. Triton (torch.compile)
 * finds libcuda through TRITON_LIBCUDA_PATH before ldconfig: point it at
 * maya's, unless the user chose one, as maya run does; NVTX v3 loads the
 * injection library NVTX_INJECTION64_PATH names (maya's records NVTX ranges
 * in the trace), unless the user chose another. */
static int set_common_env(spank_t sp, const struct spank_conf *conf)
{
    char lib[PATH_MAX];
    if (maya_snprintf(lib, sizeof lib, "%s/lib/maya", conf->prefix) < 0)
        return -1;
    if (set_library_path(sp, lib) < 0 || set_env(sp, "TRITON_LIBCUDA_PATH", lib, 0) < 0 ||
        set_envf(sp, "NVTX_INJECTION64_PATH", 0, "%s/libmaya-nvtx.so", lib) < 0 ||
        set_env(sp, "MAYA_GPU", em.gpu, 1) < 0 ||
        set_envf(sp, "MAYA_GPUS_PER_NODE", 1, "%d", em.gpus_per_node) < 0 ||
        set_env(sp, "MAYA_INTRA_NODE", maya_intra_link_name(em.intra), 1) < 0 ||
        set_envf(sp, "MAYA_TRACE_DIR", 1, "%s/traces", run_dir) < 0)
        return -1;
    return 0;
}

int spank_task_init(spank_t sp, const struct spank_conf *conf, const char *value)
{
    uint32_t job, step, ntasks, task, nlocal;
    int local;
    if (get_u32(sp, S_JOB_ID, &job, "job id") < 0 || get_u32(sp, S_JOB_STEPID, &step, "step id") < 0)
        return -1;
    if (step == SPANK_STEP_EXTERN)
        return 0;
    if (!prepared) /* user_init failed or did not run: it said why */
        return -1;
    if (set_common_env(sp, conf) < 0)
        return -1;
    if (step == SPANK_STEP_BATCH || step == SPANK_STEP_INTERACTIVE)
        return set_env(sp, "MAYA_NODE", "0", 1);

    if (get_u32(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks, "task count") < 0 ||
        get_u32(sp, S_TASK_GLOBAL_ID, &task, "task id") < 0 ||
        get_u32(sp, S_JOB_LOCAL_TASK_COUNT, &nlocal, "local task count") < 0 ||
        spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS)
        return -1;
    if ((int64_t)ntasks > em.count)
        return maya_error("--maya-emulate=%s: the step has %u tasks for %d emulated GPUs; "
                          "run at most %d tasks (each runs its share of the ranks)",
                          value, ntasks, em.count, em.count);
    /* Contiguous blocks of ranks, as even as the division allows. */
    int64_t first = (int64_t)task * em.count / ntasks;
    int64_t last = (int64_t)(task + 1) * em.count / ntasks;

    int argc = 0;
    char **argv = NULL;
    if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1 || !argv[0])
        return maya_error("cannot get the task's command from Slurm");
    static char launcher[PATH_MAX];
    if (maya_snprintf(launcher, sizeof launcher, "%s/lib/maya/maya-launch", conf->prefix) < 0)
        return -1;
    if (access(launcher, X_OK) < 0)
        return maya_error("cannot run %s: %m (is maya installed at prefix=%s on this node?)", launcher,
                          conf->prefix);

    /* The same on every node without talking: from the job and step ids, in
     * 10000..29999, below Linux's ephemeral ports (32768..60999), where
     * outgoing connections would take it first. */
    char port[16];
    snprintf(port, sizeof port, "%u", 10000u + (job % 625u) * 32u + (step % 32u));
    if (set_envf(sp, "WORLD_SIZE", 1, "%d", em.count) < 0 ||
        (master_addr[0] && set_env(sp, "MASTER_ADDR", master_addr, 0) < 0) ||
        set_env(sp, "MASTER_PORT", port, 0) < 0 ||
        (em.count > 1 && set_env(sp, "OMP_NUM_THREADS", "1", 0) < 0) ||
        set_env(sp, "MAYA_LAUNCH_EXE", argv[0], 1) < 0 ||
        set_envf(sp, "MAYA_LAUNCH_RANKS", 1, "%lld:%lld", (long long)first, (long long)(last - first)) < 0 ||
        set_envf(sp, "MAYA_LAUNCH_TASK", 1, "%u", task) < 0 ||
        set_envf(sp, "MAYA_LAUNCH_LOCAL", 1, "%d:%u", local, nlocal) < 0 ||
        set_env(sp, "MAYA_LAUNCH_DIR", run_dir, 1) < 0 ||
        set_env(sp, "MAYA_LAUNCH_PIN", conf->pin ? "1" : "0", 1) < 0 ||
        (em.dedup && set_env(sp, "MAYA_DEDUP", "1", 1) < 0) ||
        (em.replicas[0] && set_env(sp, "MAYA_REPLICAS", em.replicas, 1) < 0))
        return -1;
    /* slurmstepd executes argv[0] of this very array next: the task becomes
     * the launcher, and the launcher runs MAYA_LAUNCH_EXE with the same
     * arguments. */
    argv[0] = launcher;
    return 0;
}

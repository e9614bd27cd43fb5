/* maya run [-g GPUxCOUNT] [-n NPROC] [-o DIR] [--cluster FILE] ... -- CMD [ARGS...]
 *
 * Starts NPROC processes of CMD under the emulator, each with the identity a
 * torchrun/Slurm rank expects, waits for them (stopping the rest when one
 * fails, as torchrun does), records how each ended in DIR/run.conf, then runs
 * the report pipeline on DIR (the same as `maya report DIR`).
 * docs/run-dir.md describes DIR and the variables each process gets.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "pipeline.h"
#include "run_output.h"
#include "maya/run_elim.h"
#include "run_control.h"
#include "replica_stand_in.h"
#include "replicas_auto.h"
#include "maya/common.h"
#include "maya/config.h"
#include "maya/hwspec.h"
#include "maya/progress.h"
#include "maya/replicas.h"
#include "maya/run_specs.h"
#include "maya/run_desc.h"

#define KILL_GRACE_S 10.0

static void usage(FILE *fp)
{
    fprintf(fp,
        "usage: maya run [OPTIONS] [--] CMD [ARGS...]\n"
        "  Run CMD as the ranks of a job on emulated GPUs, then collate, estimate, simulate\n"
        "  and write the report into DIR (docs/run-dir.md), as maya report does.\n"
        "  -g, --gpus GPUxCOUNT     emulated GPUs, e.g. h100x16 (default: h100x1, or the\n"
        "                           --cluster's GPU and size); maya hwspecs list names them\n"
        "  -n, --nproc N            processes to start (default: one per GPU); with 1, the one\n"
        "                           process sees every GPU of its node (torchrun inside, or\n"
        "                           several devices per process)\n"
        "  -o, --output DIR         run directory (default: maya-run-YYYYmmdd-HHMMSS)\n"
        "  --cluster FILE|NAME      cluster description (default: 8 GPUs per node)\n"
        "%s"
        "  --timeout SECONDS        stop the workload after this long (default: no limit)\n"
        "  --replicas N:STRIDE[,...] ranks differing only in the digit (rank / STRIDE) mod N do the\n"
        "                           same work (a DP degree N of stride TP; TP itself is TP:1): only\n"
        "                           those whose folded digits are 0 or 1 are emulated, the others\n"
        "                           run up to their first NCCL call and are rebuilt (docs/dedup.md;\n"
        "                           of a PyTorch job's, only the first few start);\n"
        "                           declared, or from a smaller run with --replicas-like;\n"
        "                           auto: the layout from two smaller runs of the program that\n"
        "                           maya makes first (DIR/probes), the dimension that grew\n"
        "                           between them grown to this job's size\n"
        "  --replicas-like DIR      --replicas with the layout that the --dedup run DIR of the\n"
        "                           same program showed (its ranks that did the same work), its\n"
        "                           outermost (data-parallel) dimension grown to this job's size\n"
        "  --no-report              run the workload and keep its traces, with no report (maya\n"
        "                           report DIR makes it later)\n"
        "  --dedup                  duplicate-rank elimination: once the ranks have repeated their\n"
        "                           first iteration, only one rank per class of ranks issuing the\n"
        "                           same NCCL operations runs on; the others stop and are rebuilt\n"
        "                           from it (docs/dedup.md); automatic: the classes are found, but\n"
        "                           every rank starts\n"
        "  --hang-timeout SECONDS   stop the job when, for this long, no rank has made a call\n"
        "                           while some wait in a collective, naming the ranks that hang\n"
        "                           (default 15)\n"
        "  -q, --quiet              no progress line and no summary (and --tee none unless\n"
        "                           --tee is given); a failed workload still gets one line\n"
        "  --tee RANKS              show these ranks' stdout and stderr on the terminal, line\n"
        "                           by line with a [rank N] prefix when there are several\n"
        "                           processes: all, none, or N[,N...] (default 0); DIR/logs\n"
        "                           keeps every rank's in full either way\n"
        "Defaults for -g, --cluster, the report options and --timeout come from maya.conf\n"
        "(MAYA_CONF, ~/.config/maya/maya.conf, <prefix>/etc/maya.conf; maya.conf(5)).\n"
        "Environment: MAYA_HOST_CLOCK=wall|active|cpu|auto, the clock the ranks' host gaps are\n"
        "  measured on (default auto: cpu when the ranks outnumber this machine's CPUs, else\n"
        "  active: wall time less the time the ranks waited for a CPU).\n"
        "Exit status: 0 the workload and the pipeline succeeded; 1 the workload failed (the\n"
        "report names the failing rank); 3 the pipeline failed (the report says why);\n"
        "2 bad usage.\n",
        PIPELINE_OPTIONS_HELP);
}

struct run {
    const struct run_passthrough *pt; /* maya profile: real GPUs, no pipeline */
    struct maya_run_desc desc;
    struct pipeline_opts popts;
    const struct maya_gpu_spec *gpu;
    struct maya_cluster_spec cluster;
    int count;                  /* GPUs */
    int per_node;               /* processes per node */
    char dir[PATH_MAX];
    char libdir[PATH_MAX];
    char **cmd;
    int port;
    double timeout_s;
    double hang_s;              /* --hang-timeout */
    int quiet, progress;
    struct run_output tee;      /* --tee: which ranks' output the terminal shows */
    int dedup;                  /* --dedup: duplicate-rank elimination (MAYA_DEDUP=1 for the ranks) */
    int eliminated;             /* ranks it stopped so far */
    const char *replicas_spec;  /* --replicas (MAYA_REPLICAS for the ranks) */
    const char *replicas_like;  /* --replicas-like DIR: the layout from DIR's classes */
    int replicas_auto;          /* --replicas auto: the layout from smaller runs (replicas_auto.c) */
    int no_report;              /* --no-report */
    char replicas_text[256];    /* the layout made from them */
    struct maya_replicas replicas;
    int next_replica;           /* the next declared replica to start */
    int replicas_alive;         /* declared replicas running now */
    int replicas_more;          /* started beyond the usual few, since those all waited */
    uint64_t replicas_ticks;    /* the CPU time of those running, at the last look */
    double replicas_moved_at;   /* when one of them last used CPU, started or ended */
    double replicas_looked_at;
    int store_tried;            /* PyTorch's store was tried for the replicas, and answered or not */
    double store_since;         /* when it was first tried (now_s), 0: not yet */
    int stand_ins;              /* replicas never started (replica_stand_in.c): the */
    int stand_ins_from;         /* replicas from this rank on */
    pid_t parent;               /* maya run itself */
    double t0;                  /* when the ranks started (now_s) */
    const char *host_clock;     /* MAYA_HOST_CLOCK the ranks get; NULL: leave as it is */
    int cpus;                   /* CPUs maya run may use (its affinity) */
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

/* From here on, SIGINT and SIGTERM stop the job in order (the ranks, then
 * run.conf) instead of ending maya run at once. */
static void catch_signals(void)
{
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static double now_s(void)
{
    return maya_mono_ns() / 1e9;
}

/* A TCP port nobody listens on now (the kernel picks it). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return maya_error("cannot create a socket to find a free port: %m");
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    else
        maya_error("cannot find a free port: %m");
    close(fd);
    return port;
}

/* The GPUs (-g) and the cluster (--cluster: a file, a known cluster's name,
 * or the GPU's default node). */
static int pick_cluster(struct run *r, struct maya_hwspecs *hw, const char *cluster_arg, const char *gpus_arg)
{
    if (gpus_arg) {
        if (maya_parse_gpu_count(hw, gpus_arg, &r->gpu, &r->count) < 0)
            return -1;
    } else if (cluster_arg) {
        /* the cluster's own GPU and size */
        struct maya_cluster_spec c;
        if (pipeline_cluster_lookup(hw, cluster_arg, NULL, &c) < 0)
            return -1;
        r->gpu = maya_hwspecs_find_gpu(hw, c.gpu);
        if (!r->gpu)
            return maya_error("--cluster %s names GPU \"%s\", which is not known (maya hwspecs list)",
                              cluster_arg, c.gpu);
        r->count = c.gpus_per_node * MAYA_MAX(c.nodes, 1);
    } else if (maya_parse_gpu_count(hw, "h100x1", &r->gpu, &r->count) < 0) {
        return -1;
    }
    return pipeline_cluster(hw, r->gpu, r->count, cluster_arg, NULL, &r->cluster);
}

static int check_nprocs(struct run *r, int nproc)
{
    int nodes = r->cluster.nodes, gpn = r->cluster.gpus_per_node;
    if (nproc < 1 || nproc > (1 << 20))
        return maya_error("-n %d: expected 1 or more processes", nproc);
    if (nproc % nodes)
        return maya_error("-n %d: %d GPUs span %d nodes of %d; expected a multiple of %d processes "
                          "(they are spread evenly over the nodes)", nproc, r->count, nodes, gpn, nodes);
    r->per_node = nproc / nodes;
    if (r->per_node > gpn || gpn % r->per_node)
        return maya_error("-n %d: %d processes per node cannot share %d GPUs evenly; expected a "
                          "divisor of %d per node", nproc, r->per_node, gpn, gpn);
    return 0;
}

static void set_env_long(const char *name, long v, int overwrite)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    setenv(name, buf, overwrite);
}

static void set_env_int(const char *name, long v)
{
    set_env_long(name, v, 1);
}

/* In the child: identity, emulator settings, logs; then exec. Never returns. */
static void exec_rank(const struct run *r, int rank)
{
    int nproc = r->desc.nprocs, node = rank / r->per_node, local = rank % r->per_node;
    char path[PATH_MAX + 64];
    setpgid(0, 0);
    /* a rank does not outlive a maya run that was killed outright */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != r->parent)
        _exit(127);
    snprintf(path, sizeof path, "%s/logs/rank-%d.out", r->dir, rank);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    snprintf(path, sizeof path, "%s/logs/rank-%d.err", r->dir, rank);
    int err = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int in = nproc == 1 ? 0 : open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || dup2(in, 0) < 0)
        _exit(127);
    set_env_int("RANK", rank);
    set_env_int("WORLD_SIZE", nproc);
    set_env_int("LOCAL_RANK", local);
    set_env_int("LOCAL_WORLD_SIZE", r->per_node);
    set_env_int("NODE_RANK", node);
    set_env_int("GROUP_RANK", node);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    set_env_int("MASTER_PORT", r->port);
    if (nproc > 1)
        setenv("OMP_NUM_THREADS", "1", 0);
    if (r->host_clock)
        setenv("MAYA_HOST_CLOCK", r->host_clock, 1);
    if (r->dedup)
        setenv("MAYA_DEDUP", "1", 1);
    if (r->replicas_spec) {
        setenv("MAYA_REPLICAS", r->replicas_spec, 1);
        /* PyTorch makes a communicator of more than TORCH_NCCL_RANKS_PER_ROOT
         * (default 128) ranks from an NCCL id per 128 of them, each made by
         * its first rank (128, 256, ...: replicas, which stop at their first
         * NCCL call), and every rank waits for all of them. One id, rank 0's,
         * makes the same communicator (docs/dedup.md); the user's setting
         * stands */
        set_env_long("TORCH_NCCL_RANKS_PER_ROOT", nproc, 0);
    }
    if (r->pt)
        setenv("MAYA_PROFILE_GPU", r->gpu->key, 1);
    else
        setenv("MAYA_GPU", r->gpu->key, 1);
    set_env_int("MAYA_GPUS_PER_NODE", r->cluster.gpus_per_node);
    setenv("MAYA_INTRA_NODE", maya_intra_link_name(r->cluster.intra), 1);
    set_env_int("MAYA_NODE", node);
    if (nproc > 1)
        set_env_int("MAYA_RANK", rank);
    else
        unsetenv("MAYA_RANK");
    snprintf(path, sizeof path, "%s/traces", r->dir);
    setenv(r->pt ? "MAYA_PROFILE_TRACE_DIR" : "MAYA_TRACE_DIR", path, 1);
    int gpus_each = r->cluster.gpus_per_node / r->per_node;
    if (gpus_each > 1 && r->per_node > 1) {
        char vis[1024] = "";
        for (int i = 0; i < gpus_each; i++)
            snprintf(vis + strlen(vis), sizeof vis - strlen(vis), "%s%d", i ? "," : "", local * gpus_each + i);
        setenv("CUDA_VISIBLE_DEVICES", vis, 1);
    }
    const char *old = getenv("LD_LIBRARY_PATH");
    const char *first = r->pt ? r->pt->real_libdir : r->libdir; /* maya profile: the real libraries */
    char ld[PATH_MAX * 4];
    if (first && *first) {
        snprintf(ld, sizeof ld, "%s%s%s", first, old && *old ? ":" : "", old && *old ? old : "");
        setenv("LD_LIBRARY_PATH", ld, 1);
    }
    if (r->pt) {
        old = getenv("LD_PRELOAD");
        snprintf(ld, sizeof ld, "%s/libmaya-profile.so%s%s", r->libdir, old && *old ? ":" : "",
                 old && *old ? old : "");
        setenv("LD_PRELOAD", ld, 1);
    } else {
        /* Triton (torch.compile) links its launcher against the libcuda it finds
         * here, before ldconfig's (a real driver's, where one is installed). */
        setenv("TRITON_LIBCUDA_PATH", r->libdir, 0);
        /* NVTX v3 (header-only: PyTorch, llm.c) loads the library named here
         * on a program's first NVTX call: its ranges go into the trace. */
        snprintf(ld, sizeof ld, "%s/libmaya-nvtx.so", r->libdir);
        setenv("NVTX_INJECTION64_PATH", ld, 0);
    }
    /* maya's handlers were inherited with the signals blocked (start_all):
     * restore the defaults first, so a stop sent now still ends the child. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execvp(r->cmd[0], r->cmd);
    fprintf(stderr, "maya run: cannot execute %s: %s\n", r->cmd[0], strerror(errno));
    _exit(127);
}

static int find_proc(const struct run *r, pid_t pid)
{
    for (int i = 0; i < r->desc.nprocs; i++)
        if (r->desc.procs[i].pid == pid && r->desc.procs[i].end == MAYA_RUN_UNKNOWN)
            return i;
    return -1;
}

/* Stop every process still running (its whole process group). */
static void stop_all(struct run *r, int sig, const char *why)
{
    for (int i = 0; i < r->desc.nprocs; i++) {
        struct maya_run_proc *p = &r->desc.procs[i];
        if (p->end != MAYA_RUN_UNKNOWN || p->pid <= 0)
            continue;
        if (why && !p->note[0])
            snprintf(p->note, sizeof p->note, "%s", why);
        kill(-(pid_t)p->pid, sig);
        if (sig != SIGKILL)
            kill(-(pid_t)p->pid, SIGCONT); /* a stopped process acts on it only once continued */
    }
}

/* The first cause of the run's end, for run.conf and the report's headline. */
static void set_cause(struct run *r, const char *fmt, ...) MAYA_PRINTF(2, 3);
static void set_cause(struct run *r, const char *fmt, ...)
{
    if (r->desc.cause[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->desc.cause, sizeof r->desc.cause, fmt, ap);
    va_end(ap);
}

/* run.conf as it stands now (at most every half second while ranks run). */
static void save_desc(struct run *r, int now)
{
    static double last;
    if (!now && now_s() - last < 0.5)
        return;
    last = now_s();
    r->desc.wall_s = now_s() - r->t0;
    if (run_desc_save(r->dir, &r->desc) < 0)
        maya_warn("%s: run.conf not updated (maya report may not know how the ranks ended)", r->dir);
}

static void show_progress(const struct run *r, int done, int failed, double t0, int final)
{
    if (!r->progress)
        return;
    int n = r->desc.nprocs;
    char elim[48] = "";
    if (r->eliminated)
        snprintf(elim, sizeof elim, ", %d eliminated", r->eliminated);
    fprintf(stderr, "\rmaya run: %d/%d ranks done%s, %d running, %d failed  %.1fs   %s", done, n, elim,
            n - done, failed, now_s() - t0, final ? "\n" : "");
    fflush(stderr);
}

/* A rank that exited 0 after duplicate-rank elimination stopped it: say so
 * in run.conf ("eliminated, rebuilt from rank S"). */
static void note_eliminated(struct run *r, int i)
{
    struct maya_run_proc *p = &r->desc.procs[i];
    char traces[PATH_MAX + 16];
    snprintf(traces, sizeof traces, "%s/traces", r->dir);
    if ((r->dedup || r->replicas_spec) && maya_run_proc_ok(p) && !p->note[0] &&
        run_elim_note(traces, i, p->note, sizeof p->note))
        r->eliminated++;
}

static int start_one(struct run *r, int i);
static int is_replica(const struct run *r, int i);

#define REPLICAS_ASLEEP_S 2.0

/* The CPU time (clock ticks) of the replicas running now, added up, and
 * the memory one of them holds on average (resident). Costs a read of
 * /proc/PID/stat per replica running. */
static void replicas_usage(const struct run *r, uint64_t *ticks, uint64_t *rss_each)
{
    uint64_t t, rss, sum = 0;
    int n = 0;
    *ticks = 0;
    for (int i = 0; i < r->desc.nprocs; i++) {
        const struct maya_run_proc *p = &r->desc.procs[i];
        if (is_replica(r, i) && p->pid > 0 && p->end == MAYA_RUN_UNKNOWN && run_proc_usage(p->pid, &t, &rss) == 0) {
            *ticks += t;
            sum += rss;
            n++;
        }
    }
    *rss_each = n ? sum / (uint64_t)n : 0;
}

/* The replicas running now have all been asleep (used no CPU) for
 * REPLICAS_ASLEEP_S: they wait for something that ranks not started yet
 * must do first. A program whose start-up is a rendezvous of every rank
 * does that: PyTorch's TCP store (rank 0 waits until every rank has
 * connected, the others then wait for rank 0's NCCL id). Looked at twice
 * a second. rss_each: what one of them holds. */
static int replicas_asleep(struct run *r, uint64_t *rss_each)
{
    double now = now_s();
    if (now - r->replicas_looked_at < 0.5)
        return 0;
    r->replicas_looked_at = now;
    uint64_t ticks;
    replicas_usage(r, &ticks, rss_each);
    if (ticks != r->replicas_ticks) {
        r->replicas_ticks = ticks;
        r->replicas_moved_at = now;
    }
    return now - r->replicas_moved_at >= REPLICAS_ASLEEP_S;
}

#define STORE_WAIT_S 60.0

/* The replicas running all wait (replicas_asleep) and are PyTorch
 * processes: they wait at PyTorch's start-up rendezvous, whose rank 0
 * counts the clients of its TCP store (on MASTER_PORT) until every rank
 * has joined. Join it for the replicas from rank `from` on, which then
 * never start: maya run writes their traces once the job has ended
 * (write_stand_ins). Returns how many; -2 when nothing listens on the
 * store's port yet (rank 0 has not made it) and STORE_WAIT_S have not
 * passed since r->store_since; 0 when they are not PyTorch's or the store
 * did not take them (then more are started, as for any rendezvous). */
static int stand_in_replicas(struct run *r, int from)
{
    int n = r->desc.nprocs, running = 0, pytorch = 0, left = 0;
    for (int k = 0; k < n; k++) {
        const struct maya_run_proc *p = &r->desc.procs[k];
        if (is_replica(r, k) && p->pid > 0 && p->end == MAYA_RUN_UNKNOWN) {
            running++;
            pytorch += stand_in_is_pytorch((pid_t)p->pid);
        }
        left += k >= from && is_replica(r, k);
    }
    if (!running || pytorch < running || !left)
        return 0;
    char why[256];
    int rc = stand_in_join_store(r->port, left, n, 5.0, why, sizeof why);
    if (rc == -2 && now_s() - r->store_since < STORE_WAIT_S)
        return -2; /* not up yet: said only if it never comes */
    if (rc < 0) {
        maya_warn("the %d replicas running (--replicas) all wait, and PyTorch's store did not take the %d not "
                  "started (%s): starting more", running, left, why);
        return 0;
    }
    for (int k = from; k < n; k++) {
        if (!is_replica(r, k))
            continue;
        struct maya_run_proc *p = &r->desc.procs[k];
        p->end = MAYA_RUN_EXITED;
        p->code = 0;
        snprintf(p->note, sizeof p->note, "a replica, not emulated (--replicas), rebuilt from rank %lld; never "
                 "started: maya run joined PyTorch's store for it",
                 (long long)maya_replicas_representative(&r->replicas, k, n));
        r->eliminated++;
    }
    r->stand_ins = left;
    r->stand_ins_from = from;
    r->next_replica = n;
    return left;
}

/* The traces of the replicas that never started, each as the emulator
 * writes a declared replica's (replica_stand_in.c), from its
 * representative's trace: after the job, when those are whole. A
 * representative that left no whole trace (the job failed) leaves its
 * replicas without one, which the report says. */
static void write_stand_ins(struct run *r)
{
    char traces[PATH_MAX + 16];
    snprintf(traces, sizeof traces, "%s/traces", r->dir);
    struct stand_in_source *src[8] = { 0 };
    int nsrc = 0, n = r->desc.nprocs, written = 0;
    for (int i = 0; i < n; i++)
        if (!maya_run_proc_ok(&r->desc.procs[i]))
            return; /* the job failed: its cause says why */
    for (int i = r->stand_ins_from; i < n; i++) {
        if (!is_replica(r, i))
            continue;
        int rep = (int)maya_replicas_representative(&r->replicas, i, n), k = 0;
        while (k < nsrc && stand_in_source_rank(src[k]) != rep)
            k++;
        if (k == nsrc) {
            if (nsrc == (int)(sizeof src / sizeof src[0])) { /* keep the most recent few */
                stand_in_source_free(src[0]);
                memmove(src, src + 1, (size_t)(nsrc - 1) * sizeof src[0]);
                k = --nsrc;
            }
            if (!(src[k] = stand_in_source_read(traces, rep)))
                break;
            nsrc++;
        }
        const struct maya_run_proc *p = &r->desc.procs[i];
        if (stand_in_write(traces, src[k], i, p->node, p->local_rank, r->replicas_spec) < 0)
            break;
        written++;
    }
    for (int k = 0; k < nsrc; k++)
        stand_in_source_free(src[k]);
    if (written < r->stand_ins && !r->desc.cause[0])
        set_cause(r, "the traces of %d replicas that never started could not be written (above)",
                  r->stand_ins - written);
}

/* Declared replicas (--replicas) run only up to their first NCCL call, for
 * the program's own start-up (a rank 0 that hands out the NCCL id waits for
 * every rank): a few at a time, as earlier ones end, so that a job of
 * thousands of ranks never holds more than that many of them. When all of
 * those running wait (replicas_asleep: a rendezvous that needs every rank
 * connected), another few are started, as many as the machine's available
 * memory holds with one to spare; when it holds none, the job is stopped
 * with a message saying why. When the job is stopping, those not started yet are
 * noted so. Returns how many it took off the count of processes to wait
 * for; -1: stop the job (its cause is set). */
static int start_replicas(struct run *r, int stopping)
{
    int at_once = MAYA_MAX(2, r->cpus) + r->replicas_more, skipped = 0;
    while (r->replicas_spec && r->next_replica < r->desc.nprocs) {
        int i = r->next_replica;
        if (!is_replica(r, i)) {
            r->next_replica++;
            continue;
        }
        struct maya_run_proc *p = &r->desc.procs[i];
        if (stopping) {
            p->end = MAYA_RUN_EXITED;
            p->code = 0;
            snprintf(p->note, sizeof p->note, "not started: the job stopped first");
            r->next_replica++;
            skipped++;
            continue;
        }
        if (r->replicas_alive >= at_once) {
            uint64_t each, avail;
            if (!replicas_asleep(r, &each))
                break;
            if (!r->store_tried) {
                if (!r->store_since)
                    r->store_since = now_s();
                int k = stand_in_replicas(r, i);
                if (k > 0) {
                    skipped += k;
                    break;
                }
                /* rank 0's store not up yet (its start-up is slower than
                 * the replicas', which retry their connection meanwhile):
                 * look again, for up to STORE_WAIT_S */
                if (k == -2)
                    break;
                r->store_tried = 1;
            }
            /* another batch, of as many as the memory holds with one to spare */
            avail = run_mem_available();
            int batch = MAYA_MAX(2, r->cpus);
            if (avail && each) {
                uint64_t fit = avail / each, spare = fit > 1 ? fit - 1 : 0;
                if (spare < (uint64_t)batch)
                    batch = (int)spare;
            }
            if (batch == 0) {
                int left = 0;
                for (int k = i; k < r->desc.nprocs; k++)
                    left += is_replica(r, k);
                set_cause(r, "the %d replicas running (--replicas) all wait, as in a start-up that needs every "
                          "rank at once (PyTorch's TCP store: its rank 0 waits until every rank has connected, "
                          "then the others wait for its NCCL id); the %d not started, at %llu MiB each, do not "
                          "fit the %llu MiB available. Such a program needs every rank's process during its "
                          "start-up: emulate fewer ranks, or run under Slurm across nodes",
                          r->replicas_alive, left, (unsigned long long)(each >> 20),
                          (unsigned long long)(avail >> 20));
                return -1;
            }
            r->replicas_more += batch;
            at_once += batch;
        }
        if (start_one(r, i) < 0)
            break;
        r->replicas_alive++;
        r->next_replica++;
        r->replicas_moved_at = now_s();
    }
    return skipped;
}

/* Rank i failed first: the run's cause; stop the others. */
static void blame(struct run *r, int i)
{
    const struct maya_run_proc *p = &r->desc.procs[i];
    char why[128];
    if (p->end == MAYA_RUN_EXITED)
        set_cause(r, "rank %d exited %d", i, p->code);
    else
        set_cause(r, "rank %d was killed by signal %d (%s)", i, p->code, strsignal(p->code));
    snprintf(why, sizeof why, "terminated: rank %d failed", i);
    stop_all(r, SIGTERM, why);
}

/* Wait for every process; stop the others when one fails or time runs out. */
static void wait_all(struct run *r)
{
    int n = r->desc.nprocs, done = 0, failed = 0, dirty = 0, culprit = -1;
    double t0 = now_s(), last_shown = 0, stop_at = 0;
    int stopping = 0, killed = 0;
    char traces[PATH_MAX + 16];
    snprintf(traces, sizeof traces, "%s/traces", r->dir);
    /* one process for the node (-n 1) may start its own ranks: it is not watched */
    struct run_watchdog *wd = n > 1 && !r->pt ? run_watchdog_new(traces, n, r->hang_s) : NULL;
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    int *hung = calloc((size_t)n, sizeof *hung);
    for (int i = 0; pids && i < n; i++)
        pids[i] = (pid_t)r->desc.procs[i].pid;
    while (done < n) {
        int skipped = start_replicas(r, stopping);
        if (skipped < 0) {
            stop_all(r, SIGTERM, "terminated: the replicas could not all be started (see the run's cause)");
            stopping = 1;
            stop_at = now_s() + KILL_GRACE_S;
            save_desc(r, 1);
            continue;
        }
        done += skipped;
        if (done >= n)
            break;
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid > 0) {
            int i = find_proc(r, pid);
            if (i < 0)
                continue;
            struct maya_run_proc *p = &r->desc.procs[i];
            if (WIFEXITED(st)) {
                p->end = MAYA_RUN_EXITED;
                p->code = WEXITSTATUS(st);
            } else {
                p->end = MAYA_RUN_SIGNALED;
                p->code = WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL;
            }
            done++;
            if (is_replica(r, i)) {
                r->replicas_alive--;
                r->replicas_moved_at = now_s();
            }
            note_eliminated(r, i);
            dirty = 1;
            if (pids)
                pids[i] = 0;
            if (!maya_run_proc_ok(p) && !p->note[0]) {
                failed++;
                /* Of the ranks that ended since the last look, the first
                 * cause is one killed by a signal, else the lowest: a rank
                 * whose peer died exits on its own (NCCL reports the dead
                 * peer) within the same few milliseconds. */
                if (!stopping && (culprit < 0 || (p->end == MAYA_RUN_SIGNALED &&
                                                  r->desc.procs[culprit].end != MAYA_RUN_SIGNALED)))
                    culprit = i;
            }
            continue;
        }
        if (culprit >= 0) {
            blame(r, culprit);
            stopping = 1;
            stop_at = now_s() + KILL_GRACE_S;
            culprit = -1;
        }
        if (dirty) {
            save_desc(r, 0);
            dirty = 0;
        }
        if (pid < 0 && errno == ECHILD && !(r->replicas_spec && r->next_replica < n))
            break;
        char why[sizeof r->desc.cause];
        if (wd && pids && hung && !stopping && run_watchdog_check(wd, pids, hung, why, sizeof why)) {
            set_cause(r, "%s", why);
            for (int i = 0; i < n; i++)
                if (hung[i])
                    snprintf(r->desc.procs[i].note, sizeof r->desc.procs[i].note, "hung: stopped by maya run's "
                             "watchdog after %g s (--hang-timeout)", r->hang_s);
            stop_all(r, SIGTERM, "terminated: the job hung (see the run's cause)");
            stopping = 1;
            stop_at = now_s() + KILL_GRACE_S;
            save_desc(r, 1);
            maya_warn("%s; stopping the job", why);
        }
        if (interrupted && !stopping) {
            set_cause(r, "maya run was interrupted (%s)", strsignal(interrupted));
            stop_all(r, SIGTERM, "terminated: maya run was interrupted");
            stopping = 1;
            stop_at = now_s() + KILL_GRACE_S;
        }
        if (r->timeout_s > 0 && !stopping && now_s() - t0 > r->timeout_s) {
            snprintf(why, sizeof why, "terminated: --timeout %g s reached", r->timeout_s);
            set_cause(r, "--timeout %g s reached with %d of %d ranks still running", r->timeout_s, n - done, n);
            stop_all(r, SIGTERM, why);
            stopping = 1;
            stop_at = now_s() + KILL_GRACE_S;
        }
        if (stopping && !killed && now_s() > stop_at) {
            stop_all(r, SIGKILL, NULL);
            killed = 1;
        }
        run_output_poll(&r->tee);
        if (now_s() - last_shown > 0.25) {
            show_progress(r, done, failed, t0, 0);
            last_shown = now_s();
        }
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    run_output_finish(&r->tee);
    if (culprit >= 0)
        blame(r, culprit); /* the last ranks ended together */
    run_watchdog_free(wd);
    free(pids);
    free(hung);
    show_progress(r, done, failed, t0, 1);
}

/* Start rank i. Block maya's stop signals while forking: a child must not
 * run maya's handler (which only sets a flag) between fork and exec. */
static int start_one(struct run *r, int i)
{
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop, &old);
    struct maya_run_proc *p = &r->desc.procs[i];
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        exec_rank(r, i);
    int rc = 0;
    if (pid < 0) {
        maya_error("cannot start rank %d: %m", i);
        stop_all(r, SIGKILL, "terminated: maya could not start every rank");
        rc = -1;
    } else {
        setpgid(pid, pid); /* also in the child: whichever runs first */
        p->pid = pid;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static int is_replica(const struct run *r, int i)
{
    return r->replicas_spec && !maya_replicas_emulated(&r->replicas, i);
}

static int start_all(struct run *r)
{
    int rc = 0;
    for (int i = 0; i < r->desc.nprocs && rc == 0; i++) {
        /* a stop signal that came while forking is taken between two forks
         * (start_one blocks it only around its fork) */
        if (interrupted) {
            maya_error("interrupted while starting rank %d of %d", i, r->desc.nprocs);
            stop_all(r, SIGKILL, "terminated: maya run was interrupted while starting the ranks");
            rc = -1;
            break;
        }
        struct maya_run_proc *p = &r->desc.procs[i];
        p->node = i / r->per_node;
        p->local_rank = i % r->per_node;
        if (!is_replica(r, i))
            rc = start_one(r, i);
    }
    return rc;
}

/* The host clock (MAYA_HOST_CLOCK, docs/trace-format.md): the user's wall,
 * active or cpu stands; auto (or none) becomes cpu when the ranks, all on
 * this machine, outnumber the CPUs maya run may use, else active. One process may
 * start its own workers (torchrun inside): it keeps auto, so that each
 * worker compares its LOCAL_WORLD_SIZE with the CPUs. */
static int pick_host_clock(struct run *r, int nprocs)
{
    const char *s = getenv("MAYA_HOST_CLOCK");
    cpu_set_t set;
    r->cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (s && (!strcmp(s, "wall") || !strcmp(s, "active") || !strcmp(s, "cpu")))
        return 0;
    if (s && *s && strcmp(s, "auto"))
        return maya_error("MAYA_HOST_CLOCK=\"%s\": expected wall, active, cpu or auto", s);
    if (nprocs > 1)
        r->host_clock = r->cpus > 0 && nprocs > r->cpus ? "cpu" : maya_schedstat_readable() ? "active" : "wall";
    return 0;
}

/* --replicas: a layout of the world's ranks, one process per rank. */
static int check_replicas(struct run *r, int nprocs)
{
    char err[256];
    if (maya_replicas_parse(r->replicas_spec, nprocs, &r->replicas, err, sizeof err) < 0)
        return maya_error("--replicas %s", err);
    if (nprocs < 2 || r->per_node != r->cluster.gpus_per_node)
        return maya_error("--replicas %s: %d process%s for %d GPUs; replicas need one process per GPU",
                          r->replicas_spec, nprocs, nprocs == 1 ? "" : "es", r->count);
    return 0;
}

/* --replicas-like DIR: the layout DIR's classes show (its traces/, or DIR
 * itself), grown to nprocs ranks, as --replicas. */
static int replicas_like(struct run *r, int nprocs)
{
    if (r->replicas_spec)
        return maya_error("--replicas and --replicas-like: give one of them");
    char traces[PATH_MAX];
    struct stat st;
    if (maya_snprintf(traces, sizeof traces, "%s/traces", r->replicas_like) < 0)
        return -1;
    if (stat(traces, &st) < 0 || !S_ISDIR(st.st_mode))
        snprintf(traces, sizeof traces, "%s", r->replicas_like);
    struct maya_replicas small;
    int world = 0, got = run_elim_layout_read(traces, &small, &world);
    if (got < 0)
        return -1; /* said, naming the file */
    if (got == 0)
        return maya_error("--replicas-like %s: no classes of duplicate-rank elimination there (%s/%s): run the "
                          "smaller job with --dedup and at least 3 iterations, with a data-parallel degree of 2 "
                          "or more", r->replicas_like, traces, MAYA_ELIM_CLASSES_FILE);
    char shown[256], err[512];
    if (small.ndims == 0)
        return maya_error("--replicas-like %s: its %d ranks showed no replicas (no dimension of the rank number "
                          "along which the ranks did the same work and their communicators agree)",
                          r->replicas_like, world);
    maya_replicas_format(&small, shown, sizeof shown);
    struct maya_replicas grown;
    if (run_elim_layout_grow(&small, world, nprocs, &grown, err, sizeof err) < 0)
        return maya_error("--replicas-like %s: its %d ranks showed --replicas %s, but %s", r->replicas_like, world,
                          shown, err);
    maya_replicas_format(&grown, r->replicas_text, sizeof r->replicas_text);
    r->replicas_spec = r->replicas_text;
    if (!r->quiet)
        fprintf(stderr, "maya: --replicas-like %s: --replicas %s (its %d ranks showed %s)\n", r->replicas_like,
                r->replicas_text, world, shown);
    return 0;
}

/* The most processes the run holds at once: every rank, or with --replicas
 * the emulated ones and the few replicas started at a time (start_replicas). */
static int procs_at_once(const struct run *r, int nprocs)
{
    if (!r->replicas_spec)
        return nprocs;
    int emulated = 0;
    for (int i = 0; i < nprocs; i++)
        emulated += !is_replica(r, i);
    return MAYA_MIN(nprocs, emulated + MAYA_MAX(2, r->cpus));
}

static void join_cmd(char **cmd, char *buf, size_t size)
{
    buf[0] = 0;
    for (int i = 0; cmd[i]; i++)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? " " : "", cmd[i]);
}

static int prepare_dir(struct run *r, const char *out)
{
    char def[64];
    if (!out) {
        time_t t = time(NULL);
        struct tm tm;
        localtime_r(&t, &tm);
        strftime(def, sizeof def, r->pt ? "maya-profile-%Y%m%d-%H%M%S" : "maya-run-%Y%m%d-%H%M%S", &tm);
        out = def;
    }
    return run_claim_dir(out, r->dir, sizeof r->dir);
}

static int find_libdir(struct run *r)
{
    char bin[PATH_MAX], probe[PATH_MAX + 64];
    if (maya_self_dir((const void *)find_libdir, bin, sizeof bin) < 0)
        return -1;
    snprintf(probe, sizeof probe, "%s/../lib/maya/%s", bin, r->pt ? "libmaya-profile.so" : "libcudart.so.13");
    if (access(probe, R_OK) != 0)
        return maya_error("maya's libraries are not where maya expects them (%s): %m", probe);
    snprintf(probe, sizeof probe, "%s/../lib/maya", bin);
    if (!realpath(probe, r->libdir))
        return maya_error("cannot resolve %s: %m", probe);
    return 0;
}

/* Copy the --cluster file into DIR so the run directory stands alone. */
static int keep_cluster_file(struct run *r, const char *arg)
{
    struct stat st;
    if (!arg) {
        r->desc.cluster[0] = 0;
        return 0;
    }
    if (stat(arg, &st) != 0) {
        snprintf(r->desc.cluster, sizeof r->desc.cluster, "%s", arg);
        return 0;
    }
    char *data;
    size_t len;
    char dst[PATH_MAX + 32];
    snprintf(dst, sizeof dst, "%s/cluster.conf", r->dir);
    if (maya_read_file(arg, &data, &len) < 0)
        return -1;
    int rc = maya_write_file_atomic(dst, data, len);
    free(data);
    snprintf(r->desc.cluster, sizeof r->desc.cluster, "cluster.conf");
    return rc;
}

static int parse_double_opt(const char *name, const char *v, double *out)
{
    if (maya_parse_double(v, out) < 0 || *out <= 0)
        return maya_error("%s \"%s\": expected a number of seconds above 0", name, v);
    return 0;
}

int cmd_run(int argc, char **argv)
{
    return cmd_run_passthrough(argc, argv, NULL);
}

int cmd_run_passthrough(int argc, char **argv, struct run_passthrough *pt)
{
    struct run r;
    memset(&r, 0, sizeof r);
    r.pt = pt;
    maya_run_desc_init(&r.desc);
    const char *gpus = NULL, *out = NULL, *cluster = NULL;
    int nproc = 0, i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int took = 1;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            r.quiet = 1;
            took = 0;
        } else if (!pt && !strcmp(a, "--dedup")) {
            r.dedup = 1;
            took = 0;
        } else if (!pt && !strcmp(a, "--no-report")) {
            r.no_report = 1;
            took = 0;
        } else if (!pt && !strcmp(a, "--replicas") && v && !strcmp(v, "auto")) {
            r.replicas_auto = 1;
        } else if (!pt && !strcmp(a, "--replicas") && v) {
            r.replicas_spec = v;
        } else if (!pt && !strcmp(a, "--replicas-like") && v) {
            r.replicas_like = v;
        } else if (!v) {
            maya_error("%s: expected a value after it", a);
            usage(stderr);
            return 2;
        } else if (pt && (!strcmp(a, "-g") || !strcmp(a, "--gpus") || !strcmp(a, "--cluster"))) {
            maya_error("%s: maya profile runs on this machine's GPUs", a);
            return 2;
        } else if (!strcmp(a, "-g") || !strcmp(a, "--gpus")) {
            gpus = v;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--nproc")) {
            int64_t n;
            if (maya_parse_i64(v, &n) < 0 || n < 1 || n > (1 << 20)) {
                maya_error("-n \"%s\": expected a number of processes from 1 to %d", v, 1 << 20);
                return 2;
            }
            nproc = (int)n;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            out = v;
        } else if (!strcmp(a, "--cluster")) {
            cluster = v;
        } else if (!strcmp(a, "--tee")) {
            if (run_output_parse(&r.tee, v) < 0)
                return 2;
        } else if (!strcmp(a, "--timeout")) {
            if (parse_double_opt(a, v, &r.timeout_s) < 0)
                return 2;
        } else if (!strcmp(a, "--hang-timeout")) {
            if (parse_double_opt(a, v, &r.hang_s) < 0)
                return 2;
        } else if (!pt) {
            int rc = pipeline_parse_option(&r.popts, a, v);
            if (rc < 0)
                return 2;
            if (rc == 0) {
                maya_error("unknown option \"%s\" (maya run --help lists them)", a);
                return 2;
            }
        } else {
            maya_error("unknown option \"%s\" (maya profile --help lists them)", a);
            return 2;
        }
        i += took;
    }
    if (i >= argc) {
        maya_error("no command to run: expected maya %s [OPTIONS] -- CMD [ARGS...]", pt ? "profile" : "run");
        return 2;
    }
    r.cmd = argv + i;
    if (run_check_command(r.cmd) < 0)
        return 2;

    /* maya.conf fills in what the command line left out (not for maya
     * profile, which runs on this machine's GPUs with no report options). */
    struct maya_conf conf;
    if (!pt) {
        if (maya_conf_load((const void *)cmd_run, &conf) < 0)
            return 2;
        if (!gpus && conf.gpus[0])
            gpus = conf.gpus;
        if (!cluster && conf.cluster[0])
            cluster = conf.cluster;
        if (!r.popts.estimator && conf.estimator[0])
            r.popts.estimator = conf.estimator;
        if (!r.popts.oracle && conf.oracle[0])
            r.popts.oracle = conf.oracle;
        if (!r.popts.iteration_marker && conf.iteration_marker[0])
            r.popts.iteration_marker = conf.iteration_marker;
        if (!r.popts.iterations)
            r.popts.iterations = conf.iterations;
        if (r.timeout_s == 0)
            r.timeout_s = conf.timeout_s;
        if (r.hang_s == 0)
            r.hang_s = conf.hang_timeout_s;
        /* an explicit MAYA_COPY_THRESHOLD in the environment wins */
        if (conf.copy_threshold && !getenv("MAYA_COPY_THRESHOLD")) {
            char v[32];
            snprintf(v, sizeof v, "%llu", (unsigned long long)conf.copy_threshold);
            setenv("MAYA_COPY_THRESHOLD", v, 1);
        }
    }

    struct maya_hwspecs hw;
    if (cli_load_hwspecs(&hw) < 0)
        return 1;
    int rc;
    if (pt) { /* this machine's GPUs, one process unless -n says more */
        r.gpu = maya_hwspecs_find_gpu(&hw, pt->gpu_key);
        r.count = pt->gpus;
        rc = r.gpu ? pipeline_cluster(&hw, r.gpu, r.count, NULL, NULL, &r.cluster)
                   : maya_error("GPU \"%s\" is not known (maya hwspecs list)", pt->gpu_key);
        if (!nproc)
            nproc = 1;
    } else {
        rc = pick_cluster(&r, &hw, cluster, gpus);
    }
    if (rc == 0)
        rc = check_nprocs(&r, nproc ? nproc : r.count);
    static struct maya_gpu_spec gpu_copy; /* r.gpu is used after hw is freed */
    if (rc == 0) {
        gpu_copy = *r.gpu;
        r.gpu = &gpu_copy;
    }
    maya_hwspecs_free(&hw);
    if (rc < 0)
        return 2;
    if (pipeline_check_options(&r.popts) < 0)
        return 2;
    if (!pt && pick_host_clock(&r, nproc ? nproc : r.count) < 0)
        return 2;
    if (r.replicas_like && replicas_like(&r, nproc ? nproc : r.count) < 0)
        return 2;
    if (r.replicas_auto) { /* the smaller runs go into DIR/probes */
        if (r.replicas_spec) {
            maya_error("--replicas auto and --replicas%s: give one of them", r.replicas_like ? "-like" : "");
            return 2;
        }
        if (nproc && nproc != r.count) {
            maya_error("--replicas auto: -n %d for %d GPUs; replicas need one process per GPU", nproc, r.count);
            return 2;
        }
        if (replicas_auto_check(r.count) < 0)
            return 2;
        if (find_libdir(&r) < 0 || prepare_dir(&r, out) < 0)
            return 1;
        catch_signals(); /* Ctrl-C stops the smaller runs too */
        struct replicas_auto_job job = {
            .dir = r.dir, .gpu = r.gpu->key, .cluster = cluster, .hang_s = r.hang_s, .world = r.count,
            .cpus = r.cpus, .cmd = r.cmd, .quiet = r.quiet, .interrupted = &interrupted,
        };
        if (replicas_auto(&job, &r.replicas, r.replicas_text, sizeof r.replicas_text) < 0) {
            char desc_file[PATH_MAX + 32]; /* no run here: the directory keeps the probes, free for another */
            snprintf(desc_file, sizeof desc_file, "%s/%s", r.dir, MAYA_RUN_DESC_FILE);
            unlink(desc_file);
            return interrupted ? 130 : 2;
        }
        r.replicas_spec = r.replicas_text;
    }
    if (r.replicas_spec && check_replicas(&r, nproc ? nproc : r.count) < 0)
        return 2;
    if (r.hang_s == 0)
        r.hang_s = RUN_HANG_TIMEOUT_S;
    if (run_check_size(procs_at_once(&r, nproc ? nproc : r.count), r.cpus) < 0)
        return 2;
    /* (--replicas auto claimed the directory already) */
    if ((!r.libdir[0] && find_libdir(&r) < 0) || (!r.dir[0] && prepare_dir(&r, out) < 0) ||
        keep_cluster_file(&r, cluster) < 0 || maya_run_record_specs(&r.desc, r.dir, r.gpu, &r.cluster) < 0)
        return 1;
    if (pt)
        snprintf(pt->dir, sizeof pt->dir, "%s", r.dir);
    if ((r.port = free_port()) < 0)
        return 1;

    struct maya_run_desc *d = &r.desc;
    snprintf(d->launcher, sizeof d->launcher, pt ? "maya-profile" : "maya-run");
    snprintf(d->gpu, sizeof d->gpu, "%s", r.gpu->key);
    d->gpu_count = r.count;
    d->gpus_per_node = r.cluster.gpus_per_node;
    d->nodes = r.cluster.nodes;
    join_cmd(r.cmd, d->command, sizeof d->command);
    if (!getcwd(d->workdir, sizeof d->workdir))
        d->workdir[0] = 0;
    pipeline_opts_to_desc(&r.popts, d);
    if (maya_run_desc_set_nprocs(d, nproc ? nproc : r.count) < 0)
        return 1;

    if (!r.tee.given) { /* default: rank 0, none with -q */
        if (r.quiet)
            r.tee.none = 1;
        else
            r.tee.list[r.tee.nlist++] = 0;
    }
    if (run_output_start(&r.tee, r.dir, d->nprocs) < 0)
        return 2;
    /* the progress line would break the program's lines on a terminal */
    r.progress = !r.quiet && isatty(2) && r.tee.nstreams == 0;
    r.parent = getpid();

    catch_signals();
    maya_utc_now(d->start_time, sizeof d->start_time);
    double t0 = now_s();
    r.t0 = t0;
    /* run.conf before any rank starts, kept current as they end: whatever
     * ends maya run, the directory can be reported */
    snprintf(d->state, sizeof d->state, "running");
    d->launcher_pid = (long)getpid();
    if (gethostname(d->launcher_host, sizeof d->launcher_host - 1) != 0)
        d->launcher_host[0] = 0;
    for (int k = 0; k < d->nprocs; k++) {
        d->procs[k].node = k / r.per_node;
        d->procs[k].local_rank = k % r.per_node;
    }
    save_desc(&r, 1);
    if (!r.quiet && pt)
        fprintf(stderr, "maya profile: %d rank%s on this machine's %d x %s -> %s\n", d->nprocs,
                d->nprocs == 1 ? "" : "s", r.count, r.gpu->key, r.dir);
    else if (!r.quiet)
        fprintf(stderr, "maya run: %d rank%s on %d emulated %s (%d node%s of %d), %s host clock (%d CPU%s) -> %s\n",
                d->nprocs, d->nprocs == 1 ? "" : "s", r.count, r.gpu->key, d->nodes, d->nodes == 1 ? "" : "s",
                d->gpus_per_node, r.host_clock ? r.host_clock : getenv("MAYA_HOST_CLOCK") ? getenv("MAYA_HOST_CLOCK") : "auto", r.cpus, r.cpus == 1 ? "" : "s", r.dir);
    int started = start_all(&r);
    save_desc(&r, 1); /* with the pids */
    wait_all(&r);
    if (r.stand_ins)
        write_stand_ins(&r);
    d->wall_s = now_s() - t0;
    maya_utc_now(d->end_time, sizeof d->end_time);
    snprintf(d->state, sizeof d->state, "ended");
    char werr[256];
    int trace_errors = run_trace_errors(r.dir, d->nprocs, werr, sizeof werr);
    if (trace_errors)
        set_cause(&r, "%s", werr);
    char desc_path[PATH_MAX + 32];
    snprintf(desc_path, sizeof desc_path, "%s/%s", r.dir, MAYA_RUN_DESC_FILE);
    if (maya_run_desc_write(desc_path, d) < 0) {
        maya_run_desc_free(d);
        return 3;
    }
    int workload_ok = started == 0 && !interrupted;
    for (int k = 0; k < d->nprocs; k++)
        workload_ok &= maya_run_proc_ok(&d->procs[k]);
    /* -q drops the summary, not the failure: say it, and where the ranks'
     * output is (their stderr says why) */
    if (!workload_ok && !interrupted && r.quiet)
        maya_error("the workload failed (%s); the ranks' output is in %s/logs", d->cause[0] ? d->cause : "see run.conf",
                   r.dir);
    if (interrupted) {
        maya_error("interrupted; what the ranks left is in %s", r.dir);
        maya_run_desc_free(d);
        return 130;
    }
    if (pt || r.no_report) { /* what was measured is the result; maya report can replay it */
        if (r.no_report && !r.quiet)
            fprintf(stderr, "maya run: no report (--no-report): maya report %s makes it\n", r.dir);
        maya_run_desc_free(d);
        return workload_ok ? 0 : 1;
    }
    r.popts.quiet = r.quiet;
    r.popts.show_tails = 1;
    int prc = pipeline_run(r.dir, &r.popts);
    maya_run_desc_free(d);
    if (maya_stopped()) /* Ctrl-C or SIGTERM during the post-processing: no report */
        return 128 + maya_stopped();
    if (!workload_ok)
        return 1;
    return prc < 0 || trace_errors ? 3 : 0; /* a trace cut short by failed writes: not a full report */
}

/* The work of a kernel that has SASS only (PyTorch's CUDA wheels carry no
 * PTX): nvdisasm prints the kernel's SASS, sass_parse.c translates it, and
 * kernel_work.c reads it as it reads PTX.
 *
 * nvdisasm is found as MAYA_NVDISASM names it, else on PATH, in the CUDA
 * toolkit, or in the Python environment of the program (the
 * nvidia-cuda-nvdisasm wheel's nvidia/cu13/bin/nvdisasm, looked up from
 * $VIRTUAL_ENV and from the interpreter the program was started as).
 * Without it, such kernels have no work summary (the estimator's fallback
 * rule, counted in the report).
 *
 * Disassembling costs a process and a few hundred milliseconds per kernel,
 * so the summaries are cached on disk, keyed by a hash of the cubin, the
 * kernel's name and symbol index, and the analysis' version: $MAYA_CACHE_DIR/kwork-v1/, else $XDG_CACHE_HOME/maya/...,
 * else ~/.cache/maya/...; a kernel nvdisasm gives nothing for is cached as
 * such. Entries are written to a temporary file and renamed into place, so
 * that ranks starting together never read half an entry. Ranks that start
 * together miss together: the first to take a
 * kernel's lock file (O_EXCL) disassembles it, the others wait for its
 * entry (a lock whose owner, named in it as host and pid, is gone from this
 * host, or older than LOCK_STALE_S, is taken over). Only kernels that
 * are launched are read, each once per process (the KERNEL record is
 * written once).
 */
#define _GNU_SOURCE
#include "maya/kwork.h"
#include "emu.h"
#include "kernel_work.h"
#include "maya/common.h"
#include "ptx_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CACHE_MAGIC "MAYAKW01"
#define LOCK_WAIT_MS 120000          /* a rank waits this long for another's nvdisasm of a kernel */
#define LOCK_STALE_S 300             /* a lock older than this was left by a rank that died */
#define MAX_SASS_BYTES (256u << 20)  /* nvdisasm's text of one kernel, at most */
#define NVDISASM_TIMEOUT_MS 300000   /* a kernel nvdisasm takes longer on is left out */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int searched;
static char tool[4096];

uint64_t emu_hash_bytes(const void *p, size_t n, uint64_t h)
{
    /* FNV-1a, 64 bits: about 1 ns a byte */
    const unsigned char *b = p;
    if (!h)
        h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static int executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The first match of pattern (a glob), as tool. */
static int glob_tool(const char *pattern)
{
    glob_t g;
    int found = 0;
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc && !found; i++)
            if (executable(g.gl_pathv[i]) && maya_snprintf(tool, sizeof tool, "%s", g.gl_pathv[i]) == 0)
                found = 1;
        globfree(&g);
    }
    return found;
}

/* From a Python environment's prefix: its nvidia-cuda-nvdisasm wheel. */
static int in_prefix(const char *prefix)
{
    char pat[4200];
    return snprintf(pat, sizeof pat, "%s/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm", prefix) <
               (int)sizeof pat && glob_tool(pat);
}

static void search(void)
{
    const char *env = getenv("MAYA_NVDISASM");
    if (env) {
        if (*env && strcmp(env, "0") != 0 && executable(env))
            maya_snprintf(tool, sizeof tool, "%s", env);
        return; /* set: that one, or none ("" or 0) */
    }
    const char *path = getenv("PATH");
    char dir[4096];
    for (const char *p = path; p && *p;) {
        const char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (n && n < sizeof dir - 16) {
            memcpy(dir, p, n);
            strcpy(dir + n, "/nvdisasm");
            if (executable(dir) && maya_snprintf(tool, sizeof tool, "%s", dir) == 0)
                return;
        }
        p = c ? c + 1 : p + n;
    }
    const char *cuda = getenv("CUDA_HOME");
    if (cuda && snprintf(dir, sizeof dir, "%s/bin/nvdisasm", cuda) < (int)sizeof dir && executable(dir) &&
        maya_snprintf(tool, sizeof tool, "%s", dir) == 0)
        return;
    if (executable("/usr/local/cuda/bin/nvdisasm")) {
        maya_snprintf(tool, sizeof tool, "%s", "/usr/local/cuda/bin/nvdisasm");
        return;
    }
    const char *venv = getenv("VIRTUAL_ENV");
    if (venv && in_prefix(venv))
        return;
    /* .venv/bin/python train.py: the interpreter as the program was started */
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char arg0[4096];
        ssize_t n = read(fd, arg0, sizeof arg0 - 1);
        close(fd);
        if (n > 0) {
            arg0[n] = 0;
            char *slash = strrchr(arg0, '/');
            if (slash && slash > arg0) {
                *slash = 0; /* .../bin */
                char *up = strrchr(arg0, '/');
                if (up) {
                    *up = 0;
                    if (in_prefix(arg0))
                        return;
                } else if (in_prefix(".")) {
                    return;
                }
            }
        }
    }
}

EMU_API const char *emu_nvdisasm(void)
{
    pthread_mutex_lock(&lock);
    if (!searched) {
        search();
        searched = 1;
    }
    pthread_mutex_unlock(&lock);
    return tool[0] ? tool : NULL;
}

/* Once per process: a kernel with SASS only could not be read, because
 * nvdisasm was not found. Its work, and that of every such kernel, is then
 * priced by the fallback rule: the prediction the user gets is a guess for
 * those kernels, so they are told, with what to do. */
EMU_API void emu_warn_sass_unread(const char *kernel)
{
    static int warned;
    if (__atomic_exchange_n(&warned, 1, __ATOMIC_ACQ_REL) || emu_config()->quiet)
        return;
    fprintf(stderr, "maya-emu: warning: kernel %.120s%s has SASS only and no nvdisasm was found (MAYA_NVDISASM, "
            "PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, the program's Python environment): it and every "
            "kernel like it (PyTorch's) are priced by the fallback rule; " MAYA_NVDISASM_REMEDY "\n",
            kernel, strlen(kernel) > 120 ? "..." : "");
}

/* The cache's directory for one kind of entry: "kwork-v1" (summaries) or
 * "sass-v1" (the SASS texts the executor reads). */
static int cache_dir_of(const char *kind, char *out, size_t size)
{
    const char *d = getenv("MAYA_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (d && *d)
        n = snprintf(out, size, "%s/%s", d, kind);
    else if (x && *x)
        n = snprintf(out, size, "%s/maya/%s", x, kind);
    else if (home && *home)
        n = snprintf(out, size, "%s/.cache/maya/%s", home, kind);
    else
        return -1;
    if (n < 0 || (size_t)n >= size)
        return -1;
    /* make each level; one that exists is fine */
    for (char *p = out + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(out, 0755);
            *p = '/';
        }
    return mkdir(out, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

static int cache_dir(char *out, size_t size)
{
    return cache_dir_of("kwork-v1", out, size);
}

/* A cached summary: 1 with *out (malloc'd, NULL for "nvdisasm gave
 * nothing"), 0 if not cached. */
static int cache_read(const char *path, void **out, size_t *bytes)
{
    *out = NULL;
    *bytes = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char head[16];
    int rc = 0;
    if (read(fd, head, sizeof head) == (ssize_t)sizeof head && !memcmp(head, CACHE_MAGIC, 8)) {
        uint64_t n;
        memcpy(&n, head + 8, sizeof n);
        if (n == 0) {
            rc = 1;
        } else if (n >= sizeof(struct maya_kwork) && n <= (64u << 20) && n % 8 == 0) {
            void *b = malloc(n);
            if (b && read(fd, b, n) == (ssize_t)n) {
                const struct maya_kwork *w = b;
                if (maya_kwork_bytes(w) == n) {
                    *out = b;
                    *bytes = n;
                    b = NULL;
                    rc = 1;
                }
            }
            free(b);
        }
    }
    close(fd);
    return rc;
}

/* Write a cache file (MAGIC, the length, the bytes) by rename, so that a
 * reader sees a whole file or none; a failure leaves nothing (the cache is
 * only a cache). Both caches here, summaries and SASS text, use it. */
static void cache_file_write(const char *path, const char *magic, const void *data, size_t bytes)
{
    char tmp[4500];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%d.%ld", path, (int)getpid(), (long)gettid()) >= (int)sizeof tmp)
        return;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    char head[16];
    memcpy(head, magic, 8);
    uint64_t n = bytes;
    memcpy(head + 8, &n, sizeof n);
    int ok = write(fd, head, sizeof head) == (ssize_t)sizeof head && (!bytes || write(fd, data, bytes) == (ssize_t)bytes);
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}

static void cache_write(const char *path, const void *work, size_t bytes)
{
    cache_file_write(path, CACHE_MAGIC, work, bytes);
}

static const char *host(void)
{
    static char name[256];
    if (!name[0] && gethostname(name, sizeof name - 1) != 0)
        strcpy(name, "?");
    return name;
}

/* Was the lock taken by a process of this host that no longer runs? */
static int owner_gone(const char *lockp)
{
    char buf[320];
    int fd = open(lockp, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *sp = strrchr(buf, ' ');
    if (!sp)
        return 0;
    *sp = 0;
    int pid = atoi(sp + 1);
    return pid > 0 && !strcmp(buf, host()) && kill(pid, 0) < 0 && errno == ESRCH;
}

/* Take the kernel's lock (0: ours, the caller disassembles), or wait while
 * another rank holds it for the entry it writes (1, with the entry read);
 * a lock that goes away without an entry, or grew stale, is ours. */
static int wait_for_entry(const char *path, void **out, size_t *bytes)
{
    char lockp[4420];
    if (snprintf(lockp, sizeof lockp, "%s.lock", path) >= (int)sizeof lockp)
        return 0;
    for (int waited = 0;; waited += 50) {
        int fd = open(lockp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            char me[320];
            int n = snprintf(me, sizeof me, "%s %d\n", host(), (int)getpid());
            if (n > 0 && write(fd, me, (size_t)MAYA_MIN(n, (int)sizeof me - 1)) < 0)
                n = 0; /* an empty lock is still a lock */
            close(fd);
            /* the entry may have come between our miss and the lock */
            if (cache_read(path, out, bytes)) {
                unlink(lockp);
                return 1;
            }
            return 0;
        }
        if (errno != EEXIST)
            return 0; /* cannot lock: read it ourselves */
        if (cache_read(path, out, bytes))
            return 1;
        struct stat st;
        if (waited >= LOCK_WAIT_MS || owner_gone(lockp) ||
            (stat(lockp, &st) == 0 && time(NULL) - st.st_mtime > LOCK_STALE_S)) {
            unlink(lockp);
            continue;
        }
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

/* The environment for nvdisasm: the program's, without what would load
 * maya's libraries into it. */
static char **child_env(void)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **e = calloc(n + 1, sizeof *e);
    if (!e)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 && strncmp(environ[i], "LD_LIBRARY_PATH=", 16) != 0)
            e[k++] = environ[i];
    return e;
}

/* Run nvdisasm on a cubin file for one function: its text (malloc'd), or NULL. */
static char *disassemble(const char *nvdisasm, const char *cubin, unsigned sym, size_t *len)
{
    char index[16];
    snprintf(index, sizeof index, "%u", sym);
    char *argv[] = { (char *)nvdisasm, "-c", "-fun", index, (char *)cubin, NULL };
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char **env = child_env();
    pid_t pid;
    int sp = env ? posix_spawn(&pid, nvdisasm, &fa, NULL, argv, env) : -1;
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(fds[1]);
    if (sp != 0) {
        close(fds[0]);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int ok = buf != NULL;
    while (ok) {
        struct pollfd p = { fds[0], POLLIN, 0 };
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long spent = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        if (spent > NVDISASM_TIMEOUT_MS || poll(&p, 1, 1000) < 0) {
            if (errno == EINTR)
                continue;
            ok = 0;
            break;
        }
        if (!(p.revents & (POLLIN | POLLHUP)))
            continue;
        if (n + 4096 > cap) {
            if (cap >= MAX_SASS_BYTES) {
                ok = 0;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                ok = 0;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fds[0], buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fds[0]);
    if (!ok)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* The cubin as a file nvdisasm can read (a temporary one in the cache). */
static int write_cubin(const char *dir, const void *cubin, size_t bytes, char *path, size_t size)
{
    if (snprintf(path, size, "%s/cubin.%d.%ld.XXXXXX", dir, (int)getpid(), (long)gettid()) >= (int)size)
        return -1;
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    int ok = write(fd, cubin, bytes) == (ssize_t)bytes;
    ok = close(fd) == 0 && ok;
    if (!ok) {
        unlink(path);
        return -1;
    }
    return 0;
}

/* The cache entry of a kernel; -1 if there is no cache. */
static int entry_path(char *dir, size_t dsize, char *path, size_t size, uint64_t cubin_hash, const char *mangled,
                      unsigned sym)
{
    if (cache_dir(dir, dsize) < 0)
        return -1;
    int n = snprintf(path, size, "%s/%016llx-%016llx-%u-a%d.kw", dir, (unsigned long long)cubin_hash,
                     (unsigned long long)emu_hash_bytes(mangled, strlen(mangled), 0), sym, EMU_KWORK_ANALYSIS);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

EMU_API void emu_sass_unlock(uint64_t cubin_hash, const char *mangled, unsigned sym)
{
    char dir[4096], path[4400], lockp[4420];
    if (entry_path(dir, sizeof dir, path, sizeof path, cubin_hash, mangled, sym) == 0 &&
        snprintf(lockp, sizeof lockp, "%s.lock", path) < (int)sizeof lockp)
        unlink(lockp);
}

static int text_path(char *path, size_t size, uint64_t cubin_hash, const char *mangled, unsigned sym);
static void text_write(const char *path, const char *t, size_t len);

/* Keep the text nvdisasm gave for the work summary for the executor too. */
static void text_keep(uint64_t cubin_hash, const char *mangled, unsigned sym, const char *t, size_t len)
{
    char path[4400];
    if (text_path(path, sizeof path, cubin_hash, mangled, sym) == 0)
        text_write(path, t, len);
}

EMU_API int emu_sass_work(const void *cubin, size_t bytes, uint64_t cubin_hash, const char *mangled, unsigned sym,
                          int sm, unsigned param_base, unsigned param_bytes, const struct maya_kparam *params,
                          unsigned nparams, void **out, size_t *out_bytes)
{
    *out = NULL;
    *out_bytes = 0;
    const char *nvdisasm = emu_nvdisasm();
    char dir[4096], path[4400];
    int cached = entry_path(dir, sizeof dir, path, sizeof path, cubin_hash, mangled, sym) == 0;
    if (cached && cache_read(path, out, out_bytes))
        return *out ? 0 : -1;
    if (!nvdisasm || !cached)
        return -1; /* without a cache, disassembling every rank's kernels would be too slow */
    if (!cubin) {
        /* another rank may be reading this kernel: wait for its entry */
        int got = wait_for_entry(path, out, out_bytes);
        if (got)
            return *out ? 0 : -1;
        return 1; /* ours to read: the caller gives the cubin's bytes only now */
    }
    char file[4400], lockp[4420];
    snprintf(lockp, sizeof lockp, "%s.lock", path);
    if (write_cubin(dir, cubin, bytes, file, sizeof file) < 0) {
        unlink(lockp);
        return -1;
    }
    size_t len = 0;
    char *text = disassemble(nvdisasm, file, sym, &len);
    unlink(file);
    if (!text) {
        unlink(lockp);
        return -1; /* nvdisasm failed: not cached, the next run tries again */
    }
    text_keep(cubin_hash, mangled, sym, text, len); /* the executor's, if it runs this kernel */
    int rc = -1;
    struct emu_ptx_kernel k;
    if (emu_sass_parse(text, len, mangled, param_base, param_bytes, params, nparams, &k) == 0) {
        rc = emu_kwork_from_ptx(&k, sm, out, out_bytes);
        emu_ptx_kernel_free(&k);
    }
    free(text);
    cache_write(path, rc == 0 ? *out : NULL, rc == 0 ? *out_bytes : 0);
    unlink(lockp);
    return rc;
}

/* The SASS text itself, for the executor (sass_exec.c): cached in sass-v1/
 * beside kwork-v1/ as "<cubin hash>-<name hash>-<sym>.sass" (magic, length,
 * text), written by rename as the summaries are. No lock: ranks that miss together each run
 * nvdisasm once, which only the first small launch of a kernel pays. */
#define TEXT_MAGIC "MAYASS01"

static char *text_read(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char head[16];
    char *b = NULL;
    if (read(fd, head, sizeof head) == (ssize_t)sizeof head && !memcmp(head, TEXT_MAGIC, 8)) {
        uint64_t n;
        memcpy(&n, head + 8, sizeof n);
        if (n > 0 && n <= MAX_SASS_BYTES && (b = malloc(n + 1)) != NULL) {
            if (read(fd, b, n) == (ssize_t)n) {
                b[n] = 0;
                *len = n;
            } else {
                free(b);
                b = NULL;
            }
        }
    }
    close(fd);
    return b;
}

static int text_path(char *path, size_t size, uint64_t cubin_hash, const char *mangled, unsigned sym)
{
    char dir[4096];
    if (cache_dir_of("sass-v1", dir, sizeof dir) < 0)
        return -1;
    int n = snprintf(path, size, "%s/%016llx-%016llx-%u.sass", dir, (unsigned long long)cubin_hash,
                     (unsigned long long)emu_hash_bytes(mangled, strlen(mangled), 0), sym);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static void text_write(const char *path, const char *t, size_t len)
{
    cache_file_write(path, TEXT_MAGIC, t, len);
}

EMU_API int emu_sass_text(const void *cubin, size_t bytes, uint64_t cubin_hash, const char *mangled, unsigned sym,
                          char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    char dir[4096], path[4400], file[4400];
    if (cache_dir_of("sass-v1", dir, sizeof dir) < 0 || text_path(path, sizeof path, cubin_hash, mangled, sym) < 0)
        return -1;
    if ((*text = text_read(path, len)) != NULL)
        return 0;
    const char *nvdisasm = emu_nvdisasm();
    if (!nvdisasm || !cubin || write_cubin(dir, cubin, bytes, file, sizeof file) < 0)
        return -1;
    char *t = disassemble(nvdisasm, file, sym, len);
    unlink(file);
    if (!t)
        return -1;
    text_write(path, t, *len);
    *text = t;
    return 0;
}

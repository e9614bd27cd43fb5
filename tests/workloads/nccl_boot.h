// What the NCCL test workloads share: error checks, and handing the
// ncclUniqueId from rank 0 to the other ranks the way torchrun jobs do it
// (rank 0 serves it over TCP at MASTER_ADDR:MASTER_PORT; the others connect).
// Nothing here is specific to maya: on real GPUs these programs run as they are.
#ifndef NCCL_BOOT_H
#define NCCL_BOOT_H

#include <arpa/inet.h>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <nccl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t e_ = (call);                                                      \
        if (e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                    cudaGetErrorString(e_));                                          \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#define NCCL_CHECK(call)                                                              \
    do {                                                                              \
        ncclResult_t r_ = (call);                                                     \
        if (r_ != ncclSuccess && r_ != ncclInProgress) {                              \
            fprintf(stderr, "%s:%d: %s: %s (%d)\n", __FILE__, __LINE__, #call,        \
                    ncclGetErrorString(r_), (int)r_);                                 \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

static int env_int(const char *name, int def)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : def;
}

// Read exactly n bytes, or fail.
static int read_full(int fd, void *buf, size_t n)
{
    char *p = (char *)buf;
    while (n) {
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

// What names this job: a rank connecting to MASTER_PORT says it first, and
// rank 0 answers only its own job's ranks (other jobs on the host may use the
// same port, e.g. test clusters started side by side).
static uint64_t job_key(void)
{
    const char *parts[] = { "MAYA_TRACE_DIR", "SLURM_JOB_ID", "SLURM_STEP_ID", "WORLD_SIZE", "MASTER_PORT" };
    uint64_t h = 1469598103934665603ull;
    for (const char *name : parts) {
        const char *v = getenv(name);
        for (const char *p = v ? v : ""; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        h = (h ^ '|') * 1099511628211ull;
    }
    return h;
}

// Rank 0 gives the id to a rank connected on c, or exits saying why.
static void hand_out_id(int c, const ncclUniqueId *id)
{
    if (write(c, id, sizeof *id) != (ssize_t)sizeof *id) {
        fprintf(stderr, "rank 0: cannot hand out the unique id: %s\n", strerror(errno));
        exit(1);
    }
}

// Rank 0 makes the id and gives it to world-1 other ranks; they wait for it
// (at most 120 s). With NCCL_BOOT_WAIT_ALL=1 rank 0 hands it out only once
// every rank has connected, as a TCP store's rank 0 waits for all its
// clients (PyTorch's): a start-up that needs every rank's process at once.
// Exits with a message on failure.
static void share_unique_id(ncclUniqueId *id, int rank, int world)
{
    const char *addr = getenv("MASTER_ADDR");
    const char *port = getenv("MASTER_PORT");
    if (world == 1) {
        NCCL_CHECK(ncclGetUniqueId(id));
        return;
    }
    if (!addr || !port) {
        fprintf(stderr, "rank %d: MASTER_ADDR and MASTER_PORT must be set for %d ranks\n", rank, world);
        exit(1);
    }
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = rank == 0 ? AI_PASSIVE : 0;
    if (getaddrinfo(rank == 0 ? NULL : addr, port, &hints, &ai) != 0 || !ai) {
        fprintf(stderr, "rank %d: cannot resolve %s:%s\n", rank, addr, port);
        exit(1);
    }
    if (rank == 0) {
        NCCL_CHECK(ncclGetUniqueId(id));
        int fd = socket(ai->ai_family, SOCK_STREAM, 0), one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, world) < 0) {
            fprintf(stderr, "rank 0: cannot listen on port %s: %s\n", port, strerror(errno));
            exit(1);
        }
        int wait_all = env_int("NCCL_BOOT_WAIT_ALL", 0), *held = (int *)calloc((size_t)world, sizeof(int));
        for (int i = 1; i < world;) {
            struct pollfd p = { fd, POLLIN, 0 };
            if (poll(&p, 1, 120000) != 1) {
                fprintf(stderr, "rank 0: only %d of %d ranks asked for the unique id in 120 s\n", i, world);
                exit(1);
            }
            int c = accept(fd, NULL, NULL);
            if (c < 0)
                continue;
            uint64_t key = 0;
            struct pollfd q = { c, POLLIN, 0 };
            if (poll(&q, 1, 5000) == 1 && read_full(c, &key, sizeof key) == 0 && key == job_key()) {
                if (wait_all && held) {
                    held[i++] = c;
                    continue;
                }
                hand_out_id(c, id);
                i++;
            }
            close(c); /* a rank of another job is turned away */
        }
        for (int i = 1; wait_all && held && i < world; i++) {
            hand_out_id(held[i], id);
            close(held[i]);
        }
        free(held);
        close(fd);
    } else {
        for (int tries = 0;; tries++) {
            int fd = socket(ai->ai_family, SOCK_STREAM, 0);
            uint64_t key = job_key();
            if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
                write(fd, &key, sizeof key) == (ssize_t)sizeof key && read_full(fd, id, sizeof *id) == 0) {
                close(fd);
                break;
            }
            if (fd >= 0)
                close(fd);
            if (tries >= 1200) {
                fprintf(stderr, "rank %d: cannot reach rank 0 at %s:%s for 120 s\n", rank, addr, port);
                exit(1);
            }
            usleep(100000);
        }
    }
    freeaddrinfo(ai);
}

#endif

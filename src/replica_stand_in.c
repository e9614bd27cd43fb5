/* Declared replicas that never start (maya run --replicas, docs/dedup.md).
 *
 * A declared replica runs only up to its first NCCL call, which makes it
 * stop; its trace then holds its start-up, its devices and an ELIMINATED
 * record, and the collator rebuilds the rest from its representative. A
 * PyTorch job cannot start its replicas a few at a time: its rank 0 makes
 * the job's TCP store and waits until every rank's client has connected
 * (each adds 1 to the store's "init/" count), and the clients then wait for
 * rank 0's NCCL id, so every process of the world would be held at once
 * (about 350 MiB each once torch is imported). Instead maya run adds the
 * count of the replicas not started yet to the store itself, as their
 * clients would have, and writes, once the job has ended, the trace each of
 * them would have left. The store's protocol is PyTorch's TCPStore's
 * (torch/csrc/distributed/c10d): a client validates with a magic number,
 * then ADD(key, value) answers the key's new value.
 *
 * Costs: one connection for all the replicas; per representative one pass
 * over its trace; per stand-in a trace of a few hundred bytes.
 */
#define _GNU_SOURCE
#include "replica_stand_in.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "maya/collator.h"
#include "maya/common.h"
#include "maya/trace_format.h"
#include "maya/trace_reader.h"

int stand_in_is_pytorch(pid_t pid)
{
    char path[64], line[PATH_MAX + 128];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *fp = fopen(path, "r");
    int found = 0;
    while (fp && !found && fgets(line, sizeof line, fp))
        found = strstr(line, "/libtorch") != NULL;
    if (fp)
        fclose(fp);
    return found;
}

/* ---- the store ---- */

#define STORE_VALIDATE 0
#define STORE_ADD 4
#define STORE_MAGIC 0x3C85F7CEu
#define STORE_INIT_KEY "init/"

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Wait until fd is ready for `events`, at most until deadline (mono ns). */
static int wait_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        uint64_t now = maya_mono_ns();
        if (now >= deadline)
            return 0;
        struct pollfd p = { .fd = fd, .events = events };
        int n = poll(&p, 1, (int)((deadline - now) / 1000000 + 1));
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

int stand_in_join_store(int port, int count, int world, double timeout_s, char *why, size_t n)
{
    uint64_t deadline = maya_mono_ns() + (uint64_t)(timeout_s * 1e9);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, n, "cannot create a socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int rc = -1, err = 0;
    socklen_t len = sizeof err;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 &&
        (errno != EINPROGRESS || wait_fd(fd, POLLOUT, deadline) <= 0 ||
         getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err)) {
        snprintf(why, n, "nothing answers on port %d (%s)", port, strerror(err ? err : errno ? errno : ETIMEDOUT));
        close(fd);
        return -2;
    }
    /* VALIDATE magic, then ADD "init/" count: 5 + 1 + 8 + 5 + 8 bytes */
    unsigned char msg[32], *p = msg;
    *p++ = STORE_VALIDATE;
    put_le(p, STORE_MAGIC, 4), p += 4;
    *p++ = STORE_ADD;
    put_le(p, strlen(STORE_INIT_KEY), 8), p += 8;
    memcpy(p, STORE_INIT_KEY, strlen(STORE_INIT_KEY)), p += strlen(STORE_INIT_KEY);
    put_le(p, (uint64_t)count, 8), p += 8;
    size_t sent = 0, want = (size_t)(p - msg);
    while (sent < want) {
        ssize_t k = send(fd, msg + sent, want - sent, MSG_NOSIGNAL);
        if (k > 0) {
            sent += (size_t)k;
        } else if (k < 0 && errno == EAGAIN && wait_fd(fd, POLLOUT, deadline) > 0) {
            continue;
        } else {
            snprintf(why, n, "port %d closed the connection", port);
            goto out;
        }
    }
    unsigned char reply[8];
    size_t got = 0;
    while (got < sizeof reply) {
        ssize_t k = recv(fd, reply + got, sizeof reply - got, 0);
        if (k > 0) {
            got += (size_t)k;
        } else if (k < 0 && errno == EAGAIN && wait_fd(fd, POLLIN, deadline) > 0) {
            continue;
        } else {
            snprintf(why, n, "port %d did not answer as a PyTorch TCP store (%zu of 8 bytes in %g s)", port, got,
                     timeout_s);
            goto out;
        }
    }
    int64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (int64_t)((uint64_t)v << 8 | reply[i]);
    /* the count now: the workers that joined and these; a store's own */
    if (v < count || v > (int64_t)world + count) {
        snprintf(why, n, "port %d answered %lld, not a count of a job of %d ranks", port, (long long)v, world);
        goto out;
    }
    rc = 0;
out:
    close(fd);
    return rc;
}

/* ---- the traces ---- */

#define MAX_STRINGS 16          /* strings before the PROCESS record (host, command line) */
#define MAX_DEVICES 64

struct stand_in_source {
    int rank;
    struct maya_trace_header hdr;
    unsigned char *strings[MAX_STRINGS]; /* STRING records as read */
    int nstrings;
    uint32_t max_string;
    struct maya_rec_process process;
    int have_process;
    struct maya_rec_device devices[MAX_DEVICES];
    int ndevices;
};

void stand_in_source_free(struct stand_in_source *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nstrings; i++)
        free(s->strings[i]);
    free(s);
}

int stand_in_source_rank(const struct stand_in_source *s)
{
    return s->rank;
}

struct stand_in_source *stand_in_source_read(const char *trace_dir, int rank)
{
    char path[PATH_MAX];
    if (maya_snprintf(path, sizeof path, "%s/rank-%d.mtrace", trace_dir, rank) < 0)
        return NULL;
    struct maya_trace_reader *r;
    if (maya_trace_open(path, &r) < 0)
        return NULL;
    struct stand_in_source *s = calloc(1, sizeof *s);
    if (!s) {
        maya_trace_close(r);
        maya_error("out of memory");
        return NULL;
    }
    s->rank = rank;
    s->hdr = *maya_trace_header(r);
    const struct maya_rec_hdr *rec;
    int rc;
    while ((rc = maya_trace_next(r, &rec)) > 0) {
        if (rec->type == MAYA_REC_STRING && !s->have_process && s->nstrings < MAX_STRINGS) {
            if (!(s->strings[s->nstrings] = malloc(rec->bytes))) {
                rc = maya_error("out of memory");
                break;
            }
            memcpy(s->strings[s->nstrings++], rec, rec->bytes);
            uint32_t id = ((const struct maya_rec_string *)rec)->id;
            s->max_string = id > s->max_string ? id : s->max_string;
        } else if (rec->type == MAYA_REC_PROCESS && !s->have_process && rec->bytes >= sizeof s->process) {
            memcpy(&s->process, rec, sizeof s->process);
            s->have_process = 1;
        } else if (rec->type == MAYA_REC_DEVICE && s->ndevices < MAX_DEVICES && rec->bytes >= sizeof s->devices[0]) {
            memcpy(&s->devices[s->ndevices++], rec, sizeof s->devices[0]);
        }
    }
    maya_trace_close(r);
    if (rc < 0) {
        stand_in_source_free(s);
        return NULL;
    }
    return s;
}

static int emit_string(struct col_writer *w, uint32_t id, const char *text)
{
    size_t len = strlen(text), bytes = MAYA_REC_ALIGN(sizeof(struct maya_rec_string) + len);
    unsigned char buf[sizeof(struct maya_rec_string) + 80];
    if (bytes > sizeof buf)
        return maya_error("string \"%s\" too long for a stand-in's trace", text);
    memset(buf, 0, bytes);
    struct maya_rec_string *sr = (void *)buf;
    sr->h = (struct maya_rec_hdr){ MAYA_REC_STRING, 0, (uint32_t)bytes };
    sr->id = id;
    sr->len = (uint32_t)len;
    memcpy(sr + 1, text, len);
    return col_writer_emit(w, buf);
}

int stand_in_write(const char *trace_dir, const struct stand_in_source *s, int rank, int node, int local_rank,
                   const char *spec)
{
    char path[PATH_MAX], note[PATH_MAX];
    if (maya_snprintf(path, sizeof path, "%s/rank-%d.mtrace", trace_dir, rank) < 0 ||
        maya_snprintf(note, sizeof note, "%s/rank-%d.eliminated", trace_dir, rank) < 0)
        return -1;
    struct maya_trace_header h = s->hdr;
    int gpn = h.gpus_per_node > 0 ? h.gpus_per_node : 1;
    h.rank = rank;
    h.local_rank = local_rank;
    h.node = node;
    h.pid = 0; /* no process */
    struct maya_atomic_file af;
    struct col_writer *w = NULL;
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    int rc = fwrite(&h, sizeof h, 1, af.fp) == 1 ? 0 : maya_error("cannot write %s: %m", af.tmp);
    if (rc == 0)
        rc = col_writer_open(af.fp, af.tmp, &w);
    /* the start-up the replica would have recorded: its process, and the
     * devices its representative used, on the replica's node */
    for (int i = 0; rc == 0 && i < s->nstrings; i++)
        rc = col_writer_emit(w, s->strings[i]);
    uint32_t gpu_id = s->max_string + 1;
    char gpu[sizeof h.gpu + 1];
    snprintf(gpu, sizeof gpu, "%.*s", (int)sizeof h.gpu, h.gpu);
    if (rc == 0 && s->ndevices)
        rc = emit_string(w, gpu_id, gpu);
    if (rc == 0 && s->have_process)
        rc = col_writer_emit(w, &s->process);
    for (int i = 0; rc == 0 && i < s->ndevices; i++) {
        struct maya_rec_device d = s->devices[i];
        d.gpu = gpu_id;
        if (d.global_index / gpn == s->hdr.node)
            d.global_index = node * gpn + d.global_index % gpn;
        rc = col_writer_emit(w, &d);
    }
    /* stopped at its first NCCL call, as a declared replica stops */
    struct maya_rec_eliminated el = { .h = { MAYA_REC_ELIMINATED, 0, sizeof el }, .source = s->rank,
                                      .how = MAYA_ELIM_DECLARED };
    if (rc == 0)
        rc = col_writer_emit(w, &el);
    unsigned char endbuf[sizeof(struct maya_rec_end) + MAX_DEVICES * sizeof(struct maya_end_device)];
    memset(endbuf, 0, sizeof endbuf);
    struct maya_rec_end *end = (void *)endbuf;
    struct maya_end_device *ed = (void *)(end + 1);
    end->h = (struct maya_rec_hdr){ MAYA_REC_END, 0,
                                    (uint32_t)(sizeof *end + s->ndevices * sizeof(struct maya_end_device)) };
    end->records = w ? col_writer_records(w) : 0;
    end->ndevices = (uint32_t)s->ndevices;
    for (int i = 0; i < s->ndevices; i++) {
        ed[i].device = s->devices[i].ordinal;
        ed[i].total_bytes = s->devices[i].total_mem_bytes;
    }
    if (rc == 0)
        rc = col_writer_emit(w, end);
    if (rc == 0)
        rc = col_writer_flush(w);
    col_writer_free(w);
    if (rc < 0) {
        maya_atomic_abort(&af);
        return -1;
    }
    if (maya_atomic_commit(&af) < 0)
        return -1;
    char text[512];
    int len = snprintf(text, sizeof text, "source=%d\nstop_op=0\nhow=declared\nreplicas=%s\n", s->rank, spec);
    if (len < 0 || (size_t)len >= sizeof text)
        return maya_error("rank %d's note: the layout %s is too long", rank, spec);
    return maya_write_file_atomic(note, text, (size_t)len);
}

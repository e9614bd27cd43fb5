/* This process's endpoint: how emulated ranks reach each other.
 *
 * Ranks may be in one process, in several on one host, or on different hosts
 * (under Slurm), so they meet over TCP only. Each process that uses NCCL
 * listens on one port of one address (chosen below) and runs one progress
 * thread that owns every socket: it accepts connections, reads whole
 * messages and hands them to the mailboxes (or, for JOINs, to the
 * rendezvous), writes what could not be written at once, and notices a peer
 * whose connection closes (its process exited). Program threads never wait
 * on a peer's reading: a message is appended to the connection's queue and
 * written as far as the socket takes it.
 *
 * The connecting side speaks first (HELLO with its endpoint id); after that
 * a connection carries messages both ways. A process sends to a peer on one
 * connection only (the first it chose), so messages from one thread to one
 * peer arrive in order.
 *
 * Address: NCCL_SOCKET_IFNAME (or MAYA_NCCL_SOCKET_IFNAME) picks the
 * interface with NCCL's syntax ("eth", "=eth0", "^docker,lo"); otherwise the
 * first interface that is up and not loopback (IPv4 first, then global
 * IPv6), and loopback when there is none. The unique id and the member
 * tables carry that address and the port.
 */
#define _GNU_SOURCE
#include "nc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn {
    int fd;
    uint64_t ep;                /* the peer's endpoint; 0 until its HELLO */
    int chosen;                 /* this process sends to ep on this connection */
    int dead;
    char why[128];              /* why it died */
    unsigned char *rbuf;        /* received, not yet a whole message */
    size_t rlen, rcap;
    unsigned char *sbuf;        /* to write: bytes [soff, slen) */
    size_t soff, slen, scap;
    struct conn *next;
};

struct dead_ep {
    uint64_t ep;
    char why[128];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int state;               /* 0 not started, 1 running, -1 unusable */
static int listen_fd = -1, wake_fd = -1;
static struct nc_peer self;
static struct conn *conns;      /* freed only by the progress thread */
static struct dead_ep *dead;
static int ndead, dead_cap;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t nc_random64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        v = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
    }
    return v ? v : 1;
}

struct nc_msg *nc_msg_new(const struct nc_msg_hdr *h, const void *payload)
{
    struct nc_msg *m = malloc(sizeof *m + h->bytes);
    if (!m)
        return NULL;
    m->next = NULL;
    m->h = *h;
    if (h->bytes)
        memcpy(m->data, payload, h->bytes);
    return m;
}

const char *nc_addr_str(const struct nc_addr *a, char *buf, size_t n)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    inet_ntop(a->family, a->ip, ip, sizeof ip);
    snprintf(buf, n, a->family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, a->port);
    return buf;
}

static socklen_t to_sockaddr(const struct nc_addr *a, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (a->family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(a->port);
        memcpy(&s6->sin6_addr, a->ip, 16);
        return sizeof *s6;
    }
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    s4->sin_family = AF_INET;
    s4->sin_port = htons(a->port);
    memcpy(&s4->sin_addr, a->ip, 4);
    return sizeof *s4;
}

/* ---- choosing the address ---- */

/* NCCL_SOCKET_IFNAME syntax: a comma list of name prefixes; "=" makes them
 * exact names, "^" excludes them. */
static int ifname_matches(const char *name, const char *spec)
{
    int exclude = 0, exact = 0;
    if (*spec == '^') {
        exclude = 1;
        spec++;
    }
    if (*spec == '=') {
        exact = 1;
        spec++;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    int match = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (exact ? strcmp(name, tok) == 0 : strncmp(name, tok, strlen(tok)) == 0)
            match = 1;
    return exclude ? !match : match;
}

static int usable_ifaddr(const struct ifaddrs *i, int family)
{
    if (!i->ifa_addr || i->ifa_addr->sa_family != family || !(i->ifa_flags & IFF_UP))
        return 0;
    if (family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
        if (IN6_IS_ADDR_LINKLOCAL(a)) /* needs a scope id a peer cannot know */
            return 0;
    }
    return 1;
}

static void take_ifaddr(const struct ifaddrs *i, struct nc_addr *a)
{
    a->family = (uint16_t)i->ifa_addr->sa_family;
    if (a->family == AF_INET6)
        memcpy(a->ip, &((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
    else
        memcpy(a->ip, &((const struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
}

static int choose_addr(struct nc_addr *a, char *err, size_t n)
{
    const char *spec = getenv("MAYA_NCCL_SOCKET_IFNAME");
    if (!spec || !*spec)
        spec = getenv("NCCL_SOCKET_IFNAME");
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) < 0) {
        snprintf(err, n, "cannot list network interfaces: %s", strerror(errno));
        return -1;
    }
    int found = 0;
    static const char *skip[] = { "docker", "virbr", "veth", "br-" };
    for (int family = AF_INET; !found && family != -1; family = family == AF_INET ? AF_INET6 : -1) {
        for (struct ifaddrs *i = list; i && !found; i = i->ifa_next) {
            if (!usable_ifaddr(i, family))
                continue;
            if (spec && *spec) {
                if (!ifname_matches(i->ifa_name, spec))
                    continue;
            } else {
                if (i->ifa_flags & IFF_LOOPBACK)
                    continue;
                int bad = 0;
                for (size_t k = 0; k < sizeof skip / sizeof skip[0]; k++)
                    bad |= strncmp(i->ifa_name, skip[k], strlen(skip[k])) == 0;
                if (bad)
                    continue;
            }
            take_ifaddr(i, a);
            found = 1;
        }
    }
    freeifaddrs(list);
    if (found)
        return 0;
    if (spec && *spec) {
        snprintf(err, n, "no network interface is up with an address matching NCCL_SOCKET_IFNAME=\"%s\"", spec);
        return -1;
    }
    /* No network: this host only. */
    a->family = AF_INET;
    a->ip[0] = 127;
    a->ip[3] = 1;
    return 0;
}

/* ---- connections (lock held unless said otherwise) ---- */

static void mark_dead_locked(struct conn *c, const char *why)
{
    if (c->dead)
        return;
    c->dead = 1;
    snprintf(c->why, sizeof c->why, "%s", why);
}

static void add_dead_locked(uint64_t ep, const char *why)
{
    if (ndead == dead_cap) {
        int cap = dead_cap ? dead_cap * 2 : 16;
        struct dead_ep *d = realloc(dead, (size_t)cap * sizeof *d);
        if (!d)
            return;
        dead = d;
        dead_cap = cap;
    }
    dead[ndead].ep = ep;
    snprintf(dead[ndead].why, sizeof dead[ndead].why, "%s", why);
    ndead++;
}

static int ep_dead_locked(uint64_t ep, char *why, size_t n)
{
    for (int i = 0; i < ndead; i++)
        if (dead[i].ep == ep) {
            if (why)
                snprintf(why, n, "%s", dead[i].why);
            return 1;
        }
    return 0;
}

/* Write what the socket takes now. */
static void write_locked(struct conn *c)
{
    while (!c->dead && c->soff < c->slen) {
        ssize_t k = send(c->fd, c->sbuf + c->soff, c->slen - c->soff, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            c->soff += (size_t)k;
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else {
            mark_dead_locked(c, k < 0 ? strerror(errno) : "connection closed");
            break;
        }
    }
    if (c->soff == c->slen)
        c->soff = c->slen = 0;
}

static int append_locked(struct conn *c, const struct nc_msg_hdr *h, const void *payload)
{
    size_t need = sizeof *h + h->bytes;
    if (c->slen + need > c->scap) {
        if (c->soff) { /* reclaim what was written */
            memmove(c->sbuf, c->sbuf + c->soff, c->slen - c->soff);
            c->slen -= c->soff;
            c->soff = 0;
        }
        if (c->slen + need > c->scap) {
            size_t cap = c->scap ? c->scap : 65536;
            while (cap < c->slen + need)
                cap *= 2;
            unsigned char *p = realloc(c->sbuf, cap);
            if (!p)
                return -1;
            c->sbuf = p;
            c->scap = cap;
        }
    }
    memcpy(c->sbuf + c->slen, h, sizeof *h);
    if (h->bytes)
        memcpy(c->sbuf + c->slen + sizeof *h, payload, h->bytes);
    c->slen += need;
    return 0;
}

static void wake(void)
{
    uint64_t one = 1;
    if (wake_fd >= 0 && write(wake_fd, &one, sizeof one) < 0) {
        /* a full eventfd counter still wakes the thread */
    }
}

static struct conn *send_conn_locked(uint64_t ep)
{
    struct conn *first = NULL;
    for (struct conn *c = conns; c; c = c->next) {
        if (c->ep != ep || c->dead)
            continue;
        if (c->chosen)
            return c;
        if (!first)
            first = c;
    }
    if (first)
        first->chosen = 1;
    return first;
}

static void add_conn_locked(struct conn *c)
{
    struct conn **p = &conns;
    while (*p)
        p = &(*p)->next;
    *p = c;
}

static void set_sock_opts(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Connect to a peer's endpoint (blocking, with retries while the peer may
 * still be starting), say HELLO, and hand the socket to the progress thread. */
static int connect_peer(const struct nc_peer *to, char *why, size_t n)
{
    char as[80];
    nc_addr_str(&to->addr, as, sizeof as);
    double deadline = mono_s() + (nc_timeout_s() < 60 ? nc_timeout_s() : 60);
    int fd = -1, err = 0;
    for (;;) {
        fd = socket(to->addr.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            snprintf(why, n, "cannot make a socket: %s", strerror(errno));
            return -1;
        }
        struct sockaddr_storage ss;
        socklen_t len = to_sockaddr(&to->addr, &ss);
        err = 0;
        if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
            err = errno;
            if (err == EINPROGRESS) {
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                int left_ms = (int)((deadline - mono_s()) * 1000);
                int r = poll(&p, 1, left_ms > 0 ? left_ms : 0);
                socklen_t elen = sizeof err;
                if (r <= 0)
                    err = ETIMEDOUT;
                else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
                    err = errno;
            }
        }
        if (!err)
            break;
        close(fd);
        fd = -1;
        /* A refused connection is final: a peer listens before its address
         * is handed out, so nobody listening means its process is gone. */
        int transient = err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
                        err == EAGAIN || err == EINTR;
        if (!transient || mono_s() >= deadline)
            break;
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (fd < 0) {
        snprintf(why, n, "cannot connect to %s (pid %d on %s): %s", as, to->pid, to->host, strerror(err));
        if (err == ECONNREFUSED) { /* nobody listens there any more */
            pthread_mutex_lock(&lock);
            if (!ep_dead_locked(to->ep, NULL, 0))
                add_dead_locked(to->ep, "its process exited (connection refused)");
            pthread_mutex_unlock(&lock);
            nc_mb_peer_dead();
        }
        return -1;
    }
    set_sock_opts(fd);
    struct conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        snprintf(why, n, "out of memory");
        return -1;
    }
    c->fd = fd;
    c->ep = to->ep;
    struct nc_msg_hdr h = { .magic = NC_MSG_MAGIC, .type = NC_HELLO, .aux = self.ep };
    pthread_mutex_lock(&lock);
    append_locked(c, &h, NULL);
    write_locked(c);
    add_conn_locked(c);
    pthread_mutex_unlock(&lock);
    wake();
    return 0;
}

/* ---- the progress thread ---- */

/* A whole message for this process: to the rendezvous, to elimination, or
 * to the mailboxes. */
static void dispatch(struct nc_msg *m)
{
    if (m->h.type == NC_JOIN)
        nc_boot_join(m);
    else if (m->h.type == NC_ELIM_REPORT || m->h.type == NC_ELIM_VERDICT)
        nc_elim_deliver(m);
    else
        nc_mb_deliver(m);
}

static void deliver(struct conn *c, struct nc_msg *m)
{
    if (c->ep == 0) {
        if (m->h.type != NC_HELLO || m->h.aux == 0) {
            pthread_mutex_lock(&lock);
            mark_dead_locked(c, "the peer did not start with HELLO");
            pthread_mutex_unlock(&lock);
        } else {
            pthread_mutex_lock(&lock);
            c->ep = m->h.aux;
            pthread_mutex_unlock(&lock);
        }
        free(m);
        return;
    }
    if (m->h.type == NC_HELLO)
        free(m);
    else
        dispatch(m);
}

/* Take whole messages out of the receive buffer. */
static void parse(struct conn *c)
{
    size_t off = 0;
    while (!c->dead && c->rlen - off >= sizeof(struct nc_msg_hdr)) {
        struct nc_msg_hdr h;
        memcpy(&h, c->rbuf + off, sizeof h);
        if (h.magic != NC_MSG_MAGIC || h.bytes > NC_MAX_PAYLOAD) {
            pthread_mutex_lock(&lock);
            mark_dead_locked(c, "the peer sent something that is not a maya NCCL message");
            pthread_mutex_unlock(&lock);
            break;
        }
        size_t whole = sizeof h + h.bytes;
        if (c->rlen - off < whole) {
            if (c->rcap < whole) { /* room for the whole message */
                if (off) {
                    memmove(c->rbuf, c->rbuf + off, c->rlen - off);
                    c->rlen -= off;
                    off = 0;
                }
                unsigned char *p = realloc(c->rbuf, whole);
                if (p) {
                    c->rbuf = p;
                    c->rcap = whole;
                }
            }
            break;
        }
        struct nc_msg *m = nc_msg_new(&h, c->rbuf + off + sizeof h);
        off += whole;
        if (m)
            deliver(c, m);
    }
    if (off) {
        memmove(c->rbuf, c->rbuf + off, c->rlen - off);
        c->rlen -= off;
    }
}

static void conn_read(struct conn *c)
{
    for (;;) {
        if (c->rcap - c->rlen < 65536) {
            size_t cap = c->rcap ? c->rcap * 2 : 262144;
            unsigned char *p = realloc(c->rbuf, cap);
            if (!p)
                return;
            c->rbuf = p;
            c->rcap = cap;
        }
        ssize_t k = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, MSG_DONTWAIT);
        if (k > 0) {
            c->rlen += (size_t)k;
            parse(c);
            if (c->dead)
                return;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        pthread_mutex_lock(&lock);
        mark_dead_locked(c, k == 0 ? "its process exited or closed the connection" : strerror(errno));
        pthread_mutex_unlock(&lock);
        return;
    }
}

static void accept_all(void)
{
    for (;;) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        set_sock_opts(fd);
        struct conn *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            return;
        }
        c->fd = fd;
        pthread_mutex_lock(&lock);
        add_conn_locked(c);
        pthread_mutex_unlock(&lock);
    }
}

/* Remove dead connections; a peer whose connection died is gone. */
static void reap(void)
{
    pthread_mutex_lock(&lock);
    struct conn *gone = NULL;
    for (struct conn **p = &conns; *p;) {
        struct conn *c = *p;
        if (c->dead) {
            *p = c->next;
            c->next = gone;
            gone = c;
        } else {
            p = &c->next;
        }
    }
    for (struct conn *c = gone; c; c = c->next)
        if (c->ep && !ep_dead_locked(c->ep, NULL, 0))
            add_dead_locked(c->ep, c->why);
    pthread_mutex_unlock(&lock);
    while (gone) {
        struct conn *c = gone;
        gone = c->next;
        close(c->fd);
        if (c->ep)
            nc_mb_peer_dead();
        free(c->rbuf);
        free(c->sbuf);
        free(c);
    }
}

static void *progress_main(void *arg)
{
    (void)arg;
    struct pollfd *pfd = NULL;
    struct conn **pc = NULL;
    size_t cap = 0;
    for (;;) {
        pthread_mutex_lock(&lock);
        size_t n = 2;
        for (struct conn *c = conns; c; c = c->next)
            n++;
        if (n > cap) {
            size_t ncap = n * 2;
            struct pollfd *a = realloc(pfd, ncap * sizeof *a);
            struct conn **b = a ? realloc(pc, ncap * sizeof *b) : NULL;
            if (a)
                pfd = a;
            if (b) {
                pc = b;
                cap = ncap;
            }
        }
        size_t k = 0;
        if (cap < 2) { /* no memory for the poll set yet: try again soon */
            pthread_mutex_unlock(&lock);
            struct timespec ts = { 0, 10 * 1000 * 1000 };
            nanosleep(&ts, NULL);
            continue;
        }
        pfd[k++] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };
        pfd[k++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
        for (struct conn *c = conns; c && k < cap; c = c->next) {
            pc[k] = c;
            pfd[k++] = (struct pollfd){ .fd = c->fd,
                                        .events = (short)(POLLIN | (c->slen > c->soff ? POLLOUT : 0)) };
        }
        pthread_mutex_unlock(&lock);
        if (state != 1)
            return NULL;
        int r = poll(pfd, k, 1000);
        if (r < 0)
            continue;
        if (pfd[0].revents & POLLIN) {
            uint64_t v;
            if (read(wake_fd, &v, sizeof v) < 0) {
                /* nothing to do: the counter is reset or was empty */
            }
        }
        if (pfd[1].revents & POLLIN)
            accept_all();
        for (size_t i = 2; i < k; i++) {
            struct conn *c = pc[i];
            if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
                conn_read(c);
            if (pfd[i].revents & POLLOUT) {
                pthread_mutex_lock(&lock);
                write_locked(c);
                pthread_mutex_unlock(&lock);
            }
        }
        reap();
    }
}

/* ---- start, fork, exit ---- */

static void at_exit_flush(void)
{
    /* Messages still queued (a last small send) must reach their peers
     * before the process is gone. */
    nc_net_flush(10);
}

static void at_fork_child(void)
{
    /* A child must not hold the parent's sockets: peers would not see the
     * parent exit while the child lives. NCCL cannot be used in it. */
    if (state != 1)
        return;
    state = -1;
    for (struct conn *c = conns; c; c = c->next)
        close(c->fd);
    close(listen_fd);
    close(wake_fd);
    conns = NULL;
}

static int start_locked(char *err, size_t n)
{
    if (choose_addr(&self.addr, err, n) < 0)
        return -1;
    /* A rank 0 of a large job talks to every other rank. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    listen_fd = socket(self.addr.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd < 0) {
        snprintf(err, n, "cannot make a socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_storage ss;
    socklen_t len = to_sockaddr(&self.addr, &ss);
    char as[80];
    if (bind(listen_fd, (struct sockaddr *)&ss, len) < 0 || listen(listen_fd, 4096) < 0) {
        snprintf(err, n, "cannot listen on %s: %s", nc_addr_str(&self.addr, as, sizeof as), strerror(errno));
        close(listen_fd);
        return -1;
    }
    len = sizeof ss;
    getsockname(listen_fd, (struct sockaddr *)&ss, &len);
    self.addr.port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                    : ((struct sockaddr_in *)&ss)->sin_port);
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd < 0) {
        snprintf(err, n, "cannot make an eventfd: %s", strerror(errno));
        close(listen_fd);
        return -1;
    }
    self.ep = nc_random64();
    self.pid = (int32_t)getpid();
    self.device = -1;
    self.global_gpu = -1;
    self.node = emu_config()->node;
    self.rank = emu_config()->rank;
    gethostname(self.host, sizeof self.host - 1);
    state = 1;
    /* The progress thread takes no signals: they stay the program's. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    int rc = pthread_create(&t, NULL, progress_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        state = 0;
        snprintf(err, n, "cannot start the progress thread: %s", strerror(rc));
        close(listen_fd);
        close(wake_fd);
        return -1;
    }
    pthread_detach(t);
    pthread_atfork(NULL, NULL, at_fork_child);
    atexit(at_exit_flush);
    return 0;
}

int nc_net_start(void)
{
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 1)
        return 0;
    char err[256] = "";
    pthread_mutex_lock(&lock);
    int rc = 0;
    if (state == -1) {
        snprintf(err, sizeof err, "NCCL cannot be used in a process forked after it started");
        rc = -1;
    } else if (state == 0) {
        rc = start_locked(err, sizeof err);
    }
    pthread_mutex_unlock(&lock);
    if (rc < 0)
        nc_fail(ncclSystemError, "cannot start the network endpoint: %s", err);
    return rc;
}

const struct nc_peer *nc_net_self(void)
{
    return &self;
}

int nc_net_send(const struct nc_peer *to, struct nc_msg_hdr *h, const void *payload, char *why, size_t n)
{
    h->magic = NC_MSG_MAGIC;
    if (to->ep == 0) {
        snprintf(why, n, "rank %d is a replica that was not started (--replicas)", to->rank);
        return -1;
    }
    if (to->ep == self.ep) {
        struct nc_msg *m = nc_msg_new(h, payload);
        if (!m) {
            snprintf(why, n, "out of memory");
            return -1;
        }
        dispatch(m);
        return 0;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        pthread_mutex_lock(&lock);
        if (ep_dead_locked(to->ep, why, n)) {
            pthread_mutex_unlock(&lock);
            return -1;
        }
        struct conn *c = send_conn_locked(to->ep);
        if (c) {
            int rc = append_locked(c, h, payload);
            write_locked(c);
            int pending = c->slen > c->soff;
            pthread_mutex_unlock(&lock);
            if (pending)
                wake();
            if (rc < 0)
                snprintf(why, n, "out of memory");
            return rc;
        }
        pthread_mutex_unlock(&lock);
        if (attempt == 0 && connect_peer(to, why, n) < 0)
            return -1;
    }
    snprintf(why, n, "the connection to pid %d on %s closed", to->pid, to->host);
    return -1;
}

void nc_net_watch(const struct nc_peer *p)
{
    if (p->ep == self.ep || p->ep == 0)
        return;
    pthread_mutex_lock(&lock);
    int have = ep_dead_locked(p->ep, NULL, 0) || send_conn_locked(p->ep) != NULL;
    pthread_mutex_unlock(&lock);
    char why[256];
    if (!have)
        connect_peer(p, why, sizeof why); /* a failure shows when the wait ends */
}

int nc_net_dead(uint64_t ep, char *why, size_t n)
{
    pthread_mutex_lock(&lock);
    int d = ep_dead_locked(ep, why, n);
    pthread_mutex_unlock(&lock);
    return d;
}

void nc_net_flush(double timeout_s)
{
    if (state != 1)
        return;
    double end = mono_s() + timeout_s;
    for (;;) {
        int pending = 0;
        pthread_mutex_lock(&lock);
        for (struct conn *c = conns; c; c = c->next)
            pending |= !c->dead && c->slen > c->soff;
        pthread_mutex_unlock(&lock);
        if (!pending || mono_s() >= end)
            return;
        struct timespec ts = { 0, 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

/* maya run joining a PyTorch TCP store for replicas that never start
 * (src/replica_stand_in.c): the bytes it sends are a store client's
 * validation and ADD("init/", count), and it takes only an answer that can
 * be the store's count. Against listeners made here: one that answers as a
 * store does, one that closes, one that answers what no count of the job
 * can be, one that never answers, and a port nothing listens on. The real
 * store (PyTorch's) is tests/torch/test_dedup_torch.sh's. */
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unit_check.h"
#include "../../src/replica_stand_in.h"

enum behaviour { ANSWER, CLOSE, NONSENSE, SILENT };

struct listener {
    int fd, port;
    enum behaviour how;
    int64_t answer;
    unsigned char got[64];
    size_t ngot;
    pthread_t th;
};

static void *serve(void *arg)
{
    struct listener *l = arg;
    int c = accept(l->fd, NULL, NULL);
    if (c < 0)
        return NULL;
    if (l->how != CLOSE) {
        /* a store client's request: 5 + 1 + 8 + 5 + 8 bytes */
        while (l->ngot < 27) {
            ssize_t k = recv(c, l->got + l->ngot, sizeof l->got - l->ngot, 0);
            if (k <= 0)
                break;
            l->ngot += (size_t)k;
        }
        if (l->how == ANSWER || l->how == NONSENSE) {
            unsigned char b[8];
            for (int i = 0; i < 8; i++)
                b[i] = (unsigned char)((uint64_t)l->answer >> (8 * i));
            if (send(c, b, sizeof b, 0) != (ssize_t)sizeof b)
                perror("send");
        } else {
            usleep(600 * 1000); /* silent past the caller's timeout */
        }
    }
    close(c);
    return NULL;
}

static void listen_on(struct listener *l, enum behaviour how, int64_t answer)
{
    memset(l, 0, sizeof *l);
    l->how = how;
    l->answer = answer;
    l->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(l->fd, 4) < 0 ||
        getsockname(l->fd, (struct sockaddr *)&a, &len) < 0) {
        perror("listen");
        exit(2);
    }
    l->port = ntohs(a.sin_port);
    pthread_create(&l->th, NULL, serve, l);
}

static void done(struct listener *l)
{
    pthread_join(l->th, NULL);
    close(l->fd);
}

int main(void)
{
    char why[256];
    struct listener l;

    /* a store: the request is validation then ADD "init/" 124 */
    listen_on(&l, ANSWER, 128);
    CHECK(stand_in_join_store(l.port, 124, 128, 2.0, why, sizeof why) == 0, "a store's answer refused: %s", why);
    done(&l);
    static const unsigned char want[27] = { 0, 0xce, 0xf7, 0x85, 0x3c, 4, 5, 0, 0, 0, 0, 0, 0, 0,
                                            'i', 'n', 'i', 't', '/', 124, 0, 0, 0, 0, 0, 0, 0 };
    CHECK(l.ngot == sizeof want && !memcmp(l.got, want, sizeof want), "the request: %zu bytes, not a store "
          "client's validation and ADD(\"init/\", 124)", l.ngot);

    /* what listens closes at once */
    listen_on(&l, CLOSE, 0);
    CHECK(stand_in_join_store(l.port, 124, 128, 2.0, why, sizeof why) < 0 && strstr(why, "PyTorch TCP store"),
          "a listener that closed: %s", why);
    done(&l);

    /* an answer no count of a 128-rank job can be (another program's bytes) */
    listen_on(&l, NONSENSE, 0x6f6c6c6568);
    CHECK(stand_in_join_store(l.port, 124, 128, 2.0, why, sizeof why) < 0 && strstr(why, "not a count"),
          "a nonsense answer: %s", why);
    done(&l);

    /* no answer within the time given */
    listen_on(&l, SILENT, 0);
    CHECK(stand_in_join_store(l.port, 124, 128, 0.2, why, sizeof why) < 0 && strstr(why, "did not answer"),
          "a silent listener: %s", why);
    done(&l);

    /* nothing listens: the port of a listener just closed */
    listen_on(&l, CLOSE, 0);
    int port = l.port;
    int c = socket(AF_INET, SOCK_STREAM, 0); /* let it accept and end */
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (connect(c, (struct sockaddr *)&a, sizeof a) == 0)
        close(c);
    done(&l);
    CHECK(stand_in_join_store(port, 124, 128, 2.0, why, sizeof why) < 0 && strstr(why, "nothing answers"),
          "a closed port: %s", why);

    if (!failures)
        printf("stand-in store: ok\n");
    return failures != 0;
}

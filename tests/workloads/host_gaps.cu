// host_gaps: host work of known kind and length between two CUDA calls, for
// the tests of the trace's host clock (MAYA_HOST_CLOCK, tests/emulator/
// test_host_clock.sh). The two calls are cudaEventRecord on one event; the
// test reads the gap between them from the trace.
//
//   host_gaps spin MS     spins MS ms of this thread's CPU time
//   host_gaps sleep MS    sleeps MS ms (nanosleep)
//   host_gaps thread MS   another thread spins MS ms of its CPU time, then
//                         records the event once (a third record); the main
//                         thread waits for it (pthread_join) in between
//   host_gaps hostfn MS   a host function (cudaLaunchHostFunc) spins MS ms;
//                         cudaStreamSynchronize waits for it between the two
//   host_gaps parallel MS spins MS ms while another thread, which never calls
//                         CUDA, spins meanwhile (a program's CPU-only worker)
#include <cerrno>
#include <cstring>
#include <ctime>
#include <pthread.h>

#include "rt_check.h"

static cudaEvent_t ev;

static double thread_cpu_ms()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Spin until this thread has used ms of CPU time (however long that takes
// on a busy machine).
static void spin_cpu(double ms)
{
    double end = thread_cpu_ms() + ms;
    volatile unsigned long x = 0;
    while (thread_cpu_ms() < end)
        for (int i = 0; i < 1000; i++)
            x = x + i;
}

static double g_ms;

static void *worker(void *)
{
    spin_cpu(g_ms);
    CHECK(cudaEventRecord(ev, 0));
    return NULL;
}

static volatile int stop_bg;

static void *background(void *)
{
    volatile unsigned long x = 0;
    while (!stop_bg)
        x = x + 1;
    return NULL;
}

static void CUDART_CB host_fn(void *)
{
    spin_cpu(g_ms);
}

int main(int argc, char **argv)
{
    if (argc != 3 || atof(argv[2]) <= 0) {
        fprintf(stderr, "usage: host_gaps spin|sleep|thread|hostfn|parallel MS\n");
        return 2;
    }
    const char *mode = argv[1];
    g_ms = atof(argv[2]);
    CHECK(cudaEventCreate(&ev));
    CHECK(cudaEventRecord(ev, 0));
    if (!strcmp(mode, "spin")) {
        spin_cpu(g_ms);
    } else if (!strcmp(mode, "sleep")) {
        timespec ts = { (time_t)(g_ms / 1e3), (long)((g_ms - 1e3 * (time_t)(g_ms / 1e3)) * 1e6) };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    } else if (!strcmp(mode, "thread")) {
        pthread_t t;
        EXPECT(pthread_create(&t, NULL, worker, NULL) == 0);
        EXPECT(pthread_join(t, NULL) == 0);
    } else if (!strcmp(mode, "parallel")) {
        pthread_t t;
        EXPECT(pthread_create(&t, NULL, background, NULL) == 0);
        spin_cpu(g_ms);
        stop_bg = 1;
        EXPECT(pthread_join(t, NULL) == 0);
    } else if (!strcmp(mode, "hostfn")) {
        CHECK(cudaLaunchHostFunc(0, host_fn, NULL));
        CHECK(cudaStreamSynchronize(0));
    } else {
        fprintf(stderr, "host_gaps: unknown mode \"%s\"\n", mode);
        return 2;
    }
    CHECK(cudaEventRecord(ev, 0));
    CHECK(cudaEventDestroy(ev));
    printf("host_gaps %s %g: ok\n", mode, g_ms);
    return 0;
}

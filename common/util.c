/* Error reporting, strict parsing and atomic file writes shared by every stage. */
#define _GNU_SOURCE
#include "maya/common.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/random.h>
#include <unistd.h>

static char error_prefix[64] = "maya";
static __thread char last_error[1024];
static void (*error_handler)(const char *kind, const char *msg);

void maya_set_error_prefix(const char *prefix)
{
    snprintf(error_prefix, sizeof error_prefix, "%s", prefix);
}

void maya_set_error_handler(void (*handler)(const char *kind, const char *msg))
{
    error_handler = handler;
}

const char *maya_last_error(void)
{
    return last_error;
}

static void vreport(const char *kind, const char *fmt, va_list ap)
{
    /* vsnprintf expands %m itself (glibc), with the errno of the caller. */
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    if (error_handler)
        error_handler(kind, last_error);
    else
        fprintf(stderr, "%s: %s%s\n", error_prefix, kind, last_error);
}

int maya_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("", fmt, ap);
    va_end(ap);
    return -1;
}

void maya_warn(const char *fmt, ...)
{
    va_list ap;
    int saved = errno;
    va_start(ap, fmt);
    errno = saved;
    vreport("warning: ", fmt, ap);
    va_end(ap);
}

int maya_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size)
        return maya_error("text too long (%d bytes, room for %zu)", n, size);
    return 0;
}

int maya_parse_i64(const char *s, int64_t *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int maya_parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int maya_parse_double(const char *s, double *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int maya_parse_size(const char *s, uint64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    uint64_t mult = 1;
    switch (*end) {
    case 0: break;
    case 'k': case 'K': mult = 1ull << 10; end++; break;
    case 'm': case 'M': mult = 1ull << 20; end++; break;
    case 'g': case 'G': mult = 1ull << 30; end++; break;
    case 't': case 'T': mult = 1ull << 40; end++; break;
    default: return -1;
    }
    if (mult > 1 && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
        end += strlen(end);
    if (*end)
        return -1;
    if (v > UINT64_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

int maya_open_unique(const char *prefix, char *path, size_t size, int flags, unsigned mode)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        uint64_t r;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            r = maya_mono_ns() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^ (uint64_t)attempt;
        if (maya_snprintf(path, size, "%s.%016llx", prefix, (unsigned long long)r) < 0)
            return -1;
        int fd = open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd >= 0 ? fd : maya_error("cannot create %s: %m", path);
    }
    return maya_error("cannot create a file named %s.<random>: every name tried exists", prefix);
}

int maya_atomic_open(struct maya_atomic_file *af, const char *path)
{
    af->fp = NULL;
    char prefix[sizeof af->tmp];
    if (maya_snprintf(af->path, sizeof af->path, "%s", path) < 0 ||
        maya_snprintf(prefix, sizeof prefix - 17, "%s.tmp", path) < 0)
        return -1;
    int fd = maya_open_unique(prefix, af->tmp, sizeof af->tmp, O_WRONLY, 0644);
    if (fd < 0)
        return -1;
    af->fp = fdopen(fd, "w");
    if (!af->fp) {
        close(fd);
        unlink(af->tmp);
        return maya_error("cannot open %s: %m", af->tmp);
    }
    return 0;
}

void maya_escape_controls(const char *in, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t used = 0;
    if (!size)
        return;
    for (const unsigned char *p = (const unsigned char *)in; *p && used + 1 < size; p++) {
        if (*p >= 0x20 && *p != 0x7f && *p != '\\') {
            out[used++] = (char)*p;
            continue;
        }
        if (used + 5 >= size)
            break;
        out[used++] = '\\';
        if (*p == '\\') {
            out[used++] = '\\';
            continue;
        }
        out[used++] = 'x';
        out[used++] = hex[*p >> 4];
        out[used++] = hex[*p & 15];
    }
    out[used] = 0;
}

int maya_atomic_commit(struct maya_atomic_file *af)
{
    int rc = 0;
    if (fflush(af->fp) != 0 || ferror(af->fp) || fsync(fileno(af->fp)) != 0)
        rc = maya_error("cannot write %s: %m", af->tmp);
    if (fclose(af->fp) != 0 && rc == 0)
        rc = maya_error("cannot write %s: %m", af->tmp);
    af->fp = NULL;
    if (rc == 0 && rename(af->tmp, af->path) != 0)
        rc = maya_error("cannot rename %s to %s: %m", af->tmp, af->path);
    if (rc != 0)
        unlink(af->tmp);
    return rc;
}

void maya_atomic_abort(struct maya_atomic_file *af)
{
    if (af->fp)
        fclose(af->fp);
    af->fp = NULL;
    unlink(af->tmp);
}

int maya_write_file_atomic(const char *path, const void *data, size_t len)
{
    struct maya_atomic_file af;
    if (maya_atomic_open(&af, path) < 0)
        return -1;
    if (len && fwrite(data, 1, len, af.fp) != len) {
        maya_atomic_abort(&af);
        return maya_error("cannot write %s: %m", path);
    }
    return maya_atomic_commit(&af);
}

int maya_read_file(const char *path, char **data, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return maya_error("cannot open %s: %m", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        fclose(fp);
        return maya_error("out of memory reading %s", path);
    }
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (n < cap) {
            if (ferror(fp)) {
                free(buf);
                fclose(fp);
                return maya_error("cannot read %s: %m", path);
            }
            break;
        }
        char *grown = realloc(buf, cap * 2 + 1);
        if (!grown) {
            free(buf);
            fclose(fp);
            return maya_error("out of memory reading %s", path);
        }
        buf = grown;
        cap *= 2;
    }
    fclose(fp);
    buf[n] = 0;
    *data = buf;
    if (len)
        *len = n;
    return 0;
}

int maya_self_dir(const void *addr, char *buf, size_t size)
{
    Dl_info info;
    char real[PATH_MAX];
    if (!dladdr(addr, &info) || !info.dli_fname)
        return maya_error("cannot tell where this program is installed");
    /* The main executable may show up by a bare name; /proc knows its path. */
    if (strchr(info.dli_fname, '/')) {
        if (!realpath(info.dli_fname, real))
            return maya_error("cannot resolve %s: %m", info.dli_fname);
    } else {
        ssize_t n = readlink("/proc/self/exe", real, sizeof real - 1);
        if (n < 0)
            return maya_error("cannot read /proc/self/exe: %m");
        real[n] = 0;
    }
    char *slash = strrchr(real, '/');
    if (slash)
        *slash = 0;
    return maya_snprintf(buf, size, "%s", real);
}

int maya_data_dir(const void *addr, char *buf, size_t size)
{
    const char *env = getenv("MAYA_DATA_DIR");
    if (env && *env)
        return maya_snprintf(buf, size, "%s", env);
    char dir[PATH_MAX], cand[PATH_MAX + 32];
    if (maya_self_dir(addr, dir, sizeof dir) < 0)
        return -1;
    /* bin/maya -> ../share/maya; lib/maya/libX.so -> ../../share/maya */
    const char *ups[] = { "/../share/maya", "/../../share/maya" };
    for (size_t i = 0; i < MAYA_ARRAY_LEN(ups); i++) {
        struct stat st;
        snprintf(cand, sizeof cand, "%s%s", dir, ups[i]);
        if (stat(cand, &st) == 0 && S_ISDIR(st.st_mode)) {
            char real[PATH_MAX];
            if (!realpath(cand, real))
                return maya_error("cannot resolve %s: %m", cand);
            return maya_snprintf(buf, size, "%s", real);
        }
    }
    return maya_error("no share/maya data directory next to %s (set MAYA_DATA_DIR)", dir);
}

uint64_t maya_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Figures as the reports print them, and text escaped for XML/HTML: shared
 * by report.txt (report.c) and report.html (html.c), so that the two show
 * the same numbers the same way. */
#include "sim_internal.h"

#include <inttypes.h>

void sim_fmt_time(char *buf, size_t size, double s)
{
    if (s >= 10)
        snprintf(buf, size, "%.2f s", s);
    else if (s >= 1e-3)
        snprintf(buf, size, "%.3f ms", s * 1e3);
    else
        snprintf(buf, size, "%.3f us", s * 1e6);
}

void sim_fmt_bytes(char *buf, size_t size, uint64_t b)
{
    if (b >= 1ull << 30)
        snprintf(buf, size, "%.2f GiB", b / 1073741824.0);
    else if (b >= 1ull << 20)
        snprintf(buf, size, "%.1f MiB", b / 1048576.0);
    else
        snprintf(buf, size, "%" PRIu64 " bytes", b);
}

/* Control characters other than tab are dropped: XML 1.0 cannot hold them. */
void sim_xml_escape(FILE *fp, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", fp); break;
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '"': fputs("&quot;", fp); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                fputc(*s, fp);
        }
    }
}

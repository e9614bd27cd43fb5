/* maya trace dump [--partial] FILE... | maya trace build TEXT OUT [TEXT OUT]...
 * | maya trace export --chakra OUT [OPTIONS] DIR (trace_export.c) */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "maya/collator.h"
#include "maya/trace_dump.h"

static void usage(FILE *fp)
{
    fprintf(fp, "usage: maya trace dump [--partial] FILE...\n"
                "  Print every record of each trace, one per line, with all decoded fields.\n"
                "  --partial  accept a trace cut short (a rank that crashed or was killed): it is read\n"
                "             up to its last whole record, rank-N.mtrace.tmp with its rank-N.mtrace.tail\n"
                "       maya trace build TEXT OUT [TEXT OUT]...\n"
                "  Write the rank trace OUT from a text description (maya trace build --help);\n"
                "  several pairs build several traces in one go.\n"
                "       maya trace export --chakra OUT [OPTIONS] DIR\n"
                "  Write the run DIR's replay as Chakra execution traces into OUT\n"
                "  (maya trace export --help).\n");
}

int cmd_trace(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "export"))
        return trace_export(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "build")) {
        if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
            printf("usage: maya trace build TEXT OUT [TEXT OUT]...\n%s", col_trace_build_help);
            return 0;
        }
        if (argc < 4 || argc % 2 != 0) {
            usage(stderr);
            return 2;
        }
        for (int i = 2; i + 1 < argc; i += 2)
            if (col_trace_build(argv[i], argv[i + 1]) < 0)
                return 1;
        return 0;
    }
    if (argc < 3 || strcmp(argv[1], "dump") != 0) {
        usage(stderr);
        return 2;
    }
    int partial = 0, i = 2, rc = 0;
    if (!strcmp(argv[i], "--partial")) {
        partial = 1;
        i++;
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    for (; i < argc; i++) {
        if (argc - i > 1 || partial)
            printf("# %s\n", argv[i]);
        if (maya_trace_dump(argv[i], stdout, partial) < 0)
            rc = 1;
    }
    return rc;
}

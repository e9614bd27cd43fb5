/* maya: the one command users type. Dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "maya/common.h"
#include "maya/hwspec.h"

struct command {
    const char *name;
    const char *help;
    int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
#define MAYA_CMD_ENTRY(name, help) { #name, help, cmd_##name },
    MAYA_COMMANDS(MAYA_CMD_ENTRY)
#undef MAYA_CMD_ENTRY
};

static void usage(FILE *fp)
{
    fprintf(fp, "usage: maya [--help] [--version] COMMAND [ARGS...]\n\n"
                "maya predicts what a deep-learning training job costs on GPUs you do not have,\n"
                "by running it unmodified on CPUs against an emulated CUDA stack.\n\ncommands:\n");
    for (size_t i = 0; i < MAYA_ARRAY_LEN(commands); i++)
        fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(fp, "\n'maya COMMAND --help' describes a command; man maya(1) describes them all.\n");
}

int cli_load_hwspecs(struct maya_hwspecs *hw)
{
    return maya_hwspecs_load_default((const void *)cli_load_hwspecs, hw);
}

int main(int argc, char **argv)
{
    maya_set_error_prefix("maya");
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("maya %s\n", MAYA_VERSION);
        return 0;
    }
    for (size_t i = 0; i < MAYA_ARRAY_LEN(commands); i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    maya_error("unknown command \"%s\"; commands:", argv[1]);
    for (size_t i = 0; i < MAYA_ARRAY_LEN(commands); i++)
        fprintf(stderr, "  %s\n", commands[i].name);
    return 2;
}

/* maya hwspecs list | show NAME | check FILE|DIR */
#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "maya/common.h"
#include "maya/hwspec.h"

static void usage(FILE *fp)
{
    fprintf(fp, "usage: maya hwspecs list\n"
                "       maya hwspecs show NAME     (a GPU key or alias, or a cluster)\n"
                "       maya hwspecs check FILE    (parse one file, report problems)\n"
                "       maya hwspecs check DIR     (every file of DIR/gpus and DIR/clusters, as\n"
                "                                   MAYA_HWSPEC_DIR=DIR would read them; else\n"
                "                                   every *.conf of DIR)\n");
}

/* A hwspecs folder (gpus/, clusters/) as MAYA_HWSPEC_DIR, or else a folder
 * of description files. */
static int check_dir(const char *dir, struct maya_hwspecs *hw)
{
    char sub[4200];
    struct stat st;
    snprintf(sub, sizeof sub, "%s/gpus", dir);
    int layout = stat(sub, &st) == 0;
    snprintf(sub, sizeof sub, "%s/clusters", dir);
    layout |= stat(sub, &st) == 0;
    if (layout)
        return maya_hwspecs_load_dir(dir, hw);
    DIR *d = opendir(dir);
    if (!d)
        return maya_error("cannot read %s: %m", dir);
    int rc = 0, n = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".conf"))
            continue;
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        rc = maya_hwspecs_load_file(sub, hw);
        n++;
    }
    closedir(d);
    if (rc == 0 && n == 0)
        rc = maya_error("%s holds no *.conf file, and no gpus/ or clusters/ folder of them", dir);
    return rc;
}

int cmd_hwspecs(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *verb = argv[1];
    if (!strcmp(verb, "check")) {
        if (argc != 3) {
            usage(stderr);
            return 2;
        }
        struct maya_hwspecs hw = { 0 };
        struct stat st;
        int dir = stat(argv[2], &st) == 0 && S_ISDIR(st.st_mode);
        int rc = dir ? check_dir(argv[2], &hw) : maya_hwspecs_load_file(argv[2], &hw);
        if (rc == 0)
            printf("%s: %zu GPU(s), %zu cluster(s): ok\n", argv[2], hw.ngpus, hw.nclusters);
        maya_hwspecs_free(&hw);
        return rc == 0 ? 0 : 1;
    }
    struct maya_hwspecs hw;
    if (cli_load_hwspecs(&hw) < 0)
        return 1;
    int rc = 0;
    if (!strcmp(verb, "list") && argc == 2) {
        printf("%-16s %-28s %6s %9s %9s  %s\n", "GPU", "name", "SMs", "memory", "bf16", "aliases");
        for (size_t i = 0; i < hw.ngpus; i++) {
            const struct maya_gpu_spec *g = &hw.gpus[i];
            printf("%-16s %-28s %6d %6.1fGiB %6.0fTF ", g->key, g->prop.name, g->prop.multiProcessorCount,
                   g->prop.totalGlobalMem / 1073741824.0, g->perf.bf16_tflops);
            for (int a = 0; a < g->naliases; a++)
                printf("%s%s", a ? "," : " ", g->aliases[a]);
            printf("\n");
        }
        if (hw.nclusters) {
            printf("\n%-16s %-16s %5s %-9s %s\n", "cluster", "gpu", "gpn", "intra", "NICs");
            for (size_t i = 0; i < hw.nclusters; i++) {
                const struct maya_cluster_spec *c = &hw.clusters[i];
                static const char *intra[] = { "nvswitch", "pairwise", "pcie" };
                printf("%-16s %-16s %5d %-9s %d x %g GB/s\n", c->key, c->gpu, c->gpus_per_node,
                       intra[c->intra], c->nics_per_node, c->nic_gbps);
            }
        }
    } else if (!strcmp(verb, "show") && argc == 3) {
        const struct maya_gpu_spec *g = maya_hwspecs_find_gpu(&hw, argv[2]);
        const struct maya_cluster_spec *c = maya_hwspecs_find_cluster(&hw, argv[2]);
        if (g)
            maya_gpu_spec_print(stdout, g);
        else if (c)
            maya_cluster_spec_print(stdout, c);
        else {
            char names[2048];
            maya_hwspecs_gpu_names(&hw, names, sizeof names);
            rc = maya_error("no GPU or cluster named \"%s\"; GPUs: %s", argv[2], names);
        }
    } else {
        usage(stderr);
        rc = 2;
    }
    maya_hwspecs_free(&hw);
    return rc < 0 ? 1 : rc;
}

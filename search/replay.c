/* maya search --replay DIR: every trial answered from an earlier search of
 * the same space in DIR (its search.txt maps each combination's values to
 * its trial directory, whose report.json and search-time give the result
 * and the time its run took) instead of running. What it is for: comparing
 * strategies, seeds and budgets on a space that was measured once (a grid),
 * in seconds, whatever build measured it; the cache cannot, since a trial's
 * key holds the build's version and model files.
 *
 * The table is read once: O(rows x parameters) strings; a lookup is a scan
 * of the rows (a search holds at most a few thousand). */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "maya/common.h"

#define MAX_TOKENS 64

static int is_trial_id(const char *w)
{
    size_t n = strlen(w);
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)w[i]) || isupper((unsigned char)w[i]))
            return 0;
    return n == 12;
}

/* Split line at spaces into at most MAX_TOKENS words (in place). */
static int split(char *line, char **w)
{
    int n = 0;
    for (char *rest = line, *t; n < MAX_TOKENS && (t = strsep(&rest, " \t\n")) != NULL;)
        if (*t)
            w[n++] = t;
    return n;
}

int search_replay_load(struct search_replay *r, const char *dir, const struct search_space *sp)
{
    char path[PATH_MAX + 16], *line = NULL;
    size_t cap = 0;
    int rc = 0, lineno = 0, np = sp->nparams;
    if (maya_snprintf(r->dir, sizeof r->dir, "%s/trials", dir) < 0 ||
        maya_snprintf(path, sizeof path, "%s/search.txt", dir) < 0)
        return -1;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return maya_error("--replay %s: cannot open %s: %m (expected the directory of an earlier maya search)",
                          dir, path);
    if (np + 1 > MAX_TOKENS)
        rc = maya_error("--replay: at most %d parameters", MAX_TOKENS - 1);
    while (rc == 0 && getline(&line, &cap, fp) > 0) {
        char *w[MAX_TOKENS];
        int n = split(line, w);
        lineno++;
        if (n == 0)
            continue;
        if (!strcmp(w[0], "#")) { /* the header: the same parameters, in the same order */
            for (int i = 0; rc == 0 && i < np; i++)
                if (i + 1 >= n || strcmp(w[i + 1], sp->params[i].name))
                    rc = maya_error("--replay %s: its parameter %d is \"%s\", this search's is \"%s\" (expected "
                                    "a search of the same --param and --flag list)", path, i + 1,
                                    i + 1 < n ? w[i + 1] : "(none)", sp->params[i].name);
            r->header = rc == 0;
            continue;
        }
        if (!isdigit((unsigned char)w[0][0]))
            break; /* the table ends at the best line */
        if (!r->header) {
            rc = maya_error("%s line %d: a row before the header", path, lineno);
            break;
        }
        int id = np + 1;
        while (id < n && !is_trial_id(w[id]))
            id++;
        /* a pruned row was never run: it answers nothing */
        if (id >= n || n < np + 2 || (id + 1 < n && !strncmp(w[id + 1], "pruned:", 7)))
            continue;
        struct search_replay_row *row = realloc(r->rows, (r->nrows + 1) * sizeof *r->rows);
        if (!row) {
            rc = maya_error("out of memory");
            break;
        }
        r->rows = row;
        row = &r->rows[r->nrows];
        memset(row, 0, sizeof *row);
        snprintf(row->id, sizeof row->id, "%s", w[id]);
        if (!(row->values = calloc(np, sizeof *row->values))) {
            rc = maya_error("out of memory");
            break;
        }
        r->nrows++;
        for (int i = 0; i < np && rc == 0; i++)
            if (!(row->values[i] = strdup(w[i + 1])))
                rc = maya_error("out of memory");
    }
    free(line);
    fclose(fp);
    if (rc == 0 && !r->header)
        rc = maya_error("--replay %s: no table header (expected search.txt of a maya search)", path);
    if (rc == 0 && r->nrows == 0)
        rc = maya_error("--replay %s: no trial that ran", path);
    r->nparams = np;
    return rc;
}

int search_replay_answer(const struct search_replay *r, const struct search_space *sp, struct search_trial *t)
{
    for (int k = 0; k < r->nrows; k++) {
        int i = 0;
        while (i < sp->nparams && !strcmp(r->rows[k].values[i], sp->params[i].values[t->choice[i]]))
            i++;
        if (i < sp->nparams)
            continue;
        char *own = t->dir, path[PATH_MAX + 16];
        snprintf(path, sizeof path, "%s/%s", r->dir, r->rows[k].id);
        t->dir = path;
        search_trial_read(t, -1);
        t->wall_s = search_trial_load_time(t);
        t->dir = own;
        snprintf(t->replayed, sizeof t->replayed, "%s", r->rows[k].id);
        return 1;
    }
    t->status = SEARCH_FAILED;
    t->iteration_s = t->peak_bytes = t->wall_s = -1;
    snprintf(t->reason, sizeof t->reason, "not in the replayed search (%.400s)", r->dir);
    return 0;
}

void search_replay_free(struct search_replay *r)
{
    for (int k = 0; k < r->nrows; k++) {
        for (int i = 0; i < r->nparams && r->rows[k].values; i++)
            free(r->rows[k].values[i]);
        free(r->rows[k].values);
    }
    free(r->rows);
    memset(r, 0, sizeof *r);
}

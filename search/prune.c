/* maya search: pruning over declared knob properties (--prune NAME=RULE).
 *
 * A rule says how one parameter's values relate, in the order they are
 * listed; nothing here knows what a parameter means:
 *   memory-up       each value needs no less GPU memory than the one before
 *   memory-down     each value needs no more GPU memory than the one before
 *   prefer-earlier  when a value is valid, every later value (all else equal)
 *                   is slower: it is dominated
 * A trial is marked oom without running when a trial that ran out of memory
 * needs no more memory than it by every memory rule (each memory-up value no
 * later, each memory-down value no earlier, every other parameter equal),
 * and pruned when a valid trial differs from it in one prefer-earlier
 * parameter only, at an earlier value. Each check is O(finished trials x
 * parameters), done once per trial before it would start.
 */
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "maya/common.h"

static const char *const rule_names[] = { "memory-up", "memory-down", "prefer-earlier" };

int search_prune_add(struct search_space *s, const char *arg)
{
    const char *eq = strchr(arg, '=');
    int i = 0;
    if (eq)
        for (; i < s->nparams; i++)
            if (strlen(s->params[i].name) == (size_t)(eq - arg) && !strncmp(s->params[i].name, arg, eq - arg))
                break;
    if (!eq || i == s->nparams)
        return maya_error("--prune \"%s\": expected NAME=RULE[,RULE] with NAME a --param or --flag declared "
                          "before it", arg);
    struct search_param *p = &s->params[i];
    char *list = strdup(eq + 1);
    if (!list)
        return maya_error("out of memory");
    int rc = 0;
    for (char *rest = list, *r; rc == 0 && (r = strsep(&rest, ",")) != NULL;) {
        int k = 0;
        while (k < 3 && strcmp(r, rule_names[k]))
            k++;
        if (k == 3)
            rc = maya_error("--prune %s: unknown rule \"%s\"; expected memory-up, memory-down or prefer-earlier",
                            p->name, r);
        else if (k < 2 && p->memory && p->memory != (k == 0 ? 1 : -1))
            rc = maya_error("--prune %s: memory-up and memory-down contradict each other", p->name);
        else if (k < 2)
            p->memory = k == 0 ? 1 : -1;
        else
            p->prefer = 1;
    }
    free(list);
    return rc;
}

int search_prune_rules(const struct search_space *s)
{
    int n = 0;
    for (int i = 0; i < s->nparams; i++)
        n += (s->params[i].memory != 0) + s->params[i].prefer;
    return n;
}

/* Does t need no less memory than o by every memory rule (and differ)? */
static int needs_no_less(const struct search_space *s, const int *t, const int *o)
{
    int differs = 0;
    for (int i = 0; i < s->nparams; i++) {
        int m = s->params[i].memory;
        if ((m == 0 && t[i] != o[i]) || (m > 0 && t[i] < o[i]) || (m < 0 && t[i] > o[i]))
            return 0;
        differs |= t[i] != o[i];
    }
    return differs;
}

/* The one prefer-earlier parameter in which o is earlier than t, all else
 * equal; -1 if none. */
static int dominates(const struct search_space *s, const int *t, const int *o)
{
    int at = -1;
    for (int i = 0; i < s->nparams; i++) {
        if (t[i] == o[i])
            continue;
        if (at >= 0 || !s->params[i].prefer || o[i] > t[i])
            return -1;
        at = i;
    }
    return at;
}

/* "name=value ..." of the parameters in which o differs from t. */
static void differences(const struct search_space *s, const int *t, const int *o, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < s->nparams && n < size; i++)
        if (t[i] != o[i]) {
            int w = snprintf(buf + n, size - n, "%s%s=%s", n ? " " : "", s->params[i].name,
                             s->params[i].values[o[i]]);
            n += w > 0 ? (size_t)w : 0;
        }
}

int search_prune(const struct search_space *s, struct search_trial *t, struct search_trial *const *done,
                 int ndone)
{
    char diff[256];
    for (int d = 0; d < ndone; d++) {
        const struct search_trial *o = done[d];
        if (o->status == SEARCH_OOM && needs_no_less(s, t->choice, o->choice)) {
            differences(s, t->choice, o->choice, diff, sizeof diff);
            t->status = SEARCH_OOM;
            t->iteration_s = -1;
            t->peak_bytes = -1;
            snprintf(t->pruned_by, sizeof t->pruned_by, "%s", o->id);
            snprintf(t->reason, sizeof t->reason, "pruned (memory rules): needs no less memory than trials/%s "
                     "(%s), which ran out of memory", o->id, diff);
            return SEARCH_OOM;
        }
        int k = o->status == SEARCH_OK ? dominates(s, t->choice, o->choice) : -1;
        if (k >= 0) {
            t->status = SEARCH_PRUNED;
            t->iteration_s = -1;
            t->peak_bytes = -1;
            t->bound_s = o->iteration_s;
            snprintf(t->pruned_by, sizeof t->pruned_by, "%s", o->id);
            snprintf(t->reason, sizeof t->reason, "pruned (prefer-earlier %s): %s=%s is valid (trials/%s, %.3f ms)",
                     s->params[k].name, s->params[k].name, s->params[k].values[o->choice[k]], o->id,
                     o->iteration_s * 1e3);
            return SEARCH_PRUNED;
        }
    }
    return 0;
}

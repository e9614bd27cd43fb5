/* A job some of whose ranks were cut short (killed, crashed, stopped by
 * maya): their traces end early, so the others' later collectives never
 * find them and the replay runs out of events with work left. That is not
 * a deadlock of the program but the end of what was recorded: the job is
 * simulated up to there. Each rank keeps its ops up to the first one that
 * could not finish (on a stream or on its host); the rest are counted as
 * not replayed, and iterations are found on what ran.
 *
 * Cost: one pass over the ops of every rank.
 */
#include "sim_internal.h"

#include "maya/common.h"

int sim_cut_short(struct sim_job *j)
{
    j->cut_short = 1;
    j->ops_not_replayed = 0;
    for (int i = 0; i < j->nranks; i++) {
        struct sim_rank *r = &j->ranks[i];
        uint64_t keep = MAYA_MIN(r->next, r->nops);
        if (r->blocked && keep)
            keep--; /* its host waits in that call: it did not return */
        for (uint64_t k = 0; k < keep; k++)
            if (sim_device_work(&r->ops[k]) && r->ops[k].stream && r->times[k].dev_end == 0 && r->ops[k].dev_ns) {
                keep = k;
                break;
            }
        j->ops_not_replayed += (r->nops - keep) * r->weight; /* a replayed rank stands for weight ranks */
        r->nops = keep;
    }
    if (sim_find_iterations(j) < 0)
        return -1;
    j->run_ok = 1;
    return 0;
}

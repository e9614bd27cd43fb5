/* Pinning emulation processes to cores (hwloc), so that the host gaps the
 * emulator measures are not stretched by neighbours on the same core.
 *
 * Always inside the binding the process already has (Slurm's task plugin
 * binds each task to its allocated cores before maya-launch starts): a
 * plugin that binds outside it would trespass on other jobs' cores.
 */
#ifndef SPANK_PIN_H
#define SPANK_PIN_H

#include <hwloc.h>
#include <stddef.h>

struct pin_plan {
    hwloc_topology_t topo;
    hwloc_bitmap_t set;         /* where this task may run */
    hwloc_obj_type_t unit;      /* cores, or PUs when no whole core is inside */
    int nunits;
};

/* Load the topology and the current binding. When the task is not bound on
 * its own (its binding is the whole machine, e.g. TaskPlugin=task/none) and
 * the node runs several of the step's tasks, take share `local` of `nlocal`
 * of it, so tasks do not share cores. 0, or -1 with a message. */
int pin_plan_init(struct pin_plan *p, int local, int nlocal);
void pin_plan_free(struct pin_plan *p);

/* The units of share `index` of `nshares` (contiguous; with more shares than
 * units, unit index % nunits), as a new bitmap; NULL on failure. */
hwloc_bitmap_t pin_plan_share(const struct pin_plan *p, int index, int nshares);

/* Bind the calling process (all its threads, present and future) to set. */
int pin_apply(const struct pin_plan *p, hwloc_const_bitmap_t set);

/* "0-3,8" */
void pin_format(hwloc_const_bitmap_t set, char *buf, size_t size);

#endif

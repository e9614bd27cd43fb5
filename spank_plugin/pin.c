/* Pinning with hwloc (pin.h). */
#define _GNU_SOURCE
#include "pin.h"
#include "maya/common.h"

#include <string.h>

static hwloc_bitmap_t share_of(hwloc_topology_t topo, hwloc_const_bitmap_t set, hwloc_obj_type_t unit,
                               int nunits, int index, int nshares)
{
    hwloc_bitmap_t out = hwloc_bitmap_alloc();
    if (!out)
        return NULL;
    int lo, hi; /* units [lo, hi) */
    if (nunits >= nshares) {
        lo = (int)((long long)index * nunits / nshares);
        hi = (int)((long long)(index + 1) * nunits / nshares);
    } else {
        lo = index % nunits;
        hi = lo + 1;
    }
    for (int i = lo; i < hi; i++) {
        hwloc_obj_t o = hwloc_get_obj_inside_cpuset_by_type(topo, set, unit, (unsigned)i);
        if (o)
            hwloc_bitmap_or(out, out, o->cpuset);
    }
    hwloc_bitmap_and(out, out, set);
    return out;
}

static void count_units(struct pin_plan *p)
{
    p->unit = HWLOC_OBJ_CORE;
    p->nunits = hwloc_get_nbobjs_inside_cpuset_by_type(p->topo, p->set, HWLOC_OBJ_CORE);
    if (p->nunits <= 0) {
        p->unit = HWLOC_OBJ_PU;
        p->nunits = hwloc_get_nbobjs_inside_cpuset_by_type(p->topo, p->set, HWLOC_OBJ_PU);
    }
}

int pin_plan_init(struct pin_plan *p, int local, int nlocal)
{
    memset(p, 0, sizeof *p);
    if (hwloc_topology_init(&p->topo) < 0)
        return maya_error("hwloc: cannot initialise the topology: %m");
    if (hwloc_topology_load(p->topo) < 0) {
        hwloc_topology_destroy(p->topo);
        p->topo = NULL;
        return maya_error("hwloc: cannot read the machine's topology: %m");
    }
    p->set = hwloc_bitmap_alloc();
    if (!p->set || hwloc_get_cpubind(p->topo, p->set, HWLOC_CPUBIND_PROCESS) < 0) {
        pin_plan_free(p);
        return maya_error("hwloc: cannot read this process's CPU binding: %m");
    }
    count_units(p);
    if (p->nunits <= 0) {
        pin_plan_free(p);
        return maya_error("hwloc: no core or processing unit inside the current binding");
    }
    hwloc_const_bitmap_t machine = hwloc_topology_get_allowed_cpuset(p->topo);
    if (nlocal > 1 && hwloc_bitmap_isincluded(machine, p->set)) {
        hwloc_bitmap_t mine = share_of(p->topo, p->set, p->unit, p->nunits, local, nlocal);
        if (!mine) {
            pin_plan_free(p);
            return maya_error("out of memory");
        }
        hwloc_bitmap_free(p->set);
        p->set = mine;
        count_units(p);
    }
    return 0;
}

void pin_plan_free(struct pin_plan *p)
{
    if (p->set)
        hwloc_bitmap_free(p->set);
    if (p->topo)
        hwloc_topology_destroy(p->topo);
    memset(p, 0, sizeof *p);
}

hwloc_bitmap_t pin_plan_share(const struct pin_plan *p, int index, int nshares)
{
    return share_of(p->topo, p->set, p->unit, p->nunits, index, nshares);
}

int pin_apply(const struct pin_plan *p, hwloc_const_bitmap_t set)
{
    if (hwloc_set_cpubind(p->topo, set, HWLOC_CPUBIND_PROCESS) < 0) {
        char s[256];
        pin_format(set, s, sizeof s);
        return maya_error("hwloc: cannot bind to CPUs %s: %m", s);
    }
    return 0;
}

void pin_format(hwloc_const_bitmap_t set, char *buf, size_t size)
{
    if (hwloc_bitmap_list_snprintf(buf, size, set) < 0 && size)
        buf[0] = 0;
}

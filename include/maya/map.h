/* A hash map from a pair of 64-bit keys to a 64-bit value: open addressing,
 * linear probing, backward-shift deletion (no tombstones), kept at most half
 * full. get/put/del cost O(1) expected; growing rehashes everything once per
 * doubling, so n puts cost O(n) in all. Used for ids found in traces
 * (communicators, events, streams) and the simulator's wait maps. */
#ifndef MAYA_MAP_H
#define MAYA_MAP_H

#include <stddef.h>
#include <stdint.h>

struct maya_map_slot {
    uint64_t k1, k2, value;
    uint64_t used;
};

struct maya_map {
    struct maya_map_slot *slots;
    size_t cap;                 /* a power of two, or 0 */
    size_t count;
};

/* Zeroed struct maya_map is an empty map. */
void maya_map_free(struct maya_map *m);
/* The value for (k1, k2), or NULL. */
uint64_t *maya_map_get(const struct maya_map *m, uint64_t k1, uint64_t k2);
/* The value for (k1, k2), inserting 0 if absent (*created says which);
 * NULL when out of memory. The pointer is valid until the next put or del. */
uint64_t *maya_map_put(struct maya_map *m, uint64_t k1, uint64_t k2, int *created);
/* Remove (k1, k2); 1 if it was there. */
int maya_map_del(struct maya_map *m, uint64_t k1, uint64_t k2);

#endif

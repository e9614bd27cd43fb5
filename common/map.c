/* The pair-keyed hash map of include/maya/map.h. */
#include "maya/map.h"

#include <stdlib.h>

static size_t hash(uint64_t k1, uint64_t k2)
{
    /* splitmix64 finaliser over both keys */
    uint64_t x = k1 * 0x9e3779b97f4a7c15ull ^ (k2 + 0x632be59bd9b4e019ull + (k1 << 6) + (k1 >> 2));
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (size_t)x;
}

void maya_map_free(struct maya_map *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

uint64_t *maya_map_get(const struct maya_map *m, uint64_t k1, uint64_t k2)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = hash(k1, k2) & mask;; i = (i + 1) & mask) {
        struct maya_map_slot *s = &m->slots[i];
        if (!s->used)
            return NULL;
        if (s->k1 == k1 && s->k2 == k2)
            return &s->value;
    }
}

static int grow(struct maya_map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    struct maya_map_slot *n = calloc(ncap, sizeof *n);
    if (!n)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        struct maya_map_slot *s = &m->slots[i];
        if (!s->used)
            continue;
        size_t j = hash(s->k1, s->k2) & (ncap - 1);
        while (n[j].used)
            j = (j + 1) & (ncap - 1);
        n[j] = *s;
    }
    free(m->slots);
    m->slots = n;
    m->cap = ncap;
    return 0;
}

uint64_t *maya_map_put(struct maya_map *m, uint64_t k1, uint64_t k2, int *created)
{
    if ((m->count + 1) * 2 > m->cap && grow(m) < 0)
        return NULL;
    size_t mask = m->cap - 1;
    size_t i = hash(k1, k2) & mask;
    for (;; i = (i + 1) & mask) {
        struct maya_map_slot *s = &m->slots[i];
        if (!s->used)
            break;
        if (s->k1 == k1 && s->k2 == k2) {
            if (created)
                *created = 0;
            return &s->value;
        }
    }
    m->slots[i] = (struct maya_map_slot){ k1, k2, 0, 1 };
    m->count++;
    if (created)
        *created = 1;
    return &m->slots[i].value;
}

int maya_map_del(struct maya_map *m, uint64_t k1, uint64_t k2)
{
    if (!m->cap)
        return 0;
    size_t mask = m->cap - 1;
    size_t i = hash(k1, k2) & mask;
    for (;; i = (i + 1) & mask) {
        if (!m->slots[i].used)
            return 0;
        if (m->slots[i].k1 == k1 && m->slots[i].k2 == k2)
            break;
    }
    /* Backward shift: move later entries of the probe run into the hole
     * when their home slot does not lie between the hole and them. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->slots[j].used; j = (j + 1) & mask) {
        size_t home = hash(m->slots[j].k1, m->slots[j].k2) & mask;
        int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!between) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].used = 0;
    m->count--;
    return 1;
}

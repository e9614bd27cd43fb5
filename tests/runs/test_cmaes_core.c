/* maya search's CMA-ES (search/cmaes.c) on synthetic functions over value
 * grids, driven as maya search drives it: a generation's samples are scored
 * (a point seen before costs nothing), then told; the number of distinct
 * points evaluated is what a search pays. It must reach the minimum of
 * quadratics over a 20 x 20 x 20 grid within a fraction of the grid, with an
 * invalid region around it, for every seed tried; the same seed must draw
 * the same samples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../search/search.h"

static int failures;

#define EXPECT(cond, ...)                                                  \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            failures++;                                                    \
        }                                                                  \
    } while (0)

#define N 3
#define SIDE 20
static const int centre[N] = { 13, 4, 17 };

/* f: weighted squared distance from the centre (condition 100, with a
 * coupling of the first two coordinates); NAN (invalid) beyond a radius. */
static double f(const int *v, int invalid_far)
{
    double d0 = v[0] - centre[0], d1 = v[1] - centre[1], d2 = v[2] - centre[2];
    double s = d0 * d0 + 10 * (d0 + d1) * (d0 + d1) + 100 * d2 * d2;
    return invalid_far && d0 * d0 + d1 * d1 + d2 * d2 > 100 ? NAN : s;
}

struct outcome {
    int evaluations;            /* distinct points scored until the minimum */
    int found;
    int first[8 * N];           /* the first samples drawn */
};

/* Run until the minimum is drawn or budget distinct points were scored. */
static struct outcome drive(uint64_t seed, int invalid_far, int budget)
{
    static double seen[SIDE * SIDE * SIDE];
    static const int nvalues[N] = { SIDE, SIDE, SIDE };
    struct outcome o = { 0 };
    for (int i = 0; i < SIDE * SIDE * SIDE; i++)
        seen[i] = -1; /* not scored yet */
    struct search_cmaes *c = search_cmaes_new(N, nvalues, 0, seed);
    int lambda = search_cmaes_lambda(c), *idx = malloc(lambda * N * sizeof *idx);
    double *score = malloc(lambda * sizeof *score);
    for (int gen = 0; gen < 1000 && !o.found && o.evaluations < budget; gen++) {
        search_cmaes_ask(c, idx);
        if (gen == 0)
            memcpy(o.first, idx, sizeof o.first);
        for (int k = 0; k < lambda; k++) {
            int *v = idx + k * N, at = (v[0] * SIDE + v[1]) * SIDE + v[2];
            if (seen[at] == -1) {
                seen[at] = f(v, invalid_far);
                o.evaluations++;
            }
            score[k] = seen[at];
            o.found |= v[0] == centre[0] && v[1] == centre[1] && v[2] == centre[2];
        }
        search_cmaes_tell(c, score);
    }
    free(idx);
    free(score);
    search_cmaes_free(c);
    return o;
}

int main(void)
{
    /* the default population: 4 + floor(3 ln n), at least 4 */
    const int two[10] = { 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 };
    const int want_lambda[11] = { 0, 4, 6, 7, 8, 8, 9, 9, 10, 10, 10 };
    for (int n = 1; n <= 10; n++) {
        struct search_cmaes *c = search_cmaes_new(n, two, 0, 1);
        EXPECT(c && search_cmaes_lambda(c) == want_lambda[n], "n=%d: population %d, expected %d", n,
               c ? search_cmaes_lambda(c) : -1, want_lambda[n]);
        search_cmaes_free(c);
    }

    /* every seed finds the minimum within 200 of the 8000 points */
    int worst = 0, total = 0;
    for (int invalid_far = 0; invalid_far <= 1; invalid_far++)
        for (uint64_t seed = 1; seed <= 20; seed++) {
            struct outcome o = drive(seed, invalid_far, 200);
            EXPECT(o.found, "seed %llu%s: no minimum after %d distinct points", (unsigned long long)seed,
                   invalid_far ? " (invalid far away)" : "", o.evaluations);
            worst = o.evaluations > worst ? o.evaluations : worst;
            total += o.evaluations;
        }
    printf("minimum of a quadratic over a %dx%dx%d grid: %.1f distinct points on average, %d at worst "
           "(40 runs)\n", SIDE, SIDE, SIDE, total / 40.0, worst);

    /* the same seed, the same samples; another seed, others */
    struct outcome a = drive(7, 0, 50), b = drive(7, 0, 50), other = drive(8, 0, 50);
    EXPECT(!memcmp(a.first, b.first, sizeof a.first) && a.evaluations == b.evaluations,
           "seed 7 drew different samples twice");
    EXPECT(memcmp(a.first, other.first, sizeof a.first), "seeds 7 and 8 drew the same samples");

    /* each coordinate's deviation stays at least a fifth of a value step
     * when every sample scores the same */
    const int few[2] = { 3, 3 };
    struct search_cmaes *c = search_cmaes_new(2, few, 0, 3);
    int idx[6 * 2];
    double flat[6] = { 1, 1, 1, 1, 1, 1 };
    for (int g = 0; g < 200; g++) {
        search_cmaes_ask(c, idx);
        search_cmaes_tell(c, flat);
    }
    for (int i = 0; i < 2; i++)
        EXPECT(search_cmaes_std(c, i) >= 0.2 - 1e-9 && search_cmaes_std(c, i) <= 2 + 1e-9,
               "coordinate %d: deviation %g value steps, expected 0.2 to 2", i, search_cmaes_std(c, i));
    for (int k = 0; k < 6 * 2; k++)
        EXPECT(idx[k] >= 0 && idx[k] <= 2, "index %d outside 0..2", idx[k]);
    search_cmaes_free(c);

    if (failures)
        fprintf(stderr, "%d failure%s\n", failures, failures == 1 ? "" : "s");
    return failures != 0;
}

/* maya search --strategy cmaes: a (mu/mu_w, lambda)-CMA-ES over the value
 * indexes of the parameters, as in Hansen's tutorial ("The CMA Evolution
 * Strategy: A Tutorial", 2016): recombination weights, cumulation paths
 * p_sigma and p_c, rank-one and rank-mu updates of the covariance, step-size
 * control by the path length; the covariance is decomposed by Jacobi
 * rotations every generation (the dimension is a handful of parameters).
 *
 * Coordinate i is the value index of parameter i scaled to [0, 1]: x_i =
 * index / (n_i - 1), so every parameter spans the same range whatever its
 * number of values. A sample is evaluated at its nearest value indexes.
 * Two things adapt the continuous method to the box and the grid:
 *  - a sample outside the box is moved to its nearest point inside, and the
 *    update uses that point (the step actually taken): otherwise the
 *    samples that land beyond an edge all round to the edge's values, tie
 *    with it, and lengthen the path that sets the step size, which then
 *    grows while the search sticks to the edge;
 *  - no coordinate's standard deviation falls below MIN_STD value steps,
 *    so that samples keep reaching the neighbouring values instead of all
 *    rounding to the mean (the caller stops once generations bring nothing
 *    new).
 * Only the ranking of the scores is used, so invalid points (any score that
 * is not a finite number) rank after every valid one. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

#define MIN_STD 0.2             /* in value steps */
#define MAX_STD 1.0             /* the whole range */
#define SIGMA0 0.3              /* the initial step size: a third of the range */

struct search_cmaes {
    int n, lambda, mu;
    double *w;                  /* recombination weights, mu of them */
    double mueff, cs, ds, cc, c1, cmu, chin;
    double sigma;
    double *mean, *ps, *pc;     /* n each */
    double *C, *B, *D;          /* n x n, n x n, n: C = B diag(D^2) B^T */
    double *x, *y;              /* the population: lambda x n samples and (x - mean) / sigma */
    double *steps;              /* per coordinate: the size of one value step */
    double *tmp;                /* n, and lambda for scratch */
    int *order;                 /* lambda: the samples best first */
    const double *score;        /* tell's, while it sorts */
    const int *tier;            /* tell's tiers (NULL: by finiteness), while it sorts */
    int generation;
    uint64_t rng;
    int have_spare;
    double spare;
};

/* A standard normal draw (Box-Muller over search_random's uniform draws). */
static double gauss(struct search_cmaes *c)
{
    if (c->have_spare) {
        c->have_spare = 0;
        return c->spare;
    }
    double u1 = ((search_random(&c->rng) >> 11) + 1.0) / 9007199254740993.0; /* (0, 1] */
    double u2 = (search_random(&c->rng) >> 11) / 9007199254740992.0;
    double r = sqrt(-2 * log(u1));
    c->spare = r * sin(2 * M_PI * u2);
    c->have_spare = 1;
    return r * cos(2 * M_PI * u2);
}

/* Eigen-decomposition of the symmetric C by cyclic Jacobi rotations: B's
 * columns the eigenvectors, D the square roots of the eigenvalues. */
static void decompose(struct search_cmaes *c)
{
    int n = c->n;
    double *a = c->tmp + n;     /* n x n scratch after the n-vector */
    memcpy(a, c->C, n * n * sizeof *a);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            c->B[i * n + j] = i == j;
    for (int sweep = 0; sweep < 64; sweep++) {
        double off = 0, diag = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                *(i == j ? &diag : &off) += a[i * n + j] * a[i * n + j];
        if (off <= 1e-30 * diag)
            break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = a[p * n + q];
                if (fabs(apq) < 1e-300)
                    continue;
                double theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double cs = 1 / sqrt(t * t + 1), sn = t * cs;
                for (int k = 0; k < n; k++) { /* columns p and q */
                    double akp = a[k * n + p], akq = a[k * n + q];
                    a[k * n + p] = cs * akp - sn * akq;
                    a[k * n + q] = sn * akp + cs * akq;
                }
                for (int k = 0; k < n; k++) { /* rows p and q */
                    double apk = a[p * n + k], aqk = a[q * n + k];
                    a[p * n + k] = cs * apk - sn * aqk;
                    a[q * n + k] = sn * apk + cs * aqk;
                }
                for (int k = 0; k < n; k++) {
                    double bkp = c->B[k * n + p], bkq = c->B[k * n + q];
                    c->B[k * n + p] = cs * bkp - sn * bkq;
                    c->B[k * n + q] = sn * bkp + cs * bkq;
                }
            }
    }
    for (int i = 0; i < n; i++)
        c->D[i] = sqrt(fmax(a[i * n + i], 1e-20));
}

struct search_cmaes *search_cmaes_new(int n, const int *nvalues, int lambda, uint64_t seed)
{
    if (n < 1)
        return NULL;
    struct search_cmaes *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n = n;
    c->lambda = lambda > 0 ? lambda : 4 + (int)floor(3 * log(n));
    if (c->lambda < 4)
        c->lambda = 4;
    c->mu = c->lambda / 2;
    c->rng = seed;
    c->w = calloc(c->mu, sizeof *c->w);
    c->mean = calloc(n, sizeof *c->mean);
    c->ps = calloc(n, sizeof *c->ps);
    c->pc = calloc(n, sizeof *c->pc);
    c->C = calloc(n * n, sizeof *c->C);
    c->B = calloc(n * n, sizeof *c->B);
    c->D = calloc(n, sizeof *c->D);
    c->x = calloc(c->lambda * n, sizeof *c->x);
    c->y = calloc(c->lambda * n, sizeof *c->y);
    c->steps = calloc(n, sizeof *c->steps);
    c->tmp = calloc(n + n * n + c->lambda, sizeof *c->tmp);
    c->order = calloc(c->lambda, sizeof *c->order);
    if (!c->w || !c->mean || !c->ps || !c->pc || !c->C || !c->B || !c->D || !c->x || !c->y || !c->steps ||
        !c->tmp || !c->order) {
        search_cmaes_free(c);
        return NULL;
    }
    /* weights: w_i proportional to ln((lambda + 1) / 2) - ln i, summing to 1 */
    double sum = 0, sum2 = 0;
    for (int i = 0; i < c->mu; i++)
        sum += c->w[i] = log((c->lambda + 1) / 2.0) - log(i + 1);
    for (int i = 0; i < c->mu; i++) {
        c->w[i] /= sum;
        sum2 += c->w[i] * c->w[i];
    }
    c->mueff = 1 / sum2;
    /* the tutorial's default strategy parameters */
    c->cs = (c->mueff + 2) / (n + c->mueff + 5);
    c->ds = 1 + 2 * fmax(0, sqrt((c->mueff - 1) / (n + 1)) - 1) + c->cs;
    c->cc = (4 + c->mueff / n) / (n + 4 + 2 * c->mueff / n);
    c->c1 = 2 / ((n + 1.3) * (n + 1.3) + c->mueff);
    c->cmu = fmin(1 - c->c1, 2 * (c->mueff - 2 + 1 / c->mueff) / ((n + 2) * (n + 2) + c->mueff));
    c->chin = sqrt(n) * (1 - 1 / (4.0 * n) + 1 / (21.0 * n * n));
    /* start at the middle of the box, a third of it wide, isotropic */
    c->sigma = SIGMA0;
    for (int i = 0; i < n; i++) {
        c->mean[i] = 0.5;
        c->steps[i] = 1.0 / (nvalues[i] > 1 ? nvalues[i] - 1 : 1);
        c->C[i * n + i] = c->B[i * n + i] = c->D[i] = 1;
    }
    return c;
}

int search_cmaes_lambda(const struct search_cmaes *c)
{
    return c->lambda;
}

double search_cmaes_std(const struct search_cmaes *c, int i)
{
    return c->sigma * sqrt(c->C[i * c->n + i]) / c->steps[i];
}

double search_cmaes_mean(const struct search_cmaes *c, int i)
{
    return c->mean[i];
}

void search_cmaes_ask(struct search_cmaes *c, int *index)
{
    int n = c->n;
    double *z = c->tmp;
    for (int k = 0; k < c->lambda; k++) {
        double *x = c->x + k * n, *y = c->y + k * n;
        for (int i = 0; i < n; i++)
            z[i] = c->D[i] * gauss(c);
        for (int i = 0; i < n; i++) { /* y = B D z ~ N(0, C), x = mean + sigma y */
            y[i] = 0;
            for (int j = 0; j < n; j++)
                y[i] += c->B[i * n + j] * z[j];
            x[i] = fmin(1, fmax(0, c->mean[i] + c->sigma * y[i]));
            y[i] = (x[i] - c->mean[i]) / c->sigma;
            index[k * n + i] = (int)round(x[i] / c->steps[i]);
        }
    }
}

void search_cmaes_move(struct search_cmaes *c, int k, const int *index)
{
    int n = c->n;
    for (int i = 0; i < n; i++) {
        double x = index[i] * c->steps[i];
        if (fabs(x - c->x[k * n + i]) <= 0.5 * c->steps[i])
            continue; /* the same value: the draw stays as it was */
        c->x[k * n + i] = x;
        c->y[k * n + i] = (x - c->mean[i]) / c->sigma;
    }
}

/* Lower tier first (without tiers: valid before invalid), then within a
 * tier lower score first (scores that are not finite last), then the order
 * drawn: a total order, so the update is the same on every machine. */
static int by_rank(const void *a, const void *b, void *arg)
{
    const struct search_cmaes *c = arg;
    int i = *(const int *)a, j = *(const int *)b;
    double si = c->score[i], sj = c->score[j];
    int vi = isfinite(si), vj = isfinite(sj);
    if (c->tier && c->tier[i] != c->tier[j])
        return c->tier[i] < c->tier[j] ? -1 : 1;
    if (vi != vj)
        return vj - vi;
    if (vi && si != sj)
        return si < sj ? -1 : 1;
    return i - j;
}

/* Keep every coordinate's standard deviation sigma sqrt(C_ii) within
 * [MIN_STD value steps, MAX_STD]: the smallest is raised by raising sigma,
 * then a too large one lowered by lowering sigma. */
static void bound_sigma(struct search_cmaes *c)
{
    int n = c->n;
    double up = 1, down = 1;
    for (int i = 0; i < n; i++) {
        double sd = c->sigma * sqrt(c->C[i * n + i]);
        up = fmax(up, MIN_STD * c->steps[i] / sd);
    }
    c->sigma *= up;
    for (int i = 0; i < n; i++)
        down = fmin(down, MAX_STD / (c->sigma * sqrt(c->C[i * n + i])));
    c->sigma *= down;
}

void search_cmaes_tell(struct search_cmaes *c, const double *score)
{
    search_cmaes_tell_tiers(c, score, NULL);
}

void search_cmaes_tell_tiers(struct search_cmaes *c, const double *score, const int *tier)
{
    int n = c->n, lambda = c->lambda, mu = c->mu;
    for (int k = 0; k < lambda; k++)
        c->order[k] = k;
    c->score = score;
    c->tier = tier;
    qsort_r(c->order, lambda, sizeof *c->order, by_rank, c);
    c->tier = NULL;

    /* mean: the weighted mean of the mu best steps */
    double *yw = c->tmp, *t = c->tmp + n;
    for (int i = 0; i < n; i++) {
        yw[i] = 0;
        for (int r = 0; r < mu; r++)
            yw[i] += c->w[r] * c->y[c->order[r] * n + i];
        c->mean[i] = fmin(1, fmax(0, c->mean[i] + c->sigma * yw[i]));
    }
    /* p_sigma with C^(-1/2) yw = B D^-1 B^T yw */
    for (int j = 0; j < n; j++) {
        t[j] = 0;
        for (int i = 0; i < n; i++)
            t[j] += c->B[i * n + j] * yw[i];
        t[j] /= c->D[j];
    }
    double norm = 0, a = sqrt(c->cs * (2 - c->cs) * c->mueff);
    for (int i = 0; i < n; i++) {
        double v = 0;
        for (int j = 0; j < n; j++)
            v += c->B[i * n + j] * t[j];
        c->ps[i] = (1 - c->cs) * c->ps[i] + a * v;
        norm += c->ps[i] * c->ps[i];
    }
    norm = sqrt(norm);
    c->generation++;
    int hsig = norm / sqrt(1 - pow(1 - c->cs, 2.0 * c->generation)) / c->chin < 1.4 + 2.0 / (n + 1);
    double b = sqrt(c->cc * (2 - c->cc) * c->mueff);
    for (int i = 0; i < n; i++)
        c->pc[i] = (1 - c->cc) * c->pc[i] + hsig * b * yw[i];
    /* C: rank-one update with p_c, rank-mu update with the mu best steps */
    double keep = 1 - c->c1 - c->cmu + (1 - hsig) * c->c1 * c->cc * (2 - c->cc);
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double rmu = 0;
            for (int r = 0; r < mu; r++)
                rmu += c->w[r] * c->y[c->order[r] * n + i] * c->y[c->order[r] * n + j];
            double v = keep * c->C[i * n + j] + c->c1 * c->pc[i] * c->pc[j] + c->cmu * rmu;
            c->C[i * n + j] = c->C[j * n + i] = v;
        }
    /* sigma: longer path than expected, larger steps */
    c->sigma *= exp(c->cs / c->ds * (norm / c->chin - 1));
    decompose(c);
    bound_sigma(c);
}

void search_cmaes_free(struct search_cmaes *c)
{
    if (!c)
        return;
    free(c->w);
    free(c->mean);
    free(c->ps);
    free(c->pc);
    free(c->C);
    free(c->B);
    free(c->D);
    free(c->x);
    free(c->y);
    free(c->steps);
    free(c->tmp);
    free(c->order);
    free(c);
}

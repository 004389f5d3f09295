/* Pooling reductions, instantiated once per element type by pool.c:
 *   #define PT float
 *   #define PS f32
 *   #include "pool_tmpl.h"
 * Windows come from pool.c's driver as lists of in-plane offsets (or, for the
 * global pools, the whole contiguous plane). */
#define PT_CAT_(a, b) a##_##b
#define PT_CAT(a, b) PT_CAT_(a, b)
#define PT_FN(name) PT_CAT(name, PS)

/* Whole-plane reductions in 8 independent lanes: the compiler vectorises
 * them without having to reassociate a single accumulator. */
static PT PT_FN(plane_max)(const PT *x, int64_t n)
{
    PT acc[8];
    int64_t i = 0;
    for (int l = 0; l < 8; l++) acc[l] = x[0];
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) acc[l] = x[i + l] > acc[l] ? x[i + l] : acc[l];
    for (; i < n; i++) acc[0] = x[i] > acc[0] ? x[i] : acc[0];
    for (int l = 1; l < 8; l++) acc[0] = acc[l] > acc[0] ? acc[l] : acc[0];
    return acc[0];
}

/* sum of |x|^p for p in {0 (plain sum), 1, 2}, else via pow. */
static double PT_FN(plane_sum)(const PT *x, int64_t n, double p)
{
    if (p != 0 && p != 1 && p != 2) {
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += pow(fabs((double)x[i]), p);
        return s;
    }
    double acc[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) {
            double v = x[i + l];
            acc[l] += p == 0 ? v : p == 1 ? fabs(v) : v * v;
        }
    for (; i < n; i++) {
        double v = x[i];
        acc[0] += p == 0 ? v : p == 1 ? fabs(v) : v * v;
    }
    double s = 0;
    for (int l = 0; l < 8; l++) s += acc[l];
    return s;
}

static double PT_FN(window_sum)(const PT *x, const int32_t *off, int64_t n, double p)
{
    double s = 0;
    if (p == 0)
        for (int64_t t = 0; t < n; t++) s += x[off[t]];
    else if (p == 1)
        for (int64_t t = 0; t < n; t++) s += fabs((double)x[off[t]]);
    else if (p == 2)
        for (int64_t t = 0; t < n; t++) s += (double)x[off[t]] * x[off[t]];
    else
        for (int64_t t = 0; t < n; t++) s += pow(fabs((double)x[off[t]]), p);
    return s;
}

/* Max of a window (n >= 1); *at (if asked) gets the position of the
 * first maximum. */
static PT PT_FN(window_max)(const PT *x, const int32_t *off, int64_t n, int64_t *at)
{
    PT best = x[off[0]];
    if (at) {
        *at = 0;
        for (int64_t t = 1; t < n; t++)
            if (x[off[t]] > best) best = x[off[*at = t]];
    } else {
        for (int64_t t = 1; t < n; t++) best = x[off[t]] > best ? x[off[t]] : best;
    }
    return best;
}

/* Pools every plane of x into y. idx (MaxPool's Indices, may be NULL) gets
 * the flat index of each maximum, the first one on ties. */
static void PT_FN(pool_planes)(const pool_geom *g, const pool_win *w, const pool_kind *k,
                               const PT *x, PT *y, int64_t *idx)
{
    for (int64_t pl = 0; pl < g->planes; pl++) {
        const PT *xp = x + pl * g->in_sp;
        PT *yp = y + pl * g->out_sp;
        if (w->global) { /* one window, the whole plane */
            const int64_t n = g->in_sp;
            if (k->op == POOL_MAX) yp[0] = n ? PT_FN(plane_max)(xp, n) : 0;
            else if (k->op == POOL_AVG) yp[0] = (PT)(PT_FN(plane_sum)(xp, n, 0) / (double)n);
            else yp[0] = (PT)pow(PT_FN(plane_sum)(xp, n, k->p), 1 / k->p);
            continue;
        }
        int64_t at = 0;
        for (int64_t o = 0; o < g->out_sp; o++) {
            const int32_t *off = w->off + w->start[o];
            const int64_t n = w->start[o + 1] - w->start[o];
            if (k->op == POOL_MAX) {
                yp[o] = n ? PT_FN(window_max)(xp, off, n, idx ? &at : NULL) : 0;
                if (idx)
                    idx[pl * g->out_sp + o] =
                        n ? pl * g->in_sp + pool_index(g, off[at], k->col_major) : -1;
            } else if (k->op == POOL_AVG) {
                int64_t div = k->include_pad ? w->npad[o] : n;
                yp[o] = (PT)(PT_FN(window_sum)(xp, off, n, 0) / (double)div);
            } else {
                yp[o] = (PT)pow(PT_FN(window_sum)(xp, off, n, k->p), 1 / k->p);
            }
        }
    }
}

#undef PT_FN
#undef PT_CAT
#undef PT_CAT_
#undef PT
#undef PS

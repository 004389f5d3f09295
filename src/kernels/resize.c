/* Resize: per-axis tables of source indices and weights, then one instance
 * of resize_tmpl.h per ISA over the output rows. */
#include "kernels/resize.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/isa.h"

/* Per output coordinate of one axis: the source index (nearest) or the two
 * taps and the second one's weight (linear). */
typedef struct rz_axis {
    int32_t *i0, *i1;
    float *w;
} rz_axis;

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/resize_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/resize_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/resize_tmpl.h"
#include "kernels/vec_end.h"

static const struct {
    kisa isa;
    void (*near)(const rz_axis *, const float *, size_t, float *);
    void (*hrow)(const rz_axis *, const float *, size_t, float *);
    void (*vmix)(const float *, const float *, float, size_t, float *);
    void (*rep)(const float *, size_t, int, float *);
    void (*nhwc_row)(const float *, const int32_t *, const float *, size_t, size_t, float *, size_t);
} rz_impls[] = {
#if KISA_X86
    /* the gathers stay scalar: the hardware gathers measured slower than
     * scalar loads here (bench-kernels); the vertical mix and the whole
     * factors' repeats are vectorised */
    {KISA_AVX512, rz_near_portable, rz_hrow_portable, rz_vmix_avx512, rz_rep_avx512, rz_nhwc_row_avx512},
    {KISA_AVX2, rz_near_portable, rz_hrow_portable, rz_vmix_avx2, rz_rep_avx2, rz_nhwc_row_avx2},
#endif
    {KISA_PORTABLE, rz_near_portable, rz_hrow_portable, rz_vmix_portable, rz_rep_portable,
     rz_nhwc_row_portable},
};

/* Nearest along x by a whole factor of 2, 4 or 8 (out = f * in, source
 * x / f, as asymmetric floor and the half-pixel modes give it): f, else 0
 * (the gathers). */
static int rep_factor(const krz_geom *g, const rz_axis *ax)
{
    if (g->linear || g->w < 1 || g->ow % g->w) return 0;
    int f = g->ow / g->w;
    if (f != 2 && f != 4 && f != 8) return 0;
    for (int x = 0; x < g->ow; x++)
        if (ax->i0[x] != x / f) return 0;
    return f;
}

static double src_coord(const krz_geom *g, int out, int in, double s, int x)
{
    double xf = x;
    switch (g->coord) {
    case KRZ_PYTORCH_HALF_PIXEL: return out > 1 ? (xf + 0.5) / s - 0.5 : 0;
    case KRZ_ALIGN_CORNERS: return out <= 1 ? 0 : xf * (in - 1) / (out - 1);
    case KRZ_ASYMMETRIC: return xf / s;
    default: return (xf + 0.5) / s - 0.5;
    }
}

static int32_t clampi(double i, int in)
{
    return i < 0 ? 0 : i >= in ? in - 1 : (int32_t)i;
}

static void fill_axis(const krz_geom *g, int out, int in, double s, rz_axis *a)
{
    if (s <= 0) s = in ? (double)out / in : 1;
    for (int x = 0; x < out; x++) {
        double xo = src_coord(g, out, in, s, x), f = floor(xo), fr = xo - f;
        if (!g->linear) {
            double i = f;
            if (fr != 0) switch (g->nearest) {
                case KRZ_ROUND_PREFER_CEIL: i = fr < 0.5 ? f : f + 1; break;
                case KRZ_FLOOR: break;
                case KRZ_CEIL: i = f + 1; break;
                default: i = fr <= 0.5 ? f : f + 1;
                }
            a->i0[x] = a->i1[x] = clampi(i, in);
            a->w[x] = 0;
            continue;
        }
        /* taps ceil(xo) - 1 and ceil(xo), the second weighted by the ratio in (0, 1] */
        double base = ceil(xo) - 1, ratio = xo - base;
        a->i0[x] = clampi(base, in);
        a->i1[x] = clampi(base + 1, in);
        a->w[x] = (float)ratio;
    }
}

/* Both axes' tables in one allocation (returned, to free; NULL when out of
 * memory). */
static char *tables(const krz_geom *g, rz_axis *ax, rz_axis *ay)
{
    size_t n = (size_t)g->oh + (size_t)g->ow;
    char *mem = malloc(n * (2 * sizeof(int32_t) + sizeof(float)) + 1);
    if (!mem) return NULL;
    *ax = (rz_axis){(int32_t *)mem, (int32_t *)mem + g->ow, (float *)((int32_t *)mem + 2 * g->ow)};
    ay->i0 = (int32_t *)(ax->w + g->ow);
    ay->i1 = ay->i0 + g->oh;
    ay->w = (float *)(ay->i1 + g->oh);
    fill_axis(g, g->ow, g->w, g->scale_w, ax);
    fill_axis(g, g->oh, g->h, g->scale_h, ay);
    return mem;
}

int kresize(const krz_geom *g, const float *x, float *y, int threads)
{
    __typeof__(rz_impls[0]) *im = KISA_PICK(rz_impls);
    rz_axis ax, ay;
    char *mem = tables(g, &ax, &ay);
    if (!mem) return -1;
    const int rep = rep_factor(g, &ax);
    const long rows = (long)g->planes * g->oh;
    const size_t ow = (size_t)g->ow, in = (size_t)g->h * g->w;
    int fail = 0;
    /* linear: each thread keeps the last two input rows interpolated along x
     * (h[0], h[1], tagged with their input row), which the next output rows
     * mostly share */
#pragma omp parallel num_threads(threads > 1 ? threads : 1) if (threads > 1 && rows > 1)
    {
        float *h[2] = {NULL, NULL}, *base = NULL;
        long tag[2] = {-1, -1}, last = -1; /* last: the row this thread wrote before */
        if (g->linear) {
            h[0] = base = malloc(2 * ow * sizeof(float) + 1);
            h[1] = base ? base + ow : NULL;
            if (!h[0]) {
#pragma omp atomic write
                fail = 1;
            }
        }
#pragma omp for schedule(static)
        for (long r = 0; r < rows; r++) {
            long p = r / g->oh;
            int oy = (int)(r % g->oh);
            const float *xp = x + (size_t)p * in;
            float *yr = y + (size_t)r * ow;
            if (!g->linear) { /* an output row from the same input row as the one before: copied */
                if (last == r - 1 && oy > 0 && ay.i0[oy] == ay.i0[oy - 1])
                    memcpy(yr, yr - ow, ow * sizeof *yr);
                else if (rep)
                    im->rep(xp + (size_t)ay.i0[oy] * g->w, (size_t)g->w, rep, yr);
                else
                    im->near(&ax, xp + (size_t)ay.i0[oy] * g->w, ow, yr);
                last = r;
                continue;
            }
            if (!h[0]) continue;
            long want[2] = {p * g->h + ay.i0[oy], p * g->h + ay.i1[oy]};
            if (tag[0] != want[0] && tag[1] == want[0]) { /* moved down one row */
                float *t = h[0];
                h[0] = h[1], h[1] = t;
                tag[1] = tag[0], tag[0] = want[0];
            }
            for (int k = 0; k < 2; k++)
                if (tag[k] != want[k]) {
                    im->hrow(&ax, x + (size_t)want[k] * g->w, ow, h[k]);
                    tag[k] = want[k];
                }
            im->vmix(h[0], h[1], ay.w[oy], ow, yr);
        }
        free(base);
    }
    free(mem);
    return fail ? -1 : 0;
}

/* Channels-last nearest: per output row, each pixel's c values from its
 * source pixel (with the residual's added), in vectors (rz_nhwc_row). */
int kresize_nhwc(const krz_geom *g, int64_t c, const float *x, const float *res, float *y, int64_t ldy,
                 int threads)
{
    __typeof__(rz_impls[0]) *im = KISA_PICK(rz_impls);
    rz_axis ax, ay;
    char *mem = g->linear ? NULL : tables(g, &ax, &ay);
    if (!mem) return -1;
    const long rows = (long)g->planes * g->oh;
    const size_t cs = (size_t)c, orow = (size_t)g->ow * cs, img = (size_t)g->h * g->w * cs;
    const size_t ys = (size_t)ldy;
#pragma omp parallel for schedule(static) num_threads(threads > 1 ? threads : 1) if (threads > 1 && rows > 1)
    for (long r = 0; r < rows; r++) {
        long p = r / g->oh;
        int oy = (int)(r % g->oh);
        const float *xr = x + (size_t)p * img + (size_t)ay.i0[oy] * g->w * cs;
        const float *rr = res ? res + (size_t)r * orow : NULL;
        im->nhwc_row(xr, ax.i0, rr, (size_t)g->ow, cs, y + (size_t)r * g->ow * ys, ys);
    }
    free(mem);
    return 0;
}

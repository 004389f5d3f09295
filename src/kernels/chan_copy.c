/* Channel copies (kernels/chan_copy.h). */
#include "kernels/chan_copy.h"

#include "kernels/chan_affine.h"
#include <string.h>

void kchan_copy(const kchan_geom *g, const float *x, int64_t ck, float *y, int threads)
{
    const int64_t hw = g->hw, xi = g->cx * hw, yi = g->cy * hw; /* floats per image */
    /* strides of a channel and of a pixel on each side */
    const int64_t xcs = g->x_nhwc ? 1 : hw, xps = g->x_nhwc ? g->cx : 1;
    const int64_t yps = g->y_nhwc ? g->cy : 1; /* a channel: hw (NCHW) or 1 */
#define YC(k) (g->groups > 0 ? kchan_shuffled(g->cy, g->groups, g->c0 + (k)) : g->c0 + (k))
    if (!g->y_nhwc) { /* by output planes */
        const int64_t planes = g->n * ck;
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1 && planes > 1) \
    schedule(static)
        for (int64_t p = 0; p < planes; p++) {
            const int64_t im = p / ck, k = p % ck;
            const float *xs = x + im * xi + (g->s0 + k) * xcs;
            float *yd = y + im * yi + YC(k) * hw;
            if (!g->x_nhwc) {
                memcpy(yd, xs, sizeof(float) * (size_t)hw);
                continue;
            }
            for (int64_t q = 0; q < hw; q++) yd[q] = xs[q * xps];
        }
        return;
    }
    const int64_t pix = g->n * hw; /* by output pixels */
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1 && pix > 1) \
    schedule(static)
    for (int64_t p = 0; p < pix; p++) {
        const int64_t im = p / hw, q = p % hw;
        const float *xs = x + im * xi + q * xps + g->s0 * xcs;
        float *yd = y + im * yi + q * yps;
        if (g->x_nhwc && g->groups <= 0) {
            memcpy(yd + g->c0, xs, sizeof(float) * (size_t)ck);
            continue;
        }
        if (g->groups <= 0) {
            for (int64_t k = 0; k < ck; k++) yd[g->c0 + k] = xs[k * xcs];
            continue;
        }
        /* the shuffled channel of c0 + k, stepped without a division */
        const int64_t per = g->cy / g->groups;
        int64_t r = g->c0 % per, d = g->c0 / per;
        for (int64_t k = 0; k < ck; k++) {
            yd[r * g->groups + d] = xs[k * xcs];
            if (++r == per) r = 0, d++;
        }
    }
#undef YC
}

void kchan_interleave2(const float *a, const float *b, int64_t pix, int64_t per, float *y,
                       int threads)
{
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1 && pix > 1) \
    schedule(static)
    for (int64_t p = 0; p < pix; p++) {
        const float *restrict pa = a + p * per, *restrict pb = b + p * per;
        float *restrict py = y + p * 2 * per;
        for (int64_t j = 0; j < per; j++) {
            py[2 * j] = pa[j];
            py[2 * j + 1] = pb[j];
        }
    }
}

/* v clamped to [lo, hi] (a NaN stays NaN: the comparisons are false). */
static inline float clampf(float v, float lo, float hi)
{
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

void kchan_scale(const kchan_geom *g, const float *x, const float *s, int64_t ss, const float *t,
                 float lo, float hi, float *y, int threads)
{
    const int64_t c = g->cy, cx = g->cx, hw = g->hw, n = g->n;
    if (g->x_nhwc == g->y_nhwc && !g->y_nhwc) { /* planes */
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1 && n * c > 1) \
    schedule(static)
        for (int64_t q = 0; q < n * c; q++) {
            const float f = s[q / c * ss + q % c], a = t ? t[q % c] : 0.0f;
            const float *restrict xp = x + (q / c * cx + q % c) * hw;
            float *restrict yp = y + q * hw;
            for (int64_t p = 0; p < hw; p++) yp[p] = clampf(xp[p] * f + a, lo, hi);
        }
        return;
    }
    if (g->x_nhwc && g->y_nhwc) { /* rows of channels: kaffine's vectors, per image's factors */
        const int64_t rows = n * hw, parts = threads > 1 && rows >= 2 * threads ? threads : 1;
#pragma omp parallel for num_threads((int)parts) if (parts > 1) schedule(static)
        for (int64_t q = 0; q < parts * n; q++) {
            const int64_t im = q % n, r0 = hw * (q / n) / parts, r1 = hw * (q / n + 1) / parts;
            const kaffine f = {s + im * ss, t, lo, hi};
            kaffine_rows(&f, 0, c, x + (im * hw + r0) * cx, cx, 1, r1 - r0, y + (im * hw + r0) * c, c);
        }
        return;
    }
    /* per pixel: a row of c channels on the channels-last side */
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1 && n * hw > 1) \
    schedule(static)
    for (int64_t q = 0; q < n * hw; q++) {
        const int64_t im = q / hw, p = q % hw;
        const float *restrict f = s + im * ss;
        const float *restrict xr = g->x_nhwc ? x + q * cx : x + im * cx * hw + p;
        float *restrict yr = g->y_nhwc ? y + q * c : y + im * c * hw + p;
        const int64_t xs = g->x_nhwc ? 1 : hw, ys = g->y_nhwc ? 1 : hw;
        if (xs == 1 && ys == 1 && t) {
            for (int64_t k = 0; k < c; k++) yr[k] = clampf(xr[k] * f[k] + t[k], lo, hi);
        } else if (xs == 1 && ys == 1) {
            for (int64_t k = 0; k < c; k++) yr[k] = clampf(xr[k] * f[k], lo, hi);
        } else {
            for (int64_t k = 0; k < c; k++) yr[k * ys] = clampf(xr[k * xs] * f[k] + (t ? t[k] : 0.0f), lo, hi);
        }
    }
}

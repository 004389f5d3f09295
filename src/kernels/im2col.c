/* im2col (im2col.h): each row of the column matrix (one input channel and
 * kernel offset) is filled a whole output row at a time; the stride-1
 * case copies runs with memcpy. im2col_pack_f32 writes each row straight
 * into the GEMM's B panels, so the column matrix is never written plain
 * and then packed again, a block of output pixels at a time. */
#include <string.h>

#include "kernels/im2col.h"

/* Row (ci, ki, kj) of the column matrix over output pixels [p0, p1):
 * r[oy*ow + ox - p0]. */
static void col_row(const conv2d_geom *g, const float *x, int64_t ci, int64_t ki, int64_t kj,
                    int64_t p0, int64_t p1, float *row)
{
    const float *xc = x + ci * g->h * g->w;
    /* the ox range whose ix lies inside the input */
    int64_t off = kj * g->dw - g->pw, lo = 0, hi = g->ow;
    while (lo < g->ow && lo * g->sw + off < 0) lo++;
    while (hi > lo && (hi - 1) * g->sw + off >= g->w) hi--;
    for (int64_t oy = p0 / g->ow; oy * g->ow < p1; oy++) {
        int64_t iy = oy * g->sh - g->ph + ki * g->dh;
        /* this output row's part of the range */
        int64_t a = oy * g->ow < p0 ? p0 - oy * g->ow : 0;
        int64_t b = (oy + 1) * g->ow > p1 ? p1 - oy * g->ow : g->ow;
        float *r = row + (oy * g->ow + a - p0); /* r[ox - a] */
        if (iy < 0 || iy >= g->h) {
            memset(r, 0, sizeof(float) * (size_t)(b - a));
            continue;
        }
        const float *xr = xc + iy * g->w;
        int64_t l = lo > a ? lo : a, h = hi < b ? hi : b;
        if (h < l) h = l;
        for (int64_t ox = a; ox < l; ox++) r[ox - a] = 0.0f;
        if (g->sw == 1)
            memcpy(r + (l - a), xr + l + off, sizeof(float) * (size_t)(h - l));
        else
            for (int64_t ox = l; ox < h; ox++) r[ox - a] = xr[ox * g->sw + off];
        for (int64_t ox = h; ox < b; ox++) r[ox - a] = 0.0f;
    }
}

void im2col_f32(const conv2d_geom *g, const float *x, float *col)
{
    const int64_t ohw = g->oh * g->ow;
    for (int64_t ci = 0; ci < g->c; ci++)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++)
                col_row(g, x, ci, ki, kj, 0, ohw, col + ((ci * g->kh + ki) * g->kw + kj) * ohw);
}

void im2col_pack_f32(const conv2d_geom *g, const float *x, int64_t p0, int64_t p1, int nr,
                     float *row, float *dst)
{
    const int64_t n = p1 - p0, kdim = g->c * g->kh * g->kw;
    int64_t k = 0;
    for (int64_t ci = 0; ci < g->c; ci++)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++, k++) {
                col_row(g, x, ci, ki, kj, p0, p1, row);
                float *d = dst + k * nr;
                int64_t j = 0;
                for (; j + nr <= n; j += nr, d += kdim * nr) memcpy(d, row + j, sizeof(float) * (size_t)nr);
                if (j < n) {
                    memcpy(d, row + j, sizeof(float) * (size_t)(n - j));
                    memset(d + (n - j), 0, sizeof(float) * (size_t)(nr - (n - j)));
                }
            }
}

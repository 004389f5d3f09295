/* im2col (im2col.h): each row of the column matrix (one input channel and
 * kernel offset) is filled a whole output row at a time; the stride-1
 * case copies runs with memcpy. im2col_pack_f32 writes each row straight
 * into the GEMM's B panels, so the column matrix is never written plain
 * and then packed again. */
#include <string.h>

#include "kernels/im2col.h"

/* Row (ci, ki, kj) of the column matrix: r[oy*ow + ox]. */
static void col_row(const conv2d_geom *g, const float *x, int64_t ci, int64_t ki, int64_t kj,
                    float *row)
{
    const float *xc = x + ci * g->h * g->w;
    /* the ox range whose ix lies inside the input */
    int64_t off = kj * g->dw - g->pw, lo = 0, hi = g->ow;
    while (lo < g->ow && lo * g->sw + off < 0) lo++;
    while (hi > lo && (hi - 1) * g->sw + off >= g->w) hi--;
    for (int64_t oy = 0; oy < g->oh; oy++) {
        int64_t iy = oy * g->sh - g->ph + ki * g->dh;
        float *r = row + oy * g->ow;
        if (iy < 0 || iy >= g->h) {
            memset(r, 0, sizeof(float) * (size_t)g->ow);
            continue;
        }
        const float *xr = xc + iy * g->w;
        for (int64_t ox = 0; ox < lo; ox++) r[ox] = 0.0f;
        if (g->sw == 1)
            memcpy(r + lo, xr + lo + off, sizeof(float) * (size_t)(hi - lo));
        else
            for (int64_t ox = lo; ox < hi; ox++) r[ox] = xr[ox * g->sw + off];
        for (int64_t ox = hi; ox < g->ow; ox++) r[ox] = 0.0f;
    }
}

void im2col_f32(const conv2d_geom *g, const float *x, float *col)
{
    const int64_t ohw = g->oh * g->ow;
    for (int64_t ci = 0; ci < g->c; ci++)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++)
                col_row(g, x, ci, ki, kj, col + ((ci * g->kh + ki) * g->kw + kj) * ohw);
}

void im2col_pack_f32(const conv2d_geom *g, const float *x, int nr, float *row, float *dst)
{
    const int64_t ohw = g->oh * g->ow, kdim = g->c * g->kh * g->kw;
    int64_t k = 0;
    for (int64_t ci = 0; ci < g->c; ci++)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++, k++) {
                col_row(g, x, ci, ki, kj, row);
                float *d = dst + k * nr;
                int64_t j = 0;
                for (; j + nr <= ohw; j += nr, d += kdim * nr) memcpy(d, row + j, sizeof(float) * (size_t)nr);
                if (j < ohw) {
                    memcpy(d, row + j, sizeof(float) * (size_t)(ohw - j));
                    memset(d + (ohw - j), 0, sizeof(float) * (size_t)(nr - (ohw - j)));
                }
            }
}

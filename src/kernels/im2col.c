/* im2col (im2col.h): rows of the column matrix are filled a whole output
 * row at a time; the stride-1 case copies runs with memcpy. */
#include <string.h>

#include "kernels/im2col.h"

void im2col_f32(const conv2d_geom *g, const float *x, float *col)
{
    const int64_t ohw = g->oh * g->ow;
    for (int64_t ci = 0; ci < g->c; ci++)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++) {
                float *row = col + ((ci * g->kh + ki) * g->kw + kj) * ohw;
                const float *xc = x + ci * g->h * g->w;
                /* ox range whose ix lies inside the input */
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
}

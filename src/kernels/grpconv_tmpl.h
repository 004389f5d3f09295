/* kgrp_conv's row for the ISA of the vec_*.h included before (grpconv.c
 * includes it once per ISA, with KG_P, the output pixels a tile, and the
 * 8-float vector GV and its gv_* operations defined). */

/* acc[p] = bias, then the taps of output pixels ox .. ox + P - 1 (P a
 * constant where it is inlined: KG_P, or 4 for the rest of a row), all of
 * whose windows lie inside the row (kwin_inner's [lo, hi)), stored at yp. */
static inline __attribute__((always_inline)) void KV(grp_tile)(const knhwc_geom *g, const float *xg,
                                                               const float *w, const float *bb, int64_t oy,
                                                               int64_t ox, float *yp, int64_t ldy, int64_t nv,
                                                               const int P)
{
    const int64_t cg = g->c, C = g->cs, step = g->sw * C;
    GV acc[KG_P];
    const GV b = gv_load(bb);
#pragma GCC unroll 16
    for (int p = 0; p < P; p++) acc[p] = b;
    for (int64_t ky = 0; ky < g->kh; ky++) {
        const int64_t iy = oy * g->sh - g->pt + ky * g->dh;
        if (iy < 0 || iy >= g->h) continue;
        for (int64_t kx = 0; kx < g->kw; kx++) {
            const float *xp = xg + (iy * g->w + ox * g->sw - g->pl + kx * g->dw) * C;
            const float *wt = w + (ky * g->kw + kx) * cg * 8;
            for (int64_t j = 0; j < cg; j++) {
                const GV wv = gv_load(wt + j * 8);
#pragma GCC unroll 16
                for (int p = 0; p < P; p++) acc[p] = gv_fmab(acc[p], wv, xp + p * step + j);
            }
        }
    }
#pragma GCC unroll 16
    for (int p = 0; p < P; p++) gv_storen(yp + p * ldy, acc[p], nv);
}

/* One output pixel ox, its window checked against the row's edges; two
 * sums over alternate input channels (a single one waits on each FMA). */
static inline void KV(grp_pixel)(const knhwc_geom *g, const float *xg, const float *w, const float *bb,
                                 int64_t oy, int64_t ox, float *yp, int64_t nv)
{
    const int64_t cg = g->c, C = g->cs;
    GV acc = gv_load(bb), acc2 = gv_zero();
    for (int64_t ky = 0; ky < g->kh; ky++) {
        const int64_t iy = oy * g->sh - g->pt + ky * g->dh;
        if (iy < 0 || iy >= g->h) continue;
        for (int64_t kx = 0; kx < g->kw; kx++) {
            const int64_t ix = ox * g->sw - g->pl + kx * g->dw;
            if (ix < 0 || ix >= g->w) continue;
            const float *xp = xg + (iy * g->w + ix) * C;
            const float *wt = w + (ky * g->kw + kx) * cg * 8;
            int64_t j = 0;
            for (; j + 2 <= cg; j += 2) {
                acc = gv_fmab(acc, gv_load(wt + j * 8), xp + j);
                acc2 = gv_fmab(acc2, gv_load(wt + j * 8 + 8), xp + j + 1);
            }
            if (j < cg) acc = gv_fmab(acc, gv_load(wt + j * 8), xp + j);
        }
    }
    gv_storen(yp, gv_add(acc, acc2), nv);
}

/* Output row oy of image x: every group's blocks of 8 output channels,
 * tiles of KG_P pixels inside [lo, hi), single pixels at the edges; then
 * the activation over the row. */
static void KV(grp_row)(const knhwc_geom *g, int64_t groups, int64_t mg, const float *x, const float *wp,
                        const float *bias, kact act, int64_t oy, int lo, int hi, float *y, int64_t ldy)
{
    const int64_t cg = g->c, taps = g->kh * g->kw, nch = (mg + 7) / 8, bw = taps * cg * 8;
    for (int64_t gi = 0; gi < groups; gi++)
        for (int64_t mc = 0; mc < nch; mc++) {
            const int64_t m0 = gi * mg + mc * 8, nv = mg - mc * 8 < 8 ? mg - mc * 8 : 8;
            const float *w = wp + (gi * nch + mc) * bw, *xg = x + gi * cg;
            float bb[8] = {0};
            for (int64_t l = 0; bias && l < nv; l++) bb[l] = bias[m0 + l];
            int64_t ox = 0;
            for (; ox < g->ow && ox < lo; ox++) KV(grp_pixel)(g, xg, w, bb, oy, ox, y + ox * ldy + m0, nv);
            for (; ox + KG_P <= hi; ox += KG_P) KV(grp_tile)(g, xg, w, bb, oy, ox, y + ox * ldy + m0, ldy, nv, KG_P);
            for (; ox + 4 <= hi; ox += 4) KV(grp_tile)(g, xg, w, bb, oy, ox, y + ox * ldy + m0, ldy, nv, 4);
            for (; ox < g->ow; ox++) KV(grp_pixel)(g, xg, w, bb, oy, ox, y + ox * ldy + m0, nv);
        }
    if (act.f == KF_NONE) return;
    const int64_t M = groups * mg;
    if (ldy == M)
        KV(fun_row)(y, y, (size_t)(g->ow * M), act.f, act.a, act.b);
    else
        for (int64_t ox = 0; ox < g->ow; ox++) KV(fun_row)(y + ox * ldy, y + ox * ldy, (size_t)M, act.f, act.a, act.b);
}

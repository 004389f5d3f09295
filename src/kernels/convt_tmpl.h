/* ConvTranspose of one output plane, for the ISA of the vec_*.h included
 * before (convt.c includes it once per ISA). */

/* col[j][p] = sum over ic of wt[ic * ws + tap[j]] * xg[ic][p], j < nt <= 4 */
static void KV(ct_cols)(const float *xg, int cig, size_t hw, const float *wt, size_t ws,
                        const int *tap, int nt, float *col)
{
    float *c0 = col, *c1 = col + hw, *c2 = col + 2 * hw, *c3 = col + 3 * hw;
    int t1 = tap[nt > 1 ? 1 : 0], t2 = tap[nt > 2 ? 2 : 0], t3 = tap[nt > 3 ? 3 : 0];
    for (size_t p = 0; p < hw; p += VL) {
        size_t r = hw - p < VL ? hw - p : VL;
        V a0 = vzero(), a1 = vzero(), a2 = vzero(), a3 = vzero();
        for (int ic = 0; ic < cig; ic++) {
            V xv = vloadn(xg + (size_t)ic * hw + p, r);
            const float *wr = wt + (size_t)ic * ws;
            a0 = vfma(xv, vset1(wr[tap[0]]), a0);
            a1 = vfma(xv, vset1(wr[t1]), a1);
            a2 = vfma(xv, vset1(wr[t2]), a2);
            a3 = vfma(xv, vset1(wr[t3]), a3);
        }
        vstoren(c0 + p, a0, r);
        if (nt > 1) vstoren(c1 + p, a1, r);
        if (nt > 2) vstoren(c2 + p, a2, r);
        if (nt > 3) vstoren(c3 + p, a3, r);
    }
}

/* y[oc] plane += the columns of its taps, scattered (col2im) */
static void KV(ct_plane)(const kct_geom *g, const float *xg, const float *wt, float b, float *yp,
                         float *col)
{
    const int cig = g->cin / g->group, cog = g->cout / g->group, taps = g->kh * g->kw;
    const size_t hw = (size_t)g->h * g->w, ws = (size_t)cog * taps;
    for (size_t i = 0; i < (size_t)g->oh * g->ow; i++) yp[i] = b;
    for (int t0 = 0; t0 < taps; t0 += 4) {
        int tap[4], nt = taps - t0 < 4 ? taps - t0 : 4;
        for (int j = 0; j < nt; j++) tap[j] = t0 + j;
        KV(ct_cols)(xg, cig, hw, wt, ws, tap, nt, col);
        for (int j = 0; j < nt; j++) {
            int ky = tap[j] / g->kw, kx = tap[j] % g->kw;
            const float *c = col + (size_t)j * hw;
            int ox0 = kx * g->dw - g->pl; /* ox = ix * sw + ox0 */
            int ix0 = ox0 < 0 ? (-ox0 + g->sw - 1) / g->sw : 0, ix1 = g->w;
            while (ix1 > ix0 && (ix1 - 1) * g->sw + ox0 >= g->ow) ix1--;
            for (int iy = 0; iy < g->h; iy++) {
                int oy = iy * g->sh - g->pt + ky * g->dh;
                if (oy < 0 || oy >= g->oh) continue;
                float *yr = yp + (size_t)oy * g->ow;
                const float *cr = c + (size_t)iy * g->w;
                if (g->sw == 1) {
                    for (int ix = ix0; ix < ix1; ix += VL) {
                        size_t r = ix1 - ix < VL ? (size_t)(ix1 - ix) : VL;
                        float *q = yr + (ix + ox0);
                        vstoren(q, vadd(vloadn(q, r), vloadn(cr + ix, r)), r);
                    }
                } else {
                    for (int ix = ix0; ix < ix1; ix++) yr[ix * g->sw + ox0] += cr[ix];
                }
            }
        }
    }
}

/* The depthwise convolution of one output row, for the ISA of the vec_*.h
 * included before (dwconv.c includes it once per ISA). */

/* One output at ox with bounds checks (the row's edges). */
static inline float KV(dw_edge)(const kdw_geom *g, const float *xp, const float *wk, float b,
                                int iy0, int ky0, int ky1, int ox)
{
    float acc = b;
    int ix0 = ox * g->sw - g->pl;
    for (int ky = ky0; ky < ky1; ky++) {
        const float *row = xp + (size_t)(iy0 + ky * g->dh) * g->w;
        for (int kx = 0; kx < g->kw; kx++) {
            int ix = ix0 + kx * g->dw;
            if (ix >= 0 && ix < g->w) acc += row[ix] * wk[ky * g->kw + kx];
        }
    }
    return acc;
}

/* Outputs [lo, hi) of the row, every tap inside the row; KW is a constant
 * in the unrolled paths. */
static inline __attribute__((always_inline)) void
KV(dw_inner)(const kdw_geom *g, const float *xp, const float *wk, float b, int iy0, int ky0,
             int ky1, int lo, int hi, float *yrow, const int KW)
{
    const int sw = g->sw, dw = g->dw;
    /* two vectors of outputs at a time (independent FMA chains), the last
     * ones masked: loads read nothing past the window of output hi - 1 */
    for (int ox = lo; ox < hi; ox += 2 * VL) {
        size_t n = (size_t)(hi - ox), r0 = n < VL ? n : VL, r1 = n <= VL ? 0 : n - VL < VL ? n - VL : VL;
        const float *base = xp + (ptrdiff_t)ox * sw - g->pl;
        V a0 = vset1(b), a1 = a0;
        if (r1) {
            for (int ky = ky0; ky < ky1; ky++) {
                const float *row = base + (size_t)(iy0 + ky * g->dh) * g->w;
                const float *wr = wk + ky * KW;
                for (int kx = 0; kx < KW; kx++) {
                    const float *q = row + kx * dw;
                    V w = vset1(wr[kx]);
                    a0 = vfma(vloadsn(q, sw, r0), w, a0);
                    a1 = vfma(vloadsn(q + VL * sw, sw, r1), w, a1);
                }
            }
            vstoren(yrow + ox, a0, r0);
            vstoren(yrow + ox + VL, a1, r1);
        } else {
            for (int ky = ky0; ky < ky1; ky++) {
                const float *row = base + (size_t)(iy0 + ky * g->dh) * g->w;
                const float *wr = wk + ky * KW;
                for (int kx = 0; kx < KW; kx++)
                    a0 = vfma(vloadsn(row + kx * dw, sw, r0), vset1(wr[kx]), a0);
            }
            vstoren(yrow + ox, a0, r0);
        }
    }
}

static void KV(dw_row)(const kdw_geom *g, const float *xp, const float *wk, float b, int oy,
                       int lo, int hi, float *yrow, kact act)
{
    int iy0 = oy * g->sh - g->pt, ky0 = 0, ky1 = g->kh;
    while (ky0 < ky1 && iy0 + ky0 * g->dh < 0) ky0++;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * g->dh >= g->h) ky1--;
    for (int ox = 0; ox < lo; ox++) yrow[ox] = KV(dw_edge)(g, xp, wk, b, iy0, ky0, ky1, ox);
    if (g->kw == 3) KV(dw_inner)(g, xp, wk, b, iy0, ky0, ky1, lo, hi, yrow, 3);
    else if (g->kw == 5) KV(dw_inner)(g, xp, wk, b, iy0, ky0, ky1, lo, hi, yrow, 5);
    else KV(dw_inner)(g, xp, wk, b, iy0, ky0, ky1, lo, hi, yrow, g->kw);
    for (int ox = hi > lo ? hi : lo; ox < g->ow; ox++)
        yrow[ox] = KV(dw_edge)(g, xp, wk, b, iy0, ky0, ky1, ox);
    if (act.f != KF_NONE) KV(fun_row)(yrow, yrow, (size_t)g->ow, act.f, act.a, act.b);
}

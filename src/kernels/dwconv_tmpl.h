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
    int ox = lo;
    /* two output vectors at a time: independent FMA chains */
    for (; ox + 2 * VL <= hi; ox += 2 * VL) {
        V a0 = vset1(b), a1 = a0;
        const float *base = xp + (ptrdiff_t)ox * sw - g->pl;
        for (int ky = ky0; ky < ky1; ky++) {
            const float *row = base + (size_t)(iy0 + ky * g->dh) * g->w;
            const float *wr = wk + ky * KW;
            for (int kx = 0; kx < KW; kx++) {
                const float *q = row + kx * dw;
                V w = vset1(wr[kx]);
                a0 = vfma(vloads(q, sw), w, a0);
                a1 = vfma(vloads(q + VL * sw, sw), w, a1);
            }
        }
        vstore(yrow + ox, a0), vstore(yrow + ox + VL, a1);
    }
    for (; ox + VL <= hi; ox += VL) {
        V acc = vset1(b);
        const float *base = xp + (ptrdiff_t)ox * sw - g->pl;
        for (int ky = ky0; ky < ky1; ky++) {
            const float *row = base + (size_t)(iy0 + ky * g->dh) * g->w;
            const float *wr = wk + ky * KW;
            for (int kx = 0; kx < KW; kx++) acc = vfma(vloads(row + kx * dw, sw), vset1(wr[kx]), acc);
        }
        vstore(yrow + ox, acc);
    }
    if (ox < hi) { /* the last part vector: masked loads read nothing past hi's window */
        size_t r = (size_t)(hi - ox);
        V acc = vset1(b);
        const float *base = xp + (ptrdiff_t)ox * sw - g->pl;
        for (int ky = ky0; ky < ky1; ky++) {
            const float *row = base + (size_t)(iy0 + ky * g->dh) * g->w;
            const float *wr = wk + ky * KW;
            for (int kx = 0; kx < KW; kx++) acc = vfma(vloadsn(row + kx * dw, sw, r), vset1(wr[kx]), acc);
        }
        vstoren(yrow + ox, acc, r);
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

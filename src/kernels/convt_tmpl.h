/* ConvTranspose of one output plane, for the ISA of the vec_*.h included
 * before (convt.c includes it once per ISA). */

/* col[j * hw + p] = sum over ic of wt[ic * ws + t0 + j] * xg[ic][p] for
 * the taps t0 + j < t0 + nt (nt <= 4) and p in [p0, p1) */
static void KV(ct_cols)(const float *xg, int cig, size_t hw, const float *wt, size_t ws, int t0,
                        int nt, size_t p0, size_t p1, float *col)
{
    float *c0 = col + (size_t)t0 * hw, *c1 = c0 + hw, *c2 = c1 + hw, *c3 = c2 + hw;
    int t1 = t0 + (nt > 1), t2 = t0 + 2 * (nt > 2), t3 = t0 + 3 * (nt > 3);
    size_t p = p0;
    /* two vectors of positions: eight independent FMA chains */
    for (; p + 2 * VL <= p1; p += 2 * VL) {
        V a0 = vzero(), a1 = vzero(), a2 = vzero(), a3 = vzero();
        V b0 = vzero(), b1 = vzero(), b2 = vzero(), b3 = vzero();
        for (int ic = 0; ic < cig; ic++) {
            const float *xr = xg + (size_t)ic * hw + p, *wr = wt + (size_t)ic * ws;
            V xa = vload(xr), xb = vload(xr + VL);
            V w0 = vset1(wr[t0]), w1 = vset1(wr[t1]), w2 = vset1(wr[t2]), w3 = vset1(wr[t3]);
            a0 = vfma(xa, w0, a0), b0 = vfma(xb, w0, b0);
            a1 = vfma(xa, w1, a1), b1 = vfma(xb, w1, b1);
            a2 = vfma(xa, w2, a2), b2 = vfma(xb, w2, b2);
            a3 = vfma(xa, w3, a3), b3 = vfma(xb, w3, b3);
        }
        vstore(c0 + p, a0), vstore(c0 + p + VL, b0);
        if (nt > 1) vstore(c1 + p, a1), vstore(c1 + p + VL, b1);
        if (nt > 2) vstore(c2 + p, a2), vstore(c2 + p + VL, b2);
        if (nt > 3) vstore(c3 + p, a3), vstore(c3 + p + VL, b3);
    }
    for (; p < p1; p += VL) {
        size_t r = p1 - p < VL ? p1 - p : VL;
        V a0 = vzero(), a1 = vzero(), a2 = vzero(), a3 = vzero();
        for (int ic = 0; ic < cig; ic++) {
            V xv = vloadn(xg + (size_t)ic * hw + p, r);
            const float *wr = wt + (size_t)ic * ws;
            a0 = vfma(xv, vset1(wr[t0]), a0);
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

/* Output planes oc0 .. oc0 + ocb of one group (yp the first, wt the
 * weights of oc0, bias NULL or of oc0): the columns of all their taps, a
 * tile of the input (every channel of it in L2) at a time, then col2im,
 * then the activation over the planes (still in cache). */
static void KV(ct_planes)(const kct_geom *g, const float *xg, const float *wt, const float *bias,
                          kact act, int ocb, float *yp, float *col)
{
    const int cig = g->cin / g->group, cog = g->cout / g->group, taps = g->kh * g->kw;
    const int rows = ocb * taps;
    const size_t hw = (size_t)g->h * g->w, ws = (size_t)cog * taps, ohw = (size_t)g->oh * g->ow;
    for (int o = 0; o < ocb; o++)
        for (size_t i = 0; i < ohw; i++) yp[o * ohw + i] = bias ? bias[o] : 0.0f;
    for (size_t p0 = 0; p0 < hw; p0 += CT_TILE)
        for (int t0 = 0; t0 < rows; t0 += 4)
            KV(ct_cols)(xg, cig, hw, wt, ws, t0, rows - t0 < 4 ? rows - t0 : 4, p0,
                        hw - p0 < CT_TILE ? hw : p0 + CT_TILE, col);
    for (int j = 0; j < rows; j++) {
        int ky = j % taps / g->kw, kx = j % taps % g->kw;
        float *yo = yp + (size_t)(j / taps) * ohw;
        const float *c = col + (size_t)j * hw;
        int ox0 = kx * g->dw - g->pl; /* ox = ix * sw + ox0 */
        int ix0 = ox0 < 0 ? (-ox0 + g->sw - 1) / g->sw : 0, ix1 = g->w;
        while (ix1 > ix0 && (ix1 - 1) * g->sw + ox0 >= g->ow) ix1--;
        for (int iy = 0; iy < g->h; iy++) {
            int oy = iy * g->sh - g->pt + ky * g->dh;
            if (oy < 0 || oy >= g->oh) continue;
            float *yr = yo + (size_t)oy * g->ow;
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
    if (act.f != KF_NONE) KV(fun_row)(yp, yp, (size_t)ocb * ohw, act.f, act.a, act.b);
}

/* Output planes oc .. oc + NC - 1 of one group (yp the first, the others
 * ohw floats apart; wt the first's weights, the next taps floats on; bias
 * NULL or the first's) when the stride equals the kernel (kw 1 or 2),
 * with no pads, dilation or output padding (DBNet's 2x2 stride-2
 * upsampling): each output pixel takes one tap, so no columns and no
 * col2im: per input row and tap row ky, the sums over the group's input
 * channels of a vector of input pixels for both kx and the NC planes at
 * once (each input load feeds 2 * NC FMA chains), the bias in, stored
 * interleaved straight into the output rows, then activated while the
 * rows are in L1; one plane of a 2x2 kernel does both tap rows in one
 * pass instead (four chains, the input row read once: DBNet's last
 * ConvTranspose, 16 -> 1, 0.75x the CPU time on the Zen 5). NC is a
 * constant (1 to CT_NC). */
static inline __attribute__((always_inline)) void KV(ct_direct_n)(const kct_geom *g, const float *xg,
                                                                  const float *wt, const float *bias,
                                                                  kact act, float *yp, const int NC)
{
    const int cig = g->cin / g->group, kh = g->kh, kw = g->kw, taps = kh * kw;
    const size_t hw = (size_t)g->h * g->w, ws = (size_t)(g->cout / g->group) * taps;
    const size_t ohw = (size_t)g->oh * g->ow;
    for (int iy = 0; iy < g->h; iy++) {
        /* one plane of a 2x2 kernel: both tap rows in one pass over the input row, four chains */
        if (NC == 1 && kh == 2 && kw == 2) {
            float *y0 = yp + (size_t)(iy * 2) * g->ow, *y1 = y0 + g->ow;
            const float *xr = xg + (size_t)iy * g->w;
            for (int ix = 0; ix < g->w; ix += VL) {
                size_t r = g->w - ix < VL ? (size_t)(g->w - ix) : VL;
                const V b = vset1(bias ? bias[0] : 0.0f);
                V a0 = b, a1 = b, c0 = b, c1 = b;
                for (int ic = 0; ic < cig; ic++) {
                    const V xv = vloadn(xr + ic * hw + ix, r);
                    const float *wi = wt + ic * ws;
                    a0 = vfma(xv, vset1(wi[0]), a0), a1 = vfma(xv, vset1(wi[1]), a1);
                    c0 = vfma(xv, vset1(wi[2]), c0), c1 = vfma(xv, vset1(wi[3]), c1);
                }
                V lo, hi;
                vzip(a0, a1, lo, hi);
                vstoren(y0 + 2 * ix, lo, 2 * r < VL ? 2 * r : VL);
                if (2 * r > VL) vstoren(y0 + 2 * ix + VL, hi, 2 * r - VL);
                vzip(c0, c1, lo, hi);
                vstoren(y1 + 2 * ix, lo, 2 * r < VL ? 2 * r : VL);
                if (2 * r > VL) vstoren(y1 + 2 * ix + VL, hi, 2 * r - VL);
            }
            if (act.f != KF_NONE) KV(fun_row)(y0, y0, (size_t)(2 * g->ow), act.f, act.a, act.b);
            continue;
        }
        for (int ky = 0; ky < kh; ky++) {
            float *yr = yp + (size_t)(iy * kh + ky) * g->ow;
            const float *xr = xg + (size_t)iy * g->w, *wr = wt + (size_t)ky * kw;
            for (int ix = 0; ix < g->w; ix += VL) {
                size_t r = g->w - ix < VL ? (size_t)(g->w - ix) : VL;
                V a0[CT_NC], a1[CT_NC];
#pragma GCC unroll 4
                for (int j = 0; j < NC; j++) a0[j] = a1[j] = vset1(bias ? bias[j] : 0.0f);
                for (int ic = 0; ic < cig; ic++) {
                    V xv = vloadn(xr + ic * hw + ix, r);
                    const float *wi = wr + ic * ws;
#pragma GCC unroll 4
                    for (int j = 0; j < NC; j++) {
                        a0[j] = vfma(xv, vset1(wi[j * taps]), a0[j]);
                        if (kw == 2) a1[j] = vfma(xv, vset1(wi[j * taps + 1]), a1[j]);
                    }
                }
#pragma GCC unroll 4
                for (int j = 0; j < NC; j++) {
                    float *yj = yr + j * ohw;
                    if (kw == 1) {
                        vstoren(yj + ix, a0[j], r);
                        continue;
                    }
                    V lo, hi;
                    vzip(a0[j], a1[j], lo, hi);
                    vstoren(yj + 2 * ix, lo, 2 * r < VL ? 2 * r : VL);
                    if (2 * r > VL) vstoren(yj + 2 * ix + VL, hi, 2 * r - VL);
                }
            }
            for (int j = 0; act.f != KF_NONE && j < NC; j++)
                KV(fun_row)(yr + j * ohw, yr + j * ohw, (size_t)g->ow, act.f, act.a, act.b);
        }
    }
}

/* ct_direct_n of nc (1 to CT_NC) planes. */
static void KV(ct_direct)(const kct_geom *g, const float *xg, const float *wt, const float *bias,
                          kact act, float *yp, int nc)
{
    if (nc >= 4) KV(ct_direct_n)(g, xg, wt, bias, act, yp, 4);
    else if (nc == 3) KV(ct_direct_n)(g, xg, wt, bias, act, yp, 3);
    else if (nc == 2) KV(ct_direct_n)(g, xg, wt, bias, act, yp, 2);
    else KV(ct_direct_n)(g, xg, wt, bias, act, yp, 1);
}

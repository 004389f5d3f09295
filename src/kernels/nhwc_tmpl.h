/* The NHWC depthwise convolution of one output row, for the ISA of the
 * vec_*.h included before (nhwc.c includes it once per ISA). Channels are
 * the vector axis; the row goes one vector of channels at a time (the
 * last masked), each over all its outputs, so the input it reads (kh rows
 * of w pixels, a vector each) stays in L1 from one output to the next
 * whatever the channel count. 3x3 and 5x5 at stride 1 or 2 (no dilation
 * along x) go DW_R (then DW_R / 2) outputs at a time over the whole row,
 * edges included (nhwc_dw_slide: each input pixel of a kernel row loaded
 * once for the block's outputs it feeds, pixels in the padding skipped,
 * the row's weights in registers; 8 outputs of a 5x5 at stride 2: 19
 * loads for 40 FMAs instead of 45), so a 7-wide row is one block of 8
 * chains instead of 7 outputs one at a time. Other kernels: the outputs
 * whose window lies inside the row ([lo, hi)) DW_R or DW_R / 2 at a time,
 * a load per tap and output, the others one at a time. */
#ifndef DW_R
#define DW_R 8
#endif

/* Output ox of the row, r channels at c (VL: a whole vector), any window:
 * the taps inside the image only. */
static inline void KV(nhwc_dw_px)(const knhwc_geom *g, const float *x, const float *wt,
                                  const float *bias, int64_t iy0, int64_t ky0, int64_t ky1,
                                  int64_t ox, int64_t c, size_t r, float *y)
{
    const int64_t C = g->cs, ix0 = ox * g->sw - g->pl;
    int64_t kx0, kx1;
    taps_inside(ix0, g->kw, g->dw, g->w, &kx0, &kx1);
    V a0 = bias ? vloadn(bias + c, r) : vzero(), a1 = vzero();
    for (int64_t ky = ky0; ky < ky1; ky++) {
        /* indices from the first tap inside: no pointer before x */
        const float *xr = x + ((iy0 + ky * g->dh) * g->w + ix0 + kx0 * g->dw) * C + c;
        const float *wr = wt + ky * g->kw * C + c;
        int64_t kx = kx0;
        for (; kx + 1 < kx1; kx += 2) { /* two chains */
            a0 = vfma(vloadn(xr + (kx - kx0) * g->dw * C, r), vloadn(wr + kx * C, r), a0);
            a1 = vfma(vloadn(xr + (kx + 1 - kx0) * g->dw * C, r), vloadn(wr + (kx + 1) * C, r), a1);
        }
        if (kx < kx1) a0 = vfma(vloadn(xr + (kx - kx0) * g->dw * C, r), vloadn(wr + kx * C, r), a0);
    }
    vstoren(y + ox * C + c, vadd(a0, a1), r);
}

/* One kernel row of KW taps (3 or 5) at stride S (1 or 2) into the R
 * accumulators a of adjacent outputs, the first's window from pixel ix0
 * of input row xr (pixels C apart, w of them): each input pixel loaded
 * once for the outputs it feeds, those outside the row skipped (the
 * padding), the weights (wr) in registers; each output's taps summed in
 * order. */
static inline __attribute__((always_inline)) void KV(nhwc_dw_slide)(const float *xr, int64_t ix0,
                                                                    int64_t w, const float *wr,
                                                                    int64_t C, size_t r, V *a,
                                                                    const int KW, const int R,
                                                                    const int S)
{
    V wv[5];
#pragma GCC unroll 5
    for (int kx = 0; kx < KW; kx++) wv[kx] = r == VL ? vload(wr + kx * C) : vloadn(wr + kx * C, r);
#pragma GCC unroll 24
    for (int p = 0; p < (R - 1) * S + KW; p++) {
        if ((uint64_t)(ix0 + p) >= (uint64_t)w) continue;
        const float *xp = xr + (ix0 + p) * C;
        const V xv = r == VL ? vload(xp) : vloadn(xp, r);
#pragma GCC unroll 8
        for (int j = 0; j < R; j++) {
            const int t = p - j * S;
            if (t >= 0 && t < KW) a[j] = vfma(xv, wv[t], a[j]);
        }
    }
}

/* r channels (VL: a whole vector, unmasked) at c of the n <= R outputs
 * from ox, by nhwc_dw_slide (any window: the taps inside the image only);
 * KW, R and S constants. */
static inline __attribute__((always_inline)) void
KV(nhwc_dw_blk)(const knhwc_geom *g, const float *x, const float *wt, const float *bias,
                int64_t iy0, int64_t ky0, int64_t ky1, int64_t ox, int64_t n, int64_t c, size_t r,
                float *y, const int KW, const int R, const int S)
{
    const int64_t C = g->cs, ix0 = ox * S - g->pl;
    V a[DW_R];
    a[0] = bias ? (r == VL ? vload(bias + c) : vloadn(bias + c, r)) : vzero();
#pragma GCC unroll 8
    for (int j = 1; j < R; j++) a[j] = a[0];
    for (int64_t ky = ky0; ky < ky1; ky++)
        KV(nhwc_dw_slide)(x + (iy0 + ky * g->dh) * g->w * C + c, ix0, g->w, wt + ky * KW * C + c, C, r,
                          a, KW, R, S);
    float *yp = y + ox * C + c;
#pragma GCC unroll 8
    for (int j = 0; j < R; j++) {
        if (j >= n) break;
        if (r == VL) vstore(yp + j * C, a[j]);
        else vstoren(yp + j * C, a[j], r);
    }
}

/* r channels at c of a whole output row by nhwc_dw_blk, DW_R outputs at a
 * time, DW_R / 2 for a short rest. */
static inline __attribute__((always_inline)) void
KV(nhwc_dw_blks)(const knhwc_geom *g, const float *x, const float *wt, const float *bias,
                 int64_t iy0, int64_t ky0, int64_t ky1, int64_t c, size_t r, float *y, const int KW,
                 const int S)
{
    for (int64_t ox = 0; ox < g->ow; ox += DW_R) {
        const int64_t n = g->ow - ox < DW_R ? g->ow - ox : DW_R;
        if (n > DW_R / 2) KV(nhwc_dw_blk)(g, x, wt, bias, iy0, ky0, ky1, ox, n, c, r, y, KW, DW_R, S);
        else KV(nhwc_dw_blk)(g, x, wt, bias, iy0, ky0, ky1, ox, n, c, r, y, KW, DW_R / 2, S);
    }
}

/* The row's r channels at c for 3x3 and 5x5 at stride 1 and 2 (mode 1 to
 * 4), whole vectors unmasked. */
static void KV(nhwc_dw_slides)(const knhwc_geom *g, const float *x, const float *wt,
                               const float *bias, int64_t iy0, int64_t ky0, int64_t ky1, int64_t c,
                               size_t r, float *y, int mode)
{
#define DW_SLIDE(RR)                                                                                     switch (mode) {                                                                                      case 1: KV(nhwc_dw_blks)(g, x, wt, bias, iy0, ky0, ky1, c, RR, y, 3, 1); break;                      case 2: KV(nhwc_dw_blks)(g, x, wt, bias, iy0, ky0, ky1, c, RR, y, 3, 2); break;                      case 3: KV(nhwc_dw_blks)(g, x, wt, bias, iy0, ky0, ky1, c, RR, y, 5, 1); break;                      default: KV(nhwc_dw_blks)(g, x, wt, bias, iy0, ky0, ky1, c, RR, y, 5, 2); break;                     }
    if (r == VL) {
        DW_SLIDE(VL)
    } else {
        DW_SLIDE(r)
    }
#undef DW_SLIDE
}

/* r channels (VL: a whole vector, unmasked) at c of outputs [ox, ox + R)
 * (R <= DW_R), every tap inside the row, a load per tap and output (any
 * kernel, stride and dilation); KW and R are constants. */
static inline __attribute__((always_inline)) void
KV(nhwc_dw_vec)(const knhwc_geom *g, const float *x, const float *wt, const float *bias,
                int64_t iy0, int64_t ky0, int64_t ky1, int64_t ox, int64_t c, size_t r, float *y,
                const int64_t KW, const int R)
{
    const int64_t C = g->cs, sx = g->sw * C, dx = g->dw * C;
    const float *x0 = x + (ox * g->sw - g->pl) * C + c;
    V a[DW_R];
    a[0] = bias ? (r == VL ? vload(bias + c) : vloadn(bias + c, r)) : vzero();
#pragma GCC unroll 8
    for (int j = 1; j < R; j++) a[j] = a[0];
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *xr = x0 + (iy0 + ky * g->dh) * g->w * C;
        const float *wr = wt + ky * KW * C + c;
        for (int64_t kx = 0; kx < KW; kx++) {
            const V w = r == VL ? vload(wr + kx * C) : vloadn(wr + kx * C, r);
            const float *xp = xr + kx * dx;
#pragma GCC unroll 8
            for (int j = 0; j < R; j++)
                a[j] = vfma(r == VL ? vload(xp + j * sx) : vloadn(xp + j * sx, r), w, a[j]);
        }
    }
    float *yp = y + ox * C + c;
#pragma GCC unroll 8
    for (int j = 0; j < R; j++) {
        if (r == VL) vstore(yp + j * C, a[j]);
        else vstoren(yp + j * C, a[j], r);
    }
}

/* Outputs [ox, ox + R) by nhwc_dw_vec, any kernel. */
static void KV(nhwc_dw_run)(const knhwc_geom *g, const float *x, const float *wt, const float *bias,
                            int64_t iy0, int64_t ky0, int64_t ky1, int64_t ox, int64_t c, size_t r,
                            float *y, int R)
{
    if (R == DW_R) KV(nhwc_dw_vec)(g, x, wt, bias, iy0, ky0, ky1, ox, c, r, y, g->kw, DW_R);
    else KV(nhwc_dw_vec)(g, x, wt, bias, iy0, ky0, ky1, ox, c, r, y, g->kw, DW_R / 2);
}

static void KV(nhwc_dw_row)(const knhwc_geom *g, const float *x, const float *wt, const float *bias,
                            int64_t oy, int64_t lo, int64_t hi, kact act, const float *res, float *y,
                            float *sums)
{
    const int64_t C = g->cs, iy0 = oy * g->sh - g->pt;
    int64_t ky0, ky1;
    taps_inside(iy0, g->kh, g->dh, g->h, &ky0, &ky1);
    const bool slide = g->dw == 1 && (g->sw == 1 || g->sw == 2);
    const int mode = !slide ? 0 : g->kw == 3 ? (int)g->sw : g->kw == 5 ? 2 + (int)g->sw : 0;
    for (int64_t c = 0; c < C; c += VL) {
        const size_t r = (size_t)(C - c) < VL ? (size_t)(C - c) : VL;
        if (mode) {
            KV(nhwc_dw_slides)(g, x, wt, bias, iy0, ky0, ky1, c, r, y, mode);
            continue;
        }
        for (int64_t ox = 0; ox < g->ow;) {
            const int R = ox < lo ? 0 : ox + DW_R <= hi ? DW_R : ox + DW_R / 2 <= hi ? DW_R / 2 : 0;
            if (R) KV(nhwc_dw_run)(g, x, wt, bias, iy0, ky0, ky1, ox, c, r, y, R);
            else KV(nhwc_dw_px)(g, x, wt, bias, iy0, ky0, ky1, ox, c, r, y);
            ox += R ? R : 1;
        }
    }
    size_t total = (size_t)(g->ow * C);
    if (act.f != KF_NONE) KV(fun_row)(y, y, total, act.f, act.a, act.b);
    if (res) {
        size_t k = 0;
        for (; k + VL <= total; k += VL) vstore(y + k, vadd(vload(y + k), vload(res + k)));
        for (; k < total; k++) y[k] += res[k];
    }
    for (int64_t c = 0; sums && c < C; c += VL) { /* the row's channel sums, from L1 */
        size_t r = (size_t)(C - c) < VL ? (size_t)(C - c) : VL;
        V s = vzero();
        for (int64_t ox = 0; ox < g->ow; ox++) s = vadd(s, vloadn(y + ox * C + c, r));
        vstoren(sums + c, s, r);
    }
}

/* v (act none, relu or clip: lo, hi) to r uint8 at p as qg_requant_u8
 * makes them of the floats: sat(rint(v * r8) + z8). */
static inline void KV(dwq_out)(uint8_t *p, V v, size_t r, V lo, V hi, V r8, V z8)
{
    v = vmin(vmax(v, lo), hi);
    vstoren_u8(p, vmin(vmax(vadd(vround(vmul(v, r8)), z8), vzero()), vset1(255.0f)), r);
}

/* Four adjacent output pixels of a 3-tap kernel row at stride S (1 or 2),
 * all taps inside: each input pixel of the row (xr the first, C apart)
 * widened to float once for the outputs it feeds (S 1: 6 for 12 products,
 * S 2: 9 for 12), the row's three weights in registers. */
static inline __attribute__((always_inline)) void KV(dwq_row4)(const uint8_t *xr, int64_t C, int S,
                                                               const float *wr, V vz, V acc[4])
{
    const V w0 = vload(wr), w1 = vload(wr + C), w2 = vload(wr + 2 * C);
    _Pragma("GCC unroll 9") for (int p = 0; p < 3 * S + 3; p++) {
        const V xv = vsub(vload_u8(xr + p * C), vz);
        _Pragma("GCC unroll 4") for (int o = 0; o < 4; o++) {
            const int t = p - o * S;
            if (t == 0) acc[o] = vfma(xv, w0, acc[o]);
            if (t == 1) acc[o] = vfma(xv, w1, acc[o]);
            if (t == 2) acc[o] = vfma(xv, w2, acc[o]);
        }
    }
}

/* The full channel blocks of output pixels [ox0, ox0 + 4 * nb) of row oy,
 * every tap inside along x, by KV(dwq_row4); the same integer sums as
 * KV(nhwc_dwq_row)'s per-pixel loop, so the same floats and bytes. */
static void KV(dwq_blocks)(const knhwc_geom *g, const uint8_t *x, V vz, const float *wq,
                           const float *scale, const float *bias, int64_t iy0, int64_t ky0,
                           int64_t ky1, int64_t ox0, int64_t nb, float *y, uint8_t *yq, V lo, V hi,
                           V vr, V vz8)
{
    const int64_t C = g->cs;
    for (int64_t c = 0; c + VL <= C; c += VL) {
        const V sc = vload(scale + c), bi = bias ? vload(bias + c) : vzero();
        for (int64_t b = 0; b < nb; b++) {
            const int64_t ox = ox0 + 4 * b, ix0 = ox * g->sw - g->pl;
            V acc[4] = {vzero(), vzero(), vzero(), vzero()};
            for (int64_t ky = ky0; ky < ky1; ky++) {
                const uint8_t *xr = x + ((iy0 + ky * g->dh) * g->w + ix0) * C + c;
                const float *wr = wq + ky * 3 * C + c;
                if (g->sw == 1)
                    KV(dwq_row4)(xr, C, 1, wr, vz, acc);
                else
                    KV(dwq_row4)(xr, C, 2, wr, vz, acc);
            }
            _Pragma("GCC unroll 4") for (int o = 0; o < 4; o++) {
                const V v = vfma(acc[o], sc, bi);
                if (yq)
                    KV(dwq_out)(yq + (ox + o) * C + c, v, VL, lo, hi, vr, vz8);
                else
                    vstore(y + (ox + o) * C + c, v);
            }
        }
    }
}

/* The int8 depthwise convolution of one output row (knhwc_dw_u8): x
 * uint8 at zero point xz, wq the int8 weights [tap][c] held as floats.
 * Each sum of (x - xz) * wq is an integer computed exactly in float lanes
 * (|x - xz| <= 255, |wq| <= 128, at most KDW_U8_TAPS taps: below 2^24), as
 * an int32 accumulation would; then y = act(sum * scale[c] + bias[c]),
 * the floats y, or with yq (act none, relu or clip: the caller's choice)
 * uint8 yq as KV(dwq_out) makes them, from the registers. */
static void KV(nhwc_dwq_row)(const knhwc_geom *g, const uint8_t *x, float xz, const float *wq,
                             const float *scale, const float *bias, int64_t oy, kact act, float *y,
                             uint8_t *yq, float r8, float z8)
{
    const int64_t C = g->cs, iy0 = oy * g->sh - g->pt;
    const V vz = vset1(xz), vr = vset1(r8), vz8 = vset1(z8);
    const V lo = vset1(act.f == KF_CLIP ? act.a : act.f == KF_RELU ? 0.0f : -INFINITY);
    const V hi = vset1(act.f == KF_CLIP ? act.b : INFINITY);
    int64_t ky0, ky1;
    taps_inside(iy0, g->kh, g->dh, g->h, &ky0, &ky1);
    /* 3 taps along x at stride 1 or 2: the output pixels whose taps are all
     * inside, four at a time, by KV(dwq_blocks) (their full channel blocks;
     * the loop below does the rest) */
    int64_t fa = 0, fb = 0; /* those pixels: [fa, fb) */
    if (g->kw == 3 && g->dw == 1 && (g->sw == 1 || g->sw == 2) && C >= VL) {
        fa = (g->pl + g->sw - 1) / g->sw;          /* the first with ix0 >= 0 */
        int64_t last = (g->w - 3 + g->pl) / g->sw; /* the last with ix0 + 2 < w */
        last = g->w >= 3 && last >= g->ow ? g->ow - 1 : last;
        fb = g->w >= 3 && last >= fa ? fa + (last + 1 - fa) / 4 * 4 : fa;
        if (fb > fa)
            KV(dwq_blocks)(g, x, vz, wq, scale, bias, iy0, ky0, ky1, fa, (fb - fa) / 4, y, yq, lo,
                           hi, vr, vz8);
    }
    for (int64_t ox = 0; ox < g->ow; ox++) {
        const int64_t ix0 = ox * g->sw - g->pl;
        int64_t kx0, kx1;
        taps_inside(ix0, g->kw, g->dw, g->w, &kx0, &kx1);
        float *yp = y + ox * C;
        int64_t c = ox >= fa && ox < fb ? C / VL * VL : 0;
        for (; c + 2 * VL <= C; c += 2 * VL) {
            V a0 = vzero(), a1 = vzero();
            for (int64_t ky = ky0; ky < ky1; ky++) {
                const uint8_t *xr = x + ((iy0 + ky * g->dh) * g->w + ix0 + kx0 * g->dw) * C + c;
                const float *wr = wq + ky * g->kw * C + c;
                for (int64_t kx = kx0; kx < kx1; kx++) {
                    const uint8_t *xp = xr + (kx - kx0) * g->dw * C;
                    const float *wp = wr + kx * C;
                    a0 = vfma(vsub(vload_u8(xp), vz), vload(wp), a0);
                    a1 = vfma(vsub(vload_u8(xp + VL), vz), vload(wp + VL), a1);
                }
            }
            V v0 = vfma(a0, vload(scale + c), bias ? vload(bias + c) : vzero());
            V v1 = vfma(a1, vload(scale + c + VL), bias ? vload(bias + c + VL) : vzero());
            if (yq) {
                KV(dwq_out)(yq + ox * C + c, v0, VL, lo, hi, vr, vz8);
                KV(dwq_out)(yq + ox * C + c + VL, v1, VL, lo, hi, vr, vz8);
                continue;
            }
            vstore(yp + c, v0);
            vstore(yp + c + VL, v1);
        }
        for (; c < C; c += VL) {
            size_t r = (size_t)(C - c) < VL ? (size_t)(C - c) : VL;
            V a0 = vzero();
            for (int64_t ky = ky0; ky < ky1; ky++) {
                const uint8_t *xr = x + ((iy0 + ky * g->dh) * g->w + ix0 + kx0 * g->dw) * C + c;
                const float *wr = wq + ky * g->kw * C + c;
                for (int64_t kx = kx0; kx < kx1; kx++) {
                    uint8_t t[VL] = {0}; /* a short tail: no byte read past the row */
                    memcpy(t, xr + (kx - kx0) * g->dw * C, r);
                    a0 = vfma(vsub(vload_u8(t), vz), vloadn(wr + kx * C, r), a0);
                }
            }
            V v0 = vfma(a0, vloadn(scale + c, r), bias ? vloadn(bias + c, r) : vzero());
            if (yq)
                KV(dwq_out)(yq + ox * C + c, v0, r, lo, hi, vr, vz8);
            else
                vstoren(yp + c, v0, r);
        }
    }
    if (!yq && act.f != KF_NONE) KV(fun_row)(y, y, (size_t)(g->ow * C), act.f, act.a, act.b);
}

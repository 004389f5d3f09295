/* The NHWC depthwise convolution of one output row, for the ISA of the
 * vec_*.h included before (nhwc.c includes it once per ISA). Channels are
 * the vector axis. Outputs whose window lies inside the row ([lo, hi)) go
 * DW_R (then DW_R / 2) at a time, each tap's weights loaded once for them
 * (as many independent FMA chains); the others one at a time: four
 * vectors, then one, then a masked tail. A 5x5 at stride 1 or 2, a 3x3
 * at stride 1, and a 3x3 at stride 2 on rows of at most 8 outputs (no
 * dilation along x: dw_slides in nhwc.c), instead go
 * a vector of channels at a time over the whole row, edges included, DW_R
 * outputs at a time (nhwc_dw_slide: each input pixel of a kernel row
 * loaded once for the outputs it feeds, the row's weights in registers,
 * pixels in the padding skipped): a 7-wide row is one block of 8 chains
 * instead of 7 outputs one at a time, a 14-wide two. bench-dw-native: on
 * the Ice Lake, 0.5 to 0.9 of the per-tap path's CPU time on the 5x5s at
 * stride 1, the 3x3s and stride 2 no faster; on the Zen 5 (bench/RESULTS.md,
 * branch c13) the 5x5s at stride 2 0.6 to 0.85 (two outputs share three of
 * a row's five pixels), the 3x3s at stride 1 0.65 to 0.9 on rows up to 28
 * wide and level to 0.9 on the wider; 3x3s at stride 2 no faster. Two
 * output rows of a 3x3 at stride 2 per pass (the pair's middle input row
 * loaded once for both, 16 accumulators) measured 0.92 to 0.97 on 320x320
 * and 160x160 planes and 1.07 to 1.27x slower on 56x56 to 112x112 of 64 to
 * 144 channels (branch dw): not kept. */
#ifndef DW_R
#define DW_R 8
#endif

/* Output ox of the row, any window: the taps inside the image only. */
static inline void KV(nhwc_dw_px)(const knhwc_geom *g, const float *x, const float *wt,
                                  const float *bias, int64_t iy0, int64_t ky0, int64_t ky1,
                                  int64_t ox, float *yp)
{
    const int64_t C = g->cs, ix0 = ox * g->sw - g->pl;
    int64_t kx0, kx1;
    taps_inside(ix0, g->kw, g->dw, g->w, &kx0, &kx1);
    int64_t c = 0;
    for (; c + 4 * VL <= C; c += 4 * VL) {
        V a0 = bias ? vload(bias + c) : vzero(), a1 = bias ? vload(bias + c + VL) : vzero();
        V a2 = bias ? vload(bias + c + 2 * VL) : vzero(), a3 = bias ? vload(bias + c + 3 * VL) : vzero();
        for (int64_t ky = ky0; ky < ky1; ky++) {
            /* indices from the first tap inside: no pointer before x */
            const float *xr = x + ((iy0 + ky * g->dh) * g->w + ix0 + kx0 * g->dw) * C + c;
            const float *wr = wt + ky * g->kw * C + c;
            for (int64_t kx = kx0; kx < kx1; kx++) {
                const float *xp = xr + (kx - kx0) * g->dw * C, *wp = wr + kx * C;
                a0 = vfma(vload(xp), vload(wp), a0);
                a1 = vfma(vload(xp + VL), vload(wp + VL), a1);
                a2 = vfma(vload(xp + 2 * VL), vload(wp + 2 * VL), a2);
                a3 = vfma(vload(xp + 3 * VL), vload(wp + 3 * VL), a3);
            }
        }
        vstore(yp + c, a0);
        vstore(yp + c + VL, a1);
        vstore(yp + c + 2 * VL, a2);
        vstore(yp + c + 3 * VL, a3);
    }
    for (; c < C; c += VL) {
        size_t r = (size_t)(C - c) < VL ? (size_t)(C - c) : VL;
        V a0 = bias ? vloadn(bias + c, r) : vzero();
        for (int64_t ky = ky0; ky < ky1; ky++) {
            const float *xr = x + ((iy0 + ky * g->dh) * g->w + ix0 + kx0 * g->dw) * C + c;
            const float *wr = wt + ky * g->kw * C + c;
            for (int64_t kx = kx0; kx < kx1; kx++)
                a0 = vfma(vloadn(xr + (kx - kx0) * g->dw * C, r), vloadn(wr + kx * C, r), a0);
        }
        vstoren(yp + c, a0, r);
    }
}

/* r channels (VL: a whole vector, unmasked) at c of outputs [ox, ox + R)
 * (R <= DW_R), every tap inside the row; KW and R are constants. */
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
#pragma GCC unroll 5
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

static inline __attribute__((always_inline)) void
KV(nhwc_dw_blk)(const knhwc_geom *g, const float *x, const float *wt, const float *bias,
                int64_t iy0, int64_t ky0, int64_t ky1, int64_t ox, float *y, const int64_t KW,
                const int R)
{
    const int64_t C = g->cs;
    int64_t c = 0;
    for (; c + VL <= C; c += VL) KV(nhwc_dw_vec)(g, x, wt, bias, iy0, ky0, ky1, ox, c, VL, y, KW, R);
    if (c < C) KV(nhwc_dw_vec)(g, x, wt, bias, iy0, ky0, ky1, ox, c, (size_t)(C - c), y, KW, R);
}

/* Outputs [ox, ox + R) by nhwc_dw_blk, for 3x3, 5x5 and other kernels. */
static void KV(nhwc_dw_run)(const knhwc_geom *g, const float *x, const float *wt, const float *bias,
                            int64_t iy0, int64_t ky0, int64_t ky1, int64_t ox, float *y, int R)
{
    if (R == DW_R) {
        if (g->kw == 3) KV(nhwc_dw_blk)(g, x, wt, bias, iy0, ky0, ky1, ox, y, 3, DW_R);
        else if (g->kw == 5) KV(nhwc_dw_blk)(g, x, wt, bias, iy0, ky0, ky1, ox, y, 5, DW_R);
        else KV(nhwc_dw_blk)(g, x, wt, bias, iy0, ky0, ky1, ox, y, g->kw, DW_R);
    } else {
        if (g->kw == 3) KV(nhwc_dw_blk)(g, x, wt, bias, iy0, ky0, ky1, ox, y, 3, DW_R / 2);
        else if (g->kw == 5) KV(nhwc_dw_blk)(g, x, wt, bias, iy0, ky0, ky1, ox, y, 5, DW_R / 2);
        else KV(nhwc_dw_blk)(g, x, wt, bias, iy0, ky0, ky1, ox, y, g->kw, DW_R / 2);
    }
}

/* One kernel row of KW taps (3 or 5) at stride S (1 or 2) into the R
 * accumulators a of adjacent outputs, the first's window from pixel ix0
 * of input row xr (pixels C apart, w of them): each input pixel loaded
 * once for the outputs it feeds, the weights (wr) in registers; each
 * output's taps summed in order. EDGE (a constant): some pixels may lie
 * outside the row (the padding), skipped; else none is. */
static inline __attribute__((always_inline)) void KV(nhwc_dw_slide)(const float *xr, int64_t ix0,
                                                                    int64_t w, const float *wr,
                                                                    int64_t C, size_t r, V *a,
                                                                    const int KW, const int R,
                                                                    const int S, const int EDGE)
{
    V wv[5];
#pragma GCC unroll 5
    for (int kx = 0; kx < KW; kx++) wv[kx] = r == VL ? vload(wr + kx * C) : vloadn(wr + kx * C, r);
    /* from the first pixel inside, advanced past each one loaded: no
     * pointer before the row */
    const float *xp = xr + (EDGE && ix0 < 0 ? 0 : ix0) * C;
#pragma GCC unroll 24
    for (int p = 0; p < (R - 1) * S + KW; p++) {
        if (EDGE && (uint64_t)(ix0 + p) >= (uint64_t)w) continue;
        const V xv = r == VL ? vload(xp) : vloadn(xp, r);
        xp += C;
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
KV(nhwc_dw_sblk)(const knhwc_geom *g, const float *x, const float *wt, const float *bias,
                int64_t iy0, int64_t ky0, int64_t ky1, int64_t ox, int64_t n, int64_t c, size_t r,
                float *y, const int KW, const int R, const int S)
{
    const int64_t C = g->cs, ix0 = ox * S - g->pl;
    const bool edge = ix0 < 0 || ix0 + (R - 1) * S + KW > g->w;
    V a[DW_R];
    a[0] = bias ? (r == VL ? vload(bias + c) : vloadn(bias + c, r)) : vzero();
#pragma GCC unroll 8
    for (int j = 1; j < R; j++) a[j] = a[0];
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *xr = x + (iy0 + ky * g->dh) * g->w * C + c, *wr = wt + ky * KW * C + c;
        if (edge) KV(nhwc_dw_slide)(xr, ix0, g->w, wr, C, r, a, KW, R, S, 1);
        else KV(nhwc_dw_slide)(xr, ix0, g->w, wr, C, r, a, KW, R, S, 0);
    }
    float *yp = y + ox * C + c;
#pragma GCC unroll 8
    for (int j = 0; j < R; j++) {
        if (j >= n) break;
        if (r == VL) vstore(yp + j * C, a[j]);
        else vstoren(yp + j * C, a[j], r);
    }
}

/* r channels at c of the n <= DW_R outputs from ox by nhwc_dw_sblk (DW_R
 * / 2 of them when n is), whole vectors unmasked: a 5x5 at stride 1 or 2,
 * or a 3x3 at stride 1 or 2 (dw_slides says which rows). */
#define DW_SLIDES(KW, S)                                                                           \
    do {                                                                                           \
        if (n > DW_R / 2 && r == VL)                                                               \
            KV(nhwc_dw_sblk)(g, x, wt, bias, iy0, ky0, ky1, ox, n, c, VL, y, KW, DW_R, S);         \
        else if (n > DW_R / 2)                                                                     \
            KV(nhwc_dw_sblk)(g, x, wt, bias, iy0, ky0, ky1, ox, n, c, r, y, KW, DW_R, S);          \
        else if (r == VL)                                                                          \
            KV(nhwc_dw_sblk)(g, x, wt, bias, iy0, ky0, ky1, ox, n, c, VL, y, KW, DW_R / 2, S);     \
        else                                                                                       \
            KV(nhwc_dw_sblk)(g, x, wt, bias, iy0, ky0, ky1, ox, n, c, r, y, KW, DW_R / 2, S);      \
    } while (0)
static void KV(nhwc_dw_slides)(const knhwc_geom *g, const float *x, const float *wt,
                               const float *bias, int64_t iy0, int64_t ky0, int64_t ky1, int64_t ox,
                               int64_t n, int64_t c, size_t r, float *y)
{
    if (g->kw == 3 && g->sw == 2) DW_SLIDES(3, 2);
    else if (g->kw == 3) DW_SLIDES(3, 1);
    else if (g->sw == 1) DW_SLIDES(5, 1);
    else DW_SLIDES(5, 2);
}
#undef DW_SLIDES

static void KV(nhwc_dw_row)(const knhwc_geom *g, const float *x, const float *wt, const float *bias,
                            int64_t oy, int64_t lo, int64_t hi, kact act, const float *res, float *y,
                            float *sums)
{
    const int64_t C = g->cs, iy0 = oy * g->sh - g->pt;
    int64_t ky0, ky1;
    taps_inside(iy0, g->kh, g->dh, g->h, &ky0, &ky1);
    const bool slide = dw_slides(g);
    for (int64_t c = 0; slide && c < C; c += VL)
        for (int64_t ox = 0; ox < g->ow; ox += DW_R)
            KV(nhwc_dw_slides)(g, x, wt, bias, iy0, ky0, ky1, ox, g->ow - ox < DW_R ? g->ow - ox : DW_R, c,
                               (size_t)(C - c) < VL ? (size_t)(C - c) : VL, y);
    for (int64_t ox = 0; !slide && ox < g->ow;) {
        const int R = ox < lo ? 0 : ox + DW_R <= hi ? DW_R : ox + DW_R / 2 <= hi ? DW_R / 2 : 0;
        if (R) KV(nhwc_dw_run)(g, x, wt, bias, iy0, ky0, ky1, ox, y, R);
        else KV(nhwc_dw_px)(g, x, wt, bias, iy0, ky0, ky1, ox, y + ox * C);
        ox += R ? R : 1;
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
 * S 2: 9 for 12), the row's three weights in registers. The sums are of
 * x * wq, the zero point's part taken out once per block (KV(dwq_blocks)). */
static inline __attribute__((always_inline)) void KV(dwq_row4)(const uint8_t *xr, int64_t C, int S,
                                                               const float *wr, V acc[4])
{
    const V w0 = vload(wr), w1 = vload(wr + C), w2 = vload(wr + 2 * C);
    _Pragma("GCC unroll 9") for (int p = 0; p < 3 * S + 3; p++) {
        const V xv = vload_u8(xr + p * C);
        _Pragma("GCC unroll 4") for (int o = 0; o < 4; o++) {
            const int t = p - o * S;
            if (t == 0) acc[o] = vfma(xv, w0, acc[o]);
            if (t == 1) acc[o] = vfma(xv, w1, acc[o]);
            if (t == 2) acc[o] = vfma(xv, w2, acc[o]);
        }
    }
}

/* The full channel blocks of output pixels [ox0, ox0 + 4 * nb) of row oy,
 * every tap inside along x, by KV(dwq_row4): sum x * wq - xz * sum wq over
 * the taps inside, each exact in float (|x * wq| <= 255 * 128, at most
 * KDW_U8_TAPS taps: below 2^24), so the same integer as KV(nhwc_dwq_row)'s
 * per-pixel loop's sum of (x - xz) * wq, the same floats and bytes, one
 * subtraction per pixel fewer in the inner loop. */
static void KV(dwq_blocks)(const knhwc_geom *g, const uint8_t *x, V vz, const float *wq,
                           const float *scale, const float *bias, int64_t iy0, int64_t ky0,
                           int64_t ky1, int64_t ox0, int64_t nb, float *y, uint8_t *yq, V lo, V hi,
                           V vr, V vz8)
{
    const int64_t C = g->cs;
    for (int64_t c = 0; c + VL <= C; c += VL) {
        const V sc = vload(scale + c), bi = bias ? vload(bias + c) : vzero();
        V ws = vzero(); /* the taps' weights inside, summed: xz * ws is the zero point's part */
        for (int64_t ky = ky0; ky < ky1; ky++) {
            const float *wr = wq + ky * 3 * C + c;
            ws = vadd(ws, vadd(vadd(vload(wr), vload(wr + C)), vload(wr + 2 * C)));
        }
        const V zs = vmul(vz, ws);
        for (int64_t b = 0; b < nb; b++) {
            const int64_t ox = ox0 + 4 * b, ix0 = ox * g->sw - g->pl;
            V acc[4] = {vzero(), vzero(), vzero(), vzero()};
            for (int64_t ky = ky0; ky < ky1; ky++) {
                const uint8_t *xr = x + ((iy0 + ky * g->dh) * g->w + ix0) * C + c;
                const float *wr = wq + ky * 3 * C + c;
                if (g->sw == 1)
                    KV(dwq_row4)(xr, C, 1, wr, acc);
                else
                    KV(dwq_row4)(xr, C, 2, wr, acc);
            }
            _Pragma("GCC unroll 4") for (int o = 0; o < 4; o++) {
                const V v = vfma(vsub(acc[o], zs), sc, bi);
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
 * uint8 yq as KV(dwq_out) makes them, from the registers. wv: the weights
 * packed by knhwc_dwq3_pack for the AVX-512 instance's VNNI interior, or NULL. */
static void KV(nhwc_dwq_row)(const knhwc_geom *g, const uint8_t *x, float xz, const float *wq,
                             const int32_t *wv, const float *scale, const float *bias, int64_t oy,
                             kact act, float *y, uint8_t *yq, float r8, float z8)
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
        if (KISA_HERE == KISA_AVX512 && g->kh == 3 && knhwc_dwq3_vnni_ok()) {
            fa = 0, fb = g->ow; /* every pixel's full channel blocks, in vpdpbusd (nhwc_dwq.h) */
            knhwc_dwq3_vnni(g, x, (int32_t)xz, wq, wv, scale, bias, iy0, ky0, ky1, fa, fb, y, yq,
                            act.f == KF_CLIP ? act.a : act.f == KF_RELU ? 0.0f : -INFINITY,
                            act.f == KF_CLIP ? act.b : INFINITY, r8, z8);
        } else if (fb > fa)
            KV(dwq_blocks)(g, x, vz, wq, scale, bias, iy0, ky0, ky1, fa, (fb - fa) / 4, y, yq, lo,
                           hi, vr, vz8);
    }
    /* the pixels and channels left: none when [fa, fb) is the row and C whole vectors */
    for (int64_t ox = fa == 0 && fb == g->ow && C % VL == 0 ? g->ow : 0; ox < g->ow; ox++) {
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

/* ap[j] = xo[off[j]] for j < k (knhwc_im2col_nchw's windows inside the
 * image: a row of A gathered from the planes, VL elements at a time). */
static void KV(nhwc_gather_row)(const float *xo, const int32_t *off, int64_t k, float *ap)
{
    int64_t j = 0;
    for (; j + VL <= k; j += VL) vstore(ap + j, vgathern(xo, off + j, VL));
    if (j < k) vstoren(ap + j, vgathern(xo, off + j, (size_t)(k - j)), (size_t)(k - j));
}

/* y[j][i] = x[i][j] for one VL x VL tile (x's rows ldx floats apart, y's
 * ldy): log2(VL) rounds of interleaving row i with row i + VL/2 (each round
 * rotates the bits of (row, column) by one: after log2(VL) rounds, (column,
 * row)), all in registers. */
static void KV(nhwc_tr_tile)(const float *x, int64_t ldx, float *y, int64_t ldy)
{
    V r[VL], t[VL];
#pragma GCC unroll 16
    for (int i = 0; i < VL; i++) r[i] = vload(x + i * ldx);
#pragma GCC unroll 4
    for (int n = 1; n < VL; n *= 2) {
#pragma GCC unroll 8
        for (int i = 0; i < VL / 2; i++) vzip(r[i], r[i + VL / 2], t[2 * i], t[2 * i + 1]);
#pragma GCC unroll 16
        for (int i = 0; i < VL; i++) r[i] = t[i];
    }
#pragma GCC unroll 16
    for (int i = 0; i < VL; i++) vstore(y + i * ldy, r[i]);
}

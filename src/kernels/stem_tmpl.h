/* kstem_conv (stem.h) for the ISA of the vec_*.h included before (stem.c
 * includes it once per ISA). Vectors run along the output channels of a
 * panel; the taps' weight vectors stay in registers for a row of output
 * pixels, which go STEM_R at a time (as many independent FMA chains, each
 * input value broadcast once for its pixel). */
#ifndef STEM_R
#define STEM_R 4
#endif
/* The blocked path (stem_tile): up to STEM_NV whole vectors of channels
 * at once, their weights read from L1 per tap, each input value broadcast
 * once for all of them; accumulators per ISA (STEM_ACC: 24 of 32 zmm, 12 of
 * 16 ymm), so R = STEM_ACC / nv pixels a tile. */
#ifndef STEM_NV
#define STEM_NV 4
#endif
#undef STEM_ACC
#define STEM_ACC (VL == 8 ? 12 : 24)
/* The tiles' loops unrolled (taps, pixels, vectors); in the sanitizer
 * build not: the same loads and stores, each checked, but ASan and UBSan's
 * checks on every unrolled copy made this file 307 of that build's CPU
 * seconds (57 without the unrolling), its longest compile by far. */
#ifndef STEM_UNROLL
#define STEM_UNROLL_(x) _Pragma(#x)
#if defined(__SANITIZE_ADDRESS__)
#define STEM_UNROLL(n) STEM_UNROLL_(GCC unroll 1)
#else
#define STEM_UNROLL(n) STEM_UNROLL_(GCC unroll n)
#endif
#endif

/* Outputs [ox, ox + R) of row oy, r channels (VL: unmasked) of w's panel
 * at cw, every tap inside the image; T = c * kh * kw taps in wv (T, R, KW
 * and CI constants where the caller makes them so). */
static inline __attribute__((always_inline)) void
KV(stem_blk)(const knhwc_geom *g, const float *x, const V *wv, V b, int64_t oy, int64_t ox,
             float *y, int64_t ldy, size_t r, kact act, const int T, const int R, const int KW,
             const int CI)
{
    const int64_t plane = g->h * g->w, iy0 = oy * g->sh - g->pt, ix0 = ox * g->sw - g->pl;
    V a[STEM_R];
    STEM_UNROLL(8)
    for (int j = 0; j < R; j++) a[j] = b;
    STEM_UNROLL(32)
    for (int t = 0; t < T; t++) {
        const int ci = t % CI, kx = (t / CI) % KW, ky = t / CI / KW;
        const float *xp = x + (g->c0 + ci) * plane + (iy0 + ky * g->dh) * g->w + ix0 + kx * g->dw;
        STEM_UNROLL(8)
        for (int j = 0; j < R; j++) a[j] = vfma(vset1(xp[j * g->sw]), wv[t], a[j]);
    }
    STEM_UNROLL(8)
    for (int j = 0; j < R; j++) {
        V v = KV(vfun)(a[j], act.f, act.a, act.b);
        if (r == VL) vstore(y + (ox + j) * ldy, v);
        else vstoren(y + (ox + j) * ldy, v, r);
    }
}

/* Output ox of row oy, any window: the taps inside the image only, for NV
 * vectors of channels at once (NV independent chains; the last vector's r
 * channels, VL: whole). */
static inline __attribute__((always_inline)) void
KV(stem_pxn)(const knhwc_geom *g, const float *x, const V *wv, const V *b, int64_t oy, int64_t ox, float *y,
             int64_t ldy, size_t r, kact act, const int NV)
{
    const int64_t plane = g->h * g->w, iy0 = oy * g->sh - g->pt, ix0 = ox * g->sw - g->pl;
    V a[STEM_NV];
    STEM_UNROLL(4)
    for (int v = 0; v < NV; v++) a[v] = b[v];
    for (int64_t ky = 0; ky < g->kh; ky++) {
        const int64_t iy = iy0 + ky * g->dh;
        if ((uint64_t)iy >= (uint64_t)g->h) continue;
        for (int64_t kx = 0; kx < g->kw; kx++) {
            const int64_t ix = ix0 + kx * g->dw;
            if ((uint64_t)ix >= (uint64_t)g->w) continue;
            for (int64_t ci = 0; ci < g->c; ci++) {
                const V xv = vset1(x[(g->c0 + ci) * plane + iy * g->w + ix]);
                const int64_t t = (ky * g->kw + kx) * g->c + ci;
                STEM_UNROLL(4)
                for (int v = 0; v < NV; v++) a[v] = vfma(xv, wv[v * KSTEM_TAPS + t], a[v]);
            }
        }
    }
    STEM_UNROLL(4)
    for (int v = 0; v < NV; v++) {
        const V o = KV(vfun)(a[v], act.f, act.a, act.b);
        if (v + 1 < NV || r == VL) vstore(y + ox * ldy + v * VL, o);
        else vstoren(y + ox * ldy + v * VL, o, r);
    }
}

/* Rows [oy0, oy1) of the output for r channels whose weights are wp (the
 * panel's column, kdim rows nr apart) and bias bp, y at those channels;
 * [lo, hi): the outputs whose window lies inside along x. */
static inline __attribute__((always_inline)) void
KV(stem_rows_t)(const knhwc_geom *g, const float *x, const float *wp, int nr, const float *bp,
                kact act, float *y, int64_t ldy, size_t r, int64_t oy0, int64_t oy1, int64_t lo,
                int64_t hi, const int T, const int KW, const int CI)
{
    V wv[KSTEM_TAPS];
    for (int t = 0; t < T; t++) wv[t] = r == VL ? vload(wp + t * nr) : vloadn(wp + t * nr, r);
    const V b = bp ? (r == VL ? vload(bp) : vloadn(bp, r)) : vzero();
    for (int64_t oy = oy0; oy < oy1; oy++) {
        float *yr = y + oy * g->ow * ldy;
        const int64_t iy0 = oy * g->sh - g->pt;
        const bool rows_in = iy0 >= 0 && iy0 + (g->kh - 1) * g->dh < g->h;
        int64_t ox = 0;
        for (; rows_in && ox < lo; ox++) KV(stem_pxn)(g, x, wv, &b, oy, ox, yr, ldy, r, act, 1);
        for (; rows_in && ox + STEM_R <= hi; ox += STEM_R)
            KV(stem_blk)(g, x, wv, b, oy, ox, yr, ldy, r, act, T, STEM_R, KW, CI);
        for (; ox < g->ow; ox++) KV(stem_pxn)(g, x, wv, &b, oy, ox, yr, ldy, r, act, 1);
    }
}

/* Rows [oy0, oy1), r channels at panel column wp: 3x3 kernels of 3
 * channels (the stems) with the taps as constants, others through the
 * same code with them at run time. */
static void KV(stem_rows)(const knhwc_geom *g, const float *x, const float *wp, int nr,
                          const float *bp, kact act, float *y, int64_t ldy, size_t r, int64_t oy0,
                          int64_t oy1, int64_t lo, int64_t hi)
{
    if (g->c == 3 && g->kh == 3 && g->kw == 3 && r == VL)
        KV(stem_rows_t)(g, x, wp, nr, bp, act, y, ldy, VL, oy0, oy1, lo, hi, 27, 3, 3);
    else if (g->c == 3 && g->kh == 3 && g->kw == 3)
        KV(stem_rows_t)(g, x, wp, nr, bp, act, y, ldy, r, oy0, oy1, lo, hi, 27, 3, 3);
    else
        KV(stem_rows_t)(g, x, wp, nr, bp, act, y, ldy, r, oy0, oy1, lo, hi, (int)(g->c * g->kh * g->kw),
                        (int)g->kw, (int)g->c);
}

/* Outputs [ox, ox + R) of row oy for NV whole vectors of channels, every
 * tap inside the image: R x NV accumulators, the NV weight vectors of a tap
 * loaded from wv (T taps of KSTEM_TAPS apart per vector), each input value
 * broadcast once and used NV times. */
static inline __attribute__((always_inline)) void
KV(stem_tile)(const knhwc_geom *g, const float *x, const V *wv, const V *b, int64_t oy, int64_t ox,
              float *y, int64_t ldy, kact act, const int T, const int R, const int NV, const int KW,
              const int CI)
{
    const int64_t plane = g->h * g->w, iy0 = oy * g->sh - g->pt, ix0 = ox * g->sw - g->pl;
    V a[STEM_ACC];
    STEM_UNROLL(24)
    for (int j = 0; j < R * NV; j++) a[j] = b[j % NV];
    STEM_UNROLL(32)
    for (int t = 0; t < T; t++) {
        const int ci = t % CI, kx = (t / CI) % KW, ky = t / CI / KW;
        const float *xp = x + (g->c0 + ci) * plane + (iy0 + ky * g->dh) * g->w + ix0 + kx * g->dw;
        V w[STEM_NV];
        STEM_UNROLL(4)
        for (int v = 0; v < NV; v++) w[v] = wv[v * KSTEM_TAPS + t];
        STEM_UNROLL(24)
        for (int j = 0; j < R; j++) {
            const V xv = vset1(xp[j * g->sw]);
            STEM_UNROLL(4)
            for (int v = 0; v < NV; v++) a[j * NV + v] = vfma(xv, w[v], a[j * NV + v]);
        }
    }
    STEM_UNROLL(24)
    for (int j = 0; j < R; j++)
        STEM_UNROLL(4)
        for (int v = 0; v < NV; v++)
            vstore(y + (ox + j) * ldy + v * VL, KV(vfun)(a[j * NV + v], act.f, act.a, act.b));
}

/* Rows [oy0, oy1) of nv (2 to STEM_NV) whole vectors of channels, vector v's
 * weights at wp[v] (a panel's column, kdim rows nr apart), the bias at bp
 * (the nv vectors' channels, or NULL), y at their first channel. */
static inline __attribute__((always_inline)) void
KV(stem_tiles_t)(const knhwc_geom *g, const float *x, const float *const *wp, int nr, const float *bp,
                 kact act, float *y, int64_t ldy, int64_t oy0, int64_t oy1, int64_t lo, int64_t hi,
                 const int T, const int NV, const int KW, const int CI)
{
    const int R = STEM_ACC / NV;
    V wv[STEM_NV * KSTEM_TAPS], b[STEM_NV];
    for (int v = 0; v < NV; v++) {
        for (int t = 0; t < T; t++) wv[v * KSTEM_TAPS + t] = vload(wp[v] + t * nr);
        b[v] = bp ? vload(bp + v * VL) : vzero();
    }
    for (int64_t oy = oy0; oy < oy1; oy++) {
        float *yr = y + oy * g->ow * ldy;
        const int64_t iy0 = oy * g->sh - g->pt;
        const bool rows_in = iy0 >= 0 && iy0 + (g->kh - 1) * g->dh < g->h;
        int64_t ox = 0;
        for (; rows_in && ox < lo; ox++) KV(stem_pxn)(g, x, wv, b, oy, ox, yr, ldy, VL, act, NV);
        for (; rows_in && ox + R <= hi; ox += R) KV(stem_tile)(g, x, wv, b, oy, ox, yr, ldy, act, T, R, NV, KW, CI);
        /* the row's last inner outputs as a tile ending at hi over outputs done
         * already (written again with the same values) */
        if (rows_in && ox < hi && hi - lo >= R) {
            KV(stem_tile)(g, x, wv, b, oy, hi - R, yr, ldy, act, T, R, NV, KW, CI);
            ox = hi;
        }
        for (; ox < g->ow; ox++) KV(stem_pxn)(g, x, wv, b, oy, ox, yr, ldy, VL, act, NV);
    }
}

/* stem_tiles_t with nv and the 3x3-of-3-channels taps as constants. */
static void KV(stem_tiles)(const knhwc_geom *g, const float *x, const float *const *wp, int nv, int nr,
                           const float *bp, kact act, float *y, int64_t ldy, int64_t oy0, int64_t oy1,
                           int64_t lo, int64_t hi)
{
    const bool k33 = g->c == 3 && g->kh == 3 && g->kw == 3;
    const int T = (int)(g->c * g->kh * g->kw), KW = (int)g->kw, CI = (int)g->c;
    switch (nv) {
    case 2:
        if (k33) KV(stem_tiles_t)(g, x, wp, nr, bp, act, y, ldy, oy0, oy1, lo, hi, 27, 2, 3, 3);
        else KV(stem_tiles_t)(g, x, wp, nr, bp, act, y, ldy, oy0, oy1, lo, hi, T, 2, KW, CI);
        break;
    case 3:
        if (k33) KV(stem_tiles_t)(g, x, wp, nr, bp, act, y, ldy, oy0, oy1, lo, hi, 27, 3, 3, 3);
        else KV(stem_tiles_t)(g, x, wp, nr, bp, act, y, ldy, oy0, oy1, lo, hi, T, 3, KW, CI);
        break;
    default:
        if (k33) KV(stem_tiles_t)(g, x, wp, nr, bp, act, y, ldy, oy0, oy1, lo, hi, 27, STEM_NV, 3, 3);
        else KV(stem_tiles_t)(g, x, wp, nr, bp, act, y, ldy, oy0, oy1, lo, hi, T, STEM_NV, KW, CI);
        break;
    }
}

/* The Winograd F(4x4, 3x3) and F(2x2, 3x3) transforms for the ISA of the
 * vec_*.h included before (winograd.c includes it once per ISA), a vector of
 * channels at a time. F(4x4) on the points 0, 1, -1, 1/2, -2 and infinity
 * (winograd.c says why).
 * The input's: V = B^T d B with
 *   B^T = [1 -3/2 -2 3/2 1 0; 0 -1 1/2 5/2 1 0; 0 1 -5/2 1/2 1 0;
 *          0 -2 -1 2 1 0; 0 1/2 -1 -1/2 1 0; 0 1 -3/2 -2 3/2 1];
 * the output's: Y = A^T m A with
 *   A^T = [1 1 1 1 1 0; 0 1 -1 1/2 -2 0; 0 1 1 1/4 4 0; 0 1 -1 1/8 -8 1].
 * F(2x2) on 0, 1, -1 and infinity (Lavin's): B^T = [1 0 -1 0; 0 1 1 0;
 * 0 -1 1 0; 0 1 0 -1], A^T = [1 1 1 0; 0 1 -1 -1]. */

/* B^T along one axis: six vectors in, six out, s apart. */
static inline void KV(kwg_bt)(const V d0, const V d1, const V d2, const V d3, const V d4,
                              const V d5, V *o, int s)
{
    const V h = vset1(0.5f), h3 = vset1(1.5f), two = vset1(2.0f), m2 = vset1(-2.0f);
    const V d42 = vsub(d4, d2);
    o[0] = vfma(h3, vsub(d3, d1), vfma(m2, d2, vadd(d0, d4)));
    o[s] = vfma(vset1(2.5f), d3, vfma(h, d2, vsub(d4, d1)));
    o[2 * s] = vfma(vset1(-2.5f), d2, vfma(h, d3, vadd(d4, d1)));
    o[3 * s] = vfma(two, vsub(d3, d1), d42);
    o[4 * s] = vfma(h, vsub(d1, d3), d42);
    o[5 * s] = vfma(h3, d42, vfma(m2, d3, vadd(d1, d5)));
}

/* A^T along one axis: six vectors in, four out, s apart. */
static inline void KV(kwg_at)(const V m0, const V m1, const V m2, const V m3, const V m4,
                              const V m5, V *o, int s)
{
    const V a = vadd(m1, m2), b = vsub(m1, m2);
    o[0] = vadd(vadd(m0, a), vadd(m3, m4));
    o[s] = vfma(vset1(0.5f), m3, vfma(vset1(-2.0f), m4, b));
    o[2 * s] = vfma(vset1(0.25f), m3, vfma(vset1(4.0f), m4, a));
    o[3 * s] = vadd(vfma(vset1(0.125f), m3, vfma(vset1(-8.0f), m4, b)), m5);
}

/* One tile's input transform: pixel k = 6 * row + col of its patch at
 * p[k] (channels from 0; a zero row outside the image), c channels, into
 * v[pos * vs + ci]. */
static void KV(kwg_in)(const float *const *p, int64_t c, float *v, int64_t vs)
{
    for (int64_t ci = 0; ci < c; ci += VL) {
        const size_t cnt = c - ci < VL ? (size_t)(c - ci) : VL;
        V t[36];
        _Pragma("GCC unroll 6") for (int j = 0; j < 6; j++) {
            V d[6];
            _Pragma("GCC unroll 6") for (int r = 0; r < 6; r++) d[r] =
                cnt == VL ? vload(p[6 * r + j] + ci) : vloadn(p[6 * r + j] + ci, cnt);
            KV(kwg_bt)(d[0], d[1], d[2], d[3], d[4], d[5], t + j, 6);
        }
        _Pragma("GCC unroll 6") for (int i = 0; i < 6; i++) {
            V o[6];
            const V *r = t + 6 * i;
            KV(kwg_bt)(r[0], r[1], r[2], r[3], r[4], r[5], o, 1);
            _Pragma("GCC unroll 6") for (int j = 0; j < 6; j++) {
                float *dst = v + (6 * i + j) * vs + ci;
                if (cnt == VL) vstore(dst, o[j]);
                else vstoren(dst, o[j], cnt);
            }
        }
    }
}

/* One output vector o (channels [co, co + cnt)) of a tile's transform to
 * dst (NULL: outside the output, skipped), with the epilogue's common forms
 * (bias b, the residual at row pix, Relu or Clip) as kwg_out says. */
static inline void KV(kwg_store)(V v, const V b, float *dst, int64_t pix, int64_t co, size_t cnt,
                                 const gemm_epi *e, bool res, int act, const V lo, const V hi,
                                 const V rk)
{
    if (!dst) return;
    v = vadd(v, b);
    V rv = vzero();
    if (res) {
        const float *s = e->res + pix * e->ldr + co;
        rv = cnt == VL ? vload(s) : vloadn(s, cnt);
        if (!e->res_after) v = vfma(rk, rv, v);
    }
    if (act == GEMM_ACT_RELU) v = vmax(v, vzero());
    else if (act == GEMM_ACT_CLIP) v = vmin(hi, vmax(lo, v));
    if (res && e->res_after) v = vfma(rk, rv, v);
    if (cnt == VL) vstore(dst + co, v);
    else vstoren(dst + co, v, cnt);
}

/* One tile's output transform: m[pos * ms + co] for n channels, output k
 * = 4 * row + col to out[k] (NULL: outside the output), with the
 * epilogue's common forms when quick (a bias by column, a residual at row
 * pix[k], Relu or Clip; kwg_conv says which), else the sums as they are. */
static void KV(kwg_out)(const float *m, int64_t ms, int64_t n, float *const *out,
                        const int64_t *pix, const gemm_epi *e, bool quick)
{
    const bool bias = quick && e->bias_mode == GEMM_BIAS_COL, res = quick && e->res;
    const int act = quick ? (int)e->act : GEMM_ACT_NONE;
    const V lo = vset1(act == GEMM_ACT_CLIP ? e->lo : 0.0f), hi = vset1(e->hi);
    const V rk = vset1(e->res_scale != 0.0f ? e->res_scale : 1.0f);
    for (int64_t co = 0; co < n; co += VL) {
        const size_t cnt = n - co < VL ? (size_t)(n - co) : VL;
        V t[24];
        _Pragma("GCC unroll 6") for (int j = 0; j < 6; j++) {
            V d[6];
            _Pragma("GCC unroll 6") for (int r = 0; r < 6; r++) {
                const float *s = m + (6 * r + j) * ms + co;
                d[r] = cnt == VL ? vload(s) : vloadn(s, cnt);
            }
            KV(kwg_at)(d[0], d[1], d[2], d[3], d[4], d[5], t + j, 6);
        }
        const V b = bias ? (cnt == VL ? vload(e->bias + co) : vloadn(e->bias + co, cnt)) : vzero();
        _Pragma("GCC unroll 4") for (int i = 0; i < 4; i++) {
            V o[4];
            const V *r = t + 6 * i;
            KV(kwg_at)(r[0], r[1], r[2], r[3], r[4], r[5], o, 1);
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)
                KV(kwg_store)(o[j], b, out[4 * i + j], pix[4 * i + j], co, cnt, e, res, act, lo, hi, rk);
        }
    }
}

/* F(2x2)'s B^T along one axis: four vectors in, four out, s apart. */
static inline void KV(kwg2_bt)(const V d0, const V d1, const V d2, const V d3, V *o, int s)
{
    o[0] = vsub(d0, d2);
    o[s] = vadd(d1, d2);
    o[2 * s] = vsub(d2, d1);
    o[3 * s] = vsub(d1, d3);
}

/* F(2x2)'s A^T along one axis: four vectors in, two out, s apart. */
static inline void KV(kwg2_at)(const V m0, const V m1, const V m2, const V m3, V *o, int s)
{
    o[0] = vadd(vadd(m0, m1), m2);
    o[s] = vsub(vsub(m1, m2), m3);
}

/* kwg_in for F(2x2): pixel k = 4 * row + col of the 4x4 patch. */
static void KV(kwg2_in)(const float *const *p, int64_t c, float *v, int64_t vs)
{
    for (int64_t ci = 0; ci < c; ci += VL) {
        const size_t cnt = c - ci < VL ? (size_t)(c - ci) : VL;
        V t[16];
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
            V d[4];
            _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) d[r] =
                cnt == VL ? vload(p[4 * r + j] + ci) : vloadn(p[4 * r + j] + ci, cnt);
            KV(kwg2_bt)(d[0], d[1], d[2], d[3], t + j, 4);
        }
        _Pragma("GCC unroll 4") for (int i = 0; i < 4; i++) {
            V o[4];
            const V *r = t + 4 * i;
            KV(kwg2_bt)(r[0], r[1], r[2], r[3], o, 1);
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
                float *dst = v + (4 * i + j) * vs + ci;
                if (cnt == VL) vstore(dst, o[j]);
                else vstoren(dst, o[j], cnt);
            }
        }
    }
}

/* kwg_out for F(2x2): output k = 2 * row + col. */
static void KV(kwg2_out)(const float *m, int64_t ms, int64_t n, float *const *out,
                         const int64_t *pix, const gemm_epi *e, bool quick)
{
    const bool bias = quick && e->bias_mode == GEMM_BIAS_COL, res = quick && e->res;
    const int act = quick ? (int)e->act : GEMM_ACT_NONE;
    const V lo = vset1(act == GEMM_ACT_CLIP ? e->lo : 0.0f), hi = vset1(e->hi);
    const V rk = vset1(e->res_scale != 0.0f ? e->res_scale : 1.0f);
    for (int64_t co = 0; co < n; co += VL) {
        const size_t cnt = n - co < VL ? (size_t)(n - co) : VL;
        V t[8];
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
            V d[4];
            _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) {
                const float *s = m + (4 * r + j) * ms + co;
                d[r] = cnt == VL ? vload(s) : vloadn(s, cnt);
            }
            KV(kwg2_at)(d[0], d[1], d[2], d[3], t + j, 4);
        }
        const V b = bias ? (cnt == VL ? vload(e->bias + co) : vloadn(e->bias + co, cnt)) : vzero();
        _Pragma("GCC unroll 2") for (int i = 0; i < 2; i++) {
            V o[2];
            const V *r = t + 4 * i;
            KV(kwg2_at)(r[0], r[1], r[2], r[3], o, 1);
            _Pragma("GCC unroll 2") for (int j = 0; j < 2; j++)
                KV(kwg_store)(o[j], b, out[2 * i + j], pix[2 * i + j], co, cnt, e, res, act, lo, hi, rk);
        }
    }
}

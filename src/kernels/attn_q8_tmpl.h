/* The int8 attention's packers (attn_q8.h) for the ISA of the vec_*.h
 * included before (attn_q8.c includes it once per ISA). Each element is
 * quantised as rint(x * (1 / s)) clamped to [-127, 127] (float multiply,
 * round to nearest even: the same bytes at every ISA), stored + 128 as
 * uint8 into a row of tmp, then moved into int8dq's panels flipped back
 * (^ 0x80) a dword (four bytes of k) at a time. */

/* max |x| of x[0 .. n); *bad += x - x (NaN from an infinity or a NaN),
 * checked once per head */
static float KV(aq_absmax)(const float *x, int n, V *bad)
{
    V hi = vzero();
    for (int e = 0; e < n; e += VL) {
        size_t r = n - e < VL ? (size_t)(n - e) : VL;
        V v = vloadn(x + e, r);
        hi = vmax(hi, vabs(v));
        *bad = vadd(*bad, vsub(v, v));
    }
    return vhmax(hi);
}

/* q = rint(x * r) clamped to [-127, 127], as floats */
static inline V KV(aq_q)(V x, V r)
{
    return vmin(vmax(vround(vmul(x, r)), vset1(-127.0f)), vset1(127.0f));
}

static bool KV(aq_pack_k)(const katt_geom *g, const float *kp, const float *kc, int bi, int kvh,
                          const qg_packed *b, uint8_t *tmp)
{
    const int T = g->sp + g->sc, d = g->d;
    const int64_t nq4 = b->kp / 4;
    float *scale = (float *)b->scale;
    int32_t *colsum = (int32_t *)b->colsum;
    V bad = vzero();
    memset(tmp + d, 128, (size_t)(b->kp - d)); /* k's padding: byte 0 */
    for (int j = 0; j < (int)b->np; j++) {
        uint8_t *grp = (uint8_t *)qg_group(b, j / (QG_NR * QG_GP));
        const int64_t gw = qg_group_w(b, j / (QG_NR * QG_GP));
        uint8_t *at = grp + (size_t)(j / QG_NR % QG_GP) * 64 + (size_t)(j % QG_NR) * 4;
        if (j >= T) { /* n's padding: zero columns */
            scale[j] = 1.0f, colsum[j] = 0;
            for (int64_t qd = 0; qd < nq4; qd++) memset(at + (size_t)(qd * gw) * 64, 0, 4);
            continue;
        }
        const float *k = aq_key(g, kp, kc, bi, kvh, j);
        const float s = aq_scale(KV(aq_absmax)(k, d, &bad));
        const V vr = vset1(1.0f / s), off = vset1(128.0f);
        V sum = vzero();
#if VL == 16 /* AVX-512: each 16 elements' bytes (vpmovdb) scattered as 4 dwords, no tmp row */
        const __m128i step = _mm_mullo_epi32(_mm_setr_epi32(0, 1, 2, 3), _mm_set1_epi32((int)gw * 16));
        for (int e = 0; e < b->kp; e += VL) {
            size_t r = d - e < VL ? (size_t)(d - e) : VL;
            V qv = KV(aq_q)(vloadn(k + e, r), vr);
            sum = vadd(sum, qv);
            __m128i by = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(qv)); /* int8, 0 past d */
            int nq = b->kp - e < VL ? (int)(b->kp - e) / 4 : 4;
            _mm_mask_i32scatter_epi32(at + (size_t)(e / 4 * gw) * 64, (__mmask8)((1u << nq) - 1),
                                      step, by, 4);
        }
        scale[j] = s;
        colsum[j] = (int32_t)vhsum(sum);
        (void)off;
        continue;
#endif
        for (int e = 0; e < d; e += VL) {
            size_t r = d - e < VL ? (size_t)(d - e) : VL;
            V qv = KV(aq_q)(vloadn(k + e, r), vr);
            sum = vadd(sum, qv); /* lanes past r: 0 */
            vstoren_u8(tmp + e, vadd(qv, off), r);
        }
        scale[j] = s;
        colsum[j] = (int32_t)vhsum(sum); /* whole numbers below 2^24: exact */
        for (int64_t qd = 0; qd < nq4; qd++) {
            uint32_t w;
            memcpy(&w, tmp + 4 * qd, 4);
            w ^= 0x80808080u;
            memcpy(at + (size_t)(qd * gw) * 64, &w, 4);
        }
    }
    return vhsum(bad) == 0; /* a NaN or an infinity: the bytes are not used */
}

static bool KV(aq_pack_v)(const katt_geom *g, const float *vp, const float *vc, int bi, int kvh,
                          const qg_packed *b, float *rc, uint8_t *tmp)
{
    const int T = g->sp + g->sc, dv = g->dv, np = (int)b->np;
    float *scale = (float *)b->scale;
    int32_t *colsum = (int32_t *)b->colsum;
    V bad = vzero();
    for (int c0 = 0; c0 < dv; c0 += 4 * VL) { /* each column's max |v| over the keys, 4 vectors
                                                * of columns at a time in registers */
        int n = dv - c0;
        size_t r[4];
        for (int u = 0; u < 4; u++) r[u] = n > u * VL ? (size_t)(n - u * VL < VL ? n - u * VL : VL) : 0;
        V h0 = vzero(), h1 = vzero(), h2 = vzero(), h3 = vzero();
        for (int j = 0; j < T; j++) {
            const float *v = aq_value(g, vp, vc, bi, kvh, j) + c0;
            V x0 = vloadn(v, r[0]), x1 = r[1] ? vloadn(v + VL, r[1]) : vzero();
            V x2 = r[2] ? vloadn(v + 2 * VL, r[2]) : vzero(), x3 = r[3] ? vloadn(v + 3 * VL, r[3]) : vzero();
            h0 = vmax(h0, vabs(x0)), h1 = vmax(h1, vabs(x1));
            h2 = vmax(h2, vabs(x2)), h3 = vmax(h3, vabs(x3));
            bad = vadd(bad, vadd(vadd(vsub(x0, x0), vsub(x1, x1)), vadd(vsub(x2, x2), vsub(x3, x3))));
        }
        vstoren(rc + c0, h0, r[0]);
        if (r[1]) vstoren(rc + c0 + VL, h1, r[1]);
        if (r[2]) vstoren(rc + c0 + 2 * VL, h2, r[2]);
        if (r[3]) vstoren(rc + c0 + 3 * VL, h3, r[3]);
    }
    if (vhsum(bad) != 0) return false;
    for (int c = 0; c < np; c++) {
        float s = c < dv ? aq_scale(rc[c]) : 1.0f;
        scale[c] = s;
        rc[c] = c < dv ? 1.0f / s : 0.0f;
        colsum[c] = 0; /* not made: P's zero point is 0 (attn_q8.h) */
    }
    memset(tmp, 128, (size_t)(4 * np)); /* n's padding: byte 0 */
    const V off = vset1(128.0f);
    for (int64_t qd = 0; qd < b->kp / 4; qd++) {
        for (int u = 0; u < 4; u++) { /* four keys' rows into tmp */
            const int j = (int)(4 * qd + u);
            uint8_t *t = tmp + (size_t)u * np;
            if (j >= T) { /* k's padding */
                memset(t, 128, (size_t)dv);
                continue;
            }
            const float *v = aq_value(g, vp, vc, bi, kvh, j);
            for (int c = 0; c < dv; c += VL) {
                size_t r = dv - c < VL ? (size_t)(dv - c) : VL;
                V qv = KV(aq_q)(vloadn(v + c, r), vloadn(rc + c, r));
                vstoren_u8(t + c, vadd(qv, off), r);
            }
        }
        /* the quad's dwords: column c of group gi at byte 4 (c % 64) of the
         * group's quad row, its four keys' bytes in order */
        for (int64_t gi = 0; gi * QG_NR * QG_GP < np; gi++) {
            uint8_t *dst = (uint8_t *)qg_group(b, gi) + (size_t)(qd * qg_group_w(b, gi)) * 64;
            const uint8_t *t0 = tmp + gi * QG_NR * QG_GP, *t1 = t0 + np, *t2 = t1 + np, *t3 = t2 + np;
            const int nc = qg_group_w(b, gi) * QG_NR;
            for (int c = 0; c < nc; c++) {
                uint32_t w = ((uint32_t)t0[c] | (uint32_t)t1[c] << 8 | (uint32_t)t2[c] << 16 |
                              (uint32_t)t3[c] << 24) ^ 0x80808080u;
                memcpy(dst + 4 * c, &w, 4);
            }
        }
    }
    return true;
}

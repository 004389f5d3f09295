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

#if VL == 16
/* out[t] = dword t of each of r[0..15] (a 16 x 16 dword transpose: dwords,
 * then qwords within 128-bit lanes, then the lanes) */
static inline void aq_t16(const __m512i r[16], __m512i out[16])
{
    __m512i a[16], b[16];
    for (int i = 0; i < 8; i++) {
        a[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) { /* b[4i + c], lane L: rows 4i..4i+3 of dword 4L + c */
        b[4 * i] = _mm512_unpacklo_epi64(a[4 * i], a[4 * i + 2]);
        b[4 * i + 1] = _mm512_unpackhi_epi64(a[4 * i], a[4 * i + 2]);
        b[4 * i + 2] = _mm512_unpacklo_epi64(a[4 * i + 1], a[4 * i + 3]);
        b[4 * i + 3] = _mm512_unpackhi_epi64(a[4 * i + 1], a[4 * i + 3]);
    }
    for (int c = 0; c < 4; c++) { /* out[4L + c]: lane L of b[c], b[4 + c], b[8 + c], b[12 + c] */
        __m512i x0 = _mm512_shuffle_i32x4(b[c], b[4 + c], 0x44), x1 = _mm512_shuffle_i32x4(b[c], b[4 + c], 0xee);
        __m512i x2 = _mm512_shuffle_i32x4(b[8 + c], b[12 + c], 0x44), x3 = _mm512_shuffle_i32x4(b[8 + c], b[12 + c], 0xee);
        out[c] = _mm512_shuffle_i32x4(x0, x2, 0x88);
        out[4 + c] = _mm512_shuffle_i32x4(x0, x2, 0xdd);
        out[8 + c] = _mm512_shuffle_i32x4(x1, x3, 0x88);
        out[12 + c] = _mm512_shuffle_i32x4(x1, x3, 0xdd);
    }
}
#endif

static bool KV(aq_pack_k)(const katt_geom *g, const float *kp, const float *kc, int bi, int kvh,
                          const qg_packed *b, uint8_t *tmp)
{
    const int T = g->sp + g->sc, d = g->d;
    const int64_t nq4 = b->kp / 4;
    float *scale = (float *)b->scale;
    int32_t *colsum = (int32_t *)b->colsum;
    V bad = vzero();
#if VL == 16
    /* AVX-512: a panel's 16 keys as int8 rows of tmp (KATT_Q8_KTMP), then
     * each 64 bytes of the rows transposed in registers to 16 quads of the
     * panel, a store each (a dword scatter per 4 quads of a key was slow on
     * AMD Zen 5: about 280 cycles a key of 64; bench/RESULTS.md, branch i8) */
    const int64_t rs = (b->kp + 63) / 64 * 64;
    for (int64_t p = 0; p < b->np / QG_NR; p++) {
        const int64_t gi = p / QG_GP, gw = qg_group_w(b, gi);
        uint8_t *at = (uint8_t *)qg_group(b, gi) + (size_t)(p % QG_GP) * 64;
        for (int u = 0; u < QG_NR; u++) {
            const int j = (int)(p * QG_NR + u);
            uint8_t *row = tmp + (size_t)u * (size_t)rs;
            if (j >= T) { /* n's padding: zero columns */
                scale[j] = 1.0f, colsum[j] = 0;
                memset(row, 0, (size_t)rs);
                continue;
            }
            const float *k = aq_key(g, kp, kc, bi, kvh, j);
            /* the keys come from L3 (a head's rows apart): fetched ahead of use */
            const char *ahead = (const char *)aq_key(g, kp, kc, bi, kvh, j + AQ_PF < T ? j + AQ_PF : j);
            kprefetch_run(ahead, (int64_t)d * 4, false);
            const float s = aq_scale(KV(aq_absmax)(k, d, &bad));
            const V vr = vset1(1.0f / s);
            V sum = vzero();
            for (int64_t e = 0; e < rs; e += VL) {
                V qv = vzero();
                if (e < d) {
                    qv = KV(aq_q)(vloadn(k + e, d - e < VL ? (size_t)(d - e) : VL), vr);
                    sum = vadd(sum, qv);
                }
                _mm_storeu_si128((__m128i *)(row + e), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(qv)));
            }
            scale[j] = s;
            colsum[j] = (int32_t)vhsum(sum); /* whole numbers below 2^24: exact */
        }
        for (int64_t e = 0; e < rs; e += 64) {
            __m512i r[16], o[16];
            for (int u = 0; u < 16; u++) r[u] = _mm512_loadu_si512(tmp + (size_t)u * (size_t)rs + e);
            aq_t16(r, o);
            const int nq = nq4 - e / 4 < 16 ? (int)(nq4 - e / 4) : 16;
            for (int t = 0; t < nq; t++) _mm512_storeu_si512(at + (size_t)((e / 4 + t) * gw) * 64, o[t]);
        }
    }
    return vhsum(bad) == 0;
#endif
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
            /* from L3 as the keys (aq_pack_k): fetched ahead */
            const char *ahead = (const char *)(aq_value(g, vp, vc, bi, kvh, j + AQ_PF < T ? j + AQ_PF : j) + c0);
            kprefetch_run(ahead, (int64_t)(n < 4 * VL ? n : 4 * VL) * 4, false);
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
#if VL > 1 /* x86: 16 columns' dwords by byte and word interleaves */
            const __m128i flip = _mm_set1_epi8((char)0x80);
            for (int c = 0; c < nc; c += 16) {
                const __m128i x0 = _mm_loadu_si128((const __m128i *)(t0 + c)),
                              x1 = _mm_loadu_si128((const __m128i *)(t1 + c)),
                              x2 = _mm_loadu_si128((const __m128i *)(t2 + c)),
                              x3 = _mm_loadu_si128((const __m128i *)(t3 + c));
                const __m128i l01 = _mm_unpacklo_epi8(x0, x1), h01 = _mm_unpackhi_epi8(x0, x1),
                              l23 = _mm_unpacklo_epi8(x2, x3), h23 = _mm_unpackhi_epi8(x2, x3);
                __m128i *o = (__m128i *)(dst + 4 * c);
                _mm_storeu_si128(o, _mm_xor_si128(_mm_unpacklo_epi16(l01, l23), flip));
                _mm_storeu_si128(o + 1, _mm_xor_si128(_mm_unpackhi_epi16(l01, l23), flip));
                _mm_storeu_si128(o + 2, _mm_xor_si128(_mm_unpacklo_epi16(h01, h23), flip));
                _mm_storeu_si128(o + 3, _mm_xor_si128(_mm_unpackhi_epi16(h01, h23), flip));
            }
            continue;
#endif
            for (int c = 0; c < nc; c++) {
                uint32_t w = ((uint32_t)t0[c] | (uint32_t)t1[c] << 8 | (uint32_t)t2[c] << 16 |
                              (uint32_t)t3[c] << 24) ^ 0x80808080u;
                memcpy(dst + 4 * c, &w, 4);
            }
        }
    }
    return true;
}

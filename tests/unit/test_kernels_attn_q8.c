/* The attention on int8 (kernels/attn_q8.h, katt_geom.q8) at every ISA
 * this CPU has and the portable path, with 1 and 2 threads: the packers of
 * K and V bit for bit against a scalar model of their quantisation and
 * layout, and whole attentions against a model of the same integer
 * arithmetic (Q's rows uint8, K per key and V per column int8, exact
 * integer sums, P at 1/255) computed in double; odd head sizes and
 * lengths (not multiples of 4 or 16), grouped kv heads, a past, masks
 * (one row per batch in QK^T's epilogue, per query, -inf, a query that
 * sees nothing), causal, and a NaN value sending its head to the float
 * path. */
#include <float.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/attn.h"
#include "kernels/attn_q8.h"
#include "kernels/qgemm.h"
#include "attn_check.h"
#include "kernels_check.h"

/* The scalar model's symmetric int8: scale mx / 127 (1 when that is not a
 * normal float), q = rint(x * (1 / s)) in [-127, 127]. */
static float m_scale(float mx) { return mx >= 127.0f * FLT_MIN ? mx / 127.0f : 1.0f; }
static int m_q(float x, float s)
{
    float q = rintf(x * (1.0f / s));
    return q > 127 ? 127 : q < -127 ? -127 : (int)q;
}

/* int8dq's byte of B[p][j] (kernels/qgemm.h: column groups of QG_GP
 * panels, quads of k, a group's panels side by side per quad) */
static size_t m_at(const qg_packed *b, int64_t p, int64_t j)
{
    int64_t g = j / (QG_NR * QG_GP), s = j / QG_NR % QG_GP;
    int64_t left = b->np / QG_NR - g * QG_GP, gw = left < QG_GP ? left : QG_GP;
    return (size_t)(g * QG_GP * b->kp * 16 + ((p / 4) * gw + s) * 64 + p % 4 + (j % QG_NR) * 4);
}

/* The model's pack of B (k x n, B[p][j] = x(p, j)), each column at its own
 * scale: K's columns are its keys, V's its features. */
typedef float (*m_elem)(const void *u, int64_t p, int64_t j);
static void m_pack(const qg_packed *b, m_elem x, const void *u, bool sums, uint8_t *w, float *scale,
                   int32_t *colsum)
{
    memset(w, 0, (size_t)(b->kp * b->np));
    for (int64_t j = 0; j < b->np; j++) {
        float mx = 0;
        for (int64_t p = 0; j < b->n && p < b->k; p++) mx = fmaxf(mx, fabsf(x(u, p, j)));
        float s = j < b->n ? m_scale(mx) : 1.0f;
        int32_t sum = 0;
        for (int64_t p = 0; j < b->n && p < b->k; p++) {
            int q = m_q(x(u, p, j), s);
            sum += q;
            w[m_at(b, p, j)] = (uint8_t)(int8_t)q;
        }
        scale[j] = s, colsum[j] = sums ? sum : 0; /* V's: not made (P's zero point 0) */
    }
}

typedef struct m_kv {
    const katt_geom *g;
    const float *past, *cur;
    int bi, kvh, width;
} m_kv;
/* key/value row j of (bi, kvh), dense layouts: element e */
static float m_row(const m_kv *m, int j, int e)
{
    const katt_geom *g = m->g;
    if (j < g->sp) return m->past[(((size_t)m->bi * g->hkv + m->kvh) * g->sp + j) * m->width + e];
    return m->cur[(((size_t)m->bi * g->hkv + m->kvh) * g->sc + j - g->sp) * m->width + e];
}
static float m_k(const void *u, int64_t p, int64_t j) { return m_row(u, (int)j, (int)p); }
static float m_v(const void *u, int64_t p, int64_t j) { return m_row(u, (int)p, (int)j); }

/* katt_geom's dense strides, as kattention makes them */
static void m_dense(katt_geom *g)
{
    size_t *s[6] = {g->qs, g->ys, g->kps, g->vps, g->kcs, g->vcs};
    int rows[6] = {g->sq, g->sq, g->sp, g->sp, g->sc, g->sc}, cols[6] = {g->d, g->dv, g->d, g->dv, g->d, g->dv};
    int heads[6] = {g->hq, g->hq, g->hkv, g->hkv, g->hkv, g->hkv};
    for (int i = 0; i < 6; i++) {
        s[i][2] = (size_t)cols[i];
        s[i][1] = (size_t)rows[i] * cols[i];
        s[i][0] = s[i][1] * heads[i];
    }
}

static void test_attn_q8_pack(void **state)
{
    (void)state;
    static const struct { int sp, sc, d, dv; } cs[] = {
        {0, 128, 64, 64}, {0, 13, 7, 9}, {5, 70, 17, 13}, {0, 1, 1, 1}, {3, 200, 33, 80}, {0, 64, 16, 16},
    };
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        katt_geom g = {.b = 2, .hq = 2, .hkv = 2, .sq = 1, .sp = cs[k].sp, .sc = cs[k].sc,
                       .d = cs[k].d, .dv = cs[k].dv, .q8 = 1};
        m_dense(&g);
        const int T = g.sp + g.sc;
        const size_t nkv = (size_t)g.b * g.hkv;
        float *kc = kc_rand(nkv * g.sc * g.d, 11 + (unsigned)k, -2, 1.5f), *vc = kc_rand(nkv * g.sc * g.dv, 12, -1, 3);
        float *kp = g.sp ? kc_rand(nkv * g.sp * g.d, 13, -1, 1) : NULL;
        float *vp = g.sp ? kc_rand(nkv * g.sp * g.dv, 14, -0.5f, 0.5f) : NULL;
        for (int e = 0; e < g.d; e++) kc[e] = 0;             /* a key of zeros: scale 1 */
        for (size_t j = 0; j < (size_t)g.sc; j++) vc[j * g.dv] = 0; /* a column of zeros */
        for (int e = 0; g.sc > 2 && e < g.d; e++) kc[2 * g.d + e] = 1e-37f; /* too small: scale 1 */
        for (int bi = 0; bi < g.b; bi++)
            for (int kvh = 0; kvh < g.hkv; kvh++) {
                size_t kb = qg_pack_size(QG_INT8DQ, 0, g.d, T), vb = qg_pack_size(QG_INT8DQ, 0, T, g.dv);
                uint8_t *bk = aligned_alloc(64, (kb + 63) / 64 * 64), *bv = aligned_alloc(64, (vb + 63) / 64 * 64);
                uint8_t *mk = malloc(kb), *mv = malloc(vb);
                qg_packed pk, pv, qk, qv;
                assert_true(qg_pack_begin(QG_INT8DQ, 0, g.d, T, mk, &qk));
                assert_true(qg_pack_begin(QG_INT8DQ, 0, T, g.dv, mv, &qv));
                m_kv uk = {&g, kp, kc, bi, kvh, g.d}, uv = {&g, vp, vc, bi, kvh, g.dv};
                m_pack(&qk, m_k, &uk, true, (uint8_t *)qk.w, (float *)qk.scale, (int32_t *)qk.colsum);
                m_pack(&qv, m_v, &uv, false, (uint8_t *)qv.w, (float *)qv.scale, (int32_t *)qv.colsum);
                uint8_t *tmp = malloc((size_t)(4 * (T + g.d + g.dv) + 64) + KATT_Q8_KTMP(g.d));
                float *rc = malloc(sizeof(float) * (size_t)(g.dv + 16));
                KC_EACH_ISA({
                    memset(bk, 0xa5, kb); /* any contents */
                    memset(bv, 0x5a, vb);
                    assert_true(qg_pack_begin(QG_INT8DQ, 0, g.d, T, bk, &pk));
                    assert_true(qg_pack_begin(QG_INT8DQ, 0, T, g.dv, bv, &pv));
                    assert_true(katt_q8_pack_k(&g, kp, kc, bi, kvh, &pk, tmp));
                    assert_true(katt_q8_pack_v(&g, vp, vc, bi, kvh, &pv, rc, tmp));
                    if (memcmp(bk, mk, kb) || memcmp(bv, mv, vb)) {
                        for (size_t i = 0; i < kb; i++)
                            if (bk[i] != mk[i]) { fprintf(stderr, "case %zu keys [isa %s]: byte %zu is %d, want %d\n", k, kisa_name(kisa_active()), i, bk[i], mk[i]); break; }
                        for (size_t i = 0; i < vb; i++)
                            if (bv[i] != mv[i]) { fprintf(stderr, "case %zu values [isa %s]: byte %zu is %d, want %d\n", k, kisa_name(kisa_active()), i, bv[i], mv[i]); break; }
                        fail();
                    }
                });
                /* not finite: refused */
                float *kn = &kc[((size_t)bi * g.hkv + kvh) * g.sc * g.d + g.d / 2], keep = *kn;
                *kn = INFINITY;
                KC_EACH_ISA(assert_false(katt_q8_pack_k(&g, kp, kc, bi, kvh, &pk, tmp)));
                *kn = keep;
                float *vn = &vc[((size_t)bi * g.hkv + kvh) * g.sc * g.dv + g.dv - 1];
                keep = *vn, *vn = NAN;
                KC_EACH_ISA(assert_false(katt_q8_pack_v(&g, vp, vc, bi, kvh, &pv, rc, tmp)));
                *vn = keep;
                free(bk), free(bv), free(mk), free(mv), free(tmp), free(rc);
            }
        free(kc), free(vc), free(kp), free(vp);
    }
}

/* The model of one int8 attention in double from the same integers: Q's
 * row i uint8 at its range (qg_quant_row_u8's rule), K per key and V per
 * column int8 (m_scale, m_q), S exact from the integer sums, the softmax
 * in double, P = rint(255 p), Y = sum P v sv / 255 / sum p. */
static void att_q8_want(const katt_geom *g, const float *q, const float *kp, const float *vp,
                        const float *kc, const float *vc, double *want)
{
    const int T = g->sp + g->sc, rep = g->hq / g->hkv;
    const double scale = g->scale != 0 ? g->scale : 1 / sqrt(g->d);
    double *s = malloc(sizeof *s * (size_t)T);
    float *sk = malloc(sizeof *sk * (size_t)T), *sv = malloc(sizeof *sv * (size_t)g->dv);
    int *qk = malloc(sizeof *qk * (size_t)T * g->d), *qv = malloc(sizeof *qv * (size_t)T * g->dv);
    int *qa = malloc(sizeof *qa * (size_t)g->d);
    for (int b = 0; b < g->b; b++)
        for (int kvh = 0; kvh < g->hkv; kvh++) {
            m_kv uk = {g, kp, kc, b, kvh, g->d}, uv = {g, vp, vc, b, kvh, g->dv};
            for (int j = 0; j < T; j++) {
                float mx = 0;
                for (int e = 0; e < g->d; e++) mx = fmaxf(mx, fabsf(m_k(&uk, e, j)));
                sk[j] = m_scale(mx);
                for (int e = 0; e < g->d; e++) qk[j * g->d + e] = m_q(m_k(&uk, e, j), sk[j]);
            }
            for (int c = 0; c < g->dv; c++) {
                float mx = 0;
                for (int j = 0; j < T; j++) mx = fmaxf(mx, fabsf(m_v(&uv, j, c)));
                sv[c] = m_scale(mx);
                for (int j = 0; j < T; j++) qv[j * g->dv + c] = m_q(m_v(&uv, j, c), sv[c]);
            }
            for (int h = kvh * rep; h < (kvh + 1) * rep; h++)
                for (int i = 0; i < g->sq; i++) {
                    const float *qi = q + (((size_t)b * g->hq + h) * g->sq + i) * g->d;
                    float lo = 0, hi = 0;
                    for (int e = 0; e < g->d; e++) lo = fminf(lo, qi[e]), hi = fmaxf(hi, qi[e]);
                    float sa = hi > lo ? (hi - lo) / 255.0f : 1.0f;
                    int za = (int)nearbyintf(-lo / sa);
                    za = za < 0 ? 0 : za > 255 ? 255 : za;
                    for (int e = 0; e < g->d; e++) {
                        float t = rintf(qi[e] * (1.0f / sa)) + (float)za;
                        qa[e] = t >= 255 ? 255 : t > 0 ? (int)t : 0;
                    }
                    double m = -INFINITY, l = 0;
                    for (int j = 0; j < T; j++) {
                        int64_t acc = 0;
                        for (int e = 0; e < g->d; e++) acc += (int64_t)(qa[e] - za) * qk[j * g->d + e];
                        double v = (double)sa * sk[j] * (double)acc * scale;
                        if (g->mask) v += g->mask[b * g->mb + h * g->mh + i * g->mi + j];
                        if (g->causal && j > i + g->sp) v = -INFINITY;
                        s[j] = v;
                        m = fmax(m, v);
                    }
                    for (int j = 0; j < T; j++) l += s[j] = m == -INFINITY ? 0 : exp(s[j] - m);
                    double *w = want + (((size_t)b * g->hq + h) * g->sq + i) * g->dv;
                    for (int c = 0; c < g->dv; c++) {
                        double o = 0;
                        for (int j = 0; j < T; j++) o += rint(s[j] * 255) * qv[j * g->dv + c];
                        w[c] = l > 0 ? o * sv[c] / 255 / l : 0;
                    }
                }
        }
    free(s), free(sk), free(sv), free(qk), free(qv), free(qa);
}

/* SQNR in dB of got against want */
static double sqnr(const float *got, const double *want, size_t n)
{
    double sig = 0, err = 0;
    for (size_t i = 0; i < n; i++) sig += want[i] * want[i], err += (got[i] - want[i]) * (got[i] - want[i]);
    return err > 0 ? 10 * log10(sig / err) : INFINITY;
}

static void test_attn_q8(void **state)
{
    (void)state;
    static const struct {
        int b, hq, hkv, sq, sp, sc, d, dv, causal, mask;
        float scale;
    } cs[] = {
        /* causal, a finite [sq][T] mask (2), none; grouped kv heads; a past */
        {1, 2, 2, 37, 0, 37, 16, 16, 1, 0, 0},  {2, 2, 1, 19, 4, 19, 24, 8, 0, 2, 0},
        {1, 3, 3, 40, 3, 40, 8, 8, 1, 2, 0.5f}, {1, 1, 1, 17, 0, 53, 5, 3, 0, 0, 0},
        /* one mask row per batch (3: bert's padding mask, in QK^T's epilogue) */
        {2, 2, 2, 40, 5, 40, 16, 16, 0, 3, 0},  {1, 2, 1, 20, 0, 20, 8, 8, 1, 3, 0.5f},
        {2, 4, 4, 128, 0, 128, 64, 64, 0, 3, 0},
        /* -inf in the mask, query 0 seeing nothing (1); odd sizes */
        {1, 2, 2, 33, 0, 33, 17, 13, 0, 1, 0},  {1, 4, 2, 21, 2, 23, 7, 33, 1, 1, 0},
        /* past 530 keys: blocks of 64 queries */
        {1, 1, 1, 70, 460, 70, 8, 8, 1, 2, 0},
    };
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        katt_geom g = {.b = cs[k].b, .hq = cs[k].hq, .hkv = cs[k].hkv, .sq = cs[k].sq,
                       .sp = cs[k].sp, .sc = cs[k].sc, .d = cs[k].d, .dv = cs[k].dv,
                       .scale = cs[k].scale, .causal = cs[k].causal, .q8 = 1};
        const int T = g.sp + g.sc;
        const size_t nq = (size_t)g.b * g.hq * g.sq, nkv = (size_t)g.b * g.hkv;
        float *q = kc_rand(nq * g.d, 1 + (unsigned)k, -1, 1), *kc = kc_rand(nkv * g.sc * g.d, 2, -1, 1);
        float *vc = kc_rand(nkv * g.sc * g.dv, 3, -1, 1);
        float *kp = g.sp ? kc_rand(nkv * g.sp * g.d, 4, -1, 1) : NULL;
        float *vp = g.sp ? kc_rand(nkv * g.sp * g.dv, 5, -1, 1) : NULL;
        for (size_t i = 0; i < nq * g.d; i++) q[i] *= 3; /* scores of a few units: peaked rows */
        const size_t mn = (size_t)(cs[k].mask == 3 ? g.b : g.sq) * T;
        float *mask = cs[k].mask ? kc_rand(mn, 6, -2, 1) : NULL;
        if (mask && cs[k].mask == 3) g.mask = mask, g.mb = (size_t)T;
        else if (mask) g.mask = mask, g.mi = (size_t)T;
        for (size_t j = 3; cs[k].mask == 3 && j < mn; j += 7) mask[j] = -INFINITY;
        if (cs[k].mask == 1) {
            for (int i = 0; i < g.sq * T; i += 5) mask[i] = -INFINITY;
            for (int j = 0; j < T; j++) mask[j] = -INFINITY; /* query 0 sees nothing: zeros */
        }
        float *y = malloc(nq * g.dv * sizeof *y);
        double *want = malloc(nq * g.dv * sizeof *want), *wf = malloc(nq * g.dv * sizeof *wf);
        att_q8_want(&g, q, kp, vp, kc, vc, want);
        att_want(&g, q, kp, vp, kc, vc, wf); /* the float attention, for the int8 error */
        KC_EACH_ISA({
            memset(y, 0xff, nq * g.dv * sizeof *y);
            assert_int_equal(kattention(&g, q, kp, vp, kc, vc, y, kc_threads), 0);
            /* the model's floats in double: no P element of these data rounds the
             * other way (float exp against double) at any ISA, which would move an
             * output by |v| / 255 / sum p, 1 / 255 at most */
            assert_true(kc_close("int8 attention", y, want, nq * g.dv, 2e-5, 1e-4));
            double db = sqnr(y, wf, nq * g.dv);
            if (!(db > 30)) fprintf(stderr, "case %zu [isa %s]: %.1f dB against float\n", k, kisa_name(kisa_active()), db);
            assert_true(db > 30);
            /* on the caller's scratch, left dirty: the same answer */
            katt_geom gw = g;
            gw.ws_bytes = kattention_scratch(&g, kc_threads);
            gw.ws = aligned_alloc(64, (gw.ws_bytes + 63) / 64 * 64);
            memset(gw.ws, 0x7f, gw.ws_bytes);
            float *y2 = malloc(nq * g.dv * sizeof *y2);
            assert_int_equal(kattention(&gw, q, kp, vp, kc, vc, y2, kc_threads), 0);
            assert_memory_equal(y, y2, nq * g.dv * sizeof *y);
            free(gw.ws);
            free(y2);
        });
        /* a NaN value: its head takes the float path (NaN out), the others int8 */
        vc[1] = NAN;
        KC_EACH_ISA({
            assert_int_equal(kattention(&g, q, kp, vp, kc, vc, y, kc_threads), 0);
            if (!g.causal && !(cs[k].mask == 1)) assert_true(isnan(y[g.sq / 2 * g.dv + 1]));
            if (g.hkv > 1 || g.b > 1) /* the last kv head's queries: int8, as before */
                assert_true(kc_close("int8 attention beside a NaN head", y + (nq - g.sq) * g.dv,
                                     want + (nq - g.sq) * g.dv, (size_t)g.sq * g.dv, 2e-5, 1e-4));
        });
        free(q), free(kc), free(vc), free(kp), free(vp), free(mask), free(y), free(want), free(wf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attn_q8_pack),
        cmocka_unit_test(test_attn_q8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

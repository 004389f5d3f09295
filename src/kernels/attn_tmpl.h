/* One block of queries of one head, for the ISA of the vec_*.h included
 * before (attn.c includes it once per ISA). */

static float KV(att_dot)(const float *a, const float *b, int d)
{
    V acc = vzero();
    for (int i = 0; i < d; i += VL) {
        size_t r = d - i < VL ? (size_t)(d - i) : VL;
        acc = vfma(vloadn(a + i, r), vloadn(b + i, r), acc);
    }
    return vhsum(acc);
}

/* o[0..n) = o * c + p * v */
static void KV(att_axpby)(float *o, float c, float p, const float *v, int n)
{
    V vc = vset1(c), vp = vset1(p);
    for (int i = 0; i < n; i += VL) {
        size_t r = n - i < VL ? (size_t)(n - i) : VL;
        vstoren(o + i, vfma(vp, vloadn(v + i, r), vmul(vloadn(o + i, r), vc)), r);
    }
}

/* Queries [i0, i0 + nq) of head h in batch bi; ws holds nq * dv floats */
static void KV(att_block)(const katt_geom *g, const float *q, const float *kp, const float *vp,
                          const float *kc, const float *vc, float *y, int bi, int h, int i0,
                          int nq, float *ws)
{
    const int T = g->sp + g->sc, kvh = h / (g->hq / g->hkv), d = g->d, dv = g->dv;
    const float scale = g->scale != 0 ? g->scale : 1.0f / sqrtf((float)d);
    const size_t qh = ((size_t)bi * g->hq + h) * g->sq, kh = (size_t)bi * g->hkv + kvh;
    float m[ATT_QB], l[ATT_QB], s[ATT_QB][ATT_KB];
    for (int i = 0; i < nq; i++) m[i] = -INFINITY, l[i] = 0;
    memset(ws, 0, (size_t)nq * dv * sizeof *ws);
    for (int j0 = 0; j0 < T; j0 += ATT_KB) {
        int nk = T - j0 < ATT_KB ? T - j0 : ATT_KB;
        for (int i = 0; i < nq; i++) {
            const float *qi = q + (qh + i0 + i) * d;
            const float *mrow = g->mask ? g->mask + bi * g->mb + h * g->mh + (size_t)(i0 + i) * g->mi : NULL;
            int last = g->causal ? i0 + i + g->sp : T - 1; /* the last key query i sees */
            float mb = -INFINITY;
            for (int jj = 0; jj < nk; jj++) {
                int j = j0 + jj;
                const float *kj = j < g->sp ? kp + (kh * g->sp + j) * d : kc + (kh * g->sc + (j - g->sp)) * d;
                float v = j > last ? -INFINITY : KV(att_dot)(qi, kj, d) * scale;
                if (mrow) v += mrow[j];
                s[i][jj] = v;
                mb = v > mb ? v : mb;
            }
            if (mb == -INFINITY) { /* nothing visible in this block */
                for (int jj = 0; jj < nk; jj++) s[i][jj] = 0;
                continue;
            }
            float mn = m[i] > mb ? m[i] : mb, c = expf(m[i] - mn);
            m[i] = mn;
            V vm = vset1(mn);
            float p[ATT_KB], sum = 0;
            for (int jj = 0; jj < nk; jj += VL) {
                size_t r = nk - jj < VL ? (size_t)(nk - jj) : VL;
                vstoren(p + jj, KV(vexp)(vsub(vloadn(s[i] + jj, r), vm)), r);
            }
            for (int jj = 0; jj < nk; jj++) { /* exp clamps: a masked key must give 0 */
                s[i][jj] = s[i][jj] == -INFINITY ? 0 : p[jj];
                sum += s[i][jj];
            }
            l[i] = l[i] * c + sum;
            if (c != 1) KV(att_axpby)(ws + (size_t)i * dv, c, 0, ws + (size_t)i * dv, dv);
        }
        for (int jj = 0; jj < nk; jj++) {
            int j = j0 + jj;
            const float *vj = j < g->sp ? vp + (kh * g->sp + j) * dv : vc + (kh * g->sc + (j - g->sp)) * dv;
            for (int i = 0; i < nq; i++)
                if (s[i][jj] != 0) KV(att_axpby)(ws + (size_t)i * dv, 1, s[i][jj], vj, dv);
        }
    }
    for (int i = 0; i < nq; i++) {
        float *yi = y + (qh + i0 + i) * dv;
        V k = vset1(l[i] > 0 ? 1.0f / l[i] : 0.0f);
        const float *o = ws + (size_t)i * dv;
        for (int c = 0; c < dv; c += VL) {
            size_t r = dv - c < VL ? (size_t)(dv - c) : VL;
            vstoren(yi + c, vmul(vloadn(o + c, r), k), r);
        }
    }
}

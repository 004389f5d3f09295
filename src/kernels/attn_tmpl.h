/* One block of queries of one head, for the ISA of the vec_*.h included
 * before (attn.c includes it once per ISA). */

/* out[i] = q_i . k for the nq (<= 4) query rows q + i * qr: one load of k
 * feeds every query, in independent FMA chains */
static void KV(att_dot4)(const float *q, int nq, size_t qr, const float *k, int d, float *out)
{
    V a0 = vzero(), a1 = vzero(), a2 = vzero(), a3 = vzero();
    if (nq == 1) { /* one query (decoding): two chains over d */
        int e = 0;
        for (; e + 2 * VL <= d; e += 2 * VL) {
            a0 = vfma(vload(q + e), vload(k + e), a0);
            a1 = vfma(vload(q + e + VL), vload(k + e + VL), a1);
        }
        for (; e < d; e += VL) {
            size_t r = d - e < VL ? (size_t)(d - e) : VL;
            a0 = vfma(vloadn(q + e, r), vloadn(k + e, r), a0);
        }
        out[0] = vhsum(vadd(a0, a1));
        return;
    }
    const float *q1 = q + (nq > 1) * qr, *q2 = q + 2 * (nq > 2) * qr, *q3 = q + 3 * (nq > 3) * qr;
    for (int e = 0; e < d; e += VL) {
        size_t r = d - e < VL ? (size_t)(d - e) : VL;
        V kv = vloadn(k + e, r);
        a0 = vfma(vloadn(q + e, r), kv, a0);
        a1 = vfma(vloadn(q1 + e, r), kv, a1);
        a2 = vfma(vloadn(q2 + e, r), kv, a2);
        a3 = vfma(vloadn(q3 + e, r), kv, a3);
    }
    out[0] = vhsum(a0), out[1] = vhsum(a1), out[2] = vhsum(a2), out[3] = vhsum(a3);
}

/* y[0..n) = o * c (y may be o) */
static void KV(att_scale)(float *y, const float *o, float c, int n)
{
    V vc = vset1(c);
    for (int i = 0; i < n; i += VL) {
        size_t r = n - i < VL ? (size_t)(n - i) : VL;
        vstoren(y + i, vmul(vloadn(o + i, r), vc), r);
    }
}

/* o[0..n) += p * v */
static void KV(att_axpy)(float *o, float p, const float *v, int n)
{
    V vp = vset1(p);
    for (int i = 0; i < n; i += VL) {
        size_t r = n - i < VL ? (size_t)(n - i) : VL;
        vstoren(o + i, vfma(vp, vloadn(v + i, r), vloadn(o + i, r)), r);
    }
}

/* Queries [i0, i0 + nq) of head h in batch bi; ws holds nq * dv floats */
static void KV(att_block)(const katt_geom *g, const float *q, const float *kp, const float *vp,
                          const float *kc, const float *vc, float *y, int bi, int h, int i0,
                          int nq, float *ws)
{
    const int T = g->sp + g->sc, kvh = h / (g->hq / g->hkv), d = g->d, dv = g->dv;
    const float scale = g->scale != 0 ? g->scale : 1.0f / sqrtf((float)d);
    /* the head's rows: q, y and the past and current keys and values */
    const float *qh = q + bi * g->qs[0] + h * g->qs[1];
    float *yh = y + bi * g->ys[0] + h * g->ys[1];
    const float *kph = kp ? kp + bi * g->kps[0] + kvh * g->kps[1] : NULL;
    const float *vph = vp ? vp + bi * g->vps[0] + kvh * g->vps[1] : NULL;
    const float *kch = kc + bi * g->kcs[0] + kvh * g->kcs[1];
    const float *vch = vc + bi * g->vcs[0] + kvh * g->vcs[1];
    const size_t qr = g->qs[2];
    float m[ATT_QB], l[ATT_QB], s[ATT_QB][ATT_KB];
    for (int i = 0; i < nq; i++) m[i] = -INFINITY, l[i] = 0;
    memset(ws, 0, (size_t)nq * dv * sizeof *ws);
    for (int j0 = 0; j0 < T; j0 += ATT_KB) {
        int nk = T - j0 < ATT_KB ? T - j0 : ATT_KB;
        const float *q0 = qh + i0 * qr;
        for (int jj = 0; jj < nk; jj++) { /* raw scores, every query of the block */
            int j = j0 + jj;
            const float *kj = j < g->sp ? kph + j * g->kps[2] : kch + (j - g->sp) * g->kcs[2];
            float dot[4];
            KV(att_dot4)(q0, nq, qr, kj, d, dot);
            for (int i = 0; i < nq; i++) s[i][jj] = dot[i] * scale;
        }
        for (int i = 0; i < nq; i++) {
            const float *mrow = g->mask ? g->mask + bi * g->mb + h * g->mh + (size_t)(i0 + i) * g->mi : NULL;
            const unsigned char *brow =
                g->bmask ? g->bmask + bi * g->bb + h * g->bh + (size_t)(i0 + i) * g->bi : NULL;
            int last = g->causal ? i0 + i + g->sp : T - 1; /* the last key query i sees */
            float mb = -INFINITY;
            for (int jj = 0; jj < nk; jj++) {
                int j = j0 + jj;
                float v = s[i][jj];
                if (brow && (brow[j] != 0) != g->bkeep) v = g->fill;
                if (mrow) v += mrow[j];
                if (j > last) v = -INFINITY;
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
            if (c != 1) KV(att_scale)(ws + (size_t)i * dv, ws + (size_t)i * dv, c, dv);
        }
        for (int jj = 0; jj < nk; jj++) {
            int j = j0 + jj;
            const float *vj = j < g->sp ? vph + j * g->vps[2] : vch + (j - g->sp) * g->vcs[2];
            for (int i = 0; i < nq; i++)
                if (s[i][jj] != 0) KV(att_axpy)(ws + (size_t)i * dv, s[i][jj], vj, dv);
        }
    }
    for (int i = 0; i < nq; i++) /* a query that saw no key: l = 0, a zero row */
        KV(att_scale)(yh + (i0 + i) * g->ys[2], ws + (size_t)i * dv, l[i] > 0 ? 1.0f / l[i] : 0.0f, dv);
}

/* Row `row` (n visible scores, their additive mask mrow or NULL) scaled,
 * masked and stored back in vectors; its maximum (NaN skipped) and minimum.
 * At scale 1 without a mask (the GEMM's epilogue did both: attn.c's
 * att_gemm) the row is only read. */
static void KV(att_scaled)(float *row, const float *mrow, int n, float scale, float *mx, float *mn)
{
    V vs = vset1(scale), hi = vset1(-INFINITY), lo = vset1(INFINITY);
    const bool done = scale == 1.0f && !mrow;
    int j = 0;
    for (; j + VL <= n; j += VL) {
        V v = vload(row + j);
        if (!done) {
            v = vmul(v, vs);
            if (mrow) v = vadd(v, vload(mrow + j));
            vstore(row + j, v);
        }
        hi = vmax(v, hi);
        lo = vmin(v, lo);
    }
    float h = vhmax(hi), l = -vhmax(vsub(vzero(), lo));
    for (; j < n; j++) {
        float v = row[j] * scale + (mrow ? mrow[j] : 0.0f);
        row[j] = v;
        h = v > h ? v : h;
        l = v < l ? v : l;
    }
    *mx = h;
    *mn = l;
}

/* Rows [i0, i0 + nq) of head h in batch bi for the GEMM path: s holds
 * their raw scores q.k against the first T keys ([nq][T], ld T: all of
 * them, or fewer when the keys past T are masked for every row, attn.c's
 * att_gemm); each becomes exp(v - max) of its scaled, masked score v (0
 * where masked), l[i] the row's sum, mx[i] its max (-inf when it sees
 * nothing). Without a boolean mask the scores a row sees (all, or up to the
 * causal limit) are scaled and summed in vectors; an element at -inf
 * (masked by the float mask) sends its row to the element-wise loop, as
 * does a boolean mask. */
static void KV(att_probs)(const katt_geom *g, float *s, int nq, int bi, int h, int i0, float scale,
                          float *l, int T, float *mxo)
{
    for (int i = 0; i < nq; i++) {
        float *row = s + (size_t)i * T;
        const float *mrow = g->mask ? g->mask + bi * g->mb + h * g->mh + (size_t)(i0 + i) * g->mi : NULL;
        const unsigned char *brow =
            g->bmask ? g->bmask + bi * g->bb + h * g->bh + (size_t)(i0 + i) * g->bi : NULL;
        int last = g->causal ? i0 + i + g->sp : T - 1;
        float mx = -INFINITY, mn = -INFINITY;
        int nv = last + 1 < T ? last + 1 : T; /* the keys the row sees */
        if (!brow && nv > 0) KV(att_scaled)(row, mrow, nv, scale, &mx, &mn);
        if (!brow && mn != -INFINITY && mx != -INFINITY) { /* nothing masked at -inf */
            V vm = vset1(mx), acc = vzero();
            int j = 0;
            for (; j + VL <= nv; j += VL) {
                V p = KV(vexp)(vsub(vload(row + j), vm));
                vstore(row + j, p);
                acc = vadd(acc, p);
            }
            float sum = vhsum(acc), p[VL];
            if (j < nv) {
                size_t r = (size_t)(nv - j);
                vstoren(p, KV(vexp)(vsub(vloadn(row + j, r), vm)), r);
                for (size_t k = 0; k < r; k++) sum += row[j + k] = p[k];
            }
            if (nv < T) memset(row + nv, 0, sizeof *row * (size_t)(T - nv));
            l[i] = sum;
            mxo[i] = mx;
            continue;
        }
        mx = -INFINITY;
        for (int j = 0; j < T; j++) {
            float v = brow || j >= nv ? row[j] * scale : row[j]; /* att_scaled's rows are done */
            if (brow && (brow[j] != 0) != g->bkeep) v = g->fill;
            if (mrow && (brow || j >= nv)) v += mrow[j];
            if (j > last) v = -INFINITY;
            row[j] = v;
            mx = v > mx ? v : mx;
        }
        mxo[i] = mx;
        if (mx == -INFINITY) { /* nothing visible: a zero row */
            memset(row, 0, sizeof *row * (size_t)T);
            l[i] = 0;
            continue;
        }
        V vm = vset1(mx);
        float sum = 0, p[VL];
        for (int j = 0; j < T; j += VL) {
            size_t r = T - j < VL ? (size_t)(T - j) : VL;
            vstoren(p, KV(vexp)(vsub(vloadn(row + j, r), vm)), r);
            for (size_t k = 0; k < r; k++) { /* exp clamps: a masked key must give 0 */
                row[j + k] = row[j + k] == -INFINITY ? 0 : p[k];
                sum += row[j + k];
            }
        }
        l[i] = sum;
    }
}

/* Pooling of one output row and of one whole plane, for the ISA of the
 * vec_*.h included before (pool.c includes it once per ISA). */

/* Taps of one axis at output o: those inside [0, in) are [*k0, *k1); the
 * return value counts those inside the padded input [-pad0, in + pad1). */
static inline int KV(pool_taps)(int o, int in, int k, int s, int d, int pad0, int pad1, int *k0,
                                int *k1)
{
    int i0 = o * s - pad0, a = 0, b = k, pa = 0, pb = k;
    while (a < b && i0 + a * d < 0) a++;
    while (b > a && i0 + (b - 1) * d >= in) b--;
    while (pb > pa && i0 + (pb - 1) * d >= in + pad1) pb--;
    *k0 = a, *k1 = b;
    return pb - pa;
}

static inline float KV(pool_one)(kpool_kind kind, const kpool_geom *g, const float *xp, int iy0,
                                 int ky0, int ky1, int py, int ox)
{
    int kx0, kx1, px = KV(pool_taps)(ox, g->w, g->kw, g->sw, g->dw, g->pl, g->pr, &kx0, &kx1);
    int ix0 = ox * g->sw - g->pl;
    float acc = kind == KPOOL_MAX ? -INFINITY : 0.0f;
    for (int ky = ky0; ky < ky1; ky++) {
        const float *row = xp + (size_t)(iy0 + ky * g->dh) * g->w;
        for (int kx = kx0; kx < kx1; kx++) {
            float v = row[ix0 + kx * g->dw];
            if (kind == KPOOL_MAX) acc = v > acc ? v : acc;
            else acc += v;
        }
    }
    if (kind == KPOOL_MAX) return acc;
    int cnt = g->include_pad ? py * px : (ky1 - ky0) * (kx1 - kx0);
    return cnt ? acc / (float)cnt : 0.0f;
}

static void KV(pool_row)(kpool_kind kind, const kpool_geom *g, const float *xp, int oy, int lo,
                         int hi, float *yrow)
{
    int ky0, ky1, py = KV(pool_taps)(oy, g->h, g->kh, g->sh, g->dh, g->pt, g->pb, &ky0, &ky1);
    int iy0 = oy * g->sh - g->pt, ox = 0;
    for (; ox < lo; ox++) yrow[ox] = KV(pool_one)(kind, g, xp, iy0, ky0, ky1, py, ox);
    const int sw = g->sw, dw = g->dw;
    int cnt = g->include_pad ? py * g->kw : (ky1 - ky0) * g->kw;
    V scale = vset1(cnt ? 1.0f / (float)cnt : 0.0f);
    for (; ox + VL <= hi; ox += VL) {
        const float *base = xp + (ptrdiff_t)ox * sw - g->pl;
        V acc = vset1(kind == KPOOL_MAX ? -INFINITY : 0.0f);
        for (int ky = ky0; ky < ky1; ky++) {
            const float *row = base + (size_t)(iy0 + ky * g->dh) * g->w;
            if (kind == KPOOL_MAX)
                for (int kx = 0; kx < g->kw; kx++) acc = vmax(acc, vloads(row + kx * dw, sw));
            else
                for (int kx = 0; kx < g->kw; kx++) acc = vadd(acc, vloads(row + kx * dw, sw));
        }
        vstore(yrow + ox, kind == KPOOL_MAX ? acc : vmul(acc, scale));
    }
    if (ox < hi) { /* the last part vector, masked (lanes past r load 0, never stored) */
        size_t r = (size_t)(hi - ox);
        const float *base = xp + (ptrdiff_t)ox * sw - g->pl;
        V acc = vset1(kind == KPOOL_MAX ? -INFINITY : 0.0f);
        for (int ky = ky0; ky < ky1; ky++) {
            const float *row = base + (size_t)(iy0 + ky * g->dh) * g->w;
            if (kind == KPOOL_MAX)
                for (int kx = 0; kx < g->kw; kx++) acc = vmax(acc, vloadsn(row + kx * dw, sw, r));
            else
                for (int kx = 0; kx < g->kw; kx++) acc = vadd(acc, vloadsn(row + kx * dw, sw, r));
        }
        vstoren(yrow + ox, kind == KPOOL_MAX ? acc : vmul(acc, scale), r);
        ox = hi;
    }
    for (; ox < g->ow; ox++) yrow[ox] = KV(pool_one)(kind, g, xp, iy0, ky0, ky1, py, ox);
}

static float KV(pool_plane)(kpool_kind kind, const float *x, size_t n)
{
    V acc = vset1(kind == KPOOL_MAX ? -INFINITY : 0.0f);
    size_t i = 0;
    for (; i + VL <= n; i += VL) acc = kind == KPOOL_MAX ? vmax(acc, vload(x + i)) : vadd(acc, vload(x + i));
    float s = kind == KPOOL_MAX ? vhmax(acc) : vhsum(acc);
    for (; i < n; i++) s = kind == KPOOL_MAX ? (x[i] > s ? x[i] : s) : s + x[i];
    return kind == KPOOL_MAX ? s : n ? s / (float)n : 0.0f;
}

/* Channels-last: the taps of one output pixel, tp[0 .. nt) (each the
 * tap's pixel, c channels), folded into yp [c]: four vectors of channels
 * at a time, each tap's pointer made once per pixel rather than per tap
 * and vector, so that the loads, not the index arithmetic, set the pace
 * (squeezenet1_1's three MaxPools were 10% of its native run). The taps
 * in the same order as before: the same sums, bit for bit. */
static void KV(pool_nhwc_taps)(kpool_kind kind, const float *const *tp, int nt, int c, V scale,
                               float *yp)
{
    const V init = vset1(kind == KPOOL_MAX ? -INFINITY : 0.0f);
    int c0 = 0;
    for (; c0 + 4 * VL <= c; c0 += 4 * VL) {
        V a0 = init, a1 = init, a2 = init, a3 = init;
        for (int t = 0; t < nt; t++) {
            const float *p = tp[t] + c0;
            if (kind == KPOOL_MAX) {
                a0 = vmax(a0, vload(p)), a1 = vmax(a1, vload(p + VL));
                a2 = vmax(a2, vload(p + 2 * VL)), a3 = vmax(a3, vload(p + 3 * VL));
            } else {
                a0 = vadd(a0, vload(p)), a1 = vadd(a1, vload(p + VL));
                a2 = vadd(a2, vload(p + 2 * VL)), a3 = vadd(a3, vload(p + 3 * VL));
            }
        }
        if (kind != KPOOL_MAX) {
            a0 = vmul(a0, scale), a1 = vmul(a1, scale);
            a2 = vmul(a2, scale), a3 = vmul(a3, scale);
        }
        vstore(yp + c0, a0), vstore(yp + c0 + VL, a1);
        vstore(yp + c0 + 2 * VL, a2), vstore(yp + c0 + 3 * VL, a3);
    }
    for (; c0 < c; c0 += VL) { /* then a vector at a time, the last one masked */
        size_t r = (size_t)(c - c0 < VL ? c - c0 : VL);
        V acc = init;
        for (int t = 0; t < nt; t++) {
            V v = r == VL ? vload(tp[t] + c0) : vloadn(tp[t] + c0, r);
            acc = kind == KPOOL_MAX ? vmax(acc, v) : vadd(acc, v);
        }
        if (kind != KPOOL_MAX) acc = vmul(acc, scale);
        if (r == VL)
            vstore(yp + c0, acc);
        else
            vstoren(yp + c0, acc, r);
    }
}

/* Taps per output pixel pool_nhwc_row lists at once (more: in chunks). */
#define POOL_NHWC_TAPS 64

/* Channels-last: output row oy of one image, x [h][w][c] and yrow [ow][c],
 * the channels the vector axis (a masked last part). A window of more than
 * POOL_NHWC_TAPS taps inside the input folds them in chunks through yrow. */
static void KV(pool_nhwc_row)(kpool_kind kind, const kpool_geom *g, const float *x, int oy,
                              float *yrow)
{
    int ky0, ky1, py = KV(pool_taps)(oy, g->h, g->kh, g->sh, g->dh, g->pt, g->pb, &ky0, &ky1);
    const int iy0 = oy * g->sh - g->pt, c = g->c;
    const float *tp[POOL_NHWC_TAPS];
    for (int ox = 0; ox < g->ow; ox++) {
        int kx0, kx1, px = KV(pool_taps)(ox, g->w, g->kw, g->sw, g->dw, g->pl, g->pr, &kx0, &kx1);
        const int ix0 = ox * g->sw - g->pl;
        int cnt = g->include_pad ? py * px : (ky1 - ky0) * (kx1 - kx0);
        V scale = vset1(cnt ? 1.0f / (float)cnt : 0.0f);
        float *yp = yrow + (size_t)ox * c;
        int nt = 0;
        for (int ky = ky0; ky < ky1; ky++)
            for (int kx = kx0; kx < kx1; kx++) {
                /* a full list: folded, and carried on from yp (its first tap) */
                if (nt == POOL_NHWC_TAPS) {
                    KV(pool_nhwc_taps)(kind, tp, nt, c, vset1(1.0f), yp);
                    tp[0] = yp, nt = 1;
                }
                tp[nt++] = x + ((size_t)(iy0 + ky * g->dh) * g->w + ix0 + kx * g->dw) * c;
            }
        KV(pool_nhwc_taps)(kind, tp, nt, c, scale, yp);
    }
}

/* Channels-last max of uint8 bytes (static int8's activations, nat_val.q8):
 * output row oy of one image, x [h][w][c] and yrow [ow][c] bytes; a plain
 * loop over the channels that each ISA's target vectorises. A window with
 * no tap inside the input gives 0. */
static void KV(pool_nhwc_max_u8_row)(const kpool_geom *g, const uint8_t *x, int oy, uint8_t *yrow)
{
    int ky0, ky1, kx0, kx1;
    (void)KV(pool_taps)(oy, g->h, g->kh, g->sh, g->dh, g->pt, g->pb, &ky0, &ky1);
    const int iy0 = oy * g->sh - g->pt, c = g->c;
    for (int ox = 0; ox < g->ow; ox++) {
        (void)KV(pool_taps)(ox, g->w, g->kw, g->sw, g->dw, g->pl, g->pr, &kx0, &kx1);
        const int ix0 = ox * g->sw - g->pl;
        uint8_t *restrict yp = yrow + (size_t)ox * c;
        const uint8_t *w0 = ky0 < ky1 && kx0 < kx1 /* the first tap inside, if any */
                                ? x + ((size_t)(iy0 + ky0 * g->dh) * g->w + ix0 + kx0 * g->dw) * c
                                : x;
        const size_t sy = (size_t)g->dh * g->w * c, sx = (size_t)g->dw * c;
        int ci = 0;
#ifdef VB
        /* VBN channels at a time in a register (VB), every tap read once and the
         * register stored once (the ISAs whose vec_*.h define VB): with the
         * output row as the accumulator, each tap loaded and stored it again
         * (resnet18's stem MaxPool, static int8: 2.0-2.3% of batch 8) */
        for (; ci + VBN <= c; ci += VBN) {
            VB m = vb_zero();
            for (int ky = ky0; ky < ky1; ky++)
                for (int kx = kx0; kx < kx1; kx++)
                    m = vb_max(m, vb_load(w0 + (size_t)(ky - ky0) * sy + (size_t)(kx - kx0) * sx + ci));
            vb_store(yp + ci, m);
        }
#endif
        if (ci == c) continue;
        memset(yp + ci, 0, (size_t)(c - ci));
        for (int ky = ky0; ky < ky1; ky++)
            for (int kx = kx0; kx < kx1; kx++) {
                const uint8_t *restrict p = w0 + (size_t)(ky - ky0) * sy + (size_t)(kx - kx0) * sx;
                for (int i = ci; i < c; i++) yp[i] = p[i] > yp[i] ? p[i] : yp[i];
            }
    }
}

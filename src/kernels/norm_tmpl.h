/* One row of LayerNorm, RMSNorm or Softmax, for the ISA of the vec_*.h
 * included before (norm.c includes it once per ISA). Sums in float lanes;
 * the variance is a second pass over the row (in cache), not E[x^2] - m^2. */

/* Four accumulators a pass: a row of 256 floats is 16 vectors, and one
 * chain of 16 dependent adds (4 cycles each) set each pass's pace. */
static float KV(row_sum)(const float *x, size_t d)
{
    V a0 = vzero(), a1 = vzero(), a2 = vzero(), a3 = vzero();
    size_t i = 0;
    for (; i + 4 * VL <= d; i += 4 * VL) {
        a0 = vadd(a0, vload(x + i));
        a1 = vadd(a1, vload(x + i + VL));
        a2 = vadd(a2, vload(x + i + 2 * VL));
        a3 = vadd(a3, vload(x + i + 3 * VL));
    }
    for (; i < d; i += VL) a0 = vadd(a0, vloadn(x + i, d - i < VL ? d - i : VL));
    return vhsum(vadd(vadd(a0, a1), vadd(a2, a3)));
}

/* sum of (x - m)^2 */
static float KV(row_dev2)(const float *x, size_t d, float m)
{
    V vm = vset1(m), a0 = vzero(), a1 = vzero(), a2 = vzero(), a3 = vzero();
    size_t i = 0;
    for (; i + 4 * VL <= d; i += 4 * VL) {
        V v0 = vsub(vload(x + i), vm), v1 = vsub(vload(x + i + VL), vm);
        V v2 = vsub(vload(x + i + 2 * VL), vm), v3 = vsub(vload(x + i + 3 * VL), vm);
        a0 = vfma(v0, v0, a0);
        a1 = vfma(v1, v1, a1);
        a2 = vfma(v2, v2, a2);
        a3 = vfma(v3, v3, a3);
    }
    for (; i < d; i += VL) {
        size_t r = d - i < VL ? d - i : VL;
        V v = vsub(vloadn(x + i, r), vm);
        if (r < VL) v = vmul(v, vloadn(ones_f, r)); /* lanes past d load 0 - m */
        a0 = vfma(v, v, a0);
    }
    return vhsum(vadd(vadd(a0, a1), vadd(a2, a3)));
}

/* y = (x - m) * k * scale + bias: whole vectors unmasked (LayerNorm's
 * usual case, scale and bias both given, a loop of its own), then the
 * masked tail (a masked load and store every vector cost bert's LayerNorm
 * about a fifth of its time, bench/RESULTS.md "bert int8dq: the GELU's
 * range in its pass") */
static void KV(row_affine)(const float *x, const float *scale, const float *bias, float *y,
                           size_t d, float m, float k)
{
    V vm = vset1(m), vk = vset1(k);
    size_t i = 0;
    if (scale && bias)
        for (; i + VL <= d; i += VL)
            vstore(y + i, vadd(vmul(vmul(vsub(vload(x + i), vm), vk), vload(scale + i)), vload(bias + i)));
    for (; i < d; i += VL) {
        size_t r = d - i < VL ? d - i : VL;
        V v = vmul(vsub(vloadn(x + i, r), vm), vk);
        if (scale) v = vmul(v, vloadn(scale + i, r));
        if (bias) v = vadd(v, vloadn(bias + i, r));
        vstoren(y + i, v, r);
    }
}

static void KV(norm_row)(const float *x, const float *scale, const float *bias, float *y,
                         size_t d, float eps, int rms)
{
    float m = rms ? 0.0f : KV(row_sum)(x, d) / (float)d;
    float var = KV(row_dev2)(x, d, m) / (float)d;
    KV(row_affine)(x, scale, bias, y, d, m, 1.0f / sqrtf(var + eps));
}

static void KV(softmax_row)(const float *x, float *y, size_t d, int log_)
{
    V mx = vset1(-INFINITY);
    size_t i = 0;
    for (; i + VL <= d; i += VL) mx = vmax(mx, vload(x + i));
    float m = vhmax(mx);
    for (; i < d; i++) m = x[i] > m ? x[i] : m;
    if (m == -INFINITY) { /* a row of -inf: 0 / 0, as Softmax's definition gives */
        for (i = 0; i < d; i++) y[i] = NAN;
        return;
    }
    V vm = vset1(m), acc = vzero();
    for (i = 0; i < d; i += VL) {
        size_t r = d - i < VL ? d - i : VL;
        V e = KV(vexp)(vsub(vloadn(x + i, r), vm));
        if (r < VL) e = vmul(e, vloadn(ones_f, r));
        if (!log_) vstoren(y + i, e, r);
        acc = vadd(acc, e);
    }
    float s = vhsum(acc);
    if (log_) {
        V ls = vset1(logf(s)); /* (x - m) - log s: m + log s would round at m's scale */
        for (i = 0; i < d; i += VL) {
            size_t r = d - i < VL ? d - i : VL;
            vstoren(y + i, vsub(vsub(vloadn(x + i, r), vm), ls), r);
        }
        return;
    }
    V k = vset1(1.0f / s);
    for (i = 0; i < d; i += VL) {
        size_t r = d - i < VL ? d - i : VL;
        vstoren(y + i, vmul(vloadn(y + i, r), k), r);
    }
}

/* kaffine's functions for one ISA (chan_affine.c includes it after a
 * vec_*.h): vectors along the channels of a row, or along a packed panel's
 * w values of one channel (its factor broadcast). */
#define KAF_CAT2(a, b) a##_##b
#define KAF_CAT(a, b) KAF_CAT2(a, b)
#define KAF(name) KAF_CAT(name, KSUF)

/* lo <= v <= hi, NaN kept: max and min return their second operand on a NaN */
#define KAF_CLAMP(v) vmin(hi, vmax(lo, v))

static void KAF(affine_rows)(const kaffine *f, int64_t k0, int64_t k, const float *x, int64_t rsx,
                             int64_t csx, int64_t rows, float *y, int64_t ldy)
{
    const float *s = f->s + k0, *t = f->t ? f->t + k0 : NULL;
    const V lo = vset1(f->lo), hi = vset1(f->hi);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * rsx;
        float *yr = y + r * ldy;
        if (csx != 1) {
            for (int64_t p = 0; p < k; p++) {
                float v = xr[p * csx] * s[p] + (t ? t[p] : 0.0f);
                v = v < f->lo ? f->lo : v;
                yr[p] = v > f->hi ? f->hi : v;
            }
            continue;
        }
        int64_t p = 0;
        if (t) {
            for (; p + VL <= k; p += VL) vstore(yr + p, KAF_CLAMP(vfma(vload(xr + p), vload(s + p), vload(t + p))));
            if (p < k) {
                size_t n = (size_t)(k - p);
                vstoren(yr + p, KAF_CLAMP(vfma(vloadn(xr + p, n), vloadn(s + p, n), vloadn(t + p, n))), n);
            }
        } else {
            for (; p + VL <= k; p += VL) vstore(yr + p, KAF_CLAMP(vmul(vload(xr + p), vload(s + p))));
            if (p < k) {
                size_t n = (size_t)(k - p);
                vstoren(yr + p, KAF_CLAMP(vmul(vloadn(xr + p, n), vloadn(s + p, n))), n);
            }
        }
    }
}

static void KAF(affine_panels)(const kaffine *f, int64_t k0, int w, int64_t kb, int64_t panels,
                               float *d, int64_t ps)
{
    const float *s = f->s + k0, *t = f->t ? f->t + k0 : NULL;
    const V lo = vset1(f->lo), hi = vset1(f->hi);
    for (int64_t i = 0; i < panels; i++)
        for (int64_t p = 0; p < kb; p++) {
            float *q = d + i * ps + p * w;
            const V sv = vset1(s[p]), tv = vset1(t ? t[p] : 0.0f);
            int r = 0;
            for (; r + VL <= w; r += VL) vstore(q + r, KAF_CLAMP(vfma(vload(q + r), sv, tv)));
            if (r < w) {
                size_t n = (size_t)(w - r);
                vstoren(q + r, KAF_CLAMP(vfma(vloadn(q + r, n), sv, tv)), n);
            }
        }
}

#undef KAF_CLAMP
#undef KAF
#undef KAF_CAT
#undef KAF_CAT2

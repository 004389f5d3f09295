/* Resize rows, for the ISA of the vec_*.h included before (resize.c
 * includes it once per ISA): gathers through the column tables. */

/* y = row[i0[x]] for nearest */
__attribute__((unused)) static void KV(rz_near)(const rz_axis *ax, const float *row, size_t n, float *y)
{
    for (size_t i = 0; i < n; i += VL) {
        size_t r = n - i < VL ? n - i : VL;
        vstoren(y + i, vgathern(row, ax->i0 + i, r), r);
    }
}

/* h = one input row interpolated along x */
__attribute__((unused)) static void KV(rz_hrow)(const rz_axis *ax, const float *row, size_t n, float *h)
{
    for (size_t i = 0; i < n; i += VL) {
        size_t r = n - i < VL ? n - i : VL;
        V a = vgathern(row, ax->i0 + i, r), b = vgathern(row, ax->i1 + i, r);
        vstoren(h + i, vfma(vloadn(ax->w + i, r), vsub(b, a), a), r);
    }
}

/* y = h0 + wy (h1 - h0) */
static void KV(rz_vmix)(const float *h0, const float *h1, float wy, size_t n, float *y)
{
    V w = vset1(wy);
    for (size_t i = 0; i < n; i += VL) {
        size_t r = n - i < VL ? n - i : VL;
        V a = vloadn(h0 + i, r);
        vstoren(y + i, vfma(w, vsub(vloadn(h1 + i, r), a), a), r);
    }
}

/* y = each of row's n values f times (f 2, 4 or 8): nearest upsampling by
 * a whole power of two along x, interleaved in registers instead of
 * gathered */
__attribute__((unused)) static void KV(rz_rep)(const float *row, size_t n, int f, float *y)
{
    for (size_t i = 0; i < n; i += VL) {
        size_t r = n - i < VL ? n - i : VL, left = (size_t)f * r;
        V b[8];
        b[0] = vloadn(row + i, r);
        for (int m = 1; m < f; m *= 2)
            for (int j = m - 1; j >= 0; j--) {
                V t = b[j];
                vzip(t, t, b[2 * j], b[2 * j + 1]);
            }
        for (int k = 0; k < f && left; k++) {
            size_t c = left < VL ? left : VL;
            vstoren(y + (size_t)f * i + (size_t)k * VL, b[k], c);
            left -= c;
        }
    }
}

/* One channels-last output row of nearest: pixel ox (ys floats apart in y)
 * the c values of input pixel ix[ox] of row xr, plus row rr's (c apart)
 * when rr is not NULL, in vectors */
static void KV(rz_nhwc_row)(const float *xr, const int32_t *ix, const float *rr, size_t ow, size_t c,
                            float *y, size_t ys)
{
    for (size_t ox = 0; ox < ow; ox++, y += ys) {
        const float *x = xr + (size_t)ix[ox] * c, *r = rr ? rr + ox * c : NULL;
        for (size_t i = 0; i < c; i += VL) {
            size_t k = c - i < VL ? c - i : VL;
            V a = vloadn(x + i, k);
            vstoren(y + i, r ? vadd(a, vloadn(r + i, k)) : a, k);
        }
    }
}

/* One output row of Resize, for the ISA of the vec_*.h included before
 * (resize.c includes it once per ISA): gathers through the column tables. */

static void KV(rz_row)(const krz_geom *g, const rz_axis *ax, const float *r0, const float *r1,
                       float wy, float *y)
{
    const size_t n = (size_t)g->ow;
    if (!g->linear) {
        for (size_t i = 0; i < n; i += VL) {
            size_t r = n - i < VL ? n - i : VL;
            vstoren(y + i, vgathern(r0, ax->i0 + i, r), r);
        }
        return;
    }
    V vwy = vset1(wy);
    for (size_t i = 0; i < n; i += VL) {
        size_t r = n - i < VL ? n - i : VL;
        V w = vloadn(ax->w + i, r);
        V a0 = vgathern(r0, ax->i0 + i, r), b0 = vgathern(r0, ax->i1 + i, r);
        V a1 = vgathern(r1, ax->i0 + i, r), b1 = vgathern(r1, ax->i1 + i, r);
        V h0 = vfma(w, vsub(b0, a0), a0), h1 = vfma(w, vsub(b1, a1), a1);
        vstoren(y + i, vfma(vwy, vsub(h1, h0), h0), r);
    }
}

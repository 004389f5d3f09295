/* klstm_cell for the ISA of the vec_*.h included before (lstm.c includes
 * it once per ISA). */

static void KV(lstm_cell)(const float *g, float *c, float *h, size_t n)
{
    for (size_t j = 0; j < n; j += VL) {
        size_t r = n - j < VL ? n - j : VL;
        V i = KV(vsigmoid)(vloadn(g + j, r));
        V o = KV(vsigmoid)(vloadn(g + n + j, r));
        V f = KV(vsigmoid)(vloadn(g + 2 * n + j, r));
        V u = KV(vtanh)(vloadn(g + 3 * n + j, r));
        V cn = vfma(f, vloadn(c + j, r), vmul(i, u));
        vstoren(c + j, cn, r);
        vstoren(h + j, vmul(o, KV(vtanh)(cn)), r);
    }
}

/* The element-wise program over one tile, for the ISA of the vec_*.h
 * included before (eltwise.c includes it once per ISA). */

/* y[0..len) = v op o over one tile: o broadcast (bc) or loaded from q. */
#define EW_BIN(EXPR)                                                                       \
    if (bc) {                                                                              \
        V o = vset1(s);                                                                    \
        for (size_t i = 0; i < len; i += VL) {                                             \
            size_t r = len - i < VL ? len - i : VL;                                        \
            V v = vloadn(in + i, r);                                                       \
            vstoren(out + i, EXPR, r);                                                     \
        }                                                                                  \
    } else {                                                                               \
        for (size_t i = 0; i < len; i += VL) {                                             \
            size_t r = len - i < VL ? len - i : VL;                                        \
            V v = vloadn(in + i, r), o = vloadn(q + i, r);                                 \
            vstoren(out + i, EXPR, r);                                                     \
        }                                                                                  \
    }                                                                                      \
    break;

/* The program over x[i0 .. i0 + len), all of channel c, into y; t is a
 * scratch tile of len floats. */
static void KV(ew_tile)(const kew_prog *p, const float *x, float *y, size_t i0, size_t len,
                        size_t c, float *t)
{
    const float *in = x + i0;
    if (p->n == 0) {
        if (y != x) memmove(y + i0, in, len * sizeof *y);
        return;
    }
    for (int k = 0; k < p->n; k++) {
        const kew_step *st = &p->s[k];
        float *out = k == p->n - 1 ? y + i0 : t;
        if (st->op == KEW_FUN) {
            KV(fun_row)(out, in, len, st->f, st->a, st->b);
            in = out;
            continue;
        }
        int bc = st->src == KEW_SCALAR || st->src == KEW_CHANNEL;
        float s = st->src == KEW_CHANNEL ? st->p[c] : st->a;
        const float *q = st->src == KEW_TENSOR ? st->p + i0 : x + i0;
        switch (st->op) {
        case KEW_ADD: EW_BIN(vadd(v, o))
        case KEW_SUB: EW_BIN(vsub(v, o))
        case KEW_RSUB: EW_BIN(vsub(o, v))
        case KEW_MUL: EW_BIN(vmul(v, o))
        case KEW_DIV: EW_BIN(vdiv(v, o))
        case KEW_RDIV: EW_BIN(vdiv(o, v))
        case KEW_MAX: EW_BIN(vmax(v, o))
        case KEW_MIN: EW_BIN(vmin(v, o))
        default: break;
        }
        in = out;
    }
}
#undef EW_BIN

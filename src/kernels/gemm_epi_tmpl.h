/* The GEMM epilogue's row loops for the ISA of the vec_*.h included before
 * (gemm_epi.c includes it once per ISA): plain C the compiler vectorises
 * under that target, operands in locals and restrict pointers (a float the
 * loop could alias would be reloaded each element and stop it). */

/* Rows [0, mr) of c (n floats each, ldc apart) through f with each row's
 * range folded into its lanes pl, ph (GEMM_RANGE_LANES apart; as
 * epi_tile's fold) while each vector is in a register: the activation's
 * pass and the range's in one (bert's GELU before FFN2, bench/RESULTS.md
 * "bert int8dq: the GELU's range in its pass"), the function's constants
 * set once for the tile, not once a row. The tail's vector is reloaded
 * after its store: its lanes past n are 0, as epi_tile's fold reads them,
 * not f(0). */
#define KV_FUN_RANGE_LOOP(F)                                                                     \
    for (int i = 0; i < mr; i++) {                                                               \
        float *r = c + i * ldc, *pl = rl + i * GEMM_RANGE_LANES, *ph = rh + i * GEMM_RANGE_LANES; \
        V l = vload(pl), h = vload(ph); /* vmin(x, acc): a NaN x leaves acc */                   \
        int j = 0;                                                                               \
        for (; j + 2 * VL <= n; j += 2 * VL) {                                                   \
            V u0 = KV(vfun)(vload(r + j), F, a, b), u1 = KV(vfun)(vload(r + j + VL), F, a, b);   \
            vstore(r + j, u0);                                                                   \
            vstore(r + j + VL, u1);                                                              \
            l = vmin(u1, vmin(u0, l));                                                           \
            h = vmax(u1, vmax(u0, h));                                                           \
        }                                                                                        \
        for (; j + VL <= n; j += VL) {                                                           \
            V u = KV(vfun)(vload(r + j), F, a, b);                                               \
            vstore(r + j, u);                                                                    \
            l = vmin(u, l);                                                                      \
            h = vmax(u, h);                                                                      \
        }                                                                                        \
        if (j < n) {                                                                             \
            const size_t t = (size_t)(n - j);                                                    \
            vstoren(r + j, KV(vfun)(vloadn(r + j, t), F, a, b), t);                              \
            V x = vloadn(r + j, t); /* 0 past n: in range */                                     \
            l = vmin(x, l);                                                                      \
            h = vmax(x, h);                                                                      \
        }                                                                                        \
        vstore(pl, l);                                                                           \
        vstore(ph, h);                                                                           \
    }
#define KV_FUN_RANGE_CASE(F) \
    case F: KV_FUN_RANGE_LOOP(F) return;
/* the transcendental ones a case each (f a constant in the loops), the
 * rest through vfun's switch */
static void KV(fun_tile_range)(float *c, int64_t ldc, int mr, int n, kfun f, float a, float b,
                               float *rl, float *rh)
{
    switch (f) {
        KV_FUN_RANGE_CASE(KF_GELU_ERF)
        KV_FUN_RANGE_CASE(KF_GELU_TANH)
        KV_FUN_RANGE_CASE(KF_SILU)
        KV_FUN_RANGE_CASE(KF_SIGMOID)
        KV_FUN_RANGE_CASE(KF_TANH)
    default: KV_FUN_RANGE_LOOP(f)
    }
}
#undef KV_FUN_RANGE_LOOP
#undef KV_FUN_RANGE_CASE

/* Rows [0, mr) of c (n floats each, ldc apart) plus bias bc (a column
 * bias, or NULL) through f in one pass, the function's constants set once
 * for the tile: epi_tile's common transcendental form (efficientnet's
 * bias + SiLU after each expansion 1x1), which otherwise passes each row
 * twice and sets the function up once a row. The same operations in the
 * same order as the two passes: the same results, bit for bit. */
#define KV_FUN_BIAS_LOOP(F)                                                                      \
    for (int i = 0; i < mr; i++) {                                                               \
        float *r = c + i * ldc;                                                                  \
        int j = 0;                                                                               \
        for (; j + VL <= n; j += VL) {                                                           \
            V x = bc ? vadd(vload(r + j), vload(bc + j)) : vload(r + j);                         \
            vstore(r + j, KV(vfun)(x, F, a, b));                                                 \
        }                                                                                        \
        if (j < n) {                                                                             \
            const size_t t = (size_t)(n - j);                                                    \
            V x = bc ? vadd(vloadn(r + j, t), vloadn(bc + j, t)) : vloadn(r + j, t);             \
            vstoren(r + j, KV(vfun)(x, F, a, b), t);                                             \
        }                                                                                        \
    }
#define KV_FUN_BIAS_CASE(F) \
    case F: KV_FUN_BIAS_LOOP(F) return;
static void KV(fun_tile_bias)(float *c, int64_t ldc, int mr, int n, const float *bc, kfun f,
                              float a, float b)
{
    switch (f) {
        KV_FUN_BIAS_CASE(KF_SILU)
        KV_FUN_BIAS_CASE(KF_SIGMOID)
        KV_FUN_BIAS_CASE(KF_GELU_ERF)
        KV_FUN_BIAS_CASE(KF_GELU_TANH)
        KV_FUN_BIAS_CASE(KF_TANH)
    default: KV_FUN_BIAS_LOOP(f)
    }
}
#undef KV_FUN_BIAS_LOOP
#undef KV_FUN_BIAS_CASE

static void KV(epi_tile)(const gemm_epi *e, float *c, int64_t ldc, int64_t i0, int64_t j0, int mr,
                         int nr)
{
    const float scale = e->scale, lo = e->lo, hi = e->hi;
    const float rk = e->res_scale != 0.0f ? e->res_scale : 1.0f;
    const bool simple = e->act == GEMM_ACT_NONE || e->act == GEMM_ACT_RELU ||
                        e->act == GEMM_ACT_CLIP || e->act == GEMM_ACT_LEAKY;
    const kfun f = simple ? KF_NONE : gemm_act_fun(e->act);
    const bool fused = !simple && e->rlo && !(e->res && e->res_after);
    if (!simple && !e->scaled && !e->res && !e->rlo && e->bias_mode != GEMM_BIAS_ROW) {
        KV(fun_tile_bias)(c, ldc, mr, nr, e->bias_mode == GEMM_BIAS_COL ? e->bias + j0 : NULL, f, lo, hi);
        return;
    }
    for (int i = 0; i < mr; i++) {
        float *restrict r = c + i * ldc;
        const float *restrict s = e->res ? e->res + (i0 + i) * e->ldr + j0 : NULL;
        if (e->scaled)
            for (int j = 0; j < nr; j++) r[j] *= scale;
        if (e->bias_mode == GEMM_BIAS_ROW) {
            const float b = e->bias[i0 + i];
            for (int j = 0; j < nr; j++) r[j] += b;
        } else if (e->bias_mode == GEMM_BIAS_COL) {
            const float *restrict b = e->bias + j0;
            for (int j = 0; j < nr; j++) r[j] += b[j];
        }
        if (s && !e->res_after)
            for (int j = 0; j < nr; j++) r[j] += rk * s[j];
        switch (e->act) {
        case GEMM_ACT_NONE: break;
        case GEMM_ACT_RELU:
            for (int j = 0; j < nr; j++) r[j] = r[j] > 0.0f ? r[j] : 0.0f;
            break;
        case GEMM_ACT_CLIP:
            for (int j = 0; j < nr; j++) {
                float v = r[j] < lo ? lo : r[j];
                r[j] = v > hi ? hi : v;
            }
            break;
        case GEMM_ACT_LEAKY:
            for (int j = 0; j < nr; j++) r[j] = r[j] < 0.0f ? lo * r[j] : r[j];
            break;
        default: break;
        }
        if (fused) continue; /* the function and the range: fun_tile_range below */
        if (!simple) KV(fun_row)(r, r, (size_t)nr, f, lo, hi);
        if (s && e->res_after)
            for (int j = 0; j < nr; j++) r[j] += rk * s[j];
        if (e->rlo) { /* vmin(x, acc): a NaN x leaves acc (x86's min, vmin_portable) */
            float *pl = e->rlo + (i0 + i) * GEMM_RANGE_LANES, *ph = e->rhi + (i0 + i) * GEMM_RANGE_LANES;
            V l = vload(pl), h = vload(ph); /* VL <= the lanes: the rest stay 0 */
            for (int j = 0; j < nr; j += VL) {
                V x = vloadn(r + j, nr - j < VL ? (size_t)(nr - j) : VL); /* 0 past nr: in range */
                l = vmin(x, l);
                h = vmax(x, h);
            }
            vstore(pl, l);
            vstore(ph, h);
        }
    }
    if (fused)
        KV(fun_tile_range)(c, ldc, mr, nr, f, lo, hi, e->rlo + i0 * GEMM_RANGE_LANES,
                           e->rhi + i0 * GEMM_RANGE_LANES);
}

/* The implicit-GEMM convolution's register tiles for the ISA of the vec_*.h
 * included before (conv_ig.c includes it once per ISA): M output pixels by
 * NV vectors of output channels, the sum over every run of taps (kernel
 * rows) and channels kept in registers, so C is written once, with the
 * epilogue applied before the store (kig_tile's fuse; its common forms,
 * a bias by column and Relu or Clip, inline with the bias loaded once per
 * tile: kig_tile's quick). Pixel i's taps of
 * run q start at a + roff[q] + i * rsa (k contiguous floats); B's row p of
 * run q at b[q] + p * nr within each NR-wide packed panel (panels sb floats
 * apart); columns from j0, a multiple of VL (NR a multiple of VL), and
 * pixel i's row of C at out[i] + j0. */

/* The rows of a tile at 1 to 4 vectors: accumulators plus B's vectors and
 * one broadcast within the ISA's registers (32 in AVX-512, 16 in AVX2). */
#if VL == 16
#define KIG_ROWS_AT(nv) ((nv) == 1 ? 16 : (nv) == 2 ? 14 : (nv) == 3 ? 8 : 6)
#elif VL == 8
#define KIG_ROWS_AT(nv) ((nv) == 1 ? 12 : (nv) == 2 ? 6 : (nv) == 3 ? 4 : 2)
#else
#define KIG_ROWS_AT(nv) 4
#endif

static inline V KV(kig_epi)(V v, const kig_tile *t, int i, int j)
{
    const gemm_epi *e = t->epi;
    const int64_t col = t->j0 + (int64_t)j * VL;
    const size_t cnt = t->nc - j * VL < VL ? (size_t)(t->nc - j * VL) : VL;
    const float rk = e->res_scale != 0.0f ? e->res_scale : 1.0f;
    if (e->scaled) v = vmul(v, vset1(e->scale));
    if (e->bias_mode == GEMM_BIAS_COL) v = vadd(v, vloadn(e->bias + col, cnt));
    if (e->bias_mode == GEMM_BIAS_ROW) v = vadd(v, vset1(e->bias[t->pix[i]]));
    V rv = vzero();
    if (e->res) rv = vloadn(e->res + t->pix[i] * e->ldr + col, cnt);
    if (e->res && !e->res_after) v = vfma(vset1(rk), rv, v);
    switch (e->act) {
    case GEMM_ACT_RELU: v = vmax(v, vzero()); break; /* NaN: 0 */
    case GEMM_ACT_CLIP: v = vmin(vset1(e->hi), vmax(vset1(e->lo), v)); break;
    case GEMM_ACT_HARDSIGMOID:
        v = vmin(vmax(vfma(v, vset1(e->lo), vset1(e->hi)), vzero()), vset1(1.0f));
        break;
    case GEMM_ACT_HARDSWISH:
        v = vmul(v, vmin(vmax(vfma(v, vset1(1.0f / 6), vset1(0.5f)), vzero()), vset1(1.0f)));
        break;
    default: break;
    }
    if (e->res && e->res_after) v = vfma(vset1(rk), rv, v);
    return v;
}

#define KIG_TILE(M, NV)                                                                       \
    static void KV(kig_tile_##M##_##NV)(const kig_tile *t)                                   \
    {                                                                                         \
        V r[M][NV];                                                                           \
        _Pragma("GCC unroll 32") for (int i = 0; i < M; i++) _Pragma("GCC unroll 4") for (   \
            int j = 0; j < NV; j++) r[i][j] = vzero();                                        \
        const int64_t k = t->k, rsa = t->rsa, nr = t->nr;                                     \
        for (int64_t q = 0; q < t->runs; q++) {                                               \
            const float *a = t->a + t->roff[q];                                               \
            const float *bp[NV];                                                              \
            _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) bp[j] = t->b[q] + t->boff[j]; \
            for (int64_t p = 0; p < k; p++) {                                                 \
                V bv[NV];                                                                     \
                _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) {                       \
                    __builtin_prefetch(bp[j] + (p + 16) * nr);                                \
                    bv[j] = vload(bp[j] + p * nr);                                            \
                }                                                                             \
                _Pragma("GCC unroll 32") for (int i = 0; i < M; i++) {                       \
                    V av = vset1(a[i * rsa + p]);                                             \
                    _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) r[i][j] =            \
                        vfma(av, bv[j], r[i][j]);                                             \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        const int nc = t->nc;                                                                 \
        if (t->quick) { /* bias by column and Relu or Clip: the columns' bias once */         \
            const int act = t->act;                                                           \
            const V lo = vset1(t->lo), hi = vset1(t->hi);                                     \
            V bc[NV];                                                                         \
            _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) bc[j] =                     \
                t->bias ? vloadn(t->bias + t->j0 + j * VL, nc - j * VL < VL ? (size_t)(nc - j * VL) : VL) \
                        : vzero();                                                            \
            _Pragma("GCC unroll 32") for (int i = 0; i < M; i++) {                           \
                float *o = t->out[i];                                                         \
                if (!o) continue;                                                             \
                o += t->j0;                                                                   \
                _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) {                       \
                    V v = vadd(r[i][j], bc[j]);                                               \
                    if (act == GEMM_ACT_RELU) v = vmax(v, vzero()); /* NaN: 0 */              \
                    else if (act == GEMM_ACT_CLIP) v = vmin(hi, vmax(lo, v));                 \
                    if (nc - j * VL >= VL) vstore(o + j * VL, v);                             \
                    else vstoren(o + j * VL, v, (size_t)(nc - j * VL));                       \
                }                                                                             \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        _Pragma("GCC unroll 32") for (int i = 0; i < M; i++) {                               \
            float *o = t->out[i];                                                             \
            if (!o) continue;                                                                 \
            o += t->j0;                                                                       \
            _Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) {                           \
                V v = t->fuse ? KV(kig_epi)(r[i][j], t, i, j) : r[i][j];                      \
                if (nc - j * VL >= VL) vstore(o + j * VL, v);                                 \
                else vstoren(o + j * VL, v, (size_t)(nc - j * VL));                           \
            }                                                                                 \
        }                                                                                     \
    }

#define KIG_M1TO2(X, NV) X(1, NV) X(2, NV)
#define KIG_M1TO4(X, NV) KIG_M1TO2(X, NV) X(3, NV) X(4, NV)
#define KIG_M1TO6(X, NV) KIG_M1TO4(X, NV) X(5, NV) X(6, NV)
#define KIG_M1TO8(X, NV) KIG_M1TO6(X, NV) X(7, NV) X(8, NV)
#define KIG_M1TO12(X, NV) KIG_M1TO8(X, NV) X(9, NV) X(10, NV) X(11, NV) X(12, NV)
#define KIG_M1TO14(X, NV) KIG_M1TO12(X, NV) X(13, NV) X(14, NV)
#define KIG_M1TO16(X, NV) KIG_M1TO14(X, NV) X(15, NV) X(16, NV)
#if VL == 16
#define KIG_ALL(X) KIG_M1TO16(X, 1) KIG_M1TO14(X, 2) KIG_M1TO8(X, 3) KIG_M1TO6(X, 4)
#elif VL == 8
#define KIG_ALL(X) KIG_M1TO12(X, 1) KIG_M1TO6(X, 2) KIG_M1TO4(X, 3) KIG_M1TO2(X, 4)
#else
#define KIG_ALL(X) KIG_M1TO4(X, 1) KIG_M1TO4(X, 2) KIG_M1TO4(X, 3) KIG_M1TO4(X, 4)
#endif
#define KIG_PTR(M, NV) [NV - 1][M - 1] = KV(kig_tile_##M##_##NV),
KIG_ALL(KIG_TILE)
static const kig_tile_fn KV(kig_tiles)[4][KIG_MR] = {KIG_ALL(KIG_PTR)};
static const int KV(kig_rows)[4] = {KIG_ROWS_AT(1), KIG_ROWS_AT(2), KIG_ROWS_AT(3), KIG_ROWS_AT(4)};

#undef KIG_ROWS_AT
#undef KIG_ALL
#undef KIG_PTR
#undef KIG_TILE
#undef KIG_M1TO2
#undef KIG_M1TO4
#undef KIG_M1TO6
#undef KIG_M1TO8
#undef KIG_M1TO12
#undef KIG_M1TO14
#undef KIG_M1TO16

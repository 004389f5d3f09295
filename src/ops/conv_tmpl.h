/* Convolution kernels, instantiated once per compute type by conv.c:
 *   #define CT float   (element and accumulator type)
 *   #define CS f32     (name suffix)
 *   #include "ops/conv_tmpl.h"
 * Conv is im2col (into a column tile) followed by a GEMM; ConvTranspose is the
 * GEMM with W transposed followed by col2im. Both tile the spatial positions
 * so the column buffer stays small and cache resident. */
#define CT_CAT_(a, b) a##_##b
#define CT_CAT(a, b) CT_CAT_(a, b)
#define CT_FN(name) CT_CAT(name, CS)

/* y0..y3[j] += a0..a3 * b[j]. Blocks of 8 with a constant trip count so
 * that GCC vectorises them even at -O2 (its "very cheap" cost model). */
static inline void CT_FN(axpy4)(int64_t J, const CT *restrict b, CT a0, CT a1, CT a2, CT a3,
                                CT *restrict y0, CT *restrict y1, CT *restrict y2,
                                CT *restrict y3)
{
    int64_t j = 0;
    for (; j + 8 <= J; j += 8)
        for (int l = 0; l < 8; l++) {
            CT v = b[j + l];
            y0[j + l] += a0 * v;
            y1[j + l] += a1 * v;
            y2[j + l] += a2 * v;
            y3[j + l] += a3 * v;
        }
    for (; j < J; j++) {
        CT v = b[j];
        y0[j] += a0 * v;
        y1[j] += a1 * v;
        y2[j] += a2 * v;
        y3[j] += a3 * v;
    }
}

static inline void CT_FN(axpy1)(int64_t J, const CT *restrict b, CT a0, CT *restrict y0)
{
    int64_t j = 0;
    for (; j + 8 <= J; j += 8)
        for (int l = 0; l < 8; l++) y0[j + l] += a0 * b[j + l];
    for (; j < J; j++) y0[j] += a0 * b[j];
}

/* y[m][j] += sum_r a(m, r) * b[r][j] for m < M, r < R, j < J, where
 * a(m, r) = a[m * a_rs + r * a_cs]: an i-k-j loop whose j loop is innermost
 * and unit-stride; four rows of y share each load of b. */
static void CT_FN(gemm)(int64_t M, int64_t R, int64_t J, const CT *a, int64_t a_rs, int64_t a_cs,
                        const CT *b, int64_t ldb, CT *y, int64_t ldy)
{
    int64_t m = 0;
    for (; m + 4 <= M; m += 4) {
        CT *y0 = y + m * ldy;
        for (int64_t r = 0; r < R; r++) {
            const CT *ar = a + m * a_rs + r * a_cs;
            CT_FN(axpy4)(J, b + r * ldb, ar[0], ar[a_rs], ar[2 * a_rs], ar[3 * a_rs], y0,
                         y0 + ldy, y0 + 2 * ldy, y0 + 3 * ldy);
        }
    }
    for (; m < M; m++)
        for (int64_t r = 0; r < R; r++)
            CT_FN(axpy1)(J, b + r * ldb, a[m * a_rs + r * a_cs], y + m * ldy);
}

/* Moves data between an image (rows / K channel planes) and a column tile
 * col[rows][jn] covering jn positions of the walk grid from j0. Row r is
 * channel r / K at kernel offset r % K; walk position p along a dim maps to
 * image position p * stride - pad_begin + kernel_offset.
 *   gather (Conv's im2col): walk = output grid, image = input;
 *                            col = image, 0 where it falls in the padding.
 *   scatter (ConvTranspose's col2im): walk = input grid, image = output;
 *                            image += col where it lands inside. */
static void CT_FN(colmap)(const conv_geom *g, bool scatter, const int64_t *koff, int64_t rows,
                          CT *img, CT *col, int64_t j0, int64_t jn)
{
    const int nd = g->nd, L = nd - 1;
    const int64_t *wd = scatter ? g->in : g->out, *id = scatter ? g->out : g->in;
    const int64_t isp = scatter ? g->out_sp : g->in_sp, K = g->k_sp;
    int64_t istr[CONV_MAX_SP], pos[CONV_MAX_SP];
    row_strides(id, nd, istr);
    for (int i = nd - 1; i >= 0; i--) { /* walk coordinates of j0 */
        pos[i] = j0 % wd[i];
        j0 /= wd[i];
    }
    const int64_t sl = g->s[L], il = id[L];
    for (int64_t j = 0; j < jn;) {
        const int64_t a0 = pos[L], seg = jn - j < wd[L] - a0 ? jn - j : wd[L] - a0;
        for (int64_t r = 0; r < rows; r++) {
            const int64_t *ko = koff + (r % K) * nd;
            CT *cr = col + r * jn + j;
            CT *plane = img + (r / K) * isp;
            int64_t base = 0, lo = a0, hi = a0;
            bool inside = true;
            for (int i = 0; i < L && inside; i++) {
                int64_t q = pos[i] * g->s[i] - g->pb[i] + ko[i];
                inside = q >= 0 && q < id[i];
                base += q * istr[i];
            }
            /* last dim: q = a * sl + off must lie in [0, il) */
            const int64_t off = ko[L] - g->pb[L];
            if (inside) {
                int64_t first = ceil_div(-off, sl), last = floor_div(il - 1 - off, sl) + 1;
                lo = first > a0 ? first : a0;
                hi = last < a0 + seg ? last : a0 + seg;
                if (hi < lo) hi = lo;
            }
            if (!scatter) {
                const CT *src = plane + base;
                for (int64_t a = a0; a < lo; a++) cr[a - a0] = 0;
                if (sl == 1)
                    memcpy(cr + (lo - a0), src + lo + off, (size_t)(hi - lo) * sizeof(CT));
                else
                    for (int64_t a = lo; a < hi; a++) cr[a - a0] = src[a * sl + off];
                for (int64_t a = hi; a < a0 + seg; a++) cr[a - a0] = 0;
            } else {
                CT *dst = plane + base;
                for (int64_t a = lo; a < hi; a++) dst[a * sl + off] += cr[a - a0];
            }
        }
        j += seg;
        pos[L] += seg;
        for (int i = L; i > 0 && pos[i] == wd[i]; i--) {
            pos[i] = 0;
            pos[i - 1]++;
        }
    }
}

/* Sets each of the m rows of y (length n, stride n) to its bias or 0. */
static void CT_FN(fill_bias)(CT *y, const CT *bias, int64_t m, int64_t n)
{
    for (int64_t i = 0; i < m; i++) {
        CT v = bias ? bias[i] : 0;
        for (int64_t j = 0; j < n; j++) y[i * n + j] = v;
    }
}

/* Conv: x [N, C, in...], w [M, C/group, k...], y [N, M, out...]. */
static void CT_FN(conv_fwd)(const conv_geom *g, const CT *x, const CT *w, const CT *bias, CT *y,
                            CT *col, const int64_t *koff, int64_t tile)
{
    const int64_t R = g->cg * g->k_sp;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t grp = 0; grp < g->group; grp++) {
            const CT *xg = x + (n * g->c + grp * g->cg) * g->in_sp;
            const CT *wg = w + grp * g->mg * R;
            CT *yg = y + (n * g->m + grp * g->mg) * g->out_sp;
            CT_FN(fill_bias)(yg, bias ? bias + grp * g->mg : NULL, g->mg, g->out_sp);
            for (int64_t j0 = 0; j0 < g->out_sp; j0 += tile) {
                int64_t jn = g->out_sp - j0 < tile ? g->out_sp - j0 : tile;
                if (g->pointwise) { /* 1x1, stride 1, no pads: x is already the column matrix */
                    CT_FN(gemm)(g->mg, R, jn, wg, R, 1, xg + j0, g->in_sp, yg + j0, g->out_sp);
                } else {
                    CT_FN(colmap)(g, false, koff, R, (CT *)xg, col, j0, jn);
                    CT_FN(gemm)(g->mg, R, jn, wg, R, 1, col, jn, yg + j0, g->out_sp);
                }
            }
        }
}

/* ConvTranspose: x [N, C, in...], w [C, M/group, k...], y [N, M, out...]. */
__attribute__((unused)) static void CT_FN(conv_bwd)(const conv_geom *g, const CT *x,
                                                     const CT *w, const CT *bias, CT *y, CT *col,
                                                     const int64_t *koff, int64_t tile)
{
    const int64_t R = g->mg * g->k_sp;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t grp = 0; grp < g->group; grp++) {
            const CT *xg = x + (n * g->c + grp * g->cg) * g->in_sp;
            const CT *wg = w + grp * g->cg * R;
            CT *yg = y + (n * g->m + grp * g->mg) * g->out_sp;
            CT_FN(fill_bias)(yg, bias ? bias + grp * g->mg : NULL, g->mg, g->out_sp);
            for (int64_t j0 = 0; j0 < g->in_sp; j0 += tile) {
                int64_t jn = g->in_sp - j0 < tile ? g->in_sp - j0 : tile;
                if (R > 0 && jn > 0) memset(col, 0, (size_t)(R * jn) * sizeof(CT));
                /* col[r][j] = sum_c w[c][r] * x[c][j] */
                CT_FN(gemm)(R, g->cg, jn, wg, 1, R, xg + j0, g->in_sp, col, jn);
                CT_FN(colmap)(g, true, koff, R, yg, col, j0, jn);
            }
        }
}

#undef CT_FN
#undef CT_CAT
#undef CT_CAT_
#undef CT
#undef CS

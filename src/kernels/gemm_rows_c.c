/* The skinny path's rows outer as one call (gemm_kern.h's gemm_rows_fn)
 * on the portable kernel's 16-wide panels, in plain C the compiler
 * vectorises for the baseline ISA: A's rows in groups of 4, each group
 * through every panel of B (16 columns, the last cut at n), then the next
 * group, the epilogue's form chosen once per call as the vector kernels
 * do (gemm_rows_avx2.c, gemm_rows_avx512.c); the general form through
 * gemm_c.c's per-element epilogue. */
#include "kernels/gemm_kern.h"

#define RC_R 4
#define RC_NR 16

/* v in form FORM (gemm_fuse_form): bc the column's bias (0 without),
 * fl the epilogue at the tile's row 0 and column 0 (ANY only). */
static inline float rc_fuse(float v, int form, const gemm_fuse *fl, float bc, int i, int j)
{
    switch (form) {
    case GEMM_FORM_NONE: return v;
    case GEMM_FORM_BIAS: return v + bc;
    case GEMM_FORM_RELU: v += bc; return v > 0.0f ? v : 0.0f; /* NaN: 0 */
    case GEMM_FORM_CLIP:
        v += bc;
        v = v < fl->lo ? fl->lo : v;
        return v > fl->hi ? fl->hi : v;
    default: return gemm_fuse_c(v, fl, i, j);
    }
}

static inline int64_t rc_loop(int form, int64_t k, int64_t m, int64_t n, const float *a, int64_t rsa,
                              const float *b, int64_t sb, float *c, int64_t ldc, const gemm_fuse *fb)
{
    int64_t i0 = 0;
    for (; i0 + RC_R <= m; i0 += RC_R)
        for (int64_t j = 0; j < n; j += RC_NR) {
            const float *bp = b + (j / RC_NR) * sb, *ap = a + i0 * rsa;
            float r[RC_R][RC_NR] = {{0}};
            for (int64_t p = 0; p < k; p++)
                for (int i = 0; i < RC_R; i++) {
                    float av = ap[i * rsa + p];
                    for (int q = 0; q < RC_NR; q++) r[i][q] += av * bp[p * RC_NR + q];
                }
            int nc = n - j < RC_NR ? (int)(n - j) : RC_NR;
            gemm_fuse fl = *fb;
            if (form == GEMM_FORM_ANY) {
                if (fl.brow) fl.brow += i0;
                if (fl.bcol) fl.bcol += j;
                if (fl.res) fl.res += i0 * fl.ldr + j;
            }
            for (int i = 0; i < RC_R; i++) {
                float *o = c + (i0 + i) * ldc + j;
                for (int q = 0; q < nc; q++)
                    o[q] = rc_fuse(r[i][q], form, &fl, fb->bcol ? fb->bcol[j + q] : 0.0f, i, q);
            }
        }
    return i0;
}

GEMM_ROWS(gemm_rows_c_16)
{
    const gemm_fuse fb = f ? *f : (gemm_fuse){.scale = 1.0f};
    switch (gemm_fuse_form(f)) { /* the form a constant in each loop */
    case GEMM_FORM_NONE: return rc_loop(GEMM_FORM_NONE, k, m, n, a, rsa, b, sb, c, ldc, &fb);
    case GEMM_FORM_BIAS: return rc_loop(GEMM_FORM_BIAS, k, m, n, a, rsa, b, sb, c, ldc, &fb);
    case GEMM_FORM_RELU: return rc_loop(GEMM_FORM_RELU, k, m, n, a, rsa, b, sb, c, ldc, &fb);
    case GEMM_FORM_CLIP: return rc_loop(GEMM_FORM_CLIP, k, m, n, a, rsa, b, sb, c, ldc, &fb);
    default: return rc_loop(GEMM_FORM_ANY, k, m, n, a, rsa, b, sb, c, ldc, &fb);
    }
}

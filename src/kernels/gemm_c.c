/* The portable GEMM micro-kernel (any CPU; the compiler vectorises what the
 * baseline ISA allows): 4x16, and the skinny path for up to 4 rows. */
#include "kernels/gemm_kern.h"

#define MR 4
#define NR 16

/* gemm_fuse on element (i, j) of the tile. */
static float fuse1(float v, const gemm_fuse *f, int i, int j)
{
    const float rv = f->res ? f->rk * f->res[i * f->ldr + j] : 0.0f;
    v *= f->scale;
    if (f->brow) v += f->brow[i];
    if (f->bcol) v += f->bcol[j];
    if (!f->res_after) v += rv;
    switch (f->act) {
    case GEMM_FUSE_RELU: v = v > 0.0f ? v : 0.0f; break;
    case GEMM_FUSE_CLIP:
        v = v < f->lo ? f->lo : v;
        v = v > f->hi ? f->hi : v;
        break;
    case GEMM_FUSE_LEAKY: v = v < 0.0f ? f->lo * v : v; break;
    case GEMM_FUSE_HARDSIGMOID: {
        float h = f->lo * v + f->hi;
        v = h > 0.0f ? (h < 1.0f ? h : 1.0f) : 0.0f;
        break;
    }
    case GEMM_FUSE_HARDSWISH: {
        float h = v / 6 + 0.5f;
        v *= h > 0.0f ? (h < 1.0f ? h : 1.0f) : 0.0f;
        break;
    }
    default: break;
    }
    if (f->res_after) v += rv;
    return v;
}

GEMM_UKR(gemm_ukr_c_4x16)
{
    float r[MR][NR] = {{0}};
    for (int64_t p = 0; p < k; p++)
        for (int i = 0; i < MR; i++) {
            float av = a[p * MR + i];
            for (int j = 0; j < NR; j++) r[i][j] += av * b[p * NR + j];
        }
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++) {
            float v = (acc ? c[i * ldc + j] : 0.0f) + r[i][j];
            c[i * ldc + j] = f ? fuse1(v, f, i, j) : v;
        }
}

GEMM_SKINNY(gemm_skinny_c_16)
{
    (void)sb; /* one panel: nc <= NR */
    float r[MR][NR] = {{0}};
    for (int64_t p = 0; p < k; p++)
        for (int i = 0; i < m; i++) {
            float av = a[i * rsa + p * csa];
            for (int j = 0; j < NR; j++) r[i][j] += av * b[p * NR + j];
        }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < nc; j++) out[i * ldo + j] = f ? fuse1(r[i][j], f, i, j) : r[i][j];
}

/* The GEMV (gemm_gemv_fn): C panels side by side, one stream each. */
static inline void gvc(int C, int64_t k, const float *a, int64_t csa, const float *b, int64_t p0,
                       int64_t per, int64_t n, float *out, const gemm_fuse *f)
{
    float r[GEMM_GEMV_NSC][NR] = {{0}};
    for (int64_t p = 0; p < k; p++) {
        float av = a[p * csa];
        for (int c = 0; c < C; c++) {
            const float *bp = b + (p0 + c * per) * k * NR + p * NR;
            for (int j = 0; j < NR; j++) r[c][j] += av * bp[j];
        }
    }
    for (int c = 0; c < C; c++) {
        int64_t j0 = (p0 + c * per) * NR;
        gemm_fuse fp = f ? gemm_fuse_at_col(f, j0) : (gemm_fuse){0};
        for (int j = 0; j < NR && j0 + j < n; j++) out[j0 + j] = f ? fuse1(r[c][j], &fp, 0, j) : r[c][j];
    }
}
#define GVC(C)                                                                                \
    static void gvc_##C(int64_t k, const float *a, int64_t csa, const float *b, int64_t p0,   \
                        int64_t per, int64_t n, float *out, const gemm_fuse *f)               \
    {                                                                                         \
        gvc(C, k, a, csa, b, p0, per, n, out, f);                                             \
    }
GVC(1) GVC(2) GVC(3) GVC(4)
const gemm_gemv_fn gemm_gemv_c_16[GEMM_GEMV_NSC] = {gvc_1, gvc_2, gvc_3, gvc_4};

/* fuse1 for the portable rows kernel (gemm_rows_c.c). */
float gemm_fuse_c(float v, const gemm_fuse *f, int i, int j) { return fuse1(v, f, i, j); }

/* The GEMM epilogue (gemm.h's gemm_epi), applied tile by tile while the
 * tile is still in L1. Row loops are plain C the compiler vectorises; the
 * transcendental activations call libm per element. */
#include <math.h>

#include "kernels/gemm.h"

static float act1(const gemm_epi *e, float v)
{
    switch (e->act) {
    case GEMM_ACT_SIGMOID: return 1.0f / (1.0f + expf(-v));
    case GEMM_ACT_TANH: return tanhf(v);
    case GEMM_ACT_GELU: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case GEMM_ACT_GELU_TANH:
        return 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    case GEMM_ACT_SILU: return v / (1.0f + expf(-v));
    case GEMM_ACT_HARDSWISH: return v * fmaxf(0.0f, fminf(1.0f, v / 6.0f + 0.5f));
    case GEMM_ACT_HARDSIGMOID: return fmaxf(0.0f, fminf(1.0f, e->lo * v + e->hi));
    default: return v;
    }
}

static void act_row(const gemm_epi *e, float *r, int nr)
{
    switch (e->act) {
    case GEMM_ACT_NONE: return;
    case GEMM_ACT_RELU:
        for (int j = 0; j < nr; j++) r[j] = r[j] > 0.0f ? r[j] : 0.0f;
        return;
    case GEMM_ACT_CLIP:
        for (int j = 0; j < nr; j++) {
            float v = r[j] < e->lo ? e->lo : r[j];
            r[j] = v > e->hi ? e->hi : v;
        }
        return;
    case GEMM_ACT_LEAKY:
        for (int j = 0; j < nr; j++) r[j] = r[j] < 0.0f ? e->lo * r[j] : r[j];
        return;
    default:
        for (int j = 0; j < nr; j++) r[j] = act1(e, r[j]);
    }
}

static void res_row(const gemm_epi *e, float *r, int64_t i, int64_t j0, int nr)
{
    const float *s = e->res + i * e->ldr + j0;
    float k = e->res_scale != 0.0f ? e->res_scale : 1.0f;
    if (k == 1.0f)
        for (int j = 0; j < nr; j++) r[j] += s[j];
    else
        for (int j = 0; j < nr; j++) r[j] += k * s[j];
}

void gemm_epi_tile(const gemm_epi *e, float *c, int64_t ldc, int64_t i0, int64_t j0, int mr, int nr)
{
    for (int i = 0; i < mr; i++) {
        float *r = c + i * ldc;
        if (e->scaled)
            for (int j = 0; j < nr; j++) r[j] *= e->scale;
        if (e->bias_mode == GEMM_BIAS_ROW) {
            float b = e->bias[i0 + i];
            for (int j = 0; j < nr; j++) r[j] += b;
        } else if (e->bias_mode == GEMM_BIAS_COL) {
            const float *b = e->bias + j0;
            for (int j = 0; j < nr; j++) r[j] += b[j];
        }
        if (e->res && !e->res_after) res_row(e, r, i0 + i, j0, nr);
        act_row(e, r, nr);
        if (e->res && e->res_after) res_row(e, r, i0 + i, j0, nr);
    }
}

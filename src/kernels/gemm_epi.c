/* The GEMM epilogue (gemm.h's gemm_epi), applied tile by tile while the
 * tile is still in L1. Row loops are plain C the compiler vectorises, once
 * per ISA (gemm_epi_tmpl.h); the transcendental activations call libm per
 * element. */
#include <math.h>

#include "kernels/gemm.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "kernels/isa.h"

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

/* The transcendental activations, element by element. */
static void act_row(const gemm_epi *e, float *r, int nr)
{
    for (int j = 0; j < nr; j++) r[j] = act1(e, r[j]);
}

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/gemm_epi_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/gemm_epi_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/gemm_epi_tmpl.h"
#include "kernels/vec_end.h"

typedef void (*epi_fn)(const gemm_epi *, float *, int64_t, int64_t, int64_t, int, int);
static const struct {
    kisa isa;
    epi_fn tile;
} epi_impls[] = {
#if KISA_X86
    {KISA_AVX512, epi_tile_avx512},
    {KISA_AVX2, epi_tile_avx2},
#endif
    {KISA_PORTABLE, epi_tile_portable},
};

void gemm_epi_tile(const gemm_epi *e, float *c, int64_t ldc, int64_t i0, int64_t j0, int mr, int nr)
{
    __typeof__(epi_impls[0]) *im = KISA_PICK(epi_impls);
    im->tile(e, c, ldc, i0, j0, mr, nr);
}

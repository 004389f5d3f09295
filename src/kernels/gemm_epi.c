/* The GEMM epilogue (gemm.h's gemm_epi), applied tile by tile while the
 * tile is still in L1. Row loops are plain C the compiler vectorises, once
 * per ISA (gemm_epi_tmpl.h); the other activations (HardSwish, HardSigmoid,
 * the transcendental ones) run on vec_math.h's vector functions, as the
 * element-wise kernels do. */

#include "kernels/gemm.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "kernels/isa.h"

kfun gemm_act_fun(gemm_act a)
{
    static const kfun f[GEMM_ACT_COUNT] = {
        [GEMM_ACT_NONE] = KF_NONE,           [GEMM_ACT_RELU] = KF_RELU,
        [GEMM_ACT_CLIP] = KF_CLIP,           [GEMM_ACT_SIGMOID] = KF_SIGMOID,
        [GEMM_ACT_TANH] = KF_TANH,           [GEMM_ACT_GELU] = KF_GELU_ERF,
        [GEMM_ACT_GELU_TANH] = KF_GELU_TANH, [GEMM_ACT_SILU] = KF_SILU,
        [GEMM_ACT_HARDSWISH] = KF_HARDSWISH, [GEMM_ACT_HARDSIGMOID] = KF_HARDSIGMOID,
        [GEMM_ACT_LEAKY] = KF_LEAKY_RELU,
    };
    return a >= 0 && a < GEMM_ACT_COUNT ? f[a] : KF_NONE;
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

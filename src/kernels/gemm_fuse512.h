/* The AVX-512 GEMM epilogue on one vector (gemm_kern.h's gemm_fuse), shared
 * by the micro-kernels (gemm_avx512.c) and the rows-outer kernel
 * (gemm_rows_avx512.c); included after T512 is defined. */
#ifndef AIT_KERNELS_GEMM_FUSE512_H
#define AIT_KERNELS_GEMM_FUSE512_H

#include <immintrin.h>

#include "kernels/gemm_kern.h"

/* gemm_fuse on one vector of row i, columns j.. j+15 of the tile, with
 * the column bias's vector bc already loaded (read when f->bcol is set);
 * the residual read under mask mk (a skinny tile's last vector). A tile's
 * stores call it with f a local copy of the kernel's gemm_fuse and bc
 * loaded once per column (fuse512_bias): through the caller's pointer
 * every store to C may change *f and the bias, so each vector reloaded
 * them (the epilogue cost 1.4x to 1.7x the GEMM at K 16 to 64). */
T512 static inline __m512 fuse512c(__m512 v, const gemm_fuse *f, __m512 bc, int i, int j, __mmask16 mk)
{
    const __m512 zero = _mm512_setzero_ps();
    if (f->scale != 1.0f) v = _mm512_mul_ps(v, _mm512_set1_ps(f->scale));
    if (f->brow) v = _mm512_add_ps(v, _mm512_set1_ps(f->brow[i]));
    if (f->bcol) v = _mm512_add_ps(v, bc);
    __m512 rv = zero;
    if (f->res) rv = _mm512_maskz_loadu_ps(mk, f->res + i * f->ldr + j);
    if (f->res && !f->res_after) v = _mm512_fmadd_ps(_mm512_set1_ps(f->rk), rv, v);
    switch (f->act) {
    case GEMM_FUSE_RELU: v = _mm512_max_ps(v, zero); break; /* NaN: 0 */
    case GEMM_FUSE_CLIP:
        v = _mm512_min_ps(_mm512_set1_ps(f->hi), _mm512_max_ps(_mm512_set1_ps(f->lo), v));
        break;
    case GEMM_FUSE_LEAKY:
        v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, _mm512_set1_ps(f->lo));
        break;
    case GEMM_FUSE_HARDSIGMOID:
        v = _mm512_fmadd_ps(v, _mm512_set1_ps(f->lo), _mm512_set1_ps(f->hi));
        v = _mm512_min_ps(_mm512_max_ps(v, zero), _mm512_set1_ps(1.0f));
        break;
    case GEMM_FUSE_HARDSWISH: {
        __m512 h = _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6), _mm512_set1_ps(0.5f));
        v = _mm512_mul_ps(v, _mm512_min_ps(_mm512_max_ps(h, zero), _mm512_set1_ps(1.0f)));
        break;
    }
    default: break;
    }
    if (f->res && f->res_after) v = _mm512_fmadd_ps(_mm512_set1_ps(f->rk), rv, v);
    return v;
}

/* The epilogue in form FORM (gemm_fuse_form, a constant where the stores
 * are instantiated per form): bc the column bias's vector, lo and hi
 * Clip's bounds; ANY through fuse512c. */
T512 static inline __m512 fuse512f(__m512 v, int form, const gemm_fuse *f, __m512 bc, __m512 lo, __m512 hi,
                                   int i, int j, __mmask16 mk)
{
    switch (form) {
    case GEMM_FORM_NONE: return v;
    case GEMM_FORM_BIAS: return _mm512_add_ps(v, bc);
    case GEMM_FORM_RELU: return _mm512_max_ps(_mm512_add_ps(v, bc), _mm512_setzero_ps()); /* NaN: 0 */
    case GEMM_FORM_CLIP: return _mm512_min_ps(hi, _mm512_max_ps(lo, _mm512_add_ps(v, bc)));
    default: return fuse512c(v, f, bc, i, j, mk);
    }
}

#endif

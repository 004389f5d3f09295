/* The AVX-512 GEMM epilogue on one zmm vector (gemm_fuse_tmpl.h):
 * fuse512, fuse512_bias, fuse512_c and fuse512_f, shared by the
 * micro-kernels (gemm_avx512.c) and the rows-outer kernel
 * (gemm_rows_avx512.c). */
#ifndef AIT_KERNELS_GEMM_FUSE512_H
#define AIT_KERNELS_GEMM_FUSE512_H

#include <immintrin.h>

#include "kernels/gemm_kern.h"

#define FUSE fuse512
#define FUSE_TARGET __attribute__((target("avx512f,fma")))
#define FV __m512
#define FM __mmask16
#define FADD _mm512_add_ps
#define FMUL _mm512_mul_ps
#define FMAX _mm512_max_ps
#define FMIN _mm512_min_ps
#define FFMA _mm512_fmadd_ps
#define FSET1 _mm512_set1_ps
#define FZERO _mm512_setzero_ps
#define FLOADM(p, mk) _mm512_maskz_loadu_ps(mk, p)
#define FLTMUL(v, s) _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), v, s)
#include "kernels/gemm_fuse_tmpl.h"

#endif

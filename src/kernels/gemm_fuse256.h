/* The GEMM epilogue on one ymm vector (gemm_fuse_tmpl.h), the mask an
 * integer vector of all-ones lanes: included by gemm_avx2.c and
 * gemm_avx512.c (for its ymm kernels) with FUSE256 naming the functions
 * (FUSE256, FUSE256_bias, FUSE256_c, FUSE256_f) and FUSE256_TARGET their
 * __attribute__((target)), so each ISA's kernels inline their own copy. */
#include <immintrin.h>

#include "kernels/gemm_kern.h"

#define FUSE FUSE256
#define FUSE_TARGET FUSE256_TARGET
#define FV __m256
#define FM __m256i
#define FADD _mm256_add_ps
#define FMUL _mm256_mul_ps
#define FMAX _mm256_max_ps
#define FMIN _mm256_min_ps
#define FFMA _mm256_fmadd_ps
#define FSET1 _mm256_set1_ps
#define FZERO _mm256_setzero_ps
#define FLOADM(p, mk) _mm256_maskload_ps(p, mk)
#define FLTMUL(v, s) _mm256_blendv_ps(v, _mm256_mul_ps(v, s), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ))
#include "kernels/gemm_fuse_tmpl.h"

/* gemm_fuse (gemm_kern.h) on one ymm vector: row i, columns j.. j+7 of a
 * micro-kernel's tile. Included by gemm_avx2.c and gemm_avx512.c (for its
 * ymm kernels) with FUSE256 naming the function and FUSE256_TARGET its
 * __attribute__((target)), so each ISA's kernels inline their own copy. */
FUSE256_TARGET static inline __m256 FUSE256(__m256 v, const gemm_fuse *f, int i, int j)
{
    if (f->scale != 1.0f) v = _mm256_mul_ps(v, _mm256_set1_ps(f->scale));
    if (f->brow) v = _mm256_add_ps(v, _mm256_set1_ps(f->brow[i]));
    if (f->bcol) v = _mm256_add_ps(v, _mm256_loadu_ps(f->bcol + j));
    if (f->res) v = _mm256_fmadd_ps(_mm256_set1_ps(f->rk), _mm256_loadu_ps(f->res + i * f->ldr + j), v);
    if (f->act == GEMM_FUSE_RELU) v = _mm256_max_ps(v, _mm256_setzero_ps()); /* NaN: 0 */
    else if (f->act == GEMM_FUSE_CLIP)
        v = _mm256_min_ps(_mm256_set1_ps(f->hi), _mm256_max_ps(_mm256_set1_ps(f->lo), v));
    return v;
}

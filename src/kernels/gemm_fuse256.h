/* gemm_fuse (gemm_kern.h) on one ymm vector: row i, columns j.. j+7 of a
 * micro-kernel's or skinny kernel's tile, the bias and residual read under
 * mask mk (all ones but on a skinny tile's last vector). Included by
 * gemm_avx2.c and gemm_avx512.c (for its ymm kernels) with FUSE256 naming
 * the function and FUSE256_TARGET its __attribute__((target)), so each
 * ISA's kernels inline their own copy. As gemm_avx512.c's fuse512: FUSE256_c
 * with the column bias's vector bc loaded once (FUSE256_bias) and f a local
 * copy, FUSE256_f in one of gemm_fuse_form's forms (FORM_SWITCH). */
#define F256_PASTE2(a, b) a##b
#define F256_PASTE(a, b) F256_PASTE2(a, b)
FUSE256_TARGET static inline __m256 F256_PASTE(FUSE256, _c)(__m256 v, const gemm_fuse *f, __m256 bc, int i, int j,
                                                           __m256i mk)
{
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    if (f->scale != 1.0f) v = _mm256_mul_ps(v, _mm256_set1_ps(f->scale));
    if (f->brow) v = _mm256_add_ps(v, _mm256_set1_ps(f->brow[i]));
    if (f->bcol) v = _mm256_add_ps(v, bc);
    __m256 rv = zero;
    if (f->res) rv = _mm256_maskload_ps(f->res + i * f->ldr + j, mk);
    if (f->res && !f->res_after) v = _mm256_fmadd_ps(_mm256_set1_ps(f->rk), rv, v);
    switch (f->act) {
    case GEMM_FUSE_RELU: v = _mm256_max_ps(v, zero); break; /* NaN: 0 */
    case GEMM_FUSE_CLIP:
        v = _mm256_min_ps(_mm256_set1_ps(f->hi), _mm256_max_ps(_mm256_set1_ps(f->lo), v));
        break;
    case GEMM_FUSE_LEAKY:
        v = _mm256_blendv_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(f->lo)),
                             _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
        break;
    case GEMM_FUSE_HARDSIGMOID:
        v = _mm256_fmadd_ps(v, _mm256_set1_ps(f->lo), _mm256_set1_ps(f->hi));
        v = _mm256_min_ps(_mm256_max_ps(v, zero), one);
        break;
    case GEMM_FUSE_HARDSWISH: {
        __m256 h = _mm256_fmadd_ps(v, _mm256_set1_ps(1.0f / 6), _mm256_set1_ps(0.5f));
        v = _mm256_mul_ps(v, _mm256_min_ps(_mm256_max_ps(h, zero), one));
        break;
    }
    default: break;
    }
    if (f->res && f->res_after) v = _mm256_fmadd_ps(_mm256_set1_ps(f->rk), rv, v);
    return v;
}

FUSE256_TARGET static inline __m256 F256_PASTE(FUSE256, _bias)(const gemm_fuse *f, int j, __m256i mk)
{
    return f->bcol ? _mm256_maskload_ps(f->bcol + j, mk) : _mm256_setzero_ps();
}

FUSE256_TARGET static inline __m256 FUSE256(__m256 v, const gemm_fuse *f, int i, int j, __m256i mk)
{
    return F256_PASTE(FUSE256, _c)(v, f, F256_PASTE(FUSE256, _bias)(f, j, mk), i, j, mk);
}

FUSE256_TARGET static inline __m256 F256_PASTE(FUSE256, _f)(__m256 v, int form, const gemm_fuse *f, __m256 bc,
                                                           __m256 lo, __m256 hi, int i, int j, __m256i mk)
{
    switch (form) {
    case GEMM_FORM_NONE: return v;
    case GEMM_FORM_BIAS: return _mm256_add_ps(v, bc);
    case GEMM_FORM_RELU: return _mm256_max_ps(_mm256_add_ps(v, bc), _mm256_setzero_ps()); /* NaN: 0 */
    case GEMM_FORM_CLIP: return _mm256_min_ps(hi, _mm256_max_ps(lo, _mm256_add_ps(v, bc)));
    default: return F256_PASTE(FUSE256, _c)(v, f, bc, i, j, mk);
    }
}

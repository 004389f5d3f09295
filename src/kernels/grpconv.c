/* kgrp_conv (grpconv.h): the weights' layout, one instance of
 * grpconv_tmpl.h per ISA and the pick; threads split the output rows of
 * all images. The vectors are 8 floats on every ISA (a group's block of
 * output channels): on AVX-512 the 32 registers hold a tile of 12 pixels
 * and each input channel is an FMA's broadcast operand. */
#include "kernels/grpconv.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/isa.h"
#include "kernels/win.h"

#if KISA_X86 /* the vector instances: x86-64 only */
#define GV __m256
#define gv_load(p) _mm256_loadu_ps(p)
#define gv_fmab(acc, w, s) _mm256_fmadd_ps(w, _mm256_broadcast_ss(s), acc)
#define gv_zero() _mm256_setzero_ps()
#define gv_add(a, b) _mm256_add_ps(a, b)

#include "kernels/vec_avx512.h"
static inline void grp_storen_avx512(float *p, __m256 v, int64_t n)
{
    _mm256_mask_storeu_ps(p, (__mmask8)((1u << n) - 1), v);
}
#define gv_storen(p, v, n) ((n) == 8 ? _mm256_storeu_ps(p, v) : grp_storen_avx512(p, v, n))
#define KG_P 12
#include "kernels/grpconv_tmpl.h"
#undef KG_P
#undef gv_storen
#include "kernels/vec_end.h"

#include "kernels/vec_avx2.h"
static inline void grp_storen_avx2(float *p, __m256 v, int64_t n)
{
    float t[8];
    _mm256_storeu_ps(t, v);
    memcpy(p, t, sizeof(float) * (size_t)n);
}
#define gv_storen(p, v, n) ((n) == 8 ? _mm256_storeu_ps(p, v) : grp_storen_avx2(p, v, n))
#define KG_P 6
#include "kernels/grpconv_tmpl.h"
#undef KG_P
#undef gv_storen
#include "kernels/vec_end.h"
#undef GV
#undef gv_load
#undef gv_fmab
#undef gv_zero
#undef gv_add
#endif

/* portable: 8 floats in a struct, the loops left to the compiler */
typedef struct grp_v8 {
    float v[8];
} grp_v8;
static inline grp_v8 grp_load8(const float *p)
{
    grp_v8 r;
    memcpy(r.v, p, sizeof r.v);
    return r;
}
static inline grp_v8 grp_fmab8(grp_v8 a, grp_v8 w, const float *s)
{
    for (int l = 0; l < 8; l++) a.v[l] += w.v[l] * *s;
    return a;
}
static inline grp_v8 grp_add8(grp_v8 a, grp_v8 b)
{
    for (int l = 0; l < 8; l++) a.v[l] += b.v[l];
    return a;
}
#define GV grp_v8
#define gv_zero() ((grp_v8){{0}})
#define gv_add grp_add8
#define gv_load grp_load8
#define gv_fmab grp_fmab8
#define gv_storen(p, a, n) memcpy(p, (a).v, sizeof(float) * (size_t)(n))
#include "kernels/vec_portable.h"
#define KG_P 4
#include "kernels/grpconv_tmpl.h"
#undef KG_P
#include "kernels/vec_end.h"

typedef void (*grp_row_fn)(const knhwc_geom *, int64_t, int64_t, const float *, const float *, const float *,
                           kact, int64_t, int, int, float *, int64_t);
static const struct {
    kisa isa;
    grp_row_fn row;
} grp_impls[] = {
#if KISA_X86
    {KISA_AVX512, grp_row_avx512},
    {KISA_AVX2, grp_row_avx2},
#endif
    {KISA_PORTABLE, grp_row_portable},
};

size_t kgrp_pack_size(int64_t groups, int64_t mg, int64_t cg, int64_t taps)
{
    size_t f;
    if (groups < 1 || mg < 1 || cg < 1 || taps < 1 ||
        __builtin_mul_overflow((size_t)groups, (size_t)((mg + 7) / 8) * 8, &f) ||
        __builtin_mul_overflow(f, (size_t)cg, &f) || __builtin_mul_overflow(f, (size_t)taps, &f))
        return 0;
    return f;
}

void kgrp_pack(const float *w, int64_t groups, int64_t mg, int64_t cg, int64_t taps, float *wp)
{
    const int64_t nch = (mg + 7) / 8;
    for (int64_t gi = 0; gi < groups; gi++)
        for (int64_t mc = 0; mc < nch; mc++)
            for (int64_t t = 0; t < taps; t++)
                for (int64_t j = 0; j < cg; j++) {
                    float *d = wp + (((gi * nch + mc) * taps + t) * cg + j) * 8;
                    for (int64_t l = 0; l < 8; l++) {
                        const int64_t o = mc * 8 + l;
                        d[l] = o < mg ? w[((gi * mg + o) * cg + j) * taps + t] : 0.0f;
                    }
                }
}

void kgrp_conv(const knhwc_geom *g, int64_t n, int64_t groups, int64_t mg, const float *x, const float *wp,
               const float *bias, kact act, float *y, int64_t ldy, int threads)
{
    __typeof__(grp_impls[0]) *im = KISA_PICK(grp_impls);
    const int64_t rows = n * g->oh, in_img = g->h * g->w * g->cs, out_img = g->oh * g->ow * ldy;
    int lo, hi; /* the outputs whose window lies inside a row (conv.c takes int geometry) */
    kwin_inner((int)g->ow, (int)g->w, (int)g->kw, (int)g->sw, (int)g->dw, (int)g->pl, &lo, &hi);
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t b = r / g->oh, oy = r % g->oh;
        im->row(g, groups, mg, x + b * in_img, wp, bias, act, oy, lo, hi,
                y + b * out_img + oy * g->ow * ldy, ldy);
    }
}

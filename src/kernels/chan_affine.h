/* A per-channel affine map with a clamp, y = min(max(x * s[k] + t[k], lo), hi)
 * for channel k: an inference BatchNormalization with the Relu or Clip after
 * it, or squeeze-excitation's scale (t NULL, no clamp). A GEMM applies it to
 * A's columns as it packs or reads A (gemm_args.pro: the "prologue", K being
 * the input channels of a 1x1 convolution), kchan_scale to channels-last
 * rows; the map is never written back to x. AVX-512, AVX2 and portable
 * instances of one template (chan_affine_tmpl.h), chosen by kisa_pick. */
#ifndef AIT_KERNELS_CHAN_AFFINE_H
#define AIT_KERNELS_CHAN_AFFINE_H
#include <stdint.h>

typedef struct kaffine {
    const float *s; /* a factor per channel */
    const float *t; /* a shift per channel, or NULL: none */
    float lo, hi;   /* the clamp: -INFINITY, INFINITY none; 0, INFINITY Relu (a NaN stays NaN) */
} kaffine;

/* y[r*ldy + p] = f(x[r*rsx + p*csx]) at channel k0 + p, for r < rows, p < k. */
void kaffine_rows(const kaffine *f, int64_t k0, int64_t k, const float *x, int64_t rsx,
                  int64_t csx, int64_t rows, float *y, int64_t ldy);
/* In place on packed panels of w rows (gemm_pack.h's layout: panel i at
 * d + i*ps, the w values of channel k0 + p at d + i*ps + p*w), p < kb. */
void kaffine_panels(const kaffine *f, int64_t k0, int w, int64_t kb, int64_t panels, float *d,
                    int64_t ps);

#endif

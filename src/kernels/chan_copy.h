/* Copies of whole channels of 4-D float32 tensors, NCHW or channels-last
 * (NHWC) on either side: a Slice over channels, a Concat's input into its
 * channels, and the channel shuffle ShuffleNet exports (Reshape
 * [n][g][c/g][h][w] -> Transpose (0, 2, 1, 3, 4) -> Reshape [n][c][h][w]:
 * output channel j * g + i is input channel i * (c / g) + j), which may be
 * given the shuffle's input in parts (a Concat's inputs), each copied
 * straight to its shuffled channels. NCHW to NCHW copies whole planes
 * (memcpy), NHWC to NHWC runs of channels per pixel when no shuffle
 * spreads them; the rest is a strided loop. No ISA variants of their own:
 * memcpy's and the compiler's, and kchan_scale's channels-last rows on
 * kaffine_rows (chan_affine.h: AVX-512, AVX2, portable). */
#ifndef AIT_KERNELS_CHAN_COPY_H
#define AIT_KERNELS_CHAN_COPY_H
#include <stdbool.h>
#include <stdint.h>

typedef struct kchan_geom {
    int64_t n, hw;        /* images, pixels per channel */
    int64_t cx, s0;       /* x's channels, the first one copied */
    int64_t cy, c0;       /* y's channels, where the first copied one goes (before a shuffle) */
    int64_t groups;       /* > 0: y channel c (from c0 on) is moved to kchan_shuffled */
    bool x_nhwc, y_nhwc;  /* channels-last: [n][hw][c] */
} kchan_geom;

/* Where the shuffle of g groups over c channels puts channel ci. */
static inline int64_t kchan_shuffled(int64_t c, int64_t groups, int64_t ci)
{
    const int64_t per = c / groups;
    return ci % per * groups + ci / per;
}

/* Copies ck channels of x (from s0) to y (from c0, shuffled when groups). */
void kchan_copy(const kchan_geom *g, const float *x, int64_t ck, float *y, int threads);
/* The shuffle of 2 groups of a Concat of two halves, all channels-last:
 * y [pix][2 * per] interleaves a and b [pix][per] (y[p][2j] = a[p][j],
 * y[p][2j + 1] = b[p][j]), a loop the compiler vectorises. */
void kchan_interleave2(const float *a, const float *b, int64_t pix, int64_t per, float *y,
                       int threads);
/* y = x scaled per channel, shifted and clamped: y[im][ch][p] = min(max(x[im][ch][p] *
 * s[im * ss + ch] + t[ch], lo), hi) (ss 0: one set of factors for every image; t NULL: no
 * shift; lo, hi -INFINITY, INFINITY: no clamp, 0, INFINITY: Relu) over g->n images of
 * g->cy channels and g->hw pixels, each side NCHW or channels-last (g->x_nhwc, g->y_nhwc;
 * s0, c0, groups unused), x of g->cx >= g->cy channels (its first g->cy scaled: a
 * channels-last x's rows cx apart): squeeze-excitation's Mul, and an inference
 * BatchNormalization with the Relu or Clip after it. */
void kchan_scale(const kchan_geom *g, const float *x, const float *s, int64_t ss, const float *t,
                 float lo, float hi, float *y, int threads);

#endif

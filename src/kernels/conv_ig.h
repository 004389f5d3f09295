/* Implicit-GEMM KxK convolution over channels-last rows, float32: no
 * column matrix. An output row's pixels, as the GEMM's rows of A, read the
 * input in place: pixel ox's taps (ky, kx .. kx + run) over the group's c
 * channels are one contiguous run of a padded input row (the taps of a
 * kernel row are adjacent pixels when the dilation along x is 1), and the
 * next pixel's run starts sw * c floats on. So the convolution is, per
 * output row, one GEMM per run of taps with A read in place (rows sw * c
 * apart) against that run's rows of the weights (B, packed once per run),
 * each run adding to the output row the one before wrote; the epilogue is
 * the last run's. The input rows a block of output rows reads are first
 * copied into a padded block in the scratch (zeros in the padding, the
 * group's channels, from NHWC or NCHW), small enough to stay in L2; an
 * unpadded NHWC input of one group is read where it is. */
#ifndef AIT_KERNELS_CONV_IG_H
#define AIT_KERNELS_CONV_IG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/gemm.h"
#include "kernels/nhwc.h"

/* The runs of taps B is cut into: kh (a kernel row each) when the dilation
 * along x is 1, else kh * kw (a tap each); run r's rows of the weights
 * [kh*kw*c][n] (row (ky*kw + kx)*c + ci) start at *row0, *rows of them. */
int64_t kig_runs(const knhwc_geom *g);
void kig_run_rows(const knhwc_geom *g, int64_t r, int64_t *row0, int64_t *rows);

/* Floats of scratch kig_conv needs on `threads` threads (0 when the input
 * is read in place: NHWC, c == cs, no padding); false on overflow. */
bool kig_scratch(const knhwc_geom *g, bool nchw, int threads, size_t *floats);

/* One image and group: y[p][j] (rows ldy apart, p = oy*ow + ox) =
 * epi(sum over taps and channels of x * w) for j < n, the weights as
 * kig_runs prepacked views runs[r] (k = that run's rows, n columns). x is
 * the image: NHWC [h][w][cs] or, when nchw, NCHW [cs][h][w]; the group's
 * channels start at g->c0. The epilogue's residual and bias are indexed as
 * gemm_epi's over this (ow*oh) x n output. Fails only as gemm_f32 does. */
ait_status kig_conv(const knhwc_geom *g, bool nchw, const float *x, const gemm_packed *runs,
                    int64_t n, float *y, int64_t ldy, const gemm_epi *epi, float *scratch,
                    int threads, ait_error *e);

#endif

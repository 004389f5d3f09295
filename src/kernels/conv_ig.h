/* Implicit-GEMM KxK convolution over channels-last rows, float32: no
 * column matrix. An output pixel's taps (ky, kx .. kx + run) over the
 * group's c channels are one contiguous run of a padded input row (the
 * taps of a kernel row are adjacent pixels when the dilation along x is
 * 1), and the next pixel's run starts sw * c floats on. So register tiles
 * of output pixels by output channels read the input in place, sum every
 * run of taps (each against its rows of the weights, B, packed once per
 * run) in registers and store each output once, the epilogue applied
 * before the store. The input rows a block of output rows reads are first
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
/* The most runs kig_conv takes (kernels of up to 64 rows, or 64 taps with
 * a dilation along x), and the most pixels of its register tiles. */
#define KIG_RUNS_MAX 64
#define KIG_MR 16
void kig_run_rows(const knhwc_geom *g, int64_t r, int64_t *row0, int64_t *rows);

/* Floats of scratch kig_conv needs on `threads` threads (0 when the input
 * is read in place: NHWC, c == cs, no padding); false on overflow. */
bool kig_scratch(const knhwc_geom *g, bool nchw, int threads, size_t *floats);

/* One image and group: y[p][j] (rows ldy apart, p = oy*ow + ox) =
 * epi(sum over taps and channels of x * w) for j < n, the weights as
 * kig_runs prepacked views runs[r] (k = that run's rows, n columns). x is
 * the image: NHWC [h][w][cs] or, when nchw, NCHW [cs][h][w]; the group's
 * channels start at g->c0. The epilogue's residual and bias are indexed as
 * gemm_epi's over this (ow*oh) x n output. Fails (AIT_E_UNSUPPORTED) past
 * KIG_RUNS_MAX runs or on B's panels narrower than the vector. */
ait_status kig_conv(const knhwc_geom *g, bool nchw, const float *x, const gemm_packed *runs,
                    int64_t n, float *y, int64_t ldy, const gemm_epi *epi, float *scratch,
                    int threads, ait_error *e);

#endif

/* Winograd convolution F(4x4, 3x3) or F(2x2, 3x3), float32, channels-last:
 * a 3x3 stride-1 undilated Conv of one group (any padding) as 36 GEMMs over
 * 6x6 tiles of the input (F(4x4): about 4x fewer multiplies than the direct
 * or implicit GEMM, conv_ig.h) or 16 over 4x4 tiles (F(2x2): 2.25x fewer,
 * with 16/9 of the weights' bytes instead of 4x, for small planes where the
 * transformed weights are read for few tiles), for a few transforms (Lavin
 * and Gray, 2015). Per block of tiles (over all images, so that a block's
 * slices stay near L2), T the tile (6 or 4), P = T * T its positions:
 *   V[pos][tile][ci] = (B^T d B)[pos]   the input's TxT patch d, zeros outside;
 *   M[pos][tile][co] = V[pos] x U[pos]  P GEMMs (gemm_f32, A read in place);
 *   y = A^T M A, the 4x4 (2x2) outputs kept inside the output, the epilogue applied
 *   (common forms in the output transform's registers, the rest by gemm_epi_tile);
 * U[pos] = (G g G^T)[pos], [c][n], made once (kwg_weights) and packed as B.
 * Its error is larger than the direct sum's (1e-6 to 1e-5 relative on
 * float32), so the native backend offers it as a variant ("wino") that the
 * tuner validates, never as a default. */
#ifndef AIT_KERNELS_WINOGRAD_H
#define AIT_KERNELS_WINOGRAD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/gemm.h"
#include "kernels/nhwc.h"

#define KWG_POS 36 /* the most positions of a tile (F(4x4)'s 6x6): the GEMMs */

/* The tile: F(4x4, 3x3) on 6x6 input tiles or F(2x2, 3x3) on 4x4. */
typedef enum { KWG_F4, KWG_F2 } kwg_tile;
/* Its positions (GEMMs, packed U matrices: 36 or 16) and output pixels
 * along each axis (4 or 2). */
int kwg_pos(kwg_tile t);
int kwg_out(kwg_tile t);

/* Whether g is a convolution kwg_conv runs: a 3x3 kernel, stride 1,
 * dilation 1. */
bool kwg_fits(const knhwc_geom *g);

/* The transformed weights: w as conv_ig's B, [9 * c][n] (row (ky*3 + kx)
 * * c + ci), into u[kwg_pos(t)][c][n] (computed in double). */
void kwg_weights(kwg_tile t, const float *w, int64_t c, int64_t n, float *u);

/* Floats of scratch kwg_conv needs for `images` images of n output
 * channels on `threads` threads; false on overflow. */
bool kwg_scratch(kwg_tile t, const knhwc_geom *g, int64_t images, int64_t n, int threads,
                 size_t *floats);

/* images images, x NHWC ([images][h][w][cs], the group's c channels from
 * g->c0): y[p][j] (p = im*oh*ow + oy*ow + ox, rows ldy apart) =
 * epi(conv) for j < n; u: kwg_pos(t) views of U[pos] packed as B (k c, n
 * columns). The epilogue's residual and bias are indexed as gemm_epi's over
 * this (images*oh*ow) x n output (not its rlo/rhi). Fails on a geometry
 * kwg_fits refuses or a failing GEMM. */
ait_status kwg_conv(kwg_tile t, const knhwc_geom *g, int64_t images, const float *x,
                    const gemm_packed *u, int64_t n, float *y, int64_t ldy, const gemm_epi *epi,
                    float *scratch, int threads, ait_error *e);

/* A uint8 residual: q[p * n + j] (p as kwg_conv's output rows) at scale s,
 * zero point z, dequantised a tile's four pixels at a time into L1 for the
 * output transform (epi's res NULL; its res_scale and res_after apply;
 * epi's bias by column, no rlo) instead of whole beforehand. */
typedef struct kwg_res8 {
    const uint8_t *q;
    float s;
    int32_t z;
} kwg_res8;

/* Static int8 F(2x2, 3x3): x uint8 NHWC ([images][h][w][cs], the group's c
 * channels from c0) at scale xs, zero point xz, into uint8 y ([p][n], p as
 * kwg_conv's) at ys, yz: the input transform in whole numbers (int16
 * vectors), V requantised to uint8 per position k at the scale and zero
 * point of its bounds (kwg_vrange_u8: the range B^T d B takes for every x
 * in [0, 255] is 4 x 255 wide, so the scale is 4 of x's quanta, and
 * nothing clamps but V's extremes by one), rounded half to even;
 * the 16 GEMMs on qgemm's int8 kernel (qgemm_u8_uni; u: 16 QG_INT8DQ packs
 * of U[pos] (k c, n columns), us bytes apart, each of kwg_weights(KWG_F2)'s
 * floats quantised per column), float M; the output transform with epi as
 * kwg_conv's, then each output pixel requantised (qg_requant_u8); y NULL:
 * the floats into yf instead, rows ldy apart, as kwg_conv's y. scratch:
 * kwg_scratch_u8's bytes. res8 (NULL: none): a uint8 residual, instead of
 * epi's float one. Error against the direct int8 Conv: the requantised V
 * (bench/RESULTS.md, branch r8). Fails on a geometry kwg_fits refuses,
 * packs of another shape, or res8 beside a float residual, rows' ranges
 * or row biases. */
bool kwg_scratch_u8(const knhwc_geom *g, int64_t images, int64_t n, int threads, size_t *bytes);
void kwg_vrange_u8(int32_t z, float *scale, int32_t *zp); /* 16 of each */
ait_status kwg_conv_u8(const knhwc_geom *g, int64_t images, const uint8_t *x, float xs, int32_t xz,
                       const void *u, size_t us, int64_t n, uint8_t *y, float ys, int32_t yz, float *yf,
                       int64_t ldy, const gemm_epi *epi, const kwg_res8 *res8, void *scratch, int threads,
                       ait_error *e);

#endif

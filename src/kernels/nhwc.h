/* Channels-last (NHWC) convolution pieces, float32: the layout changes at
 * a module's edges, the NHWC im2col whose rows feed a GEMM's A (a tap's
 * channels contiguous), and the depthwise convolution vectorised over
 * channels (one instance per ISA, picked from a table like dwconv.c). */
#ifndef AIT_KERNELS_NHWC_H
#define AIT_KERNELS_NHWC_H
#include <stdint.h>

#include "kernels/act.h"

/* y[n][p][c] = x[n][c][p] (to NHWC) and back; p runs over hw pixels. */
void knhwc_from_nchw(const float *x, int64_t n, int64_t c, int64_t hw, float *y);
void knhwc_to_nchw(const float *x, int64_t n, int64_t c, int64_t hw, float *y);

/* One image's NHWC convolution window: input [h][w][cs] (cs floats from
 * one pixel to the next), the group's channels [c0, c0 + c). */
typedef struct knhwc_geom {
    int64_t h, w, cs, c0, c;
    int64_t kh, kw, sh, sw, dh, dw, pt, pl, oh, ow;
} knhwc_geom;

/* a[p - p0][(ky*kw + kx)*c + ci] = x[iy][ix][c0 + ci] for output pixels
 * p in [p0, p1) (0 in the padding): the GEMM's A, K = kh*kw*c. */
void knhwc_im2col(const knhwc_geom *g, const float *x, int64_t p0, int64_t p1, float *a);
/* The same rows of an NCHW x ([cs][h][w]: planes c0 .. c0 + c), read from
 * the planes: a Conv of a few input channels (a network's stem on its NCHW
 * image) without the whole image changed to NHWC first. */
void knhwc_im2col_nchw(const knhwc_geom *g, const float *x, int64_t p0, int64_t p1, float *a);
/* The same of uint8 x (a quantised activation), the padding `pad` (its
 * zero point), rows lda >= kh*kw*c bytes apart, 0 after the K bytes. */
void knhwc_im2col_u8(const knhwc_geom *g, const uint8_t *x, uint8_t pad, int64_t p0, int64_t p1,
                     uint8_t *a, int64_t lda);

/* The implicit GEMM of a uint8 image (qgemm_u8_rows), when its taps along
 * x are adjacent pixels with all their channels (dw 1, c0 0, c = cs, kw *
 * c a multiple of 4): output pixel p's A row is kh runs of kw * c bytes,
 * run ky at rp[p] + ky * *off of the image padded (knhwc_pad_u8; x itself
 * when the window never leaves it). x has xc <= c channels per pixel: with
 * fewer (a 3-channel stem widened to 4, so that kw * c is whole quads) the
 * padded image has c, the last c - xc of each pixel the pad (whose weights
 * the caller makes 0). knhwc_padded_u8: the padded image's bytes (0: x
 * itself will do; -1: no implicit GEMM for g, or overflow), its row of
 * pixels *wp wide. */
int64_t knhwc_padded_u8(const knhwc_geom *g, int64_t xc, int64_t *wp);
/* x (xc channels per pixel) padded with `pad` (the zero point) into xp,
 * knhwc_padded_u8's bytes. */
void knhwc_pad_u8(const knhwc_geom *g, const uint8_t *x, int64_t xc, uint8_t pad, uint8_t *xp);
/* The same padded image made from a float NCHW x ([xc][h][w], a stem's
 * image) quantised as qg_quant_u8 at scale s and zero point z: the bytes of
 * knhwc_pad_u8 on qg_quant_u8 of knhwc_from_nchw of x, in one pass over
 * the planes (no NHWC copy of the floats, no unpadded bytes). */
void knhwc_pad_u8_nchw(const knhwc_geom *g, const float *x, int64_t xc, float s, int32_t z,
                       uint8_t pad, uint8_t *xp);
/* rp[p - p0] for output pixels [p0, p1) of xp (padded, or x when
 * knhwc_padded_u8 said 0), rows wp pixels wide; *off: the runs' distance. */
void knhwc_rows_u8(const knhwc_geom *g, const uint8_t *xp, int64_t wp, int64_t p0, int64_t p1,
                   const uint8_t **rp, int64_t *off);

/* Depthwise (one channel per group, multiplier 1) over n images of
 * g (c0 = 0, c = cs): y[n][oy][ox][c] = act(sum x * wt[ky][kx][c] +
 * bias[c]) + res[n][oy][ox][c]; wt is the weights channels-last (kh*kw
 * rows of c), bias and res may be NULL. sums, when not NULL, [n * oh][c]:
 * each output row's sum over its pixels, taken while the row is in cache
 * (a global average pool of y without reading it again). */
void knhwc_dw(const knhwc_geom *g, int64_t n, const float *x, const float *wt, const float *bias,
              kact act, const float *res, float *y, float *sums, int threads);

/* knhwc_dw between NCHW values (a module's edges): x [n][c][h][w], y's
 * image b at y + b * ys ([c][oh][ow]), no residual, no sums. By bands of
 * `rows` output rows (< 1: knhwc_dw_nchw_rows's), each band's input rows
 * transposed to NHWC in the scratch, the kernel's rows, then the band's
 * output rows transposed into y: the channels-last copies stay in L2
 * instead of a whole transposed input and output going through memory.
 * Threads split the bands; scratch: knhwc_dw_nchw_floats (-1: overflow). */
int64_t knhwc_dw_nchw_rows(const knhwc_geom *g);
int64_t knhwc_dw_nchw_floats(const knhwc_geom *g, int64_t rows, int threads);
void knhwc_dw_nchw(const knhwc_geom *g, int64_t n, const float *x, const float *wt, const float *bias,
                   kact act, float *y, int64_t ys, int64_t rows, float *scratch, int threads);

/* The most taps knhwc_dw_u8 takes (its sums stay exact). */
#define KDW_U8_TAPS 512
/* Static int8 depthwise, as knhwc_dw of uint8 x at zero point xz (the
 * padding reads as xz) and int8 weights wq[tap][c] (held as floats):
 * y = act(scale[c] * sum (x - xz) * wq + bias[c]), the sums exact (int32
 * accumulation's); scale[c] is the input's scale times channel c's weight
 * scale. Written as floats to y, or, when yq is given, requantised to
 * uint8 yq at (ys, yz) (qg_requant_u8) through y, which then holds threads (at least 1)
 * rows of ow * c floats. */
void knhwc_dw_u8(const knhwc_geom *g, int64_t n, const uint8_t *x, int32_t xz, const float *wq,
                 const float *scale, const float *bias, kact act, float *y, uint8_t *yq, float ys,
                 int32_t yz, int threads);

#endif

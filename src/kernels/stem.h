/* The direct convolution of an image with a few channels (a network's
 * stem: 3 channels, 3x3, stride 2, on its NCHW image), channels-last out:
 * per output pixel, each tap's input value broadcast times the tap's
 * vector of output channels, the bias and activation in registers. No A
 * is written: the im2col + GEMM it replaces wrote and read 27 floats per
 * pixel through gathers (mobilenet_v3_large's stem: 8% of its run). */
#ifndef AIT_KERNELS_STEM_H
#define AIT_KERNELS_STEM_H
#include <stdint.h>

#include "kernels/act.h"
#include "kernels/nhwc.h"

/* Taps (c * kh * kw) up to which kstem_conv takes a geometry. */
#define KSTEM_TAPS 32
/* Output channels up to which the native backend runs a stem here rather
 * than as an implicit GEMM (conv.c's conv_ig: measured up to 64). */
#define KSTEM_WIDE 64

/* y[p][co] = act(bias[co] + sum over ky, kx, ci of x[c0 + ci][iy][ix] *
 * w(k, co)) for the output pixels p of one image, rows ldy floats apart,
 * co < m; x is NCHW ([cs][h][w], the window's planes c0 .. c0 + c; taps in
 * the padding count 0), k = (ky * kw + kx) * c + ci, and w the weights as
 * a GEMM's packed B: panels of nr output channels (zeros past m), panel j
 * at w + j * kdim * nr, w(k, co) at [k * nr + co % nr]. bias may be NULL.
 * The caller checks kstem_takes first. */
void kstem_conv(const knhwc_geom *g, const float *x, const float *w, int nr, int64_t m,
                const float *bias, kact act, float *y, int64_t ldy, int threads);
/* Whether kstem_conv takes g: c * kh * kw at most KSTEM_TAPS. */
int kstem_takes(const knhwc_geom *g);

#endif

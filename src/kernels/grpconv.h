/* Grouped convolution of few channels per group, channels-last, float32
 * (RegNet's and ResNeXt's groups of 4 to 16 channels): each output pixel's
 * vector of a group's output channels (8 at a time) accumulates the taps'
 * weight vectors times its input channels broadcast, over a tile of
 * output pixels along the row, instead of an im2col and a GEMM per group
 * whose N (the group's output channels) is a fraction of a vector (one
 * instance per ISA, picked from a table like nhwc.c). */
#ifndef AIT_KERNELS_GRPCONV_H
#define AIT_KERNELS_GRPCONV_H
#include <stddef.h>
#include <stdint.h>

#include "kernels/act.h"
#include "kernels/nhwc.h"

/* The most input and output channels per group kgrp_conv is meant for
 * (above them the GEMM per group is wide enough). */
#define KGRP_MAX_C 16

/* Floats of the packed weights of `groups` groups of mg output and cg
 * input channels, taps taps each; 0 on overflow. */
size_t kgrp_pack_size(int64_t groups, int64_t mg, int64_t cg, int64_t taps);
/* w: ONNX's [groups * mg][cg][taps] to wp (kgrp_pack_size floats): per
 * group, per block of 8 output channels (the last one padded with 0), per
 * tap and input channel, the block's 8 weights. */
void kgrp_pack(const float *w, int64_t groups, int64_t mg, int64_t cg, int64_t taps, float *wp);

/* n images of g (c = cg channels per group, cs = groups * cg, c0 0):
 * y[n][oy][ox][gi * mg + o] (pixels ldy floats apart, images oh * ow *
 * ldy) = act(sum over ky, kx, j of x[n][iy][ix][gi * cg + j] * w[gi * mg +
 * o][j][ky][kx] + bias[gi * mg + o]), wp as kgrp_pack makes it, bias may
 * be NULL; threads split the output rows. */
void kgrp_conv(const knhwc_geom *g, int64_t n, int64_t groups, int64_t mg, const float *x, const float *wp,
               const float *bias, kact act, float *y, int64_t ldy, int threads);

#endif

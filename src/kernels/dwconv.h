/* Depthwise 2-D convolution, NCHW, float32: every output channel oc reads
 * one input channel, oc / mult (mult, the channel multiplier, is 1 when
 * groups == channels). Any kernel size, stride, dilation and pads; 3x3 and
 * 5x5 have unrolled paths. A fused epilogue: bias, then an activation. */
#ifndef AIT_KERNELS_DWCONV_H
#define AIT_KERNELS_DWCONV_H
#include "kernels/act.h"
#include "kernels/win.h"

typedef struct kdw_geom {
    int n, c, h, w; /* input [n][c][h][w] */
    int mult;       /* output channels per input channel */
    int kh, kw, sh, sw, dh, dw;
    int pt, pl;     /* top and left pads (the others follow from oh, ow) */
    int oh, ow;     /* output [n][c * mult][oh][ow] */
} kdw_geom;

/* y = act(conv(x, w) + bias); w is [c * mult][1][kh][kw]; bias NULL or
 * [c * mult]. */
void kdw_run(const kdw_geom *g, const float *x, const float *w, const float *bias, kact act,
             float *y, int threads);

#endif

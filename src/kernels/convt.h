/* ConvTranspose 2-D, NCHW, float32, as its own kernel (not a convolution
 * over a zero-stuffed input): for each output channel and kernel tap, the
 * column of the GEMM W^T X (a plain inner product over the group's input
 * channels, four taps at a time so each input load feeds four FMAs), then
 * col2im adds it into the output. Strides, pads, dilation, groups, bias;
 * output_padding is in oh, ow: (in - 1) * s - pads + d * (k - 1) + out_pad + 1. */
#ifndef AIT_KERNELS_CONVT_H
#define AIT_KERNELS_CONVT_H
#include "kernels/act.h"

typedef struct kct_geom {
    int n, cin, h, w; /* x [n][cin][h][w] */
    int cout, group;  /* y [n][cout][oh][ow] */
    int kh, kw, sh, sw, dh, dw;
    int pt, pl;       /* top and left pads */
    int oh, ow;
} kct_geom;

/* y = act(convtranspose(x, w) + bias); w is [cin][cout / group][kh][kw],
 * bias NULL or [cout] (a folded BatchNormalization is in w and bias).
 * Returns 0, or -1 when its scratch cannot be allocated. */
/* out = w with each output channel's taps times s[channel] (w as kconvt_run
 * reads it: [cin][cout / group][kh][kw], channel grp * cog + oc of input
 * channel ci in group grp): a BatchNormalization folded into the weights. */
void kconvt_scale_w(const kct_geom *g, const float *w, const float *s, float *out);

int kconvt_run(const kct_geom *g, const float *x, const float *w, const float *bias, kact act,
               float *y, int threads);

#endif

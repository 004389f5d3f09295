/* im2col for 2-D convolutions lowered to GEMM (NCHW, one image and group). */
#ifndef AIT_KERNELS_IM2COL_H
#define AIT_KERNELS_IM2COL_H
#include <stdint.h>

typedef struct conv2d_geom {
    int64_t c, h, w;      /* input channels (of the group), height, width */
    int64_t kh, kw, oh, ow;
    int64_t sh, sw, dh, dw, ph, pw; /* strides, dilations, begin pads */
} conv2d_geom;

/* col[(ci*kh + ki)*kw + kj][oy*ow + ox] = x[ci][iy][ix], 0 in the padding. */
void im2col_f32(const conv2d_geom *g, const float *x, float *col);

#endif

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

/* Its columns [p0, p1) (output pixels oy*ow + ox) packed as the GEMM's B
 * for a kernel of NR = nr (the panel layout of gemm_pack_b, no header:
 * panel p at dst + p*K*nr, K = c*kh*kw, zero past p1 - p0): a block of a
 * large image at a time stays in cache for the GEMM. row: scratch of
 * p1 - p0 floats. */
void im2col_pack_f32(const conv2d_geom *g, const float *x, int64_t p0, int64_t p1, int nr,
                     float *row, float *dst);

#endif

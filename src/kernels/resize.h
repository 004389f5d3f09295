/* 2-D Resize, NCHW, float32: nearest and linear (bilinear), with the ONNX
 * coordinate transformation modes and nearest modes that exports use.
 * Indices and weights match ait's reference Resize (src/ops/resize.c):
 * source coordinates outside the input clamp to its edge. */
#ifndef AIT_KERNELS_RESIZE_H
#define AIT_KERNELS_RESIZE_H

#include <stdint.h>

typedef enum krz_coord {
    KRZ_HALF_PIXEL,         /* (x + 0.5) / scale - 0.5 */
    KRZ_PYTORCH_HALF_PIXEL, /* the same, 0 when the output has one element */
    KRZ_ALIGN_CORNERS,      /* x * (in - 1) / (out - 1) */
    KRZ_ASYMMETRIC          /* x / scale */
} krz_coord;

typedef enum krz_nearest {
    KRZ_ROUND_PREFER_FLOOR,
    KRZ_ROUND_PREFER_CEIL,
    KRZ_FLOOR,
    KRZ_CEIL
} krz_nearest;

typedef struct krz_geom {
    int planes, h, w, oh, ow; /* x [planes][h][w], y [planes][oh][ow] */
    double scale_h, scale_w;  /* the scales given, or 0 for oh / h, ow / w */
    int linear;               /* 0: nearest */
    krz_coord coord;
    krz_nearest nearest;
} krz_geom;

/* Returns 0, or -1 when its index tables cannot be allocated. */
int kresize(const krz_geom *g, const float *x, float *y, int threads);
/* Nearest Resize channels-last: x [planes][h][w][c] (planes: the images),
 * y [planes][oh][ow] pixels ldy floats apart (ldy >= c: a Concat's longer
 * pixels), each output pixel its source pixel's c values, plus res's
 * ([planes][oh][ow][c]) when res is not NULL (an Add after the Resize).
 * Returns 0, -1 for a linear geometry or when its index tables cannot be
 * allocated. */
int kresize_nhwc(const krz_geom *g, int64_t c, const float *x, const float *res, float *y, int64_t ldy,
                 int threads);

#endif

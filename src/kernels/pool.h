/* 2-D pooling, NCHW (or NHWC: kpool_nhwc), float32: max (with dilation)
 * and average (padding counted or not in the divisor), any window, stride
 * and pads; ceil_mode is the caller's choice of oh, ow (kwin_out). The
 * global pools. And MaxPool channels-last on uint8 (kpool_nhwc_max_u8). */
#ifndef AIT_KERNELS_POOL_H
#define AIT_KERNELS_POOL_H
#include <stddef.h>
#include <stdint.h>
#include "kernels/win.h"

typedef enum kpool_kind { KPOOL_MAX, KPOOL_AVG } kpool_kind;

typedef struct kpool_geom {
    int n, c, h, w;
    int kh, kw, sh, sw, dh, dw;
    int pt, pl, pb, pr;
    int oh, ow;
    int include_pad; /* average: the divisor counts taps inside the padded input */
} kpool_geom;

/* y[n][c][oh][ow]. A window with no tap inside the input gives -inf (max)
 * or 0 (average without padding counted). */
void kpool_run(kpool_kind k, const kpool_geom *g, const float *x, float *y, int threads);
/* The same channels-last: x [n][h][w][c], y [n][oh][ow][c]. */
void kpool_nhwc(kpool_kind k, const kpool_geom *g, const float *x, float *y, int threads);
/* MaxPool channels-last of uint8 x (a quantised activation: max commutes
 * with a monotone quantisation, so y is at x's scale and zero point); a
 * window with no tap inside the input gives 0. */
void kpool_nhwc_max_u8(const kpool_geom *g, const uint8_t *x, uint8_t *y, int threads);
/* y[p] = the max or mean of x[p][0 .. size), p < planes. */
void kpool_global(kpool_kind k, size_t planes, size_t size, const float *x, float *y, int threads);

#endif

/* The static int8 3x3 depthwise on AVX512-VNNI (nhwc_dwq_vnni.c): the
 * int32 sums of uint8 x by int8 w in vpdpbusd, three kernel rows of a
 * column of pixels interleaved into each int32 lane of a channel, the
 * three columns of an output pixel in three vpdpbusd. Private to nhwc.c's
 * AVX-512 instance. */
#ifndef AIT_KERNELS_NHWC_DWQ_H
#define AIT_KERNELS_NHWC_DWQ_H
#include <stdbool.h>
#include <stdint.h>

#include "kernels/nhwc.h"

/* Whether this CPU runs knhwc_dwq3_vnni (AVX512-VNNI and VBMI; asked once). */
bool knhwc_dwq3_vnni_ok(void);

/* The most channels knhwc_dwq3_pack's caller packs (on its stack). */
#define KDWQ3_PACK_C 2048
/* wv[kx * C + c]: kernel column kx's weights of channel c as vpdpbusd takes
 * them, the int8 w[0][kx], w[1][kx], w[2][kx], 0 in an int32 (wq as below;
 * C <= KDWQ3_PACK_C), once per call instead of once per output row. */
void knhwc_dwq3_pack(const float *wq, int64_t C, int32_t *wv);

/* The output pixels [ox0, ox1) of one output row of a 3x3 depthwise (dw 1,
 * sw 1 or 2; the columns outside the image left out at its edges), channels [0, C
 * / 16 * 16) of g (c0 0, c = cs = C): iy0 the row's first input row (kernel
 * row ky at iy0 + ky * dh), its kernel rows [ky0, ky1) inside the image. x
 * uint8 at zero point xz, wq the int8 weights [tap][c] held as floats, y =
 * (sum (x - xz) * wq) * scale[c] + bias[c] (bias may be NULL), the same
 * floats as nhwc_tmpl.h's dwq_blocks; wv knhwc_dwq3_pack's of wq (or NULL:
 * packed here per channel block). With yq, written as uint8 as its
 * dwq_out writes them (act clamped to [lo, hi], then rint(y * r8) + z8
 * saturated), else as floats to y (the activation left to the caller). */
void knhwc_dwq3_vnni(const knhwc_geom *g, const uint8_t *x, int32_t xz, const float *wq,
                     const int32_t *wv, const float *scale, const float *bias, int64_t iy0, int64_t ky0, int64_t ky1,
                     int64_t ox0, int64_t ox1, float *y, uint8_t *yq, float lo, float hi, float r8,
                     float z8);

#endif

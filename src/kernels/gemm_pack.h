/* Panel packing shared by the GEMM driver and gemm_pack_a/b (private). */
#ifndef AIT_KERNELS_GEMM_PACK_H
#define AIT_KERNELS_GEMM_PACK_H
#include <stdint.h>

#define GEMM_PACK_HDR 64 /* bytes before a prepacked buffer's panels */

/* Panels of w over `rows` (element (r, p) at x[r*rs_w + p*rs_k], p < kb)
 * into dst: panel i at dst + i*kb*w, zero past rows. */
void gemm_pack_panels(int w, const float *x, int64_t rs_w, int64_t rs_k, int64_t rows, int64_t kb,
                      float *dst);

#endif

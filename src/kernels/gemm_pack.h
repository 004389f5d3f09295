/* Panel packing shared by the GEMM driver and gemm_pack_a/b (private). */
#ifndef AIT_KERNELS_GEMM_PACK_H
#define AIT_KERNELS_GEMM_PACK_H
#include <stdint.h>

#define GEMM_PACK_HDR 64 /* bytes before a prepacked buffer's panels */

/* Panels of w over `rows` (element (r, p) at x[r*rs_w + p*rs_k], p < kb)
 * into dst: panel i at dst + i*kb*w, zero past rows. */
void gemm_pack_panels(int w, const float *x, int64_t rs_w, int64_t rs_k, int64_t rows, int64_t kb,
                      float *dst);

/* d[p*w + r] = s[r][p] for r < w, p < kb: w rows of a row-major A side by
 * side (an MR-row panel), per ISA (gemm_pack_panels picks by kisa). */
typedef void (*gemm_pack_rows_fn)(int w, const float *const *s, int64_t kb, float *d);
void gemm_pack_rows_avx512(int w, const float *const *s, int64_t kb, float *d);
void gemm_pack_rows_avx2(int w, const float *const *s, int64_t kb, float *d);

#endif

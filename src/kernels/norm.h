/* Row-wise kernels over the last axis, float32, x viewed as [rows][d]:
 * LayerNorm and RMSNorm (scale and bias optional), Softmax and LogSoftmax
 * (the row's max subtracted first, so large inputs do not overflow). */
#ifndef AIT_KERNELS_NORM_H
#define AIT_KERNELS_NORM_H
#include <stddef.h>
#include <stdint.h>

/* y = (x - mean) / sqrt(var + eps) * scale + bias; scale, bias NULL or [d] */
void klayernorm(const float *x, const float *scale, const float *bias, float *y, size_t rows,
                size_t d, float eps, int threads);
/* y = x / sqrt(mean(x^2) + eps) * scale + bias; scale, bias NULL or [d] */
void krmsnorm(const float *x, const float *scale, const float *bias, float *y, size_t rows,
              size_t d, float eps, int threads);
/* klayernorm (rms 0) or krmsnorm (rms 1) with each row of y also
 * quantised as it is made, while it is in L1: row r's qg_quant_row_u8
 * bytes (kernels/qgemm.h) at q + r * ldq (ldq >= d; 0 from d to ldq),
 * its scale sa[r] and zero point za[r]: the A of the int8dq GEMMs reading
 * y (qg_quant_rows_u8's bytes), without a pass over y of their own. */
void knorm_q8(const float *x, const float *scale, const float *bias, float *y, size_t rows,
              size_t d, float eps, int rms, int threads, uint8_t *q, size_t ldq, float *sa,
              int32_t *za);
/* y = exp(x - max) / sum, or with log_ (x - max) - log(sum); a row of
 * -inf only gives NaN (0 / 0) */
void ksoftmax(const float *x, float *y, size_t rows, size_t d, int log_, int threads);

#endif

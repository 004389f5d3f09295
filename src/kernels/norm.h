/* Row-wise kernels over the last axis, float32, x viewed as [rows][d]:
 * LayerNorm and RMSNorm (scale and bias optional), Softmax and LogSoftmax
 * (the row's max subtracted first, so large inputs do not overflow). */
#ifndef AIT_KERNELS_NORM_H
#define AIT_KERNELS_NORM_H
#include <stddef.h>

/* y = (x - mean) / sqrt(var + eps) * scale + bias; scale, bias NULL or [d] */
void klayernorm(const float *x, const float *scale, const float *bias, float *y, size_t rows,
                size_t d, float eps, int threads);
/* y = x / sqrt(mean(x^2) + eps) * scale + bias; scale, bias NULL or [d] */
void krmsnorm(const float *x, const float *scale, const float *bias, float *y, size_t rows,
              size_t d, float eps, int threads);
/* y = exp(x - max) / sum, or with log_ (x - max) - log(sum); a row of
 * -inf only gives NaN (0 / 0) */
void ksoftmax(const float *x, float *y, size_t rows, size_t d, int log_, int threads);

#endif

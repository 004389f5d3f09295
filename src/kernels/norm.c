/* LayerNorm, RMSNorm and Softmax over the last axis: one instance of
 * norm_tmpl.h per ISA, picked from a table; threads split the rows. */
#include "kernels/norm.h"
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "kernels/isa.h"

/* 1 in the lanes a partial load reads, 0 past them: masks a row's tail */
static const float ones_f[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/norm_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/norm_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/norm_tmpl.h"
#include "kernels/vec_end.h"

static const struct {
    kisa isa;
    void (*norm)(const float *, const float *, const float *, float *, size_t, float, int);
    void (*softmax)(const float *, float *, size_t, int);
} norm_impls[] = {
#if KISA_X86
    {KISA_AVX512, norm_row_avx512, softmax_row_avx512},
    {KISA_AVX2, norm_row_avx2, softmax_row_avx2},
#endif
    {KISA_PORTABLE, norm_row_portable, softmax_row_portable},
};

static void norm_rows(const float *x, const float *scale, const float *bias, float *y,
                      size_t rows, size_t d, float eps, int rms, int threads)
{
    __typeof__(norm_impls[0]) *im = KISA_PICK(norm_impls);
    if (!d) return;
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
    for (size_t r = 0; r < rows; r++) im->norm(x + r * d, scale, bias, y + r * d, d, eps, rms);
}

void klayernorm(const float *x, const float *scale, const float *bias, float *y, size_t rows,
                size_t d, float eps, int threads)
{
    norm_rows(x, scale, bias, y, rows, d, eps, 0, threads);
}

void krmsnorm(const float *x, const float *scale, const float *bias, float *y, size_t rows,
              size_t d, float eps, int threads)
{
    norm_rows(x, scale, bias, y, rows, d, eps, 1, threads);
}

void ksoftmax(const float *x, float *y, size_t rows, size_t d, int log_, int threads)
{
    __typeof__(norm_impls[0]) *im = KISA_PICK(norm_impls);
    if (!d) return;
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
    for (size_t r = 0; r < rows; r++) im->softmax(x + r * d, y + r * d, d, log_);
}

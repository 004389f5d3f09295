/* gemm_stream_rows (gemm_stream.h): the template's instances per ISA and the pick. */
#include "kernels/gemm_stream.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/isa.h"

#if KISA_X86
#include "kernels/vec_avx512.h"
#define GST_NT(p, v) _mm512_stream_ps(p, v)
#include "kernels/gemm_stream_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#define GST_NT(p, v) _mm256_stream_ps(p, v)
#include "kernels/gemm_stream_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#define GST_NT(p, v) vstore(p, v)
#include "kernels/gemm_stream_tmpl.h"
#include "kernels/vec_end.h"

static const struct {
    kisa isa;
    void (*rows)(float *, int64_t, const float *, int64_t, int, int);
} impls[] = {
#if KISA_X86
    {KISA_AVX512, stream_rows_avx512},
    {KISA_AVX2, stream_rows_avx2},
#endif
    {KISA_PORTABLE, stream_rows_portable},
};

void gemm_stream_rows(float *dst, int64_t ldd, const float *src, int64_t lds, int m, int n)
{
    const __typeof__(impls[0]) *im = KISA_PICK(impls);
    im->rows(dst, ldd, src, lds, m, n);
}

void gemm_stream_fence(void)
{
#if KISA_X86
    __builtin_ia32_sfence();
#endif
}

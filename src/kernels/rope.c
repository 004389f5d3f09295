/* krope (rope.h): one instance of rope_tmpl.h per ISA, picked from a table;
 * threads split the rows. */
#include "kernels/rope.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/isa.h"

#if KISA_X86
#include "kernels/vec_avx512.h"
#include "kernels/rope_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/rope_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/rope_tmpl.h"
#include "kernels/vec_end.h"

static const struct {
    kisa isa;
    void (*row)(const float *, const float *, const float *, float *, int64_t);
} impls[] = {
#if KISA_X86
    {KISA_AVX512, rope_row_avx512},
    {KISA_AVX2, rope_row_avx2},
#endif
    {KISA_PORTABLE, rope_row_portable},
};

void krope(const float *x, const float *cos, const float *sin, float *y, int64_t rows, int64_t period,
           int64_t d, int threads)
{
    const __typeof__(impls[0]) *im = KISA_PICK(impls);
    if (d < 2 || period < 1) return;
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t p = r % period;
        im->row(x + r * d, cos + p * d, sin + p * d, y + r * d, d / 2);
    }
}

/* The LSTM cell update (lstm.h): one instance of lstm_tmpl.h per ISA,
 * picked from a table. */
#include "kernels/lstm.h"
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "kernels/isa.h"

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/lstm_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/lstm_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/lstm_tmpl.h"
#include "kernels/vec_end.h"

static const struct {
    kisa isa;
    void (*cell)(const float *, float *, float *, size_t);
} lstm_impls[] = {
#if KISA_X86
    {KISA_AVX512, lstm_cell_avx512},
    {KISA_AVX2, lstm_cell_avx2},
#endif
    {KISA_PORTABLE, lstm_cell_portable},
};

void klstm_cell(const float *g, float *c, float *h, size_t n)
{
    __typeof__(lstm_impls[0]) *im = KISA_PICK(lstm_impls);
    im->cell(g, c, h, n);
}

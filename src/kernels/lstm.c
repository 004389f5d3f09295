/* The LSTM's recurrence (lstm.h): one instance of lstm_tmpl.h per ISA,
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

typedef void (*lstm_dir_fn)(const klstm_dir *, size_t, size_t, size_t);

static const struct {
    kisa isa;
    lstm_dir_fn dir;
} lstm_impls[] = {
#if KISA_X86
    {KISA_AVX512, lstm_dir_avx512},
    {KISA_AVX2, lstm_dir_avx2},
#endif
    {KISA_PORTABLE, lstm_dir_portable},
};

size_t klstm_pack_floats(size_t h)
{
    size_t np = h / KLSTM_P + (h % KLSTM_P != 0), n;
    if (__builtin_mul_overflow(np, h, &n) || __builtin_mul_overflow(n, 4 * KLSTM_P, &n)) return 0;
    return n;
}

void klstm_pack_r(const float *r, size_t h, float *dst)
{
    size_t np = h / KLSTM_P + (h % KLSTM_P != 0);
    for (size_t p = 0; p < np; p++)
        for (size_t k = 0; k < h; k++)
            for (size_t g = 0; g < 4; g++)
                for (size_t u = 0; u < KLSTM_P; u++) {
                    size_t j = p * KLSTM_P + u;
                    *dst++ = j < h ? r[(g * h + j) * h + k] : 0.0f;
                }
}

void klstm_seq(const klstm_dir *d, int nd, size_t t, size_t b, size_t h, int threads)
{
    lstm_dir_fn f = ((__typeof__(lstm_impls[0]) *)KISA_PICK(lstm_impls))->dir;
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1 && nd > 1) \
    schedule(static)
    for (int k = 0; k < nd; k++) f(&d[k], t, b, h);
}

/* Depthwise convolution: one instance of dwconv_tmpl.h per ISA, picked from
 * a table; threads split the output rows of all planes. */
#include "kernels/dwconv.h"
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "kernels/isa.h"

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/dwconv_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/dwconv_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/dwconv_tmpl.h"
#include "kernels/vec_end.h"

typedef void (*dw_row_fn)(const kdw_geom *, const float *, const float *, float, int, int, int,
                          float *, kact);
static const struct {
    kisa isa;
    dw_row_fn row;
} dw_impls[] = {
#if KISA_X86
    {KISA_AVX512, dw_row_avx512},
    {KISA_AVX2, dw_row_avx2},
#endif
    {KISA_PORTABLE, dw_row_portable},
};

void kdw_run(const kdw_geom *g, const float *x, const float *w, const float *bias, kact act,
             float *y, int threads)
{
    __typeof__(dw_impls[0]) *im = KISA_PICK(dw_impls);
    const int oc = g->c * g->mult;
    const long planes = (long)g->n * oc, rows = planes * g->oh;
    int lo, hi;
    kwin_inner(g->ow, g->w, g->kw, g->sw, g->dw, g->pl, &lo, &hi);
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
    for (long r = 0; r < rows; r++) {
        long p = r / g->oh;
        int oy = (int)(r % g->oh), o = (int)(p % oc);
        long nb = p / oc;
        const float *xp = x + ((size_t)nb * g->c + (size_t)(o / g->mult)) * g->h * g->w;
        im->row(g, xp, w + (size_t)o * g->kh * g->kw, bias ? bias[o] : 0.0f, oy, lo, hi,
                y + ((size_t)p * g->oh + oy) * g->ow, act);
    }
}

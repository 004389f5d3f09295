/* Pooling: one instance of pool_tmpl.h per ISA, picked from a table;
 * threads split the output rows of all planes. */
#include "kernels/pool.h"
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "kernels/isa.h"

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/pool_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/pool_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/pool_tmpl.h"
#include "kernels/vec_end.h"

static const struct {
    kisa isa;
    void (*row)(kpool_kind, const kpool_geom *, const float *, int, int, int, float *);
    float (*plane)(kpool_kind, const float *, size_t);
    void (*nhwc)(kpool_kind, const kpool_geom *, const float *, int, float *);
    void (*max_u8)(const kpool_geom *, const uint8_t *, int, uint8_t *);
} pool_impls[] = {
#if KISA_X86
    {KISA_AVX512, pool_row_avx512, pool_plane_avx512, pool_nhwc_row_avx512,
     pool_nhwc_max_u8_row_avx512},
    {KISA_AVX2, pool_row_avx2, pool_plane_avx2, pool_nhwc_row_avx2,
     pool_nhwc_max_u8_row_avx2},
#endif
    {KISA_PORTABLE, pool_row_portable, pool_plane_portable, pool_nhwc_row_portable,
     pool_nhwc_max_u8_row_portable},
};

void kpool_run(kpool_kind k, const kpool_geom *g, const float *x, float *y, int threads)
{
    __typeof__(pool_impls[0]) *im = KISA_PICK(pool_impls);
    const long rows = (long)g->n * g->c * g->oh;
    int lo, hi;
    kwin_inner(g->ow, g->w, g->kw, g->sw, g->dw, g->pl, &lo, &hi);
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
    for (long r = 0; r < rows; r++) {
        long p = r / g->oh;
        int oy = (int)(r % g->oh);
        im->row(k, g, x + (size_t)p * g->h * g->w, oy, lo, hi, y + (size_t)r * g->ow);
    }
}

void kpool_nhwc(kpool_kind k, const kpool_geom *g, const float *x, float *y, int threads)
{
    __typeof__(pool_impls[0]) *im = KISA_PICK(pool_impls);
    const long rows = (long)g->n * g->oh;
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
    for (long r = 0; r < rows; r++)
        im->nhwc(k, g, x + (size_t)(r / g->oh) * g->h * g->w * g->c, (int)(r % g->oh),
                 y + (size_t)r * g->ow * g->c);
}

void kpool_nhwc_max_u8(const kpool_geom *g, const uint8_t *x, uint8_t *y, int threads)
{
    __typeof__(pool_impls[0]) *im = KISA_PICK(pool_impls);
    const long rows = (long)g->n * g->oh;
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
    for (long r = 0; r < rows; r++)
        im->max_u8(g, x + (size_t)(r / g->oh) * g->h * g->w * g->c, (int)(r % g->oh),
                   y + (size_t)r * g->ow * g->c);
}

void kpool_global(kpool_kind k, size_t planes, size_t size, const float *x, float *y, int threads)
{
    __typeof__(pool_impls[0]) *im = KISA_PICK(pool_impls);
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
    for (size_t p = 0; p < planes; p++) y[p] = im->plane(k, x + p * size, size);
}

/* ConvTranspose: one instance of convt_tmpl.h per ISA, picked from a
 * table; threads split the output planes, each with its own columns. */
#include "kernels/convt.h"
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/isa.h"

#include "kernels/vec_avx512.h"
#include "kernels/convt_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/convt_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_portable.h"
#include "kernels/convt_tmpl.h"
#include "kernels/vec_end.h"

static const struct {
    kisa isa;
    void (*plane)(const kct_geom *, const float *, const float *, float, float *, float *);
} ct_impls[] = {
    {KISA_AVX512, ct_plane_avx512},
    {KISA_AVX2, ct_plane_avx2},
    {KISA_PORTABLE, ct_plane_portable},
};

int kconvt_run(const kct_geom *g, const float *x, const float *w, const float *bias, float *y,
               int threads)
{
    __typeof__(ct_impls[0]) *im = KISA_PICK(ct_impls);
    const int cig = g->cin / g->group, cog = g->cout / g->group;
    const size_t hw = (size_t)g->h * g->w, ohw = (size_t)g->oh * g->ow;
    const long planes = (long)g->n * g->cout;
    int fail = 0;
#pragma omp parallel num_threads(threads > 1 ? threads : 1) if (threads > 1 && planes > 1)
    {
        float *col = malloc(4 * hw * sizeof *col + 1);
        if (!col) {
#pragma omp atomic write
            fail = 1;
        }
#pragma omp for schedule(static)
        for (long p = 0; p < planes; p++) {
            if (!col) continue;
            int o = (int)(p % g->cout), grp = o / cog, oc = o % cog;
            long nb = p / g->cout;
            const float *xg = x + ((size_t)nb * g->cin + (size_t)grp * cig) * hw;
            const float *wt = w + (size_t)grp * cig * cog * g->kh * g->kw +
                              (size_t)oc * g->kh * g->kw;
            im->plane(g, xg, wt, bias ? bias[o] : 0.0f, y + (size_t)p * ohw, col);
        }
        free(col);
    }
    return fail ? -1 : 0;
}

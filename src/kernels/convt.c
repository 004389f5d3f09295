/* ConvTranspose: one instance of convt_tmpl.h per ISA, picked from a
 * table; threads split the output planes, each with its own columns. */
#include "kernels/convt.h"
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/isa.h"

/* input positions per tile of the column pass: 512 floats of every input
 * channel of a group stay in L2 while all the taps read them */
#define CT_TILE 512
/* output planes per pass of the direct kernel over the input (ct_direct):
 * each input vector loaded once for 2 * CT_NC FMA chains */
#define CT_NC 4

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/convt_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/convt_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/convt_tmpl.h"
#include "kernels/vec_end.h"

static const struct {
    kisa isa;
    void (*planes)(const kct_geom *, const float *, const float *, const float *, kact, int,
                   float *, float *);
    int rows; /* column rows (output channels x taps) per task: input reuse */
    void (*direct)(const kct_geom *, const float *, const float *, const float *, kact, float *, int);
} ct_impls[] = {
#if KISA_X86
    {KISA_AVX512, ct_planes_avx512, 16, ct_direct_avx512},
    {KISA_AVX2, ct_planes_avx2, 16, ct_direct_avx2},
#endif
    {KISA_PORTABLE, ct_planes_portable, 4, ct_direct_portable},
};

/* Whether each output pixel takes one tap (ct_direct): the stride is the
 * kernel, 1 or 2 wide, no pads, dilation or output padding. */
static int ct_is_direct(const kct_geom *g)
{
    return g->sh == g->kh && g->sw == g->kw && (g->kw == 1 || g->kw == 2) && g->dh == 1 &&
           g->dw == 1 && g->pt == 0 && g->pl == 0 && g->oh == g->h * g->sh && g->ow == g->w * g->sw;
}

int kconvt_run(const kct_geom *g, const float *x, const float *w, const float *bias, kact act,
               float *y, int threads)
{
    __typeof__(ct_impls[0]) *im = KISA_PICK(ct_impls);
    if (ct_is_direct(g)) { /* a task per CT_NC output planes of a group */
        const int cog = g->cout / g->group, blocks = (cog + CT_NC - 1) / CT_NC;
        const size_t hw = (size_t)g->h * g->w, ohw = (size_t)g->oh * g->ow, taps = (size_t)g->kh * g->kw;
        const long tasks = (long)g->n * g->group * blocks;
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1 && tasks > 1) \
    schedule(static)
        for (long t = 0; t < tasks; t++) {
            const int blk = (int)(t % blocks), grp = (int)(t / blocks % g->group);
            const long nb = t / blocks / g->group;
            const int oc0 = blk * CT_NC, nc = cog - oc0 < CT_NC ? cog - oc0 : CT_NC, oc = grp * cog + oc0;
            const float *xg = x + ((size_t)nb * g->cin + (size_t)grp * (g->cin / g->group)) * hw;
            const float *wt = w + ((size_t)grp * (g->cin / g->group) * cog + (size_t)oc0) * taps;
            im->direct(g, xg, wt, bias ? bias + oc : NULL, act, y + ((size_t)nb * g->cout + oc) * ohw, nc);
        }
        return 0;
    }
    const int cig = g->cin / g->group, cog = g->cout / g->group, taps = g->kh * g->kw;
    const size_t hw = (size_t)g->h * g->w, ohw = (size_t)g->oh * g->ow;
    /* a task: ocb output channels of one group of one image */
    int ocb = (im->rows + taps - 1) / taps;
    ocb = ocb < 1 ? 1 : ocb > cog ? cog : ocb;
    const int blocks = (cog + ocb - 1) / ocb;
    const long tasks = (long)g->n * g->group * blocks;
    int fail = 0;
#pragma omp parallel num_threads(threads > 1 ? threads : 1) if (threads > 1 && tasks > 1)
    {
        float *col = malloc((size_t)ocb * taps * hw * sizeof *col + 1);
        if (!col) {
#pragma omp atomic write
            fail = 1;
        }
#pragma omp for schedule(static)
        for (long t = 0; t < tasks; t++) {
            if (!col) continue;
            int blk = (int)(t % blocks), grp = (int)(t / blocks % g->group);
            long nb = t / blocks / g->group;
            int oc0 = blk * ocb, nc = cog - oc0 < ocb ? cog - oc0 : ocb, o = grp * cog + oc0;
            const float *xg = x + ((size_t)nb * g->cin + (size_t)grp * cig) * hw;
            const float *wt = w + ((size_t)grp * cig * cog + oc0) * taps;
            im->planes(g, xg, wt, bias ? bias + o : NULL, act, nc, y + ((size_t)nb * g->cout + o) * ohw,
                       col);
        }
        free(col);
    }
    return fail ? -1 : 0;
}

void kconvt_scale_w(const kct_geom *g, const float *w, const float *s, float *out)
{
    const int64_t cog = g->cout / g->group, cig = g->cin / g->group, taps = (int64_t)g->kh * g->kw;
    for (int64_t ci = 0; ci < g->cin; ci++)
        for (int64_t oc = 0; oc < cog; oc++) {
            const float sc = s[ci / cig * cog + oc];
            for (int64_t t = 0; t < taps; t++)
                out[(ci * cog + oc) * taps + t] = w[(ci * cog + oc) * taps + t] * sc;
        }
}

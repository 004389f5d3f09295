/* kstem_conv (stem.h): the template's instances per ISA and the pick. */
#include "kernels/stem.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/isa.h"
#include "kernels/win.h"

#if KISA_X86
#include "kernels/vec_avx512.h"
#include "kernels/stem_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/stem_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/stem_tmpl.h"
#include "kernels/vec_end.h"

typedef void (*stem_fn)(const knhwc_geom *, const float *, const float *, int, const float *, kact,
                        float *, int64_t, size_t, int64_t, int64_t, int64_t, int64_t);
typedef void (*stem_tiles_fn)(const knhwc_geom *, const float *, const float *const *, int, int,
                              const float *, kact, float *, int64_t, int64_t, int64_t, int64_t, int64_t);
static const struct {
    kisa isa;
    stem_fn rows;
    stem_tiles_fn tiles;
    int vl;
} impls[] = {
#if KISA_X86
    {KISA_AVX512, stem_rows_avx512, stem_tiles_avx512, 16},
    {KISA_AVX2, stem_rows_avx2, stem_tiles_avx2, 8},
#endif
    {KISA_PORTABLE, stem_rows_portable, stem_tiles_portable, 1},
};

int kstem_takes(const knhwc_geom *g)
{
    return g->c > 0 && g->kh > 0 && g->kw > 0 && g->c * g->kh * g->kw <= KSTEM_TAPS;
}

void kstem_conv(const knhwc_geom *g, const float *x, const float *w, int nr, int64_t m,
                const float *bias, kact act, float *y, int64_t ldy, int threads)
{
    const __typeof__(impls[0]) *im = KISA_PICK(impls);
    const int64_t kdim = g->c * g->kh * g->kw;
    int lo, hi; /* the outputs whose window lies inside a row (int geometry, as conv.c's) */
    kwin_inner((int)g->ow, (int)g->w, (int)g->kw, (int)g->sw, (int)g->dw, (int)g->pl, &lo, &hi);
    /* rows in chunks so that each thread takes a share of every vector of channels */
    const int64_t chunk = threads > 1 ? (g->oh + threads - 1) / threads : g->oh;
    const int64_t nchunks = (g->oh + chunk - 1) / chunk;
    /* Where no vector crosses a panel: the whole vectors in groups of up to
     * STEM_NV (stem_tiles: each input value broadcast once for the group; by
     * CPU time in the models, bench/RESULTS.md, branch sqz2), a lone whole
     * vector and the last partial one each on their own (stem_rows). */
    const int64_t whole = nr % im->vl == 0 ? m / im->vl : 0, groups = (whole + STEM_NV - 1) / STEM_NV;
    const int64_t c_rest = whole * im->vl; /* the channels stem_rows takes */
    if (groups > 0) {
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
        for (int64_t u = 0; u < groups * nchunks; u++) {
            const int64_t gr = u % groups, ch = u / groups, v0 = gr * STEM_NV;
            const int nv = (int)(whole - v0 < STEM_NV ? whole - v0 : STEM_NV);
            const int64_t c = v0 * im->vl, oy0 = ch * chunk, oy1 = oy0 + chunk < g->oh ? oy0 + chunk : g->oh;
            const float *wp[STEM_NV];
            for (int v = 0; v < nv; v++) {
                const int64_t cv = c + v * im->vl;
                wp[v] = w + cv / nr * kdim * nr + cv % nr;
            }
            if (nv > 1)
                im->tiles(g, x, wp, nv, nr, bias ? bias + c : NULL, act, y + c, ldy, oy0, oy1, lo, hi);
            else
                im->rows(g, x, wp[0], nr, bias ? bias + c : NULL, act, y + c, ldy, (size_t)im->vl, oy0, oy1, lo, hi);
        }
    }
    /* vectors of channels that never cross a panel: (panel, offset) pairs, from c_rest */
    const int64_t nvec_panel = (nr + im->vl - 1) / im->vl, panels = (m + nr - 1) / nr;
    const int64_t units = panels * nvec_panel;
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
    for (int64_t u = 0; u < units * nchunks; u++) {
        const int64_t v = u % units, ch = u / units, pj = v / nvec_panel;
        const int64_t off = (v % nvec_panel) * im->vl, c = pj * nr + off;
        int64_t r = nr - off < im->vl ? nr - off : im->vl;
        if (m - c < r) r = m - c;
        if (r <= 0 || c < c_rest) continue;
        const int64_t oy0 = ch * chunk, oy1 = oy0 + chunk < g->oh ? oy0 + chunk : g->oh;
        im->rows(g, x, w + pj * kdim * nr + off, nr, bias ? bias + c : NULL, act, y + c, ldy,
                 (size_t)r, oy0, oy1, lo, hi);
    }
}

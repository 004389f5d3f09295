/* kaffine (chan_affine.h): the template's instances per ISA and the pick. */
#include "kernels/chan_affine.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/isa.h"

#if KISA_X86
#include "kernels/vec_avx512.h"
#include "kernels/chan_affine_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/chan_affine_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/chan_affine_tmpl.h"
#include "kernels/vec_end.h"

static const struct {
    kisa isa;
    void (*rows)(const kaffine *, int64_t, int64_t, const float *, int64_t, int64_t, int64_t,
                 float *, int64_t);
    void (*panels)(const kaffine *, int64_t, int, int64_t, int64_t, float *, int64_t);
} impls[] = {
#if KISA_X86
    {KISA_AVX512, affine_rows_avx512, affine_panels_avx512},
    {KISA_AVX2, affine_rows_avx2, affine_panels_avx2},
#endif
    {KISA_PORTABLE, affine_rows_portable, affine_panels_portable},
};

void kaffine_rows(const kaffine *f, int64_t k0, int64_t k, const float *x, int64_t rsx,
                  int64_t csx, int64_t rows, float *y, int64_t ldy)
{
    const __typeof__(impls[0]) *im = KISA_PICK(impls);
    im->rows(f, k0, k, x, rsx, csx, rows, y, ldy);
}

void kaffine_panels(const kaffine *f, int64_t k0, int w, int64_t kb, int64_t panels, float *d,
                    int64_t ps)
{
    const __typeof__(impls[0]) *im = KISA_PICK(impls);
    im->panels(f, k0, w, kb, panels, d, ps);
}

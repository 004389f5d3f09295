/* The element-wise program: one instance of eltwise_tmpl.h per ISA, picked
 * from a table, run over tiles that never cross a channel. */
#include "kernels/eltwise.h"
#include <stdint.h>
#include <string.h>
#include "kernels/isa.h"

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/eltwise_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/eltwise_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/eltwise_tmpl.h"
#include "kernels/vec_end.h"

typedef void (*ew_tile_fn)(const kew_prog *, const float *, float *, size_t, size_t, size_t,
                           float *);
#define EW_TILE_MAX 1024
static const struct {
    kisa isa;
    ew_tile_fn tile_fn;
    size_t tile; /* floats per tile: the tile and its scratch stay in L1 */
} ew_impls[] = {
#if KISA_X86
    {KISA_AVX512, ew_tile_avx512, 1024},
    {KISA_AVX2, ew_tile_avx2, 1024},
#endif
    {KISA_PORTABLE, ew_tile_portable, 512},
};

void kew_run(const kew_prog *p, const float *x, float *y, size_t n, int threads)
{
    __typeof__(ew_impls[0]) *im = KISA_PICK(ew_impls);
    /* a block is a run of one channel; tiles split blocks */
    int chan = 0;
    for (int k = 0; k < p->n; k++) chan |= p->s[k].op != KEW_FUN && p->s[k].src == KEW_CHANNEL;
    size_t inner = chan && p->inner ? p->inner : n ? n : 1;
    size_t nch = chan && p->channels ? p->channels : 1;
    size_t blocks = (n + inner - 1) / inner, tpb = (inner + im->tile - 1) / im->tile;
    size_t units = blocks * tpb;
#pragma omp parallel num_threads(threads > 1 ? threads : 1) if (threads > 1 && units > 1)
    {
        float t[EW_TILE_MAX];
#pragma omp for schedule(static)
        for (size_t u = 0; u < units; u++) {
            size_t blk = u / tpb, i0 = blk * inner + u % tpb * im->tile;
            size_t end = blk * inner + inner < n ? blk * inner + inner : n;
            if (i0 >= end) continue;
            size_t len = end - i0 < im->tile ? end - i0 : im->tile;
            im->tile_fn(p, x, y, i0, len, blk % nch, t);
        }
    }
}

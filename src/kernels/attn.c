/* Attention: one instance of attn_tmpl.h per ISA, picked from a table;
 * threads split the (batch, head, query block) tasks. */
#include "kernels/attn.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/isa.h"

/* Block sizes: ATT_QB queries share each key and value row they load;
 * ATT_KB keys' scores stay in registers and L1. */
#define ATT_QB 4
#define ATT_KB 64

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/attn_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/attn_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/attn_tmpl.h"
#include "kernels/vec_end.h"

typedef void (*att_block_fn)(const katt_geom *, const float *, const float *, const float *,
                             const float *, const float *, float *, int, int, int, int, float *);
static const struct {
    kisa isa;
    att_block_fn block;
    int qb; /* queries per task, at most ATT_QB */
} att_impls[] = {
#if KISA_X86
    {KISA_AVX512, att_block_avx512, ATT_QB},
    {KISA_AVX2, att_block_avx2, ATT_QB},
#endif
    {KISA_PORTABLE, att_block_portable, ATT_QB},
};

/* s = the dense strides of [b][h][rows][cols] */
static void dense(size_t s[3], int h, int rows, int cols)
{
    s[2] = (size_t)cols;
    s[1] = (size_t)rows * cols;
    s[0] = s[1] * (size_t)h;
}

int kattention(const katt_geom *gin, const float *q, const float *kp, const float *vp,
               const float *kc, const float *vc, float *y, int threads)
{
    __typeof__(att_impls[0]) *im = KISA_PICK(att_impls);
    katt_geom gd = *gin, *g = &gd;
    if (!g->strided) {
        dense(g->qs, g->hq, g->sq, g->d);
        dense(g->ys, g->hq, g->sq, g->dv);
        dense(g->kps, g->hkv, g->sp, g->d);
        dense(g->vps, g->hkv, g->sp, g->dv);
        dense(g->kcs, g->hkv, g->sc, g->d);
        dense(g->vcs, g->hkv, g->sc, g->dv);
    }
    const int qb = im->qb, nqb = (g->sq + qb - 1) / qb;
    const long tasks = (long)g->b * g->hq * nqb;
    int fail = 0;
#pragma omp parallel num_threads(threads > 1 ? threads : 1) if (threads > 1 && tasks > 1)
    {
        float *ws = malloc((size_t)qb * g->dv * sizeof *ws + 1);
        if (!ws) {
#pragma omp atomic write
            fail = 1;
        }
#pragma omp for schedule(static)
        for (long t = 0; t < tasks; t++) {
            if (!ws) continue;
            int blk = (int)(t % nqb), h = (int)(t / nqb % g->hq), bi = (int)(t / nqb / g->hq);
            int i0 = blk * qb, nq = g->sq - i0 < qb ? g->sq - i0 : qb;
            im->block(g, q, kp, vp, kc, vc, y, bi, h, i0, nq, ws);
        }
        free(ws);
    }
    return fail ? -1 : 0;
}

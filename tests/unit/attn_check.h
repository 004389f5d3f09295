/* The reference attention of the kernel tests (test_kernels.c's float
 * attention, test_kernels_attn_q8.c's int8 one against it), in double. */
#ifndef ATTN_CHECK_H
#define ATTN_CHECK_H
#include <math.h>
#include <stdlib.h>
#include "kernels/attn.h"

/* Attention in double: the whole score row, softmax, weighted sum. */
static inline void att_want(const katt_geom *g, const float *q, const float *kp, const float *vp,
                            const float *kc, const float *vc, double *want)
{
    int T = g->sp + g->sc, rep = g->hq / g->hkv;
    double scale = g->scale != 0 ? g->scale : 1 / sqrt(g->d);
    double *s = malloc((size_t)T * sizeof *s);
    for (int b = 0; b < g->b; b++)
        for (int h = 0; h < g->hq; h++)
            for (int i = 0; i < g->sq; i++) {
                size_t kh = (size_t)b * g->hkv + h / rep;
                const float *qi = q + (((size_t)b * g->hq + h) * g->sq + i) * g->d;
                double m = -INFINITY, sum = 0;
                for (int j = 0; j < T; j++) {
                    const float *kj = j < g->sp ? kp + (kh * g->sp + j) * g->d
                                                : kc + (kh * g->sc + j - g->sp) * g->d;
                    double v = 0;
                    for (int e = 0; e < g->d; e++) v += (double)qi[e] * kj[e];
                    v *= scale;
                    if (g->bmask && (g->bmask[b * g->bb + h * g->bh + i * g->bi + j] != 0) != g->bkeep)
                        v = g->fill;
                    if (g->mask) v += g->mask[b * g->mb + h * g->mh + i * g->mi + j];
                    if (g->causal && j > i + g->sp) v = -INFINITY;
                    s[j] = v;
                    m = fmax(m, v);
                }
                for (int j = 0; j < T; j++) sum += s[j] = m == -INFINITY ? 0 : exp(s[j] - m);
                double *w = want + (((size_t)b * g->hq + h) * g->sq + i) * g->dv;
                for (int e = 0; e < g->dv; e++) {
                    double o = 0;
                    for (int j = 0; j < T; j++) {
                        const float *vj = j < g->sp ? vp + (kh * g->sp + j) * g->dv
                                                    : vc + (kh * g->sc + j - g->sp) * g->dv;
                        o += s[j] * vj[e];
                    }
                    w[e] = sum > 0 ? o / sum : 0;
                }
            }
    free(s);
}

#endif

/* Quantised Conv, native's int8dq variant: a 2-D Conv of one group (not
 * depthwise, not grouped) runs channels-last (conv.c's nhwc_run) as qgemm
 * (kernels/qgemm.h) with the weights as B: Y[pixel][M] = A[pixel][kdim] x
 * W'[kdim][M], W' per output channel symmetric int8 (a BatchNormalization
 * folded first), packed once and saved like the float packs; A the input
 * itself (1x1, stride 1, no pads) or its NHWC im2col, each row (pixel)
 * quantised at run time to uint8 with its own scale and zero point (the
 * im2col a few pixels at a time, quantised while in cache: the float rows
 * never go to memory); the
 * conv's bias, activation and residual stay the float epilogue. Depthwise
 * and grouped convolutions stay float32 in the variant. */
#include <string.h>

#include "backends/native/native.h"
#include "kernels/nhwc.h"

bool nat_qconv(const built *bm, int64_t group) { return bm->quant == QG_INT8DQ && group == 1; }

typedef struct qconv_arg {
    const float *w; /* [kdim][M] */
    int64_t kdim, m;
} qconv_arg;

static void fill_q(built *bm, int i, int grp, void *dst, const void *arg)
{
    (void)i;
    (void)grp;
    const qconv_arg *a = arg;
    qg_pack(bm->quant, bm->qgroup, a->w, a->m, 1, a->kdim, a->m, dst);
}

ait_status nat_qconv_pack(built *bm, int i, const float *wt, int64_t kdim, int64_t M)
{
    size_t bytes = qg_pack_size(bm->quant, bm->qgroup, kdim, M);
    if (!bytes) return nat_fail(bm, i, AIT_E_OVERFLOW, "quantised weights are too large");
    qconv_arg arg = {wt, kdim, M};
    nat_pack *p;
    bm->pack_quant = true;
    ait_status s = nat_pack_get(bm, i, 1, bytes, fill_q, &arg, &p);
    bm->pack_quant = false;
    return s;
}

bool nat_qconv_in(const graph *module)
{
    for (int i = 0; i < module->n_nodes; i++) {
        const node *n = &module->nodes[i];
        if ((n->domain && n->domain[0]) || strcmp(n->op, "Conv") != 0 || n->n_in < 2) continue;
        const value *w = n->in[1] >= 0 ? &module->vals[n->in[1]] : NULL;
        if (w && w->konst && w->konst->dtype == AIT_F32 && w->konst->rank == 4 &&
            attr_int(n, "group", 1) == 1)
            return true;
    }
    return false;
}

/* Pixels per float im2col chunk: a few rows of A, quantised from L1/L2. */
#define QCONV_CHUNK 16

void nat_qconv_rows(const knhwc_geom *kg, const float *x, int64_t p0, int64_t p1, int64_t kdim,
                    int64_t kp, float *tmp, uint8_t *q, float *sa, int32_t *za)
{
    for (int64_t c0 = p0; c0 < p1; c0 += QCONV_CHUNK) {
        int64_t c1 = c0 + QCONV_CHUNK < p1 ? c0 + QCONV_CHUNK : p1;
        knhwc_im2col(kg, x, c0, c1, tmp);
        for (int64_t p = c0; p < c1; p++) {
            size_t r = (size_t)(p - p0);
            qg_quant_row_u8(tmp + (p - c0) * kdim, kdim, q + r * (size_t)kp, &sa[r], &za[r]);
            memset(q + r * (size_t)kp + kdim, 0, (size_t)(kp - kdim));
        }
    }
}

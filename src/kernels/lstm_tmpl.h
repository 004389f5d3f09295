/* klstm_seq's step for the ISA of the vec_*.h included before (lstm.c
 * includes it once per ISA). */

#define KLSTM_PV (KLSTM_P / VL) /* vectors per gate and panel */
/* the loops over panels, gates and vectors unrolled: the accumulators in registers */
#define KLSTM_UNROLL _Pragma("GCC unroll 16")

/* mr rows (1 or 2) by np panels (1 or 2; constants where inlined) from
 * j0: the gates start from x, gain h x R (no h: the first step from
 * zeros; each weight loaded once for the mr rows), then the cell update
 * writes c and hn. ps: floats per panel; rows ld floats apart in h, c and
 * hn, ldx in x. */
static inline __attribute__((always_inline)) void
KV(lstm_panels)(const float *pp, size_t ps, int mr, int np, size_t j0, const float *h,
                const float *x, size_t ldx, float *c, float *hn, size_t H)
{
    V acc[2][2][4][KLSTM_PV];
    size_t rem[2][KLSTM_PV];
    KLSTM_UNROLL for (int q = 0; q < np; q++)
        KLSTM_UNROLL for (int v = 0; v < KLSTM_PV; v++) {
            size_t j = j0 + (size_t)q * KLSTM_P + (size_t)v * VL;
            rem[q][v] = j < H ? (H - j < VL ? H - j : VL) : 0;
            KLSTM_UNROLL for (int m = 0; m < mr; m++)
                KLSTM_UNROLL for (int g = 0; g < 4; g++)
                    acc[m][q][g][v] = rem[q][v] ? vloadn(x + m * ldx + g * H + j, rem[q][v]) : vzero();
        }
    for (size_t k = 0; h && k < H; k++) {
        V hk[2];
        KLSTM_UNROLL for (int m = 0; m < mr; m++) hk[m] = vset1(h[m * H + k]);
        const float *w = pp + k * 4 * KLSTM_P;
        KLSTM_UNROLL for (int q = 0; q < np; q++)
            KLSTM_UNROLL for (int g = 0; g < 4; g++)
                KLSTM_UNROLL for (int v = 0; v < KLSTM_PV; v++) {
                    V wv = vload(w + q * ps + g * KLSTM_P + v * VL);
                    KLSTM_UNROLL for (int m = 0; m < mr; m++)
                        acc[m][q][g][v] = vfma(hk[m], wv, acc[m][q][g][v]);
                }
    }
    KLSTM_UNROLL for (int m = 0; m < mr; m++)
        KLSTM_UNROLL for (int q = 0; q < np; q++)
            KLSTM_UNROLL for (int v = 0; v < KLSTM_PV; v++) {
                size_t r = rem[q][v], j = m * H + j0 + (size_t)q * KLSTM_P + (size_t)v * VL;
                if (!r) continue;
                V i = KV(vsigmoid)(acc[m][q][0][v]), o = KV(vsigmoid)(acc[m][q][1][v]);
                V f = KV(vsigmoid)(acc[m][q][2][v]), u = KV(vtanh)(acc[m][q][3][v]);
                V cn = vfma(f, vloadn(c + j, r), vmul(i, u));
                vstoren(c + j, cn, r);
                vstoren(hn + j, vmul(o, KV(vtanh)(cn)), r);
            }
}

/* One step of b rows: hp ([b][h], NULL: zeros) against R, plus x's rows
 * (ldx apart), into c and hn ([b][h] each). Panels outer, rows inner: a
 * pair of panels stays in L1 across the rows. */
static void KV(lstm_step)(const float *pr, const float *x, size_t ldx, const float *hp, float *c,
                          float *hn, size_t B, size_t H)
{
    const size_t np = (H + KLSTM_P - 1) / KLSTM_P, ps = H * 4 * KLSTM_P;
#define KLSTM_AT(b) hp ? hp + (b) * H : NULL, x + (b) * ldx, ldx, c + (b) * H, hn + (b) * H, H
    size_t p = 0;
#if VL == 16 /* two panels: 8 accumulators a row, 16 for two rows */
    for (; p + 2 <= np; p += 2) {
        size_t b = 0;
        for (; b + 2 <= B; b += 2) KV(lstm_panels)(pr + p * ps, ps, 2, 2, p * KLSTM_P, KLSTM_AT(b));
        if (b < B) KV(lstm_panels)(pr + p * ps, ps, 1, 2, p * KLSTM_P, KLSTM_AT(b));
    }
    for (; p < np; p++) {
        size_t b = 0;
        for (; b + 2 <= B; b += 2) KV(lstm_panels)(pr + p * ps, ps, 2, 1, p * KLSTM_P, KLSTM_AT(b));
        if (b < B) KV(lstm_panels)(pr + p * ps, ps, 1, 1, p * KLSTM_P, KLSTM_AT(b));
    }
#else
    for (; p < np; p++)
        for (size_t b = 0; b < B; b++) KV(lstm_panels)(pr + p * ps, ps, 1, 1, p * KLSTM_P, KLSTM_AT(b));
#endif
#undef KLSTM_AT
}

static void KV(lstm_dir)(const klstm_dir *d, size_t T, size_t B, size_t H)
{
    const float *hp = d->h0;
    for (size_t s = 0; s < T; s++) {
        size_t t = d->rev ? T - 1 - s : s;
        float *hn = d->y + t * d->ldy;
        KV(lstm_step)(d->pr, d->x + t * B * d->ldx, d->ldx, hp, d->c, hn, B, H);
        hp = hn;
    }
}

#undef KLSTM_PV
#undef KLSTM_UNROLL

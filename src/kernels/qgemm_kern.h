/* qgemm's private parts: the activations as a kernel reads them and the
 * per-scheme micro-kernel tables (qgemm.c, qgemm_avx512.c). */
#ifndef AIT_KERNELS_QGEMM_KERN_H
#define AIT_KERNELS_QGEMM_KERN_H
#include <math.h>

#include "kernels/isa.h"
#include "kernels/qgemm.h"

/* A's rows as the scheme's kernels read them. */
typedef struct qg_act {
    const float *a;     /* float rows (weight-only), lda apart */
    int64_t lda;
    const uint16_t *h;  /* bf16 rows, kp apart (pairs of k; the panels' path), or: */
    const uint32_t *hb; /* bf16 in tiles of the kernel's mrb rows: pair q of the tile's row i at
                         * [(tile * kp / 2 + q) * mrb + i], rows past m 0 (qg_kern.cvt), or: */
    uint32_t *hw;       /* bf16's tiles converted a block of A at a time (the K block's pairs
                         * only, as hb's of that K), by each thread into its share of hw */
    const uint8_t *q;   /* int8dq: uint8 rows, kp apart */
    const uint8_t *const *rp; /* int8dq, not NULL: row r not stored (q unused): its k in runs
                               * of `run` quads, run s at rp[r] + s * run_off (qg_rows) */
    int64_t run, run_off;
    const float *sa;    /* int8dq: per row scale (qg_row_sa) */
    const int32_t *za;  /* int8dq: per row zero point (qg_row_za) */
    bool uni;           /* int8dq: every row's sa and za the same (static int8): sa[0], za[0] */
    const float *gsum;  /* int4wo, float A: per row, per group sum of a, [m][kp/group] */
    const int8_t *q4a;  /* int4wo, a8: A's int8 rows, kp apart (0 from k to kp), */
    const float *q4s;   /* their per group scales, [m][kp/group], */
    const float *q4n;   /* and sums of qa (exact floats), [m][kp/group] (qg_quantiser.grp8) */
    uint8_t *y8;        /* int8dq into uint8 (qgemm_u8_q8): C's rows, ldy8 apart; NULL: float C */
    int64_t ldy8;
    float r8, z8;       /* y8 = saturate(rint(C * r8) + z8), qg_requant_u8's */
    bool wcold;         /* int8dq: the group's weights come from L2 or memory for this tile (its
                         * first rows of a pass): the kernel prefetches them */
} qg_act;

/* int8dq: row r's scale and zero point (sa[0], za[0] for every row with x->uni,
 * where qgemm_u8_uni's arrays hold one of each). */
static inline float qg_row_sa(const qg_act *x, int64_t r)
{
    return x->sa[x->uni ? 0 : r];
}
static inline int32_t qg_row_za(const qg_act *x, int64_t r)
{
    return x->za[x->uni ? 0 : r];
}

/* int8dq: the quads of A a kernel reads in one stretch (b->kp / 4 when
 * the rows are stored), and row r's dwords from quad q0, the first of a
 * stretch. */
static inline int64_t qg_run(const qg_packed *b, const qg_act *x)
{
    return x->rp ? x->run : b->kp / 4;
}
static inline const uint32_t *qg_arow(const qg_packed *b, const qg_act *x, int64_t r, int64_t q0)
{
    if (x->rp) return (const uint32_t *)(x->rp[r] + q0 / x->run * x->run_off);
    return (const uint32_t *)(x->q + (size_t)r * (size_t)b->kp) + q0;
}

/* Rows [i0, i0+mr) of C's panel p, raw (before the epilogue), into
 * t[mr][QG_NR]. mr <= the row's mr. */
typedef void (*qg_ukr)(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p,
                       float *t);

/* int8dq's micro-kernel: rows [i0, i0+mr) by panels [s0, s0+np) of
 * column group g (np <= the group's width), dequantised, the epilogue part
 * `in` applied in registers (qg_epi_split; NULL: none), written to C (c
 * points at C[i0][(g*QG_GP + s0)*QG_NR]; columns past n are not written);
 * and so for nt such tiles one under the other, rows [i0, i0 + nt * mr)
 * (C's rows on from c, ldc apart), the tile's constants (the epilogue's
 * bounds, scales, biases, masks) made once for them all. x->wcold, when
 * set, is the first tile's. */
typedef void (*qg_ukr8)(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int nt, int64_t g,
                        int s0, int np, float *c, int64_t ldc, const gemm_epi *in);

/* bf16's compute-bound tile (qg_kern.fnb): an mrb-row tile of A (a: its
 * pairs from the K block's first, hb's layout) by np (1 or 2) panels of B
 * (b: the first panel's pairs from the same one; the second sb uint16
 * after), kb pairs, into C's rows [0, mr) and columns [0, nr) (nr <= np *
 * QG_NR), ldc apart: the sums start at C's (acc: a K block after the first;
 * the same sums as one pass over K) or at 0. Prefetched meanwhile, when
 * not NULL: cn, the next tile's C (mr rows, ldc apart, 2 panels wide),
 * and bn, the next two panels' kb pairs (sb apart, as b's). */
typedef struct qg_pfb {
    const float *cn;
    const uint16_t *bn;
} qg_pfb;
typedef void (*qg_ukrb)(int64_t kb, const uint32_t *a, const uint16_t *b, int64_t sb, int np,
                        float *c, int64_t ldc, int mr, int nr, bool acc, const qg_pfb *pf);
/* bf16: A's rows [0, m) (k floats each, lda apart) to bfloat16 (f32_to_bf16's
 * bits), pairs of k, 0 from k to kp: rows kp apart (mrb 0) or in tiles of
 * mrb rows (qg_act.hb), rows past m 0 to the tiles' end; mrb is 0 or the
 * kernel's own (qg_kern.mrb). */
typedef void (*qg_cvt)(const float *a, int64_t lda, int64_t m, int64_t k, int64_t kp, int mrb,
                       uint16_t *h);

/* Rows [i0, i0+mr) of C by panels [p0, p1), raw, straight into C (c
 * points at C[i0][0]; columns past n not written): a weight-only kernel's
 * panels of one row tile in one call (qg_kern.fnc). */
typedef void (*qg_ukrc)(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p0,
                        int64_t p1, float *c, int64_t ldc);

typedef struct qg_kern {
    kisa isa;          /* first, for kisa_pick's order */
    const char *needs; /* core/cpu.h features beyond the ISA's */
    const char *name;
    int mr;
    qg_ukr fn;
    qg_ukr8 fn8; /* int8dq (fn NULL): its row counts per panel count, mr8[np] */
    int mr8[QG_GP + 1];
    bool y8; /* fn8 writes x->y8 itself when set (c unused), with the whole epilogue in `in` */
    /* bf16: the tile past 2 rows (qgemm.c's bf16_tiled; NULL: fn's panels at every m),
     * its rows (at most QG_MRB), and A's conversion (NULL: the portable one) */
    qg_ukrb fnb;
    int mrb;
    qg_cvt cvt;
    /* fn's panels in one call, used when a block's rows are one tile (mr at most; NULL: fn's) */
    qg_ukrc fnc;
} qg_kern;
/* The most rows a bf16 tile (qg_kern.mrb) takes: qgemm_scratch's room for the last tile's */
#define QG_MRB 16

/* Splits epi into the part the int8dq kernels apply in registers (*in:
 * scale, biases, the residual before a simple activation, that activation
 * (relu, clip, leaky) and the residual after it) and the rest, applied on
 * the tile of C after (*out: a transcendental activation and the residual
 * after it, the rows' range (rlo, rhi); false when nothing is left). */
bool qg_epi_split(const gemm_epi *epi, gemm_epi *in, gemm_epi *out);

/* qgemm_avx512.c (NULL functions when KISA_X86 is 0) */
extern const qg_kern qg_avx512_bf16, qg_avx512_int8dq, qg_avx512_int8wo, qg_avx512_int4wo;

/* qgemm_f16.c: fp16wo's pack (B[k][n] at b[k*rsb + n*csb] to halves, nearest even,
 * finite values beyond half's range clamped to +-65504), its portable kernel, its
 * AVX-512 and AVX2 (F16C) rows, and whether this CPU has F16C (asked once). */
void qg_pack_f16(const qg_packed *v, const float *b, int64_t rsb, int64_t csb, uint16_t *w);
void qg_c_fp16wo(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p, float *t);
extern const qg_kern qg_avx512_fp16wo, qg_avx2_fp16wo;
bool qg_has_f16c(void);

/* The uint8 scale and zero point of a row whose range [lo, hi] holds 0. */
static inline void qg_u8_params(float lo, float hi, float *scale, int32_t *zp)
{
    float s = hi > lo && isfinite(hi - lo) ? (hi - lo) / 255.0f : 1.0f;
    int32_t z = (int32_t)nearbyintf(-lo / s);
    *scale = s;
    *zp = z < 0 ? 0 : z > 255 ? 255 : z;
}

/* The activation quantisers' two passes over x, per ISA: the minimum and
 * maximum (widening [*lo, *hi]; NaN skipped), and y = saturate(rint(x / s)
 * + z) (quant) or the same times r = 1 / s (requant). Every row makes the
 * same bytes. */
typedef struct qg_quantiser {
    kisa isa;
    void (*minmax)(const float *x, int64_t n, float *lo, float *hi);
    void (*quant)(const float *x, int64_t n, float s, float z, uint8_t *y);
    void (*requant)(const float *x, int64_t n, float r, float z, uint8_t *y);
    void (*dequant)(const uint8_t *q, int64_t n, float s, int32_t z, float *y); /* (q - z) * s */
    /* int4wo's a8 rows (qgemm.h): x[n] in groups of g (the last possibly short) to
     * q (0 from n to the groups' end), group i's scale s[i] and sum of q sum[i] (exact);
     * NULL: the portable one's bytes */
    void (*grp8)(const float *x, int64_t n, int64_t g, int8_t *q, float *s, float *sum);
} qg_quantiser;

/* qgemm_avx512.c and qgemm_avx2.c (all zero when KISA_X86 is 0) */
extern const qg_quantiser qg_avx512_quantiser, qg_avx2_quantiser;
/* qgemm_avx2.c: int8dq on AVX2 (no VNNI), exact through int16 products */
extern const qg_kern qg_avx2_int8dq;

/* int8dq's column group g (qgemm.h): its first byte and its width in panels.
 * Quad q of its panel s is the 64 bytes at qg_group(b, g) + (q * width + s) * 64. */
static inline const uint8_t *qg_group(const qg_packed *b, int64_t g)
{
    return (const uint8_t *)b->w + (size_t)(g * QG_GP * b->kp * 16);
}
static inline int qg_group_w(const qg_packed *b, int64_t g)
{
    int64_t left = b->np / QG_NR - g * QG_GP;
    return left < QG_GP ? (int)left : QG_GP;
}

/* int4wo: the byte of a panel holding k of its column jj, and the shift of
 * k's nibble in it (qgemm.h); the index of group g's scale and zero point
 * of panel p's first column. */
static inline size_t qg_q4_byte(int64_t k, int jj)
{
    return (size_t)(k / 8 * 64 + jj * 4 + k % 4);
}
static inline int qg_q4_shift(int64_t k) { return (int)(k / 4 % 2 * 4); }
static inline size_t qg_q4_at(const qg_packed *b, int64_t p, int64_t g)
{
    return (size_t)((p * (b->kp / b->group) + g) * QG_NR);
}

/* Panel p of b: its bytes (bf16, int8wo, int4wo). */
static inline const uint8_t *qg_panel(const qg_packed *b, int64_t p, int64_t bytes_per_k_x16)
{
    return (const uint8_t *)b->w + (size_t)(p * b->kp * bytes_per_k_x16);
}

/* The weight-only kernels' row counts 1..4 (mr, in scope), each dispatched
 * to F(M, ...) with M a constant, so the body's row loops unroll. */
#define QG_SWITCH4(F, ...)                                                                    \
    switch (mr) {                                                                             \
    case 1: F(1, __VA_ARGS__); break;                                                         \
    case 2: F(2, __VA_ARGS__); break;                                                         \
    case 3: F(3, __VA_ARGS__); break;                                                         \
    default: F(4, __VA_ARGS__); break;                                                        \
    }

#endif

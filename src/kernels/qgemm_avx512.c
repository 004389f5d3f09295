/* AVX-512 kernels of qgemm (qgemm.h): bf16: one 16-column panel by up to
 * MR rows, an accumulator register per row, vdpbf16ps on pairs of k (needs
 * AVX512-BF16), for 1 and 2 rows; past them a 12-row tile of A by two
 * panels over a block of K (the driver's blocking), and A's conversion;
 * int8dq: up to 4 panels by up to 6 rows (12 rows by 1 or 2
 * panels for skinny M), vpdpbusd on quads of k (AVX512-VNNI); the
 * weight-only ones widen int8/uint4 to float in registers (AVX512F) and
 * stream the panel once for all the rows, but int4wo of ait's own
 * quantisation (a8), whose A is int8 and its nibbles bytes for vpdpbusd. Each body is inlined per row
 * count, so the row loops unroll. */
#include "kernels/qgemm_kern.h"
#include "kernels/prefetch.h"

#if KISA_X86
#include <immintrin.h>
#include <string.h>

#define INL static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 16")
#define TBF __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define TVNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma")))
#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,fma")))

/* Row counts 1..12 dispatched to a body specialised for each. */
#define SWITCH12(F, ...)                                                                      \
    switch (mr) {                                                                             \
    case 1: F(1, __VA_ARGS__); break;   case 2: F(2, __VA_ARGS__); break;                     \
    case 3: F(3, __VA_ARGS__); break;   case 4: F(4, __VA_ARGS__); break;                     \
    case 5: F(5, __VA_ARGS__); break;   case 6: F(6, __VA_ARGS__); break;                     \
    case 7: F(7, __VA_ARGS__); break;   case 8: F(8, __VA_ARGS__); break;                     \
    case 9: F(9, __VA_ARGS__); break;   case 10: F(10, __VA_ARGS__); break;                   \
    case 11: F(11, __VA_ARGS__); break; default: F(12, __VA_ARGS__); break;                   \
    }

TBF INL void bf16_body(const int MR, const qg_packed *b, const qg_act *x, int64_t i0, int64_t p,
                       float *t)
{
    const uint16_t *w = (const uint16_t *)qg_panel(b, p, 32);
    const uint32_t *a = (const uint32_t *)(x->h + (size_t)i0 * b->kp);
    const int64_t kh = b->kp / 2; /* pairs per row */
    __m512 acc[12];
    UNROLL for (int i = 0; i < MR; i++) acc[i] = _mm512_setzero_ps();
    for (int64_t kk = 0; kk < kh; kk++) {
        __m512bh bv = (__m512bh)_mm512_load_si512(w + kk * 32);
        UNROLL for (int i = 0; i < MR; i++) {
            __m512bh av = (__m512bh)_mm512_set1_epi32((int)a[i * kh + kk]);
            acc[i] = _mm512_dpbf16_ps(acc[i], av, bv);
        }
    }
    UNROLL for (int i = 0; i < MR; i++) _mm512_store_ps(t + i * QG_NR, acc[i]);
}

#define BF16_CALL(M, ...) bf16_body(M, __VA_ARGS__)
TBF static void k_bf16(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p, float *t)
{
    SWITCH12(BF16_CALL, b, x, i0, p, t)
}

/* bf16's compute-bound tile (qg_ukrb): BMR rows by NP panels, 2 x BMR
 * accumulators at NP 2; per pair of k NP loads of B and one broadcast of
 * each row's pair, for NP vdpbf16ps each. Named accumulators and
 * vdpbf16ps through asm on them, as int8dq's DPBUSD (GCC 12 copies an
 * array's elements around each instruction). */
#define BMR 12
#define DPBF16(acc, a, b) __asm__("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b))
#define BF_ROWS(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11)
#define BF_DECL(i)                                                                            \
    __m512 c##i##_0 = _mm512_setzero_ps(), c##i##_1 = c##i##_0;                               \
    if (acc && i < mr) {                                                                      \
        c##i##_0 = _mm512_maskz_loadu_ps(m0, c + i * ldc);                                    \
        if (NP > 1) c##i##_1 = _mm512_maskz_loadu_ps(m1, c + i * ldc + QG_NR);                \
    }
#define BF_STEP(i)                                                                            \
    {                                                                                         \
        const __m512i av = _mm512_set1_epi32((int)a[i]);                                      \
        DPBF16(c##i##_0, av, b0);                                                             \
        if (NP > 1) DPBF16(c##i##_1, av, b1);                                                 \
    }
#define BF_OUT(i)                                                                             \
    if (i < mr) {                                                                             \
        _mm512_mask_storeu_ps(c + i * ldc, m0, c##i##_0);                                     \
        if (NP > 1) _mm512_mask_storeu_ps(c + i * ldc + QG_NR, m1, c##i##_1);                 \
    }
#define BF_LOOP(PFB)                                                                          \
    for (int64_t kk = 0; kk < kb; kk++, a += BMR, w0 += 32, w1 += 32) {                       \
        if (PFB) {                                                                            \
            _mm_prefetch((const char *)(pf->bn + kk * 32), _MM_HINT_T0);                      \
            _mm_prefetch((const char *)(pf->bn + sb + kk * 32), _MM_HINT_T0);                 \
        }                                                                                     \
        const __m512i b0 = _mm512_load_si512(w0), b1 = NP > 1 ? _mm512_load_si512(w1) : b0;  \
        BF_ROWS(BF_STEP)                                                                      \
    }
TBF INL void bf16_tile_body(const int NP, int64_t kb, const uint32_t *a, const uint16_t *b,
                            int64_t sb, float *c, int64_t ldc, int mr, int nr, bool acc,
                            const qg_pfb *pf)
{
    const __mmask16 m0 = nr >= QG_NR ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1),
                    m1 = nr >= 2 * QG_NR ? (__mmask16)0xffff
                         : nr > QG_NR   ? (__mmask16)((1u << (nr - QG_NR)) - 1)
                                        : 0;
    BF_ROWS(BF_DECL)
    if (pf->cn) /* the next tile's C, which it starts from: in L1 by then */
        for (int i = 0; i < BMR; i++) {
            _mm_prefetch((const char *)(pf->cn + i * ldc), _MM_HINT_T0);
            _mm_prefetch((const char *)(pf->cn + i * ldc + QG_NR), _MM_HINT_T0);
        }
    const uint16_t *w0 = b, *w1 = b + sb;
    if (pf->bn) BF_LOOP(true) else BF_LOOP(false)
    BF_ROWS(BF_OUT)
}
#undef BF_LOOP
#undef BF_DECL
#undef BF_STEP
#undef BF_OUT

#define BF_FN(NP)                                                                             \
    TBF __attribute__((noinline)) static void k_bf16_tile##NP(                                \
        int64_t kb, const uint32_t *a, const uint16_t *b, int64_t sb, float *c, int64_t ldc,   \
        int mr, int nr, bool acc, const qg_pfb *pf)                                           \
    {                                                                                         \
        bf16_tile_body(NP, kb, a, b, sb, c, ldc, mr, nr, acc, pf);                            \
    }
BF_FN(1)
BF_FN(2)
static void k_bf16_tile(int64_t kb, const uint32_t *a, const uint16_t *b, int64_t sb, int np,
                        float *c, int64_t ldc, int mr, int nr, bool acc, const qg_pfb *pf)
{
    (np > 1 ? k_bf16_tile2 : k_bf16_tile1)(kb, a, b, sb, c, ldc, mr, nr, acc, pf);
}

/* f32_to_bf16 on 16 floats (its bits: + 0x7fff + the kept part's lowest
 * bit, the top half; a NaN's top half with the quiet bit), to 16 uint16. */
T512 INL __m256i bf16_16(__m512 v)
{
    const __m512i u = _mm512_castps_si512(v), hi = _mm512_srli_epi32(u, 16);
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
                                                     _mm512_and_si512(hi, _mm512_set1_epi32(1))));
    r = _mm512_mask_or_epi32(_mm512_srli_epi32(r, 16), _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), hi,
                             _mm512_set1_epi32(0x40));
    return _mm512_cvtepi32_epi16(r);
}

/* One row's k floats to kp bf16 (0 from k on: kp - k is 0 or 1). */
T512 INL void bf16_row(const float *a, int64_t k, int64_t kp, uint16_t *h)
{
    int64_t p = 0;
    for (; p + 16 <= k; p += 16)
        _mm256_storeu_si256((__m256i *)(h + p), bf16_16(_mm512_loadu_ps(a + p)));
    if (p < kp) { /* the last 1..16: past k, 0 (from the masked load's zeros) */
        const __mmask16 mk = (__mmask16)((1u << (k - p)) - 1),
                        mp = (__mmask16)((1u << (kp - p)) - 1);
        _mm256_mask_storeu_epi16(h + p, mp, bf16_16(_mm512_maskz_loadu_ps(mk, a + p)));
    }
}

/* A tile of BMR (12) rows, `rows` of them from a (the rest 0), into hb's
 * layout at o: 16 pairs at a time, each row's 32 floats converted into a
 * vector of 16 pairs, each 4 rows' vectors transposed within 128-bit lanes
 * (4 x 4 pairs), so that lane l of T[j] is the 4 rows' pair 4 l + j: the
 * pair's 12 rows are three 16-byte stores. */
#define BF_LANE(l)                                                                            \
    if (4 * (l) + j < nq)                                                                     \
        _mm_storeu_si128((__m128i *)(o + (q0 + 4 * (l) + j) * BMR + 4 * g),                   \
                         _mm512_extracti32x4_epi32(t[j], l));
T512 static void cvt_tile12(const float *a, int64_t lda, int rows, int64_t k, int64_t kh,
                            uint32_t *o)
{
    for (int64_t q0 = 0; q0 < kh; q0 += 16) {
        const int64_t nq = kh - q0 < 16 ? kh - q0 : 16, left = k - 2 * q0; /* left >= 1 */
        const __mmask16 ml = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1),
                        mh = left >= 32   ? (__mmask16)0xffff
                             : left > 16 ? (__mmask16)((1u << (left - 16)) - 1)
                                         : 0;
        __m512i r[BMR];
        UNROLL for (int i = 0; i < BMR; i++) {
            r[i] = _mm512_setzero_si512();
            if (i < rows) {
                const float *ai = a + i * lda + 2 * q0;
                r[i] = _mm512_inserti64x4(
                    _mm512_castsi256_si512(bf16_16(_mm512_maskz_loadu_ps(ml, ai))),
                    bf16_16(_mm512_maskz_loadu_ps(mh, ai + 16)), 1);
            }
        }
        UNROLL for (int g = 0; g < BMR / 4; g++) {
            const __m512i *v = r + 4 * g;
            const __m512i u0 = _mm512_unpacklo_epi32(v[0], v[1]),
                          u1 = _mm512_unpackhi_epi32(v[0], v[1]),
                          u2 = _mm512_unpacklo_epi32(v[2], v[3]),
                          u3 = _mm512_unpackhi_epi32(v[2], v[3]);
            const __m512i t[4] = {_mm512_unpacklo_epi64(u0, u2), _mm512_unpackhi_epi64(u0, u2),
                                  _mm512_unpacklo_epi64(u1, u3), _mm512_unpackhi_epi64(u1, u3)};
            UNROLL for (int j = 0; j < 4; j++) {
                BF_LANE(0)
                BF_LANE(1)
                BF_LANE(2)
                BF_LANE(3)
            }
        }
    }
}
#undef BF_LANE

/* qg_cvt: rows kp apart (mrb 0), or tiles of this kernel's BMR rows
 * (cvt_tile12). */
T512 static void cvt_bf16(const float *a, int64_t lda, int64_t m, int64_t k, int64_t kp, int mrb,
                          uint16_t *h)
{
    if (!mrb) {
        for (int64_t i = 0; i < m; i++) bf16_row(a + i * lda, k, kp, h + i * kp);
        return;
    }
    const int64_t kh = kp / 2;
    for (int64_t t = 0; t * BMR < m; t++)
        cvt_tile12(a + t * BMR * lda, lda, m - t * BMR < BMR ? (int)(m - t * BMR) : BMR, k, kh,
                   (uint32_t *)h + t * kh * BMR);
}

/* The in-register part of the epilogue (qg_epi_split's in) on v, row i,
 * columns [j, j+16) under mask m: the order of gemm_epi_tile's. */
TVNNI INL __m512 epi_vec(const gemm_epi *e, __m512 v, int64_t i, int64_t j, __mmask16 m)
{
    if (e->scaled) v = _mm512_mul_ps(v, _mm512_set1_ps(e->scale));
    if (e->bias_mode == GEMM_BIAS_ROW)
        v = _mm512_add_ps(v, _mm512_set1_ps(e->bias[i]));
    else if (e->bias_mode == GEMM_BIAS_COL)
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, e->bias + j));
    const __m512 rk = _mm512_set1_ps(e->res_scale != 0.0f ? e->res_scale : 1.0f);
    if (e->res && !e->res_after)
        v = _mm512_fmadd_ps(rk, _mm512_maskz_loadu_ps(m, e->res + i * e->ldr + j), v);
    const __m512 zero = _mm512_setzero_ps();
    switch (e->act) {
    case GEMM_ACT_RELU: v = _mm512_max_ps(v, zero); break;
    case GEMM_ACT_CLIP:
        v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(e->lo)), _mm512_set1_ps(e->hi));
        break;
    case GEMM_ACT_LEAKY:
        v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, _mm512_set1_ps(e->lo));
        break;
    default: break;
    }
    if (e->res && e->res_after)
        v = _mm512_fmadd_ps(rk, _mm512_maskz_loadu_ps(m, e->res + i * e->ldr + j), v);
    return v;
}

/* -za[r] * colsum[j] over the 16 columns from j: an accumulator's start, so
 * that the sum it ends with is acc - za * colsum (int32 wraps either way:
 * the same bits as subtracting after). */
TVNNI INL __m512i int8dq_zneg(const qg_packed *b, const qg_act *x, int64_t r, int64_t j)
{
    return _mm512_mullo_epi32(_mm512_set1_epi32(-qg_row_za(x, r)), _mm512_loadu_si512(b->colsum + j));
}

/* sa[r] * sb[j] over the 16 columns from j. */
TVNNI INL __m512 int8dq_sc(const qg_packed *b, const qg_act *x, int64_t r, int64_t j)
{
    return _mm512_mul_ps(_mm512_set1_ps(qg_row_sa(x, r)), _mm512_loadu_ps(b->scale + j));
}

/* The uint8 output's requantisation, qg_requant_u8's bytes: v times r8,
 * rounded to nearest even (vcvtps2dq), + the zero point, clamped to
 * [lo, hi]. min(v * r8, 2^30) first: NaN stays NaN (vminps's second
 * operand) and converts to INT32_MIN, as -inf and values below int32 do,
 * which the clamp makes lo; +inf and big values become 2^30 + z, hi; the
 * rest convert exactly as vroundps, and + z is exact in int32 where a float
 * add of z is (the zero point is 0..255). lo 0 and hi 255, or a relu's or
 * clip's bounds folded in (i8_bounds). */
typedef struct i8_req {
    __m512 r, cap;
    __m512i z, lo, hi;
    __m512i z16, lo8, hi8; /* z in int16 lanes, lo and hi in bytes (int8dq_u8row) */
} i8_req;

/* y = cvt(min(t * r8, 2^30)) + z: the unclamped byte of t, as i8_req's
 * vectors make it (scalar; nearbyintf rounds to nearest even as vcvtps2dq). */
static inline int64_t i8_byte(const qg_act *x, float t)
{
    float u = t * x->r8;
    u = u < 1073741824.0f ? u : 1073741824.0f;
    int64_t y = u >= -2147483648.0f ? (int64_t)nearbyintf(u) : INT32_MIN;
    return y + (int64_t)x->z8;
}

/* The requantisation's constants, and whether in's relu or clip folds into
 * its clamp (*act_in false: in's activation is then left out of epi_vec).
 * Folding is exact: v -> the unclamped byte is monotone (r8 > 0), so
 * clamping v to [lo, hi] then the byte to [0, 255] is clamping the byte
 * to [max(0, byte(lo)), min(255, byte(hi))]; a NaN v, which the clip makes
 * lo, converts to INT32_MIN, which the clamp makes max(0, byte(lo)) too. */
TVNNI INL i8_req i8_bounds(const qg_act *x, const gemm_epi *in, bool *act_in)
{
    int64_t lo = 0, hi = 255;
    *act_in = true;
    if (in && (!in->res || !in->res_after) && x->r8 > 0 && isfinite(x->r8)) {
        float a = 0, z = INFINITY; /* relu: [0, inf) */
        bool fold = in->act == GEMM_ACT_RELU;
        if (in->act == GEMM_ACT_CLIP && in->lo <= in->hi) a = in->lo, z = in->hi, fold = true;
        if (fold) {
            int64_t bl = i8_byte(x, a), bh = i8_byte(x, z);
            lo = bl > 0 ? bl : 0;
            hi = bh < 255 ? bh : 255;
            *act_in = false;
        }
    }
    return (i8_req){_mm512_set1_ps(x->r8), _mm512_set1_ps(1073741824.0f),
                    _mm512_set1_epi32((int32_t)x->z8), _mm512_set1_epi32((int32_t)lo),
                    _mm512_set1_epi32((int32_t)hi), _mm512_set1_epi16((int16_t)x->z8),
                    _mm512_set1_epi8((char)lo), _mm512_set1_epi8((char)hi)};
}

/* One accumulator of int8dq's tile, dequantised (row i, panel s): sa[i] *
 * sb[j] * acc (acc started at -za[i] * colsum[j]), the epilogue's
 * in-register part, stored to C under the column mask, or requantised to
 * uint8 (x->y8, in without the activation i8_bounds folded into rq). With
 * x->uni (every row's sa the same: static int8) su is the panel's
 * int8dq_sc, made once for the tile's rows. */
TVNNI INL void int8dq_out(const qg_packed *b, const qg_act *x, int64_t i0, int i, int64_t j0, int s,
                          __m512i acc, float *c, int64_t ldc, const gemm_epi *in, __m512 su,
                          const i8_req *rq)
{
    const int64_t j = j0 + s * QG_NR, left = b->n - j;
    const __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
    const __m512 sc = x->uni ? su : int8dq_sc(b, x, i0 + i, j);
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), sc);
    if (in) v = epi_vec(in, v, i0 + i, j, m);
    if (x->y8) {
        __m512i q = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_mul_ps(v, rq->r), rq->cap));
        q = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(q, rq->z), rq->lo), rq->hi);
        _mm512_mask_cvtepi32_storeu_epi8(x->y8 + (i0 + i) * x->ldy8 + j, m, q);
        return;
    }
    _mm512_mask_storeu_ps(c + i * ldc + s * QG_NR, m, v);
}

/* int8dq's uint8 output when the epilogue is the dequantisation, a column
 * bias, a residual and a relu or clip that i8_bounds folded (i8_plain; no
 * activation left, so the residual before or after it is the same
 * fmadd): the same floats as int8dq_out's, the same bytes as its clamps, a
 * row of NP panels at once. i8_q is one accumulator up to the rounding:
 * cvt(min((acc * su + bv + rk * res) * r8, 2^30)) (bv the panel's bias, 0
 * past n or without one: v + 0 is v but for -0, which rounds to 0 alike;
 * res, when not NULL, the row's residual under mask m). */
static inline bool i8_plain(const gemm_epi *in)
{
    return !in || (!in->scaled && in->act == GEMM_ACT_NONE &&
                   (in->bias_mode == GEMM_BIAS_NONE || in->bias_mode == GEMM_BIAS_COL));
}

TVNNI INL __m512i i8_q(__m512i acc, __m512 su, __m512 bv, const float *res, __mmask16 m,
                       __m512 rk, const i8_req *rq)
{
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc), su), bv);
    if (res) v = _mm512_fmadd_ps(rk, _mm512_maskz_loadu_ps(m, res), v);
    return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_mul_ps(v, rq->r), rq->cap));
}

/* Row y's NP x 16 bytes (columns past n masked out: m1, one panel, or m).
 * Two panels and more: packed with signed saturation to int16 (an int32
 * below -32768, INT32_MIN from NaN among them, stays below 0 after + z,
 * one above 32767 above 255), + z saturated, packed to bytes with unsigned
 * saturation, put back in column order, clamped to [lo, hi] in bytes: the
 * bytes of int8dq_out's clamp in int32, in fewer instructions per panel. */
TVNNI INL void int8dq_u8row(const int NP, uint8_t *y, __m512i a0, __m512i a1, __m512i a2,
                            __m512i a3, __m512 su0, __m512 su1, __m512 su2, __m512 su3,
                            __m512 bv0, __m512 bv1, __m512 bv2, __m512 bv3, const float *res,
                            __m512 rk, const i8_req *rq, __mmask16 m1, __mmask64 m)
{
    const float *r1 = res ? res + QG_NR : NULL, *r2 = res ? res + 2 * QG_NR : NULL,
                *r3 = res ? res + 3 * QG_NR : NULL;
    __m512i q0 = i8_q(a0, su0, bv0, res, m1, rk, rq);
    if (NP == 1) {
        q0 = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(q0, rq->z), rq->lo), rq->hi);
        _mm512_mask_cvtepi32_storeu_epi8(y, m1, q0);
        return;
    }
    const __m512i zero = _mm512_setzero_si512(),
                  order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m512i q1 = i8_q(a1, su1, bv1, r1, (__mmask16)(m >> 16), rk, rq);
    __m512i p01 = _mm512_adds_epi16(_mm512_packs_epi32(q0, q1), rq->z16), p23 = zero;
    if (NP > 2) {
        __m512i q2 = i8_q(a2, su2, bv2, r2, (__mmask16)(m >> 32), rk, rq),
                q3 = NP > 3 ? i8_q(a3, su3, bv3, r3, (__mmask16)(m >> 48), rk, rq) : zero;
        p23 = _mm512_adds_epi16(_mm512_packs_epi32(q2, q3), rq->z16);
    }
    __m512i p = _mm512_permutexvar_epi32(order, _mm512_packus_epi16(p01, p23));
    _mm512_mask_storeu_epi8(y, m, _mm512_min_epu8(_mm512_max_epu8(p, rq->lo8), rq->hi8));
}

/* Float C's row i of NP panels when the epilogue is i8_plain's (a column bias, a
 * residual, no scale nor activation: bert's int8dq GEMMs, GELU applied after the tile):
 * int8dq_out's floats in its order (acc * (sa * sb), + bias, + rk * res), with the
 * panels' scales sb, biases bv (has_bv) and masks made once for the tile's rows, where
 * int8dq_out reloads them and in's fields per accumulator (its masked stores may alias
 * them). res: the row's residual at the tile's first column, or NULL. */
TVNNI INL void int8dq_frow(const int NP, float *c, __m512i a0, __m512i a1, __m512i a2,
                           __m512i a3, float sa, __m512 sb0, __m512 sb1, __m512 sb2, __m512 sb3,
                           bool has_bv, __m512 bv0, __m512 bv1, __m512 bv2, __m512 bv3,
                           const float *res, __m512 rk, __mmask64 m)
{
    const __m512 s = _mm512_set1_ps(sa);
#define I8_F1(p, a, sb, bv)                                                                   \
    if (NP > p) {                                                                             \
        const __mmask16 mp = (__mmask16)(m >> (16 * p));                                      \
        __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), _mm512_mul_ps(s, sb));                \
        __asm__("" : "+v"(v)); /* no fma of the bias: int8dq_out's bits */                    \
        if (has_bv) v = _mm512_add_ps(v, bv);                                                 \
        if (res) v = _mm512_fmadd_ps(rk, _mm512_maskz_loadu_ps(mp, res + p * QG_NR), v);      \
        _mm512_mask_storeu_ps(c + p * QG_NR, mp, v);                                          \
    }
    I8_F1(0, a0, sb0, bv0)
    I8_F1(1, a1, sb1, bv1)
    I8_F1(2, a2, sb2, bv2)
    I8_F1(3, a3, sb3, bv3)
#undef I8_F1
}

/* int8dq: MR rows by NP panels of column group g from its panel s0, MR x
 * NP int32 accumulators; each A quad broadcast once for the NP panels,
 * each weight vector loaded once for the MR rows. The accumulators are
 * named variables, not an array: GCC 12 copies an array's elements to
 * another register around every vpdpbusd (three times the loop's
 * instructions), named ones it keeps in place. */
/* acc += the u8 x s8 quad products of a and b (vpdpbusd), on the variable
 * itself: through _mm512_dpbusd_epi32, or an inline function returning the
 * sum, GCC 12 copies every accumulator to another register once per k step
 * (twice the loop's instructions; a returned copy it moves around with 24
 * accumulators live). */
#define DPBUSD(acc, a, b) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b))
/* the accumulators start at -za * colsum (int8dq_zneg): the same for every row with x->uni */
#define I8_DECL(i)                                                                            \
    __m512i c##i##_0 = zero, c##i##_1 = zero, c##i##_2 = zero, c##i##_3 = zero;               \
    if (MR > i) {                                                                             \
        c##i##_0 = x->uni ? zn0 : int8dq_zneg(b, x, i0 + i, j0);                              \
        if (NP > 1) c##i##_1 = x->uni ? zn1 : int8dq_zneg(b, x, i0 + i, j0 + QG_NR);          \
        if (NP > 2) c##i##_2 = x->uni ? zn2 : int8dq_zneg(b, x, i0 + i, j0 + 2 * QG_NR);      \
        if (NP > 3) c##i##_3 = x->uni ? zn3 : int8dq_zneg(b, x, i0 + i, j0 + 3 * QG_NR);      \
    }
#define I8_PTR(i)                                                                             \
    const uint32_t *a##i = MR <= i ? NULL                                                     \
                           : IMPL  ? (const uint32_t *)(x->rp[i0 + i] + roff)                 \
                                   : a + i * kq + q0;
#define I8_STEP(i)                                                                            \
    if (MR > i) {                                                                             \
        const __m512i av = _mm512_set1_epi32((int)a##i[q]);                                   \
        DPBUSD(c##i##_0, av, b0);                                                  \
        if (NP > 1) DPBUSD(c##i##_1, av, b1);                                      \
        if (NP > 2) DPBUSD(c##i##_2, av, b2);                                      \
        if (NP > 3) DPBUSD(c##i##_3, av, b3);                                      \
    }
#define I8_OUT(i)                                                                             \
    if (MR > i) {                                                                             \
        int8dq_out(b, x, i0, i, j0, 0, c##i##_0, c, ldc, ein, su0, rqp);                 \
        if (NP > 1) int8dq_out(b, x, i0, i, j0, 1, c##i##_1, c, ldc, ein, su1, rqp);     \
        if (NP > 2) int8dq_out(b, x, i0, i, j0, 2, c##i##_2, c, ldc, ein, su2, rqp);     \
        if (NP > 3) int8dq_out(b, x, i0, i, j0, 3, c##i##_3, c, ldc, ein, su3, rqp);     \
    }
#define I8_OUTU8(i)                                                                           \
    if (MR > i)                                                                               \
        int8dq_u8row(NP, x->y8 + (i0 + i) * x->ldy8 + j0, c##i##_0, c##i##_1, c##i##_2,       \
                     c##i##_3, su0, su1, su2, su3, bv0, bv1, bv2, bv3,                       \
                     k.res ? k.res + (i0 + i) * ein->ldr : NULL, rk, &k.rq, k.m1, k.m64);
#define I8_OUTF(i)                                                                            \
    if (MR > i)                                                                               \
        int8dq_frow(NP, c + i * ldc, c##i##_0, c##i##_1, c##i##_2, c##i##_3,                  \
                    sa[uni ? 0 : i0 + i], sb0, sb1, sb2, sb3, has_bv, bv0, bv1, bv2, bv3,     \
                    res ? res + (i0 + i) * ldr : NULL, rk, m64);
#define I8_ROWS(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11)

/* The stretch's quads: the group's weight vectors of quad q loaded once for
 * the rows, prefetched 32 quads ahead when PF. */
#define I8_QLOOP(PF)                                                                          \
    for (int64_t q = 0; q < run; q++) {                                                       \
        const uint8_t *wq = w + q * step;                                                     \
        __m512i b0 = zero, b1 = zero, b2 = zero, b3 = zero;                                   \
        if (PF) {                                                                             \
            _mm_prefetch((const char *)(wq + 32 * step), _MM_HINT_T0);                        \
            if (NP > 1) _mm_prefetch((const char *)(wq + 32 * step + 64), _MM_HINT_T0);       \
            if (NP > 2) _mm_prefetch((const char *)(wq + 32 * step + 128), _MM_HINT_T0);      \
            if (NP > 3) _mm_prefetch((const char *)(wq + 32 * step + 192), _MM_HINT_T0);      \
        }                                                                                     \
        b0 = _mm512_load_si512(wq);                                                           \
        if (NP > 1) b1 = _mm512_load_si512(wq + 64);                                          \
        if (NP > 2) b2 = _mm512_load_si512(wq + 128);                                         \
        if (NP > 3) b3 = _mm512_load_si512(wq + 192);                                         \
        I8_ROWS(I8_STEP)                                                                      \
    }

/* The epilogue's constants of int8dq_tiles' tiles: the uniform scales (x->uni), the
 * requantisation's bounds (uint8 C) with in less the activation they fold, and for a plain
 * epilogue into uint8 (i8_plain) the columns' masks, biases and residual. */
typedef struct i8_consts {
    __m512 su0, su1, su2, su3, bv0, bv1, bv2, bv3, rk;
    i8_req rq;
    const gemm_epi *in;
    gemm_epi noact;
    bool plain;
    int64_t nv;
    __mmask64 m64;
    __mmask16 m1;
    const float *res;
} i8_consts;

TVNNI INL void i8_consts_make(const int NP, const qg_packed *b, const qg_act *x, int64_t i0,
                              int64_t j0, const gemm_epi *in, i8_consts *k)
{
    k->su0 = k->su1 = k->su2 = k->su3 = _mm512_setzero_ps();
    if (x->uni) {
        k->su0 = int8dq_sc(b, x, i0, j0);
        if (NP > 1) k->su1 = int8dq_sc(b, x, i0, j0 + QG_NR);
        if (NP > 2) k->su2 = int8dq_sc(b, x, i0, j0 + 2 * QG_NR);
        if (NP > 3) k->su3 = int8dq_sc(b, x, i0, j0 + 3 * QG_NR);
    }
    bool act = true;
    k->rq = (i8_req){0};
    if (x->y8) k->rq = i8_bounds(x, in, &act);
    if (!act) { /* the relu or clip is rq's clamp */
        k->noact = *in;
        k->noact.act = GEMM_ACT_NONE;
        in = &k->noact;
    }
    k->in = in;
    k->plain = x->y8 && x->uni && i8_plain(in);
    k->bv0 = k->bv1 = k->bv2 = k->bv3 = _mm512_setzero_ps();
    k->res = NULL;
    if (!k->plain) return;
    const int64_t left = b->n - j0;
    k->nv = left < NP * QG_NR ? left : NP * QG_NR;
    k->m64 = k->nv >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << k->nv) - 1;
    k->m1 = (__mmask16)k->m64;
    const float *bias = in && in->bias_mode == GEMM_BIAS_COL ? in->bias + j0 : NULL;
    k->res = in && in->res ? in->res + j0 : NULL;
    k->rk = _mm512_set1_ps(k->res && in->res_scale != 0.0f ? in->res_scale : 1.0f);
    if (bias) {
        k->bv0 = _mm512_maskz_loadu_ps(k->m1, bias);
        if (NP > 1) k->bv1 = _mm512_maskz_loadu_ps((__mmask16)(k->m64 >> 16), bias + QG_NR);
        if (NP > 2) k->bv2 = _mm512_maskz_loadu_ps((__mmask16)(k->m64 >> 32), bias + 2 * QG_NR);
        if (NP > 3) k->bv3 = _mm512_maskz_loadu_ps((__mmask16)(k->m64 >> 48), bias + 3 * QG_NR);
    }
}

/* A tile's int32 sums: the accumulators declared (I8_DECL) and run over A's quads in
 * stretches (one when its rows are stored, a kernel row's taps each in the implicit
 * GEMM's), each row's from its own pointer, stretch s at s * run_off; the weights
 * prefetched when COLD (the tile's group's first rows of a pass) or past L1. */
#define I8_SUMS(COLD)                                                                         \
    I8_ROWS(I8_DECL)                                                                          \
    {                                                                                         \
        const uint8_t *w = w0;                                                                \
        const uint32_t *a = IMPL ? NULL : (const uint32_t *)(x->q + (size_t)i0 * b->kp);      \
        int64_t roff = 0;                                                                     \
        /* 32 quads ahead: 14-31% less CPU time at 8 x 4096 x 4096 (weights                   \
         * streamed from memory; bench/RESULTS.md, 2026-11-27); when the group's              \
         * weights fit L1 (48 KiB here) only in a pass's first tile, which brings             \
         * them in: prefetching them in every tile, resnet18's 3x3 Convs of 64                \
         * channels (36 KiB a group) took 1.36x the CPU time, never, bert's K =               \
         * 256 GEMMs 1.02-1.18x (RESULTS.md, branch qk) */                                    \
        const bool pf = (COLD) || kq * step > 48 * 1024;                                      \
        for (int64_t q0 = 0; q0 < kq; q0 += run, w += run * step, roff += IMPL ? x->run_off : 0) { \
            I8_ROWS(I8_PTR)                                                                   \
            if (pf) I8_QLOOP(true) else I8_QLOOP(false)                                       \
        }                                                                                     \
    }

/* zn0..zn3: the NP panels' zero-point starts (x->uni: one activation zero
 * point for all rows), zero otherwise; in a body where b, x, i0, j0, NP and zero are. */
#define I8_ZNEG                                                                               \
    __m512i zn0 = zero, zn1 = zero, zn2 = zero, zn3 = zero;                                   \
    if (x->uni) {                                                                             \
        zn0 = int8dq_zneg(b, x, i0, j0);                                                      \
        if (NP > 1) zn1 = int8dq_zneg(b, x, i0, j0 + QG_NR);                                  \
        if (NP > 2) zn2 = int8dq_zneg(b, x, i0, j0 + 2 * QG_NR);                              \
        if (NP > 3) zn3 = int8dq_zneg(b, x, i0, j0 + 3 * QG_NR);                              \
    }

/* One tile of MR rows into float C (x->y8 NULL: k_int8dq gives uint8 C to
 * int8dq_tiles), the scales made after its sums; a plain epilogue's (i8_plain) through
 * int8dq_frow, the columns' constants made once for the rows: bert int8dq b8 0.91-0.93x
 * the CPU time of int8dq_out's per-accumulator epilogue, the same bits (RESULTS.md, q8e). */
TVNNI INL void int8dq_body(const int MR, const int NP, const bool IMPL, const qg_packed *b,
                           const qg_act *x, int64_t i0, int64_t g, int s0, float *c, int64_t ldc,
                           const gemm_epi *in)
{
    const int64_t kq = b->kp / 4, step = (int64_t)qg_group_w(b, g) * 64, run = IMPL ? x->run : kq;
    const uint8_t *const w0 = qg_group(b, g) + s0 * 64;
    const __m512i zero = _mm512_setzero_si512();
    const int64_t j0 = (g * QG_GP + s0) * QG_NR;
    I8_ZNEG
    I8_SUMS(x->wcold)
    if (i8_plain(in)) { /* the columns' constants once, in locals no store of C aliases */
        const float *const sa = x->sa;
        const bool uni = x->uni;
        const int64_t left = b->n - j0, nv = left < NP * QG_NR ? left : NP * QG_NR;
        const __mmask64 m64 = nv >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << nv) - 1;
        const __m512 z = _mm512_setzero_ps();
        __m512 sb0 = _mm512_loadu_ps(b->scale + j0), sb1 = z, sb2 = z, sb3 = z;
        if (NP > 1) sb1 = _mm512_loadu_ps(b->scale + j0 + QG_NR);
        if (NP > 2) sb2 = _mm512_loadu_ps(b->scale + j0 + 2 * QG_NR);
        if (NP > 3) sb3 = _mm512_loadu_ps(b->scale + j0 + 3 * QG_NR);
        const bool has_bv = in && in->bias_mode == GEMM_BIAS_COL;
        __m512 bv0 = z, bv1 = z, bv2 = z, bv3 = z;
        if (has_bv) {
            const float *bias = in->bias + j0;
            bv0 = _mm512_maskz_loadu_ps((__mmask16)m64, bias);
            if (NP > 1) bv1 = _mm512_maskz_loadu_ps((__mmask16)(m64 >> 16), bias + QG_NR);
            if (NP > 2) bv2 = _mm512_maskz_loadu_ps((__mmask16)(m64 >> 32), bias + 2 * QG_NR);
            if (NP > 3) bv3 = _mm512_maskz_loadu_ps((__mmask16)(m64 >> 48), bias + 3 * QG_NR);
        }
        const float *const res = in && in->res ? in->res + j0 : NULL;
        const int64_t ldr = res ? in->ldr : 0;
        const __m512 rk = _mm512_set1_ps(res && in->res_scale != 0.0f ? in->res_scale : 1.0f);
        I8_ROWS(I8_OUTF)
        return;
    }
    __m512 su0 = _mm512_setzero_ps(), su1 = su0, su2 = su0, su3 = su0;
    if (x->uni) {
        su0 = int8dq_sc(b, x, i0, j0);
        if (NP > 1) su1 = int8dq_sc(b, x, i0, j0 + QG_NR);
        if (NP > 2) su2 = int8dq_sc(b, x, i0, j0 + 2 * QG_NR);
        if (NP > 3) su3 = int8dq_sc(b, x, i0, j0 + 3 * QG_NR);
    }
    const gemm_epi *const ein = in;
    const i8_req *const rqp = NULL; /* (float C) */
    I8_ROWS(I8_OUT)
}

/* nt tiles of MR rows into uint8 C (the kernel writes it), the epilogue's constants made
 * once before them: at K 16 to 32 (a static int8 Conv's 1x1 on 16 to 32 channels) making
 * them per 6-row tile cost as much as its vpdpbusd. (Float C keeps int8dq_body a tile at
 * a time: with this loop there, bert's int8dq GEMMs took 3 to 7% longer.) */
TVNNI INL void int8dq_tiles(const int MR, const int NP, const bool IMPL, const qg_packed *b,
                            const qg_act *x, int64_t i0, int nt, int64_t g, int s0, float *c,
                            int64_t ldc, const gemm_epi *in)
{
    const int64_t kq = b->kp / 4, step = (int64_t)qg_group_w(b, g) * 64, run = IMPL ? x->run : kq;
    const uint8_t *const w0 = qg_group(b, g) + s0 * 64;
    const __m512i zero = _mm512_setzero_si512();
    const int64_t j0 = (g * QG_GP + s0) * QG_NR;
    I8_ZNEG
    i8_consts k;
    i8_consts_make(NP, b, x, i0, j0, in, &k);
    const __m512 su0 = k.su0, su1 = k.su1, su2 = k.su2, su3 = k.su3;
    const gemm_epi *const ein = k.in;
    const i8_req *const rqp = &k.rq;
    for (int t = 0; t < nt; t++, i0 += MR) {
        if (k.res && t + 1 < nt) /* the next tile's residual, while this one computes */
            kprefetch_rows(k.res + (i0 + MR) * ein->ldr, ein->ldr, MR, k.nv, false);
        I8_SUMS(t == 0 && x->wcold)
        if (k.plain) {
            const __m512 bv0 = k.bv0, bv1 = k.bv1, bv2 = k.bv2, bv3 = k.bv3, rk = k.rk;
            I8_ROWS(I8_OUTU8)
        } else {
            I8_ROWS(I8_OUT)
        }
    }
}

#undef I8_SUMS
#undef I8_QLOOP
/* One function per shape: inlined all into one switch, GCC 12 allocates
 * them badly (a register copy around every vpdpbusd again). Stored rows
 * (k8_) and rows through pointers (k8i_, qgemm_u8_rows): one body for both
 * cost mobilenetv2 about 5% of CPU time (its small-K 1x1s; bench/RESULTS.md,
 * q8cnn4). */
#define I8_FN1(P, M, NP, IMPL, MT)                                                            \
    TVNNI __attribute__((noinline)) static void P##M##x##NP(                                  \
        const qg_packed *b, const qg_act *x, int64_t i0, int nt, int64_t g, int s0, float *c, \
        int64_t ldc, const gemm_epi *in)                                                      \
    {                                                                                         \
        if (MT) int8dq_tiles(M, NP, IMPL, b, x, i0, nt, g, s0, c, ldc, in);                   \
        else int8dq_body(M, NP, IMPL, b, x, i0, g, s0, c, ldc, in);                           \
    }
/* stored rows (k8_), rows through pointers (k8i_), and both into uint8 C over nt tiles
 * (k8y_, k8yi_) */
#define I8_FN(M, NP)                                                                          \
    I8_FN1(k8_, M, NP, false, false) I8_FN1(k8i_, M, NP, true, false)                         \
    I8_FN1(k8y_, M, NP, false, true) I8_FN1(k8yi_, M, NP, true, true)
#define I8_FN6(NP) I8_FN(1, NP) I8_FN(2, NP) I8_FN(3, NP) I8_FN(4, NP) I8_FN(5, NP) I8_FN(6, NP)
#define I8_FN12(NP) I8_FN6(NP) I8_FN(7, NP) I8_FN(8, NP) I8_FN(9, NP) I8_FN(10, NP) I8_FN(11, NP) \
    I8_FN(12, NP)
I8_FN12(1)
I8_FN12(2)
I8_FN6(3)
I8_FN6(4)

typedef void (*k8_fn)(const qg_packed *, const qg_act *, int64_t, int, int64_t, int, float *,
                      int64_t, const gemm_epi *);
#define I8_ROW6(P, NP) P##1x##NP, P##2x##NP, P##3x##NP, P##4x##NP, P##5x##NP, P##6x##NP
#define I8_ROW12(P, NP) I8_ROW6(P, NP), P##7x##NP, P##8x##NP, P##9x##NP, P##10x##NP, P##11x##NP, \
    P##12x##NP
static const k8_fn k8_table[4][QG_GP + 1][12] = {
    {{0}, {I8_ROW12(k8_, 1)}, {I8_ROW12(k8_, 2)}, {I8_ROW6(k8_, 3)}, {I8_ROW6(k8_, 4)}},
    {{0}, {I8_ROW12(k8i_, 1)}, {I8_ROW12(k8i_, 2)}, {I8_ROW6(k8i_, 3)}, {I8_ROW6(k8i_, 4)}},
    {{0}, {I8_ROW12(k8y_, 1)}, {I8_ROW12(k8y_, 2)}, {I8_ROW6(k8y_, 3)}, {I8_ROW6(k8y_, 4)}},
    {{0}, {I8_ROW12(k8yi_, 1)}, {I8_ROW12(k8yi_, 2)}, {I8_ROW6(k8yi_, 3)}, {I8_ROW6(k8yi_, 4)}},
};

TVNNI static void k_int8dq(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int nt,
                           int64_t g, int s0, int np, float *c, int64_t ldc, const gemm_epi *in)
{
    /* uint8 C (the kernel writes it) over nt tiles; float C a tile at a time */
    if (nt > 1 && !x->y8) {
        for (int t = 0; t < nt; t++)
            k_int8dq(b, x, i0 + t * mr, mr, 1, g, s0, np, c + t * mr * ldc, ldc, in);
        return;
    }
    k8_table[2 * (x->y8 != NULL) + (x->rp != NULL)][np][mr - 1](b, x, i0, nt, g, s0, c, ldc, in);
}

/* Weight-only: 4 rows at most (skinny M); int8wo's body is qgemm_wo512.h's. */
#include "kernels/qgemm_wo512.h"

/* int4wo (qgemm.h), 8 k of a panel in each 64 bytes, column j's dword j
 * holding k = 8b + r in byte r's low nibble and 8b + 4 + r in its high one.
 * Float A: each k's 16 nibbles become floats by vpermps from the table
 * 0..15, which reads only an index's low 4 bits, on the dwords shifted
 * right by 8r (+ 4): no mask, no widening, no int-to-float conversion.
 * Four accumulators per row (see qgemm_wo512.h). */
/* int4wo: the 16 zero points (bytes) at b->zero + at as floats */
T512 INL __m512 w4_zero(const qg_packed *b, size_t at)
{
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)(b->zero + at))));
}

T512 INL void int4wo_body(const int MR, const qg_packed *b, const qg_act *x, int64_t i0, int64_t p,
                          float *t)
{
    const uint8_t *w = qg_panel(b, p, 8);
    const float *a = x->a + i0 * x->lda;
    const int64_t G = b->group, ng = b->kp / G;
    const __m512 lut = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512 out[4];
    UNROLL for (int i = 0; i < MR; i++) out[i] = _mm512_setzero_ps();
    for (int64_t g = 0; g < ng; g++) {
        __m512 acc[4][4];
        UNROLL for (int i = 0; i < MR; i++)
            acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = _mm512_setzero_ps();
        int64_t k1 = (g + 1) * G < b->k ? (g + 1) * G : b->k, k = g * G;
        for (; k < k1; k += 8) {
            _mm_prefetch((const char *)(w + k * 8 + 1024), _MM_HINT_T0);
            const __m512i v = _mm512_load_si512(w + k * 8);
            const int left = k1 - k < 8 ? (int)(k1 - k) : 8;
            UNROLL for (int r = 0; r < 8; r++) {
                if (r >= left) break; /* the last group's last block */
                const int sh = (r % 4) * 8 + (r / 4) * 4; /* k + r: byte r % 4, nibble r / 4 */
                __m512 wk = _mm512_permutexvar_ps(sh ? _mm512_srli_epi32(v, sh) : v, lut);
                UNROLL for (int i = 0; i < MR; i++)
                    acc[i][r % 4] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * x->lda + k + r]), wk,
                                                    acc[i][r % 4]);
            }
        }
        const size_t at = qg_q4_at(b, p, g);
        __m512 s = _mm512_load_ps(b->scale + at), z = w4_zero(b, at);
        UNROLL for (int i = 0; i < MR; i++) {
            __m512 v = _mm512_add_ps(_mm512_add_ps(acc[i][0], acc[i][1]),
                                     _mm512_add_ps(acc[i][2], acc[i][3]));
            v = _mm512_fnmadd_ps(z, _mm512_set1_ps(x->gsum[(i0 + i) * ng + g]), v);
            out[i] = _mm512_fmadd_ps(s, v, out[i]);
        }
    }
    UNROLL for (int i = 0; i < MR; i++) _mm512_store_ps(t + i * QG_NR, out[i]);
}

/* int4wo with A in int8 (a8): 64 bytes of a panel are two quads of k by 16
 * columns, the low nibbles (an and) and the high ones (a shift, an and),
 * each one vpdpbusd per row with the row's quad broadcast from memory in
 * the same instruction (DPBUSD_M): per 128 weights one load, 3 integer
 * ops and 2 vpdpbusd at one row. The group size G is a constant (one body
 * per group size), so a group's blocks unroll; two int32 chains per row at group 32, four
 * past it (a group's chains reset: the next group's overlap their
 * latency), summed once a group, then turned to float as the portable
 * kernel's (qgemm.c's c_int4wo, the same floats): the group's scales and
 * zero points converted once for the MR rows, which share each unpacked
 * weight vector. */
/* acc += the u8 x s8 quad products of w and the dword at p broadcast
 * (vpdpbusd's embedded broadcast: no broadcast instruction); asm, so GCC
 * keeps the accumulator in place (see DPBUSD) */
#define DPBUSD_M(acc, w, p)                                                                    \
    __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*(const int32_t *)(p)))
TVNNI INL void int4a8_body(const int MR, const int G, const qg_packed *b, const qg_act *x,
                           int64_t i0, int64_t p, float *c, int64_t ldc, __mmask16 cm)
{
    const int NC = G == 32 ? 2 : 4; /* int32 chains per row */
    const uint8_t *w = qg_panel(b, p, 8);
    const int64_t ng = b->kp / G, kq = b->kp / 4;
    const int32_t *a0 = (const int32_t *)(x->q4a + (size_t)i0 * (size_t)b->kp), *a[4];
    UNROLL for (int i = 0; i < MR; i++) a[i] = a0 + i * kq; /* a pointer a row: base + offset */
    const uint16_t *sb = b->sbf + qg_q4_at(b, p, 0);
    const uint8_t *zb = b->zero + qg_q4_at(b, p, 0);
    const float *sa = x->q4s + i0 * ng;
    const float *na = x->q4n + i0 * ng;
    const __m512i lo4 = _mm512_set1_epi8(0x0f);
    __m512 out[4];
    UNROLL for (int i = 0; i < MR; i++) out[i] = _mm512_setzero_ps();
    for (int64_t g = 0; g < ng; g++, w += G * 8, sb += QG_NR, zb += QG_NR) {
        __m512i acc[4][4];
        UNROLL for (int i = 0; i < MR; i++)
            UNROLL for (int c = 0; c < NC; c++) acc[i][c] = _mm512_setzero_si512();
        UNROLL for (int s = 0; s < G / 8; s++) { /* the group's 64-byte blocks */
            _mm_prefetch((const char *)(w + s * 64 + 2048), _MM_HINT_T0);
            __m512i v = _mm512_load_si512(w + s * 64);
            __asm__("" : "+v"(v)); /* one load: GCC would fold it into the and and the shift */
            const __m512i l = _mm512_and_si512(v, lo4), h = _mm512_and_si512(_mm512_srli_epi16(v, 4), lo4);
            UNROLL for (int i = 0; i < MR; i++) {
                DPBUSD_M(acc[i][(2 * s) % NC], l, a[i] + 2 * s);
                DPBUSD_M(acc[i][(2 * s + 1) % NC], h, a[i] + 2 * s + 1);
            }
        }
        const __m512 s = _mm512_castsi512_ps(_mm512_slli_epi32(
                         _mm512_cvtepu16_epi32(_mm256_load_si256((const __m256i *)sb)), 16)),
                     z = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)zb)));
        UNROLL for (int i = 0; i < MR; i++) {
            __m512i n = NC == 2 ? _mm512_add_epi32(acc[i][0], acc[i][1])
                                : _mm512_add_epi32(_mm512_add_epi32(acc[i][0], acc[i][1]),
                                                   _mm512_add_epi32(acc[i][2], acc[i][3]));
            __m512 v = _mm512_fnmadd_ps(z, _mm512_set1_ps(na[i * ng + g]), _mm512_cvtepi32_ps(n));
            __m512 sc = _mm512_mul_ps(s, _mm512_set1_ps(sa[i * ng + g]));
            out[i] = _mm512_fmadd_ps(sc, v, out[i]);
            a[i] += G / 4;
        }
    }
    UNROLL for (int i = 0; i < MR; i++) _mm512_mask_storeu_ps(c + i * ldc, cm, out[i]);
}

/* Panels [p0, p1) of rows i0 .. i0 + MR - 1 straight into C (c at C[i0][0]),
 * its columns past n not written: one call for a row tile's panels (the
 * driver's qg_kern.fnc), no tile copied per panel. */
TVNNI INL void int4a8_cols(const int MR, const int G, const qg_packed *b, const qg_act *x,
                           int64_t i0, int64_t p0, int64_t p1, float *c, int64_t ldc)
{
    for (int64_t p = p0; p < p1; p++) {
        const int64_t nr = b->n - p * QG_NR;
        int4a8_body(MR, G, b, x, i0, p, c + p * QG_NR, ldc,
                    nr >= QG_NR ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1));
    }
}

#define INT8WO_CALL(M, ...) wo512_body(WO512_INT8, M, __VA_ARGS__)
#define INT4WO_CALL(M, ...) int4wo_body(M, __VA_ARGS__)
#define INT4A8_CALL(M, G, ...) int4a8_body(M, G, __VA_ARGS__)
T512 static void k_int8wo(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p,
                          float *t)
{
    QG_SWITCH4(INT8WO_CALL, b, x, i0, p, t)
}
#define INT4A8C_CALL(M, G, ...) int4a8_cols(M, G, __VA_ARGS__)
TVNNI static void k_int4wo(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p,
                           float *t)
{
    if (b->a8 && b->group == 32) {
        QG_SWITCH4(INT4A8_CALL, 32, b, x, i0, p, t, QG_NR, 0xffff)
    } else if (b->a8 && b->group == 64) {
        QG_SWITCH4(INT4A8_CALL, 64, b, x, i0, p, t, QG_NR, 0xffff)
    } else if (b->a8) {
        QG_SWITCH4(INT4A8_CALL, 128, b, x, i0, p, t, QG_NR, 0xffff)
    } else {
        QG_SWITCH4(INT4WO_CALL, b, x, i0, p, t)
    }
}
/* qg_kern.fnc: a8's panels straight into C; float A's through k_int4wo's tiles */
TVNNI static void kc_int4wo(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p0,
                            int64_t p1, float *c, int64_t ldc)
{
    if (b->a8 && b->group == 32) {
        QG_SWITCH4(INT4A8C_CALL, 32, b, x, i0, p0, p1, c, ldc)
    } else if (b->a8 && b->group == 64) {
        QG_SWITCH4(INT4A8C_CALL, 64, b, x, i0, p0, p1, c, ldc)
    } else if (b->a8) {
        QG_SWITCH4(INT4A8C_CALL, 128, b, x, i0, p0, p1, c, ldc)
    } else {
        float t[4 * QG_NR] __attribute__((aligned(64)));
        for (int64_t p = p0; p < p1; p++) {
            const int nr = b->n - p * QG_NR < QG_NR ? (int)(b->n - p * QG_NR) : QG_NR;
            QG_SWITCH4(INT4WO_CALL, b, x, i0, p, t)
            for (int i = 0; i < mr; i++)
                memcpy(c + i * ldc + p * QG_NR, t + i * QG_NR, sizeof(float) * (size_t)nr);
        }
    }
}

/* The activation quantisers' two passes (qg_quant_row_u8, qg_dynq_u8): vminps/vmaxps return their
 * second operand when the first is NaN, as the scalar code skips NaN; the
 * division is kept (a reciprocal would round differently) and rounding is
 * to nearest even, as rintf. */
T512 static void dq_minmax(const float *x, int64_t n, float *lo, float *hi)
{
    __m512 l = _mm512_set1_ps(*lo), h = _mm512_set1_ps(*hi);
    int64_t i = 0;
    if (n >= 64) { /* four chains: min and max wait 4 cycles on their last result */
        __m512 l1 = l, h1 = h, l2 = l, h2 = h, l3 = l, h3 = h;
        for (; i + 64 <= n; i += 64) {
            __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16),
                   v2 = _mm512_loadu_ps(x + i + 32), v3 = _mm512_loadu_ps(x + i + 48);
            l = _mm512_min_ps(v0, l), h = _mm512_max_ps(v0, h);
            l1 = _mm512_min_ps(v1, l1), h1 = _mm512_max_ps(v1, h1);
            l2 = _mm512_min_ps(v2, l2), h2 = _mm512_max_ps(v2, h2);
            l3 = _mm512_min_ps(v3, l3), h3 = _mm512_max_ps(v3, h3);
        }
        l = _mm512_min_ps(_mm512_min_ps(l, l1), _mm512_min_ps(l2, l3));
        h = _mm512_max_ps(_mm512_max_ps(h, h1), _mm512_max_ps(h2, h3));
    }
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        l = _mm512_min_ps(v, l);
        h = _mm512_max_ps(v, h);
    }
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        l = _mm512_mask_min_ps(l, m, v, l);
        h = _mm512_mask_max_ps(h, m, v, h);
    }
    *lo = _mm512_reduce_min_ps(l);
    *hi = _mm512_reduce_max_ps(h);
}

/* x / s (div), or x * s (s the reciprocal), rounded, + z, saturated to uint8. */
T512 INL void quant_body(const float *x, int64_t n, float s, float z, uint8_t *y, bool div)
{
    const __m512 sv = _mm512_set1_ps(s), zv = _mm512_set1_ps(z), top = _mm512_set1_ps(255.0f),
                 zero = _mm512_setzero_ps();
    int64_t i = 0;
    if (z >= 0 && z <= 255) { /* 64 at a time: rounded to int32, + z, packed with saturation */
        const __m512 cap = _mm512_set1_ps(512.0f);
        const __m512i zi = _mm512_set1_epi32((int32_t)z),
                      order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        /* min(cap, v): NaN stays NaN (vminps's second operand), +inf and big
         * values become 512 (255 after the pack); NaN, -inf and values past
         * int32 convert to INT32_MIN, 0 after it; the rest round to nearest
         * even as rintf, and + z is exact in int32 */
#define QB_Q(o)                                                                                    \
    _mm512_add_epi32(                                                                              \
        _mm512_cvt_roundps_epi32(                                                                  \
            _mm512_min_ps(cap, div ? _mm512_div_ps(_mm512_loadu_ps(x + i + (o)), sv)              \
                                   : _mm512_mul_ps(_mm512_loadu_ps(x + i + (o)), sv)),            \
            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),                                        \
        zi)
        for (; i + 64 <= n; i += 64) {
            __m512i a = QB_Q(0), b = QB_Q(16), c = QB_Q(32), d = QB_Q(48);
            /* packus: per 128-bit lane, a's 4 then b's, c's, d's: put back in order */
            __m512i p = _mm512_packus_epi16(_mm512_packus_epi32(a, b), _mm512_packus_epi32(c, d));
            _mm512_storeu_si512(y + i, _mm512_permutexvar_epi32(order, p));
        }
#undef QB_Q
    }
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 xv = _mm512_maskz_loadu_ps(m, x + i);
        __m512 v = div ? _mm512_div_ps(xv, sv) : _mm512_mul_ps(xv, sv);
        v = _mm512_add_ps(_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zv);
        v = _mm512_min_ps(_mm512_max_ps(v, zero), top); /* NaN: 0 */
        _mm512_mask_cvtepi32_storeu_epi8(y + i, m, _mm512_cvtps_epi32(v));
    }
}

T512 static void dq_quant(const float *x, int64_t n, float s, float z, uint8_t *y)
{
    quant_body(x, n, s, z, y, true);
}

T512 static void dq_requant(const float *x, int64_t n, float r, float z, uint8_t *y)
{
    quant_body(x, n, r, z, y, false);
}

/* qg_dequant_u8's (q - z) * s, 16 at a time (a masked last part) */
T512 static void dq_dequant(const uint8_t *q, int64_t n, float s, int32_t z, float *y)
{
    const __m512 sv = _mm512_set1_ps(s);
    const __m512i zi = _mm512_set1_epi32(z);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(
                                                  _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(q + i))), zi)),
                                              sv));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        const __m512i v = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, q + i));
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(v, zi)), sv));
    }
}

/* int4wo's a8 rows (qg_quantiser.grp8), 16 at a time: the portable one's
 * bytes (its product x * r rounded to nearest even by vcvtps2dq) */
T512 static void dq_grp8(const float *x, int64_t n, int64_t g, int8_t *q, float *s, float *sum)
{
    const __m512 big = _mm512_set1_ps(3.40282347e38f);
    for (int64_t g0 = 0, i = 0; g0 < n; g0 += g, i++) {
        const int64_t g1 = g0 + g < n ? g0 + g : n;
        __m512 mx = _mm512_setzero_ps();
        __mmask16 bad = 0;
        for (int64_t p = g0; p < g1; p += 16) {
            const __mmask16 m = g1 - p >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (g1 - p)) - 1);
            const __m512 v = _mm512_abs_ps(_mm512_maskz_loadu_ps(m, x + p));
            bad |= _mm512_mask_cmp_ps_mask(m, v, big, _CMP_NLE_UQ); /* NaN, infinity */
            mx = _mm512_max_ps(v, mx);
        }
        const float ms = _mm512_reduce_max_ps(mx), r = ms > 0 && !bad ? 127.0f / ms : 0;
        const __m512 rv = _mm512_set1_ps(r);
        __m512i t = _mm512_setzero_si512();
        for (int64_t p = g0; p < g0 + g; p += 16) {
            const __mmask16 m = p >= g1 ? 0 : g1 - p >= 16 ? (__mmask16)0xffff
                                                           : (__mmask16)((1u << (g1 - p)) - 1);
            __m512i v = _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + p), rv),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            if (bad) v = _mm512_setzero_si512();
            t = _mm512_add_epi32(t, v);
            _mm_storeu_si128((__m128i *)(q + p), _mm512_cvtepi32_epi8(v));
        }
        s[i] = bad ? NAN : ms / 127.0f;
        sum[i] = (float)_mm512_reduce_add_epi32(t);
    }
}

const qg_quantiser qg_avx512_quantiser = {KISA_AVX512, dq_minmax, dq_quant, dq_requant, dq_dequant,
                                          dq_grp8};

const qg_kern qg_avx512_bf16 = {KISA_AVX512, "avx512bf16", "avx512-bf16", 12, k_bf16, NULL,
                                 {0},         false,        k_bf16_tile,   BMR, cvt_bf16};
const qg_kern qg_avx512_int8dq = {KISA_AVX512, "avx512vnni", "avx512-vnni", 12, NULL, k_int8dq,
                                  {0, 12, 12, 6, 6}, true};
const qg_kern qg_avx512_int8wo = {KISA_AVX512, "", "avx512", 4, k_int8wo};
const qg_kern qg_avx512_int4wo = {KISA_AVX512, "avx512vnni", "avx512-vnni", 4, k_int4wo,
                                  .fnc = kc_int4wo};
#else
const qg_kern qg_avx512_bf16, qg_avx512_int8dq, qg_avx512_int8wo, qg_avx512_int4wo;
const qg_quantiser qg_avx512_quantiser;
#endif

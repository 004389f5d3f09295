/* Quantised and low-precision GEMM with a prepacked constant B (weights):
 *
 *   C[m][n] = epilogue(sum_k A[m][k] * B'[k][n])
 *
 * where B' is B as the scheme stores it and A is float32, row-major:
 *   QG_BF16    B and A rounded to bfloat16 (nearest even), fp32 sums
 *              (AVX512-BF16 vdpbf16ps).
 *   QG_INT8DQ  B symmetric int8 per output column (s = max|b|/127); each A
 *              row quantised at run time to uint8 with its own scale and
 *              zero point; int32 sums (AVX512-VNNI vpdpbusd), the zero
 *              point taken out with B's column sums made at pack:
 *                C = sa * sb[j] * (sum qa*qb - za * colsum[j]).
 *   QG_INT8WO  B as QG_INT8DQ's, A float: fp32 sums of a * q, times sb[j].
 *   QG_INT4WO  B asymmetric uint4 per group of `group` rows (32, 64, 128)
 *              and column, w = s * (q - z); per group
 *                s * (sum a*q - z * sum a),
 *              in one of two ways, the blob's (qg_packed.a8):
 *              - a8 (qg_pack's, ait's own quantisation, which the tuner's
 *                SQNR guard judges; the scales bfloat16, rounded up at
 *                pack and the weights quantised at them): each A row quantised at run time per
 *                group to int8, symmetric, qa = rint(a * 127 / max|a|),
 *                sa = max|a| / 127; exact int32 sums of qa * q (AVX512-VNNI
 *                vpdpbusd on the nibbles as bytes), then per group and
 *                column, in float: out += (s * sa) * (sum qa*q - z * sum qa);
 *                every ISA the same floats. A group holding a NaN or an
 *                infinity gives NaN.
 *              - float A (qg_pack_q4's, weights that arrive quantised:
 *                their MatMul within float32 rounding of the reference's
 *                dequantise-then-multiply): fp32 sums of a * q.
 *   QG_FP16WO  B as IEEE half (nearest even; beyond half's range clamped to
 *              +-65504, the SQNR guard judging it), A float: fp32 sums of
 *              a * b, no scale (qgemm_f16.c, F16C's vcvtph2ps).
 * The weight-only ones stream B at memory bandwidth for skinny M.
 *
 * Packed layouts do not depend on the ISA (the portable kernels read the
 * same bytes), so a saved blob runs anywhere; the kernel is picked at each
 * call from CPUID under kisa_force's cap (isa.h). Panels are QG_NR
 * columns wide, zero past N. An int4wo panel holds 8 k in each 64 bytes,
 * column j's dword j: its byte r the nibbles of k = 8b + r (low) and
 * 8b + 4 + r (high), so an and and a shift make two quads of bytes
 * for vpdpbusd (qg_q4_byte); its scales and zero points a run of QG_NR
 * (floats; bytes) per group, a panel's groups in a row. */
#ifndef AIT_KERNELS_QGEMM_H
#define AIT_KERNELS_QGEMM_H
#include <stdint.h>

#include "core/status.h"
#include "kernels/gemm.h"

#define QG_NR 16
/* int8dq's panels come in column groups of QG_GP (the last one narrower
 * when the panels run out): each quad of k holds the group's panels side
 * by side, 64 bytes each, so a micro-kernel streams one run of bytes for
 * up to QG_GP * QG_NR columns. */
#define QG_GP 4

typedef enum { QG_BF16, QG_INT8DQ, QG_INT8WO, QG_INT4WO, QG_FP16WO, QG_N } qg_scheme;

/* A view of a packed B (qg_pack's buffer, or an artifact's copy). */
typedef struct qg_packed {
    int scheme, group;
    int64_t k, n, kp, np; /* kp: k rounded up to the scheme's step; np: n to QG_NR */
    const void *w;        /* the panels */
    const float *scale;   /* [np] (int8); int4: [np/QG_NR][kp/group][QG_NR] (qg_q4_at) */
    const uint16_t *sbf;  /* int4wo a8: the scales as bfloat16 (scale NULL), as scale's */
    const uint8_t *zero;  /* int4: as scale, a byte each (an integer zero point) */
    const int32_t *colsum; /* int8dq: [np] */
    bool a8;              /* int4wo: A quantised to int8 per group (qgemm.h, QG_INT4WO) */
} qg_packed;

/* "bf16", "int8dq", "int8wo", "int4wo", "fp16"; NULL when out of range. */
const char *qg_scheme_name(int s);
/* The scheme named `name` ("int4wo" is group 32; "int4wo-64" and
 * "int4wo-128" set *group; "int8", static int8, is QG_INT8DQ's packing
 * with activations quantised at a fixed, calibrated scale by the caller,
 * qg_quant_u8 then qgemm_u8), or -1. */
int qg_scheme_find(const char *name, int *group);

/* Bytes a packed B (k x n) takes, header included; 0 on overflow or a bad
 * group (int4: 32, 64 or 128). */
size_t qg_pack_size(int scheme, int group, int64_t k, int64_t n);
/* Quantises and packs B (B[k][n] at b[k*rsb + n*csb]) into dst (64-byte
 * aligned, qg_pack_size bytes, zeroed). */
void qg_pack(int scheme, int group, const float *b, int64_t rsb, int64_t csb, int64_t k,
             int64_t n, void *dst);
/* Writes a pack's header for a (k x n) B of the scheme into dst
 * (qg_pack_size bytes, 64-byte aligned) and fills *v, a view of it whose
 * panels, scales and column sums the caller then writes itself (a B made at
 * run time: the int8 attention's keys and values, attn_q8.c); false on a
 * bad size or group. */
bool qg_pack_begin(int scheme, int group, int64_t k, int64_t n, void *dst, qg_packed *v);
/* Packs a B quantised already, B[k][n] at b[k*rsb + n*csb] (int8, or
 * uint8 when b_unsigned), minus column j's zero point zb[j], with column
 * scales scale[n], into QG_INT8DQ's or QG_INT8WO's layout (dst as
 * qg_pack's: qg_pack_size(scheme, 0, k, n) bytes, zeroed). The integers are
 * kept exactly, so false (dst unusable) when some b - zb leaves
 * [-128, 127]: uint8 weights with a zero point far from 128, say. dst NULL:
 * the check only. */
bool qg_pack_q8(int scheme, const void *b, bool b_unsigned, int64_t rsb, int64_t csb, int64_t k,
                int64_t n, const int32_t *zb, const float *scale, void *dst);
/* Packs a B quantised already in blocks of `group` rows (32, 64, 128) into
 * QG_INT4WO's layout (dst of qg_pack_q4_size's bytes): B[k][n] at b[k*rsb + n*csb], one value a byte (uint4
 * 0..15, or int4 -8..7 when b_signed, kept as b + 8 against z + 8), block
 * g of column j with scale[g*n + j] and zero point zero[g*n + j] (w = s *
 * (b - z), the last block possibly short; z an integer, as an int4 or uint4
 * tensor's, rounded to one); dst as qg_pack's, zeroed. A
 * float A (a8 false): such weights' MatMul stays within float32 rounding. */
void qg_pack_q4(const void *b, bool b_signed, int64_t rsb, int64_t csb, int64_t k, int64_t n,
                int group, const float *scale, const float *zero, void *dst);
/* Bytes qg_pack_q4 packs into (its scales float; qg_pack's int4wo, a8,
 * bfloat16: qg_pack_size), 0 as qg_pack_size. */
size_t qg_pack_q4_size(int group, int64_t k, int64_t n);
/* Checks a packed buffer of `size` bytes and fills a view of it in place. */
ait_status qg_view(const void *buf, size_t size, qg_packed *out, ait_error *e);

/* C (m x n, leading dimension ldc) = epilogue(A * B'), A m x k with rows
 * lda apart. threads <= 1: the calling thread only. Fails only when out
 * of memory. */
ait_status qgemm(const qg_packed *b, const float *a, int64_t lda, int64_t m, float *c,
                 int64_t ldc, const gemm_epi *epi, int threads, ait_error *e);
/* Bytes of the activations qgemm converts for m rows of a (k x n) B of the
 * scheme (0: none, or on overflow); qgemm_ws runs in ws of that many bytes
 * (64-byte aligned, any contents) instead of allocating them at each call. */
size_t qgemm_scratch(int scheme, int group, int64_t k, int64_t m);
ait_status qgemm_ws(const qg_packed *b, const float *a, int64_t lda, int64_t m, float *c,
                    int64_t ldc, const gemm_epi *epi, int threads, void *ws, ait_error *e);
/* int8dq's activations as qgemm makes them: rows [0, m) of a (k floats
 * each, lda apart) quantised each at its own range (qg_quant_row_u8) into
 * ws (qgemm_scratch(QG_INT8DQ, 0, k, m) bytes, 64-byte aligned): rows kp
 * apart at *q (0 from k to kp: kp is k rounded up to 4), their scales
 * *sa and zero points *za, as qgemm_u8 reads them. A caller running
 * several GEMMs on one A (a layer's query, key and value projections)
 * quantises it once so. lo, hi not NULL: row i's range [min(0, min x),
 * max(0, max x)] (NaN skipped) in GEMM_RANGE_LANES lanes each, as the GEMM
 * that wrote A found it (gemm_epi.rlo): the same bytes, without the pass
 * that finds it. */
void qg_quant_rows_u8(const float *a, int64_t lda, int64_t m, int64_t k, const float *lo,
                      const float *hi, void *ws, uint8_t **q, float **sa, int32_t **za);
/* QG_INT8DQ with A already quantised: row i at q + i * b->kp (qg_quant_row_u8's
 * bytes, 0 from k to kp), its scale sa[i] and zero point za[i]. */
void qgemm_u8(const qg_packed *b, const uint8_t *q, const float *sa, const int32_t *za, int64_t m,
              float *c, int64_t ldc, const gemm_epi *epi, int threads);
/* qgemm_u8 with C requantised to uint8 y (rows ldy apart) at scale ys and
 * zero point yz, the bytes qg_requant_u8 makes of qgemm_u8's C, without
 * C's floats going to memory (the VNNI kernel requantises in registers). */
void qgemm_u8_q8(const qg_packed *b, const uint8_t *q, const float *sa, const int32_t *za,
                 int64_t m, uint8_t *y, int64_t ldy, float ys, int32_t yz, const gemm_epi *epi,
                 int threads);
/* A uint8 A whose rows are not stored, an implicit GEMM's (a convolution
 * reading its padded input in place of an im2col): row i's b->kp bytes
 * come in `runs` runs of b->kp / runs bytes each (a multiple of 4), run s
 * at rp[i] + s * off (a kernel row's taps, of adjacent pixels). */
typedef struct qg_rows {
    const uint8_t *const *rp;
    int64_t runs, off;
} qg_rows;
/* qgemm_u8 (y NULL) or qgemm_u8_q8 (y not NULL; c unused) with A's rows
 * a's. false, and nothing done, when the runs do not split kp in quads. */
bool qgemm_u8_rows(const qg_packed *b, const qg_rows *a, const float *sa, const int32_t *za,
                   int64_t m, float *c, int64_t ldc, uint8_t *y, int64_t ldy, float ys, int32_t yz,
                   const gemm_epi *epi, int threads);
/* Static int8's A, every row at the one scale sa and zero point za (no
 * per-row arrays to fill and compare): qgemm_u8_rows's rows (rows not
 * NULL) or q's (rows kp apart, as qgemm_u8's), into float c (y NULL) or
 * uint8 y. The same results as those functions given sa and za for every
 * row. false, and nothing done, when rows' runs do not split kp in quads. */
bool qgemm_u8_uni(const qg_packed *b, const uint8_t *q, const qg_rows *rows, float sa, int32_t za,
                  int64_t m, float *c, int64_t ldc, uint8_t *y, int64_t ldy, float ys, int32_t yz,
                  const gemm_epi *epi, int threads);

/* QG_INT8DQ's GEMM on activations quantised already (b packed int8dq):
 * row i of A is q[i*ldq ..] (k of them; uint8, or int8 when a_signed), all
 * rows with scale sa and zero point za. C = sa * scale[j] * the exact
 * int32 sum of (qa - za) * (b - zb) (qg_pack_q8's b), converted to float
 * as a Cast does, then the epilogue. */
ait_status qgemm_q8(const qg_packed *b, const void *q, bool a_signed, int64_t ldq, int64_t m,
                    float sa, int32_t za, float *c, int64_t ldc, const gemm_epi *epi, int threads,
                    ait_error *e);

/* The kernel qgemm picks for the scheme now ("avx512-bf16", "portable",
 * ...), and the core/cpu.h features it needs. */
const char *qg_kernel_name(int scheme);

/* DynamicQuantizeLinear (ONNX): x[n] to uint8 y over [min(x, 0),
 * max(x, 0)], scale = (max - min) / 255 (computed in double, rounded to
 * float), zero point = saturate(rint(-min / scale)), y = saturate(rint(x /
 * scale) + zero point); NaN skipped by the range and quantised to 0. The
 * reference op's arithmetic, bit for bit. */
void qg_dynq_u8(const float *x, int64_t n, uint8_t *y, float *scale, uint8_t *zp);

/* Static quantisation at a fixed scale and zero point (QuantizeLinear's
 * arithmetic to uint8, bit for bit): q[i] = saturate(rint(a[i] / scale) +
 * zp), NaN to 0. */
void qg_quant_u8(const float *a, int64_t n, float scale, int32_t zp, uint8_t *q);
/* The same times 1 / scale (a multiply, not a divide: several times faster,
 * and within one step of QuantizeLinear where x / scale falls within an ulp
 * of a half): the requantisation of activations handed from one int8
 * kernel to the next, not a QuantizeLinear node's. */
void qg_requant_u8(const float *a, int64_t n, float scale, int32_t zp, uint8_t *q);
/* DequantizeLinear of uint8 at a fixed scale and zero point: y[i] =
 * (q[i] - zp) * scale. */
void qg_dequant_u8(const uint8_t *q, int64_t n, float scale, int32_t zp, float *y);
/* The uint8 scale and zero point of range [lo, hi] (lo <= 0 <= hi), the
 * ones QG_INT8DQ's rows take: scale (hi - lo) / 255 (1 for an empty
 * range), zp = rint(-lo / scale) in [0, 255]. */
void qg_u8_range(float lo, float hi, float *scale, int32_t *zp);

/* The activation quantisation of QG_INT8DQ, exported for tests: row a[k]
 * to q[k] in 0..255, with *scale and *zp (a times 1 / scale, as
 * qg_requant_u8: within one step of a division where a / scale is within an
 * ulp of a half). */
void qg_quant_row_u8(const float *a, int64_t k, uint8_t *q, float *scale, int32_t *zp);

#endif

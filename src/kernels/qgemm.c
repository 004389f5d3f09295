/* Quantised GEMM (qgemm.h): packing, the driver (activation conversion,
 * panels over threads, the epilogue) and the portable kernels. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu.h"
#include "core/half.h"
#include "core/tensor.h"
#include "kernels/gemm_kern.h"
#include "kernels/prefetch.h"
#include "kernels/qgemm_kern.h"

/* aitqgem3: int4wo's panels in blocks of 8 k (quads of nibbles for
 * VNNI), its scales and zero points panel by panel, and the header's a8.
 * aitqgem2 put int8dq in column groups of QG_GP panels. The other schemes'
 * layouts are aitqgem1's, which still load; an aitqgem1 int8dq blob (one
 * panel at a time) and an older int4wo blob (pairs of k) are refused, with
 * a message to re-tune. */
#define MAGIC "aitqgem3"
#define MAGIC2 "aitqgem2"
#define MAGIC1 "aitqgem1"
#define HDR 64

typedef struct qhdr {
    char magic[8];
    int32_t scheme, group;
    int64_t k, n;
    int32_t a8; /* aitqgem3, int4wo: qg_packed.a8 */
} qhdr;
_Static_assert(sizeof(qhdr) <= HDR, "header fits");

static const char *const names[QG_N] = {"bf16", "int8dq", "int8wo", "int4wo", "fp16"};
/* Bytes of one panel per k (QG_NR columns), and the k step, per scheme. */
static const int kbytes[QG_N] = {32, 16, 16, 8, 32};
static const int kstep[QG_N] = {2, 4, 1, 2, 1};

const char *qg_scheme_name(int s) { return s >= 0 && s < QG_N ? names[s] : NULL; }

int qg_scheme_find(const char *name, int *group)
{
    *group = 32;
    if (!name) return -1;
    for (int s = 0; s < QG_N; s++)
        if (strcmp(name, names[s]) == 0) return s;
    if (strcmp(name, "int8") == 0) return QG_INT8DQ; /* static activations, same packing */
    if (strcmp(name, "int4wo-64") == 0) return *group = 64, QG_INT4WO;
    if (strcmp(name, "int4wo-128") == 0) return *group = 128, QG_INT4WO;
    return -1;
}

static size_t up64(size_t x) { return (x + 63) & ~(size_t)63; }

/* The sections' sizes: panels, scales, zeros, column sums; 0 on overflow.
 * a8: int4wo's of ait's own quantisation (qg_packed.a8), its scales bfloat16. */
static bool layout(int scheme, int group, int64_t k, int64_t n, bool a8, qg_packed *v,
                   size_t sec[4])
{
    if (scheme < 0 || scheme >= QG_N || k <= 0 || n <= 0 || k > (INT64_C(1) << 40) ||
        n > (INT64_C(1) << 40))
        return false;
    if (scheme == QG_INT4WO && group != 32 && group != 64 && group != 128) return false;
    int step = scheme == QG_INT4WO ? group : kstep[scheme];
    v->scheme = scheme;
    v->group = scheme == QG_INT4WO ? group : 0;
    v->a8 = scheme == QG_INT4WO && a8;
    v->k = k;
    v->n = n;
    v->kp = (k + step - 1) / step * step;
    v->np = (n + QG_NR - 1) / QG_NR * QG_NR;
    size_t w;
    if (__builtin_mul_overflow((size_t)v->kp, (size_t)(v->np / QG_NR * kbytes[scheme]), &w))
        return false;
    size_t ng = scheme == QG_INT4WO ? (size_t)(v->kp / group) : 1;
    sec[0] = up64(w);
    sec[1] = scheme == QG_BF16 || scheme == QG_FP16WO ? 0
             : up64(ng * (size_t)v->np * (v->a8 ? sizeof(uint16_t) : sizeof(float)));
    sec[2] = scheme == QG_INT4WO ? up64(ng * (size_t)v->np) : 0; /* zero points, bytes */
    sec[3] = scheme == QG_INT8DQ ? up64((size_t)v->np * sizeof(int32_t)) : 0;
    return sec[0] < ((size_t)1 << 50);
}

size_t qg_pack_size(int scheme, int group, int64_t k, int64_t n)
{
    qg_packed v;
    size_t sec[4];
    if (!layout(scheme, group, k, n, scheme == QG_INT4WO, &v, sec)) return 0;
    return HDR + sec[0] + sec[1] + sec[2] + sec[3];
}

size_t qg_pack_q4_size(int group, int64_t k, int64_t n)
{
    qg_packed v;
    size_t sec[4];
    if (!layout(QG_INT4WO, group, k, n, false, &v, sec)) return 0;
    return HDR + sec[0] + sec[1] + sec[2] + sec[3];
}

static void view_of(void *buf, const size_t sec[4], qg_packed *v)
{
    uint8_t *p = (uint8_t *)buf + HDR;
    v->w = p;
    v->scale = sec[1] && !v->a8 ? (const float *)(p + sec[0]) : NULL;
    v->sbf = sec[1] && v->a8 ? (const uint16_t *)(p + sec[0]) : NULL;
    v->zero = sec[2] ? p + sec[0] + sec[1] : NULL;
    v->colsum = sec[3] ? (const int32_t *)(p + sec[0] + sec[1] + sec[2]) : NULL;
}

ait_status qg_view(const void *buf, size_t size, qg_packed *out, ait_error *e)
{
    qhdr h;
    size_t sec[4];
    if (size < HDR) return err_set(e, AIT_E_INVALID_ARG, "quantised weights: too short");
    memcpy(&h, buf, sizeof h);
    bool v1 = memcmp(h.magic, MAGIC1, 8) == 0, v2 = memcmp(h.magic, MAGIC2, 8) == 0;
    if (memcmp(h.magic, MAGIC, 8) != 0 && !v1 && !v2)
        return err_set(e, AIT_E_INVALID_ARG, "quantised weights: bad magic");
    if (v1 && h.scheme == QG_INT8DQ)
        return err_set(e, AIT_E_INVALID_ARG,
                       "quantised weights: int8dq weights packed by an older ait (%s, one "
                       "panel at a time; now %s, in column groups): re-tune the model",
                       MAGIC1, MAGIC);
    if ((v1 || v2) && h.scheme == QG_INT4WO)
        return err_set(e, AIT_E_INVALID_ARG,
                       "quantised weights: int4wo weights packed by an older ait (%s, pairs of "
                       "k; now %s, blocks of 8 k for VNNI): re-tune the model",
                       v1 ? MAGIC1 : MAGIC2, MAGIC);
    if (!layout(h.scheme, h.group, h.k, h.n, !v1 && !v2 && h.a8, out, sec))
        return err_set(e, AIT_E_INVALID_ARG, "quantised weights: bad header");
    if (size != HDR + sec[0] + sec[1] + sec[2] + sec[3])
        return err_set(e, AIT_E_INVALID_ARG, "quantised weights: %zu bytes, the header says %zu",
                       size, HDR + sec[0] + sec[1] + sec[2] + sec[3]);
    view_of((void *)buf, sec, out);
    return AIT_OK;
}

/* Round to nearest, ties to even (the default rounding mode), as int. */
static int32_t rne(float x) { return (int32_t)nearbyintf(x); }

/* Where B[p][j] lies in an int8 pack's panels: int8dq has quads of k per
 * column, the group's panels side by side per quad (qg_group); int8wo one
 * k's 16 columns. */
static size_t int8_at(const qg_packed *v, int64_t p, int64_t j)
{
    size_t jj = (size_t)(j % QG_NR);
    if (v->scheme == QG_INT8DQ) {
        int64_t g = j / (QG_NR * QG_GP), s = j / QG_NR % QG_GP;
        size_t at = (size_t)((p / 4) * qg_group_w(v, g) + s) * 64 + (size_t)(p % 4) + jj * 4;
        return (size_t)(g * QG_GP * v->kp * 16) + at;
    }
    return (size_t)((j / QG_NR) * v->kp * 16) + (size_t)(p * 16) + jj;
}

static void pack_int8(const qg_packed *v, const float *b, int64_t rsb, int64_t csb, uint8_t *w,
                      float *scale, int32_t *colsum)
{
    int64_t k = v->k;
    for (int64_t j = 0; j < v->n; j++) {
        float mx = 0;
        for (int64_t p = 0; p < k; p++) mx = fmaxf(mx, fabsf(b[p * rsb + j * csb]));
        float s = mx > 0 && isfinite(mx) ? mx / 127.0f : 1.0f;
        scale[j] = s;
        int32_t sum = 0;
        for (int64_t p = 0; p < k; p++) {
            int32_t q = rne(b[p * rsb + j * csb] / s);
            q = q > 127 ? 127 : q < -127 ? -127 : q;
            sum += q;
            w[int8_at(v, p, j)] = (uint8_t)(int8_t)q;
        }
        if (colsum) colsum[j] = sum;
    }
}

/* The least bfloat16 at or above x > 0 (finite: x's truncation past the largest). */
static uint16_t bf16_up(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    uint32_t r = (u & 0xffff) && (u >> 16) + 1 < 0x7f80 ? (u >> 16) + 1 : u >> 16;
    return (uint16_t)r;
}

static void pack_int4(const qg_packed *v, const float *b, int64_t rsb, int64_t csb, uint8_t *w,
                      float *scale, uint16_t *sbf, uint8_t *zero)
{
    int64_t G = v->group;
    for (int64_t j = 0; j < v->n; j++) {
        uint8_t *col = w + (j / QG_NR) * v->kp * 8;
        int jj = (int)(j % QG_NR);
        for (int64_t g0 = 0; g0 < v->k; g0 += G) {
            size_t at = qg_q4_at(v, j / QG_NR, g0 / G) + (size_t)jj;
            int64_t g1 = g0 + G < v->k ? g0 + G : v->k;
            float lo = 0, hi = 0; /* the range holds 0: zero stays exact */
            for (int64_t p = g0; p < g1; p++) {
                float x = b[p * rsb + j * csb];
                lo = fminf(lo, x);
                hi = fmaxf(hi, x);
            }
            float s = hi > lo && isfinite(hi - lo) ? (hi - lo) / 15.0f : 1.0f;
            if (sbf) { /* bfloat16, rounded up (no weight past the 16 steps), and used so */
                sbf[at] = bf16_up(s);
                s = bf16_to_f32(sbf[at]);
            } else {
                scale[at] = s;
            }
            int32_t z = rne(-lo / s);
            z = z < 0 ? 0 : z > 15 ? 15 : z;
            zero[at] = (uint8_t)z;
            for (int64_t p = g0; p < g1; p++) {
                int32_t q = rne(b[p * rsb + j * csb] / s) + z;
                q = q < 0 ? 0 : q > 15 ? 15 : q;
                col[qg_q4_byte(p, jj)] |= (uint8_t)(q << qg_q4_shift(p));
            }
        }
    }
}

bool qg_pack_begin(int scheme, int group, int64_t k, int64_t n, void *dst, qg_packed *v)
{
    size_t sec[4];
    if (!layout(scheme, group, k, n, scheme == QG_INT4WO, v, sec)) return false;
    /* int4wo packed here is ait's own quantisation, the tuner's to judge: A to int8 too */
    qhdr h = {.scheme = scheme, .group = v->group, .k = k, .n = n, .a8 = scheme == QG_INT4WO};
    memcpy(h.magic, MAGIC, 8);
    memset(dst, 0, HDR);
    memcpy(dst, &h, sizeof h);
    view_of(dst, sec, v);
    return true;
}

void qg_pack(int scheme, int group, const float *b, int64_t rsb, int64_t csb, int64_t k,
             int64_t n, void *dst)
{
    qg_packed v;
    if (!qg_pack_begin(scheme, group, k, n, dst, &v)) return;
    uint8_t *w = (uint8_t *)v.w;
    if (scheme == QG_BF16) {
        uint16_t *d = (uint16_t *)w;
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++)
                d[(j / QG_NR) * v.kp * 16 + (p / 2) * 32 + (j % QG_NR) * 2 + p % 2] =
                    f32_to_bf16(b[p * rsb + j * csb]);
    } else if (scheme == QG_FP16WO) {
        qg_pack_f16(&v, b, rsb, csb, (uint16_t *)w);
    } else if (scheme == QG_INT4WO) {
        pack_int4(&v, b, rsb, csb, w, (float *)v.scale, (uint16_t *)v.sbf, (uint8_t *)v.zero);
    } else {
        pack_int8(&v, b, rsb, csb, w, (float *)v.scale, (int32_t *)v.colsum);
    }
}

bool qg_pack_q8(int scheme, const void *b, bool b_unsigned, int64_t rsb, int64_t csb, int64_t k,
                int64_t n, const int32_t *zb, const float *scale, void *dst)
{
    qg_packed v;
    size_t sec[4];
    if ((scheme != QG_INT8DQ && scheme != QG_INT8WO) || !layout(scheme, 0, k, n, false, &v, sec))
        return false;
    for (int64_t j = 0; j < n; j++)
        for (int64_t p = 0; p < k; p++) {
            int64_t at = p * rsb + j * csb;
            int32_t q = (b_unsigned ? ((const uint8_t *)b)[at] : ((const int8_t *)b)[at]) - zb[j];
            if (q < -128 || q > 127) return false;
        }
    if (!dst) return true;
    qhdr h = {.scheme = scheme, .k = k, .n = n};
    memcpy(h.magic, MAGIC, 8);
    memcpy(dst, &h, sizeof h);
    view_of(dst, sec, &v);
    uint8_t *w = (uint8_t *)v.w;
    for (int64_t j = 0; j < n; j++) {
        int32_t sum = 0;
        for (int64_t p = 0; p < k; p++) {
            int64_t at = p * rsb + j * csb;
            int32_t q = (b_unsigned ? ((const uint8_t *)b)[at] : ((const int8_t *)b)[at]) - zb[j];
            sum += q;
            w[int8_at(&v, p, j)] = (uint8_t)(int8_t)q;
        }
        ((float *)v.scale)[j] = scale[j];
        if (v.colsum) ((int32_t *)v.colsum)[j] = sum;
    }
    return true;
}

void qg_pack_q4(const void *b, bool b_signed, int64_t rsb, int64_t csb, int64_t k, int64_t n,
                int group, const float *scale, const float *zero, void *dst)
{
    qg_packed v;
    size_t sec[4];
    if (!layout(QG_INT4WO, group, k, n, false, &v, sec)) return;
    qhdr h = {.scheme = QG_INT4WO, .group = group, .k = k, .n = n};
    memcpy(h.magic, MAGIC, 8);
    memcpy(dst, &h, sizeof h);
    view_of(dst, sec, &v);
    uint8_t *w = (uint8_t *)v.w;
    int shift = b_signed ? 8 : 0;
    for (int64_t j = 0; j < n; j++) {
        uint8_t *col = w + (j / QG_NR) * v.kp * 8;
        int jj = (int)(j % QG_NR);
        for (int64_t p = 0; p < k; p++) {
            int64_t at = p * rsb + j * csb;
            int q = (b_signed ? ((const int8_t *)b)[at] : ((const uint8_t *)b)[at]) + shift;
            col[qg_q4_byte(p, jj)] |= (uint8_t)((q & 15) << qg_q4_shift(p));
        }
        for (int64_t g = 0; g < (k + group - 1) / group; g++) {
            size_t at = qg_q4_at(&v, j / QG_NR, g) + (size_t)jj;
            ((float *)v.scale)[at] = scale[g * n + j];
            int32_t z = rne(zero[g * n + j]) + shift;
            ((uint8_t *)v.zero)[at] = (uint8_t)(z < 0 ? 0 : z > 255 ? 255 : z);
        }
    }
}

/* The two passes every activation quantiser makes over x: its range
 * (widening [*lo, *hi]; a NaN is skipped) and x / s rounded to nearest even
 * plus z, saturated to [0, 255] in float (NaN and -inf: 0, +inf: 255). The
 * AVX-512 ones make the same bytes. */
static void minmax_c(const float *x, int64_t n, float *lo, float *hi)
{
    for (int64_t i = 0; i < n; i++) {
        *lo = x[i] < *lo ? x[i] : *lo;
        *hi = x[i] > *hi ? x[i] : *hi;
    }
}

static inline void quant_body_c(const float *x, int64_t n, float s, float z, uint8_t *y, bool div)
{
    for (int64_t i = 0; i < n; i++) {
        float q = rintf(div ? x[i] / s : x[i] * s) + z;
        y[i] = (uint8_t)(q >= 255 ? 255 : q > 0 ? (int32_t)q : 0); /* NaN: 0 */
    }
}

static void quant_c(const float *x, int64_t n, float s, float z, uint8_t *y)
{
    quant_body_c(x, n, s, z, y, true);
}

static void requant_c(const float *x, int64_t n, float r, float z, uint8_t *y)
{
    quant_body_c(x, n, r, z, y, false);
}

/* (q - z) * s: an exact int32 difference, exact in float, one rounded
 * product (the vector ones make the same floats) */
static void dequant_c(const uint8_t *q, int64_t n, float s, int32_t z, float *y)
{
    for (int64_t i = 0; i < n; i++) y[i] = (float)((int32_t)q[i] - z) * s;
}

/* int4wo's a8 rows (qg_quantiser.grp8): per group, the scale max|x| / 127
 * (NaN when the group holds a NaN or an infinity: its sums are then NaN)
 * and q = rint(x * (127 / max|x|)), both one rounding, as the vector ones;
 * the sum of q as a float (exact: |sum| <= 127 * 128) */
static void grp8_c(const float *x, int64_t n, int64_t g, int8_t *q, float *s, float *sum)
{
    for (int64_t g0 = 0, i = 0; g0 < n; g0 += g, i++) {
        int64_t g1 = g0 + g < n ? g0 + g : n;
        float mx = 0;
        bool bad = false;
        for (int64_t p = g0; p < g1; p++) {
            float v = fabsf(x[p]);
            bad |= !(v <= 3.40282347e38f);
            mx = v > mx ? v : mx;
        }
        float r = mx > 0 && !bad ? 127.0f / mx : 0;
        int32_t t = 0;
        for (int64_t p = g0; p < g1; p++) {
            int32_t v = bad ? 0 : (int32_t)nearbyintf(x[p] * r);
            q[p] = (int8_t)v;
            t += v;
        }
        for (int64_t p = g1; p < g0 + g; p++) q[p] = 0;
        s[i] = bad ? NAN : mx / 127.0f;
        sum[i] = (float)t;
    }
}

/* The quantiser of the best ISA this CPU runs under kisa_force's cap. */
static const qg_quantiser *quantiser(void)
{
    static const qg_quantiser c = {KISA_PORTABLE, minmax_c, quant_c, requant_c, dequant_c, grp8_c};
    kisa k = kisa_active();
    if (KISA_X86 && k >= KISA_AVX512) return &qg_avx512_quantiser;
    if (KISA_X86 && k >= KISA_AVX2) return &qg_avx2_quantiser;
    return &c;
}

/* qg_requant_u8 with the reciprocal r given. */
static void requant_row(const float *a, int64_t n, float r, float z, uint8_t *q)
{
    quantiser()->requant(a, n, r, z, q);
}

void qg_quant_row_u8(const float *a, int64_t k, uint8_t *q, float *scale, int32_t *zp)
{
    const qg_quantiser *qz = quantiser();
    float lo = 0, hi = 0; /* the range holds 0, so zero (padding) is exact */
    qz->minmax(a, k, &lo, &hi);
    float s;
    int32_t z;
    qg_u8_params(lo, hi, &s, &z);
    qz->requant(a, k, 1.0f / s, (float)z, q); /* times 1 / s: a divide is several times slower */
    *scale = s;
    *zp = z;
}

void qg_u8_range(float lo, float hi, float *scale, int32_t *zp) { qg_u8_params(lo, hi, scale, zp); }

void qg_quant_u8(const float *a, int64_t n, float scale, int32_t zp, uint8_t *q)
{
    quantiser()->quant(a, n, scale, (float)zp, q);
}

void qg_requant_u8(const float *a, int64_t n, float scale, int32_t zp, uint8_t *q)
{
    requant_row(a, n, 1.0f / scale, (float)zp, q);
}

void qg_dequant_u8(const uint8_t *q, int64_t n, float scale, int32_t zp, float *y)
{
    quantiser()->dequant(q, n, scale, zp, y);
}

void qg_dynq_u8(const float *x, int64_t n, uint8_t *y, float *scale, uint8_t *zp)
{
    const qg_quantiser *qz = quantiser();
    float lo = 0, hi = 0;
    qz->minmax(x, n, &lo, &hi);
    float s = (float)((double)(hi - lo) / 255.0);
    float r = s == 0 ? 0 : rintf(0 - lo / s);
    int32_t z = r > 255 ? 255 : r > 0 ? (int32_t)r : 0; /* NaN: 0 */
    *scale = s;
    *zp = (uint8_t)z;
    if (s == 0)
        memset(y, z, (size_t)n);
    else
        qz->quant(x, n, s, (float)z, y);
}

/* ---- portable kernels ----------------------------------------------------------- */

static void c_bf16(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p, float *t)
{
    const uint16_t *w = (const uint16_t *)qg_panel(b, p, 32);
    for (int i = 0; i < mr; i++) {
        const uint16_t *a = x->h + (size_t)(i0 + i) * b->kp;
        float acc[QG_NR] = {0};
        /* as vdpbf16ps: the odd product, then the even one (exact products) */
        for (int64_t kk = 0; kk < b->kp / 2; kk++) {
            float a0 = bf16_to_f32(a[2 * kk]), a1 = bf16_to_f32(a[2 * kk + 1]);
            float w0[QG_NR], w1[QG_NR];
            for (int j = 0; j < QG_NR; j++) {
                w0[j] = bf16_to_f32(w[kk * 32 + 2 * j]);
                w1[j] = bf16_to_f32(w[kk * 32 + 2 * j + 1]);
            }
            for (int j = 0; j < QG_NR; j++) acc[j] = (acc[j] + a1 * w1[j]) + a0 * w0[j];
        }
        for (int j = 0; j < QG_NR; j++) t[i * QG_NR + j] = acc[j];
    }
}

static void c_int8dq(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int nt, int64_t g,
                     int s0, int np, float *c, int64_t ldc, const gemm_epi *in)
{
    mr *= nt; /* one tile of them all: no constants to keep */
    const int gw = qg_group_w(b, g);
    const int64_t j0 = (g * QG_GP + s0) * QG_NR;
    const int nr = b->n - j0 < np * QG_NR ? (int)(b->n - j0) : np * QG_NR;
    for (int i = 0; i < mr; i++) {
        for (int j = 0; j < nr; j++) {
            const int8_t *w = (const int8_t *)qg_group(b, g) + (s0 + j / QG_NR) * 64 + 4 * (j % QG_NR);
            int32_t acc = 0;
            for (int64_t kq = 0; kq < b->kp / 4; kq++) {
                const uint8_t *a = (const uint8_t *)(qg_arow(b, x, i0 + i, kq / qg_run(b, x) *
                                                     qg_run(b, x)) + kq % qg_run(b, x));
                for (int u = 0; u < 4; u++) acc += (int32_t)a[u] * w[kq * gw * 64 + u];
            }
            acc -= qg_row_za(x, i0 + i) * b->colsum[j0 + j];
            c[i * ldc + j] = (float)acc * (qg_row_sa(x, i0 + i) * b->scale[j0 + j]);
        }
    }
    if (in) gemm_epi_tile(in, c, ldc, i0, j0, mr, nr);
}

static void c_int8wo(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p, float *t)
{
    const int8_t *w = (const int8_t *)qg_panel(b, p, 16);
    for (int i = 0; i < mr; i++) {
        const float *a = x->a + (i0 + i) * x->lda;
        float acc[QG_NR] = {0};
        for (int64_t k = 0; k < b->k; k++)
            for (int j = 0; j < QG_NR; j++) acc[j] += a[k] * (float)w[k * 16 + j];
        for (int j = 0; j < QG_NR; j++) t[i * QG_NR + j] = acc[j] * b->scale[p * QG_NR + j];
    }
}

/* int4wo, both ways (qgemm.h); a8's floats those of the vector kernels:
 * per group, (float)(sum qa*q) - z * (float)(sum qa) (exact: small
 * integers), times s * sa rounded once, added by one fused step. */
static void c_int4wo(const qg_packed *b, const qg_act *x, int64_t i0, int mr, int64_t p, float *t)
{
    const uint8_t *w = qg_panel(b, p, 8);
    int64_t G = b->group, ng = b->kp / G;
    for (int i = 0; i < mr; i++) {
        const float *a = x->a + (i0 + i) * x->lda;
        const int8_t *qa = b->a8 ? x->q4a + (size_t)(i0 + i) * (size_t)b->kp : NULL;
        float out[QG_NR] = {0};
        for (int64_t g = 0; g < ng; g++) {
            const size_t at = qg_q4_at(b, p, g);
            if (b->a8) {
                int32_t acc[QG_NR] = {0};
                for (int64_t k = g * G; k < (g + 1) * G; k++) /* 0 past k, both sides */
                    for (int j = 0; j < QG_NR; j++)
                        acc[j] += qa[k] * ((w[qg_q4_byte(k, j)] >> qg_q4_shift(k)) & 15);
                const float sa = x->q4s[(i0 + i) * ng + g], na = x->q4n[(i0 + i) * ng + g];
                for (int j = 0; j < QG_NR; j++)
                    out[j] = fmaf(bf16_to_f32(b->sbf[at + j]) * sa, fmaf(-(float)b->zero[at + j], na, (float)acc[j]),
                                  out[j]);
                continue;
            }
            float acc[QG_NR] = {0};
            int64_t k1 = (g + 1) * G < b->k ? (g + 1) * G : b->k;
            for (int64_t k = g * G; k < k1; k++)
                for (int j = 0; j < QG_NR; j++)
                    acc[j] += a[k] * (float)((w[qg_q4_byte(k, j)] >> qg_q4_shift(k)) & 15);
            float gs = x->gsum[(i0 + i) * ng + g];
            for (int j = 0; j < QG_NR; j++)
                out[j] += b->scale[at + j] * (acc[j] - (float)b->zero[at + j] * gs);
        }
        for (int j = 0; j < QG_NR; j++) t[i * QG_NR + j] = out[j];
    }
}

/* Per scheme, best first; the portable row last. */
static const qg_kern c_rows[QG_N] = {
    {KISA_PORTABLE, "", "portable", 4, c_bf16},
    {KISA_PORTABLE, "", "portable", 4, NULL, c_int8dq, {0, 4, 4, 4, 4}},
    {KISA_PORTABLE, "", "portable", 4, c_int8wo},
    {KISA_PORTABLE, "", "portable", 4, c_int4wo},
    {KISA_PORTABLE, "", "portable", 4, qg_c_fp16wo},
};
static const qg_kern *const x86_rows[QG_N] = {&qg_avx512_bf16, &qg_avx512_int8dq,
                                              &qg_avx512_int8wo, &qg_avx512_int4wo,
                                              &qg_avx512_fp16wo};

/* Whether this CPU has the x86 row's extra features: asked once (CPUID traps
 * in a VM and costs ~0.15 ms for the whole table: more than a small GEMM). */
static bool has_needs(int scheme)
{
    static int known[QG_N]; /* 0 unknown, 1 no, 2 yes */
    int v = __atomic_load_n(&known[scheme], __ATOMIC_RELAXED);
    if (!v) {
        v = cpu_has_all(x86_rows[scheme]->needs, NULL, 0) ? 2 : 1;
        __atomic_store_n(&known[scheme], v, __ATOMIC_RELAXED);
    }
    return v == 2;
}

static const qg_kern *pick(int scheme)
{
    const qg_kern *k = x86_rows[scheme];
    if (KISA_X86 && (k->fn || k->fn8) && kisa_active() >= k->isa && has_needs(scheme)) return k;
    if (KISA_X86 && scheme == QG_INT8DQ && kisa_active() >= KISA_AVX2) return &qg_avx2_int8dq;
    if (KISA_X86 && scheme == QG_FP16WO && kisa_active() >= KISA_AVX2 && qg_has_f16c())
        return &qg_avx2_fp16wo;
    return &c_rows[scheme];
}

const char *qg_kernel_name(int scheme)
{
    return scheme >= 0 && scheme < QG_N ? pick(scheme)->name : "?";
}

/* ---- the driver ----------------------------------------------------------------- */

size_t qgemm_scratch(int scheme, int group, int64_t k, int64_t m)
{
    qg_packed v;
    size_t sec[4], rows = (size_t)m, bytes = 0, per;
    if (m <= 0 || !layout(scheme, group, k, 1, false, &v, sec)) return 0;
    size_t kp = (size_t)v.kp, ng = v.group ? (size_t)(v.kp / v.group) : 0;
    /* int4wo: float A's group sums, or a8's int8 rows, scales and sums */
    per = scheme == QG_BF16 ? kp * 2 : scheme == QG_INT8DQ ? kp : scheme == QG_INT4WO ? kp + ng * 8 : 0;
    if (scheme == QG_BF16) rows += QG_MRB - 1; /* the last tile's rows past m (qg_act.hb) */
    if (__builtin_mul_overflow(rows, per, &bytes) || bytes > ((size_t)1 << 50)) return 0;
    if (scheme == QG_INT8DQ) bytes = up64(bytes) + rows * 8; /* scales, zero points */
    return bytes ? up64(bytes) + 64 : 0;
}

/* Whether bf16 on kernel kr takes its compute-bound tiles (A in hb's
 * layout) at m rows: past QG_BF16_PANEL_M. Its blocks of rows (mc, 336
 * here) stream B once too, and with the next panels prefetched faster
 * than the panels' path, whose 12-row tiles of a panel run at a quarter
 * of the peak: at 4096 x 4096 (bench/RESULTS.md, branch bf) M 4 0.97
 * against 1.41 ms, M 8 0.99 against 1.70, M 16 1.86 against 4.14; M 2
 * and small B (4 x 768 x 768) level. M 1 (a decode step) keeps the
 * panels: B streamed at memory bandwidth, no 12-row tile for one row. */
#define QG_BF16_PANEL_M 2
static bool bf16_tiled(const qg_kern *kr, int64_t m)
{
    return kr->fnb && m > QG_BF16_PANEL_M;
}

static bool bf16_by_block(const qg_kern *kr, const qg_packed *b, int64_t m, int threads,
                          size_t bytes);

/* A's rows converted as the scheme's kernels (kr) read them, in ws (or a
 * buffer made here, *own). */
static ait_status act_make(const qg_kern *kr, const qg_packed *b, const float *a, int64_t lda,
                           int64_t m, int threads, qg_act *x, void *ws, void **own, ait_error *e)
{
    *x = (qg_act){.a = a, .lda = lda};
    *own = NULL;
    size_t rows = (size_t)m, kp = (size_t)b->kp, bytes = qgemm_scratch(b->scheme, b->group, b->k, m);
    int64_t ng = b->group ? b->kp / b->group : 0;
    if (b->scheme == QG_INT8WO || b->scheme == QG_FP16WO) return AIT_OK;
    if (!bytes) return err_set(e, AIT_E_OVERFLOW, "quantised activations are too large");
    if (!ws) ws = *own = aligned_zalloc(bytes);
    if (!ws) return err_set(e, AIT_E_NOMEM, "out of memory for quantised activations");
    if (b->scheme == QG_BF16) {
        uint16_t *h = ws;
        if (bf16_tiled(kr, m) && bf16_by_block(kr, b, m, threads, bytes)) {
            x->hw = (uint32_t *)h;
        } else if (bf16_tiled(kr, m)) {
            kr->cvt(a, lda, m, b->k, b->kp, kr->mrb, h);
            x->hb = (const uint32_t *)h;
        } else if (kr->cvt) {
            kr->cvt(a, lda, m, b->k, b->kp, 0, h);
            x->h = h;
        } else {
            for (int64_t i = 0; i < m; i++) {
                for (int64_t k = 0; k < b->k; k++)
                    h[(size_t)i * kp + k] = f32_to_bf16(a[i * lda + k]);
                for (size_t k = (size_t)b->k; k < kp; k++) h[(size_t)i * kp + k] = 0;
            }
            x->h = h;
        }
    } else if (b->scheme == QG_INT8DQ) {
        uint8_t *q;
        float *sa;
        int32_t *za;
        qg_quant_rows_u8(a, lda, m, b->k, NULL, NULL, ws, &q, &sa, &za);
        x->q = q;
        x->sa = sa;
        x->za = za;
    } else if (b->a8) { /* rows kp apart, then the scales and sums (kp a multiple of 32) */
        int8_t *q = ws;
        float *s = (float *)(q + rows * kp);
        float *n = s + rows * (size_t)ng;
        const qg_quantiser *qz = quantiser();
        for (int64_t i = 0; i < m; i++)
            (qz->grp8 ? qz->grp8 : grp8_c)(a + i * lda, b->k, b->group, q + (size_t)i * kp,
                                           s + i * ng, n + i * ng);
        x->q4a = q;
        x->q4s = s;
        x->q4n = n;
    } else {
        float *gs = ws;
        memset(gs, 0, rows * (size_t)ng * sizeof(float));
        for (int64_t i = 0; i < m; i++)
            for (int64_t k = 0; k < b->k; k++) gs[i * ng + k / b->group] += a[i * lda + k];
        x->gsum = gs;
    }
    return AIT_OK;
}

void qg_quant_rows_u8(const float *a, int64_t lda, int64_t m, int64_t k, const float *lo,
                      const float *hi, void *ws, uint8_t **q, float **sa, int32_t **za)
{
    const size_t rows = (size_t)m, kp = (size_t)(k + 3) / 4 * 4;
    uint8_t *qq = ws;
    float *s = (float *)(qq + up64(rows * kp));
    int32_t *z = (int32_t *)(s + rows);
    for (int64_t i = 0; i < m; i++) {
        if (lo) { /* the range given: qg_quant_row_u8 without its first pass */
            const float *pl = lo + i * GEMM_RANGE_LANES, *ph = hi + i * GEMM_RANGE_LANES;
            float l = 0, h = 0;
            for (int j = 0; j < GEMM_RANGE_LANES; j++) {
                l = pl[j] < l ? pl[j] : l;
                h = ph[j] > h ? ph[j] : h;
            }
            qg_u8_params(l, h, &s[i], &z[i]);
            requant_row(a + i * lda, k, 1.0f / s[i], (float)z[i], qq + (size_t)i * kp);
        } else {
            qg_quant_row_u8(a + i * lda, k, qq + (size_t)i * kp, &s[i], &z[i]);
        }
        memset(qq + (size_t)i * kp + k, 0, kp - (size_t)k);
    }
    /* padding k: q = 0 there, against weights 0: no term */
    *q = qq;
    *sa = s;
    *za = z;
}

/* Rows of A a block takes: its quantised rows (kp bytes each) in about
 * 32 KiB, so they stay in L1 while the block's panels pass (a multiple of
 * the kernel's mr, one mr at least). */
static int64_t block_rows(const qg_kern *kr, const qg_packed *b)
{
    int64_t rows = (INT64_C(32) << 10) / (b->kp > 0 ? b->kp : 1) / kr->mr * kr->mr;
    return rows > kr->mr ? rows : kr->mr;
}

/* Panels [p0, p1) of C, a block of rows at a time (each block's rows of
 * C and of the residual are written and read once, while they are in
 * cache, not once per panel): every panel, its row tiles, the epilogue on
 * each tile. */
static void panels(const qg_kern *kr, const qg_packed *b, const qg_act *x, int64_t m, float *c,
                   int64_t ldc, const gemm_epi *epi, int64_t p0, int64_t p1)
{
    float tile[16 * QG_NR] __attribute__((aligned(64)));
    const int64_t mc = block_rows(kr, b);
    for (int64_t ib = 0; ib < m; ib += mc) {
        int64_t ie = m - ib < mc ? m : ib + mc;
        if (kr->fnc && ie - ib <= kr->mr) { /* one row tile: its panels in one call, into C */
            const int64_t j0 = p0 * QG_NR, j1 = p1 * QG_NR < b->n ? p1 * QG_NR : b->n;
            kr->fnc(b, x, ib, (int)(ie - ib), p0, p1, c + ib * ldc, ldc);
            for (int64_t j = j0; epi && j < j1; j += 1 << 20) /* nr an int */
                gemm_epi_tile(epi, c + ib * ldc + j, ldc, ib, j, (int)(ie - ib),
                              (int)(j1 - j < 1 << 20 ? j1 - j : 1 << 20));
            continue;
        }
        for (int64_t p = p0; p < p1; p++) {
            int nr = b->n - p * QG_NR < QG_NR ? (int)(b->n - p * QG_NR) : QG_NR;
            for (int64_t i0 = ib; i0 < ie; i0 += kr->mr) {
                int mr = ie - i0 < kr->mr ? (int)(ie - i0) : kr->mr;
                kr->fn(b, x, i0, mr, p, tile);
                float *cc = c + i0 * ldc + p * QG_NR;
                for (int i = 0; i < mr; i++)
                    memcpy(cc + i * ldc, tile + i * QG_NR, sizeof(float) * (size_t)nr);
                if (epi) gemm_epi_tile(epi, cc, ldc, i0, p * QG_NR, mr, nr);
            }
        }
    }
}

/* How int8dq's and bf16's drivers split C over up to `threads` threads:
 * `cols` units of columns apart first, then row tiles (`tiles` of mr rows)
 * apart when there are fewer units than threads: a grid of *tn x *tm
 * threads; false at one thread (no OpenMP region at all: entering one
 * costs ~0.2 ms here). */
typedef struct qg_grid {
    int64_t tn, tm, cols, tiles, mr, m;
} qg_grid;
static bool grid_make(int threads, int64_t cols, int64_t m, int64_t mr, qg_grid *g)
{
    const int64_t tiles = (m + mr - 1) / mr;
    int64_t t = threads > 1 ? threads : 1;
    t = t < cols * tiles ? t : cols * tiles;
    *g = (qg_grid){.tn = t < cols ? t : cols, .cols = cols, .tiles = tiles, .mr = mr, .m = m};
    g->tm = t / g->tn;
    return t > 1;
}
/* Thread id's rows [*r0, *r1) and units [*c0, *c1) of the grid of n
 * threads (all of it when n is not the grid's: fewer threads than asked,
 * id 0 does it; false for the others). */
static bool grid_part(const qg_grid *g, int64_t id, int64_t n, int64_t *r0, int64_t *r1,
                      int64_t *c0, int64_t *c1)
{
    if (n != g->tn * g->tm) {
        *r0 = *c0 = 0, *r1 = g->m, *c1 = g->cols;
        return id == 0;
    }
    const int64_t ci = id % g->tn, ri = id / g->tn, e = g->tiles * (ri + 1) / g->tm * g->mr;
    *r0 = g->tiles * ri / g->tm * g->mr;
    *r1 = e < g->m ? e : g->m;
    *c0 = g->cols * ci / g->tn;
    *c1 = g->cols * (ci + 1) / g->tn;
    return true;
}

/* bf16's blocking, kc in pairs, mc in rows (a multiple of the tile's),
 * nc in tiles of two panels. The tile reads 64 bytes of B a k (two panels
 * of 16 bf16) as a float kernel of 16 columns does: the float GEMM's rule
 * (gemm_blocking: B's kc x 64 bytes in half of L1 while A's tiles pass,
 * A's block, mc x kc, in half of L2, B's, kc x nc, in a quarter of L3) on
 * that shape; A's rows take half of a float's bytes, so its block is half
 * of what the rule allows. */
static void bf16_blocking(const qg_kern *kr, int64_t *kcp, int64_t *mc, int64_t *nct)
{
    const gemm_kernel shape = {.mr = kr->mrb, .nr = QG_NR};
    int kc, m, n;
    gemm_blocking(&shape, &kc, &m, &n);
    *kcp = kc / 2;
    *mc = m;
    *nct = n / (2 * QG_NR) > 1 ? n / (2 * QG_NR) : 1;
}

/* The pairs of A (in uint32) a thread's block of A takes, converted as
 * its K block's (kc's pairs) mc rows, at most (bf16_blocks' sizes are
 * equalised down from the rule's). */
static int64_t bf16_share(const qg_kern *kr, const qg_packed *b, int64_t m)
{
    int64_t kcp, mc, nct;
    bf16_blocking(kr, &kcp, &mc, &nct);
    const int64_t kh = b->kp / 2, rows = (m + kr->mrb - 1) / kr->mrb * kr->mrb;
    return (rows < mc ? rows : mc) * (kh < kcp ? kh : kcp);
}

/* Whether bf16's tiles at m rows on up to `threads` threads convert A a
 * block at a time (each thread its block of A in its share of the
 * workspace of `bytes`, qgemm_scratch's: while the tiles read it, the
 * block is in L2, just written, not in L3 or memory after a pass over
 * all of A: 1024^3 1.64x to 1.72x float32, bench/RESULTS.md, branch bf2),
 * or all of A first (more threads than shares the workspace holds). */
static bool bf16_by_block(const qg_kern *kr, const qg_packed *b, int64_t m, int threads,
                          size_t bytes)
{
    qg_grid g;
    const int64_t n = grid_make(threads, (b->np / QG_NR + 1) / 2, m, kr->mrb, &g) ? g.tn * g.tm : 1;
    return (uint64_t)n * (uint64_t)bf16_share(kr, b, m) * 4 <= bytes;
}

/* bf16's tiled path, BLIS's loops around kr's tile (qg_ukrb) on
 * rows [r0, r1) (r0 a multiple of the tile's rows) and tiles of two
 * panels [t0, t1): nc's tiles, K's blocks (of equal sizes: 576 pairs as
 * 2 x 288, not 512 + 64), mc's rows (as equal, in whole tiles), A's block
 * of them converted into aw (when x->hw; bf16_share's pairs), each tile
 * of panels over the block's rows while its kc x 32 columns stay in L1;
 * the partial sums in C, the epilogue on each tile after K's last block,
 * while it is in L1. */
static void bf16_blocks(const qg_kern *kr, const qg_packed *b, const qg_act *x, uint32_t *aw,
                        int64_t r0, int64_t r1, int64_t t0, int64_t t1, float *c, int64_t ldc,
                        const gemm_epi *epi)
{
    int64_t kcp, mc, nct;
    bf16_blocking(kr, &kcp, &mc, &nct);
    const int64_t kh = b->kp / 2, mrb = kr->mrb, npan = b->np / QG_NR, sb = b->kp * QG_NR;
    const int64_t nkb = (kh + kcp - 1) / kcp, nmb = (r1 - r0 + mc - 1) / mc;
    kcp = (kh + nkb - 1) / nkb;
    mc = ((r1 - r0 + nmb - 1) / nmb + mrb - 1) / mrb * mrb; /* 1024: 4 x 264, not 3 x 336 + 16 */
    const uint16_t *w = (const uint16_t *)b->w;
    for (int64_t jc = t0; jc < t1; jc += nct) {
        const int64_t je = t1 - jc < nct ? t1 : jc + nct;
        for (int64_t pc = 0; pc < kh; pc += kcp) {
            const int64_t kb = kh - pc < kcp ? kh - pc : kcp;
            const bool last = pc + kb == kh;
            for (int64_t ic = r0; ic < r1; ic += mc) {
                const int64_t ie = r1 - ic < mc ? r1 : ic + mc;
                if (aw) /* A's block: its tiles of kb pairs, rows past m 0 */
                    kr->cvt(x->a + ic * x->lda + 2 * pc, x->lda, ie - ic,
                            b->k - 2 * pc < 2 * kb ? b->k - 2 * pc : 2 * kb, 2 * kb, (int)mrb,
                            (uint16_t *)aw);
                for (int64_t jt = jc; jt < je; jt++) {
                    const int64_t j0 = jt * 2 * QG_NR;
                    const int np = npan - 2 * jt < 2 ? 1 : 2;
                    const int nr = b->n - j0 < np * QG_NR ? (int)(b->n - j0) : np * QG_NR;
                    const uint16_t *bp = w + (size_t)(2 * jt * sb + pc * 32);
                    for (int64_t i0 = ic; i0 < ie; i0 += mrb) {
                        const int mr = ie - i0 < mrb ? (int)(ie - i0) : (int)mrb;
                        float *cc = c + i0 * ldc + j0;
                        /* prefetched: the next tile's C, which it starts from (a K block
                         * after the first; the tile below, or the next panels' first);
                         * in the panels' first tile, the next panels' B, from memory or L3,
                         * which the hardware's prefetch meets late */
                        qg_pfb pf = {NULL, NULL};
                        if (pc > 0)
                            pf.cn = i0 + mrb < ie ? cc + mrb * ldc
                                    : jt + 1 < je ? c + ic * ldc + j0 + 2 * QG_NR
                                                  : NULL;
                        if (i0 == ic && jt + 1 < je && npan - 2 * (jt + 1) >= 2)
                            pf.bn = bp + 2 * sb;
                        const uint32_t *at = aw ? aw + (size_t)((i0 - ic) / mrb * kb * mrb)
                                                : x->hb + (size_t)((i0 / mrb * kh + pc) * mrb);
                        kr->fnb(kb, at, bp, sb, np, cc, ldc, mr, nr, pc > 0, &pf);
                        if (last && epi) gemm_epi_tile(epi, cc, ldc, i0, j0, mr, nr);
                    }
                }
            }
        }
    }
}

/* bf16's tiles over up to `threads` threads: tiles of panels apart, then
 * rows (whole tiles of them) apart when there are fewer than threads;
 * thread i's block of A (x->hw) at its share i. */
static void run_bf16(const qg_kern *kr, const qg_packed *b, const qg_act *x, int64_t m, float *c,
                     int64_t ldc, const gemm_epi *epi, int threads)
{
    qg_grid g;
    if (!grid_make(threads, (b->np / QG_NR + 1) / 2, m, kr->mrb, &g)) {
        bf16_blocks(kr, b, x, x->hw, 0, m, 0, g.cols, c, ldc, epi);
        return;
    }
    const int64_t share = bf16_share(kr, b, m);
#pragma omp parallel num_threads((int)(g.tn * g.tm))
    {
        int64_t r0, r1, c0, c1;
        const int id = omp_get_thread_num();
        if (grid_part(&g, id, omp_get_num_threads(), &r0, &r1, &c0, &c1))
            bf16_blocks(kr, b, x, x->hw ? x->hw + id * share : NULL, r0, r1, c0, c1, c, ldc,
                        epi);
    }
}

bool qg_epi_split(const gemm_epi *epi, gemm_epi *in, gemm_epi *out)
{
    *in = *epi;
    in->rlo = in->rhi = NULL;
    *out = (gemm_epi){.rlo = epi->rlo, .rhi = epi->rhi}; /* the rows' range: on the tile, last */
    gemm_act a = epi->act;
    if (a == GEMM_ACT_NONE || a == GEMM_ACT_RELU || a == GEMM_ACT_CLIP || a == GEMM_ACT_LEAKY)
        return epi->rlo != NULL;
    in->act = GEMM_ACT_NONE;
    out->act = a;
    out->lo = epi->lo;
    out->hi = epi->hi;
    if (epi->res && epi->res_after) {
        in->res = NULL;
        out->res = epi->res;
        out->ldr = epi->ldr;
        out->res_scale = epi->res_scale;
        out->res_after = true;
    }
    return true;
}

/* Panels per int8dq kernel call for m rows: the widest whose row count
 * takes all m rows in one pass over the weights (skinny m: weights
 * streamed once), else all QG_GP (the fewest loads per vpdpbusd). */
static int i8_panels(const qg_kern *kr, int64_t m)
{
    for (int np = QG_GP; np >= 1; np /= 2)
        if (m <= kr->mr8[np]) return np;
    return QG_GP;
}

/* Rows of a block whose quantised A (kp bytes a row) stays in L1 (about 32
 * KiB) while a group's panels pass: a multiple of mr, at least mr. */
static int64_t i8_rows_l1(const qg_packed *b, int mr)
{
    int64_t mc = (INT64_C(32) << 10) / b->kp / mr * mr;
    return mc > mr ? mc : mr;
}

/* A tile's C (float C only, for writing, and only when pc) and its residual,
 * rows [i0, i0 + rows) by columns [j0, j0 + n), a kernel call before the call
 * that stores C: bert's at batch 8 are 1 to 4 MB a GEMM, in L3, and the
 * kernel's first load of the residual took about a tenth of its samples (a
 * store to a line not in cache waits for its read for ownership too).
 * Fetched during the call before, the lines are there. */
static inline void prefetch_tile(const float *c, int64_t ldc, bool pc, const gemm_epi *in, int64_t i0,
                          int64_t j0, int rows, int n)
{
    if (pc) kprefetch_rows(c + i0 * ldc + j0, ldc, rows, n, true);
    if (in && in->res) kprefetch_rows(in->res + i0 * in->ldr + j0, in->ldr, rows, n, false);
}

/* int8dq: rows [r0, r1) by column groups [g0, g1): passes of rows whose
 * quantised A fits a third of L2, each over every group, a group's rows a
 * block at a time (about 32 KiB, in L1 while the group's panels pass);
 * the kernel writes each tile to C with the in-register
 * part of the epilogue (in), the rest (out) on the tile after. */
static void groups(const qg_kern *kr, const qg_packed *b, const qg_act *x, int64_t r0, int64_t r1,
                   float *c, int64_t ldc, const gemm_epi *in, const gemm_epi *out, int64_t g0,
                   int64_t g1)
{
    enum { TW = QG_GP * QG_NR };
    float tile[12 * TW] __attribute__((aligned(64))); /* uint8 C: a tile's floats */
    const bool y8 = x->y8 != NULL, fused = y8 && kr->y8 && !out;
    /* C prefetched for writing only when the rows' float C is larger than L2: a
     * smaller C (kwg_conv_u8's 16 GEMMs of K = C, 64 to 128 rows each) took 0.94x
     * to 0.98x the time without (bench/RESULTS.md, q8r); bert's 1 to 4 MB keep it */
    const bool pc = !y8 && (r1 - r0) * b->n > gemm_l2_bytes() / (int64_t)sizeof(float);
    qg_act xf = *x; /* not fused: the kernel writes the tile's floats */
    xf.y8 = fused ? x->y8 : NULL;
    const int np = i8_panels(kr, r1 - r0), mr = kr->mr8[np];
    int64_t mc = i8_rows_l1(b, mr);
    /* Rows per pass over the groups: their A in a third of L2, where it
     * stays while a group's weights (kp x 64 bytes, L2 too) meet every
     * row; the weights come from memory once per pass, not once per mc
     * rows (resnet18's 3x3 Convs of 512 channels: 2.4 MB of weights). */
    int64_t rb = gemm_l2_bytes() / 3 / b->kp / mc * mc;
    rb = rb > mc ? rb : mc;
    for (int64_t sb = r0; sb < r1; sb += rb) {
        int64_t se = r1 - sb < rb ? r1 : sb + rb;
        for (int64_t g = g0; g < g1; g++) {
            const int gw = qg_group_w(b, g);
            /* a group narrower than np panels (N 16 to 48, or the last group's 1 to 3) in
             * tiles of as many rows as its width allows: 12 x 1 or 12 x 2 on VNNI, half
             * the weight loads per vpdpbusd of 6 x 1 and 6 x 2 */
            const int npg = gw < np ? gw : np, mrg = kr->mr8[npg] > mr ? kr->mr8[npg] : mr;
            /* one call over the group's width: no panels for A's block to stay in L1 across,
             * the pass's rows one block */
            const int64_t mcg = npg >= gw ? se - sb : mrg == mr ? mc : i8_rows_l1(b, mrg);
            for (int64_t ib = sb; ib < se; ib += mcg) {
                int64_t ie = se - ib < mcg ? se : ib + mcg;
                /* the block's rows in as many tiles as mrg needs, of nearly equal counts
                 * (49 rows: 4 x 6 + 5 x 5, not 8 x 6 + 1: a tile of 1 row streams the
                 * group's weights for a sixth of a full tile's work) */
                const int64_t nt = (ie - ib + mrg - 1) / mrg, even = (ie - ib) / nt,
                              more = (ie - ib) % nt;
                for (int s0 = 0; s0 < gw; s0 += npg) {
                    int n2 = gw - s0 < npg ? gw - s0 : npg;
                    int64_t j0 = (g * QG_GP + s0) * QG_NR;
                    int nr = b->n - j0 < n2 * QG_NR ? (int)(b->n - j0) : n2 * QG_NR;
                    int mt = 0;
                    prefetch_tile(c, ldc, pc, in, ib, j0, (int)even + (more > 0), nr);
                    if (fused) { /* the kernel writes C's bytes: its tiles of each height in one
                                  * call (the more ones of even + 1 rows, then the rest) */
                        for (int64_t i0 = ib, t = 0; t < nt;) {
                            mt = (int)(even + (t < more));
                            const int64_t cnt = t < more ? more : nt - t;
                            xf.wcold = i0 == sb;
                            kr->fn8(b, &xf, i0, mt, (int)cnt, g, s0, n2, tile, TW, in);
                            i0 += cnt * mt;
                            t += cnt;
                        }
                        continue;
                    }
                    for (int64_t i0 = ib, t = 0; i0 < ie; i0 += mt, t++) {
                        mt = (int)(even + (t < more));
                        xf.wcold = i0 == sb;
                        if (i0 + mt < ie) /* the next tile's, while this one computes */
                            prefetch_tile(c, ldc, pc, in, i0 + mt, j0, (int)(even + (t + 1 < more)), nr);
                        float *cc = y8 ? tile : c + i0 * ldc + j0;
                        const int64_t ld = y8 ? TW : ldc;
                        kr->fn8(b, &xf, i0, mt, 1, g, s0, n2, cc, ld, in);
                        if (out) gemm_epi_tile(out, cc, ld, i0, j0, mt, nr);
                        for (int i = 0; y8 && i < mt; i++)
                            requant_row(cc + i * ld, nr, x->r8, x->z8,
                                        x->y8 + (i0 + i) * x->ldy8 + j0);
                    }
                }
            }
        }
    }
}

/* int8dq over up to `threads` threads: column groups apart, then rows
 * apart when there are fewer groups than threads. */
static void run_groups(const qg_kern *kr, const qg_packed *b, const qg_act *x, int64_t m, float *c,
                       int64_t ldc, const gemm_epi *epi, int threads)
{
    gemm_epi ein, eout;
    bool rest = epi && qg_epi_split(epi, &ein, &eout);
    const gemm_epi *in = epi && (ein.scaled || ein.bias_mode != GEMM_BIAS_NONE || ein.res ||
                                 ein.act != GEMM_ACT_NONE)
                             ? &ein
                             : NULL,
                   *out = rest ? &eout : NULL;
    qg_grid g; /* column groups, then rows */
    if (!grid_make(threads, (b->np / QG_NR + QG_GP - 1) / QG_GP, m, kr->mr8[QG_GP], &g)) {
        groups(kr, b, x, 0, m, c, ldc, in, out, 0, g.cols);
        return;
    }
#pragma omp parallel num_threads((int)(g.tn * g.tm))
    {
        int64_t r0, r1, g0, g1;
        if (grid_part(&g, omp_get_thread_num(), omp_get_num_threads(), &r0, &r1, &g0, &g1))
            groups(kr, b, x, r0, r1, c, ldc, in, out, g0, g1);
    }
}

/* Every panel of C over up to `threads` threads, on kernel kr (pick's, the
 * one that converted A). */
static void run_kern(const qg_kern *kr, const qg_packed *b, const qg_act *x, int64_t m, float *c,
                     int64_t ldc, const gemm_epi *epi, int threads)
{
    if (x->hb || x->hw) {
        run_bf16(kr, b, x, m, c, ldc, epi, threads);
        return;
    }
    if (kr->fn8) {
        qg_act xu = *x; /* the kernels dequantise once per tile when all rows share sa, za */
        xu.uni = true;
        for (int64_t i = 1; i < m && !x->uni && xu.uni; i++)
            xu.uni = x->sa[i] == x->sa[0] && x->za[i] == x->za[0];
        run_groups(kr, b, &xu, m, c, ldc, epi, threads);
        return;
    }
    int64_t np = b->np / QG_NR;
    int t = threads > 1 ? threads : 1;
    if (t > np) t = (int)np;
    if (t <= 1) { /* no OpenMP region at all: entering one costs ~0.2 ms here */
        panels(kr, b, x, m, c, ldc, epi, 0, np);
    } else {
#pragma omp parallel num_threads(t)
        {
            int id = omp_get_thread_num(), n = omp_get_num_threads();
            panels(kr, b, x, m, c, ldc, epi, np * id / n, np * (id + 1) / n);
        }
    }
}

static void run_panels(const qg_packed *b, const qg_act *x, int64_t m, float *c, int64_t ldc,
                       const gemm_epi *epi, int threads)
{
    run_kern(pick(b->scheme), b, x, m, c, ldc, epi, threads);
}

ait_status qgemm(const qg_packed *b, const float *a, int64_t lda, int64_t m, float *c,
                 int64_t ldc, const gemm_epi *epi, int threads, ait_error *e)
{
    return qgemm_ws(b, a, lda, m, c, ldc, epi, threads, NULL, e);
}

ait_status qgemm_ws(const qg_packed *b, const float *a, int64_t lda, int64_t m, float *c,
                    int64_t ldc, const gemm_epi *epi, int threads, void *ws, ait_error *e)
{
    if (m <= 0) return AIT_OK;
    qg_act x;
    void *buf;
    const qg_kern *kr = pick(b->scheme);
    TRY(act_make(kr, b, a, lda, m, threads, &x, ws, &buf, e));
    run_kern(kr, b, &x, m, c, ldc, epi, threads);
    aligned_free(buf);
    return AIT_OK;
}

ait_status qgemm_q8(const qg_packed *b, const void *q, bool a_signed, int64_t ldq, int64_t m,
                    float sa, int32_t za, float *c, int64_t ldc, const gemm_epi *epi, int threads,
                    ait_error *e)
{
    if (m <= 0) return AIT_OK;
    if (b->scheme != QG_INT8DQ)
        return err_set(e, AIT_E_INTERNAL, "qgemm_q8: weights packed as %s, not int8dq",
                       qg_scheme_name(b->scheme));
    size_t rows = (size_t)m, kp = (size_t)b->kp;
    bool copy = a_signed || ldq != b->kp; /* the kernels read rows kp apart, uint8 */
    void *buf = aligned_zalloc(rows * 8 + (copy ? up64(rows * kp) : 0) + 64);
    if (!buf) return err_set(e, AIT_E_NOMEM, "out of memory for quantised activations");
    float *sv = buf;
    int32_t *zv = (int32_t *)(sv + rows);
    const uint8_t *qa = q;
    if (copy) { /* int8 as uint8: q + 128 against za + 128; padding 0 against weights 0 */
        uint8_t *d = (uint8_t *)buf + up64(rows * 8);
        for (size_t i = 0; i < rows; i++)
            for (int64_t k = 0; k < b->k; k++)
                d[i * kp + (size_t)k] = (uint8_t)(qa[(int64_t)i * ldq + k] ^ (a_signed ? 0x80 : 0));
        qa = d;
    }
    for (size_t i = 0; i < rows; i++) {
        sv[i] = sa;
        zv[i] = za + (a_signed ? 128 : 0);
    }
    qgemm_u8(b, qa, sv, zv, m, c, ldc, epi, threads);
    aligned_free(buf);
    return AIT_OK;
}

void qgemm_u8(const qg_packed *b, const uint8_t *q, const float *sa, const int32_t *za, int64_t m,
              float *c, int64_t ldc, const gemm_epi *epi, int threads)
{
    qg_act x = {.q = q, .sa = sa, .za = za};
    if (m > 0 && b->scheme == QG_INT8DQ) run_panels(b, &x, m, c, ldc, epi, threads);
}

void qgemm_u8_q8(const qg_packed *b, const uint8_t *q, const float *sa, const int32_t *za,
                 int64_t m, uint8_t *y, int64_t ldy, float ys, int32_t yz, const gemm_epi *epi,
                 int threads)
{
    qg_act x = {.q = q, .sa = sa, .za = za, .y8 = y, .ldy8 = ldy, .r8 = 1.0f / ys, .z8 = (float)yz};
    if (m > 0 && b->scheme == QG_INT8DQ) run_panels(b, &x, m, NULL, 0, epi, threads);
}

/* int8dq's A from q (rows kp apart) or rows (not NULL), into c or y: false when rows' runs do
 * not split kp in quads. */
static bool act_u8(const qg_packed *b, const uint8_t *q, const qg_rows *rows, const float *sa,
                   const int32_t *za, bool uni, uint8_t *y, int64_t ldy, float ys, int32_t yz,
                   qg_act *x)
{
    if (b->scheme != QG_INT8DQ || (rows && (rows->runs < 1 || b->kp % (4 * rows->runs) != 0)))
        return false;
    *x = (qg_act){.q = q, .sa = sa, .za = za, .uni = uni, .y8 = y, .ldy8 = ldy,
                  .r8 = y ? 1.0f / ys : 0, .z8 = (float)yz};
    if (rows) {
        x->rp = rows->rp;
        x->run = b->kp / 4 / rows->runs;
        x->run_off = rows->off;
    }
    return true;
}

bool qgemm_u8_rows(const qg_packed *b, const qg_rows *a, const float *sa, const int32_t *za,
                   int64_t m, float *c, int64_t ldc, uint8_t *y, int64_t ldy, float ys, int32_t yz,
                   const gemm_epi *epi, int threads)
{
    qg_act x;
    if (!act_u8(b, NULL, a, sa, za, false, y, ldy, ys, yz, &x)) return false;
    if (m > 0) run_panels(b, &x, m, y ? NULL : c, y ? 0 : ldc, epi, threads);
    return true;
}

bool qgemm_u8_uni(const qg_packed *b, const uint8_t *q, const qg_rows *rows, float sa, int32_t za,
                  int64_t m, float *c, int64_t ldc, uint8_t *y, int64_t ldy, float ys, int32_t yz,
                  const gemm_epi *epi, int threads)
{
    qg_act x;
    if (!act_u8(b, q, rows, &sa, &za, true, y, ldy, ys, yz, &x)) return false;
    if (m > 0) run_panels(b, &x, m, y ? NULL : c, y ? 0 : ldc, epi, threads);
    return true;
}

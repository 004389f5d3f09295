/* The static int8 3x3 depthwise's interior on AVX512-VNNI (nhwc_dwq.h).
 *
 * A column of the input (one x, the kernel's three rows) is 16 channels by
 * 3 bytes: loaded as three 16-byte runs into one register and interleaved
 * by vpermb so that channel i's int32 lane holds (row 0, row 1, row 2, row
 * 0 again) -- the fourth byte's weight is 0. Kernel column kx's weights are
 * the same layout, (w[0][kx], w[1][kx], w[2][kx], 0), the rows outside the
 * image 0 too. An output pixel is three vpdpbusd, one per column; at
 * stride 1 each column feeds three outputs and is built once, at stride 2
 * two. vpdpbusd sums uint8 x by int8 w exactly in int32: sum x * w; the
 * zero point's part xz * sum w (the inside taps') is one more vpdpbusd per
 * channel block, taken out before the float epilogue, which is then
 * nhwc_tmpl.h's dwq_blocks': the same integers, floats and bytes. */
#include "kernels/nhwc_dwq.h"

#include "core/cpu.h"
#include "kernels/isa.h"

#if KISA_X86
#include <immintrin.h>
#include <math.h>

#define TVNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,fma")))
#define INL static inline __attribute__((always_inline))

bool knhwc_dwq3_vnni_ok(void)
{
    static int known; /* 0 unknown, 1 no, 2 yes */
    int v = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (!v) {
        v = cpu_has_all("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi", NULL, 0) ? 2 : 1;
        __atomic_store_n(&known, v, __ATOMIC_RELAXED);
    }
    return v == 2;
}

/* Column ix of the three rows r[0..2], channels [c, c + 16), interleaved. */
TVNNI INL __m512i col3(const uint8_t *const r[3], int64_t off, __m512i perm)
{
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(r[0] + off)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(r[1] + off)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(r[2] + off)), 2);
    return _mm512_permutexvar_epi8(perm, v);
}

/* One output pixel's sum from its three columns. */
TVNNI INL __m512i px3(__m512i a, __m512i b, __m512i c, const __m512i w[3])
{
    __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), a, w[0]);
    __m512i t = _mm512_dpbusd_epi32(_mm512_setzero_si512(), b, w[1]);
    s = _mm512_dpbusd_epi32(s, c, w[2]);
    return _mm512_add_epi32(s, t);
}

/* An output pixel at the image's left or right edge: its columns ix0 ..
 * ix0 + 2 inside [0, W) only, the zero point's part *zs of those. */
TVNNI INL __m512i edge3(const uint8_t *const r[3], int64_t ix0, int64_t W, int64_t C, int64_t c,
                        __m512i perm, const __m512i w[3], __m512i x4, __m512i *zs)
{
    __m512i s = _mm512_setzero_si512(), z = _mm512_setzero_si512();
    for (int j = 0; j < 3; j++) {
        const int64_t ix = ix0 + j;
        if (ix < 0 || ix >= W) continue;
        s = _mm512_dpbusd_epi32(s, col3(r, ix * C + c, perm), w[j]);
        z = _mm512_dpbusd_epi32(z, x4, w[j]);
    }
    *zs = z;
    return s;
}

/* The epilogue: (s - zs) as float, times sc plus bi; uint8 at q (lo, hi:
 * the clamp of rint(v * r8) folded with the activation's and [0, 255]'s,
 * see below) or floats at yp. */
TVNNI INL void out16(__m512i s, __m512i zs, __m512 sc, __m512 bi, uint8_t *q, float *yp, __m512 r8,
                     __m512 lo, __m512 hi, __m512i z8)
{
    const __m512 v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(s, zs)), sc, bi);
    if (!q) {
        _mm512_storeu_ps(yp, v);
        return;
    }
    __m512 t = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(v, r8), lo), hi);
    __m512i u = _mm512_add_epi32(
        _mm512_cvt_roundps_epi32(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), z8);
    _mm_storeu_si128((__m128i *)q, _mm512_cvtepi32_epi8(u));
}

/* Kernel column kx's packed weights of channels [c, c + 16), the rows
 * [ky0, ky1) of 3 (the others' bytes 0). */
TVNNI INL __m512i wcol(const float *wq, int64_t C, int64_t c, int kx, int64_t ky0, int64_t ky1)
{
    __m512i w = _mm512_setzero_si512();
    for (int64_t k = ky0; k < ky1; k++) {
        __m512i wi = _mm512_cvtps_epi32(_mm512_loadu_ps(wq + (k * 3 + kx) * C + c));
        wi = _mm512_and_si512(wi, _mm512_set1_epi32(0xff));
        w = _mm512_or_si512(w, _mm512_slli_epi32(wi, (unsigned)(8 * k)));
    }
    return w;
}

TVNNI static void pack(const float *wq, int64_t C, int32_t *wv)
{
    for (int kx = 0; kx < 3; kx++)
        for (int64_t c = 0; c + 16 <= C; c += 16)
            _mm512_storeu_si512(wv + kx * C + c, wcol(wq, C, c, kx, 0, 3));
}

void knhwc_dwq3_pack(const float *wq, int64_t C, int32_t *wv)
{
    pack(wq, C, wv);
}

TVNNI static void dwq3(const knhwc_geom *g, const uint8_t *x, int32_t xz, const float *wq,
                       const int32_t *wv, const float *scale, const float *bias, int64_t iy0, int64_t ky0, int64_t ky1,
                       int64_t ox0, int64_t ox1, float *y, uint8_t *yq, float lo, float hi,
                       float r8, float z8)
{
    const int64_t C = g->cs, S = g->sw;
    uint8_t idx[64];
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 4; k++) idx[4 * i + k] = (uint8_t)(16 * (k < 3 ? k : 0) + i);
    const __m512i perm = _mm512_loadu_si512(idx);
    /* dwq_out's bytes: sat(rint(clamp(v, lo, hi) * r8) + z8). With
     * f(v) = rint(v * r8) nondecreasing (r8 > 0), that is f(v) clamped to
     * [f(lo), f(hi)] and then to [-z8, 255 - z8], plus z8; two clamps of
     * one value are one clamp to the first's bounds clamped to the
     * second's, and rint commutes with a clamp to integer bounds: so
     * rint(clamp(v * r8, a, b)) + z8 with a, b below, in [0, 255]. */
    const float fl = nearbyintf(lo * r8), fh = nearbyintf(hi * r8);
    const float a = fminf(fmaxf(fl, -z8), 255.0f - z8), b = fminf(fmaxf(fh, -z8), 255.0f - z8);
    const __m512 vr = _mm512_set1_ps(r8), vlo = _mm512_set1_ps(a), vhi = _mm512_set1_ps(b);
    const __m512i vz8 = _mm512_set1_epi32((int32_t)z8);
    const __m512i x4 = _mm512_set1_epi32((int32_t)((uint32_t)xz * 0x01010101u)); /* xz in 4 bytes */
    /* the interior [ia, ib) of [ox0, ox1): the pixels whose three columns are inside */
    int64_t ia = (g->pl + S - 1) / S, ib = g->w >= 3 ? (g->w - 3 + g->pl) / S + 1 : ia;
    ia = ia < ox0 ? ox0 : ia > ox1 ? ox1 : ia;
    ib = ib > ox1 ? ox1 : ib < ia ? ia : ib;
    const uint8_t *r[3];
    for (int k = 0; k < 3; k++) { /* rows outside the image read row ky0's bytes, weight 0 */
        const int64_t ky = k >= ky0 && k < ky1 ? k : ky0;
        r[k] = x + (iy0 + ky * g->dh) * g->w * C;
    }
    uint32_t m = 0; /* the bytes of the rows inside */
    for (int64_t k = ky0; k < ky1; k++) m |= 0xffu << (8 * k);
    const __m512i rows = _mm512_set1_epi32((int32_t)m);
    for (int64_t c = 0; c + 16 <= C; c += 16) {
        __m512i w[3];
        for (int kx = 0; kx < 3; kx++)
            w[kx] = !wv ? wcol(wq, C, c, kx, ky0, ky1)
                        : _mm512_and_si512(_mm512_loadu_si512(wv + kx * C + c), rows);
        const __m512i zs = px3(x4, x4, x4, w); /* xz * the inside taps' weights */
        const __m512 sc = _mm512_loadu_ps(scale + c);
        const __m512 bi = bias ? _mm512_loadu_ps(bias + c) : _mm512_setzero_ps();
        const int64_t o = c - g->pl * C; /* output ox's first column: r[k] + ox * S * C + o */
        for (int64_t e = ox0; e < ox1; e++) { /* the edges: pixels outside [ia, ib) */
            if (e == ia && ib > ia) e = ib;
            if (e >= ox1) break;
            __m512i ze;
            const __m512i se = edge3(r, e * S - g->pl, g->w, C, c, perm, w, x4, &ze);
            out16(se, ze, sc, bi, yq ? yq + e * C + c : NULL, y + e * C + c, vr, vlo, vhi, vz8);
        }
        int64_t ox = ia;
        if (ib <= ia) continue;
        if (S == 1) {
            __m512i c0 = col3(r, ox * C + o, perm), c1 = col3(r, (ox + 1) * C + o, perm);
            for (; ox + 2 <= ib; ox += 2) {
                const __m512i c2 = col3(r, (ox + 2) * C + o, perm);
                const __m512i c3 = col3(r, (ox + 3) * C + o, perm);
                const __m512i s0 = px3(c0, c1, c2, w), s1 = px3(c1, c2, c3, w);
                out16(s0, zs, sc, bi, yq ? yq + ox * C + c : NULL, y + ox * C + c, vr, vlo, vhi, vz8);
                out16(s1, zs, sc, bi, yq ? yq + (ox + 1) * C + c : NULL, y + (ox + 1) * C + c, vr,
                      vlo, vhi, vz8);
                c0 = c2, c1 = c3;
            }
            if (ox < ib) {
                const __m512i s0 = px3(c0, c1, col3(r, (ox + 2) * C + o, perm), w);
                out16(s0, zs, sc, bi, yq ? yq + ox * C + c : NULL, y + ox * C + c, vr, vlo, vhi, vz8);
            }
        } else {
            __m512i c0 = col3(r, 2 * ox * C + o, perm);
            for (; ox < ib; ox++) {
                const __m512i c1 = col3(r, (2 * ox + 1) * C + o, perm);
                const __m512i c2 = col3(r, (2 * ox + 2) * C + o, perm);
                out16(px3(c0, c1, c2, w), zs, sc, bi, yq ? yq + ox * C + c : NULL, y + ox * C + c,
                      vr, vlo, vhi, vz8);
                c0 = c2;
            }
        }
    }
}

void knhwc_dwq3_vnni(const knhwc_geom *g, const uint8_t *x, int32_t xz, const float *wq,
                     const int32_t *wv, const float *scale, const float *bias, int64_t iy0,
                     int64_t ky0, int64_t ky1, int64_t ox0, int64_t ox1, float *y, uint8_t *yq,
                     float lo, float hi, float r8, float z8)
{
    dwq3(g, x, xz, wq, wv, scale, bias, iy0, ky0, ky1, ox0, ox1, y, yq, lo, hi, r8, z8);
}
#else
bool knhwc_dwq3_vnni_ok(void)
{
    return false;
}

void knhwc_dwq3_pack(const float *wq, int64_t C, int32_t *wv)
{
    (void)wq, (void)C, (void)wv;
}

void knhwc_dwq3_vnni(const knhwc_geom *g, const uint8_t *x, int32_t xz, const float *wq,
                     const int32_t *wv, const float *scale, const float *bias, int64_t iy0,
                     int64_t ky0, int64_t ky1, int64_t ox0, int64_t ox1, float *y, uint8_t *yq,
                     float lo, float hi, float r8, float z8)
{
    (void)g, (void)x, (void)xz, (void)wq, (void)wv, (void)scale, (void)bias, (void)iy0, (void)ky0, (void)ky1;
    (void)ox0, (void)ox1, (void)y, (void)yq, (void)lo, (void)hi, (void)r8, (void)z8;
}
#endif

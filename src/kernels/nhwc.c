/* Channels-last pieces: layout changes, im2col, and the depthwise
 * convolution (one instance of nhwc_tmpl.h per ISA, picked from a table;
 * threads split the output rows of all images). */
#include "kernels/nhwc.h"
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "kernels/isa.h"
#include "kernels/nhwc_dwq.h"
#include "kernels/qgemm.h"
#include "kernels/win.h"
#include <omp.h>

/* The taps [*t0, *t1) of k (dilation d) from input index i0 that fall in
 * [0, n): the depthwise rows' window inside the image. */
static inline void taps_inside(int64_t i0, int64_t k, int64_t d, int64_t n, int64_t *t0, int64_t *t1)
{
    int64_t a = 0, b = k;
    while (a < b && i0 + a * d < 0) a++;
    while (b > a && i0 + (b - 1) * d >= n) b--;
    *t0 = a;
    *t1 = b;
}

/* Whether knhwc_dw's rows slide (nhwc_tmpl.h's nhwc_dw_slides): 5x5 at
 * stride 1 or 2 and 3x3 at stride 1, no dilation along x; a 3x3 at stride
 * 2 on rows of at most DW_R (8) outputs, one block with its edges (a 7x7
 * output: 0.73 to 0.89 of the per-tap path's time on the Zen 5, whose
 * edge outputs go one at a time; 1.03 to 1.76x slower on wider rows:
 * bench/RESULTS.md, branch dw). */
static inline bool dw_slides(const knhwc_geom *g)
{
    return g->dw == 1 && ((g->kw == 5 && (g->sw == 1 || g->sw == 2)) || (g->kw == 3 && g->sw == 1) ||
                          (g->kw == 3 && g->sw == 2 && g->ow <= 8));
}

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/nhwc_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/nhwc_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/nhwc_tmpl.h"
#include "kernels/vec_end.h"

static const struct {
    kisa isa;
    int vl;
    void (*tile)(const float *, int64_t, float *, int64_t);
} tr_impls[] = {
#if KISA_X86
    {KISA_AVX512, 16, nhwc_tr_tile_avx512},
    {KISA_AVX2, 8, nhwc_tr_tile_avx2},
#endif
    {KISA_PORTABLE, 1, nhwc_tr_tile_portable},
};

/* Rows [i0, i1) by columns [j0, j1) of x (rows ldx apart) into y (rows
 * ldy apart) transposed: whole tiles of tr_impls[k]'s width in registers
 * (nhwc_tr_tile), the rows and columns left by the next, narrower entry
 * (AVX-512's 16 then AVX2's 8: 72 channels are 4 tiles of 16 and one of
 * 8, not 8 rows element by element), the portable one element by element. */
static void tr_block(const float *x, int64_t ldx, float *y, int64_t ldy, int64_t i0, int64_t i1,
                     int64_t j0, int64_t j1, size_t k)
{
    const int64_t vl = tr_impls[k].vl;
    if (vl == 1) {
        for (int64_t i = i0; i < i1; i++)
            for (int64_t j = j0; j < j1; j++) y[j * ldy + i] = x[i * ldx + j];
        return;
    }
    const int64_t iv = i0 + (i1 - i0) / vl * vl, jv = j0 + (j1 - j0) / vl * vl;
    for (int64_t i = i0; i < iv; i += vl)
        for (int64_t j = j0; j < jv; j += vl) tr_impls[k].tile(x + i * ldx + j, ldx, y + j * ldy + i, ldy);
    if (jv < j1 && iv > i0) tr_block(x, ldx, y, ldy, i0, iv, jv, j1, k + 1);
    if (iv < i1) tr_block(x, ldx, y, ldy, iv, i1, j0, j1, k + 1);
}

/* Transposes an [r][s] matrix (rows ldx apart) into [s][r] (rows ldy
 * apart), in 16x16 blocks (tr_block); a few rows (an image's 3 channels
 * into NHWC) by one pass down the columns, writing y in order. */
static void transpose_ld(const float *xb, int64_t r, int64_t s, int64_t ldx, float *yb, int64_t ldy)
{
    enum { T = 16 };
    const size_t k = (size_t)((const __typeof__(tr_impls[0]) *)KISA_PICK(tr_impls) - tr_impls);
    if (r <= 4) {
        for (int64_t j = 0; j < s; j++)
            for (int64_t i = 0; i < r; i++) yb[j * ldy + i] = xb[i * ldx + j];
        return;
    }
    for (int64_t i0 = 0; i0 < r; i0 += T)
        for (int64_t j0 = 0; j0 < s; j0 += T)
            tr_block(xb, ldx, yb, ldy, i0, i0 + T < r ? i0 + T : r, j0, j0 + T < s ? j0 + T : s, k);
}

/* Each of n [r][s] matrices into [s][r]. */
static void transpose(const float *x, int64_t n, int64_t r, int64_t s, float *y)
{
    for (int64_t b = 0; b < n; b++) transpose_ld(x + b * r * s, r, s, s, y + b * r * s, r);
}

void knhwc_from_nchw(const float *x, int64_t n, int64_t c, int64_t hw, float *y)
{
    transpose(x, n, c, hw, y);
}

void knhwc_to_nchw(const float *x, int64_t n, int64_t c, int64_t hw, float *y)
{
    transpose(x, n, hw, c, y);
}

/* n bytes from s to d: short runs (a tap of a few channels, 12 to 256
 * bytes) inline, without a libc call per tap. */
static inline void copy_run(char *restrict d, const char *restrict s, size_t n)
{
    if (n > 256) {
        memcpy(d, s, n);
        return;
    }
    for (; n >= 64; n -= 64, d += 64, s += 64) __builtin_memcpy(d, s, 64);
    for (; n >= 16; n -= 16, d += 16, s += 16) __builtin_memcpy(d, s, 16);
    for (; n >= 4; n -= 4, d += 4, s += 4) __builtin_memcpy(d, s, 4);
    for (; n; n--) *d++ = *s++;
}

/* The im2col of elements of esz bytes, rows lda bytes apart, padding bytes
 * `pad`. Where the taps of a kernel row are adjacent pixels of the input
 * (no dilation along x, all of each pixel's channels), the ones inside it
 * are one run. */
static void im2col_bytes(const knhwc_geom *g, const char *x, size_t esz, int pad, int64_t p0,
                         int64_t p1, char *a, size_t lda)
{
    const size_t c = (size_t)g->c * esz;
    /* a row's taps inside the image are one run of x when the pixels' channels are all
     * taken and the taps adjacent: one copy (a 3x3's 3 instead of 9, a 7x7 stem's 7 of
     * 21 bytes instead of 49 of 3) */
    const bool runs = g->dw == 1 && g->cs == g->c;
    int64_t oy = p0 / g->ow, ox = p0 % g->ow; /* pixel p's */
    for (int64_t p = p0; p < p1; p++, ox = ox + 1 < g->ow ? ox + 1 : (oy++, 0)) {
        const int64_t ix0 = ox * g->sw - g->pl;
        char *ap = a + (size_t)(p - p0) * lda;
        for (int64_t ky = 0; ky < g->kh; ky++) {
            int64_t iy = oy * g->sh - g->pt + ky * g->dh;
            if (iy < 0 || iy >= g->h) {
                memset(ap, pad, c * (size_t)g->kw);
                ap += c * (size_t)g->kw;
                continue;
            }
            const char *xr = x + (size_t)((iy * g->w) * g->cs + g->c0) * esz;
            if (runs) {
                int64_t k0, k1; /* the taps inside the image (a pad may be wider than the kernel) */
                taps_inside(ix0, g->kw, 1, g->w, &k0, &k1);
                if (k0 > 0) memset(ap, pad, c * (size_t)k0); /* no call for none: most pixels */
                copy_run(ap + c * (size_t)k0, xr + (size_t)(ix0 + k0) * c, c * (size_t)(k1 - k0));
                if (k1 < g->kw) memset(ap + c * (size_t)k1, pad, c * (size_t)(g->kw - k1));
                ap += c * (size_t)g->kw;
                continue;
            }
            for (int64_t kx = 0; kx < g->kw; kx++, ap += c) {
                int64_t ix = ix0 + kx * g->dw;
                if (ix < 0 || ix >= g->w)
                    memset(ap, pad, c);
                else
                    copy_run(ap, xr + (size_t)(ix * g->cs) * esz, c);
            }
        }
    }
}

void knhwc_im2col(const knhwc_geom *g, const float *x, int64_t p0, int64_t p1, float *a)
{
    im2col_bytes(g, (const char *)x, sizeof(float), 0, p0, p1, (char *)a,
                 sizeof(float) * (size_t)(g->kh * g->kw * g->c));
}

typedef void (*gather_row_fn)(const float *, const int32_t *, int64_t, float *);
static const struct {
    kisa isa;
    gather_row_fn row;
} gather_impls[] = {
#if KISA_X86
    {KISA_AVX512, nhwc_gather_row_avx512},
    {KISA_AVX2, nhwc_gather_row_avx2},
#endif
    {KISA_PORTABLE, nhwc_gather_row_portable},
};

/* knhwc_im2col of NCHW x from the planes: a window wholly inside the image
 * (most of them) gathered by a table of its K elements' offsets from its
 * first (up to IM2COL_OFFS of them, int32), the others element by element
 * with bounds checks. */
#define IM2COL_OFFS 256
void knhwc_im2col_nchw(const knhwc_geom *g, const float *x, int64_t p0, int64_t p1, float *a)
{
    __typeof__(gather_impls[0]) *im = KISA_PICK(gather_impls);
    const int64_t hw = g->h * g->w, k = g->kh * g->kw * g->c;
    const float *xc = x + g->c0 * hw;
    int32_t off[IM2COL_OFFS];
    const bool table = k <= IM2COL_OFFS && g->c * hw <= INT32_MAX;
    for (int64_t j = 0; table && j < k; j++) {
        const int64_t tap = j / g->c, ci = j % g->c;
        off[j] = (int32_t)(ci * hw + tap / g->kw * g->dh * g->w + tap % g->kw * g->dw);
    }
    int64_t oy = p0 / g->ow, ox = p0 % g->ow; /* pixel p's */
    for (int64_t p = p0; p < p1; p++, ox = ox + 1 < g->ow ? ox + 1 : (oy++, 0)) {
        const int64_t iy0 = oy * g->sh - g->pt, ix0 = ox * g->sw - g->pl;
        float *ap = a + (p - p0) * k;
        int64_t ky0, ky1, kx0, kx1;
        taps_inside(iy0, g->kh, g->dh, g->h, &ky0, &ky1);
        taps_inside(ix0, g->kw, g->dw, g->w, &kx0, &kx1);
        if (table && ky0 == 0 && ky1 == g->kh && kx0 == 0 && kx1 == g->kw) {
            im->row(xc + iy0 * g->w + ix0, off, k, ap);
            continue;
        }
        for (int64_t ky = 0; ky < g->kh; ky++)
            for (int64_t kx = 0; kx < g->kw; kx++) {
                const bool in = ky >= ky0 && ky < ky1 && kx >= kx0 && kx < kx1;
                const float *xp = in ? xc + (iy0 + ky * g->dh) * g->w + ix0 + kx * g->dw : NULL;
                for (int64_t ci = 0; ci < g->c; ci++) *ap++ = in ? xp[ci * hw] : 0.0f;
            }
    }
}

void knhwc_im2col_u8(const knhwc_geom *g, const uint8_t *x, uint8_t pad, int64_t p0, int64_t p1,
                     uint8_t *a, int64_t lda)
{
    const int64_t row = g->kh * g->kw * g->c;
    im2col_bytes(g, (const char *)x, 1, pad, p0, p1, (char *)a, (size_t)lda);
    for (int64_t p = p0; p < p1 && lda > row; p++) memset(a + (p - p0) * lda + row, 0, (size_t)(lda - row));
}

/* The padded image's rows and columns: those the window reaches, at least the image's. */
static void padded_dims(const knhwc_geom *g, int64_t *hp, int64_t *wp)
{
    int64_t h = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1, w = (g->ow - 1) * g->sw + g->kw;
    *hp = h > g->pt + g->h ? h : g->pt + g->h;
    *wp = w > g->pl + g->w ? w : g->pl + g->w;
}

int64_t knhwc_padded_u8(const knhwc_geom *g, int64_t xc, int64_t *wp)
{
    int64_t hp, bytes;
    if (g->dw != 1 || g->c0 != 0 || g->c != g->cs || (g->kw * g->c) % 4 != 0 || g->pt < 0 ||
        g->pl < 0 || xc < 1 || xc > g->c)
        return -1;
    padded_dims(g, &hp, wp);
    if (xc == g->c && g->pt == 0 && g->pl == 0 && hp == g->h && *wp == g->w) return 0;
    if (__builtin_mul_overflow(hp, *wp, &bytes) || __builtin_mul_overflow(bytes, g->c, &bytes))
        return -1;
    return bytes;
}

/* Columns of a plane's row quantised at a time (a stack buffer per channel). */
#define PAD_NCHW_RUN 256

void knhwc_pad_u8_nchw(const knhwc_geom *g, const float *x, int64_t xc, float s, int32_t z,
                       uint8_t pad, uint8_t *xp)
{
    int64_t hp, wp;
    padded_dims(g, &hp, &wp);
    const size_t c = (size_t)g->c, row = (size_t)wp * c, hw = (size_t)(g->h * g->w);
    uint8_t t[4][PAD_NCHW_RUN];
    for (int64_t y = 0; y < hp; y++) {
        uint8_t *d = xp + (size_t)y * row;
        const int64_t iy = y - g->pt;
        if (iy < 0 || iy >= g->h || (size_t)xc < c) { /* the row, or the widened channels: pad */
            memset(d, pad, row);
            if (iy < 0 || iy >= g->h) continue;
        }
        memset(d, pad, (size_t)g->pl * c);
        uint8_t *o = d + (size_t)g->pl * c;
        for (int64_t x0 = 0; x0 < g->w; x0 += PAD_NCHW_RUN) {
            const int64_t n = g->w - x0 < PAD_NCHW_RUN ? g->w - x0 : PAD_NCHW_RUN;
            const float *xr = x + (size_t)(iy * g->w + x0);
            uint8_t *oc = o + (size_t)x0 * c;
            if (c == 4) { /* a stem's 3 planes (or 4) as 4-byte pixels */
                for (int64_t ci = 0; ci < xc; ci++) qg_quant_u8(xr + (size_t)ci * hw, n, s, z, t[ci]);
                if (xc < 4) memset(t[3], pad, (size_t)n);
                if (xc < 3) memset(t[2], pad, (size_t)n);
                if (xc < 2) memset(t[1], pad, (size_t)n);
                for (int64_t i = 0; i < n; i++) {
                    oc[4 * i] = t[0][i], oc[4 * i + 1] = t[1][i];
                    oc[4 * i + 2] = t[2][i], oc[4 * i + 3] = t[3][i];
                }
                continue;
            }
            for (int64_t ci = 0; ci < xc; ci++) { /* each plane's run quantised, put in place */
                qg_quant_u8(xr + (size_t)ci * hw, n, s, z, t[0]);
                for (int64_t i = 0; i < n; i++) oc[(size_t)i * c + (size_t)ci] = t[0][i];
            }
        }
        memset(d + (size_t)(g->pl + g->w) * c, pad, (size_t)(wp - g->pl - g->w) * c);
    }
}

void knhwc_pad_u8(const knhwc_geom *g, const uint8_t *x, int64_t xc, uint8_t pad, uint8_t *xp)
{
    int64_t hp, wp;
    padded_dims(g, &hp, &wp);
    const size_t c = (size_t)g->c, row = (size_t)wp * c, n = (size_t)xc;
    for (int64_t y = 0; y < hp; y++) {
        uint8_t *d = xp + (size_t)y * row;
        const int64_t iy = y - g->pt;
        if (iy < 0 || iy >= g->h) {
            memset(d, pad, row);
            continue;
        }
        memset(d, pad, (size_t)g->pl * c);
        const uint8_t *s = x + (size_t)(iy * g->w) * n;
        if (n == c) {
            memcpy(d + (size_t)g->pl * c, s, (size_t)g->w * c);
        } else { /* each pixel's xc channels, then the pad up to c */
            uint8_t *o = d + (size_t)g->pl * c;
            int64_t ix = 0;
            if (n == 3 && c == 4) /* a stem's: 4 bytes a pixel, the 4th replaced (not the last) */
                for (; ix + 1 < g->w; ix++, o += 4, s += 3) {
                    uint8_t t[4];
                    memcpy(t, s, 4);
                    t[3] = pad;
                    memcpy(o, t, 4);
                }
            for (; ix < g->w; ix++, o += c, s += n)
                for (size_t ci = 0; ci < c; ci++) o[ci] = ci < n ? s[ci] : pad;
        }
        memset(d + (size_t)(g->pl + g->w) * c, pad, (size_t)(wp - g->pl - g->w) * c);
    }
}

void knhwc_rows_u8(const knhwc_geom *g, const uint8_t *xp, int64_t wp, int64_t p0, int64_t p1,
                   const uint8_t **rp, int64_t *off)
{
    int64_t oy = p0 / g->ow, ox = p0 % g->ow;
    for (int64_t p = p0; p < p1; p++, ox = ox + 1 < g->ow ? ox + 1 : (oy++, 0))
        rp[p - p0] = xp + (size_t)((oy * g->sh * wp + ox * g->sw) * g->c);
    *off = g->dh * wp * g->c;
}

typedef void (*dw_row_fn)(const knhwc_geom *, const float *, const float *, const float *, int64_t,
                          int64_t, int64_t, kact, const float *, float *, float *);
static const struct {
    kisa isa;
    dw_row_fn row;
} dw_impls[] = {
#if KISA_X86
    {KISA_AVX512, nhwc_dw_row_avx512},
    {KISA_AVX2, nhwc_dw_row_avx2},
#endif
    {KISA_PORTABLE, nhwc_dw_row_portable},
};

void knhwc_dw(const knhwc_geom *g, int64_t n, const float *x, const float *wt, const float *bias,
              kact act, const float *res, float *y, float *sums, int threads)
{
    __typeof__(dw_impls[0]) *im = KISA_PICK(dw_impls);
    const int64_t rows = n * g->oh, in_img = g->h * g->w * g->cs, orow = g->ow * g->cs;
    int lo, hi; /* the outputs whose window lies inside a row (conv.c takes int geometry) */
    kwin_inner((int)g->ow, (int)g->w, (int)g->kw, (int)g->sw, (int)g->dw, (int)g->pl, &lo, &hi);
#pragma omp parallel for num_threads(threads > 1 ? threads : 1) if (threads > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t b = r / g->oh, oy = r % g->oh;
        im->row(g, x + b * in_img, wt, bias, oy, lo, hi, act, res ? res + r * orow : NULL,
                y + r * orow, sums ? sums + r * g->cs : NULL);
    }
}

/* The output rows a band of knhwc_dw_nchw takes by default: its NHWC
 * input rows about DW_BAND_BYTES, so that the band's rows, transposed,
 * and its output rows stay in L2 between the transposes and the kernel. */
#define DW_BAND_BYTES (256 * 1024)

int64_t knhwc_dw_nchw_rows(const knhwc_geom *g)
{
    const int64_t row = g->sh * g->w * g->cs * (int64_t)sizeof(float); /* input bytes an output row adds */
    int64_t r = row > 0 ? DW_BAND_BYTES / row : g->oh;
    return r < 1 ? 1 : r > g->oh ? g->oh : r;
}

/* A band of `rows` output rows: its input rows, its output rows (floats). */
static void dw_band_floats(const knhwc_geom *g, int64_t rows, int64_t *in, int64_t *out)
{
    int64_t ir = (rows - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    *in = (ir < g->h ? ir : g->h) * g->w * g->cs;
    *out = rows * g->ow * g->cs;
}

int64_t knhwc_dw_nchw_floats(const knhwc_geom *g, int64_t rows, int threads)
{
    int64_t in, out, f;
    if (rows < 1 || rows > g->oh) rows = knhwc_dw_nchw_rows(g);
    dw_band_floats(g, rows, &in, &out);
    if (__builtin_add_overflow(in, out + 16, &f) ||
        __builtin_mul_overflow(f, (int64_t)(threads > 1 ? threads : 1), &f))
        return -1;
    return f;
}

void knhwc_dw_nchw(const knhwc_geom *g, int64_t n, const float *x, const float *wt, const float *bias,
                   kact act, float *y, int64_t ys, int64_t rows, float *scratch, int threads)
{
    __typeof__(dw_impls[0]) *im = KISA_PICK(dw_impls);
    if (rows < 1 || rows > g->oh) rows = knhwc_dw_nchw_rows(g);
    const int64_t C = g->cs, hw = g->h * g->w, ohw = g->oh * g->ow, nb = (g->oh + rows - 1) / rows;
    int64_t in, out;
    dw_band_floats(g, rows, &in, &out);
    int lo, hi; /* the outputs whose window lies inside a row, as knhwc_dw's */
    kwin_inner((int)g->ow, (int)g->w, (int)g->kw, (int)g->sw, (int)g->dw, (int)g->pl, &lo, &hi);
#pragma omp parallel num_threads(threads > 1 ? threads : 1) if (threads > 1)
    {
        float *xb = scratch + (in + out + 16) * omp_get_thread_num(), *yb = xb + in;
        int64_t prev = -1, pa = 0, pb = 0; /* this thread's last band, its input rows [pa, pb) */
#pragma omp for schedule(static)
        for (int64_t t = 0; t < n * nb; t++) {
            const int64_t b = t / nb, oy0 = t % nb * rows, oy1 = oy0 + rows < g->oh ? oy0 + rows : g->oh;
            /* the input rows [ia, ib) the band reads (the others are padding) */
            int64_t ia = oy0 * g->sh - g->pt, ib = (oy1 - 1) * g->sh - g->pt + (g->kh - 1) * g->dh + 1;
            ia = ia < 0 ? 0 : ia;
            ib = ib > g->h ? g->h : ib < ia ? ia : ib;
            /* the band as an image of ib - ia rows, its first output row's window pt above it */
            knhwc_geom gb = *g;
            gb.h = ib - ia;
            gb.pt = g->pt + ia - oy0 * g->sh;
            gb.oh = oy1 - oy0;
            /* the rows the last band of the image had too (a 3x3's 2 at stride 1) moved up
             * in L2, not transposed again */
            int64_t from = ia;
            if (prev == t - 1 && t % nb && pb > ia && ia >= pa) {
                memmove(xb, xb + (ia - pa) * g->w * C, sizeof(float) * (size_t)((pb - ia) * g->w * C));
                from = pb;
            }
            if (ib > from)
                transpose_ld(x + b * C * hw + from * g->w, C, (ib - from) * g->w, hw,
                             xb + (from - ia) * g->w * C, C);
            prev = t, pa = ia, pb = ib;
            for (int64_t oy = 0; oy < gb.oh; oy++)
                im->row(&gb, xb, wt, bias, oy, lo, hi, act, NULL, yb + oy * g->ow * C, NULL);
            transpose_ld(yb, gb.oh * g->ow, C, C, y + b * ys + oy0 * g->ow, ohw);
        }
    }
}

typedef void (*dwq_row_fn)(const knhwc_geom *, const uint8_t *, float, const float *,
                           const int32_t *, const float *, const float *, int64_t, kact, float *, uint8_t *, float, float);
static const struct {
    kisa isa;
    dwq_row_fn row;
} dwq_impls[] = {
#if KISA_X86
    {KISA_AVX512, nhwc_dwq_row_avx512},
    {KISA_AVX2, nhwc_dwq_row_avx2},
#endif
    {KISA_PORTABLE, nhwc_dwq_row_portable},
};

void knhwc_dw_u8(const knhwc_geom *g, int64_t n, const uint8_t *x, int32_t xz, const float *wq,
                 const float *scale, const float *bias, kact act, float *y, uint8_t *yq, float ys,
                 int32_t yz, int threads)
{
    __typeof__(dwq_impls[0]) *im = KISA_PICK(dwq_impls);
    const int64_t rows = n * g->oh, in_img = g->h * g->w * g->cs, orow = g->ow * g->cs;
    /* uint8 out straight from the row's registers when its activation is one of these */
    const bool fuse = yq && (act.f == KF_NONE || act.f == KF_RELU || act.f == KF_CLIP);
    /* the 3x3's weights as its VNNI interior takes them, once (nhwc_dwq.h) */
    int32_t wv[3 * KDWQ3_PACK_C];
    const bool pack = im->isa == KISA_AVX512 && g->kh == 3 && g->kw == 3 && g->cs >= 16 &&
                      g->cs <= KDWQ3_PACK_C && knhwc_dwq3_vnni_ok();
    if (pack) knhwc_dwq3_pack(wq, g->cs, wv);
#pragma omp parallel num_threads(threads > 1 ? threads : 1) if (threads > 1)
    {
        float *own = yq ? y + omp_get_thread_num() * orow : NULL; /* this thread's row */
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            int64_t b = r / g->oh, oy = r % g->oh;
            float *yr = yq ? own : y + r * orow;
            im->row(g, x + b * in_img, (float)xz, wq, pack ? wv : NULL, scale, bias, oy, act, yr,
                    fuse ? yq + r * orow : NULL, fuse ? 1.0f / ys : 0, (float)yz);
            if (yq && !fuse) qg_requant_u8(yr, orow, ys, yz, yq + r * orow);
        }
    }
}

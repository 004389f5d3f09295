/* Implicit-GEMM convolution (conv_ig.h): per block of output rows, the
 * input rows it reads padded into the scratch, then register tiles of M
 * output pixels by up to four vectors of output channels (conv_ig_tmpl.h,
 * one instance per ISA) that sum every run of taps in their registers and
 * store C once, the epilogue applied before the store. At stride 1 the
 * padded rows are one array of pixels (each row's kw - 1 pad columns
 * computed and dropped), so a tile may span output rows and none is cut
 * short at a row's end. A small image is one block of rows, so B (large
 * there: ResNet's 7x7x512) passes once. */
#include <omp.h>
#include <string.h>

#include "kernels/conv_ig.h"
#include "kernels/isa.h"

/* One call of a register tile: pixels i < m (m the tile's rows) of A at
 * a + i * rsa, run q's taps at roff[q] on (k floats), against columns
 * [j0, j0 + nc) of B (run q's NR-wide panels from b[q], sb floats apart);
 * pixel i's row of C at out[i] (NULL: computed, not stored), its index in
 * the epilogue's rows pix[i]. */
typedef struct kig_tile {
    int64_t k, runs;
    const int64_t *roff;
    const float *a;
    int64_t rsa;
    const float *const *b;
    int64_t sb, nr;
    int64_t j0;
    int64_t boff[4]; /* column j0 + j * VL's offset in a run's panels (set per call) */
    int nc;
    const gemm_epi *epi;
    bool fuse; /* the epilogue in registers, else none (the caller's gemm_epi_tile) */
    /* fuse's common forms inline (quick): a bias by column or none, then
     * act (none, Relu, or Clip to [lo, hi]); no scale, residual or bias by
     * row. Called out of line, the general epilogue took a sixth of
     * squeezenet's 55x55x16 -> 64 (perf, bench-conv-native). */
    bool quick;
    int act;
    float lo, hi;
    const float *bias;
    float *out[KIG_MR];
    int64_t pix[KIG_MR];
} kig_tile;
typedef void (*kig_tile_fn)(const kig_tile *t);

#if KISA_X86 /* the vector instances: x86-64 only */
#include "kernels/vec_avx512.h"
#include "kernels/conv_ig_tmpl.h"
#include "kernels/vec_end.h"
#include "kernels/vec_avx2.h"
#include "kernels/conv_ig_tmpl.h"
#include "kernels/vec_end.h"
#endif
#include "kernels/vec_portable.h"
#include "kernels/conv_ig_tmpl.h"
#include "kernels/vec_end.h"

typedef struct kig_impl {
    kisa isa;
    const kig_tile_fn (*tiles)[KIG_MR]; /* [vectors - 1][rows - 1] */
    const int *rows;                    /* the most rows at 1 to 4 vectors */
    int vl;                             /* floats per vector */
    int nv; /* vectors of columns per tile at full width: AVX-512's 6x64 (24
             * accumulators, 10 loads per 24 FMAs); AVX2's 6x16 (12, 8 per
             * 12), where four vectors leave 2 rows (8, 6 per 8: B's 4
             * vectors from L2 per 8 FMAs) */
} kig_impl;
static const kig_impl kig_impls[] = {
#if KISA_X86
    {KISA_AVX512, kig_tiles_avx512, kig_rows_avx512, 16, 4},
    {KISA_AVX2, kig_tiles_avx2, kig_rows_avx2, 8, 2},
#endif
    {KISA_PORTABLE, kig_tiles_portable, kig_rows_portable, 1, 4},
};

/* The padded block's floats a thread holds (the input rows of a block of
 * output rows): the whole image up to KIG_IMAGE_FLOATS, else blocks of
 * about KIG_BLOCK_FLOATS; and the floats of B's columns a pass over the
 * block's rows reads (NR columns at least). */
#define KIG_IMAGE_FLOATS ((int64_t)1 << 17)
#define KIG_BLOCK_FLOATS ((int64_t)1 << 16)
#define KIG_B_FLOATS ((int64_t)96 << 10)
/* Up to this many output channels, conv_row's way (a GEMM per run). */
#define KIG_RUNS_N 16

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Taps per run along x: the kernel row when its taps are adjacent pixels. */
static int64_t run_taps(const knhwc_geom *g) { return g->dw == 1 ? g->kw : 1; }

int64_t kig_runs(const knhwc_geom *g) { return g->kh * (g->kw / run_taps(g)); }

void kig_run_rows(const knhwc_geom *g, int64_t r, int64_t *row0, int64_t *rows)
{
    const int64_t per = g->kw / run_taps(g), ky = r / per, kx0 = (r % per) * run_taps(g);
    *row0 = (ky * g->kw + kx0) * g->c;
    *rows = run_taps(g) * g->c;
}

/* Whether x is read where it is: NHWC, the group's channels the pixel's
 * own, every window inside the image. */
static bool in_place(const knhwc_geom *g, bool nchw)
{
    return !nchw && g->c == g->cs && g->c0 == 0 && g->pt == 0 && g->pl == 0 &&
           (g->oh - 1) * g->sh + (g->kh - 1) * g->dh < g->h &&
           (g->ow - 1) * g->sw + (g->kw - 1) * g->dw < g->w;
}

/* The padded row's pixels ((ow-1)*sw + (kw-1)*dw + 1), input rows of r
 * output rows, and output rows per block on t threads. */
static int64_t pad_w(const knhwc_geom *g) { return (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1; }
static int64_t rows_in(const knhwc_geom *g, int64_t r) { return (r - 1) * g->sh + (g->kh - 1) * g->dh + 1; }

static int64_t block_rows(const knhwc_geom *g, int t)
{
    const int64_t row = pad_w(g) * g->c > 0 ? pad_w(g) * g->c : 1;
    if (t <= 1 && rows_in(g, g->oh) <= KIG_IMAGE_FLOATS / row) return g->oh;
    int64_t r = (KIG_BLOCK_FLOATS / row - (g->kh - 1) * g->dh - 1) / g->sh + 1;
    r = r < 1 ? 1 : r;
    if (t > 1) r = min64(r, (g->oh + t - 1) / t);
    return min64(r, g->oh);
}

/* One thread's padded block on t threads, in floats (a multiple of 16);
 * 0 on overflow. */
static size_t block_floats(const knhwc_geom *g, int t)
{
    int64_t per;
    if (__builtin_mul_overflow(rows_in(g, block_rows(g, t)), pad_w(g), &per) ||
        __builtin_mul_overflow(per, g->c, &per) || __builtin_add_overflow(per, 15, &per))
        return 0;
    return (size_t)(per / 16 * 16);
}

bool kig_scratch(const knhwc_geom *g, bool nchw, int threads, size_t *floats)
{
    const int t = threads > 1 ? threads : 1;
    *floats = 0;
    if (in_place(g, nchw)) return true;
    size_t per = block_floats(g, t);
    return per && !__builtin_mul_overflow(per, (size_t)t, floats);
}

/* Input rows [pr0, pr0 + nrows) of the padded image (row pr is input row
 * pr - pt), wp pixels of the group's c channels each, into xp. */
static void pad_rows(const knhwc_geom *g, bool nchw, const float *x, int64_t pr0, int64_t nrows,
                     float *xp)
{
    const int64_t c = g->c, wp = pad_w(g);
    const int64_t lo = min64(g->pl, wp), hi = min64(g->pl + g->w, wp); /* pixels inside */
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t iy = pr0 + r - g->pt;
        float *d = xp + r * wp * c;
        if (iy < 0 || iy >= g->h || hi <= lo) {
            memset(d, 0, sizeof(float) * (size_t)(wp * c));
            continue;
        }
        memset(d, 0, sizeof(float) * (size_t)(lo * c));
        memset(d + hi * c, 0, sizeof(float) * (size_t)((wp - hi) * c));
        if (nchw && c == 3) { /* a stem's image: d written in order, the 3 planes side by side */
            const float *s0 = x + (g->c0 * g->h + iy) * g->w + (lo - g->pl), *s1 = s0 + g->h * g->w,
                        *s2 = s1 + g->h * g->w;
            float *dp = d + lo * 3;
            for (int64_t px = 0; px < hi - lo; px++, dp += 3) {
                dp[0] = s0[px];
                dp[1] = s1[px];
                dp[2] = s2[px];
            }
        } else if (nchw) { /* each channel's row down d's column */
            for (int64_t ci = 0; ci < c; ci++) {
                const float *s = x + ((g->c0 + ci) * g->h + iy) * g->w + (lo - g->pl);
                for (int64_t px = lo; px < hi; px++) d[px * c + ci] = s[px - lo];
            }
        } else if (g->cs == c) {
            memcpy(d + lo * c, x + (iy * g->w + lo - g->pl) * c, sizeof(float) * (size_t)((hi - lo) * c));
        } else {
            const float *s = x + (iy * g->w + lo - g->pl) * g->cs + g->c0;
            for (int64_t px = lo; px < hi; px++) memcpy(d + px * c, s + (px - lo) * g->cs, sizeof(float) * (size_t)c);
        }
    }
}

/* The other way, for one vector of columns (n <= KIG_RUNS_N): columns
 * [j0, j1) of output row oy from its input rows at xr (rows pitch floats
 * apart, pixels cp apart) as one gemm_f32 per run of taps on the skinny
 * path (A read in place), each run after the first adding the row the one
 * before wrote as its residual, the epilogue on the last. j0 is a multiple
 * of B's panel width. At 16 columns the skinny kernel's paired-k loads
 * (gemm_avx512.c) beat a tile's one broadcast per FMA: dbnet's 3x3 64->16
 * at 160x160 0.92x oneDNN against 1.13x (bench/RESULTS.md). */
static ait_status conv_row(const knhwc_geom *g, const float *xr, int64_t pitch, int64_t cp,
                           const gemm_packed *runs, int64_t j0, int64_t j1, float *y, int64_t ldy,
                           int64_t oy, const gemm_epi *epi, ait_error *e)
{
    static const gemm_config in_place_a = {.pack_a = GEMM_PACKA_OFF, .threads = 1};
    const int64_t nr = kig_runs(g), per = g->kw / run_taps(g), i0 = oy * g->ow, n = j1 - j0;
    const int pw = gemm_kernel_nr(runs[0].kern);
    float *yr = y + i0 * ldy + j0;
    gemm_epi last = *epi; /* the epilogue at this row and these columns */
    if (last.res) last.res += i0 * last.ldr + j0;
    if (last.bias_mode == GEMM_BIAS_ROW) last.bias += i0;
    if (last.bias_mode == GEMM_BIAS_COL) last.bias += j0;
    /* the last run's sum and the epilogue in the kernel's registers, unless
     * the epilogue has its own residual, a scale (it would scale the last
     * run's product only) or runs after the store */
    const bool merge = !last.res && !last.scaled && gemm_epi_fusable(&last);
    for (int64_t r = 0; r < nr; r++) {
        const int64_t ky = r / per, kx0 = (r % per) * run_taps(g);
        /* the run's panels of these columns (NR wide, k x NR each) */
        const gemm_packed pb = {.kern = runs[r].kern, .k = runs[r].k, .mn = n,
                                .data = runs[r].data + j0 / pw * runs[r].k * pw};
        gemm_args a = {.m = g->ow, .n = n, .k = runs[r].k,
                       .a = xr + ky * g->dh * pitch + kx0 * g->dw * cp, .rsa = g->sw * cp, .csa = 1,
                       .pb = &pb, .c = yr, .ldc = ldy, .threads = 1, .cfg = &in_place_a};
        const gemm_epi sum = {.res = yr, .ldr = ldy}; /* what the runs before wrote */
        if (r == nr - 1 && (merge || r == 0)) {
            a.epi = last;
            if (r > 0) {
                a.epi.res = yr;
                a.epi.ldr = ldy;
                a.epi.res_scale = 1.0f;
                a.epi.res_after = false;
            }
        } else if (r > 0) {
            a.epi = sum;
        }
        TRY(gemm_f32(&a, e));
    }
    if (nr > 1 && !merge) gemm_epi_tile(&last, yr, ldy, 0, 0, (int)g->ow, (int)n);
    return AIT_OK;
}

/* A block's shared state: the tile's fixed fields, the chosen ISA's
 * tiles, the columns per call (cw, a multiple of the vector) and the rows
 * per tile at full width (mr). */
typedef struct kig_ctx {
    const knhwc_geom *g;
    const kig_impl *im;
    kig_tile t;
    int64_t cw;
    int mr;
    float *y;
    int64_t ldy;
    const gemm_packed *runs; /* B, for conv_row */
    bool by_runs;            /* conv_row's way */
    ait_status st;           /* conv_row's failure */
    ait_error *e;
} kig_ctx;

/* Output pixels q in [0, qend) of a span whose pixel q reads A at a + q *
 * rsa and is output row oy0 + q / vw, column q % vw (not stored past ow);
 * columns [j0, j1), tiles of mr pixels outer, cw columns per call inner
 * (the tile's A stays in L1 while B's columns pass). The pixels' rows of C
 * and B's panel offsets are found without a division per tile (a tile
 * of K 144, squeezenet's, is under 2000 cycles of FMAs), and each call's
 * rows of C are prefetched for writing as it starts: its stores come at
 * its end, and C's lines, new, are read from memory for ownership. */
static void span(kig_ctx *cx, const float *a, int64_t vw, int64_t qend, int64_t oy0, int64_t j0,
                 int64_t j1)
{
    const knhwc_geom *g = cx->g;
    kig_tile *t = &cx->t;
    const int vl = cx->im->vl;
    /* each call's column offsets in B's panels, computed once */
    enum { CHUNKS = 16 };
    int64_t boff[CHUNKS][4];
    const int64_t nch = (j1 - j0 + cx->cw - 1) / cx->cw;
    for (int64_t c = 0; c < nch && c < CHUNKS; c++)
        for (int j = 0; j < 4; j++) {
            const int64_t col = j0 + c * cx->cw + j * vl;
            boff[c][j] = col / t->nr * t->sb + col % t->nr;
        }
    int64_t oy = oy0, ox = 0; /* pixel q0's */
    for (int64_t q0 = 0; q0 < qend; q0 += cx->mr) {
        const int m = (int)min64(cx->mr, qend - q0);
        t->a = a + q0 * t->rsa;
        for (int i = 0; i < m; i++) {
            t->pix[i] = oy * g->ow + ox;
            t->out[i] = ox < g->ow ? cx->y + t->pix[i] * cx->ldy : NULL;
            if (++ox == vw) ox = 0, oy++;
        }
        int64_t c = 0;
        for (int64_t jc = j0; jc < j1; jc += cx->cw, c++) {
            t->j0 = jc;
            t->nc = (int)min64(cx->cw, j1 - jc);
            if (c < CHUNKS) {
                memcpy(t->boff, boff[c], sizeof t->boff);
            } else {
                for (int j = 0; j < 4; j++) {
                    const int64_t col = jc + j * vl;
                    t->boff[j] = col / t->nr * t->sb + col % t->nr;
                }
            }
            for (int i = 0; i < m; i++) {
                const char *o = (const char *)t->out[i];
                if (!o) continue;
                o += jc * (int64_t)sizeof(float);
                for (int64_t b = 0; b < t->nc * (int64_t)sizeof(float); b += 64) __builtin_prefetch(o + b, 1, 3);
                __builtin_prefetch(o + t->nc * (int64_t)sizeof(float) - 1, 1, 3);
            }
            cx->im->tiles[(t->nc + vl - 1) / vl - 1][m - 1](t);
            if (!t->fuse)
                for (int i = 0; i < m; i++)
                    if (t->out[i]) gemm_epi_tile(t->epi, t->out[i] + jc, cx->ldy, t->pix[i], jc, 1, t->nc);
        }
    }
}

/* Output rows [oy0, oy1), columns [j0, j1), from their input rows at xa
 * (rows pitch floats apart, pixels cp apart). When a row of input rows
 * (sh * pitch) is a whole number vw of pixel steps (sw * cp), as at stride
 * 1, the rows are one span of vw pixels a row, if that takes fewer tiles
 * than a span per row. */
static void rows(kig_ctx *cx, const float *xa, int64_t pitch, int64_t cp, int64_t oy0, int64_t oy1,
                 int64_t j0, int64_t j1)
{
    const knhwc_geom *g = cx->g;
    const int64_t rsa = g->sw * cp, n = oy1 - oy0, step = g->sh * pitch, mr = cx->mr;
    cx->t.rsa = rsa;
    if (cx->by_runs) {
        for (int64_t oy = oy0; oy < oy1 && cx->st == AIT_OK; oy++)
            cx->st = conv_row(g, xa + (oy - oy0) * step, pitch, cp, cx->runs, j0, j1, cx->y, cx->ldy, oy,
                              cx->t.epi, cx->e);
        return;
    }
    if (step % rsa == 0) {
        const int64_t vw = step / rsa, qend = (n - 1) * vw + g->ow;
        if ((qend + mr - 1) / mr <= n * ((g->ow + mr - 1) / mr)) {
            span(cx, xa, vw, qend, oy0, j0, j1);
            return;
        }
    }
    for (int64_t oy = oy0; oy < oy1; oy++) span(cx, xa + (oy - oy0) * step, g->ow, g->ow, oy, j0, j1);
}

ait_status kig_conv(const knhwc_geom *g, bool nchw, const float *x, const gemm_packed *runs,
                    int64_t n, float *y, int64_t ldy, const gemm_epi *epi, float *scratch,
                    int threads, ait_error *e)
{
    const int t = threads > 1 ? threads : 1;
    const int64_t nruns = kig_runs(g), nr = gemm_kernel_nr(runs[0].kern);
    const kig_impl *im = KISA_PICK(kig_impls);
    if (nruns > KIG_RUNS_MAX || nr % im->vl)
        return err_set(e, AIT_E_UNSUPPORTED, "implicit GEMM: %lld runs of taps, %lld-column panels",
                        (long long)nruns, (long long)nr);
    const float *bq[KIG_RUNS_MAX];
    for (int64_t q = 0; q < nruns; q++) bq[q] = runs[q].data;
    /* B's columns per pass: a multiple of its panel width */
    const int64_t kdim = g->kh * g->kw * g->c;
    int64_t cb = KIG_B_FLOATS / (kdim > 0 ? kdim : 1) / nr * nr;
    cb = cb < nr ? nr : cb;
    kig_ctx cx0 = {.g = g, .im = im, .y = y, .ldy = ldy, .runs = runs, .by_runs = n <= KIG_RUNS_N, .e = e};
    /* columns per tile: up to four vectors, within a pass; passes a whole
     * number of tiles wide */
    cx0.cw = min64(im->nv * im->vl, (min64(cb, n) + im->vl - 1) / im->vl * im->vl);
    if (cb > cx0.cw) cb = cb / cx0.cw * cx0.cw;
    cx0.mr = im->rows[cx0.cw / im->vl - 1];
    cx0.t = (kig_tile){.k = runs[0].k, .runs = nruns, .b = bq, .sb = runs[0].k * nr, .nr = nr,
                       .epi = epi, .fuse = gemm_epi_fusable(epi) && epi->act != GEMM_ACT_LEAKY};
    cx0.t.quick = cx0.t.fuse && !epi->scaled && !epi->res && epi->bias_mode != GEMM_BIAS_ROW &&
                  (epi->act == GEMM_ACT_NONE || epi->act == GEMM_ACT_RELU || epi->act == GEMM_ACT_CLIP);
    cx0.t.act = epi->act;
    cx0.t.lo = epi->lo;
    cx0.t.hi = epi->hi;
    cx0.t.bias = epi->bias_mode == GEMM_BIAS_COL ? epi->bias : NULL;
    /* each run's first tap in the rows read: pitch floats a row, cp a pixel */
    int64_t roff_in[KIG_RUNS_MAX], roff_pad[KIG_RUNS_MAX];
    const int64_t per = g->kw / run_taps(g), wp = pad_w(g);
    for (int64_t q = 0; q < nruns; q++) {
        const int64_t ky = q / per, kx0 = (q % per) * run_taps(g);
        roff_in[q] = ky * g->dh * g->w * g->cs + kx0 * g->dw * g->cs;
        roff_pad[q] = ky * g->dh * wp * g->c + kx0 * g->dw * g->c;
    }
    ait_status st = AIT_OK;
    if (in_place(g, nchw)) { /* the image's rows as they are, rows split between threads */
        cx0.t.roff = roff_in;
        const int64_t nb = min64(t, g->oh), rb = (g->oh + nb - 1) / nb;
#pragma omp parallel for num_threads(t) if (t > 1) schedule(static)
        for (int64_t b = 0; b < nb; b++) {
            kig_ctx cx = cx0;
            const int64_t oy0 = b * rb, oy1 = min64(oy0 + rb, g->oh);
            for (int64_t j0 = 0; j0 < n && oy0 < oy1; j0 += cb)
                rows(&cx, x + oy0 * g->sh * g->w * g->cs, g->w * g->cs, g->cs, oy0, oy1, j0, min64(j0 + cb, n));
            if (cx.st != AIT_OK) {
#pragma omp critical
                st = cx.st;
            }
        }
        return st;
    }
    cx0.t.roff = roff_pad;
    const int64_t rb = block_rows(g, t), nb = (g->oh + rb - 1) / rb;
    const size_t pf = block_floats(g, t);
#pragma omp parallel for num_threads(t) if (t > 1) schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        kig_ctx cx = cx0;
        float *xp = scratch + (size_t)omp_get_thread_num() * pf;
        const int64_t oy0 = b * rb, oy1 = min64(oy0 + rb, g->oh);
        pad_rows(g, nchw, x, oy0 * g->sh, rows_in(g, oy1 - oy0), xp);
        for (int64_t j0 = 0; j0 < n; j0 += cb) rows(&cx, xp, wp * g->c, g->c, oy0, oy1, j0, min64(j0 + cb, n));
        if (cx.st != AIT_OK) {
#pragma omp critical
            st = cx.st;
        }
    }
    return st;
}

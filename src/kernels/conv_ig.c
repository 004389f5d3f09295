/* Implicit-GEMM convolution (conv_ig.h): per block of output rows, the
 * input rows it reads padded into the scratch, then per block of B's
 * columns that stays in L2 and per output row one gemm_f32 per run of taps
 * on the skinny path (A read in place), each run after the first adding
 * the row the one before wrote as its residual. A small image is one block
 * of rows, so B (large there: ResNet's 7x7x512) passes once. */
#include <omp.h>
#include <string.h>

#include "kernels/conv_ig.h"

/* The padded block's floats a thread holds (the input rows of a block of
 * output rows): the whole image up to KIG_IMAGE_FLOATS, else blocks of
 * about KIG_BLOCK_FLOATS; and the floats of B's columns a pass over the
 * block's rows reads (NR columns at least). */
#define KIG_IMAGE_FLOATS ((int64_t)1 << 17)
#define KIG_BLOCK_FLOATS ((int64_t)1 << 16)
#define KIG_B_FLOATS ((int64_t)96 << 10)

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
        if (nchw) { /* each channel's row down d's column */
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

/* Columns [j0, j1) of output row oy from its input rows at xr (rows pitch
 * floats apart, pixels cp apart): the runs in turn, the epilogue on the
 * last. j0 is a multiple of B's panel width. */
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
     * the epilogue has its own residual or runs after the store */
    const bool merge = !last.res && gemm_epi_fusable(&last);
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

ait_status kig_conv(const knhwc_geom *g, bool nchw, const float *x, const gemm_packed *runs,
                    int64_t n, float *y, int64_t ldy, const gemm_epi *epi, float *scratch,
                    int threads, ait_error *e)
{
    const int t = threads > 1 ? threads : 1;
    /* B's columns per pass: a multiple of its panel width */
    const int64_t pw = gemm_kernel_nr(runs[0].kern), kdim = g->kh * g->kw * g->c;
    int64_t cb = KIG_B_FLOATS / (kdim > 0 ? kdim : 1) / pw * pw;
    cb = cb < pw ? pw : cb;
    if (in_place(g, nchw)) { /* the image's rows as they are */
        const int64_t pitch = g->w * g->cs;
        ait_status st = AIT_OK;
        for (int64_t j0 = 0; j0 < n; j0 += cb) {
#pragma omp parallel for num_threads(t) if (t > 1) schedule(static)
            for (int64_t oy = 0; oy < g->oh; oy++) {
                ait_status s = conv_row(g, x + oy * g->sh * pitch, pitch, g->cs, runs, j0,
                                        min64(j0 + cb, n), y, ldy, oy, epi, e);
                if (s != AIT_OK) {
#pragma omp critical
                    st = s;
                }
            }
        }
        return st;
    }
    const int64_t rb = block_rows(g, t), wp = pad_w(g), nb = (g->oh + rb - 1) / rb;
    const size_t per = block_floats(g, t);
    ait_status st = AIT_OK;
#pragma omp parallel for num_threads(t) if (t > 1) schedule(static)
    for (int64_t b = 0; b < nb; b++) {
        float *xp = scratch + (size_t)omp_get_thread_num() * per;
        const int64_t oy0 = b * rb, oy1 = min64(oy0 + rb, g->oh);
        pad_rows(g, nchw, x, oy0 * g->sh, rows_in(g, oy1 - oy0), xp);
        for (int64_t j0 = 0; j0 < n; j0 += cb)
            for (int64_t oy = oy0; oy < oy1; oy++) {
                ait_status s = conv_row(g, xp + (oy - oy0) * g->sh * wp * g->c, wp * g->c, g->c, runs,
                                        j0, min64(j0 + cb, n), y, ldy, oy, epi, e);
                if (s != AIT_OK) {
#pragma omp critical
                    st = s;
                }
            }
    }
    return st;
}

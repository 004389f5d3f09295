/* GEMM micro-kernels as data (private to src/kernels/gemm*.c): one row per
 * ISA and register shape, as BLIS's bli_cntx_init_<arch>.c registers them.
 * Each ISA's file (gemm_avx512.c, gemm_avx2.c, gemm_c.c) defines its
 * functions with __attribute__((target)), so the build needs no -m flags;
 * gemm_table.c lists the rows and picks one by CPUID. */
#ifndef AIT_KERNELS_GEMM_KERN_H
#define AIT_KERNELS_GEMM_KERN_H
#include "kernels/gemm.h"

/* The epilogue a micro-kernel or skinny kernel applies in registers before
 * its store, so C is written once:
 *   v = v * scale + brow[i] + bcol[j]; v += rk * res[i*ldr + j] (!res_after);
 *   v = act(v); v += rk * res[i*ldr + j] (res_after).
 * The driver passes it for gemm_epi's forms that fit (every activation but
 * the transcendental ones: gemm_epi_fusable) and runs gemm_epi_tile
 * after the store for the rest and for the packed path's edge tiles. */
enum {
    GEMM_FUSE_NONE,
    GEMM_FUSE_RELU,        /* max(v, 0): NaN to 0, as gemm_epi_tile */
    GEMM_FUSE_CLIP,        /* min(max(v, lo), hi): NaN kept */
    GEMM_FUSE_LEAKY,       /* v < 0: lo * v */
    GEMM_FUSE_HARDSIGMOID, /* max(0, min(1, lo * v + hi)) */
    GEMM_FUSE_HARDSWISH,   /* v * max(0, min(1, v / 6 + 0.5)) */
};
typedef struct gemm_fuse {
    float scale;       /* 1: none */
    const float *brow; /* bias per row, at the tile's first row, or NULL */
    const float *bcol; /* bias per column, at the tile's first column, or NULL */
    const float *res;  /* residual at the tile's (i0, j0), or NULL */
    int64_t ldr;
    float rk; /* the residual's scale */
    bool res_after;
    int act; /* GEMM_FUSE_* */
    float lo, hi;
    /* Not part of the epilogue: npf lines of B's next columns (from pf on)
     * that a zmm skinny kernel prefetches into L2 over its K loop, one per
     * 4 k (the driver's share of them for this call: gemm.c's skinny), so the
     * next width's weights are in L2 when its first call reads them. */
    const char *pf;
    int64_t npf;
} gemm_fuse;

/* The forms of epilogue a kernel's stores take without a test per vector
 * (gemm_fuse_form): a column bias or none, then no activation, Relu or
 * Clip (a 1x1 Conv's bias and activation); ANY runs the general code. At K
 * 16 to 64 a tile's FMAs are a few hundred instructions, and the general
 * code's tests and jump per vector nearly as many (the fused bias + Relu
 * cost 1.3x to 1.8x the GEMM at 3025x64x16, 729x128x32). */
enum { GEMM_FORM_NONE, GEMM_FORM_BIAS, GEMM_FORM_RELU, GEMM_FORM_CLIP, GEMM_FORM_ANY };
static inline int gemm_fuse_form(const gemm_fuse *f)
{
    if (!f) return GEMM_FORM_NONE;
    if (f->scale != 1.0f || f->brow || f->res) return GEMM_FORM_ANY;
    return f->act == GEMM_FUSE_NONE   ? (f->bcol ? GEMM_FORM_BIAS : GEMM_FORM_NONE)
           : f->act == GEMM_FUSE_RELU ? GEMM_FORM_RELU
           : f->act == GEMM_FUSE_CLIP ? GEMM_FORM_CLIP
                                      : GEMM_FORM_ANY;
}

/* STORE(FORM) once per form, FORM a constant in each: a tile's stores
 * with no test per vector (each ISA's kernels). */
#define FORM_SWITCH(form, STORE)                                                              \
    switch (form) {                                                                           \
    case GEMM_FORM_NONE: STORE(GEMM_FORM_NONE); break;                                        \
    case GEMM_FORM_BIAS: STORE(GEMM_FORM_BIAS); break;                                        \
    case GEMM_FORM_RELU: STORE(GEMM_FORM_RELU); break;                                        \
    case GEMM_FORM_CLIP: STORE(GEMM_FORM_CLIP); break;                                        \
    default: STORE(GEMM_FORM_ANY); break;                                                     \
    }

/* f moved to column j of its tile (a GEMV's panel). */
static inline gemm_fuse gemm_fuse_at_col(const gemm_fuse *f, int64_t j)
{
    gemm_fuse g = *f;
    if (g.bcol) g.bcol += j;
    if (g.res) g.res += j;
    return g;
}

/* The full MR x NR tile: c[i*ldc + j] (+= when acc) sum_p a[p*MR + i] * b[p*NR + j]
 * over p < k, from packed panels, then f's epilogue when f is not NULL. */
typedef void (*gemm_ukr_fn)(int64_t k, const float *a, const float *b, float *c, int64_t ldc,
                            int acc, const gemm_fuse *f);
/* Skinny rows, A read in place: out[i*ldo + j] = sum_p a[i*rsa + p*csa] * B[p][j]
 * for i < m, j < nc, B's column j read from its packed panels (NR wide, sb
 * floats apart: column j of row p at b[(j / NR) * sb + p * NR + j % NR]).
 * nc is at most the row's skinny_nv vectors, m at most skinny_rows[vectors - 1];
 * only the nc columns are written (out is C itself), with f's epilogue
 * (its pointers at out's first row and column) when f is not NULL. */
typedef void (*gemm_skinny_fn)(int64_t k, int m, int nc, const float *a, int64_t rsa, int64_t csa,
                               const float *b, int64_t sb, float *out, int64_t ldo,
                               const gemm_fuse *f);
/* The skinny path at M = 1 (a decoder's GEMV, B streamed from memory once):
 * C panels of B at once, panel p0 + c * per for c < C (NR wide, k * NR
 * floats each from b, zeros past n), against one row of A (a[p * csa]):
 * out[j] = sum_p a[p * csa] * B[p][j] for the columns j < n of those
 * panels, with f's epilogue (its pointers at column 0) when f is not NULL.
 * The driver (gemm.c's gemv) cuts the panels into C runs of `per` and
 * walks them side by side, each run one long stream through consecutive
 * panels: one core reads memory faster with more streams in flight, and a
 * stream that runs on across panels is never started again. gemv[c - 1]
 * takes c panels, c <= gemv_ns. */
typedef void (*gemm_gemv_fn)(int64_t k, const float *a, int64_t csa, const float *b, int64_t p0,
                             int64_t per, int64_t n, float *out, const gemm_fuse *f);
/* The skinny path's rows outer in one call (gemm_config.order 5): rows
 * [0, m) of a row-major A (a[i*rsa + p]) against all n columns of B's
 * packed panels (NR wide, sb floats apart), C written a group of rows at a
 * time through every column, with f's epilogue (its pointers at C's row 0,
 * column 0; a form the kernels fuse) when f is not NULL. Returns the rows
 * done, a multiple of the kernel's rows per group (the caller does the
 * rest in skinny calls). */
typedef int64_t (*gemm_rows_fn)(int64_t k, int64_t m, int64_t n, const float *a, int64_t rsa,
                                const float *b, int64_t sb, float *c, int64_t ldc, const gemm_fuse *f);

struct gemm_kernel {
    const char *name;  /* what gemm_kernel_find takes */
    const char *needs; /* core/cpu.h features */
    int mr, nr;
    gemm_ukr_fn ukr;
    gemm_skinny_fn skinny;
    int skinny_vw, skinny_nv; /* floats per vector, most vectors per call */
    int skinny_rows[4];       /* most rows per call at 1 to 4 vectors */
    /* Blocking: 0 derives it from the cache sizes (gemm_table.c). */
    int kc, mc, nc;
    bool tried; /* a variant the tuner tries (gemm_kernel_tried) */
    /* In 512-bit registers: the default (gemm_kernel_best) only on CPUs
     * that run 512-bit FMAs at full width, not as two 256-bit halves. */
    bool zmm;
    /* kc 0 from L2, not half of L1: B's micro-panel (kc x NR) in an eighth
     * of L2, so large K takes few passes over C (each reads and writes all
     * of C); mc as from all of L1's kc. Measured faster for 14x32
     * (bench/RESULTS.md) though its B micro-panel then lives in L2. */
    bool kc_l2;
    const gemm_gemv_fn *gemv; /* gemv[c - 1]: c panels at once, c <= gemv_ns (gemm_gemv_fn) */
    int gemv_ns;
    /* A skinny kernel taking a row's whole N, past skinny_nv vectors up to
     * wide_nv, in calls of at most GEMM_WIDE_ACC / vectors rows (the
     * skinny path's rows outer, gemm_config.order 4), or NULL. */
    gemm_skinny_fn skinny_wide;
    int wide_nv;
    gemm_rows_fn rows; /* the rows outer in one call (gemm_rows_fn), or NULL */
};
#define GEMM_WIDE_ACC 24

/* The blocking for kernel k on this machine. */
void gemm_blocking(const gemm_kernel *k, int *kc, int *mc, int *nc);
/* This machine's L2 size per core, in bytes (as gemm_blocking reads it). */
long gemm_l2_bytes(void);

/* The parts a skinny kernel of M rows by NV vectors cuts K into, read side
 * by side with their own accumulators (ACC at most in all): at M 1 and 2 B
 * streams from memory with few FMAs per byte, and one core's read
 * bandwidth grows with the streams the hardware prefetcher follows at once
 * (gemm_avx512.c's SK512). At most 4. */
#define GEMM_SK_SPLIT(M, NV, ACC)                                                             \
    ((M) > 2 ? 1 : (ACC) / ((M) * (NV)) > 4 ? 4 : (ACC) / ((M) * (NV)) > 1 ? (ACC) / ((M) * (NV)) : 1)

/* The rows' functions, one file per ISA. */
#define GEMM_UKR(nm)                                                                        \
    void nm(int64_t k, const float *a, const float *b, float *c, int64_t ldc, int acc,        \
            const gemm_fuse *f)
#define GEMM_SKINNY(nm)                                                                     \
    void nm(int64_t k, int m, int nc, const float *a, int64_t rsa, int64_t csa, const float *b,    \
            int64_t sb, float *out, int64_t ldo, const gemm_fuse *f)
GEMM_UKR(gemm_ukr_avx512_14x32);
GEMM_UKR(gemm_ukr_avx512_28x16);
GEMM_UKR(gemm_ukr_avx512vl_12x16);
GEMM_UKR(gemm_ukr_avx512vl_6x32);
GEMM_UKR(gemm_ukr_avx2_6x16);
GEMM_UKR(gemm_ukr_c_4x16);
GEMM_SKINNY(gemm_skinny_avx512_32);
GEMM_SKINNY(gemm_skinny_avx512_16);
GEMM_SKINNY(gemm_skinny_wide_avx512_32);
GEMM_SKINNY(gemm_skinny_avx2_16);
GEMM_SKINNY(gemm_skinny_c_16);
#define GEMM_ROWS(nm)                                                                       \
    int64_t nm(int64_t k, int64_t m, int64_t n, const float *a, int64_t rsa, const float *b,      \
               int64_t sb, float *c, int64_t ldc, const gemm_fuse *f)
GEMM_ROWS(gemm_rows_avx512_32);
GEMM_ROWS(gemm_rows_avx2_16);
GEMM_ROWS(gemm_rows_c_16);
/* gemm_c.c's epilogue on element (i, j) of a tile (f at its row 0, column 0). */
float gemm_fuse_c(float v, const gemm_fuse *f, int i, int j);
/* Each ISA's gemm_gemv_fn per panel count, and that count's top. */
#define GEMM_GEMV_NS512 12
#define GEMM_GEMV_NS256 6
#define GEMM_GEMV_NSC 4
extern const gemm_gemv_fn gemm_gemv_avx512_32[GEMM_GEMV_NS512];
extern const gemm_gemv_fn gemm_gemv_avx512_16[GEMM_GEMV_NS512];
extern const gemm_gemv_fn gemm_gemv_avx2_16[GEMM_GEMV_NS256];
extern const gemm_gemv_fn gemm_gemv_c_16[GEMM_GEMV_NSC];

#endif

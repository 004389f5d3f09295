/* Single-precision GEMM, BLIS-style: five loops around a register-blocked
 * micro-kernel over packed A and B panels, cache blocking from the CPU's
 * cache sizes, OpenMP threads inside. Micro-kernels per ISA are data
 * (gemm_kern.h, one table in gemm_table.c), chosen by CPUID at run time.
 *
 *   C[m][n] = epilogue(sum_k A[m][k] * B[k][n])
 *
 * A and B are read through strides (A[i][k] at a[i*rsa + k*csa]), so
 * transposes cost nothing; C is row-major with leading dimension ldc.
 * Either operand may instead be prepacked once (gemm_pack_a / gemm_pack_b)
 * into a self-describing buffer whose bytes can be saved and used in place
 * later (gemm_packed_view). With a prepacked B, the skinny path reads A in
 * place (no packing, no passes over C; A's rows in blocks that stay in L2
 * while B passes) and streams B at memory bandwidth: always at M <=
 * GEMM_SKINNY_M, and past it where gemm_skinny_default says so. */
#ifndef AIT_KERNELS_GEMM_H
#define AIT_KERNELS_GEMM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "kernels/act.h"
#include "kernels/chan_affine.h"

#define GEMM_SKINNY_M 16
/* Past GEMM_SKINNY_M, the skinny path while A (M x K floats) is under this,
 * on kernels not in 512-bit registers (gemm_skinny_default). */
#define GEMM_SKINNY_A_BYTES ((int64_t)4 << 20)
/* Past GEMM_SKINNY_M, the skinny path's default order is rows outer (each
 * call's rows through every column of B) at K up to this: 1.06x to 1.30x
 * the columns-outer loop at 12544x96x16, 3136x144x24, 784x192x32; the
 * same calls where N fits one width (docs/gemm.md). */
#define GEMM_SKINNY_ROWS_K 32
/* And past K = 32 from GEMM_SKINNY_ROWS_M rows where N is at least
 * GEMM_SKINNY_ROWS_NK times K and B (K x N) fits in L2: each call's rows
 * (6 x K) stay in L1 while B passes from L2, where the columns-outer loop
 * read A's rows from L2 again for each 64 columns. Side by side on CPU time
 * (bench/RESULTS.md, "vit_tiny and bert"): 1.05x to 1.14x at 197x768x192
 * (ViT-tiny's fc1) and 128x1024x256 (bert's FFN1), 1.15x at 784x512x128 and
 * 3136x256x64, 1.02x to 1.04x at 196x1024x256 and 196x384x64, 0.96x to
 * 1.05x at 196x512x128, level at 128x1536x192 (B just under L2); and
 * slower where it is not taken: 0.88x at 49x1024x256 (M 49), 0.94x at
 * 197x192x768 and 0.88x at 128x256x1024 (K > N), 0.58x at 49x2048x512 (B
 * 4 MiB). */
#define GEMM_SKINNY_ROWS_M 128
#define GEMM_SKINNY_ROWS_NK 4
/* Past GEMM_SKINNY_M and up to this many rows, the skinny default takes B's
 * panel (K x NR) up to all of L2, half past it (gemm_skinny_default): at K
 * 4608 to 8192 on a 1 MiB L2, 1.06x to 1.85x the packed path at M 17 to 128,
 * 0.91x to 1.08x from M 196 (bench/RESULTS.md, branch z4). */
#define GEMM_SKINNY_PANEL_M 128
/* Past GEMM_SKINNY_M, the skinny path's calls take the widest tile (4
 * vectors) while B's columns for it (K x 64 floats) fit in half of L2, and
 * from this many rows in three quarters: at K 3072 (half of a 1.25 MiB L2
 * holds 32 columns) 1.02x to 1.23x the 32-wide tile at M 48 to 1024, 0.92x
 * at M 32, where 12-row calls over 32 columns read B from L2 half as often
 * (bench/RESULTS.md, "Native GEMM: the wide tile at K 3072"). */
#define GEMM_SKINNY_WIDE_M 48
/* The skinny path's order 3: rows outer, each call's tile (at most
 * GEMM_STREAM_ROWS x GEMM_STREAM_COLS) stored into a buffer in L1, its
 * epilogue there, then copied to C by non-temporal stores (gemm_stream.h),
 * so a C written once and larger than the caches goes to memory without
 * its lines being read for ownership first. A config's choice only (the
 * GEMM tuner tries it at K <= GEMM_SKINNY_ROWS_K): 0.48x to 0.97x the
 * default's rows-outer stores at the large-M, small-K shapes measured
 * (bench/RESULTS.md, "the GEMM database tuned on CPU time"). */
#define GEMM_STREAM_ROWS 16
#define GEMM_STREAM_COLS 64

typedef struct gemm_kernel gemm_kernel; /* a micro-kernel with its blocking (gemm_kern.h) */

/* The best kernel this CPU runs: the first available row of the table,
 * skipping zmm rows on a CPU that splits 512-bit FMAs (Zen 4). */
const gemm_kernel *gemm_kernel_best(void);
/* The kernel named `name` ("avx512", "avx512-z14", "avx2", "c": see the
 * table), NULL when unknown or not runnable here (why says which). */
const gemm_kernel *gemm_kernel_find(const char *name, char *why, size_t n);
/* The table, for tests and the tuner: every row, runnable or not. */
int gemm_kernel_count(void);
const gemm_kernel *gemm_kernel_at(int i);
bool gemm_kernel_available(const gemm_kernel *k);
const char *gemm_kernel_name(const gemm_kernel *k);
/* Whether a tuner should try it besides the best (a shape that wins on
 * some problems; the rest are there to be forced and measured). */
bool gemm_kernel_tried(const gemm_kernel *k);
/* Whether it works in 512-bit registers (the default only where the CPU
 * runs 512-bit FMAs at full width, not as two 256-bit halves as Zen 4). */
bool gemm_kernel_zmm(const gemm_kernel *k);
/* The core/cpu.h features the kernel needs ("" for the portable one). */
const char *gemm_kernel_needs(const gemm_kernel *k);
/* Its register tile: MR rows of A by NR columns of B. */
int gemm_kernel_mr(const gemm_kernel *k);
int gemm_kernel_nr(const gemm_kernel *k);
/* The most vectors of B its skinny path covers per call (gemm_config.skinny_nv's top), and
 * the floats in one: a skinny_nv v is its own width when v * vw is a multiple of NR (the
 * width is rounded down to whole panels, at least one). */
int gemm_kernel_skinny_nv(const gemm_kernel *k);
int gemm_kernel_skinny_vw(const gemm_kernel *k);
/* One line: the kernel, its MR x NR and its blocking here. */
void gemm_kernel_describe(const gemm_kernel *k, char *buf, size_t n);

/* The fused epilogue, in this order on each element v of sum_k A*B:
 *   v *= scale (when scaled); v += bias[i] (GEMM_BIAS_ROW) or bias[j] (COL);
 *   v += res_scale * res[i*ldr + j] (res given, !res_after);
 *   v = act(v); v += res_scale * res[...] (res given, res_after). */
typedef enum {
    GEMM_ACT_NONE,
    GEMM_ACT_RELU,
    GEMM_ACT_CLIP,      /* min(max(v, lo), hi): relu6 is 0, 6 */
    GEMM_ACT_SIGMOID,
    GEMM_ACT_TANH,
    GEMM_ACT_GELU,      /* erf form */
    GEMM_ACT_GELU_TANH, /* tanh approximation */
    GEMM_ACT_SILU,
    GEMM_ACT_HARDSWISH,
    GEMM_ACT_HARDSIGMOID, /* max(0, min(1, lo*v + hi)) (alpha, beta) */
    GEMM_ACT_LEAKY,       /* v < 0: lo * v */
    GEMM_ACT_COUNT
} gemm_act;
enum { GEMM_BIAS_NONE, GEMM_BIAS_ROW, GEMM_BIAS_COL };

/* The element function (kernels/act.h) of activation a, whose parameters
 * are lo and hi in kfun's a and b. */
kfun gemm_act_fun(gemm_act a);

#define GEMM_RANGE_LANES 16 /* gemm_epi.rlo's floats per row: a zmm */
typedef struct gemm_epi {
    bool scaled;
    float scale;
    int bias_mode;
    const float *bias;
    const float *res; /* residual, [m][n] with leading dimension ldr */
    int64_t ldr;
    float res_scale; /* 0 is taken as 1 (so a zeroed epi adds res as is) */
    bool res_after;
    gemm_act act;
    float lo, hi; /* the activation's parameters */
    /* Not NULL: after the rest, each row i of C folded into its range,
     * lanes [GEMM_RANGE_LANES i, GEMM_RANGE_LANES (i + 1)) of rlo and rhi
     * (vector lanes: no reduction per tile; NaN skipped; the caller starts
     * them at 0), the range an int8dq GEMM reading C as its A quantises
     * row i at (qg_quant_rows_u8), made while the tile is in L1.
     * gemm_epi_tile's only (qgemm's tiles), one thread's. */
    float *rlo, *rhi;
} gemm_epi;

/* A prepacked operand: a view of a buffer gemm_pack_* filled (data points
 * past its header), or of panels a kernel of its own packed in the same
 * layout (im2col_pack_f32), filled in by hand. */
typedef struct gemm_packed {
    const gemm_kernel *kern;
    bool is_a;      /* A (m x k, MR-row panels) or B (k x n, NR-column panels) */
    int64_t k, mn;  /* k and m (A) or n (B) */
    const float *data;
} gemm_packed;

/* Bytes a packed A (m x k) or B (k x n) takes for kernel kr, header
 * included; 0 on overflow. */
size_t gemm_pack_a_size(const gemm_kernel *kr, int64_t m, int64_t k);
size_t gemm_pack_b_size(const gemm_kernel *kr, int64_t k, int64_t n);
/* Packs into dst (64-byte aligned, gemm_pack_*_size bytes). */
void gemm_pack_a(const gemm_kernel *kr, const float *a, int64_t rsa, int64_t csa, int64_t m,
                 int64_t k, void *dst);
void gemm_pack_b(const gemm_kernel *kr, const float *b, int64_t rsb, int64_t csb, int64_t k,
                 int64_t n, void *dst);
/* Checks a packed buffer of `size` bytes (from an artifact: the header's
 * magic, kernel, dimensions and size) and fills a view of it in place. */
ait_status gemm_packed_view(const void *buf, size_t size, gemm_packed *out, ait_error *e);
/* The kernel a packed buffer (made by gemm_pack_a/_b, as an artifact's
 * blob holds it) was packed for, or NULL when buf is not one (too short, no
 * header) or names no kernel this build knows. Only the header is read. */
const gemm_kernel *gemm_packed_kernel(const void *buf, size_t size);

/* A variant of the driver, as data (the per-shape GEMM tuner's unit,
 * src/gemmtune/): every field 0 is today's default. The kernel is fixed by
 * a prepacked operand (its panels are that kernel's), so kern applies only
 * when neither operand is prepacked. */
enum { GEMM_PACKA_AUTO, GEMM_PACKA_ON, GEMM_PACKA_OFF };
#define GEMM_ORDER_MAX 5 /* gemm_config.order's largest */
typedef struct gemm_config {
    const gemm_kernel *kern; /* NULL: gemm_args' */
    int kc, mc, nc;          /* 0: the kernel's blocking here (rounded to MR, NR, 8) */
    /* AUTO: A read in place (skinny path) when B is prepacked and
     * gemm_skinny_default says so, else packed; ON: always packed; OFF:
     * always in place (B packed whole first when it is not prepacked). */
    int pack_a;
    /* 0: B's micro-panels outer (jr > ir), 1: A's outer (ir > jr), 2 as 0;
     * on the skinny path 2 takes each width of columns over a block of
     * rows, 1 each call's rows through every column of B (C's rows written
     * whole, B read once per call's rows: for a B that stays in L1, small
     * K), 3 as 1 with C's tiles streamed past the caches (GEMM_STREAM_ROWS),
     * 4 as 1 with a row's whole N per call where it is 5 or 6 vectors (the
     * kernel's skinny_wide: AVX-512's 14x32; elsewhere as 1), 5 as 1 in
     * one call of the kernel's rows (gemm_rows_fn: AVX-512's 14x32,
     * AVX2's 6x16 and the portable 4x16; the other AVX-512 rows, a
     * strided A or an epilogue after the store, as 1), 0
     * the default: 5 where gemm_skinny_rows1_default says, else 4 where
     * gemm_skinny_rows_default says (whole rows only at N of 5 or 6
     * vectors, so K <= GEMM_SKINNY_ROWS_K there), else 2 */
    int order;
    int splitk;  /* K in this many parts, one thread each, partial sums added; 0, 1: none */
    int threads; /* 0: gemm_args' */
    /* The skinny path's columns per call, in the kernel's vectors: 0 the
     * default (past GEMM_SKINNY_M the widest that fits, the kernel's
     * skinny_nv; at or below it the whole panels that give a call the
     * most accumulators), 1..4 at most that many, rounded down to whole NR
     * panels (fewer columns, more rows per call). */
    int skinny_nv;
} gemm_config;

/* The config's short id, e.g. "avx2.kc256.mc72.nc4080.pa0.o0.sk1.t1" (0 for
 * blocking left to the kernel), ".sv2" after it when skinny_nv is set. */
void gemm_config_id(const gemm_config *c, const gemm_kernel *dflt, char *buf, size_t n);

/* A caller's packing buffers: gemm_f32 grows buf when a call needs more
 * (the only allocation), so a caller that meets its largest shape first
 * allocates nothing after. One call at a time; gemm_ws_free at the end. */
typedef struct gemm_ws {
    void *buf;
    size_t size;
} gemm_ws;
void gemm_ws_free(gemm_ws *w);

typedef struct gemm_args {
    int64_t m, n, k;
    const float *a;
    int64_t rsa, csa;
    const gemm_packed *pa; /* instead of a */
    const float *b;
    int64_t rsb, csb;
    const gemm_packed *pb; /* instead of b */
    float *c;
    int64_t ldc;
    gemm_epi epi;
    int threads;             /* 0 or 1: the calling thread only */
    const gemm_kernel *kern; /* NULL: the packed operands', else the best */
    const gemm_config *cfg;  /* NULL: the default */
    gemm_ws *ws;             /* packing buffers kept by the caller, or NULL: per call */
    /* A prologue on A, or NULL: A's column p (channel p of a 1x1 conv's
     * input) taken as min(max(A[i][p] * s[p] + t[p], lo), hi), applied to
     * each block of A as it is packed, or (the skinny path) to a block of
     * A's rows in an L2-sized buffer the kernels then read; A itself is
     * never written. Not with a prepacked A (pa). */
    const kaffine *pro;
} gemm_args;

/* Whether the default (pack_a AUTO) reads an m x k A (column stride csa)
 * in place against a B prepacked for kernel kr, on `threads` threads: at
 * m <= GEMM_SKINNY_M; past it for a row-major A (csa 1) when B's panel
 * (k x NR) fits in half of L2 (in all of it at m <= GEMM_SKINNY_PANEL_M) and
 * there are at least as many panels (n / NR)
 * as threads (the skinny path splits columns only), and, unless kr is in
 * 512-bit registers, A is under GEMM_SKINNY_A_BYTES. Measured faster than
 * the packed path at every such shape tried on the Intel host, 2048^3
 * included (docs/gemm.md). */
bool gemm_skinny_default(const gemm_kernel *kr, int64_t m, int64_t n, int64_t k, int64_t csa,
                         int threads);

/* Whether the skinny path's default order (0) is rows outer for an m x k
 * by k x n GEMM: past GEMM_SKINNY_M at K <= GEMM_SKINNY_ROWS_K, and from
 * GEMM_SKINNY_ROWS_M rows at N >= GEMM_SKINNY_ROWS_NK K with B in L2. */
bool gemm_skinny_rows_default(int64_t m, int64_t n, int64_t k);

/* Whether the skinny path's default order (0) runs rows outer in one call
 * of the kernel's rows (order 5, where the kernel has them, A is row-major
 * and the epilogue is one the kernels fuse): past GEMM_SKINNY_M where B
 * (K x N floats) fits in a quarter of L2. Side by side with the calls it
 * replaces (bench/RESULTS.md, issue 15, branch gl5): 1.00x to 1.46x at 13
 * shapes of M 196 to 12544 with K 16 to 384 or N 16 to 32 (3136x256x64
 * 1.32x); at M 28 to 126 past K = 32 (branch g15, Zen 5) 1.03x to 1.16x
 * on 12 of 15 captured shapes, 0.99x to 1.07x on the other three. */
bool gemm_skinny_rows1_default(int64_t m, int64_t n, int64_t k);

/* Whether the kernels apply epilogue e in their registers, before the
 * store (every activation but the transcendental ones), so its residual
 * may be C itself: a sum added to what C held. */
bool gemm_epi_fusable(const gemm_epi *e);

/* C = epilogue(A*B). Fails on a packed operand of other dimensions or of
 * another kernel than kern, and when out of memory. */
ait_status gemm_f32(const gemm_args *g, ait_error *e);

/* The epilogue on rows [i0, i0+mr) x columns [j0, j0+nr) of C (c points at
 * C[i0][j0]); the driver calls it on each tile, exported for other kernels
 * (a convolution's own loops) that end the same way. */
void gemm_epi_tile(const gemm_epi *ep, float *c, int64_t ldc, int64_t i0, int64_t j0, int mr,
                   int nr);

#endif

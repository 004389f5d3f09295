/* The GEMM driver (gemm.h): BLIS's five loops around the micro-kernel
 *   jc (nc columns) > pc (kc of K: pack B) > ic (mc rows: pack A)
 *     > jr (NR) > ir (MR): micro-kernel, with the epilogue on the last pc
 * (in its registers where it fits, gemm_kern.h's gemm_fuse, else after),
 * and the skinny path (its epilogue in registers too). Threads split C into a grid of rectangles (rows
 * when M is large, else columns) that each run the loops on their own,
 * with their own packing buffers: no barriers, and a thread repacks only
 * its share of the other operand (a small cost next to its share of
 * arithmetic). A gemm_config (gemm.h) changes the kernel, blocking, inner
 * loop order, skinny path or threads, or splits K into parts that run at
 * once into their own C and are added before the epilogue. A prologue
 * (gemm_args.pro) maps each block of A as it is packed, or on the skinny
 * path each block of A's rows into a buffer of its own, as the kernels
 * then read it. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm_kern.h"
#include "kernels/gemm_pack.h"
#include "kernels/prefetch.h"
#include "kernels/gemm_stream.h"

typedef struct job {
    const gemm_args *g;
    const gemm_kernel *kr;
    int kc, mc, nc;
    int64_t k0, k1; /* the share of K these loops sum (split-K) */
    bool ir_outer;  /* the config's loop order 1 */
    bool rows_outer; /* the skinny path's: order 1 or 3, or 0 past GEMM_SKINNY_M at small K */
    bool stream;    /* rows outer, each call's tile stored past the caches (order 3: gemm_stream.h) */
    bool wide;      /* rows outer, a row's whole N per call (order 4: the kernel's skinny_wide) */
    bool rows1;     /* rows outer in one kernel call (order 5: the kernel's rows, skinny_rows1) */
    int snv;        /* the config's skinny_nv */
    int64_t skc;    /* the skinny path's K per pass over a block's rows (columns outer); k: one pass */
    bool epi;       /* an epilogue other than identity */
    bool fuse;      /* ... that full tiles apply in the micro-kernel (gemm_epi_fusable) */
    bool bpf;       /* the skinny calls prefetch the next width's B into L2 (skinny_pf) */
} job;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t up(int64_t a, int64_t w) { return (a + w - 1) / w * w; }

static bool epi_none(const gemm_epi *e)
{
    return !e->scaled && e->bias_mode == GEMM_BIAS_NONE && !e->res && e->act == GEMM_ACT_NONE;
}

/* Whether the kernels can apply the epilogue in registers (gemm_fuse):
 * every activation but the transcendental ones (sigmoid, tanh, GELU, SiLU),
 * which run after the store (gemm_epi_tile, on vec_math.h's functions). */
bool gemm_epi_fusable(const gemm_epi *e)
{
    switch (e->act) {
    case GEMM_ACT_NONE:
    case GEMM_ACT_RELU:
    case GEMM_ACT_CLIP:
    case GEMM_ACT_LEAKY:
    case GEMM_ACT_HARDSIGMOID:
    case GEMM_ACT_HARDSWISH: return true;
    default: return false;
    }
}

/* e as gemm_fuse for the tile at (i, j). */
static gemm_fuse fuse_at(const gemm_epi *e, int64_t i, int64_t j)
{
    return (gemm_fuse){
        .scale = e->scaled ? e->scale : 1.0f,
        .brow = e->bias_mode == GEMM_BIAS_ROW ? e->bias + i : NULL,
        .bcol = e->bias_mode == GEMM_BIAS_COL ? e->bias + j : NULL,
        .res = e->res ? e->res + i * e->ldr + j : NULL,
        .ldr = e->ldr,
        .rk = e->res_scale != 0.0f ? e->res_scale : 1.0f,
        .res_after = e->res_after,
        .act = e->act == GEMM_ACT_RELU          ? GEMM_FUSE_RELU
               : e->act == GEMM_ACT_CLIP        ? GEMM_FUSE_CLIP
               : e->act == GEMM_ACT_LEAKY       ? GEMM_FUSE_LEAKY
               : e->act == GEMM_ACT_HARDSIGMOID ? GEMM_FUSE_HARDSIGMOID
               : e->act == GEMM_ACT_HARDSWISH   ? GEMM_FUSE_HARDSWISH
                                                : GEMM_FUSE_NONE,
        .lo = e->lo,
        .hi = e->hi,
    };
}

/* Tile (i, j) of size mr x nr from panels a, b over kb: straight into C
 * when full, with the epilogue in the micro-kernel's registers on the last
 * kc block when it fits; else through an MR x NR buffer, the epilogue after. */
static void tile(const job *jb, int64_t kb, const float *a, const float *b, int64_t i, int64_t j,
                 int mr, int nr, bool acc, bool last)
{
    const gemm_args *g = jb->g;
    const gemm_kernel *kr = jb->kr;
    float *c = g->c + i * g->ldc + j;
    if (mr == kr->mr && nr == kr->nr) {
        if (last && jb->fuse) {
            gemm_fuse f = fuse_at(&g->epi, i, j);
            kr->ukr(kb, a, b, c, g->ldc, acc, &f);
            return;
        }
        kr->ukr(kb, a, b, c, g->ldc, acc, NULL);
    } else {
        float t[32 * 32] __attribute__((aligned(64)));
        kr->ukr(kb, a, b, t, kr->nr, 0, NULL);
        for (int r = 0; r < mr; r++)
            for (int s = 0; s < nr; s++)
                c[r * g->ldc + s] = (acc ? c[r * g->ldc + s] : 0.0f) + t[r * kr->nr + s];
    }
    if (last && jb->epi) gemm_epi_tile(&g->epi, c, g->ldc, i, j, mr, nr);
}

/* Rows [m0, m1) x columns [n0, n1) of C (m0 a multiple of MR, n0 of NR). */
static void block(const job *jb, int64_t m0, int64_t m1, int64_t n0, int64_t n1, float *bufa,
                  float *bufb)
{
    const gemm_args *g = jb->g;
    const gemm_kernel *kr = jb->kr;
    const int MR = kr->mr, NR = kr->nr;
    for (int64_t jc = n0; jc < n1; jc += jb->nc) {
        int64_t nb = min64(jb->nc, n1 - jc);
        for (int64_t pc = jb->k0; pc < jb->k1; pc += jb->kc) {
            int64_t kb = min64(jb->kc, jb->k1 - pc);
            const float *pb;
            int64_t sb; /* panel stride */
            if (g->pb) {
                pb = g->pb->data + (jc / NR) * g->k * NR + pc * NR;
                sb = g->k * NR;
            } else {
                gemm_pack_panels(NR, g->b + pc * g->rsb + jc * g->csb, g->csb, g->rsb, nb, kb, bufb);
                pb = bufb;
                sb = kb * NR;
            }
            for (int64_t ic = m0; ic < m1; ic += jb->mc) {
                int64_t mb = min64(jb->mc, m1 - ic);
                const float *pa;
                int64_t sa;
                if (g->pa) {
                    pa = g->pa->data + (ic / MR) * g->k * MR + pc * MR;
                    sa = g->k * MR;
                } else {
                    gemm_pack_panels(MR, g->a + ic * g->rsa + pc * g->csa, g->rsa, g->csa, mb, kb,
                                     bufa);
                    if (g->pro) kaffine_panels(g->pro, pc, MR, kb, (mb + MR - 1) / MR, bufa, kb * MR);
                    pa = bufa;
                    sa = kb * MR;
                }
                bool last = pc + kb == jb->k1, acc = pc > jb->k0;
                if (jb->ir_outer)
                    for (int64_t ir = 0; ir < mb; ir += MR)
                        for (int64_t jr = 0; jr < nb; jr += NR)
                            tile(jb, kb, pa + (ir / MR) * sa, pb + (jr / NR) * sb, ic + ir, jc + jr,
                                 (int)min64(MR, mb - ir), (int)min64(NR, nb - jr), acc, last);
                else
                    for (int64_t jr = 0; jr < nb; jr += NR)
                        for (int64_t ir = 0; ir < mb; ir += MR)
                            tile(jb, kb, pa + (ir / MR) * sa, pb + (jr / NR) * sb, ic + ir, jc + jr,
                                 (int)min64(MR, mb - ir), (int)min64(NR, nb - jr), acc, last);
            }
        }
    }
}

/* Vectors of B per skinny call for m <= GEMM_SKINNY_M rows: the whole
 * panels that give a call the most accumulators (its rows, the m rows in
 * equal calls of at most skinny_rows, times its vectors), the narrowest on
 * a tie. One or two rows against one panel of two vectors are held by the
 * FMA's latency (4 cycles, two ports: 8 chains to fill them); 4 vectors on
 * 14x32 measured up to 1.44x the one panel at M = 4 and 1.19x at M = 16
 * (docs/gemm.md). */
static int small_nv(const gemm_kernel *kr, int m)
{
    int pv = kr->nr / kr->skinny_vw > 0 ? kr->nr / kr->skinny_vw : 1, best = pv, most = 0;
    for (int nv = pv; nv <= kr->skinny_nv; nv += pv) {
        int calls = (m + kr->skinny_rows[nv - 1] - 1) / kr->skinny_rows[nv - 1];
        int acc = (m + calls - 1) / calls * nv;
        if (acc > most) most = acc, best = nv;
    }
    return best;
}

/* skinny_call's streamed form: the tile into a buffer in L1 (rows 64-byte
 * aligned), its epilogue there, then to C past the caches. A function of
 * its own so that the common call has no 4 KiB stack frame: with the
 * buffer in skinny_call, the frame's set-up and the spills around the
 * kernel call were 4 to 5% of squeezenet1_1's samples (6-row calls over
 * K = 16 to 64; bench/RESULTS.md, branch sqz). */
static __attribute__((noinline)) void skinny_call_stream(const job *jb, const float *a, int64_t rsa, int64_t csa,
                                                         int64_t i, int m, int64_t j, int nc)
{
    const gemm_args *g = jb->g;
    const gemm_kernel *kr = jb->kr;
    gemm_fuse f;
    if (jb->fuse) f = fuse_at(&g->epi, i, j);
    float t[GEMM_STREAM_ROWS * GEMM_STREAM_COLS] __attribute__((aligned(64)));
    kr->skinny(g->k, m, nc, a, rsa, csa, g->pb->data + (j / kr->nr) * g->k * kr->nr,
               g->k * kr->nr, t, GEMM_STREAM_COLS, jb->fuse ? &f : NULL);
    if (jb->epi && !jb->fuse) gemm_epi_tile(&g->epi, t, GEMM_STREAM_COLS, i, j, m, nc);
    gemm_stream_rows(g->c + i * g->ldc + j, g->ldc, t, GEMM_STREAM_COLS, m, nc);
}

/* One skinny kernel call: rows [i, i+m) x columns [j, j+nc) of C (j a
 * multiple of NR), A's rows at a (row i's), with the epilogue in its
 * registers or after it; streamed past the caches by skinny_call_stream. */
static void skinny_call(const job *jb, const float *a, int64_t rsa, int64_t csa, int64_t i, int m,
                        int64_t j, int nc, const char *pf, int64_t npf)
{
    if (jb->stream && m <= GEMM_STREAM_ROWS && nc <= GEMM_STREAM_COLS) {
        skinny_call_stream(jb, a, rsa, csa, i, m, j, nc);
        return;
    }
    const gemm_args *g = jb->g;
    const gemm_kernel *kr = jb->kr;
    float *c = g->c + i * g->ldc + j;
    gemm_fuse f = {.scale = 1.0f};
    if (jb->fuse) f = fuse_at(&g->epi, i, j);
    f.pf = pf;
    f.npf = npf;
    gemm_skinny_fn fn = nc > kr->skinny_vw * kr->skinny_nv ? kr->skinny_wide : kr->skinny; /* order 4's whole rows */
    fn(g->k, m, nc, a, rsa, csa, g->pb->data + (j / kr->nr) * g->k * kr->nr, g->k * kr->nr, c, g->ldc,
       jb->fuse || npf ? &f : NULL);
    if (jb->epi && !jb->fuse) gemm_epi_tile(&g->epi, c, g->ldc, i, j, m, nc);
}

/* skinny_call over K's share [p0, p0 + kb) only (A at row i's column p0):
 * the first share stores its sum with the epilogue's linear part (scale,
 * biases, a residual added before the activation), each later one adds
 * C itself as a residual (scaled like the products), the last one with the
 * activation, or the epilogue after it when the kernels cannot fuse it. */
static void skinny_call_k(const job *jb, const float *a, int64_t rsa, int64_t csa, int64_t i, int m,
                          int64_t j, int nc, int64_t p0, int64_t kb)
{
    const gemm_args *g = jb->g;
    const gemm_kernel *kr = jb->kr;
    float *c = g->c + i * g->ldc + j;
    const bool last = p0 + kb == g->k;
    gemm_fuse f = jb->fuse ? fuse_at(&g->epi, i, j) : (gemm_fuse){.scale = 1.0f};
    if (p0 > 0) f = (gemm_fuse){.scale = f.scale, .res = c, .ldr = g->ldc, .rk = 1.0f, .act = last ? f.act : GEMM_FUSE_NONE,
                                .lo = f.lo, .hi = f.hi};
    else if (!last) f.act = GEMM_FUSE_NONE;
    kr->skinny(kb, m, nc, a, rsa, csa, g->pb->data + (j / kr->nr) * g->k * kr->nr + p0 * kr->nr,
               g->k * kr->nr, c, g->ldc, jb->fuse || p0 > 0 ? &f : NULL);
    if (last && jb->epi && !jb->fuse) gemm_epi_tile(&g->epi, c, g->ldc, i, j, m, nc);
}

/* A's rows [0, m) in skinny calls: blocks of blk rows (from row 0), each
 * block in the fewest calls of at most `most` rows, of sizes that differ by
 * one at most (the larger first): 128 rows in 6-row calls as 18 x 6 + 4 x
 * 5, not 21 x 6 + 2. A call of 2 rows reads B's lines (from L2) for a third
 * of the FMAs of 6, and at M <= 2 the kernels cut K in parts
 * (GEMM_SK_SPLIT) and prefetch nothing. Beside the old cut in one process:
 * 0.93x to 1.01x the time at 128x256x256 (three runs), 0.95x and 0.97x at
 * 128x256x1024, inside the noise (a shape whose calls did not change read
 * 0.96x to 1.02x); 0.88x to 0.95x at 13 rows (5 + 4 + 4, not 5 + 5 + 3);
 * level at 16 rows (6 + 5 + 5, not 6 + 6 + 4) and in bert and GPT-2's
 * prefill (bench/RESULTS.md, branch mk). skinny_cut_rows(c, i): the
 * rows of the call that starts at row i (`most` past the last row: a
 * look-ahead's); its divisions only when i enters another block. */
typedef struct skinny_cut {
    int64_t m, blk, b0, b1, big_end; /* the block [b0, b1): calls of q + 1 rows up to big_end, then q */
    int most, q;
} skinny_cut;

static int skinny_cut_rows(skinny_cut *c, int64_t i)
{
    if (i >= c->m) return c->most;
    if (i < c->b0 || i >= c->b1) {
        c->b0 = i / c->blk * c->blk;
        c->b1 = min64(c->m, c->b0 + c->blk);
        int64_t nb = c->b1 - c->b0, calls = (nb + c->most - 1) / c->most;
        c->q = (int)(nb / calls);
        c->big_end = c->b0 + nb % calls * (c->q + 1);
    }
    return i < c->big_end ? c->q + 1 : c->q;
}

/* The skinny path's rows per block (columns outer): A's block stays in
 * half of L2 while B's panels pass over it, at least 256 rows. */
static int64_t skinny_block_rows(int64_t k)
{
    int64_t rows = gemm_l2_bytes() / 2 / (k * 4);
    return rows < 256 ? 256 : rows;
}

/* Whether the skinny calls (columns outer, past GEMM_SKINNY_M) prefetch the
 * next width's B into L2 over a width's calls, a share each (one line per 4
 * k in the zmm kernels' loop: gemm_fuse.pf): a model's weights come from
 * memory, and each width's first call otherwise waits for its K x 64 of B
 * at the pace of the hardware's prefetch. Measured on a 6 x 64 loop at
 * M = 128 with B cold (copies past L3): 1.12x at N 2048, K 768, 1.05x at
 * 768 x 768, 1.04x at 768 x 2048 (median of paired rounds); prefetched in
 * one burst before each call instead, 1.01x, 0.94x (bench/RESULTS.md,
 * "the next width's B prefetched into L2"). Only while A's block of rows and two widths
 * of B (K x 64 floats each) fit in three quarters of L2: at M 512 (K 768,
 * blocks of 256 rows) the prefetched width took L2 from A's rows, llama's
 * prefill at batch 4 measured 0.97x. */
static bool skinny_pf(const gemm_kernel *kr, int64_t m, int64_t k, bool rows_outer)
{
    if (k <= 0) return false; /* no products (gemm_f32 writes the epilogue of zeros) */
    int64_t rows = min64(m, skinny_block_rows(k)), bytes;
    return (kr->skinny == gemm_skinny_avx512_32 || kr->skinny == gemm_skinny_avx512_16) && m > GEMM_SKINNY_M &&
           !rows_outer && !__builtin_mul_overflow(rows + 2 * 64, k * 4, &bytes) && bytes <= gemm_l2_bytes() / 4 * 3;
}

/* Rows outer with a prologue, the rows mapped into the buffer at once:
 * about 32 KiB (B, K <= 32 there, stays in L1 as the calls pass), at least
 * 16 (a call's). Mapped a call's rows at a time, bench-prologue measured
 * the GEMM 1.22x the separate pass at 3136x16x16, in 32 KiB 1.09x. Columns
 * outer maps the blocks the path reads without a prologue (skinny_block_rows:
 * in blocks of 16 rows B was read again per block, 1.15x at 49x1024x128). */
static int64_t skinny_pro_rows(int64_t k)
{
    int64_t rows = ((int64_t)32 << 10) / (k * 4);
    return rows < 16 ? 16 : rows;
}

/* Floats of a prologue's buffer per thread on the skinny path (the larger
 * block of the two orders), 16 floats more so that each thread's starts
 * 64-byte aligned. */
static size_t skinny_pro_floats(const gemm_args *g)
{
    int64_t rows = skinny_pro_rows(g->k) > skinny_block_rows(g->k) ? skinny_pro_rows(g->k) : skinny_block_rows(g->k);
    return g->pro ? ((size_t)(min64(g->m, rows) * g->k) + 15) & ~(size_t)15 : 0;
}

/* Prefetches (for writing) rows [i, i+m) x columns [j, j+nc) of C: a
 * skinny call's tile, a call or two before the call that stores it. The
 * kernels only store C, and a store to a line not in L1 waits for its read
 * for ownership at the call's end; fetched earlier, the lines are there.
 * Every line of each row, the row's last byte too (C's rows need not start
 * on a line). Measured 1.00x to 1.04x on the squares and 1.01x to 1.27x at
 * 3136x144x24 and 12544x96x16 (bench/RESULTS.md, "Native GEMM: C
 * prefetched ahead of the skinny calls"). */
static void prefetch_c(const gemm_args *g, int64_t i, int64_t m, int64_t j, int64_t nc)
{
    kprefetch_rows(g->c + i * g->ldc + j, g->ldc, m, nc, true);
}

/* The skinny path at M = 1 (a decoder's GEMV): columns [n0, n1) (n0 a
 * multiple of NR) by kr->gemv, their panels cut into gemv_ns runs of
 * consecutive panels walked side by side (the rest, fewer than gemv_ns,
 * side by side last): as many streams from memory at once, each running on
 * through its panels. llama_small's GEMVs (400 MB of packed panels a
 * step) took 1.05x to 1.08x less CPU time than in calls of two panels with
 * K in 4 parts, the M <= 2 calls' (bench/RESULTS.md, issue 16, branch dec5).
 * With a prologue, A's row is mapped into pbuf first. A config that sets
 * skinny_nv gets the skinny calls of that width instead (M <= 2's: K in
 * parts), so that the GEMM tuner can still weigh them. */
static void gemv(const job *jb, int64_t n0, int64_t n1, float *pbuf)
{
    const gemm_args *g = jb->g;
    const gemm_kernel *kr = jb->kr;
    const float *a = g->a;
    int64_t csa = g->csa;
    if (g->pro) {
        kaffine_rows(g->pro, 0, g->k, a, g->rsa, csa, 1, pbuf, g->k);
        a = pbuf, csa = 1;
    }
    const float *b = g->pb->data + (n0 / kr->nr) * g->k * kr->nr;
    const int64_t n = n1 - n0, np = (n + kr->nr - 1) / kr->nr;
    const int ns = (int)min64(kr->gemv_ns, np);
    const int64_t per = np / ns, rest = np - per * ns;
    gemm_fuse f;
    if (jb->fuse) f = fuse_at(&g->epi, 0, n0);
    const gemm_fuse *fp = jb->fuse ? &f : NULL;
    float *out = g->c + n0;
    for (int64_t i = 0; i < per; i++) kr->gemv[ns - 1](g->k, a, csa, b, i, per, n, out, fp);
    if (rest) kr->gemv[rest - 1](g->k, a, csa, b, per * ns, 1, n, out, fp);
    for (int64_t j = 0; jb->epi && !jb->fuse && j < n; j += 1 << 20)
        gemm_epi_tile(&g->epi, out + j, g->ldc, 0, n0 + j, 1, (int)min64(1 << 20, n - j));
}

/* Rows outer in one call of the kernel's rows (gemm_rows_fn) per block of
 * rows (all of them, or with a prologue those mapped at once), columns
 * [n0, n1) (n0 a multiple of NR); the rows past its last group in skinny
 * calls of at most 4 vectors. A row-major A and an epilogue the kernels
 * fuse (or none): the caller's condition. */
static void skinny_rows1(const job *jb, int64_t n0, int64_t n1, float *pbuf)
{
    const gemm_args *g = jb->g;
    const gemm_kernel *kr = jb->kr;
    const int NR = kr->nr, VW = kr->skinny_vw;
    const int64_t blk = g->pro ? skinny_pro_rows(g->k) : g->m;
    for (int64_t i0 = 0; i0 < g->m; i0 += blk) {
        int64_t mb = min64(blk, g->m - i0), rsa = g->rsa;
        const float *a = g->a + i0 * rsa;
        if (g->pro) {
            kaffine_rows(g->pro, 0, g->k, a, rsa, 1, mb, pbuf, g->k);
            a = pbuf, rsa = g->k;
        }
        gemm_fuse f;
        if (jb->fuse) f = fuse_at(&g->epi, i0, n0);
        int64_t done = kr->rows(g->k, mb, n1 - n0, a, rsa, g->pb->data + (n0 / NR) * g->k * NR, g->k * NR,
                                g->c + i0 * g->ldc + n0, g->ldc, jb->fuse ? &f : NULL);
        for (int64_t j = n0; j < n1; j += VW * kr->skinny_nv) {
            int nc = (int)min64(VW * kr->skinny_nv, n1 - j), most = kr->skinny_rows[(nc + VW - 1) / VW - 1];
            for (int64_t i = done, mi; i < mb; i += mi) {
                mi = min64(most, mb - i);
                skinny_call(jb, a + i * rsa, rsa, 1, i0 + i, (int)mi, j, nc, NULL, 0);
            }
        }
    }
}

/* Skinny: columns [n0, n1) (n0 a multiple of NR), A read in place, in
 * blocks of rows small enough to stay in L2 while B's panels pass over them
 * (A is read from memory once). Each call covers up to the kernel's widest
 * (4 zmm vectors: 64 columns, two of 14x32's panels) past M = 16, so narrow
 * N fills its vectors with columns (N = 16: 16 rows by one vector, not 8 by
 * two, half of them zeros) and wide tiles load fewer A values per FMA; at
 * M <= 16 (B streamed from memory, read once) the panels that keep the
 * most accumulators (small_nv), or the config's skinny_nv. Rows outer
 * (the config's order 1, and order 0 where gemm_skinny_rows_default says)
 * turns the loops: each call's rows through every column of B. With a
 * prologue, each block of rows (or each call's rows, rows outer) is mapped
 * once into pbuf (skinny_pro_floats), which the calls read instead of A. */
static void skinny(const job *jb, int64_t n0, int64_t n1, float *pbuf)
{
    const gemm_args *g = jb->g;
    const gemm_kernel *kr = jb->kr;
    if (g->m == 1 && kr->gemv && jb->snv == 0) { /* a config's skinny_nv asks for its calls */
        gemv(jb, n0, n1, pbuf);
        return;
    }
    if (jb->rows1) { /* its own groups and chunks: no width per call */
        skinny_rows1(jb, n0, n1, pbuf);
        return;
    }
    const int NR = kr->nr, VW = kr->skinny_vw;
    const int nvmax = jb->snv > 0 && jb->snv < kr->skinny_nv ? jb->snv : kr->skinny_nv;
    /* B's columns per call: the widest tile past M = 16 while those columns
     * of B (K x width) fit in half of L2 (three quarters from
     * GEMM_SKINNY_WIDE_M rows), re-read by each call over the rows; at M <=
     * 16 (one block of rows: B is read once) the config's width, else
     * small_nv's */
    int64_t l2 = gemm_l2_bytes(), fit = (g->m >= GEMM_SKINNY_WIDE_M ? l2 / 4 * 3 : l2 / 2) / (g->k * 4) / NR * NR;
    int width = g->m <= GEMM_SKINNY_M ? VW * (jb->snv > 0 ? nvmax : small_nv(kr, (int)g->m)) / NR * NR
                                      : (int)min64(VW * nvmax / NR * NR, fit);
    if (width < NR) width = NR;
    if (jb->rows_outer) { /* a call's rows through every column, then the next */
        int rows = kr->skinny_rows[(min64(width, n1 - n0) + VW - 1) / VW - 1];
        int64_t wv = (n1 - n0 + VW - 1) / VW;
        if (jb->wide && wv > kr->skinny_nv && wv <= kr->wide_nv) /* the row's whole N per call */
            width = (int)(n1 - n0), rows = GEMM_WIDE_ACC / (int)wv;
        /* C two calls ahead when a row takes more than one call and C is
         * larger than L2 (its lines come from L3 or memory): a call here
         * is a few hundred cycles, too short to wait for its C lines; at
         * N <= width the next calls' C follows on and the hardware's
         * stream prefetch does as well (docs/gemm.md) */
        int64_t cbytes;
        bool pf = !jb->stream && n1 - n0 > width && !__builtin_mul_overflow(g->m, (n1 - n0) * 4, &cbytes) &&
                  cbytes > gemm_l2_bytes();
        const int64_t blk = g->pro ? skinny_pro_rows(g->k) / rows * rows : g->m; /* rows mapped at once */
        skinny_cut cut = {.m = g->m, .blk = blk, .most = rows}, ahead = cut;
        int64_t pi = 0, pj = n0; /* the call two ahead of (i, j) */
        for (int d = 0; pf && d < 2; d++)
            if ((pj += width) >= n1) pj = n0, pi += skinny_cut_rows(&ahead, pi);
        for (int64_t i0 = 0; i0 < g->m; i0 += blk) {
            const float *a = g->a + i0 * g->rsa;
            int64_t rsa = g->rsa, csa = g->csa;
            if (g->pro) {
                kaffine_rows(g->pro, 0, g->k, a, rsa, csa, min64(blk, g->m - i0), pbuf, g->k);
                a = pbuf, rsa = g->k, csa = 1;
            }
            for (int64_t i = i0, mi; i < min64(g->m, i0 + blk); i += mi) {
                mi = skinny_cut_rows(&cut, i);
                for (int64_t j = n0; j < n1; j += width) {
                    if (pf && pi < g->m)
                        prefetch_c(g, pi, skinny_cut_rows(&ahead, pi), pj, min64(width, n1 - pj));
                    if (pf && (pj += width) >= n1) pj = n0, pi += skinny_cut_rows(&ahead, pi);
                    skinny_call(jb, a + (i - i0) * rsa, rsa, csa, i, (int)mi, j, (int)min64(width, n1 - j), NULL, 0);
                }
            }
        }
        if (jb->stream) gemm_stream_fence();
        return;
    }
    int64_t rows = skinny_block_rows(g->k);
    for (int64_t i0 = 0; i0 < g->m; i0 += rows) {
        int64_t i1 = min64(g->m, i0 + rows);
        const float *a = g->a + i0 * g->rsa;
        int64_t rsa = g->rsa, csa = g->csa;
        if (g->pro) {
            kaffine_rows(g->pro, 0, g->k, a, rsa, csa, i1 - i0, pbuf, g->k);
            a = pbuf, rsa = g->k, csa = 1;
        }
        for (int64_t j = n0; j < n1; j += width) {
            int nc = (int)min64(width, n1 - j), nv = (nc + VW - 1) / VW;
            /* the block's rows in equal calls (16 as 8 + 8, not 12 + 4; skinny_cut) */
            skinny_cut cut = {.m = g->m, .blk = rows, .most = kr->skinny_rows[nv - 1]};
            if (jb->skc < g->k) { /* K in shares: B's share of these columns stays in cache over the rows */
                for (int64_t p0 = 0; p0 < g->k; p0 += jb->skc)
                    for (int64_t i = i0, m; i < i1; i += m) {
                        m = skinny_cut_rows(&cut, i);
                        skinny_call_k(jb, a + (i - i0) * rsa + p0 * csa, rsa, csa, i, (int)m, j, nc, p0,
                                      min64(jb->skc, g->k - p0));
                    }
                continue;
            }
            /* The next width's B (its panels follow these) into L2, a share per call of more
             * than 2 rows (skinny_pf) */
            const char *pf = NULL;
            int64_t left = 0, share = 0, big = 0;
            for (int64_t i = i0, m; jb->bpf && i < i1; i += m)
                big += (m = skinny_cut_rows(&cut, i)) > 2;
            if (jb->bpf && j + width < n1 && big > 0) {
                pf = (const char *)(g->pb->data + ((j + width) / NR) * g->k * NR);
                left = (min64(width, n1 - j - width) + NR - 1) / NR * NR * g->k * 4 / 64;
                share = (left + big - 1) / big;
            }
            for (int64_t i = i0; i < i1;) {
                int m = skinny_cut_rows(&cut, i);
                int64_t npf = m > 2 ? min64(share, left) : 0;
                if (i + m < i1) /* the next call's */
                    prefetch_c(g, i + m, skinny_cut_rows(&cut, i + m), j, nc);
                skinny_call(jb, a + (i - i0) * rsa, rsa, csa, i, m, j, nc, pf, npf);
                if (npf) pf += npf * 64, left -= npf;
                i += m;
            }
        }
    }
}

/* Splits `units` into `parts` nearly equal ranges: part p's [lo, hi). */
static void split(int64_t units, int parts, int p, int64_t *lo, int64_t *hi)
{
    *lo = units * p / parts;
    *hi = units * (p + 1) / parts;
}

/* The thread grid tm x tn (tm * tn = t) that gives the smallest largest share. */
static void grid(const job *jb, int t, int *tm, int *tn)
{
    int64_t um = (jb->g->m + jb->kr->mr - 1) / jb->kr->mr, un = (jb->g->n + jb->kr->nr - 1) / jb->kr->nr;
    int64_t best = -1;
    for (int a = 1; a <= t; a++) {
        if (t % a) continue;
        int b = t / a;
        int64_t share = ((um + a - 1) / a) * jb->kr->mr * (((un + b - 1) / b) * jb->kr->nr);
        if (best < 0 || share < best || (share == best && a > *tm)) {
            best = share;
            *tm = a;
            *tn = b;
        }
    }
}

static ait_status check(const gemm_args *g, const gemm_kernel *kr, ait_error *e)
{
    if (g->m < 0 || g->n < 0 || g->k < 0)
        return err_set(e, AIT_E_INVALID_ARG, "GEMM with a negative size");
    if (g->pa && (!g->pa->is_a || g->pa->kern != kr || g->pa->mn != g->m || g->pa->k != g->k))
        return err_set(e, AIT_E_SHAPE, "packed A (%s, %lld x %lld) does not fit a %lld x %lld A of kernel %s",
                       g->pa->kern->name, (long long)g->pa->mn, (long long)g->pa->k, (long long)g->m,
                       (long long)g->k, kr->name);
    if (g->pro && g->pa) return err_set(e, AIT_E_INVALID_ARG, "GEMM: a prologue on a prepacked A");
    if (g->pb && (g->pb->is_a || g->pb->kern != kr || g->pb->mn != g->n || g->pb->k != g->k))
        return err_set(e, AIT_E_SHAPE, "packed B (%s, %lld x %lld) does not fit a %lld x %lld B of kernel %s",
                       g->pb->kern->name, (long long)g->pb->k, (long long)g->pb->mn, (long long)g->k,
                       (long long)g->n, kr->name);
    return AIT_OK;
}

/* The skinny path on t threads (split over B's panels), thread i's
 * prologue buffer at pbuf + i * skinny_pro_floats (pbuf NULL: none). */
static void run_skinny(const job *jb, int t, float *pbuf)
{
    const gemm_args *g = jb->g;
    int64_t un = (g->n + jb->kr->nr - 1) / jb->kr->nr;
    if (t > un) t = (int)un;
    if (t <= 1) {
        skinny(jb, 0, g->n, pbuf);
        return;
    }
    const size_t per = skinny_pro_floats(g);
#pragma omp parallel num_threads(t)
    {
        int64_t lo, hi;
        int id = omp_get_thread_num();
        split(un, t, id, &lo, &hi);
        skinny(jb, lo * jb->kr->nr, min64(hi * jb->kr->nr, g->n), pbuf ? pbuf + (size_t)id * per : NULL);
    }
}

void gemm_ws_free(gemm_ws *w)
{
    if (!w) return;
    free(w->buf);
    w->buf = NULL;
    w->size = 0;
}

/* bytes (a multiple of 64) of packing buffer: the caller's workspace, grown
 * when short, or one of this call's own (buf_put frees it). */
static char *buf_get(const gemm_args *g, size_t bytes)
{
    gemm_ws *w = g->ws;
    if (!w) return aligned_alloc(64, bytes);
    if (w->size < bytes) {
        gemm_ws_free(w);
        if ((w->buf = aligned_alloc(64, bytes))) w->size = bytes;
    }
    return w->buf;
}

static void buf_put(const gemm_args *g, char *buf)
{
    if (!g->ws) free(buf);
}

/* Bytes of packing buffers one block() call needs for rows x cols of C
 * (64-aligned; *fa: A's floats, B's start after them). */
static size_t buf_bytes(const job *jb, int64_t rows, int64_t cols, size_t *fa)
{
    const gemm_args *g = jb->g;
    int64_t mrows = up(min64(jb->mc, rows), jb->kr->mr), ncols = up(min64(jb->nc, cols), jb->kr->nr);
    int64_t kb = min64(jb->kc, g->k);
    *fa = g->pa ? 0 : (size_t)(mrows * kb);
    size_t fb = g->pb ? 0 : (size_t)(ncols * kb);
    return ((*fa + fb + 16) * sizeof(float) + 128 + 63) & ~(size_t)63;
}

static float *buf_b(char *mine, size_t fa)
{
    return (float *)(mine + ((fa * sizeof(float) + 63) & ~(size_t)63));
}

/* Split-K: part p sums K's share p into C (p 0) or a buffer of its own,
 * one thread each; the buffers are then added and the epilogue run. */
static ait_status run_splitk(const job *jb, int parts, ait_error *e)
{
    const gemm_args *g = jb->g;
    int64_t units = (g->k + 7) / 8, mn;
    if (parts > units) parts = (int)units;
    size_t fa, per = buf_bytes(jb, g->m, g->n, &fa), tmp_bytes, bytes;
    if (__builtin_mul_overflow(g->m, g->n, &mn) ||
        __builtin_mul_overflow((size_t)mn * sizeof(float), (size_t)(parts - 1), &tmp_bytes) ||
        __builtin_add_overflow(tmp_bytes + 63, per * (size_t)parts, &bytes))
        return err_set(e, AIT_E_OVERFLOW, "GEMM split-K: buffers overflow");
    bytes &= ~(size_t)63;
    char *buf = buf_get(g, bytes ? bytes : 64);
    if (!buf) return err_set(e, AIT_E_NOMEM, "GEMM: out of memory for %zu bytes of split-K buffers", bytes);
    float *tmp = (float *)(buf + per * (size_t)parts);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; p++) {
        gemm_args gp = *g;
        job jp = *jb;
        int64_t lo, hi;
        split(units, parts, p, &lo, &hi);
        jp.k0 = lo * 8;
        jp.k1 = min64(hi * 8, g->k);
        jp.epi = jp.fuse = false;
        jp.g = &gp;
        if (p > 0) {
            gp.c = tmp + (size_t)(p - 1) * (size_t)mn;
            gp.ldc = g->n;
        }
        char *mine = buf + (size_t)p * per;
        block(&jp, 0, g->m, 0, g->n, (float *)mine, buf_b(mine, fa));
    }
#pragma omp parallel for num_threads(parts)
    for (int64_t i = 0; i < g->m; i++) {
        float *c = g->c + i * g->ldc;
        for (int p = 1; p < parts; p++) {
            const float *t = tmp + (size_t)(p - 1) * (size_t)mn + (size_t)(i * g->n);
            for (int64_t j = 0; j < g->n; j++) c[j] += t[j];
        }
        for (int64_t j = 0; jb->epi && j < g->n; j += 1 << 20)
            gemm_epi_tile(&g->epi, c + j, g->ldc, i, j, 1, (int)min64(1 << 20, g->n - j));
    }
    buf_put(g, buf);
    return AIT_OK;
}

bool gemm_skinny_default(const gemm_kernel *kr, int64_t m, int64_t n, int64_t k, int64_t csa,
                         int threads)
{
    if (m <= GEMM_SKINNY_M) return true;
    int64_t a_floats, panel_bytes;
    if (csa != 1 || __builtin_mul_overflow(m, k, &a_floats) ||
        (!kr->zmm && a_floats >= GEMM_SKINNY_A_BYTES / 4) ||
        __builtin_mul_overflow(k, (int64_t)kr->nr * 4, &panel_bytes))
        return false;
    /* B's panel in half of L2, or up to all of it at M <= GEMM_SKINNY_PANEL_M, where the
     * skinny path (one 32-wide panel a call) measured 1.06x to 1.85x the packed path at K 4608
     * to 8192 (1.85x at M 17, 1.2x at M 128, issue 15's captured 49x512x4608 1.3x), and from
     * M 196 0.91x to 1.08x, so the half stays there (bench/RESULTS.md, branch z4: the Zen 5
     * host, whose 1 MiB L2 stops the half at K 4096; the packed path's loss at few rows,
     * A's packing or its MR edge tiles, not measured apart) */
    int64_t l2 = gemm_l2_bytes();
    return (panel_bytes <= l2 / 2 || (m <= GEMM_SKINNY_PANEL_M && panel_bytes <= l2)) &&
           (n + kr->nr - 1) / kr->nr >= (threads > 1 ? threads : 1);
}

bool gemm_skinny_rows_default(int64_t m, int64_t n, int64_t k)
{
    if (m <= GEMM_SKINNY_M) return false;
    if (k <= GEMM_SKINNY_ROWS_K) return true;
    int64_t b_floats;
    return m >= GEMM_SKINNY_ROWS_M && n / GEMM_SKINNY_ROWS_NK >= k &&
           !__builtin_mul_overflow(k, n, &b_floats) && b_floats <= gemm_l2_bytes() / 4;
}

bool gemm_skinny_rows1_default(int64_t m, int64_t n, int64_t k)
{
    int64_t b_floats;
    /* at any K past M = 16, not only from GEMM_SKINNY_ROWS_M rows: on the Zen 5 host at M 28
     * to 126, K 96 to 576, one call of the rows measured 1.03x to 1.16x the columns-outer
     * calls on 12 of 15 captured shapes whose B fits, 0.99x to 1.07x on the other three (two
     * builds alternated; AVX2's 6x16 1.03x to 1.14x: bench/RESULTS.md, issue 15, branch g15) */
    return m > GEMM_SKINNY_M && !__builtin_mul_overflow(k, n, &b_floats) && b_floats <= gemm_l2_bytes() / 16;
}

/* The config's blocking over the kernel's: kc a multiple of 8, mc of MR, nc of NR. */
static void blocking(job *jb, const gemm_config *cf)
{
    const gemm_kernel *kr = jb->kr;
    gemm_blocking(kr, &jb->kc, &jb->mc, &jb->nc);
    if (!cf) return;
    if (cf->kc > 0) jb->kc = (int)up(cf->kc, 8);
    if (cf->mc > 0) jb->mc = (int)up(cf->mc, kr->mr);
    if (cf->nc > 0) jb->nc = (int)up(cf->nc, kr->nr);
}

void gemm_config_id(const gemm_config *c, const gemm_kernel *dflt, char *buf, size_t n)
{
    static const gemm_config none;
    if (!c) c = &none;
    const gemm_kernel *k = c->kern ? c->kern : dflt ? dflt : gemm_kernel_best();
    int w = snprintf(buf, n, "%s.kc%d.mc%d.nc%d.pa%d.o%d.sk%d.t%d", k->name, c->kc, c->mc, c->nc,
                     c->pack_a, c->order, c->splitk > 1 ? c->splitk : 1, c->threads);
    if (c->skinny_nv > 0 && w >= 0 && (size_t)w < n) snprintf(buf + w, n - (size_t)w, ".sv%d", c->skinny_nv);
}

ait_status gemm_f32(const gemm_args *g, ait_error *e)
{
    const gemm_config *cf = g->cfg;
    const gemm_kernel *kr = g->kern ? g->kern
                            : g->pb ? g->pb->kern
                            : g->pa ? g->pa->kern
                                    : gemm_kernel_best();
    if (cf && cf->kern && !g->pa && !g->pb) kr = cf->kern;
    TRY(check(g, kr, e));
    if (g->m == 0 || g->n == 0) return AIT_OK;
    job jb = {.g = g, .kr = kr, .k0 = 0, .k1 = g->k, .ir_outer = cf && cf->order == 1,
              .snv = cf ? cf->skinny_nv : 0, .epi = !epi_none(&g->epi)};
    jb.fuse = jb.epi && gemm_epi_fusable(&g->epi);
    int order = cf ? cf->order : 0;
    jb.rows_outer = order == 1 || order >= 3 || (order == 0 && gemm_skinny_rows_default(g->m, g->n, g->k));
    jb.stream = order == 3;
    jb.bpf = skinny_pf(kr, g->m, g->k, jb.rows_outer);
    /* rows outer by default (K <= 32) takes a row's whole N per call where the
     * kernel has it (5 and 6 vectors): 1.04x to 1.22x the calls of 4 vectors
     * at 12544x96x16, 3136x96x24, 3136x80x16, 1000x65x27, 5000x90x32
     * (bench/RESULTS.md, issue 15, branch gdb3); order 1 keeps those calls */
    jb.wide = (order == 4 || (order == 0 && jb.rows_outer)) && kr->skinny_wide;
    jb.rows1 = (order == 5 || (order == 0 && gemm_skinny_rows1_default(g->m, g->n, g->k))) && kr->rows &&
               g->csa == 1 && (!jb.epi || jb.fuse);
    if (g->k == 0) { /* no products: the epilogue of zeros */
        for (int64_t i = 0; i < g->m; i++) memset(g->c + i * g->ldc, 0, sizeof(float) * (size_t)g->n);
        for (int64_t i = 0; jb.epi && i < g->m; i++)
            for (int64_t j = 0; j < g->n; j += 1 << 20)
                gemm_epi_tile(&g->epi, g->c + i * g->ldc + j, g->ldc, i, j, 1, (int)min64(1 << 20, g->n - j));
        return AIT_OK;
    }
    blocking(&jb, cf);
    /* Equal blocks (576 = 2 x 288, not 256 + 256 + 64): a short last kc block
     * would pay a C tile's load and store for little arithmetic. */
    int64_t nkb = (g->k + jb.kc - 1) / jb.kc;
    jb.kc = (int)up((g->k + nkb - 1) / nkb, 8);
    /* K in shares on the skinny path (skinny_call_k) but where a residual
     * comes after a fused activation (the shares' sum is the residual) */
    bool shares = !(jb.fuse && g->epi.res && g->epi.res_after && g->epi.act != GEMM_ACT_NONE);
    jb.skc = shares && cf && cf->kc > 0 && g->m > GEMM_SKINNY_M ? jb.kc : g->k;
    int t = cf && cf->threads > 0 ? cf->threads : g->threads > 1 ? g->threads : 1;
    int pa_mode = cf ? cf->pack_a : GEMM_PACKA_AUTO;
    /* the skinny path's prologue buffers, one per thread (after B's when packed here) */
    size_t pro_bytes;
    if (__builtin_mul_overflow(skinny_pro_floats(g) * sizeof(float), (size_t)t, &pro_bytes))
        return err_set(e, AIT_E_OVERFLOW, "GEMM: prologue buffers overflow");
    if (!g->pa && !g->pb && pa_mode == GEMM_PACKA_OFF) { /* B packed whole, then the skinny path */
        size_t bytes = gemm_pack_b_size(kr, g->k, g->n), at = (bytes + 63) & ~(size_t)63;
        char *pb = bytes && at + pro_bytes >= at ? buf_get(g, at + pro_bytes) : NULL;
        if (!pb) return err_set(e, AIT_E_NOMEM, "GEMM: out of memory packing B (%zu bytes)", bytes);
        gemm_pack_b(kr, g->b, g->rsb, g->csb, g->k, g->n, pb);
        gemm_packed v = {.kern = kr, .k = g->k, .mn = g->n, .data = (const float *)(pb + GEMM_PACK_HDR)};
        gemm_args g2 = *g;
        g2.pb = &v;
        jb.g = &g2;
        run_skinny(&jb, t, g->pro ? (float *)(pb + at) : NULL);
        buf_put(g, pb);
        return AIT_OK;
    }
    if (g->pb && !g->pa &&
        ((pa_mode == GEMM_PACKA_AUTO && gemm_skinny_default(kr, g->m, g->n, g->k, g->csa, t)) ||
         pa_mode == GEMM_PACKA_OFF)) {
        char *pbuf = g->pro ? buf_get(g, pro_bytes) : NULL;
        if (g->pro && !pbuf)
            return err_set(e, AIT_E_NOMEM, "GEMM: out of memory for %zu bytes of prologue buffers", pro_bytes);
        run_skinny(&jb, t, (float *)pbuf);
        if (pbuf) buf_put(g, pbuf);
        return AIT_OK;
    }
    if (cf && cf->splitk > 1) return run_splitk(&jb, cf->splitk, e);
    int tm = 1, tn = 1;
    grid(&jb, t, &tm, &tn);
    int64_t um = (g->m + kr->mr - 1) / kr->mr, un = (g->n + kr->nr - 1) / kr->nr;
    /* Per thread: its A block and B block buffers, sized to what it needs. */
    size_t fa, per = buf_bytes(&jb, ((um + tm - 1) / tm) * kr->mr, ((un + tn - 1) / tn) * kr->nr, &fa);
    size_t bytes = (size_t)(tm * tn) * per;
    char *buf = buf_get(g, bytes);
    if (!buf) return err_set(e, AIT_E_NOMEM, "GEMM: out of memory for %zu bytes of packing buffers", bytes);
    if (tm * tn == 1) {
        block(&jb, 0, g->m, 0, g->n, (float *)buf, buf_b(buf, fa));
    } else {
#pragma omp parallel num_threads(tm * tn)
        {
            int id = omp_get_thread_num();
            int64_t ml, mh, nl, nh;
            split(um, tm, id / tn, &ml, &mh);
            split(un, tn, id % tn, &nl, &nh);
            char *mine = buf + (size_t)id * per;
            if (ml < mh && nl < nh)
                block(&jb, ml * kr->mr, min64(mh * kr->mr, g->m), nl * kr->nr,
                      min64(nh * kr->nr, g->n), (float *)mine, buf_b(mine, fa));
        }
    }
    buf_put(g, buf);
    return AIT_OK;
}

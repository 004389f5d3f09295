/* The GEMM driver (gemm.h): BLIS's five loops around the micro-kernel
 *   jc (nc columns) > pc (kc of K: pack B) > ic (mc rows: pack A)
 *     > jr (NR) > ir (MR): micro-kernel, then the epilogue on the last pc,
 * and the skinny path. Threads split C into a grid of rectangles (rows
 * when M is large, else columns) that each run the loops on their own,
 * with their own packing buffers: no barriers, and a thread repacks only
 * its share of the other operand (a small cost next to its share of
 * arithmetic). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm_kern.h"
#include "kernels/gemm_pack.h"

typedef struct job {
    const gemm_args *g;
    const gemm_kernel *kr;
    int kc, mc, nc;
    bool epi; /* an epilogue other than identity */
} job;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t up(int64_t a, int64_t w) { return (a + w - 1) / w * w; }

static bool epi_none(const gemm_epi *e)
{
    return !e->scaled && e->bias_mode == GEMM_BIAS_NONE && !e->res && e->act == GEMM_ACT_NONE;
}

/* Tile (i, j) of size mr x nr from panels a, b over kb: straight into C
 * when full, else through an MR x NR buffer. */
static void tile(const job *jb, int64_t kb, const float *a, const float *b, int64_t i, int64_t j,
                 int mr, int nr, bool acc, bool last)
{
    const gemm_args *g = jb->g;
    const gemm_kernel *kr = jb->kr;
    float *c = g->c + i * g->ldc + j;
    if (mr == kr->mr && nr == kr->nr) {
        kr->ukr(kb, a, b, c, g->ldc, acc);
    } else {
        float t[32 * 32] __attribute__((aligned(64)));
        kr->ukr(kb, a, b, t, kr->nr, 0);
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
        for (int64_t pc = 0; pc < g->k; pc += jb->kc) {
            int64_t kb = min64(jb->kc, g->k - pc);
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
                    pa = bufa;
                    sa = kb * MR;
                }
                bool last = pc + kb == g->k;
                for (int64_t jr = 0; jr < nb; jr += NR)
                    for (int64_t ir = 0; ir < mb; ir += MR)
                        tile(jb, kb, pa + (ir / MR) * sa, pb + (jr / NR) * sb, ic + ir, jc + jr,
                             (int)min64(MR, mb - ir), (int)min64(NR, nb - jr), pc > 0, last);
            }
        }
    }
}

/* Skinny: columns [n0, n1) (n0 a multiple of NR), A read in place. */
static void skinny(const job *jb, int64_t n0, int64_t n1)
{
    const gemm_args *g = jb->g;
    const gemm_kernel *kr = jb->kr;
    const int NR = kr->nr;
    float t[GEMM_SKINNY_M * 32] __attribute__((aligned(64)));
    for (int64_t j = n0; j < n1; j += NR) {
        const float *b = g->pb->data + (j / NR) * g->k * NR;
        int nr = (int)min64(NR, n1 - j);
        for (int64_t i = 0; i < g->m; i += kr->skinny_m) {
            int m = (int)min64(kr->skinny_m, g->m - i);
            kr->skinny(g->k, m, g->a + i * g->rsa, g->rsa, g->csa, b, t);
            float *c = g->c + i * g->ldc + j;
            for (int r = 0; r < m; r++) memcpy(c + r * g->ldc, t + r * NR, sizeof(float) * (size_t)nr);
            if (jb->epi) gemm_epi_tile(&g->epi, c, g->ldc, i, j, m, nr);
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
    if (g->pb && (g->pb->is_a || g->pb->kern != kr || g->pb->mn != g->n || g->pb->k != g->k))
        return err_set(e, AIT_E_SHAPE, "packed B (%s, %lld x %lld) does not fit a %lld x %lld B of kernel %s",
                       g->pb->kern->name, (long long)g->pb->k, (long long)g->pb->mn, (long long)g->k,
                       (long long)g->n, kr->name);
    return AIT_OK;
}

ait_status gemm_f32(const gemm_args *g, ait_error *e)
{
    const gemm_kernel *kr = g->kern ? g->kern
                            : g->pb ? g->pb->kern
                            : g->pa ? g->pa->kern
                                    : gemm_kernel_best();
    TRY(check(g, kr, e));
    if (g->m == 0 || g->n == 0) return AIT_OK;
    job jb = {.g = g, .kr = kr, .epi = !epi_none(&g->epi)};
    if (g->k == 0) { /* no products: the epilogue of zeros */
        for (int64_t i = 0; i < g->m; i++) memset(g->c + i * g->ldc, 0, sizeof(float) * (size_t)g->n);
        for (int64_t i = 0; jb.epi && i < g->m; i++)
            for (int64_t j = 0; j < g->n; j += 1 << 20)
                gemm_epi_tile(&g->epi, g->c + i * g->ldc + j, g->ldc, i, j, 1, (int)min64(1 << 20, g->n - j));
        return AIT_OK;
    }
    gemm_blocking(kr, &jb.kc, &jb.mc, &jb.nc);
    /* Equal blocks (576 = 2 x 288, not 256 + 256 + 64): a short last kc block
     * would pay a C tile's load and store for little arithmetic. */
    int64_t nkb = (g->k + jb.kc - 1) / jb.kc;
    jb.kc = (int)up((g->k + nkb - 1) / nkb, 8);
    int t = g->threads > 1 ? g->threads : 1;
    int64_t un = (g->n + kr->nr - 1) / kr->nr;
    if (g->pb && !g->pa && g->m <= GEMM_SKINNY_M) {
        if (t > un) t = (int)un;
        if (t == 1) {
            skinny(&jb, 0, g->n);
            return AIT_OK;
        }
#pragma omp parallel num_threads(t)
        {
            int64_t lo, hi;
            split(un, t, omp_get_thread_num(), &lo, &hi);
            skinny(&jb, lo * kr->nr, min64(hi * kr->nr, g->n));
        }
        return AIT_OK;
    }
    int tm = 1, tn = 1;
    grid(&jb, t, &tm, &tn);
    int64_t um = (g->m + kr->mr - 1) / kr->mr;
    /* Per thread: its A block and B block buffers, sized to what it needs. */
    int64_t mrows = up(min64(jb.mc, ((um + tm - 1) / tm) * kr->mr), kr->mr);
    int64_t ncols = up(min64(jb.nc, ((un + tn - 1) / tn) * kr->nr), kr->nr);
    int64_t kb = min64(jb.kc, g->k);
    size_t fa = g->pa ? 0 : (size_t)(mrows * kb), fb = g->pb ? 0 : (size_t)(ncols * kb);
    size_t per = (fa + fb + 16) * sizeof(float) + 128;
    size_t bytes = (size_t)(tm * tn) * per;
    bytes = (bytes + 63) & ~(size_t)63;
    char *buf = aligned_alloc(64, bytes);
    if (!buf) return err_set(e, AIT_E_NOMEM, "GEMM: out of memory for %zu bytes of packing buffers", bytes);
    per = per & ~(size_t)63;
    if (tm * tn == 1) {
        block(&jb, 0, g->m, 0, g->n, (float *)buf, (float *)(buf + ((fa * sizeof(float) + 63) & ~(size_t)63)));
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
                      min64(nh * kr->nr, g->n), (float *)mine,
                      (float *)(mine + ((fa * sizeof(float) + 63) & ~(size_t)63)));
        }
    }
    free(buf);
    return AIT_OK;
}

/* The per-shape GEMM tuner (tune.h). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/tensor.h"
#include "gemmtune/queue.h"
#include "gemmtune/tune.h"
#include "kernels/isa.h"
#include "kernels/qgemm.h"
#include "tune/isolate.h"

#define CHECK_ROWS 64 /* rows of C checked against float64: spread over M */
#define MAX_CANDS 512

/* A shape's operands and its float64 reference, made before the children
 * fork (they read them copy-on-write). */
typedef struct shape {
    const gt_row *r;
    gemm_dtype dt;        /* scheme -1: float32 */
    float *a, *b;       /* as the layout stores them ('p': plain, packed per candidate) */
    int64_t rsa, csa, rsb, csb;
    int nrows;
    int64_t rows[CHECK_ROWS];
    double *ref, *bound; /* [nrows][n]: the sum and the error bound */
} shape;

typedef struct cand {
    char lib[16];    /* "" native, else a reference library ("f32": the float GEMM's default
                        on a quantised row's shape) */
    gemm_config cfg; /* native (a quantised row: threads only) */
    bool dflt;       /* the default config (cfg all 0) */
    int isa;         /* a quantised row: the ISA cap (kisa) its kernel runs under */
} cand;

typedef struct result {
    double us, err;
    char kern[24]; /* a quantised row: the kernel qgemm picked */
} result;

static float rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((*s >> 40) & 0xffff) / 32768.0f - 1.0f;
}

static void shape_free(shape *s)
{
    free(s->a);
    free(s->b);
    free(s->ref);
    free(s->bound);
}

/* What quantising adds to the error of C[i][j] at most (col: A's row i,
 * mag: sum |a b|), from half a step of each quantised operand: B's per
 * column (int8: max|b|/127; int4: a group's range / 15, at most 2 max|b| /
 * 15), A's per row (int8dq) or per tensor (u8s8, s8s8; the generated A
 * is in [-1, 1)), bf16's relative 2^-9 on each side (fp16's 2^-11 on B's); a little more than
 * the exact halves for the scales' own rounding. */
static double quant_bound(const shape *s, const double *col, int64_t j, double mag)
{
    const gt_row *r = s->r;
    if (s->dt.scheme == QG_BF16) return mag * 0x1p-7;
    if (s->dt.scheme == QG_FP16WO) return mag * 0x1p-10 + 0x1p-24 * (double)r->k; /* subnormals */
    double bmax = 0, bsum = 0, amax = 0, asum = 0;
    for (int64_t p = 0; p < r->k; p++) {
        double b = fabs((double)s->b[p * s->rsb + j * s->csb]), a = fabs(col[p]);
        bmax = b > bmax ? b : bmax;
        bsum += b;
        amax = a > amax ? a : amax;
        asum += a;
    }
    double eb = s->dt.scheme == QG_INT4WO ? bmax / 14 : bmax / 250;
    /* int4wo's A in int8 per group of k (qgemm.h's a8, qg_pack's): half a step of
     * its group's max|a| / 127, at most amax's */
    double ea = s->dt.a_int                                             ? 1.0 / 250
                : s->dt.scheme == QG_INT8DQ || s->dt.scheme == QG_INT4WO ? amax / 250
                                                                         : 0;
    return asum * eb + bsum * ea + (double)r->k * ea * eb;
}

static ait_status shape_make(const gt_row *r, shape *s, ait_error *e)
{
    memset(s, 0, sizeof *s);
    s->r = r;
    const int64_t m = r->m, n = r->n, k = r->k;
    int64_t na, nb;
    size_t bytes;
    if (__builtin_mul_overflow(m, k, &na) || __builtin_mul_overflow(k, n, &nb) ||
        __builtin_mul_overflow((size_t)(na > nb ? na : nb), sizeof(float), &bytes) || bytes > ((size_t)4 << 30))
        return err_set(e, AIT_E_OVERFLOW, "GEMM %lldx%lldx%lld: operands too large to tune",
                       (long long)m, (long long)n, (long long)k);
    s->a = malloc((size_t)na * sizeof(float));
    s->b = malloc((size_t)nb * sizeof(float));
    s->nrows = (int)(m < CHECK_ROWS ? m : CHECK_ROWS);
    s->ref = malloc(sizeof(double) * (size_t)s->nrows * (size_t)n);
    s->bound = malloc(sizeof(double) * (size_t)s->nrows * (size_t)n);
    if (!s->a || !s->b || !s->ref || !s->bound) {
        shape_free(s);
        return err_set(e, AIT_E_NOMEM, "out of memory for a %lldx%lldx%lld GEMM", (long long)m,
                       (long long)n, (long long)k);
    }
    uint64_t seed = (uint64_t)(m * 31 + n * 17 + k);
    for (int64_t i = 0; i < na; i++) s->a[i] = rnd(&seed);
    for (int64_t i = 0; i < nb; i++) s->b[i] = rnd(&seed);
    if (!gemm_dtype_parse(r->dtype, &s->dt)) {
        shape_free(s);
        return err_set(e, AIT_E_INVALID_ARG, "GEMM %lldx%lldx%lld: unknown dtype '%s'", (long long)m,
                       (long long)n, (long long)k, r->dtype);
    }
    bool ta = r->layout[0] == 't', tb = r->layout[1] == 't';
    s->rsa = ta ? 1 : k;
    s->csa = ta ? m : 1;
    s->rsb = tb ? 1 : n;
    s->csb = tb ? k : 1;
    double *col = malloc(sizeof(double) * (size_t)k);
    if (!col) {
        shape_free(s);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    for (int q = 0; q < s->nrows; q++) {
        int64_t i = s->nrows == m ? q : (int64_t)q * (m - 1) / (s->nrows - 1);
        s->rows[q] = i;
        for (int64_t p = 0; p < k; p++) col[p] = s->a[i * s->rsa + p * s->csa];
        for (int64_t j = 0; j < n; j++) {
            double sum = 0, mag = 0;
            for (int64_t p = 0; p < k; p++) {
                double v = col[p] * (double)s->b[p * s->rsb + j * s->csb];
                sum += v;
                mag += fabs(v);
            }
            /* float32 summing k products: a few ulps per term in the worst
             * case; sqrt(k) for rounding errors that do not all line up */
            s->ref[(size_t)q * (size_t)n + (size_t)j] = sum;
            s->bound[(size_t)q * (size_t)n + (size_t)j] = 4.0 * FLT_EPSILON * sqrt((double)k + 1) * mag + 1e-30;
            if (s->dt.scheme >= 0) s->bound[(size_t)q * (size_t)n + (size_t)j] += quant_bound(s, col, j, mag);
        }
    }
    free(col);
    return AIT_OK;
}

/* ---- one candidate, in the child ------------------------------------------------- */

typedef struct child {
    const shape *s;
    const cand *c;
    int warmup, iters;
    profile_clock_fn clock; /* what times each run */
    result res;
} child;

/* Whether a config runs on the calling thread alone (the default's threads
 * are the caller's: 1 here), so its thread's CPU time is its time. */
static bool one_thread(const gemm_config *cfg)
{
    return !cfg || (cfg->threads <= 1 && cfg->splitk <= 1);
}

/* The clock a candidate is timed by (gt_opts.cpu_clock). */
static profile_clock_fn cand_clock(const gt_opts *o, const cand *c)
{
    if (o->clock) return o->clock;
    return profile_clock(o->cpu_clock && (c->lib[0] || one_thread(&c->cfg)));
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* A quantised row's candidate: B quantised and packed as the scheme does
 * (qg_pack), A as it arrives (float, or quantised per tensor here for
 * u8s8 / s8s8, as MatMulInteger's input is), qgemm at cfg.threads under
 * the ISA cap. */
typedef struct qrun {
    qg_packed v;
    void *buf;
    uint8_t *qa;
    float sa;
    int32_t za;
} qrun;

static ait_status qrun_make(const shape *s, const cand *cd, qrun *q, ait_error *e)
{
    const gt_row *r = s->r;
    memset(q, 0, sizeof *q);
    if (cd->isa >= 0 && cd->isa < KISA_N) kisa_force((kisa)cd->isa);
    size_t sz = qg_pack_size(s->dt.scheme, s->dt.group ? s->dt.group : 32, r->k, r->n);
    if (!sz || !(q->buf = aligned_zalloc(sz))) return err_set(e, AIT_E_NOMEM, "out of memory for B");
    qg_pack(s->dt.scheme, s->dt.group ? s->dt.group : 32, s->b, s->rsb, s->csb, r->k, r->n, q->buf);
    TRY(qg_view(q->buf, sz, &q->v, e));
    if (!s->dt.a_int) return AIT_OK;
    size_t na = (size_t)(r->m * r->k);
    if (!(q->qa = malloc(na))) return err_set(e, AIT_E_NOMEM, "out of memory for A");
    if (s->dt.a_int < 0) {
        uint8_t zp;
        qg_dynq_u8(s->a, (int64_t)na, q->qa, &q->sa, &zp);
        q->za = zp;
    } else {
        float amax = 0;
        for (size_t i = 0; i < na; i++) amax = fabsf(s->a[i]) > amax ? fabsf(s->a[i]) : amax;
        q->sa = amax > 0 ? amax / 127 : 1;
        for (size_t i = 0; i < na; i++) q->qa[i] = (uint8_t)(int8_t)lrintf(s->a[i] / q->sa);
    }
    return AIT_OK;
}

static ait_status qrun_once(const shape *s, const qrun *q, int threads, float *c, ait_error *e)
{
    const gt_row *r = s->r;
    if (q->qa)
        return qgemm_q8(&q->v, q->qa, s->dt.a_int > 0, r->k, r->m, q->sa, q->za, c, r->n, NULL, threads, e);
    return qgemm(&q->v, s->a, r->k, r->m, c, r->n, NULL, threads, e);
}

static ait_status run_child(void *ctx, const void **out, size_t *len, ait_error *e)
{
    child *ch = ctx;
    const shape *s = ch->s;
    const gt_row *r = s->r;
    const int64_t m = r->m, n = r->n, k = r->k;
    float *c = aligned_zalloc(sizeof(float) * (size_t)(m * n));
    if (!c) return err_set(e, AIT_E_NOMEM, "out of memory for C");
    bool quant = s->dt.scheme >= 0 && !ch->c->lib[0];
    qrun qr = {0};
    if (quant) {
        TRY(qrun_make(s, ch->c, &qr, e));
        snprintf(ch->res.kern, sizeof ch->res.kern, "%s", qg_kernel_name(s->dt.scheme));
    }
    gemm_args g = {.m = m, .n = n, .k = k, .a = s->a, .rsa = s->rsa, .csa = s->csa, .b = s->b,
                   .rsb = s->rsb, .csb = s->csb, .c = c, .ldc = n, .cfg = ch->c->dflt ? NULL : &ch->c->cfg};
    const gemm_kernel *kr = ch->c->cfg.kern ? ch->c->cfg.kern : gemm_kernel_best();
    gemm_packed pa, pb;
    void *bufa = NULL, *bufb = NULL;
    bool native = !quant && (!ch->c->lib[0] || !strcmp(ch->c->lib, "f32"));
    if (native && r->layout[0] == 'p') {
        size_t sz = gemm_pack_a_size(kr, m, k);
        if (!sz || !(bufa = aligned_zalloc(sz))) return err_set(e, AIT_E_NOMEM, "out of memory");
        gemm_pack_a(kr, s->a, s->rsa, s->csa, m, k, bufa);
        TRY(gemm_packed_view(bufa, sz, &pa, e));
        g.pa = &pa;
        g.a = NULL;
    }
    if (native && (r->layout[1] == 'p' || s->dt.scheme >= 0)) { /* a quantised row's B: weights */
        size_t sz = gemm_pack_b_size(kr, k, n);
        if (!sz || !(bufb = aligned_zalloc(sz))) return err_set(e, AIT_E_NOMEM, "out of memory");
        gemm_pack_b(kr, s->b, s->rsb, s->csb, k, n, bufb);
        TRY(gemm_packed_view(bufb, sz, &pb, e));
        g.pb = &pb;
        g.b = NULL;
    }
    int iters = ch->iters > 0 ? ch->iters : 1;
    double *t = malloc(sizeof(double) * (size_t)iters);
    if (!t) return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int it = -ch->warmup; it < iters; it++) {
        int64_t t0 = ch->clock(NULL);
        if (quant) TRY(qrun_once(s, &qr, ch->c->cfg.threads, c, e));
        else if (ch->c->lib[0] && strcmp(ch->c->lib, "f32") != 0)
            TRY(gt_ref_sgemm(ch->c->lib, r->layout, m, n, k, s->a, s->b, c, e));
        else TRY(gemm_f32(&g, e));
        int64_t t1 = ch->clock(NULL);
        if (it >= 0) t[it] = (double)(t1 - t0) * 1e-3;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_d);
    ch->res.us = t[iters / 2];
    int64_t bad = 0;
    for (int q = 0; q < s->nrows; q++)
        for (int64_t j = 0; j < n; j++) {
            size_t at = (size_t)q * (size_t)n + (size_t)j;
            double got = c[s->rows[q] * n + j];
            if (!(fabs(got - s->ref[at]) <= s->bound[at])) bad++;
        }
    ch->res.err = (double)bad / ((double)s->nrows * (double)n);
    *out = &ch->res;
    *len = sizeof ch->res;
    return AIT_OK;
}

/* ---- candidates ------------------------------------------------------------------- */

/* Whether cfg runs the default's code: every field 0 but one thread (the
 * tune's default runs on one) and the best kernel. A candidate of its own
 * would only race the default against itself, and in the duel below win by
 * noise as often as not. */
static bool same_as_default(const gemm_config *cfg)
{
    gemm_config z = *cfg;
    if (z.threads == 1) z.threads = 0;
    if (z.kern == gemm_kernel_best()) z.kern = NULL;
    return !memcmp(&z, &(gemm_config){0}, sizeof z);
}

static int add(cand *cs, int n, const gemm_config *cfg, bool dflt)
{
    if (n >= MAX_CANDS || (!dflt && same_as_default(cfg))) return n;
    for (int i = 0; i < n; i++)
        if (!cs[i].lib[0] && !memcmp(&cs[i].cfg, cfg, sizeof *cfg) && cs[i].dflt == dflt) return n;
    cs[n] = (cand){.cfg = *cfg, .dflt = dflt, .isa = -1};
    return n + 1;
}

/* A quantised row's: qgemm has no blocking to choose (its panels are QG_NR
 * wide, its rows the kernel's), so threads 1..--threads, each on the
 * kernel CPUID picks and (--all) the portable one; the default first
 * (the caller's threads: 1 here). */
static int qcandidates(const gt_opts *o, cand *cs)
{
    int n = add(cs, 0, &(gemm_config){0}, true);
    int threads = o->threads > 0 ? o->threads : 1;
    for (int t = 1; t <= threads; t++) {
        if (n < MAX_CANDS) cs[n++] = (cand){.cfg = {.threads = t}, .isa = -1}; /* t1 too: the row's id says t1 */
        if (o->all && n < MAX_CANDS) cs[n++] = (cand){.cfg = {.threads = t}, .isa = KISA_PORTABLE};
    }
    return n;
}

/* The native configs to try for row r: the default first. */
static int candidates(const gt_row *r, const gt_opts *o, cand *cs)
{
    gemm_dtype dt;
    if (gemm_dtype_parse(r->dtype, &dt) && dt.scheme >= 0) return qcandidates(o, cs);
    int n = add(cs, 0, &(gemm_config){0}, true);
    bool packed = r->layout[0] == 'p' || r->layout[1] == 'p';
    int threads = o->threads > 0 ? o->threads : 1;
    for (int ki = 0; ki < gemm_kernel_count(); ki++) {
        const gemm_kernel *kr = gemm_kernel_at(ki);
        if (!gemm_kernel_available(kr)) continue;
        bool best = kr == gemm_kernel_best();
        if (packed && !best) continue; /* the packing fixes the kernel */
        if (!best && !o->all && !gemm_kernel_tried(kr)) continue;
        int mr = gemm_kernel_mr(kr);
        gemm_config base = {.kern = packed ? NULL : kr};
        static const int kcs[] = {0, 128, 256, 384}, ncs[] = {0, 1024, 4096};
        const int mcs[] = {0, 4 * mr, 16 * mr};
        const int snv = gemm_kernel_skinny_nv(kr), svw = gemm_kernel_skinny_vw(kr);
        for (int t = 1; t <= threads; t++) {
            base.threads = t;
            /* B prepacked, M past 16, and the default takes the skinny path
             * (A in place), where blocking does nothing: its width per call
             * (fewer vectors, more rows: the default is the widest), its
             * order (1: rows outer; 2 columns outer and 3 rows outer with C
             * streamed, where the default is rows outer), and the packed
             * path beside it; at
             * M <= 16 every width (the default picks one from M) */
            bool skinny = r->layout[1] == 'p' && r->layout[0] != 'p' && r->m > GEMM_SKINNY_M &&
                          gemm_skinny_default(kr, r->m, r->n, r->k, 1, t);
            bool small = r->layout[1] == 'p' && r->layout[0] != 'p' && r->m <= GEMM_SKINNY_M;
            for (int v = 1; v <= snv && (skinny || small || o->all); v++) {
                if (v * svw % gemm_kernel_nr(kr)) continue; /* not a width of its own */
                if (v == snv && !small) continue;
                gemm_config x = base;
                x.skinny_nv = v;
                n = add(cs, n, &x, false);
            }
            if (skinny && !o->all) {
                gemm_config x = base;
                n = add(cs, n, &x, false);
                x.order = 1, n = add(cs, n, &x, false); /* rows outer */
                if (gemm_skinny_rows_default(r->m, r->n, r->k) || gemm_skinny_rows1_default(r->m, r->n, r->k))
                    x.order = 2, n = add(cs, n, &x, false); /* columns outer */
                if (r->k <= GEMM_SKINNY_ROWS_K)
                    x.order = 3, n = add(cs, n, &x, false); /* rows outer, C streamed */
                if (!gemm_skinny_rows1_default(r->m, r->n, r->k)) /* else the default's */
                    x.order = 5, n = add(cs, n, &x, false); /* rows outer in one kernel call */
                x.order = 0;
                /* K in shares of about kc over the block's rows (columns
                 * outer, K past 32: gemm.h's kc on the skinny path), each
                 * share of B (kc x 64) kept in L1 or L2 over the calls */
                for (int a = 1; a < 3 && r->k > GEMM_SKINNY_ROWS_K; a++)
                    if (r->k > kcs[a]) x.kc = kcs[a], n = add(cs, n, &x, false);
                x.kc = 0;
                x.pack_a = GEMM_PACKA_ON;
                n = add(cs, n, &x, false);
                x.kc = 128, n = add(cs, n, &x, false);
            } else if (r->layout[1] == 'p' && r->layout[0] != 'p' && r->m <= GEMM_SKINNY_M) {
                /* the skinny path has no blocking: pack A on instead, blocked */
                gemm_config x = base;
                n = add(cs, n, &x, false);
                x.pack_a = GEMM_PACKA_ON;
                for (int a = 0; a < (o->all ? 4 : 3); a++) x.kc = kcs[a], n = add(cs, n, &x, false);
            } else if (o->all) {
                for (int a = 0; a < 4; a++)
                    for (int b = 0; b < 3; b++)
                        for (int c = 0; c < 3; c++)
                            for (int d = 0; d < 2; d++)
                                for (int p = 0; p < 3; p++) {
                                    gemm_config x = base;
                                    x.kc = kcs[a], x.mc = mcs[b], x.nc = ncs[c], x.order = d, x.pack_a = p;
                                    n = add(cs, n, &x, false);
                                }
            } else {
                gemm_config x = base;
                n = add(cs, n, &x, false);
                x.kc = 128, n = add(cs, n, &x, false);
                x.kc = 384, n = add(cs, n, &x, false);
                x = base, x.mc = 4 * mr, n = add(cs, n, &x, false);
                x = base, x.nc = 1024, n = add(cs, n, &x, false);
                x = base, x.order = 1, n = add(cs, n, &x, false);
                x = base, x.pack_a = r->m <= GEMM_SKINNY_M ? GEMM_PACKA_ON : GEMM_PACKA_OFF;
                if (r->m <= 4 * GEMM_SKINNY_M) n = add(cs, n, &x, false);
            }
            for (int sk = 2; o->splitk && sk <= t; sk *= 2) {
                gemm_config x = base;
                x.splitk = sk;
                n = add(cs, n, &x, false);
            }
        }
    }
    return n;
}

static ait_status retime_shape(const shape *s, const gemm_config *cfg, int rounds, int iters,
                               profile_clock_fn fixed, bool cpu_clock, const char *const *libs, int nlib,
                               double *def_us, double *tuned_us, double *lib_us, ait_error *e);

/* The tune's winner against the default, head to head in one child
 * (retime_shape: interleaved rounds). */
typedef struct duel {
    const shape *s;
    const gemm_config *cfg;
    int rounds, iters;
    profile_clock_fn fixed;
    bool cpu_clock;
    double us[2]; /* the default's, the winner's */
} duel;

static ait_status run_duel(void *ctx, const void **out, size_t *len, ait_error *e)
{
    duel *d = ctx;
    TRY(retime_shape(d->s, d->cfg, d->rounds, d->iters, d->fixed, d->cpu_clock, NULL, 0, &d->us[0], &d->us[1],
                     NULL, e));
    *out = d->us;
    *len = sizeof d->us;
    return AIT_OK;
}

/* ---- one shape ----------------------------------------------------------------------- */

static void cand_name(const gt_row *r, const cand *c, char *buf, size_t n)
{
    gemm_dtype dt;
    if (c->lib[0]) snprintf(buf, n, "%s", strcmp(c->lib, "f32") ? c->lib : "f32 default");
    else if (c->dflt) snprintf(buf, n, "default");
    else if (gemm_dtype_parse(r->dtype, &dt) && dt.scheme >= 0)
        snprintf(buf, n, "%s.t%d%s", r->dtype, c->cfg.threads, c->isa == KISA_PORTABLE ? ".portable" : "");
    else gemm_config_id(&c->cfg, gemm_kernel_best(), buf, n);
}

int gt_candidate_count(const gt_row *r, const gt_opts *o)
{
    cand *cs = calloc(MAX_CANDS + 2, sizeof *cs);
    int n = cs ? candidates(r, o, cs) : 1;
    free(cs);
    static const char *const libs[] = {"openblas", "onednn", "blis"};
    if (strcmp(r->dtype, "f32") != 0) n++; /* the float GEMM's default beside it */
    for (size_t l = 0; o->refs && r->layout[0] != 'p' && l < sizeof libs / sizeof *libs; l++)
        if (gt_ref_available(libs[l])) n++;
    return n;
}

ait_status gt_tune_shape(const gt_row *in, const gt_opts *o, gt_row *out, ait_error *e)
{
    double wall0, cpu0;
    gt_usage(&wall0, &cpu0);
    shape s;
    TRY(shape_make(in, &s, e));
    cand *cs = calloc(MAX_CANDS + 2, sizeof *cs);
    if (!cs) {
        shape_free(&s);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    int nc = candidates(in, o, cs);
    int native = nc;
    static const char *const libs[] = {"openblas", "onednn", "blis"};
    if (strcmp(in->dtype, "f32") != 0) /* a quantised row: the float GEMM's default beside it */
        snprintf(cs[nc++].lib, sizeof cs->lib, "f32");
    for (size_t l = 0; o->refs && in->layout[0] != 'p' && l < sizeof libs / sizeof *libs; l++)
        if (gt_ref_available(libs[l])) snprintf(cs[nc++].lib, sizeof cs->lib, "%s", libs[l]);
    *out = *in;
    gt_cpu_this(&out->cpu);
    out->count = 0;
    snprintf(out->kernel, sizeof out->kernel, "failed");
    memset(&out->cfg, 0, sizeof out->cfg);
    out->us = out->default_us = 0;
    out->err_ratio = 1;
    isolate_opts io = {.timeout = o->timeout > 0 ? o->timeout : 10};
    char refs[200] = "", best_name[128] = "failed";
    double best = INFINITY;
    int best_i = -1;
    for (int i = 0; i < nc; i++) {
        child ch = {.s = &s, .c = &cs[i], .warmup = o->warmup > 0 ? o->warmup : 2,
                    .iters = o->iters > 0 ? o->iters : 10, .clock = cand_clock(o, &cs[i])};
        isolate_result ir;
        ait_error ce = {0};
        char name[128];
        cand_name(in, &cs[i], name, sizeof name);
        ait_status st = isolate_run(&io, run_child, &ch, &ir, &ce);
        result res = {0};
        if (st == AIT_OK && ir.len == sizeof res) memcpy(&res, ir.data, sizeof res);
        else if (st == AIT_OK) st = err_set(&ce, AIT_E_INTERNAL, "a result of %zu bytes", ir.len);
        free(ir.data);
        if (st != AIT_OK) {
            log_msg(&o->log, AIT_LOG_DEBUG, "gemm %lldx%lldx%lld %s: %s: failed: %s", (long long)in->m,
                    (long long)in->n, (long long)in->k, in->layout, name, ce.msg);
            continue;
        }
        bool pass = res.err <= o->err_ratio;
        log_msg(&o->log, AIT_LOG_DEBUG, "gemm %lldx%lldx%lld %s: %s: %.2f us, error ratio %g%s",
                (long long)in->m, (long long)in->n, (long long)in->k, in->layout, name, res.us,
                res.err, pass ? "" : " (rejected)");
        if (cs[i].lib[0]) {
            size_t l = strlen(refs);
            snprintf(refs + l, sizeof refs - l, ", %s %.1f us%s", name, res.us, pass ? "" : " (rejected)");
            continue;
        }
        if (cs[i].dflt) out->default_us = res.us;
        if (!pass || i >= native || res.us >= best) continue;
        best = res.us;
        best_i = i;
        out->us = res.us;
        out->err_ratio = res.err;
        out->cfg = cs[i].cfg;
        out->cpu_clock = ch.clock == profile_thread_cpu_ns;
        const gemm_kernel *kr = cs[i].cfg.kern ? cs[i].cfg.kern : gemm_kernel_best();
        snprintf(out->kernel, sizeof out->kernel, "%s", res.kern[0] ? res.kern : gemm_kernel_name(kr));
        if (res.kern[0]) snprintf(best_name, sizeof best_name, "%s", name);
        else gemm_config_id(&out->cfg, gemm_kernel_best(), best_name, sizeof best_name);
    }
    /* A winner other than the default keeps its place only if it beats the
     * default by GT_CONFIRM_GAIN in interleaved rounds in one process: the
     * candidates' medians come from separate children, and at a load of
     * 20 on 2 cores the lowest of a dozen medians is mostly the noise's
     * pick (bench/RESULTS.md, issue 15, branch gdb: the tune's 1.10x over
     * the default re-timed at 1.01x). The row's us and default_us are then
     * the duel's. */
    if (out->us > 0 && best_i >= 0 && !cs[best_i].dflt && o->confirm >= 0 && s.dt.scheme < 0 && in->layout[0] != 'p') {
        /* R rounds of iters runs as R x iters rounds of one run each (64 at
         * most): the two alternate run by run, so a change of load between
         * runs falls on both alike */
        int rounds = o->confirm > 0 ? o->confirm : GT_CONFIRM_ROUNDS, iters = o->iters > 0 ? o->iters : 10;
        duel d = {.s = &s, .cfg = &out->cfg, .rounds = rounds * iters < 64 ? rounds * iters : 64, .iters = 1,
                  .fixed = o->clock, .cpu_clock = o->cpu_clock};
        isolate_opts dio = {.timeout = io.timeout * (rounds + 1)};
        isolate_result ir;
        ait_error ce = {0};
        ait_status st = isolate_run(&dio, run_duel, &d, &ir, &ce);
        if (st == AIT_OK && ir.len == sizeof d.us) memcpy(d.us, ir.data, sizeof d.us);
        else if (st == AIT_OK) st = err_set(&ce, AIT_E_INTERNAL, "a result of %zu bytes", ir.len);
        free(ir.data);
        if (st != AIT_OK) {
            log_msg(&o->log, AIT_LOG_DEBUG, "gemm %lldx%lldx%lld %s: %s against the default: failed: %s",
                    (long long)in->m, (long long)in->n, (long long)in->k, in->layout, best_name, ce.msg);
        } else {
            bool keep = d.us[1] * GT_CONFIRM_GAIN < d.us[0];
            log_msg(&o->log, AIT_LOG_DEBUG, "gemm %lldx%lldx%lld %s: %s %.2f us against the default %.2f us "
                    "in %d alternated runs: %s", (long long)in->m, (long long)in->n, (long long)in->k,
                    in->layout, best_name, d.us[1], d.us[0], d.rounds, keep ? "kept" : "the default kept");
            out->default_us = d.us[0];
            out->us = keep ? d.us[1] : d.us[0];
            if (!keep) {
                memset(&out->cfg, 0, sizeof out->cfg);
                snprintf(out->kernel, sizeof out->kernel, "%s", gemm_kernel_name(gemm_kernel_best()));
                gemm_config_id(&out->cfg, gemm_kernel_best(), best_name, sizeof best_name);
            }
            out->cpu_clock = !o->clock && o->cpu_clock && one_thread(&out->cfg);
        }
    }
    if (out->us > 0) {
        double flop = 2.0 * (double)in->m * (double)in->n * (double)in->k;
        /* bytes of each operand as the kernel reads them: B quantised, A
         * integer for u8s8 / s8s8 */
        double ab = s.dt.a_int ? 1 : s.dt.scheme == QG_BF16 ? 2 : 4,
               bb = s.dt.scheme < 0 ? 4 : s.dt.scheme == QG_BF16 || s.dt.scheme == QG_FP16WO ? 2
                   : s.dt.scheme == QG_INT4WO                            ? 0.5
                                                                         : 1;
        double bytes = ab * (double)in->m * in->k + bb * (double)in->k * in->n + 4.0 * (double)in->m * in->n;
        out->gflops = flop / out->us * 1e-3;
        out->gbs = bytes / out->us * 1e-3;
    }
    free(cs);
    shape_free(&s);
    /* what the shape's tune took, its children's CPU time included: where
     * a --mp or --mpi run spends its time */
    double wall1, cpu1;
    gt_usage(&wall1, &cpu1);
    log_msg(&o->log, AIT_LOG_INFO, "gemm M=%lld N=%lld K=%lld %s %s: %s %.1f us%s (default %.1f us, %.2fx)%s; "
            "tuned in %.2f s, CPU %.2f s", (long long)in->m, (long long)in->n, (long long)in->k, in->dtype,
            in->layout, best_name, out->us, out->cpu_clock ? " CPU" : "", out->default_us,
            out->us > 0 ? out->default_us / out->us : 0, refs, wall1 - wall0, cpu1 - cpu0);
    return AIT_OK;
}

/* ---- the whole tune ---------------------------------------------------------------- */

static int cmp_row(const void *x, const void *y)
{
    const gt_row *a = x, *b = y;
    int c = strcmp(a->layout, b->layout);
    if (c) return c;
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    if (a->k != b->k) return a->k < b->k ? -1 : 1;
    if (a->m != b->m) return a->m < b->m ? -1 : 1;
    return strcmp(a->epi, b->epi);
}

/* Worker w of mp, pinned to a core (mp > 1): the todo shapes the queue
 * hands it, the dearest first, until none is left; its shapes, busy time
 * and CPU time into its slot. */
static int worker(const gt_db *todo, gt_queue *q, int w, int mp, const char *out_path, const gt_opts *o)
{
    if (mp > 1) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((int)(w % (ncpu > 0 ? ncpu : 1)), &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    gt_queue_slot *slot = gt_queue_slot_at(q, w);
    double wall0, cpu0, wall, cpu;
    gt_usage(&wall0, &cpu0);
    int rc = 0;
    for (int i; (i = gt_queue_take(q)) >= 0;) {
        gt_row row;
        ait_error e = {0};
        if (gt_tune_shape(&todo->rows[i], o, &row, &e) != AIT_OK ||
            gt_db_append(out_path, &row, &e) != AIT_OK) {
            log_msg(&o->log, AIT_LOG_ERROR, "gemm %lldx%lldx%lld: %s", (long long)todo->rows[i].m,
                    (long long)todo->rows[i].n, (long long)todo->rows[i].k, e.msg);
            rc = 1;
        }
        gt_usage(&wall, &cpu);
        *slot = (gt_queue_slot){.shapes = slot->shapes + 1, .wall = wall - wall0, .cpu = cpu - cpu0};
    }
    return rc;
}

ait_status gt_todo(const gt_db *untuned, const char *out_path, const gt_opts *o, gt_db *todo,
                   ait_error *e)
{
    gt_cpu cpu;
    gt_cpu_this(&cpu);
    gt_db done = {.tuned = true};
    *todo = (gt_db){.tuned = false};
    if (access(out_path, F_OK) == 0) TRY(gt_db_load(out_path, true, &done, e));
    ait_status s = AIT_OK;
    for (int i = 0; s == AIT_OK && i < untuned->n; i++) {
        gt_row key = untuned->rows[i];
        key.cpu = cpu;
        bool have = false;
        for (int j = 0; j < done.n && !have; j++) have = gt_same_key(&done.rows[j], &key, true);
        if (!have) s = gt_db_merge(todo, &untuned->rows[i], e);
    }
    if (s == AIT_OK && done.n)
        log_msg(&o->log, AIT_LOG_INFO, "%s: %d shape%s already tuned, %d to go", out_path, done.n,
                done.n == 1 ? "" : "s", todo->n);
    if (s == AIT_OK) s = gt_order(todo, o, e);
    if (s == AIT_OK && todo->n && done.n == 0) {
        gt_db empty = {.tuned = true};
        s = gt_db_save(out_path, &empty, e); /* the header, before rows are appended */
    }
    gt_db_free(&done);
    if (s != AIT_OK) gt_db_free(todo);
    return s;
}

ait_status gt_finish(const char *out_path, ait_error *e)
{
    if (access(out_path, F_OK) != 0) return AIT_OK;
    gt_db done;
    TRY(gt_db_load(out_path, true, &done, e));
    qsort(done.rows, (size_t)done.n, sizeof *done.rows, cmp_row);
    ait_status s = gt_db_save(out_path, &done, e);
    gt_db_free(&done);
    return s;
}

ait_status gt_tune(const gt_db *untuned, const char *out_path, const gt_opts *o, ait_error *e)
{
    gt_db todo;
    TRY(gt_todo(untuned, out_path, o, &todo, e));
    int mp = o->mp > 1 ? o->mp : 1;
    if (mp > todo.n) mp = todo.n > 0 ? todo.n : 1;
    if (mp > 256) mp = 256;
    gt_queue q;
    ait_status s = todo.n ? gt_queue_open(&q, todo.n, mp, e) : AIT_OK;
    if (s != AIT_OK) {
        gt_db_free(&todo);
        return s;
    }
    double wall0, cpu0, wall1, cpu1;
    gt_usage(&wall0, &cpu0);
    if (todo.n && mp == 1) {
        if (worker(&todo, &q, 0, 1, out_path, o))
            s = err_set(e, AIT_E_INTERNAL, "some shapes could not be tuned (see above)");
    } else if (todo.n) {
        pid_t pids[256];
        int started = 0;
        fflush(NULL);
        for (int w = 0; w < mp; w++) {
            pid_t p = fork();
            if (p == 0) _exit(worker(&todo, &q, w, mp, out_path, o));
            if (p < 0) {
                s = err_set(e, AIT_E_IO, "fork: %s", strerror(errno));
                break;
            }
            pids[started++] = p;
        }
        for (int w = 0; w < started; w++) {
            int st;
            while (waitpid(pids[w], &st, 0) < 0 && errno == EINTR) {}
            if (s == AIT_OK && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
                s = err_set(e, AIT_E_INTERNAL, "a tuning process failed (see above)");
        }
    }
    if (todo.n) {
        /* each process's share: a process busy for less than the run's wall
         * time waited for the others at the end */
        gt_usage(&wall1, &cpu1);
        for (int w = 0; w < mp; w++) {
            const gt_queue_slot *sl = gt_queue_slot_at(&q, w);
            log_msg(&o->log, AIT_LOG_INFO, "process %d of %d: %d shape%s in %.1f s of the run's %.1f s, CPU %.1f s "
                    "(%.0f%% of the run)", w + 1, mp, sl->shapes, sl->shapes == 1 ? "" : "s", sl->wall,
                    wall1 - wall0, sl->cpu, wall1 > wall0 ? 100 * sl->cpu / (wall1 - wall0) : 0);
        }
        gt_queue_close(&q);
    }
    gt_db_free(&todo);
    /* sorted, whatever order the processes finished in */
    ait_error e2 = {0};
    if (gt_finish(out_path, &e2) != AIT_OK && s == AIT_OK) s = err_set(e, e2.code, "%s", e2.msg);
    return s;
}

/* ---- re-timing, for compare --------------------------------------------------------- */

/* The median of iters runs of the native GEMM with cfg, or of lib's sgemm,
 * timed by clk. */
static double time_once(const shape *s, const gemm_config *cfg, const char *lib, float *c,
                        const gemm_packed *pb, int iters, profile_clock_fn clk, ait_error *e, ait_status *st)
{
    const gt_row *r = s->r;
    gemm_args g = {.m = r->m, .n = r->n, .k = r->k, .a = s->a, .rsa = s->rsa, .csa = s->csa,
                   .b = pb ? NULL : s->b, .pb = pb, .rsb = s->rsb, .csb = s->csb, .c = c,
                   .ldc = r->n, .cfg = cfg};
    double t[64];
    if (iters > 64) iters = 64;
    for (int i = 0; i < iters; i++) {
        int64_t t0 = clk(NULL);
        *st = lib ? gt_ref_sgemm(lib, r->layout, r->m, r->n, r->k, s->a, s->b, c, e) : gemm_f32(&g, e);
        if (*st != AIT_OK) return 0;
        t[i] = (double)(clk(NULL) - t0) * 1e-3;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_d);
    return t[iters / 2];
}

/* Shape s's default config and cfg (and each library) timed in this
 * process, interleaved: `rounds` rounds of `iters` runs each, the median of
 * each side's round medians. Each by `fixed` when given (tests' fake
 * clock), else by the thread's CPU time where cpu_clock asks and the side
 * runs on this thread alone (the libraries, a one-thread config), else the
 * wall clock. */
static ait_status retime_shape(const shape *s, const gemm_config *cfg, int rounds, int iters,
                               profile_clock_fn fixed, bool cpu_clock, const char *const *libs, int nlib,
                               double *def_us, double *tuned_us, double *lib_us, ait_error *e)
{
    const gt_row *r = s->r;
    float *c = aligned_zalloc(sizeof(float) * (size_t)(r->m * r->n));
    const gemm_kernel *kr = gemm_kernel_best();
    void *buf = NULL;
    gemm_packed pb;
    ait_status st = c ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    if (st == AIT_OK && r->layout[0] == 'p')
        st = err_set(e, AIT_E_UNSUPPORTED, "re-timing a prepacked A is not done");
    if (st == AIT_OK && nlib > GT_RETIME_MAX_LIBS)
        st = err_set(e, AIT_E_INVALID_ARG, "%d libraries to re-time (at most %d)", nlib, GT_RETIME_MAX_LIBS);
    if (st == AIT_OK && r->layout[1] == 'p') {
        size_t sz = gemm_pack_b_size(kr, r->k, r->n);
        buf = sz ? aligned_zalloc(sz) : NULL;
        if (!buf) st = err_set(e, AIT_E_NOMEM, "out of memory");
        else {
            gemm_pack_b(kr, s->b, s->rsb, s->csb, r->k, r->n, buf);
            st = gemm_packed_view(buf, sz, &pb, e);
        }
    }
    profile_clock_fn dclk = fixed ? fixed : profile_clock(cpu_clock),
                     tclk = fixed ? fixed : profile_clock(cpu_clock && one_thread(cfg));
    /* interleaved rounds (default and tuned, the tuned first in odd rounds;
     * then each library): in a fixed order the second side read about 6%
     * faster with the same code on both (85 rows of a compare --retime at
     * load 10 to 13, bench/RESULTS.md, branch gdb2) */
    double d[64], t[64], l[GT_RETIME_MAX_LIBS][64];
    if (rounds > 64) rounds = 64;
    if (rounds < 1) rounds = 1;
    for (int i = 0; st == AIT_OK && i < rounds; i++) {
        if (i % 2) t[i] = time_once(s, cfg, NULL, c, buf ? &pb : NULL, iters, tclk, e, &st);
        if (st == AIT_OK) d[i] = time_once(s, NULL, NULL, c, buf ? &pb : NULL, iters, dclk, e, &st);
        if (st == AIT_OK && i % 2 == 0) t[i] = time_once(s, cfg, NULL, c, buf ? &pb : NULL, iters, tclk, e, &st);
        for (int j = 0; st == AIT_OK && j < nlib; j++)
            l[j][i] = time_once(s, NULL, libs[j], c, NULL, iters, dclk, e, &st);
    }
    if (st == AIT_OK) {
        qsort(d, (size_t)rounds, sizeof *d, cmp_d);
        qsort(t, (size_t)rounds, sizeof *t, cmp_d);
        *def_us = d[rounds / 2];
        *tuned_us = t[rounds / 2];
        for (int j = 0; j < nlib; j++) {
            qsort(l[j], (size_t)rounds, sizeof l[j][0], cmp_d);
            lib_us[j] = l[j][rounds / 2];
        }
    }
    aligned_free(buf);
    aligned_free(c);
    return st;
}

ait_status gt_retime(const gt_row *r, int rounds, int iters, bool cpu_clock, const char *const *libs, int nlib,
                     double *def_us, double *tuned_us, double *lib_us, ait_error *e)
{
    shape s;
    TRY(shape_make(r, &s, e));
    ait_status st = retime_shape(&s, &r->cfg, rounds, iters, NULL, cpu_clock, libs, nlib, def_us, tuned_us, lib_us, e);
    shape_free(&s);
    return st;
}

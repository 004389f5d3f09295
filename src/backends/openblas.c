/* `openblas`: MatMul, Gemm and 2-D Conv in float32 through OpenBLAS's cblas;
 * every other node (and these ops in other dtypes or shapes cblas cannot
 * take) runs on the reference ops.
 *
 * The replacement ops keep the reference op's shape inference (the node's
 * own def, reached through c->n->def), so only the arithmetic changes.
 *
 * Threads: OpenBLAS's thread count is one process-wide setting, not a
 * handle's, so each op sets it to its context's count (the candidate's)
 * before it calls cblas, inside a gate (ob_enter/ob_leave) that lets calls
 * at the count now set run at once and makes a call that needs another
 * count wait until none is inside. Without the gate, concurrent runs with
 * different counts fight: in a test of Debian's libopenblas0-pthread
 * 0.3.21 (4 threads, counts 1 and 2, 384^3 sgemm) every result was right
 * but about a third of the calls had the count changed under them, so
 * sessions' thread counts would not be their own. Concurrent calls at one
 * count are what OpenBLAS's threaded build supports.
 *
 * Weights are used as the model stores them. Pre-packing constant B (and
 * Conv weights) and writing the packed form into artifact blobs belongs
 * here, in build, when the artifact learns to hold blobs. */
#include <cblas.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "ops/matmul_shape.h"

/* Prototypes that Debian's cblas.h declares; repeated in case a cblas.h
 * without OpenBLAS's extensions is found first. */
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
char *openblas_get_corename(void);

/* The gate around cblas calls (see the top). Process-wide state, as the
 * OpenBLAS setting it mirrors is: the count last set, the calls inside at
 * that count, and the callers waiting for another count (while any waits,
 * no new call enters at the current count, so a count change is not
 * starved). It holds only OpenBLAS's setting: nothing outside cblas. */
static pthread_mutex_t ob_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ob_cv = PTHREAD_COND_INITIALIZER;
static int ob_count;   /* 0: not set by ait yet */
static int ob_inside;
static int ob_waiting;

/* The tuner forks children that run candidates: a child must not inherit
 * the gate locked, or calls counted inside by threads it does not have. */
static void ob_fork_prepare(void) { pthread_mutex_lock(&ob_mu); }
static void ob_fork_parent(void) { pthread_mutex_unlock(&ob_mu); }
static void ob_fork_child(void)
{
    ob_inside = ob_waiting = 0;
    pthread_cond_init(&ob_cv, NULL);
    pthread_mutex_unlock(&ob_mu);
}
static pthread_once_t ob_once = PTHREAD_ONCE_INIT;
static void ob_init(void) { pthread_atfork(ob_fork_prepare, ob_fork_parent, ob_fork_child); }

static void ob_enter(const op_ctx *c)
{
    int t = c->threads > 0 ? c->threads : 1;
    bool counted = false;
    pthread_once(&ob_once, ob_init);
    pthread_mutex_lock(&ob_mu);
    while (ob_inside > 0 && (ob_count != t || ob_waiting > 0)) {
        if (!counted && ob_count != t) {
            ob_waiting++;
            counted = true;
        }
        pthread_cond_wait(&ob_cv, &ob_mu);
    }
    if (counted) ob_waiting--;
    if (ob_count != t || openblas_get_num_threads() != t) openblas_set_num_threads(t);
    ob_count = t;
    ob_inside++;
    pthread_mutex_unlock(&ob_mu);
}

static void ob_leave(void)
{
    pthread_mutex_lock(&ob_mu);
    if (--ob_inside == 0) pthread_cond_broadcast(&ob_cv);
    pthread_mutex_unlock(&ob_mu);
}

static bool fits_int(int64_t a, int64_t b, int64_t k)
{
    return a <= INT_MAX && b <= INT_MAX && k <= INT_MAX;
}

/* The node's own (reference) op, for shapes and for what cblas cannot do. */
static ait_status ref_infer(op_ctx *c) { return c->n->def->infer(c); }
static ait_status ref_run(op_ctx *c) { return c->n->def->run(c); }

static bool all_f32(const op_ctx *c)
{
    for (int i = 0; i < c->n_in; i++)
        if (has_in(c, i) && c->in[i]->dtype != AIT_F32) return false;
    return true;
}

/* ---- MatMul ---------------------------------------------------------------- */

static ait_status ob_matmul(op_ctx *c)
{
    const tensor *a = c->in[0], *b = c->in[1];
    mm_shape s = {0};
    if (!all_f32(c)) return ref_run(c);
    TRY(mm_shape_make(c, a, b, &s));
    if (!fits_int(s.batch * s.M, s.N, s.K)) return ref_run(c);
    if (s.M == 0 || s.N == 0 || s.batch == 0) return AIT_OK;
    ob_enter(c);
    const float *pa = a->data, *pb = b->data;
    float *py = c->out[0]->data;
    bool shared = true; /* one B for every batch (a 2-D weight): one tall GEMM */
    for (int i = 0; i < s.brank; i++) shared &= s.sb[i] == 0 || s.bdims[i] == 1;
    if (shared) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(s.batch * s.M), (int)s.N,
                    (int)s.K, 1.0f, pa, (int)s.K, pb, (int)s.N, 0.0f, py, (int)s.N);
        ob_leave();
        return AIT_OK;
    }
    for (int64_t bi = 0; bi < s.batch; bi++) {
        int64_t ia, ib;
        mm_batch_index(&s, bi, &ia, &ib);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s.M, (int)s.N, (int)s.K,
                    1.0f, pa + ia * s.M * s.K, (int)s.K, pb + ib * s.K * s.N, (int)s.N, 0.0f,
                    py + bi * s.M * s.N, (int)s.N);
    }
    ob_leave();
    return AIT_OK;
}

/* ---- Gemm -------------------------------------------------------------------- */

static ait_status ob_gemm(op_ctx *c)
{
    const tensor *a = c->in[0], *b = c->in[1], *ct = has_in(c, 2) ? c->in[2] : NULL;
    tensor *y = c->out[0];
    if (!all_f32(c)) return ref_run(c);
    bool ta = attr_int(c->n, "transA", 0) != 0, tb = attr_int(c->n, "transB", 0) != 0;
    float alpha = attr_float(c->n, "alpha", 1.0f), beta = attr_float(c->n, "beta", 1.0f);
    int64_t M = y->dims[0], N = y->dims[1], K = a->dims[ta ? 0 : 1];
    if (!fits_int(M, N, K)) return ref_run(c);
    if (M == 0 || N == 0) return AIT_OK;
    if (beta == 0) ct = NULL; /* as the reference: C is not read at all */
    float *py = y->data;
    if (ct) { /* Y = C broadcast to [M,N]; sgemm then adds alpha*A*B to beta*Y */
        int64_t mn[2] = {M, N}, cs[2];
        bcast_strides(ct, 2, mn, cs);
        const float *pc = ct->data;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) py[i * N + j] = pc[i * cs[0] + j * cs[1]];
    }
    ob_enter(c);
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)M, (int)N, (int)K, alpha, a->data, (int)(ta ? M : K), b->data,
                (int)(tb ? K : N), ct ? beta : 0.0f, py, (int)N);
    ob_leave();
    return AIT_OK;
}

/* ---- Conv (2-D) -------------------------------------------------------------- */

typedef struct ob_conv {
    int64_t n, c, h, w, m, group, cg, mg, kh, kw, oh, ow;
    int64_t s[2], d[2], pb[2];
} ob_conv;

/* The geometry of a 2-D Conv whose shapes infer has already checked. */
static ait_status ob_conv_geom(op_ctx *c, ob_conv *g)
{
    const tensor *x = c->in[0], *w = c->in[1], *y = c->out[0];
    g->n = x->dims[0];
    g->c = x->dims[1];
    g->h = x->dims[2];
    g->w = x->dims[3];
    g->m = w->dims[0];
    g->kh = w->dims[2];
    g->kw = w->dims[3];
    g->group = attr_int(c->n, "group", 1);
    g->cg = g->c / g->group;
    g->mg = g->m / g->group;
    g->oh = y->dims[2];
    g->ow = y->dims[3];
    int mode;
    int64_t pads[4], pe[2], out[2], in[2] = {g->h, g->w}, k[2] = {g->kh, g->kw};
    TRY(auto_pad_attr(c, &mode));
    TRY(ints_attr(c, "strides", 2, 1, 1, INT32_MAX, g->s));
    TRY(ints_attr(c, "dilations", 2, 1, 1, INT32_MAX, g->d));
    TRY(ints_attr(c, "pads", 4, 0, 0, INT32_MAX, pads));
    for (int i = 0; i < 2; i++) { /* SAME_* pads are derived, as the reference does */
        g->pb[i] = mode == PAD_NOTSET ? pads[i] : 0;
        pe[i] = mode == PAD_NOTSET ? pads[2 + i] : 0;
        TRY(window_out(c, i, in[i], g->s[i], (k[i] - 1) * g->d[i] + 1, mode, false, &g->pb[i],
                       &pe[i], &out[i]));
    }
    if (out[0] != g->oh || out[1] != g->ow)
        return err_set(c->err, AIT_E_INTERNAL, "output size %lldx%lld differs from %lldx%lld",
                       (long long)out[0], (long long)out[1], (long long)g->oh, (long long)g->ow);
    return AIT_OK;
}

/* col[(ci*kh + ki)*kw + kj][oy*ow + ox] = x[ci][iy][ix], 0 in the padding. */
static void im2col(const ob_conv *g, const float *x, float *col)
{
    const int64_t ohw = g->oh * g->ow;
    for (int64_t ci = 0; ci < g->cg; ci++)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++) {
                float *row = col + ((ci * g->kh + ki) * g->kw + kj) * ohw;
                const float *xc = x + ci * g->h * g->w;
                for (int64_t oy = 0; oy < g->oh; oy++) {
                    int64_t iy = oy * g->s[0] - g->pb[0] + ki * g->d[0];
                    float *r = row + oy * g->ow;
                    if (iy < 0 || iy >= g->h) {
                        memset(r, 0, sizeof(float) * (size_t)g->ow);
                        continue;
                    }
                    for (int64_t ox = 0; ox < g->ow; ox++) {
                        int64_t ix = ox * g->s[1] - g->pb[1] + kj * g->d[1];
                        r[ox] = ix >= 0 && ix < g->w ? xc[iy * g->w + ix] : 0.0f;
                    }
                }
            }
}

static ait_status ob_conv_run(op_ctx *c)
{
    if (!all_f32(c) || c->in[0]->rank != 4) return ref_run(c);
    ob_conv g;
    TRY(ob_conv_geom(c, &g));
    const int64_t ohw = g.oh * g.ow, kdim = g.cg * g.kh * g.kw;
    if (!fits_int(g.mg, ohw, kdim) || g.n == 0 || g.m == 0 || ohw == 0) return ref_run(c);
    /* 1x1, stride 1, no padding: the input already is its own im2col */
    bool direct = g.kh == 1 && g.kw == 1 && g.s[0] == 1 && g.s[1] == 1 && g.pb[0] == 0 &&
                  g.pb[1] == 0 && g.oh == g.h && g.ow == g.w;
    float *col = NULL;
    if (!direct) {
        size_t bytes;
        if (__builtin_mul_overflow((size_t)kdim, (size_t)ohw * sizeof(float), &bytes))
            return err_set(c->err, AIT_E_OVERFLOW, "im2col buffer is too large");
        col = op_scratch(c, bytes);
        if (!col) return c->err ? c->err->code : AIT_E_NOMEM;
    }
    ob_enter(c);
    const float *x = c->in[0]->data, *w = c->in[1]->data;
    const float *bias = has_in(c, 2) ? c->in[2]->data : NULL;
    float *y = c->out[0]->data;
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t gi = 0; gi < g.group; gi++) {
            const float *xg = x + (n * g.c + gi * g.cg) * g.h * g.w;
            float *yg = y + (n * g.m + gi * g.mg) * ohw;
            if (!direct) im2col(&g, xg, col);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)g.mg, (int)ohw, (int)kdim,
                        1.0f, w + gi * g.mg * kdim, (int)kdim, direct ? xg : col, (int)ohw, 0.0f,
                        yg, (int)ohw);
        }
    ob_leave();
    for (int64_t n = 0; bias && n < g.n; n++)
        for (int64_t m = 0; m < g.m; m++) {
            float *r = y + (n * g.m + m) * ohw;
            for (int64_t i = 0; i < ohw; i++) r[i] += bias[m];
        }
    return AIT_OK;
}

/* ---- the backend ----------------------------------------------------------- */

#define OB_OP(nm, lo, hi, rn)                                                                \
    {.name = nm, .min_in = lo, .max_in = hi, .min_out = 1, .max_out = 1, .infer = ref_infer, \
     .run = rn}
static const op_def ob_ops[] = {
    OB_OP("MatMul", 2, 2, ob_matmul),
    OB_OP("Gemm", 2, 3, ob_gemm),
    OB_OP("Conv", 2, 3, ob_conv_run),
};

/* True when value v may be float32 of the given rank (-1: any) as far as
 * its declaration says (unknown dtype or rank: maybe). */
static bool maybe(const graph *g, int v, int rank)
{
    if (v < 0) return true;
    const value *d = &g->vals[v];
    if (d->dtype != AIT_UNDEFINED && d->dtype != AIT_F32) return false;
    return rank < 0 || d->rank < 0 || d->rank == rank;
}

/* What the module's graph says may be float32 (and 2-D for Conv) gets a
 * cblas op; the op itself falls back at run time for what it cannot take. */
static const op_def *ob_op_for(const graph *g, const node *n)
{
    if (n->domain && n->domain[0]) return NULL;
    for (size_t i = 0; i < sizeof ob_ops / sizeof ob_ops[0]; i++) {
        if (strcmp(n->op, ob_ops[i].name) != 0) continue;
        bool conv = strcmp(n->op, "Conv") == 0;
        for (int k = 0; k < n->n_in; k++)
            if (!maybe(g, n->in[k], conv && k < 2 ? 4 : -1)) return NULL;
        return &ob_ops[i];
    }
    return NULL;
}

static bool ob_available(char *why, size_t n)
{
    if (!openblas_get_corename()) {
        snprintf(why, n, "OpenBLAS reports no CPU core");
        return false;
    }
    return true;
}

static void ob_describe(char *buf, size_t n)
{
    /* Debian's 0.3.21 may not know recent CPUs and pick a slow core;
     * OPENBLAS_CORETYPE (see bench/README.md) is the user's to set. */
    snprintf(buf, n, "OpenBLAS core %s, %d threads by default", openblas_get_corename(),
             openblas_get_num_threads());
}

const backend backend_openblas = {
    .name = "openblas",
    .summary = "MatMul, Gemm and 2-D Conv in float32 through OpenBLAS (cblas_sgemm)",
    .available = ob_available,
    .describe = ob_describe,
    .op_for = ob_op_for,
    .build = backend_exec_build,
    .run = backend_exec_run,
    .free = backend_exec_free,
};

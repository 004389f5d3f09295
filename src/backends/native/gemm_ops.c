/* MatMul and Gemm on the native GEMM. In a quantised variant (bf16,
 * int8dq, int8wo, int4wo, fp16: kernels/qgemm.h) a constant B is quantised and
 * packed for qgemm instead, with the same epilogue. A constant B (weights) is packed once
 * (for Gemm with transB read through strides: nn.Linear's [N, K] packs
 * like any other), and then M of 16 and below streams it without packing A.
 * MatMul with a 2-D constant B runs as one GEMM over all batch rows;
 * other MatMuls batch by batch on unpacked operands. */
#include <stdlib.h>
#include <string.h>

#include "backends/native/native.h"
#include "ops/matmul_shape.h"

enum { G_PACKED, G_M, G_N, G_K, G_TA, G_TB, G_CMODE, G_C, G_Q, G_SHARE, G_RANGE };
enum { C_NONE, C_BIAS_COL, C_BIAS_ROW, C_RES }; /* what Gemm's C became */

static void fill_b(built *bm, int i, int grp, void *dst, const void *arg)
{
    const int64_t *a = arg; /* k, n, rsb, csb */
    const tensor *b = nat_shape(bm, bm->g->nodes[i].in[1]);
    gemm_pack_b(bm->kern, b->data, a[2], a[3], a[0], a[1], dst);
}

static void fill_q(built *bm, int i, int grp, void *dst, const void *arg)
{
    const int64_t *a = arg; /* k, n, rsb, csb */
    const tensor *b = nat_shape(bm, bm->g->nodes[i].in[1]);
    qg_pack(bm->quant, bm->qgroup, b->data, a[2], a[3], a[0], a[1], dst);
}

/* Node i's constant B (arg: k, n, rsb, csb), packed for the float GEMM or,
 * in a quantised variant with A read row by row (q_ok), for qgemm. */
static ait_status pack_w(built *bm, int i, const int64_t arg[4], bool q_ok, nat_step *st)
{
    nat_pack *p;
    if (bm->quant >= 0 && q_ok) {
        size_t bytes = qg_pack_size(bm->quant, bm->qgroup, arg[0], arg[1]);
        if (!bytes) return AIT_OK;
        bm->pack_quant = true;
        ait_status s = nat_pack_get(bm, i, 1, bytes, fill_q, arg, &p);
        bm->pack_quant = false;
        TRY(s);
        st->geo[G_PACKED] = st->geo[G_Q] = 1;
        return AIT_OK;
    }
    size_t bytes = gemm_pack_b_size(bm->kern, arg[0], arg[1]);
    if (!bytes) return AIT_OK;
    TRY(nat_pack_get(bm, i, 1, bytes, fill_b, arg, &p));
    st->geo[G_PACKED] = 1;
    return AIT_OK;
}

static bool f32(const tensor *t) { return t && t->dtype == AIT_F32; }

/* The scratch qgemm converts A into, for a step on quantised weights (the
 * run passes bm->scratch to qgemm_ws: no allocation, zeroing and page
 * faults per call; 0: none, or qgemm allocates it itself). */
static void q_scratch(const built *bm, nat_step *st, int64_t K)
{
    if (st->geo[G_Q]) st->scratch = qgemm_scratch(bm->quant, bm->qgroup, K, st->geo[G_M]);
}

extern const nat_op nat_matmul, nat_gemm;

/* The value step st's int8dq GEMM quantises as its A (row-major, K
 * columns: a MatMul's or a Gemm's without transA, on weights packed
 * int8dq), or -1. */
static int q8_input(const built *bm, const nat_step *st)
{
    if ((st->op != &nat_matmul && st->op != &nat_gemm) || !st->geo[G_Q] || st->geo[G_TA])
        return -1;
    const qg_packed *v = &bm->packs[st->node].qv;
    return v->w && v->scheme == QG_INT8DQ ? bm->g->nodes[st->node].in[0] : -1;
}

/* Whether int8dq step st's output is the A of an int8dq step alone,
 * its sole reader, of as many rows (bert's FFN1, whose GELU output FFN2
 * reads): st's epilogue then finds each row's range (gemm_epi.rlo) for
 * that step's quantisation, where the tile is in L1, and that step skips
 * the pass that would read its whole A for it (q_run). */
static bool q_ranges(const built *bm, const nat_step *st)
{
    const int v = st->epi.out, c = v >= 0 ? nat_sole_consumer(bm, v) : -1;
    const int s = c >= 0 ? bm->step_of[c] : -1;
    if (q8_input(bm, st) < 0 || s < 0 || s >= bm->n_steps) return false;
    const nat_step *o = &bm->steps[s];
    return o->node == c && q8_input(bm, o) == v && o->geo[G_M] == st->geo[G_M] &&
           o->geo[G_K] == st->geo[G_N];
}

/* After the layout pass: whether another int8dq step reads this step's A
 * at the same M and K (G_SHARE), and then room in bm->qa for its
 * quantised rows, which the first of them to run makes and the others
 * read (q_run); whether its epilogue finds its output rows' ranges for
 * the next (G_RANGE, room in bm->qr). */
static ait_status q_finish(built *bm, nat_step *st)
{
    const int v = q8_input(bm, st);
    st->geo[G_RANGE] = q_ranges(bm, st);
    const size_t nr = (size_t)st->geo[G_M] * 2 * GEMM_RANGE_LANES;
    if (st->geo[G_RANGE] && nr > bm->qr_cap) {
        aligned_free(bm->qr);
        bm->qr = aligned_zalloc(sizeof(float) * nr);
        bm->qr_cap = bm->qr ? nr : 0;
        if (!bm->qr) return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory for row ranges");
    }
    bm->qr_gen = 0; /* nothing kept across schedules */
    st->geo[G_SHARE] = 0;
    for (int s = 0; v >= 0 && s < bm->n_steps && !st->geo[G_SHARE]; s++) {
        const nat_step *o = &bm->steps[s];
        st->geo[G_SHARE] = o != st && q8_input(bm, o) == v && o->geo[G_M] == st->geo[G_M] &&
                           o->geo[G_K] == st->geo[G_K];
    }
    if (!st->geo[G_SHARE]) return AIT_OK;
    size_t bytes = qgemm_scratch(QG_INT8DQ, 0, st->geo[G_K], st->geo[G_M]);
    if (!bytes) return st->geo[G_SHARE] = 0, AIT_OK; /* qgemm_ws says what is wrong */
    bm->qa_gen = 0; /* nothing kept across schedules */
    if (bytes <= bm->qa_cap) return AIT_OK;
    aligned_free(bm->qa);
    bm->qa = aligned_zalloc(bytes);
    bm->qa_cap = bm->qa ? bytes : 0;
    if (!bm->qa) return nat_fail(bm, st->node, AIT_E_NOMEM, "out of memory for quantised rows");
    return AIT_OK;
}

/* Step st's quantised GEMM: C (m x N, y) = epi(A * B), A m rows of K
 * floats; an int8dq A that other steps read too (G_SHARE) quantised once
 * a run, by the first of them; an A whose rows' ranges the step writing
 * it found this run (G_RANGE) quantised at them; with G_RANGE, C's rows'
 * ranges found (one thread: the tiles of a row are on it). */
static ait_status q_run(built *bm, const nat_step *st, const float *a, int64_t m, int64_t K,
                        float *y, int64_t N, const gemm_epi *epi)
{
    const qg_packed *qv = &bm->packs[st->node].qv;
    const int t = nat_qgemm_threads(bm, qv, m, 0, epi, bm->threads);
    const int v = bm->g->nodes[st->node].in[0];
    if (!st->geo[G_SHARE] && st->scratch && bm->qr_gen == bm->run_gen && bm->qr_val == v &&
        bm->qr_data == a && q8_input(bm, st) == v) { /* A's ranges known */
        uint8_t *q;
        float *sa;
        int32_t *za;
        qg_quant_rows_u8(a, K, m, K, bm->qr, bm->qr + m * GEMM_RANGE_LANES, bm->scratch, &q, &sa,
                         &za);
        bm->qr_gen = 0; /* used (this step's own C: no ranges found) */
        qgemm_u8(qv, q, sa, za, m, y, N, epi, t);
        return AIT_OK;
    }
    if (st->geo[G_RANGE] && t <= 1 && !st->geo[G_SHARE]) {
        gemm_epi e = *epi;
        memset(bm->qr, 0, sizeof(float) * (size_t)m * 2 * GEMM_RANGE_LANES); /* ranges hold 0 */
        e.rlo = bm->qr;
        e.rhi = bm->qr + m * GEMM_RANGE_LANES;
        TRY(qgemm_ws(qv, a, K, m, y, N, &e, t, st->scratch ? bm->scratch : NULL, bm->err));
        bm->qr_gen = bm->run_gen;
        bm->qr_val = st->epi.out;
        bm->qr_data = y;
        return AIT_OK;
    }
    if (!st->geo[G_SHARE])
        return qgemm_ws(qv, a, K, m, y, N, epi, t, st->scratch ? bm->scratch : NULL, bm->err);
    if (bm->qa_gen != bm->run_gen || bm->qa_val != v || bm->qa_data != a) {
        qg_quant_rows_u8(a, K, m, K, NULL, NULL, bm->qa, &bm->qa_q, &bm->qa_sa, &bm->qa_za);
        bm->qa_gen = bm->run_gen;
        bm->qa_val = v;
        bm->qa_data = a;
    }
    qgemm_u8(qv, bm->qa_q, bm->qa_sa, bm->qa_za, m, y, N, epi, t);
    return AIT_OK;
}

static ait_status mm_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *a = nat_shape(bm, n->in[0]), *b = nat_shape(bm, n->in[1]),
                 *y = nat_shape(bm, n->out[0]);
    *taken = false;
    if (!f32(a) || !f32(b) || !f32(y) || a->rank < 2 || b->rank < 2) return AIT_OK;
    int64_t K = a->dims[a->rank - 1], N = b->dims[b->rank - 1];
    if (tensor_numel(y) == 0 || K == 0) return AIT_OK;
    bool dq = false, q = false;
    if (nat_const(bm, n->in[1]) && b->rank == 2) {
        int64_t arg[4] = {K, N, N, 1};
        TRY(pack_w(bm, i, arg, true, st));
        if (!st->geo[G_PACKED]) return AIT_OK;
        st->geo[G_M] = tensor_numel(a) / K;
        q_scratch(bm, st, K);
    } else if (b->rank == 2) { /* quantised weights exec left unfolded (qlinear.c) */
        TRY(nat_dq_pack(bm, i, &dq, &q));
        st->geo[G_PACKED] = dq;
        st->geo[G_Q] = q;
        st->geo[G_M] = tensor_numel(a) / K;
    }
    st->geo[G_N] = N;
    st->geo[G_K] = K;
    nat_chain(bm, n->out[0], false, true, &st->epi);
    *taken = true;
    return AIT_OK;
}

static void epi_bias(const built *bm, const nat_step *st, gemm_epi *e, int mode, const float *own)
{
    if (own) {
        e->bias_mode = mode;
        e->bias = own;
    } else if (st->epi.bias >= 0) {
        e->bias_mode = GEMM_BIAS_COL;
        e->bias = bm->vals[st->epi.bias].cur->data;
    }
}

static ait_status mm_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const tensor *a = bm->vals[n->in[0]].cur, *b = bm->vals[n->in[1]].cur;
    float *y = bm->vals[st->epi.out].t.data;
    const int64_t N = st->geo[G_N], K = st->geo[G_K];
    gemm_args g = {.n = N, .k = K, .ldc = N, .threads = bm->threads, .kern = bm->kern};
    if (st->geo[G_PACKED]) {
        g.m = st->geo[G_M];
        g.a = a->data;
        g.rsa = K;
        g.csa = 1;
        g.pb = &bm->packs[st->node].views[0];
        g.c = y;
        nat_gemm_epi(bm, &st->epi, 0, N, &g.epi);
        epi_bias(bm, st, &g.epi, 0, NULL);
        if (st->geo[G_Q]) return q_run(bm, st, g.a, g.m, K, y, N, &g.epi);
        TRY(nat_gemm_f32(bm, &g));
        return AIT_OK;
    }
    mm_shape s = {0};
    op_ctx c = {.n = n, .err = bm->err};
    TRY(mm_shape_make(&c, a, b, &s));
    g.m = s.M;
    g.rsa = K;
    g.csa = 1;
    g.rsb = N;
    g.csb = 1;
    for (int64_t bi = 0; bi < s.batch; bi++) {
        int64_t ia, ib;
        mm_batch_index(&s, bi, &ia, &ib);
        g.a = (const float *)a->data + ia * s.M * K;
        g.b = (const float *)b->data + ib * K * N;
        g.c = y + bi * s.M * N;
        memset(&g.epi, 0, sizeof g.epi);
        nat_gemm_epi(bm, &st->epi, bi * s.M * N, N, &g.epi);
        epi_bias(bm, st, &g.epi, 0, NULL);
        TRY(nat_gemm_f32(bm, &g));
    }
    return AIT_OK;
}

/* ---- Gemm ----------------------------------------------------------------------- */

static ait_status gemm_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *a = nat_shape(bm, n->in[0]), *b = nat_shape(bm, n->in[1]),
                 *y = nat_shape(bm, n->out[0]);
    const tensor *c = n->n_in > 2 && n->in[2] >= 0 ? nat_shape(bm, n->in[2]) : NULL;
    *taken = false;
    if (!f32(a) || !f32(b) || !f32(y) || a->rank != 2 || b->rank != 2 || y->rank != 2) return AIT_OK;
    bool ta = attr_int(n, "transA", 0) != 0, tb = attr_int(n, "transB", 0) != 0;
    float beta = attr_float(n, "beta", 1.0f);
    int64_t M = y->dims[0], N = y->dims[1], K = a->dims[ta ? 0 : 1];
    if (M == 0 || N == 0 || K == 0) return AIT_OK;
    if (n->n_in > 2 && n->in[2] >= 0 && !f32(c)) return AIT_OK;
    int cmode = C_NONE;
    if (c && beta != 0.0f) {
        int64_t cn = tensor_numel(c);
        bool konst = nat_const(bm, n->in[2]);
        if (c->rank == 2 && c->dims[0] == M && c->dims[1] == N && !(konst && M == 1))
            cmode = C_RES;
        else if (konst && (cn == 1 || (cn == N && c->dims[c->rank - 1] == N)))
            cmode = C_BIAS_COL;
        else if (konst && cn == M && c->rank == 2 && c->dims[0] == M)
            cmode = C_BIAS_ROW;
        else
            return AIT_OK; /* a broadcast the reference does */
    }
    if (cmode == C_BIAS_COL || cmode == C_BIAS_ROW) {
        nat_pack *p = &bm->packs[i];
        int64_t len = cmode == C_BIAS_COL ? N : M;
        if (!p->bias) {
            p->bias = aligned_zalloc(sizeof(float) * (size_t)len);
            if (!p->bias) return nat_fail(bm, i, AIT_E_NOMEM, "out of memory");
            const float *cd = c->data;
            for (int64_t j = 0; j < len; j++) p->bias[j] = beta * cd[tensor_numel(c) == 1 ? 0 : j];
        }
    }
    if (nat_const(bm, n->in[1])) {
        int64_t arg[4] = {K, N, tb ? 1 : N, tb ? K : 1};
        TRY(pack_w(bm, i, arg, !ta, st));
        if (!st->geo[G_PACKED]) return AIT_OK;
    }
    st->geo[G_M] = M;
    st->geo[G_N] = N;
    st->geo[G_K] = K;
    q_scratch(bm, st, K);
    st->geo[G_TA] = ta;
    st->geo[G_TB] = tb;
    st->geo[G_CMODE] = cmode;
    if (cmode != C_RES) nat_chain(bm, n->out[0], false, cmode == C_NONE, &st->epi);
    *taken = true;
    return AIT_OK;
}

static ait_status gemm_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const int64_t M = st->geo[G_M], N = st->geo[G_N], K = st->geo[G_K];
    const bool ta = st->geo[G_TA], tb = st->geo[G_TB];
    const int cmode = (int)st->geo[G_CMODE];
    gemm_args g = {.m = M, .n = N, .k = K, .ldc = N, .threads = bm->threads, .kern = bm->kern};
    g.a = bm->vals[n->in[0]].cur->data;
    g.rsa = ta ? 1 : K;
    g.csa = ta ? M : 1;
    if (st->geo[G_PACKED]) {
        g.pb = &bm->packs[st->node].views[0];
    } else {
        g.b = bm->vals[n->in[1]].cur->data;
        g.rsb = tb ? 1 : N;
        g.csb = tb ? K : 1;
    }
    g.c = bm->vals[st->epi.out].t.data;
    nat_gemm_epi(bm, &st->epi, 0, N, &g.epi);
    float alpha = attr_float(n, "alpha", 1.0f);
    if (alpha != 1.0f) {
        g.epi.scaled = true;
        g.epi.scale = alpha;
    }
    if (cmode == C_RES) {
        g.epi.res = bm->vals[n->in[2]].cur->data;
        g.epi.ldr = N;
        g.epi.res_scale = attr_float(n, "beta", 1.0f);
        g.epi.res_after = false;
    }
    epi_bias(bm, st, &g.epi, cmode == C_BIAS_ROW ? GEMM_BIAS_ROW : GEMM_BIAS_COL,
             cmode == C_BIAS_COL || cmode == C_BIAS_ROW ? bm->packs[st->node].bias : NULL);
    if (st->geo[G_Q]) return q_run(bm, st, g.a, M, K, g.c, N, &g.epi); /* A row-major (transA 0) */
    return nat_gemm_f32(bm, &g);
}

const nat_op nat_matmul = {"MatMul", mm_take, mm_run, q_finish};
const nat_op nat_gemm = {"Gemm", gemm_take, gemm_run, q_finish};

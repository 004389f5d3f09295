/* Models that arrive quantised, on qgemm's int8 kernels (kernels/qgemm.h):
 *
 * - MatMulInteger(A uint8/int8, constant 2-D B int8/uint8, A's zero point
 *   per tensor, B's per tensor or per column) -> Cast to float -> Mul by S
 *   (per tensor or per column): what onnxruntime's quantize_dynamic writes
 *   after a DynamicQuantizeLinear. One step at MatMulInteger writes the
 *   Mul's output and the epilogue chain after it (bias Add, activation,
 *   residual: fuse.c). S is read when computed by then, else made from the
 *   Mul of two values that are (the exporter's activation scale times the
 *   weights' scale comes after MatMulInteger); that Mul still runs later
 *   on its own, a few floats. Equal to the reference ops bit for bit: the
 *   int32 sums are exact (VNNI u8 x s8, the zero points taken out with
 *   column sums), converted to float as Cast does and multiplied by S[j]
 *   in float32, before the same epilogue.
 * - QLinearMatMul with a constant 2-D B (A's scale and zero point per
 *   tensor, B's per tensor or per column): the exact int32 sums, then the
 *   reference's requantisation: rint(acc * (sa * sb[j] / sy)) in double
 *   plus y's zero point, saturated. The sums pass through float32, exact
 *   while 255 * sum_k |b - zb| <= 2^24 for every column (checked here).
 *
 * B is packed with its zero point taken out (qg_pack_q8), so every b - zb
 * must fit int8 (symmetric int8 weights, uint8 ones around 128); when not,
 * or with per-row activation parameters or a B computed at run time, the
 * node stays on its reference op.
 *
 * DynamicQuantizeLinear runs here too (qg_dynq_u8), bit for bit the
 * reference op.
 *
 * - DequantizeLinear of constant weights -> MatMul (QDQ weights: int8 or
 *   uint8 per tensor or per column, int4 or uint4 in blocks of 32, 64 or
 *   128 along K), which exec leaves unfolded (keeps_quantised): the
 *   MatMul (gemm_ops.c, through nat_dq_pack) packs the quantised bytes for
 *   qgemm's weight-only kernels when it has at most 16 rows (float32
 *   sums: a float32 tolerance, as the reference's dequantise-then-MatMul
 *   rounds differently), else dequantises them once, as the reference op
 *   does, for the float32 GEMM; the DequantizeLinear step does nothing.
 *
 * Not here: a QuantizeLinear/DequantizeLinear pair on the activations
 * (static QDQ) stays on the reference ops, its MatMul on the float32
 * weights path above. QLinearConv and QDQ around Conv would plug in beside
 * conv.c's GEMM as a nat_op of the same shape, on int8 convolution
 * kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native.h"

enum { Q_M, Q_N, Q_K, Q_ASIGNED, Q_S, Q_SA, Q_SB, Q_AZP };

static bool q8(const tensor *t) { return t && (t->dtype == AIT_U8 || t->dtype == AIT_I8); }

static int in_at(const node *n, int k) { return k < n->n_in ? n->in[k] : -1; }

/* Whether t holds one value, or one per column of an [.., N] output
 * (shape [N], [1, N], ...). */
static bool per_col(const tensor *t, int64_t N)
{
    if (!t) return false;
    int64_t c = tensor_numel(t);
    if (c == 1) return true;
    if (c != N || t->rank < 1 || t->dims[t->rank - 1] != N) return false;
    return true;
}

/* Column j's value of a per-tensor or per-column t, as float. */
static float col_f(const tensor *t, int64_t j)
{
    return (float)elem_get_f64(t->data, t->dtype, tensor_numel(t) == 1 ? 0 : j);
}

/* Per tensor or per column zero points z (NULL: none) as N int32. */
static void col_zero_points(const tensor *z, int64_t N, int32_t *zb)
{
    for (int64_t j = 0; j < N; j++)
        zb[j] = z ? (int32_t)elem_get_i64(z->data, z->dtype, tensor_numel(z) == 1 ? 0 : j) : 0;
}

typedef struct q8_arg {
    int64_t k, n;
    const void *b;
    bool b_unsigned;
    const int32_t *zb;
    const float *scale;
} q8_arg;

static void fill_q8(built *bm, int i, int grp, void *dst, const void *arg)
{
    (void)bm, (void)i, (void)grp;
    const q8_arg *a = arg;
    qg_pack_q8(QG_INT8DQ, a->b, a->b_unsigned, a->n, 1, a->k, a->n, a->zb, a->scale, dst);
}

/* Node i's constant B (input bi, [K, N]) with zero point value zbv (-1:
 * none) packed for qgemm_q8, column scales 1 (the run gives its own);
 * *ok false (nothing packed) when some b - zb leaves int8, or (bound) when
 * a column's 255 * sum |b - zb| passes 2^24. */
static ait_status pack_q8(built *bm, int i, int bi, int zbv, bool bound, bool *ok)
{
    const node *n = &bm->g->nodes[i];
    const tensor *b = nat_shape(bm, n->in[bi]), *z = zbv >= 0 ? nat_shape(bm, zbv) : NULL;
    int64_t K = b->dims[0], N = b->dims[1];
    *ok = false;
    int32_t *zb = aligned_zalloc(sizeof(int32_t) * (size_t)N + sizeof(float) * (size_t)N);
    if (!zb) return nat_fail(bm, i, AIT_E_NOMEM, "out of memory");
    float *ones = (float *)(zb + N);
    col_zero_points(z, N, zb);
    for (int64_t j = 0; j < N; j++) ones[j] = 1.0f;
    q8_arg arg = {K, N, b->data, b->dtype == AIT_U8, zb, ones};
    bool fits = qg_pack_q8(QG_INT8DQ, b->data, arg.b_unsigned, N, 1, K, N, zb, arg.scale, NULL);
    for (int64_t j = 0; fits && bound && j < N; j++) {
        int64_t s = 0;
        for (int64_t p = 0; p < K; p++)
            s += llabs(elem_get_i64(b->data, b->dtype, p * N + j) - zb[j]);
        fits = 255 * s <= (INT64_C(1) << 24);
    }
    ait_status st = AIT_OK;
    size_t bytes = qg_pack_size(QG_INT8DQ, 0, K, N);
    if (fits && bytes) {
        nat_pack *p;
        bm->pack_quant = true;
        st = nat_pack_get(bm, i, 1, bytes, fill_q8, &arg, &p);
        bm->pack_quant = false;
        *ok = st == AIT_OK && p->qv.scheme == QG_INT8DQ && p->qv.k == K && p->qv.n == N;
    }
    aligned_free(zb);
    return st;
}

/* A [.., M, K] (input 0, (u)int8) against constant B [K, N] (input bi,
 * (u)int8), the output [.., M, N]: the shared checks of both ops. */
static bool mm_shapes(const built *bm, const node *n, int bi, int64_t *M, int64_t *N, int64_t *K)
{
    const tensor *a = nat_shape(bm, n->in[0]), *b = nat_shape(bm, in_at(n, bi)),
                 *y = nat_shape(bm, n->out[0]);
    if (!q8(a) || !q8(b) || !y || !nat_const(bm, n->in[bi]) || a->rank < 2 || b->rank != 2)
        return false;
    *K = b->dims[0];
    *N = b->dims[1];
    if (a->dims[a->rank - 1] != *K || *K == 0 || *N == 0 || tensor_numel(y) == 0) return false;
    *M = tensor_numel(a) / *K;
    return tensor_numel(y) == *M * *N && y->dims[y->rank - 1] == *N;
}

/* ---- DynamicQuantizeLinear ------------------------------------------------------ */

/* Float32 x to uint8 with its scale and zero point (qg_dynq_u8: the
 * reference's arithmetic, vectorised); the scale and zero point live here. */
static ait_status dynq_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *x = nat_shape(bm, n->in[0]);
    *taken = false;
    if (!x || x->dtype != AIT_F32 || n->n_out < 1 || n->out[0] < 0 || tensor_numel(x) == 0)
        return AIT_OK;
    for (int k = 1; k < n->n_out && k < 3; k++) {
        nat_val *d = n->out[k] >= 0 ? &bm->vals[n->out[k]] : NULL;
        if (!d) continue;
        tensor_set_shape(&d->t, k == 1 ? AIT_F32 : AIT_U8, 0, NULL);
        TRY(tensor_alloc(&d->t, bm->err));
        d->cur = &d->t;
    }
    *taken = true;
    return AIT_OK;
}

static ait_status dynq_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const tensor *x = bm->vals[n->in[0]].cur;
    float s;
    uint8_t z;
    qg_dynq_u8(x->data, tensor_numel(x), bm->vals[n->out[0]].t.data, &s, &z);
    if (n->n_out > 1 && n->out[1] >= 0) *(float *)bm->vals[n->out[1]].t.data = s;
    if (n->n_out > 2 && n->out[2] >= 0) *(uint8_t *)bm->vals[n->out[2]].t.data = z;
    return AIT_OK;
}

const nat_op nat_dynamic_quantize = {"DynamicQuantizeLinear", dynq_take, dynq_run};

/* ---- MatMulInteger -> Cast -> Mul ------------------------------------------------ */

/* S of Mul(v, S) (or Mul(S, v)), a float32 per tensor or per column value:
 * its id, and when it is not computed by now the two inputs of the Mul
 * that makes it (*sa, *sb), else -1. */
static bool scale_of(const built *bm, const node *mul, int v, int64_t N, int *s, int *sa, int *sb)
{
    if (strcmp(mul->op, "Mul") || (mul->domain && mul->domain[0]) || mul->n_in != 2 ||
        mul->in[0] == mul->in[1])
        return false;
    *s = mul->in[0] == v ? mul->in[1] : mul->in[0];
    *sa = *sb = -1;
    const tensor *t = nat_shape(bm, *s);
    if (!t || t->dtype != AIT_F32 || !per_col(t, N) || t->rank > 2) return false;
    if (bm->vals[*s].done) return true;
    int p = bm->g->vals[*s].producer;
    if (p < 0) return false;
    const node *m = &bm->g->nodes[p];
    if (strcmp(m->op, "Mul") || (m->domain && m->domain[0]) || m->n_in != 2) return false;
    for (int k = 0; k < 2; k++) {
        const tensor *u = nat_shape(bm, m->in[k]);
        if (!u || u->dtype != AIT_F32 || !per_col(u, N) || !bm->vals[m->in[k]].done) return false;
    }
    *sa = m->in[0];
    *sb = m->in[1];
    return true;
}

static ait_status mmi_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    int64_t M, N, K;
    *taken = false;
    if (!mm_shapes(bm, n, 1, &M, &N, &K)) return AIT_OK;
    int azp = in_at(n, 2), bzp = in_at(n, 3);
    if (azp >= 0 && (!nat_shape(bm, azp) || tensor_numel(nat_shape(bm, azp)) != 1)) return AIT_OK;
    if (bzp >= 0 && (!nat_const(bm, bzp) || !per_col(nat_shape(bm, bzp), N))) return AIT_OK;
    const tensor *y = nat_shape(bm, n->out[0]);
    int cast = nat_sole_consumer(bm, n->out[0]);
    const node *c = cast >= 0 ? &bm->g->nodes[cast] : NULL;
    if (!c || strcmp(c->op, "Cast") || (c->domain && c->domain[0]) || c->n_out != 1 ||
        attr_int(c, "to", 0) != AIT_F32)
        return AIT_OK;
    int mul = nat_sole_consumer(bm, c->out[0]), s, sa, sb;
    const node *m = mul >= 0 ? &bm->g->nodes[mul] : NULL;
    if (!m || m->n_out != 1 || !scale_of(bm, m, c->out[0], N, &s, &sa, &sb)) return AIT_OK;
    const tensor *o = nat_shape(bm, m->out[0]);
    if (!o || o->dtype != AIT_F32 || o->rank != y->rank ||
        memcmp(o->dims, y->dims, sizeof(int64_t) * (size_t)y->rank))
        return AIT_OK;
    bool ok;
    TRY(pack_q8(bm, i, 1, bzp, false, &ok));
    if (!ok) return AIT_OK;
    int64_t *g = st->geo;
    g[Q_M] = M, g[Q_N] = N, g[Q_K] = K, g[Q_AZP] = azp;
    g[Q_ASIGNED] = nat_shape(bm, n->in[0])->dtype == AIT_I8;
    g[Q_S] = s, g[Q_SA] = sa, g[Q_SB] = sb;
    st->scratch = sizeof(float) * (size_t)bm->packs[i].qv.np;
    st->epi.nodes[st->epi.n_nodes++] = cast;
    st->epi.nodes[st->epi.n_nodes++] = mul;
    nat_chain(bm, m->out[0], false, true, &st->epi);
    *taken = true;
    return AIT_OK;
}

static int32_t zero_point(const built *bm, int v)
{
    const tensor *t = v >= 0 ? bm->vals[v].cur : NULL;
    return t ? (int32_t)elem_get_i64(t->data, t->dtype, 0) : 0;
}

static ait_status mmi_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const int64_t *g = st->geo, N = g[Q_N];
    qg_packed v = bm->packs[st->node].qv;
    float *s = bm->scratch; /* S per column, padded: the view's scales */
    memset(s, 0, sizeof(float) * (size_t)v.np);
    if (g[Q_SA] < 0) {
        const tensor *t = bm->vals[g[Q_S]].cur;
        for (int64_t j = 0; j < N; j++) s[j] = col_f(t, j);
    } else {
        const tensor *x = bm->vals[g[Q_SA]].cur, *y = bm->vals[g[Q_SB]].cur;
        for (int64_t j = 0; j < N; j++) s[j] = col_f(x, j) * col_f(y, j);
    }
    v.scale = s;
    gemm_epi e = {0};
    nat_gemm_epi(bm, &st->epi, 0, N, &e);
    if (st->epi.bias >= 0) {
        e.bias_mode = GEMM_BIAS_COL;
        e.bias = bm->vals[st->epi.bias].cur->data;
    }
    int t = nat_qgemm_threads(bm, &v, g[Q_M], g[Q_ASIGNED] ? 1 : -1, &e, bm->threads);
    return qgemm_q8(&v, bm->vals[n->in[0]].cur->data, g[Q_ASIGNED], g[Q_K], g[Q_M], 1.0f,
                    zero_point(bm, (int)g[Q_AZP]), bm->vals[st->epi.out].t.data, N, &e, t, bm->err);
}

const nat_op nat_matmul_integer = {"MatMulInteger", mmi_take, mmi_run, NULL, true};

/* ---- QLinearMatMul -------------------------------------------------------------- */

enum { QA, QA_SCALE, QA_ZP, QB, QB_SCALE, QB_ZP, QY_SCALE, QY_ZP };

static ait_status qlmm_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    int64_t M, N, K;
    *taken = false;
    if (n->n_in != 8 || !mm_shapes(bm, n, QB, &M, &N, &K)) return AIT_OK;
    for (int k = 0; k < 8; k++)
        if (n->in[k] < 0 || !nat_shape(bm, n->in[k])) return AIT_OK;
    const tensor *y = nat_shape(bm, n->out[0]);
    if (!q8(y) || !nat_const(bm, n->in[QB_SCALE]) || !nat_const(bm, n->in[QB_ZP]) ||
        !per_col(nat_shape(bm, n->in[QB_SCALE]), N) || !per_col(nat_shape(bm, n->in[QB_ZP]), N))
        return AIT_OK;
    for (int k = QA_SCALE; k <= QY_ZP; k++)
        if (k != QB && k != QB_SCALE && k != QB_ZP && tensor_numel(nat_shape(bm, n->in[k])) != 1)
            return AIT_OK;
    bool ok;
    TRY(pack_q8(bm, i, QB, n->in[QB_ZP], true, &ok));
    if (!ok) return AIT_OK;
    int64_t *g = st->geo;
    g[Q_M] = M, g[Q_N] = N, g[Q_K] = K;
    g[Q_ASIGNED] = nat_shape(bm, n->in[QA])->dtype == AIT_I8;
    size_t np = (size_t)bm->packs[i].qv.np, mn;
    if (__builtin_mul_overflow((size_t)M, (size_t)N, &mn) || mn > SIZE_MAX / 8 - np)
        return nat_fail(bm, i, AIT_E_OVERFLOW, "output too large");
    st->scratch = sizeof(float) * (np + mn);
    *taken = true;
    return AIT_OK;
}

/* Saturation range of a uint8 or int8 output. */
static void range8(ait_dtype t, int32_t *lo, int32_t *hi)
{
    *lo = t == AIT_U8 ? 0 : -128;
    *hi = t == AIT_U8 ? 255 : 127;
}

static ait_status qlmm_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const int64_t *g = st->geo, M = g[Q_M], N = g[Q_N];
    const qg_packed *v = &bm->packs[st->node].qv;
    float *mult = bm->scratch, *acc = mult + v->np;
    tensor *y = &bm->vals[st->epi.out].t;
    int t = nat_qgemm_threads(bm, v, M, g[Q_ASIGNED] ? 1 : -1, NULL, bm->threads);
    TRY(qgemm_q8(v, bm->vals[n->in[QA]].cur->data, g[Q_ASIGNED], g[Q_K], M, 1.0f,
                 zero_point(bm, n->in[QA_ZP]), acc, N, NULL, t, bm->err));
    /* as the reference op: the multiplier in float32, the product in double */
    float as = col_f(bm->vals[n->in[QA_SCALE]].cur, 0), ys = col_f(bm->vals[n->in[QY_SCALE]].cur, 0);
    const tensor *sb = bm->vals[n->in[QB_SCALE]].cur;
    for (int64_t j = 0; j < N; j++) mult[j] = as * col_f(sb, j) / ys;
    int32_t yz = zero_point(bm, n->in[QY_ZP]), lo, hi;
    range8(y->dtype, &lo, &hi);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double r = rint((double)acc[i * N + j] * (double)mult[j]) + yz;
            int32_t q = r != r ? 0 : r < lo ? lo : r > hi ? hi : (int32_t)r;
            if (y->dtype == AIT_U8) ((uint8_t *)y->data)[i * N + j] = (uint8_t)q;
            else ((int8_t *)y->data)[i * N + j] = (int8_t)q;
        }
    return AIT_OK;
}

const nat_op nat_qlinear_matmul = {"QLinearMatMul", qlmm_take, qlmm_run, NULL, true};

/* ---- DequantizeLinear -> MatMul (QDQ weights) ------------------------------------ */

/* B of a MatMul as exec keeps it: DequantizeLinear of constant weights q
 * [K, N] (keeps_quantised in exec.c). */
typedef struct dq_w {
    const tensor *q, *s, *z; /* z NULL: no zero point */
    int64_t k, n, m, block;  /* m: the MatMul's rows; block 0: per tensor or column */
} dq_w;

/* Whether value v is such a B: int8/uint8 per tensor or per column (axis
 * 1) with every q - z within int8, or int4/uint4 in blocks of 32, 64 or 128
 * along K (axis 0), float32 scales, read by one MatMul alone as its B. */
static bool dq_weights(const built *bm, int v, dq_w *w)
{
    int p = v >= 0 ? bm->g->vals[v].producer : -1;
    if (p < 0 || !exec_node_runs(bm->x, p)) return false;
    const node *d = &bm->g->nodes[p];
    if (strcmp(d->op, "DequantizeLinear") || (d->domain && d->domain[0]) || d->n_in < 2 ||
        d->n_out != 1 || !nat_const(bm, d->in[0]) || !nat_const(bm, d->in[1]))
        return false;
    int zi = in_at(d, 2);
    const tensor *q = nat_shape(bm, d->in[0]), *s = nat_shape(bm, d->in[1]),
                 *z = zi >= 0 ? nat_shape(bm, zi) : NULL, *y = nat_shape(bm, v);
    if (!q || !s || !y || q->rank != 2 || s->dtype != AIT_F32 || y->dtype != AIT_F32 ||
        (zi >= 0 && (!z || !nat_const(bm, zi) || z->dtype != q->dtype ||
                     tensor_numel(z) != tensor_numel(s))))
        return false;
    int64_t K = q->dims[0], N = q->dims[1], cs = tensor_numel(s);
    int64_t bs = d->version >= 21 ? attr_int(d, "block_size", 0) : 0, axis = attr_int(d, "axis", 1);
    bool i8 = q->dtype == AIT_I8 || q->dtype == AIT_U8, i4 = q->dtype == AIT_I4 || q->dtype == AIT_U4;
    bool per = bs == 0 && ((cs == 1 && s->rank <= 1) || (s->rank == 1 && cs == N && (axis == 1 || axis == -1)));
    bool blocks = (bs == 32 || bs == 64 || bs == 128) && (axis == 0 || axis == -2) && s->rank == 2 &&
                  s->dims[0] == (K + bs - 1) / bs && s->dims[1] == N;
    if (!((i8 && per) || (i4 && blocks)) || K == 0 || N == 0) return false;
    int c = nat_sole_consumer(bm, v);
    const node *mm = c >= 0 ? &bm->g->nodes[c] : NULL;
    if (!mm || strcmp(mm->op, "MatMul") || (mm->domain && mm->domain[0]) || mm->n_in != 2 ||
        mm->in[1] != v || mm->in[0] == v)
        return false;
    const tensor *a = nat_shape(bm, mm->in[0]), *o = nat_shape(bm, mm->out[0]);
    if (!a || !o || a->dtype != AIT_F32 || o->dtype != AIT_F32 || a->rank < 2 ||
        a->dims[a->rank - 1] != K || tensor_numel(o) == 0)
        return false;
    *w = (dq_w){q, s, z, K, N, tensor_numel(a) / K, bs};
    if (i4) return true;
    int32_t *zb = malloc(sizeof(int32_t) * (size_t)N);
    if (!zb) return false;
    col_zero_points(z, N, zb);
    bool fits = qg_pack_q8(QG_INT8WO, q->data, q->dtype == AIT_U8, N, 1, K, N, zb, s->data, NULL);
    free(zb);
    return fits;
}

/* Column or block scales (and zero points) of w as floats: [N], or
 * [blocks][N]. */
static void dq_params(const dq_w *w, float *sc, float *zf, int32_t *zi)
{
    int64_t c = tensor_numel(w->s);
    for (int64_t i = 0; i < (w->block ? c : w->n); i++) {
        int64_t at = c == 1 ? 0 : i;
        sc[i] = ((const float *)w->s->data)[at];
        double z = w->z ? elem_get_f64(w->z->data, w->z->dtype, at) : 0;
        if (zf) zf[i] = (float)z;
        if (zi) zi[i] = (int32_t)z;
    }
}

static void fill_dq(built *bm, int i, int grp, void *dst, const void *arg)
{
    (void)i, (void)grp;
    const dq_w *w = arg;
    int64_t K = w->k, N = w->n, np = w->block ? tensor_numel(w->s) : N;
    bool quant = bm->pack_quant;
    float *sc = malloc(sizeof(float) * (size_t)np * 2), *zf = sc ? sc + np : NULL;
    int32_t *zi = malloc(sizeof(int32_t) * (size_t)np);
    float *deq = quant ? NULL : aligned_zalloc(sizeof(float) * (size_t)(K * N));
    if (sc && zi && (quant || deq)) {
        dq_params(w, sc, zf, zi);
        bool sgn = w->q->dtype == AIT_I8 || w->q->dtype == AIT_I4;
        if (quant && w->block) {
            qg_pack_q4(w->q->data, sgn, N, 1, K, N, (int)w->block, sc, zf, dst);
        } else if (quant) {
            qg_pack_q8(QG_INT8WO, w->q->data, !sgn, N, 1, K, N, zi, sc, dst);
        } else { /* DequantizeLinear's arithmetic: (x - z) exact, times the scale in float */
            for (int64_t p = 0; p < K; p++)
                for (int64_t j = 0; j < N; j++) {
                    int64_t c = w->block ? (p / w->block) * N + j : j;
                    double x = elem_get_f64(w->q->data, w->q->dtype, p * N + j);
                    deq[p * N + j] = (float)(x - (double)zf[c]) * sc[c];
                }
            gemm_pack_b(bm->kern, deq, N, 1, K, N, dst);
        }
    } /* out of memory: dst stays zero and its view check fails */
    free(sc);
    free(zi);
    aligned_free(deq);
}

ait_status nat_dq_pack(built *bm, int i, bool *packed, bool *q)
{
    const node *n = &bm->g->nodes[i];
    dq_w w;
    *packed = *q = false;
    if (!dq_weights(bm, n->in[1], &w)) return AIT_OK;
    *q = w.m <= 16; /* skinny: the weight-only kernels stream the quantised bytes */
    size_t bytes = !*q ? gemm_pack_b_size(bm->kern, w.k, w.n)
                   : w.block ? qg_pack_q4_size((int)w.block, w.k, w.n)
                             : qg_pack_size(QG_INT8WO, 0, w.k, w.n);
    if (!bytes) return AIT_OK;
    nat_pack *p;
    bm->pack_quant = *q;
    ait_status s = nat_pack_get(bm, i, 1, bytes, fill_dq, &w, &p);
    bm->pack_quant = false;
    TRY(s);
    *packed = true;
    return AIT_OK;
}

/* The DequantizeLinear itself: nothing to run, its MatMul packed the weights. */
static ait_status dqw_take(built *bm, int i, nat_step *st, bool *taken)
{
    dq_w w;
    *taken = dq_weights(bm, bm->g->nodes[i].out[0], &w);
    if (*taken) st->epi.out = -1;
    return AIT_OK;
}

static ait_status dqw_run(built *bm, const nat_step *st)
{
    (void)bm, (void)st;
    return AIT_OK;
}

const nat_op nat_dq_weights = {"DequantizeLinear", dqw_take, dqw_run, NULL, true};

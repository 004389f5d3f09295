/* LSTM in float32 on the native GEMM. Per direction the input projection
 * of every step is one GEMM (X[T*B][I] x W^T, the summed biases as its
 * epilogue); then per step one GEMM of h[B][H] against R^T with that
 * step's projected rows as a residual, and the cell update (kernels/lstm.h:
 * the gates' sigmoid and tanh, c = f*c + i*g, h = o*tanh(c)) written
 * straight into Y, whose previous step's rows are the next step's A. W and
 * R are packed at build, per direction (one blob, two groups each).
 *
 * Taken: the default activations, layout 0, no clip, input_forget 0, no
 * peepholes (P), no sequence_lens, constant W, R and B, Y wanted. Anything
 * else stays on the reference op (src/ops/rnn.c), which also reports
 * every bad input. */
#include <string.h>

#include "backends/native/native.h"
#include "kernels/lstm.h"

enum { L_T, L_B, L_I, L_H, L_ND, L_REV0, L_REV1, L_BIAS };
enum { IN_B = 3, IN_LENS = 4, IN_H0 = 5, IN_C0 = 6, IN_P = 7 };

static bool f32_in(const built *bm, const node *n, int k)
{
    const tensor *t = k < n->n_in && n->in[k] >= 0 ? nat_shape(bm, n->in[k]) : NULL;
    return t && t->dtype == AIT_F32;
}

static bool absent(const node *n, int k) { return k >= n->n_in || n->in[k] < 0; }

static bool dims_are(const tensor *t, int rank, const int64_t *d)
{
    if (!t || t->rank != rank) return false;
    for (int i = 0; i < rank; i++)
        if (t->dims[i] != d[i]) return false;
    return true;
}

/* Group g of direction g / 2: W (k I, n 4H), then R (k H, n 4H); B = the
 * rows' transpose, read through strides. */
static void fill_w(built *bm, int i, int grp, void *dst, const void *arg)
{
    const int64_t *a = arg; /* I, H */
    const int64_t I = a[0], H = a[1], d = grp / 2;
    const node *n = &bm->g->nodes[i];
    const float *w = nat_shape(bm, n->in[1])->data, *r = nat_shape(bm, n->in[2])->data;
    if (grp % 2 == 0) gemm_pack_b(bm->kern, w + d * 4 * H * I, 1, I, I, 4 * H, dst);
    else gemm_pack_b(bm->kern, r + d * 4 * H * H, 1, H, H, 4 * H, dst);
}

static ait_status lstm_take(built *bm, int i, nat_step *st, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    *taken = false;
    for (int k = 0; k < 3; k++)
        if (!f32_in(bm, n, k)) return AIT_OK;
    if (n->n_out < 1 || n->out[0] < 0 || !nat_shape(bm, n->out[0])) return AIT_OK;
    if (!nat_const(bm, n->in[1]) || !nat_const(bm, n->in[2])) return AIT_OK;
    if (!absent(n, IN_LENS) || !absent(n, IN_P)) return AIT_OK;
    if (!absent(n, IN_B) && (!f32_in(bm, n, IN_B) || !nat_const(bm, n->in[IN_B]))) return AIT_OK;
    for (int k = IN_H0; k <= IN_C0; k++)
        if (!absent(n, k) && !f32_in(bm, n, k)) return AIT_OK;
    if (node_attr(n, "activations") || node_attr(n, "activation_alpha") ||
        node_attr(n, "activation_beta") || node_attr(n, "clip") ||
        attr_int(n, "input_forget", 0) != 0 || attr_int(n, "layout", 0) != 0)
        return AIT_OK;
    const char *dir = attr_str(n, "direction", "forward");
    int nd = 1;
    bool rev0 = false;
    if (strcmp(dir, "reverse") == 0) rev0 = true;
    else if (strcmp(dir, "bidirectional") == 0) nd = 2;
    else if (strcmp(dir, "forward") != 0) return AIT_OK;
    const tensor *x = nat_shape(bm, n->in[0]), *w = nat_shape(bm, n->in[1]),
                 *r = nat_shape(bm, n->in[2]);
    if (x->rank != 3 || r->rank != 3) return AIT_OK;
    const int64_t T = x->dims[0], B = x->dims[1], I = x->dims[2], H = r->dims[2];
    if (attr_int(n, "hidden_size", H) != H || T < 1 || B < 1 || I < 1 || H < 1) return AIT_OK;
    const int64_t dw[3] = {nd, 4 * H, I}, dr[3] = {nd, 4 * H, H}, db[2] = {nd, 8 * H},
                  ds[3] = {nd, B, H}, dy[4] = {T, nd, B, H};
    if (!dims_are(w, 3, dw) || !dims_are(r, 3, dr)) return AIT_OK;
    if (!absent(n, IN_B) && !dims_are(nat_shape(bm, n->in[IN_B]), 2, db)) return AIT_OK;
    for (int k = IN_H0; k <= IN_C0; k++)
        if (!absent(n, k) && !dims_are(nat_shape(bm, n->in[k]), 3, ds)) return AIT_OK;
    if (!dims_are(nat_shape(bm, n->out[0]), 4, dy)) return AIT_OK;
    for (int k = 1; k < n->n_out && k < 3; k++)
        if (n->out[k] >= 0 && !dims_are(nat_shape(bm, n->out[k]), 3, ds)) return AIT_OK;
    if (n->n_out > 3) return AIT_OK;

    /* scratch: the projection [T*B][4H], gates [B][4H], c and a zero h0, [B][H] each */
    size_t rows, proj, sz;
    if (__builtin_mul_overflow((size_t)T, (size_t)B, &rows) ||
        __builtin_mul_overflow(rows, (size_t)(4 * H), &proj) ||
        __builtin_add_overflow(proj, (size_t)(B * 6 * H), &sz) ||
        __builtin_mul_overflow(sz, sizeof(float), &sz))
        return nat_fail(bm, i, AIT_E_OVERFLOW, "LSTM scratch is too large");

    int64_t arg[2] = {I, H};
    size_t sizes[4];
    for (int d = 0; d < nd; d++) {
        sizes[2 * d] = gemm_pack_b_size(bm->kern, I, 4 * H);
        sizes[2 * d + 1] = gemm_pack_b_size(bm->kern, H, 4 * H);
    }
    for (int g = 0; g < 2 * nd; g++)
        if (!sizes[g]) return AIT_OK;
    nat_pack *p;
    TRY(nat_pack_get_sized(bm, i, 2 * nd, 0, sizes, fill_w, arg, &p));
    if (!absent(n, IN_B) && !p->bias) { /* W's and R's biases summed, per direction */
        p->bias = aligned_zalloc(sizeof(float) * (size_t)(nd * 4 * H));
        if (!p->bias) return nat_fail(bm, i, AIT_E_NOMEM, "out of memory");
        const float *b = nat_shape(bm, n->in[IN_B])->data;
        for (int d = 0; d < nd; d++)
            for (int64_t j = 0; j < 4 * H; j++)
                p->bias[d * 4 * H + j] = b[d * 8 * H + j] + b[d * 8 * H + 4 * H + j];
    }
    /* Y_h and Y_c: the step owns them (sched_node allocates Y only) */
    for (int k = 1; k < n->n_out; k++) {
        if (n->out[k] < 0) continue;
        nat_val *v = &bm->vals[n->out[k]];
        tensor_set_shape(&v->t, AIT_F32, 3, ds);
        TRY(tensor_alloc(&v->t, bm->err));
        v->cur = &v->t;
    }
    int64_t *g = st->geo;
    g[L_T] = T;
    g[L_B] = B;
    g[L_I] = I;
    g[L_H] = H;
    g[L_ND] = nd;
    g[L_REV0] = rev0;
    g[L_REV1] = 1;
    g[L_BIAS] = !absent(n, IN_B);
    st->scratch = sz;
    *taken = true;
    return AIT_OK;
}

static ait_status lstm_run(built *bm, const nat_step *st)
{
    const node *n = &bm->g->nodes[st->node];
    const int64_t *geo = st->geo;
    const int64_t T = geo[L_T], B = geo[L_B], I = geo[L_I], H = geo[L_H], nd = geo[L_ND];
    const nat_pack *p = &bm->packs[st->node];
    const float *x = bm->vals[n->in[0]].cur->data;
    const float *h0 = absent(n, IN_H0) ? NULL : bm->vals[n->in[IN_H0]].cur->data;
    const float *c0 = absent(n, IN_C0) ? NULL : bm->vals[n->in[IN_C0]].cur->data;
    float *y = bm->vals[n->out[0]].t.data;
    float *yh = n->n_out > 1 && n->out[1] >= 0 ? bm->vals[n->out[1]].t.data : NULL;
    float *yc = n->n_out > 2 && n->out[2] >= 0 ? bm->vals[n->out[2]].t.data : NULL;
    float *proj = bm->scratch, *gs = proj + T * B * 4 * H, *c = gs + B * 4 * H;
    float *zero = c + B * H; /* B*H zeros: h0 when absent */
    const int64_t yt = nd * B * H; /* Y: [T][nd][B][H] */
    if (!h0) memset(zero, 0, sizeof(float) * (size_t)(B * H));
    for (int64_t d = 0; d < nd; d++) {
        const bool rev = geo[L_REV0 + d] != 0;
        gemm_args g = {.m = T * B, .n = 4 * H, .k = I, .a = x, .rsa = I, .csa = 1,
                       .pb = &p->views[2 * d], .c = proj, .ldc = 4 * H,
                       .threads = bm->threads, .kern = bm->kern};
        if (geo[L_BIAS]) {
            g.epi.bias_mode = GEMM_BIAS_COL;
            g.epi.bias = p->bias + d * 4 * H;
        }
        TRY(nat_gemm_f32(bm, &g));
        if (c0) memcpy(c, c0 + d * B * H, sizeof(float) * (size_t)(B * H));
        else memset(c, 0, sizeof(float) * (size_t)(B * H));
        const float *hp = h0 ? h0 + d * B * H : zero;
        for (int64_t s = 0; s < T; s++) {
            const int64_t t = rev ? T - 1 - s : s;
            const float *pt = proj + t * B * 4 * H;
            gemm_args gr = {.m = B, .n = 4 * H, .k = H, .a = hp, .rsa = H, .csa = 1,
                            .pb = &p->views[2 * d + 1], .c = gs, .ldc = 4 * H,
                            .threads = bm->threads, .kern = bm->kern,
                            .epi = {.res = pt, .ldr = 4 * H}};
            TRY(nat_gemm_f32(bm, &gr));
            float *ht = y + t * yt + d * B * H;
            for (int64_t b = 0; b < B; b++)
                klstm_cell(gs + b * 4 * H, c + b * H, ht + b * H, (size_t)H);
            hp = ht;
        }
        if (yh) memcpy(yh + d * B * H, hp, sizeof(float) * (size_t)(B * H));
        if (yc) memcpy(yc + d * B * H, c, sizeof(float) * (size_t)(B * H));
    }
    return AIT_OK;
}

const nat_op nat_lstm = {"LSTM", lstm_take, lstm_run};

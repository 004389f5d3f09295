/* LSTM in float32 on the native backend. The input projection of every
 * step and both directions is one GEMM (X[T*B][I] x W^T with W's
 * directions side by side, N = nd*4H, the summed biases as its epilogue);
 * then the recurrence (kernels/lstm.h: per step the previous h against R,
 * packed in panels that keep a step's gates in registers, and the cell
 * update, c = f*c + i*g, h = o*tanh(c)) writes straight into Y, whose
 * previous step's rows are the next step's h. With 2 threads the two
 * directions run side by side. One blob: W packed for the GEMM (group 0),
 * then each direction's R packed for the recurrence (groups 1, 2).
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

/* Group 0: W as the GEMM's B (k I, n nd*4H: the rows' transpose, read
 * through strides); group 1 + d: direction d's R for klstm_seq. */
static void fill_w(built *bm, int i, int grp, void *dst, const void *arg)
{
    const int64_t *a = arg; /* I, H, nd */
    const int64_t I = a[0], H = a[1], nd = a[2];
    const node *n = &bm->g->nodes[i];
    const float *w = nat_shape(bm, n->in[1])->data, *r = nat_shape(bm, n->in[2])->data;
    if (grp == 0) gemm_pack_b(bm->kern, w, 1, I, I, nd * 4 * H, dst);
    else klstm_pack_r(r + (grp - 1) * 4 * H * H, (size_t)H, dst);
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

    /* scratch: the projection [T*B][nd*4H], the cell states [nd][B][H] */
    size_t rows, proj, sz, rp = klstm_pack_floats((size_t)H), rbytes;
    if (__builtin_mul_overflow((size_t)T, (size_t)B, &rows) ||
        __builtin_mul_overflow(rows, (size_t)(nd * 4 * H), &proj) ||
        __builtin_add_overflow(proj, (size_t)(nd * B * H), &sz) ||
        __builtin_mul_overflow(sz, sizeof(float), &sz) || !rp ||
        __builtin_mul_overflow(rp, sizeof(float), &rbytes))
        return nat_fail(bm, i, AIT_E_OVERFLOW, "LSTM scratch is too large");

    int64_t arg[3] = {I, H, nd};
    size_t sizes[3] = {gemm_pack_b_size(bm->kern, I, nd * 4 * H), rbytes, rbytes};
    if (!sizes[0]) return AIT_OK;
    nat_pack *p;
    bm->pack_raw = true; /* group 0 is viewed below; R is read as packed */
    ait_status s = nat_pack_get_sized(bm, i, 1 + nd, 0, sizes, fill_w, arg, &p);
    bm->pack_raw = false;
    TRY(s);
    s = gemm_packed_view(p->data, sizes[0], &p->views[0], bm->err);
    if (s == AIT_OK && p->views[0].kern != bm->kern)
        s = err_set(bm->err, AIT_E_INVALID_ARG, "packed for GEMM kernel %s, not %s",
                    gemm_kernel_name(p->views[0].kern), gemm_kernel_name(bm->kern));
    if (s != AIT_OK) {
        p->data = NULL;
        err_prefix(bm->err, "native: node '%s': prepared weights '%s': ", n->name, p->name);
        return nat_stale(bm, s);
    }
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
    float *proj = bm->scratch, *c = proj + T * B * nd * 4 * H;
    const size_t bh = sizeof(float) * (size_t)(B * H);
    gemm_args g = {.m = T * B, .n = nd * 4 * H, .k = I, .a = x, .rsa = I, .csa = 1,
                   .pb = &p->views[0], .c = proj, .ldc = nd * 4 * H,
                   .threads = bm->threads, .kern = bm->kern};
    if (geo[L_BIAS]) {
        g.epi.bias_mode = GEMM_BIAS_COL;
        g.epi.bias = p->bias;
    }
    TRY(nat_gemm_f32(bm, &g));
    klstm_dir dirs[2];
    for (int64_t d = 0; d < nd; d++) {
        if (c0) memcpy(c + d * B * H, c0 + d * B * H, bh);
        else memset(c + d * B * H, 0, bh);
        dirs[d] = (klstm_dir){.pr = (const float *)((const char *)p->data + (1 + d) * p->stride),
                              .x = proj + d * 4 * H, .ldx = (size_t)(nd * 4 * H),
                              .h0 = h0 ? h0 + d * B * H : NULL, .c = c + d * B * H,
                              .y = y + d * B * H, .ldy = (size_t)(nd * B * H),
                              .rev = geo[L_REV0 + d] != 0};
    }
    klstm_seq(dirs, (int)nd, (size_t)T, (size_t)B, (size_t)H, bm->threads);
    for (int64_t d = 0; d < nd; d++) {
        const int64_t last = dirs[d].rev ? 0 : T - 1; /* the step each direction ends at */
        if (yh) memcpy(yh + d * B * H, y + last * nd * B * H + d * B * H, bh);
        if (yc) memcpy(yc + d * B * H, c + d * B * H, bh);
    }
    return AIT_OK;
}

const nat_op nat_lstm = {"LSTM", lstm_take, lstm_run};

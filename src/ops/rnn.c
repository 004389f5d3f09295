/* Recurrent ops: RNN, GRU and LSTM, over one shared recurrence driver
 * (rnn_kernels.h, compiled for float and double).
 *
 * Inputs X, W, R, then optional B, sequence_lens, initial_h (and for LSTM
 * initial_c, P); outputs Y, Y_h (and for LSTM Y_c), all optional. The
 * layout attribute (opset 14) swaps the seq and batch axes of X and Y and
 * makes batch lead initial_h, initial_c, Y_h and Y_c. float16 and bfloat16
 * run in float32 through conversion buffers. */
#include <string.h>
#include <strings.h>
#include <tgmath.h>

#include "ops/op.h"

typedef enum { CELL_RNN, CELL_GRU, CELL_LSTM } rnn_cell;

typedef enum {
    ACT_RELU,
    ACT_TANH,
    ACT_SIGMOID,
    ACT_AFFINE,
    ACT_LEAKYRELU,
    ACT_THRESHOLDEDRELU,
    ACT_SCALEDTANH,
    ACT_HARDSIGMOID,
    ACT_ELU,
    ACT_SOFTSIGN,
    ACT_SOFTPLUS,
} act_kind;

typedef struct rnn_act {
    act_kind kind;
    float alpha, beta;
} rnn_act;

/* Activation names as the spec spells them (matched case-insensitively),
 * how many of activation_alpha / activation_beta each one takes, and the
 * values used when those lists run out. */
static const struct {
    const char *name;
    act_kind kind;
    int n_alpha, n_beta;
    float alpha, beta;
} act_table[] = {
    {"Relu", ACT_RELU, 0, 0, 0, 0},
    {"Tanh", ACT_TANH, 0, 0, 0, 0},
    {"Sigmoid", ACT_SIGMOID, 0, 0, 0, 0},
    {"Affine", ACT_AFFINE, 1, 1, 1.0f, 0.0f},
    {"LeakyRelu", ACT_LEAKYRELU, 1, 0, 0.01f, 0},
    {"ThresholdedRelu", ACT_THRESHOLDEDRELU, 1, 0, 1.0f, 0},
    {"ScaledTanh", ACT_SCALEDTANH, 1, 1, 1.0f, 1.0f},
    {"HardSigmoid", ACT_HARDSIGMOID, 1, 1, 0.2f, 0.5f},
    {"Elu", ACT_ELU, 1, 0, 1.0f, 0},
    {"Softsign", ACT_SOFTSIGN, 0, 0, 0, 0},
    {"Softplus", ACT_SOFTPLUS, 0, 0, 0, 0},
};

/* Per cell: gate count, activations per direction and their defaults. */
static const struct {
    int gates, n_act;
    act_kind dflt[3];
} cell_info[] = {
    [CELL_RNN] = {1, 1, {ACT_TANH}},
    [CELL_GRU] = {3, 2, {ACT_SIGMOID, ACT_TANH}},
    [CELL_LSTM] = {4, 3, {ACT_SIGMOID, ACT_TANH, ACT_TANH}},
};

typedef struct rnn_cfg {
    rnn_cell cell;
    int gates, ndir, layout;
    bool reverse[2];
    int64_t seq, batch, input, hidden;
    rnn_act act[2][3]; /* per direction: f, g, h */
    float clip;        /* 0: none */
    bool lbr;          /* GRU linear_before_reset */
    bool input_forget; /* LSTM */
} rnn_cfg;

/* Data pointers of one run, already in the kernel's type; NULL if absent. */
typedef struct rnn_io {
    const void *x, *w, *r, *b, *h0, *c0, *p;
    const int64_t *lens;
    void *y, *yh, *yc;
} rnn_io;

#define T float
#define K(name) name##_f32
#include "rnn_kernels.h"
#undef T
#undef K
#define T double
#define K(name) name##_f64
#include "rnn_kernels.h"
#undef T
#undef K

/* Input slots after X, W, R. */
enum { IN_B = 3, IN_LENS = 4, IN_H0 = 5, IN_C0 = 6, IN_P = 7 };

static ait_status parse_acts(op_ctx *c, rnn_cfg *k)
{
    int per = cell_info[k->cell].n_act, n = 0, na = 0, nb = 0;
    const attr *a = node_attr(c->n, "activations");
    const float *alphas = attr_floats(c->n, "activation_alpha", &na);
    const float *betas = attr_floats(c->n, "activation_beta", &nb);
    if (!a) {
        for (int d = 0; d < k->ndir; d++)
            for (int i = 0; i < per; i++) k->act[d][i] = (rnn_act){cell_info[k->cell].dflt[i], 0, 0};
        return AIT_OK;
    }
    if (a->type != ATTR_STRINGS) return err_set(c->err, AIT_E_INVALID_ARG, "activations must be strings");
    n = a->n;
    /* bidirectional with one direction's list: both directions use it */
    if (n != per * k->ndir && !(k->ndir == 2 && n == per))
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "activations lists %d functions; expected %d per direction", n, per);
    int ia = 0, ib = 0;
    for (int i = 0; i < n; i++) {
        size_t e = 0, ne = sizeof act_table / sizeof act_table[0];
        while (e < ne && strcasecmp(a->strings[i], act_table[e].name) != 0) e++;
        if (e == ne)
            return err_set(c->err, AIT_E_UNSUPPORTED, "activation '%s' is not supported",
                           a->strings[i]);
        rnn_act f = {act_table[e].kind, act_table[e].alpha, act_table[e].beta};
        if (act_table[e].n_alpha && ia < na) f.alpha = alphas[ia++];
        if (act_table[e].n_beta && ib < nb) f.beta = betas[ib++];
        k->act[i / per][i % per] = f;
        if (n == per && k->ndir == 2) k->act[1][i] = f;
    }
    return AIT_OK;
}

/* Fails unless t has exactly the given shape. */
static ait_status want_shape(op_ctx *c, const tensor *t, const char *what, int rank,
                             const int64_t *dims)
{
    bool ok = t->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = t->dims[i] == dims[i];
    if (ok) return AIT_OK;
    char a[128], b[128];
    return err_set(c->err, AIT_E_SHAPE, "%s has shape %s, expected %s", what,
                   shape_str(t->dims, t->rank, a, sizeof a), shape_str(dims, rank, b, sizeof b));
}

/* Reads attributes and checks every input against them. */
static ait_status rnn_setup(op_ctx *c, rnn_cell cell, rnn_cfg *k)
{
    memset(k, 0, sizeof *k);
    k->cell = cell;
    k->gates = cell_info[cell].gates;
    const tensor *x = c->in[0], *w = c->in[1], *r = c->in[2];
    TRY(check_dtype(c, x, "X", 4, AIT_F32, AIT_F64, AIT_F16, AIT_BF16));
    const char *dir = attr_str(c->n, "direction", "forward");
    if (strcmp(dir, "forward") == 0) {
        k->ndir = 1;
    } else if (strcmp(dir, "reverse") == 0) {
        k->ndir = 1;
        k->reverse[0] = true;
    } else if (strcmp(dir, "bidirectional") == 0) {
        k->ndir = 2;
        k->reverse[1] = true;
    } else {
        return err_set(c->err, AIT_E_INVALID_ARG, "unknown direction '%s'", dir);
    }
    int64_t layout = attr_int(c->n, "layout", 0);
    if (layout != 0 && layout != 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "layout must be 0 or 1, not %lld",
                       (long long)layout);
    k->layout = (int)layout;
    if (x->rank != 3 || w->rank != 3 || r->rank != 3)
        return err_set(c->err, AIT_E_SHAPE, "X, W and R must have rank 3 (got %d, %d, %d)",
                       x->rank, w->rank, r->rank);
    k->seq = x->dims[layout ? 1 : 0];
    k->batch = x->dims[layout ? 0 : 1];
    k->input = x->dims[2];
    k->hidden = attr_int(c->n, "hidden_size", r->dims[2]);
    if (k->hidden < 1 || k->hidden > (int64_t)1 << 24)
        return err_set(c->err, AIT_E_INVALID_ARG, "hidden_size %lld is not valid",
                       (long long)k->hidden);
    const int64_t nd = k->ndir, H = k->hidden, GH = k->gates * H, B = k->batch;
    const int64_t dw[3] = {nd, GH, k->input}, dr[3] = {nd, GH, H}, db[2] = {nd, 2 * GH},
                  dp[2] = {nd, 3 * H}, dl[1] = {B};
    const int64_t ds[3] = {layout ? B : nd, layout ? nd : B, H};
    TRY(want_shape(c, w, "W", 3, dw));
    TRY(want_shape(c, r, "R", 3, dr));
    static const char *const names[] = {"X", "W", "R", "B", "sequence_lens", "initial_h",
                                        "initial_c", "P"};
    for (int i = 1; i < c->n_in && i < 8; i++) {
        if (!has_in(c, i) || i == IN_LENS) continue;
        if (c->in[i]->dtype != x->dtype)
            return err_set(c->err, AIT_E_DTYPE, "%s has dtype %s but X has %s", names[i],
                           ait_dtype_name(c->in[i]->dtype), ait_dtype_name(x->dtype));
    }
    if (has_in(c, IN_B)) TRY(want_shape(c, c->in[IN_B], "B", 2, db));
    if (has_in(c, IN_LENS)) {
        TRY(check_dtype(c, c->in[IN_LENS], "sequence_lens", 2, AIT_I32, AIT_I64));
        TRY(want_shape(c, c->in[IN_LENS], "sequence_lens", 1, dl));
    }
    if (has_in(c, IN_H0)) TRY(want_shape(c, c->in[IN_H0], "initial_h", 3, ds));
    if (cell == CELL_LSTM) {
        if (has_in(c, IN_C0)) TRY(want_shape(c, c->in[IN_C0], "initial_c", 3, ds));
        if (has_in(c, IN_P)) TRY(want_shape(c, c->in[IN_P], "P", 2, dp));
        k->input_forget = attr_int(c->n, "input_forget", 0) != 0;
    }
    if (cell == CELL_GRU) k->lbr = attr_int(c->n, "linear_before_reset", 0) != 0;
    if (node_attr(c->n, "clip")) {
        k->clip = attr_float(c->n, "clip", 0);
        if (!(k->clip > 0))
            return err_set(c->err, AIT_E_INVALID_ARG, "clip must be positive");
    }
    return parse_acts(c, k);
}

static ait_status rnn_infer(op_ctx *c, rnn_cell cell)
{
    rnn_cfg k;
    TRY(rnn_setup(c, cell, &k));
    ait_dtype dt = c->in[0]->dtype;
    int64_t S = k.seq, B = k.batch, H = k.hidden, nd = k.ndir, n;
    int64_t y[4] = {S, nd, B, H}, yb[4] = {B, S, nd, H};
    int64_t s[3] = {nd, B, H}, sb[3] = {B, nd, H};
    TRY(shape_numel(y, 4, dt, &n, "Y", c->err));
    set_out(c, 0, dt, 4, k.layout ? yb : y);
    set_out(c, 1, dt, 3, k.layout ? sb : s);
    if (cell == CELL_LSTM) set_out(c, 2, dt, 3, k.layout ? sb : s);
    return AIT_OK;
}

/* Converts between the model's dtype and the kernel's float32 buffers. */
static ait_status to_f32(op_ctx *c, const tensor *t, float **buf, const void **ptr)
{
    if (!t) return AIT_OK;
    int64_t n = tensor_numel(t);
    TRY(convert_elems(t->data, t->dtype, *buf, AIT_F32, n, c->err));
    *ptr = *buf;
    *buf += n;
    return AIT_OK;
}

static ait_status rnn_run(op_ctx *c, rnn_cell cell)
{
    rnn_cfg k;
    TRY(rnn_setup(c, cell, &k));
    ait_dtype dt = c->in[0]->dtype;
    const tensor *in[8] = {0};
    for (int i = 0; i < 8 && i < c->n_in; i++) in[i] = has_in(c, i) ? c->in[i] : NULL;
    tensor *out[3] = {0};
    for (int i = 0; i < 3 && i < c->n_out; i++) out[i] = has_out(c, i) ? c->out[i] : NULL;
    if (cell != CELL_LSTM) in[IN_C0] = in[IN_P] = out[2] = NULL;

    /* One scratch block: sequence lengths, float32 copies (float16 and
     * bfloat16 only), then the kernel's workspace. */
    bool conv = dt == AIT_F16 || dt == AIT_BF16;
    size_t esz = dt == AIT_F64 ? sizeof(double) : sizeof(float);
    size_t ws = dt == AIT_F64 ? ws_elems_f64(&k) : ws_elems_f32(&k), conv_elems = 0;
    if (conv) {
        for (int i = 0; i < 8; i++)
            if (in[i] && i != IN_LENS) conv_elems += (size_t)tensor_numel(in[i]);
        for (int i = 0; i < 3; i++)
            if (out[i]) conv_elems += (size_t)tensor_numel(out[i]);
    }
    size_t bytes[3] = {(size_t)k.batch * sizeof(int64_t), conv_elems * esz, ws * esz};
    void *p[3];
    if (conv_elems > SIZE_MAX / 8 || ws > SIZE_MAX / 8)
        return err_set(c->err, AIT_E_OVERFLOW, "temporary buffers are too large");
    TRY(op_scratch_parts(c, 3, bytes, p));
    int64_t *lens = p[0];
    void *work = p[2];

    rnn_io io = {0};
    if (in[IN_LENS]) {
        for (int64_t b = 0; b < k.batch; b++) {
            lens[b] = elem_get_i64(in[IN_LENS]->data, in[IN_LENS]->dtype, b);
            if (lens[b] < 0 || lens[b] > k.seq)
                return err_set(c->err, AIT_E_INVALID_ARG,
                               "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                               (long long)lens[b], (long long)k.seq);
        }
        io.lens = lens;
    }
    const void **iptr[8] = {&io.x, &io.w, &io.r, &io.b, NULL, &io.h0, &io.c0, &io.p};
    void **optr[3] = {&io.y, &io.yh, &io.yc};
    if (conv) {
        float *buf = p[1];
        for (int i = 0; i < 8; i++)
            if (iptr[i]) TRY(to_f32(c, in[i], &buf, iptr[i]));
        for (int i = 0; i < 3; i++)
            if (out[i]) {
                *optr[i] = buf;
                buf += tensor_numel(out[i]);
            }
    } else {
        for (int i = 0; i < 8; i++)
            if (iptr[i] && in[i]) *iptr[i] = in[i]->data;
        for (int i = 0; i < 3; i++)
            if (out[i]) *optr[i] = out[i]->data;
    }

    if (dt == AIT_F64) run_f64(&k, &io, work);
    else run_f32(&k, &io, work);

    if (conv)
        for (int i = 0; i < 3; i++)
            if (out[i])
                TRY(convert_elems(*optr[i], AIT_F32, out[i]->data, dt, tensor_numel(out[i]),
                                  c->err));
    return AIT_OK;
}

static ait_status rnn_infer_rnn(op_ctx *c) { return rnn_infer(c, CELL_RNN); }
static ait_status rnn_run_rnn(op_ctx *c) { return rnn_run(c, CELL_RNN); }
static ait_status rnn_infer_gru(op_ctx *c) { return rnn_infer(c, CELL_GRU); }
static ait_status rnn_run_gru(op_ctx *c) { return rnn_run(c, CELL_GRU); }
static ait_status rnn_infer_lstm(op_ctx *c) { return rnn_infer(c, CELL_LSTM); }
static ait_status rnn_run_lstm(op_ctx *c) { return rnn_run(c, CELL_LSTM); }

OP_TABLE(rnn,
         {"RNN", 3, 6, 0, 2, 0, rnn_infer_rnn, rnn_run_rnn},
         {"GRU", 3, 6, 0, 2, 0, rnn_infer_gru, rnn_run_gru},
         {"LSTM", 3, 8, 0, 3, 0, rnn_infer_lstm, rnn_run_lstm});

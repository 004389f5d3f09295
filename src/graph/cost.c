/* What a node costs: FLOPs from the shapes of one run, parameters from its
 * constant inputs. The counts are estimates for ranking modules and for
 * GFLOP/s figures, not exact instruction counts: a multiply-add is 2,
 * elementwise work is a few flops per element. */
#include <string.h>

#include "graph/cost.h"

/* A shape to count with: the run's tensor, else the constant, else the
 * declared shape when every dim is known. */
typedef struct shp {
    int rank; /* -1: unknown */
    const int64_t *dims;
} shp;

static shp value_shape(const graph *g, int v, const tensor *t)
{
    if (t && t->kind == VAL_TENSOR) return (shp){t->rank, t->dims};
    if (v < 0 || v >= g->n_vals) return (shp){-1, NULL};
    const value *val = &g->vals[v];
    if (val->konst) return (shp){val->konst->rank, val->konst->dims};
    if (val->rank < 0) return (shp){-1, NULL};
    for (int d = 0; d < val->rank; d++)
        if (val->dims[d] < 0) return (shp){-1, NULL};
    return (shp){val->rank, val->dims};
}

static shp in_shape(const graph *g, const node *nd, const tensor *const *in, int i)
{
    if (i >= nd->n_in || nd->in[i] < 0) return (shp){-1, NULL};
    return value_shape(g, nd->in[i], in ? in[i] : NULL);
}

static shp out_shape(const graph *g, const node *nd, const tensor *const *out, int i)
{
    if (i >= nd->n_out || nd->out[i] < 0) return (shp){-1, NULL};
    return value_shape(g, nd->out[i], out ? out[i] : NULL);
}

static double numel(shp s)
{
    if (s.rank < 0) return 0;
    double n = 1;
    for (int d = 0; d < s.rank; d++) n *= (double)s.dims[d];
    return n;
}

/* Out elements of every output: the fallback count. */
static double out_elems(const graph *g, const node *nd, const tensor *const *out)
{
    double n = 0;
    for (int i = 0; i < nd->n_out; i++) n += numel(out_shape(g, nd, out, i));
    return n;
}

/* MatMul: each output element is a dot product over K (A's last axis). */
static double matmul_flops(const graph *g, const node *nd, const tensor *const *in,
                           const tensor *const *out)
{
    shp a = in_shape(g, nd, in, 0);
    if (a.rank < 1) return out_elems(g, nd, out);
    return 2.0 * numel(out_shape(g, nd, out, 0)) * (double)a.dims[a.rank - 1];
}

static double gemm_flops(const graph *g, const node *nd, const tensor *const *in,
                         const tensor *const *out)
{
    shp a = in_shape(g, nd, in, 0);
    double y = numel(out_shape(g, nd, out, 0));
    if (a.rank != 2) return y;
    double k = (double)a.dims[attr_int(nd, "transA", 0) ? 0 : 1];
    /* alpha * AB + beta * C: the C term is one multiply-add per element */
    return 2.0 * y * k + (nd->n_in > 2 && nd->in[2] >= 0 ? 2.0 * y : 0);
}

/* Conv: per output element, a dot product over the (C / group) x kernel
 * window of W [M, C/group, k1, k2...]. ConvTranspose scatters every input
 * element through W [C, M/group, k...], so its count runs over the input. */
static double conv_flops(const graph *g, const node *nd, const tensor *const *in,
                         const tensor *const *out, bool transpose)
{
    shp x = in_shape(g, nd, in, 0), w = in_shape(g, nd, in, 1);
    double y = numel(out_shape(g, nd, out, 0));
    if (w.rank < 2) return y;
    double win = 1;
    for (int d = 1; d < w.rank; d++) win *= (double)w.dims[d]; /* C/group (or M/group) x k */
    double bias = nd->n_in > 2 && nd->in[2] >= 0 ? y : 0;
    if (!transpose) return 2.0 * y * win + bias;
    return 2.0 * numel(x) * win + bias;
}

/* Einsum with two operands: every combination of label values is one
 * multiply-add, so 2 x the product of the sizes of all distinct labels
 * (the axes under "..." count as labels too, aligned from the right). */
static double einsum_flops(const graph *g, const node *nd, const tensor *const *in,
                           const tensor *const *out)
{
    const char *eq = attr_str(nd, "equation", NULL);
    if (!eq || nd->n_in != 2) return out_elems(g, nd, out);
    int64_t size[128], ell[AIT_MAX_RANK];
    for (int i = 0; i < 128; i++) size[i] = -1; /* -1: label not used */
    for (int i = 0; i < AIT_MAX_RANK; i++) ell[i] = -1;
    const char *p = eq;
    for (int op = 0; op < 2; op++) {
        shp s = in_shape(g, nd, in, op);
        if (s.rank < 0) return out_elems(g, nd, out);
        size_t len = strcspn(p, ",-");
        int named = 0;
        bool has_ell = false;
        for (size_t i = 0; i < len; i++) {
            named += (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z');
            has_ell |= p[i] == '.';
        }
        int n_ell = has_ell ? s.rank - named : 0, ax = 0;
        if (n_ell < 0 || (!has_ell && named != s.rank)) return out_elems(g, nd, out);
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)p[i];
            if (c == '.') {
                for (int k = 0; k < n_ell; k++, ax++) {
                    int slot = n_ell - 1 - k; /* from the right, as broadcasting aligns */
                    if (ell[slot] < s.dims[ax]) ell[slot] = s.dims[ax];
                }
                i += 2;
            } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
                if (size[c] < s.dims[ax]) size[c] = s.dims[ax]; /* a broadcast 1 loses */
                ax++;
            }
        }
        p += len;
        if (*p == ',') p++;
    }
    double f = 2;
    for (int c = 0; c < 128; c++)
        if (size[c] >= 0) f *= (double)size[c];
    for (int k = 0; k < AIT_MAX_RANK; k++)
        if (ell[k] >= 0) f *= (double)ell[k];
    return f;
}

/* LSTM / GRU / RNN: per step, per direction and batch row, the gate GEMMs
 * with X (gates*H x I) and with the hidden state (gates*H x H), plus the
 * gate activations and state updates, a few flops per hidden unit. */
static double rnn_flops(const graph *g, const node *nd, const tensor *const *in,
                        const tensor *const *out, int gates, int eltwise)
{
    shp x = in_shape(g, nd, in, 0), w = in_shape(g, nd, in, 1);
    if (x.rank != 3 || w.rank != 3) return out_elems(g, nd, out);
    bool bmajor = attr_int(nd, "layout", 0) == 1;
    double seq = (double)x.dims[bmajor ? 1 : 0], batch = (double)x.dims[bmajor ? 0 : 1];
    double dirs = (double)w.dims[0], in_sz = (double)w.dims[2];
    double h = (double)attr_int(nd, "hidden_size", gates ? w.dims[1] / gates : 0);
    return dirs * seq * batch * (2.0 * gates * h * (in_sz + h) + eltwise * h);
}

/* Pooling: each output element reads its window. */
static double pool_flops(const graph *g, const node *nd, const tensor *const *in,
                         const tensor *const *out)
{
    int nk = 0;
    const int64_t *k = attr_ints(nd, "kernel_shape", &nk);
    double win = 1;
    for (int i = 0; k && i < nk; i++) win *= (double)k[i];
    return numel(out_shape(g, nd, out, 0)) * win;
}

typedef enum kind { K_ELEM, K_MATMUL, K_GEMM, K_CONV, K_CONVT, K_EINSUM, K_LSTM, K_GRU, K_RNN,
                    K_POOL, K_GPOOL, K_PER_ELEM } kind;

/* Ops with a formula; K_PER_ELEM rows give flops per output element. */
static const struct {
    const char *op;
    kind k;
    int per;
} formulas[] = {
    {"MatMul", K_MATMUL, 0},        {"MatMulInteger", K_MATMUL, 0},
    {"QLinearMatMul", K_MATMUL, 0}, {"Gemm", K_GEMM, 0},
    {"Conv", K_CONV, 0},            {"ConvInteger", K_CONV, 0},
    {"QLinearConv", K_CONV, 0},     {"ConvTranspose", K_CONVT, 0},
    {"Einsum", K_EINSUM, 0},        {"LSTM", K_LSTM, 0},
    {"GRU", K_GRU, 0},              {"RNN", K_RNN, 0},
    {"MaxPool", K_POOL, 0},         {"AveragePool", K_POOL, 0},
    {"LpPool", K_POOL, 0},          {"GlobalMaxPool", K_GPOOL, 0},
    {"GlobalAveragePool", K_GPOOL, 0}, {"GlobalLpPool", K_GPOOL, 0},
    /* inference BatchNorm is a scale and a shift */
    {"BatchNormalization", K_PER_ELEM, 2},
    /* mean, variance (2), normalise (2), scale and shift (2), plus one */
    {"LayerNormalization", K_PER_ELEM, 8}, {"InstanceNormalization", K_PER_ELEM, 8},
    {"GroupNormalization", K_PER_ELEM, 8}, {"SimplifiedLayerNormalization", K_PER_ELEM, 6},
    {"LpNormalization", K_PER_ELEM, 3},    {"MeanVarianceNormalization", K_PER_ELEM, 6},
    /* max, subtract, exp, sum, divide */
    {"Softmax", K_PER_ELEM, 5}, {"LogSoftmax", K_PER_ELEM, 5}, {"Hardmax", K_PER_ELEM, 2},
};

/* Constants that are shapes, axes or indices (int64) steer an op rather
 * than parametrise it; only other constants count as parameters. */
const tensor *cost_param(const graph *g, int v)
{
    if (v < 0 || v >= g->n_vals || !g->vals[v].konst) return NULL;
    const tensor *t = g->vals[v].konst;
    return t->kind == VAL_TENSOR && t->dtype != AIT_I64 ? t : NULL;
}

static void add_params(const graph *g, const node *nd, node_cost *c)
{
    for (int i = 0; i < nd->n_in; i++) {
        int v = nd->in[i];
        const tensor *t = cost_param(g, v);
        if (!t) continue;
        bool seen = false; /* a node reading one constant twice reads it once */
        for (int j = 0; j < i; j++) seen |= nd->in[j] == v;
        if (seen) continue;
        int64_t n = tensor_numel(t);
        c->params += n;
        c->param_bytes += n * (int64_t)ait_dtype_size(t->dtype);
    }
}

void node_cost_of(const graph *g, int n, const tensor *const *in, const tensor *const *out,
                  node_cost *c)
{
    *c = (node_cost){0};
    if (!g || n < 0 || n >= g->n_nodes) return;
    const node *nd = &g->nodes[n];
    add_params(g, nd, c);
    kind k = K_ELEM;
    int per = 1;
    if (onnx_domain_default(nd->domain) || !strcmp(nd->domain, "com.microsoft"))
        for (size_t i = 0; i < sizeof formulas / sizeof formulas[0]; i++)
            if (!strcmp(nd->op, formulas[i].op)) {
                k = formulas[i].k, per = formulas[i].per;
                break;
            }
    switch (k) {
    case K_MATMUL: c->flops = matmul_flops(g, nd, in, out); break;
    case K_GEMM: c->flops = gemm_flops(g, nd, in, out); break;
    case K_CONV: c->flops = conv_flops(g, nd, in, out, false); break;
    case K_CONVT: c->flops = conv_flops(g, nd, in, out, true); break;
    case K_EINSUM: c->flops = einsum_flops(g, nd, in, out); break;
    case K_LSTM: c->flops = rnn_flops(g, nd, in, out, 4, 12); break;
    case K_GRU: c->flops = rnn_flops(g, nd, in, out, 3, 10); break;
    case K_RNN: c->flops = rnn_flops(g, nd, in, out, 1, 2); break;
    case K_POOL: c->flops = pool_flops(g, nd, in, out); break;
    case K_GPOOL: c->flops = numel(in_shape(g, nd, in, 0)); break;
    case K_PER_ELEM: c->flops = per * out_elems(g, nd, out); break;
    case K_ELEM: c->flops = out_elems(g, nd, out); break;
    }
}

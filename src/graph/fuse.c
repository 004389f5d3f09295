/* Fusion passes: the readers index, the epilogue and chain passes, the set.
 * Patterns of several nodes are matched forward from a value through its
 * readers; a match is kept only when it is closed (fx_closed): no value
 * inside it is read outside it or is a graph output. */
#include "graph/fuse_ctx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the shared helpers (fuse_ctx.h) ---- */

const tensor *fx_konst(const fctx *c, int v)
{
    if (v < 0 || v >= c->g->n_vals) return NULL;
    const tensor *t = c->g->vals[v].konst;
    return t && t->data && t->dtype == AIT_F32 && t->kind == VAL_TENSOR ? t : NULL;
}

bool fx_scalar(const fctx *c, int v, float *f)
{
    const tensor *t = fx_konst(c, v);
    if (!t || tensor_numel(t) != 1) return false;
    *f = *(const float *)t->data;
    return true;
}

const tensor *fx_shape(const fctx *c, int v, tensor *tmp)
{
    if (v < 0) return NULL;
    if (c->g->vals[v].konst) return c->g->vals[v].konst;
    if (c->shape) {
        const tensor *t = c->shape(c->sctx, v);
        if (t && t->dtype != AIT_UNDEFINED && t->rank >= 0) return t;
    }
    const value *x = &c->g->vals[v];
    if (x->rank < 0 || x->dtype == AIT_UNDEFINED) return NULL;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] < 0) return NULL;
    memset(tmp, 0, sizeof *tmp);
    tensor_set_shape(tmp, x->dtype, x->rank, x->dims);
    return tmp;
}

bool fx_is(const fctx *c, int i, const char *op)
{
    const node *n = &c->g->nodes[i];
    return !n->dead && !c->taken[i] && onnx_domain_default(n->domain) && !strcmp(n->op, op);
}

int fx_only(const fctx *c, int v)
{
    if (v < 0 || c->uses[v] != 1 || c->out[v] || c->coff[v + 1] - c->coff[v] != 1) return -1;
    int i = c->cons[c->coff[v]];
    return c->taken[i] || c->g->nodes[i].dead ? -1 : i;
}

int fx_reader(const fctx *c, int v, const char *op)
{
    if (v < 0) return -1;
    for (int k = c->coff[v]; k < c->coff[v + 1]; k++)
        if (fx_is(c, c->cons[k], op)) return c->cons[k];
    return -1;
}

int fx_other(const fctx *c, int i, int x, int *side)
{
    const node *n = &c->g->nodes[i];
    if (n->n_in != 2 || n->n_out != 1 || n->in[0] < 0 || n->in[1] < 0) return -1;
    if (n->in[0] == x) *side = 0;
    else if (n->in[1] == x) *side = 1;
    else return -1;
    return n->in[1 - *side];
}

bool fx_with(const fctx *c, int i, const char *op, int x, float want, bool commutes)
{
    int side;
    float f;
    if (i < 0 || !fx_is(c, i, op)) return false;
    int o = fx_other(c, i, x, &side);
    if (o < 0 || o == x || (side && !commutes) || !fx_scalar(c, o, &f)) return false;
    return fabsf(f - want) <= 1e-4f * fabsf(want);
}

static bool in_match(const fmatch *m, int i)
{
    for (int k = 0; k < m->n; k++)
        if (m->nodes[k] == i) return true;
    return false;
}

static bool readers_in(const fctx *c, const fmatch *m, int v)
{
    if (c->out[v]) return false;
    for (int k = c->coff[v]; k < c->coff[v + 1]; k++)
        if (!in_match(m, c->cons[k])) return false;
    return c->coff[v + 1] - c->coff[v] == c->uses[v]; /* no subgraph reads it */
}

bool fx_closed(const fctx *c, const fmatch *m, int last_out, int x)
{
    if (x >= 0 && !readers_in(c, m, x)) return false;
    for (int k = 0; k < m->n; k++) {
        const node *n = &c->g->nodes[m->nodes[k]];
        for (int o = 0; o < n->n_out; o++)
            if (n->out[o] >= 0 && n->out[o] != last_out && !readers_in(c, m, n->out[o]))
                return false;
    }
    return true;
}

void fx_add(fmatch *m, int i)
{
    if (m->n < FUSE_MAX_NODES) m->nodes[m->n++] = i;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

ait_status fx_record(fctx *c, const fusion *f, const fmatch *m, ait_error *e)
{
    fusion_set *s = c->set;
    fusion *grown = realloc(s->f, (size_t)(s->n + 1) * sizeof *grown);
    int *nodes = malloc((size_t)(m->n ? m->n : 1) * sizeof *nodes);
    if (grown) s->f = grown;
    if (!grown || !nodes) {
        free(nodes);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    fusion *d = &s->f[s->n];
    *d = *f;
    memcpy(nodes, m->nodes, (size_t)m->n * sizeof *nodes);
    qsort(nodes, (size_t)m->n, sizeof *nodes, cmp_int);
    d->nodes = nodes;
    d->n_nodes = m->n;
    d->last = m->n ? nodes[m->n - 1] : f->node;
    if (d->kind != FK_EPILOGUE) d->node = nodes[0];
    for (int k = 0; k < m->n; k++) {
        c->taken[nodes[k]] = true;
        s->of_node[nodes[k]] = s->n;
    }
    c->taken[d->node] = true;
    s->of_node[d->node] = s->n;
    s->n++;
    return AIT_OK;
}

/* ---- steps: binary ops with a constant or another tensor ---- */

/* The frame per-channel operands must fit: output rank R (-1 unknown),
 * channel axis (>= 0, -1 the last, -2 not chosen yet: a chain picks it at
 * its first per-channel operand) and its extent C. */
typedef struct frame {
    int R, axis;
    int64_t C;
    bool known;          /* dims holds the output's R dims */
    int64_t dims[AIT_MAX_RANK];
} frame;

/* t varies along the frame's channel axis only, with C elements. */
static bool per_channel(frame *fr, const tensor *t)
{
    int k = -1;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] != 1) {
            if (k >= 0) return false;
            k = i;
        }
    /* Of the output's rank at most; unknown, of rank 1 at most (a MatMul
     * with a 2-D weight gives rank 1 or more). */
    if (k < 0 || t->rank > (fr->R >= 0 ? fr->R : 1)) return false;
    int from_right = t->rank - 1 - k;
    int64_t n = t->dims[k];
    /* The output has n along that axis: the operand does not grow it. */
    if (fr->known && fr->dims[fr->R - 1 - from_right] != n) return false;
    if (fr->axis == -1) return from_right == 0 && n == fr->C;
    if (fr->axis >= 0) return fr->R >= 0 && from_right == fr->R - 1 - fr->axis && n == fr->C;
    if (fr->R < 0) return false;
    fr->axis = fr->R - 1 - from_right;
    fr->C = n;
    return true;
}

typedef struct bin_row {
    const char *op;
    fuse_op left, right; /* x on the left, x on the right */
} bin_row;

static const bin_row bins[] = {
    {"Add", FO_ADD, FO_ADD}, {"Mul", FO_MUL, FO_MUL}, {"Sub", FO_SUB, FO_RSUB},
    {"Div", FO_DIV, FO_RDIV}, {"Max", FO_MAX, FO_MAX}, {"Min", FO_MIN, FO_MIN},
};

static bool same_shape(const tensor *a, const tensor *b)
{
    return a && b && a->rank == b->rank &&
           !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
}

/* Node i as a step on x: a binary op with a scalar or per-channel constant,
 * the chain's input (input >= 0), or (tensors) a non-constant operand of
 * x's shape. */
static bool bin_step(const fctx *c, int i, int x, int input, frame *fr, bool tensors,
                     fuse_step *st)
{
    const node *n = &c->g->nodes[i];
    const bin_row *r = NULL;
    for (size_t k = 0; k < sizeof bins / sizeof bins[0]; k++)
        if (fx_is(c, i, bins[k].op)) r = &bins[k];
    int side;
    int o = r ? fx_other(c, i, x, &side) : -1;
    if (o < 0 || o == x || n->out[0] < 0) return false;
    memset(st, 0, sizeof *st);
    st->op = side ? r->right : r->left;
    st->v = -1;
    const tensor *k = fx_konst(c, o);
    if (k) {
        if (tensor_numel(k) == 1) {
            if (k->rank > (fr->R >= 0 ? fr->R : 0)) return false; /* grows the rank */
            st->src = FS_SCALAR;
            st->a = *(const float *)k->data;
            return true;
        }
        frame keep = *fr;
        if (!per_channel(fr, k)) return false;
        st->src = FS_CHANNEL;
        st->np = fr->C;
        st->p = malloc((size_t)fr->C * sizeof *st->p);
        if (!st->p) {
            *fr = keep;
            return false;
        }
        memcpy(st->p, k->data, (size_t)fr->C * sizeof *st->p);
        return true;
    }
    if (c->g->vals[o].konst) return false; /* a constant of another dtype */
    if (o == input) {
        st->src = FS_INPUT;
        return true;
    }
    tensor t1, t2;
    const tensor *a = fx_shape(c, x, &t1), *b = fx_shape(c, o, &t2);
    if (!tensors || !same_shape(a, b) || a->dtype != AIT_F32 || b->dtype != AIT_F32) return false;
    st->src = FS_TENSOR;
    st->v = o;
    return true;
}

static void steps_free(fuse_step *s, int n)
{
    for (int k = 0; k < n; k++) {
        free(s[k].p);
        s[k].p = NULL;
    }
}

/* ---- epilogues ---- */

/* The producer's output frame, or false when node i is none. */
static bool producer(const fctx *c, int i, frame *fr)
{
    const node *n = &c->g->nodes[i];
    bool conv = fx_is(c, i, "Conv"), convt = fx_is(c, i, "ConvTranspose");
    bool mm = fx_is(c, i, "MatMul"), gemm = fx_is(c, i, "Gemm");
    if (!(conv || convt || mm || gemm) || n->n_out != 1 || n->out[0] < 0 || n->n_in < 2)
        return false;
    tensor t1, t2;
    const tensor *w = fx_shape(c, n->in[1], &t1), *y = fx_shape(c, n->out[0], &t2);
    if (!(w && w->dtype == AIT_F32) && !(y && y->dtype == AIT_F32)) return false;
    fr->R = y ? y->rank : -1;
    fr->known = y != NULL;
    if (y) memcpy(fr->dims, y->dims, sizeof fr->dims);
    fr->C = 0;
    fr->axis = 1;
    if (conv || convt) {
        if (!w || w->rank < 3 || (y && y->rank != w->rank)) return false;
        fr->R = w->rank;
        fr->C = conv ? w->dims[0] : w->dims[1] * attr_int(n, "group", 1);
    } else if (gemm) {
        fr->R = 2;
        if (y && y->rank != 2) fr->known = false;
        if (w && w->rank == 2) fr->C = attr_int(n, "transB", 0) ? w->dims[0] : w->dims[1];
    } else {
        fr->axis = -1;
        if (w && w->rank >= 2) fr->C = w->dims[w->rank - 1];
    }
    return true;
}

/* BatchNormalization (inference) on the channel axis 1 as a multiply and
 * an add per channel. */
static bool bn_steps(const fctx *c, int i, int x, const frame *fr, fuse_step *st)
{
    const node *n = &c->g->nodes[i];
    if (!fx_is(c, i, "BatchNormalization") || n->n_in != 5 || n->in[0] != x || n->n_out < 1 ||
        n->out[0] < 0 || fr->axis != 1 ||
        fr->C <= 0 || attr_int(n, "training_mode", 0) != 0)
        return false;
    const tensor *p[4];
    for (int k = 0; k < 4; k++) {
        p[k] = fx_konst(c, n->in[k + 1]);
        if (!p[k] || tensor_numel(p[k]) != fr->C) return false;
    }
    float eps = attr_float(n, "epsilon", 1e-5f);
    memset(st, 0, 2 * sizeof *st);
    float *s = malloc((size_t)fr->C * sizeof *s), *t = malloc((size_t)fr->C * sizeof *t);
    if (!s || !t) {
        free(s);
        free(t);
        return false;
    }
    const float *g = p[0]->data, *b = p[1]->data, *m = p[2]->data, *v = p[3]->data;
    for (int64_t k = 0; k < fr->C; k++) {
        s[k] = g[k] / sqrtf(v[k] + eps);
        t[k] = b[k] - m[k] * s[k];
    }
    st[0] = (fuse_step){.op = FO_MUL, .src = FS_CHANNEL, .p = s, .np = fr->C, .v = -1};
    st[1] = (fuse_step){.op = FO_ADD, .src = FS_CHANNEL, .p = t, .np = fr->C, .v = -1};
    return true;
}

/* One step (or BatchNormalization's two) on cur, which is absorbed:
 * *out gets the new value. */
static int next_steps(const fctx *c, int cur, int input, frame *fr, bool epilogue, fuse_step *st,
                      fmatch *m, int *out)
{
    fmatch am = {0};
    if (fx_act(c, cur, true, -1, st, &am, out)) {
        for (int k = 0; k < am.n; k++) fx_add(m, am.nodes[k]);
        return 1;
    }
    int j = fx_only(c, cur);
    if (j < 0) return 0;
    if (epilogue && bn_steps(c, j, cur, fr, st)) {
        fx_add(m, j);
        *out = c->g->nodes[j].out[0];
        return 2;
    }
    /* An epilogue takes a tensor operand only as a residual Add. */
    bool tensors = !epilogue || fx_is(c, j, "Add");
    if (!bin_step(c, j, cur, input, fr, tensors, st)) return 0;
    fx_add(m, j);
    *out = c->g->nodes[j].out[0];
    return 1;
}

static ait_status epilogues(fctx *c, ait_error *e)
{
    for (int i = 0; i < c->g->n_nodes; i++) {
        frame fr;
        if (!producer(c, i, &fr)) continue;
        fusion f = {.kind = FK_EPILOGUE, .node = i, .in = c->g->nodes[i].out[0], .ln_scale = -1,
                    .ln_bias = -1};
        fmatch m = {0};
        int cur = f.in;
        for (;;) {
            if (f.n_steps + 2 > FUSE_MAX_STEPS || m.n + 12 > FUSE_MAX_NODES) break;
            int got = next_steps(c, cur, -1, &fr, true, &f.steps[f.n_steps], &m, &cur);
            if (!got) break;
            f.n_steps += got;
        }
        if (!f.n_steps) continue;
        f.out = cur;
        f.axis = fr.axis;
        f.channels = fr.C;
        ait_status s = fx_fixed(&f) ? fx_record(c, &f, &m, e)
                                    : err_set(e, AIT_E_NOMEM, "out of memory");
        if (s != AIT_OK) {
            steps_free(f.steps, f.n_steps);
            fx_fixed_free(&f.fixed);
            return s;
        }
    }
    return AIT_OK;
}

/* ---- element-wise chains ---- */

/* The first step of a chain at node i over x (x not absorbed). */
static bool chain_first(const fctx *c, int i, int x, frame *fr, fuse_step *st, fmatch *m,
                        int *out)
{
    fmatch am = {0};
    if (fx_act(c, x, false, i, st, &am, out)) {
        for (int k = 0; k < am.n; k++) fx_add(m, am.nodes[k]);
        return true;
    }
    if (!bin_step(c, i, x, -1, fr, true, st)) return false;
    fx_add(m, i);
    *out = c->g->nodes[i].out[0];
    return true;
}

static ait_status chains(fctx *c, ait_error *e)
{
    for (int i = 0; i < c->g->n_nodes; i++) {
        const node *n = &c->g->nodes[i];
        if (c->taken[i] || n->dead || n->n_in < 1) continue;
        for (int side = 0; side < n->n_in && side < 2 && !c->taken[i]; side++) {
            int x = n->in[side];
            if (x < 0 || c->g->vals[x].konst) continue;
            tensor tmp;
            const tensor *xs = fx_shape(c, x, &tmp);
            if (!xs || xs->dtype != AIT_F32) continue; /* float32 only, so known */
            frame fr = {.R = xs->rank, .axis = -2, .known = true};
            memcpy(fr.dims, xs->dims, sizeof fr.dims);
            fusion f = {.kind = FK_CHAIN, .in = x, .ln_scale = -1, .ln_bias = -1};
            fmatch m = {0};
            int cur;
            if (!chain_first(c, i, x, &fr, &f.steps[0], &m, &cur)) continue;
            f.n_steps = 1;
            for (;;) {
                if (f.n_steps + 2 > FUSE_MAX_STEPS || m.n + 12 > FUSE_MAX_NODES) break;
                int got = next_steps(c, cur, x, &fr, false, &f.steps[f.n_steps], &m, &cur);
                if (!got) break;
                f.n_steps += got;
            }
            if (m.n < 2) { /* one node is no chain */
                steps_free(f.steps, f.n_steps);
                continue;
            }
            f.out = cur;
            f.axis = fr.axis < -1 ? 0 : fr.axis;
            f.channels = fr.C;
            ait_status s = fx_record(c, &f, &m, e);
            if (s != AIT_OK) {
                steps_free(f.steps, f.n_steps);
                return s;
            }
        }
    }
    return AIT_OK;
}

/* ---- the set ---- */

static ait_status index_readers(fctx *c, ait_error *e)
{
    const graph *g = c->g;
    c->uses = calloc((size_t)g->n_vals + 1, sizeof *c->uses);
    c->coff = calloc((size_t)g->n_vals + 2, sizeof *c->coff);
    c->out = calloc((size_t)g->n_vals + 1, sizeof *c->out);
    c->taken = calloc((size_t)g->n_nodes + 1, sizeof *c->taken);
    if (!c->uses || !c->coff || !c->out || !c->taken)
        return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int j = 0; j < g->n_outputs; j++)
        if (g->outputs[j] >= 0) c->out[g->outputs[j]] = true;
    for (int v = 0; v < g->n_vals; v++) c->out[v] |= g->vals[v].is_output;
    /* Readers by input slot (a node reading v twice is listed twice), and
     * subgraph captures as uses without a listed reader: such a value is
     * never absorbed (readers_in compares the two counts). */
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0) {
                c->uses[n->in[k]]++;
                c->coff[n->in[k] + 1]++;
            }
        bool sub = false;
        for (int a = 0; a < n->n_attr; a++) sub |= n->attrs[a].g != NULL;
        if (!sub) continue;
        int *caps = NULL, nc = 0;
        ait_status s = node_captures(n, &caps, &nc, e);
        if (s != AIT_OK) return s;
        for (int k = 0; k < nc; k++) c->uses[caps[k]]++;
        free(caps);
    }
    for (int v = 0; v < g->n_vals; v++) c->coff[v + 1] += c->coff[v];
    c->cons = malloc((size_t)(c->coff[g->n_vals] + 1) * sizeof *c->cons);
    int *fill = malloc((size_t)(g->n_vals + 1) * sizeof *fill);
    if (!c->cons || !fill) {
        free(fill);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    memcpy(fill, c->coff, (size_t)g->n_vals * sizeof *fill);
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0) c->cons[fill[n->in[k]]++] = i;
    }
    free(fill);
    return AIT_OK;
}

ait_status fuse_find(const graph *g, fuse_shape_fn shape, void *ctx, fusion_set **out,
                     ait_error *e)
{
    *out = NULL;
    fctx c = {.g = g, .shape = shape, .sctx = ctx};
    fusion_set *s = calloc(1, sizeof *s);
    if (!s) return err_set(e, AIT_E_NOMEM, "out of memory");
    c.set = s;
    s->of_node = malloc((size_t)(g->n_nodes + 1) * sizeof *s->of_node);
    ait_status st = s->of_node ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    for (int i = 0; st == AIT_OK && i < g->n_nodes; i++) s->of_node[i] = -1;
    if (st == AIT_OK) st = index_readers(&c, e);
    if (st == AIT_OK) st = fx_attention(&c, e);
    if (st == AIT_OK) st = fx_layernorm(&c, e);
    if (st == AIT_OK) st = fx_rotary(&c, e);
    if (st == AIT_OK) st = epilogues(&c, e);
    if (st == AIT_OK) st = chains(&c, e);
    free(c.uses);
    free(c.coff);
    free(c.cons);
    free(c.out);
    free(c.taken);
    if (st != AIT_OK) {
        fusion_set_free(s);
        return st;
    }
    *out = s;
    return AIT_OK;
}

void fusion_set_free(fusion_set *s)
{
    if (!s) return;
    for (int k = 0; k < s->n; k++) {
        steps_free(s->f[k].steps, s->f[k].n_steps);
        fx_fixed_free(&s->f[k].fixed);
        free(s->f[k].nodes);
    }
    free(s->f);
    free(s->of_node);
    free(s);
}

int fuse_count(const fusion_set *s, fuse_kind k)
{
    int n = 0;
    for (int i = 0; s && i < s->n; i++) n += s->f[i].kind == k;
    return n;
}

const char *fuse_kind_name(fuse_kind k)
{
    static const char *const names[FK_N] = {"epilogue", "chain", "layernorm", "attention", "rotary"};
    return k >= 0 && k < FK_N ? names[k] : "?";
}

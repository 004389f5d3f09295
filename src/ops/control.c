/* Control flow and constants: Constant, If. */
#include <string.h>

#include "ops/op.h"
#include "runtime/exec.h"

#define MAX_LOOP_IO 64

/* Constant: exactly one of value, value_float(s), value_int(s). */
static ait_status constant_infer(op_ctx *c)
{
    const node *n = c->n;
    const attr *a;
    if ((a = node_attr(n, "value")) && a->t) {
        set_out(c, 0, a->t->dtype, a->t->rank, a->t->dims);
    } else if ((a = node_attr(n, "value_float")) || (a = node_attr(n, "value_int"))) {
        set_out(c, 0, a->type == ATTR_FLOAT ? AIT_F32 : AIT_I64, 0, NULL);
    } else if ((a = node_attr(n, "value_floats")) || (a = node_attr(n, "value_ints"))) {
        int64_t d = a->n;
        set_out(c, 0, a->type == ATTR_FLOATS ? AIT_F32 : AIT_I64, 1, &d);
    } else if (node_attr(n, "sparse_value") || node_attr(n, "value_string") ||
               node_attr(n, "value_strings")) {
        return err_set(c->err, AIT_E_UNSUPPORTED, "sparse and string constants are not supported");
    } else {
        return err_set(c->err, AIT_E_PARSE, "Constant has no value attribute");
    }
    return AIT_OK;
}

static ait_status constant_run(op_ctx *c)
{
    const node *n = c->n;
    const attr *a;
    tensor *o = c->out[0];
    if ((a = node_attr(n, "value")) && a->t) memcpy(o->data, a->t->data, tensor_nbytes(a->t));
    else if ((a = node_attr(n, "value_float"))) ((float *)o->data)[0] = a->f;
    else if ((a = node_attr(n, "value_int"))) ((int64_t *)o->data)[0] = a->i;
    else if ((a = node_attr(n, "value_floats")) && a->n) memcpy(o->data, a->floats, sizeof(float) * (size_t)a->n);
    else if ((a = node_attr(n, "value_ints")) && a->n) memcpy(o->data, a->ints, sizeof(int64_t) * (size_t)a->n);
    return AIT_OK;
}

static ait_status if_infer(op_ctx *c)
{
    const attr *t = node_attr(c->n, "then_branch"), *e = node_attr(c->n, "else_branch");
    if (!t || !t->g || !e || !e->g)
        return err_set(c->err, AIT_E_PARSE, "If needs then_branch and else_branch graphs");
    if (t->g->n_outputs != c->n_out || e->g->n_outputs != c->n_out)
        return err_set(c->err, AIT_E_SHAPE, "If branches have %d and %d outputs, the node %d",
                       t->g->n_outputs, e->g->n_outputs, c->n_out);
    return AIT_DEFER; /* outputs are known once a branch has run */
}

static ait_status if_run(op_ctx *c)
{
    TRY(if_infer(c) == AIT_DEFER ? AIT_OK : AIT_E_PARSE);
    const tensor *cond = c->in[0];
    if (tensor_numel(cond) != 1)
        return err_set(c->err, AIT_E_SHAPE, "If condition must hold one element");
    bool take = elem_get_f64(cond->data, cond->dtype, 0) != 0;
    const attr *b = node_attr(c->n, take ? "then_branch" : "else_branch");
    return exec_subgraph(c, b->g, NULL, c->out);
}

/* ---- Loop and Scan ------------------------------------------------------ */

/* Tensors a loop owns for its run: carried state (double-buffered, since a
 * body output may alias its input) and stacked scan outputs. */
typedef struct loop_state {
    int n;
    tensor cur[MAX_LOOP_IO], next[MAX_LOOP_IO];
} loop_state;

static void loop_release(loop_state *st)
{
    for (int i = 0; i < st->n; i++) {
        tensor_release(&st->cur[i]);
        tensor_release(&st->next[i]);
    }
}

/* Appends one iteration's scan slice to acc (grown geometrically); the
 * slices must all have the same shape. */
static ait_status scan_append(op_ctx *c, tensor *acc, int64_t *cap, int64_t iter, const tensor *s)
{
    if (iter == 0) {
        acc->dtype = s->dtype;
        acc->rank = s->rank + 1;
        if (acc->rank > AIT_MAX_RANK) return err_set(c->err, AIT_E_UNSUPPORTED, "scan output rank too high");
        for (int i = 0; i < s->rank; i++) acc->dims[i + 1] = s->dims[i];
    } else {
        bool same = acc->dtype == s->dtype && acc->rank == s->rank + 1;
        for (int i = 0; same && i < s->rank; i++) same = acc->dims[i + 1] == s->dims[i];
        if (!same) return err_set(c->err, AIT_E_SHAPE, "scan output changes shape at iteration %lld", (long long)iter);
    }
    size_t slice = tensor_nbytes(s);
    if (iter + 1 > *cap) {
        int64_t ncap = *cap ? *cap * 2 : 8;
        size_t bytes = (size_t)ncap * slice;
        void *p = aligned_zalloc(bytes);
        if (!p) return err_set(c->err, AIT_E_NOMEM, "out of memory");
        if (acc->data) memcpy(p, acc->data, (size_t)iter * slice);
        tensor_release(acc);
        acc->data = p;
        acc->owned = true;
        acc->cap = bytes;
        *cap = ncap;
    }
    memcpy((char *)acc->data + (size_t)iter * slice, s->data, slice);
    acc->dims[0] = iter + 1;
    return AIT_OK;
}

/* Moves a finished tensor into a node output. */
static ait_status give(op_ctx *c, int i, tensor *t)
{
    if (!has_out(c, i)) return AIT_OK;
    tensor *o = c->out[i];
    tensor_set_shape(o, t->dtype, t->rank, t->dims);
    TRY(tensor_alloc(o, c->err));
    if (t->data) memcpy(o->data, t->data, tensor_nbytes(t));
    return AIT_OK;
}

static ait_status loop_infer(op_ctx *c)
{
    const attr *b = node_attr(c->n, "body");
    if (!b || !b->g) return err_set(c->err, AIT_E_PARSE, "Loop needs a body graph");
    int carried = c->n_in - 2;
    if (carried < 0 || carried > MAX_LOOP_IO - 2 || b->g->n_inputs != carried + 2 ||
        b->g->n_outputs < carried + 1)
        return err_set(c->err, AIT_E_SHAPE, "Loop body takes %d inputs and gives %d outputs; the "
                       "node carries %d values", b->g->n_inputs, b->g->n_outputs, carried);
    return AIT_DEFER;
}

static ait_status loop_run(op_ctx *c)
{
    TRY(loop_infer(c) == AIT_DEFER ? AIT_OK : AIT_E_PARSE);
    const graph *body = node_attr(c->n, "body")->g;
    int carried = c->n_in - 2, n_scan = body->n_outputs - 1 - carried;
    int64_t max_trip = INT64_MAX;
    bool cond = true;
    if (has_in(c, 0)) max_trip = elem_get_i64(c->in[0]->data, c->in[0]->dtype, 0);
    if (has_in(c, 1)) cond = elem_get_f64(c->in[1]->data, c->in[1]->dtype, 0) != 0;
    if (!has_in(c, 0) && !has_in(c, 1))
        return err_set(c->err, AIT_E_UNSUPPORTED, "Loop without trip count or condition never ends");
    loop_state st = {.n = carried};
    tensor scans[MAX_LOOP_IO] = {0};
    int64_t caps[MAX_LOOP_IO] = {0};
    ait_status s = AIT_OK;
    for (int k = 0; k < carried && s == AIT_OK; k++) {
        const tensor *v = c->in[2 + k];
        tensor_set_shape(&st.cur[k], v->dtype, v->rank, v->dims);
        s = tensor_alloc(&st.cur[k], c->err);
        if (s == AIT_OK) memcpy(st.cur[k].data, v->data, tensor_nbytes(v));
    }
    int64_t iter = 0, iter_val = 0;
    uint8_t cond_val = 1;
    tensor t_iter = {.dtype = AIT_I64, .rank = 0, .data = &iter_val};
    tensor t_cond = {.dtype = AIT_BOOL, .rank = 0, .data = &cond_val};
    tensor cond_out = {0}, slices[MAX_LOOP_IO] = {0};
    for (; s == AIT_OK && iter < max_trip && cond; iter++) {
        tensor *ins[MAX_LOOP_IO], *outs[MAX_LOOP_IO];
        iter_val = iter;
        cond_val = cond;
        ins[0] = &t_iter;
        ins[1] = &t_cond;
        for (int k = 0; k < carried; k++) ins[2 + k] = &st.cur[k];
        outs[0] = &cond_out;
        for (int k = 0; k < carried; k++) outs[1 + k] = &st.next[k];
        for (int k = 0; k < n_scan; k++) outs[1 + carried + k] = &slices[k];
        s = exec_subgraph(c, body, ins, outs);
        if (s != AIT_OK) break;
        cond = elem_get_f64(cond_out.data, cond_out.dtype, 0) != 0;
        for (int k = 0; k < carried; k++) {
            tensor t = st.cur[k];
            st.cur[k] = st.next[k];
            st.next[k] = t;
        }
        for (int k = 0; k < n_scan && s == AIT_OK; k++)
            s = scan_append(c, &scans[k], &caps[k], iter, &slices[k]);
    }
    for (int k = 0; k < carried && s == AIT_OK; k++) s = give(c, k, &st.cur[k]);
    for (int k = 0; k < n_scan && s == AIT_OK; k++) {
        if (iter == 0) { /* no iteration: an empty stack of the body's declared slice */
            const value *v = &body->vals[body->outputs[1 + carried + k]];
            scans[k].dtype = v->dtype;
            scans[k].rank = v->rank >= 0 ? v->rank + 1 : 1;
            for (int i = 0; i < v->rank; i++) scans[k].dims[i + 1] = v->dims[i] > 0 ? v->dims[i] : 0;
        }
        s = give(c, carried + k, &scans[k]);
    }
    loop_release(&st);
    tensor_release(&cond_out);
    for (int k = 0; k < MAX_LOOP_IO; k++) {
        tensor_release(&slices[k]);
        tensor_release(&scans[k]);
    }
    return s;
}

/* Copies slice `i` of t along `axis` into out (out's storage reused). */
static ait_status take_slice(op_ctx *c, const tensor *t, int axis, int64_t i, tensor *out)
{
    int64_t outer = 1, inner = ait_dtype_size(t->dtype), n = t->dims[axis];
    int r = 0;
    int64_t dims[AIT_MAX_RANK];
    for (int d = 0; d < t->rank; d++) {
        if (d < axis) outer *= t->dims[d];
        if (d > axis) inner *= t->dims[d];
        if (d != axis) dims[r++] = t->dims[d];
    }
    tensor_set_shape(out, t->dtype, r, dims);
    TRY(tensor_alloc(out, c->err));
    for (int64_t o = 0; o < outer; o++)
        memcpy((char *)out->data + o * inner, (const char *)t->data + (o * n + i) * inner, (size_t)inner);
    return AIT_OK;
}

/* Moves a stacked [iters, ...] tensor's axis 0 to `axis`, reversed if asked. */
static ait_status place_scan(op_ctx *c, int oi, const tensor *acc, int axis, bool reverse)
{
    if (!has_out(c, oi)) return AIT_OK;
    tensor *o = c->out[oi];
    int64_t dims[AIT_MAX_RANK], n = acc->dims[0], outer = 1, inner = ait_dtype_size(acc->dtype);
    for (int d = 1, r = 0; d <= acc->rank; d++) {
        if (r == axis) dims[r++] = n;
        if (d < acc->rank) dims[r++] = acc->dims[d];
    }
    for (int d = 1; d < acc->rank; d++) {
        if (d - 1 < axis) outer *= acc->dims[d];
        else inner *= acc->dims[d];
    }
    tensor_set_shape(o, acc->dtype, acc->rank, dims);
    TRY(tensor_alloc(o, c->err));
    for (int64_t i = 0; i < n; i++)
        for (int64_t q = 0; q < outer; q++)
            memcpy((char *)o->data + (q * n + (reverse ? n - 1 - i : i)) * inner,
                   (const char *)acc->data + (i * outer + q) * inner, (size_t)inner);
    return AIT_OK;
}

static ait_status scan_infer(op_ctx *c)
{
    const attr *b = node_attr(c->n, "body");
    if (!b || !b->g) return err_set(c->err, AIT_E_PARSE, "Scan needs a body graph");
    if (c->opset < 9) return err_set(c->err, AIT_E_UNSUPPORTED, "Scan before opset 9 (batched form)");
    int m = (int)attr_int(c->n, "num_scan_inputs", -1), nstate = c->n_in - m;
    if (m < 1 || nstate < 0 || c->n_in > MAX_LOOP_IO || b->g->n_inputs != c->n_in ||
        b->g->n_outputs != c->n_out || c->n_out < nstate)
        return err_set(c->err, AIT_E_SHAPE, "Scan body does not match the node's inputs and outputs");
    return AIT_DEFER;
}

static ait_status scan_run(op_ctx *c)
{
    TRY(scan_infer(c) == AIT_DEFER ? AIT_OK : AIT_E_PARSE);
    const graph *body = node_attr(c->n, "body")->g;
    int m = (int)attr_int(c->n, "num_scan_inputs", 0), nstate = c->n_in - m, k_out = c->n_out - nstate;
    int na, nd, noa, nod;
    const int64_t *in_axes = attr_ints(c->n, "scan_input_axes", &na);
    const int64_t *in_dirs = attr_ints(c->n, "scan_input_directions", &nd);
    const int64_t *out_axes = attr_ints(c->n, "scan_output_axes", &noa);
    const int64_t *out_dirs = attr_ints(c->n, "scan_output_directions", &nod);
    int axis[MAX_LOOP_IO];
    int64_t len = -1;
    for (int j = 0; j < m; j++) {
        const tensor *t = c->in[nstate + j];
        TRY(norm_axis(c, j < na ? in_axes[j] : 0, t->rank, &axis[j]));
        if (len >= 0 && t->dims[axis[j]] != len)
            return err_set(c->err, AIT_E_SHAPE, "Scan inputs have different sequence lengths");
        len = t->dims[axis[j]];
    }
    loop_state st = {.n = nstate};
    tensor slices_in[MAX_LOOP_IO] = {0}, slices_out[MAX_LOOP_IO] = {0}, scans[MAX_LOOP_IO] = {0};
    int64_t caps[MAX_LOOP_IO] = {0};
    ait_status s = AIT_OK;
    for (int k = 0; k < nstate && s == AIT_OK; k++) {
        const tensor *v = c->in[k];
        tensor_set_shape(&st.cur[k], v->dtype, v->rank, v->dims);
        s = tensor_alloc(&st.cur[k], c->err);
        if (s == AIT_OK) memcpy(st.cur[k].data, v->data, tensor_nbytes(v));
    }
    for (int64_t it = 0; s == AIT_OK && it < len; it++) {
        tensor *ins[MAX_LOOP_IO], *outs[MAX_LOOP_IO];
        for (int k = 0; k < nstate; k++) ins[k] = &st.cur[k], outs[k] = &st.next[k];
        for (int j = 0; j < m && s == AIT_OK; j++) {
            bool rev = j < nd && in_dirs[j];
            s = take_slice(c, c->in[nstate + j], axis[j], rev ? len - 1 - it : it, &slices_in[j]);
            ins[nstate + j] = &slices_in[j];
        }
        for (int j = 0; j < k_out; j++) outs[nstate + j] = &slices_out[j];
        if (s == AIT_OK) s = exec_subgraph(c, body, ins, outs);
        for (int k = 0; k < nstate; k++) {
            tensor t = st.cur[k];
            st.cur[k] = st.next[k];
            st.next[k] = t;
        }
        for (int j = 0; j < k_out && s == AIT_OK; j++) s = scan_append(c, &scans[j], &caps[j], it, &slices_out[j]);
    }
    for (int k = 0; k < nstate && s == AIT_OK; k++) s = give(c, k, &st.cur[k]);
    for (int j = 0; j < k_out && s == AIT_OK; j++) {
        int ax;
        if (len <= 0) {
            s = err_set(c->err, AIT_E_UNSUPPORTED, "Scan over an empty sequence");
            break;
        }
        s = norm_axis(c, j < noa ? out_axes[j] : 0, scans[j].rank, &ax);
        if (s == AIT_OK) s = place_scan(c, nstate + j, &scans[j], ax, j < nod && out_dirs[j]);
    }
    loop_release(&st);
    for (int j = 0; j < MAX_LOOP_IO; j++) {
        tensor_release(&slices_in[j]);
        tensor_release(&slices_out[j]);
        tensor_release(&scans[j]);
    }
    return s;
}

OP_TABLE(control,
         {"Constant", 0, 0, 1, 1, 0, constant_infer, constant_run},
         {"If", 1, 1, 1, 512, OP_ALLOCS_OUTPUTS, if_infer, if_run},
         {"Loop", 2, MAX_LOOP_IO, 1, MAX_LOOP_IO, OP_ALLOCS_OUTPUTS, loop_infer, loop_run},
         {"Scan", 1, MAX_LOOP_IO, 1, MAX_LOOP_IO, OP_ALLOCS_OUTPUTS, scan_infer, scan_run});

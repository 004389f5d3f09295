/* Control flow and constants: Constant, If. */
#include <string.h>

#include "ops/op.h"

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
    } else if ((a = node_attr(n, "value_string"))) {
        set_out(c, 0, AIT_STRING, 0, NULL);
    } else if ((a = node_attr(n, "value_strings"))) {
        int64_t d = a->n;
        set_out(c, 0, AIT_STRING, 1, &d);
    } else if (node_attr(n, "sparse_value")) {
        return err_set(c->err, AIT_E_UNSUPPORTED, "sparse constants are not supported");
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
    if ((a = node_attr(n, "value")) && a->t)
        return elems_copy(o->data, a->t->data, tensor_numel(a->t), a->t->dtype, c->err);
    if ((a = node_attr(n, "value_string")) && a->s)
        return tensor_set_str(o, 0, a->s, strlen(a->s), c->err);
    if ((a = node_attr(n, "value_strings")))
        for (int i = 0; i < a->n; i++)
            TRY(tensor_set_str(o, i, a->strings[i], strlen(a->strings[i]), c->err));
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
    return op_subgraph(c, b->g, NULL, c->out);
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
        if (acc->data && acc->dtype == AIT_STRING) /* its strings moved to p */
            memset(acc->data, 0, (size_t)iter * slice);
        tensor_release(acc);
        acc->data = p;
        acc->owned = true;
        acc->cap = bytes;
        *cap = ncap;
    }
    TRY(elems_copy((char *)acc->data + (size_t)iter * slice, s->data, tensor_numel(s), s->dtype,
                   c->err));
    acc->dims[0] = iter + 1;
    return AIT_OK;
}

/* Moves a finished tensor into a node output. */
static ait_status give(op_ctx *c, int i, tensor *t)
{
    return has_out(c, i) ? tensor_copy_into(c->out[i], t, c->err) : AIT_OK;
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
    for (int k = 2; k < c->n_in; k++)
        if (!has_in(c, k)) return err_set(c->err, AIT_E_INVALID_ARG, "loop-carried input %d is empty", k);
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
        s = tensor_copy_into(&st.cur[k], c->in[2 + k], c->err);
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
        s = op_subgraph(c, body, ins, outs);
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
    int64_t outer = 1, inner = 1, n = t->dims[axis];
    int r = 0;
    int64_t dims[AIT_MAX_RANK] = {0};
    for (int d = 0; d < t->rank; d++) {
        if (d < axis) outer *= t->dims[d];
        if (d > axis) inner *= t->dims[d];
        if (d != axis) dims[r++] = t->dims[d];
    }
    tensor_set_shape(out, t->dtype, r, dims);
    TRY(tensor_alloc(out, c->err));
    size_t es = ait_dtype_size(t->dtype);
    for (int64_t o = 0; o < outer; o++)
        TRY(elems_copy((char *)out->data + o * inner * es,
                       (const char *)t->data + (o * n + i) * inner * es, inner, t->dtype, c->err));
    return AIT_OK;
}

/* Moves a stacked [iters, ...] tensor's axis 0 to `axis`, reversed if asked. */
static ait_status place_scan(op_ctx *c, int oi, const tensor *acc, int axis, bool reverse)
{
    if (!has_out(c, oi)) return AIT_OK;
    tensor *o = c->out[oi];
    int64_t dims[AIT_MAX_RANK], n = acc->dims[0], outer = 1, inner = 1;
    size_t es = ait_dtype_size(acc->dtype);
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
            TRY(elems_copy((char *)o->data + (q * n + (reverse ? n - 1 - i : i)) * inner * es,
                           (const char *)acc->data + (i * outer + q) * inner * es, inner,
                           acc->dtype, c->err));
    return AIT_OK;
}

static ait_status scan_infer(op_ctx *c)
{
    const attr *b = node_attr(c->n, "body");
    if (!b || !b->g) return err_set(c->err, AIT_E_PARSE, "Scan needs a body graph");
    int first = c->n->version < 9; /* Scan-8 starts with sequence_lens */
    int m = (int)attr_int(c->n, "num_scan_inputs", -1), nstate = c->n_in - first - m;
    if (m < 1 || nstate < 0 || c->n_in > MAX_LOOP_IO || b->g->n_inputs != c->n_in - first ||
        b->g->n_outputs != c->n_out || c->n_out < nstate)
        return err_set(c->err, AIT_E_SHAPE, "Scan body does not match the node's inputs and outputs");
    for (int k = first; k < c->n_in; k++)
        if (!has_in(c, k)) return err_set(c->err, AIT_E_INVALID_ARG, "Scan input %d is empty", k);
    return AIT_DEFER;
}

/* One scan: runs the body over `len` slices. Fills final states (owned) and
 * the scan outputs stacked along a new axis 0 in iteration order. */
typedef struct scan_job {
    int nstate, m, k_out;
    const tensor *state[MAX_LOOP_IO], *xs[MAX_LOOP_IO];
    int axis[MAX_LOOP_IO];
    bool rev[MAX_LOOP_IO];
    tensor final[MAX_LOOP_IO], stacked[MAX_LOOP_IO];
} scan_job;

static ait_status scan_core(op_ctx *c, const graph *body, scan_job *j)
{
    int64_t len = -1;
    for (int i = 0; i < j->m; i++) {
        const tensor *t = j->xs[i];
        if (len >= 0 && t->dims[j->axis[i]] != len)
            return err_set(c->err, AIT_E_SHAPE, "Scan inputs have different sequence lengths");
        len = t->dims[j->axis[i]];
    }
    if (len <= 0) return err_set(c->err, AIT_E_UNSUPPORTED, "Scan over an empty sequence");
    loop_state st = {.n = j->nstate};
    tensor slices_in[MAX_LOOP_IO] = {0}, slices_out[MAX_LOOP_IO] = {0};
    int64_t caps[MAX_LOOP_IO] = {0};
    ait_status s = AIT_OK;
    for (int k = 0; k < j->nstate && s == AIT_OK; k++) {
        s = tensor_copy_into(&st.cur[k], j->state[k], c->err);
    }
    for (int64_t it = 0; s == AIT_OK && it < len; it++) {
        tensor *ins[MAX_LOOP_IO], *outs[MAX_LOOP_IO];
        for (int k = 0; k < j->nstate; k++) ins[k] = &st.cur[k], outs[k] = &st.next[k];
        for (int i = 0; i < j->m && s == AIT_OK; i++) {
            s = take_slice(c, j->xs[i], j->axis[i], j->rev[i] ? len - 1 - it : it, &slices_in[i]);
            ins[j->nstate + i] = &slices_in[i];
        }
        for (int i = 0; i < j->k_out; i++) outs[j->nstate + i] = &slices_out[i];
        if (s == AIT_OK) s = op_subgraph(c, body, ins, outs);
        for (int k = 0; k < j->nstate; k++) {
            tensor t = st.cur[k];
            st.cur[k] = st.next[k];
            st.next[k] = t;
        }
        for (int i = 0; i < j->k_out && s == AIT_OK; i++)
            s = scan_append(c, &j->stacked[i], &caps[i], it, &slices_out[i]);
    }
    for (int k = 0; k < j->nstate; k++) { /* hand the states over */
        j->final[k] = st.cur[k];
        memset(&st.cur[k], 0, sizeof st.cur[k]);
    }
    loop_release(&st);
    for (int i = 0; i < MAX_LOOP_IO; i++) {
        tensor_release(&slices_in[i]);
        tensor_release(&slices_out[i]);
    }
    return s;
}

static void job_release(scan_job *j)
{
    for (int i = 0; i < MAX_LOOP_IO; i++) {
        tensor_release(&j->final[i]);
        tensor_release(&j->stacked[i]);
    }
}

/* Scan 9+: scan axes and directions per input and output. */
static ait_status scan9_run(op_ctx *c, const graph *body, scan_job *j)
{
    int na, nd, noa, nod;
    const int64_t *in_axes = attr_ints(c->n, "scan_input_axes", &na);
    const int64_t *in_dirs = attr_ints(c->n, "scan_input_directions", &nd);
    const int64_t *out_axes = attr_ints(c->n, "scan_output_axes", &noa);
    const int64_t *out_dirs = attr_ints(c->n, "scan_output_directions", &nod);
    for (int i = 0; i < j->m; i++) {
        j->xs[i] = c->in[j->nstate + i];
        j->rev[i] = i < nd && in_dirs[i];
        TRY(norm_axis(c, i < na ? in_axes[i] : 0, j->xs[i]->rank, &j->axis[i]));
    }
    for (int k = 0; k < j->nstate; k++) j->state[k] = c->in[k];
    TRY(scan_core(c, body, j));
    for (int k = 0; k < j->nstate; k++) TRY(give(c, k, &j->final[k]));
    for (int i = 0; i < j->k_out; i++) {
        int ax;
        TRY(norm_axis(c, i < noa ? out_axes[i] : 0, j->stacked[i].rank, &ax));
        TRY(place_scan(c, j->nstate + i, &j->stacked[i], ax, i < nod && out_dirs[i]));
    }
    return AIT_OK;
}

/* Scan 8: inputs carry a batch axis 0 (scan axis 1); run one scan per batch
 * item and stack the results along the batch. */
static ait_status scan8_run(op_ctx *c, const graph *body, scan_job *j)
{
    int nd;
    const int64_t *dirs = attr_ints(c->n, "directions", &nd);
    const tensor *first = c->in[1 + j->nstate];
    int64_t batch = first->rank ? first->dims[0] : 0, len = first->rank > 1 ? first->dims[1] : 0;
    if (has_in(c, 0))
        for (int64_t b = 0; b < tensor_numel(c->in[0]); b++)
            if (elem_get_i64(c->in[0]->data, c->in[0]->dtype, b) != len)
                return err_set(c->err, AIT_E_UNSUPPORTED, "Scan-8 with sequence_lens shorter than "
                               "the sequence axis is not supported");
    tensor sl[MAX_LOOP_IO] = {0}, acc[MAX_LOOP_IO] = {0};
    int64_t caps[MAX_LOOP_IO] = {0};
    int n_res = j->nstate + j->k_out;
    ait_status s = AIT_OK;
    for (int64_t b = 0; s == AIT_OK && b < batch; b++) {
        for (int k = 0; k < j->nstate + j->m && s == AIT_OK; k++) {
            const tensor *t = c->in[1 + k];
            if (t->rank < 1 || t->dims[0] != batch) {
                s = err_set(c->err, AIT_E_SHAPE, "Scan-8 input %d has no batch axis of %lld",
                            1 + k, (long long)batch);
                break;
            }
            s = take_slice(c, t, 0, b, &sl[k]);
            if (k < j->nstate) j->state[k] = &sl[k];
            else {
                int i = k - j->nstate;
                j->xs[i] = &sl[k];
                j->axis[i] = 0;
                j->rev[i] = i < nd && dirs[i];
            }
        }
        if (s == AIT_OK) s = scan_core(c, body, j);
        for (int r = 0; r < n_res && s == AIT_OK; r++)
            s = scan_append(c, &acc[r], &caps[r], b, r < j->nstate ? &j->final[r] : &j->stacked[r - j->nstate]);
        job_release(j);
        memset(j->final, 0, sizeof j->final);
        memset(j->stacked, 0, sizeof j->stacked);
    }
    for (int r = 0; r < n_res && s == AIT_OK; r++) s = give(c, r, &acc[r]);
    for (int i = 0; i < MAX_LOOP_IO; i++) {
        tensor_release(&sl[i]);
        tensor_release(&acc[i]);
    }
    return s;
}

static ait_status scan_run(op_ctx *c)
{
    TRY(scan_infer(c) == AIT_DEFER ? AIT_OK : AIT_E_PARSE);
    const graph *body = node_attr(c->n, "body")->g;
    int first = c->n->version < 9;
    scan_job *j = op_scratch(c, sizeof *j);
    if (!j) return c->err->code;
    memset(j, 0, sizeof *j);
    j->m = (int)attr_int(c->n, "num_scan_inputs", 0);
    j->nstate = c->n_in - first - j->m;
    j->k_out = c->n_out - j->nstate;
    ait_status s = first ? scan8_run(c, body, j) : scan9_run(c, body, j);
    job_release(j);
    return s;
}

OP_TABLE(control,
         {"Constant", 0, 0, 1, 1, OP_STR_OWNS, constant_infer, constant_run},
         {"If", 1, 1, 1, 512, OP_ALLOCS_OUTPUTS | OP_TAKES_SEQUENCES | OP_STR_OWNS, if_infer, if_run},
         {"Loop", 2, MAX_LOOP_IO, 1, MAX_LOOP_IO,
          OP_ALLOCS_OUTPUTS | OP_TAKES_SEQUENCES | OP_LEADING_OPTIONAL | OP_STR_OWNS, loop_infer,
          loop_run},
         {"Scan", 1, MAX_LOOP_IO, 1, MAX_LOOP_IO,
          OP_ALLOCS_OUTPUTS | OP_LEADING_OPTIONAL | OP_STR_OWNS, scan_infer, scan_run});

/* Control flow and constants: Constant, If. */
#include <string.h>

#include "ops/op.h"
#include "runtime/exec.h"

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
    return exec_subgraph(c, b->g, c->out);
}

OP_TABLE(control,
         {"Constant", 0, 0, 1, 1, 0, constant_infer, constant_run},
         {"If", 1, 1, 1, 512, OP_ALLOCS_OUTPUTS, if_infer, if_run});

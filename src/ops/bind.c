#include "ops/bind.h"

#include <limits.h>
#include <string.h>

#include "ops/op.h"

/* Resolves the op version n runs (node.version) and refuses one ait does not
 * implement: a newer version may mean something else, so it is never run
 * with an older one's meaning. ai.onnx.ml nodes resolve against the model's
 * ml opset; preview.training nodes run their newest (and only) version. */
static ait_status bind_version(const graph *g, node *n, int ml_opset, ait_error *e)
{
    const op_versions *v = op_versions_find(n->domain, n->op);
    if (!v)
        return err_set(e, AIT_E_INTERNAL, "%s: node '%s': op '%s' has no row in the op version "
                       "table (src/ops/versions.c)", g->path, n->name, n->op);
    bool ml = strcmp(n->domain, ONNX_ML_DOMAIN) == 0;
    if (ml && !ml_opset)
        return err_set(e, AIT_E_PARSE, "%s: node '%s': op '%s' is of domain '%s', which the model "
                       "does not import", g->path, n->name, n->op, n->domain);
    int opset = onnx_domain_default(n->domain) ? g->opset : ml ? ml_opset : INT_MAX;
    if (v->removed && opset >= v->removed)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: node '%s': op '%s' was deprecated (removed) in "
                       "%s opset %d; the model imports opset %d", g->path, n->name, n->op,
                       ml ? ONNX_ML_DOMAIN : "ai.onnx", v->removed, opset);
    n->version = op_version_resolve(v, opset);
    if (!n->version)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: node '%s': op '%s' does not exist in opset %d "
                       "(it was added in opset %d)", g->path, n->name, n->op, opset, v->since[0]);
    int upto = op_version_upto(v);
    if (n->version > upto)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: node '%s': op '%s' version %d (opset %d) is not "
                       "implemented; ait implements %s up to version %d", g->path, n->name, n->op,
                       n->version, opset, n->op, upto);
    return AIT_OK;
}

static ait_status bind_node(graph *g, node *n, int ml_opset, ait_error *e)
{
    const op_def *d = n->def = op_find(n->domain, n->op);
    if (!d) {
        if (!onnx_domain_default(n->domain))
            return err_set(e, AIT_E_UNSUPPORTED, "%s: node '%s': op '%s' of domain '%s' is not "
                           "supported", g->path, n->name, n->op, n->domain);
        return err_set(e, AIT_E_UNSUPPORTED, "%s: node '%s': op '%s' is not supported", g->path,
                       n->name, n->op);
    }
    TRY(bind_version(g, n, ml_opset, e));
    if (n->n_in < d->min_in || n->n_in > d->max_in || n->n_out < d->min_out ||
        n->n_out > d->max_out)
        return err_set(e, AIT_E_PARSE, "%s: node '%s' (%s) has %d inputs and %d outputs; the op "
                       "takes %d..%d inputs and %d..%d outputs", g->path, n->name, n->op, n->n_in,
                       n->n_out, d->min_in, d->max_in, d->min_out, d->max_out);
    for (int i = 0; i < n->n_in; i++) {
        bool may_omit = (d->flags & OP_LEADING_OPTIONAL) ||
                        (i >= d->min_in && !(d->flags & OP_VARIADIC));
        if (n->in[i] < 0 && !may_omit)
            return err_set(e, AIT_E_PARSE, "%s: node '%s' (%s): input %d is required but empty",
                           g->path, n->name, n->op, i);
    }
    return AIT_OK;
}

static ait_status bind_graph(graph *g, int opset, int ml_opset, ait_error *e)
{
    g->opset = opset;
    for (int i = 0; i < g->n_nodes; i++) {
        node *n = &g->nodes[i];
        TRY(bind_node(g, n, ml_opset, e));
        for (int k = 0; k < n->n_attr; k++)
            if (n->attrs[k].type == ATTR_GRAPH && n->attrs[k].g)
                TRY(bind_graph(n->attrs[k].g, opset, ml_opset, e));
    }
    return AIT_OK;
}

ait_status ops_bind(graph *g, int ml_opset, ait_error *e)
{
    if (ml_opset && (ml_opset < ML_OPSET_MIN || ml_opset > ML_OPSET_MAX))
        return err_set(e, AIT_E_UNSUPPORTED, "%s: ai.onnx.ml opset %d is not supported (%d to %d)",
                       g->path, ml_opset, ML_OPSET_MIN, ML_OPSET_MAX);
    int opset = g->opset ? g->opset : OPSET_MAX;
    if (opset < OPSET_MIN || opset > OPSET_MAX)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: default-domain opset %d is not supported (%d to "
                       "%d)", g->path, opset, OPSET_MIN, OPSET_MAX);
    return bind_graph(g, opset, ml_opset, e);
}

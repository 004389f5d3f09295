/* Loading a model (ait_model_load and friends): the ONNX reader's graph,
 * bound to the ops and constant-folded; an artifact goes to api/artifact.c. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/fold.h"
#include "io/artifact.h"
#include "io/file.h"
#include "io/onnx.h"
#include "ops/bind.h"
#include "api/model_load.h"
#include "runtime/model.h"
#include "runtime/plan.h"

/* Before the fold of a model whose weights are borrowed (onnx_read): the
 * borrowed constants a fold may read copied (tensor_own), so that no op
 * reads a weight at the alignment the file gave it. Those are the inputs of
 * nodes whose inputs are all constants, shapes (Shape and Size read only
 * their input's shape: a schedule folds them) or such nodes' outputs (more
 * than a fold takes: it also needs the op to fold), and every one in a
 * model with subgraphs (they read the outer graph's). The rest stay
 * borrowed until the load settles them (api/artifact.c). */
static ait_status own_fold_inputs(graph *g, ait_error *e)
{
    bool sub = false;
    for (int i = 0; i < g->n_nodes && !sub; i++)
        for (int a = 0; a < g->nodes[i].n_attr; a++) sub |= g->nodes[i].attrs[a].g != NULL;
    bool *maybe = calloc((size_t)g->n_vals + 1, sizeof *maybe); /* a constant, or may fold */
    if (!maybe) return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int v = 0; v < g->n_vals; v++) maybe[v] = g->vals[v].konst != NULL;
    ait_status s = AIT_OK;
    for (int i = 0; i < g->n_nodes && s == AIT_OK; i++) {
        const node *n = &g->nodes[i];
        bool all = true;
        bool shape = (!strcmp(n->op, "Shape") || !strcmp(n->op, "Size")) && !n->domain[0];
        for (int k = 0; k < n->n_in && !shape; k++) all &= n->in[k] < 0 || maybe[n->in[k]];
        for (int k = 0; all && k < n->n_out; k++)
            if (n->out[k] >= 0) maybe[n->out[k]] = true;
        for (int k = 0; all && k < n->n_in && s == AIT_OK; k++)
            if (n->in[k] >= 0 && g->vals[n->in[k]].konst) s = tensor_own(g->vals[n->in[k]].konst, e);
    }
    for (int v = 0; sub && v < g->n_vals && s == AIT_OK; v++)
        if (g->vals[v].konst) s = tensor_own(g->vals[v].konst, e);
    free(maybe);
    return s;
}

/* Builds a model from a serialised ModelProto. `name` names it in messages;
 * `dir` is the real folder for external data (NULL: refuse external data);
 * absent_ok: an artifact's lean model; borrow: its big weights point into
 * buf (onnx_read), which must outlive them. */
static ait_status model_from_buffer(const uint8_t *buf, size_t len, const char *name,
                                    const char *dir, bool absent_ok, bool borrow,
                                    ait_model **out, ait_error *e)
{
    ait_model *m = calloc(1, sizeof *m);
    if (!m) return err_set(e, AIT_E_NOMEM, "out of memory");
    ait_status s = AIT_OK;
    m->path = strdup(name);
    m->dir = dir ? strdup(dir) : NULL;
    if (!m->path || (dir && !m->dir)) s = err_set(e, AIT_E_NOMEM, "out of memory");
    onnx_model om;
    if (s == AIT_OK) s = onnx_read(buf, len, m->path, m->dir, absent_ok, borrow, &om, e);
    if (s == AIT_OK) {
        m->g = om.g;
        m->producer = om.producer;
        m->ir_version = om.ir_version;
        m->n_external = om.n_external;
        m->n_absent = om.n_absent;
        m->released = om.n_absent > 0;
        s = ops_bind(m->g, om.ml_opset, e);
        m->opset = m->g->opset;
    }
    if (s == AIT_OK && borrow) s = own_fold_inputs(m->g, e);
    if (s == AIT_OK) s = graph_fold_constants(m->g, e);
    if (s != AIT_OK) {
        ait_model_free(m);
        return s;
    }
    *out = m;
    return AIT_OK;
}

ait_status ait_model_load(const char *path, ait_model **out, ait_error *err)
{
    ait_error scratch;
    ait_error *e = err ? err : &scratch;
    if (out) *out = NULL;
    if (!path || !out) return err_set(e, AIT_E_INVALID_ARG, "ait_model_load: NULL argument");
    if (artifact_file_is(path)) { /* kept: a model loaded so may be inspected or tuned */
        ait_artifact_options ao = {.size = sizeof ao, .keep_weights = 1};
        return ait_artifact_load(path, &ao, out, e);
    }
    /* External data is looked up beside the model: resolve its real folder. */
    char tmp[PATH_MAX], real[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    char *slash = strrchr(tmp, '/');
    if (slash) *slash = 0;
    const char *d = slash ? (tmp[0] ? tmp : "/") : ".";
    uint8_t *buf;
    size_t len;
    TRY(file_read_all(path, ONNX_MAX_MODEL_BYTES, &buf, &len, e));
    ait_status s = AIT_OK;
    if (!realpath(d, real))
        s = err_set(e, AIT_E_IO, "%s: cannot resolve its folder: %s", path, strerror(errno));
    else
        s = model_from_buffer(buf, len, path, real, false, false, out, e);
    free(buf);
    return s;
}

ait_status ait_model_load_memory(const void *data, size_t len, const char *name, ait_model **out,
                                 ait_error *err)
{
    ait_error scratch;
    ait_error *e = err ? err : &scratch;
    if (out) *out = NULL;
    if ((!data && len) || !out)
        return err_set(e, AIT_E_INVALID_ARG, "ait_model_load_memory: NULL argument");
    return model_from_buffer(data, len, name ? name : "<memory>", NULL, false, false, out, e);
}

ait_status model_load_embedded(const uint8_t *data, size_t len, const char *name, bool lean,
                               ait_model **out, ait_error *e)
{
    *out = NULL;
    return model_from_buffer(data, len, name, NULL, lean, true, out, e);
}

void ait_model_free(ait_model *m)
{
    if (!m) return;
    graph_free(m->g);
    free(m->path);
    free(m->dir);
    free(m->producer);
    plan_free(m->plan);
    artifact_close(m->art);
    free(m->note);
    free(m);
}

int ait_model_input_count(const ait_model *m) { return m ? m->g->n_inputs : 0; }
int ait_model_output_count(const ait_model *m) { return m ? m->g->n_outputs : 0; }
int ait_model_node_count(const ait_model *m) { return m ? m->g->n_nodes : 0; }
int ait_model_opset(const ait_model *m) { return m ? m->opset : 0; }
int ait_model_is_tuned(const ait_model *m) { return m && m->plan; }
const char *ait_model_note(const ait_model *m) { return m && m->note ? m->note : ""; }

static ait_status value_info(const ait_model *m, int id, ait_value_info *out)
{
    const value *v = &m->g->vals[id];
    memset(out, 0, sizeof *out);
    out->name = v->name;
    out->dtype = v->dtype;
    out->rank = v->rank;
    for (int i = 0; i < v->rank && i < AIT_MAX_RANK; i++) {
        out->dims[i] = v->dims[i];
        out->sym[i] = v->sym[i];
    }
    return AIT_OK;
}

ait_status ait_model_input(const ait_model *m, int i, ait_value_info *out)
{
    if (!m || !out || i < 0 || i >= m->g->n_inputs) return AIT_E_INVALID_ARG;
    return value_info(m, m->g->inputs[i], out);
}

ait_status ait_model_output(const ait_model *m, int i, ait_value_info *out)
{
    if (!m || !out || i < 0 || i >= m->g->n_outputs) return AIT_E_INVALID_ARG;
    return value_info(m, m->g->outputs[i], out);
}

/* The public model and session API. */
#include <stdlib.h>
#include <string.h>

#include "io/model.h"
#include "runtime/exec.h"
#include "runtime/plan_exec.h"

struct ait_session {
    const ait_model *m;
    exec *x;         /* an untuned model's executor, or */
    plan_exec *px;   /* a tuned model's plan runner */
    int threads;
    ait_error err;
};

int ait_model_input_count(const ait_model *m) { return m ? m->g->n_inputs : 0; }
int ait_model_output_count(const ait_model *m) { return m ? m->g->n_outputs : 0; }
int ait_model_node_count(const ait_model *m) { return m ? m->g->n_nodes : 0; }
int ait_model_opset(const ait_model *m) { return m ? m->opset : 0; }

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

ait_status ait_session_create(const ait_model *m, const ait_session_options *opts,
                              ait_session **out, ait_error *err)
{
    if (out) *out = NULL;
    if (!m || !out) return err_set(err, AIT_E_INVALID_ARG, "ait_session_create: NULL argument");
    ait_session *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, AIT_E_NOMEM, "out of memory");
    s->m = m;
    s->threads = opts && opts->threads > 0 ? opts->threads : 1;
    ait_status st = m->plan ? plan_exec_create(m->g, m->plan, s->threads, &s->px, err)
                            : exec_create(m->g, NULL, s->threads, &s->x, err);
    if (st != AIT_OK) {
        free(s);
        return st;
    }
    *out = s;
    return AIT_OK;
}

void ait_session_free(ait_session *s)
{
    if (!s) return;
    exec_free(s->x);
    plan_exec_free(s->px);
    free(s);
}

const char *ait_session_error(const ait_session *s) { return s ? s->err.msg : ""; }

ait_status ait_session_run(ait_session *s, ait_tensor *const *inputs, int n_inputs,
                           ait_tensor **outputs, int n_outputs)
{
    if (!s) return AIT_E_INVALID_ARG;
    s->err.code = AIT_OK;
    s->err.msg[0] = 0;
    const graph *g = s->m->g;
    if (n_inputs != g->n_inputs || (n_inputs && !inputs))
        return err_set(&s->err, AIT_E_INVALID_ARG, "%s: the model takes %d inputs, %d given",
                       s->m->path, g->n_inputs, n_inputs);
    if (n_outputs != g->n_outputs || !outputs)
        return err_set(&s->err, AIT_E_INVALID_ARG, "%s: the model has %d outputs, room for %d given",
                       s->m->path, g->n_outputs, n_outputs);
    for (int j = 0; j < n_outputs; j++) outputs[j] = NULL;
    tensor *res[512];
    if (n_outputs > 512) return err_set(&s->err, AIT_E_UNSUPPORTED, "more than 512 outputs");
    TRY(s->px ? plan_exec_run(s->px, inputs, res, &s->err) : exec_run(s->x, inputs, res, &s->err));
    for (int j = 0; j < n_outputs; j++) {
        if (tensor_clone(res[j], &outputs[j], &s->err) != AIT_OK) {
            for (int k = 0; k < j; k++) {
                ait_tensor_free(outputs[k]);
                outputs[k] = NULL;
            }
            return s->err.code;
        }
    }
    return AIT_OK;
}

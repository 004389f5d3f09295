/* The public inspection and selection API (include/ait.h) over
 * inspect_run and the selection functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/options.h"
#include "runtime/model.h"
#include "api/inspection.h"
#include "tune/report.h"


static ait_status fail(ait_inspection *h, ait_status s, const char *msg)
{
    h->err.code = s;
    snprintf(h->err.msg, sizeof h->err.msg, "%s", msg);
    return s;
}

ait_status ait_inspect(const ait_model *m, const ait_inspect_options *opts, ait_inspection **out,
                       ait_error *err)
{
    if (!out) return err_set(err, AIT_E_INVALID_ARG, "ait_inspect: out is NULL");
    *out = NULL;
    if (!m) return err_set(err, AIT_E_INVALID_ARG, "ait_inspect: model is NULL");
    if (m->freed_at_load)
        return err_set(err, AIT_E_INVALID_ARG, "%s: the load freed the weights the artifact's "
                       "prepared blobs replace; load it with keep_weights (ait_model_load keeps "
                       "them) to inspect it, or inspect the .onnx", m->path);
    if (__atomic_load_n(&m->released, __ATOMIC_ACQUIRE) && !m->n_absent) /* that: inspect_run's */
        return err_set(err, AIT_E_INVALID_ARG, "%s: a session has freed the weights the artifact's "
                       "prepared blobs replace; inspect the model before creating a session, or "
                       "the .onnx", m->path);
    ait_inspect_options all;
    TRY(OPTS_TAKE(all, opts, err));
    const ait_inspect_options *o = &all;
    logger log = {o->log, o->log_user};
    if (o->n_batch_sizes < 0 || o->n_batch_sizes > 16 || (o->n_batch_sizes && !o->batch_sizes))
        return err_set(err, AIT_E_INVALID_ARG, "%s: 0 to 16 batch sizes, not %d", m->path,
                       o->n_batch_sizes);
    if (o->n_dims < 0 || o->n_dims > 32 || (o->n_dims && (!o->dim_names || !o->dim_values)))
        return err_set(err, AIT_E_INVALID_ARG, "%s: 0 to 32 dim sizes, not %d", m->path, o->n_dims);
    ait_inspection *h = calloc(1, sizeof *h);
    if (!h) return err_set(err, AIT_E_NOMEM, "out of memory");
    h->m = m;
    ait_status s;
    sample_opts so = {.batch = 1, .count = 1, .seed = 1, .n_dims = o->n_dims, .log = log};
    for (int i = 0; i < o->n_dims; i++)
        so.dim_names[i] = o->dim_names[i], so.dim_vals[i] = o->dim_values[i];
    if (o->data_path) s = samples_load(m, o->data_path, o->max_input_bytes, &h->samples, err);
    else if ((s = samples_check_dims(m, &so, err)) == AIT_OK)
        s = samples_generate(m, &so, &h->samples, err);
    if (s == AIT_OK) {
        inspect_opts io = {.samples = h->samples, .n_batch = o->n_batch_sizes, .runs = o->runs,
                           .warmup = o->warmup, .threads = o->threads > 0 ? o->threads : 1,
                           .log = log};
        for (int i = 0; i < o->n_batch_sizes; i++) io.batch[i] = o->batch_sizes[i];
        s = inspect_run(m, &io, &h->r, err);
        if (s != AIT_OK && !o->data_path) samples_explain_defaults(m, &so, NULL, err);
    }
    if (s != AIT_OK) {
        ait_inspection_free(h);
        return s;
    }
    *out = h;
    return AIT_OK;
}

void ait_inspection_free(ait_inspection *h)
{
    if (!h) return;
    selection_clear(&h->sel);
    inspection_free(h->r);
    sample_set_free(h->samples);
    free(h);
}

const char *ait_inspection_error(const ait_inspection *h)
{
    return h ? h->err.msg : "";
}

int ait_inspection_module_count(const ait_inspection *h)
{
    return h ? h->r->tree->n : 0;
}

int ait_inspection_find(const ait_inspection *h, const char *path)
{
    return h && path ? module_find(h->r->tree, path) : -1;
}

int ait_inspection_static_shapes(const ait_inspection *h)
{
    return h ? h->r->static_shapes : 0;
}

static bool bad_module(const ait_inspection *h, int m)
{
    return !h || m < 0 || m >= h->r->tree->n;
}

ait_status ait_inspection_module(const ait_inspection *h, int m, ait_module_info *out)
{
    if (bad_module(h, m) || !out) return AIT_E_INVALID_ARG;
    const module *md = &h->r->tree->mods[m];
    const module_stats *s = &h->r->st[m];
    int n_out = 0;
    for (int k = 0; k < s->n_ports; k++) n_out += s->ports[k].output;
    *out = (ait_module_info){
        .path = md->name, .depth = md->depth, .parent = md->parent, .nodes = s->n_nodes,
        .params = s->params, .param_bytes = s->param_bytes, .flops = s->flops,
        .precisions = s->precisions, .calls = s->calls, .total_sec = s->total_sec,
        .mean_sec = s->mean_sec, .share = s->share, .n_inputs = s->n_ports - n_out,
        .n_outputs = n_out,
    };
    return AIT_OK;
}

ait_status ait_inspection_port(const ait_inspection *h, int m, int port, ait_port_info *out)
{
    if (bad_module(h, m) || !out || port < 0 || port >= h->r->st[m].n_ports)
        return AIT_E_INVALID_ARG;
    const port_spec *p = &h->r->st[m].ports[port];
    *out = (ait_port_info){.locator = p->locator, .name = h->m->g->vals[p->value].name,
                           .is_output = p->output, .dtype = p->dtype, .rank = p->axes.rank};
    for (int d = 0; d < p->axes.rank && d < AIT_MAX_RANK; d++) {
        out->kind[d] = (ait_axis_kind)p->axes.kind[d];
        out->axis_name[d] = p->axes.name[d];
        out->multiple[d] = p->axes.mult[d];
        out->min[d] = p->axes.min[d];
        out->max[d] = p->axes.max[d];
    }
    return AIT_OK;
}

int ait_inspection_decoder(const ait_inspection *h, int *seq_port, int *seq_axis)
{
    if (!h) return 0;
    const phases *ph = &h->r->ph;
    if (seq_port) *seq_port = ph->n_kv ? ph->seq_port : -1;
    if (seq_axis) *seq_axis = ph->n_kv ? ph->seq_axis : -1;
    return ph->n_kv;
}

ait_status ait_inspection_kv(const ait_inspection *h, int k, int *past_port, int *present_port,
                             int *axis)
{
    if (!h || k < 0 || k >= h->r->ph.n_kv) return AIT_E_INVALID_ARG;
    const kv_pair *kv = &h->r->ph.kv[k];
    if (past_port) *past_port = kv->past;
    if (present_port) *present_port = kv->present;
    if (axis) *axis = kv->axis;
    return AIT_OK;
}

char *ait_inspection_json(ait_inspection *h)
{
    if (!h) return NULL;
    int *rows = malloc(sizeof *rows * (size_t)h->r->tree->n);
    if (!rows) {
        fail(h, AIT_E_NOMEM, "out of memory");
        return NULL;
    }
    report_filter all = {.max_depth = -1, .module = -1};
    int n = report_rows(h->r, &all, rows, NULL);
    json_w w = {.pretty = true};
    report_json(&w, h->r, &h->sel, rows, n);
    free(rows);
    return json_finish(&w, &h->err);
}

ait_status ait_select_path(ait_inspection *h, const char *pattern, const char *strategy)
{
    if (!h) return AIT_E_INVALID_ARG;
    return select_path(&h->sel, h->r->tree, pattern, strategy, &h->err);
}

ait_status ait_select_by_share(ait_inspection *h, int depth, double min_share, int top,
                               const char *strategy)
{
    if (!h) return AIT_E_INVALID_ARG;
    return select_by_share(&h->sel, h->r, depth, min_share, top, strategy, &h->err);
}

int ait_selection_count(const ait_inspection *h)
{
    return h ? h->sel.n : 0;
}

ait_status ait_selection_item(const ait_inspection *h, int i, int *module, const char **strategy)
{
    if (!h || i < 0 || i >= h->sel.n) return AIT_E_INVALID_ARG;
    if (module) *module = h->sel.items[i].module;
    if (strategy) *strategy = h->sel.items[i].strategy;
    return AIT_OK;
}

void ait_selection_clear(ait_inspection *h)
{
    if (h) selection_clear(&h->sel);
}

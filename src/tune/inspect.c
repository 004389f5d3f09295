/* Inspection: run the samples at each batch size, time every node, record
 * every module port's shapes, then roll nodes up into modules. */
#include "tune/inspect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/timer.h"
#include "graph/cost.h"
#include "exec/exec.h"
#include "exec/node_costs.h"
#include "tune/buckets.h"

void inspection_free(inspection *r)
{
    if (!r) return;
    for (int i = 0; r->tree && i < r->tree->n; i++) free(r->st[i].ports);
    free(r->st);
    modules_free(r->tree);
    free(r);
}

static ait_status make_ports(const ait_model *m, inspection *r, ait_error *e)
{
    for (int i = 0; i < r->tree->n; i++) {
        int *ins, *outs, n_in, n_out;
        TRY(module_ports(m->g, r->tree, i, &ins, &n_in, &outs, &n_out, e));
        module_stats *st = &r->st[i];
        st->ports = calloc((size_t)(n_in + n_out) + 1, sizeof *st->ports);
        if (!st->ports) {
            free(ins);
            free(outs);
            return err_set(e, AIT_E_NOMEM, "out of memory");
        }
        for (int k = 0; k < n_in + n_out; k++) {
            port_spec *p = &st->ports[k];
            bool o = k >= n_in;
            p->value = o ? outs[k - n_in] : ins[k];
            p->output = o;
            snprintf(p->locator, sizeof p->locator, "%s[%d]", o ? "outputs" : "inputs",
                     o ? k - n_in : k);
            p->dtype = m->g->vals[p->value].dtype;
        }
        st->n_ports = n_in + n_out;
        free(ins);
        free(outs);
    }
    return AIT_OK;
}

/* After a run: every port's shape, as seen at batch size b. */
static ait_status observe_ports(const exec *x, inspection *r, int64_t b, ait_error *e)
{
    for (int i = 0; i < r->tree->n; i++)
        for (int k = 0; k < r->st[i].n_ports; k++) {
            port_spec *p = &r->st[i].ports[k];
            const tensor *t = exec_value(x, p->value);
            if (!t || t->kind != VAL_TENSOR) continue; /* folded away, or a sequence */
            p->dtype = t->dtype;
            ait_status s = axes_observe(&p->obs, b, t->rank, t->dims, e);
            if (s != AIT_OK)
                return err_prefix(e, "module '%s' %s ('%s'): ", r->tree->mods[i].name, p->locator,
                                  r->m->g->vals[p->value].name);
        }
    return AIT_OK;
}

/* The root module's ports as phases_find reads them. */
static ait_status find_phases(inspection *r, ait_error *e)
{
    const module_stats *st = &r->st[0];
    phase_port *pp = calloc((size_t)st->n_ports + 1, sizeof *pp);
    if (!pp) return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int k = 0; k < st->n_ports; k++) {
        const port_spec *p = &st->ports[k];
        pp[k] = (phase_port){.output = p->output, .is_float = dtype_is_float(p->dtype),
                             .is_index = p->dtype == AIT_I64 || p->dtype == AIT_I32,
                             .obs = &p->obs, .axes = &p->axes};
    }
    phases_find(pp, st->n_ports, &r->ph);
    free(pp);
    return AIT_OK;
}

/* Work and parameters per module, from one run at batch size b. */
static ait_status count_costs(const exec *x, inspection *r, int64_t b, ait_error *e)
{
    const graph *g = r->m->g;
    int nv = g->n_vals;
    int *seen = malloc(sizeof(int) * (size_t)(nv + 1)); /* module that last counted a constant */
    unsigned *prec = calloc((size_t)r->tree->n + 1, sizeof *prec); /* bit per dtype */
    if (!seen || !prec) {
        free(seen);
        free(prec);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        const tensor *in[512], *out[512];
        bool ran = true;
        for (int k = 0; k < n->n_in && k < 512; k++) in[k] = n->in[k] >= 0 ? exec_value(x, n->in[k]) : NULL;
        for (int k = 0; k < n->n_out && k < 512; k++) {
            out[k] = n->out[k] >= 0 ? exec_value(x, n->out[k]) : NULL;
            if (n->out[k] >= 0 && !out[k]) ran = false;
        }
        if (!ran || n->n_in > 512 || n->n_out > 512) continue;
        node_cost c;
        node_cost_of(g, i, in, out, &c);
        unsigned bits = 0;
        for (int k = 0; k < n->n_out; k++)
            if (out[k] && out[k]->kind == VAL_TENSOR && dtype_is_float(out[k]->dtype))
                bits |= 1u << out[k]->dtype;
        for (int m = r->tree->node_module[i]; m >= 0; m = r->tree->mods[m].parent) {
            r->st[m].flops += c.flops / (double)b;
            prec[m] |= bits;
        }
    }
    /* Parameters: each constant once per module, however many nodes read it. */
    for (int m = 0; m < r->tree->n; m++) {
        for (int v = 0; v < nv; v++) seen[v] = 0;
        for (int i = 0; i < g->n_nodes; i++) {
            if (!module_contains(r->tree, m, i)) continue;
            const node *n = &g->nodes[i];
            for (int k = 0; k < n->n_in; k++) {
                int v = n->in[k];
                const tensor *p = cost_param(g, v);
                if (!p || seen[v]) continue;
                seen[v] = 1;
                r->st[m].params += tensor_numel(p);
                r->st[m].param_bytes += (int64_t)tensor_nbytes(p);
            }
        }
        char *p = r->st[m].precisions;
        size_t len = 0;
        for (int t = 0; t < 32; t++)
            if (prec[m] & (1u << t))
                len += (size_t)snprintf(p + len, sizeof r->st[m].precisions - len, "%s%s",
                                        len ? "," : "", ait_dtype_name((ait_dtype)t));
    }
    free(seen);
    free(prec);
    return AIT_OK;
}

static void roll_up_times(inspection *r, const exec_profile *prof)
{
    const graph *g = r->m->g;
    r->nodes_sec = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        r->nodes_sec += prof->node_sec[i];
        for (int m = r->tree->node_module[i]; m >= 0; m = r->tree->mods[m].parent) {
            r->st[m].total_sec += prof->node_sec[i];
            if (prof->node_calls[i] > r->st[m].calls) r->st[m].calls = prof->node_calls[i];
            r->st[m].n_nodes++;
        }
    }
    for (int m = 0; m < r->tree->n; m++) {
        module_stats *s = &r->st[m];
        s->mean_sec = s->calls ? s->total_sec / (double)s->calls : 0;
        s->share = r->nodes_sec > 0 ? s->total_sec / r->nodes_sec : 0;
    }
}

static const tensor *run_shape(void *x, int v)
{
    return exec_value(x, v);
}

/* The fusion passes on the graph with the shapes of the run just made. */
static ait_status count_fusions(exec *x, inspection *r, ait_error *e)
{
    fusion_set *f = NULL;
    ait_status s = fuse_find(r->m->g, run_shape, x, &f, e);
    for (int k = 0; s == AIT_OK && k < FK_N; k++) r->fusions[k] = fuse_count(f, (fuse_kind)k);
    fusion_set_free(f);
    return s;
}

/* Runs the batches: samples are grouped by shape (samples of another
 * sequence length make another group, which is how dynamic axes show), and
 * each group runs at each batch size: untimed warm-up (the first records
 * shapes and costs), then timed runs with per-node profiling. */
static ait_status run_batches(const ait_model *m, const inspect_opts *o, inspection *r, exec *x,
                              exec_profile *prof, ait_error *e)
{
    int n_in = m->g->n_inputs, ns = o->samples->n;
    tensor **inputs = calloc((size_t)n_in + 1, sizeof *inputs);
    tensor **outputs = calloc((size_t)m->g->n_outputs + 1, sizeof *outputs);
    int *group = calloc((size_t)ns + 1, sizeof *group);
    sample *members = calloc((size_t)ns + 1, sizeof *members);
    ait_status s = inputs && outputs && group && members ? AIT_OK : err_set(e, AIT_E_NOMEM, "out of memory");
    int warm = o->warmup > 0 ? o->warmup : 1, runs = o->runs > 0 ? o->runs : 5, n_groups = 0;
    for (int i = 0; s == AIT_OK && i < ns; i++) {
        group[i] = -1;
        for (int j = 0; j < i && group[i] < 0; j++)
            if (samples_same_shapes(m, &o->samples->s[i], &o->samples->s[j])) group[i] = group[j];
        if (group[i] < 0) group[i] = n_groups++;
    }
    for (int gi = 0; s == AIT_OK && gi < n_groups; gi++)
    for (int bi = 0; s == AIT_OK && bi < r->n_batch; bi++) {
        int b = r->batch[bi];
        sample_set view = {.n_inputs = o->samples->n_inputs, .s = members};
        for (int i = 0; i < ns; i++)
            if (group[i] == gi) members[view.n++] = o->samples->s[i];
        log_msg(&o->log, AIT_LOG_INFO,
                "inspect: %s%d sample%s at batch %d: %d warm-up, %d timed runs",
                n_groups > 1 ? "shape group: " : "", view.n, view.n > 1 ? "s" : "", b, warm, runs);
        s = samples_batch(m, &view, b, inputs, e);
        for (int w = 0; s == AIT_OK && w < warm; w++) {
            s = exec_run(x, inputs, outputs, e);
            if (s == AIT_OK && w == 0) s = observe_ports(x, r, b, e);
            if (s == AIT_OK && w == 0 && bi == 0 && gi == 0) s = count_costs(x, r, b, e);
            if (s == AIT_OK && w == 0 && bi == 0 && gi == 0) s = count_fusions(x, r, e);
        }
        exec_set_profile(x, prof);
        for (int k = 0; s == AIT_OK && k < runs; k++) {
            double t0 = now_sec();
            s = exec_run(x, inputs, outputs, e);
            r->model_sec += now_sec() - t0;
            r->runs++;
        }
        exec_set_profile(x, NULL);
        for (int i = 0; i < n_in; i++) {
            if (inputs[i]) {
                tensor_release(inputs[i]);
                free(inputs[i]);
            }
            inputs[i] = NULL;
        }
    }
    free(inputs);
    free(outputs);
    free(group);
    free(members);
    return s;
}

ait_status inspect_run(const ait_model *m, const inspect_opts *o, inspection **out, ait_error *e)
{
    *out = NULL;
    if (m->n_absent) /* inspecting runs the model untuned, every node on the reference */
        return err_set(e, AIT_E_UNSUPPORTED, "%s: the artifact was saved without %d float weights "
                       "its prepared blobs replace, which inspecting and tuning run; use the .onnx "
                       "it was tuned from", m->path, m->n_absent);
    if (!o || !o->samples || o->samples->n < 1)
        return err_set(e, AIT_E_INVALID_ARG, "%s: inspection needs at least one sample", m->path);
    inspection *r = calloc(1, sizeof *r);
    if (!r) return err_set(e, AIT_E_NOMEM, "out of memory");
    r->m = m;
    r->n_batch = o->n_batch > 0 ? (o->n_batch < 16 ? o->n_batch : 16) : 1;
    for (int i = 0; i < r->n_batch; i++) r->batch[i] = o->n_batch > 0 ? o->batch[i] : 1;
    for (int i = 0; i < r->n_batch; i++)
        if (r->batch[i] < 1) {
            inspection_free(r);
            return err_set(e, AIT_E_INVALID_ARG, "batch size %d is not positive", r->batch[i]);
        }
    exec *x = NULL;
    exec_profile prof = {0};
    ait_status s = modules_build(m->g, exec_node_costs, &r->tree, e);
    if (s == AIT_OK) {
        r->st = calloc((size_t)r->tree->n, sizeof *r->st);
        prof.node_sec = calloc((size_t)m->g->n_nodes + 1, sizeof *prof.node_sec);
        prof.node_calls = calloc((size_t)m->g->n_nodes + 1, sizeof *prof.node_calls);
        if (!r->st || !prof.node_sec || !prof.node_calls) s = err_set(e, AIT_E_NOMEM, "out of memory");
    }
    if (s == AIT_OK) s = make_ports(m, r, e);
    if (s == AIT_OK) s = exec_create(m->g, NULL, o->threads, &x, e);
    if (s == AIT_OK) exec_keep_values(x); /* ports are read after each run */
    if (s == AIT_OK) s = run_batches(m, o, r, x, &prof, e);
    if (s == AIT_OK) {
        roll_up_times(r, &prof);
        bool varied = r->n_batch > 1;
        for (int i = 0; i < r->tree->n; i++)
            for (int k = 0; k < r->st[i].n_ports; k++) {
                port_spec *p = &r->st[i].ports[k];
                axes_classify(&p->obs, &p->axes);
                for (int d = 0; d < p->axes.rank; d++) varied |= p->axes.kind[d] != AXIS_STATIC;
            }
        r->static_shapes = !varied;
        s = find_phases(r, e);
    }
    if (s == AIT_OK && r->ph.n_kv) {
        s = seq_buckets_find(r, o->samples, o->seq_buckets, o->n_seq, o->past_buckets, o->n_past,
                             r->phase_seq, r->phase_past, &r->n_phase, NULL, e);
        if (r->phase_seq[0] == 0) r->n_phase = 0; /* no sequence axis after all */
    }
    exec_free(x);
    free(prof.node_sec);
    free(prof.node_calls);
    if (s != AIT_OK) {
        inspection_free(r);
        return s;
    }
    *out = r;
    return AIT_OK;
}

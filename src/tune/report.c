/* Inspection reports: the rows a view shows and the JSON document. */
#include <math.h>
#include <stdlib.h>

#include "tune/report.h"

const char *report_name(const inspection *r, int m)
{
    return m == 0 ? "(model)" : r->tree->mods[m].name;
}

static bool shown(const inspection *r, const report_filter *f, int m)
{
    if (f->module >= 0) return m == f->module;
    int d = r->tree->mods[m].depth;
    return d >= f->min_depth && (f->max_depth < 0 || d <= f->max_depth) &&
           r->st[m].share >= f->min_share;
}

int report_rows(const inspection *r, const report_filter *f, int *rows, int *cut)
{
    const module_tree *t = r->tree;
    int n = 0, over = 0, sp = 0;
    /* depth-first with an explicit stack (a tree from a file may be deep) */
    int *stack = malloc(sizeof *stack * (size_t)(t->n + 1));
    if (!stack) { /* fall back to index order rather than fail a report */
        for (int m = 0; m < t->n; m++)
            if (shown(r, f, m)) {
                if (f->limit <= 0 || n < f->limit) rows[n++] = m;
                else over++;
            }
    } else {
        stack[sp++] = 0;
        while (sp) {
            int m = stack[--sp];
            if (shown(r, f, m)) {
                if (f->limit <= 0 || n < f->limit) rows[n++] = m;
                else over++;
            }
            for (int c = t->mods[m].n_children - 1; c >= 0; c--) stack[sp++] = t->mods[m].children[c];
        }
        free(stack);
    }
    if (cut) *cut = over;
    return n;
}

static void port_json(json_w *w, const inspection *r, const port_spec *p)
{
    char buf[256];
    json_obj(w, NULL);
    json_str(w, "locator", p->locator);
    json_str(w, "name", r->m->g->vals[p->value].name);
    json_str(w, "shape", axes_shape_str(&p->axes, 0, buf, sizeof buf));
    json_str(w, "min_shape", axes_shape_str(&p->axes, 1, buf, sizeof buf));
    json_str(w, "max_shape", axes_shape_str(&p->axes, 2, buf, sizeof buf));
    json_str(w, "dtype", ait_dtype_name(p->dtype));
    json_arr(w, "axes");
    static const char *kinds[] = {"static", "batch", "dynamic"};
    for (int d = 0; d < p->axes.rank; d++) {
        json_obj(w, NULL);
        axis_kind k = p->axes.kind[d];
        json_str(w, "kind", k <= AXIS_DYNAMIC ? kinds[k] : "?");
        if (p->axes.name[d][0]) json_str(w, "name", p->axes.name[d]);
        if (k == AXIS_BATCH) json_int(w, "multiple", p->axes.mult[d]);
        json_int(w, "min", p->axes.min[d]);
        json_int(w, "max", p->axes.max[d]);
        json_end(w);
    }
    json_end(w);
    json_end(w);
}

static void module_json(json_w *w, const inspection *r, const selection *sel, int m)
{
    const module *md = &r->tree->mods[m];
    const module_stats *s = &r->st[m];
    json_obj(w, NULL);
    json_str(w, "path", md->name);
    json_int(w, "depth", md->depth);
    if (md->parent >= 0) json_str(w, "parent", r->tree->mods[md->parent].name);
    else json_null(w, "parent");
    json_int(w, "nodes", s->n_nodes);
    json_int(w, "params", s->params);
    json_int(w, "param_bytes", s->param_bytes);
    json_num(w, "flops_per_sample", s->flops);
    json_str(w, "precisions", s->precisions);
    json_int(w, "calls", s->calls);
    json_num(w, "total_ms", s->total_sec * 1e3);
    json_num(w, "mean_ms", s->mean_sec * 1e3);
    json_num(w, "share", s->share);
    int at = sel ? select_find(sel, m) : -1;
    json_bool(w, "selected", at >= 0);
    if (at >= 0) json_str(w, "strategy", sel->items[at].strategy);
    for (int out = 0; out < 2; out++) {
        json_arr(w, out ? "outputs" : "inputs");
        for (int k = 0; k < s->n_ports; k++)
            if (s->ports[k].output == (out == 1)) port_json(w, r, &s->ports[k]);
        json_end(w);
    }
    json_end(w);
}

/* "decoder": the sequence axis and the key/value cache pairs, or null. */
static void phases_json(json_w *w, const inspection *r)
{
    const phases *ph = &r->ph;
    if (!ph->n_kv) {
        json_null(w, "decoder");
        return;
    }
    const port_spec *ports = r->st[0].ports;
    const graph *g = r->m->g;
    json_obj(w, "decoder");
    json_obj(w, "sequence");
    json_str(w, "input", g->vals[ports[ph->seq_port].value].name);
    json_int(w, "axis", ph->seq_axis);
    json_end(w);
    json_arr(w, "kv_cache");
    for (int k = 0; k < ph->n_kv; k++) {
        json_obj(w, NULL);
        json_str(w, "past", g->vals[ports[ph->kv[k].past].value].name);
        json_str(w, "present", g->vals[ports[ph->kv[k].present].value].name);
        json_int(w, "axis", ph->kv[k].axis);
        json_end(w);
    }
    json_end(w);
    json_arr(w, "buckets"); /* the samples' (seq, past) buckets, tune/buckets.h */
    for (int k = 0; k < r->n_phase; k++) {
        json_obj(w, NULL);
        json_int(w, "seq", r->phase_seq[k]);
        json_int(w, "past", r->phase_past[k]);
        json_end(w);
    }
    json_end(w);
    json_end(w);
}

void report_json(json_w *w, const inspection *r, const selection *sel, const int *rows, int n)
{
    json_obj(w, NULL);
    json_str(w, "model", r->m->path);
    json_bool(w, "from_scopes", r->tree->from_scopes);
    json_arr(w, "batch_sizes");
    for (int i = 0; i < r->n_batch; i++) json_int(w, NULL, r->batch[i]);
    json_end(w);
    json_bool(w, "static_shapes", r->static_shapes);
    json_int(w, "runs", r->runs);
    json_num(w, "model_ms", r->model_sec * 1e3);
    json_num(w, "nodes_ms", r->nodes_sec * 1e3);
    json_num(w, "coverage", r->model_sec > 0 ? r->nodes_sec / r->model_sec : 0);
    phases_json(w, r);
    json_arr(w, "modules");
    for (int i = 0; i < n; i++) module_json(w, r, sel, rows[i]);
    json_end(w);
    if (sel) {
        json_arr(w, "selection");
        for (int i = 0; i < sel->n; i++) {
            json_obj(w, NULL);
            json_str(w, "path", r->tree->mods[sel->items[i].module].name);
            json_str(w, "strategy", sel->items[i].strategy);
            json_end(w);
        }
        json_end(w);
    }
    json_end(w);
}

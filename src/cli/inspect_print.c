/* Text tables of an inspection: the module table and graph spec tables. */
#include <string.h>

#include "cli/inspect_cli.h"

static const char *scaled(double v, const char *const *units, double step, const char *fmt0,
                          char *buf, size_t n)
{
    int u = 0;
    while (v >= step && units[u + 1]) v /= step, u++;
    snprintf(buf, n, u ? (v < 10 ? "%.2f%s" : v < 100 ? "%.1f%s" : "%.0f%s") : fmt0, v, units[u]);
    return buf;
}

const char *human_count(double v, char *buf, size_t n)
{
    static const char *const u[] = {"", "K", "M", "G", "T", "P", NULL};
    return scaled(v, u, 1000, "%.0f%s", buf, n);
}

const char *human_bytes(double v, char *buf, size_t n)
{
    static const char *const u[] = {" B", " KiB", " MiB", " GiB", " TiB", NULL};
    return scaled(v, u, 1024, "%.0f%s", buf, n);
}

/* The key/value cache and the sequence axis, when the model has them. */
static void print_phases(FILE *f, const inspection *r)
{
    const phases *ph = &r->ph;
    if (!ph->n_kv) return;
    const module_stats *st = &r->st[0];
    const graph *g = r->m->g;
    fprintf(f, "decoder: sequence axis %d of '%s'; key/value cache of %d input%s grown along their "
               "axis %d into output%s (", ph->seq_axis, g->vals[st->ports[ph->seq_port].value].name,
            ph->n_kv, ph->n_kv > 1 ? "s" : "", ph->kv[0].axis, ph->n_kv > 1 ? "s" : "");
    for (int k = 0; k < ph->n_kv && k < 2; k++)
        fprintf(f, "%s'%s' -> '%s'", k ? ", " : "", g->vals[st->ports[ph->kv[k].past].value].name,
                g->vals[st->ports[ph->kv[k].present].value].name);
    fprintf(f, "%s): prefill and decode (sequence 1) are different shapes\n",
            ph->n_kv > 2 ? ", ..." : "");
    if (!r->n_phase) return;
    fprintf(f, "buckets: the samples fall in");
    for (int k = 0; k < r->n_phase; k++)
        fprintf(f, "%s seq %d past %d%s", k ? "," : "", r->phase_seq[k], r->phase_past[k],
                r->phase_seq[k] == 1 ? " (decode)" : "");
    fprintf(f, "; a tune plans each (batch, seq, past) bucket apart\n");
}

void insp_print_table(FILE *f, const insp_state *s, const int *rows, int n, int cut)
{
    const inspection *r = s->r;
    int base = 1 << 30, w = 6;
    for (int i = 0; i < n; i++) {
        int d = r->tree->mods[rows[i]].depth;
        base = d < base ? d : base;
    }
    for (int i = 0; i < n; i++) {
        int len = 2 * (r->tree->mods[rows[i]].depth - base) + (int)strlen(report_name(r, rows[i]));
        w = len > w ? len : w;
    }
    w = w > 70 ? 70 : w;
    fprintf(f, "  %-*s %6s %8s %10s %9s %-10s %6s %10s %9s %6s\n", w, "module", "nodes", "params",
            "bytes", "FLOPs", "precision", "calls", "total ms", "mean ms", "share");
    for (int i = 0; i < n; i++) {
        int m = rows[i], at = select_find(&s->sel, m);
        const module_stats *st = &r->st[m];
        char name[256], p[32], b[32], fl[32];
        snprintf(name, sizeof name, "%*s%s", 2 * (r->tree->mods[m].depth - base), "",
                 report_name(r, m));
        fprintf(f, "%c %-*s %6d %8s %10s %9s %-10s %6lld %10.3f %9.3f %5.1f%%", at >= 0 ? '*' : ' ',
                w, name, st->n_nodes, human_count((double)st->params, p, sizeof p),
                human_bytes((double)st->param_bytes, b, sizeof b), human_count(st->flops, fl, sizeof fl),
                st->precisions[0] ? st->precisions : "-", (long long)st->calls, st->total_sec * 1e3,
                st->mean_sec * 1e3, st->share * 100);
        if (at >= 0) fprintf(f, "  %s", s->sel.items[at].strategy);
        fputc('\n', f);
    }
    if (cut) fprintf(f, "  ... %d more module%s (raise --limit)\n", cut, cut > 1 ? "s" : "");
    if (s->sel.n)
        fprintf(f, "* selected for tuning (%d module%s; strategy at the end of the row)\n",
                s->sel.n, s->sel.n > 1 ? "s" : "");
    fprintf(f, "FLOPs are per sample (at batch %d); bytes are the parameters'.\n", r->batch[0]);
    if (r->static_shapes)
        fprintf(f, "shapes: assumed static (%s); pass --batch-sizes 1,2 to find batch and "
                   "dynamic axes\n", r->n_batch > 1 ? "no axis changed" : "one batch size");
    else {
        fprintf(f, "shapes: batch and dynamic axes detected from batch sizes ");
        for (int i = 0; i < r->n_batch; i++) fprintf(f, "%s%d", i ? "," : "", r->batch[i]);
        fputc('\n', f);
    }
    print_phases(f, r);
    fprintf(f, "coverage: node times sum to %.3f ms of %.3f ms model wall time (%.1f%%) over %lld "
               "timed runs\n", r->nodes_sec * 1e3, r->model_sec * 1e3,
            r->model_sec > 0 ? 100 * r->nodes_sec / r->model_sec : 0, (long long)r->runs);
}

/* One table of ports (outputs or not) with columns sized to fit. */
static void port_table(FILE *f, const inspection *r, const module_stats *st, bool outputs)
{
    static const char *const head[6] = {"Locator", "Name", "Shape", "Min Shape", "Max Shape", "Dtype"};
    int w[6];
    for (int c = 0; c < 6; c++) w[c] = (int)strlen(head[c]);
    char cell[6][256];
    int rows = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            fprintf(f, "  ");
            for (int c = 0; c < 6; c++) fprintf(f, "%-*s%s", c < 5 ? w[c] : 0, head[c], c < 5 ? "  " : "\n");
        }
        for (int k = 0; k < st->n_ports; k++) {
            const port_spec *p = &st->ports[k];
            if (p->output != outputs) continue;
            rows += !pass;
            snprintf(cell[0], sizeof cell[0], "%s", p->locator);
            snprintf(cell[1], sizeof cell[1], "%s", r->m->g->vals[p->value].name);
            for (int which = 0; which < 3; which++)
                axes_shape_str(&p->axes, which, cell[2 + which], sizeof cell[2 + which]);
            snprintf(cell[5], sizeof cell[5], "%s", ait_dtype_name(p->dtype));
            for (int c = 0; c < 6; c++) {
                int len = (int)strlen(cell[c]);
                if (!pass) w[c] = len > w[c] ? len : w[c];
                else fprintf(f, "%s%-*s%s", c ? "" : "  ", c < 5 ? w[c] : 0, cell[c], c < 5 ? "  " : "\n");
            }
        }
        if (!pass && !rows) {
            fprintf(f, "  (none)\n");
            return;
        }
    }
}

void insp_print_spec(FILE *f, const inspection *r, int m)
{
    const module_stats *st = &r->st[m];
    fprintf(f, "\ngraph spec of %s%s%s\ninputs:\n", m ? "module '" : "", report_name(r, m),
            m ? "'" : "");
    port_table(f, r, st, false);
    fprintf(f, "outputs:\n");
    port_table(f, r, st, true);
}

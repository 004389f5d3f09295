/* Activation calibration (calib.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/calib.h"

/* Whether value v is a float32 non-constant data input of some Conv. */
static bool conv_input(const graph *g, int v)
{
    if (g->vals[v].konst) return false;
    for (int i = 0; i < g->n_nodes; i++) {
        const node *n = &g->nodes[i];
        if ((!n->domain || !n->domain[0]) && !strcmp(n->op, "Conv") && n->n_in > 1 && n->in[0] == v)
            return true;
    }
    return false;
}

ait_status calib_init(calib *c, const graph *g, double pct, ait_error *e)
{
    *c = (calib){.pct = pct};
    if (pct != 0 && !(pct > 50 && pct <= 100))
        return err_set(e, AIT_E_INVALID_ARG, "calibration percentile %g is not in (50, 100]", pct);
    c->out.r = calloc((size_t)g->n_vals + 1, sizeof *c->out.r);
    c->sum_lo = calloc((size_t)g->n_vals + 1, sizeof *c->sum_lo);
    c->sum_hi = calloc((size_t)g->n_vals + 1, sizeof *c->sum_hi);
    if (!c->out.r || !c->sum_lo || !c->sum_hi) {
        calib_free(c);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    for (int v = 0; v < g->n_vals; v++) {
        if (!g->vals[v].name || !conv_input(g, v)) continue;
        act_range *r = &c->out.r[c->out.n];
        r->name = strdup(g->vals[v].name);
        if (!r->name) {
            calib_free(c);
            return err_set(e, AIT_E_NOMEM, "out of memory");
        }
        r->lo = INFINITY;
        r->hi = -INFINITY;
        c->out.n++;
    }
    return AIT_OK;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

ait_status calib_observe(calib *c, const exec *whole, const graph *g, ait_error *e)
{
    float *sorted = NULL;
    size_t cap = 0;
    for (int i = 0; i < c->out.n; i++) {
        act_range *r = &c->out.r[i];
        const tensor *t = exec_value(whole, graph_find_value(g, r->name));
        if (!t || t->dtype != AIT_F32 || !t->data) continue;
        const float *x = t->data;
        size_t n = tensor_numel(t), k = 0;
        if (!c->pct) {
            for (size_t j = 0; j < n; j++) {
                if (isnan(x[j])) continue;
                r->lo = x[j] < r->lo ? x[j] : r->lo;
                r->hi = x[j] > r->hi ? x[j] : r->hi;
            }
            continue;
        }
        if (n > cap) {
            free(sorted);
            cap = n;
            sorted = malloc(sizeof *sorted * cap);
            if (!sorted) return err_set(e, AIT_E_NOMEM, "out of memory");
        }
        for (size_t j = 0; j < n; j++)
            if (!isnan(x[j])) sorted[k++] = x[j];
        if (!k) continue;
        qsort(sorted, k, sizeof *sorted, cmp_float);
        double f = c->pct / 100 * (double)(k - 1);
        c->sum_hi[i] += sorted[(size_t)ceil(f)];
        c->sum_lo[i] += sorted[(size_t)floor((double)(k - 1) - f)];
    }
    free(sorted);
    c->runs++;
    return AIT_OK;
}

void calib_finish(calib *c)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a over names and ranges */
    for (int i = 0; i < c->out.n; i++) {
        act_range *r = &c->out.r[i];
        if (c->pct && c->runs) {
            r->lo = (float)(c->sum_lo[i] / c->runs);
            r->hi = (float)(c->sum_hi[i] / c->runs);
        }
        if (!(r->lo <= r->hi)) r->lo = r->hi = 0; /* never computed */
        unsigned char b[8];
        memcpy(b, &r->lo, 4);
        memcpy(b + 4, &r->hi, 4);
        for (const char *p = r->name; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
        for (int k = 0; k < 8; k++) h = (h ^ b[k]) * 1099511628211ull;
    }
    c->out.hash = h;
}

void calib_free(calib *c)
{
    for (int i = 0; c->out.r && i < c->out.n; i++) free(c->out.r[i].name);
    free(c->out.r);
    free(c->sum_lo);
    free(c->sum_hi);
    *c = (calib){0};
}

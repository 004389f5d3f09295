/* The backend registry: one line per backend, in the order candidates are
 * offered (the reference first: it is the oracle every other is judged by). */
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"

extern const backend backend_reference, backend_openblas, backend_onednn, backend_native;

static const backend *const backends[] = {
    &backend_reference,
    &backend_openblas,
    &backend_onednn,
    &backend_native,
};

int backend_count(void) { return (int)(sizeof backends / sizeof backends[0]); }

const backend *backend_at(int i) { return i >= 0 && i < backend_count() ? backends[i] : NULL; }

const backend *backend_find(const char *name)
{
    for (int i = 0; name && i < backend_count(); i++)
        if (strcmp(backends[i]->name, name) == 0) return backends[i];
    return NULL;
}

int backend_coverage(const backend *b, const graph *module)
{
    int n = 0;
    for (int i = 0; b->op_for && i < module->n_nodes; i++)
        n += b->op_for(module, &module->nodes[i]) != NULL;
    return n;
}

int backend_variants(const backend *b, const graph *module, const char **out, int max)
{
    if (max < 1) return 0;
    out[0] = "";
    return 1 + (b->variants ? b->variants(module, out + 1, max - 1) : 0);
}

bool backend_prep_has_node(const prepared *prep, int node)
{
    char prefix[16];
    int len = snprintf(prefix, sizeof prefix, "w%d.", node);
    for (int k = 0; prep && k < prep->n; k++)
        if (strncmp(prep->blobs[k].name, prefix, (size_t)len) == 0) return true;
    return false;
}

bool backend_gemm_weights(const node *n, int k)
{
    return k == 1 && (!n->domain || !n->domain[0]) &&
           (!strcmp(n->op, "MatMul") || !strcmp(n->op, "Gemm") || !strcmp(n->op, "Conv"));
}

bool backend_weights_from_blobs(const built *bm, const graph *module, int v,
                                bool (*from_blob)(const built *bm, int node))
{
    if (v < 0 || v >= module->n_vals) return false;
    bool any = false;
    for (int i = 0; i < module->n_nodes; i++) {
        const node *n = &module->nodes[i];
        for (int k = 0; k < n->n_in; k++) {
            if (n->in[k] != v) continue;
            if (!backend_gemm_weights(n, k) || !from_blob(bm, i)) return false;
            any = true;
        }
    }
    return any;
}

ait_status backend_inputs_check(const graph *g, tensor *const *inputs, const char *who, ait_error *e)
{
    for (int k = 0; k < g->n_inputs; k++) {
        const value *d = &g->vals[g->inputs[k]];
        if (!inputs[k] || inputs[k]->kind != VAL_TENSOR || !inputs[k]->data)
            return err_set(e, AIT_E_INVALID_ARG, "%s: input '%s' is missing", who, d->name);
        if (d->dtype != AIT_UNDEFINED && inputs[k]->dtype != d->dtype)
            return err_set(e, AIT_E_DTYPE, "%s: input '%s' must be %s, got %s", who, d->name,
                           ait_dtype_name(d->dtype), ait_dtype_name(inputs[k]->dtype));
    }
    return AIT_OK;
}

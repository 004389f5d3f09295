/* The backend registry: one line per backend, in the order candidates are
 * offered (the reference first: it is the oracle every other is judged by). */
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

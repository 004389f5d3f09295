#include "exec/fold.h"

#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

ait_status graph_fold_constants(graph *g, ait_error *e)
{
    exec *x = NULL;
    tensor **folded = calloc((size_t)g->n_vals + 1, sizeof *folded);
    if (!folded) return err_set(e, AIT_E_NOMEM, "out of memory");
    ait_status s = exec_create(g, NULL, 1, &x, e);
    if (s == AIT_OK) s = exec_fold_constants(x, folded, e);
    exec_free(x);
    /* A node goes when every output it has was folded. */
    int kept = 0;
    for (int i = 0; s == AIT_OK && i < g->n_nodes; i++) {
        node *n = &g->nodes[i];
        bool gone = n->n_out > 0;
        for (int k = 0; k < n->n_out; k++) gone &= n->out[k] < 0 || folded[n->out[k]] != NULL;
        if (gone) {
            for (int k = 0; k < n->n_out; k++) {
                int v = n->out[k];
                if (v < 0) continue;
                g->vals[v].konst = folded[v];
                folded[v] = NULL;
                g->vals[v].producer = -1;
                g->vals[v].dtype = g->vals[v].konst->dtype;
                g->vals[v].rank = g->vals[v].konst->rank;
                memcpy(g->vals[v].dims, g->vals[v].konst->dims, sizeof g->vals[v].dims);
            }
            node_clear(n);
            continue;
        }
        if (kept != i) g->nodes[kept] = *n;
        for (int k = 0; k < n->n_out; k++)
            if (g->nodes[kept].out[k] >= 0) g->vals[g->nodes[kept].out[k]].producer = kept;
        kept++;
    }
    if (s == AIT_OK) g->n_nodes = kept;
    for (int v = 0; v < g->n_vals; v++)
        if (folded[v]) { /* partly folded nodes keep computing at run time */
            tensor_release(folded[v]);
            free(folded[v]);
        }
    free(folded);
    return s;
}

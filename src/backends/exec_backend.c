/* Op-replacing backends: the module runs on the executor with some nodes'
 * ops swapped for the backend's (exec_create_ops). */
#include <stdlib.h>

#include "backends/backend.h"
#include "exec/exec.h"

struct built {
    const backend *b;
    exec *x;
};

ait_status backend_exec_build(const backend *b, const graph *module, const candidate_cfg *cfg,
                              built **out, ait_error *e)
{
    *out = NULL;
    built *bm = calloc(1, sizeof *bm);
    const op_def **ops = calloc((size_t)module->n_nodes + 1, sizeof *ops);
    if (!bm || !ops) {
        free(bm);
        free(ops);
        return err_set(e, AIT_E_NOMEM, "backend '%s': out of memory", b->name);
    }
    bm->b = b;
    for (int i = 0; b->op_for && i < module->n_nodes; i++)
        ops[i] = b->op_for(module, &module->nodes[i]);
    int threads = cfg && cfg->threads > 0 ? cfg->threads : 1;
    ait_status s = exec_create_ops(module, NULL, threads, ops, &bm->x, e);
    free(ops);
    if (s != AIT_OK) {
        free(bm);
        if (e) err_prefix(e, "backend '%s': ", b->name);
        return s;
    }
    /* Pre-packed weights (and their artifact blobs) will be prepared here,
     * once per build, so that runs and loading do no packing. */
    *out = bm;
    return AIT_OK;
}

ait_status backend_exec_run(built *bm, tensor *const *inputs, tensor **outputs, ait_error *e)
{
    ait_status s = exec_run(bm->x, inputs, outputs, e);
    if (s != AIT_OK && e) err_prefix(e, "backend '%s': ", bm->b->name);
    return s;
}

void backend_exec_free(built *bm)
{
    if (!bm) return;
    exec_free(bm->x);
    free(bm);
}

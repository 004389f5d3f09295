/* The lean model a quantised artifact embeds instead of the ONNX file: the
 * weights its prepared blobs replace for every reader, left out. */
#include <stdlib.h>
#include <string.h>

#include "io/artifact.h"
#include "io/json_read.h"
#include "io/onnx.h"
#include "runtime/plan_exec.h"
#include "tune/plan_build.h"

ait_status plan_lean_model(const ait_model *m, const char *path, const uint8_t *buf, size_t len,
                           uint8_t **out, size_t *out_len, int *n_left, ait_error *e)
{
    *out = NULL;
    *out_len = 0;
    *n_left = 0;
    const graph *g = m->g;
    artifact *a = NULL;
    json_val *mf = NULL;
    plan *p = NULL;
    plan_exec *px = NULL;
    bool *drop = NULL;
    const char **names = calloc((size_t)g->n_vals + 1, sizeof *names);
    char (*sha)[SHA256_HEX] = calloc((size_t)g->n_vals + 1, sizeof *sha);
    const char **shas = calloc((size_t)g->n_vals + 1, sizeof *shas);
    ait_status s = names && sha && shas ? artifact_open(path, NULL, &a, e)
                                        : err_set(e, AIT_E_NOMEM, "out of memory");
    size_t mlen = 0;
    const uint8_t *text = s == AIT_OK ? artifact_manifest(a, &mlen) : NULL;
    if (s == AIT_OK) s = json_parse((const char *)text, mlen, path, &mf, e);
    /* the plan as a session loads it: its builds take the blobs, and say
     * which weights they no longer read (backend.releases) */
    if (s == AIT_OK) s = plan_parse(mf, g, a, path, &p, e);
    if (s == AIT_OK) s = plan_exec_create(g, p, 1, NULL, &px, e);
    if (s == AIT_OK) drop = plan_exec_releasable(px, g);
    int n = 0;
    for (int v = 0; drop && v < g->n_vals; v++) {
        if (!drop[v] || !g->vals[v].name || !g->vals[v].name[0]) continue;
        plan_weight_digest(g->vals[v].konst, sha[n]);
        shas[n] = sha[n];
        names[n++] = g->vals[v].name;
    }
    if (s == AIT_OK && n)
        s = onnx_leave_out(buf, len, m->path, names, shas, n, out, out_len, n_left, e);
    if (s != AIT_OK || !*n_left) {
        free(*out);
        *out = NULL;
        *out_len = 0;
        *n_left = 0;
    }
    free(drop);
    plan_exec_free(px);
    plan_free(p);
    json_free(mf);
    artifact_close(a);
    free(names);
    free(sha);
    free(shas);
    return s;
}

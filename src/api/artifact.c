/* Loading an artifact as a model with its plan (ait_artifact_load), with
 * the fallback to the embedded model untuned when asked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/artifact_load.h"
#include "api/model_load.h"
#include "core/options.h"
#include "core/tensor.h"
#include "io/artifact.h"
#include "io/sign.h"
#include "runtime/model.h"
#include "runtime/plan.h"
#include "runtime/plan_exec.h"

/* The embedded ONNX model, checked against the header's model hash, or the
 * lean model (PLAN_MODEL_LEAN_BLOB: its blob's own sha256 is all there is to
 * check), which only the tuned load takes (lean_ok). It is read
 * (artifact_blob_read) and parsed before any other blob is read, its big
 * weights borrowed from the blob's checked bytes (model_load_embedded), not
 * copied; *blob: that blob, for settle_weights. */
static ait_status model_of(const char *path, artifact *a, bool lean_ok, ait_model **out,
                           const artifact_blob **blob, ait_error *e)
{
    const artifact_blob *b = artifact_blob_find(a, PLAN_MODEL_BLOB);
    const artifact_blob *lean = b ? NULL : artifact_blob_find(a, PLAN_MODEL_LEAN_BLOB);
    if (lean && !lean_ok)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: the artifact was saved without the float "
                       "weights its prepared blobs replace, so it cannot run untuned; run the "
                       ".onnx it was tuned from", path);
    if (!b && !lean) return err_set(e, AIT_E_PARSE, "%s: the artifact holds no model", path);
    TRY(artifact_blob_read(a, b ? b : lean, e));
    char hex[SHA256_HEX];
    sha256_hex(b ? b->sha256 : lean->sha256, hex);
    if (b && strcmp(hex, artifact_model_hash(a)) != 0)
        return err_set(e, AIT_E_PARSE, "%s: the embedded model's sha256 %.16s... is not the "
                       "model hash %.16s... the header records", path, hex, artifact_model_hash(a));
    if (!b) b = lean;
    *blob = b;
    return model_load_embedded(b->data, (size_t)b->size, path, b == lean, out, e);
}

static int by_address(const void *x, const void *y)
{
    const uint8_t *p = ((const tensor *const *)x)[0]->data, *q = ((const tensor *const *)y)[0]->data;
    return p < q ? -1 : p > q;
}

/* The weights model_of borrowed from blob b that g still holds: kept in
 * place when 64-byte aligned (as tensor_alloc's are: no kernel meets an
 * alignment it was not written for) and not own, else copied (tensor_own);
 * then every page of b that no weight kept in place lies on is handed back
 * (artifact_release). With own (a model kept whole for inspecting, or the
 * fallback, whose artifact is closed), every one is copied. The weights the
 * load freed (plan_release_replaced) were never copied at all. */
static ait_status settle_weights(graph *g, artifact *a, const artifact_blob *b, bool own,
                                 ait_error *e)
{
    const tensor **kept = calloc((size_t)g->n_vals + 1, sizeof *kept);
    if (!kept) return err_set(e, AIT_E_NOMEM, "out of memory");
    size_t n = 0;
    ait_status s = AIT_OK;
    for (int v = 0; v < g->n_vals && s == AIT_OK; v++) {
        tensor *t = g->vals[v].konst;
        const uint8_t *d = t ? t->data : NULL;
        if (!d || t->owned || d < b->data || d >= b->data + b->size) continue;
        if (!own && ((uintptr_t)d & 63) == 0) kept[n++] = t;
        else s = tensor_own(t, e);
    }
    if (s == AIT_OK) {
        qsort(kept, n, sizeof *kept, by_address);
        const uint8_t *from = b->data;
        for (size_t i = 0; i <= n; i++) { /* the gap before each, and after the last */
            const uint8_t *to = i < n ? (const uint8_t *)kept[i]->data : b->data + b->size;
            if (to > from) artifact_release(a, from, (size_t)(to - from));
            if (i < n) from = (const uint8_t *)kept[i]->data + tensor_nbytes(kept[i]);
        }
    }
    free(kept);
    return s;
}

/* The model, then the plan bound to it (the prepared blobs by name, each
 * bound to its source weights by their digests, computed from the borrowed
 * bytes), then (unless keep) the weights those blobs replace freed, the
 * others settled (settle_weights: copied if unaligned, and the model blob's
 * other pages dropped), and only then the prepared blobs read, checked and
 * given to the plan: the weights and the blobs that replace them are never
 * in memory together. The model keeps the artifact (m->art), so the weights
 * kept in place live as long as it. */
static ait_status load_tuned(const char *path, artifact *a, bool keep, ait_model **out,
                             ait_error *e)
{
    size_t len;
    const uint8_t *text = artifact_manifest(a, &len);
    json_val *mf = NULL;
    ait_model *m = NULL;
    plan *p = NULL;
    const artifact_blob *mb = NULL;
    ait_status s = json_parse((const char *)text, len, path, &mf, e);
    if (s == AIT_OK) s = model_of(path, a, true, &m, &mb, e);
    if (s == AIT_OK) s = plan_parse(mf, m->g, a, path, &p, e);
    json_free(mf);
    if (s == AIT_OK && !keep) m->freed_at_load = plan_release_replaced(m->g, p);
    if (s == AIT_OK) s = settle_weights(m->g, a, mb, keep, e); /* before any session reads */
    if (s == AIT_OK) s = artifact_blob_read_rest(a, e); /* then the prepared blobs */
    if (s == AIT_OK) s = plan_bind_blobs(p, e);
    if (s != AIT_OK) {
        plan_free(p);
        ait_model_free(m);
        return s;
    }
    m->plan = p;
    m->art = a;
    *out = m;
    return AIT_OK;
}

/* The fallback: the embedded model alone, if its own blob is intact (the
 * header and blob table are checked; the manifest and the CPU are not
 * needed to run untuned). The file is opened again, so a trusted key checks
 * the signature of the header this open read again. */
ait_status artifact_load_untuned(const char *path, const char *trusted_key, const ait_error *why,
                                 ait_model **out, ait_error *e)
{
    artifact *a = NULL;
    artifact_expect x = {.skip_cpu_check = 1, .skip_manifest = 1, .defer_blob_read = 1};
    ait_error e2 = {0};
    ait_status s = artifact_open(path, &x, &a, &e2); /* model_of reads the model's blob alone */
    if (s == AIT_OK && trusted_key)
        s = sign_verify(path, artifact_header(a), ARTIFACT_HEADER_SIZE, trusted_key, &e2);
    const artifact_blob *mb = NULL;
    if (s == AIT_OK) s = model_of(path, a, false, out, &mb, &e2);
    if (s == AIT_OK && (s = settle_weights((*out)->g, a, mb, true, &e2)) != AIT_OK) {
        ait_model_free(*out); /* the artifact closes below: nothing may point into it */
        *out = NULL;
    }
    artifact_close(a);
    if (s == AIT_E_UNSUPPORTED) /* a lean artifact: both reasons */
        return err_set(e, why->code, "%s; no fallback: %s", why->msg, e2.msg);
    if (s != AIT_OK) { /* nothing to fall back on: the first reason is the one to give */
        if (e) *e = *why;
        return why->code;
    }
    if (!((*out)->note = strdup(why->msg))) {
        ait_model_free(*out);
        *out = NULL;
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    return AIT_OK;
}

ait_status ait_artifact_load(const char *path, const ait_artifact_options *opts, ait_model **out,
                             ait_error *err)
{
    ait_error scratch = {0}, first = {0};
    ait_error *e = err ? err : &scratch;
    if (out) *out = NULL;
    if (!path || !out) return err_set(e, AIT_E_INVALID_ARG, "ait_artifact_load: NULL argument");
    ait_artifact_options o;
    TRY(OPTS_TAKE(o, opts, e));
    if (o.load_threads < 0)
        return err_set(e, AIT_E_INVALID_ARG, "%s: load_threads is %d (0: the library picks)", path,
                       o.load_threads);
    artifact *a = NULL;
    artifact_expect x = {.defer_blob_read = 1, /* the blobs after the model (model_of) */
                         .map_file = o.map_file, .hash_threads = o.load_threads};
    ait_status s = artifact_open(path, &x, &a, &first);
    /* A trusted key: the header this load checked (which vouches for every
     * hash) must carry a signature by it; nothing is used otherwise, not even
     * the embedded model for a fallback. */
    if (o.trusted_key) {
        if (s == AIT_OK)
            s = sign_verify(path, artifact_header(a), ARTIFACT_HEADER_SIZE, o.trusted_key, e);
        else *e = first;
        if (s != AIT_OK) {
            artifact_close(a);
            return s;
        }
    }
    if (s == AIT_OK) s = load_tuned(path, a, o.keep_weights, out, &first);
    if (s == AIT_OK) return AIT_OK;
    artifact_close(a);
    if (!o.fallback_untuned) {
        *e = first;
        return s;
    }
    return artifact_load_untuned(path, o.trusted_key, &first, out, e);
}

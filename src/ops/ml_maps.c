/* The ai.onnx.ml ops on maps (core/tensor.h: VAL_MAP): ZipMap makes a
 * sequence of maps from class scores (skl2onnx ends classifiers with it),
 * DictVectorizer and CastMap turn a map into a tensor. Maps are values the
 * shapes of whose outputs only run knows, so all three set their outputs in
 * run (OP_ALLOCS_OUTPUTS); infer checks the attributes and defers. Where the
 * spec is vague they follow ONNX Runtime (docs/runtime.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ml_common.h"

#define MAP_FLAGS (OP_ALLOCS_OUTPUTS | OP_TAKES_SEQUENCES | OP_STR_OWNS)

static ait_status need_map(op_ctx *c)
{
    if (!has_in(c, 0) || c->in[0]->kind != VAL_MAP)
        return err_set(c->err, AIT_E_INVALID_ARG, "X must be a map, not a %s",
                       has_in(c, 0) ? val_kind_name(c->in[0]->kind) : "missing input");
    return AIT_OK;
}

/* ---- ZipMap: rows of scores to maps from class label to score ------------------- */

static ait_status zipmap_labels(op_ctx *c, ml_labels *l)
{
    TRY(ml_labels_attr(c, "classlabels_int64s", l));
    if (!node_attr(c->n, "classlabels_strings") && !node_attr(c->n, "classlabels_int64s"))
        return err_set(c->err, AIT_E_INVALID_ARG, "one of classlabels_int64s and "
                       "classlabels_strings must be given");
    return AIT_OK;
}

static ait_status zipmap_infer(op_ctx *c)
{
    ml_labels l;
    TRY(zipmap_labels(c, &l));
    return AIT_DEFER;
}

static ait_status zipmap_run(op_ctx *c)
{
    ml_labels l;
    TRY(zipmap_labels(c, &l));
    const tensor *x = c->in[0];
    if (!x || x->kind != VAL_TENSOR)
        return err_set(c->err, AIT_E_INVALID_ARG, "X must be a tensor");
    TRY(check_dtype(c, x, "X", 1, AIT_F32));
    if (x->rank != 1 && x->rank != 2)
        return err_set(c->err, AIT_E_SHAPE, "X must be [N, C] or [C], not rank %d", x->rank);
    int64_t rows = x->rank == 2 ? x->dims[0] : 1, cols = x->dims[x->rank - 1];
    if (cols != l.n)
        return err_set(c->err, AIT_E_SHAPE, "X has %lld columns but %s lists %lld labels",
                       (long long)cols, l.name, (long long)l.n);
    tensor pair[2] = {{0}, {0}};
    tensor_set_shape(&pair[0], l.s ? AIT_STRING : AIT_I64, 1, &cols);
    tensor_set_shape(&pair[1], AIT_F32, 1, &cols);
    ait_status s = tensor_alloc(&pair[0], c->err);
    if (s == AIT_OK) s = tensor_alloc(&pair[1], c->err);
    for (int64_t k = 0; s == AIT_OK && k < cols; k++) {
        if (!l.s) ((int64_t *)pair[0].data)[k] = l.i[k];
        else s = tensor_set_str(&pair[0], k, l.s[k] ? l.s[k] : "", l.s[k] ? strlen(l.s[k]) : 0,
                                c->err);
    }
    /* Each map is a view on the two tensors, which seq_insert copies deeply. */
    tensor view = {.kind = VAL_MAP, .dtype = AIT_F32, .n_items = 2, .cap_items = 2, .items = pair};
    tensor_make_sequence(c->out[0], AIT_F32);
    for (int64_t r = 0; s == AIT_OK && r < rows; r++) {
        if (r >= 1 << 30) {
            s = err_set(c->err, AIT_E_SHAPE, "X has too many rows for a sequence");
            break;
        }
        if (cols) memcpy(pair[1].data, (const float *)x->data + r * cols, sizeof(float) * (size_t)cols);
        s = seq_insert(c->out[0], (int)r, &view, c->err);
    }
    tensor_release(&pair[0]);
    tensor_release(&pair[1]);
    return s;
}

/* ---- DictVectorizer: map values placed by their key's index in a vocabulary ------ */

static ait_status dv_vocab(op_ctx *c, ml_vec *v)
{
    bool s = node_attr(c->n, "string_vocabulary"), i = node_attr(c->n, "int64_vocabulary");
    if (s == i)
        return err_set(c->err, AIT_E_INVALID_ARG, "exactly one of string_vocabulary and "
                       "int64_vocabulary must be given");
    if (s) return ml_strs(c, "string_vocabulary", v);
    ml_ints(c, "int64_vocabulary", v);
    return AIT_OK;
}

static ait_status dv_infer(op_ctx *c)
{
    ml_vec v;
    TRY(dv_vocab(c, &v));
    return AIT_DEFER;
}

static ait_status dv_run(op_ctx *c)
{
    ml_vec v;
    TRY(dv_vocab(c, &v));
    TRY(need_map(c));
    const tensor *keys = map_keys(c->in[0]), *vals = map_vals(c->in[0]);
    if ((keys->dtype == AIT_STRING) != (v.s != NULL))
        return err_set(c->err, AIT_E_DTYPE, "the map's keys are %s but the vocabulary is %s",
                       ait_dtype_name(keys->dtype), v.s ? "string_vocabulary" : "int64_vocabulary");
    TRY(check_dtype(c, vals, "the map's values", 4, AIT_F32, AIT_F64, AIT_I64, AIT_STRING));
    int64_t d[2] = {1, v.n}, *order = NULL;
    set_out(c, 0, vals->dtype, 2, d);
    TRY(tensor_alloc_zeroed(c->out[0], c->err)); /* keys the map lacks stay 0 */
    if (v.s) {
        if (v.n && !(order = op_scratch(c, sizeof *order * (size_t)v.n))) return c->err->code;
        strs_order(v.s, v.n, order);
    }
    /* A key the vocabulary lacks is dropped, as ONNX Runtime and
     * scikit-learn's DictVectorizer do with features unseen in training. */
    for (int64_t e = 0, n = tensor_numel(keys); e < n; e++) {
        int64_t k = -1;
        if (v.s) {
            k = strs_find(v.s, order, v.n, tensor_str(keys, e), false);
        } else {
            int64_t key = ((const int64_t *)keys->data)[e];
            for (k = 0; k < v.n && v.i[k] != key; k++) {}
            if (k == v.n) k = -1;
        }
        if (k < 0) continue;
        if (vals->dtype == AIT_STRING) {
            const char *s = tensor_str(vals, e);
            TRY(tensor_set_str(c->out[0], k, s, strlen(s), c->err));
        } else {
            size_t es = ait_dtype_size(vals->dtype);
            memcpy((char *)c->out[0]->data + (size_t)k * es, (const char *)vals->data + (size_t)e * es,
                   es);
        }
    }
    return AIT_OK;
}

/* ---- CastMap: an int64-keyed map to a tensor in key order ------------------------- */

enum { TO_FLOAT, TO_STRING, TO_INT64 };
enum { DENSE, SPARSE };

typedef struct cm_attrs {
    int to, form;
    int64_t max_map;
} cm_attrs;

static ait_status cm_attrs_get(op_ctx *c, cm_attrs *a)
{
    static const char *const tos[] = {"TO_FLOAT", "TO_STRING", "TO_INT64"};
    static const char *const forms[] = {"DENSE", "SPARSE"};
    TRY(ml_enum(c, "cast_to", "TO_FLOAT", tos, 3, &a->to));
    TRY(ml_enum(c, "map_form", "DENSE", forms, 2, &a->form));
    a->max_map = attr_int(c->n, "max_map", 1);
    if (a->form == SPARSE && a->max_map < 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "max_map must be at least 1 with map_form "
                       "SPARSE, not %lld", (long long)a->max_map);
    return AIT_OK;
}

static ait_status cm_infer(op_ctx *c)
{
    cm_attrs a;
    TRY(cm_attrs_get(c, &a));
    return AIT_DEFER;
}

typedef struct key_at {
    int64_t key, at;
} key_at;

static int key_cmp(const void *a, const void *b)
{
    int64_t x = ((const key_at *)a)->key, y = ((const key_at *)b)->key;
    return (x > y) - (x < y);
}

/* Element `from` of the map's values into element `to` of y (cast_to). A
 * string value is parsed as a whole number (TO_FLOAT, TO_INT64); a float
 * one is written as C's "%f" (ONNX Runtime's std::to_string). */
static ait_status cm_put(op_ctx *c, const tensor *vals, int64_t from, tensor *y, int64_t to)
{
    if (vals->dtype == AIT_F32) {
        float f = ((const float *)vals->data)[from];
        if (y->dtype == AIT_F32) ((float *)y->data)[to] = f;
        else if (y->dtype == AIT_I64) elem_set_sat(y->data, AIT_I64, to, f);
        else {
            char buf[64];
            int len = snprintf(buf, sizeof buf, "%f", (double)f);
            return tensor_set_str(y, to, buf, len > 0 && len < (int)sizeof buf ? (size_t)len : 0,
                                  c->err);
        }
        return AIT_OK;
    }
    const char *s = tensor_str(vals, from);
    if (y->dtype == AIT_STRING) return tensor_set_str(y, to, s, strlen(s), c->err);
    char *end;
    errno = 0;
    double f = y->dtype == AIT_F32 ? strtod(s, &end) : 0;
    long long i = y->dtype == AIT_I64 ? strtoll(s, &end, 10) : 0;
    if (!*s || *end || errno == ERANGE)
        return err_set(c->err, AIT_E_INVALID_ARG, "value '%s' is not a %s", s,
                       y->dtype == AIT_F32 ? "number" : "whole number in int64's range");
    if (y->dtype == AIT_F32) ((float *)y->data)[to] = (float)f;
    else ((int64_t *)y->data)[to] = i;
    return AIT_OK;
}

static ait_status cm_run(op_ctx *c)
{
    cm_attrs a;
    TRY(cm_attrs_get(c, &a));
    TRY(need_map(c));
    const tensor *keys = map_keys(c->in[0]), *vals = map_vals(c->in[0]);
    if (keys->dtype != AIT_I64)
        return err_set(c->err, AIT_E_DTYPE, "the map's keys must be int64, not %s",
                       ait_dtype_name(keys->dtype));
    TRY(check_dtype(c, vals, "the map's values", 2, AIT_F32, AIT_STRING));
    static const ait_dtype out_t[] = {AIT_F32, AIT_STRING, AIT_I64};
    int64_t n = tensor_numel(keys), d[2] = {1, a.form == SPARSE ? a.max_map : n};
    set_out(c, 0, out_t[a.to], 2, d);
    TRY(tensor_alloc_zeroed(c->out[0], c->err)); /* SPARSE's gaps: zeros, and for strings "0.f" */
    for (int64_t k = 0; a.form == SPARSE && a.to == TO_STRING && k < a.max_map; k++)
        TRY(tensor_set_str(c->out[0], k, "0.f", 3, c->err)); /* as ONNX Runtime pads */
    key_at *ka = n ? op_scratch(c, sizeof *ka * (size_t)n) : NULL;
    if (n && !ka) return c->err->code;
    for (int64_t e = 0; e < n; e++) ka[e] = (key_at){((const int64_t *)keys->data)[e], e};
    if (n > 1) qsort(ka, (size_t)n, sizeof *ka, key_cmp);
    for (int64_t e = 0; e < n; e++) {
        if (e && ka[e].key == ka[e - 1].key)
            return err_set(c->err, AIT_E_INVALID_ARG, "key %lld appears twice in the map",
                           (long long)ka[e].key);
        if (a.form == SPARSE && (ka[e].key < 0 || ka[e].key >= a.max_map))
            return err_set(c->err, AIT_E_INVALID_ARG, "key %lld is outside [0, max_map %lld)",
                           (long long)ka[e].key, (long long)a.max_map);
        TRY(cm_put(c, vals, ka[e].at, c->out[0], a.form == SPARSE ? ka[e].key : e));
    }
    return AIT_OK;
}

OP_TABLE(ml_maps,
         {.name = "ZipMap", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .flags = MAP_FLAGS, .infer = zipmap_infer, .run = zipmap_run, .domain = ML_DOMAIN},
         {.name = "DictVectorizer", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .flags = MAP_FLAGS, .infer = dv_infer, .run = dv_run, .domain = ML_DOMAIN},
         {.name = "CastMap", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .flags = MAP_FLAGS, .infer = cm_infer, .run = cm_run, .domain = ML_DOMAIN}, );

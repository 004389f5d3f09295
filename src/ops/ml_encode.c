/* Encoders of ai.onnx.ml: LabelEncoder (1, 2, 4), CategoryMapper and
 * OneHotEncoder, on numbers and strings (the ops on maps: ml_maps.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ml_common.h"

/* ---- LabelEncoder and CategoryMapper: keys to values ------------------------- */

typedef struct lenc {
    ml_vec keys, vals;
    ait_dtype kt, vt; /* the element types the keys and values stand for */
    bool idx;         /* LabelEncoder 1: the int64 side is the index into the strings */
    double dflt;
    int64_t dflt_i;
    const char *dflt_s;
} lenc;

/* One of keys_floats / keys_int64s / keys_strings / keys_tensor (prefix
 * "keys") or the same of values: the list and the type it stands for. */
static ait_status lenc_side(op_ctx *c, const char *side, ml_vec *v, ait_dtype *t)
{
    char fl[32], in[32], st[32], te[32];
    snprintf(fl, sizeof fl, "%s_floats", side);
    snprintf(in, sizeof in, "%s_int64s", side);
    snprintf(st, sizeof st, "%s_strings", side);
    snprintf(te, sizeof te, "%s_tensor", side);
    int given = !!node_attr(c->n, fl) + !!node_attr(c->n, in) + !!node_attr(c->n, st) +
                (c->n->version >= 4 && node_attr(c->n, te));
    if (given != 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "exactly one of %s, %s, %s%s%s must be given",
                       fl, in, st, c->n->version >= 4 ? ", " : "", c->n->version >= 4 ? te : "");
    if (node_attr(c->n, st)) {
        *t = AIT_STRING;
        return ml_strs(c, st, v);
    }
    if (node_attr(c->n, fl)) {
        *t = AIT_F32;
        return ml_floats(c, fl, NULL, v);
    }
    if (node_attr(c->n, in)) {
        ml_ints(c, in, v);
        *t = AIT_I64;
        return AIT_OK;
    }
    TRY(ml_tensor(c, te, v, true));
    *t = v->dt;
    return check_dtype(c, &(tensor){.dtype = *t}, te, 6, AIT_F32, AIT_F64, AIT_I64, AIT_I32,
                       AIT_I16, AIT_STRING);
}

/* LabelEncoder 2 and 4: keys_* to values_*, the default from default_tensor
 * (4) or the default_* of the values' type. */
static ait_status lenc_lists(op_ctx *c, lenc *e)
{
    TRY(lenc_side(c, "keys", &e->keys, &e->kt));
    TRY(lenc_side(c, "values", &e->vals, &e->vt));
    ml_vec d = {0};
    if (c->n->version >= 4) TRY(ml_tensor(c, "default_tensor", &d, true));
    if (d.given) {
        if (d.n != 1 || d.dt != e->vt)
            return err_set(c->err, AIT_E_INVALID_ARG, "default_tensor must hold one %s",
                           ait_dtype_name(e->vt));
        if (d.s) e->dflt_s = ml_str(&d, 0);
        else e->dflt = ml_at(&d, 0);
        e->dflt_i = dtype_is_int(d.dt) ? elem_get_i64(d.t, d.dt, 0) : 0;
    } else if (e->vt == AIT_STRING) {
        e->dflt_s = attr_str(c->n, "default_string", "_Unused");
    } else if (dtype_is_float(e->vt)) {
        e->dflt = attr_float(c->n, "default_float", -0.0f);
    } else {
        e->dflt_i = attr_int(c->n, "default_int64", -1);
        e->dflt = (double)e->dflt_i;
    }
    return AIT_OK;
}

/* CategoryMapper and LabelEncoder 1 map strings to int64 and back, the way
 * X's type says: cats_strings[k] and cats_int64s[k] (LabelEncoder 1:
 * classes_strings[k] and k) stand for each other; default_int64 and
 * default_string for what is not found. */
static ait_status lenc_pairs(op_ctx *c, lenc *e)
{
    bool cm = strcmp(c->n->op, "CategoryMapper") == 0;
    ml_vec s, i = {0};
    TRY(ml_strs(c, cm ? "cats_strings" : "classes_strings", &s));
    if (cm) {
        ml_ints(c, "cats_int64s", &i);
        TRY(ml_len(c, &i, s.n, "cats_int64s"));
    } else {
        i.n = s.n;
        e->idx = true;
    }
    TRY(check_dtype(c, c->in[0], "X", 2, AIT_STRING, AIT_I64));
    bool from_s = c->in[0]->dtype == AIT_STRING;
    e->keys = from_s ? s : i;
    e->vals = from_s ? i : s;
    e->kt = from_s ? AIT_STRING : AIT_I64;
    e->vt = from_s ? AIT_I64 : AIT_STRING;
    e->dflt_i = attr_int(c->n, "default_int64", -1);
    e->dflt_s = attr_str(c->n, "default_string", "_Unused");
    return AIT_OK;
}

static ait_status lenc_setup(op_ctx *c, lenc *e)
{
    memset(e, 0, sizeof *e);
    if (strcmp(c->n->op, "CategoryMapper") == 0 || c->n->version < 2) TRY(lenc_pairs(c, e));
    else TRY(lenc_lists(c, e));
    if (e->keys.n != e->vals.n)
        return err_set(c->err, AIT_E_INVALID_ARG, "%lld keys but %lld values", (long long)e->keys.n,
                       (long long)e->vals.n);
    if (c->in[0]->dtype != e->kt)
        return err_set(c->err, AIT_E_DTYPE, "X is %s but the keys are %s",
                       ait_dtype_name(c->in[0]->dtype), ait_dtype_name(e->kt));
    return AIT_OK;
}

static ait_status lenc_infer(op_ctx *c)
{
    lenc e;
    TRY(lenc_setup(c, &e));
    set_out(c, 0, e.vt, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

/* Numeric keys sorted for binary search; a repeated key's last value wins. */
typedef struct kslot {
    double f;
    int64_t i;
    int32_t at;
} kslot;

static int kslot_cmp(const void *pa, const void *pb)
{
    const kslot *a = pa, *b = pb;
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    if (a->f != b->f) return a->f < b->f ? -1 : 1;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* The keys, ready for lenc_find: sorted slots of numbers, or the order of
 * strings (strs_order). LabelEncoder 1's index keys need neither. */
typedef struct ktable {
    kslot *ks;
    int64_t *order;
    int32_t n, nan_at; /* nan_at: the last NaN key, or -1 */
} ktable;

static ait_status ktable_make(op_ctx *c, const lenc *e, ktable *t)
{
    memset(t, 0, sizeof *t);
    t->nan_at = -1;
    if (e->keys.n > INT32_MAX) return err_set(c->err, AIT_E_UNSUPPORTED, "too many keys");
    int32_t nk = t->n = (int32_t)e->keys.n;
    if (!nk || (e->idx && e->kt == AIT_I64)) return AIT_OK;
    if (e->kt == AIT_STRING) {
        if (!(t->order = op_scratch(c, sizeof *t->order * (size_t)nk))) return c->err->code;
        strs_order(e->keys.s, nk, t->order);
        return AIT_OK;
    }
    kslot *ks = t->ks = op_scratch(c, sizeof *ks * (size_t)nk);
    if (!ks) return c->err->code;
    bool ik = dtype_is_int(e->kt);
    for (int32_t k = 0; k < nk; k++) {
        ks[k].at = k;
        ks[k].i = ik ? (e->keys.i ? e->keys.i[k] : elem_get_i64(e->keys.t, e->keys.dt, k)) : 0;
        ks[k].f = ik ? 0 : ml_at(&e->keys, k);
        if (!ik && isnan(ks[k].f)) { /* NaN keys match any NaN; kept out of the sort */
            t->nan_at = k;
            ks[k].f = INFINITY;
            ks[k].at = -1;
        }
    }
    qsort(ks, (size_t)nk, sizeof *ks, kslot_cmp);
    return AIT_OK;
}

/* The index of the key element i of x matches (the last such), or -1. */
static int64_t lenc_find(const lenc *e, const ktable *t, const tensor *x, int64_t i)
{
    if (e->kt == AIT_STRING) return strs_find(e->keys.s, t->order, t->n, tensor_str(x, i), true);
    kslot q = {0};
    bool ik = dtype_is_int(e->kt);
    if (ik) q.i = elem_get_i64(x->data, x->dtype, i);
    else q.f = elem_get_f64(x->data, x->dtype, i);
    if (e->idx) return q.i >= 0 && q.i < t->n ? q.i : -1;
    if (!ik && isnan(q.f)) return t->nan_at;
    int32_t lo = 0, hi = t->n; /* the last slot with this key */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        const kslot *m = &t->ks[mid];
        if (m->i < q.i || (m->i == q.i && m->f <= q.f)) lo = mid + 1;
        else hi = mid;
    }
    const kslot *m = lo > 0 ? &t->ks[lo - 1] : NULL;
    return m && m->i == q.i && m->f == q.f && m->at >= 0 ? m->at : -1;
}

/* y[k] = value `at`, or the default when at < 0. */
static ait_status put_val(op_ctx *c, tensor *y, int64_t k, const lenc *e, int64_t at)
{
    if (y->dtype == AIT_STRING) {
        const char *s = at < 0 ? e->dflt_s : ml_str(&e->vals, at);
        return tensor_set_str(y, k, s, strlen(s), c->err);
    }
    if (at < 0) {
        if (y->dtype == AIT_I64) ((int64_t *)y->data)[k] = e->dflt_i;
        else elem_set_f64(y->data, y->dtype, k, e->dflt);
    } else if (e->idx) {
        ((int64_t *)y->data)[k] = at;
    } else if (y->dtype == AIT_I64 && e->vals.i) {
        ((int64_t *)y->data)[k] = e->vals.i[at];
    } else if (y->dtype == AIT_I64 && e->vals.t) {
        ((int64_t *)y->data)[k] = elem_get_i64(e->vals.t, e->vals.dt, at);
    } else {
        elem_set_f64(y->data, y->dtype, k, ml_at(&e->vals, at));
    }
    return AIT_OK;
}

static ait_status lenc_run(op_ctx *c)
{
    lenc e;
    ktable t;
    TRY(lenc_setup(c, &e));
    TRY(ktable_make(c, &e, &t));
    const tensor *x = c->in[0];
    for (int64_t i = 0, n = tensor_numel(x); i < n; i++)
        TRY(put_val(c, c->out[0], i, &e, lenc_find(&e, &t, x, i)));
    return AIT_OK;
}

/* ---- OneHotEncoder: a last axis of len(cats_*) ----------------------------------- */

static ait_status ohe_setup(op_ctx *c, ml_vec *cats)
{
    bool s = node_attr(c->n, "cats_strings"), i = node_attr(c->n, "cats_int64s");
    if (s == i)
        return err_set(c->err, AIT_E_INVALID_ARG, "exactly one of cats_int64s and cats_strings "
                       "must be given");
    if (s) TRY(ml_strs(c, "cats_strings", cats));
    else ml_ints(c, "cats_int64s", cats);
    if (!cats->n)
        return err_set(c->err, AIT_E_INVALID_ARG, "%s must list categories",
                       s ? "cats_strings" : "cats_int64s");
    if (s) {
        if (c->in[0]->dtype != AIT_STRING)
            return err_set(c->err, AIT_E_DTYPE, "X is %s; cats_strings needs strings",
                           ait_dtype_name(c->in[0]->dtype));
        return AIT_OK;
    }
    return check_dtype(c, c->in[0], "X", 4, AIT_F32, AIT_F64, AIT_I64, AIT_I32);
}

static ait_status ohe_infer(op_ctx *c)
{
    ml_vec cats;
    TRY(ohe_setup(c, &cats));
    const tensor *x = c->in[0];
    if (x->rank >= AIT_MAX_RANK) return err_set(c->err, AIT_E_SHAPE, "X has too high a rank");
    int64_t d[AIT_MAX_RANK];
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    d[x->rank] = cats.n;
    set_out(c, 0, AIT_F32, x->rank + 1, d);
    return AIT_OK;
}

static ait_status ohe_run(op_ctx *c)
{
    ml_vec cats;
    TRY(ohe_setup(c, &cats));
    const tensor *x = c->in[0];
    float *y = c->out[0]->data;
    bool zeros = attr_int(c->n, "zeros", 1) != 0;
    int64_t nc = cats.n, *order = NULL;
    if (cats.s) {
        if (!(order = op_scratch(c, sizeof *order * (size_t)nc))) return c->err->code;
        strs_order(cats.s, nc, order);
    }
    if (tensor_numel(x)) memset(y, 0, sizeof *y * (size_t)(tensor_numel(x) * nc));
    for (int64_t i = 0, n = tensor_numel(x); i < n; i++) {
        int64_t k = -1, v = 0;
        if (cats.s) {
            k = strs_find(cats.s, order, nc, tensor_str(x, i), false); /* the first listed wins */
        } else {
            v = x->dtype == AIT_I64 || x->dtype == AIT_I32
                    ? elem_get_i64(x->data, x->dtype, i)
                    : (int64_t)elem_get_f64(x->data, x->dtype, i); /* floats truncated */
            for (k = 0; k < nc && cats.i[k] != v; k++) {} /* the first listed wins */
            if (k == nc) k = -1;
        }
        if (k >= 0) y[i * nc + k] = 1.f;
        else if (!zeros && cats.s)
            return err_set(c->err, AIT_E_INVALID_ARG, "'%s' is not a category and zeros is 0",
                           tensor_str(x, i));
        else if (!zeros)
            return err_set(c->err, AIT_E_INVALID_ARG, "value %lld is not a category and zeros is "
                           "0", (long long)v);
    }
    return AIT_OK;
}

OP_TABLE(ml_encode,
         {.name = "LabelEncoder", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .flags = OP_STR_OWNS, .infer = lenc_infer, .run = lenc_run, .domain = ML_DOMAIN},
         {.name = "OneHotEncoder", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .flags = OP_STR_OWNS, .infer = ohe_infer, .run = ohe_run, .domain = ML_DOMAIN},
         {.name = "CategoryMapper", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .flags = OP_STR_OWNS, .infer = lenc_infer, .run = lenc_run, .domain = ML_DOMAIN}, );

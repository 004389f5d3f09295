/* Encoders of ai.onnx.ml: LabelEncoder (1, 2, 4) and OneHotEncoder on
 * numbers; CategoryMapper and the string paths need string tensors, and
 * ZipMap, DictVectorizer and CastMap maps: those are refused by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ml_common.h"

/* ---- LabelEncoder ------------------------------------------------------------- */

typedef struct lenc {
    ml_vec keys, vals;
    ait_dtype kt, vt; /* the element types the keys and values stand for */
    double dflt;
    int64_t dflt_i;
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
    if (node_attr(c->n, st))
        return err_set(c->err, AIT_E_UNSUPPORTED, "%s: string keys or values need string "
                       "tensors, " ML_NO_STRINGS, st);
    if (node_attr(c->n, fl)) {
        *t = AIT_F32;
        return ml_floats(c, fl, NULL, v);
    }
    if (node_attr(c->n, in)) {
        ml_ints(c, in, v);
        *t = AIT_I64;
        return AIT_OK;
    }
    TRY(ml_tensor(c, te, v));
    *t = v->dt;
    return check_dtype(c, &(tensor){.dtype = *t}, te, 5, AIT_F32, AIT_F64, AIT_I64, AIT_I32,
                       AIT_I16);
}

static ait_status lenc_setup(op_ctx *c, lenc *e)
{
    memset(e, 0, sizeof *e);
    if (c->n->version < 2)
        return err_set(c->err, AIT_E_UNSUPPORTED, "LabelEncoder 1 maps strings to integers and "
                       "back: string tensors, " ML_NO_STRINGS);
    TRY(lenc_side(c, "keys", &e->keys, &e->kt));
    TRY(lenc_side(c, "values", &e->vals, &e->vt));
    if (e->keys.n != e->vals.n)
        return err_set(c->err, AIT_E_INVALID_ARG, "%lld keys but %lld values", (long long)e->keys.n,
                       (long long)e->vals.n);
    if (c->in[0]->dtype != e->kt)
        return err_set(c->err, AIT_E_DTYPE, "X is %s but the keys are %s",
                       ait_dtype_name(c->in[0]->dtype), ait_dtype_name(e->kt));
    /* The default: default_tensor (4), else default_float / default_int64. */
    ml_vec d = {0};
    if (c->n->version >= 4) TRY(ml_tensor(c, "default_tensor", &d));
    if (d.given) {
        if (d.n != 1 || d.dt != e->vt)
            return err_set(c->err, AIT_E_INVALID_ARG, "default_tensor must hold one %s",
                           ait_dtype_name(e->vt));
        e->dflt = ml_at(&d, 0);
        e->dflt_i = dtype_is_int(d.dt) ? elem_get_i64(d.t, d.dt, 0) : 0;
    } else if (dtype_is_float(e->vt)) {
        e->dflt = attr_float(c->n, "default_float", -0.0f);
    } else {
        e->dflt_i = attr_int(c->n, "default_int64", -1);
        e->dflt = (double)e->dflt_i;
    }
    return AIT_OK;
}

static ait_status lenc_infer(op_ctx *c)
{
    lenc e;
    TRY(lenc_setup(c, &e));
    set_out(c, 0, e.vt, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

/* Keys sorted for binary search; a repeated key's last value wins. */
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

static void put_val(tensor *y, int64_t k, const lenc *e, int64_t at)
{
    if (at < 0) {
        if (y->dtype == AIT_I64) ((int64_t *)y->data)[k] = e->dflt_i;
        else elem_set_f64(y->data, y->dtype, k, e->dflt);
    } else if (y->dtype == AIT_I64 && e->vals.i) {
        ((int64_t *)y->data)[k] = e->vals.i[at];
    } else if (y->dtype == AIT_I64 && e->vals.t) {
        ((int64_t *)y->data)[k] = elem_get_i64(e->vals.t, e->vals.dt, at);
    } else {
        elem_set_f64(y->data, y->dtype, k, ml_at(&e->vals, at));
    }
}

static ait_status lenc_run(op_ctx *c)
{
    lenc e;
    TRY(lenc_setup(c, &e));
    if (e.keys.n > INT32_MAX) return err_set(c->err, AIT_E_UNSUPPORTED, "too many keys");
    int32_t nk = (int32_t)e.keys.n, nan_at = -1;
    kslot *ks = nk ? op_scratch(c, sizeof *ks * (size_t)nk) : NULL;
    if (nk && !ks) return c->err->code;
    bool ik = dtype_is_int(e.kt);
    for (int32_t k = 0; k < nk; k++) {
        ks[k].at = k;
        ks[k].i = ik ? (e.keys.i ? e.keys.i[k] : elem_get_i64(e.keys.t, e.keys.dt, k)) : 0;
        ks[k].f = ik ? 0 : ml_at(&e.keys, k);
        if (!ik && isnan(ks[k].f)) { /* NaN keys match any NaN; kept out of the sort */
            nan_at = k;
            ks[k].f = INFINITY;
            ks[k].at = -1;
        }
    }
    if (nk) qsort(ks, (size_t)nk, sizeof *ks, kslot_cmp);
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    for (int64_t i = 0, n = tensor_numel(x); i < n; i++) {
        kslot q = {0};
        if (ik) q.i = elem_get_i64(x->data, x->dtype, i);
        else q.f = elem_get_f64(x->data, x->dtype, i);
        int64_t at = -1;
        if (!ik && isnan(q.f)) {
            at = nan_at;
        } else { /* the last slot with this key */
            int32_t lo = 0, hi = nk;
            while (lo < hi) {
                int32_t mid = lo + (hi - lo) / 2;
                bool le = ks[mid].i < q.i || (ks[mid].i == q.i && ks[mid].f <= q.f);
                if (le) lo = mid + 1;
                else hi = mid;
            }
            if (lo > 0 && ks[lo - 1].i == q.i && ks[lo - 1].f == q.f && ks[lo - 1].at >= 0)
                at = ks[lo - 1].at;
        }
        put_val(y, i, &e, at);
    }
    return AIT_OK;
}

/* ---- OneHotEncoder: a last axis of len(cats_int64s) ------------------------------ */

static ait_status ohe_setup(op_ctx *c, ml_vec *cats)
{
    if (node_attr(c->n, "cats_strings"))
        return err_set(c->err, AIT_E_UNSUPPORTED, "cats_strings: string categories need string "
                       "tensors, " ML_NO_STRINGS);
    ml_ints(c, "cats_int64s", cats);
    if (!cats->n) return err_set(c->err, AIT_E_INVALID_ARG, "cats_int64s must list categories");
    if (c->in[0]->dtype == AIT_STRING)
        return err_set(c->err, AIT_E_UNSUPPORTED, "X is a string tensor, " ML_NO_STRINGS);
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
    int64_t nc = cats.n;
    if (tensor_numel(x)) memset(y, 0, sizeof *y * (size_t)(tensor_numel(x) * nc));
    for (int64_t i = 0, n = tensor_numel(x); i < n; i++) {
        int64_t v = x->dtype == AIT_I64 || x->dtype == AIT_I32
                        ? elem_get_i64(x->data, x->dtype, i)
                        : (int64_t)elem_get_f64(x->data, x->dtype, i); /* floats truncated */
        int64_t k = 0;
        while (k < nc && cats.i[k] != v) k++; /* the first listed wins */
        if (k < nc) y[i * nc + k] = 1.f;
        else if (!zeros)
            return err_set(c->err, AIT_E_INVALID_ARG, "value %lld is not a category and zeros is "
                           "0", (long long)v);
    }
    return AIT_OK;
}

/* ---- refused: strings and maps ---------------------------------------------------- */

static ait_status refuse_strings(op_ctx *c)
{
    return err_set(c->err, AIT_E_UNSUPPORTED, "%s maps strings to integers and back: string "
                   "tensors, " ML_NO_STRINGS, c->n->op);
}

static ait_status refuse_maps(op_ctx *c)
{
    return err_set(c->err, AIT_E_UNSUPPORTED, "%s %s maps, which ait does not support", c->n->op,
                   strcmp(c->n->op, "ZipMap") == 0 ? "outputs a sequence of" : "reads");
}

OP_TABLE(ml_encode,
         {.name = "LabelEncoder", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = lenc_infer, .run = lenc_run, .domain = ML_DOMAIN},
         {.name = "OneHotEncoder", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = ohe_infer, .run = ohe_run, .domain = ML_DOMAIN},
         {.name = "CategoryMapper", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = refuse_strings, .run = refuse_strings, .domain = ML_DOMAIN},
         {.name = "ZipMap", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = refuse_maps, .run = refuse_maps, .domain = ML_DOMAIN},
         {.name = "DictVectorizer", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = refuse_maps, .run = refuse_maps, .domain = ML_DOMAIN},
         {.name = "CastMap", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = refuse_maps, .run = refuse_maps, .domain = ML_DOMAIN}, );

/* Feature transforms of ai.onnx.ml: Normalizer, Scaler, Binarizer, Imputer,
 * ArrayFeatureExtractor, FeatureVectorizer. Element-wise, in double, as
 * ONNX Runtime computes them where the spec is vague (Normalizer's MAX is
 * the row's largest value, L1 the sum of magnitudes). */
#include <math.h>
#include <string.h>

#include "ops/ml_common.h"

static ait_status numeric_in(op_ctx *c, const tensor *x)
{
    return check_dtype(c, x, "X", 4, AIT_F32, AIT_F64, AIT_I64, AIT_I32);
}

static ait_status same_shape_infer(op_ctx *c, ait_dtype out)
{
    const tensor *x = c->in[0];
    TRY(numeric_in(c, x));
    set_out(c, 0, out == AIT_UNDEFINED ? x->dtype : out, x->rank, x->dims);
    return AIT_OK;
}

static double get(const tensor *t, int64_t i) { return elem_get_f64(t->data, t->dtype, i); }

/* ---- Normalizer: along axis 1 (the only axis of a 1-D X) ------------------ */

static ait_status norm_kind(op_ctx *c, int *kind)
{
    static const char *const names[] = {"MAX", "L1", "L2"};
    return ml_enum(c, "norm", "MAX", names, 3, kind);
}

static ait_status normalizer_infer(op_ctx *c)
{
    int kind;
    TRY(norm_kind(c, &kind));
    if (c->in[0]->rank < 1) return err_set(c->err, AIT_E_SHAPE, "X must be [N,C] or [C]");
    return same_shape_infer(c, AIT_F32);
}

static ait_status normalizer_run(op_ctx *c)
{
    int kind;
    TRY(norm_kind(c, &kind));
    const tensor *x = c->in[0];
    float *y = c->out[0]->data;
    int64_t len = x->rank == 1 ? x->dims[0] : x->dims[1];
    int64_t inner = x->rank > 2 ? dims_prod(x->dims, 2, x->rank) : 1;
    int64_t outer = x->rank > 1 ? x->dims[0] : 1;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in;
            double d = kind == 0 ? -INFINITY : 0;
            for (int64_t k = 0; k < len; k++) {
                double v = get(x, base + k * inner);
                d = kind == 0 ? fmax(d, v) : kind == 1 ? d + fabs(v) : d + v * v;
            }
            if (kind == 2) d = sqrt(d);
            for (int64_t k = 0; k < len; k++) {
                double v = get(x, base + k * inner);
                y[base + k * inner] = (float)(d != 0 && len ? v / d : v); /* divisor 0: Y = X */
            }
        }
    return AIT_OK;
}

/* ---- Scaler: (x - offset) * scale, each 1 value or one per feature -------- */

static ait_status scaler_attrs(op_ctx *c, ml_vec *off, ml_vec *sc, int64_t nf)
{
    TRY(ml_floats(c, "offset", NULL, off));
    TRY(ml_floats(c, "scale", NULL, sc));
    if ((off->n != 1 && off->n != nf) || (sc->n != 1 && sc->n != nf))
        return err_set(c->err, AIT_E_SHAPE, "offset (%lld values) and scale (%lld) must each have "
                       "1 value or one per feature (%lld)", (long long)off->n, (long long)sc->n,
                       (long long)nf);
    return AIT_OK;
}

static int64_t last_dim(const tensor *x) { return x->rank ? x->dims[x->rank - 1] : 1; }

static ait_status scaler_infer(op_ctx *c)
{
    ml_vec off, sc;
    TRY(scaler_attrs(c, &off, &sc, last_dim(c->in[0])));
    return same_shape_infer(c, AIT_F32);
}

static ait_status scaler_run(op_ctx *c)
{
    ml_vec off, sc;
    const tensor *x = c->in[0];
    int64_t nf = last_dim(x);
    TRY(scaler_attrs(c, &off, &sc, nf));
    float *y = c->out[0]->data;
    for (int64_t i = 0, n = tensor_numel(x); i < n; i++) {
        int64_t f = nf ? i % nf : 0;
        y[i] = (float)((get(x, i) - ml_at(&off, off.n == 1 ? 0 : f)) * ml_at(&sc, sc.n == 1 ? 0 : f));
    }
    return AIT_OK;
}

/* ---- Binarizer -------------------------------------------------------------- */

static ait_status binarizer_infer(op_ctx *c) { return same_shape_infer(c, AIT_UNDEFINED); }

static ait_status binarizer_run(op_ctx *c)
{
    double th = attr_float(c->n, "threshold", 0);
    tensor *y = c->out[0];
    for (int64_t i = 0, n = tensor_numel(y); i < n; i++)
        elem_set_f64(y->data, y->dtype, i, get(c->in[0], i) > th ? 1 : 0);
    return AIT_OK;
}

/* ---- Imputer ------------------------------------------------------------------ */

/* The imputed values for X's kind (floats for float X, ints for integer X),
 * 1 or one per feature, and the value to replace. */
static ait_status imputer_attrs(op_ctx *c, ml_vec *imp, double *from, int64_t nf)
{
    bool fl = dtype_is_float(c->in[0]->dtype);
    if (fl) {
        TRY(ml_floats(c, "imputed_value_floats", NULL, imp));
        *from = attr_float(c->n, "replaced_value_float", 0);
    } else {
        ml_ints(c, "imputed_value_int64s", imp);
        *from = (double)attr_int(c->n, "replaced_value_int64", 0);
    }
    if (imp->n != 1 && imp->n != nf)
        return err_set(c->err, AIT_E_INVALID_ARG, "%s has %lld values; 1 or one per feature "
                       "(%lld) expected", fl ? "imputed_value_floats" : "imputed_value_int64s",
                       (long long)imp->n, (long long)nf);
    return AIT_OK;
}

static ait_status imputer_infer(op_ctx *c)
{
    ml_vec imp;
    double from;
    TRY(numeric_in(c, c->in[0]));
    TRY(imputer_attrs(c, &imp, &from, last_dim(c->in[0])));
    return same_shape_infer(c, AIT_UNDEFINED);
}

static ait_status imputer_run(op_ctx *c)
{
    ml_vec imp;
    double from;
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    int64_t nf = last_dim(x);
    TRY(imputer_attrs(c, &imp, &from, nf));
    bool nan = isnan(from);
    for (int64_t i = 0, n = tensor_numel(x); i < n; i++) {
        if (x->dtype == AIT_I64) { /* exact for every int64 */
            int64_t v = ((const int64_t *)x->data)[i];
            ((int64_t *)y->data)[i] = (double)v == from ? imp.i[imp.n == 1 ? 0 : i % nf] : v;
            continue;
        }
        double v = get(x, i);
        bool hit = nan ? isnan(v) : v == from;
        elem_set_f64(y->data, y->dtype, i, hit ? ml_at(&imp, imp.n == 1 ? 0 : i % nf) : v);
    }
    return AIT_OK;
}

/* ---- ArrayFeatureExtractor: X[..., Y] (strings moved as their pointers:
 * OP_STR_MOVES) ----------------------------------------------------------------- */

static ait_status afe_infer(op_ctx *c)
{
    const tensor *x = c->in[0], *idx = c->in[1];
    TRY(check_dtype(c, x, "X", 5, AIT_F32, AIT_F64, AIT_I64, AIT_I32, AIT_STRING));
    TRY(check_dtype(c, idx, "Y", 1, AIT_I64));
    if (x->rank < 1) return err_set(c->err, AIT_E_SHAPE, "X must have a rank of 1 or more");
    int64_t d[AIT_MAX_RANK];
    int r = x->rank == 1 ? 2 : x->rank;
    if (x->rank == 1) d[0] = 1; /* [C] reads as [1,C] */
    else memcpy(d, x->dims, sizeof(int64_t) * (size_t)(x->rank - 1));
    d[r - 1] = tensor_numel(idx);
    set_out(c, 0, x->dtype, r, d);
    return AIT_OK;
}

static ait_status afe_run(op_ctx *c)
{
    const tensor *x = c->in[0], *idx = c->in[1];
    tensor *z = c->out[0];
    int64_t nf = last_dim(x), k = tensor_numel(idx), rows = nf ? tensor_numel(x) / nf : 0;
    const int64_t *ix = idx->data;
    for (int64_t j = 0; j < k; j++)
        if (ix[j] < 0 || ix[j] >= nf)
            return err_set(c->err, AIT_E_INVALID_ARG, "index %lld is out of range for the last "
                           "axis of X (%lld)", (long long)ix[j], (long long)nf);
    size_t es = ait_dtype_size(x->dtype);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < k; j++)
            memcpy((char *)z->data + (size_t)(r * k + j) * es,
                   (const char *)x->data + (size_t)(r * nf + ix[j]) * es, es);
    return AIT_OK;
}

/* ---- FeatureVectorizer: inputs side by side, each cut or zero-padded to its
 * inputdimensions entry ------------------------------------------------------ */

static ait_status fv_dims(op_ctx *c, const int64_t **dims, int64_t *total, int64_t *n)
{
    int k = 0;
    *dims = attr_ints(c->n, "inputdimensions", &k);
    if (!*dims || k != c->n_in)
        return err_set(c->err, AIT_E_INVALID_ARG, "inputdimensions must give one size per input "
                       "(%d inputs)", c->n_in);
    *total = 0;
    *n = -1;
    for (int i = 0; i < c->n_in; i++) {
        const tensor *x = c->in[i];
        TRY(numeric_in(c, x));
        if ((*dims)[i] < 0 || (*dims)[i] > INT32_MAX)
            return err_set(c->err, AIT_E_INVALID_ARG, "inputdimensions[%d] is %lld", i,
                           (long long)(*dims)[i]);
        *total += (*dims)[i];
        int64_t rows = x->rank >= 2 ? x->dims[0] : 1;
        if (*n >= 0 && rows != *n)
            return err_set(c->err, AIT_E_SHAPE, "input %d has %lld rows; input 0 has %lld", i,
                           (long long)rows, (long long)*n);
        *n = rows;
    }
    return AIT_OK;
}

static ait_status fv_infer(op_ctx *c)
{
    const int64_t *dims;
    int64_t total, n;
    TRY(fv_dims(c, &dims, &total, &n));
    ml_set_out2(c, 0, AIT_F32, n, total);
    return AIT_OK;
}

static ait_status fv_run(op_ctx *c)
{
    const int64_t *dims;
    int64_t total, n;
    TRY(fv_dims(c, &dims, &total, &n));
    float *y = c->out[0]->data;
    int64_t at = 0;
    for (int i = 0; i < c->n_in; i++) {
        const tensor *x = c->in[i];
        int64_t w = n ? tensor_numel(x) / n : 0;
        for (int64_t r = 0; r < n; r++)
            for (int64_t k = 0; k < dims[i]; k++)
                y[r * total + at + k] = k < w ? (float)get(x, r * w + k) : 0.f;
        at += dims[i];
    }
    return AIT_OK;
}

OP_TABLE(ml_transform,
         {.name = "Normalizer", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = normalizer_infer, .run = normalizer_run, .domain = ML_DOMAIN},
         {.name = "Scaler", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = scaler_infer, .run = scaler_run, .domain = ML_DOMAIN},
         {.name = "Binarizer", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = binarizer_infer, .run = binarizer_run, .domain = ML_DOMAIN},
         {.name = "Imputer", .min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
          .infer = imputer_infer, .run = imputer_run, .domain = ML_DOMAIN},
         {.name = "ArrayFeatureExtractor", .min_in = 2, .max_in = 2, .min_out = 1, .max_out = 1,
          .flags = OP_STR_MOVES, .infer = afe_infer, .run = afe_run, .domain = ML_DOMAIN},
         {.name = "FeatureVectorizer", .min_in = 1, .max_in = 1024, .min_out = 1, .max_out = 1,
          .flags = OP_VARIADIC, .infer = fv_infer, .run = fv_run, .domain = ML_DOMAIN}, );

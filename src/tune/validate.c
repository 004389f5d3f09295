#include "tune/validate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Per-dtype defaults, as documented in validate.h: a table, not a switch. */
static const struct {
    ait_dtype t;
    double rtol, atol;
} tol_table[] = {
    {AIT_F64, 1e-7, 1e-9},
    {AIT_F32, 1e-4, 1e-5},
    {AIT_F16, 1e-2, 1e-3},
    {AIT_BF16, 5e-2, 1e-2},
};

tolerance tolerance_for_dtype(ait_dtype t)
{
    tolerance tol = {0, 0, 0, -INFINITY}; /* integers and bool: exact */
    for (size_t i = 0; i < sizeof tol_table / sizeof tol_table[0]; i++)
        if (tol_table[i].t == t) {
            tol.rtol = tol_table[i].rtol;
            tol.atol = tol_table[i].atol;
        }
    return tol;
}

tolerance tolerance_quantised(void)
{
    return (tolerance){0, 0, 1.0, TOL_QUANT_SQNR_DB};
}

/* The small types (float8, int4, ...) are compared by value, exactly: no
 * backend computes them other than through the reference ops. */
static bool has_numbers(ait_dtype t)
{
    return dtype_is_float(t) || dtype_is_int(t) || t == AIT_BOOL || dtype_is_small(t);
}

/* Elements [off, off+n) of t as doubles: the bulk float path when it
 * applies, else one at a time. */
enum { CHUNK = 1024 };
static void load_chunk(const tensor *t, int64_t off, int64_t n, double *buf)
{
    const char *src = (const char *)t->data + (size_t)off * ait_dtype_size(t->dtype);
    if (convert_floats(src, t->dtype, buf, AIT_F64, n)) return;
    for (int64_t i = 0; i < n; i++) buf[i] = elem_get_f64(src, t->dtype, i);
}

/* Whether a non-finite pair matches: the same NaN-ness or the same infinity. */
static bool nonfinite_match(double r, double c)
{
    if (isnan(r) || isnan(c)) return isnan(r) && isnan(c);
    return r == c;
}

/* Strings match exactly or not at all: n_off counts the ones that differ. */
static ait_status compare_strings(const tensor *ref, const tensor *cand, out_metrics *m,
                                  ait_error *e)
{
    int64_t n = tensor_numel(ref);
    if (n != tensor_numel(cand)) return err_set(e, AIT_E_SHAPE, "element counts differ");
    m->numel = n;
    m->atol_scale = 1;
    for (int64_t i = 0; i < n; i++)
        m->n_off += strcmp(tensor_str(ref, i), tensor_str(cand, i)) != 0;
    m->share_off = n ? (double)m->n_off / (double)n : 0;
    m->sqnr_db = m->n_off ? -INFINITY : INFINITY;
    return AIT_OK;
}

/* Maps: keys must be equal, in order (any differing key puts every entry
 * off); values compare as tensors, with the tolerance. */
static ait_status compare_maps(const tensor *ref, const tensor *cand, const tolerance *tol,
                               out_metrics *m, ait_error *e)
{
    const tensor *rk = map_keys(ref), *ck = map_keys(cand);
    int64_t n = tensor_numel(rk);
    bool same = rk->dtype == ck->dtype && n == tensor_numel(ck);
    for (int64_t i = 0; same && i < n; i++)
        same = rk->dtype == AIT_STRING ? !strcmp(tensor_str(rk, i), tensor_str(ck, i))
                                       : ((const int64_t *)rk->data)[i] ==
                                             ((const int64_t *)ck->data)[i];
    if (same) return compare_tensors(map_vals(ref), map_vals(cand), tol, m, e);
    m->numel = m->n_off = n;
    m->atol_scale = 1;
    m->share_off = 1;
    m->sqnr_db = -INFINITY;
    return AIT_OK;
}

/* Sequences (ZipMap's of maps, say): item by item, the metrics merged over
 * all; a different item count, or an item of another kind, dtype or size,
 * puts it all off. */
static ait_status compare_seqs(const tensor *ref, const tensor *cand, const tolerance *tol,
                               out_metrics *m, ait_error *e)
{
    m->atol_scale = 1;
    m->sqnr_db = INFINITY;
    for (int i = 0; i < ref->n_items; i++) {
        const tensor *r = &ref->items[i], *c = i < cand->n_items ? &cand->items[i] : NULL;
        int64_t n = r->kind == VAL_MAP ? tensor_numel(map_keys(r)) : tensor_numel(r);
        out_metrics im;
        if (!c || c->kind != r->kind || c->dtype != r->dtype ||
            (r->kind == VAL_TENSOR && tensor_numel(c) != n) ||
            (r->kind == VAL_MAP && tensor_numel(map_keys(c)) != n)) {
            im = (out_metrics){.numel = n, .n_off = n, .atol_scale = 1, .sqnr_db = -INFINITY};
        } else if (r->kind == VAL_NONE) {
            continue;
        } else {
            TRY(compare_tensors(r, c, tol, &im, e));
        }
        m->numel += im.numel;
        m->n_off += im.n_off;
        m->n_nonfinite += im.n_nonfinite;
        m->max_abs = fmax(m->max_abs, im.max_abs);
        m->max_rel = fmax(m->max_rel, im.max_rel);
        m->atol_scale = fmax(m->atol_scale, im.atol_scale);
        m->sqnr_db = fmin(m->sqnr_db, im.sqnr_db);
        m->sig += im.sig;
        m->noise += im.noise;
    }
    if (cand->n_items != ref->n_items) {
        m->n_off = m->numel > 0 ? m->numel : 1;
        m->sqnr_db = -INFINITY;
    }
    m->share_off = m->numel ? (double)m->n_off / (double)m->numel : m->n_off ? 1 : 0;
    return AIT_OK;
}

ait_status compare_tensors(const tensor *ref, const tensor *cand, const tolerance *tol,
                           out_metrics *m, ait_error *e)
{
    memset(m, 0, sizeof *m);
    if (ref->kind == VAL_MAP && cand->kind == VAL_MAP) return compare_maps(ref, cand, tol, m, e);
    if (ref->kind == VAL_SEQUENCE && cand->kind == VAL_SEQUENCE)
        return compare_seqs(ref, cand, tol, m, e);
    if (ref->kind != VAL_TENSOR || cand->kind != VAL_TENSOR)
        return err_set(e, AIT_E_UNSUPPORTED, "validation compares tensors, maps and sequences, "
                       "not none");
    if (ref->dtype == AIT_STRING && cand->dtype == AIT_STRING)
        return compare_strings(ref, cand, m, e);
    if (!has_numbers(ref->dtype) || !has_numbers(cand->dtype))
        return err_set(e, AIT_E_UNSUPPORTED, "validation of %s tensors is not supported",
                       ait_dtype_name(has_numbers(ref->dtype) ? cand->dtype : ref->dtype));
    int64_t n = tensor_numel(ref);
    if (n != tensor_numel(cand)) return err_set(e, AIT_E_SHAPE, "element counts differ");
    if (n > 0 && (!ref->data || !cand->data))
        return err_set(e, AIT_E_INVALID_ARG, "a tensor to validate has no data");
    tolerance t = tol ? *tol : tolerance_for_dtype(ref->dtype);
    double rb[CHUNK], cb[CHUNK], sig = 0, noise = 0, scale = 1;
    m->numel = n;
    /* atol grows with the output's largest magnitude (see validate.h). */
    for (int64_t off = 0; off < n; off += CHUNK) {
        int64_t k = n - off < CHUNK ? n - off : CHUNK;
        load_chunk(ref, off, k, rb);
        for (int64_t i = 0; i < k; i++)
            if (isfinite(rb[i]) && fabs(rb[i]) > scale) scale = fabs(rb[i]);
    }
    m->atol_scale = scale;
    for (int64_t off = 0; off < n; off += CHUNK) {
        int64_t k = n - off < CHUNK ? n - off : CHUNK;
        load_chunk(ref, off, k, rb);
        load_chunk(cand, off, k, cb);
        for (int64_t i = 0; i < k; i++) {
            double r = rb[i], c = cb[i];
            if (!isfinite(r) || !isfinite(c)) {
                if (isfinite(r)) m->n_nonfinite++;
                if (!nonfinite_match(r, c)) m->n_off++;
                continue;
            }
            double d = fabs(c - r), ar = fabs(r);
            if (d > m->max_abs) m->max_abs = d;
            double rel = d / (ar > VALIDATE_TINY ? ar : VALIDATE_TINY);
            if (rel > m->max_rel) m->max_rel = rel;
            if (d > t.atol * scale + t.rtol * ar) m->n_off++;
            sig += r * r;
            noise += (r - c) * (r - c);
        }
    }
    m->share_off = n ? (double)m->n_off / (double)n : 0;
    m->sig = sig;
    m->noise = noise;
    /* Equal outputs have no noise at all: +inf, not log10(x/0)'s division. */
    if (noise == 0) m->sqnr_db = INFINITY;
    else if (sig == 0) m->sqnr_db = -INFINITY;
    else m->sqnr_db = 10.0 * log10(sig / noise);
    return AIT_OK;
}

static const char *out_name(const char *const *names, int j, char *buf, size_t n)
{
    if (names && names[j]) return names[j];
    snprintf(buf, n, "#%d", j);
    return buf;
}

/* The first bound the metrics break, as a reason; false if none. */
static bool judge(const char *name, const out_metrics *m, const tolerance *t, verdict *v)
{
    if (m->n_nonfinite) {
        snprintf(v->reason, sizeof v->reason,
                 "output '%s': %lld NaN/Inf elements where the reference is finite (bound 0)",
                 name, (long long)m->n_nonfinite);
        return true;
    }
    if (t->max_share < 1 && m->share_off > t->max_share) {
        snprintf(v->reason, sizeof v->reason,
                 "output '%s': share of elements outside rtol %g / atol %g is %g (%lld of %lld), "
                 "bound %g; max abs error %g, max rel error %g",
                 name, t->rtol, t->atol * m->atol_scale, m->share_off, (long long)m->n_off,
                 (long long)m->numel, t->max_share, m->max_abs, m->max_rel);
        return true;
    }
    if (m->sqnr_db < t->min_sqnr_db) {
        snprintf(v->reason, sizeof v->reason, "output '%s': SQNR %.2f dB is below the bound %g dB",
                 name, m->sqnr_db, t->min_sqnr_db);
        return true;
    }
    return false;
}

/* The first structural difference of output j, as a reason; false if none. */
static bool mismatch(const char *name, const tensor *r, const tensor *c, verdict *v)
{
    char a[96], b[96];
    if (c->kind != r->kind)
        snprintf(v->reason, sizeof v->reason, "output '%s': kind of value differs from the reference's",
                 name);
    else if (c->dtype != r->dtype)
        snprintf(v->reason, sizeof v->reason, "output '%s': dtype %s, the reference's is %s", name,
                 ait_dtype_name(c->dtype), ait_dtype_name(r->dtype));
    else if (c->rank != r->rank || memcmp(c->dims, r->dims, (size_t)r->rank * sizeof r->dims[0]))
        snprintf(v->reason, sizeof v->reason, "output '%s': shape %s, the reference's is %s", name,
                 shape_str(c->dims, c->rank, a, sizeof a), shape_str(r->dims, r->rank, b, sizeof b));
    else
        return false;
    return true;
}

/* The verdict names the first failing output; later ones only add metrics. */
static void keep_first(verdict *v, const verdict *failed)
{
    if (!v->pass) return;
    v->pass = false;
    memcpy(v->reason, failed->reason, sizeof v->reason);
}

ait_status validate_outputs(const tensor *const *ref, int n_ref, const tensor *const *cand,
                            int n_cand, const char *const *names, const tolerance *tol,
                            out_metrics *m, verdict *v, ait_error *e)
{
    v->pass = true;
    v->reason[0] = 0;
    if (n_ref < 0 || n_cand < 0 || (n_ref && !ref) || (n_cand && !cand))
        return err_set(e, AIT_E_INVALID_ARG, "validate_outputs: bad output lists");
    if (m) memset(m, 0, (size_t)n_ref * sizeof *m);
    if (n_cand != n_ref) {
        v->pass = false;
        snprintf(v->reason, sizeof v->reason, "%d outputs, the reference has %d", n_cand, n_ref);
        return AIT_OK;
    }
    for (int j = 0; j < n_ref; j++) {
        char nb[16];
        const char *name = out_name(names, j, nb, sizeof nb);
        if (!ref[j] || !cand[j])
            return err_set(e, AIT_E_INVALID_ARG, "validate_outputs: output '%s' is NULL", name);
        verdict local = {true, ""};
        if (mismatch(name, ref[j], cand[j], &local)) {
            keep_first(v, &local);
            continue;
        }
        out_metrics om;
        tolerance t = tol ? *tol : tolerance_for_dtype(ref[j]->dtype);
        ait_status s = compare_tensors(ref[j], cand[j], &t, &om, e);
        if (s != AIT_OK) return err_prefix(e, "output '%s': ", name);
        if (m) m[j] = om;
        if (judge(name, &om, &t, &local)) keep_first(v, &local);
    }
    return AIT_OK;
}

/* Helpers shared by op implementations (declared in op.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"

ait_status in_ints(op_ctx *c, int i, int64_t *vals, int max, int *count)
{
    if (!has_in(c, i)) return err_set(c->err, AIT_E_INVALID_ARG, "input %d is missing", i);
    const tensor *t = c->in[i];
    if (!t->data) return AIT_DEFER;
    if (!dtype_is_int(t->dtype))
        return err_set(c->err, AIT_E_DTYPE, "input %d must be an integer tensor, not %s", i,
                       ait_dtype_name(t->dtype));
    int64_t n = tensor_numel(t);
    if (n > max)
        return err_set(c->err, AIT_E_UNSUPPORTED, "input %d has %lld values, at most %d allowed",
                       i, (long long)n, max);
    for (int64_t k = 0; k < n; k++) vals[k] = elem_get_i64(t->data, t->dtype, k);
    *count = (int)n;
    return AIT_OK;
}

ait_status norm_axis(op_ctx *c, int64_t axis, int rank, int *out)
{
    if (axis < -rank || axis >= rank || (rank == 0 && axis != 0 && axis != -1))
        return err_set(c->err, AIT_E_INVALID_ARG, "axis %lld is out of range for rank %d",
                       (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return AIT_OK;
}

ait_status broadcast_shape(op_ctx *c, const tensor *a, const tensor *b, int *rank, int64_t *dims)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da == db || db == 1) dims[i] = da;
        else if (da == 1) dims[i] = db;
        else {
            char sa[128], sb[128];
            return err_set(c->err, AIT_E_SHAPE, "shapes %s and %s do not broadcast",
                           shape_str(a->dims, a->rank, sa, sizeof sa),
                           shape_str(b->dims, b->rank, sb, sizeof sb));
        }
    }
    *rank = r;
    return AIT_OK;
}

ait_status check_dtype(op_ctx *c, const tensor *t, const char *what, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        if ((ait_dtype)va_arg(ap, int) == t->dtype) {
            va_end(ap);
            return AIT_OK;
        }
    }
    va_end(ap);
    return err_set(c->err, AIT_E_UNSUPPORTED, "%s has unsupported dtype %s", what,
                   ait_dtype_name(t->dtype));
}

void set_out(op_ctx *c, int i, ait_dtype dt, int rank, const int64_t *dims)
{
    if (has_out(c, i)) tensor_set_shape(c->out[i], dt, rank, dims);
}

void *op_scratch(op_ctx *c, size_t bytes) { return c->host->scratch(c, bytes); }

/* Half of size_t at most, so that sums of parts cannot wrap either. */
void *scratch_take(scratch_layout *p, int64_t count, size_t esize)
{
    size_t o = (p->off + 63) & ~(size_t)63;
    if (count < 0 || o > SIZE_MAX / 2 || (uint64_t)count > (SIZE_MAX / 2 - o) / (esize ? esize : 1)) {
        p->overflow = true;
        return NULL;
    }
    p->off = o + (size_t)count * esize;
    return p->base ? p->base + o : NULL;
}

ait_status scratch_commit(op_ctx *c, scratch_layout *p)
{
    if (p->overflow) return err_set(c->err, AIT_E_OVERFLOW, "temporary buffers are too large");
    /* never 0 bytes: op_scratch may then return NULL with no error */
    p->base = op_scratch(c, p->off + 64);
    if (!p->base) return c->err && c->err->code ? c->err->code : AIT_E_NOMEM;
    p->off = 0;
    return AIT_OK;
}

ait_status op_scratch_parts(op_ctx *c, int n, const size_t *bytes, void **parts)
{
    static max_align_t none; /* every part empty: no block; 0 bytes of it are used */
    scratch_layout p = {0};
    for (int pass = 0; pass < 2; pass++) {
        if (pass && (p.off || p.overflow)) TRY(scratch_commit(c, &p)); /* all empty: no block */
        for (int i = 0; i < n; i++) {
            void *q = scratch_take(&p, bytes[i] > INT64_MAX ? -1 : (int64_t)bytes[i], 1);
            /* an empty part too is a pointer (into the block, or to none), never
             * NULL: an op that offsets it by 0 (an empty tensor's) is defined */
            parts[i] = q ? q : (void *)&none;
        }
    }
    return AIT_OK;
}

size_t work_bytes(const tensor *t, ait_dtype wt)
{
    return t && t->dtype != wt ? (size_t)tensor_numel(t) * ait_dtype_size(wt) : 0;
}

ait_status work_in(op_ctx *c, const tensor *t, ait_dtype wt, void *buf, const void **data)
{
    *data = t->data;
    if (t->dtype == wt) return AIT_OK;
    *data = buf;
    return convert_elems(t->data, t->dtype, buf, wt, tensor_numel(t), c->err);
}

void *work_out(tensor *t, ait_dtype wt, void *buf) { return t->dtype == wt ? t->data : buf; }

ait_status work_done(op_ctx *c, tensor *t, const void *w, ait_dtype wt)
{
    if (w == t->data) return AIT_OK;
    return convert_elems(w, wt, t->data, t->dtype, tensor_numel(t), c->err);
}

ait_status check_float(op_ctx *c, const tensor *t, const char *what)
{
    return check_dtype(c, t, what, 4, AIT_F32, AIT_F64, AIT_F16, AIT_BF16);
}

ait_status check_dtype_version(op_ctx *c, ait_dtype t, const char *what)
{
    int since = dtype_since_opset(t);
    if (c->n->version >= since) return AIT_OK;
    return err_set(c->err, AIT_E_DTYPE, "%s is %s, which version %d of the op does not take "
                   "(added in version %d)", what, ait_dtype_name(t), c->n->version, since);
}

ait_status need_in(op_ctx *c, int i, const char *what)
{
    if (!has_in(c, i)) return err_set(c->err, AIT_E_INVALID_ARG, "input %s is missing", what);
    return AIT_OK;
}

int64_t dims_prod(const int64_t *dims, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= dims[i];
    return p;
}

ait_status window_out(op_ctx *c, int i, int64_t in, int64_t s, int64_t dk, int mode,
                      bool ceil_mode, int64_t *pb, int64_t *pe, int64_t *out)
{
    if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
        *out = ceil_div(in, s);
        int64_t total = (*out - 1) * s + dk - in;
        if (total < 0) total = 0;
        *pb = mode == PAD_SAME_UPPER ? total / 2 : total - total / 2;
        *pe = total - *pb;
        return AIT_OK;
    }
    if (mode == PAD_VALID) *pb = *pe = 0;
    int64_t span = in + *pb + *pe - dk;
    if (span < 0)
        return err_set(c->err, AIT_E_SHAPE, "spatial dim %d: the kernel (%lld with dilation) is "
                       "larger than the padded input (%lld)", i, (long long)dk,
                       (long long)(in + *pb + *pe));
    *out = (ceil_mode ? ceil_div(span, s) : span / s) + 1;
    if (ceil_mode && (*out - 1) * s >= in + *pb) (*out)--;
    return AIT_OK;
}

ait_status auto_pad_attr(op_ctx *c, int *mode)
{
    const char *s = attr_str(c->n, "auto_pad", "NOTSET");
    static const char *const names[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *mode = i;
            return AIT_OK;
        }
    return err_set(c->err, AIT_E_INVALID_ARG,
                   "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", s);
}

ait_status ints_attr(op_ctx *c, const char *name, int n, int64_t dflt, int64_t lo, int64_t hi,
                     int64_t *out)
{
    int cnt;
    const int64_t *v = attr_ints(c->n, name, &cnt);
    if (v && cnt != n)
        return err_set(c->err, AIT_E_INVALID_ARG, "%s has %d values, expected %d", name, cnt, n);
    for (int i = 0; i < n; i++) {
        out[i] = v ? v[i] : dflt;
        if (out[i] < lo || out[i] > hi)
            return err_set(c->err, AIT_E_INVALID_ARG, "%s[%d] = %lld is out of range", name, i,
                           (long long)out[i]);
    }
    return AIT_OK;
}

void row_strides(const int64_t *dims, int rank, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

void bcast_strides(const tensor *t, int rank, const int64_t *dims, int64_t *strides)
{
    int64_t own[AIT_MAX_RANK];
    row_strides(t->dims, t->rank, own);
    for (int i = 0; i < rank; i++) {
        int j = i - (rank - t->rank);
        strides[i] = (j < 0 || t->dims[j] == 1 || dims[i] == 1) ? 0 : own[j];
    }
}

static const char *str_or_empty(char *const *s, int64_t i) { return s[i] ? s[i] : ""; }

static int by_str(const void *a, const void *b, void *strs)
{
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    int d = strcmp(str_or_empty(strs, i), str_or_empty(strs, j));
    return d ? d : (i > j) - (i < j);
}

void strs_order(char *const *s, int64_t n, int64_t *order)
{
    for (int64_t k = 0; k < n; k++) order[k] = k;
    if (n > 1) qsort_r(order, (size_t)n, sizeof *order, by_str, (void *)s);
}

int64_t strs_find(char *const *s, const int64_t *order, int64_t n, const char *v, bool last)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) { /* the first entry above v (last) or not below it */
        int64_t mid = lo + (hi - lo) / 2;
        int d = strcmp(str_or_empty(s, order[mid]), v);
        if (d < 0 || (last && d == 0)) lo = mid + 1;
        else hi = mid;
    }
    if (last) return lo > 0 && !strcmp(str_or_empty(s, order[lo - 1]), v) ? order[lo - 1] : -1;
    return lo < n && !strcmp(str_or_empty(s, order[lo]), v) ? order[lo] : -1;
}

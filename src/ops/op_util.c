/* Helpers shared by op implementations (declared in op.h). */
#include <stdarg.h>
#include <string.h>

#include "ops/op.h"
#include "runtime/exec.h"

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

void *op_scratch(op_ctx *c, size_t bytes) { return exec_scratch(c->x, c, bytes); }

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

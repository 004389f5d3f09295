/* Copies between dense tensors and key/value cache views (kv.h). */
#include "core/kv.h"

#include <string.h>

void kv_split(const int64_t *dims, int rank, int axis, int64_t *outer, int64_t *inner)
{
    *outer = *inner = 1;
    for (int d = 0; d < axis; d++) *outer *= dims[d];
    for (int d = axis + 1; d < rank; d++) *inner *= dims[d];
}

void kv_rows_copy(void *dst, int64_t dcap, int64_t d0, const void *src, int64_t scap, int64_t s0,
                  int64_t n, int64_t outer, int64_t inner, size_t esz)
{
    if (n <= 0 || outer <= 0 || inner <= 0) return;
    const size_t row = (size_t)inner * esz, bytes = (size_t)n * row;
    for (int64_t o = 0; o < outer; o++)
        memcpy((char *)dst + (size_t)(o * dcap + d0) * row,
               (const char *)src + (size_t)(o * scap + s0) * row, bytes);
}

void kv_strides(const int64_t *dims, int rank, int axis, int64_t cap, int64_t *st)
{
    int64_t n = 1;
    for (int d = rank - 1; d >= 0; d--) {
        st[d] = n;
        n *= d == axis ? cap : dims[d];
    }
}

ait_status kv_fits(const tensor *t, const int64_t *cdims, int rank, int axis, const char *what,
                   ait_error *e)
{
    bool ok = t->kind == VAL_TENSOR && t->rank == rank && t->dims[axis] <= cdims[axis];
    for (int d = 0; ok && d < rank; d++) ok = d == axis || t->dims[d] == cdims[d];
    if (ok) return AIT_OK;
    char a[160], b[160];
    return err_set(e, AIT_E_SHAPE, "output '%s' needs shape %s; the cache bound to it is %s "
                   "(%lld positions along axis %d)", what, shape_str(t->dims, t->rank, a, sizeof a),
                   shape_str(cdims, rank, b, sizeof b), (long long)cdims[axis], axis);
}

/* Axis detection from observed shapes: static, batch (a constant multiple
 * of the batch size) or dynamic. */
#include <stdio.h>
#include <string.h>

#include "tune/axes.h"

ait_status axes_observe(axis_obs *o, int64_t batch, int rank, const int64_t *dims, ait_error *e)
{
    if (rank < 0 || rank > AIT_MAX_RANK)
        return err_set(e, AIT_E_INVALID_ARG, "axes: rank %d is outside 0..%d", rank, AIT_MAX_RANK);
    if (batch < 1)
        return err_set(e, AIT_E_INVALID_ARG, "axes: batch %lld is below 1", (long long)batch);
    if (o->n > 0 && rank != o->rank)
        return err_set(e, AIT_E_SHAPE, "axes: rank %d at batch %lld, but rank %d before", rank,
                       (long long)batch, o->rank);
    if (o->n >= AXES_MAX_OBS)
        return err_set(e, AIT_E_INVALID_ARG, "axes: more than %d observations", AXES_MAX_OBS);
    if (o->n == 0) o->rank = rank;
    o->batch[o->n] = batch;
    for (int d = 0; d < rank; d++) o->dims[o->n][d] = dims[d];
    o->n++;
    return AIT_OK;
}

/* The multiple m >= 1 with size = m * batch in every observation of axis
 * d, or 0 when there is none. */
static int64_t batch_mult(const axis_obs *o, int d)
{
    if (o->batch[0] < 1 || o->dims[0][d] < o->batch[0] || o->dims[0][d] % o->batch[0]) return 0;
    int64_t m = o->dims[0][d] / o->batch[0];
    for (int k = 1; k < o->n; k++) /* dims / batch, not m * batch: no overflow */
        if (o->batch[k] < 1 || o->dims[k][d] % o->batch[k] || o->dims[k][d] / o->batch[k] != m)
            return 0;
    return m;
}

void axes_classify(const axis_obs *o, axis_info *out)
{
    memset(out, 0, sizeof *out);
    out->rank = o->n > 0 ? o->rank : 0;
    /* A batch axis needs two batch sizes: with one, every axis is as static
     * as the batch, and saying "batch" would be a guess. */
    bool batches_differ = false;
    for (int k = 1; k < o->n; k++) batches_differ |= o->batch[k] != o->batch[0];
    for (int d = 0; d < out->rank; d++) {
        int64_t lo = o->dims[0][d], hi = lo;
        for (int k = 1; k < o->n; k++) {
            if (o->dims[k][d] < lo) lo = o->dims[k][d];
            if (o->dims[k][d] > hi) hi = o->dims[k][d];
        }
        out->min[d] = lo;
        out->max[d] = hi;
        if (lo == hi) continue; /* AXIS_STATIC, no name */
        int64_t m = batches_differ ? batch_mult(o, d) : 0;
        out->kind[d] = m ? AXIS_BATCH : AXIS_DYNAMIC;
        out->mult[d] = m;
        snprintf(out->name[d], sizeof out->name[d], "%s%d", m ? "batch" : "dim", d);
    }
}

const char *axes_shape_str(const axis_info *a, int which, char *buf, size_t n)
{
    if (!n) return buf;
    size_t at = 0;
    buf[0] = '\0';
#define PUT(...)                                                           \
    do {                                                                   \
        int w_ = snprintf(buf + at, n - at, __VA_ARGS__);                  \
        at = w_ < 0 || (size_t)w_ >= n - at ? n - 1 : at + (size_t)w_;     \
    } while (0)
    PUT("[");
    for (int d = 0; d < a->rank; d++) {
        const char *sep = d ? "," : "";
        if (which == 0 && a->kind[d] == AXIS_BATCH && a->mult[d] > 1)
            PUT("%s%lld*%s", sep, (long long)a->mult[d], a->name[d]);
        else if (which == 0 && a->kind[d] != AXIS_STATIC)
            PUT("%s%s", sep, a->name[d]);
        else
            PUT("%s%lld", sep, (long long)(which == 2 ? a->max[d] : a->min[d]));
    }
    PUT("]");
#undef PUT
    return buf;
}

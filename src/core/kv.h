/* A key/value cache appended in place: one caller buffer, of capacity `cap`
 * positions along the past-length axis, bound as both a model input (the
 * past: its first `len` positions) and a model output (the present: the
 * past and the new positions, written after it). Such a tensor is a view:
 * element strides of the dense tensor of its dims with dims[axis] replaced
 * by cap. The positions of one index before the axis are contiguous (the
 * axis' inner dims follow), so every copy is a run of memcpy's. */
#ifndef AIT_CORE_KV_H
#define AIT_CORE_KV_H
#include "core/tensor.h"

/* One cache pair of a run, in the ports of whatever runs it (the model's
 * inputs and outputs for a binding, a module's for a backend). */
typedef struct kv_view {
    int in, out;  /* input port (past) and output port (present) */
    int axis;     /* the past-length axis, 0 <= axis < rank */
    int64_t cap;  /* the buffer's positions along axis */
    bool copied;  /* set by the run: the cache was copied, not appended in place */
} kv_view;

/* Product of dims before axis, and after it. */
void kv_split(const int64_t *dims, int rank, int axis, int64_t *outer, int64_t *inner);

/* For each of `outer` slabs, n positions of `inner` elements of esz bytes:
 * from src (slab extent scap positions, starting at position s0) to dst
 * (extent dcap, starting at d0). dst and src do not overlap. */
void kv_rows_copy(void *dst, int64_t dcap, int64_t d0, const void *src, int64_t scap, int64_t s0,
                  int64_t n, int64_t outer, int64_t inner, size_t esz);

/* The element strides of a view of dims (rank r) with capacity cap along
 * axis (cap == dims[axis]: the dense strides). */
void kv_strides(const int64_t *dims, int rank, int axis, int64_t cap, int64_t *st);

/* Whether present t (a run's output) fits a cache of dims cdims: the same
 * rank and dims but along axis, and at most cdims[axis] positions there;
 * else AIT_E_SHAPE naming `what` (the output) and both shapes. */
ait_status kv_fits(const tensor *t, const int64_t *cdims, int rank, int axis, const char *what,
                   ait_error *e);

#endif

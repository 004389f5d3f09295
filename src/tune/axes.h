/* Axis detection: from the shapes one value took at several batch sizes,
 * which axes follow the batch, which change otherwise, which are static. */
#ifndef AIT_TUNE_AXES_H
#define AIT_TUNE_AXES_H
#include "core/tensor.h"

#define AXES_MAX_OBS 64

/* Observations of one value: its shape in each run, with that run's batch. */
typedef struct axis_obs {
    int n;
    int rank; /* set by the first observation */
    int64_t batch[AXES_MAX_OBS];
    int64_t dims[AXES_MAX_OBS][AIT_MAX_RANK];
} axis_obs;

/* Records one observation (batch >= 1); fails if the rank changes between
 * runs or there is no room left (extra observations beyond the limit are
 * refused). */
ait_status axes_observe(axis_obs *o, int64_t batch, int rank, const int64_t *dims, ait_error *e);

typedef enum axis_kind { AXIS_STATIC = 0, AXIS_BATCH, AXIS_DYNAMIC } axis_kind;

typedef struct axis_info {
    int rank;
    axis_kind kind[AIT_MAX_RANK];
    int64_t mult[AIT_MAX_RANK]; /* AXIS_BATCH: size = mult * batch */
    int64_t min[AIT_MAX_RANK], max[AIT_MAX_RANK];
    char name[AIT_MAX_RANK][16]; /* "batch0" (batch axis at position 0), "dim1", "" if static */
} axis_info;

/* Classifies each axis: the same size in every observation is static; a
 * size that is one constant integer multiple (>= 1) of the batch in every
 * observation, with at least two distinct batch sizes seen, is a batch axis;
 * anything else that changes is dynamic. Keeps the min and max seen. */
void axes_classify(const axis_obs *o, axis_info *out);
/* Formats the shape with names: "[batch0,3,224,224]" (a batch axis that is
 * a multiple of the batch shows it: "[3*batch0,5]"), or the min / max
 * shapes as numbers ("[1,3,224,224]"). which: 0 named, 1 min, 2 max.
 * Truncates to fit n; returns buf. */
const char *axes_shape_str(const axis_info *a, int which, char *buf, size_t n);

#endif

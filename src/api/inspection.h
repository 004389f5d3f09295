/* The public ait_inspection handle (api/inspect.c), shared with the public
 * tuning API (api/tune.c), which tunes what it selects on its samples. */
#ifndef AIT_API_INSPECTION_H
#define AIT_API_INSPECTION_H
#include "tune/inspect.h"
#include "tune/select.h"

struct ait_inspection {
    const ait_model *m;
    sample_set *samples;
    inspection *r;
    selection sel;
    ait_error err; /* the last failure */
};

#endif

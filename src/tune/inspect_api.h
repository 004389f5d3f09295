/* The public ait_inspection handle (inspect_api.c), shared with the public
 * tuning API (tune_api.c), which tunes what it selects on its samples. */
#ifndef AIT_TUNE_INSPECT_API_H
#define AIT_TUNE_INSPECT_API_H
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

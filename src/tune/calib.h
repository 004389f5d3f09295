/* Activation calibration for static int8 (tune --quant int8, native's
 * "int8" variant): the float range of every value a Conv reads as its data
 * input, over the reference runs of the whole model on the tuning samples.
 * Min/max by default; with a percentile p (say 99.99) each run's p-th and
 * (100 - p)-th percentiles instead, averaged over the runs, so that a few
 * outliers do not stretch the scale. */
#ifndef AIT_TUNE_CALIB_H
#define AIT_TUNE_CALIB_H
#include "backends/backend.h"
#include "exec/exec.h"

typedef struct calib {
    act_ranges out;  /* what candidates take (candidate_cfg.ranges) */
    double pct;      /* 0: min/max */
    int runs;
    double *sum_lo, *sum_hi; /* percentile: the runs' sums */
} calib;

/* The values of g to calibrate (float32 data inputs of Convs), ranges
 * empty; pct 0 (min/max) or in (50, 100]. */
ait_status calib_init(calib *c, const graph *g, double pct, ait_error *e);
/* Widens the ranges with the values a run of `whole` (exec_keep_values)
 * left; a value the run did not compute is skipped. */
ait_status calib_observe(calib *c, const exec *whole, const graph *g, ait_error *e);
/* The final ranges and their hash (c->out). */
void calib_finish(calib *c);
void calib_free(calib *c);

#endif

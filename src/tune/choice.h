/* The choice for one module at one bucket: its strategy applied to its
 * measured candidates, with the margin a candidate must beat the baseline
 * by (strategy.h). The tuner makes it; the whole-plan check makes it again
 * for single-backend plans. */
#ifndef AIT_TUNE_CHOICE_H
#define AIT_TUNE_CHOICE_H
#include "tune/result.h"
#include "tune/strategy.h"

/* The margin tune_opts.margin stands for (0: STRAT_DEFAULT_MARGIN, below 0:
 * none). */
double tune_margin(double margin);
/* The candidate strategy st picks for tm: out->index indexes tm->cands (0
 * the baseline). The baseline's own failure keeps it, said in out->why. */
ait_status tune_pick(const tune_module *tm, const strategy *st, choice *out, ait_error *e);
/* Parses tm's strategy and chooses with margin (as tune_margin reads it):
 * sets tm->chosen, tm->why and tm->all_failed. */
ait_status tune_choose(tune_module *tm, double margin, ait_error *e);

#endif

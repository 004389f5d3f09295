/* The whole-plan check. Each module's choice comes from profiling it
 * alone, which cannot see what its neighbours do to it: the caches and
 * memory pages they leave, the bandwidth they take. A mix of per-module
 * winners can then lose to one backend everywhere (the MLP at batch 1: the
 * reference GEMVs won their module profiles and lost the whole model to
 * oneDNN). So before the plan of a bucket is final, the tuner runs the whole
 * model on it and on each single-backend plan ("NAME alone": every module on
 * NAME's fastest valid candidate, as strategy only:NAME picks, the baseline
 * where NAME has none; "reference alone" is the untuned model) and keeps the
 * faster.
 *
 * Only plans whose module profiles add up to within CHECK_WITHIN of the
 * tuned plan's are run, the others cannot win. The plans run in child
 * processes one after the other (each process places memory afresh, and
 * where pages land moves a memory-bound model by 10% and more); in each,
 * every plan is built and primed as a session would, warmed up, then run in
 * rounds (one run of each plan per round, the order rotating) for at least
 * CHECK_MIN_ROUNDS rounds and about CHECK_SECS seconds per plan. A plan's
 * ratio is the median over the processes of (tuned plan's median / its
 * median), its spread half the interquartile range of those ratios
 * (relative to their median). A plan replaces the tuned one when its ratio
 * exceeds 1 + need, need the largest of the margin (a candidate's over the
 * baseline), CHECK_MIN_MARGIN and its spread: a win the processes do not
 * agree on is noise (at load, resnet50's plan once went to "native whole"
 * on a 1.07x that an idle re-run did not see). Processes are added, from CHECK_MIN_PROCS to
 * CHECK_MAX_PROCS, until no single process can change the decision: the
 * same plan wins with each plan's lowest ratio left out and with its
 * highest left out. Buckets where a module's strategy is not about speed
 * (one-backend, only, latency-budget, first-wins) are not checked. */
#ifndef AIT_TUNE_PLAN_CHECK_H
#define AIT_TUNE_PLAN_CHECK_H
#include "tune/result.h"
#include "tune/tuner.h"

#define CHECK_WITHIN 2.0
#define CHECK_MIN_ROUNDS 5
#define CHECK_MAX_ROUNDS 200
#define CHECK_WARMUP 2
#define CHECK_SECS 0.15
#define CHECK_MIN_PROCS 5
/* The least a plan must win by to replace the tuned one, whatever the margin. */
#define CHECK_MIN_MARGIN 0.03

/* Checks the plan of one bucket: mods[0..n) are the report's modules at
 * that bucket (their choices made), wm the whole module there (NULL: none;
 * its fastest valid candidate of each backend runs as "NAME whole": the
 * model as that one module), inputs the model's inputs of a batch at it.
 * Fills *out; on CHECK_SWITCHED each module's chosen and why are changed,
 * or, when a whole plan is taken, the whole module's. A failed process is an outcome (CHECK_FAILED, the plans kept),
 * not an error; errors are for memory and bad arguments. */
ait_status plan_check_bucket(const ait_model *m, const inspection *insp, const tune_opts *o,
                             tune_module *mods, int n, tune_module *wm, tensor *const *inputs,
                             tune_check *out, ait_error *e);

/* The decision alone, from out->plans[k].median[0..n_procs): fills each
 * plan's ratio, spread and need and returns the plan to take (0: the tuned
 * one), the fastest whose ratio beats the tuned plan's (and any faster one
 * before it) by its need, then the baseline plan if that one does not beat
 * it by the margin. */
int plan_check_decide(tune_check *c, double margin);

/* Whether more processes could not change the decision (see above). */
bool plan_check_settled(tune_check *c, double margin);

#endif

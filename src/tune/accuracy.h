/* The end-to-end accuracy guard. Each quantised candidate is judged alone,
 * by the SQNR of its module's outputs; errors of several quantised modules
 * add up through the model, so once every module has its choice (and the
 * whole-plan check has run), the whole model runs on each bucket's plan, in
 * a child process, on every tuning sample at that bucket, against the
 * float32 reference: per model output the largest absolute and relative
 * error, the SQNR over all samples and, for a classifier-like output, the
 * share of rows whose top-1 class agrees. With a budget (acc_budget) a plan
 * that misses it is walked back: the quantised module with the largest
 * error (lowest module SQNR) first goes back to its best float32 candidate,
 * the model is measured again, and so on until the plan fits; each module
 * walked back says so in its why. */
#ifndef AIT_TUNE_ACCURACY_H
#define AIT_TUNE_ACCURACY_H
#include "exec/exec.h"
#include "tune/result.h"
#include "tune/tuner.h"

/* Fewer sample rows than this (all buckets alike) make the figures, and
 * the scales of any calibration, rest on too little: the tuner warns. */
#define ACC_MIN_ROWS 16

/* Parses a budget: "none", or comma-separated bounds, each once:
 *   sqnr=DB     every float output's end-to-end SQNR at least DB ("30", "30dB")
 *   top1=SHARE  at most this share of a classifier output's rows with another
 *               top-1 class than the reference's ("0.01" or "1%")
 *   abs=X       every float output's largest absolute error at most X
 * *out has nothing set for "none". The error names the bad term (the caller
 * names the option). */
ait_status acc_budget_parse(const char *spec, acc_budget *out, ait_error *e);
/* "sqnr>=30 dB, top1 disagreement<=1%" (or "none") into buf. */
void acc_budget_str(const acc_budget *b, char *buf, size_t n);

/* Whether output t (a reference output; port its graph spec, may be NULL)
 * is classifier-like: a float tensor of rank 2, [rows, classes] with at
 * least 2 classes, whose first axis is the batch axis where the inspection
 * told batch axes apart (with one batch size it could not: any rank-2 float
 * output with 2 or more columns counts). */
bool acc_classifier(const tensor *t, const port_spec *port, bool static_shapes);
/* Adds one run's output cand against ref into o (same shape and dtype, else
 * an error); top-1 rows only when o->classifier. */
ait_status acc_add(const tensor *ref, const tensor *cand, acc_out *o, ait_error *e);
/* o's SQNR over everything added: +INFINITY with no noise. */
double acc_sqnr(const acc_out *o);
/* Share of o's rows whose top-1 differs (0 when not a classifier). */
double acc_top1_off(const acc_out *o);
/* Whether f meets b; when not, why names the output, the figure and the
 * bound ("end-to-end SQNR 21.3 dB < budget 30 dB on output 'logits'"). */
bool acc_fits(const acc_budget *b, const acc_figures *f, char *why, size_t n);

/* The guard at one bucket: mods[0..n) are the report's entries there (a
 * whole module among them), batches[0..n_batches) the model's inputs of
 * every tuning batch at it, ref the whole model on the reference backend
 * (its outputs are read after each run). Fills *out; walks back (changing
 * mods' chosen, walked_back and why) when b is set and missed. A run that
 * fails is an outcome (out->failed, the plan kept), not an error. */
ait_status acc_guard_bucket(const ait_model *m, const inspection *insp, const tune_opts *o,
                            const acc_budget *b, tune_module *mods, int n, exec *ref,
                            tensor *const *const *batches, int n_batches, tune_accuracy *out,
                            ait_error *e);

#endif

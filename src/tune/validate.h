/* Validation of a candidate: its outputs against the reference backend's.
 * A candidate that fails is recorded with the verdict's reason and never
 * chosen (design.md, Tuning). */
#ifndef AIT_TUNE_VALIDATE_H
#define AIT_TUNE_VALIDATE_H
#include <stdbool.h>

#include "core/tensor.h"

/* How close is close enough. An element is "off" when
 * |cand - ref| > atol * S + rtol * |ref|, where S is the largest magnitude in
 * the reference output when above 1 (else 1): rounding errors of float sums
 * grow with the size of the terms summed, not of the result, so an element
 * that cancels to near zero (a ReLU output of a deep layer) carries the
 * error of its neighbours. A non-finite element is off unless the reference
 * holds the same NaN or infinity. Checks:
 *   share of off elements  <= max_share  (max_share >= 1 turns it off)
 *   SQNR in dB             >= min_sqnr_db (-INFINITY turns it off)
 * A candidate with NaN/Inf where the reference is finite always fails.
 *
 * Defaults (tolerance_for_dtype), by the output's dtype:
 *   float64            rtol 1e-7  atol 1e-9  share 0
 *   float32            rtol 1e-4  atol 1e-5  share 0
 *   float16            rtol 1e-2  atol 1e-3  share 0
 *   bfloat16           rtol 5e-2  atol 1e-2  share 0   (8 significant bits)
 *   integers and bool  exact                 share 0
 *   float8, float4, int4, int2, ... (the small types)  exact (by value)
 * SQNR is reported but not judged by these. Quantised candidates, whose
 * errors are large per element but small overall, are judged by SQNR alone
 * (tolerance_quantised): SQNR >= 25 dB, no share bound. */
/* The rules' version, part of every cached verdict's key (tune/cache.h):
 * bump it when a default or the judging changes, so that verdicts cached
 * under the old rules are recomputed. 2: atol scaled by S. 3: modules
 * quantising activations judged by SQNR (TOL_PREQUANT_SQNR_DB). */
#define VALIDATE_RULES 3

typedef struct tolerance {
    double rtol, atol;
    double max_share;   /* fraction 0..1 of elements allowed off */
    double min_sqnr_db; /* -INFINITY: not checked */
} tolerance;

#define TOL_QUANT_SQNR_DB 25.0
/* A module that quantises values it computes (DynamicQuantizeLinear,
 * QuantizeLinear of an activation: a model that arrives quantised): a
 * float32 difference upstream of the rounding moves an element by one
 * quantum, so every candidate but the reference is judged by SQNR alone.
 * Flipping a share f of the elements by one quantum q adds f q^2 of noise
 * against the q^2 / 12 the quantisation itself adds: 40 dB still leaves
 * about 5% of the elements free to flip in an 8-bit model whose own SQNR
 * against float32 is near 38 dB, and catches anything coarser. */
#define TOL_PREQUANT_SQNR_DB 40.0
/* The denominator floor of the relative error: max(|ref|, VALIDATE_TINY). */
#define VALIDATE_TINY 1e-12

/* The defaults above for an output of dtype t. */
tolerance tolerance_for_dtype(ait_dtype t);
/* SQNR >= TOL_QUANT_SQNR_DB, nothing else. */
tolerance tolerance_quantised(void);

/* What one output measured. Pairs where either side is NaN/Inf are left
 * out of the error and SQNR sums (they are counted in n_off and n_nonfinite
 * instead). */
typedef struct out_metrics {
    int64_t numel;
    int64_t n_off;       /* elements outside rtol/atol (incl. non-finite mismatches) */
    int64_t n_nonfinite; /* NaN/Inf in the candidate where the reference is finite */
    double max_abs;      /* max |cand - ref| */
    double max_rel;      /* max |cand - ref| / max(|ref|, VALIDATE_TINY) */
    double share_off;    /* n_off / numel (0 for an empty tensor) */
    double atol_scale;   /* S above */
    double sqnr_db;      /* 10 log10(sum ref^2 / sum (ref - cand)^2); +INFINITY if equal */
    double sig, noise;   /* those two sums, so that SQNR over several runs can be summed */
} out_metrics;

typedef struct verdict {
    bool pass;
    /* Empty when pass; else one sentence naming the first failing output,
     * the metric, its value and the bound. */
    char reason[320];
} verdict;

/* Compares the candidate's outputs cand[0..n_cand) with the reference's
 * ref[0..n_ref): count, dtype and shape must be equal, then the metrics
 * are judged by *tol (NULL: tolerance_for_dtype of each output).
 * names[j] names output j in the reason (names may be NULL: "#j").
 * m, if not NULL, has room for n_ref entries and receives every output's
 * metrics (left zeroed for outputs whose count/shape/dtype differ).
 * Nothing is allocated; inputs are only read.
 * Returns AIT_OK whenever the comparison was made, pass or fail (see *v);
 * an error only for bad arguments (NULL data, a non-tensor value, a dtype
 * without numbers such as string). */
ait_status validate_outputs(const tensor *const *ref, int n_ref, const tensor *const *cand,
                            int n_cand, const char *const *names, const tolerance *tol,
                            out_metrics *m, verdict *v, ait_error *e);

/* The metrics of one pair of same-shaped, same-dtype tensors (no judging);
 * maps compare keys exactly (any differing key puts all off) and values
 * with the tolerance; sequences item by item, the metrics merged.
 * Returns AIT_OK, or an error for a NULL buffer or a dtype without numbers. */
ait_status compare_tensors(const tensor *ref, const tensor *cand, const tolerance *tol,
                           out_metrics *m, ait_error *e);

#endif

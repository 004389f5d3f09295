/* The tuner: for each selected module and batch bucket, try every candidate
 * (backend x threads), each in a child process with a time limit: build,
 * validate against the reference, profile; then let the module's strategy
 * pick, keeping the baseline (reference, one thread) unless a candidate
 * beats it by the margin.
 *
 * A decoder (tune/buckets.h) is tuned per (batch, sequence, past) bucket:
 * each sample in its own (sequence, past) bucket, with the samples of that
 * bucket only, at every batch bucket.
 *
 * Inputs: the samples are grouped by shape (apart from batch axes); each
 * group gives one or more distinct batches at a bucket (consecutive samples
 * until the bucket is full). A candidate is validated on every batch (at
 * most opts.max_batches of them) and timed on the first. When the module
 * has dynamic (non-batch) axes and the samples come in several shapes, it is
 * also validated at the smallest and the largest module input shapes the
 * groups give ("at max shape ..." when it fails there), whatever the cap.
 *
 * Results are cached (tune/cache.h): a trial whose key is in the cache is
 * not run again, and its candidate says `cached`. */
#ifndef AIT_TUNE_TUNER_H
#define AIT_TUNE_TUNER_H
#include "backends/backend.h"
#include "io/json.h"
#include "tune/inspect.h"
#include "tune/profile.h"
#include "tune/select.h"
#include "tune/result.h"
#include "tune/strategy.h"

/* The weights above which tuning profiles cold by default: 32 MiB, the
 * last-level cache one core group of a large x86 server shares (CPUID's
 * figure is not used: virtual machines report whole sockets, or nothing). */
#define TUNE_COLD_BYTES ((int64_t)32 << 20)

enum { WHOLE_OFF = 0, WHOLE_CHECK, WHOLE_FORCE };

typedef struct tune_opts {
    const sample_set *samples;
    int n_batch, batch[16];   /* batch sizes asked for; tuned at their buckets */
    /* A decoder's sequence and past-length buckets (ascending; n 0: from the
     * samples, tune/buckets.h). Each sample is tuned in its (seq, past)
     * bucket, at every batch bucket; a model without a sequence axis
     * ignores them. */
    int n_seq, seq_buckets[16];
    int n_past, past_buckets[16];
    const selection *sel;     /* modules and their strategies (n 0: the whole model) */
    int max_threads;          /* candidates use 1..max_threads (default 1) */
    double timeout;           /* seconds per candidate (default 60) */
    profile_opts prof;
    /* Progress: before each candidate, where the tune is (PROGRESS: a bar,
     * the module, the candidate); after it, its result (DEBUG); the
     * whole-plan check's outcome (INFO); cache warnings (WARN); an empty
     * PROGRESS message at the end (the status line is done). */
    logger log;
    const char *cache_dir;    /* results cache folder (tune/cache.h); NULL: no cache */
    const struct gemm_tuned *gemm; /* per-shape GEMM configs for native candidates; NULL: none */
    int max_batches;          /* distinct sample batches validated per bucket; <= 0: all */
    /* What a candidate must beat the baseline by (strategy.h): 0 the
     * default (STRAT_DEFAULT_MARGIN), < 0 none, else a fraction below 1. */
    double margin;
    /* Profiling with cold caches (prof.flush_bytes): 1 always, -1 never, 0
     * when the model's weights exceed TUNE_COLD_BYTES, since then a module
     * of the whole model finds none of its weights in the caches. */
    int cold;
    /* Time each candidate at one thread by its thread's CPU time
     * (profile_thread_cpu_ns) instead of the wall clock: on a machine other
     * processes keep busy, the time the candidate itself costs, not the time
     * it waited for the core. Candidates at more threads stay on the wall
     * clock (their latency is what parallel work saves). */
    bool cpu_clock;
    /* Check the whole plan at each bucket against single-backend plans
     * before it is final (tune/plan_check.h). Backends must be the
     * registry's. */
    bool plan_check;
    /* The `whole` candidate (result.h, tune_module.whole): with plan_check
     * and no selected module that holds every node, the root is tuned too at
     * each bucket and the check runs its fastest valid candidate of each
     * backend ("NAME whole") beside the other plans. WHOLE_FORCE takes the
     * fastest valid one that is not the reference without the check (to
     * compare with, and for tests). */
    int whole;
    /* Quantised variants to try besides float32 (backend.quant_variants):
     * a comma-separated list of names ("bf16,int8dq"), "auto" for every
     * one a backend offers but the int4 group sizes, NULL/""/"none": none.
     * min_sqnr > 0 replaces each variant's own SQNR bound (dB). */
    const char *quant;
    double min_sqnr;
    /* Static int8's calibration (tune/calib.h): 0 the min/max of each
     * activation over the samples, else this percentile (say 99.99). */
    double calib_pct;
    /* The end-to-end accuracy budget (tune/accuracy.h, acc_budget_parse's
     * syntax: "sqnr=30,top1=1%"); NULL/""/"none": figures only. With quant
     * or a budget, each bucket's final plan runs whole against the float32
     * reference on every sample, and a plan missing the budget is walked
     * back module by module. */
    const char *accuracy_budget;
    /* The backends candidates come from, in order (the first must be the
     * baseline's); NULL: the registry. Tests pass their own. */
    const backend *const *backends;
    int n_backends;
} tune_opts;

/* Whether tuning with opts.cold == cold profiles model insp with cold caches
 * (see tune_opts.cold). */
bool tune_cold(int cold, const inspection *insp);
/* The bucket of batch size b: the power of two at or above it. */
int tune_bucket(int b);
/* The whole module's fastest valid candidate of backend b (a strategy's
 * NAME: "native", or "native:wino" for one variant; NULL: of any backend
 * but the reference), or 0 when there is none. */
int tune_whole_best(const tune_module *wm, const char *b);

/* The early stop of a candidate's profiling (profile_opts.stop_above):
 * only where the module's strategy picks the fastest (strategy_speed), so
 * that a candidate stopped as a loser is one the strategy would not take; the others (first-wins, one-backend, only, a latency
 * budget) rank candidates that are not the fastest and time every one in
 * full. A candidate is stopped once its runs are all slower than
 * TUNE_STOP_FACTOR x (1 + margin) x the fastest median timed in full so far
 * at the module's bucket (the baseline is timed last, so it too stops once
 * a candidate beats it that clearly). */
#define TUNE_STOP_FACTOR 1.5
/* stop_above for candidate c of tm (0 when no other candidate was timed in
 * full yet: no stop). */
double tune_stop_above(const tune_module *tm, int c, double margin);

ait_status tune_run(const ait_model *m, const inspection *insp, const tune_opts *o,
                    tune_report **out, ait_error *e);
#endif

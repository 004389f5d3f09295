/* What tuning found: per module and bucket every candidate's outcome and the
 * choice (tune_module), per bucket the whole-plan check (tune_check), and the
 * report that holds them. The tuner (tuner.h) fills it, the choice
 * (choice.h) and the check (plan_check.h) decide on it, plan building
 * (plan_build.h) and the report writers read it. */
#ifndef AIT_TUNE_RESULT_H
#define AIT_TUNE_RESULT_H
#include "backends/backend.h"
#include "io/json.h"
#include "tune/calib.h"
#include "tune/inspect.h"
#include "tune/profile.h"

#define TUNE_MAX_CANDS 24

typedef struct tune_cand {
    candidate_cfg cfg;
    char name[48];            /* "openblas/t2" */
    bool valid;
    char reason[512];         /* why not valid */
    double max_rel, sqnr_db;  /* worst over the outputs, against the reference */
    double min_sqnr;          /* a quantised variant's bound in dB (judged alone); 0: float tolerance */
    profile_result prof;
    double speedup;           /* baseline median / this median (0 if invalid) */
    bool errored;             /* crashed, timed out or failed in the child (not a verdict) */
    double timed_out;         /* the time limit (s) its trial ran past; 0: none. Cached:
                                 a later tune with this limit or less does not retry it */
    bool cached;              /* the result came from the cache: nothing was run */
    double secs;              /* wall time of its trial (0 when cached) */
} tune_cand;

typedef struct tune_module {
    int module;               /* index in the module tree */
    int batch;                /* the bucket: a power of two */
    int seq, past;            /* a decoder's sequence and past buckets (tune/buckets.h);
                                 seq 0: batch alone is the bucket */
    char strategy[64];
    int n_cands;
    tune_cand cands[TUNE_MAX_CANDS]; /* cands[0]: the baseline */
    int chosen;               /* index into cands; 0 keeps the baseline */
    char why[512];
    bool all_failed;          /* no candidate but the baseline passed: it stays */
    /* Why the module was not tuned at all (it holds control flow, which
     * cannot be cut out of the model yet): it keeps the baseline, which was
     * not run on its own either (cands[0] says so); "" when it was tuned. */
    char untuned[256];
    int n_sets;               /* input sets each candidate was validated on */
    char min_shape[160], max_shape[160]; /* dynamic modules: the extra sets' inputs; else "" */
    /* The `whole` candidate module: the root (every node), tuned beside the
     * selected modules so that one backend may run the model as one module
     * (keeping its layouts across what were module boundaries). Its chosen
     * stays 0 (not in the plan) unless the whole-plan check takes one of
     * its candidates at every bucket (plan_build.c); then the plan is this
     * module alone. */
    bool whole;
    /* The end-to-end accuracy guard (tune/accuracy.h) took its quantised
     * choice back to its best float32 candidate; why says so. */
    bool walked_back;
} tune_module;

/* The whole-plan check at one bucket (tune/plan_check.h): the model run
 * whole on the plan as tuned and on single-backend plans, in child
 * processes, round by round. */
#define CHECK_MAX_PLANS 8
#define CHECK_MAX_PROCS 15

typedef struct check_plan {
    char name[64];              /* "as tuned", "onednn alone", "reference alone" */
    double predicted;           /* the sum of its modules' profiled medians, seconds */
    double median[CHECK_MAX_PROCS]; /* the whole model's median in each process, seconds */
    double ratio;               /* the tuned plan's time over this one's, median over the
                                 * processes: above 1, this plan was faster */
    double spread;              /* half the interquartile range of those ratios over the
                                 * processes, relative to their median (0.05: +-5%) */
    double need;                /* what it had to beat the plan before it by to be taken:
                                 * the largest of the margin, CHECK_MIN_MARGIN and spread;
                                 * the baseline plan: the margin the others must beat it by */
    bool baseline;              /* every module on its baseline (the untuned model) */
    int whole;                  /* "NAME whole": the whole module's candidate; else 0 */
} check_plan;

typedef enum check_outcome {
    CHECK_OFF = 0,  /* not asked for */
    CHECK_SKIPPED,  /* nothing to compare with, or a strategy that is not about speed */
    CHECK_KEPT,     /* the tuned plan stays: no single-backend plan beat it by the
                     * margin, and it beat the baseline plan (if run) by the margin */
    CHECK_SWITCHED, /* the bucket's modules take a single-backend plan's choices:
                     * one that beat it, or the baseline that it did not beat */
    CHECK_FAILED,   /* a process failed: the tuned plan stays */
} check_outcome;

typedef struct tune_check {
    int batch, seq, past;       /* the bucket (tune_module's) */
    check_outcome outcome;
    char note[512];             /* why skipped or failed, or what was decided */
    int n_plans, n_procs;       /* plans[0] is the plan as tuned */
    check_plan plans[CHECK_MAX_PLANS];
    int taken;                  /* the plan the bucket runs */
    double secs;                /* wall time of the check */
} tune_check;

/* The end-to-end accuracy guard (tune/accuracy.h): the whole model on a
 * bucket's plan against the float32 reference on every tuning sample. */
#define ACC_MAX_OUTS 16

/* The budget (--accuracy-budget); a bound is judged when its has_ is set. */
typedef struct acc_budget {
    bool has_sqnr, has_top1, has_abs;
    double min_sqnr_db; /* every float output's SQNR over all samples at least this */
    double max_top1;    /* share 0..1 of a classifier output's rows whose top-1 may differ */
    double max_abs;     /* every float output's largest |cand - ref| at most this */
} acc_budget;

/* One model output over every sample. */
typedef struct acc_out {
    char name[64];
    double max_abs, max_rel;
    double sig, noise;    /* sum ref^2 and sum (ref - cand)^2 over the samples */
    int64_t n_nonfinite;  /* NaN/Inf where the reference is finite */
    bool classifier;      /* 2-D [batch, classes] float: top-1 is compared */
    int64_t rows, top1_same;
} acc_out;

typedef struct acc_figures {
    bool ran;
    int n_outs;           /* the model's float tensor outputs, the first ACC_MAX_OUTS */
    acc_out outs[ACC_MAX_OUTS];
} acc_figures;

typedef struct tune_accuracy {
    int batch;
    int n_batches;
    int64_t rows;         /* sample rows the batches hold (cycled rows counted again) */
    acc_figures tuned;    /* the plan as the tune and the check left it */
    acc_figures final;    /* after walking back (the same when nothing was) */
    bool fits;            /* final meets the budget (true without one) */
    bool failed;          /* a run failed: the plan is kept, note says why */
    int n_walked;
    char note[512];
    double secs;
} tune_accuracy;

typedef struct tune_report {
    int n;
    tune_module *mods;
    int trials;               /* candidates run in a child */
    int cached;               /* candidates taken from the cache */
    bool cache_on;            /* the cache folder was usable */
    char cache_dir[4096];     /* "" without a cache */
    int cache_warnings;       /* unusable folder, corrupt entries, failed writes */
    int n_checks;             /* one per bucket when tune_opts.plan_check */
    tune_check checks[16];
    acc_budget budget;        /* tune_opts.accuracy_budget (nothing set: none) */
    int n_acc;                /* one per bucket when quantised variants or a budget were asked */
    tune_accuracy acc[16];
    /* Activation ranges on the tuning samples, when a static int8 variant
     * was asked for (calib.out is the candidates' cfg.ranges; it lives as
     * long as the report, through the plan's save). */
    calib calib;
} tune_report;

void tune_report_free(tune_report *r);
/* A candidate's status word: "ok", "rejected" (validation) or "failed"
 * (crash, timeout, error). */
const char *tune_cand_status(const tune_cand *c);
/* "kept", "switched", "skipped", "failed" or "off". */
const char *check_outcome_name(check_outcome o);
/* Plan p's whole-model time in check c: the median over the processes, seconds. */
double check_plan_median(const tune_check *c, int p);
/* Writes the report as one JSON object (report.c): every module and bucket
 * with every candidate's status, reason and measurements, the choice and
 * why, and the cache's counts. insp names the modules. */
void tune_report_json(json_w *w, const inspection *insp, const tune_report *r);

#endif

/* The tuner: for each selected module and batch bucket, try every candidate
 * (backend x threads), each in a child process with a time limit: build,
 * validate against the reference, profile; then let the module's strategy
 * pick, keeping the baseline (reference, one thread) unless a candidate
 * beats it by the margin.
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
#include "tune/strategy.h"

#define TUNE_MAX_CANDS 16
/* The weights above which tuning profiles cold by default: 32 MiB, the
 * last-level cache one core group of a large x86 server shares (CPUID's
 * figure is not used: virtual machines report whole sockets, or nothing). */
#define TUNE_COLD_BYTES ((int64_t)32 << 20)

typedef struct tune_cand {
    candidate_cfg cfg;
    char name[48];            /* "openblas/t2" */
    bool valid;
    char reason[512];         /* why not valid */
    double max_rel, sqnr_db;  /* worst over the outputs, against the reference */
    profile_result prof;
    double speedup;           /* baseline median / this median (0 if invalid) */
    bool errored;             /* crashed, timed out or failed in the child (not a verdict) */
    bool cached;              /* the result came from the cache: nothing was run */
    double secs;              /* wall time of its trial (0 when cached) */
} tune_cand;

typedef struct tune_module {
    int module;               /* index in the module tree */
    int batch;                /* the bucket: a power of two */
    char strategy[64];
    int n_cands;
    tune_cand cands[TUNE_MAX_CANDS]; /* cands[0]: the baseline */
    int chosen;               /* index into cands; 0 keeps the baseline */
    char why[512];
    bool all_failed;          /* no candidate but the baseline passed: it stays */
    int n_sets;               /* input sets each candidate was validated on */
    char min_shape[160], max_shape[160]; /* dynamic modules: the extra sets' inputs; else "" */
} tune_module;

/* The whole-plan check at one bucket (tune/plan_check.h): the model run
 * whole on the plan as tuned and on single-backend plans, in child
 * processes, round by round. */
#define CHECK_MAX_PLANS 6
#define CHECK_MAX_PROCS 15

typedef struct check_plan {
    char name[64];              /* "as tuned", "onednn alone", "reference alone" */
    double predicted;           /* the sum of its modules' profiled medians, seconds */
    double median[CHECK_MAX_PROCS]; /* the whole model's median in each process, seconds */
    double ratio;               /* the tuned plan's time over this one's, median over the
                                 * processes: above 1, this plan was faster */
    bool baseline;              /* every module on its baseline (the untuned model) */
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
    int batch;
    check_outcome outcome;
    char note[512];             /* why skipped or failed, or what was decided */
    int n_plans, n_procs;       /* plans[0] is the plan as tuned */
    check_plan plans[CHECK_MAX_PLANS];
    int taken;                  /* the plan the bucket runs */
    double secs;                /* wall time of the check */
} tune_check;

typedef struct tune_opts {
    const sample_set *samples;
    int n_batch, batch[16];   /* batch sizes asked for; tuned at their buckets */
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
    int max_batches;          /* distinct sample batches validated per bucket; <= 0: all */
    /* What a candidate must beat the baseline by (strategy.h): 0 the
     * default (STRAT_DEFAULT_MARGIN), < 0 none, else a fraction below 1. */
    double margin;
    /* Profiling with cold caches (prof.flush_bytes): 1 always, -1 never, 0
     * when the model's weights exceed TUNE_COLD_BYTES, since then a module
     * of the whole model finds none of its weights in the caches. */
    int cold;
    /* Check the whole plan at each bucket against single-backend plans
     * before it is final (tune/plan_check.h). Backends must be the
     * registry's. */
    bool plan_check;
    /* The backends candidates come from, in order (the first must be the
     * baseline's); NULL: the registry. Tests pass their own. */
    const backend *const *backends;
    int n_backends;
} tune_opts;

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
} tune_report;

/* Whether tuning with opts.cold == cold profiles model insp with cold caches
 * (see tune_opts.cold). */
bool tune_cold(int cold, const inspection *insp);
/* The bucket of batch size b: the power of two at or above it. */
int tune_bucket(int b);
ait_status tune_run(const ait_model *m, const inspection *insp, const tune_opts *o,
                    tune_report **out, ait_error *e);
void tune_report_free(tune_report *r);
/* The margin tune_opts.margin stands for (0: STRAT_DEFAULT_MARGIN, below 0:
 * none). */
double tune_margin(double margin);
/* The candidate strategy st picks for tm: out->index indexes tm->cands (0
 * the baseline). The baseline's own failure keeps it, said in out->why. */
ait_status tune_pick(const tune_module *tm, const strategy *st, choice *out, ait_error *e);
/* A candidate's status word: "ok", "rejected" (validation) or "failed"
 * (crash, timeout, error). */
const char *tune_cand_status(const tune_cand *c);
/* Writes the report as one JSON object (report.c): every module and bucket
 * with every candidate's status, reason and measurements, the choice and
 * why, and the cache's counts. insp names the modules. */
void tune_report_json(json_w *w, const inspection *insp, const tune_report *r);

#endif

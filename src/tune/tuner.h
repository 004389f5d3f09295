/* The tuner: for each selected module and batch bucket, try every candidate
 * (backend x threads), each in a child process with a time limit: build,
 * validate against the reference, profile; then let the module's strategy
 * pick, keeping the baseline (reference, one thread) unless a candidate
 * beats it by the margin. */
#ifndef AIT_TUNE_TUNER_H
#define AIT_TUNE_TUNER_H
#include "backends/backend.h"
#include "tune/inspect.h"
#include "tune/profile.h"
#include "tune/select.h"

#define TUNE_MAX_CANDS 16

typedef struct tune_cand {
    candidate_cfg cfg;
    char name[48];            /* "openblas/t2" */
    bool valid;
    char reason[512];         /* why not valid */
    double max_rel, sqnr_db;  /* worst over the outputs, against the reference */
    profile_result prof;
    double speedup;           /* baseline median / this median (0 if invalid) */
} tune_cand;

typedef struct tune_module {
    int module;               /* index in the module tree */
    int batch;                /* the bucket: a power of two */
    char strategy[64];
    int n_cands;
    tune_cand cands[TUNE_MAX_CANDS]; /* cands[0]: the baseline */
    int chosen;               /* index into cands; 0 keeps the baseline */
    char why[512];
} tune_module;

typedef struct tune_opts {
    const sample_set *samples;
    int n_batch, batch[16];   /* batch sizes asked for; tuned at their buckets */
    const selection *sel;     /* modules and their strategies (n 0: the whole model) */
    int max_threads;          /* candidates use 1..max_threads (default 1) */
    double timeout;           /* seconds per candidate (default 60) */
    profile_opts prof;
    bool quiet;               /* no progress on stderr */
} tune_opts;

typedef struct tune_report {
    int n;
    tune_module *mods;
} tune_report;

/* The bucket of batch size b: the power of two at or above it. */
int tune_bucket(int b);
ait_status tune_run(const ait_model *m, const inspection *insp, const tune_opts *o,
                    tune_report **out, ait_error *e);
void tune_report_free(tune_report *r);

#endif

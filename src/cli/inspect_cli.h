/* What `ait inspect` and `ait tune` share: their sample, batch, selection
 * and view options, running the inspection, and printing its tables. */
#ifndef AIT_CLI_INSPECT_CLI_H
#define AIT_CLI_INSPECT_CLI_H
#include <stdio.h>

#include "tune/profile.h"
#include "tune/report.h"

/* Option groups beyond the common ones. */
enum { INSP_VIEW = 1, INSP_DRY_RUN = 2 };

typedef struct insp_args {
    const char *model;
    const char *data;     /* NULL: generated samples */
    size_t max_input;     /* --max-input-mb, in bytes (0: no limit) */
    int n_batch, batch[16];
    int n_seq, seq[16];   /* --seq-buckets (0: from the samples) */
    int n_past, past[16]; /* --past-buckets (0: from the samples) */
    int n_dims;
    const char *dim_names[32];
    int64_t dim_vals[32];
    int threads, runs;
    int n_sel;            /* --select PATH[=STRATEGY] */
    char *sel[64];
    int top;              /* --top N (0: none) */
    double sel_share;     /* --select-min-share F (< 0: none) */
    int sel_depth;        /* cut of the tree --top and --select-min-share pick from */
    const char *strategy; /* default strategy of selected modules */
    report_filter view;   /* --min-depth, --max-depth, --min-share, --limit */
    const char *module;   /* --module NAME */
    bool json, dry_run;
    double timeout;       /* tune: seconds per candidate */
    profile_opts prof;    /* tune: --warmup --window --cv --cap */
    bool clear_cache;     /* tune: --clear-cache */
    bool no_cache;        /* tune: --no-cache */
    bool no_plan_check;   /* tune: --no-plan-check */
    int whole;            /* tune: -1 --no-whole, 1 --force-whole, 0 the check decides */
    int max_batches;      /* tune: --max-batches-per-size (0: all) */
    const char *output;   /* tune: -o NAME.ait */
    int cold;             /* tune: --cold-cache 1, --warm-cache -1, else 0 (auto) */
    bool cpu_clock;       /* tune: --cpu-clock */
    const char *quant;    /* tune: --quant LIST */
    double min_sqnr;      /* tune: --min-sqnr DB (0: each variant's own) */
    double calib_pct;     /* tune: --calib-percentile P (0: min/max) */
    const char *accuracy_budget; /* tune: --accuracy-budget SPEC (NULL: none) */
    double margin;        /* tune: --margin as tune_opts.margin (0: default, -1: none) */
    const char *gemm_db;  /* tune: --gemm-db tuned.csv (docs/gemm.md) */
} insp_args;

/* Parses argv for command `cmd` (groups: the INSP_* it accepts). Returns -1
 * when the caller should go on, else the exit code (0 after --help, 2 after
 * a usage error, which it printed with the help). */
int insp_parse(int argc, char **argv, const char *cmd, const char *help, unsigned groups,
               insp_args *a);

typedef struct insp_state {
    ait_model *m;
    sample_set *samples;
    inspection *r;
    selection sel;
    int module;           /* --module's index, or -1 */
} insp_state;

/* Loads the model and samples, runs the inspection, builds the selection
 * and finds --module. On failure prints "ait CMD: reason" and returns 1. */
int insp_prepare(const insp_args *a, const char *cmd, insp_state *s);
void insp_state_free(insp_state *s);

/* The module table, then the static-shapes and coverage lines. */
void insp_print_table(FILE *f, const insp_state *s, const int *rows, int n, int cut);
/* Module m's graph spec: a table of inputs and one of outputs. */
void insp_print_spec(FILE *f, const inspection *r, int m);
/* Human units: "11.7M" (count), "44.6 MiB" (bytes), "1.82G" (flops). */
const char *human_count(double v, char *buf, size_t n);
const char *human_bytes(double v, char *buf, size_t n);

#endif

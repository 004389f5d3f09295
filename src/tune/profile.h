/* Profiling of one candidate: warm-up runs, then timed runs until the
 * latency is stable (coefficient of variation over a window under a bound)
 * or a cap is reached. */
#ifndef AIT_TUNE_PROFILE_H
#define AIT_TUNE_PROFILE_H
#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

/* Runs the work once; returns AIT_OK or the failure (message in e). */
typedef ait_status (*profile_run_fn)(void *ctx, ait_error *e);
/* A monotonic clock in nanoseconds. Tests pass a fake one so that no real
 * work is timed; NULL means CLOCK_MONOTONIC. */
typedef int64_t (*profile_clock_fn)(void *ctx);

typedef struct profile_opts {
    int warmup;   /* untimed runs first (default 10, >= 0) */
    int window;   /* runs the CV is computed over (default 20, >= 2) */
    double cv;    /* stop when stddev / mean of the window is below this (default 0.10) */
    int cap;      /* at most this many timed runs (default 100, >= window) */
    int64_t batch; /* items per run, for the throughput (default 1) */
    profile_clock_fn clock; /* NULL: CLOCK_MONOTONIC */
    void *clock_ctx;
    /* > 0: before each timed run, untimed, write this many bytes of a scratch
     * buffer, so that every run starts with the caches holding none of its
     * data (weights included): the state a module of a model bigger than the
     * caches finds in the whole model. 0: warm runs, one after the other. */
    size_t flush_bytes;
    /* > 0: stop early, as a clear loser, once PROFILE_STOP_RUNS runs (from
     * the second warm-up run on) have all taken longer than this many
     * seconds; one run at or under it turns the stop off for good. The
     * tuner passes a factor of the fastest candidate's median so far, so a
     * candidate stopped here is slower than that one on every run it made
     * and cannot be the fastest (tune/tuner.c). 0: off. */
    double stop_above;
} profile_opts;

/* Runs a candidate must lose on, all of them, before it is stopped. */
#define PROFILE_STOP_RUNS 3

/* The flush `ait tune --cold-cache` asks for: four times the 32 MiB that
 * one core group of a large x86 server shares as its last-level cache. */
#define PROFILE_FLUSH_BYTES ((size_t)128 << 20)

/* The calling thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID): a
 * clock for work that runs on that thread alone, which does not count the
 * time other processes held the core (tune_opts.cpu_clock). */
int64_t profile_thread_cpu_ns(void *ctx);

/* The clock a tune times work by: the calling thread's CPU time
 * (profile_thread_cpu_ns) when `thread_cpu` (the tune asked for it and the
 * work runs on that thread alone), else the wall clock (CLOCK_MONOTONIC).
 * One rule for `ait tune`, its whole-plan check and `ait gemm tune`. */
profile_clock_fn profile_clock(bool thread_cpu);

/* The defaults above. */
profile_opts profile_defaults(void);

/* All statistics are over the last `window` timed runs (or all of them if
 * fewer): the runs the CV was judged on, after any start-up drift. */
typedef struct profile_result {
    double median, min, max; /* seconds */
    double p10, p90;         /* spread: 10th and 90th percentiles, seconds */
    double cv;               /* the coefficient of variation reached */
    int runs;                /* timed runs done (warm-up not counted) */
    bool converged;          /* cv went under the bound before the cap */
    bool stopped;            /* stopped early (stop_above): the statistics are over the
                              * PROFILE_STOP_RUNS slow runs, warm-up ones included, and
                              * runs counts them */
    double throughput;       /* batch / median, items per second (+inf if median is 0) */
} profile_result;

/* Whether profiling stops after n runs past the first warm-up one whose
 * fastest took `fastest` seconds (see profile_opts.stop_above). */
bool profile_stop(const profile_opts *o, int n, double fastest);

/* Profiles run(ctx) as above. A failing run stops profiling at once and
 * returns its status, with "profiling: warm-up run 3: " (or "timed run 7: ")
 * before its message. Bad options are AIT_E_INVALID_ARG. Allocates only a
 * scratch array of `cap` times, freed before returning (AIT_E_NOMEM if it
 * cannot). r is written only on success. */
ait_status profile_run(const profile_opts *o, profile_run_fn run, void *ctx, profile_result *r,
                       ait_error *e);

/* The median of v[0..n) (0 when n < 1), interpolating between the middle
 * two when n is even; sorts v in place. */
double profile_median(double *v, int n);

/* The q-quantile (0..1) of sorted s[0..n), n >= 1, interpolating between
 * neighbours (q = 0.5: the median). */
double profile_pct(const double *s, int n, double q);

#endif

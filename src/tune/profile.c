#include "tune/profile.h"

#include "core/timer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

profile_opts profile_defaults(void)
{
    return (profile_opts){.warmup = 10, .window = 20, .cv = 0.10, .cap = 100, .batch = 1};
}

static int64_t mono_ns(void *ctx)
{
    (void)ctx;
    return now_ns();
}

int64_t profile_thread_cpu_ns(void *ctx)
{
    (void)ctx;
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

profile_clock_fn profile_clock(bool thread_cpu)
{
    return thread_cpu ? profile_thread_cpu_ns : mono_ns;
}

/* Sample standard deviation over the mean; 0 for a zero mean (a clock too
 * coarse to see the run is as stable as it gets). */
static double coef_var(const double *t, int n)
{
    double mean = 0, ss = 0;
    for (int i = 0; i < n; i++) mean += t[i];
    mean /= n;
    if (mean <= 0) return 0;
    for (int i = 0; i < n; i++) ss += (t[i] - mean) * (t[i] - mean);
    return sqrt(ss / (n - 1)) / mean;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Percentile q (0..1) of sorted s[0..n), interpolating between ranks. */
double profile_pct(const double *s, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)pos;
    if (lo >= n - 1) return s[n - 1];
    return s[lo] + (pos - lo) * (s[lo + 1] - s[lo]);
}

double profile_median(double *v, int n)
{
    if (n < 1) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    return profile_pct(v, n, 0.5);
}

static ait_status check_opts(const profile_opts *o, ait_error *e)
{
    if (o->warmup < 0 || o->window < 2 || o->cap < o->window || !(o->cv > 0) || o->batch < 1)
        return err_set(e, AIT_E_INVALID_ARG,
                       "profiling options: warmup %d (>= 0), window %d (>= 2), cap %d (>= window), "
                       "cv %g (> 0), batch %lld (>= 1)",
                       o->warmup, o->window, o->cap, o->cv, (long long)o->batch);
    return AIT_OK;
}

/* Fills r from the last w times of t (sorted in a copy; t is kept). */
static void summarise(double *t, int n, int w, double *sorted, profile_result *r)
{
    const double *last = t + n - w;
    memcpy(sorted, last, (size_t)w * sizeof *sorted);
    qsort(sorted, (size_t)w, sizeof *sorted, cmp_dbl);
    r->min = sorted[0];
    r->max = sorted[w - 1];
    r->median = profile_pct(sorted, w, 0.5);
    r->p10 = profile_pct(sorted, w, 0.1);
    r->p90 = profile_pct(sorted, w, 0.9);
    r->cv = coef_var(last, w);
    r->runs = n;
}

bool profile_stop(const profile_opts *o, int n, double fastest)
{
    return o->stop_above > 0 && n >= PROFILE_STOP_RUNS && fastest > o->stop_above;
}

/* The runs profile_stop judges: every run but the first warm-up one, until
 * one is fast enough (then the stop is off) or there are enough to stop. */
typedef struct stop_watch {
    double slow[PROFILE_STOP_RUNS], fastest;
    int n;
    bool off;
} stop_watch;

/* Counts a run of `secs`; true when profiling stops here. */
static bool stop_count(const profile_opts *o, stop_watch *w, double secs)
{
    if (w->off || !(o->stop_above > 0)) return false;
    if (secs <= o->stop_above) {
        w->off = true;
        return false;
    }
    w->slow[w->n++] = secs;
    w->fastest = w->n == 1 ? secs : fmin(w->fastest, secs);
    return profile_stop(o, w->n, w->fastest);
}

ait_status profile_run(const profile_opts *o, profile_run_fn run, void *ctx, profile_result *r,
                       ait_error *e)
{
    TRY(check_opts(o, e));
    profile_clock_fn now = o->clock ? o->clock : mono_ns;
    stop_watch w = {0};
    bool stopped = false;
    for (int i = 0; i < o->warmup && !stopped; i++) {
        int64_t t0 = now(o->clock_ctx);
        if (run(ctx, e) != AIT_OK) return err_prefix(e, "profiling: warm-up run %d: ", i + 1);
        if (i > 0) stopped = stop_count(o, &w, (double)(now(o->clock_ctx) - t0) * 1e-9);
    }
    double *t = malloc((size_t)o->cap * 2 * sizeof *t);
    if (!t) return err_set(e, AIT_E_NOMEM, "profiling: no memory for %d times", o->cap);
    volatile unsigned char *flush = o->flush_bytes ? malloc(o->flush_bytes) : NULL;
    if (o->flush_bytes && !flush) {
        free(t);
        return err_set(e, AIT_E_NOMEM, "profiling: no memory for a %zu-byte cache flush",
                       o->flush_bytes);
    }
    int n = 0;
    bool done = false;
    ait_status s = AIT_OK;
    while (n < o->cap && !done && !stopped) {
        for (size_t i = 0; flush && i < o->flush_bytes; i += 64) flush[i] = (unsigned char)(n + i);
        int64_t t0 = now(o->clock_ctx);
        s = run(ctx, e);
        int64_t t1 = now(o->clock_ctx);
        if (s != AIT_OK) {
            err_prefix(e, "profiling: timed run %d: ", n + 1);
            break;
        }
        t[n++] = (double)(t1 - t0) * 1e-9;
        done = n >= o->window && coef_var(t + n - o->window, o->window) < o->cv;
        stopped = !done && stop_count(o, &w, t[n - 1]);
    }
    if (s == AIT_OK) {
        profile_result res = {0};
        if (stopped) { /* the slow runs it was judged on */
            double sorted[PROFILE_STOP_RUNS];
            summarise(w.slow, w.n, w.n, sorted, &res);
        } else {
            summarise(t, n, n < o->window ? n : o->window, t + o->cap, &res);
        }
        res.converged = done;
        res.stopped = stopped;
        res.throughput = res.median > 0 ? (double)o->batch / res.median : INFINITY;
        *r = res;
    }
    free(t);
    free((void *)flush);
    return s;
}

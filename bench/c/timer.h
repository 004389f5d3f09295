/* Monotonic wall clock for the bench programs. */
#ifndef AIT_BENCH_TIMER_H
#define AIT_BENCH_TIMER_H
#include <stdio.h>
#include <time.h>

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the calling thread: what a step cost it, whatever else the
 * machine runs (a shared machine's preemptions are not counted). */
static inline double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the whole process (every thread): what a run cost, threads
 * included, as ort_runner.js's process.cpuUsage() counts it. */
static inline double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This thread's seconds on a CPU and waiting on a run queue so far
 * (schedstat's first two fields, ns), both 0 when the kernel has no schedstat. */
static inline void thread_sched_s(double *run, double *wait)
{
    unsigned long long r = 0, w = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (f) {
        if (fscanf(f, "%llu %llu", &r, &w) != 2) r = w = 0;
        fclose(f);
    }
    *run = (double)r * 1e-9;
    *wait = (double)w * 1e-9;
}
#endif

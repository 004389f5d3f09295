/* Monotonic wall clock for the bench programs. */
#ifndef AIT_BENCH_TIMER_H
#define AIT_BENCH_TIMER_H
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
#endif

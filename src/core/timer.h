/* The clocks every timing in ait reads: the monotonic clock for durations,
 * and CPU-time clocks (a thread's, the process's) for work on a machine that
 * other processes share. */
#ifndef AIT_CORE_TIMER_H
#define AIT_CORE_TIMER_H
#include <stdint.h>
#include <time.h>

/* Clock c in nanoseconds (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID,
 * CLOCK_PROCESS_CPUTIME_ID); a CPU-time clock the system cannot read falls
 * back to the monotonic one. */
static inline int64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0) clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* Seconds, for durations. */
static inline double now_sec(void) { return (double)now_ns() * 1e-9; }

/* The process's CPU time (every thread), in seconds. */
static inline double process_cpu_sec(void) { return (double)clock_ns(CLOCK_PROCESS_CPUTIME_ID) * 1e-9; }
#endif

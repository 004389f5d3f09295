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
#endif

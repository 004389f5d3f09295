/* The monotonic clock every timing in ait reads. */
#ifndef AIT_CORE_TIMER_H
#define AIT_CORE_TIMER_H
#include <stdint.h>
#include <time.h>

static inline int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Seconds, for durations. */
static inline double now_sec(void) { return (double)now_ns() * 1e-9; }
#endif

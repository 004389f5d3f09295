/* Software prefetch of a run of bytes, for the kernels that read or write
 * rows the hardware's prefetcher does not bring in time (rows a stride
 * apart, a tile's C in L3). */
#ifndef AIT_KERNELS_PREFETCH_H
#define AIT_KERNELS_PREFETCH_H
#include <stdbool.h>
#include <stdint.h>

/* Every cache line of [p, p + bytes) into L1 (the lines p's first and last
 * bytes fall in, and those between), for writing (write) or reading. The
 * empty volatile asm after each prefetch keeps the loop: GCC 12's dead code
 * elimination takes a loop whose body is only __builtin_prefetch for one
 * without effects and removes it whole (a helper of that shape compiled to
 * nothing). */
static inline void kprefetch_run(const void *p, int64_t bytes, bool write)
{
    if (bytes <= 0) return;
    const uintptr_t a = (uintptr_t)p & ~(uintptr_t)63, z = (uintptr_t)p + (uintptr_t)bytes - 1;
    for (uintptr_t l = a; l <= z; l += 64) {
        if (write) __builtin_prefetch((const void *)l, 1, 3);
        else __builtin_prefetch((const void *)l, 0, 3);
        __asm__ volatile("");
    }
}

/* kprefetch_run on each of `rows` rows of n floats, ld floats apart from
 * p: a tile of C (for writing) or of a residual (for reading). */
static inline void kprefetch_rows(const float *p, int64_t ld, int64_t rows, int64_t n, bool write)
{
    for (int64_t r = 0; r < rows; r++) kprefetch_run(p + r * ld, n * 4, write);
}

#endif

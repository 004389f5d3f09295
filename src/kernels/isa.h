/* The instruction sets our kernels are built for, which one runs, and the
 * per-family tables of implementations.
 *
 * Every kernel family registers its implementations as data: a table of
 * rows whose first member is the ISA (then the function and its blocking
 * parameters), best ISA first. kisa_pick() returns the first row this CPU
 * can run, capped by kisa_force() (tests force every ISA in turn; a tuner
 * may too). The portable row (plain C) is always last, so a pick never
 * fails. */
#ifndef AIT_KERNELS_ISA_H
#define AIT_KERNELS_ISA_H
#include <stddef.h>

/* Whether the AVX-512 and AVX2 instances are built (elsewhere only the
 * portable ones are, and kisa_cpu() says portable). */
#ifndef KISA_X86 /* -DKISA_X86=0 builds the portable ones only, as elsewhere */
#if defined(__x86_64__)
#define KISA_X86 1
#else
#define KISA_X86 0
#endif
#endif

typedef enum kisa { KISA_PORTABLE, KISA_AVX2, KISA_AVX512, KISA_N } kisa;

/* "portable", "avx2", "avx512". */
const char *kisa_name(kisa i);
/* The best ISA this CPU (and its OS) supports: AVX-512 means F, BW, DQ and
 * VL; AVX2 means AVX2 and FMA. */
kisa kisa_cpu(void);
/* Caps the ISA kernels use, process-wide (KISA_N lifts the cap). Returns 0
 * when this CPU lacks `i` (the cap is then unchanged), 1 otherwise. */
int kisa_force(kisa i);
/* The ISA kernels use now: kisa_cpu() under the cap. */
kisa kisa_active(void);

/* The first row of `rows` (n rows of `size` bytes, each starting with a
 * kisa, best first, the last one portable) whose ISA is at most
 * kisa_active(). */
const void *kisa_pick(const void *rows, size_t n, size_t size);
#define KISA_PICK(tab) kisa_pick((tab), sizeof(tab) / sizeof((tab)[0]), sizeof((tab)[0]))

#endif

/* The GEMM kernel table (best first) and its blocking. A row with kc, mc
 * or nc 0 takes it from the cache sizes, the BLIS way: B's micro-panel
 * (kc x NR) stays in half of L1 while A's micro-panels stream past it, the
 * packed A block (mc x kc) in half of L2, the packed B block (kc x nc) in a
 * quarter of L3 (a row with kc_l2 takes kc from L2 instead and sizes mc and
 * nc as above: gemm_kern.h). Cache sizes come from sysconf (glibc reads CPUID), with
 * common sizes when it does not know. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "core/cpu.h"
#include "kernels/gemm_kern.h"

/* The AVX-512 skinny kernels' rows per call at 1 to 4 zmm vectors of B
 * (16 to 24 accumulators; gemm_avx512.c): 12 at one vector, the most the
 * pair kernel (skp512, two accumulators a row) holds. */
#define SK512_ROWS {12, 12, 8, 6}

static const gemm_kernel table[] = {
    /* 14x32 in zmm registers (28 accumulators of 32) is the default where
     * 512-bit FMAs run at full width (Intel's AVX-512 cores): there it
     * reaches about 1.5x the ymm kernels (bench/RESULTS.md). Zen 4 runs
     * 512-bit ops as two 256-bit halves, and there 12x16 in ymm registers
     * (AVX-512VL gives 32 of them, 24 accumulators) measured level with or a
     * few percent above 14x32 and 28x16 in zmm on squares and on ResNet's
     * convolution GEMMs, so it is the default there. The tuner also tries
     * the rows marked (each is a candidate per module, so few): avx2's 6x16,
     * whose 6-row panels waste least on small M. 14x32's kc is from L2
     * (1280 with 1.25 MiB, 1024 with Zen 4's 1 MiB), its mc from all of
     * L1's kc (420 with 48 KiB of L1, 1.25 MiB of L2). */
    {"avx512-z14", "avx512f,fma", 14, 32, gemm_ukr_avx512_14x32, gemm_skinny_avx512_32, 16, 4,
     SK512_ROWS, 0, 0, 0, false, true, true, gemm_gemv_avx512_32, GEMM_GEMV_NS512, gemm_skinny_wide_avx512_32, 6,
     gemm_rows_avx512_32},
    {"avx512", "avx512f,avx512vl,fma", 12, 16, gemm_ukr_avx512vl_12x16, gemm_skinny_avx512_16, 16,
     4, SK512_ROWS, 0, 0, 0, false, false, false, gemm_gemv_avx512_16, GEMM_GEMV_NS512},
    {"avx512-z28", "avx512f,fma", 28, 16, gemm_ukr_avx512_28x16, gemm_skinny_avx512_16, 16, 4,
     SK512_ROWS, 0, 0, 0, false, true, false, gemm_gemv_avx512_16, GEMM_GEMV_NS512},
    {"avx512-y6", "avx512f,avx512vl,fma", 6, 32, gemm_ukr_avx512vl_6x32, gemm_skinny_avx512_32, 16,
     4, SK512_ROWS, 0, 0, 0, false, false, false, gemm_gemv_avx512_32, GEMM_GEMV_NS512},
    {"avx2", "avx2,fma", 6, 16, gemm_ukr_avx2_6x16, gemm_skinny_avx2_16, 8, 2, {12, 6}, 0, 0, 0,
     true, false, false, gemm_gemv_avx2_16, GEMM_GEMV_NS256, NULL, 0, gemm_rows_avx2_16},
    {"c", "", 4, 16, gemm_ukr_c_4x16, gemm_skinny_c_16, 16, 1, {4}, 0, 0, 0, false, false, false,
     gemm_gemv_c_16, GEMM_GEMV_NSC, NULL, 0, gemm_rows_c_16},
};
#define N_KERN ((int)(sizeof table / sizeof table[0]))
static const gemm_kernel *row(int i) { return &table[i]; }

int gemm_kernel_count(void) { return N_KERN; }
const gemm_kernel *gemm_kernel_at(int i) { return i >= 0 && i < N_KERN ? row(i) : NULL; }
const char *gemm_kernel_name(const gemm_kernel *k) { return k->name; }
const char *gemm_kernel_needs(const gemm_kernel *k) { return k->needs; }
int gemm_kernel_mr(const gemm_kernel *k) { return k->mr; }
int gemm_kernel_skinny_nv(const gemm_kernel *k) { return k->skinny_nv; }
int gemm_kernel_skinny_vw(const gemm_kernel *k) { return k->skinny_vw; }

int gemm_kernel_nr(const gemm_kernel *k) { return k->nr; }
bool gemm_kernel_tried(const gemm_kernel *k) { return k->tried; }
bool gemm_kernel_zmm(const gemm_kernel *k) { return k->zmm; }
bool gemm_kernel_available(const gemm_kernel *k) { return cpu_has_all(k->needs, NULL, 0); }

/* Whether this CPU runs a 512-bit FMA as two 256-bit halves: AMD's Zen 4
 * (family 19h). Not family 1Ah: the EPYC Zen 5 of the sixteenth session
 * (family 1Ah model 2) runs them at full width, an FMA loop in zmm 254
 * GFLOP/s on one core against 128 in ymm, and there 14x32 took 93% of that
 * peak at 1024^3 and 2048^3 against 44% for 12x16 in ymm (bench/RESULTS.md,
 * "The float32 native GEMM on the Zen 5 host"), so 14x32 stays its default.
 * (Zen 5's mobile parts are said to split them too; none was measured, and
 * CPUID has no bit for it: 8000001Ah's FP256 reads 0 on this host.) */
static bool splits_512(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541u) return false; /* "Auth"enticAMD */
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    unsigned family = ((a >> 8) & 0xf) + (((a >> 8) & 0xf) == 0xf ? (a >> 20) & 0xff : 0);
    return family == 0x19;
#else
    return false;
#endif
}

const gemm_kernel *gemm_kernel_best(void)
{
    static const gemm_kernel *best;
    const gemm_kernel *b = __atomic_load_n(&best, __ATOMIC_ACQUIRE);
    if (b) return b;
    bool split = splits_512();
    for (int i = 0; i < N_KERN && !b; i++)
        if (gemm_kernel_available(row(i)) && !(row(i)->zmm && split)) b = row(i);
    __atomic_store_n(&best, b, __ATOMIC_RELEASE);
    return b;
}

const gemm_kernel *gemm_kernel_find(const char *name, char *why, size_t n)
{
    for (int i = 0; i < N_KERN; i++) {
        if (strcmp(row(i)->name, name) != 0) continue;
        char miss[64];
        if (cpu_has_all(row(i)->needs, miss, sizeof miss)) return row(i);
        if (why) snprintf(why, n, "GEMM kernel '%s' needs %s, which this CPU lacks", name, miss);
        return NULL;
    }
    if (why) {
        int len = snprintf(why, n, "unknown GEMM kernel '%s' (known:", name);
        for (int i = 0; i < N_KERN && len > 0 && (size_t)len < n; i++)
            len += snprintf(why + len, n - (size_t)len, " %s", row(i)->name);
        if (len > 0 && (size_t)len < n) snprintf(why + len, n - (size_t)len, ")");
    }
    return NULL;
}

/* sysconf runs CPUID on each call: read once (racing first callers store
 * the same values). */
static long cache_or(int name, long dflt)
{
    long v = sysconf(name);
    return v > 0 ? v : dflt;
}

static void cache_sizes(long *l1, long *l2, long *l3)
{
    static long c[3];
    if (!__atomic_load_n(&c[2], __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&c[0], cache_or(_SC_LEVEL1_DCACHE_SIZE, 32 << 10), __ATOMIC_RELAXED);
        __atomic_store_n(&c[1], cache_or(_SC_LEVEL2_CACHE_SIZE, 512 << 10), __ATOMIC_RELAXED);
        __atomic_store_n(&c[2], cache_or(_SC_LEVEL3_CACHE_SIZE, 8 << 20), __ATOMIC_RELEASE);
    }
    *l1 = __atomic_load_n(&c[0], __ATOMIC_RELAXED);
    *l2 = __atomic_load_n(&c[1], __ATOMIC_RELAXED);
    *l3 = __atomic_load_n(&c[2], __ATOMIC_RELAXED);
}

long gemm_l2_bytes(void)
{
    long l1, l2, l3;
    cache_sizes(&l1, &l2, &l3);
    return l2;
}

void gemm_blocking(const gemm_kernel *k, int *kc, int *mc, int *nc)
{
    long l1, l2, l3;
    cache_sizes(&l1, &l2, &l3);
    long c1 = l1 / (k->kc_l2 ? 1 : 2) / (k->nr * 4); /* B's micro-panel in L1 */
    c1 = c1 < 64 ? 64 : c1 > 512 ? 512 : c1 & ~7L;
    long c = k->kc ? k->kc : k->kc_l2 ? l2 / 8 / (k->nr * 4) : c1;
    c = c < 64 ? 64 : c > 2048 ? 2048 : c & ~7L;
    long cb = k->kc ? c : c1; /* the kc mc and nc are sized against (see kc_l2) */
    long m = k->mc ? k->mc : l2 / 2 / (cb * 4);
    m = m < k->mr ? k->mr : m > 1024 ? 1024 : m - m % k->mr;
    long n = k->nc ? k->nc : l3 / 4 / (cb * 4);
    n = n < k->nr ? k->nr : n > 8192 ? 8192 : n - n % k->nr;
    *kc = (int)c;
    *mc = (int)m;
    *nc = (int)n;
}

void gemm_kernel_describe(const gemm_kernel *k, char *buf, size_t n)
{
    int kc, mc, nc;
    gemm_blocking(k, &kc, &mc, &nc);
    snprintf(buf, n, "GEMM kernel %s %dx%d, kc %d mc %d nc %d", k->name, k->mr, k->nr, kc, mc, nc);
}

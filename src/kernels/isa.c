/* CPUID-based choice of the kernels' ISA, with a cap for tests. */
#include "kernels/isa.h"
#include "core/cpu.h"

static const char *const names[KISA_N] = {"portable", "avx2", "avx512"};
/* What each ISA needs, in core/cpu.c's feature names. */
static const char *const needs[KISA_N] = {"", "avx2,fma", "avx512f,avx512bw,avx512dq,avx512vl"};

static int cpu_isa = -1; /* detected once; a race only repeats the same answer */
static int cap = KISA_N;

const char *kisa_name(kisa i)
{
    return (unsigned)i < KISA_N ? names[i] : "?";
}

kisa kisa_cpu(void)
{
    int c = __atomic_load_n(&cpu_isa, __ATOMIC_RELAXED);
    if (c < 0) {
        c = KISA_PORTABLE;
        for (int i = KISA_X86 ? KISA_N - 1 : 0; i > KISA_PORTABLE; i--)
            if (cpu_has_all(needs[i], NULL, 0)) {
                c = i;
                break;
            }
        __atomic_store_n(&cpu_isa, c, __ATOMIC_RELAXED);
    }
    return (kisa)c;
}

int kisa_force(kisa i)
{
    if ((unsigned)i > KISA_N) return 0;
    if (i != KISA_N && i > kisa_cpu()) return 0;
    __atomic_store_n(&cap, (int)i, __ATOMIC_RELAXED);
    return 1;
}

kisa kisa_active(void)
{
    kisa c = kisa_cpu();
    int k = __atomic_load_n(&cap, __ATOMIC_RELAXED);
    return k < (int)c ? (kisa)k : c;
}

const void *kisa_pick(const void *rows, size_t n, size_t size)
{
    kisa a = kisa_active();
    const char *p = rows;
    for (size_t i = 0; i < n; i++)
        if (*(const kisa *)(p + i * size) <= a) return p + i * size;
    return p + (n - 1) * size;
}

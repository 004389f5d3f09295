/* CPUID feature detection. The table is the canonical order of the
 * signature string, so two machines with the same features print the same
 * string and a cache key built from it is stable. */
#include "core/cpu.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define CPU_X86 1
#else
#define CPU_X86 0
#endif

enum { R_EAX, R_EBX, R_ECX, R_EDX };

static const struct {
    const char *name;
    unsigned leaf, sub; /* CPUID leaf and subleaf */
    int reg, bit;
    int needs_os_avx, needs_os_zmm, needs_os_amx; /* XCR0 state the OS must enable */
} cpu_table[] = {
    {"sse4.2", 1, 0, R_ECX, 20, 0, 0, 0},
    {"popcnt", 1, 0, R_ECX, 23, 0, 0, 0},
    {"f16c", 1, 0, R_ECX, 29, 1, 0, 0},
    {"avx", 1, 0, R_ECX, 28, 1, 0, 0},
    {"fma", 1, 0, R_ECX, 12, 1, 0, 0},
    {"avx2", 7, 0, R_EBX, 5, 1, 0, 0},
    {"bmi2", 7, 0, R_EBX, 8, 0, 0, 0},
    {"avx512f", 7, 0, R_EBX, 16, 1, 1, 0},
    {"avx512dq", 7, 0, R_EBX, 17, 1, 1, 0},
    {"avx512cd", 7, 0, R_EBX, 28, 1, 1, 0},
    {"avx512bw", 7, 0, R_EBX, 30, 1, 1, 0},
    {"avx512vl", 7, 0, R_EBX, 31, 1, 1, 0},
    {"avx512vnni", 7, 0, R_ECX, 11, 1, 1, 0},
    {"avx512vbmi", 7, 0, R_ECX, 1, 1, 1, 0},
    {"avx512bf16", 7, 1, R_EAX, 5, 1, 1, 0},
    {"avx512fp16", 7, 0, R_EDX, 23, 1, 1, 0},
    {"avxvnni", 7, 1, R_EAX, 4, 1, 0, 0},
    {"amx-tile", 7, 0, R_EDX, 24, 0, 0, 1},
    {"amx-int8", 7, 0, R_EDX, 25, 0, 0, 1},
    {"amx-bf16", 7, 0, R_EDX, 22, 0, 0, 1},
    {"sha", 7, 0, R_EBX, 29, 0, 0, 0},
};
#define CPU_NFEAT (sizeof cpu_table / sizeof cpu_table[0])

#if CPU_X86
/* XCR0: which register state the OS saves on context switch. A CPU may
 * have AVX-512 while the kernel does not enable it; then it is unusable. */
static uint64_t xcr0(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0; /* no OSXSAVE */
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

/* Fills has[i] for each table row from CPUID (22 instructions; under a
 * hypervisor each one traps, tens of microseconds: read once, cpu_detect). */
static void cpu_read(int has[CPU_NFEAT])
{
    memset(has, 0, CPU_NFEAT * sizeof has[0]);
#if CPU_X86
    uint64_t x = xcr0();
    int os_avx = (x & 0x6) == 0x6;            /* XMM and YMM */
    int os_zmm = os_avx && (x & 0xe0) == 0xe0; /* opmask, ZMM_Hi256, Hi16_ZMM */
    int os_amx = (x & 0x60000) == 0x60000;     /* XTILECFG, XTILEDATA */
    for (size_t i = 0; i < CPU_NFEAT; i++) {
        unsigned r[4] = {0, 0, 0, 0}; /* eax, ebx, ecx, edx */
        if (!__get_cpuid_count(cpu_table[i].leaf, cpu_table[i].sub, &r[0], &r[1], &r[2], &r[3]))
            continue;
        unsigned v = r[cpu_table[i].reg];
        if (!(v & (1u << cpu_table[i].bit))) continue;
        if (cpu_table[i].needs_os_avx && !os_avx) continue;
        if (cpu_table[i].needs_os_zmm && !os_zmm) continue;
        if (cpu_table[i].needs_os_amx && !os_amx) continue;
        has[i] = 1;
    }
#endif
}

/* has[] from the first reading in this process: the features do not
 * change while it runs, and packing or checking a weight asks for them
 * each time. Two threads that race both read CPUID and store the same
 * answer. */
static void cpu_detect(int has[CPU_NFEAT])
{
    static int seen[CPU_NFEAT], ready;
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        int now[CPU_NFEAT];
        cpu_read(now);
        for (size_t i = 0; i < CPU_NFEAT; i++) __atomic_store_n(&seen[i], now[i], __ATOMIC_RELAXED);
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    for (size_t i = 0; i < CPU_NFEAT; i++) has[i] = __atomic_load_n(&seen[i], __ATOMIC_RELAXED);
}

void cpu_model(char *out, size_t n)
{
    if (!n) return;
    snprintf(out, n, "unknown");
#if CPU_X86
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000004u) {
        unsigned w[12];
        for (unsigned i = 0; i < 3; i++)
            __get_cpuid(0x80000002u + i, &w[4 * i], &w[4 * i + 1], &w[4 * i + 2], &w[4 * i + 3]);
        char s[49];
        memcpy(s, w, 48);
        s[48] = 0;
        const char *p = s;
        while (*p == ' ') p++; /* some brand strings are right-aligned */
        if (*p) {
            snprintf(out, n, "%s", p);
            return;
        }
    }
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        char v[13];
        memcpy(v, &b, 4);
        memcpy(v + 4, &d, 4);
        memcpy(v + 8, &c, 4);
        v[12] = 0;
        snprintf(out, n, "%s", v);
    }
#endif
}

/* The names of the rows set in has[], comma-separated, into out[n]. */
static size_t list_of(const int has[CPU_NFEAT], char *out, size_t n)
{
    size_t len = 0;
    if (n) out[0] = 0;
    for (size_t i = 0; i < CPU_NFEAT; i++) {
        if (!has[i]) continue;
        const char *sep = len ? "," : "";
        size_t add = strlen(sep) + strlen(cpu_table[i].name);
        /* Only whole names are written: a short buffer ends at the last one that fit. */
        if (len + add < n) snprintf(out + len, n - len, "%s%s", sep, cpu_table[i].name);
        len += add;
    }
    return len;
}

size_t cpu_features(char *out, size_t n)
{
    int has[CPU_NFEAT];
    cpu_detect(has);
    return list_of(has, out, n);
}

size_t cpu_features_of(const char *list, char *out, size_t n)
{
    int has[CPU_NFEAT] = {0};
    for (const char *p = list ? list : ""; *p;) {
        size_t len = strcspn(p, ",");
        for (size_t i = 0; i < CPU_NFEAT; i++)
            if (strlen(cpu_table[i].name) == len && !memcmp(cpu_table[i].name, p, len)) has[i] = 1;
        p += len + (p[len] == ',');
    }
    return list_of(has, out, n);
}

/* Whether the feature name s[0..len) is in the table and present. */
static int cpu_has_one(const int has[CPU_NFEAT], const char *s, size_t len)
{
    for (size_t i = 0; i < CPU_NFEAT; i++)
        if (strlen(cpu_table[i].name) == len && !memcmp(cpu_table[i].name, s, len)) return has[i];
    return 0;
}

int cpu_has_all(const char *required, char *missing, size_t n)
{
    if (missing && n) missing[0] = 0;
    if (!required) return 1;
    int has[CPU_NFEAT];
    cpu_detect(has);
    const char *p = required;
    while (*p) {
        while (*p == ',' || *p == ' ') p++;
        const char *s = p;
        while (*p && *p != ',' && *p != ' ') p++;
        size_t len = (size_t)(p - s);
        if (len && !cpu_has_one(has, s, len)) {
            if (missing && n) snprintf(missing, n, "%.*s", (int)(len > 200 ? 200 : len), s);
            return 0;
        }
    }
    return 1;
}

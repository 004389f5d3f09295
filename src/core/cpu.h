/* This CPU's signature: a vendor/model string and the instruction-set
 * features ait's kernels care about, read from CPUID (x86-64 only; other
 * machines report no features). An artifact records the features it needs
 * and refuses to load on a machine that lacks one. */
#ifndef AIT_CORE_CPU_H
#define AIT_CORE_CPU_H
#include <stddef.h>

/* Writes the CPU's brand string (or vendor, or "unknown") into out[n];
 * always NUL-terminated when n > 0. */
void cpu_model(char *out, size_t n);

/* Writes this machine's features as a canonical comma-separated list
 * ("sse4.2,avx,avx2,fma,...", in the fixed order of the feature table; ""
 * when none or not x86-64) into out[n]. Returns the length the full list
 * needs (excluding the NUL), like snprintf. */
size_t cpu_features(char *out, size_t n);

/* The names of the comma-separated `list` that the feature table knows,
 * once each, in the table's order (as cpu_features writes them), into
 * out[n]; unknown names are left out. Returns the length needed, like
 * cpu_features. For an artifact's stable list of what it needs. */
size_t cpu_features_of(const char *list, char *out, size_t n);

/* Whether this machine has every feature in the comma-separated `required`
 * list (empty entries and spaces are ignored; NULL or "" means none). On
 * 0, the first missing feature's name is written to missing[n] (when
 * missing is not NULL). Unknown names count as missing: a feature this
 * build cannot detect cannot be promised. */
int cpu_has_all(const char *required, char *missing, size_t n);

#endif

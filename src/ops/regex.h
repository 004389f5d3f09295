/* RE2 (C++) behind a C interface, for RegexFullMatch (regex_re2.cc). Every
 * C++ exception is caught inside; nothing is printed (RE2's error log is
 * off). */
#ifndef AIT_OPS_REGEX_H
#define AIT_OPS_REGEX_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct re2_pat re2_pat;

/* Compiles `pattern` (RE2 syntax, UTF-8). NULL on failure, with RE2's reason
 * (or "out of memory") in err[0..n). */
re2_pat *re2_compile(const char *pattern, char *err, size_t n);
/* 1 when s[0..len) matches the whole pattern, 0 when not, -1 on failure. */
int re2_full_match(const re2_pat *p, const char *s, size_t len);
void re2_free(re2_pat *p);

#ifdef __cplusplus
}
#endif
#endif

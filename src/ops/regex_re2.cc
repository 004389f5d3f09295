// RE2 behind the C interface of regex.h: the library's only C++. Nothing
// may throw out of it (C callers), so each function catches everything.
#include "ops/regex.h"

#include <re2/re2.h>

#include <cstdio>
#include <new>

struct re2_pat {
    RE2 re;
    explicit re2_pat(const char *p, const RE2::Options &o) : re(p, o) {}
};

extern "C" re2_pat *re2_compile(const char *pattern, char *err, size_t n)
{
    try {
        RE2::Options o;
        o.set_log_errors(false); // the library prints nothing
        re2_pat *p = new re2_pat(pattern, o);
        if (p->re.ok()) return p;
        std::snprintf(err, n, "%s", p->re.error().c_str());
        delete p;
    } catch (const std::bad_alloc &) {
        std::snprintf(err, n, "out of memory");
    } catch (...) {
        std::snprintf(err, n, "RE2 failed");
    }
    return nullptr;
}

extern "C" int re2_full_match(const re2_pat *p, const char *s, size_t len)
{
    try {
        return RE2::FullMatch(re2::StringPiece(s, len), p->re) ? 1 : 0;
    } catch (...) {
        return -1;
    }
}

extern "C" void re2_free(re2_pat *p) { delete p; }

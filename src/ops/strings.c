/* String ops: StringNormalizer, StringConcat, StringSplit, RegexFullMatch,
 * and Equal's string side (str_equal, called from binary.c).
 * String tensors are arrays of char * (core/tensor.h); outputs are written
 * with tensor_set_str / tensor_put_str, which own what they store. */
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "core/utf8.h"
#include "ops/op.h"
#include "ops/regex.h"
#include "ops/strings.h"

/* ---- UTF-8 --------------------------------------------------------------- */

static ait_status need_utf8(op_ctx *c, const tensor *x, int64_t i)
{
    if (utf8_valid(tensor_str(x, i))) return AIT_OK;
    return err_set(c->err, AIT_E_INVALID_ARG, "element %lld of the input is not valid UTF-8",
                   (long long)i);
}

/* Case mapping: Unicode's simple (one code point to one) mapping of glibc's
 * built-in C.UTF-8 locale, made with newlocale so that no process-wide locale
 * is read or changed. */
enum { CASE_NONE, CASE_LOWER, CASE_UPPER };

/* A malloc'd copy of valid UTF-8 s with every code point mapped; NULL when
 * out of memory. */
static char *case_map(const char *s, int how, locale_t loc)
{
    size_t n = strlen(s);
    char *o = malloc(4 * n + 1), *p = o;
    if (!o) return NULL;
    uint32_t c;
    for (size_t i = 0; i < n;) {
        int k = utf8_dec((const unsigned char *)s + i, n - i, &c);
        if (!k) { /* callers check validity first */
            free(o);
            return NULL;
        }
        i += (size_t)k;
        wint_t m = how == CASE_LOWER ? towlower_l((wint_t)c, loc) : towupper_l((wint_t)c, loc);
        p += utf8_enc((uint32_t)m, p);
    }
    *p = 0;
    return o;
}

static ait_status utf8_locale(op_ctx *c, locale_t *loc)
{
    *loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (!*loc) return err_set(c->err, AIT_E_UNSUPPORTED, "the C.UTF-8 locale is not available");
    return AIT_OK;
}

static ait_status need_strings(op_ctx *c, int i, const char *what)
{
    TRY(need_in(c, i, what));
    if (c->in[i]->dtype != AIT_STRING)
        return err_set(c->err, AIT_E_DTYPE, "%s must be a string tensor, got %s", what,
                       ait_dtype_name(c->in[i]->dtype));
    return AIT_OK;
}

/* ---- StringNormalizer ----------------------------------------------------- */

typedef struct norm_cfg {
    int action;
    bool sensitive;
    const attr *stop;
} norm_cfg;

static ait_status norm_attrs(op_ctx *c, norm_cfg *g)
{
    const attr *a = node_attr(c->n, "case_change_action");
    const char *act = a && a->s ? a->s : "NONE";
    static const char *const names[] = {"NONE", "LOWER", "UPPER"};
    g->action = -1;
    for (int i = 0; i < 3; i++)
        if (!strcmp(act, names[i])) g->action = i;
    if (g->action < 0)
        return err_set(c->err, AIT_E_INVALID_ARG, "case_change_action '%s' is not LOWER, UPPER "
                       "or NONE", act);
    a = node_attr(c->n, "is_case_sensitive");
    g->sensitive = a && a->i != 0;
    g->stop = node_attr(c->n, "stopwords");
    if (g->stop && g->stop->type != ATTR_STRINGS) g->stop = NULL;
    if (g->stop && !g->stop->n) g->stop = NULL;
    return AIT_OK;
}

/* Whether element i is a stop word; cmp holds the stop words as compared
 * (lowered when case-insensitive) and low a scratch for the element's. */
static ait_status is_stop(op_ctx *c, const norm_cfg *g, char **cmp, locale_t loc,
                          const tensor *x, int64_t i, bool *stop)
{
    *stop = false;
    if (!g->stop) return AIT_OK;
    const char *s = tensor_str(x, i);
    char *low = NULL;
    if (!g->sensitive) {
        TRY(need_utf8(c, x, i));
        if (!(s = low = case_map(s, CASE_LOWER, loc)))
            return err_set(c->err, AIT_E_NOMEM, "out of memory");
    }
    for (int k = 0; k < g->stop->n && !*stop; k++)
        *stop = !strcmp(s, cmp ? cmp[k] : g->stop->strings[k]);
    free(low);
    return AIT_OK;
}

/* Runs the normalizer: counts kept elements (y NULL) or writes them. */
static ait_status normalize(op_ctx *c, const norm_cfg *g, tensor *y, int64_t *kept)
{
    const tensor *x = c->in[0];
    locale_t loc;
    TRY(utf8_locale(c, &loc));
    int ns = g->stop ? g->stop->n : 0;
    char **cmp = !g->sensitive && ns ? calloc((size_t)ns, sizeof *cmp) : NULL;
    ait_status s = !g->sensitive && ns && !cmp ? err_set(c->err, AIT_E_NOMEM, "out of memory")
                                                 : AIT_OK;
    for (int k = 0; s == AIT_OK && cmp && k < ns; k++) {
        if (!utf8_valid(g->stop->strings[k]))
            s = err_set(c->err, AIT_E_INVALID_ARG, "stop word %d is not valid UTF-8", k);
        else if (!(cmp[k] = case_map(g->stop->strings[k], CASE_LOWER, loc)))
            s = err_set(c->err, AIT_E_NOMEM, "out of memory");
    }
    int64_t n = tensor_numel(x), j = 0;
    for (int64_t i = 0; s == AIT_OK && i < n; i++) {
        bool stop;
        if ((s = is_stop(c, g, cmp, loc, x, i, &stop)) != AIT_OK || stop) continue;
        if (y && g->action == CASE_NONE) {
            const char *v = tensor_str(x, i);
            s = tensor_set_str(y, j, v, strlen(v), c->err);
        } else if (y) {
            char *m = NULL;
            if ((s = need_utf8(c, x, i)) != AIT_OK) break;
            if (!(m = case_map(tensor_str(x, i), g->action, loc)))
                s = err_set(c->err, AIT_E_NOMEM, "out of memory");
            else tensor_put_str(y, j, m);
        }
        j++;
    }
    for (int k = 0; cmp && k < ns; k++) free(cmp[k]);
    free(cmp);
    freelocale(loc);
    *kept = j;
    return s;
}

static ait_status strnorm_infer(op_ctx *c)
{
    TRY(need_strings(c, 0, "X"));
    const tensor *x = c->in[0];
    if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1))) {
        char b[128];
        return err_set(c->err, AIT_E_SHAPE, "X must have shape [C] or [1, C], got %s",
                       shape_str(x->dims, x->rank, b, sizeof b));
    }
    norm_cfg g;
    TRY(norm_attrs(c, &g));
    int64_t kept = x->dims[x->rank - 1];
    if (g.stop) {
        if (!x->data) return AIT_DEFER;
        TRY(normalize(c, &g, NULL, &kept));
    }
    int64_t d[2] = {1, kept ? kept : 1};
    set_out(c, 0, AIT_STRING, x->rank, x->rank == 1 ? d + 1 : d);
    return AIT_OK;
}

static ait_status strnorm_run(op_ctx *c)
{
    norm_cfg g;
    int64_t kept;
    TRY(norm_attrs(c, &g));
    return normalize(c, &g, c->out[0], &kept);
}

/* ---- StringConcat ------------------------------------------------------- */

static ait_status concat_infer(op_ctx *c)
{
    TRY(need_strings(c, 0, "X"));
    TRY(need_strings(c, 1, "Y"));
    int r;
    int64_t d[AIT_MAX_RANK];
    TRY(broadcast_shape(c, c->in[0], c->in[1], &r, d));
    set_out(c, 0, AIT_STRING, r, d);
    return AIT_OK;
}

/* Calls fn(x, y, z, o) for each element o of z (the broadcast shape of
 * string inputs 0 and 1) with the two strings it is made from. */
static ait_status str_pairs(op_ctx *c, tensor *z,
                            ait_status (*fn)(op_ctx *c, const char *x, const char *y, tensor *z,
                                             int64_t o))
{
    const tensor *a = c->in[0], *b = c->in[1];
    int r = z->rank;
    int64_t sa[AIT_MAX_RANK], sb[AIT_MAX_RANK], idx[AIT_MAX_RANK] = {0}, n = tensor_numel(z);
    bcast_strides(a, r, z->dims, sa);
    bcast_strides(b, r, z->dims, sb);
    int64_t ia = 0, ib = 0;
    for (int64_t o = 0; o < n; o++) {
        TRY(fn(c, tensor_str(a, ia), tensor_str(b, ib), z, o));
        for (int k = r - 1; k >= 0; k--) { /* next output index, odometer style */
            ia += sa[k], ib += sb[k];
            if (++idx[k] < z->dims[k]) break;
            ia -= sa[k] * idx[k], ib -= sb[k] * idx[k];
            idx[k] = 0;
        }
    }
    return AIT_OK;
}

static ait_status concat_one(op_ctx *c, const char *x, const char *y, tensor *z, int64_t o)
{
    size_t lx = strlen(x), ly = strlen(y);
    char *s = malloc(lx + ly + 1);
    if (!s) return err_set(c->err, AIT_E_NOMEM, "out of memory");
    memcpy(s, x, lx);
    memcpy(s + lx, y, ly + 1);
    tensor_put_str(z, o, s);
    return AIT_OK;
}

static ait_status concat_run(op_ctx *c) { return str_pairs(c, c->out[0], concat_one); }

static ait_status equal_one(op_ctx *c, const char *x, const char *y, tensor *z, int64_t o)
{
    ((uint8_t *)z->data)[o] = strcmp(x, y) == 0;
    return AIT_OK;
}

ait_status str_equal(op_ctx *c) { return str_pairs(c, c->out[0], equal_one); }

/* ---- StringSplit -------------------------------------------------------- */

/* Splits s as Python's str.split(delim or None, maxsplit) does (max < 0: no
 * limit); calls put(part, len) for each part (put NULL: count only). */
static int64_t split_str(const char *s, const char *delim, int64_t max, tensor *y, int64_t at,
                         ait_error *e, ait_status *st)
{
    int64_t cnt = 0;
    size_t n = strlen(s), i = 0, dl = delim ? strlen(delim) : 0;
#define PUT(p, l)                                                                              \
    do {                                                                                       \
        if (y && *st == AIT_OK) *st = tensor_set_str(y, at + cnt, p, l, e);                    \
        cnt++;                                                                                 \
    } while (0)
    if (!dl) {
        for (;;) {
            while (i < n && ascii_space(s[i])) i++;
            if (i == n) break;
            if (max >= 0 && cnt == max) {
                PUT(s + i, n - i);
                break;
            }
            size_t j = i;
            while (j < n && !ascii_space(s[j])) j++;
            PUT(s + i, j - i);
            i = j;
        }
        return cnt;
    }
    for (;;) {
        const char *p = max >= 0 && cnt == max ? NULL : strstr(s + i, delim);
        if (!p) {
            PUT(s + i, n - i);
            break;
        }
        PUT(s + i, (size_t)(p - (s + i)));
        i = (size_t)(p - s) + dl;
    }
#undef PUT
    return cnt;
}

static void split_attrs(op_ctx *c, const char **delim, int64_t *max)
{
    const attr *a = node_attr(c->n, "delimiter");
    *delim = a && a->s && a->s[0] ? a->s : NULL;
    a = node_attr(c->n, "maxsplit");
    *max = a ? a->i : -1;
}

static ait_status split_infer(op_ctx *c)
{
    TRY(need_strings(c, 0, "X"));
    const tensor *x = c->in[0];
    if (x->rank >= AIT_MAX_RANK)
        return err_set(c->err, AIT_E_UNSUPPORTED, "X has rank %d; the output would exceed %d",
                       x->rank, AIT_MAX_RANK);
    if (!x->data) return AIT_DEFER;
    const char *delim;
    int64_t max, most = 0, n = tensor_numel(x);
    ait_status st = AIT_OK;
    split_attrs(c, &delim, &max);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = split_str(tensor_str(x, i), delim, max, NULL, 0, c->err, &st);
        if (k > most) most = k;
    }
    int64_t d[AIT_MAX_RANK];
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    d[x->rank] = most;
    set_out(c, 0, AIT_STRING, x->rank + 1, d);
    if (has_out(c, 1)) set_out(c, 1, AIT_I64, x->rank, x->dims);
    return AIT_OK;
}

static ait_status split_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    const char *delim;
    int64_t max, n = tensor_numel(x), w = y->dims[y->rank - 1];
    ait_status st = AIT_OK;
    split_attrs(c, &delim, &max);
    for (int64_t i = 0; i < n && st == AIT_OK; i++) {
        int64_t k = split_str(tensor_str(x, i), delim, max, y, i * w, c->err, &st);
        if (has_out(c, 1)) ((int64_t *)c->out[1]->data)[i] = k;
    }
    return st;
}

/* ---- RegexFullMatch ----------------------------------------------------- */

static ait_status regex_infer(op_ctx *c)
{
    TRY(need_strings(c, 0, "X"));
    const attr *a = node_attr(c->n, "pattern");
    if (!a || a->type != ATTR_STRING || !a->s)
        return err_set(c->err, AIT_E_INVALID_ARG, "RegexFullMatch needs a string attribute "
                       "'pattern'");
    set_out(c, 0, AIT_BOOL, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status regex_run(op_ctx *c)
{
    const char *pat = node_attr(c->n, "pattern")->s;
    char why[256] = "";
    re2_pat *re = re2_compile(pat, why, sizeof why);
    if (!re)
        return err_set(c->err, AIT_E_INVALID_ARG, "pattern '%s' is not a valid RE2 regular "
                       "expression: %s", pat, why);
    const tensor *x = c->in[0];
    uint8_t *y = c->out[0]->data;
    ait_status s = AIT_OK;
    for (int64_t i = 0, n = tensor_numel(x); i < n && s == AIT_OK; i++) {
        const char *v = tensor_str(x, i);
        if ((s = need_utf8(c, x, i)) != AIT_OK) break;
        int m = re2_full_match(re, v, strlen(v));
        if (m < 0) s = err_set(c->err, AIT_E_INTERNAL, "RE2 failed on element %lld", (long long)i);
        else y[i] = (uint8_t)m;
    }
    re2_free(re);
    return s;
}

OP_TABLE(strings,
         {"StringNormalizer", 1, 1, 1, 1, OP_STR_OWNS, strnorm_infer, strnorm_run},
         {"StringConcat", 2, 2, 1, 1, OP_STR_OWNS, concat_infer, concat_run},
         {"StringSplit", 1, 1, 1, 2, OP_STR_OWNS, split_infer, split_run},
         {"RegexFullMatch", 1, 1, 1, 1, OP_STR_OWNS, regex_infer, regex_run});

/* The string side of Cast and CastLike (str_cast, called from unary.c):
 * numbers as text and text as numbers. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/utf8.h"
#include "ops/op.h"
#include "ops/strings.h"

/* Whether v, read back from text, is the same number in dtype t. */
static bool same_in(ait_dtype t, double r, double v)
{
    switch (t) {
    case AIT_F32: return (float)r == (float)v;
    case AIT_F16: return f32_to_f16((float)r) == f32_to_f16((float)v);
    case AIT_BF16: return f32_to_bf16((float)r) == f32_to_bf16((float)v);
    default: return r == v;
    }
}

/* Element i of x as text: integers in decimal, bool as 1 or 0, floats in the
 * fewest significant digits that read back as the same value of their type
 * ("0.1", "1e-05"), NaN as "NaN" and infinities as "INF" / "-INF", the
 * spellings Cast reads. */
static void num_text(const tensor *x, int64_t i, char *buf, size_t n)
{
    ait_dtype t = x->dtype;
    if (t == AIT_U64) {
        snprintf(buf, n, "%llu", (unsigned long long)((const uint64_t *)x->data)[i]);
    } else if (!dtype_is_float(t)) {
        snprintf(buf, n, "%lld", (long long)elem_get_i64(x->data, t, i));
    } else {
        double v = elem_get_f64(x->data, t, i);
        if (isnan(v)) snprintf(buf, n, "NaN");
        else if (isinf(v)) snprintf(buf, n, v > 0 ? "INF" : "-INF");
        else
            for (int p = 1; p <= 17; p++) {
                snprintf(buf, n, "%.*g", p, v);
                if (same_in(t, strtod(buf, NULL), v)) break;
            }
    }
}

static bool at_end(const char *p)
{
    while (ascii_space(*p)) p++;
    return !*p;
}

/* Parses s into element i of y. Floats as strtod reads them (plain and
 * scientific notation; "INF", "+INF", "-INF", "NaN" in any case); integers
 * in decimal, or as a number truncated toward zero and saturated; bool from
 * "true"/"false" (any case) or a number (non-zero is true). */
static ait_status num_parse(op_ctx *c, const char *s, tensor *y, int64_t i)
{
    ait_dtype t = y->dtype;
    char *end;
    if (t == AIT_BOOL && (!strcasecmp(s, "true") || !strcasecmp(s, "false"))) {
        ((uint8_t *)y->data)[i] = !strcasecmp(s, "true");
        return AIT_OK;
    }
    if (dtype_is_int(t)) {
        errno = 0;
        if (t == AIT_U64 && s[0] != '-') {
            unsigned long long u = strtoull(s, &end, 10);
            if (end != s && at_end(end)) {
                ((uint64_t *)y->data)[i] = errno == ERANGE ? UINT64_MAX : u;
                return AIT_OK;
            }
        } else {
            long long k = strtoll(s, &end, 10);
            if (end != s && at_end(end) && errno != ERANGE) {
                if (t == AIT_I64) ((int64_t *)y->data)[i] = k;
                else if (t == AIT_U64) ((uint64_t *)y->data)[i] = (uint64_t)k;
                else elem_set_f64(y->data, t, i, (double)k); /* wraps as Cast does */
                return AIT_OK;
            }
        }
    }
    double v = t == AIT_F32 ? strtof(s, &end) : strtod(s, &end);
    if (end == s || !at_end(end))
        return err_set(c->err, AIT_E_INVALID_ARG, "element %lld ('%.64s') is not a number",
                       (long long)i, s);
    if (t == AIT_BOOL) ((uint8_t *)y->data)[i] = v != 0;
    else elem_set_sat(y->data, t, i, v);
    return AIT_OK;
}

ait_status str_cast(op_ctx *c, const tensor *x, tensor *y)
{
    int64_t n = tensor_numel(x);
    if (x->dtype == AIT_STRING && y->dtype == AIT_STRING)
        return elems_copy(y->data, x->data, n, AIT_STRING, c->err);
    if (y->dtype == AIT_STRING) {
        char buf[64];
        for (int64_t i = 0; i < n; i++) {
            num_text(x, i, buf, sizeof buf);
            TRY(tensor_set_str(y, i, buf, strlen(buf), c->err));
        }
        return AIT_OK;
    }
    if (!dtype_is_float(y->dtype) && !dtype_is_int(y->dtype) && y->dtype != AIT_BOOL)
        return err_set(c->err, AIT_E_UNSUPPORTED, "cast from string to %s is not supported",
                       ait_dtype_name(y->dtype));
    for (int64_t i = 0; i < n; i++) TRY(num_parse(c, tensor_str(x, i), y, i));
    return AIT_OK;
}

/* The JSON reader (see json_read.h): recursive descent with a depth bound. */
#include "io/json_read.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct rd {
    const char *p, *end, *start, *what;
    ait_error *e;
} rd;

static ait_status bad(rd *r, const char *why)
{
    return err_set(r->e, AIT_E_PARSE, "%s: invalid JSON at byte %zu: %s", r->what,
                   (size_t)(r->p - r->start), why);
}

static void skip_ws(rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static bool lit(rd *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0) return false;
    r->p += n;
    return true;
}

static int hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* At the opening quote; the decoded string is never longer than its source. */
static ait_status parse_string(rd *r, char **out)
{
    const char *q = ++r->p;
    while (q < r->end && *q != '"') q += *q == '\\' && r->end - q > 1 ? 2 : 1;
    if (q >= r->end) return bad(r, "unterminated string");
    char *s = malloc((size_t)(q - r->p) + 1), *o = s;
    if (!s) return err_set(r->e, AIT_E_NOMEM, "%s: out of memory", r->what);
    while (*r->p != '"') {
        unsigned char c = (unsigned char)*r->p;
        if (c < 0x20) goto fail_ctl;
        if (c != '\\') {
            *o++ = (char)c;
            r->p++;
            continue;
        }
        char k = r->p[1], simple = 0;
        r->p += 2;
        switch (k) {
        case '"': case '\\': case '/': simple = k; break;
        case 'b': simple = '\b'; break;
        case 'f': simple = '\f'; break;
        case 'n': simple = '\n'; break;
        case 'r': simple = '\r'; break;
        case 't': simple = '\t'; break;
        }
        if (simple) {
            *o++ = simple;
            continue;
        }
        if (k != 'u' || r->end - r->p < 4) goto fail_esc;
        int cp = hex4(r->p);
        if (cp < 0) goto fail_esc;
        r->p += 4;
        uint32_t u = (uint32_t)cp;
        if (u >= 0xD800 && u < 0xDC00) { /* a high surrogate needs its low half */
            int lo = r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u' ? hex4(r->p + 2) : -1;
            if (lo < 0xDC00 || lo > 0xDFFF) goto fail_esc;
            r->p += 6;
            u = 0x10000 + ((u - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
        } else if (u >= 0xDC00 && u < 0xE000) {
            goto fail_esc;
        }
        if (u == 0) {
            free(s);
            return bad(r, "a string holds U+0000");
        }
        o += put_utf8(o, u);
    }
    r->p++;
    *o = 0;
    *out = s;
    return AIT_OK;
fail_ctl:
    free(s);
    return bad(r, "control character in a string");
fail_esc:
    free(s);
    return bad(r, "bad escape in a string");
}

static ait_status parse_number(rd *r, double *out)
{
    const char *s = r->p;
    if (s < r->end && *s == '-') s++;
    if (s >= r->end || *s < '0' || *s > '9') return bad(r, "expected a value");
    if (*s == '0') s++;
    else while (s < r->end && *s >= '0' && *s <= '9') s++;
    if (s < r->end && *s == '.') {
        if (++s >= r->end || *s < '0' || *s > '9') return bad(r, "digit expected after '.'");
        while (s < r->end && *s >= '0' && *s <= '9') s++;
    }
    if (s < r->end && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < r->end && (*s == '+' || *s == '-')) s++;
        if (s >= r->end || *s < '0' || *s > '9') return bad(r, "digit expected in exponent");
        while (s < r->end && *s >= '0' && *s <= '9') s++;
    }
    char buf[64];
    size_t n = (size_t)(s - r->p);
    if (n >= sizeof buf) return bad(r, "number too long");
    memcpy(buf, r->p, n);
    buf[n] = 0;
    *out = strtod(buf, NULL);
    r->p = s;
    return AIT_OK;
}

static ait_status parse_value(rd *r, json_val *v, int depth);

/* Arrays and objects: items grow by doubling. */
static ait_status parse_items(rd *r, json_val *v, int depth, bool obj)
{
    char close = obj ? '}' : ']';
    int cap = 0;
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return AIT_OK;
    }
    for (;;) {
        if (v->n == cap) {
            int nc = cap ? cap * 2 : 4;
            json_val *items = realloc(v->items, (size_t)nc * sizeof *items);
            if (items) v->items = items;
            char **keys = obj && items ? realloc(v->keys, (size_t)nc * sizeof *keys) : NULL;
            if (keys) v->keys = keys;
            if (!items || (obj && !keys)) return err_set(r->e, AIT_E_NOMEM, "%s: out of memory", r->what);
            cap = nc;
        }
        json_val *it = &v->items[v->n];
        memset(it, 0, sizeof *it);
        if (obj) {
            skip_ws(r);
            if (r->p >= r->end || *r->p != '"') return bad(r, "expected a key");
            v->keys[v->n] = NULL;
            TRY(parse_string(r, &v->keys[v->n]));
            skip_ws(r);
            if (r->p >= r->end || *r->p != ':') {
                v->n++; /* so that the key is freed */
                return bad(r, "expected ':'");
            }
            r->p++;
        }
        v->n++;
        TRY(parse_value(r, it, depth + 1));
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return AIT_OK;
        }
        return bad(r, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static ait_status parse_value(rd *r, json_val *v, int depth)
{
    if (depth > JSON_READ_MAX_DEPTH) return bad(r, "nested too deep");
    skip_ws(r);
    if (r->p >= r->end) return bad(r, "unexpected end");
    switch (*r->p) {
    case '{': v->kind = JSON_OBJ; return parse_items(r, v, depth, true);
    case '[': v->kind = JSON_ARR; return parse_items(r, v, depth, false);
    case '"': v->kind = JSON_STR; return parse_string(r, &v->str);
    case 't': v->kind = JSON_BOOL; v->b = true; return lit(r, "true") ? AIT_OK : bad(r, "bad literal");
    case 'f': v->kind = JSON_BOOL; return lit(r, "false") ? AIT_OK : bad(r, "bad literal");
    case 'n': v->kind = JSON_NULL; return lit(r, "null") ? AIT_OK : bad(r, "bad literal");
    default: v->kind = JSON_NUM; return parse_number(r, &v->num);
    }
}

static void val_clear(json_val *v)
{
    free(v->str);
    for (int i = 0; i < v->n; i++) {
        val_clear(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

void json_free(json_val *v)
{
    if (!v) return;
    val_clear(v);
    free(v);
}

ait_status json_parse(const char *text, size_t len, const char *what, json_val **out,
                      ait_error *e)
{
    *out = NULL;
    rd r = {.p = text, .end = text + len, .start = text, .what = what ? what : "JSON", .e = e};
    json_val *v = calloc(1, sizeof *v);
    if (!v) return err_set(e, AIT_E_NOMEM, "%s: out of memory", r.what);
    ait_status s = parse_value(&r, v, 0);
    if (s == AIT_OK) {
        skip_ws(&r);
        if (r.p != r.end) s = bad(&r, "text after the document");
    }
    if (s != AIT_OK) {
        json_free(v);
        return s;
    }
    *out = v;
    return AIT_OK;
}

const json_val *json_get(const json_val *obj, const char *key)
{
    if (!obj || obj->kind != JSON_OBJ || !key) return NULL;
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
    return NULL;
}

const json_val *json_at(const json_val *arr, int i)
{
    return arr && arr->kind == JSON_ARR && i >= 0 && i < arr->n ? &arr->items[i] : NULL;
}

int json_len(const json_val *v) { return v && (v->kind == JSON_ARR || v->kind == JSON_OBJ) ? v->n : 0; }

const char *json_str_of(const json_val *v) { return v && v->kind == JSON_STR ? v->str : NULL; }

bool json_num_of(const json_val *v, double *out)
{
    if (!v || v->kind != JSON_NUM) return false;
    *out = v->num;
    return true;
}

bool json_int_of(const json_val *v, long long lo, long long hi, long long *out)
{
    double d;
    if (!json_num_of(v, &d) || d != floor(d) || d < (double)lo || d > (double)hi) return false;
    *out = (long long)d;
    return true;
}

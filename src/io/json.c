/* The JSON writer: escaping per RFC 8259, UTF-8 checked so that any bytes
 * (tensor names from a model file) still give a valid document. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"

static void fail(json_w *w, ait_status s, const char *why)
{
    if (w->failed == AIT_OK) w->failed = s, w->why = why;
}

static void put(json_w *w, const char *s, size_t n)
{
    if (w->failed) return;
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n + 1) {
            if (cap > SIZE_MAX / 2) return fail(w, AIT_E_OVERFLOW, "document too large");
            cap *= 2;
        }
        char *b = realloc(w->buf, cap);
        if (!b) return fail(w, AIT_E_NOMEM, "out of memory");
        w->buf = b, w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = 0;
}

static void puts_(json_w *w, const char *s) { put(w, s, strlen(s)); }

static void newline(json_w *w)
{
    if (!w->pretty) return;
    put(w, "\n", 1);
    for (int i = 0; i < w->depth; i++) put(w, "  ", 2);
}

static void escaped(json_w *w, const char *s);

void json_key(json_w *w, const char *key) { w->next_key = key; }

/* The comma, newline and key before a member or element. */
static void begin_item(json_w *w, const char *key)
{
    if (!key && w->next_key) { /* json_key's, for a writer of unnamed values */
        key = w->next_key;
        w->next_key = NULL;
    }
    if (w->depth > 0) {
        bool arr = w->in_array[w->depth - 1];
        if (arr != !key) return fail(w, AIT_E_INTERNAL, arr ? "key inside an array" : "no key inside an object");
        if (w->has_items[w->depth - 1]) put(w, ",", 1);
        w->has_items[w->depth - 1] = true;
        newline(w);
    } else if (w->len) {
        return fail(w, AIT_E_INTERNAL, "second top-level value");
    }
    if (key) {
        escaped(w, key);
        put(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
    }
}

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!n) return 0;
    uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

static void escaped(json_w *w, const char *s)
{
    put(w, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        char esc[8];
        switch (*p) {
        case '"': puts_(w, "\\\""); p++; continue;
        case '\\': puts_(w, "\\\\"); p++; continue;
        case '\n': puts_(w, "\\n"); p++; continue;
        case '\r': puts_(w, "\\r"); p++; continue;
        case '\t': puts_(w, "\\t"); p++; continue;
        case '\b': puts_(w, "\\b"); p++; continue;
        case '\f': puts_(w, "\\f"); p++; continue;
        default: break;
        }
        if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            puts_(w, esc);
            p++;
            continue;
        }
        int n = utf8_len(p);
        if (!n) {
            puts_(w, "\\ufffd");
            p++;
            continue;
        }
        put(w, (const char *)p, (size_t)n);
        p += n;
    }
    put(w, "\"", 1);
}

static void open_(json_w *w, const char *key, bool arr)
{
    begin_item(w, key);
    if (w->depth == JSON_MAX_DEPTH) return fail(w, AIT_E_INTERNAL, "nested too deep");
    put(w, arr ? "[" : "{", 1);
    w->in_array[w->depth] = arr;
    w->has_items[w->depth] = false;
    w->depth++;
}

void json_obj(json_w *w, const char *key) { open_(w, key, false); }
void json_arr(json_w *w, const char *key) { open_(w, key, true); }

void json_end(json_w *w)
{
    if (w->depth == 0) return fail(w, AIT_E_INTERNAL, "json_end without an open object or array");
    w->depth--;
    if (w->has_items[w->depth]) newline(w);
    put(w, w->in_array[w->depth] ? "]" : "}", 1);
}

void json_str(json_w *w, const char *key, const char *s)
{
    begin_item(w, key);
    if (s) escaped(w, s);
    else puts_(w, "null");
}

void json_int(json_w *w, const char *key, int64_t v)
{
    char b[32];
    begin_item(w, key);
    snprintf(b, sizeof b, "%" PRId64, v);
    puts_(w, b);
}

void json_num(json_w *w, const char *key, double v)
{
    char b[40];
    begin_item(w, key);
    if (!isfinite(v)) return puts_(w, "null");
    /* 10 significant digits: measurements, not bit patterns */
    snprintf(b, sizeof b, "%.10g", v);
    puts_(w, b);
}

void json_bool(json_w *w, const char *key, bool v)
{
    begin_item(w, key);
    puts_(w, v ? "true" : "false");
}

void json_null(json_w *w, const char *key)
{
    begin_item(w, key);
    puts_(w, "null");
}

void json_discard(json_w *w)
{
    free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}

char *json_finish(json_w *w, ait_error *e)
{
    if (!w->failed && (w->depth || !w->len)) fail(w, AIT_E_INTERNAL, "unbalanced document");
    if (!w->failed && w->pretty) put(w, "\n", 1);
    if (w->failed) {
        err_set(e, w->failed, "writing JSON: %s", w->why);
        json_discard(w);
        return NULL;
    }
    char *out = w->buf;
    w->buf = NULL;
    w->len = w->cap = 0;
    return out;
}

/* A small JSON writer into a growing buffer: objects, arrays, strings with
 * correct escaping, numbers. Used for `--json` reports and the artifact
 * manifest.
 *
 *   json_w w = {.pretty = true};
 *   json_obj(&w, NULL);
 *   json_str(&w, "model", path);
 *   json_arr(&w, "batch_sizes"); json_int(&w, NULL, 1); json_end(&w);
 *   json_end(&w);
 *   char *text = json_finish(&w, &err); // caller frees; NULL on failure
 *
 * Keys are given inside objects and NULL inside arrays. Out of memory or
 * misuse (a key in an array, unbalanced ends) is remembered and reported by
 * json_finish, so callers need not check every call. */
#ifndef AIT_IO_JSON_H
#define AIT_IO_JSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define JSON_MAX_DEPTH 32

typedef struct json_w {
    bool pretty;       /* newlines and two-space indents */
    char *buf;
    size_t len, cap;
    int depth;
    bool in_array[JSON_MAX_DEPTH];
    bool has_items[JSON_MAX_DEPTH];
    const char *next_key; /* json_key's, until the next value */
    ait_status failed; /* first failure (AIT_OK while fine) */
    const char *why;
} json_w;

void json_obj(json_w *w, const char *key);
void json_arr(json_w *w, const char *key);
/* Names the next value written with a NULL key: for putting a function that
 * writes an unnamed object (report_json) inside an object. */
void json_key(json_w *w, const char *key);
/* Closes the innermost object or array. */
void json_end(json_w *w);
/* A string; NULL writes null. Invalid UTF-8 bytes become U+FFFD. */
void json_str(json_w *w, const char *key, const char *s);
void json_int(json_w *w, const char *key, int64_t v);
/* A number; NaN and infinities (which JSON lacks) write null. */
void json_num(json_w *w, const char *key, double v);
void json_bool(json_w *w, const char *key, bool v);
void json_null(json_w *w, const char *key);
/* The document (NUL-terminated, caller frees) once every object and array
 * is closed; else NULL with the reason in e. Frees the writer's buffer on
 * failure. */
char *json_finish(json_w *w, ait_error *e);
/* Frees the buffer without finishing (on an error path). */
void json_discard(json_w *w);

#endif

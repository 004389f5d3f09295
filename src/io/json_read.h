/* A small JSON reader (the counterpart of json.h's writer): parses a whole
 * document into a tree of json_val, for the artifact manifest and cache
 * entries. Strict RFC 8259: no comments, no trailing commas; nesting deeper
 * than JSON_READ_MAX_DEPTH is refused; \u escapes (with surrogate pairs)
 * become UTF-8; a string holding U+0000 is refused, so every string is a
 * plain C string.
 *
 *   json_val *doc;
 *   TRY(json_parse(text, len, "plan.json", &doc, e));
 *   const char *name = json_str_of(json_get(doc, "model"));
 *   json_free(doc);
 */
#ifndef AIT_IO_JSON_READ_H
#define AIT_IO_JSON_READ_H
#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"

#define JSON_READ_MAX_DEPTH 64

typedef enum json_kind { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ } json_kind;

typedef struct json_val {
    json_kind kind;
    bool b;
    double num;
    char *str;              /* JSON_STR */
    int n;                  /* JSON_ARR, JSON_OBJ: item count */
    struct json_val *items; /* their values */
    char **keys;            /* JSON_OBJ: their keys */
} json_val;

/* Parses text[0..len); `what` names the document in messages (which also
 * give the byte offset). */
ait_status json_parse(const char *text, size_t len, const char *what, json_val **out,
                      ait_error *e);
void json_free(json_val *v); /* accepts NULL */

/* Lookups that accept NULL and wrong kinds (giving NULL / false), so that
 * chains need one check at the end. */
const json_val *json_get(const json_val *obj, const char *key); /* first such key */
const json_val *json_at(const json_val *arr, int i);
int json_len(const json_val *arr);                  /* 0 unless an array or object */
const char *json_str_of(const json_val *v);         /* NULL unless a string */
bool json_num_of(const json_val *v, double *out);   /* false unless a number */
/* An integral number within [lo, hi] into *out; false otherwise. */
bool json_int_of(const json_val *v, long long lo, long long hi, long long *out);

#endif

/* The CSV reader and writer (csv.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"
#include "io/file.h"

static ait_status start(csv *c, const char *name, ait_error *e)
{
    snprintf(c->name, sizeof c->name, "%s", name);
    c->line = 1;
    c->store = malloc((size_t)CSV_FIELDS_MAX * (CSV_FIELD_MAX + 1));
    if (!c->store) {
        free(c->text);
        c->text = NULL;
        return err_set(e, AIT_E_NOMEM, "%s: out of memory", name);
    }
    return AIT_OK;
}

ait_status csv_open(csv *c, const char *path, ait_error *e)
{
    memset(c, 0, sizeof *c);
    uint8_t *buf;
    size_t len;
    TRY(file_read_all(path, CSV_FILE_MAX, &buf, &len, e));
    c->text = (char *)buf;
    c->len = len;
    return start(c, path, e);
}

ait_status csv_open_mem(csv *c, const char *name, const char *text, size_t len, ait_error *e)
{
    memset(c, 0, sizeof *c);
    c->text = malloc(len + 1);
    if (!c->text) return err_set(e, AIT_E_NOMEM, "%s: out of memory", name);
    memcpy(c->text, text, len);
    c->len = len;
    return start(c, name, e);
}

void csv_close(csv *c)
{
    free(c->text);
    free(c->store);
    memset(c, 0, sizeof *c);
}

ait_status csv_next(csv *c, bool *got, ait_error *e)
{
    *got = false;
    /* blank lines */
    while (c->pos < c->len && (c->text[c->pos] == '\n' || c->text[c->pos] == '\r')) {
        if (c->text[c->pos] == '\n') c->line++;
        c->pos++;
    }
    if (c->pos >= c->len) return AIT_OK;
    c->n = 0;
    c->row_line = c->line;
    for (;;) {
        if (c->n == CSV_FIELDS_MAX)
            return err_set(e, AIT_E_PARSE, "%s:%d: more than %d fields", c->name, c->row_line,
                           CSV_FIELDS_MAX);
        char *out = c->store + (size_t)c->n * (CSV_FIELD_MAX + 1);
        size_t k = 0;
        c->f[c->n++] = out;
        bool quoted = c->pos < c->len && c->text[c->pos] == '"';
        if (quoted) {
            c->pos++;
            for (;;) {
                if (c->pos >= c->len)
                    return err_set(e, AIT_E_PARSE, "%s:%d: field %d: a quoted field never ends",
                                   c->name, c->row_line, c->n);
                char ch = c->text[c->pos++];
                if (ch == '"') {
                    if (c->pos < c->len && c->text[c->pos] == '"') c->pos++;
                    else break;
                }
                if (ch == '\n') c->line++;
                if (k == CSV_FIELD_MAX)
                    return err_set(e, AIT_E_PARSE, "%s:%d: field %d is longer than %d bytes",
                                   c->name, c->row_line, c->n, CSV_FIELD_MAX);
                out[k++] = ch;
            }
        } else {
            while (c->pos < c->len) {
                char ch = c->text[c->pos];
                if (ch == ',' || ch == '\n' || (ch == '\r' && c->pos + 1 < c->len && c->text[c->pos + 1] == '\n'))
                    break;
                if (ch == '"' || ch == '\0' || ch == '\r')
                    return err_set(e, AIT_E_PARSE, "%s:%d: field %d: a %s inside an unquoted field",
                                   c->name, c->row_line, c->n,
                                   ch == '"' ? "quote" : ch == '\r' ? "carriage return" : "NUL byte");
                if (k == CSV_FIELD_MAX)
                    return err_set(e, AIT_E_PARSE, "%s:%d: field %d is longer than %d bytes",
                                   c->name, c->row_line, c->n, CSV_FIELD_MAX);
                out[k++] = ch;
                c->pos++;
            }
        }
        out[k] = '\0';
        if (quoted && memchr(out, '\0', k))
            return err_set(e, AIT_E_PARSE, "%s:%d: field %d holds a NUL byte", c->name, c->row_line, c->n);
        if (c->pos >= c->len) break;
        char ch = c->text[c->pos];
        if (ch == ',') {
            c->pos++;
            continue;
        }
        if (ch == '\r' && c->pos + 1 < c->len && c->text[c->pos + 1] == '\n') c->pos++;
        if (c->text[c->pos] == '\n') {
            c->pos++;
            c->line++;
            break;
        }
        return err_set(e, AIT_E_PARSE, "%s:%d: field %d: text after the closing quote", c->name,
                       c->row_line, c->n);
    }
    *got = true;
    return AIT_OK;
}

int csv_format(char *buf, size_t n, const char *const *fields, int nf)
{
    size_t k = 0;
#define PUT(ch)                         \
    do {                                \
        if (k + 1 >= n) return -1;      \
        buf[k++] = (ch);                \
    } while (0)
    for (int i = 0; i < nf; i++) {
        const char *s = fields[i] ? fields[i] : "";
        bool q = strpbrk(s, ",\"\r\n") != NULL || (*s == ' ');
        if (i) PUT(',');
        if (q) PUT('"');
        for (; *s; s++) {
            if (*s == '"' && q) PUT('"');
            PUT(*s);
        }
        if (q) PUT('"');
    }
    PUT('\n');
#undef PUT
    buf[k] = '\0';
    return (int)k;
}

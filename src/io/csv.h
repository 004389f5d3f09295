/* CSV (RFC 4180): comma-separated fields, a field in double quotes may
 * hold commas, newlines and "" for a quote. Read strictly and bounded:
 * a field longer than CSV_FIELD_MAX bytes, a row of more than
 * CSV_FIELDS_MAX fields, a stray quote or an unterminated quoted field is
 * an error naming file:line (the line the row starts on). Rows may end in
 * \n or \r\n; blank lines are skipped. */
#ifndef AIT_IO_CSV_H
#define AIT_IO_CSV_H
#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"

#define CSV_FIELD_MAX 1024
#define CSV_FIELDS_MAX 64
#define CSV_FILE_MAX ((size_t)256 << 20)

typedef struct csv {
    char name[256]; /* the file, for messages */
    char *text;     /* owned */
    size_t len, pos;
    int line;       /* of the next row */
    /* The current row: n fields, NUL-terminated, starting on line `row_line`. */
    int n;
    int row_line;
    char *f[CSV_FIELDS_MAX];
    char *store; /* the fields' bytes, CSV_FIELDS_MAX * (CSV_FIELD_MAX + 1) */
} csv;

/* Reads a file (at most CSV_FILE_MAX bytes) or takes a copy of text. */
ait_status csv_open(csv *c, const char *path, ait_error *e);
ait_status csv_open_mem(csv *c, const char *name, const char *text, size_t len, ait_error *e);
/* The next row into c->n, c->f; *got false at the end. */
ait_status csv_next(csv *c, bool *got, ait_error *e);
void csv_close(csv *c);

/* Writes the fields as one line ending in \n into buf[n], quoting those
 * that need it. Returns the length, or -1 when it does not fit. */
int csv_format(char *buf, size_t n, const char *const *fields, int nf);

#endif

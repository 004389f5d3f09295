/* Reports of an inspection: which modules a view shows (shared by the text
 * table and JSON), and the inspection as one JSON document. */
#ifndef AIT_TUNE_REPORT_H
#define AIT_TUNE_REPORT_H
#include "io/json.h"
#include "tune/inspect.h"
#include "tune/select.h"

typedef struct report_filter {
    int min_depth;    /* 0 shows the whole model as a row */
    int max_depth;    /* < 0: no limit */
    double min_share; /* 0..1 */
    int limit;        /* at most this many rows; <= 0: no limit */
    int module;       /* >= 0: only this module */
} report_filter;

/* Fills rows (room for r->tree->n) with the modules to show, depth first in
 * tree order; returns how many, and in *cut how many more the limit left
 * out (may be NULL). */
int report_rows(const inspection *r, const report_filter *f, int *rows, int *cut);

/* Display name of module m: its path, "(model)" for the root. */
const char *report_name(const inspection *r, int m);

/* Writes the inspection as one JSON object: the model, batch sizes, whether
 * shapes are assumed static, times and coverage, and per shown module its
 * stats, selection and strategy (sel may be NULL) and graph spec. */
void report_json(json_w *w, const inspection *r, const selection *sel, const int *rows, int n);

#endif

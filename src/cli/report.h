/* ait report: the HTML page's pieces (report_html.c), written by
 * report.c from a tune's JSON. The page is one self-contained file: inline
 * CSS and SVG, no script, nothing fetched. */
#ifndef AIT_CLI_REPORT_H
#define AIT_CLI_REPORT_H
#include <stdio.h>

/* s with & < > " ' escaped (NULL: nothing). */
void html_text(FILE *f, const char *s);
/* A horizontal bar chart: one row per item, label on the left, a bar for
 * val[i] and, when lo/hi are given, a whisker from lo[i] to hi[i]; bar
 * `mark` (or -1) is drawn as the chosen one; indent[i] (or NULL) shifts a
 * label right, for a tree; text[i] is printed after the bar. */
typedef struct bar_chart {
    int n;
    const char *const *label;
    const int *indent;
    const double *val, *lo, *hi; /* lo, hi may be NULL; a negative val: no bar */
    const char *const *text;
    int mark;
    const char *title; /* the chart's accessible name */
} bar_chart;
void svg_bars(FILE *f, const bar_chart *c);
/* The page's head (title, style) and its end. */
void html_begin(FILE *f, const char *title);
void html_end(FILE *f);
#endif

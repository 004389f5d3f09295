/* SVG charts of the `ait` command (svg.c): `ait report`'s page draws them
 * inline (its CSS styles them), `ait gemm compare -o chart.svg` writes one
 * as a file of its own (its style inside). Self-contained: no script,
 * nothing fetched. */
#ifndef AIT_CLI_SVG_H
#define AIT_CLI_SVG_H
#include <stdbool.h>
#include <stdio.h>

/* s with & < > " ' escaped (NULL: nothing). */
void html_text(FILE *f, const char *s);
/* A horizontal bar chart: one row per item, label on the left, a bar for
 * val[i] and, when lo/hi are given, a whisker from lo[i] to hi[i]; bar
 * `mark` (or -1) is drawn as the chosen one; indent[i] (or NULL) shifts a
 * label right, for a tree; text[i] is printed after the bar. ref > 0 draws
 * a dashed line across the bars at that value, named ref_label (a speed-up
 * chart's 1.0x: no change). */
typedef struct bar_chart {
    int n;
    const char *const *label;
    const int *indent;
    const double *val, *lo, *hi; /* lo, hi may be NULL; a negative val: no bar */
    const char *const *text;
    int mark;
    const char *title; /* the chart's accessible name; a file's heading too */
    double ref;
    const char *ref_label;
} bar_chart;
/* The chart as an element of an HTML page styled by svg_css. */
void svg_bars(FILE *f, const bar_chart *c);
/* The chart as an SVG file of its own: the title above it, the style inside. */
void svg_bars_file(FILE *f, const bar_chart *c);
/* The charts' CSS (classes lbl, val, bar, bar.chosen, whisk, ref). */
extern const char svg_css[];
#endif

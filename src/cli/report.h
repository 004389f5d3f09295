/* ait report: the HTML page's pieces (report_html.c), written by
 * report.c from a tune's JSON. The page is one self-contained file: inline
 * CSS and SVG, no script, nothing fetched. */
#ifndef AIT_CLI_REPORT_H
#define AIT_CLI_REPORT_H
#include <stdio.h>

#include "cli/svg.h"

/* The page's head (title, style) and its end. */
void html_begin(FILE *f, const char *title);
void html_end(FILE *f);
#endif

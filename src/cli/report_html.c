/* The HTML pieces of `ait report` (see report.h; its charts: svg.c). */
#include "cli/report.h"

void html_begin(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    html_text(f, title);
    fputs("</title>\n<style>\n"
          "body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;"
          "padding:0 16px}\n"
          "h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}"
          "h3{font-size:15px;margin:20px 0 6px}\n"
          "table{border-collapse:collapse;margin:6px 0}td,th{padding:3px 8px;border-bottom:1px solid #eee;"
          "text-align:left;vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;"
          "font-variant-numeric:tabular-nums}\n"
          "tr.chosen td{background:#e6f4e6;font-weight:600}tr.bad td{color:#999}\n"
          ".meta{color:#555}.why{margin:4px 0 12px}code{background:#f4f4f4;padding:0 3px}\n", f);
    fputs(svg_css, f);
    fputs("</style>\n</head>\n<body>\n", f);
}

void html_end(FILE *f)
{
    fputs("</body>\n</html>\n", f);
}

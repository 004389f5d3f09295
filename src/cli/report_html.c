/* The HTML and SVG pieces of `ait report` (see report.h). */
#include "cli/report.h"

#include <math.h>

void html_text(FILE *f, const char *s)
{
    for (; s && *s; s++) switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
}

enum { W = 760, LABEL = 230, ROW = 22, TEXT = 150 };

void svg_bars(FILE *f, const bar_chart *c)
{
    double top = 0;
    for (int i = 0; i < c->n; i++) {
        double v = c->hi && c->hi[i] > c->val[i] ? c->hi[i] : c->val[i];
        if (isfinite(v) && v > top) top = v;
    }
    if (top <= 0) top = 1;
    const double span = W - LABEL - TEXT;
    fprintf(f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", W, c->n * ROW + 4, W, c->n * ROW + 4);
    html_text(f, c->title);
    fputs("\">\n", f);
    for (int i = 0; i < c->n; i++) {
        int y = i * ROW + 2, in = c->indent ? c->indent[i] * 14 : 0;
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lbl\">", 4 + in, y + 15);
        html_text(f, c->label[i]);
        fputs("</text>", f);
        if (c->val[i] >= 0 && isfinite(c->val[i])) {
            double w = c->val[i] / top * span;
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" class=\"%s\"/>", LABEL,
                    y + 3, w < 1 ? 1 : w, ROW - 8, i == c->mark ? "bar chosen" : "bar");
            if (c->lo && c->hi && c->hi[i] > c->lo[i]) {
                double x0 = LABEL + c->lo[i] / top * span, x1 = LABEL + c->hi[i] / top * span;
                fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"whisk\"/>", x0,
                        x1, y + ROW / 2, y + ROW / 2);
            }
        }
        fprintf(f, "<text x=\"%.0f\" y=\"%d\" class=\"val\">", LABEL + span + 6, y + 15);
        html_text(f, c->text[i]);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
}

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
          ".meta{color:#555}.why{margin:4px 0 12px}code{background:#f4f4f4;padding:0 3px}\n"
          "svg.chart{display:block;margin:6px 0}.lbl,.val{font:12px system-ui,sans-serif;fill:#222}"
          ".bar{fill:#8fb3d9}.bar.chosen{fill:#3a9a48}.whisk{stroke:#333;stroke-width:1.5}\n"
          "</style>\n</head>\n<body>\n", f);
}

void html_end(FILE *f)
{
    fputs("</body>\n</html>\n", f);
}

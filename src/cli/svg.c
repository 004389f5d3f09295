/* SVG charts (svg.h). */
#include "cli/svg.h"

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

const char svg_css[] =
    "svg.chart{display:block;margin:6px 0}.lbl,.val,.head{font:12px system-ui,sans-serif;fill:#222}"
    ".head{font-weight:600;font-size:14px}"
    ".bar{fill:#8fb3d9}.bar.chosen{fill:#3a9a48}.whisk{stroke:#333;stroke-width:1.5}"
    ".ref{stroke:#c33;stroke-width:1;stroke-dasharray:4 3}\n";

enum { W = 780, LABEL = 240, ROW = 22, TEXT = 170, HEAD = 26 };

static void bars(FILE *f, const bar_chart *c, bool file)
{
    double top = c->ref > 0 ? c->ref : 0;
    for (int i = 0; i < c->n; i++) {
        double v = c->hi && c->hi[i] > c->val[i] ? c->hi[i] : c->val[i];
        if (isfinite(v) && v > top) top = v;
    }
    if (top <= 0) top = 1;
    const double span = W - LABEL - TEXT;
    const int y0 = file ? HEAD : 0, h = y0 + c->n * ROW + 4;
    if (file) fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", W, h, W, h);
    html_text(f, c->title);
    fputs("\">\n", f);
    if (file) {
        fprintf(f, "<style>%s</style>\n<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", svg_css, W, h);
        fputs("<text x=\"4\" y=\"17\" class=\"head\">", f);
        html_text(f, c->title);
        fputs("</text>\n", f);
    }
    for (int i = 0; i < c->n; i++) {
        int y = y0 + i * ROW + 2, in = c->indent ? c->indent[i] * 14 : 0;
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
    if (c->ref > 0) {
        double x = LABEL + c->ref / top * span;
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"ref\"><title>", x, x,
                y0, h - 2);
        html_text(f, c->ref_label);
        fputs("</title></line>\n", f);
    }
    fputs("</svg>\n", f);
}

void svg_bars(FILE *f, const bar_chart *c) { bars(f, c, false); }
void svg_bars_file(FILE *f, const bar_chart *c) { bars(f, c, true); }

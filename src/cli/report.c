/* ait report: one self-contained HTML page (inline CSS and SVG, no script,
 * nothing fetched) from a tune's JSON: `ait tune --json`, `ait show --json`
 * or the .ait artifact itself. It shows the module tree and time shares,
 * the plan, per module and bucket every candidate (latency, spread, error)
 * and why the chosen one was chosen, the whole-plan check, and the
 * trade-off table and the end-to-end accuracy when quantised variants were
 * tried. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "io/artifact.h"
#include "io/file.h"
#include "io/json_read.h"

static const char *report_help =
    "usage: ait report NAME.ait|TUNE.json -o REPORT.html\n"
    "\n"
    "Writes one self-contained HTML page (inline CSS and SVG charts; nothing is\n"
    "fetched, so it opens offline and can be mailed) from a tune: an artifact\n"
    "(`ait tune -o NAME.ait`), the JSON of `ait tune --json`, or `ait show --json`.\n"
    "It shows the module tree with each module's share of the time, the plan\n"
    "(per module and batch bucket the candidate chosen and why), every candidate\n"
    "tried with its median latency, spread (p10 to p90) and error against the\n"
    "reference, the whole-plan check, and, when quantised variants were tried, a\n"
    "trade-off table of latency against error and the whole model's end-to-end\n"
    "error against the float32 reference (with the budget and what was walked back).\n"
    "\n"
    "options:\n"
    "  -o, --output FILE   the page to write (required)\n"
    "\n"
    "example:\n"
    "  ait tune models/mlp.onnx --batch-sizes 1,8 -o mlp.ait && ait report mlp.ait -o mlp.html\n";

static double num(const json_val *o, const char *key)
{
    double v = -1;
    return json_num_of(json_get(o, key), &v) ? v : -1;
}

static const char *str(const json_val *o, const char *key)
{
    const char *s = json_str_of(json_get(o, key));
    return s ? s : "";
}

static bool flag(const json_val *o, const char *key)
{
    const json_val *v = json_get(o, key);
    return v && v->kind == JSON_BOOL && v->b;
}

/* A number cell: "-" when the JSON has none (a failed candidate). */
static void cell(FILE *f, const char *cls, const char *fmt, double v)
{
    fprintf(f, "<td class=\"n %s\">", cls);
    if (v >= 0) fprintf(f, fmt, v);
    else fputs("-", f);
    fputs("</td>", f);
}

static const char *mod_name(const json_val *m)
{
    const char *p = str(m, "path");
    return flag(m, "whole") || !*p ? "(whole model)" : p;
}

/* The tree: from the artifact's inspection (share of the model's time), or
 * else from the tune alone (share of the tuned modules' baseline time at
 * the first bucket). */
static void tree_section(FILE *f, const json_val *tuning, const json_val *insp)
{
    fputs("<h2 id=\"tree\">Module tree and time shares</h2>\n", f);
    const json_val *im = json_get(insp, "modules");
    int n = json_len(im);
    bool from_insp = n > 0;
    const json_val *tm = json_get(tuning, "modules");
    if (!from_insp) n = json_len(tm);
    const char **label = calloc((size_t)n + 1, sizeof *label), **text = calloc((size_t)n + 1, sizeof *text);
    int *indent = calloc((size_t)n + 1, sizeof *indent);
    double *val = calloc((size_t)n + 1, sizeof *val);
    char (*buf)[32] = calloc((size_t)n + 1, sizeof *buf);
    if (!label || !text || !indent || !val || !buf) goto done;
    int k = 0;
    double total = 0, first_batch = -1;
    for (int i = 0; i < n; i++) {
        const json_val *m = from_insp ? json_at(im, i) : json_at(tm, i);
        if (from_insp) {
            label[k] = *str(m, "path") ? str(m, "path") : "(model)", val[k] = num(m, "share");
            indent[k] = num(m, "depth") > 1 ? (int)num(m, "depth") - 1 : 0;
        } else {
            /* One row per module: its baseline at the first bucket tuned. */
            if (first_batch < 0) first_batch = num(m, "batch");
            if (num(m, "batch") != first_batch || flag(m, "whole")) continue;
            label[k] = mod_name(m);
            val[k] = num(json_at(json_get(m, "candidates"), 0), "median_ms");
            for (const char *p = label[k]; *p; p++) indent[k] += *p == '.';
            if (val[k] > 0) total += val[k];
        }
        k++;
    }
    for (int i = 0; i < k; i++) {
        if (!from_insp) val[i] = total > 0 && val[i] > 0 ? val[i] / total : -1;
        if (val[i] >= 0) snprintf(buf[i], sizeof buf[i], "%.1f%%", val[i] * 100);
        else snprintf(buf[i], sizeof buf[i], "-");
        text[i] = buf[i];
    }
    if (from_insp)
        fprintf(f, "<p class=\"meta\">Share of the model's time (%.4g ms per run, measured by the "
                   "inspection at batch sizes as tuned), for the modules in the plan.</p>\n",
                num(insp, "model_ms"));
    else
        fprintf(f, "<p class=\"meta\">Share of the tuned modules' baseline time (the reference "
                   "backend, one thread) at batch %.0f: a tune's JSON holds no inspection; the "
                   "artifact's report shows the model's own shares.</p>\n", first_batch);
    bar_chart c = {.n = k, .label = label, .indent = indent, .val = val, .text = text, .mark = -1,
                   .title = "module time shares"};
    svg_bars(f, &c);
    fputs("<table class=\"tree\"><tr><th>module</th><th>share</th></tr>\n", f);
    for (int i = 0; i < k; i++) {
        fprintf(f, "<tr><td style=\"padding-left:%dpx\">", 8 + indent[i] * 14);
        html_text(f, label[i]);
        fprintf(f, "</td><td class=\"n share\">%s</td></tr>\n", text[i]);
    }
    fputs("</table>\n", f);
done:
    free(label), free(text), free(indent), free(val), free(buf);
}

static const json_val *chosen_cand(const json_val *m)
{
    const json_val *cs = json_get(m, "candidates");
    for (int c = 0; c < json_len(cs); c++)
        if (flag(json_at(cs, c), "chosen")) return json_at(cs, c);
    return NULL;
}

static void plan_section(FILE *f, const json_val *tuning)
{
    const json_val *mods = json_get(tuning, "modules");
    fputs("<h2 id=\"plan\">Plan</h2>\n<table class=\"plan\"><tr><th>module</th><th>batch</th>"
          "<th>chosen</th><th>median ms</th><th>speedup</th><th>why</th></tr>\n", f);
    for (int i = 0; i < json_len(mods); i++) {
        const json_val *m = json_at(mods, i), *c = chosen_cand(m);
        fputs("<tr><td>", f);
        html_text(f, mod_name(m));
        fprintf(f, "</td><td class=\"n\">%.0f</td><td>", num(m, "batch"));
        html_text(f, c ? str(c, "name") : "not taken");
        fputs("</td>", f);
        cell(f, "median", "%.4g", c ? num(c, "median_ms") : -1);
        cell(f, "speedup", "%.2fx", c ? num(c, "speedup") : -1);
        fputs("<td>", f);
        html_text(f, str(m, "why"));
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* Per module and bucket: the candidates as a chart (median, p10..p90) and
 * a table, then the choice and why. */
static void module_section(FILE *f, const json_val *m, int idx)
{
    const json_val *cs = json_get(m, "candidates");
    int n = json_len(cs), mark = -1;
    fprintf(f, "<section class=\"module\" id=\"m%d\" data-module=\"", idx);
    html_text(f, str(m, "path"));
    fprintf(f, "\" data-batch=\"%.0f\">\n<h3>", num(m, "batch"));
    html_text(f, mod_name(m));
    fprintf(f, " at batch %.0f <span class=\"meta\">(strategy ", num(m, "batch"));
    html_text(f, str(m, "strategy"));
    fprintf(f, ", validated on %.0f input set%s)</span></h3>\n", num(m, "validation_sets"),
            num(m, "validation_sets") == 1 ? "" : "s");
    const char **label = calloc((size_t)n + 1, sizeof *label), **text = calloc((size_t)n + 1, sizeof *text);
    double *val = calloc((size_t)n + 1, sizeof *val), *lo = calloc((size_t)n + 1, sizeof *lo),
           *hi = calloc((size_t)n + 1, sizeof *hi);
    char (*buf)[48] = calloc((size_t)n + 1, sizeof *buf);
    if (label && text && val && lo && hi && buf) {
        for (int c = 0; c < n; c++) {
            const json_val *x = json_at(cs, c);
            label[c] = str(x, "name"), val[c] = num(x, "median_ms");
            lo[c] = num(x, "p10_ms"), hi[c] = num(x, "p90_ms");
            if (flag(x, "chosen")) mark = c;
            if (val[c] >= 0) snprintf(buf[c], sizeof buf[c], "%.4g ms", val[c]);
            else snprintf(buf[c], sizeof buf[c], "%s", str(x, "status"));
            text[c] = buf[c];
        }
        bar_chart ch = {.n = n, .label = label, .val = val, .lo = lo, .hi = hi, .text = text,
                        .mark = mark, .title = "candidate median latency, p10 to p90"};
        svg_bars(f, &ch);
    }
    free(label), free(text), free(val), free(lo), free(hi), free(buf);
    fputs("<table class=\"cands\"><tr><th>candidate</th><th>status</th><th>median ms</th>"
          "<th>spread ms</th><th>items/s</th><th>speedup</th><th>max rel err</th><th>runs</th>"
          "<th>note</th></tr>\n", f);
    for (int c = 0; c < n; c++) {
        const json_val *x = json_at(cs, c);
        bool ok = !strcmp(str(x, "status"), "ok");
        fprintf(f, "<tr class=\"%s\" data-cand=\"", flag(x, "chosen") ? "chosen" : ok ? "ok" : "bad");
        html_text(f, str(x, "name"));
        fputs("\"><td>", f);
        html_text(f, str(x, "name"));
        fputs("</td><td>", f);
        html_text(f, str(x, "status"));
        fputs("</td>", f);
        cell(f, "median", "%.4g", num(x, "median_ms"));
        cell(f, "spread", "%.4g", num(x, "spread_ms"));
        cell(f, "thr", "%.1f", num(x, "throughput"));
        cell(f, "speedup", "%.2fx", num(x, "speedup"));
        cell(f, "err", "%.3g", num(x, "max_rel_err"));
        cell(f, "runs", "%.0f", num(x, "runs"));
        fputs("<td>", f);
        if (!ok) html_text(f, str(x, "reason"));
        else if (json_get(x, "converged") && !flag(x, "converged")) fputs("not converged", f);
        if (flag(x, "cached")) fputs(" (cached)", f);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n<p class=\"why\"><b>", f);
    const json_val *c = chosen_cand(m);
    html_text(f, c ? str(c, "name") : "not in the plan");
    fputs("</b>: ", f);
    html_text(f, str(m, "why"));
    fputs("</p>\n</section>\n", f);
}

static void check_section(FILE *f, const json_val *tuning)
{
    const json_val *checks = json_get(tuning, "plan_checks");
    fputs("<h2 id=\"check\">Whole-plan check</h2>\n", f);
    if (!json_len(checks))
        fputs("<p>None ran (no bucket whose modules all have a speed strategy, or "
              "--no-plan-check).</p>\n", f);
    for (int i = 0; i < json_len(checks); i++) {
        const json_val *c = json_at(checks, i), *plans = json_get(c, "plans");
        int n = json_len(plans), mark = -1;
        fprintf(f, "<section class=\"check\" data-batch=\"%.0f\"><h3>batch %.0f: ", num(c, "batch"),
                num(c, "batch"));
        html_text(f, str(c, "outcome"));
        fputs("</h3>\n<p>", f);
        html_text(f, str(c, "note"));
        if (num(c, "processes") > 0)
            fprintf(f, " <span class=\"meta\">(model ms: median of %.0f processes, %.1f s)</span>",
                    num(c, "processes"), num(c, "check_s"));
        fputs("</p>\n", f);
        if (!n) {
            fputs("</section>\n", f);
            continue;
        }
        const char **label = calloc((size_t)n, sizeof *label), **text = calloc((size_t)n, sizeof *text);
        double *val = calloc((size_t)n, sizeof *val);
        char (*buf)[32] = calloc((size_t)n, sizeof *buf);
        if (label && text && val && buf) {
            for (int p = 0; p < n; p++) {
                const json_val *x = json_at(plans, p);
                label[p] = str(x, "name"), val[p] = num(x, "model_ms");
                if (flag(x, "taken")) mark = p;
                snprintf(buf[p], sizeof buf[p], "%.4g ms", val[p]);
                text[p] = buf[p];
            }
            bar_chart ch = {.n = n, .label = label, .val = val, .text = text, .mark = mark,
                            .title = "whole model median latency per plan"};
            svg_bars(f, &ch);
        }
        free(label), free(text), free(val), free(buf);
        fputs("<table class=\"plans\"><tr><th>plan</th><th>modules ms</th><th>model ms</th>"
              "<th>tuned / this</th></tr>\n", f);
        for (int p = 0; p < n; p++) {
            const json_val *x = json_at(plans, p);
            fprintf(f, "<tr class=\"%s\" data-plan=\"", flag(x, "taken") ? "chosen" : "ok");
            html_text(f, str(x, "name"));
            fputs("\"><td>", f);
            html_text(f, str(x, "name"));
            fputs("</td>", f);
            cell(f, "pred", "%.4g", num(x, "modules_ms"));
            cell(f, "model", "%.4g", num(x, "model_ms"));
            cell(f, "ratio", "%.3fx", num(x, "tuned_over_this"));
            fputs("</tr>\n", f);
        }
        fputs("</table>\n</section>\n", f);
    }
}

/* A candidate is a quantised variant when its variant or name says a
 * precision below float32 (none of today's backends offers one). */
static bool quantised(const json_val *x)
{
    static const char *const marks[] = {"int8", "int4", "uint8", "q8", "q4", "quant", "fp8",
                                        "float8", "fp16", "bf16"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (strstr(str(x, "variant"), marks[i]) || strstr(str(x, "name"), marks[i])) return true;
    return false;
}

static void tradeoff_section(FILE *f, const json_val *tuning)
{
    const json_val *mods = json_get(tuning, "modules");
    bool any = false;
    for (int i = 0; i < json_len(mods) && !any; i++)
        for (int c = 0; c < json_len(json_get(json_at(mods, i), "candidates")); c++)
            any |= quantised(json_at(json_get(json_at(mods, i), "candidates"), c));
    if (!any) return;
    fputs("<h2 id=\"tradeoff\">Trade-offs: quantised variants</h2>\n<p class=\"meta\">Each "
          "quantised candidate's latency against its error, beside the module's fastest full-"
          "precision candidate.</p>\n<table class=\"tradeoff\"><tr><th>module</th><th>batch</th>"
          "<th>candidate</th><th>median ms</th><th>speedup</th><th>max rel err</th>"
          "<th>SQNR dB</th><th>fastest full precision</th><th>its ms</th></tr>\n", f);
    for (int i = 0; i < json_len(mods); i++) {
        const json_val *m = json_at(mods, i), *cs = json_get(m, "candidates"), *best = NULL;
        for (int c = 0; c < json_len(cs); c++) {
            const json_val *x = json_at(cs, c);
            if (!quantised(x) && num(x, "median_ms") >= 0 &&
                (!best || num(x, "median_ms") < num(best, "median_ms")))
                best = x;
        }
        for (int c = 0; c < json_len(cs); c++) {
            const json_val *x = json_at(cs, c);
            if (!quantised(x)) continue;
            fprintf(f, "<tr data-cand=\"");
            html_text(f, str(x, "name"));
            fputs("\"><td>", f);
            html_text(f, mod_name(m));
            fprintf(f, "</td><td class=\"n\">%.0f</td><td>", num(m, "batch"));
            html_text(f, str(x, "name"));
            fputs("</td>", f);
            cell(f, "median", "%.4g", num(x, "median_ms"));
            cell(f, "speedup", "%.2fx", num(x, "speedup"));
            cell(f, "err", "%.3g", num(x, "max_rel_err"));
            const char *inf = json_str_of(json_get(x, "sqnr_db"));
            if (inf) fprintf(f, "<td class=\"n sqnr\">%s</td>", inf);
            else cell(f, "sqnr", "%.1f", num(x, "sqnr_db"));
            fputs("<td>", f);
            html_text(f, best ? str(best, "name") : "-");
            fputs("</td>", f);
            cell(f, "best", "%.4g", best ? num(best, "median_ms") : -1);
            fputs("</tr>\n", f);
        }
    }
    fputs("</table>\n", f);
}

/* One table of end-to-end figures (as tuned, or final). */
static void figures_table(FILE *f, const char *label, const json_val *outs)
{
    for (int j = 0; j < json_len(outs); j++) {
        const json_val *o = json_at(outs, j);
        fprintf(f, "<tr data-figures=\"%s\"><td>%s</td><td>", label, label);
        html_text(f, str(o, "output"));
        fputs("</td>", f);
        cell(f, "abs", "%.3g", num(o, "max_abs_err"));
        cell(f, "err", "%.3g", num(o, "max_rel_err"));
        const char *inf = json_str_of(json_get(o, "sqnr_db"));
        if (inf) fprintf(f, "<td class=\"n sqnr\">%s</td>", inf);
        else cell(f, "sqnr", "%.1f", num(o, "sqnr_db"));
        double top = num(o, "top1_agreement");
        cell(f, "top1", "%.2f%%", top >= 0 ? top * 100 : -1);
        fputs("</tr>\n", f);
    }
}

/* The end-to-end accuracy guard: per bucket the whole model's error on the
 * plan against the float32 reference, the budget and what was walked back. */
static void accuracy_section(FILE *f, const json_val *tuning)
{
    const json_val *acc = json_get(tuning, "accuracy");
    const json_val *bs = json_get(acc, "buckets");
    if (!json_len(bs)) return;
    fputs("<h2 id=\"accuracy\">End-to-end accuracy</h2>\n<p class=\"meta\">The whole model on "
          "each bucket's plan, on every tuning sample, against the float32 reference (the "
          "reference backend). Budget: ", f);
    html_text(f, str(json_get(acc, "budget"), "text"));
    fputs(". A plan that misses it is walked back, the quantised module with the lowest SQNR "
          "first, to float32 until it fits.</p>\n", f);
    for (int i = 0; i < json_len(bs); i++) {
        const json_val *b = json_at(bs, i);
        fprintf(f, "<section class=\"accuracy\" data-batch=\"%.0f\"><h3>batch %.0f: %s</h3>\n"
                   "<p>", num(b, "batch"), num(b, "batch"), flag(b, "fits") ? "fits" : "missed");
        html_text(f, str(b, "note"));
        fprintf(f, " <span class=\"meta\">(%.0f sample batches, %.0f rows, %.1f s)</span></p>\n",
                num(b, "sample_batches"), num(b, "rows"), num(b, "check_s"));
        fputs("<table class=\"accuracy\"><tr><th>plan</th><th>output</th><th>max abs err</th>"
              "<th>max rel err</th><th>SQNR dB</th><th>top-1 agreement</th></tr>\n", f);
        figures_table(f, "as tuned", json_get(b, "as_tuned"));
        if (num(b, "walked_back") > 0) figures_table(f, "final", json_get(b, "final"));
        fputs("</table>\n</section>\n", f);
    }
}

static int write_page(FILE *f, const char *src, const json_val *tuning, const json_val *insp)
{
    char title[512];
    const char *model = str(tuning, "model"), *base = strrchr(model, '/');
    snprintf(title, sizeof title, "ait report: %s", base ? base + 1 : model);
    html_begin(f, title);
    fputs("<h1>", f);
    html_text(f, title);
    fputs("</h1>\n<p class=\"meta\">model <code>", f);
    html_text(f, model);
    fputs("</code> &middot; ait ", f);
    html_text(f, str(tuning, "ait_version"));
    fputs(" &middot; from <code>", f);
    html_text(f, src);
    fputs("</code></p>\n<p><a href=\"#tree\">module tree</a> &middot; <a href=\"#plan\">plan</a> "
          "&middot; <a href=\"#modules\">candidates</a> &middot; <a href=\"#check\">whole-plan "
          "check</a></p>\n", f);
    tree_section(f, tuning, insp);
    plan_section(f, tuning);
    fputs("<h2 id=\"modules\">Candidates per module and bucket</h2>\n<p class=\"meta\">Bars: "
          "median latency (the chosen one green); whiskers: p10 to p90. Error: the largest "
          "relative difference from the reference backend's outputs.</p>\n", f);
    const json_val *mods = json_get(tuning, "modules");
    for (int i = 0; i < json_len(mods); i++) module_section(f, json_at(mods, i), i);
    check_section(f, tuning);
    tradeoff_section(f, tuning);
    accuracy_section(f, tuning);
    html_end(f);
    return ferror(f) ? -1 : 0;
}

/* The document as JSON: an artifact's manifest, or a JSON file. */
static ait_status read_doc(const char *path, json_val **out, ait_error *e)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    int fd;
    struct stat st;
    TRY(file_open_regular(path, &fd, &st, e));
    char head[64];
    ssize_t got = read(fd, head, sizeof head);
    close(fd);
    ssize_t k = 0;
    while (k < got && head[k] && strchr(" \t\r\n", head[k])) k++;
    if (k < got && head[k] != '{') { /* not a JSON object: an artifact */
        artifact *a = NULL;
        artifact_expect x = {.skip_cpu_check = 1};
        TRY(artifact_open(path, &x, &a, e));
        const char *text = (const char *)artifact_manifest(a, &len);
        ait_status s = json_parse(text, len, path, out, e);
        artifact_close(a);
        return s;
    }
    TRY(file_read_all(path, (size_t)1 << 30, &buf, &len, e));
    ait_status s = json_parse((const char *)buf, len, path, out, e);
    free(buf);
    return s;
}

int cmd_report(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(report_help, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            if (++i == argc) return cli_usage("report", "%s needs a file name", argv[i - 1]);
            out = argv[i];
        } else if (argv[i][0] == '-') {
            return cli_usage("report", "unknown option '%s'", argv[i]);
        } else if (in) {
            return cli_usage("report", "unexpected argument '%s': one tune only, and it is '%s'", argv[i], in);
        } else in = argv[i];
    }
    if (!in || !out)
        return cli_usage("report", "%s", !in ? "no tune given: ait report NAME.ait|TUNE.json -o "
                                                "REPORT.html" : "no output given: -o REPORT.html");
    ait_error e = {0};
    json_val *doc = NULL;
    if (read_doc(in, &doc, &e) != AIT_OK) {
        fprintf(stderr, "ait report: %s\n", e.msg);
        return 1;
    }
    /* A manifest (.ait, ait show --json) holds the tune under "tuning". */
    const json_val *tuning = json_get(doc, "tuning") ? json_get(doc, "tuning") : doc;
    if (json_get(tuning, "modules") == NULL || json_get(tuning, "modules")->kind != JSON_ARR) {
        fprintf(stderr, "ait report: %s: not a tune's JSON (no \"modules\"): give a .ait, or the "
                        "output of ait tune --json or ait show --json\n", in);
        json_free(doc);
        return 1;
    }
    FILE *f = fopen(out, "w");
    if (!f) {
        fprintf(stderr, "ait report: %s: %s\n", out, strerror(errno));
        json_free(doc);
        return 1;
    }
    int rc = write_page(f, in, tuning, json_get(doc, "inspection"));
    if (fclose(f) != 0) rc = -1;
    json_free(doc);
    if (rc) {
        fprintf(stderr, "ait report: writing %s: %s\n", out, strerror(errno));
        return 1;
    }
    fprintf(stderr, "wrote %s\n", out);
    return 0;
}

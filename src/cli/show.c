/* ait show NAME.ait: what an artifact holds and whether it runs here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/cpu.h"
#include "io/artifact.h"
#include "io/json_read.h"

static const char *show_help =
    "usage: ait show NAME.ait [--json]\n"
    "\n"
    "Prints what an artifact made by `ait tune -o NAME.ait` holds: the ait\n"
    "version and CPU it was tuned on, the model (name and sha256), the batch\n"
    "buckets, and per tuned module and bucket the candidate chosen, its median\n"
    "latency against the baseline's, and why; the whole-plan check of each\n"
    "bucket (the tuned plan against single backends, run whole); then every\n"
    "candidate tried. Every\n"
    "hash is checked first; an artifact this machine cannot run (a CPU feature\n"
    "missing) is still shown, with the reason `ait run` would refuse it.\n"
    "\n"
    "options:\n"
    "  --json   print the artifact's JSON manifest instead\n"
    "\n"
    "example:\n"
    "  ait show resnet18.ait\n";

static double num(const json_val *o, const char *key)
{
    double v = 0;
    return json_num_of(json_get(o, key), &v) ? v : 0;
}

static const char *str(const json_val *o, const char *key)
{
    const char *s = json_str_of(json_get(o, key));
    return s ? s : "-";
}

static void print_candidates(const json_val *tuning)
{
    const json_val *mods = json_get(tuning, "modules");
    for (int i = 0; i < json_len(mods); i++) {
        const json_val *m = json_at(mods, i), *cands = json_get(m, "candidates");
        const json_val *w = json_get(m, "whole");
        printf("\n  %s%s at batch %.0f (%s)\n", str(m, "path"),
               w && w->b ? " (whole: the model as one module)" : "", num(m, "batch"),
               str(m, "strategy"));
        printf("    %-18s %-9s %11s %9s  %s\n", "candidate", "status", "median ms", "speedup",
               "note");
        for (int c = 0; c < json_len(cands); c++) {
            const json_val *x = json_at(cands, c);
            const json_val *ch = json_get(x, "chosen");
            bool ok = !strcmp(str(x, "status"), "ok");
            printf("  %c %-18s %-9s", ch && ch->b ? '*' : ' ', str(x, "name"), str(x, "status"));
            if (ok) printf(" %11.3f %8.2fx", num(x, "median_ms"), num(x, "speedup"));
            else printf(" %11s %9s  %s", "-", "-", str(x, "reason"));
            printf("\n");
        }
    }
}

/* The whole-plan check of each bucket: its outcome and the plans' times. */
static void print_checks(const json_val *tuning)
{
    const json_val *checks = json_get(tuning, "plan_checks");
    if (json_len(checks) > 0) printf("\nwhole-plan check (model ms: median over processes)\n");
    for (int i = 0; i < json_len(checks); i++) {
        const json_val *c = json_at(checks, i), *plans = json_get(c, "plans");
        printf("  batch %.0f: %s: %s\n", num(c, "batch"), str(c, "outcome"), str(c, "note"));
        for (int k = 0; k < json_len(plans); k++) {
            const json_val *p = json_at(plans, k), *t = json_get(p, "taken");
            printf("  %c %-22s %9.3f ms  tuned/this %.3f", t && t->b ? '*' : ' ',
                   str(p, "name"), num(p, "model_ms"), num(p, "tuned_over_this"));
            if (k && json_get(p, "spread")) /* artifacts before it have none */
                printf("  spread %.1f%%, need %.1f%%", 100 * num(p, "spread"), 100 * num(p, "need"));
            printf("\n");
        }
    }
}

int cmd_show(int argc, char **argv)
{
    const char *path = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(show_help, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--json")) json = true;
        else if (argv[i][0] == '-') return cli_usage("show", "unknown option '%s'", argv[i]);
        else if (path)
            return cli_usage("show", "unexpected argument '%s': one artifact only, and it is '%s'", argv[i], path);
        else path = argv[i];
    }
    if (!path) return cli_usage("show", "no artifact given");
    ait_error e = {0};
    artifact *a = NULL;
    artifact_expect x = {.skip_cpu_check = 1};
    if (artifact_open(path, &x, &a, &e) != AIT_OK) {
        fprintf(stderr, "ait show: %s\n", e.msg);
        return 1;
    }
    size_t len;
    const char *text = (const char *)artifact_manifest(a, &len);
    if (json) {
        fwrite(text, 1, len, stdout);
        putchar('\n');
        artifact_close(a);
        return 0;
    }
    json_val *mf = NULL;
    if (json_parse(text, len, path, &mf, &e) != AIT_OK) {
        fprintf(stderr, "ait show: %s\n", e.msg);
        artifact_close(a);
        return 1;
    }
    char missing[256] = "";
    bool runs = cpu_has_all(artifact_cpu_needed(a), missing, sizeof missing);
    const json_val *model = json_get(mf, "model"), *cpu = json_get(mf, "cpu");
    uint64_t blob_bytes = 0;
    for (size_t i = 0; i < artifact_blob_count(a); i++) blob_bytes += artifact_blob_at(a, i)->size;
    printf("artifact   %s (all hashes checked)\n", path);
    printf("made by    ait %s on %s\n", artifact_ait_version(a), str(cpu, "name"));
    printf("model      %s, sha256 %s\n", str(model, "name"), artifact_model_hash(a));
    if (num(model, "left_out") > 0) /* a lean artifact (docs/tuning.md) */
        printf("lean       %.0f float weights left out (the prepared blobs replace them): the "
               "model is %.1f MiB of %.1f; it runs only on this plan\n", num(model, "left_out"),
               num(model, "lean_bytes") / (1 << 20), num(model, "bytes") / (1 << 20));
    printf("blobs      %zu, %.1f MiB (the model and prepared weights)\n", artifact_blob_count(a),
           (double)blob_bytes / (1 << 20));
    const char *needs = artifact_cpu_needed(a);
    printf("runs here  %s%s (needs %s)\n", runs ? "yes" : "no: lacks CPU feature ", runs ? "" : missing,
           *needs ? needs : "no particular CPU feature");
    printf("buckets   ");
    const json_val *bk = json_get(mf, "buckets"), *sq = json_get(mf, "sequence");
    bool dec = sq && sq->kind == JSON_OBJ; /* a decoder's: batch/seq/past */
    for (int i = 0; i < json_len(bk); i++) {
        const json_val *b = json_at(bk, i);
        if (dec) printf(" %.0f/%.0f/%.0f", num(b, "batch"), num(b, "seq"), num(b, "past"));
        else printf(" %.0f", b->num);
    }
    const json_val *ax = json_get(mf, "batch_axes");
    printf("  (batch from");
    for (int i = 0; i < json_len(ax); i++)
        printf(" %s[axis %.0f]", str(json_at(ax, i), "input"), num(json_at(ax, i), "axis"));
    printf("%s", json_len(ax) ? "" : " nothing: one bucket serves every run");
    if (dec) {
        const json_val *p0 = json_at(json_get(sq, "past"), 0);
        printf("; seq from %s[axis %.0f], past from %s[axis %.0f]", str(sq, "input"),
               num(sq, "axis"), str(p0, "input"), num(p0, "axis"));
    }
    printf(")\n");
    const json_val *pr = json_get(mf, "priming");
    if (pr) { /* what the load runs once per bucket */
        printf("primed    ");
        for (int k = 0; k < json_len(pr); k++) {
            printf("%s", k ? "; " : "");
            const json_val *ins = json_at(pr, k);
            for (int i = 0; i < json_len(ins) && i < 2; i++) {
                const json_val *shp = json_get(json_at(ins, i), "shape");
                printf("%s[", i ? " " : "");
                for (int d = 0; d < json_len(shp); d++)
                    printf("%s%.0f", d ? "," : "", json_at(shp, d)->num);
                printf("]");
            }
            if (json_len(ins) > 2) printf(" ...");
        }
        printf("\n");
    }
    printf("\nplan\n  %-28s %*s  %-18s %11s %11s %9s\n", "module", dec ? 14 : 6,
           dec ? "batch/seq/past" : "bucket", "runs on", "median ms", "baseline ms", "speedup");
    const json_val *mods = json_get(mf, "modules");
    for (int i = 0; i < json_len(mods); i++) {
        const json_val *m = json_at(mods, i), *plans = json_get(m, "plans");
        for (int k = 0; k < json_len(plans); k++) {
            const json_val *p = json_at(plans, k);
            const char *name = str(m, "name");
            /* A plan whose one module is the root runs the whole model as one module. */
            char bkt[48];
            if (dec) snprintf(bkt, sizeof bkt, "%.0f/%.0f/%.0f", num(p, "bucket"), num(p, "seq"),
                              num(p, "past"));
            else snprintf(bkt, sizeof bkt, "%.0f", num(p, "bucket"));
            printf("  %-28s %*s  %-18s", *name ? name : "(whole model)", dec ? 14 : 6, bkt,
                   str(p, "chosen"));
            if (num(p, "median_ms") > 0) /* else never timed: kept without a trial */
                printf(" %11.3f %11.3f %8.2fx", num(p, "median_ms"), num(p, "baseline_ms"),
                       num(p, "speedup"));
            else
                printf(" %11s %11s %9s", "-", "-", "-");
            printf("  %s\n", str(p, "why"));
        }
    }
    print_checks(json_get(mf, "tuning"));
    printf("\ncandidates tried (* chosen)");
    print_candidates(json_get(mf, "tuning"));
    json_free(mf);
    artifact_close(a);
    return 0;
}

/* ait tune: tries every candidate for each selected module and batch
 * bucket, validates and times it, and reports the strategy's choice;
 * --dry-run says what it would do instead. (The .ait artifact, the cache
 * and JIT tuning are the next steps.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/inspect_cli.h"
#include "tune/tuner.h"

static const char *tune_help =
    "usage: ait tune MODEL.onnx [options]\n"
    "\n"
    "Tuning tries several ways to run each selected module (candidates: every\n"
    "backend that runs some of its nodes, at 1..--threads threads), each in a\n"
    "child process with a time limit: it builds the module, checks its outputs\n"
    "against the reference backend, times it until the median is stable, and\n"
    "keeps the one the module's strategy picks. The baseline (the reference\n"
    "backend, one thread) stays unless a candidate beats it by 1%. Batch sizes\n"
    "are tuned at their power-of-two buckets (3 -> 4). This version reports the\n"
    "choices; writing the .ait artifact comes next.\n"
    "\n"
    "options:\n"
    "  --dry-run              print what tuning would do; build and time nothing\n"
    "  --timeout S            seconds per candidate before it is killed (default 60)\n"
    "  --warmup N --window N --cv F --cap N\n"
    "                         profiling: N warm-up runs, then timed runs until the\n"
    "                         coefficient of variation over the last window is\n"
    "                         under F, at most cap (default 10, 20, 0.10, 100)\n"
    "  --data PATH            samples: a .npz, a folder of .npz files, or a folder of\n"
    "                         sample folders (default: one generated sample)\n"
    "  --dim NAME=V           size of symbolic dim NAME of generated samples\n"
    "  --batch-sizes 1,2,4    batch sizes to run (default 1)\n"
    "  --runs N               timed runs per batch size (default 5)\n"
    "  --threads N            threads: candidates try 1..N (default 1)\n"
    "  --select PATH[=STRATEGY]  tune module PATH (a trailing '*' matches a prefix);\n"
    "                         repeatable. Without any selection, every top-level\n"
    "                         module is tuned\n"
    "  --top N                the N modules with the biggest share of time\n"
    "  --select-min-share F   the modules with at least share F (0.05 or 5%)\n"
    "  --select-depth N       the depth --top and --select-min-share pick at (default 1)\n"
    "  --strategy NAME        first-wins, one-backend:NAME, max-throughput (default),\n"
    "                         min-latency, latency-budget:MS\n"
    "\n"
    "The cache folder is $AIT_CACHE_DIR, else ~/.cache/ait.\n"
    "\n"
    "examples:\n"
    "  ait tune models/mlp.onnx --batch-sizes 1,8 --threads 2\n"
    "  ait tune models/bert.onnx --dry-run --batch-sizes 1,2 --select 'layer.*'\n";

static void print_module(const inspection *r, const tune_module *tm)
{
    printf("\n== module '%s' at batch %d (strategy %s)\n", report_name(r, tm->module), tm->batch,
           tm->strategy);
    printf("  %-16s %-6s %12s %12s %12s %9s  %s\n", "candidate", "status", "median ms",
           "spread ms", "items/s", "speedup", "max rel err");
    for (int c = 0; c < tm->n_cands; c++) {
        const tune_cand *tc = &tm->cands[c];
        char mark = c == tm->chosen ? '*' : ' ';
        if (!tc->valid) {
            printf("%c %-16s %-6s %s\n", mark, tc->name, "failed", tc->reason);
            continue;
        }
        printf("%c %-16s %-6s %12.3f %12.3f %12.1f %8.2fx  %.2g%s\n", mark, tc->name, "ok",
               tc->prof.median * 1e3, (tc->prof.p90 - tc->prof.p10) * 1e3, tc->prof.throughput,
               tc->speedup, tc->max_rel, tc->prof.converged ? "" : " (not converged)");
    }
    printf("  chosen: %s. %s\n", tm->cands[tm->chosen].name, tm->why);
}

static int tune_for_real(const insp_args *a, insp_state *s)
{
    tune_opts o = {.samples = s->samples, .n_batch = a->n_batch, .sel = &s->sel,
                   .max_threads = a->threads, .timeout = a->timeout, .prof = a->prof};
    memcpy(o.batch, a->batch, sizeof o.batch);
    tune_report *rep = NULL;
    ait_error e = {0};
    if (tune_run(s->m, s->r, &o, &rep, &e) != AIT_OK) {
        fprintf(stderr, "ait tune: %s\n", e.msg);
        return 1;
    }
    printf("tuned %s: %d module%s x bucket\n", a->model, rep->n, rep->n == 1 ? "" : "s");
    for (int i = 0; i < rep->n; i++) print_module(s->r, &rep->mods[i]);
    printf("\nsummary\n  %-24s %6s  %-16s %9s\n", "module", "batch", "chosen", "speedup");
    for (int i = 0; i < rep->n; i++) {
        const tune_module *tm = &rep->mods[i];
        printf("  %-24s %6d  %-16s %8.2fx\n", report_name(s->r, tm->module), tm->batch,
               tm->cands[tm->chosen].name, tm->cands[tm->chosen].speedup);
    }
    printf("(no .ait artifact yet: saving the plan and prepared weights is the next step)\n");
    tune_report_free(rep);
    return 0;
}

/* $AIT_CACHE_DIR, else ~/.cache/ait. */
static const char *cache_dir(char *buf, size_t n)
{
    const char *d = getenv("AIT_CACHE_DIR");
    if (d && *d) return d;
    const char *home = getenv("HOME");
    snprintf(buf, n, "%s/.cache/ait", home && *home ? home : ".");
    return buf;
}

static void dry_run_module(const insp_state *s, int m, const char *strategy, int threads)
{
    const inspection *r = s->r;
    const module_stats *st = &r->st[m];
    char p[32], b[32], fl[32];
    printf("\n== module '%s' (depth %d, %.1f%% of the time)\n", report_name(r, m),
           r->tree->mods[m].depth, st->share * 100);
    printf("  parameters  %s (%s)\n", human_count((double)st->params, p, sizeof p),
           human_bytes((double)st->param_bytes, b, sizeof b));
    printf("  nodes       %d\n", st->n_nodes);
    printf("  FLOPs       %s per sample\n", human_count(st->flops, fl, sizeof fl));
    printf("  precisions  %s\n", st->precisions[0] ? st->precisions : "-");
    printf("  time        %.3f ms mean per call over %lld calls\n", st->mean_sec * 1e3,
           (long long)st->calls);
    printf("  strategy    %s\n", strategy);
    printf("  candidates  reference/t1 (the baseline)");
    for (int i = 0; i < backend_count(); i++) {
        const backend *b = backend_at(i);
        char why[256];
        if (!strcmp(b->name, "reference") || (b->available && !b->available(why, sizeof why))) continue;
        printf(", %s/t1..t%d", b->name, threads);
    }
    printf("\n");
    insp_print_spec(stdout, r, m);
}

int cmd_tune(int argc, char **argv)
{
    insp_args a;
    int rc = insp_parse(argc, argv, "tune", tune_help, INSP_DRY_RUN, &a);
    if (rc >= 0) return rc;
    insp_state s;
    if (insp_prepare(&a, "tune", &s)) return 1;
    /* Without a selection, the top-level modules, as --select-depth 1 would. */
    if (!s.sel.n) {
        ait_error e = {0};
        if (select_by_share(&s.sel, s.r, 1, 0, 0, a.strategy, &e) != AIT_OK) {
            fprintf(stderr, "ait tune: %s\n", e.msg);
            insp_state_free(&s);
            return 1;
        }
    }
    if (!a.dry_run) {
        rc = tune_for_real(&a, &s);
        insp_state_free(&s);
        return rc;
    }
    char buf[4096], bs[128] = "";
    const char *cache = cache_dir(buf, sizeof buf);
    struct stat sb;
    for (int i = 0, len = 0; i < s.r->n_batch; i++)
        len += snprintf(bs + len, sizeof bs - (size_t)len, "%s%d", i ? "," : "", s.r->batch[i]);
    printf("dry run of tuning %s: nothing is built or written\n", a.model);
    printf("  samples     %d (%s)\n", s.samples->n, a.data ? a.data : "generated");
    printf("  batch sizes %s (%s)\n", bs,
           s.r->static_shapes ? "shapes assumed static" : "batch and dynamic axes detected");
    printf("  cache       %s%s\n", cache, stat(cache, &sb) == 0 ? "" : " (would be created)");
    printf("  modules     %d selected of %d\n", s.sel.n, s.r->tree->n - 1);
    for (int i = 0; i < s.sel.n; i++)
        dry_run_module(&s, s.sel.items[i].module, s.sel.items[i].strategy, a.threads);
    if (!s.sel.n) dry_run_module(&s, 0, a.strategy, a.threads); /* no modules: the model is one */
    insp_state_free(&s);
    return 0;
}

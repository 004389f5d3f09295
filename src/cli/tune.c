/* ait tune: today only --dry-run, which inspects the model and prints,
 * module by module, what tuning would do, building nothing. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/inspect_cli.h"

static const char *tune_help =
    "usage: ait tune MODEL.onnx --dry-run [options]\n"
    "\n"
    "Tuning tries several ways to run each selected module, checks each against\n"
    "the reference backend, times them and keeps the one its strategy picks.\n"
    "This version does the dry run only: it records the samples, detects the\n"
    "batch and dynamic axes, and prints per module what tuning would do:\n"
    "parameters, nodes, precisions, graph spec, number of samples, cache\n"
    "folder, strategy and candidates. Nothing is built or written.\n"
    "\n"
    "options:\n"
    "  --dry-run              required for now\n"
    "  --data PATH            samples: a .npz, a folder of .npz files, or a folder of\n"
    "                         sample folders (default: one generated sample)\n"
    "  --dim NAME=V           size of symbolic dim NAME of generated samples\n"
    "  --batch-sizes 1,2,4    batch sizes to run (default 1)\n"
    "  --runs N               timed runs per batch size (default 5)\n"
    "  --threads N            threads (default 1)\n"
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
    "example:\n"
    "  ait tune models/bert.onnx --dry-run --batch-sizes 1,2 --select 'encoder.layer.*'\n";

/* $AIT_CACHE_DIR, else ~/.cache/ait. */
static const char *cache_dir(char *buf, size_t n)
{
    const char *d = getenv("AIT_CACHE_DIR");
    if (d && *d) return d;
    const char *home = getenv("HOME");
    snprintf(buf, n, "%s/.cache/ait", home && *home ? home : ".");
    return buf;
}

static void dry_run_module(const insp_state *s, int m, const char *strategy)
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
    printf("  candidates  reference (the baseline; native, openblas, onednn and the quantised\n"
           "              backends come with the tuning issue)\n");
    insp_print_spec(stdout, r, m);
}

int cmd_tune(int argc, char **argv)
{
    insp_args a;
    int rc = insp_parse(argc, argv, "tune", tune_help, INSP_DRY_RUN, &a);
    if (rc >= 0) return rc;
    if (!a.dry_run) {
        fprintf(stderr, "ait tune: not implemented yet: only --dry-run (ait tune %s --dry-run)\n",
                a.model);
        return 2;
    }
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
        dry_run_module(&s, s.sel.items[i].module, s.sel.items[i].strategy);
    if (!s.sel.n) dry_run_module(&s, 0, a.strategy); /* no modules: the model is one */
    insp_state_free(&s);
    return 0;
}

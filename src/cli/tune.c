/* ait tune: tries every candidate for each selected module and batch
 * bucket (or takes its result from the cache), validates and times it, and
 * reports the strategy's choice as tables or --json; --dry-run says what it
 * would do instead; -o NAME.ait saves the tuned model as an artifact. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/inspect_cli.h"
#include "tune/cache.h"
#include "runtime/plan.h"
#include "tune/plan_build.h"
#include "tune/accuracy.h"
#include "tune/plan_check.h"
#include "tune/tuner.h"
#include "gemmtune/db.h"


/* insp_args.whole: -1 --no-whole, 1 --force-whole, 0 the check decides;
 * this: off because --select picked the modules. */
#define WHOLE_BY_SELECT (-2)
static const char *tune_help =
    "usage: ait tune MODEL.onnx [options]\n"
    "\n"
    "Tuning tries several ways to run each selected module (candidates: every\n"
    "backend that runs some of its nodes, at 1..--threads threads), each in a\n"
    "child process with a time limit: it builds the module, checks its outputs\n"
    "against the reference backend, times it until the median is stable, and\n"
    "keeps the one the module's strategy picks. The baseline (the reference\n"
    "backend, one thread) stays unless a candidate beats it by --margin. Batch sizes\n"
    "are tuned at their power-of-two buckets (3 -> 4). With -o NAME.ait the tuned\n"
    "model is saved as one artifact (the model, the plan, every measurement and\n"
    "the backends' prepared weights, with NAME_sha256_sums.txt beside it) that\n"
    "`ait run NAME.ait` loads and runs with no warm-up; `ait show NAME.ait` prints\n"
    "its plan. Progress goes to stderr: a bar on a terminal, else one line per\n"
    "candidate.\n"
    "\n"
    "options:\n"
    "  -o, --output NAME.ait  save the tuned model (written to a temporary file,\n"
    "                         then renamed: an interrupted save leaves nothing)\n"
    "  --dry-run              print what tuning would do; build and time nothing\n"
    "  --timeout S            seconds per candidate before it is killed (default 60)\n"
    "  --warmup N --window N --cv F --cap N\n"
    "                         profiling: N warm-up runs, then timed runs until the\n"
    "                         coefficient of variation over the last window is\n"
    "                         under F, at most cap (default 10, 20, 0.10, 100)\n"
    "  --cold-cache, --warm-cache\n"
    "                         time each run with caches flushed first (what a module\n"
    "                         of a model bigger than the caches meets), or back to\n"
    "                         back; default: cold when the model's weights exceed\n"
    "                         32 MiB\n"
    "  --cpu-clock            time candidates at one thread by their thread's CPU\n"
    "                         time, not the wall clock: on a machine other work keeps\n"
    "                         busy, what a candidate costs rather than how long it\n"
    "                         waited for the core (more threads: wall clock); their\n"
    "                         --timeout is then CPU time too (a child that only\n"
    "                         waits is killed after 10 times it of wall clock)\n"
    "  --data PATH            samples: a .npz, a folder of .npz files, or a folder of\n"
    "                         sample folders (default: one generated sample)\n"
    "  --max-input-mb N       refuse a sample array (a .npy, an .npz entry) that\n"
    "                         declares more than N MiB, before reading it\n"
    "  --dim NAME=V           size of symbolic dim NAME of generated samples\n"
    "  --batch-sizes 1,2,4    batch sizes to run (default 1)\n"
    "  --seq-buckets 1,128,512 --past-buckets 128,512,1024\n"
    "                         a decoder's sequence and past-length buckets: each\n"
    "                         sample is tuned in the smallest at or above its length\n"
    "                         (else the largest); default: 1 (decode) and powers of\n"
    "                         two, from the samples\n"
    "  --runs N               timed runs per batch size (default 5)\n"
    "  --threads N            threads: candidates try 1..N (default 1)\n"
    "  --select PATH[=STRATEGY]  tune module PATH (a trailing '*' matches a prefix);\n"
    "                         repeatable. Without any selection, every top-level\n"
    "                         module is tuned\n"
    "  --top N                the N modules with the biggest share of time\n"
    "  --select-min-share F   the modules with at least share F (0.05 or 5%)\n"
    "  --select-depth N       the depth --top and --select-min-share pick at (default 1)\n"
    "  --strategy NAME        first-wins, one-backend:NAME, max-throughput (default),\n"
    "                         min-latency, latency-budget:MS, or only:NAME (NAME's\n"
    "                         fastest valid candidate even where the baseline is\n"
    "                         faster: the model on one backend, to compare with);\n"
    "                         NAME is a backend or BACKEND:VARIANT for one variant\n"
    "                         (only:native:int8wo pins int8 weight-only,\n"
    "                         only:native:default the default variant)\n"
    "  --quant LIST           also try quantised candidates: bf16, int8dq, int8 (static:\n"
    "                         activation scales calibrated on the samples), int8wo,\n"
    "                         int4wo (int4wo-64, int4wo-128), fp16 (half weights,\n"
    "                         float compute), comma-separated, or auto (all);\n"
    "                         judged by SQNR (default: none, float32)\n"
    "  --calib-percentile P   int8's calibration: each activation's P-th percentile\n"
    "                         range, 50 < P <= 100 (default: its min and max)\n"
    "  --min-sqnr DB          the SQNR bound of every quantised candidate (default:\n"
    "                         its own: 35 dB bf16, 45 dB fp16, 25 dB int8 and int4)\n"
    "  --accuracy-budget SPEC the end-to-end bound of the plan (default: none, the\n"
    "                         figures only): sqnr=DB (every float output's SQNR over\n"
    "                         all samples), top1=SHARE (at most this share of a\n"
    "                         classifier output's rows with another top-1 class:\n"
    "                         0.01 or 1%), abs=X (largest absolute error), comma-\n"
    "                         separated, e.g. sqnr=30,top1=1%. With --quant or a\n"
    "                         budget, each bucket's plan runs whole on every sample\n"
    "                         against the float32 reference; a plan that misses it\n"
    "                         is walked back, the quantised module with the lowest\n"
    "                         SQNR first, to float32 until it fits\n"
    "  --margin F             a candidate must beat the baseline by F (0.05 or 5%;\n"
    "                         default 1%; 0: by anything) to replace it\n"
    "  --no-plan-check        keep the per-module choices without running the whole\n"
    "                         model on them against each backend alone (see below)\n"
    "  --no-whole             do not try the `whole` candidate: the whole model as one\n"
    "                         module on one backend, tuned beside the selected modules\n"
    "                         and run in the plan check (costs a tune of the model;\n"
    "                         off by default when modules are picked with --select...)\n"
    "  --force-whole          take the whole candidate (its fastest valid backend that\n"
    "                         is not the reference; with --strategy only:NAME, NAME's)\n"
    "                         without the check: to compare\n"
    "  --gemm-db tuned.csv    native candidates run each GEMM shape with its config\n"
    "                         from `ait gemm tune` (the artifact embeds them)\n"
    "  --max-batches-per-size N  validate on at most N distinct sample batches per\n"
    "                         bucket (default: all; timing uses the first)\n"
    "  --json                 print the whole report as one JSON document on stdout\n"
    "  --no-cache             neither read nor write the results cache\n"
    "  --clear-cache          remove ait's entries from the cache folder first\n"
    "\n"
    "Samples of one shape (apart from batch axes) are batched together, several\n"
    "shapes give several batches; a module with dynamic axes is also validated at\n"
    "the smallest and the largest input shapes the samples give.\n"
    "\n"
    "The whole-plan check: a module profiled alone does not see what its\n"
    "neighbours do to it (caches, memory pages, bandwidth), so the per-module\n"
    "winners together can lose to one backend everywhere. At each bucket whose\n"
    "modules all have a speed strategy (max-throughput, min-latency), the whole\n"
    "model runs on the plan as tuned and on each backend alone (every module on\n"
    "that backend's fastest candidate) whose module times add up to within 2x,\n"
    "in alternating rounds in 5 to 15 fresh processes (until one more could not\n"
    "change the outcome); a single-backend plan faster by more than --margin\n"
    "(median over the processes) replaces the plan, and the untuned model\n"
    "(reference alone) is kept unless the plan beats it by --margin, as a\n"
    "module's baseline is. Each module it changes says so. It is not cached: it\n"
    "runs on every tune. Beside them runs the `whole` candidate: the model cut\n"
    "as one module (every node), tuned and validated like a module, its fastest\n"
    "valid candidate of each backend run as \"NAME whole\", so that one backend\n"
    "keeps its layouts across what were module boundaries; taken when faster by\n"
    "--margin at every bucket, the plan is that one module (--no-whole: off).\n"
    "\n"
    "Results are cached in $AIT_CACHE_DIR, else ~/.cache/ait: one file per\n"
    "candidate trial, keyed by the module's graph and weights, its input shapes\n"
    "and bytes, the candidate, the profiling options, the ait version and the\n"
    "CPU. A re-run takes them from there (\"cached\") and runs nothing. Results\n"
    "that passed or failed validation are cached; crashes, timeouts and errors\n"
    "are not (they may not happen again). A cache folder that cannot be used is\n"
    "a warning, never a failure.\n"
    "\n"
    "examples:\n"
    "  ait tune models/mlp.onnx --batch-sizes 1,8 --threads 2 -o mlp.ait\n"
    "  ait tune models/bert.onnx --dry-run --batch-sizes 1,2 --select 'layer.*'\n";

/* A bucket: "batch 1", or a decoder's "batch 1, seq 1, past 128". */
static const char *bucket_str(int batch, int seq, int past, char *buf, size_t n)
{
    return plan_key_str((plan_key){batch, seq, past}, buf, n);
}

static void print_module(const inspection *r, const tune_module *tm)
{
    char kb[64];
    printf("\n== module '%s'%s at %s (strategy %s)\n", report_name(r, tm->module),
           tm->whole ? " (whole: the model as one module)" : "",
           bucket_str(tm->batch, tm->seq, tm->past, kb, sizeof kb), tm->strategy);
    if (tm->n_sets > 1 || tm->max_shape[0]) {
        printf("  validated on %d input set%s", tm->n_sets, tm->n_sets == 1 ? "" : "s");
        if (tm->max_shape[0]) printf(", incl. min shape (%s) and max shape (%s)",
                                     tm->min_shape, tm->max_shape);
        printf("\n");
    }
    printf("  %-18s %-8s %12s %12s %12s %9s  %s\n", "candidate", "status", "median ms",
           "spread ms", "items/s", "speedup", "max rel err");
    for (int c = 0; c < tm->n_cands; c++) {
        const tune_cand *tc = &tm->cands[c];
        char mark = c == tm->chosen && !(tm->whole && !tm->chosen) ? '*' : ' ';
        if (!tc->valid) {
            printf("%c %-18s %-8s %s%s\n", mark, tc->name, tune_cand_status(tc), tc->reason,
                   tc->cached ? " (cached)" : "");
            continue;
        }
        char sq[48] = ""; /* a quantised candidate is judged by its SQNR: show it */
        if (tc->min_sqnr > 0)
            snprintf(sq, sizeof sq, ", SQNR %.1f dB (bound %g)", tc->sqnr_db, tc->min_sqnr);
        printf("%c %-18s %-8s %12.3f %12.3f %12.1f %8.2fx  %.2g%s%s%s\n", mark, tc->name, "ok",
               tc->prof.median * 1e3, (tc->prof.p90 - tc->prof.p10) * 1e3, tc->prof.throughput,
               tc->speedup, tc->max_rel, sq,
               tc->prof.stopped     ? " (stopped early: a clear loser)"
               : tc->prof.converged ? ""
                                    : " (not converged)",
               tc->cached ? " (cached)" : "");
    }
    if (tm->whole && !tm->chosen) printf("  not in the plan. %s\n", tm->why);
    else printf("  chosen: %s. %s\n", tm->cands[tm->chosen].name, tm->why);
}

/* The whole-plan check of each bucket: the plans run, their medians, what
 * was decided. */
static void print_checks(const tune_report *rep)
{
    for (int i = 0; i < rep->n_checks; i++) {
        const tune_check *c = &rep->checks[i];
        char kb[64];
        printf("\n== whole-plan check at %s: %s\n", bucket_str(c->batch, c->seq, c->past, kb,
               sizeof kb), check_outcome_name(c->outcome));
        if (c->n_procs) {
            printf("  %-22s %12s %12s %14s %8s %8s\n", "plan", "modules ms", "model ms",
                   "tuned / this", "spread", "need");
            for (int p = 0; p < c->n_plans; p++) {
                const check_plan *cp = &c->plans[p];
                printf("%c %-22s %12.3f %12.3f %13.3fx", p == c->taken ? '*' : ' ', cp->name,
                       cp->predicted * 1e3, check_plan_median(c, p) * 1e3, cp->ratio);
                if (p) printf(" %7.1f%% %7.1f%%", 100 * cp->spread, 100 * cp->need);
                printf("\n");
            }
        }
        printf("  %s\n", c->note);
        if (c->n_procs) printf("  (model ms: median of %d processes, %.1f s)\n", c->n_procs, c->secs);
    }
}

/* The end-to-end accuracy guard per bucket: per output the figures as
 * tuned and, when modules were walked back, after. */
static void print_accuracy(const tune_report *rep)
{
    char bs[160];
    if (rep->n_acc) acc_budget_str(&rep->budget, bs, sizeof bs);
    for (int i = 0; i < rep->n_acc; i++) {
        const tune_accuracy *a = &rep->acc[i];
        printf("\n== end-to-end accuracy at batch %d against the float32 reference (%d sample "
               "batch%s, %lld row%s; budget: %s)\n", a->batch, a->n_batches,
               a->n_batches == 1 ? "" : "es", (long long)a->rows, a->rows == 1 ? "" : "s", bs);
        for (int f = 0; f < 2; f++) {
            const acc_figures *fig = f ? &a->final : &a->tuned;
            if (!fig->ran || (f && !a->n_walked)) continue;
            printf("  %-10s %-20s %12s %12s %10s %10s\n", f ? "final" : "as tuned", "output",
                   "max abs err", "max rel err", "SQNR dB", "top-1");
            for (int j = 0; j < fig->n_outs; j++) {
                const acc_out *o = &fig->outs[j];
                char top[32] = "-";
                if (o->classifier)
                    snprintf(top, sizeof top, "%.2f%%", 100 * (1 - acc_top1_off(o)));
                printf("  %-10s %-20s %12.3g %12.3g %10.1f %10s\n", "", o->name, o->max_abs,
                       o->max_rel, acc_sqnr(o), top);
            }
        }
        printf("  %s%s\n", a->fits ? "" : "MISSED: ", a->note);
    }
}

/* One row per module and bucket: the choice, its median and speedup, why;
 * a module none of whose candidates passed says it keeps the baseline. */
static void print_summary(const inspection *r, const tune_report *rep)
{
    /* The bucket: the batch, and a decoder's "batch/seq/past". */
    bool dec = rep->n && rep->mods[0].seq;
    printf("\nsummary\n  %-24s %*s  %-18s %10s %9s  %s\n", "module", dec ? 14 : 6,
           dec ? "batch/seq/past" : "batch", "chosen", "median ms", "speedup", "why");
    for (int i = 0; i < rep->n; i++) {
        const tune_module *tm = &rep->mods[i];
        const tune_cand *tc = &tm->cands[tm->chosen];
        char med[32] = "-", sp[32] = "-", bk[48];
        if (dec) snprintf(bk, sizeof bk, "%d/%d/%d", tm->batch, tm->seq, tm->past);
        else snprintf(bk, sizeof bk, "%d", tm->batch);
        if (tc->valid) {
            snprintf(med, sizeof med, "%.3f", tc->prof.median * 1e3);
            snprintf(sp, sizeof sp, "%.2fx", tc->speedup);
        }
        if (tm->whole && !tm->chosen) {
            printf("  %-24s %*s  %-18s %10s %9s  %s\n", "(whole model)", dec ? 14 : 6, bk,
                   "not taken", "-", "-", tm->why);
            continue;
        }
        printf("  %-24s %*s  %-18s %10s %9s  ", tm->whole ? "(whole model)" : report_name(r, tm->module),
               dec ? 14 : 6, bk, tc->name, med, sp);
        if (tm->untuned[0])
            printf("%s\n", tm->why);
        else if (!tm->cands[0].valid)
            printf("the baseline failed (%s), so nothing can be compared: the module runs "
                   "untuned\n", tm->cands[0].reason);
        else if (tm->all_failed)
            printf("all %d candidates failed: the module keeps the baseline\n", tm->n_cands - 1);
        else
            printf("%s\n", tm->why);
    }
}

/* The cache folder the environment names ($AIT_CACHE_DIR, else
 * ~/.cache/ait), or NULL when neither it nor HOME is set. */
static const char *env_cache_dir(void)
{
    ait_tune_options to = {.size = sizeof to};
    ait_options_from_env(NULL, &to, NULL);
    return to.cache_dir;
}

/* The cache folder to use, or NULL (no cache: --no-cache, or no HOME and
 * no AIT_CACHE_DIR, which is said). */
static const char *cache_for(const insp_args *a)
{
    if (a->no_cache) return NULL;
    const char *d = env_cache_dir();
    if (!d)
        fprintf(stderr, "ait: warning: cache: neither AIT_CACHE_DIR nor HOME is set: tuning "
                        "without a cache\n");
    return d;
}

static int tune_with(const insp_args *a, insp_state *s, const gemm_tuned *gemm);

/* --gemm-db: the tuned GEMM configs native candidates run with (and the
 * artifact embeds), alive until the plan is saved. */
static int tune_for_real(const insp_args *a, insp_state *s)
{
    gemm_tuned gemm = {0};
    ait_error e = {0};
    logger lg = cli_logger();
    if (a->gemm_db && gt_db_take(a->gemm_db, &lg, &gemm, &e) != AIT_OK) {
        fprintf(stderr, "ait tune: --gemm-db: %s\n", e.msg);
        return 1;
    }
    int rc = tune_with(a, s, gemm.n ? &gemm : NULL);
    gemm_tuned_free(&gemm);
    return rc;
}

static int tune_with(const insp_args *a, insp_state *s, const gemm_tuned *gemm)
{
    const char *cache = cache_for(a);
    ait_error e = {0};
    if (a->clear_cache) {
        const char *dir = cache ? cache : env_cache_dir();
        int removed = 0;
        if (dir && cache_clear(dir, &removed, &e) != AIT_OK)
            fprintf(stderr, "ait: warning: cache: %s\n", e.msg);
        else if (dir)
            fprintf(stderr, "cache: cleared %d entr%s from %s\n", removed,
                    removed == 1 ? "y" : "ies", dir);
    }
    tune_opts o = {.samples = s->samples, .n_batch = a->n_batch, .sel = &s->sel,
                   .max_threads = a->threads, .timeout = a->timeout, .prof = a->prof,
                   .log = cli_logger(), .cache_dir = cache,
                   .max_batches = a->max_batches, .cold = a->cold,
                   .cpu_clock = a->cpu_clock, .margin = a->margin,
                   .plan_check = !a->no_plan_check, .gemm = gemm, .quant = a->quant,
                   .min_sqnr = a->min_sqnr, .calib_pct = a->calib_pct, .accuracy_budget = a->accuracy_budget,
                   .whole = a->whole < 0 ? WHOLE_OFF : a->whole > 0 ? WHOLE_FORCE : WHOLE_CHECK};
    memcpy(o.batch, a->batch, sizeof o.batch);
    o.n_seq = a->n_seq, o.n_past = a->n_past;
    memcpy(o.seq_buckets, a->seq, sizeof o.seq_buckets);
    memcpy(o.past_buckets, a->past, sizeof o.past_buckets);
    tune_report *rep = NULL;
    bool cold = tune_cold(a->cold, s->r);
    if (!a->json)
        fprintf(stderr, "profiling with %s caches (%s)\n", cold ? "cold" : "warm",
                a->cold ? (cold ? "--cold-cache" : "--warm-cache")
                        : cold ? "the model's weights exceed 32 MiB" : "the model's weights fit in 32 MiB");
    if (!a->json && a->cpu_clock)
        fprintf(stderr, "timing candidates at one thread by their CPU time (--cpu-clock)\n");
    if (tune_run(s->m, s->r, &o, &rep, &e) != AIT_OK) {
        fprintf(stderr, "ait tune: %s\n", e.msg);
        return 1;
    }
    if (a->output && plan_save(s->m, s->r, rep, a->output, &e) != AIT_OK) {
        fprintf(stderr, "ait tune: saving %s: %s\n", a->output, e.msg);
        tune_report_free(rep);
        return 1;
    }
    if (a->output)
        fprintf(stderr, "saved %s (run it with: ait run %s; a page of it: ait report %s -o "
                        "report.html)\n", a->output, a->output, a->output);
    if (a->json) {
        json_w w = {.pretty = true};
        tune_report_json(&w, s->r, rep);
        int rc = cli_print_json(&w, "tune");
        tune_report_free(rep);
        return rc;
    }
    printf("tuned %s: %d module%s x bucket\n", a->model, rep->n, rep->n == 1 ? "" : "s");
    for (int i = 0; i < rep->n; i++) print_module(s->r, &rep->mods[i]);
    print_checks(rep);
    print_accuracy(rep);
    print_summary(s->r, rep);
    if (rep->cache_on)
        printf("cache: %d candidate%s from the cache, %d run, in %s\n", rep->cached,
               rep->cached == 1 ? "" : "s", rep->trials, rep->cache_dir);
    else
        printf("cache: off (%d candidate%s run)\n", rep->trials, rep->trials == 1 ? "" : "s");
    if (!a->output) printf("(no artifact written: add -o NAME.ait to save the plan)\n");
    tune_report_free(rep);
    return 0;
}

/* What the dry run says of the cache, the plan check and the whole
 * candidate, for its text and its JSON alike. */
typedef struct dry_words {
    const char *cache;  /* the folder, or NULL */
    bool cache_exists;
    const char *no_cache_why, *plan_check, *whole;
} dry_words;

static dry_words dry_words_of(const insp_args *a)
{
    dry_words d = {.cache = a->no_cache ? NULL : env_cache_dir()};
    struct stat sb;
    d.cache_exists = d.cache && stat(d.cache, &sb) == 0;
    d.no_cache_why = a->no_cache ? "--no-cache" : "neither AIT_CACHE_DIR nor HOME is set";
    d.plan_check = a->no_plan_check ? "off (--no-plan-check)"
        : "per bucket whose modules all have a speed strategy: the whole model on the plan "
          "against each backend alone";
    d.whole = a->whole == WHOLE_BY_SELECT
        ? "off (the tune is bounded by the selected modules; --force-whole tries it)"
        : a->whole < 0 ? "off (--no-whole)"
        : a->whole > 0 ? "forced (--force-whole): the model as one module on its fastest backend"
        : a->no_plan_check ? "off (no plan check to decide it)"
        : "the model as one module, tuned and run in the plan check beside the per-module plan";
    return d;
}

/* The backends a module's candidates come from, besides the baseline:
 * each available one but the reference; *variants when it offers more. */
static const backend *dry_backend(int i, bool *variants)
{
    const backend *b = backend_at(i);
    char why[256];
    if (!strcmp(b->name, "reference") || (b->available && !b->available(why, sizeof why)))
        return NULL;
    *variants = b->variants != NULL;
    return b;
}

static void dry_module_json(json_w *w, const insp_state *s, int m, const char *strategy,
                            int threads)
{
    const inspection *r = s->r;
    const module_stats *st = &r->st[m];
    json_obj(w, NULL);
    json_str(w, "path", report_name(r, m));
    json_int(w, "depth", r->tree->mods[m].depth);
    json_num(w, "share", st->share);
    json_int(w, "params", st->params);
    json_int(w, "param_bytes", st->param_bytes);
    json_int(w, "nodes", st->n_nodes);
    json_num(w, "flops_per_sample", st->flops);
    json_str(w, "precisions", st->precisions);
    json_int(w, "calls", st->calls);
    json_num(w, "mean_ms", st->mean_sec * 1e3);
    json_str(w, "strategy", strategy);
    json_arr(w, "candidates");
    json_str(w, NULL, "reference/t1");
    for (int i = 0; i < backend_count(); i++) {
        bool variants = false;
        const backend *b = dry_backend(i, &variants);
        char name[128];
        for (int t = 1; b && t <= threads; t++) {
            snprintf(name, sizeof name, "%s/t%d", b->name, t);
            json_str(w, NULL, name);
        }
    }
    json_end(w);
    json_arr(w, "backends_with_variants");
    for (int i = 0; i < backend_count(); i++) {
        bool variants = false;
        const backend *b = dry_backend(i, &variants);
        if (b && variants) json_str(w, NULL, b->name);
    }
    json_end(w);
    json_end(w);
}

/* --dry-run --json: what the text says, as one document on stdout. */
static int dry_run_json(const insp_args *a, const insp_state *s)
{
    dry_words d = dry_words_of(a);
    json_w w = {.pretty = true};
    json_obj(&w, NULL);
    json_bool(&w, "dry_run", true);
    json_str(&w, "model", a->model);
    json_int(&w, "samples", s->samples->n);
    if (a->data) json_str(&w, "data", a->data);
    else json_null(&w, "data");
    json_arr(&w, "batch_sizes");
    for (int i = 0; i < s->r->n_batch; i++) json_int(&w, NULL, s->r->batch[i]);
    json_end(&w);
    json_bool(&w, "static_shapes", s->r->static_shapes);
    json_obj(&w, "cache");
    if (d.cache) json_str(&w, "dir", d.cache);
    else json_null(&w, "dir");
    json_bool(&w, "exists", d.cache_exists);
    json_bool(&w, "clear_first", a->clear_cache);
    if (!d.cache) json_str(&w, "why_none", d.no_cache_why);
    json_end(&w);
    json_str(&w, "plan_check", d.plan_check);
    json_str(&w, "whole", d.whole);
    json_num(&w, "timeout_s", a->timeout);
    json_int(&w, "max_threads", a->threads);
    if (a->output) json_str(&w, "output", a->output);
    else json_null(&w, "output");
    json_int(&w, "modules_total", s->r->tree->n - 1);
    json_arr(&w, "modules");
    for (int i = 0; i < s->sel.n; i++)
        dry_module_json(&w, s, s->sel.items[i].module, s->sel.items[i].strategy, a->threads);
    if (!s->sel.n) dry_module_json(&w, s, 0, a->strategy, a->threads);
    json_end(&w);
    json_end(&w);
    return cli_print_json(&w, "tune");
}

static void dry_run_module(const insp_state *s, int m, const char *strategy, int threads);

static int dry_run(const insp_args *a, const insp_state *s)
{
    dry_words d = dry_words_of(a);
    char bs[128] = "";
    for (int i = 0, len = 0; i < s->r->n_batch; i++)
        len += snprintf(bs + len, sizeof bs - (size_t)len, "%s%d", i ? "," : "", s->r->batch[i]);
    printf("dry run of tuning %s: nothing is built or written\n", a->model);
    printf("  samples     %d (%s)\n", s->samples->n, a->data ? a->data : "generated");
    printf("  batch sizes %s (%s)\n", bs,
           s->r->static_shapes ? "shapes assumed static" : "batch and dynamic axes detected");
    if (d.cache)
        printf("  cache       %s%s%s\n", d.cache, d.cache_exists ? "" : " (would be created)",
               a->clear_cache ? " (would be cleared first)" : "");
    else
        printf("  cache       none (%s)\n", d.no_cache_why);
    printf("  plan check  %s\n", d.plan_check);
    printf("  whole       %s\n", d.whole);
    printf("  modules     %d selected of %d\n", s->sel.n, s->r->tree->n - 1);
    for (int i = 0; i < s->sel.n; i++)
        dry_run_module(s, s->sel.items[i].module, s->sel.items[i].strategy, a->threads);
    if (!s->sel.n) dry_run_module(s, 0, a->strategy, a->threads); /* no modules: the model is one */
    return 0;
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
        printf(", %s/t1..t%d%s", b->name, threads,
               b->variants ? " (and in each variant it offers for the module)" : "");
    }
    printf("\n");
    insp_print_spec(stdout, r, m);
}

/* -o's folder must take a new file before the tune starts, not after it:
 * the artifact is written there (a temporary file, then renamed). */
static int output_check(const char *out)
{
    struct stat sb;
    if (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "ait tune: -o %s: is a directory (give a file name, NAME.ait)\n", out);
        return 1;
    }
    char dir[4096];
    const char *slash = strrchr(out, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == out ? 1 : (int)(slash - out), out);
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "ait tune: -o %s: folder %s does not exist (nothing was tuned)\n", out, dir);
        return 1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "ait tune: -o %s: cannot write in folder %s: %s (nothing was tuned)\n", out,
                dir, strerror(errno));
        return 1;
    }
    return 0;
}

int cmd_tune(int argc, char **argv)
{
    insp_args a;
    int rc = insp_parse(argc, argv, "tune", tune_help, INSP_DRY_RUN, &a);
    if (rc >= 0) return rc;
    if (a.output && !a.dry_run && output_check(a.output)) return 1;
    insp_state s;
    if (insp_prepare(&a, "tune", &s)) return 1;
    /* Modules the user picked bound the tune: the whole model is not tuned
     * beside them unless forced. */
    if (s.sel.n && a.whole == 0) a.whole = WHOLE_BY_SELECT;
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
    rc = a.json ? dry_run_json(&a, &s) : dry_run(&a, &s);
    insp_state_free(&s);
    return rc;
}
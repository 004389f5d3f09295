/* Options shared by `ait inspect` and `ait tune`, and the steps both take:
 * model, samples, inspection, selection. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/inspect_cli.h"
#include "tune/accuracy.h"

enum {
    O_DATA = 256, O_BATCHES, O_DIM, O_THREADS, O_RUNS, O_SELECT, O_TOP, O_SEL_SHARE, O_SEL_DEPTH,
    O_STRATEGY, O_MIN_DEPTH, O_MAX_DEPTH, O_MIN_SHARE, O_LIMIT, O_MODULE, O_JSON, O_DRY_RUN,
    O_TIMEOUT, O_WARMUP, O_WINDOW, O_CV, O_CAP, O_CLEAR_CACHE, O_NO_CACHE, O_MAX_BATCHES,
    O_OUTPUT, O_COLD, O_WARM, O_CPU_CLOCK, O_MARGIN, O_NO_PLAN_CHECK, O_NO_WHOLE, O_FORCE_WHOLE, O_GEMM_DB,
    O_QUANT, O_MIN_SQNR, O_CALIB_PCT, O_ACC_BUDGET, O_SEQ_BUCKETS, O_PAST_BUCKETS, O_MAX_INPUT, O_HELP,
};

/* Each option with the group that accepts it (0: every command). */
static const struct {
    struct option o;
    unsigned group;
} opts[] = {
    {{"data", required_argument, 0, O_DATA}, 0},
    {{"batch-sizes", required_argument, 0, O_BATCHES}, 0},
    {{"dim", required_argument, 0, O_DIM}, 0},
    {{"seq-buckets", required_argument, 0, O_SEQ_BUCKETS}, 0},
    {{"past-buckets", required_argument, 0, O_PAST_BUCKETS}, 0},
    {{"threads", required_argument, 0, O_THREADS}, 0},
    {{"runs", required_argument, 0, O_RUNS}, 0},
    {{"select", required_argument, 0, O_SELECT}, 0},
    {{"top", required_argument, 0, O_TOP}, 0},
    {{"select-min-share", required_argument, 0, O_SEL_SHARE}, 0},
    {{"select-depth", required_argument, 0, O_SEL_DEPTH}, 0},
    {{"strategy", required_argument, 0, O_STRATEGY}, 0},
    {{"min-depth", required_argument, 0, O_MIN_DEPTH}, INSP_VIEW},
    {{"max-depth", required_argument, 0, O_MAX_DEPTH}, INSP_VIEW},
    {{"min-share", required_argument, 0, O_MIN_SHARE}, INSP_VIEW},
    {{"limit", required_argument, 0, O_LIMIT}, INSP_VIEW},
    {{"module", required_argument, 0, O_MODULE}, INSP_VIEW},
    {{"json", no_argument, 0, O_JSON}, INSP_VIEW | INSP_DRY_RUN},
    {{"dry-run", no_argument, 0, O_DRY_RUN}, INSP_DRY_RUN},
    {{"timeout", required_argument, 0, O_TIMEOUT}, INSP_DRY_RUN},
    {{"warmup", required_argument, 0, O_WARMUP}, INSP_DRY_RUN},
    {{"window", required_argument, 0, O_WINDOW}, INSP_DRY_RUN},
    {{"cv", required_argument, 0, O_CV}, INSP_DRY_RUN},
    {{"cap", required_argument, 0, O_CAP}, INSP_DRY_RUN},
    {{"clear-cache", no_argument, 0, O_CLEAR_CACHE}, INSP_DRY_RUN},
    {{"no-cache", no_argument, 0, O_NO_CACHE}, INSP_DRY_RUN},
    {{"max-batches-per-size", required_argument, 0, O_MAX_BATCHES}, INSP_DRY_RUN},
    {{"output", required_argument, 0, O_OUTPUT}, INSP_DRY_RUN},
    {{"cold-cache", no_argument, 0, O_COLD}, INSP_DRY_RUN},
    {{"warm-cache", no_argument, 0, O_WARM}, INSP_DRY_RUN},
    {{"cpu-clock", no_argument, 0, O_CPU_CLOCK}, INSP_DRY_RUN},
    {{"margin", required_argument, 0, O_MARGIN}, INSP_DRY_RUN},
    {{"no-plan-check", no_argument, 0, O_NO_PLAN_CHECK}, INSP_DRY_RUN},
    {{"no-whole", no_argument, 0, O_NO_WHOLE}, INSP_DRY_RUN},
    {{"force-whole", no_argument, 0, O_FORCE_WHOLE}, INSP_DRY_RUN},
    {{"gemm-db", required_argument, 0, O_GEMM_DB}, INSP_DRY_RUN},
    {{"quant", required_argument, 0, O_QUANT}, INSP_DRY_RUN},
    {{"min-sqnr", required_argument, 0, O_MIN_SQNR}, INSP_DRY_RUN},
    {{"calib-percentile", required_argument, 0, O_CALIB_PCT}, INSP_DRY_RUN},
    {{"accuracy-budget", required_argument, 0, O_ACC_BUDGET}, INSP_DRY_RUN},
    {{"max-input-mb", required_argument, 0, O_MAX_INPUT}, 0},
    {{"help", no_argument, 0, O_HELP}, 0},
};
#define N_OPTS (sizeof opts / sizeof opts[0])

/* A share: a fraction 0..1 ("0.05") or a percentage ("5%"). */
static bool parse_share(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (errno || end == s || !isfinite(*v)) return false;
    if (*end == '%' && !end[1]) *v /= 100, end++;
    return !*end && *v >= 0 && *v <= 1;
}

/* Seconds, fractions allowed ("0.5"), in (0, hi]. */
static bool parse_secs(const char *s, double hi, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return !errno && end != s && !*end && isfinite(*v) && *v > 0 && *v <= hi;
}

/* "1,2,4": up to 16 sizes, each lo..65536, no repeats (ascending: each
 * above the one before). */
static bool parse_sizes(const char *s, long long lo, bool ascending, int *out, int *n)
{
    *n = 0;
    char tmp[256];
    if (strlen(s) >= sizeof tmp) return false;
    strcpy(tmp, s);
    for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long long v;
        if (*n == 16 || !cli_parse_int(tok, lo, 65536, &v)) return false;
        for (int i = 0; i < *n; i++)
            if (out[i] == v || (ascending && out[i] > v)) return false;
        out[(*n)++] = (int)v;
    }
    return *n > 0;
}

int insp_parse(int argc, char **argv, const char *cmd, const char *help, unsigned groups,
               insp_args *a)
{
    struct option longopts[N_OPTS + 1];
    int n = 0;
    for (size_t i = 0; i < N_OPTS; i++)
        if (!opts[i].group || (opts[i].group & groups)) longopts[n++] = opts[i].o;
    longopts[n] = (struct option){0};
    *a = (insp_args){.threads = 1, .runs = 5, .sel_share = -1, .sel_depth = 1,
                     .strategy = SELECT_DEFAULT_STRATEGY,
                     .view = {.max_depth = -1, .module = -1}, .n_batch = 1, .batch = {1},
                     .timeout = 60, .prof = profile_defaults()};
    long long v;
    int c, idx = 0, rc;
    optind = 1, opterr = 0; /* getopt's own messages off: cli_bad_option says it on one line */
    const char *shorts = groups & INSP_DRY_RUN ? ":ho:" : ":h"; /* -o NAME.ait: tune only */
    while ((c = getopt_long(argc, argv, shorts, longopts, &idx)) != -1) {
        bool ok = true;
        switch (c) {
        case O_DATA: a->data = optarg; break;
        case O_MAX_INPUT:
            if ((ok = cli_parse_int(optarg, 1, CLI_MAX_INPUT_MB, &v))) a->max_input = (size_t)v << 20;
            break;
        case O_BATCHES: ok = parse_sizes(optarg, 1, false, a->batch, &a->n_batch); break;
        case O_SEQ_BUCKETS: ok = parse_sizes(optarg, 1, true, a->seq, &a->n_seq); break;
        case O_PAST_BUCKETS: ok = parse_sizes(optarg, 0, true, a->past, &a->n_past); break;
        case O_DIM: {
            char *eq = strchr(optarg, '=');
            ok = eq && eq != optarg && a->n_dims < 32 && cli_parse_int(eq + 1, 0, (long long)1 << 40, &v);
            if (!ok) break;
            *eq = 0;
            a->dim_names[a->n_dims] = optarg;
            a->dim_vals[a->n_dims++] = v;
            break;
        }
        case O_THREADS: ok = cli_parse_int(optarg, 1, 1024, &v), a->threads = (int)v; break;
        case O_RUNS: ok = cli_parse_int(optarg, 1, 100000, &v), a->runs = (int)v; break;
        case O_SELECT:
            ok = a->n_sel < 64 && *optarg;
            if (ok) a->sel[a->n_sel++] = optarg;
            break;
        case O_TOP: ok = cli_parse_int(optarg, 1, 1 << 20, &v), a->top = (int)v; break;
        case O_SEL_SHARE: ok = parse_share(optarg, &a->sel_share); break;
        case O_SEL_DEPTH: ok = cli_parse_int(optarg, 1, 1000, &v), a->sel_depth = (int)v; break;
        case O_STRATEGY: {
            ait_error e;
            if (strategy_check(optarg, &e) != AIT_OK) {
                fprintf(stderr, "ait %s: --strategy: %s\n", cmd, e.msg);
                return 2;
            }
            a->strategy = optarg;
            break;
        }
        case O_MIN_DEPTH: ok = cli_parse_int(optarg, 0, 1000, &v), a->view.min_depth = (int)v; break;
        case O_MAX_DEPTH: ok = cli_parse_int(optarg, 0, 1000, &v), a->view.max_depth = (int)v; break;
        case O_MIN_SHARE: ok = parse_share(optarg, &a->view.min_share); break;
        case O_LIMIT: ok = cli_parse_int(optarg, 1, 1 << 30, &v), a->view.limit = (int)v; break;
        case O_MODULE: a->module = optarg; break;
        case O_JSON: a->json = true; break;
        case O_DRY_RUN: a->dry_run = true; break;
        case O_TIMEOUT: ok = parse_secs(optarg, 86400, &a->timeout); break;
        case O_WARMUP: ok = cli_parse_int(optarg, 0, 100000, &v), a->prof.warmup = (int)v; break;
        case O_WINDOW: ok = cli_parse_int(optarg, 2, 100000, &v), a->prof.window = (int)v; break;
        case O_CV: ok = parse_share(optarg, &a->prof.cv) && a->prof.cv > 0; break;
        case O_CAP: ok = cli_parse_int(optarg, 2, 1000000, &v), a->prof.cap = (int)v; break;
        case O_CLEAR_CACHE: a->clear_cache = true; break;
        case O_NO_CACHE: a->no_cache = true; break;
        case O_NO_PLAN_CHECK: a->no_plan_check = true; break;
        case O_NO_WHOLE: a->whole = -1; break;
        case O_FORCE_WHOLE: a->whole = 1; break;
        case O_GEMM_DB: a->gemm_db = optarg; break;
        case O_QUANT: a->quant = strcmp(optarg, "none") == 0 ? NULL : optarg; break;
        case O_MIN_SQNR: {
            char *end;
            a->min_sqnr = strtod(optarg, &end);
            ok = *optarg && !*end && a->min_sqnr > 0 && a->min_sqnr < 1000;
            break;
        }
        case O_CALIB_PCT: {
            char *end;
            a->calib_pct = strtod(optarg, &end);
            ok = *optarg && !*end && a->calib_pct > 50 && a->calib_pct <= 100;
            break;
        }
        case O_ACC_BUDGET: {
            acc_budget b;
            ait_error e = {0};
            if (acc_budget_parse(optarg, &b, &e) != AIT_OK)
                return cli_usage(cmd, "--accuracy-budget %s: %s", optarg, e.msg);
            a->accuracy_budget = optarg;
            break;
        }
        case 'o':
        case O_OUTPUT: a->output = optarg; break;
        case O_COLD: a->cold = 1; break;
        case O_WARM: a->cold = -1; break;
        case O_CPU_CLOCK: a->cpu_clock = true; break;
        case O_MARGIN: /* tune_opts.margin: 0 is the default, so "none" is -1 */
            ok = parse_share(optarg, &a->margin) && a->margin < 1;
            if (ok && a->margin == 0) a->margin = -1;
            break;
        case O_MAX_BATCHES: ok = cli_parse_int(optarg, 1, 1 << 20, &v), a->max_batches = (int)v; break;
        case 'h':
        case O_HELP: fputs(help, stdout); return 0;
        default: return cli_bad_option(cmd, c, argv);
        }
        if (!ok) {
            if (c == 'o') return cli_usage(cmd, "bad value for -o: '%s'", optarg);
            return cli_usage(cmd, "bad value for --%s: '%s'", longopts[idx].name, optarg);
        }
    }
    if ((rc = cli_one_model(cmd, argc, argv, optind)) >= 0) return rc;
    a->model = argv[optind];
    if (a->prof.cap < a->prof.window) {
        fprintf(stderr, "ait %s: --cap %d is below --window %d\n", cmd, a->prof.cap, a->prof.window);
        return 2;
    }
    return -1;
}

/* Builds the selection: paths first (their strategies win), then --top and
 * --select-min-share fill in around them. */
static ait_status make_selection(const insp_args *a, insp_state *s, ait_error *e)
{
    for (int i = 0; i < a->n_sel; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s", a->sel[i]);
        char *eq = strchr(path, '=');
        if (eq) *eq = 0;
        ait_status st = select_path(&s->sel, s->r->tree, path, eq ? eq + 1 : a->strategy, e);
        if (st != AIT_OK) return err_prefix(e, "--select %s: ", a->sel[i]);
    }
    if (a->top > 0 || a->sel_share >= 0)
        TRY(select_by_share(&s->sel, s->r, a->sel_depth, a->sel_share > 0 ? a->sel_share : 0,
                            a->top, a->strategy, e));
    return AIT_OK;
}

int insp_prepare(const insp_args *a, const char *cmd, insp_state *s)
{
    ait_error e = {0};
    *s = (insp_state){.module = -1};
    sample_opts so = {.batch = 1, .count = 1, .seed = 1, .n_dims = a->n_dims, .log = cli_logger()};
    for (int i = 0; i < a->n_dims; i++)
        so.dim_names[i] = a->dim_names[i], so.dim_vals[i] = a->dim_vals[i];
    ait_status st = ait_model_load(a->model, &s->m, &e);
    if (st == AIT_OK) st = samples_check_dims(s->m, &so, &e);
    if (st == AIT_OK)
        st = a->data ? samples_load(s->m, a->data, a->max_input, &s->samples, &e)
                     : samples_generate(s->m, &so, &s->samples, &e);
    if (st == AIT_OK) {
        inspect_opts io = {.samples = s->samples, .n_batch = a->n_batch, .runs = a->runs,
                           .threads = a->threads, .log = cli_logger(), .n_seq = a->n_seq,
                           .n_past = a->n_past};
        memcpy(io.batch, a->batch, sizeof io.batch);
        memcpy(io.seq_buckets, a->seq, sizeof io.seq_buckets);
        memcpy(io.past_buckets, a->past, sizeof io.past_buckets);
        st = inspect_run(s->m, &io, &s->r, &e);
        if (st != AIT_OK && !a->data) samples_explain_defaults(s->m, &so, NULL, &e);
    }
    if (st == AIT_OK && a->module) {
        s->module = module_find(s->r->tree, a->module);
        if (!strcmp(a->module, "(model)")) s->module = 0;
        if (s->module < 0)
            st = err_set(&e, AIT_E_NOT_FOUND,
                         "%s: no module called '%s' (the table without --module lists them)",
                         a->model, a->module);
    }
    if (st == AIT_OK) st = make_selection(a, s, &e);
    if (st != AIT_OK) {
        fprintf(stderr, "ait %s: %s\n", cmd, e.msg[0] ? e.msg : ait_status_string(st));
        insp_state_free(s);
        return 1;
    }
    return 0;
}

void insp_state_free(insp_state *s)
{
    selection_clear(&s->sel);
    inspection_free(s->r);
    sample_set_free(s->samples);
    ait_model_free(s->m);
    *s = (insp_state){.module = -1};
}

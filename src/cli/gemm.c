/* `ait gemm`: the per-shape GEMM tuner's commands (docs/gemm.md):
 * capture, tune, merge, compare. One function per subcommand, over
 * src/gemmtune/. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/gemm_mpi.h"
#include "cli/svg.h"
#include "gemmtune/capture.h"
#include "gemmtune/tune.h"
#include "io/artifact.h"
#include "tune/samples.h"

static const char *gemm_help =
    "usage: ait gemm capture|tune|merge|compare ... (`ait gemm SUBCOMMAND --help`)\n"
    "\n"
    "Tunes the native GEMM per shape (M, N, K, dtype, layout) the way AITER does:\n"
    "capture the shapes a model runs, sweep M, try every variant of the kernel in\n"
    "child processes, keep the best per shape in a tuned CSV that `ait tune\n"
    "--gemm-db` hands to the native backend (the artifact embeds the configs).\n"
    "\n"
    "  ait gemm capture models/bert.onnx --batch-sizes 1,8 -o untuned.csv\n"
    "  ait gemm tune untuned.csv -o tuned.csv --mp 2\n"
    "  ait tune models/bert.onnx --gemm-db tuned.csv -o bert.ait\n"
    "  ait gemm compare tuned.csv              (the default config against the tuned)\n";

static const char *capture_help =
    "usage: ait gemm capture MODEL.onnx|NAME.ait -o untuned.csv [options]\n"
    "\n"
    "Runs the model once per batch size on the native backend (generated inputs,\n"
    "or the samples of --data batched as `ait tune` batches them)\n"
    "and writes every GEMM it ran (MatMul, Gemm, convolutions lowered to GEMM):\n"
    "m,n,k,dtype,layout,epilogue,count. Layout: A's then B's storage, n plain,\n"
    "t transposed, p prepacked (weights).\n"
    "\n"
    "  -o FILE               the untuned CSV to write\n"
    "  --batch-sizes LIST    batch sizes to run (default 1)\n"
    "  --dim NAME=V          a named input dim (sequence length, ...)\n"
    "  --input NAME=FILE.npy an input from a file\n"
    "  --data PATH           the inputs from samples: a .npz, a folder of .npz files,\n"
    "                        or a folder of sample folders of NAME.npy (as `ait tune\n"
    "                        --data`); each batch size takes rows from them in order\n"
    "  --max-input-mb N      refuse an input file whose array declares more than\n"
    "                        N MiB, before reading it (default: no limit)\n"
    "  --m-sweep SPEC        each (N, K) again at every M: pow2:1-8192 or 1,8,64\n"
    "  --gemm-db FILE        run with a tuned CSV: -v then says which shapes miss it\n"
    "  -v                    each shape once: `gemm M=.. N=.. K=.. f32: default config\n"
    "                        (not tuned)` or `tuned config ID`\n"
    "\n"
    "  ait gemm capture mlp.onnx --batch-sizes 1,32 -o mlp.csv -v\n"
    "  ait gemm capture bert.onnx --dim seq=128 --m-sweep pow2:1-4096 -o bert.csv\n"
    "  ait gemm capture bert.onnx --data samples/ --batch-sizes 1,8 -o bert.csv\n";

static const char *tune_help =
    "usage: ait gemm tune untuned.csv -o tuned.csv [options]\n"
    "\n"
    "Each shape's candidates (the native GEMM's kernel, kc/mc/nc blocking, pack A\n"
    "on/off, loop order, split-K, threads) run in a child process killed at the\n"
    "timeout, are checked against float64 (error ratio: the share of checked\n"
    "elements off by more than float32's bound) and timed (median). The fastest\n"
    "passing one is the shape's row, beside the default config's time; OpenBLAS,\n"
    "oneDNN and BLIS (when installed) are checked and timed as reference points.\n"
    "A quantised row (dtype int8dq, int8wo, int4wo[-64|-128], bf16, fp16, u8s8, s8s8)\n"
    "runs on the quantised kernels (threads 1..N; --all: the portable one too),\n"
    "checked within the dtype's quantisation bound, the float GEMM's default\n"
    "timed beside it.\n"
    "Rows are appended as they finish: run the same command again after an\n"
    "interruption and it resumes.\n"
    "\n"
    "  -o FILE          the tuned CSV (created, or resumed)\n"
    "  --mp N           N shapes at once, processes pinned to distinct cores\n"
    "  --timeout S      seconds per candidate (default 10)\n"
    "  --err-ratio F    highest error ratio accepted (default 0)\n"
    "  --warmup N       untimed runs per candidate (default 2)\n"
    "  --iters N        timed runs per candidate, median kept (default 10)\n"
    "  --threads N      candidates at 1..N threads (default 1)\n"
    "  --splitk         try split-K (with --threads 2 or more)\n"
    "  --all            every combination of parameters and every kernel (slow)\n"
    "  --no-refs        do not time OpenBLAS, oneDNN and BLIS\n"
    "  --cpu-clock      time candidates at one thread (and the libraries) by the\n"
    "                   thread's CPU time, not the wall clock (a shared machine);\n"
    "                   the CSV's clock column says which timed each row\n"
    "  --confirm R      a winner other than the default config must beat it by 2%\n"
    "                   in R x --iters runs alternated with the default's in one\n"
    "                   process (default 5; 0: the lowest median wins); the row\n"
    "                   then has those medians\n"
    "  --mpi            under mpirun: the shapes spread over the ranks; rank 0\n"
    "                   writes the CSV (the rows one process writes, same order)\n"
    "                   (runs ait-mpi, ait built with Open MPI, from ait's folder)\n"
    "  -v               every candidate's time and error ratio\n"
    "\n"
    "  ait gemm tune bert.csv -o tuned.csv --mp 2 --iters 20\n"
    "  ait gemm tune bert.csv -o tuned.csv --cpu-clock\n"
    "  mpirun -n 4 ait gemm tune bert.csv -o tuned.csv --mpi\n";

static const char *merge_help =
    "usage: ait gemm merge A.csv B.csv ... -o OUT.csv\n"
    "\n"
    "Tuned CSVs: the fastest row per key (CPU, M, N, K, dtype, layout, epilogue).\n"
    "Untuned CSVs: every shape once, counts added.\n"
    "\n"
    "  ait gemm merge mlp.csv bert.csv -o all.csv\n";

static const char *compare_help =
    "usage: ait gemm compare [BEFORE.csv] AFTER.csv [-v] [-o chart.svg] [--retime R [--refs]\n"
    "                        [--cpu-clock]]\n"
    "\n"
    "The speed-up of AFTER over BEFORE per shape of both (this CPU's rows) and per\n"
    "size class of M (skinny <= 16, small <= 128, medium <= 1024, large): min,\n"
    "median, max and geometric mean. With one file: its default config against\n"
    "its tuned one. --retime R times each row's default and tuned config again\n"
    "here, interleaved (R rounds of 5 runs, medians), instead of the CSV's figures;\n"
    "--refs (with --retime) times OpenBLAS's and oneDNN's sgemm in the same rounds\n"
    "and counts per class the shapes where the tuned config is at least as fast\n"
    "as the faster of the two; --cpu-clock (with --retime) times them by this\n"
    "thread's CPU time (the configs at one thread), not the wall clock.\n"
    "-v prints the table per shape; -o FILE.svg draws both as a bar chart (per class\n"
    "the median, a whisker from min to max, then each shape; a line at 1.0x).\n"
    "\n"
    "  ait gemm compare tuned.csv\n"
    "  ait gemm compare tuned.csv --retime 7 --refs -v\n"
    "  ait gemm compare tuned.csv --retime 7 --refs --cpu-clock\n"
    "  ait gemm compare tuned-old.csv tuned-new.csv -v -o chart.svg\n";

static bool wants_help(int argc, char **argv, const char *help)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(help, stdout);
            return true;
        }
    return false;
}

static int usage_err(const char *help, const char *msg)
{
    if (msg) fprintf(stderr, "ait gemm: %s\n\n", msg);
    fputs(help, stderr);
    return 2;
}

/* The CLI logger without DEBUG unless -v. */
static bool verbose;
static void quiet_log(void *user, ait_log_level level, const char *msg)
{
    (void)user;
    if (level == AIT_LOG_DEBUG && !verbose) return;
    logger lg = cli_logger();
    lg.fn(lg.user, level, msg);
}

/* ---- capture ------------------------------------------------------------------------ */

static int capture(int argc, char **argv)
{
    if (wants_help(argc, argv, capture_help)) return 0;
    static const struct option lo[] = {{"batch-sizes", required_argument, 0, 'b'},
                                       {"dim", required_argument, 0, 'd'},
                                       {"input", required_argument, 0, 'i'},
                                       {"m-sweep", required_argument, 0, 'm'},
                                       {"gemm-db", required_argument, 0, 'g'},
                                       {"threads", required_argument, 0, 't'},
                                       {"max-input-mb", required_argument, 0, 'M'},
                                       {"data", required_argument, 0, 'D'},
                                       {0, 0, 0, 0}};
    const char *data = NULL, *out = NULL, *sweep = NULL, *db_path = NULL, *batches = "1";
    input_opts io = {.seed = 1};
    long long threads = 1;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:v", lo, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'v': verbose = true; break;
        case 'b': batches = optarg; break;
        case 'm': sweep = optarg; break;
        case 'g': db_path = optarg; break;
        case 'D': data = optarg; break;
        case 't':
            if (!cli_parse_int(optarg, 1, 1024, &threads)) return usage_err(capture_help, "--threads: 1 to 1024");
            break;
        case 'M': {
            long long v;
            if (!cli_parse_int(optarg, 1, CLI_MAX_INPUT_MB, &v))
                return usage_err(capture_help, "--max-input-mb: 1 to 1048576");
            io.max_input = (size_t)v << 20;
            break;
        }
        case 'i':
            if (io.n_files == 64) return usage_err(capture_help, "more than 64 --input");
            io.file_specs[io.n_files++] = optarg;
            break;
        case 'd': {
            char *eq = strchr(optarg, '=');
            long long v;
            if (!eq || io.n_dims == 32 || !cli_parse_int(eq + 1, 1, 1ll << 40, &v))
                return usage_err(capture_help, "--dim NAME=V (V >= 1)");
            *eq = '\0';
            io.dim_names[io.n_dims] = optarg;
            io.dim_vals[io.n_dims++] = v;
            break;
        }
        default: return usage_err(capture_help, NULL);
        }
    }
    if (optind != argc - 1 || !out) return usage_err(capture_help, !out ? "-o untuned.csv is required" : NULL);
    if (data && (io.n_files || io.n_dims))
        return usage_err(capture_help, "--data gives every input: not with --input or --dim");
    const char *path = argv[optind];
    sample_set *samples = NULL;
    ait_error e = {0};
    ait_model *m = NULL;
    gt_capture cap = {.log = verbose ? cli_logger() : (logger){0}, .threads = (int)threads};
    gemm_tuned tuned = {0};
    int64_t ms[64];
    int n_ms = 0;
    ait_status s = sweep ? gt_sweep_parse(sweep, ms, 64, &n_ms, &e) : AIT_OK;
    if (s == AIT_OK && db_path) {
        logger lg = cli_logger();
        s = gt_db_take(db_path, &lg, &tuned, &e);
        cap.tuned = &tuned;
    }
    if (s == AIT_OK) {
        ait_artifact_options ao = {.size = sizeof ao};
        s = artifact_file_is(path) ? ait_artifact_load(path, &ao, &m, &e) : ait_model_load(path, &m, &e);
    }
    if (s == AIT_OK && data) s = samples_load(m, data, io.max_input, &samples, &e);
    const char *p = batches;
    while (s == AIT_OK && *p) {
        long long b;
        char *end;
        b = strtoll(p, &end, 10);
        if (end == p || b < 1 || b > 1 << 20 || (*end && *end != ',')) {
            s = err_set(&e, AIT_E_INVALID_ARG, "--batch-sizes '%s': want sizes like 1,8", batches);
            break;
        }
        p = *end ? end + 1 : end;
        io.batch = (int)b;
        int n_in = m->g->n_inputs;
        ait_tensor **in = calloc((size_t)n_in + 1, sizeof *in);
        bool *gen = calloc((size_t)n_in + 1, sizeof *gen);
        if (!in || !gen) s = err_set(&e, AIT_E_NOMEM, "out of memory");
        if (s == AIT_OK) s = samples ? samples_batch(m, samples, (int)b, in, &e) : inputs_make(m, &io, in, gen, &e);
        if (s == AIT_OK) s = gt_capture_run(&cap, m->g, in, &e);
        if (s == AIT_OK)
            fprintf(stderr, "batch %lld: %d GEMM shape%s so far\n", b, cap.db.n, cap.db.n == 1 ? "" : "s");
        for (int i = 0; in && i < n_in; i++) ait_tensor_free(in[i]);
        free(in);
        free(gen);
    }
    gt_db swept = {0};
    if (s == AIT_OK && n_ms) s = gt_sweep(&cap.db, ms, n_ms, &swept, &e);
    if (s == AIT_OK) s = gt_db_save(out, n_ms ? &swept : &cap.db, &e);
    if (s == AIT_OK)
        printf("wrote %s: %d GEMM shape%s (%d captured%s)\n", out, n_ms ? swept.n : cap.db.n,
               (n_ms ? swept.n : cap.db.n) == 1 ? "" : "s", cap.db.n, n_ms ? ", M swept" : "");
    gt_db_free(&swept);
    gt_capture_free(&cap);
    gemm_tuned_free(&tuned);
    sample_set_free(samples);
    ait_model_free(m);
    if (s != AIT_OK) {
        fprintf(stderr, "ait gemm capture: %s\n", e.msg);
        return 1;
    }
    return 0;
}

/* ---- tune --------------------------------------------------------------------------- */

static bool parse_f(const char *s, double lo, double hi, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return *s && !*end && *v >= lo && *v <= hi;
}

static int tune(int argc, char **argv)
{
    if (wants_help(argc, argv, tune_help)) return 0;
    static const struct option lo[] = {
        {"mp", required_argument, 0, 'p'},      {"timeout", required_argument, 0, 'T'},
        {"err-ratio", required_argument, 0, 'e'}, {"warmup", required_argument, 0, 'w'},
        {"iters", required_argument, 0, 'n'},   {"threads", required_argument, 0, 't'},
        {"splitk", no_argument, 0, 's'},        {"all", no_argument, 0, 'a'},
        {"no-refs", no_argument, 0, 'r'},       {"mpi", no_argument, 0, 'M'},
        {"cpu-clock", no_argument, 0, 'C'},     {"confirm", required_argument, 0, 'K'},
        {0, 0, 0, 0}};
    const char *out = NULL;
    bool mpi = false;
    gt_opts o = {.refs = true, .log = {quiet_log, NULL}};
    long long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:v", lo, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'o': out = optarg; break;
        case 'v': verbose = true; break;
        case 'p': ok = cli_parse_int(optarg, 1, 256, &v), o.mp = (int)v; break;
        case 'T': ok = parse_f(optarg, 0.1, 86400, &o.timeout); break;
        case 'e': ok = parse_f(optarg, 0, 1, &o.err_ratio); break;
        case 'w': ok = cli_parse_int(optarg, 0, 100000, &v), o.warmup = (int)v; break;
        case 'n': ok = cli_parse_int(optarg, 1, 100000, &v), o.iters = (int)v; break;
        case 't': ok = cli_parse_int(optarg, 1, 256, &v), o.threads = (int)v; break;
        case 's': o.splitk = true; break;
        case 'a': o.all = true; break;
        case 'r': o.refs = false; break;
        case 'M': mpi = true; break;
        case 'C': o.cpu_clock = true; break;
        case 'K': ok = cli_parse_int(optarg, 0, 64, &v), o.confirm = v ? (int)v : -1; break;
        default: return usage_err(tune_help, NULL);
        }
        if (!ok) {
            char msg[128];
            snprintf(msg, sizeof msg, "bad value '%s'", optarg);
            return usage_err(tune_help, msg);
        }
    }
    if (optind != argc - 1 || !out) return usage_err(tune_help, !out ? "-o tuned.csv is required" : NULL);
    if (mpi && o.mp > 1) return usage_err(tune_help, "--mpi and --mp: each rank tunes one shape at a time");
    if (mpi) return gemm_tune_mpi(argc, argv, argv[optind], out, &o);
    ait_error e = {0};
    gt_db in;
    if (gt_db_load(argv[optind], false, &in, &e) != AIT_OK) {
        fprintf(stderr, "ait gemm tune: %s\n", e.msg);
        return 1;
    }
    int64_t t0 = now_ns();
    ait_status s = gt_tune(&in, out, &o, &e);
    gt_db_free(&in);
    if (s != AIT_OK) {
        fprintf(stderr, "ait gemm tune: %s\n", e.msg);
        return 1;
    }
    printf("wrote %s in %.1f s\n", out, (double)(now_ns() - t0) * 1e-9);
    return 0;
}

/* ---- merge and compare ------------------------------------------------------------------- */

/* A CSV as tuned or untuned, by its header. */
static ait_status load_any(const char *path, gt_db *db, ait_error *e)
{
    ait_error first = {0};
    if (gt_db_load(path, true, db, &first) == AIT_OK) return AIT_OK;
    if (gt_db_load(path, false, db, e) == AIT_OK) return AIT_OK;
    *e = first;
    return e->code;
}

static int merge(int argc, char **argv)
{
    if (wants_help(argc, argv, merge_help)) return 0;
    const char *out = NULL;
    int c;
    optind = 1;
    while ((c = getopt(argc, argv, "o:")) != -1) {
        if (c == 'o') out = optarg;
        else return usage_err(merge_help, NULL);
    }
    if (!out || optind >= argc) return usage_err(merge_help, "give input CSVs and -o OUT.csv");
    gt_db all = {0};
    ait_error e = {0};
    ait_status s = AIT_OK;
    for (int i = optind; s == AIT_OK && i < argc; i++) {
        gt_db one;
        s = load_any(argv[i], &one, &e);
        if (s == AIT_OK && i > optind && one.n && all.n && one.tuned != all.tuned)
            s = err_set(&e, AIT_E_INVALID_ARG, "%s is %s but %s is not", argv[i],
                        one.tuned ? "tuned" : "untuned", argv[optind]);
        if (s == AIT_OK && (i == optind || one.n)) all.tuned = one.tuned;
        for (int r = 0; s == AIT_OK && r < one.n; r++) s = gt_db_merge(&all, &one.rows[r], &e);
        gt_db_free(&one);
    }
    if (s == AIT_OK) s = gt_db_save(out, &all, &e);
    if (s == AIT_OK) printf("wrote %s: %d row%s\n", out, all.n, all.n == 1 ? "" : "s");
    gt_db_free(&all);
    if (s != AIT_OK) {
        fprintf(stderr, "ait gemm merge: %s\n", e.msg);
        return 1;
    }
    return 0;
}

/* One shape of compare: its row, the times and the speed-up. */
typedef struct cmp_shape {
    const gt_row *r;
    double was, now, sp;
    int cl;
    double lib_us; /* --refs: the faster library's time; lib, its index in compare_libs */
    int lib;
} cmp_shape;

/* The libraries --refs times: the target's "best of OpenBLAS and oneDNN". */
static const char *const compare_libs[] = {"openblas", "onednn"};
enum { N_COMPARE_LIBS = sizeof compare_libs / sizeof *compare_libs };

static int cmp_shape_order(const void *x, const void *y)
{
    const cmp_shape *a = x, *b = y;
    if (a->cl != b->cl) return a->cl - b->cl;
    if (a->r->m != b->r->m) return a->r->m < b->r->m ? -1 : 1;
    if (a->r->n != b->r->n) return a->r->n < b->r->n ? -1 : 1;
    if (a->r->k != b->r->k) return a->r->k < b->r->k ? -1 : 1;
    return strcmp(a->r->layout, b->r->layout);
}

/* Per size class: min, median, max and geometric mean of the speed-ups. */
typedef struct cmp_class {
    int n;
    double min, med, max, geo;
} cmp_class;

/* The chart: per class a bar at the median with a whisker from min to max,
 * then its shapes, each a bar at its speed-up; a dashed line at 1.0x. */
static ait_status compare_chart(const char *path, const char *title, const cmp_shape *sh, int n,
                                const cmp_class *cls, ait_error *e)
{
    int rows = n + 4;
    const char **label = calloc((size_t)rows, sizeof *label), **text = calloc((size_t)rows, sizeof *text);
    int *indent = calloc((size_t)rows, sizeof *indent);
    double *val = calloc((size_t)rows, sizeof *val), *lo = calloc((size_t)rows, sizeof *lo),
           *hi = calloc((size_t)rows, sizeof *hi);
    char *buf = calloc((size_t)rows, 160);
    ait_status s = label && text && indent && val && lo && hi && buf ? AIT_OK
                 : err_set(e, AIT_E_NOMEM, "out of memory");
    int k = 0;
    for (int c = 0, i = 0; s == AIT_OK && c < 4; c++) {
        char *l = buf + (size_t)k * 160, *t = l + 80;
        snprintf(l, 80, "%s: %d shape%s", gt_size_class_names[c], cls[c].n, cls[c].n == 1 ? "" : "s");
        if (cls[c].n) snprintf(t, 80, "%.2fx (%.2fx to %.2fx)", cls[c].med, cls[c].min, cls[c].max);
        else snprintf(t, 80, "-");
        label[k] = l, text[k] = t, val[k] = cls[c].n ? cls[c].med : -1;
        lo[k] = cls[c].n ? cls[c].min : 0, hi[k] = cls[c].n ? cls[c].max : 0;
        k++;
        for (; i < n && sh[i].cl == c; i++, k++) {
            l = buf + (size_t)k * 160, t = l + 80;
            snprintf(l, 80, "M=%lld N=%lld K=%lld %s %s", (long long)sh[i].r->m, (long long)sh[i].r->n,
                     (long long)sh[i].r->k, sh[i].r->layout, sh[i].r->epi);
            snprintf(t, 80, "%.2fx (%.*f to %.*f us)", sh[i].sp, sh[i].was < 100 ? 1 : 0, sh[i].was,
                     sh[i].now < 100 ? 1 : 0, sh[i].now);
            label[k] = l, text[k] = t, val[k] = sh[i].sp, indent[k] = 1;
        }
    }
    FILE *f = s == AIT_OK ? fopen(path, "w") : NULL;
    if (s == AIT_OK && !f) s = err_set(e, AIT_E_IO, "%s: %s", path, strerror(errno));
    if (f) {
        bar_chart ch = {.n = k, .label = label, .indent = indent, .val = val, .lo = lo, .hi = hi,
                        .text = text, .mark = -1, .title = title, .ref = 1.0,
                        .ref_label = "1.0x: as fast as before"};
        svg_bars_file(f, &ch);
        if (ferror(f) | fclose(f)) s = err_set(e, AIT_E_IO, "%s: write failed", path);
    }
    free(label), free(text), free(indent), free(val), free(lo), free(hi), free(buf);
    return s;
}

/* --refs: per class, the shapes where the tuned config is at least as fast
 * as the faster of OpenBLAS and oneDNN, and the geometric mean of library
 * time over tuned time (above 1: native faster). */
static void compare_refs(const cmp_shape *sh, int n)
{
    printf("tuned native against the faster of OpenBLAS and oneDNN (re-timed in the same rounds):\n");
    printf("%-18s %6s %14s %9s\n", "class", "shapes", "native as fast", "lib/tuned");
    for (int k = 0; k <= 4; k++) { /* the four classes, then all */
        int m = 0, win = 0;
        double l = 0;
        for (int i = 0; i < n; i++)
            if (k == 4 || sh[i].cl == k) m++, win += sh[i].now <= sh[i].lib_us, l += log(sh[i].lib_us / sh[i].now);
        if (m)
            printf("%-18s %6d %7d (%3.0f%%) %8.2fx\n", k < 4 ? gt_size_class_names[k] : "all", m, win,
                   100.0 * win / m, exp(l / m));
    }
}

static int compare(int argc, char **argv)
{
    if (wants_help(argc, argv, compare_help)) return 0;
    int c;
    long long retime = 0;
    bool refs = false, cpu_clock = false;
    const char *chart = NULL;
    optind = 1;
    static const struct option lo[] = {
        {"retime", required_argument, 0, 'r'}, {"refs", no_argument, 0, 'R'},
        {"cpu-clock", no_argument, 0, 'C'},    {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "vo:", lo, NULL)) != -1) {
        if (c == 'v') verbose = true;
        else if (c == 'o') chart = optarg;
        else if (c == 'R') refs = true;
        else if (c == 'C') cpu_clock = true;
        else if (c == 'r' && cli_parse_int(optarg, 1, 64, &retime)) continue;
        else if (c == 'r') {
            char msg[128];
            snprintf(msg, sizeof msg, "--retime '%s': a count of rounds from 1 to 64", optarg);
            return usage_err(compare_help, msg);
        } else return usage_err(compare_help, NULL);
    }
    if (retime && argc - optind != 1) return usage_err(compare_help, "--retime takes one CSV");
    if (refs && !retime) return usage_err(compare_help, "--refs times the libraries again: it needs --retime R");
    if (cpu_clock && !retime) return usage_err(compare_help, "--cpu-clock times again: it needs --retime R");
    int nf = argc - optind;
    if (nf < 1 || nf > 2) return usage_err(compare_help, "give one or two tuned CSVs");
    gt_db before = {0}, after = {0};
    ait_error e = {0};
    ait_status s = gt_db_load(argv[argc - 1], true, &after, &e);
    if (s == AIT_OK && nf == 2) s = gt_db_load(argv[optind], true, &before, &e);
    cmp_shape *sh = s == AIT_OK ? calloc((size_t)after.n + 1, sizeof *sh) : NULL;
    if (s == AIT_OK && !sh) s = err_set(&e, AIT_E_NOMEM, "out of memory");
    if (s != AIT_OK) {
        fprintf(stderr, "ait gemm compare: %s\n", e.msg);
        gt_db_free(&after);
        gt_db_free(&before);
        return 1;
    }
    gt_cpu me;
    gt_cpu_this(&me);
    int n = 0, skipped = 0;
    for (int i = 0; i < after.n; i++) {
        const gt_row *a = &after.rows[i];
        if (!gt_cpu_same(&a->cpu, &me)) {
            skipped++;
            continue;
        }
        double was = a->default_us;
        if (nf == 2) {
            was = -1;
            for (int j = 0; j < before.n; j++)
                if (gt_same_key(&before.rows[j], a, true)) was = before.rows[j].us;
        }
        if (was <= 0 || a->us <= 0) continue;
        double now = a->us, lib_us[N_COMPARE_LIBS];
        if (retime && a->cfg.kern == NULL && a->layout[1] != 'p') continue;
        if (retime && gt_retime(a, (int)retime, 5, cpu_clock, compare_libs, refs ? N_COMPARE_LIBS : 0, &was, &now,
                                lib_us, &e) != AIT_OK) {
            fprintf(stderr, "ait gemm compare: %lldx%lldx%lld: %s\n", (long long)a->m, (long long)a->n,
                    (long long)a->k, e.msg);
            continue;
        }
        sh[n] = (cmp_shape){.r = a, .was = was, .now = now, .sp = was / now, .cl = gt_size_class(a->m),
                            .lib = -1};
        for (int j = 0; refs && j < N_COMPARE_LIBS; j++)
            if (sh[n].lib < 0 || lib_us[j] < sh[n].lib_us) sh[n].lib = j, sh[n].lib_us = lib_us[j];
        n++;
    }
    qsort(sh, (size_t)n, sizeof *sh, cmp_shape_order);
    if (skipped) fprintf(stderr, "ait gemm compare: warning: %d row%s of another CPU skipped\n", skipped, skipped == 1 ? "" : "s");
    if (verbose) printf("%8s %6s %6s %-6s %12s %12s %8s%s\n", "M", "N", "K", "layout", "before us", "after us",
                        "speedup", refs ? "  best library      us  lib/after" : "");
    for (int i = 0; verbose && i < n; i++) {
        printf("%8lld %6lld %6lld %-6s %12.1f %12.1f %7.2fx", (long long)sh[i].r->m, (long long)sh[i].r->n,
               (long long)sh[i].r->k, sh[i].r->layout, sh[i].was, sh[i].now, sh[i].sp);
        if (refs) printf("  %-8s %10.1f %9.2fx", compare_libs[sh[i].lib], sh[i].lib_us, sh[i].lib_us / sh[i].now);
        printf("\n");
    }
    char title[512];
    snprintf(title, sizeof title, "%s over %s, by size class of M", nf == 2 ? argv[argc - 1] : "tuned",
             nf == 2 ? argv[optind] : "the default config");
    printf("%s:\n", title);
    printf("%-18s %6s %8s %8s %8s %8s\n", "class", "shapes", "min", "median", "max", "geomean");
    cmp_class cls[4] = {{0}};
    double lsum = 0, *sp = calloc((size_t)n + 1, sizeof *sp);
    for (int k = 0, i = 0; sp && k < 4; k++) {
        int m = 0;
        double l = 0;
        for (; i < n && sh[i].cl == k; i++) sp[m++] = sh[i].sp, l += log(sh[i].sp);
        if (!m) {
            printf("%-18s %6d %8s %8s %8s %8s\n", gt_size_class_names[k], 0, "-", "-", "-", "-");
            continue;
        }
        qsort(sp, (size_t)m, sizeof *sp, cli_cmp_double);
        lsum += l;
        cls[k] = (cmp_class){.n = m, .min = sp[0], .max = sp[m - 1], .geo = exp(l / m),
                             .med = m % 2 ? sp[m / 2] : 0.5 * (sp[m / 2 - 1] + sp[m / 2])};
        printf("%-18s %6d %7.2fx %7.2fx %7.2fx %7.2fx\n", gt_size_class_names[k], m, cls[k].min,
               cls[k].med, cls[k].max, cls[k].geo);
    }
    if (n) printf("%-18s %6d %8s %8s %8s %7.2fx\n", "all", n, "", "", "", exp(lsum / n));
    if (refs && n) compare_refs(sh, n);
    int rc = sp ? 0 : 1;
    if (chart && sp) {
        char head[600];
        snprintf(head, sizeof head, "GEMM speed-up: %s, and per shape", title);
        if (compare_chart(chart, head, sh, n, cls, &e) != AIT_OK) {
            fprintf(stderr, "ait gemm compare: %s\n", e.msg);
            rc = 1;
        } else {
            printf("wrote %s\n", chart);
        }
    }
    free(sp);
    free(sh);
    gt_db_free(&before);
    gt_db_free(&after);
    return rc;
}

int cmd_gemm(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } subs[] = {{"capture", capture}, {"tune", tune}, {"merge", merge}, {"compare", compare}};
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(gemm_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(argv[1], subs[i].name)) return subs[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "ait gemm: unknown subcommand '%s'\n\n", argv[1]);
    fputs(gemm_help, stderr);
    return 2;
}

/* ait run: run a model once or more, print its outputs and latency. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "io/artifact.h"
#include "io/npy.h"
#include "tune/profile.h"

static const char *run_help =
    "usage: ait run MODEL.onnx|NAME.ait [options]\n"
    "\n"
    "Runs the model and prints, for each output, its shape, dtype and\n"
    "min/max/mean, then the latency of the first run and the median of the\n"
    "timed runs. An ONNX model runs on the reference backend; a .ait artifact\n"
    "(from `ait tune -o`) runs each tuned module on its chosen candidate for the\n"
    "batch's bucket, after checking every hash, the model and the CPU features.\n"
    "\n"
    "options:\n"
    "  --input NAME=FILE.npy  value of input NAME (repeatable)\n"
    "  --input NAME=VALUE     a number for an input of one element (a sample rate)\n"
    "  --input FILE.npz       values of the inputs named in the archive\n"
    "  --max-input-mb N       refuse an input file whose array declares more than\n"
    "                         N MiB, before reading it (default: no limit)\n"
    "  --batch N              size of batch dims (named like 'batch', or an unnamed\n"
    "                         first dim) of generated inputs (default 1)\n"
    "  --dim NAME=V           size of symbolic dim NAME of generated inputs\n"
    "  --threads N            threads (default 1). An untuned model runs on the\n"
    "                         reference ops, which use one thread whatever N is; a\n"
    "                         .ait's modules run at the counts they were tuned at;\n"
    "                         --jit tunes candidates of 1..N threads\n"
    "  --repeat N             timed runs after the first (default 5)\n"
    "  --cpu-clock            time each run by the calling thread's CPU time\n"
    "                         instead of the wall clock (for a shared machine;\n"
    "                         counts one thread: runs of one thread only)\n"
    "  --session-run          run through ait_session_run: new output tensors\n"
    "                         each run, allocated by the run (see below)\n"
    "  --seed N               seed of generated inputs (default 1)\n"
    "  --output-dir DIR       write each output to DIR/NAME.npy, and all of them\n"
    "                         to DIR/outputs.npz (tensors only: a model with a map\n"
    "                         output, such as ZipMap's, is refused; run prints it)\n"
    "  --fallback-untuned     a .ait that cannot run here (CPU features, a damaged\n"
    "                         plan) runs its embedded model untuned, with a warning\n"
    "  --map                  use a .ait's file in place (mapped, the page cache\n"
    "                         shared) instead of a copy of it: a faster load with\n"
    "                         the same checks, but the file must not be changed or\n"
    "                         truncated while ait runs (replace it by rename)\n"
    "  --trusted-key KEY.pub  run only an artifact signed with this key (`ait sign`;\n"
    "                         NAME.ait.sig beside it): unsigned or otherwise\n"
    "                         signed artifacts and plain models are refused\n"
    "  --jit                  tune on the first run (its inputs are the sample;\n"
    "                         also AIT_JIT=1), then run tuned\n"
    "  --save NAME.ait        with --jit: save what it tuned as an artifact\n"
    "  -v, --verbose          detail on stderr, on a terminal too (a pipe or a log\n"
    "                         gets it anyway): JIT's candidates, and each GEMM shape\n"
    "                         the native backend runs, once, with its config:\n"
    "                         `gemm M=.. N=.. K=.. f32 ..: tuned config ID` or\n"
    "                         `default config (not tuned)` (docs/gemm.md)\n"
    "\n"
    "Inputs not given are generated from the declared dims: floats uniform in\n"
    "[-1, 1), inputs named like '*mask*' as ones, integer inputs that index a\n"
    "table (token ids) below the table's size. A single-element input the model\n"
    "branches on or takes a shape from (a sample rate, a length) is not guessed:\n"
    "give it.\n"
    "\n"
    "Runs go through a binding (ait_binding), as a service would: the inputs\n"
    "bound, the outputs kept by the binding from run to run. Before the first\n"
    "run, at load, ait run reserves the binding's outputs for the bucket of\n"
    "the artifact the inputs fall in (ait_binding_reserve: as many bytes as\n"
    "that bucket's outputs, zeroed, held until exit), so the first run does\n"
    "not fault them in; the line `memory` says how much. --session-run runs\n"
    "as before.\n"
    "\n"
    "examples:\n"
    "  ait run models/resnet18.onnx --batch 8\n"
    "  ait run resnet18.ait --batch 8 --repeat 20\n"
    "  ait run models/mlp.onnx --jit --save mlp.ait\n"
    "  ait run bert.onnx --dim seq=128 --input input_ids=ids.npy --output-dir out\n";

static void stats(const ait_tensor *t, double *mn, double *mx, double *mean)
{
    int64_t n = ait_tensor_numel(t);
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = elem_get_f64(t->data, t->dtype, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        sum += v;
    }
    *mn = n ? lo : 0;
    *mx = n ? hi : 0;
    *mean = n ? sum / (double)n : 0;
}

/* Output names become file names: keep them to one path component. */
static void safe_name(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (; in[k] && k + 1 < n; k++) out[k] = (in[k] == '/' || in[k] == '\\' || in[k] == ':') ? '_' : in[k];
    out[k] = 0;
    if (!k || !strcmp(out, ".") || !strcmp(out, "..")) snprintf(out, n, "output");
}

/* What the command line asks of a run. */
typedef struct run_args {
    input_opts io;
    int threads, repeat, fallback, jit, cpu_clock, session_run, map;
    const char *outdir, *save, *path, *key;
} run_args;

/* Reads the options into *a: -1 to go on, else the exit code (help: 0; a
 * bad value or usage: 2, said on stderr). */
static int run_parse(int argc, char **argv, run_args *a)
{
    static const struct option longopts[] = {
        {"input", required_argument, 0, 'i'},  {"batch", required_argument, 0, 'b'},
        {"dim", required_argument, 0, 'd'},    {"threads", required_argument, 0, 't'},
        {"repeat", required_argument, 0, 'r'}, {"seed", required_argument, 0, 's'},
        {"output-dir", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"fallback-untuned", no_argument, 0, 'F'}, {"jit", no_argument, 0, 'J'},
        {"save", required_argument, 0, 'S'}, {"trusted-key", required_argument, 0, 'K'},
        {"verbose", no_argument, 0, 'v'}, {"max-input-mb", required_argument, 0, 'M'},
        {"cpu-clock", no_argument, 0, 'C'}, {"session-run", no_argument, 0, 'R'},
        {"map", no_argument, 0, 'P'},          {0, 0, 0, 0},
    };
    *a = (run_args){.io = {.batch = 1, .seed = 1}, .threads = 1, .repeat = 5};
    input_opts *io = &a->io;
    long long v;
    int c, li = 0;
    optind = 1, opterr = 0; /* cli_bad_option says what was wrong, on one line */
    while ((c = getopt_long(argc, argv, ":hv", longopts, &li)) != -1) {
        bool ok = true;
        switch (c) {
        case 'i':
            if ((ok = io->n_files < 64)) io->file_specs[io->n_files++] = optarg;
            break;
        case 'b':
            if ((ok = cli_parse_int(optarg, 1, 1 << 20, &v))) io->batch = (int)v;
            break;
        case 'd': {
            char *eq = strchr(optarg, '=');
            ok = eq && io->n_dims < 32 && cli_parse_int(eq + 1, 0, (long long)1 << 40, &v);
            if (ok) {
                *eq = 0;
                io->dim_names[io->n_dims] = optarg;
                io->dim_vals[io->n_dims++] = v;
            }
            break;
        }
        case 't':
            if ((ok = cli_parse_int(optarg, 1, 1024, &v))) a->threads = (int)v;
            break;
        case 'r':
            if ((ok = cli_parse_int(optarg, 0, 1000000, &v))) a->repeat = (int)v;
            break;
        case 's':
            if ((ok = cli_parse_int(optarg, 0, INT64_MAX, &v))) io->seed = (uint64_t)v;
            break;
        case 'M':
            if ((ok = cli_parse_int(optarg, 1, CLI_MAX_INPUT_MB, &v))) io->max_input = (size_t)v << 20;
            break;
        case 'o': a->outdir = optarg; break;
        case 'F': a->fallback = 1; break;
        case 'J': a->jit = 1; break;
        case 'C': a->cpu_clock = 1; break;
        case 'R': a->session_run = 1; break;
        case 'P': a->map = 1; break;
        case 'S': a->save = optarg; break;
        case 'K': a->key = optarg; break;
        case 'v': cli_log_verbose(); break;
        case 'h': fputs(run_help, stdout); return 0;
        default: return cli_bad_option("run", c, argv);
        }
        if (!ok) return cli_usage("run", "bad value for --%s: '%s'", longopts[li].name, optarg);
        li = 0;
    }
    int rc = cli_one_model("run", argc, argv, optind);
    if (rc >= 0) return rc;
    a->path = argv[optind];
    return -1;
}

/* The model or artifact at a->path, and a session on it (JIT and the cache
 * folder also from the environment, as documented). */
static ait_status run_open(const run_args *a, ait_model **m, ait_session **s, ait_error *err)
{
    ait_artifact_options ao = {.size = sizeof ao, .fallback_untuned = a->fallback,
                               .trusted_key = a->key, .map_file = a->map};
    if (a->key && !artifact_file_is(a->path))
        return err_set(err, AIT_E_SECURITY, "%s: not an artifact, so not signed; --trusted-key "
                       "runs signed artifacts only", a->path);
    double w0 = now_sec(), c0 = process_cpu_sec();
    TRY(artifact_file_is(a->path) ? ait_artifact_load(a->path, &ao, m, err)
                                  : ait_model_load(a->path, m, err));
    double w1 = now_sec(), c1 = process_cpu_sec();
    if (ait_model_note(*m)[0])
        fprintf(stderr, "ait run: warning: running untuned: %s\n", ait_model_note(*m));
    if (ait_model_input_count(*m) > 512 || ait_model_output_count(*m) > 512)
        return err_set(err, AIT_E_UNSUPPORTED, "%s: more than 512 inputs or outputs", a->path);
    printf("model  %s: %d nodes, opset %d, %d inputs, %d outputs\n", a->path,
           ait_model_node_count(*m), ait_model_opset(*m), ait_model_input_count(*m),
           ait_model_output_count(*m));
    if (a->save && !a->jit)
        return err_set(err, AIT_E_INVALID_ARG, "--save needs --jit (`ait tune -o` saves a tuning)");
    logger lg = cli_logger();
    /* a binding's run copies into the binding's outputs: no output blocks */
    ait_session_options so = {.size = sizeof so, .threads = a->threads, .jit = a->jit,
                              .log = lg.fn, .log_user = lg.user,
                              .no_output_blocks = !a->session_run};
    TRY(ait_options_from_env(&so, NULL, err));
    TRY(ait_session_create(*m, &so, s, err));
    printf("load   %.1f ms (CPU %.1f ms, every thread), session %.1f ms (CPU %.1f ms: builds "
           "and priming)%s\n", (w1 - w0) * 1e3, (c1 - c0) * 1e3, (now_sec() - w1) * 1e3,
           (process_cpu_sec() - c1) * 1e3, a->map ? ", the file mapped in place (--map)" : "");
    return AIT_OK;
}

/* A binding of s on the inputs, its outputs unbound and reserved
 * (*reserved: the bytes they hold). */
static ait_status bind_open(ait_session *s, ait_tensor **in, int n_in, ait_binding **b,
                            size_t *reserved, ait_error *err)
{
    TRY(ait_binding_create(s, b, err));
    for (int i = 0; i < n_in; i++) TRY(ait_binding_set_input(*b, i, in[i], err));
    return ait_binding_reserve(*b, reserved, err);
}

/* The calling thread's minor page faults so far. */
static long minor_faults(void)
{
    struct rusage u;
    return getrusage(RUSAGE_THREAD, &u) == 0 ? u.ru_minflt : 0;
}

/* The first run and `repeat` more, each one's latency into lat[] (wall
 * clock, or the thread's CPU time), the first's minor page faults into
 * flt[0] and the others' into flt[1] (the calling thread's), on binding b
 * (NULL: ait_session_run, whose outputs out[] holds and the caller frees);
 * out[] holds the last run's outputs. */
static ait_status run_timed(ait_session *s, ait_binding *b, ait_tensor **in, int n_in,
                            ait_tensor **out, int n_out, const run_args *a, double *lat,
                            long *flt, ait_error *err)
{
    flt[0] = flt[1] = 0;
    for (int r = 0; r <= a->repeat; r++) {
        for (int j = 0; !b && j < n_out; j++) ait_tensor_free(out[j]), out[j] = NULL;
        long f0 = minor_faults();
        double t0 = a->cpu_clock ? (double)profile_thread_cpu_ns(NULL) * 1e-9 : now_sec();
        if ((b ? ait_session_run_bound(s, b) : ait_session_run(s, in, n_in, out, n_out)) !=
            AIT_OK) {
            err->code = AIT_E_INTERNAL;
            snprintf(err->msg, sizeof err->msg, "%s", ait_session_error(s));
            return err->code;
        }
        lat[r] = (a->cpu_clock ? (double)profile_thread_cpu_ns(NULL) * 1e-9 : now_sec()) - t0;
        flt[r > 0] += minor_faults() - f0;
    }
    for (int j = 0; b && j < n_out; j++) out[j] = ait_binding_output(b, j);
    return AIT_OK;
}

/* A map as {k: v, ...}, its first few entries. */
static void print_map(const ait_tensor *t)
{
    const ait_tensor *k = ait_map_keys(t), *v = ait_map_values(t);
    int64_t n = ait_tensor_numel(k), shown = n < 6 ? n : 6;
    printf("{");
    for (int64_t i = 0; i < shown; i++) {
        if (k->dtype == AIT_STRING) printf("%s'%.24s': ", i ? ", " : "", tensor_str(k, i));
        else printf("%s%lld: ", i ? ", " : "", (long long)elem_get_i64(k->data, k->dtype, i));
        if (v->dtype == AIT_STRING) printf("'%.24s'", tensor_str(v, i));
        else printf("%.6g", elem_get_f64(v->data, v->dtype, i));
    }
    printf("%s}", shown < n ? ", ..." : "");
}

/* A map, or a sequence of maps (ZipMap's output), with its first map. */
static bool print_maps(const char *name, const ait_tensor *t)
{
    const ait_tensor *first = ait_tensor_is_map(t) ? t : ait_sequence_item(t, 0);
    if (!ait_tensor_is_map(first)) return false;
    const ait_tensor *k = ait_map_keys(first);
    char type[64];
    snprintf(type, sizeof type, "map(%s,%s)", ait_dtype_name(k->dtype),
             ait_dtype_name(first->dtype));
    if (t == first) printf("output %-24s %-20s %lld entries ", name, type,
                           (long long)ait_tensor_numel(k));
    else printf("output %-24s seq(%s) of %d, first ", name, type, ait_sequence_length(t));
    print_map(first);
    printf("\n");
    return true;
}

static void print_outputs(const ait_model *m, ait_tensor *const *out, int n_out)
{
    for (int j = 0; j < n_out; j++) {
        ait_value_info vi;
        ait_model_output(m, j, &vi);
        double mn, mx, mean;
        char sh[128];
        if (print_maps(vi.name, out[j])) continue;
        if (out[j]->dtype == AIT_STRING) { /* no min/max/mean: the first element */
            printf("output %-24s %-8s %-20s first '%.40s'\n", vi.name, "string",
                   shape_str(out[j]->dims, out[j]->rank, sh, sizeof sh),
                   ait_tensor_numel(out[j]) ? tensor_str(out[j], 0) : "");
            continue;
        }
        stats(out[j], &mn, &mx, &mean);
        printf("output %-24s %-8s %-20s min %-12.6g max %-12.6g mean %.6g\n", vi.name,
               ait_dtype_name(out[j]->dtype), shape_str(out[j]->dims, out[j]->rank, sh, sizeof sh),
               mn, mx, mean);
    }
}

/* The first run's latency and the median of the rest (lat[1..repeat] get
 * sorted), with the threads the run really used: the reference ops are
 * single-threaded, so an untuned run says so rather than let N threads
 * look like they were used. */
static void print_latency(const run_args *a, const ait_model *m, ait_session *s, double *lat,
                          const long *flt, size_t reserved)
{
    bool tuned = ait_model_is_tuned(m) || !strncmp(ait_session_note(s), "JIT: tuned", 10);
    if (!tuned && a->threads > 1)
        printf("note   untuned: the reference ops run on one thread, so --threads %d does not "
               "change this run (tune the model to use threads)\n", a->threads);
    int repeat = a->repeat, used = tuned ? a->threads : 1;
    if (repeat) qsort(lat + 1, (size_t)repeat, sizeof *lat, cli_cmp_double);
    const char *clock = a->cpu_clock ? ", the calling thread's CPU time" : "";
    printf("latency first run %.3f ms%s", lat[0] * 1e3,
           ait_session_note(s)[0] ? " (including JIT tuning)" : "");
    if (repeat)
        printf(", median of %d runs %.3f ms (min %.3f, max %.3f), %d thread%s%s\n", repeat,
               lat[1 + repeat / 2] * 1e3, lat[1] * 1e3, lat[repeat] * 1e3, used,
               used > 1 ? "s" : "", clock);
    else
        printf("%s\n", clock);
    printf("faults first run %ld minor page faults, %ld in the %d runs after (the calling "
           "thread's)\n", flt[0], flt[1], repeat);
    size_t arena, weights;
    ait_session_memory(s, &arena, &weights);
    printf("memory intermediates %.2f MiB at peak (the executor's arena%s), weights %.2f MiB "
           "(%zu bytes)\n", (double)arena / (1 << 20), tuned ? " and native modules' values; other "
           "backends keep their own" : ", placed by liveness", (double)weights / (1 << 20), weights);
    if (reserved)
        printf("memory outputs %.2f MiB reserved at load for the inputs' bucket (the binding's)\n",
               (double)reserved / (1 << 20));
}

/* Each output to DIR/NAME.npy and all of them to DIR/outputs.npz. */
static ait_status write_outputs(const char *outdir, const ait_model *m, ait_tensor *const *out,
                                int n_out, ait_error *err)
{
    for (int j = 0; j < n_out; j++) {
        ait_value_info vi;
        ait_model_output(m, j, &vi);
        const ait_tensor *first = ait_tensor_is_sequence(out[j]) ? ait_sequence_item(out[j], 0)
                                                                : out[j];
        if (ait_tensor_is_map(first))
            return err_set(err, AIT_E_UNSUPPORTED, "output '%s' is a %s: --output-dir writes "
                           "tensors only (ait run prints maps)", vi.name,
                           first == out[j] ? "map" : "sequence of maps");
    }
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST)
        return err_set(err, AIT_E_IO, "%s: cannot create folder: %s", outdir, strerror(errno));
    const char *names[512];
    char fn[4096], nm[512][256];
    for (int j = 0; j < n_out; j++) {
        ait_value_info vi;
        ait_model_output(m, j, &vi);
        safe_name(vi.name, nm[j], sizeof nm[j]);
        names[j] = nm[j];
        snprintf(fn, sizeof fn, "%s/%s.npy", outdir, nm[j]);
        TRY(ait_tensor_save_npy(fn, out[j], err));
    }
    snprintf(fn, sizeof fn, "%s/outputs.npz", outdir);
    TRY(npz_save(fn, n_out, names, (const tensor *const *)out, err));
    printf("wrote %d outputs to %s\n", n_out, outdir);
    return AIT_OK;
}

int cmd_run(int argc, char **argv)
{
    run_args a;
    int code = run_parse(argc, argv, &a);
    if (code >= 0) return code;
    ait_error err = {0};
    ait_model *m = NULL;
    ait_session *s = NULL;
    ait_binding *b = NULL;
    size_t reserved = 0;
    ait_tensor *in[512] = {0}, *out[512] = {0};
    bool generated[512] = {0};
    double *lat = NULL;
    long flt[2] = {0, 0};
    int n_in = 0, n_out = 0;
    ait_status st = run_open(&a, &m, &s, &err);
    if (st == AIT_OK) {
        n_in = ait_model_input_count(m);
        n_out = ait_model_output_count(m);
        st = inputs_make(m, &a.io, in, generated, &err);
    }
    if (st == AIT_OK && !a.session_run) st = bind_open(s, in, n_in, &b, &reserved, &err);
    if (st == AIT_OK && !(lat = calloc((size_t)a.repeat + 1, sizeof *lat)))
        st = err_set(&err, AIT_E_NOMEM, "out of memory");
    if (st == AIT_OK && (st = run_timed(s, b, in, n_in, out, n_out, &a, lat, flt, &err)) != AIT_OK)
        inputs_explain(m, &a.io, generated, &err);
    if (st == AIT_OK) {
        print_outputs(m, out, n_out);
        if (ait_session_note(s)[0]) printf("%s\n", ait_session_note(s));
        if (ait_model_is_tuned(m))
            printf("tuned  the artifact's plan (see `ait show %s`)\n", a.path);
        if (a.save && (st = ait_session_save(s, a.save, &err)) == AIT_OK)
            printf("saved  %s\n", a.save);
    }
    if (st == AIT_OK) print_latency(&a, m, s, lat, flt, reserved);
    if (st == AIT_OK && a.outdir) st = write_outputs(a.outdir, m, out, n_out, &err);
    if (st != AIT_OK) fprintf(stderr, "ait run: %s\n", err.msg[0] ? err.msg : "failed");
    free(lat);
    for (int i = 0; i < n_in; i++) ait_tensor_free(in[i]);
    for (int j = 0; !b && j < n_out; j++) ait_tensor_free(out[j]);
    ait_binding_free(b);
    ait_session_free(s);
    ait_model_free(m);
    return st == AIT_OK ? 0 : 1;
}

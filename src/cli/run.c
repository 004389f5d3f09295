/* ait run: run a model once or more, print its outputs and latency. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "io/artifact.h"
#include "io/npy.h"

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
    "  --input FILE.npz       values of the inputs named in the archive\n"
    "  --batch N              size of batch dims (named like 'batch', or an unnamed\n"
    "                         first dim) of generated inputs (default 1)\n"
    "  --dim NAME=V           size of symbolic dim NAME of generated inputs\n"
    "  --threads N            threads (default 1). An untuned model runs on the\n"
    "                         reference ops, which use one thread whatever N is; a\n"
    "                         .ait's modules run at the counts they were tuned at;\n"
    "                         --jit tunes candidates of 1..N threads\n"
    "  --repeat N             timed runs after the first (default 5)\n"
    "  --seed N               seed of generated inputs (default 1)\n"
    "  --output-dir DIR       write each output to DIR/NAME.npy, and all of them\n"
    "                         to DIR/outputs.npz\n"
    "  --fallback-untuned     a .ait that cannot run here (CPU features, a damaged\n"
    "                         plan) runs its embedded model untuned, with a warning\n"
    "  --jit                  tune on the first run (its inputs are the sample;\n"
    "                         also AIT_JIT=1), then run tuned\n"
    "  --save NAME.ait        with --jit: save what it tuned as an artifact\n"
    "\n"
    "Inputs not given are generated from the declared dims: floats uniform in\n"
    "[-1, 1), inputs named like '*mask*' as ones, integer inputs that index a\n"
    "table (token ids) below the table's size.\n"
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Output names become file names: keep them to one path component. */
static void safe_name(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (; in[k] && k + 1 < n; k++) out[k] = (in[k] == '/' || in[k] == '\\' || in[k] == ':') ? '_' : in[k];
    out[k] = 0;
    if (!k || !strcmp(out, ".") || !strcmp(out, "..")) snprintf(out, n, "output");
}

static bool parse_int(const char *s, long long lo, long long hi, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(s, &end, 10);
    return !errno && end != s && !*end && *v >= lo && *v <= hi;
}

int cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"input", required_argument, 0, 'i'},  {"batch", required_argument, 0, 'b'},
        {"dim", required_argument, 0, 'd'},    {"threads", required_argument, 0, 't'},
        {"repeat", required_argument, 0, 'r'}, {"seed", required_argument, 0, 's'},
        {"output-dir", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"fallback-untuned", no_argument, 0, 'F'}, {"jit", no_argument, 0, 'J'},
        {"save", required_argument, 0, 'S'}, {0, 0, 0, 0},
    };
    input_opts io = {.batch = 1, .seed = 1};
    int threads = 1, repeat = 5, fallback = 0, jit = 0;
    const char *outdir = NULL, *save = NULL;
    long long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (io.n_files == 64) goto bad;
            io.file_specs[io.n_files++] = optarg;
            break;
        case 'b':
            if (!parse_int(optarg, 1, 1 << 20, &v)) goto bad;
            io.batch = (int)v;
            break;
        case 'd': {
            char *eq = strchr(optarg, '=');
            if (!eq || io.n_dims == 32 || !parse_int(eq + 1, 0, (long long)1 << 40, &v)) goto bad;
            *eq = 0;
            io.dim_names[io.n_dims] = optarg;
            io.dim_vals[io.n_dims++] = v;
            break;
        }
        case 't':
            if (!parse_int(optarg, 1, 1024, &v)) goto bad;
            threads = (int)v;
            break;
        case 'r':
            if (!parse_int(optarg, 0, 1000000, &v)) goto bad;
            repeat = (int)v;
            break;
        case 's':
            if (!parse_int(optarg, 0, INT64_MAX, &v)) goto bad;
            io.seed = (uint64_t)v;
            break;
        case 'o': outdir = optarg; break;
        case 'F': fallback = 1; break;
        case 'J': jit = 1; break;
        case 'S': save = optarg; break;
        case 'h': fputs(run_help, stdout); return 0;
        default: goto usage;
        }
    }
    if (optind != argc - 1) goto usage;
    const char *path = argv[optind];
    ait_error err = {0};
    ait_model *m = NULL;
    ait_session *s = NULL;
    ait_tensor *in[512] = {0}, *out[512] = {0};
    int rc = 1, n_in = 0, n_out = 0;
    ait_artifact_options ao = {.size = sizeof ao, .fallback_untuned = fallback};
    if ((artifact_file_is(path) ? ait_artifact_load(path, &ao, &m, &err)
                                : ait_model_load(path, &m, &err)) != AIT_OK)
        goto fail;
    if (ait_model_note(m)[0])
        fprintf(stderr, "ait run: warning: running untuned: %s\n", ait_model_note(m));
    n_in = ait_model_input_count(m);
    n_out = ait_model_output_count(m);
    if (n_in > 512 || n_out > 512) {
        err_set(&err, AIT_E_UNSUPPORTED, "%s: more than 512 inputs or outputs", path);
        goto fail;
    }
    printf("model  %s: %d nodes, opset %d, %d inputs, %d outputs\n", path,
           ait_model_node_count(m), ait_model_opset(m), n_in, n_out);
    if (inputs_make(m, &io, in, &err) != AIT_OK) goto fail;
    if (save && !jit) {
        err_set(&err, AIT_E_INVALID_ARG, "--save needs --jit (`ait tune -o` saves a tuning)");
        goto fail;
    }
    /* AIT_JIT=1 and the cache folder from the environment, as documented. */
    logger lg = cli_logger();
    ait_session_options so = {.size = sizeof so, .threads = threads, .jit = jit, .log = lg.fn,
                              .log_user = lg.user};
    if (ait_options_from_env(&so, NULL, &err) != AIT_OK ||
        ait_session_create(m, &so, &s, &err) != AIT_OK)
        goto fail;
    double *lat = calloc((size_t)repeat + 1, sizeof *lat);
    if (!lat) {
        err_set(&err, AIT_E_NOMEM, "out of memory");
        goto fail;
    }
    for (int r = 0; r <= repeat; r++) {
        for (int j = 0; j < n_out; j++) ait_tensor_free(out[j]), out[j] = NULL;
        double t0 = now_sec();
        if (ait_session_run(s, in, n_in, out, n_out) != AIT_OK) {
            snprintf(err.msg, sizeof err.msg, "%s", ait_session_error(s));
            free(lat);
            goto fail;
        }
        lat[r] = now_sec() - t0;
    }
    for (int j = 0; j < n_out; j++) {
        ait_value_info vi;
        ait_model_output(m, j, &vi);
        double mn, mx, mean;
        char sh[128];
        stats(out[j], &mn, &mx, &mean);
        printf("output %-24s %-8s %-20s min %-12.6g max %-12.6g mean %.6g\n", vi.name,
               ait_dtype_name(out[j]->dtype), shape_str(out[j]->dims, out[j]->rank, sh, sizeof sh),
               mn, mx, mean);
    }
    if (ait_session_note(s)[0]) printf("%s\n", ait_session_note(s));
    if (ait_model_is_tuned(m)) printf("tuned  the artifact's plan (see `ait show %s`)\n", path);
    if (save) {
        if (ait_session_save(s, save, &err) != AIT_OK) {
            free(lat);
            goto fail;
        }
        printf("saved  %s\n", save);
    }
    /* The reference ops are single-threaded: say so rather than let N
     * threads look like they were used. */
    bool tuned = ait_model_is_tuned(m) || !strncmp(ait_session_note(s), "JIT: tuned", 10);
    if (!tuned && threads > 1)
        printf("note   untuned: the reference ops run on one thread, so --threads %d does not "
               "change this run (tune the model to use threads)\n", threads);
    double first = lat[0];
    if (repeat) qsort(lat + 1, (size_t)repeat, sizeof *lat, cmp_double);
    printf("latency first run %.3f ms%s", first * 1e3,
           ait_session_note(s)[0] ? " (including JIT tuning)" : "");
    if (repeat)
        printf(", median of %d runs %.3f ms (min %.3f, max %.3f), %d thread%s\n", repeat,
               lat[1 + repeat / 2] * 1e3, lat[1] * 1e3, lat[repeat] * 1e3, tuned ? threads : 1,
               tuned && threads > 1 ? "s" : "");
    else
        printf("\n");
    free(lat);
    if (outdir) {
        if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
            err_set(&err, AIT_E_IO, "%s: cannot create folder: %s", outdir, strerror(errno));
            goto fail;
        }
        const char *names[512];
        char fn[4096], nm[512][256];
        for (int j = 0; j < n_out; j++) {
            ait_value_info vi;
            ait_model_output(m, j, &vi);
            safe_name(vi.name, nm[j], sizeof nm[j]);
            names[j] = nm[j];
            snprintf(fn, sizeof fn, "%s/%s.npy", outdir, nm[j]);
            if (ait_tensor_save_npy(fn, out[j], &err) != AIT_OK) goto fail;
        }
        snprintf(fn, sizeof fn, "%s/outputs.npz", outdir);
        if (npz_save(fn, n_out, names, (const tensor *const *)out, &err) != AIT_OK) goto fail;
        printf("wrote %d outputs to %s\n", n_out, outdir);
    }
    rc = 0;
fail:
    if (rc) fprintf(stderr, "ait run: %s\n", err.msg[0] ? err.msg : "failed");
    for (int i = 0; i < n_in; i++) ait_tensor_free(in[i]);
    for (int j = 0; j < n_out; j++) ait_tensor_free(out[j]);
    ait_session_free(s);
    ait_model_free(m);
    return rc;
bad:
    fprintf(stderr, "ait run: bad value for --%s: '%s'\n", longopts[c == 'i' ? 0 : c == 'b' ? 1 : c == 'd' ? 2 : c == 't' ? 3 : c == 'r' ? 4 : 5].name, optarg);
usage:
    fputs(run_help, stderr);
    return 2;
}

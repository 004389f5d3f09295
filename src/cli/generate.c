/* ait generate: greedy decoding on a decoder with a key/value cache. The
 * cache and the sequence axis are found from the shapes (an inspection at
 * generated shapes, tune/phases.h); the prompt runs at once (prefill), then
 * one token at a time (decode), each run writing its present outputs into
 * caller-owned buffers that the next run reads as its past (ait_binding). Prints the tokens, the time
 * to the first token and each phase's tokens per second. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/artifact.h"

static const char *gen_help =
    "usage: ait generate MODEL.onnx|NAME.ait --prompt-ids 1,2,3 [options]\n"
    "\n"
    "Greedy generation on a decoder that takes its key/value cache as inputs\n"
    "and returns it grown as outputs (past_key_0 -> present_key_0, as GPT-2\n"
    "exports with past key/values do). ait finds the cache pairs and the\n"
    "sequence axis from the shapes (as `ait inspect` prints them), runs the\n"
    "prompt at once (prefill: its time is the time to the first token), then\n"
    "one token at a time (decode), feeding each run's present outputs back as\n"
    "the next run's past inputs, and picks the token of highest logit (the\n"
    "last axis of the first float output that is not a cache).\n"
    "\n"
    "options:\n"
    "  --prompt-ids LIST   the prompt's token ids, comma-separated (required)\n"
    "  --max-new N         tokens to generate (default 16)\n"
    "  --eos ID            stop after generating this id\n"
    "  --threads N         threads of the session (default 1)\n"
    "\n"
    "Every input must be the token ids or a cache input: a model that also\n"
    "takes an attention mask or position ids is refused (not supported yet).\n"
    "\n"
    "examples:\n"
    "  ait generate models/gpt2.onnx --prompt-ids 1,2,3 --max-new 64\n"
    "  ait tune models/gpt2.onnx -o gpt2.ait && ait generate gpt2.ait --prompt-ids 5,7\n";

typedef struct gen_args {
    const char *path;
    int64_t prompt[4096];
    int n_prompt, max_new, threads;
    long long eos;
    bool has_eos;
} gen_args;

static bool parse_ids(const char *arg, gen_args *a)
{
    char buf[65536], *save = NULL;
    if (strlen(arg) >= sizeof buf) return false;
    strcpy(buf, arg);
    a->n_prompt = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long long v;
        if (a->n_prompt >= 4096 || !cli_parse_int(tok, 0, INT32_MAX, &v)) return false;
        a->prompt[a->n_prompt++] = v;
    }
    return a->n_prompt > 0;
}

static int gen_parse(int argc, char **argv, gen_args *a)
{
    static const struct option longopts[] = {
        {"prompt-ids", required_argument, 0, 'p'}, {"max-new", required_argument, 0, 'n'},
        {"eos", required_argument, 0, 'e'},        {"threads", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},             {0, 0, 0, 0},
    };
    *a = (gen_args){.max_new = 16, .threads = 1};
    long long v;
    int c, li = 0;
    optind = 1, opterr = 0; /* cli_bad_option says what was wrong, on one line */
    while ((c = getopt_long(argc, argv, ":h", longopts, &li)) != -1) {
        bool ok = true;
        switch (c) {
        case 'p': ok = parse_ids(optarg, a); break;
        case 'n':
            if ((ok = cli_parse_int(optarg, 1, 1 << 20, &v))) a->max_new = (int)v;
            break;
        case 'e':
            if ((ok = cli_parse_int(optarg, 0, INT32_MAX, &v))) a->eos = v, a->has_eos = true;
            break;
        case 't':
            if ((ok = cli_parse_int(optarg, 1, 1024, &v))) a->threads = (int)v;
            break;
        case 'h': fputs(gen_help, stdout); return 0;
        default: return cli_bad_option("generate", c, argv);
        }
        if (!ok) return cli_usage("generate", "bad value for --%s: '%s'", longopts[li].name, optarg);
        li = 0;
    }
    if ((c = cli_one_model("generate", argc, argv, optind)) >= 0) return c;
    if (!a->n_prompt) return cli_usage("generate", "--prompt-ids is required");
    a->path = argv[optind];
    return -1;
}

#define GEN_MAX_IO 512

/* What each model input and output is: the ids, cache pair k's past or
 * present (k >= 0), or the logits. */
typedef struct gen_roles {
    int n_in, n_out;
    int ids, logits;            /* input / output index */
    int seq_axis;
    int past[GEN_MAX_IO];       /* per input: cache pair, or -1 */
    int present[GEN_MAX_IO];    /* per output: the input it feeds, or -1 */
    int64_t dims[GEN_MAX_IO][AIT_MAX_RANK]; /* inputs' shapes at generation */
    int rank[GEN_MAX_IO], axis[GEN_MAX_IO]; /* and the cache axis */
    ait_dtype dtype[GEN_MAX_IO];
} gen_roles;

static int find_name(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

/* The roles, from an inspection of the model at generated shapes. */
static ait_status gen_roles_find(const ait_model *m, const char *path, gen_roles *r, ait_error *e)
{
    r->n_in = ait_model_input_count(m);
    r->n_out = ait_model_output_count(m);
    if (r->n_in > GEN_MAX_IO || r->n_out > GEN_MAX_IO)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: more than %d inputs or outputs", path, GEN_MAX_IO);
    const char *in_names[GEN_MAX_IO], *out_names[GEN_MAX_IO];
    ait_dtype out_types[GEN_MAX_IO];
    for (int i = 0; i < r->n_in; i++) {
        ait_value_info vi;
        TRY(ait_model_input(m, i, &vi));
        in_names[i] = vi.name;
        r->past[i] = -1;
    }
    for (int j = 0; j < r->n_out; j++) {
        ait_value_info vi;
        TRY(ait_model_output(m, j, &vi));
        out_names[j] = vi.name;
        out_types[j] = vi.dtype;
        r->present[j] = -1;
    }
    ait_inspect_options io = {.size = sizeof io, .runs = 1};
    ait_inspection *insp;
    TRY(ait_inspect(m, &io, &insp, e));
    int seq_port, n_kv = ait_inspection_decoder(insp, &seq_port, &r->seq_axis);
    ait_status s = AIT_OK;
    if (!n_kv)
        s = err_set(e, AIT_E_UNSUPPORTED,
                    "%s: no key/value cache found: no input comes back as an output longer along "
                    "one axis by the sequence's length (see ait inspect MODEL)", path);
    ait_port_info pi;
    for (int k = -1; s == AIT_OK && k < n_kv; k++) {
        int past = seq_port, present = -1, axis = -1;
        if (k >= 0 && (s = ait_inspection_kv(insp, k, &past, &present, &axis)) != AIT_OK) break;
        if ((s = ait_inspection_port(insp, 0, past, &pi)) != AIT_OK) break;
        int i = find_name(in_names, r->n_in, pi.name);
        if (i < 0) {
            s = err_set(e, AIT_E_INTERNAL, "%s: input '%s' not found", path, pi.name);
            break;
        }
        r->rank[i] = pi.rank;
        r->dtype[i] = pi.dtype;
        for (int d = 0; d < pi.rank; d++) r->dims[i][d] = pi.min[d];
        if (k < 0) {
            r->ids = i;
            continue;
        }
        r->past[i] = k;
        r->axis[i] = axis;
        if ((s = ait_inspection_port(insp, 0, present, &pi)) != AIT_OK) break;
        int j = find_name(out_names, r->n_out, pi.name);
        if (j < 0) s = err_set(e, AIT_E_INTERNAL, "%s: output '%s' not found", path, pi.name);
        else r->present[j] = i;
    }
    ait_inspection_free(insp);
    TRY(s);
    if (r->dtype[r->ids] != AIT_I64 && r->dtype[r->ids] != AIT_I32)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: the sequence input '%s' is %s, not token ids "
                       "(int64 or int32)", path, in_names[r->ids], ait_dtype_name(r->dtype[r->ids]));
    for (int i = 0; i < r->n_in; i++)
        if (i != r->ids && r->past[i] < 0)
            return err_set(e, AIT_E_UNSUPPORTED, "%s: input '%s' is neither the token ids ('%s') nor "
                           "a cache input: ait generate cannot fill it yet", path, in_names[i],
                           in_names[r->ids]);
    r->logits = -1;
    for (int j = 0; j < r->n_out && r->logits < 0; j++)
        if (r->present[j] < 0 && out_types[j] == AIT_F32) r->logits = j;
    if (r->logits < 0)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: no float32 output besides the cache to read "
                       "logits from", path);
    return AIT_OK;
}

/* The id of the highest of the last row of logits (the last position). */
static int64_t argmax_last(ait_tensor *t)
{
    int rank = ait_tensor_rank(t);
    int64_t v = rank ? ait_tensor_dims(t)[rank - 1] : 1, n = ait_tensor_numel(t);
    if (v <= 0 || n < v) return -1;
    const float *p = (const float *)ait_tensor_data(t) + (n - v);
    int64_t best = 0;
    for (int64_t i = 1; i < v; i++)
        if (p[i] > p[best]) best = i;
    return best;
}

/* A tensor of r's input i at its generation shape with `len` along `axis`. */
static ait_tensor *input_tensor(const gen_roles *r, int i, int axis, int64_t len)
{
    int64_t dims[AIT_MAX_RANK];
    memcpy(dims, r->dims[i], sizeof dims);
    dims[axis] = len;
    return ait_tensor_create(r->dtype[i], r->rank[i], dims);
}

static void ids_set(const gen_roles *r, ait_tensor *t, const int64_t *ids, int n)
{
    for (int i = 0; i < n; i++) {
        if (r->dtype[r->ids] == AIT_I64) ((int64_t *)ait_tensor_data(t))[i] = ids[i];
        else ((int32_t *)ait_tensor_data(t))[i] = (int32_t)ids[i];
    }
}

/* Shape of t with `len` along `axis`. */
static void set_len(ait_tensor *t, int axis, int64_t len)
{
    int64_t dims[AIT_MAX_RANK];
    memcpy(dims, ait_tensor_dims(t), sizeof(int64_t) * (size_t)ait_tensor_rank(t));
    dims[axis] = len;
    (void)ait_tensor_reshape(t, ait_tensor_rank(t), dims); /* within what it was made for */
}

/* The loop: prefill, then decode; the tokens into out, times per run. Every
 * buffer is made before the first run and bound (ait_binding): per cache
 * pair two of room for the whole generation, present written into one
 * while past is read from the other, swapped each step; the logits in one
 * of room for the prompt's (when the vocabulary's size is declared). */
static ait_status generate(ait_session *s, const ait_model *m, const gen_args *a,
                           const gen_roles *r, int64_t *out, int *n_out, double *sec, ait_error *e)
{
    ait_tensor *buf[GEN_MAX_IO][2] = {{0}}, *ids = NULL, *logits = NULL;
    ait_binding *b = NULL;
    int64_t total = (int64_t)a->n_prompt + a->max_new;
    ait_status st = ait_binding_create(s, &b, e);
    bool nomem = !(ids = input_tensor(r, r->ids, r->seq_axis, a->n_prompt));
    for (int i = 0; i < r->n_in; i++)
        for (int h = 0; r->past[i] >= 0 && h < 2; h++)
            nomem |= !(buf[i][h] = input_tensor(r, i, r->axis[i], total));
    ait_value_info vi = {0};
    if (st == AIT_OK) st = ait_model_output(m, r->logits, &vi);
    int64_t room = vi.rank > 0 ? vi.dims[vi.rank - 1] : -1; /* the vocabulary */
    for (int d = 0; d < r->rank[r->ids]; d++) room *= r->dims[r->ids][d];
    if (st == AIT_OK && room > 0) {
        room *= a->n_prompt;
        nomem |= !(logits = ait_tensor_create(AIT_F32, 1, &room));
        if (logits) st = ait_binding_set_output(b, r->logits, logits, e);
    }
    if (st == AIT_OK && nomem) st = err_set(e, AIT_E_NOMEM, "out of memory");
    if (st == AIT_OK) ids_set(r, ids, a->prompt, a->n_prompt);
    for (int i = 0; st == AIT_OK && i < r->n_in; i++)
        if (r->past[i] >= 0) set_len(buf[i][0], r->axis[i], 0); /* an empty cache */
    *n_out = 0;
    for (int step = 0; st == AIT_OK && step < a->max_new; step++) {
        int cur = step & 1;
        st = ait_binding_set_input(b, r->ids, ids, e);
        for (int i = 0; st == AIT_OK && i < r->n_in; i++)
            if (r->past[i] >= 0) st = ait_binding_set_input(b, i, buf[i][cur], e);
        for (int j = 0; st == AIT_OK && j < r->n_out; j++)
            if (r->present[j] >= 0) st = ait_binding_set_output(b, j, buf[r->present[j]][!cur], e);
        if (st != AIT_OK) break;
        double t0 = now_sec();
        if (ait_session_run_bound(s, b) != AIT_OK) {
            st = err_set(e, AIT_E_INTERNAL, "%s run %d: %s", step ? "decode" : "prefill", step,
                         ait_session_error(s));
            break;
        }
        sec[step] = now_sec() - t0;
        int64_t tok = argmax_last(ait_binding_output(b, r->logits));
        if (tok < 0) {
            st = err_set(e, AIT_E_INTERNAL, "the logits output is empty");
            break;
        }
        out[(*n_out)++] = tok;
        set_len(ids, r->seq_axis, 1);
        ids_set(r, ids, &tok, 1);
        if (a->has_eos && tok == a->eos) break;
    }
    for (int i = 0; i < r->n_in; i++) ait_tensor_free(buf[i][0]), ait_tensor_free(buf[i][1]);
    ait_tensor_free(ids);
    ait_tensor_free(logits);
    ait_binding_free(b);
    return st;
}

int cmd_generate(int argc, char **argv)
{
    gen_args a;
    int rc = gen_parse(argc, argv, &a);
    if (rc >= 0) return rc;
    ait_error err = {0};
    ait_model *m = NULL;
    ait_session *s = NULL;
    gen_roles *r = calloc(1, sizeof *r);
    int64_t *toks = malloc(sizeof *toks * (size_t)a.max_new);
    double *sec = malloc(sizeof *sec * (size_t)a.max_new);
    int n = 0;
    ait_status st = r && toks && sec ? AIT_OK : err_set(&err, AIT_E_NOMEM, "out of memory");
    if (st == AIT_OK) {
        ait_artifact_options ao = {.size = sizeof ao};
        st = artifact_file_is(a.path) ? ait_artifact_load(a.path, &ao, &m, &err)
                                      : ait_model_load(a.path, &m, &err);
    }
    if (st == AIT_OK && ait_model_note(m)[0])
        fprintf(stderr, "ait generate: warning: running untuned: %s\n", ait_model_note(m));
    if (st == AIT_OK) st = gen_roles_find(m, a.path, r, &err);
    if (st == AIT_OK) {
        logger lg = cli_logger();
        ait_session_options so = {.size = sizeof so, .threads = a.threads, .log = lg.fn,
                                  .log_user = lg.user};
        st = ait_options_from_env(&so, NULL, &err);
        if (st == AIT_OK) st = ait_session_create(m, &so, &s, &err);
    }
    if (st == AIT_OK) st = generate(s, m, &a, r, toks, &n, sec, &err);
    if (st == AIT_OK) {
        printf("tokens:");
        for (int i = 0; i < n; i++) printf(" %lld", (long long)toks[i]);
        printf("\nprefill: %d tokens in %.3f ms (time to first token), %.1f tokens/s\n", a.n_prompt,
               sec[0] * 1e3, a.n_prompt / sec[0]);
        if (n > 1) {
            double sum = 0, first = sec[1];
            for (int i = 1; i < n; i++) sum += sec[i];
            qsort(sec + 1, (size_t)(n - 1), sizeof *sec, cli_cmp_double);
            printf("decode:  %d tokens in %.3f ms, %.1f tokens/s (median %.3f ms per token, the "
                   "first %.3f ms)\n", n - 1, sum * 1e3, (n - 1) / sum, sec[1 + (n - 2) / 2] * 1e3,
                   first * 1e3);
        }
    } else {
        fprintf(stderr, "ait generate: %s\n", err.msg);
    }
    ait_session_free(s);
    ait_model_free(m);
    free(r);
    free(toks);
    free(sec);
    return st == AIT_OK ? 0 : 1;
}

/* ait generate: greedy decoding on a decoder with a key/value cache. The
 * cache and the sequence axis are found from the shapes (an inspection at
 * generated shapes, tune/phases.h, or the one an artifact's manifest
 * records from its tune); the prompt runs at once (prefill), then
 * one token at a time (decode), the key/value cache in one caller-owned
 * buffer per pair of room for the whole generation, each run appending its
 * new positions there (ait_binding_set_cache; --no-append: two buffers per
 * pair, present written into one while past is read from the other, the
 * past copied each step). Prints the tokens, the time to the first token
 * and each phase's tokens per second. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/artifact.h"
#include "io/json_read.h"

static const char *gen_help =
    "usage: ait generate MODEL.onnx|NAME.ait --prompt-ids 1,2,3 [options]\n"
    "\n"
    "Greedy generation on a decoder that takes its key/value cache as inputs\n"
    "and returns it grown as outputs (past_key_0 -> present_key_0, as GPT-2\n"
    "exports with past key/values do). ait finds the cache pairs and the\n"
    "sequence axis from the shapes (as `ait inspect` prints them; an artifact\n"
    "records them at tune time, so a quantised one that left its float weights\n"
    "out generates too), runs the\n"
    "prompt at once (prefill: its time is the time to the first token), then\n"
    "one token at a time (decode), each run appending its keys and values in\n"
    "place to one buffer per cache pair of room for the whole generation, and\n"
    "picks the token of highest logit (the last axis of the first float\n"
    "output that is not a cache).\n"
    "\n"
    "options:\n"
    "  --prompt-ids LIST   the prompt's token ids, comma-separated (required);\n"
    "                      given again, the next row of a batch (every row of\n"
    "                      one length: the model takes no attention mask)\n"
    "  --batch N           rows of the batch: the one prompt given N times\n"
    "                      (default: one row per --prompt-ids)\n"
    "  --max-new N         tokens to generate (default 16)\n"
    "  --eos ID            stop after generating this id\n"
    "  --threads N         threads of the session (default 1)\n"
    "  --no-append         two buffers per cache pair, swapped each step: each\n"
    "                      run writes the whole present (past copied); to\n"
    "                      compare with the in-place append\n"
    "\n"
    "Every input must be the token ids or a cache input: a model that also\n"
    "takes an attention mask or position ids is refused (not supported yet).\n"
    "\n"
    "examples:\n"
    "  ait generate models/gpt2.onnx --prompt-ids 1,2,3 --max-new 64\n"
    "  ait generate models/gpt2.onnx --prompt-ids 1,2,3 --prompt-ids 4,5,6 --max-new 8\n"
    "  ait tune models/gpt2.onnx -o gpt2.ait && ait generate gpt2.ait --prompt-ids 5,7\n";

#define GEN_MAX_ROWS 64
#define GEN_MAX_PROMPT 4096

typedef struct gen_args {
    const char *path;
    int64_t prompt[GEN_MAX_ROWS][GEN_MAX_PROMPT]; /* per row */
    int rows, n_prompt, max_new, threads, batch;
    long long eos;
    bool has_eos;
    bool no_append; /* two buffers per cache pair, swapped (the past copied each step) */
} gen_args;

/* One more row's prompt; false when it is not ids, too long, or of
 * another length than the rows before. */
static bool parse_ids(const char *arg, gen_args *a)
{
    char buf[65536], *save = NULL;
    if (strlen(arg) >= sizeof buf || a->rows >= GEN_MAX_ROWS) return false;
    strcpy(buf, arg);
    int n = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long long v;
        if (n >= GEN_MAX_PROMPT || !cli_parse_int(tok, 0, INT32_MAX, &v)) return false;
        a->prompt[a->rows][n++] = v;
    }
    if (!n || (a->rows && n != a->n_prompt)) return false;
    a->n_prompt = n;
    a->rows++;
    return true;
}

static int gen_parse(int argc, char **argv, gen_args *a)
{
    static const struct option longopts[] = {
        {"prompt-ids", required_argument, 0, 'p'}, {"max-new", required_argument, 0, 'n'},
        {"eos", required_argument, 0, 'e'},        {"threads", required_argument, 0, 't'},
        {"no-append", no_argument, 0, 'a'},        {"help", no_argument, 0, 'h'},
        {"batch", required_argument, 0, 'b'},
        {0, 0, 0, 0},
    };
    memset(a, 0, sizeof *a);
    a->max_new = 16, a->threads = 1;
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
        case 'a': a->no_append = true; break;
        case 'b':
            if ((ok = cli_parse_int(optarg, 1, GEN_MAX_ROWS, &v))) a->batch = (int)v;
            break;
        case 'h': fputs(gen_help, stdout); return 0;
        default: return cli_bad_option("generate", c, argv);
        }
        if (!ok) return cli_usage("generate", "bad value for --%s: '%s'", longopts[li].name, optarg);
        li = 0;
    }
    if ((c = cli_one_model("generate", argc, argv, optind)) >= 0) return c;
    if (!a->n_prompt) return cli_usage("generate", "--prompt-ids is required");
    if (a->batch && a->rows > 1 && a->batch != a->rows)
        return cli_usage("generate", "--batch %d with %d prompts: give one prompt, or one per row",
                         a->batch, a->rows);
    for (; a->batch > a->rows; a->rows++) /* the one prompt in every row */
        memcpy(a->prompt[a->rows], a->prompt[0], sizeof a->prompt[0]);
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
    for (int i = 0; name && i < n; i++)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

/* The model's port names and types, for the finders below. */
typedef struct gen_ports {
    const char *in[GEN_MAX_IO], *out[GEN_MAX_IO];
    ait_dtype in_type[GEN_MAX_IO], out_type[GEN_MAX_IO];
} gen_ports;

/* Records input `past` as the token ids (k < 0) or as cache pair k's past,
 * fed by output `present` and growing along `axis`, at shape dims. */
static ait_status role_add(gen_roles *r, const gen_ports *np, const char *path, int k,
                           const char *past, const char *present, int axis, int rank,
                           const int64_t *dims, ait_error *e)
{
    int i = find_name(np->in, r->n_in, past);
    if (i < 0) return err_set(e, AIT_E_INTERNAL, "%s: input '%s' not found", path, past);
    if (rank < 1 || rank > AIT_MAX_RANK || axis < 0 || axis >= rank)
        return err_set(e, AIT_E_INVALID_ARG, "%s: input '%s': axis %d of rank %d", path, past, axis,
                       rank);
    r->rank[i] = rank;
    r->dtype[i] = np->in_type[i];
    for (int d = 0; d < rank; d++) r->dims[i][d] = dims[d];
    if (k < 0) {
        r->ids = i;
        r->seq_axis = axis;
        return AIT_OK;
    }
    int j = find_name(np->out, r->n_out, present);
    if (j < 0) return err_set(e, AIT_E_INTERNAL, "%s: output '%s' not found", path, present);
    r->past[i] = k;
    r->axis[i] = axis;
    r->present[j] = i;
    return AIT_OK;
}

/* The roles from an inspection of the model at generated shapes (it runs
 * the model: a lean artifact's cannot, see roles_from_manifest). */
static ait_status roles_inspected(const ait_model *m, const char *path, const gen_ports *np,
                                  gen_roles *r, ait_error *e)
{
    ait_inspect_options io = {.size = sizeof io, .runs = 1};
    ait_inspection *insp;
    TRY(ait_inspect(m, &io, &insp, e));
    int seq_port, seq_axis, n_kv = ait_inspection_decoder(insp, &seq_port, &seq_axis);
    ait_status s = AIT_OK;
    if (!n_kv)
        s = err_set(e, AIT_E_UNSUPPORTED,
                    "%s: no key/value cache found: no input comes back as an output longer along "
                    "one axis by the sequence's length (see ait inspect MODEL)", path);
    ait_port_info pi, po;
    for (int k = -1; s == AIT_OK && k < n_kv; k++) {
        int past = seq_port, present = -1, axis = seq_axis;
        if (k >= 0 && (s = ait_inspection_kv(insp, k, &past, &present, &axis)) != AIT_OK) break;
        if ((s = ait_inspection_port(insp, 0, past, &pi)) != AIT_OK) break;
        po.name = NULL;
        if (k >= 0 && (s = ait_inspection_port(insp, 0, present, &po)) != AIT_OK) break;
        s = role_add(r, np, path, k, pi.name, po.name, axis, pi.rank, pi.min, e);
    }
    ait_inspection_free(insp);
    return s;
}

/* An input's shape at generation from an artifact's manifest: the first
 * bucket's priming shape, else the declared dims (1 where symbolic). */
static int manifest_dims(const ait_model *m, const json_val *mf, int i, int64_t *dims)
{
    const json_val *sh = json_get(json_at(json_at(json_get(mf, "priming"), 0), i), "shape");
    ait_value_info vi;
    if (ait_model_input(m, i, &vi) != AIT_OK) return 0;
    bool primed = json_len(sh) == vi.rank;
    for (int d = 0; d < vi.rank; d++) {
        long long v = vi.dims[d];
        if (primed && !json_int_of(json_at(sh, d), 0, INT32_MAX, &v)) return 0;
        dims[d] = v < 0 ? 1 : v;
    }
    return vi.rank;
}

/* The roles from the "decoder" an artifact's manifest records (its tune's
 * inspection): no run of the model, so lean artifacts generate too. *found
 * false when path is no artifact or its manifest records no decoder (an
 * older one: inspect the model instead). */
static ait_status roles_from_manifest(const ait_model *m, const char *path, const gen_ports *np,
                                      gen_roles *r, bool *found, ait_error *e)
{
    *found = false;
    if (!artifact_file_is(path)) return AIT_OK;
    artifact *a = NULL;
    artifact_expect x = {.skip_cpu_check = 1};
    json_val *mf = NULL;
    size_t len;
    TRY(artifact_open(path, &x, &a, e));
    const char *text = (const char *)artifact_manifest(a, &len);
    ait_status s = json_parse(text, len, path, &mf, e);
    artifact_close(a);
    const json_val *dec = json_get(json_get(mf, "inspection"), "decoder");
    const json_val *kv = json_get(dec, "kv_cache");
    int n_kv = json_len(kv);
    if (s != AIT_OK || !n_kv) {
        json_free(mf);
        return s;
    }
    *found = true;
    for (int k = -1; s == AIT_OK && k < n_kv; k++) {
        const json_val *p = k < 0 ? json_get(dec, "sequence") : json_at(kv, k);
        const char *past = json_str_of(json_get(p, k < 0 ? "input" : "past"));
        long long axis;
        int64_t dims[AIT_MAX_RANK];
        int i = find_name(np->in, r->n_in, past), rank = i < 0 ? 0 : manifest_dims(m, mf, i, dims);
        if (!rank || !json_int_of(json_get(p, "axis"), 0, rank - 1, &axis))
            s = err_set(e, AIT_E_PARSE, "%s: the manifest's decoder: bad %s %d", path,
                        k < 0 ? "sequence" : "kv_cache entry", k);
        else s = role_add(r, np, path, k, past, json_str_of(json_get(p, "present")), (int)axis,
                          rank, dims, e);
    }
    json_free(mf);
    return s;
}

/* What each port is: from the artifact's manifest when it records it, else
 * from an inspection of the model. */
static ait_status gen_roles_find(const ait_model *m, const char *path, gen_roles *r, ait_error *e)
{
    gen_ports np;
    r->n_in = ait_model_input_count(m);
    r->n_out = ait_model_output_count(m);
    r->ids = -1;
    if (r->n_in > GEN_MAX_IO || r->n_out > GEN_MAX_IO)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: more than %d inputs or outputs", path, GEN_MAX_IO);
    for (int i = 0; i < r->n_in; i++) {
        ait_value_info vi;
        TRY(ait_model_input(m, i, &vi));
        np.in[i] = vi.name;
        np.in_type[i] = vi.dtype;
        r->past[i] = -1;
    }
    for (int j = 0; j < r->n_out; j++) {
        ait_value_info vi;
        TRY(ait_model_output(m, j, &vi));
        np.out[j] = vi.name;
        np.out_type[j] = vi.dtype;
        r->present[j] = -1;
    }
    bool found;
    TRY(roles_from_manifest(m, path, &np, r, &found, e));
    if (!found) TRY(roles_inspected(m, path, &np, r, e));
    if (r->ids < 0) return err_set(e, AIT_E_PARSE, "%s: no sequence input found", path);
    if (r->dtype[r->ids] != AIT_I64 && r->dtype[r->ids] != AIT_I32)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: the sequence input '%s' is %s, not token ids "
                       "(int64 or int32)", path, np.in[r->ids], ait_dtype_name(r->dtype[r->ids]));
    for (int i = 0; i < r->n_in; i++)
        if (i != r->ids && r->past[i] < 0)
            return err_set(e, AIT_E_UNSUPPORTED, "%s: input '%s' is neither the token ids ('%s') nor "
                           "a cache input: ait generate cannot fill it yet", path, np.in[i],
                           np.in[r->ids]);
    r->logits = -1;
    for (int j = 0; j < r->n_out && r->logits < 0; j++)
        if (r->present[j] < 0 && np.out_type[j] == AIT_F32) r->logits = j;
    if (r->logits < 0)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: no float32 output besides the cache to read "
                       "logits from", path);
    return AIT_OK;
}

/* Batch rows (> 1): every input's axis 0 is the batch's, the ids [batch,
 * seq] and the caches growing along another axis; their shapes at
 * generation take `rows` there. */
static ait_status gen_batch(gen_roles *r, const char *path, int rows, ait_error *e)
{
    if (rows == 1) return AIT_OK;
    if (r->rank[r->ids] != 2 || r->seq_axis != 1)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: a batch of rows needs token ids of shape [batch, "
                       "seq]", path);
    for (int i = 0; i < r->n_in; i++) {
        if (r->past[i] >= 0 && r->axis[i] == 0)
            return err_set(e, AIT_E_UNSUPPORTED, "%s: a cache that grows along axis 0 leaves no "
                           "batch axis", path);
        r->dims[i][0] = rows;
    }
    return AIT_OK;
}

/* The id of the highest logit of batch row `row` of `rows` at its last
 * position (the last vocabulary-long run of the row's part). */
static int64_t argmax_last(ait_tensor *t, int rows, int row)
{
    int rank = ait_tensor_rank(t);
    int64_t v = rank ? ait_tensor_dims(t)[rank - 1] : 1, n = ait_tensor_numel(t) / rows;
    if (v <= 0 || n < v) return -1;
    const float *p = (const float *)ait_tensor_data(t) + (n * row + n - v);
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

/* Element i of the token ids t. */
static void id_set(const gen_roles *r, ait_tensor *t, int64_t i, int64_t id)
{
    if (r->dtype[r->ids] == AIT_I64) ((int64_t *)ait_tensor_data(t))[i] = id;
    else ((int32_t *)ait_tensor_data(t))[i] = (int32_t)id;
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
 * pair one of room for the whole generation, bound as past and present
 * with the positions held so far (or with --no-append two, present written
 * into one while past is read from the other, swapped each step); the
 * logits in one of room for the prompt's (when the vocabulary's size is
 * declared). */
static ait_status generate(ait_session *s, const ait_model *m, const gen_args *a,
                           const gen_roles *r, int64_t *out, int *n_out, double *sec,
                           int *in_place, ait_error *e)
{
    const int rows = a->rows;
    bool ended[GEN_MAX_ROWS] = {0};
    ait_tensor *buf[GEN_MAX_IO][2] = {{0}}, *ids = NULL, *logits = NULL;
    ait_binding *b = NULL;
    int64_t total = (int64_t)a->n_prompt + a->max_new;
    ait_status st = ait_binding_create(s, &b, e);
    bool nomem = !(ids = input_tensor(r, r->ids, r->seq_axis, a->n_prompt));
    for (int i = 0; i < r->n_in; i++)
        for (int h = 0; r->past[i] >= 0 && h < (a->no_append ? 2 : 1); h++)
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
    for (int row = 0; st == AIT_OK && row < rows; row++) /* [rows, prompt] */
        for (int p = 0; p < a->n_prompt; p++) id_set(r, ids, (int64_t)row * a->n_prompt + p,
                                                     a->prompt[row][p]);
    for (int i = 0; st == AIT_OK && a->no_append && i < r->n_in; i++)
        if (r->past[i] >= 0) set_len(buf[i][0], r->axis[i], 0); /* an empty cache */
    *n_out = 0;
    int64_t len = 0; /* positions in the cache */
    for (int step = 0; st == AIT_OK && step < a->max_new; step++) {
        int cur = step & 1;
        st = ait_binding_set_input(b, r->ids, ids, e);
        for (int j = 0; st == AIT_OK && !a->no_append && j < r->n_out; j++) {
            int i = r->present[j];
            if (i >= 0) st = ait_binding_set_cache(b, i, j, buf[i][0], r->axis[i], len, e);
        }
        for (int i = 0; st == AIT_OK && a->no_append && i < r->n_in; i++)
            if (r->past[i] >= 0) st = ait_binding_set_input(b, i, buf[i][cur], e);
        for (int j = 0; st == AIT_OK && a->no_append && j < r->n_out; j++)
            if (r->present[j] >= 0) st = ait_binding_set_output(b, j, buf[r->present[j]][!cur], e);
        if (st != AIT_OK) break;
        double t0 = now_sec();
        if (ait_session_run_bound(s, b) != AIT_OK) {
            st = err_set(e, AIT_E_INTERNAL, "%s run %d: %s", step ? "decode" : "prefill", step,
                         ait_session_error(s));
            break;
        }
        sec[step] = now_sec() - t0;
        *in_place = ait_binding_caches_in_place(b);
        len += ait_tensor_dims(ids)[r->seq_axis];
        set_len(ids, r->seq_axis, 1); /* [rows, 1] */
        bool all_ended = true;
        for (int row = 0; st == AIT_OK && row < rows; row++) {
            int64_t tok = argmax_last(ait_binding_output(b, r->logits), rows, row);
            if (tok < 0) st = err_set(e, AIT_E_INTERNAL, "the logits output is empty");
            out[(size_t)*n_out * (size_t)rows + (size_t)row] = tok;
            id_set(r, ids, row, tok);
            ended[row] |= a->has_eos && tok == a->eos;
            all_ended &= ended[row];
        }
        if (st == AIT_OK) ++*n_out;
        if (all_ended) break;
    }
    for (int i = 0; i < r->n_in; i++) ait_tensor_free(buf[i][0]), ait_tensor_free(buf[i][1]);
    ait_tensor_free(ids);
    ait_tensor_free(logits);
    ait_binding_free(b);
    return st;
}

int cmd_generate(int argc, char **argv)
{
    gen_args *ap = malloc(sizeof *ap);
    if (!ap) {
        fprintf(stderr, "ait generate: out of memory\n");
        return 1;
    }
    int rc = gen_parse(argc, argv, ap);
    if (rc >= 0) {
        free(ap);
        return rc;
    }
    const gen_args *a = ap;
    ait_error err = {0};
    ait_model *m = NULL;
    ait_session *s = NULL;
    gen_roles *r = calloc(1, sizeof *r);
    int64_t *toks = malloc(sizeof *toks * (size_t)a->max_new * (size_t)a->rows);
    double *sec = malloc(sizeof *sec * (size_t)a->max_new);
    int n = 0;
    ait_status st = r && toks && sec ? AIT_OK : err_set(&err, AIT_E_NOMEM, "out of memory");
    if (st == AIT_OK) {
        /* kept: without a decoder's manifest the roles come from inspecting it */
        ait_artifact_options ao = {.size = sizeof ao, .keep_weights = 1};
        st = artifact_file_is(a->path) ? ait_artifact_load(a->path, &ao, &m, &err)
                                       : ait_model_load(a->path, &m, &err);
    }
    if (st == AIT_OK && ait_model_note(m)[0])
        fprintf(stderr, "ait generate: warning: running untuned: %s\n", ait_model_note(m));
    if (st == AIT_OK) st = gen_roles_find(m, a->path, r, &err);
    if (st == AIT_OK) st = gen_batch(r, a->path, a->rows, &err);
    if (st == AIT_OK) {
        logger lg = cli_logger();
        ait_session_options so = {.size = sizeof so, .threads = a->threads, .log = lg.fn,
                                  .log_user = lg.user, .no_output_blocks = 1}; /* bound runs only */
        st = ait_options_from_env(&so, NULL, &err);
        if (st == AIT_OK) st = ait_session_create(m, &so, &s, &err);
    }
    int in_place = 0, pairs = 0;
    for (int j = 0; st == AIT_OK && j < r->n_out; j++) pairs += r->present[j] >= 0;
    if (st == AIT_OK) st = generate(s, m, a, r, toks, &n, sec, &in_place, &err);
    if (st == AIT_OK) {
        for (int row = 0; row < a->rows; row++) {
            if (a->rows > 1) printf("tokens[%d]:", row);
            else printf("tokens:");
            for (int i = 0; i < n; i++) {
                long long t = toks[(size_t)i * (size_t)a->rows + (size_t)row];
                printf(" %lld", t);
                if (a->has_eos && t == a->eos) break; /* the others went on */
            }
            printf("\n");
        }
        int64_t rows = a->rows;
        printf("prefill: %lld tokens in %.3f ms (time to first token), %.1f tokens/s\n",
               (long long)(rows * a->n_prompt), sec[0] * 1e3, (double)(rows * a->n_prompt) / sec[0]);
        if (n > 1) {
            double sum = 0, first = sec[1];
            for (int i = 1; i < n; i++) sum += sec[i];
            qsort(sec + 1, (size_t)(n - 1), sizeof *sec, cli_cmp_double);
            printf("decode:  %lld tokens in %.3f ms, %.1f tokens/s (median %.3f ms per %s, the "
                   "first %.3f ms)\n", (long long)(rows * (n - 1)), sum * 1e3,
                   (double)(rows * (n - 1)) / sum, sec[1 + (n - 2) / 2] * 1e3,
                   rows > 1 ? "step" : "token", first * 1e3);
        }
        if (a->no_append) printf("cache:   %d pairs, two buffers each (--no-append)\n", pairs);
        else printf("cache:   %d pairs, %d appended in place by the last run (the others "
                    "copied)\n", pairs, in_place);
    } else {
        fprintf(stderr, "ait generate: %s\n", err.msg);
    }
    ait_session_free(s);
    ait_model_free(m);
    free(r);
    free(toks);
    free(sec);
    free(ap);
    return st == AIT_OK ? 0 : 1;
}

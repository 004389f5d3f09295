/* No heap allocation per decode step (issue 16): greedy generation on the
 * bundled gpt2 and llama test models with every input and output bound
 * (ait_binding, a key/value cache of two buffers per pair swapped each
 * step), counted by wrapping the allocator (this program links the static
 * library with -Wl,--wrap=malloc,... : every allocation the library's code
 * makes goes through the counters below; the C library's own internal
 * calls and other shared libraries (OpenMP, OpenBLAS) are not seen).
 *
 * The first generation is the warm-up: it meets every shape (each step's
 * past length is new, so the executor schedules it and grows its buffers).
 * The second, identical, generation must then allocate nothing at all, in
 * prefill and in every decode step, untuned (the reference ops) and on a
 * tuned artifact whose modules run on the native backend (which keeps its
 * fusions per input class, its values' storage and its GEMM and attention
 * scratch across schedules: docs/runtime.md, "Bound buffers"); and its
 * tokens must be PyTorch's (NAME.greedy.txt). Each model runs twice so:
 * with the two swapped buffers, and with one buffer per pair appended in
 * place (ait_binding_set_cache), which the tuned artifact's native modules
 * must append in place at every step (ait_binding_caches_in_place) and
 * the untuned model copies (its copy buffers made once). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ait.h"
#include "testutil.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t k);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);

static atomic_int counting;
static atomic_long allocs;

void *__wrap_malloc(size_t n)
{
    if (counting) allocs++;
    return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t k)
{
    if (counting) allocs++;
    return __real_calloc(n, k);
}
void *__wrap_realloc(void *p, size_t n)
{
    if (counting) allocs++;
    return __real_realloc(p, n);
}
int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
    if (counting) allocs++;
    return __real_posix_memalign(p, a, n);
}
void *__wrap_aligned_alloc(size_t a, size_t n)
{
    if (counting) allocs++;
    return __real_aligned_alloc(a, n);
}

#define MAX_NEW 12
#define MAX_IO 16

static int failures;
#define CHECK(c, ...)                                                                        \
    do {                                                                                     \
        if (!TEST_CHECK(c, &failures, __VA_ARGS__)) return;                                  \
    } while (0)

typedef struct gen {
    ait_session *s;
    ait_binding *b;
    int n_in, n_out;
    ait_tensor *ids, *logits, *cache[MAX_IO][2]; /* cache[input][h] */
    int present[MAX_IO];                         /* per input: its output, or -1 */
    int64_t prompt[64];
    int n_prompt;
    int64_t tokens[MAX_NEW];
    long counts[MAX_NEW];
    bool append;                                 /* one buffer per pair: set_cache */
    int in_place[MAX_NEW];                       /* caches appended in place per step */
} gen;

/* The cache and logits buffers, made once; inputs past_X pair with outputs
 * present_X (the bundled models' names), the past axis 2. */
static void gen_init(gen *g, const ait_model *m)
{
    ait_error e = {0};
    g->n_in = ait_model_input_count(m);
    g->n_out = ait_model_output_count(m);
    CHECK(ait_binding_create(g->s, &g->b, &e) == AIT_OK, "%s", e.msg);
    for (int i = 1; i < g->n_in; i++) {
        ait_value_info vi, vo;
        ait_model_input(m, i, &vi);
        g->present[i] = -1;
        for (int j = 0; j < g->n_out; j++)
            if (ait_model_output(m, j, &vo) == AIT_OK && !strncmp(vo.name, "present", 7) &&
                !strncmp(vi.name, "past", 4) && !strcmp(vo.name + 7, vi.name + 4))
                g->present[i] = j;
        CHECK(g->present[i] > 0, "no present for %s", vi.name);
        int64_t dims[4] = {1, vi.dims[1], g->n_prompt + MAX_NEW, vi.dims[3]};
        for (int h = 0; h < 2; h++) g->cache[i][h] = ait_tensor_create(AIT_F32, 4, dims);
    }
    int64_t room = (int64_t)g->n_prompt * 1000, ids_dims[2] = {1, g->n_prompt};
    g->logits = ait_tensor_create(AIT_F32, 1, &room);
    g->ids = ait_tensor_create(AIT_I64, 2, ids_dims);
    CHECK(ait_binding_set_output(g->b, 0, g->logits, &e) == AIT_OK, "%s", e.msg);
}

static void gen_run(gen *g)
{
    ait_error e = {0};
    int64_t dims[4] = {1, 1, 0, 1}, ids_dims[2] = {1, g->n_prompt};
    ait_tensor_reshape(g->ids, 2, ids_dims);
    memcpy(ait_tensor_data(g->ids), g->prompt, sizeof(int64_t) * (size_t)g->n_prompt);
    for (int i = 1; i < g->n_in; i++) {
        memcpy(dims, ait_tensor_dims(g->cache[i][0]), sizeof dims);
        dims[2] = g->append ? g->n_prompt + MAX_NEW : 0; /* the capacity, or an empty past */
        ait_tensor_reshape(g->cache[i][0], 4, dims);
    }
    int64_t len = 0;
    for (int step = 0; step < MAX_NEW; step++) {
        int cur = step & 1;
        CHECK(ait_binding_set_input(g->b, 0, g->ids, &e) == AIT_OK, "%s", e.msg);
        for (int i = 1; g->append && i < g->n_in; i++)
            CHECK(ait_binding_set_cache(g->b, i, g->present[i], g->cache[i][0], 2, len, &e) ==
                      AIT_OK, "%s", e.msg);
        for (int i = 1; !g->append && i < g->n_in; i++) {
            CHECK(ait_binding_set_input(g->b, i, g->cache[i][cur], &e) == AIT_OK, "%s", e.msg);
            CHECK(ait_binding_set_output(g->b, g->present[i], g->cache[i][!cur], &e) == AIT_OK,
                  "%s", e.msg);
        }
        allocs = 0;
        counting = 1;
        ait_status st = ait_session_run_bound(g->s, g->b);
        counting = 0;
        g->counts[step] = allocs;
        CHECK(st == AIT_OK, "%s", ait_session_error(g->s));
        g->in_place[step] = ait_binding_caches_in_place(g->b);
        len += ait_tensor_dims(g->ids)[1];
        const ait_tensor *lg = ait_binding_output(g->b, 0);
        CHECK(lg == g->logits && ait_tensor_rank(lg) == 3, "logits not in the bound tensor");
        const float *p = (const float *)ait_tensor_data(g->logits) + (ait_tensor_numel(lg) - 1000);
        int64_t best = 0;
        for (int64_t v = 1; v < 1000; v++)
            if (p[v] > p[best]) best = v;
        g->tokens[step] = best;
        int64_t one[2] = {1, 1};
        ait_tensor_reshape(g->ids, 2, one);
        ((int64_t *)ait_tensor_data(g->ids))[0] = best;
    }
}

static void gen_free(gen *g)
{
    for (int i = 0; i < MAX_IO; i++) ait_tensor_free(g->cache[i][0]), ait_tensor_free(g->cache[i][1]);
    ait_tensor_free(g->ids);
    ait_tensor_free(g->logits);
    ait_binding_free(g->b);
}

/* PyTorch's tokens for the model: the prompt and MAX_NEW tokens. */
static int greedy(const char *dir, const char *name, int64_t *prompt, int *n_prompt, int64_t *want)
{
    char path[4096], line[4096];
    snprintf(path, sizeof path, "%s/%s.greedy.txt", dir, name);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(line, sizeof line, f)) {
        if (f) fclose(f);
        return -1;
    }
    fclose(f);
    char *p = line;
    *n_prompt = 0;
    while (*p && *p != ' ') prompt[(*n_prompt)++] = strtoll(p, &p, 10), p += *p == ',';
    int n = 0;
    while (*p && n < MAX_NEW) want[n++] = strtoll(p, &p, 10), p += *p == ',';
    return n;
}

/* Two generations on m: the second allocates nothing in any step, and both
 * give PyTorch's tokens. */
static void check_model(const char *what, const ait_model *m, const int64_t *prompt, int n_prompt,
                        const int64_t *want, bool append, bool in_place)
{
    gen g = {.append = append};
    ait_error e = {0};
    memcpy(g.prompt, prompt, sizeof(int64_t) * (size_t)n_prompt);
    g.n_prompt = n_prompt;
    if (ait_session_create(m, NULL, &g.s, &e) != AIT_OK) {
        fprintf(stderr, "FAIL %s: %s\n", what, e.msg);
        failures++;
        return;
    }
    gen_init(&g, m);
    for (int pass = 0; pass < 2 && g.b; pass++) {
        gen_run(&g);
        for (int k = 0; k < MAX_NEW; k++)
            if (g.tokens[k] != want[k]) {
                fprintf(stderr, "FAIL %s: token %d is %lld, PyTorch's %lld\n", what, k,
                        (long long)g.tokens[k], (long long)want[k]);
                failures++;
                break;
            }
        for (int k = 0; append && k < MAX_NEW; k++)
            if (g.in_place[k] != (in_place ? g.n_in - 1 : 0)) {
                fprintf(stderr, "FAIL %s: step %d appended %d of %d caches in place, not %s\n",
                        what, k, g.in_place[k], g.n_in - 1, in_place ? "all" : "none");
                failures++;
                break;
            }
        printf("%s%s, %s generation: allocations per step:", what,
               append ? ", appended" : "", pass ? "second" : "first");
        for (int k = 0; k < MAX_NEW; k++) printf(" %ld", g.counts[k]);
        printf("\n");
    }
    /* appended in place, a present that outgrows its cache is refused
     * before it is written (the past fills the cache) */
    for (int i = 1; in_place && g.b && i < g.n_in; i++)
        if (ait_binding_set_cache(g.b, i, g.present[i], g.cache[i][0], 2, n_prompt + MAX_NEW, &e))
            fprintf(stderr, "FAIL %s: %s\n", what, e.msg), failures++;
    if (in_place && g.b && (ait_session_run_bound(g.s, g.b) != AIT_E_SHAPE ||
                            !strstr(ait_session_error(g.s), "the cache bound to it holds"))) {
        fprintf(stderr, "FAIL %s: a cache too small not refused: %s\n", what,
                ait_session_error(g.s));
        failures++;
    }
    for (int k = 0; k < MAX_NEW; k++)
        if (g.counts[k] != 0) {
            fprintf(stderr, "FAIL %s: step %d of the second generation made %ld allocations\n",
                    what, k, g.counts[k]);
            failures++;
            break;
        }
    gen_free(&g);
    ait_session_free(g.s);
}

/* A decode step's inputs at past `past` (ids 5, pasts 0.25), made once. */
/* Inputs of m at batch b, s new tokens (id 5) and a past of `past`
 * positions (0.25). */
static void shaped_inputs(const ait_model *m, int64_t b, int64_t s, int64_t past, ait_tensor **in)
{
    int n_in = ait_model_input_count(m);
    int64_t ids[2] = {b, s};
    in[0] = ait_tensor_create(AIT_I64, 2, ids);
    for (int64_t k = 0; k < b * s; k++) ((int64_t *)ait_tensor_data(in[0]))[k] = 5;
    for (int i = 1; i < n_in; i++) {
        ait_value_info vi;
        ait_model_input(m, i, &vi);
        int64_t dims[4] = {b, vi.dims[1], past, vi.dims[3]};
        in[i] = ait_tensor_create(AIT_F32, 4, dims);
        float *p = ait_tensor_data(in[i]);
        for (int64_t k = 0; k < ait_tensor_numel(in[i]); k++) p[k] = 0.25f;
    }
}

static void step_inputs(const ait_model *m, int64_t past, ait_tensor **in)
{
    shaped_inputs(m, 1, 1, past, in);
}

/* Allocations of the first run of a fresh session of m on in, its outputs
 * unbound (logits bound to `logits` when given), after ait_binding_reserve
 * when `reserve` (*held: the bytes it says the binding holds); the
 * binding's outputs checked bit for bit against ait_session_run's
 * (want[]). -1 on a failure (said). */
static long first_run_allocs(const ait_model *m, ait_tensor **in, bool reserve,
                             ait_tensor *logits, ait_tensor **want, size_t *held)
{
    ait_session *s = NULL;
    ait_binding *b = NULL;
    ait_error e = {0};
    long n = -1;
    int n_in = ait_model_input_count(m), n_out = ait_model_output_count(m);
    *held = 0;
    if (ait_session_create(m, NULL, &s, &e) != AIT_OK || ait_binding_create(s, &b, &e) != AIT_OK)
        goto out;
    for (int i = 0; i < n_in; i++)
        if (ait_binding_set_input(b, i, in[i], &e) != AIT_OK) goto out;
    if (logits && ait_binding_set_output(b, 0, logits, &e) != AIT_OK) goto out;
    if (reserve && ait_binding_reserve(b, held, &e) != AIT_OK) goto out;
    allocs = 0;
    counting = 1;
    ait_status st = ait_session_run_bound(s, b);
    counting = 0;
    if (st != AIT_OK) {
        snprintf(e.msg, sizeof e.msg, "%s", ait_session_error(s));
        goto out;
    }
    n = allocs;
    for (int j = 0; want && j < n_out; j++) {
        const ait_tensor *o = ait_binding_output(b, j);
        size_t bytes = (size_t)ait_tensor_numel(want[j]) * sizeof(float);
        if (ait_tensor_rank(o) != ait_tensor_rank(want[j]) ||
            memcmp(ait_tensor_dims(o), ait_tensor_dims(want[j]),
                   sizeof(int64_t) * (size_t)ait_tensor_rank(o)) ||
            memcmp(ait_tensor_data((ait_tensor *)o), ait_tensor_data(want[j]), bytes)) {
            snprintf(e.msg, sizeof e.msg, "output %d differs from ait_session_run's", j);
            n = -1;
            goto out;
        }
    }
out:
    if (n < 0) fprintf(stderr, "FAIL reserve: %s\n", e.msg), failures++;
    ait_binding_free(b);
    ait_session_free(s);
    return n;
}

/* ait_binding_reserve: on the tuned artifact, a fresh session's first
 * decode step at the bucket's priming shape (past 128: the bucket of the
 * sample's past 127, primed at its largest), every output unbound, makes
 * no allocation once reserved (without it, the binding grows its outputs
 * there), with ait_session_run's outputs bit for bit; what it holds covers
 * those outputs, less with logits bound; untuned, nothing is reserved. */
static void check_reserve(const ait_model *a, const ait_model *untuned)
{
    ait_tensor *in[MAX_IO] = {0}, *want[MAX_IO] = {0};
    int n_in = ait_model_input_count(a), n_out = ait_model_output_count(a);
    ait_session *s = NULL;
    ait_error e = {0};
    step_inputs(a, 128, in);
    CHECK(ait_session_create(a, NULL, &s, &e) == AIT_OK, "%s", e.msg);
    ait_status st = ait_session_run(s, in, n_in, want, n_out);
    ait_session_free(s);
    CHECK(st == AIT_OK, "ait_session_run on the artifact failed");
    size_t need = 0, held = 0, held_bound = 0, none = 1;
    for (int j = 0; j < n_out; j++) need += (size_t)ait_tensor_numel(want[j]) * sizeof(float);
    long plain = first_run_allocs(a, in, false, NULL, want, &held);
    long reserved = first_run_allocs(a, in, true, NULL, want, &held);
    int64_t room = 1000;
    ait_tensor *logits = ait_tensor_create(AIT_F32, 1, &room);
    long bound = first_run_allocs(a, in, true, logits, NULL, &held_bound);
    long raw = first_run_allocs(untuned, in, true, NULL, NULL, &none);
    printf("reserve: first run's allocations %ld without, %ld with (%zu bytes held, %zu needed; "
           "logits bound: %ld, %zu held); untuned: %zu held\n", plain, reserved, held, need,
           bound, held_bound, none);
    size_t zero = 1;
    CHECK(ait_binding_reserve(NULL, &zero, &e) == AIT_E_INVALID_ARG && zero == 0,
          "NULL binding taken");
    CHECK(reserved == 0, "the first run after ait_binding_reserve made %ld allocations", reserved);
    CHECK(bound == 0, "the first run with logits bound, reserved, made %ld allocations", bound);
    CHECK(held >= need, "reserved %zu bytes, the outputs take %zu", held, need);
    CHECK(held_bound + 1000 * sizeof(float) <= held, "logits bound, yet reserved (%zu of %zu)",
          held_bound, held);
    CHECK(raw >= 0 && none == 0, "an untuned model reserved %zu bytes", none);
    ait_tensor_free(logits);
    for (int i = 0; i < n_in; i++) ait_tensor_free(in[i]);
    for (int j = 0; j < n_out; j++) ait_tensor_free(want[j]);
}

/* The two buckets of artifact a (decode on a past of 128; 8 tokens on a
 * past of 16: the samples it was tuned on, at their priming shapes, batch
 * 1: the samples' batches differ, so no batch axis was found) reserved per
 * bucket: each bucket's reserve holds less than every bucket's at once
 * (input unbound) and covers its outputs; one binding reserved for both
 * buckets in turn (bind a sample, reserve) then runs the first run of each
 * bucket with no allocation, its outputs equal to ait_session_run's. */
static void check_buckets(const ait_model *a)
{
    static const int64_t shape[2][3] = {{1, 1, 128}, {1, 8, 16}};
    ait_tensor *in[2][MAX_IO] = {{0}}, *want[2][MAX_IO] = {{0}};
    int n_in = ait_model_input_count(a), n_out = ait_model_output_count(a);
    ait_session *s = NULL;
    ait_binding *b = NULL;
    ait_error e = {0};
    size_t need[2] = {0, 0}, held[2] = {0, 0}, all = 0, both = 0;
    CHECK(ait_session_create(a, NULL, &s, &e) == AIT_OK, "%s", e.msg);
    for (int k = 0; s && k < 2; k++) {
        shaped_inputs(a, shape[k][0], shape[k][1], shape[k][2], in[k]);
        CHECK(ait_session_run(s, in[k], n_in, want[k], n_out) == AIT_OK, "%s", ait_session_error(s));
        for (int j = 0; j < n_out && want[k][j]; j++)
            need[k] += (size_t)ait_tensor_numel(want[k][j]) * sizeof(float);
    }
    ait_session_free(s);
    s = NULL;
    /* each bucket alone, in a fresh session: its own room */
    for (int k = 0; k < 2; k++) {
        long n = first_run_allocs(a, in[k], true, NULL, want[k], &held[k]);
        CHECK(n == 0, "bucket %d: the first run after its reserve made %ld allocations", k, n);
        CHECK(held[k] >= need[k], "bucket %d: reserved %zu bytes, its outputs take %zu", k,
              held[k], need[k]);
    }
    /* every bucket's at once: an input unbound */
    CHECK(ait_session_create(a, NULL, &s, &e) == AIT_OK && ait_binding_create(s, &b, &e) == AIT_OK,
          "%s", e.msg);
    CHECK(b && ait_binding_reserve(b, &all, &e) == AIT_OK, "%s", e.msg);
    ait_binding_free(b);
    b = NULL;
    printf("buckets: reserved %zu bytes for the decode bucket (outputs %zu), %zu for the other "
           "(%zu), %zu with an input unbound\n", held[0], need[0], held[1], need[1], all);
    CHECK(held[0] < all && held[1] <= all && held[0] != held[1],
          "the buckets' reserves (%zu, %zu) are not each bucket's own (all: %zu)", held[0], held[1],
          all);
    /* one binding reserved for both buckets in turn, then the first run of each */
    CHECK(s && ait_binding_create(s, &b, &e) == AIT_OK, "%s", e.msg);
    for (int k = 0; b && k < 2; k++) {
        for (int i = 0; i < n_in; i++)
            CHECK(ait_binding_set_input(b, i, in[k][i], &e) == AIT_OK, "%s", e.msg);
        CHECK(ait_binding_reserve(b, &both, &e) == AIT_OK, "%s", e.msg);
    }
    for (int k = 1; b && k >= 0; k--) {
        for (int i = 0; i < n_in; i++) ait_binding_set_input(b, i, in[k][i], &e);
        allocs = 0;
        counting = 1;
        ait_status st = ait_session_run_bound(s, b);
        counting = 0;
        CHECK(st == AIT_OK, "%s", ait_session_error(s));
        CHECK(allocs == 0, "bucket %d's first run on a binding reserved for both made %ld "
              "allocations", k, (long)allocs);
        for (int j = 0; st == AIT_OK && j < n_out; j++) {
            const ait_tensor *o = ait_binding_output(b, j);
            CHECK(ait_tensor_numel(o) == ait_tensor_numel(want[k][j]) &&
                  !memcmp(ait_tensor_data((ait_tensor *)o), ait_tensor_data(want[k][j]),
                          (size_t)ait_tensor_numel(o) * sizeof(float)),
                  "bucket %d: output %d differs from ait_session_run's", k, j);
        }
    }
    CHECK(both >= held[0] && both >= held[1] && both <= all,
          "reserved for both buckets in turn: %zu bytes (each %zu, %zu; all %zu)", both, held[0],
          held[1], all);
    ait_binding_free(b);
    ait_session_free(s);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < MAX_IO; i++) ait_tensor_free(in[k][i]), ait_tensor_free(want[k][i]);
}

/* gpt2 tuned with every module it can on the native backend. */
static ait_model *tuned(const ait_model *m, const char *dir, const char *path)
{
    static const char *const select[] = {"h.*", "only:native", "lm_head", "only:native", NULL};
    char data[] = "/tmp/ait-noalloc-data-XXXXXX", from[4096], to[4200], why[1024];
    if (!mkdtemp(data)) {
        fprintf(stderr, "FAIL tuning gpt2 on native: no temporary folder\n");
        return NULL;
    }
    for (int k = 0; k < 2; k++) { /* the two buckets: decode, and 8 tokens */
        snprintf(from, sizeof from, "%s/gpt2.in.%d.npz", dir, k);
        snprintf(to, sizeof to, "%s/%d.npz", data, k);
        if (symlink(from, to) != 0) fprintf(stderr, "FAIL symlink %s\n", to);
    }
    ait_inspect_options io = {.size = sizeof io, .data_path = data, .runs = 1};
    ait_model *out = test_tune_quick(m, &io, select, path, why, sizeof why);
    if (!out) fprintf(stderr, "FAIL tuning gpt2 on native: %s\n", why);
    for (int k = 0; k < 2; k++) snprintf(to, sizeof to, "%s/%d.npz", data, k), unlink(to);
    rmdir(data);
    return out;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ait-unit-noalloc MODELS_DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    const char *names[] = {"gpt2", "llama"};
    for (int k = 0; k < 2; k++) {
        int64_t prompt[64], want[MAX_NEW];
        int n_prompt;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.onnx", dir, names[k]);
        ait_model *m = NULL;
        ait_error e = {0};
        if (greedy(dir, names[k], prompt, &n_prompt, want) != MAX_NEW ||
            ait_model_load(path, &m, &e) != AIT_OK) {
            fprintf(stderr, "FAIL %s: no model or greedy tokens: %s\n", names[k], e.msg);
            failures++;
            continue;
        }
        check_model(names[k], m, prompt, n_prompt, want, false, false);
        check_model(names[k], m, prompt, n_prompt, want, true, false); /* copied: untuned */
        if (k == 0) {
            char art[] = "/tmp/ait-noalloc-XXXXXX";
            int fd = mkstemp(art);
            if (fd >= 0) close(fd);
            char apath[64];
            snprintf(apath, sizeof apath, "%s.ait", art);
            ait_model *a = tuned(m, dir, apath);
            if (a) check_model("gpt2 tuned (native)", a, prompt, n_prompt, want, false, false);
            if (a) check_model("gpt2 tuned (native)", a, prompt, n_prompt, want, true, true);
            if (a) check_reserve(a, m);
            if (a) check_buckets(a);
            ait_model_free(a);
            unlink(art);
            unlink(apath);
            char sums[96];
            snprintf(sums, sizeof sums, "%s_sha256_sums.txt", art);
            unlink(sums);
        }
        ait_model_free(m);
    }
    printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
    return failures ? 1 : 0;
}

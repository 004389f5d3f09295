/* Greedy generation with a key/value cache in caller-owned buffers, on
 * ait's public API only (see README.md here).
 *
 *   generate MODEL.onnx|NAME.ait PROMPT_IDS MAX_NEW      e.g. gpt2.onnx 5,17,42 12
 *
 * The model takes token ids [batch, seq] as input 0 and a cache: each input
 * named past* comes back as the output named present* with the same rest
 * of the name (past_key_0 -> present_key_0, as GPT-2-style exports with
 * past key/values name them), longer along the input's symbolic axis after
 * the batch. Output 0 holds the logits [batch, seq, vocab].
 *
 * Every buffer is allocated once, before the first run: per cache pair one
 * buffer of room for the prompt and every new token, bound as both past
 * (the positions held so far) and present (ait_binding_set_cache): each run
 * appends its new keys and values after the past, which is never copied;
 * the logits in a buffer of room for the prompt's. A run writes its outputs
 * into them (ait_binding) and allocates nothing once it has run at each
 * shape. */
#include <ait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IO 64
#define MAX_TOKENS 4096

typedef struct cache {
    int in, out, axis;      /* the past input, the present output, the growing axis */
    ait_tensor *buf;        /* wraps mem: room for the whole generation */
    void *mem;
} cache;

static int fail(const char *what, const char *msg)
{
    fprintf(stderr, "generate: %s: %s\n", what, msg);
    return 1;
}

/* The present output pairing with past input `name`, or -1. */
static int present_of(const ait_model *m, const char *name)
{
    if (strncmp(name, "past", 4) != 0) return -1;
    for (int j = 0; j < ait_model_output_count(m); j++) {
        ait_value_info o;
        if (ait_model_output(m, j, &o) == AIT_OK && !strncmp(o.name, "present", 7) &&
            !strcmp(o.name + 7, name + 4))
            return j;
    }
    return -1;
}

static int64_t argmax_last(const ait_tensor *logits)
{
    int rank = ait_tensor_rank(logits);
    int64_t v = ait_tensor_dims(logits)[rank - 1], n = ait_tensor_numel(logits);
    const float *p = (const float *)ait_tensor_data((ait_tensor *)logits) + (n - v);
    int64_t best = 0;
    for (int64_t i = 1; i < v; i++)
        if (p[i] > p[best]) best = i;
    return best;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: generate MODEL.onnx|NAME.ait PROMPT_IDS MAX_NEW\n");
        return 2;
    }
    int64_t ids[MAX_TOKENS];
    int n_prompt = 0, max_new = atoi(argv[3]);
    for (char *p = argv[2]; *p && n_prompt < MAX_TOKENS; p += *p == ',') ids[n_prompt++] = strtoll(p, &p, 10);
    if (!n_prompt || max_new < 1 || n_prompt + max_new > MAX_TOKENS) return fail(argv[2], "bad arguments");
    int64_t total = n_prompt + max_new;

    ait_error err = {0};
    ait_model *m = NULL;
    ait_session *s = NULL;
    ait_binding *b = NULL;
    if (ait_model_load(argv[1], &m, &err) != AIT_OK) return fail(argv[1], err.msg);
    if (ait_session_create(m, NULL, &s, &err) != AIT_OK || ait_binding_create(s, &b, &err) != AIT_OK)
        return fail(argv[1], err.msg);
    int n_in = ait_model_input_count(m), n_cache = 0;
    if (n_in > MAX_IO) return fail(argv[1], "too many inputs");
    cache c[MAX_IO];
    ait_value_info vi;

    /* The cache: one buffer per pair, wrapped at its largest shape (its
     * capacity along the axis). */
    for (int i = 1; i < n_in; i++) {
        ait_model_input(m, i, &vi);
        cache *k = &c[n_cache];
        k->in = i;
        k->out = present_of(m, vi.name);
        k->axis = -1;
        for (int d = 1; d < vi.rank && k->axis < 0; d++)
            if (vi.dims[d] < 0) k->axis = d;
        if (k->out < 0 || k->axis < 0) return fail(vi.name, "not a past input with a present output");
        int64_t dims[AIT_MAX_RANK], n = 1;
        for (int d = 0; d < vi.rank; d++) {
            dims[d] = d == 0 ? 1 : d == k->axis ? total : vi.dims[d];
            n *= dims[d];
        }
        k->mem = malloc((size_t)n * ait_dtype_size(vi.dtype));
        k->buf = k->mem ? ait_tensor_wrap(vi.dtype, vi.rank, dims, k->mem) : NULL;
        if (!k->buf) return fail(vi.name, "out of memory");
        n_cache++;
    }
    /* The token ids, [1, seq], and the logits, room for [1, prompt, vocab]. */
    ait_model_output(m, 0, &vi);
    int64_t ids_dims[2] = {1, n_prompt}, vocab = vi.dims[vi.rank - 1];
    int64_t logit_dims[3] = {1, n_prompt, vocab};
    float *logit_mem = malloc(sizeof(float) * (size_t)(n_prompt * vocab));
    ait_tensor *tok = ait_tensor_wrap(AIT_I64, 2, ids_dims, ids);
    ait_tensor *logits = logit_mem ? ait_tensor_wrap(AIT_F32, 3, logit_dims, logit_mem) : NULL;
    if (vocab <= 0 || !tok || !logits) return fail(argv[1], "no logits [batch, seq, vocab] output");
    if (ait_binding_set_output(b, 0, logits, &err) != AIT_OK) return fail(argv[1], err.msg);

    printf("tokens:");
    int64_t len = 0; /* positions the caches hold */
    for (int step = 0; step < max_new; step++) {
        /* the past is the first len positions; the run appends after it */
        if (ait_binding_set_input(b, 0, tok, &err) != AIT_OK) return fail(argv[1], err.msg);
        for (int k = 0; k < n_cache; k++)
            if (ait_binding_set_cache(b, c[k].in, c[k].out, c[k].buf, c[k].axis, len, &err) != AIT_OK)
                return fail(argv[1], err.msg);
        if (ait_session_run_bound(s, b) != AIT_OK) return fail(argv[1], ait_session_error(s));
        len += ait_tensor_dims(tok)[1];
        int64_t next = argmax_last(logits);
        printf(" %lld", (long long)next);
        /* The next run reads one token: ids[0], shape [1, 1]. */
        ids[0] = next;
        int64_t one[2] = {1, 1};
        ait_tensor_reshape(tok, 2, one);
    }
    printf("\n");

    for (int k = 0; k < n_cache; k++) ait_tensor_free(c[k].buf), free(c[k].mem);
    ait_tensor_free(tok);
    ait_tensor_free(logits);
    free(logit_mem);
    ait_binding_free(b);
    ait_session_free(s);
    ait_model_free(m);
    return 0;
}

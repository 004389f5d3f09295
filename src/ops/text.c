/* Text features: TfIdfVectorizer over integer token ids (pool_int64s) or
 * string tokens (pool_strings). Strings become ids first: each pool string
 * the index of its first occurrence in the pool, each input string that id
 * or -1 when the pool lacks it, so that the id n-grams match exactly when
 * the string n-grams do. */
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"

typedef struct ngram_pool {
    int n_counts;
    const int64_t *counts;  /* start of the 1-grams, 2-grams, ... in the pool */
    int n_pool;
    const int64_t *pool;    /* all n-grams, concatenated (ids for strings, set in run) */
    char **strs;            /* pool_strings, or NULL */
    int n_idx;
    const int64_t *indexes; /* output column of each n-gram */
} ngram_pool;

static ait_status pool_get(op_ctx *c, ngram_pool *p, int64_t *width)
{
    p->counts = attr_ints(c->n, "ngram_counts", &p->n_counts);
    p->indexes = attr_ints(c->n, "ngram_indexes", &p->n_idx);
    p->pool = attr_ints(c->n, "pool_int64s", &p->n_pool);
    p->strs = NULL;
    const attr *ps = node_attr(c->n, "pool_strings");
    if (!p->pool && ps && ps->type == ATTR_STRINGS) {
        p->strs = ps->strings;
        p->n_pool = ps->n;
    }
    if (!p->pool && !p->strs)
        return err_set(c->err, AIT_E_INVALID_ARG, "pool_int64s or pool_strings is missing");
    if ((c->in[0]->dtype == AIT_STRING) != (p->strs != NULL))
        return err_set(c->err, AIT_E_DTYPE, "%s input with %s: string inputs take pool_strings, "
                       "integer ones pool_int64s", ait_dtype_name(c->in[0]->dtype),
                       p->strs ? "pool_strings" : "pool_int64s");
    if (!p->counts || !p->indexes)
        return err_set(c->err, AIT_E_INVALID_ARG, "ngram_counts and ngram_indexes are required");
    int64_t w = 0;
    for (int i = 0; i < p->n_idx; i++) {
        if (p->indexes[i] < 0 || p->indexes[i] > (1 << 24))
            return err_set(c->err, AIT_E_INVALID_ARG, "ngram index %lld is out of range",
                           (long long)p->indexes[i]);
        if (p->indexes[i] + 1 > w) w = p->indexes[i] + 1;
    }
    for (int i = 0; i < p->n_counts; i++)
        if (p->counts[i] < 0 || p->counts[i] > p->n_pool || (i && p->counts[i] < p->counts[i - 1]))
            return err_set(c->err, AIT_E_INVALID_ARG, "ngram_counts are not increasing offsets "
                           "into the pool");
    *width = w;
    return AIT_OK;
}

static ait_status tfidf_infer(op_ctx *c)
{
    const tensor *x = c->in[0];
    if (!dtype_is_int(x->dtype) && x->dtype != AIT_STRING)
        return err_set(c->err, AIT_E_UNSUPPORTED, "input must be int32 or int64 token ids or "
                       "strings, not %s", ait_dtype_name(x->dtype));
    if (x->rank != 1 && x->rank != 2)
        return err_set(c->err, AIT_E_SHAPE, "input must be [C] or [N, C], rank is %d", x->rank);
    ngram_pool p;
    int64_t w;
    TRY(pool_get(c, &p, &w));
    int64_t dims[2] = {x->dims[0], w};
    if (x->rank == 1) set_out(c, 0, AIT_F32, 1, &w);
    else set_out(c, 0, AIT_F32, 2, dims);
    return AIT_OK;
}

/* The output column of the n-gram tok[0], tok[step], ... of length n, or -1.
 * N-grams are numbered in pool order: all 1-grams, then all 2-grams, ... */
static int64_t ngram_column(const ngram_pool *p, int n, const int64_t *tok, int64_t step)
{
    if (n > p->n_counts) return -1;
    int64_t first = 0; /* number of the first n-gram of length n */
    for (int m = 1; m < n; m++) {
        int64_t end = m < p->n_counts ? p->counts[m] : p->n_pool;
        first += (end - p->counts[m - 1]) / m;
    }
    int64_t lo = p->counts[n - 1], hi = n < p->n_counts ? p->counts[n] : p->n_pool;
    for (int64_t g = lo; g + n <= hi; g += n) {
        int k = 0;
        while (k < n && p->pool[g + k] == tok[k * step]) k++;
        if (k == n) {
            int64_t j = first + (g - lo) / n;
            return j < p->n_idx ? p->indexes[j] : -1;
        }
    }
    return -1;
}

static ait_status tfidf_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    ngram_pool p;
    int64_t w;
    TRY(pool_get(c, &p, &w));
    int64_t min_n = attr_int(c->n, "min_gram_length", 1), max_n = attr_int(c->n, "max_gram_length", 1);
    int64_t max_skip = attr_int(c->n, "max_skip_count", 0);
    const char *mode = attr_str(c->n, "mode", "TF");
    int nw;
    const float *weights = attr_floats(c->n, "weights", &nw);
    if (min_n < 1 || max_n < min_n || max_skip < 0)
        return err_set(c->err, AIT_E_INVALID_ARG, "gram lengths %lld..%lld or skip %lld are invalid",
                       (long long)min_n, (long long)max_n, (long long)max_skip);
    bool tf = !strcmp(mode, "TF"), idf = !strcmp(mode, "IDF"), tfidf = !strcmp(mode, "TFIDF");
    if (!tf && !idf && !tfidf)
        return err_set(c->err, AIT_E_INVALID_ARG, "mode '%s' is not TF, IDF or TFIDF", mode);
    int64_t rows = x->rank == 2 ? x->dims[0] : 1, len = x->dims[x->rank - 1];
    size_t bytes[3] = {sizeof(int64_t) * (size_t)(len + 1), 0, 0};
    if (p.strs) bytes[1] = bytes[2] = sizeof(int64_t) * (size_t)p.n_pool;
    void *parts[3];
    TRY(op_scratch_parts(c, 3, bytes, parts));
    int64_t *tok = parts[0], *ids = parts[1], *order = parts[2];
    if (p.strs) {
        strs_order(p.strs, p.n_pool, order);
        for (int64_t k = 0; k < p.n_pool; k++)
            ids[k] = strs_find(p.strs, order, p.n_pool, p.strs[k], false);
        p.pool = ids;
    }
    float *out = y->data;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < len; i++)
            tok[i] = p.strs ? strs_find(p.strs, order, p.n_pool, tensor_str(x, r * len + i),
                                        false)
                            : elem_get_i64(x->data, x->dtype, r * len + i);
        float *row = out + r * w;
        for (int64_t start = 0; start < len; start++) {
            for (int64_t n = min_n; n <= max_n; n++) {
                /* A 1-gram is the same whatever the skip: count it once. */
                int64_t skips = n == 1 ? 0 : max_skip;
                for (int64_t s = 0; s <= skips; s++) {
                    int64_t step = s + 1;
                    if (start + (n - 1) * step >= len) break;
                    int64_t col = ngram_column(&p, (int)n, tok + start, step);
                    if (col >= 0) row[col] += 1;
                }
            }
        }
        for (int64_t k = 0; k < w; k++) {
            float wt = weights && k < nw ? weights[k] : 1;
            if (idf) row[k] = row[k] > 0 ? wt : 0;
            else if (tfidf) row[k] *= wt;
        }
    }
    return AIT_OK;
}

/* counts into its output (OP_ZERO_OUTPUTS) */
OP_TABLE(text, {"TfIdfVectorizer", 1, 1, 1, 1, OP_STR_OWNS | OP_ZERO_OUTPUTS, tfidf_infer,
                tfidf_run});

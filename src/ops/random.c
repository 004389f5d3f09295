/* Random ops: RandomNormal, RandomNormalLike, RandomUniform,
 * RandomUniformLike (opsets 1, 22), Bernoulli (15, 22) and Multinomial (7,
 * 22). All are OP_NONDETERMINISTIC: the executor never folds them.
 *
 * The generator is counter-based: draw i of a stream is splitmix64's output
 * function applied to key + i * golden ratio, so any draw is computed from
 * (key, i) alone, with no sequential state to share or lock.
 *
 * - With a `seed` attribute the key comes from the seed and every run of
 *   the node starts at draw 0: the same values on every run, in every
 *   session and thread (as onnx's reference, which reseeds numpy per call).
 * - Without one, the node's stream lives in its scratch block (op_scratch):
 *   a key drawn from the clocks and the block's address at the node's first
 *   run, and the next unused draw, advanced by each run. The scratch block
 *   belongs to one execution context (executor), and a context runs on one
 *   thread at a time, so the state needs no lock and no global; two nodes,
 *   or two contexts of one session, get different blocks and so different
 *   keys. Each run continues the stream: runs differ.
 * The values cannot match numpy's generator (the onnx node tests'
 * expectations); tests/unit/test_random.c checks shapes, seeding and
 * statistics instead. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/timer.h"
#include "ops/op.h"

#define CHUNK 256
#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* ---- the generator ------------------------------------------------------ */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

typedef struct stream {
    uint64_t key, next; /* draw `next` is the first this run uses */
} stream;

/* The node's persistent state in its scratch block (zeroed when the block
 * is first made, so `live` says whether the key was drawn). */
typedef struct stream_state {
    uint64_t key, next, live;
} stream_state;

/* The stream for this run, reserving `draws` draws. st: the node's state
 * (in scratch), used only without a seed. */
static ait_status stream_open(op_ctx *c, stream_state *st, uint64_t draws, stream *s)
{
    const attr *a = node_attr(c->n, "seed");
    if (a) {
        if (a->type != ATTR_FLOAT && a->type != ATTR_INT)
            return err_set(c->err, AIT_E_INVALID_ARG, "seed must be a number");
        double v = a->type == ATTR_FLOAT ? (double)a->f : (double)a->i;
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        s->key = mix64(bits ^ UINT64_C(0x5eed5eed5eed5eed));
        s->next = 0;
        return AIT_OK;
    }
    if (!st->live) {
        st->key = mix64((uint64_t)clock_ns(CLOCK_REALTIME) ^ mix64((uint64_t)clock_ns(CLOCK_MONOTONIC)) ^
                        mix64((uint64_t)(uintptr_t)st));
        st->next = 0;
        st->live = 1;
    }
    s->key = st->key;
    s->next = st->next;
    st->next += draws;
    return AIT_OK;
}

static inline uint64_t draw(const stream *s, uint64_t i)
{
    return mix64(s->key + (s->next + i) * GOLDEN);
}

/* Uniform in [0, 1) and in (0, 1], 53 bits. */
static inline double unit(uint64_t r) { return (double)(r >> 11) * 0x1p-53; }
static inline double unit_open0(uint64_t r) { return (double)((r >> 11) + 1) * 0x1p-53; }

/* ---- shared checks -------------------------------------------------------- */

/* The output dtype of the distribution ops: the dtype attribute or dflt
 * (AIT_UNDEFINED: none; then the input's, which must be a float type). */
static ait_status float_dtype(op_ctx *c, ait_dtype dflt, ait_dtype *dt)
{
    const attr *a = node_attr(c->n, "dtype");
    ait_dtype d = a ? (ait_dtype)a->i : dflt;
    if (a && a->type != ATTR_INT) return err_set(c->err, AIT_E_INVALID_ARG, "dtype must be an int");
    if (!a && dflt == AIT_UNDEFINED) {
        d = c->in[0]->dtype;
        if (!dtype_is_float(d))
            return err_set(c->err, AIT_E_DTYPE,
                           "input is %s: without a dtype attribute the output takes the input's "
                           "dtype, which must be a float type",
                           ait_dtype_name(d));
    }
    if (!dtype_is_float(d))
        return err_set(c->err, AIT_E_DTYPE, "dtype %d is not a float type (float16, float, "
                       "double, bfloat16)", (int)d);
    *dt = d;
    return AIT_OK;
}

/* Shape of RandomNormal / RandomUniform: the shape attribute. */
static ait_status shape_attr(op_ctx *c, int *rank, int64_t *dims)
{
    int n;
    const int64_t *s = attr_ints(c->n, "shape", &n);
    if (!s) return err_set(c->err, AIT_E_INVALID_ARG, "the shape attribute is required");
    if (n > AIT_MAX_RANK)
        return err_set(c->err, AIT_E_UNSUPPORTED, "shape has rank %d, at most %d supported", n,
                       AIT_MAX_RANK);
    for (int i = 0; i < n; i++) {
        if (s[i] < 0)
            return err_set(c->err, AIT_E_INVALID_ARG, "shape[%d] = %lld is negative", i,
                           (long long)s[i]);
        dims[i] = s[i];
    }
    *rank = n;
    return AIT_OK;
}

/* ---- RandomNormal, RandomUniform (and their Like forms) ------------------- */

static ait_status dist_infer(op_ctx *c)
{
    ait_dtype dt;
    if (c->n_in == 0) { /* RandomNormal, RandomUniform */
        int rank = 0;
        int64_t dims[AIT_MAX_RANK];
        TRY(shape_attr(c, &rank, dims));
        TRY(float_dtype(c, AIT_F32, &dt));
        set_out(c, 0, dt, rank, dims);
        return AIT_OK;
    }
    TRY(need_in(c, 0, "input"));
    TRY(float_dtype(c, AIT_UNDEFINED, &dt));
    set_out(c, 0, dt, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

/* Fills y from the stream: normal(a = mean, b = scale) or uniform(a = low,
 * b = high). A normal pair (Box-Muller) takes draws 2k and 2k+1 and gives
 * elements 2k and 2k+1. */
static ait_status dist_fill(op_ctx *c, bool normal, double a, double b)
{
    tensor *y = c->out[0];
    int64_t n = tensor_numel(y);
    uint64_t draws = normal ? (uint64_t)(n + 1) / 2 * 2 : (uint64_t)n;
    stream_state *st = op_scratch(c, sizeof *st);
    if (!st) return AIT_E_NOMEM;
    stream s;
    TRY(stream_open(c, st, draws, &s));
    size_t es = ait_dtype_size(y->dtype);
    double buf[CHUNK];
    for (int64_t o = 0; o < n; o += CHUNK) {
        int64_t len = n - o < CHUNK ? n - o : CHUNK;
        for (int64_t i = 0; i < len; i++) {
            uint64_t k = (uint64_t)(o + i);
            if (normal) {
                uint64_t p = k & ~(uint64_t)1;
                double r = sqrt(-2 * log(unit_open0(draw(&s, p))));
                double t = 2 * M_PI * unit(draw(&s, p + 1));
                buf[i] = a + b * r * (k & 1 ? sin(t) : cos(t));
            } else {
                buf[i] = a + (b - a) * unit(draw(&s, k));
            }
        }
        TRY(convert_elems(buf, AIT_F64, (char *)y->data + o * es, y->dtype, len, c->err));
    }
    return AIT_OK;
}

static ait_status normal_run(op_ctx *c)
{
    return dist_fill(c, true, attr_float(c->n, "mean", 0), attr_float(c->n, "scale", 1));
}

static ait_status uniform_run(op_ctx *c)
{
    return dist_fill(c, false, attr_float(c->n, "low", 0), attr_float(c->n, "high", 1));
}

/* ---- Bernoulli ------------------------------------------------------------ */

static ait_status bern_infer(op_ctx *c)
{
    TRY(need_in(c, 0, "input"));
    const tensor *x = c->in[0];
    TRY(check_float(c, x, "input"));
    const attr *a = node_attr(c->n, "dtype");
    ait_dtype dt = a ? (ait_dtype)a->i : x->dtype;
    if (!dtype_is_float(dt) && !dtype_is_int(dt) && dt != AIT_BOOL)
        return err_set(c->err, AIT_E_DTYPE, "dtype %d is not a numeric or bool type", (int)dt);
    set_out(c, 0, dt, x->rank, x->dims);
    return AIT_OK;
}

static ait_status bern_run(op_ctx *c)
{
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    int64_t n = tensor_numel(x);
    stream_state *st = op_scratch(c, sizeof *st);
    if (!st) return AIT_E_NOMEM;
    stream s;
    TRY(stream_open(c, st, (uint64_t)n, &s));
    size_t es = ait_dtype_size(y->dtype);
    double buf[CHUNK];
    for (int64_t o = 0; o < n; o += CHUNK) {
        int64_t len = n - o < CHUNK ? n - o : CHUNK;
        for (int64_t i = 0; i < len; i++) {
            double p = elem_get_f64(x->data, x->dtype, o + i);
            if (!(p >= 0 && p <= 1))
                return err_set(c->err, AIT_E_INVALID_ARG,
                               "input[%lld] = %g is not a probability in [0, 1]",
                               (long long)(o + i), p);
            buf[i] = unit(draw(&s, (uint64_t)(o + i))) < p;
        }
        TRY(convert_elems(buf, AIT_F64, (char *)y->data + o * es, y->dtype, len, c->err));
    }
    return AIT_OK;
}

/* ---- Multinomial ---------------------------------------------------------- */

static ait_status multi_params(op_ctx *c, int64_t *samples, ait_dtype *dt)
{
    TRY(need_in(c, 0, "input"));
    const tensor *x = c->in[0];
    TRY(check_float(c, x, "input"));
    if (x->rank != 2)
        return err_set(c->err, AIT_E_SHAPE, "input must be [batch_size, class_size], not rank %d",
                       x->rank);
    *dt = (ait_dtype)attr_int(c->n, "dtype", AIT_I32);
    if (*dt != AIT_I32 && *dt != AIT_I64)
        return err_set(c->err, AIT_E_DTYPE, "dtype %d is not int32 (6) or int64 (7)", (int)*dt);
    *samples = attr_int(c->n, "sample_size", 1);
    if (*samples < 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "sample_size %lld must be at least 1",
                       (long long)*samples);
    return AIT_OK;
}

static ait_status multi_infer(op_ctx *c)
{
    int64_t samples;
    ait_dtype dt;
    TRY(multi_params(c, &samples, &dt));
    int64_t d[2] = {c->in[0]->dims[0], samples};
    set_out(c, 0, dt, 2, d);
    return AIT_OK;
}

static ait_status multi_run(op_ctx *c)
{
    int64_t S;
    ait_dtype dt;
    TRY(multi_params(c, &S, &dt));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    int64_t B = x->dims[0], K = x->dims[1];
    if (B == 0) return AIT_OK;
    if (K == 0) return err_set(c->err, AIT_E_SHAPE, "class_size is 0: nothing to sample");
    /* the state first, so that a bigger cdf for another shape (a new,
     * zeroed block) only restarts the stream with a fresh key */
    size_t bytes[2] = {sizeof(stream_state), (size_t)K * sizeof(double)};
    void *p[2];
    TRY(op_scratch_parts(c, 2, bytes, p));
    stream s;
    TRY(stream_open(c, p[0], (uint64_t)(B * S), &s));
    double *cdf = p[1];
    for (int64_t b = 0; b < B; b++) {
        /* probabilities exp(x - max), accumulated */
        double m = -INFINITY;
        for (int64_t k = 0; k < K; k++) m = fmax(m, elem_get_f64(x->data, x->dtype, b * K + k));
        double acc = 0;
        for (int64_t k = 0; k < K; k++) {
            acc += exp(elem_get_f64(x->data, x->dtype, b * K + k) - m);
            cdf[k] = acc;
        }
        if (!(acc > 0) || !isfinite(acc))
            return err_set(c->err, AIT_E_INVALID_ARG,
                           "row %lld of input has no finite log-probability to sample from",
                           (long long)b);
        for (int64_t j = 0; j < S; j++) {
            double t = unit(draw(&s, (uint64_t)(b * S + j))) * acc;
            int64_t lo = 0, hi = K - 1; /* the first class whose cdf exceeds t */
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (cdf[mid] > t) hi = mid;
                else lo = mid + 1;
            }
            if (dt == AIT_I32) ((int32_t *)y->data)[b * S + j] = (int32_t)lo;
            else ((int64_t *)y->data)[b * S + j] = lo;
        }
    }
    return AIT_OK;
}

#define RANDOM_DEF(nm, in_lo, in_hi, inf, rn)                                                  \
    {.name = nm, .min_in = in_lo, .max_in = in_hi, .min_out = 1, .max_out = 1,                \
     .flags = OP_NONDETERMINISTIC, .infer = inf, .run = rn}

OP_TABLE(random,
         RANDOM_DEF("RandomNormal", 0, 0, dist_infer, normal_run),
         RANDOM_DEF("RandomNormalLike", 1, 1, dist_infer, normal_run),
         RANDOM_DEF("RandomUniform", 0, 0, dist_infer, uniform_run),
         RANDOM_DEF("RandomUniformLike", 1, 1, dist_infer, uniform_run),
         RANDOM_DEF("Bernoulli", 1, 1, bern_infer, bern_run),
         RANDOM_DEF("Multinomial", 1, 1, multi_infer, multi_run));

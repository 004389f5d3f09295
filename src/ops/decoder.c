/* Element-wise building blocks of transformer decoders added in opsets 23
 * to 28: RotaryEmbedding (23) and SwiGLU (28). Both compute in double and
 * round once into the output, whatever the float dtype. */
#include <math.h>
#include <string.h>

#include "ops/op.h"

/* ---- RotaryEmbedding ------------------------------------------------------ */

typedef struct rope {
    bool packed;   /* X is (batch, seq, heads * head_size) */
    int64_t B, H, S, hd, rd; /* rd: rotated leading part of each head */
    bool interleaved, pos;   /* pos: position_ids given */
    int64_t npos;            /* rows of the caches when indexed by position */
} rope;

static ait_status rope_params(op_ctx *c, rope *p)
{
    static const char *const names[] = {"X", "cos_cache", "sin_cache"};
    for (int i = 0; i < 3; i++) {
        TRY(need_in(c, i, names[i]));
        TRY(check_dtype(c, c->in[i], names[i], 3, AIT_F32, AIT_F16, AIT_BF16));
        if (c->in[i]->dtype != c->in[0]->dtype)
            return err_set(c->err, AIT_E_DTYPE, "%s is %s but X is %s", names[i],
                           ait_dtype_name(c->in[i]->dtype), ait_dtype_name(c->in[0]->dtype));
    }
    const tensor *x = c->in[0], *cs = c->in[1], *sn = c->in[2];
    memset(p, 0, sizeof *p);
    p->interleaved = attr_int(c->n, "interleaved", 0) != 0;
    if (x->rank == 4) {
        p->B = x->dims[0];
        p->H = x->dims[1];
        p->S = x->dims[2];
        p->hd = x->dims[3];
    } else if (x->rank == 3) {
        p->packed = true;
        p->H = attr_int(c->n, "num_heads", 0);
        if (p->H < 1)
            return err_set(c->err, AIT_E_INVALID_ARG, "3-D X needs a positive num_heads");
        p->B = x->dims[0];
        p->S = x->dims[1];
        if (x->dims[2] % p->H)
            return err_set(c->err, AIT_E_SHAPE, "hidden size %lld is not a multiple of "
                           "num_heads %lld", (long long)x->dims[2], (long long)p->H);
        p->hd = x->dims[2] / p->H;
    } else {
        return err_set(c->err, AIT_E_SHAPE, "X must have rank 3 or 4, not %d", x->rank);
    }
    p->rd = attr_int(c->n, "rotary_embedding_dim", 0);
    if (p->rd == 0) p->rd = p->hd;
    if (p->rd < 0 || p->rd > p->hd || p->rd % 2)
        return err_set(c->err, AIT_E_INVALID_ARG, "rotary_embedding_dim %lld must be even and at "
                       "most the head size %lld", (long long)p->rd, (long long)p->hd);
    p->pos = has_in(c, 3);
    int64_t half = p->rd / 2;
    for (int i = 1; i < 3; i++) {
        const tensor *t = i == 1 ? cs : sn;
        char s[128];
        if (p->pos ? t->rank != 2 || t->dims[1] != half
                   : t->rank != 3 || t->dims[0] != p->B || t->dims[1] != p->S ||
                         t->dims[2] != half)
            return err_set(c->err, AIT_E_SHAPE, "%s has shape %s, expected %s with last "
                           "dimension %lld (rotary dim / 2)", names[i],
                           shape_str(t->dims, t->rank, s, sizeof s),
                           p->pos ? "(max_position + 1, d)" : "(batch, seq, d)", (long long)half);
    }
    if (cs->dims[0] != sn->dims[0])
        return err_set(c->err, AIT_E_SHAPE, "cos_cache and sin_cache have different shapes");
    if (p->pos) {
        const tensor *pi = c->in[3];
        if (pi->dtype != AIT_I64)
            return err_set(c->err, AIT_E_DTYPE, "position_ids must be int64, not %s",
                           ait_dtype_name(pi->dtype));
        if (pi->rank != 2 || pi->dims[0] != p->B || pi->dims[1] != p->S)
            return err_set(c->err, AIT_E_SHAPE, "position_ids must have shape (%lld, %lld)",
                           (long long)p->B, (long long)p->S);
        p->npos = cs->dims[0];
    }
    return AIT_OK;
}

static ait_status rope_infer(op_ctx *c)
{
    rope p;
    TRY(rope_params(c, &p));
    set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return AIT_OK;
}

static ait_status rope_run(op_ctx *c)
{
    rope p;
    TRY(rope_params(c, &p));
    const tensor *x = c->in[0], *tc = c->in[1], *ts = c->in[2];
    const int64_t *pid = p.pos ? c->in[3]->data : NULL;
    tensor *y = c->out[0];
    int64_t n = tensor_numel(x), nc = tensor_numel(tc);
    size_t bytes[4] = {(size_t)n * 8, (size_t)n * 8, (size_t)nc * 8, (size_t)nc * 8};
    void *q[4];
    TRY(op_scratch_parts(c, 4, bytes, q));
    double *xs = q[0], *ys = q[1], *cs = q[2], *sn = q[3];
    TRY(convert_elems(x->data, x->dtype, xs, AIT_F64, n, c->err));
    TRY(convert_elems(tc->data, tc->dtype, cs, AIT_F64, nc, c->err));
    TRY(convert_elems(ts->data, ts->dtype, sn, AIT_F64, nc, c->err));
    memcpy(ys, xs, (size_t)n * sizeof *ys); /* the part past rd is not rotated */
    int64_t half = p.rd / 2;
    for (int64_t b = 0; b < p.B; b++)
        for (int64_t s = 0; s < p.S; s++) {
            int64_t row = b * p.S + s;
            if (pid) {
                row = pid[b * p.S + s];
                if (row < 0 || row >= p.npos)
                    return err_set(c->err, AIT_E_INVALID_ARG, "position_ids[%lld][%lld] = %lld "
                                   "is outside the caches' %lld rows", (long long)b,
                                   (long long)s, (long long)row, (long long)p.npos);
            }
            const double *cr = cs + row * half, *sr = sn + row * half;
            for (int64_t h = 0; h < p.H; h++) {
                int64_t o = p.packed ? (b * p.S + s) * p.H * p.hd + h * p.hd
                                     : ((b * p.H + h) * p.S + s) * p.hd;
                const double *xi = xs + o;
                double *yo = ys + o;
                for (int64_t i = 0; i < half; i++) {
                    /* the pair rotated together: halves, or neighbours */
                    int64_t i1 = p.interleaved ? 2 * i : i, i2 = p.interleaved ? 2 * i + 1 : i + half;
                    double x1 = xi[i1], x2 = xi[i2];
                    yo[i1] = cr[i] * x1 - sr[i] * x2;
                    yo[i2] = sr[i] * x1 + cr[i] * x2;
                }
            }
        }
    return convert_elems(ys, AIT_F64, y->data, y->dtype, n, c->err);
}

/* ---- SwiGLU --------------------------------------------------------------- */

/* Y = Swish_alpha(A) * B = A * sigmoid(alpha * A) * B; A and B have one
 * shape (no broadcasting). */
static ait_status swiglu_infer(op_ctx *c)
{
    const tensor *a = c->in[0], *b = c->in[1];
    TRY(check_float(c, a, "A"));
    if (b->dtype != a->dtype)
        return err_set(c->err, AIT_E_DTYPE, "B is %s but A is %s", ait_dtype_name(b->dtype),
                       ait_dtype_name(a->dtype));
    if (a->rank != b->rank || memcmp(a->dims, b->dims, (size_t)a->rank * sizeof *a->dims)) {
        char s1[128], s2[128];
        return err_set(c->err, AIT_E_SHAPE, "A %s and B %s must have the same shape",
                       shape_str(a->dims, a->rank, s1, sizeof s1),
                       shape_str(b->dims, b->rank, s2, sizeof s2));
    }
    set_out(c, 0, a->dtype, a->rank, a->dims);
    return AIT_OK;
}

static ait_status swiglu_run(op_ctx *c)
{
    const tensor *a = c->in[0], *b = c->in[1];
    int64_t n = tensor_numel(a);
    size_t bytes[2] = {(size_t)n * 8, (size_t)n * 8};
    void *q[2];
    TRY(op_scratch_parts(c, 2, bytes, q));
    double *x = q[0], *g = q[1];
    TRY(convert_elems(a->data, a->dtype, x, AIT_F64, n, c->err));
    TRY(convert_elems(b->data, b->dtype, g, AIT_F64, n, c->err));
    double alpha = attr_float(c->n, "alpha", 1.0f);
    for (int64_t i = 0; i < n; i++) x[i] = x[i] / (1 + exp(-alpha * x[i])) * g[i];
    return convert_elems(x, AIT_F64, c->out[0]->data, a->dtype, n, c->err);
}

OP_TABLE(decoder, OP_DEF("RotaryEmbedding", 3, 4, 1, 1, rope_infer, rope_run),
         OP_DEF("SwiGLU", 2, 2, 1, 1, swiglu_infer, swiglu_run));

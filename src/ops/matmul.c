/* Matrix products: MatMul, Gemm, Einsum, MatMulInteger.
 *
 * All of them end in the kernels of matmul_ref.h: float16/bfloat16 are
 * computed in float32, integers modulo 2^32 / 2^64 (which wraps exactly like
 * numpy for every integer width). Einsum contracts its operands pairwise,
 * each pair as a batched matrix product after permuting the operands into
 * [batch, M, K] x [batch, K, N]. */
#include <string.h>

#include "ops/matmul_ref.h"

/* ---- MatMul ------------------------------------------------------------- */

static ait_status check_mm_dtype(op_ctx *c, const tensor *t, const char *what)
{
    return check_dtype(c, t, what, 8, AIT_F32, AIT_F64, AIT_F16, AIT_BF16, AIT_I32, AIT_I64,
                       AIT_U32, AIT_U64);
}

static ait_status same_dtype(op_ctx *c, const tensor *a, const tensor *b, const char *what)
{
    if (a->dtype != b->dtype)
        return err_set(c->err, AIT_E_DTYPE, "%s is %s but A is %s", what, ait_dtype_name(b->dtype),
                       ait_dtype_name(a->dtype));
    return AIT_OK;
}

static ait_status matmul_infer(op_ctx *c)
{
    const tensor *a = c->in[0], *b = c->in[1];
    TRY(check_mm_dtype(c, a, "A"));
    TRY(same_dtype(c, a, b, "B"));
    mm_shape s;
    TRY(mm_shape_make(c, a, b, &s));
    set_out(c, 0, a->dtype, s.rank, s.dims);
    return AIT_OK;
}

static ait_status matmul_run(op_ctx *c)
{
    const tensor *a = c->in[0], *b = c->in[1];
    tensor *y = c->out[0];
    mm_shape s;
    TRY(mm_shape_make(c, a, b, &s));
    mm_dom d = MD_F32;
    mm_dom_of(a->dtype, &d);
    if (mm_dom_native(a->dtype)) {
        mm_run(d, &s, a->data, b->data, y->data);
        return AIT_OK;
    }
    /* float16 / bfloat16: through float32 copies */
    int64_t na = tensor_numel(a), nb = tensor_numel(b), ny = tensor_numel(y);
    scratch_layout bp = {0};
    void *pa, *pb, *py;
    for (int pass = 0;; pass++) {
        pa = scratch_take(&bp, na, 4);
        pb = scratch_take(&bp, nb, 4);
        py = scratch_take(&bp, ny, 4);
        if (pass) break;
        TRY(scratch_commit(c, &bp));
    }
    mm_load(a->data, a->dtype, pa, na);
    mm_load(b->data, b->dtype, pb, nb);
    mm_run(d, &s, pa, pb, py);
    mm_store(py, y->data, y->dtype, ny);
    return AIT_OK;
}

/* ---- Gemm --------------------------------------------------------------- */

static ait_status gemm_dims(op_ctx *c, int64_t *M, int64_t *N, int64_t *K)
{
    const tensor *a = c->in[0], *b = c->in[1];
    if (a->rank != 2 || b->rank != 2)
        return err_set(c->err, AIT_E_SHAPE, "A and B must be 2-D (got rank %d and %d)", a->rank,
                       b->rank);
    bool ta = attr_int(c->n, "transA", 0) != 0, tb = attr_int(c->n, "transB", 0) != 0;
    *M = a->dims[ta ? 1 : 0];
    *K = a->dims[ta ? 0 : 1];
    int64_t kb = b->dims[tb ? 1 : 0];
    *N = b->dims[tb ? 0 : 1];
    if (kb != *K) {
        char sa[64], sb[64];
        return err_set(c->err, AIT_E_SHAPE, "A %s%s and B %s%s do not multiply",
                       shape_str(a->dims, 2, sa, sizeof sa), ta ? " (transposed)" : "",
                       shape_str(b->dims, 2, sb, sizeof sb), tb ? " (transposed)" : "");
    }
    if (has_in(c, 2)) {
        const tensor *ct = c->in[2];
        int64_t mn[2] = {*M, *N};
        bool ok = ct->rank <= 2;
        for (int i = 0; ok && i < ct->rank; i++) {
            int64_t want = mn[i + 2 - ct->rank];
            ok = ct->dims[i] == want || ct->dims[i] == 1;
        }
        if (!ok) {
            char sc[128];
            return err_set(c->err, AIT_E_SHAPE, "C of shape %s does not broadcast to [%lld,%lld]",
                           shape_str(ct->dims, ct->rank, sc, sizeof sc), (long long)*M,
                           (long long)*N);
        }
    }
    return AIT_OK;
}

static ait_status gemm_infer(op_ctx *c)
{
    TRY(check_mm_dtype(c, c->in[0], "A"));
    TRY(same_dtype(c, c->in[0], c->in[1], "B"));
    if (has_in(c, 2)) TRY(same_dtype(c, c->in[0], c->in[2], "C"));
    int64_t dims[2], K;
    TRY(gemm_dims(c, &dims[0], &dims[1], &K));
    set_out(c, 0, c->in[0]->dtype, 2, dims);
    return AIT_OK;
}

/* dst[c][r] = src[r][c] for elements of es bytes, in cache-sized tiles. */
static void transpose(void *dst, const void *src, int64_t rows, int64_t cols, size_t es)
{
    enum { T = 32 };
    uint32_t *d4 = dst;
    uint64_t *d8 = dst;
    const uint32_t *s4 = src;
    const uint64_t *s8 = src;
    for (int64_t r0 = 0; r0 < rows; r0 += T)
        for (int64_t c0 = 0; c0 < cols; c0 += T) {
            int64_t r1 = r0 + T < rows ? r0 + T : rows, c1 = c0 + T < cols ? c0 + T : cols;
            for (int64_t r = r0; r < r1; r++)
                for (int64_t q = c0; q < c1; q++) {
                    if (es == 4) d4[q * rows + r] = s4[r * cols + q];
                    else d8[q * rows + r] = s8[r * cols + q];
                }
        }
}

/* y = alpha * y + beta * C, C read through broadcast strides cs. */
#define GEMM_EPILOGUE(T)                                                                   \
    do {                                                                                   \
        T *yy = py;                                                                        \
        const T *cc = pc;                                                                  \
        for (int64_t i = 0; i < M; i++)                                                    \
            for (int64_t j = 0; j < N; j++) {                                              \
                T v = yy[i * N + j];                                                       \
                if (alpha != 1) v = (T)alpha * v;                                          \
                if (cc) v += (T)beta * cc[i * cs[0] + j * cs[1]];                          \
                yy[i * N + j] = v;                                                         \
            }                                                                              \
    } while (0)

/* Integers: exact when alpha is 1 and beta 0 or 1, otherwise through double. */
static void gemm_epilogue_int(ait_dtype t, void *py, const void *pc, const int64_t *cs,
                              int64_t M, int64_t N, double alpha, double beta)
{
    bool wide = t == AIT_I64 || t == AIT_U64, sgn = dtype_is_signed(t);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            int64_t e = i * N + j, ce = i * cs[0] + j * cs[1];
            uint64_t y = wide ? ((uint64_t *)py)[e] : ((uint32_t *)py)[e];
            uint64_t cv = !pc ? 0 : wide ? ((const uint64_t *)pc)[ce] : ((const uint32_t *)pc)[ce];
            if (alpha == 1 && (beta == 1 || beta == 0 || !pc)) {
                if (pc && beta == 1) y += cv;
            } else {
                double yd = sgn ? (wide ? (double)(int64_t)y : (double)(int32_t)y) : (double)y;
                double cd = sgn ? (wide ? (double)(int64_t)cv : (double)(int32_t)cv) : (double)cv;
                double r = alpha * yd + (pc ? beta * cd : 0);
                y = sgn ? (uint64_t)(int64_t)r : (uint64_t)r;
            }
            if (wide) ((uint64_t *)py)[e] = y;
            else ((uint32_t *)py)[e] = (uint32_t)y;
        }
}

static ait_status gemm_run(op_ctx *c)
{
    const tensor *a = c->in[0], *b = c->in[1], *ct = has_in(c, 2) ? c->in[2] : NULL;
    tensor *y = c->out[0];
    int64_t M, N, K;
    TRY(gemm_dims(c, &M, &N, &K));
    bool ta = attr_int(c->n, "transA", 0) != 0, tb = attr_int(c->n, "transB", 0) != 0;
    float alpha = attr_float(c->n, "alpha", 1.0f), beta = attr_float(c->n, "beta", 1.0f);
    if (beta == 0) ct = NULL;
    mm_dom d = MD_F32;
    mm_dom_of(a->dtype, &d);
    size_t es = mm_dom_size(d);
    bool native = mm_dom_native(a->dtype);
    int64_t na = tensor_numel(a), nb = tensor_numel(b), nc = ct ? tensor_numel(ct) : 0;
    bool dot = tb && !ta && M <= MM_NT_MAX_M; /* B as [N,K] rows: no transpose */

    scratch_layout bp = {0};
    void *pa, *pb, *pbt, *pc, *py;
    for (int pass = 0;; pass++) {
        pa = native ? a->data : scratch_take(&bp, na, es);
        pb = native ? b->data : scratch_take(&bp, nb, es);
        pbt = tb && !dot ? scratch_take(&bp, nb, es) : pb;
        pc = !ct ? NULL : native ? ct->data : scratch_take(&bp, nc, es);
        py = native ? y->data : scratch_take(&bp, M * N, es);
        if (pass) break;
        if (native && (!tb || dot)) break;
        TRY(scratch_commit(c, &bp));
    }
    if (!native) {
        mm_load(a->data, a->dtype, pa, na);
        mm_load(b->data, b->dtype, pb, nb);
        if (ct) mm_load(ct->data, ct->dtype, pc, nc);
    }
    if (dot) {
        mm_gemm_nt(d, M, N, K, pa, pb, py);
    } else {
        if (tb) transpose(pbt, pb, N, K, es); /* B is [N,K]: the kernel wants [K,N] */
        /* A's element (i,k) is at i*K + k, or at k*M + i when A is given as [K,M] */
        mm_gemm(d, M, N, K, pa, ta ? 1 : K, ta ? M : 1, pbt, N, py, N);
    }

    int64_t cs[2] = {0, 0};
    if (ct) {
        int64_t mn[2] = {M, N};
        bcast_strides(ct, 2, mn, cs);
    }
    if (alpha != 1 || ct) {
        switch (d) {
        case MD_F32: GEMM_EPILOGUE(float); break;
        case MD_F64: GEMM_EPILOGUE(double); break;
        default: gemm_epilogue_int(a->dtype, py, pc, cs, M, N, alpha, beta); break;
        }
    }
    if (!native) mm_store(py, y->data, y->dtype, M * N);
    return AIT_OK;
}

/* ---- Einsum --------------------------------------------------------------
 * Labels: 'A'-'Z' are 0-25 and 'a'-'z' 26-51 (so label order is ASCII
 * order, which the implicit output uses); the dims an ellipsis stands for
 * are labels 52.., right-aligned across operands as in numpy broadcasting. */
#define EIN_LETTERS 52
#define EIN_LABELS (EIN_LETTERS + AIT_MAX_RANK)
#define EIN_MAXOPS 32

typedef struct ein {
    int n;                             /* operands */
    int axl[EIN_MAXOPS][AIT_MAX_RANK]; /* label of each axis of each operand */
    int nout, out[AIT_MAX_RANK];       /* output labels */
    int64_t size[EIN_LABELS];          /* extent of each label (-1: unused) */
} ein;

/* An operand as a strided view over its distinct labels (a repeated label,
 * i.e. a diagonal, gets the sum of its axes' strides; a broadcast one 0). */
typedef struct ein_view {
    int nl;
    int lab[EIN_LABELS];
    int64_t str[EIN_LABELS];
    const void *data;
} ein_view;

static int ein_letter(char ch)
{
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return 26 + ch - 'a';
    return -1;
}

/* Parses one term: its letters (up to max) and where its ellipsis is (-1: none). */
static ait_status ein_term(op_ctx *c, const char *t, int max, int *lab, int *nlab, int *ell)
{
    *nlab = 0;
    *ell = -1;
    for (const char *p = t; *p; p++) {
        if (*p == '.') {
            if (strncmp(p, "...", 3) != 0 || *ell >= 0)
                return err_set(c->err, AIT_E_INVALID_ARG, "bad ellipsis in einsum term '%s'", t);
            *ell = *nlab;
            p += 2;
            continue;
        }
        int l = ein_letter(*p);
        if (l < 0)
            return err_set(c->err, AIT_E_INVALID_ARG, "bad character '%c' in einsum term '%s'",
                           *p, t);
        if (*nlab >= max)
            return err_set(c->err, AIT_E_SHAPE, "einsum term '%s' has more labels than rank %d", t,
                           max);
        lab[(*nlab)++] = l;
    }
    return AIT_OK;
}

static ait_status ein_parse(op_ctx *c, ein *e)
{
    const char *eq = attr_str(c->n, "equation", NULL);
    if (!eq) return err_set(c->err, AIT_E_INVALID_ARG, "attribute 'equation' is missing");
    char buf[1024];
    size_t len = 0;
    for (const char *p = eq; *p; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\n') continue;
        if (len + 1 >= sizeof buf) return err_set(c->err, AIT_E_INVALID_ARG, "equation too long");
        buf[len++] = *p;
    }
    buf[len] = 0;
    char *rhs = strstr(buf, "->");
    if (rhs) {
        *rhs = 0;
        rhs += 2;
    }
    /* split the inputs on ',' */
    char *term[EIN_MAXOPS];
    int nt = 0;
    for (char *p = buf;;) {
        char *comma = strchr(p, ',');
        if (nt >= EIN_MAXOPS) return err_set(c->err, AIT_E_UNSUPPORTED, "too many einsum operands");
        term[nt++] = p;
        if (!comma) break;
        *comma = 0;
        p = comma + 1;
    }
    if (nt != c->n_in)
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "equation '%s' has %d operands but the node has %d inputs", eq, nt, c->n_in);
    e->n = nt;
    for (int l = 0; l < EIN_LABELS; l++) e->size[l] = -1;
    int count[EIN_LABELS] = {0}, E = 0, ell_rank[EIN_MAXOPS];
    int lab[EIN_MAXOPS][AIT_MAX_RANK], nlab[EIN_MAXOPS], ell[EIN_MAXOPS];
    for (int i = 0; i < nt; i++) {
        if (!has_in(c, i)) return err_set(c->err, AIT_E_INVALID_ARG, "input %d is missing", i);
        int r = c->in[i]->rank;
        TRY(ein_term(c, term[i], r, lab[i], &nlab[i], &ell[i]));
        ell_rank[i] = r - nlab[i];
        if (ell[i] < 0 && ell_rank[i] != 0)
            return err_set(c->err, AIT_E_SHAPE, "einsum term '%s' does not match rank %d",
                           term[i], r);
        if (ell_rank[i] > E) E = ell_rank[i];
    }
    for (int i = 0; i < nt; i++) {
        const tensor *t = c->in[i];
        int ax = 0;
        for (int q = 0; q <= nlab[i]; q++) {
            if (q == ell[i])
                for (int k = 0; k < ell_rank[i]; k++)
                    e->axl[i][ax++] = EIN_LETTERS + E - ell_rank[i] + k;
            if (q < nlab[i]) e->axl[i][ax++] = lab[i][q];
        }
        for (ax = 0; ax < t->rank; ax++) {
            int l = e->axl[i][ax];
            int64_t dsz = t->dims[ax];
            count[l]++;
            for (int p = 0; p < ax; p++)
                if (e->axl[i][p] == l && t->dims[p] != dsz)
                    return err_set(c->err, AIT_E_SHAPE,
                                   "einsum operand %d repeats a label over dims %lld and %lld", i,
                                   (long long)t->dims[p], (long long)dsz);
            if (e->size[l] < 0 || e->size[l] == 1) e->size[l] = dsz;
            else if (dsz != e->size[l] && dsz != 1)
                return err_set(c->err, AIT_E_SHAPE,
                               "einsum dim of size %lld does not match %lld for the same label",
                               (long long)dsz, (long long)e->size[l]);
        }
    }
    e->nout = 0;
    if (rhs) {
        int olab[AIT_MAX_RANK + 1], no, oell;
        TRY(ein_term(c, rhs, AIT_MAX_RANK, olab, &no, &oell));
        if (oell >= 0 && no + E > AIT_MAX_RANK)
            return err_set(c->err, AIT_E_UNSUPPORTED, "einsum output rank exceeds %d",
                           AIT_MAX_RANK);
        for (int q = 0; q <= no; q++) {
            if (q == oell)
                for (int k = 0; k < E; k++) e->out[e->nout++] = EIN_LETTERS + k;
            if (q == no) break;
            int l = olab[q];
            if (!count[l])
                return err_set(c->err, AIT_E_INVALID_ARG, "einsum output label '%c' is in no input",
                               l < 26 ? 'A' + l : 'a' + l - 26);
            for (int p = 0; p < e->nout; p++)
                if (e->out[p] == l)
                    return err_set(c->err, AIT_E_INVALID_ARG, "einsum output repeats a label");
            e->out[e->nout++] = l;
        }
    } else { /* implicit: the broadcast dims, then the letters used once, in order */
        for (int k = 0; k < E; k++) e->out[e->nout++] = EIN_LETTERS + k;
        for (int l = 0; l < EIN_LETTERS; l++) {
            if (count[l] != 1) continue;
            if (e->nout >= AIT_MAX_RANK)
                return err_set(c->err, AIT_E_UNSUPPORTED, "einsum output rank exceeds %d",
                               AIT_MAX_RANK);
            e->out[e->nout++] = l;
        }
    }
    return AIT_OK;
}

static ait_status einsum_infer(op_ctx *c)
{
    for (int i = 0; i < c->n_in; i++) {
        if (!has_in(c, i)) return err_set(c->err, AIT_E_INVALID_ARG, "input %d is missing", i);
        TRY(check_dtype(c, c->in[i], "input", 12, AIT_F32, AIT_F64, AIT_F16, AIT_BF16, AIT_I8,
                        AIT_U8, AIT_I16, AIT_U16, AIT_I32, AIT_U32, AIT_I64, AIT_U64));
        if (c->in[i]->dtype != c->in[0]->dtype)
            return err_set(c->err, AIT_E_DTYPE, "einsum inputs mix %s and %s",
                           ait_dtype_name(c->in[0]->dtype), ait_dtype_name(c->in[i]->dtype));
    }
    ein e;
    TRY(ein_parse(c, &e));
    int64_t dims[AIT_MAX_RANK];
    for (int k = 0; k < e.nout; k++) dims[k] = e.size[e.out[k]];
    set_out(c, 0, c->in[0]->dtype, e.nout, dims);
    return AIT_OK;
}

/* State of one einsum execution. It runs twice: first with bp->base NULL
 * to size the temporaries (nothing is read or written), then for real. */
typedef struct ein_run {
    op_ctx *c;
    const ein *e;
    mm_dom d;
    size_t es;
    scratch_layout *bp;
    bool dry;
} ein_run;

static int64_t ein_numel(const ein_run *r, const int *lab, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        if (__builtin_mul_overflow(p, r->e->size[lab[i]], &p)) return -1;
    return p;
}

static int ein_find(const int *lab, int n, int l)
{
    for (int i = 0; i < n; i++)
        if (lab[i] == l) return i;
    return -1;
}

/* dst[...] (+)= src over src's label space; dstr[q] is the dst stride of
 * src label q (0 for a label summed away). */
#define EIN_INNER(T)                                                                       \
    do {                                                                                   \
        const T *s = v->data;                                                              \
        T *o = dst;                                                                        \
        if (sum)                                                                           \
            for (int64_t j = 0; j < n; j++) o[doff + j * ds] += s[soff + j * ss];          \
        else                                                                               \
            for (int64_t j = 0; j < n; j++) o[doff + j * ds] = s[soff + j * ss];           \
    } while (0)

static void ein_move(const ein_run *r, void *dst, const int64_t *dstr, const ein_view *v, bool sum)
{
    int64_t dims[EIN_LABELS], ss_[EIN_LABELS], ds_[EIN_LABELS];
    int nd = 0;
    for (int q = 0; q < v->nl; q++) {
        int64_t sz = r->e->size[v->lab[q]];
        if (sz == 0) return;
        if (sz == 1) continue; /* contributes no offset */
        dims[nd] = sz;
        ss_[nd] = v->str[q];
        ds_[nd++] = dstr[q];
    }
    if (nd == 0) {
        dims[0] = 1;
        ss_[0] = ds_[0] = 0;
        nd = 1;
    }
    int last = nd - 1;
    int64_t n = dims[last], ss = ss_[last], ds = ds_[last], idx[EIN_LABELS] = {0};
    int64_t soff = 0, doff = 0;
    for (;;) {
        switch (r->d) {
        case MD_F32: EIN_INNER(float); break;
        case MD_F64: EIN_INNER(double); break;
        case MD_U32: EIN_INNER(uint32_t); break;
        case MD_U64: EIN_INNER(uint64_t); break;
        }
        int q = last - 1;
        for (; q >= 0; q--) {
            soff += ss_[q];
            doff += ds_[q];
            if (++idx[q] < dims[q]) break;
            soff -= ss_[q] * dims[q];
            doff -= ds_[q] * dims[q];
            idx[q] = 0;
        }
        if (q < 0) break;
    }
}

/* Contiguous strides of labels `lab` in that order. */
static void ein_strides(const ein_run *r, const int *lab, int n, int64_t *str)
{
    int64_t s = 1;
    for (int i = n - 1; i >= 0; i--) {
        str[i] = s;
        s *= r->e->size[lab[i]];
    }
}

/* v rearranged into a contiguous buffer with labels `lab` (a subset of v's:
 * the others are summed). Reuses v's data when it already is that. */
static ait_status ein_reshape(ein_run *r, const ein_view *v, const int *lab, int n, ein_view *outv)
{
    int64_t cstr[EIN_LABELS], dstr[EIN_LABELS];
    ein_strides(r, lab, n, cstr);
    bool same = n == v->nl, sum = false;
    for (int q = 0; q < v->nl; q++) {
        int p = ein_find(lab, n, v->lab[q]);
        dstr[q] = p < 0 ? 0 : cstr[p];
        sum |= p < 0;
        if (p >= 0 && v->str[q] != cstr[p] && r->e->size[v->lab[q]] != 1) same = false;
    }
    outv->nl = n;
    memcpy(outv->lab, lab, sizeof(int) * (size_t)n);
    memcpy(outv->str, cstr, sizeof(int64_t) * (size_t)n);
    if (same) {
        outv->data = v->data;
        return AIT_OK;
    }
    int64_t numel = ein_numel(r, lab, n);
    void *buf = scratch_take(r->bp, numel, r->es);
    outv->data = buf;
    if (r->dry) return AIT_OK;
    if (sum) memset(buf, 0, (size_t)numel * r->es);
    ein_move(r, buf, dstr, v, sum);
    return AIT_OK;
}

/* Contracts X and Y into a contiguous view over their labels that are
 * still needed (keep[]), as [batch][M][N]: batch labels are in both and
 * kept, K labels in both and not kept, M only in X, N only in Y. For the
 * last pair (final_lab given), writes straight into `final` when the label
 * order is exactly the output's. */
static ait_status ein_pair(ein_run *r, ein_view X, ein_view Y, const bool *keep, void *final,
                           const int *final_lab, int final_n, ein_view *R, bool *wrote_final)
{
    bool inX[EIN_LABELS] = {0}, inY[EIN_LABELS] = {0};
    for (int q = 0; q < X.nl; q++) inX[X.lab[q]] = true;
    for (int q = 0; q < Y.nl; q++) inY[Y.lab[q]] = true;
    int bl[EIN_LABELS], ml[EIN_LABELS], kl[EIN_LABELS], nl[EIN_LABELS];
    int nb = 0, nm = 0, nk = 0, nn = 0;
    for (int q = 0; q < X.nl; q++) {
        int l = X.lab[q];
        if (inY[l]) {
            if (keep[l]) bl[nb++] = l;
            else kl[nk++] = l;
        } else if (keep[l]) {
            ml[nm++] = l;
        } /* else: only in X and not needed: summed while packing A */
    }
    for (int q = 0; q < Y.nl; q++)
        if (!inX[Y.lab[q]] && keep[Y.lab[q]]) nl[nn++] = Y.lab[q];

    /* A is [batch][M][K], B [batch][K][N], C [batch][M][N] */
    int alab[EIN_LABELS], blab[EIN_LABELS], clab[EIN_LABELS], na = 0, nbb = 0, nc = 0;
    for (int i = 0; i < nb; i++) alab[na++] = blab[nbb++] = clab[nc++] = bl[i];
    for (int i = 0; i < nm; i++) alab[na++] = clab[nc++] = ml[i];
    for (int i = 0; i < nk; i++) alab[na++] = blab[nbb++] = kl[i];
    for (int i = 0; i < nn; i++) blab[nbb++] = clab[nc++] = nl[i];

    ein_view A, B;
    TRY(ein_reshape(r, &X, alab, na, &A));
    TRY(ein_reshape(r, &Y, blab, nbb, &B));
    int64_t Bs = ein_numel(r, bl, nb), M = ein_numel(r, ml, nm), K = ein_numel(r, kl, nk),
            N = ein_numel(r, nl, nn), numel = ein_numel(r, clab, nc);
    if (Bs < 0 || M < 0 || K < 0 || N < 0 || numel < 0)
        return err_set(r->c->err, AIT_E_OVERFLOW, "einsum intermediate is too large");

    *wrote_final =
        final_lab && nc == final_n && memcmp(clab, final_lab, sizeof(int) * (size_t)nc) == 0;
    void *C = *wrote_final ? final : scratch_take(r->bp, numel, r->es);
    R->nl = nc;
    memcpy(R->lab, clab, sizeof(int) * (size_t)nc);
    ein_strides(r, clab, nc, R->str);
    R->data = C;
    if (r->dry) return AIT_OK;
    size_t es = r->es;
    for (int64_t b = 0; b < Bs; b++)
        mm_gemm(r->d, M, N, K, (const char *)A.data + (size_t)(b * M * K) * es, K, 1,
                (const char *)B.data + (size_t)(b * K * N) * es, N,
                (char *)C + (size_t)(b * M * N) * es, N);
    return AIT_OK;
}

static ait_status ein_exec(ein_run *r)
{
    op_ctx *c = r->c;
    const ein *e = r->e;
    tensor *y = c->out[0];
    ait_dtype dt = y->dtype;
    bool native = mm_dom_native(dt);
    ein_view ops[EIN_MAXOPS];
    for (int i = 0; i < e->n; i++) {
        const tensor *t = c->in[i];
        const void *data = t->data;
        if (!native) {
            void *buf = scratch_take(r->bp, tensor_numel(t), r->es);
            if (!r->dry) mm_load(t->data, t->dtype, buf, tensor_numel(t));
            data = buf;
        }
        int64_t st[AIT_MAX_RANK];
        row_strides(t->dims, t->rank, st);
        ein_view *v = &ops[i];
        v->nl = 0;
        v->data = data;
        for (int ax = 0; ax < t->rank; ax++) {
            int l = e->axl[i][ax], q = ein_find(v->lab, v->nl, l);
            if (q < 0) {
                q = v->nl++;
                v->lab[q] = l;
                v->str[q] = 0;
            }
            if (t->dims[ax] != 1) v->str[q] += st[ax];
        }
    }
    int64_t ny = tensor_numel(y);
    void *dst = native ? y->data : scratch_take(r->bp, ny, r->es);
    ein_view cur = ops[0];
    bool done = false;
    for (int j = 1; j < e->n; j++) {
        bool keep[EIN_LABELS] = {0};
        for (int k = 0; k < e->nout; k++) keep[e->out[k]] = true;
        for (int k = j + 1; k < e->n; k++)
            for (int q = 0; q < ops[k].nl; q++) keep[ops[k].lab[q]] = true;
        bool last = j == e->n - 1;
        TRY(ein_pair(r, cur, ops[j], keep, dst, last ? e->out : NULL, e->nout, &cur, &done));
    }
    if (!done) { /* permute / sum what is left into the output order */
        int64_t cstr[AIT_MAX_RANK], dstr[EIN_LABELS];
        ein_strides(r, e->out, e->nout, cstr);
        bool sum = false;
        for (int q = 0; q < cur.nl; q++) {
            int p = ein_find(e->out, e->nout, cur.lab[q]);
            dstr[q] = p < 0 ? 0 : cstr[p];
            sum |= p < 0;
        }
        if (!r->dry) {
            if (sum) memset(dst, 0, (size_t)ny * r->es);
            ein_move(r, dst, dstr, &cur, sum);
        }
    }
    if (!native && !r->dry) mm_store(dst, y->data, dt, ny);
    return AIT_OK;
}

static ait_status einsum_run(op_ctx *c)
{
    ein e;
    TRY(ein_parse(c, &e));
    scratch_layout bp = {0};
    ein_run r = {c, &e, MD_F32, 4, &bp, true};
    mm_dom_of(c->in[0]->dtype, &r.d);
    r.es = mm_dom_size(r.d);
    TRY(ein_exec(&r));
    TRY(scratch_commit(c, &bp));
    r.dry = false;
    return ein_exec(&r);
}

/* ---- MatMulInteger ------------------------------------------------------ */

static ait_status mmi_check(op_ctx *c, mm_shape *s)
{
    const tensor *a = c->in[0], *b = c->in[1];
    TRY(check_dtype(c, a, "A", 2, AIT_U8, AIT_I8));
    TRY(check_dtype(c, b, "B", 2, AIT_U8, AIT_I8));
    TRY(mm_shape_make(c, a, b, s));
    int sr;
    int64_t sd[AIT_MAX_RANK], ps[AIT_MAX_RANK];
    for (int i = 2; i < 4; i++) {
        if (!has_in(c, i)) continue;
        const tensor *x = c->in[i - 2], *z = c->in[i];
        const char *what = i == 2 ? "a_zero_point" : "b_zero_point";
        if (z->dtype != x->dtype)
            return err_set(c->err, AIT_E_DTYPE, "%s is %s but its input is %s", what,
                           ait_dtype_name(z->dtype), ait_dtype_name(x->dtype));
        TRY(mm_qparam_check(c, x, z, i == 2, what, &sr, sd, ps));
    }
    return AIT_OK;
}

static ait_status mmi_infer(op_ctx *c)
{
    mm_shape s;
    TRY(mmi_check(c, &s));
    set_out(c, 0, AIT_I32, s.rank, s.dims);
    return AIT_OK;
}

/* Zero point of each row of A (is_a) or column of B, as int32. */
static void mmi_zero_points(op_ctx *c, int i, int64_t *idx, int32_t *zp)
{
    const tensor *x = c->in[i - 2], *z = has_in(c, i) ? c->in[i] : NULL;
    int sr;
    int64_t sd[AIT_MAX_RANK], ps[AIT_MAX_RANK];
    mm_qparam_check(c, x, z, i == 2, "", &sr, sd, ps);
    mm_qparam_index(sr, sd, ps, idx);
    int64_t n = mm_qparam_count(x, i == 2);
    for (int64_t r = 0; r < n; r++)
        zp[r] = z ? (int32_t)elem_get_i64(z->data, z->dtype, idx[r]) : 0;
}

static ait_status mmi_run(op_ctx *c)
{
    const tensor *a = c->in[0], *b = c->in[1];
    mm_shape s;
    TRY(mmi_check(c, &s));
    int64_t ra = mm_qparam_count(a, true), cb = mm_qparam_count(b, false);
    int64_t na = tensor_numel(a), nb = tensor_numel(b);
    scratch_layout bp = {0};
    int64_t *idx;
    int32_t *za, *zb, *pa, *pb;
    for (int pass = 0;; pass++) {
        idx = scratch_take(&bp, ra > cb ? ra : cb, 8);
        za = scratch_take(&bp, ra, 4);
        zb = scratch_take(&bp, cb, 4);
        pa = scratch_take(&bp, na, 4);
        pb = scratch_take(&bp, nb, 4);
        if (pass) break;
        TRY(scratch_commit(c, &bp));
    }
    mmi_zero_points(c, 2, idx, za);
    mmi_zero_points(c, 3, idx, zb);
    mm_sub_zp(a, true, za, pa);
    mm_sub_zp(b, false, zb, pb);
    mm_run(MD_U32, &s, pa, pb, c->out[0]->data);
    return AIT_OK;
}

OP_TABLE(matmul,
         OP_DEF("MatMul", 2, 2, 1, 1, matmul_infer, matmul_run),
         OP_DEF("Gemm", 2, 3, 1, 1, gemm_infer, gemm_run),
         {.name = "Einsum", .min_in = 1, .max_in = EIN_MAXOPS, .min_out = 1, .max_out = 1,
          .flags = OP_VARIADIC, .infer = einsum_infer, .run = einsum_run},
         OP_DEF("MatMulInteger", 2, 4, 1, 1, mmi_infer, mmi_run));

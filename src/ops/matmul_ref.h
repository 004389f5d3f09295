/* Private to the reference ops (the matmul and quant families): matrix
 * product kernels. The shape rule they follow is ops/matmul_shape.h.
 *
 * Kernels work in a "domain": float32 (also used for float16/bfloat16),
 * float64, or uint32/uint64 for integers. Integer products are computed
 * modulo 2^32 or 2^64 in unsigned arithmetic, which gives exactly the
 * wrapped two's complement result of any narrower signed or unsigned type,
 * so int32 data can be used in place as uint32 and int64 as uint64. */
#ifndef AIT_OPS_MATMUL_REF_H
#define AIT_OPS_MATMUL_REF_H
#include <string.h>

#include "ops/matmul_shape.h"
#include "ops/op.h"

typedef enum mm_dom { MD_F32, MD_F64, MD_U32, MD_U64 } mm_dom;

/* The compute domain of dtype t; false for bool/string. */
static inline bool mm_dom_of(ait_dtype t, mm_dom *d)
{
    switch (t) {
    case AIT_F32: case AIT_F16: case AIT_BF16: *d = MD_F32; return true;
    case AIT_F64: *d = MD_F64; return true;
    case AIT_I8: case AIT_U8: case AIT_I16: case AIT_U16: case AIT_I32: case AIT_U32:
        *d = MD_U32; return true;
    case AIT_I64: case AIT_U64: *d = MD_U64; return true;
    default: return false;
    }
}
static inline size_t mm_dom_size(mm_dom d) { return d == MD_F64 || d == MD_U64 ? 8 : 4; }
/* True when t's data can be used as domain data without conversion. */
static inline bool mm_dom_native(ait_dtype t)
{
    return t == AIT_F32 || t == AIT_F64 || t == AIT_I32 || t == AIT_U32 || t == AIT_I64 ||
           t == AIT_U64;
}

/* Converts n elements of dtype t into its domain. */
static inline void mm_load(const void *src, ait_dtype t, void *dst, int64_t n)
{
    uint32_t *u = dst;
    const uint16_t *h = src;
    if (t == AIT_F16 || t == AIT_BF16) {
        convert_floats(src, t, dst, AIT_F32, n);
        return;
    }
    switch (t) {
    case AIT_I8: for (int64_t i = 0; i < n; i++) u[i] = (uint32_t)((const int8_t *)src)[i]; break;
    case AIT_U8: for (int64_t i = 0; i < n; i++) u[i] = ((const uint8_t *)src)[i]; break;
    case AIT_I16: for (int64_t i = 0; i < n; i++) u[i] = (uint32_t)((const int16_t *)src)[i]; break;
    case AIT_U16: for (int64_t i = 0; i < n; i++) u[i] = h[i]; break;
    default: memcpy(dst, src, (size_t)n * ait_dtype_size(t)); break;
    }
}

/* Converts n domain elements back to dtype t (integers wrap). */
static inline void mm_store(const void *src, void *dst, ait_dtype t, int64_t n)
{
    const uint32_t *u = src;
    uint16_t *h = dst;
    if (t == AIT_F16 || t == AIT_BF16) {
        convert_floats(src, AIT_F32, dst, t, n);
        return;
    }
    switch (t) {
    case AIT_I8: case AIT_U8:
        for (int64_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = (uint8_t)u[i];
        break;
    case AIT_I16: case AIT_U16: for (int64_t i = 0; i < n; i++) h[i] = (uint16_t)u[i]; break;
    default: memcpy(dst, src, (size_t)n * ait_dtype_size(t)); break;
    }
}

/* ---- kernels -------------------------------------------------------------
 * C[M,N] = A[M,K] * B[K,N]. A's element (i,k) is a[i*ars + k*acs] (so a
 * transposed A costs nothing); B is row-major with row stride ldb and C with
 * row stride ldc. Loop order i-k-j over blocks of B that stay in cache, with
 * the innermost loop over contiguous j in fixed chunks of 8 that the
 * compiler vectorises even at -O2, and four k at a time to cut C traffic.
 * N == 1 (matrix-vector) uses dot products instead. */
#define MM_NB 256
#define MM_KB 128
#define MM_DEFINE_KERNEL(NAME, T)                                                          \
    static inline void NAME##_row4(T *restrict cr, int64_t nb, const T *a4, const T *b0,    \
                                   int64_t ldb)                                            \
    {                                                                                      \
        const T a0 = a4[0], a1 = a4[1], a2 = a4[2], a3 = a4[3];                            \
        const T *restrict p0 = b0, *restrict p1 = b0 + ldb, *restrict p2 = p1 + ldb,       \
                          *restrict p3 = p2 + ldb;                                         \
        int64_t j = 0;                                                                     \
        for (; j + 8 <= nb; j += 8)                                                        \
            for (int t = 0; t < 8; t++)                                                    \
                cr[j + t] += a0 * p0[j + t] + a1 * p1[j + t] + a2 * p2[j + t] +            \
                             a3 * p3[j + t];                                               \
        for (; j < nb; j++) cr[j] += a0 * p0[j] + a1 * p1[j] + a2 * p2[j] + a3 * p3[j];    \
    }                                                                                      \
    static inline void NAME##_row1(T *restrict cr, int64_t nb, T a0, const T *restrict p0) \
    {                                                                                      \
        int64_t j = 0;                                                                     \
        for (; j + 8 <= nb; j += 8)                                                        \
            for (int t = 0; t < 8; t++) cr[j + t] += a0 * p0[j + t];                       \
        for (; j < nb; j++) cr[j] += a0 * p0[j];                                           \
    }                                                                                      \
    /* Dot product of K elements at strides sa and sb; 8 partial sums let the  \
     * contiguous case vectorise. */                                                       \
    static inline T NAME##_dot(int64_t K, const T *ar, int64_t sa, const T *br, int64_t sb)  \
    {                                                                                      \
        T acc[8] = {0};                                                                    \
        int64_t k = 0;                                                                     \
        if (sa == 1 && sb == 1)                                                            \
            for (; k + 8 <= K; k += 8)                                                     \
                for (int t = 0; t < 8; t++) acc[t] += ar[k + t] * br[k + t];               \
        T s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])); \
        for (; k < K; k++) s += ar[k * sa] * br[k * sb];                                   \
        return s;                                                                          \
    }                                                                                      \
    /* Contiguous row ar against rows b[0], b[ldb], b[2*ldb], b[3*ldb] into out[4],  \
     * each summed exactly as NAME##_dot sums it. Four rows of B stream at once: \
     * a matrix-vector product is bound by memory, and one stream at a time left \
     * it waiting on memory (and on where its pages happened to lie). */            \
    static inline void NAME##_dot4(int64_t K, const T *ar, const T *b, int64_t ldb, T *out)  \
    {                                                                                      \
        T acc[4][8] = {{0}};                                                               \
        int64_t k = 0;                                                                     \
        for (; k + 8 <= K; k += 8)                                                         \
            for (int r = 0; r < 4; r++)                                                    \
                for (int t = 0; t < 8; t++) acc[r][t] += ar[k + t] * b[r * ldb + k + t];   \
        for (int r = 0; r < 4; r++) {                                                      \
            const T *p = acc[r];                                                           \
            T s = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));       \
            for (int64_t q = k; q < K; q++) s += ar[q] * b[r * ldb + q];                   \
            out[r] = s;                                                                    \
        }                                                                                  \
    }                                                                                      \
    /* C = A * B^T with B given as [N,K] rows (nn.Linear weights): dot products \
     * of rows, no transpose; the better loop when M is small. */                         \
    static inline void NAME##_nt(int64_t M, int64_t N, int64_t K, const T *a, int64_t ars,   \
                                 const T *b, int64_t ldb, T *c, int64_t ldc)               \
    {                                                                                      \
        /* B streams once, four rows at a time: they meet all (few) rows of A in cache. */ \
        int64_t j = 0;                                                                     \
        for (; j + 4 <= N; j += 4)                                                         \
            for (int64_t i = 0; i < M; i++) {                                              \
                T s[4];                                                                    \
                NAME##_dot4(K, a + i * ars, b + j * ldb, ldb, s);                          \
                for (int r = 0; r < 4; r++) c[i * ldc + j + r] = s[r];                     \
            }                                                                              \
        for (; j < N; j++)                                                                 \
            for (int64_t i = 0; i < M; i++)                                                \
                c[i * ldc + j] = NAME##_dot(K, a + i * ars, 1, b + j * ldb, 1);            \
    }                                                                                      \
    static inline void NAME(int64_t M, int64_t N, int64_t K, const T *a, int64_t ars,      \
                            int64_t acs, const T *b, int64_t ldb, T *c, int64_t ldc)       \
    {                                                                                      \
        if (N == 1) {                                                                      \
            for (int64_t i = 0; i < M; i++) c[i * ldc] = NAME##_dot(K, a + i * ars, acs, b, ldb); \
            return;                                                                        \
        }                                                                                  \
        for (int64_t i = 0; i < M; i++) memset(c + i * ldc, 0, (size_t)N * sizeof(T));     \
        for (int64_t j0 = 0; j0 < N; j0 += MM_NB) {                                        \
            int64_t nb = N - j0 < MM_NB ? N - j0 : MM_NB;                                  \
            for (int64_t k0 = 0; k0 < K; k0 += MM_KB) {                                    \
                int64_t kend = K - k0 < MM_KB ? K : k0 + MM_KB;                            \
                for (int64_t i = 0; i < M; i++) {                                          \
                    T *cr = c + i * ldc + j0;                                              \
                    const T *ar = a + i * ars;                                             \
                    int64_t k = k0;                                                        \
                    for (; k + 4 <= kend; k += 4) {                                        \
                        T a4[4] = {ar[k * acs], ar[(k + 1) * acs], ar[(k + 2) * acs],      \
                                   ar[(k + 3) * acs]};                                     \
                        NAME##_row4(cr, nb, a4, b + k * ldb + j0, ldb);                    \
                    }                                                                      \
                    for (; k < kend; k++) NAME##_row1(cr, nb, ar[k * acs], b + k * ldb + j0); \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

MM_DEFINE_KERNEL(mm_kernel_f32, float)
MM_DEFINE_KERNEL(mm_kernel_f64, double)
MM_DEFINE_KERNEL(mm_kernel_u32, uint32_t)
MM_DEFINE_KERNEL(mm_kernel_u64, uint64_t)

/* The kernel of domain d on untyped pointers. */
static inline void mm_gemm(mm_dom d, int64_t M, int64_t N, int64_t K, const void *a,
                           int64_t ars, int64_t acs, const void *b, int64_t ldb, void *c,
                           int64_t ldc)
{
    switch (d) {
    case MD_F32: mm_kernel_f32(M, N, K, a, ars, acs, b, ldb, c, ldc); break;
    case MD_F64: mm_kernel_f64(M, N, K, a, ars, acs, b, ldb, c, ldc); break;
    case MD_U32: mm_kernel_u32(M, N, K, a, ars, acs, b, ldb, c, ldc); break;
    case MD_U64: mm_kernel_u64(M, N, K, a, ars, acs, b, ldb, c, ldc); break;
    }
}

/* C = A * B^T for row-major A [M,K] and B [N,K] (see the _nt kernels). */
static inline void mm_gemm_nt(mm_dom d, int64_t M, int64_t N, int64_t K, const void *a,
                              const void *b, void *c)
{
    switch (d) {
    case MD_F32: mm_kernel_f32_nt(M, N, K, a, K, b, K, c, N); break;
    case MD_F64: mm_kernel_f64_nt(M, N, K, a, K, b, K, c, N); break;
    case MD_U32: mm_kernel_u32_nt(M, N, K, a, K, b, K, c, N); break;
    case MD_U64: mm_kernel_u64_nt(M, N, K, a, K, b, K, c, N); break;
    }
}

/* Below this many rows of A, Gemm with transB reads B's rows directly; above
 * it, transposing B once costs less than the dot products' lost reuse. */
#define MM_NT_MAX_M 16

/* Batched C = A * B in domain d over contiguous operands laid out as s says.
 * When B is shared by every batch, A's batches are stacked into one tall
 * matrix so B is streamed once. */
static inline void mm_run(mm_dom d, const mm_shape *s, const void *a, const void *b, void *c)
{
    size_t es = mm_dom_size(d);
    bool shared = true;
    for (int i = 0; i < s->brank; i++) shared &= s->sb[i] == 0 || s->bdims[i] == 1;
    if (shared) {
        mm_gemm(d, s->batch * s->M, s->N, s->K, a, s->K, 1, b, s->N, c, s->N);
        return;
    }
    for (int64_t bi = 0; bi < s->batch; bi++) {
        int64_t ia, ib;
        mm_batch_index(s, bi, &ia, &ib);
        mm_gemm(d, s->M, s->N, s->K, (const char *)a + (size_t)(ia * s->M * s->K) * es, s->K, 1,
                (const char *)b + (size_t)(ib * s->K * s->N) * es, s->N,
                (char *)c + (size_t)(bi * s->M * s->N) * es, s->N);
    }
}

/* ---- quantized matmul parameters ------------------------------------------
 * A zero point or scale of A is per tensor (one element), per row (1-D of
 * M elements, or x's rank with last dim 1 and the other dims broadcasting)
 * or, for B, per column (1-D of N, or x's rank with dim -2 equal to 1).
 * mm_qparam_index fills idx[r] with the element of p used by row r of A
 * (rows numbered over A's dims without the last) or column r of B (over B's
 * dims without dim -2); p == NULL gives all zeros. */
/* The dim of x that rows / columns do not run over: K, and for a 1-D B
 * (a single column) its only dim too. */
static inline bool mm_qparam_skips(const tensor *x, bool is_a, int d)
{
    return is_a ? d == x->rank - 1 : (d == x->rank - 2 || x->rank == 1);
}

static inline int64_t mm_qparam_count(const tensor *x, bool is_a)
{
    int64_t n = 1;
    for (int d = 0; d < x->rank; d++)
        if (!mm_qparam_skips(x, is_a, d)) n *= x->dims[d];
    return n;
}

static inline ait_status mm_qparam_check(op_ctx *c, const tensor *x, const tensor *p, bool is_a,
                                         const char *what, int *srank, int64_t *sdims,
                                         int64_t *pstr)
{
    int xr = x->rank, kpos = is_a ? xr - 1 : xr - 2;
    *srank = 0;
    for (int d = 0; d < xr; d++)
        if (!mm_qparam_skips(x, is_a, d)) sdims[(*srank)++] = x->dims[d];
    for (int d = 0; d < *srank; d++) pstr[d] = 0;
    if (!p || tensor_numel(p) == 1) return AIT_OK;
    int64_t pd[AIT_MAX_RANK];
    int pr = 0;
    if (p->rank == 1) {
        pd[pr++] = p->dims[0];
    } else if (p->rank == xr && xr >= 2 && p->dims[kpos] == 1) {
        for (int d = 0; d < xr; d++)
            if (d != kpos) pd[pr++] = p->dims[d];
    } else {
        pr = -1;
    }
    bool ok = pr >= 0 && pr <= *srank;
    int64_t st = 1;
    for (int d = pr - 1; ok && d >= 0; d--) {
        int sd = d + (*srank - pr);
        if (pd[d] != sdims[sd] && pd[d] != 1) ok = false;
        pstr[sd] = pd[d] == 1 ? 0 : st;
        st *= pd[d];
    }
    if (!ok) {
        char sx[128], sp[128];
        return err_set(c->err, AIT_E_SHAPE,
                       "%s of shape %s is neither per tensor nor per %s of %s",
                       what, shape_str(p->dims, p->rank, sp, sizeof sp), is_a ? "row" : "column",
                       shape_str(x->dims, xr, sx, sizeof sx));
    }
    return AIT_OK;
}

static inline void mm_qparam_index(int srank, const int64_t *sdims, const int64_t *pstr,
                                   int64_t *idx)
{
    int64_t n = 1, cnt[AIT_MAX_RANK] = {0}, off = 0;
    for (int d = 0; d < srank; d++) n *= sdims[d];
    for (int64_t r = 0; r < n; r++) {
        idx[r] = off;
        for (int d = srank - 1; d >= 0; d--) {
            off += pstr[d];
            if (++cnt[d] < sdims[d]) break;
            off -= pstr[d] * sdims[d];
            cnt[d] = 0;
        }
    }
}

/* dst = x - zero point as int32, for an int8/uint8 operand of a quantized
 * matmul; zp[] holds the zero point of each row (A) or column (B). */
static inline void mm_sub_zp(const tensor *x, bool is_a, const int32_t *zp, int32_t *dst)
{
    int64_t n = tensor_numel(x);
    bool s8 = x->dtype == AIT_I8;
    const int8_t *pi = x->data;
    const uint8_t *pu = x->data;
#define MM_X(e) (s8 ? (int32_t)pi[e] : (int32_t)pu[e])
    if (x->rank == 1) { /* a single row of A, or a single column of B */
        for (int64_t e = 0; e < n; e++) dst[e] = MM_X(e) - zp[0];
        return;
    }
    int64_t len = x->dims[x->rank - 1], K = x->dims[x->rank - 2];
    for (int64_t e0 = 0, row = 0; e0 < n; e0 += len, row++) {
        if (is_a) {
            for (int64_t j = 0; j < len; j++) dst[e0 + j] = MM_X(e0 + j) - zp[row];
        } else { /* row `row` lies in matrix row / K, whose columns have their own zero points */
            const int32_t *z = zp + (row / K) * len;
            for (int64_t j = 0; j < len; j++) dst[e0 + j] = MM_X(e0 + j) - z[j];
        }
    }
#undef MM_X
}

#endif

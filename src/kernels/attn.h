/* Attention, float32, tiled flash-style: for each block of queries, scores
 * against one block of keys at a time, the mask, an online softmax (running
 * max and sum, earlier partial sums rescaled) and the weighted sum of
 * values, so the [sq][total] score matrix is never stored. Keys and values
 * are a past part and a current part read in place (no concatenation);
 * grouped-query heads (hkv divides hq) share their kv head. */
#ifndef AIT_KERNELS_ATTN_H
#define AIT_KERNELS_ATTN_H
#include <stddef.h>

typedef struct katt_geom {
    int b, hq, hkv;  /* batch, query heads, kv heads (hq % hkv == 0) */
    int sq, sp, sc;  /* query length, past and current kv lengths */
    int d, dv;       /* q/k and v head sizes */
    float scale;     /* on q.k; 0 for 1 / sqrt(d) */
    int causal;      /* query i attends key j iff j <= i + sp */
    /* additive float mask or NULL: element (b, h, i, j) of the scores gets
     * mask[b * mb + h * mh + i * mi + j] (a stride 0 broadcasts) */
    const float *mask;
    size_t mb, mh, mi;
    /* boolean mask or NULL (bytes, strides bb, bh, bi as the mask's): a
     * score whose element differs from bkeep becomes fill (Where's
     * semantics: replaced, not added; -inf masks the key out) */
    const unsigned char *bmask;
    size_t bb, bh, bi;
    int bkeep;
    float fill;
    /* strided: the element strides (batch, head, row) of each operand are
     * given below (each row contiguous), else the dense layouts above:
     * q, y [b][hq][sq][.], kp/vp [b][hkv][sp][.], kc/vc [b][hkv][sc][.] */
    int strided;
    size_t qs[3], kps[3], kcs[3], vps[3], vcs[3], ys[3];
    /* the GEMM path's blocks (16 queries and more) on int8, QK^T and PV by
     * qgemm_u8 (attn_q8.h: the int8dq variant's attention), when set */
    int q8;
    /* scratch of ws_bytes (64-aligned) the caller keeps, or NULL: used when
     * it holds kattention_scratch's bytes, else each call allocates its own */
    void *ws;
    size_t ws_bytes;
} katt_geom;

/* Bytes of scratch kattention needs for g on `threads` threads. */
size_t kattention_scratch(const katt_geom *g, int threads);

/* y [b][hq][sq][dv] from q [b][hq][sq][d], past kp/vp [b][hkv][sp][d or
 * dv] (NULL when sp == 0) and current kc/vc [b][hkv][sc][d or dv] (or the
 * strided layouts the geometry gives). A query
 * that sees no key gives a zero row. Returns 0, or -1 when scratch cannot
 * be allocated (only when g->ws is too small). */
int kattention(const katt_geom *g, const float *q, const float *kp, const float *vp,
               const float *kc, const float *vc, float *y, int threads);

#endif

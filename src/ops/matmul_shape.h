/* The numpy MatMul shape rule, as the ONNX spec states it: the one place
 * the reference ops and every backend that runs MatMul take it from. */
#ifndef AIT_OPS_MATMUL_SHAPE_H
#define AIT_OPS_MATMUL_SHAPE_H
#include "ops/op.h"

/* 1-D operands are promoted ([K] -> [1,K] for A, [K,1] for B) and the added
 * dim is dropped from the result; batch dims broadcast. */
typedef struct mm_shape {
    int64_t M, K, N, batch;
    int rank; /* of the result */
    int64_t dims[AIT_MAX_RANK];
    int brank; /* broadcast batch dims, and each operand's matrix index step along them */
    int64_t bdims[AIT_MAX_RANK], sa[AIT_MAX_RANK], sb[AIT_MAX_RANK];
} mm_shape;

static inline ait_status mm_shape_make(op_ctx *c, const tensor *a, const tensor *b, mm_shape *s)
{
    if (a->rank < 1 || b->rank < 1)
        return err_set(c->err, AIT_E_SHAPE, "matmul operands must have rank >= 1 (got %d and %d)",
                       a->rank, b->rank);
    int ar = a->rank, br = b->rank;
    s->M = ar >= 2 ? a->dims[ar - 2] : 1;
    s->K = a->dims[ar - 1];
    int64_t kb = br >= 2 ? b->dims[br - 2] : b->dims[0];
    s->N = br >= 2 ? b->dims[br - 1] : 1;
    if (kb != s->K) {
        char sa[128], sb[128];
        return err_set(c->err, AIT_E_SHAPE, "matrix shapes %s and %s do not multiply",
                       shape_str(a->dims, ar, sa, sizeof sa),
                       shape_str(b->dims, br, sb, sizeof sb));
    }
    int abr = ar > 2 ? ar - 2 : 0, bbr = br > 2 ? br - 2 : 0;
    s->brank = abr > bbr ? abr : bbr;
    int64_t stepa = 1, stepb = 1;
    s->batch = 1;
    for (int i = s->brank - 1; i >= 0; i--) {
        int ia = i - (s->brank - abr), ib = i - (s->brank - bbr);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[128], sb[128];
            return err_set(c->err, AIT_E_SHAPE, "batch dims of %s and %s do not broadcast",
                           shape_str(a->dims, ar, sa, sizeof sa),
                           shape_str(b->dims, br, sb, sizeof sb));
        }
        s->bdims[i] = da == 1 ? db : da;
        s->sa[i] = da == 1 ? 0 : stepa;
        s->sb[i] = db == 1 ? 0 : stepb;
        stepa *= da;
        stepb *= db;
        s->batch *= s->bdims[i];
    }
    s->rank = 0;
    for (int i = 0; i < s->brank; i++) s->dims[s->rank++] = s->bdims[i];
    if (ar >= 2) s->dims[s->rank++] = s->M;
    if (br >= 2) s->dims[s->rank++] = s->N;
    return AIT_OK;
}

/* Matrix indices of batch bi's operands within A and B. */
static inline void mm_batch_index(const mm_shape *s, int64_t bi, int64_t *ia, int64_t *ib)
{
    *ia = *ib = 0;
    for (int i = s->brank - 1; i >= 0; i--) {
        int64_t idx = bi % s->bdims[i];
        bi /= s->bdims[i];
        *ia += idx * s->sa[i];
        *ib += idx * s->sb[i];
    }
}

#endif

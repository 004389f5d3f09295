/* Element-wise chains in one pass over memory: a small program of steps,
 * each a binary operation with a scalar, a per-channel vector, a tensor of
 * the same shape or the chain's own input, or an element function (act.h),
 * applied to every element. The program runs over tiles that stay in L1, so
 * HardSwish written as x * clip(x + 3, 0, 6) / 6 or squeeze-excitation's
 * x * sigmoid(s[c]) read and write memory once. */
#ifndef AIT_KERNELS_ELTWISE_H
#define AIT_KERNELS_ELTWISE_H
#include <stddef.h>
#include "kernels/act.h"

typedef enum kew_op {
    KEW_ADD,  /* v + o */
    KEW_SUB,  /* v - o */
    KEW_RSUB, /* o - v */
    KEW_MUL,  /* v * o */
    KEW_DIV,  /* v / o */
    KEW_RDIV, /* o / v */
    KEW_MAX,
    KEW_MIN,
    KEW_FUN   /* f(v; a, b), no operand */
} kew_op;

typedef enum kew_src {
    KEW_SCALAR,  /* o = a */
    KEW_CHANNEL, /* o = p[c], c = (i / inner) % channels */
    KEW_TENSOR,  /* o = p[i] */
    KEW_INPUT    /* o = x[i], the chain's input */
} kew_src;

typedef struct kew_step {
    kew_op op;
    kew_src src;
    kfun f;      /* KEW_FUN */
    float a, b;  /* the scalar, or f's parameters */
    const float *p;
} kew_step;

#define KEW_MAX_STEPS 16
typedef struct kew_prog {
    int n;
    kew_step s[KEW_MAX_STEPS];
    size_t channels, inner; /* for KEW_CHANNEL: x is [outer][channels][inner] */
} kew_prog;

/* y[i] = the program applied to x[i], i < n (y may be x). threads > 1 runs
 * OpenMP threads over tiles. */
void kew_run(const kew_prog *p, const float *x, float *y, size_t n, int threads);

#endif

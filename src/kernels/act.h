/* The element functions kernels apply: the element-wise program's unary
 * steps and the fused epilogues (activation after a convolution) share them.
 * a and b are the function's parameters where it has them. */
#ifndef AIT_KERNELS_ACT_H
#define AIT_KERNELS_ACT_H

typedef enum kfun {
    KF_NONE,         /* identity */
    KF_RELU,         /* max(x, 0) */
    KF_CLIP,         /* min(max(x, a), b): relu6 is a = 0, b = 6 */
    KF_SIGMOID,      /* 1 / (1 + exp(-x)) */
    KF_TANH,
    KF_EXP,
    KF_HARDSIGMOID,  /* max(0, min(1, a * x + b)) */
    KF_HARDSWISH,    /* x * max(0, min(1, x / 6 + 1 / 2)) */
    KF_SILU,         /* x * sigmoid(x) */
    KF_GELU_ERF,     /* x / 2 * (1 + erf(x / sqrt 2)) */
    KF_GELU_TANH,    /* x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) */
    KF_LEAKY_RELU,   /* x < 0 ? a * x : x */
    KF_N
} kfun;

/* An activation with its parameters, as epilogues take it. */
typedef struct kact {
    kfun f;
    float a, b;
} kact;

#endif

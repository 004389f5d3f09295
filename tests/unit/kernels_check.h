/* Helpers of the kernel tests (test_kernels*.c): deterministic data, the
 * element functions in double, a comparison that names the first bad
 * element, and the loop over every ISA this CPU has and 1 or 2 threads. */
#ifndef KERNELS_CHECK_H
#define KERNELS_CHECK_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernels/act.h"
#include "kernels/isa.h"

static inline float *kc_rand(size_t n, unsigned seed, float lo, float hi)
{
    float *p = malloc(n * sizeof *p + 1);
    unsigned s = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = lo + (hi - lo) * (float)((s >> 8) & 0xffffff) / (float)0xffffff;
    }
    return p;
}

static inline double kc_fun(kfun f, double x, double a, double b)
{
    switch (f) {
    case KF_RELU: return x > 0 ? x : 0;
    case KF_CLIP: return fmin(fmax(x, a), b);
    case KF_SIGMOID: return 1 / (1 + exp(-x));
    case KF_TANH: return tanh(x);
    case KF_EXP: return exp(x);
    case KF_HARDSIGMOID: return fmax(0, fmin(1, a * x + b));
    case KF_HARDSWISH: return x * fmax(0, fmin(1, x / 6 + 0.5));
    case KF_SILU: return x / (1 + exp(-x));
    case KF_GELU_ERF: return x / 2 * (1 + erf(x / sqrt(2)));
    case KF_GELU_TANH:
        return x / 2 * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case KF_LEAKY_RELU: return x < 0 ? a * x : x;
    default: return x;
    }
}

/* |got - want| <= atol + rtol |want| everywhere, else a message and 0 */
static inline int kc_close(const char *what, const float *got, const double *want, size_t n,
                           double atol, double rtol)
{
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (!(d <= atol + rtol * fabs(want[i])) && !(isinf(want[i]) && got[i] == want[i])) {
            fprintf(stderr, "%s [isa %s]: element %zu is %.9g, want %.9g\n", what,
                    kisa_name(kisa_active()), i, got[i], want[i]);
            return 0;
        }
    }
    return 1;
}

/* Runs BODY at every ISA of this CPU and the portable path, with
 * kc_threads 1 and 2; the cap is lifted after. */
#define KC_EACH_ISA(BODY)                                                                  \
    for (int kc_i = KISA_PORTABLE; kc_i <= (int)kisa_cpu(); kc_i++)                        \
        for (int kc_threads = 1; kc_threads <= 2; kc_threads++) {                          \
            assert_true(kisa_force((kisa)kc_i));                                           \
            BODY;                                                                          \
            kisa_force(KISA_N);                                                            \
        }

#endif

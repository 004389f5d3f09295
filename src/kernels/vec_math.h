/* Functions built on one ISA's primitives (included by vec_<isa>.h; names
 * carry the ISA through KV()). exp is a range reduction to [-ln2/2, ln2/2]
 * and a degree-7 polynomial (relative error near 2e-7), clamped to
 * [-87.3, 88]; the sigmoid and SiLU take their exp(-x) from a degree-5
 * one (below); erf is a rational function (below), its division by vrcp
 * (an approximation and a Newton step where the ISA has one). */
#include "kernels/act.h"
#define KCAT2(a, b) a##_##b
#define KCAT(a, b) KCAT2(a, b)
#define KV(name) KCAT(name, KSUF)

static inline V KV(vexp)(V x)
{
    x = vmin(vmax(x, vset1(-87.33654f)), vset1(88.0f));
    V n = vround(vmul(x, vset1(1.44269504088896341f)));
    V r = vfma(n, vset1(-0.693359375f), x);
    r = vfma(n, vset1(2.12194440e-4f), r);
    V p = vset1(1.9875691500e-4f);
    p = vfma(p, r, vset1(1.3981999507e-3f));
    p = vfma(p, r, vset1(8.3334519073e-3f));
    p = vfma(p, r, vset1(4.1665795894e-2f));
    p = vfma(p, r, vset1(1.6666665459e-1f));
    p = vfma(p, r, vset1(5.0000001201e-1f));
    p = vfma(p, vmul(r, r), vadd(r, vset1(1.0f)));
    return vscalef(p, n);
}

/* 1 + exp(-x), for the sigmoid and SiLU: exp(-u) = 2^n exp(-s), s = u + n
 * ln2 in [-ln2/2, ln2/2], exp(-s) by a degree-5 minimax polynomial, 2^n by
 * vscalef, ln2 one constant where vfma is fused. Relative error of x / (1 +
 * exp(-x)) near 3e-7 against float64 over [-3e38, 3e38] (vmul(x,
 * vsigmoid) on vexp: 2.2e-7), in about half the vector operations (SiLU in
 * 0.6 of the CPU time on AVX-512: bench/RESULTS.md, branch dw).
 * u = min(x, 88): above it exp(-x) is below float's normals and 1 +
 * exp(-x) is 1; a NaN x becomes 88 (x86 min's second operand), the caller's
 * x carries it. Where vscalef takes any n, x -> -inf gives 1 + inf and
 * x / inf = -0; else u is clamped at -87.3 too (n <= 126). */
static inline V KV(vexpn1)(V x)
{
    V u = vmin(x, vset1(88.0f));
#ifndef KVEC_SCALEF_ANY
    u = vmax(u, vset1(-87.33654f));
#endif
    const V n = vround(vmul(u, vset1(-1.44269504088896341f)));
#ifdef KVEC_PLAIN /* a * b + c rounded twice: ln2 in vexp's two parts, n * the first exact */
    const V s = vfma(n, vset1(-2.12194440e-4f), vfma(n, vset1(0.693359375f), u));
#else
    const V s = vfma(n, vset1(0.693147182f), u);
#endif
    V p = vfma(vset1(-8.297654800e-03f), s, vset1(4.191538319e-02f));
    p = vfma(p, s, vset1(-1.666757464e-01f));
    p = vfma(p, s, vset1(4.999889433e-01f));
    p = vfma(p, s, vset1(-9.999997020e-01f));
    p = vfma(p, s, vset1(1.000000119e+00f));
    return vadd(vset1(1.0f), vscalef(p, n));
}

/* x clamped at -87.3 first: sigmoid(-inf) is 0 (1 / (1 + inf)), not NaN */
static inline V KV(vsigmoid)(V x)
{
    return vdiv(vset1(1.0f), KV(vexpn1)(vmax(x, vset1(-87.33654f))));
}

/* x / (1 + exp(-x)); where vexpn1 clamps at -87.3, x too (else x below
 * it over 1 + exp(87.3): -3.5 for -3.3e38, not 0), a NaN kept */
static inline V KV(vsilu)(V x)
{
#ifdef KVEC_SCALEF_ANY
    return vdiv(x, KV(vexpn1)(x));
#else
    return vdiv(vmax(vset1(-87.33654f), x), KV(vexpn1)(x));
#endif
}

/* tanh(|x|) = 1 - 2 / (exp(2|x|) + 1), the sign put back */
static inline V KV(vtanh)(V x)
{
    V e = KV(vexp)(vmul(vabs(x), vset1(2.0f)));
    V t = vsub(vset1(1.0f), vdiv(vset1(2.0f), vadd(e, vset1(1.0f))));
    return vcopysign(t, x);
}

/* erf(x) = x P(x^2) / Q(x^2) on x clamped to [-4, 4] (beyond it erf is
 * +-1 in float32): the rational of Eigen's and XLA's float erf, absolute
 * error 3.3e-7 (4e-7 with vrcp's division), against A-S 7.1.26's 5e-7 (its
 * 1 - p e loses bits near 0). 13 multiply-adds and a reciprocal, no exp:
 * half of A-S's vector operations, a chain a third as long. */
static inline V KV(verf)(V x)
{
    x = vmin(vset1(4.0f), vmax(vset1(-4.0f), x)); /* x second: a NaN stays (x86 min/max) */
    V x2 = vmul(x, x);
    V p = vfma(x2, vset1(-2.72614225801306e-10f), vset1(2.77068142495902e-08f));
    p = vfma(x2, p, vset1(-2.10102402082508e-06f));
    p = vfma(x2, p, vset1(-5.69250639462346e-05f));
    p = vfma(x2, p, vset1(-7.34990630326855e-04f));
    p = vfma(x2, p, vset1(-2.95459980854025e-03f));
    p = vfma(x2, p, vset1(-1.60960333262415e-02f));
    V q = vfma(x2, vset1(-1.45660718464996e-05f), vset1(-2.13374055278905e-04f));
    q = vfma(x2, q, vset1(-1.68282697438203e-03f));
    q = vfma(x2, q, vset1(-7.37332916720468e-03f));
    q = vfma(x2, q, vset1(-1.42647390514189e-02f));
    return vmul(vmul(x, p), vrcp(q));
}

/* One element function on a vector (f is a loop invariant of the callers'
 * loops: KV(fun_row) keeps the switch outside them). */
static inline __attribute__((always_inline)) V KV(vfun)(V x, kfun f, float a, float b)
{
    switch (f) {
    case KF_RELU: return vmax(x, vzero());
    case KF_CLIP: return vmin(vmax(x, vset1(a)), vset1(b));
    case KF_SIGMOID: return KV(vsigmoid)(x);
    case KF_TANH: return KV(vtanh)(x);
    case KF_EXP: return KV(vexp)(x);
    case KF_HARDSIGMOID: return vmin(vmax(vfma(x, vset1(a), vset1(b)), vzero()), vset1(1.0f));
    case KF_HARDSWISH:
        return vmul(x, vmin(vmax(vfma(x, vset1(1.0f / 6), vset1(0.5f)), vzero()), vset1(1.0f)));
    case KF_SILU: return KV(vsilu)(x);
    case KF_GELU_ERF:
        return vmul(vmul(x, vset1(0.5f)),
                    vadd(vset1(1.0f), KV(verf)(vmul(x, vset1(0.70710678118654752f)))));
    case KF_GELU_TANH: {
        V u = vmul(x, vfma(vmul(x, x), vset1(0.044715f), vset1(1.0f)));
        u = vmul(u, vset1(0.79788456080286536f));
        return vmul(vmul(x, vset1(0.5f)), vadd(vset1(1.0f), KV(vtanh)(u)));
    }
    case KF_LEAKY_RELU: return vadd(vmax(x, vzero()), vmul(vset1(a), vmin(x, vzero())));
    default: return x;
    }
}

/* y[i] = f(x[i]) for i < n (y may be x): two whole vectors a step, unmasked,
 * then one, then a masked tail (a masked load and store every vector cost a
 * SiLU 1.3x the CPU time, bench/RESULTS.md). */
#define KV_FUN_CASE(F)                                                                     \
    case F: {                                                                              \
        size_t i = 0;                                                                      \
        for (; i + 2 * VL <= n; i += 2 * VL) {                                             \
            V u0 = KV(vfun)(vload(x + i), F, a, b), u1 = KV(vfun)(vload(x + i + VL), F, a, b); \
            vstore(y + i, u0);                                                             \
            vstore(y + i + VL, u1);                                                        \
        }                                                                                  \
        for (; i + VL <= n; i += VL) vstore(y + i, KV(vfun)(vload(x + i), F, a, b));       \
        if (i < n) vstoren(y + i, KV(vfun)(vloadn(x + i, n - i), F, a, b), n - i);         \
        break;                                                                             \
    }
static inline void KV(fun_row)(float *y, const float *x, size_t n, kfun f, float a, float b)
{
    switch (f) {
        KV_FUN_CASE(KF_RELU)
        KV_FUN_CASE(KF_CLIP)
        KV_FUN_CASE(KF_SIGMOID)
        KV_FUN_CASE(KF_TANH)
        KV_FUN_CASE(KF_EXP)
        KV_FUN_CASE(KF_HARDSIGMOID)
        KV_FUN_CASE(KF_HARDSWISH)
        KV_FUN_CASE(KF_SILU)
        KV_FUN_CASE(KF_GELU_ERF)
        KV_FUN_CASE(KF_GELU_TANH)
        KV_FUN_CASE(KF_LEAKY_RELU)
    default:
        if (y != x) memmove(y, x, n * sizeof *y);
    }
}
#undef KV_FUN_CASE

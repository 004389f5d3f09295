/* Kernels of the norm family, written once over a real type T and included
 * by norm.c for T = float (float32, float16 and bfloat16 data) and
 * T = double (float64 data). K(name) appends the type suffix. Sums are
 * accumulated in double. Expects <tgmath.h> so exp/log/sqrt/pow follow T. */
#if !defined(T) || !defined(K)
#error "define T and K before including norm_kernels.h"
#endif

/* Softmax or LogSoftmax of one contiguous row (n >= 1). Subtracting the
 * row maximum keeps exp from overflowing. */
static void K(softmax_row)(const T *x, T *y, int64_t n, bool log_out)
{
    T m = x[0];
    for (int64_t i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
    double s = 0;
    if (log_out) {
        for (int64_t i = 0; i < n; i++) s += exp(x[i] - m);
        T ls = (T)log(s);
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - ls;
    } else {
        for (int64_t i = 0; i < n; i++) {
            y[i] = exp(x[i] - m);
            s += y[i];
        }
        T r = (T)(1.0 / s);
        for (int64_t i = 0; i < n; i++) y[i] *= r;
    }
}

/* Softmax, LogSoftmax or Hardmax along the middle axis of [outer][len][inner]
 * (len >= 1). Strided rows are processed `inner` at a time so the inner
 * loops stay contiguous. mx, acc and idx hold `inner` elements. */
static void K(softmax)(const T *x, T *y, int64_t outer, int64_t len, int64_t inner, int mode,
                       T *mx, double *acc, int64_t *idx)
{
    if (inner == 1 && mode != SM_HARDMAX) {
        for (int64_t o = 0; o < outer; o++)
            K(softmax_row)(x + o * len, y + o * len, len, mode == SM_LOGSOFTMAX);
        return;
    }
    for (int64_t o = 0; o < outer; o++) {
        const T *xo = x + o * len * inner;
        T *yo = y + o * len * inner;
        for (int64_t j = 0; j < inner; j++) {
            mx[j] = xo[j];
            idx[j] = 0;
            acc[j] = 0;
        }
        if (mode == SM_HARDMAX) { /* the first occurrence of the maximum wins */
            for (int64_t k = 1; k < len; k++)
                for (int64_t j = 0; j < inner; j++)
                    if (xo[k * inner + j] > mx[j]) {
                        mx[j] = xo[k * inner + j];
                        idx[j] = k;
                    }
            for (int64_t k = 0; k < len; k++)
                for (int64_t j = 0; j < inner; j++) yo[k * inner + j] = (T)(idx[j] == k);
            continue;
        }
        for (int64_t k = 1; k < len; k++)
            for (int64_t j = 0; j < inner; j++)
                mx[j] = xo[k * inner + j] > mx[j] ? xo[k * inner + j] : mx[j];
        for (int64_t k = 0; k < len; k++)
            for (int64_t j = 0; j < inner; j++) {
                T e = exp(xo[k * inner + j] - mx[j]);
                if (mode == SM_SOFTMAX) yo[k * inner + j] = e;
                acc[j] += e;
            }
        if (mode == SM_SOFTMAX) {
            for (int64_t j = 0; j < inner; j++) mx[j] = (T)(1.0 / acc[j]);
            for (int64_t k = 0; k < len; k++)
                for (int64_t j = 0; j < inner; j++) yo[k * inner + j] *= mx[j];
        } else { /* log softmax: (x - max) - log(sum) */
            for (int64_t j = 0; j < inner; j++) acc[j] = log(acc[j]);
            for (int64_t k = 0; k < len; k++)
                for (int64_t j = 0; j < inner; j++)
                    yo[k * inner + j] = (T)((xo[k * inner + j] - mx[j]) - acc[j]);
        }
    }
}

/* Sum of x[0..n) and sum of squared deviations from m. */
static double K(sum)(const T *x, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    return s;
}

static double K(sqdev)(const T *x, int64_t n, double m)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = x[i] - m;
        s += d * d;
    }
    return s;
}

/* y = (x - m) * a + b: normalisation with a per-segment scale and shift. */
static void K(affine)(const T *x, T *y, int64_t n, T m, T a, T b)
{
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * a + b;
}

/* y = (x - m) * inv * s[i] + b[i] (b may be NULL): elementwise scale/shift. */
static void K(affine_v)(const T *x, T *y, int64_t n, T m, T inv, const T *s, const T *b)
{
    if (b)
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * inv * s[i] + b[i];
    else
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * inv * s[i];
}

/* BatchNormalization on [N][P][S]: y = (x - mu[p]) * a[p] + b[p]. */
static void K(batchnorm)(const T *x, T *y, int64_t N, int64_t P, int64_t S, const double *mu,
                         const double *a, const double *b)
{
    for (int64_t n = 0; n < N; n++)
        for (int64_t p = 0; p < P; p++)
            K(affine)(x + (n * P + p) * S, y + (n * P + p) * S, S, (T)mu[p], (T)a[p], (T)b[p]);
}

/* Batch mean and biased variance of each p of [N][P][S] (training mode). */
static void K(bn_stats)(const T *x, int64_t N, int64_t P, int64_t S, double *mu, double *var)
{
    double cnt = (double)N * (double)S;
    for (int64_t p = 0; p < P; p++) {
        double s = 0, v = 0;
        for (int64_t n = 0; n < N; n++) s += K(sum)(x + (n * P + p) * S, S);
        mu[p] = s / cnt;
        for (int64_t n = 0; n < N; n++) v += K(sqdev)(x + (n * P + p) * S, S, mu[p]);
        var[p] = v / cnt;
    }
}

/* Group normalisation of [N][C][S] with G groups of C/G channels (instance
 * normalisation when G == C); scale and bias are per channel. */
static void K(groupnorm)(const T *x, T *y, int64_t N, int64_t C, int64_t G, int64_t S,
                         const double *scale, const double *bias, double eps)
{
    int64_t cg = C / G, len = cg * S;
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < G; g++) {
            int64_t off = (n * C + g * cg) * S;
            double m = K(sum)(x + off, len) / (double)len;
            double inv = 1.0 / sqrt(K(sqdev)(x + off, len, m) / (double)len + eps);
            for (int64_t k = 0; k < cg; k++) {
                int64_t ch = g * cg + k;
                K(affine)(x + off + k * S, y + off + k * S, S, (T)m, (T)(inv * scale[ch]),
                          (T)bias[ch]);
            }
        }
}

/* Layer normalisation of `outer` rows of `inner` elements. Row o uses the
 * parameter row o % prow of s and b (b may be NULL); the per-row mean and
 * inverse standard deviation go to mean[] and inv[]. */
static void K(layernorm)(const T *x, T *y, int64_t outer, int64_t inner, int64_t prow,
                         const T *s, const T *b, double eps, double *mean, double *inv)
{
    for (int64_t o = 0; o < outer; o++) {
        const T *xr = x + o * inner;
        int64_t po = (o % prow) * inner;
        double m = K(sum)(xr, inner) / (double)inner;
        double iv = 1.0 / sqrt(K(sqdev)(xr, inner, m) / (double)inner + eps);
        K(affine_v)(xr, y + o * inner, inner, (T)m, (T)iv, s + po, b ? b + po : NULL);
        mean[o] = m;
        inv[o] = iv;
    }
}

/* RMSNormalization: layernorm without the mean, y = x / sqrt(mean(x^2) + eps) * s. */
static void K(rmsnorm)(const T *x, T *y, int64_t outer, int64_t inner, int64_t prow, const T *s,
                       double eps)
{
    for (int64_t o = 0; o < outer; o++) {
        const T *xr = x + o * inner;
        double iv = 1.0 / sqrt(K(sqdev)(xr, inner, 0) / (double)inner + eps);
        K(affine_v)(xr, y + o * inner, inner, 0, (T)iv, s + (o % prow) * inner, NULL);
    }
}

/* LRN over channels of [N][C][S]: y = x / (bias + alpha/size * sum x^2)^beta,
 * the sum over channels [c - (size-1)/2, c + ceil((size-1)/2)]. acc holds S. */
static void K(lrn)(const T *x, T *y, int64_t N, int64_t C, int64_t S, int64_t size, T alpha,
                   T beta, T bias, T *acc)
{
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    T k = alpha / (T)size;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            int64_t c0 = c - lo < 0 ? 0 : c - lo, c1 = c + hi >= C ? C - 1 : c + hi;
            for (int64_t s = 0; s < S; s++) acc[s] = 0;
            for (int64_t cc = c0; cc <= c1; cc++) {
                const T *xc = x + (n * C + cc) * S;
                for (int64_t s = 0; s < S; s++) acc[s] += xc[s] * xc[s];
            }
            const T *xc = x + (n * C + c) * S;
            T *yc = y + (n * C + c) * S;
            for (int64_t s = 0; s < S; s++) yc[s] = xc[s] / pow(bias + k * acc[s], beta);
        }
}

/* One pass of MeanVarianceNormalization over a tensor of `rank` dims, where
 * kst[d] is the stride of dim d in the array of kept (not reduced) positions
 * (0 for reduced dims). pass 0 adds x into sum[], pass 1 adds (x - mean)^2
 * into sq[], pass 2 writes y = (x - mean) / (sqrt(var) + 1e-9) where mean
 * and var were already divided by the reduced count. */
static void K(mvn_pass)(int pass, const T *x, T *y, int rank, const int64_t *dims,
                        const int64_t *kst, double *sum, double *sq)
{
    int64_t last = dims[rank - 1], ks = kst[rank - 1], rows = 1, idx[AIT_MAX_RANK] = {0};
    for (int d = 0; d < rank - 1; d++) rows *= dims[d];
    for (int64_t r = 0; r < rows; r++) {
        int64_t ko = 0;
        for (int d = 0; d < rank - 1; d++) ko += idx[d] * kst[d];
        const T *xr = x + r * last;
        if (pass == 0) {
            for (int64_t j = 0; j < last; j++) sum[ko + j * ks] += xr[j];
        } else if (pass == 1) {
            for (int64_t j = 0; j < last; j++) {
                double d = xr[j] - sum[ko + j * ks];
                sq[ko + j * ks] += d * d;
            }
        } else {
            T *yr = y + r * last;
            for (int64_t j = 0; j < last; j++)
                yr[j] = (T)((xr[j] - sum[ko + j * ks]) / (sqrt(sq[ko + j * ks]) + 1e-9));
        }
        for (int d = rank - 2; d >= 0; d--) { /* next row's index */
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
}

/* LpNormalization over the middle axis of [outer][len][inner]: norm[] holds
 * inner accumulators (double); a zero norm gives zeros. */
static void K(lp_normalize)(const T *x, T *y, int64_t outer, int64_t len, int64_t inner, int p,
                            double *norm)
{
    for (int64_t o = 0; o < outer; o++) {
        const T *xo = x + o * len * inner;
        T *yo = y + o * len * inner;
        for (int64_t i = 0; i < inner; i++) norm[i] = 0;
        for (int64_t l = 0; l < len; l++)
            for (int64_t i = 0; i < inner; i++) {
                double v = xo[l * inner + i];
                norm[i] += p == 1 ? fabs(v) : v * v;
            }
        if (p == 2)
            for (int64_t i = 0; i < inner; i++) norm[i] = sqrt(norm[i]);
        for (int64_t l = 0; l < len; l++)
            for (int64_t i = 0; i < inner; i++)
                yo[l * inner + i] = norm[i] == 0 ? (T)0 : (T)(xo[l * inner + i] / norm[i]);
    }
}

/* Signal processing ops: DFT (opsets 17, 20), STFT, HannWindow,
 * HammingWindow, BlackmanWindow, MelWeightMatrix (17), and Det (11).
 *
 * Transforms run in double on split real/imaginary arrays, one 1-D
 * transform at a time: a radix-2 FFT when the length is a power of two,
 * Bluestein's chirp-z (three power-of-two FFTs) for longer other lengths,
 * and a direct O(n^2) sum for short ones. Complex tensors follow ONNX: a
 * last axis of 2 holds (real, imaginary); a last axis of 1 is real. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "ops/op.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- helpers ------------------------------------------------------------ */

/* Input i as one integer (a scalar or a 1-element tensor); AIT_DEFER while
 * its data is unknown. */
static ait_status scalar_int(op_ctx *c, int i, const char *what, int64_t *v)
{
    TRY(need_in(c, i, what));
    const tensor *t = c->in[i];
    if (!dtype_is_int(t->dtype))
        return err_set(c->err, AIT_E_DTYPE, "%s must be an integer, not %s", what,
                       ait_dtype_name(t->dtype));
    if (tensor_numel(t) != 1 || t->rank > 1)
        return err_set(c->err, AIT_E_SHAPE, "%s must be a scalar", what);
    if (!t->data) return AIT_DEFER;
    *v = elem_get_i64(t->data, t->dtype, 0);
    return AIT_OK;
}

static ait_status scalar_float(op_ctx *c, int i, const char *what, double *v)
{
    TRY(need_in(c, i, what));
    const tensor *t = c->in[i];
    TRY(check_float(c, t, what));
    if (tensor_numel(t) != 1 || t->rank > 1)
        return err_set(c->err, AIT_E_SHAPE, "%s must be a scalar", what);
    if (!t->data) return AIT_DEFER;
    *v = elem_get_f64(t->data, t->dtype, 0);
    return AIT_OK;
}

/* The output_datatype attribute (default float32); numeric types only. */
static ait_status out_dtype(op_ctx *c, ait_dtype *dt)
{
    int64_t v = attr_int(c->n, "output_datatype", AIT_F32);
    ait_dtype t = (ait_dtype)v;
    if (v != (int64_t)t || !(dtype_is_float(t) || dtype_is_int(t)))
        return err_set(c->err, AIT_E_UNSUPPORTED, "unsupported output_datatype %lld",
                       (long long)v);
    *dt = t;
    return AIT_OK;
}

/* ---- 1-D complex transform ---------------------------------------------- */

enum { BLUESTEIN_MIN = 64 }; /* below this, a direct sum is as fast */

typedef struct fft_setup {
    int64_t n;        /* transform length */
    int64_t m;        /* power-of-two length of the inner FFT: n, or Bluestein's */
    double *wr, *wi;  /* twiddles exp(-2 pi i k / m), k < m (direct: m == n) */
    double *cr, *ci;  /* Bluestein chirp exp(-pi i k^2 / n), k < n */
    double *br, *bi;  /* Bluestein: FFT of the conjugate chirp, length m */
    double *ar, *ai;  /* work, length m (direct: output buffer, length n) */
    bool pow2, direct;
} fft_setup;

static bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

static void fft_setup_shape(fft_setup *p, int64_t n)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->pow2 = is_pow2(n);
    p->direct = !p->pow2 && n < BLUESTEIN_MIN;
    p->m = n;
    if (!p->pow2 && !p->direct) {
        p->m = 1;
        while (p->m < 2 * n - 1) p->m <<= 1;
    }
}

/* Scratch sizes of the setup's arrays wr, wi, cr, ci, br, bi, ar, ai (0:
 * unused), the parts fft_setup_init takes. */
enum { PLAN_PARTS = 8 };
static void fft_setup_sizes(const fft_setup *p, size_t *b)
{
    size_t nb = (size_t)p->n * sizeof(double), mb = p->direct ? nb : (size_t)p->m * sizeof(double);
    bool blue = !p->pow2 && !p->direct;
    b[0] = b[1] = mb;               /* twiddles */
    b[2] = b[3] = blue ? nb : 0;    /* chirp */
    b[4] = b[5] = blue ? mb : 0;    /* its FFT */
    b[6] = b[7] = p->pow2 ? 0 : mb; /* work */
}

static void twiddles(double *wr, double *wi, int64_t m)
{
    for (int64_t k = 0; k < m; k++) {
        double a = -2.0 * M_PI * (double)k / (double)m;
        wr[k] = cos(a);
        wi[k] = sin(a);
    }
}

static void fft_pow2(double *re, double *im, int64_t n, const double *wr, const double *wi)
{
    for (int64_t i = 1, j = 0; i < n; i++) { /* bit-reversal permutation */
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i];
            re[i] = re[j], re[j] = t;
            t = im[i];
            im[i] = im[j], im[j] = t;
        }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        int64_t half = len >> 1, step = n / len;
        for (int64_t i = 0; i < n; i += len) {
            double *ur = re + i, *ui = im + i, *vr = ur + half, *vi = ui + half;
            for (int64_t k = 0; k < half; k++) {
                double c = wr[k * step], s = wi[k * step];
                double tr = vr[k] * c - vi[k] * s, ti = vr[k] * s + vi[k] * c;
                vr[k] = ur[k] - tr, vi[k] = ui[k] - ti;
                ur[k] += tr, ui[k] += ti;
            }
        }
    }
}

static void fft_setup_init(fft_setup *p, void **parts)
{
    int64_t n = p->n, m = p->m;
    size_t mb = (size_t)(p->direct ? n : m) * sizeof(double);
    p->wr = parts[0], p->wi = parts[1], p->cr = parts[2], p->ci = parts[3];
    p->br = parts[4], p->bi = parts[5], p->ar = parts[6], p->ai = parts[7];
    twiddles(p->wr, p->wi, m);
    if (p->pow2 || p->direct) return;
    for (int64_t k = 0; k < n; k++) {
        /* k^2 mod 2n keeps the angle small and exact */
        unsigned __int128 kk = (unsigned __int128)k * (unsigned __int128)k;
        int64_t q = (int64_t)(kk % (unsigned __int128)(2 * n));
        double a = -M_PI * (double)q / (double)n;
        p->cr[k] = cos(a), p->ci[k] = sin(a);
    }
    memset(p->br, 0, mb);
    memset(p->bi, 0, mb);
    for (int64_t k = 0; k < n; k++) {
        p->br[k] = p->cr[k], p->bi[k] = -p->ci[k];
        if (k) p->br[m - k] = p->cr[k], p->bi[m - k] = -p->ci[k];
    }
    fft_pow2(p->br, p->bi, m, p->wr, p->wi);
}

/* Forward DFT of (re, im), length p->n, in place. */
static void fft_forward(fft_setup *p, double *re, double *im)
{
    int64_t n = p->n, m = p->m;
    if (p->pow2) {
        fft_pow2(re, im, n, p->wr, p->wi);
        return;
    }
    if (p->direct) {
        for (int64_t k = 0; k < n; k++) {
            double sr = 0, si = 0;
            int64_t idx = 0; /* k * j mod n */
            for (int64_t j = 0; j < n; j++) {
                double c = p->wr[idx], s = p->wi[idx];
                sr += re[j] * c - im[j] * s;
                si += re[j] * s + im[j] * c;
                idx += k;
                if (idx >= n) idx -= n;
            }
            p->ar[k] = sr, p->ai[k] = si;
        }
        memcpy(re, p->ar, (size_t)n * sizeof *re);
        memcpy(im, p->ai, (size_t)n * sizeof *im);
        return;
    }
    /* Bluestein: X = chirp * (chirp * x) conv conj(chirp) */
    double *ar = p->ar, *ai = p->ai;
    for (int64_t k = 0; k < n; k++) {
        ar[k] = re[k] * p->cr[k] - im[k] * p->ci[k];
        ai[k] = re[k] * p->ci[k] + im[k] * p->cr[k];
    }
    memset(ar + n, 0, (size_t)(m - n) * sizeof *ar);
    memset(ai + n, 0, (size_t)(m - n) * sizeof *ai);
    fft_pow2(ar, ai, m, p->wr, p->wi);
    for (int64_t k = 0; k < m; k++) { /* product, conjugated for the inverse FFT */
        double r = ar[k] * p->br[k] - ai[k] * p->bi[k];
        double i = ar[k] * p->bi[k] + ai[k] * p->br[k];
        ar[k] = r, ai[k] = -i;
    }
    fft_pow2(ar, ai, m, p->wr, p->wi);
    double inv = 1.0 / (double)m;
    for (int64_t k = 0; k < n; k++) {
        double r = ar[k] * inv, i = -ai[k] * inv;
        re[k] = r * p->cr[k] - i * p->ci[k];
        im[k] = r * p->ci[k] + i * p->cr[k];
    }
}

/* DFT (forward) or inverse DFT (scaled by 1/n) of (re, im) in place. */
static void transform(fft_setup *p, double *re, double *im, bool inverse)
{
    int64_t n = p->n;
    if (inverse) /* idft(x) = conj(dft(conj(x))) / n */
        for (int64_t k = 0; k < n; k++) im[k] = -im[k];
    fft_forward(p, re, im);
    if (inverse) {
        double s = 1.0 / (double)n;
        for (int64_t k = 0; k < n; k++) re[k] *= s, im[k] *= -s;
    }
}

/* ---- DFT ---------------------------------------------------------------- */

typedef struct dft_args {
    int axis;
    int64_t len;     /* transform length */
    int64_t out_len; /* bins written along axis */
    bool inverse;
} dft_args;

static ait_status dft_params(op_ctx *c, dft_args *a)
{
    TRY(need_in(c, 0, "input"));
    const tensor *x = c->in[0];
    TRY(check_float(c, x, "input"));
    int r = x->rank;
    if (r < 2 || (x->dims[r - 1] != 1 && x->dims[r - 1] != 2))
        return err_set(c->err, AIT_E_SHAPE,
                       "input must have rank >= 2 and a last axis of 1 (real) or 2 (complex)");
    int64_t axis = 0;
    if (c->n->version >= 20) {
        axis = -2;
        if (has_in(c, 2)) TRY(scalar_int(c, 2, "axis", &axis));
    } else {
        if (has_in(c, 2))
            return err_set(c->err, AIT_E_INVALID_ARG, "DFT-17 takes no axis input");
        axis = attr_int(c->n, "axis", 1);
    }
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r - 2)
        return err_set(c->err, AIT_E_INVALID_ARG, "axis %lld is out of range for rank %d",
                       (long long)axis, r);
    a->axis = (int)axis;
    a->len = x->dims[axis];
    if (has_in(c, 1)) {
        TRY(scalar_int(c, 1, "dft_length", &a->len));
        if (a->len < 1 || a->len > ((int64_t)1 << 40))
            return err_set(c->err, AIT_E_INVALID_ARG, "dft_length %lld is out of range",
                           (long long)a->len);
    }
    int64_t inv = attr_int(c->n, "inverse", 0), one = attr_int(c->n, "onesided", 0);
    if ((inv != 0 && inv != 1) || (one != 0 && one != 1))
        return err_set(c->err, AIT_E_INVALID_ARG, "inverse and onesided must be 0 or 1");
    a->inverse = inv;
    a->out_len = one ? a->len / 2 + 1 : a->len;
    return AIT_OK;
}

static ait_status dft_infer(op_ctx *c)
{
    dft_args a;
    TRY(dft_params(c, &a));
    const tensor *x = c->in[0];
    int64_t d[AIT_MAX_RANK];
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    d[a.axis] = a.out_len;
    d[x->rank - 1] = 2;
    set_out(c, 0, x->dtype, x->rank, d);
    return AIT_OK;
}

static ait_status dft_run(op_ctx *c)
{
    dft_args a;
    TRY(dft_params(c, &a));
    const tensor *x = c->in[0];
    tensor *y = c->out[0];
    int r = x->rank;
    int64_t outer = dims_prod(x->dims, 0, a.axis), inner = dims_prod(x->dims, a.axis + 1, r - 1);
    int64_t n_in = x->dims[a.axis], comp = x->dims[r - 1], n = a.len;
    if (tensor_numel(y) == 0) return AIT_OK;
    fft_setup p;
    fft_setup_shape(&p, n);
    size_t bytes[PLAN_PARTS + 2];
    void *parts[PLAN_PARTS + 2];
    fft_setup_sizes(&p, bytes);
    bytes[PLAN_PARTS] = bytes[PLAN_PARTS + 1] = (size_t)n * sizeof(double);
    TRY(op_scratch_parts(c, PLAN_PARTS + 2, bytes, parts));
    fft_setup_init(&p, parts);
    double *re = parts[PLAN_PARTS], *im = parts[PLAN_PARTS + 1];
    int64_t take_n = n_in < n ? n_in : n, xs = inner * comp, ys = inner * 2;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t xb = (o * n_in * inner + i) * comp, yb = (o * a.out_len * inner + i) * 2;
            for (int64_t k = 0; k < take_n; k++) {
                re[k] = elem_get_f64(x->data, x->dtype, xb + k * xs);
                im[k] = comp == 2 ? elem_get_f64(x->data, x->dtype, xb + k * xs + 1) : 0.0;
            }
            for (int64_t k = take_n; k < n; k++) re[k] = im[k] = 0; /* zero padding */
            transform(&p, re, im, a.inverse);
            for (int64_t k = 0; k < a.out_len; k++) {
                elem_set_f64(y->data, y->dtype, yb + k * ys, re[k]);
                elem_set_f64(y->data, y->dtype, yb + k * ys + 1, im[k]);
            }
        }
    }
    return AIT_OK;
}

/* ---- STFT --------------------------------------------------------------- */

typedef struct stft_args {
    int64_t step, flen, frames, bins;
} stft_args;

static ait_status stft_params(op_ctx *c, stft_args *a)
{
    TRY(need_in(c, 0, "signal"));
    const tensor *x = c->in[0];
    TRY(check_float(c, x, "signal"));
    if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
        return err_set(c->err, AIT_E_SHAPE,
                       "signal must be [batch, length, 1] (real) or [batch, length, 2] (complex)");
    int64_t slen = x->dims[1], wlen = -1;
    if (has_in(c, 2)) {
        const tensor *w = c->in[2];
        TRY(check_float(c, w, "window"));
        if (w->rank != 1) return err_set(c->err, AIT_E_SHAPE, "window must have rank 1");
        wlen = w->dims[0];
    }
    a->flen = wlen >= 0 ? wlen : slen;
    if (has_in(c, 3)) {
        TRY(scalar_int(c, 3, "frame_length", &a->flen));
        if (wlen >= 0 && a->flen != wlen)
            return err_set(c->err, AIT_E_SHAPE, "frame_length %lld differs from window length %lld",
                           (long long)a->flen, (long long)wlen);
    }
    TRY(scalar_int(c, 1, "frame_step", &a->step));
    if (a->step < 1)
        return err_set(c->err, AIT_E_INVALID_ARG, "frame_step %lld must be positive",
                       (long long)a->step);
    if (a->flen < 1 || a->flen > slen)
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "frame_length %lld must be in [1, signal length %lld]", (long long)a->flen,
                       (long long)slen);
    int64_t one = attr_int(c->n, "onesided", 1);
    if (one != 0 && one != 1) return err_set(c->err, AIT_E_INVALID_ARG, "onesided must be 0 or 1");
    a->frames = (slen - a->flen) / a->step + 1;
    a->bins = one ? a->flen / 2 + 1 : a->flen;
    return AIT_OK;
}

static ait_status stft_infer(op_ctx *c)
{
    stft_args a;
    TRY(stft_params(c, &a));
    int64_t d[4] = {c->in[0]->dims[0], a.frames, a.bins, 2};
    set_out(c, 0, c->in[0]->dtype, 4, d);
    return AIT_OK;
}

static ait_status stft_run(op_ctx *c)
{
    stft_args a;
    TRY(stft_params(c, &a));
    const tensor *x = c->in[0], *w = has_in(c, 2) ? c->in[2] : NULL;
    tensor *y = c->out[0];
    int64_t n = a.flen, comp = x->dims[2], slen = x->dims[1];
    if (tensor_numel(y) == 0) return AIT_OK;
    fft_setup p;
    fft_setup_shape(&p, n);
    size_t bytes[PLAN_PARTS + 3];
    void *parts[PLAN_PARTS + 3];
    fft_setup_sizes(&p, bytes);
    for (int i = PLAN_PARTS; i < PLAN_PARTS + 3; i++) bytes[i] = (size_t)n * sizeof(double);
    TRY(op_scratch_parts(c, PLAN_PARTS + 3, bytes, parts));
    fft_setup_init(&p, parts);
    double *re = parts[PLAN_PARTS], *im = parts[PLAN_PARTS + 1], *win = parts[PLAN_PARTS + 2];
    for (int64_t k = 0; k < n; k++) win[k] = w ? elem_get_f64(w->data, w->dtype, k) : 1.0;
    for (int64_t b = 0; b < x->dims[0]; b++) {
        for (int64_t f = 0; f < a.frames; f++) {
            int64_t xb = (b * slen + f * a.step) * comp;
            for (int64_t k = 0; k < n; k++) {
                re[k] = elem_get_f64(x->data, x->dtype, xb + k * comp) * win[k];
                im[k] = comp == 2 ? elem_get_f64(x->data, x->dtype, xb + k * comp + 1) * win[k] : 0.0;
            }
            transform(&p, re, im, false);
            int64_t yb = (b * a.frames + f) * a.bins * 2;
            for (int64_t k = 0; k < a.bins; k++) {
                elem_set_f64(y->data, y->dtype, yb + 2 * k, re[k]);
                elem_set_f64(y->data, y->dtype, yb + 2 * k + 1, im[k]);
            }
        }
    }
    return AIT_OK;
}

/* ---- window functions --------------------------------------------------- */

/* w[k] = a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N), N = size (periodic)
 * or size - 1 (symmetric). */
static const struct window_def {
    const char *op;
    double a0, a1, a2;
} windows[] = {
    {"HannWindow", 0.5, 0.5, 0.0},
    {"HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0},
    {"BlackmanWindow", 0.42, 0.5, 0.08},
};

static ait_status window_params(op_ctx *c, int64_t *size, ait_dtype *dt)
{
    TRY(out_dtype(c, dt));
    TRY(scalar_int(c, 0, "size", size));
    if (*size < 0)
        return err_set(c->err, AIT_E_INVALID_ARG, "size %lld is negative", (long long)*size);
    return AIT_OK;
}

static ait_status window_infer(op_ctx *c)
{
    int64_t size = 0;
    ait_dtype dt;
    TRY(window_params(c, &size, &dt));
    set_out(c, 0, dt, 1, &size);
    return AIT_OK;
}

static ait_status window_run(op_ctx *c)
{
    int64_t size = 0;
    ait_dtype dt;
    TRY(window_params(c, &size, &dt));
    const struct window_def *wd = NULL;
    for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++)
        if (strcmp(c->n->op, windows[i].op) == 0) wd = &windows[i];
    if (!wd) return err_set(c->err, AIT_E_INTERNAL, "no window function for %s", c->n->op);
    int64_t periodic = attr_int(c->n, "periodic", 1);
    int64_t N = periodic ? size : size - 1;
    for (int64_t k = 0; k < size; k++) {
        double t = 2.0 * M_PI * (double)k / (double)N;
        /* a one-point symmetric window is [1], as in torch and numpy */
        double v = N > 0 ? wd->a0 - wd->a1 * cos(t) + wd->a2 * cos(2 * t) : 1.0;
        elem_set_f64(c->out[0]->data, dt, k, v);
    }
    return AIT_OK;
}

/* ---- MelWeightMatrix ---------------------------------------------------- */

typedef struct mel_args {
    int64_t bins, dft_len, rate;
    double lo, hi;
    ait_dtype dt;
} mel_args;

static ait_status mel_params(op_ctx *c, mel_args *a)
{
    TRY(out_dtype(c, &a->dt));
    TRY(scalar_int(c, 0, "num_mel_bins", &a->bins));
    TRY(scalar_int(c, 1, "dft_length", &a->dft_len));
    TRY(scalar_int(c, 2, "sample_rate", &a->rate));
    TRY(scalar_float(c, 3, "lower_edge_hertz", &a->lo));
    TRY(scalar_float(c, 4, "upper_edge_hertz", &a->hi));
    if (a->bins < 1 || a->dft_len < 1 || a->rate < 1)
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "num_mel_bins, dft_length and sample_rate must be positive");
    if (!(a->lo >= 0 && a->lo <= a->hi && a->hi <= 0x1p53))
        return err_set(c->err, AIT_E_INVALID_ARG,
                       "need 0 <= lower_edge_hertz (%g) <= upper_edge_hertz (%g)", a->lo, a->hi);
    return AIT_OK;
}

static ait_status mel_infer(op_ctx *c)
{
    mel_args a;
    TRY(mel_params(c, &a));
    int64_t d[2] = {a.dft_len / 2 + 1, a.bins};
    set_out(c, 0, a.dt, 2, d);
    return AIT_OK;
}

static double hz_to_mel(double hz) { return 2595.0 * log10(1.0 + hz / 700.0); }

static ait_status mel_run(op_ctx *c)
{
    mel_args a;
    TRY(mel_params(c, &a));
    int64_t nspec = a.dft_len / 2 + 1, nb = a.bins;
    size_t bytes = (size_t)(nb + 2) * sizeof(int64_t);
    void *edge_p;
    TRY(op_scratch_parts(c, 1, &bytes, &edge_p));
    int64_t *edge = edge_p;
    /* num_mel_bins + 2 points evenly spaced in mel, as spectrogram bins */
    double lo = hz_to_mel(a.lo), step = (hz_to_mel(a.hi) - lo) / (double)(nb + 2);
    for (int64_t i = 0; i < nb + 2; i++) {
        double hz = 700.0 * (pow(10.0, ((double)i * step + lo) / 2595.0) - 1.0);
        double b = floor((double)(a.dft_len + 1) * hz / (double)a.rate);
        if (!(b >= 0 && b < (double)nspec))
            return err_set(c->err, AIT_E_INVALID_ARG,
                           "upper_edge_hertz %g lies above the spectrogram's %lld bins", a.hi,
                           (long long)nspec);
        edge[i] = (int64_t)b;
    }
    void *y = c->out[0]->data;
    for (int64_t i = 0; i < nb; i++) { /* triangle from edge[i] up to edge[i+1], down to edge[i+2] */
        int64_t l = edge[i], m = edge[i + 1], h = edge[i + 2];
        if (m == l) elem_set_f64(y, a.dt, m * nb + i, 1.0);
        else
            for (int64_t j = l; j <= m; j++)
                elem_set_f64(y, a.dt, j * nb + i, (double)(j - l) / (double)(m - l));
        for (int64_t j = m; j < h; j++) elem_set_f64(y, a.dt, j * nb + i, (double)(h - j) / (double)(h - m));
    }
    return AIT_OK;
}

/* ---- Det ---------------------------------------------------------------- */

static ait_status det_infer(op_ctx *c)
{
    TRY(need_in(c, 0, "X"));
    const tensor *x = c->in[0];
    TRY(check_float(c, x, "input"));
    int r = x->rank;
    if (r < 2 || x->dims[r - 1] != x->dims[r - 2])
        return err_set(c->err, AIT_E_SHAPE, "input must be [..., M, M]");
    set_out(c, 0, x->dtype, r - 2, x->dims);
    return AIT_OK;
}

static ait_status det_run(op_ctx *c)
{
    TRY(det_infer(c));
    const tensor *x = c->in[0];
    int r = x->rank;
    int64_t m = x->dims[r - 1], batch = dims_prod(x->dims, 0, r - 2);
    if (batch == 0) return AIT_OK;
    size_t bytes = (size_t)(m * m) * sizeof(double);
    void *a_p;
    TRY(op_scratch_parts(c, 1, &bytes, &a_p));
    double *a = a_p;
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t i = 0; i < m * m; i++) a[i] = elem_get_f64(x->data, x->dtype, b * m * m + i);
        double det = 1.0;
        /* LU with partial pivoting: det = sign * prod(U's diagonal) */
        for (int64_t k = 0; k < m && det != 0; k++) {
            int64_t piv = k;
            for (int64_t i = k + 1; i < m; i++)
                if (fabs(a[i * m + k]) > fabs(a[piv * m + k])) piv = i;
            if (a[piv * m + k] == 0) {
                det = 0;
                break;
            }
            if (piv != k) {
                for (int64_t j = 0; j < m; j++) {
                    double t = a[k * m + j];
                    a[k * m + j] = a[piv * m + j], a[piv * m + j] = t;
                }
                det = -det;
            }
            double d = a[k * m + k];
            det *= d;
            for (int64_t i = k + 1; i < m; i++) {
                double f = a[i * m + k] / d;
                double *ri = a + i * m, *rk = a + k * m;
                for (int64_t j = k + 1; j < m; j++) ri[j] -= f * rk[j];
            }
        }
        elem_set_f64(c->out[0]->data, c->out[0]->dtype, b, det);
    }
    return AIT_OK;
}

/* Designated initializers: op_def fields not named here stay zero. */

OP_TABLE(signal,
         OP_DEF("DFT", 1, 3, 1, 1, dft_infer, dft_run),
         OP_DEF("STFT", 2, 4, 1, 1, stft_infer, stft_run),
         OP_DEF("HannWindow", 1, 1, 1, 1, window_infer, window_run),
         OP_DEF("HammingWindow", 1, 1, 1, 1, window_infer, window_run),
         OP_DEF("BlackmanWindow", 1, 1, 1, 1, window_infer, window_run),
         /* writes each filter's triangle only (OP_ZERO_OUTPUTS) */
         {.name = "MelWeightMatrix", .min_in = 5, .max_in = 5, .min_out = 1, .max_out = 1,
          .flags = OP_ZERO_OUTPUTS, .infer = mel_infer, .run = mel_run},
         OP_DEF("Det", 1, 1, 1, 1, det_infer, det_run));

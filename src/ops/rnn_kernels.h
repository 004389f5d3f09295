/* The recurrence of the rnn family, written once over a real type T and
 * included by rnn.c for T = float (float32, float16 and bfloat16 data) and
 * T = double (float64 data). K(name) appends the type suffix. Expects
 * <tgmath.h> so exp/tanh/log1p follow T, and rnn.c's rnn_cfg / rnn_io. */
#if !defined(T) || !defined(K)
#error "define T and K before including rnn_kernels.h"
#endif

/* C[M,N] += A[M,K] * B[K,N] (row-major, leading dimensions lda/ldb/ldc).
 * Blocked over K and N so a block of B stays in cache while every row of A
 * passes over it; the innermost loop runs along contiguous rows of B and C
 * so it vectorises. */
static void K(gemm)(int64_t M, int64_t N, int64_t Kd, const T *A, int64_t lda, const T *B,
                    int64_t ldb, T *C, int64_t ldc)
{
    enum { KB = 128, NB = 256 };
    for (int64_t j0 = 0; j0 < N; j0 += NB) {
        int64_t nb = N - j0 < NB ? N - j0 : NB;
        for (int64_t k0 = 0; k0 < Kd; k0 += KB) {
            int64_t kb = Kd - k0 < KB ? Kd - k0 : KB;
            for (int64_t i = 0; i < M; i++) {
                T *restrict c = C + i * ldc + j0;
                const T *a = A + i * lda + k0;
                for (int64_t k = 0; k < kb; k++) {
                    const T av = a[k];
                    const T *restrict b = B + (k0 + k) * ldb + j0;
                    for (int64_t j = 0; j < nb; j++) c[j] += av * b[j];
                }
            }
        }
    }
}

/* dst[k][j] = src[j][k] for src of n rows and m columns. */
static void K(transpose)(const T *src, int64_t n, int64_t m, T *dst)
{
    for (int64_t j = 0; j < n; j++)
        for (int64_t k = 0; k < m; k++) dst[k * n + j] = src[j * m + k];
}

/* v = f(clip(v)) over n elements; the switch sits outside the loops. */
static void K(activate)(const rnn_act *f, T *v, int64_t n, float clip)
{
    if (clip > 0) {
        const T hi = (T)clip, lo = -hi;
        for (int64_t i = 0; i < n; i++) v[i] = v[i] < lo ? lo : v[i] > hi ? hi : v[i];
    }
    const T a = (T)f->alpha, b = (T)f->beta;
    switch (f->kind) {
    case ACT_RELU:
        for (int64_t i = 0; i < n; i++) v[i] = v[i] > 0 ? v[i] : 0;
        break;
    case ACT_TANH:
        for (int64_t i = 0; i < n; i++) v[i] = tanh(v[i]);
        break;
    case ACT_SIGMOID:
        for (int64_t i = 0; i < n; i++) v[i] = 1 / (1 + exp(-v[i]));
        break;
    case ACT_AFFINE:
        for (int64_t i = 0; i < n; i++) v[i] = a * v[i] + b;
        break;
    case ACT_LEAKYRELU:
        for (int64_t i = 0; i < n; i++) v[i] = v[i] < 0 ? a * v[i] : v[i];
        break;
    case ACT_THRESHOLDEDRELU:
        for (int64_t i = 0; i < n; i++) v[i] = v[i] > a ? v[i] : 0;
        break;
    case ACT_SCALEDTANH:
        for (int64_t i = 0; i < n; i++) v[i] = a * tanh(b * v[i]);
        break;
    case ACT_HARDSIGMOID:
        for (int64_t i = 0; i < n; i++) {
            T y = a * v[i] + b;
            v[i] = y < 0 ? 0 : y > 1 ? 1 : y;
        }
        break;
    case ACT_ELU:
        for (int64_t i = 0; i < n; i++) v[i] = v[i] < 0 ? a * (exp(v[i]) - 1) : v[i];
        break;
    case ACT_SOFTSIGN:
        for (int64_t i = 0; i < n; i++) v[i] = v[i] / (1 + fabs(v[i]));
        break;
    case ACT_SOFTPLUS: /* log(1 + e^x) without overflow for large x */
        for (int64_t i = 0; i < n; i++)
            v[i] = v[i] > 0 ? v[i] + log1p(exp(-v[i])) : log1p(exp(v[i]));
        break;
    }
}

/* Runs every direction over the whole sequence. ws holds K(ws_elems)
 * elements. Per direction: G = X * W^T + biases for all steps in one GEMM,
 * then per step the recurrent GEMM H * R^T accumulates into that step's
 * rows of G, and the cell's elementwise update reads them. */
static size_t K(ws_elems)(const rnn_cfg *k)
{
    int64_t gh = k->gates * k->hidden;
    return (size_t)(k->input * gh + k->hidden * gh + k->seq * k->batch * gh + 2 * gh +
                    3 * k->batch * k->hidden);
}

static void K(run)(const rnn_cfg *k, const rnn_io *io, T *ws)
{
    const int64_t S = k->seq, B = k->batch, NI = k->input, H = k->hidden, GH = k->gates * H;
    const int nd = k->ndir;
    T *wt = ws, *rt = wt + NI * GH, *g = rt + H * GH, *bias = g + S * B * GH;
    T *h = bias + 2 * GH, *cst = h + B * H, *tmp = cst + B * H;
    const T *X = io->x;
    T *Y = io->y, *Yh = io->yh, *Yc = io->yc;
    /* Rows of X (and so of g) are [seq][batch] or, with layout 1, [batch][seq]. */
    const int64_t g_t = k->layout ? GH : B * GH, g_ld = k->layout ? S * GH : GH;
    /* Y[t][d] rows and Y_h[d] rows (initial_h / initial_c have Y_h's layout) */
    const int64_t y_t = k->layout ? (int64_t)nd * H : (int64_t)nd * B * H;
    const int64_t y_d = k->layout ? H : B * H, y_ld = k->layout ? S * nd * H : H;
    const int64_t s_d = k->layout ? H : B * H, s_ld = k->layout ? nd * H : H;
    if (Y) memset(Y, 0, sizeof(T) * (size_t)(S * nd * B * H));

    for (int d = 0; d < nd; d++) {
        const bool rev = k->reverse[d];
        const rnn_act *f = &k->act[d][0], *ga = &k->act[d][1], *ha = &k->act[d][2];
        K(transpose)((const T *)io->w + d * GH * NI, GH, NI, wt);
        K(transpose)((const T *)io->r + d * GH * H, GH, H, rt);
        if (io->b) memcpy(bias, (const T *)io->b + d * 2 * GH, sizeof(T) * (size_t)(2 * GH));
        else memset(bias, 0, sizeof(T) * (size_t)(2 * GH));
        const T *wb = bias, *rb = bias + GH;
        const T *P = io->p ? (const T *)io->p + d * 3 * H : NULL;
        for (int64_t b = 0; b < B; b++) {
            const T *h0 = io->h0 ? (const T *)io->h0 + d * s_d + b * s_ld : NULL;
            const T *c0 = io->c0 ? (const T *)io->c0 + d * s_d + b * s_ld : NULL;
            for (int64_t j = 0; j < H; j++) {
                h[b * H + j] = h0 ? h0[j] : 0;
                cst[b * H + j] = c0 ? c0[j] : 0;
            }
        }

        /* input projection for all steps, plus the biases that sit outside
         * any gate product (GRU with linear_before_reset keeps R's bias of
         * the h gate for the step, where the reset gate scales it) */
        memset(g, 0, sizeof(T) * (size_t)(S * B * GH));
        K(gemm)(S * B, GH, NI, X, NI, wt, GH, g, GH);
        const int64_t fold = (k->cell == CELL_GRU && k->lbr) ? 2 * H : GH;
        for (int64_t r = 0; r < S * B; r++) {
            T *row = g + r * GH;
            for (int64_t j = 0; j < fold; j++) row[j] += wb[j] + rb[j];
            for (int64_t j = fold; j < GH; j++) row[j] += wb[j];
        }

        for (int64_t s = 0; s < S; s++) {
            const int64_t t = rev ? S - 1 - s : s;
            T *gt = g + t * g_t;
            if (k->cell == CELL_LSTM || k->cell == CELL_RNN) {
                K(gemm)(B, GH, H, h, H, rt, GH, gt, g_ld);
            } else { /* GRU: z and r first; the h gate needs r */
                K(gemm)(B, 2 * H, H, h, H, rt, GH, gt, g_ld);
                if (k->lbr) {
                    memset(tmp, 0, sizeof(T) * (size_t)(B * H));
                    K(gemm)(B, H, H, h, H, rt + 2 * H, GH, tmp, H);
                } else {
                    for (int64_t b = 0; b < B; b++) {
                        T *gr = gt + b * g_ld + H;
                        K(activate)(f, gr, H, k->clip);
                        for (int64_t j = 0; j < H; j++) tmp[b * H + j] = gr[j] * h[b * H + j];
                    }
                    K(gemm)(B, H, H, tmp, H, rt + 2 * H, GH, gt + 2 * H, g_ld);
                }
            }
            for (int64_t b = 0; b < B; b++) {
                if (io->lens && t >= io->lens[b]) continue; /* past this sequence's end */
                T *gb = gt + b * g_ld, *hb = h + b * H, *cb = cst + b * H;
                if (k->cell == CELL_RNN) {
                    K(activate)(f, gb, H, k->clip);
                    memcpy(hb, gb, sizeof(T) * (size_t)H);
                } else if (k->cell == CELL_GRU) {
                    T *gz = gb, *gr = gb + H, *gh = gb + 2 * H;
                    K(activate)(f, gz, H, k->clip);
                    if (k->lbr) {
                        K(activate)(f, gr, H, k->clip);
                        const T *hr = tmp + b * H, *rbh = rb + 2 * H;
                        for (int64_t j = 0; j < H; j++) gh[j] += gr[j] * (hr[j] + rbh[j]);
                    }
                    K(activate)(ga, gh, H, k->clip);
                    for (int64_t j = 0; j < H; j++)
                        hb[j] = (1 - gz[j]) * gh[j] + gz[j] * hb[j];
                } else { /* LSTM, gates i o f c */
                    T *gi = gb, *go = gb + H, *gf = gb + 2 * H, *gc = gb + 3 * H;
                    if (P) {
                        for (int64_t j = 0; j < H; j++) {
                            gi[j] += P[j] * cb[j];
                            gf[j] += P[2 * H + j] * cb[j];
                        }
                    }
                    K(activate)(f, gi, H, k->clip);
                    if (k->input_forget) {
                        for (int64_t j = 0; j < H; j++) gf[j] = 1 - gi[j];
                    } else {
                        K(activate)(f, gf, H, k->clip);
                    }
                    K(activate)(ga, gc, H, k->clip);
                    for (int64_t j = 0; j < H; j++) cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
                    if (P)
                        for (int64_t j = 0; j < H; j++) go[j] += P[H + j] * cb[j];
                    K(activate)(f, go, H, k->clip);
                    memcpy(gc, cb, sizeof(T) * (size_t)H);
                    K(activate)(ha, gc, H, 0);
                    for (int64_t j = 0; j < H; j++) hb[j] = go[j] * gc[j];
                }
                if (Y) memcpy(Y + t * y_t + d * y_d + b * y_ld, hb, sizeof(T) * (size_t)H);
            }
        }
        for (int64_t b = 0; b < B; b++) {
            if (Yh) memcpy(Yh + d * s_d + b * s_ld, h + b * H, sizeof(T) * (size_t)H);
            if (Yc) memcpy(Yc + d * s_d + b * s_ld, cst + b * H, sizeof(T) * (size_t)H);
        }
    }
}

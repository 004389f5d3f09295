/* MobileNet-style inverted residual blocks by bands of rows: an expanding
 * 1x1 Conv (C -> 6C, say), the depthwise Conv reading its output and the
 * projecting 1x1 Conv reading that (or two of the three), each channels-
 * last, run as one block of steps band by band of the last step's output
 * rows instead of step by step: for each band, each step computes the
 * rows the next one's band reads that it has not computed yet (the
 * depthwise's window: nat_conv_in_rows), so the wide intermediate rows are
 * read back while in L2 rather than after the whole tensor went out to L3
 * or memory. Every value is still written whole in the arena (the block's
 * values live over all of it: place_values; but a projection whose
 * residual is the block's input still writes over it, nat_band_out_late),
 * so the results are the step-by-step run's, bit for bit: the same
 * kernels on the same rows.
 *
 * A network's stem on its image (kstem_conv), the MaxPool (or
 * AveragePool) reading its output and the 1x1 Conv reading that (SqueezeNet's
 * stem, first pool and first squeeze) run the same way: the stem's wide
 * output rows (111 x 64 channels) are pooled while in L2. */
#include "backends/native/native.h"

/* What a step of a block is: a 1x1 Conv, a depthwise, a stem or a pool. */
enum { B_1X1, B_DW, B_STEM, B_POOL };

/* Whether step st can run by bands of rows, and as what (*kind). */
static bool band_kind(const built *bm, const nat_step *st, int *kind)
{
    bool dw;
    if (nat_pool_band(bm, st)) {
        *kind = B_POOL;
        return true;
    }
    if (!nat_conv_band(bm, st, &dw)) return false;
    *kind = dw ? B_DW : nat_conv_stem(bm, st) ? B_STEM : B_1X1;
    return true;
}

static void band_dims(const built *bm, const nat_step *st, int64_t *n, int64_t *h, int64_t *oh)
{
    if (nat_pool_band(bm, st))
        nat_pool_dims(bm, st, n, h, oh);
    else
        nat_conv_dims(st, n, h, oh);
}

static void band_in_rows(const built *bm, const nat_step *st, int64_t oy0, int64_t oy1, int64_t *r0,
                         int64_t *r1)
{
    if (nat_pool_band(bm, st))
        nat_pool_in_rows(st, oy0, oy1, r0, r1);
    else
        nat_conv_in_rows(st, oy0, oy1, r0, r1);
}

/* A stem, the pool reading it and the 1x1 Conv reading that, each on the
 * rows the one before writes: the block's length (3), else 0. Not the stem
 * and pool alone: by the steps' thread CPU time, squeezenet1_1's (3.2 MB of
 * stem output) took 0.94 of the two steps' time by 10th percentiles but
 * 1.02 by medians, shufflenet_v2's (1.2 MB, about L2's size) 1.04 and 1.01
 * and its whole model 1.03 to 1.07; the three, squeezenet1_1's, 0.91 to 0.94
 * and 0.95 to 0.96 (bench/RESULTS.md, branch fire). */
static int stem_block(const built *bm, int s)
{
    int kind[3], len = 0;
    while (s + len < bm->n_steps && len < 3) {
        const nat_step *st = &bm->steps[s + len];
        if (!band_kind(bm, st, &kind[len]) || kind[len] != (len == 0 ? B_STEM : len == 1 ? B_POOL : B_1X1))
            break;
        if (len) {
            int64_t n0, h0, oh0, n1, h1, oh1;
            band_dims(bm, &bm->steps[s + len - 1], &n0, &h0, &oh0);
            band_dims(bm, st, &n1, &h1, &oh1);
            if (bm->g->nodes[st->node].in[0] != bm->steps[s + len - 1].epi.out || n0 != n1 || oh0 != h1 ||
                st->epi.res >= 0)
                break;
        }
        len++;
    }
    return len == 3 ? len : 0;
}

/* Bytes of the depthwise's (or the pool's) input and output rows per band
 * (the 1x1 Convs' narrower rows besides): about 40% of this host's 1.25 MB L2.
 * mobilenetv2's native artifact, against one band per image (the same
 * block order, bench/RESULTS.md): 256 KB 0.97 to 0.98 of its CPU time,
 * 512 KB 0.95 to 0.97, 128 KB 0.98 to 1.02. */
#define IRB_BAND_BYTES ((int64_t)512 << 10)

void nat_bands(built *bm)
{
    for (int s = 0; s < bm->n_steps; s++) bm->steps[s].band = 0;
    for (int s = 0; s + 1 < bm->n_steps; s++) {
        const int sb = stem_block(bm, s);
        if (sb) {
            bm->steps[s].band = sb;
            s += sb - 1;
            continue;
        }
        bool dw[3] = {false, false, false};
        int len = 0;
        /* [1x1] depthwise [1x1]: each reading the one before, exactly one depthwise */
        while (s + len < bm->n_steps && len < 3) {
            const nat_step *st = &bm->steps[s + len];
            if (!nat_conv_band(bm, st, &dw[len]) || nat_conv_stem(bm, st)) break; /* (stems: stem_block) */
            if (len && bm->g->nodes[st->node].in[0] != bm->steps[s + len - 1].epi.out) break;
            if (len && dw[len] == dw[len - 1]) break; /* alternating: 1x1, dw, 1x1 */
            if (len == 2 && !dw[1]) break;
            int64_t n0, h0, oh0, n1, h1, oh1;
            if (len) { /* the same images, the input rows the previous one writes */
                nat_conv_dims(&bm->steps[s + len - 1], &n0, &h0, &oh0);
                nat_conv_dims(st, &n1, &h1, &oh1);
                if (n0 != n1 || oh0 != h1) break;
            }
            bool res_in = false; /* its residual no value of the block's (all rows there) */
            for (int t = 0; t < len; t++)
                res_in |= st->epi.res >= 0 && st->epi.res == bm->steps[s + t].epi.out;
            if (res_in) break;
            len++;
        }
        if (len >= 2 && (dw[0] || dw[1])) {
            bm->steps[s].band = len;
            s += len - 1;
        }
    }
}

int64_t nat_band_rows(const built *bm, int s)
{
    const int len = bm->steps[s].band;
    int64_t n, h, oh = 1, bytes = 0;
    for (int t = 0; t < len; t++) {
        const nat_step *st = &bm->steps[s + t];
        int kind = -1;
        band_dims(bm, st, &n, &h, &oh);
        if (band_kind(bm, st, &kind) && kind == B_DW) /* the depthwise's bytes per output row */
            bytes = nat_conv_row_bytes(st, true) + nat_conv_row_bytes(st, false) * h / oh;
        else if (kind == B_POOL) /* or the pool's */
            bytes = nat_pool_row_bytes(bm, st, true) + nat_pool_row_bytes(bm, st, false) * h / oh;
    }
    const int64_t rows = bytes > 0 ? IRB_BAND_BYTES / bytes : oh; /* oh: the last step's */
    return rows < 1 ? 1 : rows;
}

bool nat_band_out_late(const built *bm, int s, int t)
{
    const nat_step *a = &bm->steps[s], *c = &bm->steps[t];
    bool dw;
    if (t != s + a->band - 1 || t == s || c->epi.res < 0 || c->epi.res != bm->g->nodes[a->node].in[0] ||
        !nat_conv_band(bm, a, &dw) || dw)
        return false;
    /* each band's rows of the first step reach the rows the last one writes (a depthwise
     * window whose top pad is no larger than its height) */
    for (int u = s + 1; u <= t; u++) {
        int64_t n, h, oh, r0, r1;
        nat_conv_dims(&bm->steps[u], &n, &h, &oh);
        for (int64_t oy = 1; oy <= oh; oy++) {
            nat_conv_in_rows(&bm->steps[u], 0, oy, &r0, &r1);
            if (r1 < (oy < h ? oy : h)) return false;
        }
    }
    return true;
}

ait_status nat_band_run(built *bm, int s)
{
    const int len = bm->steps[s].band;
    const nat_step *st[3];
    int64_t n, h, oh[3], done[3], need[3];
    for (int t = 0; t < len; t++) {
        st[t] = &bm->steps[s + t];
        band_dims(bm, st[t], &n, &h, &oh[t]);
    }
    const int64_t last = oh[len - 1], rows = nat_band_rows(bm, s);
    for (int64_t im = 0; im < n; im++) {
        for (int t = 0; t < len; t++) done[t] = 0;
        for (int64_t oy = 0; oy < last; oy += rows) {
            const int64_t oy1 = oy + rows < last ? oy + rows : last;
            /* each step's rows the next one's band reads; at the last band all of them */
            need[len - 1] = oy1;
            for (int t = len - 2; t >= 0; t--) {
                int64_t r0;
                need[t] = 0;
                if (need[t + 1] > 0) band_in_rows(bm, st[t + 1], 0, need[t + 1], &r0, &need[t]);
                if (oy1 == last) need[t] = oh[t];
            }
            for (int t = 0; t < len; t++) {
                if (need[t] <= done[t]) continue;
                TRY(nat_pool_band(bm, st[t]) ? nat_pool_rows(bm, st[t], im, done[t], need[t])
                                              : nat_conv_rows(bm, st[t], im, done[t], need[t]));
                done[t] = need[t];
            }
        }
    }
    return AIT_OK;
}

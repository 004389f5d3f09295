/* onednn: one primitive per op (with the post-ops after it). Each builder
 * says *taken = false for what it does not handle (shapes, attributes,
 * layouts oneDNN refuses), and the node then runs on its reference op;
 * errors are for real failures only (memory, a primitive that cannot be
 * made after its desc was accepted). */
#include <stdlib.h>
#include <string.h>

#include "backends/onednn/onednn.h"

#define MAX_ARGS (8 + DN_MAX_POST + 1)

/* ---- shared ------------------------------------------------------------------------- */

static const tensor *in_t(const built *bm, int i, int k)
{
    const node *n = &bm->g->nodes[i];
    return k < n->n_in && n->in[k] >= 0 ? dn_shape(bm, n->in[k]) : NULL;
}

/* The chain's last value (what the primitive writes), and marks the node's
 * output and the swallowed ones as done. */
static int finish(built *bm, int first_out, const dn_chain *c, int np, dnnl_memory_t dst)
{
    int last = np ? c->p[np - 1].out : first_out;
    bm->p->vals[first_out].done = true;
    bm->p->vals[first_out].fused = first_out != last;
    for (int k = 0; k < np; k++) {
        bm->p->vals[c->p[k].out].done = true;
        bm->p->vals[c->p[k].out].fused = c->p[k].out != last;
        for (int j = 0; j < c->p[k].n_swallow; j++)
            bm->p->vals[c->p[k].swallow[j]].done = bm->p->vals[c->p[k].swallow[j]].fused = true;
    }
    bm->p->vals[last].mem = dst;
    return last;
}


static dnnl_memory_desc_t md_any(int rank, const int64_t *dims)
{
    dnnl_memory_desc_t md;
    dnnl_dims_t d;
    for (int i = 0; i < rank; i++) d[i] = dims[i];
    dnnl_memory_desc_init_by_tag(&md, rank, d, dnnl_f32, dnnl_format_tag_any);
    return md;
}

bool dn_conv_blocked(int rank, const int64_t *dims) { return rank == 4 && dims[1] >= 16; }

static dnnl_memory_desc_t md_blocked(const int64_t *dims)
{
    dnnl_memory_desc_t md;
    dnnl_dims_t d = {dims[0], dims[1], dims[2], dims[3]};
    dnnl_memory_desc_init_by_tag(&md, 4, d, dnnl_f32, dnnl_nChw16c);
    return md;
}

static const dnnl_memory_desc_t *pd_md(dnnl_primitive_desc_t pd, dnnl_query_t q)
{
    return dnnl_primitive_desc_query_md(pd, q, 0);
}

/* Pre-fills dst with the sum post-op's addend, then the primitive. */
static ait_status emit(built *bm, int i, dnnl_primitive_desc_t pd, dnnl_exec_arg_t *args,
                       int n_args, dnnl_memory_t dst, int sum_from)
{
    ait_status s = AIT_OK;
    if (sum_from >= 0) { /* of the output's shape; dst may be it merged (MatMul) */
        const dnnl_memory_desc_t *dmd = NULL;
        s = dn_check(bm, i, dnnl_memory_get_memory_desc(dst, &dmd), "memory desc");
        const tensor *rt = dn_shape(bm, sum_from);
        dnnl_memory_t r = NULL;
        if (s == AIT_OK)
            r = dmd->ndims == rt->rank ? dn_as(bm, sum_from, NULL) : dn_view(bm, sum_from, dmd);
        if (s == AIT_OK) s = r ? dn_reorder(bm, i, r, dst) : bm->err->code;
        if (s != AIT_OK) {
            dnnl_primitive_desc_destroy(pd);
            return s;
        }
    }
    if (s == AIT_OK) s = dn_prim(bm, i, pd, args, n_args);
    dnnl_primitive_desc_destroy(pd);
    return s;
}

/* A primitive with the post-ops after it, being built: the chain it may
 * swallow, its desc and the arguments gathered so far. */
typedef struct dn_fused {
    dn_chain c;
    dnnl_primitive_desc_t pd; /* NULL: oneDNN takes the node in no form */
    dnnl_exec_arg_t args[MAX_ARGS + 4];
    int na, np, sum_from;
} dn_fused;

/* Matches the chain after value v of node i and makes the primitive desc
 * for op desc `desc` with as many of its post-ops as it takes (dn_pd_posts:
 * y the node's output shape, prim_rank the primitive's, pre_md/pre_mem/scale
 * Gemm's C and alpha, else NULL). */
static ait_status fused_open(built *bm, int i, int v, bool allow_sum, const void *desc,
                             int prim_rank, const dnnl_memory_desc_t *pre_md,
                             dnnl_memory_t pre_mem, const float *scale, dn_fused *f)
{
    const tensor *y = dn_shape(bm, bm->g->nodes[i].out[0]);
    f->na = 0;
    dn_chain_match(bm, i, v, allow_sum, &f->c);
    return dn_pd_posts(bm, i, desc, &f->c, y->rank, y->dims, prim_rank, pre_md, pre_mem, scale,
                       &f->pd, f->args, &f->na, &f->np, &f->sum_from);
}

/* The tail every builder shares: st, an earlier failure, drops the desc;
 * else the chain from value `first` is marked done (its last value held in
 * `held`, NULL when plain) and the primitive writing dst is emitted. */
static ait_status fused_close(built *bm, int i, dn_fused *f, ait_status st, int first,
                              dnnl_memory_t held, dnnl_memory_t dst, bool *taken)
{
    if (st != AIT_OK) {
        dnnl_primitive_desc_destroy(f->pd);
        return st;
    }
    finish(bm, first, &f->c, f->np, held);
    *taken = true;
    return emit(bm, i, f->pd, f->args, f->na, dst, f->sum_from);
}

/* The dst memory of f's primitive in the layout it chose; sets *st on failure. */
static dnnl_memory_t fused_dst(built *bm, const dn_fused *f, ait_status *st)
{
    dnnl_memory_t m = *st == AIT_OK ? dn_mem_out(bm, pd_md(f->pd, dnnl_query_dst_md)) : NULL;
    if (*st == AIT_OK && !m) *st = bm->err->code;
    return m;
}

/* Spatial geometry of a window op (Conv, pooling) from its attributes and
 * scheduled shapes: pads begin/end for oneDNN's floor formula; false when it
 * cannot be said (then the reference op runs). ceil_pad: end pads may grow
 * to fit ceil_mode's extra output (*grew says they did). */
static bool window(const node *n, const tensor *x, const tensor *y, const int64_t *k,
                   const int64_t *s, const int64_t *d, int64_t *pl, int64_t *pr, bool *grew)
{
    int sp = x->rank - 2, np = 0;
    const int64_t *pads = attr_ints(n, "pads", &np);
    const char *ap = attr_str(n, "auto_pad", "NOTSET");
    if (pads && np != 2 * sp) return false;
    *grew = false;
    for (int a = 0; a < sp; a++) {
        int64_t in = x->dims[2 + a], o = y->dims[2 + a], dk = (k[a] - 1) * d[a] + 1;
        if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
            int64_t total = (o - 1) * s[a] + dk - in;
            if (total < 0) total = 0;
            pl[a] = strcmp(ap, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
            pr[a] = total - pl[a];
        } else if (strcmp(ap, "VALID") == 0) {
            pl[a] = pr[a] = 0;
        } else if (strcmp(ap, "NOTSET") == 0 || ap[0] == 0) {
            pl[a] = pads ? pads[a] : 0;
            pr[a] = pads ? pads[a + sp] : 0;
        } else {
            return false;
        }
        int64_t need = (o - 1) * s[a] + dk - in - pl[a]; /* end pad that gives o */
        if (need > pr[a]) {
            if ((need - pr[a]) >= s[a]) return false;
            pr[a] = need;
            *grew = true;
        }
        if (pl[a] < 0 || (in + pl[a] + pr[a] - dk) / s[a] + 1 != o) return false;
    }
    return true;
}

/* Ints attribute of sp values (dflt when absent); false when malformed. */
static bool ints_or(const node *n, const char *name, int sp, int64_t dflt, int64_t *out)
{
    int cnt = 0;
    const int64_t *v = attr_ints(n, name, &cnt);
    for (int a = 0; a < sp; a++) out[a] = dflt;
    if (!v) return true;
    if (cnt != sp) return false;
    for (int a = 0; a < sp; a++) {
        if (v[a] < 1) return false;
        out[a] = v[a];
    }
    return true;
}

/* ---- Conv --------------------------------------------------------------------------- */

/* A Conv node's geometry, when oneDNN can take it as the node says. */
typedef struct conv_geom {
    int sp;                    /* spatial dims: 1 to 3 */
    int64_t grp, O;            /* groups, output channels */
    int64_t s[3], d[3], pl[3], pr[3];
} conv_geom;

static bool conv_geom_of(built *bm, int i, conv_geom *g)
{
    const node *n = &bm->g->nodes[i];
    const tensor *x = in_t(bm, i, 0), *w = in_t(bm, i, 1), *b = in_t(bm, i, 2);
    const tensor *y = dn_shape(bm, n->out[0]);
    g->sp = x->rank - 2;
    g->grp = attr_int(n, "group", 1);
    int sp = g->sp;
    if (sp < 1 || sp > 3 || w->rank != x->rank || !y || g->grp < 1 || x->dims[1] % g->grp ||
        w->dims[0] % g->grp || x->dims[1] / g->grp != w->dims[1] ||
        (n->n_in > 2 && n->in[2] >= 0 && !b))
        return false;
    int64_t k[3];
    bool grew;
    for (int a = 0; a < sp; a++) k[a] = w->dims[2 + a];
    const int64_t *ks = attr_ints(n, "kernel_shape", &(int){0});
    if (ks)
        for (int a = 0; a < sp; a++)
            if (ks[a] != k[a]) return false;
    g->O = w->dims[0];
    return ints_or(n, "strides", sp, 1, g->s) && ints_or(n, "dilations", sp, 1, g->d) &&
           window(n, x, y, k, g->s, g->d, g->pl, g->pr, &grew) && !grew;
}

/* The bias memory of a Conv (bn >= 0: BatchNormalization node bn folds into
 * it): a computed bias bound as it is, else a constant one (folded); NULL
 * with AIT_OK when there is none. */
static ait_status conv_bias(built *bm, int i, int bn, const dnnl_memory_desc_t *bmd, int64_t per_o,
                            int64_t O, dnnl_memory_t *mb)
{
    const node *n = &bm->g->nodes[i];
    const tensor *b = in_t(bm, i, 2);
    *mb = NULL;
    if (!b && bn < 0) return AIT_OK;
    if (b && !b->data) return (*mb = dn_plain(bm, n->in[2])) ? AIT_OK : bm->err->code;
    float *bias = dn_alloc(bm, sizeof(float) * (size_t)O);
    if (!bias) return err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
    if (b) memcpy(bias, b->data, sizeof(float) * (size_t)O);
    else memset(bias, 0, sizeof(float) * (size_t)O);
    if (bn >= 0) TRY(dn_bn_fold(bm, bn, NULL, per_o, bias, O));
    return (*mb = dn_mem_new(bm, bmd, bias)) ? AIT_OK : bm->err->code;
}

/* The weights memory of a Conv in the layout pd wants: constant weights
 * reordered once (BatchNormalization bn folded into a copy first; from the
 * prepared blob when the module is loaded), computed ones viewed as given
 * (wuser). */
static ait_status conv_weights(built *bm, int i, int bn, dnnl_primitive_desc_t pd,
                               const dnnl_memory_desc_t *wuser, int64_t per_o, int64_t O,
                               dnnl_memory_t *mw)
{
    const node *n = &bm->g->nodes[i];
    const tensor *w = in_t(bm, i, 1);
    if (!dn_is_const(bm, n->in[1])) return (*mw = dn_view(bm, n->in[1], wuser)) ? AIT_OK : bm->err->code;
    dnnl_memory_t user = NULL;
    if (!bm->prep) {
        float *wdata = w->data;
        if (bn >= 0) { /* a folded copy */
            wdata = dn_alloc(bm, tensor_nbytes(w));
            float *tmp = dn_alloc(bm, sizeof(float) * (size_t)O);
            if (!wdata || !tmp) return err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
            memcpy(wdata, w->data, tensor_nbytes(w));
            TRY(dn_bn_fold(bm, bn, wdata, per_o, tmp, O));
        }
        if (!(user = dn_mem_new(bm, wuser, wdata))) return bm->err->code;
    }
    *mw = dn_weights(bm, i, pd_md(pd, dnnl_query_weights_md), user);
    return *mw ? AIT_OK : bm->err->code;
}

static ait_status dn_conv(built *bm, int i, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *x = in_t(bm, i, 0), *w = in_t(bm, i, 1), *b = in_t(bm, i, 2);
    const tensor *y = dn_shape(bm, n->out[0]);
    conv_geom g;
    if (!conv_geom_of(bm, i, &g)) return AIT_OK;
    const int64_t O = g.O;
    bool wconst = dn_is_const(bm, n->in[1]); /* freed after load too (dn_is_const) */
    /* BatchNormalization folds into constant weights and a constant (or no) bias. */
    int bn = wconst && (!b || b->data) ? dn_bn_after(bm, i) : -1;
    int start = bn >= 0 ? bm->g->nodes[bn].out[0] : n->out[0];

    /* Weights as given: [O, I/g, k...], or [g, O/g, I/g, k...] with groups. */
    dnnl_memory_desc_t wuser, wmd, bmd, src = md_any(x->rank, x->dims), dst = md_any(y->rank, y->dims);
    bool forced = bm->blocked && dn_conv_blocked(x->rank, x->dims) && y->rank == 4;
    if (forced) {
        src = md_blocked(x->dims);
        dst = md_blocked(y->dims);
    }
    int64_t wd[6];
    int wr = 0;
    if (g.grp > 1) wd[wr++] = g.grp;
    wd[wr++] = O / g.grp;
    for (int a = 1; a < w->rank; a++) wd[wr++] = w->dims[a];
    dn_md_plain(&wuser, wr, wd);
    wmd = wconst ? md_any(wr, wd) : wuser;
    bool has_b = b || bn >= 0;
    dn_md_plain(&bmd, 1, &O);
    dnnl_dims_t ds, dd, dl, dr;
    for (int a = 0; a < g.sp; a++) {
        ds[a] = g.s[a];
        dd[a] = g.d[a] - 1;
        dl[a] = g.pl[a];
        dr[a] = g.pr[a];
    }
    dnnl_convolution_desc_t cd;
    dn_fused f = {.pd = NULL};
    /* nChw16c where the variant asks for it; where oneDNN has only a
     * reference kernel for it (a grouped Conv of channels per group not a
     * multiple of 16), the layout oneDNN chooses. */
    for (int form = 0; !f.pd && form < (forced ? 2 : 1); form++) {
        if (form == 1) {
            src = md_any(x->rank, x->dims);
            dst = md_any(y->rank, y->dims);
        }
        if (dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                       dnnl_convolution_direct, &src, &wmd,
                                                       has_b ? &bmd : NULL, &dst, ds, dd, dl, dr) !=
            dnnl_success)
            continue;
        TRY(fused_open(bm, i, start, true, &cd, y->rank, NULL, NULL, NULL, &f));
    }
    if (!f.pd) return AIT_OK;
    int64_t per_o = tensor_numel(w) / O;
    dnnl_memory_t mw = NULL, mb = NULL;
    dnnl_memory_t msrc = dn_as(bm, n->in[0], pd_md(f.pd, dnnl_query_src_md));
    ait_status st = msrc ? AIT_OK : bm->err->code;
    if (st == AIT_OK) st = conv_bias(bm, i, bn, &bmd, per_o, O, &mb);
    if (st == AIT_OK) st = conv_weights(bm, i, bn, f.pd, &wuser, per_o, O, &mw);
    dnnl_memory_t mdst = fused_dst(bm, &f, &st);
    if (st == AIT_OK) {
        f.args[f.na++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, msrc};
        f.args[f.na++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, mw};
        if (mb) f.args[f.na++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, mb};
        f.args[f.na++] = (dnnl_exec_arg_t){DNNL_ARG_DST, mdst};
        if (bn >= 0) bm->p->vals[n->out[0]].done = bm->p->vals[n->out[0]].fused = true;
    }
    return fused_close(bm, i, &f, st, start, mdst, mdst, taken);
}

/* ---- MatMul and Gemm ------------------------------------------------------------------ */

/* The output's plain storage (the primitive writes it in place). */
static dnnl_memory_t plain_dst(built *bm, int v, const dnnl_memory_desc_t *md)
{
    dn_val *d = &bm->p->vals[v];
    const tensor *sh = dn_shape(bm, v);
    tensor_set_shape(&d->t, AIT_F32, sh->rank, sh->dims);
    if (tensor_alloc(&d->t, bm->err) != AIT_OK) return NULL;
    d->plain = &d->t;
    return dn_mem_new(bm, md, d->t.data);
}

/* One matmul primitive: src [.., M, K] (amd), weights (wmd; constant ones
 * reordered from user), C as a leading binary add (cmd/cmem, or NULL), the
 * chain after it, y the node's output of full shape. */
static ait_status mm_emit(built *bm, int i, const dnnl_memory_desc_t *amd, dnnl_memory_t ma,
                          const dnnl_memory_desc_t *wmd, int wv, const dnnl_memory_desc_t *wuser,
                          const dnnl_memory_desc_t *cmd, dnnl_memory_t cmem, const float *alpha,
                          const dnnl_memory_desc_t *dmd, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *wt = dn_shape(bm, wv);
    dnnl_matmul_desc_t md;
    if (dnnl_matmul_desc_init(&md, amd, wmd, NULL, dmd) != dnnl_success) return AIT_OK;
    dn_fused f;
    TRY(fused_open(bm, i, n->out[0], true, &md, dmd->ndims, cmd, cmem, alpha, &f));
    if (!f.pd) return AIT_OK;
    ait_status st = AIT_OK;
    dnnl_memory_t mw = NULL, user = NULL;
    if (dn_is_const(bm, wv)) {
        if (!bm->prep && !(user = dn_mem_new(bm, wuser, wt->data))) st = bm->err->code;
        if (st == AIT_OK && !(mw = dn_weights(bm, i, pd_md(f.pd, dnnl_query_weights_md), user)))
            st = bm->err->code;
    } else if (!(mw = dn_view(bm, wv, wuser))) {
        st = bm->err->code;
    }
    int last = f.np ? f.c.p[f.np - 1].out : n->out[0];
    dnnl_memory_t mdst = st == AIT_OK ? plain_dst(bm, last, dmd) : NULL;
    if (st == AIT_OK && !mdst) st = bm->err->code;
    if (st == AIT_OK) {
        f.args[f.na++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, ma};
        f.args[f.na++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, mw};
        f.args[f.na++] = (dnnl_exec_arg_t){DNNL_ARG_DST, mdst};
    }
    /* plain: dn_plain views it when asked */
    return fused_close(bm, i, &f, st, n->out[0], NULL, mdst, taken);
}

static ait_status dn_matmul(built *bm, int i, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *a = in_t(bm, i, 0), *b = in_t(bm, i, 1), *y = dn_shape(bm, n->out[0]);
    if (a->rank < 2 || b->rank < 2 || !y || y->rank > DNNL_MAX_NDIMS) return AIT_OK;
    int r = y->rank;
    int64_t K = a->dims[a->rank - 1], N = b->dims[b->rank - 1];
    bool shared = true; /* one B for every batch: one GEMM of [batch*M, K] */
    for (int k = 0; k < b->rank - 2; k++) shared &= b->dims[k] == 1;
    dnnl_memory_desc_t amd, wmd, wuser, dmd;
    if (shared && dn_is_const(bm, n->in[1])) {
        int64_t ad[2] = {tensor_numel(a) / K, K}, wd[2] = {K, N}, dd[2] = {ad[0], N};
        dn_md_plain(&amd, 2, ad);
        dn_md_plain(&wuser, 2, wd);
        wmd = md_any(2, wd);
        dn_md_plain(&dmd, 2, dd);
    } else {
        int64_t ad[DNNL_MAX_NDIMS], wd[DNNL_MAX_NDIMS];
        for (int k = 0; k < r; k++) {
            int ka = k - (r - a->rank), kb = k - (r - b->rank);
            ad[k] = ka >= 0 ? a->dims[ka] : 1;
            wd[k] = kb >= 0 ? b->dims[kb] : 1;
        }
        dn_md_plain(&amd, r, ad);
        dn_md_plain(&wuser, r, wd);
        wmd = wuser;
        dn_md_plain(&dmd, r, y->dims);
    }
    dnnl_memory_t ma = dn_view(bm, n->in[0], &amd);
    if (!ma) return bm->err->code;
    return mm_emit(bm, i, &amd, ma, &wmd, n->in[1], &wuser, NULL, NULL, NULL, &dmd, taken);
}

static ait_status dn_gemm(built *bm, int i, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *a = in_t(bm, i, 0), *b = in_t(bm, i, 1), *cc = in_t(bm, i, 2);
    const tensor *y = dn_shape(bm, n->out[0]);
    if (a->rank != 2 || b->rank != 2 || !y || y->rank != 2 || (n->n_in > 2 && n->in[2] >= 0 && !cc))
        return AIT_OK;
    bool ta = attr_int(n, "transA", 0) != 0, tb = attr_int(n, "transB", 0) != 0;
    float alpha = attr_float(n, "alpha", 1.0f), beta = attr_float(n, "beta", 1.0f);
    int64_t M = y->dims[0], N = y->dims[1], K = a->dims[ta ? 0 : 1];
    dnnl_memory_desc_t amd, wuser, wmd, dmd, cmd;
    dnnl_dims_t ad = {M, K}, as = {ta ? 1 : K, ta ? M : 1}, wd = {K, N}, ws = {tb ? 1 : N, tb ? K : 1};
    dnnl_memory_desc_init_by_strides(&amd, 2, ad, dnnl_f32, as);
    dnnl_memory_desc_init_by_strides(&wuser, 2, wd, dnnl_f32, ws);
    wmd = dn_is_const(bm, n->in[1]) ? md_any(2, (int64_t[]){K, N}) : wuser;
    dn_md_plain(&dmd, 2, (int64_t[]){M, N});
    dnnl_memory_t cmem = NULL;
    bool has_c = cc && beta != 0.0f;
    if (has_c) {
        if (cc->rank > 2) return AIT_OK;
        int64_t cd[2] = {cc->rank == 2 ? cc->dims[0] : 1, cc->rank >= 1 ? cc->dims[cc->rank - 1] : 1};
        if ((cd[0] != 1 && cd[0] != M) || (cd[1] != 1 && cd[1] != N)) return AIT_OK;
        dn_md_plain(&cmd, 2, cd);
        if (beta == 1.0f) {
            cmem = dn_view(bm, n->in[2], &cmd);
        } else if (cc->data) { /* beta * C, once */
            float *sc = dn_alloc(bm, sizeof(float) * (size_t)(cd[0] * cd[1]));
            if (!sc) return err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
            for (int64_t k = 0; k < cd[0] * cd[1]; k++) sc[k] = beta * ((const float *)cc->data)[k];
            cmem = dn_mem_new(bm, &cmd, sc);
        } else {
            return AIT_OK;
        }
        if (!cmem) return bm->err->code;
    }
    dnnl_memory_t ma = dn_view(bm, n->in[0], &amd);
    if (!ma) return bm->err->code;
    return mm_emit(bm, i, &amd, ma, &wmd, n->in[1], &wuser, has_c ? &cmd : NULL, cmem,
                   alpha != 1.0f ? &alpha : NULL, &dmd, taken);
}

/* ---- pooling ------------------------------------------------------------------------ */

/* Makes the primitive of desc over src (native layout) with post-ops,
 * writes dst; extra args (a second source, scale, shift, statistics)
 * appended. Pooling, eltwise, Softmax, the normalisations and binary ops. */
static ait_status src_dst_open(built *bm, int i, const void *desc, dn_fused *f)
{
    return fused_open(bm, i, bm->g->nodes[i].out[0], false, desc,
                      dn_shape(bm, bm->g->nodes[i].out[0])->rank, NULL, NULL, NULL, f);
}

/* src_dst_emit's second half, f opened with src_dst_open and f.pd made. */
static ait_status src_dst_close(built *bm, int i, dn_fused *f, dnnl_memory_t msrc,
                                const dnnl_exec_arg_t *extra, int n_extra, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    ait_status st = AIT_OK;
    dnnl_memory_t mdst = fused_dst(bm, f, &st);
    if (st == AIT_OK) {
        f->args[f->na++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, msrc};
        f->args[f->na++] = (dnnl_exec_arg_t){DNNL_ARG_DST, mdst};
        for (int k = 0; k < n_extra; k++) f->args[f->na++] = extra[k];
    }
    return fused_close(bm, i, f, st, n->out[0], mdst, mdst, taken);
}

static ait_status src_dst_emit(built *bm, int i, const void *desc, dnnl_memory_t msrc,
                             const dnnl_exec_arg_t *extra, int n_extra, bool *taken)
{
    dn_fused f;
    TRY(src_dst_open(bm, i, desc, &f));
    return f.pd ? src_dst_close(bm, i, &f, msrc, extra, n_extra, taken) : AIT_OK;
}

static ait_status dn_pool(built *bm, int i, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *x = in_t(bm, i, 0), *y = dn_shape(bm, n->out[0]);
    int sp = x->rank - 2;
    if (sp < 1 || sp > 3 || !y || y->rank != x->rank) return AIT_OK;
    for (int k = 1; k < n->n_out; k++) /* MaxPool's indices */
        if (n->out[k] >= 0 && bm->p->vals[n->out[k]].uses) return AIT_OK;
    bool global = strncmp(n->op, "Global", 6) == 0, max = strstr(n->op, "Max") != NULL;
    int64_t k[3], s[3], d[3], pl[3], pr[3];
    bool grew = false;
    if (global) {
        for (int a = 0; a < sp; a++) {
            k[a] = x->dims[2 + a];
            s[a] = d[a] = 1;
            pl[a] = pr[a] = 0;
        }
    } else {
        int cnt = 0;
        const int64_t *ks = attr_ints(n, "kernel_shape", &cnt);
        if (!ks || cnt != sp) return AIT_OK;
        for (int a = 0; a < sp; a++) k[a] = ks[a];
        if (!ints_or(n, "strides", sp, 1, s) || !ints_or(n, "dilations", sp, 1, d) ||
            !window(n, x, y, k, s, d, pl, pr, &grew))
            return AIT_OK;
        if (!attr_int(n, "ceil_mode", 0) && grew) return AIT_OK;
    }
    bool incl = attr_int(n, "count_include_pad", 0) != 0;
    if (!max && incl && grew) return AIT_OK; /* ceil_mode's extra cells are not counted */
    dnnl_alg_kind_t alg = max ? dnnl_pooling_max
                              : incl ? dnnl_pooling_avg_include_padding
                                     : dnnl_pooling_avg_exclude_padding;
    dnnl_memory_t msrc = dn_as(bm, n->in[0], NULL);
    const dnnl_memory_desc_t *smd;
    if (!msrc) return bm->err->code;
    TRY(dn_check(bm, i, dnnl_memory_get_memory_desc(msrc, &smd), "memory desc"));
    dnnl_memory_desc_t dst = md_any(y->rank, y->dims);
    dnnl_dims_t ds, dk, dd, dl, dr;
    for (int a = 0; a < sp; a++) {
        ds[a] = s[a];
        dk[a] = k[a];
        dd[a] = d[a] - 1;
        dl[a] = pl[a];
        dr[a] = pr[a];
    }
    dnnl_pooling_v2_desc_t pdsc;
    if (dnnl_pooling_v2_forward_desc_init(&pdsc, dnnl_forward_inference, alg, smd, &dst, ds, dk, dd,
                                          dl, dr) != dnnl_success)
        return AIT_OK;
    return src_dst_emit(bm, i, &pdsc, msrc, NULL, 0, taken);
}

/* ---- one-input primitives: eltwise, Softmax, LayerNormalization, BatchNormalization --- */


static ait_status src_native(built *bm, int i, dnnl_memory_t *m, const dnnl_memory_desc_t **md)
{
    *m = dn_as(bm, bm->g->nodes[i].in[0], NULL);
    if (!*m) return bm->err->code;
    return dn_check(bm, i, dnnl_memory_get_memory_desc(*m, md), "memory desc");
}

static ait_status dn_elt(built *bm, int i, bool *taken)
{
    dnnl_alg_kind_t alg;
    float a, b;
    if (!dn_eltwise(bm, i, &alg, &a, &b)) return AIT_OK;
    dnnl_memory_t m;
    const dnnl_memory_desc_t *md;
    TRY(src_native(bm, i, &m, &md));
    dnnl_eltwise_desc_t d;
    if (dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, alg, md, a, b) != dnnl_success)
        return AIT_OK;
    return src_dst_emit(bm, i, &d, m, NULL, 0, taken);
}

static ait_status dn_softmax(built *bm, int i, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *x = in_t(bm, i, 0);
    int64_t axis = attr_int(n, "axis", bm->g->opset >= 13 ? -1 : 1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank || (bm->g->opset < 13 && axis != x->rank - 1)) return AIT_OK;
    dnnl_memory_t m;
    const dnnl_memory_desc_t *md;
    TRY(src_native(bm, i, &m, &md));
    dnnl_memory_desc_t dst = md_any(x->rank, x->dims);
    dnnl_softmax_v2_desc_t d;
    if (dnnl_softmax_v2_forward_desc_init(&d, dnnl_forward_inference, dnnl_softmax_accurate, md,
                                          &dst, (int)axis) != dnnl_success)
        return AIT_OK;
    return src_dst_emit(bm, i, &d, m, NULL, 0, taken);
}

/* A [C] constant or value bound as it is (scale, shift, mean, variance):
 * 1 done, 0 not of that shape (the reference op runs), -1 error. */
static int vec_arg(built *bm, int i, int k, int64_t C, int key, dnnl_exec_arg_t *arg)
{
    const tensor *t = in_t(bm, i, k);
    if (!t || t->rank != 1 || t->dims[0] != C) return 0;
    arg->arg = key;
    arg->memory = dn_plain(bm, bm->g->nodes[i].in[k]);
    return arg->memory ? 1 : -1;
}

static ait_status dn_lnorm(built *bm, int i, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *x = in_t(bm, i, 0);
    int64_t axis = attr_int(n, "axis", -1);
    if (axis < 0) axis += x->rank;
    if (axis != x->rank - 1 || x->rank < 2) return AIT_OK;
    for (int k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0 && bm->p->vals[n->out[k]].uses) return AIT_OK;
    const int64_t C = x->dims[x->rank - 1];
    dnnl_exec_arg_t extra[2];
    int ne = 0;
    unsigned flags = dnnl_use_scale;
    int r = vec_arg(bm, i, 1, C, DNNL_ARG_SCALE, &extra[ne++]);
    if (r <= 0) return r < 0 ? bm->err->code : AIT_OK;
    if (n->n_in > 2 && n->in[2] >= 0) {
        r = vec_arg(bm, i, 2, C, DNNL_ARG_SHIFT, &extra[ne++]);
        if (r <= 0) return r < 0 ? bm->err->code : AIT_OK;
        flags |= dnnl_use_shift;
    }
    dnnl_memory_desc_t md;
    dn_md_plain(&md, x->rank, x->dims);
    dnnl_memory_t m = dn_as(bm, n->in[0], &md);
    if (!m) return bm->err->code;
    dnnl_layer_normalization_desc_t d;
    if (dnnl_layer_normalization_forward_desc_init(&d, dnnl_forward_inference, &md, NULL,
                                                   attr_float(n, "epsilon", 1e-5f), flags) !=
        dnnl_success)
        return AIT_OK;
    return src_dst_emit(bm, i, &d, m, extra, ne, taken);
}

static ait_status dn_bnorm(built *bm, int i, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const tensor *x = in_t(bm, i, 0);
    if (x->rank < 2 || x->rank > 5 || n->n_in != 5 || attr_int(n, "training_mode", 0) != 0)
        return AIT_OK;
    for (int k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0 && bm->p->vals[n->out[k]].uses) return AIT_OK;
    static const int keys[4] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE};
    dnnl_exec_arg_t extra[4];
    for (int k = 0; k < 4; k++) {
        int r = vec_arg(bm, i, k + 1, x->dims[1], keys[k], &extra[k]);
        if (r <= 0) return r < 0 ? bm->err->code : AIT_OK;
    }
    dnnl_memory_t m;
    const dnnl_memory_desc_t *md;
    TRY(src_native(bm, i, &m, &md));
    /* On a plain 4-D input (DenseNet's Concat or DBNet's ConvTranspose, run
     * by the reference op before it) oneDNN runs ncsp_bnorm, a loop slower
     * than all of densenet121's convolutions together: the input is
     * reordered to nChw16c first, where oneDNN's kernel is jitted (a Conv
     * after it reads that layout anyway; a reference op reorders back). */
    dnnl_memory_desc_t b16;
    if (dn_conv_blocked(x->rank, x->dims)) {
        b16 = md_blocked(x->dims);
        if (!dnnl_memory_desc_equal(md, &b16)) {
            m = dn_as(bm, n->in[0], &b16);
            if (!m) return bm->err->code;
            md = &b16;
        }
    }
    dnnl_batch_normalization_desc_t d;
    if (dnnl_batch_normalization_forward_desc_init(&d, dnnl_forward_inference, md,
                                                   attr_float(n, "epsilon", 1e-5f),
                                                   dnnl_use_global_stats | dnnl_use_scale |
                                                       dnnl_use_shift) != dnnl_success)
        return AIT_OK;
    return src_dst_emit(bm, i, &d, m, extra, 4, taken);
}

/* ---- binary ---------------------------------------------------------------------------- */

/* x op constant scalar (dn_scalar_linear): a binary primitive with the
 * scalar broadcast when it swallows post-ops (oneDNN 2.x's eltwise
 * primitive has optimised kernels only without post-ops, its binary one
 * with them: HardSwish's Clip, Mul and Div after its Add), else linear
 * a * x + b as an eltwise primitive (optimised on every layout, where a
 * binary op with a broadcast scalar on a blocked layout is not). */
static ait_status lin_emit(built *bm, int i, int x, float la, float lb, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    int k = n->in[0] == x ? 1 : 0;
    dnnl_alg_kind_t alg = !strcmp(n->op, "Add") ? dnnl_binary_add : !strcmp(n->op, "Mul")
                              ? dnnl_binary_mul : !strcmp(n->op, "Sub") ? dnnl_binary_sub
                              : dnnl_binary_div;
    dnnl_memory_t m = dn_as(bm, x, NULL);
    const dnnl_memory_desc_t *md;
    if (!m) return bm->err->code;
    TRY(dn_check(bm, i, dnnl_memory_get_memory_desc(m, &md), "memory desc"));
    const tensor *y = dn_shape(bm, n->out[0]);
    dnnl_memory_desc_t b16 = y->rank == 4 ? md_blocked(y->dims) : *md;
    bool blk = y->rank == 4 && dnnl_memory_desc_equal(md, &b16);
    /* The scalar plain, and on nChw16c also in nChw16c (padded to 16
     * channels), for which oneDNN has its jit kernel. */
    for (int form = 0; form < (blk ? 2 : 1) &&
                       (k == 1 || alg == dnnl_binary_add || alg == dnnl_binary_mul); form++) {
        int64_t ones[DNNL_MAX_NDIMS];
        for (int a = 0; a < y->rank; a++) ones[a] = 1;
        dnnl_memory_desc_t md1, dst = md_any(y->rank, y->dims);
        if (form == 0) dn_md_plain(&md1, y->rank, ones);
        else md1 = md_blocked(ones);
        dnnl_binary_desc_t d;
        dn_fused f = {.pd = NULL};
        if (dnnl_binary_desc_init(&d, alg, md, &md1, &dst) == dnnl_success)
            TRY(src_dst_open(bm, i, &d, &f));
        if (!f.pd || f.np == 0) {
            if (f.pd) dnnl_primitive_desc_destroy(f.pd);
            continue;
        }
        dnnl_memory_t m1 = NULL;
        if (form == 0) {
            m1 = dn_view(bm, n->in[k], &md1);
        } else { /* every cell the scalar, the padding too */
            size_t sz = dnnl_memory_desc_get_size(&md1);
            float *buf = dn_alloc(bm, sz), v = *(const float *)dn_shape(bm, n->in[k])->data;
            for (size_t c = 0; buf && c < sz / sizeof(float); c++) buf[c] = v;
            if (buf) m1 = dn_mem_new(bm, &md1, buf);
            else err_set(bm->err, AIT_E_NOMEM, "onednn: out of memory");
        }
        if (!m1) {
            dnnl_primitive_desc_destroy(f.pd);
            return bm->err->code;
        }
        dnnl_exec_arg_t extra[1] = {{DNNL_ARG_SRC_1, m1}};
        return src_dst_close(bm, i, &f, m, extra, 1, taken);
    }
    dnnl_eltwise_desc_t d;
    if (dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, dnnl_eltwise_linear, md, la, lb) !=
        dnnl_success)
        return AIT_OK;
    return src_dst_emit(bm, i, &d, m, NULL, 0, taken);
}

static ait_status dn_binary(built *bm, int i, bool *taken)
{
    static const struct {
        const char *op;
        dnnl_alg_kind_t alg;
        bool commutes;
    } algs[] = {{"Add", dnnl_binary_add, true}, {"Mul", dnnl_binary_mul, true},
                {"Sub", dnnl_binary_sub, false}, {"Div", dnnl_binary_div, false}};
    const node *n = &bm->g->nodes[i];
    const tensor *y = dn_shape(bm, n->out[0]);
    int a = n->in[0], b = n->in[1], xl;
    float la, lb;
    if (!y || y->rank < 1 || y->rank > DNNL_MAX_NDIMS) return AIT_OK;
    /* x op constant scalar: also oneDNN's linear eltwise (see lin_emit) */
    if (dn_scalar_linear(bm, i, &xl, &la, &lb)) return lin_emit(bm, i, xl, la, lb, taken);
    const tensor *ta = dn_shape(bm, a), *tb = dn_shape(bm, b);
    int r = 0;
    while (strcmp(algs[r].op, n->op) != 0) r++;
    bool afull = ta->rank == y->rank && !memcmp(ta->dims, y->dims, sizeof(int64_t) * (size_t)y->rank);
    bool bfull = tb->rank == y->rank && !memcmp(tb->dims, y->dims, sizeof(int64_t) * (size_t)y->rank);
    if (!afull) {
        if (!bfull || !algs[r].commutes) return AIT_OK;
        int t = a;
        a = b;
        b = t;
        const tensor *tt = ta;
        ta = tb;
        tb = tt;
        bfull = afull;
    }
    dnnl_memory_t m0 = dn_as(bm, a, NULL), m1;
    const dnnl_memory_desc_t *md0;
    if (!m0) return bm->err->code;
    TRY(dn_check(bm, i, dnnl_memory_get_memory_desc(m0, &md0), "memory desc"));
    dnnl_memory_desc_t md1, dst = md_any(y->rank, y->dims);
    int64_t d1[DNNL_MAX_NDIMS];
    for (int k = 0; k < y->rank; k++) {
        int kb = k - (y->rank - tb->rank);
        d1[k] = kb >= 0 ? tb->dims[kb] : 1;
    }
    dnnl_memory_desc_t b16 = y->rank == 4 ? md_blocked(y->dims) : *md0;
    bool blk = !bfull && y->rank == 4 && dnnl_memory_desc_equal(md0, &b16);
    /* The broadcast operand plain, and beside an nChw16c source also in
     * nChw16c (squeeze-excitation's [1, C, 1, 1] scale), for which oneDNN
     * has its jit kernel. */
    for (int form = 0; form < (blk ? 2 : 1); form++) {
        if (bfull) md1 = *md0;
        else if (form == 0) dn_md_plain(&md1, y->rank, d1);
        else md1 = md_blocked(d1);
        dnnl_binary_desc_t d;
        dn_fused f = {.pd = NULL};
        if (dnnl_binary_desc_init(&d, algs[r].alg, md0, &md1, &dst) == dnnl_success)
            TRY(src_dst_open(bm, i, &d, &f));
        if (!f.pd) continue;
        m1 = bfull || form == 1 ? dn_as(bm, b, &md1) : dn_view(bm, b, &md1);
        if (!m1) {
            dnnl_primitive_desc_destroy(f.pd);
            return bm->err->code;
        }
        dnnl_exec_arg_t extra[1] = {{DNNL_ARG_SRC_1, m1}};
        return src_dst_close(bm, i, &f, m0, extra, 1, taken);
    }
    return AIT_OK;
}

/* ---- the table ------------------------------------------------------------------------- */

typedef struct op_row {
    const char *op;
    ait_status (*build)(built *bm, int i, bool *taken);
} op_row;

static const op_row rows[] = {
    {"Conv", dn_conv},
    {"MatMul", dn_matmul},
    {"Gemm", dn_gemm},
    {"MaxPool", dn_pool},
    {"AveragePool", dn_pool},
    {"GlobalAveragePool", dn_pool},
    {"GlobalMaxPool", dn_pool},
    {"BatchNormalization", dn_bnorm},
    {"LayerNormalization", dn_lnorm},
    {"Softmax", dn_softmax},
    {"Add", dn_binary},
    {"Sub", dn_binary},
    {"Mul", dn_binary},
    {"Div", dn_binary},
    {"Relu", dn_elt},
    {"LeakyRelu", dn_elt},
    {"Sigmoid", dn_elt},
    {"Tanh", dn_elt},
    {"Elu", dn_elt},
    {"Exp", dn_elt},
    {"Abs", dn_elt},
    {"Neg", dn_elt},
    {"Clip", dn_elt},
    {"HardSwish", dn_elt},
    {"Resize", dn_kresize},
    {"ConvTranspose", dn_kconvt},
};

static const op_row *row_of(const node *n)
{
    if (n->domain && n->domain[0]) return NULL;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        if (strcmp(rows[r].op, n->op) == 0) return &rows[r];
    return NULL;
}

bool dn_op_known(const node *n) { return row_of(n) != NULL; }

ait_status dn_node(built *bm, int i, bool *taken)
{
    const node *n = &bm->g->nodes[i];
    const op_row *r = row_of(n);
    *taken = false;
    if (!r || n->n_out < 1 || n->out[0] < 0) return AIT_OK;
    /* Float32 with known, non-empty shapes in, a float32 output. */
    for (int k = 0; k < n->n_in; k++) {
        if (n->in[k] < 0) continue;
        const tensor *t = dn_shape(bm, n->in[k]);
        if (!t || t->dtype != AIT_F32 || tensor_numel(t) == 0 || t->rank > DNNL_MAX_NDIMS)
            return AIT_OK;
    }
    const tensor *y = dn_shape(bm, n->out[0]);
    if (!y || y->dtype != AIT_F32 || tensor_numel(y) == 0 || y->rank > DNNL_MAX_NDIMS) return AIT_OK;
    if (n->n_in < 1 || n->in[0] < 0) return AIT_OK;
    return r->build(bm, i, taken);
}

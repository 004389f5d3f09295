/* The native backend's private parts: native.c (the vtable, schedules,
 * runs, prepared weights), fuse.c (the epilogue chain after an anchor),
 * one file per op family (gemm_ops.c: MatMul and Gemm, conv.c: Conv, rnn.c:
 * LSTM, attn.c: attention, fused or the Attention op), and
 * ops.c, the one table of the ops it takes. Fusions (graph/fuse.h) run as
 * one step: an element-wise chain (chain.c) at its first node, an
 * attention (attn.c) at its last, its other nodes skipped.
 *
 * A built module is a list of steps made once per input-shape signature
 * (at build when the module's inputs are static, else at the first run and
 * again when the shapes change): each step is a node run by a native op
 * (with the nodes its epilogue swallowed) or a node left to its reference
 * op through the executor (exec_run_node). Every value lives in a plain
 * row-major tensor: the module's input, a constant, or one owned here;
 * between two convolutions it may be stored channels-last instead (NHWC,
 * layout.c), never at the module's edges nor for a reference op. */
#ifndef AIT_BACKENDS_NATIVE_H
#define AIT_BACKENDS_NATIVE_H
#include "backends/backend.h"
#include "exec/exec.h"
#include "exec/place.h"
#include "graph/fuse.h"
#include "kernels/attn.h"
#include "kernels/gemm.h"
#include "kernels/gemm_tuned.h"
#include "kernels/nhwc.h"
#include "kernels/qgemm.h"

/* What an anchor's epilogue swallowed, in value ids (-1: none); fuse.c
 * finds it, the op turns it into a gemm_epi at each run. */
typedef struct nat_epi {
    gemm_act act;
    float lo, hi;
    int bias;       /* a constant added per output channel (Add after the anchor) */
    int res;        /* a value of the output's shape added */
    bool res_after; /* the residual comes after the activation */
    int out;        /* the chain's last value: what the step writes */
    int n_nodes;    /* nodes swallowed, */
    int nodes[8];   /* which */
    int fixed;      /* 1 + the graph's epilogue fusion (bm->fus) whose fixed form's
                       shift is the bias, 0: none (fuse.c) */
} nat_epi;

/* A node's prepared weights, kept across schedules (weights do not
 * depend on input shapes): packed GEMM operands, one per group, in one
 * buffer (owned, or an artifact blob used in place). */
typedef struct nat_pack {
    char name[64];
    void *own;
    const void *data;
    size_t size;
    int groups;
    size_t stride;    /* bytes from one group's packed operand to the next */
    gemm_packed *views;
    float *bias;      /* a bias the op prepared (Gemm's beta * C), owned */
    qg_packed qv;     /* quantised weights (built.quant >= 0): one group, qgemm's */
    float qs;         /* static int8: the input's calibrated scale (0: dynamic rows), */
    int32_t qz;       /* and zero point (qconv.c) */
    float *wt;        /* weights reordered (a channels-last depthwise conv's), owned */
    float *sums;      /* a depthwise conv's per-row channel sums, n_sums floats, owned (conv.c) */
    size_t n_sums;
} nat_pack;

typedef struct nat_step {
    int node;
    const struct nat_op *op; /* NULL: the reference op */
    nat_epi epi;
    int64_t geo[16];         /* the op's geometry, as it chose at schedule */
    size_t scratch;          /* bytes of scratch it needs per run */
    bool can_nhwc;           /* the op runs channels-last too (layout.c) */
    bool nhwc_ins;           /* any input of its node, not only the first, may be channels-last,
                              * each read in its own layout (a Concat's shuffle: concat.c) */
    bool nhwc;               /* it does: layout.c chose */
    int bn;                  /* a BatchNormalization folded into a Conv's weights, or -1 */
    int fus;                 /* the fusion the step runs (element-wise chain, attention), or -1 */
    int cat;                 /* a Concat's output this conv writes its channels of (concat.c), or -1 */
    int64_t cat_c0;          /* from this channel on */
    int view;                /* a Concat in a group of views (concat.c: nat_cat_views): 1 + the
                              * group's root Concat output, whose channels it copies its inputs
                              * [cp0, cp1) into (those no conv writes there); 0: none */
    int cp0, cp1;
    int64_t avg[15];         /* an AveragePool after a 1x1 Conv, run first on its input
                              * (conv.c): its geometry (nat_pool_geo); avg[0] 0: none */
    bool sums;               /* a channels-last depthwise conv writes its output rows' channel
                              * sums for a GlobalAveragePool reading its output (conv.c) */
    int pro;                 /* 1 + the step whose output only this direct 1x1 Conv reads, a
                              * BatchNormalization (with its Relu or Clip) or a Mul by factors per
                              * channel, that the GEMM applies to A as it reads it (gemm_args.pro:
                              * conv.c); 0: none */
    bool folded;             /* such a step: a later Conv does its work, its run does nothing */
    int band;                /* the first step of a block run by bands of rows (irb.c): the
                                block's steps, this one and the next band - 1; 0: none */
    int pre;                 /* 1 + the 1x1 Conv step whose output only this 1x1 Conv's residual Add
                              * reads (a bottleneck's conv3 and its downsample), run inside this
                              * step per block of rows (conv.c: pre_take); 0: none */
} nat_step;

typedef struct nat_val {
    const tensor *spec; /* as scheduled: shape, and data for constants */
    tensor t;           /* storage owned here */
    tensor *cur;        /* where the value is: an input, a constant or &t */
    bool input, konst, done;
    bool nhwc;          /* stored channels-last: [n][h][w][c] under its NCHW shape (layout.c) */
    bool placed;        /* t's bytes are in built.arena (a native step's output: place_values) */
    bool q8;            /* and as uint8 (static int8 Convs only, layout.c): the bytes at the */
    int q8_node;        /* scale and zero point of this Conv node's pack (qs, qz) */
    int uses;           /* consumers among the scheduled nodes, +1 for a module output */
    int view;           /* 1 + the value whose first channels this one is (a Concat's output as
                           a view of a longer Concat's: concat.c), channels-last with that value's
                           channels per pixel; no storage of its own; 0: none */
    bool in_cat;        /* its writer (a conv) writes it into a view group's root (concat.c) */
    /* During a run that appends a key/value cache in place (kv.c): > 0 when
     * this value (the past input, the present output) is a view with that
     * capacity along kv_axis (core/kv.h); 0 otherwise. */
    int64_t kv_cap;
    int kv_axis;
} nat_val;

struct built {
    const graph *g;
    int threads;
    const gemm_kernel *kern;
    int quant, qgroup; /* a quantised variant's qg_scheme and int4 group (qgemm.h), else -1 */
    bool pack_quant;   /* nat_pack_get is making quantised weights (qg_view, not gemm's) */
    size_t pack_tail;  /* bytes after qgemm's pack in such a blob (static int8's scales) */
    bool pack_raw;     /* nat_pack_get takes bytes the op lays out (no view: qconv.c's depthwise) */
    bool qstatic;      /* variant "int8": activations at calibrated scales (qconv.c) */
    int wino;          /* variant "wino" (NAT_WINO_ALL): 3x3 stride-1 Convs as Winograd F(4x4, 3x3),
                          "wino-large" (NAT_WINO_LARGE): F(4x4) on large planes, F(2x2, 3x3) on
                          small ones (conv.c) */
    const act_ranges *ranges; /* the calibration the tuner gives (cfg.ranges), or NULL */
    const prepared *prep;
    exec *x;
    bool scheduled;
    int64_t *sig;
    nat_val *vals;
    nat_step *steps;
    int n_steps;
    nat_pack *packs; /* per node */
    void *scratch;
    size_t scratch_size;
    /* The native steps' outputs, placed in one arena by their lifetimes
     * over the steps at each schedule (exec/place.h), as the executor
     * places a graph's: grown when a schedule needs more, never shrunk, so
     * a schedule no larger than an earlier one allocates nothing. The
     * place_values work arrays, n_vals long. */
    char *arena;
    size_t arena_cap;
    place_item *pl_items;
    place_item **pl_hit;
    int *pl_slot;
    prep_blob *saved;
    int n_saved;
    fusion_set *fus; /* the schedule's: one of kept[] (chain.c) */
    /* fuse_find's sets kept per input class (chain.c: ranks, dtypes, which
     * dims are 0 or 1), with their per-node map as found and the class */
    struct nat_kept {
        fusion_set *set;
        int *of_node;
        int64_t *key;
    } kept[4];
    int kept_next;     /* the entry the next new class replaces */
    int *step_of;      /* layout.c's per-node map, n_nodes + 1 */
    /* As the current steps last saw the module (relength, native.c): the
     * executor's schedule (exec_schedule_gen) and per node whether it runs. */
    unsigned sched_gen;
    unsigned long n_full, n_kept; /* schedules from scratch, kept by relength (sched_stats) */
    bool *ran;
    /* Found once at build (the module's graph never changes), so that a
     * schedule, made at every new past length of a decoder, does not look
     * them up again: per node its nat_op (or NULL), and per value v the
     * nodes reading it, readers[reader_at[v] .. reader_at[v + 1]) in node
     * order. */
    const struct nat_op **op_of;
    int *readers, *reader_at;
    gemm_ws gws;       /* nat_gemm_f32's packing buffers */
    katt_geom *att;  /* per node: an attention step's geometry (attn.c) */
    const gemm_tuned *tuned; /* per-shape configs: cfg->gemm's, or own_tuned (tuned.c) */
    gemm_tuned own_tuned;    /* decoded from the artifact's blob */
    void *tuned_blob;        /* the table as saved, owned */
    size_t tuned_blob_size;
    void (*gemm_seen)(void *user, const gemm_args *g, const char *layout, const char *dtype,
                      const char *cfg);
    void *gemm_seen_user;
    /* nat_run_kv's (kv.c): the inputs and destinations it runs with, and
     * per module input a dense copy of a past it cannot read in place */
    tensor **kv_in, **kv_dest, *kv_tmp;
    /* During run_steps: per module output the caller's tensor it is
     * written into (backend.run_into's dest), or NULL (nat_dest). */
    tensor *const *run_dest;
    unsigned run_gen;  /* runs so far (run_steps counts them) */
    /* int8dq A rows quantised (qg_quant_rows_u8) in qa (qa_cap bytes) by a
     * GEMM step whose input other int8dq GEMM steps read too (gemm_ops.c:
     * a layer's query, key and value projections): value qa_val, its bytes
     * at qa_data, in run qa_gen; the next such step of the same run reads
     * them instead of quantising again. */
    void *qa;
    size_t qa_cap;
    int qa_val;
    const void *qa_data;
    unsigned qa_gen;
    uint8_t *qa_q;
    float *qa_sa;
    int32_t *qa_za;
    /* The range of each row of value qr_val (bytes at qr_data) an int8dq
     * GEMM step wrote in run qr_gen, found in its epilogue for the int8dq
     * step reading it (gemm_ops.c: FFN1's GELU output, FFN2's input):
     * the lows, then the highs, GEMM_RANGE_LANES lanes a row (gemm_epi.rlo);
     * qr_cap floats. */
    float *qr;
    size_t qr_cap;
    int qr_val;
    const void *qr_data;
    unsigned qr_gen;
    ait_error *err;
    ait_error own_err;
};

typedef struct nat_op {
    const char *name;
    /* At schedule: takes node i (fills st, packs weights into bm->packs[i])
     * or sets *taken false to leave it to the reference op. */
    ait_status (*take)(built *bm, int i, nat_step *st, bool *taken);
    ait_status (*run)(built *bm, const nat_step *st);
    /* After the layout pass (NULL: nothing to do): packs what the chosen
     * layout needs and sets st->scratch. */
    ait_status (*finish)(built *bm, nat_step *st);
    bool int8_in;   /* its data input is (u)int8, not float32 (qlinear.c) */
} nat_op;

/* native.c: after an error (status s, set) about an artifact's prepared
 * weights this build cannot take (a blob missing, of another size or
 * layout: tuned by another build, whose kernels pack differently or whose
 * Convs fuse more), appends that the model must be re-tuned; returns s. */
ait_status nat_stale(built *bm, ait_status s);

/* ops.c */
const nat_op *nat_op_find(const node *n);
extern const nat_op nat_batchnorm; /* norm.c */
extern const nat_op nat_chan_mul;  /* chanmul.c */

/* qlinear.c: MatMul node i's B when it is a DequantizeLinear of constant
 * weights that exec leaves unfolded (per tensor or per column int8/uint8,
 * or int4/uint4 blocks of 32, 64, 128 along K), packed: for qgemm's
 * weight-only kernels (*q) when the MatMul has at most 16 rows, else
 * dequantised for the float32 GEMM; *packed false when B is no such value
 * (the DequantizeLinear step then ran as usual). */
ait_status nat_dq_pack(built *bm, int i, bool *packed, bool *q);
/* fuse.c: the only scheduled node consuming value v (a module output
 * counts as a use), or -1. */
int nat_sole_consumer(const built *bm, int v);
/* fuse.c: the element-wise chain after value v (the anchor's output) that
 * the epilogue can take; `row_bias` says whether a bias runs along the
 * output's channel axis 1 (Conv) rather than its last (MatMul, Gemm);
 * bias_ok: the anchor has no bias of its own. Along the last axis, the
 * graph's epilogue fusion of v's producer (graph/fuse.h's FK_EPILOGUE) is
 * taken whole when its fixed form fits a gemm_epi: the compound
 * activations exporters write out (GELU as Div, Erf, Add, Mul, Mul) then
 * run in the GEMM's epilogue instead of node by node on the reference. A
 * Pad that pads nothing (torch's before an AvgPool2d) is swallowed as the
 * identity it is. */
void nat_chain(const built *bm, int v, bool row_bias, bool bias_ok, nat_epi *ep);
/* fuse.c: after such a chain that ends at its residual Add, the activation
 * reading it too (ResNet's Relu after the Add), applied after the
 * residual: for anchors whose epilogue is the GEMM's (gemm_epi's order),
 * not the kernels' that add a residual last (depthwise, ConvTranspose). */
void nat_chain_act_last(const built *bm, nat_epi *ep);
/* fuse.c: the inference BatchNormalization node that is the only consumer
 * of value v, the output of an anchor with c channels on axis 1, its four
 * parameters constant float32 [c]; -1 when none. Its per-channel scale s
 * and shift t (y = x * s + t), c floats each, by nat_bn_fold. */
int nat_bn_after(const built *bm, int v, int64_t c);
/* Whether node i is such a BatchNormalization of value v (its readers aside). */
bool nat_bn_node(const built *bm, int i, int v, int64_t c);
void nat_bn_fold(const built *bm, int bn, int64_t c, float *s, float *t);
/* The gemm_epi of a step's chain for output element block at offset off
 * (the residual's), with the op's own scale and bias. */
void nat_gemm_epi(const built *bm, const nat_epi *ep, int64_t off, int64_t ldr, gemm_epi *out);
/* The kernels' activation (kernels/act.h) for a step's chain. */
kact nat_kact(const nat_epi *ep);
/* y += the step's residual, when its chain has one (after the activation:
 * the chain puts an activation only before a residual), for the kernels
 * whose epilogue stops at the activation (depthwise, ConvTranspose). */
void nat_res_add(const built *bm, const nat_step *st, float *y);

/* chain.c: fuse_find over the scheduled shapes into bm->fus (the
 * attention fusions native cannot run dropped: their nodes run one by
 * one), or the set found at an earlier schedule of the same input class
 * (each step's take checks again that its fusion fits the shapes, so a set
 * found at other sizes is only ever less fused, never wrong); nat_kept_free
 * frees the kept sets; whether chain fi can run as one step st (set up when so); its op. */
ait_status nat_fusions(built *bm);
void nat_kept_free(built *bm);
bool nat_chain_take(built *bm, int fi, nat_step *st);
extern const nat_op nat_chain_op;
/* attn.c: whether attention fusion fi runs on the kernel at this schedule
 * (its geometry then in bm->att[its last node]); the op that runs it, at
 * its last node, its other nodes skipped (geo[0]: fi). */
bool nat_attn_fusion(built *bm, int fi);
/* Attention fusion a's past strides in g for this run: those of a cache
 * view (nat_val.kv_cap) where its past is one. */
void nat_attn_kv(const built *bm, const fuse_attn *a, katt_geom *g);
/* kv.c: backend.run_kv (runs through run_into: nat_run_into). Whether the
 * step of node i appends a cache in place this run (a Concat whose output
 * is a view), and that append. */
ait_status nat_run_kv(built *bm, tensor *const *inputs, tensor *const *dest, kv_view *kv,
                      int n_kv, tensor **outputs, ait_error *e);
/* Checks the inputs and schedules at their shapes when they are new. */
ait_status nat_prepare(built *bm, tensor *const *inputs, ait_error *e);
ait_status nat_run_into(built *bm, tensor *const *inputs, tensor *const *dest, tensor **outputs,
                        ait_error *e);
bool nat_kv_append_step(const built *bm, const node *n);
/* During a run: the caller's tensor module value v is written into
 * (backend.h, run_into), or NULL. */
tensor *nat_dest(const built *bm, int v);
/* attn.c: whether the Attention op node n (run by nat_attention) reads
 * value pv only as its past key or past value and writes ov as the
 * matching present: a cache pair it appends in place when both are views
 * (nat_val.kv_cap: it reads the past with the cache's strides and writes
 * the new positions only). */
bool nat_attn_op_appends(const node *n, int pv, int ov);
ait_status nat_kv_append(built *bm, int i, tensor *dest);
void nat_kv_free(built *bm);
extern const nat_op nat_attn_fused, nat_attention; /* the fusion's, the Attention op's */
/* norm.c: whether LayerNorm fusion fi (FK_LAYERNORM, RMSNorm too) runs on
 * the row kernels at this schedule; the op that runs it at its last node,
 * its other nodes skipped (geo[0]: fi). */
bool nat_ln_fusion(built *bm, int fi);
extern const nat_op nat_ln_fused;
/* rope.c: the same for rotary fusion fi (FK_ROTARY) on krope. */
bool nat_rope_fusion(built *bm, int fi);
extern const nat_op nat_rope_fused;

/* tuned.c: every native GEMM call site runs its GEMM through nat_gemm_f32:
 * the tuned config for the shape (when there is a table), the capture hook,
 * then gemm_f32 on the module's packing buffers (gws, grown to the largest
 * call, so runs after the first allocate none). nat_tuned_setup at build takes the table from cfg or the
 * artifact's blob (TUNED_BLOB); nat_tuned_free at free. */
#define TUNED_BLOB "gemm.cfg"
ait_status nat_gemm_f32(built *bm, gemm_args *g);
/* A quantised GEMM about to run on qgemm (M x N x K, A row-major, B packed
 * as v; a_int: A is uint8 or int8 already, "u8s8"/"s8s8", else v's
 * scheme names the dtype): the threads to run it on, the tuned row's for
 * that dtype (never more than the caller's `threads`), said to the
 * gemm_seen hook with the row's id, as nat_gemm_f32 says the float ones. */
int nat_qgemm_threads(built *bm, const qg_packed *v, int64_t m, int a_int, const gemm_epi *epi,
                      int threads);
ait_status nat_tuned_setup(built *bm, const candidate_cfg *cfg, ait_error *e);
void nat_tuned_free(built *bm);
/* layout.c: which values stay channels-last between steps and which conv
 * steps run so (see its header), then each step's finish. */
ait_status nat_layout(built *bm);

/* qconv.c: whether a Conv of `group` groups runs quantised in this build
 * (channels-last, on qgemm); its weights [kdim][M] quantised and packed
 * (one group, the view in bm->packs[i].qv); whether a module has a Conv
 * the variant quantises. */
bool nat_qconv(const built *bm, int64_t group);
ait_status nat_qconv_pack(built *bm, int i, const float *wt, int64_t kdim, int64_t M);
bool nat_qconv_in(const graph *module);
/* Static int8 depthwise Conv node i (weights w[c][taps], c channels):
 * its pack, int8 weights per channel symmetric held as floats wq[taps][c]
 * then their scales ws[c], with the input's calibrated scale and zero point
 * after them (qs, qz), as the GEMM Convs'. */
ait_status nat_qdw_pack(built *bm, int i, const float *w, int64_t taps, int64_t c);
/* Static int8 Conv node i by Winograd F(2x2, 3x3) (kwg_conv_u8): u, the
 * transformed weights [16][c][m] (kwg_weights), each position's packed
 * QG_INT8DQ (nat_qwino_bytes apart), then the input's calibrated scale and
 * zero point (qs, qz), as the GEMM Convs'. u NULL: the artifact's. */
size_t nat_qwino_bytes(int64_t c, int64_t m);
ait_status nat_qwino_pack(built *bm, int i, const float *u, int64_t c, int64_t m);
/* Output pixels [p0, p1) of x's NHWC im2col (nhwc.h) as qgemm_u8's rows
 * (kp apart, scales sa, zero points za), made through tmp: min(16, p1 - p0)
 * rows of kdim floats; each row at its own range, or at pack p's static
 * scale when it has one (p->qs > 0). */
void nat_qconv_rows(const nat_pack *p, const knhwc_geom *kg, const float *x, int64_t p0,
                    int64_t p1, int64_t kdim, int64_t kp, float *tmp, uint8_t *q, float *sa,
                    int32_t *za);
/* Static int8's direct (1x1) Conv: rows [0, m) of A (kdim floats each,
 * lda apart) quantised at p's static scale into qgemm_u8's rows. */
void nat_qconv_direct(const nat_pack *p, const float *a, int64_t lda, int64_t m, int64_t kdim,
                      int64_t kp, uint8_t *q, float *sa, int32_t *za);
/* The same of a uint8 input (nat_val.q8, at its writer's scale and zero
 * point, which the caller gives qgemm_u8_uni): rows [0, m) of x (ldx
 * apart) as qgemm_u8's rows: x itself when its rows are kp bytes apart and
 * K is kp, else copied into q. */
const uint8_t *nat_qconv_direct_u8(const uint8_t *x, int64_t ldx, int64_t m, int64_t kdim,
                                   int64_t kp, uint8_t *q);
/* Static int8's implicit GEMM, a Conv of geometry kg reading its uint8
 * input (xc channels per pixel, kg->c or fewer: knhwc_padded_u8) in place
 * of an im2col (qgemm_u8_rows; knhwc_padded_u8 says when it can): the
 * scratch bytes it takes for blocks of up to blk pixels (the padded image,
 * the rows' pointers), -1 when it cannot. */
int64_t nat_qconv_ig_bytes(const knhwc_geom *kg, int64_t xc, int64_t blk);
/* Output pixels [p0, p1) of image x (uint8, xc channels, zero point pad) as
 * A's rows in *a, made in ws (nat_qconv_ig_bytes of them; the padded image
 * made when p0 is 0, kept for the image's next blocks; x NULL: ws holds it
 * already, knhwc_pad_u8_nchw's); returns a->rp. */
const uint8_t *const *nat_qconv_ig_rows(const knhwc_geom *kg, const uint8_t *x, int64_t xc,
                                        uint8_t pad, int64_t p0, int64_t p1, uint8_t *ws, qg_rows *a);

/* shuffle.c: the channel shuffle (Reshape, Transpose, Reshape) that alone
 * reads value v, a 4-D float32 [n][c][h][w]: its groups, its three nodes
 * and last value set in ep (nodes, n_nodes, out); 0 when none. */
int64_t nat_shuffle_after(const built *bm, int v, nat_epi *ep);
/* shuffle.c: runs a step copying channels geo[0].. of its node's input 0
 * into its output (st->epi.out), shuffled in geo[1] groups when > 0, each
 * side in its value's layout (the standalone shuffle's and Slice's run). */
ait_status nat_chan_run(built *bm, const nat_step *st);

/* concat.c: after the layouts are chosen (layout.c), the Concats over
 * channels whose inputs are the first inputs of a longer channels-last
 * Concat's (DenseNet's layers within a dense block) become views of that
 * Concat's output: each input is written once into its channels there (by
 * its conv, or copied by the first Concat reading it) and the shorter
 * Concats' outputs are its first channels, read in place by their
 * BatchNormalizations. */
void nat_cat_views(built *bm);

/* conv.c: whether conv step st can write its output into a Concat's
 * channels (a GEMM, not depthwise, no residual: concat.c). */
bool nat_conv_cat(const nat_step *st);
/* resize.c: whether Resize step st can write into a Concat's channels (a
 * nearest one, no Add in its pass), as nat_conv_cat's Convs. */
bool nat_rz_cat(const nat_step *st);
/* conv.c: when a depthwise Conv step computed the channel sums of its
 * output v this run (nat_step.sums: squeeze-excitation's pool reads the
 * depthwise output), v's GlobalAveragePool ([n][c], either layout) into y
 * from them, without reading v; false when it did not. */
bool nat_dw_gap(const built *bm, int v, float *y);
/* conv.c: whether conv step st may write its output over its residual's
 * bytes (place_values, when the residual is read last there): a 1x1 Conv
 * read in place (CONV_DIRECT) on the GEMM's skinny path with the epilogue
 * in registers, where each tile reads its residual before it stores C
 * there (the packed path stores C before its edge tiles' epilogue). */
bool nat_conv_res_in_place(const built *bm, const nat_step *st);
/* conv.c: whether step st is a static int8 Conv (variant "int8", on
 * qgemm_u8), which reads and writes uint8 values (layout.c). */
bool nat_conv_q8(const built *bm, const nat_step *st);
/* conv.c, for irb.c's blocks: whether channels-last conv step st can run
 * by bands of its output rows (nat_conv_rows): float32, a direct 1x1 of
 * one group or a depthwise (*dw), no prologue, pool, Concat or view, its
 * input, output and residual channels-last values of their own. */
bool nat_conv_band(const built *bm, const nat_step *st, bool *dw);
/* Whether it is such a step and a network's stem on its NCHW image (the
 * direct kernel, kstem_conv: its input read from the planes, the only
 * one of those steps whose input is not channels-last). */
bool nat_conv_stem(const built *bm, const nat_step *st);
/* Its images, input rows and output rows; the bytes of one input (out
 * false) or output row of an image; the input rows [*r0, *r1) of an image
 * that its output rows [oy0, oy1) read (clipped to the image). */
void nat_conv_dims(const nat_step *st, int64_t *n, int64_t *h, int64_t *oh);
int64_t nat_conv_row_bytes(const nat_step *st, bool out);
void nat_conv_in_rows(const nat_step *st, int64_t oy0, int64_t oy1, int64_t *r0, int64_t *r1);
/* The input rows [*r0, *r1) (clipped to the h rows) that output rows [oy0,
 * oy1) of a window of k rows, stride s, dilation d and top padding pt read:
 * nat_conv_in_rows', and nat_pool_in_rows' for a pool. */
void nat_window_rows(int64_t h, int64_t k, int64_t s, int64_t d, int64_t pt, int64_t oy0, int64_t oy1,
                     int64_t *r0, int64_t *r1);
/* Runs such a step for output rows [oy0, oy1) of image im, as its run
 * does for all of them: the GEMM's rows for those pixels, or the
 * depthwise kernel on the input rows they read (bias, activation,
 * residual and channel sums the same). */
ait_status nat_conv_rows(built *bm, const nat_step *st, int64_t im, int64_t oy0, int64_t oy1);
/* irb.c: marks the blocks of consecutive steps that run by bands of rows
 * (nat_step.band): an expanding 1x1 Conv, the depthwise Conv reading it and
 * the projecting 1x1 Conv reading that, or two of them; or a stem on its
 * image, the pool reading it and the 1x1 Conv reading that (nat_conv_stem,
 * nat_pool_band); so that the
 * block's intermediate rows are read back from cache, not memory (the
 * values any step of a block touches live over the whole block:
 * place_values); and runs block s. */
void nat_bands(built *bm);
/* The output rows of block s's last step per band. */
int64_t nat_band_rows(const built *bm, int s);
/* Whether step t of block s may have its output live from step t on: the
 * block's last step whose residual is the block's input, which only its
 * first step, a 1x1 Conv, reads besides, band by band ahead of the rows
 * the last step writes; so its output can take the residual's bytes
 * (nat_conv_res_in_place) as a step-by-step run's does. */
bool nat_band_out_late(const built *bm, int s, int t);
ait_status nat_band_run(built *bm, int s);
/* conv.c: whether module has a Conv the "wino" variant runs as Winograd. */
bool nat_wino_in(const graph *module);
/* conv.c: whether "wino-large" differs from "wino" on module: it has such
 * Convs on small planes (F(2x2) there, not F(4x4)). */
bool nat_wino_small(const graph *module);
enum { NAT_WINO_ALL = 1, NAT_WINO_LARGE = 2 }; /* built.wino */

/* pool.c: whether node i is a 2-D pool native runs (float32, its output's
 * size as the attributes give it), its geometry then in geo (15 values:
 * n, c, h, w, kernel, strides, dilations, pads begin and end, whether an
 * average counts the padding); and an AveragePool of that geometry on x,
 * NCHW or channels-last, into y of oh x ow pixels. */
bool nat_pool_geo(built *bm, int i, int64_t *geo);
void nat_avgpool_run(const built *bm, const int64_t *geo, int64_t oh, int64_t ow, bool nhwc,
                     const float *x, float *y);

/* pool.c: whether step st is a MaxPool that runs on uint8 bytes when its
 * input is (static int8, channels-last: layout.c). */
bool nat_pool_q8(const built *bm, const nat_step *st);
/* pool.c, for irb.c's blocks: whether MaxPool or AveragePool step st can
 * run by bands of its output rows (nat_pool_rows): float32, channels-last
 * input and output values of their own (no view, Concat or uint8); its
 * images, input rows and output rows; the bytes of one input (out false)
 * or output row of an image; the input rows [*r0, *r1) of an image its
 * output rows [oy0, oy1) read (clipped to the image); and the step run for
 * output rows [oy0, oy1) of image im, the same kernel on the same taps. */
bool nat_pool_band(const built *bm, const nat_step *st);
void nat_pool_dims(const built *bm, const nat_step *st, int64_t *n, int64_t *h, int64_t *oh);
int64_t nat_pool_row_bytes(const built *bm, const nat_step *st, bool out);
void nat_pool_in_rows(const nat_step *st, int64_t oy0, int64_t oy1, int64_t *r0, int64_t *r1);
ait_status nat_pool_rows(built *bm, const nat_step *st, int64_t im, int64_t oy0, int64_t oy1);

/* Scratch floats, rounded up to 16 so that each part of a step's scratch
 * (a value whose layout it changes, an im2col block) starts 64-byte aligned. */
static inline size_t nat_floats(int64_t n) { return ((size_t)n + 15) & ~(size_t)15; }

/* native.c helpers */
const tensor *nat_shape(const built *bm, int v); /* scheduled, when the shape is known */
bool nat_const(const built *bm, int v);
bool nat_is_output(const graph *g, int v); /* v is one of g's outputs */
ait_status nat_fail(built *bm, int i, ait_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Node i's packed weights: from the prepared blobs when given (by name,
 * checked by size and header), else made by fill (bytes each group) and
 * recorded for save(). stride: bytes per group (64-aligned). */
ait_status nat_pack_get(built *bm, int i, int groups, size_t bytes,
                        void (*fill)(built *bm, int i, int grp, void *dst, const void *arg),
                        const void *arg, nat_pack **out);
/* The same with groups of sizes[g] bytes each (0 < sizes[g] <= bytes after
 * taking the largest): each group still starts at g * the largest, rounded. */
ait_status nat_pack_get_sized(built *bm, int i, int groups, size_t bytes, const size_t *sizes,
                              void (*fill)(built *bm, int i, int grp, void *dst, const void *arg),
                              const void *arg, nat_pack **out);

#endif

/* What the fusion passes share while matching (private to graph/fuse*.c). */
#ifndef AIT_GRAPH_FUSE_CTX_H
#define AIT_GRAPH_FUSE_CTX_H
#include "graph/fuse.h"

typedef struct fctx {
    const graph *g;
    fuse_shape_fn shape;
    void *sctx;
    int *uses;   /* per value: reads by nodes (and their subgraphs) */
    int *coff;   /* per value: its readers are cons[coff[v] .. coff[v+1]) */
    int *cons;
    bool *out;   /* per value: a graph output */
    bool *taken; /* per node: in a fusion already */
    fusion_set *set;
} fctx;

/* A match under way: nodes absorbed so far. */
typedef struct fmatch {
    int n;
    int nodes[FUSE_MAX_NODES];
} fmatch;

/* Value v's float32 constant, or NULL. */
const tensor *fx_konst(const fctx *c, int v);
/* The constant scalar of v (one float32 element). */
bool fx_scalar(const fctx *c, int v, float *f);
/* Value v's shape as known (callback, constant, else declared; NULL). */
const tensor *fx_shape(const fctx *c, int v, tensor *tmp);
/* Node i is live, not taken, has op `op` (default domain). */
bool fx_is(const fctx *c, int i, const char *op);
/* The only reader of v, when v has one and is no graph output, else -1. */
int fx_only(const fctx *c, int v);
/* The reader of v with op `op` (first one), else -1. */
int fx_reader(const fctx *c, int v, const char *op);
/* Binary node i reads x on one side: the other input (side set: 0 when x
 * is input 0), else -1. */
int fx_other(const fctx *c, int i, int x, int *side);
/* Binary op node i reads x and a scalar constant near want (either side
 * when commutes; x on the left otherwise). */
bool fx_with(const fctx *c, int i, const char *op, int x, float want, bool commutes);
/* Every reader of each absorbed node's output but last_out (and of x when
 * x >= 0) is in m, and none is a graph output. */
bool fx_closed(const fctx *c, const fmatch *m, int last_out, int x);
void fx_add(fmatch *m, int i);

/* An activation reading x (fuse_act.c): single ops and the compound forms.
 * absorbed: x itself is absorbed (every reader of x must then be in the
 * match); need >= 0: the match must hold that node. On success m gets the
 * nodes, *out the result. */
bool fx_act(const fctx *c, int x, bool absorbed, int need, fuse_step *st, fmatch *m, int *out);

/* Fills an epilogue's fixed form from its steps (fuse_fixed.c); false
 * when out of memory. fx_fixed_free frees what it owns. */
bool fx_fixed(fusion *f);
void fx_fixed_free(fuse_fixed *x);

/* LayerNorm and attention from their decomposed exports (fuse_pat.c). */
ait_status fx_layernorm(fctx *c, ait_error *e);
ait_status fx_attention(fctx *c, ait_error *e);
/* The rotary embedding written out (fuse_rope.c). */
ait_status fx_rotary(fctx *c, ait_error *e);
/* Records a fusion (the set takes over nothing: steps' p arrays are moved
 * in by the caller after). Marks its nodes taken. */
ait_status fx_record(fctx *c, const fusion *f, const fmatch *m, ait_error *e);

#endif

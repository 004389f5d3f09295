/* The next weights into L2 while the current step runs (native.h:
 * nat_pfw_plan, nat_pfw_take). A model's weights come from memory or L3 on
 * every run (a transformer's are larger than L2 and read once a run), and a
 * GEMM's first calls otherwise wait for its packed B at the hardware
 * prefetcher's pace. So each step that can spread prefetches over its work
 * (a GEMM's skinny calls: gemm_args.pfw; an attention's GEMMs:
 * katt_geom.pfw) is given the packed B of the next step that reads weights;
 * the steps between (LayerNorm, element-wise, reference ops) pass it on. */
#include "backends/native/native.h"

/* Step st's packed float32 B (its first group's panels), or NULL. */
static const gemm_packed *step_b(const built *bm, const nat_step *st)
{
    if (!st->op || st->folded) return NULL;
    const nat_pack *p = &bm->packs[st->node];
    const gemm_packed *v = p->views;
    return v && v->data && !v->is_a && v->kern ? v : NULL;
}

static bool is_attention(const nat_step *st)
{
    return st->op == &nat_attn_fused || st->op == &nat_attention;
}

void nat_pfw_plan(built *bm)
{
    for (int s = 0; s < bm->n_steps; s++) /* the steps of a block by bands (irb.c): -1 */
        bm->steps[s].pfw = 0;
    for (int s = 0; s < bm->n_steps; s++)
        for (int t = s; t < s + bm->steps[s].band && t < bm->n_steps; t++) bm->steps[t].pfw = -1;
    int next = 0; /* 1 + the node of the next step reading weights, 0: none (or claimed) */
    for (int s = bm->n_steps - 1; s >= 0; s--) {
        nat_step *st = &bm->steps[s];
        if (st->pfw < 0) { /* runs by bands: takes none, and the steps before prefetch none across */
            st->pfw = next = 0;
            continue;
        }
        const bool w = step_b(bm, st) != NULL;
        st->pfw = w || is_attention(st) ? next : 0;
        if (w) next = st->node + 1;
        else if (is_attention(st)) next = 0; /* the attention prefetches them, closer to their use */
    }
}

void nat_pfw_take(built *bm, const void **p, size_t *bytes)
{
    *p = bm->pfw, *bytes = bm->pfw_bytes;
    bm->pfw = NULL, bm->pfw_bytes = 0;
}

void nat_pfw_set(built *bm, const nat_step *st)
{
    bm->pfw = NULL, bm->pfw_bytes = 0;
    const gemm_packed *v = st->pfw > 0 ? step_b(bm, &bm->steps[bm->step_of[st->pfw - 1]]) : NULL;
    if (!v) return;
    bm->pfw = v->data;
    bm->pfw_bytes = gemm_packed_bytes(v);
}

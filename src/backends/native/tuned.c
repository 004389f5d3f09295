/* Per-shape GEMM configs in the native backend (native.h: nat_gemm_f32). The
 * table comes from the tuner (candidate_cfg.gemm, `ait tune --gemm-db`)
 * and is saved whole as one prepared blob, so an artifact runs with the
 * configs it was tuned with and loading never reads the CSV. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native.h"

ait_status nat_gemm_f32(built *bm, gemm_args *g)
{
    gemm_config local;
    const char *id = "";
    char layout[3];
    gemm_layout_of(g, layout);
    if (bm->tuned && bm->tuned->n) {
        bool exact;
        const gemm_tuned_row *r = gemm_tuned_find(bm->tuned, g->m, g->n, g->k, "f32", layout, &exact);
        if (r) {
            local = r->cfg;
            /* never more threads than the candidate was given */
            if (local.threads > bm->threads || local.threads == 0) local.threads = bm->threads;
            if (local.splitk > bm->threads && bm->threads > 1) local.splitk = bm->threads;
            /* C over its residual (nat_conv_res_in_place): the skinny path only, where each
             * tile reads its residual before storing there; packing A takes the other */
            if (g->epi.res == g->c && local.pack_a == GEMM_PACKA_ON) local.pack_a = GEMM_PACKA_AUTO;
            g->cfg = &local;
            id = r->id;
        }
    }
    if (bm->gemm_seen) bm->gemm_seen(bm->gemm_seen_user, g, layout, "f32", id);
    g->ws = &bm->gws;
    return gemm_f32(g, bm->err);
}

int nat_qgemm_threads(built *bm, const qg_packed *v, int64_t m, int a_int, const gemm_epi *epi,
                      int threads)
{
    char dtype[16];
    if (a_int) snprintf(dtype, sizeof dtype, "%s", a_int > 0 ? "s8s8" : "u8s8");
    else if (v->scheme == QG_INT4WO && v->group != 32)
        snprintf(dtype, sizeof dtype, "%s-%d", qg_scheme_name(v->scheme), v->group);
    else snprintf(dtype, sizeof dtype, "%s", qg_scheme_name(v->scheme));
    const char *id = "";
    if (bm->tuned && bm->tuned->n) {
        bool exact;
        const gemm_tuned_row *r = gemm_tuned_find(bm->tuned, m, v->n, v->k, dtype, "np", &exact);
        if (r) {
            /* qgemm's one knob; never more threads than the caller's */
            if (r->cfg.threads > 0 && r->cfg.threads < threads) threads = r->cfg.threads;
            id = r->id;
        }
    }
    if (bm->gemm_seen) {
        gemm_args g = {.m = m, .n = v->n, .k = v->k, .threads = threads};
        if (epi) g.epi = *epi;
        bm->gemm_seen(bm->gemm_seen_user, &g, "np", dtype, id);
    }
    return threads;
}

ait_status nat_tuned_setup(built *bm, const candidate_cfg *cfg, ait_error *e)
{
    bm->gemm_seen = cfg ? cfg->gemm_seen : NULL;
    bm->gemm_seen_user = cfg ? cfg->gemm_seen_user : NULL;
    for (int k = 0; bm->prep && k < bm->prep->n; k++)
        if (!strcmp(bm->prep->blobs[k].name, TUNED_BLOB)) {
            TRY(gemm_tuned_decode(bm->prep->blobs[k].data, bm->prep->blobs[k].size, &bm->own_tuned, e));
            bm->tuned = &bm->own_tuned;
            break;
        }
    if (!bm->tuned && cfg && cfg->gemm && cfg->gemm->n) bm->tuned = cfg->gemm;
    if (bm->tuned && bm->tuned->n)
        TRY(gemm_tuned_encode(bm->tuned, &bm->tuned_blob, &bm->tuned_blob_size, e));
    return AIT_OK;
}

void nat_tuned_free(built *bm)
{
    gemm_tuned_free(&bm->own_tuned);
    free(bm->tuned_blob);
    gemm_ws_free(&bm->gws);
}

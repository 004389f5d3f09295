/* The choice for a module at a bucket (see choice.h). */
#include "tune/choice.h"

#include <stdio.h>

ait_status tune_pick(const tune_module *tm, const strategy *st, choice *out, ait_error *e)
{
    cand_result cr[TUNE_MAX_CANDS];
    for (int c = 0; c < tm->n_cands; c++) {
        const tune_cand *tc = &tm->cands[c];
        cr[c] = (cand_result){.name = tc->name, .backend = tc->cfg.backend, .valid = tc->valid,
                              .reason = tc->reason, .latency = tc->prof.median,
                              .throughput = tc->prof.throughput, .batch = tm->batch,
                              .variant = tc->cfg.variant};
    }
    if (tm->n_cands < 1 || !tm->cands[0].valid) {
        out->index = 0;
        snprintf(out->why, sizeof out->why, "the baseline failed (%s); the module keeps it",
                 tm->n_cands ? tm->cands[0].reason : "no candidates");
        return AIT_OK;
    }
    ait_error why = {0};
    ait_status s = strategy_choose(st, &cr[0], cr + 1, tm->n_cands - 1, out, &why);
    if (s == AIT_E_NOT_FOUND) { /* nothing fits what the strategy asks: not the tune's end */
        out->index = 0;
        snprintf(out->why, sizeof out->why, "kept the baseline: %s", why.msg);
        return AIT_OK;
    }
    if (s != AIT_OK) {
        *e = why;
        return s;
    }
    out->index++;
    return AIT_OK;
}

double tune_margin(double margin)
{
    return margin > 0 ? margin : margin < 0 ? 0 : STRAT_DEFAULT_MARGIN;
}

ait_status tune_choose(tune_module *tm, double margin, ait_error *e)
{
    strategy st;
    TRY(strategy_parse(tm->strategy, &st, e));
    st.margin = tune_margin(margin);
    bool any = false;
    for (int c = 1; c < tm->n_cands; c++) any |= tm->cands[c].valid;
    tm->all_failed = tm->n_cands > 1 && !any;
    if (tm->untuned[0]) {
        tm->chosen = 0;
        snprintf(tm->why, sizeof tm->why, "kept the baseline: %s", tm->untuned);
        return AIT_OK;
    }
    choice ch;
    TRY(tune_pick(tm, &st, &ch, e));
    tm->chosen = ch.index;
    snprintf(tm->why, sizeof tm->why, "%s", ch.why);
    return AIT_OK;
}

/* Capturing the GEMMs a model runs, and the M sweep (capture.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "gemmtune/capture.h"
#include "runtime/gemm_report.h"

typedef struct cap_run {
    gt_capture *c;
    gemm_report *rep;
} cap_run;

static void seen(void *user, const gemm_args *g, const char *layout, const char *dtype,
                 const char *cfg)
{
    cap_run *cr = user;
    gt_row r = {.m = g->m, .n = g->n, .k = g->k, .count = 1};
    snprintf(r.dtype, sizeof r.dtype, "%s", dtype);
    memcpy(r.layout, layout, 3);
    gemm_epi_name(&g->epi, r.epi, sizeof r.epi);
    (void)gt_db_merge(&cr->c->db, &r, NULL); /* out of memory: a row fewer */
    gemm_report_seen(cr->rep, g, layout, dtype, cfg);
}

ait_status gt_capture_run(gt_capture *c, const graph *g, tensor *const *inputs, ait_error *e)
{
    const backend *b = backend_find("native");
    if (!b) return err_set(e, AIT_E_INTERNAL, "no native backend");
    c->db.tuned = false;
    if (!c->rep) c->rep = gemm_report_new(&c->log, AIT_LOG_INFO);
    cap_run cr = {c, c->rep};
    candidate_cfg cfg = {.backend = "native", .threads = c->threads > 0 ? c->threads : 1,
                         .gemm = c->tuned, .gemm_seen = seen, .gemm_seen_user = &cr};
    built *bm;
    TRY(b->build(b, g, &cfg, &bm, e));
    tensor *outs[1024];
    ait_status s = g->n_outputs > 1024 ? err_set(e, AIT_E_UNSUPPORTED, "more than 1024 outputs")
                                       : b->run(bm, inputs, outs, e);
    b->free(bm);
    return s;
}

void gt_capture_free(gt_capture *c)
{
    gt_db_free(&c->db);
    gemm_report_free(c->rep);
    c->rep = NULL;
}

ait_status gt_sweep_parse(const char *spec, int64_t *ms, int max, int *n, ait_error *e)
{
    *n = 0;
    long long lo, hi;
    int used = 0;
    if (!strncmp(spec, "pow2:", 5)) {
        if (sscanf(spec + 5, "%lld-%lld%n", &lo, &hi, &used) != 2 || spec[5 + used] || lo < 1 ||
            hi < lo || hi > (1ll << 30))
            return err_set(e, AIT_E_INVALID_ARG, "--m-sweep '%s': want pow2:LO-HI (1 <= LO <= HI), e.g. pow2:1-8192", spec);
        for (long long m = 1; m <= hi && *n < max; m *= 2)
            if (m >= lo) ms[(*n)++] = m;
        return AIT_OK;
    }
    const char *p = spec;
    while (*p) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 1 || v > (1ll << 30) || (*end && *end != ','))
            return err_set(e, AIT_E_INVALID_ARG, "--m-sweep '%s': want pow2:LO-HI or a list of M like 1,8,64", spec);
        if (*n == max) return err_set(e, AIT_E_INVALID_ARG, "--m-sweep: more than %d values", max);
        ms[(*n)++] = v;
        p = *end ? end + 1 : end;
    }
    if (!*n) return err_set(e, AIT_E_INVALID_ARG, "--m-sweep: no values");
    return AIT_OK;
}

ait_status gt_sweep(const gt_db *in, const int64_t *ms, int n, gt_db *out, ait_error *e)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < in->n; i++) TRY(gt_db_merge(out, &in->rows[i], e));
    for (int i = 0; i < in->n; i++)
        for (int j = 0; j < n; j++) {
            gt_row r = in->rows[i];
            r.m = ms[j];
            r.count = 0;
            r.line = 0;
            TRY(gt_db_merge(out, &r, e));
        }
    return AIT_OK;
}

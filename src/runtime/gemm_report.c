/* Each GEMM shape's config, said once (gemm_report.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gemm_report.h"

/* What makes a call another line: the shape, layout, what the epilogue
 * does (not its operands) and the config (its id, a string of the tuned
 * table, is compared by address: one table, one string per row). */
typedef struct key {
    int64_t m, n, k;
    char layout[2];
    char dtype[12];
    bool scaled, res, res_after;
    int bias_mode, act;
    const char *cfg;
} key;

struct gemm_report {
    logger lg;
    ait_log_level level;
    pthread_mutex_t lock;
    int n, cap;
    key *keys;
};

gemm_report *gemm_report_new(const logger *lg, ait_log_level level)
{
    if (!log_on(lg)) return NULL;
    gemm_report *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->lg = *lg;
    r->level = level;
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return NULL;
    }
    return r;
}

void gemm_report_free(gemm_report *r)
{
    if (!r) return;
    pthread_mutex_destroy(&r->lock);
    free(r->keys);
    free(r);
}

void gemm_epi_name(const gemm_epi *ep, char *buf, size_t n)
{
    static const char *const acts[GEMM_ACT_COUNT] = {
        "", "relu", "clip", "sigmoid", "tanh", "gelu", "gelu_tanh", "silu", "hardswish", "hardsigmoid", "leaky"};
    size_t k = 0;
    buf[0] = '\0';
#define ADD(s) k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%s", k ? "+" : "", s)
    if (ep->scaled) ADD("scale");
    if (ep->bias_mode == GEMM_BIAS_ROW) ADD("bias_row");
    if (ep->bias_mode == GEMM_BIAS_COL) ADD("bias");
    if (ep->res && !ep->res_after) ADD("res");
    if (ep->act > GEMM_ACT_NONE && ep->act < GEMM_ACT_COUNT) ADD(acts[ep->act]);
    if (ep->res && ep->res_after) ADD("res");
#undef ADD
    if (!buf[0]) snprintf(buf, n, "none");
}

void gemm_report_seen(void *user, const gemm_args *g, const char *layout, const char *dtype,
                      const char *cfg)
{
    gemm_report *r = user;
    if (!r) return;
    key kk;
    memset(&kk, 0, sizeof kk); /* padding too: keys are compared whole */
    kk.m = g->m, kk.n = g->n, kk.k = g->k;
    memcpy(kk.layout, layout, 2);
    snprintf(kk.dtype, sizeof kk.dtype, "%s", dtype ? dtype : "f32");
    kk.scaled = g->epi.scaled, kk.res = g->epi.res != NULL, kk.res_after = g->epi.res_after;
    kk.bias_mode = g->epi.bias_mode, kk.act = (int)g->epi.act;
    kk.cfg = cfg ? cfg : "";
    pthread_mutex_lock(&r->lock);
    bool fresh = true;
    for (int i = 0; i < r->n && fresh; i++) fresh = memcmp(&r->keys[i], &kk, sizeof kk) != 0;
    if (fresh && r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        key *ks = cap < (1 << 20) ? realloc(r->keys, sizeof *ks * (size_t)cap) : NULL;
        if (ks) r->keys = ks, r->cap = cap;
    }
    if (fresh && r->n < r->cap) r->keys[r->n++] = kk;
    pthread_mutex_unlock(&r->lock);
    if (fresh) {
        char epi[64];
        gemm_epi_name(&g->epi, epi, sizeof epi);
        log_msg(&r->lg, r->level, "gemm M=%lld N=%lld K=%lld %s %.2s %s: %s%s", (long long)g->m,
                (long long)g->n, (long long)g->k, kk.dtype, layout, epi,
                kk.cfg[0] ? "tuned config " : "default config (not tuned)", kk.cfg);
    }
}

/* Tuned GEMM configs per shape (gemm_tuned.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm_tuned.h"

void gemm_layout_of(const gemm_args *g, char out[3])
{
    out[0] = g->pa ? 'p' : g->csa == 1 && !(g->m > 1 && g->rsa == 1) ? 'n' : 't';
    out[1] = g->pb ? 'p' : g->csb == 1 && !(g->k > 1 && g->rsb == 1) ? 'n' : 't';
    out[2] = '\0';
}

const gemm_tuned_row *gemm_tuned_find(const gemm_tuned *t, int64_t m, int64_t n, int64_t k,
                                      const char *layout, bool *exact)
{
    const gemm_tuned_row *best = NULL;
    double bd = 0;
    *exact = false;
    for (int i = 0; t && i < t->n; i++) {
        const gemm_tuned_row *r = &t->rows[i];
        if (r->n != n || r->k != k || strcmp(r->layout, layout) != 0) continue;
        if (r->m == m) {
            *exact = true;
            return r;
        }
        if ((r->m <= GEMM_SKINNY_M) != (m <= GEMM_SKINNY_M)) continue;
        double d = fabs(log2((double)r->m) - log2((double)m));
        if (!best || d < bd || (d == bd && r->m > best->m)) {
            best = r;
            bd = d;
        }
    }
    return best;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

ait_status gemm_tuned_add(gemm_tuned *t, const gemm_tuned_row *r, ait_error *e)
{
    gemm_tuned_row *rows = realloc(t->rows, sizeof *rows * (size_t)(t->n + 1));
    if (!rows) return err_set(e, AIT_E_NOMEM, "out of memory for tuned GEMM rows");
    t->rows = rows;
    rows[t->n++] = *r;
    if (!t->hash) t->hash = 14695981039346656037ull;
    int64_t key[3] = {r->m, r->n, r->k};
    t->hash = fnv(fnv(fnv(t->hash, key, sizeof key), r->layout, 2), r->id, strlen(r->id));
    return AIT_OK;
}

void gemm_tuned_free(gemm_tuned *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}

/* Encoded: "AITGEMM1", count, then per row m, n, k, 8 ints and the
 * kernel's name in 24 bytes, the layout in 4. */
typedef struct enc_row {
    int64_t m, n, k;
    int32_t kc, mc, nc, pack_a, order, splitk, threads, pad;
    char kern[24];
    char layout[8];
} enc_row;

ait_status gemm_tuned_encode(const gemm_tuned *t, void **out, size_t *len, ait_error *e)
{
    size_t bytes = 16 + sizeof(enc_row) * (size_t)t->n;
    char *b = calloc(1, bytes);
    if (!b) return err_set(e, AIT_E_NOMEM, "out of memory");
    memcpy(b, "AITGEMM1", 8);
    int64_t n = t->n;
    memcpy(b + 8, &n, 8);
    for (int i = 0; i < t->n; i++) {
        const gemm_tuned_row *r = &t->rows[i];
        enc_row w = {.m = r->m, .n = r->n, .k = r->k, .kc = r->cfg.kc, .mc = r->cfg.mc,
                     .nc = r->cfg.nc, .pack_a = r->cfg.pack_a, .order = r->cfg.order,
                     .splitk = r->cfg.splitk, .threads = r->cfg.threads};
        if (r->cfg.kern) snprintf(w.kern, sizeof w.kern, "%s", gemm_kernel_name(r->cfg.kern));
        memcpy(w.layout, r->layout, 2);
        memcpy(b + 16 + sizeof w * (size_t)i, &w, sizeof w);
    }
    *out = b;
    *len = bytes;
    return AIT_OK;
}

ait_status gemm_tuned_decode(const void *buf, size_t len, gemm_tuned *out, ait_error *e)
{
    memset(out, 0, sizeof *out);
    int64_t n;
    if (len < 16 || memcmp(buf, "AITGEMM1", 8) != 0)
        return err_set(e, AIT_E_PARSE, "tuned GEMM configs: not a config blob");
    memcpy(&n, (const char *)buf + 8, 8);
    if (n < 0 || n > 1 << 20 || (size_t)n * sizeof(enc_row) != len - 16)
        return err_set(e, AIT_E_PARSE, "tuned GEMM configs: %zu bytes do not hold %lld rows", len,
                       (long long)n);
    for (int64_t i = 0; i < n; i++) {
        enc_row w;
        memcpy(&w, (const char *)buf + 16 + sizeof w * (size_t)i, sizeof w);
        gemm_tuned_row r = {.m = w.m, .n = w.n, .k = w.k};
        r.cfg = (gemm_config){.kc = w.kc, .mc = w.mc, .nc = w.nc, .pack_a = w.pack_a,
                              .order = w.order, .splitk = w.splitk, .threads = w.threads};
        w.kern[sizeof w.kern - 1] = '\0';
        char why[200];
        if (w.kern[0] && !(r.cfg.kern = gemm_kernel_find(w.kern, why, sizeof why))) {
            gemm_tuned_free(out);
            return err_set(e, AIT_E_UNSUPPORTED, "tuned GEMM configs: %s", why);
        }
        if (w.m < 1 || w.n < 1 || w.k < 1 || w.kc < 0 || w.mc < 0 || w.nc < 0 || w.pack_a < 0 ||
            w.pack_a > GEMM_PACKA_OFF || w.order < 0 || w.order > 1 || w.splitk < 0 ||
            w.splitk > 64 || w.threads < 0 || w.threads > 1024 || !strchr("ntp", w.layout[0]) ||
            !strchr("ntp", w.layout[1]) || !w.layout[0] || !w.layout[1]) {
            gemm_tuned_free(out);
            return err_set(e, AIT_E_PARSE, "tuned GEMM configs: row %lld is out of range", (long long)i);
        }
        memcpy(r.layout, w.layout, 2);
        gemm_config_id(&r.cfg, NULL, r.id, sizeof r.id);
        TRY(gemm_tuned_add(out, &r, e));
    }
    return AIT_OK;
}

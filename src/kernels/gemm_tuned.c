/* Tuned GEMM configs per shape (gemm_tuned.h). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm_tuned.h"

bool gemm_dtype_parse(const char *s, gemm_dtype *out)
{
    *out = (gemm_dtype){.scheme = -1, .group = 0};
    if (!strcmp(s, "f32")) return true;
    if (!strcmp(s, "u8s8") || !strcmp(s, "s8s8")) {
        *out = (gemm_dtype){.scheme = QG_INT8DQ, .a_int = s[0] == 'u' ? -1 : 1};
        return true;
    }
    /* static int8 (`--quant int8`) runs int8dq's GEMM and is captured under that name */
    if (!strcmp(s, "int8")) return false;
    out->scheme = qg_scheme_find(s, &out->group);
    if (out->scheme != QG_INT4WO) out->group = 0;
    return out->scheme >= 0;
}

void gemm_layout_of(const gemm_args *g, char out[3])
{
    out[0] = g->pa ? 'p' : g->csa == 1 && !(g->m > 1 && g->rsa == 1) ? 'n' : 't';
    out[1] = g->pb ? 'p' : g->csb == 1 && !(g->k > 1 && g->rsb == 1) ? 'n' : 't';
    out[2] = '\0';
}

const gemm_tuned_row *gemm_tuned_find(const gemm_tuned *t, int64_t m, int64_t n, int64_t k,
                                      const char *dtype, const char *layout, bool *exact)
{
    const gemm_tuned_row *best = NULL;
    double bd = 0;
    *exact = false;
    for (int i = 0; t && i < t->n; i++) {
        const gemm_tuned_row *r = &t->rows[i];
        if (r->n != n || r->k != k || strcmp(r->layout, layout) != 0 || strcmp(r->dtype, dtype) != 0)
            continue;
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
    gemm_tuned_row *w = &rows[t->n++];
    *w = *r;
    if (!w->dtype[0]) snprintf(w->dtype, sizeof w->dtype, "f32");
    if (strcmp(w->dtype, "f32") != 0)
        snprintf(w->id, sizeof w->id, "%s.%s.t%d", w->dtype, w->qkern, w->cfg.threads);
    if (!t->hash) t->hash = 14695981039346656037ull;
    int64_t key[3] = {w->m, w->n, w->k};
    t->hash = fnv(fnv(fnv(fnv(t->hash, key, sizeof key), w->layout, 2), w->dtype, strlen(w->dtype)),
                  w->id, strlen(w->id));
    return AIT_OK;
}

void gemm_tuned_free(gemm_tuned *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}

/* Encoded: "AITGEMM2", count, then per row m, n, k, 8 ints, the kernel's
 * name in 24 bytes (a quantised row's: qkern), the layout in 8, the dtype
 * in 16. "AITGEMM1" blobs (older artifacts) have rows without the dtype:
 * f32 rows. */
typedef struct enc_row {
    int64_t m, n, k;
    int32_t kc, mc, nc, pack_a, order, splitk, threads, skinny_nv; /* skinny_nv: 0 in AITGEMM1 */
    char kern[24];
    char layout[8];
    char dtype[16];
} enc_row;
#define ENC_ROW1 offsetof(enc_row, dtype)

ait_status gemm_tuned_encode(const gemm_tuned *t, void **out, size_t *len, ait_error *e)
{
    size_t bytes = 16 + sizeof(enc_row) * (size_t)t->n;
    char *b = calloc(1, bytes);
    if (!b) return err_set(e, AIT_E_NOMEM, "out of memory");
    memcpy(b, "AITGEMM2", 8);
    int64_t n = t->n;
    memcpy(b + 8, &n, 8);
    for (int i = 0; i < t->n; i++) {
        const gemm_tuned_row *r = &t->rows[i];
        enc_row w = {.m = r->m, .n = r->n, .k = r->k, .kc = r->cfg.kc, .mc = r->cfg.mc,
                     .nc = r->cfg.nc, .pack_a = r->cfg.pack_a, .order = r->cfg.order,
                     .splitk = r->cfg.splitk, .threads = r->cfg.threads,
                     .skinny_nv = r->cfg.skinny_nv};
        /* the kernel the id names (a 'p' row's, left to the packing, too:
         * decoded, the same id and hash) */
        if (r->cfg.kern) snprintf(w.kern, sizeof w.kern, "%s", gemm_kernel_name(r->cfg.kern));
        else if (r->qkern[0]) snprintf(w.kern, sizeof w.kern, "%s", r->qkern);
        else snprintf(w.kern, sizeof w.kern, "%.*s", (int)strcspn(r->id, "."), r->id);
        memcpy(w.layout, r->layout, 2);
        snprintf(w.dtype, sizeof w.dtype, "%s", r->dtype[0] ? r->dtype : "f32");
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
    bool v1 = len >= 16 && memcmp(buf, "AITGEMM1", 8) == 0;
    if (len < 16 || (!v1 && memcmp(buf, "AITGEMM2", 8) != 0))
        return err_set(e, AIT_E_PARSE, "tuned GEMM configs: not a config blob");
    size_t rb = v1 ? ENC_ROW1 : sizeof(enc_row);
    memcpy(&n, (const char *)buf + 8, 8);
    if (n < 0 || n > 1 << 20 || (size_t)n * rb != len - 16)
        return err_set(e, AIT_E_PARSE, "tuned GEMM configs: %zu bytes do not hold %lld rows", len,
                       (long long)n);
    for (int64_t i = 0; i < n; i++) {
        enc_row w = {.dtype = "f32"};
        memcpy(&w, (const char *)buf + 16 + rb * (size_t)i, rb);
        gemm_tuned_row r = {.m = w.m, .n = w.n, .k = w.k};
        r.cfg = (gemm_config){.kc = w.kc, .mc = w.mc, .nc = w.nc, .pack_a = w.pack_a,
                              .order = w.order, .splitk = w.splitk, .threads = w.threads,
                              .skinny_nv = w.skinny_nv};
        w.kern[sizeof w.kern - 1] = '\0';
        w.dtype[sizeof w.dtype - 1] = '\0';
        gemm_dtype dt;
        if (!gemm_dtype_parse(w.dtype, &dt)) {
            gemm_tuned_free(out);
            return err_set(e, AIT_E_PARSE, "tuned GEMM configs: row %lld has no dtype ait tunes", (long long)i);
        }
        snprintf(r.dtype, sizeof r.dtype, "%s", w.dtype);
        char why[200];
        if (dt.scheme >= 0) /* qgemm picks its kernel by CPUID: the name is the tune's, for the id */
            snprintf(r.qkern, sizeof r.qkern, "%s", w.kern);
        else if (w.kern[0] && !(r.cfg.kern = gemm_kernel_find(w.kern, why, sizeof why))) {
            gemm_tuned_free(out);
            return err_set(e, AIT_E_UNSUPPORTED, "tuned GEMM configs: %s", why);
        }
        if (w.m < 1 || w.n < 1 || w.k < 1 || w.kc < 0 || w.mc < 0 || w.nc < 0 || w.pack_a < 0 ||
            w.pack_a > GEMM_PACKA_OFF || w.order < 0 || w.order > GEMM_ORDER_MAX || w.splitk < 0 ||
            w.splitk > 64 || w.threads < 0 || w.threads > 1024 || w.skinny_nv < 0 || w.skinny_nv > 4 || !strchr("ntp", w.layout[0]) ||
            !strchr("ntp", w.layout[1]) || !w.layout[0] || !w.layout[1]) {
            gemm_tuned_free(out);
            return err_set(e, AIT_E_PARSE, "tuned GEMM configs: row %lld is out of range", (long long)i);
        }
        memcpy(r.layout, w.layout, 2);
        if (dt.scheme < 0) gemm_config_id(&r.cfg, NULL, r.id, sizeof r.id);
        TRY(gemm_tuned_add(out, &r, e));
    }
    return AIT_OK;
}

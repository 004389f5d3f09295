/* The per-shape GEMM database (db.h): CSV rows in and out, merge, lookup. */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cpu.h"
#include "gemmtune/db.h"
#include "io/csv.h"
#include "io/publish.h"
#include "kernels/qgemm.h"

void gt_cpu_this(gt_cpu *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->vendor, sizeof c->vendor, "unknown");
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, cc, d;
    if (__get_cpuid(0, &a, &b, &cc, &d)) {
        memcpy(c->vendor, &b, 4);
        memcpy(c->vendor + 4, &d, 4);
        memcpy(c->vendor + 8, &cc, 4);
        c->vendor[12] = '\0';
    }
    if (__get_cpuid(1, &a, &b, &cc, &d)) {
        int fam = (a >> 8) & 15, mod = (a >> 4) & 15;
        if (fam == 15) fam += (a >> 20) & 255;
        if (fam >= 6) mod += ((a >> 16) & 15) << 4;
        c->family = fam;
        c->model = mod;
    }
#endif
    cpu_features(c->features, sizeof c->features);
}

bool gt_cpu_same(const gt_cpu *a, const gt_cpu *b)
{
    return !strcmp(a->vendor, b->vendor) && a->family == b->family && a->model == b->model &&
           !strcmp(a->features, b->features);
}

/* ---- columns ----------------------------------------------------------------- */

enum { C_VENDOR, C_FAMILY, C_MODEL, C_FEATURES, C_M, C_N, C_K, C_DTYPE, C_LAYOUT, C_EPI, C_COUNT,
       C_KERNEL, C_KC, C_MC, C_NC, C_PACKA, C_ORDER, C_SPLITK, C_THREADS, C_US, C_GFLOPS, C_GBS,
       C_ERR, C_DEFUS, C_SNV, C_CLOCK, C_N_COLS };
static const char *const col_names[C_N_COLS] = {
    "vendor", "family", "model", "features", "m", "n", "k", "dtype", "layout", "epilogue", "count",
    "kernel", "kc", "mc", "nc", "pack_a", "order", "splitk", "threads", "us", "gflops", "gbs",
    "err_ratio", "default_us", "skinny_nv", "clock"};
/* Which columns each kind has (tuned: all but count; untuned: m..count). */
static bool has_col(int c, bool tuned)
{
    return tuned ? c != C_COUNT : c >= C_M && c <= C_COUNT;
}

const char *gt_header(bool tuned)
{
    static char h[2][400];
    char *s = h[tuned];
    if (!s[0]) {
        size_t k = 0;
        for (int c = 0; c < C_N_COLS; c++)
            if (has_col(c, tuned)) k += (size_t)snprintf(s + k, sizeof h[0] - k, "%s%s", k ? "," : "", col_names[c]);
    }
    return s;
}

typedef struct rd {
    const csv *c;
    int at[C_N_COLS]; /* field index of each column */
    ait_error *e;
} rd;

static const char *fld(const rd *r, int col) { return r->at[col] >= 0 ? r->c->f[r->at[col]] : ""; }

static ait_status bad(const rd *r, int col, const char *what)
{
    return err_set(r->e, AIT_E_PARSE, "%s:%d: column %s: '%s' %s", r->c->name, r->c->row_line,
                   col_names[col], fld(r, col), what);
}

static ait_status get_i64(const rd *r, int col, int64_t lo, int64_t hi, int64_t *out)
{
    const char *s = fld(r, col);
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno) return bad(r, col, "is not an integer");
    if (v < lo || v > hi) {
        char why[96];
        snprintf(why, sizeof why, "is out of range (%lld to %lld)", (long long)lo, (long long)hi);
        return bad(r, col, why);
    }
    *out = v;
    return AIT_OK;
}

static ait_status get_int(const rd *r, int col, int lo, int hi, int *out)
{
    int64_t v;
    TRY(get_i64(r, col, lo, hi, &v));
    *out = (int)v;
    return AIT_OK;
}

static ait_status get_dbl(const rd *r, int col, double *out)
{
    const char *s = fld(r, col);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || isnan(v) || v < 0) return bad(r, col, "is not a number >= 0");
    *out = v;
    return AIT_OK;
}

static ait_status get_str(const rd *r, int col, char *out, size_t n)
{
    const char *s = fld(r, col);
    if (strlen(s) >= n) return bad(r, col, "is too long");
    memcpy(out, s, strlen(s) + 1);
    return AIT_OK;
}

static ait_status row_read(const rd *r, bool tuned, gt_row *w)
{
    memset(w, 0, sizeof *w);
    w->line = r->c->row_line;
    const int64_t big = (int64_t)1 << 40;
    TRY(get_i64(r, C_M, 1, big, &w->m));
    TRY(get_i64(r, C_N, 1, big, &w->n));
    TRY(get_i64(r, C_K, 1, big, &w->k));
    int64_t p;
    if (__builtin_mul_overflow(w->m, w->k, &p) || __builtin_mul_overflow(w->k, w->n, &p) ||
        __builtin_mul_overflow(w->m, w->n, &p) || __builtin_mul_overflow(p, w->k, &p) ||
        p > (int64_t)1 << 50)
        return err_set(r->e, AIT_E_OVERFLOW, "%s:%d: columns m, n, k: %lld x %lld x %lld is too large",
                       r->c->name, r->c->row_line, (long long)w->m, (long long)w->n, (long long)w->k);
    TRY(get_str(r, C_DTYPE, w->dtype, sizeof w->dtype));
    gemm_dtype dt;
    if (!gemm_dtype_parse(w->dtype, &dt))
        return bad(r, C_DTYPE, "is not a dtype ait tunes (f32, bf16, int8dq, int8wo, int4wo, "
                               "int4wo-64, int4wo-128, fp16, u8s8, s8s8)");
    TRY(get_str(r, C_LAYOUT, w->layout, sizeof w->layout));
    if (strlen(w->layout) != 2 || !strchr("ntp", w->layout[0]) || !strchr("ntp", w->layout[1]))
        return bad(r, C_LAYOUT, "is not a layout (two of n, t, p: A's then B's)");
    TRY(get_str(r, C_EPI, w->epi, sizeof w->epi));
    if (!tuned) {
        w->count = 1;
        if (fld(r, C_COUNT)[0]) TRY(get_i64(r, C_COUNT, 0, big, &w->count));
        return AIT_OK;
    }
    TRY(get_str(r, C_VENDOR, w->cpu.vendor, sizeof w->cpu.vendor));
    TRY(get_int(r, C_FAMILY, 0, 1 << 20, &w->cpu.family));
    TRY(get_int(r, C_MODEL, 0, 1 << 20, &w->cpu.model));
    TRY(get_str(r, C_FEATURES, w->cpu.features, sizeof w->cpu.features));
    TRY(get_str(r, C_KERNEL, w->kernel, sizeof w->kernel));
    if (!w->kernel[0]) return bad(r, C_KERNEL, "is empty");
    TRY(get_int(r, C_KC, 0, 1 << 16, &w->cfg.kc));
    TRY(get_int(r, C_MC, 0, 1 << 16, &w->cfg.mc));
    TRY(get_int(r, C_NC, 0, 1 << 20, &w->cfg.nc));
    TRY(get_int(r, C_PACKA, 0, GEMM_PACKA_OFF, &w->cfg.pack_a));
    TRY(get_int(r, C_ORDER, 0, GEMM_ORDER_MAX, &w->cfg.order));
    TRY(get_int(r, C_SPLITK, 0, 64, &w->cfg.splitk));
    TRY(get_int(r, C_THREADS, 0, 1024, &w->cfg.threads));
    if (fld(r, C_SNV)[0]) TRY(get_int(r, C_SNV, 0, 4, &w->cfg.skinny_nv)); /* optional: older files lack it */
    TRY(get_dbl(r, C_US, &w->us));
    TRY(get_dbl(r, C_GFLOPS, &w->gflops));
    TRY(get_dbl(r, C_GBS, &w->gbs));
    TRY(get_dbl(r, C_ERR, &w->err_ratio));
    TRY(get_dbl(r, C_DEFUS, &w->default_us));
    const char *clk = fld(r, C_CLOCK); /* optional: older files lack it (the wall clock) */
    if (!strcmp(clk, "cpu")) w->cpu_clock = true;
    else if (clk[0] && strcmp(clk, "wall") != 0) return bad(r, C_CLOCK, "is not a clock (wall or cpu)");
    if (w->err_ratio > 1) return bad(r, C_ERR, "is above 1");
    /* A native kernel this CPU runs: its row can be used (else a reference point). */
    if (w->layout[0] != 'p' && w->layout[1] != 'p' && dt.scheme < 0) w->cfg.kern = gemm_kernel_find(w->kernel, NULL, 0);
    return AIT_OK;
}

bool gt_same_key(const gt_row *a, const gt_row *b, bool tuned)
{
    return a->m == b->m && a->n == b->n && a->k == b->k && !strcmp(a->dtype, b->dtype) &&
           !strcmp(a->layout, b->layout) && !strcmp(a->epi, b->epi) &&
           (!tuned || gt_cpu_same(&a->cpu, &b->cpu));
}

static ait_status db_push(gt_db *db, const gt_row *r, ait_error *e)
{
    if (db->n == db->cap) {
        int cap = db->cap ? db->cap * 2 : 64;
        gt_row *rows = realloc(db->rows, sizeof *rows * (size_t)cap);
        if (!rows) return err_set(e, AIT_E_NOMEM, "out of memory for GEMM rows");
        db->rows = rows;
        db->cap = cap;
    }
    db->rows[db->n++] = *r;
    return AIT_OK;
}

static ait_status load(csv *c, bool tuned, gt_db *db, ait_error *e)
{
    memset(db, 0, sizeof *db);
    db->tuned = tuned;
    bool got;
    TRY(csv_next(c, &got, e));
    if (!got) return AIT_OK; /* empty: no rows yet */
    rd r = {.c = c, .e = e};
    for (int col = 0; col < C_N_COLS; col++) {
        r.at[col] = -1;
        for (int f = 0; f < c->n; f++)
            if (!strcmp(c->f[f], col_names[col])) r.at[col] = f;
        if (r.at[col] < 0 && has_col(col, tuned) && col != C_COUNT && col != C_EPI && col != C_SNV &&
            col != C_CLOCK)
            return err_set(e, AIT_E_PARSE, "%s:%d: no column '%s' in the header (a %s GEMM CSV has %s)",
                           c->name, c->row_line, col_names[col], tuned ? "tuned" : "untuned",
                           gt_header(tuned));
    }
    for (;;) {
        TRY(csv_next(c, &got, e));
        if (!got) break;
        for (int col = 0; col < C_N_COLS; col++)
            if (r.at[col] >= c->n && has_col(col, tuned))
                return err_set(e, AIT_E_PARSE, "%s:%d: %d fields, no column '%s'", c->name,
                               c->row_line, c->n, col_names[col]);
        gt_row w;
        TRY(row_read(&r, tuned, &w));
        for (int i = 0; i < db->n; i++)
            if (gt_same_key(&db->rows[i], &w, tuned))
                return err_set(e, AIT_E_PARSE, "%s:%d: the same shape as line %d (m, n, k, dtype, "
                               "layout, epilogue%s): merge files with `ait gemm merge`",
                               c->name, c->row_line, db->rows[i].line, tuned ? ", CPU" : "");
        TRY(db_push(db, &w, e));
    }
    return AIT_OK;
}

ait_status gt_db_load(const char *path, bool tuned, gt_db *db, ait_error *e)
{
    csv c;
    memset(db, 0, sizeof *db);
    TRY(csv_open(&c, path, e));
    ait_status s = load(&c, tuned, db, e);
    csv_close(&c);
    if (s != AIT_OK) gt_db_free(db);
    return s;
}

ait_status gt_db_load_mem(const char *name, const char *text, size_t len, bool tuned, gt_db *db,
                          ait_error *e)
{
    csv c;
    memset(db, 0, sizeof *db);
    TRY(csv_open_mem(&c, name, text, len, e));
    ait_status s = load(&c, tuned, db, e);
    csv_close(&c);
    if (s != AIT_OK) gt_db_free(db);
    return s;
}

void gt_db_free(gt_db *db)
{
    free(db->rows);
    memset(db, 0, sizeof *db);
}

int gt_row_format(const gt_row *r, bool tuned, char *buf, size_t n)
{
    char v[C_N_COLS][64];
    const char *f[C_N_COLS];
    int nf = 0;
    snprintf(v[C_FAMILY], 64, "%d", r->cpu.family);
    snprintf(v[C_MODEL], 64, "%d", r->cpu.model);
    snprintf(v[C_M], 64, "%lld", (long long)r->m);
    snprintf(v[C_N], 64, "%lld", (long long)r->n);
    snprintf(v[C_K], 64, "%lld", (long long)r->k);
    snprintf(v[C_COUNT], 64, "%lld", (long long)r->count);
    const int ints[] = {r->cfg.kc, r->cfg.mc, r->cfg.nc, r->cfg.pack_a, r->cfg.order, r->cfg.splitk,
                        r->cfg.threads};
    for (int i = 0; i < 7; i++) snprintf(v[C_KC + i], 64, "%d", ints[i]);
    const double dbl[] = {r->us, r->gflops, r->gbs, r->err_ratio, r->default_us};
    for (int i = 0; i < 5; i++) snprintf(v[C_US + i], 64, "%.6g", dbl[i]);
    snprintf(v[C_SNV], 64, "%d", r->cfg.skinny_nv);
    snprintf(v[C_CLOCK], 64, "%s", r->cpu_clock ? "cpu" : "wall");
    for (int c = 0; c < C_N_COLS; c++) {
        if (!has_col(c, tuned)) continue;
        f[nf++] = c == C_VENDOR ? r->cpu.vendor : c == C_FEATURES ? r->cpu.features
                : c == C_DTYPE  ? r->dtype
                : c == C_LAYOUT ? r->layout
                : c == C_EPI    ? r->epi
                : c == C_KERNEL ? r->kernel
                                : v[c];
    }
    return csv_format(buf, n, f, nf);
}

typedef struct body_arg {
    const gt_db *db;
} body_arg;

static int body(void *arg, int fd)
{
    const gt_db *db = ((body_arg *)arg)->db;
    char line[2048];
    int len = snprintf(line, sizeof line, "%s\n", gt_header(db->tuned));
    if (write(fd, line, (size_t)len) != len) return 0;
    for (int i = 0; i < db->n; i++) {
        len = gt_row_format(&db->rows[i], db->tuned, line, sizeof line);
        if (len < 0) {
            errno = ENAMETOOLONG;
            return 0;
        }
        if (write(fd, line, (size_t)len) != len) return 0;
    }
    return 1;
}

ait_status gt_db_save(const char *path, const gt_db *db, ait_error *e)
{
    char tmp[1][PUBLISH_PATH_MAX];
    body_arg a = {db};
    TRY(publish_stage(path, body, &a, tmp[0], e));
    const char *paths[1] = {path};
    return publish_commit(1, tmp, paths, e);
}

ait_status gt_db_append(const char *path, const gt_row *r, ait_error *e)
{
    char line[2048 + 400];
    int len = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return err_set(e, AIT_E_IO, "%s: %s", path, strerror(errno));
    off_t end = lseek(fd, 0, SEEK_END);
    if (end == 0) len = snprintf(line, sizeof line, "%s\n", gt_header(true));
    int n = gt_row_format(r, true, line + len, sizeof line - (size_t)len);
    ait_status s = AIT_OK;
    if (n < 0) s = err_set(e, AIT_E_INVALID_ARG, "%s: a row too long to write", path);
    else if (write(fd, line, (size_t)(len + n)) != len + n || fsync(fd) != 0)
        s = err_set(e, AIT_E_IO, "%s: %s", path, strerror(errno));
    close(fd);
    return s;
}

static bool failed(const gt_row *r) { return !strcmp(r->kernel, "failed"); }

/* A row the runtime can take: a float row whose kernel is the native
 * GEMM's (not a library's: a reference point), or a quantised row tuned on
 * the kernel qgemm picks here (not the portable one forced, nor one this
 * CPU lacks). */
static bool row_usable(const gt_row *r)
{
    gemm_dtype dt;
    if (!gemm_dtype_parse(r->dtype, &dt)) return false;
    if (dt.scheme >= 0) return !strcmp(r->kernel, qg_kernel_name(dt.scheme));
    return r->cfg.kern || ((r->layout[0] == 'p' || r->layout[1] == 'p') && gemm_kernel_find(r->kernel, NULL, 0));
}

ait_status gt_db_merge(gt_db *db, const gt_row *r, ait_error *e)
{
    for (int i = 0; i < db->n; i++) {
        gt_row *o = &db->rows[i];
        if (!gt_same_key(o, r, db->tuned)) continue;
        bool better = db->tuned ? (failed(o) && !failed(r)) || (!failed(r) && r->us < o->us)
                                : false;
        if (!db->tuned) o->count += r->count;
        if (better) *o = *r;
        return AIT_OK;
    }
    return db_push(db, r, e);
}

ait_status gt_db_tuned(const gt_db *db, const gt_cpu *cpu, gemm_tuned *out, int *skipped,
                       ait_error *e)
{
    memset(out, 0, sizeof *out);
    *skipped = 0;
    for (int i = 0; i < db->n; i++) {
        const gt_row *r = &db->rows[i];
        if (!gt_cpu_same(&r->cpu, cpu)) {
            ++*skipped;
            continue;
        }
        if (!row_usable(r) || failed(r)) continue;
        /* Several epilogues of one shape: the runtime keys without it, first wins. */
        bool dup = false;
        for (int j = 0; j < out->n && !dup; j++)
            dup = out->rows[j].m == r->m && out->rows[j].n == r->n && out->rows[j].k == r->k &&
                  !strcmp(out->rows[j].layout, r->layout) && !strcmp(out->rows[j].dtype, r->dtype);
        if (dup) continue;
        gemm_tuned_row t = {.m = r->m, .n = r->n, .k = r->k, .cfg = r->cfg};
        memcpy(t.layout, r->layout, 3);
        snprintf(t.dtype, sizeof t.dtype, "%s", r->dtype);
        if (strcmp(r->dtype, "f32") != 0) snprintf(t.qkern, sizeof t.qkern, "%s", r->kernel);
        else gemm_config_id(&t.cfg, gemm_kernel_find(r->kernel, NULL, 0), t.id, sizeof t.id);
        ait_status s = gemm_tuned_add(out, &t, e);
        if (s != AIT_OK) {
            gemm_tuned_free(out);
            return s;
        }
    }
    return AIT_OK;
}

ait_status gt_db_take(const char *path, const logger *lg, gemm_tuned *out, ait_error *e)
{
    gt_db db;
    memset(out, 0, sizeof *out);
    TRY(gt_db_load(path, true, &db, e));
    gt_cpu me;
    gt_cpu_this(&me);
    int skipped;
    ait_status s = gt_db_tuned(&db, &me, out, &skipped, e);
    if (s == AIT_OK && skipped)
        log_msg(lg, AIT_LOG_WARN, "%s: %d row%s of another CPU skipped (this one: %s family %d model %d)",
                path, skipped, skipped == 1 ? "" : "s", me.vendor, me.family, me.model);
    int quant = 0, lib = 0;
    for (int i = 0; s == AIT_OK && i < db.n; i++) {
        const gt_row *r = &db.rows[i];
        if (!gt_cpu_same(&r->cpu, &me) || failed(r) || row_usable(r)) continue;
        if (strcmp(r->dtype, "f32") != 0) quant++;
        else lib++;
    }
    if (s == AIT_OK && quant)
        log_msg(lg, AIT_LOG_WARN, "%s: %d quantised row%s tuned on a kernel qgemm does not pick here "
                "(the portable one, or one this CPU lacks): not used", path, quant, quant == 1 ? "" : "s");
    if (s == AIT_OK && lib)
        log_msg(lg, AIT_LOG_WARN, "%s: %d row%s whose kernel is not the native GEMM's (a library's, "
                "or one this CPU lacks): reference points, not used", path, lib, lib == 1 ? "" : "s");
    if (s == AIT_OK) {
        int nq = 0;
        for (int i = 0; i < out->n; i++) nq += strcmp(out->rows[i].dtype, "f32") != 0;
        log_msg(lg, AIT_LOG_INFO, "%s: %d tuned GEMM shape%s for this CPU (%d f32, %d quantised)", path,
                out->n, out->n == 1 ? "" : "s", out->n - nq, nq);
    }
    gt_db_free(&db);
    return s;
}

const gt_row *gt_db_lookup(const gt_db *db, const gt_cpu *cpu, int64_t m, int64_t n, int64_t k,
                           const char *dtype, const char *layout, bool *exact)
{
    gemm_tuned t;
    int skipped;
    *exact = false;
    if (gt_db_tuned(db, cpu, &t, &skipped, NULL) != AIT_OK) return NULL;
    const gemm_tuned_row *r = gemm_tuned_find(&t, m, n, k, dtype, layout, exact);
    const gt_row *out = NULL;
    for (int i = 0; r && i < db->n && !out; i++) {
        const gt_row *w = &db->rows[i];
        if (w->m == r->m && w->n == r->n && w->k == r->k && !strcmp(w->layout, r->layout) &&
            !strcmp(w->dtype, dtype) && gt_cpu_same(&w->cpu, cpu) && !failed(w))
            out = w;
    }
    gemm_tuned_free(&t);
    return out;
}

const char *const gt_size_class_names[4] = {"skinny (M<=16)", "small (M<=128)", "medium (M<=1024)",
                                             "large (M>1024)"};

int gt_size_class(int64_t m) { return m <= 16 ? 0 : m <= 128 ? 1 : m <= 1024 ? 2 : 3; }

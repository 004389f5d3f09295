/* `ait gemm`'s files: the CSV reader (good rows, quoted fields, malformed
 * rows with file:line errors, huge fields refused) and the per-shape GEMM
 * database (columns by name, bad values naming line and column, merge
 * keeping the best row, the lookup's exact and nearest-M rule, the
 * artifact encoding of tuned configs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gemmtune/db.h"
#include "gemmtune/queue.h"
#include "gemmtune/tune.h"
#include "io/csv.h"
#include "kernels/qgemm.h"

static void csv_ok(void **state)
{
    (void)state;
    const char *t = "a,b,c\r\n\n1,\"x,y\",\"say \"\"hi\"\"\"\n\"multi\nline\",,end";
    csv c;
    ait_error e = {0};
    bool got;
    assert_int_equal(csv_open_mem(&c, "t.csv", t, strlen(t), &e), AIT_OK);
    assert_int_equal(csv_next(&c, &got, &e), AIT_OK);
    assert_true(got);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.f[2], "c");
    assert_int_equal(csv_next(&c, &got, &e), AIT_OK);
    assert_int_equal(c.row_line, 3);
    assert_string_equal(c.f[1], "x,y");
    assert_string_equal(c.f[2], "say \"hi\"");
    assert_int_equal(csv_next(&c, &got, &e), AIT_OK);
    assert_int_equal(c.row_line, 4);
    assert_string_equal(c.f[0], "multi\nline");
    assert_string_equal(c.f[1], "");
    assert_string_equal(c.f[2], "end");
    assert_int_equal(csv_next(&c, &got, &e), AIT_OK);
    assert_false(got);
    csv_close(&c);
    /* the writer's line reads back */
    const char *f[] = {"plain", "a,b", "q\"t", ""};
    char buf[128];
    int n = csv_format(buf, sizeof buf, f, 4);
    assert_string_equal(buf, "plain,\"a,b\",\"q\"\"t\",\n");
    assert_int_equal(csv_open_mem(&c, "w", buf, (size_t)n, &e), AIT_OK);
    assert_int_equal(csv_next(&c, &got, &e), AIT_OK);
    assert_int_equal(c.n, 4);
    assert_string_equal(c.f[2], "q\"t");
    csv_close(&c);
    assert_int_equal(csv_format(buf, 8, f, 4), -1);
}

static void csv_bad_one(const char *text, size_t len, const char *want)
{
    csv c;
    ait_error e = {0};
    bool got = true;
    ait_status s = csv_open_mem(&c, "bad.csv", text, len, &e);
    while (s == AIT_OK && got) s = csv_next(&c, &got, &e);
    csv_close(&c);
    assert_int_equal(s, AIT_E_PARSE);
    printf("# %s\n", e.msg);
    if (!strstr(e.msg, want)) fail_msg("'%s' lacks '%s'", e.msg, want);
}

static void csv_bad(void **state)
{
    (void)state;
    csv_bad_one("a,b\n\"open,c\n", 12, "bad.csv:2: field 1: a quoted field never ends");
    csv_bad_one("a,b\nx\"y,c\n", 10, "bad.csv:2: field 1: a quote inside");
    csv_bad_one("a,b\n\"x\"y,c\n", 11, "bad.csv:2: field 1: text after the closing quote");
    csv_bad_one("a\0b\n", 4, "NUL byte");
    size_t big = CSV_FIELD_MAX + 10;
    char *t = malloc(big + 8);
    memset(t, 'x', big);
    memcpy(t + big, "\n", 2);
    csv_bad_one(t, big + 1, "bad.csv:1: field 1 is longer than 1024 bytes");
    t[0] = '"';
    memcpy(t + big, "\"\n", 3);
    csv_bad_one(t, big + 2, "longer than");
    free(t);
    char many[400];
    size_t k = 0;
    for (int i = 0; i < CSV_FIELDS_MAX + 2; i++) many[k++] = ',';
    many[k++] = '\n';
    csv_bad_one(many, k, "more than 64 fields");
}

static const char *HDR = "vendor,family,model,features,m,n,k,dtype,layout,epilogue,kernel,kc,mc,nc,"
                         "pack_a,order,splitk,threads,us,gflops,gbs,err_ratio,default_us\n";

static void db_bad_one(const char *body, bool tuned, const char *want)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", tuned ? HDR : "m,n,k,dtype,layout,epilogue,count\n", body);
    gt_db db;
    ait_error e = {0};
    ait_status s = gt_db_load_mem("db.csv", text, strlen(text), tuned, &db, &e);
    assert_int_not_equal(s, AIT_OK);
    printf("# %s\n", e.msg);
    if (!strstr(e.msg, want)) fail_msg("'%s' lacks '%s'", e.msg, want);
}

static void db_bad(void **state)
{
    (void)state;
    db_bad_one("4,5,x,f32,nn,none,1\n", false, "db.csv:2: column k: 'x' is not an integer");
    db_bad_one("4,0,6,f32,nn,none,1\n", false, "db.csv:2: column n: '0' is out of range");
    db_bad_one("-4,5,6,f32,nn,none,1\n", false, "column m: '-4' is out of range");
    db_bad_one("4,5,6,f16,nn,none,1\n", false, "column dtype: 'f16' is not a dtype");
    db_bad_one("4,5,6,f32,nn,none,1\n4,5,6,int8,np,none,1\n", false,
               "db.csv:3: column dtype: 'int8' is not a dtype ait tunes");
    db_bad_one("4,5,6,int4wo-16,np,none,1\n", false, "db.csv:2: column dtype: 'int4wo-16'");
    db_bad_one("4,5,6,f32,nq,none,1\n", false, "column layout");
    db_bad_one("1000000000,1000000000,1000000000,f32,nn,none,1\n", false, "too large");
    db_bad_one("4,5,6,f32,nn,none,1\n4,5,6,f32,nn,none,2\n", false, "db.csv:3: the same shape as line 2");
    db_bad_one("4,5\n", false, "db.csv:2: 2 fields, no column 'k'");
    gt_db db;
    ait_error e = {0};
    const char *t = "m,n,dtype,layout\n1,2,f32,nn\n";
    assert_int_equal(gt_db_load_mem("h.csv", t, strlen(t), false, &db, &e), AIT_E_PARSE);
    assert_non_null(strstr(e.msg, "h.csv:1: no column 'k'"));
    db_bad_one("GenuineIntel,6,85,avx2,4,5,6,f32,nn,none,avx2,0,0,0,0,0,1,1,abc,1,1,0,2\n", true,
               "column us: 'abc' is not a number");
    db_bad_one("GenuineIntel,6,85,avx2,4,5,6,f32,nn,none,avx2,0,0,0,7,0,1,1,3,1,1,0,2\n", true,
               "column pack_a: '7' is out of range");
}

static gt_row row(const gt_cpu *cpu, int64_t m, int64_t n, int64_t k, const char *kern, int kc,
                  double us)
{
    gt_row r = {.cpu = *cpu, .m = m, .n = n, .k = k, .us = us};
    snprintf(r.dtype, sizeof r.dtype, "f32");
    snprintf(r.layout, sizeof r.layout, "nn");
    snprintf(r.epi, sizeof r.epi, "none");
    snprintf(r.kernel, sizeof r.kernel, "%s", kern);
    r.cfg.kern = gemm_kernel_find(kern, NULL, 0);
    r.cfg.kc = kc;
    return r;
}

/* t through the artifact's bytes (*buf, *len) into *back: the same rows and hash. */
static void blob_round_trip(const gemm_tuned *t, void **buf, size_t *len, gemm_tuned *back)
{
    ait_error e = {0};
    assert_int_equal(gemm_tuned_encode(t, buf, len, &e), AIT_OK);
    assert_int_equal(gemm_tuned_decode(*buf, *len, back, &e), AIT_OK);
    assert_int_equal(back->n, t->n);
    assert_int_equal(back->hash, t->hash);
}

static void db_merge_lookup(void **state)
{
    (void)state;
    gt_cpu me, other;
    gt_cpu_this(&me);
    other = me;
    other.model++;
    gt_db db = {.tuned = true};
    ait_error e = {0};
    const int64_t ms[] = {1, 8, 64, 512};
    for (int i = 0; i < 4; i++) {
        gt_row r = row(&me, ms[i], 256, 128, "c", 64 + 8 * i, 10.0 * (i + 1));
        assert_int_equal(gt_db_merge(&db, &r, &e), AIT_OK);
    }
    gt_row slower = row(&me, 64, 256, 128, "c", 200, 99), faster = row(&me, 64, 256, 128, "c", 16, 1);
    assert_int_equal(gt_db_merge(&db, &slower, &e), AIT_OK);
    assert_int_equal(db.n, 4);
    assert_int_equal(gt_db_merge(&db, &faster, &e), AIT_OK);
    assert_int_equal(db.n, 4);
    gt_row alien = row(&other, 2, 256, 128, "c", 8, 0.5);
    assert_int_equal(gt_db_merge(&db, &alien, &e), AIT_OK);
    assert_int_equal(db.n, 5);
    bool exact;
    const gt_row *r = gt_db_lookup(&db, &me, 64, 256, 128, "f32", "nn", &exact);
    assert_non_null(r);
    assert_true(exact);
    assert_int_equal(r->cfg.kc, 16); /* the faster one */
    /* nearest M on a log2 scale: 100 is nearer 64 than 512; 200 nearer 512 (log2 1.32 vs 1.64) */
    r = gt_db_lookup(&db, &me, 100, 256, 128, "f32", "nn", &exact);
    assert_false(exact);
    assert_int_equal(r->m, 64);
    r = gt_db_lookup(&db, &me, 300, 256, 128, "f32", "nn", &exact);
    assert_int_equal(r->m, 512);
    /* a tie (M 2: 1 and 4 are as near; only 1 and 8 here: 1 is nearer) */
    r = gt_db_lookup(&db, &me, 2, 256, 128, "f32", "nn", &exact);
    assert_int_equal(r->m, 1); /* the other CPU's M 2 is never used */
    r = gt_db_lookup(&db, &me, 4000, 256, 128, "f32", "nn", &exact);
    assert_int_equal(r->m, 512);
    /* skinny and not do not mix: M 17 never takes M 8's config */
    r = gt_db_lookup(&db, &me, 17, 256, 128, "f32", "nn", &exact);
    assert_int_equal(r->m, 64);
    assert_null(gt_db_lookup(&db, &me, 64, 256, 129, "f32", "nn", &exact));
    assert_null(gt_db_lookup(&db, &me, 64, 256, 128, "f32", "nt", &exact));
    gemm_tuned t;
    int skipped;
    assert_int_equal(gt_db_tuned(&db, &me, &t, &skipped, &e), AIT_OK);
    assert_int_equal(skipped, 1);
    assert_int_equal(t.n, 4);
    /* round trip through the artifact's bytes */
    void *buf;
    size_t len;
    gemm_tuned back;
    blob_round_trip(&t, &buf, &len, &back);
    gemm_tuned_free(&back);
    assert_int_equal(gemm_tuned_decode(buf, len - 1, &back, &e), AIT_E_PARSE);
    free(buf);
    gemm_tuned_free(&t);
    /* rows through text and back (skinny_nv too) */
    db.rows[0].cfg.skinny_nv = 2;
    char line[1024];
    assert_true(gt_row_format(&db.rows[0], true, line, sizeof line) > 0);
    char text[2048];
    snprintf(text, sizeof text, "%s\n%s", gt_header(true), line);
    gt_db db2;
    assert_int_equal(gt_db_load_mem("rt", text, strlen(text), true, &db2, &e), AIT_OK);
    assert_int_equal(db2.n, 1);
    assert_true(gt_same_key(&db2.rows[0], &db.rows[0], true));
    assert_int_equal(db2.rows[0].cfg.kc, db.rows[0].cfg.kc);
    assert_int_equal(db2.rows[0].cfg.skinny_nv, 2);
    gt_db_free(&db2);
    gt_db_free(&db);
}

/* The dtypes a row can have: float32, qgemm's schemes, integer A. */
static void db_dtypes(void **state)
{
    (void)state;
    gemm_dtype d;
    assert_true(gemm_dtype_parse("f32", &d) && d.scheme == -1 && d.a_int == 0);
    assert_true(gemm_dtype_parse("int8dq", &d) && d.scheme == QG_INT8DQ && d.a_int == 0);
    assert_true(gemm_dtype_parse("int8wo", &d) && d.scheme == QG_INT8WO);
    assert_true(gemm_dtype_parse("int4wo", &d) && d.scheme == QG_INT4WO && d.group == 32);
    assert_true(gemm_dtype_parse("int4wo-128", &d) && d.scheme == QG_INT4WO && d.group == 128);
    assert_true(gemm_dtype_parse("bf16", &d) && d.scheme == QG_BF16);
    assert_true(gemm_dtype_parse("u8s8", &d) && d.scheme == QG_INT8DQ && d.a_int == -1);
    assert_true(gemm_dtype_parse("s8s8", &d) && d.scheme == QG_INT8DQ && d.a_int == 1);
    assert_false(gemm_dtype_parse("int8", &d));
    assert_false(gemm_dtype_parse("", &d));
    /* quantised rows load and join the runtime's table when tuned on the
     * kernel qgemm picks here (not on another, nor of another CPU), keyed
     * by dtype apart from a float row of the same shape; library rows
     * (reference points) stay out */
    gt_cpu me, other;
    gt_cpu_this(&me);
    other = me;
    other.model++;
    char q8[64], q4[64], u8[64];
    snprintf(q8, sizeof q8, "1,768,768,int8dq,np,none,%s", qg_kernel_name(QG_INT8DQ));
    snprintf(q4, sizeof q4, "4,512,256,int4wo-64,np,none,%s", qg_kernel_name(QG_INT4WO));
    snprintf(u8, sizeof u8, "8,256,256,u8s8,np,none,%s", qg_kernel_name(QG_INT8DQ));
    const char *const rows[] = {q8, q4, u8, "8,256,256,int8wo,np,none,avx999",
                                "8,256,256,f32,nn,none,blis", "8,256,256,f32,np,none,c", q8};
    char text[4096];
    int k = snprintf(text, sizeof text, "%s", HDR);
    for (int i = 0; i < 7; i++) {
        const gt_cpu *c = i == 6 ? &other : &me;
        k += snprintf(text + k, sizeof text - (size_t)k, "%s,%d,%d,\"%s\",%s,0,0,0,0,0,0,%d,10,1,1,0,12\n",
                      c->vendor, c->family, c->model, c->features, rows[i], i == 6 ? 2 : 1);
    }
    gt_db db;
    ait_error e = {0};
    assert_int_equal(gt_db_load_mem("q.csv", text, strlen(text), true, &db, &e), AIT_OK);
    assert_int_equal(db.n, 7);
    assert_string_equal(db.rows[1].dtype, "int4wo-64");
    gemm_tuned t;
    int skipped;
    assert_int_equal(gt_db_tuned(&db, &me, &t, &skipped, &e), AIT_OK);
    assert_int_equal(skipped, 1);
    assert_int_equal(t.n, 4); /* int8dq, int4wo-64, u8s8, the native f32 row */
    bool exact;
    const gemm_tuned_row *r = gemm_tuned_find(&t, 1, 768, 768, "int8dq", "np", &exact);
    assert_non_null(r);
    assert_true(exact);
    assert_int_equal(r->cfg.threads, 1);
    assert_null(r->cfg.kern);
    char id[96];
    snprintf(id, sizeof id, "int8dq.%s.t1", qg_kernel_name(QG_INT8DQ));
    assert_string_equal(r->id, id);
    assert_null(gemm_tuned_find(&t, 1, 768, 768, "f32", "np", &exact)); /* another dtype */
    assert_null(gemm_tuned_find(&t, 8, 256, 256, "int8wo", "np", &exact)); /* avx999: not picked here */
    /* the nearest-M rule per dtype: u8s8 at M 5 takes M 8's row, f32 at M 5 its own */
    r = gemm_tuned_find(&t, 5, 256, 256, "u8s8", "np", &exact);
    assert_non_null(r);
    assert_false(exact);
    assert_string_equal(r->dtype, "u8s8");
    r = gemm_tuned_find(&t, 5, 256, 256, "f32", "np", &exact);
    assert_non_null(r);
    assert_string_equal(r->dtype, "f32");
    assert_null(gemm_tuned_find(&t, 32, 512, 256, "int4wo-64", "np", &exact)); /* skinny M 4 only */
    assert_non_null(gt_db_lookup(&db, &me, 1, 768, 768, "int8dq", "np", &exact));
    assert_null(gt_db_lookup(&db, &me, 1, 768, 768, "f32", "np", &exact));
    assert_null(gt_db_lookup(&db, &me, 8, 256, 256, "f32", "nn", &exact)); /* blis: a reference point */
    /* the artifact's bytes keep the dtype, the threads and the id */
    void *buf;
    size_t len;
    gemm_tuned back;
    blob_round_trip(&t, &buf, &len, &back);
    r = gemm_tuned_find(&back, 1, 768, 768, "int8dq", "np", &exact);
    assert_non_null(r);
    assert_string_equal(r->id, id);
    /* a blob of the first format (rows without a dtype) decodes as f32 rows */
    size_t row1 = (len - 16) / 4 - 16;
    char *old = calloc(1, 16 + row1);
    memcpy(old, "AITGEMM1", 8);
    int64_t one = 1;
    memcpy(old + 8, &one, 8);
    for (int i = 0; i < 4; i++)
        if (!strcmp(t.rows[i].dtype, "f32")) memcpy(old + 16, (char *)buf + 16 + (row1 + 16) * (size_t)i, row1);
    gemm_tuned_free(&back);
    assert_int_equal(gemm_tuned_decode(old, 16 + row1, &back, &e), AIT_OK);
    assert_int_equal(back.n, 1);
    assert_string_equal(back.rows[0].dtype, "f32");
    assert_int_equal(back.rows[0].m, 8);
    gemm_tuned_free(&back);
    free(old);
    free(buf);
    gemm_tuned_free(&t);
    gt_db_free(&db);
}

/* The clock column: "cpu" and "wall" rows parse, an older file without
 * the column reads as wall, anything else is refused naming line and
 * column; the flag survives text, merge and the runtime's table. */
static void db_clock(void **state)
{
    (void)state;
    gt_cpu me;
    gt_cpu_this(&me);
    char text[4096];
    const char *clk[] = {"cpu", "wall", ""};
    int k = snprintf(text, sizeof text, "%s", gt_header(true));
    for (int i = 0; i < 3; i++)
        k += snprintf(text + k, sizeof text - (size_t)k,
                      "\n%s,%d,%d,\"%s\",%d,256,256,f32,nn,none,%s,0,0,0,0,0,0,1,10,1,1,0,12,0,%s",
                      me.vendor, me.family, me.model, me.features, 16 << i,
                      gemm_kernel_name(gemm_kernel_best()), clk[i]);
    gt_db db;
    ait_error e = {0};
    assert_int_equal(gt_db_load_mem("c.csv", text, strlen(text), true, &db, &e), AIT_OK);
    assert_int_equal(db.n, 3);
    assert_true(db.rows[0].cpu_clock);
    assert_false(db.rows[1].cpu_clock);
    assert_false(db.rows[2].cpu_clock);
    char line[1024];
    assert_true(gt_row_format(&db.rows[0], true, line, sizeof line) > 0);
    assert_non_null(strstr(line, ",cpu"));
    gt_db merged = {.tuned = true};
    for (int i = 0; i < 3; i++) assert_int_equal(gt_db_merge(&merged, &db.rows[i], &e), AIT_OK);
    assert_int_equal(merged.n, 3);
    assert_true(merged.rows[0].cpu_clock);
    gemm_tuned t;
    int skipped;
    assert_int_equal(gt_db_tuned(&merged, &me, &t, &skipped, &e), AIT_OK);
    assert_int_equal(t.n, 3);
    gemm_tuned_free(&t);
    gt_db_free(&merged);
    gt_db_free(&db);
    /* a file of before the column: the wall clock */
    char old[1024];
    snprintf(old, sizeof old, "%sGenuineIntel,6,106,\"x\",8,16,16,f32,nn,none,c,0,0,0,0,0,0,1,10,1,1,0,12\n", HDR);
    assert_int_equal(gt_db_load_mem("o.csv", old, strlen(old), true, &db, &e), AIT_OK);
    assert_false(db.rows[0].cpu_clock);
    gt_db_free(&db);
    char *bad = strstr(text, ",cpu");
    memcpy(bad, ",tsc", 4);
    assert_int_equal(gt_db_load_mem("c.csv", text, strlen(text), true, &db, &e), AIT_E_PARSE);
    assert_non_null(strstr(e.msg, "c.csv:2: column clock: 'tsc'"));
}

/* A fake clock for every candidate: 1000 ns a reading, so each run is 1 us. */
static int64_t fake_ns(void *ctx)
{
    (void)ctx;
    static int64_t t;
    return t += 1000;
}

/* gt_tune_shape's children time by the clock gt_opts gives: the fake one
 * above (every candidate 1 us, the default included), and --cpu-clock's
 * thread CPU time, which the row then records. */
static void tune_clock(void **state)
{
    (void)state;
    gt_row in = {.m = 20, .n = 48, .k = 24, .dtype = "f32", .layout = "np", .epi = "none", .count = 1};
    gt_opts o = {.warmup = 1, .iters = 3, .timeout = 30, .clock = fake_ns};
    gt_row out;
    ait_error e = {0};
    assert_int_equal(gt_tune_shape(&in, &o, &out, &e), AIT_OK);
    assert_string_not_equal(out.kernel, "failed");
    assert_true(out.us == 1.0);
    assert_true(out.default_us == 1.0);
    assert_false(out.cpu_clock);
    o = (gt_opts){.warmup = 1, .iters = 3, .timeout = 30, .cpu_clock = true};
    assert_int_equal(gt_tune_shape(&in, &o, &out, &e), AIT_OK);
    assert_true(out.cpu_clock);
    assert_true(out.us > 0 && out.default_us > 0);
    o.cpu_clock = false;
    assert_int_equal(gt_tune_shape(&in, &o, &out, &e), AIT_OK);
    assert_false(out.cpu_clock);
}

/* A clock shared by the tune's children (a MAP_SHARED page, inherited at
 * fork): each reading moves it on by a step that shrinks by `ratio` per
 * reading, so every run is a little shorter than the one before it,
 * whichever child runs it. The tune's last native candidate then has the
 * lowest median, and in the duel (the default, then the winner, in each
 * round) the winner is faster by ratio^(readings between them). */
typedef struct shared_clock {
    int64_t t;
    double step, ratio;
} shared_clock;
static shared_clock *shclk;

static int64_t shrinking_ns(void *ctx)
{
    (void)ctx;
    shclk->step *= shclk->ratio;
    return shclk->t += (int64_t)shclk->step;
}

static void log_keep(void *user, ait_log_level level, const char *msg)
{
    (void)level;
    char *buf = user;
    size_t l = strlen(buf);
    if (l + strlen(msg) + 2 < 65536) snprintf(buf + l, 65536 - l, "%s\n", msg);
}

/* The duel (gt_opts.confirm): a winner other than the default becomes the
 * row only if it beats the default by GT_CONFIRM_GAIN in interleaved rounds;
 * the row then carries the duel's times. And the skinny path's K shares
 * (kc 128, 256 at K past them) among the candidates. */
static void tune_confirm(void **state)
{
    (void)state;
    shclk = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(shclk != MAP_FAILED);
    gt_row in = {.m = 20, .n = 48, .k = 300, .dtype = "f32", .layout = "np", .epi = "none", .count = 1};
    char *log = calloc(1, 65536);
    assert_non_null(log);
    gt_opts o = {.warmup = 1, .iters = 3, .timeout = 30, .clock = shrinking_ns, .confirm = -1,
                 .log = {log_keep, log}};
    gt_row out;
    ait_error e = {0};
    static const gemm_config zero;
    /* no duel: the last candidate's lowest median wins */
    *shclk = (shared_clock){.step = 1e6, .ratio = 0.9999};
    assert_int_equal(gt_tune_shape(&in, &o, &out, &e), AIT_OK);
    assert_true(memcmp(&out.cfg, &zero, sizeof zero) != 0);
    assert_true(out.us < out.default_us);
    assert_null(strstr(log, "alternated runs"));
    assert_non_null(strstr(log, ".kc128.mc0.nc0.pa0.o0.sk1.t1:"));
    assert_non_null(strstr(log, ".kc256.mc0.nc0.pa0.o0.sk1.t1:"));
    assert_null(strstr(log, ".kc0.mc0.nc0.pa0.o0.sk1.t1:")); /* the default's code: not a candidate */
    /* the duel: under 2% faster side by side, so the default is the row */
    log[0] = 0;
    o.confirm = 3;
    *shclk = (shared_clock){.step = 1e6, .ratio = 0.9999};
    assert_int_equal(gt_tune_shape(&in, &o, &out, &e), AIT_OK);
    assert_non_null(strstr(log, "in 9 alternated runs: the default kept"));
    assert_memory_equal(&out.cfg, &zero, sizeof zero);
    assert_true(out.us == out.default_us && out.us > 0);
    assert_string_not_equal(out.kernel, "failed");
    /* ... and clearly faster: the winner stays, with the duel's times */
    log[0] = 0;
    *shclk = (shared_clock){.step = 1e6, .ratio = 0.98};
    assert_int_equal(gt_tune_shape(&in, &o, &out, &e), AIT_OK);
    assert_non_null(strstr(log, "in 9 alternated runs: kept"));
    assert_true(memcmp(&out.cfg, &zero, sizeof zero) != 0);
    assert_true(out.us * GT_CONFIRM_GAIN < out.default_us);
    /* K at 32 or less (rows outer): no K shares */
    log[0] = 0;
    in.k = 24;
    o.confirm = -1;
    assert_int_equal(gt_tune_shape(&in, &o, &out, &e), AIT_OK);
    assert_null(strstr(log, ".kc128.mc0.nc0.pa0."));
    free(log);
    munmap(shclk, 4096);
}

/* --mp's order and queue (queue.h): the shapes dearest first (GPT-2's LM
 * head before a 12544-row convolution before a 1x256x256 GEMV, equal
 * costs in the CSV's order); the shared queue hands each index out once
 * across processes; a --mp 2 tune writes every shape once and says each
 * process's share, a --mp 1 tune each shape's time. */
static void tune_queue(void **state)
{
    (void)state;
    gt_opts o = {.warmup = 1, .iters = 2, .timeout = 30};
    gt_db db = {0};
    ait_error e = {0};
    static const int64_t shapes[][3] = {{1, 256, 256}, {64, 50257, 768}, {4, 256, 256}, {12544, 96, 16},
                                        {1, 256, 256}};
    for (int i = 0; i < 5; i++) {
        gt_row r = {.m = shapes[i][0], .n = shapes[i][1], .k = shapes[i][2], .dtype = "f32", .layout = "np",
                    .count = 1};
        snprintf(r.epi, sizeof r.epi, "e%d", i);
        assert_int_equal(gt_db_merge(&db, &r, &e), AIT_OK);
    }
    assert_true(gt_cost(&db.rows[1], &o, 10) > gt_cost(&db.rows[3], &o, 10));
    assert_true(gt_cost(&db.rows[3], &o, 10) > gt_cost(&db.rows[0], &o, 10));
    assert_int_equal(gt_order(&db, &o, &e), AIT_OK);
    assert_int_equal(db.rows[0].n, 50257);
    assert_int_equal(db.rows[1].m, 12544);
    assert_int_equal(db.rows[2].m, 4);
    assert_string_equal(db.rows[3].epi, "e0"); /* a tie: the first one first */
    assert_string_equal(db.rows[4].epi, "e4");
    gt_db_free(&db);

    /* 3 processes take 200 indices: each exactly once */
    gt_queue q;
    assert_int_equal(gt_queue_open(&q, 200, 3, &e), AIT_OK);
    int *seen = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(seen != MAP_FAILED);
    pid_t pids[3];
    for (int w = 0; w < 3; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            for (int i; (i = gt_queue_take(&q)) >= 0;) {
                __atomic_fetch_add(&seen[i], 1, __ATOMIC_RELAXED);
                __atomic_fetch_add(&seen[200 + w], 1, __ATOMIC_RELAXED);
                usleep(100);
            }
            _exit(0);
        }
    }
    for (int w = 0; w < 3; w++) waitpid(pids[w], NULL, 0);
    for (int i = 0; i < 200; i++) assert_int_equal(seen[i], 1);
    assert_int_equal(seen[200] + seen[201] + seen[202], 200);
    assert_int_equal(gt_queue_take(&q), -1);
    gt_queue_close(&q);
    munmap(seen, 4096);

    /* a whole tune at --mp 2 and at --mp 1 */
    char *log = calloc(1, 65536), out[] = "/tmp/ait_gemmdb_queue_XXXXXX";
    assert_non_null(log);
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    gt_db in = {0};
    for (int i = 0; i < 6; i++) {
        gt_row r = {.m = 1 + 7 * i, .n = 32, .k = 16, .dtype = "f32", .layout = "np", .epi = "none", .count = 1};
        assert_int_equal(gt_db_merge(&in, &r, &e), AIT_OK);
    }
    for (int mp = 2; mp >= 1; mp--) {
        unlink(out);
        log[0] = 0;
        o = (gt_opts){.mp = mp, .warmup = 1, .iters = 2, .timeout = 30, .clock = fake_ns, .log = {log_keep, log}};
        assert_int_equal(gt_tune(&in, out, &o, &e), AIT_OK);
        gt_db got;
        assert_int_equal(gt_db_load(out, true, &got, &e), AIT_OK);
        assert_int_equal(got.n, 6);
        for (int i = 0; i < 6; i++) assert_int_equal(got.rows[i].m, 1 + 7 * i); /* sorted, each once */
        gt_db_free(&got);
        int shapes_said = 0;
        for (int w = 1; w <= mp; w++) {
            char want[40];
            snprintf(want, sizeof want, "process %d of %d: ", w, mp);
            const char *at = strstr(log, want);
            assert_non_null(at);
            shapes_said += atoi(at + strlen(want));
        }
        assert_int_equal(shapes_said, 6);
        if (mp == 1) assert_non_null(strstr(log, "; tuned in "));
    }
    unlink(out);
    gt_db_free(&in);
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_ok),
        cmocka_unit_test(csv_bad),
        cmocka_unit_test(db_bad),
        cmocka_unit_test(db_merge_lookup),
        cmocka_unit_test(db_dtypes),
        cmocka_unit_test(db_clock),
        cmocka_unit_test(tune_clock),
        cmocka_unit_test(tune_confirm),
        cmocka_unit_test(tune_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

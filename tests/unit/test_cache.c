/* The tuner's results cache and what the tuner does with it: entries round
 * trip, corrupt ones are recomputed, only ait's files are cleared, an
 * unusable folder is a warning; a second tune takes every result from the
 * cache and runs no child; a candidate that is wrong only at the largest
 * dynamic shape is rejected "at max shape"; --max-batches-per-size caps
 * the validation sets. Uses the small models of make_bad_models.py. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "backends/backend.h"
#include "runtime/model.h"
#include "tune/cache.h"
#include "tune/inspect.h"
#include "tune/tuner.h"

static void touch(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static bool exists(const char *dir, const char *name)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

/* Every entry file in dir, overwritten with text; returns how many. */
static int corrupt_all(const char *dir, const char *text)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        if (!strncmp(de->d_name, CACHE_PREFIX, strlen(CACHE_PREFIX))) {
            touch(dir, de->d_name, text);
            n++;
        }
    closedir(d);
    return n;
}

static void rm_dir(char *dir)
{
    assert_int_equal(cache_clear(dir, NULL, NULL), AIT_OK);
    rmdir(dir);
    free(dir);
}

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* ---- the cache alone ---------------------------------------------------- */

static void test_clear_only_entries(void **st)
{
    char *dir = test_tmp_dir("cache-test");
    touch(dir, CACHE_PREFIX HEX64 CACHE_SUFFIX, "{}");
    touch(dir, CACHE_PREFIX HEX64 CACHE_SUFFIX ".tmp.42", "{}"); /* a save killed midway */
    touch(dir, "notes.txt", "mine");
    touch(dir, CACHE_PREFIX "abc" CACHE_SUFFIX, "{}");            /* not 64 hex digits */
    touch(dir, CACHE_PREFIX HEX64 CACHE_SUFFIX ".tmp.x", "{}");   /* not a pid */
    char sub[512];
    snprintf(sub, sizeof sub, "%s/" CACHE_PREFIX "%s" CACHE_SUFFIX, dir, HEX64 "");
    int removed = -1;
    assert_int_equal(cache_clear(dir, &removed, NULL), AIT_OK);
    assert_int_equal(removed, 2);
    assert_false(exists(dir, CACHE_PREFIX HEX64 CACHE_SUFFIX));
    assert_true(exists(dir, "notes.txt"));
    assert_true(exists(dir, CACHE_PREFIX "abc" CACHE_SUFFIX));
    assert_true(exists(dir, CACHE_PREFIX HEX64 CACHE_SUFFIX ".tmp.x"));
    /* A folder named like an entry is not a file ait wrote. */
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(cache_clear(dir, &removed, NULL), AIT_OK);
    assert_int_equal(removed, 0);
    assert_true(exists(dir, CACHE_PREFIX HEX64 CACHE_SUFFIX));
    rmdir(sub);
    /* Nothing to clear in a missing folder. */
    assert_int_equal(cache_clear("/nonexistent/ait-cache", &removed, NULL), AIT_OK);
    assert_int_equal(removed, 0);
    char p[512];
    snprintf(p, sizeof p, "%s/notes.txt", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/" CACHE_PREFIX "abc" CACHE_SUFFIX, dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/" CACHE_PREFIX HEX64 CACHE_SUFFIX ".tmp.x", dir);
    unlink(p);
    rm_dir(dir);
}

static void test_entry_round_trip(void **st)
{
    char *dir = test_tmp_dir("cache-test");
    tune_cache c;
    cache_open(&c, dir, NULL);
    assert_true(c.on);
    tune_cand r = {.name = "openblas/t2", .valid = true, .max_rel = 3.5e-6, .sqnr_db = INFINITY,
                   .prof = {.median = 1.25e-3, .min = 1e-3, .max = 2e-3, .p10 = 1.1e-3,
                            .p90 = 1.5e-3, .cv = 0.05, .runs = 20, .converged = true,
                            .throughput = 6400}};
    tune_cand bad = {.name = "x/t1", .valid = false, .max_rel = 2, .sqnr_db = -6.02};
    snprintf(bad.reason, sizeof bad.reason, "at max shape (x [1,7]): output 'y': \"quoted\"\nline");
    cache_put(&c, HEX64, &r);
    char key2[SHA256_HEX];
    memcpy(key2, HEX64, sizeof key2);
    key2[0] = 'f';
    cache_put(&c, key2, &bad);
    assert_int_equal(c.stores, 2);
    tune_cand got = {0};
    assert_true(cache_get(&c, HEX64, "openblas/t2", &got));
    assert_true(got.valid && got.prof.converged && got.prof.runs == 20);
    assert_true(isinf(got.sqnr_db) && got.sqnr_db > 0);
    assert_true(fabs(got.prof.median - 1.25e-3) < 1e-12 && fabs(got.max_rel - 3.5e-6) < 1e-15);
    assert_true(cache_get(&c, key2, "x/t1", &got));
    assert_false(got.valid);
    assert_string_equal(got.reason, bad.reason);
    assert_int_equal(c.hits, 2);
    /* Another candidate's name under the key, a missing key: misses. */
    assert_false(cache_get(&c, HEX64, "openblas/t1", &got));
    assert_int_equal(c.ignored, 1);
    key2[1] = 'e';
    assert_false(cache_get(&c, key2, "x/t1", &got));
    assert_int_equal(c.ignored, 1); /* a plain miss is no warning */
    /* Corrupt entries: ignored with a warning, never a failure. */
    const char *corrupt[] = {"", "garbage", "{\"kind\": \"ait tune trial\", \"format\": 1}",
                             "{\"kind\": \"ait tune trial\", \"format\": 99}", "[1,2]", "{\"kind\": "};
    for (size_t i = 0; i < sizeof corrupt / sizeof corrupt[0]; i++) {
        corrupt_all(dir, corrupt[i]);
        int w = c.warnings;
        assert_false(cache_get(&c, HEX64, "openblas/t2", &got));
        assert_int_equal(c.warnings, w + 1);
    }
    rm_dir(dir);
}

static void test_unusable_folder(void **st)
{
    /* Under a regular file: no folder can be made there, even as root. */
    char under[512];
    snprintf(under, sizeof under, "%s", test_bad("good.onnx/cache"));
    tune_cache c;
    cache_open(&c, under, NULL);
    assert_false(c.on);
    assert_int_equal(c.warnings, 1);
    tune_cand r = {.name = "a/t1", .valid = true};
    cache_put(&c, HEX64, &r); /* off: quietly nothing */
    assert_false(cache_get(&c, HEX64, "a/t1", &r));
    assert_int_equal(c.warnings, 1);
    /* NULL: no cache, no warning. */
    cache_open(&c, NULL, NULL);
    assert_false(c.on);
    assert_int_equal(c.warnings, 0);
    /* A folder that exists but takes no files: one warning, then no more writes. */
    cache_open(&c, "/proc", NULL);
    if (c.on) {
        cache_put(&c, HEX64, &r);
        cache_put(&c, HEX64, &r);
        assert_int_equal(c.warnings, 1);
        assert_true(c.read_only);
        assert_int_equal(c.stores, 0);
    }
    /* The default folder (from the environment) is test_options.c's. */
}

/* ---- the tuner with the cache ------------------------------------------- */

/* A backend that runs the reference ops but is wrong (first element + 1)
 * in any float output whose axis 1 is longer than 5: right at seq 3, wrong
 * at seq 7. Its build and run happen in the tuner's child. */
static int fake_n_out;

static const op_def *fake_op_for(const graph *g, const node *n)
{
    (void)g;
    return n->def;
}

static ait_status fake_build(const backend *b, const graph *module, const candidate_cfg *cfg,
                             built **out, ait_error *e)
{
    fake_n_out = module->n_outputs;
    return backend_exec_build(b, module, cfg, out, e);
}

static ait_status fake_run(built *bm, tensor *const *in, tensor **out, ait_error *e)
{
    TRY(backend_exec_run(bm, in, out, e));
    for (int j = 0; j < fake_n_out; j++)
        if (out[j]->dtype == AIT_F32 && out[j]->rank >= 2 && out[j]->dims[1] > 5)
            ((float *)out[j]->data)[0] += 1;
    return AIT_OK;
}

static const backend fake = {.name = "fake", .summary = "wrong at long sequences",
                             .op_for = fake_op_for, .build = fake_build, .run = fake_run,
                             .free = backend_exec_free};

/* A backend with a variant, "wide", that is wrong everywhere: each variant
 * is a candidate of its own, and the variant reaches build (in the child). */
static bool fakev_wrong;

static int fakev_variants(const graph *module, const char **out, int max)
{
    (void)module;
    if (max < 1) return 0;
    out[0] = "wide";
    return 1;
}

static ait_status fakev_build(const backend *b, const graph *module, const candidate_cfg *cfg,
                              built **out, ait_error *e)
{
    fakev_wrong = !strcmp(cfg->variant, "wide");
    fake_n_out = module->n_outputs;
    return backend_exec_build(b, module, cfg, out, e);
}

static ait_status fakev_run(built *bm, tensor *const *in, tensor **out, ait_error *e)
{
    TRY(backend_exec_run(bm, in, out, e));
    for (int j = 0; fakev_wrong && j < fake_n_out; j++)
        if (out[j]->dtype == AIT_F32 && tensor_numel(out[j]) > 0) ((float *)out[j]->data)[0] += 1;
    return AIT_OK;
}

static const backend fakev = {.name = "fakev", .summary = "wrong in its variant",
                              .op_for = fake_op_for, .build = fakev_build, .run = fakev_run,
                              .free = backend_exec_free, .variants = fakev_variants};

typedef struct fixture {
    ait_model *m;
    sample_set *set;
    inspection *insp;
} fixture;

/* Model `name` of the bad folder with one generated sample per seq length
 * in seqs[0..n) (or `count` samples of its static shape when n is 0),
 * inspected at batch 1. */
static void fixture_make(fixture *f, const char *name, const int64_t *seqs, int n, int count)
{
    char p[512];
    ait_error e = {0};
    snprintf(p, sizeof p, "%s", test_bad(name));
    assert_int_equal(ait_model_load(p, &f->m, &e), AIT_OK);
    sample_opts so = {.batch = 1, .count = n ? 1 : count, .seed = 7};
    so.dim_names[0] = "seq";
    so.n_dims = n ? 1 : 0;
    so.dim_vals[0] = n ? seqs[0] : 0;
    assert_int_equal(samples_generate(f->m, &so, &f->set, &e), AIT_OK);
    for (int k = 1; k < n; k++) {
        sample_set *more;
        so.dim_vals[0] = seqs[k];
        assert_int_equal(samples_generate(f->m, &so, &more, &e), AIT_OK);
        f->set->s = realloc(f->set->s, (size_t)(f->set->n + 1) * sizeof *f->set->s);
        assert_non_null(f->set->s);
        f->set->s[f->set->n++] = more->s[0];
        more->n = 0;
        sample_set_free(more);
    }
    inspect_opts io = {.samples = f->set, .n_batch = 1, .batch = {1}, .runs = 1, .threads = 1};
    if (inspect_run(f->m, &io, &f->insp, &e) != AIT_OK) fail_msg("inspect: %s", e.msg);
}

static void fixture_free(fixture *f)
{
    inspection_free(f->insp);
    sample_set_free(f->set);
    ait_model_free(f->m);
}

/* Tunes with the reference and `other` (NULL: the reference alone), with a
 * time limit per candidate. */
static tune_report *tune_t(fixture *f, const char *cache, int max_batches, const backend *other,
                           double timeout)
{
    const backend *bk[2] = {backend_find("reference"), other};
    tune_opts o = {.samples = f->set, .n_batch = 1, .batch = {1}, .max_threads = 1,
                   .timeout = timeout, .cache_dir = cache, .max_batches = max_batches,
                   .backends = bk, .n_backends = other ? 2 : 1};
    o.prof = profile_defaults();
    o.prof.warmup = 1, o.prof.window = 2, o.prof.cap = 2, o.prof.cv = 0.9;
    tune_report *r = NULL;
    ait_error e = {0};
    if (tune_run(f->m, f->insp, &o, &r, &e) != AIT_OK) fail_msg("tune: %s", e.msg);
    return r;
}

static tune_report *tune(fixture *f, const char *cache, int max_batches, const backend *other)
{
    return tune_t(f, cache, max_batches, other, 30);
}

/* Candidates that time out are remembered for the same time limit (or a
 * shorter one) and tried again under a longer one; a baseline that timed
 * out leaves the module untuned, saying why (and a warning). */
static void test_timeout_cached(void **st)
{
    (void)st;
    fixture f;
    const int64_t seqs[] = {3};
    fixture_make(&f, "tokens.onnx", seqs, 1, 0);
    char *dir = test_tmp_dir("cache-timeout");
    for (int round = 0; round < 2; round++) { /* no child finishes in 1 us */
        tune_report *r = tune_t(&f, dir, 0, &fake, 1e-6);
        const tune_module *tm = &r->mods[0];
        assert_int_equal(r->trials, round ? 0 : 2);
        assert_int_equal(r->cached, round ? 2 : 0);
        for (int c = 0; c < 2; c++) {
            if (!tm->cands[c].errored) fail_msg("round %d cand %d: %s (%s)", round, c, tm->cands[c].reason, tm->cands[c].name);
            assert_false(tm->cands[c].valid);
            assert_true(tm->cands[c].timed_out == 1e-6);
        }
        if (!strstr(tm->untuned, "its baseline (reference/t1) timed out after 1e-06 s"))
            fail_msg("untuned: '%s'", tm->untuned);
        tune_report_free(r);
    }
    tune_report *r = tune_t(&f, dir, 0, &fake, 30); /* a longer limit: tried again */
    assert_int_equal(r->trials, 2);
    assert_true(r->mods[0].cands[0].valid);
    assert_true(r->mods[0].cands[0].timed_out == 0);
    assert_string_equal(r->mods[0].untuned, "");
    tune_report_free(r);
    fixture_free(&f);
    rm_dir(dir);
}

static void test_tune_cached_and_max_shape(void **st)
{
    fixture f;
    const int64_t seqs[] = {3, 7};
    fixture_make(&f, "tokens.onnx", seqs, 2, 0);
    char *dir = test_tmp_dir("cache-test");

    /* First tune: both candidates run; the fake is right at seq 3 only. */
    tune_report *r = tune(&f, dir, 0, &fake);
    assert_int_equal(r->n, 1);
    const tune_module *tm = &r->mods[0];
    assert_int_equal(tm->n_cands, 2);
    assert_int_equal(r->trials, 2);
    assert_int_equal(r->cached, 0);
    assert_true(r->cache_on);
    assert_int_equal(tm->n_sets, 2);
    assert_non_null(strstr(tm->min_shape, "[1,3]"));
    assert_non_null(strstr(tm->max_shape, "[1,7]"));
    assert_true(tm->cands[0].valid);
    const tune_cand *fc = &tm->cands[1];
    assert_false(fc->valid);
    assert_false(fc->errored);
    if (strncmp(fc->reason, "at max shape (", 14) || !strstr(fc->reason, "[1,7]") ||
        !strstr(fc->reason, "output 'y'"))
        fail_msg("reason: %s", fc->reason);
    assert_string_equal(tune_cand_status(fc), "rejected");
    assert_int_equal(tm->chosen, 0);
    assert_true(tm->all_failed);
    char reason[sizeof fc->reason];
    memcpy(reason, fc->reason, sizeof reason);
    tune_report_free(r);

    /* Second tune: everything from the cache, no child at all. */
    r = tune(&f, dir, 0, &fake);
    tm = &r->mods[0];
    assert_int_equal(r->trials, 0);
    assert_int_equal(r->cached, 2);
    assert_true(tm->cands[0].cached && tm->cands[1].cached);
    assert_true(tm->cands[0].valid && tm->cands[0].prof.median > 0);
    assert_string_equal(tm->cands[1].reason, reason);
    assert_int_equal(r->cache_warnings, 0);
    tune_report_free(r);

    /* The JSON report says so too. */
    r = tune(&f, dir, 0, &fake);
    json_w w = {0};
    tune_report_json(&w, f.insp, r);
    char *text = json_finish(&w, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"cached\":true"));
    assert_non_null(strstr(text, "\"status\":\"rejected\""));
    assert_non_null(strstr(text, "\"trials\":0"));
    free(text);
    tune_report_free(r);

    /* Corrupt entries are recomputed, with a warning each. */
    assert_int_equal(corrupt_all(dir, "{\"kind\": \"ait tune trial\""), 2);
    r = tune(&f, dir, 0, &fake);
    assert_int_equal(r->trials, 2);
    assert_int_equal(r->cached, 0);
    assert_int_equal(r->cache_warnings, 2);
    assert_string_equal(r->mods[0].cands[1].reason, reason);
    tune_report_free(r);

    /* Cleared: run again. */
    int removed = 0;
    assert_int_equal(cache_clear(dir, &removed, NULL), AIT_OK);
    assert_int_equal(removed, 2);
    r = tune(&f, dir, 0, &fake);
    assert_int_equal(r->trials, 2);
    tune_report_free(r);

    /* The min and max shapes are validated whatever the cap. */
    r = tune(&f, NULL, 1, &fake);
    assert_int_equal(r->mods[0].n_sets, 2);
    assert_false(r->cache_on);
    assert_int_equal(r->trials, 2);
    assert_false(r->mods[0].cands[1].valid);
    tune_report_free(r);

    rm_dir(dir);
    fixture_free(&f);
}

static void test_max_batches(void **st)
{
    fixture f;
    fixture_make(&f, "good.onnx", NULL, 0, 3); /* static [2,3]: one sample per batch */
    tune_report *r = tune(&f, NULL, 0, NULL);
    assert_int_equal(r->mods[0].n_sets, 3);
    assert_string_equal(r->mods[0].min_shape, ""); /* no dynamic axes */
    assert_true(r->mods[0].cands[0].valid);
    assert_false(r->mods[0].all_failed); /* nothing but the baseline was tried */
    tune_report_free(r);
    r = tune(&f, NULL, 2, NULL);
    assert_int_equal(r->mods[0].n_sets, 2);
    tune_report_free(r);
    fixture_free(&f);
}

static void test_variants(void **st)
{
    fixture f;
    fixture_make(&f, "good.onnx", NULL, 0, 1);
    tune_report *r = tune(&f, NULL, 0, &fakev);
    const tune_module *tm = &r->mods[0];
    assert_int_equal(tm->n_cands, 3);
    assert_string_equal(tm->cands[1].name, "fakev/t1");
    assert_string_equal(tm->cands[1].cfg.variant, "");
    assert_true(tm->cands[1].valid);
    assert_string_equal(tm->cands[2].name, "fakev:wide/t1");
    assert_string_equal(tm->cands[2].cfg.variant, "wide");
    assert_false(tm->cands[2].valid);
    assert_false(tm->cands[2].errored); /* rejected by validation, so built as "wide" */
    assert_int_equal(tm->chosen == 2, 0);
    tune_report_free(r);
    fixture_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clear_only_entries),
        cmocka_unit_test(test_entry_round_trip),
        cmocka_unit_test(test_unusable_folder),
        cmocka_unit_test(test_tune_cached_and_max_shape),
        cmocka_unit_test(test_timeout_cached),
        cmocka_unit_test(test_max_batches),
        cmocka_unit_test(test_variants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Plans and artifacts end to end, on the BERT-like encoder: a plan that
 * mixes backends (fixed by hand, so the test does not depend on timings)
 * is saved, loaded and run at two batch buckets, against the untuned model
 * and against the same plan run in process; every refusal (a changed byte,
 * another model, a missing CPU feature) and the fallback to the untuned
 * model, which checks the signature again when it opens the file again; the public API's tune -> save -> load path; the `whole` candidate
 * (on the keyword-spotting model); glue joined to the modules on native
 * at two input shapes (the same model); and JIT tuning. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "api/artifact_load.h"
#include "api/model_load.h"
#include "io/file.h"
#include "io/onnx.h"
#include "io/artifact.h"
#include "io/sign.h"
#include "runtime/model.h"
#include "runtime/plan_exec.h"
#include "api/inspection.h"
#include "runtime/plan.h"
#include "tune/plan_build.h"
#include "tune/plan_check.h"
#include "tune/tuner.h"

static char model_path[4096], dir[64], cache[128]; /* cache: JIT tuning's folder */

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

/* Inputs of the encoder at this batch, seq 16: token ids and a mask of ones. */
static void make_inputs(int batch, ait_tensor **in)
{
    int64_t dims[2] = {batch, 16};
    for (int k = 0; k < 2; k++) {
        in[k] = ait_tensor_create(AIT_I64, 2, dims);
        assert_non_null(in[k]);
        int64_t *p = ait_tensor_data(in[k]);
        for (int i = 0; i < batch * 16; i++) p[i] = k ? 1 : (i * 37 + 11) % 1000;
    }
}

static void run_model(const ait_model *m, int batch, ait_tensor **out, int n_out)
{
    ait_session *s;
    ait_error e = {0};
    ait_tensor *in[2];
    make_inputs(batch, in);
    assert_int_equal(ait_session_create(m, NULL, &s, &e), AIT_OK);
    if (ait_session_run(s, in, 2, out, n_out) != AIT_OK) fail_msg("%s", ait_session_error(s));
    ait_session_free(s);
    ait_tensor_free(in[0]);
    ait_tensor_free(in[1]);
}

/* Largest |a-b| / (1 + |b|) over the float outputs. */
/* Two valid candidates at one thread, of backends[0..2) with median ms[c]
 * milliseconds; the speedups follow. */
static void set_cands(tune_module *tm, const char *const *backends, const double *ms)
{
    tm->n_cands = 2;
    for (int c = 0; c < 2; c++) {
        tm->cands[c].cfg.backend = backends[c];
        tm->cands[c].cfg.threads = 1;
        snprintf(tm->cands[c].name, sizeof tm->cands[c].name, "%s/t1", backends[c]);
        tm->cands[c].valid = true;
        tm->cands[c].prof.median = ms[c] * 1e-3;
        tm->cands[c].speedup = ms[0] / ms[c];
    }
}

/* A report by hand: layer.0 on openblas, layer.1 on the reference, at
 * buckets 1 and 2 (layer.1 on openblas at bucket 2, so buckets differ). */
static tune_report *fixed_report_with(const inspection *r, const char *fast)
{
    const char *mods[] = {"layer.0", "layer.1"};
    tune_report *rep = calloc(1, sizeof *rep);
    rep->mods = calloc(4, sizeof *rep->mods);
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < 2; k++) {
            tune_module *tm = &rep->mods[rep->n++];
            tm->module = module_find(r->tree, mods[k]);
            assert_true(tm->module > 0);
            tm->batch = 1 << b;
            snprintf(tm->strategy, sizeof tm->strategy, "max-throughput");
            const char *names[] = {"reference", fast};
            set_cands(tm, names, (const double[]){1.0, 0.5});
            tm->chosen = k == 0 || b == 1;
            snprintf(tm->why, sizeof tm->why, "fixed by the test");
        }
    return rep;
}

static tune_report *fixed_report(const inspection *r) { return fixed_report_with(r, "openblas"); }

static ait_inspection *inspect_bert(const ait_model *m)
{
    const char *names[] = {"seq"};
    const int64_t vals[] = {16};
    const int batches[] = {1, 2};
    ait_inspect_options o = {.size = sizeof o, .n_dims = 1, .dim_names = names, .dim_values = vals,
                             .n_batch_sizes = 2, .batch_sizes = batches, .runs = 1};
    ait_inspection *h;
    ait_error e = {0};
    if (ait_inspect(m, &o, &h, &e) != AIT_OK) fail_msg("%s", e.msg);
    return h;
}

/* The encoder, loaded and inspected at batches 1 and 2. */
static ait_inspection *load_bert(ait_model **m)
{
    ait_error e = {0};
    if (ait_model_load(model_path, m, &e) != AIT_OK) fail_msg("%s", e.msg);
    return inspect_bert(*m);
}

/* The plan of report rep, runnable here (no artifact). */
static plan_exec *plan_in_process(const ait_inspection *h, const tune_report *rep,
                                  const ait_model *m, plan **p)
{
    ait_error e = {0};
    plan_exec *px;
    if (plan_from_report(h->r, rep, p, &e) != AIT_OK) fail_msg("%s", e.msg);
    if (plan_exec_create(m->g, *p, 1, NULL, &px, &e) != AIT_OK) fail_msg("%s", e.msg);
    return px;
}

static void test_round_trip(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *m, *t;
    ait_inspection *h = load_bert(&m);
    tune_report *rep = fixed_report(h->r);
    char art[256], sums[300], cmd[700];
    path_in(art, sizeof art, "bert.ait");
    if (plan_save(m, h->r, rep, art, &e) != AIT_OK) fail_msg("%s", e.msg);
    /* sha256sum -c accepts the sums file. */
    assert_int_equal(artifact_sums_path(art, sums, sizeof sums, &e), AIT_OK);
    snprintf(cmd, sizeof cmd, "cd %s && sha256sum -c --quiet %s", dir, strrchr(sums, '/') + 1);
    assert_int_equal(system(cmd), 0);

    if (ait_model_load(art, &t, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_true(ait_model_is_tuned(t));
    assert_string_equal(ait_model_note(t), "");
    assert_int_equal(t->plan->n_modules, 2);
    assert_int_equal(t->plan->n_buckets, 2);
    assert_string_equal(t->plan->mods[1].choices[0].cfg.backend, "reference");
    assert_string_equal(t->plan->mods[1].choices[1].cfg.backend, "openblas");
    assert_int_equal(t->plan->n_batch_axes, 2);

    /* The same plan run in process, from the report. */
    plan *p;
    plan_exec *px = plan_in_process(h, rep, m, &p);
    int n_out = ait_model_output_count(m);
    for (int batch = 1; batch <= 2; batch++) {
        ait_tensor *ref[8], *tuned[8], *again[8], *in[2];
        run_model(m, batch, ref, n_out);
        run_model(t, batch, tuned, n_out);
        assert_true(test_max_err(tuned, ref, n_out) < 1e-4);
        make_inputs(batch, in);
        tensor *res[8];
        if (plan_exec_run(px, in, res, &e) != AIT_OK) fail_msg("%s", e.msg);
        for (int j = 0; j < n_out; j++) again[j] = res[j];
        assert_true(test_max_err(tuned, again, n_out) == 0); /* identical */
        for (int j = 0; j < n_out; j++) {
            ait_tensor_free(ref[j]);
            ait_tensor_free(tuned[j]);
        }
        ait_tensor_free(in[0]);
        ait_tensor_free(in[1]);
    }
    plan_exec_free(px);
    plan_free(p);
    ait_model_free(t);
    tune_report_free(rep);
    ait_inspection_free(h);
    ait_model_free(m);
}

/* The same plan on the native backend: saved with its packed weights as
 * blobs, loaded (the blobs used in place), run: the outputs are those of
 * the plan built in process, bit for bit, and close to the reference's. */
/* What `cp other.ait live.ait` does to a loaded artifact's file: truncated in
 * place to 0, then rewritten (here with garbage of the same length). */
static void clobber(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, 0), 0);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    for (off_t i = 0; i < st.st_size; i++) fputc(0xa5, f);
    fclose(f);
}

/* The bytes of model constants a session on m holds (ait_session_memory). */
static size_t held_weights(const ait_model *m)
{
    ait_session *s;
    ait_error e = {0};
    if (ait_session_create(m, NULL, &s, &e) != AIT_OK) fail_msg("%s", e.msg);
    size_t w;
    ait_session_memory(s, NULL, &w);
    ait_session_free(s);
    return w;
}

/* The constants of m whose data was freed, checking that each is a MatMul's
 * or Gemm's B (what native's prepared blobs replace) and no other node's. */
static int released_weights(const ait_model *m)
{
    const graph *g = m->g;
    int n = 0;
    for (int v = 0; v < g->n_vals; v++) {
        const tensor *k = g->vals[v].konst;
        if (!k || k->data || !tensor_numel(k)) continue;
        n++;
        for (int i = 0; i < g->n_nodes; i++)
            for (int j = 0; j < g->nodes[i].n_in; j++)
                if (g->nodes[i].in[j] == v && (j != 1 || (strcmp(g->nodes[i].op, "MatMul") &&
                                                        strcmp(g->nodes[i].op, "Gemm"))))
                    fail_msg("'%s' freed, but node '%s' input %d reads it", g->vals[v].name,
                             g->nodes[i].name, j);
    }
    return n;
}

/* bert with prepared blobs of backend be (native or onednn): see below. */
static void round_trip_on(const char *be)
{
    ait_error e = {0};
    ait_model *m, *t;
    ait_inspection *h = load_bert(&m), *h2 = NULL;
    tune_report *rep = fixed_report_with(h->r, be);
    char art[256], name[64];
    snprintf(name, sizeof name, "bert-%s.ait", be);
    path_in(art, sizeof art, name);
    if (plan_save(m, h->r, rep, art, &e) != AIT_OK) fail_msg("%s", e.msg);
    if (ait_model_load(art, &t, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_true(ait_model_is_tuned(t));
    assert_string_equal(t->plan->mods[1].choices[1].cfg.backend, be);
    assert_int_equal(released_weights(t), 0); /* ait_model_load keeps them for inspecting */
    /* ait_artifact_load frees them as it reads the plan, before the blobs:
     * the load never holds both (plan_release_replaced). */
    ait_model *a;
    if (ait_artifact_load(art, NULL, &a, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_true(a->freed_at_load > 0);
    assert_true(released_weights(a) >= 4);
    /* What it holds is copied, or borrowed from the model's blob 64-byte
     * aligned (settle_weights): the file clobbered below changes neither. */
    const artifact_blob *mb = artifact_blob_find(a->art, PLAN_MODEL_BLOB);
    assert_non_null(mb);
    for (int v = 0; v < a->g->n_vals; v++) {
        const tensor *k = a->g->vals[v].konst;
        if (!k || !k->data || k->owned) continue;
        assert_true((const uint8_t *)k->data >= mb->data &&
                    (const uint8_t *)k->data + tensor_nbytes(k) <= mb->data + mb->size);
        assert_true(((uintptr_t)k->data & 63) == 0);
    }
    ait_session *sa; /* made before the file is clobbered, run after */
    if (ait_session_create(a, NULL, &sa, &e) != AIT_OK) fail_msg("%s", e.msg);
    /* The loaded model owns everything it runs on: the runs below (prepared
     * blobs and all, a session made before included) give the outputs of the
     * plan built in process, no SIGBUS. */
    clobber(art);
    plan *p;
    plan_exec *px = plan_in_process(h, rep, m, &p);
    int n_out = ait_model_output_count(m);
    for (int batch = 1; batch <= 2; batch++) {
        ait_tensor *ref[8], *tuned[8], *again[8], *in[2];
        run_model(m, batch, ref, n_out);
        run_model(t, batch, tuned, n_out);
        assert_true(test_max_err(tuned, ref, n_out) < 1e-4);
        ait_tensor *ia[2]; /* freed at load, file clobbered: the same bit for bit */
        make_inputs(batch, ia);
        if (ait_session_run(sa, ia, 2, again, n_out) != AIT_OK) fail_msg("%s", ait_session_error(sa));
        assert_true(test_max_err(tuned, again, n_out) == 0);
        for (int j = 0; j < n_out; j++) ait_tensor_free(again[j]);
        ait_tensor_free(ia[0]);
        ait_tensor_free(ia[1]);
        make_inputs(batch, in);
        tensor *res[8];
        if (plan_exec_run(px, in, res, &e) != AIT_OK) fail_msg("%s", e.msg);
        for (int j = 0; j < n_out; j++) again[j] = res[j];
        assert_true(test_max_err(tuned, again, n_out) == 0);
        for (int j = 0; j < n_out; j++) {
            ait_tensor_free(ref[j]);
            ait_tensor_free(tuned[j]);
        }
        ait_tensor_free(in[0]);
        ait_tensor_free(in[1]);
    }
    /* The first session freed the weights the backend's blobs replace
     * (layer.0's MatMuls; layer.1's stay: its bucket-1 build, the reference,
     * reads them), and only those: every session since (the runs above)
     * built from the blobs, took the freed weights for constants still, and
     * matched. */
    size_t full = held_weights(m), now = held_weights(t);
    int freed = released_weights(t);
    assert_true(freed >= 4);
    assert_true(now < full);
    assert_int_equal(released_weights(m), 0);
    assert_true(ait_inspect(t, NULL, &h2, &e) == AIT_E_INVALID_ARG); /* its weights are gone */
    assert_non_null(strstr(e.msg, "freed the weights"));
    /* The load freed exactly what the first session frees (the plan's answer
     * is the builds'), so a session on it frees nothing more and holds the
     * same; ait_inspect refuses it from the start. */
    for (int v = 0; v < t->g->n_vals; v++) {
        const tensor *kt = t->g->vals[v].konst, *ka = a->g->vals[v].konst;
        if (kt) assert_true(!kt->data == !ka->data);
    }
    assert_int_equal(held_weights(a), now);
    assert_true(ait_inspect(a, NULL, &h2, &e) == AIT_E_INVALID_ARG);
    assert_non_null(strstr(e.msg, "the load freed the weights"));
    ait_session_free(sa);
    ait_model_free(a);
    plan_exec_free(px);
    plan_free(p);
    ait_model_free(t);
    tune_report_free(rep);
    ait_inspection_free(h);
    ait_model_free(m);
}

static void test_native_round_trip(void **state)
{
    (void)state;
    round_trip_on("native");
}

/* oneDNN's MatMuls from their blobs, the weights freed (dn_releases). */
static void test_onednn_round_trip(void **state)
{
    (void)state;
    round_trip_on("onednn");
}

/* A module on the baseline at every bucket runs inline, as the untuned
 * model runs it: the same outputs bit for bit, nothing built or prepared;
 * a module on the baseline at one bucket only is still built. */
static void test_baseline_inline(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *m;
    ait_inspection *h = load_bert(&m);
    tune_report *rep = fixed_report(h->r);
    for (int i = 0; i < rep->n; i++)
        if (rep->mods[i].module == module_find(h->r->tree, "layer.0")) rep->mods[i].chosen = 0;
    plan *p;
    plan_exec *px = plan_in_process(h, rep, m, &p);
    int n_out = ait_model_output_count(m);
    for (int batch = 1; batch <= 2; batch++) {
        ait_tensor *ref[8], *in[2];
        tensor *res[8];
        run_model(m, batch, ref, n_out);
        make_inputs(batch, in);
        if (plan_exec_run(px, in, res, &e) != AIT_OK) fail_msg("%s", e.msg);
        if (batch == 1) assert_true(test_max_err(res, ref, n_out) == 0); /* all on the reference */
        else assert_true(test_max_err(res, ref, n_out) < 1e-4);
        for (int j = 0; j < n_out; j++) ait_tensor_free(ref[j]);
        ait_tensor_free(in[0]);
        ait_tensor_free(in[1]);
    }
    prepared prep;
    for (int k = 0; k < 2; k++) {
        assert_string_equal(p->mods[0].name, "layer.0");
        assert_int_equal(plan_exec_prepared(px, 0, k, &prep, &e), AIT_OK);
        assert_int_equal(prep.n, 0);
    }
    plan_exec_free(px);
    plan_free(p);
    tune_report_free(rep);
    ait_inspection_free(h);
    ait_model_free(m);
}

/* The embedded model's parse borrows its big weights (onnx_read's borrow):
 * mobilenetv2's bytes in a 64-byte aligned buffer, as an artifact's blob is
 * (4096): every initializer of ONNX_BORROW_MIN bytes or more that no fold
 * may read is the buffer's bytes, not a copy, equal to the copied parse's;
 * the smaller ones are owned copies. Its Conv weight 'onnx::Conv_610' lies
 * 64-byte aligned in the file, so it stays where it is (the others copied
 * as the load's settle_weights does) through a session's runs, whose
 * outputs are the copied model's bit for bit. */
static void test_borrowed_weights(void **state)
{
    (void)state;
    ait_error e = {0};
    const char *path = test_data("models/mobilenetv2.onnx");
    uint8_t *file;
    size_t len;
    if (file_read_all(path, ONNX_MAX_MODEL_BYTES, &file, &len, &e) != AIT_OK) fail_msg("%s", e.msg);
    uint8_t *buf = aligned_malloc(len);
    assert_non_null(buf);
    memcpy(buf, file, len);
    free(file);
    ait_model *m, *ref = test_load(path);
    if (model_load_embedded(buf, len, path, false, &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(m->g->n_vals, ref->g->n_vals);
    int borrowed = 0;
    const tensor *conv = NULL;
    for (int v = 0; v < m->g->n_vals; v++) {
        tensor *t = m->g->vals[v].konst, *r = ref->g->vals[v].konst;
        if (!t) continue;
        assert_non_null(r);
        assert_string_equal(m->g->vals[v].name, ref->g->vals[v].name);
        size_t n = tensor_nbytes(t);
        assert_int_equal(n, tensor_nbytes(r));
        assert_memory_equal(t->data, r->data, n);
        bool inside = (const uint8_t *)t->data >= buf && (const uint8_t *)t->data + n <= buf + len;
        assert_true(inside == !t->owned);
        if (n < ONNX_BORROW_MIN) assert_true(t->owned);
        if (!inside) continue;
        borrowed++;
        if (!strcmp(m->g->vals[v].name, "onnx::Conv_610")) conv = t;
    }
    assert_true(borrowed >= 10);
    assert_non_null(conv);
    assert_true(((uintptr_t)conv->data & 63) == 0);
    const void *at = conv->data;
    for (int v = 0; v < m->g->n_vals; v++) {
        tensor *t = m->g->vals[v].konst;
        if (t && !t->owned && ((uintptr_t)t->data & 63)) assert_int_equal(tensor_own(t, &e), AIT_OK);
    }
    ait_value_info vi;
    assert_int_equal(ait_model_input(m, 0, &vi), AIT_OK);
    int64_t dims[AIT_MAX_RANK];
    for (int i = 0; i < vi.rank; i++) dims[i] = vi.dims[i] > 0 ? vi.dims[i] : 1;
    ait_tensor *in = ait_tensor_create(AIT_F32, vi.rank, dims);
    assert_non_null(in);
    float *x = ait_tensor_data(in);
    for (int64_t i = 0; i < tensor_numel(in); i++) x[i] = (float)((i * 7919) % 255) / 255.0f - 0.5f;
    ait_session *s, *sr;
    assert_int_equal(ait_session_create(m, NULL, &s, &e), AIT_OK);
    assert_int_equal(ait_session_create(ref, NULL, &sr, &e), AIT_OK);
    for (int round = 0; round < 2; round++) {
        ait_tensor *out[4], *want[4];
        int n_out = ait_model_output_count(m);
        assert_true(n_out <= 4);
        if (ait_session_run(s, &in, 1, out, n_out) != AIT_OK) fail_msg("%s", ait_session_error(s));
        if (ait_session_run(sr, &in, 1, want, n_out) != AIT_OK) fail_msg("%s", ait_session_error(sr));
        assert_true(test_max_err(out, want, n_out) == 0);
        for (int j = 0; j < n_out; j++) {
            ait_tensor_free(out[j]);
            ait_tensor_free(want[j]);
        }
        assert_ptr_equal(conv->data, at); /* still the buffer's bytes */
    }
    ait_session_free(s);
    ait_session_free(sr);
    ait_tensor_free(in);
    ait_model_free(m);
    ait_model_free(ref);
    aligned_free(buf);
}

/* Copies the artifact and changes byte at `off`. */
static void corrupt_copy(const char *src, const char *dst, long off)
{
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    assert_non_null(in);
    assert_non_null(out);
    int c;
    long i = 0;
    while ((c = fgetc(in)) != EOF) fputc(i++ == off ? c ^ 0x20 : c, out);
    fclose(in);
    fclose(out);
}

/* layer.0 and layer.1 at batch 1 with two valid candidates each, the
 * reference and oneDNN, whose module times are given: `chosen` picks. */
static void check_report(const inspection *r, tune_module *mods, int chosen, double ref_ms,
                         double dnn_ms, const char *strategy)
{
    const char *names[] = {"layer.0", "layer.1"}, *backends[] = {"reference", "onednn"};
    const double ms[] = {ref_ms, dnn_ms};
    for (int k = 0; k < 2; k++) {
        tune_module *tm = &mods[k];
        memset(tm, 0, sizeof *tm);
        tm->module = module_find(r->tree, names[k]);
        tm->batch = 1;
        snprintf(tm->strategy, sizeof tm->strategy, "%s", strategy);
        set_cands(tm, backends, ms);
        tm->chosen = chosen;
        snprintf(tm->why, sizeof tm->why, "fixed by the test");
    }
}

/* The whole-plan check on the encoder at batch 1, where oneDNN runs the
 * encoder layers several times as fast as the reference: a plan left on the
 * reference (as if the module profiles had misled) is switched to oneDNN
 * alone, and each module says why; a plan on oneDNN is kept against the
 * reference alone; a strategy not about speed, or no alternative within
 * reach of the module times, skips it. */
static void test_plan_check(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *m;
    ait_inspection *h = load_bert(&m);
    ait_tensor *in[2];
    make_inputs(1, in);
    /* by CPU time (--cpu-clock): the decisions asserted below are the
     * check's logic on a gap of 1.3x (this Zen 5: reference 36 ms) to several
     * times (oneDNN over the reference); wall clock on a loaded machine has
     * flipped the second (reference alone "faster" than the oneDNN plan) */
    tune_opts o = {.timeout = 120, .cpu_clock = true};
    tune_module mods[2];
    tune_check c;

    check_report(h->r, mods, 0, 1.0, 1.2, "max-throughput");
    if (plan_check_bucket(m, h->r, &o, mods, 2, NULL, in, &c, &e) != AIT_OK) fail_msg("%s", e.msg);
    print_message("reference plan: %s; reference %.3f ms, onednn alone %.3f x\n", c.note,
                  c.plans[0].median[0] * 1e3, c.plans[1].ratio);
    assert_int_equal(c.outcome, CHECK_SWITCHED);
    assert_int_equal(c.n_plans, 2);
    assert_true(c.n_procs >= CHECK_MIN_PROCS && c.n_procs <= CHECK_MAX_PROCS);
    assert_string_equal(c.plans[1].name, "onednn alone");
    assert_int_equal(c.taken, 1);
    assert_true(c.plans[1].ratio > 1.01);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(mods[k].chosen, 1);
        assert_non_null(strstr(mods[k].why, "whole-plan check"));
        assert_non_null(strstr(mods[k].why, "fixed by the test")); /* the module's own reason */
    }

    check_report(h->r, mods, 1, 1.2, 1.0, "min-latency");
    if (plan_check_bucket(m, h->r, &o, mods, 2, NULL, in, &c, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(c.outcome, CHECK_KEPT);
    assert_string_equal(c.plans[1].name, "reference alone");
    assert_true(c.plans[1].ratio < 1);
    assert_int_equal(mods[0].chosen, 1);
    assert_string_equal(mods[0].why, "fixed by the test");

    /* The reference's module times 2.5x oneDNN's: not worth running. */
    check_report(h->r, mods, 1, 2.5, 1.0, "max-throughput");
    assert_int_equal(plan_check_bucket(m, h->r, &o, mods, 2, NULL, in, &c, &e), AIT_OK);
    assert_int_equal(c.outcome, CHECK_SKIPPED);
    assert_int_equal(c.n_procs, 0);
    assert_non_null(strstr(c.note, "reference alone: module times over 2.00x"));
    assert_non_null(strstr(c.note, "onednn alone is the plan as tuned"));

    check_report(h->r, mods, 0, 1.0, 1.2, "one-backend:onednn");
    assert_int_equal(plan_check_bucket(m, h->r, &o, mods, 2, NULL, in, &c, &e), AIT_OK);
    assert_int_equal(c.outcome, CHECK_SKIPPED);
    assert_non_null(strstr(c.note, "not about speed"));
    assert_int_equal(mods[0].chosen, 0);

    ait_tensor_free(in[0]);
    ait_tensor_free(in[1]);
    ait_inspection_free(h);
    ait_model_free(m);
}

static void test_refusals(void **state)
{
    (void)state;
    ait_error e = {0};
    char art[256], bad[256];
    path_in(art, sizeof art, "bert.ait");
    path_in(bad, sizeof bad, "bad.ait");
    /* A byte of the manifest, then one of the model blob: refused by hash. */
    corrupt_copy(art, bad, ARTIFACT_HEADER_SIZE + 40);
    ait_model *m = NULL;
    assert_int_not_equal(ait_model_load(bad, &m, &e), AIT_OK);
    assert_null(m);
    assert_non_null(strstr(e.msg, "bad.ait"));
    /* ... with the fallback, the intact embedded model loads untuned. */
    ait_artifact_options fb = {.size = sizeof fb, .fallback_untuned = 1};
    if (ait_artifact_load(bad, &fb, &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_false(ait_model_is_tuned(m));
    assert_true(strlen(ait_model_note(m)) > 0);
    size_t untuned = held_weights(m); /* running untuned, it keeps every weight */
    assert_true(untuned > 0);
    assert_int_equal(released_weights(m), 0);
    ait_model_free(m);
    artifact *a;
    assert_int_equal(artifact_open(art, NULL, &a, &e), AIT_OK);
    size_t mlen;
    const uint8_t *start = artifact_manifest(a, &mlen) - ARTIFACT_HEADER_SIZE;
    const artifact_blob *model = artifact_blob_find(a, PLAN_MODEL_BLOB);
    assert_non_null(model);
    corrupt_copy(art, bad, (long)(model->data - start) + 100); /* inside the model blob */
    assert_int_not_equal(ait_artifact_load(bad, &fb, &m, &e), AIT_OK);
    assert_null(m);
    assert_non_null(strstr(e.msg, "sha256 mismatch"));

    /* Rewritten with every hash right: another model's hash in the header; a
     * CPU feature this machine lacks; a plan naming a backend this build does
     * not have; a manifest without its buckets. */
    static const char *const edits[][2] = {
        {NULL, NULL}, {NULL, NULL}, {"\"backend\": \"openblas\"", "\"backend\": \"tvm\""},
        {"\"buckets\"", "\"buckits\""}};
    static const char *const want[] = {"model hash", "made_up_isa",
                                       "backend 'tvm', which this build of ait does not have",
                                       "the manifest's buckets or modules is missing"};
    for (int k = 0; k < 4; k++) {
        artifact_info info = {.model_hash = k ? artifact_model_hash(a) : "0123abcd",
                              .cpu_features = k == 1 ? "avx2,made_up_isa" : NULL};
        artifact_writer *w;
        assert_int_equal(artifact_writer_begin(bad, &info, &w, &e), AIT_OK);
        size_t len;
        const char *mf = (const char *)artifact_manifest(a, &len);
        char *edited = malloc(len + 64);
        assert_non_null(edited);
        const char *at = edits[k][0] ? strstr(mf, edits[k][0]) : NULL;
        assert_true(!edits[k][0] || at);
        size_t head = at ? (size_t)(at - mf) : len, skip = at ? strlen(edits[k][0]) : 0;
        memcpy(edited, mf, head);
        size_t n = head;
        if (at) {
            n += (size_t)sprintf(edited + n, "%s", edits[k][1]);
            memcpy(edited + n, mf + head + skip, len - head - skip);
            n += len - head - skip;
        }
        assert_int_equal(artifact_writer_manifest(w, edited, n, &e), AIT_OK);
        free(edited);
        for (size_t i = 0; i < artifact_blob_count(a); i++) {
            const artifact_blob *b = artifact_blob_at(a, i);
            assert_int_equal(artifact_writer_blob(w, b->name, b->data, (size_t)b->size, &e), AIT_OK);
        }
        assert_int_equal(artifact_writer_finish(w, &e), AIT_OK);
        assert_int_not_equal(ait_model_load(bad, &m, &e), AIT_OK);
        if (!strstr(e.msg, want[k])) fail_msg("case %d: %s", k, e.msg);
        assert_non_null(strstr(e.msg, "bad.ait"));
        if (k) { /* the plan is what cannot be used; the fallback runs untuned */
            if (ait_artifact_load(bad, &fb, &m, &e) != AIT_OK) fail_msg("%s", e.msg);
            assert_false(ait_model_is_tuned(m));
            assert_non_null(strstr(ait_model_note(m), want[k]));
            ait_model_free(m);
        }
    }
    artifact_close(a);
}

/* The fallback with a trusted key opens the file again: it must check the
 * signature of the header it reads then, not trust the first open's check,
 * since the file may have been replaced in between. bad.ait (left by
 * test_refusals: an intact model, a manifest whose plan is refused), signed;
 * then replaced by another artifact (bert.ait, unsigned: its header is not
 * the one bad.ait.sig signs) after its first open, which the test stands for
 * by calling the fallback itself with the first open's reason. */
static void test_fallback_signature(void **state)
{
    (void)state;
    ait_error e = {0};
    char art[256], bad[256], kbase[256], pem[256], pub[256];
    path_in(art, sizeof art, "bert.ait");
    path_in(bad, sizeof bad, "bad.ait");
    path_in(kbase, sizeof kbase, "k1");
    snprintf(pem, sizeof pem, "%s.pem", kbase);
    snprintf(pub, sizeof pub, "%s.pub", kbase);
    if (sign_keygen(kbase, &e) != AIT_OK) fail_msg("%s", e.msg);
    artifact *a;
    artifact_expect x = {.skip_cpu_check = 1, .skip_manifest = 1};
    if (artifact_open(bad, &x, &a, &e) != AIT_OK) fail_msg("%s", e.msg);
    if (sign_header(bad, artifact_header(a), ARTIFACT_HEADER_SIZE, pem, &e) != AIT_OK)
        fail_msg("%s", e.msg);
    artifact_close(a);

    /* Signed and unchanged: the refused plan falls back to the model. */
    ait_artifact_options o = {.size = sizeof o, .fallback_untuned = 1, .trusted_key = pub};
    ait_model *m = NULL;
    if (ait_artifact_load(bad, &o, &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_false(ait_model_is_tuned(m));
    assert_non_null(strstr(ait_model_note(m), "buckets or modules is missing"));
    ait_model_free(m);
    const ait_error why = {.code = AIT_E_PARSE, .msg = "the first open's reason"};
    m = NULL;
    if (artifact_load_untuned(bad, pub, &why, &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_model_free(m);

    /* Replaced after the first open (bad.ait.sig stays): the second open's
     * header is not signed by the key, so nothing loads, for the first
     * reason. Without the re-check, bert.ait's model would load. */
    corrupt_copy(art, bad, -1);
    m = NULL;
    e = (ait_error){0};
    assert_int_equal(artifact_load_untuned(bad, pub, &why, &m, &e), AIT_E_PARSE);
    assert_null(m);
    assert_string_equal(e.msg, why.msg);
    /* ... and loaded from the start, the first open refuses it. */
    assert_int_not_equal(ait_artifact_load(bad, &o, &m, &e), AIT_OK);
    assert_null(m);
    assert_non_null(strstr(e.msg, "bad.ait"));
    /* Without a trusted key, the same file falls back (the control). */
    if (artifact_load_untuned(bad, NULL, &why, &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_false(ait_model_is_tuned(m));
    ait_model_free(m);
}

/* The public path: inspect, select, tune (tiny profiling), save, load, run. */
static void test_public_api(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *m, *t;
    ait_inspection *h = load_bert(&m);
    assert_int_equal(ait_select_path(h, "layer.1.intermediate", NULL), AIT_OK);
    ait_tuning *tu;
    /* A margin of 1 (the candidate would have to take no time) is refused. */
    ait_tune_options bad = {.size = sizeof bad, .margin = 1};
    assert_int_equal(ait_tune(h, &bad, &tu, &e), AIT_E_INVALID_ARG);
    assert_non_null(strstr(e.msg, "margin 1 is not below 1"));
    ait_tune_options o = {.size = sizeof o, .warmup = 1, .window = 2, .cap = 3, .cv = 0.5,
                          .skip_whole = 1};
    if (ait_tune(h, &o, &tu, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(ait_tuning_count(tu), 2); /* one module x buckets 1, 2 */
    ait_tuning_row row;
    assert_int_equal(ait_tuning_row_at(tu, 1, &row), AIT_OK);
    assert_string_equal(row.module, "layer.1.intermediate");
    assert_int_equal(row.bucket, 2);
    char art[256];
    path_in(art, sizeof art, "api.ait");
    if (ait_tuning_save(tu, art, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(ait_artifact_load(art, NULL, &t, &e), AIT_OK);
    assert_true(ait_model_is_tuned(t));
    int n_out = ait_model_output_count(m);
    ait_tensor *ref[8], *tuned[8];
    run_model(m, 2, ref, n_out);
    run_model(t, 2, tuned, n_out);
    assert_true(test_max_err(tuned, ref, n_out) < 1e-4);
    for (int j = 0; j < n_out; j++) {
        ait_tensor_free(ref[j]);
        ait_tensor_free(tuned[j]);
    }
    ait_model_free(t);
    ait_tuning_free(tu);
    ait_inspection_free(h);
    ait_model_free(m);
}

/* Runs model m on the inspection's first sample (kws: one input). */
static void run_sample(const ait_model *m, const ait_inspection *h, ait_tensor **out, int n_out)
{
    ait_session *s;
    ait_error e = {0};
    assert_int_equal(ait_session_create(m, NULL, &s, &e), AIT_OK);
    ait_tensor *in[8];
    int n_in = h->samples->n_inputs;
    assert_true(n_in <= 8);
    for (int i = 0; i < n_in; i++) in[i] = h->samples->s[0].values[i];
    if (ait_session_run(s, in, n_in, out, n_out) != AIT_OK) fail_msg("%s", ait_session_error(s));
    ait_session_free(s);
}

/* The `whole` candidate on the keyword-spotting model: tuned beside the
 * top-level modules and listed in the report and the check; forced, the
 * plan is the root alone, and its artifact runs with the reference's
 * outputs. */
static void test_whole(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *m, *t;
    if (ait_model_load(test_data("models/kws.onnx"), &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_inspect_options io = {.size = sizeof io, .runs = 1};
    ait_inspection *h;
    if (ait_inspect(m, &io, &h, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(select_by_share(&h->sel, h->r, 1, 0, 0, NULL, &e), AIT_OK);
    assert_true(h->sel.n > 1);
    tune_opts o = {.samples = h->samples, .n_batch = 1, .batch = {1}, .sel = &h->sel,
                   .timeout = 60, .prof = profile_defaults(), .plan_check = true,
                   .whole = WHOLE_CHECK};
    o.prof.warmup = 1, o.prof.window = 2, o.prof.cap = 3, o.prof.cv = 0.5;
    tune_report *rep = NULL;
    if (tune_run(m, h->r, &o, &rep, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(rep->n, h->sel.n + 1);
    const tune_module *wm = &rep->mods[rep->n - 1];
    assert_true(wm->whole);
    assert_int_equal(wm->module, 0);
    assert_true(tune_whole_best(wm, NULL) > 0); /* a backend ran the whole model and passed */
    assert_int_equal(rep->n_checks, 1);
    const tune_check *c = &rep->checks[0];
    bool listed = strstr(c->note, " whole") != NULL;
    for (int p = 0; p < c->n_plans; p++) listed |= c->plans[p].whole > 0;
    print_message("whole: %s (%s)\n", wm->why, c->note);
    assert_true(listed);
    tune_report_free(rep);

    /* Forced: the whole module on its fastest backend, saved and run. */
    o.plan_check = false;
    o.whole = WHOLE_FORCE;
    if (tune_run(m, h->r, &o, &rep, &e) != AIT_OK) fail_msg("%s", e.msg);
    wm = &rep->mods[rep->n - 1];
    assert_true(wm->whole && wm->chosen > 0);
    assert_string_not_equal(wm->cands[wm->chosen].cfg.backend, "reference");
    plan *p = NULL;
    if (plan_from_report(h->r, rep, &p, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(p->n_modules, 1);
    assert_string_equal(p->mods[0].name, "");
    plan_free(p);
    char art[256];
    path_in(art, sizeof art, "whole.ait");
    if (plan_save(m, h->r, rep, art, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(ait_artifact_load(art, NULL, &t, &e), AIT_OK);
    int n_out = ait_model_output_count(m);
    ait_tensor *ref[8], *got[8];
    assert_true(n_out <= 8);
    run_sample(m, h, ref, n_out);
    run_sample(t, h, got, n_out);
    assert_true(test_max_err(got, ref, n_out) < 1e-4);
    for (int j = 0; j < n_out; j++) {
        ait_tensor_free(ref[j]);
        ait_tensor_free(got[j]);
    }
    ait_model_free(t);

    /* Forced with every module's strategy only:B2, B2 the backend of the slowest valid whole
     * candidate (not the fastest's, not the reference): the whole module on B2's fastest. */
    const char *b2 = NULL;
    double slow = 0;
    for (int c = 1; c < wm->n_cands; c++)
        if (wm->cands[c].valid && strcmp(wm->cands[c].cfg.backend, "reference") &&
            strcmp(wm->cands[c].cfg.backend, wm->cands[wm->chosen].cfg.backend) &&
            wm->cands[c].prof.median > slow)
            b2 = wm->cands[c].cfg.backend, slow = wm->cands[c].prof.median;
    if (b2) {
        char want[64];
        snprintf(want, sizeof want, "%s", b2);
        for (int k = 0; k < h->sel.n; k++)
            snprintf(h->sel.items[k].strategy, sizeof h->sel.items[k].strategy, "only:%s", want);
        tune_report_free(rep);
        if (tune_run(m, h->r, &o, &rep, &e) != AIT_OK) fail_msg("%s", e.msg);
        wm = &rep->mods[rep->n - 1];
        assert_true(wm->whole && wm->chosen > 0);
        assert_string_equal(wm->cands[wm->chosen].cfg.backend, want);
        assert_int_equal(wm->chosen, tune_whole_best(wm, want));
        print_message("forced whole with only:%s: %s\n", want, wm->cands[wm->chosen].name);
    } else {
        print_message("forced whole with only:NAME: one backend passed, not checked\n");
    }
    tune_report_free(rep);
    ait_inspection_free(h);
    ait_model_free(m);
}

/* A report with every top-level module of tr chosen on backend b at batch 1. */
static tune_report *top_on(const module_tree *tr, const char *b)
{
    tune_report *rep = calloc(1, sizeof *rep);
    assert_non_null(rep);
    rep->mods = calloc((size_t)tr->n, sizeof *rep->mods);
    assert_non_null(rep->mods);
    for (int k = 1; k < tr->n; k++) {
        if (tr->mods[k].depth != 1) continue;
        tune_module *tm = &rep->mods[rep->n++];
        tm->module = k;
        tm->batch = 1;
        snprintf(tm->strategy, sizeof tm->strategy, "max-throughput");
        set_cands(tm, (const char *const[]){"reference", b}, (const double[]){1.0, 0.5});
        tm->chosen = 1;
        snprintf(tm->why, sizeof tm->why, "fixed by the test");
    }
    return rep;
}

/* Glue joined to its neighbours (modules.h) runs inside the tuned modules:
 * the keyword spotter with every top-level module on native (its input
 * Transpose, Relus, ReduceMean and Softmax inside them) gives the
 * reference's outputs at 49 frames, then 20, then 49 again: what each
 * backend schedules once per input shape follows the change of shape. */
static void test_glue_native(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *m;
    if (ait_model_load(test_data("models/kws.onnx"), &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_inspect_options io = {.size = sizeof io, .runs = 1};
    ait_inspection *h;
    if (ait_inspect(m, &io, &h, &e) != AIT_OK) fail_msg("%s", e.msg);
    const module_tree *tr = h->r->tree;
    tune_report *rep = top_on(tr, "native");
    assert_true(rep->n >= 4);
    plan *p;
    plan_exec *px = plan_in_process(h, rep, m, &p);
    int n_in = h->samples->n_inputs, n_out = ait_model_output_count(m);
    assert_true(n_in <= 8 && n_out <= 8);
    const int frames[] = {49, 20, 49};
    for (int r = 0; r < 3; r++) {
        ait_tensor *in[8], *ref[8], *got[8];
        for (int k = 0; k < n_in; k++) {
            const tensor *x = h->samples->s[0].values[k];
            int64_t dims[AIT_MAX_RANK];
            memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
            if (k == 0) dims[1] = frames[r]; /* mfcc [batch, frames, 40] */
            in[k] = test_rand_tensor(x->rank, dims);
        }
        ait_session *s;
        assert_int_equal(ait_session_create(m, NULL, &s, &e), AIT_OK);
        if (ait_session_run(s, in, n_in, ref, n_out) != AIT_OK) fail_msg("%s", ait_session_error(s));
        ait_session_free(s);
        tensor *res[8];
        if (plan_exec_run(px, in, res, &e) != AIT_OK) fail_msg("frames %d: %s", frames[r], e.msg);
        for (int j = 0; j < n_out; j++) got[j] = res[j];
        assert_int_equal(tensor_nbytes(got[0]), tensor_nbytes(ref[0]));
        double err = test_max_err(got, ref, n_out);
        if (!(err < 1e-4)) fail_msg("frames %d: max error %g", frames[r], err);
        for (int j = 0; j < n_out; j++) ait_tensor_free(ref[j]);
        for (int k = 0; k < n_in; k++) test_tensor_free(in[k]);
    }
    plan_exec_free(px);
    plan_free(p);
    tune_report_free(rep);
    ait_inspection_free(h);
    ait_model_free(m);
}

/* A scoped FPN (make_fusion_models.py's fpn_glue): the unscoped Resize
 * joins the coarse lateral's module and the Add of both levels, read by two
 * modules, the fine lateral's (modules.h), so no node runs between modules;
 * with every module on native, then on oneDNN (its Resize and ConvTranspose
 * on ait's kernels), the plan gives the untuned model's outputs. */
static void test_glue_fpn(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *m;
    if (ait_model_load(test_data("fusion/fpn_glue.onnx"), &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_inspect_options io = {.size = sizeof io, .runs = 1};
    ait_inspection *h;
    if (ait_inspect(m, &io, &h, &e) != AIT_OK) fail_msg("%s", e.msg);
    const module_tree *tr = h->r->tree;
    for (int k = 0; k < tr->mods[0].n_nodes; k++)
        fail_msg("node '%s' left between modules", m->g->nodes[tr->mods[0].nodes[k]].name);
    for (int i = 0; i < m->g->n_nodes; i++)
        if (!strcmp(m->g->nodes[i].name, "/Add"))
            assert_string_equal(tr->mods[tr->node_module[i]].name, "lat1");
    const char *const backends[] = {"native", "onednn"};
    for (int bi = 0; bi < 2; bi++) {
        tune_report *rep = top_on(tr, backends[bi]);
        assert_int_equal(rep->n, 7);
        plan *p;
        plan_exec *px = plan_in_process(h, rep, m, &p);
        int n_in = h->samples->n_inputs, n_out = ait_model_output_count(m);
        assert_true(n_in == 1 && n_out == 2);
        ait_tensor *in[1] = {test_rand_tensor(h->samples->s[0].values[0]->rank,
                                              h->samples->s[0].values[0]->dims)};
        ait_tensor *ref[2], *got[2];
        ait_session *s;
        assert_int_equal(ait_session_create(m, NULL, &s, &e), AIT_OK);
        if (ait_session_run(s, in, 1, ref, n_out) != AIT_OK) fail_msg("%s", ait_session_error(s));
        ait_session_free(s);
        tensor *res[2];
        if (plan_exec_run(px, in, res, &e) != AIT_OK) fail_msg("%s: %s", backends[bi], e.msg);
        for (int j = 0; j < n_out; j++) got[j] = res[j];
        double err = test_max_err(got, ref, n_out);
        if (!(err < 1e-4)) fail_msg("%s: max error %g", backends[bi], err);
        for (int j = 0; j < n_out; j++) ait_tensor_free(ref[j]);
        test_tensor_free(in[0]);
        plan_exec_free(px);
        plan_free(p);
        tune_report_free(rep);
    }
    ait_inspection_free(h);
    ait_model_free(m);
}

/* JIT: the first run tunes, the outputs stay right, the tuning saves. */
static void test_jit(void **state)
{
    (void)state;
    ait_error e = {0};
    ait_model *m, *t;
    assert_int_equal(ait_model_load(model_path, &m, &e), AIT_OK);
    ait_session *s;
    ait_session_options so = {.size = sizeof so, .threads = 1, .jit = 1, .cache_dir = cache};
    assert_int_equal(ait_session_create(m, &so, &s, &e), AIT_OK);
    char art[256];
    path_in(art, sizeof art, "jit.ait");
    assert_int_not_equal(ait_session_save(s, art, &e), AIT_OK); /* not tuned yet */
    assert_string_equal(ait_session_note(s), "");
    int n_out = ait_model_output_count(m);
    ait_tensor *in[2], *got[8], *ref[8];
    make_inputs(1, in);
    if (ait_session_run(s, in, 2, got, n_out) != AIT_OK) fail_msg("%s", ait_session_error(s));
    assert_non_null(strstr(ait_session_note(s), "JIT: tuned"));
    run_model(m, 1, ref, n_out);
    assert_true(test_max_err(got, ref, n_out) < 1e-4);
    if (ait_session_save(s, art, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(ait_model_load(art, &t, &e), AIT_OK);
    assert_true(ait_model_is_tuned(t));
    for (int j = 0; j < n_out; j++) {
        ait_tensor_free(got[j]);
        ait_tensor_free(ref[j]);
    }
    ait_tensor_free(in[0]);
    ait_tensor_free(in[1]);
    ait_model_free(t);
    ait_session_free(s);
    ait_model_free(m);
}

/* Copies file src to dst (a sample into a folder of samples). */
static void copy_file(const char *src, const char *dst)
{
    FILE *f = fopen(src, "rb"), *g = fopen(dst, "wb");
    assert_non_null(f);
    assert_non_null(g);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) assert_int_equal(fwrite(buf, 1, n, g), n);
    fclose(f);
    fclose(g);
}

/* Inputs of the gpt2 test model at (batch 1, seq, past): ids and 4 caches. */
static int bucket_at(const plan *p, int seq, int past)
{
    tensor t[5] = {0}, *in[5];
    tensor_set_shape(&t[0], AIT_I64, 2, (const int64_t[]){1, seq});
    for (int i = 1; i < 5; i++) tensor_set_shape(&t[i], AIT_F32, 4, (const int64_t[]){1, 4, past, 32});
    for (int i = 0; i < 5; i++) in[i] = &t[i];
    return plan_bucket_index(p, in, 5);
}

/* A decoder tuned on a decode and a prefill sample: two (batch, seq, past)
 * buckets with a plan each, saved, loaded with both primed, runs picking
 * theirs by the nearest rule and giving the untuned model's outputs. */
static void test_decoder_buckets(void **state)
{
    (void)state;
    ait_error e = {0};
    char sd[256], dst[320], art[256];
    snprintf(sd, sizeof sd, "%s/gpt2s", dir);
    assert_int_equal(mkdir(sd, 0700), 0);
    for (int k = 0; k < 2; k++) {
        char src[64];
        snprintf(src, sizeof src, "models/gpt2.in.%d.npz", k);
        snprintf(dst, sizeof dst, "%s/%d.npz", sd, k);
        copy_file(test_data(src), dst);
    }
    ait_model *m, *t;
    if (ait_model_load(test_data("models/gpt2.onnx"), &m, &e) != AIT_OK) fail_msg("%s", e.msg);
    ait_inspect_options io = {.size = sizeof io, .data_path = sd, .runs = 1};
    ait_inspection *h;
    if (ait_inspect(m, &io, &h, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(ait_select_path(h, "h.0", NULL), AIT_OK);
    ait_tuning *tu;
    const int down[] = {128, 1};
    ait_tune_options bad = {.size = sizeof bad, .seq_buckets = down, .n_seq_buckets = 2};
    assert_int_equal(ait_tune(h, &bad, &tu, &e), AIT_E_INVALID_ARG);
    assert_non_null(strstr(e.msg, "seq bucket 1 (1) is not above the one before"));
    ait_tune_options o = {.size = sizeof o, .warmup = 1, .window = 2, .cap = 3, .cv = 0.5,
                          .skip_whole = 1, .skip_plan_check = 1};
    if (ait_tune(h, &o, &tu, &e) != AIT_OK) fail_msg("%s", e.msg);
    /* Each sample timed in its own bucket: decode (seq 1, past 127 -> 128)
     * and prefill (seq 8, past 16), both at batch bucket 1. */
    assert_int_equal(ait_tuning_count(tu), 2);
    ait_tuning_row r0, r1;
    assert_int_equal(ait_tuning_row_at(tu, 0, &r0), AIT_OK);
    assert_int_equal(ait_tuning_row_at(tu, 1, &r1), AIT_OK);
    assert_int_equal(r0.bucket, 1);
    assert_int_equal(r0.seq, 1);
    assert_int_equal(r0.past, 128);
    assert_int_equal(r1.seq, 8);
    assert_int_equal(r1.past, 16);
    assert_true(r0.median_sec > 0 && r1.median_sec > 0);
    path_in(art, sizeof art, "gpt2.ait");
    if (ait_tuning_save(tu, art, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(ait_artifact_load(art, NULL, &t, &e), AIT_OK);
    const plan *p = t->plan;
    assert_non_null(p);
    assert_int_equal(p->n_buckets, 2);
    assert_int_equal(p->buckets[0].seq, 1);
    assert_int_equal(p->buckets[0].past, 128);
    assert_int_equal(p->buckets[1].seq, 8);
    assert_int_equal(p->buckets[1].past, 16);
    /* Primed at each bucket's largest shape: seq and past at the bucket's. */
    assert_int_equal(p->n_inputs, 5);
    assert_int_equal(p->inputs[0].dims[1], 1);
    assert_int_equal(p->inputs[1].dims[2], 128);
    assert_int_equal(p->inputs[5].dims[1], 8);
    assert_int_equal(p->inputs[5 + 4].dims[2], 16);
    plan_exec *px;
    if (plan_exec_create(t->g, p, 1, NULL, &px, &e) != AIT_OK) fail_msg("%s", e.msg);
    assert_int_equal(plan_exec_primed(px), 2);
    plan_exec_free(px);
    /* The nearest rule: the smallest bucket at or above, else the largest. */
    assert_int_equal(bucket_at(p, 1, 100), 0);
    assert_int_equal(bucket_at(p, 1, 600), 0);
    assert_int_equal(bucket_at(p, 2, 10), 1);
    assert_int_equal(bucket_at(p, 300, 0), 1);
    /* Each bucket's run gives the untuned model's outputs. */
    int n_out = ait_model_output_count(m);
    for (int k = 0; k < 2; k++) {
        ait_tensor *ref[8], *tuned[8], *in[8];
        int n_in = h->samples->n_inputs;
        for (int i = 0; i < n_in; i++) in[i] = h->samples->s[k].values[i];
        ait_session *s;
        const ait_model *ms[2] = {m, t};
        for (int v = 0; v < 2; v++) {
            assert_int_equal(ait_session_create(ms[v], NULL, &s, &e), AIT_OK);
            if (ait_session_run(s, in, n_in, v ? tuned : ref, n_out) != AIT_OK)
                fail_msg("%s", ait_session_error(s));
            ait_session_free(s);
        }
        assert_true(test_max_err(tuned, ref, n_out) < 1e-4);
        for (int j = 0; j < n_out; j++) {
            ait_tensor_free(ref[j]);
            ait_tensor_free(tuned[j]);
        }
    }
    ait_model_free(t);
    ait_tuning_free(tu);
    ait_inspection_free(h);
    ait_model_free(m);
}

int main(void)
{
    snprintf(model_path, sizeof model_path, "%s", test_data("models/bert.onnx"));
    snprintf(dir, sizeof dir, "/tmp/ait-plan-test-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    snprintf(cache, sizeof cache, "%s/cache", dir); /* JIT caches; never in ~/.cache */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_native_round_trip),
        cmocka_unit_test(test_onednn_round_trip),
        cmocka_unit_test(test_baseline_inline),
        cmocka_unit_test(test_borrowed_weights),
        cmocka_unit_test(test_plan_check),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_fallback_signature),
        cmocka_unit_test(test_public_api),
        cmocka_unit_test(test_whole),
        cmocka_unit_test(test_glue_native),
        cmocka_unit_test(test_glue_fpn),
        cmocka_unit_test(test_jit),
        cmocka_unit_test(test_decoder_buckets),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) rc = 1;
    return rc;
}

#include "testutil.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ops/op.h"

static const char *under(const char *var, const char *dflt, const char *rel)
{
    static char bufs[4][4096];
    static int k;
    char *b = bufs[k++ % 4];
    const char *d = getenv(var);
    snprintf(b, sizeof bufs[0], "%s/%s", d && *d ? d : dflt, rel);
    return b;
}

const char *test_data(const char *rel) { return under("AIT_TEST_DATA", "build-data", rel); }
const char *test_bad(const char *rel) { return under("AIT_BAD_DIR", "build-data/bad", rel); }

ait_model *test_load(const char *path)
{
    ait_model *m = NULL;
    ait_error e = {0};
    if (ait_model_load(path, &m, &e) != AIT_OK) fail_msg("%s: %s", path, e.msg);
    return m;
}

tensor *test_tensor(ait_dtype dt, int rank, const int64_t *dims)
{
    tensor *t = calloc(1, sizeof *t);
    ait_error e = {0};
    assert_non_null(t);
    tensor_set_shape(t, dt, rank, dims);
    if (tensor_alloc(t, &e) != AIT_OK) fail_msg("%s", e.msg);
    return t;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

float test_frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

tensor *test_rand_tensor(int rank, const int64_t *dims)
{
    tensor *t = test_tensor(AIT_F32, rank, dims);
    float *p = t->data;
    for (int64_t i = 0; i < tensor_numel(t); i++) p[i] = test_frand();
    return t;
}

void test_tensor_free(tensor *t)
{
    if (!t) return;
    tensor_release(t);
    free(t);
}

char *test_tmp_dir(const char *tag)
{
    char *d = malloc(256);
    assert_non_null(d);
    snprintf(d, 256, "/tmp/ait-%s-XXXXXX", tag);
    assert_non_null(mkdtemp(d));
    return d;
}

bool test_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

long test_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

double test_max_err(ait_tensor *const *a, ait_tensor *const *b, int n)
{
    double worst = 0;
    for (int j = 0; j < n; j++) {
        assert_int_equal(ait_tensor_numel(a[j]), ait_tensor_numel(b[j]));
        const float *x = ait_tensor_data(a[j]), *y = ait_tensor_data(b[j]);
        for (int64_t i = 0; i < ait_tensor_numel(a[j]); i++)
            worst = fmax(worst, fabs(x[i] - y[i]) / (1 + fabs(y[i])));
    }
    return worst;
}

void test_capture_start(test_capture *c)
{
    snprintf(c->path, sizeof c->path, "/tmp/ait-capture-XXXXXX");
    c->fd = mkstemp(c->path);
    assert_true(c->fd >= 0);
    fflush(stdout);
    fflush(stderr);
    c->keep1 = dup(1);
    c->keep2 = dup(2);
    assert_true(c->keep1 >= 0 && c->keep2 >= 0);
    assert_true(dup2(c->fd, 1) == 1 && dup2(c->fd, 2) == 2);
}

long test_capture_stop(test_capture *c, char *buf, size_t n)
{
    fflush(stdout);
    fflush(stderr);
    dup2(c->keep1, 1);
    dup2(c->keep2, 2);
    close(c->keep1);
    close(c->keep2);
    long size = (long)lseek(c->fd, 0, SEEK_END);
    ssize_t got = n ? pread(c->fd, buf, n - 1, 0) : 0;
    if (n) buf[got > 0 ? got : 0] = 0;
    close(c->fd);
    unlink(c->path);
    return size;
}

void test_node_def(node *n, const char *op, int opset)
{
    n->def = op_find("", op);
    const op_versions *v = op_versions_find("", op);
    if (!n->def || !v) fail_msg("op %s is not registered", op);
    n->version = op_version_resolve(v, opset);
}

node *test_node_append(graph *g, const char *name, const char *op, int max_in)
{
    node *nodes = realloc(g->nodes, sizeof *nodes * (size_t)(g->n_nodes + 1));
    assert_non_null(nodes);
    g->nodes = nodes;
    g->cap_nodes = g->n_nodes + 1;
    node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = strdup(name);
    n->op = strdup(op);
    n->domain = strdup("");
    n->in = calloc((size_t)max_in + 1, sizeof(int));
    n->out = calloc(1, sizeof(int));
    assert_true(n->name && n->op && n->domain && n->in && n->out);
    return n;
}

ait_model *test_tune_quick(const ait_model *m, const ait_inspect_options *io,
                           const char *const *select, const char *path, char *why, size_t n)
{
    ait_tune_options to = {.size = sizeof to, .warmup = 1, .window = 2, .cap = 3, .cv = 0.5,
                           .skip_plan_check = 1, .skip_whole = 1};
    ait_inspection *r = NULL;
    ait_tuning *t = NULL;
    ait_model *out = NULL;
    ait_error e = {0};
    bool ok = ait_inspect(m, io, &r, &e) == AIT_OK;
    for (int k = 0; ok && select && select[k]; k += 2)
        ok = ait_select_path(r, select[k], select[k + 1]) == AIT_OK;
    if (ok && ait_tune(r, &to, &t, &e) == AIT_OK && ait_tuning_save(t, path, &e) == AIT_OK)
        (void)ait_artifact_load(path, NULL, &out, &e);
    if (!out) snprintf(why, n, "%s", e.msg[0] ? e.msg : r ? ait_inspection_error(r) : "");
    ait_tuning_free(t);
    ait_inspection_free(r);
    return out;
}

bool test_check(bool c, int *failures, const char *file, int line, const char *fmt, ...)
{
    if (c) return true;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    (*failures)++;
    return false;
}

/* What the tests share: where the test data is, loading a model or failing
 * the test, tensors (zeroed, random, freed), files and folders, and how far
 * two sets of outputs are apart. Every ait_test program links testutil.c.
 * Functions that fail call cmocka's fail_msg, so they belong in test bodies. */
#ifndef AIT_TESTUTIL_H
#define AIT_TESTUTIL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ait.h"
#include "core/tensor.h"
#include "graph/graph.h"

/* DIR/rel in a static buffer (four in rotation), DIR the folder of the
 * exported test models (AIT_TEST_DATA, which tests/CMakeLists.txt sets; else
 * build-data) or of the bad-input files (AIT_BAD_DIR; else build-data/bad). */
const char *test_data(const char *rel);
const char *test_bad(const char *rel);

/* The model at path, or the test fails with the loader's message. */
ait_model *test_load(const char *path);

/* A tensor of dtype dt and shape dims with zeroed storage; and one of
 * float32 values uniform in [-1, 1) from the tests' fixed-seed generator. */
tensor *test_tensor(ait_dtype dt, int rank, const int64_t *dims);
tensor *test_rand_tensor(int rank, const int64_t *dims);
/* The next value in [-1, 1) of that generator (xorshift: the same sequence
 * on every run). */
float test_frand(void);
/* Frees a tensor made above (NULL is fine). */
void test_tensor_free(tensor *t);

/* A new empty folder under /tmp named after tag (caller frees the path). */
char *test_tmp_dir(const char *tag);
bool test_exists(const char *path);
/* The file's size, -1 when it does not exist. */
long test_file_size(const char *path);

/* What the process writes to stdout and stderr between start and stop goes
 * to a temporary file instead; stop restores both, removes the file and
 * returns what was written (at most n - 1 bytes into buf, NUL-ended) and
 * its length. */
typedef struct test_capture {
    char path[64];
    int fd, keep1, keep2;
} test_capture;
void test_capture_start(test_capture *c);
long test_capture_stop(test_capture *c, char *buf, size_t n);

/* The largest |a - b| / (1 + |b|) over n float32 output pairs, which must
 * have the same element counts. */
double test_max_err(ait_tensor *const *a, ait_tensor *const *b, int n);

/* m tuned quickly (one timed run per sample, a window of 2, no whole-plan
 * checks) on the samples io names, with select's "PATH", "STRATEGY" pairs
 * (NULL-ended; NULL: none) applied first, saved at path and loaded back;
 * NULL on failure, with the reason in why (n bytes). */
ait_model *test_tune_quick(const ait_model *m, const ait_inspect_options *io,
                           const char *const *select, const char *path, char *why, size_t n);

/* For graphs built in memory: gives node n (default domain) the op `op` and
 * the version it resolves to at `opset`, as the loader would; fails the
 * test when the op is not registered. */
void test_node_def(node *n, const char *op, int opset);
/* Appends a zeroed node `name` (op, default domain) to g with room for
 * max_in inputs and one output, none set; or the test fails. */
node *test_node_append(graph *g, const char *name, const char *op, int max_in);

/* For the test programs that run without cmocka (each a process of its own):
 * when c is false, prints "FAIL file:line: " and the message to stderr and
 * counts one failure in *failures. Returns c. */
bool test_check(bool c, int *failures, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define TEST_CHECK(c, failures, ...) test_check((c), (failures), __FILE__, __LINE__, __VA_ARGS__)

#endif

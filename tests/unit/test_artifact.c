/* The .ait container: SHA-256 vectors, the CPU signature, a round trip
 * checked by `sha256sum -c`, and every refusal: each byte changed, cut
 * short, crafted sizes, another model, a missing CPU feature, a failed
 * write and a save killed midway. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "core/cpu.h"
#include "core/tensor.h"
#include "io/artifact.h"
#include "io/sha256.h"

static char dir[64];

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

/* ---- SHA-256 ------------------------------------------------------------ */

static void expect_hex(const void *data, size_t len, const char *want)
{
    uint8_t d[SHA256_BYTES];
    char hex[SHA256_HEX];
    sha256(data, len, d);
    sha256_hex(d, hex);
    assert_string_equal(hex, want);
}

static void test_sha256_vectors(void **state)
{
    expect_hex("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect_hex("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    expect_hex(m448, strlen(m448),
               "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    expect_hex(a, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* Streaming in uneven pieces gives the same digest as one call. */
    sha256_ctx c;
    sha256_init(&c);
    size_t pos = 0, step = 1;
    while (pos < 1000000) {
        size_t k = step < 1000000 - pos ? step : 1000000 - pos;
        sha256_update(&c, a + pos, k);
        pos += k, step = step * 3 % 1000 + 1;
    }
    uint8_t d[SHA256_BYTES];
    char hex[SHA256_HEX];
    sha256_final(&c, d);
    sha256_hex(d, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* And a file of it. */
    char p[128];
    path_in(p, sizeof p, "million_a");
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(a, 1, 1000000, f), 1000000);
    fclose(f);
    ait_error e = {0};
    assert_int_equal(sha256_file(p, hex, &e), AIT_OK);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    assert_int_equal(sha256_file("/nonexistent/x", hex, &e), AIT_E_IO);
    assert_non_null(strstr(e.msg, "/nonexistent/x"));
    unlink(p);
    free(a);
}

/* ---- CPU ---------------------------------------------------------------- */

static void test_cpu(void **state)
{
    char feats[1024], model[128], missing[64];
    size_t len = cpu_features(feats, sizeof feats);
    assert_int_equal(len, strlen(feats));
    cpu_model(model, sizeof model);
    assert_true(model[0] != 0);
    assert_true(cpu_has_all(feats, missing, sizeof missing));
    assert_true(cpu_has_all("", missing, sizeof missing));
    assert_true(cpu_has_all(NULL, missing, sizeof missing));
    assert_false(cpu_has_all("avx9000", missing, sizeof missing));
    assert_string_equal(missing, "avx9000");
    char req[1100];
    snprintf(req, sizeof req, "%s%savx9000,sse4.2", feats, feats[0] ? ", " : "");
    assert_false(cpu_has_all(req, missing, sizeof missing));
    assert_string_equal(missing, "avx9000");
    /* A short buffer holds whole names only. */
    char small[8];
    cpu_features(small, sizeof small);
    assert_true(strlen(small) < sizeof small);
    if (small[0]) assert_non_null(strstr(feats, small));
    /* A list put in the table's order, once each, unknown names left out. */
    char canon[128];
    assert_int_equal(cpu_features_of("fma,avx9000,avx2,fma,sse4.2", canon, sizeof canon),
                     strlen("sse4.2,fma,avx2"));
    assert_string_equal(canon, "sse4.2,fma,avx2");
    cpu_features_of("", canon, sizeof canon);
    assert_string_equal(canon, "");
    cpu_features_of(NULL, canon, sizeof canon);
    assert_string_equal(canon, "");
}

/* ---- writing and reading ------------------------------------------------ */

static const char manifest[] = "{\"model\":\"test\",\"modules\":[1,2,3]}";

static uint8_t big[5000], small3[3];

/* Writes the test artifact at p (manifest, a 3-byte, an empty and a
 * 5000-byte blob) recording model hash `model` and CPU features `cpu`. */
static ait_status write_test(const char *p, const char *model, const char *cpu, ait_error *e)
{
    for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 7 + 1);
    memcpy(small3, "xyz", 3);
    artifact_info info = {.model_hash = model, .cpu_features = cpu};
    artifact_writer *w;
    TRY(artifact_writer_begin(p, &info, &w, e));
    ait_status s = artifact_writer_manifest(w, manifest, strlen(manifest), e);
    if (s == AIT_OK) s = artifact_writer_blob(w, "layer1.0/w", small3, 3, e);
    if (s == AIT_OK) s = artifact_writer_blob(w, "empty", NULL, 0, e);
    if (s == AIT_OK) s = artifact_writer_blob(w, "big", big, sizeof big, e);
    if (s != AIT_OK) {
        artifact_writer_free(w);
        return s;
    }
    return artifact_writer_finish(w, e);
}

static void test_round_trip(void **state)
{
    char p[128], sums[128], cmd[512];
    path_in(p, sizeof p, "rt.ait");
    ait_error e = {0};
    assert_int_equal(write_test(p, "ab12", NULL, &e), AIT_OK);
    artifact *a;
    artifact_expect x = {.model_hash = "ab12"};
    assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
    size_t mlen;
    const uint8_t *m = artifact_manifest(a, &mlen);
    assert_int_equal(mlen, strlen(manifest));
    assert_memory_equal(m, manifest, mlen);
    assert_int_equal(artifact_blob_count(a), 3);
    const artifact_blob *b0 = artifact_blob_at(a, 0), *b1 = artifact_blob_find(a, "empty"),
                        *b2 = artifact_blob_find(a, "big");
    assert_non_null(b1);
    assert_non_null(b2);
    assert_null(artifact_blob_find(a, "nope"));
    assert_null(artifact_blob_at(a, 3));
    assert_string_equal(b0->name, "layer1.0/w");
    assert_int_equal(b0->size, 3);
    assert_memory_equal(b0->data, "xyz", 3);
    assert_int_equal(b1->size, 0);
    assert_int_equal(b2->size, sizeof big);
    assert_memory_equal(b2->data, big, sizeof big);
    size_t mapbase = (size_t)(artifact_manifest(a, &mlen) - 512);
    assert_int_equal(mapbase % 4096, 0);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal((size_t)(artifact_blob_at(a, i)->data - (const uint8_t *)mapbase) % 4096,
                         0);
        assert_int_equal(artifact_blob_verify(a, i, &e), AIT_OK);
    }
    assert_string_equal(artifact_model_hash(a), "ab12");
    assert_string_equal(artifact_ait_version(a), AIT_VERSION_STRING);
    char feats[1024];
    cpu_features(feats, sizeof feats);
    assert_string_equal(artifact_cpu_needed(a), feats);
    artifact_close(a);
    artifact_close(NULL);
    artifact_writer_free(NULL);

    /* The sums file sits beside it and sha256sum agrees. */
    assert_int_equal(artifact_sums_path(p, sums, sizeof sums, &e), AIT_OK);
    char want[128];
    path_in(want, sizeof want, "rt_sha256_sums.txt");
    assert_string_equal(sums, want);
    assert_true(test_exists(sums));
    snprintf(cmd, sizeof cmd, "cd %s && sha256sum -c --quiet rt_sha256_sums.txt", dir);
    assert_int_equal(system(cmd), 0);
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
    assert_false(test_exists(tmp));

    /* No manifest and no blobs is a valid (empty) artifact too. */
    artifact_writer *w;
    assert_int_equal(artifact_writer_begin(p, NULL, &w, &e), AIT_OK);
    assert_int_equal(artifact_writer_finish(w, &e), AIT_OK);
    assert_int_equal(artifact_open(p, NULL, &a, &e), AIT_OK);
    assert_int_equal(artifact_blob_count(a), 0);
    artifact_manifest(a, &mlen);
    assert_int_equal(mlen, 0);
    artifact_close(a);
    assert_int_equal(system(cmd), 0);
}

static void test_writer_errors(void **state)
{
    char p[128];
    path_in(p, sizeof p, "bad.ait");
    ait_error e = {0};
    artifact_writer *w;
    assert_int_equal(artifact_writer_begin("", NULL, &w, &e), AIT_E_INVALID_ARG);
    char longname[300];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    artifact_info info = {.model_hash = longname};
    assert_int_equal(artifact_writer_begin(p, &info, &w, &e), AIT_E_INVALID_ARG);
    assert_non_null(strstr(e.msg, "model hash"));
    assert_int_equal(artifact_writer_begin(p, NULL, &w, &e), AIT_OK);
    assert_int_equal(artifact_writer_blob(w, "a", "1", 1, &e), AIT_OK);
    assert_int_equal(artifact_writer_blob(w, "a", "1", 1, &e), AIT_E_INVALID_ARG);
    assert_non_null(strstr(e.msg, "two blobs named 'a'"));
    assert_int_equal(artifact_writer_blob(w, "", "1", 1, &e), AIT_E_INVALID_ARG);
    assert_int_equal(artifact_writer_blob(w, longname, "1", 1, &e), AIT_E_INVALID_ARG);
    artifact_writer_free(w);

    /* A failed write (here the rename: the final path is a folder) leaves no temp file. */
    char sub[128], tmp[160];
    path_in(sub, sizeof sub, "adir.ait");
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(write_test(sub, "", NULL, &e), AIT_E_IO);
    assert_non_null(strstr(e.msg, sub));
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", sub, (long)getpid());
    assert_false(test_exists(tmp));
    rmdir(sub);
    /* A folder that does not exist: refused, nothing created. */
    assert_int_equal(write_test("/nonexistent/dir/x.ait", "", NULL, &e), AIT_E_IO);
    assert_non_null(strstr(e.msg, "/nonexistent/dir/x.ait"));
}

/* ---- refusals ----------------------------------------------------------- */

/* Opens p expecting a refusal whose message names p and contains `what`:
 * read into memory (x as given), then the file mapped in place (map_file),
 * whole and with the blobs read one by one (defer_blob_read): the mapping
 * refuses all that the copy refuses, with the same message. */
static void expect_refused(const char *p, const artifact_expect *x, const char *what)
{
    artifact_expect given = x ? *x : (artifact_expect){0};
    for (int mode = 0; mode < 3; mode++) {
        artifact_expect m = given;
        if (mode) m.map_file = 1;
        if (mode == 2) m.defer_blob_read = 1;
        ait_error e = {0};
        artifact *a = NULL;
        ait_status s = artifact_open(p, mode ? &m : x, &a, &e);
        if (s == AIT_OK && mode == 2) { /* refused when the blobs are read, or not at all */
            s = artifact_blob_read_rest(a, &e);
            artifact_close(a);
            a = NULL;
        }
        if (s == AIT_OK)
            fail_msg("%s opened but should be refused (%s; %s)", p, what ? what : "",
                     mode == 0 ? "copied" : mode == 1 ? "mapped" : "mapped, blobs read later");
        assert_null(a);
        assert_non_null(strstr(e.msg, p));
        if (what && !strstr(e.msg, what)) fail_msg("message '%s' lacks '%s'", e.msg, what);
    }
}

static void test_every_byte(void **state)
{
    char p[128];
    path_in(p, sizeof p, "flip.ait");
    ait_error e = {0};
    assert_int_equal(write_test(p, "ab12", NULL, &e), AIT_OK);
    long n = test_file_size(p);
    assert_true(n > 3 * 4096);
    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    for (long i = 0; i < n; i++) {
        uint8_t c;
        assert_int_equal(pread(fd, &c, 1, i), 1);
        uint8_t f = c ^ (uint8_t)(1u << (i % 8));
        assert_int_equal(pwrite(fd, &f, 1, i), 1);
        expect_refused(p, NULL, NULL);
        assert_int_equal(pwrite(fd, &c, 1, i), 1);
    }
    close(fd);
    artifact *a;
    assert_int_equal(artifact_open(p, NULL, &a, &e), AIT_OK);
    artifact_close(a);

    /* The messages say what is wrong. Blob 'big' starts at 3*4096. */
    fd = open(p, O_RDWR);
    uint8_t c, f;
    assert_int_equal(pread(fd, &c, 1, 3 * 4096 + 10), 1);
    f = c ^ 1;
    assert_int_equal(pwrite(fd, &f, 1, 3 * 4096 + 10), 1);
    expect_refused(p, NULL, "blob 'big' sha256 mismatch (file corrupted)");
    /* Deferred hashing opens it, and the check names the blob later. */
    artifact_expect x = {.defer_blob_hash = 1};
    assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
    assert_int_equal(artifact_blob_verify(a, 0, &e), AIT_OK);
    assert_int_equal(artifact_blob_verify(a, 2, &e), AIT_E_SECURITY);
    assert_non_null(strstr(e.msg, "blob 'big' sha256 mismatch"));
    artifact_close(a);
    assert_int_equal(pwrite(fd, &c, 1, 3 * 4096 + 10), 1);
    assert_int_equal(pread(fd, &c, 1, 520), 1); /* in the manifest */
    f = c ^ 1;
    assert_int_equal(pwrite(fd, &f, 1, 520), 1);
    expect_refused(p, NULL, "manifest sha256 mismatch");
    assert_int_equal(pwrite(fd, &c, 1, 520), 1);
    assert_int_equal(pwrite(fd, "X", 1, 0), 1);
    expect_refused(p, NULL, "not an ait artifact");
    assert_int_equal(pwrite(fd, "A", 1, 0), 1);
    assert_int_equal(pwrite(fd, "\x02", 1, 8), 1);
    expect_refused(p, NULL, "format version 2");
    assert_int_equal(pwrite(fd, "\x01", 1, 8), 1);
    close(fd);
}

static void test_truncated(void **state)
{
    char p[128], q[128];
    path_in(p, sizeof p, "full.ait");
    path_in(q, sizeof q, "cut.ait");
    ait_error e = {0};
    assert_int_equal(write_test(p, "", NULL, &e), AIT_OK);
    long n = test_file_size(p);
    uint8_t *buf = malloc((size_t)n);
    FILE *f = fopen(p, "rb");
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    long cuts[] = {0, 1, 7, 8, 100, 511, 512, 600, 4096, 8192, 3 * 4096, n - 4096, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        f = fopen(q, "wb");
        assert_int_equal(fwrite(buf, 1, (size_t)cuts[i], f), (size_t)cuts[i]);
        fclose(f);
        expect_refused(q, NULL, "truncated");
    }
    char msg[128];
    snprintf(msg, sizeof msg, "truncated (header says %ld bytes, file has %ld)", n, n - 1);
    expect_refused(q, NULL, msg);
    /* One byte too many is refused as well. */
    f = fopen(q, "wb");
    fwrite(buf, 1, (size_t)n, f);
    fputc(0, f);
    fclose(f);
    expect_refused(q, NULL, "after the end");
    free(buf);
    expect_refused("/nonexistent/a.ait", NULL, "cannot open");
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Header fields a crafted file could set, with a valid header checksum:
 * refused from the sizes alone, no read past the end. */
static void test_crafted(void **state)
{
    char p[128], q[128];
    path_in(p, sizeof p, "src.ait");
    path_in(q, sizeof q, "crafted.ait");
    ait_error e = {0};
    assert_int_equal(write_test(p, "", NULL, &e), AIT_OK);
    long n = test_file_size(p);
    uint8_t *buf = malloc((size_t)n);
    FILE *f = fopen(p, "rb");
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    static const struct {
        int field;
        uint64_t v;
    } cases[] = {
        {360, UINT64_MAX},
        {360, UINT64_MAX - 600},
        {360, 1u << 20},
        {400, 0},
        {400, UINT64_MAX - 7},
        {408, UINT64_MAX / 256},
        {408, UINT64_MAX},
        {408, 1000},
        {416, UINT64_MAX},
        {416, 0},
        {416, 512},
        {352, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *c = malloc((size_t)n);
        memcpy(c, buf, (size_t)n);
        put64(c + cases[i].field, cases[i].v);
        sha256(c, 480, c + 480);
        f = fopen(q, "wb");
        fwrite(c, 1, (size_t)n, f);
        fclose(f);
        expect_refused(q, NULL, NULL);
        free(c);
    }
    /* A blob entry pointing past the end, with table and header sums fixed. */
    uint8_t *c = malloc((size_t)n);
    memcpy(c, buf, (size_t)n);
    uint64_t tab = 0;
    for (int i = 7; i >= 0; i--) tab = tab << 8 | c[400 + i];
    put64(c + tab + 2 * 256 + 216, UINT64_MAX - 100); /* 'big' length */
    sha256(c + tab, 3 * 256, c + 424);
    sha256(c, 480, c + 480);
    f = fopen(q, "wb");
    fwrite(c, 1, (size_t)n, f);
    fclose(f);
    expect_refused(q, NULL, "blob 'big' lies outside the file");
    free(c);
    free(buf);
}

static void test_wrong_model(void **state)
{
    char p[128];
    path_in(p, sizeof p, "model.ait");
    ait_error e = {0};
    assert_int_equal(write_test(p, "ab12", NULL, &e), AIT_OK);
    artifact_expect x = {.model_hash = "cd34"};
    expect_refused(p, &x, "made from model sha256 ab12, this model is cd34");
}

static void test_missing_cpu_feature(void **state)
{
    char p[128];
    path_in(p, sizeof p, "cpu.ait");
    ait_error e = {0};
    assert_int_equal(write_test(p, "", "sse4.2,avx9000", &e), AIT_OK);
    expect_refused(p, NULL, "needs CPU feature avx9000, which this machine lacks");
    artifact_expect x = {.skip_cpu_check = 1};
    artifact *a;
    assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
    assert_string_equal(artifact_cpu_needed(a), "sse4.2,avx9000");
    artifact_close(a);
}

/* ---- a save killed midway ----------------------------------------------- */

static void kill_after(void *ctx, size_t index, size_t count)
{
    if (index == *(size_t *)ctx) raise(SIGKILL);
}

static pid_t last_dead; /* the pid of the last killed save */

/* In a child: writes 40 blobs of 64 KiB at p and is killed after blob `at`. */
static void killed_save(const char *p, size_t at)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static uint8_t data[65536];
        memset(data, 0x5a, sizeof data);
        artifact_info info = {.on_blob = kill_after, .ctx = &at};
        artifact_writer *w;
        if (artifact_writer_begin(p, &info, &w, NULL) != AIT_OK) _exit(2);
        artifact_writer_manifest(w, "{\"new\":1}", 9, NULL);
        for (int i = 0; i < 40; i++) {
            char name[32];
            snprintf(name, sizeof name, "blob%d", i);
            artifact_writer_blob(w, name, data, sizeof data, NULL);
        }
        artifact_writer_finish(w, NULL);
        _exit(3); /* not reached: killed in finish */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* It wrote into an unnamed O_TMPFILE: it leaves nothing behind. */
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)pid);
    assert_false(test_exists(tmp));
    /* Where O_TMPFILE is missing, or a kill fell between link and rename, a named
     * temporary of a dead process remains: the next save removes it. */
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fclose(f);
    last_dead = pid;
}

static void test_killed_save(void **state)
{
    char p[128], sums[128], cmd[256];
    ait_error e = {0};
    /* No previous artifact: nothing appears under the final name. */
    path_in(p, sizeof p, "killed.ait");
    killed_save(p, 10);
    assert_false(test_exists(p));
    assert_int_equal(artifact_sums_path(p, sums, sizeof sums, &e), AIT_OK);
    assert_false(test_exists(sums));
    /* A previous artifact stays whole and still matches its sums. */
    assert_int_equal(write_test(p, "old", NULL, &e), AIT_OK);
    killed_save(p, 0);
    killed_save(p, 39);
    char stale[160], live[160];
    snprintf(stale, sizeof stale, "%s.tmp.%ld", p, (long)last_dead);
    snprintf(live, sizeof live, "%s.tmp.%ld", p, (long)getppid()); /* an owner alive */
    FILE *f = fopen(live, "w");
    assert_non_null(f);
    fclose(f);
    artifact *a;
    assert_int_equal(artifact_open(p, NULL, &a, &e), AIT_OK);
    assert_string_equal(artifact_model_hash(a), "old");
    artifact_close(a);
    assert_true(test_exists(stale));
    assert_int_equal(write_test(p, "old", NULL, &e), AIT_OK); /* the next save cleans up */
    assert_false(test_exists(stale));
    assert_true(test_exists(live));
    unlink(live);
    assert_int_equal(artifact_open(p, NULL, &a, &e), AIT_OK);
    assert_string_equal(artifact_model_hash(a), "old");
    assert_int_equal(artifact_blob_count(a), 3);
    artifact_close(a);
    snprintf(cmd, sizeof cmd, "cd %s && sha256sum -c --quiet killed_sha256_sums.txt", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- publishing and independence from the file -------------------------- */

/* 20 processes save different artifacts to one name at once: the sums file
 * always matches the artifact that won, and no temporary remains. */
static void test_concurrent_saves(void **state)
{
    char p[128], cmd[512];
    path_in(p, sizeof p, "race.ait");
    for (int round = 0; round < 3; round++) {
        pid_t kids[20];
        for (int i = 0; i < 20; i++) {
            kids[i] = fork();
            assert_true(kids[i] >= 0);
            if (kids[i] == 0) {
                char model[16];
                snprintf(model, sizeof model, "m%d", i); /* a different file per writer */
                _exit(write_test(p, model, NULL, NULL) == AIT_OK ? 0 : 1);
            }
        }
        for (int i = 0; i < 20; i++) {
            int st;
            assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
            assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        snprintf(cmd, sizeof cmd, "cd %s && sha256sum -c --quiet race_sha256_sums.txt && "
                 "! ls | grep -q '\\.tmp\\.'", dir);
        assert_int_equal(system(cmd), 0);
    }
}

/* After artifact_open, truncating the file and writing garbage over it
 * changes nothing the artifact hands out (no SIGBUS, same bytes). */
static void test_detached_after_load(void **state)
{
    char p[128];
    ait_error e = {0};
    path_in(p, sizeof p, "live.ait");
    assert_int_equal(write_test(p, "live", NULL, &e), AIT_OK);
    artifact *a;
    assert_int_equal(artifact_open(p, NULL, &a, &e), AIT_OK);
    assert_int_equal(truncate(p, 0), 0);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    static uint8_t junk[20000];
    memset(junk, 0xee, sizeof junk);
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    const artifact_blob *b = artifact_blob_find(a, "big");
    assert_non_null(b);
    assert_memory_equal(b->data, big, sizeof big);
    for (size_t i = 0; i < artifact_blob_count(a); i++)
        assert_int_equal(artifact_blob_verify(a, i, &e), AIT_OK);
    size_t len;
    const uint8_t *m = artifact_manifest(a, &len);
    assert_memory_equal(m, manifest, strlen(manifest));
    artifact_close(a);
}

/* defer_blob_read: the header, manifest and table at open, each blob when
 * read (the embedded model first, then the rest: the load peak); a blob is
 * handed out only once read and checked, a change to any byte is refused at
 * the open or at the read, a file that shrinks before the read is refused,
 * and after artifact_blob_read_rest nothing depends on the file. */
static void test_deferred_read(void **state)
{
    (void)state;
    char p[128];
    path_in(p, sizeof p, "deferred.ait");
    ait_error e = {0};
    assert_int_equal(write_test(p, "ab12", NULL, &e), AIT_OK);
    artifact_expect x = {.defer_blob_read = 1};
    artifact *a;
    assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
    const artifact_blob *b = artifact_blob_find(a, "big");
    assert_non_null(b);
    assert_null(b->data); /* not read yet */
    assert_int_equal(artifact_blob_verify(a, 2, &e), AIT_E_INTERNAL);
    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    uint8_t c, f;
    assert_int_equal(pread(fd, &c, 1, 2 * 4096 + 10), 1); /* in 'big', after the open */
    f = c ^ 1;
    assert_int_equal(pwrite(fd, &f, 1, 2 * 4096 + 10), 1);
    assert_int_equal(artifact_blob_read(a, b, &e), AIT_E_SECURITY);
    assert_non_null(strstr(e.msg, "blob 'big' sha256 mismatch"));
    assert_null(b->data); /* never handed out unchecked */
    assert_int_equal(pwrite(fd, &c, 1, 2 * 4096 + 10), 1);
    assert_int_equal(artifact_blob_read(a, b, &e), AIT_OK);
    assert_memory_equal(b->data, big, sizeof big);
    assert_int_equal(artifact_blob_read_rest(a, &e), AIT_OK);
    assert_int_equal(truncate(p, 0), 0); /* detached now */
    assert_memory_equal(artifact_blob_find(a, "layer1.0/w")->data, "xyz", 3);
    assert_int_equal(artifact_blob_verify(a, 2, &e), AIT_OK);
    artifact_close(a);

    /* Every byte flipped: refused at the open or when the blobs are read. */
    close(fd);
    assert_int_equal(write_test(p, "ab12", NULL, &e), AIT_OK); /* a new file (renamed in) */
    fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    long n = test_file_size(p);
    for (long i = 0; i < n; i++) {
        assert_int_equal(pread(fd, &c, 1, i), 1);
        f = c ^ (uint8_t)(1u << (i % 8));
        assert_int_equal(pwrite(fd, &f, 1, i), 1);
        if (artifact_open(p, &x, &a, &e) == AIT_OK) {
            if (artifact_blob_read_rest(a, &e) == AIT_OK) fail_msg("byte %ld flipped: read", i);
            artifact_close(a);
        }
        assert_non_null(strstr(e.msg, p));
        assert_int_equal(pwrite(fd, &c, 1, i), 1);
    }
    /* Nonzero padding after the 3-byte blob (at 4096), before the empty one. */
    assert_int_equal(pwrite(fd, "\1", 1, 4096 + 100), 1);
    assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
    assert_int_equal(artifact_blob_read_rest(a, &e), AIT_E_SECURITY);
    assert_non_null(strstr(e.msg, "nonzero padding before blob 'empty'"));
    artifact_close(a);
    assert_int_equal(pwrite(fd, "\0", 1, 4096 + 100), 1);
    /* The file shrinks between the open and the read of its last blob. */
    assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
    assert_int_equal(ftruncate(fd, 2 * 4096 + 100), 0); /* within 'big' */
    assert_int_equal(artifact_blob_read_rest(a, &e), AIT_E_IO);
    assert_non_null(strstr(e.msg, "shrank"));
    assert_null(artifact_blob_find(a, "big")->data);
    artifact_close(a);
    close(fd);
}

/* map_file: the blobs are the file's pages, in place (4096-aligned in the
 * mapping), checked as a copy's are: a byte changed after the open is refused
 * when its blob is read and the blob never handed out; a file that shrinks
 * before a blob is read is refused ("shrank"), not a SIGBUS. (The
 * refusals of every damaged, cut or crafted file: expect_refused.) */
static void test_mapped(void **state)
{
    (void)state;
    char p[128];
    path_in(p, sizeof p, "mapped.ait");
    ait_error e = {0};
    assert_int_equal(write_test(p, "ab12", NULL, &e), AIT_OK);
    artifact *a;
    artifact_expect whole = {.map_file = 1};
    assert_int_equal(artifact_open(p, &whole, &a, &e), AIT_OK);
    const artifact_blob *b = artifact_blob_find(a, "big");
    assert_non_null(b);
    assert_memory_equal(b->data, big, sizeof big);
    assert_int_equal((uintptr_t)b->data % 4096, 0);
    assert_ptr_equal(b->data, artifact_header(a) + 2 * 4096); /* in place: the file's layout */
    assert_memory_equal(artifact_blob_find(a, "layer1.0/w")->data, "xyz", 3);
    artifact_close(a);

    artifact_expect x = {.map_file = 1, .defer_blob_read = 1};
    assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
    b = artifact_blob_find(a, "big");
    assert_null(b->data); /* not checked yet */
    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    uint8_t c, f;
    assert_int_equal(pread(fd, &c, 1, 3 * 4096 + 10), 1); /* in 'big', after the open */
    f = c ^ 1;
    assert_int_equal(pwrite(fd, &f, 1, 3 * 4096 + 10), 1);
    assert_int_equal(artifact_blob_read(a, b, &e), AIT_E_SECURITY);
    assert_non_null(strstr(e.msg, "blob 'big' sha256 mismatch"));
    assert_null(b->data);
    assert_int_equal(pwrite(fd, &c, 1, 3 * 4096 + 10), 1);
    assert_int_equal(artifact_blob_read_rest(a, &e), AIT_OK);
    assert_memory_equal(b->data, big, sizeof big);
    artifact_close(a);

    /* The file shrinks between the open and the read of its last blob. */
    assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
    assert_int_equal(ftruncate(fd, 3 * 4096 + 100), 0); /* within 'big' */
    assert_int_equal(artifact_blob_read_rest(a, &e), AIT_E_IO);
    assert_non_null(strstr(e.msg, "shrank"));
    assert_null(artifact_blob_find(a, "big")->data);
    artifact_close(a);
    close(fd);
}

/* artifact_release while blobs remain to read (defer_blob_read): the blobs
 * read next go into the released pages when they fit, in file order, each
 * 4096-aligned ("p1", two pages, then "p2", 3 bytes, into the four pages of
 * "m"); one that does not fit in what is left ("p3", three pages, one left)
 * is read at its own place, and the page no blob took is dropped. A byte
 * changed in a blob read into the released pages, or in the padding before
 * it, is refused naming that blob, and a file cut short within it is
 * refused ("shrank"), as at its own place. */
static void test_released_pages_reused(void **state)
{
    (void)state;
    static uint8_t mb[4 * 4096], p1[5000], p3[9000];
    for (size_t i = 0; i < sizeof mb; i++) mb[i] = (uint8_t)(i * 5 + 3);
    for (size_t i = 0; i < sizeof p1; i++) p1[i] = (uint8_t)(i * 11 + 2);
    for (size_t i = 0; i < sizeof p3; i++) p3[i] = (uint8_t)(i * 13 + 7);
    char p[128];
    path_in(p, sizeof p, "spare.ait");
    ait_error e = {0};
    artifact_info info = {.model_hash = "ab12"};
    artifact_writer *w;
    assert_int_equal(artifact_writer_begin(p, &info, &w, &e), AIT_OK);
    assert_int_equal(artifact_writer_manifest(w, manifest, strlen(manifest), &e), AIT_OK);
    assert_int_equal(artifact_writer_blob(w, "m", mb, sizeof mb, &e), AIT_OK);
    assert_int_equal(artifact_writer_blob(w, "p1", p1, sizeof p1, &e), AIT_OK);
    assert_int_equal(artifact_writer_blob(w, "p2", "xyz", 3, &e), AIT_OK);
    assert_int_equal(artifact_writer_blob(w, "p3", p3, sizeof p3, &e), AIT_OK);
    assert_int_equal(artifact_writer_finish(w, &e), AIT_OK);
    artifact *a;
    assert_int_equal(artifact_open(p, NULL, &a, &e), AIT_OK); /* whole: the blobs' offsets */
    long off_p1 = artifact_blob_find(a, "p1")->data - artifact_header(a);
    long off_p3 = artifact_blob_find(a, "p3")->data - artifact_header(a);
    artifact_close(a);

    artifact_expect x = {.defer_blob_read = 1};
    assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
    const artifact_blob *m = artifact_blob_find(a, "m");
    assert_int_equal(artifact_blob_read(a, m, &e), AIT_OK);
    const uint8_t *base = m->data;
    artifact_release(a, m->data, (size_t)m->size);
    assert_int_equal(artifact_blob_read_rest(a, &e), AIT_OK);
    const artifact_blob *b1 = artifact_blob_find(a, "p1"), *b2 = artifact_blob_find(a, "p2"),
                        *b3 = artifact_blob_find(a, "p3");
    assert_ptr_equal(b1->data, base);
    assert_memory_equal(b1->data, p1, sizeof p1);
    assert_ptr_equal(b2->data, base + 2 * 4096);
    assert_memory_equal(b2->data, "xyz", 3);
    assert_ptr_equal(b3->data, artifact_header(a) + off_p3); /* did not fit */
    assert_memory_equal(b3->data, p3, sizeof p3);
    for (size_t i = 1; i < artifact_blob_count(a); i++) /* m's bytes are given up */
        assert_int_equal(artifact_blob_verify(a, i, &e), AIT_OK);
    unsigned char res[2] = {0, 0};
    assert_int_equal(mincore((void *)(base + 3 * 4096), 4096, &res[0]), 0);
    assert_int_equal(mincore((void *)(artifact_header(a) + off_p1), 4096, &res[1]), 0);
    assert_int_equal(res[0] & 1, 0); /* the page no blob took: dropped */
    assert_int_equal(res[1] & 1, 0); /* p1's own page: never touched */
    artifact_close(a);

    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    struct { long at; const char *want; ait_status s; } bad[] = {
        {off_p1 + 4000, "blob 'p1' sha256 mismatch", AIT_E_SECURITY},
        {off_p1 + (long)sizeof p1 + 10, "nonzero padding before blob 'p2'", AIT_E_SECURITY},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
        assert_int_equal(artifact_blob_read(a, artifact_blob_find(a, "m"), &e), AIT_OK);
        artifact_release(a, artifact_blob_find(a, "m")->data, sizeof mb);
        uint8_t c, f;
        assert_int_equal(pread(fd, &c, 1, bad[k].at), 1);
        f = c ^ 1;
        assert_int_equal(pwrite(fd, &f, 1, bad[k].at), 1);
        assert_int_equal(artifact_blob_read_rest(a, &e), bad[k].s);
        assert_non_null(strstr(e.msg, bad[k].want));
        assert_null(artifact_blob_find(a, "p3")->data);
        artifact_close(a);
        assert_int_equal(pwrite(fd, &c, 1, bad[k].at), 1);
    }
    assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
    assert_int_equal(artifact_blob_read(a, artifact_blob_find(a, "m"), &e), AIT_OK);
    artifact_release(a, artifact_blob_find(a, "m")->data, sizeof mb);
    assert_int_equal(ftruncate(fd, off_p1 + 100), 0); /* within p1 */
    assert_int_equal(artifact_blob_read_rest(a, &e), AIT_E_IO);
    assert_non_null(strstr(e.msg, "shrank"));
    assert_null(artifact_blob_find(a, "p1")->data);
    artifact_close(a);
    close(fd);
}

/* Blobs of 16 MB or more in all are hashed on every core (hash_blobs): a
 * byte changed in the third of four 6 MB blobs is refused naming that blob,
 * copied and mapped, with the threads the library picks, one and two, and
 * the two before it are handed out, as in order; read one by one
 * (artifact_blob_read), the same bytes, and the changed byte, 5 MiB into
 * the blob, refused for that blob alone. */
static void test_parallel_hash(void **state)
{
    (void)state;
    char p[128];
    path_in(p, sizeof p, "par.ait");
    enum { N = 4, SZ = 6 << 20 };
    uint8_t *buf = malloc(SZ);
    assert_non_null(buf);
    for (size_t i = 0; i < SZ; i++) buf[i] = (uint8_t)(i * 13 + (i >> 12));
    ait_error e = {0};
    artifact_writer *w;
    assert_int_equal(artifact_writer_begin(p, NULL, &w, &e), AIT_OK);
    assert_int_equal(artifact_writer_manifest(w, manifest, strlen(manifest), &e), AIT_OK);
    const char *names[N] = {"b0", "b1", "b2", "b3"};
    for (int i = 0; i < N; i++) assert_int_equal(artifact_writer_blob(w, names[i], buf, SZ, &e), AIT_OK);
    assert_int_equal(artifact_writer_finish(w, &e), AIT_OK);
    for (int mode = 0; mode < 6; mode++) { /* copied or mapped; threads 0 (picked), 1, 2 */
        artifact_expect x = {.defer_blob_read = 1, .map_file = mode & 1, .hash_threads = mode >> 1};
        artifact *a;
        assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
        assert_int_equal(artifact_blob_read_rest(a, &e), AIT_OK);
        for (int i = 0; i < N; i++) assert_memory_equal(artifact_blob_find(a, names[i])->data, buf, SZ);
        artifact_close(a);
        /* one by one (artifact_blob_read), last first */
        assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
        for (int i = N - 1; i >= 0; i--) {
            assert_int_equal(artifact_blob_read(a, artifact_blob_find(a, names[i]), &e), AIT_OK);
            assert_memory_equal(artifact_blob_find(a, names[i])->data, buf, SZ);
        }
        artifact_close(a);
    }
    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    artifact *a;
    assert_int_equal(artifact_open(p, NULL, &a, &e), AIT_OK);
    long at = (long)(artifact_blob_find(a, "b2")->data - artifact_header(a)) + (5 << 20) + 12345;
    artifact_close(a);
    uint8_t c, f;
    assert_int_equal(pread(fd, &c, 1, at), 1);
    f = c ^ 0x10;
    assert_int_equal(pwrite(fd, &f, 1, at), 1);
    for (int mode = 0; mode < 6; mode++) {
        artifact_expect x = {.defer_blob_read = 1, .map_file = mode & 1, .hash_threads = mode >> 1};
        assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
        assert_int_equal(artifact_blob_read_rest(a, &e), AIT_E_SECURITY);
        assert_non_null(strstr(e.msg, "blob 'b2' sha256 mismatch"));
        assert_non_null(artifact_blob_find(a, "b1")->data);
        assert_null(artifact_blob_find(a, "b2")->data);
        assert_null(artifact_blob_find(a, "b3")->data);
        artifact_close(a);
        assert_int_equal(artifact_open(p, &x, &a, &e), AIT_OK);
        assert_int_equal(artifact_blob_read(a, artifact_blob_find(a, "b2"), &e), AIT_E_SECURITY);
        assert_non_null(strstr(e.msg, "blob 'b2' sha256 mismatch"));
        assert_null(artifact_blob_find(a, "b2")->data);
        assert_int_equal(artifact_blob_read(a, artifact_blob_find(a, "b3"), &e), AIT_OK);
        assert_memory_equal(artifact_blob_find(a, "b3")->data, buf, SZ);
        artifact_close(a);
    }
    expect_refused(p, NULL, "blob 'b2' sha256 mismatch");
    close(fd);
    free(buf);
}

/* A FIFO or a folder given as an artifact is refused at once, naming it. */
static void test_not_regular(void **state)
{
    char p[128];
    path_in(p, sizeof p, "fifo.ait");
    assert_int_equal(mkfifo(p, 0600), 0);
    expect_refused(p, NULL, "is a FIFO, not a regular file");
    expect_refused(dir, NULL, "is a directory, not a regular file");
    unlink(p);
}

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/ait_artifact_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    /* The library reads no environment: the test asks for the portable
     * SHA-256 itself (unit_artifact_portable_sha sets the variable). */
    const char *portable = getenv("SHA256_PORTABLE");
    if (portable && *portable == '1') sha256_force_portable(true);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_cpu),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_writer_errors),
        cmocka_unit_test(test_every_byte),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_crafted),
        cmocka_unit_test(test_wrong_model),
        cmocka_unit_test(test_missing_cpu_feature),
        cmocka_unit_test(test_killed_save),
        cmocka_unit_test(test_concurrent_saves),
        cmocka_unit_test(test_detached_after_load),
        cmocka_unit_test(test_deferred_read),
        cmocka_unit_test(test_mapped),
        cmocka_unit_test(test_released_pages_reused),
        cmocka_unit_test(test_parallel_hash),
        cmocka_unit_test(test_not_regular),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

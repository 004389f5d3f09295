/* Saving an artifact: the artifact and its sums file are staged (io/publish:
 * an unnamed O_TMPFILE, fsynced, then linked as PATH.tmp.PID) and renamed
 * over their names together under a lock on the folder, so a reader (or a
 * crash) sees either the old file or the whole new one, never a half, and
 * concurrent saves to one name leave a matching pair. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cpu.h"
#include "io/artifact_fmt.h"
#include "io/publish.h"

typedef struct wblob {
    char name[ARTIFACT_NAME_MAX];
    const uint8_t *data;
    uint64_t len, off;
} wblob;

struct artifact_writer {
    char *path;
    char version[ARTIFACT_VERSION_MAX], cpu[ARTIFACT_CPU_MAX], model[ARTIFACT_MODEL_MAX];
    void (*on_blob)(void *ctx, size_t index, size_t count);
    void *ctx;
    uint8_t *manifest;
    size_t man_len;
    wblob *blobs;
    size_t count, cap;
};

/* Copies s into a fixed field of n bytes (with its NUL), or fails naming it. */
static ait_status set_field(char *dst, size_t n, const char *s, const char *what, const char *path,
                            ait_error *e)
{
    if (strlen(s) >= n)
        return err_set(e, AIT_E_INVALID_ARG, "%s: %s '%.40s...' is longer than %zu bytes", path,
                       what, s, n - 1);
    memset(dst, 0, n);
    memcpy(dst, s, strlen(s));
    return AIT_OK;
}

ait_status artifact_writer_begin(const char *path, const artifact_info *info, artifact_writer **out,
                                 ait_error *e)
{
    *out = NULL;
    if (!path || !*path) return err_set(e, AIT_E_INVALID_ARG, "artifact: no output path");
    artifact_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return err_set(e, AIT_E_NOMEM, "%s: out of memory", path);
    }
    artifact_info none = {0};
    if (!info) info = &none;
    char cpu[1024];
    if (!info->cpu_features) cpu_features(cpu, sizeof cpu);
    ait_status s;
    if ((s = set_field(w->version, sizeof w->version,
                       info->ait_version ? info->ait_version : AIT_VERSION_STRING, "ait version",
                       path, e)) != AIT_OK ||
        (s = set_field(w->cpu, sizeof w->cpu, info->cpu_features ? info->cpu_features : cpu,
                       "CPU feature list", path, e)) != AIT_OK ||
        (s = set_field(w->model, sizeof w->model, info->model_hash ? info->model_hash : "",
                       "model hash", path, e)) != AIT_OK) {
        artifact_writer_free(w);
        return s;
    }
    w->on_blob = info->on_blob;
    w->ctx = info->ctx;
    *out = w;
    return AIT_OK;
}

ait_status artifact_writer_manifest(artifact_writer *w, const void *bytes, size_t len, ait_error *e)
{
    uint8_t *m = malloc(len ? len : 1);
    if (!m)
        return err_set(e, AIT_E_NOMEM, "%s: out of memory for a %zu-byte manifest", w->path, len);
    if (len) memcpy(m, bytes, len);
    free(w->manifest);
    w->manifest = m;
    w->man_len = len;
    return AIT_OK;
}

ait_status artifact_writer_blob(artifact_writer *w, const char *name, const void *bytes, size_t len,
                                ait_error *e)
{
    if (!name || !*name || strlen(name) >= ARTIFACT_NAME_MAX)
        return err_set(e, AIT_E_INVALID_ARG,
                       "%s: blob name '%.40s' is empty or longer than %u bytes", w->path,
                       name ? name : "", ARTIFACT_NAME_MAX - 1);
    if (len && !bytes)
        return err_set(e, AIT_E_INVALID_ARG, "%s: blob '%s' has no bytes", w->path, name);
    for (size_t i = 0; i < w->count; i++)
        if (!strcmp(w->blobs[i].name, name))
            return err_set(e, AIT_E_INVALID_ARG, "%s: two blobs named '%s'", w->path, name);
    if (w->count == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        wblob *b = cap > SIZE_MAX / sizeof *b ? NULL : realloc(w->blobs, cap * sizeof *b);
        if (!b) return err_set(e, AIT_E_NOMEM, "%s: out of memory for the blob table", w->path);
        w->blobs = b;
        w->cap = cap;
    }
    wblob *b = &w->blobs[w->count++];
    memset(b->name, 0, sizeof b->name);
    memcpy(b->name, name, strlen(name));
    b->data = bytes;
    b->len = len;
    return AIT_OK;
}

void artifact_writer_free(artifact_writer *w)
{
    if (!w) return;
    free(w->path);
    free(w->manifest);
    free(w->blobs);
    free(w);
}

/* ---- the file ----------------------------------------------------------- */

/* Writes all of p[n] to fd and adds it to the file's running hash. */
static int write_all(int fd, sha256_ctx *h, const void *p, uint64_t n)
{
    const uint8_t *q = p;
    sha256_update(h, p, (size_t)n);
    while (n) {
        size_t chunk = n > (1u << 30) ? (1u << 30) : (size_t)n;
        ssize_t k = write(fd, q, chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return 0;
        q += k, n -= (uint64_t)k;
    }
    return 1;
}

/* Writes zeros up to offset `to` (pos is where the file is now). */
static int write_zeros(int fd, sha256_ctx *h, uint64_t pos, uint64_t to)
{
    static const uint8_t zero[ARTIFACT_ALIGN];
    while (pos < to) {
        uint64_t k = to - pos < sizeof zero ? to - pos : sizeof zero;
        if (!write_all(fd, h, zero, k)) return 0;
        pos += k;
    }
    return 1;
}

/* Offsets of everything, from the lengths; fills b->off and the header's
 * table offset and file size. */
static ait_status lay_out(artifact_writer *w, uint64_t *tab_off, uint64_t *fsize, ait_error *e)
{
    uint64_t pos, tab_len = (uint64_t)w->count * ARTIFACT_ENTRY_SIZE;
    if (!layout_table(w->man_len, tab_off) || !add_u64(*tab_off, tab_len, &pos))
        return err_set(e, AIT_E_OVERFLOW, "%s: artifact size overflows", w->path);
    for (size_t i = 0; i < w->count; i++) {
        if (!align_up(pos, ARTIFACT_ALIGN, &w->blobs[i].off) ||
            !add_u64(w->blobs[i].off, w->blobs[i].len, &pos))
            return err_set(e, AIT_E_OVERFLOW, "%s: artifact size overflows at blob '%s'", w->path,
                           w->blobs[i].name);
    }
    *fsize = pos;
    return AIT_OK;
}

/* The blob table, with each blob's sha256. Caller frees *out. */
static ait_status build_table(artifact_writer *w, uint8_t **out, ait_error *e)
{
    uint8_t *t = calloc(w->count ? w->count : 1, ARTIFACT_ENTRY_SIZE);
    if (!t) return err_set(e, AIT_E_NOMEM, "%s: out of memory for the blob table", w->path);
    for (size_t i = 0; i < w->count; i++) {
        uint8_t *p = t + i * ARTIFACT_ENTRY_SIZE;
        memcpy(p + E_NAME, w->blobs[i].name, ARTIFACT_NAME_MAX);
        put_u64(p + E_OFF, w->blobs[i].off);
        put_u64(p + E_LEN, w->blobs[i].len);
        sha256(w->blobs[i].data, (size_t)w->blobs[i].len, p + E_SHA);
    }
    *out = t;
    return AIT_OK;
}

static void build_header(artifact_writer *w, uint8_t h[ARTIFACT_HEADER_SIZE], uint64_t tab_off,
                         uint64_t fsize, const uint8_t *table)
{
    memset(h, 0, ARTIFACT_HEADER_SIZE);
    memcpy(h + H_MAGIC, ARTIFACT_MAGIC, sizeof ARTIFACT_MAGIC);
    put_u32(h + H_FORMAT, ARTIFACT_FORMAT);
    put_u32(h + H_HSIZE, ARTIFACT_HEADER_SIZE);
    memcpy(h + H_VERSION, w->version, ARTIFACT_VERSION_MAX);
    memcpy(h + H_CPU, w->cpu, ARTIFACT_CPU_MAX);
    memcpy(h + H_MODEL, w->model, ARTIFACT_MODEL_MAX);
    put_u64(h + H_MAN_OFF, ARTIFACT_HEADER_SIZE);
    put_u64(h + H_MAN_LEN, w->man_len);
    sha256(w->manifest, w->man_len, h + H_MAN_SHA);
    put_u64(h + H_TAB_OFF, tab_off);
    put_u64(h + H_COUNT, w->count);
    put_u64(h + H_FSIZE, fsize);
    sha256(table, (size_t)w->count * ARTIFACT_ENTRY_SIZE, h + H_TAB_SHA);
    sha256(h, H_SUM, h + H_SUM);
}

/* Writes header, manifest, table and blobs in file order to fd; the file's
 * own sha256 comes back in digest. */
static int write_body(artifact_writer *w, int fd, const uint8_t *hdr, const uint8_t *table,
                      uint64_t tab_off, uint8_t digest[SHA256_BYTES])
{
    sha256_ctx h;
    sha256_init(&h);
    uint64_t tab_len = (uint64_t)w->count * ARTIFACT_ENTRY_SIZE;
    if (!write_all(fd, &h, hdr, ARTIFACT_HEADER_SIZE) ||
        !write_all(fd, &h, w->manifest, w->man_len) ||
        !write_zeros(fd, &h, ARTIFACT_HEADER_SIZE + w->man_len, tab_off) ||
        !write_all(fd, &h, table, tab_len))
        return 0;
    uint64_t pos = tab_off + tab_len;
    for (size_t i = 0; i < w->count; i++) {
        if (!write_zeros(fd, &h, pos, w->blobs[i].off) ||
            !write_all(fd, &h, w->blobs[i].data, w->blobs[i].len))
            return 0;
        pos = w->blobs[i].off + w->blobs[i].len;
        if (w->on_blob) w->on_blob(w->ctx, i, w->count);
    }
    sha256_final(&h, digest);
    return 1;
}

typedef struct art_job {
    artifact_writer *w;
    const uint8_t *hdr, *table;
    uint64_t tab_off;
    uint8_t digest[SHA256_BYTES];
} art_job;

static int art_body(void *arg, int fd)
{
    art_job *j = arg;
    return write_body(j->w, fd, j->hdr, j->table, j->tab_off, j->digest);
}

typedef struct sums_job {
    const char *line;
} sums_job;

static int sums_body(void *arg, int fd)
{
    sha256_ctx unused;
    sha256_init(&unused);
    const char *line = ((sums_job *)arg)->line;
    return write_all(fd, &unused, line, strlen(line));
}

ait_status artifact_sums_path(const char *path, char *out, size_t n, ait_error *e)
{
    size_t len = strlen(path);
    if (len > 4 && !strcmp(path + len - 4, ".ait")) len -= 4;
    if (snprintf(out, n, "%.*s_sha256_sums.txt", (int)len, path) >= (int)n)
        return err_set(e, AIT_E_INVALID_ARG, "%.200s...: path too long", path);
    return AIT_OK;
}

ait_status artifact_writer_finish(artifact_writer *w, ait_error *e)
{
    uint64_t tab_off = 0, fsize = 0;
    uint8_t hdr[ARTIFACT_HEADER_SIZE], *table = NULL;
    ait_status s = lay_out(w, &tab_off, &fsize, e);
    if (s == AIT_OK && fsize > (uint64_t)SIZE_MAX)
        s = err_set(e, AIT_E_OVERFLOW, "%s: artifact of %llu bytes is too big to map", w->path,
                    (unsigned long long)fsize);
    if (s == AIT_OK) s = build_table(w, &table, e);
    art_job job = {w, hdr, table, tab_off, {0}};
    char tmps[2][PUBLISH_PATH_MAX], sums[4096], hex[SHA256_HEX], line[4200];
    int staged = 0;
    if (s == AIT_OK) s = artifact_sums_path(w->path, sums, sizeof sums, e);
    if (s == AIT_OK) {
        build_header(w, hdr, tab_off, fsize, table);
        s = publish_stage(w->path, art_body, &job, tmps[0], e);
        staged = s == AIT_OK;
    }
    if (s == AIT_OK) {
        char *copy = strdup(w->path);
        if (!copy)
            s = err_set(e, AIT_E_NOMEM, "%s: out of memory", w->path);
        else {
            sha256_hex(job.digest, hex);
            /* sha256sum's text format: digest, two spaces, the name relative to the sums file. */
            snprintf(line, sizeof line, "%s  %s\n", hex, basename(copy));
            free(copy);
            sums_job sj = {line};
            s = publish_stage(sums, sums_body, &sj, tmps[1], e);
        }
    }
    const char *paths[2] = {w->path, sums};
    if (s == AIT_OK) s = publish_commit(2, tmps, paths, e);
    else if (staged) unlink(tmps[0]);
    free(table);
    artifact_writer_free(w);
    return s;
}

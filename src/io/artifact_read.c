/* Loading an artifact: copy it into memory, then trust nothing in it until checked.
 * Every offset is compared with the canonical layout and the file size
 * before anything at that offset is read, so a truncated or crafted file
 * is refused without a read past the mapping. With defer_blob_read the
 * copy is made in steps (header, manifest and table first, then each blob
 * when asked), so the embedded model can be parsed and its pages dropped
 * before the prepared blobs take memory: the load peak is not the whole
 * file plus the parsed model. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cpu.h"
#include "io/artifact_fmt.h"
#include "io/file.h"

enum { ARTIFACT_SPARE_MAX = 16 };

struct artifact {
    char *path;
    uint8_t *map;
    size_t size;
    bool in_place;  /* map_file: the file mapped, nothing copied (read_range checks only) */
    int hash_threads; /* artifact_expect.hash_threads */
    int fd;         /* open while blobs remain to read (defer_blob_read), else -1 */
    uint64_t *boff; /* per blob, its offset */
    uint64_t *at;   /* per blob, where its bytes are in the copy: its offset, or spare pages */
    uint64_t *gap;  /* defer_blob_read: per blob, where the zero gap before it starts */
    /* Pages released while blobs remained to read (artifact_release): the
     * blobs read next take them, offsets [lo, hi) in the copy */
    uint64_t spare_lo[ARTIFACT_SPARE_MAX], spare_hi[ARTIFACT_SPARE_MAX];
    int n_spare;
    const uint8_t *manifest;
    size_t man_len;
    artifact_blob *blobs;
    size_t count;
    char version[ARTIFACT_VERSION_MAX], cpu[ARTIFACT_CPU_MAX], model[ARTIFACT_MODEL_MAX];
};

/* Copies a NUL-padded string field: it must end in a NUL and be zero after it. */
static int get_field(const uint8_t *p, size_t n, char *out)
{
    const uint8_t *nul = memchr(p, 0, n);
    if (!nul) return 0;
    for (const uint8_t *q = nul; q < p + n; q++)
        if (*q) return 0;
    memcpy(out, p, n);
    return 1;
}

/* Whether p[n] is all zero (the gaps between the parts). */
static int all_zero(const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

/* Copies bytes [from, to) of the file to dst (defer_blob_read; the range was
 * checked against the file size). Mapped in place: checks that the file
 * still holds them (a page past its end would raise SIGBUS). */
static ait_status read_into(artifact *a, uint8_t *dst, uint64_t from, uint64_t to, ait_error *e)
{
    if (a->in_place) { /* the mapping is the file: only that it still holds the range */
        struct stat st;
        if (fstat(a->fd, &st) != 0 || (uint64_t)st.st_size < to)
            return err_set(e, AIT_E_IO, "%s: read failed: the file shrank while being read",
                           a->path);
        return AIT_OK;
    }
    if (lseek(a->fd, (off_t)from, SEEK_SET) != (off_t)from)
        return err_set(e, AIT_E_IO, "%s: seek failed: %s", a->path, strerror(errno));
    return file_read_fd(a->fd, dst, (size_t)(to - from), a->path, e);
}

/* Bytes [from, to) of the file into the same place of the copy. */
static ait_status read_range(artifact *a, uint64_t from, uint64_t to, ait_error *e)
{
    return read_into(a, a->map + from, from, to, e);
}

/* The header: magic, version, checksum, then the fields it vouches for. */
static ait_status check_header(artifact *a, const artifact_expect *x, uint64_t *tab_off, uint64_t *count, ait_error *e)
{
    const uint8_t *h = a->map;
    const char *p = a->path;
    if (a->size < ARTIFACT_HEADER_SIZE) {
        if (a->size >= sizeof ARTIFACT_MAGIC && memcmp(h, ARTIFACT_MAGIC, sizeof ARTIFACT_MAGIC))
            return err_set(e, AIT_E_PARSE, "%s: not an ait artifact (wrong magic)", p);
        return err_set(e, AIT_E_PARSE, "%s: truncated (%zu bytes, shorter than the %u-byte header)",
                       p, a->size, ARTIFACT_HEADER_SIZE);
    }
    if (memcmp(h + H_MAGIC, ARTIFACT_MAGIC, sizeof ARTIFACT_MAGIC))
        return err_set(e, AIT_E_PARSE, "%s: not an ait artifact (wrong magic)", p);
    uint32_t fmt = get_u32(h + H_FORMAT);
    if (fmt != ARTIFACT_FORMAT)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: artifact format version %u, this ait reads %u", p,
                       fmt, ARTIFACT_FORMAT);
    uint8_t sum[SHA256_BYTES];
    sha256(h, H_SUM, sum);
    if (memcmp(sum, h + H_SUM, SHA256_BYTES))
        return err_set(e, AIT_E_SECURITY, "%s: header checksum mismatch (file corrupted)", p);
    /* From here the header is as written; a bad field is a bad writer or a crafted file. */
    if (get_u32(h + H_HSIZE) != ARTIFACT_HEADER_SIZE ||
        !all_zero(h + H_RESERVED, H_SUM - H_RESERVED) ||
        !get_field(h + H_VERSION, ARTIFACT_VERSION_MAX, a->version) ||
        !get_field(h + H_CPU, ARTIFACT_CPU_MAX, a->cpu) ||
        !get_field(h + H_MODEL, ARTIFACT_MODEL_MAX, a->model))
        return err_set(e, AIT_E_PARSE, "%s: malformed header fields", p);
    uint64_t man_off = get_u64(h + H_MAN_OFF), man_len = get_u64(h + H_MAN_LEN);
    uint64_t fsize = get_u64(h + H_FSIZE), want_tab, tab_end;
    *tab_off = get_u64(h + H_TAB_OFF);
    *count = get_u64(h + H_COUNT);
    if (man_off != ARTIFACT_HEADER_SIZE || !layout_table(man_len, &want_tab) ||
        *tab_off != want_tab || *count > UINT64_MAX / ARTIFACT_ENTRY_SIZE ||
        !add_u64(*tab_off, *count * ARTIFACT_ENTRY_SIZE, &tab_end) || tab_end > fsize)
        return err_set(e, AIT_E_PARSE, "%s: inconsistent layout in the header", p);
    if (fsize > a->size)
        return err_set(e, AIT_E_PARSE, "%s: truncated (header says %llu bytes, file has %zu)", p,
                       (unsigned long long)fsize, a->size);
    if (fsize < a->size)
        return err_set(e, AIT_E_PARSE,
                       "%s: %llu unexpected bytes after the end (header says %llu bytes)", p,
                       (unsigned long long)(a->size - fsize), (unsigned long long)fsize);
    if (a->fd >= 0) TRY(read_range(a, ARTIFACT_HEADER_SIZE, tab_end, e));
    a->manifest = a->map + man_off;
    a->man_len = (size_t)man_len;
    sha256(a->manifest, a->man_len, sum);
    bool man_ok = memcmp(sum, h + H_MAN_SHA, SHA256_BYTES) == 0 &&
                  all_zero(a->map + man_off + man_len, *tab_off - (man_off + man_len));
    if (!man_ok && !x->skip_manifest)
        return err_set(e, AIT_E_SECURITY, "%s: manifest sha256 mismatch or nonzero padding after "
                       "it (file corrupted)", p);
    if (!man_ok) { /* never handed out unchecked */
        a->manifest = NULL;
        a->man_len = 0;
    }
    sha256(a->map + *tab_off, (size_t)(*count * ARTIFACT_ENTRY_SIZE), sum);
    if (memcmp(sum, h + H_TAB_SHA, SHA256_BYTES))
        return err_set(e, AIT_E_SECURITY, "%s: blob table sha256 mismatch (file corrupted)", p);
    return AIT_OK;
}

/* The gap before a blob (its n bytes at p) must be zero. */
static ait_status check_gap(const artifact *a, const uint8_t *p, uint64_t n, const char *name,
                            ait_error *e)
{
    if (!all_zero(p, n))
        return err_set(e, AIT_E_SECURITY, "%s: nonzero padding before blob '%s' (file corrupted)",
                       a->path, name);
    return AIT_OK;
}

/* Where a blob of len bytes read now goes: into the first spare range it
 * fits (whole pages, so the next starts 4096-aligned too), or off, its own
 * place. */
static uint64_t spare_take(artifact *a, uint64_t len, uint64_t off)
{
    uint64_t need = (len + ARTIFACT_ALIGN - 1) & ~(uint64_t)(ARTIFACT_ALIGN - 1);
    for (int k = 0; len && k < a->n_spare; k++)
        if (a->spare_hi[k] - a->spare_lo[k] >= need) {
            uint64_t at = a->spare_lo[k];
            a->spare_lo[k] += need;
            return at;
        }
    return off;
}

/* Drops the spare pages no blob took. */
static void spare_drop(artifact *a)
{
    for (int k = 0; k < a->n_spare; k++)
        if (a->spare_hi[k] > a->spare_lo[k]) /* advice: failure is harmless */
            (void)madvise(a->map + a->spare_lo[k], a->spare_hi[k] - a->spare_lo[k], MADV_DONTNEED);
    a->n_spare = 0;
}

/* Blob i's bytes and the zero gap before it, from the file into the copy
 * (or, mapped in place, the file still holding them): defer_blob_read. A
 * blob that fits in spare pages (spare_take) is read there, and its gap
 * (less than ARTIFACT_ALIGN bytes in the canonical layout check_table
 * checked) is checked aside, so its own pages are never touched. */
static ait_status blob_fetch(artifact *a, size_t i, ait_error *e)
{
    if (a->fd < 0) return err_set(e, AIT_E_INTERNAL, "%s: the file is closed", a->path);
    uint64_t gap = a->gap[i], off = a->boff[i], len = a->blobs[i].size;
    uint8_t pad[ARTIFACT_ALIGN];
    uint64_t at = a->in_place || off - gap > sizeof pad ? off : spare_take(a, len, off);
    if (at == off) {
        TRY(read_range(a, gap, off + len, e));
        return check_gap(a, a->map + gap, off - gap, a->blobs[i].name, e);
    }
    TRY(read_into(a, pad, gap, off, e));
    TRY(check_gap(a, pad, off - gap, a->blobs[i].name, e));
    TRY(read_into(a, a->map + at, off, off + len, e));
    a->at[i] = at;
    return AIT_OK;
}

/* The blob table: names, canonical offsets, zero gaps. */
static ait_status check_table(artifact *a, uint64_t tab_off, uint64_t count, ait_error *e)
{
    const char *p = a->path;
    a->blobs = calloc(count ? (size_t)count : 1, sizeof *a->blobs);
    if (!a->blobs)
        return err_set(e, AIT_E_NOMEM, "%s: out of memory for %llu blobs", p,
                       (unsigned long long)count);
    a->count = (size_t)count;
    if (!(a->boff = calloc(count ? (size_t)count : 1, sizeof *a->boff)) ||
        !(a->at = calloc(count ? (size_t)count : 1, sizeof *a->at)))
        return err_set(e, AIT_E_NOMEM, "%s: out of memory for %llu blobs", p,
                       (unsigned long long)count);
    if (a->fd >= 0 && !(a->gap = calloc(count ? (size_t)count : 1, sizeof *a->gap)))
        return err_set(e, AIT_E_NOMEM, "%s: out of memory for %llu blobs", p,
                       (unsigned long long)count);
    uint64_t pos = tab_off + count * ARTIFACT_ENTRY_SIZE;
    for (size_t i = 0; i < a->count; i++) {
        const uint8_t *t = a->map + tab_off + i * ARTIFACT_ENTRY_SIZE;
        char name[ARTIFACT_NAME_MAX];
        uint64_t off = get_u64(t + E_OFF), len = get_u64(t + E_LEN), want, end;
        if (!get_field(t + E_NAME, ARTIFACT_NAME_MAX, name) || !name[0])
            return err_set(e, AIT_E_PARSE, "%s: blob %zu has a malformed name", p, i);
        if (!align_up(pos, ARTIFACT_ALIGN, &want) || off != want || !add_u64(off, len, &end) ||
            end > a->size)
            return err_set(
                e, AIT_E_PARSE,
                "%s: blob '%s' lies outside the file (offset %llu, %llu bytes, file has %zu)", p,
                name, (unsigned long long)off, (unsigned long long)len, a->size);
        a->blobs[i].name = (const char *)t + E_NAME;
        a->boff[i] = a->at[i] = off;
        if (a->gap) { /* not read yet: no data until artifact_blob_read */
            a->gap[i] = pos;
        } else {
            TRY(check_gap(a, a->map + pos, off - pos, a->blobs[i].name, e));
            a->blobs[i].data = a->map + off;
        }
        a->blobs[i].size = len;
        memcpy(a->blobs[i].sha256, t + E_SHA, SHA256_BYTES);
        pos = end;
    }
    if (pos != a->size)
        return err_set(e, AIT_E_PARSE, "%s: the last blob ends at %llu, the file at %zu", p,
                       (unsigned long long)pos, a->size);
    return AIT_OK;
}

/* Whether blob i's bytes (at its place in the copy or mapping) have its sha256. */
static bool blob_hash_ok(const artifact *a, size_t i, const uint8_t *data)
{
    uint8_t sum[SHA256_BYTES];
    sha256(data, (size_t)a->blobs[i].size, sum);
    return memcmp(sum, a->blobs[i].sha256, SHA256_BYTES) == 0;
}

static ait_status hash_mismatch(const artifact *a, size_t i, ait_error *e)
{
    return err_set(e, AIT_E_SECURITY, "%s: blob '%s' sha256 mismatch (file corrupted)", a->path,
                   a->blobs[i].name);
}

ait_status artifact_blob_verify(const artifact *a, size_t i, ait_error *e)
{
    if (i >= a->count)
        return err_set(e, AIT_E_INVALID_ARG, "%s: no blob %zu (%zu blobs)", a->path, i, a->count);
    if (!a->blobs[i].data)
        return err_set(e, AIT_E_INTERNAL, "%s: blob '%s' was not read", a->path, a->blobs[i].name);
    return blob_hash_ok(a, i, a->blobs[i].data) ? AIT_OK : hash_mismatch(a, i, e);
}

/* Hashing blobs on up to hash_threads threads (0: the online CPUs,
 * HASH_THREADS_MAX at most): the threads take the blobs in turn (an atomic
 * counter), each blob whole, and record whether it matched; the caller then
 * reports the first mismatch by index, so the refusal is the one a check in
 * order would give. Below HASH_PAR_MIN bytes, or when no thread can be made,
 * the calling thread hashes them all. */
enum { HASH_THREADS_MAX = 4, HASH_PAR_MIN = 16 << 20 };

typedef struct hash_work {
    const artifact *a;
    const size_t *idx; /* the blobs to hash */
    size_t n;
    size_t next;       /* the next of idx[] to take (atomic) */
    bool *ok;          /* per idx[] entry */
} hash_work;

static void *hash_worker(void *arg)
{
    hash_work *w = arg;
    for (;;) {
        size_t k = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED);
        if (k >= w->n) return NULL;
        size_t i = w->idx[k];
        w->ok[k] = blob_hash_ok(w->a, i, w->a->map + w->a->at[i]);
    }
}

static void hash_blobs(const artifact *a, const size_t *idx, size_t n, bool *ok)
{
    hash_work w = {.a = a, .idx = idx, .n = n, .ok = ok};
    uint64_t bytes = 0;
    for (size_t k = 0; k < n; k++) bytes += a->blobs[idx[k]].size;
    long cpus = a->hash_threads > 0 ? a->hash_threads : sysconf(_SC_NPROCESSORS_ONLN);
    int helpers = bytes < HASH_PAR_MIN || cpus < 2 ? 0
                  : (int)(cpus < HASH_THREADS_MAX ? cpus : HASH_THREADS_MAX) - 1;
    pthread_t th[HASH_THREADS_MAX];
    int made = 0;
    while (made < helpers && pthread_create(&th[made], NULL, hash_worker, &w) == 0) made++;
    hash_worker(&w);
    for (int t = 0; t < made; t++) pthread_join(th[t], NULL);
}

/* What the caller expects: the model and this machine. */
static ait_status check_fit(artifact *a, const artifact_expect *x, ait_error *e)
{
    if (x->model_hash && strcmp(x->model_hash, a->model))
        return err_set(e, AIT_E_INVALID_ARG, "%s: made from model sha256 %s, this model is %s",
                       a->path, a->model[0] ? a->model : "(none recorded)", x->model_hash);
    char missing[256];
    if (!x->skip_cpu_check && !cpu_has_all(a->cpu, missing, sizeof missing))
        return err_set(e, AIT_E_UNSUPPORTED, "%s: needs CPU feature %s, which this machine lacks",
                       a->path, missing);
    return AIT_OK;
}

/* Reads the whole file into anonymous memory the process owns: after load
 * nothing depends on the file, so truncating, replacing or editing it cannot
 * raise SIGBUS or change a session, and every hash is checked on this copy.
 * Anonymous pages keep the 4096 alignment of the blobs and can be handed
 * back with madvise (artifact_release). With in_place (map_file) the
 * file is mapped read-only instead, its page-cache pages used as they are
 * (no copy, no new memory; every check the same, on the mapping), and the
 * load then depends on the file staying as it is (artifact.h). */
static ait_status map_file(artifact *a, bool deferred, bool in_place, ait_error *e)
{
    int fd;
    struct stat st;
    TRY(file_open_regular(a->path, &fd, &st, e));
    if ((uint64_t)st.st_size > SIZE_MAX / 2) {
        close(fd);
        return err_set(e, AIT_E_IO, "%s: %lld bytes do not fit in memory", a->path,
                       (long long)st.st_size);
    }
    a->size = (size_t)st.st_size;
    ait_status s = AIT_OK;
    if (a->size && in_place) {
        void *m = mmap(NULL, a->size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (m == MAP_FAILED)
            s = err_set(e, AIT_E_IO, "%s: cannot map %zu bytes: %s", a->path, a->size,
                        strerror(errno));
        else {
            a->map = m;
            a->in_place = true;
        }
    } else if (a->size) {
        void *m = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            s = err_set(e, AIT_E_NOMEM, "%s: no memory for %zu bytes", a->path, a->size);
        else {
            a->map = m;
            (void)madvise(m, a->size, MADV_HUGEPAGE); /* fewer page faults while copying */
            /* deferred: the header alone; check_header reads the manifest and table */
            size_t n = deferred && a->size > ARTIFACT_HEADER_SIZE ? ARTIFACT_HEADER_SIZE : a->size;
            s = file_read_fd(fd, a->map, n, a->path, e);
            if (s == AIT_OK && n == a->size)
                (void)mprotect(m, a->size, PROT_READ); /* guard: failure harmless */
        }
    }
    if (s == AIT_OK && deferred) a->fd = fd;
    else close(fd);
    return s;
}

/* Every blob whose data is not set yet (read: copied from the file first,
 * with its gap, as artifact_blob_read does, in file order), then hashed on
 * every core (hash_blobs); data is set in order up to the first refusal, which
 * is the one artifact_blob_read in order would give. Without read, the blobs
 * are in place already (an open that is not deferred): they are hashed. */
static ait_status check_blobs(artifact *a, bool read, ait_error *e)
{
    size_t *idx = malloc((a->count ? a->count : 1) * sizeof *idx), n = 0;
    bool *ok = calloc(a->count ? a->count : 1, sizeof *ok);
    if (!idx || !ok) {
        free(idx);
        free(ok);
        return err_set(e, AIT_E_NOMEM, "%s: out of memory for %zu blobs", a->path, a->count);
    }
    ait_error read_err = {0};
    ait_status rs = AIT_OK;
    for (size_t i = 0; i < a->count; i++) {
        if (read && a->blobs[i].data) continue; /* read and checked before */
        if (read && (rs = blob_fetch(a, i, &read_err)) != AIT_OK) break;
        idx[n++] = i;
    }
    hash_blobs(a, idx, n, ok);
    ait_status s = AIT_OK;
    for (size_t k = 0; k < n && s == AIT_OK; k++) {
        if (!ok[k]) s = hash_mismatch(a, idx[k], e);
        else a->blobs[idx[k]].data = a->map + a->at[idx[k]];
    }
    if (s != AIT_OK && !read) /* the open fails: nothing handed out */
        for (size_t k = 0; k < n; k++) a->blobs[idx[k]].data = NULL;
    if (s == AIT_OK && rs != AIT_OK) {
        s = rs;
        if (e) *e = read_err;
    }
    free(idx);
    free(ok);
    return s;
}

ait_status artifact_open(const char *path, const artifact_expect *x, artifact **out, ait_error *e)
{
    *out = NULL;
    artifact_expect all = {0};
    if (!x) x = &all;
    artifact *a = calloc(1, sizeof *a);
    if (!a || !(a->path = strdup(path))) {
        free(a);
        return err_set(e, AIT_E_NOMEM, "%s: out of memory", path);
    }
    a->fd = -1;
    a->hash_threads = x->hash_threads;
    uint64_t tab_off = 0, count = 0;
    ait_status s = map_file(a, x->defer_blob_read, x->map_file, e);
    if (s == AIT_OK) s = check_header(a, x, &tab_off, &count, e);
    if (s == AIT_OK) s = check_table(a, tab_off, count, e);
    if (s == AIT_OK && !x->defer_blob_hash && !a->gap) s = check_blobs(a, 0, e);
    if (s == AIT_OK) s = check_fit(a, x, e);
    if (s != AIT_OK) {
        artifact_close(a);
        return s;
    }
    *out = a;
    return AIT_OK;
}

void artifact_close(artifact *a)
{
    if (!a) return;
    if (a->fd >= 0) close(a->fd);
    free(a->gap);
    free(a->boff);
    free(a->at);
    if (a->map) munmap(a->map, a->size);
    free(a->blobs);
    free(a->path);
    free(a);
}

ait_status artifact_blob_read(artifact *a, const artifact_blob *b, ait_error *e)
{
    size_t i = (size_t)(b - a->blobs);
    if (i >= a->count) return err_set(e, AIT_E_INVALID_ARG, "%s: not a blob of it", a->path);
    if (b->data) return AIT_OK; /* read at open, or before */
    TRY(blob_fetch(a, i, e));
    a->blobs[i].data = a->map + a->at[i];
    ait_status s = artifact_blob_verify(a, i, e);
    if (s != AIT_OK) a->blobs[i].data = NULL; /* never handed out unchecked */
    return s;
}

ait_status artifact_blob_read_rest(artifact *a, ait_error *e)
{
    ait_status s = check_blobs(a, 1, e);
    spare_drop(a);
    TRY(s);
    if (a->fd >= 0) {
        close(a->fd);
        a->fd = -1;
        (void)mprotect(a->map, a->size, PROT_READ); /* guard: failure harmless */
    }
    return AIT_OK;
}

const uint8_t *artifact_manifest(const artifact *a, size_t *len)
{
    *len = a->man_len;
    return a->manifest;
}

size_t artifact_blob_count(const artifact *a)
{
    return a->count;
}

const artifact_blob *artifact_blob_at(const artifact *a, size_t i)
{
    return i < a->count ? &a->blobs[i] : NULL;
}

const artifact_blob *artifact_blob_find(const artifact *a, const char *name)
{
    for (size_t i = 0; i < a->count; i++)
        if (!strcmp(a->blobs[i].name, name)) return &a->blobs[i];
    return NULL;
}

void artifact_release(artifact *a, const uint8_t *p, size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    if (!a->map || !p || pg <= 0 || p < a->map || p >= a->map + a->size ||
        n > (size_t)(a->map + a->size - p))
        return; /* not (or no longer) in the mapping */
    uintptr_t lo = ((uintptr_t)p + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
    uintptr_t hi = ((uintptr_t)p + (uintptr_t)n) & ~((uintptr_t)pg - 1);
    if (hi <= lo) return;
    if (a->fd >= 0 && !a->in_place && a->n_spare < ARTIFACT_SPARE_MAX) { /* blobs still to read */
        a->spare_lo[a->n_spare] = lo - (uintptr_t)a->map;
        a->spare_hi[a->n_spare++] = hi - (uintptr_t)a->map;
        return;
    }
    (void)madvise((void *)lo, hi - lo, MADV_DONTNEED); /* advice: failure is harmless */
}

const uint8_t *artifact_header(const artifact *a)
{
    return a->map;
}

const char *artifact_model_hash(const artifact *a)
{
    return a->model;
}
const char *artifact_cpu_needed(const artifact *a)
{
    return a->cpu;
}
const char *artifact_ait_version(const artifact *a)
{
    return a->version;
}

bool artifact_file_is(const char *path)
{
    char magic[sizeof ARTIFACT_MAGIC] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block */
    if (fd < 0) return false;
    ssize_t got = read(fd, magic, sizeof magic);
    close(fd);
    return got == (ssize_t)sizeof magic && memcmp(magic, ARTIFACT_MAGIC, sizeof magic) == 0;
}

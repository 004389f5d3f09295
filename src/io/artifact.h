/* The .ait container: one file holding a fixed header, the caller's JSON
 * manifest, a blob table and blobs aligned to 4096 bytes, read into memory
 * (or mapped in place: artifact_expect.map_file).
 * What goes into the manifest and the blobs is the caller's business; this
 * file only guarantees that what is read back is exactly what was written,
 * for the model and the CPU it was meant for.
 *
 * Layout (every integer little-endian; offsets from the start of the file):
 *   0    header, ARTIFACT_HEADER_SIZE (512) bytes:
 *        0   magic "AITARTF\0"          8   u32 format version (1)
 *        12  u32 header size (512)      16  ait version, char[32], NUL-padded
 *        48  CPU features needed, char[224] ("avx2,fma"), NUL-padded
 *        272 model hash, char[80] (hex sha256 of the ONNX file), NUL-padded
 *        352 u64 manifest offset        360 u64 manifest length
 *        368 manifest sha256[32]        400 u64 blob table offset
 *        408 u64 blob count             416 u64 file size
 *        424 blob table sha256[32]      456 reserved, zero, 24 bytes
 *        480 sha256 of header bytes 0..480
 *   512  manifest bytes
 *        blob table at the next multiple of 8: per blob ARTIFACT_ENTRY_SIZE
 *        (256) bytes: name char[208] NUL-padded, u64 offset, u64 length,
 *        sha256[32]
 *        blobs, each at the next multiple of 4096 after the previous end
 *        (an empty blob too); the file ends where the last blob ends.
 * The layout is canonical (offsets follow from the lengths) and every gap is
 * zero, so any changed byte is either a checksum mismatch or a layout one.
 *
 * Beside PATH the writer puts NAME_sha256_sums.txt (NAME is PATH without a
 * ".ait" suffix), the artifact's sha256 in the format `sha256sum -c` reads. */
#ifndef AIT_IO_ARTIFACT_H
#define AIT_IO_ARTIFACT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "io/sha256.h"

#define ARTIFACT_MAGIC "AITARTF"  /* with its NUL: 8 bytes */
#define ARTIFACT_FORMAT 1u
#define ARTIFACT_HEADER_SIZE 512u
#define ARTIFACT_ENTRY_SIZE 256u
#define ARTIFACT_ALIGN 4096u
#define ARTIFACT_VERSION_MAX 32u  /* field sizes, with the NUL */
#define ARTIFACT_CPU_MAX 224u
#define ARTIFACT_MODEL_MAX 80u
#define ARTIFACT_NAME_MAX 208u

/* ---- writing ------------------------------------------------------------ */

typedef struct artifact_writer artifact_writer;

typedef struct artifact_info {
    const char *model_hash;   /* recorded for the loader to compare; NULL: "" */
    const char *cpu_features; /* features the artifact needs; NULL: this machine's */
    const char *ait_version;  /* NULL: AIT_VERSION_STRING */
    /* Called after each blob is written (for progress, and for tests that
     * kill a save midway); may be NULL. */
    void (*on_blob)(void *ctx, size_t index, size_t count);
    void *ctx;
} artifact_info;

/* Starts an artifact to be saved at path; info may be NULL. Nothing is
 * written before artifact_writer_finish. Returns the writer in *out. */
ait_status artifact_writer_begin(const char *path, const artifact_info *info,
                                 artifact_writer **out, ait_error *e);
/* Sets the manifest (copied). */
ait_status artifact_writer_manifest(artifact_writer *w, const void *bytes, size_t len,
                                    ait_error *e);
/* Adds a blob. The bytes are not copied: they must stay valid until finish.
 * Names are non-empty, shorter than ARTIFACT_NAME_MAX and unique. */
ait_status artifact_writer_blob(artifact_writer *w, const char *name, const void *bytes,
                                size_t len, ait_error *e);
/* Writes PATH.tmp.PID, fsyncs it and renames it over PATH, then the sums
 * file the same way. On failure the temporary file is removed and PATH is
 * untouched (or, if only the sums file failed, PATH is complete). Frees w
 * either way. */
ait_status artifact_writer_finish(artifact_writer *w, ait_error *e);
/* Drops an unfinished writer; accepts NULL. */
void artifact_writer_free(artifact_writer *w);

/* ---- reading ------------------------------------------------------------ */

typedef struct artifact artifact;

typedef struct artifact_blob {
    const char *name;    /* into the mapping */
    const uint8_t *data; /* into the process's copy of the file, 4096-aligned; valid
                            until close */
    uint64_t size;
    uint8_t sha256[SHA256_BYTES];
} artifact_blob;

typedef struct artifact_expect {
    const char *model_hash; /* refuse unless the header's equals this; NULL: any */
    int skip_cpu_check;     /* do not compare the needed CPU features with this machine's */
    int defer_blob_hash;    /* leave blob hashes to artifact_blob_verify */
    int skip_manifest;      /* a damaged manifest is no refusal: artifact_manifest
                               then gives NULL (for reading the blobs alone) */
    int defer_blob_read;    /* read the header, manifest and blob table only; a blob's
                               data is NULL until artifact_blob_read copies and checks
                               it, and the file stays open until artifact_blob_read_rest */
    int map_file;           /* use the file's pages in place (a read-only mapping of
                               it, page cache shared) instead of a copy: no copy and no
                               new memory, the same checks on the mapping; but the
                               load then depends on the file: truncated later, a blob
                               touched raises SIGBUS, and a file changed in place
                               changes what runs. For files replaced by rename only. */
    int hash_threads;       /* threads that check the blobs' hashes: 0, up to 4 of the
                               online CPUs; 1, the calling thread alone; N, at most N */
} artifact_expect;

/* Reads (or maps) path and checks it (x may be NULL: all checks, no model
 * hash). Every refusal names the file and what does not match. */
ait_status artifact_open(const char *path, const artifact_expect *x, artifact **out,
                         ait_error *e);
/* Frees the copy (or unmaps); accepts NULL. */
void artifact_close(artifact *a);

const uint8_t *artifact_manifest(const artifact *a, size_t *len);
size_t artifact_blob_count(const artifact *a);
const artifact_blob *artifact_blob_at(const artifact *a, size_t i);
/* The blob named name, or NULL. */
const artifact_blob *artifact_blob_find(const artifact *a, const char *name);
/* Gives up the whole pages inside p[0..n) (bytes of a's blobs), for bytes
 * nothing reads again, like the embedded model's once parsed, but for the
 * weights its graph keeps in place. While blobs remain to read (an open
 * with defer_blob_read, before artifact_blob_read_rest), the pages of a copy
 * are kept for them: each blob read next goes into the first such range it
 * fits, its own pages never touched, and what is left over is dropped by
 * artifact_blob_read_rest. So a load that reads the prepared blobs after
 * dropping the weights they replace reuses those pages, instead of handing
 * them back to the kernel and faulting in as many new ones (under a
 * hypervisor, memory handed back is reported to the host, whose reclaim
 * then slowed this guest's next touch of every page: bench/RESULTS.md).
 * Otherwise the pages are dropped now (the mapping stays valid: a page
 * touched again reads as zeros in the copy, again from the file when
 * mapped). */
void artifact_release(artifact *a, const uint8_t *p, size_t n);
/* For an open with defer_blob_read: copies blob b from the file into
 * memory and checks its padding and sha256 (nothing if it is read already),
 * so a blob can be used and released before the next takes memory; b->data
 * is set only once checked. artifact_blob_read_rest reads every blob still
 * unread and closes the file: after it nothing depends on the file. */
ait_status artifact_blob_read(artifact *a, const artifact_blob *b, ait_error *e);
ait_status artifact_blob_read_rest(artifact *a, ait_error *e);
/* Checks blob i's sha256 (for opens with defer_blob_hash). */
ait_status artifact_blob_verify(const artifact *a, size_t i, ait_error *e);
/* The header's ARTIFACT_HEADER_SIZE bytes as checked (what a signature covers). */
const uint8_t *artifact_header(const artifact *a);
const char *artifact_model_hash(const artifact *a);
const char *artifact_cpu_needed(const artifact *a);
const char *artifact_ait_version(const artifact *a);

/* Whether the file at path starts with the artifact magic (false when it
 * cannot be read: the caller's own open then says why). */
bool artifact_file_is(const char *path);

/* The sums file's path for an artifact path, into out[n]. */
ait_status artifact_sums_path(const char *path, char *out, size_t n, ait_error *e);

#endif

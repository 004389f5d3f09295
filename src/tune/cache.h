/* The tuner's results cache: what each candidate's trial measured, kept in
 * one small file per trial under a folder (the caller's: tune_opts.cache_dir;
 * ait_options_from_env gives $AIT_CACHE_DIR, else ~/.cache/ait) as a JSON
 * object with its format version, so that re-running the same tune reuses the results
 * without building, validating or timing anything (design.md, Tuning).
 *
 * An entry is named by the SHA-256 of everything its result depends on
 * (the tuner builds the key, see tuner.c): the module's graph and weights,
 * the shapes and bytes of the inputs it is validated and timed on, the
 * candidate's configuration, the profiling options, the ait version and the
 * CPU signature. Entries are written atomically (temp file, rename), and a
 * corrupt or unreadable entry is ignored with a warning and recomputed.
 *
 * What is cached: a result the trial sent back, pass or fail (a validation
 * failure is a property of the candidate on these inputs). What is not: a
 * crash, a timeout or an error in the child, which may be transient (memory,
 * load, a killed process) and is tried again next time.
 *
 * The cache never fails a tune: a folder that cannot be created, read or
 * written is a warning (to the tuner's logger), and tuning goes on without
 * it. */
#ifndef AIT_TUNE_CACHE_H
#define AIT_TUNE_CACHE_H
#include <stdbool.h>
#include <stdint.h>

#include "graph/graph.h"
#include "io/sha256.h"
#include "tune/tuner.h"

/* The entry format; bumped when the file's fields or the key change. */
#define CACHE_FORMAT 1
/* The entry files' names: CACHE_PREFIX, 64 hex digits, CACHE_SUFFIX. */
#define CACHE_PREFIX "tune-"
#define CACHE_SUFFIX ".json"

typedef struct tune_cache {
    char dir[4096];
    bool on;           /* reads (and writes) are tried */
    bool read_only;    /* a write failed: no more writes (warned once) */
    const logger *log; /* where warnings go (AIT_LOG_WARN) */
    int hits, stores, ignored; /* ignored: corrupt or unreadable entries */
    int warnings;
} tune_cache;

/* Opens the cache at dir, creating the folder and its parents (mode 0755)
 * when missing. NULL dir: off, silently. A folder that cannot be created or
 * is not a folder: off, with a warning. Never fails. */
void cache_open(tune_cache *c, const char *dir, const logger *log);

/* Removes ait's entries from dir: only regular files named like an entry
 * (CACHE_PREFIX + 64 hex digits + CACHE_SUFFIX, or such a name followed by
 * a temp file's ".tmp.PID"); nothing else in the folder is touched. A
 * missing folder has nothing to clear (AIT_OK, 0). *removed (may be NULL)
 * counts the files removed. Fails (AIT_E_IO, naming the folder or file)
 * when the folder cannot be read or an entry cannot be removed. */
ait_status cache_clear(const char *dir, int *removed, ait_error *e);

/* Key building: SHA-256 over length-prefixed fields, so that no two field
 * sequences hash alike. */
void cache_hash_str(sha256_ctx *h, const char *s);   /* NULL hashes unlike "" */
void cache_hash_i64(sha256_ctx *h, int64_t v);
void cache_hash_f64(sha256_ctx *h, double v);        /* its bits */
/* dtype, kind, shape and bytes of t (NULL hashes as "absent"). */
void cache_hash_tensor(sha256_ctx *h, const tensor *t);
/* The module's structure: its inputs' and outputs' dtypes and declared
 * shapes, every node's op type, domain, attributes and wiring (value ids of
 * the extracted view, not names: renaming changes nothing), and which values
 * are constants with their shapes; subgraphs (If, Loop, Scan bodies) the same
 * way, with the parent values they read. */
void cache_hash_graph(sha256_ctx *h, const graph *sub);
/* The bytes of every constant the module reads (its weights), its
 * subgraphs' included. */
void cache_hash_weights(sha256_ctx *h, const graph *sub);

/* Looks the entry for key (hex) up; on a hit fills *out's results (valid,
 * reason, max_rel, sqnr_db, prof; not its name or configuration) and
 * returns true. A missing entry is a quiet miss; one that is unreadable,
 * corrupt, of another format, or for another key or candidate (`name`) is a
 * warning and a miss. */
bool cache_get(tune_cache *c, const char key[SHA256_HEX], const char *name, tune_cand *out);

/* Stores r's results under key, atomically. A failure is a warning (once;
 * later writes are skipped), never an error. */
void cache_put(tune_cache *c, const char key[SHA256_HEX], const tune_cand *r);

#endif

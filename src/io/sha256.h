/* SHA-256 (FIPS 180-4), streaming, with no outside dependency: artifacts
 * and their sums file are hashed with it, and `sha256sum -c` must agree. */
#ifndef AIT_IO_SHA256_H
#define AIT_IO_SHA256_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define SHA256_BYTES 32
#define SHA256_HEX 65 /* 64 hex digits and the NUL */

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t bits; /* message length so far, in bits */
    uint8_t buf[64];
    size_t nbuf;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
/* Writes the digest; c must be re-initialised before reuse. */
void sha256_final(sha256_ctx *c, uint8_t out[SHA256_BYTES]);

/* One-shot digest of data[len]. */
void sha256(const void *data, size_t len, uint8_t out[SHA256_BYTES]);
/* Lower-case hex of a digest into hex[SHA256_HEX]. */
void sha256_hex(const uint8_t d[SHA256_BYTES], char hex[SHA256_HEX]);

/* Makes every later digest use the portable code even where the CPU has
 * SHA extensions (the unit test compares the two; it calls this when it sees
 * SHA256_PORTABLE=1, which the library itself does not read). Not for use
 * while other threads hash. */
void sha256_force_portable(bool on);

/* Hex digest of the file at path (read in chunks, any size). */
ait_status sha256_file(const char *path, char hex[SHA256_HEX], ait_error *e);

#endif
